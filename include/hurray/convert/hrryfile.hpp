// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file
/// HRRYFILE containers as a TensorSource, and the HRRYFILE writer of `hurray::convert`.

#include <filesystem>
#include <memory>

#include "hurray/convert/convert.hpp"
#include "hurray/convert/export.hpp"
#include "hurray/convert/tensor_source.hpp"
#include "hurray/core/result.hpp"

namespace hurray::convert {

/// Opens an HRRYFILE container (hurray::FileReader) as a TensorSource: every tensor as
/// it is stored (any layout, quantization, private sections), composite heads and their
/// members listed as they are, in write order (the order of their descriptors in the
/// file, so that every composite is followed by its members); its KV metadata as it is.
/// `view()` is zero-copy from the mapping, `read()` copies from it. With
/// `options.validate`, every descriptor and composite is checked at open
/// (FileReader::check_all); descriptors are decoded at open either way.
/// @code
/// auto src = hurray::convert::open_hrryfile("model.hrry");
/// if (!src) return src.error();
/// std::printf("%zu tensors\n", (*src)->tensor_count());
/// @endcode
HURRAY_CONVERT_EXPORT Result<std::unique_ptr<TensorSource>> open_hrryfile(
    const std::filesystem::path& path, const SourceOptions& options = {});

/// `open_hrryfile` for the file behind `source` (an HTTP file: see
/// `hurray::http::HttpRangeSource`), through `FileReader::open(source)`: its sections
/// and descriptors are fetched at open, each tensor's bytes when read (`view()` gives
/// nullopt: nothing is mapped). Errors name the source.
HURRAY_CONVERT_EXPORT Result<std::unique_ptr<TensorSource>> open_hrryfile(
    std::shared_ptr<RangeSource> source, const SourceOptions& options = {});

/// Writes `source` as an HRRYFILE container at `path` (hurray::FileWriter): every
/// tensor's descriptor as the source presents it and its buffers, `options.chunk_bytes`
/// at a time (zero-copy from `view()` where the source has one, otherwise through one
/// reusable chunk buffer), the KV metadata copied. Atomic: a temporary file beside
/// `path`, renamed when complete (fsync'ed first when `options.durable`); on error
/// nothing is left at `path` (an existing file keeps its content). `options.progress` is
/// called after every chunk. `options.dequantize`, `options.verify` and `options.to` are
/// handled by write(), not here.
/// @code
/// auto src = hurray::convert::open_source("model.gguf");
/// if (!src) return src.error();
/// if (auto s = hurray::convert::write_hrryfile(**src, "model.hrry", {}); !s) return s;
/// @endcode
HURRAY_CONVERT_EXPORT Status write_hrryfile(const TensorSource& source,
                                            const std::filesystem::path& path,
                                            const ConvertOptions& options = {});

}  // namespace hurray::convert
