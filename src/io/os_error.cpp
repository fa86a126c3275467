// SPDX-License-Identifier: Apache-2.0
// Errors of failed system calls (os_error.hpp).
#include "hurray/io/os_error.hpp"

#include <cstring>

namespace hurray {

std::string os_error_text(int err) {
    char buf[256] = {};
    // SAFETY: buf is a local array of the size passed; the GNU strerror_r
    // returns either buf or a static string, both NUL-terminated.
    const char* s = strerror_r(err, buf, sizeof buf);
    return {s};
}

Error os_error(std::string_view what, int err, ErrorCode code, uint64_t offset) {
    std::string message(what);
    message.append(": ").append(os_error_text(err));
    return Error(code, std::move(message), offset).with_os_error(err);
}

}  // namespace hurray
