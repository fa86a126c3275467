// SPDX-License-Identifier: Apache-2.0
// The descriptor table (hurray/io/descriptor_table.hpp): written by FileWriter by
// default, in index order (sorted too), hidden from the KV metadata; readers list from
// it (locally without the descriptors' pages, remotely from the tail alone); tables
// that are absent, malformed or of another version fall back to the descriptors in
// place; a table that disagrees with a descriptor never yields that tensor's data.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "file_test_support.hpp"
#include "io_test_util.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/crc32c.hpp"
#include "hurray/io/descriptor_table.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/kv_metadata.hpp"
#include "hurray/io/range_source.hpp"

namespace hurray {
namespace {

using test::Bytes;
using test::must;

/// A file of `n` float32 tensors "t<k>" of shape [k % 5 + 1, 3], written by FileWriter.
Bytes write_file(size_t n, FileWriterOptions options = {}, const KvMetadata* kv = nullptr) {
    MemorySink sink;
    auto w = must(FileWriter::create(sink, options));
    for (size_t k = 0; k < n; ++k) {
        auto d = must(make_dense(ElementType::kFloat32, {k % 5 + 1, 3}));
        Bytes data(d.buffers[0].byte_size, static_cast<uint8_t>(k));
        std::span<const uint8_t> bufs[] = {data};
        std::string name("t");
        name.append(std::to_string(n - k));  // appended: GCC 12 -O3 warns falsely on "t" + ...
        EXPECT_TRUE(w.add_tensor(name, d, bufs));
    }
    if (kv != nullptr) {
        w.kv() = *kv;
    }
    EXPECT_TRUE(w.finish());
    return std::move(sink).take();
}

FileReader open_bytes(const Bytes& bytes, FileReadOptions options = {}) {
    auto owner = std::make_shared<Bytes>(bytes);
    return must(FileReader::open_memory(*owner, owner, options));
}

/// The raw KV section of a file, decoded (the table entry included).
KvMetadata raw_kv(const Bytes& bytes) {
    auto r = open_bytes(bytes);
    const FileTrailer& t = r.trailer();
    return must(decode_kv_section(std::span<const uint8_t>(bytes).subspan(t.kv_offset, t.kv_length), t.kv_offset));
}

/// Where the table value lies in the file: the bytes after the key and its tag and
/// length (the table is the KV section's last entry).
size_t table_offset(const Bytes& bytes) {
    const std::string key(kDescriptorTableKey);
    const auto it = std::search(bytes.begin(), bytes.end(), key.begin(), key.end());
    EXPECT_NE(it, bytes.end());
    return static_cast<size_t>(it - bytes.begin()) + key.size() + 1 + 4;
}

TEST(DescriptorTable, WrittenByDefaultInIndexOrderAndHiddenFromTheKv) {
    KvMetadata user;
    ASSERT_TRUE(user.set("general.name", KvValue::string("x")));
    for (const bool sorted : {false, true}) {
        FileWriterOptions o;
        o.sorted_index = sorted;
        const Bytes bytes = write_file(12, o, &user);
        const KvMetadata raw = raw_kv(bytes);
        ASSERT_EQ(raw.size(), 2U);
        EXPECT_EQ(raw.entries().back().key, kDescriptorTableKey) << "the table comes last";
        auto value = raw.get_bytes(kDescriptorTableKey);
        ASSERT_TRUE(value);

        auto r = open_bytes(bytes);
        EXPECT_EQ(r.kv().size(), 1U) << "the table is no user key";
        EXPECT_FALSE(r.kv().contains(kDescriptorTableKey));
        ASSERT_TRUE(r.descriptor_table_bytes().has_value());
        EXPECT_EQ(*r.descriptor_table_bytes(), value->size());
        std::vector<IndexEntry> entries;
        for (size_t i = 0; i < r.tensor_count(); ++i) {
            entries.push_back(r.entry(i));
        }
        auto at = locate_descriptor_table(*value, entries);
        ASSERT_TRUE(at.has_value());
        for (size_t i = 0; i < entries.size(); ++i) {
            const auto copy = value->subspan((*at)[i], entries[i].descriptor_length);
            const auto in_place =
                std::span<const uint8_t>(bytes).subspan(entries[i].descriptor_offset, entries[i].descriptor_length);
            EXPECT_TRUE(std::equal(copy.begin(), copy.end(), in_place.begin(), in_place.end())) << i;
        }
        if (sorted) {
            EXPECT_EQ(entries.front().name, "t1");
            EXPECT_EQ(entries.back().name, "t9");
        }
        EXPECT_TRUE(r.check_all());
        for (size_t i = 0; i < r.tensor_count(); ++i) {
            auto t = r.tensor(i);
            ASSERT_TRUE(t) << t.error().to_string();
        }
    }
}

TEST(DescriptorTable, OffWhenAskedAndRefusedAsAUserKey) {
    FileWriterOptions off;
    off.descriptor_table = false;
    const Bytes bytes = write_file(3, off);
    EXPECT_FALSE(raw_kv(bytes).contains(kDescriptorTableKey));
    auto r = open_bytes(bytes);
    EXPECT_FALSE(r.descriptor_table_bytes().has_value());
    EXPECT_TRUE(r.check_all());

    EXPECT_FALSE(open_bytes(write_file(0)).descriptor_table_bytes().has_value()) << "no tensor, no table";

    MemorySink sink;
    auto w = must(FileWriter::create(sink));
    ASSERT_TRUE(w.kv().set(std::string(kDescriptorTableKey), KvValue::bytes({1, 2, 3})));
    auto st = w.finish();
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(st.error().message().find("reserved"), std::string::npos) << st.error().to_string();
    w.kv().erase(kDescriptorTableKey);
    EXPECT_TRUE(w.finish()) << "the refusal left the writer usable";
}

TEST(DescriptorTable, ListsWithoutTheDescriptorsInPlace) {
    // Every descriptor in place zeroed after the table was written: the listing still
    // decodes every tensor (from the table), and no tensor's data is handed out.
    Bytes bytes = write_file(6);
    auto clean = open_bytes(bytes);
    for (size_t i = 0; i < clean.tensor_count(); ++i) {
        const IndexEntry& e = clean.entry(i);
        std::fill_n(bytes.begin() + static_cast<std::ptrdiff_t>(e.descriptor_offset), e.descriptor_length, 0);
    }
    auto r = open_bytes(bytes);
    ASSERT_TRUE(r.descriptor_table_bytes().has_value());
    for (size_t i = 0; i < r.tensor_count(); ++i) {
        auto d = r.descriptor(i);
        ASSERT_TRUE(d) << d.error().to_string();
        EXPECT_EQ((*d)->shape[1], 3U);
        auto t = r.tensor(i);
        ASSERT_FALSE(t);
        EXPECT_EQ(t.error().code(), ErrorCode::kInvalidFile);
        EXPECT_EQ(t.error().offset(), r.entry(i).descriptor_offset) << t.error().to_string();
        std::string want("differs from the descriptor at ");
        want.append(std::to_string(r.entry(i).descriptor_offset));
        EXPECT_NE(t.error().message().find(want), std::string::npos) << t.error().to_string();
        Bytes out(4);
        EXPECT_FALSE(r.read_data(i, 0, out));
    }
    EXPECT_FALSE(r.check_all());
    FileReadOptions full;
    full.descriptors = DescriptorCheck::kFull;
    auto owner = std::make_shared<Bytes>(bytes);
    EXPECT_FALSE(FileReader::open_memory(*owner, owner, full));
}

/// Writes `bytes` to `path`.
void write_to(const std::filesystem::path& path, const Bytes& bytes) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(f.good());
}

TEST(DescriptorTable, LocalFilesWithoutATableListFromPreadCopies) {
    // A file without a table, opened mapped and with pread, each check mode: the same
    // descriptors as from memory, no table reported, the data readable, and a bad
    // descriptor in place reported at open (kPeek, kFull) or on first use (kLazy) with
    // the same error as before.
    test::TempDir dir;
    FileWriterOptions no_table;
    no_table.descriptor_table = false;
    const Bytes bytes = write_file(7, no_table);
    const auto path = dir.path() / "plain.hrry";
    write_to(path, bytes);
    auto in_memory = open_bytes(bytes);
    ASSERT_FALSE(in_memory.descriptor_table_bytes().has_value());
    for (const bool mmap : {true, false}) {
        for (const DescriptorCheck check : {DescriptorCheck::kPeek, DescriptorCheck::kFull, DescriptorCheck::kLazy}) {
            SCOPED_TRACE(std::string(mmap ? "mmap " : "pread ") + std::to_string(static_cast<int>(check)));
            FileReadOptions o;
            o.use_mmap = mmap;
            o.descriptors = check;
            auto r = must(FileReader::open(path, o));
            EXPECT_EQ(r.mapped(), mmap);
            EXPECT_FALSE(r.descriptor_table_bytes().has_value()) << "read in place: no table in the file";
            ASSERT_EQ(r.tensor_count(), in_memory.tensor_count());
            for (size_t i = 0; i < r.tensor_count(); ++i) {
                EXPECT_EQ(*must(r.descriptor(i)), *must(in_memory.descriptor(i)));
                Bytes a(r.entry(i).data_length);
                Bytes b(a.size());
                ASSERT_TRUE(r.read_data(i, 0, a));
                ASSERT_TRUE(in_memory.read_data(i, 0, b));
                EXPECT_EQ(a, b);
            }
            EXPECT_TRUE(r.check_all());
        }
    }
    // The third tensor's descriptor magic broken in place.
    Bytes bad = bytes;
    bad[static_cast<size_t>(in_memory.entry(2).descriptor_offset)] ^= 0xFF;
    write_to(path, bad);
    auto bad_memory = open_bytes(bad, [] {
        FileReadOptions o;
        o.descriptors = DescriptorCheck::kLazy;
        return o;
    }());
    const Error want = bad_memory.descriptor(2).error();
    for (const bool mmap : {true, false}) {
        FileReadOptions o;
        o.use_mmap = mmap;
        auto peek = FileReader::open(path, o);
        ASSERT_FALSE(peek);
        EXPECT_EQ(peek.error().code(), want.code()) << peek.error().to_string();
        EXPECT_EQ(peek.error().offset(), in_memory.entry(2).descriptor_offset) << peek.error().to_string();
        EXPECT_NE(peek.error().message().find("(index entry 2)"), std::string::npos) << peek.error().to_string();
        o.descriptors = DescriptorCheck::kLazy;
        auto lazy = must(FileReader::open(path, o));
        auto d = lazy.descriptor(2);
        ASSERT_FALSE(d);
        EXPECT_EQ(d.error().to_string(), want.to_string());
        EXPECT_TRUE(lazy.descriptor(3));
    }
}

/// Whether /proc/self/maps lists a mapping of `path` (Linux).
bool mapped_in_process(const std::filesystem::path& path) {
    std::ifstream maps("/proc/self/maps");
    const std::string name = std::filesystem::canonical(path).string();
    for (std::string line; std::getline(maps, line);) {
        if (line.size() >= name.size() && line.compare(line.size() - name.size(), name.size(), name) == 0) {
            return true;
        }
    }
    return false;
}

TEST(DescriptorTable, ListingNeverMapsTheFile) {
    // A mapped reader lists a file (open, descriptors decoded from the table) without
    // mapping it: the mapping is made by the first access to tensor data, and the data
    // read then is the file's.
    if (!std::filesystem::exists("/proc/self/maps")) {
        GTEST_SKIP() << "needs /proc/self/maps to see the process's mappings";
    }
    test::TempDir dir;
    const Bytes bytes = write_file(5);
    const auto path = dir.path() / "lazy.hrry";
    write_to(path, bytes);
    auto in_memory = open_bytes(bytes);
    for (const DescriptorCheck check : {DescriptorCheck::kPeek, DescriptorCheck::kFull, DescriptorCheck::kLazy}) {
        SCOPED_TRACE(static_cast<int>(check));
        FileReadOptions o;
        o.descriptors = check;
        {
            auto r = must(FileReader::open(path, o));
            ASSERT_TRUE(r.descriptor_table_bytes().has_value());
            TensorDescriptor d;
            for (size_t i = 0; i < r.tensor_count(); ++i) {
                ASSERT_TRUE(r.decode_descriptor(i, d));
                EXPECT_EQ(d, *must(in_memory.descriptor(i)));
            }
            EXPECT_FALSE(mapped_in_process(path)) << "listing mapped the file";
            EXPECT_TRUE(r.mapped()) << "the data is still to be served from a mapping";
            auto t = must(r.tensor(3));
            EXPECT_TRUE(mapped_in_process(path)) << "the first data access maps the file";
            EXPECT_TRUE(r.mapped());
            const SharedBuffer& data = t.buffers()[0];
            const auto at = static_cast<size_t>(r.entry(3).data_offset);
            ASSERT_EQ(data.size(), r.entry(3).data_length);
            EXPECT_TRUE(std::equal(data.span().begin(), data.span().end(), bytes.begin() + static_cast<std::ptrdiff_t>(at)));
        }
        EXPECT_FALSE(mapped_in_process(path)) << "the mapping outlived the reader and its tensors";
    }
}

TEST(DescriptorTable, LargeSectionsAreReadThroughTheMapping) {
    // Index and KV sections of 4 MiB or more (here a 5 MiB KV value) are views of the
    // mapping, made at open, not pread copies: the same KV, descriptors and data as
    // with pread. Cut under the reader, their vanished pages read as zeros: the names
    // do not crash a lookup, and the change is reported, not a corrupt file.
    if (!std::filesystem::exists("/proc/self/maps")) {
        GTEST_SKIP() << "needs /proc/self/maps to see the process's mappings";
    }
    test::TempDir dir;
    KvMetadata kv;
    std::vector<uint8_t> blob(5U << 20U);
    for (size_t k = 0; k < blob.size(); ++k) {
        blob[k] = static_cast<uint8_t>(k * 7 + 1);
    }
    ASSERT_TRUE(kv.set("blob", KvValue::bytes(blob)));
    const Bytes bytes = write_file(6, {}, &kv);
    const auto path = dir.path() / "big_kv.hrry";
    write_to(path, bytes);
    auto in_memory = open_bytes(bytes);
    for (const bool mmap : {true, false}) {
        SCOPED_TRACE(mmap ? "mmap" : "pread");
        FileReadOptions o;
        o.use_mmap = mmap;
        auto r = must(FileReader::open(path, o));
        EXPECT_EQ(mapped_in_process(path), mmap) << "large sections come through the mapping";
        ASSERT_NE(r.kv().find("blob"), nullptr);
        ASSERT_NE(r.kv().find("blob")->as_bytes(), nullptr);
        EXPECT_EQ(*r.kv().find("blob")->as_bytes(), blob);
        ASSERT_TRUE(r.descriptor_table_bytes().has_value());
        for (size_t i = 0; i < r.tensor_count(); ++i) {
            EXPECT_EQ(r.entry(i).name, in_memory.entry(i).name);
            EXPECT_EQ(*must(r.descriptor(i)), *must(in_memory.descriptor(i)));
            Bytes a(r.entry(i).data_length);
            ASSERT_TRUE(r.read_data(i, 0, a));
            EXPECT_TRUE(std::equal(a.begin(), a.end(), bytes.begin() + static_cast<std::ptrdiff_t>(r.entry(i).data_offset)));
        }
    }
    // Cut where the KV section begins, under a mapped reader that has decoded nothing.
    auto r = must(FileReader::open(path));
    std::filesystem::resize_file(path, r.trailer().kv_offset);
    for (size_t i = 0; i < r.tensor_count(); ++i) {
        static_cast<void>(r.find(r.entry(i).name));  // zeros now: no crash, whatever it finds
        auto t = r.tensor(i);
        ASSERT_FALSE(t) << "tensor " << i << " from a descriptor table that vanished";
        EXPECT_NE(t.error().message().find("file changed while"), std::string::npos) << t.error().to_string();
    }
    auto changed = r.check_unchanged();
    ASSERT_FALSE(changed);
    EXPECT_NE(changed.error().message().find("file changed while mapped"), std::string::npos)
        << changed.error().to_string();
}

TEST(DescriptorTable, ConcurrentFirstDataAccessesShareOneMapping) {
    // Threads reading a freshly opened mapped file race to make its mapping: one maps,
    // every thread reads the file's bytes through it (ThreadSanitizer runs this).
    test::TempDir dir;
    const Bytes bytes = write_file(16);
    const auto path = dir.path() / "race.hrry";
    write_to(path, bytes);
    for (int round = 0; round < 8; ++round) {
        auto r = must(FileReader::open(path));
        std::vector<uintptr_t> seen(r.tensor_count());
        std::vector<int> ok(r.tensor_count());
        std::vector<std::thread> threads;
        for (size_t i = 0; i < r.tensor_count(); ++i) {
            threads.emplace_back([&, i] {
                auto t = r.tensor(i);
                if (!t) {
                    return;
                }
                const SharedBuffer& data = t->buffers()[0];
                const auto at = static_cast<size_t>(r.entry(i).data_offset);
                seen[i] = reinterpret_cast<uintptr_t>(data.data()) - at;  // the mapping's base, the same for all
                ok[i] = std::equal(data.span().begin(), data.span().end(),
                                   bytes.begin() + static_cast<std::ptrdiff_t>(at))
                            ? 1
                            : 0;
            });
        }
        for (auto& t : threads) {
            t.join();
        }
        for (size_t i = 0; i < r.tensor_count(); ++i) {
            EXPECT_EQ(ok[i], 1) << "tensor " << i;
            EXPECT_EQ(seen[i], seen[0]) << "tensor " << i << " came from another mapping";
        }
        EXPECT_TRUE(r.mapped());
    }
}

TEST(DescriptorTable, DecodeDescriptorKeepsNothingAndAgreesWithDescriptor) {
    // decode_descriptor gives what descriptor gives, before and after that one is kept,
    // for files with and without a table, errors included; an index past the end is
    // refused.
    FileWriterOptions no_table;
    no_table.descriptor_table = false;
    for (const Bytes& bytes : {write_file(5), write_file(5, no_table)}) {
        auto r = open_bytes(bytes);
        TensorDescriptor out;
        for (size_t i = 0; i < r.tensor_count(); ++i) {
            ASSERT_TRUE(r.decode_descriptor(i, out));
            EXPECT_EQ(out, *must(r.descriptor(i)));
            out = TensorDescriptor{};
            ASSERT_TRUE(r.decode_descriptor(i, out));  // kept now: a copy
            EXPECT_EQ(out, *must(r.descriptor(i)));
        }
        auto past = r.decode_descriptor(r.tensor_count(), out);
        ASSERT_FALSE(past);
        EXPECT_EQ(past.error().code(), ErrorCode::kInvalidArgument);
    }
    Bytes bad = write_file(3, no_table);
    auto clean = open_bytes(bad);
    bad[static_cast<size_t>(clean.entry(1).descriptor_offset) + 10] = 0xEE;  // element_type: no such type
    FileReadOptions lazy;
    lazy.descriptors = DescriptorCheck::kLazy;
    auto r = open_bytes(bad, lazy);
    TensorDescriptor out;
    auto first = r.decode_descriptor(1, out);
    ASSERT_FALSE(first);
    auto kept = r.descriptor(1);
    ASSERT_FALSE(kept);
    EXPECT_EQ(first.error().to_string(), kept.error().to_string());
    auto again = r.decode_descriptor(1, out);
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().to_string(), kept.error().to_string());
}

TEST(DescriptorTable, ADisagreeingCopyNeverYieldsData) {
    // One copy changed to another valid descriptor (shape [2, 3] -> [3, 2]): listing
    // shows the table's, but the tensor's data is refused, naming both places; the
    // other tensors read as usual.
    Bytes bytes = write_file(4);
    auto clean = open_bytes(bytes);
    size_t victim = clean.tensor_count();
    for (size_t i = 0; i < clean.tensor_count(); ++i) {
        if ((*clean.descriptor(i))->shape[0] == 2) {
            victim = i;
        }
    }
    ASSERT_LT(victim, clean.tensor_count());
    const IndexEntry e = clean.entry(victim);
    const Bytes want_d(bytes.begin() + static_cast<std::ptrdiff_t>(e.descriptor_offset),
                       bytes.begin() + static_cast<std::ptrdiff_t>(e.descriptor_offset + e.descriptor_length));
    auto swapped = must(make_dense(ElementType::kFloat32, {3, 2}));
    const Bytes other = must(encode(swapped));
    ASSERT_EQ(other.size(), want_d.size());
    // The victim's copy in the table: find the descriptor's bytes after the table header.
    const size_t value_at = table_offset(bytes);
    const auto it = std::search(bytes.begin() + static_cast<std::ptrdiff_t>(value_at), bytes.end(), want_d.begin(),
                                want_d.end());
    ASSERT_NE(it, bytes.end());
    std::copy(other.begin(), other.end(), it);

    auto r = open_bytes(bytes);
    ASSERT_TRUE(r.descriptor_table_bytes().has_value()) << "a well-formed table";
    EXPECT_EQ((*r.descriptor(victim))->shape[0], 3U) << "listing reads the table";
    auto t = r.tensor(victim);
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().code(), ErrorCode::kInvalidFile);
    std::string kv_at("KV section at ");
    kv_at.append(std::to_string(r.trailer().kv_offset));
    EXPECT_NE(t.error().message().find(kv_at), std::string::npos) << t.error().to_string();
    Bytes out(4);
    EXPECT_FALSE(r.read_data(victim, 0, out));
    for (size_t i = 0; i < r.tensor_count(); ++i) {
        if (i != victim) {
            EXPECT_TRUE(r.tensor(i)) << i;
        }
    }
    EXPECT_FALSE(r.check_all());
}

/// Whether `r` lists, checks and reads every tensor from the descriptors in place:
/// no table in use, none among the KV entries.
void expect_in_place(const FileReader& r, const std::string& what) {
    EXPECT_FALSE(r.descriptor_table_bytes().has_value()) << what;
    EXPECT_FALSE(r.kv().contains(kDescriptorTableKey)) << what;
    EXPECT_TRUE(r.check_all()) << what;
    for (size_t i = 0; i < r.tensor_count(); ++i) {
        EXPECT_TRUE(r.tensor(i)) << what << " " << i;
    }
}

TEST(DescriptorTable, MalformedOrUnknownTablesFallBackToTheDescriptorsInPlace) {
    struct Case {
        const char* what;
        size_t at;  // from the table value's first byte
        uint8_t value;
    };
    for (const uint16_t version : {kDescriptorTableVersion1, kDescriptorTableVersion2}) {
        SCOPED_TRACE(version);
        FileWriterOptions o;
        o.descriptor_table_version = version;
        const Bytes good = write_file(5, o);  // five shapes: five classes of one entry
        const size_t v = table_offset(good);
        ASSERT_EQ(good[v + 4], version);
        // Where the first copy starts: after the header (and version 2's five classes).
        const size_t first = version == 1 ? 16 : 24 + 4 * 5;
        std::vector<Case> cases = {
            {"magic", 0, 'X'},          {"version 3", 4, 3},      {"version 0", 4, 0},
            {"flags", 6, 1},            {"entry count", 8, 4},    {"a copy's magic", first, 0},
        };
        if (version == 2) {
            const std::vector<Case> v2 = {
                {"class count 4", 16, 4},
                {"class count 6", 16, 6},
                {"class count 2^32 + 5", 20, 1},
                {"the first entry not in class 0", 24, 1},
                {"a class before its turn (2 after 0)", 28, 2},
                {"a class that does not exist", 24 + 4 * 4, 9},
                {"a class id's high byte", 24 + 4 * 2 + 3, 1},
            };
            cases.insert(cases.end(), v2.begin(), v2.end());
        }
        for (const Case& c : cases) {
            Bytes bytes = good;
            bytes[v + c.at] = c.value;
            expect_in_place(open_bytes(bytes), c.what);
        }

        // A copy's own version_major and descriptor_length (each byte of it), checked at
        // open as the descriptor in place would be: a mismatch is a malformed table too.
        for (const size_t at : {first + 4, first + 6, first + 7, first + 8, first + 9}) {
            Bytes bytes = good;
            bytes[v + at] ^= 1;
            expect_in_place(open_bytes(bytes), "copy byte " + std::to_string(at));
        }
    }

    // Version 2, entries of one class whose descriptor lengths differ: a rank-2 and a
    // rank-1 tensor both filed in class 0 (the table's length made to fit).
    {
        std::vector<test::TestTensor> tensors = {test::dense("a", ElementType::kFloat32, {2, 2}),
                                                 test::dense("b", ElementType::kInt8, {5})};
        const auto built = test::build_file(tensors);
        const auto& a = built.entries[0];
        ASSERT_NE(a.descriptor_length, built.entries[1].descriptor_length);
        std::vector<uint8_t> value(24 + 8, 0);
        std::copy(kDescriptorTableMagic.begin(), kDescriptorTableMagic.end(), value.begin());
        value[4] = 2;
        value[8] = 2;   // entry_count
        value[16] = 1;  // class_count
        value.insert(value.end(), built.bytes.begin() + static_cast<std::ptrdiff_t>(a.descriptor_offset),
                     built.bytes.begin() + static_cast<std::ptrdiff_t>(a.descriptor_offset + a.descriptor_length));
        KvMetadata kv;
        ASSERT_TRUE(kv.set(std::string(kDescriptorTableKey), KvValue::bytes(value)));
        const auto f = test::build_file(tensors, &kv);
        expect_in_place(open_bytes(f.bytes), "one class, two lengths");
        std::vector<IndexEntry> entries = f.entries;
        EXPECT_FALSE(locate_descriptor_table(value, entries).has_value());
    }

    // Other lengths and types, through the independent test builder.
    std::vector<test::TestTensor> tensors = {test::dense("a", ElementType::kFloat32, {2, 2}),
                                             test::dense("b", ElementType::kInt8, {5}),
                                             test::dense("c", ElementType::kFloat32, {2, 2})};
    const auto built = test::build_file(tensors);
    std::vector<std::span<const uint8_t>> in_place;
    for (const IndexEntry& e : built.entries) {
        in_place.push_back(std::span<const uint8_t>(built.bytes).subspan(e.descriptor_offset, e.descriptor_length));
    }
    for (const uint16_t version : {kDescriptorTableVersion1, kDescriptorTableVersion2}) {
        SCOPED_TRACE(version);
        const std::vector<uint8_t> full = must(encode_descriptor_table(in_place, version));
        EXPECT_EQ(full.size(), version == 1 ? 16 + in_place[0].size() * 2 + in_place[1].size()
                                            : 24 + 4 * 3 + in_place[0].size() + in_place[1].size())
            << "version 2 holds a and c's descriptor once";
        const std::vector<std::pair<std::string, KvValue>> values = {
            {"well formed", KvValue::bytes(full)},
            {"truncated", KvValue::bytes(std::vector<uint8_t>(full.begin(), full.end() - 1))},
            {"one byte too many", KvValue::bytes([&] { auto b = full; b.push_back(0); return b; }())},
            {"header only", KvValue::bytes(std::vector<uint8_t>(full.begin(), full.begin() + 16))},
            {"header and classes only", KvValue::bytes(std::vector<uint8_t>(full.begin(), full.begin() + 36))},
            {"empty", KvValue::bytes({})},
            {"a string", KvValue::string("HRDT")},
        };
        for (const auto& [what, value] : values) {
            KvMetadata kv;
            ASSERT_TRUE(kv.set(std::string(kDescriptorTableKey), value));
            const auto f = test::build_file(tensors, &kv);
            auto r = open_bytes(f.bytes);
            EXPECT_EQ(r.descriptor_table_bytes().has_value(), what == "well formed") << what;
            EXPECT_TRUE(r.kv().empty()) << what;
            EXPECT_TRUE(r.check_all()) << what;
            EXPECT_TRUE(r.tensor("a")) << what;
        }
    }
    EXPECT_FALSE(encode_descriptor_table(in_place, 3)) << "no version 3";
    EXPECT_FALSE(encode_descriptor_table(in_place, 0));
}

TEST(DescriptorTable, VersionTwoHoldsEachDistinctDescriptorOnce) {
    // write_file(20): five shapes, four tensors of each, in index order and sorted.
    // Version 2 numbers the classes by first appearance, keeps each descriptor once,
    // and lists as version 1 and the descriptors in place do; version 1 stays
    // readable.
    for (const bool sorted : {false, true}) {
        SCOPED_TRACE(sorted);
        FileWriterOptions v1;
        v1.descriptor_table_version = kDescriptorTableVersion1;
        v1.sorted_index = sorted;
        FileWriterOptions v2;
        v2.sorted_index = sorted;
        FileWriterOptions none;
        none.descriptor_table = false;
        none.sorted_index = sorted;
        const Bytes b1 = write_file(20, v1);
        const Bytes b2 = write_file(20, v2);
        auto r1 = open_bytes(b1);
        auto r2 = open_bytes(b2);
        auto r0 = open_bytes(write_file(20, none));
        const KvMetadata raw = raw_kv(b2);
        const auto value = *raw.get_bytes(kDescriptorTableKey);
        const uint32_t length = r2.entry(0).descriptor_length;
        ASSERT_EQ(value.size(), 24 + 4 * 20 + 5 * length);
        EXPECT_EQ(*r2.descriptor_table_bytes(), value.size());
        EXPECT_EQ(*r1.descriptor_table_bytes(), 16 + 20 * length);
        EXPECT_EQ(value[4], 2);
        EXPECT_EQ(value[16], 5) << "class_count";
        uint32_t next = 0;
        for (size_t i = 0; i < 20; ++i) {
            const uint32_t c = value[24 + 4 * i];
            EXPECT_LE(c, next) << "classes by first appearance";
            next = std::max(next, c + 1);
            const auto copy = std::span<const uint8_t>(value).subspan(24 + 4 * 20 + c * length, length);
            const IndexEntry& e = r2.entry(i);
            EXPECT_TRUE(std::equal(copy.begin(), copy.end(), b2.begin() + static_cast<std::ptrdiff_t>(e.descriptor_offset)))
                << i;
        }
        for (size_t i = 0; i < 20; ++i) {
            EXPECT_EQ(r2.entry(i).name, r1.entry(i).name);
            EXPECT_EQ(*must(r2.descriptor(i)), *must(r0.descriptor(i)));
            EXPECT_EQ(*must(r1.descriptor(i)), *must(r0.descriptor(i)));
            EXPECT_TRUE(r2.tensor(i).to_float32()) << i;
        }
        EXPECT_TRUE(r1.check_all());
        EXPECT_TRUE(r2.check_all());
    }
    FileWriterOptions bad;
    bad.descriptor_table_version = 3;
    MemorySink sink;
    auto w = FileWriter::create(sink, bad);
    ASSERT_FALSE(w);
    EXPECT_EQ(w.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(w.error().message().find("descriptor_table_version"), std::string::npos) << w.error().to_string();
}

TEST(DescriptorTable, AVersionTwoEntryFiledInAnotherClassNeverYieldsData) {
    // Tensor "b" ([4, 1]) filed in "a"'s class ([2, 2], the same length): the table is
    // well formed, so listing shows [2, 2] for "b", but its data is refused (its copy
    // differs from the descriptor in place) and check_all fails; "a" and "c" read.
    std::vector<test::TestTensor> tensors = {test::dense("a", ElementType::kFloat32, {2, 2}),
                                             test::dense("b", ElementType::kFloat32, {4, 1}),
                                             test::dense("c", ElementType::kInt8, {5})};
    const auto plain = test::build_file(tensors);
    std::vector<std::span<const uint8_t>> copies;
    for (const size_t i : {0, 0, 2}) {
        const IndexEntry& e = plain.entries[i];
        copies.push_back(std::span<const uint8_t>(plain.bytes).subspan(e.descriptor_offset, e.descriptor_length));
    }
    ASSERT_EQ(plain.entries[0].descriptor_length, plain.entries[1].descriptor_length);
    KvMetadata kv;
    ASSERT_TRUE(kv.set(std::string(kDescriptorTableKey), KvValue::bytes(must(encode_descriptor_table(copies)))));
    const auto f = test::build_file(tensors, &kv);
    for (const DescriptorCheck check : {DescriptorCheck::kPeek, DescriptorCheck::kLazy}) {
        FileReadOptions o;
        o.descriptors = check;
        auto r = open_bytes(f.bytes, o);
        ASSERT_TRUE(r.descriptor_table_bytes().has_value()) << "a well-formed table";
        const auto found = r.find("b");
        ASSERT_TRUE(found.has_value());
        const size_t b = *found;
        if (check == DescriptorCheck::kPeek) {
            const TensorDescriptor* d = must(r.descriptor(b));
            ASSERT_EQ(d->rank(), 2U);
            EXPECT_EQ(d->shape[0], 2U) << "listing reads the table";
            EXPECT_EQ(d->shape[1], 2U);
        }
        auto t = r.tensor(b);
        ASSERT_FALSE(t);
        EXPECT_EQ(t.error().code(), ErrorCode::kInvalidFile);
        EXPECT_NE(t.error().message().find("differs from the descriptor at"), std::string::npos)
            << t.error().to_string();
        Bytes out(4);
        EXPECT_FALSE(r.read_data(b, 0, out));
        EXPECT_TRUE(r.tensor("a").to_float32());
        EXPECT_TRUE(r.tensor("c"));
        EXPECT_FALSE(r.check_all());
    }
    FileReadOptions full;
    full.descriptors = DescriptorCheck::kFull;
    auto owner = std::make_shared<Bytes>(f.bytes);
    EXPECT_FALSE(FileReader::open_memory(*owner, owner, full));
}

TEST(DescriptorTable, RemoteListingReadsTheTailOnly) {
    // 40 tensors of a page each: the tail window does not hold the data. With a table,
    // listing every descriptor costs the tail (and the header); without one, more.
    FileWriterOptions with;
    FileWriterOptions without;
    without.descriptor_table = false;
    for (const bool table : {true, false}) {
        const Bytes bytes = write_file(40, table ? with : without);
        ASSERT_GT(bytes.size(), 40U * 4096U);
        auto src = std::make_shared<MemoryRangeSource>(bytes);
        auto r = FileReader::open(src);
        ASSERT_TRUE(r) << r.error().to_string();
        for (size_t i = 0; i < r->tensor_count(); ++i) {
            ASSERT_TRUE(r->descriptor(i));
        }
        if (table) {
            EXPECT_LE(src->request_count(), 3U);
            // Reading a tensor: one request for its descriptor and data together.
            const uint64_t before = src->request_count();
            auto t = r->tensor(7);
            ASSERT_TRUE(t) << t.error().to_string();
            EXPECT_EQ(src->request_count(), before + 1);
            EXPECT_TRUE(r->check_all());
        } else {
            EXPECT_GT(src->request_count(), 3U);
        }
    }
}

// --- Descriptor classes: byte-identical descriptors decoded once ---------------------

/// Where tensor `i`'s copy lies in the file (shared by its class in a version-2 table).
size_t copy_offset(const Bytes& bytes, const FileReader& r, size_t i) {
    std::vector<IndexEntry> entries;
    for (size_t k = 0; k < r.tensor_count(); ++k) {
        entries.push_back(r.entry(k));
    }
    const KvMetadata raw = raw_kv(bytes);
    const auto value = raw.get_bytes(kDescriptorTableKey);
    EXPECT_TRUE(value);
    auto at = locate_descriptor_table(*value, entries);
    EXPECT_TRUE(at.has_value());
    return table_offset(bytes) + static_cast<size_t>((*at)[i]);
}

/// Sets tensor `i`'s data_length in the index to `value` and recomputes the index CRC.
void set_data_length(Bytes& bytes, const FileReader& r, size_t i, uint64_t value) {
    const FileTrailer& t = r.trailer();
    const std::string_view name = r.entry(i).name;
    Bytes key{static_cast<uint8_t>(name.size()), 0};
    key.insert(key.end(), name.begin(), name.end());
    const auto index_begin = bytes.begin() + static_cast<std::ptrdiff_t>(t.index_offset);
    const auto index_end = index_begin + static_cast<std::ptrdiff_t>(t.index_length);
    const auto it = std::search(index_begin, index_end, key.begin(), key.end());
    ASSERT_NE(it, index_end);
    // name_length, name, descriptor_offset (8), descriptor_length (4), data_offset (8).
    const auto at = static_cast<size_t>(it - bytes.begin()) + key.size() + 20;
    for (size_t b = 0; b < 8; ++b) {
        bytes[at + b] = static_cast<uint8_t>(value >> (8 * b));
    }
    const uint32_t crc = crc32c(std::span<const uint8_t>(bytes).subspan(t.index_offset, t.index_length));
    const size_t crc_at = bytes.size() - kFileTrailerSize + trailer_field::kIndexCrc32c;
    for (size_t b = 0; b < 4; ++b) {
        bytes[crc_at + b] = static_cast<uint8_t>(crc >> (8 * b));
    }
}

TEST(DescriptorClasses, IdenticalDescriptorsAreDecodedOnceAndShared) {
    // write_file(20): five shapes, four tensors of each. With a table (memory), and
    // from the descriptors read at open (a local file without one, mapped or not, each
    // check mode but kLazy): descriptor(i) is one object for the tensors whose
    // descriptors are the same bytes, another for each other; equal to what kLazy
    // (one per tensor) and decode_descriptor give.
    test::TempDir dir;
    FileWriterOptions no_table;
    no_table.descriptor_table = false;
    const auto path = dir.path() / "plain.hrry";
    write_to(path, write_file(20, no_table));
    const Bytes bytes = write_file(20);
    FileReadOptions lazy_options;
    lazy_options.descriptors = DescriptorCheck::kLazy;
    auto lazy = open_bytes(bytes, lazy_options);
    std::vector<FileReader> readers{open_bytes(bytes)};
    for (const bool mmap : {true, false}) {
        for (const DescriptorCheck check : {DescriptorCheck::kPeek, DescriptorCheck::kFull}) {
            FileReadOptions o;
            o.use_mmap = mmap;
            o.descriptors = check;
            readers.push_back(must(FileReader::open(path, o)));
        }
    }
    for (size_t n = 0; n < readers.size(); ++n) {
        SCOPED_TRACE(n);
        const FileReader& r = readers[n];
        ASSERT_EQ(r.tensor_count(), 20U);
        for (size_t i = 0; i < r.tensor_count(); ++i) {
            const TensorDescriptor* di = must(r.descriptor(i));
            EXPECT_EQ(*di, *must(lazy.descriptor(i)));
            TensorDescriptor out;
            ASSERT_TRUE(r.decode_descriptor(i, out));
            EXPECT_EQ(out, *di);
            for (size_t j = 0; j < r.tensor_count(); ++j) {
                const TensorDescriptor* dj = must(r.descriptor(j));
                EXPECT_EQ(di == dj, *di == *dj) << i << " " << j;
                EXPECT_EQ(must(lazy.descriptor(i)) == must(lazy.descriptor(j)), i == j) << "kLazy: one per tensor";
            }
        }
        EXPECT_TRUE(r.check_all());
        EXPECT_TRUE(r.tensor(7).to_float32());
    }
}

TEST(DescriptorClasses, StoresOfEveryLengthAcrossTheirChunks) {
    // Decoded descriptors live in chunks of 512 slots, the last one only as long as
    // needed. Every tensor of these files has a descriptor of its own, so that the
    // classes fill 511, 512, 513 and 1100 slots, as do kLazy's per-tensor slots; the
    // last tensor is asked for first, so that the last, shorter chunk is made first.
    for (const size_t n : {size_t{1}, size_t{511}, size_t{512}, size_t{513}, size_t{1100}}) {
        SCOPED_TRACE(n);
        MemorySink sink;
        auto w = must(FileWriter::create(sink));
        for (size_t k = 0; k < n; ++k) {
            auto d = must(make_dense(ElementType::kUInt8, {k + 1}));
            const Bytes data(k + 1, static_cast<uint8_t>(k));
            std::span<const uint8_t> bufs[] = {data};
            std::string name("t");
            name.append(std::to_string(k));
            ASSERT_TRUE(w.add_tensor(name, d, bufs));
        }
        ASSERT_TRUE(w.finish());
        const Bytes bytes = std::move(sink).take();
        FileReadOptions lazy;
        lazy.descriptors = DescriptorCheck::kLazy;
        for (const FileReader& r : {open_bytes(bytes), open_bytes(bytes, lazy)}) {
            ASSERT_EQ(r.tensor_count(), n);
            for (size_t k = n; k-- > 0;) {
                const TensorDescriptor* d = must(r.descriptor(k));
                ASSERT_EQ(d->shape, std::vector<uint64_t>{k + 1});
                TensorDescriptor out;
                ASSERT_TRUE(r.decode_descriptor(k, out));
                EXPECT_EQ(out, *d);
                EXPECT_EQ(must(r.descriptor(k)), d) << "decoded once";
            }
            EXPECT_TRUE(r.check_all());
        }
    }
}

TEST(DescriptorClasses, ConcurrentFirstUsesShareOneDecode) {
    // Eight threads ask for every descriptor of a fresh reader at once: each gets the
    // same object for the same descriptor bytes.
    const Bytes bytes = write_file(200);
    for (int round = 0; round < 5; ++round) {
        auto r = open_bytes(bytes);
        std::vector<std::vector<const TensorDescriptor*>> got(8);
        std::vector<std::thread> threads;
        for (auto& g : got) {
            threads.emplace_back([&r, &g] {
                for (size_t i = 0; i < r.tensor_count(); ++i) {
                    auto d = r.descriptor(i);
                    g.push_back(d ? *d : nullptr);
                }
            });
        }
        for (auto& t : threads) {
            t.join();
        }
        for (const auto& g : got) {
            ASSERT_EQ(g, got[0]);
        }
        for (size_t i = 0; i < r.tensor_count(); ++i) {
            ASSERT_NE(got[0][i], nullptr);
            EXPECT_EQ(got[0][i], got[0][i % 5]) << "the same shape every fifth tensor";
        }
    }
}

TEST(DescriptorClasses, AnEntryThatDisagreesWithItsClassIsRefusedAlone) {
    // Tensor 7's data_length shortened in the index (the CRC recomputed): its
    // descriptor is refused with the error a reader without classes gives (it names
    // the tensor), kFull fails open with it, and tensor 2, of the same class, reads.
    Bytes bytes = write_file(10);
    auto clean = open_bytes(bytes);
    set_data_length(bytes, clean, 7, clean.entry(7).data_length - 4);
    FileReadOptions lazy_options;
    lazy_options.descriptors = DescriptorCheck::kLazy;
    const Error want = open_bytes(bytes, lazy_options).descriptor(7).error();
    EXPECT_EQ(want.code(), ErrorCode::kSizeMismatch);
    EXPECT_NE(want.message().find("(index entry 7)"), std::string::npos) << want.to_string();
    auto r = open_bytes(bytes);
    ASSERT_EQ(*must(r.descriptor(2)), *must(clean.descriptor(7))) << "its class decodes";
    auto d = r.descriptor(7);
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().to_string(), want.to_string());
    TensorDescriptor out;
    auto decoded = r.decode_descriptor(7, out);
    ASSERT_FALSE(decoded);
    EXPECT_EQ(decoded.error().to_string(), want.to_string());
    EXPECT_FALSE(r.tensor(7));
    EXPECT_TRUE(r.tensor(2).to_float32());
    EXPECT_FALSE(r.check_all());
    FileReadOptions full;
    full.descriptors = DescriptorCheck::kFull;
    auto owner = std::make_shared<Bytes>(bytes);
    auto opened = FileReader::open_memory(*owner, owner, full);
    ASSERT_FALSE(opened);
    EXPECT_EQ(opened.error().to_string(), want.to_string());
}

TEST(DescriptorClasses, AClassThatDoesNotDecodeGivesEachTensorItsOwnError) {
    // The copies of tensors 3 and 8 (one shape) both given an unknown element type:
    // one class that does not decode; each tensor's error names it, as without
    // classes; the other tensors decode and read.
    Bytes bytes = write_file(10);
    auto clean = open_bytes(bytes);
    for (const size_t i : {3, 8}) {
        bytes[copy_offset(bytes, clean, i) + 10] = 0xEE;  // element_type
    }
    FileReadOptions lazy_options;
    lazy_options.descriptors = DescriptorCheck::kLazy;
    auto lazy = open_bytes(bytes, lazy_options);
    auto r = open_bytes(bytes);
    ASSERT_TRUE(r.descriptor_table_bytes().has_value()) << "the table is still well formed";
    for (size_t i = 0; i < r.tensor_count(); ++i) {
        auto d = r.descriptor(i);
        if (i == 3 || i == 8) {
            ASSERT_FALSE(d) << i;
            EXPECT_EQ(d.error().to_string(), lazy.descriptor(i).error().to_string());
            std::string label("(index entry ");
            label.append(std::to_string(i)).push_back(')');
            EXPECT_NE(d.error().message().find(label), std::string::npos) << d.error().to_string();
            EXPECT_FALSE(r.tensor(i));
        } else {
            ASSERT_TRUE(d) << i;
            EXPECT_EQ(**d, *must(clean.descriptor(i)));
            EXPECT_TRUE(r.tensor(i).to_float32()) << i;
        }
    }
}

}  // namespace
}  // namespace hurray
