// SPDX-License-Identifier: Apache-2.0
// column_major_from_row_major: the bytes it lays out, read back through a
// column-major view, are the row-major input, for every kind of element width
// and random shapes; a hand-checked 2 x 3 case; and its rejections.
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

}  // namespace
