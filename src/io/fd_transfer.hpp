// SPDX-License-Identifier: Apache-2.0
// Internal: bulk transfers on raw file descriptors for the conversion fast
// paths (file_to_stream to a descriptor, stream_to_file from a pipe).
//
// FdWriter sends gathered pieces with writev(2) (sendmsg(2) with MSG_NOSIGNAL
// on a socket) and, on a pipe, long runs of file-backed mapped memory with
// vmsplice(2), which hands the page-cache pages to the pipe instead of copying
// them. Every call retries EINTR and partial transfers; EAGAIN on a
// non-blocking descriptor waits in poll(2); EPIPE is an error (`kIoError`
// naming the descriptor), never a SIGPIPE: while a transfer runs, SIGPIPE is
// blocked in the calling thread and a SIGPIPE it raised is consumed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include <csignal>
#include <sys/uio.h>

#include "hurray/core/result.hpp"

namespace hurray::detail {

/// What a descriptor is, as far as the fast paths care.
enum class FdKind : uint8_t { kPipe, kSocket, kRegular, kOther };

/// The kind of `fd` (fstat); `kIoError` when it is not open.
Result<FdKind> fd_kind(int fd);

/// Blocks SIGPIPE in the calling thread for its lifetime; on destruction
/// consumes a SIGPIPE raised meanwhile (unless one was already pending
/// before) and restores the thread's signal mask.
class SigpipeGuard {
public:
    SigpipeGuard() noexcept;
    ~SigpipeGuard();
    SigpipeGuard(const SigpipeGuard&) = delete;
    SigpipeGuard& operator=(const SigpipeGuard&) = delete;
    SigpipeGuard(SigpipeGuard&&) = delete;
    SigpipeGuard& operator=(SigpipeGuard&&) = delete;

private:
    sigset_t old_mask_{};
    bool blocked_ = false;
    bool was_pending_ = false;
};

/// Writes to a descriptor that it does not own.
class FdWriter {
public:
    /// Writes to `fd` of kind `kind`.
    FdWriter(int fd, FdKind kind) noexcept : fd_(fd), kind_(kind) {}

    /// Writes all bytes of `iov` (modified: the entries are consumed).
    Status write_all(std::span<iovec> iov);
    /// Moves `bytes` into the pipe by reference (vmsplice). Only for memory
    /// that nobody writes to afterwards: a read-only mapping of a file.
    Status splice_all(std::span<const uint8_t> bytes);
    /// Total bytes written so far.
    [[nodiscard]] uint64_t written() const noexcept { return written_; }
    /// The descriptor's kind.
    [[nodiscard]] FdKind kind() const noexcept { return kind_; }

private:
    [[nodiscard]] Status wait_writable() const;
    Status os_error(const char* call, int err) const;

    int fd_;
    FdKind kind_;
    uint64_t written_ = 0;
};

}  // namespace hurray::detail
