// SPDX-License-Identifier: Apache-2.0
/// @file
/// `StreamReader`: reads the streaming format (tensors back to back, see
/// `stream_decoder.hpp`) from any `ByteSource`, blocking, in bounded memory.
#pragma once

#include "hurray/io/export.hpp"
#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/io/byte_source.hpp"
#include "hurray/io/shared_buffer.hpp"
#include "hurray/io/stream_decoder.hpp"

namespace hurray {

/// A piece of a tensor's data handed out by `StreamReader::read_chunk`.
struct HURRAY_IO_EXPORT StreamChunk {
    /// The buffer the bytes belong to (its index in the buffer table).
    uint32_t buffer = 0;
    /// Offset of the first byte inside that buffer.
    uint64_t offset = 0;
    /// The bytes: valid until the next call on the reader. Empty when the
    /// current tensor's data is all read.
    std::span<const uint8_t> bytes;
};

/// Reads a stream of tensors from a `ByteSource` (a file descriptor, pipe,
/// socket, `FILE*` or memory), blocking.
///
/// `next` moves to the next tensor (skipping what is left of the current
/// one's data) and returns nullptr at a clean end of input on a tensor
/// boundary. A tensor's data is then read in one of four ways: `read_chunk`
/// (chunks of at most `chunk_size` in the reader's one internal buffer, each
/// tagged with its buffer and offset), `read_data` / `read_into` (straight
/// into caller memory), `read_tensor` (the whole tensor in one allocation,
/// bounded by `max_tensor_bytes`), or not at all (`skip_buffer`,
/// `skip_data`, or `next`, which skip without reading into memory where the
/// source can). No call crosses from one buffer into the next.
///
/// Memory: the descriptor being read (bounded by `max_descriptor_length`,
/// grown as its bytes arrive), the current descriptor, one chunk buffer and
/// the state of open composites. The reader never reads past the byte it
/// needs, so the source is left exactly at the end of the last tensor read.
///
/// Errors (sticky: every later call returns the first one) carry absolute
/// stream offsets: `kTruncated` when the input ends inside a tensor (the
/// message names the tensor, the part being read and how much of it
/// arrived), `kInvalidDescriptorLength` for a descriptor over the bound,
/// decode errors of the descriptor, `kInvalidBufferHandle` for a buffer over
/// `max_buffer_size` or not producer-synced when that is required,
/// composite errors, `kIoError` from the source. Misuse (`read_into` with
/// the wrong size, say) is reported without making the error sticky.
///
/// @code
/// hurray::FdSource in(socket_fd);
/// hurray::StreamReader reader(in);
/// while (true) {
///     auto t = reader.next();
///     if (!t) return t.error();
///     if (*t == nullptr) break;                    // clean end
///     while (true) {
///         auto c = reader.read_chunk();
///         if (!c) return c.error();
///         if (c->bytes.empty()) break;             // tensor done
///         consume((*t)->index, c->buffer, c->offset, c->bytes);
///     }
/// }
/// @endcode
class HURRAY_IO_EXPORT StreamReader {
public:
    /// Reads from `source` (not owned; must outlive the reader). The spans in
    /// `options.descriptor` must outlive it too.
    explicit StreamReader(ByteSource& source, const StreamReadOptions& options = {});

    /// Moves to the next tensor, skipping what is left of the current one's
    /// data; nullptr at the clean end of the stream (after which it keeps
    /// returning nullptr). The pointer is valid until the next `next`.
    Result<const StreamTensor*> next();
    /// The next chunk of the current tensor's data: at most `chunk_size`
    /// bytes, never crossing a buffer; empty when its data is all read (or
    /// before the first `next`). Fills the chunk completely unless the buffer
    /// ends first.
    Result<StreamChunk> read_chunk();
    /// Reads at least one byte of the current buffer into `out` (at most
    /// `out.size()` and what is left of the buffer); 0 when the tensor's data
    /// is all read. `out` must not be empty.
    Result<size_t> read_data(std::span<uint8_t> out);
    /// Reads exactly the rest of the current buffer into `out`, whose size
    /// must be what is left of it (`kSizeMismatch` otherwise, nothing read).
    Status read_into(std::span<uint8_t> out);
    /// Reads all of the current tensor's data into one allocation and returns
    /// one `SharedBuffer` per buffer (slices of it). Only before any of its
    /// data was read (`kInvalidArgument` otherwise); larger than
    /// `max_tensor_bytes` is `kInvalidArgument` with nothing read.
    Result<std::vector<SharedBuffer>> read_tensor();
    /// Hands what is left of the current buffer to `move(source, n)`, which
    /// must take exactly the next `n` bytes from `source` (the reader's
    /// source, positioned at them) and return how many it took (fewer only
    /// when the input ended: then `kTruncated`). For transfers that skip the
    /// reader's own chunks (`FileWriter::write_data_from`). Returns the bytes moved; 0 when the tensor's
    /// data is all read. An error from `move` becomes the reader's sticky
    /// error (the position in the source is then unknown).
    ///
    /// @code
    /// auto n = reader.move_buffer([&](hurray::ByteSource& src, uint64_t k) {
    ///     return writer.write_data_from(src, k);
    /// });
    /// @endcode
    Result<uint64_t> move_buffer(const std::function<Result<uint64_t>(ByteSource&, uint64_t)>& move);
    /// Skips what is left of the current buffer.
    Status skip_buffer();
    /// Skips what is left of the current tensor's data.
    Status skip_data();

    /// The current tensor (nullptr before the first `next` and at the end).
    [[nodiscard]] const StreamTensor* tensor() const noexcept { return has_current_ ? decoder_.tensor() : nullptr; }
    /// The buffer the next data byte belongs to, and the offset inside it.
    [[nodiscard]] std::pair<uint32_t, uint64_t> data_position() const noexcept {
        return {decoder_.buffer_index(), decoder_.buffer_offset()};
    }
    /// The decoder: stream offset, tensor count, composites, options.
    [[nodiscard]] const StreamDecoder& decoder() const noexcept { return decoder_; }
    /// The composites completed so far, moved out (see `StreamDecoder`).
    std::vector<CompletedComposite> take_completed() { return decoder_.take_completed(); }

private:
    Result<size_t> pull(std::span<uint8_t> out);
    Status truncated();
    [[nodiscard]] bool in_data() const noexcept;

    ByteSource* source_;
    StreamDecoder decoder_;
    bool has_current_ = false;
    uint64_t current_total_ = 0;
    std::vector<uint8_t> chunk_;
};

}  // namespace hurray
