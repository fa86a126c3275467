// SPDX-License-Identifier: Apache-2.0
// TensorRef: the descriptor a tensor is written with, checked against the data.
#include "hurray/core/tensor_ref.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "hurray/core/builder.hpp"

namespace hurray {
namespace {

TEST(TensorRef, DenseFromVectorArraySpanAndPointer) {
    const std::vector<float> w = {1, 2, 3, 4, 5, 6};
    const TensorRef a(w, {2, 3});
    auto d = a.descriptor();
    ASSERT_TRUE(d.ok()) << d.error().to_string();
    EXPECT_EQ(*d, *make_dense(ElementType::kFloat32, {2, 3}));
    ASSERT_EQ(a.buffers().size(), 1U);
    EXPECT_EQ(a.buffers()[0].data(), reinterpret_cast<const uint8_t*>(w.data()));  // no copy
    EXPECT_EQ(a.buffers()[0].size(), 24U);

    const std::array<int16_t, 4> arr = {1, -1, 2, -2};
    const TensorRef b(arr);  // one-dimensional
    EXPECT_EQ(b.element_type(), ElementType::kInt16);
    EXPECT_EQ(std::vector<uint64_t>(b.shape().begin(), b.shape().end()), (std::vector<uint64_t>{4}));
    EXPECT_TRUE(b.descriptor().ok());

    const std::span<const std::complex<double>> none;
    const TensorRef c(none, {0, 5});
    EXPECT_EQ(c.element_type(), ElementType::kComplex128);
    EXPECT_TRUE(c.descriptor().ok());

    const double scalar = 2.5;
    const TensorRef s(std::span<const double>(&scalar, 1), Shape{});
    auto sd = s.descriptor();
    ASSERT_TRUE(sd.ok()) << sd.error().to_string();
    EXPECT_EQ(sd->rank(), 0U);
    EXPECT_EQ(sd->buffers[0].byte_size, 8U);
}

TEST(TensorRef, ShapeThatDisagreesWithTheDataIsReported) {
    const std::vector<float> w(6);
    auto d = TensorRef(w, {2, 2}).descriptor();
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.error().code(), ErrorCode::kSizeMismatch);
    EXPECT_NE(d.error().message().find("float32[2, 2] has 4 element(s), 6 value(s) given"), std::string::npos)
        << d.error().message();
    EXPECT_FALSE(TensorRef(w, {7}).descriptor().ok());
    EXPECT_FALSE(TensorRef(w, {2, kDynamicDim}).descriptor().ok());  // make_dense rejects dynamic dimensions
}

TEST(TensorRef, BoolsArePackedIntoOwnedStorage) {
    const bool v[] = {true, false, true, true, false, false, false, false, true, true};
    const TensorRef t(std::span<const bool>(v), {10});
    auto d = t.descriptor();
    ASSERT_TRUE(d.ok()) << d.error().to_string();
    EXPECT_EQ(d->element_type, ElementType::kBool);
    ASSERT_EQ(t.buffers()[0].size(), 2U);
    EXPECT_EQ(t.buffers()[0][0], 0x0DU);  // LSB first: 1,0,1,1 -> 0b1101
    EXPECT_EQ(t.buffers()[0][1], 0x03U);
    const TensorRef copy = t;  // shares the packed bytes
    EXPECT_EQ(copy.buffers()[0].data(), t.buffers()[0].data());
    // 12 bools and a shape of 10 fill the same two bytes: still a mismatch.
    const bool twelve[12] = {};
    EXPECT_EQ(TensorRef(std::span<const bool>(twelve), {10}).descriptor().error().code(), ErrorCode::kSizeMismatch);
    static_assert(!std::is_constructible_v<TensorRef, const std::vector<bool>&, Shape>);
}

TEST(TensorRef, RawBytesOfPackedTypes) {
    const std::vector<uint8_t> packed = {0x21, 0x43, 0x05};
    auto ok = TensorRef::from_bytes(ElementType::kInt4, {5}, packed).descriptor();
    ASSERT_TRUE(ok.ok()) << ok.error().to_string();
    EXPECT_EQ(ok->buffers[0].byte_size, 3U);
    auto bad = TensorRef::from_bytes(ElementType::kInt4, {4}, packed).descriptor();
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message().find("int4[4] needs 2 byte(s) of data, 3 given"), std::string::npos)
        << bad.error().message();
}

TEST(TensorRef, AnyDescriptorWithItsBuffers) {
    auto q = make_per_block_quantized(ElementType::kInt4, {4, 64}, 1, 32);
    ASSERT_TRUE(q.ok());
    std::vector<uint8_t> codes(q->buffers[0].byte_size);
    std::vector<uint8_t> scales(q->buffers[1].byte_size);
    const std::span<const uint8_t> bufs[] = {codes, scales};
    const TensorRef t = TensorRef::from_descriptor(*q, bufs);
    EXPECT_EQ(*t.descriptor(), *q);
    EXPECT_EQ(t.buffers().size(), 2U);
    EXPECT_EQ(t.buffers()[1].data(), scales.data());
    auto missing = TensorRef::from_descriptor(*q, std::span<const std::span<const uint8_t>>(bufs, 1)).descriptor();
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().code(), ErrorCode::kSizeMismatch);
}

}  // namespace
}  // namespace hurray
