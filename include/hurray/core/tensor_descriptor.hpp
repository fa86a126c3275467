// SPDX-License-Identifier: Apache-2.0
/// @file
/// `TensorDescriptor`: the in-memory model of a tensor descriptor
/// (docs/spec/metadata.md), with every field and optional section.
#pragma once

#include "hurray/core/export.hpp"
#include <cstdint>
#include <optional>
#include <vector>

#include "hurray/core/buffer_handle.hpp"
#include "hurray/core/composite_member.hpp"
#include "hurray/core/element_type.hpp"
#include "hurray/core/extension_type.hpp"
#include "hurray/core/layout.hpp"
#include "hurray/core/quantization.hpp"
#include "hurray/core/result.hpp"
#include "hurray/core/shape.hpp"
#include "hurray/core/shard.hpp"
#include "hurray/core/small_vector.hpp"
#include "hurray/core/statistics.hpp"

namespace hurray {

/// Buffer tables of up to this many entries are stored inside a
/// `TensorDescriptor` (no heap allocation).
inline constexpr size_t kBufferTableInlineCount = 4;

/// A descriptor's buffer table: a `SmallVector` with the `std::vector` API
/// that holds up to `kBufferTableInlineCount` handles without allocating.
using BufferTable = SmallVector<BufferHandle, kBufferTableInlineCount>;

/// Magic bytes that open every descriptor: ASCII "HRRY".
inline constexpr uint8_t kDescriptorMagic[4] = {0x48, 0x52, 0x52, 0x59};
/// The descriptor major version this library reads and writes.
inline constexpr uint8_t kDescriptorVersionMajor = 1;
/// The descriptor minor version this library writes.
inline constexpr uint8_t kDescriptorVersionMinor = 0;
/// Size of the fixed header.
inline constexpr uint32_t kFixedHeaderSize = 20;
/// Bytes needed to learn a descriptor's length (magic, versions, length).
inline constexpr uint32_t kDescriptorPeekSize = 10;
/// Byte offset of `descriptor_length` (u32) inside a descriptor.
inline constexpr uint32_t kDescriptorLengthOffset = 6;

/// Descriptor flag bits (metadata.md § Flags).
enum DescriptorFlag : uint32_t {
    kHasQuantization = 1U << 0,    ///< Quantization section present.
    kHasShard = 1U << 1,           ///< Shard section present.
    kHasExtensionType = 1U << 2,   ///< Extension type section present.
    kHasStatistics = 1U << 3,      ///< Statistics section present.
    kHasCompositeMember = 1U << 4, ///< Composite member section present.
    kDefinedFlagsMask = 0x1F,      ///< Every defined bit.
};

/// A tensor descriptor: element type, shape, layout, buffer table and the
/// optional sections. The flags field is derived from which optional sections
/// are present, so the model cannot disagree with itself.
///
/// @code
/// hurray::TensorDescriptor d;
/// d.element_type = hurray::ElementType::kFloat32;
/// d.shape = {3, 4};
/// d.buffers = {hurray::BufferHandle{.byte_size = 48}};
/// auto bytes = hurray::encode(d);  // 61 bytes, see metadata.md § Worked Example
/// @endcode
struct HURRAY_CORE_EXPORT TensorDescriptor {
    uint8_t version_major = kDescriptorVersionMajor;    ///< Always 1.
    uint8_t version_minor = kDescriptorVersionMinor;    ///< 0, or newer when decoded from a newer writer.
    ElementType element_type = ElementType::kFloat32;   ///< Storage element type.
    Shape shape{};                                        ///< One size per dimension.
    uint64_t byte_offset = 0;                           ///< Offset of element [0,...,0] in buffer 0.
    LayoutDescriptor layout = RowMajorLayout{};         ///< Memory layout.
    BufferTable buffers;                                ///< Buffer table (at most 255).
    std::optional<QuantizationDescriptor> quantization{}; ///< Quantization section.
    std::optional<ShardDescriptor> shard{};               ///< Shard section.
    std::optional<Statistics> statistics{};               ///< Statistics section.
    std::optional<ExtensionTypeDescriptor> extension_type{};  ///< Extension type section.
    std::optional<CompositeMember> composite_member{};    ///< Composite member section.
    /// Bytes after the known fields of a descriptor written by a newer minor
    /// version; kept so that re-encoding is lossless. Empty for version 1.0.
    std::vector<uint8_t> unknown_trailing_bytes{};

    /// The flags field implied by the optional sections.
    [[nodiscard]] uint32_t flags() const noexcept;
    /// The rank (number of dimensions).
    [[nodiscard]] uint32_t rank() const noexcept { return static_cast<uint32_t>(shape.size()); }
    /// The layout tag byte.
    [[nodiscard]] uint8_t layout_tag() const noexcept { return hurray::layout_tag(layout); }
    /// Bits per stored element: from the extension type section for a private
    /// tag, else the built-in width; 0 when unknown.
    [[nodiscard]] uint32_t element_bits() const noexcept;
    /// Bytes needed to store `count` contiguous elements of this tensor's type.
    [[nodiscard]] Result<uint64_t> element_storage_bytes(uint64_t count) const;

    /// Field-wise equality (bitwise for floating-point fields).
    bool operator==(const TensorDescriptor&) const = default;
};

}  // namespace hurray
