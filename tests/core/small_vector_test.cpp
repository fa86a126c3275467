// SPDX-License-Identifier: Apache-2.0
// SmallVector: the std::vector API it offers, inline storage up to N elements
// (counted: no allocation), the spill to the heap beyond, copies and moves in
// both states, and the conversions (span, std::vector).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <list>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "counting_allocator.hpp"
#include "hurray/core/buffer_handle.hpp"
#include "hurray/core/shape.hpp"
#include "hurray/core/small_vector.hpp"
#include "hurray/core/tensor_descriptor.hpp"

namespace hurray {
namespace {

using hurray_test::allocations_in;
using V = SmallVector<uint64_t, 4>;

static_assert(std::is_convertible_v<Shape&, std::span<const uint64_t>>);
static_assert(std::is_convertible_v<const Shape&, std::span<const uint64_t>>);
static_assert(std::is_convertible_v<Shape&, std::span<uint64_t>>);
static_assert(!std::is_convertible_v<const Shape&, std::span<uint64_t>>);
static_assert(std::is_convertible_v<const std::vector<uint64_t>&, Shape>);
static_assert(std::is_convertible_v<std::span<const uint64_t>, Shape>);
static_assert(!std::is_convertible_v<const Shape&, std::vector<uint64_t>>);  // to_vector() says it
static_assert(std::is_nothrow_move_constructible_v<Shape>);
static_assert(std::is_nothrow_move_assignable_v<BufferTable>);

TEST(SmallVector, InlineUpToNAllocatesNothing) {
    uint64_t n = 0;
    EXPECT_EQ(allocations_in([&] {
                  V v = {1, 2, 3};
                  v.push_back(4);
                  V copy = v;
                  V moved = std::move(copy);
                  moved.resize(2);
                  moved.emplace_back(9);
                  n = moved.size() + v.size();
              }),
              0U);
    EXPECT_EQ(n, 7U);
    V v(4);
    EXPECT_TRUE(v.is_inline());
    EXPECT_EQ(v.capacity(), 4U);
    EXPECT_EQ(v, (V{0, 0, 0, 0}));
}

TEST(SmallVector, SpillsToTheHeapBeyondN) {
    V v = {1, 2, 3, 4};
    EXPECT_EQ(allocations_in([&] { v.push_back(5); }), 1U);
    EXPECT_FALSE(v.is_inline());
    EXPECT_EQ(v, (V{1, 2, 3, 4, 5}));
    for (uint64_t i = 6; i <= 100; ++i) {
        v.push_back(i);
    }
    ASSERT_EQ(v.size(), 100U);
    for (size_t i = 0; i < v.size(); ++i) {
        EXPECT_EQ(v[i], i + 1);
    }
    // A move takes the heap block; the source is empty and inline again.
    const uint64_t* block = v.data();
    V moved = std::move(v);
    EXPECT_EQ(moved.data(), block);
    EXPECT_TRUE(v.empty());  // NOLINT(bugprone-use-after-move)
    EXPECT_TRUE(v.is_inline());
    v = moved;  // copy back: a fresh block
    EXPECT_NE(v.data(), moved.data());
    EXPECT_EQ(v, moved);
    v.clear();
    EXPECT_TRUE(v.empty());
    EXPECT_GE(v.capacity(), 100U);
    v = {7};  // within capacity: no allocation, keeps the block
    EXPECT_EQ(v.size(), 1U);
    EXPECT_EQ(v.front(), 7U);
}

TEST(SmallVector, PushBackOfOwnElementWhileGrowing) {
    V v = {1, 2, 3, 4};
    v.push_back(v[0]);  // the growth must not read the released block
    v.push_back(v.back());
    EXPECT_EQ(v, (V{1, 2, 3, 4, 1, 1}));
    v.insert(v.begin(), v.size(), v[3]);
    EXPECT_EQ(v.size(), 12U);
    EXPECT_TRUE(std::all_of(v.begin(), v.begin() + 6, [](uint64_t x) { return x == 4; }));
}

TEST(SmallVector, VectorApi) {
    V v;
    EXPECT_TRUE(v.empty());
    v.assign(3, 7);
    EXPECT_EQ(v, (V{7, 7, 7}));
    const std::vector<uint64_t> src = {1, 2, 3, 4, 5, 6};
    v.assign(src.begin(), src.end());
    EXPECT_EQ(v, src);
    EXPECT_EQ(src, v);
    EXPECT_EQ(v.to_vector(), src);
    v.erase(v.begin() + 1);
    EXPECT_EQ(v, (V{1, 3, 4, 5, 6}));
    v.erase(v.begin(), v.begin() + 2);
    EXPECT_EQ(v, (V{4, 5, 6}));
    v.insert(v.begin() + 1, 9);
    EXPECT_EQ(v, (V{4, 9, 5, 6}));
    v.insert(v.end(), {10, 11});
    EXPECT_EQ(v, (V{4, 9, 5, 6, 10, 11}));
    v.insert(v.begin(), v.begin() + 4, v.end());  // from our own elements
    EXPECT_EQ(v, (V{10, 11, 4, 9, 5, 6, 10, 11}));
    v.resize(2);
    v.resize(4, 3);
    EXPECT_EQ(v, (V{10, 11, 3, 3}));
    v.pop_back();
    EXPECT_EQ(v.back(), 3U);
    std::reverse(v.begin(), v.end());
    EXPECT_EQ(v, (V{3, 11, 10}));
    EXPECT_EQ(std::vector<uint64_t>(v.rbegin(), v.rend()), (std::vector<uint64_t>{10, 11, 3}));
    v.assign(v.begin() + 1, v.end());  // from our own elements, within capacity
    EXPECT_EQ(v, (V{11, 10}));
    const std::list<uint64_t> l = {5, 6};  // a non-contiguous range
    V from_list(l.begin(), l.end());
    EXPECT_EQ(from_list, (V{5, 6}));
    V a = {1, 2};
    V b = {1, 2, 3, 4, 5};
    a.swap(b);
    EXPECT_EQ(a.size(), 5U);
    EXPECT_EQ(b, (V{1, 2}));
    EXPECT_LT(b, a);
    EXPECT_NE(a, b);
    V e;
    e.emplace_back();
    EXPECT_EQ(e, V{0});
}

TEST(SmallVector, ConversionsToAndFromStandardTypes) {
    const Shape s = {2, 3, 4};
    std::span<const uint64_t> view = s;
    EXPECT_EQ(view.size(), 3U);
    EXPECT_EQ(view.data(), s.data());
    const std::vector<uint64_t> v = {5, 6};
    Shape from_vector = v;
    EXPECT_EQ(from_vector, v);
    Shape from_span = std::span<const uint64_t>(v);
    EXPECT_EQ(from_span, from_vector);
    Shape assigned;
    assigned = v;
    EXPECT_EQ(assigned, v);
    Shape mutable_shape = {1, 1};
    std::span<uint64_t> out = mutable_shape;
    out[1] = 8;
    EXPECT_EQ(mutable_shape, (Shape{1, 8}));
}

TEST(SmallVector, BufferTableHoldsHandles) {
    BufferTable t;
    t.resize(2);
    EXPECT_EQ(t[1].alignment, kMinBufferAlignment);  // value-initialised: the member defaults
    t.push_back(BufferHandle{.byte_size = 48});
    t.emplace_back(BufferHandle{.byte_size = 64});
    t.push_back(BufferHandle{.byte_size = 80});
    EXPECT_FALSE(t.is_inline());
    EXPECT_EQ(t.size(), 5U);
    EXPECT_EQ(t[4].byte_size, 80U);
    const TensorDescriptor d{.shape = {3, 4}, .buffers = {BufferHandle{.byte_size = 48}}};
    TensorDescriptor copy = d;
    EXPECT_EQ(copy, d);
    EXPECT_EQ(copy.shape.data(), copy.shape.data());
    EXPECT_NE(copy.shape.data(), d.shape.data());
}

}  // namespace
}  // namespace hurray
