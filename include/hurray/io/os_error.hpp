// SPDX-License-Identifier: Apache-2.0
/// @file
/// Errors of failed system calls: the one way this library turns an `errno`
/// into an `Error` (its text in the message, the number kept as data), for
/// its own I/O and for applications' `ByteSource`, `ByteSink` and
/// `RangeSource` subclasses.
#pragma once

#include "hurray/io/export.hpp"

#include <string>
#include <string_view>

#include "hurray/core/result.hpp"

namespace hurray {

/// The operating system's text for `err` ("No such file or directory"),
/// thread-safe (unlike `std::strerror`).
[[nodiscard]] HURRAY_IO_EXPORT std::string os_error_text(int err);

/// The error of a failed system call: `code` (default `kIoError`), the
/// message `"<what>: <os_error_text(err)>"`, `offset`, and `err` as
/// `Error::os_error()`, so that a caller acts on the number (`ENOENT`: the
/// path names nothing) without reading the message.
///
/// @code
/// if (::fstat(fd, &st) != 0) return hurray::os_error("fstat '" + path + "'", errno);
/// @endcode
[[nodiscard]] HURRAY_IO_EXPORT Error os_error(std::string_view what, int err, ErrorCode code = ErrorCode::kIoError,
                                              uint64_t offset = Error::kNoOffset);

}  // namespace hurray
