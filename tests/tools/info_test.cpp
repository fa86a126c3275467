// `hurray info`: header, flags, sections, typed KV, counts and sizes of files; streams.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "hurray/demo_model.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/stream_convert.hpp"

namespace hurray::clitest {
namespace {

using json = nlohmann::json;

TEST(Info, BasicFileText) {
    const Ran r = run_cli({"info", basic_file()});
    ASSERT_EQ(r.rc, 0) << r.err;
    for (const char* part : {"HRRYFILE container version 1.0", "8391 bytes", "data buffer alignment:   4096",
                             "HAS_INDEX_CRC32C", "tensors:                 2", "19 bytes", "2 entries",
                             "producer (string) = \"hurray-conformance\"", "tensor_count (int64) = 2"}) {
        EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
    }
}

TEST(Info, BasicFileJson) {
    const Ran r = run_cli({"info", "--json", basic_file()});
    ASSERT_EQ(r.rc, 0) << r.err;
    const json j = json::parse(r.out);
    auto file = FileReader::open(basic_file());
    ASSERT_TRUE(file.ok());
    EXPECT_EQ(j["kind"], "file");
    EXPECT_EQ(j["container_version"], json::array({1, 0}));
    EXPECT_EQ(j["flags"].get<uint32_t>(), file->header().flags);
    EXPECT_EQ(j["data_buffer_alignment"], 4096);
    EXPECT_EQ(j["first_descriptor_offset"], 64);
    EXPECT_EQ(j["file_size"].get<uint64_t>(), std::filesystem::file_size(basic_file()));
    EXPECT_EQ(j["index"]["offset"].get<uint64_t>(), file->trailer().index_offset);
    EXPECT_EQ(j["index"]["length"].get<uint64_t>(), file->trailer().index_length);
    EXPECT_EQ(j["index"]["crc32c"].get<uint32_t>(), file->trailer().index_crc32c);
    EXPECT_EQ(j["kv_section"]["offset"].get<uint64_t>(), file->trailer().kv_offset);
    EXPECT_EQ(j["tensor_count"], 2);
    EXPECT_EQ(j["composite_count"], 0);
    EXPECT_EQ(j["data_bytes"], 19);
    ASSERT_EQ(j["kv"].size(), 2U);
    EXPECT_EQ(j["kv"][0]["key"], "producer");
    EXPECT_EQ(j["kv"][1]["value"], 2);
}

TEST(Info, DemoModelCountsCompositesAndQuantizedTensors) {
    TempDir dir;
    const std::string path = dir.file("model.hrry");
    ASSERT_TRUE(cli::write_demo_model(path).ok());
    const Ran r = run_cli({"info", "--json", path});
    ASSERT_EQ(r.rc, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["tensor_count"], cli::kDemoTensorCount);
    EXPECT_EQ(j["tensor_count_hint"], cli::kDemoTensorCount);
    EXPECT_EQ(j["composite_count"], 1);
    EXPECT_EQ(j["quantized_count"], 2);
    EXPECT_EQ(j["flag_names"], json::parse(R"(["HAS_KV_METADATA", "HAS_INDEX_CRC32C"])"));
    const Ran text = run_cli({"info", path});
    EXPECT_NE(text.out.find("general.architecture (string) = \"llama\""), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("llama.vocab_size (uint64) = 64"), std::string::npos);
    EXPECT_NE(text.out.find("tokenizer.tokens (array) = string[4]"), std::string::npos);
    EXPECT_NE(text.out.find("general.checksum (bytes) = 0xdeadbeef"), std::string::npos);
}

TEST(Info, StreamCountsAndSizes) {
    TempDir dir;
    const auto stream = demo_stream(dir);
    ASSERT_FALSE(stream.empty());
    write_all_file(dir.file("m.stream"), stream);
    const Ran r = run_process("info --json -", dir.file("m.stream"), dir);
    ASSERT_EQ(r.rc, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["kind"], "stream");
    EXPECT_EQ(j["stream_bytes"].get<uint64_t>(), stream.size());
    EXPECT_EQ(j["tensor_count"], cli::kDemoTensorCount);
    EXPECT_EQ(j["composite_count"], 1);
}

TEST(Info, InvalidInputIsExitStatusOneWithTheCause) {
    TempDir dir;
    auto bytes = read_all(basic_file());
    bytes.resize(100);
    write_all_file(dir.file("cut.hrry"), bytes);
    const Ran r = run_cli({"info", dir.file("cut.hrry")});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find(dir.file("cut.hrry")), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty());
    EXPECT_EQ(run_cli({"info"}).rc, 2);
    EXPECT_EQ(run_cli({"info", "--help"}).rc, 0);
}

}  // namespace
}  // namespace hurray::clitest
