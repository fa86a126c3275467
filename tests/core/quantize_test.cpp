// SPDX-License-Identifier: Apache-2.0
// Quantizers (quantize.hpp): hand-worked codes and parameters, the error bound
// of quantize -> dequantize for every scheme and storage type on random data,
// descriptor validity, and rejected inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hurray/core/dequantize.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/element_convert.hpp"
#include "hurray/core/quantize.hpp"
#include "hurray/core/tensor_view.hpp"

namespace {

using namespace hurray;  // NOLINT(google-build-using-namespace): test brevity
using ET = ElementType;

QuantizedTensor must(Result<QuantizedTensor> r) {
    if (!r.ok()) {
        ADD_FAILURE() << r.error().to_string();
        return {};
    }
    return std::move(r).value();
}

std::vector<float> roundtrip(const QuantizedTensor& q) {
    EXPECT_TRUE(check_descriptor(q.descriptor).ok());
    // The descriptor survives encode and decode.
    auto bytes = encode(q.descriptor);
    EXPECT_TRUE(bytes.ok());
    if (bytes.ok()) {
        auto back = decode(*bytes);
        EXPECT_TRUE(back.ok());
        if (back.ok()) {
            EXPECT_EQ(*back, q.descriptor);
        }
    }
    const auto spans = q.spans();
    auto view = TensorView::make(q.descriptor, spans);
    if (!view.ok()) {
        ADD_FAILURE() << view.error().to_string();
        return {};
    }
    auto r = dequantize(*view);
    if (!r.ok()) {
        ADD_FAILURE() << r.error().to_string();
        return {};
    }
    return *r;
}

uint32_t code_at(const QuantizedTensor& q, uint64_t index) {
    const uint32_t bits = bit_width(q.descriptor.element_type);
    const std::vector<uint8_t>& b = q.buffers[0];
    if (bits < 8) {
        return load_packed(b, index, bits);
    }
    uint32_t v = 0;
    for (uint32_t k = 0; k < bits / 8; ++k) {
        v |= static_cast<uint32_t>(b[index * (bits / 8) + k]) << (8 * k);
    }
    return v;
}

float f32_at(const std::vector<uint8_t>& b, size_t i) {
    uint32_t v = 0;
    for (uint32_t k = 0; k < 4; ++k) {
        v |= static_cast<uint32_t>(b[4 * i + k]) << (8 * k);
    }
    return std::bit_cast<float>(v);
}



// The parameter index of logical element `l` (row-major), per
// per-block-affine.md § Block Layout; `block` 0 means per-channel.
uint64_t param_of(const Shape& shape, uint32_t axis, uint32_t block, uint64_t l) {
    std::vector<uint64_t> idx(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
        idx[d] = l % shape[d];
        l /= shape[d];
    }
    if (block == 0) {
        return idx[axis];
    }
    uint64_t outer = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
        if (d != axis) {
            outer = outer * shape[d] + idx[d];
        }
    }
    return outer * ((shape[axis] + block - 1) / block) + idx[axis] / block;
}

std::vector<float> random_values(uint64_t n, uint32_t seed, float spread = 1.0F) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0F, spread);
    std::vector<float> v(n);
    for (float& x : v) {
        x = normal(rng);
    }
    // A few outliers and exact zeros.
    for (uint64_t i = 0; i < n; i += 37) {
        v[i] = 0.0F;
    }
    for (uint64_t i = 5; i < n; i += 101) {
        v[i] *= 8.0F;
    }
    return v;
}

uint64_t count_of(const Shape& s) {
    uint64_t n = 1;
    for (uint64_t d : s) {
        n *= d;
    }
    return n;
}

// --- Hand-worked cases ---------------------------------------------------------

TEST(QuantizeAffine, PerTensorAsymmetricUInt8ByHand) {
    // Range [-1, 2]: scale 3/255 (rounded up to float32), zero point
    // round(0 + 1 / scale) = 85. Codes: -1 -> 0, 0 -> 85, 0.5 -> 42 + 85, 2 -> 255.
    const std::vector<float> x = {-1.0F, 0.0F, 0.5F, 2.0F};
    const QuantizedTensor q = must(quantize_per_tensor(x, {4}, ET::kUInt8, false));
    const auto& p = std::get<PerTensorAffine>(q.descriptor.quantization->scheme);
    auto want = static_cast<float>(3.0 / 255.0);
    if (static_cast<double>(want) < 3.0 / 255.0) {
        want = std::nextafter(want, 1.0F);
    }
    EXPECT_EQ(p.scale, want);
    EXPECT_EQ(p.zero_point, 85);
    EXPECT_EQ(q.buffers[0], (std::vector<uint8_t>{0, 85, 127, 255}));
    const auto y = roundtrip(q);
    ASSERT_EQ(y.size(), 4U);
    EXPECT_EQ(y[1], 0.0F);  // zero is exact
}

TEST(QuantizeAffine, PerTensorSymmetricRoundsHalfToEven) {
    // absmax 127 -> scale 1: 63.5 -> 64, 64.5 -> 64, -2.5 -> -2, 0.4 -> 0.
    const std::vector<float> x = {-127.0F, 63.5F, 64.5F, 0.4F, -2.5F};
    const QuantizedTensor q = must(quantize_per_tensor(x, {5}, ET::kInt8, true));
    const auto& p = std::get<PerTensorAffine>(q.descriptor.quantization->scheme);
    EXPECT_EQ(p.scale, 1.0F);
    EXPECT_EQ(p.zero_point, 0);
    EXPECT_EQ(q.buffers[0], (std::vector<uint8_t>{0x81, 64, 64, 0, 0xFE}));
}

TEST(QuantizeAffine, PerBlockInt4PaddingIsZero) {
    // [2, 6] blocks of 4 along axis 1: every row stores 8 nibbles, the last 2 zero.
    std::vector<float> x = {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6};
    const QuantizedTensor q = must(quantize_per_block(x, {2, 6}, ET::kInt4, 1, 4, ET::kFloat16, false));
    ASSERT_EQ(q.buffers[0].size(), 8U);
    EXPECT_EQ(q.buffers[0][3], 0x00);
    EXPECT_EQ(q.buffers[0][7], 0x00);
    ASSERT_EQ(q.buffers.size(), 3U);
    EXPECT_EQ(q.buffers[1].size(), 4U * 2);  // 4 float16 scales
    EXPECT_EQ(q.buffers[2].size(), 4U * 4);  // 4 int32 zero points
}

TEST(QuantizeNf4, NearestLevelByHand) {
    // absmax 1: 0.5 lies nearer 0.4407 (code 12) than 0.5626; -0.5 nearest
    // -0.5251 (2); 0.2 nearest 0.1609 (9); -0.1 nearest -0.0911 (6).
    const std::vector<float> x = {1.0F, -1.0F, 0.0F, 0.5F, -0.5F, 0.07958029955625534F, 0.2F, -0.1F};
    const QuantizedTensor q = must(quantize_nf4(x, {8}, 0, 8));
    EXPECT_EQ(f32_at(q.buffers[1], 0), 1.0F);
    const std::vector<uint32_t> want = {15, 0, 7, 12, 2, 8, 9, 6};
    for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(code_at(q, i), want[i]) << "element " << i;
    }
}

TEST(QuantizeMxfp, Float4ByHand) {
    // absmax 5: floor(log2 5) - emax(2) = 0, scale byte 127. Ties go to the
    // even mantissa: 5 -> 4, 2.5 -> 2, 0.25 -> 0, -1.75 -> -2.
    std::vector<float> x(16, 0.0F);
    x[0] = 5.0F;
    x[1] = 2.5F;
    x[2] = 0.25F;
    x[3] = -1.75F;
    x[4] = 3.1F;
    const QuantizedTensor q = must(quantize_mxfp(x, {16}, ET::kFloat4E2M1, 0, 16));
    EXPECT_EQ(q.buffers[1][0], 127);
    EXPECT_EQ(code_at(q, 0), 0x6U);
    EXPECT_EQ(code_at(q, 1), 0x4U);
    EXPECT_EQ(code_at(q, 2), 0x0U);
    EXPECT_EQ(code_at(q, 3), 0xCU);
    EXPECT_EQ(code_at(q, 4), 0x5U);  // 3
}

TEST(QuantizeMxfp, SaturatesAboveTheLargestElementAsOcpMx) {
    // absmax 1000: e = 9 - 8 = 1, scale 2; 1000 / 2 = 500 > 448 saturates.
    std::vector<float> x(32, 1.0F);
    x[0] = 1000.0F;
    const QuantizedTensor q = must(quantize_mxfp(x, {32}, ET::kFloat8E4M3, 0, 32));
    EXPECT_EQ(q.buffers[1][0], 128);
    const auto y = roundtrip(q);
    ASSERT_EQ(y.size(), 32U);
    EXPECT_EQ(y[0], 896.0F);
    EXPECT_EQ(y[1], 1.0F);
}

TEST(QuantizeMxfp, ZeroBlockGetsTheSmallestScale) {
    const std::vector<float> x(16, 0.0F);
    const QuantizedTensor q = must(quantize_mxfp(x, {16}, ET::kInt8, 0, 16));
    EXPECT_EQ(q.buffers[1][0], 0x01);
    for (float v : roundtrip(q)) {
        EXPECT_EQ(v, 0.0F);
    }
}

TEST(QuantizeAffine, AllZeroInputGivesScaleOneAndExactZeros) {
    const std::vector<float> x(10, 0.0F);
    for (bool sym : {true, false}) {
        const QuantizedTensor q = must(quantize_per_block(x, {10}, ET::kUInt4, 0, 4, ET::kBFloat16, sym));
        for (float v : roundtrip(q)) {
            EXPECT_EQ(v, 0.0F);
        }
    }
}

TEST(QuantizeAffine, EmptyTensors) {
    const std::vector<float> none;
    EXPECT_TRUE(roundtrip(must(quantize_per_tensor(none, {0, 3}, ET::kInt8, false))).empty());
    EXPECT_TRUE(roundtrip(must(quantize_per_channel(none, {4, 0}, ET::kUInt4, 0, false))).empty());
    EXPECT_TRUE(roundtrip(must(quantize_per_block(none, {0, 8}, ET::kInt4, 1, 4, ET::kFloat16, true))).empty());
    EXPECT_TRUE(roundtrip(must(quantize_nf4(none, {2, 0}, 1, 8))).empty());
}

// --- Error bounds on random data ------------------------------------------------

struct AffineCase {
    const char* scheme;  // "tensor", "channel", "block"
    ET storage;
    Shape shape;
    uint32_t axis;
    uint32_t block;
    ET scale_type;
    bool symmetric;
};

float widen(ET t, const std::vector<uint8_t>& b, size_t i) {
    if (t == ET::kFloat32) {
        return f32_at(b, i);
    }
    const auto bits = static_cast<uint16_t>(b[2 * i] | (b[2 * i + 1] << 8));
    return t == ET::kFloat16 ? float16_to_float(bits) : bfloat16_to_float(bits);
}

void check_affine(const AffineCase& c, uint32_t seed) {
    const uint64_t n = count_of(c.shape);
    std::vector<float> x = random_values(n, seed, 3.0F);
    if (!c.symmetric && seed % 2 == 0) {
        for (float& v : x) {
            v += 5.0F;  // an off-centre range
        }
    }
    if (c.symmetric && !is_signed_integer(c.storage)) {
        for (float& v : x) {
            v = std::fabs(v);
        }
    }
    Result<QuantizedTensor> r = Error(ErrorCode::kInvalidArgument, "unset");
    const std::string scheme = c.scheme;
    if (scheme == "tensor") {
        r = quantize_per_tensor(x, c.shape, c.storage, c.symmetric);
    } else if (scheme == "channel") {
        r = quantize_per_channel(x, c.shape, c.storage, c.axis, c.symmetric);
    } else {
        r = quantize_per_block(x, c.shape, c.storage, c.axis, c.block, c.scale_type, c.symmetric);
    }
    const QuantizedTensor q = must(std::move(r));
    if (q.buffers.empty()) {
        return;
    }
    const std::vector<float> y = roundtrip(q);
    ASSERT_EQ(y.size(), n);
    for (uint64_t l = 0; l < n; ++l) {
        float s = 0;
        if (scheme == "tensor") {
            s = std::get<PerTensorAffine>(q.descriptor.quantization->scheme).scale;
        } else {
            const uint64_t p = param_of(c.shape, c.axis, scheme == "channel" ? 0 : c.block, l);
            s = widen(scheme == "channel" ? ET::kFloat32 : c.scale_type, q.buffers[1], p);
        }
        // Half a quantization step, plus float32 rounding of q - z and of the product.
        const double bound = 0.5 * std::fabs(static_cast<double>(s)) * (1 + 1e-6) +
                             4.0 * std::fabs(static_cast<double>(x[l])) * std::ldexp(1.0, -24) + 1e-30;
        ASSERT_LE(std::fabs(static_cast<double>(y[l]) - x[l]), bound)
            << "element " << l << ": x " << x[l] << " -> " << y[l] << ", scale " << s;
    }
}

TEST(QuantizeAffine, ErrorWithinHalfAScaleStep) {
    const std::vector<ET> all = {ET::kInt8, ET::kUInt8, ET::kInt16, ET::kUInt16, ET::kInt32,
                                ET::kUInt32, ET::kInt4, ET::kUInt4, ET::kInt2, ET::kUInt2};
    const std::vector<ET> blockable = {ET::kInt8, ET::kUInt8, ET::kInt4, ET::kUInt4, ET::kInt2, ET::kUInt2};
    std::vector<AffineCase> cases;
    for (ET t : all) {
        for (bool sym : {true, false}) {
            cases.push_back({"tensor", t, {7, 9}, 0, 0, ET::kFloat32, sym});
            cases.push_back({"channel", t, {5, 13}, 1, 0, ET::kFloat32, sym});
            cases.push_back({"channel", t, {6, 4, 3}, 1, 0, ET::kFloat32, sym});
        }
    }
    for (ET t : blockable) {
        for (bool sym : {true, false}) {
            for (ET st : {ET::kFloat16, ET::kBFloat16, ET::kFloat32}) {
                cases.push_back({"block", t, {3, 70}, 1, 32, st, sym});  // partial last block
                cases.push_back({"block", t, {37, 5}, 0, 8, st, sym});   // axis 0, inner 5
                cases.push_back({"block", t, {2, 9, 3}, 1, 4, st, sym});
            }
        }
    }
    uint32_t seed = 100;
    for (const AffineCase& c : cases) {
        SCOPED_TRACE(std::string(c.scheme) + " " + std::string(type_name(c.storage)) +
                     (c.symmetric ? " symmetric" : " asymmetric") + " scale " +
                     std::string(type_name(c.scale_type)) + " seed " + std::to_string(seed));
        check_affine(c, seed++);
    }
}

TEST(QuantizeAffine, UInt32ZeroPointIsCappedAtInt32Max) {
    // A range centred on 0 would want zero point 2^31; the int32 field stops at
    // 2^31 - 1 and the scale grows instead. The bound still holds.
    std::vector<float> x = random_values(64, 7);
    x[0] = -10.0F;
    x[1] = 10.0F;
    const QuantizedTensor q = must(quantize_per_tensor(x, {64}, ET::kUInt32, false));
    const auto& p = std::get<PerTensorAffine>(q.descriptor.quantization->scheme);
    EXPECT_LE(p.zero_point, INT32_MAX);
    const auto y = roundtrip(q);
    ASSERT_EQ(y.size(), 64U);
    for (size_t i = 0; i < 64; ++i) {
        EXPECT_LE(std::fabs(y[i] - x[i]), 0.5 * p.scale * (1 + 1e-6) + 4.0 * std::fabs(x[i]) * std::ldexp(1.0, -24));
    }
}

TEST(QuantizeNf4, ErrorWithinHalfTheLargestGap) {
    double gap = 0;
    for (size_t k = 0; k + 1 < 16; ++k) {
        gap = std::max(gap, static_cast<double>(kNf4Levels[k + 1]) - kNf4Levels[k]);
    }
    struct Case {
        Shape shape;
        uint32_t axis;
        uint32_t block;
    };
    const std::vector<Case> cases = {{{4, 100}, 1, 64}, {{3, 64}, 1, 8}, {{70, 3}, 0, 16}, {{2, 20, 3}, 1, 8}};
    uint32_t seed = 300;
    for (const Case& c : cases) {
        const uint64_t n = count_of(c.shape);
        const std::vector<float> x = random_values(n, seed++);
        const QuantizedTensor q = must(quantize_nf4(x, c.shape, c.axis, c.block));
        if (q.buffers.empty()) {
            continue;
        }
        const std::vector<float> y = roundtrip(q);
        ASSERT_EQ(y.size(), n);
        for (uint64_t l = 0; l < n; ++l) {
            const float amax = f32_at(q.buffers[1], param_of(c.shape, c.axis, c.block, l));
            const double err = std::fabs(static_cast<double>(y[l]) - x[l]);
            ASSERT_LE(err, 0.5 * gap * amax * (1 + 1e-6) + 1e-30) << "element " << l;
            // And it is the nearest level.
            for (float level : kNf4Levels) {
                ASSERT_LE(err, std::fabs(static_cast<double>(amax * level) - x[l]) + 1e-12) << "element " << l;
            }
        }
    }
}

struct MxType {
    ET type;
    int emax;
    double max;
    double min;
    int man_bits;  // -1: integer
    int bias;
};

// Half the spacing of the element type's values around |v| (<= max).
double half_ulp(const MxType& m, double v) {
    if (m.man_bits < 0) {
        return 0.5;
    }
    const double a = std::fabs(v);
    const int min_exp = 1 - m.bias;
    const int e = a < std::ldexp(1.0, min_exp) ? min_exp : std::ilogb(a);
    return std::ldexp(0.5, e - m.man_bits);
}

TEST(QuantizeMxfp, ErrorWithinHalfAnElementUlpOrSaturation) {
    const std::vector<MxType> types = {
        {ET::kFloat8E4M3, 8, 448.0, -448.0, 3, 7}, {ET::kFloat8E5M2, 15, 57344.0, -57344.0, 2, 15},
        {ET::kFloat4E2M1, 2, 6.0, -6.0, 1, 1},     {ET::kFloat6E2M3, 2, 7.5, -7.5, 3, 1},
        {ET::kFloat6E3M2, 4, 28.0, -28.0, 2, 3},   {ET::kInt8, 6, 127.0, -128.0, -1, 0},
        {ET::kInt4, 2, 7.0, -8.0, -1, 0},
    };
    struct Shape2 {
        Shape shape;
        uint32_t axis;
        uint32_t block;
    };
    const std::vector<Shape2> shapes = {{{3, 64}, 1, 32}, {{32, 5}, 0, 16}, {{2, 32, 2}, 1, 16}};
    uint32_t seed = 500;
    for (const MxType& m : types) {
        for (const Shape2& s : shapes) {
            SCOPED_TRACE(std::string(type_name(m.type)) + " seed " + std::to_string(seed));
            const uint64_t n = count_of(s.shape);
            const std::vector<float> x = random_values(n, seed++, 0.01F);
            const QuantizedTensor q = must(quantize_mxfp(x, s.shape, m.type, s.axis, s.block));
            if (q.buffers.empty()) {
                continue;
            }
            const std::vector<float> y = roundtrip(q);
            ASSERT_EQ(y.size(), n);
            // Every element of the type, to find the nearest representable value.
            std::vector<double> values;
            for (uint32_t code = 0; code < (1U << bit_width(m.type)); ++code) {
                std::vector<uint8_t> one(4, 0);
                store_packed(one, 0, std::min<uint32_t>(bit_width(m.type), 8), code);
                auto v = element_as_double(m.type, one, 0);
                if (v.ok() && std::isfinite(*v)) {
                    values.push_back(*v);
                }
            }
            std::vector<float> amax(n, 0.0F);
            for (uint64_t l = 0; l < n; ++l) {
                const uint64_t p = param_of(s.shape, s.axis, s.block, l);
                amax[p] = std::max(amax[p], std::fabs(x[l]));
            }
            for (uint64_t l = 0; l < n; ++l) {
                const uint64_t p = param_of(s.shape, s.axis, s.block, l);
                const uint8_t e = q.buffers[1][p];
                const int want_e = amax[p] == 0.0F ? -126 : std::clamp(std::ilogb(amax[p]) - m.emax, -126, 127);
                ASSERT_EQ(static_cast<int>(e) - 127, want_e) << "block " << p;
                const double scale = std::ldexp(1.0, static_cast<int>(e) - 127);
                const double v = x[l] / scale;
                const double err = std::fabs(static_cast<double>(y[l]) - x[l]);
                double nearest = std::numeric_limits<double>::infinity();
                for (double c : values) {
                    nearest = std::min(nearest, std::fabs(c - v));
                }
                ASSERT_LE(err, nearest * scale * (1 + 1e-12)) << "element " << l << ": not the nearest value";
                if (v > m.max || v < m.min) {
                    ASSERT_EQ(y[l], (v > 0 ? m.max : m.min) * scale) << "element " << l << ": saturates";
                } else {
                    ASSERT_LE(err, half_ulp(m, v) * scale) << "element " << l;
                }
            }
        }
    }
}

// --- Rejections ----------------------------------------------------------------------

void expect_rejected(Result<QuantizedTensor> r, ErrorCode code, const std::string& fragment) {
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), code) << r.error().to_string();
    EXPECT_NE(r.error().message().find(fragment), std::string::npos) << r.error().to_string();
}

TEST(QuantizeRejects, BadInputs) {
    const std::vector<float> six = {1, 2, 3, 4, 5, 6};
    expect_rejected(quantize_per_tensor(six, {7}, ET::kInt8, true), ErrorCode::kInvalidArgument,
                    "6 values given, the shape has 7");
    std::vector<float> nan = six;
    nan[2] = std::numeric_limits<float>::quiet_NaN();
    expect_rejected(quantize_per_channel(nan, {2, 3}, ET::kInt8, 1, true), ErrorCode::kInvalidArgument,
                    "values[2] is not finite");
    std::vector<float> inf = six;
    inf[5] = std::numeric_limits<float>::infinity();
    expect_rejected(quantize_nf4(inf, {6}, 0, 8), ErrorCode::kInvalidArgument, "values[5]");
    const std::vector<float> neg = {1, -2, 3, 4};
    expect_rejected(quantize_per_tensor(neg, {4}, ET::kUInt8, true), ErrorCode::kInvalidArgument, "negative");
}

TEST(QuantizeRejects, InvalidDescriptorFields) {
    const std::vector<float> x(64, 1.0F);
    EXPECT_EQ(quantize_per_channel(x, {8, 8}, ET::kInt8, 2, true).error().code(), ErrorCode::kInvalidQuantization);
    EXPECT_EQ(quantize_per_block(x, {8, 8}, ET::kInt16, 1, 4, ET::kFloat16, true).error().code(),
              ErrorCode::kInvalidQuantizationStorageType);
    EXPECT_EQ(quantize_per_block(x, {8, 8}, ET::kInt8, 1, 3, ET::kFloat16, true).error().code(),
              ErrorCode::kInvalidQuantization);
    EXPECT_EQ(quantize_per_block(x, {8, 8}, ET::kInt8, 1, 4, ET::kInt8, true).error().code(),
              ErrorCode::kInvalidQuantization);
    EXPECT_EQ(quantize_per_tensor(x, {64}, ET::kFloat16, true).error().code(),
              ErrorCode::kInvalidQuantizationStorageType);
    EXPECT_EQ(quantize_mxfp(x, {4, 16}, ET::kFloat8E4M3, 1, 32).error().code(), ErrorCode::kInvalidQuantization);
    EXPECT_EQ(quantize_mxfp(x, {2, 32}, ET::kUInt8, 1, 16).error().code(),
              ErrorCode::kInvalidQuantizationStorageType);
    EXPECT_EQ(quantize_nf4(x, {8, 8}, 1, 4).error().code(), ErrorCode::kInvalidQuantization);
}

TEST(QuantizeRejects, Float16ScaleOverflow) {
    // absmax 1e9 over 127 steps: a scale near 7.9e6, beyond float16's 65504.
    std::vector<float> x(8, 1.0F);
    x[0] = 1e9F;
    expect_rejected(quantize_per_block(x, {8}, ET::kInt8, 0, 8, ET::kFloat16, true), ErrorCode::kInvalidArgument,
                    "overflows float16");
    // bfloat16 has the range of float32.
    EXPECT_TRUE(quantize_per_block(x, {8}, ET::kInt8, 0, 8, ET::kBFloat16, true).ok());
}

}  // namespace
