// SPDX-License-Identifier: Apache-2.0
// RangeSource and FileReader::open(RangeSource): the same results and errors
// as open_memory / open(path) on every file (valid, truncated at every
// length, with a bit flipped in every byte), under every option; request
// counts at open; sources that fail.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "file_test_support.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/range_source.hpp"
#include "reader_fingerprint.hpp"

namespace hurray {
namespace {

using test::build_file;
using test::BuildOptions;
using test::Bytes;
using test::dense;
using test::fingerprint;
using test::must;
using test::Padding;
using test::TestTensor;

std::vector<FileReadOptions> all_options() {
    std::vector<FileReadOptions> out;
    for (const DescriptorCheck check : {DescriptorCheck::kPeek, DescriptorCheck::kFull, DescriptorCheck::kLazy}) {
        for (const bool strict : {true, false}) {
            FileReadOptions o;
            o.descriptors = check;
            o.strict = strict;
            o.descriptor.strict = strict;
            out.push_back(o);
        }
    }
    return out;
}

/// Opens `bytes` both ways and compares everything they hand out.
::testing::AssertionResult same_as_memory(const Bytes& bytes, const FileReadOptions& o) {
    const std::string expected = fingerprint(FileReader::open_memory(bytes, {}, o));
    auto src = std::make_shared<MemoryRangeSource>(bytes);
    const std::string got = fingerprint(FileReader::open(src, o));
    if (expected != got) {
        return ::testing::AssertionFailure() << "open_memory:\n" << expected << "RangeSource:\n" << got;
    }
    return ::testing::AssertionSuccess();
}

test::BuiltFile tiny_file() {
    BuildOptions o;
    o.after_data = o.after_head = Padding::kReference;
    KvMetadata kv;
    EXPECT_TRUE(kv.set("k", KvValue::string("v")).ok());
    TestTensor h{"h", must(make_composite_head(ElementType::kFloat32, {2, 2}, CompositionRule::kPartition, 2))};
    TestTensor m0 = dense("m0", ElementType::kFloat32, {2, 1});
    m0.desc.shard = ShardDescriptor{{2, 2}, {0, 0}};
    TestTensor m1 = dense("m1", ElementType::kFloat32, {2, 1});
    m1.desc.shard = ShardDescriptor{{2, 2}, {0, 1}};
    return build_file({dense("a", ElementType::kInt8, {3}), h, m0, m1}, &kv, o);
}

/// A file larger than the reader's 64 KiB tail window: a 256 KiB tensor up
/// front, then small ones, a KV section of ~100 KiB, the index.
test::BuiltFile big_file() {
    KvMetadata kv;
    EXPECT_TRUE(kv.set("blob", KvValue::string(std::string(100 * 1024, 'x'))).ok());
    EXPECT_TRUE(kv.set("n", KvValue::int64(7)).ok());
    return build_file({dense("big", ElementType::kFloat32, {256, 256}), dense("s1", ElementType::kInt8, {5}),
                       dense("s2", ElementType::kUInt16, {3, 3})},
                      &kv);
}

TEST(RangeSourceTest, ValidFilesReadTheSameUnderEveryOption) {
    BuildOptions sorted;
    sorted.sort_index = true;
    const std::vector<Bytes> files = {test::small_file().bytes, test::small_file(sorted).bytes, tiny_file().bytes,
                                      build_file(test::nested_composites()).bytes, big_file().bytes};
    for (const Bytes& f : files) {
        for (const FileReadOptions& o : all_options()) {
            EXPECT_TRUE(same_as_memory(f, o));
        }
    }
}

TEST(RangeSourceTest, EveryTruncationGivesTheSameError) {
    const Bytes full = tiny_file().bytes;
    for (const FileReadOptions& o : all_options()) {
        for (size_t n = 0; n < full.size(); ++n) {
            const Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
            ASSERT_TRUE(same_as_memory(cut, o)) << "cut at " << n;
        }
    }
}

TEST(RangeSourceTest, EveryFlippedByteGivesTheSameOutcome) {
    // Every byte of the header, descriptors, KV section, index and trailer;
    // every 61st byte of the data and padding (which only change tensor bytes).
    const test::BuiltFile f = tiny_file();
    const Bytes& full = f.bytes;
    const auto structural = [&f](uint64_t i) {
        if (i < kFileHeaderSize || i >= f.trailer.kv_offset) {  // KV, index, trailer follow the tensors
            return true;
        }
        for (size_t t = 0; t < f.entries.size(); ++t) {
            if (i >= f.entries[t].descriptor_offset && i < f.descriptor_end[t]) {
                return true;
            }
        }
        return false;
    };
    for (const FileReadOptions& o : all_options()) {
        for (size_t i = 0; i < full.size(); ++i) {
            if (!structural(i) && i % 61 != 0) {
                continue;
            }
            Bytes bad = full;
            bad[i] ^= static_cast<uint8_t>(0x01U << (i % 8));
            ASSERT_TRUE(same_as_memory(bad, o)) << "byte " << i;
        }
    }
}

TEST(RangeSourceTest, CorruptionsOfALargeFileGiveTheSameError) {
    // Flips in the header, the tensor region, the KV section, the index and
    // the trailer of a file that the tail window does not cover.
    const test::BuiltFile f = big_file();
    const std::vector<uint64_t> at = {0,
                                      8,
                                      40,
                                      f.entries[0].descriptor_offset + 4,
                                      f.entries[1].descriptor_offset + 12,
                                      f.entries[0].data_offset + 1000,
                                      f.trailer.kv_offset + 3,
                                      f.trailer.kv_offset + 50000,
                                      f.trailer.index_offset + 2,
                                      f.trailer.index_offset + 20,
                                      f.trailer_offset + 8,
                                      f.trailer_offset + 20,
                                      f.trailer_offset + 36};
    for (const FileReadOptions& o : all_options()) {
        for (const uint64_t i : at) {
            Bytes bad = f.bytes;
            bad[i] ^= 0x40;
            ASSERT_TRUE(same_as_memory(bad, o)) << "byte " << i;
        }
    }
}

TEST(RangeSourceTest, RequestsAtOpen) {
    FileReadOptions lazy;
    lazy.descriptors = DescriptorCheck::kLazy;
    {
        // A small file: one request for all of it, nothing more afterwards.
        auto src = std::make_shared<MemoryRangeSource>(tiny_file().bytes);
        auto r = FileReader::open(src, {});
        ASSERT_TRUE(r.ok()) << r.error().to_string();
        EXPECT_EQ(src->request_count(), 1U);
        EXPECT_EQ(src->bytes_received(), src->size());
        EXPECT_FALSE(r->mapped());
        for (size_t i = 0; i < r->tensor_count(); ++i) {
            EXPECT_TRUE(r->tensor(i).ok());
        }
        EXPECT_TRUE(r->check_all().ok());
        EXPECT_EQ(src->request_count(), 1U);
    }
    {
        // Larger: the tail window (trailer), then the header and index + KV
        // in one read_ranges call (two requests with this source, which
        // reads ranges one by one).
        const test::BuiltFile f = big_file();
        auto src = std::make_shared<MemoryRangeSource>(f.bytes);
        auto r = FileReader::open(src, lazy);
        ASSERT_TRUE(r.ok()) << r.error().to_string();
        EXPECT_EQ(src->request_count(), 3U);
        const uint64_t index_and_kv = f.trailer.index_offset + f.trailer.index_length - f.trailer.kv_offset;
        EXPECT_EQ(src->bytes_received(), 64U * 1024 + kFileHeaderSize + index_and_kv);
        EXPECT_EQ(r->kv().get_int64("n").value(), 7);
        // A tensor outside the window: its descriptor and its data in one
        // request (kept).
        auto t = r->tensor("big");
        ASSERT_TRUE(t.ok()) << t.error().to_string();
        EXPECT_EQ(src->request_count(), 4U);
        EXPECT_TRUE(r->tensor("big").ok());
        EXPECT_EQ(src->request_count(), 4U);
        // Default options: the descriptors outside the window are fetched at
        // open in one read_ranges call (here one read per run of adjacent
        // descriptors: "big", then "s1" and the head of the composite), and
        // a tensor then costs its data only.
        auto src2 = std::make_shared<MemoryRangeSource>(f.bytes);
        auto r2 = FileReader::open(src2, {});
        ASSERT_TRUE(r2.ok()) << r2.error().to_string();
        const uint64_t at_open = src2->request_count();
        EXPECT_LE(at_open, 6U);
        ASSERT_TRUE(r2->check_all().ok());
        EXPECT_EQ(src2->request_count(), at_open);
        ASSERT_TRUE(r2->tensor("big").ok());
        EXPECT_EQ(src2->request_count(), at_open + 1);
    }
}

/// A source that fails its n-th request (1-based) and counts them.
class FailingSource final : public RangeSource {
public:
    FailingSource(Bytes bytes, uint64_t fail_at) : bytes_(std::move(bytes)), fail_at_(fail_at) {}
    [[nodiscard]] uint64_t size() const noexcept override { return bytes_.size(); }
    [[nodiscard]] std::string name() const override { return "test://failing"; }
    [[nodiscard]] Status read(uint64_t offset, std::span<uint8_t> out) override {
        HURRAY_RETURN_IF_ERROR(check_range(offset, out.size()));
        count_request(out.size());
        if (request_count() == fail_at_) {
            return Error(ErrorCode::kIoError, "injected failure", offset);
        }
        std::copy_n(bytes_.begin() + static_cast<std::ptrdiff_t>(offset), out.size(), out.begin());
        return Status::success();
    }

private:
    Bytes bytes_;
    uint64_t fail_at_;
};

TEST(RangeSourceTest, AFailingRequestIsAnErrorNamingTheSourceAndPart) {
    const Bytes bytes = big_file().bytes;
    FileReadOptions lazy;
    lazy.descriptors = DescriptorCheck::kLazy;
    auto r = FileReader::open(std::make_shared<FailingSource>(bytes, 1), lazy);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), ErrorCode::kIoError);
    EXPECT_NE(r.error().message().find("'test://failing'"), std::string::npos) << r.error().to_string();
    EXPECT_NE(r.error().message().find("injected failure"), std::string::npos) << r.error().to_string();
    auto h = FileReader::open(std::make_shared<FailingSource>(bytes, 2), lazy);
    ASSERT_FALSE(h.ok());
    EXPECT_NE(h.error().message().find("file header, index and KV section: injected failure"), std::string::npos)
        << h.error().to_string();
    // The descriptors fetched at open (default options).
    auto d = FileReader::open(std::make_shared<FailingSource>(bytes, 4), {});
    ASSERT_FALSE(d.ok());
    EXPECT_NE(d.error().message().find("descriptors: injected failure"), std::string::npos) << d.error().to_string();
    // After open: the tensor read fails, the reader stays usable.
    auto ok = FileReader::open(std::make_shared<FailingSource>(bytes, 4), lazy);
    ASSERT_TRUE(ok.ok()) << ok.error().to_string();
    auto t = ok->tensor("big");
    ASSERT_FALSE(t.ok());
    EXPECT_NE(t.error().message().find("tensor 'big' (index entry 0): descriptor and data: injected failure"),
              std::string::npos)
        << t.error().to_string();
    EXPECT_TRUE(ok->tensor("big").ok());
    // With the descriptor fetched at open, the data read fails alone.
    auto ok2 = FileReader::open(std::make_shared<FailingSource>(bytes, 7), {});
    ASSERT_TRUE(ok2.ok()) << ok2.error().to_string();
    auto t2 = ok2->tensor("big");
    ASSERT_FALSE(t2.ok());
    EXPECT_NE(t2.error().message().find("tensor data: injected failure"), std::string::npos) << t2.error().to_string();
    EXPECT_TRUE(ok2->tensor("big").ok());
    EXPECT_FALSE(FileReader::open(std::shared_ptr<RangeSource>{}).ok());
}

TEST(RangeSourceTest, SourcesRefuseRangesPastTheEnd) {
    MemoryRangeSource m(Bytes{1, 2, 3});
    std::vector<uint8_t> buf(2);
    EXPECT_TRUE(m.read(1, buf).ok());
    EXPECT_EQ(buf, (std::vector<uint8_t>{2, 3}));
    auto past = m.read(2, buf);
    ASSERT_FALSE(past.ok());
    EXPECT_EQ(past.error().code(), ErrorCode::kTruncated);
    EXPECT_NE(past.error().message().find("bytes [2, 4)"), std::string::npos) << past.error().to_string();
    EXPECT_FALSE(m.read(UINT64_MAX, buf).ok());
    EXPECT_EQ(m.identity(), "");
}

TEST(RangeSourceTest, ReadDataCopiesIntoTheCallersBufferFromEverySource) {
    // Mapped, pread, memory and range sources: read_data gives the bytes of
    // each data region, whole and in odd pieces, and refuses what lies outside.
    test::TempDir dir;
    const test::BuiltFile f = big_file();
    const std::string path = dir.write("big.hrry", f.bytes);
    FileReadOptions pread;
    pread.use_mmap = false;
    auto range = std::make_shared<MemoryRangeSource>(f.bytes);
    std::vector<std::pair<std::string, Result<FileReader>>> readers;
    readers.emplace_back("mapped", FileReader::open(path));
    readers.emplace_back("pread", FileReader::open(path, pread));
    readers.emplace_back("memory", FileReader::open_memory(f.bytes));
    readers.emplace_back("range", FileReader::open(range));
    for (auto& [kind, r] : readers) {
        ASSERT_TRUE(r.ok()) << kind << ": " << r.error().to_string();
        for (size_t i = 0; i < r->tensor_count(); ++i) {
            const IndexEntry& e = r->entry(i);
            const auto first = f.bytes.begin() + static_cast<std::ptrdiff_t>(e.data_offset);
            const Bytes want(first, first + static_cast<std::ptrdiff_t>(e.data_length));
            Bytes whole(e.data_length);
            ASSERT_TRUE(r->read_data(i, 0, whole).ok()) << kind << " " << i;
            EXPECT_EQ(whole, want) << kind << " " << i;
            Bytes pieces(e.data_length);
            for (uint64_t at = 0; at < e.data_length; at += 4093) {
                const uint64_t n = std::min<uint64_t>(4093, e.data_length - at);
                ASSERT_TRUE(r->read_data(i, at, std::span<uint8_t>(pieces).subspan(at, n)).ok()) << kind;
            }
            EXPECT_EQ(pieces, want) << kind << " " << i;
            Bytes one(1);
            auto past = r->read_data(i, e.data_length, one);
            ASSERT_FALSE(past.ok()) << kind;
            EXPECT_EQ(past.error().code(), ErrorCode::kInvalidArgument);
            EXPECT_NE(past.error().message().find(std::string(e.name)), std::string::npos) << past.error().to_string();
            EXPECT_FALSE(r->read_data(i, UINT64_MAX, one).ok()) << kind;
        }
        Bytes one(1);
        EXPECT_EQ(r->read_data(r->tensor_count(), 0, one).error().code(), ErrorCode::kInvalidArgument);
    }
    // Nothing is kept: each read outside the windows is one more request.
    const size_t big = *readers[3].second->find("big");
    const uint64_t before = range->request_count();
    Bytes some(1000);
    ASSERT_TRUE(readers[3].second->read_data(big, 0, some).ok());
    ASSERT_TRUE(readers[3].second->read_data(big, 0, some).ok());
    EXPECT_EQ(range->request_count(), before + 2);
}

TEST(RangeSourceTest, LocalFileSourceMatchesOpenPath) {
    test::TempDir dir;
    const Bytes full = tiny_file().bytes;
    FileReadOptions pread;
    pread.use_mmap = false;
    for (const size_t n : {full.size(), full.size() - 1, size_t{70}, size_t{10}, size_t{0}}) {
        const std::string path = dir.write("f" + std::to_string(n), Bytes(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n)));
        auto src = FileRangeSource::open(path);
        ASSERT_TRUE(src.ok()) << src.error().to_string();
        EXPECT_EQ((*src)->name(), path);
        EXPECT_EQ(fingerprint(FileReader::open(*src, {})), fingerprint(FileReader::open(path, pread))) << n;
        EXPECT_TRUE((*src)->check_unchanged().ok());
    }
    auto missing = FileRangeSource::open(dir.file("missing"));
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().code(), ErrorCode::kIoError);
    auto directory = FileRangeSource::open(dir.path().string());
    ASSERT_FALSE(directory.ok());
    EXPECT_NE(directory.error().message().find("not a regular file"), std::string::npos);
}

}  // namespace
}  // namespace hurray
