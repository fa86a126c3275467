// SPDX-License-Identifier: Apache-2.0
// Bulk descriptor transfers (fd_transfer.hpp): writev / sendmsg / vmsplice
// loops with EINTR, partial transfers, EAGAIN and EPIPE handled. Every
// system call that reads or writes caller memory carries a SAFETY comment.
#include "io/fd_transfer.hpp"

#include "hurray/core/text.hpp"
#include "hurray/io/os_error.hpp"

#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace hurray::detail {

namespace {

/// Linux moves at most this many bytes per read/write-like call.
constexpr size_t kMaxPerCall = 0x7ffff000;

/// At most this many iovec entries per call (IOV_MAX is 1024 on Linux).
constexpr size_t kMaxIov = IOV_MAX;


/// Drops the first `n` bytes from the front of `iov` (entries wholly sent
/// become empty and are skipped); returns the first entry still to send.
size_t consume(std::span<iovec> iov, size_t first, size_t n) {
    while (first < iov.size() && n > 0) {
        iovec& v = iov[first];
        if (n >= v.iov_len) {
            n -= v.iov_len;
            v.iov_len = 0;
            ++first;
        } else {
            // SAFETY: n < iov_len, so the new base stays inside the same piece.
            v.iov_base = static_cast<uint8_t*>(v.iov_base) + n;
            v.iov_len -= n;
            n = 0;
        }
    }
    while (first < iov.size() && iov[first].iov_len == 0) {
        ++first;
    }
    return first;
}

/// Waits until `fd` is ready for `events` (retrying EINTR).
Status wait_for(int fd, short events, const char* what) {
    pollfd p{fd, events, 0};
    while (true) {
        // SAFETY: p is a local pollfd and the count passed is 1.
        const int rc = ::poll(&p, 1, -1);
        if (rc >= 0) {
            return Status::success();
        }
        if (errno != EINTR) {
            return hurray::os_error(std::string("poll fd ") + std::to_string(fd) + " (" + what + ")", errno);
        }
    }
}

}  // namespace

Result<FdKind> fd_kind(int fd) {
    struct stat st {};
    // SAFETY: st is a local struct that fstat fills.
    if (::fstat(fd, &st) != 0) {
        return hurray::os_error("fstat fd " + std::to_string(fd), errno);
    }
    if (S_ISFIFO(st.st_mode)) {
        return FdKind::kPipe;
    }
    if (S_ISSOCK(st.st_mode)) {
        return FdKind::kSocket;
    }
    if (S_ISREG(st.st_mode)) {
        return FdKind::kRegular;
    }
    return FdKind::kOther;
}

// ---------------------------------------------------------------------------
// SigpipeGuard

SigpipeGuard::SigpipeGuard() noexcept {
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    // SAFETY: both sets are local sigset_t values.
    if (::sigpending(&pending) == 0) {
        was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    }
    // SAFETY: pipe_only and old_mask_ are valid sigset_t objects.
    blocked_ = ::pthread_sigmask(SIG_BLOCK, &pipe_only, &old_mask_) == 0;
}

SigpipeGuard::~SigpipeGuard() {
    if (!blocked_) {
        return;
    }
    if (!was_pending_ && sigismember(&old_mask_, SIGPIPE) == 0) {
        sigset_t pipe_only;
        sigemptyset(&pipe_only);
        sigaddset(&pipe_only, SIGPIPE);
        sigset_t pending;
        sigemptyset(&pending);
        // SAFETY: local sigset_t values; a zero timeout never waits.
        if (::sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1) {
            const timespec zero{0, 0};
            while (::sigtimedwait(&pipe_only, nullptr, &zero) < 0 && errno == EINTR) {
            }
        }
    }
    // SAFETY: old_mask_ holds the mask saved by the constructor.
    ::pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

// ---------------------------------------------------------------------------
// FdWriter

Status FdWriter::os_error(const char* call, int err) const {
    Error e = hurray::os_error(std::string(call) + " to fd " + std::to_string(fd_) + " at stream offset " + dec(written_),
                               err, ErrorCode::kIoError, written_);
    if (err == EPIPE || err == ECONNRESET) {
        return Error(e.code(), e.message() + " (the reader closed its end)", e.offset()).with_os_error(err);
    }
    return e;
}

Status FdWriter::wait_writable() const { return wait_for(fd_, POLLOUT, "wait to write"); }

Status FdWriter::write_all(std::span<iovec> iov) {
    size_t first = consume(iov, 0, 0);
    while (first < iov.size()) {
        const size_t count = iov.size() - first < kMaxIov ? iov.size() - first : kMaxIov;
        ssize_t n = 0;
        if (kind_ == FdKind::kSocket) {
            msghdr msg{};
            msg.msg_iov = &iov[first];
            msg.msg_iovlen = count;
            // SAFETY: the iovec entries point into live caller memory of the
            // lengths given; sendmsg only reads them.
            n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
        } else {
            // SAFETY: as above; writev only reads the pieces.
            n = ::writev(fd_, &iov[first], static_cast<int>(count));
        }
        if (n < 0) {
            const int err = errno;
            if (err == EINTR) {
                continue;
            }
            if (err == EAGAIN || err == EWOULDBLOCK) {
                HURRAY_RETURN_IF_ERROR(wait_writable());
                continue;
            }
            return os_error(kind_ == FdKind::kSocket ? "sendmsg" : "writev", err);
        }
        if (n == 0) {
            return os_error("writev", EIO);
        }
        written_ += static_cast<uint64_t>(n);
        first = consume(iov, first, static_cast<size_t>(n));
    }
    return Status::success();
}

Status FdWriter::splice_all(std::span<const uint8_t> bytes) {
    while (!bytes.empty()) {
        const size_t want = bytes.size() < kMaxPerCall ? bytes.size() : kMaxPerCall;
        // SAFETY: vmsplice only reads the range, which lies inside `bytes`; the
        // pipe keeps references to its pages (the caller guarantees that the
        // memory is a file mapping nobody writes to).
        iovec v{const_cast<uint8_t*>(bytes.data()), want};  // NOLINT(cppcoreguidelines-pro-type-const-cast)
        const ssize_t n = ::vmsplice(fd_, &v, 1, 0);
        if (n < 0) {
            const int err = errno;
            if (err == EINTR) {
                continue;
            }
            if (err == EAGAIN) {
                HURRAY_RETURN_IF_ERROR(wait_writable());
                continue;
            }
            return os_error("vmsplice", err);
        }
        if (n == 0) {
            return os_error("vmsplice", EIO);
        }
        written_ += static_cast<uint64_t>(n);
        bytes = bytes.subspan(static_cast<size_t>(n));
    }
    return Status::success();
}

}  // namespace hurray::detail
