// SPDX-License-Identifier: Apache-2.0
#include "convert/gguf_file_map.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace hurray::formats::detail {

MappedFile::MappedFile(void* base, size_t size) noexcept
    // SAFETY: `base` is a mapping of `size` readable bytes (or null with size 0) that
    // lives until the destructor unmaps it.
    : base_(base), bytes_(static_cast<const uint8_t*>(base), size) {}

MappedFile::~MappedFile() {
    if (base_ != nullptr) {
        ::munmap(base_, bytes_.size());
    }
}

Result<std::shared_ptr<const MappedFile>> MappedFile::open(const std::filesystem::path& path) {
    auto os_error = [&path](const char* what) {
        return Error(ErrorCode::kIoError,
                     path.string() + ": " + what + ": " + std::strerror(errno));
    };
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return os_error("open");
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        auto e = os_error("fstat");
        ::close(fd);
        return e;
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        return Error(ErrorCode::kIoError, path.string() + ": not a regular file");
    }
    const auto size = static_cast<size_t>(st.st_size);
    void* base = nullptr;
    if (size > 0) {
        base = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (base == MAP_FAILED) {
            auto e = os_error("mmap");
            ::close(fd);
            return e;
        }
    }
    ::close(fd);  // the mapping stays valid without the descriptor
    return std::shared_ptr<const MappedFile>(new MappedFile(base, size));
}

}  // namespace hurray::formats::detail
