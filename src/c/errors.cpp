// SPDX-License-Identifier: Apache-2.0
// The C ABI's version, its thread-local last error message, and the mapping
// of library error codes to C status codes (docs/c-api.md, "Status codes").
#include "c/c_internal.hpp"
#include "hurray/core/error_table.hpp"

#include <limits>
#include <string>

namespace hurray::c {
namespace {

// Used when the message itself cannot be stored (no memory for the copy).
constexpr const char* kNoMemoryForMessage = "out_of_memory: the error message could not be recorded";

struct LastError {
    std::string text;
    const char* fallback = nullptr;  // when set, wins over text
    int32_t code = 0;                // hurray_last_error_code
    uint64_t offset = UINT64_MAX;    // hurray_last_error_offset
    std::string file;                // hurray_last_error_file
    std::string tensor;              // hurray_last_error_tensor
};

/// The library error code that names the class of a failure the C layer
/// detects itself (it has a status, not an Error): hurray_last_error_code.
int32_t code_of_status(HurrayStatus status) noexcept {
    switch (status) {
        case HURRAY_ERR_INVALID_MAGIC:
        case HURRAY_ERR_WRONG_FORMAT:
            return static_cast<int32_t>(ErrorCode::kInvalidMagic);
        case HURRAY_ERR_VERSION_MISMATCH:
            return static_cast<int32_t>(ErrorCode::kUnsupportedVersion);
        case HURRAY_ERR_INVALID_LAYOUT:
            return static_cast<int32_t>(ErrorCode::kInvalidLayout);
        case HURRAY_ERR_INVALID_TYPE:
            return static_cast<int32_t>(ErrorCode::kInvalidElementType);
        case HURRAY_ERR_IO:
            return static_cast<int32_t>(ErrorCode::kIoError);
        case HURRAY_ERR_NOT_FOUND:
            return static_cast<int32_t>(ErrorCode::kNotFound);
        case HURRAY_ERR_UNSUPPORTED:
            return static_cast<int32_t>(ErrorCode::kUnsupported);
        case HURRAY_ERR_OUT_OF_MEMORY:
            return static_cast<int32_t>(ErrorCode::kOutOfMemory);
        case HURRAY_ERR_TRUNCATED:
            return static_cast<int32_t>(ErrorCode::kTruncated);
        case HURRAY_ERR_INVALID_FILE:
            return static_cast<int32_t>(ErrorCode::kInvalidFile);
        case HURRAY_ERR_TYPE_MISMATCH:
            return static_cast<int32_t>(ErrorCode::kTypeMismatch);
        case HURRAY_ERR_CANCELLED:
            return static_cast<int32_t>(ErrorCode::kCancelled);
        case HURRAY_ERR_BUFFER_TOO_SMALL:
        case HURRAY_ERR_NULL_POINTER:
        case HURRAY_ERR_INVALID_SYNC_MODE:
        case HURRAY_ERR_SYNC_MODE_MISMATCH:
        case HURRAY_ERR_INDEX_OUT_OF_BOUNDS:
        case HURRAY_ERR_INVALID_ARGUMENT:
            return static_cast<int32_t>(ErrorCode::kInvalidArgument);
        default:
            return HURRAY_CODE_INTERNAL;  // HURRAY_ERR_INTERNAL, _INTERNAL_PANIC: no library code
    }
}

LastError& last_error() noexcept {
    thread_local LastError last;
    return last;
}

// The HURRAY_CODE_* values of hurray.h are hurray::ErrorCode's.
static_assert(HURRAY_CODE_TRUNCATED == static_cast<int32_t>(ErrorCode::kTruncated));
static_assert(HURRAY_CODE_INVALID_LAYOUT == static_cast<int32_t>(ErrorCode::kInvalidLayout));
static_assert(HURRAY_CODE_INVALID_ARGUMENT == static_cast<int32_t>(ErrorCode::kInvalidArgument));
static_assert(HURRAY_CODE_OUT_OF_MEMORY == static_cast<int32_t>(ErrorCode::kOutOfMemory));
static_assert(HURRAY_CODE_CANCELLED == static_cast<int32_t>(ErrorCode::kCancelled));

/// Resets what a new message replaces: the code (to HURRAY_CODE_INTERNAL, set
/// afterwards by the callers that know it), the offset, the file and the
/// tensor.
void reset_details(LastError& last) noexcept {
    last.code = HURRAY_CODE_INTERNAL;
    last.offset = UINT64_MAX;
    last.file.clear();
    last.tensor.clear();
}

/// Makes what `write` puts in `last.text` the message; when `write` throws (no
/// memory for the copy), the fixed kNoMemoryForMessage takes its place.
template <typename Write>
void store_message(LastError& last, Write&& write) noexcept {
    try {
        write(last.text);
        last.fallback = nullptr;
    } catch (...) {
        last.fallback = kNoMemoryForMessage;
    }
}

}  // namespace

void set_last_error(std::string_view text) noexcept {
    LastError& last = last_error();
    reset_details(last);
    store_message(last, [&](std::string& message) { message.assign(text); });
}

void set_last_error(const char* function, std::string_view what) noexcept {
    LastError& last = last_error();
    reset_details(last);
    store_message(last, [&](std::string& message) {
        std::string text(function);
        text += ": ";
        text += what;
        message = std::move(text);
    });
}

namespace {
constexpr int32_t error_presentation_status(ErrorCode code) noexcept {
    return find_error_presentation(code)->c_status;
}
}  // namespace

HurrayStatus status_of(ErrorCode code) noexcept {
    const ErrorPresentation* row = find_error_presentation(code);
    return row != nullptr ? static_cast<HurrayStatus>(row->c_status) : HURRAY_ERR_INTERNAL;
}

// The table's C statuses are hurray.h's.
static_assert(error_presentation_status(ErrorCode::kOk) == HURRAY_OK);
static_assert(error_presentation_status(ErrorCode::kTruncated) == HURRAY_ERR_TRUNCATED);
static_assert(error_presentation_status(ErrorCode::kInvalidMagic) == HURRAY_ERR_INVALID_MAGIC);
static_assert(error_presentation_status(ErrorCode::kUnsupportedVersion) == HURRAY_ERR_VERSION_MISMATCH);
static_assert(error_presentation_status(ErrorCode::kInvalidLayout) == HURRAY_ERR_INVALID_LAYOUT);
static_assert(error_presentation_status(ErrorCode::kInvalidElementType) == HURRAY_ERR_INVALID_TYPE);
static_assert(error_presentation_status(ErrorCode::kUnsupported) == HURRAY_ERR_UNSUPPORTED);
static_assert(error_presentation_status(ErrorCode::kInvalidArgument) == HURRAY_ERR_INVALID_ARGUMENT);
static_assert(error_presentation_status(ErrorCode::kIoError) == HURRAY_ERR_IO);
static_assert(error_presentation_status(ErrorCode::kInvalidFile) == HURRAY_ERR_INVALID_FILE);
static_assert(error_presentation_status(ErrorCode::kNotFound) == HURRAY_ERR_NOT_FOUND);
static_assert(error_presentation_status(ErrorCode::kTypeMismatch) == HURRAY_ERR_TYPE_MISMATCH);
static_assert(error_presentation_status(ErrorCode::kOutOfMemory) == HURRAY_ERR_OUT_OF_MEMORY);
static_assert(error_presentation_status(ErrorCode::kCancelled) == HURRAY_ERR_CANCELLED);

HurrayStatus unknown_flags(const char* function, uint32_t flags) {
    return fail(HURRAY_ERR_INVALID_ARGUMENT, function, "unknown bits in flags " + std::to_string(flags));
}

HurrayStatus out_of_range(const char* function, const char* what, uint64_t index, uint64_t count) {
    return fail(HURRAY_ERR_INDEX_OUT_OF_BOUNDS, function,
                std::string(what) + " " + std::to_string(index) + " is out of range (there are " +
                    std::to_string(count) + ")");
}

HurrayStatus buffer_spans(const char* function, const void* const* buffers, const uint64_t* sizes, uint32_t count,
                          std::vector<std::span<const uint8_t>>& out) {
    if (count > 0) {
        if (const HurrayStatus s = require(function, {{buffers, "buffers"}, {sizes, "sizes"}}); s != HURRAY_OK) {
            return s;
        }
    }
    out.clear();
    out.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
        // SAFETY: the caller guarantees `count` readable elements in `buffers`
        // and in `sizes` (both non-NULL when count > 0, checked above).
        const void* const data = buffers[i];
        const uint64_t size = sizes[i];
        if (size > 0 && data == nullptr) {
            return null_argument(function, ("buffers[" + std::to_string(i) + "]").c_str());
        }
        if (size > std::numeric_limits<size_t>::max()) {
            return fail(HURRAY_ERR_INVALID_ARGUMENT, function,
                        "sizes[" + std::to_string(i) + "] = " + std::to_string(size) +
                            " does not fit in memory (size_t)");
        }
        // SAFETY: the caller guarantees `size` readable bytes at `data` for
        // the duration of the call; an empty span never reads.
        out.emplace_back(static_cast<const uint8_t*>(data), static_cast<size_t>(size));
    }
    return HURRAY_OK;
}

HurrayStatus fail(const Error& error) noexcept {
    try {
        set_last_error(error.to_string());
    } catch (...) {
        set_last_error(kNoMemoryForMessage);
    }
    const HurrayStatus status = status_of(error.code());
    LastError& last = last_error();
    last.code = error.code() == ErrorCode::kOk ? HURRAY_CODE_INTERNAL : static_cast<int32_t>(error.code());
    last.offset = error.has_offset() ? error.offset() : UINT64_MAX;
    try {
        last.file.assign(error.file());
        last.tensor.assign(error.tensor());
    } catch (...) {
        last.file.clear();  // without memory for them, the message still says both
        last.tensor.clear();
    }
    // An error that says "ok" would tell the caller that a failed call succeeded.
    return status == HURRAY_OK ? HURRAY_ERR_INTERNAL : status;
}

HurrayStatus fail(HurrayStatus status, const char* function, std::string_view what) noexcept {
    set_last_error(function, what);
    last_error().code = code_of_status(status);
    return status;
}

HurrayStatus null_argument(const char* function, const char* argument) noexcept {
    LastError& last = last_error();
    // A NULL argument names no file and no tensor: hurray_last_error_file and
    // _tensor return "" for it, as hurray.h promises (an earlier failure's stay
    // no longer).
    reset_details(last);
    store_message(last, [&](std::string& message) {
        std::string text("null_pointer: ");
        text += function;
        text += ": argument `";
        text += argument;
        text += "` is NULL";
        message = std::move(text);
    });
    last.code = code_of_status(HURRAY_ERR_NULL_POINTER);
    last.offset = UINT64_MAX;
    return HURRAY_ERR_NULL_POINTER;
}

}  // namespace hurray::c

extern "C" {

HURRAY_C_API uint32_t hurray_c_abi_version(void) { return HURRAY_C_ABI_VERSION; }

HURRAY_C_API const char* hurray_last_error_message(void) {
    const hurray::c::LastError& last = hurray::c::last_error();
    return last.fallback != nullptr ? last.fallback : last.text.c_str();
}

HURRAY_C_API int32_t hurray_last_error_code(void) { return hurray::c::last_error().code; }

HURRAY_C_API uint64_t hurray_last_error_offset(void) { return hurray::c::last_error().offset; }

HURRAY_C_API const char* hurray_last_error_file(void) { return hurray::c::last_error().file.c_str(); }

HURRAY_C_API const char* hurray_last_error_tensor(void) { return hurray::c::last_error().tensor.c_str(); }

HURRAY_C_API const char* hurray_error_code_name(int32_t code) {
    if (code == HURRAY_CODE_INTERNAL) {
        return "internal";
    }
    if (code == HURRAY_CODE_NONE) {
        return "none";
    }
    if (code < 0 || code > static_cast<int32_t>(hurray::ErrorCode::kCancelled)) {
        return "unknown";
    }
    // error_code_name returns a literal (NUL-terminated) for every code in range.
    return hurray::error_code_name(static_cast<hurray::ErrorCode>(code)).data();
}

}  // extern "C"
