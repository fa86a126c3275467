// SPDX-License-Identifier: Apache-2.0
/// @file
/// `StreamWriter`: writes the streaming format (tensors back to back, see
/// `stream_decoder.hpp`) to any `ByteSink`, blocking.
#pragma once

#include "hurray/io/export.hpp"
#include <cstdint>
#include <span>

#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/stream_decoder.hpp"

namespace hurray {

/// Writes a stream of tensors to a `ByteSink` (a file descriptor, pipe,
/// socket, `FILE*` or memory), blocking.
///
/// Each tensor goes out as its encoded descriptor followed by its buffers'
/// bytes, with nothing between tensors and nothing at the end (SPEC-NOTES
/// 18). A tensor is given whole (`write_tensor`) or in pieces
/// (`begin_tensor`, `write_data`, `end_tensor`); a composite whole
/// (`write_composite`, validated before its first byte goes out) or member
/// by member (each checked as it is begun).
///
/// Errors found before any byte of a call is written leave the writer
/// usable: an invalid descriptor, a composite rule broken, a buffer not
/// producer-synced when that is required, buffers that disagree with the
/// descriptor (`kSizeMismatch`), a `write_data` piece longer than what the
/// tensor still expects (`kSizeMismatch`). A sink failure or `end_tensor`
/// with bytes missing leaves it failed: every later call returns that error.
///
/// @code
/// hurray::FdSink out(socket_fd);
/// hurray::StreamWriter writer(out);
/// auto desc = hurray::make_dense(hurray::ElementType::kFloat32, {1024});
/// std::span<const uint8_t> bufs[] = {bytes};
/// if (auto s = writer.write_tensor(*desc, bufs); !s) return s;
/// if (auto s = writer.finish(); !s) return s;   // checks, flushes
/// @endcode
class HURRAY_IO_EXPORT StreamWriter {
public:
    /// Writes to `sink` (not owned; must outlive the writer).
    explicit StreamWriter(ByteSink& sink, const StreamWriteOptions& options = {});

    /// Writes one tensor: one span per buffer of `desc`, each exactly its
    /// declared size (`kSizeMismatch` otherwise, before anything is written).
    /// A composite head is written with no buffers; its members are the
    /// tensors written after it.
    Status write_tensor(const TensorDescriptor& desc, std::span<const std::span<const uint8_t>> buffers);
    /// Writes a composite head and its members (pre-order, nested heads
    /// included) after checking the whole composite: an invalid or
    /// incomplete one writes nothing.
    Status write_composite(const TensorDescriptor& head, std::span<const StreamTensorInput> members);

    /// Starts a tensor whose data comes in pieces: writes its descriptor.
    Status begin_tensor(const TensorDescriptor& desc);
    /// Writes the next bytes of the current tensor's data (its buffers in
    /// order, as one run; a piece may span buffers).
    Status write_data(std::span<const uint8_t> piece);
    /// Ends the current tensor (`kSizeMismatch` when bytes are missing).
    Status end_tensor();

    /// Checks that the stream may end here (no open tensor, no composite
    /// waiting for members) and flushes the sink. Writes nothing: the end of
    /// the stream is the end of the transport.
    Status finish();

    /// Bytes written so far (the stream offset).
    [[nodiscard]] uint64_t offset() const noexcept { return encoder_.offset(); }
    /// Tensors begun so far.
    [[nodiscard]] uint64_t tensor_count() const noexcept { return encoder_.tensor_count(); }
    /// The encoder (state, sticky error).
    [[nodiscard]] const StreamEncoder& encoder() const noexcept { return encoder_; }

private:
    Status put(std::span<const uint8_t> bytes);
    Status write_checked(const TensorDescriptor& desc, std::span<const std::span<const uint8_t>> buffers);

    ByteSink* sink_;
    StreamEncoder encoder_;
};

}  // namespace hurray
