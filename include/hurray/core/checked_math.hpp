// SPDX-License-Identifier: Apache-2.0
/// @file
/// Overflow-checked arithmetic for sizes computed from untrusted fields: what
/// every parser of hurray uses before it trusts a product of dimensions or a
/// sum of offsets.
#pragma once

#include <cstdint>
#include <optional>

namespace hurray {

/// a + b, or nullopt on overflow.
inline std::optional<uint64_t> add_u64(uint64_t a, uint64_t b) noexcept {
    uint64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) {
        return std::nullopt;
    }
    return r;
}

/// a * b, or nullopt on overflow.
inline std::optional<uint64_t> mul_u64(uint64_t a, uint64_t b) noexcept {
    uint64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) {
        return std::nullopt;
    }
    return r;
}

/// a * b for signed 64-bit values, or nullopt on overflow.
inline std::optional<int64_t> mul_i64(int64_t a, int64_t b) noexcept {
    int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) {
        return std::nullopt;
    }
    return r;
}

/// a + b for signed 64-bit values, or nullopt on overflow.
inline std::optional<int64_t> add_i64(int64_t a, int64_t b) noexcept {
    int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) {
        return std::nullopt;
    }
    return r;
}

/// ceil(a / b) for b > 0, without overflow.
inline uint64_t ceil_div(uint64_t a, uint64_t b) noexcept { return a / b + (a % b != 0 ? 1 : 0); }

/// Whether v is a power of two (0 is not).
inline bool is_pow2(uint64_t v) noexcept { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace hurray
