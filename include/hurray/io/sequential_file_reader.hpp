// SPDX-License-Identifier: Apache-2.0
/// @file
/// `SequentialFileReader`: reads an HRRYFILE container front to back from a
/// source that cannot seek (a pipe, standard input, a socket), following
/// file-format.md § Sequential Reader.
#pragma once

#include "hurray/io/export.hpp"
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"
#include "hurray/io/byte_source.hpp"
#include "hurray/io/file_format.hpp"
#include "hurray/io/kv_metadata.hpp"

namespace hurray {

/// How `SequentialFileReader` reads.
struct HURRAY_IO_EXPORT SequentialReadOptions {
    /// Strict rules (see `FileReadOptions::strict`).
    bool strict = true;
    /// How descriptors are decoded.
    DecodeOptions descriptor{};
    /// KV decoding (private tags).
    KvDecodeOptions kv{};
    /// Largest descriptor accepted (bounds the allocation before reading it).
    uint32_t max_descriptor_length = 16U * 1024U * 1024U;
    /// Largest index + KV + trailer tail held in memory to check the file at
    /// its end (the index is needed to verify names and offsets).
    uint64_t max_tail_length = 1ULL << 30;
};

/// One tensor met while reading sequentially.
struct HURRAY_IO_EXPORT SequentialTensor {
    /// Position in the file, 0-based, in write order.
    uint64_t position = 0;
    /// Absolute offset of the descriptor.
    uint64_t descriptor_offset = 0;
    /// The decoded descriptor.
    TensorDescriptor descriptor;
    /// Absolute offset of each buffer.
    std::vector<uint64_t> buffer_offsets;
};

/// Reads a container without seeking.
///
/// The tensor region is walked by offset arithmetic only: descriptor, zero
/// padding to the data alignment, each buffer and its padding. After a
/// tensor's last buffer it accepts either padding rule (to the data
/// alignment, as the spec writes, or only to 8 bytes, as the reference
/// writes; SPEC-NOTES 12) and after a composite head either no padding or
/// padding to the alignment (SPEC-NOTES 13), by looking at the zero padding
/// and the next descriptor's magic. The end of the tensor region comes from
/// `tensor_count_hint` when known; otherwise the reader keeps the bytes after
/// the last tensor it could parse and finds the trailer at the end of input.
/// At the end it checks the trailer, the CRC-32C, the index (every entry must
/// match a tensor it met, by offset and length) and the KV section.
///
/// Data is delivered in chunks through `read_data` (bounded memory) or
/// skipped with `skip_data`.
///
/// @code
/// hurray::FdSource in(STDIN_FILENO);
/// auto reader = hurray::SequentialFileReader::open(in);
/// if (!reader) return reader.error();
/// std::vector<uint8_t> chunk(1 << 20);
/// while (true) {
///     auto t = reader->next();                 // nullptr at the end
///     if (!t) return t.error();
///     if (!*t) break;
///     for (uint32_t b = 0; b < (*t)->descriptor.buffers.size(); ++b) {
///         while (true) {
///             auto n = reader->read_data(chunk);   // 0: end of this tensor's data
///             if (!n) return n.error();
///             if (*n == 0) break;
///             consume(std::span(chunk).first(*n));
///         }
///     }
/// }
/// const hurray::KvMetadata& kv = reader->kv();  // after the end
/// @endcode
class HURRAY_IO_EXPORT SequentialFileReader {
public:
    /// Reads and checks the file header from `source` (not owned).
    static Result<SequentialFileReader> open(ByteSource& source, const SequentialReadOptions& options = {});

    SequentialFileReader(SequentialFileReader&& other) noexcept;
    SequentialFileReader& operator=(SequentialFileReader&& other) noexcept;
    SequentialFileReader(const SequentialFileReader&) = delete;
    SequentialFileReader& operator=(const SequentialFileReader&) = delete;
    ~SequentialFileReader();

    /// The file header.
    [[nodiscard]] const FileHeader& header() const noexcept;

    /// Moves to the next tensor, skipping whatever is left of the current
    /// one's data. Returns nullptr at the end of the tensor region, after
    /// the trailer, index and KV have been read and checked. The pointer is
    /// valid until the next call to `next`. After an error, every later call
    /// (`next`, `read_data`, `skip_data`) returns the same error.
    Result<const SequentialTensor*> next();
    /// Reads the next bytes of the current tensor's data (its buffers in
    /// order, padding removed) into `out`; returns 0 when all of it was read
    /// (or before the first `next`). One call never crosses from one buffer
    /// into the next: it returns at most what is left of the buffer that
    /// `data_position()` names, so the caller always knows which buffer the
    /// bytes belong to. Empty buffers are passed over. `out` must not be
    /// empty (`kInvalidArgument`).
    Result<size_t> read_data(std::span<uint8_t> out);
    /// Skips the rest of the current tensor's data (padding still checked in
    /// strict mode).
    Status skip_data();
    /// Which buffer of the current tensor the next `read_data` byte belongs
    /// to, and the offset inside it.
    [[nodiscard]] std::pair<uint32_t, uint64_t> data_position() const noexcept;

    /// The KV metadata (available once `next` has returned nullptr).
    [[nodiscard]] const KvMetadata& kv() const noexcept;
    /// The index entries (available once `next` has returned nullptr); their
    /// names view memory this reader keeps.
    [[nodiscard]] const std::vector<IndexEntry>& index() const noexcept;
    /// The trailer (available once `next` has returned nullptr).
    [[nodiscard]] const FileTrailer& trailer() const noexcept;

private:
    struct Impl;
    explicit SequentialFileReader(std::unique_ptr<Impl> impl) noexcept;
    std::unique_ptr<Impl> impl_;
};

}  // namespace hurray
