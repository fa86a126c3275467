// SPDX-License-Identifier: Apache-2.0
/// @file
/// Shapes (docs/spec/data-model.md): rank cap, dynamic dimensions, element counts.
#pragma once

#include "hurray/core/export.hpp"
#include <cstdint>
#include <span>
#include <vector>

#include "hurray/core/result.hpp"

namespace hurray {

/// The largest rank a descriptor may carry (ADR-008).
inline constexpr uint32_t kMaxRank = 64;

/// The dynamic dimension sentinel: the size is not statically known.
inline constexpr uint64_t kDynamicDim = UINT64_MAX;

/// A tensor shape: one size per dimension, dimension 0 first.
using Shape = std::vector<uint64_t>;

/// Whether any dimension is the dynamic sentinel.
HURRAY_CORE_EXPORT bool has_dynamic_dim(std::span<const uint64_t> shape) noexcept;

/// The number of elements: the product of the dimensions (1 for a scalar).
///
/// A shape with a zero dimension has 0 elements even if the other dimensions
/// would overflow. Fails with `kInvalidShape` if a dimension is dynamic and
/// with `kSizeOverflow` if the product exceeds 64 bits.
///
/// @code
/// auto n = hurray::element_count(hurray::Shape{3, 0, 5});  // 0
/// @endcode
HURRAY_CORE_EXPORT Result<uint64_t> element_count(std::span<const uint64_t> shape);

}  // namespace hurray
