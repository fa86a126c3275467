// SPDX-License-Identifier: Apache-2.0
/// @file
/// What the C ABI's stream reader (stream_reader.cpp) and writer
/// (stream_writer.cpp) share: their flag bits and the mapping of stream errors
/// that are the caller's doing. Not installed.
#pragma once

#include <string_view>

#include "c/c_internal.hpp"

namespace hurray::c {

/// Flag bits a stream reader accepts.
inline constexpr uint32_t kStreamReaderFlags =
    HURRAY_STREAM_PERMISSIVE | HURRAY_STREAM_REQUIRE_PRODUCER_SYNCED | HURRAY_STREAM_SPEC_ONLY;
/// Flag bits a stream writer accepts.
inline constexpr uint32_t kStreamWriterFlags = HURRAY_STREAM_REQUIRE_PRODUCER_SYNCED;

/// Records `error` and returns its status, except that `kSizeMismatch` becomes
/// `HURRAY_ERR_INVALID_ARGUMENT`: in a stream it always means that the
/// caller's sizes or call order disagree with a descriptor (a `read_into` of
/// the wrong size, buffers of the wrong size, a tensor ended early), not that
/// a container is damaged, which the general mapping
/// (`HURRAY_ERR_INVALID_FILE`) assumes.
inline HurrayStatus fail_stream(const Error& error) noexcept {
    const HurrayStatus status = fail(error);
    return error.code() == ErrorCode::kSizeMismatch ? HURRAY_ERR_INVALID_ARGUMENT : status;
}

/// Records "`function`: `what`" and returns `HURRAY_ERR_INVALID_ARGUMENT`:
/// a call made in a state that does not allow it.
inline HurrayStatus out_of_order(const char* function, std::string_view what) noexcept {
    return fail(HURRAY_ERR_INVALID_ARGUMENT, function, what);
}

}  // namespace hurray::c
