// SPDX-License-Identifier: Apache-2.0
// Internal: what the descriptor encoder, decoder and checker share.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/tensor_descriptor.hpp"

namespace hurray::detail {

/// Byte offsets of every part of an encoded descriptor, computed from the
/// model (the encoding is a pure function of it). `end` is the total length;
/// it is computed in 64 bits so that an oversized model cannot wrap.
struct SectionOffsets {
    uint64_t shape = kFixedHeaderSize;
    uint64_t byte_offset = 0;
    uint64_t layout = 0;
    uint64_t buffer_table = 0;
    uint64_t quantization = 0;  ///< The `quantization_length` field.
    uint64_t shard = 0;
    uint64_t statistics = 0;
    uint64_t extension_type = 0;
    uint64_t composite_member = 0;
    uint64_t trailing = 0;
    uint64_t end = 0;

    /// Offset of buffer handle `i`.
    [[nodiscard]] uint64_t buffer(uint64_t i) const noexcept { return buffer_table + 1 + 16 * i; }
    /// Offset of the quantization payload (after its length prefix).
    [[nodiscard]] uint64_t quant_payload() const noexcept { return quantization + 4; }
};

/// Encoded size of the layout-specific fields.
uint64_t layout_fields_size(const LayoutDescriptor& layout) noexcept;

/// Offsets of every section of `d`'s encoding.
SectionOffsets section_offsets(const TensorDescriptor& d) noexcept;

/// `check_descriptor`, with error offsets taken from `off`: the fast check
/// below, then (unless it accepted) every rule (`check_descriptor_full`).
Status check_descriptor_at(const TensorDescriptor& d, const DecodeOptions& options,
                           const SectionOffsets& off);

/// Every descriptor-level rule, in the order that decides which error is
/// reported. The core tests call it on hurray::core's objects (not exported).
Status check_descriptor_full(const TensorDescriptor& d, const DecodeOptions& options,
                             const SectionOffsets& off);

/// The common case in one pass, without building anything: true only when
/// `d` has no optional section but (optionally) a per-block affine
/// quantization with its scales in buffer 1 and zero points (if any) in
/// buffer 2, no trailing bytes, a row- or column-major layout (row-major for
/// a scalar), an assigned (Tier 1 or 2) element type, valid buffer handles
/// on one device, no dynamic dimension, a data buffer large enough for
/// `byte_offset` plus the data and parameter buffers of the exact size. Everything it accepts,
/// `check_descriptor_full` accepts too (the differential tests hold it to
/// that); false says nothing (the full check decides). Allocates nothing.
bool plain_dense_valid(const TensorDescriptor& d) noexcept;

/// `storage_bytes_for_bits` as a value: the bytes that `count` elements of `bits`
/// bits take (1, 2, 4, 6 or a multiple of 8), nullopt for another width or on overflow.
std::optional<uint64_t> plain_storage_bytes(uint32_t bits, uint64_t count) noexcept;

/// `decode` without its fast path for plain dense descriptors: the general
/// parser, then `check_descriptor_at`. For the differential tests.
Result<TensorDescriptor> decode_general(std::span<const uint8_t> bytes, const DecodeOptions& options);

}  // namespace hurray::detail
