// SPDX-License-Identifier: Apache-2.0
// Test support for the streaming format: tensors to write (generated
// descriptors of every element type, layout and scheme; composites of every
// rule), writing them with StreamWriter, and reading a stream back whole.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "generated_tensors.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/core/layout.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/byte_source.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/stream_reader.hpp"
#include "hurray/io/stream_writer.hpp"

namespace hurray::streamtest {

/// One tensor of a stream (streams carry no names: `name` stays empty).
using Item = hurray_test::GenTensor;
using hurray_test::spans;

/// What a reader must be told to accept the items (their private ids).
struct Known : hurray_test::KnownIds {
    [[nodiscard]] StreamReadOptions options() const {
        StreamReadOptions o;
        o.descriptor = decode_options();
        return o;
    }
    /// The same for a FileReader of a file holding the items.
    [[nodiscard]] FileReadOptions file_options() const {
        FileReadOptions o;
        o.descriptor.known_extension_layouts = layouts;
        o.descriptor.known_private_schemes = schemes;
        return o;
    }
};

/// Generated non-composite descriptors of at most `max_bytes` of data each,
/// with random buffer bytes.
inline std::vector<Item> generated_items(uint64_t first_seed, size_t count, Known& known,
                                         uint64_t max_bytes = 64U << 10U) {
    return hurray_test::generated_tensors(first_seed, count, known, max_bytes);
}

/// A dense float32 member of `parent` at `offset`, filled with `fill`.
inline Item member(Shape shape, Shape parent, Shape offset, std::optional<MemberRole> role = std::nullopt,
                   uint8_t fill = 0x11) {
    return hurray_test::dense_member(std::move(shape), std::move(parent), std::move(offset), role, fill);
}

/// A float32 composite head of `n` members.
inline Item head(Shape shape, CompositionRule rule, uint32_t n, CombineOp op = CombineOp::kNone) {
    return hurray_test::composite_head(std::move(shape), rule, n, op);
}

/// Every composition rule, a plain tensor between composites, nesting to
/// depth 3, an overlay with a correction.
inline std::vector<Item> composite_items() {
    std::vector<Item> items;
    items.push_back(head({4, 4}, CompositionRule::kPartition, 2));
    items.push_back(member({2, 4}, {4, 4}, {0, 0}, std::nullopt, 1));
    items.push_back(member({2, 4}, {4, 4}, {2, 0}, std::nullopt, 2));
    Item plain = member({3}, {3}, {0}, std::nullopt, 3);
    plain.desc.shard.reset();
    items.push_back(plain);
    items.push_back(head({1}, CompositionRule::kGroup, 2));
    Item g0;
    g0.desc = *make_dense(ElementType::kInt8, {5});
    g0.buffers.emplace_back(5, uint8_t{4});
    items.push_back(g0);
    items.push_back(head({2, 2}, CompositionRule::kGroup, 1));
    items.push_back(head({2, 2}, CompositionRule::kPartition, 1));
    items.push_back(member({2, 2}, {2, 2}, {0, 0}, std::nullopt, 5));
    items.push_back(head({4}, CompositionRule::kOverlay, 2, CombineOp::kAdd));
    items.push_back(member({4}, {4}, {0}, MemberRole::kBase, 6));
    items.push_back(member({1}, {4}, {2}, MemberRole::kCorrection, 7));
    return items;
}

/// Empty tensors: zero-sized dimensions, and a tensor between them.
inline std::vector<Item> empty_items() {
    std::vector<Item> items;
    for (const Shape& s : {Shape{0}, Shape{3, 0}, Shape{0, 0, 7}}) {
        Item it;
        it.desc = *make_dense(ElementType::kFloat32, s);
        it.buffers.emplace_back();
        items.push_back(std::move(it));
    }
    return items;
}

/// 30 generated tensors (dense, quantized, sparse, extension layouts) with
/// every composite rule after the tenth and the empty tensors at the end;
/// with `large` > 0, that many more generated tensors of up to 3 MiB each
/// after the fifth.
inline std::vector<Item> mixed_items(Known& known, size_t large = 0) {
    auto items = generated_items(777, 30, known);
    const auto comps = composite_items();
    items.insert(items.begin() + 10, comps.begin(), comps.end());
    const auto empties = empty_items();
    items.insert(items.end(), empties.begin(), empties.end());
    if (large > 0) {
        const auto big = generated_items(4242, large, known, uint64_t{3} << 20);
        items.insert(items.begin() + 5, big.begin(), big.end());
    }
    return items;
}

/// `count` small int16 tensors back to back: tensor i has i % 5 elements,
/// every byte (uint8_t)i.
inline std::vector<Item> many_small_items(uint32_t count) {
    std::vector<Item> items;
    items.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
        Item it;
        it.desc = *make_dense(ElementType::kInt16, {i % 5});
        it.buffers.emplace_back(2 * (i % 5), static_cast<uint8_t>(i));
        items.push_back(std::move(it));
    }
    return items;
}

/// Writes `items` with StreamWriter (whole tensors, or in `piece`-byte pieces).
inline Status write_items(ByteSink& sink, const std::vector<Item>& items, size_t piece = 0,
                          const StreamWriteOptions& options = {}) {
    StreamWriter w(sink, options);
    for (const Item& it : items) {
        if (piece == 0) {
            const auto s = spans(it);
            HURRAY_RETURN_IF_ERROR(w.write_tensor(it.desc, s));
            continue;
        }
        HURRAY_RETURN_IF_ERROR(w.begin_tensor(it.desc));
        std::vector<uint8_t> all;
        for (const auto& b : it.buffers) {
            all.insert(all.end(), b.begin(), b.end());
        }
        for (size_t pos = 0; pos < all.size(); pos += piece) {
            HURRAY_RETURN_IF_ERROR(w.write_data(std::span<const uint8_t>(all).subspan(pos, std::min(piece, all.size() - pos))));
        }
        HURRAY_RETURN_IF_ERROR(w.end_tensor());
    }
    return w.finish();
}

inline std::vector<uint8_t> stream_bytes(const std::vector<Item>& items) {
    MemorySink sink;
    const Status s = write_items(sink, items);
    EXPECT_TRUE(s.ok()) << s.error().to_string();
    return std::move(sink).take();
}

/// Reads a whole stream back: descriptors and buffers, through read_chunk
/// (mode 0), read_data (1), read_tensor (2) or read_into (3), in turns.
inline Result<std::vector<Item>> read_items(ByteSource& source, const StreamReadOptions& options, int mode = 0) {
    StreamReader r(source, options);
    std::vector<Item> out;
    std::vector<uint8_t> scratch(61);
    for (uint64_t k = 0;; ++k) {
        HURRAY_ASSIGN_OR_RETURN(const StreamTensor* t, r.next());
        if (t == nullptr) {
            return out;
        }
        if (t->index != k) {
            return Error(ErrorCode::kInvalidData, "tensor index out of order");
        }
        Item it;
        it.desc = t->descriptor;
        it.buffers.resize(it.desc.buffers.size());
        const int m = mode < 0 ? static_cast<int>(k % 4) : mode;
        if (m == 2) {
            HURRAY_ASSIGN_OR_RETURN(auto bufs, r.read_tensor());
            for (size_t b = 0; b < bufs.size(); ++b) {
                it.buffers[b].assign(bufs[b].data(), bufs[b].data() + bufs[b].size());
            }
        } else if (m == 3) {
            for (size_t b = 0; b < it.buffers.size(); ++b) {
                it.buffers[b].resize(static_cast<size_t>(it.desc.buffers[b].byte_size));
                if (!it.buffers[b].empty()) {
                    HURRAY_RETURN_IF_ERROR(r.read_into(it.buffers[b]));
                }
            }
        } else {
            while (true) {
                if (m == 0) {
                    HURRAY_ASSIGN_OR_RETURN(const StreamChunk c, r.read_chunk());
                    if (c.bytes.empty()) {
                        break;
                    }
                    if (c.offset != it.buffers[c.buffer].size()) {
                        return Error(ErrorCode::kInvalidData, "chunk offset out of order");
                    }
                    it.buffers[c.buffer].insert(it.buffers[c.buffer].end(), c.bytes.begin(), c.bytes.end());
                } else {
                    const uint32_t b = r.data_position().first;
                    HURRAY_ASSIGN_OR_RETURN(const size_t n, r.read_data(scratch));
                    if (n == 0) {
                        break;
                    }
                    it.buffers[b].insert(it.buffers[b].end(), scratch.begin(),
                                         scratch.begin() + static_cast<std::ptrdiff_t>(n));
                }
            }
        }
        out.push_back(std::move(it));
    }
}

}  // namespace hurray::streamtest
