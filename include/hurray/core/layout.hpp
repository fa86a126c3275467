// SPDX-License-Identifier: Apache-2.0
/// @file
/// Layout descriptors (docs/spec/memory-layout.md, docs/spec/layouts/*.md):
/// one type per named layout, and `LayoutDescriptor`, the variant of them all.
#pragma once

#include "hurray/core/export.hpp"
#include <cstdint>
#include <string_view>
#include <variant>
#include <vector>

namespace hurray {

/// Assigned layout tags.
enum class LayoutTag : uint8_t {
    kRowMajor = 0x01,     ///< C order.
    kColumnMajor = 0x02,  ///< Fortran order.
    kStrided = 0x03,      ///< Explicit per-dimension strides.
    kTiled = 0x04,        ///< Regular tiles, recursively nestable.
    kMorton = 0x05,       ///< Z-order curve.
    kCoo = 0x06,          ///< Coordinate list sparse.
    kCsr = 0x07,          ///< Compressed sparse row.
    kCsc = 0x08,          ///< Compressed sparse column.
    kCsf = 0x09,          ///< Compressed sparse fiber.
    kBlockPaged = 0x0A,   ///< Paged KV cache (indirect).
    kComposite = 0x0B,    ///< Composite head (virtual).
    kHilbert = 0x40,      ///< Hilbert curve (Tier 2).
};

/// The addressing model of a layout (memory-layout.md § Layout Taxonomy).
enum class LayoutKind : uint8_t {
    kDense,      ///< Affine or curve addressing, one data buffer.
    kSparse,     ///< Only stored elements; index buffers.
    kIndirect,   ///< Every element exists, resolved through a table.
    kVirtual,    ///< Owns no data (composite head).
    kExtension,  ///< Implementation-private (0xF0-0xFE).
};

/// Row-major layout: no fields.
struct HURRAY_CORE_EXPORT RowMajorLayout {
    bool operator==(const RowMajorLayout&) const = default;
};

/// Column-major layout: no fields.
struct HURRAY_CORE_EXPORT ColumnMajorLayout {
    bool operator==(const ColumnMajorLayout&) const = default;
};

/// Strided layout: one stride per dimension, in logical elements; negative
/// and zero strides allowed.
struct HURRAY_CORE_EXPORT StridedLayout {
    std::vector<int64_t> strides{};  ///< `int64[rank]`.
    bool operator==(const StridedLayout&) const = default;
};

/// One level of a tiled layout.
struct HURRAY_CORE_EXPORT TiledLevel {
    std::vector<uint64_t> tile_shape{};                ///< `uint64[rank]`, each > 0.
    LayoutTag outer_layout = LayoutTag::kRowMajor;   ///< Tile-grid order: row/column-major or strided.
    LayoutTag inner_layout = LayoutTag::kRowMajor;   ///< In-tile order: row/column-major, strided or tiled.
    std::vector<int64_t> outer_strides{};              ///< In tiles; present iff outer is strided.
    std::vector<int64_t> inner_strides{};              ///< In elements; present iff inner is strided.
    bool operator==(const TiledLevel&) const = default;
};

/// Tiled layout. `levels[0]` is the outermost tiling; when a level's
/// `inner_layout` is `kTiled`, the next level describes the tiling inside each
/// of its tiles. Only the last level may have a non-tiled inner layout.
///
/// @code
/// hurray::TiledLayout t{{{.tile_shape = {2, 4}}}};  // 2x4 tiles, row-major both ways
/// @endcode
struct HURRAY_CORE_EXPORT TiledLayout {
    std::vector<TiledLevel> levels;  ///< At least one level.
    bool operator==(const TiledLayout&) const = default;
};

/// Morton (Z-order) layout: bits per dimension.
struct HURRAY_CORE_EXPORT MortonLayout {
    std::vector<uint32_t> morton_bits{};  ///< `uint32[rank]`, each > 0.
    bool operator==(const MortonLayout&) const = default;
};

/// COO sparse layout.
struct HURRAY_CORE_EXPORT CooLayout {
    uint64_t nnz = 0;        ///< Stored elements.
    bool is_sorted = false;  ///< Lexicographically sorted, dimension 0 major.
    bool operator==(const CooLayout&) const = default;
};

/// CSR sparse layout (rank 2).
struct HURRAY_CORE_EXPORT CsrLayout {
    uint64_t nnz = 0;  ///< Stored elements.
    bool operator==(const CsrLayout&) const = default;
};

/// CSC sparse layout (rank 2).
struct HURRAY_CORE_EXPORT CscLayout {
    uint64_t nnz = 0;  ///< Stored elements.
    bool operator==(const CscLayout&) const = default;
};

/// CSF sparse layout (rank >= 3).
struct HURRAY_CORE_EXPORT CsfLayout {
    uint64_t nnz = 0;                 ///< Stored elements.
    std::vector<uint32_t> mode_order{}; ///< Permutation of 0..rank-1; level L stores dimension mode_order[L].
    bool operator==(const CsfLayout&) const = default;
};

/// Role of a block-paged tensor in a KV cache.
enum class KvRole : uint8_t {
    kKey = 0x00,    ///< Keys.
    kValue = 0x01,  ///< Values.
    kFused = 0x02,  ///< Fused, or not a KV tensor.
};

/// Element type of the block table and sequence pointers.
enum class BlockTableIndexType : uint8_t {
    kUInt32 = 0x00,  ///< uint32 entries.
    kUInt64 = 0x01,  ///< uint64 entries.
};

/// `layer_index` value meaning "not layer-scoped".
inline constexpr uint32_t kNoLayerIndex = 0xFFFFFFFF;

/// Block-paged layout (rank 3: `[total_tokens, num_heads, head_dim]`).
/// Wire order: `page_size u32 | num_pages u64 | paged_axis u32 | num_seqs u32 |
/// kv_role u8 | layer_index u32 | block_table_index_type u8 | reserved u8[6]`.
struct HURRAY_CORE_EXPORT BlockPagedLayout {
    uint32_t page_size = 16;                                    ///< Tokens per page, >= 1.
    uint64_t num_pages = 0;                                     ///< Pages in the pool.
    uint32_t paged_axis = 0;                                    ///< Must be 0.
    uint32_t num_seqs = 0;                                      ///< Sequences in the batch.
    KvRole kv_role = KvRole::kKey;                              ///< Key, value or fused.
    uint32_t layer_index = kNoLayerIndex;                       ///< Layer, or kNoLayerIndex.
    BlockTableIndexType index_type = BlockTableIndexType::kUInt32;  ///< Block table entry type.
    bool operator==(const BlockPagedLayout&) const = default;
};

/// How a composite's members combine.
enum class CompositionRule : uint8_t {
    kPartition = 0x01,  ///< Exact, non-overlapping cover of the head's index space.
    kOverlay = 0x02,    ///< A base plus corrections.
    kGroup = 0x03,      ///< Independent tensors under one identity.
};

/// How overlay corrections apply.
enum class CombineOp : uint8_t {
    kNone = 0x00,     ///< Partition and group.
    kReplace = 0x01,  ///< Last wins.
    kAdd = 0x02,      ///< Corrections are added.
};

/// `member_count` value reserved for open composites (rejected in strict mode).
inline constexpr uint32_t kOpenCompositeMemberCount = 0xFFFFFFFF;

/// Composite head layout (virtual: the head owns no buffers). A private
/// composition rule (0xF0-0xFE) is carried as its raw byte.
struct HURRAY_CORE_EXPORT CompositeLayout {
    CompositionRule rule = CompositionRule::kGroup;  ///< Composition rule.
    CombineOp combine_op = CombineOp::kNone;         ///< Overlay only.
    uint32_t member_count = 0;                       ///< Members that follow the head.
    bool operator==(const CompositeLayout&) const = default;
};

/// Hilbert curve layout (Tier 2).
struct HURRAY_CORE_EXPORT HilbertLayout {
    uint32_t hilbert_order = 1;  ///< Each dimension is 2^order.
    uint32_t hilbert_rank = 2;   ///< Must equal the tensor rank, >= 2.
    bool operator==(const HilbertLayout&) const = default;
};

/// Implementation-private layout (tags 0xF0-0xFE): an id and opaque bytes.
struct HURRAY_CORE_EXPORT ExtensionLayout {
    uint8_t tag = 0xF0;           ///< Layout tag, 0xF0-0xFE.
    uint64_t layout_id = 0;       ///< Implementation-defined id.
    std::vector<uint8_t> data{};    ///< Opaque metadata.
    bool operator==(const ExtensionLayout&) const = default;
};

/// Any layout. The alternative determines the layout tag.
using LayoutDescriptor =
    std::variant<RowMajorLayout, ColumnMajorLayout, StridedLayout, TiledLayout, MortonLayout,
                 CooLayout, CsrLayout, CscLayout, CsfLayout, BlockPagedLayout, CompositeLayout,
                 HilbertLayout, ExtensionLayout>;

/// The wire tag of a layout.
HURRAY_CORE_EXPORT uint8_t layout_tag(const LayoutDescriptor& layout) noexcept;

/// The addressing model of a layout.
HURRAY_CORE_EXPORT LayoutKind layout_kind(const LayoutDescriptor& layout) noexcept;

/// The spec's name of a layout tag (`"row_major"`, `"csr"`, ...); `"extension"`
/// for 0xF0-0xFE, empty for an unassigned tag.
HURRAY_CORE_EXPORT std::string_view layout_name(uint8_t tag) noexcept;

/// How many buffers the layout itself uses (before quantization-parameter
/// buffers): 1 for dense, 2 for COO, 3 for CSR/CSC and block-paged,
/// `2 * rank + 1` for CSF, 0 for a composite head, 1 for extension layouts.
HURRAY_CORE_EXPORT uint32_t layout_buffer_count(const LayoutDescriptor& layout, uint32_t rank) noexcept;

}  // namespace hurray
