// SPDX-License-Identifier: Apache-2.0
#include "hurray/convert/tensor_source.hpp"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <system_error>

#include "hurray/convert/gguf.hpp"
#include "hurray/convert/hrryfile.hpp"
#include "hurray/convert/numpy.hpp"
#include "hurray/convert/safetensors.hpp"

namespace hurray::formats {

TensorSource::~TensorSource() = default;

std::optional<std::span<const uint8_t>> TensorSource::view(size_t /*i*/, size_t /*buffer*/) const {
    return std::nullopt;
}

std::optional<size_t> TensorSource::find(std::string_view name) const {
    for (size_t i = 0; i < tensor_count(); ++i) {
        if (tensor(i).name == name) {
            return i;
        }
    }
    return std::nullopt;
}

namespace {

/// The first bytes of `path` and its size.
struct Head {
    std::array<uint8_t, kDetectHeadBytes> bytes{};
    size_t size = 0;
    uint64_t file_size = 0;
};

Result<Head> read_head(const std::filesystem::path& path) {
    std::error_code ec;
    const uint64_t file_size = std::filesystem::file_size(path, ec);
    if (ec) {
        return Error(ErrorCode::kIoError, path.string() + ": " + ec.message());
    }
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) {
        return Error(ErrorCode::kIoError, path.string() + ": " + std::strerror(errno));
    }
    Head head;
    head.file_size = file_size;
    head.size = std::fread(head.bytes.data(), 1, head.bytes.size(), f);
    const bool failed = std::ferror(f) != 0;
    std::fclose(f);
    if (failed) {
        return Error(ErrorCode::kIoError, path.string() + ": read failed");
    }
    return head;
}

}  // namespace

Result<std::unique_ptr<TensorSource>> open_source(const std::filesystem::path& path,
                                                  const SourceOptions& options) {
    auto head = read_head(path);
    if (!head) {
        return head.error();
    }
    const Format format =
        detect_format(std::span<const uint8_t>(head->bytes.data(), head->size), head->file_size);
    switch (format) {
        case Format::kGguf:
            return open_gguf(path, options);
        case Format::kHrryFile:
            return open_hrryfile(path, options);
        case Format::kNpy:
            return open_npy(path, options);
        case Format::kNpz:
            return open_npz(path, options);
        case Format::kSafeTensors:
            return open_safetensors(path, options);
        case Format::kStream:
        case Format::kUnknown:
            break;
    }
    return Error(ErrorCode::kUnsupported,
                 path.string() +
                     ": not an HRRYFILE, SafeTensors, GGUF, .npy or .npz file (a Hurray stream "
                     "converts with hurray::stream_to_file)",
                 0);
}

}  // namespace hurray::formats
