// SPDX-License-Identifier: Apache-2.0
// open_hrryfile and write_hrryfile: HRRYFILE -> TensorSource -> HRRYFILE reproduces every
// descriptor, buffer and KV entry; rejection of bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "convert_test_support.hpp"
#include "hurray/convert/hrryfile.hpp"
#include "io_test_util.hpp"
#include "test_paths.hpp"

namespace hurray::convert {
namespace {

using hurray::test::TempDir;
using test::expect_identical;
using test::model_kv;
using test::model_tensors;
using test::write_hrry;

std::vector<std::filesystem::path> conformance_files() {
    std::vector<std::filesystem::path> out;
    const std::filesystem::path dir = std::filesystem::path(HURRAY_CONFORMANCE_DIR) / "files";
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        if (e.path().extension() == ".hrry") {
            out.push_back(e.path());
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

TEST(HrryFileSource, ListsModelTensorsInWriteOrder) {
    TempDir dir;
    const auto tensors = model_tensors();
    write_hrry(dir.file("m.hrry"), tensors, model_kv());
    auto src = open_hrryfile(dir.file("m.hrry"));
    ASSERT_TRUE(src.ok()) << src.error().to_string();
    EXPECT_EQ((*src)->format(), Format::kHrryFile);
    ASSERT_EQ((*src)->tensor_count(), tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
        EXPECT_EQ((*src)->tensor(i).name, tensors[i].name);
        EXPECT_EQ((*src)->tensor(i).descriptor, tensors[i].desc);
        for (size_t b = 0; b < tensors[i].buffers.size(); ++b) {
            EXPECT_EQ(test::read_all(**src, i, b), tensors[i].buffers[b]) << tensors[i].name;
            EXPECT_TRUE((*src)->view(i, b).has_value());
        }
    }
    EXPECT_EQ((*src)->kv(), model_kv());
    EXPECT_EQ((*src)->find("sparse.csr"), std::optional<size_t>(5));
    EXPECT_FALSE((*src)->find("nope").has_value());
}

TEST(HrryFileSource, ReadRangesAndBadArguments) {
    TempDir dir;
    write_hrry(dir.file("m.hrry"), model_tensors());
    auto src = open_hrryfile(dir.file("m.hrry"));
    ASSERT_TRUE(src.ok());
    std::vector<uint8_t> four(4);
    ASSERT_TRUE((*src)->read(0, 0, 8, four).ok());
    float f = 0;
    std::memcpy(&f, four.data(), 4);
    EXPECT_EQ(f, -1.0F);  // element 2: 2 * 0.5 - 2
    auto past = (*src)->read(0, 0, 46, four);
    ASSERT_FALSE(past.ok());
    EXPECT_EQ(past.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(past.error().message().find("dense.f32"), std::string::npos)
        << past.error().message();
    EXPECT_FALSE((*src)->read(0, 1, 0, four).ok());   // no buffer 1
    EXPECT_FALSE((*src)->read(99, 0, 0, four).ok());  // no tensor 99
    EXPECT_FALSE((*src)->view(6, 0).has_value());     // a composite head has no buffers
}

TEST(HrryFileWriter, ModelRoundTripIsIdentical) {
    TempDir dir;
    write_hrry(dir.file("m.hrry"), model_tensors(), model_kv());
    auto a = open_hrryfile(dir.file("m.hrry"));
    ASSERT_TRUE(a.ok());
    for (const uint64_t chunk : {uint64_t{1}, uint64_t{7}, uint64_t{8} << 20}) {
        ConvertOptions opt;
        opt.chunk_bytes = chunk;
        opt.durable = false;
        ASSERT_TRUE(write_hrryfile(**a, dir.file("out.hrry"), opt).ok());
        auto b = open_hrryfile(dir.file("out.hrry"));
        ASSERT_TRUE(b.ok()) << b.error().to_string();
        expect_identical(**a, **b);
    }
}

TEST(HrryFileWriter, ConformanceFilesRoundTrip) {
    const auto files = conformance_files();
    ASSERT_FALSE(files.empty()) << "no .hrry file under " << HURRAY_CONFORMANCE_DIR << "/files";
    TempDir dir;
    for (const auto& f : files) {
        SCOPED_TRACE(f.string());
        auto a = open_hrryfile(f);
        ASSERT_TRUE(a.ok()) << a.error().to_string();
        ASSERT_TRUE(write_hrryfile(**a, dir.file("copy.hrry")).ok());
        auto b = open_hrryfile(dir.file("copy.hrry"));
        ASSERT_TRUE(b.ok()) << b.error().to_string();
        expect_identical(**a, **b);
        EXPECT_TRUE(compare_sources(**a, **b).ok());
    }
}

TEST(HrryFileWriter, SourceWithoutViewsGoesThroughReads) {
    TempDir dir;
    test::MemorySource mem(model_tensors(), /*with_views=*/false);
    mem.metadata = model_kv();
    ConvertOptions opt;
    opt.chunk_bytes = 5;
    ASSERT_TRUE(write_hrryfile(mem, dir.file("out.hrry"), opt).ok());
    auto b = open_hrryfile(dir.file("out.hrry"));
    ASSERT_TRUE(b.ok());
    expect_identical(mem, **b);
}

TEST(HrryFileSource, RejectsMissingAndCorruptFiles) {
    TempDir dir;
    auto missing = open_hrryfile(dir.file("none.hrry"));
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().message().find("none.hrry"), std::string::npos);

    write_hrry(dir.file("m.hrry"), model_tensors());
    std::vector<uint8_t> bytes;
    {
        std::ifstream is(dir.file("m.hrry"), std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(is), {});
    }
    // Truncated at every 97th length, and with a byte flipped in the index area: an
    // error every time (never a crash).
    for (size_t len = 0; len < bytes.size(); len += 97) {
        const std::vector<uint8_t> cut(bytes.begin(),
                                       bytes.begin() + static_cast<std::ptrdiff_t>(len));
        auto src = open_hrryfile(dir.write("cut.hrry", cut));
        EXPECT_FALSE(src.ok()) << "length " << len;
    }
    auto flipped = bytes;
    flipped[flipped.size() - 40] ^= 0x5A;
    auto src = open_hrryfile(dir.write("flip.hrry", flipped));
    EXPECT_FALSE(src.ok());
}

TEST(HrryFileSource, OpenSourceDispatchesOnMagic) {
    TempDir dir;
    write_hrry(dir.file("m.bin"), model_tensors());  // the extension does not matter
    auto src = open_source(dir.file("m.bin"));
    ASSERT_TRUE(src.ok()) << src.error().to_string();
    EXPECT_EQ((*src)->format(), Format::kHrryFile);
    EXPECT_EQ((*src)->tensor_count(), model_tensors().size());
}

}  // namespace
}  // namespace hurray::convert
