// SPDX-License-Identifier: Apache-2.0
/// @file
/// Internals of the C ABI (`hurray::c`): the structures behind the opaque
/// handles of <hurray.h>, the exception barrier every exported function runs
/// its body in, and the error helpers that fill the thread's last message.
/// Not installed.
#pragma once

#include <hurray.h>

#include <cstdint>
#include <exception>
#include <initializer_list>
#include <new>
#include <string_view>

#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/shared_buffer.hpp"

/// Behind `HurrayFile*`: one share of an opened container.
struct HurrayFile {
    /// The reader (a shared handle; buffers hold their own shares).
    hurray::FileReader reader;
};

/// Behind `HurrayDescriptor*`: an owned copy of a decoded descriptor.
struct HurrayDescriptor {
    /// The descriptor.
    hurray::TensorDescriptor descriptor;
};

/// Behind `HurrayBuffer*`: an address, the buffer's metadata, and what keeps
/// the bytes alive.
struct HurrayBuffer {
    /// First byte. Read-only for buffers from a file (the reference ABI hands
    /// out `void*`).
    void* data = nullptr;
    /// Size, alignment, device, sync mode and memory class.
    hurray::BufferHandle meta{};
    /// Share of the file mapping or owned memory the bytes live in (file
    /// buffers).
    hurray::SharedBuffer keep{};
    /// Called once by hurray_buffer_destroy (buffers from hurray_buffer_from_ptr).
    HurrayReleaseCallback release = nullptr;
    /// Second argument of `release`.
    void* release_context = nullptr;
};

namespace hurray::c {

/// Records `text` as the calling thread's last error message. Never throws:
/// when the copy cannot be allocated, a fixed message takes its place.
void set_last_error(std::string_view text) noexcept;

/// Records "`function`: `what`" as the calling thread's last error message.
/// Never throws (same fallback as `set_last_error`).
void set_last_error(const char* function, std::string_view what) noexcept;

/// The status code of a library error code (docs/c-api.md, "Status codes").
HurrayStatus status_of(ErrorCode code) noexcept;

/// Records `error.to_string()` and returns `status_of(error.code())`.
HurrayStatus fail(const Error& error) noexcept;

/// Records "`function`: `what`" and returns `status`.
HurrayStatus fail(HurrayStatus status, const char* function, std::string_view what) noexcept;

/// Records that argument `argument` of `function` is NULL and returns
/// `HURRAY_ERR_NULL_POINTER`.
HurrayStatus null_argument(const char* function, const char* argument) noexcept;

/// A pointer argument to check and its name in messages.
struct Arg {
    const void* value;  ///< The argument.
    const char* name;   ///< Its name.
};

/// `HURRAY_OK` when no argument is NULL; otherwise records the first NULL one
/// (as `null_argument`) and returns `HURRAY_ERR_NULL_POINTER`.
inline HurrayStatus require(const char* function, std::initializer_list<Arg> args) noexcept {
    for (const Arg& a : args) {
        if (a.value == nullptr) {
            return null_argument(function, a.name);
        }
    }
    return HURRAY_OK;
}

/// Runs `body` (which returns a `HurrayStatus`) and turns every exception
/// into a status, so that none crosses the C boundary: `std::bad_alloc` into
/// `HURRAY_ERR_OUT_OF_MEMORY`, anything else into `HURRAY_ERR_INTERNAL_PANIC`.
template <typename Body>
HurrayStatus guarded(const char* function, Body&& body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc&) {
        return fail(HURRAY_ERR_OUT_OF_MEMORY, function, "out of memory");
    } catch (const std::exception& e) {
        return fail(HURRAY_ERR_INTERNAL_PANIC, function, e.what());
    } catch (...) {
        return fail(HURRAY_ERR_INTERNAL_PANIC, function, "unknown exception caught at the C boundary");
    }
}

}  // namespace hurray::c
