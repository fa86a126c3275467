// SPDX-License-Identifier: Apache-2.0
// Sparse layouts: element lookup (COO binary search or linear scan, CSR/CSC
// binary search within a row/column, CSF per-level binary search in
// mode_order) and materialization (zero-fill, then scatter).
#include "core/sparse_lookup.hpp"

#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/element_slot.hpp"
#include "core/index_array.hpp"
#include "hurray/core/shape.hpp"
#include "hurray/core/text.hpp"

namespace hurray::detail {
namespace {

Error invalid(std::string message) { return {ErrorCode::kInvalidData, std::move(message)}; }

// The layout's name for messages ("coo", "csr", ...).
std::string lname(const TensorDescriptor& d) { return std::string(layout_name(d.layout_tag())); }

// Checks once that values [0, nnz) lie in buffer 0; then run_location(k) for
// any k < nnz is in bounds.
Status check_values(const TensorView& v, ElementGeometry g, uint64_t nnz) {
    if (nnz == 0 || location_fits(g, v.buffer(0), run_location(g, 0, nnz - 1))) {
        return Status::success();
    }
    return invalid(lname(v.descriptor()) + ": buffer 0 (values, " + dec(v.buffer(0).size()) +
                   " bytes) does not hold nnz = " + dec(nnz) + " elements");
}

// The entries [ptr[i], ptr[i+1]) that a pointer array gives parent i, checked
// to be a valid range of `target` below `limit`.
struct Slice {
    uint64_t lo = 0;
    uint64_t hi = 0;
};

Result<Slice> pointer_slice(const TensorDescriptor& d, const IndexArray& ptr, uint64_t i, const IndexArray& target,
                            uint64_t limit) {
    HURRAY_ASSIGN_OR_RETURN(uint64_t lo, ptr.at(i));
    HURRAY_ASSIGN_OR_RETURN(uint64_t hi, ptr.at(i + 1));
    if (lo > hi) {
        return invalid(lname(d) + ": " + ptr.entry(i) + " = " + dec(lo) + " exceeds " + ptr.entry(i + 1) + " = " +
                       dec(hi) + " (buffer " + dec(ptr.buffer()) + "): pointers must not decrease");
    }
    if (hi > limit) {
        return invalid(lname(d) + ": " + ptr.entry(i + 1) + " = " + dec(hi) + " (buffer " + dec(ptr.buffer()) +
                       ") exceeds the " + dec(limit) + " entries of " + target.name());
    }
    HURRAY_RETURN_IF_ERROR(target.check_range(lo, hi - lo));
    return Slice{lo, hi};
}

// Position of `key` among the sorted entries [lo, hi) of `a` (a checked range).
std::optional<uint64_t> find_sorted(const IndexArray& a, uint64_t lo, uint64_t hi, uint64_t key) noexcept {
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        const uint64_t v = a[mid];
        if (v == key) {
            return mid;
        }
        if (v < key) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return std::nullopt;
}

Error coordinate_out_of_shape(const TensorDescriptor& d, const IndexArray& a, uint64_t i, uint64_t value, size_t dim) {
    return invalid(lname(d) + ": " + a.entry(i) + " = " + dec(value) + " (buffer " + dec(a.buffer()) +
                   ") is outside shape[" + dec(dim) + "] = " + dec(d.shape[dim]));
}

// ---------------------------------------------------------------------------
// COO

Result<IndexArray> coo_indices(const TensorView& v, uint64_t nnz) {
    const TensorDescriptor& d = v.descriptor();
    IndexArray idx(v.buffer(1), 8, "indices", 1);
    uint64_t entries = 0;
    if (__builtin_mul_overflow(nnz, uint64_t{d.rank()}, &entries)) {
        return invalid("coo: nnz x rank overflows 64 bits");
    }
    HURRAY_RETURN_IF_ERROR(idx.check_range(0, entries));
    return idx;
}

// Compares stored tuple k with `index`, lexicographically (dimension 0 major).
int coo_compare(const IndexArray& idx, uint64_t k, std::span<const uint64_t> index) noexcept {
    const uint64_t rank = index.size();
    for (uint64_t dim = 0; dim < rank; ++dim) {
        const uint64_t v = idx[k * rank + dim];
        if (v != index[dim]) {
            return v < index[dim] ? -1 : 1;
        }
    }
    return 0;
}

Result<ElementLocation> coo_locate(const TensorView& v, const CooLayout& l, std::span<const uint64_t> index) {
    const ElementGeometry g = ElementGeometry::of(v.descriptor());
    HURRAY_RETURN_IF_ERROR(check_values(v, g, l.nnz));
    HURRAY_ASSIGN_OR_RETURN(IndexArray idx, coo_indices(v, l.nnz));
    if (l.is_sorted) {
        uint64_t lo = 0;
        uint64_t hi = l.nnz;
        while (lo < hi) {
            const uint64_t mid = lo + (hi - lo) / 2;
            const int c = coo_compare(idx, mid, index);
            if (c == 0) {
                return run_location(g, 0, mid);
            }
            if (c < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return ElementLocation{};
    }
    for (uint64_t k = 0; k < l.nnz; ++k) {
        if (coo_compare(idx, k, index) == 0) {
            return run_location(g, 0, k);
        }
    }
    return ElementLocation{};
}

Status coo_materialize(const TensorView& v, const CooLayout& l, std::span<uint8_t> out) {
    const TensorDescriptor& d = v.descriptor();
    const ElementGeometry g = ElementGeometry::of(d);
    HURRAY_RETURN_IF_ERROR(check_values(v, g, l.nnz));
    HURRAY_ASSIGN_OR_RETURN(IndexArray idx, coo_indices(v, l.nnz));
    HURRAY_ASSIGN_OR_RETURN(const std::vector<int64_t> rs, row_major_strides(d.shape));
    const uint64_t rank = d.rank();
    for (uint64_t k = 0; k < l.nnz; ++k) {
        uint64_t n = 0;
        for (uint64_t dim = 0; dim < rank; ++dim) {
            const uint64_t c = idx[k * rank + dim];
            if (c >= d.shape[dim]) {
                return coordinate_out_of_shape(d, idx, k * rank + dim, c, dim);
            }
            n += c * static_cast<uint64_t>(rs[dim]);
        }
        copy_element(g, v.buffer(0), run_location(g, 0, k), out, n);
    }
    return Status::success();
}

// ---------------------------------------------------------------------------
// CSR and CSC: the compressed dimension `major` (0 for CSR, 1 for CSC) has a
// pointer array in buffer 2; the other dimension's coordinates are in buffer 1.

struct Compressed {
    IndexArray ptr;
    IndexArray crd;
    size_t major = 0;
    uint64_t nnz = 0;
};

Compressed compressed(const TensorView& v) {
    const bool csr = std::holds_alternative<CsrLayout>(v.descriptor().layout);
    const uint64_t nnz = csr ? std::get<CsrLayout>(v.descriptor().layout).nnz
                             : std::get<CscLayout>(v.descriptor().layout).nnz;
    return {IndexArray(v.buffer(2), 8, csr ? "row_ptr" : "col_ptr", 2),
            IndexArray(v.buffer(1), 8, csr ? "col_indices" : "row_indices", 1), csr ? 0U : 1U, nnz};
}

Result<ElementLocation> compressed_locate(const TensorView& v, std::span<const uint64_t> index) {
    const TensorDescriptor& d = v.descriptor();
    const ElementGeometry g = ElementGeometry::of(d);
    const Compressed c = compressed(v);
    HURRAY_RETURN_IF_ERROR(check_values(v, g, c.nnz));
    HURRAY_ASSIGN_OR_RETURN(Slice s, pointer_slice(d, c.ptr, index[c.major], c.crd, c.nnz));
    if (auto pos = find_sorted(c.crd, s.lo, s.hi, index[1 - c.major])) {
        return run_location(g, 0, *pos);
    }
    return ElementLocation{};
}

Status compressed_materialize(const TensorView& v, std::span<uint8_t> out) {
    const TensorDescriptor& d = v.descriptor();
    const ElementGeometry g = ElementGeometry::of(d);
    const Compressed c = compressed(v);
    HURRAY_RETURN_IF_ERROR(check_values(v, g, c.nnz));
    const size_t minor = 1 - c.major;
    const uint64_t cols = d.shape[1];
    for (uint64_t i = 0; i < d.shape[c.major]; ++i) {
        HURRAY_ASSIGN_OR_RETURN(Slice s, pointer_slice(d, c.ptr, i, c.crd, c.nnz));
        for (uint64_t j = s.lo; j < s.hi; ++j) {
            const uint64_t other = c.crd[j];
            if (other >= d.shape[minor]) {
                return coordinate_out_of_shape(d, c.crd, j, other, minor);
            }
            const uint64_t n = c.major == 0 ? i * cols + other : other * cols + i;
            copy_element(g, v.buffer(0), run_location(g, 0, j), out, n);
        }
    }
    return Status::success();
}

// ---------------------------------------------------------------------------
// CSF: level L stores dimension mode_order[L]; pos_L is buffer 2L+1, crd_L
// buffer 2L+2.

IndexArray csf_pos(const TensorView& v, uint32_t level) {
    return {v.buffer(2 * size_t{level} + 1), 8, "pos", 2 * level + 1, static_cast<int>(level)};
}
IndexArray csf_crd(const TensorView& v, uint32_t level) {
    return {v.buffer(2 * size_t{level} + 2), 8, "crd", 2 * level + 2, static_cast<int>(level)};
}

Result<ElementLocation> csf_locate(const TensorView& v, const CsfLayout& l, std::span<const uint64_t> index) {
    const TensorDescriptor& d = v.descriptor();
    const ElementGeometry g = ElementGeometry::of(d);
    HURRAY_RETURN_IF_ERROR(check_values(v, g, l.nnz));
    const uint32_t rank = d.rank();
    uint64_t p = 0;  // the virtual root
    for (uint32_t level = 0; level < rank; ++level) {
        const IndexArray pos = csf_pos(v, level);
        const IndexArray crd = csf_crd(v, level);
        HURRAY_ASSIGN_OR_RETURN(Slice s, pointer_slice(d, pos, p, crd, crd.size()));
        auto found = find_sorted(crd, s.lo, s.hi, index[l.mode_order[level]]);
        if (!found) {
            return ElementLocation{};
        }
        p = *found;
    }
    if (p >= l.nnz) {
        return invalid("csf: leaf position " + dec(p) + " (crd_" + dec(rank - 1) + ", buffer " +
                       dec(2 * uint64_t{rank}) + ") is not below nnz = " + dec(l.nnz));
    }
    return run_location(g, 0, p);
}

Status csf_materialize(const TensorView& v, const CsfLayout& l, std::span<uint8_t> out) {
    const TensorDescriptor& d = v.descriptor();
    const ElementGeometry g = ElementGeometry::of(d);
    HURRAY_RETURN_IF_ERROR(check_values(v, g, l.nnz));
    const uint32_t rank = d.rank();
    HURRAY_ASSIGN_OR_RETURN(const std::vector<int64_t> rs, row_major_strides(d.shape));
    // Depth-first, leaf order. frame[L] walks the children [i, end) of the
    // current level-(L-1) node; partial[L] is the row-major offset of the
    // coordinates chosen above level L. Slices of one level must follow each
    // other (next_lo), which bounds the walk by the size of the crd arrays
    // even when pos arrays are corrupt.
    std::array<Slice, kMaxRank> frame{};
    std::array<uint64_t, kMaxRank + 1> partial{};
    std::array<uint64_t, kMaxRank> next_lo{};
    HURRAY_ASSIGN_OR_RETURN(frame[0], pointer_slice(d, csf_pos(v, 0), 0, csf_crd(v, 0), csf_crd(v, 0).size()));
    uint32_t level = 0;
    for (;;) {
        Slice& f = frame[level];
        if (f.lo == f.hi) {
            if (level == 0) {
                return Status::success();
            }
            --level;
            ++frame[level].lo;
            continue;
        }
        const IndexArray crd = csf_crd(v, level);
        const uint64_t i = f.lo;
        const uint32_t dim = l.mode_order[level];
        const uint64_t c = crd[i];
        if (c >= d.shape[dim]) {
            return coordinate_out_of_shape(d, crd, i, c, dim);
        }
        const uint64_t n = partial[level] + c * static_cast<uint64_t>(rs[dim]);
        if (level + 1 == rank) {
            if (i >= l.nnz) {
                return invalid("csf: leaf position " + dec(i) + " (crd_" + dec(level) + ", buffer " +
                               dec(2 * uint64_t{level} + 2) + ") is not below nnz = " + dec(l.nnz));
            }
            copy_element(g, v.buffer(0), run_location(g, 0, i), out, n);
            ++f.lo;
            continue;
        }
        const IndexArray pos = csf_pos(v, level + 1);
        const IndexArray child = csf_crd(v, level + 1);
        HURRAY_ASSIGN_OR_RETURN(Slice s, pointer_slice(d, pos, i, child, child.size()));
        if (s.lo < next_lo[level + 1]) {
            return invalid("csf: " + pos.entry(i) + " = " + dec(s.lo) + " (buffer " + dec(pos.buffer()) +
                           ") overlaps the children of the previous node, which end at " +
                           dec(next_lo[level + 1]));
        }
        next_lo[level + 1] = s.hi;
        ++level;
        frame[level] = s;
        partial[level] = n;
    }
}

}  // namespace

Result<ElementLocation> sparse_locate(const TensorView& v, std::span<const uint64_t> index) {
    const LayoutDescriptor& layout = v.descriptor().layout;
    if (const auto* l = std::get_if<CooLayout>(&layout)) {
        return coo_locate(v, *l, index);
    }
    if (const auto* l = std::get_if<CsfLayout>(&layout)) {
        return csf_locate(v, *l, index);
    }
    return compressed_locate(v, index);
}

Status sparse_materialize(const TensorView& v, std::span<uint8_t> out) {
    if (!out.empty()) {
        // SAFETY: writes exactly the caller's span.
        std::memset(out.data(), 0, out.size());
    }
    const LayoutDescriptor& layout = v.descriptor().layout;
    if (const auto* l = std::get_if<CooLayout>(&layout)) {
        return coo_materialize(v, *l, out);
    }
    if (const auto* l = std::get_if<CsfLayout>(&layout)) {
        return csf_materialize(v, *l, out);
    }
    return compressed_materialize(v, out);
}

}  // namespace hurray::detail
