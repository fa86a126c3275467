// SPDX-License-Identifier: Apache-2.0
// write(): the dispatcher over the per-format writers (dequantization and verification
// around them), and convert_file().
#include "hurray/convert/convert.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "convert/guard.hpp"
#include "convert/source_data.hpp"
#include "hurray/convert/hrryfile.hpp"
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
        // Each writer adds its case here.
        case Format::kSafeTensors:
            return write_safetensors(source, path, options);
        case Format::kGguf:
        case Format::kNpy:
        case Format::kNpz:
            return Error(ErrorCode::kUnsupported, path.string() + ": no " +
                                                      std::string(format_name(format)) +
                                                      " writer in this build yet");
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

/// A name beside `path` for a file that is verified before it takes `path`'s place.
std::filesystem::path verify_temp_path(const std::filesystem::path& path) {
    static std::atomic<uint64_t> counter{0};
    std::filesystem::path temp = path;
    std::string name(1, '.');
    name += path.filename().string();
    name += ".verify-";
    name += std::to_string(::getpid());
    name += '-';
    name += std::to_string(counter.fetch_add(1));
    temp.replace_filename(name);
    return temp;
}

/// fsync of the directory that holds `path` (makes a rename durable).
Status sync_directory(const std::filesystem::path& path) {
    std::filesystem::path dir = path.parent_path();
    if (dir.empty()) {
        dir = ".";
    }
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return Error(ErrorCode::kIoError,
                     dir.string() + ": open to fsync: " + std::strerror(errno));
    }
    const int rc = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    if (rc != 0 && err != EINVAL) {
        return Error(ErrorCode::kIoError, dir.string() + ": fsync: " + std::strerror(err));
    }
    return {};
}

/// Removes a file when it goes out of scope, unless released.
class RemoveOnExit {
public:
    explicit RemoveOnExit(std::filesystem::path path) : path_(std::move(path)) {}
    RemoveOnExit(const RemoveOnExit&) = delete;
    RemoveOnExit& operator=(const RemoveOnExit&) = delete;
    RemoveOnExit(RemoveOnExit&&) = delete;
    RemoveOnExit& operator=(RemoveOnExit&&) = delete;
    ~RemoveOnExit() {
        if (!path_.empty()) {
            std::error_code ec;
            std::filesystem::remove(path_, ec);
        }
    }
    void release() noexcept { path_.clear(); }

private:
    std::filesystem::path path_;
};

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
    const std::filesystem::path temp = verify_temp_path(path);
    RemoveOnExit cleanup(temp);
    HURRAY_RETURN_IF_ERROR(write_format(to, *presented, temp, inner));
    {
        auto written = open_source(temp);
        if (!written) {
            return Error(
                written.error().code(),
                path.string() + ": verify: re-reading the output: " + written.error().message(),
                written.error().offset());
        }
        if (auto s = compare_sources(*presented, **written); !s) {
            return Error(s.error().code(), path.string() + ": verify: " + s.error().message(),
                         s.error().offset());
        }
    }
    std::error_code ec;
    std::filesystem::rename(temp, path, ec);
    if (ec) {
        return Error(ErrorCode::kIoError,
                     "rename " + temp.string() + " to " + path.string() + ": " + ec.message());
    }
    cleanup.release();
    if (options.durable) {
        HURRAY_RETURN_IF_ERROR(sync_directory(path));
    }
    report.verified = true;
    return report;
}

}  // namespace

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
