// SPDX-License-Identifier: Apache-2.0
// The index entry's common form, parsed in one step: shared by decode_index and the
// file reader's one-pass open (internal to libhurray_io).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "hurray/core/byte_io.hpp"
#include "hurray/io/file_format.hpp"
#include "hurray/io/index_codec.hpp"
#include "io/byte_view.hpp"

namespace hurray::detail {

/// The smallest possible index entry: a 1-byte name plus the fixed fields.
inline constexpr uint64_t kMinIndexEntrySize = kIndexEntryFixedSize + 1;

/// Whether every byte of [p, p + n) is ASCII (so the bytes are valid UTF-8):
/// sixteen bytes at a time, then the last eight and sixteen (overlapping) for the
/// rest; overlapping 4-byte reads under eight bytes.
inline bool all_ascii(const uint8_t* p, size_t n) noexcept {
    uint64_t any = 0;
    if (n >= 8) {
        size_t k = 0;
        for (; n - k > 16; k += 16) {
            any |= load_le<uint64_t>(p + k) | load_le<uint64_t>(p + k + 8);
        }
        // 1 to 16 bytes left: the last sixteen cover them (n >= 16), else the first
        // and last eight.
        any |= n >= 16 ? load_le<uint64_t>(p + n - 16) : load_le<uint64_t>(p);
        any |= load_le<uint64_t>(p + n - 8);
    } else if (n >= 4) {
        any = load_le<uint32_t>(p) | load_le<uint32_t>(p + n - 4);
    } else {
        for (size_t k = 0; k < n; ++k) {
            any |= p[k];
        }
    }
    return (any & 0x8080808080808080ULL) == 0;
}

/// The index entry at `pos` of `bytes` when it has the common form (all of it inside
/// `bytes`, a non-empty ASCII name, flags 0): written to `e` (its name a view into
/// `bytes`), and its size returned. 0 otherwise (`e` unspecified): the field-by-field
/// parse then reports what is wrong, or accepts the rarer form.
inline size_t parse_common_entry(std::span<const uint8_t> bytes, size_t pos, IndexEntry& e) noexcept {
    const size_t left = pos <= bytes.size() ? bytes.size() - pos : 0;
    if (left < kMinIndexEntrySize) {
        return 0;
    }
    // SAFETY: left >= kMinIndexEntrySize >= 2 bytes at pos; then the name and the 32
    // bytes of fixed fields after it are proved to lie inside `bytes` before any of
    // them is read.
    const uint8_t* p = bytes.data() + pos;
    const size_t name_length = load_le<uint16_t>(p);
    if (name_length == 0 || left - 2 < name_length + (kIndexEntryFixedSize - 2)) {
        return 0;
    }
    const uint8_t* f = p + 2 + name_length;
    e.flags = load_le<uint32_t>(f + 28);
    if (e.flags != 0 || !all_ascii(p + 2, name_length)) {
        return 0;
    }
    e.descriptor_offset = load_le<uint64_t>(f);
    e.descriptor_length = load_le<uint32_t>(f + 8);
    e.data_offset = load_le<uint64_t>(f + 12);
    e.data_length = load_le<uint64_t>(f + 20);
    e.name = char_view(bytes.subspan(pos + 2, name_length));
    return 2 + name_length + (kIndexEntryFixedSize - 2);
}

}  // namespace hurray::detail
