// SPDX-License-Identifier: Apache-2.0
// FileTensor: typed zero-copy access to a tensor of an opened file, and its
// float32 values for any layout, quantization or composite.
#include <bit>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "hurray/core/text.hpp"
#include "hurray/core/composite_materialize.hpp"
#include "hurray/core/dequantize.hpp"
#include "hurray/core/element_convert.hpp"
#include "hurray/core/layout.hpp"
#include "hurray/io/file_reader.hpp"

namespace hurray {


namespace {

/// Whether `d`'s elements lie one after another in row-major order from
/// `byte_offset`: row-major layout, or strided with the row-major strides
/// (dimensions of size 1 may have any stride).
bool row_major_contiguous(const TensorDescriptor& d) {
    if (std::holds_alternative<RowMajorLayout>(d.layout)) {
        return true;
    }
    const auto* strided = std::get_if<StridedLayout>(&d.layout);
    if (strided == nullptr || strided->strides.size() != d.shape.size()) {
        return false;
    }
    uint64_t expected = 1;
    for (size_t k = d.shape.size(); k-- > 0;) {
        if (d.shape[k] == 0) {
            return true;  // no element at all
        }
        if (d.shape[k] != 1 && strided->strides[k] != static_cast<int64_t>(expected)) {
            return false;
        }
        if (d.shape[k] > UINT64_MAX / expected) {
            return false;
        }
        expected *= d.shape[k];
    }
    return true;
}

std::string type_text(ElementType t) {
    const std::string_view name = type_name(t);
    return name.empty() ? "private type " + hex(type_tag(t)) : std::string(name);
}

}  // namespace

bool FileTensor::is_composite() const noexcept {
    return descriptor_->layout_tag() == static_cast<uint8_t>(LayoutTag::kComposite);
}

void FileTensor::add_buffer(SharedBuffer b, size_t count) {
    if (count <= kInlineBuffers) {
        inline_buffers_[buffer_count_] = std::move(b);  // buffer_count_ < count <= kInlineBuffers
    } else {
        if (more_buffers_.empty()) {
            more_buffers_.reserve(count);
        }
        more_buffers_.push_back(std::move(b));
    }
    ++buffer_count_;
}

std::vector<std::span<const uint8_t>> FileTensor::spans() const {
    std::vector<std::span<const uint8_t>> out;
    out.reserve(buffers().size());
    for (const SharedBuffer& b : buffers()) {
        out.push_back(b.span());
    }
    return out;
}

Result<TensorView> FileTensor::view() const {
    // The file's shared state owns the descriptor and (through the source)
    // the bytes: the view keeps it alive.
    return TensorView::make(*descriptor_, spans(), std::shared_ptr<const void>(file_.impl_));
}

Result<SharedBuffer> FileTensor::typed_bytes(ElementType want, size_t alignment, const char* cpp_name) const {
    const TensorDescriptor& d = *descriptor_;
    // Built only for an error: as<T>() may sit in a loop.
    const auto what = [&] {
        return std::string("tensor '").append(entry_->name) + "': " +
               (cpp_name != nullptr ? std::string("as<") + cpp_name + ">()" : std::string("bytes()"));
    };
    if (is_composite()) {
        return Error(ErrorCode::kUnsupported,
                     what() + ": it is a composite head, its data is in its members (to_float32() assembles it)");
    }
    if (d.quantization) {
        return Error(ErrorCode::kUnsupported,
                     what() + ": it is quantized, its buffers hold codes and parameters (to_float32() dequantizes; "
                            "view() reads the stored codes)");
    }
    if (!row_major_contiguous(d)) {
        return Error(ErrorCode::kUnsupported, what() + ": its layout is " + std::string(layout_name(d.layout_tag())) +
                                                  ", not dense row-major (to_float32() densifies it)");
    }
    if (cpp_name != nullptr && d.element_type != want) {
        return Error(ErrorCode::kTypeMismatch, what() + ": it holds " + type_text(d.element_type) + ", not " +
                                                   type_text(want) + " (to_float32() converts any type)");
    }
    const uint32_t bits = d.element_bits();
    if (!is_builtin(d.element_type) || bits == 0 || bits % 8 != 0 || d.element_type == ElementType::kBool) {
        return Error(ErrorCode::kUnsupported,
                     what() + ": " + type_text(d.element_type) +
                         " elements are not whole bytes one after another (bit-packed or private; to_float32() "
                         "unpacks them)");
    }
    if constexpr (std::endian::native != std::endian::little) {
        return Error(ErrorCode::kUnsupported, what() + ": the data is little-endian and this machine is not");
    }
    HURRAY_ASSIGN_OR_RETURN(const uint64_t count, element_count(d.shape));
    HURRAY_ASSIGN_OR_RETURN(const uint64_t size, d.element_storage_bytes(count));
    if (count == 0) {
        return SharedBuffer();
    }
    // Decoding checked buffer 0 against byte_offset and the shape; kept as a guard.
    const std::span<const SharedBuffer> bufs = buffers();
    if (bufs.empty() || d.byte_offset > bufs[0].size() || size > bufs[0].size() - d.byte_offset) {
        return Error(ErrorCode::kBufferTooSmall, what() + ": buffer 0 holds " +
                                                     dec(bufs.empty() ? 0 : bufs[0].size()) + " bytes, " +
                                                     dec(d.byte_offset) + " + " + dec(size) + " needed");
    }
    const SharedBuffer data = bufs[0].slice(static_cast<size_t>(d.byte_offset), static_cast<size_t>(size));
    if (reinterpret_cast<uintptr_t>(data.data()) % alignment != 0) {
        return Error(ErrorCode::kUnsupported, what() + ": the data is not aligned to " + dec(alignment) +
                                                  " bytes in memory (a file opened from unaligned memory; "
                                                  "to_float32() or bytes() copy or view it anyway)");
    }
    return data;
}

Result<SharedBuffer> FileTensor::bytes() const { return typed_bytes(element_type(), 1, nullptr); }

namespace {

/// `result`, unless the file changed while it was being computed from the
/// mapping (then that change, which also explains a failed `result`).
template <typename T>
Result<T> unless_changed(const FileReader& file, Result<T> result, const std::string& label) {
    if (auto s = file.check_unchanged(); !s) {
        return s.error().with_context({.prefix = label});
    }
    return result;
}

}  // namespace

Result<std::vector<uint8_t>> FileTensor::materialize() const {
    const std::string label = std::string("tensor '").append(entry_->name) + "': materialize()";
    if (!is_composite()) {
        HURRAY_ASSIGN_OR_RETURN(const TensorView v, view());
        return unless_changed(file_, v.materialize(), label);
    }
    // A composite head: assemble it from its direct members.
    HURRAY_ASSIGN_OR_RETURN(const FileComposite comp, file_.composite(index_));
    std::vector<TensorView> views;
    views.reserve(comp.members.size());
    for (const size_t m : comp.members) {
        HURRAY_ASSIGN_OR_RETURN(const FileTensor t, file_.tensor(m));
        if (t.is_composite()) {
            return Error(ErrorCode::kUnsupported, label + ": member '" + std::string(t.name()) +
                                                      "' is itself a composite; nested composites are not "
                                                      "materialized");
        }
        HURRAY_ASSIGN_OR_RETURN(TensorView v, t.view());  // holds its own share of the file
        views.push_back(std::move(v));
    }
    auto bytes = unless_changed(file_, materialize_composite(*descriptor_, views), label);
    if (!bytes) {
        return bytes.error().with_context({.prefix = label});
    }
    return bytes;
}

Result<std::vector<float>> FileTensor::to_float32() const {
    const std::string label = std::string("tensor '").append(entry_->name) + "': to_float32()";
    if (!is_composite()) {
        HURRAY_ASSIGN_OR_RETURN(const TensorView v, view());
        auto values = unless_changed(file_, hurray::to_float32(v), label);
        if (!values) {
            return values.error().with_context({.prefix = label});
        }
        return values;
    }
    HURRAY_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, materialize());
    HURRAY_ASSIGN_OR_RETURN(const uint64_t count, element_count(descriptor_->shape));
    std::vector<float> out(static_cast<size_t>(count));
    HURRAY_RETURN_IF_ERROR(convert_to_float32(descriptor_->element_type, bytes, out));
    return out;
}

TensorRef FileTensor::ref() const { return TensorRef::from_descriptor(*descriptor_, spans()); }

}  // namespace hurray
