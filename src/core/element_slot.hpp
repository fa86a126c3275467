// SPDX-License-Identifier: Apache-2.0
// Internal: how one element of a tensor's type occupies storage — whole bytes
// or packed bits — and the copies and reads of single elements that the view
// performs once a location has been bounds-checked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "hurray/core/element_convert.hpp"
#include "hurray/core/tensor_descriptor.hpp"
#include "hurray/core/tensor_view.hpp"

namespace hurray::detail {

/// Storage geometry of an element type.
struct ElementGeometry {
    uint32_t bits = 0;   ///< Bits per element (1, 2, 4, 6 or a multiple of 8).
    uint32_t bytes = 0;  ///< Bytes per element for whole-byte types, 0 for packed ones.

    [[nodiscard]] bool packed() const noexcept { return bytes == 0; }

    /// The geometry of `d`'s element type (`d.element_bits()` must be non-zero).
    static ElementGeometry of(const TensorDescriptor& d) noexcept {
        const uint32_t bits = d.element_bits();
        return {bits, bits % 8 == 0 ? bits / 8 : 0};
    }
};

/// Location of element `k` of a run that starts at byte 0 of `buffer` (the
/// values of a sparse layout, the page pool of a block-paged one).
inline ElementLocation run_location(ElementGeometry g, uint32_t buffer, uint64_t k) noexcept {
    if (g.packed()) {
        return {true, buffer, 0, k};
    }
    return {true, buffer, k * g.bytes, 0};
}

/// Whether the element at `loc` lies inside `bytes`.
inline bool location_fits(ElementGeometry g, std::span<const uint8_t> bytes, const ElementLocation& loc) noexcept {
    if (g.packed()) {
        // element < 2^58 keeps (element + 1) * bits below 2^64.
        return loc.byte_base == 0 && loc.element < (uint64_t{1} << 58) &&
               (loc.element + 1) * g.bits <= uint64_t{bytes.size()} * 8;
    }
    return loc.element == 0 && loc.byte_base <= bytes.size() && g.bytes <= bytes.size() - loc.byte_base;
}

/// The raw bits of the element at `loc` (the low 64 for wider types).
/// Precondition: `location_fits(g, bytes, loc)`.
inline uint64_t load_element_bits(ElementGeometry g, std::span<const uint8_t> bytes,
                                  const ElementLocation& loc) noexcept {
    if (g.packed()) {
        return load_packed(bytes, loc.element, g.bits);
    }
    // SAFETY: the precondition puts bytes [byte_base, byte_base + g.bytes)
    // inside `bytes`; at most 8 of them are read, assembled little-endian.
    const uint8_t* p = bytes.data() + loc.byte_base;
    const uint32_t n = g.bytes < 8 ? g.bytes : 8;
    uint64_t v = 0;
    for (uint32_t i = 0; i < n; ++i) {
        v |= static_cast<uint64_t>(p[i]) << (8 * i);
    }
    return v;
}

/// Copies the element at `loc` in `src` to element `n` of `out`, a dense run
/// of the same type. Preconditions: `location_fits(g, src, loc)` and element
/// `n` lies inside `out`.
inline void copy_element(ElementGeometry g, std::span<const uint8_t> src, const ElementLocation& loc,
                         std::span<uint8_t> out, uint64_t n) noexcept {
    if (g.packed()) {
        store_packed(out, n, g.bits, load_packed(src, loc.element, g.bits));
        return;
    }
    // SAFETY: both preconditions bound the g.bytes bytes read and written;
    // `out` is the caller's output, distinct from the source buffers.
    std::memcpy(out.data() + static_cast<size_t>(n) * g.bytes, src.data() + loc.byte_base, g.bytes);
}

}  // namespace hurray::detail
