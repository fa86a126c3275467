// SPDX-License-Identifier: Apache-2.0
// TensorView: element addressing (locate) and single-element reads, dispatched
// to the dense, sparse and block-paged lookups.
#include <string>

#include "core/block_paged_lookup.hpp"
#include "core/dense_address.hpp"
#include "core/element_slot.hpp"
#include "core/sparse_lookup.hpp"
#include "hurray/core/text.hpp"
#include "hurray/core/element_convert.hpp"
#include "hurray/core/tensor_view.hpp"

namespace hurray {
namespace {

Status check_index(const TensorDescriptor& d, std::span<const uint64_t> index) {
    if (index.size() != d.shape.size()) {
        return Error(ErrorCode::kInvalidArgument,
                     "index: has " + dec(index.size()) + " coordinates, the tensor's rank is " + dec(d.shape.size()));
    }
    for (size_t k = 0; k < index.size(); ++k) {
        if (index[k] >= d.shape[k]) {
            return Error(ErrorCode::kInvalidArgument, "index[" + dec(k) + "] = " + dec(index[k]) +
                                                          " is outside shape[" + dec(k) + "] = " + dec(d.shape[k]));
        }
    }
    return Status::success();
}

}  // namespace

Result<ElementLocation> TensorView::locate(std::span<const uint64_t> index) const {
    const TensorDescriptor& d = *desc_;
    HURRAY_RETURN_IF_ERROR(check_index(d, index));
    switch (layout_kind(d.layout)) {
        case LayoutKind::kDense:
            return detail::dense_location(d, detail::ElementGeometry::of(d), buffers_[0],
                                          detail::dense_offset(d, index));
        case LayoutKind::kSparse: return detail::sparse_locate(*this, index);
        case LayoutKind::kIndirect: return detail::paged_locate(*this, index);
        default: break;
    }
    return Error(ErrorCode::kUnsupported, "view: the layout cannot be addressed");  // make() refuses the rest
}

Result<ElementLocation> TensorView::locate_paged(uint64_t seq, uint64_t token, uint64_t head, uint64_t dim) const {
    return detail::paged_locate_in_sequence(*this, seq, token, head, dim);
}

Result<uint64_t> TensorView::read_bits(std::span<const uint64_t> index) const {
    HURRAY_ASSIGN_OR_RETURN(ElementLocation loc, locate(index));
    if (!loc.stored) {
        return uint64_t{0};
    }
    const detail::ElementGeometry g = detail::ElementGeometry::of(*desc_);
    const std::span<const uint8_t> bytes = buffers_[loc.buffer];
    if (!detail::location_fits(g, bytes, loc)) {
        return Error(ErrorCode::kInvalidData, "view: element location lies outside buffer " + dec(loc.buffer));
    }
    return detail::load_element_bits(g, bytes, loc);
}

Result<double> TensorView::read_double(std::span<const uint64_t> index) const {
    if (!is_builtin(desc_->element_type)) {
        return Error(ErrorCode::kUnsupported,
                     "read_double: private element type " + hex(type_tag(desc_->element_type)) +
                         " has no known value encoding; use read_bits");
    }
    HURRAY_ASSIGN_OR_RETURN(ElementLocation loc, locate(index));
    if (!loc.stored) {
        return 0.0;
    }
    const std::span<const uint8_t> bytes = buffers_[loc.buffer];
    if (loc.byte_base > bytes.size()) {
        return Error(ErrorCode::kInvalidData, "view: element location lies outside buffer " + dec(loc.buffer));
    }
    return element_as_double(desc_->element_type, bytes.subspan(static_cast<size_t>(loc.byte_base)), loc.element);
}

}  // namespace hurray
