// SPDX-License-Identifier: Apache-2.0
// morton_encode, hilbert_encode and hilbert_decode: the spec's examples and
// conformance table, Morton against a bit-by-bit interleave, and the Hilbert
// curve's defining properties (a bijection whose consecutive cells are
// neighbours) for ranks 2 to 4 and orders 1 to 3.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "hurray/core/space_filling_curve.hpp"

namespace {

using hurray::hilbert_decode;
using hurray::hilbert_encode;
using hurray::morton_encode;
using Index = std::vector<uint64_t>;

TEST(SpaceFillingCurve, MortonSpecExample) {
    EXPECT_EQ(morton_encode(Index{2, 3}, std::vector<uint32_t>{2, 2}), 14U);  // morton.md § Example
}

TEST(SpaceFillingCurve, MortonMatchesASlowInterleave) {
    const std::vector<std::vector<uint32_t>> bit_sets = {{3}, {2, 2}, {1, 3}, {3, 1, 2}, {2, 2, 2, 2}, {4, 4}};
    for (const auto& bits : bit_sets) {
        const size_t rank = bits.size();
        uint64_t cells = 1;
        for (uint32_t b : bits) {
            cells <<= b;
        }
        for (uint64_t n = 0; n < cells; ++n) {
            // Decompose n into coordinates (any bijection will do).
            Index idx(rank);
            uint64_t rest = n;
            for (size_t d = 0; d < rank; ++d) {
                idx[d] = rest & ((uint64_t{1} << bits[d]) - 1);
                rest >>= bits[d];
            }
            // Slow: walk the code bits; bit p belongs to dimension p % rank, bit p / rank.
            uint64_t slow = 0;
            for (uint64_t p = 0; p < 64; ++p) {
                const size_t d = p % rank;
                const uint64_t b = p / rank;
                if (b < bits[d] && ((idx[d] >> b) & 1U) != 0) {
                    slow |= uint64_t{1} << p;
                }
            }
            EXPECT_EQ(morton_encode(idx, bits), slow);
        }
    }
}

TEST(SpaceFillingCurve, MortonDropsBitsPastTheCode) {
    // 33 bits per dimension in rank 2: bit 32 of dimension 1 would be code bit 65.
    const std::vector<uint32_t> bits = {33, 33};
    EXPECT_EQ(morton_encode(Index{0, uint64_t{1} << 32}, bits), 0U);
    EXPECT_EQ(morton_encode(Index{uint64_t{1} << 31, 0}, bits), uint64_t{1} << 62);
    // Index bits at or above morton_bits are ignored.
    EXPECT_EQ(morton_encode(Index{4, 0}, std::vector<uint32_t>{2, 2}), 0U);
}

TEST(SpaceFillingCurve, HilbertSpecTable) {
    // hilbert.md § Conformance Check, r = 2, p = 2.
    const uint64_t table[16][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}, {0, 2}, {0, 3}, {1, 3}, {1, 2},
                                   {2, 2}, {2, 3}, {3, 3}, {3, 2}, {3, 1}, {2, 1}, {2, 0}, {3, 0}};
    for (uint64_t h = 0; h < 16; ++h) {
        Index x(2);
        hilbert_decode(h, 2, x);
        EXPECT_EQ(x, (Index{table[h][0], table[h][1]})) << "h = " << h;
        EXPECT_EQ(hilbert_encode(Index{table[h][0], table[h][1]}, 2), h);
    }
}

TEST(SpaceFillingCurve, HilbertIsABijectionOfNeighbours) {
    for (size_t rank = 2; rank <= 4; ++rank) {
        for (uint32_t order = 1; order <= 3; ++order) {
            SCOPED_TRACE("rank " + std::to_string(rank) + " order " + std::to_string(order));
            const uint64_t cells = uint64_t{1} << (rank * order);
            std::set<Index> seen;
            Index prev;
            for (uint64_t h = 0; h < cells; ++h) {
                Index x(rank);
                hilbert_decode(h, order, x);
                for (uint64_t c : x) {
                    ASSERT_LT(c, uint64_t{1} << order);
                }
                ASSERT_EQ(hilbert_encode(x, order), h);
                EXPECT_TRUE(seen.insert(x).second);
                if (h > 0) {
                    // Exactly one coordinate changes, by exactly 1.
                    int changed = 0;
                    for (size_t d = 0; d < rank; ++d) {
                        const uint64_t a = prev[d];
                        const uint64_t b = x[d];
                        if (a != b) {
                            ++changed;
                            EXPECT_EQ(a > b ? a - b : b - a, 1U) << "h = " << h;
                        }
                    }
                    EXPECT_EQ(changed, 1) << "h = " << h;
                }
                prev = x;
            }
            EXPECT_EQ(seen.size(), cells);
            Index origin(rank);
            hilbert_decode(0, order, origin);
            EXPECT_EQ(origin, Index(rank, 0));  // the curve starts at the origin
        }
    }
}

TEST(SpaceFillingCurve, HilbertDegenerateArguments) {
    EXPECT_EQ(hilbert_encode(Index{1, 1}, 0), 0U);
    EXPECT_EQ(hilbert_encode(Index{}, 3), 0U);
    Index x = {7, 7};
    hilbert_decode(5, 0, x);
    EXPECT_EQ(x, (Index{0, 0}));
    // Large orders: encode and decode stay inverse.
    const Index big = {(uint64_t{1} << 31) + 12345, 987654321};
    Index back(2);
    hilbert_decode(hilbert_encode(big, 32), 32, back);
    EXPECT_EQ(back, big);
}

}  // namespace
