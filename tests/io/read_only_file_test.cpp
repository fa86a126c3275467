// SPDX-License-Identifier: Apache-2.0
// ReadOnlyFile: the one guarded file access of the readers of other formats.
#include "hurray/io/read_only_file.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <vector>

#include "io_test_util.hpp"

namespace hurray {
namespace {

using test::TempDir;

std::filesystem::path write_bytes(const TempDir& dir, const std::vector<uint8_t>& bytes) {
    const std::filesystem::path p = dir.path() / "f.bin";
    std::ofstream out(p, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return p;
}

std::vector<uint8_t> counting(size_t n) {
    std::vector<uint8_t> v(n);
    std::iota(v.begin(), v.end(), uint8_t{0});
    return v;
}

TEST(ReadOnlyFile, ReadsSlicesAndCopiesMappedOrNot) {
    TempDir dir;
    const auto bytes = counting(3 * 4096 + 100);
    const auto p = write_bytes(dir, bytes);
    for (const bool mmap : {true, false}) {
        auto f = ReadOnlyFile::open(p, mmap);
        ASSERT_TRUE(f.ok()) << f.error().to_string();
        EXPECT_EQ(f->size(), bytes.size());
        SharedBuffer slice;
        {
            const ReadOnlyFile copy = *f;  // copies share the open file
            auto s = copy.read(4090, 20, "piece");
            ASSERT_TRUE(s.ok()) << s.error().to_string();
            slice = *s;
        }
        *f = ReadOnlyFile::memory({});  // the slice outlives every ReadOnlyFile
        ASSERT_EQ(slice.size(), 20U);
        EXPECT_TRUE(std::equal(slice.begin(), slice.end(), bytes.begin() + 4090)) << mmap;
        auto g = ReadOnlyFile::open(p, mmap);
        ASSERT_TRUE(g.ok());
        EXPECT_EQ(g->contiguous(), mmap);
        std::vector<uint8_t> out(100);
        ASSERT_TRUE(g->read_into(3 * 4096, out, "tail").ok());
        EXPECT_TRUE(std::equal(out.begin(), out.end(), bytes.begin() + 3 * 4096));
        g->advise(0, 4096, AccessPattern::kDontNeed);  // a hint, never fails
        EXPECT_TRUE(g->check_unchanged().ok());
        const auto past = g->read_into(bytes.size() - 10, out, "tail");
        ASSERT_FALSE(past.ok());
        EXPECT_EQ(past.error().code(), ErrorCode::kTruncated);
        EXPECT_NE(past.error().message().find("tail"), std::string::npos) << past.error().message();
    }
}

TEST(ReadOnlyFile, OpenErrorsNameTheFile) {
    TempDir dir;
    const auto missing = ReadOnlyFile::open(dir.path() / "missing");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().code(), ErrorCode::kIoError);
    EXPECT_EQ(missing.error().file(), (dir.path() / "missing").native());
    const auto directory = ReadOnlyFile::open(dir.path());
    ASSERT_FALSE(directory.ok());
    EXPECT_EQ(directory.error().code(), ErrorCode::kIoError);
    EXPECT_EQ(directory.error().file(), dir.path().native());
}

TEST(ReadOnlyFile, AFileThatShrinksUnderTheMappingReadsZerosAndIsReported) {
    TempDir dir;
    const auto bytes = counting(4 * 4096);
    const auto p = write_bytes(dir, bytes);
    auto f = ReadOnlyFile::open(p);
    ASSERT_TRUE(f.ok());
    auto head = f->read(0, 16, "head");  // maps the file
    ASSERT_TRUE(head.ok());
    std::filesystem::resize_file(p, 4096);
    std::vector<uint8_t> out(64);
    const auto st = f->read_into(3 * 4096, out, "gone");
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code(), ErrorCode::kIoError) << st.error().to_string();
    EXPECT_FALSE(f->check_unchanged().ok());
}

TEST(ReadOnlyFile, MemoryKeepsItsOwner) {
    auto owner = std::make_shared<std::vector<uint8_t>>(counting(32));
    const ReadOnlyFile f = ReadOnlyFile::memory(*owner, owner);
    std::weak_ptr<std::vector<uint8_t>> weak = owner;
    owner.reset();
    EXPECT_FALSE(weak.expired());
    EXPECT_TRUE(f.contiguous());
    auto s = f.read(8, 4, "x");
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(*s->begin(), 8);
    EXPECT_TRUE(f.check_unchanged().ok());
}

}  // namespace
}  // namespace hurray
