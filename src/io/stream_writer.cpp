// SPDX-License-Identifier: Apache-2.0
// StreamWriter: drives a StreamEncoder over a blocking ByteSink. The encoder
// decides what may go out; the writer sends it and turns sink failures into
// the encoder's sticky error.
#include "hurray/io/stream_writer.hpp"

#include "hurray/io/stream_steps.hpp"

namespace hurray {

StreamWriter::StreamWriter(ByteSink& sink, const StreamWriteOptions& options) : sink_(&sink), encoder_(options) {}

Status StreamWriter::put(std::span<const uint8_t> bytes) {
    if (bytes.empty()) {
        return Status::success();
    }
    if (auto s = sink_->write(bytes); !s) {
        return encoder_.fail(s.error());
    }
    return Status::success();
}

Status StreamWriter::begin_tensor(const TensorDescriptor& desc) {
    HURRAY_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, encoder_.begin_tensor(desc));
    return put(bytes);
}

Status StreamWriter::write_data(std::span<const uint8_t> piece) {
    HURRAY_RETURN_IF_ERROR(encoder_.data(piece.size()));
    return put(piece);
}

Status StreamWriter::end_tensor() { return encoder_.end_tensor(); }

Status StreamWriter::write_checked(const TensorDescriptor& desc, std::span<const std::span<const uint8_t>> buffers) {
    HURRAY_RETURN_IF_ERROR(begin_tensor(desc));
    for (const auto& b : buffers) {
        HURRAY_RETURN_IF_ERROR(write_data(b));
    }
    return end_tensor();
}

Status StreamWriter::write_tensor(const TensorDescriptor& desc, std::span<const std::span<const uint8_t>> buffers) {
    HURRAY_RETURN_IF_ERROR(stream_steps::check_given_buffers(encoder_, desc, buffers));
    return write_checked(desc, buffers);
}

Status StreamWriter::write_composite(const TensorDescriptor& head, std::span<const StreamTensorInput> members) {
    HURRAY_RETURN_IF_ERROR(encoder_.check_composite(head, members));
    HURRAY_RETURN_IF_ERROR(write_checked(head, {}));
    for (const StreamTensorInput& m : members) {
        HURRAY_RETURN_IF_ERROR(write_checked(*m.descriptor, m.buffers));
    }
    return Status::success();
}

Status StreamWriter::finish() {
    HURRAY_RETURN_IF_ERROR(encoder_.finish());
    if (auto s = sink_->flush(); !s) {
        return encoder_.fail(s.error());
    }
    return Status::success();
}

}  // namespace hurray
