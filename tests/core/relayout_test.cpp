// SPDX-License-Identifier: Apache-2.0
// column_major_from_row_major and tiled_from_row_major: the bytes they lay
// out, read back through a column-major or tiled view, are the row-major
// input, for every kind of element width they take and random shapes;
// hand-checked cases; and their rejections.
#include <gtest/gtest.h>

#include <random>

#include "hurray/core/builder.hpp"
#include "hurray/core/relayout.hpp"
#include "hurray/core/shape.hpp"
#include "hurray/core/tensor_view.hpp"

namespace {

using namespace hurray;

TEST(Relayout, TwoByThreeBytesByHand) {
    const std::vector<uint64_t> shape = {2, 3};
    const std::vector<uint8_t> rm = {1, 2, 3, 4, 5, 6};  // rows (1 2 3) (4 5 6)
    auto cm = column_major_from_row_major(ElementType::kUInt8, shape, rm);
    ASSERT_TRUE(cm.ok()) << cm.error().to_string();
    EXPECT_EQ(*cm, (std::vector<uint8_t>{1, 4, 2, 5, 3, 6}));
    // int4, 2 per byte, LSB first: elements 1..6 -> column-major 1 4 2 5 3 6.
    const std::vector<uint8_t> packed = {0x21, 0x43, 0x65};
    auto cm4 = column_major_from_row_major(ElementType::kUInt4, shape, packed);
    ASSERT_TRUE(cm4.ok());
    EXPECT_EQ(*cm4, (std::vector<uint8_t>{0x41, 0x52, 0x63}));
}

TEST(Relayout, ReadBackThroughAColumnMajorViewIsTheInput) {
    std::mt19937 rng(7);
    const ElementType types[] = {ElementType::kUInt8,      ElementType::kFloat16,     ElementType::kFloat32,
                                 ElementType::kFloat64,    ElementType::kComplex128,  ElementType::kBool,
                                 ElementType::kUInt2,      ElementType::kInt4,        ElementType::kFloat6E2M3};
    for (int trial = 0; trial < 300; ++trial) {
        const ElementType type = types[static_cast<size_t>(trial) % std::size(types)];
        Shape shape;
        for (uint32_t k = rng() % 6; k > 0; --k) {
            shape.push_back(rng() % 6);
        }
        const uint64_t count = *element_count(shape);
        const uint64_t bytes = *storage_bytes(type, count);
        std::vector<uint8_t> rm(static_cast<size_t>(bytes));
        for (auto& b : rm) {
            b = static_cast<uint8_t>(rng());
        }
        // Padding bits after the last packed element are zero, as materialize writes them.
        const uint64_t used_bits = count * bit_width(type);
        for (uint64_t bit = used_bits; bit < bytes * 8; ++bit) {
            rm[bit / 8] = static_cast<uint8_t>(rm[bit / 8] & ~(1U << (bit % 8)));
        }
        auto cm = column_major_from_row_major(type, shape, rm);
        ASSERT_TRUE(cm.ok()) << cm.error().to_string();
        ASSERT_EQ(cm->size(), rm.size());
        TensorDescriptor d = *make_dense(type, shape);
        if (!shape.empty()) {
            d.layout = ColumnMajorLayout{};  // a scalar is row-major by rule; its bytes are the same
        }
        const std::span<const uint8_t> bufs[] = {*cm};
        auto view = TensorView::make(d, bufs);
        ASSERT_TRUE(view.ok()) << view.error().to_string();
        auto back = view->materialize();
        ASSERT_TRUE(back.ok()) << back.error().to_string();
        EXPECT_EQ(*back, rm) << "trial " << trial << ", type " << static_cast<int>(type) << ", rank " << shape.size();
    }
}

TEST(Relayout, RefusesAWrongSizeAndTooManyDimensions) {
    const std::vector<uint64_t> shape = {2, 3};
    auto short_input = column_major_from_row_major(ElementType::kFloat32, shape, std::vector<uint8_t>(23));
    ASSERT_FALSE(short_input.ok());
    EXPECT_EQ(short_input.error().code(), ErrorCode::kSizeMismatch);
    const std::vector<uint64_t> deep(65, 1);
    auto too_deep = column_major_from_row_major(ElementType::kUInt8, deep, std::vector<uint8_t>(1));
    ASSERT_FALSE(too_deep.ok());
    EXPECT_EQ(too_deep.error().code(), ErrorCode::kRankTooLarge);
    const std::vector<uint64_t> huge = {1ULL << 40, 1ULL << 40};
    EXPECT_FALSE(column_major_from_row_major(ElementType::kUInt8, huge, {}).ok());
}

TEST(RelayoutTiled, ThreeByFiveInTwoByTwoTilesByHand) {
    const std::vector<uint64_t> shape = {3, 5};
    const std::vector<uint64_t> tile = {2, 2};
    std::vector<uint8_t> rm(15);
    for (size_t i = 0; i < rm.size(); ++i) {
        rm[i] = static_cast<uint8_t>(i + 1);  // rows (1..5) (6..10) (11..15)
    }
    auto bytes = tiled_storage_bytes(ElementType::kUInt8, shape, tile);
    ASSERT_TRUE(bytes.ok());
    EXPECT_EQ(*bytes, 2U * 3U * 4U);  // a 2 x 3 grid of 4-element tiles
    auto tiled = tiled_from_row_major(ElementType::kUInt8, shape, tile, rm);
    ASSERT_TRUE(tiled.ok()) << tiled.error().to_string();
    EXPECT_EQ(*tiled, (std::vector<uint8_t>{1,  2,  6, 7, 3,  4,  8,  9, 5,  0, 10, 0,     // tile row 0
                                            11, 12, 0, 0, 13, 14, 0,  0, 15, 0, 0,  0}));  // tile row 1, padded
}

TEST(RelayoutTiled, ReadBackThroughATiledViewIsTheInput) {
    std::mt19937 rng(11);
    const ElementType types[] = {ElementType::kUInt8, ElementType::kFloat16, ElementType::kFloat32,
                                 ElementType::kFloat64, ElementType::kComplex128, ElementType::kInt16};
    for (int trial = 0; trial < 300; ++trial) {
        const ElementType type = types[static_cast<size_t>(trial) % std::size(types)];
        Shape shape;
        std::vector<uint64_t> tile;
        for (uint32_t k = 1 + rng() % 4; k > 0; --k) {
            shape.push_back(rng() % 7);
            tile.push_back(1 + rng() % 4);
        }
        const uint64_t count = *element_count(shape);
        std::vector<uint8_t> rm(static_cast<size_t>(*storage_bytes(type, count)));
        for (auto& b : rm) {
            b = static_cast<uint8_t>(rng());
        }
        auto tiled = tiled_from_row_major(type, shape, tile, rm);
        ASSERT_TRUE(tiled.ok()) << tiled.error().to_string();
        ASSERT_EQ(tiled->size(), *tiled_storage_bytes(type, shape, tile));
        TensorDescriptor d = *make_dense(type, shape);
        d.layout = TiledLayout{{TiledLevel{.tile_shape = tile}}};
        auto sized = size_buffers(std::move(d));
        ASSERT_TRUE(sized.ok()) << sized.error().to_string();
        d = std::move(*sized);
        ASSERT_EQ(d.buffers[0].byte_size, tiled->size()) << "the size the tiled layout requires";
        const std::span<const uint8_t> bufs[] = {*tiled};
        auto view = TensorView::make(d, bufs);
        ASSERT_TRUE(view.ok()) << view.error().to_string();
        auto back = view->materialize();
        ASSERT_TRUE(back.ok()) << back.error().to_string();
        EXPECT_EQ(*back, rm) << "trial " << trial << ", rank " << shape.size();
    }
}

TEST(RelayoutTiled, Refusals) {
    const std::vector<uint64_t> shape = {2, 3};
    const std::vector<uint64_t> tile = {2, 2};
    const std::vector<uint8_t> six(6);
    auto code = [](const auto& r) { return r.ok() ? ErrorCode::kOk : r.error().code(); };
    EXPECT_EQ(code(tiled_from_row_major(ElementType::kUInt8, shape, tile, std::vector<uint8_t>(5))),
              ErrorCode::kSizeMismatch);
    EXPECT_EQ(code(tiled_from_row_major(ElementType::kUInt8, shape, std::vector<uint64_t>{2}, six)),
              ErrorCode::kInvalidArgument);
    EXPECT_EQ(code(tiled_from_row_major(ElementType::kUInt8, shape, std::vector<uint64_t>{2, 0}, six)),
              ErrorCode::kInvalidArgument);
    EXPECT_EQ(code(tiled_from_row_major(ElementType::kUInt8, {}, {}, std::vector<uint8_t>(1))),
              ErrorCode::kInvalidArgument);  // a scalar is never tiled
    EXPECT_EQ(code(tiled_from_row_major(ElementType::kInt4, shape, tile, std::vector<uint8_t>(3))),
              ErrorCode::kUnsupported);
    const std::vector<uint64_t> huge = {1ULL << 40, 1ULL << 40};
    EXPECT_EQ(code(tiled_storage_bytes(ElementType::kUInt8, huge, std::vector<uint64_t>{1, 1})),
              ErrorCode::kSizeOverflow);
    const std::vector<uint64_t> dynamic = {kDynamicDim, 2};
    EXPECT_EQ(code(tiled_storage_bytes(ElementType::kUInt8, dynamic, tile)), ErrorCode::kInvalidShape);
    auto empty = tiled_from_row_major(ElementType::kFloat32, std::vector<uint64_t>{0, 3}, tile, {});
    ASSERT_TRUE(empty.ok());
    EXPECT_TRUE(empty->empty());
}

TEST(RowMajorStrides, ProductsOfTheLaterDimensions) {
    EXPECT_EQ(*row_major_strides(std::vector<uint64_t>{2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
    EXPECT_TRUE(row_major_strides(std::vector<uint64_t>{})->empty());
    EXPECT_EQ(*row_major_strides(std::vector<uint64_t>{5, 0, 4}), (std::vector<int64_t>{4, 4, 1}));  // 0 counts as 1
    const std::vector<uint64_t> wide = {2, 1ULL << 62, 2};
    EXPECT_EQ(row_major_strides(wide).error().code(), ErrorCode::kSizeOverflow);
    EXPECT_EQ(*row_major_strides(std::vector<uint64_t>{2, 1ULL << 62}), (std::vector<int64_t>{1LL << 62, 1}));
    EXPECT_EQ(row_major_strides(std::vector<uint64_t>{kDynamicDim}).error().code(), ErrorCode::kInvalidShape);
}

}  // namespace
