// Annotated walk of a tensor descriptor (docs/spec/metadata.md), field by field.
#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>

#include "hurray/core/describe.hpp"
#include "hurray/annotate_walker.hpp"
#include "hurray/core/buffer_handle.hpp"
#include "hurray/core/text.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/element_type.hpp"
#include "hurray/core/layout.hpp"
#include "hurray/core/quantization.hpp"
#include "hurray/io/file_format.hpp"

namespace hurray::cli {
namespace detail {

std::string hexnum(uint64_t v, int digits) { return "0x" + hex_digits(v, digits); }

std::string tagged(std::string_view name, uint64_t tag, int digits) {
    if (name.empty()) {
        return hexnum(tag, digits);
    }
    return std::string(name) + " (" + hexnum(tag, digits) + ")";
}

std::string shortest(double v) {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

std::string shortest(float v) {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

std::string idx(const std::string& name, uint64_t i) { return name + "[" + std::to_string(i) + "]"; }

std::string flags_text(uint64_t flags, std::span<const char* const> names) {
    std::string set;
    for (unsigned bit = 0; bit < 32; ++bit) {
        if ((flags & (uint64_t{1} << bit)) == 0) {
            continue;
        }
        if (!set.empty()) {
            set += ", ";
        }
        set += bit < names.size() ? std::string(names[bit]) : "reserved bit " + std::to_string(bit);
    }
    return hexnum(flags, 8) + (set.empty() ? "" : " (" + set + ")");
}

std::string quoted(std::span<const uint8_t> bytes) {
    std::string s = "\"";
    const std::string text(bytes.begin(), bytes.end());
    const bool utf8 = is_valid_utf8(text);
    for (uint8_t c : bytes) {
        if (c == '"' || c == '\\') {
            s += '\\';
            s += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7F || (c >= 0x80 && !utf8)) {
            s += "\\x" + hexnum(c, 2).substr(2);
        } else {
            s += static_cast<char>(c);  // printable ASCII and UTF-8 sequences as they are
        }
    }
    return s + "\"";
}

// sint and real read the bits as uint does (the row's `number`), then show them as their type.
Result<int64_t> Walker::sint(unsigned width, const std::string& field) {
    HURRAY_ASSIGN_OR_RETURN(uint64_t v, uint(width, field));
    int64_t s = 0;
    if (width == 4) {
        s = static_cast<int32_t>(static_cast<uint32_t>(v));
    } else {
        s = static_cast<int64_t>(v);
    }
    last().value = std::to_string(s);
    return s;
}

Result<double> Walker::real(unsigned width, const std::string& field) {
    HURRAY_ASSIGN_OR_RETURN(uint64_t v, uint(width, field));
    double d = 0;
    if (width == 4) {
        const float f = std::bit_cast<float>(static_cast<uint32_t>(v));
        d = f;
        last().value = shortest(f);
    } else {
        d = std::bit_cast<double>(v);
        last().value = shortest(d);
    }
    return d;
}

Result<std::span<const uint8_t>> Walker::raw(uint64_t n, const std::string& field, std::string text) {
    HURRAY_ASSIGN_OR_RETURN(auto bytes, take(n, field));
    if (n == 0) {
        return bytes;  // an empty field has no bytes to show: no row
    }
    Row& row = push(bytes, field);
    row.value = text.empty() ? std::to_string(n) + (n == 1 ? " byte" : " bytes") : std::move(text);
    return bytes;
}

Result<std::span<const uint8_t>> Walker::reserved(uint64_t n, const std::string& field) {
    HURRAY_ASSIGN_OR_RETURN(auto bytes, take(n, field));
    bool zero = true;
    for (uint8_t b : bytes) {
        zero = zero && b == 0;
    }
    Row& row = push(bytes, field);
    row.value = zero ? "zero" : "NOT ZERO";
    return bytes;
}

}  // namespace detail

namespace {

using detail::hexnum;
using detail::idx;
using detail::tagged;
using detail::ValueText;
using detail::Walker;


std::string type_tag_text(uint64_t tag) {
    const auto t = static_cast<ElementType>(tag);
    std::string_view name = type_name(t);
    if (name.empty()) {
        name = (tag >= 0xF0 && tag <= 0xFE) ? "private" : "unassigned";
    }
    return tagged(name, tag);
}

std::string layout_tag_text(uint64_t tag) {
    std::string_view name = layout_name(static_cast<uint8_t>(tag));
    if (name.empty()) {
        name = (tag >= 0xF0 && tag <= 0xFE) ? "extension" : "unassigned";
    }
    return tagged(name, tag);
}

std::string flags_text(uint64_t flags) {
    static constexpr const char* kNames[] = {"quantization", "shard", "extension_type", "statistics",
                                             "composite_member"};
    return detail::flags_text(flags, kNames);
}

const ValueText kType = type_tag_text;
const ValueText kLayout = layout_tag_text;
const ValueText kHex8 = [](uint64_t v) { return hexnum(v, 2); };
const ValueText kBool = [](uint64_t v) {
    return v == 0 ? std::string("false") : v == 1 ? std::string("true") : "invalid " + hexnum(v, 2);
};

Status array_u64(Walker& w, uint64_t n, const std::string& name) {
    for (uint64_t i = 0; i < n; ++i) {
        HURRAY_RETURN_IF_ERROR(w.u64(idx(name, i)));
    }
    return Status::success();
}

Status array_i64(Walker& w, uint64_t n, const std::string& name) {
    for (uint64_t i = 0; i < n; ++i) {
        HURRAY_RETURN_IF_ERROR(w.sint(8, idx(name, i)));
    }
    return Status::success();
}

Status array_u32(Walker& w, uint64_t n, const std::string& name) {
    for (uint64_t i = 0; i < n; ++i) {
        HURRAY_RETURN_IF_ERROR(w.u32(idx(name, i)));
    }
    return Status::success();
}

constexpr uint64_t kMaxTiledLevels = 64;

Status tiled_fields(Walker& w, uint64_t rank) {
    for (uint64_t level = 0; level < kMaxTiledLevels; ++level) {
        const std::string p = "tiled.level[" + std::to_string(level) + "].";
        HURRAY_RETURN_IF_ERROR(array_u64(w, rank, p + "tile_shape"));
        HURRAY_ASSIGN_OR_RETURN(uint64_t outer, w.u8(p + "outer_layout", kLayout));
        HURRAY_ASSIGN_OR_RETURN(uint64_t inner, w.u8(p + "inner_layout", kLayout));
        HURRAY_RETURN_IF_ERROR(w.reserved(2, p + "_reserved"));
        if (outer == 0x03) {
            HURRAY_RETURN_IF_ERROR(array_i64(w, rank, p + "outer_strides"));
        }
        if (inner == 0x03) {
            HURRAY_RETURN_IF_ERROR(array_i64(w, rank, p + "inner_strides"));
        }
        if (inner != 0x04) {
            return Status::success();
        }
    }
    return Error(ErrorCode::kNestingTooDeep, "tiled: more than 64 nested levels", w.abs_pos());
}

Status layout_fields(Walker& w, uint64_t tag, uint64_t rank) {
    switch (tag) {
        case 0x01:
        case 0x02: return Status::success();
        case 0x03: return array_i64(w, rank, "strided.strides");
        case 0x04: return tiled_fields(w, rank);
        case 0x05: return array_u32(w, rank, "morton.morton_bits");
        case 0x06:
            HURRAY_RETURN_IF_ERROR(w.u64("coo.nnz"));
            HURRAY_RETURN_IF_ERROR(w.u8("coo.is_sorted", kBool));
            return detail::status_of(w.reserved(7, "coo._reserved"));
        case 0x07:
        case 0x08: {
            const std::string p = tag == 0x07 ? "csr." : "csc.";
            HURRAY_RETURN_IF_ERROR(w.u64(p + "nnz"));
            return detail::status_of(w.reserved(8, p + "_reserved"));
        }
        case 0x09:
            HURRAY_RETURN_IF_ERROR(w.u64("csf.nnz"));
            HURRAY_RETURN_IF_ERROR(array_u32(w, rank, "csf.mode_order"));
            return detail::status_of(w.reserved(8, "csf._reserved"));
        case 0x0A:
            HURRAY_RETURN_IF_ERROR(w.u32("block_paged.page_size"));
            HURRAY_RETURN_IF_ERROR(w.u64("block_paged.num_pages"));
            HURRAY_RETURN_IF_ERROR(w.u32("block_paged.paged_axis"));
            HURRAY_RETURN_IF_ERROR(w.u32("block_paged.num_seqs"));
            HURRAY_RETURN_IF_ERROR(w.u8("block_paged.kv_role", [](uint64_t v) {
                return tagged(v == 0 ? "key" : v == 1 ? "value" : v == 2 ? "fused" : "", v);
            }));
            HURRAY_RETURN_IF_ERROR(w.u32("block_paged.layer_index", [](uint64_t v) {
                return v == kNoLayerIndex ? std::string("none (0xffffffff)") : std::to_string(v);
            }));
            HURRAY_RETURN_IF_ERROR(w.u8("block_paged.block_table_index_type", [](uint64_t v) {
                return tagged(v == 0 ? "uint32" : v == 1 ? "uint64" : "", v);
            }));
            return detail::status_of(w.reserved(6, "block_paged._reserved"));
        case 0x0B:
            HURRAY_RETURN_IF_ERROR(w.u8("composite.composition_rule", [](uint64_t v) {
                return tagged(v == 1 ? "partition" : v == 2 ? "overlay" : v == 3 ? "group" : "", v);
            }));
            HURRAY_RETURN_IF_ERROR(w.u8("composite.combine_op", [](uint64_t v) {
                return tagged(v == 0 ? "none" : v == 1 ? "replace" : v == 2 ? "add" : "", v);
            }));
            HURRAY_RETURN_IF_ERROR(w.reserved(2, "composite._reserved"));
            return detail::status_of(w.u32("composite.member_count", [](uint64_t v) {
                return v == kOpenCompositeMemberCount ? std::string("open (0xffffffff)") : std::to_string(v);
            }));
        case 0x40:
            HURRAY_RETURN_IF_ERROR(w.u32("hilbert.hilbert_order"));
            return detail::status_of(w.u32("hilbert.hilbert_rank"));
        default: break;
    }
    if (tag >= 0xF0 && tag <= 0xFE) {
        HURRAY_RETURN_IF_ERROR(w.u64("extension.extension_layout_id", [](uint64_t v) { return hexnum(v, 16); }));
        HURRAY_ASSIGN_OR_RETURN(uint64_t len, w.u32("extension.extension_data_length"));
        return detail::status_of(w.raw(len, "extension.extension_data"));
    }
    // The length of an unassigned layout's fields is unknown: nothing after it can be found.
    return Error(ErrorCode::kUnknownLayoutTag, "layout_tag: " + layout_tag_text(tag) + " has no known field layout", 15);
}

Status quantization_fields(Walker& q) {
    HURRAY_ASSIGN_OR_RETURN(uint64_t tag, q.u8("quantization.scheme_tag", [](uint64_t v) {
        std::string_view n = scheme_name(static_cast<uint8_t>(v));
        return tagged(n.empty() ? "private or unassigned" : n, v);
    }));
    HURRAY_RETURN_IF_ERROR(q.u8("quantization.scheme_version"));
    HURRAY_RETURN_IF_ERROR(q.u16("quantization.flags", [](uint64_t v) {
        return hexnum(v, 4) + ((v & 1) != 0 ? " (symmetric)" : "");
    }));
    const ValueText zero_point = [](uint64_t v) {
        return v == 0xFFFFFFFF ? std::string("none (0xffffffff)") : std::to_string(v);
    };
    switch (tag) {
        case 0x01:
            HURRAY_RETURN_IF_ERROR(q.real(4, "quantization.per_tensor_affine.scale"));
            HURRAY_RETURN_IF_ERROR(q.sint(4, "quantization.per_tensor_affine.zero_point"));
            HURRAY_RETURN_IF_ERROR(q.reserved(4, "quantization.per_tensor_affine._reserved"));
            break;
        case 0x02:
        case 0x03: {
            const std::string p = tag == 0x02 ? "quantization.per_channel_affine." : "quantization.per_block_affine.";
            HURRAY_RETURN_IF_ERROR(q.u32(p + "axis"));
            if (tag == 0x03) {
                HURRAY_RETURN_IF_ERROR(q.u32(p + "block_size"));
            }
            HURRAY_RETURN_IF_ERROR(q.u32(p + "scale_buffer_index"));
            HURRAY_RETURN_IF_ERROR(q.u32(p + "zero_point_buffer_index", zero_point));
            HURRAY_RETURN_IF_ERROR(q.u8(p + "scale_type_tag", kType));
            HURRAY_RETURN_IF_ERROR(q.reserved(3, p + "_reserved"));
            break;
        }
        case 0x04:
        case 0x05: {
            const std::string p = tag == 0x04 ? "quantization.nf4." : "quantization.mxfp.";
            HURRAY_RETURN_IF_ERROR(q.u32(p + "axis"));
            HURRAY_RETURN_IF_ERROR(q.u32(p + "block_size"));
            HURRAY_RETURN_IF_ERROR(q.u32(p + "scale_buffer_index"));
            break;
        }
        default:
            if (q.remaining() > 0) {
                HURRAY_RETURN_IF_ERROR(q.raw(q.remaining(), "quantization.payload"));
            }
            return Status::success();
    }
    if (q.remaining() > 0) {
        HURRAY_RETURN_IF_ERROR(q.raw(q.remaining(), "quantization.padding"));
    }
    return Status::success();
}

Status statistics_fields(Walker& w) {
    HURRAY_RETURN_IF_ERROR(w.u32("statistics.computed_mask", [](uint64_t v) { return hexnum(v, 8); }));
    HURRAY_RETURN_IF_ERROR(w.reserved(4, "statistics._reserved"));
    HURRAY_RETURN_IF_ERROR(w.u64("statistics.nnz"));
    for (const char* f : {"sparsity_ratio", "value_min", "value_max", "value_abs_max", "value_mean", "value_stddev"}) {
        HURRAY_RETURN_IF_ERROR(w.real(8, std::string("statistics.") + f));
    }
    HURRAY_RETURN_IF_ERROR(w.u8("statistics.nm_n"));
    HURRAY_RETURN_IF_ERROR(w.u8("statistics.nm_m"));
    HURRAY_RETURN_IF_ERROR(w.u8("statistics.has_nan", kBool));
    HURRAY_RETURN_IF_ERROR(w.u8("statistics.has_inf", kBool));
    return detail::status_of(w.reserved(4, "statistics._reserved2"));
}

Status extension_type_fields(Walker& w) {
    HURRAY_RETURN_IF_ERROR(w.u32("extension_type.bit_width"));
    HURRAY_RETURN_IF_ERROR(w.u8("extension_type.packing_factor"));
    HURRAY_RETURN_IF_ERROR(w.u8("extension_type.is_float", kBool));
    HURRAY_RETURN_IF_ERROR(w.u8("extension_type.is_signed", kBool));
    HURRAY_RETURN_IF_ERROR(w.u8("extension_type.sign_bits"));
    HURRAY_RETURN_IF_ERROR(w.u8("extension_type.exponent_bits"));
    HURRAY_RETURN_IF_ERROR(w.u8("extension_type.mantissa_bits"));
    HURRAY_RETURN_IF_ERROR(w.reserved(2, "extension_type._reserved"));
    HURRAY_RETURN_IF_ERROR(w.u32("extension_type.exponent_bias"));
    HURRAY_RETURN_IF_ERROR(w.u8("extension_type.has_nan", kBool));
    HURRAY_RETURN_IF_ERROR(w.u8("extension_type.has_inf", kBool));
    return detail::status_of(w.reserved(2, "extension_type._reserved2"));
}

Status buffer_fields(Walker& w, uint64_t i) {
    const std::string p = idx("buffer", i) + ".";
    HURRAY_RETURN_IF_ERROR(w.u64(p + "byte_size"));
    HURRAY_RETURN_IF_ERROR(w.u32(p + "alignment"));
    HURRAY_RETURN_IF_ERROR(w.u8(p + "device_tag", [](uint64_t v) {
        return tagged(device_name(static_cast<DeviceTag>(v)), v);
    }));
    HURRAY_RETURN_IF_ERROR(w.u8(p + "sync_mode", [](uint64_t v) {
        return tagged(v == 0 ? "producer_synced" : v == 1 ? "event" : v == 2 ? "consumer_stream" : "", v);
    }));
    HURRAY_RETURN_IF_ERROR(w.u8(p + "memory_class", [](uint64_t v) {
        return tagged(v == 0 ? "standard" : v == 1 ? "host_pinned" : v == 2 ? "unified" : v == 3 ? "peer" : "", v);
    }));
    return detail::status_of(w.reserved(1, p + "_reserved"));
}

// Everything after descriptor_length, read through `w` (bounded by the descriptor).
Status descriptor_body(Walker& w, uint64_t version_minor) {
    HURRAY_ASSIGN_OR_RETURN(uint64_t flags, w.u32("flags", flags_text));
    HURRAY_RETURN_IF_ERROR(w.u8("type_tag", kType));
    HURRAY_ASSIGN_OR_RETURN(uint64_t layout, w.u8("layout_tag", kLayout));
    HURRAY_ASSIGN_OR_RETURN(uint64_t rank, w.u32("rank"));
    if (rank > kMaxRank) {
        return Error(ErrorCode::kRankTooLarge, "rank: " + std::to_string(rank) + " exceeds the maximum of 64",
                     w.abs_pos() - 4);
    }
    HURRAY_RETURN_IF_ERROR(array_u64(w, rank, "shape"));
    HURRAY_RETURN_IF_ERROR(w.u64("byte_offset"));
    HURRAY_RETURN_IF_ERROR(layout_fields(w, layout, rank));
    HURRAY_ASSIGN_OR_RETURN(uint64_t buffers, w.u8("buffer_count"));
    for (uint64_t i = 0; i < buffers; ++i) {
        HURRAY_RETURN_IF_ERROR(buffer_fields(w, i));
    }
    if ((flags & kHasQuantization) != 0) {
        HURRAY_ASSIGN_OR_RETURN(uint64_t qlen, w.u32("quantization_length"));
        const uint64_t at = w.abs_pos();
        // A payload cut short by the input or the descriptor: annotate what is there.
        const uint64_t avail = std::min<uint64_t>(qlen, w.remaining());
        HURRAY_ASSIGN_OR_RETURN(auto payload, w.take(avail, "quantization"));
        const bool cut = avail < qlen;
        Walker q(payload, at, w.rows(), cut ? w.limit_code() : ErrorCode::kInvalidQuantization,
                 cut ? w.limit_what() : "quantization_length " + std::to_string(qlen));
        HURRAY_RETURN_IF_ERROR(quantization_fields(q));
        if (cut) {
            return Error(w.limit_code(),
                         "quantization: needs " + std::to_string(qlen) + " bytes at offset " + std::to_string(at) +
                             ", only " + std::to_string(avail) + " left in " + w.limit_what(),
                         at + avail);
        }
    }
    if ((flags & kHasShard) != 0) {
        HURRAY_RETURN_IF_ERROR(array_u64(w, rank, "shard.parent_shape"));
        HURRAY_RETURN_IF_ERROR(array_u64(w, rank, "shard.shard_offset"));
    }
    if ((flags & kHasStatistics) != 0) {
        HURRAY_RETURN_IF_ERROR(statistics_fields(w));
    }
    if ((flags & kHasExtensionType) != 0) {
        HURRAY_RETURN_IF_ERROR(extension_type_fields(w));
    }
    if ((flags & kHasCompositeMember) != 0) {
        HURRAY_RETURN_IF_ERROR(w.u8("composite_member.member_role", [](uint64_t v) {
            return tagged(v == 0 ? "correction" : v == 1 ? "base" : "", v);
        }));
        HURRAY_RETURN_IF_ERROR(w.reserved(15, "composite_member._reserved"));
    }
    if (w.remaining() > 0) {
        const uint64_t n = w.remaining();
        HURRAY_RETURN_IF_ERROR(w.raw(n, "trailing_bytes",
                                     std::to_string(n) + (version_minor > kDescriptorVersionMinor
                                                              ? " bytes of a newer minor version"
                                                              : " bytes past the last field")));
    }
    return Status::success();
}

}  // namespace

Result<uint64_t> annotate_descriptor(std::span<const uint8_t> bytes, uint64_t base, std::vector<Row>& rows) {
    Walker head(bytes, base, rows, ErrorCode::kTruncated, "the input");
    HURRAY_ASSIGN_OR_RETURN(auto magic, head.raw(4, "magic", "\"HRRY\""));
    if (std::memcmp(magic.data(), kDescriptorMagic, 4) != 0) {
        head.last().value = "not \"HRRY\"";
        return Error(ErrorCode::kInvalidMagic,
                     "magic: expected \"HRRY\" (48 52 52 59), got " + hurray::hex_bytes(magic, " "), base);
    }
    HURRAY_RETURN_IF_ERROR(head.u8("version_major"));
    HURRAY_ASSIGN_OR_RETURN(uint64_t minor, head.u8("version_minor"));
    HURRAY_ASSIGN_OR_RETURN(uint64_t length, head.u32("descriptor_length"));
    if (length < kFixedHeaderSize) {
        return Error(ErrorCode::kInvalidDescriptorLength,
                     "descriptor_length: " + std::to_string(length) + " is below the 20-byte minimum", base + 6);
    }
    // The rest is bounded by descriptor_length, or by the input when that ends first.
    const bool short_input = length > bytes.size();
    const auto body = bytes.subspan(10, static_cast<size_t>((short_input ? bytes.size() : length) - 10));
    Walker w(body, base + 10, rows, short_input ? ErrorCode::kTruncated : ErrorCode::kInvalidDescriptorLength,
             short_input ? "the input (descriptor_length " + std::to_string(length) + ")"
                         : "descriptor_length " + std::to_string(length));
    HURRAY_RETURN_IF_ERROR(descriptor_body(w, minor));
    if (short_input) {
        return Error(ErrorCode::kTruncated,
                     "descriptor_length: " + std::to_string(length) + " bytes declared, only " +
                         std::to_string(bytes.size()) + " available",
                     base + 6);
    }
    return length;
}

Annotation annotate_descriptor_input(std::span<const uint8_t> bytes) {
    Annotation a;
    a.kind = "descriptor";
    Section s;
    s.title = "descriptor";
    s.offset = 0;
    auto walked = annotate_descriptor(bytes, 0, s.rows);
    s.length = walked ? *walked : bytes.size();
    a.sections.push_back(std::move(s));
    auto decoded = decode(bytes);
    if (!decoded) {
        a.error = decoded.error();
    } else if (!walked) {
        a.error = walked.error();
    } else if (*walked != bytes.size()) {
        a.error = Error(ErrorCode::kInvalidDescriptorLength,
                        std::to_string(bytes.size() - *walked) + " bytes follow the descriptor", *walked);
    }
    return a;
}

}  // namespace hurray::cli
