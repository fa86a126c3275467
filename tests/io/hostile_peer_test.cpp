// SPDX-License-Identifier: Apache-2.0
// A blocking StreamReader on a socket whose peer is hostile: it claims a
// huge buffer and stalls, or trickles a byte at a time. The reader must not
// allocate what the peer claims, and FdSource's timeouts must end the wait
// (kIoError "read timed out"), whatever the peer does. Also: a non-blocking
// descriptor is read (waited on), not failed with EAGAIN.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <malloc.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hurray/core/builder.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/byte_source.hpp"
#include "hurray/io/stream_reader.hpp"
#include "hurray/io/stream_writer.hpp"

namespace hurray {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

/// A connected pair of stream sockets, closed on destruction.
struct SocketPair {
    int reader = -1;
    int peer = -1;
    SocketPair() {
        int fds[2] = {-1, -1};
        EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
        reader = fds[0];
        peer = fds[1];
    }
    ~SocketPair() {
        close_peer();
        if (reader >= 0) {
            ::close(reader);
        }
    }
    void close_peer() {
        if (peer >= 0) {
            ::close(peer);
            peer = -1;
        }
    }
    SocketPair(const SocketPair&) = delete;
    SocketPair& operator=(const SocketPair&) = delete;
};

void send_all(int fd, const std::vector<uint8_t>& bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
        ASSERT_GT(n, 0);
        done += static_cast<size_t>(n);
    }
}

/// The descriptor of a dense uint8 tensor of `bytes` bytes, as a stream
/// starts with it (the data would follow).
std::vector<uint8_t> descriptor_claiming(uint64_t bytes) {
    auto d = make_dense(ElementType::kUInt8, {bytes});
    EXPECT_TRUE(d) << d.error().to_string();
    auto enc = encode(*d);
    EXPECT_TRUE(enc) << enc.error().to_string();
    return enc.value_or(std::vector<uint8_t>{});
}

/// A small valid stream: two float32 tensors of 64 elements.
std::vector<uint8_t> small_stream() {
    MemorySink sink;
    StreamWriter w(sink);
    auto d = make_dense(ElementType::kFloat32, {64}).value();
    std::vector<uint8_t> data(d.buffers[0].byte_size, 0x5A);
    const std::span<const uint8_t> b[] = {data};
    EXPECT_TRUE(w.write_tensor(d, b));
    EXPECT_TRUE(w.write_tensor(d, b));
    EXPECT_TRUE(w.finish());
    return std::move(sink).take();
}

/// Bytes the C heap has handed out and not taken back (0 where the
/// allocator is replaced, as under AddressSanitizer).
size_t heap_in_use() {
    const struct mallinfo2 m = ::mallinfo2();
    return m.uordblks + m.hblkhd;
}

bool timed_out(const Error& e) { return e.message().find("read timed out") != std::string::npos; }

TEST(HostilePeer, HugeClaimThenStallAllocatesNothingAndTimesOut) {
    SocketPair s;
    const uint64_t claim = uint64_t{1} << 40;  // 1 TiB
    send_all(s.peer, descriptor_claiming(claim));
    send_all(s.peer, std::vector<uint8_t>(100, 0x11));  // a little data, then silence

    FdSource src(s.reader);
    src.set_timeouts({.idle = 100ms, .total = 0ms});
    const size_t heap_before = heap_in_use();
    StreamReader reader(src);
    auto t = reader.next();
    ASSERT_TRUE(t) << t.error().to_string();
    ASSERT_NE(*t, nullptr);
    EXPECT_EQ((*t)->descriptor.buffers[0].byte_size, claim);

    // Reading the tensor whole would need the claimed terabyte: refused
    // before anything is allocated or read.
    auto whole = reader.read_tensor();
    ASSERT_FALSE(whole);
    EXPECT_EQ(whole.error().code(), ErrorCode::kInvalidArgument) << whole.error().to_string();

    // read_data hands over what came (100 bytes); then the stall ends in a
    // timeout instead of a wait for the rest of the terabyte.
    std::vector<uint8_t> buf(4096);
    size_t got = 0;
    std::optional<Error> stalled;
    auto t0 = Clock::now();
    while (!stalled) {
        t0 = Clock::now();
        auto n = reader.read_data(buf);
        if (!n) {
            stalled = n.error();
        } else {
            got += *n;
        }
    }
    const auto waited = Clock::now() - t0;
    EXPECT_EQ(got, 100U);
    EXPECT_EQ(stalled->code(), ErrorCode::kIoError);
    EXPECT_TRUE(timed_out(*stalled)) << stalled->to_string();
    EXPECT_GE(waited, 90ms);
    EXPECT_LT(waited, 5s) << "the idle timeout did not end the wait";

    // What the reader holds is its descriptor and one chunk buffer, not the claim.
    const size_t heap_after = heap_in_use();
    const size_t grown = heap_after > heap_before ? heap_after - heap_before : 0;
    std::printf("[          ] heap grew by %zu bytes for a 1 TiB claim (chunk_size %zu)\n", grown,
                StreamReadOptions{}.chunk_size);
    EXPECT_LE(grown, StreamReadOptions{}.chunk_size + (size_t{64} << 10));
}

TEST(HostilePeer, ClaimOverMaxBufferSizeIsRefusedAtTheDescriptor) {
    SocketPair s;
    send_all(s.peer, descriptor_claiming(uint64_t{1} << 40));
    FdSource src(s.reader);
    src.set_timeouts({.idle = 2s, .total = 0ms});
    StreamReadOptions o;
    o.max_buffer_size = uint64_t{64} << 20;
    StreamReader reader(src, o);
    auto t = reader.next();
    ASSERT_FALSE(t);
    EXPECT_NE(t.error().message().find("max_buffer_size"), std::string::npos) << t.error().to_string();
}

TEST(HostilePeer, TricklingPeerIsCutByTheTotalTimeout) {
    SocketPair s;
    const std::vector<uint8_t> stream = small_stream();
    std::atomic<bool> stop{false};
    // One byte every 5 ms: never idle long enough for an idle timeout, and
    // the whole stream would take over 3 s.
    std::thread peer([&] {
        for (uint8_t byte : stream) {
            if (stop.load()) {
                break;
            }
            if (::send(s.peer, &byte, 1, MSG_NOSIGNAL) != 1) {
                break;
            }
            std::this_thread::sleep_for(5ms);
        }
    });

    FdSource src(s.reader);
    src.set_timeouts({.idle = 1s, .total = 300ms});
    StreamReader reader(src);
    const auto t0 = Clock::now();
    std::optional<Error> failure;
    while (!failure) {
        auto t = reader.next();
        if (!t) {
            failure = t.error();
            break;
        }
        ASSERT_NE(*t, nullptr) << "the whole stream arrived before the timeout";
        auto data = reader.read_tensor();
        if (!data) {
            failure = data.error();
        }
    }
    const auto took = Clock::now() - t0;
    stop = true;
    s.close_peer();
    peer.join();
    ASSERT_TRUE(failure.has_value());
    EXPECT_EQ(failure->code(), ErrorCode::kIoError);
    EXPECT_TRUE(timed_out(*failure)) << failure->to_string();
    EXPECT_NE(failure->message().find("in all"), std::string::npos) << failure->to_string();
    EXPECT_GE(took, 290ms);
    EXPECT_LT(took, 5s) << "the total timeout did not end the reading";
}

TEST(HostilePeer, NewTimeoutsRestartTheBudgetAndTheReaderCanGoOn) {
    SocketPair s;
    FdSource src(s.reader);
    src.set_timeouts({.idle = 50ms, .total = 0ms});
    std::vector<uint8_t> buf(16);
    auto r = src.read_some(buf);
    ASSERT_FALSE(r);
    EXPECT_TRUE(timed_out(r.error())) << r.error().to_string();
    EXPECT_EQ(src.timeouts().idle, 50ms);

    // The source itself is not broken: data that comes later is read.
    send_all(s.peer, std::vector<uint8_t>(3, 7));
    src.set_timeouts({});
    auto again = src.read_some(buf);
    ASSERT_TRUE(again) << again.error().to_string();
    EXPECT_EQ(*again, 3U);
}

TEST(HostilePeer, NonBlockingDescriptorIsWaitedOnNotFailed) {
    SocketPair s;
    ASSERT_EQ(::fcntl(s.reader, F_SETFL, ::fcntl(s.reader, F_GETFL) | O_NONBLOCK), 0);
    const std::vector<uint8_t> stream = small_stream();
    std::thread peer([&] {
        // In three parts with pauses, so reads find the socket empty.
        const size_t third = stream.size() / 3;
        for (size_t part = 0; part < 3; ++part) {
            std::this_thread::sleep_for(20ms);
            const size_t from = part * third;
            const size_t to = part == 2 ? stream.size() : from + third;
            (void)::send(s.peer, stream.data() + from, to - from, MSG_NOSIGNAL);
        }
        ::shutdown(s.peer, SHUT_WR);
    });
    FdSource src(s.reader);
    StreamReader reader(src);
    int tensors = 0;
    while (true) {
        auto t = reader.next();
        ASSERT_TRUE(t) << t.error().to_string();
        if (*t == nullptr) {
            break;
        }
        auto data = reader.read_tensor();
        ASSERT_TRUE(data) << data.error().to_string();
        ++tensors;
    }
    peer.join();
    EXPECT_EQ(tensors, 2);
}

}  // namespace
}  // namespace hurray
