// SPDX-License-Identifier: Apache-2.0
// Internal: element lookup and materialization of the block-paged layout
// (layouts/block-paged.md). seq_ptr is validated when the view is made; block
// table entries as they are used.
//
// Logical token mapping. The logical shape is [total_tokens, num_heads,
// head_dim] with tokens numbered across the batch, sequence after sequence
// (§ Logical Shape): sequence s holds tokens [starts[s], starts[s+1]), and its
// token u is at page slot u of its block-table slice (§ Element Lookup). The
// descriptor carries each sequence's page count but not its token count, so
// `starts` is known only when the descriptor determines it (one sequence owns
// every page, or every page is full: shape[0] == pages x page_size) or when
// the caller supplies the counts (TensorView::with_sequence_lengths).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/core/tensor_view.hpp"

namespace hurray::detail {

/// Validates seq_ptr against block_table and shape[0] (kInvalidData) and
/// returns the sequences' first logical tokens (num_seqs + 1 entries) where
/// the descriptor determines them, else an empty vector.
Result<std::vector<uint64_t>> paged_token_starts(const TensorView& v);

/// The first logical token of each sequence from caller-supplied token
/// counts (kInvalidArgument unless they fit the pages and sum to shape[0]).
Result<std::vector<uint64_t>> paged_starts_from_lengths(const TensorView& v, std::span<const uint64_t> lengths);

/// Location of logical element [token, head, dim] (checked against the shape).
Result<ElementLocation> paged_locate(const TensorView& v, std::span<const uint64_t> index);

/// Location of token `token` of sequence `seq` (block-paged.md § Element Lookup).
Result<ElementLocation> paged_locate_in_sequence(const TensorView& v, uint64_t seq, uint64_t token, uint64_t head,
                                                 uint64_t dim);

/// Writes every element in logical row-major order into `out` (exact size;
/// zero-filled beforehand for packed types).
Status paged_materialize(const TensorView& v, std::span<uint8_t> out);

}  // namespace hurray::detail
