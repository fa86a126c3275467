// SPDX-License-Identifier: Apache-2.0
// Internal: the bytes of a SafeTensors file, through io's FileSource (a read-only mapping
// guarded against SIGBUS, or pread when mapping fails, or bytes in memory).
// This header keeps io's internal file_source.hpp out of the SafeTensors reader;
// safetensors_mapping.cpp alone includes it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "hurray/core/result.hpp"
#include "hurray/io/shared_buffer.hpp"

namespace hurray::detail {
class FileSource;
}  // namespace hurray::detail

namespace hurray::safetensors_mapping {

/// Shares one FileSource; copies share it too.
class Mapping {
public:
    /// Maps `path` read-only (pread when mapping fails). Fails with kIoError.
    static Result<Mapping> open(const std::string& path);
    /// Wraps bytes in memory that outlive every copy (fuzz target, tests).
    static Mapping memory(std::span<const uint8_t> bytes);

    /// The file's size.
    [[nodiscard]] uint64_t size() const noexcept;
    /// Whether read() hands out zero-copy slices (a mapping or memory).
    [[nodiscard]] bool contiguous() const noexcept;
    /// Bytes [offset, offset + length): a zero-copy slice when contiguous. kTruncated past
    /// the end (naming `what`), kIoError when a read fails.
    [[nodiscard]] Result<SharedBuffer> read(uint64_t offset, uint64_t length,
                                            const char* what) const;
    /// Drops this process's mapping of the pages of [offset, offset + length) (a hint).
    void release(uint64_t offset, uint64_t length) const noexcept;
    /// kIoError when the file changed size, or a mapped page faulted, since it was opened.
    [[nodiscard]] Status check_unchanged() const;

private:
    explicit Mapping(std::shared_ptr<const detail::FileSource> file) noexcept
        : file_(std::move(file)) {}
    std::shared_ptr<const detail::FileSource> file_;
};

}  // namespace hurray::safetensors_mapping
