// SPDX-License-Identifier: Apache-2.0
// FileReader's one-pass open (the usual file: every index check, the overlap sweep,
// the names and the descriptor table's copies in one pass over the index) against
// independent checks: every byte of the index changed (its CRC recomputed, so that
// the change reaches the checks), and every byte of the table; whenever the reader
// accepts the file, what it accepted is checked here from the bytes, with the index
// codec and a sort of every region, so that the one-pass path never accepts a file
// that the checks one after another refuse.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "file_test_support.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/crc32c.hpp"
#include "hurray/io/descriptor_table.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/index_codec.hpp"
#include "io/index_entry_parse.hpp"

namespace hurray {
namespace {

using test::Bytes;
using test::must;

/// A file of `n` tensors of three shapes (so that descriptors repeat), names out of
/// order unless the index is sorted; its table (if any) of `version`.
Bytes one_pass_file(size_t n, bool table, bool sorted_index, uint16_t version = kDescriptorTableVersion) {
    FileWriterOptions o;
    o.descriptor_table = table;
    o.descriptor_table_version = version;
    o.sorted_index = sorted_index;
    MemorySink sink;
    auto w = must(FileWriter::create(sink, o));
    for (size_t k = 0; k < n; ++k) {
        auto d = must(make_dense(k % 3 == 0 ? ElementType::kFloat16 : ElementType::kFloat32, {k % 3 + 1, 2}));
        Bytes data(d.buffers[0].byte_size, static_cast<uint8_t>(k));
        std::span<const uint8_t> bufs[] = {data};
        std::string name("w");
        name.append(std::to_string((k * 3 + 2) % n));  // a permutation for n = 7
        EXPECT_TRUE(w.add_tensor(name, d, bufs));
    }
    EXPECT_TRUE(w.finish());
    return std::move(sink).take();
}

Result<FileReader> one_pass_open(const Bytes& bytes, const FileReadOptions& options = {}) {
    auto owner = std::make_shared<Bytes>(bytes);
    return FileReader::open_memory(*owner, owner, options);
}

/// Stores the CRC-32C of the index into the trailer.
void one_pass_fix_crc(Bytes& b, const FileTrailer& t) {
    const uint32_t crc = crc32c(std::span<const uint8_t>(b).subspan(t.index_offset, t.index_length));
    const size_t at = b.size() - kFileTrailerSize + trailer_field::kIndexCrc32c;
    for (size_t k = 0; k < 4; ++k) {
        b[at + k] = static_cast<uint8_t>(crc >> (8 * k));
    }
}

/// What an accepted file must satisfy, checked from its bytes without the reader:
/// the index decodes to the reader's entries, names unique (ascending under
/// SORTED_INDEX), each entry's regions inside the tensor region and aligned, no two
/// regions of the file overlapping; a table the reader uses is well formed; every
/// descriptor it gives equals its bytes decoded in place or in the table.
void one_pass_check_accepted(const Bytes& b, const FileReader& r, const std::string& what) {
    SCOPED_TRACE(what);
    const FileHeader& h = r.header();
    const FileTrailer& t = r.trailer();
    const std::span<const uint8_t> all(b);
    auto entries = decode_index(all.subspan(t.index_offset, t.index_length), t.index_offset);
    ASSERT_TRUE(entries) << entries.error().to_string();
    ASSERT_EQ(entries->size(), r.tensor_count());
    const bool sorted = (h.flags & file_flags::kSortedIndex) != 0;
    ASSERT_TRUE(check_index_names(*entries, sorted));
    const uint64_t trailer_at = b.size() - kFileTrailerSize;
    uint64_t region_end = t.index_offset;
    if (t.kv_length > 0) {
        region_end = std::min(region_end, t.kv_offset);
    }
    std::vector<std::pair<uint64_t, uint64_t>> regions{{0, kFileHeaderSize}, {trailer_at, b.size()}};
    if (t.kv_length > 0) {
        regions.emplace_back(t.kv_offset, t.kv_offset + t.kv_length);
    }
    if (t.index_length > 0) {
        regions.emplace_back(t.index_offset, t.index_offset + t.index_length);
    }
    for (size_t i = 0; i < entries->size(); ++i) {
        const IndexEntry& e = (*entries)[i];
        const IndexEntry& got = r.entry(i);
        ASSERT_EQ(got.name, e.name);
        ASSERT_EQ(got.descriptor_offset, e.descriptor_offset);
        ASSERT_EQ(got.descriptor_length, e.descriptor_length);
        ASSERT_EQ(got.data_offset, e.data_offset);
        ASSERT_EQ(got.data_length, e.data_length);
        ASSERT_GE(e.descriptor_offset, h.first_descriptor_offset) << i;
        ASSERT_EQ(e.descriptor_offset % 8, 0U) << i;
        ASSERT_GE(e.descriptor_length, 10U) << i;
        ASSERT_LE(e.descriptor_offset, region_end) << i;
        ASSERT_LE(e.descriptor_length, region_end - e.descriptor_offset) << i;
        ASSERT_LE(e.data_length, trailer_at) << i;
        ASSERT_LE(e.data_offset, trailer_at - e.data_length) << i;
        regions.emplace_back(e.descriptor_offset, e.descriptor_offset + e.descriptor_length);
        if (e.data_length > 0) {
            ASSERT_GE(e.data_offset, h.first_descriptor_offset) << i;
            ASSERT_EQ(e.data_offset % h.data_buffer_alignment, 0U) << i;
            regions.emplace_back(e.data_offset, e.data_offset + e.data_length);
        }
    }
    std::sort(regions.begin(), regions.end());
    for (size_t k = 1; k < regions.size(); ++k) {
        ASSERT_GE(regions[k].first, regions[k - 1].second) << "regions overlap at " << regions[k].first;
    }
    if (r.descriptor_table_bytes()) {
        const KvMetadata raw = must(decode_kv_section(all.subspan(t.kv_offset, t.kv_length), t.kv_offset));
        const KvValue* v = raw.find(kDescriptorTableKey);
        ASSERT_NE(v, nullptr);
        const std::vector<uint8_t>* value = v->as_bytes();
        ASSERT_NE(value, nullptr);
        auto at = locate_descriptor_table(*value, *entries);
        ASSERT_TRUE(at.has_value()) << "the reader used a malformed table";
        ASSERT_EQ(value->size(), *r.descriptor_table_bytes());
    }
    for (size_t i = 0; i < r.tensor_count(); ++i) {
        auto d = r.descriptor(i);
        if (!d) {
            continue;  // refused on use: fine, as long as it is an error
        }
        const IndexEntry& e = (*entries)[i];
        if (!r.descriptor_table_bytes()) {
            auto in_place = decode(all.subspan(e.descriptor_offset, e.descriptor_length));
            ASSERT_TRUE(in_place) << i;
            EXPECT_EQ(**d, *in_place) << i;
        }
    }
}

TEST(FileReaderOnePass, AllAsciiSeesEveryByte) {
    // Every length up to 70 and every position of one byte with its high bit set (each
    // of the word-wise reads' cases): all_ascii agrees with a byte-by-byte check.
    std::vector<uint8_t> buf(80, 'a');
    for (size_t n = 0; n <= 70; ++n) {
        EXPECT_TRUE(detail::all_ascii(buf.data() + 3, n)) << n;
        for (size_t at = 0; at < n; ++at) {
            buf[3 + at] = 0x80;
            EXPECT_FALSE(detail::all_ascii(buf.data() + 3, n)) << n << " " << at;
            buf[3 + at] = 'a';
        }
        // A high byte just outside [p, p + n) is not looked at.
        buf[2] = 0xFF;
        buf[3 + n] = 0xFF;
        EXPECT_TRUE(detail::all_ascii(buf.data() + 3, n)) << n;
        buf[2] = 'a';
        buf[3 + n] = 'a';
    }
}

TEST(FileReaderOnePass, EveryIndexByteChangedIsCheckedAsBefore) {
    // Each byte of the index set to four other values, the CRC recomputed: the reader
    // refuses the file, or accepts one that every independent check accepts.
    for (const bool table : {true, false}) {
        for (const bool sorted : {false, true}) {
            const Bytes good = one_pass_file(7, table, sorted);
            const FileReader clean = must(one_pass_open(good));
            one_pass_check_accepted(good, clean, "unchanged");
            const FileTrailer t = clean.trailer();
            size_t accepted = 0;
            size_t refused = 0;
            for (uint64_t at = t.index_offset; at < t.index_offset + t.index_length; ++at) {
                const uint8_t was = good[at];
                for (const uint8_t to : {static_cast<uint8_t>(was ^ 0x01), static_cast<uint8_t>(was ^ 0x80),
                                         static_cast<uint8_t>(0x00), static_cast<uint8_t>(0xFF)}) {
                    if (to == was) {
                        continue;
                    }
                    Bytes b = good;
                    b[at] = to;
                    one_pass_fix_crc(b, t);
                    auto r = one_pass_open(b);
                    if (!r) {
                        ++refused;
                        continue;
                    }
                    ++accepted;
                    one_pass_check_accepted(b, *r, "index byte " + std::to_string(at) + " = " + std::to_string(to));
                    if (HasFatalFailure()) {
                        return;
                    }
                }
            }
            EXPECT_GT(refused, 100U);
            EXPECT_GT(accepted, 0U) << "some changes (a name's letters) are valid files";
            // Whole fields copied from one entry to another (offsets stay aligned, so
            // regions overlap or leave the file order): descriptor_offset,
            // descriptor_length, data_offset, data_length.
            std::vector<uint64_t> at;
            const std::span<const uint8_t> all(good);
            const auto entries = must(decode_index(all.subspan(t.index_offset, t.index_length), t.index_offset, &at));
            const auto field = [&](size_t i, size_t rel) { return at[i] + 2 + entries[i].name.size() + rel; };
            for (const auto& [rel, width] : {std::pair<size_t, size_t>{0, 8}, {8, 4}, {12, 8}, {20, 8}}) {
                for (size_t i = 0; i < entries.size(); ++i) {
                    for (size_t j = 0; j < entries.size(); ++j) {
                        if (i == j) {
                            continue;
                        }
                        Bytes b = good;
                        std::copy_n(good.begin() + static_cast<std::ptrdiff_t>(field(j, rel)), width,
                                    b.begin() + static_cast<std::ptrdiff_t>(field(i, rel)));
                        one_pass_fix_crc(b, t);
                        if (auto r = one_pass_open(b)) {
                            one_pass_check_accepted(b, *r, "field " + std::to_string(rel) + " of entry " +
                                                               std::to_string(j) + " into " + std::to_string(i));
                            if (HasFatalFailure()) {
                                return;
                            }
                        }
                    }
                }
            }
        }
    }
}

TEST(FileReaderOnePass, EveryTableByteChangedIsCheckedAsBefore) {
    // Each byte of the table's KV value changed, for both versions: the reader uses
    // the table only when it is well formed, and refuses any tensor whose copy
    // disagrees with its descriptor in place (a version-2 entry moved to another class
    // of the same length, say).
    for (const uint16_t version : {kDescriptorTableVersion1, kDescriptorTableVersion2}) {
        SCOPED_TRACE(version);
        const Bytes good = one_pass_file(7, true, false, version);
        const FileReader clean = must(one_pass_open(good));
        const FileTrailer t = clean.trailer();
        ASSERT_TRUE(clean.descriptor_table_bytes());
        const uint64_t table_bytes = *clean.descriptor_table_bytes();
        // The table is the KV section's last value.
        const uint64_t value_at = t.kv_offset + t.kv_length - table_bytes;
        ASSERT_EQ(good[value_at + 4], version);
        size_t used = 0;
        for (uint64_t at = value_at; at < value_at + table_bytes; ++at) {
            for (const uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}}) {
                Bytes b = good;
                b[at] ^= flip;
                auto r = one_pass_open(b);
                ASSERT_TRUE(r) << at << ": " << r.error().to_string();
                one_pass_check_accepted(b, *r, "table byte " + std::to_string(at));
                if (HasFatalFailure()) {
                    return;
                }
                used += r->descriptor_table_bytes() ? 1 : 0;
                for (size_t i = 0; i < r->tensor_count(); ++i) {
                    auto got = r->tensor(i);
                    if (got) {
                        EXPECT_EQ(got->descriptor(), *must(clean.descriptor(i))) << at << " " << i;
                    }
                }
            }
        }
        EXPECT_GT(used, 0U) << "some changes leave the table well formed (a copy's shape, say)";
    }
}

}  // namespace
}  // namespace hurray
