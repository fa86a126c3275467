// SPDX-License-Identifier: Apache-2.0
// Internal: replacing a file by a finished temporary one without rename(2)'s
// implicit writeback on ext4 (used by AtomicFileSink and hurray::convert's
// outputs). Not installed.
#pragma once

#include <cstdint>
#include <string>

#include "hurray/core/result.hpp"
#include "hurray/io/export.hpp"

namespace hurray::detail {

/// How `replace_by_exchange` ended.
enum class Exchange : uint8_t {
    kDone,      ///< `target` holds the new file; the old one is gone
    kFallback,  ///< nothing changed: replace with rename(2)
};

/// Replaces the regular file `target` by `temp` with
/// renameat2(RENAME_EXCHANGE) and an unlink of the old file, for
/// non-durable commits only (see byte_sink.cpp). kFallback, with nothing
/// changed, when rename(2) should do it; an Error only when the old file
/// could neither be unlinked nor swapped back (then `target` holds the new
/// file).
HURRAY_IO_EXPORT Result<Exchange> replace_by_exchange(const std::string& temp, const std::string& target);

}  // namespace hurray::detail
