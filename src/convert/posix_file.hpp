// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file
/// Internal: a file read with pread (no mapping: a file truncated by another process
/// gives an error, never a SIGBUS), shared by the sources that read pieces of it.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

#include "hurray/core/result.hpp"

namespace hurray::formats::detail {

/// An open, read-only file. Copies share the descriptor; safe from several threads
/// (pread has no file position).
class PosixFile {
public:
    /// Opens `path` for reading; kIoError naming it when it cannot be opened.
    static Result<PosixFile> open(const std::filesystem::path& path);
    /// Its size when opened.
    [[nodiscard]] uint64_t size() const noexcept { return size_; }
    /// The path it was opened with.
    [[nodiscard]] const std::string& path() const noexcept { return path_; }
    /// Reads exactly out.size() bytes at `offset`: kTruncated naming `what` and the offset
    /// when the file ends first, kIoError when the system call fails.
    [[nodiscard]] Status read(uint64_t offset, std::span<uint8_t> out,
                              const std::string& what) const;

private:
    PosixFile(std::shared_ptr<const int> fd, uint64_t size, std::string path)
        : fd_(std::move(fd)), size_(size), path_(std::move(path)) {}
    std::shared_ptr<const int> fd_;
    uint64_t size_ = 0;
    std::string path_;
};

}  // namespace hurray::formats::detail
