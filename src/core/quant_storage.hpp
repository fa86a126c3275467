// SPDX-License-Identifier: Apache-2.0
// Internal: facts about quantization storage shared by the dequantizer, the
// quantizers and the descriptor and data checks: the value range of the affine
// storage types (quantization/per-tensor-affine.md § Valid Storage Types).
#pragma once

#include <cstdint>
#include <optional>

#include "hurray/core/element_type.hpp"
#include "hurray/core/quantization.hpp"

namespace hurray::detail {

/// A per-block affine scheme in this library's buffer convention (the
/// builder's and the quantizer's): scales of `scale_type` in buffer 1 and,
/// unless `symmetric`, zero points in buffer 2.
inline PerBlockAffine per_block_affine(uint32_t axis, uint32_t block_size, ElementType scale_type, bool symmetric) {
    PerBlockAffine s;
    s.axis = axis;
    s.block_size = block_size;
    s.scale_buffer_index = 1;
    if (!symmetric) {
        s.zero_point_buffer_index = 2;
    }
    s.scale_type = scale_type;
    return s;
}

/// The inclusive value range of an integer storage type.
struct CodeRange {
    int64_t min = 0;  ///< Smallest value.
    int64_t max = 0;  ///< Largest value.
};

/// The value range of an affine storage type (int8 ... uint2), which codes
/// and zero points must lie in; nullopt for any other type.
inline std::optional<CodeRange> affine_code_range(ElementType t) noexcept {
    using E = ElementType;
    switch (t) {
        case E::kInt8: return CodeRange{-128, 127};
        case E::kUInt8: return CodeRange{0, 255};
        case E::kInt16: return CodeRange{-32768, 32767};
        case E::kUInt16: return CodeRange{0, 65535};
        case E::kInt32: return CodeRange{INT32_MIN, INT32_MAX};
        case E::kUInt32: return CodeRange{0, UINT32_MAX};
        case E::kInt4: return CodeRange{-8, 7};
        case E::kUInt4: return CodeRange{0, 15};
        case E::kInt2: return CodeRange{-2, 1};
        case E::kUInt2: return CodeRange{0, 3};
        default: break;
    }
    return std::nullopt;
}

/// Whether per-block affine accepts `t` as storage (8, 4 and 2-bit integers).
inline bool per_block_storage(ElementType t) noexcept {
    using E = ElementType;
    return t == E::kInt8 || t == E::kUInt8 || t == E::kInt4 || t == E::kUInt4 || t == E::kInt2 ||
           t == E::kUInt2;
}

}  // namespace hurray::detail
