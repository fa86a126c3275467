// SPDX-License-Identifier: Apache-2.0
/// @file
/// `FileWriter`: writes an HRRYFILE container in one forward pass to any
/// `ByteSink` (file-format.md § Writer Protocol), or atomically to a path.
#pragma once

#include "hurray/io/export.hpp"
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hurray/core/composite.hpp"
#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/byte_source.hpp"
#include "hurray/io/descriptor_table.hpp"
#include "hurray/io/file_format.hpp"
#include "hurray/io/kv_metadata.hpp"

namespace hurray {

namespace detail {
struct FileWriterState;
}  // namespace detail

/// How a `FileWriter` lays the file out.
struct HURRAY_IO_EXPORT FileWriterOptions {
    /// `data_buffer_alignment`: a power of two in 4096 .. 2 MiB.
    uint32_t data_buffer_alignment = kDefaultDataBufferAlignment;
    /// Sort the index by the raw UTF-8 bytes of the names and set
    /// `SORTED_INDEX`, so readers can binary-search it. Default: write order.
    bool sorted_index = false;
    /// Number of tensors the file will hold, written as `tensor_count_hint`;
    /// `finish` fails if a different number was written. Default: unknown.
    uint64_t tensor_count_hint = kUnknownTensorCount;
    /// Allow KV values with private tags (0xF0-0xFE).
    bool allow_private_kv = false;
    /// Composite rules enforced on heads and members as they are written.
    CompositeOptions composite{};
    /// Also store a copy of every descriptor in one KV entry, the descriptor table
    /// (hurray/io/descriptor_table.hpp), so that readers list the file from its tail.
    /// Costs the descriptors' bytes twice in the file and once in memory until
    /// `finish`. Readers that do not know the table read the file as before.
    bool descriptor_table = true;
    /// The descriptor table's version: 2 (each distinct descriptor once, and each
    /// entry's class: the layers of a model repeat a few descriptors), or 1 (every
    /// descriptor, for readers of libhurray before version 2 tables, which fall back to
    /// the descriptors in place on a version they do not know). Anything else is
    /// kInvalidArgument at `create`.
    uint16_t descriptor_table_version = kDescriptorTableVersion;
};

/// One tensor of `FileWriter::add_composite`: a name, a descriptor and its
/// buffers' bytes (none for a nested head).
struct HURRAY_IO_EXPORT FileTensorInput {
    /// The tensor's name.
    std::string_view name;
    /// Its descriptor.
    const TensorDescriptor* descriptor = nullptr;
    /// One span per buffer of the descriptor, each exactly its declared size.
    std::span<const std::span<const uint8_t>> buffers;
};

/// Writes an HRRYFILE container in a single forward pass.
///
/// Layout, per the spec: the 64-byte header; each tensor's descriptor at an
/// 8-byte-aligned offset, zero padding up to `data_buffer_alignment`, its
/// buffers each at an aligned offset with zero padding between and after
/// them, then padding to 8 bytes; a composite head (no buffers) is followed
/// directly by its first member at the next 8-byte boundary. `finish` writes
/// the KV section (always, empty when there is no KV), the index, and the
/// trailer with the index's CRC-32C; `HAS_INDEX_CRC32C` and `HAS_KV_METADATA`
/// are always set, `SORTED_INDEX` when asked for.
///
/// Names are checked (valid UTF-8, 1 .. 65,535 bytes, unique) and the
/// descriptor is checked (`check_descriptor`, composite rules) before
/// anything of a tensor is written: such an error leaves the writer usable.
/// The errors of `finish` found before it writes (an open tensor, a torn
/// composite, a tensor count that disagrees with the hint, invalid KV) leave
/// it usable too, as does a `write_data` piece longer than what the tensor
/// still expects (refused before any byte of it is written). A sink failure, an offset overflow or
/// `end_tensor` with bytes missing leaves the writer failed: every later call
/// returns that first error, and the output is not a valid file.
///
/// Memory: the index entries (name + 36 bytes per tensor) and the KV; tensor
/// data is passed through, never held. Small writes (header, descriptors,
/// padding) are coalesced; large data spans go straight to the sink.
///
/// @code
/// auto writer = hurray::FileWriter::create_file("model.hrry");   // atomic save
/// if (!writer) return writer.error();
/// std::vector<float> w(4096 * 4096);
/// auto desc = hurray::make_dense(hurray::ElementType::kFloat32, {4096, 4096});
/// std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(w.data()), w.size() * 4);
/// std::span<const uint8_t> bufs[] = {bytes};
/// if (auto s = writer->add_tensor("w", *desc, bufs); !s) return s;
/// if (auto s = writer->kv().set("general.architecture", hurray::KvValue::string("llama")); !s) return s;
/// if (auto s = writer->finish(); !s) return s;   // index, trailer, fsync, rename
/// @endcode
class HURRAY_IO_EXPORT FileWriter {
public:
    /// Starts a file on `sink` (not owned; must outlive the writer) and writes
    /// its header. Fails with `kInvalidArgument` for bad options.
    static Result<FileWriter> create(ByteSink& sink, const FileWriterOptions& options = {});
    /// Starts a file that `finish` atomically moves to `path` (see
    /// `AtomicFileSink`). Until then `path` is untouched; if the writer is
    /// destroyed unfinished or `finish` fails, `path` keeps its old content.
    /// `durability`: `kDurable` (default) fsyncs the file and its directory in
    /// `finish`, so the new content survives a power loss once `finish`
    /// succeeds; `kAtomicOnly` skips both fsyncs (still an atomic replacement), so
    /// a save costs what writing its bytes costs (see `Durability`).
    static Result<FileWriter> create_file(const std::filesystem::path& path,
                                          const FileWriterOptions& options = {},
                                          Durability durability = Durability::kDurable);

    /// Moves the writer (and its open output).
    FileWriter(FileWriter&& other) noexcept;
    /// Moves the writer; an unfinished atomic save of the target is abandoned.
    FileWriter& operator=(FileWriter&& other) noexcept;
    FileWriter(const FileWriter&) = delete;
    FileWriter& operator=(const FileWriter&) = delete;
    ~FileWriter();

    /// Writes one tensor with all its data: one span per buffer of `desc`,
    /// each exactly the buffer's declared `byte_size` (`kSizeMismatch`
    /// otherwise, before anything is written). A composite head is written
    /// with no buffers; its members are the tensors added after it.
    Status add_tensor(std::string_view name, const TensorDescriptor& desc,
                      std::span<const std::span<const uint8_t>> buffers);

    /// Writes a composite head and all its members (nested heads included, in
    /// pre-order) after validating the whole composite, so that an invalid
    /// composite leaves no byte in the file.
    Status add_composite(std::string_view head_name, const TensorDescriptor& head,
                         std::span<const FileTensorInput> members);

    /// Starts a tensor whose data comes in pieces: writes its descriptor and
    /// the padding before its first buffer.
    Status begin_tensor(std::string_view name, const TensorDescriptor& desc);
    /// Appends the next bytes of the current tensor's data: its buffers in
    /// order, as one run (the writer inserts the padding between buffers).
    /// A piece may span buffers. Writing more than the buffers declare is a
    /// `kSizeMismatch`, detected before any byte of that piece is written;
    /// the writer stays usable (the tensor still expects its remaining bytes).
    Status write_data(std::span<const uint8_t> piece);
    /// As `write_data` with the next `n` bytes read from `source`, straight
    /// into one 1 MiB buffer and written from there (no other staging; a
    /// copy beats splice(2) from a pipe, which stalls the pipe's writer while
    /// the file system writes). Returns the bytes moved: less than `n` only when the source
    /// ended (the tensor then still expects the rest). `n` over what the
    /// tensor expects is `kSizeMismatch` with nothing read; a source or sink
    /// failure leaves the writer failed.
    Result<uint64_t> write_data_from(ByteSource& source, uint64_t n);
    /// Ends the current tensor; `kSizeMismatch` when fewer bytes were written
    /// than its buffers declare, which leaves the writer failed (the missing
    /// bytes cannot be inserted later).
    Status end_tensor();

    /// The KV metadata written by `finish`; may be filled at any time before.
    /// A KV section is always written (4 bytes when there is no entry) and
    /// `HAS_KV_METADATA` always set: the header goes out before the KV is
    /// final, and the flag must announce every section we write (SPEC-NOTES 11).
    KvMetadata& kv() noexcept { return kv_; }

    /// Writes the KV section, the index and the trailer, flushes the sink and,
    /// for `create_file`, commits the file (fsync unless `kAtomicOnly`, rename,
    /// fsync of the directory unless `kAtomicOnly`).
    /// Fails (and writes no trailer) if a tensor is unfinished, a composite is
    /// torn, or the number of tensors disagrees with `tensor_count_hint`.
    Status finish();

    /// Bytes written to the sink so far (the current file offset).
    [[nodiscard]] uint64_t offset() const noexcept { return offset_; }
    /// Number of tensors written so far.
    [[nodiscard]] size_t tensor_count() const noexcept { return entries_.size(); }
    /// The index entries so far, in write order (names view the writer's own
    /// copies: valid while the writer lives).
    [[nodiscard]] const std::vector<IndexEntry>& entries() const noexcept { return entries_; }
    /// The header as written.
    [[nodiscard]] const FileHeader& header() const noexcept { return header_; }

private:
    FileWriter() = default;

    FileHeader header_{};
    KvMetadata kv_;
    std::vector<IndexEntry> entries_;
    uint64_t offset_ = 0;
    std::unique_ptr<detail::FileWriterState> state_;
};

}  // namespace hurray
