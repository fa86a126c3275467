// SPDX-License-Identifier: Apache-2.0
/// @file
/// The fixed parts of an HRRYFILE container (docs/spec/file-format.md): the
/// 64-byte file header, the 40-byte trailer, the index entry, the file flags
/// and the alignment rules, with their encoders and validating decoders.
///
/// `FileWriter`, `FileReader`, `SequentialFileReader` and the `hurray` tool
/// all go through these functions, so every rule lives in one place.
#pragma once

#include "hurray/io/export.hpp"
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "hurray/core/result.hpp"

namespace hurray {

/// `HRRYFILE`, the first 8 bytes of every container file.
inline constexpr std::array<uint8_t, 8> kFileMagic = {0x48, 0x52, 0x52, 0x59, 0x46, 0x49, 0x4C, 0x45};
/// `HRRY`, the last 4 bytes of every container file (end of the trailer).
inline constexpr std::array<uint8_t, 4> kTrailerMagic = {0x48, 0x52, 0x52, 0x59};
/// Size of the file header.
inline constexpr uint64_t kFileHeaderSize = 64;
/// Size of the trailer (SPEC-NOTES 9: 40 bytes; ADR-011's 32 is stale).
inline constexpr uint64_t kFileTrailerSize = 40;
/// The container major version this library writes and the highest it reads.
inline constexpr uint8_t kContainerVersionMajor = 1;
/// The container minor version this library writes.
inline constexpr uint8_t kContainerVersionMinor = 0;
/// Smallest allowed `data_buffer_alignment`.
inline constexpr uint32_t kMinDataBufferAlignment = 4096;
/// Largest allowed `data_buffer_alignment` (2 MiB).
inline constexpr uint32_t kMaxDataBufferAlignment = 2U * 1024U * 1024U;
/// The alignment `FileWriter` uses unless told otherwise.
inline constexpr uint32_t kDefaultDataBufferAlignment = 4096;
/// Alignment of every descriptor, of the KV section and of the index.
inline constexpr uint64_t kDescriptorAlignment = 8;
/// `tensor_count_hint` of a writer that does not know the count up front.
inline constexpr uint64_t kUnknownTensorCount = UINT64_MAX;
/// Longest tensor name or KV key, in bytes (the length is a `uint16`).
inline constexpr size_t kMaxNameLength = 65535;

/// Bits of the header's `file_flags`.
namespace file_flags {
/// Bit 0: a KV metadata section is present.
inline constexpr uint32_t kHasKvMetadata = 1U << 0;
/// Bit 1: index entries are sorted by the raw UTF-8 bytes of their names.
inline constexpr uint32_t kSortedIndex = 1U << 1;
/// Bit 2: the trailer's `index_crc32c` is the CRC-32C of the index section.
inline constexpr uint32_t kHasIndexCrc32c = 1U << 2;
/// Bits 3-31: reserved, must be zero.
inline constexpr uint32_t kReservedMask = ~(kHasKvMetadata | kSortedIndex | kHasIndexCrc32c);
}  // namespace file_flags

/// Byte offsets of the fields of the 64-byte file header (file-format.md § File
/// Header). Tools and error messages use them to point at a field.
namespace header_field {
/// `HRRYFILE`, 8 bytes.
inline constexpr uint64_t kMagic = 0;
/// container_version_major, u8.
inline constexpr uint64_t kVersionMajor = 8;
/// container_version_minor, u8.
inline constexpr uint64_t kVersionMinor = 9;
/// 2 reserved zero bytes.
inline constexpr uint64_t kReserved0 = 10;
/// file_flags, u32.
inline constexpr uint64_t kFlags = 12;
/// data_buffer_alignment, u32.
inline constexpr uint64_t kDataBufferAlignment = 16;
/// first_descriptor_offset, u64.
inline constexpr uint64_t kFirstDescriptorOffset = 20;
/// tensor_count_hint, u64.
inline constexpr uint64_t kTensorCountHint = 28;
/// 28 reserved zero bytes, up to the end of the header.
inline constexpr uint64_t kReserved1 = 36;
}  // namespace header_field

/// Byte offsets of the fields of the 40-byte trailer, from its first byte
/// (file-format.md § Trailer).
namespace trailer_field {
/// index_offset, u64.
inline constexpr uint64_t kIndexOffset = 0;
/// index_length, u64.
inline constexpr uint64_t kIndexLength = 8;
/// kv_offset, u64.
inline constexpr uint64_t kKvOffset = 16;
/// kv_length, u32.
inline constexpr uint64_t kKvLength = 24;
/// index_crc32c, u32.
inline constexpr uint64_t kIndexCrc32c = 28;
/// 4 reserved zero bytes.
inline constexpr uint64_t kReserved = 32;
/// `HRRY`, 4 bytes, the last of the file.
inline constexpr uint64_t kMagic = 36;
}  // namespace trailer_field


/// The 64-byte file header, decoded.
struct HURRAY_IO_EXPORT FileHeader {
    /// `container_version_major` (byte 8).
    uint8_t version_major = kContainerVersionMajor;
    /// `container_version_minor` (byte 9).
    uint8_t version_minor = kContainerVersionMinor;
    /// `file_flags` (bytes 12-15), see `file_flags`.
    uint32_t flags = 0;
    /// `data_buffer_alignment` (bytes 16-19): a power of two in 4096 .. 2 MiB.
    uint32_t data_buffer_alignment = kDefaultDataBufferAlignment;
    /// `first_descriptor_offset` (bytes 20-27): >= 64, a multiple of 8.
    uint64_t first_descriptor_offset = kFileHeaderSize;
    /// `tensor_count_hint` (bytes 28-35), `kUnknownTensorCount` when unknown.
    uint64_t tensor_count_hint = kUnknownTensorCount;
    /// Field-wise equality.
    bool operator==(const FileHeader&) const = default;
};

/// The 40-byte trailer at the end of the file, decoded.
struct HURRAY_IO_EXPORT FileTrailer {
    /// Absolute offset of the index section.
    uint64_t index_offset = 0;
    /// Length of the index section in bytes.
    uint64_t index_length = 0;
    /// Absolute offset of the KV section, 0 when there is none.
    uint64_t kv_offset = 0;
    /// Length of the KV section, 0 when there is none.
    uint32_t kv_length = 0;
    /// CRC-32C of the index section (0 when `kHasIndexCrc32c` is clear).
    uint32_t index_crc32c = 0;
    /// Field-wise equality.
    bool operator==(const FileTrailer&) const = default;
};

/// One entry of the index section: where a named tensor lives in the file.
///
/// The name is a view, not a copy: an entry from `FileReader::entry`,
/// `SequentialFileReader::index` or `FileWriter::entries` points into memory
/// that object keeps (the file's mapped or read index, the writer's names), and
/// one from `decode_index` into the bytes it decoded. Copy the name
/// (`std::string(e.name)`) to keep it longer than its source. Opening a file
/// with 100,000 tensors therefore allocates no string per name.
///
/// @code
/// hurray::IndexEntry e{"w", 64, 80, 4096, 24};  // a literal lives forever
/// std::string kept(file->entry(0).name);        // outlives `file`
/// @endcode
struct HURRAY_IO_EXPORT IndexEntry {
    /// The tensor's name (valid UTF-8, 1 .. 65,535 bytes, unique in the file),
    /// viewing memory owned by whoever produced the entry (see above).
    std::string_view name;
    /// Absolute offset of the tensor's descriptor (a multiple of 8).
    uint64_t descriptor_offset = 0;
    /// Length of the descriptor; equals the descriptor's own `descriptor_length`.
    uint32_t descriptor_length = 0;
    /// Absolute offset of the first data buffer (a multiple of the alignment
    /// when the tensor has buffers). For a tensor without buffers (a composite
    /// head) this library writes the end of the descriptor.
    uint64_t data_offset = 0;
    /// From `data_offset` to the end of the last buffer: the buffers plus the
    /// padding between them, not the padding after the last one (SPEC-NOTES 16).
    uint64_t data_length = 0;
    /// Reserved, must be 0.
    uint32_t flags = 0;
    /// Field-wise equality.
    bool operator==(const IndexEntry&) const = default;
};

/// Writes `header` as the 64 bytes of a file header (reserved bytes zero).
/// Does not check the fields; `check_file_header` does.
HURRAY_IO_EXPORT void encode_file_header(const FileHeader& header, std::span<uint8_t, kFileHeaderSize> out) noexcept;

/// Checks the rules of file-format.md § File Header on a decoded header:
/// supported major version, no reserved flag bit, alignment a power of two in
/// 4096 .. 2 MiB, `first_descriptor_offset` >= 64 and a multiple of 8.
/// Errors carry the byte offset of the field inside the header.
HURRAY_IO_EXPORT Status check_file_header(const FileHeader& header);

/// Decodes and checks the first 64 bytes of a file.
///
/// Fails with `kTruncated` (fewer than 64 bytes), `kInvalidMagic` (not
/// `HRRYFILE`), `kUnsupportedVersion`, `kReservedFlagBits`,
/// `kReservedBytesNonZero` or `kInvalidFile` (alignment, first descriptor
/// offset); each message names the field and its byte offset.
///
/// @code
/// auto header = hurray::decode_file_header(bytes);
/// if (!header) return header.error();
/// uint32_t align = header->data_buffer_alignment;
/// @endcode
HURRAY_IO_EXPORT Result<FileHeader> decode_file_header(std::span<const uint8_t> bytes);

/// Writes `trailer` as the 40 bytes at the end of a file (reserved bytes zero,
/// trailer magic last).
HURRAY_IO_EXPORT void encode_file_trailer(const FileTrailer& trailer, std::span<uint8_t, kFileTrailerSize> out) noexcept;

/// Decodes the 40 trailer bytes of a file whose trailer starts at absolute
/// offset `trailer_offset` (used for the byte offsets in errors).
///
/// Checks only what the trailer alone determines: the trailer magic (first,
/// as the spec requires) and the reserved bytes. Where the sections lie is
/// checked against the file by the readers.
HURRAY_IO_EXPORT Result<FileTrailer> decode_file_trailer(std::span<const uint8_t> bytes, uint64_t trailer_offset);

/// Whether `bytes` is well-formed UTF-8 (no overlong forms, no surrogates,
/// nothing above U+10FFFF).
HURRAY_IO_EXPORT bool is_valid_utf8(std::string_view bytes) noexcept;

/// Checks a tensor name or KV key: valid UTF-8, 1 .. 65,535 bytes.
/// `what` names it in the error ("tensor name", "KV key").
/// Fails with `kInvalidName`.
HURRAY_IO_EXPORT Status check_name(std::string_view name, std::string_view what);

/// `offset` rounded up to a multiple of `alignment` (a power of two); fails
/// with `kSizeOverflow` when that does not fit in 64 bits.
///
/// @code
/// auto next = hurray::align_up(4097, 4096);  // 8192
/// @endcode
HURRAY_IO_EXPORT Result<uint64_t> align_up(uint64_t offset, uint64_t alignment);

}  // namespace hurray
