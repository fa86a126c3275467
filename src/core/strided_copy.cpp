// SPDX-License-Identifier: Apache-2.0
// Strided-to-dense copies for materialize: merged dimensions, row copies,
// blocked transposition, and a packed (sub-byte) variant.
#include "core/strided_copy.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "hurray/core/element_convert.hpp"
#include "hurray/core/shape.hpp"

namespace hurray::detail {
namespace {

// One dimension of the copy: its size and its strides, in elements, in the
// source and in the (row-major) destination.
struct Axis {
    uint64_t n = 0;
    int64_t src = 0;
    int64_t dst = 0;
};

// Up to 64 axes, after dropping size-1 dimensions and merging neighbours that
// are contiguous with each other both in the source and in the destination.
struct Axes {
    std::array<Axis, kMaxRank> a{};
    size_t m = 0;
    bool empty = false;  // some dimension has size 0

    [[nodiscard]] std::span<const Axis> view() const noexcept { return {a.data(), m}; }
};

Axes build_axes(std::span<const uint64_t> shape, std::span<const int64_t> strides) noexcept {
    Axes out;
    const size_t rank = shape.size();
    // Destination strides of the full shape, and the kept axes, innermost first.
    std::array<Axis, kMaxRank> rev{};
    size_t m = 0;
    int64_t dst = 1;
    for (size_t i = rank; i-- > 0;) {
        const uint64_t n = shape[i];
        if (n == 0) {
            out.empty = true;
            return out;
        }
        if (n != 1) {
            Axis ax{n, strides[i], dst};
            int64_t src_span = 0;
            int64_t dst_span = 0;
            // Merge into the previous (inner) axis when this one steps exactly over it.
            if (m > 0 && !__builtin_mul_overflow(rev[m - 1].src, static_cast<int64_t>(rev[m - 1].n), &src_span) &&
                !__builtin_mul_overflow(rev[m - 1].dst, static_cast<int64_t>(rev[m - 1].n), &dst_span) &&
                src_span == ax.src && dst_span == ax.dst) {
                rev[m - 1].n *= n;
            } else {
                rev[m++] = ax;
            }
        }
        // The product of the shape is the destination size: it fits in int64.
        dst *= static_cast<int64_t>(n);
    }
    out.m = m;
    for (size_t i = 0; i < m; ++i) {
        out.a[i] = rev[m - 1 - i];
    }
    return out;
}

// Calls f(src, dst) — offsets in elements — for every index of `axes`, in
// row-major order, starting from offsets s and d.
template <typename F>
void for_each_offset(std::span<const Axis> axes, int64_t s, int64_t d, F&& f) {
    const size_t m = axes.size();
    std::array<uint64_t, kMaxRank> i{};
    for (;;) {
        f(s, d);
        size_t k = m;
        for (;;) {
            if (k == 0) {
                return;
            }
            --k;
            if (++i[k] < axes[k].n) {
                s += axes[k].src;
                d += axes[k].dst;
                break;
            }
            // Back to the start of dimension k (n - 1 steps, inside the span).
            s -= axes[k].src * static_cast<int64_t>(axes[k].n - 1);
            d -= axes[k].dst * static_cast<int64_t>(axes[k].n - 1);
            i[k] = 0;
        }
    }
}

// Copies one element of W bytes (W == 0: `width` bytes).
template <size_t W>
inline void copy_one(uint8_t* dst, const uint8_t* src, size_t width) noexcept {
    // SAFETY: callers pass addresses of elements inside the source and the
    // destination (strided_copy's preconditions); W or width bytes each.
    if constexpr (W == 0) {
        std::memcpy(dst, src, width);
    } else {
        std::memcpy(dst, src, W);
    }
}

// Byte strides of a transposition: element (i, j) is at i * a_src + j * l_src
// in the source and at i * a_dst + j * width in the destination.
struct Steps {
    int64_t a_src = 0;
    int64_t a_dst = 0;
    int64_t l_src = 0;
};

struct Range {
    uint64_t lo = 0;
    uint64_t hi = 0;
};

// Copies the tile rows x cols of a transposition. When the rows are the
// source's contiguous dimension (a_src == W), 4 x 4 blocks are moved as four
// 4-element runs in and four out, which compilers turn into vector shuffles.
template <size_t W>
void copy_tile(uint8_t* dst, const uint8_t* src, size_t w, Range rows, Range cols, const Steps& st) {
    // SAFETY (whole function): every (i, j) with i in rows and j in cols
    // addresses an element of the tensor in the source and in the destination
    // (strided_copy's preconditions); a 4-element run at (i, j) covers
    // (i..i+3, j) in the source when a_src == W and (i, j..j+3) in the destination.
    uint64_t i = rows.lo;
    if constexpr (W != 0) {
        if (st.a_src == static_cast<int64_t>(W)) {
            for (; i + 4 <= rows.hi; i += 4) {
                const uint8_t* sp = src + static_cast<int64_t>(i) * st.a_src;
                uint64_t j = cols.lo;
                for (; j + 4 <= cols.hi; j += 4) {
                    std::array<std::array<uint8_t, 4 * W>, 4> in{};
                    for (size_t c = 0; c < 4; ++c) {
                        std::memcpy(in[c].data(), sp + static_cast<int64_t>(j + c) * st.l_src, 4 * W);
                    }
                    for (size_t q = 0; q < 4; ++q) {
                        std::array<uint8_t, 4 * W> out{};
                        for (size_t c = 0; c < 4; ++c) {
                            std::memcpy(out.data() + c * W, in[c].data() + q * W, W);
                        }
                        std::memcpy(dst + static_cast<int64_t>(i + q) * st.a_dst + j * W, out.data(), 4 * W);
                    }
                }
                for (; j < cols.hi; ++j) {
                    for (uint64_t q = 0; q < 4; ++q) {
                        copy_one<W>(dst + static_cast<int64_t>(i + q) * st.a_dst + j * W,
                                    sp + static_cast<int64_t>(q) * st.a_src + static_cast<int64_t>(j) * st.l_src, w);
                    }
                }
            }
        }
    }
    for (; i < rows.hi; ++i) {
        const uint8_t* sp = src + static_cast<int64_t>(i) * st.a_src;
        uint8_t* dp = dst + static_cast<int64_t>(i) * st.a_dst;
        for (uint64_t j = cols.lo; j < cols.hi; ++j) {
            copy_one<W>(dp + j * w, sp + static_cast<int64_t>(j) * st.l_src, w);
        }
    }
}

template <size_t W>
void copy_axes(uint8_t* dst, const uint8_t* src, size_t width, const Axes& ax) {
    const size_t w = W == 0 ? width : W;
    const std::span<const Axis> axes = ax.view();
    const size_t m = axes.size();
    if (m == 0) {
        copy_one<W>(dst, src, w);
        return;
    }
    const Axis last = axes[m - 1];
    const auto w64 = static_cast<int64_t>(w);
    if (last.src == 1) {
        // Contiguous rows (the whole tensor when everything merged into one axis).
        const size_t row = static_cast<size_t>(last.n) * w;
        for_each_offset(axes.first(m - 1), 0, 0, [&](int64_t s, int64_t d) {
            // SAFETY: s and d are offsets of the first element of a row; the
            // row's n elements are contiguous in both (preconditions).
            std::memcpy(dst + d * w64, src + s * w64, row);
        });
        return;
    }
    // The outer axis that moves least in memory, if it moves less than the innermost.
    auto magnitude = [](int64_t v) { return v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v); };
    size_t best = m;
    uint64_t best_step = magnitude(last.src);
    for (size_t k = 0; k + 1 < m; ++k) {
        if (magnitude(axes[k].src) < best_step) {
            best = k;
            best_step = magnitude(axes[k].src);
        }
    }
    if (best == m) {
        // Gather along the innermost axis.
        for_each_offset(axes.first(m - 1), 0, 0, [&](int64_t s, int64_t d) {
            // SAFETY: every (s + j * last.src, d + j) with j < n addresses an
            // element of the tensor (preconditions).
            const uint8_t* sp = src + s * w64;
            uint8_t* dp = dst + d * w64;
            const int64_t step = last.src * w64;
            for (uint64_t j = 0; j < last.n; ++j) {
                copy_one<W>(dp + j * w, sp + static_cast<int64_t>(j) * step, w);
            }
        });
        return;
    }
    // Blocked transposition of (axes[best], last), in square tiles of 128
    // bytes a side (32 x 32 float32), so that the source and destination
    // lines of a tile stay in L1 while it is copied.
    std::array<Axis, kMaxRank> rest{};
    size_t r = 0;
    for (size_t k = 0; k + 1 < m; ++k) {
        if (k != best) {
            rest[r++] = axes[k];
        }
    }
    const Axis a = axes[best];
    const uint64_t block = std::max<uint64_t>(8, 128 / w);
    const Steps steps{a.src * w64, a.dst * w64, last.src * w64};
    for_each_offset(std::span<const Axis>(rest.data(), r), 0, 0, [&](int64_t s, int64_t d) {
        const uint8_t* sbase = src + s * w64;
        uint8_t* dbase = dst + d * w64;
        for (uint64_t i0 = 0; i0 < a.n; i0 += block) {
            for (uint64_t j0 = 0; j0 < last.n; j0 += block) {
                copy_tile<W>(dbase, sbase, w, {i0, std::min(a.n, i0 + block)}, {j0, std::min(last.n, j0 + block)},
                             steps);
            }
        }
    });
}

}  // namespace

void strided_copy(uint8_t* dst, const uint8_t* src, size_t width, std::span<const uint64_t> shape,
                  std::span<const int64_t> strides) noexcept {
    const Axes ax = build_axes(shape, strides);
    if (ax.empty) {
        return;
    }
    switch (width) {
        case 1: copy_axes<1>(dst, src, width, ax); break;
        case 2: copy_axes<2>(dst, src, width, ax); break;
        case 4: copy_axes<4>(dst, src, width, ax); break;
        case 8: copy_axes<8>(dst, src, width, ax); break;
        case 16: copy_axes<16>(dst, src, width, ax); break;
        default: copy_axes<0>(dst, src, width, ax); break;
    }
}

void strided_copy_packed(std::span<uint8_t> dst, std::span<const uint8_t> src, uint64_t origin, uint32_t bits,
                         std::span<const uint64_t> shape, std::span<const int64_t> strides) noexcept {
    const Axes ax = build_axes(shape, strides);
    if (ax.empty) {
        return;
    }
    const std::span<const Axis> axes = ax.view();
    const size_t m = axes.size();
    if (m == 0) {
        store_packed(dst, 0, bits, load_packed(src, origin, bits));
        return;
    }
    const Axis last = axes[m - 1];
    const uint64_t first_bit = origin * bits;
    if (m == 1 && last.src == 1 && first_bit % 8 == 0) {
        // One contiguous run starting on a byte boundary: copy its bytes, then
        // clear the bits after its last element.
        const uint64_t nbits = last.n * bits;
        const auto nbytes = static_cast<size_t>((nbits + 7) / 8);
        // SAFETY: the run's bits [first_bit, first_bit + nbits) lie inside src
        // and (from bit 0) inside dst (preconditions); nbytes covers exactly them.
        std::memcpy(dst.data(), src.data() + first_bit / 8, nbytes);
        if (nbits % 8 != 0) {
            dst[nbytes - 1] = static_cast<uint8_t>(dst[nbytes - 1] & ((1U << (nbits % 8)) - 1));
        }
        return;
    }
    const auto base = static_cast<int64_t>(origin);
    for_each_offset(axes.first(m - 1), base, 0, [&](int64_t s, int64_t d) {
        for (uint64_t j = 0; j < last.n; ++j) {
            // Non-negative and inside src by the preconditions.
            const auto from = static_cast<uint64_t>(s + static_cast<int64_t>(j) * last.src);
            store_packed(dst, static_cast<uint64_t>(d) + j, bits, load_packed(src, from, bits));
        }
    });
}

}  // namespace hurray::detail
