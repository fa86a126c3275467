// SPDX-License-Identifier: Apache-2.0
// Failed system calls keep their errno as data (Error::os_error): the one
// builder (os_error.hpp), and what FileReader, the byte sinks and sources
// and the converters report through every layer of context.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "hurray/io/byte_sink.hpp"
#include "hurray/io/byte_source.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/os_error.hpp"
#include "hurray/io/tensor_file.hpp"

namespace {

using namespace hurray;
namespace fs = std::filesystem;

TEST(OsError, BuildsTheMessageAndKeepsTheNumber) {
    const Error e = os_error("open 'x'", ENOENT);
    EXPECT_EQ(e.code(), ErrorCode::kIoError);
    EXPECT_EQ(e.os_error(), ENOENT);
    EXPECT_EQ(e.message(), "open 'x': No such file or directory");
    EXPECT_FALSE(e.has_offset());
    const Error at = os_error("pread", EIO, ErrorCode::kIoError, 4096);
    EXPECT_EQ(at.offset(), 4096U);
    EXPECT_EQ(at.os_error(), EIO);
    EXPECT_EQ(os_error_text(ENOSPC), "No space left on device");
}

TEST(OsError, AMissingFileSaysENOENTThroughEveryReader) {
    const fs::path missing = fs::temp_directory_path() / "hurray_os_error_test_no_such_file.hrry";
    fs::remove(missing);
    auto f = FileReader::open(missing);
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.error().code(), ErrorCode::kIoError);
    EXPECT_EQ(f.error().os_error(), ENOENT) << f.error().to_string();
    auto lazy = FileReader::open(missing, FileReadOptions{.use_mmap = false});
    ASSERT_FALSE(lazy.ok());
    EXPECT_EQ(lazy.error().os_error(), ENOENT);
    auto loaded = load(missing);
    ASSERT_FALSE(loaded.ok());
    EXPECT_EQ(loaded.error().os_error(), ENOENT) << loaded.error().to_string();
    // Another failure of the call keeps its own number.
    auto dir = FileReader::open(missing.parent_path() / "hurray_os_error_test_no_such_dir" / "x.hrry");
    ASSERT_FALSE(dir.ok());
    EXPECT_EQ(dir.error().os_error(), ENOENT);
}

TEST(OsError, AFailedWriteSaysWhy) {
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    ::close(fds[0]);  // nobody reads: a write is EPIPE (a socket: no SIGPIPE)
    FdSink sink(fds[1]);
    const std::vector<uint8_t> bytes(16, 1);
    Status s = sink.write(bytes);
    ::close(fds[1]);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code(), ErrorCode::kIoError);
    EXPECT_EQ(s.error().os_error(), EPIPE) << s.error().to_string();
}

}  // namespace
