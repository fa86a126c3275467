// SPDX-License-Identifier: Apache-2.0
// Internal: copying an affinely addressed (strided) array into a dense
// row-major one — the materialize path of the row-major, column-major and
// strided layouts. Dimensions are merged where memory allows; a contiguous
// innermost dimension is copied row by row (one memcpy when everything is
// contiguous), and an innermost dimension that is not the innermost in memory
// is copied by blocked transposition against the dimension that is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace hurray::detail {

/// Copies the `product(shape)` elements of `width` bytes addressed by
/// `src + width * sum(i[k] * strides[k])` into `dst`, in row-major order of
/// the index `i`.
///
/// Preconditions: `shape.size() == strides.size() <= 64`; every addressed
/// source element lies inside the allocation `src` points into (for a view,
/// the descriptor check and `TensorView::make` prove it, and the caller
/// re-checks the extreme offsets); `dst` holds `product(shape) * width` bytes
/// and does not overlap the source.
void strided_copy(uint8_t* dst, const uint8_t* src, size_t width, std::span<const uint64_t> shape,
                  std::span<const int64_t> strides) noexcept;

/// The same for packed elements of `bits` bits (1, 2, 4 or 6): source element
/// `i` is packed element `origin + sum(i[k] * strides[k])` of `src`,
/// destination element `n` is packed element `n` of `dst`. `dst` must be
/// zero-filled beforehand (only element bits are written, so padding stays
/// zero). Preconditions as for `strided_copy`, in packed elements.
void strided_copy_packed(std::span<uint8_t> dst, std::span<const uint8_t> src, uint64_t origin, uint32_t bits,
                         std::span<const uint64_t> shape, std::span<const int64_t> strides) noexcept;

}  // namespace hurray::detail
