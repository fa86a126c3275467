// SPDX-License-Identifier: Apache-2.0
// Test support for hurray::net: the channels of tests/io/channels.hpp
// (socketpair, pipe, TCP loopback, Unix-domain socket) taken by either end
// blocking (FdSource / FdSink) or asynchronous (an Asio stream), and
// coroutine counterparts of streamtest::write_items / read_items.
#pragma once

#include <gtest/gtest.h>

#include <asio.hpp>

#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "channels.hpp"
#include "file_test_support.hpp"
#include "hurray/net/async_stream_reader.hpp"
#include "hurray/net/async_stream_writer.hpp"
#include "stream_test_support.hpp"

namespace hurray::nettest {

using streamtest::Item;

using test::Channel;
using test::channel_name;
using test::open_channel;

/// The Asio stream types of a channel's ends.
template <typename R, typename W>
struct Ends {
    using Read = R;
    using Write = W;
};

/// Calls `fn(Ends<...>{})` with the Asio types for channel `c`.
template <typename Fn>
void with_ends(Channel c, Fn&& fn) {
    switch (c) {
    case Channel::kSocketPair:
    case Channel::kUnix:
        fn(Ends<asio::local::stream_protocol::socket, asio::local::stream_protocol::socket>{});
        return;
    case Channel::kTcp:
        fn(Ends<asio::ip::tcp::socket, asio::ip::tcp::socket>{});
        return;
    case Channel::kPipe:
        fn(Ends<asio::readable_pipe, asio::writable_pipe>{});
        return;
    }
}

/// Wraps descriptor `fd` (owned from now on) into an Asio stream of type S.
template <typename S>
S adopt(const asio::any_io_executor& ex, int fd) {
    if constexpr (std::is_same_v<S, asio::ip::tcp::socket>) {
        return S(ex, asio::ip::tcp::v4(), fd);
    } else if constexpr (std::is_same_v<S, asio::local::stream_protocol::socket>) {
        return S(ex, asio::local::stream_protocol(), fd);
    } else {
        return S(ex, fd);
    }
}

/// Awaits `a` and stores its value in `*out` (co_spawn needs default-
/// constructible results, which Result<T> is not).
template <typename T>
asio::awaitable<void> store(asio::awaitable<T> a, std::optional<T>* out) {
    out->emplace(co_await std::move(a));
}

/// Completion handler that fails the test when a coroutine threw.
inline auto no_exception() {
    return [](const std::exception_ptr& e) {
        if (e) {
            ADD_FAILURE() << "a coroutine threw";
        }
    };
}

/// Writes `items` with AsyncStreamWriter: whole tensors (piece 0) or
/// begin/write_data/end in `piece`-byte pieces. Owns the stream (closed at the end).
template <typename S>
asio::awaitable<Status> async_write_items(S stream, const std::vector<Item>* items, size_t piece,
                                          StreamWriteOptions options = {}) {
    net::AsyncStreamWriter<S> w(stream, options);
    for (const Item& it : *items) {
        if (piece == 0) {
            const auto s = streamtest::spans(it);
            const Status st = co_await w.write_tensor(it.desc, s);
            if (!st) {
                co_return st;
            }
            continue;
        }
        const Status b = co_await w.begin_tensor(it.desc);
        if (!b) {
            co_return b;
        }
        std::vector<uint8_t> all;
        for (const auto& buf : it.buffers) {
            all.insert(all.end(), buf.begin(), buf.end());
        }
        for (size_t pos = 0; pos < all.size(); pos += piece) {
            const Status d =
                co_await w.write_data(std::span<const uint8_t>(all).subspan(pos, std::min(piece, all.size() - pos)));
            if (!d) {
                co_return d;
            }
        }
        if (Status e = w.end_tensor(); !e) {
            co_return e;
        }
    }
    co_return w.finish();
}

/// Reads a whole stream (owning it) with AsyncStreamReader through read_chunk (mode 0),
/// read_data (1), read_tensor (2) or read_into (3), or in turns (-1).
template <typename S>
asio::awaitable<Result<std::vector<Item>>> async_read_items(S stream, net::AsyncReadOptions options, int mode) {
    net::AsyncStreamReader<S> r(stream, std::move(options));
    std::vector<Item> out;
    std::vector<uint8_t> scratch(61);
    for (uint64_t k = 0;; ++k) {
        Result<const StreamTensor*> t = co_await r.next();
        if (!t) {
            co_return t.error();
        }
        if (*t == nullptr) {
            co_return out;
        }
        if ((*t)->index != k) {
            co_return Error(ErrorCode::kInvalidData, "tensor index out of order");
        }
        Item it;
        it.desc = (*t)->descriptor;
        it.buffers.resize(it.desc.buffers.size());
        const int m = mode < 0 ? static_cast<int>(k % 4) : mode;
        if (m == 2) {
            auto bufs = co_await r.read_tensor();
            if (!bufs) {
                co_return bufs.error();
            }
            for (size_t b = 0; b < bufs->size(); ++b) {
                it.buffers[b].assign((*bufs)[b].data(), (*bufs)[b].data() + (*bufs)[b].size());
            }
        } else if (m == 3) {
            for (size_t b = 0; b < it.buffers.size(); ++b) {
                it.buffers[b].resize(static_cast<size_t>(it.desc.buffers[b].byte_size));
                if (!it.buffers[b].empty()) {
                    const Status s = co_await r.read_into(it.buffers[b]);
                    if (!s) {
                        co_return s.error();
                    }
                }
            }
        } else {
            while (true) {
                if (m == 0) {
                    auto c = co_await r.read_chunk();
                    if (!c) {
                        co_return c.error();
                    }
                    if (c->bytes.empty()) {
                        break;
                    }
                    if (c->offset != it.buffers[c->buffer].size()) {
                        co_return Error(ErrorCode::kInvalidData, "chunk offset out of order");
                    }
                    it.buffers[c->buffer].insert(it.buffers[c->buffer].end(), c->bytes.begin(), c->bytes.end());
                } else {
                    const uint32_t b = r.data_position().first;
                    auto n = co_await r.read_data(scratch);
                    if (!n) {
                        co_return n.error();
                    }
                    if (*n == 0) {
                        break;
                    }
                    it.buffers[b].insert(it.buffers[b].end(), scratch.begin(),
                                         scratch.begin() + static_cast<std::ptrdiff_t>(*n));
                }
            }
        }
        out.push_back(std::move(it));
    }
}

/// Runs `a` to completion on `io` (restarted first) and returns its value.
template <typename T>
T run_on(asio::io_context& io, asio::awaitable<T> a) {
    std::optional<T> out;
    asio::co_spawn(io, store(std::move(a), &out), no_exception());
    io.restart();
    io.run();
    if (!out) {
        std::abort();  // the coroutine threw: no_exception() reported it
    }
    return std::move(*out);
}

/// `n` pseudo-random bytes, the same for the same `seed`.
inline std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<uint8_t> v(n);
    for (auto& b : v) {
        b = static_cast<uint8_t>(rng());
    }
    return v;
}

}  // namespace hurray::nettest
