// SPDX-License-Identifier: Apache-2.0
/// @file
/// `TensorView`: a descriptor together with the bytes of its buffers, and
/// what a program does with them — find element [i, j, k], read it, and
/// materialize the whole tensor as a dense row-major buffer
/// (docs/spec/memory-layout.md, docs/spec/layouts/*.md).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/core/space_filling_curve.hpp"
#include "hurray/core/tensor_descriptor.hpp"

namespace hurray {

/// Where one logical element is stored.
struct ElementLocation {
    /// False when a sparse layout stores no value at that index (it is zero).
    bool stored = false;
    /// The buffer holding the element (0 for dense and paged layouts, the
    /// values buffer for sparse ones).
    uint32_t buffer = 0;
    /// Byte offset in that buffer from which `element` counts.
    uint64_t byte_base = 0;
    /// Position of the element counted from `byte_base`, in elements of the
    /// storage type (packed types: in packed elements, LSB first).
    uint64_t element = 0;
    /// Field-wise equality.
    bool operator==(const ElementLocation&) const = default;
};

/// A validated, non-owning view of a tensor: its descriptor and one byte span
/// per buffer. Creating it checks that every span is as large as its buffer
/// handle declares, once; reads after that are bounds-safe.
///
/// The view refers to the descriptor and to the bytes: both must outlive it.
///
/// @code
/// std::vector<std::span<const uint8_t>> bufs = {data};
/// auto view = hurray::TensorView::make(desc, bufs);
/// double x = *view->read_double(std::vector<uint64_t>{1, 2});
/// @endcode
class TensorView {
public:
    /// Checks `buffers` against `d` (count, and each span at least the
    /// declared byte size) and builds the view. `d` must have passed
    /// `check_descriptor` (decode does this). Element types without a known
    /// size, extension layouts and composite heads cannot be viewed.
    static Result<TensorView> make(const TensorDescriptor& d,
                                   std::span<const std::span<const uint8_t>> buffers);

    /// The descriptor.
    [[nodiscard]] const TensorDescriptor& descriptor() const noexcept { return *desc_; }
    /// The bytes of buffer `i` (the declared size; the span may be larger).
    [[nodiscard]] std::span<const uint8_t> buffer(size_t i) const noexcept { return buffers_[i]; }
    /// Number of buffers.
    [[nodiscard]] size_t buffer_count() const noexcept { return buffers_.size(); }

    /// Where the element at `index` (one coordinate per dimension) is stored.
    /// Fails with `kInvalidArgument` for an index outside the shape and with
    /// `kInvalidData` when index structures (sparse pointers, block tables)
    /// point outside their buffers.
    [[nodiscard]] Result<ElementLocation> locate(std::span<const uint64_t> index) const;

    /// The raw storage bits of the element at `index` (zero-extended; 0 for an
    /// unstored sparse element). Types wider than 64 bits yield their low 64 bits.
    [[nodiscard]] Result<uint64_t> read_bits(std::span<const uint64_t> index) const;

    /// The element at `index` as a double (storage value: quantization is not
    /// applied; see dequantize.hpp). Unstored sparse elements read as 0.
    [[nodiscard]] Result<double> read_double(std::span<const uint64_t> index) const;

    /// Writes every element, in row-major logical order, as storage bytes of
    /// the tensor's element type (packed types packed LSB first, padding bits
    /// zero) into `out`, which must hold exactly `storage_bytes(type,
    /// element_count)`. Unstored sparse elements are zero bits. Row-major
    /// tensors are one memcpy; strided and column-major use blocked copies.
    [[nodiscard]] Status materialize(std::span<uint8_t> out) const;

    /// `materialize` into a new vector.
    [[nodiscard]] Result<std::vector<uint8_t>> materialize() const;

private:
    TensorView(const TensorDescriptor* d, std::vector<std::span<const uint8_t>> buffers)
        : desc_(d), buffers_(std::move(buffers)) {}

    const TensorDescriptor* desc_;
    std::vector<std::span<const uint8_t>> buffers_;
};

}  // namespace hurray
