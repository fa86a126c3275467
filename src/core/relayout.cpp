// SPDX-License-Identifier: Apache-2.0
// Row-major bytes laid out in another layout (relayout.hpp).
#include "hurray/core/relayout.hpp"

#include <algorithm>
#include <string>

#include "core/strided_copy.hpp"
#include "hurray/core/shape.hpp"

namespace hurray {

Result<std::vector<uint8_t>> column_major_from_row_major(ElementType type, std::span<const uint64_t> shape,
                                                         std::span<const uint8_t> row_major) {
    if (shape.size() > 64) {
        return Error(ErrorCode::kRankTooLarge, "column_major_from_row_major: rank " + std::to_string(shape.size()) +
                                                   " exceeds 64");
    }
    HURRAY_ASSIGN_OR_RETURN(const uint64_t count, element_count(shape));
    HURRAY_ASSIGN_OR_RETURN(const uint64_t bytes, storage_bytes(type, count));
    if (row_major.size() != bytes) {
        return Error(ErrorCode::kSizeMismatch, "column_major_from_row_major: " + std::to_string(row_major.size()) +
                                                   " bytes given, the shape needs " + std::to_string(bytes));
    }
    const uint32_t bits = bit_width(type);
    if (bits == 0) {
        return Error(ErrorCode::kUnsupported, "column_major_from_row_major: element type of unknown width");
    }
    if (shape.size() <= 1 || count == 0) {
        return std::vector<uint8_t>(row_major.begin(), row_major.end());
    }
    // Column-major order of the tensor is the row-major order of its
    // transpose (the axes reversed): output element (j[r-1], ..., j[0]) is
    // input element (j[0], ..., j[r-1]), at sum(j[k] * rm[k]) where rm are
    // the row-major strides. Each stride is at most `count`, which fits in
    // memory, so in int64.
    const size_t rank = shape.size();
    std::vector<uint64_t> reversed(shape.rbegin(), shape.rend());
    std::vector<int64_t> strides(rank);
    uint64_t stride = 1;
    for (size_t k = rank; k-- > 0;) {
        strides[rank - 1 - k] = static_cast<int64_t>(stride);
        stride *= shape[k];
    }
    std::vector<uint8_t> out(static_cast<size_t>(bytes), 0);
    if (bits % 8 == 0) {
        // SAFETY: the addressed input elements are the row-major tensor's own
        // (every index in bounds, strides its row-major ones), which
        // `row_major` holds exactly; `out` holds `count` elements.
        detail::strided_copy(out.data(), row_major.data(), bits / 8, reversed, strides);
    } else {
        detail::strided_copy_packed(out, row_major, 0, bits, reversed, strides);
    }
    return out;
}

}  // namespace hurray
