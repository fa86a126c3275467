// SPDX-License-Identifier: Apache-2.0
/// @file
/// How numbers are written in hurray's error messages and tool output.
#pragma once

#include <cstdint>
#include <string>

namespace hurray {

/// The `digits` lowest hex digits of v, most significant first, without a
/// prefix ("00ff"); as many as v needs (at least one) when `digits` is 0;
/// lower case unless `upper`. The one hex writer of the library: `hex`,
/// JSON's NaN payloads, S3's percent-encoding, the zip checks and the tool's
/// dumps all write through it (`hex_bytes`, describe.hpp, writes byte runs).
inline std::string hex_digits(uint64_t v, int digits, bool upper = false) {
    const char* const table = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    if (digits <= 0) {
        digits = 1;
        for (uint64_t rest = v >> 4U; rest != 0; rest >>= 4U) {
            ++digits;
        }
    }
    std::string s(static_cast<size_t>(digits), '0');
    for (int i = digits - 1; i >= 0; --i) {
        s[static_cast<size_t>(i)] = table[v & 0xFU];
        v >>= 4U;
    }
    return s;
}

/// "0x" followed by `digits` upper-case hex digits of v.
inline std::string hex(uint64_t v, int digits = 2) { return "0x" + hex_digits(v, digits, true); }

/// Decimal text of v.
inline std::string dec(uint64_t v) { return std::to_string(v); }

}  // namespace hurray
