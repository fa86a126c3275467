// SPDX-License-Identifier: Apache-2.0
// .npz archives that are truncated or corrupt: open_npz checks the zip structure itself
// (src/convert/zip_directory.cpp) before libzip reads it, so that every refusal names the
// record, the field and its byte offset; a member whose data does not match its CRC-32 is
// reported when read; a bad archive converts to nothing. The archives are written by
// NumPy and Python's zipfile (tests/convert/writers/numpy_arrays.py, npz_seeds.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "convert_test_support.hpp"
#include "hurray/convert/convert.hpp"
#include "hurray/convert/numpy.hpp"
#include "hurray/io/range_source.hpp"
#include "io_test_util.hpp"
#include "python_writers.hpp"

namespace hurray::convert {
namespace {

using hurray::test::Bytes;
using hurray::test::TempDir;

uint32_t get32(const Bytes& b, size_t at) {
    uint32_t v = 0;
    for (size_t k = 4; k > 0; --k) v = (v << 8U) | b.at(at + k - 1);
    return v;
}
uint16_t get16(const Bytes& b, size_t at) {
    return static_cast<uint16_t>(b.at(at) | (b.at(at + 1) << 8U));
}
void put32(Bytes& b, size_t at, uint32_t v) {
    for (size_t k = 0; k < 4; ++k) b.at(at + k) = static_cast<uint8_t>(v >> (8 * k));
}
void put16(Bytes& b, size_t at, uint16_t v) {
    b.at(at) = static_cast<uint8_t>(v);
    b.at(at + 1) = static_cast<uint8_t>(v >> 8U);
}

/// Where the records of a (trusted, classic or zip64-end) test archive are.
struct ZipMap {
    size_t end = 0;         // end of central directory record
    size_t cd_offset = 0;   // central directory
    struct Entry {
        size_t central = 0;
        size_t local = 0;
        size_t data = 0;
        std::string name;
    };
    std::vector<Entry> entries;
};

ZipMap map_zip(const Bytes& b) {
    ZipMap m;
    const std::string sig("PK\x05\x06", 4);
    const auto it = std::find_end(b.begin(), b.end(), sig.begin(), sig.end());
    m.end = static_cast<size_t>(it - b.begin());
    m.cd_offset = get32(b, m.end + 16);
    if (m.cd_offset == 0xFFFFFFFF) {  // zip64: the record the locator points to
        const size_t z = get32(b, m.end - 20 + 8);
        m.cd_offset = get32(b, z + 48);
    }
    size_t pos = m.cd_offset;
    while (get32(b, pos) == 0x02014b50) {
        ZipMap::Entry e;
        e.central = pos;
        e.local = get32(b, pos + 42);
        const size_t n = get16(b, pos + 28);
        e.name.assign(reinterpret_cast<const char*>(b.data() + pos + 46), n);  // NOLINT
        e.data = e.local + 30 + get16(b, e.local + 26) + get16(b, e.local + 28);
        m.entries.push_back(e);
        pos += 46 + n + get16(b, pos + 30) + get16(b, pos + 32);
    }
    return m;
}

/// Runs numpy_arrays.py and npz_seeds.py once into a directory shared by the tests.
class NpzFiles : public hurray::test::WrittenFilesTest<NpzFiles> {
public:
    static std::vector<std::string> writer_commands(const std::filesystem::path& dir) {
        return {"numpy_arrays.py " + dir.string(), "npz_seeds.py " + dir.string()};
    }

protected:
    static Bytes bytes(const std::string& name) { return hurray::test::read_all(file(name)); }
};

/// An error of an .npz named `path`: a code, the path, "at byte N" with N its offset.
void expect_clean_error(const Error& e, const std::string& path, uint64_t file_size) {
    EXPECT_NE(e.code(), ErrorCode::kOk);
    EXPECT_NE(e.message().find(path), std::string::npos) << e.message();
    ASSERT_TRUE(e.has_offset()) << e.message();
    EXPECT_NE(e.message().find("at byte " + std::to_string(e.offset())), std::string::npos)
        << e.message();
    EXPECT_LE(e.offset(), file_size) << e.message();
}

/// Opens `bytes` as an .npz (written to `dir`); if it opens, reads every tensor. Every
/// error is clean. Returns the open error's code (kOk when it opened).
ErrorCode open_and_read(const TempDir& dir, const Bytes& bytes) {
    const std::string p = dir.write("bad.npz", bytes);
    auto src = open_npz(p);
    // The same bytes behind a range source (a remote archive) open exactly when the
    // path does, failing with the same code at the same byte.
    auto ranged = open_npz(std::make_shared<MemoryRangeSource>(bytes));
    EXPECT_EQ(ranged.ok(), src.ok()) << (src.ok() ? ranged.error().to_string() : src.error().to_string());
    if (!src.ok() && !ranged.ok()) {
        EXPECT_EQ(ranged.error().code(), src.error().code()) << ranged.error().to_string();
        EXPECT_EQ(ranged.error().offset(), src.error().offset()) << ranged.error().to_string();
    }
    if (!src.ok()) {
        expect_clean_error(src.error(), p, bytes.size());
        return src.error().code();
    }
    for (size_t i = 0; i < (*src)->tensor_count(); ++i) {
        const uint64_t size = (*src)->tensor(i).descriptor.buffers[0].byte_size;
        if (size > (uint64_t{64} << 10)) {
            continue;  // deflated.npz's 2.4 MB 'large': its structure is what is tested
        }
        std::vector<uint8_t> all(size);
        const auto st = (*src)->read(i, 0, 0, all);
        if (!st.ok()) {
            EXPECT_NE(st.error().message().find(p), std::string::npos) << st.error().message();
            EXPECT_TRUE(st.error().has_offset()) << st.error().message();
        }
    }
    return ErrorCode::kOk;
}

TEST_F(NpzFiles, ArchivesOfEveryShapeRead) {
    for (const std::string name : {"seed_stored.npz", "seed_deflated.npz", "seed_zip64_end.npz",
                                   "seed_descriptor_deflated.npz", "seed_descriptor_stored.npz"}) {
        SCOPED_TRACE(name);
        auto src = open_npz(file(name));
        ASSERT_TRUE(src.ok()) << src.error().to_string();
        ASSERT_EQ((*src)->tensor_count(), 2U);
        const auto a = (*src)->find("a");
        ASSERT_TRUE(a.has_value());
        const auto got = test::read_all(**src, *a, 0);
        const float want[3] = {0.5F, 1.5F, 2.5F};
        ASSERT_EQ(got.size(), sizeof(want));
        EXPECT_EQ(std::memcmp(got.data(), want, sizeof(want)), 0);
        const auto m = (*src)->find("m");
        ASSERT_TRUE(m.has_value());
        EXPECT_EQ(test::read_all(**src, *m, 0), std::vector<uint8_t>{0x09});  // eye(2), packed
        // Over a range source (a remote archive): the same arrays.
        auto ranged = open_npz(std::make_shared<MemoryRangeSource>(bytes(name)));
        ASSERT_TRUE(ranged.ok()) << ranged.error().to_string();
        EXPECT_TRUE(compare_sources(**src, **ranged).ok());
    }
}

TEST_F(NpzFiles, EveryTruncationIsAnErrorNamingAnOffset) {
    TempDir dir;
    for (const std::string name : {"stored.npz", "seed_zip64_end.npz", "seed_descriptor_deflated.npz",
                                   "deflated.npz"}) {
        SCOPED_TRACE(name);
        const Bytes whole = bytes(name);
        std::vector<size_t> cuts;
        const size_t step = whole.size() > 4096 ? whole.size() / 300 : 1;
        for (size_t len = 0; len < whole.size(); len += step) cuts.push_back(len);
        for (size_t k = 1; k <= 80 && k <= whole.size(); ++k) cuts.push_back(whole.size() - k);
        for (const size_t len : cuts) {
            SCOPED_TRACE(len);
            const std::string p = dir.write(
                "cut.npz", Bytes(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(len)));
            auto src = open_npz(p);
            ASSERT_FALSE(src.ok());
            expect_clean_error(src.error(), p, len);
            EXPECT_TRUE(src.error().code() == ErrorCode::kTruncated ||
                        src.error().code() == ErrorCode::kInvalidFile)
                << src.error().to_string();
        }
    }
    // A zip cut short names the missing record and where the file ends.
    const Bytes s = bytes("stored.npz");
    auto cut = open_npz(dir.write("half.npz", Bytes(s.begin(), s.begin() + 700)));
    ASSERT_FALSE(cut.ok());
    EXPECT_EQ(cut.error().code(), ErrorCode::kTruncated);
    EXPECT_NE(cut.error().message().find("end of central directory record"), std::string::npos)
        << cut.error().message();
    EXPECT_EQ(cut.error().offset(), 700U);
}

TEST_F(NpzFiles, EveryCorruptionOfTheStructureIsACleanError) {
    TempDir dir;
    for (const std::string name : {"stored.npz", "seed_zip64_end.npz", "seed_descriptor_stored.npz",
                                   "deflated.npz"}) {
        SCOPED_TRACE(name);
        const Bytes good = bytes(name);
        const ZipMap m = map_zip(good);
        // Every byte of the central directory and the end records, and of each local
        // header (with its name and extra field).
        std::vector<size_t> at;
        for (size_t k = m.cd_offset; k < good.size(); ++k) at.push_back(k);
        for (const auto& e : m.entries) {
            for (size_t k = e.local; k < e.data; ++k) at.push_back(k);
        }
        size_t refused = 0;
        for (const uint8_t pattern : {uint8_t{0xA5}, uint8_t{0x01}, uint8_t{0xFF}}) {
            for (const size_t k : at) {
                SCOPED_TRACE(k);
                Bytes bad = good;
                bad[k] ^= pattern;
                if (open_and_read(dir, bad) != ErrorCode::kOk) {
                    ++refused;
                }
            }
        }
        // Most of these bytes are checked (times, attributes and comments are not all).
        EXPECT_GT(refused, at.size()) << refused << " of " << 3 * at.size();
    }
}

TEST_F(NpzFiles, StructureErrorsNameTheFieldAndItsOffset) {
    TempDir dir;
    const Bytes good = bytes("stored.npz");
    const ZipMap m = map_zip(good);
    ASSERT_EQ(m.entries.size(), 5U);
    struct Case {
        std::string label;
        Bytes bytes;
        ErrorCode code;
        std::string text;
        uint64_t offset;
    };
    std::vector<Case> cases;
    auto with = [&](auto&& edit) {
        Bytes b = good;
        edit(b);
        return b;
    };
    const auto& e1 = m.entries[1];
    const auto& e2 = m.entries[2];
    cases.push_back({"local offset past the end", with([&](Bytes& b) { put32(b, e1.central + 42, 123456); }),
                     ErrorCode::kInvalidFile,
                     "central directory entry 1 ('mask.npy'): local header offset 123456 is past the end of "
                     "the file (" + std::to_string(good.size()) + " bytes) at byte " +
                         std::to_string(e1.central + 42),
                     e1.central + 42});
    cases.push_back({"central signature", with([&](Bytes& b) { b[m.cd_offset + 1] = 'X'; }),
                     ErrorCode::kInvalidFile, "central directory entry 0: signature", m.cd_offset});
    cases.push_back({"entry count", with([&](Bytes& b) {
                         put16(b, m.end + 8, 1000);
                         put16(b, m.end + 10, 1000);
                     }),
                     ErrorCode::kInvalidFile, "entry count 1000 cannot fit", m.end + 10});
    cases.push_back({"directory offset", with([&](Bytes& b) { put32(b, m.end + 16, static_cast<uint32_t>(m.cd_offset + 3)); }),
                     ErrorCode::kInvalidFile, "central directory: size", m.end + 12});
    cases.push_back({"local signature", with([&](Bytes& b) { b[e1.local + 2] = 9; }), ErrorCode::kInvalidFile,
                     "local header at byte " + std::to_string(e1.local) + ": signature", e1.local});
    cases.push_back({"method", with([&](Bytes& b) { put16(b, e1.central + 10, 12); }), ErrorCode::kUnsupported,
                     "compression method 12", e1.central + 10});
    cases.push_back({"encrypted", with([&](Bytes& b) { b[e1.central + 8] |= 1; }), ErrorCode::kUnsupported,
                     "encrypted members are not read", e1.central + 8});
    cases.push_back({"local name", with([&](Bytes& b) { b[e1.local + 30] = 'X'; }), ErrorCode::kInvalidFile,
                     "name 'Xask.npy' differs", e1.local + 30});
    // libzip parses every local extra field (found by fuzz_convert_npz: it refused these
    // with "Zip archive inconsistent" and no offset).
    const size_t e1_extra = e1.local + 30 + e1.name.size();
    cases.push_back({"local extra field length", with([&](Bytes& b) { put16(b, e1_extra + 2, 178); }),
                     ErrorCode::kInvalidFile, "extra field 0x1: length 178 runs past", e1_extra + 2});
    cases.push_back({"local extra field trailing bytes", with([&](Bytes& b) { put16(b, e1.local + 28, 22); }),
                     ErrorCode::kInvalidFile, "2 trailing bytes that are not zero padding", e1_extra + 20});
    cases.push_back({"local zip64 extra field longer than its values",
                     with([&](Bytes& b) { put32(b, e1.local + 22, 0xFFFFFFFF); }), ErrorCode::kInvalidFile,
                     "zip64 extra field: 16 bytes, but the 0xFFFFFFFF markers defer 8", e1_extra + 4 + 8});
    cases.push_back({"local crc", with([&](Bytes& b) { b[e1.local + 14] ^= 1; }), ErrorCode::kInvalidFile,
                     "CRC-32", e1.local + 14});
    cases.push_back({"duplicate name", with([&](Bytes& b) {
                         // Entry 2 ('f.npy'), central and local, renamed to entry 0's name.
                         b[e2.central + 46] = static_cast<uint8_t>(m.entries[0].name[0]);
                         b[e2.local + 30] = static_cast<uint8_t>(m.entries[0].name[0]);
                     }),
                     ErrorCode::kDuplicateName, "the name of entry 0 again", e2.central + 46});
    cases.push_back({"end record comment", with([&](Bytes& b) { put16(b, m.end + 20, 5); }), ErrorCode::kTruncated,
                     "comment length 5", m.end + 20});
    cases.push_back({"not a zip", Bytes(200, 0x41), ErrorCode::kInvalidFile, "not a zip archive", 0});
    cases.push_back({"empty", Bytes{}, ErrorCode::kInvalidFile, "shorter than the 22-byte record", 0});
    for (const auto& c : cases) {
        SCOPED_TRACE(c.label);
        if (c.label == "duplicate name" && m.entries[0].name.size() != e2.name.size()) {
            continue;  // the rename needs names of one length
        }
        const std::string p = dir.write("bad.npz", c.bytes);
        auto src = open_npz(p);
        ASSERT_FALSE(src.ok());
        expect_clean_error(src.error(), p, c.bytes.size());
        EXPECT_EQ(src.error().code(), c.code) << src.error().to_string();
        EXPECT_NE(src.error().message().find(c.text), std::string::npos) << src.error().message();
        EXPECT_EQ(src.error().offset(), c.offset) << src.error().message();
    }
    // zip64 end records: the locator's pointer and the record's signature.
    const Bytes z = bytes("seed_zip64_end.npz");
    const ZipMap zm = map_zip(z);
    const size_t locator = zm.end - 20;
    Bytes bad = z;
    put32(bad, locator + 8, 0x7FFFFFF);
    auto a = open_npz(dir.write("z1.npz", bad));
    ASSERT_FALSE(a.ok());
    EXPECT_NE(a.error().message().find("zip64 end of central directory locator: zip64 end record offset"),
              std::string::npos)
        << a.error().message();
    EXPECT_EQ(a.error().offset(), locator + 8);
    bad = z;
    bad[get32(z, locator + 8) + 3] = 0;
    auto b = open_npz(dir.write("z2.npz", bad));
    ASSERT_FALSE(b.ok());
    EXPECT_NE(b.error().message().find("zip64 end of central directory record: signature"), std::string::npos)
        << b.error().message();
    EXPECT_EQ(b.error().offset(), get32(z, locator + 8));
}

/// The archive `good` with the CRC-32 of entry `k` (central and local) changed.
Bytes with_wrong_crc(const Bytes& good, size_t k) {
    const ZipMap m = map_zip(good);
    Bytes b = good;
    put32(b, m.entries[k].central + 16, get32(b, m.entries[k].central + 16) ^ 0x10);
    if (get32(b, m.entries[k].local + 14) != 0) {  // not zero ahead of a data descriptor
        put32(b, m.entries[k].local + 14, get32(b, m.entries[k].local + 14) ^ 0x10);
    }
    return b;
}

TEST_F(NpzFiles, AMemberWhoseCrcIsWrongIsReported) {
    TempDir dir;
    for (const std::string name : {"deflated.npz", "stored.npz", "seed_descriptor_deflated.npz"}) {
        SCOPED_TRACE(name);
        const Bytes good = bytes(name);
        const ZipMap m = map_zip(good);
        for (size_t k = 0; k < m.entries.size(); ++k) {
            SCOPED_TRACE(m.entries[k].name);
            const std::string p = dir.write("crc.npz", with_wrong_crc(good, k));
            auto src = open_npz(p);
            ASSERT_TRUE(src.ok()) << src.error().to_string();
            const std::string tensor = m.entries[k].name.substr(0, m.entries[k].name.size() - 4);
            const auto i = (*src)->find(tensor);
            ASSERT_TRUE(i.has_value());
            std::vector<uint8_t> all((*src)->tensor(*i).descriptor.buffers[0].byte_size);
            const auto st = (*src)->read(*i, 0, 0, all);
            ASSERT_FALSE(st.ok());
            EXPECT_EQ(st.error().code(), ErrorCode::kChecksumMismatch) << st.error().to_string();
            EXPECT_NE(st.error().message().find("CRC-32"), std::string::npos) << st.error().message();
            EXPECT_EQ(st.error().offset(), m.entries[k].central + 16);
            expect_clean_error(st.error(), p, good.size());
            // The other members read.
            for (size_t j = 0; j < (*src)->tensor_count(); ++j) {
                if (j != *i) {
                    std::vector<uint8_t> other((*src)->tensor(j).descriptor.buffers[0].byte_size);
                    EXPECT_TRUE((*src)->read(j, 0, 0, other).ok()) << (*src)->tensor(j).name;
                }
            }
        }
    }
    // Corrupt compressed bytes: an inflate or CRC error, never wrong values in silence.
    const Bytes d = bytes("deflated.npz");
    const ZipMap m = map_zip(d);
    for (size_t k = 0; k < m.entries.size(); ++k) {
        Bytes bad = d;
        const size_t end = k + 1 < m.entries.size() ? m.entries[k + 1].local : m.cd_offset;
        bad[(m.entries[k].data + end) / 2] ^= 0x5A;
        auto src = open_npz(dir.write("flip.npz", bad));
        if (!src.ok()) {
            continue;  // the flip hit the .npy header
        }
        const auto i = (*src)->find(m.entries[k].name.substr(0, m.entries[k].name.size() - 4));
        ASSERT_TRUE(i.has_value());
        std::vector<uint8_t> all((*src)->tensor(*i).descriptor.buffers[0].byte_size);
        const auto st = (*src)->read(*i, 0, 0, all);
        EXPECT_FALSE(st.ok()) << m.entries[k].name;
    }
}

TEST_F(NpzFiles, ABadArchiveConvertsToNothing) {
    TempDir dir;
    const Bytes good = bytes("deflated.npz");
    const ZipMap m = map_zip(good);
    ConvertOptions opt;
    opt.durable = false;
    for (size_t k = 0; k < m.entries.size(); ++k) {
        SCOPED_TRACE(k);
        const std::string in = dir.write("in.npz", with_wrong_crc(good, k));
        for (const std::string out : {"out.hrry", "out.npz"}) {
            auto r = convert_file(in, dir.file(out), opt);
            ASSERT_FALSE(r.ok()) << out;
            EXPECT_EQ(r.error().code(), ErrorCode::kChecksumMismatch) << r.error().to_string();
            EXPECT_EQ(dir.list(), std::vector<std::string>{"in.npz"});
        }
    }
    Bytes cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(good.size() - 10));
    const std::string in = dir.write("in.npz", cut);
    ASSERT_FALSE(convert_file(in, dir.file("out.hrry"), opt).ok());
    EXPECT_EQ(dir.list(), std::vector<std::string>{"in.npz"});
}

}  // namespace
}  // namespace hurray::convert
