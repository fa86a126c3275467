// SPDX-License-Identifier: Apache-2.0
// Test-only: a byte assembler for HRRYFILE containers in either padding
// style (spec or reference, SPEC-NOTES 12 and 13), built from the low-level
// codecs (descriptor encode, header/trailer, index, KV, CRC-32C) rather than
// FileWriter, plus a helper that reads a whole file back through
// SequentialFileReader.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hurray/core/builder.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/io/crc32c.hpp"
#include "hurray/io/file_format.hpp"
#include "hurray/io/kv_metadata.hpp"
#include "hurray/io/sequential_file_reader.hpp"
#include "file_test_support.hpp"

namespace seqtest {

/// Which padding rule a writer follows: kSpec pads to the alignment after
/// data and not after a head; kReference pads to 8 after data and to the
/// alignment after a head.
using Rule = hurray::test::Padding;

/// A tensor to write: name, descriptor and the bytes of each buffer.
struct TestTensor {
    std::string name;
    hurray::TensorDescriptor descriptor;
    std::vector<std::vector<uint8_t>> data;
};

/// How to assemble a file.
struct FileOptions {
    uint32_t alignment = 4096;
    uint64_t first_descriptor_offset = 64;
    bool hint = true;
    Rule after_data = Rule::kSpec;
    Rule after_head = Rule::kSpec;
    bool with_kv = false;  ///< write a KV section holding `kv`
    hurray::KvMetadata kv;
    bool kv_flag = true;  ///< set HAS_KV_METADATA when a KV section is written
    bool crc = true;
    bool sorted = false;  ///< set SORTED_INDEX (the entries stay in write order)
    /// Edits the index entries before they are encoded (rejection tests).
    std::function<void(std::vector<hurray::IndexEntry>&)> edit_index;
};

/// An assembled file and where its parts landed.
struct Assembled {
    std::vector<uint8_t> bytes;
    std::vector<hurray::IndexEntry> index;  ///< as encoded (after edit_index)
    std::vector<uint64_t> descriptor_end;   ///< per tensor
    uint64_t region_end = 0;                ///< first byte after the tensor region's padding
    uint64_t kv_offset = 0;
    uint64_t index_offset = 0;
    uint64_t trailer_offset = 0;
};

/// The file hurray::test::build_file assembles from `tensors` and `o`.
inline Assembled assemble(const std::vector<TestTensor>& tensors, const FileOptions& o = {}) {
    std::vector<hurray::test::TestTensor> in;
    in.reserve(tensors.size());
    for (const TestTensor& t : tensors) {
        EXPECT_EQ(t.data.size(), t.descriptor.buffers.size()) << t.name;
        in.push_back({t.name, t.descriptor, t.data, std::nullopt});
    }
    hurray::test::BuildOptions b;
    b.alignment = o.alignment;
    b.first_descriptor_offset = o.first_descriptor_offset;
    b.hint = o.hint;
    b.after_data = o.after_data;
    b.after_head = o.after_head;
    b.kv_flag = o.kv_flag;
    b.crc = o.crc;
    b.edit_index = o.edit_index;
    if (o.sorted) {
        b.edit_header = [](hurray::FileHeader& h) { h.flags |= hurray::file_flags::kSortedIndex; };
    }
    hurray::test::BuiltFile f = hurray::test::build_file(in, o.with_kv ? &o.kv : nullptr, b);
    return Assembled{std::move(f.bytes),         std::move(f.entries),     std::move(f.descriptor_end),
                     f.region_end,               f.trailer.kv_offset,      f.trailer.index_offset,
                     f.trailer_offset};
}

/// Deterministic bytes for buffer contents.
inline std::vector<uint8_t> fill(size_t n, uint32_t seed) { return hurray::test::pattern(n, seed); }

/// A dense tensor with generated contents.
inline TestTensor dense(std::string name, hurray::ElementType type, hurray::Shape shape, uint32_t seed = 1) {
    auto d = hurray::make_dense(type, std::move(shape));
    EXPECT_TRUE(d.ok()) << d.error().to_string();
    TestTensor t{std::move(name), std::move(*d), {}};
    for (const auto& h : t.descriptor.buffers) {
        t.data.push_back(fill(static_cast<size_t>(h.byte_size), seed++));
    }
    return t;
}

/// A composite head (no buffers) expecting `members` members.
inline TestTensor head(std::string name, uint32_t members) {
    auto d = hurray::make_composite_head(hurray::ElementType::kFloat32, {4}, hurray::CompositionRule::kGroup,
                                         members);
    EXPECT_TRUE(d.ok()) << d.error().to_string();
    return TestTensor{std::move(name), std::move(*d), {}};
}

/// What reading a whole file gives.
struct ReadTensor {
    hurray::SequentialTensor meta;
    std::vector<std::vector<uint8_t>> data;
};
struct ReadBack {
    hurray::FileHeader header;
    std::vector<ReadTensor> tensors;
    hurray::KvMetadata kv;
    std::vector<hurray::IndexEntry> index;
};

/// Reads every tensor and its data in chunks of `chunk()` bytes (each call
/// may return another size), checking data_position() as it goes.
inline hurray::Result<ReadBack> read_all(hurray::ByteSource& src, const hurray::SequentialReadOptions& options,
                                         const std::function<size_t()>& chunk) {
    auto r = hurray::SequentialFileReader::open(src, options);
    if (!r) {
        return r.error();
    }
    ReadBack out;
    out.header = r->header();
    std::vector<uint8_t> buf;
    while (true) {
        auto t = r->next();
        if (!t) {
            return t.error();
        }
        if (*t == nullptr) {
            break;
        }
        ReadTensor rt{**t, {}};
        rt.data.resize(rt.meta.descriptor.buffers.size());
        while (true) {
            const auto [b, off] = r->data_position();
            buf.resize(std::max<size_t>(1, chunk()));
            auto n = r->read_data(buf);
            if (!n) {
                return n.error();
            }
            if (*n == 0) {
                EXPECT_EQ(b, rt.data.size());
                break;
            }
            EXPECT_LT(b, rt.data.size());
            if (b >= rt.data.size()) {
                break;
            }
            EXPECT_EQ(off, rt.data[b].size());
            rt.data[b].insert(rt.data[b].end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(*n));
        }
        out.tensors.push_back(std::move(rt));
    }
    out.kv = r->kv();
    out.index = r->index();
    for (hurray::IndexEntry& e : out.index) {
        e.name = hurray::test::interned(e.name);  // the reader's copy goes with it
    }
    return out;
}

}  // namespace seqtest
