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
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>
#include <new>
#include <span>
#include <string_view>

#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/shared_buffer.hpp"

/// Behind `HurrayFile*`: one share of an opened container.
struct HurrayFile {
    /// Takes the reader.
    explicit HurrayFile(hurray::FileReader r) noexcept : reader(std::move(r)) {}

    /// The reader (a shared handle; buffers hold their own shares).
    hurray::FileReader reader;

    /// Name `i`, NUL-terminated (hurray_file_tensor_name's promise; the
    /// reader's names are views into the index, not terminated). The copies
    /// are made on the first call, all at once, so that a program that never
    /// asks for a name pays nothing. Throws std::bad_alloc when memory runs
    /// out (the entry points' guard turns it into HURRAY_ERR_OUT_OF_MEMORY; a
    /// later call tries again). Precondition: `i < reader.tensor_count()`.
    [[nodiscard]] std::string_view c_name(size_t i) const;

private:
    // A mutex and a flag rather than std::call_once: a std::bad_alloc from the
    // first call must leave the next call free to try again (libstdc++ 12's
    // call_once is not reliable when its function throws on every target).
    mutable std::mutex names_mutex_;
    mutable std::atomic<bool> names_ready_{false};
    mutable std::string names_;                // every name, each followed by a NUL
    mutable std::vector<size_t> name_starts_;  // where name i starts in names_ (one more at the end)
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

/// Behind `HurrayBufferList*`: owned buffer handles, in order.
struct HurrayBufferList {
    /// The handles; a slot is set to NULL as its handle is destroyed.
    std::vector<HurrayBuffer*> buffers;
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

// ---------------------------------------------------------------------------
// Live handles (debug builds): double destroy and use after destroy
// ---------------------------------------------------------------------------

/// Whether this build keeps a registry of live handles (`HURRAY_C_HANDLE_CHECKS`,
/// on in Debug builds): every handle the library hands out is recorded, each
/// function checks that its handle arguments are live, and a destroy function
/// given a handle that is not live says so instead of freeing it twice.
#ifdef HURRAY_C_HANDLE_CHECKS
inline constexpr bool kHandleChecks = true;
#else
inline constexpr bool kHandleChecks = false;
#endif

/// The handle types, named in messages ("HurrayBuffer").
enum class HandleKind : uint8_t {
    kFile,
    kDescriptor,
    kBuffer,
    kBufferList,
    kTensorContext,
    kFileWriter,
    kReader,
    kWriter,
    kSource,
};

/// The C type name of `kind`.
const char* handle_kind_name(HandleKind kind) noexcept;

/// The kind of each handle type (one specialization per handle struct).
template <typename T>
struct HandleKindOf;
template <>
struct HandleKindOf<HurrayFile> : std::integral_constant<HandleKind, HandleKind::kFile> {};
template <>
struct HandleKindOf<HurrayDescriptor> : std::integral_constant<HandleKind, HandleKind::kDescriptor> {};
template <>
struct HandleKindOf<HurrayBuffer> : std::integral_constant<HandleKind, HandleKind::kBuffer> {};
template <>
struct HandleKindOf<HurrayBufferList> : std::integral_constant<HandleKind, HandleKind::kBufferList> {};
template <>
struct HandleKindOf<HurrayTensorContext> : std::integral_constant<HandleKind, HandleKind::kTensorContext> {};
template <>
struct HandleKindOf<HurrayFileWriter> : std::integral_constant<HandleKind, HandleKind::kFileWriter> {};
template <>
struct HandleKindOf<HurrayReader> : std::integral_constant<HandleKind, HandleKind::kReader> {};
template <>
struct HandleKindOf<HurrayWriter> : std::integral_constant<HandleKind, HandleKind::kWriter> {};
template <>
struct HandleKindOf<HurraySource> : std::integral_constant<HandleKind, HandleKind::kSource> {};

/// Records `handle` as live (no-op without handle checks). Throws
/// `std::bad_alloc` when the registry cannot grow.
void track_handle(const void* handle, HandleKind kind);

/// Forgets `handle`; `HURRAY_OK` when it was live with this kind, otherwise
/// records "`function`: `argument` ... is not a live ..." and returns
/// `HURRAY_ERR_INTERNAL` (always `HURRAY_OK` without handle checks).
HurrayStatus untrack_handle(const char* function, const char* argument, const void* handle,
                            HandleKind kind) noexcept;

/// `HURRAY_OK` when `handle` is live with this kind (or handle checks are
/// off); otherwise records why and returns `HURRAY_ERR_INTERNAL`.
HurrayStatus check_handle(const char* function, const char* argument, const void* handle,
                          HandleKind kind) noexcept;

/// Hands a new handle to the caller: records it as live and releases it.
template <typename T>
T* publish_handle(std::unique_ptr<T> handle) {
    track_handle(handle.get(), HandleKindOf<T>::value);
    return handle.release();
}

/// Takes a handle back from the caller for destruction: `HURRAY_OK` and the
/// handle when it is live, otherwise the status (and nothing to destroy).
template <typename T>
HurrayStatus retire_handle(const char* function, const char* argument, T* handle) noexcept {
    return untrack_handle(function, argument, handle, HandleKindOf<T>::value);
}

/// A pointer argument to check and its name in messages; a handle argument
/// also carries its kind, so that `require` checks it is live.
struct Arg {
    /// Any pointer argument.
    Arg(const void* value, const char* name) noexcept : value(value), name(name) {}
    /// A handle argument.
    template <typename T>
        requires requires { HandleKindOf<T>::value; }
    Arg(const T* handle, const char* name) noexcept
        : value(handle), name(name), kind(HandleKindOf<T>::value), is_handle(true) {}

    const void* value;           ///< The argument.
    const char* name;            ///< Its name.
    HandleKind kind{};           ///< Its kind, for a handle.
    bool is_handle = false;      ///< Whether it is a handle.
};

/// `HURRAY_OK` when no argument is NULL (and, with handle checks, every handle
/// argument is live); otherwise records the first bad one and returns
/// `HURRAY_ERR_NULL_POINTER` (or `HURRAY_ERR_INTERNAL` for a dead handle).
inline HurrayStatus require(const char* function, std::initializer_list<Arg> args) noexcept {
    for (const Arg& a : args) {
        if (a.value == nullptr) {
            return null_argument(function, a.name);
        }
        if constexpr (kHandleChecks) {
            if (a.is_handle) {
                if (const HurrayStatus s = check_handle(function, a.name, a.value, a.kind); s != HURRAY_OK) {
                    return s;
                }
            }
        }
    }
    return HURRAY_OK;
}

/// The `len` bytes at `data` as a span, in `out`: `data` may be NULL only when
/// `len` is 0 (otherwise `HURRAY_ERR_NULL_POINTER` naming `name`).
inline HurrayStatus byte_arg(const char* function, const void* data, size_t len, const char* name,
                             std::span<const uint8_t>& out) noexcept {
    if (len > 0 && data == nullptr) {
        return null_argument(function, name);
    }
    // SAFETY: the caller of the C function guarantees `len` readable bytes at
    // `data` (non-NULL when len > 0, checked above); an empty span never reads.
    out = std::span<const uint8_t>(static_cast<const uint8_t*>(data), len);
    return HURRAY_OK;
}

/// The `count` buffers given as parallel arrays `buffers` and `sizes` (the
/// writers' calls) as spans, in `out`: the arrays may be NULL only when `count`
/// is 0, an element of `buffers` only when its size is 0 (otherwise
/// `HURRAY_ERR_NULL_POINTER` naming `buffers[i]`), and every size must fit in
/// `size_t` (`HURRAY_ERR_INVALID_ARGUMENT`). Throws `std::bad_alloc` only.
HurrayStatus buffer_spans(const char* function, const void* const* buffers, const uint64_t* sizes, uint32_t count,
                          std::vector<std::span<const uint8_t>>& out);

/// Records "`function`: unknown bits in flags `flags`" and returns
/// `HURRAY_ERR_INVALID_ARGUMENT`.
HurrayStatus unknown_flags(const char* function, uint32_t flags);

/// Records "`what` `index` is out of range (there are `count`)" and returns
/// `HURRAY_ERR_INDEX_OUT_OF_BOUNDS`.
HurrayStatus out_of_range(const char* function, const char* what, uint64_t index, uint64_t count);

/// `HURRAY_OK` when `index` names a tensor of `file`, else `out_of_range`.
inline HurrayStatus check_tensor_index(const char* function, const HurrayFile* file, uint64_t index) {
    const size_t count = file->reader.tensor_count();
    return index < count ? HURRAY_OK : out_of_range(function, "tensor index", index, count);
}

/// Runs `body(tensor)` on tensor `index` of `file`, after checking the index
/// and opening the tensor (its errors returned as statuses).
template <typename Body>
HurrayStatus with_tensor(const char* function, const HurrayFile* file, uint64_t index, Body&& body) {
    if (const HurrayStatus s = check_tensor_index(function, file, index); s != HURRAY_OK) {
        return s;
    }
    auto tensor = file->reader.tensor(static_cast<size_t>(index));
    if (!tensor.ok()) {
        return fail(tensor.error());
    }
    return body(tensor.value_unchecked());
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

/// The first checks of a call that hands out a new handle in `*out`: `out`
/// (not NULL), then `*out` is set to NULL (so that every failure leaves NULL
/// there), then the other arguments `args` (as `require`).
template <typename T>
HurrayStatus require_out(const char* function, T** out, std::initializer_list<Arg> args) noexcept {
    if (const HurrayStatus s = require(function, {{out, "out"}}); s != HURRAY_OK) {
        return s;
    }
    *out = nullptr;
    return require(function, args);
}

/// The body of a call that hands out a new handle in `*out`, run inside the
/// guard: `require_out(function, out, args)`, then `body()`.
template <typename T, typename Body>
HurrayStatus guarded_out(const char* function, T** out, std::initializer_list<Arg> args, Body&& body) noexcept {
    return guarded(function, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require_out(function, out, args); s != HURRAY_OK) {
            return s;
        }
        return body();
    });
}

/// The body of a call that writes the `len` bytes at `data` through the handle
/// `writer` (hurray_file_writer_write, hurray_stream_write), run inside the
/// guard: checks `writer`, then the bytes (as `byte_arg`: `data` may be NULL
/// only when `len` is 0), then returns `write(piece)`.
template <typename Writer, typename Write>
HurrayStatus write_bytes(const char* function, Writer* writer, const void* data, size_t len, Write&& write) noexcept {
    return guarded(function, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(function, {{writer, "writer"}}); s != HURRAY_OK) {
            return s;
        }
        std::span<const uint8_t> piece;
        if (const HurrayStatus s = byte_arg(function, data, len, "data", piece); s != HURRAY_OK) {
            return s;
        }
        return write(piece);
    });
}

}  // namespace hurray::c
