// SPDX-License-Identifier: Apache-2.0
// The rules of libhurray's GGML blocks scheme (hurray/core/ggml_blocks.hpp) in one
// place: the payload parsed and checked field by field, and the bytes the blocks of a
// shape take. make_ggml_blocks, ggml_blocks_type, the descriptor check and dequantize
// all use these, so that they cannot disagree.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "hurray/core/quantization.hpp"
#include "hurray/core/shape.hpp"
#include "hurray/core/ggml_blocks.hpp"
#include "hurray/core/result.hpp"

namespace hurray::detail {

/// A GGML blocks payload that passed parse_ggml_blocks: its type and that type's geometry.
struct GgmlBlocks {
    uint32_t type = 0;
    GgmlTypeInfo info;
};

/// Whether `o`'s payload starts with the "GGML" magic: what tells libhurray's GGML
/// blocks from another producer's use of private tag 0xF0.
bool has_ggml_magic(const OpaqueQuantization& o) noexcept;

/// Parses the quantization section `o` of tag kGgmlBlocksScheme as GGML blocks version 1:
/// version, flags, a 16-byte payload with the "GGML" magic, a type this library knows and
/// that type's own geometry. An error names the field; its offset is `q` (the scheme
/// tag's offset in the descriptor) plus the field's.
Result<GgmlBlocks> parse_ggml_blocks(const OpaqueQuantization& o, uint64_t q);

/// Whether `shape`'s last axis is a whole number of `info` blocks (false for rank 0 or a
/// dynamic last axis).
bool ggml_whole_blocks(const GgmlTypeInfo& info, const Shape& shape) noexcept;

/// "the last axis must be a whole number of q4_K blocks (256 values)".
std::string ggml_whole_blocks_rule(const GgmlTypeInfo& info);

/// Bytes of the blocks of `values` values (a multiple of `info.elements`), nullopt when
/// they overflow 64 bits.
std::optional<uint64_t> ggml_blocks_bytes(const GgmlTypeInfo& info, uint64_t values) noexcept;

}  // namespace hurray::detail
