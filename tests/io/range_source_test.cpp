// SPDX-License-Identifier: Apache-2.0
// RangeSource and FileReader::open(RangeSource): the same results and errors
// as open_memory / open(path) on every file (valid, truncated at every
// length, with a bit flipped in every byte), under every option; request
// counts at open (the tail window of FileReadOptions::range_tail_bytes: the
// default, exact, and sizes between); sources that fail.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "file_test_support.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"
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
            // The default first read (the trailer alone) and a 64 KiB one.
            for (const uint64_t tail : {uint64_t{0}, uint64_t{64} * 1024}) {
                FileReadOptions o;
                o.descriptors = check;
                o.strict = strict;
                o.descriptor.strict = strict;
                o.range_tail_bytes = tail;
                out.push_back(o);
            }
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
        // A small file with a 64 KiB first read: one request for all of it,
        // nothing more afterwards.
        auto src = std::make_shared<MemoryRangeSource>(tiny_file().bytes);
        FileReadOptions window;
        window.range_tail_bytes = uint64_t{64} * 1024;
        auto r = FileReader::open(src, window);
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
        // The tail window holds the end of the KV section and the index: only
        // the rest is read, so every byte of the sections is read once.
        const uint64_t index_and_kv = f.trailer.index_offset + f.trailer.index_length - f.trailer.kv_offset;
        EXPECT_EQ(src->bytes_received(), kFileHeaderSize + index_and_kv + kFileTrailerSize);
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

FileReadOptions with_tail(uint64_t tail, DescriptorCheck check = DescriptorCheck::kPeek) {
    FileReadOptions o;
    o.range_tail_bytes = tail;
    o.descriptors = check;
    return o;
}

/// The bytes of the header, trailer, index and KV section (issue 28's measure).
uint64_t section_bytes(const FileTrailer& t) {
    return kFileHeaderSize + kFileTrailerSize + t.index_length + t.kv_length;
}

/// What exact mode reads of a file whose KV section and index end at the
/// trailer: the header, then everything from the first of them to the end
/// (the padding between them included: the test builder pads, and FileWriter
/// starts the index on the next multiple of 8).
uint64_t exact_bytes(const FileTrailer& t, uint64_t size) {
    return kFileHeaderSize + size - std::min(t.kv_offset, t.index_offset);
}

/// A file written by FileWriter (with a descriptor table unless `table` is
/// false): `n` float32 tensors of a page each, so that the data lies before
/// the tail window and the sections (~100 bytes a tensor) fit in it.
Bytes written_file(size_t n, bool table) {
    FileWriterOptions o;
    o.descriptor_table = table;
    MemorySink sink;
    auto w = must(FileWriter::create(sink, o));
    for (size_t k = 0; k < n; ++k) {
        auto d = must(make_dense(ElementType::kFloat32, {1024}));
        Bytes data(d.buffers[0].byte_size, static_cast<uint8_t>(k));
        std::span<const uint8_t> bufs[] = {data};
        std::string name("layer.");
        name.append(std::to_string(k));  // appended: GCC 12 -O3 warns falsely on "a" + std::to_string(...)
        name.append(".weight");
        EXPECT_TRUE(w.add_tensor(name, d, bufs).ok());
    }
    EXPECT_TRUE(w.kv().set("general.name", KvValue::string("written")).ok());
    EXPECT_TRUE(w.finish().ok());
    return std::move(sink).take();
}

/// A source that sends every `read_ranges` call as one request (as a server
/// with multi-range support does), counting requests and bytes.
class VectoredSource final : public RangeSource {
public:
    explicit VectoredSource(Bytes bytes) : bytes_(std::move(bytes)) {}
    [[nodiscard]] uint64_t size() const noexcept override { return bytes_.size(); }
    [[nodiscard]] Status read(uint64_t offset, std::span<uint8_t> out) override {
        HURRAY_RETURN_IF_ERROR(check_range(offset, out.size()));
        count_request(out.size());
        std::copy_n(bytes_.begin() + static_cast<std::ptrdiff_t>(offset), out.size(), out.begin());
        return Status::success();
    }
    [[nodiscard]] Status read_ranges(std::span<const ByteRange> ranges) override {
        uint64_t n = 0;
        for (const ByteRange& r : ranges) {
            HURRAY_RETURN_IF_ERROR(check_range(r.offset, r.out.size()));
            std::copy_n(bytes_.begin() + static_cast<std::ptrdiff_t>(r.offset), r.out.size(), r.out.begin());
            n += r.out.size();
        }
        count_request(n);
        return Status::success();
    }

private:
    Bytes bytes_;
};

TEST(RangeSourceTest, ExactTailReadsTheSectionsAndNothingMore) {
    // range_tail_bytes = 0: the trailer, then the header and the index + KV
    // section in one read_ranges call; with a table, listing needs nothing more.
    const Bytes bytes = written_file(300, true);
    const FileTrailer t = must(FileReader::open_memory(bytes)).trailer();
    ASSERT_EQ(t.index_offset + t.index_length, bytes.size() - kFileTrailerSize);  // KV, index, trailer
    ASSERT_LT(section_bytes(t), 64U * 1024);
    ASSERT_LE(exact_bytes(t, bytes.size()) - section_bytes(t), 7U) << "at most the padding before the index";
    ASSERT_GT(bytes.size(), 64U * 1024);
    const std::string expected = fingerprint(FileReader::open_memory(bytes));
    {
        auto src = std::make_shared<MemoryRangeSource>(bytes);  // one request per range
        auto r = FileReader::open(src, with_tail(0));
        ASSERT_TRUE(r.ok()) << r.error().to_string();
        ASSERT_TRUE(r->descriptor_table_bytes().has_value());
        for (size_t i = 0; i < r->tensor_count(); ++i) {
            ASSERT_TRUE(r->descriptor(i).ok());
        }
        EXPECT_EQ(src->request_count(), 3U);  // trailer, header, index + KV
        EXPECT_EQ(src->bytes_received(), exact_bytes(t, bytes.size()));
        EXPECT_EQ(fingerprint(std::move(r)), expected);
    }
    {
        auto src = std::make_shared<VectoredSource>(bytes);  // one request per read_ranges call
        auto r = FileReader::open(src, with_tail(0));
        ASSERT_TRUE(r.ok()) << r.error().to_string();
        for (size_t i = 0; i < r->tensor_count(); ++i) {
            ASSERT_TRUE(r->descriptor(i).ok());
        }
        EXPECT_EQ(src->request_count(), 2U);  // trailer; header and index + KV
        EXPECT_EQ(src->bytes_received(), exact_bytes(t, bytes.size()));
        // Then a tensor costs one request: its descriptor and data.
        ASSERT_TRUE(r->tensor("layer.7.weight").ok());
        EXPECT_EQ(src->request_count(), 3U);
    }
    {
        // The default is exact: the same three reads.
        auto src = std::make_shared<MemoryRangeSource>(bytes);
        auto r = FileReader::open(src);
        ASSERT_TRUE(r.ok()) << r.error().to_string();
        EXPECT_EQ(src->request_count(), 3U);
        EXPECT_EQ(src->bytes_received(), exact_bytes(t, bytes.size()));
    }
    {
        // A 64 KiB first read for comparison: it holds the sections, then the
        // header (a round trip fewer, bytes beyond the sections).
        auto src = std::make_shared<MemoryRangeSource>(bytes);
        auto r = FileReader::open(src, with_tail(uint64_t{64} * 1024));
        ASSERT_TRUE(r.ok()) << r.error().to_string();
        EXPECT_EQ(src->request_count(), 2U);
        EXPECT_EQ(src->bytes_received(), 64U * 1024 + kFileHeaderSize);
    }
    {
        // Without a table (kLazy: no descriptor read at open), the same three reads.
        const test::BuiltFile f = big_file();
        auto src = std::make_shared<MemoryRangeSource>(f.bytes);
        auto r = FileReader::open(src, with_tail(0, DescriptorCheck::kLazy));
        ASSERT_TRUE(r.ok()) << r.error().to_string();
        EXPECT_EQ(src->request_count(), 3U);
        EXPECT_EQ(src->bytes_received(), exact_bytes(f.trailer, f.bytes.size()));
        EXPECT_EQ(r->kv().get_int64("n").value(), 7);
        EXPECT_EQ(fingerprint(std::move(r)), fingerprint(FileReader::open_memory(f.bytes)));
    }
}

TEST(RangeSourceTest, ATailSmallerThanTheTrailerActsAsExact) {
    const Bytes bytes = written_file(300, true);
    const FileTrailer t = must(FileReader::open_memory(bytes)).trailer();
    const std::string expected = fingerprint(FileReader::open_memory(bytes));
    for (const uint64_t tail : {uint64_t{0}, uint64_t{1}, uint64_t{8}, uint64_t{39}, kFileTrailerSize}) {
        auto src = std::make_shared<MemoryRangeSource>(bytes);
        auto r = FileReader::open(src, with_tail(tail));
        ASSERT_TRUE(r.ok()) << tail << ": " << r.error().to_string();
        EXPECT_EQ(src->request_count(), 3U) << tail;
        EXPECT_EQ(src->bytes_received(), exact_bytes(t, bytes.size())) << tail;
        EXPECT_EQ(fingerprint(std::move(r)), expected) << tail;
    }
}

TEST(RangeSourceTest, ATailHoldingPartOfTheSectionsReadsOnlyTheRest) {
    // Windows that end inside the index, at the KV/index boundary, inside the
    // KV section, at its start, and past it in the tensor region: every byte
    // is read once (the window, then the header and what the window left
    // out of the sections), in at most three requests, with the results of
    // open_memory.
    for (const bool table : {true, false}) {
        const Bytes bytes = table ? written_file(300, true) : big_file().bytes;
        const FileTrailer t = must(FileReader::open_memory(bytes)).trailer();
        const std::string expected = fingerprint(FileReader::open_memory(bytes));
        const uint64_t size = bytes.size();
        const uint64_t sections_from = size - t.kv_offset;  // KV, index, trailer: the last bytes
        const uint64_t tails[] = {kFileTrailerSize + t.index_length / 2, kFileTrailerSize + t.index_length,
                                  kFileTrailerSize + t.index_length + t.kv_length / 3, sections_from - 1,
                                  sections_from, sections_from + 1000};
        for (const uint64_t tail : tails) {
            auto src = std::make_shared<MemoryRangeSource>(bytes);
            auto r = FileReader::open(src, with_tail(tail, DescriptorCheck::kLazy));
            ASSERT_TRUE(r.ok()) << tail << ": " << r.error().to_string();
            EXPECT_EQ(src->bytes_received(), kFileHeaderSize + std::max(tail, sections_from)) << table << " " << tail;
            EXPECT_EQ(src->request_count(), tail < sections_from ? 3U : 2U) << table << " " << tail;
            EXPECT_EQ(fingerprint(std::move(r)), expected) << table << " " << tail;
        }
    }
}

TEST(RangeSourceTest, ATinyFileInExactMode) {
    // Smaller than the default window: the default reads it whole in one
    // request; exact mode reads the sections only (the data and descriptors
    // of the tensors as they are used).
    for (const Bytes& bytes : {tiny_file().bytes, written_file(2, true)}) {
        const FileTrailer t = must(FileReader::open_memory(bytes)).trailer();
        const std::string expected = fingerprint(FileReader::open_memory(bytes));
        auto whole = std::make_shared<MemoryRangeSource>(bytes);
        EXPECT_EQ(fingerprint(FileReader::open(whole, with_tail(64 * 1024, DescriptorCheck::kLazy))), expected);
        EXPECT_EQ(whole->request_count(), 1U);
        auto src = std::make_shared<MemoryRangeSource>(bytes);
        auto r = FileReader::open(src, with_tail(0, DescriptorCheck::kLazy));
        ASSERT_TRUE(r.ok()) << r.error().to_string();
        EXPECT_LE(src->request_count(), 3U);
        EXPECT_EQ(src->bytes_received(), exact_bytes(t, bytes.size()));
        EXPECT_EQ(fingerprint(std::move(r)), expected);
    }
    // Files shorter than header + trailer, and than the trailer: the errors of
    // open_memory (and so of the default mode).
    const Bytes full = tiny_file().bytes;
    for (const size_t n : {size_t{0}, size_t{1}, size_t{39}, size_t{40}, size_t{41}, size_t{64}, size_t{103},
                           size_t{104}}) {
        const Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
        EXPECT_TRUE(same_as_memory(cut, with_tail(0))) << n;
    }
}

/// The first read of FileReader::open: exact mode (the default), one that ends
/// inside the sections and one that holds a small file whole. A test per value, so
/// that ctest runs the three sweeps in parallel (each is long under ASan).
class RangeSourceFirstReadTest : public ::testing::TestWithParam<uint64_t> {};

INSTANTIATE_TEST_SUITE_P(Tails, RangeSourceFirstReadTest,
                         ::testing::Values(uint64_t{0}, uint64_t{100}, uint64_t{64} * 1024));

TEST_P(RangeSourceFirstReadTest, EveryFirstReadGivesTheErrorsOfAFileInMemory) {
    // Every truncation and flipped structural byte of a small file, flips in
    // the sections of a larger one, and garbage: the outcome (error message
    // included) of open_memory, for the first read GetParam().
    const test::BuiltFile small = tiny_file();
    const test::BuiltFile large = big_file();
    {
        const uint64_t tail = GetParam();
        for (const DescriptorCheck check : {DescriptorCheck::kPeek, DescriptorCheck::kFull, DescriptorCheck::kLazy}) {
            const FileReadOptions o = with_tail(tail, check);
            for (size_t n = 0; n < small.bytes.size(); ++n) {
                const Bytes cut(small.bytes.begin(), small.bytes.begin() + static_cast<std::ptrdiff_t>(n));
                ASSERT_TRUE(same_as_memory(cut, o)) << tail << " cut at " << n;
            }
            for (size_t i = 0; i < small.bytes.size(); ++i) {
                if (i >= kFileHeaderSize && i < small.trailer.kv_offset && i % 7 != 0) {
                    continue;  // the tensor region: every 7th byte
                }
                Bytes bad = small.bytes;
                bad[i] ^= static_cast<uint8_t>(0x01U << (i % 8));
                ASSERT_TRUE(same_as_memory(bad, o)) << tail << " byte " << i;
            }
            for (const uint64_t i : {uint64_t{8}, large.trailer.kv_offset + 3, large.trailer.index_offset + 2,
                                     large.trailer_offset + 8, large.trailer_offset + 16, large.trailer_offset + 24,
                                     large.trailer_offset + 32}) {
                Bytes bad = large.bytes;
                bad[i] ^= 0x40;
                ASSERT_TRUE(same_as_memory(bad, o)) << tail << " byte " << i;
            }
        }
        // Garbage, and a trailer whose offsets point past the file or overflow.
        for (const size_t n : {size_t{40}, size_t{104}, size_t{1000}, size_t{100000}}) {
            Bytes junk(n);
            for (size_t k = 0; k < n; ++k) {
                junk[k] = static_cast<uint8_t>(k * 131 + 17);
            }
            const Bytes with_magic = [&] {
                Bytes b = junk;
                if (b.size() < kFileHeaderSize + kFileTrailerSize) {
                    return b;
                }
                std::copy_n(small.bytes.begin(), kFileHeaderSize, b.begin());  // a valid header
                std::copy_n(small.bytes.end() - static_cast<std::ptrdiff_t>(kFileTrailerSize), kFileTrailerSize,
                            b.end() - static_cast<std::ptrdiff_t>(kFileTrailerSize));  // the small file's trailer
                return b;
            }();
            for (const Bytes& b : {junk, n >= kFileHeaderSize + kFileTrailerSize ? with_magic : junk}) {
                auto exact = FileReader::open(std::make_shared<MemoryRangeSource>(b), with_tail(tail));
                auto by_default = FileReader::open(std::make_shared<MemoryRangeSource>(b));
                ASSERT_FALSE(exact.ok()) << n;
                ASSERT_FALSE(by_default.ok()) << n;
                EXPECT_EQ(exact.error().to_string(), by_default.error().to_string()) << n;
                EXPECT_TRUE(same_as_memory(b, with_tail(tail))) << n;
            }
        }
        for (const uint64_t far : {large.bytes.size() + uint64_t{4096}, UINT64_MAX - 8}) {
            for (const uint64_t field : {trailer_field::kIndexOffset, trailer_field::kIndexLength,
                                         trailer_field::kKvOffset, trailer_field::kKvLength}) {
                Bytes b = large.bytes;
                const size_t width = field == trailer_field::kKvLength ? 4 : 8;  // kv_length is a u32
                for (size_t k = 0; k < width; ++k) {  // little-endian
                    b[large.trailer_offset + field + k] = static_cast<uint8_t>(far >> (8 * k));
                }
                EXPECT_TRUE(same_as_memory(b, with_tail(tail))) << tail << " field " << field;
            }
        }
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
        // n + suffix, not "f" + n: GCC 12 -O2 warns falsely (-Wstringop-overflow) on
        // `const char* + std::string` once this test sits in a unity batch.
        const std::string path = dir.write(std::to_string(n) + ".hrry", Bytes(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n)));
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
