// SPDX-License-Identifier: Apache-2.0
// Tensor descriptor encoding (metadata.md): the model to its exact bytes.
#include <cstring>
#include <string>
#include <type_traits>
#include <variant>

#include "hurray/core/byte_io.hpp"
#include "core/descriptor_internal.hpp"
#include "hurray/core/descriptor_codec.hpp"

namespace hurray {
namespace detail {
namespace {

constexpr uint64_t kU64 = 8;

// What a writer checks: everything, with its own private extensions accepted.
const DecodeOptions kWriterOptions{.accept_private_extensions = true};

uint64_t tiled_level_size(const TiledLevel& lv) noexcept {
    uint64_t n = kU64 * lv.tile_shape.size() + 4;
    if (lv.outer_layout == LayoutTag::kStrided) {
        n += kU64 * lv.outer_strides.size();
    }
    if (lv.inner_layout == LayoutTag::kStrided) {
        n += kU64 * lv.inner_strides.size();
    }
    return n;
}

uint64_t quantization_section_size(const QuantizationDescriptor& q) noexcept {
    return 4 + uint64_t{scheme_encoded_size(q.scheme)} + q.trailing_padding.size();
}

void write_layout(ByteWriter& w, const LayoutDescriptor& layout) {
    std::visit(
        [&w](const auto& l) {
            using L = std::decay_t<decltype(l)>;
            if constexpr (std::is_same_v<L, StridedLayout>) {
                for (int64_t s : l.strides) {
                    w.i64(s);
                }
            } else if constexpr (std::is_same_v<L, TiledLayout>) {
                for (const TiledLevel& lv : l.levels) {
                    for (uint64_t t : lv.tile_shape) {
                        w.u64(t);
                    }
                    w.u8(static_cast<uint8_t>(lv.outer_layout));
                    w.u8(static_cast<uint8_t>(lv.inner_layout));
                    w.zeros(2);
                    if (lv.outer_layout == LayoutTag::kStrided) {
                        for (int64_t s : lv.outer_strides) {
                            w.i64(s);
                        }
                    }
                    if (lv.inner_layout == LayoutTag::kStrided) {
                        for (int64_t s : lv.inner_strides) {
                            w.i64(s);
                        }
                    }
                }
            } else if constexpr (std::is_same_v<L, MortonLayout>) {
                for (uint32_t b : l.morton_bits) {
                    w.u32(b);
                }
            } else if constexpr (std::is_same_v<L, CooLayout>) {
                w.u64(l.nnz);
                w.u8(l.is_sorted ? 1 : 0);
                w.zeros(7);
            } else if constexpr (std::is_same_v<L, CsrLayout> || std::is_same_v<L, CscLayout>) {
                w.u64(l.nnz);
                w.zeros(8);
            } else if constexpr (std::is_same_v<L, CsfLayout>) {
                w.u64(l.nnz);
                for (uint32_t m : l.mode_order) {
                    w.u32(m);
                }
                w.zeros(8);
            } else if constexpr (std::is_same_v<L, BlockPagedLayout>) {
                w.u32(l.page_size);
                w.u64(l.num_pages);
                w.u32(l.paged_axis);
                w.u32(l.num_seqs);
                w.u8(static_cast<uint8_t>(l.kv_role));
                w.u32(l.layer_index);
                w.u8(static_cast<uint8_t>(l.index_type));
                w.zeros(6);
            } else if constexpr (std::is_same_v<L, CompositeLayout>) {
                w.u8(static_cast<uint8_t>(l.rule));
                w.u8(static_cast<uint8_t>(l.combine_op));
                w.zeros(2);
                w.u32(l.member_count);
            } else if constexpr (std::is_same_v<L, HilbertLayout>) {
                w.u32(l.hilbert_order);
                w.u32(l.hilbert_rank);
            } else if constexpr (std::is_same_v<L, ExtensionLayout>) {
                w.u64(l.layout_id);
                w.u32(static_cast<uint32_t>(l.data.size()));
                w.bytes(l.data);
            }
        },
        layout);
}

void write_quantization(ByteWriter& w, const QuantizationDescriptor& q) {
    w.u32(static_cast<uint32_t>(quantization_section_size(q) - 4));
    const uint8_t tag = scheme_tag(q.scheme);
    auto zp = [](const std::optional<uint32_t>& z) { return z.value_or(0xFFFFFFFFU); };
    std::visit(
        [&](const auto& s) {
            using S = std::decay_t<decltype(s)>;
            if constexpr (std::is_same_v<S, OpaqueQuantization>) {
                w.u8(s.scheme_tag);
                w.u8(s.scheme_version);
                w.u16(s.flags);
                w.bytes(s.payload);
            } else {
                w.u8(tag);
                w.u8(kQuantSchemeVersion);
                if constexpr (std::is_same_v<S, PerTensorAffine>) {
                    w.u16(0);
                    w.f32(s.scale);
                    w.i32(s.zero_point);
                    w.zeros(4);
                } else if constexpr (std::is_same_v<S, PerChannelAffine>) {
                    w.u16(s.zero_point_buffer_index ? 0 : 1);
                    w.u32(s.axis);
                    w.u32(s.scale_buffer_index);
                    w.u32(zp(s.zero_point_buffer_index));
                    w.u8(type_tag(s.scale_type));
                    w.zeros(3);
                } else if constexpr (std::is_same_v<S, PerBlockAffine>) {
                    w.u16(s.zero_point_buffer_index ? 0 : 1);
                    w.u32(s.axis);
                    w.u32(s.block_size);
                    w.u32(s.scale_buffer_index);
                    w.u32(zp(s.zero_point_buffer_index));
                    w.u8(type_tag(s.scale_type));
                    w.zeros(3);
                } else {  // NF4 and MXFP share one wire shape
                    w.u16(0);
                    w.u32(s.axis);
                    w.u32(s.block_size);
                    w.u32(s.scale_buffer_index);
                }
            }
        },
        q.scheme);
    w.bytes(q.trailing_padding);
}

void write_statistics(ByteWriter& w, const Statistics& s) {
    w.u32(s.computed_mask);
    w.u32(0);
    w.u64(s.nnz);
    w.f64(s.sparsity_ratio);
    w.f64(s.value_min);
    w.f64(s.value_max);
    w.f64(s.value_abs_max);
    w.f64(s.value_mean);
    w.f64(s.value_stddev);
    w.u8(s.nm_n);
    w.u8(s.nm_m);
    w.u8(s.has_nan ? 1 : 0);
    w.u8(s.has_inf ? 1 : 0);
    w.zeros(4);
}

void write_extension_type(ByteWriter& w, const ExtensionTypeDescriptor& e) {
    w.u32(e.bit_width);
    w.u8(e.packing_factor);
    w.u8(e.is_float ? 1 : 0);
    w.u8(e.is_signed ? 1 : 0);
    w.u8(e.sign_bits);
    w.u8(e.exponent_bits);
    w.u8(e.mantissa_bits);
    w.zeros(2);
    w.u32(e.exponent_bias);
    w.u8(e.has_nan ? 1 : 0);
    w.u8(e.has_inf ? 1 : 0);
    w.zeros(2);
}

// Writes the descriptor into `out`, which holds exactly `off.end` bytes.
Status write_descriptor(const TensorDescriptor& d, const SectionOffsets& off, std::span<uint8_t> out) {
    ByteWriter w(out);
    w.bytes(kDescriptorMagic);
    w.u8(d.version_major);
    w.u8(d.version_minor);
    w.u32(static_cast<uint32_t>(off.end));
    w.u32(d.flags());
    w.u8(type_tag(d.element_type));
    w.u8(d.layout_tag());
    w.u32(d.rank());
    for (uint64_t dim : d.shape) {
        w.u64(dim);
    }
    w.u64(d.byte_offset);
    write_layout(w, d.layout);
    w.u8(static_cast<uint8_t>(d.buffers.size()));
    for (const BufferHandle& h : d.buffers) {
        w.u64(h.byte_size);
        w.u32(h.alignment);
        w.u8(static_cast<uint8_t>(h.device_tag));
        w.u8(static_cast<uint8_t>(h.sync_mode));
        w.u8(static_cast<uint8_t>(h.memory_class));
        w.u8(0);
    }
    if (d.quantization) {
        write_quantization(w, *d.quantization);
    }
    if (d.shard) {
        for (uint64_t v : d.shard->parent_shape) {
            w.u64(v);
        }
        for (uint64_t v : d.shard->shard_offset) {
            w.u64(v);
        }
    }
    if (d.statistics) {
        write_statistics(w, *d.statistics);
    }
    if (d.extension_type) {
        write_extension_type(w, *d.extension_type);
    }
    if (d.composite_member) {
        w.u8(static_cast<uint8_t>(d.composite_member->role));
        w.zeros(15);
    }
    w.bytes(d.unknown_trailing_bytes);
    if (w.overflowed() || w.pos() != off.end) {
        return Error(ErrorCode::kInvalidArgument,
                     "descriptor: the model's sections disagree with its computed length");
    }
    return Status::success();
}

// Representability limits that hold even for unchecked encoding: the
// length fields must not wrap.
Status check_encodable(const TensorDescriptor& d, const SectionOffsets& off) {
    if (d.buffers.size() > 255) {
        return Error(ErrorCode::kInvalidBufferCount,
                     "buffer_count: " + std::to_string(d.buffers.size()) + " buffers exceed 255",
                     off.buffer_table);
    }
    if (const auto* e = std::get_if<ExtensionLayout>(&d.layout); e != nullptr && e->data.size() > UINT32_MAX) {
        return Error(ErrorCode::kSizeOverflow, "extension_data_length: exceeds 2^32-1", off.layout + 8);
    }
    if (d.quantization && off.shard - off.quantization - 4 > UINT32_MAX) {
        return Error(ErrorCode::kSizeOverflow, "quantization_length: exceeds 2^32-1", off.quantization);
    }
    if (d.shape.size() > UINT32_MAX) {
        return Error(ErrorCode::kRankTooLarge, "rank: exceeds 2^32-1", 16);
    }
    if (off.end > UINT32_MAX) {
        return Error(ErrorCode::kSizeOverflow,
                     "descriptor_length: " + std::to_string(off.end) + " bytes exceed 2^32-1", 6);
    }
    return Status::success();
}

Error output_too_small(size_t have, uint64_t need) {
    return {ErrorCode::kInvalidArgument,
            "encode_to: output holds " + std::to_string(have) + " bytes, the descriptor needs " + std::to_string(need)};
}

// The encoded size of a descriptor that plain_dense_valid accepts: header,
// shape, byte_offset, buffer table and (per-block affine) the 4 + 24-byte
// quantization section; nothing else.
uint64_t plain_size(const TensorDescriptor& d) noexcept {
    return uint64_t{kFixedHeaderSize} + kU64 * d.shape.size() + kU64 + 1 +
           uint64_t{kBufferHandleSize} * d.buffers.size() + (d.quantization ? 4 + 24 : 0);
}

// write_descriptor for a descriptor that plain_dense_valid accepts, into
// `out`, which holds at least plain_size(d) bytes: the same bytes, without a
// bounds check per field.
void write_plain(const TensorDescriptor& d, uint64_t size, std::span<uint8_t> out) noexcept {
    // SAFETY: the caller checked out.size() >= size == plain_size(d), and
    // every store below is inside those `size` bytes: 20 header bytes, 8 per
    // dimension, 8 + 1, 16 per buffer handle, then 28 when quantized.
    uint8_t* p = out.data();
    std::memcpy(p, kDescriptorMagic, 4);
    p[4] = d.version_major;
    p[5] = d.version_minor;
    store_le<uint32_t>(p + 6, static_cast<uint32_t>(size));
    store_le<uint32_t>(p + 10, d.quantization ? uint32_t{kHasQuantization} : 0U);
    p[14] = type_tag(d.element_type);
    p[15] = std::holds_alternative<ColumnMajorLayout>(d.layout) ? 0x02 : 0x01;
    store_le<uint32_t>(p + 16, static_cast<uint32_t>(d.shape.size()));
    p += kFixedHeaderSize;
    for (const uint64_t dim : d.shape) {
        store_le<uint64_t>(p, dim);
        p += kU64;
    }
    store_le<uint64_t>(p, d.byte_offset);
    p[8] = static_cast<uint8_t>(d.buffers.size());
    p += kU64 + 1;
    for (const BufferHandle& h : d.buffers) {
        store_le<uint64_t>(p, h.byte_size);
        store_le<uint32_t>(p + 8, h.alignment);
        p[12] = static_cast<uint8_t>(h.device_tag);
        p[13] = static_cast<uint8_t>(h.sync_mode);
        p[14] = static_cast<uint8_t>(h.memory_class);
        p[15] = 0;
        p += kBufferHandleSize;
    }
    if (d.quantization) {
        const auto& s = std::get<PerBlockAffine>(d.quantization->scheme);
        store_le<uint32_t>(p, 24);
        p[4] = 0x03;  // per_block_affine, the only scheme plain_dense_valid accepts
        p[5] = kQuantSchemeVersion;
        store_le<uint16_t>(p + 6, s.zero_point_buffer_index ? 0 : 1);
        store_le<uint32_t>(p + 8, s.axis);
        store_le<uint32_t>(p + 12, s.block_size);
        store_le<uint32_t>(p + 16, s.scale_buffer_index);
        store_le<uint32_t>(p + 20, s.zero_point_buffer_index.value_or(0xFFFFFFFFU));
        p[24] = type_tag(s.scale_type);
        p[25] = 0;
        p[26] = 0;
        p[27] = 0;
    }
}

Result<std::vector<uint8_t>> encode_impl(const TensorDescriptor& d, bool checked) {
    const SectionOffsets off = section_offsets(d);
    HURRAY_RETURN_IF_ERROR(check_encodable(d, off));
    if (checked) {
        HURRAY_RETURN_IF_ERROR(check_descriptor_at(d, kWriterOptions, off));
    }
    std::vector<uint8_t> out(static_cast<size_t>(off.end));
    HURRAY_RETURN_IF_ERROR(write_descriptor(d, off, out));
    return out;
}

}  // namespace

uint64_t layout_fields_size(const LayoutDescriptor& layout) noexcept {
    return std::visit(
        [](const auto& l) -> uint64_t {
            using L = std::decay_t<decltype(l)>;
            if constexpr (std::is_same_v<L, StridedLayout>) {
                return kU64 * l.strides.size();
            } else if constexpr (std::is_same_v<L, TiledLayout>) {
                uint64_t n = 0;
                for (const TiledLevel& lv : l.levels) {
                    n += tiled_level_size(lv);
                }
                return n;
            } else if constexpr (std::is_same_v<L, MortonLayout>) {
                return 4 * l.morton_bits.size();
            } else if constexpr (std::is_same_v<L, CooLayout> || std::is_same_v<L, CsrLayout> ||
                                 std::is_same_v<L, CscLayout>) {
                return 16;
            } else if constexpr (std::is_same_v<L, CsfLayout>) {
                return 16 + 4 * l.mode_order.size();
            } else if constexpr (std::is_same_v<L, BlockPagedLayout>) {
                return 32;
            } else if constexpr (std::is_same_v<L, CompositeLayout> || std::is_same_v<L, HilbertLayout>) {
                return 8;
            } else if constexpr (std::is_same_v<L, ExtensionLayout>) {
                return 12 + l.data.size();
            } else {
                return 0;  // row-major, column-major
            }
        },
        layout);
}

SectionOffsets section_offsets(const TensorDescriptor& d) noexcept {
    SectionOffsets o;
    o.shape = kFixedHeaderSize;
    o.byte_offset = o.shape + kU64 * d.shape.size();
    o.layout = o.byte_offset + kU64;
    o.buffer_table = o.layout + layout_fields_size(d.layout);
    o.quantization = o.buffer_table + 1 + uint64_t{kBufferHandleSize} * d.buffers.size();
    o.shard = o.quantization + (d.quantization ? quantization_section_size(*d.quantization) : 0);
    o.statistics =
        o.shard + (d.shard ? kU64 * (d.shard->parent_shape.size() + d.shard->shard_offset.size()) : 0);
    o.extension_type = o.statistics + (d.statistics ? kStatisticsSize : 0);
    o.composite_member = o.extension_type + (d.extension_type ? kExtensionTypeSize : 0);
    o.trailing = o.composite_member + (d.composite_member ? kCompositeMemberSize : 0);
    o.end = o.trailing + d.unknown_trailing_bytes.size();
    return o;
}

}  // namespace detail

Result<uint32_t> encoded_size(const TensorDescriptor& d) {
    const detail::SectionOffsets off = detail::section_offsets(d);
    if (off.end > UINT32_MAX) {
        return Error(ErrorCode::kSizeOverflow,
                     "descriptor_length: " + std::to_string(off.end) + " bytes exceed 2^32-1", 6);
    }
    return static_cast<uint32_t>(off.end);
}

Result<std::vector<uint8_t>> encode(const TensorDescriptor& d) { return detail::encode_impl(d, true); }

Result<std::vector<uint8_t>> encode_unchecked(const TensorDescriptor& d) {
    return detail::encode_impl(d, false);
}

Result<size_t> encode_to(const TensorDescriptor& d, std::span<uint8_t> out) {
    if (detail::plain_dense_valid(d)) {
        // The common case: valid and encodable (at most 3 buffers, rank <=
        // 64), so only the output's size can fail.
        const uint64_t size = detail::plain_size(d);
        if (out.size() < size) {
            return detail::output_too_small(out.size(), size);
        }
        detail::write_plain(d, size, out);
        return static_cast<size_t>(size);
    }
    const detail::SectionOffsets off = detail::section_offsets(d);
    HURRAY_RETURN_IF_ERROR(detail::check_encodable(d, off));
    HURRAY_RETURN_IF_ERROR(detail::check_descriptor_at(d, detail::kWriterOptions, off));
    if (out.size() < off.end) {
        return detail::output_too_small(out.size(), off.end);
    }
    HURRAY_RETURN_IF_ERROR(detail::write_descriptor(d, off, out.first(static_cast<size_t>(off.end))));
    return static_cast<size_t>(off.end);
}

}  // namespace hurray
