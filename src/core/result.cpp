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

struct Error::Where {
    std::string file;
    std::string tensor;
    std::string field;
    // The length of the file's prefix (with its ": ") at the start of the
    // message, 0 when something was put before it (without_file).
    size_t file_prefix = 0;
};

void Error::WhereDeleter::operator()(Where* w) const noexcept {
    delete w;  // NOLINT(cppcoreguidelines-owning-memory): the unique_ptr's deleter
}

Error::Error(const Error& other)
    : code_(other.code_),
      os_error_(other.os_error_),
      offset_(other.offset_),
      message_(other.message_),
      where_(other.where_ ? new Where(*other.where_) : nullptr) {}  // NOLINT(cppcoreguidelines-owning-memory)

Error& Error::operator=(const Error& other) {
    if (this != &other) {
        Error copy(other);
        *this = std::move(copy);
    }
    return *this;
}

std::string_view Error::file() const noexcept {
    return where_ ? std::string_view(where_->file) : std::string_view();
}

std::string_view Error::tensor() const noexcept {
    return where_ ? std::string_view(where_->tensor) : std::string_view();
}

std::string_view Error::field() const noexcept {
    return where_ ? std::string_view(where_->field) : std::string_view();
}

Error Error::with_context(const ErrorContext& context) const& {
    Error copy(*this);
    return std::move(copy).with_context(context);
}

Error Error::with_context(const ErrorContext& context) && {
    if (offset_ != kNoOffset) {
        offset_ += context.base;
    } else {
        offset_ = context.offset;
    }
    const bool names_file = !context.file.empty() && file().empty();
    const std::string_view prefix = context.prefix;
    const bool records = names_file || (!context.tensor.empty() && tensor().empty()) ||
                         (!context.field.empty() && field().empty());
    if (records && !where_) {
        where_.reset(new Where());  // NOLINT(cppcoreguidelines-owning-memory)
    }
    if (!prefix.empty()) {
        std::string text;
        text.reserve(prefix.size() + 2 + message_.size());
        text.append(prefix);
        text.append(": ");
        text.append(message_);
        message_ = std::move(text);
        if (where_) {
            // A prefix given with the file that starts with it ("path" or
            // "path: verify") names it first; any other prefix hides the file's.
            const bool file_first = names_file && prefix.substr(0, context.file.size()) == context.file &&
                                    (prefix.size() == context.file.size() ||
                                     prefix.substr(context.file.size(), 2) == ": ");
            where_->file_prefix = file_first ? context.file.size() + 2 : 0;
        }
    }
    if (names_file) {
        where_->file.assign(context.file);
    }
    if (!context.tensor.empty() && where_->tensor.empty()) {
        where_->tensor.assign(context.tensor);
    }
    if (!context.field.empty() && where_->field.empty()) {
        where_->field.assign(context.field);
    }
    return std::move(*this);
}

Error Error::without_file() const {
    Error copy(*this);
    if (copy.where_) {
        copy.message_.erase(0, copy.where_->file_prefix);
        copy.where_->file_prefix = 0;
        copy.where_->file.clear();
    }
    return copy;
}

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

void ResultMisuse::value_of_error(const char* accessor, const Error& error) noexcept {
    std::fprintf(stderr, "hurray: %s called on an error Result: ", accessor);
    write_error(error);
    std::fputc('\n', stderr);
    std::fflush(stderr);
    std::abort();
}

void ResultMisuse::error_of_success(const char* kind) noexcept {
    std::fprintf(stderr, "hurray: error() called on a successful %s\n", kind);
    std::fflush(stderr);
    std::abort();
}

void ResultMisuse::from_ok_error(const char* kind, const Error& error) noexcept {
    std::fprintf(stderr, "hurray: %s constructed from an Error with code ok (not an error): ", kind);
    write_error(error);
    std::fputc('\n', stderr);
    std::fflush(stderr);
    std::abort();
}

}  // namespace hurray
