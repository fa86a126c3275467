// SPDX-License-Identifier: Apache-2.0
// open_npy: one .npy file as a TensorSource, read with pread (ReadOnlyFile).
#include <algorithm>
#include <string>
#include <vector>

#include "convert/guard.hpp"
#include "convert/npy_array.hpp"
#include "hurray/convert/numpy.hpp"
#include "hurray/io/read_only_file.hpp"

namespace hurray::convert {
namespace {

/// The .npy file `file`, named `what` in errors, its tensor `name`.
Result<std::unique_ptr<TensorSource>> open_npy_file(const ReadOnlyFile& file, const std::string& what,
                                                    const std::string& name) {
    std::vector<uint8_t> prefix(static_cast<size_t>(std::min<uint64_t>(file.size(), 12)));
    HURRAY_RETURN_IF_ERROR(file.read_into(0, prefix, "magic"));
    HURRAY_ASSIGN_OR_RETURN(const uint64_t data_offset, detail::npy_data_offset(prefix, what));
    if (data_offset > file.size()) {
        return Error(ErrorCode::kTruncated,
                     what + ": header_len: the header ends at byte " + std::to_string(data_offset) +
                         ", past the end of the file (" + std::to_string(file.size()) + " bytes)",
                     8);
    }
    std::vector<uint8_t> head(static_cast<size_t>(data_offset));
    HURRAY_RETURN_IF_ERROR(file.read_into(0, head, "header"));
    HURRAY_ASSIGN_OR_RETURN(const detail::NpyHeader header, detail::parse_npy_header(head, what));
    if (header.data_bytes > file.size() - data_offset) {
        return Error(ErrorCode::kTruncated,
                     what + ": data: the shape declares " + std::to_string(header.data_bytes) +
                         " bytes from byte " + std::to_string(data_offset) + ", the file holds " +
                         std::to_string(file.size() - data_offset),
                     data_offset);
    }
    HURRAY_ASSIGN_OR_RETURN(SourceTensor tensor, detail::npy_tensor(name, header));
    detail::NpyArray array;
    array.tensor = std::move(tensor);
    array.header = header;
    array.what = what;
    array.raw = [file, data_offset](uint64_t offset, std::span<uint8_t> out) -> Status {
        return file.read_into(data_offset + offset, out, "data");
    };
    std::vector<detail::NpyArray> arrays;
    arrays.push_back(std::move(array));
    return std::unique_ptr<TensorSource>(
        std::make_unique<detail::NpySource>(Format::kNpy, std::move(arrays), nullptr));
}

}  // namespace

Result<std::unique_ptr<TensorSource>> open_npy(const std::filesystem::path& path,
                                               const SourceOptions& /*options*/) {
    return detail::guarded(path.string(), [&]() -> Result<std::unique_ptr<TensorSource>> {
        HURRAY_ASSIGN_OR_RETURN(const ReadOnlyFile file, ReadOnlyFile::open(path, /*use_mmap=*/false));
        return open_npy_file(file, path.string(), path.stem().string());
    });
}

Result<std::unique_ptr<TensorSource>> open_npy(std::shared_ptr<RangeSource> source,
                                               const SourceOptions& /*options*/) {
    if (!source) {
        return Error(ErrorCode::kInvalidArgument, "open_npy: no source");
    }
    const std::string what = source->name();
    return detail::guarded(what, [&]() -> Result<std::unique_ptr<TensorSource>> {
        // The stem of the URL's path ("https://host/dir/w.npy" -> "w").
        const std::string stem = std::filesystem::path(what.substr(what.find_last_of('/') + 1)).stem().string();
        return open_npy_file(ReadOnlyFile::range(std::move(source)), what, stem);
    });
}

}  // namespace hurray::convert
