// SPDX-License-Identifier: Apache-2.0
// Property tests of the descriptor codec over generated descriptors
// (descriptor_generator.hpp):
//  - round trip: every valid descriptor encodes, decodes to an equal model and
//    re-encodes to the same bytes; encoded_size, peek_length and encode_to agree;
//  - mutation: bit flips, byte overwrites, truncations, insertions, deletions and
//    edits of length and count fields never crash, and either decode to a model
//    that re-encodes to the consumed bytes or fail with a real error;
//  - bounds: decoding never reads outside the span it is given (ASan builds);
//  - model mutation: perturbed models are accepted by check_descriptor exactly
//    when their encoding decodes back to them, and encode agrees with the check;
//  - regressions for the bugs these tests found.
// Case counts scale with the environment variable HURRAY_PROPERTY_SCALE
// (e.g. HURRAY_PROPERTY_SCALE=20 for a long local run); seeds are fixed, so a
// failure names the seed that reproduces it.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/descriptor_internal.hpp"
#include "descriptor_generator.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/core/describe.hpp"
#include "hurray/core/descriptor_codec.hpp"

namespace {

using hurray::DecodeOptions;
using hurray::ErrorCode;
using hurray::TensorDescriptor;
using hurray_test::GeneratedDescriptor;
using hurray_test::generate_descriptor;
using hurray_test::property_scale;
using hurray_test::Rng;
using Bytes = std::vector<uint8_t>;

// 4 shards x 2,500 = 10,000 generated descriptors round-tripped.
constexpr uint64_t kRoundTripShards = 4;
constexpr uint64_t kRoundTripPerShard = 2500;
// 4 shards x 300 bases x 90 mutations = 108,000 mutated encodings.
constexpr uint64_t kMutationShards = 4;
constexpr uint64_t kMutationBasesPerShard = 300;
constexpr uint64_t kMutationsPerBase = 90;

/// An exact-size heap copy, so that ASan reports any read past its end.
class HeapCopy {
public:
    explicit HeapCopy(std::span<const uint8_t> b) : size_(b.size()), data_(new uint8_t[b.size() == 0 ? 1 : b.size()]) {
        if (!b.empty()) {
            std::memcpy(data_.get(), b.data(), b.size());
        }
    }
    [[nodiscard]] std::span<const uint8_t> span() const { return {data_.get(), size_}; }

private:
    size_t size_;
    std::unique_ptr<uint8_t[]> data_;  // NOLINT(modernize-avoid-c-arrays): exact size, no slack
};

std::string hex_dump(std::span<const uint8_t> b) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string s;
    for (size_t i = 0; i < b.size(); ++i) {
        s += kHex[b[i] >> 4];
        s += kHex[b[i] & 15];
        s += (i % 32 == 31) ? '\n' : ' ';
    }
    return s;
}

std::string context(uint64_t seed, const GeneratedDescriptor& g) {
    return "\nseed " + std::to_string(seed) + ": " + hurray::summarize(g.descriptor) + "\n" +
           hurray::describe(g.descriptor);
}

/// Options of a writer (what encode checks): strict, with its own private
/// layouts and schemes accepted.
DecodeOptions writer_options() {
    DecodeOptions o;
    o.accept_private_extensions = true;
    return o;
}

size_t tiled_depth(const TensorDescriptor& d) {
    const auto* t = std::get_if<hurray::TiledLayout>(&d.layout);
    return t == nullptr ? 0 : t->levels.size();
}

// ---------------------------------------------------------------------------
// Round trip

void round_trip_one(uint64_t seed) {
    const GeneratedDescriptor g = generate_descriptor(seed);
    const TensorDescriptor& d = g.descriptor;
    auto ctx = [&] { return context(seed, g); };
    ASSERT_TRUE(g.generator_error.empty()) << g.generator_error << ctx();

    const DecodeOptions strict = g.options(true);
    const DecodeOptions permissive = g.options(false);
    {
        auto s = hurray::check_descriptor(d, strict);
        ASSERT_TRUE(s.ok()) << s.error().to_string() << ctx();
        auto p = hurray::check_descriptor(d, permissive);
        ASSERT_TRUE(p.ok()) << "permissive mode rejects what strict mode accepts: " << p.error().to_string() << ctx();
        auto def = hurray::check_descriptor(d);
        if (g.default_strict_ok) {
            ASSERT_TRUE(def.ok()) << def.error().to_string() << ctx();
        } else {
            ASSERT_FALSE(def.ok()) << "a private layout or scheme passed without being known" << ctx();
            ASSERT_TRUE(def.error().code() == ErrorCode::kUnsupportedExtensionLayout ||
                        def.error().code() == ErrorCode::kUnknownQuantizationScheme)
                << def.error().to_string() << ctx();
        }
    }

    // encode() checks as a writer: strict, with its own private layouts and
    // schemes accepted (DecodeOptions::accept_private_extensions).
    {
        auto w = hurray::check_descriptor(d, writer_options());
        ASSERT_TRUE(w.ok()) << "a writer's options reject it: " << w.error().to_string() << ctx();
    }
    auto size = hurray::encoded_size(d);
    ASSERT_TRUE(size.ok()) << size.error().to_string() << ctx();
    auto enc = hurray::encode(d);
    ASSERT_TRUE(enc.ok()) << enc.error().to_string() << ctx();
    const Bytes& bytes = *enc;
    {
        auto unchecked = hurray::encode_unchecked(d);
        ASSERT_TRUE(unchecked.ok() && *unchecked == bytes) << ctx();
    }
    ASSERT_EQ(bytes.size(), *size) << ctx();
    ASSERT_GE(bytes.size(), hurray::kFixedHeaderSize);

    // peek_length: from the whole encoding and from its first 10 bytes.
    auto peek = hurray::peek_length(bytes);
    ASSERT_TRUE(peek.ok()) << peek.error().to_string() << ctx();
    ASSERT_EQ(*peek, bytes.size());
    auto peek10 = hurray::peek_length(std::span(bytes).first(hurray::kDescriptorPeekSize));
    ASSERT_TRUE(peek10.ok() && *peek10 == bytes.size()) << ctx();

    // decode from an exact-size heap buffer, strict and permissive.
    const HeapCopy heap(bytes);
    auto dec = hurray::decode(heap.span(), strict);
    ASSERT_TRUE(dec.ok()) << dec.error().to_string() << ctx() << "\n" << hex_dump(bytes);
    ASSERT_TRUE(*dec == d) << "decoded model differs\n" << hurray::describe(*dec) << ctx();
    auto pdec = hurray::decode(heap.span(), permissive);
    ASSERT_TRUE(pdec.ok()) << pdec.error().to_string() << ctx();
    ASSERT_TRUE(*pdec == d) << "permissive model differs\n" << hurray::describe(*pdec) << ctx();

    // encode(decode(bytes)) == bytes.
    auto re = hurray::encode(*dec);
    ASSERT_TRUE(re.ok()) << re.error().to_string() << ctx();
    ASSERT_EQ(*re, bytes) << ctx();

    // Bytes after descriptor_length (tensor data in a stream) are not read.
    Rng r(seed ^ 0xD1B54A32D192ED03ULL);
    Bytes longer = bytes;
    const Bytes tail = r.bytes(static_cast<size_t>(r.range(1, 64)));
    longer.insert(longer.end(), tail.begin(), tail.end());
    auto ldec = hurray::decode(HeapCopy(longer).span(), strict);
    ASSERT_TRUE(ldec.ok()) << ldec.error().to_string() << ctx();
    ASSERT_TRUE(*ldec == d) << ctx();

    {
        // encode_to into an exact-size span and into a larger one.
        Bytes out(bytes.size() + 8, 0xA5);
        auto n = hurray::encode_to(d, std::span(out).first(bytes.size()));
        ASSERT_TRUE(n.ok()) << n.error().to_string() << ctx();
        ASSERT_EQ(*n, bytes.size());
        ASSERT_TRUE(std::equal(bytes.begin(), bytes.end(), out.begin())) << ctx();
        ASSERT_TRUE(std::all_of(out.begin() + static_cast<ptrdiff_t>(bytes.size()), out.end(),
                                [](uint8_t b) { return b == 0xA5; }));
        std::fill(out.begin(), out.end(), 0xA5);
        n = hurray::encode_to(d, out);
        ASSERT_TRUE(n.ok() && *n == bytes.size()) << ctx();
        ASSERT_TRUE(std::equal(bytes.begin(), bytes.end(), out.begin())) << ctx();
        ASSERT_TRUE(std::all_of(out.begin() + static_cast<ptrdiff_t>(bytes.size()), out.end(),
                                [](uint8_t b) { return b == 0xA5; }))
            << "encode_to wrote past the descriptor" << ctx();
        // ... and into a span that is too small: an error, nothing written.
        for (size_t small : {size_t{0}, bytes.size() - 1, static_cast<size_t>(r.below(bytes.size()))}) {
            Bytes tiny(small + 4, 0x5A);
            auto e = hurray::encode_to(d, std::span(tiny).first(small));
            ASSERT_FALSE(e.ok()) << "encode_to accepted " << small << " bytes" << ctx();
            ASSERT_EQ(e.error().code(), ErrorCode::kInvalidArgument) << e.error().to_string();
            ASSERT_FALSE(e.error().message().empty());
            ASSERT_TRUE(std::all_of(tiny.begin(), tiny.end(), [](uint8_t b) { return b == 0x5A; }))
                << "encode_to wrote into a span that is too small" << ctx();
        }
    }

    // Buffer sizes agree with required_buffer_sizes.
    auto req = hurray::required_buffer_sizes(d);
    ASSERT_TRUE(req.ok()) << req.error().to_string() << ctx();
    for (size_t i = 0; i < req->size() && i < d.buffers.size(); ++i) {
        const auto& q = (*req)[i];
        if (q.min_size) {
            if (q.exact) {
                ASSERT_EQ(d.buffers[i].byte_size, *q.min_size) << "buffer " << i << ctx();
            } else {
                ASSERT_GE(d.buffers[i].byte_size, *q.min_size) << "buffer " << i << ctx();
            }
        }
    }
}

void round_trip_shard(uint64_t shard) {
    const uint64_t n = property_scale(kRoundTripPerShard);
    const uint64_t first = shard * n;
    for (uint64_t seed = first; seed < first + n; ++seed) {
        round_trip_one(seed);
        if (testing::Test::HasFatalFailure()) {
            return;  // one reproducible seed is enough
        }
    }
}

TEST(PropertyRoundTrip, Shard0) { round_trip_shard(0); }
TEST(PropertyRoundTrip, Shard1) { round_trip_shard(1); }
TEST(PropertyRoundTrip, Shard2) { round_trip_shard(2); }
TEST(PropertyRoundTrip, Shard3) { round_trip_shard(3); }
static_assert(kRoundTripShards == 4, "one TEST per shard");

// The generator reaches every part of the format (so that the properties above
// are tested where it matters).
TEST(PropertyGenerator, CoversTheFormat) {
    std::set<size_t> layouts;
    std::set<uint8_t> layout_tags;
    std::set<uint8_t> types;
    std::set<uint8_t> schemes;
    std::set<std::pair<uint8_t, uint8_t>> tiled_tags;
    std::map<std::string, uint64_t> seen;
    uint32_t max_rank = 0;
    uint32_t max_tiled_depth = 0;
    const uint64_t n = property_scale(10000);
    for (uint64_t seed = 0; seed < n; ++seed) {
        const GeneratedDescriptor g = generate_descriptor(seed);
        const TensorDescriptor& d = g.descriptor;
        layouts.insert(d.layout.index());
        layout_tags.insert(d.layout_tag());
        types.insert(hurray::type_tag(d.element_type));
        max_rank = std::max(max_rank, d.rank());
        if (d.quantization) {
            schemes.insert(hurray::scheme_tag(d.quantization->scheme));
            ++seen[d.quantization->trailing_padding.empty() ? "quant" : "quant_padding"];
            const auto& s = d.quantization->scheme;
            if (const auto* p = std::get_if<hurray::PerChannelAffine>(&s)) {
                ++seen[!p->zero_point_buffer_index ? "pc_sym"
                       : *p->zero_point_buffer_index == p->scale_buffer_index ? "pc_shared"
                                                                              : "pc_asym"];
            }
            if (const auto* p = std::get_if<hurray::PerBlockAffine>(&s)) {
                ++seen[!p->zero_point_buffer_index ? "pb_sym"
                       : *p->zero_point_buffer_index == p->scale_buffer_index ? "pb_shared"
                                                                              : "pb_asym"];
                if (std::holds_alternative<hurray::BlockPagedLayout>(d.layout)) {
                    ++seen["pb_block_paged"];
                }
            }
            if (const auto* p = std::get_if<hurray::PerChannelAffine>(&s);
                p != nullptr && std::holds_alternative<hurray::BlockPagedLayout>(d.layout)) {
                ++seen[p->axis == 1 ? "pc_block_paged_axis1" : "pc_block_paged_axis2"];
            }
        }
        if (const auto* t = std::get_if<hurray::TiledLayout>(&d.layout)) {
            max_tiled_depth = std::max<uint32_t>(max_tiled_depth, static_cast<uint32_t>(t->levels.size()));
            for (const auto& lv : t->levels) {
                tiled_tags.insert({static_cast<uint8_t>(lv.outer_layout), static_cast<uint8_t>(lv.inner_layout)});
            }
        }
        if (const auto* s = std::get_if<hurray::StridedLayout>(&d.layout)) {
            for (int64_t x : s->strides) {
                ++seen[x < 0 ? "stride_negative" : x == 0 ? "stride_zero" : "stride_positive"];
            }
        }
        if (const auto* b = std::get_if<hurray::BlockPagedLayout>(&d.layout)) {
            ++seen[b->index_type == hurray::BlockTableIndexType::kUInt64 ? "bp_u64" : "bp_u32"];
        }
        if (const auto* c = std::get_if<hurray::CompositeLayout>(&d.layout)) {
            ++seen["composite_rule_" + std::to_string(static_cast<int>(c->rule)) + "_op_" +
                   std::to_string(static_cast<int>(c->combine_op))];
        }
        if (hurray::has_dynamic_dim(d.shape)) {
            ++seen["dynamic"];
        }
        if (std::find(d.shape.begin(), d.shape.end(), 0) != d.shape.end()) {
            ++seen["empty"];
        }
        if (d.rank() == 0) {
            ++seen["scalar"];
        }
        if (d.shard) {
            ++seen["shard"];
        }
        if (d.statistics) {
            ++seen["statistics"];
            if (std::isnan(d.statistics->value_min) || std::isnan(d.statistics->value_mean)) {
                ++seen["statistics_nan"];
            }
        }
        if (d.extension_type) {
            ++seen["extension_type"];
        }
        if (d.composite_member) {
            ++seen["composite_member"];
        }
        if (!d.unknown_trailing_bytes.empty()) {
            ++seen["trailing"];
        }
        if (g.sized_by_builder) {
            ++seen["size_buffers"];
        }
        for (const auto& b : d.buffers) {
            ++seen["device_" + std::to_string(static_cast<int>(b.device_tag) >= 0xF0 ? 0xF0 : static_cast<int>(b.device_tag))];
            if (b.device_tag == hurray::DeviceTag::kCuda) {
                ++seen["cuda_sync_" + std::to_string(static_cast<int>(b.sync_mode))];
            }
            if (hurray::is_private_memory_class(b.memory_class)) {
                ++seen["private_memory_class"];
            }
            if (b.byte_size == 0 && b.alignment < 64) {
                ++seen["empty_small_alignment"];
            }
        }
    }
    EXPECT_EQ(layouts.size(), std::variant_size_v<hurray::LayoutDescriptor>);
    for (const uint8_t t : {0x01, 0x02, 0x03, 0x04, 0x05, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
                            0x20, 0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x48, 0x49, 0x4A, 0x4B, 0x50, 0x51}) {
        if (t != 0x05) {
            EXPECT_TRUE(types.count(t)) << "type tag " << int{t};
        }
    }
    EXPECT_TRUE(std::any_of(types.begin(), types.end(), [](uint8_t t) { return t >= 0xF0; }));
    for (uint8_t s = 1; s <= 5; ++s) {
        EXPECT_TRUE(schemes.count(s)) << "scheme " << int{s};
    }
    EXPECT_TRUE(std::any_of(schemes.begin(), schemes.end(), [](uint8_t s) { return s >= 0xF0; }));
    EXPECT_TRUE(std::any_of(layout_tags.begin(), layout_tags.end(), [](uint8_t t) { return t >= 0xF0; }));
    EXPECT_GE(max_rank, 60U);
    EXPECT_EQ(max_tiled_depth, 8U);
    EXPECT_GE(tiled_tags.size(), 12U);  // 3 outer x (3 inner + tiled)
    for (const char* k : {"quant", "quant_padding", "pc_sym", "pc_shared", "pc_asym", "pb_sym", "pb_shared",
                          "pb_asym", "pb_block_paged", "pc_block_paged_axis1", "pc_block_paged_axis2",
                          "stride_negative", "stride_zero", "stride_positive", "bp_u64", "bp_u32",
                          "composite_rule_1_op_0", "composite_rule_2_op_1", "composite_rule_2_op_2",
                          "composite_rule_3_op_0", "dynamic", "empty", "scalar", "shard", "statistics",
                          "statistics_nan", "extension_type", "composite_member", "trailing", "size_buffers",
                          "device_0", "device_1", "device_240", "cuda_sync_1", "cuda_sync_2",
                          "private_memory_class", "empty_small_alignment"}) {
        EXPECT_GT(seen[k], 0U) << k;
    }
}

// ---------------------------------------------------------------------------
// Mutation

struct Field {
    size_t at;
    size_t width;
};

/// The fields of an encoding worth editing: lengths, counts, tags, flags.
std::vector<Field> fields_of(const TensorDescriptor& d) {
    const hurray::detail::SectionOffsets off = hurray::detail::section_offsets(d);
    std::vector<Field> f = {{4, 1}, {5, 1}, {6, 4}, {10, 4}, {14, 1}, {15, 1}, {16, 4}};
    for (size_t k = 0; k < d.rank() && k < 4; ++k) {
        f.push_back({static_cast<size_t>(off.shape + 8 * k), 8});
    }
    f.push_back({static_cast<size_t>(off.byte_offset), 8});
    for (uint64_t at = off.layout; at < off.buffer_table && at < off.layout + 64; at += 4) {
        f.push_back({static_cast<size_t>(at), 4});  // layout fields: ids, lengths, counts, tags
        f.push_back({static_cast<size_t>(at), 1});
    }
    if (std::holds_alternative<hurray::ExtensionLayout>(d.layout)) {
        f.push_back({static_cast<size_t>(off.layout + 8), 4});  // extension_data_length
        f.push_back({static_cast<size_t>(off.layout + 8), 4});
    }
    f.push_back({static_cast<size_t>(off.buffer_table), 1});  // buffer_count
    f.push_back({static_cast<size_t>(off.buffer_table), 1});
    for (size_t i = 0; i < d.buffers.size() && i < 4; ++i) {
        const auto b = static_cast<size_t>(off.buffer(i));
        f.insert(f.end(), {{b, 8}, {b + 8, 4}, {b + 12, 1}, {b + 13, 1}, {b + 14, 1}, {b + 15, 1}});
    }
    if (d.quantization) {
        const auto q = static_cast<size_t>(off.quantization);
        f.insert(f.end(), {{q, 4}, {q, 4}, {q + 4, 1}, {q + 5, 1}, {q + 6, 2}, {q + 8, 4}, {q + 12, 4},
                           {q + 16, 4}, {q + 20, 4}, {q + 24, 1}});
    }
    if (d.shard) {
        f.push_back({static_cast<size_t>(off.shard), 8});
        f.push_back({static_cast<size_t>(off.shard + 8 * d.rank()), 8});
    }
    if (d.statistics) {
        const auto s = static_cast<size_t>(off.statistics);
        f.insert(f.end(), {{s, 4}, {s + 4, 4}, {s + 8, 8}, {s + 16, 8}, {s + 56, 8}, {s + 64, 1}, {s + 65, 1},
                           {s + 66, 1}, {s + 67, 1}, {s + 68, 4}});
    }
    if (d.extension_type) {
        const auto e = static_cast<size_t>(off.extension_type);
        f.insert(f.end(), {{e, 4}, {e + 4, 1}, {e + 5, 1}, {e + 6, 1}, {e + 7, 1}, {e + 8, 1}, {e + 10, 2},
                           {e + 12, 4}, {e + 16, 1}, {e + 18, 2}});
    }
    if (d.composite_member) {
        const auto c = static_cast<size_t>(off.composite_member);
        f.insert(f.end(), {{c, 1}, {c + 1, 1}, {c + 15, 1}});
    }
    return f;
}

uint64_t get_le(const Bytes& b, size_t at, size_t width) {
    uint64_t v = 0;
    for (size_t i = 0; i < width && at + i < b.size(); ++i) {
        v |= uint64_t{b[at + i]} << (8 * i);
    }
    return v;
}

void put_le(Bytes& b, size_t at, uint64_t v, size_t width) {
    for (size_t i = 0; i < width && at + i < b.size(); ++i) {
        b[at + i] = static_cast<uint8_t>(v >> (8 * i));
    }
}

void fix_length(Bytes& b) {
    if (b.size() >= 10) {
        put_le(b, 6, b.size(), 4);
    }
}

uint64_t edit_value(Rng& r, uint64_t old, size_t width) {
    const uint64_t max = width >= 8 ? UINT64_MAX : (uint64_t{1} << (8 * width)) - 1;
    switch (r.below(10)) {
        case 0: return 0;
        case 1: return max;
        case 2: return old + 1;
        case 3: return old - 1;
        case 4: return old ^ (uint64_t{1} << r.below(8 * width));
        case 5: return r.range(0, 16);
        case 6: return std::vector<uint64_t>{63, 64, 65, 127, 128, 255, 256, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF}[r.below(10)];
        case 7: return old + r.range(1, 64);
        case 8: return old - r.range(1, 64);
        default: return r.u64();
    }
}

enum class Mutation : uint8_t {
    kBitFlip,
    kMultiBitFlip,
    kByteOverwrite,
    kTruncate,
    kTruncateFixLength,
    kLengthEdit,
    kInsert,
    kDelete,
    kFieldEdit,
    kAppend,
    kDuplicate,
    kCount,
};

/// Applies one mutation; returns whether the result must fail as truncated.
bool mutate(Rng& r, Mutation m, Bytes& b, const std::vector<Field>& fields) {
    switch (m) {
        case Mutation::kBitFlip: b[r.below(b.size())] ^= static_cast<uint8_t>(1U << r.below(8)); return false;
        case Mutation::kMultiBitFlip: {
            const uint64_t n = r.range(2, 8);
            const size_t centre = r.below(b.size());
            for (uint64_t i = 0; i < n; ++i) {
                // Clustered half the time (a field), anywhere otherwise.
                const size_t at = r.chance(1, 2) ? std::min(b.size() - 1, centre + r.below(8)) : r.below(b.size());
                b[at] ^= static_cast<uint8_t>(1U << r.below(8));
            }
            return false;
        }
        case Mutation::kByteOverwrite: {
            const uint64_t n = r.range(1, 4);
            for (uint64_t i = 0; i < n; ++i) {
                b[r.below(b.size())] = r.chance(1, 2) ? std::vector<uint8_t>{0x00, 0x01, 0x02, 0x7F, 0x80, 0xF0, 0xFE, 0xFF}[r.below(8)]
                                                      : r.u8();
            }
            return false;
        }
        case Mutation::kTruncate: {
            const auto new_size = static_cast<size_t>(r.below(b.size()));
            b.resize(new_size);
            return get_le(b, 6, 4) > new_size || new_size < 10;  // unless the length field itself changed
        }
        case Mutation::kTruncateFixLength:
            b.resize(static_cast<size_t>(r.below(b.size())));
            fix_length(b);
            return false;
        case Mutation::kLengthEdit: {
            const uint64_t old = get_le(b, 6, 4);
            uint64_t v = 0;
            switch (r.below(6)) {
                case 0: v = old + r.range(1, 16); break;
                case 1: v = old - std::min<uint64_t>(old, r.range(1, 16)); break;
                case 2: v = std::vector<uint64_t>{0, 19, 20, 21, 0xFFFFFFFF, 0x80000000}[r.below(6)]; break;
                default: v = r.range(0, b.size() + 32); break;
            }
            put_le(b, 6, v, 4);
            if (r.chance(1, 2)) {  // make a longer length satisfiable
                const Bytes pad = r.bytes(static_cast<size_t>(r.range(0, 32)));
                b.insert(b.end(), pad.begin(), pad.end());
            }
            return false;
        }
        case Mutation::kInsert: {
            const auto at = static_cast<ptrdiff_t>(r.below(b.size() + 1));
            const Bytes ins = r.chance(1, 2) ? Bytes(static_cast<size_t>(r.range(1, 16)), 0) : r.bytes(static_cast<size_t>(r.range(1, 16)));
            b.insert(b.begin() + at, ins.begin(), ins.end());
            if (r.chance(2, 3)) {
                fix_length(b);
            }
            return false;
        }
        case Mutation::kDelete: {
            const auto at = static_cast<size_t>(r.below(b.size()));
            const auto n = static_cast<size_t>(std::min<uint64_t>(r.range(1, 16), b.size() - at));
            b.erase(b.begin() + static_cast<ptrdiff_t>(at), b.begin() + static_cast<ptrdiff_t>(at + n));
            if (r.chance(2, 3)) {
                fix_length(b);
            }
            return false;
        }
        case Mutation::kFieldEdit: {
            const Field& f = fields[r.below(fields.size())];
            if (f.at + f.width <= b.size()) {
                put_le(b, f.at, edit_value(r, get_le(b, f.at, f.width), f.width), f.width);
            }
            return false;
        }
        case Mutation::kAppend: {
            // Trailing bytes: rejected for version 1.0, kept for a newer minor version.
            const Bytes pad = r.bytes(static_cast<size_t>(r.range(1, 24)));
            b.insert(b.end(), pad.begin(), pad.end());
            if (r.chance(1, 2) && b.size() > 5) {
                b[5] = static_cast<uint8_t>(r.range(1, 255));
            }
            fix_length(b);
            return false;
        }
        case Mutation::kDuplicate: {
            const auto at = static_cast<size_t>(r.below(b.size()));
            const auto n = static_cast<size_t>(std::min<uint64_t>(r.range(1, 32), b.size() - at));
            const Bytes chunk(b.begin() + static_cast<ptrdiff_t>(at), b.begin() + static_cast<ptrdiff_t>(at + n));
            b.insert(b.begin() + static_cast<ptrdiff_t>(r.below(b.size() + 1)), chunk.begin(), chunk.end());
            if (r.chance(2, 3)) {
                fix_length(b);
            }
            return false;
        }
        case Mutation::kCount: break;
    }
    return false;
}

struct MutationStats {
    uint64_t mutations = 0;
    uint64_t decodes = 0;
    uint64_t strict_ok = 0;
    uint64_t permissive_ok = 0;
    std::map<ErrorCode, uint64_t> errors;
};

/// Checks one decode outcome of a mutated input. `strict` tells whether the
/// options were strict; re-encoding must then reproduce the consumed bytes.
void check_outcome(const hurray::Result<TensorDescriptor>& got, std::span<const uint8_t> input,
                   const DecodeOptions& opt, MutationStats& stats, const std::string& where) {
    ++stats.decodes;
    if (!got.ok()) {
        const hurray::Error& e = got.error();
        ++stats.errors[e.code()];
        ASSERT_NE(e.code(), ErrorCode::kOk) << where;
        ASSERT_FALSE(e.message().empty()) << where;
        ASSERT_FALSE(e.to_string().empty()) << where;
        if (e.has_offset()) {
            ASSERT_LE(e.offset(), input.size()) << e.to_string() << where;
        }
        return;
    }
    (opt.strict ? stats.strict_ok : stats.permissive_ok) += 1;
    const TensorDescriptor& d = *got;
    auto len = hurray::peek_length(input);
    ASSERT_TRUE(len.ok()) << where;
    ASSERT_LE(*len, input.size()) << where;
    // The model re-encodes without validation in every mode...
    auto re = hurray::encode_unchecked(d);
    ASSERT_TRUE(re.ok()) << re.error().to_string() << where;
    // ... and decodes again, with the same options, to the same model.
    auto again = hurray::decode(HeapCopy(*re).span(), opt);
    ASSERT_TRUE(again.ok()) << again.error().to_string() << where << "\n" << hurray::describe(d);
    ASSERT_TRUE(*again == d) << where << "\n" << hurray::describe(d) << "\n" << hurray::describe(*again);
    (void)hurray::summarize(d);
    (void)hurray::describe(d);
    if (opt.strict) {
        // A strictly accepted descriptor is canonical: its re-encoding is
        // exactly the consumed prefix.
        ASSERT_EQ(re->size(), *len) << where;
        ASSERT_TRUE(std::equal(re->begin(), re->end(), input.begin()))
            << "re-encoding differs from the input" << where << "\n" << hex_dump(input.first(*len)) << "\n"
            << hex_dump(*re);
        // encode() agrees, or refuses only deeper tiling than its default
        // limit (the options may have allowed more).
        auto enc = hurray::encode(d);
        if (enc.ok()) {
            ASSERT_EQ(*enc, *re) << where;
        } else {
            ASSERT_EQ(enc.error().code(), ErrorCode::kNestingTooDeep) << enc.error().to_string() << where;
            ASSERT_GT(tiled_depth(d), 8U) << where;
        }
        // Strict acceptance implies permissive acceptance of the same model.
        DecodeOptions p = opt;
        p.strict = false;
        auto perm = hurray::decode(input, p);
        ASSERT_TRUE(perm.ok()) << perm.error().to_string() << where;
        ASSERT_TRUE(*perm == d) << where;
    }
}

void mutation_shard(uint64_t shard) {
    MutationStats stats;
    const uint64_t bases = property_scale(kMutationBasesPerShard);
    const uint64_t first = 1'000'000 + shard * bases;
    for (uint64_t seed = first; seed < first + bases; ++seed) {
        const GeneratedDescriptor g = generate_descriptor(seed);
        auto enc = hurray::encode_unchecked(g.descriptor);
        ASSERT_TRUE(enc.ok()) << enc.error().to_string();
        const Bytes& base = *enc;
        const std::vector<Field> fields = fields_of(g.descriptor);
        Rng r(seed ^ 0x5851F42D4C957F2DULL);
        for (uint64_t i = 0; i < kMutationsPerBase; ++i) {
            Bytes b = base;
            bool must_truncate = false;
            const uint64_t rounds = r.chance(1, 4) ? r.range(2, 4) : 1;
            for (uint64_t k = 0; k < rounds && !b.empty(); ++k) {
                const auto m = static_cast<Mutation>(r.below(static_cast<uint64_t>(Mutation::kCount)));
                must_truncate = mutate(r, m, b, fields) && rounds == 1;
            }
            ++stats.mutations;
            const HeapCopy input(b);  // exact size: ASan reports any overread
            const std::string where = "\nseed " + std::to_string(seed) + " mutation " + std::to_string(i);

            const DecodeOptions strict = g.options(true);
            auto s = hurray::decode(input.span(), strict);
            if (must_truncate) {
                ASSERT_FALSE(s.ok()) << where;
                ASSERT_EQ(s.error().code(), ErrorCode::kTruncated) << s.error().to_string() << where;
            }
            check_outcome(s, input.span(), strict, stats, where + " (strict)");
            if (testing::Test::HasFatalFailure()) {
                return;
            }
            const DecodeOptions permissive = g.options(false);
            check_outcome(hurray::decode(input.span(), permissive), input.span(), permissive, stats,
                          where + " (permissive)");
            if (testing::Test::HasFatalFailure()) {
                return;
            }
            // Default options, or an unusual tiling limit.
            DecodeOptions other;
            other.strict = r.chance(1, 2);
            other.max_tiled_depth = r.chance(1, 4) ? static_cast<uint32_t>(r.range(0, 10)) : 8;
            check_outcome(hurray::decode(input.span(), other), input.span(), other, stats, where + " (other)");
            if (testing::Test::HasFatalFailure()) {
                return;
            }
            (void)hurray::peek_length(input.span());
        }
    }
    // Most mutations are rejected, but enough survive to exercise re-encoding.
    EXPECT_GE(stats.mutations, property_scale(kMutationBasesPerShard) * kMutationsPerBase);
    EXPECT_GT(stats.strict_ok, stats.mutations / 100) << "too few mutations decode";
    EXPECT_GT(stats.permissive_ok, stats.mutations / 100);
    EXPECT_GE(stats.errors.size(), 15U) << "mutations reach too few error codes";
    std::string summary = "mutations " + std::to_string(stats.mutations) + ", decodes " +
                          std::to_string(stats.decodes) + ", strict ok " + std::to_string(stats.strict_ok) +
                          ", permissive ok " + std::to_string(stats.permissive_ok) + ", error codes";
    for (const auto& [code, n] : stats.errors) {
        summary += " " + std::string(hurray::error_code_name(code)) + "=" + std::to_string(n);
    }
    testing::Test::RecordProperty("summary", summary);
    std::printf("[ stats    ] %s\n", summary.c_str());
}

TEST(PropertyMutation, Shard0) { mutation_shard(0); }
TEST(PropertyMutation, Shard1) { mutation_shard(1); }
TEST(PropertyMutation, Shard2) { mutation_shard(2); }
TEST(PropertyMutation, Shard3) { mutation_shard(3); }
static_assert(kMutationShards == 4, "one TEST per shard");

// ---------------------------------------------------------------------------
// Bounds: every proper prefix of a valid encoding, in an exact-size heap
// buffer, is rejected as truncated; with descriptor_length patched to the
// prefix length it is rejected too (or, for a newer minor version whose cut
// falls inside the trailing bytes, accepted). ASan checks no read leaves the span.

TEST(PropertyBounds, PrefixesAreRejectedWithoutReadingPastTheSpan) {
    const uint64_t n = property_scale(300);
    uint64_t decodes = 0;
    for (uint64_t seed = 2'000'000; seed < 2'000'000 + n; ++seed) {
        const GeneratedDescriptor g = generate_descriptor(seed);
        auto enc = hurray::encode_unchecked(g.descriptor);
        ASSERT_TRUE(enc.ok());
        const Bytes& bytes = *enc;
        const DecodeOptions strict = g.options(true);
        const DecodeOptions permissive = g.options(false);
        const uint64_t trailing_start = bytes.size() - g.descriptor.unknown_trailing_bytes.size();
        for (size_t k = 0; k < bytes.size(); ++k) {
            const HeapCopy prefix(std::span<const uint8_t>(bytes).first(k));
            for (const DecodeOptions* opt : {&strict, &permissive}) {
                auto d = hurray::decode(prefix.span(), *opt);
                ++decodes;
                ASSERT_FALSE(d.ok()) << "seed " << seed << " prefix " << k;
                ASSERT_EQ(d.error().code(), ErrorCode::kTruncated) << d.error().to_string();
            }
            if (k >= hurray::kDescriptorPeekSize) {
                Bytes fixed(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(k));
                fix_length(fixed);
                const HeapCopy h(fixed);
                auto d = hurray::decode(h.span(), strict);
                ++decodes;
                if (d.ok()) {
                    ASSERT_GT(g.descriptor.version_minor, 0) << "seed " << seed << " prefix " << k;
                    ASSERT_GE(k, trailing_start) << "seed " << seed << " prefix " << k;
                } else {
                    ASSERT_NE(d.error().code(), ErrorCode::kOk);
                }
                (void)hurray::decode(h.span(), permissive);
            }
        }
        // peek_length from exact-size prefixes of the first 10 bytes.
        for (size_t k = 0; k <= hurray::kDescriptorPeekSize; ++k) {
            const HeapCopy prefix(std::span<const uint8_t>(bytes).first(k));
            auto len = hurray::peek_length(prefix.span());
            ASSERT_EQ(len.ok(), k == hurray::kDescriptorPeekSize) << k;
        }
    }
    EXPECT_GT(decodes, n * 100);
}


// ---------------------------------------------------------------------------
// Model mutation: perturb one or two fields of a valid model (often just
// across a validity boundary) and compare the model check with the wire:
//  - check_descriptor accepts  =>  the encoding decodes to the same model;
//  - the encoding decodes to the same model  =>  check_descriptor accepts.
// (A perturbed model that decodes to a *different* model is a non-canonical
// form, e.g. an opaque scheme using an assigned tag; no claim is made there.)

int64_t nudge_signed(Rng& r, int64_t v) {
    switch (r.below(6)) {
        case 0: return 0;
        case 1: return -v;
        case 2: return v + 1;
        case 3: return v - 1;
        case 4: return r.chance(1, 2) ? INT64_MIN : INT64_MAX;
        default: return static_cast<int64_t>(r.u64());
    }
}

uint64_t nudge(Rng& r, uint64_t v) {
    switch (r.below(8)) {
        case 0: return 0;
        case 1: return v + 1;
        case 2: return v - 1;
        case 3: return v * 2;
        case 4: return v / 2;
        case 5: return hurray::kDynamicDim;
        case 6: return r.range(0, 64);
        default: return r.u64();
    }
}

uint32_t nudge32(Rng& r, uint32_t v) {
    return r.chance(1, 4) ? 0xFFFFFFFF : static_cast<uint32_t>(nudge(r, v));
}

void perturb_layout(Rng& r, TensorDescriptor& d) {
    std::visit(
        [&](auto& l) {
            using L = std::decay_t<decltype(l)>;
            if constexpr (std::is_same_v<L, hurray::StridedLayout>) {
                if (!l.strides.empty() && r.chance(4, 5)) {
                    auto& s = l.strides[r.below(l.strides.size())];
                    s = nudge_signed(r, s);
                } else {
                    l.strides.push_back(1);
                }
            } else if constexpr (std::is_same_v<L, hurray::TiledLayout>) {
                auto& lv = l.levels[r.below(l.levels.size())];
                switch (r.below(5)) {
                    case 0:
                        if (!lv.tile_shape.empty()) {
                            auto& t = lv.tile_shape[r.below(lv.tile_shape.size())];
                            t = nudge(r, t);
                        }
                        break;
                    case 1: lv.outer_layout = static_cast<hurray::LayoutTag>(r.range(0, 5)); break;
                    case 2: lv.inner_layout = static_cast<hurray::LayoutTag>(r.range(0, 5)); break;
                    case 3:
                        if (!lv.inner_strides.empty()) {
                            auto& s = lv.inner_strides[r.below(lv.inner_strides.size())];
                            s = nudge_signed(r, s);
                        } else if (!lv.outer_strides.empty()) {
                            auto& s = lv.outer_strides[r.below(lv.outer_strides.size())];
                            s = nudge_signed(r, s);
                        }
                        break;
                    default:
                        if (r.chance(1, 2)) {
                            l.levels.push_back(l.levels.back());
                        } else if (l.levels.size() > 1) {
                            l.levels.pop_back();
                        }
                        break;
                }
            } else if constexpr (std::is_same_v<L, hurray::MortonLayout>) {
                if (!l.morton_bits.empty()) {
                    auto& b = l.morton_bits[r.below(l.morton_bits.size())];
                    b = static_cast<uint32_t>(r.chance(1, 2) ? b - 1 : r.range(0, 64));
                }
            } else if constexpr (std::is_same_v<L, hurray::CooLayout> || std::is_same_v<L, hurray::CsrLayout> ||
                                 std::is_same_v<L, hurray::CscLayout>) {
                l.nnz = nudge(r, l.nnz);
            } else if constexpr (std::is_same_v<L, hurray::CsfLayout>) {
                if (r.chance(1, 2) || l.mode_order.empty()) {
                    l.nnz = nudge(r, l.nnz);
                } else {
                    l.mode_order[r.below(l.mode_order.size())] = static_cast<uint32_t>(r.range(0, l.mode_order.size()));
                }
            } else if constexpr (std::is_same_v<L, hurray::BlockPagedLayout>) {
                switch (r.below(7)) {
                    case 0: l.page_size = nudge32(r, l.page_size); break;
                    case 1: l.num_pages = nudge(r, l.num_pages); break;
                    case 2: l.paged_axis = static_cast<uint32_t>(r.range(0, 3)); break;
                    case 3: l.num_seqs = nudge32(r, l.num_seqs); break;
                    case 4: l.kv_role = static_cast<hurray::KvRole>(r.range(0, 4)); break;
                    case 5: l.index_type = static_cast<hurray::BlockTableIndexType>(r.range(0, 2)); break;
                    default: l.layer_index = nudge32(r, l.layer_index); break;
                }
            } else if constexpr (std::is_same_v<L, hurray::CompositeLayout>) {
                switch (r.below(3)) {
                    case 0: l.rule = static_cast<hurray::CompositionRule>(r.chance(1, 2) ? r.range(0, 5) : r.range(0xEF, 0xFF)); break;
                    case 1: l.combine_op = static_cast<hurray::CombineOp>(r.range(0, 3)); break;
                    default: l.member_count = nudge32(r, l.member_count); break;
                }
            } else if constexpr (std::is_same_v<L, hurray::HilbertLayout>) {
                if (r.chance(1, 2)) {
                    l.hilbert_order = nudge32(r, l.hilbert_order);
                } else {
                    l.hilbert_rank = nudge32(r, l.hilbert_rank);
                }
            } else if constexpr (std::is_same_v<L, hurray::ExtensionLayout>) {
                if (r.chance(1, 2)) {
                    l.tag = static_cast<uint8_t>(r.range(0xEE, 0xFF));
                } else {
                    l.layout_id = r.u64();
                }
            } else {
                // Row- and column-major have no fields: switch the layout instead.
                d.layout = r.chance(1, 2) ? hurray::LayoutDescriptor{hurray::ColumnMajorLayout{}}
                                          : hurray::LayoutDescriptor{hurray::RowMajorLayout{}};
            }
        },
        d.layout);
}

void perturb_quantization(Rng& r, TensorDescriptor& d) {
    if (!d.quantization || r.chance(1, 8)) {
        if (d.quantization) {
            d.quantization.reset();
        } else {
            d.quantization = hurray::QuantizationDescriptor{hurray::PerTensorAffine{}, {}};
        }
        return;
    }
    std::visit(
        [&](auto& s) {
            using S = std::decay_t<decltype(s)>;
            if constexpr (std::is_same_v<S, hurray::PerTensorAffine>) {
                switch (r.below(3)) {
                    case 0: s.scale = std::bit_cast<float>(r.u32()); break;
                    case 1: s.scale = r.chance(1, 2) ? 0.0F : -0.0F; break;
                    default: s.zero_point = static_cast<int32_t>(nudge(r, static_cast<uint64_t>(s.zero_point))); break;
                }
            } else if constexpr (std::is_same_v<S, hurray::OpaqueQuantization>) {
                switch (r.below(3)) {
                    case 0: s.scheme_tag = r.u8(); break;
                    case 1: s.payload.push_back(r.u8()); break;
                    default: s.flags = static_cast<uint16_t>(r.u32()); break;
                }
            } else {
                switch (r.below(5)) {
                    case 0: s.axis = nudge32(r, s.axis); break;
                    case 1: s.scale_buffer_index = nudge32(r, s.scale_buffer_index); break;
                    case 2:
                        if constexpr (requires { s.block_size; }) {
                            s.block_size = r.chance(1, 2) ? s.block_size * 2 : nudge32(r, s.block_size);
                        }
                        break;
                    case 3:
                        if constexpr (requires { s.zero_point_buffer_index; }) {
                            if (s.zero_point_buffer_index) {
                                s.zero_point_buffer_index = r.chance(1, 2) ? std::nullopt
                                                                           : std::optional<uint32_t>(nudge32(r, *s.zero_point_buffer_index));
                            } else {
                                s.zero_point_buffer_index = s.scale_buffer_index + static_cast<uint32_t>(r.range(0, 1));
                            }
                        }
                        break;
                    default:
                        if constexpr (requires { s.scale_type; }) {
                            s.scale_type = static_cast<hurray::ElementType>(r.range(0, 5));
                        }
                        break;
                }
            }
        },
        d.quantization->scheme);
    if (r.chance(1, 10)) {
        d.quantization->trailing_padding.push_back(r.u8());
    }
}

void perturb(Rng& r, TensorDescriptor& d) {
    switch (r.below(14)) {
        case 0: d.element_type = static_cast<hurray::ElementType>(r.u8()); break;
        case 1:
            if (!d.shape.empty()) {
                auto& s = d.shape[r.below(d.shape.size())];
                s = nudge(r, s);
            } else {
                d.shape.push_back(1);
            }
            break;
        case 2: d.byte_offset = r.chance(1, 2) ? d.byte_offset + (r.chance(1, 2) ? 1 : -1) : nudge(r, d.byte_offset); break;
        case 3:
        case 4: {
            if (d.buffers.empty() || r.chance(1, 8)) {
                if (r.chance(1, 2) || d.buffers.empty()) {
                    d.buffers.push_back(d.buffers.empty() ? hurray::BufferHandle{} : d.buffers.back());
                } else {
                    d.buffers.pop_back();
                }
                break;
            }
            auto& b = d.buffers[r.below(d.buffers.size())];
            switch (r.below(6)) {
                case 0: b.byte_size = r.chance(2, 3) ? b.byte_size + (r.chance(1, 2) ? 1 : -1) : nudge(r, b.byte_size); break;
                case 1: b.alignment = r.chance(1, 2) ? uint32_t{1} << r.range(0, 31) : r.u32(); break;
                case 2: b.device_tag = static_cast<hurray::DeviceTag>(r.chance(1, 2) ? r.range(0, 10) : r.u8()); break;
                case 3: b.sync_mode = static_cast<hurray::SyncMode>(r.range(0, 3)); break;
                case 4: b.memory_class = static_cast<hurray::MemoryClass>(r.chance(1, 2) ? r.range(0, 5) : r.u8()); break;
                default: b.byte_size = 0; break;
            }
            break;
        }
        case 5:
        case 6: perturb_layout(r, d); break;
        case 7:
        case 8: perturb_quantization(r, d); break;
        case 9:
            if (d.shard && r.chance(4, 5) && !d.shard->parent_shape.empty()) {
                const size_t k = r.below(d.shard->parent_shape.size());
                auto& v = r.chance(1, 2) ? d.shard->parent_shape[k] : d.shard->shard_offset[k];
                v = r.chance(1, 2) ? v + (r.chance(1, 2) ? 1 : -1) : nudge(r, v);
            } else if (d.shard) {
                d.shard.reset();
            } else {
                d.shard = hurray::ShardDescriptor{d.shape.to_vector(), std::vector<uint64_t>(d.shape.size(), 0)};
            }
            break;
        case 10: {
            if (!d.statistics) {
                d.statistics = hurray::Statistics{};
            }
            auto& s = *d.statistics;
            switch (r.below(6)) {
                case 0: s.computed_mask = r.chance(1, 2) ? s.computed_mask ^ (1U << r.below(8)) : r.u32(); break;
                case 1: s.sparsity_ratio = std::bit_cast<double>(r.u64()); break;
                case 2: s.value_stddev = r.chance(1, 2) ? -1.0 : std::bit_cast<double>(r.u64()); break;
                case 3: s.nm_n = r.u8(); break;
                case 4: s.nnz = nudge(r, s.nnz); break;
                default: d.statistics.reset(); break;
            }
            break;
        }
        case 11: {
            if (!d.extension_type || r.chance(1, 8)) {
                d.extension_type = d.extension_type ? std::nullopt
                                                    : std::optional<hurray::ExtensionTypeDescriptor>(hurray::ExtensionTypeDescriptor{});
                break;
            }
            auto& e = *d.extension_type;
            switch (r.below(6)) {
                case 0: e.bit_width = static_cast<uint32_t>(r.chance(1, 2) ? r.range(0, 17) : r.u32()); break;
                case 1: e.packing_factor = r.u8(); break;
                case 2: e.is_float = !e.is_float; break;
                case 3: e.is_signed = !e.is_signed; break;
                case 4: e.sign_bits = static_cast<uint8_t>(r.range(0, 2)); break;
                default: e.exponent_bias = r.u32(); break;
            }
            break;
        }
        case 12:
            if (d.composite_member && r.chance(1, 2)) {
                d.composite_member->role = static_cast<hurray::MemberRole>(r.range(0, 3));
            } else {
                d.composite_member = d.composite_member ? std::nullopt : std::optional<hurray::CompositeMember>(hurray::CompositeMember{});
            }
            break;
        default:
            switch (r.below(3)) {
                case 0: d.version_major = static_cast<uint8_t>(r.range(0, 2)); break;
                case 1: d.version_minor = static_cast<uint8_t>(r.range(0, 2)); break;
                default: d.unknown_trailing_bytes.push_back(r.u8()); break;
            }
            break;
    }
}

// 2 shards x 1,000 bases x 10 perturbations = 20,000 perturbed models.
void model_mutation_shard(uint64_t shard) {
    const uint64_t bases = property_scale(1000);
    constexpr uint64_t kPerBase = 10;
    uint64_t accepted = 0;
    uint64_t rejected = 0;
    uint64_t non_canonical = 0;
    const uint64_t first = 3'000'000 + shard * bases;
    for (uint64_t seed = first; seed < first + bases; ++seed) {
        const GeneratedDescriptor g = generate_descriptor(seed);
        Rng r(seed ^ 0x2545F4914F6CDD1DULL);
        for (uint64_t i = 0; i < kPerBase; ++i) {
            TensorDescriptor d = g.descriptor;
            const uint64_t rounds = r.chance(1, 3) ? 2 : 1;
            for (uint64_t k = 0; k < rounds; ++k) {
                perturb(r, d);
            }
            const DecodeOptions opt = g.options(r.chance(3, 4));
            const std::string where = "\nseed " + std::to_string(seed) + " perturbation " + std::to_string(i) +
                                      (opt.strict ? " (strict)" : " (permissive)") + "\n" + hurray::describe(d);
            const auto check = hurray::check_descriptor(d, opt);
            const auto raw = hurray::encode_unchecked(d);
            if (!raw.ok()) {
                ASSERT_FALSE(check.ok()) << "accepted but not encodable: " << raw.error().to_string() << where;
                ++rejected;
                continue;
            }
            const auto dec = hurray::decode(HeapCopy(*raw).span(), opt);
            if (check.ok()) {
                ++accepted;
                ASSERT_TRUE(dec.ok()) << "check accepts, decode rejects: " << dec.error().to_string() << where;
                ASSERT_TRUE(*dec == d) << "decoded model differs" << where << "\n" << hurray::describe(*dec);
            } else {
                ++rejected;
                ASSERT_NE(check.error().code(), ErrorCode::kOk);
                ASSERT_FALSE(check.error().message().empty());
                if (dec.ok()) {
                    ASSERT_FALSE(*dec == d) << "decode accepts what check rejects: " << check.error().to_string()
                                            << where;
                    ++non_canonical;
                }
            }
            // encode() writes exactly what a writer's check accepts.
            const auto wcheck = hurray::check_descriptor(d, writer_options());
            const auto e = hurray::encode(d);
            ASSERT_EQ(e.ok(), wcheck.ok()) << (e.ok() ? wcheck.error().to_string() : e.error().to_string()) << where;
            if (e.ok()) {
                ASSERT_EQ(*e, *raw) << where;
            }
        }
    }
    EXPECT_GT(accepted, bases);      // many perturbations keep the descriptor valid...
    EXPECT_GT(rejected, bases * 3);  // ... and many cross a rule
    std::printf("[ stats    ] model perturbations: %llu accepted, %llu rejected (%llu decode to another model)\n",
                static_cast<unsigned long long>(accepted), static_cast<unsigned long long>(rejected),
                static_cast<unsigned long long>(non_canonical));
}

TEST(PropertyModelMutation, CheckAgreesWithTheWireShard0) { model_mutation_shard(0); }
TEST(PropertyModelMutation, CheckAgreesWithTheWireShard1) { model_mutation_shard(1); }

// ---------------------------------------------------------------------------
// Regressions: bugs found by the property tests and the fuzzer.

namespace regression {

using hurray::BufferHandle;
using hurray::ElementType;

/// Rejected by check_descriptor, by encode, and by decode of the unchecked bytes.
void expect_rejected_everywhere(const TensorDescriptor& d, std::optional<ErrorCode> code = std::nullopt) {
    auto st = hurray::check_descriptor(d);
    ASSERT_FALSE(st.ok()) << hurray::describe(d);
    if (code) {
        EXPECT_EQ(st.error().code(), *code) << st.error().to_string();
    }
    auto enc = hurray::encode(d);
    EXPECT_FALSE(enc.ok());
    auto raw = hurray::encode_unchecked(d);
    ASSERT_TRUE(raw.ok());
    for (const bool strict : {true, false}) {
        auto dec = hurray::decode(*raw, DecodeOptions{.strict = strict});
        ASSERT_FALSE(dec.ok()) << "strict=" << strict;
        if (code) {
            EXPECT_EQ(dec.error().code(), *code) << dec.error().to_string();
        }
    }
}

// strided.md § Buffer bounds: negative strides may reach below element
// [0,...,0] only as far as byte_offset. A reach of 2^64 elements or more was
// truncated to 64 bits (descriptor_check.cpp, check_buffer_sizes) and read as
// "nothing below", so byte_offset 0 passed.
TEST(PropertyRegression, NegativeStrideReachOf2To64ElementsIsRejected) {
    TensorDescriptor d;
    d.element_type = ElementType::kInt8;
    d.shape = {5};
    d.layout = hurray::StridedLayout{{-(int64_t{1} << 62)}};  // 4 * -2^62 = -2^64 elements
    d.buffers = {BufferHandle{.byte_size = 1}};
    expect_rejected_everywhere(d);
    d.shape = {3};
    d.layout = hurray::StridedLayout{{INT64_MIN}};  // 2 * -2^63 = -2^64
    expect_rejected_everywhere(d);
    d.shape = {2, 3};
    d.layout = hurray::StridedLayout{{INT64_MIN, INT64_MIN}};  // -2^63 - 2^64
    d.byte_offset = 1;
    d.buffers = {BufferHandle{.byte_size = 2}};
    expect_rejected_everywhere(d);
    // Just below 2^64 elements: the byte_offset check itself rejects it.
    d.shape = {3};
    d.layout = hurray::StridedLayout{{INT64_MIN + 1}};
    expect_rejected_everywhere(d, ErrorCode::kByteOffsetOutOfRange);
}

// per-channel-affine.md / per-block-affine.md § Referenced Buffers: a reader
// MUST reject a scale_buffer_index or (without SYMMETRIC) zero_point_buffer_index
// >= buffer_count. 0xFFFFFFFF doubled as the checker's "no buffer" marker, so
// such indices skipped every index check.
TEST(PropertyRegression, ParameterBufferIndexAllOnesIsRejected) {
    constexpr uint32_t kAllOnes = 0xFFFFFFFF;
    {
        TensorDescriptor d;
        d.element_type = ElementType::kInt8;
        d.shape = {4, 4};
        hurray::PerChannelAffine p;
        p.axis = 0;
        p.scale_buffer_index = 1;
        p.zero_point_buffer_index = kAllOnes;  // asymmetric, flags 0
        d.quantization = hurray::QuantizationDescriptor{p, {}};
        d.buffers = {BufferHandle{.byte_size = 16}, BufferHandle{.byte_size = 16}};
        expect_rejected_everywhere(d, ErrorCode::kInvalidQuantizationBuffer);
        p.scale_buffer_index = kAllOnes;
        p.zero_point_buffer_index.reset();
        d.quantization = hurray::QuantizationDescriptor{p, {}};
        d.buffers = {BufferHandle{.byte_size = 16}};
        expect_rejected_everywhere(d, ErrorCode::kInvalidQuantizationBuffer);
    }
    {
        TensorDescriptor d;
        d.element_type = ElementType::kInt8;
        d.shape = {4, 16};
        hurray::PerBlockAffine p;
        p.axis = 1;
        p.block_size = 8;
        p.scale_buffer_index = 1;
        p.zero_point_buffer_index = kAllOnes;
        d.quantization = hurray::QuantizationDescriptor{p, {}};
        d.buffers = {BufferHandle{.byte_size = 64}, BufferHandle{.byte_size = 16}};
        expect_rejected_everywhere(d, ErrorCode::kInvalidQuantizationBuffer);
        p.scale_buffer_index = kAllOnes;
        p.zero_point_buffer_index.reset();
        d.quantization = hurray::QuantizationDescriptor{p, {}};
        d.buffers = {BufferHandle{.byte_size = 64}};
        expect_rejected_everywhere(d, ErrorCode::kInvalidQuantizationBuffer);
    }
    {
        TensorDescriptor d;
        d.element_type = ElementType::kUInt4;
        d.shape = {4, 8};
        d.quantization = hurray::QuantizationDescriptor{hurray::Nf4Quantization{1, 8, kAllOnes}, {}};
        d.buffers = {BufferHandle{.byte_size = 16}};
        expect_rejected_everywhere(d, ErrorCode::kInvalidQuantizationBuffer);
        d.element_type = ElementType::kInt8;
        d.shape = {4, 16};
        d.quantization = hurray::QuantizationDescriptor{hurray::MxfpQuantization{1, 16, kAllOnes}, {}};
        d.buffers = {BufferHandle{.byte_size = 64}};
        expect_rejected_everywhere(d, ErrorCode::kInvalidQuantizationBuffer);
    }
}

// required_buffer_sizes promises a buffer table; index 255 cannot be in one
// (buffer_count <= 255), yet it produced 256 requirements.
TEST(PropertyRegression, RequiredBufferSizesRejectsParameterIndex255) {
    TensorDescriptor d;
    d.element_type = ElementType::kInt8;
    d.shape = {4, 4};
    hurray::PerChannelAffine p;
    p.axis = 0;
    p.scale_buffer_index = 255;
    d.quantization = hurray::QuantizationDescriptor{p, {}};
    auto req = hurray::required_buffer_sizes(d);
    ASSERT_FALSE(req.ok());
    EXPECT_EQ(req.error().code(), ErrorCode::kInvalidQuantizationBuffer);
    p.scale_buffer_index = 254;
    d.quantization = hurray::QuantizationDescriptor{p, {}};
    req = hurray::required_buffer_sizes(d);
    ASSERT_TRUE(req.ok()) << req.error().to_string();
    EXPECT_EQ(req->size(), 255U);
}

// A model with padding after an opaque scheme's payload encoded to the same
// bytes as one with a longer payload, and decoded as the latter: check accepted
// a model that does not survive a round trip (found by PropertyModelMutation).
TEST(PropertyRegression, OpaqueSchemeWithTrailingPaddingIsRejected) {
    TensorDescriptor d;
    d.element_type = ElementType::kInt8;
    d.shape = {4};
    hurray::OpaqueQuantization o;
    o.scheme_tag = 0xF3;
    o.payload = {1, 2, 3};
    d.quantization = hurray::QuantizationDescriptor{o, {4, 5}};
    d.buffers = {BufferHandle{.byte_size = 4}};
    const uint8_t known[] = {0xF3};
    for (const bool strict : {true, false}) {
        auto st = hurray::check_descriptor(d, DecodeOptions{.strict = strict, .known_private_schemes = known});
        ASSERT_FALSE(st.ok());
        EXPECT_EQ(st.error().code(), ErrorCode::kInvalidQuantization) << st.error().to_string();
    }
    EXPECT_FALSE(hurray::encode(d).ok());
    // The canonical form (every byte in the payload) round-trips.
    auto raw = hurray::encode_unchecked(d);
    ASSERT_TRUE(raw.ok());
    auto back = hurray::decode(*raw, DecodeOptions{.known_private_schemes = known});
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    const auto& payload = std::get<hurray::OpaqueQuantization>(back->quantization->scheme).payload;
    EXPECT_EQ(payload, (std::vector<uint8_t>{1, 2, 3, 4, 5}));
    EXPECT_TRUE(back->quantization->trailing_padding.empty());
    auto again = hurray::encode(*back);
    ASSERT_TRUE(again.ok()) << again.error().to_string();
    EXPECT_EQ(*again, *raw);
}

}  // namespace regression

}  // namespace
