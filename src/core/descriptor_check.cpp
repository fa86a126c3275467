// SPDX-License-Identifier: Apache-2.0
// Descriptor-level validation: every rule of the spec that can be checked
// from the descriptor alone, and the buffer sizes the descriptor implies.
//
// Run by decode (after parsing) and by encode (before writing), so that what
// we write is exactly what we accept. Errors carry the byte offset of the
// offending field in the encoded descriptor (see SectionOffsets).
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "core/block_padding.hpp"
#include "hurray/core/checked_math.hpp"
#include "core/descriptor_internal.hpp"
#include "core/ggml_blocks_rules.hpp"
#include "core/quant_storage.hpp"
#include "hurray/core/text.hpp"
#include "hurray/core/byte_io.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/ggml_blocks.hpp"

namespace hurray::detail {
namespace {

__extension__ typedef __int128 i128;  // NOLINT(modernize-use-using): __extension__ needs typedef

// "No parameter buffer": wider than any wire index, since a buffer index field
// may itself hold 0xFFFFFFFF (and must then be rejected as out of range).
constexpr uint64_t kNoParam = UINT64_MAX;

/// Everything a check needs.
struct Ctx {
    const TensorDescriptor& d;
    const DecodeOptions& opt;
    const SectionOffsets& off;
};

Error fail(ErrorCode code, std::string message, uint64_t at) {
    return {code, std::move(message), at};
}

std::string dim_name(const char* field, size_t k) { return std::string(field) + "[" + dec(k) + "]"; }

// ---------------------------------------------------------------------------
// Element type and extension type section

Status check_extension_type(const Ctx& c) {
    const auto& d = c.d;
    const uint8_t tag = type_tag(d.element_type);
    const bool private_tag = classify_type_tag(tag) == TypeTagClass::kPrivate;
    if (private_tag != d.extension_type.has_value()) {
        return fail(ErrorCode::kInvalidExtensionType,
                    private_tag ? "flags: type_tag " + hex(tag) +
                                      " is private, so HAS_EXTENSION_TYPE must be set"
                                : "flags: HAS_EXTENSION_TYPE is set, but type_tag " + hex(tag) +
                                      " is not private (0xF0-0xFE)",
                    10);
    }
    if (!d.extension_type) {
        return Status::success();
    }
    const ExtensionTypeDescriptor& e = *d.extension_type;
    const uint64_t at = c.off.extension_type;
    const uint32_t bw = e.bit_width;
    if (bw == 0) {
        return fail(ErrorCode::kInvalidExtensionType, "extension_type.bit_width: must be > 0", at);
    }
    if (bw < 8) {
        if (bw != 1 && bw != 2 && bw != 4) {
            return fail(ErrorCode::kInvalidExtensionType,
                        "extension_type.bit_width: sub-byte widths must be 1, 2 or 4, got " + dec(bw), at);
        }
        if (e.packing_factor != 8 / bw) {
            return fail(ErrorCode::kInvalidExtensionType,
                        "extension_type.packing_factor: must be " + dec(8 / bw) + " for " + dec(bw) +
                            "-bit elements, got " + dec(e.packing_factor),
                        at + 4);
        }
    } else {
        if (bw % 8 != 0) {
            return fail(ErrorCode::kInvalidExtensionType,
                        "extension_type.bit_width: widths of 8 bits or more must be whole bytes, got " +
                            dec(bw),
                        at);
        }
        if (e.packing_factor != 1) {
            return fail(ErrorCode::kInvalidExtensionType,
                        "extension_type.packing_factor: must be 1 for whole-byte elements, got " +
                            dec(e.packing_factor),
                        at + 4);
        }
    }
    if (!c.opt.strict) {
        return Status::success();
    }
    if (e.is_float) {
        if (e.is_signed) {
            return fail(ErrorCode::kInvalidExtensionType,
                        "extension_type.is_signed: must be 0 for a floating-point type", at + 6);
        }
        if (e.sign_bits > 1) {
            return fail(ErrorCode::kInvalidExtensionType,
                        "extension_type.sign_bits: must be 0 or 1, got " + dec(e.sign_bits), at + 7);
        }
    } else if (e.sign_bits != 0 || e.exponent_bits != 0 || e.mantissa_bits != 0 ||
               e.exponent_bias != 0) {
        // Point at the first non-zero field: sign_bits +7, exponent_bits +8,
        // mantissa_bits +9, exponent_bias +12.
        const uint64_t field = e.sign_bits != 0       ? 7
                               : e.exponent_bits != 0 ? 8
                               : e.mantissa_bits != 0 ? 9
                                                      : 12;
        return fail(ErrorCode::kInvalidExtensionType,
                    "extension_type: sign_bits, exponent_bits, mantissa_bits and exponent_bias must be "
                    "0 for an integer type",
                    at + field);
    }
    return Status::success();
}

Status check_element_type(const Ctx& c) {
    const uint8_t tag = type_tag(c.d.element_type);
    switch (classify_type_tag(tag)) {
        case TypeTagClass::kInvalid:
            return fail(ErrorCode::kInvalidElementType, "type_tag: " + hex(tag) + " is invalid", 14);
        case TypeTagClass::kReserved:
            if (c.opt.strict) {
                return fail(ErrorCode::kUnknownElementType,
                            "type_tag: " + hex(tag) + " is reserved or unassigned", 14);
            }
            break;
        default: break;
    }
    return check_extension_type(c);
}

// ---------------------------------------------------------------------------
// Layouts

Status check_rank_vector(size_t got, uint32_t rank, const char* field, uint64_t at) {
    if (got != rank) {
        return fail(ErrorCode::kInvalidLayout,
                    std::string(field) + ": has " + dec(got) + " entries, rank is " + dec(rank), at);
    }
    return Status::success();
}

Status check_tiled(const Ctx& c, const TiledLayout& t) {
    const uint32_t rank = c.d.rank();
    uint64_t at = c.off.layout;
    if (t.levels.empty()) {
        return fail(ErrorCode::kInvalidLayout, "tiled: needs at least one level", at);
    }
    if (t.levels.size() > c.opt.max_tiled_depth) {
        return fail(ErrorCode::kNestingTooDeep,
                    "tiled: " + dec(t.levels.size()) + " nested levels exceed the limit of " +
                        dec(c.opt.max_tiled_depth),
                    at);
    }
    for (size_t i = 0; i < t.levels.size(); ++i) {
        const TiledLevel& lv = t.levels[i];
        auto lvl = [i] { return "tiled level " + dec(i) + ": "; };
        HURRAY_RETURN_IF_ERROR(check_rank_vector(lv.tile_shape.size(), rank, "tiled.tile_shape", at));
        for (size_t k = 0; k < lv.tile_shape.size(); ++k) {
            if (lv.tile_shape[k] == 0) {
                return fail(ErrorCode::kInvalidLayout, lvl() + dim_name("tile_shape", k) + " must be > 0",
                            at + 8 * k);
            }
        }
        const uint64_t tags_at = at + 8 * uint64_t{rank};
        const auto outer = static_cast<uint8_t>(lv.outer_layout);
        const auto inner = static_cast<uint8_t>(lv.inner_layout);
        if (outer < 0x01 || outer > 0x03) {
            return fail(ErrorCode::kInvalidLayout,
                        lvl() + "outer_layout " + hex(outer) + " must be 0x01, 0x02 or 0x03", tags_at);
        }
        if (inner < 0x01 || inner > 0x04) {
            return fail(ErrorCode::kInvalidLayout,
                        lvl() + "inner_layout " + hex(inner) + " must be 0x01-0x04", tags_at + 1);
        }
        const bool last = i + 1 == t.levels.size();
        if ((inner == 0x04) == last) {
            return fail(ErrorCode::kInvalidLayout,
                        lvl() + (last ? "inner_layout is tiled but no nested level follows"
                                    : "a nested level follows but inner_layout is not tiled"),
                        tags_at + 1);
        }
        uint64_t next = tags_at + 4;
        HURRAY_RETURN_IF_ERROR(check_rank_vector(lv.outer_strides.size(), outer == 0x03 ? rank : 0,
                                                 "tiled.outer_strides", next));
        next += 8 * lv.outer_strides.size();
        HURRAY_RETURN_IF_ERROR(check_rank_vector(lv.inner_strides.size(), inner == 0x03 ? rank : 0,
                                                 "tiled.inner_strides", next));
        next += 8 * lv.inner_strides.size();
        at = next;
    }
    return Status::success();
}

Status check_layout(const Ctx& c) {
    const TensorDescriptor& d = c.d;
    const uint32_t rank = d.rank();
    const uint64_t at = c.off.layout;
    const uint8_t tag = d.layout_tag();
    auto name = [tag] { return std::string(layout_name(tag)); };
    const LayoutKind kind = layout_kind(d.layout);

    if (rank == 0 && !std::holds_alternative<RowMajorLayout>(d.layout) &&
        !std::holds_alternative<CompositeLayout>(d.layout)) {
        return fail(ErrorCode::kRankNotAllowed,
                    "rank: a scalar (rank 0) must use the row-major layout, not " + name(), 16);
    }
    if (kind != LayoutKind::kDense && kind != LayoutKind::kExtension && d.byte_offset != 0) {
        return fail(ErrorCode::kByteOffsetOutOfRange,
                    "byte_offset: must be 0 for the " + name() + " layout, got " + dec(d.byte_offset),
                    c.off.byte_offset);
    }
    auto need_rank = [&](bool ok, const char* rule) -> Status {
        if (!ok) {
            return fail(ErrorCode::kRankNotAllowed,
                        "rank: " + name() + " requires " + rule + ", got " + dec(rank), 16);
        }
        return Status::success();
    };

    if (const auto* s = std::get_if<StridedLayout>(&d.layout)) {
        return check_rank_vector(s->strides.size(), rank, "strided.strides", at);
    }
    if (const auto* t = std::get_if<TiledLayout>(&d.layout)) {
        return check_tiled(c, *t);
    }
    if (const auto* m = std::get_if<MortonLayout>(&d.layout)) {
        HURRAY_RETURN_IF_ERROR(check_rank_vector(m->morton_bits.size(), rank, "morton.morton_bits", at));
        uint64_t total = 0;
        for (size_t k = 0; k < rank; ++k) {
            const uint32_t bits = m->morton_bits[k];
            if (bits == 0) {
                return fail(ErrorCode::kInvalidLayout, dim_name("morton.morton_bits", k) + " must be > 0",
                            at + 4 * k);
            }
            total += bits;
            if (total > 63) {
                return fail(ErrorCode::kSizeOverflow,
                            "morton.morton_bits: 2^(sum of bits) elements exceed 2^63", at + 4 * k);
            }
            if (d.shape[k] > (uint64_t{1} << bits)) {
                return fail(ErrorCode::kInvalidLayout,
                            dim_name("shape", k) + " = " + dec(d.shape[k]) + " exceeds 2^morton_bits = " +
                                dec(uint64_t{1} << bits),
                            c.off.shape + 8 * k);
            }
        }
        return Status::success();
    }
    if (std::holds_alternative<CsrLayout>(d.layout) || std::holds_alternative<CscLayout>(d.layout)) {
        return need_rank(rank == 2, "rank 2");
    }
    if (const auto* f = std::get_if<CsfLayout>(&d.layout)) {
        HURRAY_RETURN_IF_ERROR(need_rank(rank >= 3, "rank >= 3"));
        HURRAY_RETURN_IF_ERROR(check_rank_vector(f->mode_order.size(), rank, "csf.mode_order", at + 8));
        uint64_t seen = 0;
        for (size_t l = 0; l < rank; ++l) {
            const uint32_t m = f->mode_order[l];
            if (m >= rank || (seen & (uint64_t{1} << m)) != 0) {
                return fail(ErrorCode::kInvalidLayout,
                            dim_name("csf.mode_order", l) + " = " + dec(m) +
                                (m >= rank ? " is out of range" : " repeats an earlier level") +
                                ": mode_order must be a permutation of 0.." + dec(rank - 1),
                            at + 8 + 4 * l);
            }
            seen |= uint64_t{1} << m;
        }
        if (d.shard) {
            return fail(ErrorCode::kInvalidShard, "flags: a CSF tensor must not carry a shard section", 10);
        }
        return Status::success();
    }
    if (const auto* b = std::get_if<BlockPagedLayout>(&d.layout)) {
        HURRAY_RETURN_IF_ERROR(need_rank(rank == 3, "rank 3"));
        if (b->page_size == 0) {
            return fail(ErrorCode::kInvalidLayout, "block_paged.page_size: must be >= 1", at);
        }
        if (b->paged_axis != 0) {
            return fail(ErrorCode::kInvalidLayout,
                        "block_paged.paged_axis: must be 0, got " + dec(b->paged_axis), at + 12);
        }
        if (static_cast<uint8_t>(b->kv_role) > 0x02) {
            return fail(ErrorCode::kInvalidLayout,
                        "block_paged.kv_role: " + hex(static_cast<uint8_t>(b->kv_role)) +
                            " is not 0x00, 0x01 or 0x02",
                        at + 20);
        }
        if (static_cast<uint8_t>(b->index_type) > 0x01) {
            return fail(ErrorCode::kInvalidLayout,
                        "block_paged.block_table_index_type: " + hex(static_cast<uint8_t>(b->index_type)) +
                            " is not 0x00 or 0x01",
                        at + 25);
        }
        if (d.shard) {
            return fail(ErrorCode::kInvalidShard,
                        "flags: a block-paged tensor must not carry a shard section", 10);
        }
        return Status::success();
    }
    if (const auto* h = std::get_if<HilbertLayout>(&d.layout)) {
        HURRAY_RETURN_IF_ERROR(need_rank(rank >= 2, "rank >= 2"));
        if (h->hilbert_order == 0) {
            return fail(ErrorCode::kInvalidLayout, "hilbert.hilbert_order: must be > 0", at);
        }
        if (h->hilbert_rank != rank) {
            return fail(ErrorCode::kInvalidLayout,
                        "hilbert.hilbert_rank: " + dec(h->hilbert_rank) + " must equal rank " + dec(rank),
                        at + 4);
        }
        if (uint64_t{h->hilbert_order} * rank > 63) {
            return fail(ErrorCode::kSizeOverflow,
                        "hilbert: 2^(rank * order) elements exceed 2^63", at);
        }
        const uint64_t side = uint64_t{1} << h->hilbert_order;
        for (size_t k = 0; k < rank; ++k) {
            if (d.shape[k] != side) {
                return fail(ErrorCode::kInvalidLayout,
                            dim_name("shape", k) + " = " + dec(d.shape[k]) +
                                " must equal 2^hilbert_order = " + dec(side),
                            c.off.shape + 8 * k);
            }
        }
        return Status::success();
    }
    if (const auto* k = std::get_if<CompositeLayout>(&d.layout)) {
        const auto rule = static_cast<uint8_t>(k->rule);
        const auto op = static_cast<uint8_t>(k->combine_op);
        const bool private_rule = rule >= 0xF0 && rule <= 0xFE;
        if (!private_rule && (rule < 0x01 || rule > 0x03)) {
            return fail(ErrorCode::kInvalidComposite,
                        "composite.composition_rule: " + hex(rule) + " is reserved or invalid", at);
        }
        if (private_rule && c.opt.strict) {
            return fail(ErrorCode::kInvalidComposite,
                        "composite.composition_rule: private rule " + hex(rule) +
                            " is not understood (strict mode)",
                        at);
        }
        if (k->rule == CompositionRule::kOverlay) {
            if (op != 0x01 && op != 0x02) {
                return fail(ErrorCode::kInvalidComposite,
                            "composite.combine_op: an overlay needs 0x01 (replace) or 0x02 (add), got " +
                                hex(op),
                            at + 1);
            }
        } else if (!private_rule && op != 0x00) {
            return fail(ErrorCode::kInvalidComposite,
                        "composite.combine_op: must be 0x00 for partition and group, got " + hex(op),
                        at + 1);
        }
        if (k->member_count == kOpenCompositeMemberCount && c.opt.strict) {
            return fail(ErrorCode::kInvalidComposite,
                        "composite.member_count: 0xFFFFFFFF (open composite) is reserved", at + 4);
        }
        if (!d.buffers.empty()) {
            return fail(ErrorCode::kInvalidComposite,
                        "buffer_count: a composite head owns no data and must have 0 buffers, got " +
                            dec(d.buffers.size()),
                        c.off.buffer_table);
        }
        if (d.quantization) {
            return fail(ErrorCode::kInvalidComposite,
                        "flags: a composite head must not carry a quantization section", 10);
        }
        if (d.composite_member) {
            return fail(ErrorCode::kInvalidComposite,
                        "flags: a composite head must not carry a composite member section", 10);
        }
        return Status::success();
    }
    if (const auto* e = std::get_if<ExtensionLayout>(&d.layout)) {
        if (e->tag < 0xF0 || e->tag > 0xFE) {
            return fail(ErrorCode::kInvalidLayoutTag,
                        "layout_tag: extension layouts use 0xF0-0xFE, got " + hex(e->tag), 15);
        }
        const auto& known = c.opt.known_extension_layouts;
        if (c.opt.strict && !c.opt.accept_private_extensions &&
            std::find(known.begin(), known.end(), e->layout_id) == known.end()) {
            return fail(ErrorCode::kUnsupportedExtensionLayout,
                        "extension_layout_id: " + hex(e->layout_id, 16) + " (layout tag " + hex(e->tag) +
                            ") is not recognised",
                        at);
        }
    }
    return Status::success();
}

// ---------------------------------------------------------------------------
// Quantization

struct QuantParams {
    bool known = false;      // false for opaque schemes
    uint32_t axis = 0;
    uint32_t block_size = 0;  // 0 for schemes without blocks
    uint64_t scale_index = kNoParam;
    uint64_t zero_point_index = kNoParam;
    uint32_t scale_bytes = 0;  // bytes per scale value
};

QuantParams quant_params(const QuantizationScheme& s) {
    QuantParams p;
    p.known = !std::holds_alternative<OpaqueQuantization>(s);
    if (const auto* q = std::get_if<PerChannelAffine>(&s)) {
        p.axis = q->axis;
        p.scale_index = q->scale_buffer_index;
        p.zero_point_index = q->zero_point_buffer_index ? *q->zero_point_buffer_index : kNoParam;
        p.scale_bytes = 4;
    } else if (const auto* q = std::get_if<PerBlockAffine>(&s)) {
        p.axis = q->axis;
        p.block_size = q->block_size;
        p.scale_index = q->scale_buffer_index;
        p.zero_point_index = q->zero_point_buffer_index ? *q->zero_point_buffer_index : kNoParam;
        p.scale_bytes = bit_width(q->scale_type) / 8;
    } else if (const auto* q = std::get_if<Nf4Quantization>(&s)) {
        p.axis = q->axis;
        p.block_size = q->block_size;
        p.scale_index = q->scale_buffer_index;
        p.scale_bytes = 4;
    } else if (const auto* q = std::get_if<MxfpQuantization>(&s)) {
        p.axis = q->axis;
        p.block_size = q->block_size;
        p.scale_index = q->scale_buffer_index;
        p.scale_bytes = 1;
    }
    return p;
}

bool storage_allowed(ElementType t, std::initializer_list<ElementType> allowed) {
    return std::find(allowed.begin(), allowed.end(), t) != allowed.end();
}

Status check_axis(const Ctx& c, const char* scheme, uint32_t axis, uint64_t axis_at) {
    const uint32_t rank = c.d.rank();
    if (axis >= rank) {
        return fail(ErrorCode::kInvalidQuantization,
                    std::string(scheme) + ".axis: " + dec(axis) + " must be < rank " + dec(rank), axis_at);
    }
    if (c.d.shape[axis] == kDynamicDim) {
        return fail(ErrorCode::kInvalidQuantization,
                    std::string(scheme) + ".axis: shape[" + dec(axis) +
                        "] is dynamic; quantization needs a static size",
                    axis_at);
    }
    return Status::success();
}

Status check_block_size(const Ctx& c, const char* scheme, uint32_t axis, uint32_t block, uint32_t min,
                        uint32_t max, uint64_t at) {
    if (!is_pow2(block) || block < min || block > max) {
        return fail(ErrorCode::kInvalidQuantization,
                    std::string(scheme) + ".block_size: " + dec(block) + " must be a power of two in [" +
                        dec(min) + ", " + dec(max) + "]",
                    at);
    }
    const uint64_t s = c.d.shape[axis];
    // A block-paged tensor's blocks are its pages (block_size == page_size,
    // scales per page slot), so a batch shorter than one page is fine.
    const bool paged = std::holds_alternative<BlockPagedLayout>(c.d.layout);
    if (s > 0 && block > s && !paged) {
        return fail(ErrorCode::kInvalidQuantization,
                    std::string(scheme) + ".block_size: " + dec(block) + " exceeds shape[" + dec(axis) +
                        "] = " + dec(s),
                    at);
    }
    return Status::success();
}

// The rules of GGML blocks version 1: a 16-byte payload naming a known ggml type with its
// own block geometry, no flags, row-major, the last axis whole blocks, and buffer 0
// holding every block after byte_offset. `q` is the offset of the scheme tag.
Status check_ggml_blocks(const Ctx& c, const OpaqueQuantization& o, uint64_t q) {
    if (!c.opt.strict) {
        return Status::success();  // carried as any private scheme is; dequantize re-checks
    }
    HURRAY_ASSIGN_OR_RETURN(const GgmlBlocks blocks, parse_ggml_blocks(o, q));
    const GgmlTypeInfo& info = blocks.info;
    const TensorDescriptor& d = c.d;
    if (!std::holds_alternative<RowMajorLayout>(d.layout)) {
        return fail(ErrorCode::kInvalidQuantization, "layout: GGML blocks are row-major", c.off.layout);
    }
    if (!ggml_whole_blocks(info, d.shape)) {
        return fail(ErrorCode::kInvalidQuantization, "shape: " + ggml_whole_blocks_rule(info), c.off.shape);
    }
    HURRAY_ASSIGN_OR_RETURN(uint64_t count, element_count(d.shape));
    const auto need = ggml_blocks_bytes(info, count);
    if (d.buffers.size() != 1) {
        return fail(ErrorCode::kInvalidBufferCount,
                    "buffer_count: GGML blocks take 1 buffer, got " + dec(d.buffers.size()), c.off.buffer_table);
    }
    const uint64_t have = d.buffers[0].byte_size;
    if (!need || d.byte_offset > have || have - d.byte_offset < *need) {
        return fail(ErrorCode::kBufferTooSmall,
                    "buffer[0].byte_size: " + dec(have) + " bytes after byte_offset " + dec(d.byte_offset) +
                        " do not hold the " + (need ? dec(*need) : std::string("2^64 or more")) + " bytes of " +
                        dec(count / info.elements) + " " + std::string(info.name) + " blocks",
                    c.off.buffer(0));
    }
    return Status::success();
}

Status check_quantization_fields(const Ctx& c) {
    const TensorDescriptor& d = c.d;
    if (!d.quantization) {
        return Status::success();
    }
    const QuantizationScheme& s = d.quantization->scheme;
    const uint64_t q = c.off.quant_payload();
    const ElementType t = d.element_type;
    auto tname = [t] { return type_name(t).empty() ? hex(type_tag(t)) : std::string(type_name(t)); };

    if (const auto* o = std::get_if<OpaqueQuantization>(&s)) {
        const uint8_t tag = o->scheme_tag;
        if (tag == 0x00 || tag == 0xFF) {
            return fail(ErrorCode::kUnknownQuantizationScheme,
                        "quantization.scheme_tag: " + hex(tag) + " is invalid", q);
        }
        if (tag >= 0x01 && tag <= 0x05) {
            return fail(ErrorCode::kInvalidQuantization,
                        "quantization.scheme_tag: " + hex(tag) +
                            " is an assigned scheme and must use its typed form",
                        q);
        }
        if (!d.quantization->trailing_padding.empty()) {
            // The wire cannot tell padding from an opaque payload (decode puts
            // every byte in the payload), so the model must do the same.
            return fail(ErrorCode::kInvalidQuantization,
                        "quantization.trailing_padding: an opaque scheme has no padding; its payload "
                        "holds every byte",
                        q);
        }
        if (tag == kGgmlBlocksScheme && c.opt.libhurray_schemes && has_ggml_magic(*o)) {
            return check_ggml_blocks(c, *o, q);
        }
        const bool priv = tag >= 0xF0 && tag <= 0xFE;
        const auto& known = c.opt.known_private_schemes;
        const bool understood =
            priv && (c.opt.accept_private_extensions || std::find(known.begin(), known.end(), tag) != known.end());
        if (c.opt.strict && !understood) {
            return fail(ErrorCode::kUnknownQuantizationScheme,
                        "quantization.scheme_tag: " + hex(tag) +
                            (priv ? " is a private scheme this reader does not know"
                                  : " is reserved or unassigned"),
                        q);
        }
        return Status::success();
    }

    auto bad_storage = [&](const char* scheme) {
        return fail(ErrorCode::kInvalidQuantizationStorageType,
                    std::string("type_tag: ") + tname() + " is not a valid storage type for " + scheme, 14);
    };
    using E = ElementType;
    const std::initializer_list<E> affine_types = {E::kInt8,  E::kUInt8, E::kInt16, E::kUInt16,
                                                   E::kInt32, E::kUInt32, E::kInt4, E::kUInt4,
                                                   E::kInt2,  E::kUInt2};

    if (const auto* p = std::get_if<PerTensorAffine>(&s)) {
        if (!storage_allowed(t, affine_types)) {
            return bad_storage("per_tensor_affine");
        }
        if (!std::isfinite(p->scale) || p->scale == 0.0F) {
            return fail(ErrorCode::kInvalidQuantization,
                        "per_tensor_affine.scale: must be finite and non-zero", q + 4);
        }
        // storage_allowed above: an affine storage type, which has a range.
        const CodeRange range = affine_code_range(t).value_or(CodeRange{INT32_MIN, INT32_MAX});
        if (p->zero_point < range.min || p->zero_point > range.max) {
            return fail(ErrorCode::kInvalidQuantization,
                        "per_tensor_affine.zero_point: " + std::to_string(p->zero_point) +
                            " is outside the range of " + tname(),
                        q + 8);
        }
    } else if (const auto* p = std::get_if<PerChannelAffine>(&s)) {
        if (!storage_allowed(t, affine_types)) {
            return bad_storage("per_channel_affine");
        }
        HURRAY_RETURN_IF_ERROR(check_axis(c, "per_channel_affine", p->axis, q + 4));
        if (p->scale_type != E::kFloat32) {
            return fail(ErrorCode::kInvalidQuantization,
                        "per_channel_affine.scale_type_tag: must be 0x03 (float32), got " +
                            hex(type_tag(p->scale_type)),
                        q + 16);
        }
    } else if (const auto* p = std::get_if<PerBlockAffine>(&s)) {
        if (!storage_allowed(t, {E::kInt8, E::kUInt8, E::kInt4, E::kUInt4, E::kInt2, E::kUInt2})) {
            return bad_storage("per_block_affine");
        }
        HURRAY_RETURN_IF_ERROR(check_axis(c, "per_block_affine", p->axis, q + 4));
        HURRAY_RETURN_IF_ERROR(
            check_block_size(c, "per_block_affine", p->axis, p->block_size, 2, 0x80000000U, q + 8));
        if (!storage_allowed(p->scale_type, {E::kFloat16, E::kBFloat16, E::kFloat32})) {
            return fail(ErrorCode::kInvalidQuantization,
                        "per_block_affine.scale_type_tag: must be 0x01, 0x02 or 0x03, got " +
                            hex(type_tag(p->scale_type)),
                        q + 20);
        }
    } else if (const auto* p = std::get_if<Nf4Quantization>(&s)) {
        if (t != E::kUInt4) {
            return bad_storage("nf4 (only uint4)");
        }
        HURRAY_RETURN_IF_ERROR(check_axis(c, "nf4", p->axis, q + 4));
        HURRAY_RETURN_IF_ERROR(check_block_size(c, "nf4", p->axis, p->block_size, 8, 0x80000000U, q + 8));
    } else if (const auto* p = std::get_if<MxfpQuantization>(&s)) {
        if (!storage_allowed(t, {E::kFloat8E4M3, E::kFloat8E5M2, E::kFloat4E2M1, E::kFloat6E2M3,
                                 E::kFloat6E3M2, E::kInt8, E::kInt4})) {
            return bad_storage("mxfp");
        }
        HURRAY_RETURN_IF_ERROR(check_axis(c, "mxfp", p->axis, q + 4));
        HURRAY_RETURN_IF_ERROR(check_block_size(c, "mxfp", p->axis, p->block_size, 16, 2048, q + 8));
        const uint64_t len = d.shape[p->axis];
        if (len == 0 || len % p->block_size != 0) {
            return fail(ErrorCode::kInvalidQuantization,
                        "mxfp.block_size: shape[" + dec(p->axis) + "] = " + dec(len) +
                            " must be a positive multiple of " + dec(p->block_size),
                        q + 8);
        }
    }

    if (const auto* b = std::get_if<BlockPagedLayout>(&d.layout)) {
        if (const auto* p = std::get_if<PerChannelAffine>(&s); p != nullptr && p->axis == 0) {
            return fail(ErrorCode::kInvalidQuantization,
                        "per_channel_affine.axis: must not be the paged axis 0 of a block-paged tensor",
                        q + 4);
        }
        if (const auto* p = std::get_if<PerBlockAffine>(&s)) {
            if (p->axis != 0 || p->block_size != b->page_size) {
                return fail(ErrorCode::kInvalidQuantization,
                            "per_block_affine: a block-paged tensor needs axis 0 and block_size = "
                            "page_size (" + dec(b->page_size) + "), got axis " + dec(p->axis) +
                                " and block_size " + dec(p->block_size),
                            q + 4);
            }
        }
    }
    return Status::success();
}

// ---------------------------------------------------------------------------
// Buffer requirements

// The span of element offsets a dense layout addresses, relative to the
// element at byte_offset, or nullopt if it depends on a dynamic dimension.
struct Span {
    bool empty = true;
    i128 lo = 0;
    i128 hi = 0;  // inclusive
};

constexpr i128 kMaxSpan = static_cast<i128>(1) << 100;

Result<Span> strided_span(std::span<const uint64_t> shape, std::span<const int64_t> strides, uint64_t at) {
    Span s;
    for (uint64_t n : shape) {
        if (n == 0) {
            return s;
        }
    }
    s.empty = false;
    for (size_t k = 0; k < shape.size(); ++k) {
        const i128 term = static_cast<i128>(strides[k]) * static_cast<i128>(shape[k] - 1);
        if (term > 0) {
            s.hi += term;
        } else {
            s.lo += term;
        }
        if (s.hi > kMaxSpan || s.lo < -kMaxSpan) {
            return fail(ErrorCode::kSizeOverflow, "strides: the addressed range overflows", at);
        }
    }
    return s;
}

// Span of one tiled level applied to a region of `shape`, levels[i..].
// Recursion depth is bounded by the level count, which check_tiled limits.
// NOLINTNEXTLINE(misc-no-recursion)
Result<Span> tiled_span(const TiledLayout& t, size_t i, std::span<const uint64_t> shape, uint64_t at) {
    const TiledLevel& lv = t.levels[i];
    const size_t rank = shape.size();
    Span s;
    for (uint64_t n : shape) {
        if (n == 0) {
            return s;
        }
    }
    std::vector<uint64_t> grid(rank);
    uint64_t tile_elems = 1;
    uint64_t tiles = 1;
    for (size_t k = 0; k < rank; ++k) {
        grid[k] = ceil_div(shape[k], lv.tile_shape[k]);
        auto te = mul_u64(tile_elems, lv.tile_shape[k]);
        auto tt = mul_u64(tiles, grid[k]);
        if (!te || !tt) {
            return fail(ErrorCode::kSizeOverflow, "tiled: tile or grid element count overflows", at);
        }
        tile_elems = *te;
        tiles = *tt;
    }
    Span outer;
    if (lv.outer_layout == LayoutTag::kStrided) {
        HURRAY_ASSIGN_OR_RETURN(outer, strided_span(grid, lv.outer_strides, at));
    } else {
        outer = {false, 0, static_cast<i128>(tiles) - 1};
    }
    Span inner;
    if (lv.inner_layout == LayoutTag::kStrided) {
        HURRAY_ASSIGN_OR_RETURN(inner, strided_span(lv.tile_shape, lv.inner_strides, at));
    } else if (lv.inner_layout == LayoutTag::kTiled && i + 1 < t.levels.size()) {
        HURRAY_ASSIGN_OR_RETURN(inner, tiled_span(t, i + 1, lv.tile_shape, at));
    } else {
        inner = {false, 0, static_cast<i128>(tile_elems) - 1};
    }
    i128 lo = 0;
    i128 hi = 0;
    if (__builtin_mul_overflow(outer.lo, static_cast<i128>(tile_elems), &lo) ||
        __builtin_mul_overflow(outer.hi, static_cast<i128>(tile_elems), &hi)) {
        return fail(ErrorCode::kSizeOverflow, "tiled: the addressed range overflows", at);
    }
    s.empty = false;
    s.lo = lo + inner.lo;
    s.hi = hi + inner.hi;
    if (s.hi > kMaxSpan || s.lo < -kMaxSpan) {
        return fail(ErrorCode::kSizeOverflow, "tiled: the addressed range overflows", at);
    }
    return s;
}

// Elements of a row- or column-major data buffer: the shape's element count,
// with the blocked axis padded to whole blocks under per-block affine and NF4
// (per-block-affine.md § Padding). The shape has no dynamic dimension.
Result<uint64_t> dense_element_count(const TensorDescriptor& d, uint64_t at) {
    if (auto n = stored_element_count(d)) {
        return *n;
    }
    return fail(ErrorCode::kSizeOverflow, "shape: the stored element count overflows 64 bits", at);
}

// Element span of the dense data buffer, or nullopt if unknown.
Result<std::optional<Span>> dense_span(const Ctx& c) {
    const TensorDescriptor& d = c.d;
    const uint64_t at = c.off.layout;
    if (has_dynamic_dim(d.shape)) {
        return std::optional<Span>();
    }
    if (std::holds_alternative<RowMajorLayout>(d.layout) ||
        std::holds_alternative<ColumnMajorLayout>(d.layout)) {
        HURRAY_ASSIGN_OR_RETURN(uint64_t n, dense_element_count(d, c.off.shape));
        return std::optional<Span>(Span{n == 0, 0, static_cast<i128>(n) - 1});
    }
    HURRAY_ASSIGN_OR_RETURN(uint64_t count, element_count(d.shape));
    if (const auto* s = std::get_if<StridedLayout>(&d.layout)) {
        HURRAY_ASSIGN_OR_RETURN(Span sp, strided_span(d.shape, s->strides, at));
        return std::optional<Span>(sp);
    }
    if (const auto* t = std::get_if<TiledLayout>(&d.layout)) {
        HURRAY_ASSIGN_OR_RETURN(Span sp, tiled_span(*t, 0, d.shape, at));
        return std::optional<Span>(sp);
    }
    uint64_t bits = 0;
    if (const auto* m = std::get_if<MortonLayout>(&d.layout)) {
        for (uint32_t b : m->morton_bits) {
            bits += b;
        }
    } else if (const auto* h = std::get_if<HilbertLayout>(&d.layout)) {
        bits = uint64_t{h->hilbert_order} * h->hilbert_rank;
    } else {
        return std::optional<Span>();  // extension layouts: unknown
    }
    if (count == 0) {
        return std::optional<Span>(Span{});
    }
    return std::optional<Span>(Span{false, 0, (static_cast<i128>(1) << bits) - 1});
}

Result<uint64_t> elems_bytes(const TensorDescriptor& d, uint64_t n, uint64_t at) {
    auto r = d.element_storage_bytes(n);
    if (!r) {
        return Error(r.error().code(), r.error().message(), at);
    }
    return *r;
}

Result<uint64_t> u64_bytes(uint64_t n, uint64_t width, uint64_t at) {
    if (auto r = mul_u64(n, width)) {
        return *r;
    }
    return fail(ErrorCode::kSizeOverflow, "buffer size: " + dec(n) + " entries overflow 64 bits", at);
}

Result<uint64_t> checked_product(std::initializer_list<uint64_t> factors, uint64_t at) {
    uint64_t n = 1;
    for (uint64_t f : factors) {
        auto r = mul_u64(n, f);
        if (!r) {
            return fail(ErrorCode::kSizeOverflow, "buffer size: element count overflows 64 bits", at);
        }
        n = *r;
    }
    return n;
}

// Requirements of the layout's own buffers.
Result<std::vector<BufferRequirement>> layout_requirements(const Ctx& c) {
    const TensorDescriptor& d = c.d;
    const uint32_t rank = d.rank();
    const uint64_t at = c.off.layout;
    const bool type_known = d.element_bits() != 0;
    auto values = [&](uint64_t nnz) -> Result<BufferRequirement> {
        if (!type_known) {
            return BufferRequirement{};
        }
        HURRAY_ASSIGN_OR_RETURN(uint64_t n, elems_bytes(d, nnz, at));
        return BufferRequirement{n, false};
    };
    auto dim = [&](size_t k) -> std::optional<uint64_t> {
        return d.shape[k] == kDynamicDim ? std::nullopt : std::optional<uint64_t>(d.shape[k]);
    };
    std::vector<BufferRequirement> req;

    switch (layout_kind(d.layout)) {
        case LayoutKind::kVirtual: return req;
        case LayoutKind::kExtension: req.push_back({}); return req;
        case LayoutKind::kDense: {
            HURRAY_ASSIGN_OR_RETURN(std::optional<Span> sp, dense_span(c));
            if (!sp || !type_known) {
                req.push_back({});
                return req;
            }
            uint64_t need = 0;
            if (!sp->empty) {
                if (sp->hi + 1 > static_cast<i128>(UINT64_MAX)) {
                    return fail(ErrorCode::kSizeOverflow, "layout: the addressed range exceeds 2^64", at);
                }
                HURRAY_ASSIGN_OR_RETURN(need,
                                        elems_bytes(d, static_cast<uint64_t>(sp->hi + 1), at));
            }
            auto total = add_u64(d.byte_offset, need);
            if (!total) {
                return fail(ErrorCode::kSizeOverflow, "byte_offset: plus the data size overflows",
                            c.off.byte_offset);
            }
            req.push_back({*total, false});
            return req;
        }
        default: break;
    }
    if (const auto* coo = std::get_if<CooLayout>(&d.layout)) {
        HURRAY_ASSIGN_OR_RETURN(BufferRequirement v, values(coo->nnz));
        req.push_back(v);
        HURRAY_ASSIGN_OR_RETURN(uint64_t idx, checked_product({coo->nnz, rank, 8}, at));
        req.push_back({idx, false});
        return req;
    }
    if (std::holds_alternative<CsrLayout>(d.layout) || std::holds_alternative<CscLayout>(d.layout)) {
        const bool csr = std::holds_alternative<CsrLayout>(d.layout);
        const uint64_t nnz = csr ? std::get<CsrLayout>(d.layout).nnz : std::get<CscLayout>(d.layout).nnz;
        HURRAY_ASSIGN_OR_RETURN(BufferRequirement v, values(nnz));
        req.push_back(v);
        HURRAY_ASSIGN_OR_RETURN(uint64_t idx, u64_bytes(nnz, 8, at));
        req.push_back({idx, false});
        if (auto n = dim(csr ? 0 : 1)) {
            HURRAY_ASSIGN_OR_RETURN(uint64_t ptr, u64_bytes(*n + 1 == 0 ? UINT64_MAX : *n + 1, 8, at));
            req.push_back({ptr, false});
        } else {
            req.push_back({});
        }
        return req;
    }
    if (const auto* f = std::get_if<CsfLayout>(&d.layout)) {
        HURRAY_ASSIGN_OR_RETURN(BufferRequirement v, values(f->nnz));
        req.push_back(v);
        const bool empty = f->nnz == 0;
        for (uint32_t l = 0; l < rank; ++l) {
            BufferRequirement pos{l == 0 ? 16U : (empty ? 8U : 16U), false, l != 0};
            BufferRequirement crd{empty ? 0U : 8U, false, true};
            if (l + 1 == rank) {
                HURRAY_ASSIGN_OR_RETURN(uint64_t leaf, u64_bytes(f->nnz, 8, at));
                crd = {leaf, false, false};
            }
            req.push_back(pos);
            req.push_back(crd);
        }
        return req;
    }
    if (const auto* b = std::get_if<BlockPagedLayout>(&d.layout)) {
        if (auto h = dim(1), w = dim(2); h && w && type_known) {
            HURRAY_ASSIGN_OR_RETURN(uint64_t n, checked_product({b->num_pages, b->page_size, *h, *w}, at));
            HURRAY_ASSIGN_OR_RETURN(uint64_t bytes, elems_bytes(d, n, at));
            req.push_back({bytes, false});
        } else {
            req.push_back({});
        }
        const uint64_t width = b->index_type == BlockTableIndexType::kUInt64 ? 8 : 4;
        req.push_back({0, false, true});  // block_table: total_logical_pages entries (data)
        HURRAY_ASSIGN_OR_RETURN(uint64_t seq, u64_bytes(uint64_t{b->num_seqs} + 1, width, at));
        req.push_back({seq, false});
        return req;
    }
    req.push_back({});
    return req;
}

// Number of scale (= zero point) entries of a quantization scheme, or nullopt.
Result<std::optional<uint64_t>> quant_entries(const Ctx& c, const QuantParams& p) {
    const TensorDescriptor& d = c.d;
    const uint64_t at = c.off.quant_payload();
    if (const auto* b = std::get_if<BlockPagedLayout>(&d.layout)) {
        if (std::holds_alternative<PerBlockAffine>(d.quantization->scheme)) {
            // Scales are per page slot (block-paged.md § Per-page-slot parameters).
            HURRAY_ASSIGN_OR_RETURN(uint64_t n, checked_product({b->num_pages, b->page_size}, at));
            return std::optional<uint64_t>(n);
        }
        if (p.block_size != 0) {
            return std::optional<uint64_t>();  // NF4/MXFP on block-paged: not defined by the spec
        }
    }
    if (p.block_size == 0) {
        return std::optional<uint64_t>(d.shape[p.axis]);  // per-channel
    }
    uint64_t outer = 1;
    for (size_t k = 0; k < d.shape.size(); ++k) {
        if (k == p.axis) {
            continue;
        }
        if (d.shape[k] == kDynamicDim) {
            return std::optional<uint64_t>();
        }
        auto r = mul_u64(outer, d.shape[k]);
        if (!r) {
            return fail(ErrorCode::kSizeOverflow, "quantization: block count overflows 64 bits", at);
        }
        outer = *r;
    }
    const uint64_t per_axis = ceil_div(d.shape[p.axis], p.block_size);
    HURRAY_ASSIGN_OR_RETURN(uint64_t n, checked_product({per_axis, outer}, at));
    return std::optional<uint64_t>(n);
}

Status add_quant_requirements(const Ctx& c, std::vector<BufferRequirement>& req) {
    const TensorDescriptor& d = c.d;
    if (!d.quantization) {
        return Status::success();
    }
    const QuantParams p = quant_params(d.quantization->scheme);
    if (!p.known || p.scale_index == kNoParam) {
        return Status::success();
    }
    const uint64_t at = c.off.quant_payload();
    HURRAY_ASSIGN_OR_RETURN(std::optional<uint64_t> entries, quant_entries(c, p));
    std::optional<uint64_t> scale_bytes;
    std::optional<uint64_t> zp_bytes;
    if (entries) {
        HURRAY_ASSIGN_OR_RETURN(uint64_t sb, u64_bytes(*entries, p.scale_bytes, at));
        HURRAY_ASSIGN_OR_RETURN(uint64_t zb, u64_bytes(*entries, 4, at));
        scale_bytes = sb;
        zp_bytes = zb;
    }
    const size_t base = req.size();
    auto slot = [&](uint64_t index) -> BufferRequirement& {
        // Parameter buffers follow the layout's buffers; the indices were
        // validated (index >= base) before requirements are computed.
        const size_t pos = std::max<size_t>(index, base);
        if (req.size() <= pos) {
            req.resize(pos + 1, BufferRequirement{std::nullopt, true});
        }
        return req[pos];
    };
    BufferRequirement& s = slot(p.scale_index);
    s = {scale_bytes, true};
    if (p.zero_point_index != kNoParam) {
        BufferRequirement& z = slot(p.zero_point_index);
        if (p.zero_point_index == p.scale_index) {
            // Shared entry: the concatenation [scales | zero_points].
            std::optional<uint64_t> both;
            if (scale_bytes && zp_bytes) {
                both = add_u64(*scale_bytes, *zp_bytes);
            }
            z = {both, true};
        } else {
            z = {zp_bytes, true};
        }
    }
    return Status::success();
}

Result<std::vector<BufferRequirement>> requirements(const Ctx& c) {
    HURRAY_ASSIGN_OR_RETURN(std::vector<BufferRequirement> req, layout_requirements(c));
    HURRAY_RETURN_IF_ERROR(add_quant_requirements(c, req));
    return req;
}

// ---------------------------------------------------------------------------
// Buffer table

Status check_buffer_table(const Ctx& c) {
    const TensorDescriptor& d = c.d;
    if (d.buffers.size() > 255) {
        return fail(ErrorCode::kInvalidBufferCount,
                    "buffer_count: " + dec(d.buffers.size()) + " exceeds 255", c.off.buffer_table);
    }
    for (uint32_t i = 0; i < d.buffers.size(); ++i) {
        HURRAY_RETURN_IF_ERROR(check_buffer_handle(d.buffers[i], i, c.off.buffer(i)));
        if (i > 0 && (d.buffers[i].device_tag != d.buffers[0].device_tag ||
                      d.buffers[i].memory_class != d.buffers[0].memory_class)) {
            return fail(ErrorCode::kDeviceMismatch,
                        "buffer[" + dec(i) +
                            "].device_tag: all buffers of a tensor must share buffer[0]'s device_tag "
                            "and memory_class",
                        // device_tag is at +12, memory_class at +14.
                        c.off.buffer(i) +
                            (d.buffers[i].device_tag != d.buffers[0].device_tag ? 12 : 14));
        }
    }
    if (std::holds_alternative<CompositeLayout>(d.layout)) {
        return Status::success();  // checked with the layout
    }
    const uint32_t base = layout_buffer_count(d.layout, d.rank());
    const bool extension = std::holds_alternative<ExtensionLayout>(d.layout);
    const uint64_t count = d.buffers.size();
    const uint64_t q = c.off.quant_payload();
    uint32_t params = 0;
    bool params_known = true;
    if (d.quantization) {
        const QuantParams p = quant_params(d.quantization->scheme);
        params_known = p.known;
        auto check_index = [&](uint64_t index, const char* field, uint64_t at) -> Status {
            if (index < base) {
                return fail(ErrorCode::kInvalidQuantizationBuffer,
                            std::string(field) + ": " + dec(index) + " names a " +
                                std::string(layout_name(d.layout_tag())) +
                                " layout buffer; parameters need their own buffers (index >= " +
                                dec(base) + ")",
                            at);
            }
            if (index >= count) {
                return fail(ErrorCode::kInvalidQuantizationBuffer,
                            std::string(field) + ": " + dec(index) + " is not below buffer_count " +
                                dec(count),
                            at);
            }
            return Status::success();
        };
        if (p.known && p.scale_index != kNoParam) {
            // scale_buffer_index: payload + 8 for per-channel, + 12 for the blocked schemes.
            const bool per_channel = std::holds_alternative<PerChannelAffine>(d.quantization->scheme);
            const uint64_t scale_at = q + (per_channel ? 8 : 12);
            HURRAY_RETURN_IF_ERROR(check_index(p.scale_index, "quantization.scale_buffer_index", scale_at));
            params = 1;
            if (p.zero_point_index != kNoParam) {
                HURRAY_RETURN_IF_ERROR(check_index(p.zero_point_index,
                                                   "quantization.zero_point_buffer_index",
                                                   scale_at + 4));
                params += p.zero_point_index != p.scale_index ? 1 : 0;
            }
        }
    }
    auto what = [&d] {
        return std::string(layout_name(d.layout_tag())) +
                             (d.quantization ? " with " + std::string(scheme_name(scheme_tag(d.quantization->scheme))) +
                                                   " quantization"
                                             : "");
    };
    if (!params_known || extension) {
        if (count < base + params) {
            return fail(ErrorCode::kInvalidBufferCount,
                        "buffer_count: " + what() + " needs at least " + dec(base + params) +
                            " buffers, got " + dec(count),
                        c.off.buffer_table);
        }
        return Status::success();
    }
    if (count != base + params) {
        return fail(ErrorCode::kInvalidBufferCount,
                    "buffer_count: " + what() + " needs exactly " + dec(base + params) + " buffers, got " +
                        dec(count),
                    c.off.buffer_table);
    }
    return Status::success();
}

Status check_buffer_sizes(const Ctx& c) {
    const TensorDescriptor& d = c.d;
    const LayoutKind kind = layout_kind(d.layout);
    if ((kind == LayoutKind::kDense || kind == LayoutKind::kExtension) && !d.buffers.empty() &&
        d.byte_offset > d.buffers[0].byte_size) {
        return fail(ErrorCode::kByteOffsetOutOfRange,
                    "byte_offset: " + dec(d.byte_offset) + " exceeds the " + dec(d.buffers[0].byte_size) +
                        " bytes of buffer 0",
                    c.off.byte_offset);
    }
    if (kind == LayoutKind::kDense && d.element_bits() != 0) {
        // Negative strides reach below the element at byte_offset.
        HURRAY_ASSIGN_OR_RETURN(std::optional<Span> sp, dense_span(c));
        if (sp && !sp->empty && sp->lo < 0) {
            if (-sp->lo > static_cast<i128>(UINT64_MAX)) {
                return fail(ErrorCode::kSizeOverflow,
                            "layout: negative strides reach 2^64 or more elements below element [0,...,0]",
                            c.off.layout);
            }
            HURRAY_ASSIGN_OR_RETURN(uint64_t below, elems_bytes(d, static_cast<uint64_t>(-sp->lo), c.off.layout));
            if (d.byte_offset < below) {
                return fail(ErrorCode::kByteOffsetOutOfRange,
                            "byte_offset: " + dec(d.byte_offset) + " is too small; negative strides reach " +
                                dec(below) + " bytes below element [0,...,0]",
                            c.off.byte_offset);
            }
        }
    }
    HURRAY_ASSIGN_OR_RETURN(std::vector<BufferRequirement> req, requirements(c));
    const size_t n = std::min(req.size(), d.buffers.size());
    for (size_t i = 0; i < n; ++i) {
        if (!req[i].min_size) {
            continue;
        }
        const uint64_t want = *req[i].min_size;
        const uint64_t got = d.buffers[i].byte_size;
        if (req[i].exact ? got != want : got < want) {
            return fail(req[i].exact ? ErrorCode::kInvalidQuantizationBuffer : ErrorCode::kBufferTooSmall,
                        "buffer[" + dec(i) + "].byte_size: " + dec(got) + (req[i].exact ? " must be exactly "
                                                                                          : " is below the ") +
                            dec(want) + (req[i].exact ? " for the quantization parameters"
                                                      : " bytes the shape, type and layout require"),
                        c.off.buffer(i));
        }
    }
    return Status::success();
}

// ---------------------------------------------------------------------------
// Optional sections

Status check_shard(const Ctx& c) {
    const TensorDescriptor& d = c.d;
    if (!d.shard) {
        return Status::success();
    }
    const ShardDescriptor& s = *d.shard;
    const uint32_t rank = d.rank();
    const uint64_t at = c.off.shard;
    if (s.parent_shape.size() != rank || s.shard_offset.size() != rank) {
        return fail(ErrorCode::kInvalidShard,
                    "shard: parent_shape and shard_offset must have rank " + dec(rank) + " entries", at);
    }
    for (size_t k = 0; k < rank; ++k) {
        const uint64_t p = s.parent_shape[k];
        const uint64_t o = s.shard_offset[k];
        const uint64_t n = d.shape[k];
        if (p == kDynamicDim || o == kDynamicDim || n == kDynamicDim) {
            // Point at the dynamic field: parent_shape[k], shard_offset[k] or shape[k].
            const uint64_t field = p == kDynamicDim   ? at + 8 * k
                                   : o == kDynamicDim ? at + 8 * (uint64_t{rank} + k)
                                                      : c.off.shape + 8 * k;
            return fail(ErrorCode::kInvalidShard,
                        "shard: dimension " + dec(k) + " is dynamic; shards need static sizes", field);
        }
        auto end = add_u64(o, n);
        if (!end || *end > p) {
            return fail(ErrorCode::kInvalidShard,
                        dim_name("shard.shard_offset", k) + " = " + dec(o) + " plus shape " + dec(n) +
                            " exceeds parent_shape " + dec(p),
                        at + 8 * (rank + k));
        }
    }
    return Status::success();
}

Status check_statistics(const Ctx& c) {
    const TensorDescriptor& d = c.d;
    if (!d.statistics) {
        return Status::success();
    }
    const Statistics& s = *d.statistics;
    const uint64_t at = c.off.statistics;
    if ((s.computed_mask & ~uint32_t{kStatAllValid}) != 0) {
        return fail(ErrorCode::kInvalidStatistics,
                    "statistics.computed_mask: reserved bits set in " + hex(s.computed_mask, 8), at);
    }
    if (!c.opt.strict) {
        return Status::success();
    }
    if ((s.computed_mask & kStatSparsityValid) != 0 && !(s.sparsity_ratio >= 0.0 && s.sparsity_ratio <= 1.0)) {
        return fail(ErrorCode::kInvalidStatistics, "statistics.sparsity_ratio: must be in [0, 1]", at + 16);
    }
    if ((s.computed_mask & kStatValueStatsValid) != 0 && !(s.value_stddev >= 0.0)) {
        return fail(ErrorCode::kInvalidStatistics, "statistics.value_stddev: must be >= 0", at + 56);
    }
    if ((s.computed_mask & kStatNmSparsityValid) != 0 && s.nm_n > s.nm_m) {
        return fail(ErrorCode::kInvalidStatistics,
                    "statistics.nm_n: " + dec(s.nm_n) + " exceeds nm_m " + dec(s.nm_m), at + 64);
    }
    if ((s.computed_mask & kStatNnzValid) != 0) {
        std::optional<uint64_t> nnz;
        if (const auto* l = std::get_if<CooLayout>(&d.layout)) {
            nnz = l->nnz;
        } else if (const auto* l = std::get_if<CsrLayout>(&d.layout)) {
            nnz = l->nnz;
        } else if (const auto* l = std::get_if<CscLayout>(&d.layout)) {
            nnz = l->nnz;
        } else if (const auto* l = std::get_if<CsfLayout>(&d.layout)) {
            nnz = l->nnz;
        }
        if (nnz && *nnz != s.nnz) {
            return fail(ErrorCode::kInvalidStatistics,
                        "statistics.nnz: " + dec(s.nnz) + " disagrees with the layout's nnz " + dec(*nnz),
                        at + 8);
        }
    }
    return Status::success();
}

Status check_member_and_trailing(const Ctx& c) {
    const TensorDescriptor& d = c.d;
    if (d.composite_member) {
        const auto role = static_cast<uint8_t>(d.composite_member->role);
        if (role > 0x01) {
            return fail(ErrorCode::kInvalidComposite,
                        "composite_member.member_role: " + hex(role) + " is reserved", c.off.composite_member);
        }
    }
    if (!d.unknown_trailing_bytes.empty() && d.version_minor <= kDescriptorVersionMinor) {
        return fail(ErrorCode::kInvalidDescriptorLength,
                    "descriptor: trailing bytes are allowed only from a newer minor version",
                    c.off.trailing);
    }
    return Status::success();
}

// Rules on the type, layout and quantization fields, which the buffer
// requirements depend on.
Status check_fields(const Ctx& c) {
    if (c.d.version_major != kDescriptorVersionMajor) {
        return fail(ErrorCode::kUnsupportedVersion,
                    "version_major: " + dec(c.d.version_major) + " is not supported (this reader reads 1)", 4);
    }
    if (c.d.rank() > kMaxRank) {
        return fail(ErrorCode::kRankTooLarge, "rank: " + dec(c.d.rank()) + " exceeds the maximum of 64", 16);
    }
    HURRAY_RETURN_IF_ERROR(check_element_type(c));
    HURRAY_RETURN_IF_ERROR(check_layout(c));
    return check_quantization_fields(c);
}

}  // namespace

namespace {

// Bytes of one scale of a per-block affine scheme; 0 for another type.
uint64_t scale_type_bytes(ElementType t) noexcept {
    switch (t) {
        case ElementType::kFloat16:
        case ElementType::kBFloat16: return 2;
        case ElementType::kFloat32: return 4;
        default: return 0;
    }
}

// The common buffer handle, which check_buffer_handle accepts: CPU memory,
// producer-synced, standard class, a power-of-two alignment of at least 64
// (or any power of two for an empty buffer). Others go to check_buffer_handle.
bool cpu_buffer_valid(const BufferHandle& h) noexcept {
    return h.device_tag == DeviceTag::kCpu && h.sync_mode == SyncMode::kProducerSynced &&
           h.memory_class == MemoryClass::kStandard && is_pow2(h.alignment) &&
           (h.byte_size == 0 || h.alignment >= kMinBufferAlignment);
}

// stored_element_count without quantization (no padded axis), in one pass:
// nullopt for a dynamic dimension or an overflowing product, 0 when a
// dimension is 0 (whatever the others).
std::optional<uint64_t> plain_element_count(std::span<const uint64_t> shape) noexcept {
    uint64_t n = 1;
    bool overflow = false;
    bool zero = false;
    for (const uint64_t dim : shape) {
        if (dim == kDynamicDim) {
            return std::nullopt;
        }
        zero = zero || dim == 0;
        overflow = __builtin_mul_overflow(n, dim, &n) || overflow;
    }
    if (zero) {
        return uint64_t{0};
    }
    if (overflow) {
        return std::nullopt;
    }
    return n;
}

// The per-block affine part of plain_dense_valid: the scheme's fields, and
// its scale (and zero-point) buffers at indices 1 (and 2), each exactly the
// size of one entry per block.
bool per_block_valid(const TensorDescriptor& d, const PerBlockAffine& p) noexcept {
    using E = ElementType;
    const E t = d.element_type;
    if (t != E::kInt8 && t != E::kUInt8 && t != E::kInt4 && t != E::kUInt4 && t != E::kInt2 && t != E::kUInt2) {
        return false;
    }
    const uint64_t scale_bytes = scale_type_bytes(p.scale_type);
    if (p.axis >= d.shape.size() || scale_bytes == 0 || !is_pow2(p.block_size) || p.block_size < 2 ||
        p.block_size > 0x80000000U) {
        return false;
    }
    const uint64_t len = d.shape[p.axis];
    if (len == kDynamicDim || (len > 0 && p.block_size > len)) {
        return false;
    }
    const bool zp = p.zero_point_buffer_index.has_value();
    if (p.scale_buffer_index != 1 || (zp && *p.zero_point_buffer_index != 2) ||
        d.buffers.size() != (zp ? 3U : 2U)) {
        return false;
    }
    uint64_t entries = ceil_div(len, p.block_size);
    for (size_t k = 0; k < d.shape.size(); ++k) {
        if (k == p.axis) {
            continue;
        }
        if (d.shape[k] == kDynamicDim) {
            return false;
        }
        const auto next = mul_u64(entries, d.shape[k]);
        if (!next) {
            return false;
        }
        entries = *next;
    }
    const auto scales = mul_u64(entries, scale_bytes);
    const auto zero_points = mul_u64(entries, 4);
    return scales && zero_points && d.buffers[1].byte_size == *scales &&
           (!zp || d.buffers[2].byte_size == *zero_points);
}

}  // namespace

std::optional<uint64_t> plain_storage_bytes(uint32_t bits, uint64_t count) noexcept {
    if (bits == 1 || bits == 2 || bits == 4) {
        return ceil_div(count, 8 / bits);
    }
    if (bits == 6) {
        return mul_u64(ceil_div(count, 4), 3);
    }
    if (bits >= 8 && bits % 8 == 0) {
        return mul_u64(count, bits / 8);
    }
    return std::nullopt;
}

bool plain_dense_valid(const TensorDescriptor& d) noexcept {
    if (d.version_major != kDescriptorVersionMajor || d.shard || d.statistics || d.extension_type ||
        d.composite_member || !d.unknown_trailing_bytes.empty() || d.buffers.empty() ||
        d.shape.size() > kMaxRank) {
        return false;
    }
    const bool row = std::holds_alternative<RowMajorLayout>(d.layout);
    const bool column = std::holds_alternative<ColumnMajorLayout>(d.layout);
    if (!row && !(column && !d.shape.empty())) {
        return false;
    }
    // Assigned tags are accepted in both modes and are not private (no
    // extension type section is needed).
    const TypeTagClass cls = classify_type_tag(type_tag(d.element_type));
    if (cls != TypeTagClass::kTier1 && cls != TypeTagClass::kTier2) {
        return false;
    }
    if (d.quantization) {
        const auto* p = std::get_if<PerBlockAffine>(&d.quantization->scheme);
        if (p == nullptr || !d.quantization->trailing_padding.empty() || !per_block_valid(d, *p)) {
            return false;
        }
    } else if (d.buffers.size() != 1) {
        return false;
    }
    const BufferHandle& b = d.buffers[0];
    for (uint32_t i = 0; i < d.buffers.size(); ++i) {
        const BufferHandle& h = d.buffers[i];
        if (!(cpu_buffer_valid(h) || check_buffer_handle(h, i).ok()) || h.device_tag != b.device_tag ||
            h.memory_class != b.memory_class) {
            return false;
        }
    }
    const uint32_t bits = bit_width(d.element_type);
    const std::optional<uint64_t> n =
        d.quantization ? stored_element_count(d) : plain_element_count(d.shape);  // nullopt: dynamic or overflow
    if (bits == 0 || !n) {
        return false;
    }
    uint64_t need = 0;
    if (*n > 0) {
        const std::optional<uint64_t> bytes = plain_storage_bytes(bits, *n);
        if (!bytes) {
            return false;
        }
        need = *bytes;
    }
    const std::optional<uint64_t> total = add_u64(d.byte_offset, need);
    return total && d.byte_offset <= b.byte_size && *total <= b.byte_size;
}

Status check_descriptor_at(const TensorDescriptor& d, const DecodeOptions& options,
                           const SectionOffsets& off) {
    if (plain_dense_valid(d)) {
        return Status::success();
    }
    return check_descriptor_full(d, options, off);
}

Status check_descriptor_full(const TensorDescriptor& d, const DecodeOptions& options,
                             const SectionOffsets& off) {
    const Ctx c{d, options, off};
    HURRAY_RETURN_IF_ERROR(check_fields(c));
    HURRAY_RETURN_IF_ERROR(check_buffer_table(c));
    HURRAY_RETURN_IF_ERROR(check_buffer_sizes(c));
    HURRAY_RETURN_IF_ERROR(check_shard(c));
    HURRAY_RETURN_IF_ERROR(check_statistics(c));
    return check_member_and_trailing(c);
}

}  // namespace hurray::detail

namespace hurray {

Status check_descriptor(const TensorDescriptor& d, const DecodeOptions& options) {
    if (detail::plain_dense_valid(d)) {
        return Status::success();  // no offsets needed: there is no error to place
    }
    return detail::check_descriptor_full(d, options, detail::section_offsets(d));
}

Result<std::vector<BufferRequirement>> required_buffer_sizes(const TensorDescriptor& d) {
    const detail::SectionOffsets off = detail::section_offsets(d);
    const DecodeOptions permissive{.strict = false};
    const detail::Ctx c{d, permissive, off};
    HURRAY_RETURN_IF_ERROR(detail::check_fields(c));
    if (d.quantization) {
        // Parameter indices must follow the layout's buffers for the result
        // to be a buffer table.
        const detail::QuantParams p = detail::quant_params(d.quantization->scheme);
        const uint32_t base = layout_buffer_count(d.layout, d.rank());
        for (uint64_t idx : {p.scale_index, p.zero_point_index}) {
            if (p.known && idx != detail::kNoParam && (idx < base || idx >= 255)) {
                return Error(ErrorCode::kInvalidQuantizationBuffer,
                             "quantization: parameter buffer index " + dec(idx) +
                                 " must be in [" + dec(base) + ", 255)",
                             off.quant_payload());
            }
        }
    }
    return detail::requirements(c);
}

}  // namespace hurray
