// SPDX-License-Identifier: Apache-2.0
/// @file
/// What the asynchronous stream reader and writer (`async_stream_reader.hpp`,
/// `async_stream_writer.hpp`) share: their options, and the non-template
/// helpers that turn Asio errors and exceptions into `hurray::Error` values.
///
/// `hurray::net` drives the sans-I/O `StreamDecoder` / `StreamEncoder` of
/// `hurray::io` over any Asio stream with C++20 coroutines
/// (`asio::awaitable`). It is built with exceptions (Asio's coroutines need
/// them) but no exception leaves its API: every coroutine returns a `Result`
/// or a `Status`.
#pragma once

#include "hurray/net/export.hpp"
#include <asio/any_io_executor.hpp>
#include <asio/awaitable.hpp>

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <system_error>

#include "hurray/core/result.hpp"
#include "hurray/core/validate.hpp"
#include "hurray/io/shared_buffer.hpp"
#include "hurray/io/stream_decoder.hpp"

namespace hurray::net {

/// A check run on each tensor that `AsyncStreamReader::read_tensor` reads
/// whole: its position and descriptor, and one `SharedBuffer` per buffer.
/// Runs on `AsyncReadOptions::compute`, never on the I/O thread.
using TensorCheck = std::function<Status(const StreamTensor&, std::span<const SharedBuffer>)>;

/// What an `AsyncStreamReader` accepts and does beyond the blocking reader.
///
/// @code
/// asio::thread_pool pool(2);
/// hurray::net::AsyncReadOptions o;
/// o.stream.require_producer_synced = true;   // a stream from another machine
/// o.validate_data = true;                    // sparse indices etc., on the pool
/// o.compute = pool.get_executor();
/// @endcode
struct HURRAY_NET_EXPORT AsyncReadOptions {
    /// The stream options of the blocking reader (descriptor decoding,
    /// `max_descriptor_length`, `max_buffer_size`, `require_producer_synced`,
    /// composite rules and depth, `chunk_size`, `max_tensor_bytes`).
    StreamReadOptions stream{};
    /// Run `hurray::validate_data` on every tensor read whole by `read_tensor`
    /// (sparse index structures, block tables, quantization parameters...).
    bool validate_data = false;
    /// Options of that validation.
    ValidateOptions validate{};
    /// An extra check of each tensor read whole (after `validate_data`).
    TensorCheck check{};
    /// Where `validate_data` and `check` run (an `asio::thread_pool`'s
    /// executor, say). Required when either is set: `read_tensor` then
    /// fails with `kInvalidArgument`, reading nothing, when it is empty
    /// (default-constructed).
    asio::any_io_executor compute{};
};

/// An `Error` for a failed Asio operation (`kIoError`). `op` says what was
/// being done ("read", "write"); `offset` is the stream offset. A cancelled
/// operation (`operation_aborted`) says "cancelled" in the message.
[[nodiscard]] HURRAY_NET_EXPORT Error transport_error(const std::error_code& ec, std::string_view op, uint64_t offset);

/// An `Error` for an exception caught at the API boundary, always `kIoError`
/// at `offset`: a `std::system_error` as `transport_error` would word its
/// code, `std::bad_alloc` as "<op> ran out of memory", another
/// `std::exception` with its `what()`, anything else as "unknown exception".
/// If building the message throws in turn, the message is empty.
[[nodiscard]] HURRAY_NET_EXPORT Error exception_error(const std::exception_ptr& e, std::string_view op, uint64_t offset) noexcept;

/// Whether `ec` means the operation was cancelled.
[[nodiscard]] HURRAY_NET_EXPORT bool is_cancellation(const std::error_code& ec) noexcept;

/// Runs `validate_data` (when asked) and `check` (when set) on `tensor` and
/// `buffers`, on `options.compute`, and resumes the caller on its own
/// executor. Success when neither is asked.
HURRAY_NET_EXPORT asio::awaitable<Status> run_tensor_checks(const AsyncReadOptions& options, const StreamTensor& tensor,
                                          std::span<const SharedBuffer> buffers);

namespace detail {

/// Awaits `body` and returns its result; if it throws, returns
/// `on_exception(the exception)` instead, so that no exception leaves the async API.
template <typename T, typename OnException>
asio::awaitable<T> guarded(asio::awaitable<T> body, OnException on_exception) {
    std::exception_ptr caught;
    try {
        co_return co_await std::move(body);
    } catch (...) {
        caught = std::current_exception();
    }
    co_return on_exception(caught);
}

}  // namespace detail

}  // namespace hurray::net

// Coroutine counterparts of HURRAY_RETURN_IF_ERROR / HURRAY_ASSIGN_OR_RETURN,
// for the templates of hurray::net (undefined again at the end of each header
// that uses them would hide them from the other; they are internal all the same).
#define HURRAY_NET_CO_TRY(expr)                                \
    do {                                                       \
        auto&& hurray_net_status_ = (expr);                    \
        if (!hurray_net_status_.ok()) {                        \
            co_return std::move(hurray_net_status_).error();   \
        }                                                      \
    } while (false)

#define HURRAY_NET_CO_ASSIGN(lhs, expr)                                          \
    auto HURRAY_CONCAT_(hurray_net_result_, __LINE__) = (expr);                  \
    if (!HURRAY_CONCAT_(hurray_net_result_, __LINE__).ok()) {                    \
        co_return std::move(HURRAY_CONCAT_(hurray_net_result_, __LINE__)).error(); \
    }                                                                            \
    lhs = std::move(HURRAY_CONCAT_(hurray_net_result_, __LINE__)).value()
