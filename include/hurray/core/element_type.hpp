// SPDX-License-Identifier: Apache-2.0
/// @file
/// Element types (docs/spec/element-types.md): tags, bit widths, packing and
/// buffer sizes.
#pragma once

#include "hurray/core/export.hpp"
#include <cstdint>
#include <optional>
#include <string_view>

#include "hurray/core/result.hpp"

namespace hurray {

/// An element type tag. The enumerators are the assigned Tier 1 and Tier 2
/// tags; a value outside them (a private tag 0xF0-0xFE, or an unassigned tag
/// accepted in permissive mode) is carried as its raw byte.
enum class ElementType : uint8_t {
    kFloat16 = 0x01,      ///< IEEE 754 binary16.
    kBFloat16 = 0x02,     ///< bfloat16 (1-8-7).
    kFloat32 = 0x03,      ///< IEEE 754 binary32.
    kFloat64 = 0x04,      ///< IEEE 754 binary64.
    kInt8 = 0x10,         ///< Signed 8-bit integer.
    kUInt8 = 0x11,        ///< Unsigned 8-bit integer.
    kInt16 = 0x12,        ///< Signed 16-bit integer.
    kUInt16 = 0x13,       ///< Unsigned 16-bit integer.
    kInt32 = 0x14,        ///< Signed 32-bit integer.
    kUInt32 = 0x15,       ///< Unsigned 32-bit integer.
    kInt64 = 0x16,        ///< Signed 64-bit integer.
    kUInt64 = 0x17,       ///< Unsigned 64-bit integer.
    kBool = 0x20,         ///< Boolean, 8 per byte, LSB first.
    kFloat8E4M3 = 0x40,   ///< OCP OFP8 E4M3 (no infinities).
    kFloat8E5M2 = 0x41,   ///< OCP OFP8 E5M2.
    kFloat8E8M0 = 0x42,   ///< Exponent-only power-of-two scale (0x00/0xFF invalid).
    kFloat4E2M1 = 0x43,   ///< OCP MX FP4, 2 per byte.
    kFloat6E2M3 = 0x44,   ///< OCP MX FP6 E2M3, 4 per 3 bytes.
    kFloat6E3M2 = 0x45,   ///< OCP MX FP6 E3M2, 4 per 3 bytes.
    kFloat128 = 0x46,     ///< IEEE 754 binary128.
    kInt4 = 0x48,         ///< Signed 4-bit integer, 2 per byte.
    kUInt4 = 0x49,        ///< Unsigned 4-bit integer, 2 per byte.
    kInt2 = 0x4A,         ///< Signed 2-bit integer, 4 per byte.
    kUInt2 = 0x4B,        ///< Unsigned 2-bit integer, 4 per byte.
    kComplex64 = 0x50,    ///< Two float32 (real, imaginary).
    kComplex128 = 0x51,   ///< Two float64 (real, imaginary).
};

/// How a type tag byte is allocated by the specification.
enum class TypeTagClass : uint8_t {
    kInvalid,   ///< 0x00 or 0xFF: always rejected.
    kTier1,     ///< An assigned Tier 1 tag.
    kTier2,     ///< An assigned Tier 2 tag.
    kReserved,  ///< Unassigned, 0x47, or 0x80-0xEF: rejected unless permissive.
    kPrivate,   ///< 0xF0-0xFE: needs an extension type section.
};

/// Classifies a raw type tag byte.
///
/// @code
/// assert(hurray::classify_type_tag(0x03) == hurray::TypeTagClass::kTier1);
/// assert(hurray::classify_type_tag(0x47) == hurray::TypeTagClass::kReserved);
/// @endcode
HURRAY_CORE_EXPORT TypeTagClass classify_type_tag(uint8_t tag) noexcept;

/// The raw tag byte of a type.
constexpr uint8_t type_tag(ElementType t) noexcept { return static_cast<uint8_t>(t); }

/// Whether `t` is one of the assigned Tier 1 or Tier 2 types.
HURRAY_CORE_EXPORT bool is_builtin(ElementType t) noexcept;

/// Bits per element of a built-in type; 0 for a non-built-in tag.
HURRAY_CORE_EXPORT uint32_t bit_width(ElementType t) noexcept;

/// Whether elements of a built-in type are narrower than a byte (1, 2, 4 or 6 bits).
HURRAY_CORE_EXPORT bool is_sub_byte(ElementType t) noexcept;

/// Whether the built-in type is a floating-point type (complex types included).
HURRAY_CORE_EXPORT bool is_floating_point(ElementType t) noexcept;

/// Whether the built-in type is a signed integer type.
HURRAY_CORE_EXPORT bool is_signed_integer(ElementType t) noexcept;

/// Whether the built-in type is an unsigned integer type (bool excluded).
HURRAY_CORE_EXPORT bool is_unsigned_integer(ElementType t) noexcept;

/// The spec's name of a built-in type (`"float32"`, `"int4"`, ...); empty for others.
HURRAY_CORE_EXPORT std::string_view type_name(ElementType t) noexcept;

/// Looks a built-in type up by its spec name.
HURRAY_CORE_EXPORT std::optional<ElementType> type_from_name(std::string_view name) noexcept;

/// Bytes needed to store `count` contiguous elements of `bit_width` bits.
///
/// Whole-byte widths (a multiple of 8): `count * bit_width / 8`. Widths 1, 2
/// and 4: `ceil(count * bit_width / 8)`. Width 6: `ceil(count / 4) * 3`.
/// Fails with `kSizeOverflow` when the result does not fit in 64 bits, and
/// with `kInvalidArgument` for any other width.
///
/// @code
/// auto n = hurray::storage_bytes_for_bits(4, 5);  // 3 bytes
/// @endcode
HURRAY_CORE_EXPORT Result<uint64_t> storage_bytes_for_bits(uint32_t bit_width, uint64_t count);

/// Bytes needed to store `count` contiguous elements of the built-in type `t`.
///
/// @code
/// auto n = hurray::storage_bytes(hurray::ElementType::kFloat6E2M3, 5);  // 6 bytes
/// @endcode
HURRAY_CORE_EXPORT Result<uint64_t> storage_bytes(ElementType t, uint64_t count);

}  // namespace hurray
