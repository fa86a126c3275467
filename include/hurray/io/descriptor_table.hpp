// SPDX-License-Identifier: Apache-2.0
/// @file
/// The descriptor table: a copy of every descriptor of an HRRYFILE in one KV entry, so
/// that a reader lists the whole file from its tail (one sequential read locally, one
/// range request remotely) instead of visiting one page per tensor.
///
/// It lives inside the format's rules: the spec lets a file carry any KV entry, and a
/// reader that does not know this one (the Rust reference included) sees one more
/// byte-sequence value and reads the file as before. The entry's key is
/// `kDescriptorTableKey`; its value (KV tag 0x06, bytes) opens with a header common to
/// every version:
///
/// | Offset | Field | Type | |
/// | --- | --- | --- | --- |
/// | 0 | magic | `uint8[4]` | `"HRDT"` |
/// | 4 | version | `uint16` | 1 or 2 |
/// | 6 | flags | `uint16` | 0 (reserved) |
/// | 8 | entry_count | `uint64` | the index's entry count |
///
/// Version 1 follows it with the descriptor of each index entry, in index order, each
/// byte-identical to the descriptor at its `descriptor_offset` and `descriptor_length`
/// bytes long: `16 + sum(descriptor_length)` bytes in all.
///
/// Version 2 (written by default) stores each distinct descriptor once:
///
/// | Offset | Field | Type | |
/// | --- | --- | --- | --- |
/// | 16 | class_count | `uint64` | how many descriptors follow, <= entry_count |
/// | 24 | classes | `uint32[entry_count]` | each index entry's class, in index order |
/// | 24 + 4 * entry_count | descriptors | bytes | each class's descriptor, in class order |
///
/// Classes are numbered in the order of their first entry: the first entry is in class
/// 0, and each entry's class is at most one more than the largest before it, so every
/// class has an entry. A class's descriptor is byte-identical to the descriptor in
/// place of each of its entries, whose `descriptor_length` it has (so they all have
/// the same). The value is `24 + 4 * entry_count + sum(class lengths)` bytes. A writer
/// puts byte-identical descriptors in one class; a reader does not rely on it.
///
/// All integers little-endian. A reader uses the table only when it is well formed (the
/// magic, a version it knows, zero flags, the index's entry count, and the rules and
/// exact length of that version); anything else falls back to the descriptors in place,
/// never an error. Before a byte of a tensor's data is handed out, the copy is compared
/// with the descriptor in place, so two readers can never disagree on what the bytes
/// mean. docs/descriptor-table.md says more.
#pragma once

#include "hurray/io/export.hpp"
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/io/file_format.hpp"

namespace hurray {

/// The KV key of the descriptor table. A format artifact, not user metadata: readers
/// of this library do not list it among a file's KV entries, and writers refuse it
/// as a user key.
inline constexpr std::string_view kDescriptorTableKey = "hurray.descriptor_table";
/// The first bytes of the table's value.
inline constexpr std::array<uint8_t, 4> kDescriptorTableMagic = {'H', 'R', 'D', 'T'};
/// The first version: every index entry's descriptor, in index order.
inline constexpr uint16_t kDescriptorTableVersion1 = 1;
/// The second version: each distinct descriptor once, and each entry's class.
inline constexpr uint16_t kDescriptorTableVersion2 = 2;
/// The table version this library writes by default (it reads 1 and 2).
inline constexpr uint16_t kDescriptorTableVersion = kDescriptorTableVersion2;
/// Bytes of the header common to every version (magic, version, flags, entry_count);
/// version 1's copies follow it.
inline constexpr size_t kDescriptorTableHeaderSize = 16;
/// Bytes of version 2's header (the common header, then class_count); the entries'
/// classes follow it.
inline constexpr size_t kDescriptorTableV2HeaderSize = 24;

/// The table's value, of `version` (1 or 2), for the index entries whose descriptors
/// (the bytes at their `descriptor_offset`) are `descriptors`, in index order. Version 2
/// puts byte-identical descriptors in one class. kInvalidArgument for another version,
/// or for version 2 with 2^32 - 1 entries or more.
/// @code
/// std::vector<std::span<const uint8_t>> in_index_order = ...;
/// auto value = hurray::encode_descriptor_table(in_index_order);
/// @endcode
HURRAY_IO_EXPORT Result<std::vector<uint8_t>> encode_descriptor_table(
    std::span<const std::span<const uint8_t>> descriptors, uint16_t version = kDescriptorTableVersion);

/// Whether `value` opens with a table header of a version this library reads for
/// `entry_count` entries: the magic, version 1 or 2, zero flags, that entry count (the
/// first of `locate_descriptor_table`'s conditions; the rest is not looked at).
HURRAY_IO_EXPORT bool is_descriptor_table_header(std::span<const uint8_t> value, uint64_t entry_count) noexcept;

/// Where each entry's copy starts in the table `value` (offsets from the value's first
/// byte, in index order; with version 2, entries of one class share their copy), when
/// `value` is a well-formed table of a version this library reads for `entries`;
/// nullopt otherwise (another magic or version, flags set, another entry count, a
/// length other than the version's, or, in version 2, a class out of order or two
/// entries of one class with different descriptor_length). The copies' bytes are not
/// looked at.
/// @code
/// if (auto at = hurray::locate_descriptor_table(value, entries)) {
///     auto first = value.subspan((*at)[0], entries[0].descriptor_length);
/// }
/// @endcode
HURRAY_IO_EXPORT std::optional<std::vector<uint64_t>> locate_descriptor_table(std::span<const uint8_t> value,
                                                                              std::span<const IndexEntry> entries);

}  // namespace hurray
