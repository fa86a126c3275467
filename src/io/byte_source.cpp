// SPDX-License-Identifier: Apache-2.0
// ByteSource and its three implementations. This file is one of the few in
// hurray::io that hands caller buffers to system calls; each such call has a
// SAFETY note.
#include "hurray/io/byte_source.hpp"
#include "hurray/io/os_error.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <string>

namespace hurray {

namespace {


/// Size of the stack buffer the default `skip` reads through.
constexpr size_t kSkipBufferSize = size_t{64} * 1024;

/// `kIoError` naming the failed call and the errno text.
Error io_error(const char* call, int err) { return os_error(std::string(call) + " failed", err); }

/// A subclass's read_some claimed more bytes than the buffer holds.
Error overlong_read() {
    return {ErrorCode::kIoError, "read_some returned more bytes than the output buffer holds"};
}

}  // namespace

Result<size_t> ByteSource::read_full(std::span<uint8_t> out) {
    size_t got = 0;
    while (got < out.size()) {
        HURRAY_ASSIGN_OR_RETURN(const size_t n, read_some(out.subspan(got)));
        if (n == 0) {
            break;  // end of input
        }
        if (n > out.size() - got) {
            return overlong_read();
        }
        got += n;
    }
    return got;
}

Result<uint64_t> ByteSource::skip_by_reading(uint64_t n) {
    std::array<uint8_t, kSkipBufferSize> buf{};
    uint64_t done = 0;
    while (done < n) {
        const auto want = static_cast<size_t>(std::min<uint64_t>(n - done, buf.size()));
        HURRAY_ASSIGN_OR_RETURN(const size_t got, read_some(std::span<uint8_t>(buf).first(want)));
        if (got == 0) {
            break;
        }
        if (got > want) {
            return overlong_read();
        }
        done += got;
    }
    return done;
}

// --- FdSource ---------------------------------------------------------------

namespace {

/// The error of a call that an `InterruptHook` stopped.
Error interrupted(const char* what) { return {ErrorCode::kCancelled, std::string(what) + ": interrupted by a signal"}; }

}  // namespace

FdSource::~FdSource() {
    if (owns_ && fd_ >= 0) {
        // Errors from close on a descriptor only read from cannot lose data.
        (void)::close(fd_);
    }
}

void FdSource::set_timeouts(FdReadTimeouts timeouts) noexcept {
    timeouts_ = timeouts;
    deadline_.reset();
}

Status FdSource::wait_readable() {
    using Clock = std::chrono::steady_clock;
    const bool has_idle = timeouts_.idle.count() > 0;
    const bool has_total = timeouts_.total.count() > 0;
    if (has_total && !deadline_) {
        deadline_ = Clock::now() + timeouts_.total;
    }
    const auto idle_end = Clock::now() + timeouts_.idle;
    while (true) {
        // The wait: the nearer of the idle and total ends, or forever (-1).
        int wait_ms = -1;
        if (has_idle || has_total) {
            const auto now = Clock::now();
            if (has_total && now >= *deadline_) {
                return Error(ErrorCode::kIoError, "read timed out: the peer took longer than " +
                                                      std::to_string(timeouts_.total.count()) + " ms in all");
            }
            if (has_idle && now >= idle_end) {
                return Error(ErrorCode::kIoError,
                             "read timed out: no byte for " + std::to_string(timeouts_.idle.count()) + " ms");
            }
            const auto end = !has_idle ? *deadline_ : (!has_total ? idle_end : std::min(idle_end, *deadline_));
            const auto left = std::chrono::ceil<std::chrono::milliseconds>(end - now).count();
            wait_ms = static_cast<int>(std::min<long long>(left, INT_MAX));
        }
        pollfd p{};
        p.fd = fd_;
        p.events = POLLIN;
        // SAFETY: `p` is one valid pollfd on the stack, and the count is 1.
        const int rc = ::poll(&p, 1, wait_ms);
        if (rc > 0) {
            return Status::success();  // readable, at end of input, or in error: read(2) says which
        }
        if (rc < 0 && errno != EINTR) {
            return io_error("poll", errno);
        }
        if (rc < 0 && interrupt_ && interrupt_()) {
            return interrupted("read");
        }
        // rc == 0 (the wait ran out) or EINTR: the loop re-checks the clock.
    }
}

Result<size_t> FdSource::read_some(std::span<uint8_t> out) {
    if (out.empty()) {
        return Error(ErrorCode::kInvalidArgument, "read_some: empty output buffer");
    }
    const bool bounded = timeouts_.idle.count() > 0 || timeouts_.total.count() > 0;
    if (bounded) {
        HURRAY_RETURN_IF_ERROR(wait_readable());
    }
    while (true) {
        // SAFETY: `out` is a valid writable span of out.size() bytes; read(2)
        // writes at most that many bytes into it.
        const ssize_t n = ::read(fd_, out.data(), out.size());
        if (n >= 0) {
            return static_cast<size_t>(n);
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            // A non-blocking descriptor with nothing to read yet: wait for
            // it (within the timeouts) rather than failing.
            HURRAY_RETURN_IF_ERROR(wait_readable());
            continue;
        }
        if (errno != EINTR) {
            return io_error("read", errno);
        }
        if (interrupt_ && interrupt_()) {
            return interrupted("read");
        }
    }
}

Result<uint64_t> FdSource::skip(uint64_t n) {
    if (n == 0) {
        return uint64_t{0};
    }
    // A regular file can be skipped by moving its offset, clamped to its
    // size so that the count of skipped bytes is exact. Anything else (pipe,
    // socket, terminal) or any failure of the seekable path reads through.
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) {
        const off_t cur = ::lseek(fd_, 0, SEEK_CUR);
        if (cur >= 0) {
            const auto size = static_cast<uint64_t>(st.st_size);
            const auto pos = static_cast<uint64_t>(cur);
            const uint64_t avail = pos < size ? size - pos : 0;
            const uint64_t step = std::min(n, avail);
            if (step <= static_cast<uint64_t>(INT64_MAX) - pos &&
                ::lseek(fd_, static_cast<off_t>(pos + step), SEEK_SET) >= 0) {
                if (step == n) {
                    return step;
                }
                // The file may have grown since fstat: read whatever follows.
                HURRAY_ASSIGN_OR_RETURN(const uint64_t more, skip_by_reading(n - step));
                return step + more;
            }
        }
    }
    return skip_by_reading(n);
}

// --- StdioSource ------------------------------------------------------------

Result<size_t> StdioSource::read_some(std::span<uint8_t> out) {
    if (out.empty()) {
        return Error(ErrorCode::kInvalidArgument, "read_some: empty output buffer");
    }
    if (file_ == nullptr) {
        return Error(ErrorCode::kInvalidArgument, "StdioSource: null FILE*");
    }
    // SAFETY: `out` is a valid writable span; fread writes at most
    // out.size() objects of one byte into it.
    const size_t n = std::fread(out.data(), 1, out.size(), file_);
    if (n == 0 && std::ferror(file_) != 0) {
        return Error(ErrorCode::kIoError, "fread failed on the input stream");
    }
    return n;
}

// --- MemorySource -----------------------------------------------------------

Result<size_t> MemorySource::read_some(std::span<uint8_t> out) {
    if (out.empty()) {
        return Error(ErrorCode::kInvalidArgument, "read_some: empty output buffer");
    }
    const size_t n = std::min({out.size(), max_chunk_, bytes_.size() - pos_});
    std::copy_n(bytes_.begin() + static_cast<std::ptrdiff_t>(pos_), n, out.begin());
    pos_ += n;
    return n;
}

Result<uint64_t> MemorySource::skip(uint64_t n) {
    const uint64_t step = std::min<uint64_t>(n, bytes_.size() - pos_);
    pos_ += static_cast<size_t>(step);
    return step;
}

}  // namespace hurray
