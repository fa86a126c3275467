// SPDX-License-Identifier: Apache-2.0
// Whole reads and writes on an Asio stream with system calls as large as the
// socket takes: asio::async_read / async_write cap each call at 64 KiB (their
// transfer_all condition), which costs a third of the throughput of 4 MiB data
// frames on loopback. Internal to hurray::net (the tensor server and client).
#pragma once

#include <asio/awaitable.hpp>
#include <asio/buffer.hpp>
#include <asio/redirect_error.hpp>
#include <asio/use_awaitable.hpp>

#include <cstdint>
#include <span>
#include <system_error>
#include <vector>

namespace hurray::net::detail {

/// Reads exactly `out.size()` bytes into `out`; `ec` says why it stopped short.
template <typename Stream>
asio::awaitable<void> read_exact(Stream& stream, std::span<uint8_t> out, std::error_code& ec) {
    for (size_t got = 0; got < out.size() && !ec;) {
        got += co_await stream.async_read_some(asio::buffer(out.data() + got, out.size() - got),
                                               asio::redirect_error(asio::use_awaitable, ec));
    }
}

/// Writes every byte of `bufs` (consumed as it goes); `ec` says why it stopped short.
template <typename Stream>
asio::awaitable<void> write_all(Stream& stream, std::vector<asio::const_buffer>& bufs, std::error_code& ec) {
    size_t first = 0;
    for (;;) {
        while (first < bufs.size() && bufs[first].size() == 0) {
            ++first;  // a write of empty buffers only would return 0 forever
        }
        if (first == bufs.size() || ec) {
            break;
        }
        size_t n = co_await stream.async_write_some(std::span<const asio::const_buffer>(bufs).subspan(first),
                                                    asio::redirect_error(asio::use_awaitable, ec));
        while (n > 0 && first < bufs.size()) {
            const size_t take = std::min(n, bufs[first].size());
            bufs[first] += take;
            n -= take;
            if (bufs[first].size() == 0) {
                ++first;
            }
        }
    }
}

}  // namespace hurray::net::detail
