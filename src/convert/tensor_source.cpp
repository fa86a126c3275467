// SPDX-License-Identifier: Apache-2.0
#include "hurray/convert/tensor_source.hpp"

#include <algorithm>
#include <array>
#include <span>
#include <string>
#include <vector>

#include "hurray/convert/gguf.hpp"
#include "hurray/convert/hrryfile.hpp"
#include "hurray/convert/numpy.hpp"
#include "hurray/convert/safetensors.hpp"
#include "hurray/io/cached_head_source.hpp"
#include "hurray/io/read_only_file.hpp"

namespace hurray::convert {

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
    HURRAY_ASSIGN_OR_RETURN(const ReadOnlyFile file, ReadOnlyFile::open(path, /*use_mmap=*/false));
    Head head;
    head.file_size = file.size();
    head.size = static_cast<size_t>(std::min<uint64_t>(file.size(), head.bytes.size()));
    HURRAY_RETURN_IF_ERROR(file.read_into(0, std::span<uint8_t>(head.bytes.data(), head.size), "the first bytes"));
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

Result<std::unique_ptr<TensorSource>> open_source(std::shared_ptr<RangeSource> source,
                                                  const SourceOptions& options) {
    if (!source) {
        return Error(ErrorCode::kInvalidArgument, "open_source: no source");
    }
    const std::string name = source->name();
    // One read for the format and, kept (CachedHeadSource), for what the reader reads
    // first: a SafeTensors header or an HRRYFILE header inside it costs no request.
    std::vector<uint8_t> head(static_cast<size_t>(std::min<uint64_t>(source->size(), kRangeSourceHeadBytes)));
    if (auto st = source->read(0, head); !st) {
        return st.error().with_context({.file = name});
    }
    const Format format =
        detect_format(std::span<const uint8_t>(head).first(std::min(head.size(), kDetectHeadBytes)), source->size());
    source = std::make_shared<CachedHeadSource>(std::move(source), std::move(head));
    switch (format) {
        case Format::kHrryFile:
            return open_hrryfile(std::move(source), options);
        case Format::kNpy:
            return open_npy(std::move(source), options);
        case Format::kSafeTensors:
            return open_safetensors(std::move(source), options);
        case Format::kGguf:
            return open_gguf(std::move(source), options);
        case Format::kNpz:
            return open_npz(std::move(source), options);
        case Format::kStream:
        case Format::kUnknown:
            break;
    }
    return Error(ErrorCode::kUnsupported,
                 name + ": not an HRRYFILE, SafeTensors or .npy file", 0)
        .with_context({.file = name});
}

}  // namespace hurray::convert
