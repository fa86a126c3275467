// SPDX-License-Identifier: Apache-2.0
// TensorView::materialize: every element in row-major logical order, as
// storage bytes. Affine dense layouts go through the strided copy (one memcpy
// when contiguous, row copies, blocked transposition); tiled and curve layouts
// element by element; sparse layouts by zero-fill and scatter; block-paged one
// token row at a time.
#include <array>
#include <cstring>
#include <string>

#include "core/block_paged_lookup.hpp"
#include "core/dense_address.hpp"
#include "core/element_slot.hpp"
#include "core/sparse_lookup.hpp"
#include "core/strided_copy.hpp"
#include "hurray/core/text.hpp"
#include "hurray/core/tensor_view.hpp"

namespace hurray {
namespace {

using detail::ElementGeometry;
using detail::i128;

// Row-major, column-major and strided tensors.
Status materialize_affine(const TensorDescriptor& d, ElementGeometry g, std::span<const uint8_t> data,
                          std::span<const int64_t> strides, std::span<uint8_t> out) {
    // The lowest and the highest element the strides reach: both must lie in
    // buffer 0, and then so does every element (check_descriptor proved it
    // already; checking again keeps the raw copies below self-evidently safe).
    i128 lo = 0;
    i128 hi = 0;
    for (size_t k = 0; k < d.shape.size(); ++k) {
        const i128 reach = static_cast<i128>(strides[k]) * static_cast<i128>(d.shape[k] - 1);
        (reach < 0 ? lo : hi) += reach;
    }
    HURRAY_RETURN_IF_ERROR(detail::dense_location(d, g, data, lo));
    HURRAY_RETURN_IF_ERROR(detail::dense_location(d, g, data, hi));
    if (g.packed()) {
        detail::strided_copy_packed(out, data, detail::packed_origin(d, g), g.bits, d.shape, strides);
    } else {
        // SAFETY: data.data() + byte_offset is element [0, ..., 0]; every element
        // lies between the two just checked. `out` holds exactly the elements
        // (checked by materialize) and is the caller's, not a view buffer.
        detail::strided_copy(out.data(), data.data() + d.byte_offset, g.bytes, d.shape, strides);
    }
    return Status::success();
}

// Tiled, Morton and Hilbert tensors: element by element, in row-major order.
Status materialize_generic(const TensorDescriptor& d, ElementGeometry g, std::span<const uint8_t> data,
                           uint64_t count, std::span<uint8_t> out) {
    const size_t rank = d.shape.size();
    std::array<uint64_t, kMaxRank> idx{};
    const std::span<const uint64_t> index(idx.data(), rank);
    for (uint64_t n = 0; n < count; ++n) {
        HURRAY_ASSIGN_OR_RETURN(ElementLocation loc, detail::dense_location(d, g, data, detail::dense_offset(d, index)));
        detail::copy_element(g, data, loc, out, n);
        for (size_t k = rank; k-- > 0;) {
            if (++idx[k] < d.shape[k]) {
                break;
            }
            idx[k] = 0;
        }
    }
    return Status::success();
}

}  // namespace

Status TensorView::materialize(std::span<uint8_t> out) const {
    const TensorDescriptor& d = *desc_;
    HURRAY_ASSIGN_OR_RETURN(uint64_t count, element_count(d.shape));
    HURRAY_ASSIGN_OR_RETURN(uint64_t bytes, d.element_storage_bytes(count));
    if (out.size() != bytes) {
        return Error(ErrorCode::kInvalidArgument, "materialize: out holds " + dec(out.size()) +
                                                      " bytes; the " + dec(count) +
                                                      " elements need exactly " + dec(bytes));
    }
    if (count == 0) {
        return Status::success();
    }
    const ElementGeometry g = ElementGeometry::of(d);
    const LayoutKind kind = layout_kind(d.layout);
    if (kind == LayoutKind::kSparse) {
        return detail::sparse_materialize(*this, out);
    }
    if (g.packed()) {
        // Packed stores write element bits only: start from zero padding.
        // SAFETY: writes exactly the caller's span.
        std::memset(out.data(), 0, out.size());
    }
    if (kind == LayoutKind::kIndirect) {
        return detail::paged_materialize(*this, out);
    }
    std::array<int64_t, kMaxRank> strides{};
    const std::span<int64_t> s(strides.data(), d.shape.size());
    if (detail::affine_strides(d, s)) {
        return materialize_affine(d, g, buffers_[0], s, out);
    }
    return materialize_generic(d, g, buffers_[0], count, out);
}

}  // namespace hurray
