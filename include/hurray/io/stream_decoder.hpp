// SPDX-License-Identifier: Apache-2.0
/// @file
/// The streaming format (SPEC-NOTES 18): tensors back to back, each its
/// encoded descriptor followed by its buffers' bytes, with no stream header,
/// no padding and no end marker. `StreamDecoder` and `StreamEncoder` hold the
/// format's rules without doing any I/O; `StreamReader` / `StreamWriter`
/// (blocking) drive them over a `ByteSource` / `ByteSink`, and an
/// asynchronous reader or writer can drive the same objects over its own
/// transport.
#pragma once

#include "hurray/io/export.hpp"
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "hurray/core/composite.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"

namespace hurray {

/// Default bound on one descriptor read from a stream: 16 MiB.
inline constexpr uint32_t kDefaultMaxStreamDescriptor = 16U * 1024U * 1024U;

/// What a stream reader accepts.
struct HURRAY_IO_EXPORT StreamReadOptions {
    /// How descriptors are decoded (strict by default).
    DecodeOptions descriptor{};
    /// Largest `descriptor_length` accepted, checked on the 10-byte prefix
    /// before any more of the descriptor is read (`kInvalidDescriptorLength`).
    uint32_t max_descriptor_length = kDefaultMaxStreamDescriptor;
    /// Largest buffer `byte_size` accepted (`kInvalidBufferHandle`). Default:
    /// no bound (data is delivered in chunks, never held whole).
    uint64_t max_buffer_size = UINT64_MAX;
    /// Reject any buffer whose `sync_mode` is not producer-synced
    /// (`kInvalidBufferHandle`): set it for a stream that crosses machines
    /// (buffer-protocol.md § Per-Transport Constraints).
    bool require_producer_synced = false;
    /// Composite rules (strict by default).
    CompositeOptions composite{};
    /// Deepest composite nesting accepted, 1 .. `kMaxCompositeDepth`
    /// (`kNestingTooDeep`); 0 accepts no composite at all.
    uint32_t max_composite_depth = kMaxCompositeDepth;
    /// Largest chunk `StreamReader::read_chunk` hands out (and the size of its
    /// one internal data buffer): 1 MiB.
    size_t chunk_size = size_t{1} << 20;
    /// Largest tensor `StreamReader::read_tensor` reads into one allocation
    /// (sum of its buffer sizes): 1 GiB.
    uint64_t max_tensor_bytes = uint64_t{1} << 30;
};

/// What a `StreamDecoder` waits for.
enum class StreamNeed : uint8_t {
    kPrefix,      ///< The first `kDescriptorPeekSize` bytes of the next descriptor (or a clean end).
    kDescriptor,  ///< The rest of the current descriptor.
    kData,        ///< Data bytes of the current tensor's `buffer_index()`.
    kFailed,      ///< Nothing: an error was reported (see `failure()`).
    kEnded,       ///< Nothing: `end_of_input()` found a clean end.
};

/// What a `StreamDecoder::commit` completed.
enum class StreamEvent : uint8_t {
    kNone,        ///< More bytes of the same item are needed.
    kDescriptor,  ///< A descriptor was decoded: `tensor()` is the new tensor
                  ///< (its data may already be complete: no or empty buffers).
    kData,        ///< Data bytes were taken (maybe completing a buffer or the tensor).
};

/// The tensor a decoder (or reader) is on.
struct HURRAY_IO_EXPORT StreamTensor {
    /// Position in the stream, 0-based.
    uint64_t index = 0;
    /// Absolute stream offset of its descriptor.
    uint64_t descriptor_offset = 0;
    /// Its decoded descriptor.
    TensorDescriptor descriptor;
    /// The descriptor exactly as the stream carried it (`descriptor_length`
    /// bytes from `descriptor_offset`): what a relay forwards unchanged.
    std::vector<uint8_t> descriptor_bytes;
    /// Composites open after its descriptor (0: not inside a composite, and
    /// not a head; a head counts its own composite).
    uint32_t composite_depth = 0;
};

/// The stream format's reading rules, without I/O.
///
/// The driver asks `need()` what comes next and how many bytes at most
/// (`need_size()`), gets those bytes from its transport and reports them
/// with `commit`:
///  - for `kPrefix` and `kDescriptor` it puts them into `descriptor_space()`
///    (the decoder owns the descriptor bytes; the space never reaches past
///    the descriptor, and grows as bytes arrive, so a large
///    `descriptor_length` costs memory only once its bytes are there);
///  - for `kData` it puts them wherever it likes (its own buffer, caller
///    memory, nowhere when skipping) and reports only how many arrived.
/// When the transport reports the end of input, the driver calls
/// `end_of_input()`: a clean end on a tensor boundary (with no composite
/// waiting for members) or an error. The first error sticks.
///
/// The decoder checks, in this order: the prefix (`peek_length`: magic,
/// version, minimum length), `max_descriptor_length`, the full descriptor
/// (`decode`), `max_buffer_size` and `require_producer_synced` on every
/// buffer handle, then the composite rules (`CompositeAssembler`, nesting
/// bounded by `max_composite_depth`). Errors carry absolute stream offsets;
/// messages name the tensor index.
///
/// @code
/// hurray::StreamDecoder dec;
/// while (true) {
///     switch (dec.need()) {
///     case hurray::StreamNeed::kPrefix:
///     case hurray::StreamNeed::kDescriptor: {
///         auto space = dec.descriptor_space();
///         size_t n = transport_read(space);              // 0 at end of input
///         if (n == 0) return dec.end_of_input();         // clean end or error
///         if (auto e = dec.commit(n); !e) return e.error();
///         break;
///     }
///     case hurray::StreamNeed::kData: {
///         size_t n = transport_read(my_buffer.first(std::min(dec.need_size(), my_buffer.size())));
///         if (n == 0) return dec.end_of_input();         // truncated
///         use(dec.buffer_index(), my_buffer.first(n));
///         if (auto e = dec.commit(n); !e) return e.error();
///         break;
///     }
///     default: return hurray::Status::success();
///     }
/// }
/// @endcode
class HURRAY_IO_EXPORT StreamDecoder {
public:
    /// A decoder at the start of a stream. The spans in
    /// `options.descriptor` must outlive it.
    explicit StreamDecoder(const StreamReadOptions& options = {});

    /// What the decoder waits for.
    [[nodiscard]] StreamNeed need() const noexcept { return need_; }
    /// At most how many bytes it takes now: the rest of the prefix, the rest
    /// of the descriptor, or the rest of the current buffer. 0 when ended or
    /// failed.
    [[nodiscard]] uint64_t need_size() const noexcept;
    /// Where the next descriptor bytes go (`kPrefix`, `kDescriptor`); empty
    /// otherwise. Not larger than `need_size()`. Valid until the next call.
    [[nodiscard]] std::span<uint8_t> descriptor_space();
    /// Reports that `n` bytes of what `need()` asked for arrived (in
    /// `descriptor_space()` for descriptor bytes). `n` larger than
    /// `need_size()` (or than `descriptor_space()`) is `kInvalidArgument`.
    Result<StreamEvent> commit(uint64_t n);
    /// Reports the end of input: success on a tensor boundary with no
    /// composite open, `kTruncated` inside a tensor (naming the tensor, what
    /// was being read and how much of it had arrived; offset = where the input
    /// ended), `kInvalidComposite` for a torn composite.
    Status end_of_input();
    /// Reports a transport failure; it becomes the sticky error.
    Status fail(Error e);

    /// The current tensor, once its descriptor was decoded (until the next
    /// descriptor completes); nullptr before the first.
    [[nodiscard]] const StreamTensor* tensor() const noexcept { return has_tensor_ ? &tensor_ : nullptr; }
    /// Whether all of the current tensor's data has arrived (true before the
    /// first tensor and on every tensor boundary).
    [[nodiscard]] bool at_boundary() const noexcept;
    /// The buffer the next data byte belongs to (while `need()` is `kData`).
    [[nodiscard]] uint32_t buffer_index() const noexcept { return buffer_; }
    /// Offset of the next data byte inside that buffer.
    [[nodiscard]] uint64_t buffer_offset() const noexcept { return buffer_pos_; }
    /// Data bytes of the current tensor not yet arrived (all its buffers).
    [[nodiscard]] uint64_t data_remaining() const noexcept { return data_remaining_; }
    /// Absolute offset of the next byte of the stream.
    [[nodiscard]] uint64_t offset() const noexcept { return offset_; }
    /// Number of descriptors decoded so far.
    [[nodiscard]] uint64_t tensor_count() const noexcept { return count_; }
    /// The composite validator (completed composites, open depth).
    [[nodiscard]] const CompositeAssembler& composites() const noexcept { return assembler_; }
    /// The composites completed so far, moved out (to bound memory on long
    /// streams; a composite is complete once its last member's data arrived).
    std::vector<CompletedComposite> take_completed() { return assembler_.take_completed(); }
    /// The sticky error, if any.
    [[nodiscard]] const std::optional<Error>& failure() const noexcept { return failure_; }
    /// The options in force.
    [[nodiscard]] const StreamReadOptions& options() const noexcept { return options_; }

private:
    Status on_prefix();
    Status on_descriptor();
    void enter_data();
    Status set_failure(Error e);

    StreamReadOptions options_;
    CompositeAssembler assembler_;
    StreamNeed need_ = StreamNeed::kPrefix;
    std::vector<uint8_t> desc_;      // descriptor bytes gathered so far (capacity grows)
    uint32_t desc_length_ = 0;       // descriptor_length from the prefix
    uint32_t desc_have_ = 0;         // bytes of it arrived (prefix included)
    uint32_t prefix_have_ = 0;       // bytes of the prefix arrived (before the length is known)
    uint64_t desc_offset_ = 0;       // absolute offset of the descriptor being read
    StreamTensor tensor_;
    bool has_tensor_ = false;
    uint32_t buffer_ = 0;
    uint64_t buffer_pos_ = 0;
    uint64_t data_remaining_ = 0;
    uint64_t offset_ = 0;
    uint64_t count_ = 0;
    std::optional<Error> failure_;
};

/// What a stream writer enforces.
struct HURRAY_IO_EXPORT StreamWriteOptions {
    /// Refuse a buffer whose `sync_mode` is not producer-synced
    /// (`kInvalidBufferHandle`), for streams that cross machines.
    bool require_producer_synced = false;
    /// Composite rules applied to heads and members as they are written.
    CompositeOptions composite{};
    /// Deepest composite nesting written, 1 .. `kMaxCompositeDepth`.
    uint32_t max_composite_depth = kMaxCompositeDepth;
};

/// One tensor of a composite given whole to a writer: its descriptor and one
/// span per buffer (none for a nested head). Members are listed in pre-order.
struct HURRAY_IO_EXPORT StreamTensorInput {
    /// Its descriptor.
    const TensorDescriptor* descriptor = nullptr;
    /// One span per buffer of the descriptor, each exactly its declared size.
    std::span<const std::span<const uint8_t>> buffers;
};

/// The stream format's writing rules, without I/O: which bytes go out when,
/// and whether the sizes agree. The writer asks it before every write and
/// sends what it allows.
///
/// `begin_tensor` checks a descriptor (encodable, producer-synced when
/// asked, composite rules) and returns its encoded bytes to send; `data(n)`
/// admits the next `n` data bytes (`kSizeMismatch` when more than the
/// tensor still expects, without changing anything); `end_tensor` checks that
/// every declared byte was admitted. `check_composite` validates a whole
/// composite on a copy of the state before any of it is sent. `finish`
/// refuses to end inside a tensor or a composite. After `fail`, every call
/// returns that error.
class HURRAY_IO_EXPORT StreamEncoder {
public:
    /// An encoder at the start of a stream.
    explicit StreamEncoder(const StreamWriteOptions& options = {});

    /// Checks `desc` as the next tensor and returns its encoded descriptor.
    /// On error nothing changes (the tensor was not started).
    Result<std::vector<uint8_t>> begin_tensor(const TensorDescriptor& desc);
    /// Admits `n` more data bytes of the current tensor; returns the buffer
    /// the first of them belongs to.
    Result<uint32_t> data(uint64_t n);
    /// Ends the current tensor (`kSizeMismatch` when bytes are missing; the
    /// encoder then fails, since the stream can no longer be repaired).
    Status end_tensor();
    /// Checks that `head` followed by `members` (pre-order, nested heads
    /// included) is a complete, valid composite with exactly the buffers its
    /// descriptors declare, without changing any state.
    [[nodiscard]] Status check_composite(const TensorDescriptor& head, std::span<const StreamTensorInput> members) const;
    /// Checks that the stream may end here: no tensor open, no composite
    /// waiting for members.
    [[nodiscard]] Status finish() const;
    /// Records a transport failure; it becomes the sticky error.
    Status fail(Error e);

    /// Whether a tensor was begun and not ended.
    [[nodiscard]] bool in_tensor() const noexcept { return in_tensor_; }
    /// Data bytes the current tensor still expects.
    [[nodiscard]] uint64_t data_remaining() const noexcept { return remaining_; }
    /// Bytes admitted so far (descriptors and data): the stream offset.
    [[nodiscard]] uint64_t offset() const noexcept { return offset_; }
    /// Tensors begun so far.
    [[nodiscard]] uint64_t tensor_count() const noexcept { return count_; }
    /// The sticky error, if any.
    [[nodiscard]] const std::optional<Error>& failure() const noexcept { return failure_; }

private:
    [[nodiscard]] Status check_tensor(const TensorDescriptor& desc, uint64_t index) const;

    StreamWriteOptions options_;
    CompositeAssembler assembler_;
    std::vector<uint64_t> sizes_;                // the current tensor's buffer sizes
    uint32_t buffer_ = 0;
    uint64_t buffer_pos_ = 0;
    uint64_t remaining_ = 0;
    bool in_tensor_ = false;
    uint64_t offset_ = 0;
    uint64_t count_ = 0;
    std::optional<Error> failure_;
};

}  // namespace hurray
