// SPDX-License-Identifier: Apache-2.0
// SequentialFileReader: file-format.md § Sequential Reader, with the two
// padding rules of SPEC-NOTES 12 and 13 told apart without seeking.
//
// The reader keeps one running offset (the absolute offset of the next byte
// it will consume) and a small look-ahead buffer of bytes already read from
// the source but not yet consumed. The look-ahead is needed at one place
// only: after a tensor, to tell which padding rule the writer used.
//
//   end = end of the tensor's last buffer (or of its descriptor, 0 buffers)
//   P   = end rounded up to 8          (reference after data; spec after a head)
//   A   = end rounded up to alignment  (spec after data; reference after a head)
//
// Padding is always zeros and a descriptor always starts with "HRRY", so:
// "HRRY" at P means the next descriptor is at P; zeros from P to A followed
// by "HRRY" at A mean it is at A; anything else is the start of the tail
// (KV, index, trailer). The tail cannot pass for a descriptor: "HRRY" as a
// KV section's u32 entry count would mean ~1.5 billion entries, more than a
// section of at most 4 GiB holds, and as an index's u64 count an index far
// beyond `max_tail_length`; and a tail cannot be all zeros up to A followed
// by "HRRY", since its trailer starts with a non-zero index_offset. Only
// zeros (or a partial "HRRY") up to the end of input is a truncation. Data
// bytes are never looked at: P and A both lie after the tensor's data. When
// the header gives `tensor_count_hint`, exactly that many tensors are read
// and what follows the last one is the tail; the first section must then
// start between P and A, with only zeros before it. The look-ahead holds at
// most `alignment + 4` bytes.
//
// The tail is read into memory (bounded by `max_tail_length`), the trailer is
// its last 40 bytes, and the index must agree with the tensors met.
#include "hurray/io/descriptor_table.hpp"
#include "hurray/io/sequential_file_reader.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <variant>

#include "hurray/core/checked_math.hpp"
#include "hurray/core/text.hpp"
#include "hurray/io/crc32c.hpp"
#include "hurray/io/index_codec.hpp"
#include "io/kv_section.hpp"

namespace hurray {

namespace {


/// Bytes read per step when padding is checked or the tail is gathered.
constexpr size_t kScratchSize = 4096;
/// First step when a descriptor or the tail is read into memory; each step
/// doubles, up to the largest.
constexpr size_t kFirstChunk = 4096;
constexpr size_t kMaxChunk = size_t{16} * 1024 * 1024;
/// Largest step of the look-ahead scan over alignment padding.
constexpr size_t kScanChunk = size_t{64} * 1024;

/// "tensor #k (descriptor at byte X)", used to open messages.
std::string tensor_label(uint64_t position, uint64_t descriptor_offset) {
    return "tensor #" + dec(position) + " (descriptor at byte " + dec(descriptor_offset) + ")";
}

/// Index of the first non-zero byte of `bytes`, or `bytes.size()`.
/// Compares whole blocks against zeros first (std::equal on bytes becomes
/// memcmp), since padding runs up to the data alignment (2 MiB at most).
size_t first_nonzero(std::span<const uint8_t> bytes) {
    static constexpr std::array<uint8_t, kScratchSize> kZeros{};
    for (size_t i = 0; i < bytes.size(); i += kZeros.size()) {
        const auto block = bytes.subspan(i, std::min(kZeros.size(), bytes.size() - i));
        if (!std::equal(block.begin(), block.end(), kZeros.begin())) {
            const auto nz = std::find_if(block.begin(), block.end(), [](uint8_t b) { return b != 0; });
            return i + static_cast<size_t>(nz - block.begin());
        }
    }
    return bytes.size();
}

bool starts_with_magic(std::span<const uint8_t> bytes) {
    return bytes.size() >= sizeof kDescriptorMagic &&
           std::equal(std::begin(kDescriptorMagic), std::end(kDescriptorMagic), bytes.begin());
}

/// What was recorded of a tensor met, to check the index against.
struct MetTensor {
    uint64_t descriptor_offset = 0;
    uint32_t descriptor_length = 0;
    uint64_t data_offset = 0;
    uint64_t data_length = 0;
    bool has_buffers = false;
};

}  // namespace

// Hidden although SequentialFileReader is exported (a nested class takes the
// enclosing one's visibility).
struct HURRAY_IO_NO_EXPORT SequentialFileReader::Impl {
    ByteSource* src = nullptr;
    SequentialReadOptions options;
    DecodeOptions descriptor_options;
    FileHeader header;

    // --- input position and look-ahead -------------------------------------
    uint64_t offset = 0;         // absolute offset of the next byte consumed
    std::vector<uint8_t> look;   // bytes read from src, not yet consumed
    size_t look_pos = 0;         // first unconsumed byte of `look`

    // --- walk state ----------------------------------------------------------
    bool failed = false;
    Error failure{ErrorCode::kOk, std::string()};
    bool done = false;
    bool has_current = false;
    SequentialTensor current;
    uint32_t buf_index = 0;   // buffer of the next data byte
    uint64_t buf_pos = 0;     // offset inside it
    uint64_t region_end = 0;  // end of the current tensor's data (or descriptor)
    std::vector<MetTensor> met;
    std::vector<uint32_t> open_composites;  // members still expected, innermost last

    // --- results of the end checks -------------------------------------------
    KvMetadata kv;
    std::vector<uint8_t> tail_bytes;  // KV, index and trailer: the index entries' names view it
    std::vector<IndexEntry> index;
    FileTrailer trailer;

    // ------------------------------------------------------------------------
    // Byte layer: every consumed byte goes through here and moves `offset`.

    [[nodiscard]] size_t look_size() const noexcept { return look.size() - look_pos; }

    /// Reads at least one byte (0 at the end of input), look-ahead first.
    Result<size_t> pull(std::span<uint8_t> out) {
        if (look_size() > 0) {
            const size_t n = std::min(out.size(), look_size());
            std::copy_n(look.begin() + static_cast<std::ptrdiff_t>(look_pos), n, out.begin());
            look_pos += n;
            if (look_pos == look.size()) {
                look.clear();
                look_pos = 0;
            }
            return n;
        }
        return checked_read(out);
    }

    /// `read_some` on the source, refusing a count larger than asked for
    /// (a faulty source must not push the offsets past the buffers).
    Result<size_t> checked_read(std::span<uint8_t> out) const {
        HURRAY_ASSIGN_OR_RETURN(const size_t n, src->read_some(out));
        if (n > out.size()) {
            return Error(ErrorCode::kIoError, "byte source: read_some returned " + dec(n) + " bytes for a buffer of " +
                                                  dec(out.size()),
                         offset);
        }
        return n;
    }

    /// Fills `out` or fails with kTruncated naming `what`.
    Status read_exact(std::span<uint8_t> out, const std::string& what) {
        size_t got = 0;
        while (got < out.size()) {
            HURRAY_ASSIGN_OR_RETURN(const size_t n, pull(out.subspan(got)));
            if (n == 0) {
                offset += got;
                return Error(ErrorCode::kTruncated,
                             what + ": input ends at byte " + dec(offset) + ", " + dec(out.size() - got) +
                                 " more bytes needed",
                             offset);
            }
            got += n;
        }
        offset += got;
        return Status::success();
    }

    /// Discards `n` bytes without looking at them.
    Status skip_exact(uint64_t n, const std::string& what) {
        uint64_t left = n;
        const uint64_t from_look = std::min<uint64_t>(left, look_size());
        look_pos += static_cast<size_t>(from_look);
        if (look_pos == look.size()) {
            look.clear();
            look_pos = 0;
        }
        left -= from_look;
        offset += from_look;
        if (left > 0) {
            HURRAY_ASSIGN_OR_RETURN(const uint64_t got, src->skip(left));
            if (got > left) {
                return Error(ErrorCode::kIoError,
                             "byte source: skip returned " + dec(got) + " for a request of " + dec(left), offset);
            }
            offset += got;
            if (got < left) {
                return Error(ErrorCode::kTruncated,
                             what + ": input ends at byte " + dec(offset) + ", " + dec(left - got) +
                                 " more bytes needed",
                             offset);
            }
        }
        return Status::success();
    }

    /// Consumes `n` bytes of padding; strict mode requires them to be zero.
    Status skip_padding(uint64_t n, const std::string& what) {
        if (!options.strict) {
            return skip_exact(n, what);
        }
        std::array<uint8_t, kScratchSize> buf{};
        uint64_t left = n;
        while (left > 0) {
            const auto step = static_cast<size_t>(std::min<uint64_t>(left, buf.size()));
            const uint64_t at = offset;
            HURRAY_RETURN_IF_ERROR(read_exact(std::span<uint8_t>(buf).first(step), what));
            const size_t nz = first_nonzero(std::span<const uint8_t>(buf).first(step));
            if (nz != step) {
                const uint64_t bad = at + nz;
                return Error(ErrorCode::kReservedBytesNonZero,
                             what + ": padding byte at " + dec(bad) + " is " + hex(buf[nz]) + ", must be 0x00", bad);
            }
            left -= step;
        }
        return Status::success();
    }

    /// Makes at least `n` unconsumed bytes available in the look-ahead, or
    /// all that remain before the end of input. Returns how many there are.
    Result<size_t> peek(size_t n) {
        if (look_size() >= n) {
            return look_size();
        }
        if (look_pos > 0) {
            look.erase(look.begin(), look.begin() + static_cast<std::ptrdiff_t>(look_pos));
            look_pos = 0;
        }
        while (look.size() < n) {
            const size_t have = look.size();
            look.resize(n);
            auto r = checked_read(std::span<uint8_t>(look).subspan(have));
            if (!r) {
                look.resize(have);
                return std::move(r).error();
            }
            look.resize(have + *r);
            if (*r == 0) {
                break;
            }
        }
        return look.size();
    }

    [[nodiscard]] std::span<const uint8_t> look_span() const noexcept {
        return std::span<const uint8_t>(look).subspan(look_pos);
    }

    // ------------------------------------------------------------------------
    // Failure bookkeeping: the first error sticks.

    Error fail(Error e) {
        failed = true;
        failure = e;
        return e;
    }

    // ------------------------------------------------------------------------
    // Tensor data.

    [[nodiscard]] uint64_t buffer_size(uint32_t b) const noexcept {
        return current.descriptor.buffers[b].byte_size;
    }
    [[nodiscard]] uint32_t buffer_count() const noexcept {
        return static_cast<uint32_t>(current.descriptor.buffers.size());
    }

    /// Moves past buffers that are fully consumed (and empty ones).
    void settle_position() noexcept {
        while (buf_index < buffer_count() && buf_pos == buffer_size(buf_index)) {
            ++buf_index;
            buf_pos = 0;
        }
    }

    [[nodiscard]] std::string buffer_label(uint32_t b) const {
        return tensor_label(current.position, current.descriptor_offset) + ", buffer " + dec(b);
    }

    /// Consumes the padding before the current buffer, if not done yet.
    Status reach_buffer_start() {
        const uint64_t start = current.buffer_offsets[buf_index];
        if (buf_pos == 0 && offset < start) {
            HURRAY_RETURN_IF_ERROR(skip_padding(start - offset, buffer_label(buf_index) + " (padding before it)"));
        }
        return Status::success();
    }

    Result<size_t> read_data(std::span<uint8_t> out) {
        settle_position();
        if (buf_index >= buffer_count()) {
            return size_t{0};
        }
        HURRAY_RETURN_IF_ERROR(reach_buffer_start());
        const uint64_t left = buffer_size(buf_index) - buf_pos;
        const auto n = static_cast<size_t>(std::min<uint64_t>(left, out.size()));
        HURRAY_RETURN_IF_ERROR(read_exact(out.first(n), buffer_label(buf_index)));
        buf_pos += n;
        settle_position();
        return n;
    }

    Status skip_data() {
        settle_position();
        while (buf_index < buffer_count()) {
            HURRAY_RETURN_IF_ERROR(reach_buffer_start());
            HURRAY_RETURN_IF_ERROR(skip_exact(buffer_size(buf_index) - buf_pos, buffer_label(buf_index)));
            buf_pos = buffer_size(buf_index);
            settle_position();
        }
        return Status::success();
    }

    // ------------------------------------------------------------------------
    // Walking the tensor region.

    /// Reads the descriptor at `offset` and lays out its buffers.
    Status open_tensor() {
        const uint64_t position = met.size();
        const uint64_t at = offset;
        const std::string label = tensor_label(position, at);
        std::array<uint8_t, kDescriptorPeekSize> prefix{};
        HURRAY_RETURN_IF_ERROR(read_exact(prefix, label + " descriptor prefix"));
        auto len = peek_length(prefix);
        if (!len) {
            return len.error().with_context({.prefix = label, .base = at});
        }
        if (*len > options.max_descriptor_length) {
            return Error(ErrorCode::kInvalidDescriptorLength,
                         label + ": descriptor_length " + dec(*len) + " exceeds max_descriptor_length " +
                             dec(options.max_descriptor_length),
                         at + 6);
        }
        // Grown as bytes arrive, so that a large descriptor_length on a short
        // input costs no more memory than the input itself.
        std::vector<uint8_t> bytes(prefix.begin(), prefix.end());
        while (bytes.size() < *len) {
            const size_t have = bytes.size();
            const size_t step = std::min<size_t>(*len - have, std::max<size_t>(have, kFirstChunk));
            bytes.resize(have + step);
            HURRAY_RETURN_IF_ERROR(read_exact(std::span<uint8_t>(bytes).subspan(have), label + " descriptor"));
        }
        auto d = decode(bytes, descriptor_options);
        if (!d) {
            return d.error().with_context({.prefix = label, .base = at});
        }

        SequentialTensor t;
        t.position = position;
        t.descriptor_offset = at;
        t.descriptor = std::move(*d);
        uint64_t end = offset;  // end of the descriptor
        for (size_t b = 0; b < t.descriptor.buffers.size(); ++b) {
            auto start = align_up(end, header.data_buffer_alignment);
            auto stop = start ? add_u64(*start, t.descriptor.buffers[b].byte_size) : std::nullopt;
            if (!stop) {
                return Error(ErrorCode::kSizeOverflow,
                             label + ": buffer " + dec(b) + " would end beyond 2^64 bytes", at);
            }
            t.buffer_offsets.push_back(*start);
            end = *stop;
        }
        MetTensor m;
        m.descriptor_offset = at;
        m.descriptor_length = *len;
        m.has_buffers = !t.buffer_offsets.empty();
        m.data_offset = m.has_buffers ? t.buffer_offsets.front() : offset;
        m.data_length = end - m.data_offset;
        met.push_back(m);

        // Composite membership: the members of a head are the next
        // member_count tensors, nested heads in pre-order.
        if (!open_composites.empty()) {
            --open_composites.back();
        }
        while (!open_composites.empty() && open_composites.back() == 0) {
            open_composites.pop_back();
        }
        if (const auto* k = std::get_if<CompositeLayout>(&t.descriptor.layout); k != nullptr && k->member_count > 0) {
            open_composites.push_back(k->member_count);
        }

        current = std::move(t);
        has_current = true;
        buf_index = 0;
        buf_pos = 0;
        region_end = end;
        settle_position();
        return Status::success();
    }

    /// After the current tensor (or the header), finds whether a descriptor
    /// or the tail comes next and consumes the padding before it. Returns
    /// true for a descriptor; on false, `tail_limit` is the largest offset at
    /// which the first tail section may start.
    Result<bool> find_next(uint64_t& tail_limit) {
        const bool hint_known = header.tensor_count_hint != kUnknownTensorCount;
        const bool hint_reached = hint_known && met.size() >= header.tensor_count_hint;
        uint64_t p = offset;  // where a descriptor may start at 8 bytes
        uint64_t a = offset;  // where it may start after alignment padding
        std::string after = "the file header";
        if (has_current) {
            after = tensor_label(current.position, current.descriptor_offset);
            HURRAY_ASSIGN_OR_RETURN(p, align_up(region_end, kDescriptorAlignment));
            HURRAY_ASSIGN_OR_RETURN(a, align_up(region_end, header.data_buffer_alignment));
            HURRAY_RETURN_IF_ERROR(skip_padding(p - offset, after + " (padding after it)"));
        }
        tail_limit = a;
        if (hint_reached) {
            return false;
        }
        if (hint_known && !has_current) {
            return true;  // the first descriptor: no padding rule to guess
        }
        // "HRRY" at P: the next descriptor follows at 8 bytes.
        HURRAY_ASSIGN_OR_RETURN(size_t avail, peek(sizeof kDescriptorMagic));
        if (starts_with_magic(look_span())) {
            return true;
        }
        if (avail < sizeof kDescriptorMagic && avail > 0 &&
            std::equal(look_span().begin(), look_span().end(), std::begin(kDescriptorMagic))) {
            return Error(ErrorCode::kTruncated,
                         "tensor #" + dec(met.size()) + " descriptor magic: input ends at byte " + dec(p + avail),
                         p + avail);
        }
        // Zeros from P to A, then "HRRY" at A: padded to the alignment.
        const auto gap = static_cast<size_t>(a - p);  // < alignment <= 2 MiB
        const size_t need = gap + sizeof kDescriptorMagic;
        bool all_zero = true;  // the bytes of the gap seen so far
        size_t checked = 0;
        while (gap > 0) {
            const size_t upto = std::min(avail, gap);
            const auto fresh = look_span().subspan(checked, upto - checked);
            all_zero = first_nonzero(fresh) == fresh.size();
            checked = upto;
            if (!all_zero || avail >= need) {
                break;
            }
            const size_t before = avail;
            HURRAY_ASSIGN_OR_RETURN(avail, peek(std::min(need, avail + kScanChunk)));
            if (avail == before) {
                break;  // end of input
            }
        }
        if (gap > 0 && all_zero && avail >= need && starts_with_magic(look_span().subspan(gap))) {
            HURRAY_RETURN_IF_ERROR(skip_exact(gap, after + " (padding after it)"));
            return true;
        }
        if (all_zero && avail < need) {
            // Only zeros, then the end of input: neither a descriptor nor a
            // tail (which ends with the 40-byte trailer) fits there.
            return Error(ErrorCode::kTruncated,
                         "tensor #" + dec(met.size()) + " or the trailer: input ends at byte " + dec(p + avail) +
                             ", inside the padding after " + after,
                         p + avail);
        }
        if (hint_known) {
            return Error(ErrorCode::kInvalidMagic,
                         "tensor #" + dec(met.size()) + ": tensor_count_hint is " + dec(header.tensor_count_hint) +
                             " but no descriptor magic \"HRRY\" follows " + after + " at byte " + dec(p) +
                             " or, after zero padding, at byte " + dec(a),
                         p);
        }
        return false;
    }

    Result<const SequentialTensor*> next() {
        if (failed) {
            return failure;
        }
        if (done) {
            return static_cast<const SequentialTensor*>(nullptr);
        }
        auto r = step();
        if (!r) {
            return fail(std::move(r).error());
        }
        return *r;
    }

    Result<const SequentialTensor*> step() {
        if (has_current) {
            HURRAY_RETURN_IF_ERROR(skip_data());
        }
        uint64_t tail_limit = 0;
        HURRAY_ASSIGN_OR_RETURN(const bool descriptor_next, find_next(tail_limit));
        if (descriptor_next) {
            HURRAY_RETURN_IF_ERROR(open_tensor());
            return static_cast<const SequentialTensor*>(&current);
        }
        has_current = false;
        buf_index = 0;
        buf_pos = 0;
        HURRAY_RETURN_IF_ERROR(finish(tail_limit));
        done = true;
        return static_cast<const SequentialTensor*>(nullptr);
    }

    // ------------------------------------------------------------------------
    // The tail: KV, index, trailer.

    /// Reads everything left into memory, bounded by max_tail_length.
    Result<std::vector<uint8_t>> read_tail() {
        const uint64_t cap64 = std::min<uint64_t>(options.max_tail_length, SIZE_MAX - 1);
        const auto cap = static_cast<size_t>(cap64);
        std::vector<uint8_t> tail;
        const uint64_t start = offset;
        size_t chunk = kFirstChunk;
        while (true) {
            if (tail.size() >= cap) {
                std::array<uint8_t, 1> probe{};
                HURRAY_ASSIGN_OR_RETURN(const size_t more, pull(probe));
                if (more != 0) {
                    return Error(ErrorCode::kInvalidFile,
                                 "tail (KV, index and trailer) starting at byte " + dec(start) +
                                     " is longer than max_tail_length " + dec(options.max_tail_length),
                                 start);
                }
                break;
            }
            const size_t have = tail.size();
            const size_t want = std::min(chunk, cap - have);
            tail.resize(have + want);
            auto r = pull(std::span<uint8_t>(tail).subspan(have));
            if (!r) {
                return std::move(r).error();
            }
            tail.resize(have + *r);
            offset += *r;
            if (*r == 0) {
                break;
            }
            if (tail.size() == have + want) {
                chunk = std::min(chunk * 2, kMaxChunk);
            }
        }
        return tail;
    }

    /// Checks that `bytes` (at absolute `base`) are zero in strict mode.
    [[nodiscard]] Status check_gap(std::span<const uint8_t> bytes, uint64_t base, const char* what) const {
        if (!options.strict) {
            return Status::success();
        }
        const size_t nz = first_nonzero(bytes);
        if (nz != bytes.size()) {
            const uint64_t bad = base + nz;
            return Error(ErrorCode::kReservedBytesNonZero,
                         std::string(what) + ": byte at " + dec(bad) + " is " + hex(bytes[nz]) + ", must be 0x00", bad);
        }
        return Status::success();
    }

    Status finish(uint64_t tail_limit) {
        const uint64_t tail_start = offset;
        HURRAY_ASSIGN_OR_RETURN(tail_bytes, read_tail());
        const std::vector<uint8_t>& tail = tail_bytes;
        const uint64_t file_size = offset;
        const std::span<const uint8_t> all(tail);
        if (tail.size() < kFileTrailerSize) {
            return Error(ErrorCode::kTruncated,
                         "trailer: the input ends at byte " + dec(file_size) + ", only " + dec(tail.size()) +
                             " bytes after the tensor region (which ends at byte " + dec(tail_start) +
                             "), 40 needed",
                         file_size);
        }
        const uint64_t trailer_offset = file_size - kFileTrailerSize;
        HURRAY_ASSIGN_OR_RETURN(trailer, decode_file_trailer(all.last(kFileTrailerSize), trailer_offset));
        const auto local = [&](uint64_t abs) { return static_cast<size_t>(abs - tail_start); };

        // Where the sections lie.
        const auto index_end = add_u64(trailer.index_offset, trailer.index_length);
        if (!index_end || trailer.index_offset < tail_start || *index_end > trailer_offset) {
            return Error(ErrorCode::kInvalidFile,
                         "index_offset " + dec(trailer.index_offset) + " / index_length " +
                             dec(trailer.index_length) + ": the index must lie between the end of the tensor region (byte " +
                             dec(tail_start) + ") and the trailer (byte " + dec(trailer_offset) + ")",
                         trailer_offset);
        }
        if (trailer.index_offset % kDescriptorAlignment != 0) {
            return Error(ErrorCode::kInvalidFile,
                         "index_offset " + dec(trailer.index_offset) + " is not a multiple of 8", trailer_offset);
        }
        const bool kv_flag = (header.flags & file_flags::kHasKvMetadata) != 0;
        const bool kv_present = trailer.kv_offset != 0 && trailer.kv_length != 0;
        if (options.strict && !kv_present && (trailer.kv_offset != 0 || trailer.kv_length != 0)) {
            return Error(ErrorCode::kInvalidFile,
                         "kv_offset " + dec(trailer.kv_offset) + " / kv_length " + dec(trailer.kv_length) +
                             ": both must be 0 when there is no KV section",
                         trailer_offset + trailer_field::kKvOffset);
        }
        if (options.strict && kv_flag && !kv_present) {
            return Error(ErrorCode::kInvalidFile,
                         "file_flags: HAS_KV_METADATA is set but the trailer locates no KV section", header_field::kFlags);
        }
        uint64_t first_section = trailer.index_offset;
        if (kv_present) {
            const uint64_t kv_end = trailer.kv_offset + trailer.kv_length;  // u64 + u32 < 2^64 unless absurd
            if (trailer.kv_offset < tail_start || kv_end < trailer.kv_offset || kv_end > trailer_offset) {
                return Error(ErrorCode::kInvalidFile,
                             "kv_offset " + dec(trailer.kv_offset) + " / kv_length " + dec(trailer.kv_length) +
                                 ": the KV section must lie between the end of the tensor region (byte " +
                                 dec(tail_start) + ") and the trailer (byte " + dec(trailer_offset) + ")",
                             trailer_offset + trailer_field::kKvOffset);
            }
            if (trailer.kv_offset % kDescriptorAlignment != 0) {
                return Error(ErrorCode::kInvalidFile,
                             "kv_offset " + dec(trailer.kv_offset) + " is not a multiple of 8", trailer_offset + trailer_field::kKvOffset);
            }
            if (trailer.kv_offset < *index_end && trailer.index_offset < kv_end) {
                return Error(ErrorCode::kOverlap,
                             "the KV section [" + dec(trailer.kv_offset) + ", " + dec(kv_end) +
                                 ") overlaps the index [" + dec(trailer.index_offset) + ", " + dec(*index_end) + ")",
                             trailer_offset);
            }
            first_section = std::min(first_section, trailer.kv_offset);
        }

        // The tensor region ends where the first section begins: at most the
        // padding of either rule lies between.
        if (first_section > tail_limit) {
            return Error(ErrorCode::kInvalidFile,
                         "the first section after the tensor region starts at byte " + dec(first_section) +
                             ", but the tensor region ends at byte " + dec(tail_start) + " (" + dec(met.size()) +
                             " tensors read); the bytes between are not padding",
                         tail_start);
        }
        HURRAY_RETURN_IF_ERROR(check_gap(all.first(local(first_section)), tail_start,
                                         "padding after the tensor region"));
        // Gaps between the sections and before the trailer are padding too.
        std::vector<std::pair<uint64_t, uint64_t>> sections = {{trailer.index_offset, *index_end}};
        if (kv_present) {
            sections.emplace_back(trailer.kv_offset, trailer.kv_offset + trailer.kv_length);
        }
        std::sort(sections.begin(), sections.end());
        uint64_t cursor = first_section;
        for (const auto& [from, to] : sections) {
            HURRAY_RETURN_IF_ERROR(
                check_gap(all.subspan(local(cursor), local(from) - local(cursor)), cursor, "padding between sections"));
            cursor = to;
        }
        HURRAY_RETURN_IF_ERROR(check_gap(all.subspan(local(cursor), local(trailer_offset) - local(cursor)), cursor,
                                         "padding before the trailer"));

        // The index and its checksum.
        const auto index_bytes = all.subspan(local(trailer.index_offset), static_cast<size_t>(trailer.index_length));
        if ((header.flags & file_flags::kHasIndexCrc32c) != 0) {
            const uint32_t crc = crc32c(index_bytes);
            if (crc != trailer.index_crc32c) {
                return Error(ErrorCode::kChecksumMismatch,
                             "index_crc32c: stored " + hex(trailer.index_crc32c, 8) + ", the index has " + hex(crc, 8),
                             trailer_offset + trailer_field::kIndexCrc32c);
            }
        } else if (options.strict && trailer.index_crc32c != 0) {
            return Error(ErrorCode::kInvalidFile,
                         "index_crc32c: " + hex(trailer.index_crc32c, 8) +
                             " must be 0 when HAS_INDEX_CRC32C is clear",
                         trailer_offset + trailer_field::kIndexCrc32c);
        }
        std::vector<uint64_t> entry_offsets;
        HURRAY_ASSIGN_OR_RETURN(index, decode_index(index_bytes, trailer.index_offset, &entry_offsets));
        HURRAY_RETURN_IF_ERROR(check_index_names(
            index, (header.flags & file_flags::kSortedIndex) != 0, entry_offsets));
        if (kv_present) {
            const auto kv_bytes = all.subspan(local(trailer.kv_offset), trailer.kv_length);
            // The descriptor table is a format artifact, not metadata (this reader has
            // read every descriptor in place already): set aside, not copied.
            HURRAY_ASSIGN_OR_RETURN(kv, detail::decode_kv_section_except(kv_bytes, trailer.kv_offset, options.kv,
                                                                         kDescriptorTableKey, nullptr));
        }
        HURRAY_RETURN_IF_ERROR(match_index(entry_offsets));

        if (options.strict && !open_composites.empty()) {
            return Error(ErrorCode::kInvalidComposite,
                         "a composite head is missing " + dec(open_composites.back()) +
                             " member(s) at the end of the tensor region (byte " + dec(tail_start) + ")",
                         tail_start);
        }
        return Status::success();
    }

    /// Every index entry names a tensor met, and every tensor met has one.
    Status match_index(const std::vector<uint64_t>& entry_offsets) {
        if (index.size() != met.size()) {
            return Error(ErrorCode::kInvalidFile,
                         "index: " + dec(index.size()) + " entries, but " + dec(met.size()) +
                             " tensors were read in the tensor region",
                         trailer.index_offset);
        }
        std::vector<bool> seen(met.size(), false);
        for (size_t i = 0; i < index.size(); ++i) {
            const IndexEntry& e = index[i];
            const uint64_t at = i < entry_offsets.size() ? entry_offsets[i] : trailer.index_offset;
            const std::string who = "index entry " + dec(i) + " (\"" + std::string(e.name) + "\")";
            const auto it = std::lower_bound(met.begin(), met.end(), e.descriptor_offset,
                                             [](const MetTensor& m, uint64_t off) { return m.descriptor_offset < off; });
            if (it == met.end() || it->descriptor_offset != e.descriptor_offset) {
                return Error(ErrorCode::kInvalidFile,
                             who + ": descriptor_offset " + dec(e.descriptor_offset) +
                                 " is not where any tensor was read",
                             at);
            }
            const auto k = static_cast<size_t>(it - met.begin());
            const std::string where = who + " for " + tensor_label(k, it->descriptor_offset);
            if (seen[k]) {
                return Error(ErrorCode::kInvalidFile, where + ": a second entry names the same tensor", at);
            }
            seen[k] = true;
            if (e.descriptor_length != it->descriptor_length) {
                return Error(ErrorCode::kInvalidFile,
                             where + ": descriptor_length " + dec(e.descriptor_length) + ", the descriptor says " +
                                 dec(it->descriptor_length),
                             at);
            }
            if (it->has_buffers) {
                if (e.data_offset != it->data_offset || e.data_length != it->data_length) {
                    return Error(ErrorCode::kInvalidFile,
                                 where + ": data_offset " + dec(e.data_offset) + " / data_length " +
                                     dec(e.data_length) + ", the tensor's data lies at " + dec(it->data_offset) +
                                     " / " + dec(it->data_length),
                                 at);
                }
            } else if (e.data_length != 0) {
                return Error(ErrorCode::kInvalidFile,
                             where + ": data_length " + dec(e.data_length) + " for a tensor without buffers", at);
            }
        }
        return Status::success();
    }
};

// ----------------------------------------------------------------------------

Result<SequentialFileReader> SequentialFileReader::open(ByteSource& source, const SequentialReadOptions& options) {
    auto impl = std::make_unique<Impl>();
    impl->src = &source;
    impl->options = options;
    impl->descriptor_options = options.descriptor;
    impl->descriptor_options.strict = options.strict && options.descriptor.strict;

    std::array<uint8_t, kFileHeaderSize> raw{};
    HURRAY_ASSIGN_OR_RETURN(const size_t got, source.read_full(raw));
    impl->offset = got;
    HURRAY_ASSIGN_OR_RETURN(impl->header, decode_file_header(std::span<const uint8_t>(raw).first(got)));
    HURRAY_RETURN_IF_ERROR(
        impl->skip_padding(impl->header.first_descriptor_offset - kFileHeaderSize, "padding before the first descriptor"));
    return SequentialFileReader(std::move(impl));
}

SequentialFileReader::SequentialFileReader(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
SequentialFileReader::SequentialFileReader(SequentialFileReader&& other) noexcept = default;
SequentialFileReader& SequentialFileReader::operator=(SequentialFileReader&& other) noexcept = default;
SequentialFileReader::~SequentialFileReader() = default;

const FileHeader& SequentialFileReader::header() const noexcept { return impl_->header; }

Result<const SequentialTensor*> SequentialFileReader::next() { return impl_->next(); }

Result<size_t> SequentialFileReader::read_data(std::span<uint8_t> out) {
    Impl& s = *impl_;
    if (s.failed) {
        return s.failure;
    }
    if (!s.has_current) {
        return size_t{0};
    }
    if (out.empty()) {
        return Error(ErrorCode::kInvalidArgument, "read_data: the output span is empty");
    }
    auto r = s.read_data(out);
    if (!r) {
        return s.fail(std::move(r).error());
    }
    return r;
}

Status SequentialFileReader::skip_data() {
    Impl& s = *impl_;
    if (s.failed) {
        return s.failure;
    }
    if (!s.has_current) {
        return Status::success();
    }
    auto r = s.skip_data();
    if (!r) {
        return s.fail(std::move(r).error());
    }
    return r;
}

std::pair<uint32_t, uint64_t> SequentialFileReader::data_position() const noexcept {
    return {impl_->buf_index, impl_->buf_pos};
}

const KvMetadata& SequentialFileReader::kv() const noexcept { return impl_->kv; }
const std::vector<IndexEntry>& SequentialFileReader::index() const noexcept { return impl_->index; }
const FileTrailer& SequentialFileReader::trailer() const noexcept { return impl_->trailer; }

}  // namespace hurray
