// SPDX-License-Identifier: Apache-2.0
// Data validation of the sparse layouts: the storage invariants of COO,
// CSR, CSC (layouts/coo.md, csr.md, csc.md § Storage Invariants) and CSF
// (layouts/csf.md § Storage Invariants, § Buffer Size).
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "hurray/core/checked_math.hpp"
#include "hurray/core/text.hpp"
#include "core/validate_internal.hpp"

namespace hurray::detail {
namespace {

/// "(c0, c1, ...)": the coordinates of COO entry `i`.
std::string tuple_text(const IndexArray& idx, uint64_t i, uint32_t rank) {
    std::string s = "(";
    for (uint32_t k = 0; k < rank; ++k) {
        s += (k == 0 ? "" : ", ") + dec(idx[i * rank + k]);
    }
    return s + ")";
}

/// -1, 0 or 1: lexicographic comparison of the tuples of entries `a` and `b`.
int compare_tuples(const IndexArray& idx, uint64_t a, uint64_t b, uint32_t rank) {
    for (uint32_t k = 0; k < rank; ++k) {
        const uint64_t x = idx[a * rank + k];
        const uint64_t y = idx[b * rank + k];
        if (x != y) {
            return x < y ? -1 : 1;
        }
    }
    return 0;
}

/// Finds duplicate tuples in an unsorted COO index buffer by sorting entry
/// numbers (of type I, uint32_t when nnz < 2^32) by (tuple, entry number).
/// Reports the duplicate whose second occurrence has the smallest entry number.
template <typename I>
Status find_duplicates(const IndexArray& idx, uint64_t nnz, uint32_t rank) {
    std::vector<I> order(static_cast<size_t>(nnz));
    std::iota(order.begin(), order.end(), I{0});
    std::sort(order.begin(), order.end(), [&](I a, I b) {
        const int c = compare_tuples(idx, a, b, rank);
        return c != 0 ? c < 0 : a < b;
    });
    uint64_t first = 0;
    uint64_t second = UINT64_MAX;
    for (size_t i = 1; i < order.size(); ++i) {
        // Within a run of equal tuples the entry numbers ascend, so the run's
        // second element is its earliest repeat.
        const bool starts_run = compare_tuples(idx, order[i - 1], order[i], rank) == 0 &&
                                (i < 2 || compare_tuples(idx, order[i - 2], order[i - 1], rank) != 0);
        if (starts_run && order[i] < second) {
            first = order[i - 1];
            second = order[i];
        }
    }
    if (second == UINT64_MAX) {
        return Status::success();
    }
    return data_error(at_entry("coo.indices", 1, second * rank, second * rank * 8) + "non-zero " + dec(second) +
                      " repeats the coordinates " + tuple_text(idx, second, rank) + " of non-zero " + dec(first) +
                      " (duplicate coordinates are not allowed)");
}

}  // namespace

Status validate_coo(const DataCtx& c, const CooLayout& layout) {
    const TensorDescriptor& d = c.d;
    const uint32_t rank = d.rank();
    if (rank == 0) {
        return data_error("coo: a scalar (rank 0) cannot use the COO layout");
    }
    const uint64_t nnz = layout.nnz;
    const std::optional<uint64_t> count = mul_u64(nnz, rank);
    if (!count) {
        return data_error("coo.indices (buffer 1): nnz * rank overflows 64 bits");
    }
    HURRAY_ASSIGN_OR_RETURN(IndexArray idx, index_buffer(c, 1, "coo.indices", 8, *count));
    if (!c.opt.strict) {
        return Status::success();
    }
    // (1) Every coordinate within the shape, in entry order.
    for (uint64_t i = 0; i < nnz; ++i) {
        for (uint32_t k = 0; k < rank; ++k) {
            const uint64_t e = i * rank + k;
            const uint64_t v = idx[e];
            if (d.shape[k] != kDynamicDim && v >= d.shape[k]) {
                return data_error(at_entry("coo.indices", 1, e, idx.byte_of(e)) + "non-zero " + dec(i) +
                                  " coordinate " + dec(k) + " = " + dec(v) + " is not below shape[" + dec(k) +
                                  "] = " + dec(d.shape[k]));
            }
        }
    }
    if (layout.is_sorted) {
        // (3) Strictly increasing lexicographic order, which also rules out (2).
        for (uint64_t i = 1; i < nnz; ++i) {
            const int cmp = compare_tuples(idx, i - 1, i, rank);
            if (cmp >= 0) {
                return data_error(at_entry("coo.indices", 1, i * rank, idx.byte_of(i * rank)) + "non-zero " +
                                  dec(i) + " " + tuple_text(idx, i, rank) +
                                  (cmp == 0 ? " repeats the coordinates of non-zero "
                                            : " sorts before non-zero ") +
                                  dec(i - 1) + " " + tuple_text(idx, i - 1, rank) +
                                  ", but is_sorted requires strictly increasing lexicographic order");
            }
        }
        return Status::success();
    }
    // (2) No duplicates: O(nnz log nnz), one entry number per non-zero.
    if (nnz <= UINT32_MAX) {
        return find_duplicates<uint32_t>(idx, nnz, rank);
    }
    return find_duplicates<uint64_t>(idx, nnz, rank);
}

Status validate_compressed(const DataCtx& c, bool csr, uint64_t nnz) {
    const TensorDescriptor& d = c.d;
    const char* layout = csr ? "csr" : "csc";
    if (d.rank() != 2) {
        return data_error(std::string(layout) + ": requires rank 2, got " + dec(d.rank()));
    }
    const char* ptr_name = csr ? "csr.row_ptr" : "csc.col_ptr";
    const char* idx_name = csr ? "csr.col_indices" : "csc.row_indices";
    const char* outer_word = csr ? "row" : "column";
    const char* inner_word = csr ? "column" : "row";
    const uint64_t outer_dim = d.shape[csr ? 0 : 1];
    const uint64_t bound = d.shape[csr ? 1 : 0];
    const size_t inner_axis = csr ? 1 : 0;

    uint64_t n = outer_dim;
    if (n == kDynamicDim) {
        // Dynamic outer dimension: the pointer buffer says how many there are.
        HURRAY_ASSIGN_OR_RETURN(std::span<const uint8_t> p, data_buffer(c, 2, ptr_name));
        if (p.size() < 8 || p.size() % 8 != 0) {
            return data_error(std::string(ptr_name) + " (buffer 2): " + dec(p.size()) +
                              " bytes is not a whole, non-empty number of uint64 entries");
        }
        n = p.size() / 8 - 1;
    }
    HURRAY_ASSIGN_OR_RETURN(IndexArray ptr, index_buffer(c, 2, ptr_name, 8, n + 1));
    HURRAY_ASSIGN_OR_RETURN(IndexArray idx, index_buffer(c, 1, idx_name, 8, nnz));
    if (!c.opt.strict) {
        return Status::success();
    }
    // (1), (2): the pointer array.
    if (ptr[0] != 0) {
        return data_error(at_entry(ptr_name, 2, 0, 0) + "must be 0, got " + dec(ptr[0]));
    }
    for (uint64_t i = 0; i < n; ++i) {
        if (ptr[i + 1] < ptr[i]) {
            return data_error(at_entry(ptr_name, 2, i + 1, ptr.byte_of(i + 1)) + dec(ptr[i + 1]) +
                              " is less than the previous entry " + dec(ptr[i]) + " (must be non-decreasing)");
        }
    }
    if (ptr[n] != nnz) {
        return data_error(at_entry(ptr_name, 2, n, ptr.byte_of(n)) + "the last entry must equal nnz = " + dec(nnz) +
                          ", got " + dec(ptr[n]));
    }
    // (3), (4): the indices of each row / column.
    for (uint64_t r = 0; r < n; ++r) {
        for (uint64_t j = ptr[r]; j < ptr[r + 1]; ++j) {
            const uint64_t v = idx[j];
            if (bound != kDynamicDim && v >= bound) {
                return data_error(at_entry(idx_name, 1, j, idx.byte_of(j)) + inner_word + " " + dec(v) + " of " +
                                  outer_word + " " + dec(r) + " is not below shape[" + dec(inner_axis) +
                                  "] = " + dec(bound));
            }
            if (j > ptr[r] && v <= idx[j - 1]) {
                return data_error(at_entry(idx_name, 1, j, idx.byte_of(j)) + inner_word + " " + dec(v) + " of " +
                                  outer_word + " " + dec(r) +
                                  (v == idx[j - 1] ? " repeats the previous entry"
                                                   : " is less than the previous entry " + dec(idx[j - 1])) +
                                  " (indices must be strictly increasing within each " + outer_word + ")");
            }
        }
    }
    return Status::success();
}

Status validate_csf(const DataCtx& c, const CsfLayout& layout) {
    const TensorDescriptor& d = c.d;
    const uint32_t rank = d.rank();
    if (rank < 3 || layout.mode_order.size() != rank) {
        return data_error("csf: requires rank >= 3 and one mode_order entry per dimension");
    }
    for (uint32_t m : layout.mode_order) {
        if (m >= rank) {
            return data_error("csf.mode_order: " + dec(m) + " is not a dimension of a rank-" + dec(rank) + " tensor");
        }
    }
    // Buffer sizes: n_L = crd_L.byte_size / 8 nodes at level L; pos_L holds
    // n_{L-1} + 1 entries (n_{-1} = 1); the leaf level holds nnz nodes.
    std::vector<IndexArray> pos(rank);
    std::vector<IndexArray> crd(rank);
    uint64_t parents = 1;
    for (uint32_t l = 0; l < rank; ++l) {
        const std::string crd_name = "csf.crd_" + dec(l);
        const std::string pos_name = "csf.pos_" + dec(l);
        const size_t crd_b = 2 * size_t{l} + 2;
        const size_t pos_b = 2 * size_t{l} + 1;
        HURRAY_ASSIGN_OR_RETURN(std::span<const uint8_t> crd_bytes, data_buffer(c, crd_b, crd_name.c_str()));
        if (crd_bytes.size() % 8 != 0) {
            return data_error(crd_name + " (buffer " + dec(crd_b) + "): " + dec(crd_bytes.size()) +
                              " bytes is not a whole number of uint64 coordinates");
        }
        const uint64_t nodes = crd_bytes.size() / 8;
        if (l + 1 == rank && nodes != layout.nnz) {
            return data_error(crd_name + " (buffer " + dec(crd_b) + "): the leaf level holds " + dec(nodes) +
                              " coordinates, nnz is " + dec(layout.nnz));
        }
        HURRAY_ASSIGN_OR_RETURN(std::span<const uint8_t> pos_bytes, data_buffer(c, pos_b, pos_name.c_str()));
        const std::optional<uint64_t> want = mul_u64(parents + 1, 8);
        if (!want || pos_bytes.size() != *want) {
            return data_error(pos_name + " (buffer " + dec(pos_b) + "): holds " + dec(pos_bytes.size()) +
                              " bytes, but level " + dec(l) + " has " + dec(parents) + " parent nodes, so it needs " +
                              dec(parents + 1) + " uint64 entries");
        }
        crd[l] = IndexArray::whole(crd_bytes, 8);
        pos[l] = IndexArray::whole(pos_bytes, 8);
        parents = nodes;
    }
    if (!c.opt.strict) {
        return Status::success();
    }
    if (layout.nnz == 0) {
        for (uint32_t l = 0; l < rank; ++l) {
            if (crd[l].size() != 0) {
                return data_error("csf.crd_" + dec(l) + " (buffer " + dec(2 * l + 2) + "): an empty tensor (nnz = 0) "
                                  "must have empty coordinate arrays, this one holds " + dec(crd[l].size()));
            }
        }
    }
    for (uint32_t l = 0; l < rank; ++l) {
        const std::string pos_name = "csf.pos_" + dec(l);
        const std::string crd_name = "csf.crd_" + dec(l);
        const size_t pos_b = 2 * size_t{l} + 1;
        const size_t crd_b = 2 * size_t{l} + 2;
        const IndexArray& p = pos[l];
        const IndexArray& k = crd[l];
        const uint64_t np = p.size() - 1;  // parent nodes
        // (1)-(3): pos_L starts at 0, never decreases, ends at n_L.
        if (p[0] != 0) {
            return data_error(at_entry(pos_name.c_str(), pos_b, 0, 0) + "must be 0, got " + dec(p[0]));
        }
        for (uint64_t i = 0; i < np; ++i) {
            if (p[i + 1] < p[i]) {
                return data_error(at_entry(pos_name.c_str(), pos_b, i + 1, p.byte_of(i + 1)) + dec(p[i + 1]) +
                                  " is less than the previous entry " + dec(p[i]) + " (must be non-decreasing)");
            }
        }
        if (p[np] != k.size()) {
            return data_error(at_entry(pos_name.c_str(), pos_b, np, p.byte_of(np)) +
                              "the last entry must equal the " + dec(k.size()) + " coordinates of " + crd_name +
                              ", got " + dec(p[np]));
        }
        // (4), (5): each parent's slice of crd_L strictly increasing and in bounds.
        const uint32_t dim = layout.mode_order[l];
        const uint64_t bound = d.shape[dim];
        for (uint64_t parent = 0; parent < np; ++parent) {
            for (uint64_t j = p[parent]; j < p[parent + 1]; ++j) {
                const uint64_t v = k[j];
                if (bound != kDynamicDim && v >= bound) {
                    return data_error(at_entry(crd_name.c_str(), crd_b, j, k.byte_of(j)) + "coordinate " + dec(v) +
                                      " is not below shape[mode_order[" + dec(l) + "] = " + dec(dim) + "] = " +
                                      dec(bound));
                }
                if (j > p[parent] && v <= k[j - 1]) {
                    return data_error(at_entry(crd_name.c_str(), crd_b, j, k.byte_of(j)) + "coordinate " + dec(v) +
                                      (v == k[j - 1] ? " repeats its previous sibling"
                                                     : " is less than its previous sibling " + dec(k[j - 1])) +
                                      " under parent " + dec(parent) +
                                      " (siblings must be strictly increasing)");
                }
            }
        }
    }
    return Status::success();
}

}  // namespace hurray::detail
