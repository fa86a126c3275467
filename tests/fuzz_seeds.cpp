// SPDX-License-Identifier: Apache-2.0
// hurray_fuzz_seeds: writes seed inputs for the fuzz targets, built with the
// test suite's own builders (scripts/test.sh stage 4c).
//
//   hurray_fuzz_seeds files DIR      HRRYFILE containers for fuzz/fuzz_file_reader
//   hurray_fuzz_seeds streams DIR    streams for fuzz/fuzz_stream_reader
//   hurray_fuzz_seeds transport DIR  transport messages for fuzz/fuzz_transport_message
//
// Not a test: it only writes files. Exit status 0 on success, 1 when a seed
// could not be built or written, 2 on a usage error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "file_test_support.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/core/byte_io.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/descriptor_table.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/kv_metadata.hpp"
#include "hurray/io/transport_message.hpp"
#include "stream_test_support.hpp"

namespace {

using hurray::Status;
using hurray::test::BuildOptions;
using hurray::test::Padding;
using hurray::test::TestTensor;

/// Writes `bytes` to `dir`/`name`; false (with a message) when that fails.
bool save(const std::string& dir, const std::string& name, const std::vector<uint8_t>& bytes) {
    const std::string path = dir + "/" + name;
    std::ofstream os(path, std::ios::binary | std::ios::trunc);
    os.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));  // NOLINT
    os.close();
    if (!os) {
        std::fprintf(stderr, "hurray_fuzz_seeds: cannot write %s\n", path.c_str());
        return false;
    }
    return true;
}

/// A small file written by FileWriter, with its descriptor table (the default) and
/// a KV entry: empty tensors only (no data page: a few hundred bytes), or one
/// tensor with data (its page) after them.
std::vector<uint8_t> writer_file(bool sorted, bool with_data) {
    using hurray::test::must;
    hurray::MemorySink sink;
    hurray::FileWriterOptions options;
    options.sorted_index = sorted;
    auto w = must(hurray::FileWriter::create(sink, options));
    const std::span<const uint8_t> none[] = {std::span<const uint8_t>()};
    EXPECT_TRUE(w.add_tensor("e", must(hurray::make_dense(hurray::ElementType::kInt8, {0, 4})), none));
    EXPECT_TRUE(w.add_tensor("c", must(hurray::make_dense(hurray::ElementType::kFloat16, {3, 0})), none));
    if (with_data) {
        const auto a = must(hurray::make_dense(hurray::ElementType::kFloat32, {2, 3}));
        const std::vector<uint8_t> data(a.buffers[0].byte_size, 0x3F);
        const std::span<const uint8_t> bufs[] = {data};
        EXPECT_TRUE(w.add_tensor("a", a, bufs));
    }
    EXPECT_TRUE(w.kv().set("general.name", hurray::KvValue::string("seed")));
    EXPECT_TRUE(w.finish());
    return std::move(sink).take();
}

/// The test builder's file of "a" (float32 [2, 3]) and "b" (empty) with a KV entry
/// kDescriptorTableKey of `version` whose value `edit` changes first (given the
/// well-formed table and where each entry's copy starts in it).
std::vector<uint8_t> builder_table_file(
    uint16_t version,
    const std::function<void(std::vector<uint8_t>& table, const std::vector<size_t>& copy_at)>& edit) {
    using hurray::ElementType;
    using hurray::test::build_file;
    using hurray::test::dense;
    const std::vector<TestTensor> tensors = {dense("a", ElementType::kFloat32, {2, 3}),
                                             dense("b", ElementType::kInt8, {0})};
    const auto plain = build_file(tensors);
    std::vector<std::span<const uint8_t>> in_place;
    for (const hurray::IndexEntry& e : plain.entries) {
        in_place.push_back(std::span<const uint8_t>(plain.bytes).subspan(e.descriptor_offset, e.descriptor_length));
    }
    std::vector<uint8_t> table = hurray::test::must(hurray::encode_descriptor_table(in_place, version));
    const auto located = hurray::locate_descriptor_table(table, plain.entries);
    EXPECT_TRUE(located.has_value());
    const std::vector<size_t> copy_at(located->begin(), located->end());
    edit(table, copy_at);
    hurray::KvMetadata kv;
    EXPECT_TRUE(kv.set(std::string(hurray::kDescriptorTableKey), hurray::KvValue::bytes(table)));
    return build_file(tensors, &kv).bytes;
}

/// Seeds with descriptor tables: written by FileWriter (unsorted and sorted, with
/// and without data), and from the test builder, of versions 1 and 2, well formed,
/// disagreeing with a descriptor in place (the copy of "a" says [3, 2]: the same
/// length and byte count, another shape) and truncated; and of an unknown version.
bool write_table_seeds(const std::string& dir) {
    using hurray::test::must;
    bool ok = true;
    ok = save(dir, "table_writer_empty.hrry", writer_file(false, false)) && ok;
    ok = save(dir, "table_writer_sorted.hrry", writer_file(true, true)) && ok;
    for (const uint16_t version : {hurray::kDescriptorTableVersion1, hurray::kDescriptorTableVersion2}) {
        const std::string v = "_v" + std::to_string(version);
        ok = save(dir, "table_builder" + v + ".hrry", builder_table_file(version, [](auto&, const auto&) {})) && ok;
        ok = save(dir, "table_disagreeing" + v + ".hrry", builder_table_file(version, [](auto& table, const auto& at) {
                      const auto other =
                          must(hurray::encode(must(hurray::make_dense(hurray::ElementType::kFloat32, {3, 2}))));
                      EXPECT_EQ(at[0] + other.size(), at[1]) << "the same length as the copy of a";
                      std::copy(other.begin(), other.end(), table.begin() + static_cast<std::ptrdiff_t>(at[0]));
                  })) &&
             ok;
        ok = save(dir, "table_truncated" + v + ".hrry",
                  builder_table_file(version, [](auto& table, const auto&) { table.pop_back(); })) &&
             ok;
    }
    ok = save(dir, "table_version3.hrry",
              builder_table_file(hurray::kDescriptorTableVersion, [](auto& table, const auto&) { table[4] = 3; })) &&
         ok;
    return ok;
}

/// Seeds for fuzz/fuzz_file_reader: small files, composites, both padding
/// rules, sorted and unsorted indexes, with and without CRCs, descriptor tables.
bool write_file_seeds(const std::string& dir) {
    using hurray::ElementType;
    using hurray::test::build_file;
    using hurray::test::dense;
    using hurray::test::must;
    using hurray::test::nested_composites;
    using hurray::test::small_file;
    BuildOptions sorted;
    sorted.sort_index = true;
    BuildOptions ref;
    ref.after_data = ref.after_head = Padding::kReference;
    BuildOptions no_crc;
    no_crc.crc = false;
    BuildOptions ref_no_crc = ref;
    ref_no_crc.crc = false;
    bool ok = true;
    ok = save(dir, "small.hrry", small_file().bytes) && ok;
    ok = save(dir, "small_sorted.hrry", small_file(sorted).bytes) && ok;
    ok = save(dir, "composites_ref.hrry", build_file(nested_composites(), nullptr, ref).bytes) && ok;
    ok = save(dir, "composites_spec_sorted.hrry", build_file(nested_composites(), nullptr, sorted).bytes) && ok;
    ok = save(dir, "empty_tensors_ref.hrry",
              build_file({dense("e", ElementType::kFloat32, {0, 3}), dense("x", ElementType::kInt8, {1})}, nullptr,
                         ref)
                  .bytes) &&
         ok;
    ok = save(dir, "csr_ref_no_crc.hrry",
              build_file({TestTensor{"csr", must(hurray::make_csr(ElementType::kFloat32, 3, 3, 2))}}, nullptr,
                         ref_no_crc)
                  .bytes) &&
         ok;
    ok = save(dir, "zero_tensors.hrry", build_file({}, nullptr, no_crc).bytes) && ok;
    ok = write_table_seeds(dir) && ok;
    return ok;
}

/// Writes `items` as one stream to `dir`/`name`.
bool save_stream(const std::string& dir, const std::string& name, const std::vector<hurray::streamtest::Item>& items) {
    hurray::MemorySink sink;
    const Status s = hurray::streamtest::write_items(sink, items);
    if (!s.ok()) {
        std::fprintf(stderr, "hurray_fuzz_seeds: %s: %s\n", name.c_str(), s.error().to_string().c_str());
        return false;
    }
    return save(dir, name, std::move(sink).take());
}

/// Seeds for fuzz/fuzz_stream_reader: composites, empty tensors, generated
/// tensors one per stream and (when they need no private ids) together.
bool write_stream_seeds(const std::string& dir) {
    namespace st = hurray::streamtest;
    bool ok = true;
    ok = save_stream(dir, "stream_composites.hstr", st::composite_items()) && ok;
    ok = save_stream(dir, "stream_empty_tensors.hstr", st::empty_items()) && ok;
    for (uint64_t batch = 0; batch < 4; ++batch) {
        st::Known known;
        const auto items = st::generated_items(batch * 77 + 5, 6, known, 2048);
        if (known.layouts.empty() && known.schemes.empty()) {
            ok = save_stream(dir, "stream_generated_" + std::to_string(batch) + ".hstr", items) && ok;
        }
        for (size_t i = 0; i < items.size(); ++i) {
            ok = save_stream(dir, "stream_one_" + std::to_string(batch) + "_" + std::to_string(i) + ".hstr",
                             {items[i]}) &&
                 ok;
        }
    }
    return ok;
}

/// Where the first of the three bytes "\x01\x02\x03" lies in the ERROR seed
/// "bad \x01\x02\x03 text": after the header, the code, the length and "bad ".
constexpr size_t kErrorBadByteAt = hurray::kMessageHeaderSize + 8 + 4;

/// The messages `parts`, back to back.
std::vector<uint8_t> concat(std::initializer_list<std::vector<uint8_t>> parts) {
    std::vector<uint8_t> out;
    for (const auto& p : parts) {
        out.insert(out.end(), p.begin(), p.end());
    }
    return out;
}

/// Seeds for fuzz/fuzz_transport_message: one message of each kind the
/// encoders write (a hello without its memory-class list and an ERROR whose
/// text is not UTF-8 by hand), and sessions of several messages back to back.
bool write_transport_seeds(const std::string& dir) {
    using hurray::LayoutEntry;
    using hurray::MessageType;
    using hurray::test::must;
    const auto desc = must(hurray::encode(must(hurray::make_dense(hurray::ElementType::kFloat32, {2, 3}))));
    const auto empty_desc = must(hurray::encode(must(hurray::make_dense(hurray::ElementType::kInt8, {0, 4}))));
    const std::vector<uint8_t> data(24, 0x3F);

    hurray::Hello client;
    client.capability_flags = hurray::kCapTranscoding | hurray::kCapParallelStreams;
    client.layouts = {LayoutEntry{0x01, {}}, LayoutEntry{0xF1, {1, 2, 3, 4}}, LayoutEntry{0x02, {}}};
    client.devices = {0x00, 0x01};
    client.memory_classes = {0x00, 0x02};
    hurray::Hello server = client;
    server.max_message_size = 1U << 20;
    server.capability_flags = hurray::kCapTranscoding | hurray::kCapRdmaDataPlane | hurray::kCapRdmaGpuDirect;
    server.layouts = {LayoutEntry{0x01, {}}};
    server.devices = {0x00};
    server.memory_classes.clear();
    const auto client_hello = must(hurray::encode_hello(MessageType::kClientHello, 1, client));
    const auto server_hello = must(hurray::encode_hello(MessageType::kServerHello, 1, server));
    // The memory-class list absent (the spec's "If absent"): 2 bytes fewer.
    auto hello_no_classes = server_hello;
    hello_no_classes.resize(hello_no_classes.size() - 2);
    hurray::store_le<uint32_t>(hello_no_classes.data() + 8,
                               static_cast<uint32_t>(hello_no_classes.size() - hurray::kMessageHeaderSize));

    hurray::TensorRequest request;
    request.key = "model/layers.0/w";
    request.preferred_layouts = {LayoutEntry{0xF3, {9, 9}}, LayoutEntry{0x01, {}}};
    request.min_alignment = 64;
    request.flags = hurray::kRequestAllowTranscode | hurray::kRequestParallelOk;
    const auto request_message = must(hurray::encode_tensor_request(1, request));

    const auto descriptor = must(hurray::encode_tensor_descriptor(1, desc, {data.size(), 0, 1}));
    const auto shard = must(hurray::encode_tensor_descriptor(2, desc, {data.size(), 1, 2}));
    const auto empty_descriptor = must(hurray::encode_tensor_descriptor(1, empty_desc, {0, 0, 1}));
    auto frame = [&](uint64_t offset, size_t length) {
        const auto head = must(hurray::encode_tensor_data_header(1, offset, length));
        std::vector<uint8_t> out(head.begin(), head.end());
        out.insert(out.end(), data.begin() + static_cast<std::ptrdiff_t>(offset),
                   data.begin() + static_cast<std::ptrdiff_t>(offset + length));
        return out;
    };
    const auto data_end = must(hurray::encode_message(MessageType::kTensorDataEnd, 1));
    const auto put = must(hurray::encode_tensor_put(1, hurray::TensorPut{"pushed", desc, data.size()}));
    const auto put_ack = must(hurray::encode_message(MessageType::kTensorPutAck, 1));
    const auto error = hurray::encode_error(1, static_cast<uint32_t>(hurray::TransportErrorCode::kUnknownTensor),
                                            "unknown tensor 'model/layers.0/w' \xE2\x82\xAC");
    // An ERROR whose text is not UTF-8 (the decoder replaces the bad bytes).
    auto error_bad_text = hurray::encode_error(1, 0xF3, "bad \x01\x02\x03 text");
    error_bad_text[kErrorBadByteAt] = 0xFF;
    error_bad_text[kErrorBadByteAt + 1] = 0xC3;
    const std::vector<uint8_t> token = {1, 2, 3, 4, 5, 6, 7, 8};
    const auto ping = must(hurray::encode_message(MessageType::kPing, 1, token));
    const auto pong = must(hurray::encode_message(MessageType::kPong, 1, token));
    const auto list_request = must(hurray::encode_message(MessageType::kListRequest, 1));
    const std::vector<hurray::ListEntry> entries = {hurray::ListEntry{"a", desc},
                                                    hurray::ListEntry{"empty", empty_desc}};
    const auto list_entries = must(hurray::encode_list_entries(1, entries));
    const auto list_end = hurray::encode_list_end(1, entries.size());

    bool ok = true;
    ok = save(dir, "transport_client_hello.bin", client_hello) && ok;
    ok = save(dir, "transport_server_hello.bin", server_hello) && ok;
    ok = save(dir, "transport_hello_no_classes.bin", hello_no_classes) && ok;
    ok = save(dir, "transport_request.bin", request_message) && ok;
    ok = save(dir, "transport_descriptor.bin", descriptor) && ok;
    ok = save(dir, "transport_descriptor_shard.bin", shard) && ok;
    ok = save(dir, "transport_data.bin", frame(0, data.size())) && ok;
    ok = save(dir, "transport_data_end.bin", data_end) && ok;
    ok = save(dir, "transport_put.bin", put) && ok;
    ok = save(dir, "transport_put_ack.bin", put_ack) && ok;
    ok = save(dir, "transport_error.bin", error) && ok;
    ok = save(dir, "transport_error_bad_text.bin", error_bad_text) && ok;
    ok = save(dir, "transport_ping.bin", ping) && ok;
    ok = save(dir, "transport_pong.bin", pong) && ok;
    ok = save(dir, "transport_list_request.bin", list_request) && ok;
    ok = save(dir, "transport_list_entries.bin", list_entries) && ok;
    ok = save(dir, "transport_list_end.bin", list_end) && ok;
    // Sessions: what a client sends and what a server answers.
    ok = save(dir, "transport_session_get_client.bin", concat({client_hello, request_message})) && ok;
    ok = save(dir, "transport_session_get_server.bin",
              concat({server_hello, descriptor, frame(0, 16), frame(16, 8), data_end, empty_descriptor, data_end})) &&
         ok;
    ok = save(dir, "transport_session_put.bin", concat({client_hello, put, frame(0, 24), data_end, put_ack})) && ok;
    ok = save(dir, "transport_session_list.bin", concat({list_request, list_entries, list_end})) && ok;
    ok = save(dir, "transport_session_error.bin", concat({hello_no_classes, ping, pong, error})) && ok;
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string_view mode = argc == 3 ? std::string_view(argv[1]) : std::string_view();
    if (mode != "files" && mode != "streams" && mode != "transport") {
        std::fprintf(stderr, "usage: hurray_fuzz_seeds files|streams|transport DIR\n");
        return 2;
    }
    bool ok = false;
    try {
        ok = mode == "files"     ? write_file_seeds(argv[2])
             : mode == "streams" ? write_stream_seeds(argv[2])
                                 : write_transport_seeds(argv[2]);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "hurray_fuzz_seeds: %s\n", e.what());
        return 1;
    }
    // The builders report with GoogleTest's EXPECT_*; outside a test those
    // failures land in the ad hoc test result.
    if (::testing::UnitTest::GetInstance()->ad_hoc_test_result().Failed()) {
        std::fprintf(stderr, "hurray_fuzz_seeds: a test builder reported a failure (above)\n");
        return 1;
    }
    return ok ? 0 : 1;
}
