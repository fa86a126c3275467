// SPDX-License-Identifier: Apache-2.0
// Bulk conversions between float32 and the narrow float value types. The 16-bit
// paths are branch-free (selects, not branches) so that GCC and Clang vectorise
// them; the float8 paths widen through a 256-entry table and narrow through the
// scalar encoders of element_convert.cpp.
#include "hurray/core/float_types.hpp"

#include <array>
#include <bit>
#include <cstring>
#include <string>

#include "core/float16_widen.hpp"
#include "hurray/core/text.hpp"

namespace hurray {
namespace {

Status length_mismatch(size_t in, size_t out) {
    return Error(ErrorCode::kSizeMismatch, "convert: the input holds " + dec(in) +
                                               " values and the output has room for " + dec(out));
}

/// float32 bits to float16 bits, round to nearest even, without branches.
/// Normal results: re-bias the exponent and round the 13 dropped mantissa bits
/// with the classic "add half minus one plus the lowest kept bit" trick (a
/// carry into the exponent is the correct result, up to infinity at 65520).
/// Subnormal results: adding 0.5F puts the float16 subnormal bits at the
/// bottom of a float32 mantissa, and the FPU's own rounding (to nearest even)
/// does the rest. Infinity and NaN keep float_to_float16's encoding.
inline uint16_t narrow_float16(float value) noexcept {
    const auto x = std::bit_cast<uint32_t>(value);
    const uint32_t sign = (x >> 16) & 0x8000U;
    // The magnitude as a signed integer (it is < 2^31): signed compares map to
    // single SSE2/NEON instructions, unsigned ones do not.
    const auto a = static_cast<int32_t>(x & 0x7FFFFFFFU);
    const auto ua = static_cast<uint32_t>(a);
    // Normal range (a >= 2^-14): exponent - 112, then round.
    const uint32_t normal = (ua - (112U << 23) + 0xFFFU + ((ua >> 13) & 1U)) >> 13;
    // Subnormal range (a < 2^-14).
    const auto sub = std::bit_cast<uint32_t>(std::bit_cast<float>(ua) + 0.5F) - 0x3F000000U;
    // Overflow (a >= 65536 rounds to infinity) and NaN (payload top bits, quiet).
    const uint32_t nan = 0x7C00U | 0x200U | ((ua & 0x7FFFFFU) >> 13);
    uint32_t h = a < 0x38800000 ? sub : normal;
    h = a >= 0x47800000 ? 0x7C00U : h;
    h = a > 0x7F800000 ? nan : h;
    return static_cast<uint16_t>(sign | h);
}

/// float32 to bfloat16 bits, round to nearest even, NaN kept quiet; branch-free.
inline uint16_t narrow_bfloat16(float value) noexcept {
    const auto x = std::bit_cast<uint32_t>(value);
    const uint32_t rounded = (x + 0x7FFFU + ((x >> 16) & 1U)) >> 16;
    const uint32_t nan = (x >> 16) | 0x40U;
    return static_cast<uint16_t>(static_cast<int32_t>(x & 0x7FFFFFFFU) > 0x7F800000 ? nan : rounded);
}

using Table = std::array<float, 256>;

template <float (*Decode)(uint8_t) noexcept>
const Table& widen_table() {
    static const Table table = [] {
        Table t{};
        for (size_t i = 0; i < t.size(); ++i) {
            t[i] = Decode(static_cast<uint8_t>(i));
        }
        return t;
    }();
    return table;
}

template <typename From, typename To, typename Fn>
Status map_span(std::span<const From> in, std::span<To> out, Fn fn) {
    if (in.size() != out.size()) {
        return length_mismatch(in.size(), out.size());
    }
    const From* src = in.data();
    To* dst = out.data();
    const size_t n = in.size();
    for (size_t i = 0; i < n; ++i) {
        dst[i] = fn(src[i]);
    }
    return Status::success();
}

/// `in` converted to a new vector of `To` (same length: the status is always success).
template <typename To>
std::vector<To> narrow_vector(std::span<const float> in) {
    std::vector<To> out(in.size());
    static_cast<void>(convert_floats(in, std::span<To>(out)));
    return out;
}

template <typename From>
std::vector<float> widen_vector(std::span<const From> in) {
    std::vector<float> out(in.size());
    static_cast<void>(convert_floats(in, std::span<float>(out)));
    return out;
}

}  // namespace

Status convert_floats(std::span<const float> in, std::span<float16_t> out) {
    return map_span(in, out, [](float v) { return float16_t::from_bits(narrow_float16(v)); });
}

Status convert_floats(std::span<const float> in, std::span<bfloat16_t> out) {
    return map_span(in, out, [](float v) { return bfloat16_t::from_bits(narrow_bfloat16(v)); });
}

Status convert_floats(std::span<const float> in, std::span<float8_e4m3_t> out) {
    return map_span(in, out, [](float v) { return float8_e4m3_t::from_bits(float_to_float8_e4m3(v)); });
}

Status convert_floats(std::span<const float> in, std::span<float8_e5m2_t> out) {
    return map_span(in, out, [](float v) { return float8_e5m2_t::from_bits(float_to_float8_e5m2(v)); });
}

Status convert_floats(std::span<const float16_t> in, std::span<float> out) {
    return map_span(in, out, [](float16_t h) { return detail::widen_float16(h.bits); });
}

Status convert_floats(std::span<const bfloat16_t> in, std::span<float> out) {
    return map_span(in, out, [](bfloat16_t h) { return detail::widen_bfloat16(h.bits); });
}

Status convert_floats(std::span<const float8_e4m3_t> in, std::span<float> out) {
    const Table& t = widen_table<float8_e4m3_to_float>();
    return map_span(in, out, [&t](float8_e4m3_t q) { return t[q.bits]; });
}

Status convert_floats(std::span<const float8_e5m2_t> in, std::span<float> out) {
    const Table& t = widen_table<float8_e5m2_to_float>();
    return map_span(in, out, [&t](float8_e5m2_t q) { return t[q.bits]; });
}

std::vector<float16_t> to_float16(std::span<const float> in) { return narrow_vector<float16_t>(in); }
std::vector<bfloat16_t> to_bfloat16(std::span<const float> in) { return narrow_vector<bfloat16_t>(in); }
std::vector<float8_e4m3_t> to_float8_e4m3(std::span<const float> in) { return narrow_vector<float8_e4m3_t>(in); }
std::vector<float8_e5m2_t> to_float8_e5m2(std::span<const float> in) { return narrow_vector<float8_e5m2_t>(in); }
std::vector<float> to_float32(std::span<const float16_t> in) { return widen_vector(in); }
std::vector<float> to_float32(std::span<const bfloat16_t> in) { return widen_vector(in); }
std::vector<float> to_float32(std::span<const float8_e4m3_t> in) { return widen_vector(in); }
std::vector<float> to_float32(std::span<const float8_e5m2_t> in) { return widen_vector(in); }

}  // namespace hurray
