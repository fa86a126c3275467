// SPDX-License-Identifier: Apache-2.0
// Row-major bytes laid out in another layout (relayout.hpp).
#include "hurray/core/relayout.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "core/strided_copy.hpp"
#include "hurray/core/checked_math.hpp"
#include "hurray/core/shape.hpp"

namespace hurray {

namespace {

/// Checks `row_major` against `type` and `shape`; its element count.
Result<uint64_t> check_row_major(const char* what, ElementType type, std::span<const uint64_t> shape,
                                 std::span<const uint8_t> row_major) {
    if (shape.size() > kMaxRank) {
        return Error(ErrorCode::kRankTooLarge, std::string(what) + ": rank " + std::to_string(shape.size()) +
                                                   " exceeds " + std::to_string(kMaxRank));
    }
    HURRAY_ASSIGN_OR_RETURN(const uint64_t count, element_count(shape));
    HURRAY_ASSIGN_OR_RETURN(const uint64_t bytes, storage_bytes(type, count));
    if (row_major.size() != bytes) {
        return Error(ErrorCode::kSizeMismatch, std::string(what) + ": " + std::to_string(row_major.size()) +
                                                   " bytes given, the shape needs " + std::to_string(bytes));
    }
    if (bit_width(type) == 0) {
        return Error(ErrorCode::kUnsupported, std::string(what) + ": element type of unknown width");
    }
    return count;
}

}  // namespace

Result<std::vector<uint8_t>> column_major_from_row_major(ElementType type, std::span<const uint64_t> shape,
                                                         std::span<const uint8_t> row_major) {
    HURRAY_ASSIGN_OR_RETURN(const uint64_t count, check_row_major("column_major_from_row_major", type, shape, row_major));
    const uint32_t bits = bit_width(type);
    if (shape.size() <= 1 || count == 0) {
        return std::vector<uint8_t>(row_major.begin(), row_major.end());
    }
    // Column-major order of the tensor is the row-major order of its
    // transpose (the axes reversed): output element (j[r-1], ..., j[0]) is
    // input element (j[0], ..., j[r-1]), at sum(j[k] * rm[k]) where rm are
    // the row-major strides.
    std::vector<uint64_t> reversed(shape.rbegin(), shape.rend());
    HURRAY_ASSIGN_OR_RETURN(std::vector<int64_t> strides, row_major_strides(shape));
    std::reverse(strides.begin(), strides.end());
    std::vector<uint8_t> out(row_major.size(), 0);
    if (bits % 8 == 0) {
        // SAFETY: the addressed input elements are the row-major tensor's own
        // (every index in bounds, strides its row-major ones), which
        // `row_major` holds exactly; `out` holds `count` elements.
        detail::strided_copy(out.data(), row_major.data(), bits / 8, reversed, strides);
    } else {
        detail::strided_copy_packed(out, row_major, 0, bits, reversed, strides);
    }
    return out;
}

Result<uint64_t> tiled_storage_bytes(ElementType type, std::span<const uint64_t> shape,
                                     std::span<const uint64_t> tile_shape) {
    if (shape.empty() || shape.size() != tile_shape.size()) {
        return Error(ErrorCode::kInvalidArgument, "tiled: a rank-" + std::to_string(shape.size()) + " shape with a rank-" +
                                                      std::to_string(tile_shape.size()) +
                                                      " tile shape (both must have the same rank, at least 1)");
    }
    if (has_dynamic_dim(shape)) {
        return Error(ErrorCode::kInvalidShape, "tiled: a dynamic dimension must be resolved first");
    }
    const uint32_t bits = bit_width(type);
    if (bits == 0 || bits % 8 != 0) {
        return Error(ErrorCode::kUnsupported, "tiled: element type of " + std::to_string(bits) +
                                                  " bits (whole-byte element types only)");
    }
    uint64_t tiles = 1;
    uint64_t tile_elements = 1;
    for (size_t k = 0; k < shape.size(); ++k) {
        if (tile_shape[k] == 0) {
            return Error(ErrorCode::kInvalidArgument, "tiled: tile_shape[" + std::to_string(k) + "] is 0");
        }
        const auto t = mul_u64(tiles, ceil_div(shape[k], tile_shape[k]));
        const auto e = mul_u64(tile_elements, tile_shape[k]);
        if (!t || !e) {
            return Error(ErrorCode::kSizeOverflow, "tiled: the tile or grid element count overflows 64 bits");
        }
        tiles = *t;
        tile_elements = *e;
    }
    const auto elements = mul_u64(tiles, tile_elements);
    const auto bytes = elements ? mul_u64(*elements, bits / 8) : std::nullopt;
    if (!bytes) {
        return Error(ErrorCode::kSizeOverflow, "tiled: the storage size overflows 64 bits");
    }
    return *bytes;
}

Result<std::vector<uint8_t>> tiled_from_row_major(ElementType type, std::span<const uint64_t> shape,
                                                  std::span<const uint64_t> tile_shape,
                                                  std::span<const uint8_t> row_major) {
    HURRAY_ASSIGN_OR_RETURN(const uint64_t count, check_row_major("tiled_from_row_major", type, shape, row_major));
    HURRAY_ASSIGN_OR_RETURN(const uint64_t bytes, tiled_storage_bytes(type, shape, tile_shape));
    if (bytes > SIZE_MAX) {
        return Error(ErrorCode::kSizeOverflow, "tiled_from_row_major: " + std::to_string(bytes) + " bytes do not fit in memory");
    }
    std::vector<uint8_t> out(static_cast<size_t>(bytes), 0);
    if (count == 0) {
        return out;
    }
    const size_t rank = shape.size();
    const size_t elem = bit_width(type) / 8;
    HURRAY_ASSIGN_OR_RETURN(const std::vector<int64_t> src_strides, row_major_strides(shape));
    HURRAY_ASSIGN_OR_RETURN(const std::vector<int64_t> tile_strides, row_major_strides(tile_shape));
    const uint64_t tile_elements = static_cast<uint64_t>(tile_strides[0]) * tile_shape[0];
    std::vector<uint64_t> grid(rank);
    for (size_t k = 0; k < rank; ++k) {
        grid[k] = ceil_div(shape[k], tile_shape[k]);
    }
    // Tiles in row-major grid order; in each, the rows of its in-bounds part
    // (the last dimension is contiguous both in the source and in the tile).
    std::vector<uint64_t> t(rank, 0);      // tile coordinates
    std::vector<uint64_t> extent(rank);    // in-bounds part of the tile
    std::vector<uint64_t> e(rank, 0);      // element coordinates in the tile
    uint64_t tile_number = 0;
    for (;;) {
        for (size_t k = 0; k < rank; ++k) {
            extent[k] = std::min(tile_shape[k], shape[k] - t[k] * tile_shape[k]);
        }
        const uint64_t run = extent[rank - 1] * elem;
        std::fill(e.begin(), e.end(), 0);
        for (;;) {
            uint64_t src = 0;
            uint64_t dst = tile_number * tile_elements;
            for (size_t k = 0; k < rank; ++k) {
                src += (t[k] * tile_shape[k] + e[k]) * static_cast<uint64_t>(src_strides[k]);
                dst += e[k] * static_cast<uint64_t>(tile_strides[k]);
            }
            // SAFETY: every coordinate t*tile+e is inside `shape`, so `src`
            // addresses a whole row of `extent[rank-1]` elements in
            // `row_major`; `dst` is inside tile `tile_number`, whose
            // `tile_elements` elements `out` holds.
            std::memcpy(out.data() + dst * elem, row_major.data() + src * elem, static_cast<size_t>(run));
            size_t k = rank - 1;
            while (k-- > 0 && ++e[k] == extent[k]) {
                e[k] = 0;
            }
            if (k == SIZE_MAX) {
                break;
            }
        }
        ++tile_number;
        size_t k = rank;
        while (k-- > 0 && ++t[k] == grid[k]) {
            t[k] = 0;
        }
        if (k == SIZE_MAX) {
            break;
        }
    }
    return out;
}

}  // namespace hurray
