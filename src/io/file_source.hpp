// SPDX-License-Identifier: Apache-2.0
// Internal: the bytes behind a FileReader. A read-only private mapping of the
// whole file (zero-copy), a pread-based fallback (each range read into its own
// heap buffer), bytes the caller already holds in memory, or a RangeSource
// (each range read into owned memory, a few prefetched windows kept). This file and
// file_source.cpp are the only places of the reader that make system calls or
// touch raw pointers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/io/export.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/range_source.hpp"
#include "hurray/io/shared_buffer.hpp"
#include "io/sigbus_guard.hpp"

namespace hurray::detail {

/// Random access to the bytes of one file. Copying shares the backing store.
class FileSource {
public:
    /// How the bytes are held.
    enum class Kind : uint8_t {
        kMapped,  ///< mmap of the whole file (PROT_READ, MAP_PRIVATE; PROT_WRITE too when
                  ///< copy-on-write), made on first use (see `open`).
        kPread,   ///< An open descriptor; ranges are read on demand.
        kMemory,  ///< Caller-provided bytes.
        kRange,   ///< A RangeSource; ranges are read on demand into owned memory.
    };

    /// Opens `path`. With `use_mmap` (and a non-empty file) the source is
    /// `kMapped`: the whole file is mapped on the first access to its bytes
    /// (view, read, read_into, advise), not here, so that a reader that only
    /// lists the file (metadata read with pread) never pays for the mapping
    /// (mmap + munmap of a large file: 10-50 us here). Should that mapping
    /// fail, the source reads with pread from then on (`contiguous()` and
    /// `mapping_failed()` say so). `copy_on_write` maps it writable and
    /// private (writes stay in this process; see
    /// `FileReadOptions::copy_on_write`) at once, falling back to `kPread`
    /// when that fails. Without `use_mmap`, the descriptor is kept for pread.
    /// Fails with `kIoError` when the file cannot be opened or is not a
    /// regular file.
    static Result<FileSource> open(const std::string& path, bool use_mmap,
                                   bool copy_on_write = false);

    /// Wraps bytes in memory; `owner` (may be null) keeps them alive.
    static FileSource memory(std::span<const uint8_t> bytes, std::shared_ptr<const void> owner);

    /// Reads through `range` (not null); its size is the file's.
    static FileSource range(std::shared_ptr<RangeSource> range);

    /// Range sources: reads [offset, offset + length) (clamped to the file)
    /// and keeps it, so that later `read`s inside it cost no request. Only
    /// the bytes no window holds yet are read: one request when they are one
    /// run (a range that ends inside a window is cut where the window
    /// begins), one `read_ranges` call otherwise. `keep` windows live as long
    /// as the source; the others until `drop_transient`. A no-op for the
    /// other kinds and for an empty range. Not thread-safe: only while the
    /// source is not shared (at open).
    [[nodiscard]] Status prefetch(uint64_t offset, uint64_t length, bool keep);
    /// Range sources: reads every range of `ranges` ((offset, length) pairs,
    /// each inside the file, in any order) with one `RangeSource::read_ranges`
    /// call, after merging ranges that overlap or touch and leaving out the
    /// bytes a window holds already (a range that overlaps a window is cut to
    /// the part outside it); keeps them as long as the source (binary
    /// searched, so 100,000 of them cost O(log n) per read). A no-op for
    /// the other kinds. Not thread-safe (see prefetch).
    /// Errors name `what`.
    [[nodiscard]] Status prefetch_many(std::vector<std::pair<uint64_t, uint64_t>> ranges, const char* what);
    /// Whether [offset, offset + length) lies inside the prefetched windows
    /// (one, or several side by side).
    [[nodiscard]] bool prefetched(uint64_t offset, uint64_t length) const noexcept;
    /// Drops the windows prefetched without `keep`. Not thread-safe (see prefetch).
    void drop_transient() noexcept;

    /// Size of the file in bytes.
    [[nodiscard]] uint64_t size() const noexcept { return size_; }
    /// How the bytes are held.
    [[nodiscard]] Kind kind() const noexcept { return kind_; }
    /// Whether the bytes are a copy-on-write mapping that may be written.
    [[nodiscard]] bool writable() const noexcept { return writable_; }
    /// Whether every byte is addressable without a copy (memory, or mapped
    /// unless the mapping failed). True for a mapped source not mapped yet.
    [[nodiscard]] bool contiguous() const noexcept {
        return kind_ == Kind::kMemory || (kind_ == Kind::kMapped && !mapping_failed());
    }
    /// Whether a mapped source's mapping was tried and failed (the source then
    /// reads with pread); false for the other kinds.
    [[nodiscard]] bool mapping_failed() const noexcept;

    /// The `length` bytes at `offset` as a plain span, without taking a share
    /// of the owner (no reference count traffic, no allocation): for reads
    /// that end before the source does, such as decoding metadata. Only for
    /// contiguous sources (a mapped one is mapped here if it is not yet); an
    /// empty span when the range leaves the file or the mapping failed.
    [[nodiscard]] std::span<const uint8_t> view(uint64_t offset, uint64_t length) const noexcept {
        const std::span<const uint8_t> all = whole();
        if (offset > all.size() || length > all.size() - offset) {
            return {};
        }
        // Checked just above: offset + length <= all.size(), both fit in size_t.
        return all.subspan(static_cast<size_t>(offset), static_cast<size_t>(length));
    }

    /// The `length` bytes at `offset`: a zero-copy slice when contiguous, a
    /// fresh heap buffer read with pread otherwise. Fails with `kTruncated`
    /// when the range leaves the file (naming `what`) and `kIoError` when a
    /// read fails.
    [[nodiscard]] Result<SharedBuffer> read(uint64_t offset, uint64_t length,
                                            const char* what) const;
    /// Copies [offset, offset + out.size()) into `out`: a copy from the
    /// mapping or memory (then `check_unchanged` for a mapping, whose vanished
    /// pages read as zeros), pread, or one read of the range source (its
    /// prefetched windows first). `kTruncated` when the range leaves the
    /// file (naming `what`); `kIoError` when a read fails.
    [[nodiscard]] Status read_into(uint64_t offset, std::span<uint8_t> out, const char* what) const;
    /// As `read_into`, but a mapped file is read with pread, not through the
    /// mapping: metadata read at open costs a system call, never a page fault on
    /// a data page (a pread is 0.5-2 us where a fault costs 3-50 us).
    [[nodiscard]] Status pread_into_copy(uint64_t offset, std::span<uint8_t> out, const char* what) const;
    /// As `read`, but always a copy of a mapped file's bytes, read with
    /// pread: for metadata that must stay right if the file shrinks under
    /// the mapping (a vanished page reads as zeros); a short read of a mapped
    /// file is reported as `check_unchanged` reports the change. Memory sources
    /// are still viewed, pread sources read as `read` does.
    [[nodiscard]] Result<SharedBuffer> read_copy(uint64_t offset, uint64_t length,
                                                 const char* what) const;

    /// Applies `pattern` to the mapped pages covering [offset, offset + length)
    /// (rounded out to whole pages inside the mapping). Succeeds without doing
    /// anything on the pread and memory sources and for an empty range.
    [[nodiscard]] Status advise(uint64_t offset, uint64_t length, AccessPattern pattern) const;

    /// Whether the file changed under the mapping: a read of a mapped page
    /// faulted (the file shrank; the pages from there on now read as zeros,
    /// see sigbus_guard.hpp), or the file's size is not what it was when
    /// it was opened. `kIoError` "file changed while mapped: ..." saying where;
    /// success for unchanged files and for memory sources.
    [[nodiscard]] Status check_unchanged() const;

    /// The mapping of a mapped source, made on first use (shared by copies).
    struct LazyMapping;

private:
    /// Every byte of a contiguous source: the caller's memory, or the mapping
    /// (mapped here on first use); empty for the other kinds, an empty file,
    /// or a mapping that failed.
    [[nodiscard]] std::span<const uint8_t> whole() const noexcept;
    /// pread of [offset, offset + out.size()) into `out`; the range lies
    /// inside the file and its offsets fit in off_t (checked by the callers).
    [[nodiscard]] Status pread_into(uint64_t offset, std::span<uint8_t> out, const char* what) const;
    /// pread of [offset, offset + length), which lies inside the file, into a
    /// fresh heap buffer.
    [[nodiscard]] Result<SharedBuffer> pread_copy(uint64_t offset, uint64_t length, const char* what) const;

    Kind kind_ = Kind::kMemory;
    uint64_t size_ = 0;
    bool writable_ = false;  // a copy-on-write mapping (kMapped only)
    // Memory sources: the caller's bytes, kept alive by owner_. Mapped
    // sources: owner_ shares map_ (whose destructor unmaps the file), which
    // every SharedBuffer handed out holds.
    std::span<const uint8_t> bytes_;
    std::shared_ptr<const void> owner_;
    std::shared_ptr<LazyMapping> map_;
    // The open descriptor, closed when the last copy goes: pread reads
    // through it; a mapped source keeps it to map the file and re-check its size.
    std::shared_ptr<const int> fd_;
    // Range sources: the source, and the prefetched windows (offset, bytes,
    // kept) written only while the source is not shared.
    std::shared_ptr<RangeSource> range_;
    struct Window {
        uint64_t offset = 0;
        SharedBuffer bytes;
        bool keep = false;
    };
    // Sorted by offset and disjoint: prefetch and prefetch_many read only the
    // bytes no window holds.
    std::vector<Window> windows_;
    /// The window holding [offset, end), or null.
    [[nodiscard]] const Window* window_for(uint64_t offset, uint64_t end) const noexcept;
    /// The first window that ends after `offset` (windows_.end() when none).
    [[nodiscard]] std::vector<Window>::const_iterator first_after(uint64_t offset) const noexcept;
    /// Copies [offset, offset + out.size()) from the windows into `out` when
    /// they hold all of it (side by side); false, `out` unspecified, otherwise.
    [[nodiscard]] bool gather(uint64_t offset, std::span<uint8_t> out) const noexcept;
    /// The runs [begin, end) of [offset, end) that no window holds, in order.
    [[nodiscard]] std::vector<std::pair<uint64_t, uint64_t>> missing(uint64_t offset, uint64_t end) const;
    /// Reads the runs [begin, end) (sorted, disjoint, none held) and adds them
    /// as windows: with one `read_ranges` call, or, unless `vectored`, one
    /// `read` for a single run. Errors name `what` when not null.
    [[nodiscard]] Status fetch_runs(const std::vector<std::pair<uint64_t, uint64_t>>& runs, bool keep,
                                    const char* what, bool vectored);
};

}  // namespace hurray::detail
