// SPDX-License-Identifier: Apache-2.0
// The conversion fast paths: file_to_stream to a file descriptor (writev,
// sendmsg, vmsplice) gives byte for byte what the ByteSink path gives, through
// a pipe, a socket pair, a non-blocking pipe and a regular file; a reader that
// goes away is an EPIPE error, not a SIGPIPE death; stream_to_file from a pipe
// (read straight into the writer's buffer) gives the same file as from memory. Also: a
// non-durable atomic save writes the same file as a durable one.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/save.hpp"
#include "hurray/io/stream_convert.hpp"
#include "io_test_util.hpp"
#include "stream_test_support.hpp"

namespace hurray {
namespace {

using streamtest::Item;
using streamtest::Known;

/// A file on disk holding `items` (named tensor_<i>), and the stream the slow
/// path (file_to_stream to a MemorySink) makes of it: the reference.
struct Fixture {
    test::TempDir dir;
    Known known;
    std::vector<Item> items;
    std::string path;
    std::vector<uint8_t> reference;

    Fixture() {
        items = streamtest::mixed_items(known, 8);  // some data runs take the vmsplice path
        path = dir.file("m.hrry");
        const auto stream = streamtest::stream_bytes(items);
        auto w = FileWriter::create_file(path, {}, Durability::kAtomicOnly);
        EXPECT_TRUE(w.ok());
        MemorySource src(stream);
        auto n = stream_to_file(src, *w, {}, known.options());
        EXPECT_TRUE(n.ok()) << n.error().to_string();
        EXPECT_TRUE(w->finish().ok());
        auto f = open();
        MemorySink sink;
        const Status s = file_to_stream(f, sink);
        EXPECT_TRUE(s.ok()) << s.error().to_string();
        reference = std::move(sink).take();
        EXPECT_EQ(reference, stream);
    }
    [[nodiscard]] FileReader open(bool mmap = true) const {
        FileReadOptions o = known.file_options();
        o.use_mmap = mmap;
        auto f = FileReader::open(path, o);
        EXPECT_TRUE(f.ok()) << f.error().to_string();
        return std::move(*f);
    }
};

/// Reads `fd` to its end (in pieces of `piece` bytes) and closes it.
std::vector<uint8_t> drain(int fd, size_t piece = 1 << 20) {
    std::vector<uint8_t> out;
    std::vector<uint8_t> buf(piece);
    while (true) {
        const ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        out.insert(out.end(), buf.begin(), buf.begin() + n);
    }
    ::close(fd);
    return out;
}

/// Sends the fixture's file through the channel {read end, write end} and
/// returns what the reader got.
std::vector<uint8_t> send_through(const Fixture& fx, int rfd, int wfd, const StreamSendOptions& options = {},
                                  size_t piece = 1 << 20) {
    std::vector<uint8_t> got;
    std::thread reader([&] { got = drain(rfd, piece); });
    const FileReader f = fx.open();
    const Status s = file_to_stream(f, wfd, options);
    EXPECT_TRUE(s.ok()) << s.error().to_string();
    ::close(wfd);
    reader.join();
    return got;
}

TEST(StreamFastPathPipe, ByteIdenticalToTheSinkPath) {
    const Fixture fx;
    for (const bool zero_copy : {true, false}) {
        int fds[2];
        ASSERT_EQ(::pipe(fds), 0);
        StreamSendOptions o;
        o.zero_copy = zero_copy;
        uint64_t reported = 0;
        o.progress = [&](uint64_t n) { reported = n; };
        EXPECT_EQ(send_through(fx, fds[0], fds[1], o), fx.reference) << "zero_copy " << zero_copy;
        EXPECT_EQ(reported, fx.reference.size());
    }
}

TEST(StreamFastPathPipe, UnmappedReaderSendsItsCopies) {
    const Fixture fx;
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    std::vector<uint8_t> got;
    std::thread reader([&] { got = drain(fds[0]); });
    const FileReader f = fx.open(/*mmap=*/false);
    ASSERT_FALSE(f.mapped());
    const Status s = file_to_stream(f, fds[1]);
    EXPECT_TRUE(s.ok()) << s.error().to_string();
    ::close(fds[1]);
    reader.join();
    EXPECT_EQ(got, fx.reference);
}

TEST(StreamFastPathSocket, ByteIdenticalToTheSinkPath) {
    const Fixture fx;
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    EXPECT_EQ(send_through(fx, fds[0], fds[1], {}, 4096), fx.reference);
}

TEST(StreamFastPathPipe, NonBlockingDestination) {
    const Fixture fx;
    for (const bool zero_copy : {true, false}) {
        int fds[2];
        ASSERT_EQ(::pipe(fds), 0);
        ASSERT_EQ(::fcntl(fds[1], F_SETFL, ::fcntl(fds[1], F_GETFL) | O_NONBLOCK), 0);
        StreamSendOptions o;
        o.zero_copy = zero_copy;
        // Small reads keep the pipe full, so writes meet EAGAIN.
        EXPECT_EQ(send_through(fx, fds[0], fds[1], o, 1000), fx.reference) << "zero_copy " << zero_copy;
    }
}

TEST(StreamFastPath, RegularFileDestination) {
    const Fixture fx;
    const std::string out = fx.dir.file("s.stream");
    const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    const FileReader f = fx.open();
    const Status s = file_to_stream(f, fd);
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    ::close(fd);
    EXPECT_EQ(test::read_all(out), fx.reference);
}

/// SIGPIPE's default action (death) for the scope, whatever the process set.
class DefaultSigpipe {
public:
    DefaultSigpipe() { old_ = std::signal(SIGPIPE, SIG_DFL); }
    ~DefaultSigpipe() { std::signal(SIGPIPE, old_); }
    DefaultSigpipe(const DefaultSigpipe&) = delete;
    DefaultSigpipe& operator=(const DefaultSigpipe&) = delete;
    DefaultSigpipe(DefaultSigpipe&&) = delete;
    DefaultSigpipe& operator=(DefaultSigpipe&&) = delete;

private:
    void (*old_)(int) = nullptr;
};

TEST(StreamFastPathPipe, ReaderThatClosesEarlyIsAnEpipeError) {
    const Fixture fx;
    const DefaultSigpipe dfl;
    for (const bool zero_copy : {true, false}) {
        int fds[2];
        ASSERT_EQ(::pipe(fds), 0);
        std::thread reader([&] {
            std::vector<uint8_t> buf(100);
            (void)::read(fds[0], buf.data(), buf.size());
            ::close(fds[0]);
        });
        const FileReader f = fx.open();
        StreamSendOptions o;
        o.zero_copy = zero_copy;
        const Status s = file_to_stream(f, fds[1], o);
        reader.join();
        ::close(fds[1]);
        ASSERT_FALSE(s.ok());
        EXPECT_EQ(s.error().code(), ErrorCode::kIoError);
        EXPECT_NE(s.error().message().find("Broken pipe"), std::string::npos) << s.error().to_string();
    }
    // The thread's signal mask is as before: SIGPIPE not blocked, none pending.
    sigset_t mask;
    ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, nullptr, &mask), 0);
    EXPECT_EQ(sigismember(&mask, SIGPIPE), 0);
    sigset_t pending;
    ASSERT_EQ(::sigpending(&pending), 0);
    EXPECT_EQ(sigismember(&pending, SIGPIPE), 0);
}

TEST(StreamFastPathSocket, PeerThatClosesIsAnError) {
    const Fixture fx;
    const DefaultSigpipe dfl;
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    ::close(fds[0]);
    const FileReader f = fx.open();
    const Status s = file_to_stream(f, fds[1]);
    ::close(fds[1]);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code(), ErrorCode::kIoError);
}

TEST(StreamFastPathPipe, StreamToFileFromAPipe) {
    const Fixture fx;
    for (const bool nonblocking : {false, true}) {
        int fds[2];
        ASSERT_EQ(::pipe(fds), 0);
        if (nonblocking) {
            ASSERT_EQ(::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK), 0);
        }
        std::thread writer([&] {
            FdSink sink(fds[1], true);
            EXPECT_TRUE(sink.write(fx.reference).ok());
        });
        const std::string out = fx.dir.file(nonblocking ? "nb.hrry" : "b.hrry");
        auto w = FileWriter::create_file(out, {}, Durability::kAtomicOnly);
        ASSERT_TRUE(w.ok());
        FdSource src(fds[0], true);
        EXPECT_EQ(src.splice_fd(), fds[0]);
        auto n = stream_to_file(src, *w, {}, fx.known.options());
        writer.join();
        ASSERT_TRUE(n.ok()) << n.error().to_string();
        EXPECT_EQ(*n, fx.items.size());
        ASSERT_TRUE(w->finish().ok());
        EXPECT_EQ(test::read_all(out), test::read_all(fx.path)) << "nonblocking " << nonblocking;
    }
}

TEST(StreamFastPathPipe, StreamToFileDirectPathKeepsTheSourcesTimeouts) {
    // A source with timeouts still offers its descriptor (the direct path
    // reads through read_some): a whole stream arrives byte-identical, and a
    // peer that stops sending mid-data is cut by the idle timeout.
    const Fixture fx;
    for (const bool stall : {false, true}) {
        int fds[2];
        ASSERT_EQ(::pipe(fds), 0);
        std::atomic<bool> release{false};
        const size_t sent = stall ? fx.reference.size() - 1000 : fx.reference.size();
        std::thread writer([&] {
            {
                FdSink sink(fds[1], false);
                EXPECT_TRUE(sink.write(std::span<const uint8_t>(fx.reference).first(sent)).ok());
            }
            while (stall && !release.load()) {  // keep the pipe open, send nothing
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
            ::close(fds[1]);
        });
        const std::string out = fx.dir.file(stall ? "stalled.hrry" : "timed.hrry");
        auto w = FileWriter::create_file(out, {}, Durability::kAtomicOnly);
        ASSERT_TRUE(w.ok());
        FdSource src(fds[0], true);
        src.set_timeouts({.idle = std::chrono::milliseconds(stall ? 200 : 5000), .total = std::chrono::milliseconds(0)});
        EXPECT_EQ(src.splice_fd(), fds[0]);
        const auto t0 = std::chrono::steady_clock::now();
        auto n = stream_to_file(src, *w, {}, fx.known.options());
        const auto took = std::chrono::steady_clock::now() - t0;
        release = true;
        writer.join();
        if (stall) {
            ASSERT_FALSE(n.ok());
            EXPECT_NE(n.error().message().find("read timed out"), std::string::npos) << n.error().to_string();
            EXPECT_LT(took, std::chrono::seconds(5)) << "the idle timeout did not end the wait";
        } else {
            ASSERT_TRUE(n.ok()) << n.error().to_string();
            EXPECT_EQ(*n, fx.items.size());
            ASSERT_TRUE(w->finish().ok());
            EXPECT_EQ(test::read_all(out), test::read_all(fx.path));
        }
    }
}

TEST(StreamFastPathPipe, StreamToFileTruncatedInput) {
    const Fixture fx;
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const size_t cut = fx.reference.size() - 1000;
    std::thread writer([&] {
        FdSink sink(fds[1], true);
        EXPECT_TRUE(sink.write(std::span<const uint8_t>(fx.reference).first(cut)).ok());
    });
    auto w = FileWriter::create_file(fx.dir.file("t.hrry"));
    ASSERT_TRUE(w.ok());
    FdSource src(fds[0], true);
    auto n = stream_to_file(src, *w, {}, fx.known.options());
    writer.join();
    ASSERT_FALSE(n.ok());
    EXPECT_EQ(n.error().code(), ErrorCode::kTruncated) << n.error().to_string();
}

TEST(FileWriterDurability, AtomicOnlyWritesTheSameFile) {
    test::TempDir dir;
    std::vector<float> w(5000, 0.5F);
    std::vector<int8_t> q = {1, -2, 3, -4};
    const TensorList tensors = {{"w", TensorRef(w, {50, 100})}, {"q", TensorRef(q, {2, 2})}};
    const KvList kv = {{"general.architecture", KvValue::string("t")}};
    ASSERT_TRUE(save(dir.file("durable.hrry"), tensors, kv).ok());
    SaveOptions fast;
    fast.durability = Durability::kAtomicOnly;
    ASSERT_TRUE(save(dir.file("fast.hrry"), tensors, kv, fast).ok());
    EXPECT_EQ(test::read_all(dir.file("durable.hrry")), test::read_all(dir.file("fast.hrry")));
    // Replacing an existing file, through the writer itself.
    auto again = FileWriter::create_file(dir.file("fast.hrry"), {}, Durability::kAtomicOnly);
    ASSERT_TRUE(again.ok());
    for (const NamedTensor& t : tensors.items()) {
        auto d = t.tensor.descriptor();
        ASSERT_TRUE(d.ok());
        ASSERT_TRUE(again->add_tensor(t.name, *d, t.tensor.buffers()).ok());
    }
    ASSERT_TRUE(kv.add_to(again->kv()).ok());
    ASSERT_TRUE(again->finish().ok());
    EXPECT_EQ(test::read_all(dir.file("durable.hrry")), test::read_all(dir.file("fast.hrry")));
    EXPECT_EQ(dir.list(), (std::vector<std::string>{"durable.hrry", "fast.hrry"}));  // no temporary file left
}

TEST(FileWriterDurability, WriteDataFromCopiesWhenSpliceDoesNotApply) {
    // A memory source has no descriptor: write_data_from reads and writes.
    test::TempDir dir;
    const std::vector<uint8_t> data = test::pattern(200000, 7);
    auto desc = make_dense(ElementType::kUInt8, {data.size()});
    ASSERT_TRUE(desc.ok());
    auto w = FileWriter::create_file(dir.file("a.hrry"), {}, Durability::kAtomicOnly);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->begin_tensor("x", *desc).ok());
    MemorySource src(data, 3000);
    auto too_many = w->write_data_from(src, data.size() + 1);
    ASSERT_FALSE(too_many.ok());
    EXPECT_EQ(too_many.error().code(), ErrorCode::kSizeMismatch);
    auto n = w->write_data_from(src, data.size());
    ASSERT_TRUE(n.ok()) << n.error().to_string();
    EXPECT_EQ(*n, data.size());
    ASSERT_TRUE(w->end_tensor().ok());
    ASSERT_TRUE(w->finish().ok());
    auto f = FileReader::open(dir.file("a.hrry"));
    ASSERT_TRUE(f.ok());
    auto bytes = f->tensor("x").bytes();
    ASSERT_TRUE(bytes.ok());
    EXPECT_TRUE(std::equal(bytes->begin(), bytes->end(), data.begin(), data.end()));
}

}  // namespace
}  // namespace hurray
