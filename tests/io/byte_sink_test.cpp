// SPDX-License-Identifier: Apache-2.0
// Byte sinks (byte_sink.hpp): FdSink on a pipe (short writes under a slow
// reader), a socket whose peer is gone (an error, not SIGPIPE), StdioSink,
// MemorySink, and AtomicFileSink: target untouched until commit, abandon and
// destructor remove the temporary file, permissions, errors naming the path,
// and the non-durable replacement by name exchange behaving as a rename.
#include "hurray/io/byte_sink.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "io_test_util.hpp"

namespace hurray {
namespace {

using hurray::test::Bytes;
using hurray::test::pattern;
using hurray::test::read_all;
using hurray::test::TempDir;
using hurray::test::write_all_file;

/// Reads everything from `fd` until end of file, in small reads.
Bytes drain(int fd) {
    Bytes out;
    uint8_t buf[3000];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        out.insert(out.end(), buf, buf + n);
    }
    return out;
}

TEST(FdSink, WritesEverythingThroughAPipe) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    Bytes got;
    std::thread reader([&] { got = drain(fds[0]); });
    const Bytes data = pattern(3 * 1024 * 1024 + 17, 1);  // far more than the pipe buffer
    {
        FdSink sink(fds[1], /*owns=*/true);
        EXPECT_EQ(sink.fd(), fds[1]);
        ASSERT_TRUE(sink.write(std::span<const uint8_t>(data).first(10)));
        ASSERT_TRUE(sink.write({}));
        ASSERT_TRUE(sink.write(std::span<const uint8_t>(data).subspan(10)));
        ASSERT_TRUE(sink.flush());
    }  // closes the write end: the reader sees end of file
    reader.join();
    ::close(fds[0]);
    EXPECT_EQ(got, data);
}

TEST(FdSink, DoesNotCloseWhatItDoesNotOwn) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    { FdSink sink(fds[1]); }
    EXPECT_EQ(::fcntl(fds[1], F_GETFD), 0) << "the descriptor was closed";
    ::close(fds[0]);
    ::close(fds[1]);
}

TEST(FdSink, ClosedSocketPeerIsAnErrorNotSigpipe) {
    int sv[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ::close(sv[1]);
    FdSink sink(sv[0], /*owns=*/true);
    const Bytes data = pattern(1000, 2);
    auto s = sink.write(data);  // without MSG_NOSIGNAL the process would die here
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code(), ErrorCode::kIoError);
}

TEST(FdSink, SocketTransfersBytes) {
    int sv[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    Bytes got;
    std::thread reader([&] { got = drain(sv[1]); });
    const Bytes data = pattern(1 << 20, 3);
    {
        FdSink sink(sv[0], true);
        ASSERT_TRUE(sink.write(data));
    }
    reader.join();
    ::close(sv[1]);
    EXPECT_EQ(got, data);
}

TEST(FdSink, BadDescriptorIsAnError) {
    FdSink sink(-1);
    const Bytes data = {1, 2, 3};
    auto s = sink.write(data);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code(), ErrorCode::kIoError);
}

TEST(StdioSink, WritesAndFlushes) {
    TempDir dir;
    const std::string path = dir.file("stdio.bin");
    std::FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    const Bytes data = pattern(100000, 4);
    {
        StdioSink sink(f);
        ASSERT_TRUE(sink.write(data));
        ASSERT_TRUE(sink.flush());
        EXPECT_EQ(read_all(path), data);
    }
    std::fclose(f);
}

TEST(StdioSink, ReadOnlyStreamIsAnError) {
    TempDir dir;
    const std::string path = dir.file("ro.bin");
    write_all_file(path, {1});
    std::FILE* f = std::fopen(path.c_str(), "rb");
    ASSERT_NE(f, nullptr);
    StdioSink sink(f);
    const Bytes data(10000, 7);
    auto s = sink.write(data);
    if (s) {
        s = sink.flush();
    }
    EXPECT_FALSE(s);
    std::fclose(f);
}

TEST(MemorySink, AppendsAndMovesOut) {
    MemorySink sink;
    ASSERT_TRUE(sink.write(Bytes{1, 2}));
    ASSERT_TRUE(sink.write({}));
    ASSERT_TRUE(sink.write(Bytes{3}));
    ASSERT_TRUE(sink.flush());
    EXPECT_EQ(sink.bytes(), (Bytes{1, 2, 3}));
    Bytes taken = std::move(sink).take();
    EXPECT_EQ(taken, (Bytes{1, 2, 3}));
}

// ---------------------------------------------------------------------------
// AtomicFileSink

TEST(AtomicFileSink, CommitReplacesTheTargetOnlyThen) {
    TempDir dir;
    const std::string path = dir.file("model.hrry");
    const Bytes old_content = {9, 9, 9};
    write_all_file(path, old_content);
    auto sink = AtomicFileSink::create(path);
    ASSERT_TRUE(sink) << sink.error().to_string();
    EXPECT_EQ((*sink)->path(), path);
    const std::string temp = (*sink)->temp_path();
    EXPECT_EQ(temp.rfind(dir.file(".model.hrry.tmp-"), 0), 0U) << temp;
    EXPECT_EQ(temp.size(), dir.file(".model.hrry.tmp-XXXXXX").size());
    const Bytes data = pattern(200000, 5);
    ASSERT_TRUE((*sink)->write(data));
    EXPECT_EQ(read_all(path), old_content);  // untouched before commit
    EXPECT_EQ(read_all(temp), data);
    ASSERT_TRUE((*sink)->commit());
    EXPECT_EQ(read_all(path), data);
    EXPECT_EQ(dir.list(), std::vector<std::string>{"model.hrry"});
    // After commit: writes and a second commit fail; the file stays.
    EXPECT_EQ((*sink)->write(Bytes{1}).error().code(), ErrorCode::kIoError);
    EXPECT_FALSE((*sink)->commit());
    sink->reset();
    EXPECT_EQ(read_all(path), data);
}

TEST(AtomicFileSink, CreatesANewFile) {
    TempDir dir;
    const std::string path = dir.file("new.bin");
    auto sink = AtomicFileSink::create(path);
    ASSERT_TRUE(sink);
    ASSERT_TRUE((*sink)->commit());  // an empty file is a file
    EXPECT_TRUE(std::filesystem::exists(path));
    EXPECT_EQ(std::filesystem::file_size(path), 0U);
}

TEST(AtomicFileSink, AbandonRemovesTheTemporaryFile) {
    TempDir dir;
    const std::string path = dir.file("a.bin");
    write_all_file(path, {1, 2});
    auto sink = AtomicFileSink::create(path);
    ASSERT_TRUE(sink);
    ASSERT_TRUE((*sink)->write(Bytes{5, 6, 7}));
    EXPECT_EQ(dir.list().size(), 2U);
    (*sink)->abandon();
    (*sink)->abandon();  // idempotent
    EXPECT_EQ(dir.list(), std::vector<std::string>{"a.bin"});
    EXPECT_EQ(read_all(path), (Bytes{1, 2}));
    EXPECT_FALSE((*sink)->write(Bytes{1}));
    EXPECT_FALSE((*sink)->commit());
    EXPECT_EQ(read_all(path), (Bytes{1, 2}));
}

TEST(AtomicFileSink, DestructorWithoutCommitRemovesTheTemporaryFile) {
    TempDir dir;
    const std::string path = dir.file("b.bin");
    {
        auto sink = AtomicFileSink::create(path);
        ASSERT_TRUE(sink);
        ASSERT_TRUE((*sink)->write(pattern(5000, 6)));
    }
    EXPECT_TRUE(dir.list().empty());
    EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(AtomicFileSink, PermissionsFollowTheUmask) {
    TempDir dir;
    const mode_t old = ::umask(027);
    const std::string path = dir.file("perm.bin");
    auto sink = AtomicFileSink::create(path);
    ::umask(old);
    ASSERT_TRUE(sink);
    ASSERT_TRUE((*sink)->commit());
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777U, 0640U);

    const mode_t old2 = ::umask(022);
    const std::string path2 = dir.file("perm2.bin");
    auto sink2 = AtomicFileSink::create(path2);
    ::umask(old2);
    ASSERT_TRUE(sink2);
    ASSERT_TRUE((*sink2)->commit());
    ASSERT_EQ(::stat(path2.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777U, 0644U);
}

TEST(AtomicFileSink, ManySinksForOnePathGetTheirOwnTemporaryFiles) {
    // Each sink creates ".NAME.tmp-" plus six random characters (O_EXCL);
    // sinks open at once never share a file, and the last commit wins.
    TempDir dir;
    const std::string path = dir.file("model.hrry");
    std::vector<std::unique_ptr<AtomicFileSink>> sinks;
    for (int i = 0; i < 64; ++i) {
        auto sink = AtomicFileSink::create(path, Durability::kAtomicOnly);
        ASSERT_TRUE(sink) << sink.error().message();
        ASSERT_TRUE((*sink)->write(Bytes{static_cast<uint8_t>(i)}));
        sinks.push_back(std::move(*sink));
    }
    const auto names = dir.list();
    ASSERT_EQ(names.size(), 64U);
    for (const auto& name : names) {
        ASSERT_EQ(name.size(), std::string(".model.hrry.tmp-").size() + 6) << name;
        EXPECT_EQ(name.rfind(".model.hrry.tmp-", 0), 0U) << name;
    }
    for (auto& sink : sinks) {
        ASSERT_TRUE(sink->commit());
    }
    EXPECT_EQ(dir.list(), std::vector<std::string>{"model.hrry"});
    EXPECT_EQ(read_all(path), Bytes{63});
}

TEST(AtomicFileSink, RelativePathInTheCurrentDirectory) {
    TempDir dir;
    const auto cwd = std::filesystem::current_path();
    std::filesystem::current_path(dir.path());
    {
        auto sink = AtomicFileSink::create("rel.bin");
        ASSERT_TRUE(sink);
        EXPECT_EQ((*sink)->temp_path().rfind(".rel.bin.tmp-", 0), 0U);
        ASSERT_TRUE((*sink)->write(Bytes{4}));
        ASSERT_TRUE((*sink)->commit());
    }
    std::filesystem::current_path(cwd);
    EXPECT_EQ(read_all(dir.file("rel.bin")), Bytes{4});
}

TEST(AtomicFileSink, ErrorsNameThePath) {
    TempDir dir;
    const std::string missing = dir.file("no/such/dir/x.bin");
    auto sink = AtomicFileSink::create(missing);
    ASSERT_FALSE(sink);
    EXPECT_EQ(sink.error().code(), ErrorCode::kIoError);
    EXPECT_NE(sink.error().message().find(missing), std::string::npos) << sink.error().message();
    EXPECT_NE(sink.error().message().find("No such file"), std::string::npos) << sink.error().message();

    EXPECT_EQ(AtomicFileSink::create(dir.file("")).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(AtomicFileSink::create("").error().code(), ErrorCode::kInvalidArgument);
}

TEST(AtomicFileSink, FailedRenameKeepsTheTargetAndRemovesTheTemporary) {
    for (const bool durable : {true, false}) {
        SCOPED_TRACE(durable ? "durable" : "not durable");
        TempDir dir;
        // The target is a directory, empty or not: a file cannot replace it
        // (rename(2): EISDIR), and the non-durable exchange must not swap it in.
        for (const bool empty : {true, false}) {
            const std::string path = dir.file(empty ? "empty" : "target");
            std::filesystem::create_directory(path);
            if (!empty) {
                write_all_file(path + "/inside", {1});
            }
            auto sink = AtomicFileSink::create(path, durable);
            ASSERT_TRUE(sink);
            ASSERT_TRUE((*sink)->write(Bytes{1, 2, 3}));
            auto s = (*sink)->commit();
            ASSERT_FALSE(s);
            EXPECT_EQ(s.error().code(), ErrorCode::kIoError);
            EXPECT_NE(s.error().message().find(path), std::string::npos) << s.error().message();
            EXPECT_TRUE(std::filesystem::is_directory(path));
        }
        EXPECT_EQ(dir.list(), (std::vector<std::string>{"empty", "target"}));
        EXPECT_EQ(read_all(dir.file("target/inside")), Bytes{1});
    }
}

// replace_file: the commit of AtomicFileSink for a file written by other means
// (convert's verified outputs and libzip's archives use it).
TEST(ReplaceFile, ReplacesOrCreatesDurablyOrNot) {
    for (const bool durable : {true, false}) {
        SCOPED_TRACE(durable ? "durable" : "not durable");
        TempDir dir;
        const std::string target = dir.file("out.bin");
        const std::string temp = dir.file(".out.bin.tmp");
        write_all_file(temp, {1, 2, 3});
        ASSERT_TRUE(replace_file(temp, target, durable));  // creates
        EXPECT_EQ(read_all(target), (Bytes{1, 2, 3}));
        const Bytes big = pattern(size_t{1} << 20, 7);  // past the size whose old copy is freed in the background
        write_all_file(temp, big);
        ASSERT_TRUE(replace_file(temp, target, durable));  // replaces
        EXPECT_EQ(read_all(target), big);
        write_all_file(temp, {4});
        ASSERT_TRUE(replace_file(temp, target, durable));  // replaces the big one
        EXPECT_EQ(read_all(target), Bytes{4});
        EXPECT_EQ(dir.list(), (std::vector<std::string>{"out.bin"}));
    }
}

TEST(ReplaceFile, FailureRemovesTheTemporaryAndKeepsTheTarget) {
    for (const bool durable : {true, false}) {
        SCOPED_TRACE(durable ? "durable" : "not durable");
        TempDir dir;
        const std::string target = dir.file("target");
        std::filesystem::create_directory(target);
        write_all_file(target + "/inside", {1});
        const std::string temp = dir.file(".target.tmp");
        write_all_file(temp, {1, 2, 3});
        const auto s = replace_file(temp, target, durable);
        ASSERT_FALSE(s);
        EXPECT_EQ(s.error().code(), ErrorCode::kIoError);
        EXPECT_NE(s.error().message().find(target), std::string::npos) << s.error().message();
        EXPECT_EQ(dir.list(), (std::vector<std::string>{"target"}));
        EXPECT_EQ(read_all(target + "/inside"), Bytes{1});
        // A temporary file that does not exist: an error, nothing created.
        const auto missing = replace_file(dir.file("nothing"), dir.file("new"), durable);
        ASSERT_FALSE(missing);
        EXPECT_EQ(missing.error().code(), ErrorCode::kIoError);
        EXPECT_FALSE(std::filesystem::exists(dir.file("new")));
    }
}

// A non-durable commit over an existing file exchanges the names and unlinks
// the old file (no rename-time flush): the outcome is a rename's.
TEST(AtomicFileSink, NotDurableReplacesAnExistingFileLikeARename) {
    TempDir dir;
    const std::string path = dir.file("model.hrry");
    write_all_file(path, {9, 9, 9});
    struct stat before {};
    ASSERT_EQ(::stat(path.c_str(), &before), 0);
    const int old_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(old_fd, 0);
    const mode_t old_mask = ::umask(027);
    auto sink = AtomicFileSink::create(path, Durability::kAtomicOnly);
    ::umask(old_mask);
    ASSERT_TRUE(sink);
    const Bytes data = pattern(100000, 3);
    ASSERT_TRUE((*sink)->write(data));
    EXPECT_EQ(read_all(path), (Bytes{9, 9, 9}));  // untouched before commit
    ASSERT_TRUE((*sink)->commit());
    EXPECT_EQ(read_all(path), data);
    EXPECT_EQ(dir.list(), std::vector<std::string>{"model.hrry"});  // the old file is gone
    struct stat after {};
    ASSERT_EQ(::stat(path.c_str(), &after), 0);
    EXPECT_NE(after.st_ino, before.st_ino);
    EXPECT_EQ(after.st_mode & 0777U, 0640U);
    // A reader that had the old file open still reads the old bytes.
    uint8_t buf[8] = {};
    EXPECT_EQ(::pread(old_fd, buf, sizeof buf, 0), 3);
    EXPECT_EQ(buf[0], 9);
    ::close(old_fd);
    EXPECT_FALSE((*sink)->commit());  // once only
}

TEST(AtomicFileSink, DurableReplacesAnExistingFileAndLeavesNoDescriptorOpen) {
    // The durable commit holds the old file open across rename(2) and closes
    // it on a background thread: the old file is gone, readers keep the old
    // bytes, and no descriptor stays open once that thread has run.
    TempDir dir;
    const std::string path = dir.file("model.hrry");
    write_all_file(path, pattern(300000, 8));
    const auto open_fds = [] {
        size_t n = 0;
        for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
            ++n;
        }
        return n;
    };
    const int old_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(old_fd, 0);
    const size_t fds_before = open_fds();
    auto sink = AtomicFileSink::create(path, Durability::kDurable);
    ASSERT_TRUE(sink);
    const Bytes data = pattern(100000, 4);
    ASSERT_TRUE((*sink)->write(data));
    ASSERT_TRUE((*sink)->commit());
    sink->reset();
    EXPECT_EQ(read_all(path), data);
    EXPECT_EQ(dir.list(), std::vector<std::string>{"model.hrry"});
    uint8_t buf[4] = {};
    EXPECT_EQ(::pread(old_fd, buf, sizeof buf, 0), 4);
    EXPECT_EQ(buf[0], pattern(300000, 8)[0]);
    ::close(old_fd);
    size_t fds_after = open_fds();
    for (int i = 0; i < 500 && fds_after >= fds_before; ++i) {  // the background close
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        fds_after = open_fds();
    }
    EXPECT_LE(fds_after + 1, fds_before) << "a descriptor of the replaced file was left open";
}

TEST(AtomicFileSink, ReplacesASymlinkNotTheFileItNames) {
    // A target that is not a regular file is neither held nor exchanged: the
    // symlink itself is replaced, durable or not.
    for (const Durability durability : {Durability::kDurable, Durability::kAtomicOnly}) {
        SCOPED_TRACE(durability == Durability::kDurable ? "durable" : "not durable");
        TempDir dir;
        const std::string real = dir.file("real.bin");
        const std::string link = dir.file("link.bin");
        write_all_file(real, {1, 2});
        std::filesystem::create_symlink(real, link);
        auto sink = AtomicFileSink::create(link, durability);
        ASSERT_TRUE(sink);
        ASSERT_TRUE((*sink)->write(Bytes{7}));
        ASSERT_TRUE((*sink)->commit());
        EXPECT_FALSE(std::filesystem::is_symlink(link));
        EXPECT_EQ(read_all(link), Bytes{7});
        EXPECT_EQ(read_all(real), (Bytes{1, 2}));
        EXPECT_EQ(dir.list(), (std::vector<std::string>{"link.bin", "real.bin"}));
    }
}

TEST(AtomicFileSink, NotDurableKeepsOtherHardLinksOfTheOldFile) {
    TempDir dir;
    const std::string path = dir.file("a.bin");
    const std::string other = dir.file("b.bin");
    write_all_file(path, {4, 4});
    std::filesystem::create_hard_link(path, other);
    auto sink = AtomicFileSink::create(path, false);
    ASSERT_TRUE(sink);
    ASSERT_TRUE((*sink)->write(Bytes{5}));
    ASSERT_TRUE((*sink)->commit());
    EXPECT_EQ(read_all(path), Bytes{5});
    EXPECT_EQ(read_all(other), (Bytes{4, 4}));
    EXPECT_EQ(dir.list(), (std::vector<std::string>{"a.bin", "b.bin"}));
}

}  // namespace
}  // namespace hurray
