// SPDX-License-Identifier: Apache-2.0
// Block-paged layout: seq_ptr validation, the logical token mapping,
// block-table lookup and materialization one token row at a time.
#include "core/block_paged_lookup.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <variant>

#include "core/element_slot.hpp"
#include "core/index_array.hpp"
#include "hurray/core/text.hpp"

namespace hurray::detail {
namespace {

Error invalid(std::string message) { return {ErrorCode::kInvalidData, "block_paged: " + std::move(message)}; }
Error bad_argument(std::string message) { return {ErrorCode::kInvalidArgument, "block_paged: " + std::move(message)}; }

struct Paged {
    const BlockPagedLayout& layout;
    IndexArray seq_ptr;
    IndexArray block_table;
};

Paged paged(const TensorView& v) {
    const auto& l = std::get<BlockPagedLayout>(v.descriptor().layout);
    const uint32_t width = l.index_type == BlockTableIndexType::kUInt64 ? 8 : 4;
    return {l, IndexArray(v.buffer(2), width, "seq_ptr", 2), IndexArray(v.buffer(1), width, "block_table", 1)};
}

// Location of page slot `slot` of logical page `k` (a block_table position),
// head `h`, dimension `dim`:
// flat = ((block_table[k] * page_size + slot) * num_heads + h) * head_dim + dim.
Result<ElementLocation> slot_location(const TensorView& v, const Paged& p, uint64_t k, uint64_t slot, uint64_t h,
                                      uint64_t dim) {
    const TensorDescriptor& d = v.descriptor();
    HURRAY_ASSIGN_OR_RETURN(uint64_t page, p.block_table.at(k));
    if (page >= p.layout.num_pages) {
        return invalid(p.block_table.entry(k) + " = " + dec(page) + " (buffer 1) is not a page of the pool (num_pages = " +
                       dec(p.layout.num_pages) + ")");
    }
    // page < num_pages, slot < page_size, h < num_heads, dim < head_dim: flat is
    // below num_pages * page_size * num_heads * head_dim, whose product the
    // descriptor check computed without overflow.
    const uint64_t flat = ((page * p.layout.page_size + slot) * d.shape[1] + h) * d.shape[2] + dim;
    const ElementGeometry g = ElementGeometry::of(d);
    const ElementLocation loc = run_location(g, 0, flat);
    if (!location_fits(g, v.buffer(0), loc)) {
        return invalid("element " + dec(flat) + " of page " + dec(page) + " lies outside buffer 0 (page_pool, " +
                       dec(v.buffer(0).size()) + " bytes)");
    }
    return loc;
}

}  // namespace

Result<std::vector<uint64_t>> paged_token_starts(const TensorView& v) {
    const TensorDescriptor& d = v.descriptor();
    const Paged p = paged(v);
    const uint64_t seqs = p.layout.num_seqs;
    HURRAY_RETURN_IF_ERROR(p.seq_ptr.check_range(0, seqs + 1));
    if (p.seq_ptr[0] != 0) {
        return invalid("seq_ptr[0] = " + dec(p.seq_ptr[0]) + " (buffer 2) must be 0");
    }
    uint64_t owners = 0;  // sequences with at least one page
    for (uint64_t s = 0; s < seqs; ++s) {
        if (p.seq_ptr[s + 1] < p.seq_ptr[s]) {
            return invalid(p.seq_ptr.entry(s + 1) + " = " + dec(p.seq_ptr[s + 1]) + " is below " + p.seq_ptr.entry(s) +
                           " = " + dec(p.seq_ptr[s]) + " (buffer 2): seq_ptr must not decrease");
        }
        owners += p.seq_ptr[s + 1] > p.seq_ptr[s] ? 1 : 0;
    }
    const uint64_t pages = p.seq_ptr[seqs];
    if (pages > p.block_table.size()) {
        return invalid(p.seq_ptr.entry(seqs) + " = " + dec(pages) + " exceeds the " + dec(p.block_table.size()) +
                       " entries of block_table (buffer 1)");
    }
    uint64_t slots = 0;
    if (__builtin_mul_overflow(pages, uint64_t{p.layout.page_size}, &slots)) {
        return invalid("the " + dec(pages) + " listed pages of " + dec(p.layout.page_size) +
                       " tokens overflow 64 bits");
    }
    const uint64_t tokens = d.shape[0];
    if (tokens > slots) {
        return invalid("shape[0] = " + dec(tokens) + " tokens exceed the " + dec(slots) + " slots of the " +
                       dec(pages) + " pages that seq_ptr lists (page_size " + dec(p.layout.page_size) + ")");
    }
    std::vector<uint64_t> starts;
    if (tokens != slots && owners > 1) {
        return starts;  // several splits of shape[0] fit the pages: unknown
    }
    // Every sequence fills its pages (tokens == slots), or a single sequence
    // owns every page and holds all the tokens: sequence s starts at its
    // first page's first slot, clipped to shape[0].
    starts.resize(seqs + 1);
    for (uint64_t s = 0; s <= seqs; ++s) {
        starts[s] = std::min(p.seq_ptr[s] * p.layout.page_size, tokens);
    }
    return starts;
}

Result<std::vector<uint64_t>> paged_starts_from_lengths(const TensorView& v, std::span<const uint64_t> lengths) {
    if (!std::holds_alternative<BlockPagedLayout>(v.descriptor().layout)) {
        return Error(ErrorCode::kInvalidArgument, "with_sequence_lengths: the layout is not block-paged");
    }
    const Paged p = paged(v);
    const uint64_t seqs = p.layout.num_seqs;
    if (lengths.size() != seqs) {
        return bad_argument(dec(lengths.size()) + " sequence lengths given, num_seqs is " + dec(seqs));
    }
    // seq_ptr was validated by make (monotone, within block_table, slots fit 64 bits).
    std::vector<uint64_t> starts(seqs + 1);
    uint64_t total = 0;
    for (uint64_t s = 0; s < seqs; ++s) {
        const uint64_t capacity = (p.seq_ptr[s + 1] - p.seq_ptr[s]) * p.layout.page_size;
        if (lengths[s] > capacity) {
            return bad_argument("sequence " + dec(s) + " has " + dec(lengths[s]) + " tokens, more than the " +
                                dec(capacity) + " slots of its " + dec(p.seq_ptr[s + 1] - p.seq_ptr[s]) + " pages");
        }
        starts[s] = total;
        total += lengths[s];  // each length is below its capacity, whose sum fits
    }
    starts[seqs] = total;
    if (total != v.descriptor().shape[0]) {
        return bad_argument("the sequence lengths sum to " + dec(total) + " tokens, shape[0] is " +
                            dec(v.descriptor().shape[0]));
    }
    return starts;
}

Result<ElementLocation> paged_locate(const TensorView& v, std::span<const uint64_t> index) {
    const std::span<const uint64_t> starts = v.sequence_token_starts();
    if (starts.empty()) {
        // make() tolerates a corrupt seq_ptr (validate_data reports it); name it here.
        HURRAY_RETURN_IF_ERROR(paged_token_starts(v));
        return Error(ErrorCode::kUnsupported,
                     "block_paged: the descriptor does not determine each sequence's token count, so logical "
                     "token " + dec(index[0]) +
                         " cannot be placed; supply the counts with with_sequence_lengths, or use locate_paged");
    }
    const Paged p = paged(v);
    // index[0] < shape[0] == starts.back(): the sequence exists.
    const auto it = std::upper_bound(starts.begin(), starts.end(), index[0]);
    const auto s = static_cast<uint64_t>(it - starts.begin()) - 1;
    const uint64_t u = index[0] - starts[s];
    return slot_location(v, p, p.seq_ptr[s] + u / p.layout.page_size, u % p.layout.page_size, index[1], index[2]);
}

Result<ElementLocation> paged_locate_in_sequence(const TensorView& v, uint64_t seq, uint64_t token, uint64_t head,
                                                 uint64_t dim) {
    const TensorDescriptor& d = v.descriptor();
    if (!std::holds_alternative<BlockPagedLayout>(d.layout)) {
        return Error(ErrorCode::kInvalidArgument, "locate_paged: the layout is not block-paged");
    }
    const Paged p = paged(v);
    if (seq >= p.layout.num_seqs) {
        return bad_argument("sequence " + dec(seq) + " is not below num_seqs = " + dec(p.layout.num_seqs));
    }
    if (head >= d.shape[1] || dim >= d.shape[2]) {
        return bad_argument("head " + dec(head) + ", dimension " + dec(dim) + " is outside [" + dec(d.shape[1]) +
                            ", " + dec(d.shape[2]) + "]");
    }
    const std::span<const uint64_t> starts = v.sequence_token_starts();
    const uint64_t first = p.seq_ptr[seq];
    const uint64_t count = starts.empty() ? (p.seq_ptr[seq + 1] - first) * p.layout.page_size
                                          : starts[seq + 1] - starts[seq];
    if (token >= count) {
        return bad_argument("token " + dec(token) + " is beyond the " + dec(count) + (starts.empty() ? " slots" : " tokens") +
                            " of sequence " + dec(seq));
    }
    return slot_location(v, p, first + token / p.layout.page_size, token % p.layout.page_size, head, dim);
}

Status paged_materialize(const TensorView& v, std::span<uint8_t> out) {
    const TensorDescriptor& d = v.descriptor();
    const std::span<const uint64_t> starts = v.sequence_token_starts();
    if (starts.empty()) {
        HURRAY_RETURN_IF_ERROR(paged_token_starts(v));
        return Error(ErrorCode::kUnsupported,
                     "block_paged: the descriptor does not determine each sequence's token count; supply the "
                     "counts with with_sequence_lengths before materializing");
    }
    const Paged p = paged(v);
    const ElementGeometry g = ElementGeometry::of(d);
    const uint64_t row = d.shape[1] * d.shape[2];  // elements per token; the element count fits
    if (row == 0) {
        return Status::success();
    }
    const std::span<const uint8_t> pool = v.buffer(0);
    for (uint64_t s = 0; s < p.layout.num_seqs; ++s) {
        for (uint64_t u = 0; u < starts[s + 1] - starts[s]; ++u) {
            // The first and the last element of the token's row: the row is
            // contiguous in the pool, so checking both bounds all of it.
            const uint64_t k = p.seq_ptr[s] + u / p.layout.page_size;
            const uint64_t slot = u % p.layout.page_size;
            HURRAY_ASSIGN_OR_RETURN(ElementLocation first, slot_location(v, p, k, slot, 0, 0));
            HURRAY_RETURN_IF_ERROR(slot_location(v, p, k, slot, d.shape[1] - 1, d.shape[2] - 1));
            const uint64_t n = (starts[s] + u) * row;
            if (g.packed()) {
                for (uint64_t e = 0; e < row; ++e) {
                    store_packed(out, n + e, g.bits, load_packed(pool, first.element + e, g.bits));
                }
            } else {
                // SAFETY: source bytes [byte_base, byte_base + row * bytes) lie in
                // the pool (both ends checked above); destination bytes are token
                // (starts[s] + u)'s row of `out`, whose exact size the caller checked.
                std::memcpy(out.data() + n * g.bytes, pool.data() + first.byte_base, row * g.bytes);
            }
        }
    }
    return Status::success();
}

}  // namespace hurray::detail
