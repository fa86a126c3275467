// SPDX-License-Identifier: Apache-2.0
// Test support: connected byte channels of every kind the stream tests use
// (socketpair, pipe, TCP loopback, Unix-domain socket) as raw descriptors, for
// the blocking transports (FdSource / FdSink, tests/io) and the Asio streams
// (tests/net) alike.
#pragma once

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <string>
#include <utility>

namespace hurray::test {

/// The kinds of channel.
enum class Channel { kSocketPair, kPipe, kTcp, kUnix };

/// The channel's name, for test messages.
inline const char* channel_name(Channel c) {
    switch (c) {
    case Channel::kSocketPair:
        return "socketpair";
    case Channel::kPipe:
        return "pipe";
    case Channel::kTcp:
        return "tcp";
    case Channel::kUnix:
        return "unix";
    }
    return "?";
}

/// A pipe whose reader is gone must fail the write, not kill the test.
inline void ignore_sigpipe() {
    static const bool done = [] {
        std::signal(SIGPIPE, SIG_IGN);
        return true;
    }();
    (void)done;
}

/// A connected pair of descriptors: {read end, write end}. For a listening
/// kind the accepting side reads and the client writes; `socket_path` names
/// the Unix-domain socket (unlinked once connected). Ignores SIGPIPE.
inline std::pair<int, int> open_channel(Channel c, const std::string& socket_path) {
    ignore_sigpipe();
    if (c == Channel::kPipe) {
        int fds[2] = {-1, -1};
        EXPECT_EQ(::pipe(fds), 0);
        return {fds[0], fds[1]};
    }
    if (c == Channel::kSocketPair) {
        int fds[2] = {-1, -1};
        EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
        return {fds[0], fds[1]};
    }
    const int listener = c == Channel::kTcp ? ::socket(AF_INET, SOCK_STREAM, 0) : ::socket(AF_UNIX, SOCK_STREAM, 0);
    EXPECT_GE(listener, 0);
    int client = -1;
    if (c == Channel::kTcp) {
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = 0;
        EXPECT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);  // NOLINT
        EXPECT_EQ(::listen(listener, 1), 0);
        socklen_t len = sizeof addr;
        EXPECT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);  // NOLINT
        client = ::socket(AF_INET, SOCK_STREAM, 0);
        EXPECT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);  // NOLINT
    } else {
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket_path.c_str());
        EXPECT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);  // NOLINT
        EXPECT_EQ(::listen(listener, 1), 0);
        client = ::socket(AF_UNIX, SOCK_STREAM, 0);
        EXPECT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);  // NOLINT
        ::unlink(socket_path.c_str());
    }
    const int server = ::accept(listener, nullptr, nullptr);
    EXPECT_GE(server, 0);
    ::close(listener);
    return {server, client};
}

}  // namespace hurray::test
