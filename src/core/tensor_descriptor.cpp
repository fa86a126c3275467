// SPDX-License-Identifier: Apache-2.0
#include "hurray/core/tensor_descriptor.hpp"

#include <bit>

namespace hurray {

bool Statistics::operator==(const Statistics& o) const {
    auto same = [](double a, double b) { return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b); };
    return computed_mask == o.computed_mask && nnz == o.nnz &&
           same(sparsity_ratio, o.sparsity_ratio) && same(value_min, o.value_min) &&
           same(value_max, o.value_max) && same(value_abs_max, o.value_abs_max) &&
           same(value_mean, o.value_mean) && same(value_stddev, o.value_stddev) &&
           nm_n == o.nm_n && nm_m == o.nm_m && has_nan == o.has_nan && has_inf == o.has_inf;
}

uint32_t TensorDescriptor::flags() const noexcept {
    uint32_t f = 0;
    if (quantization) {
        f |= kHasQuantization;
    }
    if (shard) {
        f |= kHasShard;
    }
    if (extension_type) {
        f |= kHasExtensionType;
    }
    if (statistics) {
        f |= kHasStatistics;
    }
    if (composite_member) {
        f |= kHasCompositeMember;
    }
    return f;
}

uint32_t TensorDescriptor::element_bits() const noexcept {
    if (extension_type) {
        return extension_type->bit_width;
    }
    return bit_width(element_type);
}

Result<uint64_t> TensorDescriptor::element_storage_bytes(uint64_t count) const {
    const uint32_t bits = element_bits();
    if (bits == 0) {
        return Error(ErrorCode::kUnknownElementType,
                     "type_tag: the element type has no known size");
    }
    return storage_bytes_for_bits(bits, count);
}

}  // namespace hurray
