// SPDX-License-Identifier: Apache-2.0
/// @file
/// `TensorRef`: a tensor to be written, referring to the caller's memory — a
/// typed span plus a shape for the common dense case, or a full descriptor
/// plus its buffers for any layout and quantization.
#pragma once

#include "hurray/core/export.hpp"
#include <cstdint>
#include <memory>
#include <optional>
#include <ranges>
#include <span>
#include <type_traits>
#include <vector>

#include "hurray/core/element_of.hpp"
#include "hurray/core/result.hpp"
#include "hurray/core/shape.hpp"
#include "hurray/core/tensor_descriptor.hpp"

namespace hurray {

/// The bytes of a contiguous range of elements (not `bool`, whose C++ layout is
/// not Hurray's bit-packed one), as the `std::span<const uint8_t>` buffer spans
/// of `FileWriter`, `StreamWriter` and `TensorView` take them. No copy.
///
/// @code
/// std::vector<hurray::float16_t> scales = hurray::to_float16(s);
/// const std::span<const uint8_t> bufs[] = {codes, hurray::byte_span(scales)};
/// @endcode
template <std::ranges::contiguous_range R>
    requires TensorElement<std::ranges::range_value_t<R>> && std::ranges::sized_range<R> &&
             (!std::is_same_v<std::remove_cv_t<std::ranges::range_value_t<R>>, bool>)
std::span<const uint8_t> byte_span(const R& values) noexcept {
    // SAFETY: TensorElement types other than bool are trivially copyable with no
    // padding; their object representation viewed as bytes is defined.
    return {reinterpret_cast<const uint8_t*>(std::ranges::data(values)),
            std::ranges::size(values) * sizeof(std::ranges::range_value_t<R>)};
}

/// A tensor to be written (by `hurray::save`, a `FileWriter` or a
/// `StreamWriter`): its descriptor and the bytes of its buffers.
///
/// Like `std::span`, it refers to memory it does not own: the data must stay
/// alive and unchanged until the tensor is written. The one exception is
/// `bool`, whose one-byte-per-value C++ layout differs from Hurray's bit-packed
/// bool type: a `TensorRef` of `bool` values packs them into storage it owns.
///
/// Nothing is checked when it is built: `descriptor()` (and so `save`)
/// reports a shape whose element count disagrees with the data, a dynamic
/// dimension or a size overflow, naming the sizes involved.
///
/// @code
/// std::vector<float> w(6, 0.5F);
/// hurray::TensorRef a(w, {2, 3});                 // float32[2, 3], dense row-major
/// hurray::TensorRef b(w);                         // float32[6]
/// std::vector<hurray::float16_t> h = hurray::to_float16(w);
/// hurray::TensorRef c(h, {3, 2});                 // float16[3, 2]
/// auto d = hurray::TensorRef::from_bytes(hurray::ElementType::kInt4, {4}, packed);  // 2 bytes
/// @endcode
class HURRAY_CORE_EXPORT TensorRef {
public:
    /// An empty float32 tensor of shape [0].
    TensorRef() = default;

    /// Dense row-major values of `T` with the given shape (row-major: the
    /// last dimension varies fastest, as in NumPy and PyTorch).
    template <TensorElement T>
    TensorRef(std::span<const T> values, Shape shape)
        : type_(element_type_of<T>()), shape_(std::move(shape)), values_(values.size()) {
        if constexpr (std::is_same_v<std::remove_cv_t<T>, bool>) {
            pack_bools(values.data(), values.size());
        } else {
            // SAFETY: every TensorElement type is trivially copyable with no
            // padding; viewing its object representation as bytes is defined.
            data_ = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(values.data()), values.size_bytes());
        }
    }

    /// Dense row-major values from any contiguous range (`std::vector`,
    /// `std::array`, `std::span`, ...) with the given shape.
    template <std::ranges::contiguous_range R>
        requires TensorElement<std::ranges::range_value_t<R>> && std::ranges::sized_range<R>
    TensorRef(const R& values, Shape shape)
        : TensorRef(std::span<const std::ranges::range_value_t<R>>(std::ranges::data(values), std::ranges::size(values)),
                    std::move(shape)) {}

    /// A one-dimensional tensor holding every value of `values`.
    template <std::ranges::contiguous_range R>
        requires TensorElement<std::ranges::range_value_t<R>> && std::ranges::sized_range<R>
    explicit TensorRef(const R& values)
        : TensorRef(values, Shape{static_cast<uint64_t>(std::ranges::size(values))}) {}

    /// `std::vector<bool>` stores bits in its own way; copy it into a
    /// `std::vector<uint8_t>` of 0/1 values or a `bool` array first.
    template <typename A>
    TensorRef(const std::vector<bool, A>&, Shape) = delete;

    /// Dense row-major storage bytes of any built-in element type, packed
    /// types included (e.g. int4: two values per byte, low nibble first).
    ///
    /// @code
    /// std::vector<uint8_t> packed = {0x21, 0x43};  // int4 values 1, 2, 3, 4
    /// auto t = hurray::TensorRef::from_bytes(hurray::ElementType::kInt4, {4}, packed);
    /// @endcode
    static TensorRef from_bytes(ElementType type, Shape shape, std::span<const uint8_t> bytes);

    /// Any tensor: a descriptor (any layout, quantization, optional
    /// sections) and one span per entry of its buffer table, each exactly the
    /// declared `byte_size` (checked when written). The descriptor is copied;
    /// the spans' bytes are not.
    ///
    /// @code
    /// auto d = hurray::make_per_block_quantized(hurray::ElementType::kInt4, {64, 64}, 1, 32);
    /// std::span<const uint8_t> bufs[] = {codes, scales};
    /// auto t = hurray::TensorRef::from_descriptor(*d, bufs);
    /// @endcode
    static TensorRef from_descriptor(TensorDescriptor descriptor, std::span<const std::span<const uint8_t>> buffers);

    /// The element type.
    [[nodiscard]] ElementType element_type() const noexcept;
    /// The shape.
    [[nodiscard]] std::span<const uint64_t> shape() const noexcept;

    /// The descriptor that will be written: for the dense forms, a dense
    /// row-major descriptor whose single buffer is exactly the data. Fails
    /// with `kSizeMismatch` when the data's size disagrees with the shape,
    /// and with the codes of `make_dense` for invalid shapes.
    [[nodiscard]] Result<TensorDescriptor> descriptor() const;

    /// One span per buffer of `descriptor()`; refers to this object (valid
    /// while it lives and is not moved).
    [[nodiscard]] std::span<const std::span<const uint8_t>> buffers() const noexcept;

private:
    void pack_bools(const bool* values, size_t count);

    ElementType type_ = ElementType::kFloat32;
    Shape shape_{0};
    std::span<const uint8_t> data_{};
    std::optional<uint64_t> values_{};                    // values given to a typed constructor
    std::optional<TensorDescriptor> full_{};              // from_descriptor
    std::vector<std::span<const uint8_t>> full_buffers_{};  // from_descriptor
    std::shared_ptr<const std::vector<uint8_t>> owned_{};  // packed bools
};

}  // namespace hurray
