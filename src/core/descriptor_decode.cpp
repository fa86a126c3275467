// SPDX-License-Identifier: Apache-2.0
// Tensor descriptor decoding (metadata.md): untrusted bytes to the model.
//
// Parsing reads every field through ByteReader, which bounds-checks each read
// against `descriptor_length`. Rules that the model cannot represent (reserved
// bytes, reserved flag bits, the symmetric zero-point sentinel, boolean bytes)
// are enforced here; every other rule is enforced by check_descriptor_at, the
// same function the encoder runs, so that decode and encode agree.
#include <cstring>
#include <optional>
#include <string>

#include "hurray/core/buffer_handle.hpp"
#include "hurray/core/byte_io.hpp"
#include "hurray/core/checked_math.hpp"
#include "hurray/core/element_type.hpp"
#include "core/descriptor_internal.hpp"
#include "hurray/core/text.hpp"
#include "hurray/core/descriptor_codec.hpp"

namespace hurray {
namespace {


constexpr uint32_t kSymmetricFlag = 0x0001;
constexpr uint32_t kNoZeroPoint = 0xFFFFFFFF;

// A boolean byte: 0 or 1; in permissive mode any non-zero byte reads as true.
Result<bool> read_bool(ByteReader& r, const char* field, bool strict) {
    const uint64_t at = r.abs_pos();
    HURRAY_ASSIGN_OR_RETURN(uint8_t v, r.u8(field));
    if (v > 1 && strict) {
        return Error(ErrorCode::kInvalidLayout,
                     std::string(field) + ": boolean byte is " + hex(v) + ", must be 0x00 or 0x01", at);
    }
    return v != 0;
}

template <typename T>
Result<std::vector<T>> read_array(ByteReader& r, uint32_t n, const char* field) {
    HURRAY_RETURN_IF_ERROR(r.need(uint64_t{sizeof(T)} * n, field));
    std::vector<T> v(n);
    for (uint32_t i = 0; i < n; ++i) {
        if constexpr (sizeof(T) == 8) {
            HURRAY_ASSIGN_OR_RETURN(uint64_t x, r.u64(field));
            v[i] = static_cast<T>(x);
        } else {
            HURRAY_ASSIGN_OR_RETURN(uint32_t x, r.u32(field));
            v[i] = static_cast<T>(x);
        }
    }
    return v;
}

Result<TiledLayout> parse_tiled(ByteReader& r, uint32_t rank, const DecodeOptions& opt) {
    TiledLayout t;
    for (uint32_t depth = 0;; ++depth) {
        if (depth >= opt.max_tiled_depth) {
            return Error(ErrorCode::kNestingTooDeep,
                         "tiled: recursive tiling deeper than " + dec(opt.max_tiled_depth) + " levels",
                         r.abs_pos());
        }
        TiledLevel lv;
        HURRAY_ASSIGN_OR_RETURN(lv.tile_shape, read_array<uint64_t>(r, rank, "tiled.tile_shape"));
        HURRAY_ASSIGN_OR_RETURN(uint8_t outer, r.u8("tiled.outer_layout"));
        HURRAY_ASSIGN_OR_RETURN(uint8_t inner, r.u8("tiled.inner_layout"));
        lv.outer_layout = static_cast<LayoutTag>(outer);
        lv.inner_layout = static_cast<LayoutTag>(inner);
        HURRAY_RETURN_IF_ERROR(r.reserved(2, "tiled._reserved"));
        if (lv.outer_layout == LayoutTag::kStrided) {
            HURRAY_ASSIGN_OR_RETURN(lv.outer_strides, read_array<int64_t>(r, rank, "tiled.outer_strides"));
        }
        if (lv.inner_layout == LayoutTag::kStrided) {
            HURRAY_ASSIGN_OR_RETURN(lv.inner_strides, read_array<int64_t>(r, rank, "tiled.inner_strides"));
        }
        t.levels.push_back(std::move(lv));
        if (t.levels.back().inner_layout != LayoutTag::kTiled) {
            return t;
        }
    }
}

Result<LayoutDescriptor> parse_layout(ByteReader& r, uint8_t tag, uint32_t rank,
                                      const DecodeOptions& opt) {
    switch (tag) {
        case 0x01: return LayoutDescriptor{RowMajorLayout{}};
        case 0x02: return LayoutDescriptor{ColumnMajorLayout{}};
        case 0x03: {
            StridedLayout s;
            HURRAY_ASSIGN_OR_RETURN(s.strides, read_array<int64_t>(r, rank, "strided.strides"));
            return LayoutDescriptor{std::move(s)};
        }
        case 0x04: {
            HURRAY_ASSIGN_OR_RETURN(TiledLayout t, parse_tiled(r, rank, opt));
            return LayoutDescriptor{std::move(t)};
        }
        case 0x05: {
            MortonLayout m;
            HURRAY_ASSIGN_OR_RETURN(m.morton_bits, read_array<uint32_t>(r, rank, "morton.morton_bits"));
            return LayoutDescriptor{std::move(m)};
        }
        case 0x06: {
            CooLayout c;
            HURRAY_ASSIGN_OR_RETURN(c.nnz, r.u64("coo.nnz"));
            HURRAY_ASSIGN_OR_RETURN(c.is_sorted, read_bool(r, "coo.is_sorted", opt.strict));
            HURRAY_RETURN_IF_ERROR(r.reserved(7, "coo._reserved"));
            return LayoutDescriptor{c};
        }
        case 0x07: {
            CsrLayout c;
            HURRAY_ASSIGN_OR_RETURN(c.nnz, r.u64("csr.nnz"));
            HURRAY_RETURN_IF_ERROR(r.reserved(8, "csr._reserved"));
            return LayoutDescriptor{c};
        }
        case 0x08: {
            CscLayout c;
            HURRAY_ASSIGN_OR_RETURN(c.nnz, r.u64("csc.nnz"));
            HURRAY_RETURN_IF_ERROR(r.reserved(8, "csc._reserved"));
            return LayoutDescriptor{c};
        }
        case 0x09: {
            CsfLayout c;
            HURRAY_ASSIGN_OR_RETURN(c.nnz, r.u64("csf.nnz"));
            HURRAY_ASSIGN_OR_RETURN(c.mode_order, read_array<uint32_t>(r, rank, "csf.mode_order"));
            HURRAY_RETURN_IF_ERROR(r.reserved(8, "csf._reserved"));
            return LayoutDescriptor{std::move(c)};
        }
        case 0x0A: {
            BlockPagedLayout b;
            HURRAY_ASSIGN_OR_RETURN(b.page_size, r.u32("block_paged.page_size"));
            HURRAY_ASSIGN_OR_RETURN(b.num_pages, r.u64("block_paged.num_pages"));
            HURRAY_ASSIGN_OR_RETURN(b.paged_axis, r.u32("block_paged.paged_axis"));
            HURRAY_ASSIGN_OR_RETURN(b.num_seqs, r.u32("block_paged.num_seqs"));
            HURRAY_ASSIGN_OR_RETURN(uint8_t role, r.u8("block_paged.kv_role"));
            b.kv_role = static_cast<KvRole>(role);
            HURRAY_ASSIGN_OR_RETURN(b.layer_index, r.u32("block_paged.layer_index"));
            HURRAY_ASSIGN_OR_RETURN(uint8_t index_type, r.u8("block_paged.block_table_index_type"));
            b.index_type = static_cast<BlockTableIndexType>(index_type);
            HURRAY_RETURN_IF_ERROR(r.reserved(6, "block_paged._reserved"));
            return LayoutDescriptor{b};
        }
        case 0x0B: {
            CompositeLayout c;
            HURRAY_ASSIGN_OR_RETURN(uint8_t rule, r.u8("composite.composition_rule"));
            HURRAY_ASSIGN_OR_RETURN(uint8_t op, r.u8("composite.combine_op"));
            c.rule = static_cast<CompositionRule>(rule);
            c.combine_op = static_cast<CombineOp>(op);
            HURRAY_RETURN_IF_ERROR(r.reserved(2, "composite._reserved"));
            HURRAY_ASSIGN_OR_RETURN(c.member_count, r.u32("composite.member_count"));
            return LayoutDescriptor{c};
        }
        case 0x40: {
            HilbertLayout h;
            HURRAY_ASSIGN_OR_RETURN(h.hilbert_order, r.u32("hilbert.hilbert_order"));
            HURRAY_ASSIGN_OR_RETURN(h.hilbert_rank, r.u32("hilbert.hilbert_rank"));
            return LayoutDescriptor{h};
        }
        default: break;
    }
    const uint64_t tag_at = 15;
    if (tag == 0x00 || tag == 0xFF) {
        return Error(ErrorCode::kInvalidLayoutTag, "layout_tag: " + hex(tag) + " is invalid", tag_at);
    }
    if (tag < 0xF0) {
        // The length of an unassigned layout's fields is unknown, so the buffer
        // table cannot be located: no mode can accept it.
        return Error(ErrorCode::kUnknownLayoutTag,
                     "layout_tag: " + hex(tag) + " is reserved or unassigned", tag_at);
    }
    ExtensionLayout e;
    e.tag = tag;
    HURRAY_ASSIGN_OR_RETURN(e.layout_id, r.u64("extension.extension_layout_id"));
    HURRAY_ASSIGN_OR_RETURN(uint32_t len, r.u32("extension.extension_data_length"));
    HURRAY_ASSIGN_OR_RETURN(auto data, r.bytes(len, "extension.extension_data"));
    e.data.assign(data.begin(), data.end());
    return LayoutDescriptor{std::move(e)};
}

Result<BufferHandle> parse_buffer(ByteReader& r) {
    BufferHandle h;
    HURRAY_ASSIGN_OR_RETURN(h.byte_size, r.u64("buffer.byte_size"));
    HURRAY_ASSIGN_OR_RETURN(h.alignment, r.u32("buffer.alignment"));
    HURRAY_ASSIGN_OR_RETURN(uint8_t dev, r.u8("buffer.device_tag"));
    HURRAY_ASSIGN_OR_RETURN(uint8_t sync, r.u8("buffer.sync_mode"));
    HURRAY_ASSIGN_OR_RETURN(uint8_t cls, r.u8("buffer.memory_class"));
    h.device_tag = static_cast<DeviceTag>(dev);
    h.sync_mode = static_cast<SyncMode>(sync);
    h.memory_class = static_cast<MemoryClass>(cls);
    HURRAY_RETURN_IF_ERROR(r.reserved(1, "buffer._reserved"));
    return h;
}

Status check_flags(uint16_t flags, uint16_t allowed, const char* scheme, uint64_t at) {
    if ((flags & ~allowed) != 0) {
        return Error(ErrorCode::kReservedFlagBits,
                     std::string(scheme) + ".flags: reserved bits set in " + hex(flags, 4), at);
    }
    return Status::success();
}

// Reads a zero-point index and applies the SYMMETRIC flag.
Result<std::optional<uint32_t>> read_zero_point(ByteReader& r, uint16_t flags, const char* field) {
    const uint64_t at = r.abs_pos();
    HURRAY_ASSIGN_OR_RETURN(uint32_t zp, r.u32(field));
    if ((flags & kSymmetricFlag) == 0) {
        return std::optional<uint32_t>(zp);
    }
    if (zp != kNoZeroPoint) {
        return Error(ErrorCode::kInvalidQuantization,
                     std::string(field) + ": SYMMETRIC is set, so it must be 0xFFFFFFFF, got " + dec(zp),
                     at);
    }
    return std::optional<uint32_t>();
}

// Parses a quantization payload of exactly `r.remaining()` bytes.
Result<QuantizationDescriptor> parse_quantization(ByteReader& r) {
    const uint64_t start = r.abs_pos();
    const size_t len = r.remaining();
    if (len < kQuantHeaderSize) {
        return Error(ErrorCode::kInvalidQuantization,
                     "quantization_length: " + dec(len) + " is shorter than the 4-byte header", start - 4);
    }
    HURRAY_ASSIGN_OR_RETURN(uint8_t tag, r.u8("quantization.scheme_tag"));
    HURRAY_ASSIGN_OR_RETURN(uint8_t version, r.u8("quantization.scheme_version"));
    HURRAY_ASSIGN_OR_RETURN(uint16_t flags, r.u16("quantization.flags"));
    QuantizationDescriptor q;
    if (tag < 0x01 || tag > 0x05) {
        OpaqueQuantization o;
        o.scheme_tag = tag;
        o.scheme_version = version;
        o.flags = flags;
        HURRAY_ASSIGN_OR_RETURN(auto payload, r.bytes(r.remaining(), "quantization.payload"));
        o.payload.assign(payload.begin(), payload.end());
        q.scheme = std::move(o);
        return q;
    }
    auto name = [tag] { return std::string(scheme_name(tag)); };
    if (version == 0) {
        return Error(ErrorCode::kInvalidQuantization, name() + ".scheme_version: 0 is invalid", start + 1);
    }
    if (version > kQuantSchemeVersion) {
        return Error(ErrorCode::kUnsupportedQuantizationVersion,
                     name() + ".scheme_version: " + dec(version) + " is newer than the supported 1",
                     start + 1);
    }
    static constexpr uint32_t kSizes[] = {0, 16, 20, 24, 16, 16};
    if (len < kSizes[tag]) {
        return Error(ErrorCode::kInvalidQuantization,
                     "quantization_length: " + dec(len) + " is shorter than the " + dec(kSizes[tag]) +
                         " bytes of " + name(),
                     start - 4);
    }
    switch (tag) {
        case 0x01: {
            HURRAY_RETURN_IF_ERROR(check_flags(flags, 0, "per_tensor_affine", start + 2));
            PerTensorAffine s;
            HURRAY_ASSIGN_OR_RETURN(s.scale, r.f32("per_tensor_affine.scale"));
            HURRAY_ASSIGN_OR_RETURN(s.zero_point, r.i32("per_tensor_affine.zero_point"));
            HURRAY_RETURN_IF_ERROR(r.reserved(4, "per_tensor_affine._reserved"));
            q.scheme = s;
            break;
        }
        case 0x02: {
            HURRAY_RETURN_IF_ERROR(check_flags(flags, kSymmetricFlag, "per_channel_affine", start + 2));
            PerChannelAffine s;
            HURRAY_ASSIGN_OR_RETURN(s.axis, r.u32("per_channel_affine.axis"));
            HURRAY_ASSIGN_OR_RETURN(s.scale_buffer_index, r.u32("per_channel_affine.scale_buffer_index"));
            HURRAY_ASSIGN_OR_RETURN(s.zero_point_buffer_index,
                                    read_zero_point(r, flags, "per_channel_affine.zero_point_buffer_index"));
            HURRAY_ASSIGN_OR_RETURN(uint8_t st, r.u8("per_channel_affine.scale_type_tag"));
            s.scale_type = static_cast<ElementType>(st);
            HURRAY_RETURN_IF_ERROR(r.reserved(3, "per_channel_affine._reserved"));
            q.scheme = s;
            break;
        }
        case 0x03: {
            HURRAY_RETURN_IF_ERROR(check_flags(flags, kSymmetricFlag, "per_block_affine", start + 2));
            PerBlockAffine s;
            HURRAY_ASSIGN_OR_RETURN(s.axis, r.u32("per_block_affine.axis"));
            HURRAY_ASSIGN_OR_RETURN(s.block_size, r.u32("per_block_affine.block_size"));
            HURRAY_ASSIGN_OR_RETURN(s.scale_buffer_index, r.u32("per_block_affine.scale_buffer_index"));
            HURRAY_ASSIGN_OR_RETURN(s.zero_point_buffer_index,
                                    read_zero_point(r, flags, "per_block_affine.zero_point_buffer_index"));
            HURRAY_ASSIGN_OR_RETURN(uint8_t st, r.u8("per_block_affine.scale_type_tag"));
            s.scale_type = static_cast<ElementType>(st);
            HURRAY_RETURN_IF_ERROR(r.reserved(3, "per_block_affine._reserved"));
            q.scheme = s;
            break;
        }
        default: {  // NF4 (0x04) and MXFP (0x05) share one wire shape
            const char* n = tag == 0x04 ? "nf4" : "mxfp";
            HURRAY_RETURN_IF_ERROR(check_flags(flags, 0, n, start + 2));
            uint32_t axis = 0;
            uint32_t block = 0;
            uint32_t scale = 0;
            HURRAY_ASSIGN_OR_RETURN(axis, r.u32(tag == 0x04 ? "nf4.axis" : "mxfp.axis"));
            HURRAY_ASSIGN_OR_RETURN(block, r.u32(tag == 0x04 ? "nf4.block_size" : "mxfp.block_size"));
            HURRAY_ASSIGN_OR_RETURN(scale, r.u32(tag == 0x04 ? "nf4.scale_buffer_index"
                                                             : "mxfp.scale_buffer_index"));
            if (tag == 0x04) {
                q.scheme = Nf4Quantization{axis, block, scale};
            } else {
                q.scheme = MxfpQuantization{axis, block, scale};
            }
            break;
        }
    }
    HURRAY_ASSIGN_OR_RETURN(auto pad, r.bytes(r.remaining(), "quantization.padding"));
    q.trailing_padding.assign(pad.begin(), pad.end());
    return q;
}

Result<Statistics> parse_statistics(ByteReader& r, bool strict) {
    HURRAY_RETURN_IF_ERROR(r.need(kStatisticsSize, "statistics"));
    Statistics s;
    HURRAY_ASSIGN_OR_RETURN(s.computed_mask, r.u32("statistics.computed_mask"));
    HURRAY_RETURN_IF_ERROR(r.reserved(4, "statistics._reserved"));
    HURRAY_ASSIGN_OR_RETURN(s.nnz, r.u64("statistics.nnz"));
    HURRAY_ASSIGN_OR_RETURN(s.sparsity_ratio, r.f64("statistics.sparsity_ratio"));
    HURRAY_ASSIGN_OR_RETURN(s.value_min, r.f64("statistics.value_min"));
    HURRAY_ASSIGN_OR_RETURN(s.value_max, r.f64("statistics.value_max"));
    HURRAY_ASSIGN_OR_RETURN(s.value_abs_max, r.f64("statistics.value_abs_max"));
    HURRAY_ASSIGN_OR_RETURN(s.value_mean, r.f64("statistics.value_mean"));
    HURRAY_ASSIGN_OR_RETURN(s.value_stddev, r.f64("statistics.value_stddev"));
    HURRAY_ASSIGN_OR_RETURN(s.nm_n, r.u8("statistics.nm_n"));
    HURRAY_ASSIGN_OR_RETURN(s.nm_m, r.u8("statistics.nm_m"));
    auto stat_bool = [&](const char* field) -> Result<bool> {
        auto v = read_bool(r, field, strict);
        if (!v) {
            return Error(ErrorCode::kInvalidStatistics, v.error().message(), v.error().offset());
        }
        return *v;
    };
    HURRAY_ASSIGN_OR_RETURN(s.has_nan, stat_bool("statistics.has_nan"));
    HURRAY_ASSIGN_OR_RETURN(s.has_inf, stat_bool("statistics.has_inf"));
    HURRAY_RETURN_IF_ERROR(r.reserved(4, "statistics._reserved2"));
    return s;
}

Result<ExtensionTypeDescriptor> parse_extension_type(ByteReader& r, bool strict) {
    HURRAY_RETURN_IF_ERROR(r.need(kExtensionTypeSize, "extension_type"));
    auto ext_bool = [&](const char* field) -> Result<bool> {
        auto v = read_bool(r, field, strict);
        if (!v) {
            return Error(ErrorCode::kInvalidExtensionType, v.error().message(), v.error().offset());
        }
        return *v;
    };
    ExtensionTypeDescriptor e;
    HURRAY_ASSIGN_OR_RETURN(e.bit_width, r.u32("extension_type.bit_width"));
    HURRAY_ASSIGN_OR_RETURN(e.packing_factor, r.u8("extension_type.packing_factor"));
    HURRAY_ASSIGN_OR_RETURN(e.is_float, ext_bool("extension_type.is_float"));
    HURRAY_ASSIGN_OR_RETURN(e.is_signed, ext_bool("extension_type.is_signed"));
    HURRAY_ASSIGN_OR_RETURN(e.sign_bits, r.u8("extension_type.sign_bits"));
    HURRAY_ASSIGN_OR_RETURN(e.exponent_bits, r.u8("extension_type.exponent_bits"));
    HURRAY_ASSIGN_OR_RETURN(e.mantissa_bits, r.u8("extension_type.mantissa_bits"));
    HURRAY_RETURN_IF_ERROR(r.reserved(2, "extension_type._reserved"));
    HURRAY_ASSIGN_OR_RETURN(e.exponent_bias, r.u32("extension_type.exponent_bias"));
    HURRAY_ASSIGN_OR_RETURN(e.has_nan, ext_bool("extension_type.has_nan"));
    HURRAY_ASSIGN_OR_RETURN(e.has_inf, ext_bool("extension_type.has_inf"));
    HURRAY_RETURN_IF_ERROR(r.reserved(2, "extension_type._reserved2"));
    return e;
}

// The common descriptor, read in one pass: no optional section but
// (optionally) a 24-byte per-block affine quantization, a row- or
// column-major layout, no byte after the last field, every reserved byte
// zero. Fills `d` and returns true only then; false otherwise (with `d`
// partly filled: the caller drops it) and the general parser decides, so
// every error still comes from it. `length` (from peek_length) is at most
// bytes.size() and at least the fixed header.
bool parse_plain_dense(std::span<const uint8_t> bytes, uint32_t length, TensorDescriptor& d) {
    // SAFETY: length >= 20 (peek_length) and length <= bytes.size() (the
    // caller), so the 20 header bytes are readable; everything after them is
    // read only once `length` is proved to equal the exact extent of the
    // fields read (table + 1 + 16 per buffer + 28 when quantized), so every
    // load below stays inside the first `length` bytes.
    const uint8_t* p = bytes.data();
    const uint8_t major = p[4];
    const uint8_t minor = p[5];
    const auto flags = load_le<uint32_t>(p + 10);
    const uint8_t type = p[14];
    const uint8_t layout = p[15];
    const auto rank = load_le<uint32_t>(p + 16);
    if ((flags != 0 && flags != kHasQuantization) || (layout != 0x01 && layout != 0x02) || rank > kMaxRank) {
        return false;
    }
    // Header, shape, byte_offset, buffer_count: then 16 bytes per buffer,
    // the quantization section (length + 24 bytes) when flagged, nothing more.
    constexpr uint64_t kPerBlockSection = 4 + 24;
    const uint64_t table = uint64_t{kFixedHeaderSize} + uint64_t{8} * rank + 8;
    if (length < table + 1) {
        return false;
    }
    const uint32_t count = p[table];
    const uint64_t quant = flags != 0 ? kPerBlockSection : 0;
    if (length != table + 1 + uint64_t{kBufferHandleSize} * count + quant) {
        return false;
    }
    d.version_major = major;
    d.version_minor = minor;
    d.element_type = static_cast<ElementType>(type);
    p += kFixedHeaderSize;
    d.shape.resize(rank);
    for (uint64_t& dim : d.shape) {
        dim = load_le<uint64_t>(p);
        p += 8;
    }
    d.byte_offset = load_le<uint64_t>(p);
    p += 8;
    if (layout == 0x02) {
        d.layout = ColumnMajorLayout{};
    }
    p += 1;  // buffer_count
    d.buffers.resize(count);
    for (BufferHandle& h : d.buffers) {
        h.byte_size = load_le<uint64_t>(p);
        h.alignment = load_le<uint32_t>(p + 8);
        h.device_tag = static_cast<DeviceTag>(p[12]);
        h.sync_mode = static_cast<SyncMode>(p[13]);
        h.memory_class = static_cast<MemoryClass>(p[14]);
        if (p[15] != 0) {
            return false;  // buffer._reserved: the general parser reports it
        }
        p += kBufferHandleSize;
    }
    if (flags != 0) {
        // quantization_length 24: per_block_affine (0x03) version 1, flags
        // 0 or SYMMETRIC, axis, block_size, scale index, zero-point index
        // (0xFFFFFFFF when SYMMETRIC), scale type, 3 reserved bytes.
        const auto qlen = load_le<uint32_t>(p);
        const uint8_t tag = p[4];
        const uint8_t version = p[5];
        const uint32_t qflags = load_le<uint16_t>(p + 6);
        PerBlockAffine q;
        q.axis = load_le<uint32_t>(p + 8);
        q.block_size = load_le<uint32_t>(p + 12);
        q.scale_buffer_index = load_le<uint32_t>(p + 16);
        const auto zp = load_le<uint32_t>(p + 20);
        q.scale_type = static_cast<ElementType>(p[24]);
        const bool reserved_zero = p[25] == 0 && p[26] == 0 && p[27] == 0;
        if (qlen != 24 || tag != 0x03 || version != 1 || qflags > kSymmetricFlag || !reserved_zero ||
            (qflags == kSymmetricFlag && zp != kNoZeroPoint)) {
            return false;
        }
        if (qflags == 0) {
            q.zero_point_buffer_index = zp;
        }
        d.quantization = QuantizationDescriptor{q, {}};
    }
    return true;
}

// Puts every optional section of `d` back to none, and drops its unknown trailing
// bytes; the shape, layout and buffer table are the caller's to set.
void clear_sections(TensorDescriptor& d) noexcept {
    d.quantization.reset();
    d.shard.reset();
    d.statistics.reset();
    d.extension_type.reset();
    d.composite_member.reset();
    d.unknown_trailing_bytes.clear();
}

// The commonest descriptor, decoded and checked in one pass over its bytes,
// without building it first: no section (flags 0), a row-major layout (or a
// column-major one of rank >= 1), one buffer on the CPU (producer-synced,
// standard memory, a power-of-two alignment of at least 64 unless empty, its
// reserved byte zero), an assigned element type, no dynamic dimension, and
// byte_offset plus the elements inside that buffer. Everything it accepts,
// parse_plain_dense and plain_dense_valid accept too, with the same model.
// Fills `d` and returns true only then; returns false with `d` untouched
// otherwise (the one-pass parse and check, then the general parser, decide).
// `bytes` holds the descriptor_length (>= 20) bytes, magic and version checked.
bool decode_simple_dense(std::span<const uint8_t> bytes, TensorDescriptor& d) {
    // SAFETY: bytes.size() >= kFixedHeaderSize, so the header loads are in
    // bounds; the rest is read only once bytes.size() is proved to equal the
    // exact extent of the shape, byte_offset, buffer_count and one handle.
    const uint8_t* p = bytes.data();
    const auto flags = load_le<uint32_t>(p + 10);
    const uint8_t type = p[14];
    const uint8_t layout = p[15];
    const auto rank = load_le<uint32_t>(p + 16);
    if (flags != 0 || rank > kMaxRank || (layout != 0x01 && (layout != 0x02 || rank == 0))) {
        return false;
    }
    const uint64_t table = uint64_t{kFixedHeaderSize} + uint64_t{8} * rank + 8;
    if (bytes.size() != table + 1 + kBufferHandleSize || p[table] != 1) {
        return false;
    }
    const TypeTagClass cls = classify_type_tag(type);
    const uint32_t bits = bit_width(static_cast<ElementType>(type));
    if ((cls != TypeTagClass::kTier1 && cls != TypeTagClass::kTier2) || bits == 0) {
        return false;
    }
    const uint8_t* dims = p + kFixedHeaderSize;
    uint64_t count = 1;
    bool overflow = false;
    bool zero = false;
    for (uint32_t k = 0; k < rank; ++k) {
        const auto dim = load_le<uint64_t>(dims + uint64_t{8} * k);
        if (dim == kDynamicDim) {
            return false;
        }
        zero = zero || dim == 0;
        overflow = __builtin_mul_overflow(count, dim, &count) || overflow;
    }
    if (zero) {
        count = 0;
    } else if (overflow) {
        return false;
    }
    const auto byte_offset = load_le<uint64_t>(dims + uint64_t{8} * rank);
    const uint8_t* h = p + table + 1;
    const auto size = load_le<uint64_t>(h);
    const auto alignment = load_le<uint32_t>(h + 8);
    if (h[12] != static_cast<uint8_t>(DeviceTag::kCpu) || h[13] != static_cast<uint8_t>(SyncMode::kProducerSynced) ||
        h[14] != static_cast<uint8_t>(MemoryClass::kStandard) || h[15] != 0 || !is_pow2(alignment) ||
        (size != 0 && alignment < kMinBufferAlignment)) {
        return false;
    }
    uint64_t need = 0;
    if (bits % 8 == 0) {
        if (__builtin_mul_overflow(count, uint64_t{bits / 8}, &need)) {
            return false;
        }
    } else if (count > 0) {
        const std::optional<uint64_t> elements = detail::plain_storage_bytes(bits, count);
        if (!elements) {
            return false;
        }
        need = *elements;
    }
    if (byte_offset > size || need > size - byte_offset) {
        return false;
    }
    d.version_major = p[4];
    d.version_minor = p[5];
    d.element_type = static_cast<ElementType>(type);
    d.shape.resize(rank);
    for (uint32_t k = 0; k < rank; ++k) {
        d.shape[k] = load_le<uint64_t>(dims + uint64_t{8} * k);
    }
    d.byte_offset = byte_offset;
    if (layout == 0x02) {
        d.layout = ColumnMajorLayout{};
    } else {
        d.layout = RowMajorLayout{};
    }
    d.buffers.resize(1);
    BufferHandle& b = d.buffers[0];
    b.byte_size = size;
    b.alignment = alignment;
    b.device_tag = DeviceTag::kCpu;
    b.sync_mode = SyncMode::kProducerSynced;
    b.memory_class = MemoryClass::kStandard;
    clear_sections(d);
    return true;
}

// descriptor_length when the magic and version_major are right and the length
// is at least the fixed header; 0 otherwise (peek_length then says why).
uint32_t quick_length(std::span<const uint8_t> bytes) noexcept {
    if (bytes.size() < kDescriptorPeekSize || std::memcmp(bytes.data(), kDescriptorMagic, 4) != 0 ||
        bytes[4] != kDescriptorVersionMajor) {
        return 0;
    }
    // SAFETY: bytes holds at least kDescriptorPeekSize (10) bytes, checked above.
    const auto length = load_le<uint32_t>(bytes.data() + 6);
    return length >= kFixedHeaderSize ? length : 0;
}

}  // namespace

Result<uint32_t> peek_length(std::span<const uint8_t> prefix) {
    if (prefix.size() < kDescriptorPeekSize) {
        return Error(ErrorCode::kTruncated,
                     "descriptor: needs 10 bytes to read descriptor_length, got " + dec(prefix.size()), 0);
    }
    for (size_t i = 0; i < 4; ++i) {
        if (prefix[i] != kDescriptorMagic[i]) {
            return Error(ErrorCode::kInvalidMagic, "magic: expected \"HRRY\" (48 52 52 59)", i);
        }
    }
    if (prefix[4] != kDescriptorVersionMajor) {
        return Error(ErrorCode::kUnsupportedVersion,
                     "version_major: " + dec(prefix[4]) + " is not supported (this reader reads 1)", 4);
    }
    // SAFETY: prefix holds at least kDescriptorPeekSize (10) bytes, checked above.
    const auto length = load_le<uint32_t>(prefix.data() + 6);
    if (length < kFixedHeaderSize) {
        return Error(ErrorCode::kInvalidDescriptorLength,
                     "descriptor_length: " + dec(length) + " is below the 20-byte minimum", 6);
    }
    return length;
}

Result<TensorDescriptor> decode(std::span<const uint8_t> bytes, const DecodeOptions& opt) {
    Result<TensorDescriptor> d{TensorDescriptor{}};
    HURRAY_RETURN_IF_ERROR(decode_into(bytes, opt, *d));
    return d;
}

Status decode_into(std::span<const uint8_t> bytes, const DecodeOptions& opt, TensorDescriptor& out) {
    uint32_t length = quick_length(bytes);
    if (length == 0) {
        HURRAY_ASSIGN_OR_RETURN(length, peek_length(bytes));
    }
    if (length <= bytes.size()) {
        if (decode_simple_dense(bytes.first(length), out)) {
            return Status::success();
        }
        // The common case: one pass over the bytes, then the one-pass check (the
        // full check only when that one cannot decide).
        // What parse_plain_dense does not set is put back to its default; the shape
        // and buffer table are resized there, keeping their storage.
        out.layout = RowMajorLayout{};
        clear_sections(out);
        if (parse_plain_dense(bytes, length, out)) {
            if (!detail::plain_dense_valid(out)) {
                HURRAY_RETURN_IF_ERROR(detail::check_descriptor_full(out, opt, detail::section_offsets(out)));
            }
            return Status::success();
        }
    }
    HURRAY_ASSIGN_OR_RETURN(out, detail::decode_general(bytes, opt));
    return Status::success();
}

Result<TensorDescriptor> detail::decode_general(std::span<const uint8_t> bytes, const DecodeOptions& opt) {
    HURRAY_ASSIGN_OR_RETURN(uint32_t length, peek_length(bytes));
    if (length > bytes.size()) {
        return Error(ErrorCode::kTruncated,
                     "descriptor_length: " + dec(length) + " bytes declared, only " + dec(bytes.size()) +
                         " available",
                     6);
    }
    ByteReader r(bytes.first(length));
    HURRAY_RETURN_IF_ERROR(r.need(kFixedHeaderSize, "fixed header"));
    TensorDescriptor d;
    (void)r.bytes(4, "magic");
    HURRAY_ASSIGN_OR_RETURN(d.version_major, r.u8("version_major"));
    HURRAY_ASSIGN_OR_RETURN(d.version_minor, r.u8("version_minor"));
    (void)r.u32("descriptor_length");
    HURRAY_ASSIGN_OR_RETURN(uint32_t flags, r.u32("flags"));
    if ((flags & ~uint32_t{kDefinedFlagsMask}) != 0) {
        return Error(ErrorCode::kReservedFlagBits,
                     "flags: reserved bits set in " + hex(flags, 8) + " (only bits 0-4 are defined)", 10);
    }
    HURRAY_ASSIGN_OR_RETURN(uint8_t type, r.u8("type_tag"));
    d.element_type = static_cast<ElementType>(type);
    HURRAY_ASSIGN_OR_RETURN(uint8_t layout, r.u8("layout_tag"));
    HURRAY_ASSIGN_OR_RETURN(uint32_t rank, r.u32("rank"));
    if (rank > kMaxRank) {
        return Error(ErrorCode::kRankTooLarge, "rank: " + dec(rank) + " exceeds the maximum of 64", 16);
    }
    HURRAY_ASSIGN_OR_RETURN(d.shape, read_array<uint64_t>(r, rank, "shape"));
    HURRAY_ASSIGN_OR_RETURN(d.byte_offset, r.u64("byte_offset"));
    HURRAY_ASSIGN_OR_RETURN(d.layout, parse_layout(r, layout, rank, opt));

    HURRAY_ASSIGN_OR_RETURN(uint8_t buffer_count, r.u8("buffer_count"));
    HURRAY_RETURN_IF_ERROR(r.need(uint64_t{kBufferHandleSize} * buffer_count, "buffer table"));
    d.buffers.reserve(buffer_count);
    for (uint32_t i = 0; i < buffer_count; ++i) {
        HURRAY_ASSIGN_OR_RETURN(BufferHandle h, parse_buffer(r));
        d.buffers.push_back(h);
    }
    if ((flags & kHasQuantization) != 0) {
        HURRAY_ASSIGN_OR_RETURN(uint32_t qlen, r.u32("quantization_length"));
        const uint64_t payload_at = r.abs_pos();
        HURRAY_ASSIGN_OR_RETURN(auto payload, r.bytes(qlen, "quantization"));
        ByteReader qr(payload, payload_at);
        HURRAY_ASSIGN_OR_RETURN(d.quantization, parse_quantization(qr));
    }
    if ((flags & kHasShard) != 0) {
        ShardDescriptor s;
        HURRAY_ASSIGN_OR_RETURN(s.parent_shape, read_array<uint64_t>(r, rank, "shard.parent_shape"));
        HURRAY_ASSIGN_OR_RETURN(s.shard_offset, read_array<uint64_t>(r, rank, "shard.shard_offset"));
        d.shard = std::move(s);
    }
    if ((flags & kHasStatistics) != 0) {
        HURRAY_ASSIGN_OR_RETURN(d.statistics, parse_statistics(r, opt.strict));
    }
    if ((flags & kHasExtensionType) != 0) {
        HURRAY_ASSIGN_OR_RETURN(d.extension_type, parse_extension_type(r, opt.strict));
    }
    if ((flags & kHasCompositeMember) != 0) {
        HURRAY_RETURN_IF_ERROR(r.need(kCompositeMemberSize, "composite_member"));
        HURRAY_ASSIGN_OR_RETURN(uint8_t role, r.u8("composite_member.member_role"));
        HURRAY_RETURN_IF_ERROR(r.reserved(15, "composite_member._reserved"));
        d.composite_member = CompositeMember{static_cast<MemberRole>(role)};
    }
    if (r.remaining() > 0) {
        if (d.version_minor <= kDescriptorVersionMinor) {
            return Error(ErrorCode::kInvalidDescriptorLength,
                         "descriptor_length: " + dec(length) + " declared, but the fields end at byte " +
                             dec(r.pos()),
                         6);
        }
        // A newer minor version may append fields we do not know: keep them.
        HURRAY_ASSIGN_OR_RETURN(auto rest, r.bytes(r.remaining(), "trailing bytes"));
        d.unknown_trailing_bytes.assign(rest.begin(), rest.end());
    }
    HURRAY_RETURN_IF_ERROR(detail::check_descriptor_at(d, opt, detail::section_offsets(d)));
    return d;
}

}  // namespace hurray
