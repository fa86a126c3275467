// SPDX-License-Identifier: Apache-2.0
// write_npy: the one tensor of a source as a .npy file, atomically.
#include <algorithm>
#include <string>
#include <vector>

#include "convert/guard.hpp"
#include "convert/npy_array.hpp"
#include "hurray/convert/numpy.hpp"
#include "hurray/io/byte_sink.hpp"

namespace hurray::convert {
namespace {

Status write_npy_impl(const TensorSource& source, const std::filesystem::path& path,
                      const ConvertOptions& options) {
    if (source.tensor_count() != 1) {
        return Error(ErrorCode::kInvalidArgument,
                     path.string() + ": a .npy holds exactly one array, the source has " +
                         std::to_string(source.tensor_count()) + " tensors (write a .npz)");
    }
    if (options.chunk_bytes == 0) {
        return Error(ErrorCode::kInvalidArgument, "chunk_bytes: must be at least 1");
    }
    HURRAY_ASSIGN_OR_RETURN(const detail::NpyEncoder enc, detail::NpyEncoder::make(source, 0));
    auto sink = AtomicFileSink::create(path, options.durable);
    if (!sink) {
        return sink.error();
    }
    HURRAY_RETURN_IF_ERROR((*sink)->write(enc.header()));
    const uint64_t total = enc.data_bytes();
    if (auto view = enc.data_view(); view && view->size() >= total) {
        for (uint64_t pos = 0; pos < total;) {
            const uint64_t n = std::min(options.chunk_bytes, total - pos);
            HURRAY_RETURN_IF_ERROR(
                (*sink)->write(view->subspan(static_cast<size_t>(pos), static_cast<size_t>(n))));
            pos += n;
            HURRAY_RETURN_IF_ERROR(report_progress(options.progress, pos, total));
        }
    } else {
        std::vector<uint8_t> chunk(
            static_cast<size_t>(std::min(options.chunk_bytes, std::max<uint64_t>(total, 1))));
        const uint64_t base = enc.header().size();
        for (uint64_t pos = 0; pos < total;) {
            const uint64_t n = std::min<uint64_t>(chunk.size(), total - pos);
            const std::span<uint8_t> piece(chunk.data(), static_cast<size_t>(n));
            HURRAY_RETURN_IF_ERROR(enc.read(base + pos, piece));
            HURRAY_RETURN_IF_ERROR((*sink)->write(piece));
            pos += n;
            HURRAY_RETURN_IF_ERROR(report_progress(options.progress, pos, total));
        }
    }
    return (*sink)->commit();  // any earlier return: the sink's destructor removes the temp file
}

}  // namespace

Status write_npy(const TensorSource& source, const std::filesystem::path& path,
                 const ConvertOptions& options) {
    return detail::guarded(path.string(),
                           [&]() -> Status { return write_npy_impl(source, path, options); });
}

}  // namespace hurray::convert
