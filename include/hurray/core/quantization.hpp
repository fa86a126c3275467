// SPDX-License-Identifier: Apache-2.0
/// @file
/// Quantization descriptors (docs/spec/quantization.md and
/// docs/spec/quantization/*.md): the payload of a descriptor's quantization
/// section.
#pragma once

#include "hurray/core/export.hpp"
#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "hurray/core/element_type.hpp"

namespace hurray {

/// Assigned quantization scheme tags.
enum class QuantScheme : uint8_t {
    kPerTensorAffine = 0x01,   ///< One scale and zero point, inline.
    kPerChannelAffine = 0x02,  ///< One scale (and zero point) per slice along an axis.
    kPerBlockAffine = 0x03,    ///< One scale (and zero point) per block along an axis.
    kNf4 = 0x04,               ///< NormalFloat4 with per-block absmax.
    kMxfp = 0x05,              ///< OCP microscaling with e8m0 block scales.
};

/// The only `scheme_version` defined for the assigned schemes.
inline constexpr uint8_t kQuantSchemeVersion = 0x01;

/// Size of the common quantization header (`scheme_tag u8 | scheme_version u8 | flags u16`).
inline constexpr uint32_t kQuantHeaderSize = 4;

/// Per-tensor affine (0x01): `x = scale * (q - zero_point)`. 16 bytes.
struct HURRAY_CORE_EXPORT PerTensorAffine {
    float scale = 1.0F;       ///< Finite, non-zero.
    int32_t zero_point = 0;   ///< In the storage type's range; 0 when symmetric.
    bool operator==(const PerTensorAffine& o) const;
};

/// Per-channel affine (0x02): one float32 scale and int32 zero point per
/// index along `axis`. 20 bytes.
struct HURRAY_CORE_EXPORT PerChannelAffine {
    uint32_t axis = 0;                                   ///< Quantized axis, < rank.
    uint32_t scale_buffer_index = 1;                     ///< Buffer of `shape[axis]` float32.
    std::optional<uint32_t> zero_point_buffer_index{};     ///< Buffer of int32; none when symmetric.
    ElementType scale_type = ElementType::kFloat32;      ///< Must be float32.
    bool operator==(const PerChannelAffine&) const = default;
};

/// Per-block affine (0x03): one scale (and zero point) per block of
/// `block_size` elements along `axis`. 24 bytes.
struct HURRAY_CORE_EXPORT PerBlockAffine {
    uint32_t axis = 0;                                   ///< Blocked axis, < rank.
    uint32_t block_size = 32;                            ///< Power of two, >= 2.
    uint32_t scale_buffer_index = 1;                     ///< Buffer of num_blocks scales.
    std::optional<uint32_t> zero_point_buffer_index{};     ///< Buffer of int32; none when symmetric.
    ElementType scale_type = ElementType::kFloat16;      ///< float16, bfloat16 or float32.
    bool operator==(const PerBlockAffine&) const = default;
};

/// NF4 (0x04): `x = absmax[b] * nf4[q]`, uint4 storage. 16 bytes.
struct HURRAY_CORE_EXPORT Nf4Quantization {
    uint32_t axis = 0;                ///< Blocked axis, < rank.
    uint32_t block_size = 64;         ///< Power of two, >= 8.
    uint32_t scale_buffer_index = 1;  ///< Buffer of num_blocks float32 absmax.
    bool operator==(const Nf4Quantization&) const = default;
};

/// MXFP (0x05): `x = 2^(e - 127) * value(q)`, e8m0 block scales. 16 bytes.
struct HURRAY_CORE_EXPORT MxfpQuantization {
    uint32_t axis = 0;                ///< Blocked axis, < rank.
    uint32_t block_size = 32;         ///< Power of two in [16, 2048].
    uint32_t scale_buffer_index = 1;  ///< Buffer of num_blocks e8m0 bytes.
    bool operator==(const MxfpQuantization&) const = default;
};

/// A scheme this library does not interpret (a private 0xF0-0xFE scheme, or
/// an unassigned one accepted in permissive mode), carried byte for byte.
struct HURRAY_CORE_EXPORT OpaqueQuantization {
    uint8_t scheme_tag = 0xF0;        ///< Raw scheme tag.
    uint8_t scheme_version = 1;       ///< Raw scheme version.
    uint16_t flags = 0;               ///< Raw flags.
    std::vector<uint8_t> payload{};     ///< Bytes after the 4-byte header.
    bool operator==(const OpaqueQuantization&) const = default;
};

/// Any quantization scheme.
using QuantizationScheme = std::variant<PerTensorAffine, PerChannelAffine, PerBlockAffine,
                                        Nf4Quantization, MxfpQuantization, OpaqueQuantization>;

/// The contents of a quantization section.
///
/// @code
/// hurray::QuantizationDescriptor q{hurray::PerBlockAffine{.axis = 1, .block_size = 128}};
/// @endcode
struct HURRAY_CORE_EXPORT QuantizationDescriptor {
    QuantizationScheme scheme{};              ///< The scheme and its parameters.
    std::vector<uint8_t> trailing_padding{};  ///< Writer padding after the scheme's fields.
    bool operator==(const QuantizationDescriptor&) const = default;
};

/// The scheme tag byte of a scheme.
HURRAY_CORE_EXPORT uint8_t scheme_tag(const QuantizationScheme& scheme) noexcept;

/// The spec's name of a scheme tag (`"per_block_affine"`, ...), `"private"` or empty.
HURRAY_CORE_EXPORT std::string_view scheme_name(uint8_t tag) noexcept;

/// The encoded size of a scheme's fields (header included), without padding.
HURRAY_CORE_EXPORT uint32_t scheme_encoded_size(const QuantizationScheme& scheme) noexcept;

/// The 16 NF4 levels, indexed by the 4-bit code (quantization/nf4.md).
HURRAY_CORE_EXPORT extern const float kNf4Levels[16];

}  // namespace hurray
