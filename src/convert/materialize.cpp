// SPDX-License-Identifier: Apache-2.0
// A TensorSource's tensor as a whole in memory: densified, dequantized, or assembled from
// the members of a composite.
#include "convert/materialize.hpp"

#include <string>
#include <variant>

#include "convert/source_data.hpp"
#include "hurray/convert/gguf.hpp"
#include "hurray/core/composite_materialize.hpp"
#include "hurray/core/dequantize.hpp"
#include "hurray/core/element_convert.hpp"
#include "hurray/core/tensor_view.hpp"

namespace hurray::convert::detail {
namespace {

Error named(const SourceTensor& t, const Error& e) {
    return {e.code(), "tensor '" + t.name + "': " + e.message(), e.offset()};
}

/// The tensors a composite spans, counted without recursion: each tensor visited uses
/// one of the slots still open and opens one per member it declares.
Result<size_t> extent_of(const TensorSource& source, size_t head) {
    uint64_t open = 1;
    size_t pos = head;
    while (open > 0) {
        if (pos >= source.tensor_count()) {
            return Error(
                ErrorCode::kInvalidComposite,
                "tensor '" + source.tensor(head).name + "': composite head of " +
                    std::to_string(std::get<CompositeLayout>(source.tensor(head).descriptor.layout)
                                       .member_count) +
                    " members, the source ends before its last member");
        }
        --open;
        if (const auto* comp =
                std::get_if<CompositeLayout>(&source.tensor(pos).descriptor.layout)) {
            open += comp->member_count;
        }
        ++pos;
    }
    return pos - head;
}

/// A member's bytes and view, kept alive together.
struct MemberData {
    std::vector<BufferBytes> buffers;
    std::vector<std::span<const uint8_t>> spans;
};

/// The composite whose head is `head`, assembled (materialize_composite).
Result<std::vector<uint8_t>> assemble(const TensorSource& source, size_t head) {
    const SourceTensor& t = source.tensor(head);
    const auto& comp = std::get<CompositeLayout>(t.descriptor.layout);
    std::vector<MemberData> data(comp.member_count);
    std::vector<TensorView> views;
    views.reserve(comp.member_count);
    size_t next = head + 1;
    for (uint32_t m = 0; m < comp.member_count; ++m) {
        if (next >= source.tensor_count()) {
            return Error(
                ErrorCode::kInvalidComposite,
                "tensor '" + t.name + "': the source ends before its member " + std::to_string(m));
        }
        const SourceTensor& member = source.tensor(next);
        if (is_composite_head(member.descriptor)) {
            return Error(ErrorCode::kUnsupported, "tensor '" + t.name + "': member '" +
                                                      member.name +
                                                      "' is itself a composite; nested composites "
                                                      "are not materialized");
        }
        HURRAY_RETURN_IF_ERROR(whole_buffers(source, next, data[m].buffers, data[m].spans));
        auto view = TensorView::make(member.descriptor, data[m].spans);
        if (!view) {
            return named(member, view.error());
        }
        views.push_back(std::move(view).value());
        ++next;
    }
    auto bytes = materialize_composite(t.descriptor, views);
    if (!bytes) {
        return named(t, bytes.error());
    }
    return bytes;
}

}  // namespace

bool is_composite_head(const TensorDescriptor& d) noexcept {
    return std::holds_alternative<CompositeLayout>(d.layout);
}

bool is_plain_dense(const TensorDescriptor& d) noexcept {
    if (d.quantization || !std::holds_alternative<RowMajorLayout>(d.layout) || d.byte_offset != 0 ||
        d.buffers.size() != 1) {
        return false;
    }
    auto count = element_count(d.shape);
    if (!count) {
        return false;
    }
    auto bytes = d.element_storage_bytes(*count);
    return bytes && *bytes == d.buffers[0].byte_size;
}

Result<size_t> composite_extent(const TensorSource& source, size_t head) {
    if (!is_composite_head(source.tensor(head).descriptor)) {
        return size_t{1};
    }
    return extent_of(source, head);
}

Result<std::vector<uint8_t>> materialize_dense(const TensorSource& source, size_t i) {
    const SourceTensor& t = source.tensor(i);
    if (is_composite_head(t.descriptor)) {
        return assemble(source, i);
    }
    MemberData data;
    HURRAY_RETURN_IF_ERROR(whole_buffers(source, i, data.buffers, data.spans));
    auto view = TensorView::make(t.descriptor, data.spans);
    if (!view) {
        return named(t, view.error());
    }
    auto bytes = view->materialize();
    if (!bytes) {
        return named(t, bytes.error());
    }
    return bytes;
}

Result<std::vector<float>> to_float32(const TensorSource& source, size_t i) {
    const SourceTensor& t = source.tensor(i);
    if (is_composite_head(t.descriptor)) {
        HURRAY_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, assemble(source, i));
        auto count = element_count(t.descriptor.shape);
        if (!count) {
            return named(t, count.error());
        }
        std::vector<float> out(static_cast<size_t>(*count));
        if (auto s = convert_to_float32(t.descriptor.element_type, bytes, out); !s) {
            return named(t, s.error());
        }
        return out;
    }
    MemberData data;
    HURRAY_RETURN_IF_ERROR(whole_buffers(source, i, data.buffers, data.spans));
    if (const auto ggml_type = ggml_blocks_type(t.descriptor)) {
        // GGML blocks kept as they were in a GGUF file (gguf.hpp): ggml's formulas.
        auto count = element_count(t.descriptor.shape);
        if (!count) {
            return named(t, count.error());
        }
        if (data.spans.empty()) {
            return named(t, Error(ErrorCode::kInvalidData, "GGML blocks: no buffer"));
        }
        auto values = dequantize_ggml(*ggml_type, data.spans[0], *count);
        if (!values) {
            return named(t, values.error());
        }
        return values;
    }
    auto view = TensorView::make(t.descriptor, data.spans);
    if (!view) {
        return named(t, view.error());
    }
    auto values = hurray::to_float32(*view);
    if (!values) {
        return named(t, values.error());
    }
    return values;
}

}  // namespace hurray::convert::detail
