// SPDX-License-Identifier: Apache-2.0
// FileWriter: one forward pass over a ByteSink (file-format.md § Writer
// Protocol). Small pieces (header, descriptors, padding, KV, index, trailer)
// are gathered in a 64 KiB buffer; data spans of 64 KiB or more go straight
// to the sink once the buffer is flushed. Padding comes from a static block
// of zeros, so no allocation ever depends on an alignment or a data size.
#include "hurray/io/file_writer.hpp"

#include "hurray/core/checked_math.hpp"
#include "hurray/core/text.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/io/crc32c.hpp"
#include "hurray/io/descriptor_table.hpp"
#include "hurray/io/index_codec.hpp"
#include "io/fd_transfer.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <optional>
#include <unordered_set>
#include <utility>

namespace hurray {

namespace {


/// Size of the coalescing buffer, and the size from which a data span
/// bypasses it.
constexpr size_t kCoalesceSize = size_t{64} * 1024;

/// Zeros for padding: any padding is written in pieces of at most this size.
constexpr std::array<uint8_t, kCoalesceSize> kZeros{};

bool name_less(const IndexEntry& a, const IndexEntry& b) {
    return std::lexicographical_compare(
        a.name.begin(), a.name.end(), b.name.begin(), b.name.end(),
        [](char x, char y) { return static_cast<unsigned char>(x) < static_cast<unsigned char>(y); });
}

Error overflow(std::string_view what) {
    return {ErrorCode::kSizeOverflow, std::string(what) + ": file offset overflows 64 bits"};
}

/// Where a tensor's parts go, computed (overflow-checked) before any byte of
/// it is written.
struct TensorPlan {
    std::vector<uint8_t> descriptor;   // encoded descriptor
    std::vector<uint64_t> sizes;       // byte_size of each buffer
    uint64_t descriptor_offset = 0;
    uint64_t data_offset = 0;
    uint64_t data_length = 0;
    uint64_t total = 0;                // sum of the buffer sizes
    uint64_t end = 0;                  // offset after the tensor's trailing padding
};

Status check_options(const FileWriterOptions& o) {
    const uint32_t a = o.data_buffer_alignment;
    if (!is_pow2(a) || a < kMinDataBufferAlignment || a > kMaxDataBufferAlignment) {
        return Error(ErrorCode::kInvalidArgument, "data_buffer_alignment: " + dec(a) +
                                                      " must be a power of two from 4096 to 2097152");
    }
    if (o.descriptor_table_version != kDescriptorTableVersion1 &&
        o.descriptor_table_version != kDescriptorTableVersion2) {
        return Error(ErrorCode::kInvalidArgument, "descriptor_table_version: " + dec(o.descriptor_table_version) +
                                                      " is not 1 or 2");
    }
    return Status::success();
}

}  // namespace

namespace detail {

/// Everything a FileWriter keeps besides its public-facing fields.
struct FileWriterState {
    ByteSink* sink = nullptr;
    std::unique_ptr<AtomicFileSink> atomic;  // set by create_file; sink points to it
    FileWriterOptions options;
    CompositeAssembler assembler;
    // Every name written so far; IndexEntry::name of each entry views its
    // element (an unordered_set's elements stay where they are on rehash).
    std::unordered_set<std::string> names;
    std::vector<uint8_t> buffer;             // coalesced bytes not yet given to the sink
    std::vector<uint8_t> transfer;           // write_data_from's copy buffer
    // The descriptor table (FileWriterOptions::descriptor_table): every descriptor
    // written, in write order, and where each entry's copy starts in it.
    std::vector<uint8_t> table;
    std::vector<uint64_t> table_at;
    std::optional<Error> failure;            // sticky: the output is no longer valid
    bool finished = false;

    // The tensor being streamed by begin_tensor / write_data / end_tensor.
    bool open = false;
    IndexEntry pending;
    std::vector<uint64_t> sizes;
    size_t current = 0;          // buffer being written
    uint64_t in_current = 0;     // bytes of it written
    uint64_t remaining = 0;      // bytes of the tensor still expected

    explicit FileWriterState(const FileWriterOptions& o) : options(o), assembler(o.composite) {
        buffer.reserve(kCoalesceSize);
    }
};

}  // namespace detail

// ---------------------------------------------------------------------------
// Output primitives (members of an internal helper to reach private state)

namespace {

/// The writer's output path: offset accounting, coalescing, sticky failure.
class Out {
public:
    Out(uint64_t& offset, detail::FileWriterState& s) : offset_(offset), s_(s) {}

    Status flush_buffer() {
        if (s_.buffer.empty()) {
            return Status::success();
        }
        Status st = s_.sink->write(s_.buffer);
        s_.buffer.clear();
        return fail_on(std::move(st));
    }

    /// Appends `bytes` at the current offset.
    Status put(std::span<const uint8_t> bytes) {
        auto next = add_u64(offset_, bytes.size());
        if (!next) {
            return fail_on(overflow("write"));
        }
        if (bytes.size() >= kCoalesceSize) {
            HURRAY_RETURN_IF_ERROR(flush_buffer());
            HURRAY_RETURN_IF_ERROR(fail_on(s_.sink->write(bytes)));
        } else {
            if (s_.buffer.size() + bytes.size() > kCoalesceSize) {
                HURRAY_RETURN_IF_ERROR(flush_buffer());
            }
            s_.buffer.insert(s_.buffer.end(), bytes.begin(), bytes.end());
        }
        offset_ = *next;
        return Status::success();
    }

    Status zeros(uint64_t n) {
        while (n > 0) {
            const size_t k = n < kZeros.size() ? static_cast<size_t>(n) : kZeros.size() - 1;
            // kZeros.size() - 1 keeps padding pieces in the coalescing buffer.
            HURRAY_RETURN_IF_ERROR(put(std::span<const uint8_t>(kZeros.data(), k)));
            n -= k;
        }
        return Status::success();
    }

    /// Pads with zeros up to `target` (>= the current offset).
    Status pad_to(uint64_t target) { return zeros(target - offset_); }

    /// Records a sink failure as the writer's sticky failure.
    Status fail_on(Status st) {
        if (!st.ok() && !s_.failure) {
            s_.failure = st.error();
        }
        return st;
    }

private:
    uint64_t& offset_;
    detail::FileWriterState& s_;
};

}  // namespace

// ---------------------------------------------------------------------------
// Construction

Result<FileWriter> FileWriter::create(ByteSink& sink, const FileWriterOptions& options) {
    HURRAY_RETURN_IF_ERROR(check_options(options));
    FileWriter w;
    w.state_ = std::make_unique<detail::FileWriterState>(options);
    w.state_->sink = &sink;
    w.header_.flags = file_flags::kHasIndexCrc32c | file_flags::kHasKvMetadata |
                      (options.sorted_index ? file_flags::kSortedIndex : 0U);
    w.header_.data_buffer_alignment = options.data_buffer_alignment;
    w.header_.first_descriptor_offset = kFileHeaderSize;
    w.header_.tensor_count_hint = options.tensor_count_hint;
    // The header is final now: HAS_KV_METADATA is always set and a KV section always
    // written (SPEC-NOTES 11), so nothing added later changes it. It waits in the
    // coalescing buffer and reaches the sink with the first flush.
    std::array<uint8_t, kFileHeaderSize> h{};
    encode_file_header(w.header_, h);
    w.state_->buffer.insert(w.state_->buffer.end(), h.begin(), h.end());
    w.offset_ = kFileHeaderSize;
    return w;
}

Result<FileWriter> FileWriter::create_file(const std::filesystem::path& path, const FileWriterOptions& options,
                                           Durability durability) {
    HURRAY_RETURN_IF_ERROR(check_options(options));
    HURRAY_ASSIGN_OR_RETURN(auto atomic, AtomicFileSink::create(path, durability));
    HURRAY_ASSIGN_OR_RETURN(FileWriter w, create(*atomic, options));
    w.state_->atomic = std::move(atomic);
    return w;
}

FileWriter::FileWriter(FileWriter&&) noexcept = default;
FileWriter& FileWriter::operator=(FileWriter&&) noexcept = default;
FileWriter::~FileWriter() = default;  // an uncommitted AtomicFileSink removes its temporary file

// ---------------------------------------------------------------------------
// Internal steps

namespace {

/// Everything that can reject a tensor before a byte of it is written:
/// usable writer, name, descriptor (check_descriptor via encode), composite
/// rules (on a copy of the assembler), the layout's offsets.
struct Planner {
    const detail::FileWriterState& s;

    Result<TensorPlan> plan(std::string_view name, const TensorDescriptor& desc,
                            const std::unordered_set<std::string>* extra_names, uint64_t at) const {
        HURRAY_RETURN_IF_ERROR(check_name(name, "tensor name"));
        const std::string key(name);
        if (s.names.contains(key) || (extra_names != nullptr && extra_names->contains(key))) {
            return Error(ErrorCode::kDuplicateName, "tensor name \"" + std::string(name) + "\": already in the file");
        }
        TensorPlan p;
        HURRAY_ASSIGN_OR_RETURN(p.descriptor, encode(desc));
        const uint64_t align = s.options.data_buffer_alignment;
        p.descriptor_offset = at;
        auto pos = add_u64(at, p.descriptor.size());
        if (!pos) {
            return overflow("tensor \"" + std::string(name) + "\"");
        }
        uint64_t cur = *pos;
        p.sizes.reserve(desc.buffers.size());
        if (desc.buffers.empty()) {
            p.data_offset = cur;  // no buffer: no alignment padding after the descriptor
            p.data_length = 0;
        } else {
            HURRAY_ASSIGN_OR_RETURN(cur, align_up(cur, align));
            p.data_offset = cur;
            uint64_t last_end = cur;
            for (size_t i = 0; i < desc.buffers.size(); ++i) {
                const uint64_t size = desc.buffers[i].byte_size;
                p.sizes.push_back(size);
                if (i > 0) {
                    HURRAY_ASSIGN_OR_RETURN(cur, align_up(cur, align));
                }
                auto end = add_u64(cur, size);
                auto tot = add_u64(p.total, size);
                if (!end || !tot) {
                    return overflow("tensor \"" + std::string(name) + "\" buffer " + dec(i));
                }
                cur = *end;
                p.total = *tot;
                last_end = cur;
            }
            p.data_length = last_end - p.data_offset;
            HURRAY_ASSIGN_OR_RETURN(cur, align_up(cur, align));  // padding after the last buffer
        }
        HURRAY_ASSIGN_OR_RETURN(p.end, align_up(cur, kDescriptorAlignment));
        return p;
    }
};

Status usable(const detail::FileWriterState& s) {
    if (s.failure) {
        return *s.failure;
    }
    if (s.finished) {
        return Error(ErrorCode::kInvalidArgument, "FileWriter: the file is already finished");
    }
    return Status::success();
}

Status check_buffers(std::string_view name, const TensorDescriptor& desc,
                     std::span<const std::span<const uint8_t>> buffers) {
    if (buffers.size() != desc.buffers.size()) {
        return Error(ErrorCode::kSizeMismatch, "tensor \"" + std::string(name) + "\": " +
                                                   dec(buffers.size()) + " buffers given, the descriptor declares " +
                                                   dec(desc.buffers.size()));
    }
    for (size_t i = 0; i < buffers.size(); ++i) {
        if (buffers[i].size() != desc.buffers[i].byte_size) {
            return Error(ErrorCode::kSizeMismatch,
                         "tensor \"" + std::string(name) + "\" buffer " + dec(i) + ": " + dec(buffers[i].size()) +
                             " bytes given, byte_size declares " + dec(desc.buffers[i].byte_size));
        }
    }
    return Status::success();
}

/// Writes the planned tensor's descriptor and the padding up to its first
/// buffer, and opens it for data.
Status start_tensor(detail::FileWriterState& s, uint64_t& offset, std::string_view name, TensorPlan&& p) {
    Out out(offset, s);
    HURRAY_RETURN_IF_ERROR(out.put(p.descriptor));
    HURRAY_RETURN_IF_ERROR(out.pad_to(p.data_offset));
    if (s.options.descriptor_table) {
        s.table_at.push_back(s.table.size());
        s.table.insert(s.table.end(), p.descriptor.begin(), p.descriptor.end());
    }
    // The set's nodes never move: the index entry views the name kept there.
    const auto kept = s.names.emplace(name).first;
    s.open = true;
    s.pending = IndexEntry{.name = *kept,
                           .descriptor_offset = p.descriptor_offset,
                           .descriptor_length = static_cast<uint32_t>(p.descriptor.size()),
                           .data_offset = p.data_offset,
                           .data_length = p.data_length,
                           .flags = 0};
    s.sizes = std::move(p.sizes);
    s.current = 0;
    s.in_current = 0;
    s.remaining = p.total;
    return Status::success();
}

/// Moves past completed buffers, padding to the alignment before each next one.
Status advance(detail::FileWriterState& s, Out& out, uint64_t offset) {
    while (s.current + 1 < s.sizes.size() && s.in_current == s.sizes[s.current]) {
        ++s.current;
        s.in_current = 0;
        HURRAY_ASSIGN_OR_RETURN(const uint64_t next, align_up(offset, s.options.data_buffer_alignment));
        HURRAY_RETURN_IF_ERROR(out.pad_to(next));
        offset = next;
    }
    return Status::success();
}

}  // namespace

// ---------------------------------------------------------------------------
// Tensors

Status FileWriter::begin_tensor(std::string_view name, const TensorDescriptor& desc) {
    HURRAY_RETURN_IF_ERROR(usable(*state_));
    detail::FileWriterState& s = *state_;
    if (s.open) {
        return Error(ErrorCode::kInvalidArgument, "begin_tensor \"" + std::string(name) + "\": tensor \"" +
                                                      std::string(s.pending.name) + "\" is still open (call end_tensor)");
    }
    HURRAY_ASSIGN_OR_RETURN(TensorPlan p, (Planner{s}.plan(name, desc, nullptr, offset_)));
    // CompositeAssembler errors stick: validate on a copy, keep it on success.
    CompositeAssembler next = s.assembler;
    HURRAY_RETURN_IF_ERROR(next.add(desc));
    s.assembler = std::move(next);
    HURRAY_RETURN_IF_ERROR(start_tensor(s, offset_, name, std::move(p)));
    Out out(offset_, s);
    return advance(s, out, offset_);
}

Status FileWriter::write_data(std::span<const uint8_t> piece) {
    HURRAY_RETURN_IF_ERROR(usable(*state_));
    detail::FileWriterState& s = *state_;
    if (!s.open) {
        return Error(ErrorCode::kInvalidArgument, "write_data: no tensor is open (call begin_tensor)");
    }
    if (piece.size() > s.remaining) {
        // Detected before writing: nothing of the piece is written, the writer stays usable.
        return Error(ErrorCode::kSizeMismatch, "tensor \"" + std::string(s.pending.name) + "\": a piece of " + dec(piece.size()) +
                                                   " bytes exceeds the " + dec(s.remaining) +
                                                   " bytes its buffers still expect");
    }
    Out out(offset_, s);
    while (!piece.empty()) {
        const uint64_t room = s.sizes[s.current] - s.in_current;
        const size_t k = room < piece.size() ? static_cast<size_t>(room) : piece.size();
        HURRAY_RETURN_IF_ERROR(out.put(piece.first(k)));
        s.in_current += k;
        s.remaining -= k;
        piece = piece.subspan(k);
        HURRAY_RETURN_IF_ERROR(advance(s, out, offset_));
    }
    return Status::success();
}

Result<uint64_t> FileWriter::write_data_from(ByteSource& source, uint64_t n) {
    HURRAY_RETURN_IF_ERROR(usable(*state_));
    detail::FileWriterState& s = *state_;
    if (!s.open) {
        return Error(ErrorCode::kInvalidArgument, "write_data_from: no tensor is open (call begin_tensor)");
    }
    if (n > s.remaining) {
        return Error(ErrorCode::kSizeMismatch, "tensor \"" + std::string(s.pending.name) + "\": " + dec(n) +
                                                   " bytes exceed the " + dec(s.remaining) +
                                                   " bytes its buffers still expect");
    }
    if (!add_u64(offset_, n)) {
        return Out(offset_, s).fail_on(overflow("write")).error();
    }
    Out out(offset_, s);
    HURRAY_RETURN_IF_ERROR(out.flush_buffer());
    // Read straight into one 1 MiB buffer and write it out: no staging in
    // the stream reader's chunks. (splice(2) from a pipe into the file was
    // tried and is slower on every machine measured, 0.44-0.85x this copy:
    // it holds the pipe's lock while the file system writes, so the
    // process feeding the pipe stalls; a copy lets both run at once.)
    constexpr size_t kTransferSize = size_t{1} << 20;
    if (s.transfer.empty()) {
        s.transfer.resize(kTransferSize);
    }
    uint64_t moved = 0;
    while (moved < n) {
        const uint64_t room = s.sizes[s.current] - s.in_current;
        const uint64_t want = room < n - moved ? room : n - moved;
        const size_t k = want < s.transfer.size() ? static_cast<size_t>(want) : s.transfer.size();
        auto r = source.read_some(std::span<uint8_t>(s.transfer.data(), k));
        if (!r) {
            return out.fail_on(r.error()).error();
        }
        if (*r > k) {
            return out.fail_on(Error(ErrorCode::kIoError, "write_data_from: read_some reported more bytes than asked"))
                .error();
        }
        const uint64_t got = *r;
        HURRAY_RETURN_IF_ERROR(out.put(std::span<const uint8_t>(s.transfer.data(), static_cast<size_t>(got))));
        HURRAY_RETURN_IF_ERROR(out.flush_buffer());
        s.in_current += got;
        s.remaining -= got;
        moved += got;
        if (got == 0) {
            break;  // the source ended
        }
        HURRAY_RETURN_IF_ERROR(advance(s, out, offset_));
    }
    return moved;
}

Status FileWriter::end_tensor() {
    HURRAY_RETURN_IF_ERROR(usable(*state_));
    detail::FileWriterState& s = *state_;
    if (!s.open) {
        return Error(ErrorCode::kInvalidArgument, "end_tensor: no tensor is open (call begin_tensor)");
    }
    Out out(offset_, s);
    if (s.remaining != 0) {
        // Bytes are missing from the middle of the file: it cannot become valid.
        return out.fail_on(Error(ErrorCode::kSizeMismatch,
                                 "tensor \"" + std::string(s.pending.name) + "\": " + dec(s.remaining) +
                                     " bytes of its buffers were never written"));
    }
    if (!s.sizes.empty()) {
        HURRAY_ASSIGN_OR_RETURN(const uint64_t after, align_up(offset_, s.options.data_buffer_alignment));
        HURRAY_RETURN_IF_ERROR(out.pad_to(after));
    }
    HURRAY_ASSIGN_OR_RETURN(const uint64_t next, align_up(offset_, kDescriptorAlignment));
    HURRAY_RETURN_IF_ERROR(out.pad_to(next));
    s.open = false;
    entries_.push_back(s.pending);
    s.pending = IndexEntry{};
    return Status::success();
}

Status FileWriter::add_tensor(std::string_view name, const TensorDescriptor& desc,
                              std::span<const std::span<const uint8_t>> buffers) {
    HURRAY_RETURN_IF_ERROR(usable(*state_));
    if (state_->open) {
        return Error(ErrorCode::kInvalidArgument, "add_tensor \"" + std::string(name) + "\": tensor \"" +
                                                      std::string(state_->pending.name) + "\" is still open (call end_tensor)");
    }
    HURRAY_RETURN_IF_ERROR(check_name(name, "tensor name"));
    HURRAY_RETURN_IF_ERROR(check_buffers(name, desc, buffers));
    HURRAY_RETURN_IF_ERROR(begin_tensor(name, desc));
    for (const auto& b : buffers) {
        HURRAY_RETURN_IF_ERROR(write_data(b));
    }
    return end_tensor();
}

Status FileWriter::add_composite(std::string_view head_name, const TensorDescriptor& head,
                                 std::span<const FileTensorInput> members) {
    HURRAY_RETURN_IF_ERROR(usable(*state_));
    detail::FileWriterState& s = *state_;
    if (s.open) {
        return Error(ErrorCode::kInvalidArgument, "add_composite \"" + std::string(head_name) + "\": tensor \"" +
                                                      std::string(s.pending.name) + "\" is still open (call end_tensor)");
    }
    if (!std::holds_alternative<CompositeLayout>(head.layout)) {
        return Error(ErrorCode::kInvalidArgument,
                     "add_composite \"" + std::string(head_name) + "\": the head's layout is not composite");
    }
    // Validate everything on copies: names, buffers, descriptors, composite rules.
    std::unordered_set<std::string> seen;
    CompositeAssembler next = s.assembler;
    const uint32_t depth0 = next.depth();
    const Planner planner{s};
    HURRAY_RETURN_IF_ERROR(planner.plan(head_name, head, &seen, offset_));
    seen.emplace(head_name);
    HURRAY_RETURN_IF_ERROR(next.add(head));
    for (size_t i = 0; i < members.size(); ++i) {
        const FileTensorInput& m = members[i];
        if (m.descriptor == nullptr) {
            return Error(ErrorCode::kInvalidArgument, "add_composite \"" + std::string(head_name) + "\": member " +
                                                          dec(i) + " has no descriptor");
        }
        if (next.depth() <= depth0) {
            return Error(ErrorCode::kInvalidArgument, "add_composite \"" + std::string(head_name) +
                                                          "\": the composite closes after " + dec(i) +
                                                          " members, " + dec(members.size()) + " given");
        }
        HURRAY_RETURN_IF_ERROR(planner.plan(m.name, *m.descriptor, &seen, offset_));
        HURRAY_RETURN_IF_ERROR(check_buffers(m.name, *m.descriptor, m.buffers));
        seen.emplace(m.name);
        HURRAY_RETURN_IF_ERROR(next.add(*m.descriptor));
    }
    if (next.depth() > depth0) {
        return Error(ErrorCode::kInvalidComposite, "add_composite \"" + std::string(head_name) + "\": " +
                                                       dec(members.size()) +
                                                       " members given, the composite needs more");
    }
    // Write: the checks above cannot fail again, except on the sink.
    const std::span<const std::span<const uint8_t>> none;
    HURRAY_RETURN_IF_ERROR(add_tensor(head_name, head, none));
    for (const FileTensorInput& m : members) {
        HURRAY_RETURN_IF_ERROR(add_tensor(m.name, *m.descriptor, m.buffers));
    }
    return Status::success();
}

// ---------------------------------------------------------------------------
// finish

Status FileWriter::finish() {
    HURRAY_RETURN_IF_ERROR(usable(*state_));
    detail::FileWriterState& s = *state_;
    if (s.open) {
        return Error(ErrorCode::kInvalidArgument,
                     "finish: tensor \"" + std::string(s.pending.name) + "\" is still open (call end_tensor)");
    }
    HURRAY_RETURN_IF_ERROR(s.assembler.finish());
    if (header_.tensor_count_hint != kUnknownTensorCount && header_.tensor_count_hint != entries_.size()) {
        return Error(ErrorCode::kInvalidArgument, "finish: tensor_count_hint is " + dec(header_.tensor_count_hint) +
                                                      " but " + dec(entries_.size()) + " tensors were written");
    }
    // Everything that can fail for a reason other than the sink comes first.
    if (kv_.contains(kDescriptorTableKey)) {
        return Error(ErrorCode::kInvalidArgument,
                     "finish: KV key \"" + std::string(kDescriptorTableKey) +
                         "\" is reserved for the descriptor table the writer makes (FileWriterOptions::descriptor_table)");
    }
    // The index order: write order, or sorted by name.
    std::vector<size_t> order(entries_.size());
    std::iota(order.begin(), order.end(), size_t{0});
    if (s.options.sorted_index) {
        std::sort(order.begin(), order.end(),
                  [this](size_t a, size_t b) { return name_less(entries_[a], entries_[b]); });
    }
    std::vector<IndexEntry> sorted;
    std::span<const IndexEntry> index_entries = entries_;
    if (s.options.sorted_index) {
        sorted.reserve(entries_.size());
        for (const size_t i : order) {
            sorted.push_back(entries_[i]);
        }
        index_entries = sorted;
    }
    // The header announced a KV section: write it, empty (count 0) or not; with the
    // descriptor table as its last entry.
    const KvMetadata* kv_out = &kv_;
    KvMetadata with_table;
    if (s.options.descriptor_table && !entries_.empty()) {
        std::vector<std::span<const uint8_t>> in_index_order;
        in_index_order.reserve(entries_.size());
        for (const size_t i : order) {
            in_index_order.push_back(std::span<const uint8_t>(s.table).subspan(static_cast<size_t>(s.table_at[i]),
                                                                               entries_[i].descriptor_length));
        }
        // Version 2 numbers classes in 32 bits: 2^32 - 1 entries or more take version 1.
        const uint16_t version = entries_.size() < UINT32_MAX ? s.options.descriptor_table_version
                                                              : kDescriptorTableVersion1;
        HURRAY_ASSIGN_OR_RETURN(std::vector<uint8_t> value, encode_descriptor_table(in_index_order, version));
        with_table = kv_;
        HURRAY_RETURN_IF_ERROR(with_table.set(std::string(kDescriptorTableKey), KvValue::bytes(std::move(value))));
        kv_out = &with_table;
    }
    HURRAY_ASSIGN_OR_RETURN(const std::vector<uint8_t> kv_bytes,
                            encode_kv_section(*kv_out, s.options.allow_private_kv));
    HURRAY_ASSIGN_OR_RETURN(const std::vector<uint8_t> index_bytes, encode_index(index_entries));
    FileTrailer trailer;
    trailer.kv_offset = offset_;
    trailer.kv_length = static_cast<uint32_t>(kv_bytes.size());  // encode_kv_section bounds it
    auto kv_end = add_u64(offset_, kv_bytes.size());
    if (!kv_end) {
        return overflow("KV section");
    }
    HURRAY_ASSIGN_OR_RETURN(trailer.index_offset, align_up(*kv_end, kDescriptorAlignment));
    trailer.index_length = index_bytes.size();
    trailer.index_crc32c = crc32c(index_bytes);
    auto index_end = add_u64(trailer.index_offset, index_bytes.size());
    if (!index_end || !add_u64(*index_end, kFileTrailerSize)) {
        return overflow("index section");
    }

    // Write.
    Out out(offset_, s);
    HURRAY_RETURN_IF_ERROR(out.put(kv_bytes));
    HURRAY_RETURN_IF_ERROR(out.pad_to(trailer.index_offset));
    HURRAY_RETURN_IF_ERROR(out.put(index_bytes));
    std::array<uint8_t, kFileTrailerSize> t{};
    encode_file_trailer(trailer, t);
    HURRAY_RETURN_IF_ERROR(out.put(t));
    HURRAY_RETURN_IF_ERROR(out.flush_buffer());
    HURRAY_RETURN_IF_ERROR(out.fail_on(s.sink->flush()));
    if (s.atomic) {
        HURRAY_RETURN_IF_ERROR(out.fail_on(s.atomic->commit()));
    }
    s.finished = true;
    return Status::success();
}

}  // namespace hurray
