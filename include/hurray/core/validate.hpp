// SPDX-License-Identifier: Apache-2.0
/// @file
/// Data validation: the rules of the specification that need the bytes of a
/// tensor's buffers, not only its descriptor (docs/spec/layouts/coo.md,
/// csr.md, csc.md, csf.md, block-paged.md § Storage Invariants,
/// quantization/*.md parameter values, element-types.md).
///
/// `check_descriptor` (descriptor_codec.hpp) has already enforced everything
/// the descriptor alone determines; `validate_data` adds what only the data
/// can tell: sparse index structures, block tables, quantization parameter
/// values, reserved `float8_e8m0` bytes and packing padding bits.
#pragma once

#include "hurray/core/export.hpp"
#include <cstdint>
#include <span>

#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"
#include "hurray/core/tensor_view.hpp"

namespace hurray {

/// What `validate_data` enforces.
///
/// Strict mode (the default) checks every data rule. Permissive mode skips
/// the rules the specification lets a permissive reader skip ("SHOULD
/// validate ... MUST reject unless operating in permissive mode"): the COO,
/// CSR, CSC and CSF storage invariants, the block-paged invariants (1)-(3),
/// and the zero padding bits of packed sub-byte data. It still checks the
/// rules that hold for every reader: buffer sizes the data must agree with
/// (CSF levels, the block table), quantization parameter values and
/// `float8_e8m0` bytes.
struct HURRAY_CORE_EXPORT ValidateOptions {
    /// Enforce every data rule (default), or only those without a permissive exemption.
    bool strict = true;
};

/// Checks the data of a tensor against every data-dependent rule of the
/// specification and returns the first violation, or success.
///
/// Violations fail with `ErrorCode::kInvalidData`; the message names the field,
/// the buffer index, the entry index and its byte offset in that buffer, e.g.
/// `csr.col_indices (buffer 1) entry 3 at byte 24: column 9 is not below shape[1] = 5`.
/// The error carries no descriptor byte offset (`Error::has_offset()` is false),
/// since the position is in a data buffer.
///
/// Checks, in this order (the first failing one is reported):
/// - COO: each index tuple within the shape (entry order), then no duplicate
///   coordinates; with `is_sorted`, strictly increasing lexicographic order.
///   Unsorted duplicates are found by sorting entry numbers, O(nnz log nnz)
///   time and 4 (nnz < 2^32) or 8 bytes of memory per entry; the duplicate
///   reported is the one whose second occurrence comes first.
/// - CSR / CSC: the pointer array (first 0, non-decreasing, last = nnz), then
///   the indices of each row / column (in range, strictly increasing).
/// - CSF: every level's `pos`/`crd` buffer sizes agree with the node counts
///   `n_L = crd_L.byte_size / 8` (`pos_L` holds `n_{L-1} + 1` entries, the leaf
///   level holds `nnz`); then per level: `pos_L` starts at 0, is non-decreasing
///   and ends at `n_L`; each parent slice of `crd_L` is strictly increasing and
///   below `shape[mode_order[L]]`.
/// - Block-paged: the block table's byte size is a whole number of entries;
///   `seq_ptr` starts at 0, is non-decreasing and ends at the number of block
///   table entries; every page id is below `num_pages`; and the pages hold at
///   least `shape[0]` token slots (`entries * page_size >= total_tokens`).
/// - Quantization parameters: per-channel and per-block scales finite and
///   non-zero in their scale type, zero points within the storage type's
///   range, NF4 absmax finite and non-negative, MXFP scale bytes not 0x00/0xFF.
/// - Data: `float8_e8m0` elements not 0x00/0xFF (row-major, column-major and
///   strided data, and sparse values; curve and tiled layouts once
///   `TensorView::locate` can address them); the padding bits after the last
///   element of packed sub-byte data zero (contiguous data: row-major,
///   column-major, sparse values, the block-paged page pool).
///
/// The view's descriptor should have passed `check_descriptor` (decode does
/// this); every read is bounds-checked regardless, so a descriptor that did
/// not is rejected, never read past.
///
/// @code
/// auto view = hurray::TensorView::make(desc, spans);
/// if (!view) return view.error();
/// if (auto s = hurray::validate_data(*view); !s) {
///     std::fprintf(stderr, "%s\n", s.error().to_string().c_str());
/// }
/// @endcode
[[nodiscard]] HURRAY_CORE_EXPORT Status validate_data(const TensorView& view, const ValidateOptions& options = {});

/// `validate_data` for a descriptor and one byte span per buffer: builds the
/// `TensorView` (which checks the span count and sizes) and validates it.
///
/// @code
/// std::vector<std::span<const uint8_t>> spans = {values, col_indices, row_ptr};
/// hurray::Status s = hurray::validate_data(csr_desc, spans);
/// @endcode
[[nodiscard]] HURRAY_CORE_EXPORT Status validate_data(const TensorDescriptor& d,
                                   std::span<const std::span<const uint8_t>> buffers,
                                   const ValidateOptions& options = {});

}  // namespace hurray
