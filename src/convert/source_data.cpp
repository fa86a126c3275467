// SPDX-License-Identifier: Apache-2.0
// Moving a TensorSource's bytes: chunked copies for writers, whole buffers for
// transformations that need a tensor in memory.
#include "convert/source_data.hpp"

#include <algorithm>
#include <string>
#include <utility>

namespace hurray::convert::detail {

Result<uint64_t> tensor_data_bytes(const TensorSource& source, size_t i) {
    uint64_t sum = 0;
    for (const BufferHandle& b : source.tensor(i).descriptor.buffers) {
        if (b.byte_size > UINT64_MAX - sum) {
            return Error(ErrorCode::kSizeOverflow,
                         "tensor '" + source.tensor(i).name + "': buffer sizes overflow 64 bits");
        }
        sum += b.byte_size;
    }
    return sum;
}

Result<uint64_t> total_data_bytes(const TensorSource& source) {
    uint64_t sum = 0;
    for (size_t i = 0; i < source.tensor_count(); ++i) {
        HURRAY_ASSIGN_OR_RETURN(const uint64_t n, tensor_data_bytes(source, i));
        if (n > UINT64_MAX - sum) {
            return Error(ErrorCode::kSizeOverflow, "total tensor data overflows 64 bits");
        }
        sum += n;
    }
    return sum;
}

ChunkCopier::ChunkCopier(const TensorSource& source, uint64_t chunk_bytes, uint64_t total,
                         ProgressCallback progress)
    : source_(source),
      chunk_bytes_(std::max<uint64_t>(chunk_bytes, 1)),
      total_(total),
      progress_(std::move(progress)) {}

Status ChunkCopier::copy_tensor(size_t i, const PieceSink& sink) {
    const auto& buffers = source_.tensor(i).descriptor.buffers;
    for (size_t b = 0; b < buffers.size(); ++b) {
        HURRAY_RETURN_IF_ERROR(copy_range(i, b, 0, buffers[b].byte_size, sink));
    }
    return {};
}

Status ChunkCopier::copy_range(size_t i, size_t buffer, uint64_t offset, uint64_t size,
                               const PieceSink& sink) {
    const std::optional<std::span<const uint8_t>> view = source_.view(i, buffer);
    if (view && (offset > view->size() || size > view->size() - offset)) {
        return Error(ErrorCode::kInvalidData,
                     "tensor '" + source_.tensor(i).name + "' buffer " + std::to_string(buffer) +
                         ": the source holds " + std::to_string(view->size()) +
                         " bytes, fewer than the " + std::to_string(offset + size) + " declared");
    }
    uint64_t pos = 0;
    while (pos < size) {
        const uint64_t n = std::min(chunk_bytes_, size - pos);
        std::span<const uint8_t> piece;
        if (view) {
            piece = view->subspan(static_cast<size_t>(offset + pos), static_cast<size_t>(n));
        } else {
            if (chunk_.size() < n) {
                chunk_.resize(static_cast<size_t>(n));
            }
            const std::span<uint8_t> out(chunk_.data(), static_cast<size_t>(n));
            HURRAY_RETURN_IF_ERROR(source_.read(i, buffer, offset + pos, out));
            piece = out;
        }
        HURRAY_RETURN_IF_ERROR(sink(piece));
        pos += n;
        done_ += n;
        HURRAY_RETURN_IF_ERROR(report_progress(progress_, done_, total_));
    }
    return {};
}

Result<BufferBytes> whole_buffer(const TensorSource& source, size_t i, size_t buffer) {
    const BufferTable& buffers = source.tensor(i).descriptor.buffers;
    if (buffer >= buffers.size()) {
        return Error(ErrorCode::kInvalidArgument,
                     "tensor " + std::to_string(i) + ": buffer " + std::to_string(buffer) + " out of range");
    }
    const uint64_t size = buffers[buffer].byte_size;
    BufferBytes out;
    if (auto view = source.view(i, buffer); view && view->size() >= size) {
        out.bytes = view->first(static_cast<size_t>(size));
        return out;
    }
    if (size > SIZE_MAX) {
        return Error(ErrorCode::kSizeOverflow,
                     "tensor '" + source.tensor(i).name + "' buffer " + std::to_string(buffer) +
                         ": " + std::to_string(size) + " bytes do not fit in memory");
    }
    out.storage.resize(static_cast<size_t>(size));
    HURRAY_RETURN_IF_ERROR(source.read(i, buffer, 0, out.storage));
    out.bytes = out.storage;
    return out;
}

Status whole_buffers(const TensorSource& source, size_t i, std::vector<BufferBytes>& out,
                     std::vector<std::span<const uint8_t>>& spans) {
    const size_t n = source.tensor(i).descriptor.buffers.size();
    out.clear();
    out.reserve(n);
    for (size_t b = 0; b < n; ++b) {
        HURRAY_ASSIGN_OR_RETURN(BufferBytes bytes, whole_buffer(source, i, b));
        out.push_back(std::move(bytes));
    }
    spans.clear();
    for (const BufferBytes& b : out) {  // after every push_back: the storage no longer moves
        spans.push_back(b.bytes);
    }
    return {};
}

}  // namespace hurray::convert::detail
