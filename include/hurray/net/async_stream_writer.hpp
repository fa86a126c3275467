// SPDX-License-Identifier: Apache-2.0
/// @file
/// `AsyncStreamWriter`: writes the streaming format (tensors back to back, see
/// `hurray/io/stream_decoder.hpp`) to any Asio `AsyncWriteStream` with C++20
/// coroutines. The asynchronous counterpart of `hurray::StreamWriter`,
/// driving the same `StreamEncoder`.
#pragma once

#include <asio/awaitable.hpp>
#include <asio/buffer.hpp>
#include <asio/redirect_error.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>

#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <system_error>
#include <utility>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"
#include "hurray/io/stream_steps.hpp"
#include "hurray/io/stream_decoder.hpp"
#include "hurray/net/async_common.hpp"

namespace hurray::net {

/// Writes a stream of tensors to an Asio `AsyncWriteStream`
/// (`ip::tcp::socket`, `local::stream_protocol::socket`, `writable_pipe`,
/// `posix::stream_descriptor`...), asynchronously.
///
/// The calls are those of `hurray::StreamWriter`: `write_tensor` (one tensor
/// whole, its descriptor and buffers sent in one gathered write),
/// `write_composite` (a head and its members, the whole composite validated
/// before its first byte), and `begin_tensor` / `write_data` / `end_tensor`
/// for a tensor whose data comes in pieces (the declared sizes checked
/// against what is written). The descriptor always goes out before any data
/// of its tensor. `finish` checks that the stream may end here; the end of
/// the stream is the end of the transport (close it, or `shutdown(send)` a
/// socket).
///
/// Errors found before a call writes anything leave the writer usable (an
/// invalid descriptor, a composite rule, `kSizeMismatch`...). A failed or
/// cancelled write (`kIoError`, "cancelled" in the message), an exception
/// caught inside, or `end_tensor` with bytes missing leave it failed: every
/// later call returns that error.
///
/// Threading and cancellation: as for `AsyncStreamReader` (one writer per
/// stream, one call in flight, a strand with a multi-threaded `io_context`;
/// cancellation slot, `||` with a timer, or closing the stream). A pipe
/// whose reader is gone raises SIGPIPE on write unless the program ignores it
/// (sockets do not: Asio sends with MSG_NOSIGNAL).
///
/// Arguments (descriptors, spans) must stay valid until the call completes,
/// which `co_await` gives naturally.
///
/// @code
/// asio::awaitable<hurray::Status> produce(asio::ip::tcp::socket& sock, const hurray::TensorDescriptor& d,
///                                         std::span<const uint8_t> bytes) {
///     hurray::net::AsyncStreamWriter writer(sock);
///     const std::span<const uint8_t> bufs[] = {bytes};
///     if (auto s = co_await writer.write_tensor(d, bufs); !s) co_return s;
///     co_return writer.finish();
/// }
/// @endcode
template <typename AsyncWriteStream>
class AsyncStreamWriter {
public:
    /// Writes to `stream` (not owned; must outlive the writer).
    explicit AsyncStreamWriter(AsyncWriteStream& stream, const StreamWriteOptions& options = {})
        : stream_(&stream), encoder_(options) {}

    AsyncStreamWriter(const AsyncStreamWriter&) = delete;
    AsyncStreamWriter& operator=(const AsyncStreamWriter&) = delete;

    /// Writes one tensor: one span per buffer of `desc`, each exactly its
    /// declared size (`kSizeMismatch` otherwise, nothing written).
    asio::awaitable<Status> write_tensor(const TensorDescriptor& desc,
                                         std::span<const std::span<const uint8_t>> buffers) {
        return guarded(write_tensor_impl(desc, buffers));
    }

    /// Writes a composite head and its members (pre-order, nested heads
    /// included) after checking the whole composite: an invalid or
    /// incomplete one writes nothing.
    asio::awaitable<Status> write_composite(const TensorDescriptor& head, std::span<const StreamTensorInput> members) {
        return guarded(write_composite_impl(head, members));
    }

    /// Starts a tensor whose data comes in pieces: writes its descriptor.
    asio::awaitable<Status> begin_tensor(const TensorDescriptor& desc) {
        return guarded(begin_tensor_impl(desc));
    }

    /// Writes the next bytes of the current tensor's data (its buffers in
    /// order, as one run; a piece may span buffers). A piece longer than
    /// what the tensor still expects is `kSizeMismatch`, nothing written.
    asio::awaitable<Status> write_data(std::span<const uint8_t> piece) {
        return guarded(write_data_impl(piece));
    }

    /// Ends the current tensor (`kSizeMismatch` when bytes are missing; the
    /// writer then fails). No I/O.
    Status end_tensor() { return encoder_.end_tensor(); }

    /// Checks that the stream may end here (no open tensor, no composite
    /// waiting for members). Writes nothing; Asio streams have nothing to
    /// flush.
    [[nodiscard]] Status finish() const {
        if (encoder_.failure()) {
            return *encoder_.failure();
        }
        return encoder_.finish();
    }

    /// Bytes admitted so far (the stream offset once every write completed).
    [[nodiscard]] uint64_t offset() const noexcept { return encoder_.offset(); }
    /// Tensors begun so far.
    [[nodiscard]] uint64_t tensor_count() const noexcept { return encoder_.tensor_count(); }
    /// The encoder (state, sticky error).
    [[nodiscard]] const StreamEncoder& encoder() const noexcept { return encoder_; }

private:
    Error sticky(Error e) {
        if (encoder_.failure()) {
            return *encoder_.failure();
        }
        return encoder_.fail(std::move(e)).error();
    }

    // Awaits `body`; whatever it throws becomes the writer's sticky error.
    asio::awaitable<Status> guarded(asio::awaitable<Status> body) {
        return detail::guarded(std::move(body), [this](const std::exception_ptr& e) {
            return Status(sticky(net::exception_error(e, "write", encoder_.offset())));
        });
    }

    asio::awaitable<Status> write_tensor_impl(const TensorDescriptor& desc,
                                              std::span<const std::span<const uint8_t>> buffers) {
        HURRAY_NET_CO_TRY(hurray::stream_steps::check_given_buffers(encoder_, desc, buffers));
        co_return co_await write_checked(desc, buffers);
    }

    asio::awaitable<Status> write_composite_impl(const TensorDescriptor& head, std::span<const StreamTensorInput> members) {
        HURRAY_NET_CO_TRY(encoder_.check_composite(head, members));
        const Status s = co_await write_checked(head, {});
        HURRAY_NET_CO_TRY(s);
        for (const StreamTensorInput& m : members) {
            const Status ms = co_await write_checked(*m.descriptor, m.buffers);
            HURRAY_NET_CO_TRY(ms);
        }
        co_return Status::success();
    }

    asio::awaitable<Status> begin_tensor_impl(const TensorDescriptor& desc) {
        HURRAY_NET_CO_ASSIGN(const std::vector<uint8_t> bytes, encoder_.begin_tensor(desc));
        const asio::const_buffer one[] = {asio::buffer(bytes.data(), bytes.size())};
        co_return co_await put(one, bytes.size());
    }

    asio::awaitable<Status> write_data_impl(std::span<const uint8_t> piece) {
        HURRAY_NET_CO_TRY(encoder_.data(piece.size()));
        const asio::const_buffer one[] = {asio::buffer(piece.data(), piece.size())};
        co_return co_await put(one, piece.size());
    }

    // Writes `bufs` (`total` bytes, already admitted by the encoder).
    // asio::async_write issues writes of at most 64 KiB each, which measured
    // faster than larger ones over TCP loopback (bench/net_bench.cpp).
    asio::awaitable<Status> put(std::span<const asio::const_buffer> bufs, uint64_t total) {
        if (total == 0) {
            co_return Status::success();
        }
        const uint64_t start = encoder_.offset() - total;
        std::error_code ec;
        const size_t n = co_await asio::async_write(*stream_, bufs, asio::redirect_error(asio::use_awaitable, ec));
        if (ec) {
            co_return encoder_.fail(net::transport_error(ec, "write", start + n));
        }
        co_return Status::success();
    }

    // Descriptor and buffers of one tensor whose buffer sizes were checked,
    // in one gathered write.
    asio::awaitable<Status> write_checked(const TensorDescriptor& desc,
                                          std::span<const std::span<const uint8_t>> buffers) {
        HURRAY_NET_CO_ASSIGN(const std::vector<uint8_t> bytes, encoder_.begin_tensor(desc));
        std::vector<asio::const_buffer> out;
        out.reserve(buffers.size() + 1);
        out.emplace_back(bytes.data(), bytes.size());
        uint64_t total = bytes.size();
        for (const auto& b : buffers) {
            HURRAY_NET_CO_TRY(encoder_.data(b.size()));
            if (!b.empty()) {
                out.emplace_back(b.data(), b.size());
                total += b.size();
            }
        }
        HURRAY_NET_CO_TRY(encoder_.end_tensor());
        co_return co_await put(out, total);
    }

    AsyncWriteStream* stream_;
    StreamEncoder encoder_;
};

}  // namespace hurray::net
