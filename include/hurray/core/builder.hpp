// SPDX-License-Identifier: Apache-2.0
/// @file
/// One-line construction of common descriptors, with buffer sizes computed.
#pragma once

#include "hurray/core/export.hpp"
#include <cstdint>
#include <span>

#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/tensor_descriptor.hpp"

namespace hurray {

/// Placement shared by every buffer a builder creates.
struct HURRAY_CORE_EXPORT BufferPlacement {
    uint32_t alignment = kMinBufferAlignment;           ///< Alignment of non-empty buffers.
    DeviceTag device_tag = DeviceTag::kCpu;             ///< Device of every buffer.
    SyncMode sync_mode = SyncMode::kProducerSynced;     ///< Synchronisation of every buffer.
    MemoryClass memory_class = MemoryClass::kStandard;  ///< Memory class of every buffer.
};

/// Fills `d.buffers` with one handle per buffer the layout and quantization
/// scheme define, each of the smallest valid size (see
/// `required_buffer_sizes`), then checks the result. Sizes the descriptor
/// cannot determine (inner CSF levels, the block table) are taken from
/// `data_dependent_sizes`, in buffer order; it must hold exactly as many
/// entries as there are such buffers.
///
/// @code
/// hurray::TensorDescriptor d;
/// d.element_type = hurray::ElementType::kInt8;
/// d.shape = {4, 4};
/// d.layout = hurray::StridedLayout{{-4, 1}};
/// d.byte_offset = 12;
/// auto sized = hurray::size_buffers(std::move(d));  // one 16-byte buffer
/// @endcode
HURRAY_CORE_EXPORT Result<TensorDescriptor> size_buffers(TensorDescriptor d, const BufferPlacement& placement = {},
                                      std::span<const uint64_t> data_dependent_sizes = {});

/// A dense row-major tensor.
///
/// @code
/// auto d = hurray::make_dense(hurray::ElementType::kFloat16, {1, 32, 128, 128});
/// @endcode
HURRAY_CORE_EXPORT Result<TensorDescriptor> make_dense(ElementType type, Shape shape,
                                    const BufferPlacement& placement = {});

/// A row-major tensor quantized per block along `axis`: storage `type`
/// (int8/uint8/int4/uint4/int2/uint2), scales of `scale_type` in buffer 1 and,
/// unless `symmetric`, int32 zero points in buffer 2.
///
/// @code
/// auto d = hurray::make_per_block_quantized(hurray::ElementType::kInt4, {4096, 4096}, 1, 32);
/// @endcode
HURRAY_CORE_EXPORT Result<TensorDescriptor> make_per_block_quantized(ElementType type, Shape shape, uint32_t axis,
                                                  uint32_t block_size,
                                                  ElementType scale_type = ElementType::kFloat16,
                                                  bool symmetric = true,
                                                  const BufferPlacement& placement = {});

/// A CSR matrix of `rows` x `cols` with `nnz` stored values.
///
/// @code
/// auto d = hurray::make_csr(hurray::ElementType::kFloat32, 3, 3, 2);  // buffers 8, 16, 32 bytes
/// @endcode
HURRAY_CORE_EXPORT Result<TensorDescriptor> make_csr(ElementType type, uint64_t rows, uint64_t cols, uint64_t nnz,
                                  const BufferPlacement& placement = {});

/// A COO tensor with `nnz` stored values.
HURRAY_CORE_EXPORT Result<TensorDescriptor> make_coo(ElementType type, Shape shape, uint64_t nnz, bool is_sorted,
                                  const BufferPlacement& placement = {});

/// A composite head (no buffers) with the given logical type and shape.
///
/// @code
/// auto head = hurray::make_composite_head(hurray::ElementType::kFloat32, {8, 8},
///                                         hurray::CompositionRule::kPartition, 2);
/// @endcode
HURRAY_CORE_EXPORT Result<TensorDescriptor> make_composite_head(ElementType type, Shape shape, CompositionRule rule,
                                             uint32_t member_count,
                                             CombineOp combine_op = CombineOp::kNone);

}  // namespace hurray
