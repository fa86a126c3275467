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

/// The data bytes of a one-level tiled tensor of `type` and `shape` with
/// tiles of `tile_shape` (layouts/tiled.md § Boundary Padding): whole tiles,
/// `prod(ceil(shape[k] / tile_shape[k])) * prod(tile_shape)` elements; 0 when
/// a dimension is 0.
///
/// Fails with `kInvalidArgument` for a scalar (a tiled tensor has rank >= 1),
/// ranks that differ or a tile dimension of 0, `kInvalidShape` for a dynamic
/// dimension, `kUnsupported` for packed element types (1, 2, 4 or 6 bits:
/// tiles of them need not start on a byte) and `kSizeOverflow` when the count
/// exceeds 64 bits.
[[nodiscard]] HURRAY_CORE_EXPORT Result<uint64_t> tiled_storage_bytes(ElementType type, std::span<const uint64_t> shape,
                                                                      std::span<const uint64_t> tile_shape);

/// The elements of a dense tensor of `type` and `shape`, given in row-major
/// order (`row_major`: exactly `storage_bytes(type, element_count(shape))`
/// bytes, `kSizeMismatch` otherwise), laid out in tiles of `tile_shape`, the
/// tile grid and each tile's elements row-major: the bytes of
/// `TiledLayout{{{.tile_shape = tile_shape}}}` for the same shape
/// (`tiled_storage_bytes` of them). Boundary tiles are padded with zero bytes.
/// Whole-byte element types only; fails as `tiled_storage_bytes` does.
///
/// @code
/// auto tiled = hurray::tiled_from_row_major(hurray::ElementType::kFloat32, shape, tile, row_major_bytes);
/// auto d = hurray::make_dense(hurray::ElementType::kFloat32, shape);
/// d->layout = hurray::TiledLayout{{{.tile_shape = {tile.begin(), tile.end()}}}};
/// d = hurray::size_buffers(std::move(*d));  // one buffer of tiled->size() bytes: d describes *tiled
/// @endcode
[[nodiscard]] HURRAY_CORE_EXPORT Result<std::vector<uint8_t>> tiled_from_row_major(
    ElementType type, std::span<const uint64_t> shape, std::span<const uint64_t> tile_shape,
    std::span<const uint8_t> row_major);

}  // namespace hurray
