// SPDX-License-Identifier: Apache-2.0
/// @file
/// `ReadOnlyFile`: the bytes of one regular file, read safely: a read-only
/// mapping guarded against SIGBUS (pread when mapping is off or fails), or
/// bytes in memory. The one way libhurray's readers of other formats
/// (SafeTensors, GGUF, NumPy) reach a file; a reader of a new format should
/// use it too.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

#include "hurray/core/result.hpp"
#include "hurray/io/export.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/range_source.hpp"
#include "hurray/io/shared_buffer.hpp"

namespace hurray {

namespace detail {
class FileSource;
}  // namespace detail

/// A regular file opened for reading. Copies share the open file.
///
/// A mapped file that shrinks while it is read does not kill the process:
/// the vanished pages read as zeros (a process-wide SIGBUS guard), and
/// `check_unchanged()` reports the change, so a reader checks it after
/// copying bytes out. Slices handed out (`read` on a mapping) share the
/// mapping: they stay valid after the `ReadOnlyFile` is gone. Thread-safe
/// for concurrent reads.
///
/// @code
/// HURRAY_ASSIGN_OR_RETURN(hurray::ReadOnlyFile f, hurray::ReadOnlyFile::open("m.gguf"));
/// HURRAY_ASSIGN_OR_RETURN(hurray::SharedBuffer head, f.read(0, 24, "header"));
/// HURRAY_RETURN_IF_ERROR(f.check_unchanged());  // the bytes read are the file's
/// @endcode
class HURRAY_IO_EXPORT ReadOnlyFile {
public:
    /// Opens `path`. With `use_mmap` the file is mapped on first use (pread
    /// from then on, should that fail); without, every read is a pread.
    /// Fails with `kIoError` naming the path (`Error::file`) when it cannot
    /// be opened or is not a regular file.
    static Result<ReadOnlyFile> open(const std::filesystem::path& path, bool use_mmap = true);
    /// Wraps `bytes` in memory; `owner` (may be null) keeps them alive for
    /// every copy and every slice.
    static ReadOnlyFile memory(std::span<const uint8_t> bytes, std::shared_ptr<const void> owner = nullptr);
    /// The bytes of `source` (an HTTP file, a local file, memory: see
    /// `RangeSource`), read on demand: every `read` is a range of the source
    /// copied into owned memory, so the file is never `contiguous()`. Errors
    /// name the source as its own reads do.
    static ReadOnlyFile range(std::shared_ptr<RangeSource> source);

    /// The file's size in bytes, fixed at open.
    [[nodiscard]] uint64_t size() const noexcept;
    /// Whether `read` hands out zero-copy slices (memory, or a mapping that
    /// has not failed).
    [[nodiscard]] bool contiguous() const noexcept;
    /// The bytes [offset, offset + length): a zero-copy slice when
    /// contiguous, a fresh buffer read with pread otherwise. `kTruncated`
    /// when the range leaves the file (naming `what`), `kIoError` when a
    /// read fails. A slice of a mapping may show zeros where the file shrank
    /// since: call `check_unchanged` after using it.
    [[nodiscard]] Result<SharedBuffer> read(uint64_t offset, uint64_t length, const char* what) const;
    /// Copies [offset, offset + out.size()) into `out`, then checks that the
    /// file did not change (a mapping's vanished pages read as zeros):
    /// `kTruncated` past the end (naming `what`), `kIoError` otherwise.
    [[nodiscard]] Status read_into(uint64_t offset, std::span<uint8_t> out, const char* what) const;
    /// Tells the kernel how [offset, offset + length) will be used (madvise;
    /// `kDontNeed` drops this process's pages of it). A hint: does nothing
    /// without a mapping, and never fails.
    void advise(uint64_t offset, uint64_t length, AccessPattern pattern) const noexcept;
    /// `kIoError` when the file changed size, or a mapped page faulted,
    /// since it was opened; success for memory.
    [[nodiscard]] Status check_unchanged() const;

private:
    explicit ReadOnlyFile(std::shared_ptr<const detail::FileSource> source) noexcept;
    std::shared_ptr<const detail::FileSource> source_;
};

}  // namespace hurray
