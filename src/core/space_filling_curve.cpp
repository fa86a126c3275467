// SPDX-License-Identifier: Apache-2.0
// Morton (layouts/morton.md) and Hilbert (layouts/hilbert.md, Skilling 2004)
// index mappings.
#include "hurray/core/space_filling_curve.hpp"

#include <algorithm>
#include <array>

#include "hurray/core/shape.hpp"

namespace hurray {
namespace {

// Bit `bit` of `v`, or 0 for bit >= 64.
constexpr uint64_t bit_of(uint64_t v, uint64_t bit) noexcept { return bit < 64 ? (v >> bit) & 1U : 0; }

// Mask of the low `order` bits.
constexpr uint64_t low_mask(uint32_t order) noexcept { return order >= 64 ? ~uint64_t{0} : (uint64_t{1} << order) - 1; }

}  // namespace

uint64_t morton_encode(std::span<const uint64_t> index, std::span<const uint32_t> morton_bits) noexcept {
    const size_t rank = std::min(index.size(), morton_bits.size());
    uint64_t code = 0;
    for (size_t d = 0; d < rank; ++d) {
        const uint64_t bits = std::min<uint64_t>(morton_bits[d], 64);
        for (uint64_t b = 0; b < bits; ++b) {
            const uint64_t target = b * rank + d;
            if (target >= 64) {
                break;  // targets grow with b
            }
            code |= bit_of(index[d], b) << target;
        }
    }
    return code;
}

// CoordsToHilbert, step by step as hilbert.md § Normative Index Mapping gives it.
uint64_t hilbert_encode(std::span<const uint64_t> coords, uint32_t order) noexcept {
    const size_t r = coords.size();
    if (order == 0 || r == 0 || r > kMaxRank) {
        return 0;
    }
    const uint32_t p = std::min<uint32_t>(order, 64);
    std::array<uint64_t, kMaxRank> x{};
    for (size_t i = 0; i < r; ++i) {
        x[i] = coords[i] & low_mask(p);
    }
    const uint64_t m = uint64_t{1} << (p - 1);
    // Undo excess work, from the top bit down.
    for (uint64_t q = m; q > 1; q >>= 1) {
        const uint64_t mask = q - 1;
        for (size_t i = 0; i < r; ++i) {
            if ((x[i] & q) != 0) {
                x[0] ^= mask;  // invert
            } else {
                const uint64_t t = (x[0] ^ x[i]) & mask;  // exchange
                x[0] ^= t;
                x[i] ^= t;
            }
        }
    }
    // Gray encode.
    for (size_t i = 1; i < r; ++i) {
        x[i] ^= x[i - 1];
    }
    uint64_t t = 0;
    for (uint64_t q = m; q > 1; q >>= 1) {
        if ((x[r - 1] & q) != 0) {
            t ^= q - 1;
        }
    }
    for (size_t i = 0; i < r; ++i) {
        x[i] ^= t;
    }
    // Bit b of X[d] is bit b * r + (r - 1 - d) of h.
    uint64_t h = 0;
    for (uint64_t b = 0; b < p; ++b) {
        for (size_t d = 0; d < r; ++d) {
            const uint64_t target = b * r + (r - 1 - d);
            if (target < 64) {
                h |= bit_of(x[d], b) << target;
            }
        }
    }
    return h;
}

// HilbertToCoords, step by step as hilbert.md § Normative Index Mapping gives it.
void hilbert_decode(uint64_t h, uint32_t order, std::span<uint64_t> coords) noexcept {
    const size_t r = coords.size();
    std::fill(coords.begin(), coords.end(), uint64_t{0});
    if (order == 0 || r == 0 || r > kMaxRank) {
        return;
    }
    const uint32_t p = std::min<uint32_t>(order, 64);
    std::array<uint64_t, kMaxRank> x{};
    for (uint64_t b = 0; b < p; ++b) {
        for (size_t d = 0; d < r; ++d) {
            x[d] |= bit_of(h, b * r + (r - 1 - d)) << b;
        }
    }
    // Gray decode by H ^ (H / 2).
    const uint64_t t = x[r - 1] >> 1;
    for (size_t i = r - 1; i >= 1; --i) {
        x[i] ^= x[i - 1];
    }
    x[0] ^= t;
    // Undo excess work: Q = 2, 4, ..., 2^(p-1).
    for (uint32_t qb = 1; qb < p; ++qb) {
        const uint64_t q = uint64_t{1} << qb;
        const uint64_t mask = q - 1;
        for (size_t i = r; i-- > 0;) {
            if ((x[i] & q) != 0) {
                x[0] ^= mask;
            } else {
                const uint64_t s = (x[0] ^ x[i]) & mask;
                x[0] ^= s;
                x[i] ^= s;
            }
        }
    }
    for (size_t i = 0; i < r; ++i) {
        coords[i] = x[i];
    }
}

}  // namespace hurray
