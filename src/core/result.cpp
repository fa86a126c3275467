// SPDX-License-Identifier: Apache-2.0
#include "hurray/core/result.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace hurray {

std::string_view error_code_name(ErrorCode code) noexcept {
    switch (code) {
        case ErrorCode::kOk: return "ok";
        case ErrorCode::kTruncated: return "truncated";
        case ErrorCode::kInvalidMagic: return "invalid_magic";
        case ErrorCode::kUnsupportedVersion: return "unsupported_version";
        case ErrorCode::kInvalidDescriptorLength: return "invalid_descriptor_length";
        case ErrorCode::kReservedFlagBits: return "reserved_flag_bits";
        case ErrorCode::kReservedBytesNonZero: return "reserved_bytes_non_zero";
        case ErrorCode::kInvalidElementType: return "invalid_element_type";
        case ErrorCode::kUnknownElementType: return "unknown_element_type";
        case ErrorCode::kInvalidExtensionType: return "invalid_extension_type";
        case ErrorCode::kRankTooLarge: return "rank_too_large";
        case ErrorCode::kInvalidShape: return "invalid_shape";
        case ErrorCode::kSizeOverflow: return "size_overflow";
        case ErrorCode::kInvalidLayoutTag: return "invalid_layout_tag";
        case ErrorCode::kUnknownLayoutTag: return "unknown_layout_tag";
        case ErrorCode::kUnsupportedExtensionLayout: return "unsupported_extension_layout";
        case ErrorCode::kInvalidLayout: return "invalid_layout";
        case ErrorCode::kRankNotAllowed: return "rank_not_allowed";
        case ErrorCode::kNestingTooDeep: return "nesting_too_deep";
        case ErrorCode::kInvalidBufferCount: return "invalid_buffer_count";
        case ErrorCode::kInvalidBufferHandle: return "invalid_buffer_handle";
        case ErrorCode::kDeviceMismatch: return "device_mismatch";
        case ErrorCode::kBufferTooSmall: return "buffer_too_small";
        case ErrorCode::kByteOffsetOutOfRange: return "byte_offset_out_of_range";
        case ErrorCode::kInvalidQuantization: return "invalid_quantization";
        case ErrorCode::kUnknownQuantizationScheme: return "unknown_quantization_scheme";
        case ErrorCode::kUnsupportedQuantizationVersion: return "unsupported_quantization_version";
        case ErrorCode::kInvalidQuantizationStorageType: return "invalid_quantization_storage_type";
        case ErrorCode::kInvalidQuantizationBuffer: return "invalid_quantization_buffer";
        case ErrorCode::kInvalidShard: return "invalid_shard";
        case ErrorCode::kInvalidStatistics: return "invalid_statistics";
        case ErrorCode::kInvalidComposite: return "invalid_composite";
        case ErrorCode::kInvalidArgument: return "invalid_argument";
        case ErrorCode::kIoError: return "io_error";
        case ErrorCode::kInvalidFile: return "invalid_file";
        case ErrorCode::kChecksumMismatch: return "checksum_mismatch";
        case ErrorCode::kNotFound: return "not_found";
        case ErrorCode::kInvalidData: return "invalid_data";
        case ErrorCode::kUnsupported: return "unsupported";
        case ErrorCode::kInvalidDocument: return "invalid_document";
        case ErrorCode::kDuplicateName: return "duplicate_name";
        case ErrorCode::kSizeMismatch: return "size_mismatch";
        case ErrorCode::kInvalidName: return "invalid_name";
        case ErrorCode::kOverlap: return "overlap";
        case ErrorCode::kTypeMismatch: return "type_mismatch";
        case ErrorCode::kOutOfMemory: return "out_of_memory";
        case ErrorCode::kCancelled: return "cancelled";
    }
    return "unknown_error";
}

std::string Error::to_string() const {
    std::string s(error_code_name(code_));
    if (has_offset()) {
        s += " at byte ";
        s += std::to_string(offset_);
    }
    s += ": ";
    s += message_;
    return s;
}

namespace detail {

namespace {

// Writes `to_string()` of `e` to stderr without allocating (the process is about
// to abort; the heap may be what went wrong).
void write_error(const Error& e) noexcept {
    const std::string_view name = error_code_name(e.code());
    std::fwrite(name.data(), 1, name.size(), stderr);
    if (e.has_offset()) {
        std::fprintf(stderr, " at byte %" PRIu64, e.offset());
    }
    std::fputs(": ", stderr);
    std::fwrite(e.message().data(), 1, e.message().size(), stderr);
}

}  // namespace

void result_value_of_error(const char* accessor, const Error& error) noexcept {
    std::fprintf(stderr, "hurray: %s called on an error Result: ", accessor);
    write_error(error);
    std::fputc('\n', stderr);
    std::fflush(stderr);
    std::abort();
}

void result_error_of_success(const char* kind) noexcept {
    std::fprintf(stderr, "hurray: error() called on a successful %s\n", kind);
    std::fflush(stderr);
    std::abort();
}

void result_from_ok_error(const char* kind, const Error& error) noexcept {
    std::fprintf(stderr, "hurray: %s constructed from an Error with code ok (not an error): ", kind);
    write_error(error);
    std::fputc('\n', stderr);
    std::fflush(stderr);
    std::abort();
}

}  // namespace detail

}  // namespace hurray
