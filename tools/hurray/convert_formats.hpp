// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file
/// `hurray convert` for the formats of hurray::convert (SafeTensors, GGUF, .npy, .npz, and
/// HRRYFILE with --dequantize / --verify), through hurray::formats; cmd_convert.cpp keeps
/// the HRRYFILE and stream conversions of the io library.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hurray/cli.hpp"
#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"
#include "hurray/io/kv_metadata.hpp"

namespace hurray::cli {

/// What `hurray convert` was asked, for the converter path.
struct FormatConvertRequest {
    std::string in;           ///< input path ('-' is not supported here)
    std::string out;          ///< output path
    std::string to;           ///< --to (empty: from the extension, else HRRYFILE)
    bool dequantize = false;  ///< --dequantize
    std::string dtype;        ///< --dtype float32|float16|bfloat16 (implies --dequantize)
    bool verify = false;      ///< --verify
};

/// Whether this conversion goes through hurray::convert: a SafeTensors / GGUF / .npy /
/// .npz output (--to or extension), such an input (detected from its bytes) written to a
/// file, or --dequantize, --dtype or --verify.
bool uses_converter(const FormatConvertRequest& request);

/// Runs the conversion; returns the exit status (errors and usage problems reported on
/// console.err, a progress bar when console.err is a terminal).
int run_format_convert(const FormatConvertRequest& request, const Console& console);

/// The tensors and metadata of a file that hurray::convert reads (SafeTensors, GGUF,
/// .npy, .npz), in Hurray's terms, for `hurray ls`.
struct ForeignListing {
    std::string format;  ///< its format's name ("npy", "npz", ...)
    std::vector<std::pair<std::string, TensorDescriptor>> tensors;  ///< name, descriptor
    KvMetadata kv;                                                  ///< its metadata
};

/// Lists `path` through hurray::formats::open_source when it is a SafeTensors, GGUF, .npy
/// or .npz file whose reader is in this build; nullopt otherwise (HRRYFILE, stream, '-',
/// anything else: the caller's own path reports it).
std::optional<Result<ForeignListing>> list_foreign(const std::string& path);

}  // namespace hurray::cli
