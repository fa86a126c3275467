// SPDX-License-Identifier: Apache-2.0
// TensorView: construction. Addressing, reads and materialization are in
// tensor_view_access.cpp.
#include "hurray/core/tensor_view.hpp"

#include <string>

#include "core/text.hpp"

namespace hurray {

Result<TensorView> TensorView::make(const TensorDescriptor& d,
                                    std::span<const std::span<const uint8_t>> buffers) {
    using detail::dec;
    if (std::holds_alternative<CompositeLayout>(d.layout)) {
        return Error(ErrorCode::kUnsupported,
                     "view: a composite head has no data; view its members (composite.hpp)");
    }
    if (std::holds_alternative<ExtensionLayout>(d.layout)) {
        return Error(ErrorCode::kUnsupported, "view: private extension layouts cannot be addressed");
    }
    if (d.element_bits() == 0) {
        return Error(ErrorCode::kUnknownElementType, "view: the element type has no known size");
    }
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
    return TensorView(&d, std::move(spans));
}

Result<std::vector<uint8_t>> TensorView::materialize() const {
    HURRAY_ASSIGN_OR_RETURN(uint64_t count, element_count(desc_->shape));
    HURRAY_ASSIGN_OR_RETURN(uint64_t bytes, desc_->element_storage_bytes(count));
    std::vector<uint8_t> out(static_cast<size_t>(bytes));
    HURRAY_RETURN_IF_ERROR(materialize(out));
    return out;
}

}  // namespace hurray
