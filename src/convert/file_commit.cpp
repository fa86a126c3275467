// SPDX-License-Identifier: Apache-2.0
// Temporary names beside a target (hurray::replace_file puts the file in place).
#include "convert/file_commit.hpp"

#include "hurray/io/os_error.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace hurray::convert::detail {

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
        return os_error(buf + ": mkdtemp", errno);
    }
    return std::filesystem::path(buf);
}

}  // namespace hurray::convert::detail
