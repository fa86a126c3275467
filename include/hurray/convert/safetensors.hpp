// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file
/// SafeTensors files in and out (docs/convert.md, "SafeTensors"): a reader that maps the
/// file and presents its tensors as a TensorSource (zero-copy where the bytes are used as
/// they are), and a writer of any TensorSource whose tensors are dense and row-major.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>

#include "hurray/convert/convert.hpp"
#include "hurray/convert/export.hpp"
#include "hurray/convert/tensor_source.hpp"
#include "hurray/core/element_type.hpp"
#include "hurray/core/result.hpp"

namespace hurray::convert {

/// The largest JSON header the reader accepts (100 MiB), against headers that would
/// exhaust memory.
inline constexpr uint64_t kSafeTensorsMaxHeaderBytes = uint64_t{100} << 20;

/// The element type of a SafeTensors dtype name ("F32" -> kFloat32, "BOOL" -> kBool,
/// "F4" -> kFloat4E2M1, ...); nullopt for a name Hurray has no type for (F8_E4M3FNUZ,
/// F8_E5M2FNUZ) or that SafeTensors does not define.
/// @code
/// auto t = hurray::convert::safetensors_element_type("BF16");  // ElementType::kBFloat16
/// @endcode
HURRAY_CONVERT_EXPORT std::optional<ElementType> safetensors_element_type(
    std::string_view dtype) noexcept;

/// The SafeTensors dtype name of an element type ("F32", "BOOL", "F4", ...); empty for a
/// type SafeTensors cannot hold (int4, uint4, int2, uint2, float128, complex128).
/// @code
/// std::string_view n = hurray::convert::safetensors_dtype_name(hurray::ElementType::kFloat16);
/// @endcode
HURRAY_CONVERT_EXPORT std::string_view safetensors_dtype_name(ElementType type) noexcept;

/// Opens a SafeTensors file: maps it read-only, parses and validates the JSON header
/// (length within the file and at most kSafeTensorsMaxHeaderBytes; every entry's dtype,
/// shape and data_offsets; sizes that agree with shape and dtype; data spans inside the
/// data area and not overlapping), and presents its tensors in header order with
/// `__metadata__` as string KV entries. BOOL tensors (one byte per element in the file)
/// are presented bit-packed as Hurray's `bool` (read() packs them; view() gives nullopt
/// for them); every other tensor's bytes are presented as stored, view() without a copy.
/// Errors name the tensor and the field, with the byte offset in the file of the field's
/// key in the header (8 + its position), or of the tensor's data.
/// @code
/// auto src = hurray::convert::open_safetensors("model.safetensors");
/// if (!src) return src.error();
/// auto i = (*src)->find("lm_head.weight");
/// @endcode
HURRAY_CONVERT_EXPORT Result<std::unique_ptr<TensorSource>> open_safetensors(
    const std::filesystem::path& path, const SourceOptions& options = {});

/// `open_safetensors` for the file behind `source` (an HTTP file: see
/// `hurray::http::HttpRangeSource`): two range reads at open (the length, then the
/// header), then one per `read()` of a tensor's bytes; `view()` gives nullopt. The
/// same checks and errors, naming the source.
/// @code
/// auto url = hurray::http::HttpRangeSource::open("https://example.com/model.safetensors");
/// if (!url) return url.error();
/// auto src = hurray::convert::open_safetensors(*url);
/// @endcode
HURRAY_CONVERT_EXPORT Result<std::unique_ptr<TensorSource>> open_safetensors(
    std::shared_ptr<RangeSource> source, const SourceOptions& options = {});

/// Writes every tensor of `source` to a SafeTensors file at `path`, in the source's order,
/// atomically (a temporary file beside `path`, fsynced when `options.durable`, renamed
/// when complete; on an error `path` is untouched). Dense row-major tensors of the types SafeTensors has are
/// written as they are (bool unpacked to one byte per element), chunk by chunk
/// (`options.chunk_bytes`). A quantized, sparse, composite, column-major or strided
/// tensor is an error naming it unless `options.dequantize` is set (then the source is
/// read through dequantized_source(), as write() does); a tensor of a type SafeTensors
/// lacks (int4, int2, float128, complex128) is an error either way. The source's
/// KV metadata goes into `__metadata__`: strings as they are, other values as their text
/// form (docs/convert.md).
/// @code
/// auto src = hurray::convert::open_source("model.hrry");
/// if (!src) return src.error();
/// if (auto s = hurray::convert::write_safetensors(**src, "model.safetensors"); !s) return s;
/// @endcode
HURRAY_CONVERT_EXPORT Status write_safetensors(const TensorSource& source,
                                               const std::filesystem::path& path,
                                               const ConvertOptions& options = {});

}  // namespace hurray::convert
