// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the TensorView tests: owning tensors (descriptor plus
// buffer bytes), storage codes that identify each element, packing of
// expected row-major outputs, and index enumeration in any dimension order.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hurray/core/builder.hpp"
#include "hurray/core/element_convert.hpp"
#include "hurray/core/element_type.hpp"
#include "hurray/core/tensor_view.hpp"

namespace hurray_view_test {

using Bytes = std::vector<uint8_t>;
using Index = std::vector<uint64_t>;

/// A descriptor with the bytes of its buffers. Heap-allocated so that views
/// (which point at the descriptor) stay valid however the test moves it.
struct Tensor {
    hurray::TensorDescriptor d;
    std::vector<Bytes> bufs;

    [[nodiscard]] std::vector<std::span<const uint8_t>> spans() const {
        std::vector<std::span<const uint8_t>> s;
        for (const Bytes& b : bufs) {
            s.emplace_back(b);
        }
        return s;
    }
    [[nodiscard]] hurray::Result<hurray::TensorView> view() const {
        auto s = spans();
        return hurray::TensorView::make(d, s);
    }
};

/// Sizes the buffers of `d` (failing the test if it is invalid) and fills
/// each with `fill` bytes (a non-zero pattern shows reads of unaddressed bytes).
inline std::unique_ptr<Tensor> sized(hurray::TensorDescriptor d, std::span<const uint64_t> data_dependent = {},
                                     uint8_t fill = 0xA5) {
    auto r = hurray::size_buffers(std::move(d), {}, data_dependent);
    if (!r.ok()) {
        ADD_FAILURE() << "size_buffers: " << r.error().to_string();
        return nullptr;
    }
    auto t = std::make_unique<Tensor>();
    t->d = std::move(*r);
    for (const hurray::BufferHandle& h : t->d.buffers) {
        t->bufs.emplace_back(static_cast<size_t>(h.byte_size), fill);
    }
    return t;
}

/// A value of `bits` bits that identifies element `n` (a hash, so that two
/// elements swapped by a wrong mapping differ with high probability).
inline uint64_t code_of(uint64_t n, uint32_t bits) {
    const uint64_t h = (n + 1) * 0x9E3779B97F4A7C15ULL;
    const uint64_t v = (h >> 17) ^ (h << 5);
    return bits >= 64 ? v : v & ((uint64_t{1} << bits) - 1);
}

/// Storage code of element `n` for `type`: float32 gets exactly representable
/// values (n / 4 - 7), other types hashed bits (for float16/float8 also
/// NaN patterns, compared bit for bit).
inline uint64_t storage_code(hurray::ElementType type, uint64_t n) {
    if (type == hurray::ElementType::kFloat32) {
        const float f = static_cast<float>(n) / 4.0F - 7.0F;
        uint32_t u = 0;
        std::memcpy(&u, &f, 4);
        return u;
    }
    return code_of(n, std::min<uint32_t>(hurray::bit_width(type), 64));
}

/// Writes the low `bits` bits of `code` as element `pos` of a packed run, or
/// (whole-byte types) the code's little-endian bytes at byte `pos * bytes`;
/// bytes past the 8th are set to a pattern derived from the code.
inline void put_element(Bytes& b, uint32_t bits, uint64_t pos, uint64_t code) {
    if (bits % 8 != 0) {
        hurray::store_packed(b, pos, bits, static_cast<uint32_t>(code));
        return;
    }
    const size_t w = bits / 8;
    for (size_t i = 0; i < w; ++i) {
        b.at(pos * w + i) = static_cast<uint8_t>(i < 8 ? code >> (8 * i) : (code >> (i % 8)) ^ i);
    }
}

/// Writes element code at a byte address (whole-byte types).
inline void put_at_byte(Bytes& b, uint32_t bits, uint64_t addr, uint64_t code) {
    const size_t w = bits / 8;
    for (size_t i = 0; i < w; ++i) {
        b.at(addr + i) = static_cast<uint8_t>(i < 8 ? code >> (8 * i) : (code >> (i % 8)) ^ i);
    }
}

/// The low 64 bits a read of an element written by put_element returns.
inline uint64_t low_bits(uint32_t bits, uint64_t code) {
    return bits >= 64 ? code : code & ((uint64_t{1} << bits) - 1);
}

/// Every index of `shape`, in the order where dimension `order[0]` varies
/// fastest, then `order[1]`, ... Row-major: order = {r-1, ..., 0}.
inline std::vector<Index> enumerate(const std::vector<uint64_t>& shape, const std::vector<size_t>& order) {
    std::vector<Index> out;
    for (uint64_t n : shape) {
        if (n == 0) {
            return out;
        }
    }
    Index idx(shape.size(), 0);
    for (;;) {
        out.push_back(idx);
        size_t j = 0;
        for (; j < order.size(); ++j) {
            const size_t k = order[j];
            if (++idx[k] < shape[k]) {
                break;
            }
            idx[k] = 0;
        }
        if (j == order.size()) {
            return out;
        }
    }
}

inline std::vector<size_t> row_major_order(size_t rank) {
    std::vector<size_t> o;
    for (size_t k = rank; k-- > 0;) {
        o.push_back(k);
    }
    return o;
}

inline std::vector<size_t> column_major_order(size_t rank) {
    std::vector<size_t> o;
    for (size_t k = 0; k < rank; ++k) {
        o.push_back(k);
    }
    return o;
}

/// Every index of `shape` in row-major order.
inline std::vector<Index> row_major_indices(const std::vector<uint64_t>& shape) {
    return enumerate(shape, row_major_order(shape.size()));
}

/// The expected materialize() output: `codes[n]` as element n, packed.
inline Bytes pack_row_major(hurray::ElementType type, const std::vector<uint64_t>& codes) {
    const uint32_t bits = hurray::bit_width(type);
    auto size = hurray::storage_bytes(type, codes.size());
    Bytes out(size.ok() ? static_cast<size_t>(*size) : 0, 0);
    for (size_t n = 0; n < codes.size(); ++n) {
        put_element(out, bits, n, codes[n]);
    }
    return out;
}

/// Whether two doubles are the same value (NaN equals NaN).
inline bool same_double(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

/// The value `read_double` must return for storage `code` of `type`.
inline double value_of(hurray::ElementType type, uint64_t code) {
    Bytes b(16, 0);
    put_element(b, hurray::bit_width(type), 0, code);
    auto r = hurray::element_as_double(type, b, 0);
    return r.ok() ? *r : -12345.0;
}

/// "[1, 2, 3]".
inline std::string str(std::span<const uint64_t> idx) {
    std::string s = "[";
    for (size_t k = 0; k < idx.size(); ++k) {
        s += (k ? ", " : "") + std::to_string(idx[k]);
    }
    return s + "]";
}

}  // namespace hurray_view_test
