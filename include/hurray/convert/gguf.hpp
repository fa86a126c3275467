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
#include "hurray/core/ggml_blocks.hpp"
#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"

namespace hurray::convert {

/// The KV key under which open_gguf() records the GGUF type of every other key, and from
/// which write_gguf() takes them back: an array of strings `"<gguf type>:<key>"`, one per
/// key in file order (`"uint32:general.alignment"`, `"array[string]:tokenizer.ggml.tokens"`,
/// `"array[array]:..."`). Type names are gguf_kv_type_name()'s.
inline constexpr std::string_view kGgufKvTypesKey = "gguf.kv_types";

/// The private quantization scheme tag (and private element type tag) of tensors kept as
/// their original GGML blocks: hurray::kGgmlBlocksScheme (hurray/core/ggml_blocks.hpp),
/// which every reader of this library understands.
inline constexpr uint8_t kGgmlBlocksTag = kGgmlBlocksScheme;

// The GGML types, their geometry and dequantization live in hurray::core
// (hurray/core/ggml_blocks.hpp); these names stay for the converters' users.
using hurray::dequantize_ggml;
using hurray::ggml_blocks_type;
using hurray::ggml_type_info;
using hurray::GgmlType;
using hurray::GgmlTypeInfo;

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
/// auto src = hurray::convert::open_gguf("model.gguf");
/// if (!src) return src.error();
/// std::printf("%zu tensors\n", (*src)->tensor_count());
/// @endcode
HURRAY_CONVERT_EXPORT Result<std::unique_ptr<TensorSource>> open_gguf(
    const std::filesystem::path& path, const SourceOptions& options = {});

/// Opens the GGUF file behind `source` (an `HttpRangeSource`, any RangeSource) with the
/// same checks: its header is read in growing ranges (the first 1 MiB, then doubled
/// while the KV section and tensor infos run past it; at most 256 MiB, else
/// kUnsupported), and each read() is one range of the file. One difference from a local
/// file: Q8_0 and Q4_0 tensors keep their blocks (kGgmlBlocksScheme), because telling
/// whether every block scale suits the per-block affine presentation needs all of a
/// tensor's data; convert a downloaded copy for that presentation. No view().
/// @code
/// auto url = hurray::http::HttpRangeSource::open("https://example.com/model.gguf");
/// if (!url) return url.error();
/// auto src = hurray::convert::open_gguf(*url);   // 1-2 requests for most headers
/// @endcode
HURRAY_CONVERT_EXPORT Result<std::unique_ptr<TensorSource>> open_gguf(std::shared_ptr<RangeSource> source,
                                                                      const SourceOptions& options = {});

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
/// auto src = hurray::convert::open_source("model.hrry");
/// if (!src) return src.error();
/// auto st = hurray::convert::write_gguf(**src, "model.gguf", {});
/// @endcode
HURRAY_CONVERT_EXPORT Status write_gguf(const TensorSource& source,
                                        const std::filesystem::path& path,
                                        const ConvertOptions& options = {});

}  // namespace hurray::convert
