// SPDX-License-Identifier: Apache-2.0
// Internal: the per-block padding of row- and column-major storage
// (per-block-affine.md § Padding; NF4 uses the same rule): the blocked axis
// holds whole blocks, so its stored extent is ceil(S / K) * K.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <variant>

#include "hurray/core/checked_math.hpp"
#include "hurray/core/tensor_descriptor.hpp"

namespace hurray::detail {

/// The padded axis and block size, or axis SIZE_MAX when nothing is padded.
struct BlockPadding {
    size_t axis = SIZE_MAX;
    uint64_t block = 1;
};

/// The padding that per-block affine or NF4 quantization imposes on `d`.
inline BlockPadding block_padding(const TensorDescriptor& d) noexcept {
    if (!d.quantization) {
        return {};
    }
    if (const auto* p = std::get_if<PerBlockAffine>(&d.quantization->scheme)) {
        return {p->axis, std::max<uint64_t>(p->block_size, 1)};
    }
    if (const auto* p = std::get_if<Nf4Quantization>(&d.quantization->scheme)) {
        return {p->axis, std::max<uint64_t>(p->block_size, 1)};
    }
    return {};
}

/// Elements stored by a row- or column-major data buffer: the element count
/// with the blocked axis padded. nullopt for a dynamic dimension or when the
/// count overflows 64 bits (`check_descriptor` rejects both).
inline std::optional<uint64_t> stored_element_count(const TensorDescriptor& d) noexcept {
    if (std::find(d.shape.begin(), d.shape.end(), kDynamicDim) != d.shape.end()) {
        return std::nullopt;
    }
    if (std::find(d.shape.begin(), d.shape.end(), 0) != d.shape.end()) {
        return uint64_t{0};
    }
    const BlockPadding pad = block_padding(d);
    uint64_t n = 1;
    for (size_t k = 0; k < d.shape.size(); ++k) {
        std::optional<uint64_t> dim = d.shape[k];
        if (k == pad.axis) {
            dim = mul_u64(ceil_div(d.shape[k], pad.block), pad.block);
        }
        std::optional<uint64_t> next = dim ? mul_u64(n, *dim) : std::nullopt;
        if (!next) {
            return std::nullopt;
        }
        n = *next;
    }
    return n;
}

}  // namespace hurray::detail
