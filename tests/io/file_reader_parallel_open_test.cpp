// SPDX-License-Identifier: Apache-2.0
// FileReadOptions::parallel_open: a second thread builds the name table and computes
// the index's CRC-32C while the calling thread reads the entries. Whatever the file,
// good or bad, the reader opened that way is the reader opened on one thread: the
// same entries, the same lookups by name, the same error for a file it refuses.
// (`parallel_open_min` = 1 here, so that small files take the two-thread path; on a
// machine with one CPU, both opens run on one thread and agree trivially.)
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "file_test_support.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/crc32c.hpp"
#include "hurray/io/file_format.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/index_codec.hpp"

namespace hurray {
namespace {

using test::Bytes;
using test::must;

/// `n` tensors named "n<k>" with k zero-padded to 5 digits (all names of one length),
/// in the order `order` gives; a version-2 table unless `table` is false.
Bytes parallel_file(size_t n, bool table, bool sorted_index, size_t (*order)(size_t k, size_t n)) {
    FileWriterOptions o;
    o.descriptor_table = table;
    o.sorted_index = sorted_index;
    MemorySink sink;
    auto w = must(FileWriter::create(sink, o));
    for (size_t k = 0; k < n; ++k) {
        auto d = must(make_dense(ElementType::kUInt8, {k % 4 + 1}));
        const Bytes data(k % 4 + 1, static_cast<uint8_t>(k));
        std::span<const uint8_t> bufs[] = {data};
        std::string digits = std::to_string(order(k, n));
        std::string name("n");
        name.append(5 - digits.size(), '0').append(digits);
        EXPECT_TRUE(w.add_tensor(name, d, bufs));
    }
    EXPECT_TRUE(w.finish());
    return std::move(sink).take();
}

size_t parallel_ascending(size_t k, size_t /*n*/) { return k; }
size_t parallel_descending(size_t k, size_t n) { return n - 1 - k; }
size_t parallel_shuffled(size_t k, size_t n) { return (k * 7919 + 13) % n; }  // 7919 prime: a permutation

Result<FileReader> parallel_open_bytes(const Bytes& bytes, bool parallel) {
    FileReadOptions o;
    o.parallel_open = parallel;
    o.parallel_open_min = 1;
    auto owner = std::make_shared<Bytes>(bytes);
    return FileReader::open_memory(*owner, owner, o);
}

/// Where the name of index entry `i` starts in the file, and the index's place.
struct ParallelIndex {
    FileTrailer trailer;
    std::vector<uint64_t> entry_at;  // absolute
    std::vector<IndexEntry> entries;
};

ParallelIndex parallel_index(const Bytes& b) {
    ParallelIndex x;
    x.trailer = must(decode_file_trailer(std::span<const uint8_t>(b).last(kFileTrailerSize), b.size() - kFileTrailerSize));
    x.entries = must(decode_index(std::span<const uint8_t>(b).subspan(x.trailer.index_offset, x.trailer.index_length),
                                  x.trailer.index_offset, &x.entry_at));
    return x;
}

/// Stores the CRC-32C of the index into the trailer.
void parallel_fix_crc(Bytes& b) {
    const FileTrailer t =
        must(decode_file_trailer(std::span<const uint8_t>(b).last(kFileTrailerSize), b.size() - kFileTrailerSize));
    const uint32_t crc = crc32c(std::span<const uint8_t>(b).subspan(t.index_offset, t.index_length));
    const size_t at = b.size() - kFileTrailerSize + trailer_field::kIndexCrc32c;
    for (size_t k = 0; k < 4; ++k) {
        b[at + k] = static_cast<uint8_t>(crc >> (8 * k));
    }
}

/// The two opens of `b` agree: both refuse it with the same error, or both accept it
/// with the same entries, every name found where it is, and the same check_all.
void parallel_expect_same(const Bytes& b, const std::string& what) {
    SCOPED_TRACE(what);
    auto one = parallel_open_bytes(b, false);
    auto two = parallel_open_bytes(b, true);
    ASSERT_EQ(one.ok(), two.ok()) << (one ? two.error().to_string() : one.error().to_string());
    if (!one) {
        EXPECT_EQ(one.error().to_string(), two.error().to_string());
        return;
    }
    ASSERT_EQ(one->tensor_count(), two->tensor_count());
    for (size_t i = 0; i < one->tensor_count(); ++i) {
        ASSERT_EQ(one->entry(i), two->entry(i)) << i;
        ASSERT_EQ(two->find(two->entry(i).name), i) << i;
    }
    EXPECT_EQ(two->find("absent"), std::nullopt);
    EXPECT_EQ(one->check_all().ok(), two->check_all().ok());
}

TEST(ParallelOpen, AgreesWithOneThreadOnEveryOrderAndSize) {
    for (const size_t n : {size_t{1}, size_t{2}, size_t{33}, size_t{1000}}) {
        for (const bool table : {true, false}) {
            for (auto* order : {&parallel_ascending, &parallel_descending, &parallel_shuffled}) {
                parallel_expect_same(parallel_file(n, table, false, order), std::to_string(n) + " tensors");
            }
            parallel_expect_same(parallel_file(n, table, true, &parallel_shuffled), "sorted index");
        }
    }
}

TEST(ParallelOpen, AgreesWithOneThreadWithoutTheIndexCrc) {
    // HAS_INDEX_CRC32C clear (and the stored CRC 0): nothing to compute beside.
    Bytes b = parallel_file(1000, true, false, &parallel_shuffled);
    FileHeader h = must(decode_file_header(b));
    h.flags &= ~file_flags::kHasIndexCrc32c;
    encode_file_header(h, std::span<uint8_t, kFileHeaderSize>(b.data(), kFileHeaderSize));
    const size_t at = b.size() - kFileTrailerSize + trailer_field::kIndexCrc32c;
    std::fill_n(b.begin() + static_cast<std::ptrdiff_t>(at), 4, uint8_t{0});
    ASSERT_TRUE(parallel_open_bytes(b, true));
    parallel_expect_same(b, "no CRC");
}

TEST(ParallelOpen, DuplicateNamesAreRefusedAsOnOneThread) {
    // One name made equal to another (all names are of one length), near and far
    // apart, first and last; then every name the same.
    const Bytes good = parallel_file(1000, true, false, &parallel_shuffled);
    const ParallelIndex x = parallel_index(good);
    const auto name_at = [&](size_t i) { return static_cast<std::ptrdiff_t>(x.entry_at[i] + 2); };
    for (const auto& [from, to] : {std::pair<size_t, size_t>{0, 1}, {1, 0}, {0, 999}, {999, 0}, {500, 501}, {3, 700}}) {
        Bytes b = good;
        std::copy_n(good.begin() + name_at(from), 6, b.begin() + name_at(to));
        parallel_fix_crc(b);
        auto r = parallel_open_bytes(b, true);
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code(), ErrorCode::kDuplicateName) << r.error().to_string();
        parallel_expect_same(b, "name " + std::to_string(from) + " copied to " + std::to_string(to));
    }
    Bytes same = good;
    for (size_t i = 1; i < x.entries.size(); ++i) {
        std::copy_n(good.begin() + name_at(0), 6, same.begin() + name_at(i));
    }
    parallel_fix_crc(same);
    parallel_expect_same(same, "every name the same");
}

TEST(ParallelOpen, EveryIndexByteChangedIsRefusedOrAcceptedAsOnOneThread) {
    // Each byte of a 24-entry index changed, with and without the CRC recomputed:
    // the two opens agree on every file (a CRC mismatch, a name length that runs past
    // the index, a duplicate, a file that is fine).
    const Bytes good = parallel_file(24, true, false, &parallel_shuffled);
    const ParallelIndex x = parallel_index(good);
    const FileTrailer& t = x.trailer;
    for (uint64_t at = t.index_offset; at < t.index_offset + t.index_length; ++at) {
        for (const uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}}) {
            Bytes b = good;
            b[at] ^= flip;
            parallel_expect_same(b, "index byte " + std::to_string(at) + " ^ " + std::to_string(flip));
            parallel_fix_crc(b);
            parallel_expect_same(b, "index byte " + std::to_string(at) + " ^ " + std::to_string(flip) + ", CRC fixed");
            if (HasFatalFailure()) {
                return;
            }
        }
    }
}

TEST(ParallelOpen, OffOrBelowTheMinimumOpensOnOneThread) {
    // Not observable from outside but for the result: the same reader either way.
    const Bytes b = parallel_file(100, true, false, &parallel_shuffled);
    FileReadOptions below;
    below.parallel_open_min = 101;
    FileReadOptions off;
    off.parallel_open = false;
    auto owner = std::make_shared<Bytes>(b);
    const FileReader r1 = must(FileReader::open_memory(*owner, owner, below));
    const FileReader r2 = must(FileReader::open_memory(*owner, owner, off));
    ASSERT_EQ(r1.tensor_count(), 100U);
    for (size_t i = 0; i < r1.tensor_count(); ++i) {
        EXPECT_EQ(r1.entry(i), r2.entry(i));
        EXPECT_EQ(r1.find(r1.entry(i).name), i);
    }
}

}  // namespace
}  // namespace hurray
