// SPDX-License-Identifier: Apache-2.0
/// @file
/// `RangeSource`: random access to the bytes of one file by byte range, the
/// interface `FileReader::open(std::shared_ptr<RangeSource>, ...)` reads
/// through. Implemented here for a local file (`pread`) and for memory; the
/// HTTP(S) implementation is `HttpRangeSource` (hurray::http,
/// `<hurray/net/http_range_source.hpp>`).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/io/export.hpp"

namespace hurray {

/// One range of a vectored read (`RangeSource::read_ranges`): the bytes
/// [offset, offset + out.size()) of the file, written to `out`.
struct HURRAY_IO_EXPORT ByteRange {
    /// Offset of the first byte in the file.
    uint64_t offset = 0;
    /// Where the bytes go; its size is the range's length.
    std::span<uint8_t> out;
};

/// Random access to the bytes of one immutable file: its size, and any
/// byte range of it on request. Implementations must allow `read` from
/// several threads at once (a `FileReader` is shared by threads).
///
/// Every virtual function is defined in this header (no key function), so
/// that a subclass compiled with RTTI links against this library built
/// without it.
///
/// @code
/// class Blob final : public hurray::RangeSource {
/// public:
///     uint64_t size() const noexcept override { return bytes_.size(); }
///     hurray::Status read(uint64_t offset, std::span<uint8_t> out) override {
///         HURRAY_RETURN_IF_ERROR(check_range(offset, out.size()));
///         count_request(out.size());
///         std::memcpy(out.data(), bytes_.data() + offset, out.size());
///         return hurray::Status::success();
///     }
/// private:
///     std::vector<uint8_t> bytes_;
/// };
/// @endcode
class HURRAY_IO_EXPORT RangeSource {
public:
    /// Releases the source (connections, descriptors, memory).
    virtual ~RangeSource() = default;

    /// Size of the file in bytes, fixed when the source was opened.
    [[nodiscard]] virtual uint64_t size() const noexcept = 0;

    /// Fills `out` with the bytes [offset, offset + out.size()). A range
    /// that leaves the file, and a source that delivers fewer bytes than
    /// asked (a short read), are errors naming the range; `out` is then
    /// unspecified. Never returns part of the range as success.
    [[nodiscard]] virtual Status read(uint64_t offset, std::span<uint8_t> out) = 0;

    /// Fills every range of `ranges` (in any order; ranges may be adjacent
    /// but must not overlap), as one `read` each would, but in as few
    /// requests as the source can: the HTTP source sends multi-range
    /// requests, or several ranges in parallel. This default reads them one
    /// by one. On error the contents of every `out` are unspecified.
    ///
    /// @code
    /// std::vector<uint8_t> a(16), b(16);
    /// hurray::ByteRange r[] = {{0, a}, {4096, b}};
    /// HURRAY_RETURN_IF_ERROR(src->read_ranges(r));
    /// @endcode
    [[nodiscard]] virtual Status read_ranges(std::span<const ByteRange> ranges) {
        for (const ByteRange& r : ranges) {
            HURRAY_RETURN_IF_ERROR(read(r.offset, r.out));
        }
        return Status::success();
    }

    /// What identifies this version of the file (for HTTP the ETag, else
    /// the Last-Modified date, pinned at open); empty when the source has
    /// none (local files, memory).
    [[nodiscard]] virtual std::string identity() const { return {}; }

    /// What the file is called in error messages (a path, a URL without
    /// credentials); empty for memory.
    [[nodiscard]] virtual std::string name() const { return {}; }

    /// Whether the file changed since it was opened, when the source can
    /// tell without a request (a local file's size); success otherwise.
    [[nodiscard]] virtual Status check_unchanged() const { return Status::success(); }

    /// Requests made so far (each `read` is one for local and memory
    /// sources; an HTTP source counts every request it sent, retries and
    /// the one at open included).
    [[nodiscard]] uint64_t request_count() const noexcept {
        return requests_.load(std::memory_order_relaxed);
    }
    /// Payload bytes received so far by those requests.
    [[nodiscard]] uint64_t bytes_received() const noexcept {
        return bytes_.load(std::memory_order_relaxed);
    }

    /// A source with its counters at zero.
    RangeSource() = default;
    /// Not copyable or movable: readers share it through a `shared_ptr`.
    RangeSource(const RangeSource&) = delete;
    /// Not copyable.
    RangeSource& operator=(const RangeSource&) = delete;
    /// Not movable.
    RangeSource(RangeSource&&) = delete;
    /// Not movable.
    RangeSource& operator=(RangeSource&&) = delete;

protected:
    /// Counts one request that brought `bytes` payload bytes.
    void count_request(uint64_t bytes) noexcept {
        requests_.fetch_add(1, std::memory_order_relaxed);
        bytes_.fetch_add(bytes, std::memory_order_relaxed);
    }
    /// `kTruncated` "bytes [offset, offset + length) lie past the end of
    /// <name> (N bytes)" when the range leaves the file (or overflows).
    [[nodiscard]] Status check_range(uint64_t offset, uint64_t length) const;

private:
    std::atomic<uint64_t> requests_{0};
    std::atomic<uint64_t> bytes_{0};
};

/// A `RangeSource` over bytes in memory (copied, or shared with an owner).
///
/// @code
/// auto src = std::make_shared<hurray::MemoryRangeSource>(std::move(file_bytes));
/// auto file = hurray::FileReader::open(src);
/// uint64_t requests = src->request_count();
/// @endcode
class HURRAY_IO_EXPORT MemoryRangeSource final : public RangeSource {
public:
    /// Takes `bytes`.
    explicit MemoryRangeSource(std::vector<uint8_t> bytes);
    /// Reads `bytes`, kept alive by `owner` (may be null: then `bytes` must
    /// outlive the source).
    MemoryRangeSource(std::span<const uint8_t> bytes, std::shared_ptr<const void> owner);
    /// Number of bytes.
    [[nodiscard]] uint64_t size() const noexcept override { return bytes_.size(); }
    /// Copies the range (one request).
    [[nodiscard]] Status read(uint64_t offset, std::span<uint8_t> out) override;

private:
    std::vector<uint8_t> own_;
    std::span<const uint8_t> bytes_;
    std::shared_ptr<const void> owner_;
};

/// A `RangeSource` over a local file read with `pread` (no mapping).
///
/// @code
/// auto src = hurray::FileRangeSource::open("model.hrry");
/// if (!src) return src.error();
/// auto file = hurray::FileReader::open(*src);
/// @endcode
class HURRAY_IO_EXPORT FileRangeSource final : public RangeSource {
public:
    /// Opens `path` read-only; `kIoError` when it cannot be opened or is not
    /// a regular file.
    static Result<std::shared_ptr<FileRangeSource>> open(const std::string& path);
    /// Closes the file.
    ~FileRangeSource() override;
    /// Size of the file at open.
    [[nodiscard]] uint64_t size() const noexcept override { return size_; }
    /// `pread` of the range; a file that ends early is `kIoError` naming it.
    [[nodiscard]] Status read(uint64_t offset, std::span<uint8_t> out) override;
    /// The path.
    [[nodiscard]] std::string name() const override { return path_; }
    /// `kIoError` when the file's size is no longer what it was at open.
    [[nodiscard]] Status check_unchanged() const override;

    /// Use `open`.
    FileRangeSource(std::string path, int fd, uint64_t size) noexcept
        : path_(std::move(path)), fd_(fd), size_(size) {}
    /// Not copyable or movable (it owns the descriptor).
    FileRangeSource(const FileRangeSource&) = delete;
    /// Not copyable.
    FileRangeSource& operator=(const FileRangeSource&) = delete;
    /// Not movable.
    FileRangeSource(FileRangeSource&&) = delete;
    /// Not movable.
    FileRangeSource& operator=(FileRangeSource&&) = delete;

private:
    std::string path_;
    int fd_ = -1;
    uint64_t size_ = 0;
};

}  // namespace hurray
