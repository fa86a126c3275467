// SPDX-License-Identifier: Apache-2.0
// SequentialFileReader (file-format.md § Sequential Reader): the reference's
// conformance file through short reads and a pipe, both padding rules
// (SPEC-NOTES 12, 13) with and without tensor_count_hint, composites, empty
// tensors, large alignments, every truncation, the rejections, and random
// files read back exactly.
#include "hurray/io/sequential_file_reader.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "seq_test_support.hpp"
#include "test_paths.hpp"

namespace {

namespace fs = std::filesystem;
using hurray::ElementType;
using hurray::ErrorCode;
using hurray::MemorySource;
using hurray::SequentialReadOptions;
using seqtest::assemble;
using seqtest::Assembled;
using seqtest::FileOptions;
using seqtest::Rule;
using seqtest::TestTensor;

fs::path conformance_dir() { return fs::path(HURRAY_CONFORMANCE_DIR); }

std::vector<uint8_t> read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

size_t whole() { return 4096; }

hurray::Result<seqtest::ReadBack> read_mem(std::span<const uint8_t> bytes, size_t max_chunk = SIZE_MAX,
                                           const SequentialReadOptions& options = {}) {
    MemorySource src(bytes, max_chunk);
    return seqtest::read_all(src, options, whole);
}

/// Reads `bytes` through a real pipe fed by a writer thread.
hurray::Result<seqtest::ReadBack> read_pipe(const std::vector<uint8_t>& bytes, size_t piece,
                                            const SequentialReadOptions& options = {}) {
    int fds[2] = {-1, -1};
    EXPECT_EQ(::pipe(fds), 0);
    std::thread writer([&bytes, piece, w = fds[1]] {
        size_t off = 0;
        while (off < bytes.size()) {
            const ssize_t k = ::write(w, bytes.data() + off, std::min(piece, bytes.size() - off));
            if (k <= 0) {
                break;
            }
            off += static_cast<size_t>(k);
        }
        ::close(w);
    });
    auto r = [&] {
        hurray::FdSource src(fds[0], /*owns=*/true);
        return seqtest::read_all(src, options, [] { return size_t{1000}; });
    }();
    writer.join();
    return r;
}

testing::AssertionResult Fails(const hurray::Result<seqtest::ReadBack>& r, ErrorCode code,
                               uint64_t offset = hurray::Error::kNoOffset) {
    if (r.ok()) {
        return testing::AssertionFailure() << "read succeeded, expected " << hurray::error_code_name(code);
    }
    if (r.error().code() != code) {
        return testing::AssertionFailure() << "expected " << hurray::error_code_name(code) << ", got "
                                           << r.error().to_string();
    }
    if (offset != hurray::Error::kNoOffset && r.error().offset() != offset) {
        return testing::AssertionFailure() << "expected offset " << offset << ", got " << r.error().to_string();
    }
    return testing::AssertionSuccess() << r.error().to_string();
}

/// Checks that what was read is what was written.
void expect_same(const seqtest::ReadBack& got, const std::vector<TestTensor>& want, const Assembled& file,
                 const FileOptions& o) {
    ASSERT_EQ(got.tensors.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
        SCOPED_TRACE(want[i].name);
        EXPECT_EQ(got.tensors[i].meta.position, i);
        EXPECT_EQ(got.tensors[i].meta.descriptor_offset, file.index[i].descriptor_offset);
        EXPECT_EQ(got.tensors[i].meta.descriptor, want[i].descriptor);
        EXPECT_EQ(got.tensors[i].data, want[i].data);
        if (!want[i].data.empty()) {
            ASSERT_FALSE(got.tensors[i].meta.buffer_offsets.empty());
            EXPECT_EQ(got.tensors[i].meta.buffer_offsets.front(), file.index[i].data_offset);
        }
    }
    EXPECT_EQ(got.index, file.index);
    EXPECT_EQ(got.kv, o.with_kv ? o.kv : hurray::KvMetadata{});
}

hurray::KvMetadata sample_kv() {
    hurray::KvMetadata kv;
    EXPECT_TRUE(kv.add("producer", hurray::KvValue::string("seq-test")));
    // A default value (int64 0): GCC 12 -O1 with sanitizers warns falsely
    // (-Wmaybe-uninitialized) on the inlined KvValue::int64 here.
    EXPECT_TRUE(kv.add("n", hurray::KvValue()));
    return kv;
}

// --- The reference's file ----------------------------------------------------

void check_basic(const seqtest::ReadBack& got, uint64_t hint = hurray::kUnknownTensorCount) {
    std::ifstream in(conformance_dir() / "manifest.json");
    const nlohmann::json m = nlohmann::json::parse(in);
    const nlohmann::json* spec = nullptr;
    for (const auto& f : m["files"]) {
        if (f["file"] == "files/basic.hrry") {
            spec = &f;
        }
    }
    ASSERT_NE(spec, nullptr);
    ASSERT_EQ(got.tensors.size(), (*spec)["tensors"].size());
    ASSERT_EQ(got.index.size(), got.tensors.size());
    for (size_t i = 0; i < got.tensors.size(); ++i) {
        const auto& e = (*spec)["tensors"][i];
        const auto& t = got.tensors[i];
        const auto& entry = got.index[i];
        EXPECT_EQ(entry.name, e["name"].get<std::string>());
        EXPECT_EQ(entry.descriptor_offset, t.meta.descriptor_offset);
        EXPECT_EQ(hurray::type_tag(t.meta.descriptor.element_type), e["element_type_tag"].get<int>());
        EXPECT_EQ(hurray::type_name(t.meta.descriptor.element_type), e["element_type"].get<std::string>());
        EXPECT_EQ(t.meta.descriptor.shape, e["shape"].get<hurray::Shape>());
        ASSERT_EQ(t.data.size(), 1U);
        EXPECT_EQ(t.data[0].size(), e["data_bytes"].get<size_t>());
    }
    ASSERT_EQ(got.kv.size(), (*spec)["kv"].size());
    for (const auto& e : (*spec)["kv"]) {
        const std::string key = e["key"];
        if (e["kind"] == "string") {
            auto v = got.kv.get_string(key);
            ASSERT_TRUE(v.ok()) << key;
            EXPECT_EQ(*v, e["value_string"].get<std::string>());
        } else {
            auto v = got.kv.get_int64(key);
            ASSERT_TRUE(v.ok()) << key;
            EXPECT_EQ(*v, e["value_int"].get<int64_t>());
        }
    }
    EXPECT_EQ(got.header.tensor_count_hint, hint);
}

TEST(SequentialFileReader, ConformanceBasicThroughShortReads) {
    const auto bytes = read_file(conformance_dir() / "files/basic.hrry");
    ASSERT_FALSE(bytes.empty());
    for (size_t chunk : {size_t{1}, size_t{7}, size_t{4096}, SIZE_MAX}) {
        SCOPED_TRACE(chunk);
        auto got = read_mem(bytes, chunk);
        ASSERT_TRUE(got.ok()) << got.error().to_string();
        check_basic(*got);
    }
}

TEST(SequentialFileReader, ConformanceBasicThroughAPipe) {
    const auto bytes = read_file(conformance_dir() / "files/basic.hrry");
    for (size_t piece : {size_t{1}, size_t{100}, size_t{65536}}) {
        SCOPED_TRACE(piece);
        auto got = read_pipe(bytes, piece);
        ASSERT_TRUE(got.ok()) << got.error().to_string();
        check_basic(*got);
    }
}

TEST(SequentialFileReader, ConformanceBasicWithTheHintSet) {
    // The reference writes no hint; with one, the reader counts tensors.
    auto bytes = read_file(conformance_dir() / "files/basic.hrry");
    bytes[28] = 2;
    for (size_t i = 29; i < 36; ++i) {
        bytes[i] = 0;
    }
    auto got = read_mem(bytes, 7);
    ASSERT_TRUE(got.ok()) << got.error().to_string();
    check_basic(*got, 2);
}

// --- Both padding rules ---------------------------------------------------------

std::vector<TestTensor> mixed_tensors() {
    std::vector<TestTensor> t;
    t.push_back(seqtest::dense("a", ElementType::kFloat32, {3, 5}, 1));
    t.push_back(seqtest::head("comp", 2));
    t.push_back(seqtest::dense("comp.0", ElementType::kInt8, {7}, 2));
    t.push_back(seqtest::dense("comp.1", ElementType::kInt8, {0, 4}, 3));  // empty
    t.push_back(seqtest::head("comp2", 1));
    t.push_back(seqtest::head("comp2.0", 1));  // nested, head right after head
    t.push_back(seqtest::dense("comp2.0.0", ElementType::kFloat64, {2}, 4));
    auto csr = hurray::make_csr(ElementType::kFloat32, 4, 4, 3);
    EXPECT_TRUE(csr.ok());
    TestTensor c{"csr", std::move(*csr), {}};
    for (const auto& h : c.descriptor.buffers) {
        c.data.push_back(seqtest::fill(static_cast<size_t>(h.byte_size), 9));
    }
    t.push_back(std::move(c));
    t.push_back(seqtest::dense("last-empty", ElementType::kInt8, {0}, 5));
    return t;
}

TEST(SequentialFileReader, EveryPaddingStyleHintAndAlignment) {
    const auto tensors = mixed_tensors();
    for (uint32_t alignment : {4096U, 65536U}) {
        for (Rule after_data : {Rule::kSpec, Rule::kReference}) {
            for (Rule after_head : {Rule::kSpec, Rule::kReference}) {
                for (bool hint : {true, false}) {
                    for (bool with_kv : {true, false}) {
                        SCOPED_TRACE(testing::Message() << "alignment " << alignment << " data "
                                                        << static_cast<int>(after_data) << " head "
                                                        << static_cast<int>(after_head) << " hint " << hint
                                                        << " kv " << with_kv);
                        FileOptions o;
                        o.alignment = alignment;
                        o.after_data = after_data;
                        o.after_head = after_head;
                        o.hint = hint;
                        if (with_kv) {
                            o.with_kv = true;
                            o.kv = sample_kv();
                        }
                        const Assembled file = assemble(tensors, o);
                        for (size_t chunk : {size_t{13}, SIZE_MAX}) {
                            auto got = read_mem(file.bytes, chunk);
                            ASSERT_TRUE(got.ok()) << got.error().to_string();
                            expect_same(*got, tensors, file, o);
                        }
                    }
                }
            }
        }
    }
}

TEST(SequentialFileReader, LargeAlignmentThroughAPipe) {
    const auto tensors = mixed_tensors();
    for (Rule rule : {Rule::kSpec, Rule::kReference}) {
        FileOptions o;
        o.alignment = 65536;
        o.after_data = rule;
        o.after_head = rule;
        o.hint = false;
        o.with_kv = true;
        o.kv = sample_kv();
        const Assembled file = assemble(tensors, o);
        auto got = read_pipe(file.bytes, 5000);
        ASSERT_TRUE(got.ok()) << got.error().to_string();
        expect_same(*got, tensors, file, o);
    }
}

TEST(SequentialFileReader, ZeroTensors) {
    for (bool hint : {true, false}) {
        for (bool with_kv : {true, false}) {
            SCOPED_TRACE(testing::Message() << "hint " << hint << " kv " << with_kv);
            FileOptions o;
            o.hint = hint;
            o.first_descriptor_offset = 128;
            if (with_kv) {
                o.with_kv = true;
                o.kv = hurray::KvMetadata{};  // an empty section: four zero bytes
            }
            const Assembled file = assemble({}, o);
            auto got = read_mem(file.bytes, 3);
            ASSERT_TRUE(got.ok()) << got.error().to_string();
            EXPECT_TRUE(got->tensors.empty());
            EXPECT_TRUE(got->index.empty());
        }
    }
}

TEST(SequentialFileReader, OnlyEmptyTensorsAndHeads) {
    std::vector<TestTensor> tensors;
    tensors.push_back(seqtest::dense("e0", ElementType::kFloat32, {0}));
    tensors.push_back(seqtest::dense("e1", ElementType::kInt8, {5, 0, 2}));
    tensors.push_back(seqtest::head("h", 1));
    tensors.push_back(seqtest::dense("e2", ElementType::kInt8, {0}));
    for (Rule rule : {Rule::kSpec, Rule::kReference}) {
        for (bool hint : {true, false}) {
            FileOptions o;
            o.after_data = rule;
            o.after_head = rule;
            o.hint = hint;
            o.with_kv = true;
            o.kv = hurray::KvMetadata{};
            const Assembled file = assemble(tensors, o);
            auto got = read_mem(file.bytes, 1);
            ASSERT_TRUE(got.ok()) << got.error().to_string();
            expect_same(*got, tensors, file, o);
        }
    }
}

// --- The data API ---------------------------------------------------------------

TEST(SequentialFileReader, ReadDataStopsAtEachBufferAndSkipsTheRest) {
    auto tensors = mixed_tensors();
    FileOptions o;
    o.hint = false;
    const Assembled file = assemble(tensors, o);
    MemorySource src(file.bytes, 5);
    auto r = hurray::SequentialFileReader::open(src);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_EQ(r->header().data_buffer_alignment, 4096U);
    // No tensor yet: no data.
    std::vector<uint8_t> buf(1000);
    auto n = r->read_data(buf);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, 0U);
    const hurray::SequentialTensor* csr = nullptr;
    for (size_t i = 0; i < 8; ++i) {
        auto t = r->next();  // data left unread is skipped
        ASSERT_TRUE(t.ok()) << t.error().to_string();
        ASSERT_NE(*t, nullptr);
        csr = *t;
    }
    ASSERT_EQ(csr->descriptor.buffers.size(), 3U);
    EXPECT_EQ(r->data_position(), (std::pair<uint32_t, uint64_t>{0, 0}));
    // A large output still stops at the end of buffer 0.
    n = r->read_data(buf);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, tensors[7].data[0].size());
    EXPECT_TRUE(std::equal(tensors[7].data[0].begin(), tensors[7].data[0].end(), buf.begin()));
    EXPECT_EQ(r->data_position(), (std::pair<uint32_t, uint64_t>{1, 0}));
    n = r->read_data(std::span<uint8_t>(buf).first(3));
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, 3U);
    EXPECT_EQ(r->data_position(), (std::pair<uint32_t, uint64_t>{1, 3}));
    ASSERT_TRUE(r->skip_data().ok());
    n = r->read_data(buf);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, 0U);
    EXPECT_TRUE(r->skip_data().ok());
    auto t = r->next();
    ASSERT_TRUE(t.ok());
    ASSERT_NE(*t, nullptr);
    EXPECT_EQ((*t)->position, 8U);
    EXPECT_EQ((*t)->descriptor.buffers.size(), 1U);  // empty: position moves past it
    EXPECT_EQ(r->data_position().first, 1U);
    t = r->next();
    ASSERT_TRUE(t.ok()) << t.error().to_string();
    EXPECT_EQ(*t, nullptr);
    EXPECT_EQ(r->index().size(), tensors.size());
    EXPECT_EQ(r->trailer().index_offset, file.index_offset);
    // After the end: nullptr again, no data.
    t = r->next();
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(*t, nullptr);
    n = r->read_data(buf);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, 0U);
}

TEST(SequentialFileReader, EmptyOutputSpanIsAnArgumentError) {
    const Assembled file = assemble({seqtest::dense("a", ElementType::kInt8, {4})});
    MemorySource src(file.bytes);
    auto r = hurray::SequentialFileReader::open(src);
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r->next().ok());
    auto n = r->read_data({});
    ASSERT_FALSE(n.ok());
    EXPECT_EQ(n.error().code(), ErrorCode::kInvalidArgument);
    std::vector<uint8_t> buf(4);
    n = r->read_data(buf);  // not poisoned
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, 4U);
}

TEST(SequentialFileReader, ErrorsStick) {
    Assembled file = assemble({seqtest::dense("a", ElementType::kInt8, {4}), seqtest::dense("b", ElementType::kInt8, {4})});
    file.bytes[file.index[1].data_offset - 1] = 1;  // padding before b's data
    MemorySource src(file.bytes);
    auto r = hurray::SequentialFileReader::open(src);
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r->next().ok());
    ASSERT_TRUE(r->next().ok());
    std::vector<uint8_t> buf(4);
    auto n = r->read_data(buf);
    ASSERT_FALSE(n.ok());
    EXPECT_EQ(n.error().code(), ErrorCode::kReservedBytesNonZero);
    EXPECT_EQ(n.error().offset(), file.index[1].data_offset - 1);
    auto t = r->next();
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.error().code(), ErrorCode::kReservedBytesNonZero);
    EXPECT_FALSE(r->skip_data().ok());
}

// --- Rejections -----------------------------------------------------------------

TEST(SequentialFileReader, EveryTruncationIsACleanError) {
    std::vector<std::vector<uint8_t>> files;
    files.push_back(read_file(conformance_dir() / "files/basic.hrry"));
    FileOptions o;
    o.after_head = Rule::kReference;
    o.after_data = Rule::kReference;  // keeps the files near 8 KiB
    o.with_kv = true;
    o.kv = sample_kv();
    std::vector<TestTensor> small;
    small.push_back(seqtest::dense("x", ElementType::kInt8, {9}));
    small.push_back(seqtest::head("h", 1));
    small.push_back(seqtest::dense("y", ElementType::kInt8, {0}));
    const Assembled hinted = assemble(small, o);
    files.push_back(hinted.bytes);
    o.hint = false;
    files.push_back(assemble(small, o).bytes);
    for (size_t f = 0; f < files.size(); ++f) {
        const auto& bytes = files[f];
        // Where the tail starts: the smallest section offset, from the trailer.
        hurray::FileTrailer tr;
        {
            auto t = hurray::decode_file_trailer(std::span<const uint8_t>(bytes).last(40), bytes.size() - 40);
            ASSERT_TRUE(t.ok());
            tr = *t;
        }
        const uint64_t tail = tr.kv_offset != 0 ? std::min(tr.kv_offset, tr.index_offset) : tr.index_offset;
        for (size_t len = 0; len < bytes.size(); ++len) {
            auto got = read_mem(std::span<const uint8_t>(bytes).first(len), len % 7 == 0 ? 61 : SIZE_MAX);
            ASSERT_FALSE(got.ok()) << "file " << f << " prefix " << len;
            if (len < tail) {
                // Inside the header or the tensor region: always truncation,
                // at or before the end of the input.
                ASSERT_EQ(got.error().code(), ErrorCode::kTruncated)
                    << "file " << f << " prefix " << len << ": " << got.error().to_string();
                ASSERT_TRUE(got.error().has_offset());
                ASSERT_LE(got.error().offset(), len);
            }
        }
    }
}

TEST(SequentialFileReader, BadHeaders) {
    const Assembled file = assemble({seqtest::dense("a", ElementType::kInt8, {4})});
    auto bad = file.bytes;
    bad[0] = 'X';
    EXPECT_TRUE(Fails(read_mem(bad), ErrorCode::kInvalidMagic, 0));
    bad = file.bytes;
    bad[8] = 2;
    EXPECT_TRUE(Fails(read_mem(bad), ErrorCode::kUnsupportedVersion, 8));
    bad = file.bytes;
    bad[13] = 0x80;  // reserved flag bit
    EXPECT_TRUE(Fails(read_mem(bad), ErrorCode::kReservedFlagBits, 12));
    bad = file.bytes;
    bad[16] = 1;  // alignment 4097
    EXPECT_TRUE(Fails(read_mem(bad), ErrorCode::kInvalidFile, 16));
    bad = file.bytes;
    bad[40] = 1;
    EXPECT_TRUE(Fails(read_mem(bad), ErrorCode::kReservedBytesNonZero));
    EXPECT_TRUE(Fails(read_mem(std::vector<uint8_t>(file.bytes.begin(), file.bytes.begin() + 40)),
                      ErrorCode::kTruncated));
}

TEST(SequentialFileReader, NonZeroPaddingIsRejectedInStrictModeOnly) {
    FileOptions o;
    o.first_descriptor_offset = 128;
    o.after_data = Rule::kReference;
    std::vector<TestTensor> tensors;
    tensors.push_back(seqtest::dense("a", ElementType::kInt8, {3}));
    auto csr = hurray::make_csr(ElementType::kFloat32, 4, 4, 3);
    ASSERT_TRUE(csr.ok());
    TestTensor c{"csr", std::move(*csr), {}};
    for (const auto& h : c.descriptor.buffers) {
        c.data.push_back(seqtest::fill(static_cast<size_t>(h.byte_size), 3));
    }
    tensors.push_back(std::move(c));
    const Assembled file = assemble(tensors, o);
    SequentialReadOptions permissive;
    permissive.strict = false;
    const uint64_t csr_b0_end = file.index[1].data_offset + tensors[1].data[0].size();
    const uint64_t a_end = file.index[0].data_offset + 3;
    const std::vector<std::pair<uint64_t, const char*>> spots = {
        {100, "before the first descriptor"},
        {file.descriptor_end[0] + 1, "between descriptor and data"},
        {a_end + 2, "after the last buffer, before 8 bytes"},
        {csr_b0_end + 5, "between buffers"},
    };
    for (const auto& [at, what] : spots) {
        SCOPED_TRACE(what);
        auto bad = file.bytes;
        ASSERT_EQ(bad[at], 0);
        bad[at] = 0x5A;
        EXPECT_TRUE(Fails(read_mem(bad, 100), ErrorCode::kReservedBytesNonZero, at));
        auto got = read_mem(bad, 100, permissive);
        EXPECT_TRUE(got.ok()) << got.error().to_string();
    }
}

TEST(SequentialFileReader, NonZeroBytesInAlignmentPaddingAreNotADescriptor) {
    // Spec rule: zeros from the 8-byte boundary to the alignment. A stray
    // byte there hides the next descriptor.
    std::vector<TestTensor> tensors = {seqtest::dense("a", ElementType::kInt8, {3}),
                                       seqtest::dense("b", ElementType::kInt8, {3})};
    for (bool hint : {true, false}) {
        FileOptions o;
        o.hint = hint;
        const Assembled file = assemble(tensors, o);
        auto bad = file.bytes;
        bad[file.index[0].data_offset + 3 + 5 + 100] = 1;
        auto got = read_mem(bad);
        ASSERT_FALSE(got.ok());
        EXPECT_EQ(got.error().code(), hint ? ErrorCode::kInvalidMagic : ErrorCode::kInvalidFile)
            << got.error().to_string();
    }
}

TEST(SequentialFileReader, DescriptorLongerThanTheLimit) {
    const Assembled file = assemble({seqtest::dense("a", ElementType::kInt8, {3})});
    SequentialReadOptions o;
    o.max_descriptor_length = 20;
    EXPECT_TRUE(Fails(read_mem(file.bytes, SIZE_MAX, o), ErrorCode::kInvalidDescriptorLength, 64 + 6));
    // A descriptor_length field beyond the input: bounded before allocating.
    auto bad = file.bytes;
    bad[64 + 9] = 0x7F;
    o.max_descriptor_length = UINT32_MAX;
    EXPECT_TRUE(Fails(read_mem(bad, SIZE_MAX, o), ErrorCode::kTruncated));
}

TEST(SequentialFileReader, DescriptorErrorsNameTheTensorAndOffset) {
    const Assembled file = assemble({seqtest::dense("a", ElementType::kInt8, {3}), seqtest::dense("b", ElementType::kInt8, {3})});
    auto bad = file.bytes;
    bad[file.index[1].descriptor_offset + 4] = 9;  // version_major
    auto got = read_mem(bad);
    ASSERT_TRUE(Fails(got, ErrorCode::kUnsupportedVersion, file.index[1].descriptor_offset + 4));
    EXPECT_NE(got.error().message().find("tensor #1"), std::string::npos) << got.error().message();
}

TEST(SequentialFileReader, TailLongerThanTheLimit) {
    FileOptions fo;
    fo.with_kv = true;
    fo.kv = sample_kv();
    const Assembled file = assemble({seqtest::dense("a", ElementType::kInt8, {3})}, fo);
    for (bool hint : {true, false}) {
        auto bytes = file.bytes;
        if (!hint) {
            std::fill(bytes.begin() + 28, bytes.begin() + 36, 0xFF);
        }
        // The tail starts at the 8-byte boundary after the data; the
        // alignment padding of the spec rule is part of it.
        const uint64_t tail = file.index[0].data_offset + 8;
        SequentialReadOptions o;
        o.max_tail_length = 50;
        EXPECT_TRUE(Fails(read_mem(bytes, 7, o), ErrorCode::kInvalidFile, tail));
        o.max_tail_length = bytes.size() - tail;  // exactly enough
        EXPECT_TRUE(read_mem(bytes, 7, o).ok());
        o.max_tail_length = bytes.size() - tail - 1;
        EXPECT_TRUE(Fails(read_mem(bytes, 7, o), ErrorCode::kInvalidFile, tail));
    }
}

TEST(SequentialFileReader, IndexDisagreeingWithTheTensors) {
    const std::vector<TestTensor> tensors = {seqtest::dense("a", ElementType::kInt8, {3}),
                                             seqtest::head("h", 1),
                                             seqtest::dense("b", ElementType::kFloat32, {2})};
    using Edit = std::function<void(std::vector<hurray::IndexEntry>&)>;
    const std::vector<std::pair<const char*, Edit>> edits = {
        {"data_offset", [](auto& e) { e[0].data_offset += 8; }},
        {"data_length", [](auto& e) { e[2].data_length += 1; }},
        {"descriptor_length", [](auto& e) { e[2].descriptor_length -= 1; }},
        {"descriptor_offset", [](auto& e) { e[1].descriptor_offset += 8; }},
        {"head data_length", [](auto& e) { e[1].data_length = 4; }},
        {"missing entry", [](auto& e) { e.pop_back(); }},
        {"same tensor twice", [](auto& e) { e[1].descriptor_offset = e[0].descriptor_offset; }},
    };
    for (const auto& [what, edit] : edits) {
        for (bool hint : {true, false}) {
            SCOPED_TRACE(testing::Message() << what << " hint " << hint);
            FileOptions o;
            o.hint = hint;
            o.edit_index = edit;
            const Assembled file = assemble(tensors, o);
            EXPECT_TRUE(Fails(read_mem(file.bytes), ErrorCode::kInvalidFile));
        }
    }
    // An extra entry: one more than the tensors met.
    FileOptions o;
    o.edit_index = [](auto& e) {
        e.push_back(e[0]);
        e.back().name = "zz";
    };
    EXPECT_TRUE(Fails(read_mem(assemble(tensors, o).bytes), ErrorCode::kInvalidFile));
    // Duplicate names come from check_index_names.
    o.edit_index = [](auto& e) { e[1].name = e[0].name; };
    EXPECT_TRUE(Fails(read_mem(assemble(tensors, o).bytes), ErrorCode::kDuplicateName));
}

TEST(SequentialFileReader, ChecksumMismatch) {
    FileOptions o;
    const Assembled file = assemble({seqtest::dense("a", ElementType::kInt8, {3})}, o);
    auto bad = file.bytes;
    bad[file.trailer_offset + 28] ^= 1;
    EXPECT_TRUE(Fails(read_mem(bad), ErrorCode::kChecksumMismatch, file.trailer_offset + 28));
    bad = file.bytes;
    bad[file.index_offset + 10] ^= 0x20;  // a byte of the name
    EXPECT_TRUE(Fails(read_mem(bad), ErrorCode::kChecksumMismatch, file.trailer_offset + 28));
    // Flag clear: the stored value must be 0 (strict), permissive ignores it.
    o.crc = false;
    const Assembled plain = assemble({seqtest::dense("a", ElementType::kInt8, {3})}, o);
    EXPECT_TRUE(read_mem(plain.bytes).ok());
    bad = plain.bytes;
    bad[plain.trailer_offset + 28] = 7;
    EXPECT_TRUE(Fails(read_mem(bad), ErrorCode::kInvalidFile, plain.trailer_offset + 28));
    SequentialReadOptions permissive;
    permissive.strict = false;
    EXPECT_TRUE(read_mem(bad, SIZE_MAX, permissive).ok());
}

TEST(SequentialFileReader, TrailerAndSections) {
    FileOptions o;
    o.with_kv = true;
    o.kv = sample_kv();
    const Assembled file = assemble({seqtest::dense("a", ElementType::kInt8, {3})}, o);
    auto bad = file.bytes;
    bad.back() = 'Z';
    EXPECT_TRUE(Fails(read_mem(bad), ErrorCode::kInvalidMagic, file.trailer_offset + 36));
    // The KV flag without a section (strict), and the reference's habit of a
    // section without the flag (accepted).
    o.kv_flag = false;
    EXPECT_TRUE(read_mem(assemble({seqtest::dense("a", ElementType::kInt8, {3})}, o).bytes).ok());
    FileOptions none;
    auto flagged = assemble({seqtest::dense("a", ElementType::kInt8, {3})}, none).bytes;
    flagged[12] |= 1;
    EXPECT_TRUE(Fails(read_mem(flagged), ErrorCode::kInvalidFile, 12));
    SequentialReadOptions permissive;
    permissive.strict = false;
    EXPECT_TRUE(read_mem(flagged, SIZE_MAX, permissive).ok());
    // index_offset pointing into the tensor region.
    bad = file.bytes;
    bad[file.trailer_offset] = 64;
    for (size_t i = 1; i < 8; ++i) {
        bad[file.trailer_offset + i] = 0;
    }
    EXPECT_TRUE(Fails(read_mem(bad), ErrorCode::kInvalidFile, file.trailer_offset));
    // A non-zero byte between the KV section and the index.
    bad = file.bytes;
    const auto kv_len = static_cast<size_t>(file.index_offset - file.kv_offset);
    auto kv = hurray::encode_kv_section(o.kv);
    ASSERT_TRUE(kv.ok());
    if (kv->size() < kv_len) {
        bad[file.kv_offset + kv->size()] = 1;
        EXPECT_TRUE(Fails(read_mem(bad), ErrorCode::kReservedBytesNonZero, file.kv_offset + kv->size()));
    }
    // A KV section that does not decode.
    bad = file.bytes;
    bad[file.kv_offset] = 9;  // entry count
    EXPECT_FALSE(read_mem(bad).ok());
}

TEST(SequentialFileReader, TensorCountHintMismatch) {
    const std::vector<TestTensor> tensors = {seqtest::dense("a", ElementType::kInt8, {3}),
                                             seqtest::dense("b", ElementType::kInt8, {3})};
    const Assembled file = assemble(tensors);
    for (uint8_t hint : {uint8_t{1}, uint8_t{3}}) {
        auto bad = file.bytes;
        bad[28] = hint;
        auto got = read_mem(bad);
        ASSERT_FALSE(got.ok()) << int{hint};
        EXPECT_EQ(got.error().code(), hint == 1 ? ErrorCode::kInvalidFile : ErrorCode::kInvalidMagic)
            << got.error().to_string();
    }
}

TEST(SequentialFileReader, TornComposite) {
    std::vector<TestTensor> tensors = {seqtest::head("h", 2), seqtest::dense("m0", ElementType::kInt8, {3})};
    for (bool hint : {true, false}) {
        FileOptions o;
        o.hint = hint;
        const Assembled file = assemble(tensors, o);
        EXPECT_TRUE(Fails(read_mem(file.bytes), ErrorCode::kInvalidComposite));
        SequentialReadOptions permissive;
        permissive.strict = false;
        auto got = read_mem(file.bytes, SIZE_MAX, permissive);
        EXPECT_TRUE(got.ok()) << got.error().to_string();
    }
}

// Honest for the header, then claims more bytes than it was given room for.
class LyingSource final : public hurray::ByteSource {
public:
    explicit LyingSource(std::span<const uint8_t> b) : inner_(b) {}
    hurray::Result<size_t> read_some(std::span<uint8_t> out) override {
        if (inner_.position() >= 64) {
            return out.size() + 1;
        }
        return inner_.read_some(out.first(std::min<size_t>(out.size(), 64 - inner_.position())));
    }

private:
    MemorySource inner_;
};

TEST(SequentialFileReader, FaultySourceIsAnIoError) {
    const Assembled file = assemble({seqtest::dense("a", ElementType::kInt8, {3})});
    for (bool hint : {true, false}) {
        auto bytes = file.bytes;
        if (!hint) {
            std::fill(bytes.begin() + 28, bytes.begin() + 36, 0xFF);
        }
        LyingSource src(bytes);
        auto got = seqtest::read_all(src, {}, whole);
        ASSERT_FALSE(got.ok());
        EXPECT_EQ(got.error().code(), ErrorCode::kIoError) << got.error().to_string();
    }
}

// --- Property: random files read back exactly -----------------------------------------

TEST(SequentialFileReader, RandomFilesReadBackExactly) {
    std::mt19937_64 rng(20240531);
    auto pick = [&](uint64_t n) { return static_cast<uint64_t>(rng() % n); };
    const ElementType types[] = {ElementType::kInt8, ElementType::kFloat32, ElementType::kFloat64,
                                 ElementType::kBool};
    for (int iter = 0; iter < 60; ++iter) {
        SCOPED_TRACE(iter);
        std::vector<TestTensor> tensors;
        const uint64_t count = pick(7);
        uint32_t owed = 0;  // members still owed to open composites
        for (uint64_t i = 0; i < count || owed > 0; ++i) {
            const std::string name = std::string("t").append(std::to_string(i));
            if (owed > 0) {
                --owed;
            }
            if (pick(5) == 0 && i < 12) {
                const auto m = static_cast<uint32_t>(1 + pick(2));
                tensors.push_back(seqtest::head(name, m));
                owed += m;
                continue;
            }
            if (pick(6) == 0) {
                auto csr = hurray::make_csr(ElementType::kFloat32, 1 + pick(20), 1 + pick(20), pick(5));
                ASSERT_TRUE(csr.ok());
                TestTensor c{name, std::move(*csr), {}};
                for (const auto& h : c.descriptor.buffers) {
                    c.data.push_back(seqtest::fill(static_cast<size_t>(h.byte_size), static_cast<uint32_t>(rng())));
                }
                tensors.push_back(std::move(c));
                continue;
            }
            hurray::Shape shape;
            const uint64_t rank = pick(4);
            for (uint64_t d = 0; d < rank; ++d) {
                shape.push_back(pick(10) == 0 ? 0 : 1 + pick(40));
            }
            tensors.push_back(seqtest::dense(name, types[pick(4)], shape, static_cast<uint32_t>(rng())));
        }
        FileOptions o;
        o.alignment = std::array<uint32_t, 3>{4096, 8192, 65536}[pick(3)];
        o.first_descriptor_offset = 64 + 8 * pick(4);
        o.hint = pick(2) == 0;
        o.after_data = pick(2) == 0 ? Rule::kSpec : Rule::kReference;
        o.after_head = pick(2) == 0 ? Rule::kSpec : Rule::kReference;
        o.crc = pick(4) != 0;
        if (pick(2) == 0) {
            o.with_kv = true;
            o.kv = sample_kv();
        }
        const Assembled file = assemble(tensors, o);
        const size_t max_chunk = pick(3) == 0 ? 1 + pick(16) : 1 + pick(200000);
        MemorySource src(file.bytes, max_chunk);
        auto got = seqtest::read_all(src, {}, [&] { return static_cast<size_t>(1 + pick(pick(2) == 0 ? 8 : 5000)); });
        ASSERT_TRUE(got.ok()) << got.error().to_string();
        expect_same(*got, tensors, file, o);
        EXPECT_EQ(src.position(), file.bytes.size());
    }
}

TEST(SequentialFileReader, RandomSkipsAndPartialReads) {
    std::mt19937_64 rng(7);
    const auto tensors = mixed_tensors();
    for (int iter = 0; iter < 20; ++iter) {
        FileOptions o;
        o.hint = (iter % 2) == 0;
        o.after_data = (iter % 3) == 0 ? Rule::kReference : Rule::kSpec;
        o.after_head = (iter % 5) == 0 ? Rule::kReference : Rule::kSpec;
        const Assembled file = assemble(tensors, o);
        MemorySource src(file.bytes, 1 + rng() % 3000);
        auto r = hurray::SequentialFileReader::open(src);
        ASSERT_TRUE(r.ok());
        size_t i = 0;
        while (true) {
            auto t = r->next();
            ASSERT_TRUE(t.ok()) << t.error().to_string();
            if (*t == nullptr) {
                break;
            }
            // Read a random prefix of the data, check it, leave the rest.
            std::vector<uint8_t> buf(1 + rng() % 40);
            for (uint64_t k = rng() % 4; k > 0; --k) {
                const auto [b, off] = r->data_position();
                auto n = r->read_data(buf);
                ASSERT_TRUE(n.ok());
                if (*n == 0) {
                    break;
                }
                EXPECT_TRUE(std::equal(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(*n),
                                       tensors[i].data[b].begin() + static_cast<std::ptrdiff_t>(off)));
            }
            if (rng() % 2 == 0) {
                ASSERT_TRUE(r->skip_data().ok());
            }
            ++i;
        }
        EXPECT_EQ(i, tensors.size());
        EXPECT_EQ(r->index(), file.index);
    }
}

}  // namespace
