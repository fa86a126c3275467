// SPDX-License-Identifier: Apache-2.0
// hurray_fuzz_seeds: writes seed inputs for the fuzz targets, built with the
// test suite's own builders (scripts/test.sh stage 4c).
//
//   hurray_fuzz_seeds files DIR    HRRYFILE containers for fuzz/fuzz_file_reader
//   hurray_fuzz_seeds streams DIR  streams for fuzz/fuzz_stream_reader
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
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "file_test_support.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/descriptor_table.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/kv_metadata.hpp"
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

/// The test builder's file of "a" (float32 [2, 3]) and "b" (empty) with a KV entry kDescriptorTableKey whose
/// value `edit` changes first (given the well-formed table and where each copy
/// starts in it).
std::vector<uint8_t> builder_table_file(
    const std::function<void(std::vector<uint8_t>& table, const std::vector<size_t>& copy_at)>& edit) {
    using hurray::ElementType;
    using hurray::test::build_file;
    using hurray::test::dense;
    const std::vector<TestTensor> tensors = {dense("a", ElementType::kFloat32, {2, 3}),
                                             dense("b", ElementType::kInt8, {0})};
    const auto plain = build_file(tensors);
    std::vector<uint8_t> table;
    std::vector<size_t> copy_at;
    hurray::append_descriptor_table_header(table, plain.entries.size());
    for (const hurray::IndexEntry& e : plain.entries) {
        copy_at.push_back(table.size());
        const auto from = plain.bytes.begin() + static_cast<std::ptrdiff_t>(e.descriptor_offset);
        table.insert(table.end(), from, from + static_cast<std::ptrdiff_t>(e.descriptor_length));
    }
    edit(table, copy_at);
    hurray::KvMetadata kv;
    EXPECT_TRUE(kv.set(std::string(hurray::kDescriptorTableKey), hurray::KvValue::bytes(table)));
    return build_file(tensors, &kv).bytes;
}

/// Seeds with descriptor tables: written by FileWriter (unsorted and sorted, with
/// and without data), and from the test builder well formed, disagreeing with a
/// descriptor in place (the copy of "a" says [3, 2]: the same length and byte
/// count, another shape), of another version, and truncated.
bool write_table_seeds(const std::string& dir) {
    using hurray::test::must;
    bool ok = true;
    ok = save(dir, "table_writer_empty.hrry", writer_file(false, false)) && ok;
    ok = save(dir, "table_writer_sorted.hrry", writer_file(true, true)) && ok;
    ok = save(dir, "table_builder.hrry", builder_table_file([](auto&, const auto&) {})) && ok;
    ok = save(dir, "table_disagreeing.hrry", builder_table_file([](auto& table, const auto& at) {
                  const auto other = must(hurray::encode(must(hurray::make_dense(hurray::ElementType::kFloat32, {3, 2}))));
                  EXPECT_EQ(at[0] + other.size(), at[1]) << "the same length as the copy of a";
                  std::copy(other.begin(), other.end(), table.begin() + static_cast<std::ptrdiff_t>(at[0]));
              })) &&
         ok;
    ok = save(dir, "table_version2.hrry", builder_table_file([](auto& table, const auto&) { table[4] = 2; })) && ok;
    ok = save(dir, "table_truncated.hrry", builder_table_file([](auto& table, const auto&) { table.pop_back(); })) &&
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

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3 || (std::string_view(argv[1]) != "files" && std::string_view(argv[1]) != "streams")) {
        std::fprintf(stderr, "usage: hurray_fuzz_seeds files|streams DIR\n");
        return 2;
    }
    bool ok = false;
    try {
        ok = std::string_view(argv[1]) == "files" ? write_file_seeds(argv[2]) : write_stream_seeds(argv[2]);
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
