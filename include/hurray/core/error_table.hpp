// SPDX-License-Identifier: Apache-2.0
/// @file
/// How every binding presents each `ErrorCode`: its C ABI status, its Python
/// exception class and the `hurray` tool's exit status, in one table. The C
/// ABI (`src/c/errors.cpp`), the Python module (`python/src/errors.cpp`) and the
/// tool read it; nothing else decides how an error is presented.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "hurray/core/result.hpp"

namespace hurray {

/// The Python exception classes of the `hurray` package (`hurray/_errors.py`).
enum class PythonError : uint8_t {
    kNone,               ///< Not an error (`ErrorCode::kOk`).
    kFile,               ///< `FileError` (OSError): I/O and container structure.
    kInvalidDescriptor,  ///< `InvalidDescriptorError` (ValueError): a descriptor.
    kBuffer,             ///< `BufferError` (ValueError): buffer sizes and offsets.
    kUnsupported,        ///< `UnsupportedError` (NotImplementedError).
    kStream,             ///< `StreamError` (OSError): stream framing.
    kInvalidArgument,    ///< `InvalidArgumentError` (ValueError): what the caller passed.
    kMemory,             ///< The built-in `MemoryError`.
    kInternal,           ///< `InternalError` (RuntimeError): a bug. Raised by a binding itself, never in the table.
    kCount,              ///< The number of classes.
};

/// What the Python module was doing when the error happened, which picks the
/// column of `ErrorPresentation::python`.
enum class PythonSite : uint8_t {
    kOpen,         ///< Opening a file and checking its container.
    kTensor,       ///< Decoding a descriptor, reading a tensor.
    kSave,         ///< Building and writing a file.
    kStreamRead,   ///< Reading a stream (before its input ended).
    kStreamWrite,  ///< Writing a stream.
    kCount,        ///< The number of sites.
};

/// One row of the table: how the bindings present `code`.
struct ErrorPresentation {
    /// The code this row is for (the row's index is its value).
    ErrorCode code;
    /// The C ABI's `HurrayStatus` (`HURRAY_ERR_*` of `<hurray.h>`; 0 for `kOk`).
    int32_t c_status;
    /// Its Python exception class at each `PythonSite`.
    std::array<PythonError, static_cast<size_t>(PythonSite::kCount)> python;
    /// The `hurray` tool's exit status (1: the input is invalid or an output
    /// could not be written; 130: cancelled, as by Ctrl-C).
    uint8_t exit_code;
};

/// The table, one row per `ErrorCode`, in code order.
inline constexpr std::array<ErrorPresentation, 47> kErrorPresentations = {{
    {ErrorCode::kOk, 0 /* HURRAY_OK */,
     {PythonError::kNone, PythonError::kNone, PythonError::kNone, PythonError::kNone, PythonError::kNone}, 0},
    {ErrorCode::kTruncated, -16 /* HURRAY_ERR_TRUNCATED */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kFile, PythonError::kStream, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kInvalidMagic, -1 /* HURRAY_ERR_INVALID_MAGIC */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kFile, PythonError::kStream, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kUnsupportedVersion, -2 /* HURRAY_ERR_VERSION_MISMATCH */,
     {PythonError::kUnsupported, PythonError::kUnsupported, PythonError::kUnsupported, PythonError::kUnsupported, PythonError::kUnsupported}, 1},
    {ErrorCode::kInvalidDescriptorLength, -3 /* HURRAY_ERR_INVALID_LAYOUT */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kFile, PythonError::kStream, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kReservedFlagBits, -3 /* HURRAY_ERR_INVALID_LAYOUT */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kReservedBytesNonZero, -3 /* HURRAY_ERR_INVALID_LAYOUT */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kInvalidElementType, -4 /* HURRAY_ERR_INVALID_TYPE */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kUnknownElementType, -4 /* HURRAY_ERR_INVALID_TYPE */,
     {PythonError::kUnsupported, PythonError::kUnsupported, PythonError::kUnsupported, PythonError::kUnsupported, PythonError::kUnsupported}, 1},
    {ErrorCode::kInvalidExtensionType, -3 /* HURRAY_ERR_INVALID_LAYOUT */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kRankTooLarge, -3 /* HURRAY_ERR_INVALID_LAYOUT */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kInvalidShape, -3 /* HURRAY_ERR_INVALID_LAYOUT */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kSizeOverflow, -3 /* HURRAY_ERR_INVALID_LAYOUT */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kInvalidLayoutTag, -3 /* HURRAY_ERR_INVALID_LAYOUT */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kUnknownLayoutTag, -3 /* HURRAY_ERR_INVALID_LAYOUT */,
     {PythonError::kUnsupported, PythonError::kUnsupported, PythonError::kUnsupported, PythonError::kUnsupported, PythonError::kUnsupported}, 1},
    {ErrorCode::kUnsupportedExtensionLayout, -3 /* HURRAY_ERR_INVALID_LAYOUT */,
     {PythonError::kUnsupported, PythonError::kUnsupported, PythonError::kUnsupported, PythonError::kUnsupported, PythonError::kUnsupported}, 1},
    {ErrorCode::kInvalidLayout, -3 /* HURRAY_ERR_INVALID_LAYOUT */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kRankNotAllowed, -3 /* HURRAY_ERR_INVALID_LAYOUT */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kNestingTooDeep, -3 /* HURRAY_ERR_INVALID_LAYOUT */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kInvalidBufferCount, -3 /* HURRAY_ERR_INVALID_LAYOUT */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kInvalidBufferHandle, -3 /* HURRAY_ERR_INVALID_LAYOUT */,
     {PythonError::kFile, PythonError::kBuffer, PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kDeviceMismatch, -4 /* HURRAY_ERR_INVALID_TYPE */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kBufferTooSmall, -3 /* HURRAY_ERR_INVALID_LAYOUT */,
     {PythonError::kFile, PythonError::kBuffer, PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kBuffer}, 1},
    {ErrorCode::kByteOffsetOutOfRange, -3 /* HURRAY_ERR_INVALID_LAYOUT */,
     {PythonError::kFile, PythonError::kBuffer, PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kInvalidQuantization, -3 /* HURRAY_ERR_INVALID_LAYOUT */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kUnknownQuantizationScheme, -14 /* HURRAY_ERR_UNSUPPORTED */,
     {PythonError::kUnsupported, PythonError::kUnsupported, PythonError::kUnsupported, PythonError::kUnsupported, PythonError::kUnsupported}, 1},
    {ErrorCode::kUnsupportedQuantizationVersion, -14 /* HURRAY_ERR_UNSUPPORTED */,
     {PythonError::kUnsupported, PythonError::kUnsupported, PythonError::kUnsupported, PythonError::kUnsupported, PythonError::kUnsupported}, 1},
    {ErrorCode::kInvalidQuantizationStorageType, -3 /* HURRAY_ERR_INVALID_LAYOUT */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kInvalidQuantizationBuffer, -3 /* HURRAY_ERR_INVALID_LAYOUT */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kInvalidShard, -3 /* HURRAY_ERR_INVALID_LAYOUT */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kInvalidStatistics, -3 /* HURRAY_ERR_INVALID_LAYOUT */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kInvalidComposite, -3 /* HURRAY_ERR_INVALID_LAYOUT */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kInvalidArgument, -19 /* HURRAY_ERR_INVALID_ARGUMENT */,
     {PythonError::kFile, PythonError::kInvalidArgument, PythonError::kInvalidArgument, PythonError::kInvalidDescriptor, PythonError::kInvalidArgument}, 1},
    {ErrorCode::kIoError, -12 /* HURRAY_ERR_IO */,
     {PythonError::kFile, PythonError::kFile, PythonError::kFile, PythonError::kFile, PythonError::kFile}, 1},
    {ErrorCode::kInvalidFile, -17 /* HURRAY_ERR_INVALID_FILE */,
     {PythonError::kFile, PythonError::kFile, PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kChecksumMismatch, -17 /* HURRAY_ERR_INVALID_FILE */,
     {PythonError::kFile, PythonError::kFile, PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kNotFound, -13 /* HURRAY_ERR_NOT_FOUND */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kInvalidData, -17 /* HURRAY_ERR_INVALID_FILE */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kUnsupported, -14 /* HURRAY_ERR_UNSUPPORTED */,
     {PythonError::kUnsupported, PythonError::kUnsupported, PythonError::kUnsupported, PythonError::kUnsupported, PythonError::kUnsupported}, 1},
    {ErrorCode::kInvalidDocument, -17 /* HURRAY_ERR_INVALID_FILE */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kDuplicateName, -17 /* HURRAY_ERR_INVALID_FILE */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidArgument, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kSizeMismatch, -17 /* HURRAY_ERR_INVALID_FILE */,
     {PythonError::kFile, PythonError::kBuffer, PythonError::kInvalidArgument, PythonError::kInvalidDescriptor, PythonError::kBuffer}, 1},
    {ErrorCode::kInvalidName, -17 /* HURRAY_ERR_INVALID_FILE */,
     {PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidArgument, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kOverlap, -17 /* HURRAY_ERR_INVALID_FILE */,
     {PythonError::kFile, PythonError::kFile, PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 1},
    {ErrorCode::kTypeMismatch, -20 /* HURRAY_ERR_TYPE_MISMATCH */,
     {PythonError::kFile, PythonError::kInvalidArgument, PythonError::kInvalidArgument, PythonError::kInvalidDescriptor, PythonError::kInvalidArgument}, 1},
    {ErrorCode::kOutOfMemory, -15 /* HURRAY_ERR_OUT_OF_MEMORY */,
     {PythonError::kMemory, PythonError::kMemory, PythonError::kMemory, PythonError::kMemory, PythonError::kMemory}, 1},
    {ErrorCode::kCancelled, -21 /* HURRAY_ERR_CANCELLED */,
     {PythonError::kFile, PythonError::kFile, PythonError::kFile, PythonError::kInvalidDescriptor, PythonError::kInvalidDescriptor}, 130},
}};

/// The row of `code`, or null for a value outside the enumeration (a code
/// from a newer library): the bindings then report an internal error.
[[nodiscard]] constexpr const ErrorPresentation* find_error_presentation(ErrorCode code) noexcept {
    const auto i = static_cast<size_t>(code);
    return i < kErrorPresentations.size() ? &kErrorPresentations[i] : nullptr;
}

namespace detail {
/// Whether every row of the table sits at its code's value.
constexpr bool error_table_in_order() noexcept {
    for (size_t i = 0; i < kErrorPresentations.size(); ++i) {
        if (static_cast<size_t>(kErrorPresentations[i].code) != i) {
            return false;
        }
    }
    return true;
}
}  // namespace detail

static_assert(detail::error_table_in_order(), "kErrorPresentations: one row per ErrorCode, in code order");
static_assert(kErrorPresentations.back().code == ErrorCode::kCancelled,
              "kErrorPresentations: a new ErrorCode needs its row");

}  // namespace hurray
