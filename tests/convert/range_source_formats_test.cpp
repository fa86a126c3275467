// SPDX-License-Identifier: Apache-2.0
// The formats read over a RangeSource (open_source(std::shared_ptr<RangeSource>)):
// HRRYFILE, SafeTensors, .npy and .npz read as from their paths, in a few range reads
// (GGUF: gguf_test.cpp); a corrupt file fails as from its path.
// tests/http/ runs the same over HTTP (nginx).

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "convert_test_support.hpp"
#include "hurray/convert/convert.hpp"
#include "hurray/convert/gguf.hpp"
#include "hurray/convert/hrryfile.hpp"
#include "hurray/convert/numpy.hpp"
#include "hurray/convert/safetensors.hpp"
#include "hurray/convert/tensor_source.hpp"
#include "hurray/io/range_source.hpp"
#include "io_test_util.hpp"

namespace hurray::convert::test {
namespace {

using hurray::test::TempDir;

std::shared_ptr<RangeSource> file_range(const std::string& path) {
    auto r = FileRangeSource::open(path);
    EXPECT_TRUE(r.ok()) << r.error().to_string();
    return std::move(r).value();
}

TEST(RangeSourceFormats, EachFormatReadsAsFromItsPath) {
    const TempDir dir;
    const MemorySource two(small_tensors());
    std::vector<MemTensor> one_tensor = small_tensors();
    one_tensor.resize(1);
    const MemorySource one(std::move(one_tensor));
    struct Case {
        std::string file;
        Format format;
        const MemorySource* source;
    };
    for (const Case& c : {Case{"m.hrry", Format::kHrryFile, &two}, Case{"m.safetensors", Format::kSafeTensors, &two},
                          Case{"w.npy", Format::kNpy, &one}}) {
        SCOPED_TRACE(c.file);
        const std::string path = dir.file(c.file);
        ConvertOptions options;
        options.to = c.format;
        ASSERT_TRUE(write(*c.source, path, options).ok());
        auto by_path = open_source(path);
        ASSERT_TRUE(by_path.ok()) << by_path.error().to_string();
        auto by_range = open_source(file_range(path));
        ASSERT_TRUE(by_range.ok()) << by_range.error().to_string();
        EXPECT_EQ((*by_range)->format(), c.format);
        const Status same = compare_sources(**by_path, **by_range);
        EXPECT_TRUE(same.ok()) << same.error().to_string();
        EXPECT_TRUE(compare_sources(*c.source, **by_range).ok());
        // A view, where the reader offers one (the HRRYFILE reader keeps what it fetched),
        // shows the bytes read() gives.
        if (const auto v = (*by_range)->view(0, 0)) {
            std::vector<uint8_t> bytes(v->size());
            ASSERT_TRUE((*by_range)->read(0, 0, 0, bytes).ok());
            EXPECT_TRUE(std::equal(v->begin(), v->end(), bytes.begin(), bytes.end()));
        } else {
            EXPECT_NE(c.format, Format::kHrryFile);
        }
    }
}

/// `count` float32 tensors "t0", "t1", ... of `elements` elements each.
std::vector<MemTensor> many_tensors(size_t count, uint64_t elements) {
    std::vector<MemTensor> out;
    for (size_t i = 0; i < count; ++i) {
        std::string name = "t";
        name.append(std::to_string(i));  // (not "t" + ...: GCC 12 warns on that inlined here)
        MemTensor t{std::move(name), *make_dense(ElementType::kFloat32, {elements}), {}};
        std::vector<float> v(elements);
        for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<float>(i * 7 + k);
        t.buffers.push_back(f32_bytes(v));
        out.push_back(std::move(t));
    }
    return out;
}

TEST(RangeSourceFormats, SafeTensorsOpensInOneRequestAndReadsATensorInOne) {
    const TempDir dir;
    const std::string path = dir.file("m.safetensors");
    const std::vector<MemTensor> tensors = many_tensors(2, 100000);  // 800 KB: past the 64 KiB head
    ASSERT_TRUE(write_safetensors(MemorySource(tensors), path).ok());
    const auto range = file_range(path);
    auto src = open_source(range);
    ASSERT_TRUE(src.ok()) << src.error().to_string();
    // The head: the format, the header's length and the header, kept.
    EXPECT_EQ(range->request_count(), 1U);
    const std::vector<uint8_t>& expect = tensors[1].buffers[0];
    std::vector<uint8_t> t1(expect.size());
    ASSERT_TRUE((*src)->read(1, 0, 0, t1).ok());
    EXPECT_EQ(range->request_count(), 2U);
    EXPECT_EQ(t1, expect);
    // A part of a tensor is one range of its bytes.
    std::vector<uint8_t> part(8);
    ASSERT_TRUE((*src)->read(1, 0, 4000, part).ok());
    EXPECT_EQ(range->request_count(), 3U);
    EXPECT_TRUE(std::equal(part.begin(), part.end(), expect.begin() + 4000));
}

TEST(RangeSourceFormats, ASafeTensorsHeaderPastTheHeadCostsOneMoreRequest) {
    const TempDir dir;
    const std::string path = dir.file("m.safetensors");
    ASSERT_TRUE(write_safetensors(MemorySource(many_tensors(2000, 1)), path).ok());  // a ~100 KB header
    const auto range = file_range(path);
    auto src = open_source(range);
    ASSERT_TRUE(src.ok()) << src.error().to_string();
    EXPECT_EQ(range->request_count(), 2U);
    EXPECT_EQ((*src)->tensor_count(), 2000U);
}

TEST(RangeSourceFormats, NpzReadsAsFromItsPath) {
    // .npz over a range source: the zip structure by range reads, the members through
    // libzip reading the source 1 MiB ahead (stored and deflated members alike).
    const TempDir dir;
    const MemorySource two(small_tensors());
    const std::string path = dir.file("m.npz");
    ConvertOptions options;
    options.to = Format::kNpz;
    ASSERT_TRUE(write(two, path, options).ok());
    const auto range = file_range(path);
    auto src = open_source(range);
    ASSERT_TRUE(src.ok()) << src.error().to_string();
    EXPECT_EQ((*src)->format(), Format::kNpz);
    auto local = open_source(path);
    ASSERT_TRUE(local.ok());
    const Status same = compare_sources(**local, **src);
    EXPECT_TRUE(same.ok()) << same.error().to_string();
    EXPECT_LE(range->request_count(), 3U);  // a small archive: its first 64 KiB hold it
    // A corrupt archive fails as from its path: the same code and byte offset.
    std::vector<uint8_t> bytes = hurray::test::read_all(path);
    bytes[bytes.size() - 22 + 16] ^= 0x40U;  // the central directory's offset, in the end record
    const std::string bad = dir.write("bad.npz", bytes);
    auto by_path = open_npz(bad);
    auto by_range = open_npz(std::make_shared<MemoryRangeSource>(bytes));
    ASSERT_FALSE(by_path.ok());
    ASSERT_FALSE(by_range.ok());
    EXPECT_EQ(by_range.error().code(), by_path.error().code());
    EXPECT_EQ(by_range.error().offset(), by_path.error().offset());
}

TEST(RangeSourceFormats, ACorruptFileFailsAsFromItsPath) {
    const TempDir dir;
    const std::string path = dir.file("m.safetensors");
    ASSERT_TRUE(write_safetensors(MemorySource(small_tensors()), path).ok());
    std::vector<uint8_t> bytes = hurray::test::read_all(path);
    ASSERT_GT(bytes.size(), 20U);
    bytes[12] = '[';  // the header is no longer a JSON object
    const std::string bad = dir.write("bad.safetensors", bytes);
    auto by_path = open_safetensors(bad);
    auto by_memory = open_safetensors(std::make_shared<MemoryRangeSource>(bytes));
    auto by_file = open_safetensors(file_range(bad));
    ASSERT_FALSE(by_path.ok());
    ASSERT_FALSE(by_memory.ok());
    ASSERT_FALSE(by_file.ok());
    EXPECT_EQ(by_memory.error().code(), by_path.error().code());
    EXPECT_EQ(by_memory.error().offset(), by_path.error().offset());
    EXPECT_EQ(by_file.error().message(), by_path.error().message());
    // A null source is an argument error, not a crash.
    EXPECT_EQ(open_source(std::shared_ptr<RangeSource>()).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(open_safetensors(std::shared_ptr<RangeSource>()).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(open_npy(std::shared_ptr<RangeSource>()).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(open_hrryfile(std::shared_ptr<RangeSource>()).error().code(), ErrorCode::kInvalidArgument);
}

TEST(RangeSourceFormats, AnNpyTensorIsNamedAfterTheStemOfTheSourceName) {
    const TempDir dir;
    std::vector<MemTensor> one = small_tensors();
    one.resize(1);
    const std::string path = dir.file("weights.npy");
    ASSERT_TRUE(write_npy(MemorySource(std::move(one)), path).ok());
    auto src = open_npy(file_range(path));
    ASSERT_TRUE(src.ok()) << src.error().to_string();
    EXPECT_EQ((*src)->tensor(0).name, "weights");
}

}  // namespace
}  // namespace hurray::convert::test
