// SPDX-License-Identifier: Apache-2.0
// Dequantization (dequantize.hpp): golden values worked out by hand from the
// normative formulas of quantization/*.md, one test per scheme and storage
// type; parameter rejections; layouts; and a randomized comparison of the
// row-major and column-major paths against a plain reference formula.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/float16_widen.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/core/dequantize.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/element_convert.hpp"
#include "hurray/core/tensor_view.hpp"
#include "le_bytes.hpp"

namespace {

using namespace hurray;  // NOLINT(google-build-using-namespace): test brevity
using ET = ElementType;
using Bytes = std::vector<uint8_t>;

// --- Byte builders -----------------------------------------------------------

Bytes le(std::initializer_list<uint64_t> values, size_t width) {
    Bytes b;
    for (uint64_t v : values) {
        for (size_t i = 0; i < width; ++i) {
            b.push_back(static_cast<uint8_t>(v >> (8 * i)));
        }
    }
    return b;
}
Bytes u16s(std::initializer_list<uint64_t> v) { return le(v, 2); }
using hurray_test::f32s;
Bytes i32s(std::initializer_list<int32_t> values) {
    Bytes b;
    for (int32_t v : values) {
        const Bytes x = le({static_cast<uint32_t>(v)}, 4);
        b.insert(b.end(), x.begin(), x.end());
    }
    return b;
}
Bytes cat(Bytes a, const Bytes& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// --- Descriptors and views ---------------------------------------------------

TensorDescriptor sized(ET type, Shape shape, QuantizationScheme scheme, LayoutDescriptor layout = RowMajorLayout{},
                       std::vector<uint64_t> data_dependent = {}) {
    TensorDescriptor d;
    d.element_type = type;
    d.shape = std::move(shape);
    d.layout = std::move(layout);
    d.quantization = QuantizationDescriptor{std::move(scheme), {}};
    auto r = size_buffers(std::move(d), {}, data_dependent);
    if (!r.ok()) {
        ADD_FAILURE() << "size_buffers: " << r.error().to_string();
        return {};
    }
    return *r;
}

Result<std::vector<float>> run(const TensorDescriptor& d, const std::vector<Bytes>& bufs) {
    std::vector<std::span<const uint8_t>> spans(bufs.begin(), bufs.end());
    auto view = TensorView::make(d, spans);
    if (!view.ok()) {
        return view.error();
    }
    return dequantize(*view);
}

// Checks the literal buffers against the sizes the spec gives the
// descriptor, then every dequantized value (bit-exact; NaN matches NaN).
void expect_values(const TensorDescriptor& d, const std::vector<Bytes>& bufs, const std::vector<float>& want) {
    ASSERT_EQ(bufs.size(), d.buffers.size());
    for (size_t i = 0; i < bufs.size(); ++i) {
        ASSERT_EQ(bufs[i].size(), d.buffers[i].byte_size) << "buffer " << i;
    }
    auto r = run(d, bufs);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    ASSERT_EQ(r->size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
        if (std::isnan(want[i])) {
            EXPECT_TRUE(std::isnan((*r)[i])) << "element " << i;
        } else {
            EXPECT_EQ((*r)[i], want[i]) << "element " << i;
        }
    }
}

void expect_error(const TensorDescriptor& d, const std::vector<Bytes>& bufs, ErrorCode code,
                  const std::string& fragment) {
    auto r = run(d, bufs);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), code) << r.error().to_string();
    EXPECT_NE(r.error().message().find(fragment), std::string::npos) << r.error().to_string();
}

PerChannelAffine per_channel(uint32_t axis, bool symmetric) {
    PerChannelAffine s;
    s.axis = axis;
    s.scale_buffer_index = 1;
    if (!symmetric) {
        s.zero_point_buffer_index = 2;
    }
    return s;
}

// Scales in buffer `first`, zero points in `first + 1`.
PerBlockAffine per_block(uint32_t axis, uint32_t block, ET scale_type, bool symmetric, uint32_t first = 1) {
    PerBlockAffine s;
    s.axis = axis;
    s.block_size = block;
    s.scale_buffer_index = first;
    if (!symmetric) {
        s.zero_point_buffer_index = first + 1;
    }
    s.scale_type = scale_type;
    return s;
}

// --- Scale widening ------------------------------------------------------------

// Reference float16 -> float32 bits, straight from the binary16 definition
// (kept here, independent of the library, since float16_to_float is now the
// inline widening itself): subnormals m * 2^-24, normals (1024 + m) * 2^(e-25),
// exponent 31 infinity or NaN with the payload moved up 13 bits.
uint32_t reference_float16_bits(uint16_t h) {
    const uint32_t sign = (h & 0x8000U) != 0 ? 0x80000000U : 0U;
    const uint32_t exp = (h >> 10) & 0x1FU;
    const uint32_t man = h & 0x3FFU;
    if (exp == 0x1F) {
        return sign | 0x7F800000U | (man << 13);
    }
    const double magnitude = exp == 0 ? std::ldexp(static_cast<double>(man), -24)
                                      : std::ldexp(static_cast<double>(man + 1024), static_cast<int>(exp) - 25);
    return sign | std::bit_cast<uint32_t>(static_cast<float>(magnitude));  // exact: 11 significant bits
}

// The inline widening used by the vectorised parameter loops (and by the
// public conversions) matches the reference for every bit pattern (NaN
// payloads included).
TEST(DequantizeScales, InlineWideningMatchesElementConvertExhaustively) {
    for (uint32_t h = 0; h < 0x10000; ++h) {
        const auto bits = static_cast<uint16_t>(h);
        ASSERT_EQ(std::bit_cast<uint32_t>(detail::widen_float16(bits)), reference_float16_bits(bits))
            << "float16 " << h;
        ASSERT_EQ(std::bit_cast<uint32_t>(float16_to_float(bits)), reference_float16_bits(bits)) << "float16 " << h;
        ASSERT_EQ(std::bit_cast<uint32_t>(detail::widen_bfloat16(bits)), h << 16) << "bfloat16 " << h;
        ASSERT_EQ(std::bit_cast<uint32_t>(bfloat16_to_float(bits)), h << 16) << "bfloat16 " << h;
    }
}

// --- Per-tensor affine: x = scale * (q - zero_point) -------------------------

TEST(DequantizePerTensor, Int8) {
    // scale 0.5, zero point -3: 0.5 * (q + 3).
    const auto d = sized(ET::kInt8, {2, 3}, PerTensorAffine{0.5F, -3});
    expect_values(d, {{0x80, 0xFD, 0x00, 0x05, 0x7F, 0xFF}}, {-62.5F, 0.0F, 1.5F, 4.0F, 65.0F, 1.0F});
}

TEST(DequantizePerTensor, UInt8) {
    const auto d = sized(ET::kUInt8, {4}, PerTensorAffine{0.25F, 128});
    expect_values(d, {{0, 128, 255, 1}}, {-32.0F, 0.0F, 31.75F, -31.75F});
}

TEST(DequantizePerTensor, Int16) {
    // 2 * (q + 100) for q = -32768, 0, 32767.
    const auto d = sized(ET::kInt16, {3}, PerTensorAffine{2.0F, -100});
    expect_values(d, {u16s({0x8000, 0x0000, 0x7FFF})}, {-65336.0F, 200.0F, 65734.0F});
}

TEST(DequantizePerTensor, UInt16) {
    const auto d = sized(ET::kUInt16, {2}, PerTensorAffine{0.5F, 65535});
    expect_values(d, {u16s({0x0000, 0xFFFF})}, {-32767.5F, 0.0F});
}

TEST(DequantizePerTensor, Int32RoundsTheDifferenceToFloat32) {
    // q - zp = 16777217 is not a float32: it rounds (to even) to 16777216.
    const auto d = sized(ET::kInt32, {3}, PerTensorAffine{1.0F, 0});
    expect_values(d, {i32s({INT32_MIN, -1, 16777217})}, {-2147483648.0F, -1.0F, 16777216.0F});
}

TEST(DequantizePerTensor, Int32DifferenceBeyondInt32IsExact) {
    // 2147483647 - (-5) overflows int32; we take the exact difference
    // 2147483652, which is 2^31 in float32, times 0.5.
    const auto d = sized(ET::kInt32, {1}, PerTensorAffine{0.5F, -5});
    expect_values(d, {i32s({INT32_MAX})}, {1073741824.0F});
}

TEST(DequantizePerTensor, UInt32) {
    // 4294967295 - 7 = 4294967288 rounds to 2^32 in float32.
    const auto d = sized(ET::kUInt32, {2}, PerTensorAffine{1.0F, 7});
    expect_values(d, {le({0xFFFFFFFF, 0}, 4)}, {4294967296.0F, -7.0F});
}

TEST(DequantizePerTensor, Int4) {
    // Codes -8, 7, 0, -1, 3 (low nibble first): 0x78, 0xF0, 0x03. 1.5 * (q - 1).
    const auto d = sized(ET::kInt4, {5}, PerTensorAffine{1.5F, 1});
    expect_values(d, {{0x78, 0xF0, 0x03}}, {-13.5F, 9.0F, -1.5F, -3.0F, 3.0F});
}

TEST(DequantizePerTensor, UInt4) {
    const auto d = sized(ET::kUInt4, {3}, PerTensorAffine{0.5F, 8});
    expect_values(d, {{0xF0, 0x08}}, {-4.0F, 3.5F, 0.0F});
}

TEST(DequantizePerTensor, Int2) {
    // Codes -2, -1, 0, 1 | 1, -2 (two bits each, LSB first): 0x4E, 0x09. 2 * (q + 1).
    const auto d = sized(ET::kInt2, {6}, PerTensorAffine{2.0F, -1});
    expect_values(d, {{0x4E, 0x09}}, {-2.0F, 0.0F, 2.0F, 4.0F, 4.0F, -2.0F});
}

TEST(DequantizePerTensor, UInt2) {
    // Codes 0, 1, 2, 3 | 3: 0xE4, 0x03. 0.25 * (q - 2).
    const auto d = sized(ET::kUInt2, {5}, PerTensorAffine{0.25F, 2});
    expect_values(d, {{0xE4, 0x03}}, {-0.5F, -0.25F, 0.0F, 0.25F, 0.25F});
}

TEST(DequantizePerTensor, Scalar) {
    const auto d = sized(ET::kInt8, {}, PerTensorAffine{3.0F, 1});
    expect_values(d, {{0x05}}, {12.0F});
}

TEST(DequantizePerTensor, EmptyTensor) {
    const auto d = sized(ET::kInt8, {0, 4}, PerTensorAffine{1.0F, 0});
    expect_values(d, {{}}, {});
}

// --- Per-channel affine: x = scale[c] * (q - zp[c]), c = i_axis ---------------

TEST(DequantizePerChannel, Int8LastAxisAsymmetric) {
    // scale {0.5, 2, -1}, zp {0, 1, -2} along axis 1; q = {10, 1, -3; -4, 3, 5}.
    const auto d = sized(ET::kInt8, {2, 3}, per_channel(1, false));
    expect_values(d, {{10, 1, 0xFD, 0xFC, 3, 5}, f32s({0.5F, 2.0F, -1.0F}), i32s({0, 1, -2})},
                  {5.0F, 0.0F, 1.0F, -2.0F, 4.0F, -7.0F});
}

TEST(DequantizePerChannel, UInt4FirstAxisSymmetric) {
    // scale {1, 0.5, 4} along axis 0; codes {1, 2; 3, 4; 15, 0}.
    const auto d = sized(ET::kUInt4, {3, 2}, per_channel(0, true));
    expect_values(d, {{0x21, 0x43, 0x0F}, f32s({1.0F, 0.5F, 4.0F})}, {1.0F, 2.0F, 1.5F, 2.0F, 60.0F, 0.0F});
}

TEST(DequantizePerChannel, Int16) {
    // 0.5 * (32767 + 32768) and 0.25 * (-32768 - 32767).
    const auto d = sized(ET::kInt16, {1, 2}, per_channel(1, false));
    expect_values(d, {u16s({0x7FFF, 0x8000}), f32s({0.5F, 0.25F}), i32s({-32768, 32767})},
                  {32767.5F, -16383.75F});
}

TEST(DequantizePerChannel, UInt16) {
    const auto d = sized(ET::kUInt16, {2}, per_channel(0, false));
    expect_values(d, {u16s({65535, 3}), f32s({1.0F, -2.0F}), i32s({65535, 5})}, {0.0F, 4.0F});
}

TEST(DequantizePerChannel, Int32) {
    const auto d = sized(ET::kInt32, {2}, per_channel(0, false));
    expect_values(d, {i32s({-1000000, 7}), f32s({0.001F, 4.0F}), i32s({0, -2147483647})},
                  {0.001F * -1000000.0F, 8589934592.0F});
}

TEST(DequantizePerChannel, UInt32) {
    // 4294967295 - 0 is 2^32 in float32; 0.5 * float(0 - 2147483647) = 0.5 * -2^31.
    const auto d = sized(ET::kUInt32, {2}, per_channel(0, false));
    expect_values(d, {le({0xFFFFFFFF, 0}, 4), f32s({1.0F, 0.5F}), i32s({0, 2147483647})},
                  {4294967296.0F, -1073741824.0F});
}

TEST(DequantizePerChannel, Int2AndUInt2) {
    const auto s = sized(ET::kInt2, {2, 2}, per_channel(1, true));
    // codes {-2, 1; -1, 0}: 0b00'11'01'10 = 0x36.
    expect_values(s, {{0x36}, f32s({3.0F, -0.5F})}, {-6.0F, -0.5F, -3.0F, -0.0F});
    const auto u = sized(ET::kUInt2, {2, 2}, per_channel(0, false));
    // codes {3, 0; 1, 2}: 0b10'01'00'11 = 0x93; zp {1, 2}.
    expect_values(u, {{0x93}, f32s({1.0F, 10.0F}), i32s({1, 2})}, {2.0F, -1.0F, -10.0F, 0.0F});
}

// --- Per-block affine: x = s[b] * (q - z[b]) ---------------------------------

// int4 [2, 6], axis 1, block 4: two blocks per row, the second partial
// (6 = 4 + 2), so each row stores 8 nibbles. Blocks b = row * 2 + i / 4.
// float16 scales {1, 0.5, 2, -0.25}, zero points {0, 1, -1, 2}.
//   row 0: q {1, -2, 7, -8 | 3, -1}   row 1: q {0, 1, 2, 3 | -8, 7}
const Bytes kInt4Blocks = {0xE1, 0x87, 0xF3, 0x00, 0x10, 0x32, 0x78, 0x00};
const Bytes kInt4BlockScales = u16s({0x3C00, 0x3800, 0x4000, 0xB400});
const Bytes kInt4BlockZeros = i32s({0, 1, -1, 2});
const std::vector<float> kInt4BlockValues = {1.0F, -2.0F, 7.0F, -8.0F, 1.0F, -1.0F,
                                             2.0F, 4.0F,  6.0F, 8.0F,  2.5F, -1.25F};

TEST(DequantizePerBlock, Int4PartialTrailingBlockFloat16Scales) {
    const auto d = sized(ET::kInt4, {2, 6}, per_block(1, 4, ET::kFloat16, false));
    expect_values(d, {kInt4Blocks, kInt4BlockScales, kInt4BlockZeros}, kInt4BlockValues);
}

TEST(DequantizePerBlock, PaddingElementsAreIgnored) {
    const auto d = sized(ET::kInt4, {2, 6}, per_block(1, 4, ET::kFloat16, false));
    Bytes data = kInt4Blocks;
    data[3] = 0xFF;  // padding must be zero on write; a reader ignores it
    data[7] = 0x77;
    expect_values(d, {data, kInt4BlockScales, kInt4BlockZeros}, kInt4BlockValues);
}

TEST(DequantizePerBlock, SharedScaleAndZeroPointBuffer) {
    auto s = per_block(1, 4, ET::kFloat16, false);
    s.zero_point_buffer_index = 1;  // [scales | zero_points] in buffer 1
    const auto d = sized(ET::kInt4, {2, 6}, s);
    ASSERT_EQ(d.buffers.size(), 2U);
    expect_values(d, {kInt4Blocks, cat(kInt4BlockScales, kInt4BlockZeros)}, kInt4BlockValues);
}

TEST(DequantizePerBlock, UInt8FirstAxisBFloat16Scales) {
    // uint8 [3, 2], axis 0, block 2: the axis is padded to 4 rows. Blocks
    // b = column * 2 + row / 2. bfloat16 scales {0.5, 3, -2, 0x3DCD}, where
    // 0x3DCD = 205 / 2048 = 0.10009765625, exactly widened.
    const auto d = sized(ET::kUInt8, {3, 2}, per_block(0, 2, ET::kBFloat16, true));
    expect_values(d, {{10, 20, 30, 40, 50, 60, 0, 0}, u16s({0x3F00, 0x4040, 0xC000, 0x3DCD})},
                  {5.0F, -40.0F, 15.0F, -80.0F, 150.0F, 6.005859375F});
}

TEST(DequantizePerBlock, UInt2Float32ScalesAsymmetric) {
    // codes {0, 1, 2, 3 | 3, 2, 1, 0}; scales {0.5, 1.5}, zero points {1, 2}.
    const auto d = sized(ET::kUInt2, {1, 8}, per_block(1, 4, ET::kFloat32, false));
    expect_values(d, {{0xE4, 0x1B}, f32s({0.5F, 1.5F}), i32s({1, 2})},
                  {-0.5F, 0.0F, 0.5F, 1.0F, 1.5F, 0.0F, -1.5F, -3.0F});
}

TEST(DequantizePerBlock, Int2PartialBlock) {
    // [1, 3], block 2: codes {-2, 1 | -1, pad} = 0b00'11'01'10 = 0x36; scales {2, -1}.
    const auto d = sized(ET::kInt2, {1, 3}, per_block(1, 2, ET::kFloat16, true));
    expect_values(d, {{0x36}, u16s({0x4000, 0xBC00})}, {-4.0F, 2.0F, 1.0F});
}

TEST(DequantizePerBlock, Int8MiddleAxis) {
    // int8 [2, 2, 2], axis 1, block 2: blocks b = (i0 * 2 + i2) * 1 + 0.
    const auto d = sized(ET::kInt8, {2, 2, 2}, per_block(1, 2, ET::kFloat32, false));
    expect_values(d, {{1, 2, 3, 4, 5, 6, 7, 8}, f32s({1.0F, 2.0F, 3.0F, 4.0F}), i32s({1, 0, 0, 8})},
                  {0.0F, 4.0F, 2.0F, 8.0F, 15.0F, -8.0F, 21.0F, 0.0F});
}

TEST(DequantizePerBlock, UInt4BlockEqualsAxis) {
    const auto d = sized(ET::kUInt4, {2, 4}, per_block(1, 4, ET::kFloat32, false));
    expect_values(d, {{0x21, 0x43, 0xFF, 0x00}, f32s({1.0F, 0.5F}), i32s({2, 15})},
                  {-1.0F, 0.0F, 1.0F, 2.0F, 0.0F, 0.0F, -7.5F, -7.5F});
}

// --- NF4: x = absmax[b] * nf4[q] ------------------------------------------------

TEST(DequantizeNf4, EveryCode) {
    // [2, 16], block 8: absmax {1, 2, 0.5, 0}. Row 0 holds codes 0..15, row 1 15..0.
    const auto d = sized(ET::kUInt4, {2, 16}, Nf4Quantization{1, 8, 1});
    const Bytes data = {0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE,
                        0xEF, 0xCD, 0xAB, 0x89, 0x67, 0x45, 0x23, 0x01};
    expect_values(d, {data, f32s({1.0F, 2.0F, 0.5F, 0.0F})},
                  {// block 0: the levels themselves (nf4.md § Lookup Table)
                   -1.0F, -0.6961928009986877F, -0.5250730514526367F, -0.39491748809814453F,
                   -0.28444138169288635F, -0.18477343022823334F, -0.09105003625154495F, 0.0F,
                   // block 1: 2 * nf4[8..15]
                   0.15916059911251068F, 0.3218604028224945F, 0.49222460389137268F, 0.67583048343658448F,
                   0.88141965866088868F, 1.1252340078353882F, 1.4459136724472046F, 2.0F,
                   // block 2: 0.5 * nf4[15..8]
                   0.5F, 0.36147841811180115F, 0.28130850195884705F, 0.22035491466522217F,
                   0.16895762085914612F, 0.12305615097284317F, 0.080465100705623625F, 0.03979014977812767F,
                   // block 3: absmax 0
                   0.0F, 0.0F, 0.0F, 0.0F, 0.0F, 0.0F, 0.0F, 0.0F});
}

TEST(DequantizeNf4, PartialTrailingBlock) {
    // [1, 12], block 8: stored as 16 nibbles; absmax {1, 4}.
    const auto d = sized(ET::kUInt4, {1, 12}, Nf4Quantization{1, 8, 1});
    expect_values(d, {{0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0x00, 0x00}, f32s({1.0F, 4.0F})},
                  {-1.0F, -0.6961928009986877F, -0.5250730514526367F, -0.39491748809814453F,
                   -0.28444138169288635F, -0.18477343022823334F, -0.09105003625154495F, 0.0F,
                   0.31832119822502136F, 0.643720805644989F, 0.98444920778274536F, 1.35166096687316896F});
}

TEST(DequantizeNf4, FirstAxis) {
    // [8, 2], axis 0, block 8: column c is block c.
    const auto d = sized(ET::kUInt4, {8, 2}, Nf4Quantization{0, 8, 1});
    const Bytes data = {0xF0, 0xF0, 0xF0, 0xF0, 0xF0, 0xF0, 0xF0, 0x7F};
    expect_values(d, {data, f32s({3.0F, 0.25F})},
                  {-3.0F, 0.25F, -3.0F, 0.25F, -3.0F, 0.25F, -3.0F, 0.25F, -3.0F, 0.25F, -3.0F, 0.25F,
                   -3.0F, 0.25F, 3.0F, 0.0F});
}

// --- MXFP: x = 2^(e - 127) * value(q) ----------------------------------------

MxfpQuantization mx(uint32_t axis, uint32_t block) { return MxfpQuantization{axis, block, 1}; }

TEST(DequantizeMxfp, Float8E4M3) {
    // [1, 32], two blocks of 16, scales 2^0 and 2^-2.
    const auto d = sized(ET::kFloat8E4M3, {1, 32}, mx(1, 16));
    Bytes data(32, 0);
    // 1.0, 448 (max), 2^-9 (smallest subnormal), -1.0, NaN, 0, 2^-6 (smallest normal), 1.5
    const Bytes b0 = {0x38, 0x7E, 0x01, 0xB8, 0x7F, 0x00, 0x08, 0x3C};
    std::copy(b0.begin(), b0.end(), data.begin());
    data[16] = 0x38;
    data[17] = 0x7E;
    data[18] = 0xFE;
    std::vector<float> want(32, 0.0F);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> w0 = {1.0F, 448.0F, 0.001953125F, -1.0F, nan, 0.0F, 0.015625F, 1.5F};
    std::copy(w0.begin(), w0.end(), want.begin());
    want[16] = 0.25F;
    want[17] = 112.0F;
    want[18] = -112.0F;
    expect_values(d, {data, {127, 125}}, want);
}

TEST(DequantizeMxfp, Float8E5M2) {
    // Scale 2^3: 1.0, 57344 (max), infinity, 2^-16 (smallest subnormal), -2.0.
    const auto d = sized(ET::kFloat8E5M2, {16}, mx(0, 16));
    Bytes data(16, 0);
    const Bytes b = {0x3C, 0x7B, 0x7C, 0x01, 0xC0};
    std::copy(b.begin(), b.end(), data.begin());
    std::vector<float> want(16, 0.0F);
    const std::vector<float> w = {8.0F, 458752.0F, std::numeric_limits<float>::infinity(), 0.0001220703125F,
                                  -16.0F};
    std::copy(w.begin(), w.end(), want.begin());
    expect_values(d, {data, {130}}, want);
}

TEST(DequantizeMxfp, Float4E2M1EveryCode) {
    // Scale 2: codes 0..15 are 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives.
    const auto d = sized(ET::kFloat4E2M1, {16}, mx(0, 16));
    expect_values(d, {{0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE}, {128}},
                  {0.0F, 1.0F, 2.0F, 3.0F, 4.0F, 6.0F, 8.0F, 12.0F, -0.0F, -1.0F, -2.0F, -3.0F, -4.0F, -6.0F,
                   -8.0F, -12.0F});
}

TEST(DequantizeMxfp, Float6E2M3) {
    // Scale 2^-1; codes 0x08 (1.0), 0x1F (7.5), 0x01 (0.125), 0x28 (-1.0):
    // 24 bits 0x08 | 0x1F << 6 | 0x01 << 12 | 0x28 << 18 = 0xA017C8.
    const auto d = sized(ET::kFloat6E2M3, {16}, mx(0, 16));
    Bytes data(12, 0);
    data[0] = 0xC8;
    data[1] = 0x17;
    data[2] = 0xA0;
    std::vector<float> want(16, 0.0F);
    want[0] = 0.5F;
    want[1] = 3.75F;
    want[2] = 0.0625F;
    want[3] = -0.5F;
    expect_values(d, {data, {126}}, want);
}

TEST(DequantizeMxfp, Float6E3M2) {
    // Scale 2^4; codes 0x0C (1.0), 0x1F (28), 0x01 (0.0625), 0x3F (-28): 0xFC17CC.
    const auto d = sized(ET::kFloat6E3M2, {16}, mx(0, 16));
    Bytes data(12, 0);
    data[0] = 0xCC;
    data[1] = 0x17;
    data[2] = 0xFC;
    std::vector<float> want(16, 0.0F);
    want[0] = 16.0F;
    want[1] = 448.0F;
    want[2] = 1.0F;
    want[3] = -448.0F;
    expect_values(d, {data, {131}}, want);
}

TEST(DequantizeMxfp, Int8) {
    // Scale 2^-6: the signed integer value times 1/64.
    const auto d = sized(ET::kInt8, {16}, mx(0, 16));
    Bytes data(16, 0);
    data[0] = 0x80;
    data[1] = 0x7F;
    data[2] = 0x01;
    data[3] = 0xFF;
    data[4] = 0x40;
    std::vector<float> want(16, 0.0F);
    want[0] = -2.0F;
    want[1] = 1.984375F;
    want[2] = 0.015625F;
    want[3] = -0.015625F;
    want[4] = 1.0F;
    expect_values(d, {data, {121}}, want);
}

TEST(DequantizeMxfp, Int4) {
    // Scale 4: codes -8, 7, 1, -1.
    const auto d = sized(ET::kInt4, {16}, mx(0, 16));
    Bytes data(8, 0);
    data[0] = 0x78;
    data[1] = 0xF1;
    std::vector<float> want(16, 0.0F);
    want[0] = -32.0F;
    want[1] = 28.0F;
    want[2] = 4.0F;
    want[3] = -4.0F;
    expect_values(d, {data, {129}}, want);
}

TEST(DequantizeMxfp, ExtremeScales) {
    // e = 1 and e = 254: 2^-126 and 2^127, both normal float32 values.
    const auto d = sized(ET::kInt8, {2, 16}, mx(1, 16));
    Bytes data(32, 0);
    data[0] = 1;
    data[16] = 1;
    std::vector<float> want(32, 0.0F);
    want[0] = std::ldexp(1.0F, -126);
    want[16] = std::ldexp(1.0F, 127);
    expect_values(d, {data, {0x01, 0xFE}}, want);
}

// --- Column-major -----------------------------------------------------------------

TEST(DequantizeColumnMajor, PerBlockPaddedAxis) {
    // uint8 [3, 2] column-major, axis 0, block 2: the axis is padded to 4, so
    // element (i, j) is at i + 4 * j. Blocks b = j * 2 + i / 2 (logical order).
    const auto d = sized(ET::kUInt8, {3, 2}, per_block(0, 2, ET::kFloat32, true), ColumnMajorLayout{});
    expect_values(d, {{10, 30, 50, 0, 20, 40, 60, 0}, f32s({0.5F, 3.0F, -2.0F, 0.125F})},
                  {5.0F, -40.0F, 15.0F, -80.0F, 150.0F, 7.5F});
}

TEST(DequantizeColumnMajor, PerChannelInt4) {
    // int4 [2, 3] column-major: storage order (0,0), (1,0), (0,1), (1,1), ...
    // logical q {1, 2, 3; -1, -2, -3}, scales {1, 2, 3} along axis 1.
    const auto d = sized(ET::kInt4, {2, 3}, per_channel(1, true), ColumnMajorLayout{});
    expect_values(d, {{0xF1, 0xE2, 0xD3}, f32s({1.0F, 2.0F, 3.0F})}, {1.0F, 4.0F, 9.0F, -1.0F, -4.0F, -9.0F});
}

TEST(DequantizeColumnMajor, PerTensorUInt2) {
    // [2, 2] column-major: storage q (0,0)=0, (1,0)=1, (0,1)=2, (1,1)=3.
    const auto d = sized(ET::kUInt2, {2, 2}, PerTensorAffine{1.0F, 1}, ColumnMajorLayout{});
    expect_values(d, {{0xE4}}, {-1.0F, 1.0F, 0.0F, 2.0F});
}

TEST(DequantizeColumnMajor, Nf4) {
    // [2, 8] column-major, axis 1, block 8: storage (i, j) at i + 2 j.
    const auto d = sized(ET::kUInt4, {2, 8}, Nf4Quantization{1, 8, 1}, ColumnMajorLayout{});
    // Row 0 codes all 15, row 1 all 0: storage alternates 15, 0.
    expect_values(d, {Bytes(8, 0x0F), f32s({2.0F, 0.5F})},
                  {2.0F, 2.0F, 2.0F, 2.0F, 2.0F, 2.0F, 2.0F, 2.0F, -0.5F, -0.5F, -0.5F, -0.5F, -0.5F, -0.5F,
                   -0.5F, -0.5F});
}

// --- Rejections ------------------------------------------------------------------

TEST(DequantizeRejects, NaNPerChannelScale) {
    const auto d = sized(ET::kInt8, {1, 2}, per_channel(1, true));
    expect_error(d, {{1, 2}, f32s({1.0F, std::numeric_limits<float>::quiet_NaN()})}, ErrorCode::kInvalidData,
                 "per_channel_affine: scale buffer 1 entry 1");
}

TEST(DequantizeRejects, ZeroFloat16BlockScale) {
    const auto d = sized(ET::kInt4, {2, 6}, per_block(1, 4, ET::kFloat16, false));
    Bytes scales = kInt4BlockScales;
    scales[4] = 0x00;  // entry 2 = +0.0
    scales[5] = 0x00;
    expect_error(d, {kInt4Blocks, scales, kInt4BlockZeros}, ErrorCode::kInvalidData,
                 "per_block_affine: scale buffer 1 entry 2");
}

TEST(DequantizeRejects, InfiniteBFloat16BlockScale) {
    const auto d = sized(ET::kUInt8, {3, 2}, per_block(0, 2, ET::kBFloat16, true));
    expect_error(d, {{10, 20, 30, 40, 50, 60, 0, 0}, u16s({0x3F00, 0x4040, 0x7F80, 0x3DCD})},
                 ErrorCode::kInvalidData, "scale buffer 1 entry 2");
}

TEST(DequantizeRejects, ZeroPointOutOfRange) {
    const auto u4 = sized(ET::kUInt4, {2}, per_channel(0, false));
    expect_error(u4, {{0x21}, f32s({1.0F, 1.0F}), i32s({16, 0})}, ErrorCode::kInvalidData,
                 "zero point buffer 2 entry 0");
    const auto i2 = sized(ET::kInt2, {1, 4}, per_block(1, 2, ET::kFloat32, false));
    expect_error(i2, {{0x00}, f32s({1.0F, 1.0F}), i32s({0, -3})}, ErrorCode::kInvalidData,
                 "zero point buffer 2 entry 1");
    const auto i8 = sized(ET::kInt8, {1, 2}, per_block(1, 2, ET::kFloat32, false));
    expect_error(i8, {{0, 0}, f32s({1.0F}), i32s({128})}, ErrorCode::kInvalidData, "outside the range of int8");
}

TEST(DequantizeRejects, Nf4Absmax) {
    const auto d = sized(ET::kUInt4, {1, 8}, Nf4Quantization{1, 8, 1});
    expect_error(d, {Bytes(4, 0), f32s({-1.0F})}, ErrorCode::kInvalidData, "nf4: absmax buffer 1 entry 0");
    expect_error(d, {Bytes(4, 0), f32s({std::numeric_limits<float>::quiet_NaN()})}, ErrorCode::kInvalidData,
                 "absmax buffer 1 entry 0");
    expect_error(d, {Bytes(4, 0), f32s({std::numeric_limits<float>::infinity()})}, ErrorCode::kInvalidData,
                 "absmax buffer 1 entry 0");
}

TEST(DequantizeRejects, ReservedE8M0Scales) {
    const auto d = sized(ET::kFloat4E2M1, {2, 16}, mx(1, 16));
    expect_error(d, {Bytes(16, 0), {127, 0xFF}}, ErrorCode::kInvalidData, "entry 1 (block 1) is 0xFF");
    expect_error(d, {Bytes(16, 0), {0x00, 127}}, ErrorCode::kInvalidData, "entry 0 (block 0) is 0x00");
}

TEST(DequantizeRejects, WrongOutputSize) {
    const auto d = sized(ET::kInt8, {2, 3}, PerTensorAffine{1.0F, 0});
    const std::vector<Bytes> bufs = {Bytes(6, 0)};
    std::vector<std::span<const uint8_t>> spans(bufs.begin(), bufs.end());
    auto view = TensorView::make(d, spans);
    ASSERT_TRUE(view.ok());
    std::vector<float> small(5);
    auto st = dequantize(*view, small);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(st.error().message().find("out holds 5 floats, the tensor has 6"), std::string::npos);
    std::vector<float> big(7);
    EXPECT_EQ(dequantize(*view, big).error().code(), ErrorCode::kInvalidArgument);
}

TEST(DequantizeRejects, UnquantizedTensor) {
    auto d = make_dense(ET::kFloat32, {2});
    ASSERT_TRUE(d.ok());
    auto r = run(*d, {Bytes(8, 0)});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
}

TEST(DequantizeRejects, PrivateSchemeIsUnsupported) {
    TensorDescriptor d;
    d.element_type = ET::kInt8;
    d.shape = {4};
    d.buffers = {BufferHandle{.byte_size = 4}};
    d.quantization = QuantizationDescriptor{OpaqueQuantization{0xF3, 1, 0, {}}, {}};
    expect_error(d, {Bytes(4, 0)}, ErrorCode::kUnsupported, "0xF3");
}

// Descriptors that skipped check_descriptor: every read stays bounds-checked.
TEST(DequantizeRejects, UncheckedDescriptorWithShortBuffers) {
    TensorDescriptor d = sized(ET::kInt4, {2, 6}, per_block(1, 4, ET::kFloat16, false));
    d.buffers[0].byte_size = 7;  // needs 8: the padded trailing block
    expect_error(d, {Bytes(7, 0), kInt4BlockScales, kInt4BlockZeros}, ErrorCode::kBufferTooSmall, "buffer[0].byte_size: 7 is below");
    d.buffers[0].byte_size = 8;
    d.buffers[2].byte_size = 12;  // 4 zero points need 16 bytes
    expect_error(d, {kInt4Blocks, kInt4BlockScales, Bytes(12, 0)}, ErrorCode::kInvalidQuantizationBuffer,
                 "buffer[2].byte_size: 12 must be exactly 16");
    auto shared = per_block(1, 4, ET::kFloat16, false);
    shared.zero_point_buffer_index = 1;
    TensorDescriptor s = sized(ET::kInt4, {2, 6}, shared);
    s.buffers[1].byte_size = 23;  // [8 | 16] needs 24
    expect_error(s, {kInt4Blocks, Bytes(23, 0)}, ErrorCode::kInvalidQuantizationBuffer, "buffer[1].byte_size: 23 must be exactly 24");
}

TEST(DequantizeRejects, UncheckedParameterFields) {
    TensorDescriptor d = sized(ET::kInt8, {2}, PerTensorAffine{1.0F, 0});
    std::get<PerTensorAffine>(d.quantization->scheme).scale = 0.0F;
    expect_error(d, {Bytes(2, 0)}, ErrorCode::kInvalidQuantization, "per_tensor_affine.scale");
    std::get<PerTensorAffine>(d.quantization->scheme) = PerTensorAffine{1.0F, 200};
    expect_error(d, {Bytes(2, 0)}, ErrorCode::kInvalidQuantization, "per_tensor_affine.zero_point");

    TensorDescriptor c = sized(ET::kInt8, {2}, per_channel(0, true));
    std::get<PerChannelAffine>(c.quantization->scheme).axis = 1;
    expect_error(c, {Bytes(2, 0), f32s({1.0F, 1.0F})}, ErrorCode::kInvalidQuantization, "axis");
    std::get<PerChannelAffine>(c.quantization->scheme).axis = 0;
    std::get<PerChannelAffine>(c.quantization->scheme).scale_buffer_index = 0;
    expect_error(c, {Bytes(2, 0), f32s({1.0F, 1.0F})}, ErrorCode::kInvalidQuantizationBuffer,
                 "scale_buffer_index");

    TensorDescriptor b = sized(ET::kInt8, {1, 4}, per_block(1, 2, ET::kFloat32, true));
    b.element_type = ET::kInt16;  // not a per-block storage type
    expect_error(b, {Bytes(8, 0), f32s({1.0F, 1.0F})}, ErrorCode::kInvalidQuantizationStorageType, "int16");
}

TEST(DequantizeRejects, HugeSparseShapeIsAnErrorNotACrash) {
    // 2^62 logical elements with no stored value: 2^64 bytes of floats.
    TensorDescriptor d;
    d.element_type = ET::kInt8;
    d.shape = {uint64_t{1} << 31, uint64_t{1} << 31};
    d.layout = CooLayout{0, true};
    d.quantization = QuantizationDescriptor{PerTensorAffine{1.0F, 0}, {}};
    auto sized_d = size_buffers(d);
    ASSERT_TRUE(sized_d.ok()) << sized_d.error().to_string();
    auto r = run(*sized_d, {Bytes{}, Bytes{}});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), ErrorCode::kSizeOverflow);
}

TEST(DequantizeRejects, Nf4OnBlockPagedIsUnsupported) {
    TensorDescriptor d;
    d.element_type = ET::kUInt4;
    d.shape = {2, 1, 8};
    d.layout = BlockPagedLayout{.page_size = 2, .num_pages = 1, .num_seqs = 1};
    d.buffers = {BufferHandle{.byte_size = 8}, BufferHandle{.byte_size = 4}, BufferHandle{.byte_size = 8},
                 BufferHandle{.byte_size = 8}};
    d.quantization = QuantizationDescriptor{Nf4Quantization{2, 8, 3}, {}};
    expect_error(d, {Bytes(8, 0), Bytes(4, 0), le({0, 1}, 4), f32s({1.0F, 1.0F})}, ErrorCode::kUnsupported,
                 "block-paged");
}

// --- Layouts through TensorView addressing -------------------------------------
//
// These go through TensorView::locate / materialize; expect_values asserts that
// dequantize succeeds.

TEST(DequantizeLayouts, StridedPerChannel) {
    // int8 [2, 2] with strides {1, 2}: element (i, j) at i + 2 j. Scales {1, 10} along axis 0.
    const auto d = sized(ET::kInt8, {2, 2}, per_channel(0, true), StridedLayout{{1, 2}});
    const std::vector<Bytes> bufs = {{1, 2, 3, 4}, f32s({1.0F, 10.0F})};
    expect_values(d, bufs, {1.0F, 3.0F, 20.0F, 40.0F});
}

TEST(DequantizeLayouts, StridedPerBlockIsNotPadded) {
    // int4 [2, 3] with strides {3, 1}: only dense row-major layouts pad the
    // blocked axis, so the 6 codes are contiguous and row 1 starts at an odd
    // nibble. Codes {1, 2, 3; -1, -2, -3}; blocks of 2: scales {1, 10; 100, 1000}.
    const auto d = sized(ET::kInt4, {2, 3}, per_block(1, 2, ET::kFloat32, true), StridedLayout{{3, 1}});
    const std::vector<Bytes> bufs = {{0x21, 0xF3, 0xDE}, f32s({1.0F, 10.0F, 100.0F, 1000.0F})};
    expect_values(d, bufs, {1.0F, 2.0F, 30.0F, -100.0F, -200.0F, -3000.0F});
}

TEST(DequantizeLayouts, BlockPagedPerTensor) {
    // [2 tokens, 1 head, 2 dims] in one page; scale 2, zero point 1.
    TensorDescriptor d = sized(ET::kInt8, {2, 1, 2}, PerTensorAffine{2.0F, 1},
                               BlockPagedLayout{.page_size = 2, .num_pages = 1, .num_seqs = 1}, {4});
    const std::vector<Bytes> bufs = {{1, 2, 3, 4}, le({0}, 4), le({0, 1}, 4)};
    expect_values(d, bufs, {0.0F, 2.0F, 4.0F, 6.0F});
}

TEST(DequantizeLayouts, CsrUnstoredElementsAreZero) {
    // [2, 3] CSR, nnz 2: (0, 2) = 6 and (1, 0) = -2; scale 0.5, zero point 2.
    // Stored: 0.5 * (6 - 2) = 2 and 0.5 * (-2 - 2) = -2; unstored: 0.0, not 0.5 * (0 - 2).
    const auto d = sized(ET::kInt8, {2, 3}, PerTensorAffine{0.5F, 2}, CsrLayout{2});
    const std::vector<Bytes> bufs = {{6, 0xFE}, le({2, 0}, 8), le({0, 1, 2}, 8)};
    expect_values(d, bufs, {0.0F, 0.0F, 2.0F, -2.0F, 0.0F, 0.0F});
}

TEST(DequantizeLayouts, CooPerBlockUsesLogicalBlocks) {
    // int4 [1, 4] COO, block 2: stored (0, 1) = 3 and (0, 2) = -1; scales {2, 5}.
    const auto d = sized(ET::kInt4, {1, 4}, per_block(1, 2, ET::kFloat32, true, 2), CooLayout{2, true});
    const std::vector<Bytes> bufs = {{0xF3}, le({0, 1, 0, 2}, 8), f32s({2.0F, 5.0F})};
    expect_values(d, bufs, {0.0F, 6.0F, -5.0F, 0.0F});
}

TEST(DequantizeLayouts, BlockPagedPerSlotScales) {
    // [3 tokens, 1 head, 2 dims], page_size 2, 2 physical pages, one
    // sequence whose block table is {1, 0}: tokens 0 and 1 live in page 1
    // (slots 2 and 3), token 2 in page 0 (slot 0). Slot 1 is unused: its
    // scale (NaN) is never read.
    TensorDescriptor d = sized(ET::kInt8, {3, 1, 2}, per_block(0, 2, ET::kFloat16, true, 3),
                               BlockPagedLayout{.page_size = 2, .num_pages = 2, .num_seqs = 1}, {8});
    const std::vector<Bytes> bufs = {{5, 6, 7, 8, 1, 2, 3, 4}, le({1, 0}, 4), le({0, 2}, 4),
                                     u16s({0x4000, 0x7E00, 0x3800, 0x3C00})};
    expect_values(d, bufs, {0.5F, 1.0F, 3.0F, 4.0F, 10.0F, 12.0F});
}

// --- Randomized: row-major and column-major against the plain formula ------------

struct RandomCase {
    ET storage;
    Shape shape;
    uint32_t axis;
    uint32_t block;  // 0: per-channel
    ET scale_type;
    bool symmetric;
};

uint32_t bits_of(ET t) { return bit_width(t); }

void put_code(Bytes& b, uint64_t index, uint32_t bits, uint32_t code) {
    if (bits < 8) {
        store_packed(b, index, bits, code & ((1U << bits) - 1));
        return;
    }
    for (uint32_t k = 0; k < bits / 8; ++k) {
        b[index * (bits / 8) + k] = static_cast<uint8_t>(code >> (8 * k));
    }
}

void check_random(const RandomCase& c, uint32_t seed) {
    std::mt19937 rng(seed);
    const uint32_t bits = bits_of(c.storage);
    const bool is_signed = is_signed_integer(c.storage);
    const int64_t lo = is_signed ? -(int64_t{1} << (bits - 1)) : 0;
    const int64_t hi = is_signed ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
    QuantizationScheme scheme;
    if (c.block == 0) {
        scheme = per_channel(c.axis, c.symmetric);
    } else {
        scheme = per_block(c.axis, c.block, c.scale_type, c.symmetric);
    }
    const auto row = sized(c.storage, c.shape, scheme);
    const auto col = sized(c.storage, c.shape, scheme, ColumnMajorLayout{});
    const uint64_t rank = c.shape.size();
    uint64_t count = 1;
    for (uint64_t s : c.shape) {
        count *= s;
    }
    const uint64_t len = c.shape[c.axis];
    const uint64_t k = c.block == 0 ? 1 : c.block;
    const uint64_t nb = (len + k - 1) / k;
    const uint64_t ext = c.block == 0 ? len : nb * k;
    const uint64_t entries = c.block == 0 ? len : count / len * nb;
    // Parameters: scales from a few exact values, zero points in range.
    std::uniform_int_distribution<int> pick(0, 5);
    const float choices[] = {0.5F, -0.25F, 2.0F, 0.125F, 3.0F, -1.5F};
    std::vector<float> scale(entries);
    std::vector<int32_t> zp(entries, 0);
    std::uniform_int_distribution<int64_t> zdist(std::max<int64_t>(lo, INT32_MIN), std::min<int64_t>(hi, INT32_MAX));
    for (uint64_t e = 0; e < entries; ++e) {
        scale[e] = choices[pick(rng)];
        if (!c.symmetric) {
            zp[e] = static_cast<int32_t>(zdist(rng));
        }
    }
    Bytes sbytes;
    for (float s : scale) {
        uint32_t v = std::bit_cast<uint32_t>(s);
        uint32_t w = 4;
        if (c.scale_type == ET::kFloat16) {
            v = float_to_float16(s);
            w = 2;
        } else if (c.scale_type == ET::kBFloat16) {
            v = float_to_bfloat16(s);
            w = 2;
        }
        for (uint32_t b = 0; b < w; ++b) {
            sbytes.push_back(static_cast<uint8_t>(v >> (8 * b)));
        }
    }
    Bytes zbytes;
    for (int32_t z : zp) {
        const Bytes x = le({static_cast<uint32_t>(z)}, 4);
        zbytes.insert(zbytes.end(), x.begin(), x.end());
    }
    // Codes in logical order, stored row-major and column-major (axis padded).
    std::uniform_int_distribution<int64_t> qdist(lo, hi);
    std::vector<int64_t> q(count);
    Bytes rbytes(row.buffers[0].byte_size, 0);
    Bytes cbytes(col.buffers[0].byte_size, 0);
    std::vector<float> want(count);
    std::vector<uint64_t> idx(rank, 0);
    for (uint64_t l = 0; l < count; ++l) {
        q[l] = qdist(rng);
        // Row-major and column-major storage positions, parameter index.
        uint64_t r_pos = 0;
        uint64_t c_pos = 0;
        uint64_t c_stride = 1;
        uint64_t outer = 0;
        for (uint64_t d = 0; d < rank; ++d) {
            const uint64_t extent = d == c.axis ? ext : c.shape[d];
            r_pos = r_pos * extent + idx[d];
            c_pos += idx[d] * c_stride;
            c_stride *= extent;
            if (d != c.axis) {
                outer = outer * c.shape[d] + idx[d];
            }
        }
        const uint64_t p = c.block == 0 ? idx[c.axis] : outer * nb + idx[c.axis] / k;
        put_code(rbytes, r_pos, bits, static_cast<uint32_t>(q[l]));
        put_code(cbytes, c_pos, bits, static_cast<uint32_t>(q[l]));
        const float s = c.scale_type == ET::kFloat32 ? scale[p]
                        : c.scale_type == ET::kFloat16 ? float16_to_float(float_to_float16(scale[p]))
                                                      : bfloat16_to_float(float_to_bfloat16(scale[p]));
        want[l] = s * static_cast<float>(q[l] - zp[p]);
        for (uint64_t d = rank; d-- > 0;) {
            if (++idx[d] < c.shape[d]) {
                break;
            }
            idx[d] = 0;
        }
    }
    std::vector<Bytes> rb = {rbytes, sbytes};
    std::vector<Bytes> cb = {cbytes, sbytes};
    if (!c.symmetric) {
        rb.push_back(zbytes);
        cb.push_back(zbytes);
    }
    expect_values(row, rb, want);
    expect_values(col, cb, want);
}

TEST(DequantizeRandom, RowAndColumnMajorMatchTheFormula) {
    const std::vector<RandomCase> cases = {
        {ET::kInt4, {3, 70}, 1, 32, ET::kFloat16, false},      // partial last block, inner 1
        {ET::kUInt4, {3, 71}, 1, 8, ET::kFloat32, true},       // odd row length: unaligned nibbles
        {ET::kInt8, {37, 5}, 0, 16, ET::kBFloat16, false},     // axis 0, inner 5
        {ET::kUInt2, {2, 9, 3}, 1, 4, ET::kFloat16, false},    // middle axis, unaligned crumbs
        {ET::kInt2, {5, 7}, 1, 2, ET::kFloat32, true},
        {ET::kUInt8, {3, 2500}, 0, 2, ET::kFloat32, false},    // inner run longer than one chunk
        {ET::kInt4, {2, 5000}, 1, 4096, ET::kFloat16, true},   // block longer than one chunk
        {ET::kInt8, {4, 3000}, 1, 0, ET::kFloat32, false},     // per-channel, inner 1, several chunks
        {ET::kUInt16, {6, 2, 3}, 1, 0, ET::kFloat32, false},   // per-channel, inner 3
        {ET::kInt32, {3, 4}, 0, 0, ET::kFloat32, false},
        {ET::kUInt32, {4, 3}, 1, 0, ET::kFloat32, false},
        {ET::kInt16, {5}, 0, 0, ET::kFloat32, true},
        {ET::kUInt4, {5, 3}, 1, 0, ET::kFloat32, false},
    };
    uint32_t seed = 1;
    for (const RandomCase& c : cases) {
        SCOPED_TRACE("case " + std::to_string(seed));
        check_random(c, seed++);
    }
}

}  // namespace
