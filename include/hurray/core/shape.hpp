// SPDX-License-Identifier: Apache-2.0
/// @file
/// Shapes (docs/spec/data-model.md): rank cap, dynamic dimensions, element counts.
#pragma once

#include "hurray/core/export.hpp"
#include <cstdint>
#include <span>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/core/small_vector.hpp"

namespace hurray {

/// The largest rank a descriptor may carry (ADR-008).
inline constexpr uint32_t kMaxRank = 64;

/// The dynamic dimension sentinel: the size is not statically known.
inline constexpr uint64_t kDynamicDim = UINT64_MAX;

/// Ranks up to this one are stored inside a `Shape` (no heap allocation).
inline constexpr size_t kShapeInlineRank = 8;

/// A tensor shape: one size per dimension, dimension 0 first. A
/// `SmallVector` with the `std::vector` API: up to `kShapeInlineRank`
/// dimensions allocate nothing; it converts to `std::span<const uint64_t>`
/// and, with `to_vector()`, to `std::vector<uint64_t>`.
///
/// @code
/// hurray::Shape s = {8, 32, 128, 128};
/// std::span<const uint64_t> dims = s;
/// @endcode
using Shape = SmallVector<uint64_t, kShapeInlineRank>;

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

/// The row-major (C order) strides of `shape`, in elements: 1 for the last
/// dimension, and for each other one the product of the dimensions after it,
/// a zero dimension counting as 1 (so no stride is 0). The strides of
/// `StridedLayout` for a dense row-major tensor, and the steps of a row-major
/// walk. A scalar has none.
///
/// Fails with `kInvalidShape` if a dimension is dynamic and with
/// `kSizeOverflow` if a stride exceeds `INT64_MAX`.
///
/// @code
/// auto s = hurray::row_major_strides(hurray::Shape{2, 3, 4});  // {12, 4, 1}
/// @endcode
[[nodiscard]] HURRAY_CORE_EXPORT Result<std::vector<int64_t>> row_major_strides(std::span<const uint64_t> shape);

}  // namespace hurray
