// SPDX-License-Identifier: Apache-2.0
// Internal: survives a mapped file shrinking underneath the process.
//
// Reading a page of a file mapping that lies past the file's current end
// raises SIGBUS, which kills the process by default. Every mapping a
// FileSource makes is registered here; a process-wide SIGBUS handler
// (installed once, chained to the handler that was there before) recognises
// a fault inside a registered mapping, replaces the mapping from the faulting
// page to its end with anonymous zero pages, marks the mapping as changed and
// returns: the faulting read is retried and sees zeros. The library then
// reports the change (kIoError "file changed while mapped") wherever it
// checks, instead of results built from those zeros. A fault anywhere else
// goes to the previous handler (or the default action).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace hurray::detail {

/// A mapping's place in the registry (slot index plus generation, so that a
/// reused slot is not mistaken for the old mapping).
struct MappingWatch {
    uint32_t slot = 0;
    uint64_t generation = 0;
};

/// Registers the mapping [base, base + length), writable or not (the zero
/// pages put in after a fault get the same protection). Installs the SIGBUS
/// handler on first use. Returns nothing when the registry is full or the
/// handler cannot be installed: the mapping is then unprotected, as before.
std::optional<MappingWatch> watch_mapping(const void* base, size_t length, bool writable) noexcept;

/// Unregisters a mapping; call before unmapping it.
void unwatch_mapping(MappingWatch watch) noexcept;

/// Offset, from the mapping's start, of the first fault recorded in it, or
/// nothing when no read of it has faulted.
[[nodiscard]] std::optional<uint64_t> mapping_fault(MappingWatch watch) noexcept;

}  // namespace hurray::detail
