// SPDX-License-Identifier: Apache-2.0
// The builders (builder.hpp) and required_buffer_sizes: buffer sizes implied
// by shape, type, layout and quantization (memory-layout.md, layouts/*.md,
// quantization/*.md).
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "descriptor_test_support.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/core/descriptor_codec.hpp"

namespace {

using namespace hurray;       // NOLINT(google-build-using-namespace): test brevity
using namespace hurray_desc_test;  // NOLINT(google-build-using-namespace)
using E = ErrorCode;
using Reqs = std::vector<BufferRequirement>;

BufferRequirement at_least(uint64_t n) { return BufferRequirement{n, false, false}; }
BufferRequirement exactly(uint64_t n) { return BufferRequirement{n, true, false}; }
BufferRequirement from_data(uint64_t lower_bound) { return BufferRequirement{lower_bound, false, true}; }
BufferRequirement unknown() { return BufferRequirement{std::nullopt, false, false}; }

std::vector<uint64_t> sizes_of(const TensorDescriptor& d) {
    std::vector<uint64_t> v;
    for (const BufferHandle& h : d.buffers) {
        v.push_back(h.byte_size);
    }
    return v;
}

Reqs required(const TensorDescriptor& d) {
    auto r = required_buffer_sizes(d);
    if (!r.ok()) {
        ADD_FAILURE() << r.error().to_string();
        return {};
    }
    return *r;
}

TensorDescriptor with(ElementType t, Shape shape, LayoutDescriptor layout) {
    TensorDescriptor d;
    d.element_type = t;
    d.shape = std::move(shape);
    d.layout = std::move(layout);
    return d;
}

// make_dense: one row-major buffer of exactly the element bytes, placement applied.
TEST(Builder, MakeDenseSizesOneRowMajorBuffer) {
    const TensorDescriptor d = must(make_dense(ElementType::kFloat16, {1, 32, 128, 128}));
    EXPECT_TRUE(std::holds_alternative<RowMajorLayout>(d.layout));
    EXPECT_EQ(sizes_of(d), (std::vector<uint64_t>{2U * 32 * 128 * 128}));
    EXPECT_EQ(d.buffers[0].alignment, kMinBufferAlignment);
    EXPECT_EQ(d.byte_offset, 0U);
    EXPECT_EQ(d.flags(), 0U);
    EXPECT_TRUE(RoundTrips(must_encode(d)));

    const BufferPlacement gpu{.alignment = 4096,
                              .device_tag = DeviceTag::kCuda,
                              .sync_mode = SyncMode::kEvent,
                              .memory_class = MemoryClass::kUnified};
    const TensorDescriptor g = must(make_dense(ElementType::kBool, {3, 5}, gpu));
    ASSERT_EQ(g.buffers.size(), 1U);
    EXPECT_EQ(g.buffers[0], (BufferHandle{2, 4096, DeviceTag::kCuda, SyncMode::kEvent, MemoryClass::kUnified}));
    EXPECT_TRUE(RoundTrips(must_encode(g)));
}

// The builders check what they build: invalid requests fail with the checker's code.
TEST(Builder, MakeDenseRejectsWhatTheCheckerRejects) {
    EXPECT_TRUE(RejectedWith(make_dense(ElementType::kFloat32, Shape(65, 1)), E::kRankTooLarge));
    EXPECT_TRUE(RejectedWith(make_dense(static_cast<ElementType>(0x00), {2}), E::kInvalidElementType));
    // A reserved type cannot be sized (the sizing pass is permissive, so the
    // failure is "size unknown" rather than the strict kUnknownElementType).
    EXPECT_FALSE(make_dense(static_cast<ElementType>(0x47), {2}).ok());
    EXPECT_TRUE(RejectedWith(make_dense(ElementType::kFloat32, {2}, BufferPlacement{.alignment = 32}),
                             E::kInvalidBufferHandle));
    EXPECT_TRUE(RejectedWith(make_dense(ElementType::kFloat32, {2}, BufferPlacement{.sync_mode = SyncMode::kEvent}),
                             E::kInvalidBufferHandle));
    EXPECT_TRUE(RejectedWith(make_dense(ElementType::kFloat32, {UINT64_MAX / 2, 4}), E::kSizeOverflow));
}

// A dynamic dimension leaves the data size to the caller (data-model.md § Dynamic Dimensions).
TEST(Builder, DynamicDimensionNeedsAnExplicitSize) {
    EXPECT_TRUE(RejectedWith(make_dense(ElementType::kFloat32, {kDynamicDim, 4}), E::kInvalidArgument));
    TensorDescriptor d = with(ElementType::kFloat32, {kDynamicDim, 4}, RowMajorLayout{});
    EXPECT_EQ(required(d), (Reqs{unknown()}));
    const uint64_t size[] = {4096};
    const TensorDescriptor sized = must(size_buffers(d, {}, size));
    EXPECT_EQ(sizes_of(sized), (std::vector<uint64_t>{4096}));
    EXPECT_TRUE(RoundTrips(must_encode(sized)));
}

// make_coo: values (nnz elements) and indices (nnz * rank uint64); layouts/coo.md.
TEST(Builder, MakeCooSizesValuesAndIndices) {
    const TensorDescriptor d = must(make_coo(ElementType::kFloat32, {4, 5, 6}, 3, true));
    EXPECT_EQ(std::get<CooLayout>(d.layout), (CooLayout{3, true}));
    EXPECT_EQ(sizes_of(d), (std::vector<uint64_t>{12, 3 * 3 * 8}));
    EXPECT_TRUE(RoundTrips(must_encode(d)));
    const TensorDescriptor u = must(make_coo(ElementType::kBool, {100}, 9, false));
    EXPECT_FALSE(std::get<CooLayout>(u.layout).is_sorted);
    EXPECT_EQ(sizes_of(u), (std::vector<uint64_t>{2, 72}));
    EXPECT_TRUE(RejectedWith(make_coo(ElementType::kFloat32, {}, 1, true), E::kRankNotAllowed));
}

// make_csr: values, col_indices (nnz uint64), row_ptr (rows + 1 uint64); layouts/csr.md.
TEST(Builder, MakeCsrSizesValuesColumnsAndRowPointers) {
    const TensorDescriptor d = must(make_csr(ElementType::kFloat32, 3, 3, 2));
    EXPECT_EQ(d.shape, (Shape{3, 3}));
    EXPECT_EQ(sizes_of(d), (std::vector<uint64_t>{8, 16, 32}));
    const TensorDescriptor e = must(make_csr(ElementType::kFloat64, 4, 5, 0));
    EXPECT_EQ(sizes_of(e), (std::vector<uint64_t>{0, 0, 40}));
    EXPECT_TRUE(RoundTrips(must_encode(e)));
}

// make_per_block_quantized: data (padded to whole blocks), scales of the scale
// type, int32 zero points unless symmetric; per-block-affine.md.
TEST(Builder, MakePerBlockQuantizedAsymmetricHasThreeBuffers) {
    const TensorDescriptor d = must(make_per_block_quantized(ElementType::kInt4, {4096, 4096}, 1, 32,
                                                              ElementType::kFloat16, false));
    const auto& q = std::get<PerBlockAffine>(d.quantization->scheme);
    EXPECT_EQ(q.axis, 1U);
    EXPECT_EQ(q.block_size, 32U);
    EXPECT_EQ(q.scale_buffer_index, 1U);
    EXPECT_EQ(q.zero_point_buffer_index, std::optional<uint32_t>(2));
    EXPECT_EQ(q.scale_type, ElementType::kFloat16);
    const uint64_t blocks = 4096U * (4096 / 32);
    EXPECT_EQ(sizes_of(d), (std::vector<uint64_t>{4096U * 4096 / 2, blocks * 2, blocks * 4}));
    EXPECT_TRUE(RoundTrips(must_encode(d)));

    const TensorDescriptor s = must(make_per_block_quantized(ElementType::kUInt8, {64, 64}, 0, 16,
                                                              ElementType::kBFloat16, true));
    EXPECT_FALSE(std::get<PerBlockAffine>(s.quantization->scheme).zero_point_buffer_index.has_value());
    EXPECT_EQ(sizes_of(s), (std::vector<uint64_t>{4096, 4 * 64 * 2}));
    EXPECT_TRUE(RoundTrips(must_encode(s)));
}

// per-block-affine.md § Padding: int4 [3,5], block 4 on axis 1: the axis pads
// to 8, so data holds 3 * 8 int4 = 12 bytes; 3 * 2 = 6 blocks.
TEST(Builder, PerBlockPartialTrailingBlockIsPadded) {
    const TensorDescriptor d =
        must(make_per_block_quantized(ElementType::kInt4, {3, 5}, 1, 4, ElementType::kFloat16, false));
    EXPECT_EQ(sizes_of(d), (std::vector<uint64_t>{12, 6 * 2, 6 * 4}));
    EXPECT_EQ(required(d), (Reqs{at_least(12), exactly(12), exactly(24)}));
    const TensorDescriptor f =
        must(make_per_block_quantized(ElementType::kInt8, {3, 5}, 0, 2, ElementType::kFloat32, true));
    // Axis 0 pads 3 -> 4 rows: 20 int8; 2 * 5 = 10 float32 scales.
    EXPECT_EQ(sizes_of(f), (std::vector<uint64_t>{20, 40}));
    // An empty quantized axis: no blocks, empty parameter buffers (per-block-affine.md).
    const TensorDescriptor z = must(make_per_block_quantized(ElementType::kInt8, {3, 0}, 1, 4));
    EXPECT_EQ(sizes_of(z), (std::vector<uint64_t>{0, 0}));
    EXPECT_TRUE(RoundTrips(must_encode(z)));
}

// Invalid quantization requests fail like the checker.
TEST(Builder, MakePerBlockQuantizedRejectsInvalidParameters) {
    EXPECT_TRUE(RejectedWith(make_per_block_quantized(ElementType::kInt4, {8, 8}, 1, 3), E::kInvalidQuantization));
    EXPECT_TRUE(RejectedWith(make_per_block_quantized(ElementType::kInt4, {8, 8}, 2, 4), E::kInvalidQuantization));
    EXPECT_TRUE(RejectedWith(make_per_block_quantized(ElementType::kFloat32, {8, 8}, 1, 4),
                             E::kInvalidQuantizationStorageType));
    EXPECT_TRUE(RejectedWith(make_per_block_quantized(ElementType::kInt4, {8, 8}, 1, 4, ElementType::kInt8),
                             E::kInvalidQuantization));
}

// make_composite_head: no buffers, the rule and its combine_op checked (layouts/composite.md).
TEST(Builder, MakeCompositeHead) {
    const TensorDescriptor h =
        must(make_composite_head(ElementType::kFloat32, {8, 8}, CompositionRule::kOverlay, 3, CombineOp::kAdd));
    EXPECT_TRUE(h.buffers.empty());
    EXPECT_EQ(std::get<CompositeLayout>(h.layout), (CompositeLayout{CompositionRule::kOverlay, CombineOp::kAdd, 3}));
    EXPECT_TRUE(RoundTrips(must_encode(h)));
    EXPECT_TRUE(RejectedWith(make_composite_head(ElementType::kFloat32, {8, 8}, CompositionRule::kOverlay, 3),
                             E::kInvalidComposite));
    EXPECT_TRUE(RejectedWith(make_composite_head(ElementType::kFloat32, {8, 8}, CompositionRule::kGroup, 3,
                                                 CombineOp::kReplace),
                             E::kInvalidComposite));
}

// layouts/csf.md § Buffer Size: pos_0 is 16 bytes, the leaf crd nnz * 8; the
// inner levels depend on the data and come from the caller, in buffer order.
TEST(Builder, SizeBuffersTakesDataDependentSizesForCsf) {
    const TensorDescriptor d = with(ElementType::kFloat32, {2, 3, 4}, CsfLayout{5, {0, 1, 2}});
    EXPECT_EQ(required(d), (Reqs{at_least(20), at_least(16), from_data(8), from_data(16), from_data(8),
                                 from_data(16), at_least(40)}));
    const uint64_t dd[] = {16, 24, 24, 32};
    const TensorDescriptor sized = must(size_buffers(d, {}, dd));
    EXPECT_EQ(sizes_of(sized), (std::vector<uint64_t>{20, 16, 16, 24, 24, 32, 40}));
    EXPECT_TRUE(RoundTrips(must_encode(sized)));

    const uint64_t too_few[] = {16, 24, 24};
    EXPECT_TRUE(RejectedWith(size_buffers(d, {}, too_few), E::kInvalidArgument));
    const uint64_t too_many[] = {16, 24, 24, 32, 8};
    EXPECT_TRUE(RejectedWith(size_buffers(d, {}, too_many), E::kInvalidArgument));
    EXPECT_TRUE(RejectedWith(size_buffers(d), E::kInvalidArgument));

    // nnz 0 (csf.md § Storage Invariants): empty values and leaf, pos_L = [0] for L >= 1.
    const TensorDescriptor e = with(ElementType::kFloat32, {2, 3, 4}, CsfLayout{0, {2, 1, 0}});
    EXPECT_EQ(required(e), (Reqs{at_least(0), at_least(16), from_data(0), from_data(8), from_data(0),
                                 from_data(8), at_least(0)}));
}

// layouts/block-paged.md § Buffer Table: pool, block table (data), seq_ptr.
TEST(Builder, SizeBuffersTakesTheBlockTableSizeForBlockPaged) {
    TensorDescriptor d = with(ElementType::kFloat16, {32, 2, 4},
                              BlockPagedLayout{.page_size = 16, .num_pages = 4, .num_seqs = 2});
    EXPECT_EQ(required(d), (Reqs{at_least(4 * 16 * 2 * 4 * 2), from_data(0), at_least(3 * 4)}));
    const uint64_t table[] = {16};
    EXPECT_EQ(sizes_of(must(size_buffers(d, {}, table))), (std::vector<uint64_t>{1024, 16, 12}));
    EXPECT_TRUE(RejectedWith(size_buffers(d), E::kInvalidArgument));
    const uint64_t two[] = {16, 16};
    EXPECT_TRUE(RejectedWith(size_buffers(d, {}, two), E::kInvalidArgument));

    std::get<BlockPagedLayout>(d.layout).index_type = BlockTableIndexType::kUInt64;
    EXPECT_EQ(required(d)[2], at_least(3 * 8));
}

// block-paged.md § Quantization Compatibility: per-block blocks are the pages
// (block_size == page_size), so a batch shorter than one page is valid.
TEST(Builder, BlockPagedPerBlockQuantizationWithFewerTokensThanAPage) {
    TensorDescriptor d = with(ElementType::kInt8, {5, 2, 4},
                              BlockPagedLayout{.page_size = 16, .num_pages = 2, .num_seqs = 1});
    d.quantization = QuantizationDescriptor{PerBlockAffine{.axis = 0, .block_size = 16, .scale_buffer_index = 3,
                                                           .scale_type = ElementType::kFloat32}};
    // Scales per page slot: num_pages * page_size entries.
    EXPECT_EQ(required(d)[3], exactly(2 * 16 * 4));
    const uint64_t table[] = {4};
    const TensorDescriptor sized = must(size_buffers(d, {}, table));
    EXPECT_TRUE(check_descriptor(sized).ok());
}

// memory-layout.md and layouts/*.md: the data buffer of every dense layout.
TEST(Builder, RequiredBufferSizesOfDenseLayouts) {
    EXPECT_EQ(required(with(ElementType::kFloat32, {3, 4}, RowMajorLayout{})), (Reqs{at_least(48)}));
    EXPECT_EQ(required(with(ElementType::kFloat32, {3, 4}, ColumnMajorLayout{})), (Reqs{at_least(48)}));
    EXPECT_EQ(required(with(ElementType::kFloat64, {}, RowMajorLayout{})), (Reqs{at_least(8)}));
    EXPECT_EQ(required(with(ElementType::kFloat32, {3, 0, 5}, RowMajorLayout{})), (Reqs{at_least(0)}));
    // Strided: the span the strides address; broadcast (zero) strides need one element.
    EXPECT_EQ(required(with(ElementType::kFloat32, {3, 4}, StridedLayout{{8, 1}})), (Reqs{at_least(80)}));
    EXPECT_EQ(required(with(ElementType::kFloat32, {3, 4}, StridedLayout{{0, 0}})), (Reqs{at_least(4)}));
    // Tiled: full tiles (2 x 3 tiles of 2x2 over [3,5]).
    EXPECT_EQ(required(with(ElementType::kFloat32, {3, 5}, TiledLayout{{TiledLevel{.tile_shape = {2, 2}}}})),
              (Reqs{at_least(96)}));
    // Morton and Hilbert: 2^(sum of bits) and 2^(rank * order) elements.
    EXPECT_EQ(required(with(ElementType::kFloat32, {3, 3}, MortonLayout{{2, 2}})), (Reqs{at_least(64)}));
    EXPECT_EQ(required(with(ElementType::kInt8, {5, 2}, MortonLayout{{3, 1}})), (Reqs{at_least(16)}));
    EXPECT_EQ(required(with(ElementType::kFloat32, {4, 4}, HilbertLayout{2, 2})), (Reqs{at_least(64)}));
}

// layouts/strided.md: negative strides reach below element [0,0]; the buffer
// covers byte_offset plus the part above it.
TEST(Builder, RequiredBufferSizesWithNegativeStrides) {
    TensorDescriptor d = with(ElementType::kInt8, {4, 4}, StridedLayout{{-4, 1}});
    d.byte_offset = 12;
    EXPECT_EQ(required(d), (Reqs{at_least(16)}));
    EXPECT_EQ(sizes_of(must(size_buffers(d))), (std::vector<uint64_t>{16}));
    // Reversed in both dimensions: offsets -15..0.
    TensorDescriptor r = with(ElementType::kFloat32, {4, 4}, StridedLayout{{-4, -1}});
    r.byte_offset = 60;
    EXPECT_EQ(required(r), (Reqs{at_least(64)}));
    EXPECT_TRUE(RoundTrips(must_encode(must(size_buffers(r)))));
}

// layouts/tiled.md: nested and strided tilings address their full span.
TEST(Builder, RequiredBufferSizesOfNestedAndStridedTiles) {
    TiledLayout nested;
    nested.levels.push_back(TiledLevel{.tile_shape = {4, 4}, .inner_layout = LayoutTag::kTiled});
    nested.levels.push_back(TiledLevel{.tile_shape = {2, 2}});
    // [6,6] in 4x4 tiles: 2x2 tiles of 16 elements = 64.
    EXPECT_EQ(required(with(ElementType::kUInt8, {6, 6}, nested)), (Reqs{at_least(64)}));

    TiledLayout strided_outer{{TiledLevel{.tile_shape = {2, 2}, .outer_layout = LayoutTag::kStrided,
                                          .outer_strides = {1, 2}}}};
    // Grid [2,2] with tile strides {1,2}: tiles 0..3, each 4 elements: 16.
    EXPECT_EQ(required(with(ElementType::kUInt8, {4, 4}, strided_outer)), (Reqs{at_least(16)}));
}

// Sparse layouts: values from nnz and type, index arrays of uint64.
TEST(Builder, RequiredBufferSizesOfSparseLayouts) {
    EXPECT_EQ(required(with(ElementType::kFloat32, {4, 5}, CooLayout{3, true})), (Reqs{at_least(12), at_least(48)}));
    EXPECT_EQ(required(with(ElementType::kFloat32, {4, 5}, CsrLayout{2})),
              (Reqs{at_least(8), at_least(16), at_least(40)}));
    EXPECT_EQ(required(with(ElementType::kFloat32, {4, 5}, CscLayout{2})),
              (Reqs{at_least(8), at_least(16), at_least(48)}));
    EXPECT_EQ(required(with(ElementType::kBool, {4, 5}, CsrLayout{9})),
              (Reqs{at_least(2), at_least(72), at_least(40)}));
}

// Composite heads own no buffer; extension layouts one buffer of unknown size.
TEST(Builder, RequiredBufferSizesOfVirtualAndExtensionLayouts) {
    EXPECT_TRUE(required(with(ElementType::kFloat32, {8, 8}, CompositeLayout{CompositionRule::kGroup, CombineOp::kNone, 2})).empty());
    EXPECT_EQ(required(with(ElementType::kFloat32, {8, 8}, ExtensionLayout{0xF0, 1, {}})), (Reqs{unknown()}));
}

// quantization/*.md § Referenced Buffers: parameter buffers have exact sizes.
TEST(Builder, RequiredBufferSizesOfQuantizationParameters) {
    TensorDescriptor pc = with(ElementType::kInt8, {3, 4}, RowMajorLayout{});
    pc.quantization = QuantizationDescriptor{
        PerChannelAffine{.axis = 1, .scale_buffer_index = 1, .zero_point_buffer_index = 2}, {}};
    EXPECT_EQ(required(pc), (Reqs{at_least(12), exactly(16), exactly(16)}));

    TensorDescriptor nf4 = with(ElementType::kUInt4, {4, 64}, RowMajorLayout{});
    nf4.quantization = QuantizationDescriptor{Nf4Quantization{1, 32, 1}, {}};
    EXPECT_EQ(required(nf4), (Reqs{at_least(128), exactly(4 * 2 * 4)}));

    TensorDescriptor mx = with(ElementType::kFloat4E2M1, {4, 64}, RowMajorLayout{});
    mx.quantization = QuantizationDescriptor{MxfpQuantization{1, 32, 1}, {}};
    EXPECT_EQ(required(mx), (Reqs{at_least(128), exactly(8)}));

    TensorDescriptor pt = with(ElementType::kInt8, {3, 4}, RowMajorLayout{});
    pt.quantization = QuantizationDescriptor{PerTensorAffine{0.5F, 0}, {}};
    EXPECT_EQ(required(pt), (Reqs{at_least(12)}));

    // Shared scale/zero-point buffer: [scales | zero_points] (quantization.md § Placement, 3).
    TensorDescriptor shared = with(ElementType::kInt4, {4, 64}, RowMajorLayout{});
    shared.quantization = QuantizationDescriptor{
        PerBlockAffine{.axis = 1, .block_size = 32, .scale_buffer_index = 1, .zero_point_buffer_index = 1}, {}};
    EXPECT_EQ(required(shared), (Reqs{at_least(128), exactly(8 * 2 + 8 * 4)}));
    EXPECT_EQ(sizes_of(must(size_buffers(shared))), (std::vector<uint64_t>{128, 48}));

    // byte_offset adds to the data buffer only.
    TensorDescriptor off = must(make_per_block_quantized(ElementType::kInt4, {3, 5}, 1, 4));
    off.byte_offset = 64;
    EXPECT_EQ(required(off), (Reqs{at_least(64 + 12), exactly(12)}));

    // A parameter index inside the layout's buffers cannot form a buffer table.
    TensorDescriptor bad = pc;
    std::get<PerChannelAffine>(bad.quantization->scheme).scale_buffer_index = 0;
    EXPECT_TRUE(RejectedWith(required_buffer_sizes(bad), E::kInvalidQuantizationBuffer));
}

// required_buffer_sizes checks the fields it depends on.
TEST(Builder, RequiredBufferSizesRejectsInvalidFields) {
    EXPECT_TRUE(RejectedWith(required_buffer_sizes(with(ElementType::kFloat32, Shape(65, 1), RowMajorLayout{})),
                             E::kRankTooLarge));
    EXPECT_TRUE(RejectedWith(required_buffer_sizes(with(ElementType::kFloat32, {4}, CsrLayout{1})),
                             E::kRankNotAllowed));
    EXPECT_TRUE(RejectedWith(
        required_buffer_sizes(with(ElementType::kFloat32, {4, 4}, TiledLayout{{TiledLevel{.tile_shape = {0, 2}}}})),
        E::kInvalidLayout));
}

}  // namespace
