// SPDX-License-Identifier: Apache-2.0
// ByteSource: read_full and skip over short reads, FdSource on pipes and
// regular files, StdioSource, MemorySource chunking.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <numeric>
#include <thread>
#include <vector>

#include "hurray/io/byte_source.hpp"

namespace {

using hurray::ErrorCode;
using hurray::FdSource;
using hurray::MemorySource;
using hurray::StdioSource;

std::vector<uint8_t> pattern(size_t n) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) {
        v[i] = static_cast<uint8_t>((i * 131U + 7U) & 0xFFU);
    }
    return v;
}

/// A pipe whose write end is fed by a thread in small pieces.
class PipeFeeder {
public:
    PipeFeeder(std::vector<uint8_t> bytes, size_t piece) : bytes_(std::move(bytes)) {
        int fds[2] = {-1, -1};
        EXPECT_EQ(::pipe(fds), 0);
        read_fd_ = fds[0];
        const int w = fds[1];
        writer_ = std::thread([this, w, piece] {
            size_t off = 0;
            while (off < bytes_.size()) {
                const size_t n = std::min(piece, bytes_.size() - off);
                const ssize_t k = ::write(w, bytes_.data() + off, n);
                if (k <= 0) {
                    break;  // reader closed early
                }
                off += static_cast<size_t>(k);
            }
            ::close(w);
        });
    }
    ~PipeFeeder() {
        if (read_fd_ >= 0) {
            ::close(read_fd_);
        }
        writer_.join();
    }
    PipeFeeder(const PipeFeeder&) = delete;
    PipeFeeder& operator=(const PipeFeeder&) = delete;
    /// Hands the read end over (the caller closes it).
    int release() {
        const int fd = read_fd_;
        read_fd_ = -1;
        return fd;
    }

private:
    std::vector<uint8_t> bytes_;
    int read_fd_ = -1;
    std::thread writer_;
};

TEST(MemorySource, ReadSomeHonoursMaxChunk) {
    const auto bytes = pattern(100);
    MemorySource src(bytes, 7);
    std::vector<uint8_t> buf(50);
    auto n = src.read_some(buf);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, 7U);
    EXPECT_EQ(src.position(), 7U);
    EXPECT_TRUE(std::equal(buf.begin(), buf.begin() + 7, bytes.begin()));
}

TEST(MemorySource, ZeroMaxChunkMeansOne) {
    const auto bytes = pattern(10);
    MemorySource src(bytes, 0);
    std::vector<uint8_t> buf(10);
    auto n = src.read_some(buf);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, 1U);
}

TEST(MemorySource, EmptyOutputIsAnError) {
    const auto bytes = pattern(10);
    MemorySource src(bytes);
    auto n = src.read_some({});
    ASSERT_FALSE(n.ok());
    EXPECT_EQ(n.error().code(), ErrorCode::kInvalidArgument);
}

TEST(MemorySource, ReadFullGathersShortReadsAndStopsAtEof) {
    for (size_t chunk : {size_t{1}, size_t{3}, size_t{64}, SIZE_MAX}) {
        SCOPED_TRACE(chunk);
        const auto bytes = pattern(100);
        MemorySource src(bytes, chunk);
        std::vector<uint8_t> buf(60);
        auto n = src.read_full(buf);
        ASSERT_TRUE(n.ok());
        EXPECT_EQ(*n, 60U);
        EXPECT_TRUE(std::equal(buf.begin(), buf.end(), bytes.begin()));
        n = src.read_full(buf);  // only 40 left
        ASSERT_TRUE(n.ok());
        EXPECT_EQ(*n, 40U);
        EXPECT_TRUE(std::equal(buf.begin(), buf.begin() + 40, bytes.begin() + 60));
        n = src.read_full(buf);
        ASSERT_TRUE(n.ok());
        EXPECT_EQ(*n, 0U);
        auto s = src.read_some(buf);
        ASSERT_TRUE(s.ok());
        EXPECT_EQ(*s, 0U);
    }
}

TEST(MemorySource, SkipClampsAtEnd) {
    const auto bytes = pattern(100);
    MemorySource src(bytes, 3);
    auto s = src.skip(30);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(*s, 30U);
    std::vector<uint8_t> one(1);
    ASSERT_TRUE(src.read_full(one).ok());
    EXPECT_EQ(one[0], bytes[30]);
    s = src.skip(1000);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(*s, 69U);
    s = src.skip(5);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(*s, 0U);
}

// The default skip (through the base class) reads through its buffer.
class ChunkySource final : public hurray::ByteSource {
public:
    explicit ChunkySource(std::vector<uint8_t> b) : bytes_(std::move(b)) {}
    hurray::Result<size_t> read_some(std::span<uint8_t> out) override {
        const size_t n = std::min({out.size(), size_t{5}, bytes_.size() - pos_});
        std::copy_n(bytes_.begin() + static_cast<std::ptrdiff_t>(pos_), n, out.begin());
        pos_ += n;
        return n;
    }
    std::vector<uint8_t> bytes_;
    size_t pos_ = 0;
};

TEST(ByteSource, DefaultSkipReadsThroughAndCountsAtEof) {
    ChunkySource src(pattern(200000));
    auto s = src.skip(150001);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(*s, 150001U);
    EXPECT_EQ(src.pos_, 150001U);
    s = src.skip(100000);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(*s, 49999U);
    s = src.skip(0);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(*s, 0U);
}

// A faulty source that claims more bytes than it was given room for.
class LyingSource final : public hurray::ByteSource {
public:
    hurray::Result<size_t> read_some(std::span<uint8_t> out) override { return out.size() + 1; }
};

TEST(ByteSource, OverlongReadSomeIsAnIoError) {
    LyingSource src;
    std::vector<uint8_t> buf(8);
    auto n = src.read_full(buf);
    ASSERT_FALSE(n.ok());
    EXPECT_EQ(n.error().code(), ErrorCode::kIoError);
    auto s = src.skip(100);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code(), ErrorCode::kIoError);
}

TEST(FdSource, PipeWithWriterThread) {
    const auto bytes = pattern(300000);
    PipeFeeder feeder(bytes, 777);
    FdSource src(feeder.release(), /*owns=*/true);
    std::vector<uint8_t> got(1000);
    auto n = src.read_full(got);
    ASSERT_TRUE(n.ok());
    ASSERT_EQ(*n, 1000U);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), bytes.begin()));
    auto s = src.skip(200000);  // a pipe cannot seek: reads through
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(*s, 200000U);
    std::vector<uint8_t> rest(200000);
    n = src.read_full(rest);
    ASSERT_TRUE(n.ok());
    ASSERT_EQ(*n, 99000U);
    EXPECT_TRUE(std::equal(rest.begin(), rest.begin() + 99000, bytes.begin() + 201000));
    n = src.read_some(rest);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, 0U);
    s = src.skip(10);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(*s, 0U);
}

TEST(FdSource, SkipPastEndOfPipe) {
    PipeFeeder feeder(pattern(1000), 100);
    FdSource src(feeder.release(), true);
    auto s = src.skip(5000);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(*s, 1000U);
}

TEST(FdSource, RegularFileSkipSeeksAndClamps) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("hurray_byte_source_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto path = dir / "data.bin";
    const auto bytes = pattern(10000);
    {
        std::FILE* f = std::fopen(path.c_str(), "wb");
        ASSERT_NE(f, nullptr);
        ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
        std::fclose(f);
    }
    {
        const int fd = ::open(path.c_str(), O_RDONLY);
        ASSERT_GE(fd, 0);
        FdSource src(fd, true);
        EXPECT_EQ(src.fd(), fd);
        auto s = src.skip(4000);
        ASSERT_TRUE(s.ok());
        EXPECT_EQ(*s, 4000U);
        std::vector<uint8_t> got(10);
        ASSERT_EQ(*src.read_full(got), 10U);
        EXPECT_TRUE(std::equal(got.begin(), got.end(), bytes.begin() + 4000));
        s = src.skip(100000);
        ASSERT_TRUE(s.ok());
        EXPECT_EQ(*s, 5990U);
        auto n = src.read_some(got);
        ASSERT_TRUE(n.ok());
        EXPECT_EQ(*n, 0U);
    }
    std::filesystem::remove_all(dir);
}

TEST(FdSource, BadDescriptorIsAnIoError) {
    FdSource src(-1);
    std::vector<uint8_t> buf(4);
    auto n = src.read_some(buf);
    ASSERT_FALSE(n.ok());
    EXPECT_EQ(n.error().code(), ErrorCode::kIoError);
    auto s = src.skip(4);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code(), ErrorCode::kIoError);
}

TEST(StdioSource, ReadsAStreamToTheEnd) {
    const auto bytes = pattern(5000);
    std::FILE* f = std::tmpfile();
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
    std::rewind(f);
    {
        StdioSource src(f);
        std::vector<uint8_t> got(6000);
        auto n = src.read_full(got);
        ASSERT_TRUE(n.ok());
        ASSERT_EQ(*n, 5000U);
        EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), got.begin()));
    }
    std::fclose(f);
}

TEST(StdioSource, StreamErrorIsAnIoError) {
    // Reading a write-only stream sets its error indicator.
    const auto dir = std::filesystem::temp_directory_path() /
                     ("hurray_stdio_source_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::FILE* f = std::fopen((dir / "w.bin").c_str(), "wb");
    ASSERT_NE(f, nullptr);
    {
        StdioSource src(f);
        std::vector<uint8_t> buf(4);
        auto n = src.read_some(buf);
        ASSERT_FALSE(n.ok());
        EXPECT_EQ(n.error().code(), ErrorCode::kIoError);
    }
    std::fclose(f);
    std::filesystem::remove_all(dir);
}

}  // namespace
