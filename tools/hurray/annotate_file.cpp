// Annotated walk of the HRRYFILE container's own structures (docs/spec/file-format.md):
// header, trailer, index and KV section.
#include <cstring>

#include "hurray/annotate_walker.hpp"
#include "hurray/io/file_format.hpp"
#include "hurray/io/kv_metadata.hpp"

namespace hurray::cli {
namespace {

using detail::hexnum;
using detail::idx;
using detail::tagged;
using detail::ValueText;
using detail::Walker;


std::string file_flags_text(uint64_t flags) {
    static constexpr const char* kNames[] = {"has_kv_metadata", "sorted_index", "has_index_crc32c"};
    return detail::flags_text(flags, kNames);
}

std::string kv_tag_text(uint64_t tag) {
    std::string_view n = kv_type_name(static_cast<uint8_t>(tag));
    if (n.empty()) {
        n = (tag >= 0xF0 && tag <= 0xFE) ? "private" : "reserved";
    }
    return tagged(n, tag);
}

// One scalar KV payload of type `tag` (1..6).
Status kv_scalar(Walker& w, uint64_t tag, const std::string& p) {
    switch (tag) {
        case 0x01:
        case 0x06: {
            HURRAY_ASSIGN_OR_RETURN(uint64_t len, w.u32(p + ".length"));
            HURRAY_ASSIGN_OR_RETURN(auto raw, w.raw(len, p + (tag == 0x01 ? ".string" : ".bytes")));
            if (tag == 0x01 && len > 0) {
                w.last().value = detail::quoted(raw);
            }
            return Status::success();
        }
        case 0x02: return detail::status_of(w.sint(8, p + ".int64"));
        case 0x03: return detail::status_of(w.u64(p + ".uint64"));
        case 0x04: return detail::status_of(w.real(8, p + ".float64"));
        case 0x05:
            return detail::status_of(w.u8(p + ".bool", [](uint64_t v) {
                        return v == 0 ? std::string("false") : v == 1 ? std::string("true") : "invalid " + hexnum(v, 2);
                    })
                );
        default: break;
    }
    return Error(ErrorCode::kInvalidFile, p + ": value tag " + hexnum(tag, 2) + " has no known payload", w.abs_pos());
}

}  // namespace

Status annotate_file_header(std::span<const uint8_t> bytes, std::vector<Row>& rows) {
    Walker w(bytes, 0, rows, ErrorCode::kTruncated, "the input");
    HURRAY_ASSIGN_OR_RETURN(auto magic, w.raw(8, "magic", "\"HRRYFILE\""));
    if (std::memcmp(magic.data(), kFileMagic.data(), kFileMagic.size()) != 0) {
        w.last().value = "not \"HRRYFILE\"";
        return Error(ErrorCode::kInvalidMagic, "magic: expected \"HRRYFILE\"", 0);
    }
    HURRAY_RETURN_IF_ERROR(w.u8("container_version_major"));
    HURRAY_RETURN_IF_ERROR(w.u8("container_version_minor"));
    HURRAY_RETURN_IF_ERROR(w.reserved(2, "_reserved"));
    HURRAY_RETURN_IF_ERROR(w.u32("file_flags", file_flags_text));
    HURRAY_RETURN_IF_ERROR(w.u32("data_buffer_alignment"));
    HURRAY_RETURN_IF_ERROR(w.u64("first_descriptor_offset"));
    HURRAY_RETURN_IF_ERROR(w.u64("tensor_count_hint", [](uint64_t v) {
        return v == kUnknownTensorCount ? std::string("unknown (0xffffffffffffffff)") : std::to_string(v);
    }));
    return detail::status_of(w.reserved(28, "_reserved_header"));
}

Status annotate_file_trailer(std::span<const uint8_t> bytes, uint64_t base, std::vector<Row>& rows) {
    Walker w(bytes, base, rows, ErrorCode::kTruncated, "the trailer");
    HURRAY_RETURN_IF_ERROR(w.u64("index_offset"));
    HURRAY_RETURN_IF_ERROR(w.u64("index_length"));
    HURRAY_RETURN_IF_ERROR(w.u64("kv_offset"));
    HURRAY_RETURN_IF_ERROR(w.u32("kv_length"));
    HURRAY_RETURN_IF_ERROR(w.u32("index_crc32c", [](uint64_t v) { return hexnum(v, 8); }));
    HURRAY_RETURN_IF_ERROR(w.reserved(4, "_reserved"));
    HURRAY_ASSIGN_OR_RETURN(auto magic, w.raw(4, "trailer_magic", "\"HRRY\""));
    if (std::memcmp(magic.data(), kTrailerMagic.data(), kTrailerMagic.size()) != 0) {
        w.last().value = "not \"HRRY\"";
        return Error(ErrorCode::kInvalidMagic, "trailer_magic: expected \"HRRY\"", base + 36);
    }
    return Status::success();
}

Status annotate_file_index(std::span<const uint8_t> bytes, uint64_t base, std::vector<Row>& rows) {
    Walker w(bytes, base, rows, ErrorCode::kInvalidFile, "the index (index_length " + std::to_string(bytes.size()) + ")");
    HURRAY_ASSIGN_OR_RETURN(uint64_t count, w.u64("entry_count"));
    for (uint64_t i = 0; i < count; ++i) {
        const std::string p = idx("entry", i) + ".";
        HURRAY_ASSIGN_OR_RETURN(uint64_t len, w.u16(p + "name_length"));
        HURRAY_ASSIGN_OR_RETURN(auto name, w.raw(len, p + "name"));
        if (len > 0) {
            w.last().value = detail::quoted(name);
        }
        HURRAY_RETURN_IF_ERROR(w.u64(p + "descriptor_offset"));
        HURRAY_RETURN_IF_ERROR(w.u32(p + "descriptor_length"));
        HURRAY_RETURN_IF_ERROR(w.u64(p + "data_offset"));
        HURRAY_RETURN_IF_ERROR(w.u64(p + "data_length"));
        HURRAY_RETURN_IF_ERROR(w.u32(p + "flags", [](uint64_t v) { return hexnum(v, 8); }));
    }
    if (w.remaining() > 0) {
        const uint64_t n = w.remaining();
        HURRAY_RETURN_IF_ERROR(w.raw(n, "trailing_bytes"));
        return Error(ErrorCode::kInvalidFile,
                     "index: " + std::to_string(n) + " bytes after the last entry, inside index_length", w.abs_pos() - n);
    }
    return Status::success();
}

Status annotate_file_kv(std::span<const uint8_t> bytes, uint64_t base, std::vector<Row>& rows) {
    Walker w(bytes, base, rows, ErrorCode::kInvalidFile, "the KV section (kv_length " + std::to_string(bytes.size()) + ")");
    HURRAY_ASSIGN_OR_RETURN(uint64_t count, w.u32("kv_count"));
    for (uint64_t i = 0; i < count; ++i) {
        const std::string p = idx("kv", i);
        HURRAY_ASSIGN_OR_RETURN(uint64_t len, w.u16(p + ".key_length"));
        HURRAY_ASSIGN_OR_RETURN(auto key, w.raw(len, p + ".key"));
        if (len > 0) {
            w.last().value = detail::quoted(key);
        }
        HURRAY_ASSIGN_OR_RETURN(uint64_t tag, w.u8(p + ".value_tag", kv_tag_text));
        if (tag == 0x07) {
            HURRAY_ASSIGN_OR_RETURN(uint64_t etag, w.u8(p + ".element_tag", kv_tag_text));
            HURRAY_ASSIGN_OR_RETURN(uint64_t n, w.u32(p + ".count"));
            for (uint64_t k = 0; k < n; ++k) {
                HURRAY_RETURN_IF_ERROR(kv_scalar(w, etag, idx(p, k)));
            }
        } else {
            HURRAY_RETURN_IF_ERROR(kv_scalar(w, tag, p));
        }
    }
    if (w.remaining() > 0) {
        const uint64_t n = w.remaining();
        HURRAY_RETURN_IF_ERROR(w.raw(n, "trailing_bytes"));
        return Error(ErrorCode::kInvalidFile,
                     "KV section: " + std::to_string(n) + " bytes after the last entry, inside kv_length",
                     w.abs_pos() - n);
    }
    return Status::success();
}

}  // namespace hurray::cli
