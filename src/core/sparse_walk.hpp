// SPDX-License-Identifier: Apache-2.0
// Internal: visiting the stored elements of a sparse tensor (COO, CSR, CSC,
// CSF) straight from its index buffers, in storage order, with every read
// and every coordinate bounds-checked.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/index_array.hpp"
#include "hurray/core/text.hpp"
#include "hurray/core/result.hpp"
#include "hurray/core/tensor_view.hpp"

namespace hurray::detail {

/// Whether `layout` is one of the sparse layouts `for_each_stored` walks.
inline bool is_sparse_layout(const LayoutDescriptor& layout) {
    return std::holds_alternative<CooLayout>(layout) || std::holds_alternative<CsrLayout>(layout) ||
           std::holds_alternative<CscLayout>(layout) || std::holds_alternative<CsfLayout>(layout);
}

/// Calls `fn(coords, value_index)` for every stored element of a sparse view:
/// `coords` is its logical index (one coordinate per dimension, each below
/// the shape) and `value_index` its position in the values buffer (buffer 0,
/// below nnz). Stops at the first error `fn` returns. Fails with
/// `kInvalidData` when an index structure points outside its buffers or a
/// coordinate outside the shape, and with `kInvalidArgument` for a layout that
/// is not sparse. Duplicates and order are not checked (validate_data does).
template <typename Fn>
Status for_each_stored(const TensorView& view, Fn&& fn) {
    const TensorDescriptor& d = view.descriptor();
    const uint32_t rank = d.rank();
    auto bad = [](const std::string& what) { return Error(ErrorCode::kInvalidData, what); };
    auto buffer = [&view](size_t b) {
        return b < view.buffer_count() ? view.buffer(b) : std::span<const uint8_t>();
    };
    auto in_shape = [&d](std::span<const uint64_t> c) {
        for (size_t k = 0; k < c.size(); ++k) {
            if (c[k] >= d.shape[k]) {
                return false;
            }
        }
        return true;
    };
    std::vector<uint64_t> coords(rank, 0);

    if (const auto* coo = std::get_if<CooLayout>(&d.layout)) {
        const uint64_t nnz = coo->nnz;
        const auto idx = rank == 0 || nnz > UINT64_MAX / rank ? std::nullopt
                                                              : IndexArray::make(buffer(1), 8, nnz * rank);
        if (!idx) {
            return bad("coo.indices (buffer 1): too small for nnz = " + dec(nnz));
        }
        for (uint64_t i = 0; i < nnz; ++i) {
            for (uint32_t k = 0; k < rank; ++k) {
                coords[k] = (*idx)[i * rank + k];
            }
            if (!in_shape(coords)) {
                return bad("coo.indices (buffer 1): non-zero " + dec(i) + " lies outside the shape");
            }
            HURRAY_RETURN_IF_ERROR(fn(std::span<const uint64_t>(coords), i));
        }
        return Status::success();
    }
    if (std::holds_alternative<CsrLayout>(d.layout) || std::holds_alternative<CscLayout>(d.layout)) {
        const bool csr = std::holds_alternative<CsrLayout>(d.layout);
        const uint64_t nnz = csr ? std::get<CsrLayout>(d.layout).nnz : std::get<CscLayout>(d.layout).nnz;
        if (rank != 2 || d.shape[csr ? 0 : 1] == UINT64_MAX) {
            return bad("compressed sparse layout: needs rank 2 and a static outer dimension");
        }
        const uint64_t n = d.shape[csr ? 0 : 1];
        const auto ptr = IndexArray::make(buffer(2), 8, n + 1);
        const auto idx = IndexArray::make(buffer(1), 8, nnz);
        if (!ptr || !idx) {
            return bad("compressed sparse layout: the pointer or index buffer is too small");
        }
        for (uint64_t r = 0; r < n; ++r) {
            const uint64_t lo = (*ptr)[r];
            const uint64_t hi = (*ptr)[r + 1];
            if (lo > hi || hi > nnz) {
                return bad("compressed sparse layout: pointer entry " + dec(r) + " delimits [" + dec(lo) + ", " +
                           dec(hi) + "), outside [0, nnz = " + dec(nnz) + ")");
            }
            for (uint64_t j = lo; j < hi; ++j) {
                coords[csr ? 0 : 1] = r;
                coords[csr ? 1 : 0] = (*idx)[j];
                if (!in_shape(coords)) {
                    return bad("compressed sparse layout: stored element " + dec(j) + " lies outside the shape");
                }
                HURRAY_RETURN_IF_ERROR(fn(std::span<const uint64_t>(coords), j));
            }
        }
        return Status::success();
    }
    if (const auto* csf = std::get_if<CsfLayout>(&d.layout)) {
        if (rank < 3 || csf->mode_order.size() != rank) {
            return bad("csf: needs rank >= 3 and one mode_order entry per dimension");
        }
        std::vector<IndexArray> pos(rank);
        std::vector<IndexArray> crd(rank);
        for (uint32_t l = 0; l < rank; ++l) {
            if (csf->mode_order[l] >= rank) {
                return bad("csf.mode_order: entry " + dec(l) + " is not a dimension");
            }
            pos[l] = IndexArray::whole(buffer(2 * size_t{l} + 1), 8);
            crd[l] = IndexArray::whole(buffer(2 * size_t{l} + 2), 8);
        }
        // Depth-first, leaf order: one [next, end) range of crd_L per level.
        std::vector<uint64_t> next(rank, 0);
        std::vector<uint64_t> end(rank, 0);
        auto open = [&](uint32_t l, uint64_t parent) -> Status {
            if (parent + 1 >= pos[l].size()) {
                return bad("csf.pos_" + dec(l) + ": parent " + dec(parent) + " has no entry");
            }
            next[l] = pos[l][parent];
            end[l] = pos[l][parent + 1];
            if (next[l] > end[l] || end[l] > crd[l].size()) {
                return bad("csf.pos_" + dec(l) + ": parent " + dec(parent) + " delimits [" + dec(next[l]) + ", " +
                           dec(end[l]) + "), outside crd_" + dec(l));
            }
            return Status::success();
        };
        HURRAY_RETURN_IF_ERROR(open(0, 0));
        uint32_t l = 0;
        while (true) {
            if (next[l] == end[l]) {
                if (l == 0) {
                    return Status::success();
                }
                --l;
                continue;
            }
            const uint64_t j = next[l]++;
            coords[csf->mode_order[l]] = crd[l][j];
            if (coords[csf->mode_order[l]] >= d.shape[csf->mode_order[l]]) {
                return bad("csf.crd_" + dec(l) + ": entry " + dec(j) + " lies outside the shape");
            }
            if (l + 1 == rank) {
                if (j >= csf->nnz) {
                    return bad("csf.crd_" + dec(l) + ": leaf " + dec(j) + " is not below nnz = " + dec(csf->nnz));
                }
                HURRAY_RETURN_IF_ERROR(fn(std::span<const uint64_t>(coords), j));
            } else {
                ++l;
                HURRAY_RETURN_IF_ERROR(open(l, j));
            }
        }
    }
    return Error(ErrorCode::kInvalidArgument, "for_each_stored: the layout is not sparse");
}

}  // namespace hurray::detail
