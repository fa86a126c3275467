#pragma once
/// @file
/// The small model-like file of `hurray demo` (also used by the tests): float16 and
/// bfloat16 weight matrices, a per-block int4 and an NF4 quantized matrix, a CSR sparse
/// matrix, a partition composite and typed KV metadata.

#include <string>

#include "hurray/core/result.hpp"
#include "hurray/io/file_writer.hpp"

namespace hurray::cli {

/// Number of tensors (index entries, composite head and members included) of the demo model.
inline constexpr size_t kDemoTensorCount = 10;

/// Adds the demo model's tensors and KV metadata to `writer` (not finished).
Status add_demo_model(FileWriter& writer);

/// Writes the demo model to `path` (atomically) with `options` (an unknown tensor count
/// hint becomes kDemoTensorCount).
Status write_demo_model(const std::string& path, FileWriterOptions options = {});

}  // namespace hurray::cli
