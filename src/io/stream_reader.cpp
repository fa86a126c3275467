// SPDX-License-Identifier: Apache-2.0
// StreamReader: drives a StreamDecoder over a blocking ByteSource.
//
// Descriptor bytes are read straight into the decoder's descriptor space,
// which never reaches past the descriptor; data bytes into the chunk buffer
// or the caller's memory, never past the current buffer. So the reader never
// consumes a byte it does not need, and holds no look-ahead.
#include "hurray/io/stream_reader.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "core/text.hpp"

namespace hurray {

using detail::dec;

StreamReader::StreamReader(ByteSource& source, const StreamReadOptions& options)
    : source_(&source), decoder_(options) {}

bool StreamReader::in_data() const noexcept { return decoder_.need() == StreamNeed::kData; }

Result<size_t> StreamReader::pull(std::span<uint8_t> out) {
    auto n = source_->read_some(out);
    if (!n) {
        return decoder_.fail(n.error()).error();
    }
    if (*n > out.size()) {
        return decoder_.fail(Error(ErrorCode::kIoError, "stream source: read_some reported " + dec(*n) +
                                                            " bytes for a " + dec(out.size()) + "-byte request",
                                   decoder_.offset()))
            .error();
    }
    return *n;
}

Status StreamReader::truncated() {
    // The input ended inside a tensor: the decoder builds the error.
    HURRAY_RETURN_IF_ERROR(decoder_.end_of_input());
    return Error(ErrorCode::kTruncated, "stream: input ended early", decoder_.offset());
}

Result<const StreamTensor*> StreamReader::next() {
    if (decoder_.failure()) {
        return *decoder_.failure();
    }
    HURRAY_RETURN_IF_ERROR(skip_data());
    has_current_ = false;
    while (true) {
        switch (decoder_.need()) {
        case StreamNeed::kEnded:
            return static_cast<const StreamTensor*>(nullptr);
        case StreamNeed::kFailed:
            return *decoder_.failure();
        case StreamNeed::kData:
            // Only after a descriptor was decoded, which returns below.
            return Error(ErrorCode::kInvalidArgument, "stream: next() inside a tensor's data");
        case StreamNeed::kPrefix:
        case StreamNeed::kDescriptor:
            break;
        }
        const std::span<uint8_t> space = decoder_.descriptor_space();
        HURRAY_ASSIGN_OR_RETURN(const size_t n, pull(space));
        if (n == 0) {
            HURRAY_RETURN_IF_ERROR(decoder_.end_of_input());
            return static_cast<const StreamTensor*>(nullptr);
        }
        HURRAY_ASSIGN_OR_RETURN(const StreamEvent ev, decoder_.commit(n));
        if (ev == StreamEvent::kDescriptor) {
            has_current_ = true;
            current_total_ = decoder_.data_remaining();
            return decoder_.tensor();
        }
    }
}

Result<StreamChunk> StreamReader::read_chunk() {
    if (decoder_.failure()) {
        return *decoder_.failure();
    }
    StreamChunk chunk;
    if (!in_data()) {
        return chunk;
    }
    chunk.buffer = decoder_.buffer_index();
    chunk.offset = decoder_.buffer_offset();
    const size_t size = std::max<size_t>(decoder_.options().chunk_size, 1);
    const auto want = static_cast<size_t>(std::min<uint64_t>(decoder_.need_size(), size));
    if (chunk_.size() < want) {
        // Grows to at most chunk_size, then stays.
        chunk_.resize(std::min(size, std::max(want, chunk_.size() * 2)));
    }
    const std::span<uint8_t> dst = std::span<uint8_t>(chunk_).first(want);
    size_t have = 0;
    while (have < want) {
        HURRAY_ASSIGN_OR_RETURN(const size_t n, pull(dst.subspan(have)));
        if (n == 0) {
            HURRAY_RETURN_IF_ERROR(decoder_.commit(have));
            HURRAY_RETURN_IF_ERROR(truncated());
        }
        have += n;
    }
    HURRAY_RETURN_IF_ERROR(decoder_.commit(have));
    chunk.bytes = dst;
    return chunk;
}

Result<size_t> StreamReader::read_data(std::span<uint8_t> out) {
    if (decoder_.failure()) {
        return *decoder_.failure();
    }
    if (out.empty()) {
        return Error(ErrorCode::kInvalidArgument, "stream: read_data into an empty span");
    }
    if (!in_data()) {
        return size_t{0};
    }
    const auto want = static_cast<size_t>(std::min<uint64_t>(decoder_.need_size(), out.size()));
    HURRAY_ASSIGN_OR_RETURN(const size_t n, pull(out.first(want)));
    if (n == 0) {
        HURRAY_RETURN_IF_ERROR(truncated());
    }
    HURRAY_RETURN_IF_ERROR(decoder_.commit(n));
    return n;
}

Status StreamReader::read_into(std::span<uint8_t> out) {
    if (decoder_.failure()) {
        return *decoder_.failure();
    }
    const uint64_t rest = in_data() ? decoder_.need_size() : 0;
    if (out.size() != rest) {
        return Error(ErrorCode::kSizeMismatch, "stream: read_into a span of " + dec(out.size()) +
                                                   " bytes where the current buffer has " + dec(rest) + " left");
    }
    size_t have = 0;
    while (have < out.size()) {
        HURRAY_ASSIGN_OR_RETURN(const size_t n, pull(out.subspan(have)));
        if (n == 0) {
            HURRAY_RETURN_IF_ERROR(decoder_.commit(have));
            return truncated();
        }
        have += n;
    }
    HURRAY_RETURN_IF_ERROR(decoder_.commit(have));
    return Status::success();
}

Result<std::vector<SharedBuffer>> StreamReader::read_tensor() {
    if (decoder_.failure()) {
        return *decoder_.failure();
    }
    const StreamTensor* current = tensor();
    if (current == nullptr) {
        return Error(ErrorCode::kInvalidArgument, "stream: read_tensor without a current tensor");
    }
    if (decoder_.data_remaining() != current_total_) {
        return Error(ErrorCode::kInvalidArgument, "stream: read_tensor after part of the tensor's data was read");
    }
    const uint64_t total = current_total_;
    if (total > decoder_.options().max_tensor_bytes) {
        return Error(ErrorCode::kInvalidArgument, "stream tensor #" + dec(current->index) + ": " + dec(total) +
                                                      " data bytes exceed max_tensor_bytes " +
                                                      dec(decoder_.options().max_tensor_bytes) +
                                                      "; read it in chunks");
    }
    const auto size = static_cast<size_t>(total);
    std::shared_ptr<uint8_t[]> block(new uint8_t[size == 0 ? 1 : size]);  // NOLINT(cppcoreguidelines-owning-memory): owned by the shared_ptr at once
    const std::span<uint8_t> all(block.get(), size);
    std::vector<SharedBuffer> out;
    out.reserve(current->descriptor.buffers.size());
    size_t pos = 0;
    for (const BufferHandle& h : current->descriptor.buffers) {
        const auto n = static_cast<size_t>(h.byte_size);
        if (n > 0) {
            HURRAY_RETURN_IF_ERROR(read_into(all.subspan(pos, n)));
        }
        out.emplace_back(std::span<const uint8_t>(all.subspan(pos, n)), block);
        pos += n;
    }
    return out;
}

Status StreamReader::skip_buffer() {
    if (decoder_.failure()) {
        return *decoder_.failure();
    }
    if (!in_data()) {
        return Status::success();
    }
    const uint64_t want = decoder_.need_size();
    auto n = source_->skip(want);
    if (!n) {
        return decoder_.fail(n.error());
    }
    if (*n > want) {
        return decoder_.fail(Error(ErrorCode::kIoError, "stream source: skip reported more bytes than asked",
                                   decoder_.offset()));
    }
    HURRAY_RETURN_IF_ERROR(decoder_.commit(*n));
    if (*n < want) {
        return truncated();
    }
    return Status::success();
}

Status StreamReader::skip_data() {
    while (in_data()) {
        HURRAY_RETURN_IF_ERROR(skip_buffer());
    }
    if (decoder_.failure()) {
        return *decoder_.failure();
    }
    return Status::success();
}

}  // namespace hurray
