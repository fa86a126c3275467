// SPDX-License-Identifier: Apache-2.0
// Internal to hurray::json: the members of each object of the JSON form
// (docs/json.md), listed once for both directions. The reader (json_read.cpp) and
// the writer (json_write.cpp) walk these lists; neither names a field itself.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#include "hurray/core/tensor_descriptor.hpp"
#include "json/json_internal.hpp"

namespace hurray::json_detail {

/// Whether `T` is one of `Ts`.
template <typename T, typename... Ts>
inline constexpr bool kIsAnyOf = (std::is_same_v<T, Ts> || ...);

/// Whether `T` is a specialization of the class template `Template`.
template <typename T, template <typename...> class Template>
inline constexpr bool kIsSpecialization = false;

/// Whether `T` is a specialization of the class template `Template` (the match).
template <typename... Args, template <typename...> class Template>
inline constexpr bool kIsSpecialization<Template<Args...>, Template> = true;

// --- How a member is passed to the visitor -------------------------------------------
// A plain member is passed as itself: it is required, and its C++ type says how it
// is written (docs/json.md): integers and bools as numbers and booleans, float and
// double by float32_value and float64_value, byte vectors as hex strings, a Shape
// with "dynamic", the types of kIsObject as objects, arrays of them as arrays. A
// std::optional member may be left out, and is written when it holds a value. The
// wrappers below mark the members that need more than their type says.

/// An enum member: written as its name, or as its raw value when it has no name;
/// read from a name or a number 0..255. `E` may be const.
template <typename E>
struct EnumField {
    E& value;                ///< The member.
    NameFn names = nullptr;  ///< The names of its values.
    std::string_view what;   ///< What it is, for "unknown <what> ...".
};

/// `value` as an enum member named by `names` (see EnumField).
template <typename E>
EnumField<E> enum_field(E& value, NameFn names, std::string_view what) {
    return {value, names, what};
}

/// A member the document may leave out: read when present (else left as it is),
/// written unless empty.
template <typename T>
struct Omittable {
    T& value;  ///< The member.
};

/// `value` as a member the document may leave out (see Omittable).
template <typename T>
Omittable<T> omittable(T& value) {
    return {value};
}

/// How the document selects an alternative of the variant `V` (docs/json.md): a
/// name selects a named alternative; a number, whatever its value, selects `Open`,
/// which keeps it.
template <typename V, typename Open>
struct Selection {
    /// Where `Open` keeps the number.
    uint8_t Open::*open_tag = nullptr;
    /// The tag of a value of `V`.
    uint8_t (*tag_of)(const V&) noexcept = nullptr;
    /// The names of the named alternatives' tags.
    NameFn names = nullptr;
    /// What a name names, for "unknown <what> ...".
    std::string_view what;
    /// What the selector must be, for "expected ..., got ...".
    std::string_view expected;
    /// The error for a name that no alternative has (never: each name has one).
    std::string_view no_such;
};

/// A layout's "tag": a layout name, or a number for an ExtensionLayout.
inline constexpr Selection<LayoutDescriptor, ExtensionLayout> kLayoutSelection = {
    &ExtensionLayout::tag, layout_tag, layout_tag_name,
    "layout", "a layout name or a number", "no such layout"};

/// A quantization's "scheme": a scheme name, or a number for an OpaqueQuantization.
inline constexpr Selection<QuantizationScheme, OpaqueQuantization> kSchemeSelection = {
    &OpaqueQuantization::scheme_tag, scheme_tag, scheme_tag_name,
    "quantization scheme", "a scheme name or a number", "no such scheme"};

/// The member that selects the alternative of a variant (a layout's "tag", a
/// scheme's "scheme"); the alternative's own fields follow it in the same object.
/// `V` may be const.
template <typename V, typename Open>
struct Selector {
    V& value;                                            ///< The variant.
    const Selection<std::remove_const_t<V>, Open>& how;  ///< How it is selected.
};

/// `value` as the selector of its alternative, spelled as `how` says (see Selector).
template <typename V, typename Open>
Selector<V, Open> selector(V& value, const Selection<std::remove_const_t<V>, Open>& how) {
    return {value, how};
}

/// Whether a value of `T` is a JSON object of the members visit_fields lists (the
/// alternatives of a layout or scheme are not: their fields follow the selector).
template <typename T>
inline constexpr bool kIsObject =
    kIsAnyOf<T, TensorDescriptor, LayoutDescriptor, TiledLevel, BufferHandle, QuantizationDescriptor,
             ShardDescriptor, Statistics, ExtensionTypeDescriptor, CompositeMember>;

/// A container (std::vector, SmallVector) of objects: a JSON array of objects.
template <typename C>
concept ObjectArray = requires(C& c, typename C::value_type&& v) { c.push_back(std::move(v)); } &&
                      kIsObject<typename C::value_type>;

/// Calls `field(key, member)` for each member of the object `s` (a type of kIsObject,
/// or a layout or scheme alternative: the fields after its selector), in document
/// order; `S` may be const. Members that need it are wrapped (EnumField, Omittable,
/// Selector). The order is the writer's and the reader's: the first missing or
/// mistyped member in it is the one reported.
template <typename S, typename F>
void visit_fields(S& s, F&& field) {
    using T = std::remove_const_t<S>;
    if constexpr (std::is_same_v<T, TensorDescriptor>) {
        field("version_major", s.version_major);
        field("version_minor", s.version_minor);
        field("element_type", enum_field(s.element_type, element_type_name, "element type"));
        field("shape", s.shape);
        field("byte_offset", s.byte_offset);
        field("layout", s.layout);
        field("buffers", s.buffers);
        field("quantization", s.quantization);
        field("shard", s.shard);
        field("statistics", s.statistics);
        field("extension_type", s.extension_type);
        field("composite_member", s.composite_member);
        field("unknown_trailing_bytes", omittable(s.unknown_trailing_bytes));
    } else if constexpr (std::is_same_v<T, LayoutDescriptor>) {
        field("tag", selector(s, kLayoutSelection));
    } else if constexpr (kIsAnyOf<T, RowMajorLayout, ColumnMajorLayout>) {
        // No fields.
    } else if constexpr (std::is_same_v<T, StridedLayout>) {
        field("strides", s.strides);
    } else if constexpr (std::is_same_v<T, TiledLayout>) {
        field("levels", s.levels);
    } else if constexpr (std::is_same_v<T, TiledLevel>) {
        field("tile_shape", s.tile_shape);
        field("outer_layout", enum_field(s.outer_layout, layout_tag_name, "layout"));
        field("inner_layout", enum_field(s.inner_layout, layout_tag_name, "layout"));
        field("outer_strides", omittable(s.outer_strides));
        field("inner_strides", omittable(s.inner_strides));
    } else if constexpr (std::is_same_v<T, MortonLayout>) {
        field("morton_bits", s.morton_bits);
    } else if constexpr (std::is_same_v<T, CooLayout>) {
        field("nnz", s.nnz);
        field("is_sorted", s.is_sorted);
    } else if constexpr (kIsAnyOf<T, CsrLayout, CscLayout>) {
        field("nnz", s.nnz);
    } else if constexpr (std::is_same_v<T, CsfLayout>) {
        field("nnz", s.nnz);
        field("mode_order", s.mode_order);
    } else if constexpr (std::is_same_v<T, BlockPagedLayout>) {
        field("page_size", s.page_size);
        field("num_pages", s.num_pages);
        field("paged_axis", s.paged_axis);
        field("num_seqs", s.num_seqs);
        field("kv_role", enum_field(s.kv_role, kv_role_name, "kv_role"));
        field("layer_index", s.layer_index);
        field("block_table_index_type", enum_field(s.index_type, index_type_name, "block table index type"));
    } else if constexpr (std::is_same_v<T, CompositeLayout>) {
        field("composition_rule", enum_field(s.rule, composition_rule_name, "composition rule"));
        field("combine_op", enum_field(s.combine_op, combine_op_name, "combine op"));
        field("member_count", s.member_count);
    } else if constexpr (std::is_same_v<T, HilbertLayout>) {
        field("hilbert_order", s.hilbert_order);
        field("hilbert_rank", s.hilbert_rank);
    } else if constexpr (std::is_same_v<T, ExtensionLayout>) {
        field("extension_layout_id", s.layout_id);
        field("extension_data", s.data);
    } else if constexpr (std::is_same_v<T, BufferHandle>) {
        field("byte_size", s.byte_size);
        field("alignment", s.alignment);
        field("device_tag", enum_field(s.device_tag, device_tag_name, "device tag"));
        field("sync_mode", enum_field(s.sync_mode, sync_mode_name, "sync mode"));
        field("memory_class", enum_field(s.memory_class, memory_class_name, "memory class"));
    } else if constexpr (std::is_same_v<T, QuantizationDescriptor>) {
        field("scheme", selector(s.scheme, kSchemeSelection));
        field("trailing_padding", omittable(s.trailing_padding));
    } else if constexpr (std::is_same_v<T, PerTensorAffine>) {
        field("scale", s.scale);
        field("zero_point", s.zero_point);
    } else if constexpr (kIsAnyOf<T, PerChannelAffine, PerBlockAffine, Nf4Quantization, MxfpQuantization>) {
        // Scales in a buffer, one per block along an axis (per channel: per slice).
        field("axis", s.axis);
        if constexpr (!std::is_same_v<T, PerChannelAffine>) {
            field("block_size", s.block_size);
        }
        field("scale_buffer_index", s.scale_buffer_index);
        if constexpr (kIsAnyOf<T, PerChannelAffine, PerBlockAffine>) {  // affine: zero points, a scale type
            field("zero_point_buffer_index", s.zero_point_buffer_index);
            field("scale_type", enum_field(s.scale_type, element_type_name, "element type"));
        }
    } else if constexpr (std::is_same_v<T, OpaqueQuantization>) {
        field("scheme_version", s.scheme_version);
        field("flags", s.flags);
        field("payload", s.payload);
    } else if constexpr (std::is_same_v<T, ShardDescriptor>) {
        field("parent_shape", s.parent_shape);
        field("shard_offset", s.shard_offset);
    } else if constexpr (std::is_same_v<T, Statistics>) {
        field("computed_mask", s.computed_mask);
        field("nnz", s.nnz);
        field("sparsity_ratio", s.sparsity_ratio);
        field("value_min", s.value_min);
        field("value_max", s.value_max);
        field("value_abs_max", s.value_abs_max);
        field("value_mean", s.value_mean);
        field("value_stddev", s.value_stddev);
        field("nm_n", s.nm_n);
        field("nm_m", s.nm_m);
        field("has_nan", s.has_nan);
        field("has_inf", s.has_inf);
    } else if constexpr (std::is_same_v<T, ExtensionTypeDescriptor>) {
        field("bit_width", s.bit_width);
        field("packing_factor", s.packing_factor);
        field("is_float", s.is_float);
        field("is_signed", s.is_signed);
        field("sign_bits", s.sign_bits);
        field("exponent_bits", s.exponent_bits);
        field("mantissa_bits", s.mantissa_bits);
        field("exponent_bias", s.exponent_bias);
        field("has_nan", s.has_nan);
        field("has_inf", s.has_inf);
    } else {
        static_assert(std::is_same_v<T, CompositeMember>, "visit_fields: not an object of the JSON form");
        field("member_role", enum_field(s.role, member_role_name, "member role"));
    }
}

}  // namespace hurray::json_detail
