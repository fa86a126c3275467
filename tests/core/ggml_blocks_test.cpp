// SPDX-License-Identifier: Apache-2.0
// libhurray's private GGML blocks scheme (hurray/core/ggml_blocks.hpp): understood by
// default (validated, dequantized), refused as unknown when reading by the spec alone,
// every rule of version 1 rejected with its field and byte offset, and another
// producer's use of tag 0xF0 left to the caller's list of known private schemes.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "hurray/core/dequantize.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/ggml_blocks.hpp"
#include "hurray/core/tensor_view.hpp"

namespace {

using namespace hurray;  // NOLINT(google-build-using-namespace): test brevity
using Bytes = std::vector<uint8_t>;

constexpr uint32_t kQ4K = 12;

/// One Q4_K block (144 bytes): d = 1, dmin = 0, every 6-bit scale 1 and min 0, and
/// quant byte l of group g = (l % 16) | ((15 - l % 16) << 4), so that value 64g + l is
/// l % 16 and value 64g + 32 + l is 15 - l % 16.
Bytes q4k_block() {
    Bytes b(144, 0);
    b[1] = 0x3C;  // d = float16 1.0 (0x3C00); dmin = 0
    for (size_t j = 0; j < 4; ++j) {
        b[4 + j] = 1;  // scales 0..3
    }
    for (size_t j = 8; j < 12; ++j) {
        b[4 + j] = 1;  // low nibbles: scales 4..7; high nibbles: mins 4..7 = 0
    }
    for (size_t l = 0; l < 128; ++l) {
        const auto lo = static_cast<uint8_t>(l % 16);
        b[16 + l] = static_cast<uint8_t>(lo | ((15 - lo) << 4));
    }
    return b;
}

std::vector<float> q4k_values(size_t blocks) {
    std::vector<float> v;
    for (size_t k = 0; k < blocks; ++k) {
        for (size_t g = 0; g < 4; ++g) {
            for (size_t l = 0; l < 32; ++l) {
                v.push_back(static_cast<float>(l % 16));
            }
            for (size_t l = 0; l < 32; ++l) {
                v.push_back(static_cast<float>(15 - l % 16));
            }
        }
    }
    return v;
}

TensorDescriptor q4k_descriptor() {
    auto d = make_ggml_blocks(kQ4K, {2, 256});
    EXPECT_TRUE(d) << d.error().to_string();
    return *d;
}

/// Where the scheme tag is in the encoded descriptor (4 bytes before "GGML").
size_t scheme_at(const Bytes& enc) {
    const std::array<uint8_t, 4> magic = {'G', 'G', 'M', 'L'};
    const auto it = std::search(enc.begin(), enc.end(), magic.begin(), magic.end());
    EXPECT_NE(it, enc.end());
    return static_cast<size_t>(it - enc.begin()) - 4;
}

TEST(GgmlBlocks, DescriptorAndPayload) {
    const TensorDescriptor d = q4k_descriptor();
    EXPECT_EQ(ggml_blocks_type(d), kQ4K);
    EXPECT_EQ(d.buffers.size(), 1U);
    EXPECT_EQ(d.buffers[0].byte_size, 2U * 144U);
    EXPECT_EQ(ggml_blocks_payload(kQ4K), (Bytes{'G', 'G', 'M', 'L', 12, 0, 0, 0, 0, 1, 0, 0, 144, 0, 0, 0}));
    EXPECT_TRUE(ggml_blocks_payload(4).empty());  // a removed ggml type
    EXPECT_EQ(make_ggml_blocks(4, {256}).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(make_ggml_blocks(kQ4K, {255}).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(make_ggml_blocks(kQ4K, {}).error().code(), ErrorCode::kInvalidArgument);
    auto plain = make_ggml_blocks(0, {3});  // f32 "blocks": one value each
    ASSERT_TRUE(plain);
    EXPECT_EQ(plain->buffers[0].byte_size, 12U);
}

TEST(GgmlBlocks, UnderstoodByDefaultAndRefusedBySpecOnlyReading) {
    auto enc = encode(q4k_descriptor());
    ASSERT_TRUE(enc) << enc.error().to_string();
    auto dec = decode(*enc);
    ASSERT_TRUE(dec) << dec.error().to_string();
    EXPECT_EQ(ggml_blocks_type(*dec), kQ4K);

    DecodeOptions spec_only;
    spec_only.libhurray_schemes = false;
    auto refused = decode(*enc, spec_only);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code(), ErrorCode::kUnknownQuantizationScheme);
    EXPECT_EQ(refused.error().offset(), scheme_at(*enc));
    EXPECT_NE(refused.error().message().find("0xF0 is a private scheme this reader does not know"), std::string::npos)
        << refused.error().to_string();

    // Reading by the spec alone, the caller may still list the tag (uninterpreted), and
    // a permissive reader carries it.
    const std::array<uint8_t, 1> listed = {kGgmlBlocksScheme};
    spec_only.known_private_schemes = listed;
    EXPECT_TRUE(decode(*enc, spec_only));
    DecodeOptions permissive;
    permissive.strict = false;
    permissive.libhurray_schemes = false;
    EXPECT_TRUE(decode(*enc, permissive));
}

TEST(GgmlBlocks, EveryRuleOfVersionOneIsCheckedWithItsOffset) {
    auto enc = encode(q4k_descriptor());
    ASSERT_TRUE(enc);
    const size_t q = scheme_at(*enc);
    struct Case {
        const char* what;
        size_t at;
        uint8_t value;
        ErrorCode code;
        size_t offset;
    };
    const Case cases[] = {
        {"version 2", q + 1, 2, ErrorCode::kUnsupportedQuantizationVersion, q + 1},
        {"a flag bit", q + 2, 1, ErrorCode::kReservedFlagBits, q + 2},
        {"a removed ggml type", q + 8, 4, ErrorCode::kInvalidQuantization, q + 8},
        {"values per block", q + 13, 2, ErrorCode::kInvalidQuantization, q + 12},
        {"bytes per block", q + 16, 143, ErrorCode::kInvalidQuantization, q + 16},
    };
    for (const Case& c : cases) {
        Bytes bad = *enc;
        bad[c.at] = c.value;
        auto d = decode(bad);
        ASSERT_FALSE(d) << c.what;
        EXPECT_EQ(d.error().code(), c.code) << c.what << ": " << d.error().to_string();
        EXPECT_EQ(d.error().offset(), c.offset) << c.what << ": " << d.error().to_string();
        DecodeOptions permissive;  // a permissive reader carries it; dequantize refuses it
        permissive.strict = false;
        auto carried = decode(bad, permissive);
        ASSERT_TRUE(carried) << c.what << ": " << carried.error().to_string();
        EXPECT_FALSE(ggml_blocks_type(*carried).has_value()) << c.what;
    }

    // What encode checks too: it never writes what a reader refuses.
    TensorDescriptor small = q4k_descriptor();
    small.buffers[0].byte_size = 287;
    EXPECT_EQ(encode(small).error().code(), ErrorCode::kBufferTooSmall);
    TensorDescriptor offset = q4k_descriptor();
    offset.byte_offset = 1;
    EXPECT_EQ(encode(offset).error().code(), ErrorCode::kBufferTooSmall);
    offset.buffers[0].byte_size = 289;
    EXPECT_TRUE(encode(offset)) << "byte_offset + the blocks fit";
    TensorDescriptor ragged = q4k_descriptor();
    ragged.shape = {4, 128};
    EXPECT_EQ(encode(ragged).error().code(), ErrorCode::kInvalidQuantization);
    TensorDescriptor two = q4k_descriptor();
    two.buffers.push_back(two.buffers[0]);
    EXPECT_FALSE(encode(two));
    TensorDescriptor col = q4k_descriptor();
    col.layout = ColumnMajorLayout{};
    EXPECT_EQ(encode(col).error().code(), ErrorCode::kInvalidQuantization);
}

TEST(GgmlBlocks, AnotherProducersTagF0IsNotMistakenForOurs) {
    TensorDescriptor d = q4k_descriptor();
    auto& o = std::get<OpaqueQuantization>(d.quantization->scheme);
    o.payload = {'A', 'B', 'C', 'D', 1, 2, 3};
    o.scheme_version = 7;
    auto enc = encode(d);  // a writer's own private scheme
    ASSERT_TRUE(enc) << enc.error().to_string();
    auto strict = decode(*enc);
    ASSERT_FALSE(strict);
    EXPECT_EQ(strict.error().code(), ErrorCode::kUnknownQuantizationScheme);
    const std::array<uint8_t, 1> listed = {0xF0};
    DecodeOptions theirs;
    theirs.known_private_schemes = listed;
    auto known = decode(*enc, theirs);
    ASSERT_TRUE(known) << known.error().to_string();
    EXPECT_FALSE(ggml_blocks_type(*known).has_value());
}

TEST(GgmlBlocks, DequantizeByGgmlFormulas) {
    const TensorDescriptor d = q4k_descriptor();
    Bytes blocks = q4k_block();
    const Bytes second = q4k_block();
    blocks.insert(blocks.end(), second.begin(), second.end());
    const std::array<std::span<const uint8_t>, 1> spans = {std::span<const uint8_t>(blocks)};
    auto view = TensorView::make(d, spans);
    ASSERT_TRUE(view) << view.error().to_string();
    auto values = dequantize(*view);
    ASSERT_TRUE(values) << values.error().to_string();
    EXPECT_EQ(*values, q4k_values(2));
    auto f = to_float32(*view);
    ASSERT_TRUE(f);
    EXPECT_EQ(*f, q4k_values(2));
    auto direct = dequantize_ggml(kQ4K, blocks, 512);
    ASSERT_TRUE(direct);
    EXPECT_EQ(*direct, q4k_values(2));

    // byte_offset: the blocks start after it.
    TensorDescriptor shifted = d;
    shifted.byte_offset = 3;
    shifted.buffers[0].byte_size = 3 + 288;
    Bytes padded(3, 0xAA);
    padded.insert(padded.end(), blocks.begin(), blocks.end());
    const std::array<std::span<const uint8_t>, 1> pspans = {std::span<const uint8_t>(padded)};
    auto pview = TensorView::make(shifted, pspans);
    ASSERT_TRUE(pview) << pview.error().to_string();
    auto pvalues = dequantize(*pview);
    ASSERT_TRUE(pvalues) << pvalues.error().to_string();
    EXPECT_EQ(*pvalues, q4k_values(2));

    // A type without a dequantization names itself.
    auto iq = make_ggml_blocks(16, {256});  // iq2_xxs
    ASSERT_TRUE(iq);
    const Bytes iq_bytes(66, 0);
    const std::array<std::span<const uint8_t>, 1> ispans = {std::span<const uint8_t>(iq_bytes)};
    auto iview = TensorView::make(*iq, ispans);
    ASSERT_TRUE(iview) << iview.error().to_string();
    auto ivalues = dequantize(*iview);
    ASSERT_FALSE(ivalues);
    EXPECT_EQ(ivalues.error().code(), ErrorCode::kUnsupported);
    EXPECT_NE(ivalues.error().message().find("iq2_xxs"), std::string::npos) << ivalues.error().to_string();
}

TEST(GgmlBlocks, DequantizeGgmlChecksSizes) {
    const Bytes block = q4k_block();
    std::vector<float> out(256);
    EXPECT_TRUE(dequantize_ggml(kQ4K, block, out));
    EXPECT_EQ(out, q4k_values(1));
    std::vector<float> short_out(255);
    EXPECT_EQ(dequantize_ggml(kQ4K, block, short_out).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(dequantize_ggml(kQ4K, std::span<const uint8_t>(block.data(), 143), out).error().code(),
              ErrorCode::kInvalidArgument);
    EXPECT_EQ(dequantize_ggml(99, block, out).error().code(), ErrorCode::kUnsupported);
    EXPECT_EQ(dequantize_ggml(kQ4K, block, uint64_t{512}).error().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
