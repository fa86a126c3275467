// SPDX-License-Identifier: Apache-2.0
// Putting a finished temporary file in place of its target.
#include "convert/file_commit.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "io/file_replace.hpp"

namespace hurray::formats::detail {
namespace {

Status fsync_path(const std::filesystem::path& path, bool directory) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (directory ? O_DIRECTORY : 0));
    if (fd < 0) {
        return Error(ErrorCode::kIoError,
                     path.string() + ": open to fsync: " + std::strerror(errno));
    }
    const int rc = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    if (rc != 0 && !(directory && err == EINVAL)) {  // EINVAL: directories cannot be synced there
        return Error(ErrorCode::kIoError, path.string() + ": fsync: " + std::strerror(err));
    }
    return {};
}

}  // namespace

std::filesystem::path temp_path_beside(const std::filesystem::path& target, const char* tag) {
    static std::atomic<uint64_t> counter{0};
    std::string name(1, '.');
    name += target.filename().string();
    name += '.';
    name += tag;
    name += '-';
    name += std::to_string(::getpid());
    name += '-';
    name += std::to_string(counter.fetch_add(1));
    std::filesystem::path temp = target;
    temp.replace_filename(name);
    return temp;
}

Result<std::filesystem::path> temp_dir_beside(const std::filesystem::path& target,
                                              const char* tag) {
    std::string name(1, '.');
    name += target.filename().string();
    name += '.';
    name += tag;
    name += "-XXXXXX";
    std::filesystem::path templ = target;
    templ.replace_filename(name);
    std::string buf = templ.string();
    // SAFETY: buf is a NUL-terminated writable std::string buffer; mkdtemp replaces the six
    // trailing X in place and keeps its length.
    if (::mkdtemp(buf.data()) == nullptr) {
        return Error(ErrorCode::kIoError, buf + ": mkdtemp: " + std::strerror(errno));
    }
    return std::filesystem::path(buf);
}

Status commit_file(const std::filesystem::path& temp, const std::filesystem::path& target,
                   bool durable) {
    RemoveOnExit cleanup(temp);
    if (durable) {
        HURRAY_RETURN_IF_ERROR(fsync_path(temp, false));
    }
    if (!durable) {
        // Non-durable: swap the names rather than rename over an existing
        // file, which on ext4 first writes the whole new file back (as
        // AtomicFileSink does; falls back to rename when it cannot).
        HURRAY_ASSIGN_OR_RETURN(const hurray::detail::Exchange exchanged,
                                hurray::detail::replace_by_exchange(temp.string(), target.string()));
        if (exchanged == hurray::detail::Exchange::kDone) {
            cleanup.release();
            return {};
        }
    }
    std::error_code ec;
    std::filesystem::rename(temp, target, ec);
    if (ec) {
        return Error(ErrorCode::kIoError,
                     "rename " + temp.string() + " to " + target.string() + ": " + ec.message());
    }
    cleanup.release();
    if (durable) {
        std::filesystem::path dir = target.parent_path();
        return fsync_path(dir.empty() ? std::filesystem::path(".") : dir, true);
    }
    return {};
}

}  // namespace hurray::formats::detail
