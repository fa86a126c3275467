// SPDX-License-Identifier: Apache-2.0
// Byte sinks: the raw POSIX calls behind FdSink and AtomicFileSink, plus the
// stdio and memory sinks. Every system call that reads caller memory carries
// a SAFETY comment.
#include "hurray/io/byte_sink.hpp"

#include "hurray/core/text.hpp"
#include "hurray/io/os_error.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <pthread.h>
#include <string_view>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>


namespace hurray {

namespace {


Error io_error(std::string_view what, int err) { return os_error(what, err); }

/// Writes all of `bytes` to `fd`, retrying EINTR and short writes. With
/// `socket`, uses send(MSG_NOSIGNAL) so a closed peer is EPIPE, not SIGPIPE.
/// Writes all of `bytes`, retrying short writes and EINTR; `interrupt`, when
/// set, is asked after each (InterruptHook) and stops the write with kCancelled.
Status write_all(int fd, bool socket, std::span<const uint8_t> bytes, std::string_view what,
                 const InterruptHook* interrupt = nullptr) {
    const uint8_t* p = bytes.data();
    size_t left = bytes.size();
    while (left > 0) {
        // Linux transfers at most 0x7ffff000 bytes per call; ask for no more.
        const size_t want = left < size_t{0x7ffff000} ? left : size_t{0x7ffff000};
        ssize_t n = 0;
        if (socket) {
            // SAFETY: p .. p+want lies inside `bytes`; send only reads it.
            n = ::send(fd, p, want, MSG_NOSIGNAL);
        } else {
            // SAFETY: p .. p+want lies inside `bytes`; write only reads it.
            n = ::write(fd, p, want);
        }
        if (n < 0) {
            if (errno != EINTR) {
                return io_error(what, errno);
            }
            if (interrupt != nullptr && *interrupt && (*interrupt)()) {
                return Error(ErrorCode::kCancelled, std::string(what) + ": interrupted by a signal");
            }
            continue;
        }
        if (n == 0) {
            return Error(ErrorCode::kIoError, std::string(what) + ": the system wrote 0 of " +
                                                  dec(left) + " bytes");
        }
        // A blocking descriptor writes everything unless a signal came after
        // part of it went out: the call then returns short instead of failing
        // with EINTR, so the hook is asked on a short write too.
        if (static_cast<size_t>(n) < want && interrupt != nullptr && *interrupt && (*interrupt)()) {
            return Error(ErrorCode::kCancelled, std::string(what) + ": interrupted by a signal");
        }
        p += n;
        left -= static_cast<size_t>(n);
    }
    return Status::success();
}

/// Closes `fd`, ignoring EINTR (on Linux the descriptor is released anyway).
int close_fd(int fd) noexcept {
    const int rc = ::close(fd);
    if (rc != 0 && errno == EINTR) {
        return 0;
    }
    return rc;
}

/// Closes `fd` on a short-lived detached thread, so that the caller does not
/// wait for what the last close of an unlinked file does (the file system
/// frees its blocks and page cache); synchronously when no thread can be
/// started. A process that exits first has the kernel close it.
void close_in_background(int fd) noexcept {
    pthread_attr_t attr;
    if (::pthread_attr_init(&attr) == 0) {
        pthread_t thread;
        const bool detached = ::pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0;
        // The thread only calls close(2): a small stack spares mapping 8 MiB.
        // Best effort: on failure the default stack is used.
        constexpr size_t kCloserStackBytes = size_t{64} << 10U;
        (void)::pthread_attr_setstacksize(&attr, kCloserStackBytes);
        // SAFETY: the descriptor travels as the value of the thread's
        // argument, never dereferenced (nothing is allocated, so nothing can
        // leak if the process exits before the thread runs); the thread only
        // closes it.
        const bool started =
            detached &&
            ::pthread_create(
                &thread, &attr,
                [](void* arg) -> void* {
                    close_fd(static_cast<int>(reinterpret_cast<intptr_t>(arg)));
                    return nullptr;
                },
                reinterpret_cast<void*>(static_cast<intptr_t>(fd))) == 0;  // NOLINT(performance-no-int-to-ptr): a value, not an address
        ::pthread_attr_destroy(&attr);
        if (started) {
            return;
        }
    }
    close_fd(fd);
}

/// Below this size, a replaced file is freed inside the rename or unlink:
/// freeing its blocks and page cache (~0.2 ms per MiB on ext4 here) costs
/// less than starting the thread that would close it (~50 µs).
constexpr off_t kHoldMinBytes = off_t{256} << 10U;

/// The file about to be replaced or unlinked, held open (read-only) when it
/// is a regular file of at least kHoldMinBytes, so that dropping its last
/// name does not free it: after the rename or unlink, `close_later` makes the
/// last close, which frees its blocks and page cache, on another thread.
/// Nothing is held for no file, another kind of file, a symlink, no
/// permission or a small file. Closed inline when destroyed first (the
/// replacement failed).
class HeldFile {
public:
    explicit HeldFile(const std::string& path) noexcept {
        // SAFETY: path is a NUL-terminated string; open only reads it.
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0) {
            return;
        }
        struct stat st {};
        // SAFETY: st is a local struct that fstat fills.
        if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < kHoldMinBytes) {
            close_fd(fd);
            return;
        }
        fd_ = fd;
    }
    ~HeldFile() {
        if (fd_ >= 0) {
            close_fd(fd_);
        }
    }
    HeldFile(const HeldFile&) = delete;
    HeldFile& operator=(const HeldFile&) = delete;
    HeldFile(HeldFile&&) = delete;
    HeldFile& operator=(HeldFile&&) = delete;

    /// Once the file has lost its name: its last close on another thread.
    void close_later() noexcept {
        if (fd_ >= 0) {
            close_in_background(fd_);
            fd_ = -1;
        }
    }

private:
    int fd_ = -1;
};

/// Creates `prefix` + six random characters as a new file (O_EXCL), mode
/// 0644 less the umask, like a file the caller creates itself: the kernel
/// applies the umask, where mkostemp's fixed 0600 would need reading the
/// umask (/proc) and an fchmod, three more system calls per save. Returns the
/// descriptor and sets `name`, or -1 with errno.
int create_temporary(const std::string& prefix, std::string& name) {
    static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    constexpr size_t kSuffix = 6;
    constexpr int kTries = 100;
    name = prefix;
    name.append(kSuffix, 'X');
    for (int attempt = 0; attempt < kTries; ++attempt) {
        unsigned char random[kSuffix] = {};
        // SAFETY: random is a local array of kSuffix bytes that getrandom fills
        // at most. A short or failed read (no entropy source) leaves zeros or
        // partial bytes, which only makes a collision likelier: O_EXCL below
        // still never opens an existing file, and the loop tries again.
        (void)::getrandom(random, sizeof random, GRND_NONBLOCK);
        for (size_t i = 0; i < kSuffix; ++i) {
            const auto mix = static_cast<unsigned>(random[i]) + static_cast<unsigned>(attempt) * 7U + i;
            name[prefix.size() + i] = kAlphabet[mix % (sizeof kAlphabet - 1)];
        }
        // SAFETY: name is a NUL-terminated string that open only reads.
        const int fd = ::open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0 || errno != EEXIST) {
            return fd;
        }
    }
    errno = EEXIST;
    return -1;
}

}  // namespace

namespace {

/// How `replace_by_exchange` ended.
enum class Exchange : uint8_t {
    kDone,      ///< `target` holds the new file; the old one is gone.
    kFallback,  ///< Nothing changed: rename(2) decides.
};

/// Replaces the regular file `target` by `temp` without rename(2)'s implicit
/// flush: renameat2(RENAME_EXCHANGE) swaps the two names atomically (another
/// process opening `target` sees the old file or the new one), then the old
/// file, now named `temp`, is unlinked. On ext4 (auto_da_alloc, the default),
/// a rename that replaces a file first starts writeback of the whole new
/// file and waits for its blocks to be allocated, which made a non-durable
/// save of 256 MiB take 1.5x the time of writing the bytes; an exchange does
/// not. Only for non-durable commits: they promise no ordering of data and
/// rename on a power loss, and a durable commit has fsync'ed the data already.
/// kFallback, with nothing changed, when `target` is not there or not a
/// regular file (rename(2) then gives its usual result or error), or the file
/// system has no exchange; an Error only when the old file could neither be
/// unlinked nor swapped back (then `target` holds the new file).
Result<Exchange> replace_by_exchange(const std::string& temp, const std::string& target) {
    struct stat st {};
    // SAFETY: target is a NUL-terminated string; st is a local struct fstatat fills.
    if (::fstatat(AT_FDCWD, target.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) {
        return Exchange::kFallback;
    }
    // SAFETY: both paths are NUL-terminated strings; renameat2 only reads them.
    if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) != 0) {
        return Exchange::kFallback;  // ENOENT, EINVAL (no exchange here), ...: rename decides
    }
    // The old file, now at `temp`, is held open across its unlink: freeing
    // its blocks and page cache (~220 ms for 1 GiB on ext4 here) then happens
    // at the last close, which a background thread does, not this call.
    HeldFile old(temp);
    if (::unlink(temp.c_str()) == 0) {
        old.close_later();
        return Exchange::kDone;
    }
    // `target` changed between fstatat and the exchange (a directory now sits
    // at `temp`, EISDIR), or an I/O error: swap the names back, so that
    // rename(2) reports what it would have.
    const int err = errno;
    // SAFETY: as above.
    if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
        return Exchange::kFallback;
    }
    return io_error("unlink the replaced file, now \"" + temp + "\", after exchanging it with \"" + target + "\"",
                    err);
}


/// `temp` (closed, and fsync'ed when `durable` and `temp_synced`) put in place
/// of `target`: replace_file, with AtomicFileSink's fsync already done.
Status replace_with(const std::string& temp, const std::string& target, bool durable, bool temp_synced) {
    if (durable && !temp_synced) {
        // SAFETY: temp is a NUL-terminated string; open only reads it.
        const int fd = ::open(temp.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            const int err = errno;
            ::unlink(temp.c_str());
            return io_error("open \"" + temp + "\" to fsync it", err);
        }
        const int rc = ::fsync(fd);
        const int err = errno;
        close_fd(fd);
        if (rc != 0) {
            ::unlink(temp.c_str());
            return io_error("fsync temporary file \"" + temp + "\"", err);
        }
    }
    if (!durable) {
        auto exchanged = replace_by_exchange(temp, target);
        if (!exchanged) {
            return exchanged.error();  // `target` holds the new file; nothing is left to remove
        }
        if (*exchanged == Exchange::kDone) {
            return Status::success();
        }
    }
    // The file being replaced, if any, is held open across the rename: its
    // blocks are then freed by a background close, not inside rename(2)
    // (as replace_by_exchange does for non-durable commits).
    HeldFile old(target);
    // SAFETY: both paths are NUL-terminated strings; rename only reads them.
    if (::rename(temp.c_str(), target.c_str()) != 0) {
        const int err = errno;
        ::unlink(temp.c_str());
        return io_error("rename \"" + temp + "\" to \"" + target + "\"", err);
    }
    old.close_later();
    if (!durable) {
        return Status::success();
    }
    // Make the rename itself durable: fsync the directory that holds both names.
    const size_t slash = target.rfind('/');
    const std::string dir = slash == std::string::npos ? std::string(".")
                            : slash == 0               ? std::string("/")
                                                       : target.substr(0, slash);
    // SAFETY: dir is a NUL-terminated string; open only reads it.
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        return io_error("open directory \"" + dir + "\" to fsync it", errno);
    }
    if (::fsync(dfd) != 0 && errno != EINVAL) {  // EINVAL: the file system cannot sync directories
        const int err = errno;
        close_fd(dfd);
        return io_error("fsync directory \"" + dir + "\"", err);
    }
    close_fd(dfd);
    return Status::success();
}

}  // namespace

Status replace_file(const std::filesystem::path& temp, const std::filesystem::path& target, bool durable) {
    return replace_with(temp.native(), target.native(), durable, /*temp_synced=*/false);
}

// ---------------------------------------------------------------------------
// FdSink

FdSink::~FdSink() {
    if (owns_ && fd_ >= 0) {
        close_fd(fd_);
    }
}

Status FdSink::write(std::span<const uint8_t> bytes) {
    if (bytes.empty()) {
        return Status::success();
    }
    if (is_socket_ < 0) {
        struct stat st {};
        // SAFETY: st is a local struct that fstat fills.
        if (::fstat(fd_, &st) != 0) {
            return io_error("fstat fd " + std::to_string(fd_), errno);
        }
        is_socket_ = S_ISSOCK(st.st_mode) ? 1 : 0;
    }
    return write_all(fd_, is_socket_ == 1, bytes, "write to fd " + std::to_string(fd_), &interrupt_);
}

// ---------------------------------------------------------------------------
// StdioSink

Status StdioSink::write(std::span<const uint8_t> bytes) {
    if (bytes.empty()) {
        return Status::success();
    }
    errno = 0;
    // SAFETY: bytes.data() .. +size() is readable; fwrite only reads it.
    const size_t n = std::fwrite(bytes.data(), 1, bytes.size(), file_);
    if (n != bytes.size()) {
        const int err = errno != 0 ? errno : EIO;
        return io_error("fwrite: wrote " + dec(n) + " of " + dec(bytes.size()) + " bytes", err);
    }
    return Status::success();
}

Status StdioSink::flush() {
    errno = 0;
    if (std::fflush(file_) != 0) {
        return io_error("fflush", errno != 0 ? errno : EIO);
    }
    return Status::success();
}

// ---------------------------------------------------------------------------
// MemorySink

Status MemorySink::write(std::span<const uint8_t> bytes) {
    bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
    return Status::success();
}

// ---------------------------------------------------------------------------
// AtomicFileSink

Result<std::unique_ptr<AtomicFileSink>> AtomicFileSink::create(const std::filesystem::path& target_path,
                                                               bool durable) {
    const std::string& path = target_path.native();
    const size_t slash = path.rfind('/');
    const std::string dir_prefix = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    if (base.empty() || base == "." || base == "..") {
        return Error(ErrorCode::kInvalidArgument, "path \"" + path + "\": does not name a file");
    }
    std::string temp;
    const int fd = create_temporary(dir_prefix + "." + base + ".tmp-", temp);
    if (fd < 0) {
        return io_error("create temporary file \"" + temp + "\" for \"" + path + "\"", errno);
    }
    return std::unique_ptr<AtomicFileSink>(new AtomicFileSink(path, std::move(temp), fd, durable));
}

AtomicFileSink::~AtomicFileSink() { abandon(); }

Status AtomicFileSink::write(std::span<const uint8_t> bytes) {
    if (done_) {
        return Error(ErrorCode::kIoError, "write to \"" + path_ + "\": the file was already committed or abandoned");
    }
    HURRAY_RETURN_IF_ERROR(write_all(fd_, false, bytes, "write to temporary file \"" + temp_path_ + "\""));
    written_ += bytes.size();
    // Durable: start the writeback of each 8 MiB as soon as it is written
    // (no wait), overlapping the disk with the caller; commit's fsync then
    // waits for the tail only. A failure here is not an error: fsync reports
    // any write error at commit.
    constexpr uint64_t kWritebackChunk = uint64_t{8} << 20U;
    if (durable_ && written_ - written_back_ >= kWritebackChunk) {
        // SAFETY: fd_ is this sink's open descriptor; the call reads no
        // caller memory.
        (void)::sync_file_range(fd_, static_cast<off_t>(written_back_),
                                static_cast<off_t>(written_ - written_back_), SYNC_FILE_RANGE_WRITE);
        written_back_ = written_;
    }
    return Status::success();
}

Status AtomicFileSink::commit() {
    if (done_) {
        return Error(ErrorCode::kIoError, "commit \"" + path_ + "\": already committed or abandoned");
    }
    if (durable_ && ::fsync(fd_) != 0) {
        const int err = errno;
        abandon();
        return io_error("fsync temporary file \"" + temp_path_ + "\"", err);
    }
    const int fd = fd_;
    fd_ = -1;
    if (close_fd(fd) != 0) {
        const int err = errno;
        abandon();
        return io_error("close temporary file \"" + temp_path_ + "\"", err);
    }
    done_ = true;  // from here on replace_with removes the temporary file itself on failure
    return replace_with(temp_path_, path_, durable_, /*temp_synced=*/true);
}

void AtomicFileSink::abandon() noexcept {
    if (done_) {
        return;
    }
    done_ = true;
    if (fd_ >= 0) {
        close_fd(fd_);
        fd_ = -1;
    }
    ::unlink(temp_path_.c_str());
}

}  // namespace hurray
