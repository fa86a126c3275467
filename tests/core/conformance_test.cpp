// SPDX-License-Identifier: Apache-2.0
// The public golden vectors (../shared/conformance), read in place: every
// descriptor decodes to what manifest.json says and re-encodes byte for byte.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hurray/core/builder.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "test_paths.hpp"

namespace {

namespace fs = std::filesystem;

fs::path conformance_dir() { return fs::path(HURRAY_CONFORMANCE_DIR); }

std::vector<uint8_t> read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

nlohmann::json manifest() {
    std::ifstream in(conformance_dir() / "manifest.json");
    return nlohmann::json::parse(in);
}

TEST(Conformance, ManifestIsPresent) {
    ASSERT_TRUE(fs::exists(conformance_dir() / "manifest.json")) << conformance_dir();
    EXPECT_GE(manifest()["descriptors"].size(), 11U);
}

TEST(Conformance, EveryDescriptorDecodesAsTheManifestSaysAndReencodesIdentically) {
    const nlohmann::json m = manifest();
    size_t checked = 0;
    for (const auto& entry : m["descriptors"]) {
        const std::string file = entry["file"];
        SCOPED_TRACE(file);
        const std::vector<uint8_t> bytes = read_file(conformance_dir() / file);
        ASSERT_FALSE(bytes.empty());
        auto d = hurray::decode(bytes);
        ASSERT_TRUE(d.ok()) << d.error().to_string();
        const auto& e = entry["expect"];
        EXPECT_EQ(d->version_major, e["version_major"].get<int>());
        EXPECT_EQ(d->version_minor, e["version_minor"].get<int>());
        EXPECT_EQ(hurray::type_tag(d->element_type), e["element_type_tag"].get<int>());
        EXPECT_EQ(hurray::type_name(d->element_type), e["element_type"].get<std::string>());
        EXPECT_EQ(d->shape, e["shape"].get<std::vector<uint64_t>>());
        EXPECT_EQ(d->byte_offset, e["byte_offset"].get<uint64_t>());
        EXPECT_EQ(d->layout_tag(), e["layout_tag"].get<int>());
        std::vector<uint64_t> sizes;
        for (const auto& b : d->buffers) {
            sizes.push_back(b.byte_size);
        }
        EXPECT_EQ(sizes, e["buffer_byte_sizes"].get<std::vector<uint64_t>>());
        EXPECT_EQ(d->quantization.has_value(), e["has_quantization"].get<bool>());
        EXPECT_EQ(d->shard.has_value(), e["has_shard"].get<bool>());

        auto again = hurray::encode(*d);
        ASSERT_TRUE(again.ok()) << again.error().to_string();
        EXPECT_EQ(*again, bytes);
        auto size = hurray::encoded_size(*d);
        ASSERT_TRUE(size.ok());
        EXPECT_EQ(*size, bytes.size());
        ++checked;
    }
    EXPECT_EQ(checked, m["descriptors"].size());
}

TEST(Conformance, PeekLengthMatchesEveryVector) {
    const nlohmann::json m = manifest();  // keep it alive: the loop iterates a member of it
    for (const auto& entry : m["descriptors"]) {
        const std::vector<uint8_t> bytes = read_file(conformance_dir() / entry["file"].get<std::string>());
        auto len = hurray::peek_length(bytes);
        ASSERT_TRUE(len.ok()) << len.error().to_string();
        EXPECT_EQ(*len, bytes.size());
    }
}

TEST(Conformance, WorkedExampleOfMetadataSpecIsBitExact) {
    // metadata.md § Worked Example: float32 [3, 4], one 192-byte buffer.
    hurray::TensorDescriptor d;
    d.element_type = hurray::ElementType::kFloat32;
    d.shape = {3, 4};
    d.buffers = {hurray::BufferHandle{.byte_size = 192}};
    auto bytes = hurray::encode(d);
    ASSERT_TRUE(bytes.ok()) << bytes.error().to_string();
    const std::vector<uint8_t> expected = {
        0x48, 0x52, 0x52, 0x59, 0x01, 0x00, 0x3D, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x01,
        0x02, 0x00, 0x00, 0x00, 0x03, 0, 0, 0, 0, 0, 0, 0, 0x04, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xC0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0,
        0x00, 0x00, 0x00, 0x00};  // device_tag, sync_mode, memory_class, reserved
    EXPECT_EQ(*bytes, expected);
}

TEST(Conformance, BuildersReproduceTheReferenceVectors) {
    struct Case {
        const char* file;
        hurray::Result<hurray::TensorDescriptor> made;
    };
    std::vector<Case> cases;
    cases.push_back({"descriptors/row_major_f32_3x4.bin",
                     hurray::make_dense(hurray::ElementType::kFloat32, {3, 4})});
    cases.push_back({"descriptors/bool_packed_10.bin", hurray::make_dense(hurray::ElementType::kBool, {10})});
    cases.push_back({"descriptors/csr_f32_3x3.bin", hurray::make_csr(hurray::ElementType::kFloat32, 3, 3, 2)});
    cases.push_back({"descriptors/quant_per_block_int4_128x128.bin",
                     hurray::make_per_block_quantized(hurray::ElementType::kInt4, {128, 128}, 1, 128)});
    cases.push_back({"descriptors/composite_head_partition.bin",
                     hurray::make_composite_head(hurray::ElementType::kFloat32, {8, 8},
                                                 hurray::CompositionRule::kPartition, 2)});
    for (auto& c : cases) {
        SCOPED_TRACE(c.file);
        ASSERT_TRUE(c.made.ok()) << c.made.error().to_string();
        auto bytes = hurray::encode(*c.made);
        ASSERT_TRUE(bytes.ok()) << bytes.error().to_string();
        EXPECT_EQ(*bytes, read_file(conformance_dir() / c.file));
    }
}

}  // namespace
