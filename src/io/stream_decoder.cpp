// SPDX-License-Identifier: Apache-2.0
// StreamDecoder / StreamEncoder: the streaming format's rules (SPEC-NOTES 18)
// as two state machines that never touch a transport.
//
// Decoder states: kPrefix (0..9 bytes of the next descriptor arrived) ->
// kDescriptor (the rest of `descriptor_length`) -> kData (each non-empty
// buffer in turn) -> kPrefix. A clean end is the end of input in kPrefix with
// no prefix byte arrived and no composite open. The descriptor bytes are kept
// in `desc_`, whose size grows by doubling as bytes arrive (from 4 KiB up to
// the announced length), so that memory follows the input actually received.
#include "hurray/io/stream_decoder.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <utility>

#include "hurray/core/checked_math.hpp"
#include "hurray/core/text.hpp"
#include "hurray/core/describe.hpp"
#include "hurray/core/layout.hpp"
#include "hurray/io/stream_steps.hpp"

namespace hurray {

namespace {


/// First size of the descriptor buffer; it doubles as bytes arrive.
constexpr uint32_t kFirstDescriptorChunk = 4096;

std::string tensor_label(uint64_t index) { return "stream tensor #" + dec(index); }

// The first bytes of a stream, when they cannot start Hurray input (every
// stream, descriptor and container starts with "HRRY"): the error that says
// so, instead of a magic or truncation error about a descriptor. `nullopt`
// when they can.
std::optional<Error> not_hurray(std::span<const uint8_t> first) {
    static constexpr std::array<uint8_t, 4> kMagic = {'H', 'R', 'R', 'Y'};
    const size_t n = std::min(first.size(), kMagic.size());
    if (std::equal(first.begin(), first.begin() + static_cast<std::ptrdiff_t>(n), kMagic.begin())) {
        return std::nullopt;
    }
    return Error(ErrorCode::kInvalidMagic,
                 "magic: not a Hurray stream or file (starts with " + leading_bytes(first) + ")", 0);
}

/// The checks shared by the reader and the writer on one decoded descriptor:
/// buffer sizes against a bound and the producer-sync rule.
Status check_buffers(const TensorDescriptor& d, uint64_t max_buffer_size, bool require_producer_synced,
                     const std::string& label, uint64_t offset) {
    for (size_t b = 0; b < d.buffers.size(); ++b) {
        const BufferHandle& h = d.buffers[b];
        if (h.byte_size > max_buffer_size) {
            return Error(ErrorCode::kInvalidBufferHandle,
                         label + ": buffer " + dec(b) + " byte_size " + dec(h.byte_size) +
                             " exceeds max_buffer_size " + dec(max_buffer_size),
                         offset);
        }
        if (require_producer_synced && h.sync_mode != SyncMode::kProducerSynced) {
            return Error(ErrorCode::kInvalidBufferHandle,
                         label + ": buffer " + dec(b) + " sync_mode " +
                             dec(static_cast<uint8_t>(h.sync_mode)) +
                             " is not producer-synced, as a stream crossing machines requires "
                             "(buffer-protocol.md, Per-Transport Constraints)",
                         offset);
        }
    }
    return Status::success();
}

/// Adds `d` to `assembler` and bounds the nesting depth.
Status add_to_assembler(CompositeAssembler& assembler, const TensorDescriptor& d, uint32_t max_depth,
                        const std::string& label, uint64_t offset) {
    if (auto s = assembler.add(d); !s) {
        return s.error().with_context({.prefix = label});
    }
    if (assembler.depth() > max_depth) {
        return Error(ErrorCode::kNestingTooDeep,
                     label + ": composite nesting depth " + dec(assembler.depth()) +
                         " exceeds max_composite_depth " + dec(max_depth),
                     offset);
    }
    return Status::success();
}

}  // namespace

// ---------------------------------------------------------------------------
// StreamDecoder

StreamDecoder::StreamDecoder(const StreamReadOptions& options) : options_(options), assembler_(options.composite) {}

bool StreamDecoder::at_boundary() const noexcept {
    return (need_ == StreamNeed::kPrefix && prefix_have_ == 0) || need_ == StreamNeed::kEnded;
}

uint64_t StreamDecoder::need_size() const noexcept {
    switch (need_) {
    case StreamNeed::kPrefix:
        return kDescriptorPeekSize - prefix_have_;
    case StreamNeed::kDescriptor:
        return desc_length_ - desc_have_;
    case StreamNeed::kData:
        return tensor_.descriptor.buffers[buffer_].byte_size - buffer_pos_;
    case StreamNeed::kFailed:
    case StreamNeed::kEnded:
        break;
    }
    return 0;
}

std::span<uint8_t> StreamDecoder::descriptor_space() {
    if (need_ == StreamNeed::kPrefix) {
        if (desc_.size() < kDescriptorPeekSize) {
            desc_.resize(kFirstDescriptorChunk);
        }
        return std::span<uint8_t>(desc_).subspan(prefix_have_, kDescriptorPeekSize - prefix_have_);
    }
    if (need_ != StreamNeed::kDescriptor) {
        return {};
    }
    if (desc_.size() <= desc_have_) {
        // Grow by doubling, never past the announced length (bounded by
        // max_descriptor_length): memory follows the bytes that arrived.
        const size_t grown = std::min<size_t>(desc_length_, std::max<size_t>(desc_.size() * 2, kFirstDescriptorChunk));
        desc_.resize(grown);
    }
    const size_t end = std::min<size_t>(desc_.size(), desc_length_);
    return std::span<uint8_t>(desc_).subspan(desc_have_, end - desc_have_);
}

Status StreamDecoder::set_failure(Error e) {
    if (!failure_) {
        failure_ = std::move(e);
    }
    need_ = StreamNeed::kFailed;
    return *failure_;
}

Status StreamDecoder::fail(Error e) { return set_failure(std::move(e)); }

Result<StreamEvent> StreamDecoder::commit(uint64_t n) {
    if (failure_) {
        return *failure_;
    }
    if (need_ == StreamNeed::kEnded) {
        return Error(ErrorCode::kInvalidArgument, "stream: commit after the end of input");
    }
    if (n > need_size()) {
        return Error(ErrorCode::kInvalidArgument,
                     "stream: commit of " + dec(n) + " bytes where at most " + dec(need_size()) + " are expected");
    }
    if (n == 0) {
        return StreamEvent::kNone;
    }
    switch (need_) {
    case StreamNeed::kPrefix:
        if (prefix_have_ == 0) {
            desc_offset_ = offset_;
        }
        prefix_have_ += static_cast<uint32_t>(n);
        offset_ += n;
        if (prefix_have_ < kDescriptorPeekSize) {
            return StreamEvent::kNone;
        }
        HURRAY_RETURN_IF_ERROR(on_prefix());
        if (need_ == StreamNeed::kDescriptor) {
            return StreamEvent::kNone;
        }
        return StreamEvent::kDescriptor;
    case StreamNeed::kDescriptor: {
        if (n > desc_.size() - desc_have_) {
            return Error(ErrorCode::kInvalidArgument, "stream: commit of more descriptor bytes than descriptor_space()");
        }
        desc_have_ += static_cast<uint32_t>(n);
        offset_ += n;
        if (desc_have_ < desc_length_) {
            return StreamEvent::kNone;
        }
        HURRAY_RETURN_IF_ERROR(on_descriptor());
        return StreamEvent::kDescriptor;
    }
    case StreamNeed::kData:
        buffer_pos_ += n;
        data_remaining_ -= n;
        offset_ += n;
        if (buffer_pos_ == tensor_.descriptor.buffers[buffer_].byte_size) {
            ++buffer_;
            buffer_pos_ = 0;
            enter_data();
        }
        return StreamEvent::kData;
    case StreamNeed::kFailed:
    case StreamNeed::kEnded:
        break;
    }
    return StreamEvent::kNone;
}

Status StreamDecoder::on_prefix() {
    const std::string label = tensor_label(count_);
    if (desc_offset_ == 0) {
        if (auto e = not_hurray(std::span<const uint8_t>(desc_).first(kDescriptorPeekSize))) {
            return set_failure(std::move(*e));
        }
    }
    auto len = peek_length(std::span<const uint8_t>(desc_).first(kDescriptorPeekSize));
    if (!len) {
        return set_failure(len.error().with_context({.prefix = label + " descriptor", .base = desc_offset_}));
    }
    if (*len > options_.max_descriptor_length) {
        return set_failure(Error(ErrorCode::kInvalidDescriptorLength,
                                 label + ": descriptor_length " + dec(*len) + " exceeds max_descriptor_length " +
                                     dec(options_.max_descriptor_length),
                                 desc_offset_ + 6));
    }
    desc_length_ = *len;
    desc_have_ = kDescriptorPeekSize;
    prefix_have_ = 0;
    if (desc_length_ > kDescriptorPeekSize) {
        need_ = StreamNeed::kDescriptor;
        return Status::success();
    }
    return on_descriptor();
}

Status StreamDecoder::on_descriptor() {
    const std::string label = tensor_label(count_);
    auto d = decode(std::span<const uint8_t>(desc_).first(desc_length_), options_.descriptor);
    if (!d) {
        Error e = d.error().with_context({.prefix = label + " descriptor", .base = desc_offset_});
        if (e.code() == ErrorCode::kTruncated) {
            // All descriptor_length bytes are here: fields running past them
            // mean the length is wrong, not that the stream was cut.
            e = Error(ErrorCode::kInvalidDescriptorLength,
                      e.message() + " (descriptor_length " + dec(desc_length_) + " is too short for its fields)",
                      e.offset());
        }
        return set_failure(std::move(e));
    }
    if (auto s = check_buffers(*d, options_.max_buffer_size, options_.require_producer_synced, label, desc_offset_);
        !s) {
        return set_failure(s.error());
    }
    if (auto s = add_to_assembler(assembler_, *d, options_.max_composite_depth, label, desc_offset_); !s) {
        return set_failure(s.error());
    }
    tensor_.index = count_;
    tensor_.descriptor_offset = desc_offset_;
    tensor_.descriptor = std::move(d).value();
    // Into the capacity the previous tensor's copy left: no allocation per tensor.
    tensor_.descriptor_bytes.assign(desc_.begin(), desc_.begin() + static_cast<std::ptrdiff_t>(desc_length_));
    tensor_.composite_depth = assembler_.depth();
    has_tensor_ = true;
    ++count_;
    // Keep a small descriptor buffer between tensors; drop a large one.
    if (desc_.size() > kFirstDescriptorChunk) {
        desc_.resize(kFirstDescriptorChunk);
        desc_.shrink_to_fit();
    }
    desc_length_ = 0;
    desc_have_ = 0;
    uint64_t total = 0;
    for (const BufferHandle& h : tensor_.descriptor.buffers) {
        const auto sum = add_u64(total, h.byte_size);
        if (!sum) {
            return set_failure(Error(ErrorCode::kSizeOverflow, label + ": total data size overflows 64 bits",
                                     desc_offset_));
        }
        total = *sum;
    }
    data_remaining_ = total;
    buffer_ = 0;
    buffer_pos_ = 0;
    enter_data();
    return Status::success();
}

void StreamDecoder::enter_data() {
    const auto& bufs = tensor_.descriptor.buffers;
    while (buffer_ < bufs.size() && bufs[buffer_].byte_size == 0) {
        ++buffer_;
    }
    need_ = buffer_ < bufs.size() ? StreamNeed::kData : StreamNeed::kPrefix;
}

Status StreamDecoder::end_of_input() {
    if (failure_) {
        return *failure_;
    }
    switch (need_) {
    case StreamNeed::kEnded:
        return Status::success();
    case StreamNeed::kPrefix:
        if (prefix_have_ == 0) {
            if (auto s = assembler_.finish(); !s) {
                return set_failure(s.error().with_context({.prefix = "stream ends inside a composite"}));
            }
            need_ = StreamNeed::kEnded;
            return Status::success();
        }
        if (desc_offset_ == 0) {
            if (auto e = not_hurray(std::span<const uint8_t>(desc_).first(prefix_have_))) {
                return set_failure(std::move(*e));
            }
        }
        return set_failure(Error(ErrorCode::kTruncated,
                                 tensor_label(count_) + ": stream ends inside the descriptor prefix (" +
                                     dec(prefix_have_) + " of " + dec(kDescriptorPeekSize) +
                                     " bytes, descriptor at byte " + dec(desc_offset_) + ")",
                                 offset_));
    case StreamNeed::kDescriptor:
        return set_failure(Error(ErrorCode::kTruncated,
                                 tensor_label(count_) + ": stream ends inside the descriptor (" + dec(desc_have_) +
                                     " of " + dec(desc_length_) + " bytes, descriptor at byte " +
                                     dec(desc_offset_) + ")",
                                 offset_));
    case StreamNeed::kData:
        return set_failure(Error(ErrorCode::kTruncated,
                                 tensor_label(tensor_.index) + ": stream ends inside buffer " + dec(buffer_) + " (" +
                                     dec(buffer_pos_) + " of " +
                                     dec(tensor_.descriptor.buffers[buffer_].byte_size) + " bytes)",
                                 offset_));
    case StreamNeed::kFailed:
        break;
    }
    return Status::success();
}

// ---------------------------------------------------------------------------
// Steps shared by the blocking and the asynchronous readers and writers
// (hurray/io/stream_steps.hpp): only the public state of the decoder and the
// encoder, so that the rules stay in one place while the API stays small.

namespace stream_steps {

Result<bool> wants_descriptor(const StreamDecoder& d) {
    switch (d.need()) {
    case StreamNeed::kEnded:
        return false;
    case StreamNeed::kFailed:
        return *d.failure();
    case StreamNeed::kData:
        // Only after a descriptor was decoded, which the reader returns.
        return Error(ErrorCode::kInvalidArgument, "stream: next() inside a tensor's data");
    case StreamNeed::kPrefix:
    case StreamNeed::kDescriptor:
        break;
    }
    return true;
}

Status input_ended_early(StreamDecoder& d) {
    // Inside a tensor end_of_input builds the error; the fallback only
    // covers a reader that asked for bytes outside one.
    HURRAY_RETURN_IF_ERROR(d.end_of_input());
    return Error(ErrorCode::kTruncated, "stream: input ended early", d.offset());
}

size_t chunk_want(const StreamDecoder& d) noexcept {
    if (d.need() != StreamNeed::kData) {
        return 0;
    }
    const size_t size = std::max<size_t>(d.options().chunk_size, 1);
    return static_cast<size_t>(std::min<uint64_t>(d.need_size(), size));
}

std::span<uint8_t> chunk_space(const StreamDecoder& d, std::vector<uint8_t>& chunk) {
    const size_t want = chunk_want(d);
    if (chunk.size() < want) {
        // Grows to at most chunk_size, then stays.
        const size_t size = std::max<size_t>(d.options().chunk_size, 1);
        chunk.resize(std::min(size, std::max(want, chunk.size() * 2)));
    }
    return std::span<uint8_t>(chunk).first(want);
}

Result<size_t> data_want(const StreamDecoder& d, size_t out_size) {
    if (d.failure()) {
        return *d.failure();
    }
    if (out_size == 0) {
        return Error(ErrorCode::kInvalidArgument, "stream: read_data into an empty span");
    }
    if (d.need() != StreamNeed::kData) {
        return size_t{0};
    }
    return static_cast<size_t>(std::min<uint64_t>(d.need_size(), out_size));
}

Status check_read_into(const StreamDecoder& d, size_t size) {
    if (d.failure()) {
        return *d.failure();
    }
    const uint64_t rest = d.need() == StreamNeed::kData ? d.need_size() : 0;
    if (size != rest) {
        return Error(ErrorCode::kSizeMismatch, "stream: read_into a span of " + dec(size) +
                                                   " bytes where the current buffer has " + dec(rest) + " left");
    }
    return Status::success();
}

Result<size_t> whole_tensor_size(const StreamDecoder& d, const StreamTensor* current, uint64_t total) {
    if (d.failure()) {
        return *d.failure();
    }
    if (current == nullptr) {
        return Error(ErrorCode::kInvalidArgument, "stream: read_tensor without a current tensor");
    }
    if (d.data_remaining() != total) {
        return Error(ErrorCode::kInvalidArgument, "stream: read_tensor after part of the tensor's data was read");
    }
    const uint64_t max = d.options().max_tensor_bytes;
    if (total > max) {
        return Error(ErrorCode::kInvalidArgument, tensor_label(current->index) + ": " + dec(total) +
                                                      " data bytes exceed max_tensor_bytes " + dec(max) +
                                                      "; read it in chunks");
    }
    return static_cast<size_t>(total);
}

Status check_given_buffers(const StreamEncoder& e, const TensorDescriptor& desc,
                           std::span<const std::span<const uint8_t>> buffers) {
    if (e.failure()) {
        return *e.failure();
    }
    const std::string label = tensor_label(e.tensor_count());
    if (buffers.size() != desc.buffers.size()) {
        return Error(ErrorCode::kSizeMismatch, label + ": " + dec(buffers.size()) +
                                                   " buffers given, the descriptor declares " +
                                                   dec(desc.buffers.size()));
    }
    for (size_t b = 0; b < buffers.size(); ++b) {
        if (buffers[b].size() != desc.buffers[b].byte_size) {
            return Error(ErrorCode::kSizeMismatch, label + ": buffer " + dec(b) + " has " + dec(buffers[b].size()) +
                                                       " bytes, the descriptor declares " +
                                                       dec(desc.buffers[b].byte_size));
        }
    }
    return Status::success();
}

}  // namespace stream_steps

// ---------------------------------------------------------------------------
// StreamEncoder

StreamEncoder::StreamEncoder(const StreamWriteOptions& options) : options_(options), assembler_(options.composite) {}

Status StreamEncoder::fail(Error e) {
    if (!failure_) {
        failure_ = std::move(e);
    }
    return *failure_;
}

Status StreamEncoder::check_tensor(const TensorDescriptor& desc, uint64_t index) const {
    return check_buffers(desc, UINT64_MAX, options_.require_producer_synced, tensor_label(index), Error::kNoOffset);
}

Result<std::vector<uint8_t>> StreamEncoder::begin_tensor(const TensorDescriptor& desc) {
    if (failure_) {
        return *failure_;
    }
    const std::string label = tensor_label(count_);
    if (in_tensor_) {
        return Error(ErrorCode::kInvalidArgument,
                     label + ": begun while the previous tensor still expects " + dec(remaining_) + " data bytes");
    }
    auto bytes = encode(desc);
    if (!bytes) {
        return bytes.error().with_context({.prefix = label + " descriptor"});
    }
    HURRAY_RETURN_IF_ERROR(check_tensor(desc, count_));
    uint64_t total = 0;
    for (const BufferHandle& h : desc.buffers) {
        const auto sum = add_u64(total, h.byte_size);
        if (!sum) {
            return Error(ErrorCode::kSizeOverflow, label + ": total data size overflows 64 bits");
        }
        total = *sum;
    }
    // Assembler errors stick: validate on a copy, keep it on success.
    (void)assembler_.take_completed();
    CompositeAssembler next = assembler_;
    HURRAY_RETURN_IF_ERROR(add_to_assembler(next, desc, options_.max_composite_depth, label, Error::kNoOffset));
    assembler_ = std::move(next);

    sizes_.clear();
    for (const BufferHandle& h : desc.buffers) {
        sizes_.push_back(h.byte_size);
    }
    buffer_ = 0;
    buffer_pos_ = 0;
    remaining_ = total;
    in_tensor_ = true;
    offset_ += bytes->size();
    ++count_;
    return bytes;
}

Result<uint32_t> StreamEncoder::data(uint64_t n) {
    if (failure_) {
        return *failure_;
    }
    if (!in_tensor_) {
        return Error(ErrorCode::kInvalidArgument, "stream: data written outside a tensor");
    }
    if (n > remaining_) {
        return Error(ErrorCode::kSizeMismatch, tensor_label(count_ - 1) + ": " + dec(n) +
                                                   " data bytes written where " + dec(remaining_) +
                                                   " remain of what its buffers declare");
    }
    while (buffer_ < sizes_.size() && buffer_pos_ == sizes_[buffer_]) {
        ++buffer_;
        buffer_pos_ = 0;
    }
    const auto first = static_cast<uint32_t>(buffer_);
    uint64_t left = n;
    while (left > 0) {
        const uint64_t take = std::min(left, sizes_[buffer_] - buffer_pos_);
        buffer_pos_ += take;
        left -= take;
        if (buffer_pos_ == sizes_[buffer_] && left > 0) {
            ++buffer_;
            buffer_pos_ = 0;
        }
    }
    remaining_ -= n;
    offset_ += n;
    return first;
}

Status StreamEncoder::end_tensor() {
    if (failure_) {
        return *failure_;
    }
    if (!in_tensor_) {
        return Error(ErrorCode::kInvalidArgument, "stream: end_tensor without a tensor");
    }
    if (remaining_ != 0) {
        return fail(Error(ErrorCode::kSizeMismatch, tensor_label(count_ - 1) + ": ended with " + dec(remaining_) +
                                                        " of its declared data bytes missing"));
    }
    in_tensor_ = false;
    return Status::success();
}

Status StreamEncoder::check_composite(const TensorDescriptor& head, std::span<const StreamTensorInput> members) const {
    if (failure_) {
        return *failure_;
    }
    if (in_tensor_) {
        return Error(ErrorCode::kInvalidArgument, "stream: composite begun inside a tensor");
    }
    if (head.layout_tag() != static_cast<uint8_t>(LayoutTag::kComposite)) {
        return Error(ErrorCode::kInvalidComposite, tensor_label(count_) + ": composite head is not a composite layout");
    }
    CompositeAssembler scratch = assembler_;
    const uint32_t outer = scratch.depth();
    uint64_t index = count_;
    const auto check_one = [&](const TensorDescriptor& d, std::span<const std::span<const uint8_t>> buffers,
                               bool is_head) -> Status {
        const std::string label = tensor_label(index);
        if (!is_head && scratch.depth() <= outer) {
            return Error(ErrorCode::kInvalidComposite,
                         label + ": more members given than the composite head declares");
        }
        if (auto e = encoded_size(d); !e) {
            return e.error().with_context({.prefix = label + " descriptor"});
        }
        DecodeOptions writer_rules;
        writer_rules.accept_private_extensions = true;
        if (auto s = check_descriptor(d, writer_rules); !s) {
            return s.error().with_context({.prefix = label + " descriptor"});
        }
        HURRAY_RETURN_IF_ERROR(check_tensor(d, index));
        if (buffers.size() != d.buffers.size()) {
            return Error(ErrorCode::kSizeMismatch, label + ": " + dec(buffers.size()) + " buffers given, descriptor declares " +
                                                       dec(d.buffers.size()));
        }
        for (size_t b = 0; b < buffers.size(); ++b) {
            if (buffers[b].size() != d.buffers[b].byte_size) {
                return Error(ErrorCode::kSizeMismatch, label + ": buffer " + dec(b) + " has " +
                                                           dec(buffers[b].size()) + " bytes, descriptor declares " +
                                                           dec(d.buffers[b].byte_size));
            }
        }
        HURRAY_RETURN_IF_ERROR(add_to_assembler(scratch, d, options_.max_composite_depth, label, Error::kNoOffset));
        ++index;
        return Status::success();
    };
    HURRAY_RETURN_IF_ERROR(check_one(head, {}, true));
    for (const StreamTensorInput& m : members) {
        if (m.descriptor == nullptr) {
            return Error(ErrorCode::kInvalidArgument, tensor_label(index) + ": member without a descriptor");
        }
        HURRAY_RETURN_IF_ERROR(check_one(*m.descriptor, m.buffers, false));
    }
    if (scratch.depth() > outer) {
        return Error(ErrorCode::kInvalidComposite,
                     tensor_label(count_) + ": composite head declares more members than the " +
                         dec(members.size()) + " given");
    }
    return Status::success();
}

Status StreamEncoder::finish() const {
    if (failure_) {
        return *failure_;
    }
    if (in_tensor_) {
        return Error(ErrorCode::kSizeMismatch, tensor_label(count_ - 1) + ": stream finished with " +
                                                   dec(remaining_) + " of its declared data bytes missing");
    }
    if (auto s = assembler_.finish(); !s) {
        return s.error().with_context({.prefix = "stream finished inside a composite"});
    }
    return Status::success();
}

}  // namespace hurray
