// SPDX-License-Identifier: Apache-2.0
// Internal: copying one stored element between buffers, and adding one
// element into another in the element's own type (the overlay combine of
// layouts/composite.md).
#pragma once

#include <cstdint>
#include <span>

#include "hurray/core/element_type.hpp"
#include "hurray/core/result.hpp"

namespace hurray::detail {

/// Copies element `si` of `src` to element `di` of `dst`, both arrays of
/// `bits`-bit elements (whole bytes, or packed 1, 2, 4 or 6 bits LSB first).
/// Fails with `kInvalidArgument` when either element lies outside its span.
Status copy_element(uint32_t bits, std::span<const uint8_t> src, uint64_t si, std::span<uint8_t> dst,
                    uint64_t di);

/// Whether `add_element` can add elements of the built-in type `t`.
bool can_add(ElementType t) noexcept;

/// `dst[di] = dst[di] + src[si]`, evaluated in type `t`: integers exactly,
/// saturating to the type's range; bool as "or"; complex part by part;
/// other floating-point types in double, rounded once to `t` (see
/// composite_materialize.hpp for why that is the correctly rounded sum).
/// Fails with `kInvalidArgument` when an element lies outside its span and
/// with `kUnsupported` for a type `can_add` refuses.
Status add_element(ElementType t, std::span<const uint8_t> src, uint64_t si, std::span<uint8_t> dst, uint64_t di);

}  // namespace hurray::detail
