// `hurray ls`: text and JSON listings of files and streams, standard input, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/core/shape.hpp"
#include "hurray/demo_model.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/stream_convert.hpp"
#include "hurray/io/stream_writer.hpp"
#include "test_paths.hpp"

namespace hurray::clitest {
namespace {

using json = nlohmann::json;

json manifest() {
    std::ifstream f(std::string(HURRAY_CONFORMANCE_DIR) + "/manifest.json");
    return json::parse(f);
}

TEST(Ls, BasicFileTextListsEveryTensorInIndexOrder) {
    const Ran r = run_cli({"ls", basic_file()});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_TRUE(r.err.empty());
    std::istringstream lines(r.out);
    std::string header, first, second, extra;
    std::getline(lines, header);
    std::getline(lines, first);
    std::getline(lines, second);
    EXPECT_FALSE(std::getline(lines, extra));
    EXPECT_NE(header.find("NAME"), std::string::npos);
    for (const char* part : {"weights", "float32", "[2, 2]", "row_major", " 16"}) {
        EXPECT_NE(first.find(part), std::string::npos) << part << " in " << first;
    }
    for (const char* part : {"bias", "int8", "[3]", "row_major", " 3"}) {
        EXPECT_NE(second.find(part), std::string::npos) << part << " in " << second;
    }
}

TEST(Ls, BasicFileJsonMatchesTheManifestFieldByField) {
    const Ran r = run_cli({"ls", "--json", basic_file()});
    ASSERT_EQ(r.rc, 0) << r.err;
    const json j = json::parse(r.out);
    const json m = manifest()["files"][0];
    EXPECT_EQ(j["kind"], "file");
    EXPECT_EQ(j["container_version"], json::array({1, 0}));
    auto file = FileReader::open(basic_file());
    ASSERT_TRUE(file.ok());
    EXPECT_EQ(j["flags"].get<uint32_t>(), file->header().flags);
    EXPECT_EQ(j["data_buffer_alignment"].get<uint32_t>(), 4096U);
    ASSERT_EQ(j["kv"].size(), m["kv"].size());
    for (size_t i = 0; i < m["kv"].size(); ++i) {
        const json& want = m["kv"][i];
        const json& got = j["kv"][i];
        EXPECT_EQ(got["key"], want["key"]);
        EXPECT_EQ(got["kind"], want["kind"]);
        if (want["kind"] == "string") {
            EXPECT_EQ(got["value"], want["value_string"]);
        } else {
            EXPECT_EQ(got["value"], want["value_int"]);
        }
    }
    ASSERT_EQ(j["tensors"].size(), m["tensors"].size());
    for (size_t i = 0; i < m["tensors"].size(); ++i) {
        const json& want = m["tensors"][i];
        const json& got = j["tensors"][i];
        EXPECT_EQ(got["name"], want["name"]);
        EXPECT_EQ(got["element_type"], want["element_type"]);
        EXPECT_EQ(got["element_type_tag"], want["element_type_tag"]);
        EXPECT_EQ(got["shape"], want["shape"]);
        EXPECT_EQ(got["data_bytes"], want["data_bytes"]);
        EXPECT_EQ(got["layout_tag"], 1);
        EXPECT_EQ(got["byte_offset"], 0);
        EXPECT_EQ(got["buffer_byte_sizes"], json::array({want["data_bytes"]}));
        EXPECT_EQ(got["has_quantization"], false);
        EXPECT_EQ(got["has_shard"], false);
        const IndexEntry& e = file->entry(i);
        EXPECT_EQ(got["descriptor_offset"].get<uint64_t>(), e.descriptor_offset);
        EXPECT_EQ(got["descriptor_length"].get<uint32_t>(), e.descriptor_length);
        EXPECT_EQ(got["data_offset"].get<uint64_t>(), e.data_offset);
    }
}

TEST(Ls, DemoModelJsonHasQuantizationSparseCompositeAndEveryKvKind) {
    TempDir dir;
    const std::string path = dir.file("model.hrry");
    ASSERT_TRUE(cli::write_demo_model(path).ok());
    const Ran r = run_cli({"ls", "--json", path});
    ASSERT_EQ(r.rc, 0) << r.err;
    const json j = json::parse(r.out);
    ASSERT_EQ(j["tensors"].size(), cli::kDemoTensorCount);
    auto file = FileReader::open(path);
    ASSERT_TRUE(file.ok());
    for (size_t i = 0; i < file->tensor_count(); ++i) {
        const json& t = j["tensors"][i];
        const IndexEntry& e = file->entry(i);
        const TensorDescriptor& d = **file->descriptor(i);
        EXPECT_EQ(t["name"], e.name);
        EXPECT_EQ(t["element_type_tag"].get<uint8_t>(), type_tag(d.element_type));
        EXPECT_EQ(t["shape"].get<std::vector<uint64_t>>(), d.shape);
        EXPECT_EQ(t["layout_tag"].get<uint8_t>(), d.layout_tag());
        EXPECT_EQ(t["has_quantization"], d.quantization.has_value());
        EXPECT_EQ(t["has_shard"], d.shard.has_value());
        EXPECT_EQ(t["buffer_byte_sizes"].size(), d.buffers.size());
        EXPECT_EQ(t["descriptor_offset"].get<uint64_t>(), e.descriptor_offset);
        EXPECT_EQ(t["data_offset"].get<uint64_t>(), e.data_offset);
    }
    EXPECT_EQ(j["tensors"][3]["element_type"], "int4");
    EXPECT_EQ(j["tensors"][3]["quantization"], "per_block_affine");
    EXPECT_EQ(j["tensors"][4]["quantization"], "nf4");
    EXPECT_EQ(j["tensors"][5]["layout"], "csr");
    EXPECT_EQ(j["tensors"][6]["layout"], "composite");
    EXPECT_EQ(j["tensors"][6]["buffer_byte_sizes"], json::array());
    std::map<std::string, json> kv;
    for (const json& e : j["kv"]) {
        kv[e["key"]] = e;
    }
    EXPECT_EQ(kv["general.architecture"]["kind"], "string");
    EXPECT_EQ(kv["general.architecture"]["value"], "llama");
    EXPECT_EQ(kv["llama.vocab_size"]["kind"], "uint64");
    EXPECT_EQ(kv["llama.vocab_size"]["value"], 64);
    EXPECT_EQ(kv["llama.block_count"]["kind"], "int64");
    EXPECT_EQ(kv["llama.rope.freq_base"]["kind"], "float64");
    EXPECT_EQ(kv["llama.rope.freq_base"]["value"], 10000.0);
    EXPECT_EQ(kv["general.quantized"]["value"], true);
    EXPECT_EQ(kv["general.checksum"]["kind"], "bytes");
    EXPECT_EQ(kv["general.checksum"]["value"], "deadbeef");
    EXPECT_EQ(kv["tokenizer.tokens"]["kind"], "array");
    EXPECT_EQ(kv["tokenizer.tokens"]["value"]["element_kind"], "string");
    EXPECT_EQ(kv["tokenizer.tokens"]["value"]["values"], json::array({"<s>", "</s>", "hello", "world"}));
}

TEST(Ls, KvExtremesAreExactAndNonFiniteFloatsAreStrings) {
    TempDir dir;
    const std::string path = dir.file("kv.hrry");
    {
        auto w = FileWriter::create_file(path);
        ASSERT_TRUE(w.ok());
        auto d = make_dense(ElementType::kUInt8, {1});
        const std::vector<uint8_t> one{7};
        const std::span<const uint8_t> bufs[] = {one};
        ASSERT_TRUE(w->add_tensor("t", *d, bufs).ok());
        KvMetadata& kv = w->kv();
        ASSERT_TRUE(kv.set("u", KvValue::uint64(UINT64_MAX)).ok());
        ASSERT_TRUE(kv.set("i", KvValue::int64(INT64_MIN)).ok());
        ASSERT_TRUE(kv.set("nan", KvValue::float64(std::numeric_limits<double>::quiet_NaN())).ok());
        ASSERT_TRUE(kv.set("inf", KvValue::float64(INFINITY)).ok());
        ASSERT_TRUE(kv.set("ninf", KvValue::float64(-INFINITY)).ok());
        ASSERT_TRUE(kv.set("f", KvValue::float64_array({1.5, NAN})).ok());
        ASSERT_TRUE(kv.set("ua", KvValue::uint64_array({UINT64_MAX, 0})).ok());
        ASSERT_TRUE(kv.set("ba", KvValue::bytes_array({{0x00, 0xAB}, {}})).ok());
        ASSERT_TRUE(kv.set("bools", KvValue::bool_array({true, false})).ok());
        ASSERT_TRUE(kv.set("empty", KvValue::bytes({})).ok());
        ASSERT_TRUE(w->finish().ok());
    }
    const Ran r = run_cli({"ls", "--json", path});
    ASSERT_EQ(r.rc, 0) << r.err;
    const json j = json::parse(r.out);
    std::map<std::string, json> kv;
    for (const json& e : j["kv"]) {
        kv[e["key"]] = e["value"];
    }
    EXPECT_EQ(kv["u"].get<uint64_t>(), UINT64_MAX);
    EXPECT_EQ(kv["i"].get<int64_t>(), INT64_MIN);
    EXPECT_EQ(kv["nan"], "nan");
    EXPECT_EQ(kv["inf"], "inf");
    EXPECT_EQ(kv["ninf"], "-inf");
    EXPECT_EQ(kv["f"]["element_kind"], "float64");
    EXPECT_EQ(kv["f"]["values"], json::parse(R"([1.5, "nan"])"));
    EXPECT_EQ(kv["ua"]["values"][0].get<uint64_t>(), UINT64_MAX);
    EXPECT_EQ(kv["ba"]["values"], json::parse(R"(["00ab", ""])"));
    EXPECT_EQ(kv["bools"]["values"], json::parse("[true, false]"));
    EXPECT_EQ(kv["empty"], "");
    // The text form of info shows them too.
    const Ran info = run_cli({"info", path});
    ASSERT_EQ(info.rc, 0) << info.err;
    EXPECT_NE(info.out.find("nan (float64) = nan"), std::string::npos) << info.out;
    EXPECT_NE(info.out.find("u (uint64) = 18446744073709551615"), std::string::npos) << info.out;
}

TEST(Ls, StreamJsonHasStreamOffsetsAndGeneratedNames) {
    TempDir dir;
    const auto bytes = demo_stream(dir);
    const std::string path = dir.file("model.stream");
    write_all_file(path, bytes);
    const Ran r = run_cli({"ls", "--json", path});
    ASSERT_EQ(r.rc, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["kind"], "stream");
    EXPECT_FALSE(j.contains("container_version"));
    EXPECT_FALSE(j.contains("flags"));
    EXPECT_FALSE(j.contains("kv"));
    ASSERT_EQ(j["tensors"].size(), cli::kDemoTensorCount);
    uint64_t offset = 0;
    for (size_t i = 0; i < j["tensors"].size(); ++i) {
        const json& t = j["tensors"][i];
        EXPECT_EQ(t["name"], "tensor_" + std::to_string(i));
        EXPECT_EQ(t["descriptor_offset"].get<uint64_t>(), offset);
        EXPECT_EQ(t["data_offset"].get<uint64_t>(), offset + t["descriptor_length"].get<uint64_t>());
        // The stream has the descriptor's bytes at descriptor_offset.
        ASSERT_LT(offset + 4, bytes.size());
        EXPECT_EQ(bytes[offset], 'H');
        EXPECT_EQ(bytes[offset + 3], 'Y');
        offset = t["data_offset"].get<uint64_t>() + t["data_bytes"].get<uint64_t>();
    }
    EXPECT_EQ(offset, bytes.size());
    // The text listing of the stream.
    const Ran text = run_cli({"ls", path});
    ASSERT_EQ(text.rc, 0) << text.err;
    EXPECT_NE(text.out.find("tensor_4"), std::string::npos);
    EXPECT_NE(text.out.find("nf4"), std::string::npos);
}

TEST(Ls, DynamicDimensionsPrintAsQuestionMarks) {
    TensorDescriptor d;
    d.element_type = ElementType::kFloat32;
    d.shape = {kDynamicDim, 4};
    d.buffers = {BufferHandle{.byte_size = 64}};
    MemorySink sink;
    StreamWriter writer(sink);
    const std::vector<uint8_t> data(64, 0);
    const std::span<const uint8_t> bufs[] = {data};
    const Status written = writer.write_tensor(d, bufs);
    ASSERT_TRUE(written.ok()) << written.error().to_string();
    ASSERT_TRUE(writer.finish().ok());
    TempDir dir;
    write_all_file(dir.file("dyn.stream"), sink.bytes());
    const Ran r = run_cli({"ls", dir.file("dyn.stream")});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("[?, 4]"), std::string::npos) << r.out;
    const Ran j = run_cli({"ls", "--json", dir.file("dyn.stream")});
    ASSERT_EQ(j.rc, 0) << j.err;
    EXPECT_EQ(json::parse(j.out)["tensors"][0]["shape"][0].get<uint64_t>(), kDynamicDim);
}

TEST(Ls, ReadsFilesAndStreamsFromStandardInput) {
    TempDir dir;
    const Ran file = run_process("ls -", basic_file(), dir);
    EXPECT_EQ(file.rc, 0) << file.err;
    EXPECT_NE(file.out.find("weights"), std::string::npos);
    write_all_file(dir.file("m.stream"), demo_stream(dir));
    const Ran stream = run_process("ls --json -", dir.file("m.stream"), dir);
    EXPECT_EQ(stream.rc, 0) << stream.err;
    EXPECT_EQ(json::parse(stream.out)["tensors"].size(), cli::kDemoTensorCount);
    // Through a real pipe too.
    const Ran piped = run_piped("cat '" + basic_file() + "'", "ls -", dir);
    EXPECT_EQ(piped.rc, 0) << piped.err;
    EXPECT_NE(piped.out.find("bias"), std::string::npos);
}

TEST(Ls, ErrorsNameThePathAndExitStatusesAreDocumented) {
    const Ran missing = run_cli({"ls", "/nonexistent/x.hrry"});
    EXPECT_EQ(missing.rc, 1);
    EXPECT_NE(missing.err.find("/nonexistent/x.hrry"), std::string::npos) << missing.err;
    EXPECT_TRUE(missing.out.empty());
    const Ran usage = run_cli({"ls"});
    EXPECT_EQ(usage.rc, 2);
    EXPECT_FALSE(usage.err.empty());
    const Ran help = run_cli({"ls", "--help"});
    EXPECT_EQ(help.rc, 0);
    EXPECT_NE(help.out.find("--json"), std::string::npos);
    EXPECT_NE(help.out.find("Exit status"), std::string::npos);
    TempDir dir;
    const Ran proc = run_process("ls /nonexistent/x.hrry", "", dir);
    EXPECT_EQ(proc.rc, 1);
    const Ran proc_usage = run_process("ls --bogus x", "", dir);
    EXPECT_EQ(proc_usage.rc, 2);
}

}  // namespace
}  // namespace hurray::clitest
