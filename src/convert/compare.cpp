// SPDX-License-Identifier: Apache-2.0
// compare_sources: two TensorSources hold the same tensors with the same values.
#include "convert/compare.hpp"

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "convert/guard.hpp"
#include "convert/materialize.hpp"
#include "hurray/convert/convert.hpp"
#include "hurray/core/describe.hpp"
#include "hurray/core/element_convert.hpp"

namespace hurray::convert {
namespace {

/// Bytes compared at a time.
constexpr uint64_t kCompareChunk = uint64_t{4} << 20;

std::string shape_text(const Shape& shape) {
    std::string s = "[";
    for (size_t k = 0; k < shape.size(); ++k) {
        s += (k == 0 ? "" : ", ") + std::to_string(shape[k]);
    }
    return s + "]";
}

std::string float_text(float v) {
    char buf[64];
    // SAFETY: buf has room for any %.9g rendering of a float and its bit pattern.
    std::snprintf(buf, sizeof buf, "%.9g (0x%08" PRIx32 ")", static_cast<double>(v),
                  std::bit_cast<uint32_t>(v));
    return buf;
}

/// "0x" and the bytes in hex.
std::string bytes_text(std::span<const uint8_t> b) { return "0x" + hex_bytes(b); }

Error mismatch(const std::string& name, const std::string& what) {
    return {ErrorCode::kInvalidData, "tensor '" + name + "': " + what};
}

/// The value of the element at flat index `index` of a plain dense tensor, as text.
std::string element_text(const TensorSource& s, size_t i, uint64_t index) {
    const TensorDescriptor& d = s.tensor(i).descriptor;
    const uint32_t bits = d.element_bits();
    if (bits == 0) {
        return "?";
    }
    // The bytes that hold the element (a packed element lies in at most 2 bytes).
    const uint64_t first_bit = index * bits;
    const uint64_t first = first_bit / 8;
    const uint64_t last = (first_bit + bits - 1) / 8;
    std::vector<uint8_t> bytes(static_cast<size_t>(last - first + 1));
    if (!s.read(i, 0, first, bytes)) {
        return "?";
    }
    const uint64_t sub = bits % 8 == 0 ? 0 : (first_bit - first * 8) / bits;
    if (bits % 8 != 0 && (first_bit - first * 8) % bits != 0) {
        return bytes_text(bytes);  // a 6-bit element not aligned to a byte in this window
    }
    auto v = element_as_double(d.element_type, bytes, sub);
    if (!v) {
        return bytes_text(bytes);
    }
    char buf[64];
    // SAFETY: buf has room for any %.17g rendering of a double.
    std::snprintf(buf, sizeof buf, "%.17g", *v);
    return std::string(buf) + " (" + bytes_text(bytes) + ")";
}

/// Byte-for-byte comparison of every buffer. Returns the byte offset of the first
/// difference in buffer `*diff_buffer`, or nullopt when equal.
Result<std::optional<uint64_t>> compare_bytes(const TensorSource& a, size_t ia,
                                              const TensorSource& b, size_t ib,
                                              size_t& diff_buffer) {
    const auto& bufs = a.tensor(ia).descriptor.buffers;
    std::vector<uint8_t> ca;
    std::vector<uint8_t> cb;
    for (size_t k = 0; k < bufs.size(); ++k) {
        const uint64_t size = bufs[k].byte_size;
        const auto va = a.view(ia, k);
        const auto vb = b.view(ib, k);
        for (uint64_t pos = 0; pos < size;) {
            const auto n = static_cast<size_t>(std::min(kCompareChunk, size - pos));
            std::span<const uint8_t> pa;
            std::span<const uint8_t> pb;
            if (va && va->size() >= size) {
                pa = va->subspan(static_cast<size_t>(pos), n);
            } else {
                ca.resize(n);
                HURRAY_RETURN_IF_ERROR(a.read(ia, k, pos, ca));
                pa = ca;
            }
            if (vb && vb->size() >= size) {
                pb = vb->subspan(static_cast<size_t>(pos), n);
            } else {
                cb.resize(n);
                HURRAY_RETURN_IF_ERROR(b.read(ib, k, pos, cb));
                pb = cb;
            }
            if (std::memcmp(pa.data(), pb.data(), n) != 0) {
                const auto it = std::mismatch(pa.begin(), pa.end(), pb.begin());
                diff_buffer = k;
                return std::optional<uint64_t>(pos + static_cast<uint64_t>(it.first - pa.begin()));
            }
            pos += n;
        }
    }
    return std::optional<uint64_t>();
}

/// Element-by-element comparison after conversion to float32.
Status compare_values(const TensorSource& a, size_t ia, const TensorSource& b, size_t ib) {
    const std::string& name = a.tensor(ia).name;
    HURRAY_ASSIGN_OR_RETURN(const std::vector<float> va, detail::to_float32(a, ia));
    HURRAY_ASSIGN_OR_RETURN(const std::vector<float> vb, detail::to_float32(b, ib));
    if (va.size() != vb.size()) {
        return mismatch(name,
                        std::to_string(va.size()) + " values against " + std::to_string(vb.size()));
    }
    for (size_t k = 0; k < va.size(); ++k) {
        const bool same = std::bit_cast<uint32_t>(va[k]) == std::bit_cast<uint32_t>(vb[k]) ||
                          (std::isnan(va[k]) && std::isnan(vb[k]));
        if (!same) {
            return mismatch(name, "element " + std::to_string(k) +
                                      " differs: " + float_text(va[k]) + " against " +
                                      float_text(vb[k]) + " (as float32)");
        }
    }
    return {};
}

Status compare_tensor(const TensorSource& a, size_t ia, const TensorSource& b, size_t ib) {
    const SourceTensor& ta = a.tensor(ia);
    const SourceTensor& tb = b.tensor(ib);
    if (ta.descriptor.shape != tb.descriptor.shape) {
        return mismatch(ta.name, "shape " + shape_text(ta.descriptor.shape) + " against " +
                                     shape_text(tb.descriptor.shape));
    }
    const bool same_descriptor = ta.descriptor == tb.descriptor;
    const bool both_plain = detail::is_plain_dense(ta.descriptor) &&
                            detail::is_plain_dense(tb.descriptor) &&
                            ta.descriptor.element_type == tb.descriptor.element_type;
    if (!same_descriptor && !both_plain) {
        return compare_values(a, ia, b, ib);
    }
    size_t buffer = 0;
    HURRAY_ASSIGN_OR_RETURN(const std::optional<uint64_t> diff,
                            compare_bytes(a, ia, b, ib, buffer));
    if (!diff) {
        return {};
    }
    if (!both_plain) {
        // Same descriptor, different bytes: the values decide (bytes that no element
        // uses, such as unstored slots, may differ).
        return compare_values(a, ia, b, ib);
    }
    const uint32_t bits = ta.descriptor.element_bits();
    const uint64_t index = bits == 0 ? 0 : *diff * 8 / bits;
    return mismatch(ta.name, "element " + std::to_string(index) + " differs (byte " +
                                 std::to_string(*diff) + "): " + element_text(a, ia, index) +
                                 " against " + element_text(b, ib, index));
}

}  // namespace

Status detail::compare_sources_impl(const TensorSource& a, const TensorSource& b,
                                    bool compare_names) {
    const size_t n = std::min(a.tensor_count(), b.tensor_count());
    for (size_t i = 0; i < n; ++i) {
        if (compare_names && a.tensor(i).name != b.tensor(i).name) {
            return Error(ErrorCode::kInvalidData, "tensor " + std::to_string(i) + ": named '" +
                                                      a.tensor(i).name + "' in one source, '" +
                                                      b.tensor(i).name + "' in the other");
        }
        HURRAY_RETURN_IF_ERROR(compare_tensor(a, i, b, i));
    }
    if (a.tensor_count() != b.tensor_count()) {
        const TensorSource& longer = a.tensor_count() > b.tensor_count() ? a : b;
        return Error(ErrorCode::kInvalidData,
                     std::to_string(a.tensor_count()) + " tensors against " +
                         std::to_string(b.tensor_count()) + ": tensor '" + longer.tensor(n).name +
                         "' is only in one source");
    }
    return {};
}

Status compare_sources(const TensorSource& a, const TensorSource& b) {
    return detail::guarded("compare",
                           [&]() -> Status { return detail::compare_sources_impl(a, b, true); });
}

}  // namespace hurray::convert
