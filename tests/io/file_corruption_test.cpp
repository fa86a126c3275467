// SPDX-License-Identifier: Apache-2.0
// FileReader on damaged and malicious files: truncation, bit flips, offsets
// and lengths out of range or overflowing, overlapping regions, checksum and
// flag disagreements, reserved fields, bad names, descriptor/index
// disagreements and torn composites. Every case checks the error code and
// that the message names the field.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <iterator>
#include <set>

#include <unistd.h>

#include "file_test_support.hpp"
#include "hurray/io/file_reader.hpp"

namespace hurray {
namespace {

using test::build_file;
using test::BuildOptions;
using test::BuiltFile;
using test::Bytes;
using test::dense;
using test::Fails;
using test::must;
using test::Padding;
using test::TestTensor;

FileReadOptions permissive() {
    FileReadOptions o;
    o.strict = false;
    o.descriptor.strict = false;
    return o;
}

Result<FileReader> open(const Bytes& bytes, const FileReadOptions& o = {}) {
    return FileReader::open_memory(bytes, {}, o);
}

/// Touches everything a reader can hand out; must never crash.
void enumerate(const FileReader& r) {
    for (size_t i = 0; i < r.tensor_count(); ++i) {
        static_cast<void>(r.entry(i));
        static_cast<void>(r.find(r.entry(i).name));
        static_cast<void>(r.descriptor_bytes(i));
        auto d = r.descriptor(i);
        auto t = r.tensor(i);
        if (t.ok()) {
            static_cast<void>(t->view());
        }
        if (d.ok() && (*d)->layout_tag() == static_cast<uint8_t>(LayoutTag::kComposite)) {
            static_cast<void>(r.composite(i));
        }
        static_cast<void>(r.advise(i, AccessPattern::kNormal));
    }
    static_cast<void>(r.check_all());
    for (const KvEntry& e : r.kv().entries()) {
        static_cast<void>(r.kv().get_string(e.key));
        static_cast<void>(r.kv().get_int64(e.key));
    }
}

/// A small file: one tensor plus a composite of two members, KV, reference
/// padding (the smallest layout), CRC.
BuiltFile tiny_file(const BuildOptions& base = {}, Padding padding = Padding::kReference) {
    BuildOptions o = base;
    o.after_data = o.after_head = padding;
    KvMetadata kv;
    EXPECT_TRUE(kv.set("k", KvValue::string("v")).ok());
    EXPECT_TRUE(kv.set("b", KvValue::boolean(true)).ok());
    TestTensor h{"h", must(make_composite_head(ElementType::kFloat32, {2, 2}, CompositionRule::kPartition, 2))};
    TestTensor m0 = dense("m0", ElementType::kFloat32, {2, 1});
    m0.desc.shard = ShardDescriptor{{2, 2}, {0, 0}};
    TestTensor m1 = dense("m1", ElementType::kFloat32, {2, 1});
    m1.desc.shard = ShardDescriptor{{2, 2}, {0, 1}};
    return build_file({dense("a", ElementType::kInt8, {3}), h, m0, m1}, &kv, o);
}

// ---------------------------------------------------------------------------
// Truncation
// ---------------------------------------------------------------------------

constexpr ErrorCode kCutCodes[] = {ErrorCode::kTruncated, ErrorCode::kInvalidMagic,
                                   ErrorCode::kReservedBytesNonZero, ErrorCode::kInvalidFile};

TEST(FileCorruption, EveryPrefixFailsCleanly) {
    const BuiltFile f = tiny_file();
    ASSERT_TRUE(open(f.bytes).ok());
    std::set<ErrorCode> codes;
    for (size_t n = 0; n < f.bytes.size(); ++n) {
        const Bytes prefix(f.bytes.begin(), f.bytes.begin() + static_cast<std::ptrdiff_t>(n));
        for (const bool strict : {true, false}) {
            auto r = open(prefix, strict ? FileReadOptions{} : permissive());
            ASSERT_FALSE(r.ok()) << "prefix of " << n << " bytes accepted";
            codes.insert(r.error().code());
        }
    }
    // A cut file loses its trailer: mostly too short or no trailer magic;
    // where the cut leaves "HRRY" (a descriptor magic) at the end, the bytes
    // before it fail as a trailer.
    EXPECT_TRUE(codes.count(ErrorCode::kTruncated) == 1 && codes.count(ErrorCode::kInvalidMagic) == 1);
    EXPECT_TRUE(std::includes(std::begin(kCutCodes), std::end(kCutCodes), codes.begin(), codes.end()));
}

TEST(FileCorruption, TruncationAtSectionBoundaries) {
    const BuiltFile f = tiny_file();
    std::vector<uint64_t> cuts = {0, 8, 63, 64, f.trailer.kv_offset, f.trailer.index_offset, f.trailer_offset,
                                  f.bytes.size() - 4, f.bytes.size() - 1};
    for (const IndexEntry& e : f.entries) {
        cuts.push_back(e.descriptor_offset);
        cuts.push_back(e.descriptor_offset + e.descriptor_length);
        cuts.push_back(e.data_offset);
        cuts.push_back(e.data_offset + e.data_length);
    }
    for (const uint64_t n : cuts) {
        const Bytes prefix(f.bytes.begin(), f.bytes.begin() + static_cast<std::ptrdiff_t>(n));
        auto r = open(prefix);
        ASSERT_FALSE(r.ok()) << n;
        if (n < 104) {
            EXPECT_EQ(r.error().code(), ErrorCode::kTruncated) << n << ": " << r.error().to_string();
        } else {
            EXPECT_TRUE(Fails(r, ErrorCode::kInvalidMagic, {"trailer_magic"})) << n;
        }
    }
    EXPECT_TRUE(Fails(open(Bytes(f.bytes.begin(), f.bytes.begin() + 70)), ErrorCode::kTruncated,
                      {"64-byte header plus the 40-byte trailer"}));
    EXPECT_TRUE(Fails(open(Bytes(f.bytes.begin(), f.bytes.begin() + 20)), ErrorCode::kTruncated, {"file header"}));
}

// ---------------------------------------------------------------------------
// Bit flips
// ---------------------------------------------------------------------------

/// Which bytes of `f` belong to a section (not padding).
std::vector<bool> covered_bytes(const BuiltFile& f) {
    std::vector<bool> in(f.bytes.size(), false);
    const auto mark = [&](uint64_t start, uint64_t len) {
        for (uint64_t k = start; k < start + len && k < in.size(); ++k) {
            in[k] = true;
        }
    };
    mark(0, kFileHeaderSize);
    for (const IndexEntry& e : f.entries) {
        mark(e.descriptor_offset, e.descriptor_length);
        mark(e.data_offset, e.data_length);
    }
    mark(f.trailer.kv_offset, f.trailer.kv_length);
    mark(f.trailer.index_offset, f.trailer.index_length);
    mark(f.trailer_offset, kFileTrailerSize);
    return in;
}

TEST(FileCorruption, EverySingleBitFlipIsHandled) {
    const BuiltFile f = tiny_file();
    const uint64_t io = f.trailer.index_offset;
    const uint64_t ie = io + f.trailer.index_length;
    const std::vector<bool> covered = covered_bytes(f);
    Bytes b = f.bytes;
    size_t accepted = 0;
    size_t tried = 0;
    for (size_t byte = 0; byte < b.size(); ++byte) {
        // Every byte of every section; of the zero padding between sections
        // (thousands of equivalent bytes, ignored by the reader) only the
        // 8 bytes at each end of a run, to keep the test fast.
        if (!covered[byte]) {
            const size_t lo = byte < 8 ? 0 : byte - 8;
            const size_t hi = std::min(byte + 9, covered.size());
            bool near_section = false;
            for (size_t k = lo; k < hi; ++k) {
                near_section = near_section || covered[k];
            }
            if (!near_section) {
                continue;
            }
        }
        for (int bit = 0; bit < 8; ++bit) {
            b[byte] = static_cast<uint8_t>(b[byte] ^ (1U << bit));
            for (const bool strict : {true, false}) {
                ++tried;
                auto r = open(b, strict ? FileReadOptions{} : permissive());
                if (byte >= io && byte < ie) {
                    ASSERT_TRUE(Fails(r, ErrorCode::kChecksumMismatch, {"index_crc32c"})) << byte << ":" << bit;
                }
                if (r.ok()) {
                    ++accepted;
                    enumerate(*r);
                }
            }
            b[byte] = f.bytes[byte];
        }
    }
    // Flips in padding and in tensor data are invisible to the container.
    EXPECT_GT(accepted, 0U);
    EXPECT_GT(tried, 8000U);
}

TEST(FileCorruption, SpecificFlipsGiveSpecificErrors) {
    const BuiltFile f = tiny_file();
    const auto flipped = [&](uint64_t at, uint8_t mask) {
        Bytes b = f.bytes;
        b[at] = static_cast<uint8_t>(b[at] ^ mask);
        return b;
    };
    const uint64_t t = f.trailer_offset;
    EXPECT_TRUE(Fails(open(flipped(0, 1)), ErrorCode::kInvalidMagic, {"magic"}));
    EXPECT_TRUE(Fails(open(flipped(8, 2)), ErrorCode::kUnsupportedVersion, {"container_version_major"}));
    EXPECT_TRUE(Fails(open(flipped(10, 1)), ErrorCode::kReservedBytesNonZero, {"_reserved"}));
    EXPECT_TRUE(Fails(open(flipped(12, 0x10)), ErrorCode::kReservedFlagBits, {"file_flags"}));
    EXPECT_TRUE(Fails(open(flipped(17, 0x01)), ErrorCode::kInvalidFile, {"data_buffer_alignment"}));
    EXPECT_TRUE(Fails(open(flipped(20, 0x01)), ErrorCode::kInvalidFile, {"first_descriptor_offset"}));
    EXPECT_TRUE(Fails(open(flipped(50, 0x80)), ErrorCode::kReservedBytesNonZero, {"_reserved_header"}));
    EXPECT_TRUE(Fails(open(flipped(t + 36, 1)), ErrorCode::kInvalidMagic, {"trailer_magic"}));
    EXPECT_TRUE(Fails(open(flipped(t + 33, 1)), ErrorCode::kReservedBytesNonZero, {"trailer _reserved"}));
    EXPECT_TRUE(Fails(open(flipped(t + 28, 1)), ErrorCode::kChecksumMismatch, {"index_crc32c", "stored", "computed"}));
    EXPECT_TRUE(Fails(open(flipped(t + 0, 1)), ErrorCode::kInvalidFile, {"index_offset", "multiple of 8"}));
    EXPECT_TRUE(Fails(open(flipped(t + 9, 0x01)), ErrorCode::kInvalidFile, {"index_length", "trailer"}));
    EXPECT_TRUE(Fails(open(flipped(t + 16, 1)), ErrorCode::kInvalidFile, {"kv_offset", "multiple of 8"}));
    // The first descriptor's magic and its own length field.
    const IndexEntry& a = f.entries[0];
    EXPECT_TRUE(Fails(open(flipped(a.descriptor_offset, 1)), ErrorCode::kInvalidMagic, {"tensor 'a'"}));
    EXPECT_TRUE(Fails(open(flipped(a.descriptor_offset + 6, 8)), ErrorCode::kInvalidFile,
                      {"tensor 'a'", "descriptor_length", "disagrees"}));
    // A flip in the body of a descriptor is found lazily, by descriptor().
    // Byte 14 is the type_tag of the first descriptor (int8, 0x10): 0x00 is invalid.
    const Bytes bad_type = flipped(a.descriptor_offset + 14, 0x10);  // must outlive r
    auto r = open(bad_type);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    const auto d = r->descriptor(0);
    EXPECT_TRUE(Fails(d, ErrorCode::kInvalidElementType, {"tensor 'a'", "type"}));
    EXPECT_EQ(d.error().offset(), a.descriptor_offset + 14);
    EXPECT_EQ(r->descriptor(0).error().to_string(), d.error().to_string());
    EXPECT_TRUE(r->descriptor(1).ok());
    // The tensor is named as data too (Error::tensor), the same at open.
    EXPECT_EQ(d.error().tensor(), "a");
    EXPECT_EQ(open(flipped(a.descriptor_offset, 1)).error().tensor(), "a");
    EXPECT_TRUE(open(flipped(0, 1)).error().tensor().empty());
}

TEST(FileCorruption, ErrorsNameTheirFileAsData) {
    const BuiltFile f = tiny_file();
    const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                      ("hurray-errfile-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string bad = (dir / "bad.hrry").native();
    Bytes b = f.bytes;
    b[0] ^= 1;
    {
        std::ofstream out(bad, std::ios::binary);
        out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
        ASSERT_TRUE(out.good());
    }
    const auto r = FileReader::open(bad);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidMagic);
    EXPECT_EQ(r.error().file(), bad);
    EXPECT_EQ(r.error().message().rfind("'" + bad + "': ", 0), 0U) << r.error().message();
    const std::string missing = (dir / "missing.hrry").native();
    const auto m = FileReader::open(missing);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.error().code(), ErrorCode::kIoError);
    EXPECT_EQ(m.error().file(), missing);
    // From memory there is no file to name.
    EXPECT_TRUE(open(b).error().file().empty());
    std::filesystem::remove_all(dir);
}

// ---------------------------------------------------------------------------
// Offsets and lengths out of range, overflows, overlaps
// ---------------------------------------------------------------------------

/// The tiny file with `edit` applied to its index (the CRC stays valid).
Result<FileReader> with_index(const std::function<void(std::vector<IndexEntry>&)>& edit,
                              const FileReadOptions& o = {}) {
    BuildOptions b;
    b.edit_index = edit;
    static thread_local Bytes storage;
    storage = tiny_file(b).bytes;
    return open(storage, o);
}

/// The tiny file with `edit` applied to its trailer.
Result<FileReader> with_trailer(const std::function<void(FileTrailer&)>& edit, const FileReadOptions& o = {}) {
    BuildOptions b;
    b.edit_trailer = edit;
    static thread_local Bytes storage;
    storage = tiny_file(b).bytes;
    return open(storage, o);
}

TEST(FileCorruption, SectionsPastTheEnd) {
    const BuiltFile f = tiny_file();
    const uint64_t size = f.bytes.size();
    EXPECT_TRUE(Fails(with_trailer([&](FileTrailer& t) { t.index_offset = size + 8 - size % 8; }),
                      ErrorCode::kInvalidFile, {"index_length", "trailer"}));
    EXPECT_TRUE(Fails(with_trailer([&](FileTrailer& t) { t.index_length = size; }), ErrorCode::kInvalidFile,
                      {"index_length", "extends into the trailer"}));
    EXPECT_TRUE(Fails(with_trailer([&](FileTrailer& t) { t.index_length += 1; }), ErrorCode::kInvalidFile,
                      {"index_length"}));
    EXPECT_TRUE(Fails(with_trailer([&](FileTrailer& t) { t.index_offset = 56; }), ErrorCode::kInvalidFile,
                      {"index_offset", "first_descriptor_offset"}));
    EXPECT_TRUE(Fails(with_trailer([&](FileTrailer& t) { t.kv_length = static_cast<uint32_t>(size); }),
                      ErrorCode::kInvalidFile, {"kv_length", "trailer"}));
    EXPECT_TRUE(Fails(with_trailer([&](FileTrailer& t) { t.kv_offset = 32; }), ErrorCode::kInvalidFile,
                      {"kv_offset", "first_descriptor_offset"}));
    EXPECT_TRUE(Fails(with_index([&](auto& es) { es[0].descriptor_offset = (size + 64) & ~uint64_t{7}; }), ErrorCode::kInvalidFile,
                      {"tensor 'a'", "descriptor_offset", "tensor region"}));
    EXPECT_TRUE(Fails(with_index([&](auto& es) { es[2].descriptor_length = 1U << 30; }), ErrorCode::kInvalidFile,
                      {"tensor 'm0'", "descriptor_length", "tensor region"}));
    EXPECT_TRUE(Fails(with_index([&](auto& es) { es[0].data_offset = 1U << 30; }), ErrorCode::kInvalidFile,
                      {"tensor 'a'", "data_offset + data_length", "trailer"}));
    EXPECT_TRUE(Fails(with_index([&](auto& es) { es[0].data_length = size; }), ErrorCode::kInvalidFile,
                      {"tensor 'a'", "data", "trailer"}));
    EXPECT_TRUE(Fails(with_index([&](auto& es) { es[0].descriptor_offset = 40; }), ErrorCode::kInvalidFile,
                      {"tensor 'a'", "descriptor_offset", "first_descriptor_offset"}));
}

TEST(FileCorruption, OverflowingOffsets) {
    constexpr uint64_t kMax = UINT64_MAX;
    EXPECT_TRUE(Fails(with_trailer([](FileTrailer& t) { t.index_offset = kMax - 7; }), ErrorCode::kInvalidFile,
                      {"index_length", "overflows"}));
    EXPECT_TRUE(Fails(with_trailer([](FileTrailer& t) {
                          t.index_offset = 64;
                          t.index_length = kMax - 63;
                      }),
                      ErrorCode::kInvalidFile, {"index_length"}));
    EXPECT_TRUE(Fails(with_trailer([](FileTrailer& t) { t.kv_offset = kMax - 7; }), ErrorCode::kInvalidFile,
                      {"kv_length"}));
    EXPECT_TRUE(Fails(with_index([](auto& es) { es[1].descriptor_offset = kMax - 7; }), ErrorCode::kInvalidFile,
                      {"tensor 'h'", "descriptor_offset"}));
    EXPECT_TRUE(Fails(with_index([](auto& es) {
                          es[0].data_offset = kMax - 4095;
                          es[0].data_length = 8192;
                      }),
                      ErrorCode::kInvalidFile, {"tensor 'a'", "overflows"}));
    EXPECT_TRUE(Fails(with_index([](auto& es) { es[0].data_length = kMax; }), ErrorCode::kInvalidFile,
                      {"tensor 'a'", "overflows"}));
}

TEST(FileCorruption, OverlappingRegions) {
    const BuiltFile f = tiny_file();
    const IndexEntry& a = f.entries[0];
    const IndexEntry& m0 = f.entries[2];
    // a's data grows over the composite head's descriptor.
    EXPECT_TRUE(Fails(with_index([&](auto& es) { es[0].data_length = f.entries[1].descriptor_offset + 8 - a.data_offset; }),
                      ErrorCode::kOverlap, {"tensor 'a' data", "overlaps tensor 'h' descriptor"}));
    // Two entries share a descriptor.
    EXPECT_TRUE(Fails(with_index([&](auto& es) {
                          es[3].descriptor_offset = m0.descriptor_offset;
                          es[3].descriptor_length = m0.descriptor_length;
                      }),
                      ErrorCode::kOverlap, {"tensor 'm0' descriptor", "tensor 'm1' descriptor"}));
    // Two entries share data.
    EXPECT_TRUE(Fails(with_index([&](auto& es) { es[3].data_offset = m0.data_offset; }), ErrorCode::kOverlap,
                      {"tensor 'm0' data", "tensor 'm1' data"}));
    // The last data region runs into the KV section, then the index.
    const IndexEntry& m1 = f.entries[3];
    EXPECT_TRUE(Fails(with_index([&](auto& es) { es[3].data_length = f.trailer.kv_offset + 1 - m1.data_offset; }),
                      ErrorCode::kOverlap, {"tensor 'm1' data", "KV section"}));
    BuildOptions no_kv;
    no_kv.edit_index = [&](auto& es) { es[3].data_length = f.trailer.index_offset + 4 - m1.data_offset; };
    no_kv.edit_trailer = [](FileTrailer& t) {
        t.kv_offset = 0;
        t.kv_length = 0;
    };
    no_kv.edit_header = [](FileHeader& h) { h.flags &= ~file_flags::kHasKvMetadata; };
    const Bytes b = tiny_file(no_kv).bytes;
    EXPECT_TRUE(Fails(open(b), ErrorCode::kOverlap, {"tensor 'm1' data", "overlaps index"}));
    // Data over the header, or in the padding before the first descriptor.
    EXPECT_TRUE(Fails(with_index([&](auto& es) { es[0].data_offset = 0; }), ErrorCode::kInvalidFile,
                      {"tensor 'a'", "data_offset 0", "first_descriptor_offset"}));
    BuildOptions gap;
    gap.first_descriptor_offset = 8192;
    gap.edit_index = [](auto& es) { es[0].data_offset = 4096; };
    EXPECT_TRUE(Fails(open(tiny_file(gap).bytes), ErrorCode::kInvalidFile,
                      {"tensor 'a'", "data_offset 4096", "first_descriptor_offset"}));
    // KV section over the index; index over the trailer.
    EXPECT_TRUE(Fails(with_trailer([&](FileTrailer& t) { t.kv_length = static_cast<uint32_t>(t.index_offset - t.kv_offset + 8); }),
                      ErrorCode::kOverlap, {"KV section", "overlaps index"}));
    EXPECT_TRUE(Fails(with_trailer([&](FileTrailer& t) { t.index_length += 8; }), ErrorCode::kInvalidFile,
                      {"index_length", "extends into the trailer"}));
    // A descriptor placed inside the KV section lies outside the tensor region.
    EXPECT_TRUE(Fails(with_index([&](auto& es) { es[3].descriptor_offset = f.trailer.kv_offset; }),
                      ErrorCode::kInvalidFile, {"tensor 'm1'", "tensor region"}));
}

// ---------------------------------------------------------------------------
// Checksums and flags
// ---------------------------------------------------------------------------

TEST(FileCorruption, ChecksumMismatch) {
    EXPECT_TRUE(Fails(with_trailer([](FileTrailer& t) { t.index_crc32c ^= 0x80000000U; }),
                      ErrorCode::kChecksumMismatch, {"index_crc32c", "stored", "computed"}));
    // A stored 0 with the flag set is a mismatch like any other (SPEC-NOTES 10).
    EXPECT_TRUE(Fails(with_trailer([](FileTrailer& t) { t.index_crc32c = 0; }), ErrorCode::kChecksumMismatch,
                      {"stored 0x00000000"}));
    // The index changed after the CRC was taken.
    BuiltFile f = tiny_file();
    f.bytes[f.trailer.index_offset + 10] ^= 0x20;
    EXPECT_TRUE(Fails(open(f.bytes), ErrorCode::kChecksumMismatch, {"index_crc32c"}));
}

TEST(FileCorruption, CrcFlagClearButStoredNonZero) {
    BuildOptions b;
    b.crc = false;
    b.edit_trailer = [](FileTrailer& t) { t.index_crc32c = 0x1234ABCD; };
    const Bytes bytes = tiny_file(b).bytes;
    EXPECT_TRUE(Fails(open(bytes), ErrorCode::kInvalidFile, {"index_crc32c", "0x1234ABCD", "HAS_INDEX_CRC32C"}));
    auto r = open(bytes, permissive());
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_EQ(r->tensor_count(), 4U);
}

TEST(FileCorruption, KvFlagAndLocation) {
    // Flag set, no section: strict rejects, permissive reads no KV.
    BuildOptions b;
    b.edit_trailer = [](FileTrailer& t) {
        t.kv_offset = 0;
        t.kv_length = 0;
    };
    const Bytes no_section = tiny_file(b).bytes;
    EXPECT_TRUE(Fails(open(no_section), ErrorCode::kInvalidFile, {"HAS_KV_METADATA"}));
    auto r = open(no_section, permissive());
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_TRUE(r->kv().empty());
    // Only one of kv_offset / kv_length set.
    EXPECT_TRUE(Fails(with_trailer([](FileTrailer& t) { t.kv_length = 0; }), ErrorCode::kInvalidFile,
                      {"kv_offset", "kv_length", "both"}));
    EXPECT_TRUE(Fails(with_trailer([](FileTrailer& t) { t.kv_offset = 0; }), ErrorCode::kInvalidFile,
                      {"kv_offset", "kv_length", "both"}));
    EXPECT_TRUE(with_trailer([](FileTrailer& t) { t.kv_offset = 0; }, permissive()).ok());
    // Misaligned KV section.
    EXPECT_TRUE(Fails(with_trailer([](FileTrailer& t) { t.kv_offset += 4; }), ErrorCode::kInvalidFile,
                      {"kv_offset", "multiple of 8"}));
    // A KV section whose length cuts its last entry.
    EXPECT_TRUE(Fails(with_trailer([](FileTrailer& t) { t.kv_length -= 1; }), ErrorCode::kTruncated, {"KV section", "bool value"}));
}

TEST(FileCorruption, KvSectionContentIsValidated) {
    BuiltFile f = tiny_file();
    // The last KV entry is the bool "b" = true: its payload is the last byte.
    f.bytes[f.trailer.kv_offset + f.trailer.kv_length - 1] = 2;
    EXPECT_TRUE(Fails(open(f.bytes), ErrorCode::kInvalidFile, {"'b'", "must be 0 or 1"}));
}

// ---------------------------------------------------------------------------
// Reserved fields, names
// ---------------------------------------------------------------------------

TEST(FileCorruption, ReservedFieldsAndNames) {
    EXPECT_TRUE(Fails(with_index([](auto& es) { es[1].flags = 1; }), ErrorCode::kReservedFlagBits, {"flags"}));
    EXPECT_TRUE(Fails(with_index([](auto& es) { es[3].name = es[2].name; }), ErrorCode::kDuplicateName, {"m0"}));
    BuildOptions b;
    b.edit_header = [](FileHeader& h) { h.flags |= file_flags::kSortedIndex; };  // "a", "h", "m0", "m1" is sorted
    EXPECT_TRUE(open(tiny_file(b).bytes).ok());
    b.edit_index = [](auto& es) { std::swap(es[0], es[1]); };
    EXPECT_TRUE(Fails(open(tiny_file(b).bytes), ErrorCode::kInvalidFile, {"SORTED_INDEX"}));
    b.edit_index = [](auto& es) { es[2].name = es[1].name; };
    EXPECT_TRUE(Fails(open(tiny_file(b).bytes), ErrorCode::kDuplicateName, {"'h'"}));
}

// ---------------------------------------------------------------------------
// Descriptor / index disagreements
// ---------------------------------------------------------------------------

TEST(FileCorruption, DescriptorPlacementAndLength) {
    EXPECT_TRUE(Fails(with_index([](auto& es) { es[2].descriptor_length += 8; }), ErrorCode::kInvalidFile,
                      {"tensor 'm0'", "descriptor_length", "disagrees"}));
    EXPECT_TRUE(Fails(with_index([](auto& es) { es[2].descriptor_length = 9; }), ErrorCode::kInvalidFile,
                      {"tensor 'm0'", "descriptor_length", "10 bytes"}));
    EXPECT_TRUE(Fails(with_index([](auto& es) { es[2].descriptor_offset += 4; }), ErrorCode::kInvalidFile,
                      {"tensor 'm0'", "descriptor_offset", "multiple of 8"}));
    // Pointing at a place without a descriptor (the padding after a's data).
    EXPECT_TRUE(Fails(with_index([](auto& es) { es[0].descriptor_offset = es[0].data_offset + 64; }),
                      ErrorCode::kInvalidMagic, {"tensor 'a'"}));
}

TEST(FileCorruption, MisalignedDataOffset) {
    EXPECT_TRUE(Fails(with_index([](auto& es) { es[0].data_offset += 8; }), ErrorCode::kInvalidFile,
                      {"tensor 'a'", "data_offset", "data_buffer_alignment"}));
}

TEST(FileCorruption, DataLengthDisagreementIsFoundLazily) {
    // Spec padding: room after each tensor's data for a longer data_length.
    for (const int64_t delta : {-1, 1, 8, -8}) {
        BuildOptions b;
        b.edit_index = [delta](auto& es) {
            es[2].data_length = static_cast<uint64_t>(static_cast<int64_t>(es[2].data_length) + delta);
        };
        const Bytes bytes = tiny_file(b, Padding::kSpec).bytes;
        auto r = open(bytes);
        ASSERT_TRUE(r.ok()) << r.error().to_string();
        const auto d = r->descriptor(2);
        EXPECT_TRUE(Fails(d, ErrorCode::kSizeMismatch, {"tensor 'm0'", "data_length"}));
        // The error is cached: the same every time, from every entry point.
        EXPECT_EQ(r->descriptor(2).error().to_string(), d.error().to_string());
        EXPECT_TRUE(Fails(r->tensor("m0"), ErrorCode::kSizeMismatch, {"tensor 'm0'"}));
        EXPECT_TRUE(Fails(r->check_all(), ErrorCode::kSizeMismatch, {"tensor 'm0'"}));
        EXPECT_TRUE(Fails(r->composite(1), ErrorCode::kSizeMismatch, {"tensor 'm0'"}));
        EXPECT_TRUE(r->tensor("a").ok());
    }
    // A head (no buffers) must have data_length 0: its entry is laid out
    // like an 8-byte dense tensor, but the descriptor bytes are a head's.
    TestTensor h = dense("h", ElementType::kFloat32, {2});
    h.raw_descriptor = must(encode(must(make_composite_head(ElementType::kFloat32, {2}, CompositionRule::kGroup, 1))));
    const BuiltFile f = build_file({dense("a", ElementType::kInt8, {3}), h});
    EXPECT_EQ(f.entries[1].data_length, 8U);
    auto r = open(f.bytes);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_TRUE(Fails(r->descriptor(1), ErrorCode::kSizeMismatch, {"tensor 'h'", "data_length", "without buffers"}));
}

TEST(FileCorruption, EmptyTensorWithMisalignedDataOffset) {
    BuildOptions b;
    b.edit_index = [](auto& es) { es[0].data_offset += 8; };
    const BuiltFile f = build_file({dense("e", ElementType::kFloat32, {0})}, nullptr, b);
    auto r = open(f.bytes);
    ASSERT_TRUE(r.ok()) << r.error().to_string();  // data_length 0: not checked at open
    EXPECT_TRUE(Fails(r->descriptor(0), ErrorCode::kInvalidFile, {"tensor 'e'", "data_offset"}));
}

TEST(FileCorruption, TornComposite) {
    // The head declares three members; two follow.
    TestTensor h{"h", must(make_composite_head(ElementType::kFloat32, {2, 3}, CompositionRule::kPartition, 3))};
    TestTensor m0 = dense("m0", ElementType::kFloat32, {2, 1});
    m0.desc.shard = ShardDescriptor{{2, 3}, {0, 0}};
    TestTensor m1 = dense("m1", ElementType::kFloat32, {2, 1});
    m1.desc.shard = ShardDescriptor{{2, 3}, {0, 1}};
    const BuiltFile f = build_file({h, m0, m1});
    for (const bool strict : {true, false}) {
        auto r = open(f.bytes, strict ? FileReadOptions{} : permissive());
        ASSERT_TRUE(r.ok()) << r.error().to_string();
        EXPECT_TRUE(Fails(r->composite(0), ErrorCode::kInvalidComposite, {"torn", "'h'"}));
        EXPECT_TRUE(Fails(r->check_all(), ErrorCode::kInvalidComposite));
        EXPECT_TRUE(r->tensor("m1").ok());
    }
}

}  // namespace
}  // namespace hurray
