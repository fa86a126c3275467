// SPDX-License-Identifier: Apache-2.0
/// @file
/// Bit-exact conversions between every element type and float32/float64
/// (docs/spec/element-types.md), and access to packed sub-byte elements.
///
/// Decoding (narrow type to float) is exact for every type except float128,
/// which rounds to the nearest double. Encoding (float to narrow type) rounds
/// to nearest, ties to even. NaN payloads are kept where the target can hold
/// them (the top payload bits, with the quiet bit set); infinities and
/// subnormals are never flushed. Types without infinities saturate to their
/// largest finite value; types without NaN encode NaN as documented per
/// function.
#pragma once

#include "hurray/core/export.hpp"
#include <cstdint>
#include <span>

#include "hurray/core/element_type.hpp"
#include "hurray/core/result.hpp"

namespace hurray {

/// float16 (IEEE binary16) bits to float, exactly.
HURRAY_CORE_EXPORT float float16_to_float(uint16_t bits) noexcept;
/// float to float16 bits, round to nearest even; overflow gives infinity.
HURRAY_CORE_EXPORT uint16_t float_to_float16(float value) noexcept;

/// bfloat16 bits to float, exactly.
HURRAY_CORE_EXPORT float bfloat16_to_float(uint16_t bits) noexcept;
/// float to bfloat16 bits, round to nearest even; NaN stays NaN.
HURRAY_CORE_EXPORT uint16_t float_to_bfloat16(float value) noexcept;

/// float8_e4m3 (OCP OFP8, bias 7, no infinities; 0x7F/0xFF are NaN) to float.
HURRAY_CORE_EXPORT float float8_e4m3_to_float(uint8_t bits) noexcept;
/// float to float8_e4m3, round to nearest even; out of range and infinities
/// saturate to +-448; NaN gives 0x7F (0xFF when negative).
HURRAY_CORE_EXPORT uint8_t float_to_float8_e4m3(float value) noexcept;

/// float8_e5m2 (OCP OFP8, bias 15, with infinities) to float.
HURRAY_CORE_EXPORT float float8_e5m2_to_float(uint8_t bits) noexcept;
/// float to float8_e5m2, round to nearest even; overflow gives infinity.
HURRAY_CORE_EXPORT uint8_t float_to_float8_e5m2(float value) noexcept;

/// float8_e8m0 to float: `2^(bits - 127)`; the reserved 0x00 and 0xFF give NaN.
HURRAY_CORE_EXPORT float float8_e8m0_to_float(uint8_t bits) noexcept;
/// The e8m0 scale `2^exponent`, clamped to the valid range [2^-126, 2^127]
/// (bits 0x01..0xFE).
HURRAY_CORE_EXPORT uint8_t float8_e8m0_from_exponent(int exponent) noexcept;

/// float4_e2m1 (OCP MX FP4: 0, 0.5, 1, 1.5, 2, 3, 4, 6) code (low 4 bits) to float.
HURRAY_CORE_EXPORT float float4_e2m1_to_float(uint8_t code) noexcept;
/// float to a float4_e2m1 code, round to nearest even, saturating to +-6; NaN gives 0.
HURRAY_CORE_EXPORT uint8_t float_to_float4_e2m1(float value) noexcept;

/// float6_e2m3 (OCP MX FP6, bias 1, max 7.5) code (low 6 bits) to float.
HURRAY_CORE_EXPORT float float6_e2m3_to_float(uint8_t code) noexcept;
/// float to a float6_e2m3 code, round to nearest even, saturating; NaN gives 0.
HURRAY_CORE_EXPORT uint8_t float_to_float6_e2m3(float value) noexcept;

/// float6_e3m2 (OCP MX FP6, bias 3, max 28) code (low 6 bits) to float.
HURRAY_CORE_EXPORT float float6_e3m2_to_float(uint8_t code) noexcept;
/// float to a float6_e3m2 code, round to nearest even, saturating; NaN gives 0.
HURRAY_CORE_EXPORT uint8_t float_to_float6_e3m2(float value) noexcept;

/// float128 (IEEE binary128, little-endian 16 bytes) to the nearest double.
HURRAY_CORE_EXPORT double float128_to_double(std::span<const uint8_t, 16> bytes) noexcept;
/// double to float128, exactly (NaN payload kept in the top bits).
HURRAY_CORE_EXPORT void double_to_float128(double value, std::span<uint8_t, 16> out) noexcept;

/// Number of bytes per element of a whole-byte type, 0 for sub-byte types.
HURRAY_CORE_EXPORT uint32_t element_byte_width(ElementType type) noexcept;

/// Reads the raw bits of element `index` of a contiguous run of `bit_width`
/// bit elements (1, 2, 4 or 6) packed LSB first (element-types.md § packing).
/// Precondition: the element lies inside `bytes` (checked by callers).
HURRAY_CORE_EXPORT uint32_t load_packed(std::span<const uint8_t> bytes, uint64_t index, uint32_t bit_width) noexcept;

/// Writes the raw bits (low `bit_width` bits of `value`) of element `index`.
HURRAY_CORE_EXPORT void store_packed(std::span<uint8_t> bytes, uint64_t index, uint32_t bit_width, uint32_t value) noexcept;

/// Reads one element as a double: the value of a real type, the real part of
/// a complex type, 0/1 for bool, the integer value of integer types (exact up
/// to 2^53). `bytes` must hold the element's storage starting at byte 0
/// (whole-byte types) or the packed run (sub-byte types) and `index` is the
/// element's position in that run.
///
/// @code
/// double v = *hurray::element_as_double(hurray::ElementType::kFloat16, buf, 3);
/// @endcode
HURRAY_CORE_EXPORT Result<double> element_as_double(ElementType type, std::span<const uint8_t> bytes, uint64_t index);

/// Writes `value` as element `index` of `type` (rounding to nearest even,
/// saturating integers to their range, NaN to 0 for integer types).
HURRAY_CORE_EXPORT Status element_from_double(ElementType type, std::span<uint8_t> bytes, uint64_t index, double value);

/// Converts `count` contiguous elements of `type` (starting at element 0 of
/// `bytes`) to float32. Vectorisable fast paths for float16, bfloat16 and
/// float32; every other built-in type too. Complex types yield the real part.
HURRAY_CORE_EXPORT Status convert_to_float32(ElementType type, std::span<const uint8_t> bytes, std::span<float> out);

}  // namespace hurray
