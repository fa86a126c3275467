// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file
/// Little-endian bytes of test values, shared by the core tests (one definition per
/// program: unity builds put several test files in one translation unit).

#include <bit>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace hurray_test {

/// The float32 values `v`, little-endian, back to back.
inline std::vector<uint8_t> f32s(std::initializer_list<float> v) {
    std::vector<uint8_t> b;
    b.reserve(v.size() * 4);
    for (const float x : v) {
        const auto u = std::bit_cast<uint32_t>(x);
        for (int i = 0; i < 4; ++i) {
            b.push_back(static_cast<uint8_t>(u >> (8 * i)));
        }
    }
    return b;
}

}  // namespace hurray_test
