// SPDX-License-Identifier: Apache-2.0
// RangeSource's range check, and its memory and local-file (pread)
// implementations.
#include "hurray/io/range_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "hurray/core/checked_math.hpp"
#include "hurray/core/text.hpp"

namespace hurray {


namespace {

std::string os_error(const std::string& what, int err) {
    return what + ": " + std::error_code(err, std::generic_category()).message();
}

}  // namespace

Status RangeSource::check_range(uint64_t offset, uint64_t length) const {
    const auto end = add_u64(offset, length);
    const uint64_t total = size();
    if (!end || *end > total) {
        const std::string who = name();
        return Error(ErrorCode::kTruncated,
                     "bytes [" + dec(offset) + ", " + (end ? dec(*end) : std::string("2^64+")) +
                         ") lie past the end of " + (who.empty() ? std::string("the file") : "'" + who + "'") +
                         " (" + dec(total) + " bytes)",
                     offset);
    }
    return Status::success();
}

MemoryRangeSource::MemoryRangeSource(std::vector<uint8_t> bytes) : own_(std::move(bytes)), bytes_(own_) {}

MemoryRangeSource::MemoryRangeSource(std::span<const uint8_t> bytes, std::shared_ptr<const void> owner)
    : bytes_(bytes), owner_(std::move(owner)) {}

Status MemoryRangeSource::read(uint64_t offset, std::span<uint8_t> out) {
    HURRAY_RETURN_IF_ERROR(check_range(offset, out.size()));
    count_request(out.size());
    if (!out.empty()) {
        // SAFETY: check_range proved offset + out.size() <= bytes_.size(), so
        // the source range is inside bytes_ and the destination is out itself.
        std::memcpy(out.data(), bytes_.data() + offset, out.size());
    }
    return Status::success();
}

Result<std::shared_ptr<FileRangeSource>> FileRangeSource::open(const std::string& path) {
    // SAFETY: path.c_str() is a valid NUL-terminated string for the call.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // NOLINT(cppcoreguidelines-pro-type-vararg)
    if (fd < 0) {
        return Error(ErrorCode::kIoError, os_error("open '" + path + "'", errno));
    }
    struct stat st {};
    // SAFETY: st is a local, writable struct stat; fd is open.
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0) {  // NOLINT(hicpp-signed-bitwise)
        const int err = errno;
        const bool regular = S_ISREG(st.st_mode);  // NOLINT(hicpp-signed-bitwise)
        static_cast<void>(::close(fd));
        return Error(ErrorCode::kIoError, regular ? os_error("fstat '" + path + "'", err)
                                                  : "open '" + path + "': not a regular file");
    }
    return std::make_shared<FileRangeSource>(path, fd, static_cast<uint64_t>(st.st_size));
}

FileRangeSource::~FileRangeSource() {
    if (fd_ >= 0) {
        // SAFETY: fd_ was returned by open() and is owned by this object only.
        static_cast<void>(::close(fd_));
    }
}

Status FileRangeSource::read(uint64_t offset, std::span<uint8_t> out) {
    HURRAY_RETURN_IF_ERROR(check_range(offset, out.size()));
    if (offset + out.size() > static_cast<uint64_t>(INT64_MAX)) {
        return Error(ErrorCode::kIoError, "'" + path_ + "': range too large to read", offset);
    }
    count_request(out.size());
    size_t done = 0;
    while (done < out.size()) {
        // SAFETY: the destination is out[done, out.size()), inside out; the
        // file offset fits in off_t (checked above).
        const ssize_t n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return Error(ErrorCode::kIoError, os_error("pread '" + path_ + "'", errno), offset + done);
        }
        if (n == 0) {
            return Error(ErrorCode::kIoError,
                         "'" + path_ + "': bytes [" + dec(offset) + ", " + dec(offset + out.size()) +
                             "): the file ended at byte " + dec(offset + done) +
                             " (it shrank after it was opened)",
                         offset + done);
        }
        done += static_cast<size_t>(n);
    }
    return Status::success();
}

Status FileRangeSource::check_unchanged() const {
    struct stat st {};
    // SAFETY: st is a local, writable struct stat; fd_ is open.
    if (::fstat(fd_, &st) == 0 && st.st_size >= 0 && static_cast<uint64_t>(st.st_size) != size_) {
        return Error(ErrorCode::kIoError, "file changed while open: it was " + dec(size_) +
                                              " bytes when opened, it is " + dec(static_cast<uint64_t>(st.st_size)) +
                                              " now");
    }
    return Status::success();
}

}  // namespace hurray
