// SPDX-License-Identifier: Apache-2.0
// The merged logical view of a partition or overlay composite
// (composite_materialize.hpp; layouts/composite.md § Composition Semantics).
#include "hurray/core/composite_materialize.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <variant>

#include "core/element_combine.hpp"
#include "core/sparse_walk.hpp"
#include "hurray/core/text.hpp"
#include "hurray/core/composite.hpp"
#include "hurray/core/dequantize.hpp"
#include "hurray/core/element_convert.hpp"
#include "hurray/core/validate.hpp"

namespace hurray {
namespace {


enum class Combine { kReplace, kAdd };

/// How a member's box sits in the head's row-major output.
struct Placement {
    std::span<const uint64_t> offset;  // shard_offset (empty for rank 0)
    std::span<const uint64_t> strides; // head's row-major strides, in elements
    /// Output element of the member's local index `local`.
    [[nodiscard]] uint64_t at(std::span<const uint64_t> local) const {
        uint64_t p = 0;
        for (size_t k = 0; k < local.size(); ++k) {
            p += (offset[k] + local[k]) * strides[k];
        }
        return p;
    }
};

Status apply(Combine how, ElementType type, std::span<const uint8_t> src, uint64_t si, std::span<uint8_t> out,
             uint64_t di) {
    if (how == Combine::kAdd) {
        return detail::add_element(type, src, si, out, di);
    }
    return detail::copy_element(bit_width(type), src, si, out, di);
}

// Places a member's row-major elements (`local`, storage of `type`, of the
// member's `shape`) into its box of the head's output.
Status place_rows(std::span<const uint8_t> local, ElementType type, std::span<const uint64_t> shape,
                  const Placement& at, Combine how, std::span<uint8_t> out) {
    HURRAY_ASSIGN_OR_RETURN(uint64_t count, element_count(shape));
    if (count == 0) {
        return Status::success();
    }
    const uint32_t bits = bit_width(type);
    const size_t rank = shape.size();
    const uint64_t row = rank == 0 ? 1 : shape[rank - 1];
    std::vector<uint64_t> idx(rank, 0);
    for (uint64_t first = 0; first < count; first += row) {
        const uint64_t dst = at.at(idx);
        if (how == Combine::kReplace && bits % 8 == 0) {
            const uint64_t w = bits / 8;
            if ((first + row) * w > local.size() || (dst + row) * w > out.size()) {
                return Error(ErrorCode::kInvalidArgument, "materialize_composite: a member row lies outside a buffer");
            }
            // SAFETY: both row ranges were just checked against their buffers.
            std::memcpy(out.data() + dst * w, local.data() + first * w, static_cast<size_t>(row * w));
        } else {
            for (uint64_t t = 0; t < row; ++t) {
                HURRAY_RETURN_IF_ERROR(apply(how, type, local, first + t, out, dst + t));
            }
        }
        // Next row: advance every dimension but the last.
        for (size_t k = rank > 0 ? rank - 1 : 0; k > 0; --k) {
            if (idx[k - 1] + 1 < shape[k - 1]) {
                ++idx[k - 1];
                break;
            }
            idx[k - 1] = 0;
        }
    }
    return Status::success();
}

// A dense (or paged) member: materialize it row-major, then place its box.
Status place_dense(const TensorView& view, const Placement& at, Combine how, std::span<uint8_t> out) {
    const TensorDescriptor& d = view.descriptor();
    HURRAY_ASSIGN_OR_RETURN(std::vector<uint8_t> local, view.materialize());
    return place_rows(local, d.element_type, d.shape, at, how, out);
}

// A quantized dense member: dequantize it (float32, row-major), convert to the
// head's type (round to nearest even), then place its box.
Status place_dequantized(const TensorView& view, ElementType head_type, const Placement& at, Combine how,
                         std::span<uint8_t> out) {
    const TensorDescriptor& d = view.descriptor();
    HURRAY_ASSIGN_OR_RETURN(std::vector<float> real, dequantize(view));
    HURRAY_ASSIGN_OR_RETURN(uint64_t bytes, storage_bytes(head_type, real.size()));
    std::vector<uint8_t> local(static_cast<size_t>(bytes));
    for (size_t i = 0; i < real.size(); ++i) {
        HURRAY_RETURN_IF_ERROR(element_from_double(head_type, local, i, real[i]));
    }
    return place_rows(local, head_type, d.shape, at, how, out);
}

// A sparse member: its stored elements only.
Status place_sparse(const TensorView& view, const Placement& at, Combine how, std::span<uint8_t> out) {
    const ElementType type = view.descriptor().element_type;
    const std::span<const uint8_t> values = view.buffer_count() > 0 ? view.buffer(0) : std::span<const uint8_t>();
    return detail::for_each_stored(view, [&](std::span<const uint64_t> local, uint64_t j) -> Status {
        return apply(how, type, values, j, out, at.at(local));
    });
}

}  // namespace

Status materialize_composite(const TensorDescriptor& head, std::span<const TensorView> members,
                             std::span<uint8_t> out) {
    const auto* k = std::get_if<CompositeLayout>(&head.layout);
    if (k == nullptr) {
        return Error(ErrorCode::kInvalidArgument, "materialize_composite: the head's layout is not composite");
    }
    if (k->rule != CompositionRule::kPartition && k->rule != CompositionRule::kOverlay) {
        return Error(ErrorCode::kUnsupported,
                     "materialize_composite: only partition and overlay composites have a merged view");
    }
    if (members.size() != k->member_count) {
        return Error(ErrorCode::kInvalidArgument, "materialize_composite: " + dec(members.size()) +
                                                      " member views given, the head declares " +
                                                      dec(k->member_count));
    }
    CompositeAssembler assembler;
    HURRAY_RETURN_IF_ERROR(assembler.add(head));
    for (const TensorView& m : members) {
        HURRAY_RETURN_IF_ERROR(assembler.add(m.descriptor()));
    }
    HURRAY_RETURN_IF_ERROR(assembler.finish());

    const ElementType type = head.element_type;
    if (head.extension_type || !is_builtin(type)) {
        return Error(ErrorCode::kUnsupported, "materialize_composite: the head's element type is not built in");
    }
    const bool add = k->rule == CompositionRule::kOverlay && k->combine_op == CombineOp::kAdd;
    if (add && !detail::can_add(type)) {
        return Error(ErrorCode::kUnsupported,
                     "materialize_composite: add is not available in " + std::string(type_name(type)));
    }
    HURRAY_ASSIGN_OR_RETURN(uint64_t count, element_count(head.shape));
    HURRAY_ASSIGN_OR_RETURN(uint64_t bytes, storage_bytes(type, count));
    if (out.size() != bytes) {
        return Error(ErrorCode::kInvalidArgument, "materialize_composite: the output holds " + dec(out.size()) +
                                                      " bytes, the head's tensor needs " + dec(bytes));
    }
    for (size_t i = 0; i < members.size(); ++i) {
        const TensorDescriptor& m = members[i].descriptor();
        if (m.quantization && detail::is_sparse_layout(m.layout)) {
            return Error(ErrorCode::kUnsupported, "materialize_composite: member " + dec(i) +
                                                      " is a quantized sparse tensor; only its dense form is "
                                                      "supported here");
        }
        HURRAY_RETURN_IF_ERROR(validate_data(members[i]));
    }

    std::vector<uint64_t> strides(head.shape.size(), 1);
    for (size_t d = head.shape.size(); d > 1; --d) {
        strides[d - 2] = strides[d - 1] * head.shape[d - 1];
    }
    if (!out.empty()) {
        std::memset(out.data(), 0, out.size());
    }
    for (size_t i = 0; i < members.size(); ++i) {
        const TensorView& view = members[i];
        const TensorDescriptor& m = view.descriptor();
        const Placement at{m.shard->shard_offset, strides};
        const Combine how = add && i > 0 ? Combine::kAdd : Combine::kReplace;
        if (detail::is_sparse_layout(m.layout)) {
            HURRAY_RETURN_IF_ERROR(place_sparse(view, at, how, out));
        } else if (m.quantization) {
            HURRAY_RETURN_IF_ERROR(place_dequantized(view, type, at, how, out));
        } else {
            HURRAY_RETURN_IF_ERROR(place_dense(view, at, how, out));
        }
    }
    return Status::success();
}

Result<std::vector<uint8_t>> materialize_composite(const TensorDescriptor& head,
                                                   std::span<const TensorView> members) {
    HURRAY_ASSIGN_OR_RETURN(uint64_t count, element_count(head.shape));
    HURRAY_ASSIGN_OR_RETURN(uint64_t bytes, storage_bytes(head.element_type, count));
    std::vector<uint8_t> out(static_cast<size_t>(bytes));
    HURRAY_RETURN_IF_ERROR(materialize_composite(head, members, out));
    return out;
}

}  // namespace hurray
