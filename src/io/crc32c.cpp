// SPDX-License-Identifier: Apache-2.0
#include "hurray/io/crc32c.hpp"

#include <isa-l/crc.h>

#include <algorithm>
#include <climits>

namespace hurray {

uint32_t crc32c_extend(uint32_t crc, std::span<const uint8_t> bytes) noexcept {
    // ISA-L's crc32_iscsi takes the running register (no final XOR) and an int
    // length: the standard CRC-32C is ~crc32_iscsi(buf, len, 0xFFFFFFFF), and
    // a running CRC c continues from register ~c. Feed it at most INT_MAX
    // bytes per call.
    uint32_t reg = ~crc;
    const uint8_t* p = bytes.data();
    size_t left = bytes.size();
    while (left > 0) {
        const size_t n = std::min<size_t>(left, static_cast<size_t>(INT_MAX) & ~size_t{4095});
        // SAFETY: p .. p+n lies inside `bytes`; ISA-L only reads it. The cast
        // drops const because ISA-L's prototype lacks it; it never writes.
        reg = crc32_iscsi(const_cast<uint8_t*>(p), static_cast<int>(n), reg);  // NOLINT(cppcoreguidelines-pro-type-const-cast)
        p += n;
        left -= n;
    }
    return ~reg;
}

uint32_t crc32c(std::span<const uint8_t> bytes) noexcept { return crc32c_extend(0, bytes); }

}  // namespace hurray
