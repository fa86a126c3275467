// SPDX-License-Identifier: Apache-2.0
#include "hurray/io/file_format.hpp"

#include "hurray/core/byte_io.hpp"
#include "hurray/core/checked_math.hpp"
#include "hurray/core/text.hpp"
#include "hurray/core/describe.hpp"

#include <algorithm>
#include <string>

namespace hurray {

namespace {


// The header's reserved tail runs from kReserved1 to its end.
constexpr uint64_t kReservedHeaderSize = kFileHeaderSize - header_field::kReserved1;

}  // namespace

void encode_file_header(const FileHeader& header, std::span<uint8_t, kFileHeaderSize> out) noexcept {
    ByteWriter w(out);
    w.bytes(kFileMagic);
    w.u8(header.version_major);
    w.u8(header.version_minor);
    w.zeros(2);
    w.u32(header.flags);
    w.u32(header.data_buffer_alignment);
    w.u64(header.first_descriptor_offset);
    w.u64(header.tensor_count_hint);
    w.zeros(kReservedHeaderSize);
}

Status check_file_header(const FileHeader& header) {
    if (header.version_major == 0 || header.version_major > kContainerVersionMajor) {
        return Error(ErrorCode::kUnsupportedVersion,
                     "container_version_major: " + dec(header.version_major) +
                         " is not supported (this library reads 1 .. " + dec(kContainerVersionMajor) + ")",
                     header_field::kVersionMajor);
    }
    if ((header.flags & file_flags::kReservedMask) != 0) {
        return Error(ErrorCode::kReservedFlagBits,
                     "file_flags: reserved bits set (" + hex(header.flags & file_flags::kReservedMask, 8) +
                         "); only bits 0-2 are defined",
                     header_field::kFlags);
    }
    const uint32_t a = header.data_buffer_alignment;
    if (!is_pow2(a) || a < kMinDataBufferAlignment || a > kMaxDataBufferAlignment) {
        return Error(ErrorCode::kInvalidFile,
                     "data_buffer_alignment: " + dec(a) +
                         " must be a power of two from 4096 to 2097152",
                     header_field::kDataBufferAlignment);
    }
    if (header.first_descriptor_offset < kFileHeaderSize ||
        header.first_descriptor_offset % kDescriptorAlignment != 0) {
        return Error(ErrorCode::kInvalidFile,
                     "first_descriptor_offset: " + dec(header.first_descriptor_offset) +
                         " must be >= 64 and a multiple of 8",
                     header_field::kFirstDescriptorOffset);
    }
    return Status::success();
}

Result<FileHeader> decode_file_header(std::span<const uint8_t> bytes) {
    // Every Hurray input starts with "HRRY" (a container's "HRRYFILE", a
    // stream's or a bare descriptor's magic): input that does not is named as
    // something else, whatever its length, before a field is read.
    const size_t common = std::min<size_t>(bytes.size(), 4);
    if (!bytes.empty() && !std::equal(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(common),
                                      kFileMagic.begin())) {
        return Error(ErrorCode::kInvalidMagic,
                     "magic: not a Hurray file or stream (starts with " + leading_bytes(bytes) + ")", 0);
    }
    ByteReader r(bytes, 0);
    HURRAY_ASSIGN_OR_RETURN(auto magic, r.bytes(kFileMagic.size(), "magic"));
    if (!std::equal(magic.begin(), magic.end(), kFileMagic.begin())) {
        return Error(ErrorCode::kInvalidMagic,
                     "magic: expected \"HRRYFILE\" (48 52 52 59 46 49 4c 45); the input starts with " +
                         leading_bytes(bytes) + ": a Hurray stream or bare descriptor, not an HRRYFILE container",
                     0);
    }
    if (bytes.size() < kFileHeaderSize) {
        return Error(ErrorCode::kTruncated,
                     "file header: needs 64 bytes, only " + dec(bytes.size()) + " present", bytes.size());
    }
    FileHeader h;
    HURRAY_ASSIGN_OR_RETURN(h.version_major, r.u8("container_version_major"));
    HURRAY_ASSIGN_OR_RETURN(h.version_minor, r.u8("container_version_minor"));
    HURRAY_RETURN_IF_ERROR(r.reserved(2, "header _reserved"));
    HURRAY_ASSIGN_OR_RETURN(h.flags, r.u32("file_flags"));
    HURRAY_ASSIGN_OR_RETURN(h.data_buffer_alignment, r.u32("data_buffer_alignment"));
    HURRAY_ASSIGN_OR_RETURN(h.first_descriptor_offset, r.u64("first_descriptor_offset"));
    HURRAY_ASSIGN_OR_RETURN(h.tensor_count_hint, r.u64("tensor_count_hint"));
    static_assert(header_field::kReserved1 + kReservedHeaderSize == kFileHeaderSize);
    HURRAY_RETURN_IF_ERROR(r.reserved(kReservedHeaderSize, "header _reserved_header"));
    HURRAY_RETURN_IF_ERROR(check_file_header(h));
    return h;
}

void encode_file_trailer(const FileTrailer& trailer, std::span<uint8_t, kFileTrailerSize> out) noexcept {
    ByteWriter w(out);
    w.u64(trailer.index_offset);
    w.u64(trailer.index_length);
    w.u64(trailer.kv_offset);
    w.u32(trailer.kv_length);
    w.u32(trailer.index_crc32c);
    w.zeros(4);
    w.bytes(kTrailerMagic);
}

Result<FileTrailer> decode_file_trailer(std::span<const uint8_t> bytes, uint64_t trailer_offset) {
    if (bytes.size() < kFileTrailerSize) {
        return Error(ErrorCode::kTruncated,
                     "trailer: needs 40 bytes, only " + dec(bytes.size()) + " present", trailer_offset);
    }
    // The magic is checked before any other trailer field is trusted.
    const auto magic = bytes.subspan(trailer_field::kMagic, kTrailerMagic.size());
    if (!std::equal(magic.begin(), magic.end(), kTrailerMagic.begin())) {
        return Error(ErrorCode::kInvalidMagic, "trailer_magic: expected \"HRRY\" (48 52 52 59)",
                     trailer_offset + trailer_field::kMagic);
    }
    ByteReader r(bytes.first(kFileTrailerSize), trailer_offset);
    FileTrailer t;
    HURRAY_ASSIGN_OR_RETURN(t.index_offset, r.u64("index_offset"));
    HURRAY_ASSIGN_OR_RETURN(t.index_length, r.u64("index_length"));
    HURRAY_ASSIGN_OR_RETURN(t.kv_offset, r.u64("kv_offset"));
    HURRAY_ASSIGN_OR_RETURN(t.kv_length, r.u32("kv_length"));
    HURRAY_ASSIGN_OR_RETURN(t.index_crc32c, r.u32("index_crc32c"));
    HURRAY_RETURN_IF_ERROR(r.reserved(4, "trailer _reserved"));
    return t;
}

bool is_valid_utf8(std::string_view bytes) noexcept {
    size_t i = 0;
    const size_t n = bytes.size();
    while (i < n) {
        const auto c = static_cast<uint8_t>(bytes[i]);
        if (c < 0x80) {
            ++i;
            continue;
        }
        size_t len = 0;
        uint32_t cp = 0;
        if ((c & 0xE0U) == 0xC0U) {
            len = 2;
            cp = c & 0x1FU;
        } else if ((c & 0xF0U) == 0xE0U) {
            len = 3;
            cp = c & 0x0FU;
        } else if ((c & 0xF8U) == 0xF0U) {
            len = 4;
            cp = c & 0x07U;
        } else {
            return false;  // continuation byte or 0xF8..0xFF as a lead byte
        }
        if (n - i < len) {
            return false;
        }
        for (size_t k = 1; k < len; ++k) {
            const auto cc = static_cast<uint8_t>(bytes[i + k]);
            if ((cc & 0xC0U) != 0x80U) {
                return false;
            }
            cp = (cp << 6U) | (cc & 0x3FU);
        }
        const uint32_t min_for_len = len == 2 ? 0x80U : len == 3 ? 0x800U : 0x10000U;
        if (cp < min_for_len || cp > 0x10FFFFU || (cp >= 0xD800U && cp <= 0xDFFFU)) {
            return false;  // overlong, out of range, or a surrogate
        }
        i += len;
    }
    return true;
}

Status check_name(std::string_view name, std::string_view what) {
    if (name.empty()) {
        return Error(ErrorCode::kInvalidName, std::string(what) + ": must not be empty");
    }
    if (name.size() > kMaxNameLength) {
        return Error(ErrorCode::kInvalidName, std::string(what) + ": " + dec(name.size()) +
                                                  " bytes, at most 65535 allowed");
    }
    if (!is_valid_utf8(name)) {
        return Error(ErrorCode::kInvalidName, std::string(what) + " is not valid UTF-8");
    }
    return Status::success();
}

Result<uint64_t> align_up(uint64_t offset, uint64_t alignment) {
    if (!is_pow2(alignment)) {
        return Error(ErrorCode::kInvalidArgument, "alignment: " + dec(alignment) + " is not a power of two");
    }
    const uint64_t rem = offset & (alignment - 1);
    if (rem == 0) {
        return offset;
    }
    auto up = add_u64(offset, alignment - rem);
    if (!up) {
        return Error(ErrorCode::kSizeOverflow,
                     "offset " + dec(offset) + " aligned to " + dec(alignment) + " overflows 64 bits");
    }
    return *up;
}

}  // namespace hurray
