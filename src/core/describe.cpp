// SPDX-License-Identifier: Apache-2.0
#include "hurray/core/describe.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <type_traits>
#include <variant>

#include "hurray/core/text.hpp"

namespace hurray {
namespace {


std::string type_text(const TensorDescriptor& d) {
    const std::string_view n = type_name(d.element_type);
    if (!n.empty()) {
        return std::string(n);
    }
    std::string s = "type(" + hex(type_tag(d.element_type)) + ")";
    if (d.extension_type) {
        s += "<" + dec(d.extension_type->bit_width) + "-bit>";
    }
    return s;
}

std::string dims_text(std::span<const uint64_t> dims) {
    std::string s = "[";
    for (size_t k = 0; k < dims.size(); ++k) {
        s += k == 0 ? "" : ", ";
        s += dims[k] == kDynamicDim ? "?" : dec(dims[k]);
    }
    return s + "]";
}

template <typename T>
std::string list_text(const std::vector<T>& v) {
    std::string s = "[";
    for (size_t k = 0; k < v.size(); ++k) {
        s += k == 0 ? "" : ", ";
        s += std::to_string(v[k]);
    }
    return s + "]";
}

std::string double_text(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

std::string layout_text(const TensorDescriptor& d) {
    const std::string_view name = layout_name(d.layout_tag());
    return std::visit(
        [&](const auto& l) -> std::string {
            using L = std::decay_t<decltype(l)>;
            if constexpr (std::is_same_v<L, StridedLayout>) {
                return std::string(name) + " strides=" + list_text(l.strides);
            } else if constexpr (std::is_same_v<L, TiledLayout>) {
                std::string s(name);
                for (const TiledLevel& lv : l.levels) {
                    s += " tile=" + dims_text(lv.tile_shape) + " outer=" +
                         std::string(layout_name(static_cast<uint8_t>(lv.outer_layout))) + " inner=" +
                         std::string(layout_name(static_cast<uint8_t>(lv.inner_layout)));
                    if (!lv.outer_strides.empty()) {
                        s += " outer_strides=" + list_text(lv.outer_strides);
                    }
                    if (!lv.inner_strides.empty()) {
                        s += " inner_strides=" + list_text(lv.inner_strides);
                    }
                }
                return s;
            } else if constexpr (std::is_same_v<L, MortonLayout>) {
                return std::string(name) + " bits=" + list_text(l.morton_bits);
            } else if constexpr (std::is_same_v<L, CooLayout>) {
                return std::string(name) + " nnz=" + dec(l.nnz) + (l.is_sorted ? " sorted" : " unsorted");
            } else if constexpr (std::is_same_v<L, CsrLayout> || std::is_same_v<L, CscLayout>) {
                return std::string(name) + " nnz=" + dec(l.nnz);
            } else if constexpr (std::is_same_v<L, CsfLayout>) {
                return std::string(name) + " nnz=" + dec(l.nnz) + " mode_order=" + list_text(l.mode_order);
            } else if constexpr (std::is_same_v<L, BlockPagedLayout>) {
                static constexpr const char* kRoles[] = {"key", "value", "fused"};
                const auto role = static_cast<uint8_t>(l.kv_role);
                return std::string(name) + " page_size=" + dec(l.page_size) + " num_pages=" + dec(l.num_pages) +
                       " num_seqs=" + dec(l.num_seqs) + " kv_role=" + (role < 3 ? kRoles[role] : hex(role)) +
                       " layer=" + (l.layer_index == kNoLayerIndex ? std::string("none") : dec(l.layer_index)) +
                       " index=" + (l.index_type == BlockTableIndexType::kUInt64 ? "uint64" : "uint32");
            } else if constexpr (std::is_same_v<L, CompositeLayout>) {
                static constexpr const char* kRules[] = {"?", "partition", "overlay", "group"};
                static constexpr const char* kOps[] = {"none", "replace", "add"};
                const auto rule = static_cast<uint8_t>(l.rule);
                const auto op = static_cast<uint8_t>(l.combine_op);
                return std::string(name) + " rule=" + (rule >= 1 && rule <= 3 ? kRules[rule] : hex(rule)) +
                       " combine=" + (op <= 2 ? kOps[op] : hex(op)) + " members=" + dec(l.member_count);
            } else if constexpr (std::is_same_v<L, HilbertLayout>) {
                return std::string(name) + " order=" + dec(l.hilbert_order);
            } else if constexpr (std::is_same_v<L, ExtensionLayout>) {
                return std::string(name) + "(" + hex(l.tag) + ") id=" + hex(l.layout_id, 16) + " data=" + dec(l.data.size()) +
                       " B";
            } else {
                return std::string(name);
            }
        },
        d.layout);
}

std::string quant_text(const QuantizationDescriptor& q) {
    auto zp = [](const std::optional<uint32_t>& z) {
        return z ? " zero_points=buffer[" + dec(*z) + "]" : std::string(" symmetric");
    };
    return std::visit(
        [&](const auto& s) -> std::string {
            using S = std::decay_t<decltype(s)>;
            if constexpr (std::is_same_v<S, PerTensorAffine>) {
                return "per_tensor_affine scale=" + double_text(s.scale) + " zero_point=" +
                       std::to_string(s.zero_point);
            } else if constexpr (std::is_same_v<S, PerChannelAffine>) {
                return "per_channel_affine axis=" + dec(s.axis) + " scales=buffer[" +
                       dec(s.scale_buffer_index) + "]" + zp(s.zero_point_buffer_index);
            } else if constexpr (std::is_same_v<S, PerBlockAffine>) {
                return "per_block_affine axis=" + dec(s.axis) + " block=" + dec(s.block_size) + " scales=" +
                       std::string(type_name(s.scale_type)) + " buffer[" + dec(s.scale_buffer_index) + "]" +
                       zp(s.zero_point_buffer_index);
            } else if constexpr (std::is_same_v<S, Nf4Quantization> || std::is_same_v<S, MxfpQuantization>) {
                return std::string(std::is_same_v<S, Nf4Quantization> ? "nf4" : "mxfp") + " axis=" +
                       dec(s.axis) + " block=" + dec(s.block_size) + " scales=buffer[" +
                       dec(s.scale_buffer_index) + "]";
            } else {
                return "scheme(" + hex(s.scheme_tag) + ") v" + dec(s.scheme_version) + " flags=" +
                       hex(s.flags, 4) + " payload=" + dec(s.payload.size()) + " B";
            }
        },
        q.scheme);
}

}  // namespace

std::string summarize(const TensorDescriptor& d) {
    std::string s = type_text(d) + dims_text(d.shape) + " " + layout_text(d);
    uint64_t total = 0;
    for (const BufferHandle& b : d.buffers) {
        total += b.byte_size;
    }
    s += ", " + dec(d.buffers.size()) + (d.buffers.size() == 1 ? " buffer (" : " buffers (") + dec(total) +
         " B)";
    if (d.quantization) {
        s += ", " + quant_text(*d.quantization);
    }
    if (d.shard) {
        s += ", shard of " + dims_text(d.shard->parent_shape) + " at " + dims_text(d.shard->shard_offset);
    }
    return s;
}

std::string describe(const TensorDescriptor& d, const std::string& indent) {
    std::string s;
    auto line = [&](const std::string& text) { s += indent + text + "\n"; };
    line("version      " + dec(d.version_major) + "." + dec(d.version_minor));
    line("type         " + type_text(d) + " (" + hex(type_tag(d.element_type)) + ")");
    line("shape        " + dims_text(d.shape) + " (rank " + dec(d.rank()) + ")");
    line("layout       " + layout_text(d));
    line("byte_offset  " + dec(d.byte_offset));
    line("flags        " + hex(d.flags(), 8));
    for (size_t i = 0; i < d.buffers.size(); ++i) {
        const BufferHandle& b = d.buffers[i];
        line("buffer[" + dec(i) + "]    " + dec(b.byte_size) + " B, align " + dec(b.alignment) + ", " +
             std::string(device_name(b.device_tag)) + ", sync " + hex(static_cast<uint8_t>(b.sync_mode)) +
             ", class " + hex(static_cast<uint8_t>(b.memory_class)));
    }
    if (d.quantization) {
        line("quantization " + quant_text(*d.quantization));
    }
    if (d.shard) {
        line("shard        parent " + dims_text(d.shard->parent_shape) + " offset " +
             dims_text(d.shard->shard_offset));
    }
    if (d.statistics) {
        const Statistics& st = *d.statistics;
        std::string t = "statistics   mask " + hex(st.computed_mask);
        if ((st.computed_mask & kStatNnzValid) != 0) {
            t += " nnz=" + dec(st.nnz);
        }
        if ((st.computed_mask & kStatSparsityValid) != 0) {
            t += " sparsity=" + double_text(st.sparsity_ratio);
        }
        if ((st.computed_mask & kStatValueRangeValid) != 0) {
            t += " min=" + double_text(st.value_min) + " max=" + double_text(st.value_max) +
                 " absmax=" + double_text(st.value_abs_max);
        }
        if ((st.computed_mask & kStatValueStatsValid) != 0) {
            t += " mean=" + double_text(st.value_mean) + " stddev=" + double_text(st.value_stddev);
        }
        if ((st.computed_mask & kStatNmSparsityValid) != 0) {
            t += " n:m=" + dec(st.nm_n) + ":" + dec(st.nm_m);
        }
        if ((st.computed_mask & kStatNanInfValid) != 0) {
            t += std::string(" nan=") + (st.has_nan ? "yes" : "no") + " inf=" + (st.has_inf ? "yes" : "no");
        }
        line(t);
    }
    if (d.extension_type) {
        const ExtensionTypeDescriptor& e = *d.extension_type;
        line("ext_type     " + dec(e.bit_width) + " bits, " + (e.is_float ? "float" : "integer") +
             (e.is_float ? " e" + dec(e.exponent_bits) + "m" + dec(e.mantissa_bits) + " bias " +
                               dec(e.exponent_bias)
                         : std::string(e.is_signed ? " signed" : " unsigned")));
    }
    if (d.composite_member) {
        line(std::string("member       role ") +
             (d.composite_member->role == MemberRole::kBase ? "base" : "correction"));
    }
    if (!d.unknown_trailing_bytes.empty()) {
        line("trailing     " + dec(d.unknown_trailing_bytes.size()) + " B from a newer minor version");
    }
    return s;
}

std::string leading_bytes(std::span<const uint8_t> bytes, size_t max) {
    const auto first = bytes.first(std::min(bytes.size(), max));
    std::string s = hex_bytes(first, " ") + " (\"";
    for (const uint8_t b : first) {
        s += (b >= 0x20 && b < 0x7F) ? static_cast<char>(b) : '.';
    }
    return s + "\")";
}

std::string hex_bytes(std::span<const uint8_t> bytes, std::string_view separator) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string s;
    s.reserve(bytes.size() * (2 + separator.size()));
    for (size_t i = 0; i < bytes.size(); ++i) {
        if (i > 0) {
            s.append(separator);
        }
        s += kHex[bytes[i] >> 4U];
        s += kHex[bytes[i] & 0xFU];
    }
    return s;
}

}  // namespace hurray
