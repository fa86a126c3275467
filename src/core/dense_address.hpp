// SPDX-License-Identifier: Apache-2.0
// Internal: element addressing of the dense layouts (row-major, column-major,
// strided, tiled, Morton, Hilbert): logical index -> element offset relative
// to the element at byte_offset -> location in buffer 0.
#pragma once

#include <cstdint>
#include <span>

#include "core/element_slot.hpp"
#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"
#include "hurray/core/tensor_view.hpp"

namespace hurray::detail {

__extension__ typedef __int128 i128;  // NOLINT(modernize-use-using): __extension__ needs typedef

/// Size of dimension `k` in storage: `shape[k]`, except that a row- or
/// column-major tensor quantized per block (per-block affine, NF4) stores its
/// blocked axis padded to whole blocks (per-block-affine.md § Padding).
uint64_t storage_dim(const TensorDescriptor& d, size_t k) noexcept;

/// Offset in elements, relative to the element at `byte_offset`, of the
/// element at `index` of a dense layout (memory-layout.md § Element Address
/// Computation and the per-layout formulas).
///
/// Preconditions: `d` passed `check_descriptor` (vector lengths, tile sizes,
/// Morton and Hilbert rules, addressed span below 2^100 elements), its layout
/// is dense, and every `index[k] < shape[k]`. The result then lies in the span
/// that the descriptor check bounded; callers still bounds-check the location.
i128 dense_offset(const TensorDescriptor& d, std::span<const uint64_t> index) noexcept;

/// The per-dimension strides, in elements, of an affine layout: row-major and
/// column-major (over `storage_dim`) and strided. Returns false for the other
/// layouts and when a stride does not fit in int64 (possible only for empty
/// tensors). `strides` has one entry per dimension.
bool affine_strides(const TensorDescriptor& d, std::span<int64_t> strides) noexcept;

/// Position of element [0, ..., 0] in buffer 0 in packed elements (packed
/// types: `byte_offset * 8 / bits`; 6-bit types need `byte_offset % 3 == 0`,
/// checked by `TensorView::make`).
uint64_t packed_origin(const TensorDescriptor& d, ElementGeometry g) noexcept;

/// The location in buffer 0 (`bytes`) of the element at `offset` (from
/// `dense_offset`); `kInvalidData` when it lies outside the buffer.
Result<ElementLocation> dense_location(const TensorDescriptor& d, ElementGeometry g,
                                       std::span<const uint8_t> bytes, i128 offset);

}  // namespace hurray::detail
