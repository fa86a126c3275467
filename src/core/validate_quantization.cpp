// SPDX-License-Identifier: Apache-2.0
// Data validation of quantization parameter values (quantization/*.md
// § Validity Constraints, § Referenced Buffer(s)): per-channel and per-block
// scales and zero points, NF4 absmax, MXFP e8m0 scales. The per-tensor
// scheme keeps its parameters in the descriptor, which check_descriptor
// checks; opaque (private) schemes are not interpreted.
#include <bit>
#include <cmath>
#include <cstdio>
#include <string>
#include <variant>

#include "core/quant_storage.hpp"
#include "hurray/core/text.hpp"
#include "core/validate_internal.hpp"
#include "hurray/core/element_convert.hpp"

namespace hurray::detail {
namespace {

/// Where the scales and the zero points of a scheme are, and what they hold.
struct ParamBuffers {
    const char* scheme = "";
    uint32_t scale_buffer = 0;
    ElementType scale_type = ElementType::kFloat32;
    bool has_zero_points = false;
    uint32_t zero_point_buffer = 0;
};

/// Text of a scale value for a message: "%g", "NaN", "inf", "-inf".
std::string value_text(float v) {
    if (std::isnan(v)) {
        return "NaN";
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", static_cast<double>(v));
    return buf;
}

/// Decodes scale entry `i` of a scale buffer of `type` (float16, bfloat16 or float32).
float scale_at(const IndexArray& raw, uint64_t i, ElementType type) {
    const uint64_t bits = raw[i];
    switch (type) {
        case ElementType::kFloat16: return float16_to_float(static_cast<uint16_t>(bits));
        case ElementType::kBFloat16: return bfloat16_to_float(static_cast<uint16_t>(bits));
        default: return std::bit_cast<float>(static_cast<uint32_t>(bits));
    }
}

/// Bytes per scale of the scale types the schemes allow (0 for others).
uint32_t scale_width(ElementType type) {
    switch (type) {
        case ElementType::kFloat16:
        case ElementType::kBFloat16: return 2;
        case ElementType::kFloat32: return 4;
        default: return 0;
    }
}

// The scales of an affine scheme (finite, non-zero) and its int32 zero points
// (within the storage type's range).
Status check_affine(const DataCtx& c, const ParamBuffers& p) {
    const std::string scale_field = std::string(p.scheme) + ".scale";
    const std::string zp_field = std::string(p.scheme) + ".zero_point";
    const uint32_t w = scale_width(p.scale_type);
    if (w == 0) {
        return data_error(scale_field + ": scale type " + hex(type_tag(p.scale_type)) + " is not float16, bfloat16 or float32");
    }
    HURRAY_ASSIGN_OR_RETURN(std::span<const uint8_t> scale_bytes, data_buffer(c, p.scale_buffer, scale_field.c_str()));
    // A shared buffer holds the scales, then the zero points (check_descriptor
    // sized it as the concatenation).
    const bool shared = p.has_zero_points && p.zero_point_buffer == p.scale_buffer;
    const uint64_t entries = scale_bytes.size() / (shared ? w + 4 : w);
    const IndexArray scales = IndexArray::whole(scale_bytes.first(static_cast<size_t>(entries * w)), w);
    for (uint64_t i = 0; i < entries; ++i) {
        const float s = scale_at(scales, i, p.scale_type);
        if (!std::isfinite(s) || s == 0.0F) {
            return data_error(at_entry(scale_field.c_str(), p.scale_buffer, i, scales.byte_of(i)) + value_text(s) +
                              " is not a finite, non-zero " + std::string(type_name(p.scale_type)) + " scale");
        }
    }
    if (!p.has_zero_points) {
        return Status::success();
    }
    std::span<const uint8_t> zp_bytes;
    uint64_t base = 0;  // byte offset of the zero points in their buffer
    if (shared) {
        base = entries * w;
        zp_bytes = scale_bytes.subspan(static_cast<size_t>(base), static_cast<size_t>(entries * 4));
    } else {
        HURRAY_ASSIGN_OR_RETURN(zp_bytes, data_buffer(c, p.zero_point_buffer, zp_field.c_str()));
    }
    const IndexArray zps = IndexArray::whole(zp_bytes, 4);
    // check_descriptor accepted the storage type, so it has a range; an int32
    // zero point is never outside the fallback.
    const CodeRange range = affine_code_range(c.d.element_type).value_or(CodeRange{INT32_MIN, INT32_MAX});
    const int64_t lo = range.min;
    const int64_t hi = range.max;
    for (uint64_t i = 0; i < zps.size(); ++i) {
        const auto z = static_cast<int32_t>(static_cast<uint32_t>(zps[i]));
        if (z < lo || z > hi) {
            return data_error(at_entry(zp_field.c_str(), p.zero_point_buffer, i, base + zps.byte_of(i)) +
                              std::to_string(z) + " is outside the range [" + std::to_string(lo) + ", " +
                              std::to_string(hi) + "] of the storage type " +
                              std::string(type_name(c.d.element_type)));
        }
    }
    return Status::success();
}

Status check_nf4(const DataCtx& c, const Nf4Quantization& q) {
    HURRAY_ASSIGN_OR_RETURN(std::span<const uint8_t> bytes, data_buffer(c, q.scale_buffer_index, "nf4.absmax"));
    const IndexArray absmax = IndexArray::whole(bytes, 4);
    for (uint64_t i = 0; i < absmax.size(); ++i) {
        const auto s = std::bit_cast<float>(static_cast<uint32_t>(absmax[i]));
        if (!std::isfinite(s) || s < 0.0F) {
            return data_error(at_entry("nf4.absmax", q.scale_buffer_index, i, absmax.byte_of(i)) + value_text(s) +
                              " is not a finite, non-negative float32");
        }
    }
    return Status::success();
}

Status check_mxfp(const DataCtx& c, const MxfpQuantization& q) {
    HURRAY_ASSIGN_OR_RETURN(std::span<const uint8_t> bytes, data_buffer(c, q.scale_buffer_index, "mxfp.scale"));
    for (size_t i = 0; i < bytes.size(); ++i) {
        if (bytes[i] == 0x00 || bytes[i] == 0xFF) {
            return data_error(at_entry("mxfp.scale", q.scale_buffer_index, i, i) + "float8_e8m0 " + hex(bytes[i]) +
                              " is reserved (NaN) and must not appear in a scale buffer");
        }
    }
    return Status::success();
}

}  // namespace

Status validate_quantization_values(const DataCtx& c) {
    if (!c.d.quantization) {
        return Status::success();
    }
    const QuantizationScheme& s = c.d.quantization->scheme;
    if (const auto* q = std::get_if<PerChannelAffine>(&s)) {
        return check_affine(c, {"per_channel_affine", q->scale_buffer_index, q->scale_type,
                                q->zero_point_buffer_index.has_value(), q->zero_point_buffer_index.value_or(0)});
    }
    if (const auto* q = std::get_if<PerBlockAffine>(&s)) {
        return check_affine(c, {"per_block_affine", q->scale_buffer_index, q->scale_type,
                                q->zero_point_buffer_index.has_value(), q->zero_point_buffer_index.value_or(0)});
    }
    if (const auto* q = std::get_if<Nf4Quantization>(&s)) {
        return check_nf4(c, *q);
    }
    if (const auto* q = std::get_if<MxfpQuantization>(&s)) {
        return check_mxfp(c, *q);
    }
    return Status::success();
}

}  // namespace hurray::detail
