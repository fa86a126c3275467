// SPDX-License-Identifier: Apache-2.0
// StreamReader: drives a StreamDecoder over a blocking ByteSource.
//
// Descriptor bytes are read straight into the decoder's descriptor space,
// which never reaches past the descriptor; data bytes into the chunk buffer
// or the caller's memory, never past the current buffer. So the reader never
// consumes a byte it does not need, and holds no look-ahead.
#include "hurray/io/stream_reader.hpp"

#include <memory>
#include <string>
#include <utility>

#include "hurray/core/text.hpp"
#include "hurray/io/stream_steps.hpp"

namespace hurray {


// Lives here rather than with the other steps (stream_decoder.cpp) because
// it fills a StreamChunk, the reader's type.
Result<std::span<uint8_t>> stream_steps::start_chunk(const StreamDecoder& d, std::vector<uint8_t>& chunk,
                                               StreamChunk& out) {
    if (d.failure()) {
        return *d.failure();
    }
    if (d.need() != StreamNeed::kData) {
        return std::span<uint8_t>();
    }
    out.buffer = d.buffer_index();
    out.offset = d.buffer_offset();
    return chunk_space(d, chunk);
}

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

Status StreamReader::truncated() { return stream_steps::input_ended_early(decoder_); }

Result<const StreamTensor*> StreamReader::next() {
    if (decoder_.failure()) {
        return *decoder_.failure();
    }
    HURRAY_RETURN_IF_ERROR(skip_data());
    has_current_ = false;
    while (true) {
        HURRAY_ASSIGN_OR_RETURN(const bool wanted, stream_steps::wants_descriptor(decoder_));
        if (!wanted) {
            return static_cast<const StreamTensor*>(nullptr);
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
    StreamChunk chunk;
    HURRAY_ASSIGN_OR_RETURN(const std::span<uint8_t> dst, stream_steps::start_chunk(decoder_, chunk_, chunk));
    if (dst.empty()) {
        return chunk;
    }
    size_t have = 0;
    while (have < dst.size()) {
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
    HURRAY_ASSIGN_OR_RETURN(const size_t want, stream_steps::data_want(decoder_, out.size()));
    if (want == 0) {
        return size_t{0};
    }
    HURRAY_ASSIGN_OR_RETURN(const size_t n, pull(out.first(want)));
    if (n == 0) {
        HURRAY_RETURN_IF_ERROR(truncated());
    }
    HURRAY_RETURN_IF_ERROR(decoder_.commit(n));
    return n;
}

Status StreamReader::read_into(std::span<uint8_t> out) {
    HURRAY_RETURN_IF_ERROR(stream_steps::check_read_into(decoder_, out.size()));
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
    const StreamTensor* current = tensor();
    HURRAY_ASSIGN_OR_RETURN(const size_t size, stream_steps::whole_tensor_size(decoder_, current, current_total_));
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

Result<uint64_t> StreamReader::move_buffer(const std::function<Result<uint64_t>(ByteSource&, uint64_t)>& move) {
    if (decoder_.failure()) {
        return *decoder_.failure();
    }
    if (!in_data()) {
        return uint64_t{0};
    }
    const uint64_t want = decoder_.need_size();
    auto n = move(*source_, want);
    if (!n) {
        return decoder_.fail(n.error()).error();
    }
    if (*n > want) {
        return decoder_.fail(Error(ErrorCode::kIoError, "stream data: more bytes moved than asked",
                                   decoder_.offset()))
            .error();
    }
    HURRAY_RETURN_IF_ERROR(decoder_.commit(*n));
    if (*n < want) {
        HURRAY_RETURN_IF_ERROR(truncated());
    }
    return *n;
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
