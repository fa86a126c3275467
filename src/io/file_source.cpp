// SPDX-License-Identifier: Apache-2.0
#include "io/file_source.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <mutex>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "hurray/core/checked_math.hpp"
#include "hurray/core/text.hpp"
#include "hurray/io/os_error.hpp"

namespace hurray::detail {

namespace {


/// Closes a descriptor when the last FileSource copy using it goes away.
struct FdCloser {
    void operator()(const int* fd) const noexcept {
        if (fd != nullptr) {
            // SAFETY: *fd was returned by open() and is owned only by this
            // shared_ptr; close() is called exactly once, from its deleter.
            // Its result is ignored: nothing was written through the fd.
            static_cast<void>(::close(*fd));
            delete fd;  // NOLINT(cppcoreguidelines-owning-memory): paired with the new in open()
        }
    }
};

int to_madvise(AccessPattern pattern) noexcept {
    switch (pattern) {
        case AccessPattern::kNormal:
            return MADV_NORMAL;
        case AccessPattern::kSequential:
            return MADV_SEQUENTIAL;
        case AccessPattern::kRandom:
            return MADV_RANDOM;
        case AccessPattern::kWillNeed:
            return MADV_WILLNEED;
        case AccessPattern::kDontNeed:
            return MADV_DONTNEED;
    }
    return MADV_NORMAL;
}

}  // namespace

/// The whole-file mapping of a mapped source, made by the first access that needs
/// it (from any thread: the first caller maps under the mutex, later ones see the
/// published base), and unmapped when the last source copy or SharedBuffer holding
/// it goes away.
struct FileSource::LazyMapping {
    size_t length = 0;              // the file's size at open
    bool writable = false;          // copy-on-write
    std::atomic<const uint8_t*> base{nullptr};
    std::atomic<bool> failed{false};
    std::mutex mutex;
    // The SIGBUS registration (none when the registry was full); written before
    // `base` is published, read only after it is seen.
    std::optional<MappingWatch> watch;

    LazyMapping() = default;
    LazyMapping(const LazyMapping&) = delete;
    LazyMapping& operator=(const LazyMapping&) = delete;
    LazyMapping(LazyMapping&&) = delete;
    LazyMapping& operator=(LazyMapping&&) = delete;

    ~LazyMapping() {
        const uint8_t* b = base.load(std::memory_order_acquire);
        if (b == nullptr) {
            return;
        }
        if (watch) {
            unwatch_mapping(*watch);  // before the range can be reused
        }
        // SAFETY: b and length are exactly what mmap() returned and was given;
        // this runs once, after every span into the mapping was dropped with
        // the last share of this object.
        static_cast<void>(::munmap(const_cast<uint8_t*>(b), length));  // NOLINT(cppcoreguidelines-pro-type-const-cast)
    }

    /// The mapped bytes, mapped now (from `fd`, the source's descriptor) if they are
    /// not yet; empty when mapping failed.
    std::span<const uint8_t> get(int fd) noexcept {
        const uint8_t* b = base.load(std::memory_order_acquire);
        if (b != nullptr) {
            return {b, length};
        }
        if (failed.load(std::memory_order_acquire)) {
            return {};
        }
        return map_now(fd);
    }

    /// Whether the bytes are mapped already (nothing is mapped here).
    [[nodiscard]] bool mapped() const noexcept { return base.load(std::memory_order_acquire) != nullptr; }

private:
    std::span<const uint8_t> map_now(int fd) noexcept {
        const std::lock_guard<std::mutex> lock(mutex);
        const uint8_t* b = base.load(std::memory_order_acquire);
        if (b != nullptr || failed.load(std::memory_order_acquire)) {
            return b != nullptr ? std::span<const uint8_t>(b, length) : std::span<const uint8_t>{};
        }
        // SAFETY: a private mapping of the whole file, from offset 0, of its
        // size at fstat time (open): read-only, or copy-on-write (PROT_WRITE
        // with MAP_PRIVATE needs only the O_RDONLY descriptor; writes go to
        // private anonymous pages, never to the file). The result is checked
        // against MAP_FAILED before use. Pages past a later truncation (before
        // or after this call) raise SIGBUS; the mapping is registered with the
        // SIGBUS guard before it is published, which turns such a read into
        // zeros plus a recorded change (sigbus_guard.hpp, check_unchanged).
        const int prot = writable ? (PROT_READ | PROT_WRITE) : PROT_READ;  // NOLINT(hicpp-signed-bitwise)
        void* m = ::mmap(nullptr, length, prot, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            failed.store(true, std::memory_order_release);
            return {};
        }
        watch = watch_mapping(m, length, writable);
        b = static_cast<const uint8_t*>(m);
        base.store(b, std::memory_order_release);
        // SAFETY: the mapping covers exactly `length` readable bytes from b and
        // stays valid as long as this object lives.
        return {b, length};
    }
};

Result<FileSource> FileSource::open(const std::string& path, bool use_mmap, bool copy_on_write) {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is rejected
    // below as not a regular file. The flag has no effect on regular files.
    // SAFETY: path.c_str() is a valid NUL-terminated string for the call.
    const int raw_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // NOLINT(cppcoreguidelines-pro-type-vararg)
    if (raw_fd < 0) {
        return os_error("open '" + path + "'", errno);
    }
    std::shared_ptr<const int> fd(new int(raw_fd), FdCloser{});  // NOLINT(cppcoreguidelines-owning-memory)

    struct stat st {};
    // SAFETY: st is a local, writable struct stat; fd is open.
    if (::fstat(*fd, &st) != 0) {
        return os_error("fstat '" + path + "'", errno);
    }
    if (!S_ISREG(st.st_mode)) {  // NOLINT(hicpp-signed-bitwise)
        return Error(ErrorCode::kIoError, "open '" + path + "': not a regular file");
    }
    if (st.st_size < 0) {
        return Error(ErrorCode::kIoError, "fstat '" + path + "': negative size");
    }

    FileSource src;
    src.size_ = static_cast<uint64_t>(st.st_size);
    if (use_mmap && src.size_ > 0 && src.size_ <= SIZE_MAX) {
        auto map = std::make_shared<LazyMapping>();
        map->length = static_cast<size_t>(src.size_);
        map->writable = copy_on_write;
        // Copy-on-write is mapped now: writable() must say whether it holds.
        if (!copy_on_write || !map->get(*fd).empty()) {
            src.kind_ = Kind::kMapped;
            src.writable_ = copy_on_write;
            src.owner_ = std::shared_ptr<const void>(map, map.get());
            src.map_ = std::move(map);
            src.fd_ = std::move(fd);  // kept to read metadata, fall back, re-check the size
            return src;
        }
    }
    src.kind_ = Kind::kPread;
    src.fd_ = std::move(fd);
    return src;
}

std::span<const uint8_t> FileSource::whole() const noexcept {
    if (kind_ == Kind::kMemory) {
        return bytes_;
    }
    return kind_ == Kind::kMapped ? map_->get(*fd_) : std::span<const uint8_t>{};
}

bool FileSource::mapping_failed() const noexcept {
    return kind_ == Kind::kMapped && map_->failed.load(std::memory_order_acquire);
}

FileSource FileSource::memory(std::span<const uint8_t> bytes, std::shared_ptr<const void> owner) {
    FileSource src;
    src.kind_ = Kind::kMemory;
    src.size_ = bytes.size();
    src.bytes_ = bytes;
    src.owner_ = std::move(owner);
    return src;
}

FileSource FileSource::range(std::shared_ptr<RangeSource> range) {
    FileSource src;
    src.kind_ = Kind::kRange;
    src.size_ = range->size();
    src.range_ = std::move(range);
    return src;
}

std::vector<FileSource::Window>::const_iterator FileSource::first_after(uint64_t offset) const noexcept {
    // Windows are sorted and disjoint, so their ends are sorted too. Each lies
    // inside the file: no sum overflows.
    return std::upper_bound(windows_.begin(), windows_.end(), offset,
                            [](uint64_t o, const Window& w) { return o < w.offset + w.bytes.size(); });
}

const FileSource::Window* FileSource::window_for(uint64_t offset, uint64_t end) const noexcept {
    const auto it = first_after(offset);
    if (it == windows_.end() || it->offset > offset || end > it->offset + it->bytes.size()) {
        return nullptr;
    }
    return &*it;
}

bool FileSource::gather(uint64_t offset, std::span<uint8_t> out) const noexcept {
    uint64_t pos = offset;
    const uint64_t end = offset + out.size();  // inside the file (checked by the callers)
    for (auto it = first_after(offset); pos < end; ++it) {
        if (it == windows_.end() || it->offset > pos) {
            return false;  // a byte no window holds
        }
        const uint64_t w_end = it->offset + it->bytes.size();
        const uint64_t stop = std::min(w_end, end);
        const std::span<const uint8_t> from =
            it->bytes.span().subspan(static_cast<size_t>(pos - it->offset), static_cast<size_t>(stop - pos));
        std::copy(from.begin(), from.end(), out.begin() + static_cast<std::ptrdiff_t>(pos - offset));
        pos = stop;
    }
    return true;
}

std::vector<std::pair<uint64_t, uint64_t>> FileSource::missing(uint64_t offset, uint64_t end) const {
    std::vector<std::pair<uint64_t, uint64_t>> runs;
    uint64_t pos = offset;
    for (auto it = first_after(offset); pos < end && it != windows_.end() && it->offset < end; ++it) {
        if (it->offset > pos) {
            runs.emplace_back(pos, it->offset);
        }
        pos = std::max(pos, it->offset + it->bytes.size());
    }
    if (pos < end) {
        runs.emplace_back(pos, end);
    }
    return runs;
}

bool FileSource::prefetched(uint64_t offset, uint64_t length) const noexcept {
    const auto end = add_u64(offset, length);
    if (!end || *end > size_) {
        return false;
    }
    if (window_for(offset, *end) != nullptr) {
        return true;
    }
    // Windows side by side (a range cut where the tail window begins).
    uint64_t pos = offset;
    for (auto it = first_after(offset); pos < *end; ++it) {
        if (it == windows_.end() || it->offset > pos) {
            return false;
        }
        pos = it->offset + it->bytes.size();
    }
    return true;
}

Status FileSource::fetch_runs(const std::vector<std::pair<uint64_t, uint64_t>>& runs, bool keep,
                              const char* what, bool vectored) {
    if (runs.empty()) {
        return Status::success();
    }
    std::vector<std::vector<uint8_t>> bufs;
    std::vector<ByteRange> requests;
    bufs.reserve(runs.size());
    requests.reserve(runs.size());
    for (const auto& [begin, end] : runs) {
        if (end - begin > SIZE_MAX) {
            return Error(ErrorCode::kIoError, std::string(what != nullptr ? what : "prefetch") + ": range too large to read",
                         begin);
        }
        bufs.emplace_back(static_cast<size_t>(end - begin));
        requests.push_back(ByteRange{begin, bufs.back()});
    }
    Status s = requests.size() == 1 && !vectored ? range_->read(requests[0].offset, requests[0].out)
                                                 : range_->read_ranges(requests);
    if (!s) {
        return what != nullptr ? s.error().with_context({.prefix = what}) : s;
    }
    std::vector<Window> added;
    added.reserve(runs.size());
    for (size_t k = 0; k < runs.size(); ++k) {
        added.push_back(Window{runs[k].first, SharedBuffer::from_vector(std::move(bufs[k])), keep});
    }
    // No run overlaps a window (they are what no window holds): the windows
    // stay sorted and disjoint.
    const auto first_new = static_cast<std::ptrdiff_t>(windows_.size());
    windows_.insert(windows_.end(), std::make_move_iterator(added.begin()), std::make_move_iterator(added.end()));
    std::inplace_merge(windows_.begin(), windows_.begin() + first_new, windows_.end(),
                       [](const Window& a, const Window& b) { return a.offset < b.offset; });
    return Status::success();
}

Status FileSource::prefetch_many(std::vector<std::pair<uint64_t, uint64_t>> ranges, const char* what) {
    if (kind_ != Kind::kRange || ranges.empty()) {
        return Status::success();
    }
    std::sort(ranges.begin(), ranges.end());
    // Merge what overlaps or touches.
    std::vector<std::pair<uint64_t, uint64_t>> merged;  // [begin, end)
    for (const auto& [offset, length] : ranges) {
        const auto end = add_u64(offset, length);
        if (!end || *end > size_ || length == 0) {
            return Error(ErrorCode::kIoError, std::string(what) + ": range outside the file", offset);
        }
        if (!merged.empty() && offset <= merged.back().second) {
            merged.back().second = std::max(merged.back().second, *end);
        } else {
            merged.emplace_back(offset, *end);
        }
    }
    // Only what no window holds: a range that reaches into a window (the
    // index and KV section into the tail window) is cut where it begins.
    // Merged ranges neither overlap nor touch, so neither do their runs.
    std::vector<std::pair<uint64_t, uint64_t>> runs;
    for (const auto& [begin, end] : merged) {
        if (window_for(begin, end) != nullptr) {
            continue;
        }
        const auto part = missing(begin, end);
        runs.insert(runs.end(), part.begin(), part.end());
    }
    return fetch_runs(runs, true, what, true);
}

Status FileSource::prefetch(uint64_t offset, uint64_t length, bool keep) {
    if (kind_ != Kind::kRange || offset >= size_ || length == 0) {
        return Status::success();
    }
    length = std::min(length, size_ - offset);  // clamped to the file: no overflow
    return fetch_runs(missing(offset, offset + length), keep, nullptr, false);
}

void FileSource::drop_transient() noexcept {
    std::erase_if(windows_, [](const Window& w) { return !w.keep; });
}

Result<SharedBuffer> FileSource::read(uint64_t offset, uint64_t length, const char* what) const {
    const auto end = add_u64(offset, length);
    if (!end || *end > size_) {
        return Error(ErrorCode::kTruncated,
                     std::string(what) + ": [" + dec(offset) + ", " + (end ? dec(*end) : std::string("2^64+")) +
                         ") lies past the end of the file (" + dec(size_) + " bytes)",
                     offset);
    }
    if (contiguous()) {
        const std::span<const uint8_t> all = whole();
        if (all.size() == size_) {  // not a mapping that failed just now (then: pread below)
            // offset + length <= size_ == all.size(), so both fit in size_t.
            return SharedBuffer(all.subspan(static_cast<size_t>(offset), static_cast<size_t>(length)), owner_);
        }
    }
    if (kind_ == Kind::kRange) {
        if (const Window* w = window_for(offset, *end)) {
            // Inside the window, whose size fits in size_t.
            return w->bytes.slice(static_cast<size_t>(offset - w->offset), static_cast<size_t>(length));
        }
        if (length > SIZE_MAX) {
            return Error(ErrorCode::kIoError, std::string(what) + ": range too large to read", offset);
        }
        if (length == 0) {
            return SharedBuffer();
        }
        if (prefetched(offset, length)) {
            // Held by windows side by side (the index and KV section read up
            // to where the tail window begins): one copy, no request.
            std::vector<uint8_t> joined(static_cast<size_t>(length));
            static_cast<void>(gather(offset, joined));  // held: always true
            return SharedBuffer::from_vector(std::move(joined));
        }
        // Not zero-filled first: the source writes every byte before the
        // buffer is handed out (a tensor's data can be GiBs). (Transparent
        // huge pages and MAP_POPULATE were tried for large buffers: no
        // steadier gain on a 64 MiB tensor, and compaction stalls.)
        const auto size = static_cast<size_t>(length);
        std::shared_ptr<uint8_t[]> buf(new uint8_t[size]);  // NOLINT(modernize-avoid-c-arrays): default-initialised
        if (auto s = range_->read(offset, std::span<uint8_t>(buf.get(), size)); !s) {
            return s.error().with_context({.prefix = what});
        }
        const std::span<const uint8_t> bytes(buf.get(), size);
        std::shared_ptr<const void> owner(std::move(buf));
        return SharedBuffer(bytes, std::move(owner));
    }
    return pread_copy(offset, length, what);
}

Status FileSource::read_into(uint64_t offset, std::span<uint8_t> out, const char* what) const {
    const auto end = add_u64(offset, out.size());
    if (!end || *end > size_) {
        return Error(ErrorCode::kTruncated,
                     std::string(what) + ": [" + dec(offset) + ", " + (end ? dec(*end) : std::string("2^64+")) +
                         ") lies past the end of the file (" + dec(size_) + " bytes)",
                     offset);
    }
    if (out.empty()) {
        return Status::success();
    }
    if (const std::span<const uint8_t> all = whole(); all.size() == size_ && !all.empty()) {
        // SAFETY: [offset, end) lies inside `all` (checked above: end <= size_
        // == all.size(); both fit in size_t), and `out` has exactly out.size()
        // writable bytes; the two do not overlap (`out` is the caller's, not
        // the file's).
        std::memcpy(out.data(), all.data() + offset, out.size());
        return kind_ == Kind::kMapped ? check_unchanged() : Status::success();
    }
    if (kind_ == Kind::kRange) {
        if (gather(offset, out)) {  // held by one window, or by windows side by side
            return Status::success();
        }
        if (auto s = range_->read(offset, out); !s) {
            return s.error().with_context({.prefix = what});
        }
        return Status::success();
    }
    if (offset > static_cast<uint64_t>(INT64_MAX) || *end > static_cast<uint64_t>(INT64_MAX)) {
        return Error(ErrorCode::kIoError, std::string(what) + ": range too large to read", offset);
    }
    return pread_into(offset, out, what);
}

Status FileSource::pread_into_copy(uint64_t offset, std::span<uint8_t> out, const char* what) const {
    const auto end = add_u64(offset, out.size());
    if (kind_ != Kind::kMapped || !end || *end > size_ || *end > static_cast<uint64_t>(INT64_MAX)) {
        return read_into(offset, out, what);  // pread or memory as usual, or read_into's error
    }
    return pread_into(offset, out, what);
}

Result<SharedBuffer> FileSource::read_copy(uint64_t offset, uint64_t length, const char* what) const {
    if (kind_ != Kind::kMapped) {
        return read(offset, length, what);  // already a copy (pread, range), or the caller's memory
    }
    const auto end = add_u64(offset, length);
    if (!end || *end > size_) {
        return read(offset, length, what);  // the same kTruncated error
    }
    auto copy = pread_copy(offset, length, what);
    if (!copy) {
        // A short read of a mapped file is the file changing under the mapping:
        // reported as check_unchanged reports it, as a read through the mapping would be.
        HURRAY_RETURN_IF_ERROR(check_unchanged());
    }
    return copy;
}

Status FileSource::pread_into(uint64_t offset, std::span<uint8_t> out, const char* what) const {
    size_t done = 0;
    while (done < out.size()) {
        // SAFETY: the destination is out[done .. out.size()), inside the
        // caller's span; the count never exceeds what is left. The callers
        // checked that the file offsets fit in off_t.
        const ssize_t n = ::pread(*fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return os_error(std::string("pread ") + what, errno, ErrorCode::kIoError, offset + done);
        }
        if (n == 0) {
            return Error(ErrorCode::kIoError,
                         std::string(what) + ": the file ended at byte " + dec(offset + done) +
                             " while reading (it shrank after it was opened)",
                         offset + done);
        }
        done += static_cast<size_t>(n);
    }
    return Status::success();
}

Result<SharedBuffer> FileSource::pread_copy(uint64_t offset, uint64_t length, const char* what) const {
    const auto end = add_u64(offset, length);  // checked by the callers: in the file
    if (!end || length > SIZE_MAX || offset > static_cast<uint64_t>(INT64_MAX) ||
        *end > static_cast<uint64_t>(INT64_MAX)) {
        return Error(ErrorCode::kIoError, std::string(what) + ": range too large to read", offset);
    }
    if (length == 0) {
        return SharedBuffer();  // no allocation: every empty read is the same null span
    }
    // Not zero-filled first: pread writes every byte before the buffer is
    // handed out (an index of 100,000 entries is ~6 MB).
    const auto size = static_cast<size_t>(length);
    std::shared_ptr<uint8_t[]> buf(new uint8_t[size]);  // NOLINT(modernize-avoid-c-arrays): default-initialised
    HURRAY_RETURN_IF_ERROR(pread_into(offset, std::span<uint8_t>(buf.get(), size), what));
    const std::span<const uint8_t> bytes(buf.get(), size);
    std::shared_ptr<const void> owner(std::move(buf));
    return SharedBuffer(bytes, std::move(owner));
}

Status FileSource::check_unchanged() const {
    if (kind_ == Kind::kMemory) {
        return Status::success();
    }
    if (kind_ == Kind::kRange) {
        return range_->check_unchanged();
    }
    constexpr uint64_t kNone = UINT64_MAX;
    uint64_t now = kNone;
    struct stat st {};
    // SAFETY: st is a local, writable struct stat; fd_ is open while any
    // copy of this source lives.
    if (fd_ && ::fstat(*fd_, &st) == 0 && st.st_size >= 0) {
        now = static_cast<uint64_t>(st.st_size);
    }
    uint64_t fault = kNone;
    if (map_ && map_->mapped() && map_->watch) {
        fault = mapping_fault(*map_->watch).value_or(kNone);
    }
    const bool resized = now != kNone && now != size_;
    if (fault == kNone && !resized) {
        return Status::success();
    }
    std::string msg = std::string(kind_ == Kind::kMapped ? "file changed while mapped: it was "
                                                         : "file changed while open: it was ") +
                      dec(size_) + " bytes when opened";
    if (now != kNone) {
        msg += ", it is " + dec(now) + " now";
    }
    if (fault != kNone) {
        msg += "; reading byte " + dec(fault) + " failed (SIGBUS), the data from there on read as zeros";
    }
    return Error(ErrorCode::kIoError,
                 msg + " (it was truncated or rewritten in place; a file replaced by rename does not affect a reader)",
                 fault != kNone ? fault : now);
}

Status FileSource::advise(uint64_t offset, uint64_t length, AccessPattern pattern) const {
    if (kind_ != Kind::kMapped || length == 0) {
        return Status::success();
    }
    const auto end = add_u64(offset, length);
    if (!end || *end > size_) {
        return Error(ErrorCode::kInvalidArgument,
                     "advise: range [" + dec(offset) + ", +" + dec(length) + ") lies outside the file");
    }
    // Nothing mapped yet: nothing to drop or to reset. The other patterns map the
    // file, so that the advice holds for the accesses to come.
    if (!map_->mapped() && (pattern == AccessPattern::kNormal || pattern == AccessPattern::kDontNeed)) {
        return Status::success();
    }
    const std::span<const uint8_t> all = whole();
    if (all.empty()) {
        return Status::success();  // the mapping failed: reads use pread, no pages to advise
    }
    const long page_l = ::sysconf(_SC_PAGESIZE);
    const uint64_t page = page_l > 0 ? static_cast<uint64_t>(page_l) : 4096U;
    // The mapping starts on a page boundary, so rounding the offset down
    // inside it rounds the address; madvise rounds the length up to whole
    // pages itself, which stays inside the mapping's last page.
    const uint64_t first = offset - offset % page;
    const uint64_t last = *end;
    // SAFETY: [first, last) lies inside [0, size_) of the mapping, and
    // first is page-aligned from a page-aligned base, as madvise requires;
    // the advice values used never modify the file (for a private mapping
    // MADV_DONTNEED drops the pages, which are read back from the file on the
    // next access; in a copy-on-write mapping that discards what was written,
    // as FileReadOptions::copy_on_write documents).
    void* addr = const_cast<uint8_t*>(all.data() + first);  // NOLINT(cppcoreguidelines-pro-type-const-cast)
    if (::madvise(addr, static_cast<size_t>(last - first), to_madvise(pattern)) != 0) {
        return os_error("madvise", errno);
    }
    return Status::success();
}

}  // namespace hurray::detail
