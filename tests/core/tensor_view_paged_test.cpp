// SPDX-License-Identifier: Apache-2.0
// TensorView on the block-paged layout: the spec's example (2 sequences of 6
// and 3 tokens, page_size 4, page 0 shared), the logical token mapping with
// derived and supplied sequence lengths, packed element types, both block
// table widths, and corrupt seq_ptr / block_table contents.
#include <gtest/gtest.h>

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

struct Paged {
    ET type = ET::kFloat16;
    uint32_t page_size = 4;
    uint64_t num_pages = 5;
    uint64_t tokens = 9;
    uint64_t heads = 2;
    uint64_t dim = 8;
    std::vector<uint64_t> seq_ptr = {0, 2, 3};
    std::vector<uint64_t> table = {0, 1, 0};
    BlockTableIndexType index_type = BlockTableIndexType::kUInt32;
};

Bytes table_bytes(const std::vector<uint64_t>& v, BlockTableIndexType t) {
    const size_t w = t == BlockTableIndexType::kUInt64 ? 8 : 4;
    Bytes b(v.size() * w);
    for (size_t i = 0; i < v.size(); ++i) {
        for (size_t k = 0; k < w; ++k) {
            b[i * w + k] = static_cast<uint8_t>(v[i] >> (8 * k));
        }
    }
    return b;
}

std::unique_ptr<Tensor> make_paged(const Paged& p) {
    TensorDescriptor d{.element_type = p.type, .shape = {p.tokens, p.heads, p.dim},
                       .layout = BlockPagedLayout{.page_size = p.page_size, .num_pages = p.num_pages,
                                                  .num_seqs = static_cast<uint32_t>(p.seq_ptr.size() - 1),
                                                  .index_type = p.index_type}, .buffers = {}};
    const size_t w = p.index_type == BlockTableIndexType::kUInt64 ? 8 : 4;
    auto t = sized(d, std::vector<uint64_t>{p.table.size() * w});
    if (!t) {
        return t;
    }
    // Pool element f holds a code identifying f.
    const uint32_t bits = bit_width(p.type);
    const uint64_t pool = p.num_pages * p.page_size * p.heads * p.dim;
    for (uint64_t f = 0; f < pool; ++f) {
        put_element(t->bufs[0], bits, f, storage_code(p.type, f));
    }
    t->bufs[1] = table_bytes(p.table, p.index_type);
    t->bufs[2] = table_bytes(p.seq_ptr, p.index_type);
    return t;
}

/// The pool element holding token u of sequence s (block-paged.md § Element Lookup).
uint64_t pool_element(const Paged& p, uint64_t s, uint64_t u, uint64_t h, uint64_t d) {
    const uint64_t page = p.table[p.seq_ptr[s] + u / p.page_size];
    return ((page * p.page_size + u % p.page_size) * p.heads + h) * p.dim + d;
}

ElementLocation pool_location(const Paged& p, uint64_t f) {
    const uint32_t bits = bit_width(p.type);
    return bits % 8 == 0 ? ElementLocation{true, 0, f * (bits / 8), 0} : ElementLocation{true, 0, 0, f};
}

/// Every logical element of `v`, given each sequence's token count.
void check_logical(const Paged& p, const TensorView& v, const std::vector<uint64_t>& lengths) {
    const uint32_t bits = bit_width(p.type);
    std::vector<uint64_t> codes;
    uint64_t t = 0;
    for (size_t s = 0; s < lengths.size(); ++s) {
        for (uint64_t u = 0; u < lengths[s]; ++u, ++t) {
            for (uint64_t h = 0; h < p.heads; ++h) {
                for (uint64_t d = 0; d < p.dim; ++d) {
                    SCOPED_TRACE("seq " + std::to_string(s) + " token " + std::to_string(u));
                    const uint64_t f = pool_element(p, s, u, h, d);
                    codes.push_back(storage_code(p.type, f));
                    EXPECT_EQ(*v.locate(Index{t, h, d}), pool_location(p, f));
                    EXPECT_EQ(*v.locate_paged(s, u, h, d), pool_location(p, f));
                    EXPECT_EQ(*v.read_bits(Index{t, h, d}), low_bits(bits, storage_code(p.type, f)));
                    EXPECT_TRUE(same_double(*v.read_double(Index{t, h, d}), value_of(p.type, storage_code(p.type, f))));
                }
            }
        }
    }
    ASSERT_EQ(t, p.tokens);
    auto m = v.materialize();
    ASSERT_TRUE(m.ok()) << m.error().to_string();
    EXPECT_EQ(*m, pack_row_major(p.type, codes));
}

TEST(TensorViewPaged, SpecExampleNeedsTheSequenceLengths) {
    const Paged p;  // block-paged.md § Example
    auto t = make_paged(p);
    ASSERT_NE(t, nullptr);
    auto v = t->view();
    ASSERT_TRUE(v.ok()) << v.error().to_string();
    // 9 tokens in 2 + 1 pages of 4: 5+4, 6+3, 7+2 and 8+1 all fit.
    EXPECT_TRUE(v->sequence_token_starts().empty());
    EXPECT_EQ(v->locate(Index{0, 0, 0}).error().code(), ErrorCode::kUnsupported);
    EXPECT_EQ(v->materialize().error().code(), ErrorCode::kUnsupported);
    // locate_paged needs no lengths; sequence 1 shares page 0 with sequence 0.
    for (uint64_t u = 0; u < 3; ++u) {
        EXPECT_EQ(*v->locate_paged(1, u, 1, 7), *v->locate_paged(0, u, 1, 7));
        EXPECT_EQ(*v->locate_paged(1, u, 1, 7), pool_location(p, ((0 * 4 + u) * 2 + 1) * 8 + 7));
    }
    // Token 4 of sequence 0 is slot 0 of page 1 (flat element 64).
    EXPECT_EQ(*v->locate_paged(0, 4, 0, 0), pool_location(p, 64));
    EXPECT_EQ(v->locate_paged(1, 4, 0, 0).error().code(), ErrorCode::kInvalidArgument);  // 1 page of 4 slots
    EXPECT_EQ(v->locate_paged(2, 0, 0, 0).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(v->locate_paged(0, 0, 2, 0).error().code(), ErrorCode::kInvalidArgument);

    auto known = v->with_sequence_lengths(std::vector<uint64_t>{6, 3});
    ASSERT_TRUE(known.ok()) << known.error().to_string();
    EXPECT_EQ(std::vector<uint64_t>(known->sequence_token_starts().begin(), known->sequence_token_starts().end()),
              (std::vector<uint64_t>{0, 6, 9}));
    check_logical(p, *known, {6, 3});
    // Logical token 6 is token 0 of sequence 1: page 0, slot 0.
    EXPECT_EQ(*known->locate(Index{6, 0, 0}), pool_location(p, 0));
    // With lengths known, a sequence ends at its last token.
    EXPECT_EQ(known->locate_paged(1, 3, 0, 0).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(known->locate_paged(0, 6, 0, 0).error().code(), ErrorCode::kInvalidArgument);
}

TEST(TensorViewPaged, SequenceLengthsAreChecked) {
    auto t = make_paged(Paged{});
    auto v = t->view();
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(v->with_sequence_lengths(std::vector<uint64_t>{9}).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(v->with_sequence_lengths(std::vector<uint64_t>{5, 3}).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(v->with_sequence_lengths(std::vector<uint64_t>{4, 5}).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(v->with_sequence_lengths(std::vector<uint64_t>{8, 1}).ok());

    auto dense = sized(TensorDescriptor{.element_type = ET::kFloat32, .shape = {2, 2}, .buffers = {}});
    auto dv = dense->view();
    ASSERT_TRUE(dv.ok());
    EXPECT_EQ(dv->with_sequence_lengths(std::vector<uint64_t>{2}).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(dv->locate_paged(0, 0, 0, 0).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(dv->sequence_token_starts().empty());
}

TEST(TensorViewPaged, LengthsDerivedWhenTheDescriptorDeterminesThem) {
    for (ET type : {ET::kFloat16, ET::kFloat32, ET::kInt4, ET::kUInt2, ET::kBool, ET::kFloat6E2M3}) {
        for (auto it : {BlockTableIndexType::kUInt32, BlockTableIndexType::kUInt64}) {
            SCOPED_TRACE(std::string(type_name(type)) + (it == BlockTableIndexType::kUInt64 ? " u64" : " u32"));
            // One sequence owns every page: it holds all the tokens.
            Paged one{.type = type, .page_size = 4, .num_pages = 6, .tokens = 10, .heads = 2, .dim = 3,
                      .seq_ptr = {0, 3}, .table = {4, 0, 2}, .index_type = it};
            auto t1 = make_paged(one);
            auto v1 = t1->view();
            ASSERT_TRUE(v1.ok()) << v1.error().to_string();
            EXPECT_EQ(std::vector<uint64_t>(v1->sequence_token_starts().begin(), v1->sequence_token_starts().end()),
                      (std::vector<uint64_t>{0, 10}));
            check_logical(one, *v1, {10});
            // Every page full (12 tokens in 2 + 1 pages of 4), with empty sequences around.
            Paged full{.type = type, .page_size = 4, .num_pages = 5, .tokens = 12, .heads = 1, .dim = 5,
                       .seq_ptr = {0, 0, 2, 2, 3}, .table = {3, 1, 3}, .index_type = it};
            auto t2 = make_paged(full);
            auto v2 = t2->view();
            ASSERT_TRUE(v2.ok()) << v2.error().to_string();
            EXPECT_EQ(std::vector<uint64_t>(v2->sequence_token_starts().begin(), v2->sequence_token_starts().end()),
                      (std::vector<uint64_t>{0, 0, 8, 8, 12}));
            check_logical(full, *v2, {0, 8, 0, 4});
        }
    }
}

TEST(TensorViewPaged, EmptyBatch) {
    Paged p{.tokens = 0, .seq_ptr = {0}, .table = {}};
    auto t = make_paged(p);
    ASSERT_NE(t, nullptr);
    auto v = t->view();
    ASSERT_TRUE(v.ok()) << v.error().to_string();
    EXPECT_EQ(v->sequence_token_starts().size(), 1U);
    auto m = v->materialize();
    ASSERT_TRUE(m.ok()) << m.error().to_string();
    EXPECT_TRUE(m->empty());
}

TEST(TensorViewPaged, CorruptBlockTable) {
    Paged p{.tokens = 12};  // every page full: lengths known
    p.table = {0, 7, 2};    // page 7 is not in the pool of 5
    auto t = make_paged(p);
    auto v = t->view();
    ASSERT_TRUE(v.ok()) << v.error().to_string();
    EXPECT_TRUE(v->read_bits(Index{3, 1, 7}).ok());
    auto bad = v->locate(Index{4, 0, 0});
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidData);
    EXPECT_NE(bad.error().message().find("block_table[1] = 7"), std::string::npos) << bad.error().message();
    EXPECT_EQ(v->materialize().error().code(), ErrorCode::kInvalidData);
    EXPECT_EQ(v->locate_paged(0, 5, 0, 0).error().code(), ErrorCode::kInvalidData);
}

// A corrupt seq_ptr does not stop make() (validate_data reports it with its
// position); every logical access names it.
TEST(TensorViewPaged, CorruptSeqPtrIsRejectedOnAccess) {
    auto expect = [](Paged p, ErrorCode code, const char* text) {
        auto t = make_paged(p);
        ASSERT_NE(t, nullptr);
        auto v = t->view();
        ASSERT_TRUE(v.ok()) << v.error().to_string();
        EXPECT_TRUE(v->sequence_token_starts().empty());
        auto loc = v->locate(std::vector<uint64_t>{0, 0, 0});
        ASSERT_FALSE(loc.ok());
        EXPECT_EQ(loc.error().code(), code);
        EXPECT_NE(loc.error().message().find(text), std::string::npos) << loc.error().message();
        auto all = v->materialize();
        ASSERT_FALSE(all.ok());
        EXPECT_EQ(all.error().code(), code);
    };
    expect(Paged{.seq_ptr = {1, 2, 3}}, ErrorCode::kInvalidData, "seq_ptr[0] = 1");
    expect(Paged{.seq_ptr = {0, 3, 2}}, ErrorCode::kInvalidData, "seq_ptr[2] = 2 is below seq_ptr[1] = 3");
    expect(Paged{.seq_ptr = {0, 2, 4}}, ErrorCode::kInvalidData, "entries of block_table");
    expect(Paged{.tokens = 13}, ErrorCode::kInvalidData, "shape[0] = 13 tokens exceed the 12 slots");
}

}  // namespace
