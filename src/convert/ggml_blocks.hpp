// SPDX-License-Identifier: Apache-2.0
// Internal: GGML block types in Hurray's terms (src/convert/ggml_*.cpp): the descriptors
// of GGUF tensors, and the block (de-)interleaving between GGUF's Q8_0 / Q4_0 blocks and
// Hurray's per-block affine buffers (data, scales).
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "hurray/convert/gguf.hpp"
#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"

namespace hurray::convert::detail {

/// How a GGUF tensor is presented as a Hurray tensor.
enum class GgmlPresentation : uint8_t {
    kDense,   ///< The bytes as they are: a dense row-major tensor.
    kQ8_0,    ///< Per-block affine int8, block 32 (buffer 0 quants, buffer 1 float16 scales).
    kQ4_0,    ///< Per-block affine int4, block 32 (buffer 0 packed nibbles, buffer 1 scales).
    kBlocks,  ///< The blocks as they are, under the private scheme kGgmlBlocksTag.
};

/// The Hurray element type of a plain (one value per block) GGML type, nullopt otherwise.
std::optional<ElementType> ggml_dense_element_type(uint32_t type) noexcept;
/// The plain GGML type of a Hurray element type, nullopt when GGUF has none.
std::optional<uint32_t> ggml_type_of_element(ElementType type) noexcept;

/// The descriptor of a tensor of `shape` (row-major, Hurray order) presented as
/// `presentation` of GGML type `type`.
Result<TensorDescriptor> ggml_descriptor(GgmlPresentation presentation, uint32_t type,
                                         const Shape& shape);

/// Whether every block of a Q8_0 / Q4_0 tensor (`blocks`, whole blocks of `bytes_per_block`)
/// has a finite, non-zero float16 scale, as per-block affine requires.
bool ggml_scales_valid(std::span<const uint8_t> blocks, uint32_t bytes_per_block) noexcept;

/// Bytes [offset, offset + out.size()) of buffer `buffer` (0: quants, 1: scales) of the
/// per-block affine presentation of the Q8_0 / Q4_0 `blocks`; the range must lie inside
/// the buffer (checked by the caller).
void ggml_deinterleave(GgmlPresentation presentation, std::span<const uint8_t> blocks,
                       size_t buffer, uint64_t offset, std::span<uint8_t> out) noexcept;

/// The GGUF blocks of `quants` and `scales` (whole blocks: 32 / 16 quant bytes and 2 scale
/// bytes each) into `out` (their block bytes).
void ggml_interleave(GgmlPresentation presentation, std::span<const uint8_t> quants,
                     std::span<const uint8_t> scales, std::span<uint8_t> out) noexcept;

}  // namespace hurray::convert::detail
