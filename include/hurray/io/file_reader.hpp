// SPDX-License-Identifier: Apache-2.0
/// @file
/// `FileReader`: opens an HRRYFILE container by memory-mapping it (pread as
/// a fallback), validates its structure once, then hands out names,
/// descriptors, KV metadata and zero-copy views of tensor data.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hurray/core/composite.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"
#include "hurray/core/tensor_view.hpp"
#include "hurray/io/file_format.hpp"
#include "hurray/io/kv_metadata.hpp"
#include "hurray/io/shared_buffer.hpp"

namespace hurray {

/// How tensor data will be accessed; passed to `madvise`.
enum class AccessPattern : uint8_t {
    kNormal,      ///< No hint.
    kSequential,  ///< Read front to back once (aggressive read-ahead).
    kRandom,      ///< Scattered reads (no read-ahead).
    kWillNeed,    ///< Start reading it in now.
    kDontNeed,    ///< Done with it; the pages may be dropped.
};

/// How `FileReader` opens and checks a file.
struct FileReadOptions {
    /// Strict (default): every rule of file-format.md and SPEC-NOTES 9-17,
    /// including those the reference skips. Permissive accepts a non-zero
    /// `index_crc32c` with the CRC flag clear, `HAS_KV_METADATA` set without a
    /// section, and exposes the members of a torn composite as plain tensors.
    bool strict = true;
    /// How descriptors are decoded (its `strict` is combined with ours: a
    /// descriptor is decoded strictly only when both are strict).
    DecodeOptions descriptor{};
    /// KV decoding (private tags).
    KvDecodeOptions kv{};
    /// Map the file (default). When false, or when mapping fails, sections
    /// and tensor data are read with `pread` into owned memory.
    bool use_mmap = true;
    /// Hint for the whole mapping, applied at open.
    AccessPattern access = AccessPattern::kNormal;
};

/// A tensor's descriptor and its buffers' bytes.
struct FileTensor {
    /// Its index entry.
    const IndexEntry* entry = nullptr;
    /// Its decoded descriptor (owned by the reader; valid while it lives).
    const TensorDescriptor* descriptor = nullptr;
    /// One buffer per entry of the descriptor's buffer table, each exactly its
    /// declared size; zero-copy views into the mapping when mapped.
    std::vector<SharedBuffer> buffers;
    /// A `TensorView` over these buffers (addressing, materialization). It
    /// refers to the descriptor (owned by the reader) and to the bytes (kept
    /// alive by `buffers`): both must outlive it. Composite heads have no
    /// view (`kUnsupported`); use `FileReader::composite`.
    [[nodiscard]] Result<TensorView> view() const;
};

/// A composite recovered from a file: its head and its direct members, in
/// descriptor-offset order (file-format.md § Composite Tensors).
struct FileComposite {
    /// Position of the head in the index.
    size_t head = 0;
    /// Index positions of the direct members (a nested head is one member).
    std::vector<size_t> members;
};

/// A validated, read-only HRRYFILE container.
///
/// `open` maps the file and checks, before returning, everything that does
/// not need a descriptor decoded: header, trailer, CRC-32C of the index, the
/// index (every entry inside it, names valid UTF-8 and unique, sort order
/// when `SORTED_INDEX`, reserved flags zero, descriptors 8-byte aligned and
/// starting with `HRRY` and the length the index gives, data offsets
/// aligned, every descriptor and data region inside the file and not
/// overlapping another, the header, the KV section, the index or the
/// trailer), and the KV section. Descriptors are decoded lazily, once each
/// (thread-safe), and checked against their entry (`data_length` agreement).
/// Memory at open: O(index size + KV size), never more than the file bounds.
/// A mapped file must not be truncated by another process while mapped
/// (reading a page past the new end raises SIGBUS); use `use_mmap = false`
/// for files that may change. The spans in `FileReadOptions::descriptor` are
/// copied at open.
///
/// Lookup by name: binary search when the index is sorted, a hash table
/// otherwise (built at open).
///
/// @code
/// auto file = hurray::FileReader::open("model.hrry");
/// if (!file) { std::fprintf(stderr, "%s\n", file.error().to_string().c_str()); return 1; }
/// for (size_t i = 0; i < file->tensor_count(); ++i) {
///     const hurray::IndexEntry& e = file->entry(i);
///     auto desc = file->descriptor(i);           // decoded on first use
/// }
/// auto w = file->tensor("w");                     // zero-copy
/// auto arch = file->kv().get_string("general.architecture");
/// @endcode
class FileReader {
public:
    /// Opens and validates the file at `path`.
    static Result<FileReader> open(const std::string& path, const FileReadOptions& options = {});
    /// Validates a file held in memory. `owner` keeps `bytes` alive (it is
    /// shared by every buffer handed out); without one, `bytes` must outlive
    /// the reader and its buffers.
    static Result<FileReader> open_memory(std::span<const uint8_t> bytes,
                                          std::shared_ptr<const void> owner = {},
                                          const FileReadOptions& options = {});

    /// Moves the reader; `other` is left empty (only destruction and
    /// assignment are valid on it).
    FileReader(FileReader&& other) noexcept;
    /// Moves the reader; `other` is left empty.
    FileReader& operator=(FileReader&& other) noexcept;
    FileReader(const FileReader&) = delete;
    FileReader& operator=(const FileReader&) = delete;
    ~FileReader();

    /// The file header.
    [[nodiscard]] const FileHeader& header() const noexcept;
    /// The trailer.
    [[nodiscard]] const FileTrailer& trailer() const noexcept;
    /// Size of the file in bytes.
    [[nodiscard]] uint64_t file_size() const noexcept;
    /// Whether the file is memory-mapped (false: pread fallback or memory).
    [[nodiscard]] bool mapped() const noexcept;
    /// The KV metadata (empty when the file has none).
    [[nodiscard]] const KvMetadata& kv() const noexcept;

    /// Number of tensors (index entries).
    [[nodiscard]] size_t tensor_count() const noexcept;
    /// Index entry `i`, in index order. Precondition: `i < tensor_count()`.
    [[nodiscard]] const IndexEntry& entry(size_t i) const;
    /// Position of the tensor named `name`, or nothing.
    [[nodiscard]] std::optional<size_t> find(std::string_view name) const;
    /// Index positions sorted by `descriptor_offset` (write order).
    [[nodiscard]] std::span<const size_t> write_order() const noexcept;

    /// The descriptor of tensor `i`, decoded and checked on first use.
    [[nodiscard]] Result<const TensorDescriptor*> descriptor(size_t i) const;
    /// The descriptor of the tensor named `name` (`kNotFound` when absent).
    [[nodiscard]] Result<const TensorDescriptor*> descriptor(std::string_view name) const;
    /// The raw bytes of tensor `i`'s descriptor.
    [[nodiscard]] Result<SharedBuffer> descriptor_bytes(size_t i) const;

    /// Tensor `i`: descriptor and zero-copy buffers.
    [[nodiscard]] Result<FileTensor> tensor(size_t i) const;
    /// The tensor named `name`.
    [[nodiscard]] Result<FileTensor> tensor(std::string_view name) const;

    /// The composite whose head is tensor `head`: its members, validated with
    /// the core composite rules (torn or invalid composites are errors).
    [[nodiscard]] Result<FileComposite> composite(size_t head) const;
    /// Decodes every descriptor and checks every composite of the file (in
    /// write order, with `CompositeAssembler`).
    [[nodiscard]] Status check_all() const;

    /// Applies an access hint (`madvise`) to the whole mapping. Succeeds
    /// without doing anything when the file is not mapped.
    [[nodiscard]] Status advise(AccessPattern pattern) const;
    /// Applies an access hint to the pages holding tensor `i`'s data region
    /// (rounded out to whole pages). No-op success when not mapped.
    [[nodiscard]] Status advise(size_t i, AccessPattern pattern) const;

private:
    struct Impl;
    explicit FileReader(std::unique_ptr<Impl> impl) noexcept;
    std::unique_ptr<Impl> impl_;
};

}  // namespace hurray
