// SPDX-License-Identifier: Apache-2.0
#include "hurray/core/builder.hpp"

#include "core/quant_storage.hpp"

#include <string>

#include "hurray/core/text.hpp"

namespace hurray {

Result<TensorDescriptor> size_buffers(TensorDescriptor d, const BufferPlacement& placement,
                                      std::span<const uint64_t> data_dependent_sizes) {
    if (classify_type_tag(type_tag(d.element_type)) == TypeTagClass::kReserved && d.element_bits() == 0 &&
        !std::holds_alternative<CompositeLayout>(d.layout)) {
        return Error(ErrorCode::kUnknownElementType,
                     "size_buffers: type_tag " + hex(type_tag(d.element_type)) +
                         " has no known size; buffer sizes cannot be computed");
    }
    HURRAY_ASSIGN_OR_RETURN(std::vector<BufferRequirement> req, required_buffer_sizes(d));
    d.buffers.clear();
    d.buffers.reserve(req.size());
    size_t next = 0;
    for (size_t i = 0; i < req.size(); ++i) {
        uint64_t size = 0;
        if (req[i].data_dependent || !req[i].min_size) {
            if (next >= data_dependent_sizes.size()) {
                return Error(ErrorCode::kInvalidArgument,
                             "size_buffers: buffer " + dec(i) +
                                 " depends on the data or on a dynamic dimension; pass its size in "
                                 "data_dependent_sizes");
            }
            size = data_dependent_sizes[next++];
        } else {
            size = *req[i].min_size;
        }
        BufferHandle h;
        h.byte_size = size;
        h.alignment = placement.alignment;
        h.device_tag = placement.device_tag;
        h.sync_mode = placement.sync_mode;
        h.memory_class = placement.memory_class;
        d.buffers.push_back(h);
    }
    if (next != data_dependent_sizes.size()) {
        return Error(ErrorCode::kInvalidArgument,
                     "size_buffers: " + dec(data_dependent_sizes.size()) +
                         " data-dependent sizes given, " + dec(next) + " used");
    }
    HURRAY_RETURN_IF_ERROR(check_descriptor(d));
    return d;
}

Result<TensorDescriptor> make_dense(ElementType type, Shape shape, const BufferPlacement& placement) {
    TensorDescriptor d;
    d.element_type = type;
    d.shape = std::move(shape);
    return size_buffers(std::move(d), placement);
}

Result<TensorDescriptor> make_per_block_quantized(ElementType type, Shape shape, uint32_t axis,
                                                  uint32_t block_size, ElementType scale_type,
                                                  bool symmetric, const BufferPlacement& placement) {
    TensorDescriptor d;
    d.element_type = type;
    d.shape = std::move(shape);
    d.quantization = QuantizationDescriptor{detail::per_block_affine(axis, block_size, scale_type, symmetric), {}};
    return size_buffers(std::move(d), placement);
}

Result<TensorDescriptor> make_csr(ElementType type, uint64_t rows, uint64_t cols, uint64_t nnz,
                                  const BufferPlacement& placement) {
    TensorDescriptor d;
    d.element_type = type;
    d.shape = {rows, cols};
    d.layout = CsrLayout{nnz};
    return size_buffers(std::move(d), placement);
}

Result<TensorDescriptor> make_coo(ElementType type, Shape shape, uint64_t nnz, bool is_sorted,
                                  const BufferPlacement& placement) {
    TensorDescriptor d;
    d.element_type = type;
    d.shape = std::move(shape);
    d.layout = CooLayout{nnz, is_sorted};
    return size_buffers(std::move(d), placement);
}

Result<TensorDescriptor> make_composite_head(ElementType type, Shape shape, CompositionRule rule,
                                             uint32_t member_count, CombineOp combine_op) {
    TensorDescriptor d;
    d.element_type = type;
    d.shape = std::move(shape);
    d.layout = CompositeLayout{rule, combine_op, member_count};
    HURRAY_RETURN_IF_ERROR(check_descriptor(d));
    return d;
}

}  // namespace hurray
