// SPDX-License-Identifier: Apache-2.0
// TensorView on the sparse layouts (COO sorted and unsorted, CSR, CSC, CSF
// with any mode_order): every element, stored or not, against a dense
// reference built from the same non-zeros; the spec examples; empty tensors;
// and corrupt index structures, which must be kInvalidData, never a crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "hurray/core/builder.hpp"
#include "hurray/core/tensor_view.hpp"
#include "view_test_support.hpp"

namespace {

using namespace hurray;            // NOLINT(google-build-using-namespace): test brevity
using namespace hurray_view_test;  // NOLINT(google-build-using-namespace)
using ET = ElementType;

/// A sparse tensor's content: logical index -> storage code, and the order in
/// which the non-zeros are stored.
struct NonZeros {
    std::vector<uint64_t> shape;
    std::vector<Index> order;  // storage order
    std::map<Index, uint64_t> code;
};

/// `count` distinct random indices of `shape`, each with a code.
NonZeros random_nonzeros(std::vector<uint64_t> shape, size_t count, ET type, uint32_t seed) {
    NonZeros nz{std::move(shape), {}, {}};
    std::vector<Index> all = row_major_indices(nz.shape);
    std::mt19937 rng(seed);
    std::shuffle(all.begin(), all.end(), rng);
    all.resize(std::min(count, all.size()));
    for (size_t k = 0; k < all.size(); ++k) {
        nz.code[all[k]] = storage_code(type, k + 1);
    }
    nz.order = all;
    return nz;
}

void put_u64(Bytes& b, size_t entry, uint64_t v) {
    for (size_t i = 0; i < 8; ++i) {
        b.at(entry * 8 + i) = static_cast<uint8_t>(v >> (8 * i));
    }
}

Bytes u64s(const std::vector<uint64_t>& v) {
    Bytes b(v.size() * 8);
    for (size_t i = 0; i < v.size(); ++i) {
        put_u64(b, i, v[i]);
    }
    return b;
}

Bytes values_of(ET type, const NonZeros& nz, const std::vector<Index>& order) {
    std::vector<uint64_t> codes;
    for (const Index& i : order) {
        codes.push_back(nz.code.at(i));
    }
    return pack_row_major(type, codes);
}

std::unique_ptr<Tensor> make_coo(ET type, const NonZeros& nz, bool sorted) {
    std::vector<Index> order = nz.order;
    if (sorted) {
        std::sort(order.begin(), order.end());
    }
    TensorDescriptor d{.element_type = type, .shape = nz.shape, .layout = CooLayout{order.size(), sorted}, .buffers = {}};
    auto t = sized(d);
    if (!t) {
        return t;
    }
    t->bufs[0] = values_of(type, nz, order);
    std::vector<uint64_t> idx;
    for (const Index& i : order) {
        idx.insert(idx.end(), i.begin(), i.end());
    }
    t->bufs[1] = u64s(idx);
    return t;
}

/// CSR (major = 0) or CSC (major = 1).
std::unique_ptr<Tensor> make_compressed(ET type, const NonZeros& nz, size_t major) {
    std::vector<Index> order = nz.order;
    std::sort(order.begin(), order.end(), [major](const Index& a, const Index& b) {
        return std::pair(a[major], a[1 - major]) < std::pair(b[major], b[1 - major]);
    });
    LayoutDescriptor layout = major == 0 ? LayoutDescriptor(CsrLayout{order.size()}) : CscLayout{order.size()};
    auto t = sized(TensorDescriptor{.element_type = type, .shape = nz.shape, .layout = layout, .buffers = {}});
    if (!t) {
        return t;
    }
    t->bufs[0] = values_of(type, nz, order);
    std::vector<uint64_t> crd;
    std::vector<uint64_t> ptr(nz.shape[major] + 1, 0);
    for (const Index& i : order) {
        crd.push_back(i[1 - major]);
        ++ptr[i[major] + 1];
    }
    std::partial_sum(ptr.begin(), ptr.end(), ptr.begin());
    t->bufs[1] = u64s(crd);
    t->bufs[2] = u64s(ptr);
    return t;
}

/// CSF: the tree of the non-zeros sorted by their coordinates in mode_order.
std::unique_ptr<Tensor> make_csf(ET type, const NonZeros& nz, const std::vector<uint32_t>& mode_order) {
    const size_t rank = nz.shape.size();
    auto permuted = [&](const Index& i) {
        Index p(rank);
        for (size_t l = 0; l < rank; ++l) {
            p[l] = i[mode_order[l]];
        }
        return p;
    };
    std::vector<Index> order = nz.order;
    std::sort(order.begin(), order.end(), [&](const Index& a, const Index& b) { return permuted(a) < permuted(b); });
    std::vector<std::vector<uint64_t>> pos(rank);
    std::vector<std::vector<uint64_t>> crd(rank);
    // A node at level l is a distinct prefix of length l + 1.
    for (size_t l = 0; l < rank; ++l) {
        pos[l].push_back(0);
        Index prev_parent;
        bool first = true;
        Index prev_node;
        for (const Index& i : order) {
            const Index p = permuted(i);
            const Index node(p.begin(), p.begin() + static_cast<ptrdiff_t>(l) + 1);
            const Index parent(p.begin(), p.begin() + static_cast<ptrdiff_t>(l));
            if (!first && node == prev_node) {
                continue;
            }
            if (!first && parent != prev_parent) {
                pos[l].push_back(crd[l].size());
            }
            crd[l].push_back(p[l]);
            prev_node = node;
            prev_parent = parent;
            first = false;
        }
        pos[l].push_back(crd[l].size());
        if (order.empty() && l != 0) {
            pos[l] = {0};  // csf.md: an empty tensor's inner pos arrays are [0]
        }
    }
    std::vector<uint64_t> dependent;
    for (size_t l = 0; l < rank; ++l) {
        if (l != 0) {
            dependent.push_back(pos[l].size() * 8);
        }
        if (l + 1 != rank) {
            dependent.push_back(crd[l].size() * 8);
        }
    }
    auto t = sized(TensorDescriptor{.element_type = type, .shape = nz.shape,
                                    .layout = CsfLayout{order.size(), mode_order}, .buffers = {}},
                   dependent);
    if (!t) {
        return t;
    }
    t->bufs[0] = values_of(type, nz, order);
    for (size_t l = 0; l < rank; ++l) {
        t->bufs[2 * l + 1] = u64s(pos[l]);
        t->bufs[2 * l + 2] = u64s(crd[l]);
    }
    return t;
}

/// Every element of the view against the dense reference `nz`.
void check_against_reference(const Tensor& t, const NonZeros& nz) {
    const ET type = t.d.element_type;
    const uint32_t bits = bit_width(type);
    auto v = t.view();
    ASSERT_TRUE(v.ok()) << v.error().to_string();
    std::vector<uint64_t> dense;
    for (const Index& idx : row_major_indices(nz.shape)) {
        SCOPED_TRACE("index " + str(idx));
        const auto it = nz.code.find(idx);
        const uint64_t code = it == nz.code.end() ? 0 : it->second;
        dense.push_back(code);
        auto loc = v->locate(idx);
        ASSERT_TRUE(loc.ok()) << loc.error().to_string();
        EXPECT_EQ(loc->stored, it != nz.code.end());
        auto b = v->read_bits(idx);
        ASSERT_TRUE(b.ok()) << b.error().to_string();
        EXPECT_EQ(*b, low_bits(bits, code));
        auto x = v->read_double(idx);
        ASSERT_TRUE(x.ok()) << x.error().to_string();
        EXPECT_TRUE(same_double(*x, it == nz.code.end() ? 0.0 : value_of(type, code)));
    }
    auto m = v->materialize();
    ASSERT_TRUE(m.ok()) << m.error().to_string();
    EXPECT_EQ(*m, pack_row_major(type, dense));
}

const std::vector<ET> kSparseTypes = {ET::kFloat32, ET::kInt16, ET::kInt4, ET::kUInt2, ET::kBool, ET::kFloat6E2M3};

TEST(TensorViewSparse, CooSortedAndUnsorted) {
    const std::vector<std::vector<uint64_t>> shapes = {{9}, {4, 5}, {3, 4, 5}, {2, 3, 2, 3}};
    uint32_t seed = 1;
    for (ET type : kSparseTypes) {
        for (const auto& shape : shapes) {
            for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1000}}) {
                const NonZeros nz = random_nonzeros(shape, count, type, seed++);
                for (bool sorted : {true, false}) {
                    SCOPED_TRACE(std::string(type_name(type)) + " " + str(shape) + " nnz " +
                                 std::to_string(nz.order.size()) + (sorted ? " sorted" : " unsorted"));
                    auto t = make_coo(type, nz, sorted);
                    ASSERT_NE(t, nullptr);
                    check_against_reference(*t, nz);
                }
            }
        }
    }
}

TEST(TensorViewSparse, CooSpecExample) {
    // coo.md § Example: [4, 4] float32, (0,1)=1.5, (2,0)=-0.5, (3,3)=2.0.
    auto t = sized(TensorDescriptor{.element_type = ET::kFloat32, .shape = {4, 4}, .layout = CooLayout{3, true}, .buffers = {}});
    ASSERT_NE(t, nullptr);
    const float vals[3] = {1.5F, -0.5F, 2.0F};
    std::memcpy(t->bufs[0].data(), vals, 12);
    t->bufs[1] = u64s({0, 1, 2, 0, 3, 3});
    auto v = t->view();
    ASSERT_TRUE(v.ok()) << v.error().to_string();
    EXPECT_EQ(*v->read_double(Index{2, 0}), -0.5);
    EXPECT_EQ(*v->read_double(Index{3, 3}), 2.0);
    EXPECT_EQ(*v->read_double(Index{1, 1}), 0.0);
    EXPECT_EQ(*v->locate(Index{3, 3}), (ElementLocation{true, 0, 8, 0}));
    EXPECT_EQ(*v->locate(Index{1, 1}), ElementLocation{});
}

TEST(TensorViewSparse, CsrAndCsc) {
    const std::vector<std::vector<uint64_t>> shapes = {{4, 5}, {1, 9}, {9, 1}, {6, 6}};
    uint32_t seed = 100;
    for (ET type : kSparseTypes) {
        for (const auto& shape : shapes) {
            for (size_t count : {size_t{0}, size_t{1}, size_t{5}, size_t{100}}) {
                const NonZeros nz = random_nonzeros(shape, count, type, seed++);
                for (size_t major : {size_t{0}, size_t{1}}) {
                    SCOPED_TRACE(std::string(type_name(type)) + " " + str(shape) + " nnz " +
                                 std::to_string(nz.order.size()) + (major == 0 ? " csr" : " csc"));
                    auto t = make_compressed(type, nz, major);
                    ASSERT_NE(t, nullptr);
                    check_against_reference(*t, nz);
                }
            }
        }
    }
}

TEST(TensorViewSparse, CsrSpecExample) {
    // csr.md § Example, and csc.md's storage of the same matrix.
    auto t = sized(TensorDescriptor{.element_type = ET::kFloat32, .shape = {4, 5}, .layout = CsrLayout{5}, .buffers = {}});
    ASSERT_NE(t, nullptr);
    const float vals[5] = {1, 2, 3, 4, 5};
    std::memcpy(t->bufs[0].data(), vals, 20);
    t->bufs[1] = u64s({0, 3, 2, 1, 4});
    t->bufs[2] = u64s({0, 2, 3, 5, 5});
    auto v = t->view();
    ASSERT_TRUE(v.ok()) << v.error().to_string();
    const std::vector<float> dense = {1, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 5, 0, 0, 0, 0, 0};
    Bytes want(80);
    std::memcpy(want.data(), dense.data(), 80);
    EXPECT_EQ(*v->materialize(), want);

    auto c = sized(TensorDescriptor{.element_type = ET::kFloat32, .shape = {4, 5}, .layout = CscLayout{5}, .buffers = {}});
    ASSERT_NE(c, nullptr);
    const float cvals[5] = {1, 4, 3, 2, 5};
    std::memcpy(c->bufs[0].data(), cvals, 20);
    c->bufs[1] = u64s({0, 2, 1, 0, 2});
    c->bufs[2] = u64s({0, 1, 2, 3, 4, 5});
    auto cv = c->view();
    ASSERT_TRUE(cv.ok()) << cv.error().to_string();
    EXPECT_EQ(*cv->materialize(), want);
    EXPECT_EQ(*cv->read_double(Index{2, 4}), 5.0);
}

TEST(TensorViewSparse, CsfEveryModeOrder) {
    const std::vector<std::vector<uint64_t>> shapes = {{2, 3, 4}, {3, 1, 4}, {2, 3, 2, 3}};
    uint32_t seed = 500;
    for (ET type : kSparseTypes) {
        for (const auto& shape : shapes) {
            std::vector<uint32_t> mode(shape.size());
            std::iota(mode.begin(), mode.end(), 0U);
            for (size_t count : {size_t{0}, size_t{1}, size_t{6}, size_t{1000}}) {
                const NonZeros nz = random_nonzeros(shape, count, type, seed++);
                do {
                    SCOPED_TRACE(std::string(type_name(type)) + " " + str(shape) + " nnz " +
                                 std::to_string(nz.order.size()) + " mode_order " + ::testing::PrintToString(mode));
                    auto t = make_csf(type, nz, mode);
                    ASSERT_NE(t, nullptr);
                    check_against_reference(*t, nz);
                } while (std::next_permutation(mode.begin(), mode.end()));
            }
        }
    }
}

TEST(TensorViewSparse, CsfSpecExample) {
    // csf.md § Example: lookup of (1, 1, 2) gives values[3] = 4.0.
    auto t = sized(TensorDescriptor{.element_type = ET::kFloat32, .shape = {2, 3, 4}, .layout = CsfLayout{4, {0, 1, 2}}, .buffers = {}},
                   std::vector<uint64_t>{16, 24, 24, 32});
    ASSERT_NE(t, nullptr);
    const float vals[4] = {1, 2, 3, 4};
    std::memcpy(t->bufs[0].data(), vals, 16);
    t->bufs[1] = u64s({0, 2});
    t->bufs[2] = u64s({0, 1});
    t->bufs[3] = u64s({0, 2, 3});
    t->bufs[4] = u64s({0, 2, 1});
    t->bufs[5] = u64s({0, 1, 2, 4});
    t->bufs[6] = u64s({1, 3, 0, 2});
    auto v = t->view();
    ASSERT_TRUE(v.ok()) << v.error().to_string();
    EXPECT_EQ(*v->locate(Index{1, 1, 2}), (ElementLocation{true, 0, 12, 0}));
    EXPECT_EQ(*v->read_double(Index{0, 2, 3}), 2.0);
    EXPECT_EQ(*v->read_double(Index{0, 2, 2}), 0.0);
}

// ---------------------------------------------------------------------------
// Corrupt index structures

void expect_invalid_data(const Tensor& t, const Index& probe) {
    auto v = t.view();
    ASSERT_TRUE(v.ok()) << v.error().to_string();
    auto m = v->materialize();
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.error().code(), ErrorCode::kInvalidData) << m.error().to_string();
    auto loc = v->locate(probe);
    ASSERT_FALSE(loc.ok());
    EXPECT_EQ(loc.error().code(), ErrorCode::kInvalidData) << loc.error().to_string();
}

TEST(TensorViewSparse, CorruptCsrRowPointers) {
    const NonZeros nz = random_nonzeros({4, 5}, 8, ET::kFloat32, 7);
    {
        auto t = make_compressed(ET::kFloat32, nz, 0);
        put_u64(t->bufs[2], 2, 100);  // row_ptr[2] past nnz
        expect_invalid_data(*t, {1, 0});
    }
    {
        auto t = make_compressed(ET::kFloat32, nz, 0);
        put_u64(t->bufs[2], 1, 7);
        put_u64(t->bufs[2], 2, 3);  // row_ptr decreases
        expect_invalid_data(*t, {1, 0});
        auto v = t->view();
        auto m = v->materialize();
        EXPECT_NE(m.error().message().find("row_ptr[1]"), std::string::npos) << m.error().message();
    }
    {
        auto t = make_compressed(ET::kFloat32, nz, 0);
        put_u64(t->bufs[2], 4, UINT64_MAX);  // row_ptr[nrows]
        expect_invalid_data(*t, {3, 0});
    }
}

TEST(TensorViewSparse, CorruptColumnIndex) {
    const NonZeros nz = random_nonzeros({4, 5}, 20, ET::kInt16, 8);  // dense: every row full
    auto t = make_compressed(ET::kInt16, nz, 0);
    put_u64(t->bufs[1], 3, 99);  // a column outside the shape
    auto v = t->view();
    ASSERT_TRUE(v.ok());
    auto m = v->materialize();
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.error().code(), ErrorCode::kInvalidData);
    EXPECT_NE(m.error().message().find("col_indices[3] = 99"), std::string::npos) << m.error().message();
    // Lookup of other rows still works: a bad entry is reported where it is used.
    EXPECT_TRUE(v->read_bits(Index{2, 2}).ok());
}

TEST(TensorViewSparse, CorruptCooIndices) {
    const NonZeros nz = random_nonzeros({3, 4}, 5, ET::kFloat32, 9);
    auto t = make_coo(ET::kFloat32, nz, false);
    put_u64(t->bufs[1], 2 * 2 + 1, 4);  // entry 2's column == shape[1]
    auto v = t->view();
    ASSERT_TRUE(v.ok());
    auto m = v->materialize();
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.error().code(), ErrorCode::kInvalidData);
    EXPECT_NE(m.error().message().find("indices[5]"), std::string::npos) << m.error().message();
}

TEST(TensorViewSparse, CorruptCsfPointers) {
    const NonZeros nz = random_nonzeros({2, 3, 4}, 10, ET::kFloat32, 10);
    const std::vector<uint32_t> mode = {2, 0, 1};
    {
        auto t = make_csf(ET::kFloat32, nz, mode);
        put_u64(t->bufs[1], 1, 1000);  // pos_0[1] past crd_0
        expect_invalid_data(*t, {0, 0, 0});
    }
    {
        auto t = make_csf(ET::kFloat32, nz, mode);
        // pos_2 decreasing between parents 1 and 2.
        ASSERT_GE(t->bufs[5].size() / 8, 3U);
        put_u64(t->bufs[5], 1, 10);
        put_u64(t->bufs[5], 2, 0);
        auto v = t->view();
        ASSERT_TRUE(v.ok());
        auto m = v->materialize();
        ASSERT_FALSE(m.ok());
        EXPECT_EQ(m.error().code(), ErrorCode::kInvalidData) << m.error().to_string();
    }
    {
        // Truncated inner pos array: the lookup reads past it.
        NonZeros one = random_nonzeros({2, 3, 4}, 24, ET::kFloat32, 11);
        auto t = make_csf(ET::kFloat32, one, {0, 1, 2});
        t->bufs[3].resize(16);  // pos_1 needs 3 entries
        t->d.buffers[3].byte_size = 16;
        expect_invalid_data(*t, {1, 2, 3});
    }
}

TEST(TensorViewSparse, ViewIsAValue) {
    // The view is a value: copies keep working and see the same bytes.
    const NonZeros nz = random_nonzeros({3, 3}, 4, ET::kFloat32, 12);
    auto t = make_coo(ET::kFloat32, nz, true);
    auto v = t->view();
    ASSERT_TRUE(v.ok());
    TensorView copy = *v;
    EXPECT_EQ(*copy.materialize(), *v->materialize());
}

}  // namespace
