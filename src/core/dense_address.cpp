// SPDX-License-Identifier: Apache-2.0
// Element addressing of the dense layouts: row-major, column-major, strided,
// tiled (any outer/inner combination, recursively), Morton and Hilbert.
#include "core/dense_address.hpp"

#include <array>
#include <string>
#include <variant>

#include "core/block_padding.hpp"
#include "hurray/core/checked_math.hpp"
#include "hurray/core/text.hpp"
#include "hurray/core/space_filling_curve.hpp"

namespace hurray::detail {
namespace {

// Linear offset of `idx` in a row-major box of size `dims` (Horner form, so
// that no stride is ever formed; every partial value is below the final one).
i128 row_major_linear(std::span<const uint64_t> idx, std::span<const uint64_t> dims) noexcept {
    i128 off = 0;
    for (size_t k = 0; k < idx.size(); ++k) {
        off = off * static_cast<i128>(dims[k]) + static_cast<i128>(idx[k]);
    }
    return off;
}

// Same, column-major (dimension 0 fastest).
i128 column_major_linear(std::span<const uint64_t> idx, std::span<const uint64_t> dims) noexcept {
    i128 off = 0;
    for (size_t k = idx.size(); k-- > 0;) {
        off = off * static_cast<i128>(dims[k]) + static_cast<i128>(idx[k]);
    }
    return off;
}

i128 strided_linear(std::span<const uint64_t> idx, std::span<const int64_t> strides) noexcept {
    i128 off = 0;
    for (size_t k = 0; k < idx.size(); ++k) {
        off += static_cast<i128>(idx[k]) * static_cast<i128>(strides[k]);
    }
    return off;
}

// layouts/tiled.md § Element Address, level after level: the tile number
// under the outer layout times the tile's element count, plus the offset in
// the tile under the inner layout — which, for a recursively tiled inner
// layout, is the next level applied to the tile's own index space.
i128 tiled_offset(const TiledLayout& t, std::span<const uint64_t> shape, std::span<const uint64_t> index) noexcept {
    const size_t rank = shape.size();
    std::array<uint64_t, kMaxRank> region{};
    std::array<uint64_t, kMaxRank> pos{};
    std::array<uint64_t, kMaxRank> tile{};
    std::array<uint64_t, kMaxRank> grid{};
    for (size_t k = 0; k < rank; ++k) {
        region[k] = shape[k];
        pos[k] = index[k];
    }
    const std::span<uint64_t> r(region.data(), rank);
    const std::span<uint64_t> p(pos.data(), rank);
    const std::span<uint64_t> ti(tile.data(), rank);
    const std::span<uint64_t> g(grid.data(), rank);
    i128 total = 0;
    for (const TiledLevel& lv : t.levels) {
        i128 tile_elems = 1;
        for (size_t k = 0; k < rank; ++k) {
            const uint64_t ts = lv.tile_shape[k];
            ti[k] = p[k] / ts;
            p[k] %= ts;  // the intra-tile index
            g[k] = ceil_div(r[k], ts);
            tile_elems *= static_cast<i128>(ts);
        }
        i128 number = 0;
        switch (lv.outer_layout) {
            case LayoutTag::kColumnMajor: number = column_major_linear(ti, g); break;
            case LayoutTag::kStrided: number = strided_linear(ti, lv.outer_strides); break;
            default: number = row_major_linear(ti, g); break;
        }
        total += number * tile_elems;
        const std::span<const uint64_t> ts(lv.tile_shape);
        switch (lv.inner_layout) {
            case LayoutTag::kTiled:
                for (size_t k = 0; k < rank; ++k) {
                    r[k] = ts[k];
                }
                continue;  // the next level addresses the tile
            case LayoutTag::kColumnMajor: return total + column_major_linear(p, ts);
            case LayoutTag::kStrided: return total + strided_linear(p, lv.inner_strides);
            default: return total + row_major_linear(p, ts);
        }
    }
    return total;  // not reached: check_descriptor ends every level chain with a non-tiled inner layout
}

}  // namespace

uint64_t storage_dim(const TensorDescriptor& d, size_t k) noexcept {
    const uint64_t n = d.shape[k];
    if (!std::holds_alternative<RowMajorLayout>(d.layout) && !std::holds_alternative<ColumnMajorLayout>(d.layout)) {
        return n;
    }
    const BlockPadding pad = block_padding(d);
    if (k != pad.axis) {
        return n;
    }
    // ceil(n / block) * block fits: check_descriptor sized the buffer with it.
    return ceil_div(n, pad.block) * pad.block;
}

i128 dense_offset(const TensorDescriptor& d, std::span<const uint64_t> index) noexcept {
    const size_t rank = index.size();
    if (std::holds_alternative<RowMajorLayout>(d.layout) || std::holds_alternative<ColumnMajorLayout>(d.layout)) {
        std::array<uint64_t, kMaxRank> dims{};
        for (size_t k = 0; k < rank; ++k) {
            dims[k] = storage_dim(d, k);
        }
        const std::span<const uint64_t> s(dims.data(), rank);
        return std::holds_alternative<RowMajorLayout>(d.layout) ? row_major_linear(index, s)
                                                                : column_major_linear(index, s);
    }
    if (const auto* s = std::get_if<StridedLayout>(&d.layout)) {
        return strided_linear(index, s->strides);
    }
    if (const auto* t = std::get_if<TiledLayout>(&d.layout)) {
        return tiled_offset(*t, d.shape, index);
    }
    if (const auto* m = std::get_if<MortonLayout>(&d.layout)) {
        return static_cast<i128>(morton_encode(index, m->morton_bits));
    }
    if (const auto* h = std::get_if<HilbertLayout>(&d.layout)) {
        return static_cast<i128>(hilbert_encode(index, h->hilbert_order));
    }
    return 0;
}

bool affine_strides(const TensorDescriptor& d, std::span<int64_t> strides) noexcept {
    const size_t rank = d.shape.size();
    if (const auto* s = std::get_if<StridedLayout>(&d.layout)) {
        for (size_t k = 0; k < rank; ++k) {
            strides[k] = s->strides[k];
        }
        return true;
    }
    const bool row = std::holds_alternative<RowMajorLayout>(d.layout);
    if (!row && !std::holds_alternative<ColumnMajorLayout>(d.layout)) {
        return false;
    }
    int64_t step = 1;
    for (size_t i = 0; i < rank; ++i) {
        const size_t k = row ? rank - 1 - i : i;
        strides[k] = step;
        const uint64_t n = storage_dim(d, k);
        if (n > static_cast<uint64_t>(INT64_MAX) || __builtin_mul_overflow(step, static_cast<int64_t>(n), &step)) {
            return false;
        }
    }
    return true;
}

uint64_t packed_origin(const TensorDescriptor& d, ElementGeometry g) noexcept {
    if (g.bits == 6) {
        return d.byte_offset / 3 * 4;
    }
    return d.byte_offset * (8 / g.bits);
}

Result<ElementLocation> dense_location(const TensorDescriptor& d, ElementGeometry g, std::span<const uint8_t> bytes,
                                       i128 offset) {
    const auto size = static_cast<i128>(bytes.size());
    if (g.packed()) {
        const i128 pos = static_cast<i128>(packed_origin(d, g)) + offset;
        if (pos >= 0 && (pos + 1) * g.bits <= size * 8) [[likely]] {
            return ElementLocation{true, 0, 0, static_cast<uint64_t>(pos)};
        }
    } else {
        const i128 addr = static_cast<i128>(d.byte_offset) + offset * g.bytes;
        if (addr >= 0 && addr + g.bytes <= size) [[likely]] {
            return ElementLocation{true, 0, static_cast<uint64_t>(addr), 0};
        }
    }
    const bool neg = offset < 0;
    const i128 mag = neg ? -offset : offset;
    const std::string text = mag > static_cast<i128>(INT64_MAX) ? std::string("2^63 or more")
                                                                 : dec(static_cast<uint64_t>(mag));
    return Error(ErrorCode::kInvalidData, std::string(layout_name(d.layout_tag())) + ": the element at offset " +
                                              (neg ? "-" : "") + text + " from byte_offset " + dec(d.byte_offset) +
                                              " lies outside buffer 0 (" + dec(bytes.size()) + " bytes)");
}

}  // namespace hurray::detail
