// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file
/// Shared by the fuzz targets whose reader opens a path: the input bytes as a file.

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace hurray::fuzz {

/// The input bytes in an anonymous in-memory file (memfd), open while this object lives,
/// reachable by path as /proc/self/fd/N. Nothing is left on disk, whatever happens.
class InputFile {
public:
    /// Writes `bytes` to a new memfd; ok() is false when that fails (the caller skips
    /// the input).
    explicit InputFile(std::span<const uint8_t> bytes) : fd_(::memfd_create("fuzz_input", MFD_CLOEXEC)) {
        size_t done = 0;
        while (fd_ >= 0 && done < bytes.size()) {
            // SAFETY: bytes.data() + done .. bytes.size() is readable memory of the input.
            const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
            if (n <= 0) {
                ::close(fd_);
                fd_ = -1;
                break;
            }
            done += static_cast<size_t>(n);
        }
    }
    InputFile(const InputFile&) = delete;
    InputFile& operator=(const InputFile&) = delete;
    InputFile(InputFile&&) = delete;
    InputFile& operator=(InputFile&&) = delete;
    ~InputFile() {
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }

    /// Whether the file holds the input.
    [[nodiscard]] bool ok() const noexcept { return fd_ >= 0; }
    /// Its path (valid while this object lives).
    [[nodiscard]] std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

private:
    int fd_;
};

}  // namespace hurray::fuzz
