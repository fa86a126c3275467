// SPDX-License-Identifier: Apache-2.0
// Bulk float conversions (float_types.hpp) against the scalar conversions of
// element_convert.hpp, bit for bit, and the C++ type -> element type mapping.
#include "hurray/core/float_types.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "hurray/core/element_convert.hpp"
#include "hurray/core/element_of.hpp"

namespace hurray {
namespace {

/// Floats that probe every rounding decision of a narrowing to a format whose
/// values are `widen(code)` for every 16-bit code: each value, its neighbours
/// one float32 ulp away, and the midpoints to the next code with their
/// neighbours; plus random bit patterns (NaN payloads, huge, tiny).
std::vector<float> probes(float (*widen)(uint16_t)) {
    std::vector<float> out;
    for (uint32_t c = 0; c < 0x10000U; ++c) {
        const float v = widen(static_cast<uint16_t>(c));
        const float next = widen(static_cast<uint16_t>(c + 1));
        const auto bits = std::bit_cast<uint32_t>(v);
        out.push_back(v);
        out.push_back(std::bit_cast<float>(bits + 1));
        out.push_back(std::bit_cast<float>(bits - 1));
        const float mid = static_cast<float>((static_cast<double>(v) + static_cast<double>(next)) / 2.0);
        const auto mb = std::bit_cast<uint32_t>(mid);
        out.push_back(mid);
        out.push_back(std::bit_cast<float>(mb + 1));
        out.push_back(std::bit_cast<float>(mb - 1));
    }
    std::mt19937 rng(7);
    for (int i = 0; i < 1'000'000; ++i) {
        out.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));
    }
    for (float f : {0.0F, -0.0F, 65504.0F, 65519.99F, 65520.0F, 65536.0F, 1e-8F, 5.960464477539063e-08F,
                    2.9802322387695312e-08F, std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                    std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max()}) {
        out.push_back(f);
        out.push_back(-f);
    }
    return out;
}

TEST(FloatTypes, Float16NarrowingMatchesScalarBitForBit) {
    const std::vector<float> in = probes(float16_to_float);
    std::vector<float16_t> out(in.size());
    ASSERT_TRUE(convert_floats(std::span<const float>(in), std::span<float16_t>(out)).ok());
    size_t bad = 0;
    for (size_t i = 0; i < in.size(); ++i) {
        if (out[i].bits != float_to_float16(in[i]) && ++bad < 10) {
            ADD_FAILURE() << std::hex << "float bits 0x" << std::bit_cast<uint32_t>(in[i]) << ": bulk 0x" << out[i].bits
                          << ", scalar 0x" << float_to_float16(in[i]);
        }
    }
    EXPECT_EQ(bad, 0U);
}

TEST(FloatTypes, BFloat16NarrowingMatchesScalarBitForBit) {
    const std::vector<float> in = probes(bfloat16_to_float);
    const std::vector<bfloat16_t> out = to_bfloat16(in);
    ASSERT_EQ(out.size(), in.size());
    size_t bad = 0;
    for (size_t i = 0; i < in.size(); ++i) {
        if (out[i].bits != float_to_bfloat16(in[i]) && ++bad < 10) {
            ADD_FAILURE() << std::hex << "float bits 0x" << std::bit_cast<uint32_t>(in[i]) << ": bulk 0x" << out[i].bits
                          << ", scalar 0x" << float_to_bfloat16(in[i]);
        }
    }
    EXPECT_EQ(bad, 0U);
}

TEST(FloatTypes, WideningIsExactForEveryCode) {
    std::vector<float16_t> h(0x10000);
    std::vector<bfloat16_t> b(0x10000);
    for (uint32_t c = 0; c < 0x10000U; ++c) {
        h[c] = float16_t::from_bits(static_cast<uint16_t>(c));
        b[c] = bfloat16_t::from_bits(static_cast<uint16_t>(c));
    }
    const std::vector<float> hf = to_float32(std::span<const float16_t>(h));
    const std::vector<float> bf = to_float32(std::span<const bfloat16_t>(b));
    for (uint32_t c = 0; c < 0x10000U; ++c) {
        ASSERT_EQ(std::bit_cast<uint32_t>(hf[c]), std::bit_cast<uint32_t>(float16_to_float(static_cast<uint16_t>(c))))
            << c;
        ASSERT_EQ(std::bit_cast<uint32_t>(bf[c]), std::bit_cast<uint32_t>(bfloat16_to_float(static_cast<uint16_t>(c))))
            << c;
        ASSERT_EQ(std::bit_cast<uint32_t>(static_cast<float>(h[c])), std::bit_cast<uint32_t>(hf[c]));
    }
}

TEST(FloatTypes, Float8BothWaysMatchScalar) {
    std::vector<float8_e4m3_t> e4(256);
    std::vector<float8_e5m2_t> e5(256);
    for (uint32_t c = 0; c < 256; ++c) {
        e4[c] = float8_e4m3_t::from_bits(static_cast<uint8_t>(c));
        e5[c] = float8_e5m2_t::from_bits(static_cast<uint8_t>(c));
    }
    const std::vector<float> f4 = to_float32(std::span<const float8_e4m3_t>(e4));
    const std::vector<float> f5 = to_float32(std::span<const float8_e5m2_t>(e5));
    for (uint32_t c = 0; c < 256; ++c) {
        EXPECT_EQ(std::bit_cast<uint32_t>(f4[c]), std::bit_cast<uint32_t>(float8_e4m3_to_float(static_cast<uint8_t>(c))));
        EXPECT_EQ(std::bit_cast<uint32_t>(f5[c]), std::bit_cast<uint32_t>(float8_e5m2_to_float(static_cast<uint8_t>(c))));
    }
    std::mt19937 rng(11);
    std::vector<float> in(100000);
    for (float& f : in) {
        f = std::bit_cast<float>(static_cast<uint32_t>(rng()) & 0xC3FFFFFFU);  // magnitudes up to ~2^8
    }
    const auto n4 = to_float8_e4m3(in);
    const auto n5 = to_float8_e5m2(in);
    for (size_t i = 0; i < in.size(); ++i) {
        ASSERT_EQ(n4[i].bits, float_to_float8_e4m3(in[i])) << in[i];
        ASSERT_EQ(n5[i].bits, float_to_float8_e5m2(in[i])) << in[i];
    }
}

TEST(FloatTypes, LengthMismatchIsAnError) {
    const std::vector<float> in(4, 1.0F);
    std::vector<float16_t> out(3);
    const Status st = convert_floats(std::span<const float>(in), std::span<float16_t>(out));
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code(), ErrorCode::kSizeMismatch);
    EXPECT_NE(st.error().message().find("4 values"), std::string::npos) << st.error().message();
    std::vector<float> back(5);
    EXPECT_FALSE(convert_floats(std::span<const float16_t>(out), std::span<float>(back)).ok());
    EXPECT_TRUE(to_float16({}).empty());
}

TEST(FloatTypes, ValueTypesAreTheirBits) {
    static_assert(std::is_trivially_copyable_v<float16_t> && std::is_standard_layout_v<float16_t>);
    static_assert(std::is_trivially_copyable_v<bfloat16_t> && std::is_trivially_copyable_v<float8_e4m3_t>);
    EXPECT_EQ(float16_t(1.5F).bits, 0x3E00U);
    EXPECT_EQ(bfloat16_t(1.0F).bits, 0x3F80U);
    EXPECT_EQ(float8_e4m3_t(1000.0F).bits, 0x7EU);  // saturates to 448
    EXPECT_EQ(static_cast<float>(float8_e4m3_t(1000.0F)), 448.0F);
    EXPECT_EQ(static_cast<float>(float8_e5m2_t(0.1F)), 0.09375F);
    EXPECT_EQ(float16_t(), float16_t::from_bits(0));
}

TEST(FloatTypes, ElementTypeOfEveryCppType) {
    static_assert(element_type_of<float>() == ElementType::kFloat32);
    static_assert(element_type_of<const double>() == ElementType::kFloat64);
    static_assert(element_type_of<int8_t>() == ElementType::kInt8);
    static_assert(element_type_of<uint8_t>() == ElementType::kUInt8);
    static_assert(element_type_of<std::byte>() == ElementType::kUInt8);
    static_assert(element_type_of<int16_t>() == ElementType::kInt16);
    static_assert(element_type_of<uint16_t>() == ElementType::kUInt16);
    static_assert(element_type_of<int32_t>() == ElementType::kInt32);
    static_assert(element_type_of<uint32_t>() == ElementType::kUInt32);
    static_assert(element_type_of<int64_t>() == ElementType::kInt64);
    static_assert(element_type_of<long long>() == ElementType::kInt64);
    static_assert(element_type_of<unsigned long long>() == ElementType::kUInt64);
    static_assert(element_type_of<bool>() == ElementType::kBool);
    static_assert(element_type_of<std::complex<float>>() == ElementType::kComplex64);
    static_assert(element_type_of<std::complex<double>>() == ElementType::kComplex128);
    static_assert(element_type_of<float16_t>() == ElementType::kFloat16);
    static_assert(element_type_of<bfloat16_t>() == ElementType::kBFloat16);
    static_assert(element_type_of<float8_e4m3_t>() == ElementType::kFloat8E4M3);
    static_assert(element_type_of<float8_e5m2_t>() == ElementType::kFloat8E5M2);
    static_assert(!TensorElement<long double>);
    static_assert(!TensorElement<void*>);
    static_assert(!TensorElement<std::complex<long double>>);
    EXPECT_STREQ(element_cpp_name<float>(), "float");
    EXPECT_STREQ(element_cpp_name<std::byte>(), "std::byte");
    EXPECT_STREQ(element_cpp_name<float16_t>(), "hurray::float16_t");
}

}  // namespace
}  // namespace hurray
