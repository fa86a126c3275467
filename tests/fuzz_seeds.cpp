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

#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "file_test_support.hpp"
#include "hurray/io/byte_sink.hpp"
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

/// Seeds for fuzz/fuzz_file_reader: small files, composites, both padding
/// rules, sorted and unsorted indexes, with and without CRCs.
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
