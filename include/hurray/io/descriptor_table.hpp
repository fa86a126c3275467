// SPDX-License-Identifier: Apache-2.0
/// @file
/// The descriptor table: a copy of every descriptor of an HRRYFILE in one KV entry, so
/// that a reader lists the whole file from its tail (one sequential read locally, one
/// range request remotely) instead of visiting one page per tensor.
///
/// It lives inside the format's rules: the spec lets a file carry any KV entry, and a
/// reader that does not know this one (the Rust reference included) sees one more
/// byte-sequence value and reads the file as before. The entry's key is
/// `kDescriptorTableKey`; its value (KV tag 0x06, bytes):
///
/// | Offset | Field | Type | |
/// | --- | --- | --- | --- |
/// | 0 | magic | `uint8[4]` | `"HRDT"` |
/// | 4 | version | `uint16` | 1 |
/// | 6 | flags | `uint16` | 0 (reserved) |
/// | 8 | entry_count | `uint64` | the index's entry count |
/// | 16 | descriptors | bytes | the descriptor of each index entry, in index order, each byte-identical to the descriptor at its `descriptor_offset` and `descriptor_length` bytes long |
///
/// All integers little-endian. The value is `16 + sum(descriptor_length)` bytes. A
/// reader uses the table only when it is well formed (magic, a version it knows, zero
/// flags, the index's entry count, that exact length); anything else falls back to the
/// descriptors in place, never an error. Before a byte of a tensor's data is handed
/// out, the copy is compared with the descriptor in place, so two readers can never
/// disagree on what the bytes mean. docs/descriptor-table.md says more.
#pragma once

#include "hurray/io/export.hpp"
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "hurray/io/file_format.hpp"

namespace hurray {

/// The KV key of the descriptor table. A format artifact, not user metadata: readers
/// of this library do not list it among a file's KV entries, and writers refuse it
/// as a user key.
inline constexpr std::string_view kDescriptorTableKey = "hurray.descriptor_table";
/// The first bytes of the table's value.
inline constexpr std::array<uint8_t, 4> kDescriptorTableMagic = {'H', 'R', 'D', 'T'};
/// The table version this library writes and reads.
inline constexpr uint16_t kDescriptorTableVersion = 1;
/// Bytes before the first descriptor copy.
inline constexpr size_t kDescriptorTableHeaderSize = 16;

/// Appends the table's 16-byte header for `entry_count` entries to `out`; the
/// descriptors follow it in index order.
HURRAY_IO_EXPORT void append_descriptor_table_header(std::vector<uint8_t>& out, uint64_t entry_count);

/// Whether `value` opens with a table header of this version for `entry_count`
/// entries: the magic, a version this library reads, zero flags, that entry count
/// (the first of `locate_descriptor_table`'s conditions; the copies are not looked at).
HURRAY_IO_EXPORT bool is_descriptor_table_header(std::span<const uint8_t> value, uint64_t entry_count) noexcept;

/// Where each entry's copy starts in the table `value` (offsets from the value's first
/// byte, in index order), when `value` is a well-formed table of this version for
/// `entries`; nullopt otherwise (another magic or version, flags set, another entry
/// count, or a length other than 16 + the sum of the entries' descriptor_length).
/// @code
/// if (auto at = hurray::locate_descriptor_table(value, entries)) {
///     auto first = value.subspan((*at)[0], entries[0].descriptor_length);
/// }
/// @endcode
HURRAY_IO_EXPORT std::optional<std::vector<uint64_t>> locate_descriptor_table(std::span<const uint8_t> value,
                                                                              std::span<const IndexEntry> entries);

}  // namespace hurray
