// SPDX-License-Identifier: Apache-2.0
// TensorDescriptor -> document tree (docs/json.md).
#include <string>
#include <type_traits>
#include <variant>

#include "hurray/core/text.hpp"
#include "hurray/core/describe.hpp"
#include "json/json_internal.hpp"

namespace hurray::json_detail {
namespace {

// An enum field: its name when it has one, else its raw value.
template <typename E>
Json enum_value(E v, NameFn names) {
    const auto raw = static_cast<uint8_t>(v);
    const std::string_view name = names(raw);
    if (name.empty()) {
        return raw;
    }
    return std::string(name);
}

Json shape_value(const Shape& shape) {
    Json a = Json::array();
    for (const uint64_t dim : shape) {
        if (dim == kDynamicDim) {
            a.push_back(std::string(kDynamicName));
        } else {
            a.push_back(dim);
        }
    }
    return a;
}

Json tiled_level_value(const TiledLevel& lv) {
    Json o = Json::object();
    o["tile_shape"] = lv.tile_shape;
    o["outer_layout"] = enum_value(lv.outer_layout, layout_tag_name);
    o["inner_layout"] = enum_value(lv.inner_layout, layout_tag_name);
    if (!lv.outer_strides.empty()) {
        o["outer_strides"] = lv.outer_strides;
    }
    if (!lv.inner_strides.empty()) {
        o["inner_strides"] = lv.inner_strides;
    }
    return o;
}

// The fields that follow "tag", per layout.
template <typename L>
void put_layout_fields(Json& o, const L& l) {
    if constexpr (std::is_same_v<L, StridedLayout>) {
        o["strides"] = l.strides;
    } else if constexpr (std::is_same_v<L, TiledLayout>) {
        Json levels = Json::array();
        for (const TiledLevel& lv : l.levels) {
            levels.push_back(tiled_level_value(lv));
        }
        o["levels"] = std::move(levels);
    } else if constexpr (std::is_same_v<L, MortonLayout>) {
        o["morton_bits"] = l.morton_bits;
    } else if constexpr (std::is_same_v<L, CooLayout>) {
        o["nnz"] = l.nnz;
        o["is_sorted"] = l.is_sorted;
    } else if constexpr (std::is_same_v<L, CsrLayout> || std::is_same_v<L, CscLayout>) {
        o["nnz"] = l.nnz;
    } else if constexpr (std::is_same_v<L, CsfLayout>) {
        o["nnz"] = l.nnz;
        o["mode_order"] = l.mode_order;
    } else if constexpr (std::is_same_v<L, BlockPagedLayout>) {
        o["page_size"] = l.page_size;
        o["num_pages"] = l.num_pages;
        o["paged_axis"] = l.paged_axis;
        o["num_seqs"] = l.num_seqs;
        o["kv_role"] = enum_value(l.kv_role, kv_role_name);
        o["layer_index"] = l.layer_index;
        o["block_table_index_type"] = enum_value(l.index_type, index_type_name);
    } else if constexpr (std::is_same_v<L, CompositeLayout>) {
        o["composition_rule"] = enum_value(l.rule, composition_rule_name);
        o["combine_op"] = enum_value(l.combine_op, combine_op_name);
        o["member_count"] = l.member_count;
    } else if constexpr (std::is_same_v<L, HilbertLayout>) {
        o["hilbert_order"] = l.hilbert_order;
        o["hilbert_rank"] = l.hilbert_rank;
    } else if constexpr (std::is_same_v<L, ExtensionLayout>) {
        o["extension_layout_id"] = l.layout_id;
        o["extension_data"] = hex_bytes(l.data);
    }
    // RowMajorLayout, ColumnMajorLayout: no fields.
}

Json layout_value(const LayoutDescriptor& layout) {
    Json o = Json::object();
    const uint8_t tag = layout_tag(layout);
    if (std::holds_alternative<ExtensionLayout>(layout)) {
        o["tag"] = tag;  // a number: it selects the extension layout whatever its value
    } else {
        o["tag"] = std::string(layout_tag_name(tag));
    }
    std::visit([&o](const auto& l) { put_layout_fields(o, l); }, layout);
    return o;
}

Json buffer_value(const BufferHandle& b) {
    Json o = Json::object();
    o["byte_size"] = b.byte_size;
    o["alignment"] = b.alignment;
    o["device_tag"] = enum_value(b.device_tag, device_tag_name);
    o["sync_mode"] = enum_value(b.sync_mode, sync_mode_name);
    o["memory_class"] = enum_value(b.memory_class, memory_class_name);
    return o;
}

void put_zero_points(Json& o, const std::optional<uint32_t>& index) {
    if (index) {
        o["zero_point_buffer_index"] = *index;
    }
}

// The fields that follow "scheme", per scheme.
template <typename S>
void put_scheme_fields(Json& o, const S& s) {
    if constexpr (std::is_same_v<S, PerTensorAffine>) {
        o["scale"] = float32_value(s.scale);
        o["zero_point"] = s.zero_point;
    } else if constexpr (std::is_same_v<S, PerChannelAffine>) {
        o["axis"] = s.axis;
        o["scale_buffer_index"] = s.scale_buffer_index;
        put_zero_points(o, s.zero_point_buffer_index);
        o["scale_type"] = enum_value(s.scale_type, element_type_name);
    } else if constexpr (std::is_same_v<S, PerBlockAffine>) {
        o["axis"] = s.axis;
        o["block_size"] = s.block_size;
        o["scale_buffer_index"] = s.scale_buffer_index;
        put_zero_points(o, s.zero_point_buffer_index);
        o["scale_type"] = enum_value(s.scale_type, element_type_name);
    } else if constexpr (std::is_same_v<S, OpaqueQuantization>) {
        o["scheme_version"] = s.scheme_version;
        o["flags"] = s.flags;
        o["payload"] = hex_bytes(s.payload);
    } else {  // Nf4Quantization, MxfpQuantization
        o["axis"] = s.axis;
        o["block_size"] = s.block_size;
        o["scale_buffer_index"] = s.scale_buffer_index;
    }
}

Json quantization_value(const QuantizationDescriptor& q) {
    Json o = Json::object();
    const uint8_t tag = scheme_tag(q.scheme);
    if (std::holds_alternative<OpaqueQuantization>(q.scheme)) {
        o["scheme"] = tag;  // a number: it selects the opaque form whatever its value
    } else {
        o["scheme"] = std::string(scheme_tag_name(tag));
    }
    std::visit([&o](const auto& s) { put_scheme_fields(o, s); }, q.scheme);
    if (!q.trailing_padding.empty()) {
        o["trailing_padding"] = hex_bytes(q.trailing_padding);
    }
    return o;
}

Json statistics_value(const Statistics& s) {
    Json o = Json::object();
    o["computed_mask"] = s.computed_mask;
    o["nnz"] = s.nnz;
    o["sparsity_ratio"] = float64_value(s.sparsity_ratio);
    o["value_min"] = float64_value(s.value_min);
    o["value_max"] = float64_value(s.value_max);
    o["value_abs_max"] = float64_value(s.value_abs_max);
    o["value_mean"] = float64_value(s.value_mean);
    o["value_stddev"] = float64_value(s.value_stddev);
    o["nm_n"] = s.nm_n;
    o["nm_m"] = s.nm_m;
    o["has_nan"] = s.has_nan;
    o["has_inf"] = s.has_inf;
    return o;
}

Json extension_type_value(const ExtensionTypeDescriptor& e) {
    Json o = Json::object();
    o["bit_width"] = e.bit_width;
    o["packing_factor"] = e.packing_factor;
    o["is_float"] = e.is_float;
    o["is_signed"] = e.is_signed;
    o["sign_bits"] = e.sign_bits;
    o["exponent_bits"] = e.exponent_bits;
    o["mantissa_bits"] = e.mantissa_bits;
    o["exponent_bias"] = e.exponent_bias;
    o["has_nan"] = e.has_nan;
    o["has_inf"] = e.has_inf;
    return o;
}

}  // namespace

Json descriptor_to_document(const TensorDescriptor& d) {
    Json doc = Json::object();
    doc["version_major"] = d.version_major;
    doc["version_minor"] = d.version_minor;
    doc["element_type"] = enum_value(d.element_type, element_type_name);
    doc["shape"] = shape_value(d.shape);
    doc["byte_offset"] = d.byte_offset;
    doc["layout"] = layout_value(d.layout);
    Json buffers = Json::array();
    for (const BufferHandle& b : d.buffers) {
        buffers.push_back(buffer_value(b));
    }
    doc["buffers"] = std::move(buffers);
    if (d.quantization) {
        doc["quantization"] = quantization_value(*d.quantization);
    }
    if (d.shard) {
        doc["shard"] = Json::object({{"parent_shape", d.shard->parent_shape},
                                     {"shard_offset", d.shard->shard_offset}});
    }
    if (d.statistics) {
        doc["statistics"] = statistics_value(*d.statistics);
    }
    if (d.extension_type) {
        doc["extension_type"] = extension_type_value(*d.extension_type);
    }
    if (d.composite_member) {
        doc["composite_member"] = Json::object(
            {{"member_role", enum_value(d.composite_member->role, member_role_name)}});
    }
    if (!d.unknown_trailing_bytes.empty()) {
        doc["unknown_trailing_bytes"] = hex_bytes(d.unknown_trailing_bytes);
    }
    return doc;
}

}  // namespace hurray::json_detail
