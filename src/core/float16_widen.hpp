// SPDX-License-Identifier: Apache-2.0
// Internal: branch-free, inlinable float16 and bfloat16 to float32 widening
// for vectorised loops. The one implementation: the public float16_to_float /
// bfloat16_to_float (element_convert.hpp) call these. Checked exhaustively
// against an independent reference (tests/core/dequantize_test.cpp).
#pragma once

#include <bit>
#include <cstdint>

namespace hurray::detail {

/// float16 bits to float32, exactly. The exponent and mantissa bits, moved
/// into float32 position, read as a float32 whose exponent is 112 too small:
/// multiplying by 2^112 re-biases normal and subnormal values alike (both
/// exact, the product being representable). Infinities and NaNs (exponent
/// 0x1F) get the float32 all-ones exponent, keeping the payload bits.
/// The selection is a mask, not a branch, so that loops over it vectorise.
inline float widen_float16(uint16_t h) noexcept {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000U) << 16;
    const uint32_t em = h & 0x7FFFU;
    const auto magnitude = std::bit_cast<uint32_t>(std::bit_cast<float>(em << 13) * 0x1p112F);
    const uint32_t special = (em << 13) | 0x7F800000U;
    const uint32_t is_special = 0U - static_cast<uint32_t>(em >= 0x7C00U);  // all ones or zero
    return std::bit_cast<float>((magnitude & ~is_special) | (special & is_special) | sign);
}

/// bfloat16 bits to float32, exactly: the upper half of a float32.
inline float widen_bfloat16(uint16_t h) noexcept { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

}  // namespace hurray::detail
