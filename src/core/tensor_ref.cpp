// SPDX-License-Identifier: Apache-2.0
// TensorRef: the descriptor a tensor will be written with, checked against the
// caller's data.
#include "hurray/core/tensor_ref.hpp"

#include <string>
#include <utility>

#include "hurray/core/text.hpp"
#include "hurray/core/builder.hpp"

namespace hurray {


namespace {

/// "float32[2, 3]".
std::string type_and_shape(ElementType type, std::span<const uint64_t> shape) {
    std::string s(type_name(type));
    if (s.empty()) {
        s = "type " + hex(type_tag(type));
    }
    s += '[';
    for (size_t i = 0; i < shape.size(); ++i) {
        s += (i == 0 ? "" : ", ") + dec(shape[i]);
    }
    return s + ']';
}

}  // namespace

TensorRef TensorRef::from_bytes(ElementType type, Shape shape, std::span<const uint8_t> bytes) {
    TensorRef t;
    t.type_ = type;
    t.shape_ = std::move(shape);
    t.data_ = bytes;
    return t;
}

TensorRef TensorRef::from_descriptor(TensorDescriptor descriptor, std::span<const std::span<const uint8_t>> buffers) {
    TensorRef t;
    t.type_ = descriptor.element_type;
    t.shape_ = descriptor.shape;
    t.full_ = std::move(descriptor);
    t.full_buffers_.assign(buffers.begin(), buffers.end());
    return t;
}

void TensorRef::pack_bools(const bool* values, size_t count) {
    auto packed = std::make_shared<std::vector<uint8_t>>((count + 7) / 8, uint8_t{0});
    for (size_t i = 0; i < count; ++i) {
        if (values[i]) {
            (*packed)[i / 8] = static_cast<uint8_t>((*packed)[i / 8] | (1U << (i % 8)));
        }
    }
    data_ = *packed;
    owned_ = std::move(packed);
}

ElementType TensorRef::element_type() const noexcept { return type_; }

std::span<const uint64_t> TensorRef::shape() const noexcept { return shape_; }

Result<TensorDescriptor> TensorRef::descriptor() const {
    if (full_) {
        if (full_buffers_.size() != full_->buffers.size()) {
            return Error(ErrorCode::kSizeMismatch, "buffers: the descriptor has " + dec(full_->buffers.size()) +
                                                       " buffer(s), " + dec(full_buffers_.size()) + " span(s) given");
        }
        return *full_;
    }
    HURRAY_ASSIGN_OR_RETURN(TensorDescriptor d, make_dense(type_, shape_));
    if (values_) {
        HURRAY_ASSIGN_OR_RETURN(const uint64_t count, element_count(shape_));
        if (count != *values_) {
            return Error(ErrorCode::kSizeMismatch, type_and_shape(type_, shape_) + " has " + dec(count) + " element(s), " +
                                                       dec(*values_) + " value(s) given");
        }
    }
    const uint64_t need = d.buffers.empty() ? 0 : d.buffers[0].byte_size;
    if (need != data_.size()) {
        return Error(ErrorCode::kSizeMismatch, type_and_shape(type_, shape_) + " needs " + dec(need) + " byte(s) of data, " +
                                                   dec(data_.size()) + " given");
    }
    return d;
}

std::span<const std::span<const uint8_t>> TensorRef::buffers() const noexcept {
    if (full_) {
        return full_buffers_;
    }
    return {&data_, 1};
}

}  // namespace hurray
