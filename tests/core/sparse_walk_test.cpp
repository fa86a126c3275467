// SPDX-License-Identifier: Apache-2.0
// The internal sparse walker (src/core/sparse_walk.hpp): every stored element
// of COO, CSR, CSC and CSF tensors, in storage order, with its coordinates,
// and bounds-checked refusal of index structures that point outside.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "core/sparse_walk.hpp"
#include "descriptor_test_support.hpp"

namespace {

using namespace hurray;            // NOLINT(google-build-using-namespace): test brevity
using namespace hurray_desc_test;  // NOLINT(google-build-using-namespace)

Bytes u64v(std::initializer_list<uint64_t> v) {
    Bytes b;
    for (uint64_t x : v) {
        for (int i = 0; i < 8; ++i) {
            b.push_back(static_cast<uint8_t>(x >> (8 * i)));
        }
    }
    return b;
}

struct Visit {
    std::vector<uint64_t> coords;
    uint64_t value = 0;
    bool operator==(const Visit&) const = default;
};

Result<std::vector<Visit>> walk(const TensorDescriptor& d, const std::vector<Bytes>& data) {
    std::vector<std::span<const uint8_t>> spans(data.begin(), data.end());
    HURRAY_ASSIGN_OR_RETURN(TensorView view, TensorView::make(d, spans));
    std::vector<Visit> out;
    HURRAY_RETURN_IF_ERROR(detail::for_each_stored(view, [&](std::span<const uint64_t> c, uint64_t j) -> Status {
        out.push_back({{c.begin(), c.end()}, j});
        return Status::success();
    }));
    return out;
}

TensorDescriptor with_buffers(ElementType t, Shape shape, LayoutDescriptor layout, const std::vector<Bytes>& data) {
    TensorDescriptor d;
    d.element_type = t;
    d.shape = std::move(shape);
    d.layout = std::move(layout);
    for (const Bytes& b : data) {
        d.buffers.push_back(buf(b.size()));
    }
    return d;
}

// csf.md's example, and a permuted mode_order.
TEST(SparseWalk, CsfInLeafOrder) {
    const std::vector<Bytes> data = {Bytes(16), u64v({0, 2}), u64v({0, 1}), u64v({0, 2, 3}), u64v({0, 2, 1}),
                                     u64v({0, 1, 2, 4}), u64v({1, 3, 0, 2})};
    const TensorDescriptor d = with_buffers(ElementType::kFloat32, {2, 3, 4}, CsfLayout{4, {0, 1, 2}}, data);
    auto v = walk(d, data);
    ASSERT_TRUE(v.ok()) << v.error().to_string();
    EXPECT_EQ(*v, (std::vector<Visit>{{{0, 0, 1}, 0}, {{0, 2, 3}, 1}, {{1, 1, 0}, 2}, {{1, 1, 2}, 3}}));
    // mode_order [2, 0, 1]: level 0 holds dimension 2.
    const TensorDescriptor p = with_buffers(ElementType::kFloat32, {3, 4, 2}, CsfLayout{4, {2, 0, 1}}, data);
    v = walk(p, data);
    ASSERT_TRUE(v.ok()) << v.error().to_string();
    EXPECT_EQ((*v)[1], (Visit{{2, 3, 0}, 1}));
    // A slice pointing past crd is refused, not read.
    std::vector<Bytes> bad = data;
    bad[5] = u64v({0, 1, 2, 9});
    EXPECT_EQ(walk(d, bad).error().code(), ErrorCode::kInvalidData);
    // Empty.
    const std::vector<Bytes> empty = {Bytes{}, u64v({0, 0}), Bytes{}, u64v({0}), Bytes{}, u64v({0}), Bytes{}};
    v = walk(with_buffers(ElementType::kFloat32, {2, 3, 4}, CsfLayout{0, {0, 1, 2}}, empty), empty);
    ASSERT_TRUE(v.ok());
    EXPECT_TRUE(v->empty());
}

TEST(SparseWalk, CooCsrCsc) {
    std::vector<Bytes> coo = {Bytes(8), u64v({2, 1, 0, 3})};
    auto v = walk(with_buffers(ElementType::kFloat32, {3, 4}, CooLayout{2, false}, coo), coo);
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(*v, (std::vector<Visit>{{{2, 1}, 0}, {{0, 3}, 1}}));
    coo[1] = u64v({2, 1, 3, 0});  // row 3 of 3
    EXPECT_EQ(walk(with_buffers(ElementType::kFloat32, {3, 4}, CooLayout{2, false}, coo), coo).error().code(),
              ErrorCode::kInvalidData);

    const std::vector<Bytes> csr = {Bytes(12), u64v({1, 0, 2}), u64v({0, 1, 1, 3})};
    v = walk(with_buffers(ElementType::kFloat32, {3, 3}, CsrLayout{3}, csr), csr);
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(*v, (std::vector<Visit>{{{0, 1}, 0}, {{2, 0}, 1}, {{2, 2}, 2}}));
    v = walk(with_buffers(ElementType::kFloat32, {3, 3}, CscLayout{3}, csr), csr);
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(*v, (std::vector<Visit>{{{1, 0}, 0}, {{0, 2}, 1}, {{2, 2}, 2}}));
    const std::vector<Bytes> bad = {Bytes(12), u64v({1, 0, 2}), u64v({0, 2, 1, 3})};
    EXPECT_EQ(walk(with_buffers(ElementType::kFloat32, {3, 3}, CsrLayout{3}, bad), bad).error().code(),
              ErrorCode::kInvalidData);

    const std::vector<Bytes> dense = {Bytes(4)};
    EXPECT_EQ(walk(with_buffers(ElementType::kFloat32, {1}, RowMajorLayout{}, dense), dense).error().code(),
              ErrorCode::kInvalidArgument);
}

}  // namespace
