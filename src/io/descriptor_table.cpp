// SPDX-License-Identifier: Apache-2.0
// The descriptor table's header and its check against an index
// (hurray/io/descriptor_table.hpp).
#include "hurray/io/descriptor_table.hpp"

#include <algorithm>

#include "hurray/core/byte_io.hpp"

namespace hurray {

void append_descriptor_table_header(std::vector<uint8_t>& out, uint64_t entry_count) {
    const size_t at = out.size();
    out.resize(at + kDescriptorTableHeaderSize, 0);
    std::copy(kDescriptorTableMagic.begin(), kDescriptorTableMagic.end(), out.begin() + static_cast<std::ptrdiff_t>(at));
    store_le<uint16_t>(out.data() + at + 4, kDescriptorTableVersion);
    store_le<uint64_t>(out.data() + at + 8, entry_count);
}

bool is_descriptor_table_header(std::span<const uint8_t> value, uint64_t entry_count) noexcept {
    return value.size() >= kDescriptorTableHeaderSize &&
           std::equal(kDescriptorTableMagic.begin(), kDescriptorTableMagic.end(), value.begin()) &&
           load_le<uint16_t>(value.data() + 4) == kDescriptorTableVersion &&
           load_le<uint16_t>(value.data() + 6) == 0 && load_le<uint64_t>(value.data() + 8) == entry_count;
}

std::optional<std::vector<uint64_t>> locate_descriptor_table(std::span<const uint8_t> value,
                                                             std::span<const IndexEntry> entries) {
    if (!is_descriptor_table_header(value, entries.size())) {
        return std::nullopt;
    }
    std::vector<uint64_t> at(entries.size());
    uint64_t pos = kDescriptorTableHeaderSize;
    for (size_t i = 0; i < entries.size(); ++i) {
        at[i] = pos;
        // pos <= value.size() (checked each step), descriptor_length < 2^32: no overflow.
        pos += entries[i].descriptor_length;
        if (pos > value.size()) {
            return std::nullopt;
        }
    }
    if (pos != value.size()) {
        return std::nullopt;
    }
    return at;
}

}  // namespace hurray
