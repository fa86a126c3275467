// SPDX-License-Identifier: Apache-2.0
/// @file
/// `TensorView`: a descriptor together with the bytes of its buffers, and
/// what a program does with them — find element [i, j, k], read it, and
/// materialize the whole tensor as a dense row-major buffer
/// (docs/spec/memory-layout.md, docs/spec/layouts/*.md).
#pragma once

#include "hurray/core/export.hpp"
#include "hurray/core/lifetime.hpp"
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/core/space_filling_curve.hpp"
#include "hurray/core/tensor_descriptor.hpp"

namespace hurray {

/// Where one logical element is stored.
///
/// Elements of whole-byte types (8 bits or more) are located by their byte
/// address: `byte_base` is the address of the element's first byte and
/// `element` is 0. Elements of packed types (1, 2, 4 and 6 bits) are located
/// by their position in the buffer's packed run: `byte_base` is 0 and
/// `element` counts packed elements from the first byte of the buffer (bit
/// `element * bits`, LSB first; for 6-bit types this is element `element % 4`
/// of the 3-byte group `element / 4`, element-types.md § 6-bit packing).
///
/// @code
/// auto loc = view.locate(std::vector<uint64_t>{1, 2});
/// if (loc && loc->stored) {
///     auto bytes = view.buffer(loc->buffer).subspan(loc->byte_base);
///     double v = *hurray::element_as_double(desc.element_type, bytes, loc->element);
/// }
/// @endcode
struct HURRAY_CORE_EXPORT ElementLocation {
    /// False when a sparse layout stores no value at that index (it is zero).
    bool stored = false;
    /// The buffer holding the element (0 for dense and paged layouts, the
    /// values buffer for sparse ones).
    uint32_t buffer = 0;
    /// Byte offset in that buffer from which `element` counts.
    uint64_t byte_base = 0;
    /// Position of the element counted from `byte_base`, in elements of the
    /// storage type (packed types: in packed elements, LSB first).
    uint64_t element = 0;
    /// Field-wise equality.
    bool operator==(const ElementLocation&) const = default;
};

/// A validated, non-owning view of a tensor: its descriptor and one byte span
/// per buffer.
///
/// Creating it checks the descriptor (`check_descriptor`, permissive), that
/// every span is as large as its buffer handle declares, and what addressing
/// needs from the layout; after that every read is bounds-safe. Index
/// structures inside the data (sparse pointers and coordinates, block tables)
/// are checked as they are read: a corrupt one is reported as `kInvalidData`,
/// naming the buffer and the entry.
///
/// The view keeps its descriptor: `make` without an owner copies it (so it
/// may be a temporary), `make` with an owner refers to it, kept alive by the
/// owner (as `FileTensor::view` does). The bytes must outlive the view unless
/// an owner keeps them alive; copies of the view share the descriptor and
/// the owner.
///
/// Block-paged tensors: the logical shape is `[total_tokens, num_heads,
/// head_dim]`, tokens numbered across the whole batch, sequence after sequence
/// (block-paged.md § Logical Shape). The descriptor does not carry each
/// sequence's token count, only its page count; see `sequence_token_starts`
/// for when the view can derive the counts and `with_sequence_lengths` for
/// supplying them.
///
/// @code
/// std::vector<std::span<const uint8_t>> bufs = {data};
/// auto view = hurray::TensorView::make(desc, bufs);
/// double x = *view->read_double(std::vector<uint64_t>{1, 2});
/// std::vector<uint8_t> dense = *view->materialize();  // row-major copy
/// @endcode
class HURRAY_CORE_EXPORT TensorView {
public:
    /// Checks `buffers` against `d` and builds the view.
    ///
    /// Fails with the code of `check_descriptor` when `d` breaks a
    /// descriptor-level rule; `kUnsupported` for composite heads, extension
    /// layouts, a 6-bit element type whose `byte_offset` is not a multiple of 3
    /// (6-bit elements are addressed by whole 3-byte groups, memory-layout.md
    /// § Sub-Byte Types) and data buffers of 2^59 bytes or more;
    /// `kUnknownElementType` for a type without a known size; `kInvalidShape`
    /// for a dynamic dimension; `kInvalidArgument` when the span count or a
    /// span size disagrees with the buffer table; `kBufferTooSmall` for a
    /// Morton layout with unequal `morton_bits` whose highest code lies past
    /// buffer 0 (see `morton_encode`); and, for block-paged tensors,
    /// `kInvalidData` when `seq_ptr` is not a valid offset array into
    /// `block_table` or `shape[0]` exceeds the slots of the listed pages.
    ///
    /// @code
    /// std::vector<std::span<const uint8_t>> bufs = {values, col_indices, row_ptr};
    /// auto view = hurray::TensorView::make(csr_desc, bufs);
    /// if (!view) std::fprintf(stderr, "%s\n", view.error().to_string().c_str());
    /// @endcode
    static Result<TensorView> make(const TensorDescriptor& d,
                                   std::span<const std::span<const uint8_t>> buffers);

    /// `make`, with `owner` kept alive by the view and its copies: an object
    /// that keeps `d` and the bytes of `buffers` valid (a file, a mapping).
    ///
    /// @code
    /// auto keep = std::make_shared<Model>(load());   // owns descriptor and bytes
    /// auto view = hurray::TensorView::make(keep->desc, keep->spans, keep);
    /// @endcode
    static Result<TensorView> make(const TensorDescriptor& d HURRAY_LIFETIMEBOUND,
                                   std::span<const std::span<const uint8_t>> buffers,
                                   std::shared_ptr<const void> owner);
    /// Not from a temporary descriptor: `owner` cannot keep it alive (use
    /// `make(d, buffers)`, which copies it).
    static Result<TensorView> make(const TensorDescriptor&& d, std::span<const std::span<const uint8_t>> buffers,
                                   std::shared_ptr<const void> owner) = delete;

    /// What keeps the descriptor and bytes alive (empty when the caller does).
    [[nodiscard]] const std::shared_ptr<const void>& owner() const noexcept { return owner_; }

    /// The descriptor.
    [[nodiscard]] const TensorDescriptor& descriptor() const noexcept HURRAY_LIFETIMEBOUND { return *desc_; }
    /// The bytes of buffer `i` (the declared size; the span may be larger).
    [[nodiscard]] std::span<const uint8_t> buffer(size_t i) const noexcept { return buffers_[i]; }
    /// Number of buffers.
    [[nodiscard]] size_t buffer_count() const noexcept { return buffers_.size(); }

    /// Where the element at `index` (one coordinate per dimension) is stored.
    /// Fails with `kInvalidArgument` for an index of the wrong length or
    /// outside the shape and with `kInvalidData` when index structures (sparse
    /// pointers and coordinates, block tables) point outside their buffers.
    /// Block-paged views whose token counts are unknown fail with
    /// `kUnsupported` (see `sequence_token_starts`).
    ///
    /// Lookup follows each layout's spec: affine formulas for the dense
    /// layouts, the literal bit interleave for Morton, Skilling's algorithm for
    /// Hilbert, binary search for sorted COO and within CSR rows, CSC columns
    /// and each CSF level (in `mode_order`), a linear scan for unsorted COO.
    ///
    /// @code
    /// auto loc = view.locate(std::vector<uint64_t>{0, 3});
    /// bool zero = loc && !loc->stored;  // an unstored sparse element
    /// @endcode
    [[nodiscard]] Result<ElementLocation> locate(std::span<const uint64_t> index) const;

    /// The raw storage bits of the element at `index` (zero-extended; 0 for an
    /// unstored sparse element). Types wider than 64 bits yield their low 64
    /// bits (the first 8 bytes, little-endian).
    ///
    /// @code
    /// uint64_t code = *view.read_bits(std::vector<uint64_t>{3});  // an int4: 0..15
    /// @endcode
    [[nodiscard]] Result<uint64_t> read_bits(std::span<const uint64_t> index) const;

    /// The element at `index` as a double (storage value: quantization is not
    /// applied; see dequantize.hpp). Unstored sparse elements read as 0.
    /// Private element types fail with `kUnsupported` (use `read_bits`).
    ///
    /// @code
    /// auto x = view.read_double(std::vector<uint64_t>{2, 0});
    /// if (x) sum += *x;
    /// @endcode
    [[nodiscard]] Result<double> read_double(std::span<const uint64_t> index) const;

    /// Writes every element, in row-major logical order, as storage bytes of
    /// the tensor's element type (packed types packed LSB first, padding bits
    /// zero) into `out`, which must hold exactly `storage_bytes(type,
    /// element_count)` (else `kInvalidArgument`). Unstored sparse elements are
    /// zero bits.
    ///
    /// Row-major tensors (and strided ones with row-major strides) are one
    /// memcpy; column-major and strided tensors of whole-byte types are copied
    /// row by row, or by blocked transposition when the innermost logical
    /// dimension is not the innermost in memory; sparse tensors are zero-filled
    /// and their stored values scattered; block-paged tensors are copied one
    /// token row at a time. `out` must not overlap the view's buffers. Errors
    /// (`kInvalidData` for corrupt index structures) may leave `out` partly
    /// written.
    ///
    /// @code
    /// std::vector<uint8_t> out(n_bytes);
    /// if (auto st = view.materialize(out); !st) { report(st.error()); }
    /// @endcode
    [[nodiscard]] Status materialize(std::span<uint8_t> out) const;

    /// `materialize` into a new vector.
    [[nodiscard]] Result<std::vector<uint8_t>> materialize() const;

    /// Block-paged only: the logical token at which each sequence starts,
    /// `num_seqs + 1` entries (the last is `shape[0]`), so that sequence `s`
    /// holds tokens `[starts[s], starts[s+1])`. Empty for other layouts, and
    /// for a block-paged view whose token counts are unknown.
    ///
    /// The descriptor gives each sequence's page count (through `seq_ptr`) and
    /// the batch's token total (`shape[0]`), not the token count of each
    /// sequence (block-paged.md § Logical Shape). `make` derives the counts
    /// only where these determine them: when one sequence owns every page
    /// (it holds all `shape[0]` tokens) or when `shape[0]` equals the slots
    /// of all listed pages (every sequence fills its pages). Otherwise — for
    /// example the spec's own example, 6 + 3 tokens in 2 + 1 pages of 4 — the
    /// counts must be supplied with `with_sequence_lengths`; until then
    /// `locate`, `read_*` and `materialize` fail with `kUnsupported`, and
    /// `locate_paged` still works.
    [[nodiscard]] std::span<const uint64_t> sequence_token_starts() const noexcept { return seq_starts_; }

    /// Block-paged only: a copy of this view that knows each sequence's token
    /// count, `tokens_per_sequence[s]` for sequence `s`. Fails with
    /// `kInvalidArgument` unless the layout is block-paged, there are
    /// `num_seqs` counts, each fits in the slots of its sequence's pages and
    /// they sum to `shape[0]`.
    ///
    /// @code
    /// // block-paged.md § Example: 6 and 3 tokens in pages [0, 1] and [0].
    /// auto v = view.with_sequence_lengths(std::vector<uint64_t>{6, 3});
    /// double x = *v->read_double(std::vector<uint64_t>{6, 0, 0});  // seq 1, token 0
    /// @endcode
    [[nodiscard]] Result<TensorView> with_sequence_lengths(std::span<const uint64_t> tokens_per_sequence) const;

    /// Block-paged only: where token `token` of sequence `seq`, head `head`,
    /// dimension `dim` is stored — block-paged.md § Element Lookup, without the
    /// logical-token mapping. Fails with `kInvalidArgument` for another layout
    /// or an index outside the sequence (its known token count, or else the
    /// slots of its pages) or the shape, and with `kInvalidData` for a block
    /// table entry that is not a page of the pool.
    ///
    /// @code
    /// auto loc = view.locate_paged(1, 2, 0, 7);  // sequence 1, token 2
    /// @endcode
    [[nodiscard]] Result<ElementLocation> locate_paged(uint64_t seq, uint64_t token, uint64_t head,
                                                       uint64_t dim) const;

private:
    TensorView(const TensorDescriptor* d, std::vector<std::span<const uint8_t>> buffers)
        : desc_(d), buffers_(std::move(buffers)) {}
    /// `make`'s checks, with `d` referred to.
    static Result<TensorView> build(const TensorDescriptor& d, std::span<const std::span<const uint8_t>> buffers);

    const TensorDescriptor* desc_;
    std::shared_ptr<const TensorDescriptor> own_desc_;  // the copy desc_ points to, when make copied it
    std::vector<std::span<const uint8_t>> buffers_;
    std::vector<uint64_t> seq_starts_;
    std::shared_ptr<const void> owner_;
};

}  // namespace hurray
