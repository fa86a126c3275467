// SPDX-License-Identifier: Apache-2.0
// Internal: facts about quantization storage shared by the dequantizer, the
// quantizers and the descriptor and data checks: the value range of the affine
// storage types (quantization/per-tensor-affine.md § Valid Storage Types).
#pragma once

#include <cstdint>
#include <optional>

#include "hurray/core/element_type.hpp"

namespace hurray::detail {

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
