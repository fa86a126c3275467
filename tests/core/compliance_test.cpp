// SPDX-License-Identifier: Apache-2.0
// docs/impl/compliance.md § Test Requirements: descriptor parsing for every
// mandatory type x layout, round trips, empty-tensor vectors, buffer sizes,
// the zero-copy invariant and the listed rejection cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "descriptor_test_support.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/core/descriptor_codec.hpp"

namespace {

using namespace hurray;       // NOLINT(google-build-using-namespace): test brevity
using namespace hurray_desc_test;  // NOLINT(google-build-using-namespace)
using E = ErrorCode;

// compliance.md § Mandatory Element Type Support.
const ElementType kTier1Types[] = {
    ElementType::kFloat16, ElementType::kBFloat16, ElementType::kFloat32, ElementType::kFloat64,
    ElementType::kInt8,    ElementType::kUInt8,    ElementType::kInt16,   ElementType::kUInt16,
    ElementType::kInt32,   ElementType::kUInt32,   ElementType::kInt64,   ElementType::kUInt64,
    ElementType::kBool,
};

// A valid descriptor of `type` in the Tier 1 layout `tag` (0x01-0x0B), with
// buffers sized by the builder.
TensorDescriptor build(ElementType type, uint8_t tag) {
    TensorDescriptor d;
    d.element_type = type;
    d.shape = {3, 5};
    std::vector<uint64_t> data_dependent;
    switch (tag) {
        case 0x01: d.layout = RowMajorLayout{}; break;
        case 0x02: d.layout = ColumnMajorLayout{}; break;
        case 0x03: d.layout = StridedLayout{{1, 3}}; break;
        case 0x04: d.layout = TiledLayout{{TiledLevel{.tile_shape = {2, 2}}}}; break;
        case 0x05: d.layout = MortonLayout{{2, 3}}; break;
        case 0x06: d.layout = CooLayout{4, true}; break;
        case 0x07: d.layout = CsrLayout{4}; break;
        case 0x08: d.layout = CscLayout{4}; break;
        case 0x09:
            d.shape = {2, 3, 4};
            d.layout = CsfLayout{5, {2, 0, 1}};
            data_dependent = {24, 32, 32, 40};  // crd_0 (3), pos_1 (4), crd_1 (4), pos_2 (5)
            break;
        case 0x0A:
            d.shape = {40, 2, 8};
            d.layout = BlockPagedLayout{.page_size = 16, .num_pages = 3, .num_seqs = 2, .kv_role = KvRole::kValue};
            data_dependent = {12};  // 3 uint32 block-table entries
            break;
        case 0x0B:
            return must(make_composite_head(type, {3, 5}, CompositionRule::kPartition, 2));
        default: ADD_FAILURE() << "not a Tier 1 layout: " << int{tag}; return d;
    }
    return must(size_buffers(d, {}, data_dependent));
}

// compliance.md § Test Requirements, "Descriptor parsing" and "Round-trip":
// every Tier 1 type in every Tier 1 layout is written, read back with every
// field identical, and re-encoded byte for byte.
TEST(Compliance, EveryTier1TypeInEveryTier1LayoutRoundTrips) {
    size_t combinations = 0;
    for (ElementType type : kTier1Types) {
        for (uint8_t tag = 0x01; tag <= 0x0B; ++tag) {
            SCOPED_TRACE(std::string(type_name(type)) + " / " + std::string(layout_name(tag)));
            const TensorDescriptor d = build(type, tag);
            ASSERT_EQ(d.layout_tag(), tag);
            const Bytes bytes = must_encode(d);
            ASSERT_FALSE(bytes.empty());
            EXPECT_EQ(bytes[14], type_tag(type));
            EXPECT_EQ(bytes[15], tag);
            EXPECT_EQ(get_le(bytes, 6, 4), bytes.size());
            auto size = encoded_size(d);
            ASSERT_TRUE(Accepted(size));
            EXPECT_EQ(*size, bytes.size());
            auto peeked = peek_length(bytes);
            ASSERT_TRUE(Accepted(peeked));
            EXPECT_EQ(*peeked, bytes.size());

            auto back = decode(bytes);
            ASSERT_TRUE(Accepted(back));
            EXPECT_EQ(*back, d);
            EXPECT_EQ(back->element_type, type);
            EXPECT_EQ(back->shape, d.shape);
            EXPECT_EQ(back->byte_offset, 0U);
            EXPECT_EQ(back->layout, d.layout);
            EXPECT_EQ(back->buffers, d.buffers);
            EXPECT_EQ(back->flags(), 0U);
            EXPECT_EQ(must_encode(*back), bytes);

            // encode_to writes the same bytes into a caller buffer.
            Bytes out(bytes.size() + 7, 0xEE);
            auto n = encode_to(d, out);
            ASSERT_TRUE(Accepted(n));
            EXPECT_EQ(*n, bytes.size());
            EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), out.begin()));
            EXPECT_EQ(out.back(), 0xEE);
            ++combinations;
        }
    }
    EXPECT_EQ(combinations, 13U * 11U);
}

// compliance.md § Test Requirements, "Buffer size": sizes for the mandatory
// types in each layout, from the spec's formulas (memory-layout.md,
// layouts/*.md): bytes(n) = ceil(n * bits / 8).
TEST(Compliance, BufferSizesOfEveryTier1TypeInEveryTier1Layout) {
    for (ElementType type : kTier1Types) {
        const uint64_t bits = bit_width(type);
        auto bytes = [bits](uint64_t n) { return (n * bits + 7) / 8; };
        auto sizes = [&](uint8_t tag) {
            std::vector<uint64_t> v;
            for (const BufferHandle& h : build(type, tag).buffers) {
                v.push_back(h.byte_size);
            }
            return v;
        };
        SCOPED_TRACE(std::string(type_name(type)));
        EXPECT_EQ(sizes(0x01), (std::vector<uint64_t>{bytes(15)}));
        EXPECT_EQ(sizes(0x02), (std::vector<uint64_t>{bytes(15)}));
        // Strides {1, 3} over [3,5]: offsets 0..2 + 3*4 = 14, so 15 elements.
        EXPECT_EQ(sizes(0x03), (std::vector<uint64_t>{bytes(15)}));
        // 2x2 tiles over [3,5]: 2 x 3 tiles of 4 elements, padding included.
        EXPECT_EQ(sizes(0x04), (std::vector<uint64_t>{bytes(24)}));
        // Morton bits {2, 3}: 2^5 slots.
        EXPECT_EQ(sizes(0x05), (std::vector<uint64_t>{bytes(32)}));
        // COO nnz 4, rank 2: values, then nnz * rank uint64 indices.
        EXPECT_EQ(sizes(0x06), (std::vector<uint64_t>{bytes(4), 64}));
        // CSR: values, col_indices (nnz), row_ptr (rows + 1); CSC: col_ptr (cols + 1).
        EXPECT_EQ(sizes(0x07), (std::vector<uint64_t>{bytes(4), 32, 32}));
        EXPECT_EQ(sizes(0x08), (std::vector<uint64_t>{bytes(4), 32, 48}));
        // CSF: values, pos_0 (16), crd_0, pos_1, crd_1, pos_2, crd_2 (nnz * 8).
        EXPECT_EQ(sizes(0x09), (std::vector<uint64_t>{bytes(5), 16, 24, 32, 32, 40, 40}));
        // Block-paged: pool of num_pages * page_size * heads * dim, block
        // table, seq_ptr (num_seqs + 1 uint32).
        EXPECT_EQ(sizes(0x0A), (std::vector<uint64_t>{bytes(3 * 16 * 2 * 8), 12, 12}));
        EXPECT_TRUE(sizes(0x0B).empty());
    }
}

// ADR-007; compliance.md § Empty Tensor Round-Trip Vectors: [0], [3, 0, 5] and
// a CSR [4, 5] with nnz 0 (row_ptr of 5 zeros = 40 bytes, empty values and
// col_indices) round-trip with a complete buffer table and identical fields.
TEST(Compliance, EmptyTensorVectorsRoundTrip) {
    struct Case {
        const char* name;
        TensorDescriptor d;
        std::vector<uint64_t> sizes;
    };
    const Case cases[] = {
        {"[0]", must(make_dense(ElementType::kFloat32, {0})), {0}},
        {"[3,0,5]", must(make_dense(ElementType::kFloat32, {3, 0, 5})), {0}},
        {"csr [4,5] nnz 0", must(make_csr(ElementType::kFloat32, 4, 5, 0)), {0, 0, 40}},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        std::vector<uint64_t> sizes;
        for (const BufferHandle& h : c.d.buffers) {
            sizes.push_back(h.byte_size);
            EXPECT_EQ(h.alignment, kMinBufferAlignment);
        }
        EXPECT_EQ(sizes, c.sizes);
        const Bytes bytes = must_encode(c.d);
        // buffer_count follows the shape, byte_offset and (CSR) 16 bytes of layout fields.
        const size_t count_at =
            20 + 8 * size_t{c.d.rank()} + 8 + (std::holds_alternative<CsrLayout>(c.d.layout) ? 16 : 0);
        EXPECT_EQ(bytes[count_at], c.sizes.size()) << "buffer_count";
        auto back = decode(bytes);
        ASSERT_TRUE(Accepted(back));
        EXPECT_EQ(*back, c.d);
        EXPECT_EQ(back->shape, c.d.shape);
        EXPECT_EQ(back->buffers, c.d.buffers);
        EXPECT_EQ(must_encode(*back), bytes);
    }
}

// compliance.md § Test Requirements, "Buffer size"; element-types.md: storage
// sizes of every Tier 1 and Tier 2 type (sub-byte packing, 6-bit groups of 3
// bytes, 128-bit types), via storage_bytes and via make_dense.
TEST(Compliance, BufferSizesOfEveryElementType) {
    struct Case {
        ElementType type;
        Shape shape;
        uint64_t bytes;
    };
    const Case cases[] = {
        {ElementType::kFloat16, {3, 5}, 30},     {ElementType::kBFloat16, {3, 5}, 30},
        {ElementType::kFloat32, {3, 5}, 60},     {ElementType::kFloat64, {3, 5}, 120},
        {ElementType::kInt8, {3, 5}, 15},        {ElementType::kUInt8, {3, 5}, 15},
        {ElementType::kInt16, {3, 5}, 30},       {ElementType::kUInt16, {3, 5}, 30},
        {ElementType::kInt32, {3, 5}, 60},       {ElementType::kUInt32, {3, 5}, 60},
        {ElementType::kInt64, {3, 5}, 120},      {ElementType::kUInt64, {3, 5}, 120},
        {ElementType::kBool, {10}, 2},           {ElementType::kBool, {8}, 1},
        {ElementType::kBool, {3, 5}, 2},         {ElementType::kBool, {}, 1},
        {ElementType::kFloat8E4M3, {3, 5}, 15},  {ElementType::kFloat8E5M2, {3, 5}, 15},
        {ElementType::kFloat8E8M0, {3, 5}, 15},  {ElementType::kFloat4E2M1, {5}, 3},
        {ElementType::kFloat6E2M3, {5}, 6},      {ElementType::kFloat6E2M3, {4}, 3},
        {ElementType::kFloat6E3M2, {4}, 3},      {ElementType::kFloat6E3M2, {1}, 3},
        {ElementType::kFloat128, {1}, 16},       {ElementType::kFloat128, {2, 2}, 64},
        {ElementType::kInt4, {5}, 3},            {ElementType::kUInt4, {4}, 2},
        {ElementType::kInt2, {5}, 2},            {ElementType::kUInt2, {8}, 2},
        {ElementType::kComplex64, {2}, 16},      {ElementType::kComplex128, {2}, 32},
    };
    for (const Case& c : cases) {
        uint64_t n = 1;
        for (uint64_t s : c.shape) {
            n *= s;
        }
        SCOPED_TRACE(std::string(type_name(c.type)) + " x" + std::to_string(n));
        auto bytes = storage_bytes(c.type, n);
        ASSERT_TRUE(Accepted(bytes));
        EXPECT_EQ(*bytes, c.bytes);
        const TensorDescriptor d = must(make_dense(c.type, c.shape));
        ASSERT_EQ(d.buffers.size(), 1U);
        EXPECT_EQ(d.buffers[0].byte_size, c.bytes);
        EXPECT_TRUE(RoundTrips(must_encode(d)));
    }
}

// compliance.md § "Zero-copy invariant"; element-types.md: bit patterns are
// preserved exactly (no NaN canonicalisation, no subnormal flushing). Only
// sparsity_ratio and value_stddev are range-checked, so NaN payloads go in the
// other statistics (and in those two while their validity bit is clear).
TEST(Compliance, NanPayloadsAndSubnormalsSurviveRoundTripBitExactly) {
    const uint64_t kSignallingNan = 0x7FF0000000000001ULL;
    const uint64_t kNegativeNanPayload = 0xFFF8000000000123ULL;
    const uint64_t kQuietNanPayload = 0x7FF8DEADBEEF0001ULL;
    const uint64_t kSubnormal = 0x0000000000000001ULL;
    const uint64_t kNegativeSubnormal = 0x800FFFFFFFFFFFFFULL;
    const uint64_t kSparsityNan = 0x7FF4000000000000ULL;

    TensorDescriptor d = must(make_dense(ElementType::kFloat32, {3, 4}));
    Statistics s;
    s.computed_mask = kStatNnzValid | kStatValueRangeValid | kStatNanInfValid;
    s.nnz = 12;
    s.sparsity_ratio = std::bit_cast<double>(kSparsityNan);  // SPARSITY_VALID clear
    s.value_min = std::bit_cast<double>(kSignallingNan);
    s.value_max = std::bit_cast<double>(kNegativeNanPayload);
    s.value_abs_max = std::bit_cast<double>(kQuietNanPayload);
    s.value_mean = std::bit_cast<double>(kNegativeSubnormal);
    s.value_stddev = std::bit_cast<double>(kSignallingNan);  // VALUE_STATS_VALID clear
    s.has_nan = true;
    d.statistics = s;

    const Bytes bytes = must_encode(d);
    // Statistics at 61: sparsity +16, min +24, max +32, abs_max +40, mean +48, stddev +56.
    EXPECT_EQ(get_le(bytes, 61 + 16, 8), kSparsityNan);
    EXPECT_EQ(get_le(bytes, 61 + 24, 8), kSignallingNan);
    EXPECT_EQ(get_le(bytes, 61 + 32, 8), kNegativeNanPayload);
    EXPECT_EQ(get_le(bytes, 61 + 40, 8), kQuietNanPayload);
    EXPECT_EQ(get_le(bytes, 61 + 48, 8), kNegativeSubnormal);
    EXPECT_EQ(get_le(bytes, 61 + 56, 8), kSignallingNan);

    auto back = decode(bytes);
    ASSERT_TRUE(Accepted(back));
    EXPECT_EQ(std::bit_cast<uint64_t>(back->statistics->sparsity_ratio), kSparsityNan);
    EXPECT_EQ(std::bit_cast<uint64_t>(back->statistics->value_min), kSignallingNan);
    EXPECT_EQ(std::bit_cast<uint64_t>(back->statistics->value_max), kNegativeNanPayload);
    EXPECT_EQ(std::bit_cast<uint64_t>(back->statistics->value_abs_max), kQuietNanPayload);
    EXPECT_EQ(std::bit_cast<uint64_t>(back->statistics->value_mean), kNegativeSubnormal);
    EXPECT_EQ(std::bit_cast<uint64_t>(back->statistics->value_stddev), kSignallingNan);
    EXPECT_EQ(*back, d);
    EXPECT_EQ(must_encode(*back), bytes);

    // With VALUE_STATS_VALID set: a NaN-payload mean and a subnormal stddev (>= 0).
    s.computed_mask |= kStatValueStatsValid;
    s.value_mean = std::bit_cast<double>(kQuietNanPayload);
    s.value_stddev = std::bit_cast<double>(kSubnormal);
    d.statistics = s;
    const Bytes b2 = must_encode(d);
    auto back2 = decode(b2);
    ASSERT_TRUE(Accepted(back2));
    EXPECT_EQ(std::bit_cast<uint64_t>(back2->statistics->value_mean), kQuietNanPayload);
    EXPECT_EQ(std::bit_cast<uint64_t>(back2->statistics->value_stddev), kSubnormal);
    EXPECT_EQ(must_encode(*back2), b2);

    // A per-tensor scale must be finite and non-zero, but subnormals are both:
    // smallest positive, largest negative subnormal float32 (scale at 69).
    for (uint32_t bits : {0x00000001U, 0x807FFFFFU}) {
        TensorDescriptor q = must(make_dense(ElementType::kInt8, {3, 4}));
        q.quantization = QuantizationDescriptor{PerTensorAffine{std::bit_cast<float>(bits), -3}, {}};
        const Bytes qb = must_encode(q);
        EXPECT_EQ(get_le(qb, 69, 4), bits);
        auto qd = decode(qb);
        ASSERT_TRUE(Accepted(qd));
        EXPECT_EQ(std::bit_cast<uint32_t>(std::get<PerTensorAffine>(qd->quantization->scheme).scale), bits);
        EXPECT_EQ(must_encode(*qd), qb);
    }
}

// compliance.md § Test Requirements, "Rejection cases": invalid magic,
// unsupported major version, reserved flag bits, out-of-bounds byte_offset,
// invalid shard offset, rank = 65. float32 [3,4] with a shard section at 61.
TEST(Compliance, TheListedRejectionCasesAreRejected) {
    TensorDescriptor d = must(make_dense(ElementType::kFloat32, {3, 4}));
    d.shard = ShardDescriptor{{6, 8}, {0, 4}};
    const Bytes valid = must_encode(d);
    ASSERT_TRUE(RoundTrips(valid));

    Bytes magic = valid;
    magic[0] = 'X';
    EXPECT_TRUE(Rejected(decode(magic), E::kInvalidMagic, 0));

    Bytes major = valid;
    put_u8(major, 4, 2);
    EXPECT_TRUE(Rejected(decode(major), E::kUnsupportedVersion, 4));

    Bytes flags = valid;
    put_u32(flags, 10, get_le(valid, 10, 4) | (1U << 5));
    EXPECT_TRUE(Rejected(decode(flags), E::kReservedFlagBits, 10));

    Bytes offset = valid;
    put_u64(offset, 36, 49);  // buffer 0 holds 48 bytes
    EXPECT_TRUE(Rejected(decode(offset), E::kByteOffsetOutOfRange, 36));

    Bytes shard = valid;
    put_u64(shard, 85, 5);  // shard_offset[1] = 5, 5 + 4 > 8
    EXPECT_TRUE(Rejected(decode(shard), E::kInvalidShard, 85));

    Bytes rank = valid;
    put_u32(rank, 16, 65);
    EXPECT_TRUE(Rejected(decode(rank), E::kRankTooLarge, 16));

    // Every one of them in permissive mode too: these are not relaxable.
    const DecodeOptions permissive{.strict = false};
    EXPECT_TRUE(Rejected(decode(magic, permissive), E::kInvalidMagic, 0));
    EXPECT_TRUE(Rejected(decode(major, permissive), E::kUnsupportedVersion, 4));
    EXPECT_TRUE(Rejected(decode(flags, permissive), E::kReservedFlagBits, 10));
    EXPECT_TRUE(Rejected(decode(offset, permissive), E::kByteOffsetOutOfRange, 36));
    EXPECT_TRUE(Rejected(decode(shard, permissive), E::kInvalidShard, 85));
    EXPECT_TRUE(Rejected(decode(rank, permissive), E::kRankTooLarge, 16));
}

// metadata.md § Worked Example is reproduced by the builder (61 bytes; the
// spec's buffer is 192 bytes, larger than the 48 the shape needs).
TEST(Compliance, LevelTwoWriterEmitsTheFixedHeaderAndLength) {
    const Bytes b = must_encode(must(make_dense(ElementType::kFloat32, {3, 4})));
    ASSERT_EQ(b.size(), 61U);
    EXPECT_EQ((Bytes{b.begin(), b.begin() + 6}), (Bytes{0x48, 0x52, 0x52, 0x59, 0x01, 0x00}));
    EXPECT_EQ(get_le(b, 6, 4), 61U);
    EXPECT_EQ(get_le(b, 10, 4), 0U);  // reserved flag bits zero
    EXPECT_EQ(get_le(b, 45 + 8, 4), 64U);  // alignment >= 64
}

}  // namespace
