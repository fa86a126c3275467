// SPDX-License-Identifier: Apache-2.0
// read_zip_directory: the structure of a zip archive checked field by field, every
// read bounded by the file and every sum overflow-checked, so that a bad archive is
// refused naming the field and its byte offset (libzip's own errors carry none).
#include "convert/zip_directory.hpp"

#include "hurray/core/byte_io.hpp"
#include "hurray/core/text.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

namespace hurray::convert::detail {
namespace {

constexpr uint32_t kEndSignature = 0x06054b50;            // "PK\5\6"
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;   // "PK\6\7"
constexpr uint32_t kZip64EndSignature = 0x06064b50;       // "PK\6\6"
constexpr uint32_t kCentralSignature = 0x02014b50;        // "PK\1\2"
constexpr uint32_t kLocalSignature = 0x04034b50;          // "PK\3\4"
constexpr uint64_t kEndSize = 22;
constexpr uint64_t kLocatorSize = 20;
constexpr uint64_t kZip64EndSize = 56;
constexpr uint64_t kZip64EndMinRecord = 44;  // the record's size field counts from byte 12
constexpr uint64_t kCentralSize = 46;
constexpr uint64_t kLocalSize = 30;
constexpr uint64_t kMaxComment = 65535;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint16_t kFlagEncrypted = 0x0001;
constexpr uint16_t kFlagDataDescriptor = 0x0008;
constexpr uint16_t kFlagStrongEncryption = 0x0040;
constexpr uint16_t kMax16 = 0xFFFF;
constexpr uint32_t kMax32 = 0xFFFFFFFF;
/// Bytes of the central directory read at a time.
constexpr size_t kWindow = size_t{64} * 1024;

/// Core's little-endian load of the `T` at `at` in a record; a position past the end
/// reads as zero (callers pass spans they sized for the record, so that never happens).
template <typename T>
T le(std::span<const uint8_t> b, size_t at) noexcept {
    // SAFETY: sizeof(T) bytes at `at` lie inside `b`, checked first.
    return at <= b.size() && b.size() - at >= sizeof(T) ? load_le<T>(b.data() + at) : T{0};
}
uint16_t le16(std::span<const uint8_t> b, size_t at) noexcept { return le<uint16_t>(b, at); }
uint32_t le32(std::span<const uint8_t> b, size_t at) noexcept { return le<uint32_t>(b, at); }
uint64_t le64(std::span<const uint8_t> b, size_t at) noexcept { return le<uint64_t>(b, at); }

/// A number in the archive checks' messages: "0x" and as many lower-case
/// digits as it needs ("0x4034b50").
std::string zip_hex(uint64_t v) { return "0x" + hex_digits(v, 0); }

/// A name for messages: printable ASCII kept, anything else escaped, long names cut.
std::string printable(std::string_view name) {
    constexpr size_t kMaxShown = 80;
    std::string out;
    for (size_t k = 0; k < name.size() && k < kMaxShown; ++k) {
        const auto c = static_cast<unsigned char>(name[k]);
        if (c >= 0x20 && c < 0x7F && c != '\'' && c != '\\') {
            out.push_back(static_cast<char>(c));
        } else {
            out += "\\x";
            out += hex_digits(c, 2);
        }
    }
    if (name.size() > kMaxShown) {
        out += "...";
    }
    return out;
}

/// Errors of one archive: "<file>: <where>: <message> at byte N", offset N.
class Reporter {
public:
    explicit Reporter(const std::string& file) : file_(file) {}
    [[nodiscard]] Error operator()(ErrorCode code, const std::string& where,
                                   const std::string& message, uint64_t at) const {
        std::string m = file_;
        m.append(": ").append(where).append(": ").append(message);
        m.append(" at byte ").append(std::to_string(at));
        return {code, std::move(m), at};
    }
    /// `kInvalidFile` unless `record`, read at byte `at`, begins with the
    /// signature `expected` (`pk`: its bytes as text; `note`: more for the
    /// parenthesis).
    [[nodiscard]] Status signature(std::span<const uint8_t> record, uint32_t expected, std::string_view pk,
                                   const std::string& where, uint64_t at, std::string_view note = {}) const {
        const uint32_t got = le32(record, 0);
        if (got == expected) {
            return Status::success();
        }
        std::string m = "signature " + zip_hex(got) + ", expected " + zip_hex(expected) + " (";
        m.append(pk).append(note).append(")");
        return (*this)(ErrorCode::kInvalidFile, where, m, at);
    }

private:
    const std::string& file_;
};

/// Reads the central directory through a window of kWindow bytes, never past its end.
class Window {
public:
    Window(const ZipReadAt& read, uint64_t end) : read_(read), end_(end) {}
    /// Bytes [at, at + n); the caller checked at + n <= end.
    Result<std::span<const uint8_t>> get(uint64_t at, size_t n) {
        if (at >= start_ && at - start_ <= buf_.size() && buf_.size() - (at - start_) >= n) {
            return std::span<const uint8_t>(buf_).subspan(static_cast<size_t>(at - start_), n);
        }
        const uint64_t want = std::min<uint64_t>(std::max<uint64_t>(n, kWindow), end_ - at);
        buf_.resize(static_cast<size_t>(want));
        start_ = at;
        if (auto s = read_(at, buf_); !s) {
            buf_.clear();
            return s.error();
        }
        return std::span<const uint8_t>(buf_).first(n);
    }

private:
    const ZipReadAt& read_;
    uint64_t end_;
    uint64_t start_ = 0;
    std::vector<uint8_t> buf_;
};

/// Where the end of the central directory is, and what it says.
struct EndRecords {
    uint64_t end_offset = 0;   // the (classic) end of central directory record
    uint64_t dir_end = 0;      // where the central directory must end (a zip64 record or the end)
    uint64_t entries = 0;
    uint64_t entries_at = 0;   // byte of the entry count field used
    uint64_t cd_size = 0;
    uint64_t cd_size_at = 0;
    uint64_t cd_offset = 0;
    uint64_t cd_offset_at = 0;
    bool zip64 = false;
};

/// Finds the end of central directory record: the last signature whose comment ends
/// the file.
Result<uint64_t> find_end_record(uint64_t file_size, const ZipReadAt& read, const Reporter& fail) {
    const std::string where = "end of central directory record";
    if (file_size < kEndSize) {
        std::vector<uint8_t> head(static_cast<size_t>(file_size));
        HURRAY_RETURN_IF_ERROR(read(0, head));
        const bool zipish = file_size >= 4 && le32(head, 0) == kLocalSignature;
        return fail(zipish ? ErrorCode::kTruncated : ErrorCode::kInvalidFile, where,
                    "the file is " + std::to_string(file_size) +
                        " bytes, shorter than the 22-byte record" +
                        (zipish ? " (it starts like a zip archive: truncated)" : ": not a zip archive"),
                    file_size);
    }
    const uint64_t tail_size = std::min<uint64_t>(file_size, kEndSize + kMaxComment);
    const uint64_t tail_at = file_size - tail_size;
    std::vector<uint8_t> tail(static_cast<size_t>(tail_size));
    HURRAY_RETURN_IF_ERROR(read(tail_at, tail));
    std::optional<uint64_t> last_signature;
    for (size_t pos = tail.size() - kEndSize + 1; pos-- > 0;) {
        if (le32(tail, pos) != kEndSignature) {
            continue;
        }
        const uint64_t comment = le16(tail, pos + 20);
        if (pos + kEndSize + comment == tail.size()) {
            return tail_at + pos;
        }
        if (!last_signature) {
            last_signature = tail_at + pos;
        }
    }
    if (last_signature) {
        const uint64_t at = *last_signature;
        const uint64_t comment = le16(tail, static_cast<size_t>(at - tail_at + 20));
        const uint64_t ends = at + kEndSize + comment;
        return fail(ends > file_size ? ErrorCode::kTruncated : ErrorCode::kInvalidFile, where,
                    "comment length " + std::to_string(comment) + " makes the record end at byte " +
                        std::to_string(ends) + ", but the file ends at byte " +
                        std::to_string(file_size),
                    at + 20);
    }
    std::array<uint8_t, 4> head{};
    HURRAY_RETURN_IF_ERROR(read(0, head));
    if (le32(head, 0) == kLocalSignature) {
        return fail(ErrorCode::kTruncated, where,
                    "not found in the last " + std::to_string(tail_size) +
                        " bytes of a file that starts like a zip archive (truncated?); "
                        "the file ends",
                    file_size);
    }
    return fail(ErrorCode::kInvalidFile, where,
                "no signature PK\\x05\\x06 in the last " + std::to_string(tail_size) +
                    " bytes (not a zip archive), searched from",
                tail_at);
}

/// The zip64 locator and end record before the end record at `e`.
Status read_zip64(uint64_t e, const ZipReadAt& read, const Reporter& fail, EndRecords& out) {
    const std::string lwhere = "zip64 end of central directory locator";
    const uint64_t l = e - kLocatorSize;
    std::array<uint8_t, kLocatorSize> loc{};
    HURRAY_RETURN_IF_ERROR(read(l, loc));
    if (le32(loc, 4) != 0) {
        return fail(ErrorCode::kUnsupported, lwhere,
                    "the zip64 end record is on disk " + std::to_string(le32(loc, 4)) +
                        " (split archives are not read)",
                    l + 4);
    }
    if (le32(loc, 16) > 1) {
        return fail(ErrorCode::kUnsupported, lwhere,
                    "the archive has " + std::to_string(le32(loc, 16)) +
                        " disks (split archives are not read)",
                    l + 16);
    }
    const uint64_t z = le64(loc, 8);
    if (z > l || l - z < kZip64EndSize) {
        return fail(ErrorCode::kInvalidFile, lwhere,
                    "zip64 end record offset " + std::to_string(z) +
                        ": its 56 bytes do not fit before the locator at byte " + std::to_string(l),
                    l + 8);
    }
    const std::string zwhere = "zip64 end of central directory record";
    std::array<uint8_t, kZip64EndSize> rec{};
    HURRAY_RETURN_IF_ERROR(read(z, rec));
    HURRAY_RETURN_IF_ERROR(fail.signature(rec, kZip64EndSignature, "PK\\x06\\x06", zwhere, z,
                                          "; the locator at byte " + std::to_string(l) + " points here"));
    const uint64_t record = le64(rec, 4);
    if (record < kZip64EndMinRecord || record > l - z - 12) {
        return fail(ErrorCode::kInvalidFile, zwhere,
                    "record size " + std::to_string(record) + " (at least 44, and ending by byte " +
                        std::to_string(l) + " where the locator starts)",
                    z + 4);
    }
    if (le32(rec, 16) != 0 || le32(rec, 20) != 0) {
        const size_t f = le32(rec, 16) != 0 ? 16 : 20;
        return fail(ErrorCode::kUnsupported, zwhere,
                    "disk number " + std::to_string(le32(rec, f)) +
                        " (split archives are not read)",
                    z + f);
    }
    if (le64(rec, 24) != le64(rec, 32)) {
        return fail(ErrorCode::kUnsupported, zwhere,
                    std::to_string(le64(rec, 24)) + " entries on this disk of " +
                        std::to_string(le64(rec, 32)) + " (split archives are not read)",
                    z + 24);
    }
    out.zip64 = true;
    out.dir_end = z;
    out.entries = le64(rec, 32);
    out.entries_at = z + 32;
    out.cd_size = le64(rec, 40);
    out.cd_size_at = z + 40;
    out.cd_offset = le64(rec, 48);
    out.cd_offset_at = z + 48;
    return {};
}

Result<EndRecords> read_end_records(uint64_t file_size, const ZipReadAt& read,
                                    const Reporter& fail) {
    HURRAY_ASSIGN_OR_RETURN(const uint64_t e, find_end_record(file_size, read, fail));
    std::array<uint8_t, kEndSize> eocd{};
    HURRAY_RETURN_IF_ERROR(read(e, eocd));
    EndRecords out;
    out.end_offset = e;
    out.dir_end = e;
    const uint16_t disk = le16(eocd, 4);
    const uint16_t cd_disk = le16(eocd, 6);
    const uint16_t here = le16(eocd, 8);
    const uint16_t total = le16(eocd, 10);
    const uint32_t size = le32(eocd, 12);
    const uint32_t offset = le32(eocd, 16);
    const bool needs64 = disk == kMax16 || cd_disk == kMax16 || here == kMax16 ||
                         total == kMax16 || size == kMax32 || offset == kMax32;
    std::array<uint8_t, 4> sig{};
    bool has_locator = false;
    if (e >= kLocatorSize) {
        HURRAY_RETURN_IF_ERROR(read(e - kLocatorSize, sig));
        has_locator = le32(sig, 0) == kZip64LocatorSignature;
    }
    const std::string where = "end of central directory record";
    if (needs64 && !has_locator) {
        return fail(ErrorCode::kInvalidFile, where,
                    "its fields hold zip64 markers (0xFFFF / 0xFFFFFFFF) but no zip64 locator "
                    "(PK\\x06\\x07) precedes it, where it should start",
                    e >= kLocatorSize ? e - kLocatorSize : 0);
    }
    if (has_locator) {
        HURRAY_RETURN_IF_ERROR(read_zip64(e, read, fail, out));
        // The classic fields either defer to the zip64 record or agree with it.
        const std::array<std::pair<uint64_t, std::pair<uint64_t, uint64_t>>, 3> pairs = {{
            {10, {total, out.entries}},
            {12, {size, out.cd_size}},
            {16, {offset, out.cd_offset}},
        }};
        for (const auto& [field, values] : pairs) {
            const uint64_t marker = field == 10 ? kMax16 : kMax32;
            if (values.first != marker && values.first != values.second) {
                return fail(ErrorCode::kInvalidFile, where,
                            std::string(field == 10   ? "entry count "
                                        : field == 12 ? "central directory size "
                                                      : "central directory offset ") +
                                std::to_string(values.first) +
                                " disagrees with the zip64 end record's " +
                                std::to_string(values.second),
                            e + field);
            }
        }
        return out;
    }
    if (disk != 0 || cd_disk != 0) {
        return fail(ErrorCode::kUnsupported, where,
                    "disk number " + std::to_string(disk != 0 ? disk : cd_disk) +
                        " (split archives are not read)",
                    e + (disk != 0 ? 4 : 6));
    }
    if (here != total) {
        return fail(ErrorCode::kUnsupported, where,
                    std::to_string(here) + " entries on this disk of " + std::to_string(total) +
                        " (split archives are not read)",
                    e + 8);
    }
    out.entries = total;
    out.entries_at = e + 10;
    out.cd_size = size;
    out.cd_size_at = e + 12;
    out.cd_offset = offset;
    out.cd_offset_at = e + 16;
    return out;
}

/// The values a zip64 extended information extra field supplies.
struct Zip64Values {
    uint64_t size = 0;
    uint64_t compressed = 0;
    uint64_t local_offset = 0;
    uint64_t size_at = 0;
    uint64_t compressed_at = 0;
    uint64_t local_offset_at = 0;
};

/// Walks the extra fields `extra` (at byte `base` of the file); finds the zip64 field.
/// Trailing bytes too few for a field header must be zeros (alignment padding), as
/// libzip requires.
Result<std::optional<std::pair<std::span<const uint8_t>, uint64_t>>> find_zip64_extra(
    std::span<const uint8_t> extra, uint64_t base, const std::string& where,
    const Reporter& fail) {
    std::optional<std::pair<std::span<const uint8_t>, uint64_t>> found;
    size_t pos = 0;
    while (extra.size() - pos >= 4) {
        const uint16_t id = le16(extra, pos);
        const uint16_t len = le16(extra, pos + 2);
        if (len > extra.size() - pos - 4) {
            return fail(ErrorCode::kInvalidFile, where,
                        "extra field " + zip_hex(id) + ": length " + std::to_string(len) +
                            " runs past the extra fields' end at byte " +
                            std::to_string(base + extra.size()),
                        base + pos + 2);
        }
        if (id == kZip64ExtraId && !found) {
            found.emplace(extra.subspan(pos + 4, len), base + pos + 4);
        }
        pos += 4 + size_t{len};
    }
    for (size_t k = pos; k < extra.size(); ++k) {
        if (extra[k] != 0) {
            return fail(ErrorCode::kInvalidFile, where,
                        "extra fields: " + std::to_string(extra.size() - pos) +
                            " trailing bytes that are not zero padding",
                        base + k);
        }
    }
    return found;
}

/// Takes the next 8 bytes of a zip64 extra field for `field`.
Result<uint64_t> take64(std::span<const uint8_t> z64, uint64_t z64_at, size_t& pos,
                        const std::string& field, const std::string& where,
                        const Reporter& fail) {
    if (z64.size() - pos < 8) {
        return fail(ErrorCode::kInvalidFile, where,
                    "zip64 extra field (" + std::to_string(z64.size()) +
                        " bytes) lacks the 8-byte " + field +
                        " that the 0xFFFFFFFF marker defers to it",
                    z64_at + pos);
    }
    const uint64_t v = le64(z64, pos);
    pos += 8;
    return v;
}

/// libzip reads a zip64 extra field only where a marker defers to it, and then
/// requires it to hold exactly the values read.
Status check_zip64_used(std::span<const uint8_t> z64, uint64_t z64_at, size_t used,
                        const std::string& where, const Reporter& fail) {
    if (used != z64.size()) {
        return fail(ErrorCode::kInvalidFile, where,
                    "zip64 extra field: " + std::to_string(z64.size()) + " bytes, but the 0xFFFFFFFF "
                    "markers defer " + std::to_string(used) + " bytes of values to it",
                    z64_at + used);
    }
    return {};
}

/// Checks the local header of `entry` (whose central header is `c`) and fills
/// entry.data_offset.
Status check_local(uint64_t file_size, const ZipReadAt& read, const Reporter& fail,
                   const EndRecords& end, std::span<const uint8_t> c, const std::string& where, ZipEntry& entry, uint64_t local_offset_at,
                   uint64_t compressed_at) {
    const uint64_t l = entry.local_offset;
    if (l > end.cd_offset || end.cd_offset - l < kLocalSize) {
        std::string why = "local header offset " + std::to_string(l);
        why += l >= file_size ? " is past the end of the file (" + std::to_string(file_size) +
                                    " bytes)"
                              : ": its 30-byte header would run into the central directory "
                                "at byte " +
                                    std::to_string(end.cd_offset);
        return fail(ErrorCode::kInvalidFile, where, why, local_offset_at);
    }
    const std::string lwhere = where + ": local header at byte " + std::to_string(l);
    std::array<uint8_t, kLocalSize> h{};
    HURRAY_RETURN_IF_ERROR(read(l, h));
    HURRAY_RETURN_IF_ERROR(fail.signature(h, kLocalSignature, "PK\\x03\\x04", lwhere, l));
    const uint64_t name_len = le16(h, 26);
    const uint64_t extra_len = le16(h, 28);
    if (end.cd_offset - l - kLocalSize < name_len + extra_len) {
        return fail(ErrorCode::kInvalidFile, lwhere,
                    "name and extra field lengths " + std::to_string(name_len) + " + " +
                        std::to_string(extra_len) +
                        " run into the central directory at byte " + std::to_string(end.cd_offset),
                    l + 26);
    }
    std::vector<uint8_t> var(static_cast<size_t>(name_len + extra_len));
    HURRAY_RETURN_IF_ERROR(read(l + kLocalSize, var));
    // SAFETY: var holds name_len + extra_len bytes; the view covers its first name_len.
    const std::string_view local_name(reinterpret_cast<const char*>(var.data()),  // NOLINT
                                      static_cast<size_t>(name_len));
    if (local_name != entry.name) {
        return fail(ErrorCode::kInvalidFile, lwhere,
                    "name '" + printable(local_name) + "' differs from the central directory's",
                    l + kLocalSize);
    }
    // What libzip compares between the two headers (so that it agrees afterwards).
    if (le16(h, 4) > le16(c, 6)) {
        return fail(ErrorCode::kInvalidFile, lwhere,
                    "version needed " + std::to_string(le16(h, 4)) +
                        " exceeds the central directory's " + std::to_string(le16(c, 6)),
                    l + 4);
    }
    if (le16(h, 8) != le16(c, 10)) {
        return fail(ErrorCode::kInvalidFile, lwhere,
                    "compression method " + std::to_string(le16(h, 8)) +
                        " differs from the central directory's " + std::to_string(le16(c, 10)),
                    l + 8);
    }
    if (le32(h, 10) != le32(c, 12)) {
        return fail(ErrorCode::kInvalidFile, lwhere,
                    "modification time " + zip_hex(le32(h, 10)) + " differs from the central directory's " +
                        zip_hex(le32(c, 12)),
                    l + 10);
    }
    uint64_t local_size = le32(h, 22);
    uint64_t local_compressed = le32(h, 18);
    uint64_t local_size_at = l + 22;
    uint64_t local_compressed_at = l + 18;
    // Every extra field inside the extra area (libzip parses them all).
    const auto extra = std::span<const uint8_t>(var).subspan(static_cast<size_t>(name_len));
    HURRAY_ASSIGN_OR_RETURN(auto z64,
                            find_zip64_extra(extra, l + kLocalSize + name_len, lwhere, fail));
    if (local_size == kMax32 || local_compressed == kMax32) {
        if (!z64) {
            return fail(ErrorCode::kInvalidFile, lwhere,
                        "sizes hold the zip64 marker 0xFFFFFFFF but there is no zip64 extra field",
                        l + 18);
        }
        size_t pos = 0;
        // The local zip64 field holds both sizes (APPNOTE 4.5.3), the size first.
        local_size_at = z64->second;
        HURRAY_ASSIGN_OR_RETURN(const uint64_t s,
                                take64(z64->first, z64->second, pos, "size", lwhere, fail));
        if (local_size == kMax32) {
            local_size = s;
        }
        if (local_compressed == kMax32) {
            local_compressed_at = z64->second + pos;
            HURRAY_ASSIGN_OR_RETURN(local_compressed, take64(z64->first, z64->second, pos,
                                                             "compressed size", lwhere, fail));
        }
        HURRAY_RETURN_IF_ERROR(check_zip64_used(z64->first, z64->second, pos, lwhere, fail));
    }
    const uint16_t local_flags = le16(h, 6);
    const bool descriptor_zeros = (local_flags & kFlagDataDescriptor) != 0 && le32(h, 14) == 0 &&
                                  local_compressed == 0 && local_size == 0;
    if (!descriptor_zeros) {
        if (le32(h, 14) != entry.crc32) {
            return fail(ErrorCode::kInvalidFile, lwhere,
                        "CRC-32 " + zip_hex(le32(h, 14)) + " differs from the central directory's " +
                            zip_hex(entry.crc32),
                        l + 14);
        }
        if (local_compressed != entry.compressed_size) {
            return fail(ErrorCode::kInvalidFile, lwhere,
                        "compressed size " + std::to_string(local_compressed) +
                            " differs from the central directory's " +
                            std::to_string(entry.compressed_size),
                        local_compressed_at);
        }
        if (local_size != entry.size) {
            return fail(ErrorCode::kInvalidFile, lwhere,
                        "size " + std::to_string(local_size) +
                            " differs from the central directory's " + std::to_string(entry.size),
                        local_size_at);
        }
    }
    entry.data_offset = l + kLocalSize + name_len + extra_len;
    if (entry.compressed_size > end.cd_offset - entry.data_offset) {
        return fail(ErrorCode::kInvalidFile, where,
                    "compressed size " + std::to_string(entry.compressed_size) + " from byte " +
                        std::to_string(entry.data_offset) +
                        " runs past the start of the central directory at byte " +
                        std::to_string(end.cd_offset),
                    compressed_at);
    }
    return {};
}

}  // namespace

Result<ZipDirectory> read_zip_directory(uint64_t file_size, const ZipReadAt& read,
                                        const std::string& what) {
    const Reporter fail(what);
    HURRAY_ASSIGN_OR_RETURN(const EndRecords end, read_end_records(file_size, read, fail));
    const std::string dwhere = "central directory";
    if (end.cd_offset > end.dir_end) {
        return fail(ErrorCode::kInvalidFile, dwhere,
                    "offset " + std::to_string(end.cd_offset) +
                        " is past the end record that describes it at byte " +
                        std::to_string(end.dir_end),
                    end.cd_offset_at);
    }
    if (end.cd_size != end.dir_end - end.cd_offset) {
        return fail(ErrorCode::kInvalidFile, dwhere,
                    "size " + std::to_string(end.cd_size) + " from offset " +
                        std::to_string(end.cd_offset) +
                        " does not end where the end record starts, at byte " +
                        std::to_string(end.dir_end),
                    end.cd_size_at);
    }
    if (end.entries > end.cd_size / kCentralSize) {
        return fail(ErrorCode::kInvalidFile, dwhere,
                    "entry count " + std::to_string(end.entries) + " cannot fit in its " +
                        std::to_string(end.cd_size) + " bytes (46 bytes per entry at least)",
                    end.entries_at);
    }
    ZipDirectory dir;
    dir.central_offset = end.cd_offset;
    dir.central_size = end.cd_size;
    dir.zip64 = end.zip64;
    dir.entries.reserve(static_cast<size_t>(end.entries));  // bounded by cd_size / 46 above
    Window window(read, end.dir_end);
    std::map<std::string, uint64_t> names;
    uint64_t pos = end.cd_offset;
    for (uint64_t k = 0; k < end.entries; ++k) {
        std::string where = "central directory entry " + std::to_string(k);
        if (end.dir_end - pos < kCentralSize) {
            return fail(ErrorCode::kInvalidFile, where,
                        "its 46-byte header runs past the directory's end at byte " +
                            std::to_string(end.dir_end),
                        pos);
        }
        HURRAY_ASSIGN_OR_RETURN(auto fixed, window.get(pos, kCentralSize));
        const std::array<uint8_t, kCentralSize> c = [&] {
            std::array<uint8_t, kCentralSize> a{};
            std::copy(fixed.begin(), fixed.end(), a.begin());
            return a;
        }();
        HURRAY_RETURN_IF_ERROR(fail.signature(c, kCentralSignature, "PK\\x01\\x02", where, pos));
        const uint64_t name_len = le16(c, 28);
        const uint64_t extra_len = le16(c, 30);
        const uint64_t comment_len = le16(c, 32);
        const uint64_t var_len = name_len + extra_len + comment_len;
        if (end.dir_end - pos - kCentralSize < var_len) {
            return fail(ErrorCode::kInvalidFile, where,
                        "name, extra field and comment lengths " + std::to_string(name_len) +
                            " + " + std::to_string(extra_len) + " + " +
                            std::to_string(comment_len) + " run past the directory's end at byte " +
                            std::to_string(end.dir_end),
                        pos + 28);
        }
        HURRAY_ASSIGN_OR_RETURN(auto var,
                                window.get(pos + kCentralSize, static_cast<size_t>(var_len)));
        ZipEntry entry;
        entry.central_offset = pos;
        // SAFETY: var is the window's var_len >= name_len bytes; the copy takes name_len.
        entry.name.assign(reinterpret_cast<const char*>(var.data()),  // NOLINT
                          static_cast<size_t>(name_len));
        where += " ('" + printable(entry.name) + "')";
        if (entry.name.empty()) {
            return fail(ErrorCode::kInvalidFile, where, "empty name", pos + 28);
        }
        if (const auto nul = entry.name.find('\0'); nul != std::string::npos) {
            return fail(ErrorCode::kInvalidFile, where, "name holds a NUL byte",
                        pos + kCentralSize + nul);
        }
        const uint16_t flags = le16(c, 8);
        if ((flags & (kFlagEncrypted | kFlagStrongEncryption)) != 0) {
            return fail(ErrorCode::kUnsupported, where,
                        "flags " + zip_hex(flags) + ": encrypted members are not read", pos + 8);
        }
        const uint16_t method = le16(c, 10);
        if (method != static_cast<uint16_t>(ZipMethod::kStored) &&
            method != static_cast<uint16_t>(ZipMethod::kDeflated)) {
            return fail(ErrorCode::kUnsupported, where,
                        "compression method " + std::to_string(method) +
                            " (only 0, stored, and 8, deflated, are read: what NumPy writes)",
                        pos + 10);
        }
        entry.method = static_cast<ZipMethod>(method);
        entry.crc32 = le32(c, 16);
        entry.compressed_size = le32(c, 20);
        entry.size = le32(c, 24);
        entry.local_offset = le32(c, 42);
        uint64_t compressed_at = pos + 20;
        uint64_t local_offset_at = pos + 42;
        uint64_t disk = le16(c, 34);
        uint64_t disk_at = pos + 34;
        const auto extra = var.subspan(static_cast<size_t>(name_len), static_cast<size_t>(extra_len));
        const uint64_t extra_at = pos + kCentralSize + name_len;
        HURRAY_ASSIGN_OR_RETURN(auto z64, find_zip64_extra(extra, extra_at, where, fail));
        if (entry.size == kMax32 || entry.compressed_size == kMax32 ||
            entry.local_offset == kMax32 || disk == kMax16) {
            if (!z64) {
                return fail(ErrorCode::kInvalidFile, where,
                            "a field holds the zip64 marker 0xFFFFFFFF but there is no zip64 "
                            "extra field",
                            entry.size == kMax32              ? pos + 24
                            : entry.compressed_size == kMax32 ? pos + 20
                            : entry.local_offset == kMax32    ? pos + 42
                                                              : pos + 34);
            }
            size_t zpos = 0;
            if (entry.size == kMax32) {
                HURRAY_ASSIGN_OR_RETURN(entry.size,
                                        take64(z64->first, z64->second, zpos, "size", where, fail));
            }
            if (entry.compressed_size == kMax32) {
                compressed_at = z64->second + zpos;
                HURRAY_ASSIGN_OR_RETURN(entry.compressed_size,
                                        take64(z64->first, z64->second, zpos, "compressed size",
                                               where, fail));
            }
            if (entry.local_offset == kMax32) {
                local_offset_at = z64->second + zpos;
                HURRAY_ASSIGN_OR_RETURN(entry.local_offset,
                                        take64(z64->first, z64->second, zpos,
                                               "local header offset", where, fail));
            }
            if (disk == kMax16) {
                disk_at = z64->second + zpos;
                if (z64->first.size() - zpos < 4) {
                    return fail(ErrorCode::kInvalidFile, where,
                                "zip64 extra field lacks the 4-byte disk number that the 0xFFFF "
                                "marker defers to it",
                                disk_at);
                }
                disk = le32(z64->first, zpos);
                zpos += 4;
            }
            HURRAY_RETURN_IF_ERROR(check_zip64_used(z64->first, z64->second, zpos, where, fail));
        }
        if (disk != 0) {
            return fail(ErrorCode::kUnsupported, where,
                        "starts on disk " + std::to_string(disk) + " (split archives are not read)",
                        disk_at);
        }
        if (entry.method == ZipMethod::kStored && entry.compressed_size != entry.size) {
            return fail(ErrorCode::kInvalidFile, where,
                        "stored (not compressed), yet its compressed size " +
                            std::to_string(entry.compressed_size) + " differs from its size " +
                            std::to_string(entry.size),
                        compressed_at);
        }
        if (const auto [it, fresh] = names.emplace(entry.name, k); !fresh) {
            return fail(ErrorCode::kDuplicateName, where,
                        "the name of entry " + std::to_string(it->second) + " again",
                        pos + kCentralSize);
        }
        HURRAY_RETURN_IF_ERROR(check_local(file_size, read, fail, end, c, where, entry,
                                           local_offset_at, compressed_at));
        dir.entries.push_back(std::move(entry));
        pos += kCentralSize + var_len;
    }
    if (pos != end.dir_end) {
        return fail(ErrorCode::kInvalidFile, dwhere,
                    "its " + std::to_string(end.entries) + " entries end at byte " +
                        std::to_string(pos) + ", but the directory runs to byte " +
                        std::to_string(end.dir_end),
                    pos);
    }
    return dir;
}

}  // namespace hurray::convert::detail
