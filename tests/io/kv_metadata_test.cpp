// SPDX-License-Identifier: Apache-2.0
// KV metadata: model, typed getters, section encoding and every rejection of
// the decoder (file-format.md § KV Metadata Section, SPEC-NOTES 15, 17).
#include "hurray/io/kv_metadata.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace hurray {
namespace {

KvMetadata all_types() {
    KvMetadata kv;
    EXPECT_TRUE(kv.add("s", KvValue::string("llama")));
    EXPECT_TRUE(kv.add("i", KvValue::int64(-5)));
    EXPECT_TRUE(kv.add("u", KvValue::uint64(UINT64_MAX)));
    EXPECT_TRUE(kv.add("f", KvValue::float64(-0.0)));
    EXPECT_TRUE(kv.add("nan", KvValue::float64(std::numeric_limits<double>::quiet_NaN())));
    EXPECT_TRUE(kv.add("b", KvValue::boolean(true)));
    EXPECT_TRUE(kv.add("y", KvValue::bytes({0x00, 0xFF, 0x10})));
    EXPECT_TRUE(kv.add("as", KvValue::string_array({"a", "", "\xC3\xA9"})));
    EXPECT_TRUE(kv.add("ai", KvValue::int64_array({1, -2, INT64_MIN})));
    EXPECT_TRUE(kv.add("au", KvValue::uint64_array({7})));
    EXPECT_TRUE(kv.add("af", KvValue::float64_array({1.5, -2.25})));
    EXPECT_TRUE(kv.add("ab", KvValue::bool_array({true, false, true})));
    EXPECT_TRUE(kv.add("ay", KvValue::bytes_array({{1, 2}, {}})));
    EXPECT_TRUE(kv.add("empty", KvValue::uint64_array({})));
    EXPECT_TRUE(kv.add("\xE6\x97\xA5\xE6\x9C\xAC", KvValue::string("utf-8 key")));
    return kv;
}

TEST(KvMetadata, RoundTripsEveryType) {
    const KvMetadata kv = all_types();
    auto bytes = encode_kv_section(kv);
    ASSERT_TRUE(bytes) << bytes.error().to_string();
    auto back = decode_kv_section(*bytes, 1000);
    ASSERT_TRUE(back) << back.error().to_string();
    EXPECT_EQ(*back, kv);
    auto again = encode_kv_section(*back);
    ASSERT_TRUE(again);
    EXPECT_EQ(*again, *bytes);
    // The empty array keeps its element type.
    auto empty = back->get_array("empty");
    ASSERT_TRUE(empty);
    EXPECT_EQ((*empty)->element_type(), KvType::kUint64);
    EXPECT_EQ((*empty)->size(), 0U);
}

TEST(KvMetadata, HandCheckedBytes) {
    KvMetadata kv;
    ASSERT_TRUE(kv.add("ab", KvValue::int64(-2)));
    ASSERT_TRUE(kv.add("c", KvValue::bool_array({true, false})));
    auto bytes = encode_kv_section(kv);
    ASSERT_TRUE(bytes);
    const std::vector<uint8_t> expected = {
        2, 0, 0, 0,                                      // kv_count
        2, 0, 'a', 'b', 0x02,                            // key "ab", tag int64
        0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,  // -2
        1, 0, 'c', 0x07, 0x05, 2, 0, 0, 0, 1, 0,         // key "c", array of 2 bools
    };
    EXPECT_EQ(*bytes, expected);
}

TEST(KvMetadata, TypedGetters) {
    const KvMetadata kv = all_types();
    EXPECT_EQ(*kv.get_string("s"), "llama");
    EXPECT_EQ(*kv.get_int64("i"), -5);
    EXPECT_EQ(*kv.get_uint64("u"), UINT64_MAX);
    EXPECT_TRUE(std::signbit(*kv.get_float64("f")));
    EXPECT_TRUE(*kv.get_bool("b"));
    EXPECT_EQ(kv.get_bytes("y")->size(), 3U);
    EXPECT_EQ((*kv.get_array("ai"))->element_type(), KvType::kInt64);
    auto missing = kv.get_int64("nope");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
    auto wrong = kv.get_int64("s");
    ASSERT_FALSE(wrong);
    EXPECT_EQ(wrong.error().code(), ErrorCode::kTypeMismatch);
    EXPECT_NE(wrong.error().message().find("holds string, not int64"), std::string::npos);
}

TEST(KvMetadata, SetAddErase) {
    KvMetadata kv;
    ASSERT_TRUE(kv.set("a", KvValue::int64(1)));
    ASSERT_TRUE(kv.set("b", KvValue::int64(2)));
    ASSERT_TRUE(kv.set("a", KvValue::int64(3)));  // replaces in place
    EXPECT_EQ(kv.entries()[0].key, "a");
    EXPECT_EQ(*kv.get_int64("a"), 3);
    auto dup = kv.add("b", KvValue::int64(4));
    ASSERT_FALSE(dup);
    EXPECT_EQ(dup.error().code(), ErrorCode::kDuplicateName);
    EXPECT_TRUE(kv.erase("a"));
    EXPECT_FALSE(kv.erase("a"));
    EXPECT_EQ(*kv.get_int64("b"), 2);
    EXPECT_EQ(kv.size(), 1U);
    EXPECT_EQ(kv.add("", KvValue::int64(0)).error().code(), ErrorCode::kInvalidName);
    EXPECT_EQ(kv.add("\xFF", KvValue::int64(0)).error().code(), ErrorCode::kInvalidName);
    EXPECT_EQ(kv.add(std::string(65536, 'k'), KvValue::int64(0)).error().code(), ErrorCode::kInvalidName);
    EXPECT_TRUE(kv.add(std::string(65535, 'k'), KvValue::int64(0)));
}

TEST(KvMetadata, WriterSideChecks) {
    KvMetadata kv;
    ASSERT_TRUE(kv.add("s", KvValue::string("\xC0\x80")));  // overlong NUL
    EXPECT_EQ(encode_kv_section(kv).error().code(), ErrorCode::kInvalidArgument);
    KvMetadata arr;
    ASSERT_TRUE(arr.add("a", KvValue::string_array({"ok", "\xED\xA0\x80"})));  // surrogate
    EXPECT_EQ(encode_kv_section(arr).error().code(), ErrorCode::kInvalidArgument);
    KvMetadata priv;
    ASSERT_TRUE(priv.add("p", KvValue::private_value({0xF3, {1, 2, 3}})));
    EXPECT_EQ(encode_kv_section(priv).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(encode_kv_section(priv, true));
    KvMetadata bad_priv;
    ASSERT_TRUE(bad_priv.add("p", KvValue::private_value({0x08, {}})));
    EXPECT_EQ(encode_kv_section(bad_priv, true).error().code(), ErrorCode::kInvalidArgument);
}

TEST(KvMetadata, PrivateTagsNeedOptIn) {
    KvMetadata kv;
    ASSERT_TRUE(kv.add("p", KvValue::private_value({0xF3, {9, 9}})));
    ASSERT_TRUE(kv.add("q", KvValue::int64(1)));
    auto bytes = encode_kv_section(kv, true);
    ASSERT_TRUE(bytes);
    auto rejected = decode_kv_section(*bytes, 0);
    ASSERT_FALSE(rejected);
    EXPECT_EQ(rejected.error().code(), ErrorCode::kUnsupported);
    EXPECT_EQ(rejected.error().offset(), 4U + 3U);  // the tag of entry 0
    KvDecodeOptions opts;
    opts.accept_private_tags = true;
    opts.private_length = [](uint8_t tag, std::span<const uint8_t>) -> Result<uint64_t> {
        if (tag != 0xF3) return Error(ErrorCode::kUnsupported, "unknown private tag");
        return 2;
    };
    auto back = decode_kv_section(*bytes, 0, opts);
    ASSERT_TRUE(back) << back.error().to_string();
    EXPECT_EQ(*back, kv);
}

struct Rejection {
    const char* what;
    std::vector<uint8_t> bytes;
    ErrorCode code;
    uint64_t offset;
};

TEST(KvMetadata, DecoderRejections) {
    const std::vector<Rejection> cases = {
        {"truncated count", {1, 0}, ErrorCode::kTruncated, 100},
        {"count too large", {0xFF, 0xFF, 0xFF, 0xFF, 0}, ErrorCode::kInvalidFile, 100},
        {"zero key length", {1, 0, 0, 0, 0, 0, 0x05, 1, 0}, ErrorCode::kInvalidName, 104},
        {"key not utf-8", {1, 0, 0, 0, 1, 0, 0xFF, 0x05, 1}, ErrorCode::kInvalidName, 106},
        {"reserved tag", {1, 0, 0, 0, 1, 0, 'k', 0x08, 1}, ErrorCode::kInvalidFile, 107},
        {"tag 0xFF", {1, 0, 0, 0, 1, 0, 'k', 0xFF, 1}, ErrorCode::kInvalidFile, 107},
        {"tag 0x00", {1, 0, 0, 0, 1, 0, 'k', 0x00, 1}, ErrorCode::kInvalidFile, 107},
        {"bool 2", {1, 0, 0, 0, 1, 0, 'k', 0x05, 2}, ErrorCode::kInvalidFile, 108},
        {"string past end", {1, 0, 0, 0, 1, 0, 'k', 0x01, 9, 0, 0, 0, 'a'}, ErrorCode::kTruncated, 112},
        {"string not utf-8", {1, 0, 0, 0, 1, 0, 'k', 0x01, 1, 0, 0, 0, 0x80}, ErrorCode::kInvalidFile, 112},
        {"int64 truncated", {1, 0, 0, 0, 1, 0, 'k', 0x02, 1, 2, 3}, ErrorCode::kTruncated, 108},
        {"array element tag 7", {1, 0, 0, 0, 1, 0, 'k', 0x07, 0x07, 0, 0, 0, 0}, ErrorCode::kInvalidFile, 108},
        {"array element tag 0", {1, 0, 0, 0, 1, 0, 'k', 0x07, 0x00, 0, 0, 0, 0}, ErrorCode::kInvalidFile, 108},
        {"array count too large", {1, 0, 0, 0, 1, 0, 'k', 0x07, 0x02, 0xFF, 0xFF, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8},
         ErrorCode::kInvalidFile, 109},
        {"array bool 3", {1, 0, 0, 0, 1, 0, 'k', 0x07, 0x05, 1, 0, 0, 0, 3}, ErrorCode::kInvalidFile, 113},
        {"duplicate key",
         {2, 0, 0, 0, 1, 0, 'k', 0x05, 1, 1, 0, 'k', 0x05, 0},
         ErrorCode::kDuplicateName, 109},
        {"bytes left over", {0, 0, 0, 0, 0}, ErrorCode::kInvalidFile, 104},
        {"private tag", {1, 0, 0, 0, 1, 0, 'k', 0xF0, 1}, ErrorCode::kUnsupported, 107},
    };
    for (const Rejection& c : cases) {
        auto r = decode_kv_section(c.bytes, 100);
        ASSERT_FALSE(r) << c.what;
        EXPECT_EQ(r.error().code(), c.code) << c.what << ": " << r.error().to_string();
        EXPECT_EQ(r.error().offset(), c.offset) << c.what << ": " << r.error().to_string();
        EXPECT_FALSE(r.error().message().empty());
    }
}

// Every proper prefix of a valid section is rejected; random mutations never crash.
TEST(KvMetadata, PrefixesAndMutations) {
    auto bytes = encode_kv_section(all_types());
    ASSERT_TRUE(bytes);
    for (size_t n = 0; n < bytes->size(); ++n) {
        auto r = decode_kv_section(std::span(*bytes).first(n), 0);
        EXPECT_FALSE(r) << "prefix " << n;
    }
    std::mt19937 rng(7);
    for (int round = 0; round < 20000; ++round) {
        std::vector<uint8_t> m = *bytes;
        const int flips = 1 + static_cast<int>(rng() % 4);
        for (int k = 0; k < flips; ++k) {
            m[rng() % m.size()] ^= static_cast<uint8_t>(1U << (rng() % 8));
        }
        auto r = decode_kv_section(m, 0);
        if (r) {
            auto again = encode_kv_section(*r);
            ASSERT_TRUE(again) << again.error().to_string();
            EXPECT_EQ(*again, m);
        }
    }
}

}  // namespace
}  // namespace hurray
