// SPDX-License-Identifier: Apache-2.0
// TensorView: construction and its one-time checks. Addressing and reads are
// in tensor_view_access.cpp, materialization in tensor_view_materialize.cpp.
#include "hurray/core/tensor_view.hpp"

#include <array>
#include <string>

#include "core/block_paged_lookup.hpp"
#include "hurray/core/text.hpp"
#include "hurray/core/descriptor_codec.hpp"

namespace hurray {
namespace {

// Data buffers this large are refused so that every element offset, also in
// packed elements of 1 bit, fits in int64 with room to spare.
constexpr uint64_t kMaxDataBufferBytes = uint64_t{1} << 59;

__extension__ typedef unsigned __int128 u128;  // NOLINT(modernize-use-using): __extension__ needs typedef

// Morton codes are not dense when morton_bits differ (morton.md gives bit b
// of dimension d the code bit b * rank + d), so the highest code can lie past
// the 2^sum(bits) elements the spec sizes the buffer for. Codes grow with
// every coordinate, so the element at shape - 1 has the highest one.
Status check_morton_extent(const TensorDescriptor& d, const MortonLayout& m, std::span<const uint8_t> data) {
    const size_t rank = d.shape.size();
    std::array<uint64_t, kMaxRank> last{};
    for (size_t k = 0; k < rank; ++k) {
        if (d.shape[k] == 0) {
            return Status::success();  // empty: nothing is addressed
        }
        last[k] = d.shape[k] - 1;
    }
    auto too_small = [&](const std::string& code) {
        return Error(ErrorCode::kBufferTooSmall,
                     "morton: element [shape - 1] has Morton code " + code + ", past the " +
                         dec(data.size() - d.byte_offset) +
                         " bytes of buffer 0 after byte_offset (with unequal morton_bits the codes of morton.md "
                         "exceed 2^sum(morton_bits); the buffer must hold code + 1 elements)");
    };
    for (size_t k = 0; k < rank; ++k) {
        // The code bit of last[k]'s highest set bit must exist.
        if (last[k] != 0) {
            const auto top = static_cast<uint64_t>(63 - __builtin_clzll(last[k]));
            if (top * rank + k >= 64) {
                return too_small("2^64 or more");
            }
        }
    }
    const uint64_t code = morton_encode(std::span<const uint64_t>(last.data(), rank), m.morton_bits);
    const u128 need_bits = (static_cast<u128>(code) + 1) * d.element_bits();
    const u128 have_bits = static_cast<u128>(data.size() - d.byte_offset) * 8;
    if (need_bits > have_bits) {
        return too_small(dec(code));
    }
    return Status::success();
}

}  // namespace

Result<TensorView> TensorView::make(const TensorDescriptor& d, std::span<const std::span<const uint8_t>> buffers) {
    // The view keeps its own copy of the descriptor: `d` may be a temporary.
    auto copy = std::make_shared<const TensorDescriptor>(d);
    HURRAY_ASSIGN_OR_RETURN(TensorView view, build(*copy, buffers));
    view.own_desc_ = std::move(copy);
    return view;
}

Result<TensorView> TensorView::build(const TensorDescriptor& d, std::span<const std::span<const uint8_t>> buffers) {
    if (std::holds_alternative<CompositeLayout>(d.layout)) {
        return Error(ErrorCode::kUnsupported, "view: a composite head has no data; view its members (composite.hpp)");
    }
    if (std::holds_alternative<ExtensionLayout>(d.layout)) {
        return Error(ErrorCode::kUnsupported, "view: private extension layouts cannot be addressed");
    }
    if (d.element_bits() == 0) {
        return Error(ErrorCode::kUnknownElementType, "view: the element type has no known size");
    }
    for (size_t k = 0; k < d.shape.size(); ++k) {
        if (d.shape[k] == kDynamicDim) {
            return Error(ErrorCode::kInvalidShape,
                         "view: shape[" + dec(k) + "] is dynamic; resolve it before viewing the data");
        }
    }
    // Everything addressing relies on: vector lengths, tile sizes, curve
    // rules, and buffer sizes that cover every addressed element.
    DecodeOptions permissive;
    permissive.strict = false;
    permissive.accept_private_extensions = true;
    HURRAY_RETURN_IF_ERROR(check_descriptor(d, permissive));
    if (buffers.size() != d.buffers.size()) {
        return Error(ErrorCode::kInvalidArgument, "view: " + dec(buffers.size()) +
                                                      " byte spans given, the descriptor has " +
                                                      dec(d.buffers.size()) + " buffers");
    }
    std::vector<std::span<const uint8_t>> spans;
    spans.reserve(buffers.size());
    for (size_t i = 0; i < buffers.size(); ++i) {
        const uint64_t declared = d.buffers[i].byte_size;
        if (buffers[i].size() < declared) {
            return Error(ErrorCode::kInvalidArgument,
                         "view: buffer " + dec(i) + " holds " + dec(buffers[i].size()) +
                             " bytes, its handle declares " + dec(declared));
        }
        spans.push_back(buffers[i].first(static_cast<size_t>(declared)));
    }
    if (!spans.empty() && spans[0].size() >= kMaxDataBufferBytes) {
        return Error(ErrorCode::kUnsupported,
                     "view: buffer 0 declares " + dec(spans[0].size()) + " bytes; views support less than 2^59");
    }
    const uint32_t bits = d.element_bits();
    if (bits == 6 && d.byte_offset % 3 != 0) {
        return Error(ErrorCode::kUnsupported,
                     "view: byte_offset " + dec(d.byte_offset) +
                         " is not a multiple of 3; 6-bit elements are addressed by whole 3-byte groups of 4 "
                         "(memory-layout.md § Sub-Byte Types), counted from the start of buffer 0");
    }
    if (const auto* m = std::get_if<MortonLayout>(&d.layout)) {
        HURRAY_RETURN_IF_ERROR(check_morton_extent(d, *m, spans[0]));
    }
    TensorView view(&d, std::move(spans));
    if (std::holds_alternative<BlockPagedLayout>(d.layout)) {
        // Token starts are known only for well-formed pointers; a bad seq_ptr
        // leaves them unknown here (locate then asks for the lengths) and is
        // reported precisely by validate_data.
        if (auto starts = detail::paged_token_starts(view)) {
            view.seq_starts_ = std::move(*starts);
        }
    }
    return view;
}

Result<TensorView> TensorView::make(const TensorDescriptor& d, std::span<const std::span<const uint8_t>> buffers,
                                   std::shared_ptr<const void> owner) {
    HURRAY_ASSIGN_OR_RETURN(TensorView view, build(d, buffers));  // d is kept alive by owner: not copied
    view.owner_ = std::move(owner);
    return view;
}

Result<TensorView> TensorView::with_sequence_lengths(std::span<const uint64_t> tokens_per_sequence) const {
    HURRAY_ASSIGN_OR_RETURN(std::vector<uint64_t> starts, detail::paged_starts_from_lengths(*this, tokens_per_sequence));
    TensorView copy = *this;
    copy.seq_starts_ = std::move(starts);
    return copy;
}

Result<std::vector<uint8_t>> TensorView::materialize() const {
    HURRAY_ASSIGN_OR_RETURN(uint64_t count, element_count(desc_->shape));
    HURRAY_ASSIGN_OR_RETURN(uint64_t bytes, desc_->element_storage_bytes(count));
    std::vector<uint8_t> out(static_cast<size_t>(bytes));
    HURRAY_RETURN_IF_ERROR(materialize(out));
    return out;
}

}  // namespace hurray
