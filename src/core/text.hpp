// SPDX-License-Identifier: Apache-2.0
// Internal: small formatting helpers for error messages and tool output.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace hurray::detail {

/// "0x" followed by `digits` upper-case hex digits of v.
inline std::string hex(uint64_t v, int digits = 2) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string s = "0x";
    for (int i = digits - 1; i >= 0; --i) {
        s += kHex[(v >> (4 * i)) & 0xF];
    }
    return s;
}

/// Lower-case hex of `bytes`, two digits a byte, `separator` between bytes
/// (`hex_bytes(b)`: `48525259`; `hex_bytes(b, " ")`: `48 52 52 59`).
inline std::string hex_bytes(std::span<const uint8_t> bytes, std::string_view separator = {}) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string s;
    s.reserve(bytes.size() * (2 + separator.size()));
    for (size_t i = 0; i < bytes.size(); ++i) {
        if (i > 0) {
            s.append(separator);
        }
        s += kHex[bytes[i] >> 4U];
        s += kHex[bytes[i] & 0xFU];
    }
    return s;
}

/// Decimal text of v.
inline std::string dec(uint64_t v) { return std::to_string(v); }

}  // namespace hurray::detail
