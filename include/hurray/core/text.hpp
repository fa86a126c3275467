// SPDX-License-Identifier: Apache-2.0
/// @file
/// How numbers are written in hurray's error messages and tool output.
#pragma once

#include <cstdint>
#include <string>

namespace hurray {

/// "0x" followed by `digits` upper-case hex digits of v.
inline std::string hex(uint64_t v, int digits = 2) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string s = "0x";
    for (int i = digits - 1; i >= 0; --i) {
        s += kHex[(v >> (4 * i)) & 0xF];
    }
    return s;
}

/// Decimal text of v.
inline std::string dec(uint64_t v) { return std::to_string(v); }

}  // namespace hurray
