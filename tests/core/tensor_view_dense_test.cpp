// SPDX-License-Identifier: Apache-2.0
// TensorView on the dense layouts, checked against brute force: for every
// element of small shapes (rank 1 to 4), the storage position is computed
// independently — by enumerating storage order with a counter (row-major,
// column-major, tile grids), by explicit sums (strided), by interleaving bits
// one code bit at a time (Morton), or by walking the curve (Hilbert). Each
// element's storage slot gets a code identifying it; locate, read_bits,
// read_double and materialize must give every code back in logical order.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hurray/core/builder.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/tensor_view.hpp"
#include "view_test_support.hpp"

namespace {

using namespace hurray;             // NOLINT(google-build-using-namespace): test brevity
using namespace hurray_view_test;   // NOLINT(google-build-using-namespace)
using ET = ElementType;

/// Storage position of each logical index, in elements relative to byte_offset.
using OffsetMap = std::map<Index, int64_t>;

// ---------------------------------------------------------------------------
// Brute-force storage orders

/// Storage order by enumeration: the n-th index visited is at offset n.
OffsetMap by_order(const std::vector<uint64_t>& shape, const std::vector<size_t>& fastest_first) {
    OffsetMap m;
    int64_t n = 0;
    for (const Index& idx : enumerate(shape, fastest_first)) {
        m[idx] = n++;
    }
    return m;
}

/// Strided: the definition, sum of index times stride.
OffsetMap strided_map(const std::vector<uint64_t>& shape, const std::vector<int64_t>& strides) {
    OffsetMap m;
    for (const Index& idx : row_major_indices(shape)) {
        int64_t off = 0;
        for (size_t k = 0; k < idx.size(); ++k) {
            off += static_cast<int64_t>(idx[k]) * strides[k];
        }
        m[idx] = off;
    }
    return m;
}

/// Tiled, level `level` over `region`: number the tiles of the grid in outer
/// order, the elements of a tile in inner order (recursively for a tiled
/// inner layout), and combine every tile with every intra-tile index.
OffsetMap tiled_map(const TiledLayout& t, size_t level, const std::vector<uint64_t>& region) {
    const TiledLevel& lv = t.levels[level];
    const size_t rank = region.size();
    std::vector<uint64_t> grid(rank);
    int64_t tile_elems = 1;
    for (size_t k = 0; k < rank; ++k) {
        grid[k] = (region[k] + lv.tile_shape[k] - 1) / lv.tile_shape[k];
        tile_elems *= static_cast<int64_t>(lv.tile_shape[k]);
    }
    OffsetMap tiles;
    switch (lv.outer_layout) {
        case LayoutTag::kRowMajor: tiles = by_order(grid, row_major_order(rank)); break;
        case LayoutTag::kColumnMajor: tiles = by_order(grid, column_major_order(rank)); break;
        default: tiles = strided_map(grid, lv.outer_strides); break;
    }
    OffsetMap inner;
    switch (lv.inner_layout) {
        case LayoutTag::kRowMajor: inner = by_order(lv.tile_shape, row_major_order(rank)); break;
        case LayoutTag::kColumnMajor: inner = by_order(lv.tile_shape, column_major_order(rank)); break;
        case LayoutTag::kStrided: inner = strided_map(lv.tile_shape, lv.inner_strides); break;
        default: inner = tiled_map(t, level + 1, lv.tile_shape); break;
    }
    OffsetMap m;
    for (const auto& [tile, number] : tiles) {
        for (const auto& [e, io] : inner) {
            Index idx(rank);
            bool inside = true;
            for (size_t k = 0; k < rank; ++k) {
                idx[k] = tile[k] * lv.tile_shape[k] + e[k];
                inside = inside && idx[k] < region[k];
            }
            if (inside) {
                m[idx] = number * tile_elems + io;
            }
        }
    }
    return m;
}

/// Morton, one code bit at a time: code bit p belongs to dimension p % rank,
/// bit p / rank, when that dimension has that many bits.
OffsetMap morton_map(const std::vector<uint64_t>& shape, const std::vector<uint32_t>& bits) {
    OffsetMap m;
    const size_t rank = shape.size();
    for (const Index& idx : row_major_indices(shape)) {
        uint64_t code = 0;
        for (uint64_t p = 0; p < 64; ++p) {
            const size_t dim = p % rank;
            const uint64_t b = p / rank;
            if (b < bits[dim] && ((idx[dim] >> b) & 1U) != 0) {
                code |= uint64_t{1} << p;
            }
        }
        m[idx] = static_cast<int64_t>(code);
    }
    return m;
}

/// Hilbert: walk the curve, h = 0, 1, ..., and record where each step lands.
OffsetMap hilbert_map(size_t rank, uint32_t order) {
    OffsetMap m;
    const uint64_t cells = uint64_t{1} << (rank * order);
    for (uint64_t h = 0; h < cells; ++h) {
        Index x(rank);
        hilbert_decode(h, order, x);
        m[x] = static_cast<int64_t>(h);
    }
    return m;
}

// ---------------------------------------------------------------------------
// The check

uint32_t bits_of(ET t) { return bit_width(t); }

/// Bytes below element [0, ..., 0] that the lowest offset needs.
uint64_t bytes_below(ET type, int64_t lowest) {
    if (lowest >= 0) {
        return 0;
    }
    const auto n = static_cast<uint64_t>(-lowest);
    const uint32_t bits = bits_of(type);
    if (bits == 6) {
        return (n + 3) / 4 * 3;
    }
    return (n * bits + 7) / 8;
}

uint64_t packed_origin(ET type, uint64_t byte_offset) {
    const uint32_t bits = bits_of(type);
    return bits == 6 ? byte_offset / 3 * 4 : byte_offset * 8 / bits;
}

struct DenseCase {
    ET type = ET::kInt16;
    std::vector<uint64_t> shape;
    LayoutDescriptor layout;
    OffsetMap expected;
    uint64_t extra_offset = 0;  // bytes of byte_offset beyond what negative offsets need
    std::optional<QuantizationDescriptor> quantization{};
    uint64_t extra_buffer = 0;  // bytes added to buffer 0
};

std::string describe(const DenseCase& c) {
    return std::string(type_name(c.type)) + " " + str(c.shape) + " " +
           std::string(layout_name(layout_tag(c.layout)));
}

void check_dense(const DenseCase& c) {
    SCOPED_TRACE(describe(c));
    const uint32_t bits = bits_of(c.type);
    int64_t lowest = 0;
    for (const auto& [idx, off] : c.expected) {
        lowest = std::min(lowest, off);
    }
    TensorDescriptor d;
    d.element_type = c.type;
    d.shape = c.shape;
    d.layout = c.layout;
    d.byte_offset = bytes_below(c.type, lowest) + c.extra_offset;
    d.quantization = c.quantization;
    auto t = sized(d);
    ASSERT_NE(t, nullptr);
    if (c.extra_buffer != 0) {
        t->d.buffers[0].byte_size += c.extra_buffer;
        t->bufs[0].resize(t->bufs[0].size() + c.extra_buffer, 0xA5);
    }
    Bytes& data = t->bufs[0];
    const uint64_t origin = bits % 8 == 0 ? 0 : packed_origin(c.type, d.byte_offset);
    auto expected_location = [&](int64_t off) {
        if (bits % 8 == 0) {
            return ElementLocation{true, 0, static_cast<uint64_t>(static_cast<int64_t>(d.byte_offset) + off * (bits / 8)), 0};
        }
        return ElementLocation{true, 0, 0, static_cast<uint64_t>(static_cast<int64_t>(origin) + off)};
    };
    // Write each element's code at its brute-force position...
    const std::vector<Index> rows = row_major_indices(c.shape);
    ASSERT_EQ(rows.size(), c.expected.size());
    for (size_t n = 0; n < rows.size(); ++n) {
        const ElementLocation loc = expected_location(c.expected.at(rows[n]));
        if (bits % 8 == 0) {
            put_at_byte(data, bits, loc.byte_base, storage_code(c.type, n));
        } else {
            put_element(data, bits, loc.element, storage_code(c.type, n));
        }
    }
    // ... and read back what each position holds (broadcast strides alias).
    std::vector<uint64_t> codes(rows.size());
    for (size_t n = 0; n < rows.size(); ++n) {
        const ElementLocation loc = expected_location(c.expected.at(rows[n]));
        uint64_t v = 0;
        if (bits % 8 == 0) {
            for (uint32_t i = 0; i < std::min<uint32_t>(bits / 8, 8); ++i) {
                v |= uint64_t{data.at(loc.byte_base + i)} << (8 * i);
            }
        } else {
            v = load_packed(data, loc.element, bits);
        }
        codes[n] = v;
    }
    auto view = t->view();
    ASSERT_TRUE(view.ok()) << view.error().to_string();
    for (size_t n = 0; n < rows.size(); ++n) {
        SCOPED_TRACE("index " + str(rows[n]));
        auto loc = view->locate(rows[n]);
        ASSERT_TRUE(loc.ok()) << loc.error().to_string();
        EXPECT_EQ(*loc, expected_location(c.expected.at(rows[n])));
        auto b = view->read_bits(rows[n]);
        ASSERT_TRUE(b.ok()) << b.error().to_string();
        EXPECT_EQ(*b, low_bits(bits, codes[n]));
        auto x = view->read_double(rows[n]);
        ASSERT_TRUE(x.ok()) << x.error().to_string();
        EXPECT_TRUE(same_double(*x, value_of(c.type, codes[n]))) << *x << " vs " << value_of(c.type, codes[n]);
    }
    auto dense = view->materialize();
    ASSERT_TRUE(dense.ok()) << dense.error().to_string();
    EXPECT_EQ(*dense, pack_row_major(c.type, codes));
}

const std::vector<ET> kDenseTypes = {ET::kInt16, ET::kFloat32, ET::kInt4, ET::kUInt2, ET::kBool, ET::kFloat6E2M3};
const std::vector<std::vector<uint64_t>> kShapes = {{5}, {3, 4}, {2, 3, 4}, {2, 3, 2, 3}};

std::vector<int64_t> row_major_strides(const std::vector<uint64_t>& shape) {
    std::vector<int64_t> s(shape.size());
    int64_t step = 1;
    for (size_t k = shape.size(); k-- > 0;) {
        s[k] = step;
        step *= static_cast<int64_t>(shape[k]);
    }
    return s;
}

std::vector<int64_t> column_major_strides(const std::vector<uint64_t>& shape) {
    std::vector<int64_t> s(shape.size());
    int64_t step = 1;
    for (size_t k = 0; k < shape.size(); ++k) {
        s[k] = step;
        step *= static_cast<int64_t>(shape[k]);
    }
    return s;
}

/// Stride vectors worth testing for a shape: row-major (the memcpy path),
/// column-major (transposition), a reversed dimension, a broadcast dimension,
/// gaps, every dimension reversed, and a rotation of the dimensions.
std::vector<std::vector<int64_t>> stride_variants(const std::vector<uint64_t>& shape) {
    std::vector<std::vector<int64_t>> v;
    const auto rm = row_major_strides(shape);
    const auto cm = column_major_strides(shape);
    v.push_back(rm);
    v.push_back(cm);
    auto rev0 = rm;
    rev0[0] = -rev0[0];
    v.push_back(rev0);
    auto bcast = rm;
    bcast[0] = 0;
    v.push_back(bcast);
    auto gaps = rm;
    for (auto& s : gaps) {
        s = s * 3 + 1;
    }
    v.push_back(gaps);
    auto neg = cm;
    for (auto& s : neg) {
        s = -s;
    }
    v.push_back(neg);
    if (shape.size() >= 3) {
        // Dimension k stored with the row-major stride of dimension (k+1) % r
        // of the rotated shape.
        const size_t r = shape.size();
        std::vector<uint64_t> rotated(r);
        for (size_t k = 0; k < r; ++k) {
            rotated[(k + 1) % r] = shape[k];
        }
        const auto rs = row_major_strides(rotated);
        std::vector<int64_t> s(r);
        for (size_t k = 0; k < r; ++k) {
            s[k] = rs[(k + 1) % r];
        }
        v.push_back(s);
    }
    return v;
}

TEST(TensorViewDense, RowMajorEveryElement) {
    for (ET type : kDenseTypes) {
        for (const auto& shape : kShapes) {
            check_dense({type, shape, RowMajorLayout{}, by_order(shape, row_major_order(shape.size()))});
        }
    }
}

TEST(TensorViewDense, RowMajorWithByteOffset) {
    for (ET type : kDenseTypes) {
        const std::vector<uint64_t> shape = {3, 5};
        const uint64_t extra = bits_of(type) == 6 ? 3 : 1;
        check_dense({type, shape, RowMajorLayout{}, by_order(shape, row_major_order(2)), extra});
    }
}

TEST(TensorViewDense, ScalarAndEmpty) {
    check_dense({ET::kFloat32, {}, RowMajorLayout{}, OffsetMap{{Index{}, 0}}});
    check_dense({ET::kInt4, {}, RowMajorLayout{}, OffsetMap{{Index{}, 0}}});
    for (const std::vector<uint64_t>& shape : {std::vector<uint64_t>{0}, std::vector<uint64_t>{3, 0, 2}}) {
        auto t = sized(TensorDescriptor{.element_type = ET::kInt16, .shape = shape, .buffers = {}});
        ASSERT_NE(t, nullptr);
        auto v = t->view();
        ASSERT_TRUE(v.ok()) << v.error().to_string();
        auto dense = v->materialize();
        ASSERT_TRUE(dense.ok()) << dense.error().to_string();
        EXPECT_TRUE(dense->empty());
        EXPECT_EQ(v->locate(Index(shape.size(), 0)).error().code(), ErrorCode::kInvalidArgument);
    }
}

TEST(TensorViewDense, ColumnMajorEveryElement) {
    for (ET type : kDenseTypes) {
        for (const auto& shape : kShapes) {
            check_dense({type, shape, ColumnMajorLayout{}, by_order(shape, column_major_order(shape.size()))});
        }
    }
}

TEST(TensorViewDense, StridedEveryElement) {
    for (ET type : kDenseTypes) {
        for (const auto& shape : kShapes) {
            for (const auto& strides : stride_variants(shape)) {
                SCOPED_TRACE("strides " + ::testing::PrintToString(strides));
                check_dense({type, shape, StridedLayout{strides}, strided_map(shape, strides)});
            }
        }
    }
}

TEST(TensorViewDense, StridedWithExtraByteOffset) {
    const std::vector<uint64_t> shape = {3, 4};
    for (ET type : kDenseTypes) {
        const uint64_t extra = bits_of(type) == 6 ? 3 : 1;
        check_dense({type, shape, StridedLayout{{-4, 1}}, strided_map(shape, {-4, 1}), extra});
        check_dense({type, shape, StridedLayout{{1, -3}}, strided_map(shape, {1, -3}), extra});
    }
}

TEST(TensorViewDense, StridedSpecExample) {
    // strided.md § Example: [3, 4], strides [-4, 1]; element [2, 3] at offset -5.
    TensorDescriptor d{.element_type = ET::kFloat32, .shape = {3, 4}, .byte_offset = 32,
                       .layout = StridedLayout{{-4, 1}}, .buffers = {}};
    auto t = sized(d);
    ASSERT_NE(t, nullptr);
    // Offsets -8 .. 3: 8 elements below [0, 0] and 4 from it (the example's
    // "-8 to 0 (9 elements)" leaves out columns 1-3 of the last stored row).
    EXPECT_EQ(t->d.buffers[0].byte_size, 48U);
    auto v = t->view();
    ASSERT_TRUE(v.ok()) << v.error().to_string();
    EXPECT_EQ(*v->locate(Index{2, 3}), (ElementLocation{true, 0, 32 - 5 * 4, 0}));
}

/// Larger tensors that exercise the blocked copies: transposition across
/// several tiles, partial tiles, negative and zero strides, every width.
TEST(TensorViewDense, StridedLargerShapesAndWidths) {
    struct Big {
        ET type;
        std::vector<uint64_t> shape;
        std::vector<int64_t> strides;
    };
    const std::vector<Big> cases = {
        {ET::kFloat32, {70, 130}, {1, 70}},
        {ET::kFloat32, {70, 130}, {-1, 70}},
        {ET::kFloat32, {70, 130}, {1, -70}},
        {ET::kUInt8, {33, 300}, {1, 33}},
        {ET::kUInt8, {5, 200, 7}, {1, 35, 5}},
        {ET::kFloat64, {20, 37}, {1, 20}},
        {ET::kComplex128, {9, 21}, {1, 9}},
        {ET::kInt16, {5, 9, 7, 11}, {1, 5, 45, 315}},
        {ET::kInt16, {5, 9, 7, 11}, {77, 1, 693, 7}},
        {ET::kInt16, {4, 66, 3}, {0, 3, 1}},
        {ET::kFloat32, {3, 80}, {200, 2}},
        {ET::kInt4, {9, 70}, {1, 9}},
        {ET::kFloat6E3M2, {9, 70}, {70, -1}},
    };
    for (const Big& b : cases) {
        SCOPED_TRACE("strides " + ::testing::PrintToString(b.strides));
        check_dense({b.type, b.shape, StridedLayout{b.strides}, strided_map(b.shape, b.strides)});
    }
    check_dense({ET::kFloat32, {67, 129}, ColumnMajorLayout{}, by_order({67, 129}, column_major_order(2))});
    check_dense({ET::kUInt16, {3, 67, 40}, ColumnMajorLayout{}, by_order({3, 67, 40}, column_major_order(3))});
}

/// A row- or column-major tensor quantized per block stores its blocked axis
/// padded to whole blocks (per-block-affine.md § Padding).
TEST(TensorViewDense, PerBlockPaddingOfTheBlockedAxis) {
    QuantizationDescriptor q{PerBlockAffine{.axis = 1, .block_size = 4}};
    OffsetMap rm;
    for (uint64_t i = 0; i < 3; ++i) {
        for (uint64_t j = 0; j < 5; ++j) {
            rm[{i, j}] = static_cast<int64_t>(i * 8 + j);  // rows of 2 blocks of 4
        }
    }
    DenseCase c{ET::kInt4, {3, 5}, RowMajorLayout{}, rm};
    c.quantization = q;
    check_dense(c);
    c.type = ET::kInt8;
    check_dense(c);
    OffsetMap cm;
    for (uint64_t i = 0; i < 5; ++i) {
        for (uint64_t j = 0; j < 3; ++j) {
            cm[{i, j}] = static_cast<int64_t>(i + 8 * j);  // columns of 2 blocks of 4
        }
    }
    DenseCase col{ET::kUInt4, {5, 3}, ColumnMajorLayout{}, cm};
    col.quantization = QuantizationDescriptor{PerBlockAffine{.axis = 0, .block_size = 4}};
    check_dense(col);
    // Padding along the outer axis changes nothing for the valid elements.
    DenseCase outer{ET::kInt8, {5, 3}, RowMajorLayout{}, by_order({5, 3}, row_major_order(2))};
    outer.quantization = QuantizationDescriptor{PerBlockAffine{.axis = 0, .block_size = 4}};
    check_dense(outer);
}

// ---------------------------------------------------------------------------
// Tiled

TEST(TensorViewDense, TiledSpecExample) {
    // tiled.md § Example: [6, 8], tiles [2, 4], row-major both ways: [3, 5] at 29.
    TiledLayout t{{TiledLevel{.tile_shape = {2, 4}}}};
    auto tt = sized(TensorDescriptor{.element_type = ET::kFloat32, .shape = {6, 8}, .layout = t, .buffers = {}});
    ASSERT_NE(tt, nullptr);
    auto v = tt->view();
    ASSERT_TRUE(v.ok()) << v.error().to_string();
    EXPECT_EQ(*v->locate(Index{3, 5}), (ElementLocation{true, 0, 29 * 4, 0}));
}

std::vector<TiledLevel> level_variants(const std::vector<uint64_t>& shape, const std::vector<uint64_t>& tile) {
    const size_t rank = shape.size();
    std::vector<uint64_t> grid(rank);
    for (size_t k = 0; k < rank; ++k) {
        grid[k] = (shape[k] + tile[k] - 1) / tile[k];
    }
    // Outer strides: the grid reversed along dimension 0 (negative tile numbers).
    auto outer = row_major_strides(grid);
    outer[0] = -outer[0];
    // Inner strides: the tile stored with its dimensions rotated.
    auto inner = column_major_strides(tile);
    std::vector<TiledLevel> v;
    for (LayoutTag o : {LayoutTag::kRowMajor, LayoutTag::kColumnMajor, LayoutTag::kStrided}) {
        for (LayoutTag i : {LayoutTag::kRowMajor, LayoutTag::kColumnMajor, LayoutTag::kStrided}) {
            TiledLevel lv{.tile_shape = tile, .outer_layout = o, .inner_layout = i};
            if (o == LayoutTag::kStrided) {
                lv.outer_strides = outer;
            }
            if (i == LayoutTag::kStrided) {
                lv.inner_strides = inner;
            }
            v.push_back(lv);
        }
    }
    return v;
}

TEST(TensorViewDense, TiledEveryOuterInnerCombination) {
    const std::vector<std::pair<std::vector<uint64_t>, std::vector<uint64_t>>> cases = {
        {{7}, {3}}, {{5, 7}, {2, 3}}, {{6, 8}, {2, 4}}, {{3, 5, 4}, {2, 2, 3}}, {{3, 2, 3, 2}, {2, 1, 2, 2}}};
    for (ET type : kDenseTypes) {
        for (const auto& [shape, tile] : cases) {
            for (const TiledLevel& lv : level_variants(shape, tile)) {
                SCOPED_TRACE("outer " + std::to_string(static_cast<int>(lv.outer_layout)) + " inner " +
                             std::to_string(static_cast<int>(lv.inner_layout)));
                TiledLayout t{{lv}};
                check_dense({type, shape, t, tiled_map(t, 0, shape)});
            }
        }
    }
}

TEST(TensorViewDense, TiledRecursive) {
    const std::vector<uint64_t> shape = {7, 10};
    for (ET type : kDenseTypes) {
        for (const TiledLevel& inner_level : level_variants({4, 6}, {2, 3})) {
            for (LayoutTag outer : {LayoutTag::kRowMajor, LayoutTag::kColumnMajor}) {
                TiledLevel top{.tile_shape = {4, 6}, .outer_layout = outer, .inner_layout = LayoutTag::kTiled};
                TiledLayout t{{top, inner_level}};
                check_dense({type, shape, t, tiled_map(t, 0, shape)});
            }
        }
    }
    // Three levels, rank 3, the innermost tiles not dividing their region.
    TiledLayout deep{{TiledLevel{.tile_shape = {4, 4, 4}, .inner_layout = LayoutTag::kTiled},
                      TiledLevel{.tile_shape = {2, 4, 2}, .outer_layout = LayoutTag::kColumnMajor,
                                 .inner_layout = LayoutTag::kTiled},
                      TiledLevel{.tile_shape = {1, 3, 2}, .inner_layout = LayoutTag::kColumnMajor}}};
    for (ET type : {ET::kFloat32, ET::kUInt2}) {
        check_dense({type, {5, 6, 7}, deep, tiled_map(deep, 0, {5, 6, 7})});
    }
}

// ---------------------------------------------------------------------------
// Morton and Hilbert

TEST(TensorViewDense, MortonEveryElement) {
    const std::vector<std::pair<std::vector<uint64_t>, std::vector<uint32_t>>> cases = {
        {{5}, {3}}, {{4, 4}, {2, 2}}, {{3, 4}, {2, 2}}, {{2, 3, 4}, {2, 2, 2}}, {{2, 3, 2, 3}, {2, 2, 2, 2}},
        {{3, 3}, {3, 3}}};
    for (ET type : kDenseTypes) {
        for (const auto& [shape, bits] : cases) {
            check_dense({type, shape, MortonLayout{bits}, morton_map(shape, bits)});
        }
    }
}

TEST(TensorViewDense, MortonSpecExample) {
    // morton.md § Example: [4, 4], bits [2, 2]: element [2, 3] at 14.
    auto t = sized(TensorDescriptor{.element_type = ET::kUInt8, .shape = {4, 4}, .layout = MortonLayout{{2, 2}}, .buffers = {}});
    ASSERT_NE(t, nullptr);
    auto v = t->view();
    ASSERT_TRUE(v.ok()) << v.error().to_string();
    EXPECT_EQ(*v->locate(Index{2, 3}), (ElementLocation{true, 0, 14, 0}));
}

TEST(TensorViewDense, MortonUnequalBitsNeedsABufferForTheHighestCode) {
    // bits [1, 2]: element [1, 3] has code 0b1011 = 11, past the 2^3 = 8
    // elements morton.md sizes the buffer for.
    TensorDescriptor d{.element_type = ET::kInt16, .shape = {2, 4}, .layout = MortonLayout{{1, 2}}, .buffers = {}};
    auto t = sized(d);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->d.buffers[0].byte_size, 16U);
    auto v = t->view();
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.error().code(), ErrorCode::kBufferTooSmall);
    // With room for code 11 the view works, element by element.
    DenseCase c{ET::kInt16, {2, 4}, MortonLayout{{1, 2}}, morton_map({2, 4}, {1, 2})};
    c.extra_buffer = 8;
    check_dense(c);
    DenseCase packed{ET::kUInt2, {3, 2}, MortonLayout{{2, 1}}, morton_map({3, 2}, {2, 1})};
    packed.extra_buffer = 1;
    check_dense(packed);
}

TEST(TensorViewDense, HilbertEveryElement) {
    for (ET type : kDenseTypes) {
        for (const auto& [rank, order] : std::vector<std::pair<size_t, uint32_t>>{{2, 1}, {2, 2}, {2, 3}, {3, 1}, {3, 2}, {4, 1}}) {
            std::vector<uint64_t> shape(rank, uint64_t{1} << order);
            check_dense({type, shape, HilbertLayout{order, static_cast<uint32_t>(rank)}, hilbert_map(rank, order)});
        }
    }
}

TEST(TensorViewDense, HilbertSpecTable) {
    // hilbert.md § Conformance Check, r = 2, p = 2: h -> (X[0], X[1]).
    const uint64_t table[16][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}, {0, 2}, {0, 3}, {1, 3}, {1, 2},
                                   {2, 2}, {2, 3}, {3, 3}, {3, 2}, {3, 1}, {2, 1}, {2, 0}, {3, 0}};
    auto t = sized(TensorDescriptor{.element_type = ET::kUInt8, .shape = {4, 4}, .layout = HilbertLayout{2, 2}, .buffers = {}});
    ASSERT_NE(t, nullptr);
    for (uint8_t h = 0; h < 16; ++h) {
        t->bufs[0][h] = h;
    }
    auto v = t->view();
    ASSERT_TRUE(v.ok()) << v.error().to_string();
    for (uint64_t h = 0; h < 16; ++h) {
        EXPECT_EQ(*v->read_bits(Index{table[h][0], table[h][1]}), h);
    }
}

}  // namespace
