// SPDX-License-Identifier: Apache-2.0
#include "hurray/core/quantization.hpp"

#include <bit>

namespace hurray {

// NF4 levels as float32 values, verbatim from quantization/nf4.md § Lookup Table.
const float kNf4Levels[16] = {
    -1.0F,
    -0.6961928009986877F,
    -0.5250730514526367F,
    -0.39491748809814453F,
    -0.28444138169288635F,
    -0.18477343022823334F,
    -0.09105003625154495F,
    0.0F,
    0.07958029955625534F,
    0.16093020141124725F,
    0.24611230194568634F,
    0.33791524171829224F,
    0.44070982933044434F,
    0.5626170039176941F,
    0.7229568362236023F,
    1.0F,
};

bool PerTensorAffine::operator==(const PerTensorAffine& o) const {
    // Bitwise, so that NaN payloads and signed zeros compare as stored.
    return std::bit_cast<uint32_t>(scale) == std::bit_cast<uint32_t>(o.scale) &&
           zero_point == o.zero_point;
}

uint8_t scheme_tag(const QuantizationScheme& scheme) noexcept {
    if (const auto* o = std::get_if<OpaqueQuantization>(&scheme)) {
        return o->scheme_tag;
    }
    return static_cast<uint8_t>(scheme.index() + 1);  // alternatives 0..4 are tags 0x01..0x05
}

std::string_view scheme_name(uint8_t tag) noexcept {
    switch (tag) {
        case 0x01: return "per_tensor_affine";
        case 0x02: return "per_channel_affine";
        case 0x03: return "per_block_affine";
        case 0x04: return "nf4";
        case 0x05: return "mxfp";
        default: break;
    }
    return (tag >= 0xF0 && tag <= 0xFE) ? "private" : "";
}

uint32_t scheme_encoded_size(const QuantizationScheme& scheme) noexcept {
    // Per-tensor, per-channel, per-block, NF4, MXFP (quantization/*.md § Binary Encoding).
    static constexpr uint32_t kSizes[] = {16, 20, 24, 16, 16};
    if (const auto* o = std::get_if<OpaqueQuantization>(&scheme)) {
        return kQuantHeaderSize + static_cast<uint32_t>(o->payload.size());
    }
    return kSizes[scheme.index()];
}

}  // namespace hurray
