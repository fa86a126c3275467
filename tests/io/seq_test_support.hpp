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
#include "io/index_codec.hpp"

namespace seqtest {

/// Which padding rule a writer follows.
enum class Rule {
    kSpec,       ///< After data: to the alignment. After a head: none.
    kReference,  ///< After data: to 8 bytes. After a head: to the alignment.
};

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
    bool sorted = false;
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

inline void pad_to(std::vector<uint8_t>& b, uint64_t alignment) {
    while (b.size() % alignment != 0) {
        b.push_back(0);
    }
}

inline Assembled assemble(const std::vector<TestTensor>& tensors, const FileOptions& o = {}) {
    Assembled out;
    auto& b = out.bytes;
    b.resize(static_cast<size_t>(o.first_descriptor_offset), 0);
    std::vector<hurray::IndexEntry> entries;
    for (const TestTensor& t : tensors) {
        hurray::IndexEntry e;
        e.name = t.name;
        e.descriptor_offset = b.size();
        auto enc = hurray::encode(t.descriptor);
        EXPECT_TRUE(enc.ok()) << enc.error().to_string();
        b.insert(b.end(), enc->begin(), enc->end());
        e.descriptor_length = static_cast<uint32_t>(enc->size());
        out.descriptor_end.push_back(b.size());
        EXPECT_EQ(t.data.size(), t.descriptor.buffers.size()) << t.name;
        if (!t.data.empty()) {
            pad_to(b, o.alignment);
            e.data_offset = b.size();
            for (size_t k = 0; k < t.data.size(); ++k) {
                if (k > 0) {
                    pad_to(b, o.alignment);
                }
                EXPECT_EQ(t.data[k].size(), t.descriptor.buffers[k].byte_size) << t.name;
                b.insert(b.end(), t.data[k].begin(), t.data[k].end());
            }
            e.data_length = b.size() - e.data_offset;
            if (o.after_data == Rule::kSpec) {
                pad_to(b, o.alignment);
            }
        } else {
            e.data_offset = b.size();
            e.data_length = 0;
            if (o.after_head == Rule::kReference) {
                pad_to(b, o.alignment);
            }
        }
        pad_to(b, 8);
        entries.push_back(std::move(e));
    }
    out.region_end = b.size();
    hurray::FileTrailer tr;
    uint32_t flags = 0;
    if (o.with_kv) {
        auto kv = hurray::encode_kv_section(o.kv);
        EXPECT_TRUE(kv.ok()) << kv.error().to_string();
        out.kv_offset = tr.kv_offset = b.size();
        tr.kv_length = static_cast<uint32_t>(kv->size());
        b.insert(b.end(), kv->begin(), kv->end());
        pad_to(b, 8);
        if (o.kv_flag) {
            flags |= hurray::file_flags::kHasKvMetadata;
        }
    }
    if (o.edit_index) {
        o.edit_index(entries);
    }
    auto index = hurray::detail::encode_index(entries);
    EXPECT_TRUE(index.ok()) << index.error().to_string();
    out.index_offset = tr.index_offset = b.size();
    tr.index_length = index->size();
    b.insert(b.end(), index->begin(), index->end());
    if (o.crc) {
        flags |= hurray::file_flags::kHasIndexCrc32c;
        tr.index_crc32c = hurray::crc32c(*index);
    }
    if (o.sorted) {
        flags |= hurray::file_flags::kSortedIndex;
    }
    out.trailer_offset = b.size();
    b.resize(b.size() + hurray::kFileTrailerSize);
    hurray::encode_file_trailer(tr, std::span<uint8_t, hurray::kFileTrailerSize>(b.data() + out.trailer_offset,
                                                                                 hurray::kFileTrailerSize));
    hurray::FileHeader h;
    h.flags = flags;
    h.data_buffer_alignment = o.alignment;
    h.first_descriptor_offset = o.first_descriptor_offset;
    h.tensor_count_hint = o.hint ? tensors.size() : hurray::kUnknownTensorCount;
    hurray::encode_file_header(h, std::span<uint8_t, hurray::kFileHeaderSize>(b.data(), hurray::kFileHeaderSize));
    out.index = std::move(entries);
    return out;
}

/// Deterministic bytes for buffer contents.
inline std::vector<uint8_t> fill(size_t n, uint32_t seed) {
    std::vector<uint8_t> v(n);
    uint32_t x = seed * 2654435761U + 1U;
    for (auto& c : v) {
        x ^= x << 13U;
        x ^= x >> 17U;
        x ^= x << 5U;
        c = static_cast<uint8_t>(x);
    }
    return v;
}

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
    return out;
}

}  // namespace seqtest
