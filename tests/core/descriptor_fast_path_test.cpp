// SPDX-License-Identifier: Apache-2.0
// The one-pass decode and check of plain dense descriptors against the
// general parser and the full check (differential: same model, or the same
// error with the same code, message and offset), on generated descriptors
// and on random mutations of plain ones; and the allocations they make,
// counted by a replacement of the global operator new in this binary.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "core/descriptor_internal.hpp"
#include "counting_allocator.hpp"
#include "descriptor_generator.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/core/descriptor_codec.hpp"

using hurray_test::allocations_in;

namespace hurray {
namespace {

using hurray_test::Rng;

/// Decode with the fast path and with the general parser agree on `bytes`.
::testing::AssertionResult same_decode(std::span<const uint8_t> bytes, const DecodeOptions& o) {
    auto fast = decode(bytes, o);
    auto general = detail::decode_general(bytes, o);
    if (fast.ok() != general.ok()) {
        return ::testing::AssertionFailure()
               << "fast " << (fast.ok() ? "accepts" : fast.error().to_string()) << ", general "
               << (general.ok() ? "accepts" : general.error().to_string());
    }
    if (fast.ok()) {
        if (!(*fast == *general)) {
            return ::testing::AssertionFailure() << "the models differ";
        }
        return ::testing::AssertionSuccess();
    }
    if (fast.error().code() != general.error().code() ||
        fast.error().message() != general.error().message() ||
        fast.error().offset() != general.error().offset()) {
        return ::testing::AssertionFailure() << "fast: " << fast.error().to_string()
                                             << "; general: " << general.error().to_string();
    }
    return ::testing::AssertionSuccess();
}

/// Whatever the one-pass check accepts, the full check accepts in both modes.
::testing::AssertionResult fast_check_sound(const TensorDescriptor& d) {
    if (!detail::plain_dense_valid(d)) {
        return ::testing::AssertionSuccess();
    }
    const auto off = detail::section_offsets(d);
    for (const bool strict : {true, false}) {
        DecodeOptions o;
        o.strict = strict;
        if (auto s = detail::check_descriptor_full(d, o, off); !s) {
            return ::testing::AssertionFailure()
                   << "fast check accepts, full check says " << s.error().to_string();
        }
    }
    return ::testing::AssertionSuccess();
}

/// A plain dense descriptor: random type, rank 0-5, row or column major,
/// byte_offset and buffer size near the exact fit.
TensorDescriptor random_plain(Rng& rng) {
    static const std::vector<ElementType> kTypes = {
        ElementType::kFloat32, ElementType::kFloat16, ElementType::kBFloat16, ElementType::kInt8,
        ElementType::kUInt8,   ElementType::kInt4,    ElementType::kUInt4,    ElementType::kBool,
        ElementType::kInt64,   ElementType::kFloat64, ElementType::kUInt2,    ElementType::kInt32};
    Shape shape(static_cast<size_t>(rng.below(6)));
    for (uint64_t& dim : shape) {
        dim = rng.chance(1, 20) ? 0 : rng.range(1, 9);
    }
    TensorDescriptor d;
    d.element_type = rng.pick(kTypes);
    d.shape = shape;
    if (!shape.empty() && rng.chance(1, 3)) {
        d.layout = ColumnMajorLayout{};
    }
    if (!shape.empty() && rng.chance(1, 2)) {
        // Per-block affine: scales in buffer 1, zero points in buffer 2 unless symmetric.
        static const std::vector<ElementType> kStorage = {ElementType::kInt8, ElementType::kUInt8,
                                                          ElementType::kInt4, ElementType::kUInt4,
                                                          ElementType::kInt2, ElementType::kUInt2};
        static const std::vector<ElementType> kScales = {
            ElementType::kFloat16, ElementType::kBFloat16, ElementType::kFloat32};
        const auto axis = static_cast<uint32_t>(rng.below(shape.size()));
        shape[axis] = rng.range(1, 40);
        const auto block = static_cast<uint32_t>(uint64_t{1} << rng.range(1, 4));
        auto q = make_per_block_quantized(rng.pick(kStorage), shape, axis, block, rng.pick(kScales),
                                          rng.chance(1, 2));
        if (q.ok()) {
            if (rng.chance(1, 4)) {
                q->layout = ColumnMajorLayout{};
            }
            if (rng.chance(1, 4)) {
                q->buffers[static_cast<size_t>(rng.below(q->buffers.size()))].byte_size +=
                    rng.range(0, 2) - 1;
            }
            return *q;
        }
    }
    const uint64_t bytes = d.element_storage_bytes(*element_count(shape)).value();
    d.byte_offset = rng.chance(1, 4) ? rng.below(16) : 0;
    BufferHandle b;
    b.byte_size = d.byte_offset + bytes + (rng.chance(1, 3) ? rng.below(8) : 0);
    b.alignment = 64;
    d.buffers = {b};
    return d;
}

TEST(DescriptorFastPath, GeneratedDescriptorsDecodeAlike) {
    const uint64_t n = hurray_test::property_scale(3000);
    for (uint64_t seed = 0; seed < n; ++seed) {
        const auto g = hurray_test::generate_descriptor(seed);
        const auto bytes = encode_unchecked(g.descriptor);
        ASSERT_TRUE(bytes.ok()) << bytes.error().to_string();
        for (const bool strict : {true, false}) {
            ASSERT_TRUE(same_decode(*bytes, g.options(strict))) << "seed " << seed;
        }
        ASSERT_TRUE(fast_check_sound(g.descriptor)) << "seed " << seed;
    }
}

TEST(DescriptorFastPath, MutatedPlainDescriptorsDecodeAlike) {
    Rng rng(15);
    const uint64_t n = hurray_test::property_scale(20000);
    uint64_t accepted = 0;
    for (uint64_t i = 0; i < n; ++i) {
        const TensorDescriptor d = random_plain(rng);
        auto bytes = *encode_unchecked(d);
        ASSERT_TRUE(fast_check_sound(d)) << "case " << i;
        // 0-3 random edits anywhere (fields, reserved bytes, the length,
        // the buffer count), or a truncation.
        const uint64_t edits = rng.below(4);
        for (uint64_t e = 0; e < edits; ++e) {
            const size_t at = static_cast<size_t>(rng.below(bytes.size()));
            bytes[at] = rng.chance(1, 2) ? rng.u8()
                                         : static_cast<uint8_t>(bytes[at] ^ (1U << rng.below(8)));
        }
        if (rng.chance(1, 20)) {
            bytes.resize(static_cast<size_t>(rng.below(bytes.size() + 1)));
        }
        for (const bool strict : {true, false}) {
            DecodeOptions o;
            o.strict = strict;
            ASSERT_TRUE(same_decode(bytes, o)) << "case " << i;
        }
        if (auto back = detail::decode_general(bytes, DecodeOptions{.strict = false}); back.ok()) {
            ++accepted;
            ASSERT_TRUE(fast_check_sound(*back)) << "case " << i;
        }
    }
    EXPECT_GT(accepted, n / 4);  // the mutations kept many cases valid
}

TEST(DescriptorFastPath, PlainRejectionsKeepTheirMessages) {
    auto d = *make_dense(ElementType::kFloat16, {2, 3});
    d.buffers[0].byte_size = 11;  // one byte short
    auto bytes = *encode_unchecked(d);
    auto r = decode(bytes);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), ErrorCode::kBufferTooSmall);
    EXPECT_EQ(r.error().offset(), detail::section_offsets(d).buffer(0));
    EXPECT_NE(r.error().message().find("buffer[0].byte_size: 11"), std::string::npos)
        << r.error().message();

    bytes = *encode_unchecked(*make_dense(ElementType::kFloat16, {2, 3}));
    bytes[bytes.size() - 1] = 1;  // buffer._reserved
    r = decode(bytes);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), ErrorCode::kReservedBytesNonZero);
    EXPECT_EQ(r.error().offset(), bytes.size() - 1);
}

TEST(DescriptorFastPath, CheckEncodeToAndDecodeAllocateNothing) {
    // Dense (rank 4, rank 2, scalar, rank 8: the most a Shape holds inline)
    // and per-block affine (symmetric: 2 buffers; with zero points: 3).
    for (const auto& made :
         {make_dense(ElementType::kFloat16, {8, 32, 128, 128}), make_dense(ElementType::kInt4, {4096, 4096}),
          make_dense(ElementType::kFloat32, {}), make_dense(ElementType::kUInt8, {1, 2, 3, 4, 5, 6, 7, 8}),
          make_per_block_quantized(ElementType::kInt4, {4, 32, 128, 4096}, 3, 32),
          make_per_block_quantized(ElementType::kUInt8, {64, 4096}, 1, 64, ElementType::kFloat32, false)}) {
        ASSERT_TRUE(made.ok()) << made.error().to_string();
        const TensorDescriptor d = *made;
        std::vector<uint8_t> out(*encoded_size(d));
        bool ok = false;
        EXPECT_EQ(allocations_in([&] { ok = check_descriptor(d).ok(); }), 0U);
        EXPECT_TRUE(ok);
        EXPECT_EQ(allocations_in([&] { ok = encode_to(d, out).ok(); }), 0U);
        EXPECT_TRUE(ok);
        EXPECT_TRUE(detail::plain_dense_valid(d));
        Result<TensorDescriptor> back = Error(ErrorCode::kInvalidArgument, "not decoded");
        EXPECT_EQ(allocations_in([&] { back = decode(out); }), 0U) << d.rank();
        ASSERT_TRUE(back.ok()) << back.error().to_string();
        EXPECT_EQ(*back, d);
    }
}

TEST(DescriptorFastPath, RankBeyondInlineSpillsOnce) {
    // Rank 9 exceeds the Shape's inline capacity: decode allocates the shape
    // only (the buffer table stays inline).
    const auto d = make_dense(ElementType::kUInt8, {1, 2, 1, 2, 1, 2, 1, 2, 1});
    ASSERT_TRUE(d.ok());
    const auto bytes = *encode(*d);
    Result<TensorDescriptor> back = Error(ErrorCode::kInvalidArgument, "not decoded");
    EXPECT_EQ(allocations_in([&] { back = decode(bytes); }), 1U);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, *d);
}

TEST(DescriptorFastPath, EncodeToWritesWhatTheGeneralWriterWrites) {
    // encode_to's one-pass writer against encode_unchecked's general one:
    // the same bytes for every plain descriptor, and for the others too.
    Rng rng(16);
    const uint64_t n = hurray_test::property_scale(5000);
    uint64_t plain = 0;
    for (uint64_t i = 0; i < n; ++i) {
        const TensorDescriptor d =
            i % 2 == 0 ? random_plain(rng) : hurray_test::generate_descriptor(i).descriptor;
        const auto want = encode_unchecked(d);
        ASSERT_TRUE(want.ok()) << want.error().to_string();
        std::vector<uint8_t> out(want->size() + 3, 0xAB);
        const auto wrote = encode_to(d, out);
        if (!wrote.ok()) {
            EXPECT_FALSE(check_descriptor(d, DecodeOptions{.accept_private_extensions = true}).ok()) << "case " << i;
            continue;
        }
        plain += detail::plain_dense_valid(d) ? 1 : 0;
        ASSERT_EQ(*wrote, want->size()) << "case " << i;
        EXPECT_TRUE(std::equal(want->begin(), want->end(), out.begin())) << "case " << i;
        EXPECT_EQ(out[want->size()], 0xAB) << "case " << i;  // nothing written past the end
        std::vector<uint8_t> small(want->size() - 1);
        const auto short_out = encode_to(d, small);
        ASSERT_FALSE(short_out.ok());
        EXPECT_EQ(short_out.error().code(), ErrorCode::kInvalidArgument);
        EXPECT_EQ(short_out.error().message(), "encode_to: output holds " + std::to_string(small.size()) +
                                                   " bytes, the descriptor needs " + std::to_string(want->size()));
    }
    EXPECT_GT(plain, n / 4);
}

}  // namespace
}  // namespace hurray
