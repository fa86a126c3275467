// SPDX-License-Identifier: Apache-2.0
/// @file
/// `AsyncStreamReader`: reads the streaming format (tensors back to back, see
/// `hurray/io/stream_decoder.hpp`) from any Asio `AsyncReadStream` with C++20
/// coroutines, in bounded memory. The asynchronous counterpart of
/// `hurray::StreamReader`, driving the same `StreamDecoder`.
#pragma once

#include <asio/async_result.hpp>
#include <asio/awaitable.hpp>
#include <asio/buffer.hpp>
#include <asio/error.hpp>
#include <asio/redirect_error.hpp>
#include <asio/use_awaitable.hpp>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/io/stream_steps.hpp"
#include "hurray/io/shared_buffer.hpp"
#include "hurray/io/stream_decoder.hpp"
#include "hurray/io/stream_reader.hpp"
#include "hurray/net/async_common.hpp"

namespace hurray::net {

/// Reads a stream of tensors from an Asio `AsyncReadStream` (`ip::tcp::socket`,
/// `local::stream_protocol::socket`, `readable_pipe`,
/// `posix::stream_descriptor`, an `ssl::stream`...), asynchronously.
///
/// The calls are those of `hurray::StreamReader`, as coroutines: `next`
/// (nullptr at the clean end), `read_chunk` (at most `chunk_size` bytes,
/// tagged with buffer and offset), `read_data` / `read_into` (straight into
/// caller memory), `read_tensor` (whole, one allocation bounded by
/// `max_tensor_bytes`, optionally validated on a thread pool), `skip_buffer`
/// and `skip_data`. No call crosses from one buffer into the next. Errors
/// are those of `StreamReader` (sticky, absolute stream offsets; truncation
/// is `kTruncated` naming the tensor and the part being read), plus:
///  - a failed or cancelled transport operation: `kIoError` (the message
///    says "cancelled" for a cancellation), sticky, except a cancellation of
///    `next` before any byte of the next descriptor arrived, which leaves the
///    reader as it was (an idle timeout can be retried);
///  - an exception thrown inside (Asio's, `std::bad_alloc`): `kIoError`,
///    sticky; none escapes.
///
/// Threading: one reader per stream, used by one coroutine at a time (at
/// most one call in flight). With an `io_context` run on several threads,
/// give the stream a strand as its executor and spawn the coroutine on that
/// strand (`co_spawn(strand, ...)`); do anything else to the stream (close,
/// cancel) through `asio::post(strand, ...)`. The reader keeps no executor
/// of its own: it runs on the coroutine's.
///
/// Cancellation: through the coroutine's cancellation slot (what
/// `asio::experimental::awaitable_operators` `||` with a timer uses, or
/// `bind_cancellation_slot` on `co_spawn`), or by closing the stream. The
/// pending read ends with `operation_aborted` and the call returns an Error.
///
/// The stream, the options' spans and the memory given to a call must
/// outlive the call; the reader must outlive every call.
///
/// @code
/// asio::awaitable<hurray::Status> consume(asio::ip::tcp::socket& sock) {
///     hurray::net::AsyncStreamReader reader(sock);
///     while (true) {
///         auto t = co_await reader.next();
///         if (!t) co_return t.error();
///         if (*t == nullptr) co_return hurray::Status::success();   // clean end
///         while (true) {
///             auto c = co_await reader.read_chunk();
///             if (!c) co_return c.error();
///             if (c->bytes.empty()) break;                          // tensor done
///             use((*t)->index, c->buffer, c->offset, c->bytes);
///         }
///     }
/// }
/// @endcode
template <typename AsyncReadStream>
class AsyncStreamReader {
public:
    /// Reads from `stream` (not owned). The spans in
    /// `options.stream.descriptor` must outlive the reader.
    explicit AsyncStreamReader(AsyncReadStream& stream, AsyncReadOptions options = {})
        : stream_(&stream), options_(std::move(options)), decoder_(options_.stream) {}

    AsyncStreamReader(const AsyncStreamReader&) = delete;
    AsyncStreamReader& operator=(const AsyncStreamReader&) = delete;

    /// Moves to the next tensor, skipping what is left of the current one's
    /// data; nullptr at the clean end of the stream. The pointer is valid
    /// until the next `next`.
    asio::awaitable<Result<const StreamTensor*>> next() { return guarded(next_impl()); }

    /// The next chunk of the current tensor's data: at most `chunk_size`
    /// bytes in the reader's own buffer (valid until the next call), never
    /// crossing a buffer; empty when the tensor's data is all read. Fills the
    /// chunk unless the buffer ends first.
    asio::awaitable<Result<StreamChunk>> read_chunk() { return guarded(read_chunk_impl()); }

    /// Reads at least one byte of the current buffer into `out` (at most
    /// `out.size()` and what is left of the buffer); 0 when the tensor's data
    /// is all read. `out` must not be empty.
    asio::awaitable<Result<size_t>> read_data(std::span<uint8_t> out) { return guarded(read_data_impl(out)); }

    /// Reads exactly the rest of the current buffer into `out`, whose size
    /// must be what is left of it (`kSizeMismatch` otherwise, nothing read).
    asio::awaitable<Status> read_into(std::span<uint8_t> out) { return guarded(read_into_impl(out)); }

    /// Reads all of the current tensor's data into one allocation and returns
    /// one `SharedBuffer` per buffer. Only before any of its data was read;
    /// larger than `max_tensor_bytes` is `kInvalidArgument` with nothing read.
    /// Then runs `validate_data` and `check` when the options ask for them,
    /// on `options.compute`: their error (`kInvalidData`...) is returned
    /// without making the reader fail, since the stream itself is intact.
    asio::awaitable<Result<std::vector<SharedBuffer>>> read_tensor() { return guarded(read_tensor_impl()); }

    /// Skips what is left of the current buffer (read and dropped, through
    /// the chunk buffer).
    asio::awaitable<Status> skip_buffer() { return guarded(skip_buffer_impl()); }

    /// Skips what is left of the current tensor's data.
    asio::awaitable<Status> skip_data() { return guarded(skip_data_impl()); }

    /// The current tensor (nullptr before the first `next` and at the end).
    [[nodiscard]] const StreamTensor* tensor() const noexcept { return has_current_ ? decoder_.tensor() : nullptr; }
    /// The buffer the next data byte belongs to, and the offset inside it.
    [[nodiscard]] std::pair<uint32_t, uint64_t> data_position() const noexcept {
        return {decoder_.buffer_index(), decoder_.buffer_offset()};
    }
    /// The decoder: stream offset, tensor count, composites, options, sticky error.
    [[nodiscard]] const StreamDecoder& decoder() const noexcept { return decoder_; }
    /// The composites completed so far, moved out (see `StreamDecoder`).
    std::vector<CompletedComposite> take_completed() { return decoder_.take_completed(); }
    /// The options in force.
    [[nodiscard]] const AsyncReadOptions& options() const noexcept { return options_; }

private:
    [[nodiscard]] bool in_data() const noexcept { return decoder_.need() == StreamNeed::kData; }

    Error sticky(Error e) {
        if (decoder_.failure()) {
            return *decoder_.failure();
        }
        return decoder_.fail(std::move(e)).error();
    }

    // Awaits `body`; whatever it throws becomes the reader's sticky error.
    template <typename T>
    asio::awaitable<T> guarded(asio::awaitable<T> body) {
        return detail::guarded(std::move(body), [this](const std::exception_ptr& e) {
            return T(sticky(net::exception_error(e, "read", decoder_.offset())));
        });
    }

    Status truncated() { return hurray::stream_steps::input_ended_early(decoder_); }

    // One read_some: 0 at the end of input. A transport error is sticky,
    // except a cancellation when `resumable` (nothing of the call was lost).
    asio::awaitable<Result<size_t>> pull_some(std::span<uint8_t> out, bool resumable) {
        std::error_code ec;
        const size_t n = co_await stream_->async_read_some(asio::buffer(out.data(), out.size()),
                                                           asio::redirect_error(asio::use_awaitable, ec));
        if (ec == asio::error::eof && n == 0) {
            co_return size_t{0};
        }
        if (ec) {
            Error e = net::transport_error(ec, "read", decoder_.offset());
            if (resumable && n == 0 && net::is_cancellation(ec)) {
                co_return e;
            }
            co_return decoder_.fail(std::move(e)).error();
        }
        if (n > out.size()) {
            co_return decoder_.fail(Error(ErrorCode::kIoError, "stream: read_some reported more bytes than asked",
                                          decoder_.offset()))
                .error();
        }
        co_return n;
    }

    // Reads exactly out.size() bytes unless the input ends first; returns how
    // many arrived (fewer only at the end of input). Errors are sticky. A loop
    // of read_some rather than asio::async_read, whose transfer_all condition
    // caps every read at 64 KiB.
    asio::awaitable<Result<size_t>> pull_all(std::span<uint8_t> out) {
        size_t have = 0;
        while (have < out.size()) {
            std::error_code ec;
            const size_t n =
                co_await stream_->async_read_some(asio::buffer(out.data() + have, out.size() - have),
                                                  asio::redirect_error(asio::use_awaitable, ec));
            have += std::min(n, out.size() - have);
            if (ec == asio::error::eof) {
                break;
            }
            if (ec) {
                co_return decoder_.fail(net::transport_error(ec, "read", decoder_.offset() + have)).error();
            }
        }
        co_return have;
    }

    asio::awaitable<Result<const StreamTensor*>> next_impl() {
        if (decoder_.failure()) {
            co_return *decoder_.failure();
        }
        const Status skipped = co_await skip_data_impl();
        HURRAY_NET_CO_TRY(skipped);
        has_current_ = false;
        const uint64_t start = decoder_.offset();
        while (true) {
            HURRAY_NET_CO_ASSIGN(const bool wanted, hurray::stream_steps::wants_descriptor(decoder_));
            if (!wanted) {
                co_return static_cast<const StreamTensor*>(nullptr);
            }
            const std::span<uint8_t> space = decoder_.descriptor_space();
            const bool resumable = decoder_.offset() == start && decoder_.need() == StreamNeed::kPrefix &&
                                   decoder_.at_boundary();
            Result<size_t> n = co_await pull_some(space, resumable);
            HURRAY_NET_CO_TRY(n);
            if (*n == 0) {
                HURRAY_NET_CO_TRY(decoder_.end_of_input());
                co_return static_cast<const StreamTensor*>(nullptr);
            }
            HURRAY_NET_CO_ASSIGN(const StreamEvent ev, decoder_.commit(*n));
            if (ev == StreamEvent::kDescriptor) {
                has_current_ = true;
                current_total_ = decoder_.data_remaining();
                co_return decoder_.tensor();
            }
        }
    }

    // Reads `dst` whole as data of the current buffer and commits it; kTruncated
    // when the input ends first.
    asio::awaitable<Status> fill(std::span<uint8_t> dst) {
        Result<size_t> n = co_await pull_all(dst);
        HURRAY_NET_CO_TRY(n);
        HURRAY_NET_CO_TRY(decoder_.commit(*n));
        if (*n < dst.size()) {
            co_return truncated();
        }
        co_return Status::success();
    }

    asio::awaitable<Result<StreamChunk>> read_chunk_impl() {
        StreamChunk chunk;
        HURRAY_NET_CO_ASSIGN(const std::span<uint8_t> dst, hurray::stream_steps::start_chunk(decoder_, chunk_, chunk));
        if (dst.empty()) {
            co_return chunk;
        }
        const Status s = co_await fill(dst);
        HURRAY_NET_CO_TRY(s);
        chunk.bytes = dst;
        co_return chunk;
    }

    asio::awaitable<Result<size_t>> read_data_impl(std::span<uint8_t> out) {
        HURRAY_NET_CO_ASSIGN(const size_t want, hurray::stream_steps::data_want(decoder_, out.size()));
        if (want == 0) {
            co_return size_t{0};
        }
        Result<size_t> n = co_await pull_some(out.first(want), false);
        HURRAY_NET_CO_TRY(n);
        if (*n == 0) {
            co_return truncated().error();
        }
        HURRAY_NET_CO_TRY(decoder_.commit(*n));
        co_return *n;
    }

    asio::awaitable<Status> read_into_impl(std::span<uint8_t> out) {
        HURRAY_NET_CO_TRY(hurray::stream_steps::check_read_into(decoder_, out.size()));
        if (out.empty()) {
            co_return Status::success();
        }
        co_return co_await fill(out);
    }

    asio::awaitable<Result<std::vector<SharedBuffer>>> read_tensor_impl() {
        const StreamTensor* current = tensor();
        HURRAY_NET_CO_ASSIGN(const size_t size, hurray::stream_steps::whole_tensor_size(decoder_, current, current_total_));
        if ((options_.validate_data || options_.check) && !options_.compute) {
            co_return Error(ErrorCode::kInvalidArgument,
                            "stream: validate_data or check asked without a compute executor");
        }
        const std::shared_ptr<uint8_t[]> block(new uint8_t[size == 0 ? 1 : size]);
        const std::span<uint8_t> all(block.get(), size);
        std::vector<SharedBuffer> out;
        out.reserve(current->descriptor.buffers.size());
        size_t pos = 0;
        for (const BufferHandle& h : current->descriptor.buffers) {
            const auto n = static_cast<size_t>(h.byte_size);
            if (n > 0) {
                const Status s = co_await fill(all.subspan(pos, n));
                HURRAY_NET_CO_TRY(s);
            }
            out.emplace_back(std::span<const uint8_t>(all.subspan(pos, n)), block);
            pos += n;
        }
        const Status checked = co_await net::run_tensor_checks(options_, *current, out);
        HURRAY_NET_CO_TRY(checked);
        co_return out;
    }

    asio::awaitable<Status> skip_buffer_impl() {
        if (decoder_.failure()) {
            co_return *decoder_.failure();
        }
        const uint32_t b = decoder_.buffer_index();
        while (in_data() && decoder_.buffer_index() == b) {
            const Status s = co_await fill(hurray::stream_steps::chunk_space(decoder_, chunk_));
            HURRAY_NET_CO_TRY(s);
        }
        co_return Status::success();
    }

    asio::awaitable<Status> skip_data_impl() {
        while (in_data()) {
            const Status s = co_await skip_buffer_impl();
            HURRAY_NET_CO_TRY(s);
        }
        if (decoder_.failure()) {
            co_return *decoder_.failure();
        }
        co_return Status::success();
    }

    AsyncReadStream* stream_;
    AsyncReadOptions options_;
    StreamDecoder decoder_;
    bool has_current_ = false;
    uint64_t current_total_ = 0;
    std::vector<uint8_t> chunk_;
};

}  // namespace hurray::net
