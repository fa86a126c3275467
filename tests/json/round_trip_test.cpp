// SPDX-License-Identifier: Apache-2.0
// hurray::json round trips: every layout, every quantization scheme, every
// optional section, exact 64-bit integers, bit-exact floats, raw enum values
// and invalid models all survive JSON and CBOR unchanged.
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "json_test_support.hpp"
#include "test_paths.hpp"

namespace {

using namespace hurray;             // NOLINT(google-build-using-namespace)
using namespace hurray_json_test;   // NOLINT(google-build-using-namespace)

// A valid descriptor of every named layout, plus an extension layout.
std::vector<std::pair<std::string, TensorDescriptor>> every_layout() {
    std::vector<std::pair<std::string, TensorDescriptor>> all;
    all.emplace_back("row_major", sized(with(ElementType::kFloat32, {3, 4}, RowMajorLayout{})));
    all.emplace_back("column_major", sized(with(ElementType::kInt16, {3, 4}, ColumnMajorLayout{})));
    TensorDescriptor strided = with(ElementType::kInt8, {4, 4}, StridedLayout{{-4, 1}});
    strided.byte_offset = 12;
    all.emplace_back("strided", sized(strided));
    all.emplace_back("strided_broadcast", sized(with(ElementType::kFloat64, {3, 4}, StridedLayout{{0, 0}})));
    all.emplace_back("tiled", sized(with(ElementType::kFloat32, {3, 5}, TiledLayout{{TiledLevel{.tile_shape = {2, 2}}}})));
    TiledLayout nested;
    nested.levels.push_back(TiledLevel{.tile_shape = {4, 4},
                                       .outer_layout = LayoutTag::kStrided,
                                       .inner_layout = LayoutTag::kTiled,
                                       .outer_strides = {1, 2}});
    nested.levels.push_back(TiledLevel{.tile_shape = {2, 2},
                                       .outer_layout = LayoutTag::kColumnMajor,
                                       .inner_layout = LayoutTag::kStrided,
                                       .inner_strides = {2, 1}});
    all.emplace_back("tiled_nested", sized(with(ElementType::kFloat16, {8, 8}, nested)));
    all.emplace_back("morton", sized(with(ElementType::kFloat32, {3, 5}, MortonLayout{{2, 3}})));
    all.emplace_back("coo_sorted", sized(with(ElementType::kFloat32, {3, 5}, CooLayout{4, true})));
    all.emplace_back("coo_unsorted", sized(with(ElementType::kInt32, {2, 3, 4}, CooLayout{0, false})));
    all.emplace_back("csr", sized(with(ElementType::kFloat32, {3, 5}, CsrLayout{4})));
    all.emplace_back("csc", sized(with(ElementType::kFloat64, {3, 5}, CscLayout{4})));
    all.emplace_back("csf", sized(with(ElementType::kFloat32, {2, 3, 4}, CsfLayout{5, {2, 0, 1}}), {24, 32, 32, 40}));
    all.emplace_back("block_paged",
                     sized(with(ElementType::kFloat16, {40, 2, 8},
                                BlockPagedLayout{.page_size = 16, .num_pages = 3, .num_seqs = 2,
                                                 .kv_role = KvRole::kValue, .layer_index = 7,
                                                 .index_type = BlockTableIndexType::kUInt64}),
                           {24}));
    all.emplace_back("block_paged_fused",
                     sized(with(ElementType::kBFloat16, {32, 2, 4},
                                BlockPagedLayout{.page_size = 16, .num_pages = 4, .num_seqs = 2,
                                                 .kv_role = KvRole::kFused}),
                           {16}));
    all.emplace_back("composite_partition",
                     must(make_composite_head(ElementType::kFloat32, {8, 8}, CompositionRule::kPartition, 2)));
    all.emplace_back("composite_overlay", must(make_composite_head(ElementType::kFloat16, {8, 8},
                                                                   CompositionRule::kOverlay, 3, CombineOp::kAdd)));
    all.emplace_back("composite_overlay_replace",
                     must(make_composite_head(ElementType::kFloat16, {8, 8}, CompositionRule::kOverlay, 2,
                                              CombineOp::kReplace)));
    all.emplace_back("composite_group",
                     must(make_composite_head(ElementType::kInt8, {4}, CompositionRule::kGroup, 5)));
    all.emplace_back("hilbert", sized(with(ElementType::kFloat32, {4, 4}, HilbertLayout{2, 2})));
    TensorDescriptor ext = with(ElementType::kUInt8, {16}, ExtensionLayout{0xF3, 0xFEEDFACECAFEBEEF, {0x00, 0x01, 0xAB, 0xFF}});
    ext.buffers = {BufferHandle{.byte_size = 16}};
    all.emplace_back("extension", ext);
    return all;
}

// The descriptor called `name` in `all`.
const TensorDescriptor& named(const std::vector<std::pair<std::string, TensorDescriptor>>& all, std::string_view name) {
    for (const auto& [n, d] : all) {
        if (n == name) {
            return d;
        }
    }
    ADD_FAILURE() << "no descriptor " << name;
    return all.front().second;
}

TEST(JsonRoundTrip, EveryLayout) {
    const auto all = every_layout();
    DecodeOptions writer;
    writer.accept_private_extensions = true;
    for (const auto& [name, d] : all) {
        SCOPED_TRACE(name);
        const Status valid = check_descriptor(d, writer);
        EXPECT_TRUE(valid.ok()) << valid.error().to_string();
        EXPECT_TRUE(RoundTrips(d));
    }
    EXPECT_EQ(all.size(), 20U);
}

TEST(JsonRoundTrip, LayoutFieldsAreWrittenUnderTheirSpecNames) {
    const auto all = every_layout();
    const Doc tiled = doc_of(named(all, "tiled_nested"));
    EXPECT_EQ(tiled["layout"]["tag"], "tiled");
    EXPECT_EQ(tiled["layout"]["levels"][0]["outer_layout"], "strided");
    EXPECT_EQ(tiled["layout"]["levels"][0]["inner_layout"], "tiled");
    EXPECT_EQ(tiled["layout"]["levels"][0]["outer_strides"], Doc::parse("[1,2]"));
    EXPECT_FALSE(tiled["layout"]["levels"][0].contains("inner_strides"));  // empty: left out
    EXPECT_EQ(tiled["layout"]["levels"][1]["inner_strides"], Doc::parse("[2,1]"));

    const Doc paged = doc_of(named(all, "block_paged"));
    EXPECT_EQ(paged["layout"].dump(),
              R"({"tag":"block_paged","page_size":16,"num_pages":3,"paged_axis":0,"num_seqs":2,)"
              R"("kv_role":"value","layer_index":7,"block_table_index_type":"uint64"})");
    EXPECT_EQ(doc_of(named(all, "composite_overlay"))["layout"].dump(),
              R"({"tag":"composite","composition_rule":"overlay","combine_op":"add","member_count":3})");
    EXPECT_EQ(doc_of(named(all, "extension"))["layout"].dump(),
              R"({"tag":243,"extension_layout_id":18369614221190020847,"extension_data":"0001abff"})");
    EXPECT_EQ(doc_of(named(all, "hilbert"))["layout"].dump(), R"({"tag":"hilbert","hilbert_order":2,"hilbert_rank":2})");
    EXPECT_EQ(doc_of(named(all, "csf"))["layout"].dump(), R"({"tag":"csf","nnz":5,"mode_order":[2,0,1]})");
    EXPECT_EQ(doc_of(named(all, "coo_sorted"))["layout"].dump(), R"({"tag":"coo","nnz":4,"is_sorted":true})");
    EXPECT_EQ(doc_of(named(all, "morton"))["layout"].dump(), R"({"tag":"morton","morton_bits":[2,3]})");
    EXPECT_EQ(doc_of(named(all, "strided"))["layout"].dump(), R"({"tag":"strided","strides":[-4,1]})");
}

// Descriptors with each quantization scheme, including opaque ones and padding.
std::vector<std::pair<std::string, TensorDescriptor>> every_scheme() {
    std::vector<std::pair<std::string, TensorDescriptor>> all;
    TensorDescriptor pt = with(ElementType::kInt8, {4, 8}, RowMajorLayout{});
    pt.quantization = QuantizationDescriptor{PerTensorAffine{0.1F, -3}, {}};
    all.emplace_back("per_tensor_affine", sized(pt));

    TensorDescriptor pc = with(ElementType::kUInt8, {4, 8}, RowMajorLayout{});
    pc.quantization = QuantizationDescriptor{
        PerChannelAffine{.axis = 1, .scale_buffer_index = 1, .zero_point_buffer_index = 2}, {}};
    all.emplace_back("per_channel_affine", sized(pc));
    TensorDescriptor pcs = pc;
    pcs.quantization = QuantizationDescriptor{PerChannelAffine{.axis = 0, .scale_buffer_index = 1}, {}};
    all.emplace_back("per_channel_affine_symmetric", sized(pcs));

    all.emplace_back("per_block_affine",
                     must(make_per_block_quantized(ElementType::kInt4, {64, 128}, 1, 32, ElementType::kBFloat16, false)));
    all.emplace_back("per_block_affine_f32",
                     must(make_per_block_quantized(ElementType::kUInt2, {64, 128}, 0, 64, ElementType::kFloat32)));

    TensorDescriptor nf4 = with(ElementType::kUInt4, {16, 128}, RowMajorLayout{});
    nf4.quantization = QuantizationDescriptor{Nf4Quantization{1, 64, 1}, {}};
    all.emplace_back("nf4", sized(nf4));

    TensorDescriptor mx = with(ElementType::kFloat4E2M1, {16, 128}, RowMajorLayout{});
    mx.quantization = QuantizationDescriptor{MxfpQuantization{1, 32, 1}, {}};
    all.emplace_back("mxfp", sized(mx));

    TensorDescriptor padded = nf4;
    padded.quantization->trailing_padding = {0, 0, 0, 0, 0, 0, 0, 0};
    all.emplace_back("nf4_padded", sized(padded));

    TensorDescriptor opaque = with(ElementType::kInt8, {4, 8}, RowMajorLayout{});
    opaque.quantization = QuantizationDescriptor{
        OpaqueQuantization{.scheme_tag = 0xF7, .scheme_version = 3, .flags = 0xBEEF, .payload = {1, 2, 3, 0xFE}},
        {0xAA, 0x55}};
    opaque.buffers = {BufferHandle{.byte_size = 32}, BufferHandle{.byte_size = 64}};
    all.emplace_back("opaque_private", opaque);

    TensorDescriptor unassigned = opaque;
    unassigned.quantization = QuantizationDescriptor{OpaqueQuantization{.scheme_tag = 0x06}, {}};
    all.emplace_back("opaque_unassigned_empty_payload", unassigned);
    return all;
}

TEST(JsonRoundTrip, EveryQuantizationScheme) {
    for (const auto& [name, d] : every_scheme()) {
        SCOPED_TRACE(name);
        EXPECT_TRUE(d.quantization.has_value());
        EXPECT_TRUE(RoundTrips(d));
    }
}

TEST(JsonRoundTrip, QuantizationFieldsAreWrittenUnderTheirSpecNames) {
    const auto all = every_scheme();
    EXPECT_EQ(doc_of(named(all, "per_tensor_affine"))["quantization"].dump(),
              R"({"scheme":"per_tensor_affine","scale":0.1,"zero_point":-3})");
    EXPECT_EQ(doc_of(named(all, "per_channel_affine"))["quantization"].dump(),
              R"({"scheme":"per_channel_affine","axis":1,"scale_buffer_index":1,"zero_point_buffer_index":2,)"
              R"("scale_type":"float32"})");
    EXPECT_EQ(doc_of(named(all, "per_channel_affine_symmetric"))["quantization"].dump(),
              R"({"scheme":"per_channel_affine","axis":0,"scale_buffer_index":1,"scale_type":"float32"})");
    EXPECT_EQ(doc_of(named(all, "per_block_affine"))["quantization"].dump(),
              R"({"scheme":"per_block_affine","axis":1,"block_size":32,"scale_buffer_index":1,)"
              R"("zero_point_buffer_index":2,"scale_type":"bfloat16"})");
    EXPECT_EQ(doc_of(named(all, "nf4"))["quantization"].dump(),
              R"({"scheme":"nf4","axis":1,"block_size":64,"scale_buffer_index":1})");
    EXPECT_EQ(doc_of(named(all, "mxfp"))["quantization"].dump(),
              R"({"scheme":"mxfp","axis":1,"block_size":32,"scale_buffer_index":1})");
    EXPECT_EQ(doc_of(named(all, "nf4_padded"))["quantization"]["trailing_padding"], "0000000000000000");
    EXPECT_EQ(doc_of(named(all, "opaque_private"))["quantization"].dump(),
              R"({"scheme":247,"scheme_version":3,"flags":48879,"payload":"010203fe","trailing_padding":"aa55"})");
    EXPECT_EQ(doc_of(named(all, "opaque_unassigned_empty_payload"))["quantization"].dump(),
              R"({"scheme":6,"scheme_version":1,"flags":0,"payload":""})");
}

// A descriptor with every optional section and trailing bytes of a newer minor version.
TensorDescriptor everything() {
    TensorDescriptor d = with(static_cast<ElementType>(0xF2), {8, 4}, RowMajorLayout{});
    d.version_minor = 3;
    d.extension_type = ExtensionTypeDescriptor{.bit_width = 8,
                                               .packing_factor = 1,
                                               .is_float = true,
                                               .sign_bits = 1,
                                               .exponent_bits = 4,
                                               .mantissa_bits = 3,
                                               .exponent_bias = 7,
                                               .has_nan = true};
    d.shard = ShardDescriptor{.parent_shape = {16, 4}, .shard_offset = {8, 0}};
    d.statistics = Statistics{.computed_mask = kStatAllValid,
                              .nnz = 30,
                              .sparsity_ratio = 0.0625,
                              .value_min = -448.0,
                              .value_max = 448.0,
                              .value_abs_max = 448.0,
                              .value_mean = 1.0 / 3.0,
                              .value_stddev = 12.5,
                              .nm_n = 2,
                              .nm_m = 4,
                              .has_nan = true,
                              .has_inf = false};
    d.composite_member = CompositeMember{MemberRole::kCorrection};
    d.unknown_trailing_bytes = {0xDE, 0xAD, 0xBE, 0xEF, 0x00};
    d.buffers = {BufferHandle{.byte_size = 32}};
    return d;
}

TEST(JsonRoundTrip, EveryOptionalSectionAndTrailingBytes) {
    const TensorDescriptor d = everything();
    EXPECT_EQ(d.flags(), static_cast<uint32_t>(kHasShard | kHasExtensionType | kHasStatistics | kHasCompositeMember));
    EXPECT_TRUE(RoundTrips(d));
    const Doc doc = doc_of(d);
    EXPECT_EQ(doc["version_minor"], 3);
    EXPECT_EQ(doc["element_type"], 0xF2);  // a private type has no name: its number
    EXPECT_EQ(doc["shard"].dump(), R"({"parent_shape":[16,4],"shard_offset":[8,0]})");
    EXPECT_EQ(doc["extension_type"].dump(),
              R"({"bit_width":8,"packing_factor":1,"is_float":true,"is_signed":false,"sign_bits":1,)"
              R"("exponent_bits":4,"mantissa_bits":3,"exponent_bias":7,"has_nan":true,"has_inf":false})");
    EXPECT_EQ(doc["statistics"].dump(),
              R"({"computed_mask":63,"nnz":30,"sparsity_ratio":0.0625,"value_min":-448.0,"value_max":448.0,)"
              R"("value_abs_max":448.0,"value_mean":0.3333333333333333,"value_stddev":12.5,"nm_n":2,)"
              R"("nm_m":4,"has_nan":true,"has_inf":false})");
    EXPECT_EQ(doc["composite_member"].dump(), R"({"member_role":"correction"})");
    EXPECT_EQ(doc["unknown_trailing_bytes"], "deadbeef00");

    // A member with the base role, and the sections one at a time.
    TensorDescriptor base = d;
    base.composite_member = CompositeMember{MemberRole::kBase};
    EXPECT_TRUE(RoundTrips(base));
    EXPECT_EQ(doc_of(base)["composite_member"]["member_role"], "base");
    for (int section = 0; section < 5; ++section) {
        TensorDescriptor one = sized(with(ElementType::kFloat32, {8, 4}, RowMajorLayout{}));
        switch (section) {
            case 0: one.shard = d.shard; break;
            case 1: one.statistics = d.statistics; break;
            case 2: one.extension_type = d.extension_type; break;
            case 3: one.composite_member = d.composite_member; break;
            default: one.unknown_trailing_bytes = d.unknown_trailing_bytes; break;
        }
        SCOPED_TRACE(section);
        EXPECT_TRUE(RoundTrips(one));
    }
}

// A private element type with its extension type section: valid, encodable,
// and the same after JSON, CBOR and the wire format.
TEST(JsonRoundTrip, PrivateTypeWithExtensionSectionThroughTheWireFormat) {
    TensorDescriptor d = with(static_cast<ElementType>(0xF0), {10}, RowMajorLayout{});
    d.extension_type = ExtensionTypeDescriptor{.bit_width = 4, .packing_factor = 2, .is_signed = true};
    d = sized(d);
    ASSERT_EQ(d.buffers.size(), 1U);
    EXPECT_EQ(d.buffers[0].byte_size, 5U);
    EXPECT_TRUE(RoundTrips(d));
    auto wire = encode(d);
    ASSERT_TRUE(wire.ok()) << wire.error().to_string();
    auto from_wire = decode(*wire);
    ASSERT_TRUE(from_wire.ok()) << from_wire.error().to_string();
    auto from_text = from_json(to_json(*from_wire));
    ASSERT_TRUE(from_text.ok());
    auto again = encode(*from_text);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *wire);
}

// A descriptor of a newer minor version, decoded from bytes: its trailing bytes
// go through JSON and CBOR and re-encode to the same wire bytes.
TEST(JsonRoundTrip, MinorNewerTrailingBytesSurviveFromWireToJsonToWire) {
    TensorDescriptor d = sized(with(ElementType::kFloat32, {3, 4}, RowMajorLayout{}));
    d.version_minor = 1;
    d.unknown_trailing_bytes = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07};
    auto wire = encode(d);
    ASSERT_TRUE(wire.ok()) << wire.error().to_string();
    auto decoded = decode(*wire);
    ASSERT_TRUE(decoded.ok()) << decoded.error().to_string();
    EXPECT_EQ(decoded->unknown_trailing_bytes, d.unknown_trailing_bytes);
    auto via_json = from_json(to_json(*decoded));
    ASSERT_TRUE(via_json.ok());
    auto via_cbor = from_cbor(to_cbor(*via_json));
    ASSERT_TRUE(via_cbor.ok());
    auto again = encode(*via_cbor);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *wire);
    EXPECT_EQ(doc_of(d)["unknown_trailing_bytes"], "01020304050607");
}

// Statistics floats keep their bits: NaN payloads (quiet, signalling, negative),
// infinities, -0.0, subnormals and the extremes.
TEST(JsonRoundTrip, StatisticsFloatsAreBitExact) {
    const uint64_t patterns[] = {
        0x7FF8000000000001,  // quiet NaN with a payload
        0x7FF0000000000001,  // signalling NaN
        0xFFF8000000000000,  // negative quiet NaN
        0x7FFFFFFFFFFFFFFF,  // all payload bits
        0x7FF8000000000000,  // the default quiet NaN
        0x7FF0000000000000,  // +inf
        0xFFF0000000000000,  // -inf
        0x8000000000000000,  // -0.0
        0x0000000000000000,  // +0.0
        0x0000000000000001,  // smallest subnormal
        0x000FFFFFFFFFFFFF,  // largest subnormal
        0x7FEFFFFFFFFFFFFF,  // DBL_MAX
        0xFFEFFFFFFFFFFFFF,  // -DBL_MAX
        0x3FB999999999999A,  // 0.1
        0x3FF0000000000001,  // 1 + ulp
        0x4340000000000000,  // 2^53
    };
    for (const uint64_t bits : patterns) {
        SCOPED_TRACE(testing::Message() << std::hex << bits);
        TensorDescriptor d = sized(with(ElementType::kFloat64, {4}, RowMajorLayout{}));
        const double v = std::bit_cast<double>(bits);
        d.statistics = Statistics{.computed_mask = kStatValueRangeValid | kStatValueStatsValid,
                                  .value_min = v,
                                  .value_max = -v,
                                  .value_abs_max = v,
                                  .value_mean = v,
                                  .value_stddev = v};
        d.statistics->sparsity_ratio = v;
        EXPECT_TRUE(RoundTrips(d));
        auto back = from_json(to_json(d));
        ASSERT_TRUE(back.ok());
        EXPECT_EQ(std::bit_cast<uint64_t>(back->statistics->value_min), bits);
        EXPECT_EQ(std::bit_cast<uint64_t>(back->statistics->value_max), bits ^ 0x8000000000000000);
        auto cbor = from_cbor(to_cbor(d));
        ASSERT_TRUE(cbor.ok());
        EXPECT_EQ(std::bit_cast<uint64_t>(cbor->statistics->value_mean), bits);
    }
    // How they are written.
    auto stat_text = [](uint64_t bits) {
        TensorDescriptor d = sized(with(ElementType::kFloat64, {4}, RowMajorLayout{}));
        d.statistics = Statistics{.value_min = std::bit_cast<double>(bits)};
        return doc_of(d)["statistics"]["value_min"].dump();
    };
    EXPECT_EQ(stat_text(0x7FF8000000000001), R"("nan:0x7ff8000000000001")");
    EXPECT_EQ(stat_text(0xFFF8000000000000), R"("nan:0xfff8000000000000")");
    EXPECT_EQ(stat_text(0x7FF0000000000000), R"("inf")");
    EXPECT_EQ(stat_text(0xFFF0000000000000), R"("-inf")");
    EXPECT_EQ(stat_text(0x8000000000000000), "-0.0");
    EXPECT_EQ(stat_text(0x3FB999999999999A), "0.1");
    EXPECT_EQ(stat_text(0x0000000000000001), "5e-324");
    EXPECT_EQ(stat_text(0x7FEFFFFFFFFFFFFF), "1.7976931348623157e+308");
}

// The per-tensor scale is a float32: shortest decimal when finite, bits when NaN.
TEST(JsonRoundTrip, PerTensorScaleIsBitExact) {
    const uint32_t patterns[] = {
        0x3DCCCCCD,  // 0.1f
        0x7FC00001,  // quiet NaN with a payload
        0x7F800001,  // signalling NaN
        0xFFC00000,  // negative quiet NaN
        0x7F800000,  // +inf
        0xFF800000,  // -inf
        0x80000000,  // -0.0f
        0x00000001,  // FLT_TRUE_MIN
        0x7F7FFFFF,  // FLT_MAX
        0xFF7FFFFF,  // -FLT_MAX
        0x3F800001,  // 1 + ulp
        0x4B800000,  // 2^24
        0x3EAAAAAB,  // 1/3
        0x15AE43FD,  // shortest form "7.038531e-26" rounds to another float through a double
        0x95AE43FD,  // its negative
    };
    for (const uint32_t bits : patterns) {
        SCOPED_TRACE(testing::Message() << std::hex << bits);
        TensorDescriptor d = sized(with(ElementType::kInt8, {4}, RowMajorLayout{}));
        d.quantization = QuantizationDescriptor{PerTensorAffine{std::bit_cast<float>(bits), 7}, {}};
        EXPECT_TRUE(RoundTrips(d));
        auto back = from_json(to_json(d));
        ASSERT_TRUE(back.ok());
        EXPECT_EQ(std::bit_cast<uint32_t>(std::get<PerTensorAffine>(back->quantization->scheme).scale), bits);
    }
    auto scale_text = [](uint32_t bits) {
        TensorDescriptor d = sized(with(ElementType::kInt8, {4}, RowMajorLayout{}));
        d.quantization = QuantizationDescriptor{PerTensorAffine{std::bit_cast<float>(bits), 0}, {}};
        return doc_of(d)["quantization"]["scale"].dump();
    };
    EXPECT_EQ(scale_text(0x3DCCCCCD), "0.1");
    EXPECT_EQ(scale_text(0x3EAAAAAB), "0.33333334");  // the float's shortest form, not its double's
    EXPECT_EQ(scale_text(0x15AE43FD), "7.038530691851209e-26");  // the float's exact value instead
    EXPECT_EQ(scale_text(0x7FC00001), R"("nan:0x7fc00001")");
    EXPECT_EQ(scale_text(0x7F800001), R"("nan:0x7f800001")");
    EXPECT_EQ(scale_text(0xFF800000), R"("-inf")");
    EXPECT_EQ(scale_text(0x80000000), "-0.0");
    EXPECT_EQ(scale_text(0x7F7FFFFF), "3.4028235e+38");  // above FLT_MAX as a double; reads as FLT_MAX
}

// 64-bit integers are exact at their extremes; the dynamic dimension is a name.
TEST(JsonRoundTrip, IntegersAreExactAtTheirLimits) {
    constexpr uint64_t kU64 = std::numeric_limits<uint64_t>::max();
    constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
    constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
    TensorDescriptor d = with(ElementType::kFloat32, {kDynamicDim, 0, kU64 - 1, 1}, StridedLayout{{kI64Min, kI64Max, -1, 0}});
    d.byte_offset = kU64;
    d.buffers = {BufferHandle{.byte_size = kU64, .alignment = 0xFFFFFFFF},
                 BufferHandle{.byte_size = 0, .alignment = 1}};
    d.shard = ShardDescriptor{.parent_shape = {kU64, kU64, kU64, kU64}, .shard_offset = {kU64, 0, 1, 2}};
    d.statistics = Statistics{.computed_mask = 0xFFFFFFFF, .nnz = kU64, .nm_n = 255, .nm_m = 255};
    EXPECT_TRUE(RoundTrips(d));
    const Doc doc = doc_of(d);
    EXPECT_EQ(doc["shape"].dump(), R"(["dynamic",0,18446744073709551614,1])");
    EXPECT_EQ(doc["layout"]["strides"].dump(), "[-9223372036854775808,9223372036854775807,-1,0]");
    EXPECT_EQ(doc["byte_offset"].dump(), "18446744073709551615");
    EXPECT_EQ(doc["shard"]["parent_shape"][0].dump(), "18446744073709551615");  // a number outside `shape`

    TensorDescriptor q = sized(with(ElementType::kInt32, {4}, RowMajorLayout{}));
    for (const int32_t zp : {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()}) {
        q.quantization = QuantizationDescriptor{PerTensorAffine{1.0F, zp}, {}};
        EXPECT_TRUE(RoundTrips(q));
    }
    TensorDescriptor scalar = sized(with(ElementType::kFloat64, {}, RowMajorLayout{}));
    EXPECT_TRUE(RoundTrips(scalar));
    EXPECT_EQ(doc_of(scalar)["shape"].dump(), "[]");
}

// Values without a name (private, reserved, invalid) are written as numbers and
// come back unchanged; a numeric layout tag or scheme always selects the
// extension layout or the opaque scheme, even when its value has a name.
TEST(JsonRoundTrip, UnnamedEnumValuesAreKeptAsNumbers) {
    TensorDescriptor d = with(static_cast<ElementType>(0x47), {4, 4},
                              TiledLayout{{TiledLevel{.tile_shape = {2, 2},
                                                      .outer_layout = static_cast<LayoutTag>(0x0C),
                                                      .inner_layout = static_cast<LayoutTag>(0xF0)}}});
    d.version_major = 9;
    d.buffers = {BufferHandle{.byte_size = 1,
                              .alignment = 3,
                              .device_tag = static_cast<DeviceTag>(0xF1),
                              .sync_mode = static_cast<SyncMode>(0x07),
                              .memory_class = static_cast<MemoryClass>(0xF2)},
                 BufferHandle{.byte_size = 2,
                              .device_tag = static_cast<DeviceTag>(0xFF),
                              .sync_mode = static_cast<SyncMode>(0xFF),
                              .memory_class = static_cast<MemoryClass>(0x04)}};
    d.quantization = QuantizationDescriptor{
        PerBlockAffine{.axis = 9, .block_size = 3, .scale_type = static_cast<ElementType>(0x00)}, {}};
    d.composite_member = CompositeMember{static_cast<MemberRole>(0x05)};
    EXPECT_TRUE(RoundTrips(d));
    const Doc doc = doc_of(d);
    EXPECT_EQ(doc["version_major"], 9);
    EXPECT_EQ(doc["element_type"], 0x47);
    EXPECT_EQ(doc["layout"]["levels"][0]["outer_layout"], 0x0C);
    EXPECT_EQ(doc["layout"]["levels"][0]["inner_layout"], 0xF0);
    EXPECT_EQ(doc["buffers"][0].dump(),
              R"({"byte_size":1,"alignment":3,"device_tag":241,"sync_mode":7,"memory_class":242})");
    EXPECT_EQ(doc["buffers"][1].dump(),
              R"({"byte_size":2,"alignment":64,"device_tag":255,"sync_mode":255,"memory_class":4})");
    EXPECT_EQ(doc["quantization"]["scale_type"], 0);
    EXPECT_EQ(doc["composite_member"]["member_role"], 5);

    // Every device, sync mode and memory class name.
    TensorDescriptor named = sized(with(ElementType::kFloat32, {4}, RowMajorLayout{}));
    const char* devices[] = {"cpu", "cuda", "rocm", "metal", "vulkan", "webgpu", "hexagon", "level_zero", "opencl"};
    const char* syncs[] = {"producer_synced", "event", "consumer_stream"};
    const char* classes[] = {"standard", "host_pinned", "unified", "peer"};
    for (uint8_t dev = 0; dev < 9; ++dev) {
        for (uint8_t sync = 0; sync < 3; ++sync) {
            for (uint8_t cls = 0; cls < 4; ++cls) {
                named.buffers[0].device_tag = static_cast<DeviceTag>(dev);
                named.buffers[0].sync_mode = static_cast<SyncMode>(sync);
                named.buffers[0].memory_class = static_cast<MemoryClass>(cls);
                ASSERT_TRUE(RoundTrips(named));
                const Doc b = doc_of(named)["buffers"][0];
                EXPECT_EQ(b["device_tag"], devices[dev]);
                EXPECT_EQ(b["sync_mode"], syncs[sync]);
                EXPECT_EQ(b["memory_class"], classes[cls]);
            }
        }
    }

    // Raw values of the layout enums.
    TensorDescriptor paged = with(ElementType::kFloat16, {32, 2, 4},
                                  BlockPagedLayout{.kv_role = static_cast<KvRole>(9),
                                                   .index_type = static_cast<BlockTableIndexType>(0xAA)});
    EXPECT_TRUE(RoundTrips(paged));
    EXPECT_EQ(doc_of(paged)["layout"]["kv_role"], 9);
    EXPECT_EQ(doc_of(paged)["layout"]["block_table_index_type"], 0xAA);
    TensorDescriptor head = with(ElementType::kFloat32, {8},
                                 CompositeLayout{static_cast<CompositionRule>(0xF0), static_cast<CombineOp>(7), 0xFFFFFFFF});
    EXPECT_TRUE(RoundTrips(head));
    EXPECT_EQ(doc_of(head)["layout"].dump(),
              R"({"tag":"composite","composition_rule":240,"combine_op":7,"member_count":4294967295})");
    head.layout = CompositeLayout{static_cast<CompositionRule>(0x00), CombineOp::kNone, 1};
    EXPECT_TRUE(RoundTrips(head));
    EXPECT_EQ(doc_of(head)["layout"]["composition_rule"], 0);

    // An extension layout whose tag is that of a named layout stays an extension layout.
    TensorDescriptor ext = with(ElementType::kFloat32, {4}, ExtensionLayout{0x01, 0, {}});
    EXPECT_TRUE(RoundTrips(ext));
    EXPECT_EQ(doc_of(ext)["layout"].dump(), R"({"tag":1,"extension_layout_id":0,"extension_data":""})");
    // Likewise an opaque scheme with the tag of a named scheme.
    TensorDescriptor opaque = sized(with(ElementType::kInt8, {4}, RowMajorLayout{}));
    opaque.quantization = QuantizationDescriptor{OpaqueQuantization{.scheme_tag = 0x01, .payload = {0xFF}}, {}};
    EXPECT_TRUE(RoundTrips(opaque));
    EXPECT_EQ(doc_of(opaque)["quantization"]["scheme"], 1);
}

// Every built-in element type is written under its spec name, and read back.
TEST(JsonRoundTrip, EveryElementTypeName) {
    size_t named = 0;
    for (int tag = 0; tag <= 0xFF; ++tag) {
        const auto t = static_cast<ElementType>(tag);
        TensorDescriptor d = with(t, {2}, RowMajorLayout{});
        ASSERT_TRUE(RoundTrips(d)) << tag;
        const Doc doc = doc_of(d);
        if (is_builtin(t)) {
            EXPECT_EQ(doc["element_type"], std::string(type_name(t)));
            ++named;
        } else {
            EXPECT_EQ(doc["element_type"], tag);
        }
    }
    EXPECT_EQ(named, 26U);
}

// Invalid models are carried as they are: from_json checks structure only.
TEST(JsonRoundTrip, InvalidModelsAreCarriedUnchanged) {
    TensorDescriptor d = with(ElementType::kFloat32, {3, 4}, CsrLayout{99});  // no buffers, nnz too big
    d.byte_offset = 17;
    d.statistics = Statistics{.computed_mask = 0x40, .sparsity_ratio = 7.0, .value_stddev = -1.0};
    d.shard = ShardDescriptor{.parent_shape = {1}, .shard_offset = {}};
    EXPECT_FALSE(check_descriptor(d).ok());
    EXPECT_TRUE(RoundTrips(d));

    // The same document is accepted by from_json and refused by check_descriptor and encode.
    Doc doc = doc_of(sized(with(ElementType::kFloat32, {3, 4}, RowMajorLayout{})));
    doc["buffers"][0]["alignment"] = 3;
    auto read = from_doc(doc);
    ASSERT_TRUE(read.ok()) << read.error().to_string();
    EXPECT_EQ(read->buffers[0].alignment, 3U);
    const Status checked = check_descriptor(*read);
    ASSERT_FALSE(checked.ok());
    EXPECT_EQ(checked.error().code(), ErrorCode::kInvalidBufferHandle);
    EXPECT_FALSE(encode(*read).ok());
}

// Hand-written JSON may use other spellings of the same values; the model it
// gives is written back in the canonical form, which is then stable.
TEST(JsonRoundTrip, HandWrittenSpellingsReachTheCanonicalFormAndStay) {
    const std::string hand = R"(
      {
        "element_type": 72,
        "version_minor": 0, "version_major": 1,
        "shape": [ 4, "dynamic" ],
        "byte_offset": 0,
        "layout": { "tag": "tiled",
                    "levels": [ { "tile_shape": [2, 2], "outer_layout": 1, "inner_layout": "row_major",
                                  "outer_strides": [], "inner_strides": [] } ] },
        "buffers": [ { "byte_size": 16, "alignment": 64, "device_tag": 0, "sync_mode": 0, "memory_class": 0 },
                     { "byte_size": 4,  "alignment": 64, "device_tag": "cpu", "sync_mode": "producer_synced",
                       "memory_class": "standard" } ],
        "quantization": { "scheme": "per_tensor_affine", "scale": 2, "zero_point": 0,
                          "trailing_padding": "" },
        "statistics": { "computed_mask": 4, "nnz": 0, "sparsity_ratio": 0, "value_min": "nan",
                        "value_max": "inf", "value_abs_max": "-inf", "value_mean": 1e0,
                        "value_stddev": 1E-1, "nm_n": 0, "nm_m": 0, "has_nan": false, "has_inf": true },
        "extension_type": { "bit_width": 4, "packing_factor": 2, "is_float": false, "is_signed": true,
                            "sign_bits": 0, "exponent_bits": 0, "mantissa_bits": 0, "exponent_bias": 0,
                            "has_nan": false, "has_inf": false },
        "unknown_trailing_bytes": "DEADbeef"
      })";
    auto d = from_json(hand);
    ASSERT_TRUE(d.ok()) << d.error().to_string();
    EXPECT_EQ(d->element_type, ElementType::kInt4);
    EXPECT_EQ(d->shape, (Shape{4, kDynamicDim}));
    EXPECT_EQ(std::get<TiledLayout>(d->layout).levels[0].outer_layout, LayoutTag::kRowMajor);
    EXPECT_EQ(std::get<PerTensorAffine>(d->quantization->scheme).scale, 2.0F);
    EXPECT_TRUE(d->quantization->trailing_padding.empty());
    EXPECT_EQ(std::bit_cast<uint64_t>(d->statistics->value_min), 0x7FF8000000000000U);
    EXPECT_EQ(d->statistics->value_stddev, 0.1);
    EXPECT_EQ(d->unknown_trailing_bytes, (std::vector<uint8_t>{0xDE, 0xAD, 0xBE, 0xEF}));

    const std::string canonical = to_json(*d);
    EXPECT_EQ(canonical,
              R"({"version_major":1,"version_minor":0,"element_type":"int4","shape":[4,"dynamic"],"byte_offset":0,)"
              R"("layout":{"tag":"tiled","levels":[{"tile_shape":[2,2],"outer_layout":"row_major",)"
              R"("inner_layout":"row_major"}]},"buffers":[{"byte_size":16,"alignment":64,"device_tag":"cpu",)"
              R"("sync_mode":"producer_synced","memory_class":"standard"},{"byte_size":4,"alignment":64,)"
              R"("device_tag":"cpu","sync_mode":"producer_synced","memory_class":"standard"}],)"
              R"("quantization":{"scheme":"per_tensor_affine","scale":2.0,"zero_point":0},)"
              R"("statistics":{"computed_mask":4,"nnz":0,"sparsity_ratio":0.0,"value_min":"nan:0x7ff8000000000000",)"
              R"("value_max":"inf","value_abs_max":"-inf","value_mean":1.0,"value_stddev":0.1,"nm_n":0,"nm_m":0,)"
              R"("has_nan":false,"has_inf":true},"extension_type":{"bit_width":4,"packing_factor":2,)"
              R"("is_float":false,"is_signed":true,"sign_bits":0,"exponent_bits":0,"mantissa_bits":0,)"
              R"("exponent_bias":0,"has_nan":false,"has_inf":false},"unknown_trailing_bytes":"deadbeef"})");
    auto again = from_json(canonical);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *d);
    EXPECT_EQ(to_json(*again), canonical);
}

// Non-finite CBOR numbers (which JSON text cannot hold) are read as they are.
TEST(JsonRoundTrip, CborNativeNonFiniteNumbersAreAccepted) {
    TensorDescriptor d = sized(with(ElementType::kInt8, {4}, RowMajorLayout{}));
    d.quantization = QuantizationDescriptor{PerTensorAffine{1.0F, 0}, {}};
    d.statistics = Statistics{};
    Doc doc = doc_of(d);
    doc["quantization"]["scale"] = -std::numeric_limits<double>::infinity();
    doc["statistics"]["value_max"] = std::numeric_limits<double>::infinity();
    doc["statistics"]["value_min"] = std::numeric_limits<double>::quiet_NaN();
    auto back = from_cbor(Doc::to_cbor(doc));
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    EXPECT_EQ(std::get<PerTensorAffine>(back->quantization->scheme).scale, -std::numeric_limits<float>::infinity());
    EXPECT_EQ(back->statistics->value_max, std::numeric_limits<double>::infinity());
    EXPECT_TRUE(std::isnan(back->statistics->value_min));
    doc["quantization"]["scale"] = std::numeric_limits<double>::quiet_NaN();
    auto nan_scale = from_cbor(Doc::to_cbor(doc));
    ASSERT_TRUE(nan_scale.ok()) << nan_scale.error().to_string();
    EXPECT_TRUE(std::isnan(std::get<PerTensorAffine>(nan_scale->quantization->scheme).scale));
}

// Every conformance vector: wire -> model -> JSON/CBOR -> model -> wire, byte for byte.
TEST(JsonRoundTrip, EveryConformanceVector) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(HURRAY_CONFORMANCE_DIR) / "descriptors";
    ASSERT_TRUE(fs::is_directory(dir)) << dir;
    size_t checked = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
        SCOPED_TRACE(entry.path().filename().string());
        std::ifstream in(entry.path(), std::ios::binary);
        const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        auto d = decode(bytes);
        ASSERT_TRUE(d.ok()) << d.error().to_string();
        EXPECT_TRUE(RoundTrips(*d));
        auto back = from_json(to_json(*d, 2));
        ASSERT_TRUE(back.ok());
        auto wire = encode(*back);
        ASSERT_TRUE(wire.ok()) << wire.error().to_string();
        EXPECT_EQ(*wire, bytes);
        ++checked;
    }
    EXPECT_GE(checked, 11U);
}

// A negative indent gives one line, as -1 does.
TEST(JsonRoundTrip, IndentChoosesTheLayoutOfTheText) {
    const TensorDescriptor d = sized(with(ElementType::kFloat32, {3, 4}, RowMajorLayout{}));
    EXPECT_EQ(to_json(d, -7), to_json(d));
    EXPECT_EQ(to_json(d).find('\n'), std::string::npos);
    EXPECT_NE(to_json(d, 0).find('\n'), std::string::npos);
    EXPECT_NE(to_json(d, 2).find("\n  \"shape\": [\n    3,"), std::string::npos);
    EXPECT_EQ(to_json(d, 1000000), to_json(d, kMaxJsonIndent));  // capped
    EXPECT_NE(to_json(d, kMaxJsonIndent).find(std::string("\n").append(kMaxJsonIndent, ' ').append("\"shape\"")),
              std::string::npos);
}

}  // namespace
