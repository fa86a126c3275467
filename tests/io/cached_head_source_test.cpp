// SPDX-License-Identifier: Apache-2.0
// CachedHeadSource: ranges inside the head come from memory (no request), every
// other range (one that crosses the head's end too) from the inner source.

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

#include "hurray/io/cached_head_source.hpp"
#include "hurray/io/range_source.hpp"

namespace hurray {
namespace {

TEST(CachedHeadSource, ServesTheHeadFromMemoryAndTheRestFromTheSource) {
    std::vector<uint8_t> bytes(1000);
    std::iota(bytes.begin(), bytes.end(), uint8_t{0});
    auto inner = std::make_shared<MemoryRangeSource>(bytes);
    CachedHeadSource cached(inner, std::vector<uint8_t>(bytes.begin(), bytes.begin() + 100));
    EXPECT_EQ(cached.size(), 1000U);
    EXPECT_EQ(cached.name(), inner->name());

    std::vector<uint8_t> a(100);
    ASSERT_TRUE(cached.read(0, a).ok());  // the whole head
    EXPECT_EQ(inner->request_count(), 0U);
    EXPECT_TRUE(std::equal(a.begin(), a.end(), bytes.begin()));

    std::vector<uint8_t> b(10);
    ASSERT_TRUE(cached.read(95, b).ok());  // crosses the head's end
    EXPECT_EQ(inner->request_count(), 1U);
    EXPECT_TRUE(std::equal(b.begin(), b.end(), bytes.begin() + 95));

    std::vector<uint8_t> c(4);
    std::vector<uint8_t> d(4);
    std::vector<uint8_t> e(4);
    const ByteRange ranges[] = {{10, c}, {500, d}, {96, e}};
    ASSERT_TRUE(cached.read_ranges(ranges).ok());  // c and e from memory, d from the source
    EXPECT_TRUE(std::equal(c.begin(), c.end(), bytes.begin() + 10));
    EXPECT_TRUE(std::equal(d.begin(), d.end(), bytes.begin() + 500));
    EXPECT_TRUE(std::equal(e.begin(), e.end(), bytes.begin() + 96));
    EXPECT_EQ(inner->request_count(), 2U);

    std::vector<uint8_t> past(8);
    EXPECT_FALSE(cached.read(996, past).ok());  // past the end: the source's error
}

TEST(CachedHeadSource, AHeadLongerThanTheFileIsCut) {
    const std::vector<uint8_t> bytes = {1, 2, 3};
    auto inner = std::make_shared<MemoryRangeSource>(bytes);
    CachedHeadSource cached(inner, std::vector<uint8_t>{1, 2, 3, 4, 5});
    std::vector<uint8_t> all(3);
    ASSERT_TRUE(cached.read(0, all).ok());
    EXPECT_EQ(all, bytes);
    std::vector<uint8_t> more(4);
    EXPECT_FALSE(cached.read(0, more).ok());  // the 4th byte is not the file's
}

}  // namespace
}  // namespace hurray
