// SPDX-License-Identifier: Apache-2.0
// What from_json and from_cbor refuse, and how they say it: every error is
// kInvalidDocument with a message naming the JSON path of the offending value.
// Malformed and hostile input (truncation, mutation, deep nesting) fails cleanly.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <utility>
#include <string>
#include <vector>

#include "json_test_support.hpp"

namespace {

using namespace hurray;            // NOLINT(google-build-using-namespace)
using namespace hurray_json_test;  // NOLINT(google-build-using-namespace)

TensorDescriptor dense() { return sized(with(ElementType::kFloat32, {3, 4}, RowMajorLayout{})); }

TensorDescriptor tiled() {
    return sized(with(ElementType::kFloat32, {4, 4, 4},
                      TiledLayout{{TiledLevel{.tile_shape = {2, 2, 2}, .outer_strides = {}, .inner_strides = {}}}}));
}

// A descriptor with every section, to mutate.
TensorDescriptor rich() {
    TensorDescriptor d = must(make_per_block_quantized(ElementType::kInt4, {4, 64}, 1, 32, ElementType::kFloat16, false));
    d.shard = ShardDescriptor{.parent_shape = {8, 64}, .shard_offset = {4, 0}};
    d.statistics = Statistics{.computed_mask = kStatAllValid, .value_min = -1.5, .value_max = 2.0};
    d.composite_member = CompositeMember{MemberRole::kBase};
    d.unknown_trailing_bytes = {1, 2};
    d.version_minor = 1;
    return d;
}

// A document edited by `edit`, then read.
Result<TensorDescriptor> edited(const TensorDescriptor& d, const std::function<void(Doc&)>& edit) {
    Doc doc = doc_of(d);
    edit(doc);
    return from_doc(doc);
}

TEST(JsonRejection, TheDocumentMustBeAnObject) {
    EXPECT_TRUE(FailsWith(from_json("[]"), "document: expected an object, got an array"));
    EXPECT_TRUE(FailsWith(from_json("42"), "document: expected an object, got 42"));
    EXPECT_TRUE(FailsWith(from_json("null"), "document: expected an object, got null"));
    EXPECT_TRUE(FailsWith(from_json(R"("float32")"), R"(document: expected an object, got the string "float32")"));
}

TEST(JsonRejection, MissingFieldsAreNamed) {
    const char* required[] = {"version_major", "version_minor", "element_type", "shape",
                              "byte_offset",   "layout",        "buffers"};
    for (const char* key : required) {
        EXPECT_TRUE(FailsWith(edited(dense(), [&](Doc& d) { d.erase(key); }), std::string(key) + ": missing"));
    }
    EXPECT_TRUE(FailsWith(edited(tiled(), [](Doc& d) { d["layout"]["levels"][0].erase("tile_shape"); }),
                          "layout.levels[0].tile_shape: missing"));
    EXPECT_TRUE(FailsWith(edited(tiled(), [](Doc& d) { d["layout"].erase("levels"); }), "layout.levels: missing"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["layout"].erase("tag"); }), "layout.tag: missing"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["buffers"][0].erase("memory_class"); }),
                          "buffers[0].memory_class: missing"));
    EXPECT_TRUE(FailsWith(edited(rich(), [](Doc& d) { d["quantization"].erase("block_size"); }),
                          "quantization.block_size: missing"));
    EXPECT_TRUE(FailsWith(edited(rich(), [](Doc& d) { d["statistics"].erase("has_inf"); }),
                          "statistics.has_inf: missing"));
    EXPECT_TRUE(FailsWith(edited(rich(), [](Doc& d) { d["shard"].erase("shard_offset"); }),
                          "shard.shard_offset: missing"));
    EXPECT_TRUE(FailsWith(edited(rich(), [](Doc& d) { d["composite_member"].erase("member_role"); }),
                          "composite_member.member_role: missing"));
}

// Every required member of every object of a rich document: removing it fails
// with "<path>: missing"; optional members may go.
TEST(JsonRejection, RemovingAnyRequiredMemberIsReported) {
    const TensorDescriptor base = rich();
    const Doc doc = doc_of(base);
    const Doc flat = doc.flatten();
    size_t removed = 0;
    for (const auto& [pointer, value] : flat.items()) {
        nlohmann::json_pointer<std::string> ptr(pointer);
        // Walk from the leaf up to the top, removing each ancestor member in turn.
        while (!ptr.empty()) {
            const std::string key = ptr.back();
            const auto parent = ptr.parent_pointer();
            Doc copy = doc;
            if (copy[parent].is_object()) {
                copy[parent].erase(key);
                auto r = from_doc(copy);
                const bool optional = key == "zero_point_buffer_index" || key == "unknown_trailing_bytes" ||
                                      key == "quantization" || key == "shard" || key == "statistics" ||
                                      key == "composite_member" || key == "extension_type";
                if (optional) {
                    EXPECT_TRUE(r.ok()) << pointer << ": " << r.error().to_string();
                } else {
                    EXPECT_TRUE(FailsMentioning(r, ": missing")) << pointer;
                    ++removed;
                }
            }
            ptr = parent;
        }
    }
    EXPECT_GT(removed, 40U);
}

TEST(JsonRejection, UnknownFieldsAreNamed) {
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["flags"] = 0; }), "flags: unknown field"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["layout"]["nnz"] = 3; }), "layout.nnz: unknown field"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["buffers"][0]["reserved"] = 0; }),
                          "buffers[0].reserved: unknown field"));
    EXPECT_TRUE(FailsWith(edited(tiled(), [](Doc& d) { d["layout"]["levels"][0]["tile"] = 1; }),
                          "layout.levels[0].tile: unknown field"));
    EXPECT_TRUE(FailsWith(edited(rich(), [](Doc& d) { d["quantization"]["scale"] = 1; }),
                          "quantization.scale: unknown field"));
    EXPECT_TRUE(FailsWith(edited(rich(), [](Doc& d) { d["statistics"]["mean"] = 1; }),
                          "statistics.mean: unknown field"));
    EXPECT_TRUE(FailsWith(edited(rich(), [](Doc& d) { d["shard"]["parent"] = 1; }), "shard.parent: unknown field"));
    EXPECT_TRUE(FailsWith(edited(rich(), [](Doc& d) { d["composite_member"]["reserved"] = ""; }),
                          "composite_member.reserved: unknown field"));
    TensorDescriptor priv = dense();
    priv.extension_type = ExtensionTypeDescriptor{};
    EXPECT_TRUE(FailsWith(edited(priv, [](Doc& d) { d["extension_type"]["bias"] = 1; }),
                          "extension_type.bias: unknown field"));
    // A long key is shortened in the message.
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d[std::string(100, 'k')] = 0; }),
                          std::string(40, 'k') + "...: unknown field"));
    // null is not "absent".
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["shard"] = nullptr; }),
                          "shard: expected an object, got null"));
}

TEST(JsonRejection, WrongTypesAreNamedWithTheirPath) {
    EXPECT_TRUE(FailsWith(edited(tiled(), [](Doc& d) { d["layout"]["levels"][0]["tile_shape"][2] = "2"; }),
                          R"(layout.levels[0].tile_shape[2]: expected an unsigned integer, got the string "2")"));
    EXPECT_TRUE(FailsWith(edited(tiled(), [](Doc& d) { d["layout"]["levels"][0]["tile_shape"] = 2; }),
                          "layout.levels[0].tile_shape: expected an array, got 2"));
    EXPECT_TRUE(FailsWith(edited(tiled(), [](Doc& d) { d["layout"]["levels"] = Doc::object(); }),
                          "layout.levels: expected an array, got an object"));
    EXPECT_TRUE(FailsWith(edited(tiled(), [](Doc& d) { d["layout"]["levels"][0] = Doc::array(); }),
                          "layout.levels[0]: expected an object, got an array"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["version_major"] = true; }),
                          "version_major: expected an unsigned integer, got true"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["byte_offset"] = 1.5; }),
                          "byte_offset: expected an unsigned integer, got the number 1.5"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["byte_offset"] = 2.0; }),
                          "byte_offset: expected an unsigned integer, got the number 2.0"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["shape"][1] = "?"; }),
                          R"(shape[1]: expected an unsigned integer or "dynamic", got the string "?")"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["shape"][1] = nullptr; }),
                          "shape[1]: expected an unsigned integer, got null"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["shape"] = "3x4"; }),
                          R"(shape: expected an array, got the string "3x4")"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["buffers"] = Doc::object(); }),
                          "buffers: expected an array, got an object"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["buffers"][0] = 48; }),
                          "buffers[0]: expected an object, got 48"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["layout"] = "row_major"; }),
                          R"(layout: expected an object, got the string "row_major")"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["layout"]["tag"] = Doc::object(); }),
                          "layout.tag: expected a layout name or a number, got an object"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["element_type"] = false; }),
                          "element_type: expected a name or a number, got false"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["element_type"] = 3.0; }),
                          "element_type: expected an unsigned integer, got the number 3.0"));
    EXPECT_TRUE(FailsWith(edited(rich(), [](Doc& d) { d["quantization"]["scheme"] = nullptr; }),
                          "quantization.scheme: expected a scheme name or a number, got null"));
    EXPECT_TRUE(FailsWith(edited(rich(), [](Doc& d) { d["statistics"]["has_nan"] = 1; }),
                          "statistics.has_nan: expected true or false, got 1"));
    EXPECT_TRUE(FailsWith(edited(rich(), [](Doc& d) { d["statistics"]["value_min"] = "-1.5"; }),
                          R"(statistics.value_min: expected a number or one of "inf", "-inf", "nan", )"
                          R"("nan:0x<bits>", got the string "-1.5")"));
    EXPECT_TRUE(FailsWith(edited(rich(), [](Doc& d) { d["statistics"]["value_max"] = Doc::array(); }),
                          R"(statistics.value_max: expected a number or one of "inf", "-inf", "nan", )"
                          R"("nan:0x<bits>", got an array)"));
    EXPECT_TRUE(FailsWith(edited(rich(), [](Doc& d) { d["unknown_trailing_bytes"] = Doc::array({1, 2}); }),
                          "unknown_trailing_bytes: expected a hex string, got an array"));
    EXPECT_TRUE(FailsWith(edited(rich(), [](Doc& d) { d["quantization"]["zero_point_buffer_index"] = "2"; }),
                          R"(quantization.zero_point_buffer_index: expected an unsigned integer, got the string "2")"));

    TensorDescriptor pt = dense();
    pt.quantization = QuantizationDescriptor{PerTensorAffine{0.5F, 1}, {}};
    EXPECT_TRUE(FailsWith(edited(pt, [](Doc& d) { d["quantization"]["scale"] = true; }),
                          R"(quantization.scale: expected a number or one of "inf", "-inf", "nan", )"
                          R"("nan:0x<bits>", got true)"));
    EXPECT_TRUE(FailsWith(edited(pt, [](Doc& d) { d["quantization"]["zero_point"] = 0.5; }),
                          "quantization.zero_point: expected an integer, got the number 0.5"));
    TensorDescriptor strided = sized(with(ElementType::kInt8, {4, 4}, StridedLayout{{4, 1}}));
    EXPECT_TRUE(FailsWith(edited(strided, [](Doc& d) { d["layout"]["strides"][0] = "4"; }),
                          R"(layout.strides[0]: expected an integer, got the string "4")"));
    // A long string value is shortened in the message.
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["byte_offset"] = std::string(50, 'x'); }),
                          std::string("byte_offset: expected an unsigned integer, got the string \"").append(40, 'x').append("...\"")));
}

// CBOR byte strings are not the hex strings the form uses.
TEST(JsonRejection, CborByteStringsAreNotHexStrings) {
    Doc doc = doc_of(rich());
    doc["unknown_trailing_bytes"] = Doc::binary({1, 2});
    EXPECT_TRUE(FailsWith(from_cbor(Doc::to_cbor(doc)), "unknown_trailing_bytes: expected a hex string, got a byte string"));
}

// Values only CBOR can hold, in integer fields, are named in the message.
TEST(JsonRejection, CborNonFiniteNumbersInIntegerFields) {
    Doc doc = doc_of(dense());
    doc["byte_offset"] = std::numeric_limits<double>::quiet_NaN();
    EXPECT_TRUE(FailsWith(from_cbor(Doc::to_cbor(doc)), "byte_offset: expected an unsigned integer, got the number NaN"));
    doc["byte_offset"] = -std::numeric_limits<double>::infinity();
    EXPECT_TRUE(FailsWith(from_cbor(Doc::to_cbor(doc)), "byte_offset: expected an unsigned integer, got the number -inf"));
    doc["byte_offset"] = std::numeric_limits<double>::infinity();
    EXPECT_TRUE(FailsWith(from_cbor(Doc::to_cbor(doc)), "byte_offset: expected an unsigned integer, got the number inf"));
}

TEST(JsonRejection, UnknownNamesAreNamed) {
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["element_type"] = "float33"; }),
                          R"(element_type: unknown element type "float33")"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["element_type"] = "FLOAT32"; }),
                          R"(element_type: unknown element type "FLOAT32")"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["element_type"] = ""; }),
                          R"(element_type: unknown element type "")"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["layout"]["tag"] = "extension"; }),
                          R"(layout.tag: unknown layout "extension")"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["layout"]["tag"] = "row-major"; }),
                          R"(layout.tag: unknown layout "row-major")"));
    EXPECT_TRUE(FailsWith(edited(tiled(), [](Doc& d) { d["layout"]["levels"][0]["inner_layout"] = "z_order"; }),
                          R"(layout.levels[0].inner_layout: unknown layout "z_order")"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["buffers"][0]["device_tag"] = "tpu"; }),
                          R"(buffers[0].device_tag: unknown device tag "tpu")"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["buffers"][0]["device_tag"] = "private"; }),
                          R"(buffers[0].device_tag: unknown device tag "private")"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["buffers"][0]["sync_mode"] = "lazy"; }),
                          R"(buffers[0].sync_mode: unknown sync mode "lazy")"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["buffers"][0]["memory_class"] = "STANDARD"; }),
                          R"(buffers[0].memory_class: unknown memory class "STANDARD")"));
    EXPECT_TRUE(FailsWith(edited(rich(), [](Doc& d) { d["quantization"]["scheme"] = "int8_affine"; }),
                          R"(quantization.scheme: unknown quantization scheme "int8_affine")"));
    EXPECT_TRUE(FailsWith(edited(rich(), [](Doc& d) { d["quantization"]["scheme"] = "private"; }),
                          R"(quantization.scheme: unknown quantization scheme "private")"));
    EXPECT_TRUE(FailsWith(edited(rich(), [](Doc& d) { d["quantization"]["scale_type"] = "half"; }),
                          R"(quantization.scale_type: unknown element type "half")"));
    EXPECT_TRUE(FailsWith(edited(rich(), [](Doc& d) { d["composite_member"]["member_role"] = "head"; }),
                          R"(composite_member.member_role: unknown member role "head")"));
    const TensorDescriptor paged = with(ElementType::kFloat16, {32, 2, 4}, BlockPagedLayout{});
    EXPECT_TRUE(FailsWith(edited(paged, [](Doc& d) { d["layout"]["kv_role"] = "query"; }),
                          R"(layout.kv_role: unknown kv_role "query")"));
    EXPECT_TRUE(FailsWith(edited(paged, [](Doc& d) { d["layout"]["block_table_index_type"] = "uint16"; }),
                          R"(layout.block_table_index_type: unknown block table index type "uint16")"));
    const TensorDescriptor head = must(make_composite_head(ElementType::kFloat32, {8}, CompositionRule::kGroup, 1));
    EXPECT_TRUE(FailsWith(edited(head, [](Doc& d) { d["layout"]["composition_rule"] = "union"; }),
                          R"(layout.composition_rule: unknown composition rule "union")"));
    EXPECT_TRUE(FailsWith(edited(head, [](Doc& d) { d["layout"]["combine_op"] = "multiply"; }),
                          R"(layout.combine_op: unknown combine op "multiply")"));
}

TEST(JsonRejection, OutOfRangeIntegersAreNamed) {
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["buffers"][0]["alignment"] = 4294967296U; }),
                          "buffers[0].alignment: 4294967296 is out of range for uint32"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["version_major"] = 256; }),
                          "version_major: 256 is out of range for uint8"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["byte_offset"] = -1; }),
                          "byte_offset: expected an unsigned integer, got -1"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["element_type"] = 256; }),
                          "element_type: 256 is out of range for uint8"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["element_type"] = -3; }),
                          "element_type: expected an unsigned integer, got -3"));
    EXPECT_TRUE(FailsWith(edited(dense(), [](Doc& d) { d["buffers"][0]["sync_mode"] = 300; }),
                          "buffers[0].sync_mode: 300 is out of range for uint8"));

    // Numbers beyond 64 bits: the text is the only place they exist.
    std::string text = to_json(dense());
    const std::string size = R"("byte_size":48)";
    text.replace(text.find(size), size.size(), R"("byte_size":18446744073709551616)");
    EXPECT_TRUE(FailsWith(from_json(text), "buffers[0].byte_size: 1.8446744073709552e+19 is out of range for uint64"));

    TensorDescriptor strided = sized(with(ElementType::kInt8, {4, 4}, StridedLayout{{4, 1}}));
    std::string st = to_json(strided);
    st.replace(st.find("[4,1]"), 5, "[9223372036854775808,1]");
    EXPECT_TRUE(FailsWith(from_json(st), "layout.strides[0]: 9223372036854775808 is out of range for int64"));
    st = to_json(strided);
    st.replace(st.find("[4,1]"), 5, "[4,-9223372036854775809]");
    EXPECT_TRUE(FailsWith(from_json(st), "layout.strides[1]: -9.223372036854776e+18 is out of range for int64"));

    TensorDescriptor pt = dense();
    pt.quantization = QuantizationDescriptor{PerTensorAffine{0.5F, 1}, {}};
    EXPECT_TRUE(FailsWith(edited(pt, [](Doc& d) { d["quantization"]["zero_point"] = 2147483648LL; }),
                          "quantization.zero_point: 2147483648 is out of range for int32"));
    EXPECT_TRUE(FailsWith(edited(pt, [](Doc& d) { d["quantization"]["zero_point"] = -2147483649LL; }),
                          "quantization.zero_point: -2147483649 is out of range for int32"));
    EXPECT_TRUE(FailsWith(edited(pt, [](Doc& d) { d["quantization"]["scale"] = 1e39; }),
                          "quantization.scale: 1e+39 is out of range for float32"));
    EXPECT_TRUE(FailsWith(edited(pt, [](Doc& d) { d["quantization"]["scale"] = -3.5e38; }),
                          "quantization.scale: -3.5e+38 is out of range for float32"));
    // Up to halfway to 2^128, a number rounds to FLT_MAX; from halfway on, it is out of range.
    auto near_max = edited(pt, [](Doc& d) { d["quantization"]["scale"] = -0x1.fffffefffffffp127; });
    ASSERT_TRUE(near_max.ok());
    EXPECT_EQ(std::get<PerTensorAffine>(near_max->quantization->scheme).scale, -FLT_MAX);
    EXPECT_TRUE(FailsMentioning(edited(pt, [](Doc& d) { d["quantization"]["scale"] = 0x1.ffffffp127; }),
                                "is out of range for float32"));
    // In range: rounded to the nearest float32.
    auto rounded = edited(pt, [](Doc& d) { d["quantization"]["scale"] = 0.1; });
    ASSERT_TRUE(rounded.ok());
    EXPECT_EQ(std::get<PerTensorAffine>(rounded->quantization->scheme).scale, 0.1F);

    TensorDescriptor opaque = dense();
    opaque.quantization = QuantizationDescriptor{OpaqueQuantization{}, {}};
    EXPECT_TRUE(FailsWith(edited(opaque, [](Doc& d) { d["quantization"]["flags"] = 65536; }),
                          "quantization.flags: 65536 is out of range for uint16"));
    EXPECT_TRUE(FailsWith(edited(opaque, [](Doc& d) { d["quantization"]["scheme"] = 256; }),
                          "quantization.scheme: 256 is out of range for uint8"));
    EXPECT_TRUE(FailsWith(edited(opaque, [](Doc& d) { d["quantization"]["scheme"] = -1; }),
                          "quantization.scheme: expected an unsigned integer, got -1"));
    const TensorDescriptor ext = with(ElementType::kFloat32, {4}, ExtensionLayout{});
    EXPECT_TRUE(FailsWith(edited(ext, [](Doc& d) { d["layout"]["tag"] = 1000; }),
                          "layout.tag: 1000 is out of range for uint8"));
    EXPECT_TRUE(FailsWith(edited(ext, [](Doc& d) { d["layout"]["tag"] = 1.5; }),
                          "layout.tag: expected an unsigned integer, got the number 1.5"));
    EXPECT_TRUE(FailsWith(edited(ext, [](Doc& d) { d["layout"]["extension_layout_id"] = -1; }),
                          "layout.extension_layout_id: expected an unsigned integer, got -1"));
}

TEST(JsonRejection, FloatStringsMustBeExactlyOneOfTheForms) {
    TensorDescriptor st = dense();
    st.statistics = Statistics{};
    auto with_min = [&](const std::string& s) {
        return edited(st, [&](Doc& d) { d["statistics"]["value_min"] = s; });
    };
    for (const char* bad : {"nan:0x7ff0000000000000",  // +inf, not a NaN
                            "nan:0x0", "nan:0x", "nan:0x7ff80000000000001", "nan:0xzz", "nan:7ff8000000000001",
                            "NaN", "Infinity", "+inf", "-nan", "1.5", "", "nan:0x7ff8 "}) {
        EXPECT_TRUE(FailsMentioning(with_min(bad), "statistics.value_min: expected a number or one of")) << bad;
    }
    auto upper = with_min("nan:0x7FF800000000000A");
    ASSERT_TRUE(upper.ok());
    EXPECT_EQ(std::bit_cast<uint64_t>(upper->statistics->value_min), 0x7FF800000000000AU);
    auto short_digits = with_min("nan:0xfff8000000000001");
    ASSERT_TRUE(short_digits.ok());

    TensorDescriptor pt = dense();
    pt.quantization = QuantizationDescriptor{PerTensorAffine{0.5F, 1}, {}};
    auto with_scale = [&](const std::string& s) {
        return edited(pt, [&](Doc& d) { d["quantization"]["scale"] = s; });
    };
    for (const char* bad : {"nan:0x7ff8000000000000",  // 16 digits: a float64 pattern
                            "nan:0x7f800000", "nan:0x", "inf ", "nan:0xg"}) {
        EXPECT_TRUE(FailsMentioning(with_scale(bad), "quantization.scale: expected a number or one of")) << bad;
    }
    for (const auto& [text, bits] : std::vector<std::pair<std::string, uint32_t>>{
             {"nan", 0x7FC00000}, {"inf", 0x7F800000}, {"-inf", 0xFF800000}, {"nan:0xffc00001", 0xFFC00001}}) {
        auto ok = with_scale(text);
        ASSERT_TRUE(ok.ok()) << text;
        EXPECT_EQ(std::bit_cast<uint32_t>(std::get<PerTensorAffine>(ok->quantization->scheme).scale), bits) << text;
    }
}

TEST(JsonRejection, HexStringsMustBeWholeBytes) {
    EXPECT_TRUE(FailsWith(edited(rich(), [](Doc& d) { d["unknown_trailing_bytes"] = "abc"; }),
                          "unknown_trailing_bytes: odd number of hex digits (3)"));
    EXPECT_TRUE(FailsWith(edited(rich(), [](Doc& d) { d["unknown_trailing_bytes"] = "0g"; }),
                          R"(unknown_trailing_bytes: character 1 of "0g" is not a hex digit)"));
    EXPECT_TRUE(FailsWith(edited(rich(), [](Doc& d) { d["unknown_trailing_bytes"] = "00 1"; }),
                          R"(unknown_trailing_bytes: character 2 of "00 1" is not a hex digit)"));
    EXPECT_TRUE(FailsWith(edited(rich(), [](Doc& d) { d["unknown_trailing_bytes"] = "0x01"; }),
                          R"(unknown_trailing_bytes: character 1 of "0x01" is not a hex digit)"));
    const TensorDescriptor ext = with(ElementType::kFloat32, {4}, ExtensionLayout{});
    EXPECT_TRUE(FailsWith(edited(ext, [](Doc& d) { d["layout"]["extension_data"] = 5; }),
                          "layout.extension_data: expected a hex string, got 5"));
    TensorDescriptor opaque = dense();
    opaque.quantization = QuantizationDescriptor{OpaqueQuantization{}, {}};
    EXPECT_TRUE(FailsWith(edited(opaque, [](Doc& d) { d["quantization"]["payload"] = "-1"; }),
                          R"(quantization.payload: character 0 of "-1" is not a hex digit)"));
    EXPECT_TRUE(FailsWith(edited(opaque, [](Doc& d) { d["quantization"]["trailing_padding"] = "0"; }),
                          "quantization.trailing_padding: odd number of hex digits (1)"));
    auto upper = edited(opaque, [](Doc& d) { d["quantization"]["payload"] = "ABcd"; });
    ASSERT_TRUE(upper.ok());
    EXPECT_EQ(std::get<OpaqueQuantization>(upper->quantization->scheme).payload, (std::vector<uint8_t>{0xAB, 0xCD}));
}

TEST(JsonRejection, DuplicateKeysAreRefused) {
    EXPECT_TRUE(FailsWith(from_json(R"({"version_major":1,"version_major":1})"), "version_major: duplicate key"));
    std::string text = to_json(dense());
    text.replace(text.find(R"("tag":"row_major")"), 17, R"("tag":"row_major","tag":"column_major")");
    EXPECT_TRUE(FailsWith(from_json(text), "layout.tag: duplicate key"));
    text = to_json(dense());
    text.replace(text.find(R"("alignment":64)"), 14, R"("alignment":64,"alignment":128)");
    EXPECT_TRUE(FailsWith(from_json(text), "buffers[0].alignment: duplicate key"));
    EXPECT_TRUE(FailsWith(from_json(R"([{"a":1,"a":2}])"), "[0].a: duplicate key"));
    const std::string long_key(100, 'k');
    EXPECT_TRUE(FailsWith(from_json("{\"" + long_key + "\":1,\"" + long_key + "\":1}"),
                          std::string(40, 'k') + "...: duplicate key"));
    const std::vector<uint8_t> cbor = {0xA1, 0x61, 'b', 0xA2, 0x61, 'a', 0x01, 0x61, 'a', 0x02};  // {"b":{"a":1,"a":2}}
    EXPECT_TRUE(FailsWith(from_cbor(cbor), "b.a: duplicate key"));
}

TEST(JsonRejection, MalformedJsonFailsWithTheByteOffset) {
    auto r = from_json("{");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidDocument);
    EXPECT_EQ(r.error().offset(), 1U);
    EXPECT_EQ(r.error().message(),
              "document: malformed JSON: parse error at line 1, column 2: syntax error while parsing object key - "
              "unexpected end of input; expected string literal");

    auto trailing = from_json(to_json(dense()) + " x");
    ASSERT_FALSE(trailing.ok());
    EXPECT_EQ(trailing.error().offset(), to_json(dense()).size() + 1);
    EXPECT_TRUE(FailsMentioning(trailing, "expected end of input"));

    EXPECT_TRUE(FailsMentioning(from_json(""), "document: malformed JSON: "));
    EXPECT_TRUE(FailsMentioning(from_json("   "), "unexpected end of input"));
    EXPECT_TRUE(FailsMentioning(from_json(R"({"a":1,})"), "malformed JSON"));
    EXPECT_TRUE(FailsMentioning(from_json(R"({'a':1})"), "malformed JSON"));
    EXPECT_TRUE(FailsMentioning(from_json(R"({"a":NaN})"), "malformed JSON"));
    EXPECT_TRUE(FailsMentioning(from_json(R"({"a":1e999})"), "number overflow"));
    EXPECT_TRUE(FailsMentioning(from_json("{\"a\":\"\xff\"}"), "malformed JSON"));      // invalid UTF-8
    EXPECT_TRUE(FailsMentioning(from_json("{\"a\":1} // c"), "malformed JSON"));        // no comments
    auto nul = from_json(std::string("{\"a\":1}\0x", 9));  // nlohmann/json would stop at the NUL
    EXPECT_TRUE(FailsWith(nul, "document: malformed JSON: a NUL byte"));
    EXPECT_EQ(nul.error().offset(), 7U);

    // A long token is cut short in the message.
    const std::string long_token = std::string("{\"").append(5000, 'a').append("\\q\"}");
    auto long_error = from_json(long_token);
    ASSERT_FALSE(long_error.ok());
    EXPECT_LT(long_error.error().message().size(), 400U);
    EXPECT_TRUE(long_error.error().message().ends_with("..."));

    // Every proper prefix of a valid document fails cleanly.
    const std::string text = to_json(rich());
    for (size_t n = 0; n < text.size(); ++n) {
        auto prefix = from_json(std::string_view(text).substr(0, n));
        ASSERT_FALSE(prefix.ok()) << n;
        ASSERT_EQ(prefix.error().code(), ErrorCode::kInvalidDocument);
    }
}

TEST(JsonRejection, MalformedCborFailsCleanly) {
    EXPECT_TRUE(FailsMentioning(from_cbor({}), "document: malformed CBOR: "));
    const std::vector<uint8_t> cbor = to_cbor(rich());
    for (size_t n = 0; n < cbor.size(); ++n) {
        auto prefix = from_cbor(std::span(cbor).first(n));
        ASSERT_FALSE(prefix.ok()) << n;
        ASSERT_EQ(prefix.error().code(), ErrorCode::kInvalidDocument);
    }
    std::vector<uint8_t> longer = cbor;
    longer.push_back(0x00);
    EXPECT_TRUE(FailsMentioning(from_cbor(longer), "malformed CBOR"));

    // A tag, a map with an integer key, a reserved byte, and an array claiming 2^64-1 items.
    const std::vector<uint8_t> tagged = {0xC1, 0x1A, 0x00, 0x00, 0x00, 0x00};
    EXPECT_TRUE(FailsMentioning(from_cbor(tagged), "malformed CBOR"));
    const std::vector<uint8_t> int_key = {0xA1, 0x01, 0x02};
    EXPECT_TRUE(FailsMentioning(from_cbor(int_key), "malformed CBOR"));
    const std::vector<uint8_t> reserved = {0x1C};
    EXPECT_TRUE(FailsMentioning(from_cbor(reserved), "malformed CBOR"));
    const std::vector<uint8_t> huge = {0x9B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01};
    EXPECT_TRUE(FailsMentioning(from_cbor(huge), "malformed CBOR"));
    const std::vector<uint8_t> huge_string = {0x7B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 'a'};
    EXPECT_TRUE(FailsMentioning(from_cbor(huge_string), "malformed CBOR"));
    // Valid CBOR that is not a descriptor document.
    const std::vector<uint8_t> array = {0x82, 0x01, 0x02};
    EXPECT_TRUE(FailsWith(from_cbor(array), "document: expected an object, got an array"));
}

// nlohmann/json's CBOR reader recurses per level: the depth limit must stop a
// 100,000-deep input long before the stack does. The JSON parser is iterative,
// but the limit applies there too.
TEST(JsonRejection, DeepNestingFailsCleanly) {
    constexpr size_t kDeep = 100000;
    const std::string deep_json = std::string(kDeep, '[') + std::string(kDeep, ']');
    EXPECT_TRUE(FailsWith(from_json(deep_json), "document: nested deeper than 64 levels"));
    std::string deep_objects;
    for (size_t i = 0; i < kDeep; ++i) {
        deep_objects += R"({"a":)";
    }
    deep_objects += "1";
    deep_objects.append(kDeep, '}');
    EXPECT_TRUE(FailsWith(from_json(deep_objects), "document: nested deeper than 64 levels"));
    const std::vector<uint8_t> deep_cbor(kDeep, 0x81);  // array(1) of array(1) of ...
    EXPECT_TRUE(FailsWith(from_cbor(deep_cbor), "document: nested deeper than 64 levels"));
    std::vector<uint8_t> deep_maps;
    for (size_t i = 0; i < kDeep; ++i) {
        deep_maps.insert(deep_maps.end(), {0xA1, 0x61, 'a'});
    }
    EXPECT_TRUE(FailsWith(from_cbor(deep_maps), "document: nested deeper than 64 levels"));

    // The limit itself: 64 levels parse (and fail the form), 65 do not.
    EXPECT_TRUE(FailsWith(from_json(std::string(kMaxDocumentDepth, '[') + std::string(kMaxDocumentDepth, ']')),
                          "document: expected an object, got an array"));
    EXPECT_TRUE(FailsWith(
        from_json(std::string(kMaxDocumentDepth + 1, '[') + std::string(kMaxDocumentDepth + 1, ']')),
        "document: nested deeper than 64 levels"));
}

// Every value of a rich document replaced by values of every other type: each
// read either succeeds or fails with kInvalidDocument naming that value's path.
TEST(JsonRejection, EveryValueReplacedByEveryKindOfValueFailsCleanly) {
    const Doc doc = doc_of(rich());
    const Doc flat = doc.flatten();
    const Doc replacements[] = {nullptr, true, -1, 1.5, 1e300, "x", "dynamic", "nan", "00",
                                Doc::array(), Doc::object(), 18446744073709551615ULL, 256};
    size_t failures = 0;
    size_t reads = 0;
    for (const auto& [pointer, value] : flat.items()) {
        const nlohmann::json_pointer<std::string> ptr(pointer);
        for (const Doc& replacement : replacements) {
            Doc copy = doc;
            copy[ptr] = replacement;
            auto r = from_doc(copy);
            auto c = from_cbor(Doc::to_cbor(copy));
            ++reads;
            ASSERT_EQ(r.ok(), c.ok()) << pointer;
            if (!r.ok()) {
                ++failures;
                ASSERT_EQ(r.error().code(), ErrorCode::kInvalidDocument);
                ASSERT_EQ(r.error().message(), c.error().message());
                // The path in the message is that of the value (JSON pointer /a/0/b is a[0].b).
                std::string path;
                for (size_t at = 1; at <= pointer.size();) {
                    const size_t end = std::min(pointer.find('/', at), pointer.size());
                    const std::string token = pointer.substr(at, end - at);
                    const bool index = !token.empty() && token.find_first_not_of("0123456789") == std::string::npos;
                    path += index ? "[" + token + "]" : (path.empty() ? "" : ".") + token;
                    at = end + 1;
                }
                EXPECT_TRUE(r.error().message().starts_with(path + ":")) << r.error().message() << " / " << path;
            }
        }
    }
    EXPECT_GT(reads, 500U);
    EXPECT_GT(failures, reads / 2);
}

// Random byte mutations of JSON text and CBOR never crash (run under ASan/UBSan).
TEST(JsonRejection, MutatedInputNeverCrashes) {
    const std::string text = to_json(rich());
    const std::vector<uint8_t> cbor = to_cbor(rich());
    uint64_t state = 0x9E3779B97F4A7C15;
    auto next = [&state] {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return state;
    };
    size_t accepted = 0;
    for (int round = 0; round < 4000; ++round) {
        std::string t = text;
        std::vector<uint8_t> c = cbor;
        const int edits = 1 + static_cast<int>(next() % 4);
        for (int e = 0; e < edits; ++e) {
            t[next() % t.size()] = static_cast<char>(next() & 0xFF);
            c[next() % c.size()] = static_cast<uint8_t>(next() & 0xFF);
        }
        auto rt = from_json(t);
        auto rc = from_cbor(c);
        accepted += (rt.ok() ? 1 : 0) + (rc.ok() ? 1 : 0);
        if (!rt.ok()) {
            ASSERT_EQ(rt.error().code(), ErrorCode::kInvalidDocument);
        }
        if (!rc.ok()) {
            ASSERT_EQ(rc.error().code(), ErrorCode::kInvalidDocument);
        }
    }
    EXPECT_LT(accepted, 8000U);
}

}  // namespace
