// SPDX-License-Identifier: Apache-2.0
// Golden documents, written out literally: the JSON form of the worked example of
// metadata.md (float32 [3, 4], row-major, one 192-byte CPU buffer aligned to 64),
// compact and indented, its CBOR bytes, and a quantized descriptor.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "json_test_support.hpp"

namespace {

using namespace hurray;            // NOLINT(google-build-using-namespace)
using namespace hurray_json_test;  // NOLINT(google-build-using-namespace)

TensorDescriptor worked_example() {
    TensorDescriptor d;
    d.element_type = ElementType::kFloat32;
    d.shape = {3, 4};
    d.buffers = {BufferHandle{.byte_size = 192, .alignment = 64}};
    return d;
}

constexpr const char* kWorkedExample =
    R"({"version_major":1,"version_minor":0,"element_type":"float32","shape":[3,4],"byte_offset":0,)"
    R"("layout":{"tag":"row_major"},"buffers":[{"byte_size":192,"alignment":64,"device_tag":"cpu",)"
    R"("sync_mode":"producer_synced","memory_class":"standard"}]})";

constexpr const char* kWorkedExampleIndented = R"({
  "version_major": 1,
  "version_minor": 0,
  "element_type": "float32",
  "shape": [
    3,
    4
  ],
  "byte_offset": 0,
  "layout": {
    "tag": "row_major"
  },
  "buffers": [
    {
      "byte_size": 192,
      "alignment": 64,
      "device_tag": "cpu",
      "sync_mode": "producer_synced",
      "memory_class": "standard"
    }
  ]
})";

TEST(JsonGolden, WorkedExampleCompact) {
    const TensorDescriptor d = worked_example();
    ASSERT_TRUE(check_descriptor(d).ok());
    auto wire = encode(d);
    ASSERT_TRUE(wire.ok());
    EXPECT_EQ(wire->size(), 61U);  // metadata.md § Worked Example
    EXPECT_EQ(to_json(d), kWorkedExample);
    auto back = from_json(kWorkedExample);
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    EXPECT_EQ(*back, d);
}

TEST(JsonGolden, WorkedExampleIndented) {
    const TensorDescriptor d = worked_example();
    EXPECT_EQ(to_json(d, 2), kWorkedExampleIndented);
    auto back = from_json(kWorkedExampleIndented);
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    EXPECT_EQ(*back, d);
}

TEST(JsonGolden, WorkedExampleCbor) {
    // A map of 7 entries; keys are text strings in the same order as the JSON.
    const std::vector<uint8_t> expected = {
        0xA7,                                                                    // map(7)
        0x6D, 'v', 'e', 'r', 's', 'i', 'o', 'n', '_', 'm', 'a', 'j', 'o', 'r', 0x01,
        0x6D, 'v', 'e', 'r', 's', 'i', 'o', 'n', '_', 'm', 'i', 'n', 'o', 'r', 0x00,
        0x6C, 'e', 'l', 'e', 'm', 'e', 'n', 't', '_', 't', 'y', 'p', 'e',
        0x67, 'f', 'l', 'o', 'a', 't', '3', '2',
        0x65, 's', 'h', 'a', 'p', 'e', 0x82, 0x03, 0x04,
        0x6B, 'b', 'y', 't', 'e', '_', 'o', 'f', 'f', 's', 'e', 't', 0x00,
        0x66, 'l', 'a', 'y', 'o', 'u', 't', 0xA1, 0x63, 't', 'a', 'g',
        0x69, 'r', 'o', 'w', '_', 'm', 'a', 'j', 'o', 'r',
        0x67, 'b', 'u', 'f', 'f', 'e', 'r', 's', 0x81, 0xA5,
        0x69, 'b', 'y', 't', 'e', '_', 's', 'i', 'z', 'e', 0x18, 0xC0,
        0x69, 'a', 'l', 'i', 'g', 'n', 'm', 'e', 'n', 't', 0x18, 0x40,
        0x6A, 'd', 'e', 'v', 'i', 'c', 'e', '_', 't', 'a', 'g', 0x63, 'c', 'p', 'u',
        0x69, 's', 'y', 'n', 'c', '_', 'm', 'o', 'd', 'e',
        0x6F, 'p', 'r', 'o', 'd', 'u', 'c', 'e', 'r', '_', 's', 'y', 'n', 'c', 'e', 'd',
        0x6C, 'm', 'e', 'm', 'o', 'r', 'y', '_', 'c', 'l', 'a', 's', 's',
        0x68, 's', 't', 'a', 'n', 'd', 'a', 'r', 'd',
    };
    EXPECT_EQ(to_cbor(worked_example()), expected);
    auto back = from_cbor(expected);
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    EXPECT_EQ(*back, worked_example());
}

// An int4 weight quantized per block, with statistics holding a NaN payload and -0.0.
TEST(JsonGolden, QuantizedWithStatistics) {
    TensorDescriptor d = must(make_per_block_quantized(ElementType::kInt4, {4, 64}, 1, 32));
    d.statistics = Statistics{.computed_mask = kStatValueRangeValid | kStatNanInfValid,
                              .value_min = -0.0,
                              .value_max = std::bit_cast<double>(uint64_t{0x7FF8000000000001}),
                              .value_abs_max = 2.5,
                              .has_nan = true};
    const std::string expected =
        R"({"version_major":1,"version_minor":0,"element_type":"int4","shape":[4,64],"byte_offset":0,)"
        R"("layout":{"tag":"row_major"},"buffers":[)"
        R"({"byte_size":128,"alignment":64,"device_tag":"cpu","sync_mode":"producer_synced","memory_class":"standard"},)"
        R"({"byte_size":16,"alignment":64,"device_tag":"cpu","sync_mode":"producer_synced","memory_class":"standard"}],)"
        R"("quantization":{"scheme":"per_block_affine","axis":1,"block_size":32,"scale_buffer_index":1,)"
        R"("scale_type":"float16"},)"
        R"("statistics":{"computed_mask":36,"nnz":0,"sparsity_ratio":0.0,"value_min":-0.0,)"
        R"("value_max":"nan:0x7ff8000000000001","value_abs_max":2.5,"value_mean":0.0,"value_stddev":0.0,)"
        R"("nm_n":0,"nm_m":0,"has_nan":true,"has_inf":false}})";
    EXPECT_EQ(to_json(d), expected);
    auto back = from_json(expected);
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    EXPECT_EQ(*back, d);
}

}  // namespace
