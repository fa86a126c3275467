// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file
/// Internal: a bounds-checked structural check of a zip archive (.npz), done before
/// libzip opens it, so that a truncated or corrupt archive is refused with a message
/// naming the record, the field and its byte offset in the file.
///
/// Checked: the end of central directory record (searched backwards over its comment),
/// the zip64 locator and end record where present or needed, the central directory's
/// bounds and entry count, each central entry's fields (zip64 extra field included),
/// each member's local header (signature, and what libzip compares with the central
/// entry: method, time, name, CRC and sizes), and that each member's compressed bytes
/// lie between its local header and the central directory. libzip still reads and
/// inflates the members.

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "hurray/core/result.hpp"

namespace hurray::convert::detail {

/// Reads exactly `out.size()` bytes of the archive at `offset`; an error (naming the
/// offset) when the archive cannot give them.
using ZipReadAt = std::function<Status(uint64_t offset, std::span<uint8_t> out)>;

/// Compression methods the reader accepts (NumPy writes these two).
enum class ZipMethod : uint16_t {
    kStored = 0,    ///< No compression.
    kDeflated = 8,  ///< Deflate (RFC 1951).
};

/// One member of the archive, as its central directory entry describes it, checked
/// against the file.
struct ZipEntry {
    std::string name;             ///< The name's bytes as stored (no encoding conversion).
    uint64_t central_offset = 0;  ///< Byte of its central directory header in the file.
    uint64_t local_offset = 0;    ///< Byte of its local header.
    uint64_t data_offset = 0;     ///< Byte of its first compressed byte.
    uint64_t compressed_size = 0; ///< Bytes of compressed data.
    uint64_t size = 0;            ///< Bytes once inflated.
    uint32_t crc32 = 0;           ///< CRC-32 of the inflated bytes.
    ZipMethod method = ZipMethod::kStored;  ///< How the data is compressed.
};

/// The checked directory of an archive.
struct ZipDirectory {
    uint64_t central_offset = 0;   ///< Byte where the central directory starts.
    uint64_t central_size = 0;     ///< Its size in bytes.
    bool zip64 = false;            ///< Whether a zip64 end record describes it.
    std::vector<ZipEntry> entries; ///< In central directory order (libzip's index order).
};

/// Checks the structure of the `file_size`-byte archive read through `read` and returns
/// its directory. Errors name `what` (the file), the record and field, and carry the
/// field's byte offset in the file: kTruncated (the file ends inside a record or before
/// a member's data ends), kInvalidFile (a bad signature, size, offset or count, a local
/// header that disagrees with its central entry), kUnsupported (split archives,
/// encryption, compression methods other than stored and deflated), kDuplicateName (two
/// entries with the same name). Memory is bounded by the largest entry (under 200 KiB)
/// plus the directory's own size in entries, never by a declared size.
Result<ZipDirectory> read_zip_directory(uint64_t file_size, const ZipReadAt& read,
                                        const std::string& what);

}  // namespace hurray::convert::detail
