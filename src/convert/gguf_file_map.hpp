// SPDX-License-Identifier: Apache-2.0
// Internal: a whole file mapped read-only, for the GGUF reader (src/convert/gguf_file_map.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>

#include "hurray/core/result.hpp"

namespace hurray::formats::detail {

/// A read-only private mapping of a whole regular file (an empty file maps to no bytes),
/// unmapped when the last owner goes.
class MappedFile {
public:
    /// Maps `path`. Fails with kIoError naming the path and the OS error.
    static Result<std::shared_ptr<const MappedFile>> open(const std::filesystem::path& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    MappedFile(MappedFile&&) = delete;
    MappedFile& operator=(MappedFile&&) = delete;

    /// The file's bytes.
    [[nodiscard]] std::span<const uint8_t> bytes() const noexcept { return bytes_; }

private:
    MappedFile(void* base, size_t size) noexcept;
    void* base_ = nullptr;
    std::span<const uint8_t> bytes_;
};

}  // namespace hurray::formats::detail
