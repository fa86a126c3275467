// SPDX-License-Identifier: Apache-2.0
#include "hurray/core/shape.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "hurray/core/checked_math.hpp"

namespace hurray {

bool has_dynamic_dim(std::span<const uint64_t> shape) noexcept {
    return std::find(shape.begin(), shape.end(), kDynamicDim) != shape.end();
}

Result<uint64_t> element_count(std::span<const uint64_t> shape) {
    if (has_dynamic_dim(shape)) {
        return Error(ErrorCode::kInvalidShape,
                     "shape: a dynamic dimension must be resolved before counting elements");
    }
    if (std::find(shape.begin(), shape.end(), 0) != shape.end()) {
        return uint64_t{0};
    }
    uint64_t n = 1;
    for (size_t k = 0; k < shape.size(); ++k) {
        auto r = mul_u64(n, shape[k]);
        if (!r) {
            return Error(ErrorCode::kSizeOverflow,
                         "shape: element count overflows 64 bits at dimension " + std::to_string(k));
        }
        n = *r;
    }
    return n;
}

Result<std::vector<int64_t>> row_major_strides(std::span<const uint64_t> shape) {
    if (has_dynamic_dim(shape)) {
        return Error(ErrorCode::kInvalidShape, "shape: a dynamic dimension has no row-major stride");
    }
    std::vector<int64_t> strides(shape.size());
    uint64_t stride = 1;
    for (size_t k = shape.size(); k-- > 0;) {
        if (stride > static_cast<uint64_t>(INT64_MAX)) {
            return Error(ErrorCode::kSizeOverflow,
                         "shape: the row-major stride of dimension " + std::to_string(k) + " exceeds int64");
        }
        strides[k] = static_cast<int64_t>(stride);
        stride = mul_u64(stride, std::max<uint64_t>(shape[k], 1)).value_or(UINT64_MAX);
    }
    return strides;
}

}  // namespace hurray
