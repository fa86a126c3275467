// SPDX-License-Identifier: Apache-2.0
// FileWriter (file_writer.hpp): a hand-checked golden file, writing through
// a pipe, chunked writing equal to whole writing, every error (and whether
// the writer stays usable after it), composite heads without padding,
// alignments, empty tensors, an empty file, the sorted index, atomic saves.
//
// The layout checker below re-derives every offset from the spec's rules
// (file-format.md § Tensor Region, SPEC-NOTES 12, 13, 16) and reads the
// index with the index codec; it never asks the writer where things are.
#include "hurray/io/descriptor_table.hpp"
#include "hurray/io/file_writer.hpp"

#include <gtest/gtest.h>

// GCC 12 at -O1 with sanitizers reports a false -Wmaybe-uninitialized inside
// std::variant's move when KvValue's factories are inlined here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "hurray/core/builder.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/io/crc32c.hpp"
#include "hurray/io/index_codec.hpp"
#include "io_test_util.hpp"
#include "test_paths.hpp"

namespace hurray {
namespace {

using hurray::test::all_zero;
using hurray::test::Bytes;
using hurray::test::le;
using hurray::test::pattern;
using hurray::test::read_all;
using hurray::test::TempDir;
using hurray::test::write_all_file;
using E = ErrorCode;
using Spans = std::vector<std::span<const uint8_t>>;

TensorDescriptor must(Result<TensorDescriptor> r) {
    if (!r) {
        ADD_FAILURE() << r.error().to_string();
        return {};
    }
    return std::move(r).value();
}

Bytes must_encode(const TensorDescriptor& d) {
    auto r = encode(d);
    if (!r) {
        ADD_FAILURE() << r.error().to_string();
        return {};
    }
    return *r;
}

#define ASSERT_OK(expr)                                                  \
    do {                                                                 \
        const auto& hurray_status_ = (expr);                             \
        ASSERT_TRUE(hurray_status_.ok()) << hurray_status_.error().to_string(); \
    } while (0)

/// A tensor to write: name, descriptor, one byte vector per buffer.
struct Tensor {
    std::string name;
    TensorDescriptor desc;
    std::vector<Bytes> data;

    [[nodiscard]] Spans spans() const { return Spans(data.begin(), data.end()); }
};

Tensor dense(std::string name, ElementType t, Shape shape, uint32_t seed) {
    Tensor x{std::move(name), must(make_dense(t, std::move(shape))), {}};
    for (const auto& b : x.desc.buffers) {
        x.data.push_back(pattern(b.byte_size, seed++));
    }
    return x;
}

Tensor with_desc(std::string name, TensorDescriptor d, uint32_t seed) {
    Tensor x{std::move(name), std::move(d), {}};
    for (const auto& b : x.desc.buffers) {
        x.data.push_back(pattern(b.byte_size, seed++));
    }
    return x;
}

uint64_t up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/// Checks a finished file against the spec's layout rules and the tensors
/// that were written (in write order); returns the decoded index.
std::vector<IndexEntry> check_layout(const Bytes& f, const std::vector<Tensor>& tensors,
                                     const FileWriterOptions& o, const KvMetadata* kv = nullptr) {
    std::vector<IndexEntry> none;
    auto h = decode_file_header(f);
    if (!h) {
        ADD_FAILURE() << h.error().to_string();
        return none;
    }
    EXPECT_EQ(h->data_buffer_alignment, o.data_buffer_alignment);
    EXPECT_EQ(h->first_descriptor_offset, 64U);
    EXPECT_EQ(h->tensor_count_hint, o.tensor_count_hint);
    EXPECT_NE(h->flags & file_flags::kHasIndexCrc32c, 0U);
    EXPECT_EQ((h->flags & file_flags::kSortedIndex) != 0, o.sorted_index);
    if (f.size() < 104) {
        ADD_FAILURE() << "file too short: " << f.size();
        return none;
    }
    auto t = decode_file_trailer(std::span<const uint8_t>(f).last(40), f.size() - 40);
    if (!t) {
        ADD_FAILURE() << t.error().to_string();
        return none;
    }
    EXPECT_EQ(t->index_offset + t->index_length, f.size() - 40) << "the trailer follows the index";
    const auto index_bytes = std::span<const uint8_t>(f).subspan(t->index_offset, t->index_length);
    EXPECT_EQ(t->index_crc32c, crc32c(index_bytes));
    auto idx = decode_index(index_bytes, t->index_offset);
    if (!idx) {
        ADD_FAILURE() << idx.error().to_string();
        return none;
    }
    EXPECT_EQ(idx->size(), tensors.size());
    std::map<std::string, IndexEntry> by_name;
    for (const auto& e : *idx) {
        by_name[std::string(e.name)] = e;
    }
    if (o.sorted_index) {
        const auto byte_less = [](std::string_view x, std::string_view y) {
            return std::lexicographical_compare(x.begin(), x.end(), y.begin(), y.end(), [](char c, char d) {
                return static_cast<unsigned char>(c) < static_cast<unsigned char>(d);
            });
        };
        for (size_t i = 1; i < idx->size(); ++i) {
            EXPECT_TRUE(byte_less((*idx)[i - 1].name, (*idx)[i].name)) << "index not sorted at " << i;
        }
    } else {
        for (size_t i = 0; i < idx->size() && i < tensors.size(); ++i) {
            EXPECT_EQ((*idx)[i].name, tensors[i].name) << "index in write order";
        }
    }
    const uint64_t a = o.data_buffer_alignment;
    uint64_t pos = 64;
    for (const Tensor& x : tensors) {
        auto it = by_name.find(x.name);
        if (it == by_name.end()) {
            ADD_FAILURE() << "no index entry for " << x.name;
            return *idx;
        }
        const IndexEntry& e = it->second;
        const Bytes desc = must_encode(x.desc);
        EXPECT_EQ(e.descriptor_offset, pos) << x.name;
        EXPECT_EQ(e.descriptor_length, desc.size()) << x.name;
        EXPECT_EQ(e.flags, 0U);
        EXPECT_TRUE(std::equal(desc.begin(), desc.end(), f.begin() + static_cast<ptrdiff_t>(pos))) << x.name;
        const uint64_t desc_end = pos + desc.size();
        if (x.desc.buffers.empty()) {
            EXPECT_EQ(e.data_offset, desc_end) << x.name;
            EXPECT_EQ(e.data_length, 0U) << x.name;
            pos = up(desc_end, 8);
            EXPECT_TRUE(all_zero(f, desc_end, pos));
            continue;
        }
        uint64_t cur = up(desc_end, a);
        EXPECT_TRUE(all_zero(f, desc_end, cur)) << x.name;
        EXPECT_EQ(e.data_offset, cur) << x.name;
        EXPECT_EQ(e.data_offset % a, 0U);
        for (size_t i = 0; i < x.data.size(); ++i) {
            const uint64_t start = up(cur, a);
            EXPECT_TRUE(all_zero(f, cur, start)) << x.name << " buffer " << i;
            EXPECT_TRUE(std::equal(x.data[i].begin(), x.data[i].end(), f.begin() + static_cast<ptrdiff_t>(start)))
                << x.name << " buffer " << i;
            cur = start + x.data[i].size();
        }
        EXPECT_EQ(e.data_length, cur - e.data_offset) << x.name;
        const uint64_t next = up(up(cur, a), 8);
        EXPECT_TRUE(all_zero(f, cur, next)) << x.name << " trailing padding";
        pos = next;
    }
    if (t->kv_offset != 0) {
        EXPECT_EQ(t->kv_offset, pos);
        auto back = decode_kv_section(std::span<const uint8_t>(f).subspan(t->kv_offset, t->kv_length), t->kv_offset);
        EXPECT_TRUE(back) << back.error().to_string();
        if (back) {
            back->erase(kDescriptorTableKey);  // the writer's table (descriptor_table_test.cpp)
        }
        if (kv != nullptr && back) {
            EXPECT_EQ(*back, *kv);
        }
        pos = up(t->kv_offset + t->kv_length, 8);
        EXPECT_TRUE(all_zero(f, t->kv_offset + t->kv_length, pos));
    } else {
        EXPECT_EQ(t->kv_length, 0U);
        EXPECT_TRUE(kv == nullptr || kv->empty());
    }
    EXPECT_EQ(t->index_offset, pos);
    return *idx;
}

Bytes write_memory(const std::vector<Tensor>& tensors, const FileWriterOptions& o = {},
                   const KvMetadata* kv = nullptr) {
    MemorySink sink;
    auto w = FileWriter::create(sink, o);
    if (!w) {
        ADD_FAILURE() << w.error().to_string();
        return {};
    }
    if (kv != nullptr) {
        w->kv() = *kv;
    }
    for (const Tensor& x : tensors) {
        const Spans s = x.spans();
        auto st = w->add_tensor(x.name, x.desc, s);
        EXPECT_TRUE(st) << st.error().to_string();
    }
    auto st = w->finish();
    EXPECT_TRUE(st) << st.error().to_string();
    EXPECT_EQ(w->offset(), sink.bytes().size());
    return std::move(sink).take();
}

// ---------------------------------------------------------------------------
// (1) Golden file, field by field

Bytes f32_bytes(std::initializer_list<float> v) {
    Bytes b;
    for (float x : v) {
        uint32_t u = 0;
        std::memcpy(&u, &x, 4);
        for (int i = 0; i < 4; ++i) {
            b.push_back(static_cast<uint8_t>(u >> (8 * i)));
        }
    }
    return b;
}

void append_le(Bytes& b, uint64_t v, int width) {
    for (int i = 0; i < width; ++i) {
        b.push_back(static_cast<uint8_t>(v >> (8 * i)));
    }
}

void append_str(Bytes& b, const std::string& s) { b.insert(b.end(), s.begin(), s.end()); }

TEST(FileWriterGolden, TwoTensorsAndKvByHand) {
    const Tensor w{"weights", must(make_dense(ElementType::kFloat32, {2, 2})), {f32_bytes({1.0F, 2.0F, -3.5F, 0.25F})}};
    const Tensor b{"bias", must(make_dense(ElementType::kInt8, {3})), {Bytes{0x01, 0xFE, 0x7F}}};
    FileWriterOptions o;
    o.tensor_count_hint = 2;
    o.descriptor_table = false;  // the reference's layout, byte for byte (the table adds a KV entry)
    MemorySink sink;
    auto fw = FileWriter::create(sink, o);
    ASSERT_TRUE(fw);
    EXPECT_EQ(fw->offset(), 64U);
    ASSERT_OK(fw->kv().add("producer", KvValue::string("hurray-conformance")));
    ASSERT_OK(fw->kv().add("tensor_count", KvValue::int64(2)));
    ASSERT_OK(fw->add_tensor(w.name, w.desc, w.spans()));
    EXPECT_EQ(fw->offset(), 8192U);
    ASSERT_OK(fw->add_tensor(b.name, b.desc, b.spans()));
    EXPECT_EQ(fw->offset(), 16384U);
    ASSERT_OK(fw->finish());
    const Bytes f = sink.bytes();

    // Sizes known from the descriptor encoding: 61 and 53 bytes.
    const Bytes d1 = must_encode(w.desc);
    const Bytes d2 = must_encode(b.desc);
    ASSERT_EQ(d1.size(), 61U);
    ASSERT_EQ(d2.size(), 53U);

    // Header (bytes 0-63).
    Bytes header;
    append_str(header, "HRRYFILE");
    header.insert(header.end(), {0x01, 0x00, 0x00, 0x00});
    append_le(header, 0x05, 4);    // HAS_KV_METADATA | HAS_INDEX_CRC32C
    append_le(header, 4096, 4);
    append_le(header, 64, 8);
    append_le(header, 2, 8);       // tensor_count_hint
    header.resize(64, 0);
    ASSERT_GE(f.size(), 64U);
    EXPECT_EQ(Bytes(f.begin(), f.begin() + 64), header);

    // Descriptor 1 at 64 (HRRY, version 1.0, descriptor_length 61), zeros to 4096.
    EXPECT_EQ(Bytes(f.begin() + 64, f.begin() + 70), (Bytes{'H', 'R', 'R', 'Y', 1, 0}));
    EXPECT_EQ(le(f, 70, 4), 61U);
    EXPECT_EQ(Bytes(f.begin() + 64, f.begin() + 125), d1);
    EXPECT_TRUE(all_zero(f, 125, 4096));
    // Data 1 at 4096 (16 bytes), padding to the next alignment boundary 8192.
    EXPECT_EQ(Bytes(f.begin() + 4096, f.begin() + 4112), f32_bytes({1.0F, 2.0F, -3.5F, 0.25F}));
    EXPECT_TRUE(all_zero(f, 4112, 8192));
    // Descriptor 2 at 8192 (53 bytes), zeros to 12288, data at 12288, zeros to 16384.
    EXPECT_EQ(Bytes(f.begin() + 8192, f.begin() + 8245), d2);
    EXPECT_EQ(le(f, 8198, 4), 53U);
    EXPECT_TRUE(all_zero(f, 8245, 12288));
    EXPECT_EQ(Bytes(f.begin() + 12288, f.begin() + 12291), (Bytes{0x01, 0xFE, 0x7F}));
    EXPECT_TRUE(all_zero(f, 12291, 16384));

    // KV section at 16384: count 2, "producer" string, "tensor_count" int64 2 (60 bytes).
    Bytes kv;
    append_le(kv, 2, 4);
    append_le(kv, 8, 2);
    append_str(kv, "producer");
    kv.push_back(0x01);
    append_le(kv, 18, 4);
    append_str(kv, "hurray-conformance");
    append_le(kv, 12, 2);
    append_str(kv, "tensor_count");
    kv.push_back(0x02);
    append_le(kv, 2, 8);
    ASSERT_EQ(kv.size(), 60U);
    EXPECT_EQ(Bytes(f.begin() + 16384, f.begin() + 16444), kv);
    EXPECT_TRUE(all_zero(f, 16444, 16448));

    // Index at 16448: count, then weights and bias entries (87 bytes).
    Bytes index;
    append_le(index, 2, 8);
    append_le(index, 7, 2);
    append_str(index, "weights");
    append_le(index, 64, 8);
    append_le(index, 61, 4);
    append_le(index, 4096, 8);
    append_le(index, 16, 8);
    append_le(index, 0, 4);
    append_le(index, 4, 2);
    append_str(index, "bias");
    append_le(index, 8192, 8);
    append_le(index, 53, 4);
    append_le(index, 12288, 8);
    append_le(index, 3, 8);
    append_le(index, 0, 4);
    ASSERT_EQ(index.size(), 87U);
    EXPECT_EQ(Bytes(f.begin() + 16448, f.begin() + 16535), index);

    // Trailer at 16535, the last 40 bytes.
    ASSERT_EQ(f.size(), 16535U + 40U);
    EXPECT_EQ(le(f, 16535, 8), 16448U);      // index_offset
    EXPECT_EQ(le(f, 16543, 8), 87U);         // index_length
    EXPECT_EQ(le(f, 16551, 8), 16384U);      // kv_offset
    EXPECT_EQ(le(f, 16559, 4), 60U);         // kv_length
    EXPECT_EQ(le(f, 16563, 4), crc32c(index));  // index_crc32c
    EXPECT_EQ(le(f, 16567, 4), 0U);
    EXPECT_EQ(Bytes(f.end() - 4, f.end()), (Bytes{'H', 'R', 'R', 'Y'}));

    // The entries the writer reports match.
    ASSERT_EQ(fw->entries().size(), 2U);
    EXPECT_EQ(fw->entries()[1], (IndexEntry{"bias", 8192, 53, 12288, 3, 0}));
    EXPECT_EQ(fw->header().flags, 5U);
}

TEST(FileWriterGolden, SameDescriptorsAndKvAsTheConformanceFile) {
    // conformance/files/basic.hrry holds the same two tensors and KV, written
    // by the reference (which pads only to 8 after the last buffer and never
    // sets HAS_KV_METADATA); descriptors and KV bytes must be identical.
    const Bytes ref = read_all(std::string(HURRAY_CONFORMANCE_DIR) + "/files/basic.hrry");
    ASSERT_EQ(ref.size(), 8391U);
    const Bytes d1 = must_encode(must(make_dense(ElementType::kFloat32, {2, 2})));
    const Bytes d2 = must_encode(must(make_dense(ElementType::kInt8, {3})));
    EXPECT_EQ(Bytes(ref.begin() + 64, ref.begin() + 125), d1);
    EXPECT_EQ(Bytes(ref.begin() + 4112, ref.begin() + 4165), d2);
    KvMetadata kv;
    ASSERT_OK(kv.add("producer", KvValue::string("hurray-conformance")));
    ASSERT_OK(kv.add("tensor_count", KvValue::int64(2)));
    const Tensor w{"weights", must(make_dense(ElementType::kFloat32, {2, 2})), {Bytes(16, 0)}};
    const Tensor b{"bias", must(make_dense(ElementType::kInt8, {3})), {Bytes(3, 0)}};
    FileWriterOptions no_table;
    no_table.descriptor_table = false;  // the reference's KV section, byte for byte
    const Bytes ours = write_memory({w, b}, no_table, &kv);
    ASSERT_GT(ours.size(), 16384U + 60U);
    EXPECT_EQ(Bytes(ours.begin() + 16384, ours.begin() + 16444), Bytes(ref.begin() + 0x2008, ref.begin() + 0x2044));
    // Header: same except HAS_KV_METADATA.
    EXPECT_EQ(ref[12], 0x04);
    EXPECT_EQ(ours[12], 0x05);
    Bytes h1(ref.begin(), ref.begin() + 64);
    Bytes h2(ours.begin(), ours.begin() + 64);
    h2[12] = 0x04;
    EXPECT_EQ(h1, h2);
}

// ---------------------------------------------------------------------------
// (2) Through a pipe: no seeking, same bytes as in memory

std::vector<Tensor> mixed_tensors() {
    std::vector<Tensor> ts;
    ts.push_back(dense("big", ElementType::kFloat32, {300, 300}, 10));  // 360000 bytes: direct writes
    ts.push_back(dense("small", ElementType::kInt8, {5}, 20));
    ts.push_back(with_desc("quant", must(make_per_block_quantized(ElementType::kInt8, {64, 96}, 1, 32)), 30));
    ts.push_back(with_desc("csr", must(make_csr(ElementType::kFloat32, 50, 40, 70)), 40));
    ts.push_back(dense("empty", ElementType::kFloat16, {0, 8}, 50));
    ts.push_back(dense("\xC3\xA9t\xC3\xA9", ElementType::kUInt16, {7, 3}, 60));
    return ts;
}

TEST(FileWriterPipe, WritesThroughAPipeWithoutSeeking) {
    const std::vector<Tensor> ts = mixed_tensors();
    KvMetadata kv;
    ASSERT_OK(kv.add("general.architecture", KvValue::string("llama")));
    ASSERT_OK(kv.add("dims", KvValue::int64_array({4096, 11008})));
    const Bytes expected = write_memory(ts, {}, &kv);
    check_layout(expected, ts, {}, &kv);

    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    Bytes got;
    std::thread reader([&] {
        uint8_t buf[4096];
        for (;;) {
            const ssize_t n = ::read(fds[0], buf, sizeof buf);
            if (n <= 0) {
                break;
            }
            got.insert(got.end(), buf, buf + n);
        }
    });
    {
        FdSink sink(fds[1], /*owns=*/true);
        auto w = FileWriter::create(sink);
        ASSERT_TRUE(w);
        w->kv() = kv;
        for (const Tensor& x : ts) {
            ASSERT_OK(w->add_tensor(x.name, x.desc, x.spans()));
        }
        ASSERT_OK(w->finish());
    }
    reader.join();
    ::close(fds[0]);
    EXPECT_EQ(got.size(), expected.size());
    EXPECT_TRUE(got == expected);
}

TEST(FileWriterPipe, SinkFailureIsSticky) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    ::close(fds[0]);
    // Writing to a pipe without reader raises SIGPIPE unless it is ignored.
    struct sigaction ign {};
    struct sigaction old {};
    ign.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ign, &old);
    {
        FdSink sink(fds[1], true);
        auto w = FileWriter::create(sink);
        ASSERT_TRUE(w);
        const Tensor big = dense("big", ElementType::kUInt8, {200000}, 1);
        auto s = w->add_tensor(big.name, big.desc, big.spans());
        ASSERT_FALSE(s);
        EXPECT_EQ(s.error().code(), E::kIoError);
        const Tensor small = dense("small", ElementType::kUInt8, {4}, 2);
        auto s2 = w->add_tensor(small.name, small.desc, small.spans());
        ASSERT_FALSE(s2);
        EXPECT_EQ(s2.error().code(), E::kIoError);
        EXPECT_EQ(w->finish().error().code(), E::kIoError);
    }
    ::sigaction(SIGPIPE, &old, nullptr);
}

// ---------------------------------------------------------------------------
// (3) Chunked writing equals whole writing

TEST(FileWriterChunked, RandomPiecesEqualWholeWrites) {
    const std::vector<Tensor> ts = mixed_tensors();
    const Bytes whole = write_memory(ts);
    std::mt19937 rng(1234);
    for (int round = 0; round < 6; ++round) {
        MemorySink sink;
        auto w = FileWriter::create(sink);
        ASSERT_TRUE(w);
        for (const Tensor& x : ts) {
            ASSERT_OK(w->begin_tensor(x.name, x.desc));
            Bytes all;
            for (const Bytes& b : x.data) {
                all.insert(all.end(), b.begin(), b.end());
            }
            size_t at = 0;
            const size_t max_piece = round % 2 == 0 ? 100 : 150000;
            while (at < all.size()) {
                const size_t k = std::min<size_t>(all.size() - at, rng() % (max_piece + 1));
                ASSERT_OK(w->write_data(std::span<const uint8_t>(all).subspan(at, k)));
                at += k;
            }
            ASSERT_OK(w->write_data({}));
            ASSERT_OK(w->end_tensor());
        }
        ASSERT_OK(w->finish());
        EXPECT_TRUE(sink.bytes() == whole) << "round " << round;
    }
}

TEST(FileWriterChunked, OneByteAtATimeAcrossBuffers) {
    const Tensor q = with_desc("q", must(make_csr(ElementType::kInt16, 4, 5, 6)), 3);
    const Bytes whole = write_memory({q});
    MemorySink sink;
    auto w = FileWriter::create(sink);
    ASSERT_TRUE(w);
    ASSERT_OK(w->begin_tensor(q.name, q.desc));
    for (const Bytes& b : q.data) {
        for (uint8_t v : b) {
            ASSERT_OK(w->write_data(std::span<const uint8_t>(&v, 1)));
        }
    }
    ASSERT_OK(w->end_tensor());
    ASSERT_OK(w->finish());
    EXPECT_EQ(sink.bytes(), whole);
}

// ---------------------------------------------------------------------------
// (4) Errors

TEST(FileWriterErrors, BadOptions) {
    MemorySink sink;
    for (uint32_t a : {0U, 1U, 2048U, 3000U, 4095U, 6144U, 4U * 1024U * 1024U, 0x80000000U}) {
        FileWriterOptions o;
        o.data_buffer_alignment = a;
        auto w = FileWriter::create(sink, o);
        ASSERT_FALSE(w) << a;
        EXPECT_EQ(w.error().code(), E::kInvalidArgument);
        TempDir dir;
        auto wf = FileWriter::create_file(dir.file("x.hrry"), o);
        ASSERT_FALSE(wf);
        EXPECT_EQ(wf.error().code(), E::kInvalidArgument);
        EXPECT_TRUE(dir.list().empty());
    }
    EXPECT_TRUE(sink.bytes().empty());
}

TEST(FileWriterErrors, BadNamesLeaveTheWriterUsable) {
    MemorySink sink;
    auto w = FileWriter::create(sink);
    ASSERT_TRUE(w);
    const Tensor x = dense("x", ElementType::kInt8, {4}, 1);
    const uint64_t before = w->offset();
    const std::vector<std::pair<std::string, E>> bad = {
        {"", E::kInvalidName},
        {std::string(65536, 'n'), E::kInvalidName},
        {"bad\xFF", E::kInvalidName},
        {"\xC0\x80", E::kInvalidName},
        {"\xED\xA0\x80", E::kInvalidName},
    };
    for (const auto& [name, code] : bad) {
        auto s = w->add_tensor(name, x.desc, x.spans());
        ASSERT_FALSE(s);
        EXPECT_EQ(s.error().code(), code);
        EXPECT_EQ(w->begin_tensor(name, x.desc).error().code(), code);
        EXPECT_EQ(w->offset(), before);
    }
    ASSERT_OK(w->add_tensor("x", x.desc, x.spans()));
    const uint64_t after_x = w->offset();
    auto dup = w->add_tensor("x", x.desc, x.spans());
    ASSERT_FALSE(dup);
    EXPECT_EQ(dup.error().code(), E::kDuplicateName);
    EXPECT_EQ(w->begin_tensor("x", x.desc).error().code(), E::kDuplicateName);
    EXPECT_EQ(w->offset(), after_x);
    const Tensor longest = dense(std::string(65535, 'n'), ElementType::kInt8, {2}, 2);
    ASSERT_OK(w->add_tensor(longest.name, longest.desc, longest.spans()));
    ASSERT_OK(w->finish());
    EXPECT_EQ(sink.bytes(), write_memory({x, longest}));
}

TEST(FileWriterErrors, BufferCountAndSizeMismatch) {
    MemorySink sink;
    auto w = FileWriter::create(sink);
    ASSERT_TRUE(w);
    const Tensor q = with_desc("q", must(make_per_block_quantized(ElementType::kInt8, {4, 64}, 1, 32)), 1);
    ASSERT_EQ(q.data.size(), 2U);
    const Spans one = {q.data[0]};
    auto s = w->add_tensor(q.name, q.desc, one);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code(), E::kSizeMismatch);
    const Bytes short_scales(q.data[1].begin(), q.data[1].end() - 1);
    const Spans wrong = {q.data[0], short_scales};
    EXPECT_EQ(w->add_tensor(q.name, q.desc, wrong).error().code(), E::kSizeMismatch);
    const Spans three = {q.data[0], q.data[1], q.data[1]};
    EXPECT_EQ(w->add_tensor(q.name, q.desc, three).error().code(), E::kSizeMismatch);
    EXPECT_EQ(w->offset(), 64U);
    EXPECT_TRUE(sink.bytes().empty());
    ASSERT_OK(w->add_tensor(q.name, q.desc, q.spans()));
    ASSERT_OK(w->finish());
    EXPECT_EQ(sink.bytes(), write_memory({q}));
}

TEST(FileWriterErrors, InvalidDescriptorIsRejectedBeforeWriting) {
    MemorySink sink;
    auto w = FileWriter::create(sink);
    ASSERT_TRUE(w);
    TensorDescriptor d = must(make_dense(ElementType::kFloat32, {4}));
    d.buffers[0].byte_size = 8;  // too small for 4 floats
    const Bytes data(8, 0);
    const Spans s = {data};
    auto st = w->add_tensor("d", d, s);
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().code(), E::kBufferTooSmall);
    EXPECT_FALSE(w->begin_tensor("d", d));
    EXPECT_EQ(w->offset(), 64U);
    ASSERT_OK(w->finish());
    EXPECT_EQ(sink.bytes(), write_memory({}));
}

TEST(FileWriterErrors, OverlongPieceIsRejectedAndTheWriterStaysUsable) {
    const Tensor x = dense("x", ElementType::kInt32, {10}, 1);  // 40 bytes
    MemorySink sink;
    auto w = FileWriter::create(sink);
    ASSERT_TRUE(w);
    ASSERT_OK(w->begin_tensor(x.name, x.desc));
    const std::span<const uint8_t> all(x.data[0]);
    ASSERT_OK(w->write_data(all.first(30)));
    const uint64_t at = w->offset();
    const Bytes too_much(11, 0xEE);
    auto s = w->write_data(too_much);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code(), E::kSizeMismatch);
    EXPECT_EQ(w->offset(), at);
    ASSERT_OK(w->write_data(all.subspan(30)));
    EXPECT_EQ(w->write_data(Bytes{1}).error().code(), E::kSizeMismatch);
    ASSERT_OK(w->end_tensor());
    ASSERT_OK(w->finish());
    EXPECT_EQ(sink.bytes(), write_memory({x}));
}

TEST(FileWriterErrors, ShortEndTensorFailsTheWriter) {
    const Tensor x = dense("x", ElementType::kInt32, {10}, 1);
    MemorySink sink;
    auto w = FileWriter::create(sink);
    ASSERT_TRUE(w);
    ASSERT_OK(w->begin_tensor(x.name, x.desc));
    ASSERT_OK(w->write_data(std::span<const uint8_t>(x.data[0]).first(39)));
    auto s = w->end_tensor();
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code(), E::kSizeMismatch);
    // Sticky: the output has a hole.
    EXPECT_EQ(w->write_data(Bytes{1}).error().code(), E::kSizeMismatch);
    EXPECT_EQ(w->finish().error().code(), E::kSizeMismatch);
    const Tensor y = dense("y", ElementType::kInt8, {1}, 2);
    EXPECT_EQ(w->add_tensor(y.name, y.desc, y.spans()).error().code(), E::kSizeMismatch);
}

TEST(FileWriterErrors, CallsOutOfOrder) {
    const Tensor x = dense("x", ElementType::kInt8, {4}, 1);
    const Tensor y = dense("y", ElementType::kInt8, {4}, 2);
    MemorySink sink;
    auto w = FileWriter::create(sink);
    ASSERT_TRUE(w);
    EXPECT_EQ(w->write_data(Bytes{1}).error().code(), E::kInvalidArgument);
    EXPECT_EQ(w->end_tensor().error().code(), E::kInvalidArgument);
    ASSERT_OK(w->begin_tensor(x.name, x.desc));
    EXPECT_EQ(w->begin_tensor(y.name, y.desc).error().code(), E::kInvalidArgument);
    EXPECT_EQ(w->add_tensor(y.name, y.desc, y.spans()).error().code(), E::kInvalidArgument);
    auto fin = w->finish();
    ASSERT_FALSE(fin);
    EXPECT_EQ(fin.error().code(), E::kInvalidArgument);
    // Still usable: finish the tensor and the file.
    ASSERT_OK(w->write_data(x.data[0]));
    ASSERT_OK(w->end_tensor());
    ASSERT_OK(w->add_tensor(y.name, y.desc, y.spans()));
    ASSERT_OK(w->finish());
    EXPECT_EQ(sink.bytes(), write_memory({x, y}));
    // After finish, everything is refused.
    EXPECT_EQ(w->finish().error().code(), E::kInvalidArgument);
    EXPECT_EQ(w->begin_tensor("z", x.desc).error().code(), E::kInvalidArgument);
}

TEST(FileWriterErrors, TensorCountHintMismatch) {
    const Tensor x = dense("x", ElementType::kInt8, {4}, 1);
    const Tensor y = dense("y", ElementType::kInt8, {4}, 2);
    FileWriterOptions o;
    o.tensor_count_hint = 2;
    MemorySink sink;
    auto w = FileWriter::create(sink, o);
    ASSERT_TRUE(w);
    ASSERT_OK(w->add_tensor(x.name, x.desc, x.spans()));
    auto s = w->finish();
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code(), E::kInvalidArgument);
    ASSERT_OK(w->add_tensor(y.name, y.desc, y.spans()));
    ASSERT_OK(w->finish());
    check_layout(sink.bytes(), {x, y}, o);

    FileWriterOptions o3;
    o3.tensor_count_hint = 1;
    MemorySink sink3;
    auto w3 = FileWriter::create(sink3, o3);
    ASSERT_TRUE(w3);
    ASSERT_OK(w3->add_tensor(x.name, x.desc, x.spans()));
    ASSERT_OK(w3->add_tensor(y.name, y.desc, y.spans()));
    EXPECT_EQ(w3->finish().error().code(), E::kInvalidArgument);
}

TEST(FileWriterErrors, InvalidKvFailsFinishBeforeWriting) {
    MemorySink sink;
    auto w = FileWriter::create(sink);
    ASSERT_TRUE(w);
    ASSERT_OK(w->kv().add("bad", KvValue::string("\xFF")));
    auto s = w->finish();
    ASSERT_FALSE(s);
    EXPECT_TRUE(sink.bytes().empty());
    ASSERT_TRUE(w->kv().erase("bad"));
    ASSERT_OK(w->finish());
    check_layout(sink.bytes(), {}, {});
}

// ---------------------------------------------------------------------------
// (5) Composites

TensorDescriptor member(ElementType t, Shape shape, Shape parent, Shape offset) {
    TensorDescriptor d = must(make_dense(t, std::move(shape)));
    d.shard = ShardDescriptor{parent.to_vector(), offset.to_vector()};
    return d;
}

TEST(FileWriterComposite, HeadIsFollowedDirectlyByItsFirstMember) {
    const Tensor head{"w", must(make_composite_head(ElementType::kFloat32, {4, 4}, CompositionRule::kPartition, 2)), {}};
    const Tensor top = with_desc("w.top", member(ElementType::kFloat32, {2, 4}, {4, 4}, {0, 0}), 1);
    const Tensor bottom = with_desc("w.bottom", member(ElementType::kFloat32, {2, 4}, {4, 4}, {2, 0}), 2);
    const Tensor after = dense("after", ElementType::kInt8, {3}, 3);
    const std::vector<Tensor> ts = {head, top, bottom, after};
    const Bytes f = write_memory(ts);
    auto idx = check_layout(f, ts, {});
    ASSERT_EQ(idx.size(), 4U);
    const Bytes hd = must_encode(head.desc);
    EXPECT_EQ(idx[0].data_offset, 64 + hd.size());
    EXPECT_EQ(idx[0].data_length, 0U);
    EXPECT_EQ(idx[1].descriptor_offset, up(64 + hd.size(), 8));
    EXPECT_LT(idx[1].descriptor_offset, 4096U) << "no alignment padding after the head";

    // add_composite writes the same bytes.
    MemorySink sink;
    auto w = FileWriter::create(sink);
    ASSERT_TRUE(w);
    const Spans ts1 = top.spans();
    const Spans ts2 = bottom.spans();
    const FileTensorInput members[] = {{top.name, &top.desc, ts1}, {bottom.name, &bottom.desc, ts2}};
    ASSERT_OK(w->add_composite(head.name, head.desc, members));
    ASSERT_OK(w->add_tensor(after.name, after.desc, after.spans()));
    ASSERT_OK(w->finish());
    EXPECT_EQ(sink.bytes(), f);
}

TEST(FileWriterComposite, NestedCompositeWithAddComposite) {
    const Tensor outer{"o", must(make_composite_head(ElementType::kFloat32, {4, 4}, CompositionRule::kGroup, 2)), {}};
    TensorDescriptor inner_d = must(make_composite_head(ElementType::kFloat32, {4, 4}, CompositionRule::kPartition, 2));
    const Tensor inner{"o.i", inner_d, {}};
    const Tensor a = with_desc("o.i.a", member(ElementType::kFloat32, {4, 2}, {4, 4}, {0, 0}), 1);
    const Tensor b = with_desc("o.i.b", member(ElementType::kFloat32, {4, 2}, {4, 4}, {0, 2}), 2);
    const Tensor c = dense("o.c", ElementType::kInt8, {9}, 3);
    const std::vector<Tensor> ts = {outer, inner, a, b, c};
    const Bytes f = write_memory(ts);
    check_layout(f, ts, {});
    MemorySink sink;
    auto w = FileWriter::create(sink);
    ASSERT_TRUE(w);
    const Spans none;
    const Spans sa = a.spans();
    const Spans sb = b.spans();
    const Spans sc = c.spans();
    const FileTensorInput members[] = {
        {inner.name, &inner.desc, none}, {a.name, &a.desc, sa}, {b.name, &b.desc, sb}, {c.name, &c.desc, sc}};
    ASSERT_OK(w->add_composite(outer.name, outer.desc, members));
    ASSERT_OK(w->finish());
    EXPECT_EQ(sink.bytes(), f);
}

TEST(FileWriterComposite, InvalidMemberIsRejectedBeforeWriting) {
    const TensorDescriptor head = must(make_composite_head(ElementType::kFloat32, {4, 4}, CompositionRule::kPartition, 2));
    const Tensor top = with_desc("top", member(ElementType::kFloat32, {2, 4}, {4, 4}, {0, 0}), 1);
    const Tensor wrong_parent = with_desc("bad", member(ElementType::kFloat32, {2, 4}, {8, 4}, {2, 0}), 2);
    const Tensor wrong_type = with_desc("bad2", member(ElementType::kInt32, {2, 4}, {4, 4}, {2, 0}), 3);
    const Tensor bottom = with_desc("bottom", member(ElementType::kFloat32, {2, 4}, {4, 4}, {2, 0}), 4);

    MemorySink sink;
    auto w = FileWriter::create(sink);
    ASSERT_TRUE(w);
    // add_tensor: the bad member is refused, the writer (and its assembler) stays usable.
    ASSERT_OK(w->add_tensor("h", head, {}));
    ASSERT_OK(w->add_tensor(top.name, top.desc, top.spans()));
    const uint64_t at = w->offset();
    auto s = w->add_tensor(wrong_parent.name, wrong_parent.desc, wrong_parent.spans());
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code(), E::kInvalidComposite);
    EXPECT_EQ(w->begin_tensor(wrong_type.name, wrong_type.desc).error().code(), E::kInvalidComposite);
    EXPECT_EQ(w->offset(), at);
    ASSERT_OK(w->add_tensor(bottom.name, bottom.desc, bottom.spans()));

    // add_composite: a bad last member leaves no byte of the composite.
    const uint64_t before = w->offset();
    const Spans st = top.spans();
    const Spans sw = wrong_parent.spans();
    const FileTensorInput bad_members[] = {{"c.top", &top.desc, st}, {"c.bad", &wrong_parent.desc, sw}};
    EXPECT_EQ(w->add_composite("c", head, bad_members).error().code(), E::kInvalidComposite);
    // Too few members (torn) and too many are refused too.
    const FileTensorInput one[] = {{"c.top", &top.desc, st}};
    EXPECT_EQ(w->add_composite("c", head, one).error().code(), E::kInvalidComposite);
    const Spans sb = bottom.spans();
    const FileTensorInput three[] = {{"c.top", &top.desc, st}, {"c.bottom", &bottom.desc, sb}, {"c.x", &top.desc, st}};
    EXPECT_EQ(w->add_composite("c", head, three).error().code(), E::kInvalidArgument);
    // Duplicate names inside the composite, or with the file.
    const FileTensorInput dup[] = {{"c.top", &top.desc, st}, {"c.top", &bottom.desc, sb}};
    EXPECT_EQ(w->add_composite("c", head, dup).error().code(), E::kDuplicateName);
    const FileTensorInput dup2[] = {{"top", &top.desc, st}, {"c.bottom", &bottom.desc, sb}};
    EXPECT_EQ(w->add_composite("c", head, dup2).error().code(), E::kDuplicateName);
    // Wrong buffer sizes in a member.
    const Spans none;
    const FileTensorInput nodata[] = {{"c.top", &top.desc, st}, {"c.bottom", &bottom.desc, none}};
    EXPECT_EQ(w->add_composite("c", head, nodata).error().code(), E::kSizeMismatch);
    // Not a head.
    EXPECT_EQ(w->add_composite("c", top.desc, one).error().code(), E::kInvalidArgument);
    EXPECT_EQ(w->offset(), before);
    const FileTensorInput good[] = {{"c.top", &top.desc, st}, {"c.bottom", &bottom.desc, sb}};
    ASSERT_OK(w->add_composite("c", head, good));
    ASSERT_OK(w->finish());
    const std::vector<Tensor> ts = {{"h", head, {}}, top, bottom, {"c", head, {}},
                                    {"c.top", top.desc, top.data}, {"c.bottom", bottom.desc, bottom.data}};
    EXPECT_EQ(sink.bytes(), write_memory(ts));
}

TEST(FileWriterComposite, TornCompositeFailsFinish) {
    const TensorDescriptor head = must(make_composite_head(ElementType::kFloat32, {4, 4}, CompositionRule::kPartition, 2));
    const Tensor top = with_desc("top", member(ElementType::kFloat32, {2, 4}, {4, 4}, {0, 0}), 1);
    const Tensor bottom = with_desc("bottom", member(ElementType::kFloat32, {2, 4}, {4, 4}, {2, 0}), 2);
    MemorySink sink;
    auto w = FileWriter::create(sink);
    ASSERT_TRUE(w);
    ASSERT_OK(w->add_tensor("h", head, {}));
    ASSERT_OK(w->add_tensor(top.name, top.desc, top.spans()));
    auto s = w->finish();
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code(), E::kInvalidComposite);
    // The composite can still be completed.
    ASSERT_OK(w->add_tensor(bottom.name, bottom.desc, bottom.spans()));
    ASSERT_OK(w->finish());
}

// ---------------------------------------------------------------------------
// (6) Alignments, empty tensors, empty file, sorted index, options

TEST(FileWriterLayout, Alignments) {
    const std::vector<Tensor> ts = mixed_tensors();
    for (uint32_t a : {4096U, 8192U, 65536U, 2U * 1024U * 1024U}) {
        FileWriterOptions o;
        o.data_buffer_alignment = a;
        KvMetadata kv;
        ASSERT_OK(kv.add("k", KvValue::uint64(a)));
        const Bytes f = write_memory(ts, o, &kv);
        check_layout(f, ts, o, &kv);
    }
}

TEST(FileWriterLayout, EmptyTensorsStillGetAlignedDataOffsets) {
    const std::vector<Tensor> ts = {dense("e1", ElementType::kFloat32, {0}, 1), dense("e2", ElementType::kInt8, {3, 0, 2}, 2),
                                    dense("x", ElementType::kInt8, {1}, 3), dense("e3", ElementType::kFloat64, {0}, 4)};
    const Bytes f = write_memory(ts);
    auto idx = check_layout(f, ts, {});
    ASSERT_EQ(idx.size(), 4U);
    EXPECT_EQ(idx[0].data_offset, 4096U);
    EXPECT_EQ(idx[0].data_length, 0U);
    EXPECT_EQ(idx[1].descriptor_offset, 4096U);
    EXPECT_EQ(idx[1].data_offset, 8192U);
}

TEST(FileWriterLayout, ZeroTensorFile) {
    const Bytes f = write_memory({});
    // header, empty KV section (count 0) padded to 8, index with count 0, trailer
    ASSERT_EQ(f.size(), 64U + 8U + 8U + 40U);
    check_layout(f, {}, {});
    EXPECT_EQ(le(f, 12, 4), file_flags::kHasIndexCrc32c | file_flags::kHasKvMetadata);
    EXPECT_EQ(le(f, 64, 4), 0U);
    EXPECT_EQ(le(f, 72, 8), 0U);

    KvMetadata kv;
    ASSERT_OK(kv.add("only", KvValue::boolean(true)));
    const Bytes g = write_memory({}, {}, &kv);
    check_layout(g, {}, {}, &kv);
    EXPECT_EQ(le(g, 12, 4), file_flags::kHasIndexCrc32c | file_flags::kHasKvMetadata);

    FileWriterOptions o;
    o.tensor_count_hint = 0;
    check_layout(write_memory({}, o), {}, o);
}

TEST(FileWriterLayout, SortedIndexByRawBytes) {
    // Raw-byte order: "B" < "a" < "a\x01" < "ab" < "\xC3\xA9" (0xC3 > 'z').
    const std::vector<Tensor> ts = {dense("\xC3\xA9", ElementType::kInt8, {1}, 1), dense("ab", ElementType::kInt8, {1}, 2),
                                    dense("a", ElementType::kInt8, {1}, 3), dense("B", ElementType::kInt8, {1}, 4),
                                    dense(std::string("a\x01", 2), ElementType::kInt8, {1}, 5)};
    FileWriterOptions o;
    o.sorted_index = true;
    const Bytes f = write_memory(ts, o);
    auto idx = check_layout(f, ts, o);
    ASSERT_EQ(idx.size(), 5U);
    const std::vector<std::string> expected = {"B", "a", std::string("a\x01", 2), "ab", "\xC3\xA9"};
    for (size_t i = 0; i < 5; ++i) {
        EXPECT_EQ(idx[i].name, expected[i]) << i;
    }
    EXPECT_TRUE(check_index_names(idx, true));
    // Tensors stay in write order in the tensor region.
    EXPECT_LT(idx[4].descriptor_offset, idx[0].descriptor_offset);
}

TEST(FileWriterLayout, KvFilledAfterTheFirstTensor) {
    // The header is out by then; it announced a KV section anyway, and the
    // KV is written into it.
    const Tensor x = dense("x", ElementType::kInt8, {100000}, 1);
    MemorySink sink;
    auto w = FileWriter::create(sink);
    ASSERT_TRUE(w);
    ASSERT_OK(w->add_tensor(x.name, x.desc, x.spans()));
    ASSERT_OK(w->kv().add("late", KvValue::string("yes")));
    ASSERT_OK(w->finish());
    check_layout(sink.bytes(), {x}, {}, &w->kv());
    EXPECT_EQ(le(sink.bytes(), 12, 4), file_flags::kHasIndexCrc32c | file_flags::kHasKvMetadata);

    // KV emptied before finish: an empty KV section keeps flag and trailer consistent.
    MemorySink sink2;
    FileWriterOptions no_table;
    no_table.descriptor_table = false;  // its KV section would hold the table
    auto w2 = FileWriter::create(sink2, no_table);
    ASSERT_TRUE(w2);
    ASSERT_OK(w2->kv().add("gone", KvValue::int64(1)));
    ASSERT_OK(w2->add_tensor(x.name, x.desc, x.spans()));
    ASSERT_TRUE(w2->kv().erase("gone"));
    ASSERT_OK(w2->finish());
    const Bytes& f2 = sink2.bytes();
    EXPECT_EQ(le(f2, 12, 4), file_flags::kHasIndexCrc32c | file_flags::kHasKvMetadata);
    auto t = decode_file_trailer(std::span<const uint8_t>(f2).last(40), f2.size() - 40);
    ASSERT_TRUE(t);
    EXPECT_NE(t->kv_offset, 0U);
    EXPECT_EQ(t->kv_length, 4U);
}

TEST(FileWriterLayout, AllKvTypesRoundTrip) {
    KvMetadata kv;
    ASSERT_OK(kv.add("s", KvValue::string("llama")));
    ASSERT_OK(kv.add("i", KvValue::int64(-5)));
    ASSERT_OK(kv.add("u", KvValue::uint64(UINT64_MAX)));
    ASSERT_OK(kv.add("f", KvValue::float64(0.5)));
    ASSERT_OK(kv.add("b", KvValue::boolean(false)));
    ASSERT_OK(kv.add("y", KvValue::bytes({0, 1, 2})));
    ASSERT_OK(kv.add("as", KvValue::string_array({"x", "yz"})));
    ASSERT_OK(kv.add("ai", KvValue::int64_array({1, -1})));
    ASSERT_OK(kv.add("af", KvValue::float64_array({})));
    const std::vector<Tensor> ts = {dense("t", ElementType::kInt8, {2}, 1)};
    check_layout(write_memory(ts, {}, &kv), ts, {}, &kv);
}

TEST(FileWriterLayout, MovedWriterKeepsWriting) {
    const Tensor x = dense("x", ElementType::kInt8, {4}, 1);
    const Tensor y = dense("y", ElementType::kInt8, {4}, 2);
    MemorySink sink;
    auto created = FileWriter::create(sink);
    ASSERT_TRUE(created);
    FileWriter w = std::move(created).value();
    ASSERT_OK(w.add_tensor(x.name, x.desc, x.spans()));
    FileWriter w2 = std::move(w);
    ASSERT_OK(w2.add_tensor(y.name, y.desc, y.spans()));
    EXPECT_EQ(w2.tensor_count(), 2U);
    ASSERT_OK(w2.finish());
    EXPECT_EQ(sink.bytes(), write_memory({x, y}));
}

// ---------------------------------------------------------------------------
// Atomic save to a path

TEST(FileWriterFile, CreateFileCommitsOnFinishOnly) {
    TempDir dir;
    const std::string path = dir.file("m.hrry");
    const Bytes old_content = {1, 2, 3};
    write_all_file(path, old_content);
    const std::vector<Tensor> ts = mixed_tensors();
    {
        auto w = FileWriter::create_file(path);
        ASSERT_TRUE(w) << w.error().to_string();
        for (const Tensor& x : ts) {
            ASSERT_OK(w->add_tensor(x.name, x.desc, x.spans()));
        }
        EXPECT_EQ(read_all(path), old_content);
        ASSERT_OK(w->finish());
    }
    EXPECT_EQ(read_all(path), write_memory(ts));
    EXPECT_EQ(dir.list(), std::vector<std::string>{"m.hrry"});
}

TEST(FileWriterFile, UnfinishedWriterLeavesTheOldFile) {
    TempDir dir;
    const std::string path = dir.file("m.hrry");
    const Bytes old_content = {4, 5, 6};
    write_all_file(path, old_content);
    const Tensor x = dense("x", ElementType::kInt8, {300000}, 1);
    {
        auto w = FileWriter::create_file(path);
        ASSERT_TRUE(w);
        ASSERT_OK(w->add_tensor(x.name, x.desc, x.spans()));
        ASSERT_OK(w->begin_tensor("y", x.desc));
        EXPECT_EQ(dir.list().size(), 2U);
    }
    EXPECT_EQ(read_all(path), old_content);
    EXPECT_EQ(dir.list(), std::vector<std::string>{"m.hrry"});

    // A failed finish (torn composite) does not commit either.
    {
        auto w = FileWriter::create_file(path);
        ASSERT_TRUE(w);
        ASSERT_OK(w->add_tensor("h", must(make_composite_head(ElementType::kFloat32, {2}, CompositionRule::kGroup, 1)), {}));
        EXPECT_FALSE(w->finish());
    }
    EXPECT_EQ(read_all(path), old_content);
    EXPECT_EQ(dir.list(), std::vector<std::string>{"m.hrry"});
}

TEST(FileWriterFile, MissingDirectoryIsAnError) {
    TempDir dir;
    auto w = FileWriter::create_file(dir.file("nope/m.hrry"));
    ASSERT_FALSE(w);
    EXPECT_EQ(w.error().code(), E::kIoError);
}

}  // namespace
}  // namespace hurray
