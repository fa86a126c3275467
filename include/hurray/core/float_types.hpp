// SPDX-License-Identifier: Apache-2.0
/// @file
/// Value types for the narrow floating-point element types (`float16_t`,
/// `bfloat16_t`, `float8_e4m3_t`, `float8_e5m2_t`) and bulk conversions of
/// whole spans between them and float32.
///
/// Each value type is exactly its storage bits (trivially copyable, standard
/// layout, no padding), so a `std::span<const hurray::float16_t>` views the
/// bytes of a float16 tensor directly. Conversions are those of
/// element_convert.hpp: exact when widening, round to nearest even when
/// narrowing, NaN payloads kept where the target holds them.
///
/// @code
/// std::vector<float> w = {0.5F, -1.25F, 3.0F};
/// std::vector<hurray::float16_t> h = hurray::to_float16(w);      // narrow, RNE
/// std::vector<float> back = hurray::to_float32(std::span<const hurray::float16_t>(h));
/// float x = static_cast<float>(h[1]);                               // -1.25
/// @endcode
#pragma once

#include "hurray/core/export.hpp"
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "hurray/core/element_convert.hpp"
#include "hurray/core/result.hpp"

namespace hurray {

namespace detail {

/// What the narrow float value types share: exactly their `bits`, built from
/// raw bits, widened to float exactly, compared bitwise (so +0 != -0 and a NaN
/// equals the same NaN). `Derived` adds the rounding constructor from float.
template <typename Derived, typename Bits, float (*Widen)(Bits) noexcept>
struct NarrowFloat {
    Bits bits = 0;  ///< The raw bits.

    /// The value with these raw bits.
    static constexpr Derived from_bits(Bits b) noexcept {
        Derived v;
        v.bits = b;
        return v;
    }
    /// The value as a float (exact).
    explicit operator float() const noexcept { return Widen(bits); }
    /// Bitwise equality.
    friend constexpr bool operator==(Derived a, Derived b) noexcept { return a.bits == b.bits; }
};

}  // namespace detail

/// An IEEE 754 binary16 value (`float16`), stored as its 16 bits.
///
/// @code
/// hurray::float16_t h(1.5F);        // rounds to nearest even
/// float f = static_cast<float>(h);  // 1.5, exact
/// uint16_t b = h.bits;              // 0x3E00
/// @endcode
struct float16_t : detail::NarrowFloat<float16_t, uint16_t, float16_to_float> {
    /// Zero.
    constexpr float16_t() noexcept = default;
    /// `value` rounded to the nearest float16 (ties to even; overflow gives infinity).
    explicit float16_t(float value) noexcept { bits = float_to_float16(value); }
};

/// A bfloat16 value (1 sign, 8 exponent, 7 mantissa bits), stored as its 16 bits.
///
/// @code
/// hurray::bfloat16_t b(3.14159F);
/// float f = static_cast<float>(b);  // 3.140625
/// @endcode
struct bfloat16_t : detail::NarrowFloat<bfloat16_t, uint16_t, bfloat16_to_float> {
    /// Zero.
    constexpr bfloat16_t() noexcept = default;
    /// `value` rounded to the nearest bfloat16 (ties to even; NaN stays NaN).
    explicit bfloat16_t(float value) noexcept { bits = float_to_bfloat16(value); }
};

/// An OCP OFP8 E4M3 value (no infinities, max 448), stored as its 8 bits.
///
/// @code
/// hurray::float8_e4m3_t q(1000.0F);  // saturates to 448
/// @endcode
struct float8_e4m3_t : detail::NarrowFloat<float8_e4m3_t, uint8_t, float8_e4m3_to_float> {
    /// Zero.
    constexpr float8_e4m3_t() noexcept = default;
    /// `value` rounded to nearest even, saturating to +-448; NaN gives NaN.
    explicit float8_e4m3_t(float value) noexcept { bits = float_to_float8_e4m3(value); }
};

/// An OCP OFP8 E5M2 value (with infinities), stored as its 8 bits.
///
/// @code
/// hurray::float8_e5m2_t q(0.1F);
/// float f = static_cast<float>(q);  // 0.09375
/// @endcode
struct float8_e5m2_t : detail::NarrowFloat<float8_e5m2_t, uint8_t, float8_e5m2_to_float> {
    /// Zero.
    constexpr float8_e5m2_t() noexcept = default;
    /// `value` rounded to nearest even; overflow gives infinity.
    explicit float8_e5m2_t(float value) noexcept { bits = float_to_float8_e5m2(value); }
};

static_assert(sizeof(float16_t) == 2 && sizeof(bfloat16_t) == 2, "16-bit float types must be their bits");
static_assert(sizeof(float8_e4m3_t) == 1 && sizeof(float8_e5m2_t) == 1, "8-bit float types must be their bits");
static_assert(std::is_trivially_copyable_v<float16_t> && std::is_standard_layout_v<float16_t>,
              "a span of values must view the stored bytes");

/// Narrows `in` to float16 into `out` (same length, else `kSizeMismatch`).
/// Branch-free and vectorised; bit-identical to `float_to_float16` per element.
///
/// @code
/// std::vector<hurray::float16_t> h(w.size());
/// if (auto st = hurray::convert_floats(std::span<const float>(w), std::span<hurray::float16_t>(h)); !st) { ... }
/// @endcode
[[nodiscard]] HURRAY_CORE_EXPORT Status convert_floats(std::span<const float> in, std::span<float16_t> out);
/// Narrows `in` to bfloat16 into `out` (same length); bit-identical to `float_to_bfloat16`.
[[nodiscard]] HURRAY_CORE_EXPORT Status convert_floats(std::span<const float> in, std::span<bfloat16_t> out);
/// Narrows `in` to float8 E4M3 into `out` (same length); as `float_to_float8_e4m3`.
[[nodiscard]] HURRAY_CORE_EXPORT Status convert_floats(std::span<const float> in, std::span<float8_e4m3_t> out);
/// Narrows `in` to float8 E5M2 into `out` (same length); as `float_to_float8_e5m2`.
[[nodiscard]] HURRAY_CORE_EXPORT Status convert_floats(std::span<const float> in, std::span<float8_e5m2_t> out);
/// Widens float16 `in` to float32 `out` (same length), exactly; vectorised.
[[nodiscard]] HURRAY_CORE_EXPORT Status convert_floats(std::span<const float16_t> in, std::span<float> out);
/// Widens bfloat16 `in` to float32 `out` (same length), exactly; vectorised.
[[nodiscard]] HURRAY_CORE_EXPORT Status convert_floats(std::span<const bfloat16_t> in, std::span<float> out);
/// Widens float8 E4M3 `in` to float32 `out` (same length), exactly (table lookup).
[[nodiscard]] HURRAY_CORE_EXPORT Status convert_floats(std::span<const float8_e4m3_t> in, std::span<float> out);
/// Widens float8 E5M2 `in` to float32 `out` (same length), exactly (table lookup).
[[nodiscard]] HURRAY_CORE_EXPORT Status convert_floats(std::span<const float8_e5m2_t> in, std::span<float> out);

/// `in` narrowed to float16 (round to nearest even).
///
/// @code
/// std::vector<hurray::float16_t> h = hurray::to_float16(std::vector<float>{1, 2, 3});
/// @endcode
[[nodiscard]] HURRAY_CORE_EXPORT std::vector<float16_t> to_float16(std::span<const float> in);
/// `in` narrowed to bfloat16 (round to nearest even).
[[nodiscard]] HURRAY_CORE_EXPORT std::vector<bfloat16_t> to_bfloat16(std::span<const float> in);
/// `in` narrowed to float8 E4M3 (round to nearest even, saturating).
[[nodiscard]] HURRAY_CORE_EXPORT std::vector<float8_e4m3_t> to_float8_e4m3(std::span<const float> in);
/// `in` narrowed to float8 E5M2 (round to nearest even).
[[nodiscard]] HURRAY_CORE_EXPORT std::vector<float8_e5m2_t> to_float8_e5m2(std::span<const float> in);
/// float16 values widened to float32, exactly.
[[nodiscard]] HURRAY_CORE_EXPORT std::vector<float> to_float32(std::span<const float16_t> in);
/// bfloat16 values widened to float32, exactly.
[[nodiscard]] HURRAY_CORE_EXPORT std::vector<float> to_float32(std::span<const bfloat16_t> in);
/// float8 E4M3 values widened to float32, exactly.
[[nodiscard]] HURRAY_CORE_EXPORT std::vector<float> to_float32(std::span<const float8_e4m3_t> in);
/// float8 E5M2 values widened to float32, exactly.
[[nodiscard]] HURRAY_CORE_EXPORT std::vector<float> to_float32(std::span<const float8_e5m2_t> in);

}  // namespace hurray
