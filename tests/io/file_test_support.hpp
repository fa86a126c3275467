// SPDX-License-Identifier: Apache-2.0
// Test-only: assembles HRRYFILE containers byte by byte from the spec's
// pieces (descriptor encoder, header/trailer/index/KV codecs, CRC-32C), with
// either padding rule (SPEC-NOTES 12/13) and hooks to corrupt any part. It
// deliberately does not use FileWriter, so that reader tests do not depend
// on the writer.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "hurray/core/builder.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/result.hpp"
#include "hurray/io/crc32c.hpp"
#include "hurray/io/file_format.hpp"
#include "hurray/io/kv_metadata.hpp"
#include "hurray/io/index_codec.hpp"
#include "io_test_util.hpp"

namespace hurray::test {

/// Unwraps a result; otherwise throws, which fails the current test.
template <typename T>
T must(Result<T> r) {
    if (!r.ok()) {
        throw std::runtime_error("unexpected error: " + r.error().to_string());
    }
    return std::move(r).value();
}

/// How the tensor region is padded.
enum class Padding : uint8_t {
    /// file-format.md's writer protocol: pad to the alignment after every
    /// buffer (the last one too), none after a composite head.
    kSpec,
    /// The reference writer: no padding after the last buffer (only to 8),
    /// padding to the alignment after a composite head (SPEC-NOTES 12/13).
    kReference,
};

/// One tensor to place in a file.
struct TestTensor {
    std::string name;
    TensorDescriptor desc;
    /// The bytes of each buffer; when empty, each buffer is filled with a
    /// pattern of its declared size.
    std::vector<Bytes> data{};
    /// When set, written instead of encode(desc) (for invalid descriptors).
    std::optional<Bytes> raw_descriptor{};
};

/// How the file is assembled, plus hooks that corrupt it on purpose.
struct BuildOptions {
    uint32_t alignment = kDefaultDataBufferAlignment;
    Padding after_data = Padding::kSpec;  ///< Padding after a tensor's last buffer.
    Padding after_head = Padding::kSpec;  ///< Padding after a composite head's descriptor.
    bool hint = true;            ///< Store the tensor count (else kUnknownTensorCount).
    bool sort_index = false;     ///< Sort entries by name and set SORTED_INDEX.
    bool crc = true;             ///< Set HAS_INDEX_CRC32C and store the CRC.
    bool kv_flag = true;         ///< Set HAS_KV_METADATA when a KV section is written.
    uint64_t first_descriptor_offset = kFileHeaderSize;
    std::function<void(std::vector<IndexEntry>&)> edit_index{};  ///< Before encoding the index.
    std::function<void(Bytes& index)> edit_index_bytes{};        ///< Before the CRC is computed.
    std::function<void(FileHeader&)> edit_header{};              ///< Before the header is written.
    std::function<void(FileTrailer&)> edit_trailer{};            ///< Before the trailer is written.
};

/// A built file and where its parts are.
struct BuiltFile {
    Bytes bytes;
    FileHeader header;
    FileTrailer trailer;
    std::vector<IndexEntry> entries;  ///< As written to the index.
    std::vector<uint64_t> descriptor_end;  ///< Per tensor, the byte after its descriptor.
    uint64_t region_end = 0;          ///< The byte after the tensor region (and its padding).
    uint64_t trailer_offset = 0;
};

/// Byte i of the fill pattern of tensor `t`, buffer `b`.
inline uint8_t pattern_byte(size_t t, size_t b, size_t i) {
    return static_cast<uint8_t>(i * 7 + b * 31 + t * 101 + 1);
}

inline void pad_to(Bytes& out, uint64_t alignment) {
    while (out.size() % alignment != 0) {
        out.push_back(0);
    }
}

/// A copy of `name` that lives until the test program ends: IndexEntry::name
/// is a view, and the entries built here outlive the tensors they came from.
inline std::string_view interned(std::string_view name) {
    static std::mutex mutex;
    static std::set<std::string, std::less<>> names;  // nodes never move
    const std::lock_guard<std::mutex> lock(mutex);
    auto it = names.find(name);
    if (it == names.end()) {
        it = names.emplace(name).first;
    }
    return *it;
}

/// Assembles a container holding `tensors` (in this write order) and `kv`.
inline BuiltFile build_file(const std::vector<TestTensor>& tensors, const KvMetadata* kv = nullptr,
                            const BuildOptions& opt = {}) {
    BuiltFile f;
    f.header.data_buffer_alignment = opt.alignment;
    f.header.first_descriptor_offset = opt.first_descriptor_offset;
    f.header.tensor_count_hint = opt.hint ? tensors.size() : kUnknownTensorCount;
    f.header.flags = 0;
    Bytes& out = f.bytes;
    out.assign(opt.first_descriptor_offset, 0);
    std::vector<IndexEntry> entries;
    for (size_t t = 0; t < tensors.size(); ++t) {
        const TestTensor& tt = tensors[t];
        const Bytes desc = tt.raw_descriptor ? *tt.raw_descriptor : must(encode(tt.desc));
        IndexEntry e;
        e.name = interned(tt.name);
        e.descriptor_offset = out.size();
        e.descriptor_length = static_cast<uint32_t>(desc.size());
        out.insert(out.end(), desc.begin(), desc.end());
        f.descriptor_end.push_back(out.size());
        const size_t nbuf = tt.desc.buffers.size();
        if (nbuf > 0 || opt.after_head == Padding::kReference) {
            pad_to(out, opt.alignment);
        }
        e.data_offset = out.size();
        for (size_t b = 0; b < nbuf; ++b) {
            if (b < tt.data.size()) {
                out.insert(out.end(), tt.data[b].begin(), tt.data[b].end());
            } else {
                for (uint64_t i = 0; i < tt.desc.buffers[b].byte_size; ++i) {
                    out.push_back(pattern_byte(t, b, i));
                }
            }
            e.data_length = out.size() - e.data_offset;
            if (b + 1 < nbuf || opt.after_data == Padding::kSpec) {
                pad_to(out, opt.alignment);
            }
        }
        pad_to(out, kDescriptorAlignment);
        entries.push_back(std::move(e));
    }
    f.region_end = out.size();
    if (kv != nullptr) {
        const Bytes kv_bytes = must(encode_kv_section(*kv));
        pad_to(out, kDescriptorAlignment);
        f.trailer.kv_offset = out.size();
        f.trailer.kv_length = static_cast<uint32_t>(kv_bytes.size());
        out.insert(out.end(), kv_bytes.begin(), kv_bytes.end());
        if (opt.kv_flag) {
            f.header.flags |= file_flags::kHasKvMetadata;
        }
    }
    if (opt.sort_index) {
        std::sort(entries.begin(), entries.end(),
                  [](const IndexEntry& a, const IndexEntry& b) { return a.name < b.name; });
        f.header.flags |= file_flags::kSortedIndex;
    }
    if (opt.edit_index) {
        opt.edit_index(entries);
    }
    Bytes index = must(encode_index(entries));
    if (opt.edit_index_bytes) {
        opt.edit_index_bytes(index);
    }
    pad_to(out, kDescriptorAlignment);
    f.trailer.index_offset = out.size();
    f.trailer.index_length = index.size();
    out.insert(out.end(), index.begin(), index.end());
    if (opt.crc) {
        f.header.flags |= file_flags::kHasIndexCrc32c;
        f.trailer.index_crc32c = crc32c(index);
    }
    if (opt.edit_header) {
        opt.edit_header(f.header);
    }
    if (opt.edit_trailer) {
        opt.edit_trailer(f.trailer);
    }
    encode_file_header(f.header, std::span<uint8_t, kFileHeaderSize>(out.data(), kFileHeaderSize));
    f.trailer_offset = out.size();
    out.resize(out.size() + kFileTrailerSize);
    encode_file_trailer(f.trailer, std::span<uint8_t, kFileTrailerSize>(out.data() + f.trailer_offset,
                                                                        kFileTrailerSize));
    f.entries = std::move(entries);
    return f;
}

/// A dense row-major tensor named `name`.
inline TestTensor dense(std::string name, ElementType type, Shape shape) {
    return TestTensor{std::move(name), must(make_dense(type, std::move(shape)))};
}

/// Nested composites: group(2) { partition(2) { p0, p1 }, g1 }, then a plain
/// tensor (file reader tests and the file_reader fuzz seeds).
inline std::vector<TestTensor> nested_composites() {
    const auto head = [](Shape shape, CompositionRule rule, uint32_t members) {
        return must(make_composite_head(ElementType::kFloat32, std::move(shape), rule, members));
    };
    const auto member = [](std::string name, Shape shape, Shape parent, Shape offset) {
        TestTensor t = dense(std::move(name), ElementType::kFloat32, std::move(shape));
        t.desc.shard = ShardDescriptor{parent.to_vector(), offset.to_vector()};
        return t;
    };
    return {TestTensor{"g", head({4, 4}, CompositionRule::kGroup, 2)},
            TestTensor{"p", head({4, 4}, CompositionRule::kPartition, 2)},
            member("p0", {4, 2}, {4, 4}, {0, 0}),
            member("p1", {4, 2}, {4, 4}, {0, 2}),
            dense("g1", ElementType::kInt32, {3}),
            dense("plain", ElementType::kInt8, {2})};
}

/// A file with three small dense tensors and a KV section.
inline BuiltFile small_file(const BuildOptions& opt = {}) {
    KvMetadata kv;
    EXPECT_TRUE(kv.set("general.name", KvValue::string("small")).ok());
    EXPECT_TRUE(kv.set("n", KvValue::int64(3)).ok());
    return build_file({dense("a", ElementType::kFloat32, {2, 3}), dense("b", ElementType::kInt8, {5}),
                       dense("c", ElementType::kUInt16, {4, 2})},
                      &kv, opt);
}

/// Fails unless `r` failed with `code` and a message holding every fragment.
template <typename R>
::testing::AssertionResult Fails(const R& r, ErrorCode code, std::initializer_list<std::string> fragments = {}) {
    if (r.ok()) {
        return ::testing::AssertionFailure() << "accepted; expected " << error_code_name(code);
    }
    if (r.error().code() != code) {
        return ::testing::AssertionFailure() << "got \"" << r.error().to_string() << "\"; expected "
                                             << error_code_name(code);
    }
    for (const std::string& frag : fragments) {
        if (r.error().message().find(frag) == std::string::npos) {
            return ::testing::AssertionFailure() << "message \"" << r.error().message() << "\" lacks \"" << frag
                                                 << "\"";
        }
    }
    return ::testing::AssertionSuccess() << r.error().to_string();
}

}  // namespace hurray::test
