// SPDX-License-Identifier: Apache-2.0
/// @file
/// The index mappings of the two curve layouts: Morton / Z-order
/// (docs/spec/layouts/morton.md) and Hilbert (docs/spec/layouts/hilbert.md,
/// Skilling's algorithm, ADR-006).
#pragma once

#include "hurray/core/export.hpp"
#include <cstdint>
#include <span>

namespace hurray {

/// The Morton code of `index` under `morton_bits` (layouts/morton.md § Morton
/// Index Computation): bit `b` of `index[d]` goes to bit `b * rank + d` of the
/// code, for every `b < morton_bits[d]`; `rank` is `index.size()`. Index bits
/// at or above `morton_bits[d]` are ignored, and so are code bits that would
/// land at position 64 or higher (a Morton layout whose codes need them cannot
/// be addressed; `TensorView::make` rejects it). When the two spans differ in
/// length, only their common prefix is encoded.
///
/// When the bit counts differ, codes are not dense: `morton_bits = {1, 2}`
/// places bit 1 of dimension 1 at code bit 3, so `[1, 3]` has code 11 although
/// the 2x4 grid has only 8 cells.
///
/// @code
/// std::vector<uint64_t> idx = {2, 3};
/// std::vector<uint32_t> bits = {2, 2};
/// uint64_t code = hurray::morton_encode(idx, bits);  // 14 (morton.md § Example)
/// @endcode
HURRAY_CORE_EXPORT uint64_t morton_encode(std::span<const uint64_t> index, std::span<const uint32_t> morton_bits) noexcept;

/// The Hilbert index of `coords` on the curve of rank `coords.size()` and
/// `order` bits per coordinate: `CoordsToHilbert` of layouts/hilbert.md
/// § Normative Index Mapping. Coordinate bits at or above `order` are ignored.
/// Returns 0 when `order` is 0, when `coords` is empty, or when it has more
/// than `kMaxRank` (64) coordinates. Index bits at position 64 or higher
/// (rank x order > 64) are dropped; the layout itself allows at most 63.
///
/// @code
/// std::vector<uint64_t> x = {1, 3};
/// uint64_t h = hurray::hilbert_encode(x, 2);  // 6 (hilbert.md § Conformance Check)
/// @endcode
HURRAY_CORE_EXPORT uint64_t hilbert_encode(std::span<const uint64_t> coords, uint32_t order) noexcept;

/// Inverse of `hilbert_encode`: writes the `coords.size()` coordinates of
/// Hilbert index `h` (`HilbertToCoords` of layouts/hilbert.md). Writes zeros
/// in the cases where `hilbert_encode` returns 0 without computing.
///
/// @code
/// std::vector<uint64_t> x(2);
/// hurray::hilbert_decode(6, 2, x);  // x == {1, 3}
/// @endcode
HURRAY_CORE_EXPORT void hilbert_decode(uint64_t h, uint32_t order, std::span<uint64_t> coords) noexcept;

}  // namespace hurray
