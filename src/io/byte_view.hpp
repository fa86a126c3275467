// SPDX-License-Identifier: Apache-2.0
// Internal: byte <-> char views of the same memory.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace hurray::detail {

/// The bytes of a string, as unsigned bytes.
inline std::span<const uint8_t> byte_view(std::string_view s) noexcept {
    // SAFETY: unsigned char may alias any object; same address and length,
    // read-only.
    return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
}

/// Bytes seen as characters (for names and UTF-8 strings).
inline std::string_view char_view(std::span<const uint8_t> b) noexcept {
    // SAFETY: char may alias any object; same address and length, read-only.
    return {reinterpret_cast<const char*>(b.data()), b.size()};  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
}

}  // namespace hurray::detail
