// SPDX-License-Identifier: Apache-2.0
// The index section codec (file-format.md § Index Section, SPEC-NOTES 15).
#include "hurray/io/index_codec.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace hurray::detail {
namespace {

// Built field by field. `name` must outlive the entry (a view): the tests
// pass literals.
IndexEntry entry(std::string_view name, uint64_t d_off = 0, uint32_t d_len = 0, uint64_t off = 0,
                 uint64_t len = 0) {
    IndexEntry e;
    e.name = name;
    e.descriptor_offset = d_off;
    e.descriptor_length = d_len;
    e.data_offset = off;
    e.data_length = len;
    return e;
}

std::vector<IndexEntry> sample() {
    return {
        entry("weights", 64, 77, 4096, 16),
        entry("bias", 4160, 69, 8192, 3),
    };
}

TEST(IndexCodec, HandCheckedBytes) {
    auto bytes = encode_index(std::vector<IndexEntry>{entry("ab", 64, 77, 4096, 16)});
    ASSERT_TRUE(bytes);
    const std::vector<uint8_t> expected = {
        1, 0, 0, 0, 0, 0, 0, 0,     // entry count
        2, 0, 'a', 'b',             // name
        64, 0, 0, 0, 0, 0, 0, 0,    // descriptor_offset
        77, 0, 0, 0,                // descriptor_length
        0, 0x10, 0, 0, 0, 0, 0, 0,  // data_offset 4096
        16, 0, 0, 0, 0, 0, 0, 0,    // data_length
        0, 0, 0, 0,                 // flags
    };
    EXPECT_EQ(*bytes, expected);
}

TEST(IndexCodec, RoundTrip) {
    const auto entries = sample();
    auto bytes = encode_index(entries);
    ASSERT_TRUE(bytes);
    std::vector<uint64_t> offsets;
    auto back = decode_index(*bytes, 500, &offsets);
    ASSERT_TRUE(back) << back.error().to_string();
    EXPECT_EQ(*back, entries);
    ASSERT_EQ(offsets.size(), 2U);
    EXPECT_EQ(offsets[0], 508U);
    EXPECT_EQ(offsets[1], 508U + kIndexEntryFixedSize + 7);
    auto empty = decode_index(*encode_index({}), 0);
    ASSERT_TRUE(empty);
    EXPECT_TRUE(empty->empty());
}

TEST(IndexCodec, Rejections) {
    auto good = *encode_index(sample());
    {
        auto bytes = good;
        bytes[0] = 0xFF;  // count far beyond what fits
        auto r = decode_index(bytes, 0);
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code(), ErrorCode::kInvalidFile);
        EXPECT_EQ(r.error().offset(), 0U);
    }
    {
        auto bytes = good;
        bytes[8] = 0;  // name_length 0
        bytes[9] = 0;
        auto r = decode_index(bytes, 0);
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code(), ErrorCode::kInvalidName);
    }
    {
        auto bytes = good;
        bytes[10] = 0xFF;  // invalid UTF-8 in the first name
        auto r = decode_index(bytes, 0);
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code(), ErrorCode::kInvalidName);
        EXPECT_EQ(r.error().offset(), 10U);
    }
    {
        auto bytes = good;
        bytes[8 + kIndexEntryFixedSize + 7 - 4] = 1;  // flags of entry 0
        auto r = decode_index(bytes, 0);
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code(), ErrorCode::kReservedFlagBits);
        EXPECT_EQ(r.error().offset(), 8U + kIndexEntryFixedSize + 7 - 4);
    }
    {
        auto bytes = good;
        bytes.push_back(0);
        auto r = decode_index(bytes, 0);
        ASSERT_FALSE(r);
        EXPECT_EQ(r.error().code(), ErrorCode::kInvalidFile);
    }
    for (size_t n = 0; n < good.size(); ++n) {
        EXPECT_FALSE(decode_index(std::span(good).first(n), 0)) << n;
    }
    EXPECT_EQ(encode_index(std::vector<IndexEntry>{IndexEntry{}}).error().code(), ErrorCode::kInvalidName);
}

TEST(IndexCodec, NamesUniqueAndSorted) {
    std::vector<IndexEntry> e = {entry("b"), entry("a"), entry("c")};
    EXPECT_TRUE(check_index_names(e, false));
    auto unsorted = check_index_names(e, true);
    ASSERT_FALSE(unsorted);
    EXPECT_EQ(unsorted.error().code(), ErrorCode::kInvalidFile);
    e[2] = entry("b");
    auto dup = check_index_names(e, false);
    ASSERT_FALSE(dup);
    EXPECT_EQ(dup.error().code(), ErrorCode::kDuplicateName);
    // Raw byte order: 'Z' (0x5A) < 'a' (0x61) < 0xC3 (first byte of é).
    std::vector<IndexEntry> s = {entry("Z"), entry("a"), entry("ab"), entry("\xC3\xA9")};
    EXPECT_TRUE(check_index_names(s, true));
    std::vector<IndexEntry> d = {entry("a"), entry("a")};
    EXPECT_EQ(check_index_names(d, true).error().code(), ErrorCode::kDuplicateName);
}

}  // namespace
}  // namespace hurray::detail
