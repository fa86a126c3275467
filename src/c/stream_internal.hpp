// SPDX-License-Identifier: Apache-2.0
/// @file
/// What the C ABI's stream reader (stream_reader.cpp) and writer
/// (stream_writer.cpp) share: their flag bits, the mapping of stream errors
/// that are the caller's doing, and the checks of their open calls. Not
/// installed.
#pragma once

#include <string>
#include <string_view>

#include "c/c_internal.hpp"

namespace hurray::c {

/// Flag bits a stream reader accepts.
inline constexpr uint32_t kStreamReaderFlags =
    HURRAY_STREAM_PERMISSIVE | HURRAY_STREAM_REQUIRE_PRODUCER_SYNCED | HURRAY_STREAM_SPEC_ONLY;
/// Flag bits a stream writer accepts.
inline constexpr uint32_t kStreamWriterFlags = HURRAY_STREAM_REQUIRE_PRODUCER_SYNCED;

/// Records `error` and returns its status, except that `kSizeMismatch` becomes
/// `HURRAY_ERR_INVALID_ARGUMENT`: in a stream it always means that the
/// caller's sizes or call order disagree with a descriptor (a `read_into` of
/// the wrong size, buffers of the wrong size, a tensor ended early), not that
/// a container is damaged, which the general mapping
/// (`HURRAY_ERR_INVALID_FILE`) assumes.
inline HurrayStatus fail_stream(const Error& error) noexcept {
    const HurrayStatus status = fail(error);
    return error.code() == ErrorCode::kSizeMismatch ? HURRAY_ERR_INVALID_ARGUMENT : status;
}

/// Records "`function`: `what`" and returns `HURRAY_ERR_INVALID_ARGUMENT`:
/// a call made in a state that does not allow it.
inline HurrayStatus out_of_order(const char* function, std::string_view what) noexcept {
    return fail(HURRAY_ERR_INVALID_ARGUMENT, function, what);
}

/// The body of hurray_stream_open and hurray_stream_writer_open, run inside the
/// guard: checks `out` and clears `*out` (`guarded_out`), fails with
/// `HURRAY_ERR_INVALID_ARGUMENT` when `fd` is negative, then returns `open()`,
/// which publishes the handle over `fd`.
template <typename Handle, typename Open>
HurrayStatus open_fd(const char* function, int fd, Handle** out, Open&& open) noexcept {
    return guarded_out(function, out, {}, [&]() -> HurrayStatus {
        if (fd < 0) {
            return fail(HURRAY_ERR_INVALID_ARGUMENT, function, "fd " + std::to_string(fd) + " is negative");
        }
        return open();
    });
}

/// The body of hurray_stream_open_callbacks and
/// hurray_stream_writer_open_callbacks, run inside the guard: checks `out` and
/// clears `*out` (`guarded_out`), fails with `HURRAY_ERR_NULL_POINTER` when the
/// callback `callback` (the argument `name`) is NULL, then returns `open()`,
/// which publishes the handle over the callback.
template <typename Handle, typename Callback, typename Open>
HurrayStatus open_callback(const char* function, Callback callback, const char* name, Handle** out,
                           Open&& open) noexcept {
    return guarded_out(function, out, {}, [&]() -> HurrayStatus {
        // A function pointer is checked by its value only.
        if (callback == nullptr) {
            return null_argument(function, name);
        }
        return open();
    });
}

}  // namespace hurray::c
