// SPDX-License-Identifier: Apache-2.0
// Data validation of the block-paged layout: the block table and sequence
// pointers (layouts/block-paged.md § Buffer Table, § Storage Invariants).
#include <string>

#include "hurray/core/checked_math.hpp"
#include "hurray/core/text.hpp"
#include "core/validate_internal.hpp"

namespace hurray::detail {

Status validate_block_paged(const DataCtx& c, const BlockPagedLayout& layout) {
    const TensorDescriptor& d = c.d;
    if (d.rank() != 3) {
        return data_error("block_paged: requires rank 3, got " + dec(d.rank()));
    }
    const uint32_t width = layout.index_type == BlockTableIndexType::kUInt64 ? 8 : 4;
    const char* type = width == 8 ? "uint64" : "uint32";
    HURRAY_ASSIGN_OR_RETURN(std::span<const uint8_t> table_bytes, data_buffer(c, 1, "block_paged.block_table"));
    if (table_bytes.size() % width != 0) {
        return data_error("block_paged.block_table (buffer 1): " + dec(table_bytes.size()) +
                          " bytes is not a whole number of " + type + " entries");
    }
    const IndexArray table = IndexArray::whole(table_bytes, width);
    const uint64_t entries = table.size();
    HURRAY_ASSIGN_OR_RETURN(IndexArray seq,
                            index_buffer(c, 2, "block_paged.seq_ptr", width, uint64_t{layout.num_seqs} + 1));
    if (!c.opt.strict) {
        return Status::success();
    }
    // (1), (2): seq_ptr starts at 0, never decreases, ends at the entry count.
    const uint64_t n = layout.num_seqs;
    if (seq[0] != 0) {
        return data_error(at_entry("block_paged.seq_ptr", 2, 0, 0) + "must be 0, got " + dec(seq[0]));
    }
    for (uint64_t s = 0; s < n; ++s) {
        if (seq[s + 1] < seq[s]) {
            return data_error(at_entry("block_paged.seq_ptr", 2, s + 1, seq.byte_of(s + 1)) + dec(seq[s + 1]) +
                              " is less than the previous entry " + dec(seq[s]) + " (must be non-decreasing)");
        }
    }
    if (seq[n] != entries) {
        return data_error(at_entry("block_paged.seq_ptr", 2, n, seq.byte_of(n)) +
                          "the last entry must equal the " + dec(entries) + " block table entries, got " +
                          dec(seq[n]));
    }
    // (3): every page id names a page of the pool.
    for (uint64_t k = 0; k < entries; ++k) {
        if (table[k] >= layout.num_pages) {
            return data_error(at_entry("block_paged.block_table", 1, k, table.byte_of(k)) + "page id " +
                              dec(table[k]) + " is not below num_pages = " + dec(layout.num_pages));
        }
    }
    // Every token of every sequence occupies a slot of one of its pages, so
    // the logical pages hold at least shape[0] = total_tokens slots.
    const uint64_t tokens = d.shape[0];
    const std::optional<uint64_t> slots = mul_u64(entries, layout.page_size);
    if (tokens != kDynamicDim && slots && *slots < tokens) {
        return data_error("block_paged.block_table (buffer 1): " + dec(entries) + " logical pages of " +
                          dec(layout.page_size) + " slots hold " + dec(*slots) + " tokens, fewer than shape[0] = " +
                          dec(tokens));
    }
    return Status::success();
}

}  // namespace hurray::detail
