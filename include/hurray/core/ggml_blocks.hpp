// SPDX-License-Identifier: Apache-2.0
/// @file
/// GGML blocks: libhurray's private quantization scheme for tensors kept as the blocks
/// of a GGML tensor type (the types GGUF stores: q4_K, q6_K, iq2_xs, ...).
///
/// A tensor of this scheme has quantization scheme tag `kGgmlBlocksScheme` (0xF0,
/// private), scheme version 1 and a 16-byte payload, little-endian: `"GGML"`, u32 ggml
/// type, u32 values per block, u32 bytes per block. Its element type is the private
/// tag 0xF0 (an extension type of bit width 1, which only sizes buffer 0 from below),
/// its layout row-major, and buffer 0 holds the blocks exactly as GGUF stores them:
/// `element_count(shape) / values_per_block` blocks, the last axis (GGML's `ne[0]`) a
/// whole number of blocks.
///
/// Readers of this library understand the scheme by default
/// (`DecodeOptions::libhurray_schemes`): they validate its payload and buffer size,
/// and `dequantize` computes its values by ggml's reference formulas. Another Hurray
/// implementation sees a private scheme it does not know and, reading strictly,
/// refuses the tensor naming the tag. docs/private-schemes.md says more.
#pragma once

#include "hurray/core/export.hpp"
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"

namespace hurray {

/// The private quantization scheme tag (and private element type tag) of GGML blocks.
inline constexpr uint8_t kGgmlBlocksScheme = 0xF0;
/// The one version of the GGML blocks scheme this library reads and writes.
inline constexpr uint8_t kGgmlBlocksVersion = 1;

/// The GGML tensor types (ggml.h's `ggml_type` numbering, which GGUF stores).
enum class GgmlType : uint32_t {
    kF32 = 0,       ///< float32
    kF16 = 1,       ///< float16
    kQ4_0 = 2,      ///< 4-bit, one float16 scale per 32 values
    kQ4_1 = 3,      ///< 4-bit, float16 scale and minimum per 32 values
    kQ5_0 = 6,      ///< 5-bit, one float16 scale per 32 values
    kQ5_1 = 7,      ///< 5-bit, float16 scale and minimum per 32 values
    kQ8_0 = 8,      ///< 8-bit, one float16 scale per 32 values
    kQ8_1 = 9,      ///< 8-bit with a float16 sum per 32 values
    kQ2_K = 10,     ///< K-quant, 2-bit, super-blocks of 256
    kQ3_K = 11,     ///< K-quant, 3-bit
    kQ4_K = 12,     ///< K-quant, 4-bit
    kQ5_K = 13,     ///< K-quant, 5-bit
    kQ6_K = 14,     ///< K-quant, 6-bit
    kQ8_K = 15,     ///< K-quant, 8-bit, float32 scale per 256 values
    kIQ2_XXS = 16,  ///< i-quant
    kIQ2_XS = 17,   ///< i-quant
    kIQ3_XXS = 18,  ///< i-quant
    kIQ1_S = 19,    ///< i-quant
    kIQ4_NL = 20,   ///< i-quant
    kIQ3_S = 21,    ///< i-quant
    kIQ2_S = 22,    ///< i-quant
    kIQ4_XS = 23,   ///< i-quant
    kI8 = 24,       ///< int8
    kI16 = 25,      ///< int16
    kI32 = 26,      ///< int32
    kI64 = 27,      ///< int64
    kF64 = 28,      ///< float64
    kIQ1_M = 29,    ///< i-quant
    kBF16 = 30,     ///< bfloat16
    kTQ1_0 = 34,    ///< ternary
    kTQ2_0 = 35,    ///< ternary
    kMXFP4 = 39,    ///< OCP MX FP4 blocks of 32
};

/// Block geometry of a GGML type: `elements` logical values stored in `bytes` bytes
/// (1 and the element size for the plain types).
struct HURRAY_CORE_EXPORT GgmlTypeInfo {
    std::string_view name;  ///< ggml's name ("q4_K", "f16", ...).
    uint32_t elements = 0;  ///< Values per block.
    uint32_t bytes = 0;     ///< Bytes per block.
};

/// The geometry of GGML type `type` (a raw `ggml_type` number), nullopt for a number that
/// is not a type this library knows (removed types 4, 5, 31-33, 36-38 included).
HURRAY_CORE_EXPORT std::optional<GgmlTypeInfo> ggml_type_info(uint32_t type) noexcept;

/// The 16-byte GGML blocks payload of `type` (`"GGML"`, type, values and bytes per
/// block), empty for a type ggml_type_info() does not know.
HURRAY_CORE_EXPORT std::vector<uint8_t> ggml_blocks_payload(uint32_t type);

/// The descriptor of a tensor of `shape` (Hurray order: the last axis is GGML's `ne[0]`)
/// holding GGML blocks of `type`: row-major, element type 0xF0, the scheme's payload,
/// one buffer of exactly the blocks' bytes. Fails with kInvalidArgument for an unknown
/// type or a last axis that is not whole blocks, kSizeOverflow when the size overflows.
/// @code
/// auto d = hurray::make_ggml_blocks(12, {4096, 4096});  // q4_K
/// @endcode
HURRAY_CORE_EXPORT Result<TensorDescriptor> make_ggml_blocks(uint32_t type, const Shape& shape);

/// The GGML type of a descriptor that holds GGML blocks (scheme kGgmlBlocksScheme,
/// version 1, no flags, a well-formed payload of a known type), nullopt for any other
/// descriptor.
/// With dequantize_ggml(), what a generic dequantizer calls for these tensors.
HURRAY_CORE_EXPORT std::optional<uint32_t> ggml_blocks_type(const TensorDescriptor& d) noexcept;

/// Dequantizes the whole blocks `bytes` of GGML type `type` into `out` (exactly
/// `bytes.size() / bytes_per_block * values_per_block` floats), by ggml's reference
/// formulas (the same float32 operations in the same order, so the same bits).
/// Supported: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K,
/// Q6_K, Q8_K; kUnsupported naming the type for the others, kInvalidArgument when the
/// sizes do not match.
/// @code
/// std::vector<float> w(4096);
/// auto st = hurray::dequantize_ggml(12, blocks, w);  // q4_K: 16 blocks of 144 bytes
/// @endcode
HURRAY_CORE_EXPORT Status dequantize_ggml(uint32_t type, std::span<const uint8_t> bytes,
                                          std::span<float> out);

/// dequantize_ggml() into a new vector of `count` floats (`bytes` must be exactly the
/// blocks of `count` values). Fails with kOutOfMemory when they cannot be allocated.
/// @code
/// auto values = hurray::dequantize_ggml(12, blocks, 4096);  // q4_K
/// @endcode
HURRAY_CORE_EXPORT Result<std::vector<float>> dequantize_ggml(uint32_t type,
                                                              std::span<const uint8_t> bytes,
                                                              uint64_t count);

}  // namespace hurray
