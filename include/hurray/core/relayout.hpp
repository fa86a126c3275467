// SPDX-License-Identifier: Apache-2.0
/// @file
/// Laying out a dense tensor's elements in another layout, from its row-major
/// bytes (the inverse direction of `TensorView::materialize`): what a server
/// that transcodes on the fly (interchange.md § On-the-Fly Transcoding) or a
/// writer that stores Fortran-order data needs.
#pragma once

#include "hurray/core/export.hpp"

#include <cstdint>
#include <span>
#include <vector>

#include "hurray/core/element_type.hpp"
#include "hurray/core/result.hpp"

namespace hurray {

/// The elements of a dense tensor of `type` and `shape`, given in row-major
/// order (`row_major`: exactly `storage_bytes(type, element_count(shape))`
/// bytes, `kSizeMismatch` otherwise), laid out column-major (Fortran order,
/// the first index fastest: the bytes of `ColumnMajorLayout` for the same
/// shape). Every element type: whole-byte elements are moved by blocked
/// transposition, packed ones (1, 2, 4 or 6 bits) bit by bit with zero
/// padding. A rank of 0 or 1 gives the same bytes.
///
/// @code
/// auto cm = hurray::column_major_from_row_major(hurray::ElementType::kFloat32, shape, row_major_bytes);
/// auto d = hurray::make_dense(hurray::ElementType::kFloat32, shape);
/// d->layout = hurray::ColumnMajorLayout{};  // d describes *cm
/// @endcode
[[nodiscard]] HURRAY_CORE_EXPORT Result<std::vector<uint8_t>> column_major_from_row_major(
    ElementType type, std::span<const uint64_t> shape, std::span<const uint8_t> row_major);

}  // namespace hurray
