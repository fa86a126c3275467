// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file
/// Internal: temporary names beside a target, for outputs not written through
/// AtomicFileSink (a verified output, a zip written by libzip); hurray::replace_file
/// puts them in place.

#include <filesystem>

#include "hurray/core/result.hpp"

namespace hurray::convert::detail {

/// A new empty directory beside `target` (`.<name>.<tag>-XXXXXX`, mkdtemp): a file of
/// the target's own name inside it is on the same file system.
Result<std::filesystem::path> temp_dir_beside(const std::filesystem::path& target, const char* tag);

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

}  // namespace hurray::convert::detail
