// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file
/// Internal: putting a finished temporary file in place of its target (for outputs not
/// written through AtomicFileSink: a verified output, a zip written by libzip).

#include <filesystem>

#include "hurray/core/result.hpp"

namespace hurray::formats::detail {

/// A fresh name beside `target` for a temporary file: `.<name>.<tag>-<pid>-<n>`.
std::filesystem::path temp_path_beside(const std::filesystem::path& target, const char* tag);

/// A new empty directory beside `target` (`.<name>.<tag>-XXXXXX`, mkdtemp): a file of
/// the target's own name inside it is on the same file system.
Result<std::filesystem::path> temp_dir_beside(const std::filesystem::path& target, const char* tag);

/// Renames `temp` over `target`; when `durable`, fsyncs `temp` first and the directory
/// after. On failure `temp` is removed and `target` is untouched.
Status commit_file(const std::filesystem::path& temp, const std::filesystem::path& target,
                   bool durable);

/// Removes a file (or a directory and its contents) when it goes out of scope, unless
/// released.
class RemoveOnExit {
public:
    explicit RemoveOnExit(std::filesystem::path path) : path_(std::move(path)) {}
    RemoveOnExit(const RemoveOnExit&) = delete;
    RemoveOnExit& operator=(const RemoveOnExit&) = delete;
    RemoveOnExit(RemoveOnExit&&) = delete;
    RemoveOnExit& operator=(RemoveOnExit&&) = delete;
    ~RemoveOnExit() {
        if (!path_.empty()) {
            std::error_code ec;
            std::filesystem::remove_all(path_, ec);
        }
    }
    /// Keeps the file.
    void release() noexcept { path_.clear(); }

private:
    std::filesystem::path path_;
};

}  // namespace hurray::formats::detail
