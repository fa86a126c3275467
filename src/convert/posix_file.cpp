// SPDX-License-Identifier: Apache-2.0
// A read-only file read with pread.
#include "convert/posix_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace hurray::formats::detail {

Result<PosixFile> PosixFile::open(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return Error(ErrorCode::kIoError, path.string() + ": " + std::strerror(errno));
    }
    auto shared = std::shared_ptr<const int>(new int(fd), [](const int* p) {
        ::close(*p);
        delete p;
    });
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        return Error(ErrorCode::kIoError, path.string() + ": fstat: " + std::strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) {
        return Error(ErrorCode::kIoError, path.string() + ": not a regular file");
    }
    return PosixFile(std::move(shared), static_cast<uint64_t>(st.st_size), path.string());
}

Status PosixFile::read(uint64_t offset, std::span<uint8_t> out, const std::string& what) const {
    size_t done = 0;
    while (done < out.size()) {
        const uint64_t at = offset + done;
        if (at > static_cast<uint64_t>(INT64_MAX)) {
            return Error(ErrorCode::kTruncated, path_ + ": " + what + ": offset past the end", at);
        }
        // SAFETY: out.data() + done .. out.size() is writable memory of the caller's span.
        const ssize_t n =
            ::pread(*fd_, out.data() + done, out.size() - done, static_cast<off_t>(at));
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return Error(ErrorCode::kIoError, path_ + ": " + what + ": " + std::strerror(errno),
                         at);
        }
        if (n == 0) {
            return Error(ErrorCode::kTruncated,
                         path_ + ": " + what + ": the file ends at byte " + std::to_string(at) +
                             ", " + std::to_string(out.size() - done) + " bytes short",
                         at);
        }
        done += static_cast<size_t>(n);
    }
    return {};
}

}  // namespace hurray::formats::detail
