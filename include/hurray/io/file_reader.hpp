// SPDX-License-Identifier: Apache-2.0
/// @file
/// `FileReader`: opens an HRRYFILE container by memory-mapping it (pread as
/// a fallback), validates its structure once, then hands out names,
/// descriptors, KV metadata and zero-copy views of tensor data.
#pragma once

#include "hurray/io/export.hpp"
#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hurray/core/composite.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/element_of.hpp"
#include "hurray/core/lifetime.hpp"
#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"
#include "hurray/core/tensor_ref.hpp"
#include "hurray/core/tensor_view.hpp"
#include "hurray/io/file_format.hpp"
#include "hurray/io/kv_metadata.hpp"
#include "hurray/io/range_source.hpp"
#include "hurray/io/shared_buffer.hpp"
#include "hurray/io/typed_buffer.hpp"

namespace hurray {

/// How tensor data will be accessed; passed to `madvise`.
enum class AccessPattern : uint8_t {
    kNormal,      ///< No hint.
    kSequential,  ///< Read front to back once (aggressive read-ahead).
    kRandom,      ///< Scattered reads (no read-ahead).
    kWillNeed,    ///< Start reading it in now.
    kDontNeed,    ///< Done with it; the pages may be dropped.
};

/// When `FileReader` checks each tensor's descriptor. Every choice gives the
/// same guarantee: no byte of a tensor (and no descriptor) is handed out
/// before its descriptor has been decoded, fully validated and checked
/// against its index entry; they differ only in when an error shows up (at
/// `open`, or from the first `descriptor(i)` / `tensor(i)` of that tensor).
/// The structure of the file (header, trailer, index CRC, every entry's
/// offsets, overlaps, names, KV section) is always checked at open.
enum class DescriptorCheck : uint8_t {
    /// At open, each descriptor's magic, version and length; the full decode
    /// on first use. With a descriptor table, from its copies (no descriptor
    /// page touched); a local file without one reads every descriptor with one
    /// pread each (never a page fault on the mapping, which serves data only).
    kPeek,
    /// At open, every descriptor decoded, validated and checked against its
    /// entry (one pass in file order): `open` fails on the first bad one.
    kFull,
    /// Nothing at open beyond the index (names and offsets only, no page of a
    /// descriptor touched); everything `kPeek` and `kFull` check, on first use.
    kLazy,
};

/// Defined when `FileReadOptions::descriptors` (`DescriptorCheck`) exists.
#define HURRAY_HAS_DESCRIPTOR_CHECK 1

/// How `FileReader` opens and checks a file.
struct HURRAY_IO_EXPORT FileReadOptions {
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
    /// Map the file copy-on-write (`PROT_READ | PROT_WRITE`, `MAP_PRIVATE`)
    /// instead of read-only. The spans handed out stay `const`, but a caller
    /// that checks `FileReader::copy_on_write()` may write into a tensor's
    /// data bytes: the first write to a page gives this process a private
    /// copy of it, so writes never reach the file or other processes, and are
    /// seen through every span of this reader over that data (not by other
    /// readers of the same file). Writing anywhere but tensor data (headers,
    /// descriptors, the index) is undefined: descriptors are decoded lazily
    /// from the mapping. Costs nothing until a page is written, except that a
    /// strict overcommit policy (`vm.overcommit_memory = 2`) counts the whole
    /// file against the commit limit. `advise(kDontNeed)` discards written
    /// pages (the file's bytes reappear). Has no effect when the file is not
    /// mapped (`use_mmap` false, or the mapping failed): check
    /// `copy_on_write()`.
    bool copy_on_write = false;
    /// When descriptors are checked (see `DescriptorCheck`); the default
    /// checks their first bytes at open and decodes each on first use.
    ///
    /// @code
    /// hurray::FileReadOptions o;
    /// o.descriptors = hurray::DescriptorCheck::kFull;  // a bad descriptor fails open
    /// auto file = hurray::FileReader::open("model.hrry", o);
    /// @endcode
    DescriptorCheck descriptors = DescriptorCheck::kPeek;
    /// Range sources only (`open(std::shared_ptr<RangeSource>, ...)`): the
    /// size of the first read at open, from the file's end. The default, 0,
    /// is exact: the 40-byte trailer alone first, then exactly the header,
    /// the index and the KV section (index and KV as one range when side by
    /// side) in one `RangeSource::read_ranges` call: at most 3 requests (2
    /// where the source sends several ranges in one request), and the bytes
    /// read are those of the header, index, KV section and trailer. Values
    /// 1-39 act as 0 (a read smaller than the trailer would be followed by
    /// another for the trailer). A larger value reads that much speculatively
    /// (e.g. 64 KiB: for a small file the trailer, index, KV section and
    /// header in one request, which saves a round trip on files of up to that
    /// size, at the price of the bytes it reads beyond the sections); over
    /// HTTP set `HttpOptions::tail_bytes` to the same value, so that the
    /// request at open brings them. Whatever the size, the sections are read
    /// only where the first read did not hold them.
    ///
    /// @code
    /// hurray::FileReadOptions o;
    /// o.range_tail_bytes = 64 * 1024;   // one request for a file of up to 64 KiB
    /// auto file = hurray::FileReader::open(src, o);
    /// @endcode
    uint64_t range_tail_bytes = 0;
    /// Open a large index (`parallel_open_min` tensors or more) with a second
    /// thread, when this process may use more than one CPU: it hashes the names into
    /// the name table (proving them unique) and computes the index's CRC-32C while
    /// the calling thread reads and checks the entries. The thread is joined before
    /// `open` returns; one that cannot be started is no error (the calling thread
    /// does it all). Off: everything on the calling thread. Open + list on a 2-CPU VM
    /// (docs/descriptor-table.md): 100,000 tensors ~1.35x faster, 1,000,000 ~2x.
    bool parallel_open = true;
    /// The fewest tensors for which `parallel_open` starts a thread (below, starting
    /// it costs more than it saves).
    size_t parallel_open_min = 32768;
};

class FileTensorResult;

/// A composite recovered from a file: its head and its direct members, in
/// descriptor-offset order (file-format.md § Composite Tensors).
struct HURRAY_IO_EXPORT FileComposite {
    /// Position of the head in the index.
    size_t head = 0;
    /// Index positions of the direct members (a nested head is one member).
    std::vector<size_t> members;
};

/// A validated, read-only HRRYFILE container.
///
/// `open` checks, before returning (reading metadata with pread, or through the
/// mapping for an index or KV section of 4 MiB or more; otherwise the file is mapped
/// on the first access to tensor data), everything that does
/// not need a descriptor decoded: header, trailer, CRC-32C of the index, the
/// index (every entry inside it, names valid UTF-8 and unique, sort order
/// when `SORTED_INDEX`, reserved flags zero, descriptors 8-byte aligned and
/// starting with `HRRY` and the length the index gives, data offsets
/// aligned, every descriptor and data region inside the file and not
/// overlapping another, the header, the KV section, the index or the
/// trailer), and the KV section. Descriptors are decoded lazily, once each
/// (thread-safe), and checked against their entry (`data_length` agreement).
/// Memory at open: O(index size + KV size), never more than the file bounds.
/// A file truncated in place by another process while mapped does not kill
/// the process: the library handles SIGBUS for its own mappings (chaining
/// any handler the program installed), the vanished pages read as zeros,
/// and `check_unchanged` (which the library's bulk reads call) reports
/// "file changed while mapped". A file replaced by rename (how FileWriter
/// saves) does not affect a reader at all. `use_mmap = false` reads with
/// `pread` into owned memory instead, for callers that prefer a copy. Without a mapping, a tensor's
/// data is read
/// (`pread`) on its first access and kept until the file is closed, so its
/// buffers live exactly as long as mapped ones would. The spans in `FileReadOptions::descriptor`
/// are copied at open.
///
/// Lookup by name: binary search when the index is sorted, a hash table
/// otherwise (built at open); neither allocates.
///
/// Lifetime: a `FileReader` is a handle to the opened file. Copies share it
/// (one reference count, nothing re-read or re-checked), and every
/// `FileTensor`, `SharedBuffer` and `TensorView` it hands out holds a share
/// too, so they stay valid after the reader that made them is gone. The file
/// is closed and unmapped when the last of them is destroyed. Safe to use
/// from several threads at once (it is immutable after open; lazy decoding
/// is synchronised).
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
class HURRAY_IO_EXPORT FileReader {
public:
    /// Opens and validates the file at `path`.
    static Result<FileReader> open(const std::filesystem::path& path,
                                   const FileReadOptions& options = {});
    /// Opens and validates the file behind `source` (a local file, memory,
    /// an HTTP URL: see `RangeSource`), with exactly the checks and error
    /// messages of a local file; errors are prefixed with the source's
    /// `name()` when it has one. Tensor data is read on first access into
    /// owned memory and kept until the file is closed, as without a mapping;
    /// `mapped()` is false and `advise` does nothing. Requests at open
    /// (`FileReadOptions::range_tail_bytes` sets the first read's size; by
    /// default the trailer alone), then, in one `read_ranges` call, the
    /// 64-byte header and the index and KV section together (only what the
    /// first read did not hold): at most 3 requests, the bytes of those
    /// sections and nothing more. Without a descriptor table, with
    /// `DescriptorCheck::kPeek` (the default) or `kFull`, the descriptors the
    /// first read did not hold come in one more `read_ranges` call (one
    /// request per descriptor on a server that sends one range per request;
    /// use `kLazy` to defer them: a tensor's first use then costs one request
    /// for its descriptor and its data).
    ///
    /// @code
    /// auto src = std::make_shared<hurray::MemoryRangeSource>(bytes);
    /// hurray::FileReadOptions o;
    /// o.descriptors = hurray::DescriptorCheck::kLazy;   // fewest requests at open
    /// auto file = hurray::FileReader::open(src, o);
    /// uint64_t requests = src->request_count();
    /// @endcode
    static Result<FileReader> open(std::shared_ptr<RangeSource> source,
                                   const FileReadOptions& options = {});
    /// Validates a file held in memory. `owner` keeps `bytes` alive (it is
    /// shared by every buffer handed out); without one, `bytes` must outlive
    /// the reader and its buffers.
    static Result<FileReader> open_memory(std::span<const uint8_t> bytes,
                                          std::shared_ptr<const void> owner = {},
                                          const FileReadOptions& options = {});

    /// Another handle to the same opened file (shares it; copies nothing).
    FileReader(const FileReader& other) noexcept;
    /// Makes this a handle to `other`'s file.
    FileReader& operator=(const FileReader& other) noexcept;
    /// Moves the handle; `other` is left empty (only destruction and
    /// assignment are valid on it).
    FileReader(FileReader&& other) noexcept;
    /// Moves the handle; `other` is left empty.
    FileReader& operator=(FileReader&& other) noexcept;
    /// Releases this handle; the file is closed when no handle, tensor or
    /// buffer refers to it any more.
    ~FileReader();

    /// The file header.
    [[nodiscard]] const FileHeader& header() const noexcept HURRAY_LIFETIMEBOUND;
    /// The trailer.
    [[nodiscard]] const FileTrailer& trailer() const noexcept HURRAY_LIFETIMEBOUND;
    /// Size of the file in bytes.
    [[nodiscard]] uint64_t file_size() const noexcept;
    /// Whether the file's data is served from a memory mapping (false: pread fallback or
    /// memory). The mapping is made on the first access to tensor data, not by `open`
    /// (listing never pays for it); should it fail then, the reader reads with pread and
    /// this turns false.
    [[nodiscard]] bool mapped() const noexcept;
    /// Whether the file is mapped copy-on-write (`FileReadOptions::copy_on_write`
    /// was set and the mapping succeeded): only then may tensor data bytes be
    /// written through a `const_cast` of the spans this reader hands out.
    [[nodiscard]] bool copy_on_write() const noexcept;
    /// The KV metadata (empty when the file has none). The descriptor table's entry
    /// (`kDescriptorTableKey`) is a format artifact, not metadata: it is not listed.
    [[nodiscard]] const KvMetadata& kv() const noexcept HURRAY_LIFETIMEBOUND;
    /// The size of the file's descriptor table (hurray/io/descriptor_table.hpp) when it
    /// has a well-formed one, which the reader lists the tensors from; nullopt when
    /// the descriptors are read in place.
    [[nodiscard]] std::optional<uint64_t> descriptor_table_bytes() const noexcept;

    /// Number of tensors (index entries). Inline: listing calls it per tensor.
    [[nodiscard]] size_t tensor_count() const noexcept { return entries_.size(); }
    /// Index entry `i`, in index order. Precondition: `i < tensor_count()`.
    /// Its name views the file's index: valid while this reader, a copy of it
    /// or a tensor of it is alive. Inline: listing calls it per tensor.
    [[nodiscard]] const IndexEntry& entry(size_t i) const HURRAY_LIFETIMEBOUND { return entries_[i]; }
    /// Position of the tensor named `name`, or nothing.
    [[nodiscard]] std::optional<size_t> find(std::string_view name) const;
    /// Index positions sorted by `descriptor_offset` (write order).
    [[nodiscard]] std::span<const size_t> write_order() const noexcept HURRAY_LIFETIMEBOUND;

    /// The descriptor of tensor `i`, decoded and checked on first use. Tensors whose
    /// descriptors are the same bytes (a model's layers repeat a few shapes) share one
    /// decoded descriptor, kept once (the same pointer for each of them), and each
    /// tensor's index entry is checked against it on every call: listing 100,000
    /// tensors of one shape this way decodes one descriptor and keeps ~600 bytes.
    [[nodiscard]] Result<const TensorDescriptor*> descriptor(size_t i) const;
    /// The descriptor of the tensor named `name` (`kNotFound` when absent).
    [[nodiscard]] Result<const TensorDescriptor*> descriptor(std::string_view name) const;
    /// Tensor `i`'s descriptor, decoded and checked exactly as `descriptor(i)`
    /// does, into `out`, without keeping it (a copy when it is kept already).
    /// For a caller that wants its own object; to list a file, `descriptor(i)` is
    /// cheaper when descriptors repeat (one decode per distinct descriptor), and
    /// this when each tensor's is different (a kept descriptor takes ~570 bytes:
    /// 57 MB for 100,000 different ones, where reusing one `out` costs nothing).
    ///
    /// @code
    /// hurray::TensorDescriptor d;   // reused: its vectors keep their capacity
    /// for (size_t i = 0; i < file.tensor_count(); ++i) {
    ///     if (auto s = file.decode_descriptor(i, d); !s) return s;
    ///     print(file.entry(i).name, d.element_type, d.shape);
    /// }
    /// @endcode
    [[nodiscard]] Status decode_descriptor(size_t i, TensorDescriptor& out) const;
    /// The raw bytes of tensor `i`'s descriptor.
    [[nodiscard]] Result<SharedBuffer> descriptor_bytes(size_t i) const;

    /// Copies bytes [offset, offset + out.size()) of tensor `i`'s data region
    /// (`data_offset` to `data_offset + data_length`: its buffers and the
    /// padding between them) into `out`, the caller's memory; nothing is
    /// kept. Over a `RangeSource` it is one read of the source straight into
    /// `out` (with `HttpRangeSource`, large reads go as parallel ranges), so a
    /// remote tensor can land in a pinned or preallocated buffer, in pieces
    /// of any size; a mapped file is copied (then checked unchanged), a pread
    /// file read with pread. Needs no descriptor. `kInvalidArgument` when `i`
    /// or the range is out of bounds; the source's errors otherwise.
    ///
    /// @code
    /// std::vector<uint8_t> mine(file->entry(i).data_length);
    /// HURRAY_RETURN_IF_ERROR(file->read_data(i, 0, mine));
    /// @endcode
    [[nodiscard]] Status read_data(size_t i, uint64_t offset, std::span<uint8_t> out) const;

    /// Tensor `i`: descriptor and zero-copy buffers (`kInvalidArgument` when
    /// `i >= tensor_count()`).
    [[nodiscard]] FileTensorResult tensor(size_t i) const;
    /// The tensor named `name` (`kNotFound` when there is none).
    [[nodiscard]] FileTensorResult tensor(std::string_view name) const;

    /// The composite whose head is tensor `head`: its members, validated with
    /// the core composite rules (torn or invalid composites are errors).
    [[nodiscard]] Result<FileComposite> composite(size_t head) const;
    /// Decodes every descriptor and checks every composite of the file (in
    /// write order, with `CompositeAssembler`).
    [[nodiscard]] Status check_all() const;
    /// Whether the file changed under the reader since it was opened: its
    /// size is no longer the same, or (mapped) a read of its pages faulted
    /// because it shrank. `kIoError` "file changed while mapped: it was N
    /// bytes when opened, it is M now; reading byte K failed (SIGBUS) ...".
    /// The library's own bulk reads (`FileTensor::materialize`,
    /// `to_float32`, `file_to_stream`, the `hurray` tool) check this before
    /// they return, so a result built from a vanished page is an error, not
    /// zeros; call it after reading zero-copy spans yourself when the file
    /// may be rewritten in place.
    ///
    /// @code
    /// auto sum = sum_bytes(file->tensor("w")->buffers()[0].span());
    /// if (auto s = file->check_unchanged(); !s) return s.error();   // the sum is not trustworthy
    /// @endcode
    [[nodiscard]] Status check_unchanged() const;

    /// Applies an access hint (`madvise`) to the whole mapping. Succeeds
    /// without doing anything when the file is not mapped.
    [[nodiscard]] Status advise(AccessPattern pattern) const;
    /// Applies an access hint to the pages holding tensor `i`'s data region
    /// (rounded out to whole pages). No-op success when not mapped.
    [[nodiscard]] Status advise(size_t i, AccessPattern pattern) const;

private:
    friend class FileTensor;
    struct Impl;
    explicit FileReader(std::shared_ptr<Impl> impl) noexcept;
    std::shared_ptr<Impl> impl_;
    // The index entries, owned by *impl_ and never changed after open (empty in a
    // moved-from reader).
    std::span<const IndexEntry> entries_;
};

/// A tensor of an opened file: its index entry, descriptor and zero-copy
/// buffers.
///
/// It shares ownership of the file (see `FileReader`): everything it returns
/// by reference or span — name, entry, descriptor, buffers, the spans of
/// `as<T>()` and `bytes()` — stays valid while this tensor, a copy of it, or
/// any handle to its file lives, mapped or not. `view()` returns a
/// `TensorView` that holds its own share, so it may outlive everything else.
///
/// @code
/// auto file = hurray::FileReader::open("model.hrry");
/// auto w = file->tensor("w");                 // FileTensorResult
/// auto values = w.as<float>();                // Result<TypedBuffer<float>>: holds the storage
/// auto all = w.to_float32();                  // any type, layout, quantization
/// @endcode
class HURRAY_IO_EXPORT FileTensor {
public:
    /// Position of the tensor in the index.
    [[nodiscard]] size_t index() const noexcept { return index_; }
    /// Its index entry (name, descriptor and data offsets).
    [[nodiscard]] const IndexEntry& entry() const noexcept HURRAY_LIFETIMEBOUND { return *entry_; }
    /// Its name.
    [[nodiscard]] std::string_view name() const noexcept HURRAY_LIFETIMEBOUND { return entry_->name; }
    /// Its decoded and checked descriptor.
    [[nodiscard]] const TensorDescriptor& descriptor() const noexcept HURRAY_LIFETIMEBOUND { return *descriptor_; }
    /// The element type (for a composite head, the logical type).
    [[nodiscard]] ElementType element_type() const noexcept { return descriptor_->element_type; }
    /// The shape.
    [[nodiscard]] std::span<const uint64_t> shape() const noexcept HURRAY_LIFETIMEBOUND { return descriptor_->shape; }
    /// Whether it is a composite head (no buffers of its own; its members are
    /// other tensors of the file, see `FileReader::composite`).
    [[nodiscard]] bool is_composite() const noexcept;
    /// One buffer per entry of the descriptor's buffer table, each exactly its
    /// declared size; zero-copy views into the mapping when mapped.
    [[nodiscard]] std::span<const SharedBuffer> buffers() const noexcept HURRAY_LIFETIMEBOUND {
        return buffer_count_ <= kInlineBuffers ? std::span<const SharedBuffer>(inline_buffers_.data(), buffer_count_)
                                               : std::span<const SharedBuffer>(more_buffers_);
    }
    /// The file it belongs to.
    [[nodiscard]] const FileReader& file() const noexcept HURRAY_LIFETIMEBOUND { return file_; }

    /// A `TensorView` over its buffers (addressing, materialization), holding
    /// a share of the file so that it stays valid on its own. Composite heads
    /// have no view (`kUnsupported`).
    [[nodiscard]] Result<TensorView> view() const;

    /// The data of a dense, row-major, unquantized tensor whose elements are
    /// whole bytes (not bool or 1/2/4/6-bit types): the bytes of element
    /// [0, ..., 0] onward, one element after another, zero-copy, holding a
    /// share of their storage (valid on their own). The error says which
    /// condition failed.
    [[nodiscard]] Result<SharedBuffer> bytes() const;

    /// The elements as `T`, zero-copy, in a `TypedBuffer` that holds a share
    /// of their storage (valid on its own, after the file is closed too;
    /// it converts to `std::span<const T>` where it is kept alive): the
    /// tensor must be dense and row-major
    /// (or strided with row-major strides), unquantized, of the element type
    /// that stores `T` (`element_type_of<T>()`: `float` for float32,
    /// `hurray::float16_t` for float16, `int8_t` for int8, ...), and its data
    /// aligned for `T` (always true for a mapped file). Otherwise the error
    /// (`kTypeMismatch`, `kUnsupported`) says which condition failed; use
    /// `to_float32()` for any tensor.
    ///
    /// @code
    /// auto w = file->tensor("w").as<float>();
    /// if (!w) { std::fprintf(stderr, "%s\n", w.error().to_string().c_str()); return 1; }
    /// float first = (*w)[0];
    /// @endcode
    template <TensorElement T>
    [[nodiscard]] Result<TypedBuffer<T>> as() const {
        auto data = typed_bytes(element_type_of<T>(), alignof(T), element_cpp_name<T>());
        if (!data) {
            return std::move(data).error();
        }
        // SAFETY: typed_bytes checked that the bytes hold whole elements of the
        // type that stores T (same size and representation, little-endian),
        // aligned for T; T is trivially copyable, so the bytes are T objects
        // (implicit object creation). Their owner comes with them.
        return TypedBuffer<T>(std::span<const T>(reinterpret_cast<const T*>(data->data()), data->size() / sizeof(T)),
                              data->owner());
    }

    /// Every logical element in row-major order as storage bytes of the
    /// element type (packed types packed), for any layout: a composite head is
    /// assembled from its members (`materialize_composite`; nested heads are
    /// `kUnsupported`), other tensors are densified (`TensorView::materialize`).
    /// Quantized tensors give their stored codes. A new vector (a copy).
    [[nodiscard]] Result<std::vector<uint8_t>> materialize() const;

    /// Every logical element as float32, in row-major order, for any tensor:
    /// dequantized, densified (sparse, tiled, paged, strided layouts),
    /// converted from the element type, composites materialized from their
    /// members. A new vector (a copy).
    [[nodiscard]] Result<std::vector<float>> to_float32() const;

    /// A `TensorRef` to write this tensor elsewhere unchanged (same
    /// descriptor, zero-copy buffers); valid while this tensor lives.
    [[nodiscard]] TensorRef ref() const;

private:
    friend class FileReader;
    FileTensor(FileReader file, size_t index, const IndexEntry* entry,
               const TensorDescriptor* descriptor)
        : file_(std::move(file)), index_(index), entry_(entry), descriptor_(descriptor) {}
    [[nodiscard]] Result<SharedBuffer> typed_bytes(ElementType want, size_t alignment, const char* cpp_name) const;
    /// One span per buffer.
    [[nodiscard]] std::vector<std::span<const uint8_t>> spans() const;
    /// Appends the next of `count` buffers (the same `count` every call).
    void add_buffer(SharedBuffer b, size_t count);

    /// Buffers held inline (dense tensors have 1, quantized ones 2-3), so
    /// that `FileReader::tensor` allocates nothing for them.
    static constexpr size_t kInlineBuffers = 3;

    FileReader file_;
    size_t index_ = 0;
    const IndexEntry* entry_ = nullptr;
    const TensorDescriptor* descriptor_ = nullptr;
    std::array<SharedBuffer, kInlineBuffers> inline_buffers_{};  // the buffers, when at most kInlineBuffers
    std::vector<SharedBuffer> more_buffers_;                    // all of them, when more
    size_t buffer_count_ = 0;
};

/// The outcome of looking a tensor up: a `Result<FileTensor>` whose
/// conversions can be called directly, passing an error on (like simdjson's
/// results), so that `file["w"].as<float>()` is one checked expression.
///
/// @code
/// auto w = file.tensor("w").as<float>();   // kNotFound if there is no "w"
/// if (!w) return w.error();
/// @endcode
class HURRAY_IO_EXPORT FileTensorResult : public Result<FileTensor> {
public:
    using Result<FileTensor>::Result;

    /// `FileTensor::as<T>()`, or this result's error.
    template <TensorElement T>
    [[nodiscard]] Result<TypedBuffer<T>> as() const {
        return then([](const FileTensor& t) { return t.template as<T>(); });
    }
    /// `FileTensor::bytes()`, or this result's error.
    [[nodiscard]] Result<SharedBuffer> bytes() const {
        return then([](const FileTensor& t) { return t.bytes(); });
    }
    /// `FileTensor::materialize()`, or this result's error.
    [[nodiscard]] Result<std::vector<uint8_t>> materialize() const {
        return then([](const FileTensor& t) { return t.materialize(); });
    }
    /// `FileTensor::to_float32()`, or this result's error.
    [[nodiscard]] Result<std::vector<float>> to_float32() const {
        return then([](const FileTensor& t) { return t.to_float32(); });
    }
    /// `FileTensor::view()`, or this result's error.
    [[nodiscard]] Result<TensorView> view() const {
        return then([](const FileTensor& t) { return t.view(); });
    }

private:
    /// `f(tensor)`, or this result's error in the type `f` returns.
    template <typename F>
    [[nodiscard]] auto then(F f) const -> decltype(f(std::declval<const FileTensor&>())) {
        if (!ok()) {
            return error();
        }
        return f(value());
    }
};

}  // namespace hurray
