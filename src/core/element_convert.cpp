// SPDX-License-Identifier: Apache-2.0
// Element conversions (element-types.md). Reads of element storage go through
// bounds-checked spans; the bit manipulation itself is pure arithmetic.
#include "hurray/core/element_convert.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "core/float16_widen.hpp"
#include "hurray/core/byte_io.hpp"
#include "hurray/core/text.hpp"

namespace hurray {
namespace {

__extension__ typedef unsigned __int128 u128;  // NOLINT(modernize-use-using): needs typedef

// --- Generic small floats (float8 e4m3/e5m2, float6, float4) ----------------

enum class Special : uint8_t {
    kIeee,  // all-ones exponent: infinity (mantissa 0) or NaN
    kE4M3,  // only S.1111.111 is NaN; no infinities
    kNone,  // every code is finite
};

struct MiniFloat {
    int exp_bits;
    int man_bits;
    int bias;
    Special special;

    [[nodiscard]] uint32_t sign_bit() const { return 1U << (exp_bits + man_bits); }
    [[nodiscard]] uint32_t exp_max() const { return (1U << exp_bits) - 1; }
    [[nodiscard]] uint32_t man_mask() const { return (1U << man_bits) - 1; }
    // Largest finite code (without sign).
    [[nodiscard]] uint32_t max_code() const {
        switch (special) {
            case Special::kIeee: return ((exp_max() - 1) << man_bits) | man_mask();
            case Special::kE4M3: return (exp_max() << man_bits) | (man_mask() - 1);
            case Special::kNone: break;
        }
        return (exp_max() << man_bits) | man_mask();
    }
};

constexpr MiniFloat kE4M3{4, 3, 7, Special::kE4M3};
constexpr MiniFloat kE5M2{5, 2, 15, Special::kIeee};
constexpr MiniFloat kE2M1{2, 1, 1, Special::kNone};
constexpr MiniFloat kE2M3{2, 3, 1, Special::kNone};
constexpr MiniFloat kE3M2{3, 2, 3, Special::kNone};

float mini_decode(uint32_t code, const MiniFloat& f) {
    const bool neg = (code & f.sign_bit()) != 0;
    const uint32_t exp = (code >> f.man_bits) & f.exp_max();
    const uint32_t man = code & f.man_mask();
    float v = 0;
    if (f.special == Special::kIeee && exp == f.exp_max()) {
        if (man != 0) {
            // NaN: keep the payload in the top mantissa bits, quiet.
            const uint32_t bits = (neg ? 0x80000000U : 0U) | 0x7FC00000U | (man << (23 - f.man_bits));
            return std::bit_cast<float>(bits);
        }
        v = std::numeric_limits<float>::infinity();
    } else if (f.special == Special::kE4M3 && exp == f.exp_max() && man == f.man_mask()) {
        v = std::numeric_limits<float>::quiet_NaN();
    } else if (exp == 0) {
        v = std::ldexp(static_cast<float>(man), 1 - f.bias - f.man_bits);
    } else {
        v = std::ldexp(static_cast<float>(man | (1U << f.man_bits)), static_cast<int>(exp) - f.bias - f.man_bits);
    }
    return neg ? -v : v;
}

uint32_t mini_encode_magnitude(double a, const MiniFloat& f) {
    // a is finite and >= 0. Round to nearest even at the target's precision.
    const int emin = 1 - f.bias;
    if (a == 0.0) {
        return 0;
    }
    const int e = std::max(std::ilogb(a), emin);
    const double q = std::ldexp(1.0, e - f.man_bits);
    const double v = std::rint(a / q) * q;  // exact: a is a float, q a power of two
    const double max = mini_decode(f.max_code(), f);
    if (v > max) {
        return f.special == Special::kIeee ? (f.exp_max() << f.man_bits) : f.max_code();
    }
    if (v < std::ldexp(1.0, emin)) {
        return static_cast<uint32_t>(std::ldexp(v, f.man_bits - emin));  // subnormal (or zero)
    }
    const int ev = std::ilogb(v);
    const auto man = static_cast<uint32_t>(std::ldexp(v, f.man_bits - ev)) & f.man_mask();
    return (static_cast<uint32_t>(ev + f.bias) << f.man_bits) | man;
}

uint32_t mini_encode(float x, const MiniFloat& f) {
    const uint32_t sign = std::signbit(x) ? f.sign_bit() : 0;
    if (std::isnan(x)) {
        switch (f.special) {
            case Special::kIeee: {
                // Quiet bit plus the top payload bits that fit.
                const uint32_t payload = (std::bit_cast<uint32_t>(x) & 0x7FFFFF) >> (23 - f.man_bits);
                return sign | (f.exp_max() << f.man_bits) | (1U << (f.man_bits - 1)) | payload;
            }
            case Special::kE4M3: return sign | (f.exp_max() << f.man_bits) | f.man_mask();
            case Special::kNone: return 0;
        }
    }
    if (std::isinf(x)) {
        return sign | (f.special == Special::kIeee ? (f.exp_max() << f.man_bits) : f.max_code());
    }
    return sign | mini_encode_magnitude(std::fabs(static_cast<double>(x)), f);
}

template <typename I>
I saturate(double v) {
    if (std::isnan(v)) {
        return 0;
    }
    const double r = std::nearbyint(v);
    constexpr auto lo = static_cast<double>(std::numeric_limits<I>::min());
    // 2^bits for the exclusive upper bound avoids rounding the max up.
    const double hi_excl = std::ldexp(1.0, std::numeric_limits<I>::digits);
    if (r <= lo) {
        return std::numeric_limits<I>::min();
    }
    if (r >= hi_excl) {
        return std::numeric_limits<I>::max();
    }
    return static_cast<I>(r);
}

Error out_of_range(ElementType type, uint64_t index, size_t size) {
    return {ErrorCode::kInvalidArgument,
            "element " + dec(index) + " of " + std::string(type_name(type)) +
                " lies outside the " + dec(size) + "-byte buffer"};
}

}  // namespace

float float16_to_float(uint16_t bits) noexcept { return detail::widen_float16(bits); }

uint16_t float_to_float16(float value) noexcept {
    const auto x = std::bit_cast<uint32_t>(value);
    const uint32_t sign = (x >> 16) & 0x8000U;
    const uint32_t exp = (x >> 23) & 0xFFU;
    uint32_t man = x & 0x7FFFFFU;
    if (exp == 0xFF) {
        return static_cast<uint16_t>(sign | 0x7C00U | (man != 0 ? 0x200U | (man >> 13) : 0U));
    }
    const int e = static_cast<int>(exp) - 127 + 15;
    if (e >= 31) {
        return static_cast<uint16_t>(sign | 0x7C00U);
    }
    if (e <= 0) {
        if (e < -10) {
            return static_cast<uint16_t>(sign);
        }
        man |= 0x800000U;
        const auto shift = static_cast<uint32_t>(14 - e);
        uint32_t half = man >> shift;
        const uint32_t rem = man & ((1U << shift) - 1);
        const uint32_t mid = 1U << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1U) != 0)) {
            ++half;
        }
        return static_cast<uint16_t>(sign | half);
    }
    uint32_t half = (static_cast<uint32_t>(e) << 10) | (man >> 13);
    const uint32_t rem = man & 0x1FFFU;
    if (rem > 0x1000U || (rem == 0x1000U && (half & 1U) != 0)) {
        ++half;  // a carry into the exponent is the correct result, up to infinity
    }
    return static_cast<uint16_t>(sign | half);
}

float bfloat16_to_float(uint16_t bits) noexcept { return detail::widen_bfloat16(bits); }

uint16_t float_to_bfloat16(float value) noexcept {
    const auto x = std::bit_cast<uint32_t>(value);
    if ((x & 0x7FFFFFFFU) > 0x7F800000U) {
        return static_cast<uint16_t>((x >> 16) | 0x40U);  // NaN: keep the top payload, stay quiet
    }
    return static_cast<uint16_t>((x + 0x7FFFU + ((x >> 16) & 1U)) >> 16);
}

float float8_e4m3_to_float(uint8_t bits) noexcept { return mini_decode(bits, kE4M3); }
uint8_t float_to_float8_e4m3(float value) noexcept { return static_cast<uint8_t>(mini_encode(value, kE4M3)); }
float float8_e5m2_to_float(uint8_t bits) noexcept { return mini_decode(bits, kE5M2); }
uint8_t float_to_float8_e5m2(float value) noexcept { return static_cast<uint8_t>(mini_encode(value, kE5M2)); }
float float4_e2m1_to_float(uint8_t code) noexcept { return mini_decode(code & 0xFU, kE2M1); }
uint8_t float_to_float4_e2m1(float value) noexcept { return static_cast<uint8_t>(mini_encode(value, kE2M1)); }
float float6_e2m3_to_float(uint8_t code) noexcept { return mini_decode(code & 0x3FU, kE2M3); }
uint8_t float_to_float6_e2m3(float value) noexcept { return static_cast<uint8_t>(mini_encode(value, kE2M3)); }
float float6_e3m2_to_float(uint8_t code) noexcept { return mini_decode(code & 0x3FU, kE3M2); }
uint8_t float_to_float6_e3m2(float value) noexcept { return static_cast<uint8_t>(mini_encode(value, kE3M2)); }

float float8_e8m0_to_float(uint8_t bits) noexcept {
    if (bits == 0x00 || bits == 0xFF) {
        return std::numeric_limits<float>::quiet_NaN();
    }
    return std::ldexp(1.0F, static_cast<int>(bits) - 127);
}

uint8_t float8_e8m0_from_exponent(int exponent) noexcept {
    return static_cast<uint8_t>(std::clamp(exponent, -126, 127) + 127);
}

double float128_to_double(std::span<const uint8_t, 16> bytes) noexcept {
    const auto lo = load_le<uint64_t>(bytes.data());
    const auto hi = load_le<uint64_t>(bytes.data() + 8);
    const uint64_t sign = hi & 0x8000000000000000ULL;
    const auto exp = static_cast<int>((hi >> 48) & 0x7FFF);
    const u128 man = (static_cast<u128>(hi & 0xFFFFFFFFFFFFULL) << 64) | lo;  // 112 bits
    if (exp == 0x7FFF) {
        const auto top = static_cast<uint64_t>(man >> 60);  // top 52 payload bits
        const uint64_t nan = man != 0 ? (top | 0x8000000000000ULL) : 0;
        return std::bit_cast<double>(sign | 0x7FF0000000000000ULL | nan);
    }
    if (exp == 0) {
        return std::bit_cast<double>(sign);  // binary128 subnormals are far below double's range
    }
    const u128 sig = man | (static_cast<u128>(1) << 112);
    int e = exp - 16383;
    if (e > 1023) {
        return std::bit_cast<double>(sign | 0x7FF0000000000000ULL);
    }
    // Keep 53 significant bits (normal) or fewer (subnormal), round to nearest even.
    const int shift = e >= -1022 ? 60 : 60 + (-1022 - e);
    if (shift > 113) {
        return std::bit_cast<double>(sign);
    }
    u128 m = sig >> shift;
    const u128 rem = sig & ((static_cast<u128>(1) << shift) - 1);
    const u128 mid = static_cast<u128>(1) << (shift - 1);
    if (rem > mid || (rem == mid && (m & 1) != 0)) {
        ++m;
    }
    if (e >= -1022) {
        if (m == (static_cast<u128>(1) << 53)) {
            m >>= 1;
            ++e;
            if (e > 1023) {
                return std::bit_cast<double>(sign | 0x7FF0000000000000ULL);
            }
        }
        const uint64_t bits = (static_cast<uint64_t>(e + 1023) << 52) | (static_cast<uint64_t>(m) & 0xFFFFFFFFFFFFFULL);
        return std::bit_cast<double>(sign | bits);
    }
    return std::bit_cast<double>(sign | static_cast<uint64_t>(m));  // a carry makes it the smallest normal
}

void double_to_float128(double value, std::span<uint8_t, 16> out) noexcept {
    const auto x = std::bit_cast<uint64_t>(value);
    const uint64_t sign = x & 0x8000000000000000ULL;
    const auto exp = static_cast<int>((x >> 52) & 0x7FF);
    uint64_t m = x & 0xFFFFFFFFFFFFFULL;
    uint64_t e16 = 0;
    u128 man = 0;
    if (exp == 0x7FF) {
        e16 = 0x7FFF;
        man = static_cast<u128>(m) << 60;
    } else if (exp == 0) {
        if (m != 0) {
            const int p = 63 - std::countl_zero(m);  // leading bit position, 0..51
            e16 = static_cast<uint64_t>(p) + 16383 - 1074;
            m &= ~(uint64_t{1} << p);
            man = static_cast<u128>(m) << (112 - p);
        }
    } else {
        e16 = static_cast<uint64_t>(exp) + 16383 - 1023;
        man = static_cast<u128>(m) << 60;
    }
    const uint64_t hi = sign | (e16 << 48) | static_cast<uint64_t>(man >> 64);
    store_le<uint64_t>(out.data(), static_cast<uint64_t>(man));
    store_le<uint64_t>(out.data() + 8, hi);
}

uint32_t element_byte_width(ElementType type) noexcept {
    const uint32_t bits = bit_width(type);
    return bits >= 8 ? bits / 8 : 0;
}

uint32_t load_packed(std::span<const uint8_t> bytes, uint64_t index, uint32_t bit_width) noexcept {
    const uint64_t bit = index * bit_width;
    const auto byte = static_cast<size_t>(bit / 8);
    const auto shift = static_cast<uint32_t>(bit % 8);
    uint32_t word = bytes[byte];
    if (shift + bit_width > 8) {
        word |= static_cast<uint32_t>(bytes[byte + 1]) << 8;
    }
    return (word >> shift) & ((1U << bit_width) - 1);
}

void store_packed(std::span<uint8_t> bytes, uint64_t index, uint32_t bit_width, uint32_t value) noexcept {
    const uint64_t bit = index * bit_width;
    const auto byte = static_cast<size_t>(bit / 8);
    const auto shift = static_cast<uint32_t>(bit % 8);
    const uint32_t mask = ((1U << bit_width) - 1) << shift;
    const uint32_t v = (value << shift) & mask;
    bytes[byte] = static_cast<uint8_t>((bytes[byte] & ~mask) | v);
    if (shift + bit_width > 8) {
        bytes[byte + 1] = static_cast<uint8_t>((bytes[byte + 1] & ~(mask >> 8)) | (v >> 8));
    }
}

namespace {

// Whether element `index` of `type` lies inside `size` bytes.
bool fits(ElementType type, uint64_t index, size_t size) {
    const uint32_t bits = bit_width(type);
    if (bits == 0 || index >= (uint64_t{1} << 56)) {
        return false;
    }
    return (index + 1) * bits <= uint64_t{size} * 8;
}

}  // namespace

Result<double> element_as_double(ElementType type, std::span<const uint8_t> bytes, uint64_t index) {
    if (!fits(type, index, bytes.size())) {
        return out_of_range(type, index, bytes.size());
    }
    const uint32_t w = element_byte_width(type);
    // SAFETY: fits() proved that element `index` (w bytes, or its packed bits)
    // lies inside `bytes`.
    const uint8_t* p = bytes.data() + index * w;
    switch (type) {
        case ElementType::kFloat16: return static_cast<double>(float16_to_float(load_le<uint16_t>(p)));
        case ElementType::kBFloat16: return static_cast<double>(bfloat16_to_float(load_le<uint16_t>(p)));
        case ElementType::kFloat32:
        case ElementType::kComplex64: return static_cast<double>(std::bit_cast<float>(load_le<uint32_t>(p)));
        case ElementType::kFloat64:
        case ElementType::kComplex128: return std::bit_cast<double>(load_le<uint64_t>(p));
        case ElementType::kInt8: return static_cast<int8_t>(p[0]);
        case ElementType::kUInt8: return p[0];
        case ElementType::kInt16: return static_cast<int16_t>(load_le<uint16_t>(p));
        case ElementType::kUInt16: return load_le<uint16_t>(p);
        case ElementType::kInt32: return static_cast<int32_t>(load_le<uint32_t>(p));
        case ElementType::kUInt32: return load_le<uint32_t>(p);
        case ElementType::kInt64: return static_cast<double>(static_cast<int64_t>(load_le<uint64_t>(p)));
        case ElementType::kUInt64: return static_cast<double>(load_le<uint64_t>(p));
        case ElementType::kFloat8E4M3: return static_cast<double>(float8_e4m3_to_float(p[0]));
        case ElementType::kFloat8E5M2: return static_cast<double>(float8_e5m2_to_float(p[0]));
        case ElementType::kFloat8E8M0: return static_cast<double>(float8_e8m0_to_float(p[0]));
        case ElementType::kFloat128: return float128_to_double(std::span<const uint8_t, 16>(p, 16));
        default: break;
    }
    const uint32_t code = load_packed(bytes, index, bit_width(type));
    switch (type) {
        case ElementType::kBool:
        case ElementType::kUInt4:
        case ElementType::kUInt2: return code;
        case ElementType::kInt4: return static_cast<int>(code ^ 0x8U) - 8;
        case ElementType::kInt2: return static_cast<int>(code ^ 0x2U) - 2;
        case ElementType::kFloat4E2M1: return static_cast<double>(float4_e2m1_to_float(static_cast<uint8_t>(code)));
        case ElementType::kFloat6E2M3: return static_cast<double>(float6_e2m3_to_float(static_cast<uint8_t>(code)));
        case ElementType::kFloat6E3M2: return static_cast<double>(float6_e3m2_to_float(static_cast<uint8_t>(code)));
        default: break;
    }
    return out_of_range(type, index, bytes.size());
}

Status element_from_double(ElementType type, std::span<uint8_t> bytes, uint64_t index, double value) {
    if (!fits(type, index, bytes.size())) {
        return out_of_range(type, index, bytes.size());
    }
    const uint32_t w = element_byte_width(type);
    // SAFETY: fits() proved that element `index` lies inside `bytes`.
    uint8_t* p = bytes.data() + index * w;
    const auto f = static_cast<float>(value);
    switch (type) {
        case ElementType::kFloat16: store_le<uint16_t>(p, float_to_float16(f)); return Status::success();
        case ElementType::kBFloat16: store_le<uint16_t>(p, float_to_bfloat16(f)); return Status::success();
        case ElementType::kFloat32: store_le<uint32_t>(p, std::bit_cast<uint32_t>(f)); return Status::success();
        case ElementType::kComplex64:
            store_le<uint32_t>(p, std::bit_cast<uint32_t>(f));
            store_le<uint32_t>(p + 4, 0);
            return Status::success();
        case ElementType::kFloat64: store_le<uint64_t>(p, std::bit_cast<uint64_t>(value)); return Status::success();
        case ElementType::kComplex128:
            store_le<uint64_t>(p, std::bit_cast<uint64_t>(value));
            store_le<uint64_t>(p + 8, 0);
            return Status::success();
        case ElementType::kInt8: p[0] = static_cast<uint8_t>(saturate<int8_t>(value)); return Status::success();
        case ElementType::kUInt8: p[0] = saturate<uint8_t>(value); return Status::success();
        case ElementType::kInt16: store_le<uint16_t>(p, static_cast<uint16_t>(saturate<int16_t>(value))); return Status::success();
        case ElementType::kUInt16: store_le<uint16_t>(p, saturate<uint16_t>(value)); return Status::success();
        case ElementType::kInt32: store_le<uint32_t>(p, static_cast<uint32_t>(saturate<int32_t>(value))); return Status::success();
        case ElementType::kUInt32: store_le<uint32_t>(p, saturate<uint32_t>(value)); return Status::success();
        case ElementType::kInt64: store_le<uint64_t>(p, static_cast<uint64_t>(saturate<int64_t>(value))); return Status::success();
        case ElementType::kUInt64: store_le<uint64_t>(p, saturate<uint64_t>(value)); return Status::success();
        case ElementType::kFloat8E4M3: p[0] = float_to_float8_e4m3(f); return Status::success();
        case ElementType::kFloat8E5M2: p[0] = float_to_float8_e5m2(f); return Status::success();
        case ElementType::kFloat8E8M0: {
            if (!(value > 0) || !std::isfinite(value)) {
                return Error(ErrorCode::kInvalidArgument, "float8_e8m0: only positive finite values are scales");
            }
            // Nearest power of two in the log domain.
            p[0] = float8_e8m0_from_exponent(static_cast<int>(std::lround(std::log2(value))));
            return Status::success();
        }
        case ElementType::kFloat128: double_to_float128(value, std::span<uint8_t, 16>(p, 16)); return Status::success();
        default: break;
    }
    uint32_t code = 0;
    switch (type) {
        case ElementType::kBool: code = value != 0.0 ? 1 : 0; break;
        case ElementType::kUInt4: code = std::clamp<uint32_t>(saturate<uint8_t>(value), 0, 15); break;
        case ElementType::kUInt2: code = std::clamp<uint32_t>(saturate<uint8_t>(value), 0, 3); break;
        case ElementType::kInt4: code = static_cast<uint32_t>(std::clamp<int>(saturate<int8_t>(value), -8, 7)) & 0xFU; break;
        case ElementType::kInt2: code = static_cast<uint32_t>(std::clamp<int>(saturate<int8_t>(value), -2, 1)) & 0x3U; break;
        case ElementType::kFloat4E2M1: code = float_to_float4_e2m1(f); break;
        case ElementType::kFloat6E2M3: code = float_to_float6_e2m3(f); break;
        case ElementType::kFloat6E3M2: code = float_to_float6_e3m2(f); break;
        default: return out_of_range(type, index, bytes.size());
    }
    store_packed(bytes, index, bit_width(type), code);
    return Status::success();
}

Status convert_to_float32(ElementType type, std::span<const uint8_t> bytes, std::span<float> out) {
    const size_t n = out.size();
    if (n == 0) {
        return Status::success();
    }
    if (!fits(type, n - 1, bytes.size())) {
        return out_of_range(type, n - 1, bytes.size());
    }
    // SAFETY (all loops below): fits() proved that elements 0..n-1 lie inside `bytes`.
    switch (type) {
        case ElementType::kFloat32: std::memcpy(out.data(), bytes.data(), n * 4); return Status::success();
        case ElementType::kFloat16:
            for (size_t i = 0; i < n; ++i) {
                out[i] = float16_to_float(load_le<uint16_t>(bytes.data() + 2 * i));
            }
            return Status::success();
        case ElementType::kBFloat16:
            for (size_t i = 0; i < n; ++i) {
                out[i] = bfloat16_to_float(load_le<uint16_t>(bytes.data() + 2 * i));
            }
            return Status::success();
        default: break;
    }
    for (size_t i = 0; i < n; ++i) {
        HURRAY_ASSIGN_OR_RETURN(double v, element_as_double(type, bytes, i));
        out[i] = static_cast<float>(v);
    }
    return Status::success();
}

}  // namespace hurray
