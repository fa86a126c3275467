// SPDX-License-Identifier: Apache-2.0
/// @file
/// The index section of an HRRYFILE container (file-format.md § Index
/// Section): its encoder, its validating decoder and the name checks, as the
/// writer and both readers use them. For tools that take a container apart
/// (`hurray inspect`) or build one by hand; `FileReader` and `FileWriter`
/// call these for everyone else.
#pragma once

#include "hurray/io/export.hpp"
#include <cstdint>
#include <span>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/io/file_format.hpp"

namespace hurray {

/// Fixed bytes of one index entry besides its name:
/// u16 name_length + u64 + u32 + u64 + u64 + u32.
inline constexpr uint64_t kIndexEntryFixedSize = 2 + 8 + 4 + 8 + 8 + 4;

/// Encodes `u64 count` then every entry. Fails with kInvalidName for a name
/// that is empty or longer than 65,535 bytes.
///
/// @code
/// std::vector<hurray::IndexEntry> entries = {{"w", 64, 80, 4096, 24}};
/// auto bytes = hurray::encode_index(entries);   // 8 + 35 + 1 bytes
/// auto back = hurray::decode_index(*bytes, 0);  // the same entries
/// @endcode
HURRAY_IO_EXPORT Result<std::vector<uint8_t>> encode_index(std::span<const IndexEntry> entries);

/// Decodes an index section that starts at absolute file offset `base`.
/// Checks: the count fits the section (each entry takes >= 35 bytes, so the
/// count is bounded before anything is reserved), every entry lies inside
/// the section, names are 1 .. 65,535 bytes of valid UTF-8, entry flags are
/// 0, no byte is left over. Errors carry the absolute offset of the field.
/// `entry_offsets`, when given, receives the absolute offset of each entry.
/// The entries' names view `bytes`: keep `bytes` alive while they are used.
HURRAY_IO_EXPORT Result<std::vector<IndexEntry>> decode_index(std::span<const uint8_t> bytes, uint64_t base,
                                             std::vector<uint64_t>* entry_offsets = nullptr);

/// Checks that names are unique (kDuplicateName) and, when `sorted`, in
/// strictly ascending raw-byte order (kInvalidFile). O(n log n). `entry_offsets`
/// (optional, from decode_index) gives the offsets named in errors.
HURRAY_IO_EXPORT Status check_index_names(std::span<const IndexEntry> entries, bool sorted,
                         std::span<const uint64_t> entry_offsets = {});

}  // namespace hurray
