// SPDX-License-Identifier: Apache-2.0
// write(): the dispatcher over the per-format writers (dequantization and verification
// around them), and convert_file().
#include "hurray/convert/convert.hpp"

#include <string>

#include "convert/compare.hpp"
#include "convert/file_commit.hpp"
#include "hurray/io/byte_sink.hpp"
#include "convert/guard.hpp"
#include "convert/source_data.hpp"
#include "hurray/convert/gguf.hpp"
#include "hurray/convert/hrryfile.hpp"
#include "hurray/convert/numpy.hpp"
#include "hurray/convert/safetensors.hpp"

namespace hurray::convert {
namespace {

/// The output format: options.to, else the extension of `path`.
Result<Format> output_format(const std::filesystem::path& path, const ConvertOptions& options) {
    if (options.to != Format::kUnknown) {
        return options.to;
    }
    if (auto f = format_from_extension(path)) {
        return *f;
    }
    return Error(ErrorCode::kInvalidArgument,
                 path.string() +
                     ": the output format is not given and its extension is not one of .hrry, "
                     ".hrrys, .safetensors, .gguf, .npy, .npz");
}

/// The per-format writer of `format`.
Status write_format(Format format, const TensorSource& source, const std::filesystem::path& path,
                    const ConvertOptions& options) {
    switch (format) {
        case Format::kHrryFile:
            return write_hrryfile(source, path, options);
        case Format::kNpy:
            return write_npy(source, path, options);
        case Format::kNpz:
            return write_npz(source, path, options);
        case Format::kSafeTensors:
            return write_safetensors(source, path, options);
        case Format::kGguf:
            return write_gguf(source, path, options);
        case Format::kStream:
            return Error(ErrorCode::kUnsupported,
                         path.string() +
                             ": writing the streaming format from a converter source is not "
                             "supported (hurray::file_to_stream converts an HRRYFILE)");
        case Format::kUnknown:
            break;
    }
    return Error(ErrorCode::kInvalidArgument, path.string() + ": no output format");
}

Result<ConvertReport> write_impl(const TensorSource& source, const std::filesystem::path& path,
                                 const ConvertOptions& options) {
    HURRAY_ASSIGN_OR_RETURN(const Format to, output_format(path, options));
    if (options.chunk_bytes == 0) {
        return Error(ErrorCode::kInvalidArgument, "chunk_bytes: must be at least 1");
    }
    std::unique_ptr<TensorSource> dense;
    const TensorSource* presented = &source;
    if (options.dequantize) {
        HURRAY_ASSIGN_OR_RETURN(dense, dequantized_source(source, options.dequantize_type));
        presented = dense.get();
    }
    ConvertOptions inner = options;
    inner.to = to;
    inner.dequantize = false;
    inner.verify = false;

    ConvertReport report;
    report.from = source.format();
    report.to = to;
    report.tensors = presented->tensor_count();
    HURRAY_ASSIGN_OR_RETURN(report.data_bytes, detail::total_data_bytes(*presented));

    if (!options.verify) {
        HURRAY_RETURN_IF_ERROR(write_format(to, *presented, path, inner));
        return report;
    }
    // Written beside the target, verified, then renamed over it: a mismatch leaves no
    // output (and an existing file untouched).
    HURRAY_ASSIGN_OR_RETURN(const std::filesystem::path temp_dir,
                            detail::temp_dir_beside(path, "verify"));
    const detail::RemoveOnExit cleanup(temp_dir);
    const std::filesystem::path temp =
        temp_dir / path.filename();  // same name: a .npy names its tensor so
    HURRAY_RETURN_IF_ERROR(write_format(to, *presented, temp, inner));
    {
        auto written = open_source(temp);
        if (!written) {
            return written.error().with_context({.prefix = path.string() + ": verify: re-reading the output", .file = path.string()});
        }
        if (auto s = detail::compare_sources_impl(*presented, **written, to != Format::kNpy); !s) {
            return s.error().with_context({.prefix = path.string() + ": verify", .file = path.string()});
        }
    }
    HURRAY_RETURN_IF_ERROR(replace_file(temp, path, options.durable));
    report.verified = true;
    return report;
}

}  // namespace

Status report_progress(const ProgressCallback& progress, uint64_t done_bytes, uint64_t total_bytes) {
    if (!progress || progress(done_bytes, total_bytes)) {
        return Status::success();
    }
    return Error(ErrorCode::kCancelled, "cancelled by the progress callback after " + std::to_string(done_bytes) +
                                            " of " + std::to_string(total_bytes) + " bytes of tensor data");
}

Result<ConvertReport> write(const TensorSource& source, const std::filesystem::path& path,
                            const ConvertOptions& options) {
    return detail::guarded(path.string(), [&]() { return write_impl(source, path, options); });
}

Result<ConvertReport> convert_file(const std::filesystem::path& in,
                                   const std::filesystem::path& out,
                                   const ConvertOptions& options) {
    return detail::guarded(in.string(), [&]() -> Result<ConvertReport> {
        HURRAY_ASSIGN_OR_RETURN(const std::unique_ptr<TensorSource> source, open_source(in));
        return write_impl(*source, out, options);
    });
}

}  // namespace hurray::convert
