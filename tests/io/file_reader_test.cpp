// SPDX-License-Identifier: Apache-2.0
// FileReader on valid files: the conformance vector, lookup, write order,
// lazy descriptors, zero-copy buffers, the pread path, access hints,
// composites, both padding rules, empty files and tensors, large alignments.
#include "hurray/io/file_reader.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "file_test_support.hpp"
#include "test_paths.hpp"

namespace hurray {
namespace {

using test::build_file;
using test::BuildOptions;
using test::BuiltFile;
using test::Bytes;
using test::dense;
using test::Fails;
using test::must;
using test::nested_composites;
using test::Padding;
using test::TempDir;
using test::TestTensor;

std::string conformance(const std::string& rel) { return std::string(HURRAY_CONFORMANCE_DIR) + "/" + rel; }

FileReadOptions pread_options() {
    FileReadOptions o;
    o.use_mmap = false;
    return o;
}

FileReader open_bytes(const Bytes& bytes, const FileReadOptions& o = {}) {
    return must(FileReader::open_memory(bytes, {}, o));
}

/// The buffers of tensor `i` as written by build_file's fill pattern.
void expect_pattern(const FileReader& r, size_t i, size_t write_pos) {
    auto t = r.tensor(i);
    ASSERT_TRUE(t.ok()) << t.error().to_string();
    ASSERT_EQ(t->buffers().size(), t->descriptor().buffers.size());
    for (size_t b = 0; b < t->buffers().size(); ++b) {
        ASSERT_EQ(t->buffers()[b].size(), t->descriptor().buffers[b].byte_size);
        for (size_t k = 0; k < t->buffers()[b].size(); ++k) {
            ASSERT_EQ(t->buffers()[b].data()[k], test::pattern_byte(write_pos, b, k))
                << "tensor " << i << " buffer " << b << " byte " << k;
        }
    }
}

// ---------------------------------------------------------------------------
// Conformance vector
// ---------------------------------------------------------------------------

class Conformance : public ::testing::TestWithParam<bool> {};

TEST_P(Conformance, BasicFileMatchesManifest) {
    std::ifstream ms(conformance("manifest.json"));
    ASSERT_TRUE(ms.good());
    const auto manifest = nlohmann::json::parse(ms);
    const auto& files = manifest.at("files");
    ASSERT_FALSE(files.empty());
    for (const auto& f : files) {
        FileReadOptions o;
        o.use_mmap = GetParam();
        auto r = FileReader::open(conformance(f.at("file").get<std::string>()), o);
        ASSERT_TRUE(r.ok()) << r.error().to_string();
        EXPECT_EQ(r->mapped(), GetParam());
        ASSERT_TRUE(r->check_all().ok());
        const auto& tensors = f.at("tensors");
        ASSERT_EQ(r->tensor_count(), tensors.size());
        for (size_t i = 0; i < tensors.size(); ++i) {
            const auto& t = tensors[i];
            const std::string name = t.at("name").get<std::string>();
            const auto pos = r->find(name);
            ASSERT_TRUE(pos.has_value()) << name;
            auto ft = r->tensor(*pos);
            ASSERT_TRUE(ft.ok()) << ft.error().to_string();
            EXPECT_EQ(static_cast<int>(ft->descriptor().element_type), t.at("element_type_tag").get<int>());
            EXPECT_EQ(ft->descriptor().shape, t.at("shape").get<std::vector<uint64_t>>());
            ASSERT_EQ(ft->buffers().size(), 1U);
            EXPECT_EQ(ft->buffers()[0].size(), t.at("data_bytes").get<uint64_t>());
            EXPECT_EQ(ft->entry().data_length, t.at("data_bytes").get<uint64_t>());
            EXPECT_TRUE(ft->view().ok());
        }
        const auto& kv = f.at("kv");
        EXPECT_EQ(r->kv().size(), kv.size());
        for (const auto& e : kv) {
            const std::string key = e.at("key").get<std::string>();
            const std::string kind = e.at("kind").get<std::string>();
            if (kind == "string") {
                auto v = r->kv().get_string(key);
                ASSERT_TRUE(v.ok()) << v.error().to_string();
                EXPECT_EQ(*v, e.at("value_string").get<std::string>());
            } else if (kind == "int64") {
                auto v = r->kv().get_int64(key);
                ASSERT_TRUE(v.ok()) << v.error().to_string();
                EXPECT_EQ(*v, e.at("value_int").get<int64_t>());
            } else {
                ADD_FAILURE() << "manifest kind " << kind << " not handled";
            }
        }
    }
}

TEST_P(Conformance, BasicFileFacts) {
    FileReadOptions o;
    o.use_mmap = GetParam();
    auto r = FileReader::open(conformance("files/basic.hrry"), o);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_EQ(r->trailer().index_crc32c, 0x51349F72U);
    EXPECT_NE(r->header().flags & file_flags::kHasIndexCrc32c, 0U);
    // The reference writer never sets HAS_KV_METADATA (SPEC-NOTES 11).
    EXPECT_EQ(r->header().flags & file_flags::kHasKvMetadata, 0U);
    EXPECT_EQ(r->header().data_buffer_alignment, 4096U);
    EXPECT_EQ(r->file_size(), 8391U);
    EXPECT_THAT(std::vector<size_t>(r->write_order().begin(), r->write_order().end()), ::testing::ElementsAre(0, 1));
    EXPECT_EQ(r->entry(0).name, "weights");
    EXPECT_EQ(r->entry(1).name, "bias");
    auto kv_count = r->kv().get_int64("tensor_count");
    ASSERT_TRUE(kv_count.ok());
    EXPECT_EQ(*kv_count, 2);
    auto producer = r->kv().get_string("producer");
    ASSERT_TRUE(producer.ok());
    EXPECT_EQ(*producer, "hurray-conformance");
    EXPECT_TRUE(Fails(r->kv().get_int64("producer"), ErrorCode::kTypeMismatch));
}

INSTANTIATE_TEST_SUITE_P(MmapAndPread, Conformance, ::testing::Bool(),
                         [](const auto& info) { return info.param ? std::string("mmap") : std::string("pread"); });

// ---------------------------------------------------------------------------
// Basic reading
// ---------------------------------------------------------------------------

TEST(FileReader, ReadsEveryTensorFromFileAndMemory) {
    const BuiltFile f = test::small_file();
    TempDir dir;
    const std::string path = dir.write("small.hrry", f.bytes);
    for (int mode = 0; mode < 3; ++mode) {
        Result<FileReader> r = mode == 0   ? FileReader::open(path)
                               : mode == 1 ? FileReader::open(path, pread_options())
                                           : FileReader::open_memory(f.bytes);
        ASSERT_TRUE(r.ok()) << r.error().to_string();
        EXPECT_EQ(r->mapped(), mode == 0);
        EXPECT_EQ(r->file_size(), f.bytes.size());
        EXPECT_EQ(r->header(), f.header);
        EXPECT_EQ(r->trailer(), f.trailer);
        ASSERT_EQ(r->tensor_count(), 3U);
        for (size_t i = 0; i < 3; ++i) {
            EXPECT_EQ(r->entry(i), f.entries[i]);
            expect_pattern(*r, i, i);
        }
        auto name = r->kv().get_string("general.name");
        ASSERT_TRUE(name.ok());
        EXPECT_EQ(*name, "small");
        EXPECT_TRUE(r->check_all().ok());
    }
}

TEST(FileReader, CopiesAndMovesKeepTheEntries) {
    // tensor_count() and entry(i) are inline views of the entries the reader's state
    // owns: a copy shows the same entries (the same objects), a moved-to reader the
    // moved-from one's, and a moved-from reader none; each outlives the reader it came
    // from.
    const BuiltFile f = test::small_file();
    auto opened = FileReader::open_memory(f.bytes);
    ASSERT_TRUE(opened.ok()) << opened.error().to_string();
    FileReader copy = *opened;
    ASSERT_EQ(copy.tensor_count(), 3U);
    EXPECT_EQ(&copy.entry(1), &opened->entry(1));
    FileReader moved = std::move(*opened);
    EXPECT_EQ(opened->tensor_count(), 0U);  // NOLINT(bugprone-use-after-move): moved-from shows none
    ASSERT_EQ(moved.tensor_count(), 3U);
    FileReader assigned = copy;
    assigned = std::move(moved);
    EXPECT_EQ(moved.tensor_count(), 0U);  // NOLINT(bugprone-use-after-move)
    copy = FileReader(assigned);
    { const FileReader gone = std::move(assigned); }
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(copy.entry(i), f.entries[i]);
        expect_pattern(copy, i, i);
    }
}

TEST(FileReader, DescriptorBytesAreTheEncodedDescriptor) {
    const BuiltFile f = test::small_file();
    const FileReader r = open_bytes(f.bytes);
    for (size_t i = 0; i < r.tensor_count(); ++i) {
        auto raw = r.descriptor_bytes(i);
        ASSERT_TRUE(raw.ok());
        const TensorDescriptor* d = must(r.descriptor(i));
        EXPECT_EQ(Bytes(raw->span().begin(), raw->span().end()), must(encode(*d)));
    }
    EXPECT_TRUE(Fails(r.descriptor_bytes(3), ErrorCode::kInvalidArgument));
}

TEST(FileReader, ViewReadsValues) {
    auto t = dense("m", ElementType::kFloat32, {2, 3});
    Bytes data(24);
    for (size_t k = 0; k < 6; ++k) {
        const auto v = static_cast<float>(k) * 1.5F;
        std::memcpy(data.data() + 4 * k, &v, 4);
    }
    t.data = {data};
    const BuiltFile f = build_file({t});
    const FileReader r = open_bytes(f.bytes);
    auto ft = r.tensor("m");
    ASSERT_TRUE(ft.ok());
    auto view = ft->view();
    ASSERT_TRUE(view.ok()) << view.error().to_string();
    const std::array<uint64_t, 2> at = {1, 2};
    EXPECT_EQ(must(view->read_double(at)), 7.5);
}

TEST(FileReader, MultiBufferTensorsKeepInterBufferPadding) {
    for (const Padding p : {Padding::kSpec, Padding::kReference}) {
        BuildOptions o;
        o.after_data = o.after_head = p;
        TestTensor csr{"csr", must(make_csr(ElementType::kFloat32, 3, 3, 2))};
        // row_ptr {0, 1, 1, 2}, col {0, 2}, values {1, 2}: valid CSR bytes.
        Bytes values(8), cols(16), rows(32);
        const std::array<float, 2> vs = {1.0F, 2.0F};
        std::memcpy(values.data(), vs.data(), 8);
        const std::array<int64_t, 2> cs = {0, 2};
        std::memcpy(cols.data(), cs.data(), 16);
        const std::array<int64_t, 4> rs = {0, 1, 1, 2};
        std::memcpy(rows.data(), rs.data(), 32);
        csr.data = {values, cols, rows};
        const BuiltFile f = build_file({dense("x", ElementType::kInt8, {3}), csr}, nullptr, o);
        // Buffers at data_offset, +4096, +8192; data_length ends at the last buffer.
        EXPECT_EQ(f.entries[1].data_length, 2 * 4096U + 32U);
        const FileReader r = open_bytes(f.bytes);
        auto t = r.tensor("csr");
        ASSERT_TRUE(t.ok()) << t.error().to_string();
        ASSERT_EQ(t->buffers().size(), 3U);
        EXPECT_EQ(t->buffers()[0].data() + 4096, t->buffers()[1].data());
        EXPECT_EQ(t->buffers()[1].data() + 4096, t->buffers()[2].data());
        auto view = t->view();
        ASSERT_TRUE(view.ok()) << view.error().to_string();
        const std::array<uint64_t, 2> at = {2, 2};
        EXPECT_EQ(must(view->read_double(at)), 2.0);
    }
}

// ---------------------------------------------------------------------------
// Lookup and write order
// ---------------------------------------------------------------------------

std::vector<TestTensor> named_tensors() {
    // Write order deliberately not sorted; "\xC3\xA9" (é) sorts after "z".
    return {dense("zeta", ElementType::kInt8, {1}), dense("\xC3\xA9t\xC3\xA9", ElementType::kInt8, {2}),
            dense("alpha", ElementType::kInt8, {3}), dense("Beta", ElementType::kInt8, {4}),
            dense("alphabet", ElementType::kInt8, {5})};
}

TEST(FileReaderLookup, FindsByNameSortedAndUnsorted) {
    for (const bool sorted : {false, true}) {
        BuildOptions o;
        o.sort_index = sorted;
        const BuiltFile f = build_file(named_tensors(), nullptr, o);
        const FileReader r = open_bytes(f.bytes);
        EXPECT_EQ((r.header().flags & file_flags::kSortedIndex) != 0, sorted);
        for (const TestTensor& t : named_tensors()) {
            const auto i = r.find(t.name);
            ASSERT_TRUE(i.has_value()) << t.name;
            EXPECT_EQ(r.entry(*i).name, t.name);
            EXPECT_EQ(must(r.descriptor(t.name))->shape, t.desc.shape);
        }
        for (const char* missing : {"", "a", "alph", "alphabets", "zz", "beta", "\xC3\xA9", "\xFF"}) {
            EXPECT_FALSE(r.find(missing).has_value()) << missing;
        }
        EXPECT_TRUE(Fails(r.tensor("nope"), ErrorCode::kNotFound, {"'nope'"}));
        EXPECT_TRUE(Fails(r.descriptor("nope"), ErrorCode::kNotFound, {"'nope'"}));
    }
}

// Without SORTED_INDEX, names that happen to be in strictly ascending byte order are
// proved unique in one pass and found by binary search; any other order falls back to
// the name table. Both find every name, miss every other, and refuse a duplicate.
TEST(FileReaderLookup, AscendingNamesWithoutTheFlagAreFoundAndChecked) {
    const std::vector<std::vector<std::string>> orders = {
        {"Beta", "alpha", "alphabet", "zeta", "\xC3\xA9t\xC3\xA9"},  // ascending bytes
        {"alpha", "beta", "gamma", "Alpha"},                          // all but the last pair
        {"b", "a"},
        {"only"},
    };
    for (const auto& names : orders) {
        std::vector<TestTensor> tensors;
        for (const std::string& n : names) {
            tensors.push_back(dense(n, ElementType::kInt8, {2}));
        }
        const BuiltFile f = build_file(tensors);
        const FileReader r = open_bytes(f.bytes);
        EXPECT_EQ(r.header().flags & file_flags::kSortedIndex, 0U);
        for (size_t i = 0; i < names.size(); ++i) {
            EXPECT_EQ(r.find(names[i]), std::optional<size_t>(i)) << names[i];
        }
        for (const char* missing : {"", "a0", "alph", "alphabets", "zz", "beta0", "\xC3\xA9", "\xFF"}) {
            EXPECT_FALSE(r.find(missing).has_value()) << missing;
        }
    }
    // "a", "b", "c", "d" ascending; a duplicate side by side, or after an ascending run.
    const std::vector<TestTensor> four = {dense("a", ElementType::kInt8, {1}), dense("b", ElementType::kInt8, {1}),
                                          dense("c", ElementType::kInt8, {1}), dense("d", ElementType::kInt8, {1})};
    for (const auto& [from, to] : std::vector<std::pair<size_t, size_t>>{{0, 1}, {2, 3}, {0, 3}, {1, 3}}) {
        BuildOptions o;
        o.edit_index = [from = from, to = to](std::vector<IndexEntry>& es) { es[to].name = es[from].name; };
        const BuiltFile f = build_file(four, nullptr, o);
        auto r = FileReader::open_memory(f.bytes, {});
        ASSERT_FALSE(r.ok()) << from << " " << to;
        EXPECT_EQ(r.error().code(), ErrorCode::kDuplicateName) << r.error().to_string();
    }
}

TEST(FileReaderLookup, SortedIndexUsesRawByteOrder) {
    BuildOptions o;
    o.sort_index = true;
    const BuiltFile f = build_file(named_tensors(), nullptr, o);
    const FileReader r = open_bytes(f.bytes);
    std::vector<std::string> names;
    for (size_t i = 0; i < r.tensor_count(); ++i) {
        names.emplace_back(r.entry(i).name);
    }
    EXPECT_THAT(names, ::testing::ElementsAre("Beta", "alpha", "alphabet", "zeta", "\xC3\xA9t\xC3\xA9"));
}

TEST(FileReaderLookup, WriteOrderFollowsDescriptorOffsets) {
    BuildOptions o;
    o.sort_index = true;
    const BuiltFile f = build_file(named_tensors(), nullptr, o);
    const FileReader r = open_bytes(f.bytes);
    std::vector<std::string> in_write_order;
    for (const size_t i : r.write_order()) {
        in_write_order.emplace_back(r.entry(i).name);
    }
    std::vector<std::string> expected;
    for (const TestTensor& t : named_tensors()) {
        expected.push_back(t.name);
    }
    EXPECT_EQ(in_write_order, expected);
    for (size_t k = 1; k < r.write_order().size(); ++k) {
        EXPECT_LT(r.entry(r.write_order()[k - 1]).descriptor_offset, r.entry(r.write_order()[k]).descriptor_offset);
    }
}

// ---------------------------------------------------------------------------
// Lazy descriptors
// ---------------------------------------------------------------------------

TEST(FileReaderLazy, DescriptorDecodedOnceAndCached) {
    const BuiltFile f = test::small_file();
    const FileReader r = open_bytes(f.bytes);
    const TensorDescriptor* first = must(r.descriptor(1));
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(must(r.descriptor(1)), first);
    EXPECT_EQ(must(r.descriptor("b")), first);
    EXPECT_EQ(&must(r.tensor(1)).descriptor(), first);
    EXPECT_TRUE(Fails(r.descriptor(99), ErrorCode::kInvalidArgument));
}

TEST(FileReaderLazy, ConcurrentFirstUseYieldsOneDescriptor) {
    std::vector<TestTensor> ts;
    for (int i = 0; i < 16; ++i) {
        ts.push_back(dense(std::string("t").append(std::to_string(i)), ElementType::kFloat32, {2, static_cast<uint64_t>(i + 1)}));
    }
    const BuiltFile f = build_file(ts);
    const FileReader r = open_bytes(f.bytes);
    std::vector<std::vector<const TensorDescriptor*>> seen(4);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < seen.size(); ++t) {
        threads.emplace_back([&r, &seen, t] {
            for (size_t i = 0; i < r.tensor_count(); ++i) {
                auto d = r.descriptor((i + t * 5) % r.tensor_count());
                seen[t].push_back(d.ok() ? *d : nullptr);
            }
        });
    }
    for (auto& th : threads) {
        th.join();
    }
    for (size_t i = 0; i < r.tensor_count(); ++i) {
        const TensorDescriptor* d = must(r.descriptor(i));
        for (size_t t = 0; t < seen.size(); ++t) {
            EXPECT_EQ(seen[t][(i + r.tensor_count() - (t * 5) % r.tensor_count()) % r.tensor_count()], d);
        }
    }
}

TEST(FileReaderLazy, ConcurrentFirstWriteOrderIsOneIdentity) {
    // An index in file order keeps no write order at open: the first calls of
    // write_order(), from several threads at once, build one identity.
    std::vector<TestTensor> ts;
    for (int i = 0; i < 16; ++i) {
        ts.push_back(dense(std::string("t").append(std::to_string(i)), ElementType::kFloat32, {2}));
    }
    const BuiltFile f = build_file(ts);
    const FileReader r = open_bytes(f.bytes);
    std::vector<std::span<const size_t>> seen(4);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < seen.size(); ++t) {
        threads.emplace_back([&r, &seen, t] { seen[t] = r.write_order(); });
    }
    for (auto& th : threads) {
        th.join();
    }
    for (const std::span<const size_t> order : seen) {
        EXPECT_EQ(order.data(), seen[0].data());
        ASSERT_EQ(order.size(), r.tensor_count());
        for (size_t k = 0; k < order.size(); ++k) {
            EXPECT_EQ(order[k], k);
        }
    }
}

// One reader shared by 8 threads that start together (run under ThreadSanitizer by
// scripts/test.sh stage 3b), mapped and through pread (data read and cached on first
// use, under a mutex): lazy descriptors, tensors and their bytes, materialize, lookup,
// KV, check_all, access hints, and copies of the reader made and dropped in each thread.
class FileReaderThreads : public ::testing::TestWithParam<bool> {};

TEST_P(FileReaderThreads, EightThreadsShareOneReader) {
    std::vector<TestTensor> ts;
    for (int i = 0; i < 24; ++i) {
        ts.push_back(dense(std::string("t").append(std::to_string(i)), ElementType::kFloat32,
                           {3, static_cast<uint64_t>(i + 1)}));
    }
    KvMetadata kv;
    ASSERT_TRUE(kv.set("k", KvValue::uint64(7)).ok());
    const BuiltFile f = build_file(ts, &kv);
    TempDir dir;
    const std::string path = dir.write("shared.hrry", f.bytes);
    FileReadOptions o;
    o.use_mmap = GetParam();
    const FileReader r = must(FileReader::open(path, o));
    ASSERT_EQ(r.mapped(), GetParam());
    constexpr size_t kThreads = 8;
    std::atomic<size_t> ready{0};
    std::atomic<size_t> failures{0};
    std::vector<std::vector<const TensorDescriptor*>> seen(kThreads);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            ready.fetch_add(1);
            while (ready.load() < kThreads) {
                std::this_thread::yield();
            }
            const size_t n = r.tensor_count();
            for (size_t k = 0; k < n; ++k) {
                const size_t i = (k + t * 3) % n;
                const FileReader copy = r;  // shares the handle: reference counting
                auto d = copy.descriptor(i);
                auto tensor = r.tensor(r.entry(i).name);
                auto bytes = tensor.ok() ? tensor->materialize() : Result<std::vector<uint8_t>>(tensor.error());
                if (!d.ok() || !tensor.ok() || !bytes.ok() || &tensor->descriptor() != *d ||
                    r.find(r.entry(i).name) != std::optional<size_t>(i) || !r.advise(i, AccessPattern::kWillNeed).ok()) {
                    failures.fetch_add(1);
                    continue;
                }
                seen[t].push_back(*d);
                // build_file writes tensor i i-th; one buffer each.
                for (size_t b = 0; b < bytes->size(); ++b) {
                    if ((*bytes)[b] != test::pattern_byte(i, 0, b) || tensor->buffers()[0].data()[b] != (*bytes)[b]) {
                        failures.fetch_add(1);
                        break;
                    }
                }
            }
            if (!r.check_all().ok() || !r.kv().get_uint64("k").ok()) {
                failures.fetch_add(1);
            }
        });
    }
    for (auto& th : threads) {
        th.join();
    }
    EXPECT_EQ(failures.load(), 0U);
    for (size_t t = 0; t < kThreads; ++t) {
        ASSERT_EQ(seen[t].size(), r.tensor_count());
        for (size_t k = 0; k < seen[t].size(); ++k) {
            EXPECT_EQ(seen[t][k], must(r.descriptor((k + t * 3) % r.tensor_count())));  // one decoding each
        }
    }
}

INSTANTIATE_TEST_SUITE_P(MappedAndPread, FileReaderThreads, ::testing::Bool());

// ---------------------------------------------------------------------------
// Zero copy, page alignment, pread, access hints
// ---------------------------------------------------------------------------

TEST(FileReaderMapping, BuffersPointIntoTheMappingAndOutliveTheReader) {
    const BuiltFile f = test::small_file();
    TempDir dir;
    const std::string path = dir.write("z.hrry", f.bytes);
    SharedBuffer kept;
    {
        auto r = FileReader::open(path);
        ASSERT_TRUE(r.ok()) << r.error().to_string();
        ASSERT_TRUE(r->mapped());
        // The mapping starts where descriptor 0 lies, minus its offset.
        const SharedBuffer d0 = must(r->descriptor_bytes(0));
        const uint8_t* base = d0.data() - f.entries[0].descriptor_offset;
        auto t = r->tensor("a");
        ASSERT_TRUE(t.ok());
        kept = t->buffers()[0];
        EXPECT_EQ(kept.data(), base + f.entries[0].data_offset);
        EXPECT_EQ(kept.owner(), d0.owner());
        const long page = ::sysconf(_SC_PAGESIZE);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(base) % static_cast<uintptr_t>(page), 0U);
    }
    // The reader is gone; the mapping lives on through the buffer.
    ASSERT_EQ(kept.size(), 24U);
    for (size_t k = 0; k < kept.size(); ++k) {
        EXPECT_EQ(kept.data()[k], test::pattern_byte(0, 0, k));
    }
}

TEST(FileReaderMapping, MemoryOwnerIsShared) {
    const BuiltFile f = test::small_file();
    auto owned = std::make_shared<Bytes>(f.bytes);
    SharedBuffer kept;
    {
        auto r = FileReader::open_memory(*owned, owned);
        ASSERT_TRUE(r.ok());
        kept = must(r->tensor("b")).buffers()[0];
        EXPECT_EQ(kept.data(), owned->data() + f.entries[1].data_offset);
    }
    const std::weak_ptr<Bytes> weak = owned;
    owned.reset();
    EXPECT_FALSE(weak.expired());
    EXPECT_EQ(kept.data()[0], test::pattern_byte(1, 0, 0));
    kept = {};
    EXPECT_TRUE(weak.expired());
}

TEST(FileReaderMapping, CopyOnWriteKeepsWritesPrivate) {
    const BuiltFile f = test::small_file();
    TempDir dir;
    const std::string path = dir.write("cow.hrry", f.bytes);
    FileReadOptions o;
    o.copy_on_write = true;
    auto r = FileReader::open(path, o);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    ASSERT_TRUE(r->mapped());
    ASSERT_TRUE(r->copy_on_write());
    const SharedBuffer a = must(r->tensor("a")).buffers()[0];
    ASSERT_EQ(a.size(), 24U);
    // SAFETY: copy_on_write() is true, so the mapping is writable and private;
    // the bytes written are tensor a's data, inside the mapping.
    auto* bytes = const_cast<uint8_t*>(a.data());  // NOLINT(cppcoreguidelines-pro-type-const-cast)
    for (size_t k = 0; k < a.size(); ++k) {
        bytes[k] = static_cast<uint8_t>(~test::pattern_byte(0, 0, k));
    }
    // Every view of this reader sees the write ...
    const SharedBuffer again = must(r->tensor("a")).buffers()[0];
    EXPECT_EQ(again.data()[5], static_cast<uint8_t>(~test::pattern_byte(0, 0, 5)));
    // ... the file and another reader do not, and the descriptors still decode.
    EXPECT_EQ(test::read_all(path), f.bytes);
    auto other = FileReader::open(path);
    ASSERT_TRUE(other.ok());
    EXPECT_FALSE(other->copy_on_write());
    expect_pattern(*other, 0, 0);
    EXPECT_TRUE(r->check_all().ok());
    // The option has no effect without a mapping.
    o.use_mmap = false;
    auto p = FileReader::open(path, o);
    ASSERT_TRUE(p.ok());
    EXPECT_FALSE(p->copy_on_write());
    expect_pattern(*p, 0, 0);
}

class LargeAlignment : public ::testing::TestWithParam<uint32_t> {};

TEST_P(LargeAlignment, DataIsPageAlignedAndReadable) {
    BuildOptions o;
    o.alignment = GetParam();
    KvMetadata kv;
    ASSERT_TRUE(kv.set("k", KvValue::uint64(7)).ok());
    const BuiltFile f = build_file({dense("a", ElementType::kFloat32, {3}), dense("b", ElementType::kInt16, {5}),
                                    dense("e", ElementType::kFloat32, {0, 4})},
                                   &kv, o);
    TempDir dir;
    const std::string path = dir.write("big.hrry", f.bytes);
    const long page = ::sysconf(_SC_PAGESIZE);
    for (const bool mmap : {true, false}) {
        FileReadOptions ro;
        ro.use_mmap = mmap;
        auto r = FileReader::open(path, ro);
        ASSERT_TRUE(r.ok()) << r.error().to_string();
        EXPECT_EQ(r->header().data_buffer_alignment, GetParam());
        for (size_t i = 0; i < r->tensor_count(); ++i) {
            EXPECT_EQ(r->entry(i).data_offset % GetParam(), 0U);
            expect_pattern(*r, i, i);
        }
        if (mmap) {
            const auto t = must(r->tensor("a"));
            EXPECT_EQ(reinterpret_cast<uintptr_t>(t.buffers()[0].data()) % static_cast<uintptr_t>(page), 0U);
        }
        EXPECT_EQ(must(r->kv().get_uint64("k")), 7U);
    }
}

INSTANTIATE_TEST_SUITE_P(Alignments, LargeAlignment, ::testing::Values(4096U, 65536U, 2U * 1024U * 1024U));

TEST(FileReaderMapping, PreadPathGivesTheSameBytes) {
    const BuiltFile f = test::small_file();
    TempDir dir;
    const std::string path = dir.write("p.hrry", f.bytes);
    auto m = FileReader::open(path);
    auto p = FileReader::open(path, pread_options());
    ASSERT_TRUE(m.ok() && p.ok());
    EXPECT_TRUE(m->mapped());
    EXPECT_FALSE(p->mapped());
    for (size_t i = 0; i < m->tensor_count(); ++i) {
        const auto tm = must(m->tensor(i));
        const auto tp = must(p->tensor(i));
        ASSERT_EQ(tm.buffers().size(), tp.buffers().size());
        for (size_t b = 0; b < tm.buffers().size(); ++b) {
            EXPECT_TRUE(std::equal(tm.buffers()[b].span().begin(), tm.buffers()[b].span().end(),
                                   tp.buffers()[b].span().begin(), tp.buffers()[b].span().end()));
        }
        EXPECT_EQ(tm.descriptor(), tp.descriptor());
    }
    EXPECT_EQ(m->kv(), p->kv());
}

TEST(FileReaderMapping, AccessHintsSucceed) {
    const BuiltFile f = test::small_file();
    TempDir dir;
    const std::string path = dir.write("h.hrry", f.bytes);
    const std::array<AccessPattern, 5> patterns = {AccessPattern::kNormal, AccessPattern::kSequential,
                                                   AccessPattern::kRandom, AccessPattern::kWillNeed,
                                                   AccessPattern::kDontNeed};
    for (const bool mmap : {true, false}) {
        for (const AccessPattern p : patterns) {
            FileReadOptions o;
            o.use_mmap = mmap;
            o.access = p;
            auto r = FileReader::open(path, o);
            ASSERT_TRUE(r.ok()) << r.error().to_string();
            for (const AccessPattern q : patterns) {
                EXPECT_TRUE(r->advise(q).ok());
                for (size_t i = 0; i < r->tensor_count(); ++i) {
                    EXPECT_TRUE(r->advise(i, q).ok());
                }
            }
            EXPECT_TRUE(Fails(r->advise(17, p), ErrorCode::kInvalidArgument));
            // After MADV_DONTNEED the pages come back from the file.
            expect_pattern(*r, 2, 2);
        }
    }
    const FileReader mem = open_bytes(f.bytes);
    EXPECT_TRUE(mem.advise(AccessPattern::kWillNeed).ok());
    EXPECT_TRUE(mem.advise(0, AccessPattern::kDontNeed).ok());
}

TEST(FileReaderOpen, RejectsWhatIsNotARegularFile) {
    TempDir dir;
    EXPECT_TRUE(Fails(FileReader::open(dir.file("missing.hrry")), ErrorCode::kIoError, {"missing.hrry"}));
    EXPECT_TRUE(Fails(FileReader::open(dir.file("")), ErrorCode::kIoError, {"not a regular file"}));
    const std::string fifo = dir.file("fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    EXPECT_TRUE(Fails(FileReader::open(fifo), ErrorCode::kIoError, {"not a regular file"}));
    const std::string empty = dir.write("empty.hrry", {});
    EXPECT_TRUE(Fails(FileReader::open(empty), ErrorCode::kTruncated));
    EXPECT_TRUE(Fails(FileReader::open(empty, pread_options()), ErrorCode::kTruncated));
}

// ---------------------------------------------------------------------------
// Zero tensors, empty tensors, padding rules
// ---------------------------------------------------------------------------

TEST(FileReaderShapes, ZeroTensorFile) {
    for (const bool with_kv : {false, true}) {
        KvMetadata kv;
        ASSERT_TRUE(kv.set("only", KvValue::boolean(true)).ok());
        const BuiltFile f = build_file({}, with_kv ? &kv : nullptr);
        const FileReader r = open_bytes(f.bytes);
        EXPECT_EQ(r.tensor_count(), 0U);
        EXPECT_TRUE(r.write_order().empty());
        EXPECT_FALSE(r.find("x").has_value());
        EXPECT_TRUE(r.check_all().ok());
        EXPECT_EQ(r.kv().size(), with_kv ? 1U : 0U);
        EXPECT_EQ(f.bytes.size(), with_kv ? 64U + 16U + 8U + 40U : 64U + 8U + 40U);
    }
}

TEST(FileReaderShapes, EmptyTensors) {
    for (const Padding p : {Padding::kSpec, Padding::kReference}) {
        BuildOptions o;
        o.after_data = o.after_head = p;
        const BuiltFile f = build_file({dense("e0", ElementType::kFloat32, {0}), dense("x", ElementType::kInt8, {2}),
                                        dense("e1", ElementType::kFloat64, {3, 0, 2})},
                                       nullptr, o);
        const FileReader r = open_bytes(f.bytes);
        for (const char* name : {"e0", "e1"}) {
            const size_t i = *r.find(name);
            EXPECT_EQ(r.entry(i).data_length, 0U);
            EXPECT_EQ(r.entry(i).data_offset % 4096, 0U);
            auto t = r.tensor(i);
            ASSERT_TRUE(t.ok()) << t.error().to_string();
            ASSERT_EQ(t->buffers().size(), 1U);
            EXPECT_TRUE(t->buffers()[0].empty());
            EXPECT_TRUE(t->view().ok());
        }
        expect_pattern(r, 1, 1);
        EXPECT_TRUE(r.check_all().ok());
    }
}

TEST(FileReaderShapes, BothPaddingRulesReadAlike) {
    const std::vector<TestTensor> ts = {dense("a", ElementType::kFloat32, {3, 3}), dense("b", ElementType::kInt8, {7}),
                                        dense("c", ElementType::kUInt8, {1})};
    BuildOptions spec;
    BuildOptions ref;
    ref.after_data = ref.after_head = Padding::kReference;
    const BuiltFile fs = build_file(ts, nullptr, spec);
    const BuiltFile fr = build_file(ts, nullptr, ref);
    EXPECT_GT(fs.bytes.size(), fr.bytes.size());
    const FileReader rs = open_bytes(fs.bytes);
    const FileReader rr = open_bytes(fr.bytes);
    ASSERT_EQ(rs.tensor_count(), rr.tensor_count());
    for (size_t i = 0; i < rs.tensor_count(); ++i) {
        EXPECT_EQ(rs.entry(i).data_length, rr.entry(i).data_length);
        expect_pattern(rs, i, i);
        expect_pattern(rr, i, i);
    }
}

TEST(FileReaderShapes, FirstDescriptorAfterHeaderPadding) {
    BuildOptions o;
    o.first_descriptor_offset = 128;
    const BuiltFile f = build_file({dense("a", ElementType::kInt8, {2})}, nullptr, o);
    const FileReader r = open_bytes(f.bytes);
    EXPECT_EQ(r.entry(0).descriptor_offset, 128U);
    expect_pattern(r, 0, 0);
}

TEST(FileReaderShapes, ReferenceStyleKvWithoutFlag) {
    KvMetadata kv;
    ASSERT_TRUE(kv.set("s", KvValue::string("v")).ok());
    BuildOptions o;
    o.kv_flag = false;
    const BuiltFile f = build_file({dense("a", ElementType::kInt8, {2})}, &kv, o);
    EXPECT_EQ(f.header.flags & file_flags::kHasKvMetadata, 0U);
    const FileReader r = open_bytes(f.bytes);
    EXPECT_EQ(must(r.kv().get_string("s")), "v");
}

TEST(FileReaderShapes, CrcFlagClearAndZero) {
    BuildOptions o;
    o.crc = false;
    const BuiltFile f = build_file({dense("a", ElementType::kInt8, {2})}, nullptr, o);
    const FileReader r = open_bytes(f.bytes);
    EXPECT_EQ(r.trailer().index_crc32c, 0U);
    expect_pattern(r, 0, 0);
}

// ---------------------------------------------------------------------------
// Composites
// ---------------------------------------------------------------------------

TEST(FileReaderComposite, NestedCompositesBothPaddingRulesAnySortOrder) {
    for (const Padding pad : {Padding::kSpec, Padding::kReference}) {
        for (const bool sorted : {false, true}) {
            BuildOptions o;
            o.after_data = o.after_head = pad;
            o.sort_index = sorted;
            const BuiltFile f = build_file(nested_composites(), nullptr, o);
            const FileReader r = open_bytes(f.bytes);
            ASSERT_TRUE(r.check_all().ok()) << r.check_all().error().to_string();
            const size_t g = *r.find("g");
            const size_t p = *r.find("p");
            // A head has no data; spec style puts data_offset at the end of
            // the descriptor, the reference at the next aligned offset.
            EXPECT_EQ(r.entry(g).data_length, 0U);
            if (pad == Padding::kSpec) {
                EXPECT_EQ(r.entry(g).data_offset, r.entry(g).descriptor_offset + r.entry(g).descriptor_length);
                EXPECT_EQ(r.entry(p).descriptor_offset % 8, 0U);
                EXPECT_LT(r.entry(p).descriptor_offset, 4096U);
            } else {
                EXPECT_EQ(r.entry(g).data_offset % 4096, 0U);
                EXPECT_EQ(r.entry(p).descriptor_offset, r.entry(g).data_offset);
            }
            auto cg = r.composite(g);
            ASSERT_TRUE(cg.ok()) << cg.error().to_string();
            EXPECT_EQ(cg->head, g);
            EXPECT_THAT(cg->members, ::testing::ElementsAre(p, *r.find("g1")));
            auto cp = r.composite(p);
            ASSERT_TRUE(cp.ok()) << cp.error().to_string();
            EXPECT_THAT(cp->members, ::testing::ElementsAre(*r.find("p0"), *r.find("p1")));
            auto ht = r.tensor(g);
            ASSERT_TRUE(ht.ok());
            EXPECT_TRUE(ht->buffers().empty());
            EXPECT_TRUE(Fails(ht->view(), ErrorCode::kUnsupported));
            EXPECT_TRUE(Fails(r.composite(*r.find("plain")), ErrorCode::kInvalidArgument, {"'plain'", "not a composite head"}));
            expect_pattern(r, *r.find("p1"), 3);
        }
    }
}

TEST(FileReaderComposite, TornCompositeIsAnErrorInBothModes) {
    std::vector<TestTensor> ts = nested_composites();
    ts.resize(3);  // g, p, p0: both composites torn
    const BuiltFile f = build_file(ts);
    for (const bool strict : {true, false}) {
        FileReadOptions o;
        o.strict = strict;
        const FileReader r = open_bytes(f.bytes, o);
        EXPECT_TRUE(Fails(r.composite(*r.find("g")), ErrorCode::kInvalidComposite, {"torn", "'g'"}));
        EXPECT_TRUE(Fails(r.composite(*r.find("p")), ErrorCode::kInvalidComposite, {"torn", "'p'"}));
        EXPECT_TRUE(Fails(r.check_all(), ErrorCode::kInvalidComposite));
        // The arrived members are still readable as plain tensors.
        expect_pattern(r, *r.find("p0"), 2);
    }
}

TEST(FileReaderComposite, InvalidPartitionIsRejected) {
    std::vector<TestTensor> ts = nested_composites();
    ts[3].desc.shard->shard_offset = {0, 1};  // p1 overlaps p0
    const BuiltFile f = build_file(ts);
    const FileReader r = open_bytes(f.bytes);
    EXPECT_TRUE(Fails(r.composite(*r.find("p")), ErrorCode::kInvalidComposite, {"'p'"}));
    EXPECT_TRUE(Fails(r.check_all(), ErrorCode::kInvalidComposite));
}

}  // namespace
}  // namespace hurray
