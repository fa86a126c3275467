// SPDX-License-Identifier: Apache-2.0
// The C ABI's version, its thread-local last error message, and the mapping
// of library error codes to C status codes (docs/c-api.md, "Status codes").
#include "c/c_internal.hpp"

#include <limits>
#include <string>

namespace hurray::c {
namespace {

// Used when the message itself cannot be stored (no memory for the copy).
constexpr const char* kNoMemoryForMessage = "out_of_memory: the error message could not be recorded";

struct LastError {
    std::string text;
    const char* fallback = nullptr;  // when set, wins over text
};

LastError& last_error() noexcept {
    thread_local LastError last;
    return last;
}

}  // namespace

void set_last_error(std::string_view text) noexcept {
    LastError& last = last_error();
    try {
        last.text.assign(text);
        last.fallback = nullptr;
    } catch (...) {
        last.fallback = kNoMemoryForMessage;
    }
}

void set_last_error(const char* function, std::string_view what) noexcept {
    LastError& last = last_error();
    try {
        std::string text(function);
        text += ": ";
        text += what;
        last.text = std::move(text);
        last.fallback = nullptr;
    } catch (...) {
        last.fallback = kNoMemoryForMessage;
    }
}

HurrayStatus status_of(ErrorCode code) noexcept {
    // No default: -Wswitch (with -Werror) fails the build when a code is added
    // to ErrorCode without a mapping here.
    switch (code) {
        case ErrorCode::kOk:
            return HURRAY_OK;
        case ErrorCode::kTruncated:
            return HURRAY_ERR_TRUNCATED;
        case ErrorCode::kInvalidMagic:
            return HURRAY_ERR_INVALID_MAGIC;
        case ErrorCode::kUnsupportedVersion:
            return HURRAY_ERR_VERSION_MISMATCH;
        case ErrorCode::kInvalidDescriptorLength:
        case ErrorCode::kReservedFlagBits:
        case ErrorCode::kReservedBytesNonZero:
        case ErrorCode::kInvalidExtensionType:
        case ErrorCode::kRankTooLarge:
        case ErrorCode::kInvalidShape:
        case ErrorCode::kSizeOverflow:
        case ErrorCode::kInvalidLayoutTag:
        case ErrorCode::kUnknownLayoutTag:
        case ErrorCode::kUnsupportedExtensionLayout:
        case ErrorCode::kInvalidLayout:
        case ErrorCode::kRankNotAllowed:
        case ErrorCode::kNestingTooDeep:
        case ErrorCode::kInvalidBufferCount:
        case ErrorCode::kInvalidBufferHandle:
        case ErrorCode::kBufferTooSmall:
        case ErrorCode::kByteOffsetOutOfRange:
        case ErrorCode::kInvalidQuantization:
        case ErrorCode::kInvalidQuantizationStorageType:
        case ErrorCode::kInvalidQuantizationBuffer:
        case ErrorCode::kInvalidShard:
        case ErrorCode::kInvalidStatistics:
        case ErrorCode::kInvalidComposite:
            return HURRAY_ERR_INVALID_LAYOUT;
        case ErrorCode::kInvalidElementType:
        case ErrorCode::kUnknownElementType:
        case ErrorCode::kDeviceMismatch:
            return HURRAY_ERR_INVALID_TYPE;
        case ErrorCode::kUnknownQuantizationScheme:
        case ErrorCode::kUnsupportedQuantizationVersion:
        case ErrorCode::kUnsupported:
            return HURRAY_ERR_UNSUPPORTED;
        case ErrorCode::kInvalidArgument:
            return HURRAY_ERR_INVALID_ARGUMENT;
        case ErrorCode::kIoError:
            return HURRAY_ERR_IO;
        case ErrorCode::kInvalidFile:
        case ErrorCode::kChecksumMismatch:
        case ErrorCode::kInvalidData:
        case ErrorCode::kInvalidDocument:
        case ErrorCode::kDuplicateName:
        case ErrorCode::kSizeMismatch:
        case ErrorCode::kInvalidName:
        case ErrorCode::kOverlap:
            return HURRAY_ERR_INVALID_FILE;
        case ErrorCode::kNotFound:
            return HURRAY_ERR_NOT_FOUND;
        case ErrorCode::kTypeMismatch:
            return HURRAY_ERR_TYPE_MISMATCH;
        case ErrorCode::kOutOfMemory:
            return HURRAY_ERR_OUT_OF_MEMORY;
    }
    return HURRAY_ERR_INTERNAL;  // a value outside the enumeration
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
    // An error that says "ok" would tell the caller that a failed call succeeded.
    return status == HURRAY_OK ? HURRAY_ERR_INTERNAL : status;
}

HurrayStatus fail(HurrayStatus status, const char* function, std::string_view what) noexcept {
    set_last_error(function, what);
    return status;
}

HurrayStatus null_argument(const char* function, const char* argument) noexcept {
    LastError& last = last_error();
    try {
        std::string text("null_pointer: ");
        text += function;
        text += ": argument `";
        text += argument;
        text += "` is NULL";
        last.text = std::move(text);
        last.fallback = nullptr;
    } catch (...) {
        last.fallback = kNoMemoryForMessage;
    }
    return HURRAY_ERR_NULL_POINTER;
}

}  // namespace hurray::c

extern "C" {

HURRAY_C_API uint32_t hurray_c_abi_version(void) { return HURRAY_C_ABI_VERSION; }

HURRAY_C_API const char* hurray_last_error_message(void) {
    const hurray::c::LastError& last = hurray::c::last_error();
    return last.fallback != nullptr ? last.fallback : last.text.c_str();
}

}  // extern "C"
