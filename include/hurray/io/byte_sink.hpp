// SPDX-License-Identifier: Apache-2.0
/// @file
/// Where writers put bytes: `ByteSink` and its implementations for a file
/// descriptor (file, pipe, socket, standard output), a `FILE*`, memory, and
/// an atomic, durable file replacement (`AtomicFileSink`).
#pragma once

#include "hurray/io/export.hpp"
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/io/interrupt_hook.hpp"

namespace hurray {

/// A forward-only byte sink. Writers never seek: a sink only appends.
///
/// @code
/// class CountingSink final : public hurray::ByteSink {
/// public:
///     hurray::Status write(std::span<const uint8_t> bytes) override {
///         n += bytes.size();
///         return hurray::Status::success();
///     }
///     uint64_t n = 0;
/// };
/// @endcode
class HURRAY_IO_EXPORT ByteSink {
public:
    virtual ~ByteSink() = default;
    /// Appends all of `bytes` or fails (`kIoError` naming the OS error).
    virtual Status write(std::span<const uint8_t> bytes) = 0;
    /// Pushes buffered bytes to the operating system. Default: nothing to do.
    virtual Status flush() { return Status::success(); }
    /// A file descriptor to which bytes can be moved directly (splice(2)),
    /// appending exactly where the next `write` would, with nothing buffered
    /// in front; -1 (the default) when there is none.
    [[nodiscard]] virtual int splice_fd() const noexcept { return -1; }

    ByteSink() = default;
    ByteSink(const ByteSink&) = delete;
    ByteSink& operator=(const ByteSink&) = delete;
    ByteSink(ByteSink&&) = delete;
    ByteSink& operator=(ByteSink&&) = delete;
};

/// Writes to a POSIX file descriptor: a file, a pipe, a socket, standard
/// output. Retries short writes and `EINTR`; on a socket, a closed peer is
/// an error (`MSG_NOSIGNAL`), not a `SIGPIPE`. On a pipe, the process's
/// `SIGPIPE` disposition applies as for any `write(2)`.
///
/// @code
/// hurray::FdSink out(STDOUT_FILENO);
/// @endcode
class HURRAY_IO_EXPORT FdSink final : public ByteSink {
public:
    /// Writes to `fd`; closes it on destruction when `owns` is true.
    explicit FdSink(int fd, bool owns = false) noexcept : fd_(fd), owns_(owns) {}
    ~FdSink() override;
    Status write(std::span<const uint8_t> bytes) override;
    /// The descriptor.
    [[nodiscard]] int fd() const noexcept { return fd_; }
    /// The descriptor (nothing is buffered).
    [[nodiscard]] int splice_fd() const noexcept override { return fd_; }
    /// Asks `hook` whether to stop when a signal interrupts a write, or cuts
    /// one short (see `InterruptHook`); an empty hook (the default) goes on.
    void set_interrupt_hook(InterruptHook hook) { interrupt_ = std::move(hook); }

    FdSink(const FdSink&) = delete;
    FdSink& operator=(const FdSink&) = delete;
    FdSink(FdSink&&) = delete;
    FdSink& operator=(FdSink&&) = delete;

private:
    int fd_;
    bool owns_;
    int is_socket_ = -1;  // -1: not yet known
    InterruptHook interrupt_;
};

/// Writes to a C stream; `flush` calls `fflush`. Does not close it.
class HURRAY_IO_EXPORT StdioSink final : public ByteSink {
public:
    /// Writes to `file` (not owned).
    explicit StdioSink(std::FILE* file) noexcept : file_(file) {}
    Status write(std::span<const uint8_t> bytes) override;
    Status flush() override;

private:
    std::FILE* file_;
};

/// Appends to a byte vector in memory.
///
/// @code
/// hurray::MemorySink sink;
/// // ... write a file through it ...
/// std::vector<uint8_t> bytes = std::move(sink).take();
/// @endcode
class HURRAY_IO_EXPORT MemorySink final : public ByteSink {
public:
    Status write(std::span<const uint8_t> bytes) override;
    /// The bytes written so far.
    [[nodiscard]] const std::vector<uint8_t>& bytes() const noexcept { return bytes_; }
    /// Moves the bytes out.
    std::vector<uint8_t> take() && { return std::move(bytes_); }

private:
    std::vector<uint8_t> bytes_;
};

/// How an atomic save ends (`AtomicFileSink`, `FileWriter::create_file`,
/// `save`). Both replace the target atomically: another process opening the
/// path sees either the old file or the complete new one, never a mix, and a
/// failed or abandoned save leaves the old file untouched.
///
/// - `kDurable` (the default): the new file's data is fsync'ed before the
///   rename and the directory after it, so once the save returns success the
///   new content survives a power loss or kernel crash.
/// - `kAtomicOnly`: no fsync, only the rename. The save costs what writing the
///   bytes costs (they stay in the page cache; the kernel writes them back
///   later). A process crash is harmless, but a power loss or kernel crash soon
///   after may leave `path` with its old content, or (on file systems that
///   order the rename before the data, such as ext4 with `data=writeback`)
///   empty or partly written. This is what safetensors and `numpy.save` give.
///
/// @code
/// auto w = hurray::FileWriter::create_file("scratch.hrry", {}, hurray::Durability::kAtomicOnly);
/// @endcode
enum class Durability : uint8_t {
    kDurable,     ///< fsync the file and its directory: survives a power loss
    kAtomicOnly,  ///< atomic rename only, no fsync: as fast as writing the bytes
};

/// Replaces a file atomically and durably.
///
/// `create(path)` opens a new temporary file in the directory of `path`
/// (same file system, so the final rename is atomic). Bytes go to it.
/// `commit()` flushes, `fsync`s the file, renames it over `path` and
/// `fsync`s the directory: from then on `path` holds the new bytes, even
/// after a power loss. Destroying the sink without `commit()` (or a failed
/// commit) removes the temporary file; `path` is never touched. A crash at
/// any point leaves `path` with either its old or its new content, never a
/// mix, and at most a stray temporary file (named `.<name>.tmp-XXXXXX`).
/// While a durable sink is written, every 8 MiB written is handed to the
/// kernel for writeback at once (`sync_file_range`, without waiting), so that
/// the disk writes while the caller produces the next bytes and the `fsync`
/// at `commit()` has little left to wait for.
/// A sink created with `durable = false` skips both `fsync`s: the replacement
/// is still atomic for other processes, but a power loss may leave `path`
/// empty or partial. It replaces an existing regular file by exchanging the
/// two names (`renameat2(RENAME_EXCHANGE)`) and unlinking the old file,
/// because a rename over a file makes ext4 start writing the whole new file
/// back before the rename returns, a cost the caller chose not to pay; where
/// the file system cannot exchange, or there is no regular file at `path`,
/// it renames.
///
/// @code
/// auto sink = hurray::AtomicFileSink::create("model.hrry");
/// if (!sink) return sink.error();
/// // ... write through **sink ...
/// if (auto s = (*sink)->commit(); !s) return s;
/// @endcode
class HURRAY_IO_EXPORT AtomicFileSink final : public ByteSink {
public:
    /// Creates the temporary file next to `target_path` with mode 0644 (minus umask).
    /// `durable`: fsync the file and its directory at `commit()` (see the class comment).
    static Result<std::unique_ptr<AtomicFileSink>> create(const std::filesystem::path& target_path,
                                                          bool durable = true);
    /// As `create(target_path, durability == Durability::kDurable)`.
    static Result<std::unique_ptr<AtomicFileSink>> create(const std::filesystem::path& target_path,
                                                          Durability durability) {
        return create(target_path, durability == Durability::kDurable);
    }
    ~AtomicFileSink() override;
    Status write(std::span<const uint8_t> bytes) override;
    /// Makes the written bytes the content of `path` (see the class comment).
    /// After it, further writes fail.
    Status commit();
    /// Removes the temporary file without touching `path` (also done by the
    /// destructor when not committed).
    void abandon() noexcept;
    /// The final path.
    [[nodiscard]] const std::string& path() const noexcept { return path_; }
    /// The temporary file's path.
    [[nodiscard]] const std::string& temp_path() const noexcept { return temp_path_; }
    /// The temporary file's descriptor until commit or abandon, then -1.
    [[nodiscard]] int splice_fd() const noexcept override { return done_ ? -1 : fd_; }

    AtomicFileSink(const AtomicFileSink&) = delete;
    AtomicFileSink& operator=(const AtomicFileSink&) = delete;
    AtomicFileSink(AtomicFileSink&&) = delete;
    AtomicFileSink& operator=(AtomicFileSink&&) = delete;

private:
    AtomicFileSink(std::string path, std::string temp_path, int fd, bool durable) noexcept
        : path_(std::move(path)), temp_path_(std::move(temp_path)), fd_(fd), durable_(durable) {}
    std::string path_;
    std::string temp_path_;
    int fd_;
    bool durable_ = true;
    bool done_ = false;
    uint64_t written_ = 0;      // bytes written through write()
    uint64_t written_back_ = 0;  // bytes before this offset were handed to writeback
};

/// Puts the finished file `temp` in place of `target`, as
/// `AtomicFileSink::commit` does, for files written by other means (a zip
/// written by libzip, a file verified before it replaces anything). `temp`
/// must be closed and on the same file system as `target` (beside it).
/// With `durable`, `temp` is fsync'ed, renamed over `target`, and the
/// directory fsync'ed: `target` then holds the new bytes even after a power
/// loss. Without, an existing regular file is replaced by exchanging the two
/// names and unlinking the old one (no implicit writeback on ext4; rename
/// where the file system cannot). Either way another process opening
/// `target` sees the old file or the new one, and a large replaced file is
/// freed on a background thread. On failure `temp` is removed, and `target`
/// is untouched unless the error says it holds the new file.
///
/// @code
/// // libzip wrote "out/.m.npz.tmp"; put it in place:
/// HURRAY_RETURN_IF_ERROR(hurray::replace_file("out/.m.npz.tmp", "out/m.npz", /*durable=*/true));
/// @endcode
[[nodiscard]] HURRAY_IO_EXPORT Status replace_file(const std::filesystem::path& temp,
                                                   const std::filesystem::path& target, bool durable);

}  // namespace hurray
