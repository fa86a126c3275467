// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file
/// GGUF (llama.cpp's format, versions 2 and 3) in and out of hurray::convert:
/// `open_gguf` reads a file as a TensorSource, `write_gguf` writes any TensorSource as
/// GGUF v3, `dequantize_ggml` turns GGML blocks into float32. The mapping (types, the KV
/// convention, the private scheme of GGML blocks) is in docs/convert.md § GGUF.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "hurray/convert/convert.hpp"
#include "hurray/convert/export.hpp"
#include "hurray/convert/tensor_source.hpp"
#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"

namespace hurray::formats {

/// The KV key under which open_gguf() records the GGUF type of every other key, and from
/// which write_gguf() takes them back: an array of strings `"<gguf type>:<key>"`, one per
/// key in file order (`"uint32:general.alignment"`, `"array[string]:tokenizer.ggml.tokens"`,
/// `"array[array]:..."`). Type names are gguf_kv_type_name()'s.
inline constexpr std::string_view kGgufKvTypesKey = "gguf.kv_types";

/// The private quantization scheme tag (and private element type tag) of tensors kept as
/// their original GGML blocks. Payload (16 bytes, little-endian): `"GGML"`, u32 ggml type,
/// u32 elements per block, u32 bytes per block. Buffer 0 holds the blocks exactly as GGUF
/// stores them.
inline constexpr uint8_t kGgmlBlocksTag = 0xF0;

/// The GGML tensor types (ggml.h's `ggml_type` numbering, which GGUF stores).
enum class GgmlType : uint32_t {
    kF32 = 0,
    kF16 = 1,
    kQ4_0 = 2,
    kQ4_1 = 3,
    kQ5_0 = 6,
    kQ5_1 = 7,
    kQ8_0 = 8,
    kQ8_1 = 9,
    kQ2_K = 10,
    kQ3_K = 11,
    kQ4_K = 12,
    kQ5_K = 13,
    kQ6_K = 14,
    kQ8_K = 15,
    kIQ2_XXS = 16,
    kIQ2_XS = 17,
    kIQ3_XXS = 18,
    kIQ1_S = 19,
    kIQ4_NL = 20,
    kIQ3_S = 21,
    kIQ2_S = 22,
    kIQ4_XS = 23,
    kI8 = 24,
    kI16 = 25,
    kI32 = 26,
    kI64 = 27,
    kF64 = 28,
    kIQ1_M = 29,
    kBF16 = 30,
    kTQ1_0 = 34,
    kTQ2_0 = 35,
    kMXFP4 = 39,
};

/// Block geometry of a GGML type: `elements` logical values stored in `bytes` bytes
/// (1 and the element size for the plain types).
struct HURRAY_CONVERT_EXPORT GgmlTypeInfo {
    std::string_view name;  ///< ggml's name ("q4_K", "f16", ...).
    uint32_t elements = 0;  ///< Values per block.
    uint32_t bytes = 0;     ///< Bytes per block.
};

/// The geometry of GGML type `type` (a raw `ggml_type` number), nullopt for a number that
/// is not a type this library knows (removed types 4, 5, 31-33, 36-38 included).
HURRAY_CONVERT_EXPORT std::optional<GgmlTypeInfo> ggml_type_info(uint32_t type) noexcept;

/// The name of a GGUF KV value type as kGgufKvTypesKey records it: "uint8", "int8",
/// "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array", "uint64",
/// "int64", "float64"; empty for an unknown number.
HURRAY_CONVERT_EXPORT std::string_view gguf_kv_type_name(uint32_t type) noexcept;

/// Opens a GGUF v2 or v3 file (mapped read-only) as a TensorSource. Every header field is
/// checked before it is used: counts against the bytes left, string lengths, n_dims <= 4,
/// dimension products, tensor types, offsets (aligned, inside the file, non-overlapping),
/// `general.alignment` (a uint32 power of two). F32, F16, BF16, F64, I8..I64 become dense
/// row-major tensors (shape = ne reversed, zero-copy view()); Q8_0 and Q4_0 become
/// per-block affine int8 / int4 tensors (block 32 on the last axis, float16 scales; read()
/// de-interleaves the blocks) unless a block's scale is zero or not finite; every other
/// type (and those) keeps its blocks under the private scheme kGgmlBlocksTag. KV: see
/// kGgufKvTypesKey. Fails with kInvalidFile / kTruncated / kSizeOverflow / kOverlap /
/// kUnsupported naming the field and its byte offset.
/// @code
/// auto src = hurray::formats::open_gguf("model.gguf");
/// if (!src) return src.error();
/// std::printf("%zu tensors\n", (*src)->tensor_count());
/// @endcode
HURRAY_CONVERT_EXPORT Result<std::unique_ptr<TensorSource>> open_gguf(
    const std::filesystem::path& path, const SourceOptions& options = {});

/// Writes `source` as a GGUF v3 file at `path`, atomically (a temporary file renamed when
/// complete), `options.chunk_bytes` at a time. KV values take their GGUF types from
/// kGgufKvTypesKey when present (the entry itself is not written), else int64 -> INT64,
/// uint64 -> UINT64, float64 -> FLOAT64, bool, string, arrays alike; bytes values only
/// under a recorded type. Tensors: dense float32/float16/bfloat16/float64/int8/int16/
/// int32/int64 as themselves, per-block affine int8 / int4 symmetric float16-scaled with
/// block 32 on the last axis as Q8_0 / Q4_0, kGgmlBlocksTag tensors as their blocks; other
/// tensors fail naming them (with `options.dequantize`, quantized ones are written as
/// `options.dequantize_type`). The tensor data is aligned to `general.alignment` (32 when
/// absent).
/// @code
/// auto src = hurray::formats::open_source("model.hrry");
/// if (!src) return src.error();
/// auto st = hurray::formats::write_gguf(**src, "model.gguf", {});
/// @endcode
HURRAY_CONVERT_EXPORT Status write_gguf(const TensorSource& source,
                                        const std::filesystem::path& path,
                                        const ConvertOptions& options = {});

/// Dequantizes `count` values (a whole number of blocks) of GGML type `type` from `bytes`
/// (exactly count / elements * bytes of them) to float32, by ggml's reference formulas.
/// Supported: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K;
/// kUnsupported naming the type for the others, kInvalidArgument for a size mismatch.
/// @code
/// auto values = hurray::formats::dequantize_ggml(12, blocks, 4096);  // q4_K
/// @endcode
HURRAY_CONVERT_EXPORT Result<std::vector<float>> dequantize_ggml(uint32_t type,
                                                                 std::span<const uint8_t> bytes,
                                                                 uint64_t count);

/// The GGML type of a tensor descriptor that holds GGML blocks under kGgmlBlocksTag,
/// nullopt for any other descriptor. With dequantize_ggml(), what a generic dequantizer
/// calls for these tensors (buffer 0, element_count(shape) values).
HURRAY_CONVERT_EXPORT std::optional<uint32_t> ggml_blocks_type(const TensorDescriptor& d) noexcept;

}  // namespace hurray::formats
