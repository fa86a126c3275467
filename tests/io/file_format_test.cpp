// SPDX-License-Identifier: Apache-2.0
// The fixed parts of the container (file_format.hpp): header and trailer
// round trips with hand-checked bytes, every rejection of their decoders
// with its code and byte offset, UTF-8 and name rules, align_up, CRC-32C.
#include "hurray/io/file_format.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "hurray/io/crc32c.hpp"

namespace hurray {
namespace {

using Bytes = std::vector<uint8_t>;
using E = ErrorCode;

Bytes encode_header(const FileHeader& h) {
    std::array<uint8_t, kFileHeaderSize> out{};
    encode_file_header(h, out);
    return {out.begin(), out.end()};
}

Bytes encode_trailer(const FileTrailer& t) {
    std::array<uint8_t, kFileTrailerSize> out{};
    encode_file_trailer(t, out);
    return {out.begin(), out.end()};
}

void put(Bytes& b, size_t at, uint64_t v, size_t width) {
    for (size_t i = 0; i < width; ++i) {
        b.at(at + i) = static_cast<uint8_t>(v >> (8 * i));
    }
}

FileHeader sample_header() {
    FileHeader h;
    h.flags = file_flags::kHasIndexCrc32c | file_flags::kHasKvMetadata;
    h.data_buffer_alignment = 65536;
    h.first_descriptor_offset = 128;
    h.tensor_count_hint = 3;
    return h;
}

template <typename T>
void expect_error(const Result<T>& r, ErrorCode code, uint64_t offset) {
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), code) << r.error().to_string();
    EXPECT_EQ(r.error().offset(), offset) << r.error().to_string();
}

// ---------------------------------------------------------------------------
// Header

TEST(FileHeaderCodec, HandCheckedBytes) {
    const Bytes b = encode_header(sample_header());
    const Bytes expected = {
        'H', 'R', 'R', 'Y', 'F', 'I', 'L', 'E',  // magic
        0x01, 0x00, 0x00, 0x00,                  // version 1.0, reserved
        0x05, 0x00, 0x00, 0x00,                  // flags: KV | CRC
        0x00, 0x00, 0x01, 0x00,                  // alignment 65536
        0x80, 0, 0, 0, 0, 0, 0, 0,               // first_descriptor_offset 128
        0x03, 0, 0, 0, 0, 0, 0, 0,               // tensor_count_hint 3
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    };
    EXPECT_EQ(b, expected);
}

TEST(FileHeaderCodec, RoundTrips) {
    for (uint32_t align = kMinDataBufferAlignment; align <= kMaxDataBufferAlignment; align *= 2) {
        FileHeader h = sample_header();
        h.data_buffer_alignment = align;
        h.tensor_count_hint = kUnknownTensorCount;
        h.flags = file_flags::kSortedIndex;
        auto back = decode_file_header(encode_header(h));
        ASSERT_TRUE(back) << back.error().to_string();
        EXPECT_EQ(*back, h);
    }
    // A longer input (the rest of the file) is fine.
    Bytes b = encode_header(sample_header());
    b.resize(200, 0xAB);
    auto back = decode_file_header(b);
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, sample_header());
}

TEST(FileHeaderCodec, DefaultHeaderIsValid) {
    auto back = decode_file_header(encode_header(FileHeader{}));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->data_buffer_alignment, 4096U);
    EXPECT_EQ(back->first_descriptor_offset, 64U);
    EXPECT_EQ(back->tensor_count_hint, UINT64_MAX);
}

TEST(FileHeaderCodec, RejectsShortInput) {
    const Bytes b = encode_header(sample_header());
    EXPECT_EQ(decode_file_header(Bytes{}).error().code(), E::kTruncated);
    EXPECT_EQ(decode_file_header(Bytes(b.begin(), b.begin() + 5)).error().code(), E::kTruncated);
    expect_error(decode_file_header(Bytes(b.begin(), b.begin() + 63)), E::kTruncated, 63);
    expect_error(decode_file_header(Bytes(b.begin(), b.begin() + 8)), E::kTruncated, 8);
}

TEST(FileHeaderCodec, RejectsBadMagic) {
    for (size_t i = 0; i < 8; ++i) {
        Bytes b = encode_header(sample_header());
        b[i] ^= 0x20;
        expect_error(decode_file_header(b), E::kInvalidMagic, 0);
    }
    // A descriptor stream ("HRRY" + version) is not a file.
    Bytes b = encode_header(sample_header());
    b[4] = 0x01;
    expect_error(decode_file_header(b), E::kInvalidMagic, 0);
    // The magic is checked first, even on a short input.
    expect_error(decode_file_header(Bytes{'H', 'R', 'R', 'Y', 'X', 'I', 'L', 'E', 1}), E::kInvalidMagic, 0);
}

TEST(FileHeaderCodec, RejectsVersions) {
    for (uint8_t major : {uint8_t{0}, uint8_t{2}, uint8_t{0xFF}}) {
        Bytes b = encode_header(sample_header());
        b[8] = major;
        expect_error(decode_file_header(b), E::kUnsupportedVersion, 8);
    }
    // A newer minor version of a known major is read.
    Bytes b = encode_header(sample_header());
    b[9] = 7;
    auto h = decode_file_header(b);
    ASSERT_TRUE(h);
    EXPECT_EQ(h->version_minor, 7);
}

TEST(FileHeaderCodec, RejectsReservedBytes) {
    for (size_t at : {size_t{10}, size_t{11}}) {
        Bytes b = encode_header(sample_header());
        b[at] = 1;
        expect_error(decode_file_header(b), E::kReservedBytesNonZero, at);
    }
    for (size_t at = 36; at < 64; ++at) {
        Bytes b = encode_header(sample_header());
        b[at] = 0x80;
        expect_error(decode_file_header(b), E::kReservedBytesNonZero, at);
    }
}

TEST(FileHeaderCodec, RejectsReservedFlagBits) {
    for (uint32_t bit = 3; bit < 32; ++bit) {
        Bytes b = encode_header(sample_header());
        put(b, 12, file_flags::kHasIndexCrc32c | (1U << bit), 4);
        expect_error(decode_file_header(b), E::kReservedFlagBits, 12);
    }
    Bytes b = encode_header(sample_header());
    put(b, 12, 7, 4);
    EXPECT_TRUE(decode_file_header(b));
}

TEST(FileHeaderCodec, RejectsAlignment) {
    for (uint64_t a : {0ULL, 1ULL, 8ULL, 2048ULL, 3000ULL, 4095ULL, 4097ULL, 12288ULL, 4194304ULL,
                       0x80000000ULL, 0xFFFFFFFFULL}) {
        Bytes b = encode_header(sample_header());
        put(b, 16, a, 4);
        expect_error(decode_file_header(b), E::kInvalidFile, 16);
    }
}

TEST(FileHeaderCodec, RejectsFirstDescriptorOffset) {
    for (uint64_t off : {0ULL, 8ULL, 56ULL, 63ULL, 65ULL, 100ULL, 0xFFFFFFFFFFFFFFFFULL}) {
        Bytes b = encode_header(sample_header());
        put(b, 20, off, 8);
        expect_error(decode_file_header(b), E::kInvalidFile, 20);
    }
    Bytes b = encode_header(sample_header());
    put(b, 20, 72, 8);
    EXPECT_TRUE(decode_file_header(b));
}

TEST(FileHeaderCodec, CheckFileHeaderMatchesDecode) {
    FileHeader h = sample_header();
    EXPECT_TRUE(check_file_header(h));
    h.data_buffer_alignment = 2048;
    EXPECT_EQ(check_file_header(h).error().code(), E::kInvalidFile);
    EXPECT_EQ(check_file_header(h).error().offset(), 16U);
}

// ---------------------------------------------------------------------------
// Trailer

FileTrailer sample_trailer() {
    return FileTrailer{.index_offset = 0x1122334455667788ULL,
                       .index_length = 0x99,
                       .kv_offset = 0x2008,
                       .kv_length = 0x3C,
                       .index_crc32c = 0xDEADBEEF};
}

TEST(FileTrailerCodec, HandCheckedBytes) {
    const Bytes expected = {
        0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,  // index_offset
        0x99, 0, 0, 0, 0, 0, 0, 0,                       // index_length
        0x08, 0x20, 0, 0, 0, 0, 0, 0,                    // kv_offset
        0x3C, 0, 0, 0,                                   // kv_length
        0xEF, 0xBE, 0xAD, 0xDE,                          // index_crc32c
        0, 0, 0, 0,                                      // reserved
        'H', 'R', 'R', 'Y',
    };
    EXPECT_EQ(encode_trailer(sample_trailer()), expected);
}

TEST(FileTrailerCodec, RoundTrips) {
    auto back = decode_file_trailer(encode_trailer(sample_trailer()), 5000);
    ASSERT_TRUE(back) << back.error().to_string();
    EXPECT_EQ(*back, sample_trailer());
    auto zero = decode_file_trailer(encode_trailer(FileTrailer{}), 0);
    ASSERT_TRUE(zero);
    EXPECT_EQ(*zero, FileTrailer{});
}

TEST(FileTrailerCodec, RejectsShortInput) {
    const Bytes b = encode_trailer(sample_trailer());
    expect_error(decode_file_trailer(Bytes(b.begin() + 1, b.end()), 700), E::kTruncated, 700);
    expect_error(decode_file_trailer(Bytes{}, 0), E::kTruncated, 0);
}

TEST(FileTrailerCodec, RejectsBadMagicFirst) {
    for (size_t i = 36; i < 40; ++i) {
        Bytes b = encode_trailer(sample_trailer());
        b[i] = 0;
        b[33] = 1;  // a reserved byte too: the magic is reported first
        expect_error(decode_file_trailer(b, 1000), E::kInvalidMagic, 1036);
    }
}

TEST(FileTrailerCodec, RejectsReservedBytes) {
    for (size_t at = 32; at < 36; ++at) {
        Bytes b = encode_trailer(sample_trailer());
        b[at] = 0x10;
        expect_error(decode_file_trailer(b, 1000), E::kReservedBytesNonZero, 1000 + at);
    }
}

// ---------------------------------------------------------------------------
// UTF-8 and names

TEST(Utf8, AcceptsWellFormed) {
    EXPECT_TRUE(is_valid_utf8(""));
    EXPECT_TRUE(is_valid_utf8("plain.ascii_name-1"));
    EXPECT_TRUE(is_valid_utf8(std::string("nul\0inside", 10)));
    EXPECT_TRUE(is_valid_utf8("\x7F"));
    EXPECT_TRUE(is_valid_utf8("\xC2\x80"));              // U+0080, smallest 2-byte
    EXPECT_TRUE(is_valid_utf8("\xDF\xBF"));              // U+07FF
    EXPECT_TRUE(is_valid_utf8("\xE0\xA0\x80"));          // U+0800, smallest 3-byte
    EXPECT_TRUE(is_valid_utf8("\xED\x9F\xBF"));          // U+D7FF, just below the surrogates
    EXPECT_TRUE(is_valid_utf8("\xEE\x80\x80"));          // U+E000, just above
    EXPECT_TRUE(is_valid_utf8("\xEF\xBF\xBF"));          // U+FFFF
    EXPECT_TRUE(is_valid_utf8("\xF0\x90\x80\x80"));      // U+10000, smallest 4-byte
    EXPECT_TRUE(is_valid_utf8("\xF4\x8F\xBF\xBF"));      // U+10FFFF, the largest
    EXPECT_TRUE(is_valid_utf8("\xE6\x97\xA5\xE6\x9C\xAC.\xF0\x9F\x98\x80"));
}

TEST(Utf8, RejectsMalformed) {
    EXPECT_FALSE(is_valid_utf8("\x80"));                  // lone continuation
    EXPECT_FALSE(is_valid_utf8("a\xBF"));
    EXPECT_FALSE(is_valid_utf8("\xC0\x80"));              // overlong NUL
    EXPECT_FALSE(is_valid_utf8("\xC1\xBF"));              // overlong U+007F
    EXPECT_FALSE(is_valid_utf8("\xE0\x80\x80"));          // overlong 3-byte
    EXPECT_FALSE(is_valid_utf8("\xE0\x9F\xBF"));          // overlong U+07FF
    EXPECT_FALSE(is_valid_utf8("\xF0\x80\x80\x80"));      // overlong 4-byte
    EXPECT_FALSE(is_valid_utf8("\xF0\x8F\xBF\xBF"));      // overlong U+FFFF
    EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));          // U+D800 surrogate
    EXPECT_FALSE(is_valid_utf8("\xED\xBF\xBF"));          // U+DFFF surrogate
    EXPECT_FALSE(is_valid_utf8("\xED\xA0\xBD\xED\xB8\x80"));  // CESU-8 pair
    EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));      // U+110000
    EXPECT_FALSE(is_valid_utf8("\xF7\xBF\xBF\xBF"));
    EXPECT_FALSE(is_valid_utf8("\xF8\x88\x80\x80\x80"));  // 5-byte form
    EXPECT_FALSE(is_valid_utf8("\xFC\x84\x80\x80\x80\x80"));
    EXPECT_FALSE(is_valid_utf8("\xFE"));
    EXPECT_FALSE(is_valid_utf8("\xFF"));
    EXPECT_FALSE(is_valid_utf8("\xC3"));                  // truncated 2-byte
    EXPECT_FALSE(is_valid_utf8("\xE6\x97"));              // truncated 3-byte
    EXPECT_FALSE(is_valid_utf8("\xF0\x9F\x98"));          // truncated 4-byte
    EXPECT_FALSE(is_valid_utf8("ab\xF0\x9F\x98"));
    EXPECT_FALSE(is_valid_utf8("\xE6\x41\xA5"));          // bad continuation
    EXPECT_FALSE(is_valid_utf8("\xC3(x"));
}

TEST(Utf8, AgreesWithDecoderOnEveryTwoByteSequence) {
    for (unsigned a = 0; a < 256; ++a) {
        for (unsigned b = 0; b < 256; ++b) {
            const std::string s{static_cast<char>(a), static_cast<char>(b)};
            bool expected = false;
            if (a < 0x80) {
                expected = b < 0x80;
            } else if (a >= 0xC2 && a <= 0xDF) {
                expected = b >= 0x80 && b <= 0xBF;
            }
            EXPECT_EQ(is_valid_utf8(s), expected) << std::hex << a << " " << b;
        }
    }
}

TEST(CheckName, Rules) {
    EXPECT_TRUE(check_name("w", "tensor name"));
    EXPECT_TRUE(check_name(std::string(65535, 'x'), "tensor name"));
    EXPECT_TRUE(check_name("\xC3\xA9t\xC3\xA9", "KV key"));
    auto empty = check_name("", "tensor name");
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error().code(), E::kInvalidName);
    EXPECT_NE(empty.error().message().find("tensor name"), std::string::npos);
    auto longer = check_name(std::string(65536, 'x'), "KV key");
    ASSERT_FALSE(longer);
    EXPECT_EQ(longer.error().code(), E::kInvalidName);
    EXPECT_NE(longer.error().message().find("KV key"), std::string::npos);
    EXPECT_EQ(check_name("\xFF", "tensor name").error().code(), E::kInvalidName);
    EXPECT_EQ(check_name("a\xED\xA0\x80", "tensor name").error().code(), E::kInvalidName);
}

// ---------------------------------------------------------------------------
// align_up

TEST(AlignUp, Values) {
    EXPECT_EQ(*align_up(0, 4096), 0U);
    EXPECT_EQ(*align_up(1, 4096), 4096U);
    EXPECT_EQ(*align_up(4096, 4096), 4096U);
    EXPECT_EQ(*align_up(4097, 4096), 8192U);
    EXPECT_EQ(*align_up(125, 8), 128U);
    EXPECT_EQ(*align_up(7, 1), 7U);
    EXPECT_EQ(*align_up(UINT64_MAX - 4095, 4096), UINT64_MAX - 4095);
    EXPECT_EQ(*align_up(UINT64_MAX, 1), UINT64_MAX);
}

TEST(AlignUp, Rejects) {
    EXPECT_EQ(align_up(UINT64_MAX - 4094, 4096).error().code(), E::kSizeOverflow);
    EXPECT_EQ(align_up(UINT64_MAX, 8).error().code(), E::kSizeOverflow);
    EXPECT_EQ(align_up(5, 0).error().code(), E::kInvalidArgument);
    EXPECT_EQ(align_up(5, 3000).error().code(), E::kInvalidArgument);
}

// ---------------------------------------------------------------------------
// CRC-32C

std::span<const uint8_t> as_bytes(const std::string& s) {
    return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

TEST(Crc32c, CheckValue) {
    EXPECT_EQ(crc32c(as_bytes("123456789")), 0xE3069283U);
    EXPECT_EQ(crc32c({}), 0U);
    // RFC 3720 B.4: 32 bytes of zeros, and of 0xFF.
    EXPECT_EQ(crc32c(Bytes(32, 0x00)), 0x8A9136AAU);
    EXPECT_EQ(crc32c(Bytes(32, 0xFF)), 0x62A8AB43U);
}

TEST(Crc32c, ExtendEqualsWholeAtEverySplit) {
    std::mt19937 rng(7);
    Bytes data(1000);
    for (auto& b : data) {
        b = static_cast<uint8_t>(rng());
    }
    const uint32_t whole = crc32c(data);
    for (size_t split = 0; split <= data.size(); split += 37) {
        const std::span<const uint8_t> all(data);
        const uint32_t a = crc32c(all.first(split));
        EXPECT_EQ(crc32c_extend(a, all.subspan(split)), whole) << split;
    }
    const std::string s = "123456789";
    EXPECT_EQ(crc32c_extend(crc32c_extend(crc32c_extend(0, as_bytes(s.substr(0, 2))), as_bytes(s.substr(2, 5))),
                            as_bytes(s.substr(7))),
              0xE3069283U);
    EXPECT_EQ(crc32c_extend(0, {}), 0U);
}

}  // namespace
}  // namespace hurray
