// SPDX-License-Identifier: Apache-2.0
// Quantizers for authoring: calibration, rounding and packing of float32
// values into the storage of each quantization scheme (quantization/*.md).
// The descriptor comes from the builder (size_buffers), which checks it; the
// buffers it sizes are then filled in three passes over the elements:
// parameter ranges, parameters, codes.
#include "hurray/core/quantize.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <variant>

#include "hurray/core/checked_math.hpp"
#include "core/quant_storage.hpp"
#include "hurray/core/text.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/element_convert.hpp"

namespace hurray {

std::vector<std::span<const uint8_t>> QuantizedTensor::spans() const {
    std::vector<std::span<const uint8_t>> s;
    s.reserve(buffers.size());
    for (const std::vector<uint8_t>& b : buffers) {
        s.emplace_back(b);
    }
    return s;
}

namespace {


// How an element's parameter index follows from its position.
enum class ParamKind : uint8_t { kTensor, kChannel, kBlock };

// The row-major walk over [outer, len, inner] around the parameter axis; the
// storage extent of the axis is `ext` (len padded to whole blocks when the
// scheme pads).
struct Walk {
    ParamKind kind = ParamKind::kTensor;
    uint64_t outer = 1;
    uint64_t len = 1;
    uint64_t ext = 1;
    uint64_t inner = 1;
    uint64_t block = 1;
    uint64_t blocks_per_axis = 1;
    uint64_t entries = 1;  // parameter entries
};

Walk make_walk(ParamKind kind, const Shape& shape, uint64_t count, uint32_t axis, uint32_t block, bool pad) {
    Walk w;
    w.kind = kind;
    if (kind == ParamKind::kTensor) {
        w.len = w.ext = count;
        return w;
    }
    for (size_t d = 0; d < shape.size(); ++d) {
        if (d < axis) {
            w.outer *= shape[d];
        } else if (d > axis) {
            w.inner *= shape[d];
        }
    }
    w.len = shape[axis];
    w.block = kind == ParamKind::kBlock ? block : 1;
    w.blocks_per_axis = ceil_div(w.len, w.block);
    w.ext = pad ? w.blocks_per_axis * w.block : w.len;
    w.entries = kind == ParamKind::kChannel ? w.len : w.outer * w.inner * w.blocks_per_axis;
    return w;
}

// Calls f(logical index, storage index, parameter index) for every element.
// The builder sized the buffers for these descriptors, so every product below
// is bounded by the (padded) element count, which does not overflow.
template <typename F>
void for_each_element(const Walk& w, F&& f) {
    for (uint64_t o1 = 0; o1 < w.outer; ++o1) {
        for (uint64_t i = 0; i < w.len; ++i) {
            const uint64_t logical = (o1 * w.len + i) * w.inner;
            const uint64_t storage = (o1 * w.ext + i) * w.inner;
            for (uint64_t in = 0; in < w.inner; ++in) {
                uint64_t param = 0;
                if (w.kind == ParamKind::kChannel) {
                    param = i;
                } else if (w.kind == ParamKind::kBlock) {
                    param = (o1 * w.inner + in) * w.blocks_per_axis + i / w.block;
                }
                f(logical + in, storage + in, param);
            }
        }
    }
}

// Writes the low `width` bytes of `v`, little-endian, at `at`.
// SAFETY: callers write parameter entries below the entry count the builder
// sized the buffer for.
void put_le(std::vector<uint8_t>& buf, uint64_t at, uint32_t v, uint32_t width) {
    for (uint32_t b = 0; b < width; ++b) {
        buf[static_cast<size_t>(at + b)] = static_cast<uint8_t>(v >> (8 * b));
    }
}

// Writes the storage code `code` (two's complement, truncated to the type's
// width) as element `index` of the data buffer.
// SAFETY: `index` is below the (padded) element count the data buffer holds.
void store_code(ElementType t, std::vector<uint8_t>& buf, uint64_t index, uint32_t code) {
    const uint32_t bits = bit_width(t);
    if (bits < 8) {
        store_packed(buf, index, bits, code & ((1U << bits) - 1));
        return;
    }
    put_le(buf, index * (bits / 8), code, bits / 8);
}

// Checks the value count and that every value is finite.
Result<uint64_t> check_values(const char* fn, std::span<const float> values, const Shape& shape) {
    HURRAY_ASSIGN_OR_RETURN(uint64_t count, element_count(shape));
    if (values.size() != count) {
        return Error(ErrorCode::kInvalidArgument, std::string(fn) + ": " + dec(values.size()) +
                                                      " values given, the shape has " + dec(count) +
                                                      " elements");
    }
    for (size_t i = 0; i < values.size(); ++i) {
        if (!std::isfinite(values[i])) {
            return Error(ErrorCode::kInvalidArgument,
                         std::string(fn) + ": values[" + dec(i) + "] is not finite");
        }
    }
    return count;
}

// A descriptor for `scheme` with buffers sized and checked, and zeroed buffers.
Result<QuantizedTensor> allocate(ElementType storage, const Shape& shape, const QuantizationScheme& scheme) {
    TensorDescriptor d;
    d.element_type = storage;
    d.shape = shape;
    d.quantization = QuantizationDescriptor{scheme, {}};
    HURRAY_ASSIGN_OR_RETURN(TensorDescriptor sized, size_buffers(std::move(d)));
    QuantizedTensor q;
    q.descriptor = std::move(sized);
    for (const BufferHandle& h : q.descriptor.buffers) {
        q.buffers.emplace_back(static_cast<size_t>(h.byte_size), uint8_t{0});
    }
    return q;
}

// A scale rounded up to a value of its type, and that value's bits.
struct StoredScale {
    float value = 1.0F;
    uint32_t bits = 0;
};

// The smallest value of `type` (float32, float16, bfloat16) >= s > 0.
Result<StoredScale> round_up_scale(double s, ElementType type, const char* fn, uint64_t entry) {
    auto overflow = [&] {
        return Error(ErrorCode::kInvalidArgument,
                     std::string(fn) + ": the scale of parameter entry " + dec(entry) + " (" +
                         std::to_string(s) + ") overflows " + std::string(type_name(type)));
    };
    auto f = static_cast<float>(s);
    if (std::isfinite(f) && static_cast<double>(f) < s) {
        f = std::nextafter(f, std::numeric_limits<float>::infinity());
    }
    if (!std::isfinite(f)) {
        return overflow();
    }
    if (type == ElementType::kFloat32) {
        return StoredScale{f, std::bit_cast<uint32_t>(f)};
    }
    const bool half = type == ElementType::kFloat16;
    uint16_t h = half ? float_to_float16(f) : float_to_bfloat16(f);
    auto widen = [half](uint16_t b) { return half ? float16_to_float(b) : bfloat16_to_float(b); };
    if (widen(h) < f) {
        ++h;  // the next larger positive value
    }
    const float v = widen(h);
    if (!std::isfinite(v)) {
        return overflow();
    }
    return StoredScale{v, h};
}

// Affine parameters of one entry whose values span [lo, hi].
struct AffineParams {
    StoredScale scale{};
    int32_t zero_point = 0;
};

Result<AffineParams> calibrate_affine(const char* fn, double lo, double hi, detail::CodeRange r, bool symmetric,
                                      ElementType scale_type, uint64_t entry) {
    const auto qmin = static_cast<double>(r.min);
    const auto qmax = static_cast<double>(r.max);
    AffineParams p;
    if (symmetric) {
        if (r.min == 0 && lo < 0) {
            return Error(ErrorCode::kInvalidArgument,
                         std::string(fn) + ": parameter entry " + dec(entry) +
                             " has negative values, which symmetric quantization to an unsigned "
                             "storage type cannot represent");
        }
        const double amax = std::max(-lo, hi);
        const double s = amax / qmax;
        HURRAY_ASSIGN_OR_RETURN(p.scale, round_up_scale(s > 0 ? s : 1.0, scale_type, fn, entry));
        return p;
    }
    lo = std::min(lo, 0.0);
    hi = std::max(hi, 0.0);
    // The zero point is an int32 field: for uint32 storage it stops at 2^31 - 1.
    const double zmax = std::min(qmax, static_cast<double>(INT32_MAX));
    const double zmin = std::max(qmin, static_cast<double>(INT32_MIN));
    double s = (hi - lo) / (qmax - qmin);
    if (zmax < qmax && lo < 0) {
        s = std::max(s, -lo / (zmax - qmin));
    }
    HURRAY_ASSIGN_OR_RETURN(p.scale, round_up_scale(s > 0 ? s : 1.0, scale_type, fn, entry));
    const double z = std::nearbyint(qmin - lo / static_cast<double>(p.scale.value));
    p.zero_point = static_cast<int32_t>(std::clamp(z, zmin, zmax));
    return p;
}

// clamp(round(x / scale) + zero_point) as the storage bit pattern.
uint32_t affine_code(float x, const AffineParams& p, detail::CodeRange r) {
    const double q = std::nearbyint(static_cast<double>(x) / static_cast<double>(p.scale.value)) + p.zero_point;
    const double c = std::clamp(q, static_cast<double>(r.min), static_cast<double>(r.max));
    return static_cast<uint32_t>(static_cast<int64_t>(c));
}

// Per-tensor, per-channel and per-block affine.
Result<QuantizedTensor> quantize_affine(const char* fn, std::span<const float> values, const Shape& shape,
                                        ElementType storage, const QuantizationScheme& scheme, ParamKind kind,
                                        uint32_t axis, uint32_t block, ElementType scale_type, bool symmetric) {
    HURRAY_ASSIGN_OR_RETURN(uint64_t count, check_values(fn, values, shape));
    HURRAY_ASSIGN_OR_RETURN(QuantizedTensor q, allocate(storage, shape, scheme));  // checks axis, block, storage
    const detail::CodeRange r = *detail::affine_code_range(storage);
    const Walk w = make_walk(kind, shape, count, axis, block, kind == ParamKind::kBlock);

    std::vector<double> lo(static_cast<size_t>(w.entries), 0.0);
    std::vector<double> hi(static_cast<size_t>(w.entries), 0.0);
    for_each_element(w, [&](uint64_t l, uint64_t /*s*/, uint64_t p) {
        const double x = values[static_cast<size_t>(l)];
        lo[p] = std::min(lo[p], x);
        hi[p] = std::max(hi[p], x);
    });
    std::vector<AffineParams> params(static_cast<size_t>(w.entries));
    const uint32_t scale_width = bit_width(scale_type) / 8;
    for (size_t p = 0; p < params.size(); ++p) {
        HURRAY_ASSIGN_OR_RETURN(params[p], calibrate_affine(fn, lo[p], hi[p], r, symmetric, scale_type, p));
        if (kind != ParamKind::kTensor) {
            put_le(q.buffers[1], p * scale_width, params[p].scale.bits, scale_width);
            if (!symmetric) {
                put_le(q.buffers[2], p * 4, static_cast<uint32_t>(params[p].zero_point), 4);
            }
        }
    }
    if (kind == ParamKind::kTensor) {
        auto& pt = std::get<PerTensorAffine>(q.descriptor.quantization->scheme);
        pt.scale = params[0].scale.value;
        pt.zero_point = params[0].zero_point;
        HURRAY_RETURN_IF_ERROR(check_descriptor(q.descriptor));
    }
    std::vector<uint8_t>& data = q.buffers[0];
    for_each_element(w, [&](uint64_t l, uint64_t s, uint64_t p) {
        store_code(storage, data, s, affine_code(values[static_cast<size_t>(l)], params[p], r));
    });
    return q;
}

// Per-block absolute maxima.
std::vector<float> block_absmax(const Walk& w, std::span<const float> values) {
    std::vector<float> amax(static_cast<size_t>(w.entries), 0.0F);
    for_each_element(w, [&](uint64_t l, uint64_t /*s*/, uint64_t p) {
        amax[p] = std::max(amax[p], std::fabs(values[static_cast<size_t>(l)]));
    });
    return amax;
}

// The NF4 code whose level, times `absmax` in float32, is nearest to x.
uint32_t nf4_code(float x, float absmax) {
    if (absmax == 0.0F) {
        return 7;  // the level 0.0
    }
    const double t = static_cast<double>(x) / static_cast<double>(absmax);
    const auto* first = std::begin(kNf4Levels);
    const auto k = static_cast<uint32_t>(std::lower_bound(first, std::end(kNf4Levels), t) - first);
    const uint32_t hi_k = std::min<uint32_t>(k, 15);
    const uint32_t lo_k = k == 0 ? 0 : k - 1;
    const float e_lo = std::fabs(x - absmax * kNf4Levels[lo_k]);
    const float e_hi = std::fabs(x - absmax * kNf4Levels[hi_k]);
    return e_hi < e_lo ? hi_k : lo_k;
}

// An MXFP element type: emax of the element and its encoder.
struct MxElement {
    int emax = 0;
    double max = 0;  // largest finite magnitude
    double min = 0;  // smallest value (integers), or -max
    bool integer = false;
};

std::optional<MxElement> mx_element(ElementType t) {
    using E = ElementType;
    switch (t) {
        case E::kFloat8E4M3: return MxElement{8, 448.0, -448.0, false};
        case E::kFloat8E5M2: return MxElement{15, 57344.0, -57344.0, false};
        case E::kFloat4E2M1: return MxElement{2, 6.0, -6.0, false};
        case E::kFloat6E2M3: return MxElement{2, 7.5, -7.5, false};
        case E::kFloat6E3M2: return MxElement{4, 28.0, -28.0, false};
        case E::kInt8: return MxElement{6, 127.0, -128.0, true};
        case E::kInt4: return MxElement{2, 7.0, -8.0, true};
        default: break;
    }
    return std::nullopt;
}

// The storage code of v (already divided by the block scale).
uint32_t mx_code(ElementType t, const MxElement& m, double v) {
    const double c = std::clamp(v, m.min, m.max);
    if (m.integer) {
        return static_cast<uint32_t>(static_cast<int32_t>(std::nearbyint(c)));
    }
    const auto f = static_cast<float>(c);  // exact: v = x * 2^-e is a float value
    switch (t) {
        case ElementType::kFloat8E4M3: return float_to_float8_e4m3(f);
        case ElementType::kFloat8E5M2: return float_to_float8_e5m2(f);
        case ElementType::kFloat4E2M1: return float_to_float4_e2m1(f);
        case ElementType::kFloat6E2M3: return float_to_float6_e2m3(f);
        default: break;
    }
    return float_to_float6_e3m2(f);
}

}  // namespace

Result<QuantizedTensor> quantize_per_tensor(std::span<const float> values, const Shape& shape,
                                            ElementType storage, bool symmetric) {
    return quantize_affine("quantize_per_tensor", values, shape, storage, PerTensorAffine{}, ParamKind::kTensor,
                           0, 0, ElementType::kFloat32, symmetric);
}

Result<QuantizedTensor> quantize_per_channel(std::span<const float> values, const Shape& shape,
                                             ElementType storage, uint32_t axis, bool symmetric) {
    PerChannelAffine s;
    s.axis = axis;
    s.scale_buffer_index = 1;
    if (!symmetric) {
        s.zero_point_buffer_index = 2;
    }
    return quantize_affine("quantize_per_channel", values, shape, storage, s, ParamKind::kChannel, axis, 0,
                           ElementType::kFloat32, symmetric);
}

Result<QuantizedTensor> quantize_per_block(std::span<const float> values, const Shape& shape,
                                           ElementType storage, uint32_t axis, uint32_t block_size,
                                           ElementType scale_type, bool symmetric) {
    return quantize_affine("quantize_per_block", values, shape, storage,
                           detail::per_block_affine(axis, block_size, scale_type, symmetric), ParamKind::kBlock, axis,
                           block_size, scale_type, symmetric);
}

Result<QuantizedTensor> quantize_nf4(std::span<const float> values, const Shape& shape, uint32_t axis,
                                     uint32_t block_size) {
    HURRAY_ASSIGN_OR_RETURN(uint64_t count, check_values("quantize_nf4", values, shape));
    Nf4Quantization s;
    s.axis = axis;
    s.block_size = block_size;
    s.scale_buffer_index = 1;
    HURRAY_ASSIGN_OR_RETURN(QuantizedTensor q, allocate(ElementType::kUInt4, shape, s));
    const Walk w = make_walk(ParamKind::kBlock, shape, count, axis, block_size, true);
    const std::vector<float> amax = block_absmax(w, values);
    for (size_t b = 0; b < amax.size(); ++b) {
        put_le(q.buffers[1], b * 4, std::bit_cast<uint32_t>(amax[b]), 4);
    }
    for_each_element(w, [&](uint64_t l, uint64_t st, uint64_t p) {
        store_code(ElementType::kUInt4, q.buffers[0], st, nf4_code(values[static_cast<size_t>(l)], amax[p]));
    });
    return q;
}

Result<QuantizedTensor> quantize_mxfp(std::span<const float> values, const Shape& shape, ElementType storage,
                                      uint32_t axis, uint32_t block_size) {
    HURRAY_ASSIGN_OR_RETURN(uint64_t count, check_values("quantize_mxfp", values, shape));
    MxfpQuantization s;
    s.axis = axis;
    s.block_size = block_size;
    s.scale_buffer_index = 1;
    HURRAY_ASSIGN_OR_RETURN(QuantizedTensor q, allocate(storage, shape, s));  // checks the storage type
    const MxElement m = *mx_element(storage);
    const Walk w = make_walk(ParamKind::kBlock, shape, count, axis, block_size, false);
    const std::vector<float> amax = block_absmax(w, values);
    std::vector<double> scale(amax.size());
    for (size_t b = 0; b < amax.size(); ++b) {
        // floor(log2(0)) is -infinity: clamped, like any tiny block, to 2^-126.
        const int e = amax[b] == 0.0F ? -127 : std::ilogb(amax[b]) - m.emax;
        const uint8_t bits = float8_e8m0_from_exponent(e);
        q.buffers[1][b] = bits;
        scale[b] = std::ldexp(1.0, static_cast<int>(bits) - 127);
    }
    for_each_element(w, [&](uint64_t l, uint64_t st, uint64_t p) {
        const double v = static_cast<double>(values[static_cast<size_t>(l)]) / scale[p];
        store_code(storage, q.buffers[0], st, mx_code(storage, m, v));
    });
    return q;
}

}  // namespace hurray
