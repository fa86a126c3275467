// SPDX-License-Identifier: Apache-2.0
/// @file
/// Where sequential readers get bytes: `ByteSource` and its implementations
/// for a file descriptor (file, pipe, socket, standard input), a `FILE*` and
/// memory. Sources are forward-only: readers never seek.
#pragma once

#include "hurray/io/export.hpp"
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>

#include "hurray/core/result.hpp"
#include "hurray/io/interrupt_hook.hpp"

namespace hurray {

/// A forward-only byte source.
///
/// @code
/// std::vector<uint8_t> buf(4096);
/// auto n = source.read_some(buf);   // 0 means end of input
/// @endcode
class HURRAY_IO_EXPORT ByteSource {
public:
    virtual ~ByteSource() = default;
    /// Reads at least one byte into `out` (at most `out.size()`), or returns 0
    /// at the end of input. `out` must not be empty. Fails with `kIoError`.
    virtual Result<size_t> read_some(std::span<uint8_t> out) = 0;

    /// Fills `out` completely; returns how many bytes were read, which is
    /// less than `out.size()` only when the input ended.
    Result<size_t> read_full(std::span<uint8_t> out);

    // Defined here so that ByteSource has no key function: its vtable and
    // type_info are then emitted wherever needed, and a subclass compiled
    // with RTTI links against this library built without it.
    /// Reads and discards `n` bytes; returns how many were skipped (less than
    /// `n` only at the end of input). The default reads through a small
    /// stack buffer; sources that can do better override it.
    virtual Result<uint64_t> skip(uint64_t n) { return skip_by_reading(n); }

    /// A file descriptor whose next bytes are the source's next bytes, with
    /// nothing buffered in front of them; -1 (the default) when there is
    /// none. Fast paths (`stream_to_file`) then read the data straight into
    /// their own buffers, still through `read_some`, so the source's waits
    /// and timeouts hold; a source that counts or transforms bytes keeps the
    /// default.
    [[nodiscard]] virtual int splice_fd() const noexcept { return -1; }

    ByteSource() = default;
    ByteSource(const ByteSource&) = delete;
    ByteSource& operator=(const ByteSource&) = delete;
    ByteSource(ByteSource&&) = delete;
    ByteSource& operator=(ByteSource&&) = delete;

protected:
    /// The default `skip`: `read_some` into a 64 KiB stack buffer until `n`
    /// bytes are discarded or the input ends.
    Result<uint64_t> skip_by_reading(uint64_t n);
};

/// How long an `FdSource` may wait for a peer: bounds that keep a reader
/// of a pipe or socket from being held forever by a peer that stalls, or
/// that trickles a byte now and then. Zero means no limit.
struct FdReadTimeouts {
    /// Longest wait for the next byte (the peer stalls).
    std::chrono::milliseconds idle{0};
    /// Longest time all reads together may take, counted from the first
    /// read after the timeouts were set (the peer trickles).
    std::chrono::milliseconds total{0};
};

/// Reads from a POSIX file descriptor; retries `EINTR`. A non-blocking
/// descriptor is waited on (poll) instead of failing with `EAGAIN`.
///
/// @code
/// hurray::FdSource src(sock);
/// src.set_timeouts({.idle = std::chrono::seconds(5), .total = std::chrono::minutes(2)});
/// hurray::StreamReader reader(src);   // a stalled peer is kIoError "... timed out ..."
/// @endcode
class HURRAY_IO_EXPORT FdSource final : public ByteSource {
public:
    /// Reads from `fd`; closes it on destruction when `owns` is true.
    explicit FdSource(int fd, bool owns = false) noexcept : fd_(fd), owns_(owns) {}
    ~FdSource() override;
    /// Reads what is there (at least one byte), waiting at most as long as
    /// the timeouts allow: past them it fails with `kIoError` ("read timed
    /// out: no byte for N ms" / "read timed out: N ms in all"), consuming
    /// nothing; the source can be read again (with new timeouts) after that.
    Result<size_t> read_some(std::span<uint8_t> out) override;
    /// Bounds the waits of later reads (see `FdReadTimeouts`); the total
    /// budget starts again with the next read. Regular files never wait.
    void set_timeouts(FdReadTimeouts timeouts) noexcept;
    /// The timeouts in effect.
    [[nodiscard]] FdReadTimeouts timeouts() const noexcept { return timeouts_; }
    /// Asks `hook` whether to stop when a signal interrupts a read or a wait
    /// (see `InterruptHook`); an empty hook (the default) retries.
    void set_interrupt_hook(InterruptHook hook) { interrupt_ = std::move(hook); }
    /// Skips by moving the file offset when `fd` is a regular file (never
    /// past its end), by reading otherwise (pipes, sockets, terminals).
    Result<uint64_t> skip(uint64_t n) override;
    /// The descriptor.
    [[nodiscard]] int fd() const noexcept { return fd_; }
    /// The descriptor: nothing is buffered in front of it, and the fast
    /// paths read through `read_some`, which keeps the timeouts.
    [[nodiscard]] int splice_fd() const noexcept override { return fd_; }

    FdSource(const FdSource&) = delete;
    FdSource& operator=(const FdSource&) = delete;
    FdSource(FdSource&&) = delete;
    FdSource& operator=(FdSource&&) = delete;

private:
    /// Waits until `fd_` is readable within the timeouts (or forever).
    Status wait_readable();

    int fd_;
    bool owns_;
    FdReadTimeouts timeouts_{};
    /// When the total budget runs out; set by the first read after `set_timeouts`.
    std::optional<std::chrono::steady_clock::time_point> deadline_;
    InterruptHook interrupt_;
};

/// Reads from a C stream (not owned, not closed).
class HURRAY_IO_EXPORT StdioSource final : public ByteSource {
public:
    /// Reads from `file`.
    explicit StdioSource(std::FILE* file) noexcept : file_(file) {}
    Result<size_t> read_some(std::span<uint8_t> out) override;

private:
    std::FILE* file_;
};

/// Reads from bytes in memory (not owned: they must outlive the source).
/// `max_chunk` limits each `read_some`, to exercise short reads in tests.
class HURRAY_IO_EXPORT MemorySource final : public ByteSource {
public:
    /// Reads `bytes`, at most `max_chunk` bytes per call.
    explicit MemorySource(std::span<const uint8_t> bytes, size_t max_chunk = SIZE_MAX) noexcept
        : bytes_(bytes), max_chunk_(max_chunk == 0 ? 1 : max_chunk) {}
    Result<size_t> read_some(std::span<uint8_t> out) override;
    Result<uint64_t> skip(uint64_t n) override;
    /// Bytes consumed so far.
    [[nodiscard]] uint64_t position() const noexcept { return pos_; }

private:
    std::span<const uint8_t> bytes_;
    size_t max_chunk_;
    size_t pos_ = 0;
};

}  // namespace hurray
