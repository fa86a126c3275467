// SPDX-License-Identifier: Apache-2.0
// dequantize_ggml() (hurray/core/ggml_blocks.hpp): GGML blocks to float32 by ggml's reference formulas (the block
// layouts of ggml-common.h; our own code). Every product and difference is a separate
// float32 operation in ggml's order, never fused (fp-contract off), so the results are the
// bits ggml's reference dequantization gives.
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "core/float16_widen.hpp"
#include "core/float_vector.hpp"
#include "hurray/core/byte_io.hpp"
#include "hurray/core/text.hpp"
#include "hurray/core/ggml_blocks.hpp"

#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace hurray {

namespace {

using hurray::detail::widen_bfloat16;
using hurray::detail::widen_float16;

float f16(const uint8_t* p) noexcept { return widen_float16(load_le<uint16_t>(p)); }

uint32_t u32(const uint8_t* p) noexcept { return load_le<uint32_t>(p); }

// Each takes one block and writes its values to y.

void q4_0(const uint8_t* b, float* y) noexcept {
    const float d = f16(b);
    for (int j = 0; j < 16; ++j) {
        y[j] = static_cast<float>((b[2 + j] & 0x0F) - 8) * d;
        y[j + 16] = static_cast<float>((b[2 + j] >> 4) - 8) * d;
    }
}

void q4_1(const uint8_t* b, float* y) noexcept {
    const float d = f16(b);
    const float m = f16(b + 2);
    for (int j = 0; j < 16; ++j) {
        const float p0 = static_cast<float>(b[4 + j] & 0x0F) * d;
        const float p1 = static_cast<float>(b[4 + j] >> 4) * d;
        y[j] = p0 + m;
        y[j + 16] = p1 + m;
    }
}

void q5_0(const uint8_t* b, float* y) noexcept {
    const float d = f16(b);
    const uint32_t qh = u32(b + 2);
    const uint8_t* qs = b + 6;
    for (int j = 0; j < 16; ++j) {
        const uint32_t h0 = ((qh >> j) << 4) & 0x10U;
        const uint32_t h1 = (qh >> (j + 12)) & 0x10U;
        const int x0 = static_cast<int>((qs[j] & 0x0FU) | h0) - 16;
        const int x1 = static_cast<int>((qs[j] >> 4U) | h1) - 16;
        y[j] = static_cast<float>(x0) * d;
        y[j + 16] = static_cast<float>(x1) * d;
    }
}

void q5_1(const uint8_t* b, float* y) noexcept {
    const float d = f16(b);
    const float m = f16(b + 2);
    const uint32_t qh = u32(b + 4);
    const uint8_t* qs = b + 8;
    for (int j = 0; j < 16; ++j) {
        const uint32_t h0 = ((qh >> j) << 4) & 0x10U;
        const uint32_t h1 = (qh >> (j + 12)) & 0x10U;
        const float p0 = static_cast<float>((qs[j] & 0x0FU) | h0) * d;
        const float p1 = static_cast<float>((qs[j] >> 4U) | h1) * d;
        y[j] = p0 + m;
        y[j + 16] = p1 + m;
    }
}

void q8_0(const uint8_t* b, float* y) noexcept {
    const float d = f16(b);
    for (int j = 0; j < 32; ++j) {
        y[j] = static_cast<float>(static_cast<int8_t>(b[2 + j])) * d;
    }
}

void q2_k(const uint8_t* b, float* y) noexcept {
    const uint8_t* scales = b;
    const uint8_t* q = b + 16;
    const float d = f16(b + 80);
    const float dmin = f16(b + 82);
    int is = 0;
    for (int n = 0; n < 256; n += 128) {
        for (int shift = 0; shift < 8; shift += 2) {
            for (int half = 0; half < 2; ++half) {
                const uint8_t sc = scales[is++];
                const float dl = d * static_cast<float>(sc & 0x0F);
                const float ml = dmin * static_cast<float>(sc >> 4);
                for (int l = 0; l < 16; ++l) {
                    const float p = dl * static_cast<float>((q[l + 16 * half] >> shift) & 3);
                    *y++ = p - ml;
                }
            }
        }
        q += 32;
    }
}

void q3_k(const uint8_t* b, float* y) noexcept {
    const uint8_t* hm = b;
    const uint8_t* q = b + 32;
    const uint8_t* s = b + 96;
    const float d_all = f16(b + 108);
    // The 16 6-bit scales: low 4 bits from s[0..7] nibbles, high 2 bits from s[8..11].
    std::array<int, 16> scales{};
    for (int i = 0; i < 16; ++i) {
        const int low = i < 8 ? (s[i] & 0x0F) : (s[i - 8] >> 4);
        const int high = (s[8 + i % 4] >> (2 * (i / 4))) & 3;
        scales[static_cast<size_t>(i)] = (low | (high << 4)) - 32;
    }
    int is = 0;
    uint8_t m = 1;
    for (int n = 0; n < 256; n += 128) {
        for (int shift = 0; shift < 8; shift += 2) {
            for (int half = 0; half < 2; ++half) {
                const float dl = d_all * static_cast<float>(scales[static_cast<size_t>(is++)]);
                for (int l = 0; l < 16; ++l) {
                    const int k = l + 16 * half;
                    const int v = ((q[k] >> shift) & 3) - ((hm[k] & m) != 0 ? 0 : 4);
                    *y++ = dl * static_cast<float>(v);
                }
            }
            m = static_cast<uint8_t>(m << 1);
        }
        q += 32;
    }
}

/// Scale and min `j` (0..7) of the 12 packed bytes of Q4_K / Q5_K.
void scale_min_k4(int j, const uint8_t* s, int& sc, int& m) noexcept {
    if (j < 4) {
        sc = s[j] & 63;
        m = s[j + 4] & 63;
    } else {
        sc = (s[j + 4] & 0x0F) | ((s[j - 4] >> 6) << 4);
        m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

/// Q4_K and Q5_K: d and dmin (f16), the 12 packed scale/min bytes, then 8 runs of
/// 32 values, each `d * scale * q - dmin * min`; `quant(pair, half, l)` gives value
/// `l` of run `2 * pair + half` (its low nibble for half 0, high for half 1).
template <typename Quant>
void k4_blocks(const uint8_t* b, float* y, Quant quant) noexcept {
    const float d = f16(b);
    const float dmin = f16(b + 2);
    const uint8_t* s = b + 4;
    for (int pair = 0; pair < 4; ++pair) {
        for (int half = 0; half < 2; ++half) {
            int sc = 0;
            int m = 0;
            scale_min_k4(2 * pair + half, s, sc, m);
            const float d1 = d * static_cast<float>(sc);
            const float m1 = dmin * static_cast<float>(m);
            for (int l = 0; l < 32; ++l) {
                const float p = d1 * static_cast<float>(quant(pair, half, l));
                *y++ = p - m1;
            }
        }
    }
}

void q4_k(const uint8_t* b, float* y) noexcept {
    const uint8_t* q = b + 16;
    k4_blocks(b, y, [q](int pair, int half, int l) {
        const uint8_t v = q[32 * pair + l];
        return half == 0 ? (v & 0x0F) : (v >> 4);
    });
}

void q5_k(const uint8_t* b, float* y) noexcept {
    const uint8_t* qh = b + 16;  // bit 2 * pair + half of byte l: the fifth bit
    const uint8_t* ql = b + 48;
    k4_blocks(b, y, [qh, ql](int pair, int half, int l) {
        const uint8_t v = ql[32 * pair + l];
        const int low = half == 0 ? (v & 0x0F) : (v >> 4);
        const auto bit = static_cast<unsigned>(2 * pair + half);
        return low + (((static_cast<unsigned>(qh[l]) >> bit) & 1U) != 0 ? 16 : 0);
    });
}

void q6_k(const uint8_t* b, float* y) noexcept {
    const uint8_t* ql = b;
    const uint8_t* qh = b + 128;
    const auto* sc = b + 192;
    const float d = f16(b + 208);
    for (int n = 0; n < 2; ++n) {
        for (int l = 0; l < 32; ++l) {
            const int is = l / 16;
            const int q1 = ((ql[l] & 0x0F) | (((qh[l] >> 0) & 3) << 4)) - 32;
            const int q2 = ((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) - 32;
            const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
            const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            auto scale = [&](int k) {
                return d * static_cast<float>(static_cast<int8_t>(sc[is + 2 * k]));
            };
            y[l] = scale(0) * static_cast<float>(q1);
            y[l + 32] = scale(1) * static_cast<float>(q2);
            y[l + 64] = scale(2) * static_cast<float>(q3);
            y[l + 96] = scale(3) * static_cast<float>(q4);
        }
        y += 128;
        ql += 64;
        qh += 32;
        sc += 8;
    }
}

void q8_k(const uint8_t* b, float* y) noexcept {
    float d = 0;
    std::memcpy(&d, b, sizeof d);  // float32, little-endian (as the hosts this builds for)
    for (int j = 0; j < 256; ++j) {
        y[j] = d * static_cast<float>(static_cast<int8_t>(b[4 + j]));
    }
}

void f32(const uint8_t* b, float* y) noexcept { std::memcpy(y, b, 4); }
void f16v(const uint8_t* b, float* y) noexcept { *y = f16(b); }
void bf16(const uint8_t* b, float* y) noexcept {
    *y = widen_bfloat16(load_le<uint16_t>(b));
}

using BlockFn = void (*)(const uint8_t*, float*) noexcept;

BlockFn block_fn(uint32_t type) noexcept {
    switch (static_cast<GgmlType>(type)) {
        case GgmlType::kF32:
            return f32;
        case GgmlType::kF16:
            return f16v;
        case GgmlType::kBF16:
            return bf16;
        case GgmlType::kQ4_0:
            return q4_0;
        case GgmlType::kQ4_1:
            return q4_1;
        case GgmlType::kQ5_0:
            return q5_0;
        case GgmlType::kQ5_1:
            return q5_1;
        case GgmlType::kQ8_0:
            return q8_0;
        case GgmlType::kQ2_K:
            return q2_k;
        case GgmlType::kQ3_K:
            return q3_k;
        case GgmlType::kQ4_K:
            return q4_k;
        case GgmlType::kQ5_K:
            return q5_k;
        case GgmlType::kQ6_K:
            return q6_k;
        case GgmlType::kQ8_K:
            return q8_k;
        default:
            break;
    }
    return nullptr;
}

}  // namespace

Status dequantize_ggml(uint32_t type, std::span<const uint8_t> bytes, std::span<float> out) {
    const auto info = ggml_type_info(type);
    if (!info) {
        return Error(ErrorCode::kUnsupported, "dequantize_ggml: unknown ggml type " + dec(type));
    }
    const BlockFn fn = block_fn(type);
    if (fn == nullptr) {
        return Error(ErrorCode::kUnsupported, "dequantize_ggml: no dequantization for ggml type " +
                                                  std::string(info->name) +
                                                  " (supported: f32, f16, bf16, q4_0, q4_1, q5_0, "
                                                  "q5_1, q8_0, q2_K, q3_K, q4_K, q5_K, q6_K, q8_K)");
    }
    const uint64_t blocks = bytes.size() / info->bytes;
    if (bytes.size() % info->bytes != 0 || out.size() / info->elements != blocks ||
        out.size() % info->elements != 0) {
        return Error(ErrorCode::kInvalidArgument,
                     "dequantize_ggml: " + dec(bytes.size()) + " bytes are not the " + dec(out.size()) +
                         " values of whole " + std::string(info->name) + " blocks");
    }
    for (uint64_t k = 0; k < blocks; ++k) {
        fn(bytes.data() + k * info->bytes, out.data() + k * info->elements);
    }
    return Status::success();
}

Result<std::vector<float>> dequantize_ggml(uint32_t type, std::span<const uint8_t> bytes,
                                           uint64_t count) {
    const auto info = ggml_type_info(type);
    if (!info || block_fn(type) == nullptr) {
        return dequantize_ggml(type, bytes, std::span<float>{}).error();  // names the type
    }
    if (count % info->elements != 0 || count / info->elements > bytes.size() / info->bytes ||
        count / info->elements * info->bytes != bytes.size()) {
        return Error(ErrorCode::kInvalidArgument,
                     "dequantize_ggml: " + dec(bytes.size()) + " bytes are not the " + dec(count) +
                         " values of whole " + std::string(info->name) + " blocks");
    }
    HURRAY_ASSIGN_OR_RETURN(std::vector<float> out, detail::float_vector(count, "dequantize_ggml"));
    HURRAY_RETURN_IF_ERROR(dequantize_ggml(type, bytes, out));
    return out;
}

}  // namespace hurray
