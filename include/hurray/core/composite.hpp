// SPDX-License-Identifier: Apache-2.0
/// @file
/// Composite tensors in streams and files (docs/spec/layouts/composite.md
/// § Binding, § Validation; interchange.md § Composite Tensor Streaming;
/// file-format.md § Composite Tensors): an incremental validator that is fed
/// every descriptor in stream or file order, binds each composite head to the
/// descriptors that follow it, and checks the composition rules as members
/// arrive and when a composite closes.
#pragma once

#include "hurray/core/export.hpp"
#include <cstdint>
#include <optional>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"

namespace hurray {

/// The deepest composite nesting a reader accepts: a top-level head is level
/// 1, a head among its members level 2, and so on (composite.md § Binding).
inline constexpr uint32_t kMaxCompositeDepth = 8;

/// What a `CompositeAssembler` enforces.
struct HURRAY_CORE_EXPORT CompositeOptions {
    /// Strict (default): every rule. Permissive skips only what the spec lets
    /// a permissive reader skip: the partition exact-cover and non-overlap
    /// checks (a SHOULD), and it binds the members of an implementation-private
    /// composition rule (0xF0-0xFE) without checking them. It also accepts a
    /// quantized member whose private quantization scheme hides its decoded
    /// type. Per-member checks, the nesting limit and torn composites are
    /// enforced in both modes.
    bool strict = true;
};

/// A composite whose last member has arrived and whose close-time checks passed.
struct HURRAY_CORE_EXPORT CompletedComposite {
    /// Position of the head in the sequence given to `add` (0-based).
    uint64_t head = 0;
    /// 0 for a top-level composite, 1 for one nested directly in it, ...
    uint32_t depth = 0;
    /// The head's composition rule (a private rule is carried as its raw byte).
    CompositionRule rule = CompositionRule::kGroup;
    /// Positions of the direct members, in stream order. A nested composite
    /// is one member (its head's position); its own members are listed in
    /// its own `CompletedComposite`.
    std::vector<uint64_t> members;
    /// Field-wise equality.
    bool operator==(const CompletedComposite&) const = default;
};

/// Binds composite heads to their members and validates them incrementally,
/// as a stream or file reader meets the descriptors.
///
/// Feed every descriptor of the stream (or every index entry of a file, in
/// `descriptor_offset` order) to `add`, heads and ordinary tensors alike, and
/// call `finish` at the end. A head with `member_count = N` binds the next N
/// descriptors; a member that is itself a head counts as one member of its
/// parent and opens its own scope (pre-order), up to `kMaxCompositeDepth`.
///
/// At each member, `add` runs the per-member checks of composite.md
/// § Validation: for partition and overlay a shard section whose
/// `parent_shape` equals the head's shape and whose box lies inside it, a
/// decoded value type equal to the head's `type_tag`, and the member-section
/// rules (overlay members carry one; the first is the base spanning the whole
/// index space, later ones are corrections; partition and group members carry
/// none). When a head's last member arrives, `add` runs the close-time checks
/// (partition: exact cover without overlap; overlay: at least the base) and
/// records a `CompletedComposite`. A streaming reader, whose composite closes
/// on the last member's `TENSOR_DATA_END` (interchange.md), presents it as
/// complete once that member's data has arrived too.
///
/// Decoded type of a member: an unquantized member decodes to its stored
/// type (and, with a private type, its extension type section). A member
/// with a known quantization scheme decodes to float32 (the schemes
/// dequantize in float32, quantization/per-tensor-affine.md), which a
/// consumer may widen to float64 or narrow to another real floating-point
/// type; so it matches a head of type float64, float32, float16, bfloat16,
/// float8_e4m3, float8_e5m2, float6_e2m3, float6_e3m2 or float4_e2m1
/// (composite.md's SpQR example: an int4 base quantized per block under a
/// float16 head). `float8_e8m0` (a scale format without zero or sign),
/// complex, float128 and integer heads do not match a quantized member.
///
/// Partition cover check: the boxes are first tested pairwise for overlap
/// (the spec's per-dimension formula) by a sweep along the dimension with the
/// most distinct offsets, then their volumes (128-bit, overflow-checked) are
/// summed against the head's volume; a deficit is a gap. Time O(rank * n log n)
/// plus one test per pair of boxes whose extents along the sweep dimension
/// intersect (for a regular grid of m^rank members, about n * n / m; O(n^2) at
/// worst); memory 16 * rank bytes per member.
///
/// The first violation is returned and sticks: later calls to `add` and
/// `finish` return the same error until `reset`. Errors name the head's and
/// the member's positions and the rule; codes are `kInvalidComposite`,
/// `kNestingTooDeep`, `kUnsupported` (a composite this reader cannot check in
/// strict mode: a private rule or scheme, the open member count in permissive
/// mode) and `kSizeOverflow`.
///
/// Descriptors should have passed `check_descriptor` (decode does this): the
/// assembler does not repeat the descriptor-level rules, but it never reads
/// outside a malformed one.
///
/// @code
/// hurray::CompositeAssembler assembler;
/// for (const hurray::TensorDescriptor& d : descriptors_in_stream_order) {
///     if (auto s = assembler.add(d); !s) return s;
/// }
/// if (auto s = assembler.finish(); !s) return s;  // torn composite
/// for (const auto& c : assembler.completed()) {
///     if (c.depth == 0) use_composite(c.head, c.members);
/// }
/// @endcode
class HURRAY_CORE_EXPORT CompositeAssembler {
public:
    /// An assembler with nothing open.
    explicit CompositeAssembler(const CompositeOptions& options = {});

    /// Takes the next descriptor in stream / file order.
    Status add(const TensorDescriptor& d);

    /// Reports a torn composite: the stream or file ended while a composite
    /// still waited for members. The error names the outermost open head, the
    /// members it declared and those that arrived. Fails in permissive mode
    /// too: a permissive reader may use the arrived members as independent
    /// tensors, but the composite is not complete.
    [[nodiscard]] Status finish() const;

    /// Whether no composite is open (the next descriptor is not a member).
    [[nodiscard]] bool idle() const noexcept { return scopes_.empty(); }
    /// Number of open composites (0 when idle, at most `kMaxCompositeDepth`).
    [[nodiscard]] uint32_t depth() const noexcept { return static_cast<uint32_t>(scopes_.size()); }
    /// Number of descriptors added so far (the position the next one gets).
    [[nodiscard]] uint64_t count() const noexcept { return count_; }
    /// The first error, if any descriptor was rejected.
    [[nodiscard]] const std::optional<Error>& failure() const noexcept { return failure_; }

    /// The composites completed so far, in completion order (a nested
    /// composite completes before the one that contains it).
    [[nodiscard]] const std::vector<CompletedComposite>& completed() const noexcept { return completed_; }
    /// Moves the completed composites out (to bound memory on long streams).
    std::vector<CompletedComposite> take_completed();

    /// Forgets everything: open composites, completed ones, the error and the count.
    void reset();

private:
    /// One open composite.
    struct Scope {
        uint64_t head = 0;                       // position of the head
        uint8_t rule = 0;                        // raw composition_rule byte
        uint32_t member_count = 0;               // members declared
        Shape shape;                             // the head's shape
        ElementType type = ElementType::kFloat32;               // the head's type_tag
        std::optional<ExtensionTypeDescriptor> extension_type;  // the head's private type
        std::vector<uint64_t> members;           // positions of the members so far
        std::vector<uint64_t> box_offsets;       // partition: rank entries per member
        std::vector<uint64_t> box_shapes;        // partition: rank entries per member
    };

    Status open_head(const TensorDescriptor& d);
    Status check_member(Scope& s, const TensorDescriptor& d) const;
    Status close(Scope& s) const;
    Status fail(Error e);

    CompositeOptions options_;
    std::vector<Scope> scopes_;
    std::vector<CompletedComposite> completed_;
    std::optional<Error> failure_;
    uint64_t count_ = 0;
};

}  // namespace hurray
