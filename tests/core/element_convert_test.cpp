// SPDX-License-Identifier: Apache-2.0
// Element conversions: exhaustive round trips of every narrow float format,
// the spec's value tables, rounding ties, NaN payloads and packed access.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "hurray/core/element_convert.hpp"

namespace {

using hurray::ElementType;

bool same_bits(float a, float b) { return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); }

// Every float16 bit pattern survives float16 -> float -> float16 (NaN payloads included).
TEST(ElementConvert, Float16RoundTripsEveryPattern) {
    for (uint32_t h = 0; h < 0x10000; ++h) {
        const float f = hurray::float16_to_float(static_cast<uint16_t>(h));
        const bool nan = (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0;
        const uint16_t back = hurray::float_to_float16(f);
        if (nan && (h & 0x200) == 0) {
            // A signalling NaN comes back quiet with the same payload bits.
            EXPECT_EQ(back, h | 0x200) << h;
        } else {
            EXPECT_EQ(back, h) << h;
        }
    }
}

// float16 values that the spec's type definition pins down.
TEST(ElementConvert, Float16KnownValues) {
    EXPECT_EQ(hurray::float16_to_float(0x3C00), 1.0F);
    EXPECT_EQ(hurray::float16_to_float(0xC000), -2.0F);
    EXPECT_EQ(hurray::float16_to_float(0x7BFF), 65504.0F);
    EXPECT_EQ(hurray::float16_to_float(0x0001), std::ldexp(1.0F, -24));  // smallest subnormal, not flushed
    EXPECT_TRUE(std::isinf(hurray::float16_to_float(0x7C00)));
    EXPECT_TRUE(same_bits(hurray::float16_to_float(0x8000), -0.0F));
}

// Round to nearest, ties to even, overflow to infinity, underflow to zero.
TEST(ElementConvert, Float16RoundingAndRange) {
    EXPECT_EQ(hurray::float_to_float16(1.0F + std::ldexp(1.0F, -11)), 0x3C00);          // tie -> even
    EXPECT_EQ(hurray::float_to_float16(1.0F + 3 * std::ldexp(1.0F, -11)), 0x3C02);      // tie -> even (up)
    EXPECT_EQ(hurray::float_to_float16(1.0F + std::ldexp(1.0F, -11) * 1.5F), 0x3C01);   // above tie
    EXPECT_EQ(hurray::float_to_float16(65520.0F), 0x7C00);                               // rounds to inf
    EXPECT_EQ(hurray::float_to_float16(65519.0F), 0x7BFF);
    EXPECT_EQ(hurray::float_to_float16(std::ldexp(1.0F, -25)), 0x0000);                  // tie -> 0
    EXPECT_EQ(hurray::float_to_float16(std::ldexp(1.5F, -25)), 0x0001);
    EXPECT_EQ(hurray::float_to_float16(std::ldexp(1.0F, -14) * 0.9999F), 0x0400);        // carry to normal
    EXPECT_EQ(hurray::float_to_float16(std::ldexp(1.0F, -14) * 0.999F), 0x03FF);         // largest subnormal
    EXPECT_EQ(hurray::float_to_float16(-std::numeric_limits<float>::infinity()), 0xFC00);
}

// bfloat16 -> float is exact; float -> bfloat16 -> float is the identity on bfloat16 values.
TEST(ElementConvert, BFloat16RoundTripsEveryPattern) {
    for (uint32_t h = 0; h < 0x10000; ++h) {
        const float f = hurray::bfloat16_to_float(static_cast<uint16_t>(h));
        const bool nan = (h & 0x7F80) == 0x7F80 && (h & 0x7F) != 0;
        const uint16_t back = hurray::float_to_bfloat16(f);
        EXPECT_EQ(back, nan ? (h | 0x40) : h) << h;
    }
    EXPECT_EQ(hurray::float_to_bfloat16(1.0F + std::ldexp(1.0F, -8)), 0x3F80);       // tie -> even
    EXPECT_EQ(hurray::float_to_bfloat16(1.0F + 3 * std::ldexp(1.0F, -8)), 0x3F82);
    // A NaN whose payload sits only in the low bits stays NaN.
    EXPECT_TRUE(std::isnan(hurray::bfloat16_to_float(hurray::float_to_bfloat16(std::bit_cast<float>(0x7F800001U)))));
}

// float8_e4m3 (OCP): bias 7, max 448, 0x7F/0xFF NaN, no infinities.
TEST(ElementConvert, Float8E4M3) {
    for (uint32_t c = 0; c < 256; ++c) {
        const float f = hurray::float8_e4m3_to_float(static_cast<uint8_t>(c));
        if ((c & 0x7F) == 0x7F) {
            EXPECT_TRUE(std::isnan(f)) << c;
            EXPECT_EQ(hurray::float_to_float8_e4m3(f), c) << c;
        } else {
            EXPECT_FALSE(std::isnan(f) || std::isinf(f)) << c;
            EXPECT_EQ(hurray::float_to_float8_e4m3(f), c) << c;
        }
    }
    EXPECT_EQ(hurray::float8_e4m3_to_float(0x7E), 448.0F);
    EXPECT_EQ(hurray::float8_e4m3_to_float(0x01), std::ldexp(1.0F, -9));
    EXPECT_EQ(hurray::float8_e4m3_to_float(0x38), 1.0F);
    EXPECT_EQ(hurray::float_to_float8_e4m3(1e6F), 0x7E);                                     // saturates
    EXPECT_EQ(hurray::float_to_float8_e4m3(-std::numeric_limits<float>::infinity()), 0xFE);
}

// float8_e5m2 (OCP): bias 15, infinities 0x7C/0xFC, NaN with non-zero mantissa.
TEST(ElementConvert, Float8E5M2) {
    for (uint32_t c = 0; c < 256; ++c) {
        const float f = hurray::float8_e5m2_to_float(static_cast<uint8_t>(c));
        const uint8_t back = hurray::float_to_float8_e5m2(f);
        if ((c & 0x7C) == 0x7C && (c & 0x3) != 0) {
            EXPECT_TRUE(std::isnan(f));
            EXPECT_EQ(back, c | 0x2) << c;  // quiet
        } else {
            EXPECT_EQ(back, c) << c;
        }
    }
    EXPECT_TRUE(std::isinf(hurray::float8_e5m2_to_float(0x7C)));
    EXPECT_EQ(hurray::float8_e5m2_to_float(0x7B), 57344.0F);
    EXPECT_EQ(hurray::float_to_float8_e5m2(1e6F), 0x7C);  // overflow -> infinity
}

// float8_e8m0: 2^(bits-127); 0x00 and 0xFF reserved.
TEST(ElementConvert, Float8E8M0) {
    EXPECT_EQ(hurray::float8_e8m0_to_float(127), 1.0F);
    EXPECT_EQ(hurray::float8_e8m0_to_float(130), 8.0F);
    EXPECT_EQ(hurray::float8_e8m0_to_float(1), std::ldexp(1.0F, -126));
    EXPECT_TRUE(std::isnan(hurray::float8_e8m0_to_float(0x00)));
    EXPECT_TRUE(std::isnan(hurray::float8_e8m0_to_float(0xFF)));
    EXPECT_EQ(hurray::float8_e8m0_from_exponent(0), 127);
    EXPECT_EQ(hurray::float8_e8m0_from_exponent(-500), 1);
    EXPECT_EQ(hurray::float8_e8m0_from_exponent(500), 254);
}

// float4_e2m1: the value map of element-types.md.
TEST(ElementConvert, Float4E2M1ValueMap) {
    const float expected[8] = {0.0F, 0.5F, 1.0F, 1.5F, 2.0F, 3.0F, 4.0F, 6.0F};
    for (uint8_t c = 0; c < 16; ++c) {
        const float v = hurray::float4_e2m1_to_float(c);
        EXPECT_EQ(std::fabs(v), expected[c & 7]) << int{c};
        EXPECT_EQ(std::signbit(v), c >= 8) << int{c};
        EXPECT_EQ(hurray::float_to_float4_e2m1(v), c) << int{c};
    }
    EXPECT_EQ(hurray::float_to_float4_e2m1(100.0F), 0x7);   // saturate to 6
    EXPECT_EQ(hurray::float_to_float4_e2m1(-100.0F), 0xF);
    EXPECT_EQ(hurray::float_to_float4_e2m1(2.5F), 0x4);     // tie between 2 and 3 -> even (2)
    EXPECT_EQ(hurray::float_to_float4_e2m1(0.25F), 0x0);    // tie between 0 and 0.5 -> 0
}

// float6 e2m3 (max 7.5) and e3m2 (max 28): every code round-trips.
TEST(ElementConvert, Float6) {
    for (uint8_t c = 0; c < 64; ++c) {
        EXPECT_EQ(hurray::float_to_float6_e2m3(hurray::float6_e2m3_to_float(c)), c) << int{c};
        EXPECT_EQ(hurray::float_to_float6_e3m2(hurray::float6_e3m2_to_float(c)), c) << int{c};
    }
    EXPECT_EQ(hurray::float6_e2m3_to_float(0x1F), 7.5F);
    EXPECT_EQ(hurray::float6_e3m2_to_float(0x1F), 28.0F);
    EXPECT_EQ(hurray::float6_e2m3_to_float(0x01), 0.125F);   // subnormal (1/8) * 2^0
    EXPECT_EQ(hurray::float6_e3m2_to_float(0x01), 0.0625F);  // subnormal (1/4) * 2^-2
    EXPECT_EQ(hurray::float_to_float6_e3m2(1000.0F), 0x1F);
}

// float128 <-> double: exact one way, nearest the other, NaN payloads kept.
TEST(ElementConvert, Float128) {
    const double values[] = {0.0, -0.0, 1.0, -2.5, 1e308, 5e-324, 2.2250738585072014e-308,
                             std::numeric_limits<double>::infinity(), std::bit_cast<double>(0x7FF8000000000123ULL)};
    for (double v : values) {
        uint8_t q[16];
        hurray::double_to_float128(v, q);
        const double back = hurray::float128_to_double(q);
        EXPECT_EQ(std::bit_cast<uint64_t>(back), std::bit_cast<uint64_t>(v)) << v;
    }
    // 1.0 in binary128: exponent 0x3FFF, mantissa 0.
    uint8_t one[16];
    hurray::double_to_float128(1.0, one);
    EXPECT_EQ(one[15], 0x3F);
    EXPECT_EQ(one[14], 0xFF);
    for (int i = 0; i < 14; ++i) {
        EXPECT_EQ(one[i], 0) << i;
    }
    // 1 + 2^-60 rounds to 1.0 in double; 1 + 2^-52 + 2^-53 (a tie) rounds to even.
    uint8_t q[16] = {};
    q[15] = 0x3F;
    q[14] = 0xFF;
    q[7] = 0x10;  // bit 60 of the 112-bit mantissa: 2^-52
    q[7] |= 0x08;  // bit 59: 2^-53, the tie
    EXPECT_EQ(hurray::float128_to_double(q), 1.0 + 2 * std::ldexp(1.0, -52));
}

// Packed sub-byte access follows element-types.md: bool, 2-, 4- and 6-bit examples.
TEST(ElementConvert, PackedAccessMatchesSpecExamples) {
    const std::vector<uint8_t> bools = {0x0D};  // [true, false, true, true, false]
    const int bool_expected[5] = {1, 0, 1, 1, 0};
    for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(hurray::load_packed(bools, i, 1), static_cast<uint32_t>(bool_expected[i]));
    }
    const std::vector<uint8_t> u4 = {0xC5, 0x03};  // uint4 [5, 12, 3]
    EXPECT_EQ(hurray::load_packed(u4, 0, 4), 5U);
    EXPECT_EQ(hurray::load_packed(u4, 1, 4), 12U);
    EXPECT_EQ(hurray::load_packed(u4, 2, 4), 3U);
    const std::vector<uint8_t> u2 = {0x27};  // uint2 [3, 1, 2]
    EXPECT_EQ(hurray::load_packed(u2, 0, 2), 3U);
    EXPECT_EQ(hurray::load_packed(u2, 1, 2), 1U);
    EXPECT_EQ(hurray::load_packed(u2, 2, 2), 2U);
    const std::vector<uint8_t> six = {0x81, 0x40, 0x20};  // 6-bit worked example
    for (uint32_t i = 0; i < 4; ++i) {
        EXPECT_EQ(hurray::load_packed(six, i, 6), 1U << i);
    }
    std::vector<uint8_t> out(3, 0);
    for (uint32_t i = 0; i < 4; ++i) {
        hurray::store_packed(out, i, 6, 1U << i);
    }
    EXPECT_EQ(out, six);
    std::vector<uint8_t> nib(2, 0xFF);
    hurray::store_packed(nib, 1, 4, 0x2);
    EXPECT_EQ(nib[0], 0x2F);
}

// element_as_double / element_from_double agree for every built-in type.
TEST(ElementConvert, ElementAsDoubleRoundTripsEveryType) {
    const ElementType types[] = {
        ElementType::kFloat16, ElementType::kBFloat16, ElementType::kFloat32, ElementType::kFloat64,
        ElementType::kInt8, ElementType::kUInt8, ElementType::kInt16, ElementType::kUInt16,
        ElementType::kInt32, ElementType::kUInt32, ElementType::kInt64, ElementType::kUInt64,
        ElementType::kBool, ElementType::kFloat8E4M3, ElementType::kFloat8E5M2, ElementType::kFloat8E8M0,
        ElementType::kFloat4E2M1, ElementType::kFloat6E2M3, ElementType::kFloat6E3M2, ElementType::kFloat128,
        ElementType::kInt4, ElementType::kUInt4, ElementType::kInt2, ElementType::kUInt2,
        ElementType::kComplex64, ElementType::kComplex128};
    for (ElementType t : types) {
        SCOPED_TRACE(std::string(hurray::type_name(t)));
        const uint64_t n = 7;
        std::vector<uint8_t> buf(*hurray::storage_bytes(t, n), 0);
        // 1 and 0 alternate; e8m0 has no zero, so it alternates 1 and 2.
        auto want = [t](uint64_t i) { return i % 2 == 0 ? 1.0 : (t == ElementType::kFloat8E8M0 ? 2.0 : 0.0); };
        for (uint64_t i = 0; i < n; ++i) {
            ASSERT_TRUE(hurray::element_from_double(t, buf, i, want(i)).ok());
        }
        for (uint64_t i = 0; i < n; ++i) {
            auto v = hurray::element_as_double(t, buf, i);
            ASSERT_TRUE(v.ok()) << v.error().to_string();
            EXPECT_EQ(*v, want(i)) << i;
        }
        EXPECT_FALSE(hurray::element_as_double(t, buf, n * 1000).ok());
        std::vector<float> f(n);
        ASSERT_TRUE(hurray::convert_to_float32(t, buf, f).ok());
        EXPECT_EQ(f[0], 1.0F);
        std::vector<float> too_many(n * 64);
        EXPECT_FALSE(hurray::convert_to_float32(t, buf, too_many).ok());
    }
}

// Signed sub-byte integers sign-extend; integers saturate on the way in.
TEST(ElementConvert, IntegerRangesAndSaturation) {
    std::vector<uint8_t> b(1, 0);
    ASSERT_TRUE(hurray::element_from_double(ElementType::kInt4, b, 0, -8).ok());
    EXPECT_EQ(*hurray::element_as_double(ElementType::kInt4, b, 0), -8.0);
    ASSERT_TRUE(hurray::element_from_double(ElementType::kInt4, b, 1, 100).ok());
    EXPECT_EQ(*hurray::element_as_double(ElementType::kInt4, b, 1), 7.0);
    std::vector<uint8_t> w(8, 0);
    ASSERT_TRUE(hurray::element_from_double(ElementType::kUInt64, w, 0, 1e30).ok());
    EXPECT_EQ(w, std::vector<uint8_t>(8, 0xFF));
    ASSERT_TRUE(hurray::element_from_double(ElementType::kInt8, w, 0, -1e9).ok());
    EXPECT_EQ(w[0], 0x80);
    ASSERT_TRUE(hurray::element_from_double(ElementType::kInt8, w, 0, std::nan("")).ok());
    EXPECT_EQ(w[0], 0);
    EXPECT_FALSE(hurray::element_from_double(ElementType::kFloat8E8M0, w, 0, -1.0).ok());
    EXPECT_EQ(hurray::element_byte_width(ElementType::kInt4), 0U);
    EXPECT_EQ(hurray::element_byte_width(ElementType::kComplex128), 16U);
}

}  // namespace
