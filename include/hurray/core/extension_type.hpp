// SPDX-License-Identifier: Apache-2.0
/// @file
/// Extension type section (docs/spec/metadata.md § Extension Type Section,
/// ADR-001): how to size elements of a private type tag 0xF0-0xFE.
#pragma once

#include "hurray/core/export.hpp"
#include <cstdint>

namespace hurray {

/// Size of the extension type section.
inline constexpr uint32_t kExtensionTypeSize = 20;

/// Describes a private element type well enough to size its buffers.
///
/// @code
/// hurray::ExtensionTypeDescriptor e{.bit_width = 16, .packing_factor = 1};
/// @endcode
struct HURRAY_CORE_EXPORT ExtensionTypeDescriptor {
    uint32_t bit_width = 8;       ///< Bits per element: 1, 2, 4 or a multiple of 8.
    uint8_t packing_factor = 1;   ///< Elements per byte: 8 / bit_width below 8 bits, else 1.
    bool is_float = false;        ///< Floating point.
    bool is_signed = false;       ///< Signed integer (false for floats).
    uint8_t sign_bits = 0;        ///< Floats: 0 or 1.
    uint8_t exponent_bits = 0;    ///< Floats only.
    uint8_t mantissa_bits = 0;    ///< Floats only.
    uint32_t exponent_bias = 0;   ///< Floats only.
    bool has_nan = false;         ///< Floats: NaN representable.
    bool has_inf = false;         ///< Floats: infinity representable.
    bool operator==(const ExtensionTypeDescriptor&) const = default;
};

}  // namespace hurray
