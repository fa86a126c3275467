// SPDX-License-Identifier: Apache-2.0
// GGUF's Q8_0 / Q4_0 blocks <-> Hurray's per-block affine buffers, and the descriptors of
// GGUF tensors.
//
// A Q8_0 block is a float16 scale d then 32 int8 quants q: value j = float32(d) * q[j].
// A Q4_0 block is d then 16 bytes: value j (j < 16) is the low nibble of byte j, value
// j + 16 its high nibble, each an unsigned x with value (x - 8) * float32(d).
// Hurray's per-block affine keeps the quants in buffer 0 (int8; or int4, two per byte,
// element 2k in the low nibble of byte k) and the scales in buffer 1, block after block:
// the int4 code of x is x - 8 in two's complement, i.e. x ^ 8.
#include "convert/ggml_blocks.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "hurray/core/byte_io.hpp"
#include "hurray/core/checked_math.hpp"
#include "hurray/core/builder.hpp"

namespace hurray::convert::detail {

namespace {

constexpr uint32_t kBlock = 32;    // values per Q8_0 / Q4_0 block
constexpr uint32_t kQ8Bytes = 34;  // bytes per Q8_0 block
constexpr uint32_t kQ4Bytes = 18;  // bytes per Q4_0 block

uint32_t block_bytes(GgmlPresentation p) noexcept {
    return p == GgmlPresentation::kQ8_0 ? kQ8Bytes : kQ4Bytes;
}
uint32_t quant_bytes(GgmlPresentation p) noexcept {
    return p == GgmlPresentation::kQ8_0 ? kBlock : kBlock / 2;
}

/// Hurray int4 byte k (0..15) of a Q4_0 block's 16 quant bytes `qs`: elements 2k, 2k+1.
uint8_t q4_hurray_byte(const uint8_t* qs, uint32_t k) noexcept {
    auto nibble = [qs](uint32_t e) -> uint8_t {
        const uint8_t x =
            e < 16 ? static_cast<uint8_t>(qs[e] & 0x0FU) : static_cast<uint8_t>(qs[e - 16] >> 4);
        return static_cast<uint8_t>(x ^ 0x08U);  // x - 8 as a two's complement nibble
    };
    return static_cast<uint8_t>(nibble(2 * k) | (nibble(2 * k + 1) << 4));
}

}  // namespace

Result<TensorDescriptor> ggml_descriptor(GgmlPresentation presentation, uint32_t type,
                                         const Shape& shape) {
    switch (presentation) {
        case GgmlPresentation::kDense: {
            const auto et = ggml_dense_element_type(type);
            if (!et) {
                return Error(ErrorCode::kInvalidArgument,
                             "ggml type " + std::to_string(type) + " is not plain");
            }
            return make_dense(*et, shape);
        }
        case GgmlPresentation::kQ8_0:
        case GgmlPresentation::kQ4_0:
            return make_per_block_quantized(
                presentation == GgmlPresentation::kQ8_0 ? ElementType::kInt8 : ElementType::kInt4,
                shape, static_cast<uint32_t>(shape.size() - 1), kBlock, ElementType::kFloat16,
                true);
        case GgmlPresentation::kBlocks:
            break;
    }
    return make_ggml_blocks(type, shape);
}

bool ggml_scales_valid(std::span<const uint8_t> blocks, uint32_t bytes_per_block) noexcept {
    for (size_t at = 0; at + bytes_per_block <= blocks.size(); at += bytes_per_block) {
        const auto h = load_le<uint16_t>(blocks.data() + at);  // SAFETY: at + bytes_per_block <= size
        if ((h & 0x7FFFU) == 0 || (h & 0x7C00U) == 0x7C00U) {
            return false;  // +-0, inf or NaN
        }
    }
    return true;
}

void ggml_deinterleave(GgmlPresentation presentation, std::span<const uint8_t> blocks,
                       size_t buffer, uint64_t offset, std::span<uint8_t> out) noexcept {
    const uint32_t bb = block_bytes(presentation);
    if (buffer == 1) {
        for (size_t k = 0; k < out.size(); ++k) {
            const uint64_t at = offset + k;
            out[k] = blocks[(at / 2) * bb + at % 2];
        }
        return;
    }
    const uint32_t qb = quant_bytes(presentation);
    size_t k = 0;
    while (k < out.size()) {
        const uint64_t at = offset + k;
        const uint64_t block = at / qb;
        const auto in_block = static_cast<uint32_t>(at % qb);
        const size_t n = std::min<size_t>(qb - in_block, out.size() - k);
        const uint8_t* qs = blocks.data() + block * bb + 2;
        if (presentation == GgmlPresentation::kQ8_0) {
            std::memcpy(out.data() + k, qs + in_block, n);
        } else {
            for (size_t j = 0; j < n; ++j) {
                out[k + j] = q4_hurray_byte(qs, static_cast<uint32_t>(in_block + j));
            }
        }
        k += n;
    }
}

void ggml_interleave(GgmlPresentation presentation, std::span<const uint8_t> quants,
                     std::span<const uint8_t> scales, std::span<uint8_t> out) noexcept {
    const uint32_t bb = block_bytes(presentation);
    const uint32_t qb = quant_bytes(presentation);
    const size_t nblocks = out.size() / bb;
    for (size_t b = 0; b < nblocks; ++b) {
        uint8_t* blk = out.data() + b * bb;
        blk[0] = scales[2 * b];
        blk[1] = scales[2 * b + 1];
        const uint8_t* q = quants.data() + b * qb;
        if (presentation == GgmlPresentation::kQ8_0) {
            std::memcpy(blk + 2, q, qb);
            continue;
        }
        std::array<uint8_t, kBlock> x{};  // the unsigned GGUF codes of the block's 32 values
        for (size_t k = 0; k < 16; ++k) {
            x[2 * k] = static_cast<uint8_t>((q[k] & 0x0FU) ^ 0x08U);
            x[2 * k + 1] = static_cast<uint8_t>((q[k] >> 4) ^ 0x08U);
        }
        for (uint32_t j = 0; j < 16; ++j) {
            blk[2 + j] = static_cast<uint8_t>(x[j] | (x[j + 16] << 4));
        }
    }
}

}  // namespace hurray::convert::detail
