// SPDX-License-Identifier: Apache-2.0
// FdSource and FdSink ask their InterruptHook when a signal interrupts a
// blocking read, wait or write: true stops the call with kCancelled, false
// (or no hook) retries it. The signal is SIGUSR1, installed without
// SA_RESTART (as Python installs its handlers) and sent to the blocked thread.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <thread>
#include <vector>

#include "hurray/io/byte_sink.hpp"
#include "hurray/io/byte_source.hpp"

namespace hurray {
namespace {

/// Installs a do-nothing SIGUSR1 handler without SA_RESTART for the test's life.
class Sigusr1 {
public:
    Sigusr1() {
        struct sigaction sa {};
        sa.sa_handler = [](int) {};
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = 0;  // no SA_RESTART: the blocked call fails with EINTR
        sigaction(SIGUSR1, &sa, &old_);
    }
    ~Sigusr1() { sigaction(SIGUSR1, &old_, nullptr); }
    Sigusr1(const Sigusr1&) = delete;
    Sigusr1& operator=(const Sigusr1&) = delete;
    Sigusr1(Sigusr1&&) = delete;
    Sigusr1& operator=(Sigusr1&&) = delete;

private:
    struct sigaction old_ {};
};

struct Pipe {
    Pipe() { EXPECT_EQ(::pipe2(fds.data(), O_CLOEXEC), 0); }
    ~Pipe() {
        for (const int fd : fds) {
            if (fd >= 0) {
                ::close(fd);
            }
        }
    }
    Pipe(const Pipe&) = delete;
    Pipe& operator=(const Pipe&) = delete;
    Pipe(Pipe&&) = delete;
    Pipe& operator=(Pipe&&) = delete;
    std::array<int, 2> fds{-1, -1};
};

/// Runs `call` on a thread that is sent SIGUSR1 every 20 ms until `call`
/// returns (so that a signal also lands when the thread was not yet blocked
/// at the first one), while this thread runs `meanwhile`; returns what `call`
/// returned.
template <typename Call, typename Meanwhile>
auto signalled(Call call, Meanwhile meanwhile) {
    std::atomic<bool> done{false};
    std::optional<decltype(call())> result;
    std::thread worker([&] {
        result.emplace(call());
        done = true;
    });
    std::thread signaller([&] {
        while (!done.load()) {
            pthread_kill(worker.native_handle(), SIGUSR1);
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    });
    meanwhile();
    worker.join();
    signaller.join();
    return std::move(*result);
}

template <typename Call>
auto signalled(Call call) {
    return signalled(call, [] {});
}

/// A read of up to 16 bytes from `src`.
Result<size_t> read16(FdSource& src) {
    std::array<uint8_t, 16> buf{};
    return src.read_some(buf);
}

TEST(InterruptHook, TrueStopsABlockedReadWithCancelled) {
    const Sigusr1 handler;
    const Pipe p;
    FdSource src(p.fds[0]);
    std::atomic<int> asked{0};
    src.set_interrupt_hook([&] { return ++asked >= 1; });
    const Result<size_t> got = signalled([&] { return read16(src); });
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().code(), ErrorCode::kCancelled);
    EXPECT_EQ(got.error().message(), "read: interrupted by a signal");
    EXPECT_GE(asked.load(), 1);
}

TEST(InterruptHook, FalseRetriesTheReadUntilBytesCome) {
    const Sigusr1 handler;
    const Pipe p;
    FdSource src(p.fds[0]);
    std::atomic<int> asked{0};
    src.set_interrupt_hook([&] {
        ++asked;
        return false;
    });
    const Result<size_t> got = signalled([&] { return read16(src); },
                                         [&] {
                                             while (asked.load() < 2) {
                                                 std::this_thread::sleep_for(std::chrono::milliseconds(5));
                                             }
                                             const uint8_t byte = 42;
                                             ASSERT_EQ(::write(p.fds[1], &byte, 1), 1);
                                         });
    ASSERT_TRUE(got.ok()) << got.error().to_string();
    EXPECT_EQ(*got, 1U);
}

TEST(InterruptHook, TrueStopsAWaitWithinTimeouts) {
    const Sigusr1 handler;
    const Pipe p;
    FdSource src(p.fds[0]);
    src.set_timeouts({.idle = std::chrono::seconds(30), .total = std::chrono::seconds(60)});
    src.set_interrupt_hook([] { return true; });
    const Result<size_t> got = signalled([&] { return read16(src); });  // waits in poll(2)
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().code(), ErrorCode::kCancelled);
}

TEST(InterruptHook, TrueStopsAWriteToAFullPipe) {
    const Sigusr1 handler;
    const Pipe p;
    FdSink sink(p.fds[1]);
    sink.set_interrupt_hook([] { return true; });
    // More than the pipe holds (64 KiB by default): the write blocks.
    const std::vector<uint8_t> bytes(std::size_t{4} << 20U, 7);
    const Status st = signalled([&] { return sink.write(bytes); });
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code(), ErrorCode::kCancelled);
    EXPECT_NE(st.error().message().find("interrupted by a signal"), std::string::npos) << st.error().message();
}

TEST(InterruptHook, WithoutAHookAnInterruptedWriteGoesOn) {
    const Sigusr1 handler;
    const Pipe p;
    FdSink sink(p.fds[1]);
    const std::vector<uint8_t> bytes(std::size_t{1} << 20U, 7);
    std::vector<uint8_t> drained;
    const Status st = signalled([&] { return sink.write(bytes); },
                                [&] {
                                    std::array<uint8_t, 65536> buf{};
                                    while (drained.size() < bytes.size()) {
                                        const ssize_t n = ::read(p.fds[0], buf.data(), buf.size());
                                        if (n < 0 && errno == EINTR) {
                                            continue;
                                        }
                                        ASSERT_GT(n, 0);
                                        drained.insert(drained.end(), buf.begin(), buf.begin() + n);
                                        std::this_thread::sleep_for(std::chrono::milliseconds(1));
                                    }
                                });
    EXPECT_TRUE(st.ok()) << st.error().to_string();
    EXPECT_EQ(drained, bytes);
}

}  // namespace
}  // namespace hurray
