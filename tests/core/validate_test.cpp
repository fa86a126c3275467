// SPDX-License-Identifier: Apache-2.0
// validate_data (validate.hpp): every data-dependent rule of the sparse and
// paged layouts, the quantization parameter values and the element bytes has
// a rejection test that checks the position named in the message, and valid
// data passes. Layout examples are the ones in layouts/*.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "descriptor_test_support.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/element_convert.hpp"
#include "hurray/core/tensor_view.hpp"
#include "hurray/core/validate.hpp"
#include "le_bytes.hpp"

namespace {

using namespace hurray;            // NOLINT(google-build-using-namespace): test brevity
using namespace hurray_desc_test;  // NOLINT(google-build-using-namespace)
using E = ErrorCode;

const ValidateOptions kPermissive{.strict = false};

// ---------------------------------------------------------------------------
// Byte builders (little-endian).

template <typename T>
void append_le(Bytes& b, T v) {
    for (size_t i = 0; i < sizeof(T); ++i) {
        b.push_back(static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i)));
    }
}
Bytes u64s(std::initializer_list<uint64_t> v) {
    Bytes b;
    for (uint64_t x : v) {
        append_le(b, x);
    }
    return b;
}
Bytes u64v(const std::vector<uint64_t>& v) {
    Bytes b;
    for (uint64_t x : v) {
        append_le(b, x);
    }
    return b;
}
Bytes u32s(std::initializer_list<uint32_t> v) {
    Bytes b;
    for (uint32_t x : v) {
        append_le(b, x);
    }
    return b;
}
Bytes i32s(std::initializer_list<int32_t> v) {
    Bytes b;
    for (int32_t x : v) {
        append_le(b, static_cast<uint32_t>(x));
    }
    return b;
}
using hurray_test::f32s;
Bytes u16s(std::initializer_list<uint16_t> v) {
    Bytes b;
    for (uint16_t x : v) {
        append_le(b, x);
    }
    return b;
}
Bytes zeros(size_t n) { return Bytes(n, 0); }
Bytes concat(Bytes a, const Bytes& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// ---------------------------------------------------------------------------
// A descriptor with its data. The buffer table is sized from the data; the
// descriptor must pass check_descriptor (so each test exercises data rules).

struct Tensor {
    TensorDescriptor d;
    std::vector<Bytes> data;

    Status validate(const ValidateOptions& o = {}) const {
        std::vector<std::span<const uint8_t>> spans;
        for (const Bytes& b : data) {
            spans.emplace_back(b);
        }
        return validate_data(d, spans, o);
    }
};

Tensor tensor(ElementType t, Shape shape, LayoutDescriptor layout, std::vector<Bytes> data) {
    Tensor x;
    x.d.element_type = t;
    x.d.shape = std::move(shape);
    x.d.layout = std::move(layout);
    for (const Bytes& b : data) {
        x.d.buffers.push_back(buf(b.size()));
    }
    x.data = std::move(data);
    return x;
}

/// The descriptor is valid on its own (so a failure is a data failure).
::testing::AssertionResult DescriptorValid(const Tensor& t) {
    auto s = check_descriptor(t.d);
    if (!s.ok()) {
        return ::testing::AssertionFailure() << "check_descriptor: " << s.error().to_string();
    }
    return ::testing::AssertionSuccess();
}

/// Fails with kInvalidData, no descriptor offset, and a message containing every fragment.
::testing::AssertionResult InvalidData(const Status& s, std::initializer_list<std::string> fragments) {
    if (s.ok()) {
        return ::testing::AssertionFailure() << "accepted; expected invalid_data";
    }
    const Error& e = s.error();
    if (e.code() != E::kInvalidData || e.has_offset()) {
        return ::testing::AssertionFailure() << "got \"" << e.to_string() << "\"; expected invalid_data without offset";
    }
    for (const std::string& f : fragments) {
        if (e.message().find(f) == std::string::npos) {
            return ::testing::AssertionFailure() << "message \"" << e.message() << "\" lacks \"" << f << "\"";
        }
    }
    return ::testing::AssertionSuccess() << e.to_string();
}

::testing::AssertionResult Valid(const Status& s) {
    if (!s.ok()) {
        return ::testing::AssertionFailure() << "rejected: " << s.error().to_string();
    }
    return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------------------
// COO (layouts/coo.md)

// The example of coo.md: [4, 4] float32, (0,1) (2,0) (3,3), sorted.
Tensor coo_example(std::vector<uint64_t> indices, bool sorted = true) {
    const uint64_t nnz = indices.size() / 2;
    Bytes values(nnz * 4, 0);
    return tensor(ElementType::kFloat32, {4, 4}, CooLayout{nnz, sorted}, {values, u64v(indices)});
}

TEST(ValidateCoo, SpecExamplePasses) {
    const Tensor t = coo_example({0, 1, 2, 0, 3, 3});
    ASSERT_TRUE(DescriptorValid(t));
    EXPECT_TRUE(Valid(t.validate()));
    EXPECT_TRUE(Valid(coo_example({3, 3, 0, 1, 2, 0}, false).validate()));
    EXPECT_TRUE(Valid(coo_example({}, true).validate()));
    EXPECT_TRUE(Valid(coo_example({}, false).validate()));
}

// (1) Indices in range: the first offending coordinate, in entry order.
TEST(ValidateCoo, RejectsCoordinateOutOfRange) {
    const Tensor t = coo_example({0, 1, 2, 4, 9, 0});
    ASSERT_TRUE(DescriptorValid(t));
    EXPECT_TRUE(InvalidData(t.validate(), {"coo.indices (buffer 1) entry 3 at byte 24",
                                           "non-zero 1 coordinate 1 = 4", "shape[1] = 4"}));
    EXPECT_TRUE(InvalidData(coo_example({0, 1, 2, 0, 4, 0}, false).validate(),
                            {"entry 4 at byte 32", "non-zero 2 coordinate 0 = 4", "shape[0] = 4"}));
    // Permissive mode may skip (1) and (2).
    EXPECT_TRUE(Valid(t.validate(kPermissive)));
}

// (3) is_sorted: strictly increasing lexicographic order.
TEST(ValidateCoo, RejectsSortedOutOfOrder) {
    const Tensor t = coo_example({0, 1, 2, 0, 1, 3});
    EXPECT_TRUE(InvalidData(t.validate(), {"coo.indices (buffer 1) entry 4 at byte 32", "non-zero 2 (1, 3)",
                                           "sorts before non-zero 1 (2, 0)", "lexicographic"}));
    // Dimension 0 major: (0, 3) then (1, 0) is in order.
    EXPECT_TRUE(Valid(coo_example({0, 3, 1, 0}).validate()));
    EXPECT_TRUE(Valid(t.validate(kPermissive)));
}

// (2) + (3): a sorted run with a tie is a duplicate.
TEST(ValidateCoo, RejectsSortedDuplicate) {
    const Tensor t = coo_example({0, 1, 2, 2, 2, 2});
    EXPECT_TRUE(InvalidData(t.validate(), {"entry 4 at byte 32", "non-zero 2 (2, 2) repeats the coordinates of "
                                                                  "non-zero 1"}));
}

// (2) Unsorted duplicates: the repeat whose second occurrence comes first.
TEST(ValidateCoo, RejectsUnsortedDuplicate) {
    const Tensor t = coo_example({3, 3, 0, 1, 2, 0, 0, 1, 3, 3}, false);
    ASSERT_TRUE(DescriptorValid(t));
    EXPECT_TRUE(InvalidData(t.validate(), {"coo.indices (buffer 1) entry 6 at byte 48",
                                           "non-zero 3 repeats the coordinates (0, 1) of non-zero 1"}));
    EXPECT_TRUE(Valid(t.validate(kPermissive)));
}

// Many unsorted rank-3 entries: unique passes, one planted duplicate is found.
TEST(ValidateCoo, FindsDuplicateAmongManyUnsortedEntries) {
    std::vector<uint64_t> idx;
    for (uint64_t i = 0; i < 16; ++i) {
        for (uint64_t j = 0; j < 16; ++j) {
            for (uint64_t k = 0; k < 16; k += 2) {
                idx.insert(idx.end(), {i, j, k});
            }
        }
    }
    std::vector<size_t> perm(idx.size() / 3);
    std::iota(perm.begin(), perm.end(), size_t{0});
    std::shuffle(perm.begin(), perm.end(), std::mt19937(7));
    std::vector<uint64_t> shuffled;
    for (size_t p : perm) {
        shuffled.insert(shuffled.end(), idx.begin() + static_cast<std::ptrdiff_t>(3 * p),
                        idx.begin() + static_cast<std::ptrdiff_t>(3 * p + 3));
    }
    const uint64_t nnz = shuffled.size() / 3;
    Tensor t = tensor(ElementType::kInt8, {16, 16, 16}, CooLayout{nnz, false}, {zeros(nnz), u64v(shuffled)});
    ASSERT_TRUE(DescriptorValid(t));
    EXPECT_TRUE(Valid(t.validate()));
    // Entry 1500 gets the coordinates of entry 20.
    for (int k = 0; k < 3; ++k) {
        shuffled[1500 * 3 + k] = shuffled[20 * 3 + k];
    }
    t.data[1] = u64v(shuffled);
    EXPECT_TRUE(InvalidData(t.validate(), {"entry 4500 at byte 36000", "non-zero 1500 repeats", "of non-zero 20"}));
}

// ---------------------------------------------------------------------------
// CSR / CSC (layouts/csr.md, csc.md)

// The example of csr.md: [4, 5], 5 non-zeros.
Tensor csr_example(std::vector<uint64_t> col, std::vector<uint64_t> row_ptr) {
    const uint64_t nnz = col.size();
    return tensor(ElementType::kFloat32, {4, 5}, CsrLayout{nnz}, {zeros(nnz * 4), u64v(col), u64v(row_ptr)});
}
// The example of csc.md: the same matrix.
Tensor csc_example(std::vector<uint64_t> row, std::vector<uint64_t> col_ptr) {
    const uint64_t nnz = row.size();
    return tensor(ElementType::kFloat32, {4, 5}, CscLayout{nnz}, {zeros(nnz * 4), u64v(row), u64v(col_ptr)});
}

TEST(ValidateCompressed, SpecExamplesPass) {
    const Tensor csr = csr_example({0, 3, 2, 1, 4}, {0, 2, 3, 5, 5});
    ASSERT_TRUE(DescriptorValid(csr));
    EXPECT_TRUE(Valid(csr.validate()));
    const Tensor csc = csc_example({0, 2, 1, 0, 2}, {0, 1, 2, 3, 4, 5});
    ASSERT_TRUE(DescriptorValid(csc));
    EXPECT_TRUE(Valid(csc.validate()));
    EXPECT_TRUE(Valid(csr_example({}, {0, 0, 0, 0, 0}).validate()));
}

// (1) row_ptr[0] = 0.
TEST(ValidateCompressed, RejectsPointerNotStartingAtZero) {
    const Tensor t = csr_example({0, 3, 2, 1, 4}, {1, 2, 3, 5, 5});
    EXPECT_TRUE(InvalidData(t.validate(), {"csr.row_ptr (buffer 2) entry 0 at byte 0", "must be 0, got 1"}));
    EXPECT_TRUE(Valid(t.validate(kPermissive)));
}

// (2) row_ptr non-decreasing.
TEST(ValidateCompressed, RejectsDecreasingPointer) {
    const Tensor t = csr_example({0, 3, 2, 1, 4}, {0, 3, 2, 5, 5});
    EXPECT_TRUE(InvalidData(t.validate(), {"csr.row_ptr (buffer 2) entry 2 at byte 16",
                                           "2 is less than the previous entry 3"}));
    EXPECT_TRUE(InvalidData(csc_example({0, 2, 1, 0, 2}, {0, 1, 2, 1, 4, 5}).validate(),
                            {"csc.col_ptr (buffer 2) entry 3 at byte 24"}));
}

// (1) row_ptr[nrows] = nnz.
TEST(ValidateCompressed, RejectsLastPointerOtherThanNnz) {
    EXPECT_TRUE(InvalidData(csr_example({0, 3, 2, 1, 4}, {0, 2, 3, 4, 4}).validate(),
                            {"csr.row_ptr (buffer 2) entry 4 at byte 32", "must equal nnz = 5, got 4"}));
    EXPECT_TRUE(InvalidData(csc_example({0, 2, 1, 0, 2}, {0, 1, 2, 3, 4, 4}).validate(),
                            {"csc.col_ptr (buffer 2) entry 5 at byte 40", "must equal nnz = 5, got 4"}));
}

// (4) Indices within the shape.
TEST(ValidateCompressed, RejectsIndexOutOfRange) {
    EXPECT_TRUE(InvalidData(csr_example({0, 3, 2, 1, 5}, {0, 2, 3, 5, 5}).validate(),
                            {"csr.col_indices (buffer 1) entry 4 at byte 32", "column 5 of row 2",
                             "not below shape[1] = 5"}));
    EXPECT_TRUE(InvalidData(csc_example({0, 2, 1, 4, 2}, {0, 1, 2, 3, 4, 5}).validate(),
                            {"csc.row_indices (buffer 1) entry 3 at byte 24", "row 4 of column 3",
                             "not below shape[0] = 4"}));
}

// (3) Strictly increasing within a row / column (no duplicates).
TEST(ValidateCompressed, RejectsUnsortedOrDuplicateIndices) {
    EXPECT_TRUE(InvalidData(csr_example({3, 0, 2, 1, 4}, {0, 2, 3, 5, 5}).validate(),
                            {"csr.col_indices (buffer 1) entry 1 at byte 8", "column 0 of row 0",
                             "less than the previous entry 3", "strictly increasing within each row"}));
    EXPECT_TRUE(InvalidData(csr_example({0, 3, 2, 4, 4}, {0, 2, 3, 5, 5}).validate(),
                            {"entry 4 at byte 32", "column 4 of row 2 repeats the previous entry"}));
    EXPECT_TRUE(InvalidData(csc_example({2, 0, 1}, {0, 2, 2, 3, 3, 3}).validate(),
                            {"csc.row_indices (buffer 1) entry 1 at byte 8", "row 0 of column 0",
                             "within each column"}));
    // Order is per row: a smaller column in the next row is fine.
    EXPECT_TRUE(Valid(csr_example({3, 4, 0}, {0, 2, 3, 3, 3}).validate()));
}

// data-model.md § Dynamic Dimensions: data is accessed only once every dynamic
// dimension is resolved, so a view (and the data checks) refuse it.
TEST(ValidateCompressed, DynamicDimensionsMustBeResolvedFirst) {
    Tensor t = tensor(ElementType::kFloat32, {kDynamicDim, 5}, CsrLayout{2}, {zeros(8), u64s({4, 1}), u64s({0, 1, 2})});
    ASSERT_TRUE(DescriptorValid(t));
    auto s = t.validate();
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code(), E::kInvalidShape) << s.error().to_string();
    t.d.shape[0] = 2;  // resolved
    EXPECT_TRUE(Valid(t.validate()));
    t.data[2] = u64s({0, 2, 1});
    EXPECT_TRUE(InvalidData(t.validate(), {"csr.row_ptr (buffer 2) entry 2 at byte 16"}));
}

// ---------------------------------------------------------------------------
// CSF (layouts/csf.md)

struct CsfData {
    std::vector<std::vector<uint64_t>> pos;
    std::vector<std::vector<uint64_t>> crd;
};

Tensor csf(Shape shape, std::vector<uint32_t> mode_order, uint64_t nnz, const CsfData& levels) {
    std::vector<Bytes> data = {zeros(nnz * 4)};
    for (size_t l = 0; l < levels.pos.size(); ++l) {
        data.push_back(u64v(levels.pos[l]));
        data.push_back(u64v(levels.crd[l]));
    }
    return tensor(ElementType::kFloat32, std::move(shape), CsfLayout{nnz, std::move(mode_order)}, std::move(data));
}

// The example of csf.md: [2, 3, 4], identity order, 4 non-zeros.
CsfData csf_levels() {
    return {{{0, 2}, {0, 2, 3}, {0, 1, 2, 4}}, {{0, 1}, {0, 2, 1}, {1, 3, 0, 2}}};
}

TEST(ValidateCsf, SpecExamplePasses) {
    const Tensor t = csf({2, 3, 4}, {0, 1, 2}, 4, csf_levels());
    ASSERT_TRUE(DescriptorValid(t));
    EXPECT_TRUE(Valid(t.validate()));
}

// A non-identity mode_order bounds each level by shape[mode_order[L]].
TEST(ValidateCsf, HonoursModeOrder) {
    // Same non-zeros stored with mode_order [2, 0, 1]: level 0 = k (bound 4),
    // level 1 = i (bound 2), level 2 = j (bound 3).
    // (0,0,1) (0,2,3) (1,1,0) (1,1,2) -> by k: k=0:(1,1) k=1:(0,0) k=2:(1,1) k=3:(0,2)
    const CsfData lv{{{0, 4}, {0, 1, 2, 3, 4}, {0, 1, 2, 3, 4}}, {{0, 1, 2, 3}, {1, 0, 1, 0}, {1, 0, 1, 2}}};
    const Tensor t = csf({2, 3, 4}, {2, 0, 1}, 4, lv);
    ASSERT_TRUE(DescriptorValid(t));
    EXPECT_TRUE(Valid(t.validate()));
    // k = 3 is valid at level 0 (bound 4) but would not be under identity order (bound 2).
    EXPECT_TRUE(InvalidData(csf({2, 3, 4}, {0, 1, 2}, 4, lv).validate(),
                            {"csf.crd_0 (buffer 2) entry 2 at byte 16", "coordinate 2",
                             "shape[mode_order[0] = 0] = 2"}));
}

// The empty tensor: pos_0 = [0, 0], every crd empty, pos_L = [0] below.
TEST(ValidateCsf, EmptyTensor) {
    const Tensor t = csf({2, 3, 4}, {0, 1, 2}, 0, {{{0, 0}, {0}, {0}}, {{}, {}, {}}});
    ASSERT_TRUE(DescriptorValid(t));
    EXPECT_TRUE(Valid(t.validate()));
    // nnz = 0 with a stored level-0 node: crd_0 must be empty.
    const Tensor u = csf({2, 3, 4}, {0, 1, 2}, 0, {{{0, 1}, {0, 0}, {0}}, {{1}, {}, {}}});
    ASSERT_TRUE(DescriptorValid(u));
    EXPECT_TRUE(InvalidData(u.validate(), {"csf.crd_0 (buffer 2)", "empty tensor (nnz = 0)", "holds 1"}));
    EXPECT_TRUE(Valid(u.validate(kPermissive)));
}

// Buffer sizes: n_L from crd_L, pos_L = n_{L-1} + 1 entries, leaf = nnz. Both modes.
TEST(ValidateCsf, RejectsBufferSizesInconsistentWithNodeCounts) {
    CsfData lv = csf_levels();
    lv.pos[1] = {0, 2, 3, 3};  // 4 entries, level 0 has 2 nodes
    Tensor t = csf({2, 3, 4}, {0, 1, 2}, 4, lv);
    ASSERT_TRUE(DescriptorValid(t));
    EXPECT_TRUE(InvalidData(t.validate(), {"csf.pos_1 (buffer 3): holds 32 bytes", "2 parent nodes",
                                           "needs 3 uint64 entries"}));
    EXPECT_TRUE(InvalidData(t.validate(kPermissive), {"csf.pos_1 (buffer 3)"}));

    t = csf({2, 3, 4}, {0, 1, 2}, 4, csf_levels());
    t.data[4].resize(20);  // crd_1: 2.5 coordinates
    t.d.buffers[4].byte_size = 20;
    ASSERT_TRUE(DescriptorValid(t));
    EXPECT_TRUE(InvalidData(t.validate(), {"csf.crd_1 (buffer 4): 20 bytes is not a whole number"}));

    t = csf({2, 3, 4}, {0, 1, 2}, 4, csf_levels());
    t.data[6] = u64s({1, 3, 0, 2, 3});  // leaf holds 5, nnz is 4
    t.d.buffers[6].byte_size = 40;
    ASSERT_TRUE(DescriptorValid(t));
    EXPECT_TRUE(InvalidData(t.validate(), {"csf.crd_2 (buffer 6): the leaf level holds 5 coordinates, nnz is 4"}));
}

// (1) pos_L[0] = 0.
TEST(ValidateCsf, RejectsPosNotStartingAtZero) {
    CsfData lv = csf_levels();
    lv.pos[2] = {1, 1, 2, 4};
    const Tensor t = csf({2, 3, 4}, {0, 1, 2}, 4, lv);
    EXPECT_TRUE(InvalidData(t.validate(), {"csf.pos_2 (buffer 5) entry 0 at byte 0", "must be 0, got 1"}));
    EXPECT_TRUE(Valid(t.validate(kPermissive)));
}

// (2) pos_L non-decreasing.
TEST(ValidateCsf, RejectsDecreasingPos) {
    CsfData lv = csf_levels();
    lv.pos[1] = {0, 3, 2};  // level 1 keeps its 3 nodes; pos_2 its 4 entries
    EXPECT_TRUE(InvalidData(csf({2, 3, 4}, {0, 1, 2}, 4, lv).validate(),
                            {"csf.pos_1 (buffer 3) entry 2 at byte 16", "2 is less than the previous entry 3"}));
}

// (3) the terminal pos entry equals the level's node count.
TEST(ValidateCsf, RejectsTerminalPosOtherThanNodeCount) {
    CsfData lv = csf_levels();
    lv.pos[0] = {0, 1};
    EXPECT_TRUE(InvalidData(csf({2, 3, 4}, {0, 1, 2}, 4, lv).validate(),
                            {"csf.pos_0 (buffer 1) entry 1 at byte 8", "must equal the 2 coordinates of csf.crd_0",
                             "got 1"}));
    lv = csf_levels();
    lv.pos[2] = {0, 1, 2, 3};
    EXPECT_TRUE(InvalidData(csf({2, 3, 4}, {0, 1, 2}, 4, lv).validate(),
                            {"csf.pos_2 (buffer 5) entry 3 at byte 24", "4 coordinates of csf.crd_2"}));
}

// (4) siblings strictly increasing within each parent slice.
TEST(ValidateCsf, RejectsUnsortedOrDuplicateSiblings) {
    CsfData lv = csf_levels();
    lv.crd[1] = {2, 0, 1};
    EXPECT_TRUE(InvalidData(csf({2, 3, 4}, {0, 1, 2}, 4, lv).validate(),
                            {"csf.crd_1 (buffer 4) entry 1 at byte 8", "coordinate 0 is less than its previous sibling 2",
                             "under parent 0"}));
    lv = csf_levels();
    lv.crd[2] = {1, 3, 2, 2};
    EXPECT_TRUE(InvalidData(csf({2, 3, 4}, {0, 1, 2}, 4, lv).validate(),
                            {"csf.crd_2 (buffer 6) entry 3 at byte 24", "repeats its previous sibling",
                             "under parent 2"}));
    // Across parents the order restarts: crd_2 = [3 | 0 | 0, 2] is fine.
    lv = csf_levels();
    lv.crd[2] = {3, 0, 0, 2};
    EXPECT_TRUE(Valid(csf({2, 3, 4}, {0, 1, 2}, 4, lv).validate()));
}

// (5) coordinates within shape[mode_order[L]].
TEST(ValidateCsf, RejectsCoordinateOutOfRange) {
    CsfData lv = csf_levels();
    lv.crd[2] = {1, 4, 0, 2};
    EXPECT_TRUE(InvalidData(csf({2, 3, 4}, {0, 1, 2}, 4, lv).validate(),
                            {"csf.crd_2 (buffer 6) entry 1 at byte 8", "coordinate 4",
                             "shape[mode_order[2] = 2] = 4"}));
}

// ---------------------------------------------------------------------------
// Block-paged (layouts/block-paged.md)

// The example of block-paged.md: 2 sequences, page_size 4, 5 pages, [9, 2, 8] float16.
Tensor paged(Bytes table, Bytes seq_ptr, BlockTableIndexType type = BlockTableIndexType::kUInt32,
             uint64_t tokens = 9, uint32_t num_seqs = 2) {
    BlockPagedLayout l;
    l.page_size = 4;
    l.num_pages = 5;
    l.num_seqs = num_seqs;
    l.layer_index = 3;
    l.index_type = type;
    return tensor(ElementType::kFloat16, {tokens, 2, 8}, l, {zeros(5 * 4 * 2 * 8 * 2), table, seq_ptr});
}

TEST(ValidateBlockPaged, SpecExamplePasses) {
    const Tensor t = paged(u32s({0, 1, 0}), u32s({0, 2, 3}));
    ASSERT_TRUE(DescriptorValid(t));
    EXPECT_TRUE(Valid(t.validate()));
    const Tensor w = paged(u64s({0, 1, 0}), u64s({0, 2, 3}), BlockTableIndexType::kUInt64);
    ASSERT_TRUE(DescriptorValid(w));
    EXPECT_TRUE(Valid(w.validate()));
    // Empty batch: no block table entries, seq_ptr = [0], no tokens.
    const Tensor e = paged({}, u32s({0}), BlockTableIndexType::kUInt32, 0, 0);
    ASSERT_TRUE(DescriptorValid(e));
    EXPECT_TRUE(Valid(e.validate()));
}

// The block table is a whole number of entries (both modes).
TEST(ValidateBlockPaged, RejectsPartialBlockTableEntry) {
    const Tensor t = paged(concat(u32s({0, 1}), Bytes{0, 0}), u32s({0, 2, 3}));
    ASSERT_TRUE(DescriptorValid(t));
    EXPECT_TRUE(InvalidData(t.validate(), {"block_paged.block_table (buffer 1): 10 bytes", "uint32 entries"}));
    EXPECT_TRUE(InvalidData(t.validate(kPermissive), {"block_paged.block_table (buffer 1)"}));
    const Tensor w = paged(u32s({0, 1, 0}), u64s({0, 2, 3}), BlockTableIndexType::kUInt64);
    EXPECT_TRUE(InvalidData(w.validate(), {"12 bytes is not a whole number of uint64 entries"}));
}

// (1) seq_ptr[0] = 0.
TEST(ValidateBlockPaged, RejectsSeqPtrNotStartingAtZero) {
    const Tensor t = paged(u32s({0, 1, 0}), u32s({1, 2, 3}));
    EXPECT_TRUE(InvalidData(t.validate(), {"block_paged.seq_ptr (buffer 2) entry 0 at byte 0", "must be 0, got 1"}));
    EXPECT_TRUE(Valid(t.validate(kPermissive)));
}

// (2) seq_ptr non-decreasing (uint64 entries: byte offsets of 8).
TEST(ValidateBlockPaged, RejectsDecreasingSeqPtr) {
    const Tensor t = paged(u64s({0, 1, 0}), u64s({0, 3, 2, 3}), BlockTableIndexType::kUInt64, 9, 3);
    ASSERT_TRUE(DescriptorValid(t));
    EXPECT_TRUE(InvalidData(t.validate(), {"block_paged.seq_ptr (buffer 2) entry 2 at byte 16",
                                           "2 is less than the previous entry 3"}));
}

// (1) seq_ptr[num_seqs] = number of block table entries.
TEST(ValidateBlockPaged, RejectsLastSeqPtrOtherThanEntryCount) {
    EXPECT_TRUE(InvalidData(paged(u32s({0, 1, 0}), u32s({0, 2, 2})).validate(),
                            {"block_paged.seq_ptr (buffer 2) entry 2 at byte 8", "3 block table entries, got 2"}));
}

// (3) every page id below num_pages.
TEST(ValidateBlockPaged, RejectsPageIdOutOfRange) {
    EXPECT_TRUE(InvalidData(paged(u32s({0, 5, 0}), u32s({0, 2, 3})).validate(),
                            {"block_paged.block_table (buffer 1) entry 1 at byte 4", "page id 5",
                             "num_pages = 5"}));
    EXPECT_TRUE(InvalidData(
        paged(u64s({0, 1, uint64_t{1} << 40}), u64s({0, 2, 3}), BlockTableIndexType::kUInt64).validate(),
        {"block_paged.block_table (buffer 1) entry 2 at byte 16", "page id 1099511627776"}));
}

// The logical pages must hold shape[0] tokens.
TEST(ValidateBlockPaged, RejectsMoreTokensThanPageSlots) {
    EXPECT_TRUE(Valid(paged(u32s({0, 1, 0}), u32s({0, 2, 3}), BlockTableIndexType::kUInt32, 12).validate()));
    EXPECT_TRUE(InvalidData(paged(u32s({0, 1, 0}), u32s({0, 2, 3}), BlockTableIndexType::kUInt32, 13).validate(),
                            {"3 logical pages of 4 slots hold 12 tokens, fewer than shape[0] = 13"}));
}

// ---------------------------------------------------------------------------
// Quantization parameter values (quantization/*.md)

Tensor per_channel(Bytes scales, std::optional<Bytes> zero_points, ElementType storage = ElementType::kInt8) {
    Tensor t = tensor(storage, {3, 2}, RowMajorLayout{}, {zeros(6 * bit_width(storage) / 8), scales});
    PerChannelAffine q;
    q.axis = 0;
    q.scale_buffer_index = 1;
    if (zero_points) {
        q.zero_point_buffer_index = 2;
        t.d.buffers.push_back(buf(zero_points->size()));
        t.data.push_back(*zero_points);
    }
    t.d.quantization = QuantizationDescriptor{q, {}};
    return t;
}

TEST(ValidateQuantization, PerChannelValidPasses) {
    const Tensor t = per_channel(f32s({0.5F, -2.0F, 1e-30F}), i32s({-128, 0, 127}));
    ASSERT_TRUE(DescriptorValid(t));
    EXPECT_TRUE(Valid(t.validate()));
    EXPECT_TRUE(Valid(per_channel(f32s({1, 2, 3}), std::nullopt).validate()));
}

// Scales finite and non-zero; rejected in permissive mode too.
TEST(ValidateQuantization, PerChannelRejectsBadScales) {
    const Tensor zero = per_channel(f32s({0.5F, 0.0F, 1.0F}), std::nullopt);
    EXPECT_TRUE(InvalidData(zero.validate(), {"per_channel_affine.scale (buffer 1) entry 1 at byte 4",
                                              "0 is not a finite, non-zero float32 scale"}));
    EXPECT_TRUE(InvalidData(zero.validate(kPermissive), {"entry 1 at byte 4"}));
    EXPECT_TRUE(InvalidData(per_channel(f32s({0.5F, 1.0F, kNaN}), std::nullopt).validate(),
                            {"entry 2 at byte 8", "NaN"}));
    EXPECT_TRUE(InvalidData(per_channel(f32s({-kInf, 1.0F, 1.0F}), std::nullopt).validate(),
                            {"entry 0 at byte 0", "-inf"}));
    EXPECT_TRUE(InvalidData(per_channel(f32s({-0.0F, 1.0F, 1.0F}), std::nullopt).validate(), {"entry 0"}));
}

// Zero points within the storage type's range.
TEST(ValidateQuantization, PerChannelRejectsZeroPointOutOfRange) {
    EXPECT_TRUE(InvalidData(per_channel(f32s({1, 1, 1}), i32s({0, 128, 0})).validate(),
                            {"per_channel_affine.zero_point (buffer 2) entry 1 at byte 4",
                             "128 is outside the range [-128, 127] of the storage type int8"}));
    EXPECT_TRUE(InvalidData(per_channel(f32s({1, 1, 1}), i32s({0, 0, -1}), ElementType::kUInt8).validate(),
                            {"entry 2 at byte 8", "[0, 255]", "uint8"}));
    EXPECT_TRUE(Valid(per_channel(f32s({1, 1, 1}), i32s({0, 65535, 3}), ElementType::kUInt16).validate()));
    EXPECT_TRUE(Valid(per_channel(f32s({1, 1, 1}), i32s({INT32_MIN, INT32_MAX, 0}), ElementType::kInt32).validate()));
    EXPECT_TRUE(InvalidData(per_channel(f32s({1, 1, 1}), i32s({-1, 0, 0}), ElementType::kUInt32).validate(),
                            {"entry 0 at byte 0", "[0, 4294967295]"}));
}

// Per-block affine int4 [2, 8], blocks of 4 along axis 1: 4 blocks.
Tensor per_block(ElementType scale_type, Bytes scales, std::optional<Bytes> zero_points, bool shared = false) {
    Tensor t = tensor(ElementType::kInt4, {2, 8}, RowMajorLayout{}, {zeros(8), scales});
    PerBlockAffine q;
    q.axis = 1;
    q.block_size = 4;
    q.scale_buffer_index = 1;
    q.scale_type = scale_type;
    if (zero_points && shared) {
        q.zero_point_buffer_index = 1;
        t.data[1] = concat(scales, *zero_points);
        t.d.buffers[1] = buf(t.data[1].size());
    } else if (zero_points) {
        q.zero_point_buffer_index = 2;
        t.d.buffers.push_back(buf(zero_points->size()));
        t.data.push_back(*zero_points);
    }
    t.d.quantization = QuantizationDescriptor{q, {}};
    return t;
}

TEST(ValidateQuantization, PerBlockScalesInTheirType) {
    const uint16_t one = float_to_float16(1.0F);
    const Tensor ok = per_block(ElementType::kFloat16, u16s({one, one, one, one}), i32s({-8, 7, 0, 1}));
    ASSERT_TRUE(DescriptorValid(ok));
    EXPECT_TRUE(Valid(ok.validate()));
    // float16 infinity (0x7C00), at entry 3.
    EXPECT_TRUE(InvalidData(per_block(ElementType::kFloat16, u16s({one, one, one, 0x7C00}), std::nullopt).validate(),
                            {"per_block_affine.scale (buffer 1) entry 3 at byte 6", "inf", "float16"}));
    // bfloat16 NaN (0x7FC0), entry 0; negative zero (0x8000) is zero.
    EXPECT_TRUE(InvalidData(per_block(ElementType::kBFloat16, u16s({0x7FC0, one, one, one}), std::nullopt).validate(),
                            {"entry 0 at byte 0", "NaN", "bfloat16"}));
    EXPECT_TRUE(InvalidData(per_block(ElementType::kBFloat16, u16s({0x3F80, 0x8000, 0x3F80, 0x3F80}), std::nullopt)
                                .validate(),
                            {"entry 1 at byte 2"}));
    // A float16 subnormal is a fine scale.
    EXPECT_TRUE(Valid(per_block(ElementType::kFloat16, u16s({1, one, one, one}), std::nullopt).validate()));
    EXPECT_TRUE(InvalidData(per_block(ElementType::kFloat32, f32s({1, 2, 0, 4}), std::nullopt).validate(),
                            {"entry 2 at byte 8", "float32"}));
    EXPECT_TRUE(InvalidData(per_block(ElementType::kFloat32, f32s({1, 2, 3, 4}), i32s({0, 0, 0, 8})).validate(),
                            {"per_block_affine.zero_point (buffer 2) entry 3 at byte 12", "[-8, 7]", "int4"}));
}

// One buffer for scales and zero points: [scales | zero points].
TEST(ValidateQuantization, SharedScaleAndZeroPointBuffer) {
    const Tensor ok = per_block(ElementType::kFloat32, f32s({1, 2, 3, 4}), i32s({0, 1, 2, 3}), true);
    ASSERT_TRUE(DescriptorValid(ok));
    EXPECT_TRUE(Valid(ok.validate()));
    EXPECT_TRUE(InvalidData(per_block(ElementType::kFloat32, f32s({1, 2, 3, 4}), i32s({0, 9, 2, 3}), true).validate(),
                            {"per_block_affine.zero_point (buffer 1) entry 1 at byte 20", "9 is outside"}));
    EXPECT_TRUE(InvalidData(per_block(ElementType::kFloat32, f32s({1, kInf, 3, 4}), i32s({0, 1, 2, 3}), true)
                                .validate(),
                            {"per_block_affine.scale (buffer 1) entry 1 at byte 4"}));
}

// NF4: absmax finite and non-negative.
TEST(ValidateQuantization, Nf4Absmax) {
    auto nf4 = [](Bytes absmax) {
        Tensor t = tensor(ElementType::kUInt4, {16}, RowMajorLayout{}, {zeros(8), std::move(absmax)});
        t.d.quantization = QuantizationDescriptor{Nf4Quantization{0, 8, 1}, {}};
        return t;
    };
    const Tensor ok = nf4(f32s({0.0F, 3.5F}));
    ASSERT_TRUE(DescriptorValid(ok));
    EXPECT_TRUE(Valid(ok.validate()));
    EXPECT_TRUE(InvalidData(nf4(f32s({1.0F, -0.5F})).validate(),
                            {"nf4.absmax (buffer 1) entry 1 at byte 4", "-0.5 is not a finite, non-negative float32"}));
    EXPECT_TRUE(InvalidData(nf4(f32s({kInf, 1.0F})).validate(kPermissive), {"entry 0 at byte 0", "inf"}));
    EXPECT_TRUE(InvalidData(nf4(f32s({1.0F, kNaN})).validate(), {"entry 1 at byte 4", "NaN"}));
}

// MXFP: e8m0 scale bytes never 0x00 or 0xFF.
TEST(ValidateQuantization, MxfpScaleBytes) {
    auto mx = [](Bytes scales) {
        Tensor t = tensor(ElementType::kFloat8E4M3, {2, 32}, RowMajorLayout{}, {zeros(64), std::move(scales)});
        t.d.quantization = QuantizationDescriptor{MxfpQuantization{1, 16, 1}, {}};
        return t;
    };
    const Tensor ok = mx(Bytes{0x01, 0x7F, 0xFE, 0x80});
    ASSERT_TRUE(DescriptorValid(ok));
    EXPECT_TRUE(Valid(ok.validate()));
    EXPECT_TRUE(InvalidData(mx(Bytes{0x7F, 0x7F, 0xFF, 0x7F}).validate(),
                            {"mxfp.scale (buffer 1) entry 2 at byte 2", "float8_e8m0 0xFF is reserved"}));
    EXPECT_TRUE(InvalidData(mx(Bytes{0x00, 0x7F, 0x7F, 0x7F}).validate(kPermissive), {"entry 0 at byte 0", "0x00"}));
}

// Per-block scales of a quantized block-paged tensor are per page slot.
TEST(ValidateQuantization, BlockPagedPerPageSlotScales) {
    BlockPagedLayout l;
    l.page_size = 2;
    l.num_pages = 2;
    l.num_seqs = 1;
    Tensor t = tensor(ElementType::kInt8, {3, 1, 4}, l, {zeros(16), u32s({1, 0}), u32s({0, 2}), f32s({1, 2, 3, 0})});
    t.d.quantization = QuantizationDescriptor{PerBlockAffine{0, 2, 3, std::nullopt, ElementType::kFloat32}, {}};
    ASSERT_TRUE(DescriptorValid(t));
    EXPECT_TRUE(InvalidData(t.validate(), {"per_block_affine.scale (buffer 3) entry 3 at byte 12"}));
    t.data[3] = f32s({1, 2, 3, 4});
    EXPECT_TRUE(Valid(t.validate()));
}

// ---------------------------------------------------------------------------
// Element bytes (element-types.md)

// float8_e8m0 data never holds 0x00 or 0xFF; rejected in permissive mode too.
TEST(ValidateElements, RejectsReservedE8m0Data) {
    Tensor t = tensor(ElementType::kFloat8E8M0, {2, 3}, RowMajorLayout{}, {Bytes{1, 2, 3, 0x7F, 0xFE, 0x80}});
    ASSERT_TRUE(DescriptorValid(t));
    EXPECT_TRUE(Valid(t.validate()));
    t.data[0][3] = 0xFF;
    EXPECT_TRUE(InvalidData(t.validate(), {"data (buffer 0) element [1, 0] at byte 3", "float8_e8m0 0xFF is reserved"}));
    EXPECT_TRUE(InvalidData(t.validate(kPermissive), {"element [1, 0]"}));
    // Column-major: byte 3 is element [1, 1]; byte_offset shifts the bytes.
    t.d.layout = ColumnMajorLayout{};
    EXPECT_TRUE(InvalidData(t.validate(), {"element [1, 1] at byte 3"}));
    t.d.layout = RowMajorLayout{};
    t.d.byte_offset = 1;
    t.data[0] = Bytes{0x00, 1, 2, 3, 4, 0x00, 6};
    t.d.buffers[0] = buf(7);
    ASSERT_TRUE(DescriptorValid(t));
    EXPECT_TRUE(InvalidData(t.validate(), {"element [1, 1] at byte 5", "0x00"}));
}

// Strided e8m0: only addressed bytes count; gaps may hold anything.
TEST(ValidateElements, StridedE8m0ChecksAddressedBytesOnly) {
    // [2, 2] with strides [4, 1]: bytes 0, 1, 4, 5; bytes 2, 3 are gaps.
    Tensor t = tensor(ElementType::kFloat8E8M0, {2, 2}, StridedLayout{{4, 1}}, {Bytes{1, 2, 0x00, 0xFF, 3, 4}});
    ASSERT_TRUE(DescriptorValid(t));
    EXPECT_TRUE(Valid(t.validate()));
    t.data[0][5] = 0xFF;
    EXPECT_TRUE(InvalidData(t.validate(), {"data (buffer 0) element [1, 1] at byte 5"}));
    // Negative strides: element [0, 0] at byte_offset 5, [1, 1] at byte 0.
    t = tensor(ElementType::kFloat8E8M0, {2, 2}, StridedLayout{{-4, -1}}, {Bytes{0x00, 2, 9, 9, 3, 4}});
    t.d.byte_offset = 5;
    ASSERT_TRUE(DescriptorValid(t));
    EXPECT_TRUE(InvalidData(t.validate(), {"element [1, 1] at byte 0"}));
}

// Sparse e8m0 values.
TEST(ValidateElements, RejectsReservedE8m0SparseValues) {
    const Tensor t = tensor(ElementType::kFloat8E8M0, {4, 4}, CooLayout{2, true}, {Bytes{0x7F, 0x00}, u64s({0, 1, 2, 0})});
    ASSERT_TRUE(DescriptorValid(t));
    EXPECT_TRUE(InvalidData(t.validate(), {"coo.values (buffer 0) entry 1 at byte 1", "0x00"}));
}

// Tiled / curve layouts go through TensorView::locate (the addressing change).
TEST(ValidateElements, CurveLayoutE8m0ThroughLocate) {
    const Tensor t = tensor(ElementType::kFloat8E8M0, {2, 2}, MortonLayout{{1, 1}}, {Bytes{1, 2, 0xFF, 4}});
    ASSERT_TRUE(DescriptorValid(t));
    std::vector<std::span<const uint8_t>> spans = {t.data[0]};
    auto view = TensorView::make(t.d, spans);
    ASSERT_TRUE(view.ok()) << view.error().to_string();
    const std::vector<uint64_t> origin = {0, 0};
    auto loc = view->locate(origin);
    ASSERT_TRUE(loc.ok()) << loc.error().to_string();
    // Morton code 2 is element [1, 0] (dimension 0 takes the higher bit).
    EXPECT_TRUE(InvalidData(t.validate(), {"0xFF is reserved"}));
}

// Packing padding bits after the last sub-byte element must be zero (strict only).
TEST(ValidateElements, RejectsNonZeroPaddingBits) {
    // uint4 [3] = 5, 12, 3 -> 0xC5 0x03 (element-types.md example).
    Tensor t = tensor(ElementType::kUInt4, {3}, RowMajorLayout{}, {Bytes{0xC5, 0x03}});
    ASSERT_TRUE(DescriptorValid(t));
    EXPECT_TRUE(Valid(t.validate()));
    t.data[0][1] = 0x13;
    EXPECT_TRUE(InvalidData(t.validate(), {"data (buffer 0) at byte 1", "padding bits after the last of 3 packed uint4",
                                           "got 0x13", "mask 0xF0"}));
    EXPECT_TRUE(Valid(t.validate(kPermissive)));
    // uint2 [3] = 3, 1, 2 -> 0x27; bool [5] -> 0x0D.
    t = tensor(ElementType::kUInt2, {3}, RowMajorLayout{}, {Bytes{0x27}});
    EXPECT_TRUE(Valid(t.validate()));
    t.data[0][0] = 0x67;
    EXPECT_TRUE(InvalidData(t.validate(), {"at byte 0", "mask 0xC0"}));
    t = tensor(ElementType::kBool, {5}, RowMajorLayout{}, {Bytes{0x0D}});
    EXPECT_TRUE(Valid(t.validate()));
    t.data[0][0] = 0x8D;
    EXPECT_TRUE(InvalidData(t.validate(), {"5 packed bool", "mask 0xE0"}));
    // float6_e2m3 [5]: 30 bits used in 6 bytes; byte 3's top 2 bits and bytes 4, 5 are padding.
    t = tensor(ElementType::kFloat6E2M3, {5}, RowMajorLayout{}, {Bytes{0, 0, 0, 0x3F, 0, 0}});
    ASSERT_TRUE(DescriptorValid(t));
    EXPECT_TRUE(Valid(t.validate()));
    t.data[0][5] = 0x01;
    EXPECT_TRUE(InvalidData(t.validate(), {"at byte 5", "5 packed float6_e2m3"}));
    t.data[0][5] = 0;
    t.data[0][3] = 0x7F;
    EXPECT_TRUE(InvalidData(t.validate(), {"at byte 3", "mask 0xC0"}));
    // The run starts at byte_offset; bytes after the tensor's last byte are not padding.
    t = tensor(ElementType::kInt4, {3}, RowMajorLayout{}, {Bytes{0xFF, 0x21, 0x03, 0xFF}});
    t.d.byte_offset = 1;
    ASSERT_TRUE(DescriptorValid(t));
    EXPECT_TRUE(Valid(t.validate()));
    t.data[0][2] = 0x43;
    EXPECT_TRUE(InvalidData(t.validate(), {"at byte 2"}));
    // Sparse values: nnz packed elements.
    t = tensor(ElementType::kInt4, {4, 4}, CooLayout{1, true}, {Bytes{0x17}, u64s({1, 1})});
    ASSERT_TRUE(DescriptorValid(t));
    EXPECT_TRUE(InvalidData(t.validate(), {"coo.values (buffer 0) at byte 0", "1 packed int4"}));
}

// Per-block padding elements are not checked (a reader ignores them), only the bits after the padded run.
TEST(ValidateElements, PerBlockPaddingElementsAreIgnored) {
    // int4 [1, 3], blocks of 2 along axis 1: 4 stored elements (1 padding element), 2 bytes.
    Tensor t = tensor(ElementType::kInt4, {1, 3}, RowMajorLayout{}, {Bytes{0x21, 0x73}, f32s({1, 1})});
    t.d.quantization = QuantizationDescriptor{PerBlockAffine{1, 2, 1, std::nullopt, ElementType::kFloat32}, {}};
    ASSERT_TRUE(DescriptorValid(t));
    EXPECT_TRUE(Valid(t.validate()));
}

// ---------------------------------------------------------------------------
// Entry points

TEST(ValidateData, ViewOverloadAndSpanChecks) {
    const Tensor t = csr_example({0, 3, 2, 1, 4}, {0, 2, 3, 5, 5});
    std::vector<std::span<const uint8_t>> spans = {t.data[0], t.data[1], t.data[2]};
    auto view = TensorView::make(t.d, spans);
    ASSERT_TRUE(view.ok());
    EXPECT_TRUE(Valid(validate_data(*view)));
    // Too few spans: the view refuses before any data is read.
    spans.pop_back();
    auto s = validate_data(t.d, spans);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code(), E::kInvalidArgument);
    // Dense tensors without data rules pass.
    const Tensor dense = tensor(ElementType::kFloat32, {2}, RowMajorLayout{}, {f32s({kNaN, kInf})});
    EXPECT_TRUE(Valid(dense.validate()));
}

// A descriptor that skipped check_descriptor is rejected, never read past.
TEST(ValidateData, NeverReadsPastAnUncheckedDescriptor) {
    // COO nnz 3 with an indices buffer of 2 entries.
    // The view runs the descriptor check first, so each is refused with the
    // descriptor-level error before any data byte is read.
    auto refused = [](const Status& s, E code, const char* fragment) {
        return !s.ok() && s.error().code() == code && s.error().message().find(fragment) != std::string::npos;
    };
    Tensor t = tensor(ElementType::kFloat32, {4, 4}, CooLayout{3, false}, {zeros(12), u64s({0, 1, 2, 0})});
    EXPECT_TRUE(refused(t.validate(), E::kBufferTooSmall, "buffer[1].byte_size: 32 is below the 48 bytes"));
    // CSR with a row pointer shorter than nrows + 1.
    t = tensor(ElementType::kFloat32, {4, 5}, CsrLayout{0}, {Bytes{}, Bytes{}, u64s({0, 0})});
    EXPECT_TRUE(refused(t.validate(), E::kBufferTooSmall, "buffer[2].byte_size: 16 is below the 40 bytes"));
    // CSF with missing buffers.
    t = tensor(ElementType::kFloat32, {2, 2, 2}, CsfLayout{0, {0, 1, 2}}, {Bytes{}});
    EXPECT_TRUE(refused(t.validate(), E::kInvalidBufferCount, "csf needs exactly 7 buffers, got 1"));
    // Block-paged seq_ptr too short.
    t = paged(u32s({0}), u32s({0}));
    EXPECT_TRUE(refused(t.validate(), E::kBufferTooSmall, "buffer[2].byte_size: 4 is below the 12 bytes"));
    // A quantization scale buffer index past the table.
    t = per_channel(f32s({1, 1, 1}), std::nullopt);
    std::get<PerChannelAffine>(t.d.quantization->scheme).scale_buffer_index = 7;
    EXPECT_TRUE(refused(t.validate(), E::kInvalidQuantizationBuffer, "scale_buffer_index: 7 is not below"));
}

}  // namespace
