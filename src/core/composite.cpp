// SPDX-License-Identifier: Apache-2.0
// CompositeAssembler: binding of composite heads to the descriptors that
// follow them, per-member checks and close-time checks
// (layouts/composite.md § Binding, § Composition Semantics, § Validation).
#include "hurray/core/composite.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>
#include <variant>

#include "hurray/core/checked_math.hpp"
#include "hurray/core/text.hpp"

namespace hurray {
namespace {

__extension__ typedef unsigned __int128 u128;  // NOLINT(modernize-use-using): __extension__ needs typedef


constexpr uint8_t kPartition = static_cast<uint8_t>(CompositionRule::kPartition);
constexpr uint8_t kOverlay = static_cast<uint8_t>(CompositionRule::kOverlay);
constexpr uint8_t kGroup = static_cast<uint8_t>(CompositionRule::kGroup);

bool is_private_rule(uint8_t rule) { return rule >= 0xF0 && rule <= 0xFE; }

std::string rule_name(uint8_t rule) {
    switch (rule) {
        case kPartition: return "partition";
        case kOverlay: return "overlay";
        case kGroup: return "group";
        default: return "rule " + hex(rule);
    }
}

std::string shape_text(std::span<const uint64_t> shape) {
    std::string s = "[";
    for (size_t k = 0; k < shape.size(); ++k) {
        s += (k == 0 ? "" : ", ") + dec(shape[k]);
    }
    return s + "]";
}

std::string type_text(ElementType t) {
    const std::string_view n = type_name(t);
    return n.empty() ? hex(type_tag(t)) : std::string(n);
}

/// The head types a quantized member's float32 dequantized value may be
/// presented as: float32, float64 (widening) or a narrower real float type.
bool quantized_member_matches(ElementType head) {
    switch (head) {
        case ElementType::kFloat64:
        case ElementType::kFloat32:
        case ElementType::kFloat16:
        case ElementType::kBFloat16:
        case ElementType::kFloat8E4M3:
        case ElementType::kFloat8E5M2:
        case ElementType::kFloat6E2M3:
        case ElementType::kFloat6E3M2:
        case ElementType::kFloat4E2M1: return true;
        default: return false;
    }
}

/// The volume of a box (product of its extents) in 128 bits; nullopt on overflow.
std::optional<u128> volume(std::span<const uint64_t> extents) {
    u128 v = 1;
    for (uint64_t n : extents) {
        if (n == 0) {
            return u128{0};
        }
    }
    for (uint64_t n : extents) {
        if (__builtin_mul_overflow(v, static_cast<u128>(n), &v)) {
            return std::nullopt;
        }
    }
    return v;
}

std::string u128_text(u128 v) {
    if (v == 0) {
        return "0";
    }
    std::string s;
    while (v != 0) {
        s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
        v /= 10;
    }
    return s;
}

}  // namespace

CompositeAssembler::CompositeAssembler(const CompositeOptions& options) : options_(options) {}

std::vector<CompletedComposite> CompositeAssembler::take_completed() {
    std::vector<CompletedComposite> out = std::move(completed_);
    completed_.clear();
    return out;
}

void CompositeAssembler::reset() {
    scopes_.clear();
    completed_.clear();
    failure_.reset();
    count_ = 0;
}

Status CompositeAssembler::fail(Error e) {
    failure_ = e;
    return e;
}

Status CompositeAssembler::add(const TensorDescriptor& d) {
    if (failure_) {
        return *failure_;
    }
    const uint64_t pos = count_++;
    if (!scopes_.empty()) {
        Scope& parent = scopes_.back();
        if (auto s = check_member(parent, d); !s) {
            return fail(std::move(s).error());
        }
        parent.members.push_back(pos);
    }
    if (std::holds_alternative<CompositeLayout>(d.layout)) {
        if (auto s = open_head(d); !s) {
            return fail(std::move(s).error());
        }
        scopes_.back().head = pos;
    }
    // Close every composite whose last member has arrived; a nested composite
    // closing may complete its parent in turn.
    while (!scopes_.empty() && scopes_.back().members.size() == scopes_.back().member_count) {
        Scope& s = scopes_.back();
        if (auto st = close(s); !st) {
            return fail(std::move(st).error());
        }
        completed_.push_back(CompletedComposite{s.head, static_cast<uint32_t>(scopes_.size() - 1),
                                                static_cast<CompositionRule>(s.rule), std::move(s.members)});
        scopes_.pop_back();
    }
    return Status::success();
}

Status CompositeAssembler::open_head(const TensorDescriptor& d) {
    const auto& k = std::get<CompositeLayout>(d.layout);
    const uint64_t pos = count_ - 1;
    const auto rule = static_cast<uint8_t>(k.rule);
    const auto op = static_cast<uint8_t>(k.combine_op);
    const std::string where = "composite head #" + dec(pos) + " (" + rule_name(rule) + "): ";
    if (scopes_.size() + 1 > kMaxCompositeDepth) {
        return Error(ErrorCode::kNestingTooDeep, where + "opens nesting level " + dec(scopes_.size() + 1) +
                                                     "; composites nest at most " + dec(kMaxCompositeDepth) +
                                                     " levels deep");
    }
    if (is_private_rule(rule)) {
        if (options_.strict) {
            return Error(ErrorCode::kUnsupported,
                         where + "the implementation-private composition rule is not understood (strict mode)");
        }
    } else if (rule != kPartition && rule != kOverlay && rule != kGroup) {
        return Error(ErrorCode::kInvalidComposite, where + "composition_rule " + hex(rule) + " is reserved or invalid");
    } else if (rule == kOverlay ? (op != 0x01 && op != 0x02) : op != 0x00) {
        return Error(ErrorCode::kInvalidComposite,
                     where + "combine_op " + hex(op) + " is not allowed (overlay: 0x01 or 0x02; partition, group: 0x00)");
    }
    if (k.member_count == kOpenCompositeMemberCount) {
        return Error(options_.strict ? ErrorCode::kInvalidComposite : ErrorCode::kUnsupported,
                     where + "member_count 0xFFFFFFFF (an open composite) is reserved; its members cannot be bound");
    }
    if ((rule == kPartition || rule == kOverlay) && has_dynamic_dim(d.shape)) {
        return Error(ErrorCode::kInvalidComposite,
                     where + "the shape " + shape_text(d.shape) +
                         " has a dynamic dimension, but member shards (whose parent_shape must equal it) are static");
    }
    Scope s;
    s.head = pos;
    s.rule = rule;
    s.member_count = k.member_count;
    s.shape = d.shape;
    s.type = d.element_type;
    s.extension_type = d.extension_type;
    scopes_.push_back(std::move(s));
    return Status::success();
}

Status CompositeAssembler::check_member(Scope& s, const TensorDescriptor& d) const {
    const uint64_t index = s.members.size();
    const uint64_t pos = count_ - 1;
    const std::string where = "composite head #" + dec(s.head) + " (" + rule_name(s.rule) + "), member " +
                              dec(index) + " (descriptor #" + dec(pos) + "): ";
    auto bad = [&where](const std::string& what) { return Error(ErrorCode::kInvalidComposite, where + what); };

    if (is_private_rule(s.rule)) {
        return Status::success();  // permissive only: nothing is known about its members
    }
    if (s.rule == kGroup) {
        if (d.composite_member) {
            return bad("a group member must not carry a composite member section (HAS_COMPOSITE_MEMBER)");
        }
        return Status::success();
    }

    // Partition and overlay. 1: shard section, parent_shape, box in bounds.
    if (!d.shard) {
        return bad("a " + rule_name(s.rule) + " member must carry a shard section placing it in the head's index space");
    }
    const ShardDescriptor& shard = *d.shard;
    if (shard.parent_shape != s.shape) {
        return bad("shard.parent_shape " + shape_text(shard.parent_shape) + " must equal the head's shape " +
                   shape_text(s.shape));
    }
    const size_t rank = s.shape.size();
    if (d.shape.size() != rank || shard.shard_offset.size() != rank) {
        return bad("the member's rank " + dec(d.shape.size()) + " and its shard_offset (" +
                   dec(shard.shard_offset.size()) + " entries) must match the head's rank " + dec(rank));
    }
    for (size_t k = 0; k < rank; ++k) {
        const std::optional<uint64_t> end = add_u64(shard.shard_offset[k], d.shape[k]);
        if (d.shape[k] == kDynamicDim || !end || *end > s.shape[k]) {
            return bad("its box along dimension " + dec(k) + ", offset " + dec(shard.shard_offset[k]) + " + extent " +
                       dec(d.shape[k]) + ", exceeds the head's shape[" + dec(k) + "] = " + dec(s.shape[k]));
        }
    }

    // 2: the decoded value type equals the head's type_tag.
    if (!d.quantization) {
        if (d.element_type != s.type || d.extension_type != s.extension_type) {
            return bad("its element type " + type_text(d.element_type) + " differs from the head's type_tag " +
                       type_text(s.type) + " (" + rule_name(s.rule) + " members must decode to the head's type)");
        }
    } else if (std::holds_alternative<OpaqueQuantization>(d.quantization->scheme)) {
        if (options_.strict) {
            return Error(ErrorCode::kUnsupported,
                         where + "its quantization scheme " +
                             hex(std::get<OpaqueQuantization>(d.quantization->scheme).scheme_tag) +
                             " is not interpreted, so its decoded type cannot be checked against the head's " +
                             type_text(s.type) + " (strict mode)");
        }
    } else if (!quantized_member_matches(s.type)) {
        return bad("it is quantized (" + std::string(scheme_name(scheme_tag(d.quantization->scheme))) +
                   ") and decodes to float32, which cannot be presented as the head's type_tag " + type_text(s.type));
    }

    // 4 (overlay) / 5 (partition): the composite member section.
    if (s.rule == kPartition) {
        if (d.composite_member) {
            return bad("a partition member must not carry a composite member section (HAS_COMPOSITE_MEMBER)");
        }
        s.box_offsets.insert(s.box_offsets.end(), shard.shard_offset.begin(), shard.shard_offset.end());
        s.box_shapes.insert(s.box_shapes.end(), d.shape.begin(), d.shape.end());
        return Status::success();
    }
    if (!d.composite_member) {
        return bad(std::holds_alternative<CompositeLayout>(d.layout)
                       ? "an overlay member must carry a composite member section, which a composite head must not "
                         "carry: a composite cannot be an overlay member"
                       : "an overlay member must carry a composite member section (member_role)");
    }
    const auto role = static_cast<uint8_t>(d.composite_member->role);
    if (role > 0x01) {
        return bad("composite_member.member_role " + hex(role) + " is reserved (0x00 correction, 0x01 base)");
    }
    if (index == 0) {
        if (role != 0x01) {
            return bad("the first overlay member must be the base (member_role 0x01), got a correction");
        }
        const bool origin = std::all_of(shard.shard_offset.begin(), shard.shard_offset.end(),
                                        [](uint64_t o) { return o == 0; });
        if (!origin || d.shape != s.shape) {
            return bad("the base must span the whole index space (shard_offset all zero and shape " +
                       shape_text(s.shape) + "), got offset " + shape_text(shard.shard_offset) + " and shape " +
                       shape_text(d.shape));
        }
    } else if (role != 0x00) {
        return bad("only the first overlay member is the base; later members must be corrections (member_role 0x00)");
    }
    return Status::success();
}

Status CompositeAssembler::close(Scope& s) const {
    const std::string where = "composite head #" + dec(s.head) + " (" + rule_name(s.rule) + "): ";
    if (s.rule == kOverlay && s.member_count == 0) {
        return Error(ErrorCode::kInvalidComposite,
                     where + "member_count 0: an overlay needs a base member, which an empty composite cannot supply");
    }
    if (s.rule != kPartition || !options_.strict) {
        return Status::success();
    }
    const size_t rank = s.shape.size();
    const size_t n = s.members.size();
    const std::span<const uint64_t> offs(s.box_offsets);
    const std::span<const uint64_t> exts(s.box_shapes);
    auto off = [&](size_t m, size_t k) { return offs[m * rank + k]; };
    auto ext = [&](size_t m, size_t k) { return exts[m * rank + k]; };
    auto box_text = [&](size_t m) {
        std::string t = "[";
        for (size_t k = 0; k < rank; ++k) {
            t += (k == 0 ? "" : ", ") + dec(off(m, k)) + ".." + dec(off(m, k) + ext(m, k));
        }
        return t + ")";
    };

    auto overlap_error = [&](size_t a, size_t b) {
        const size_t lo = std::min(a, b);
        const size_t hi = std::max(a, b);
        return Error(ErrorCode::kInvalidComposite,
                     where + "members " + dec(lo) + " (descriptor #" + dec(s.members[lo]) + ") and " + dec(hi) +
                         " (descriptor #" + dec(s.members[hi]) + ") overlap: boxes " + box_text(lo) + " and " +
                         box_text(hi) + " (partition members must not overlap)");
    };
    // Non-overlap: A and B overlap when, along every dimension k,
    // A.off < B.off + B.ext and B.off < A.off + A.ext (composite.md); for a
    // scalar head that holds for any two members. Sweep along the dimension
    // with the most distinct offsets.
    if (rank == 0 && n > 1) {
        return overlap_error(0, 1);
    }
    if (rank > 0 && n > 1) {
        size_t sweep = 0;
        size_t best = 0;
        std::vector<uint64_t> values(n);
        for (size_t k = 0; k < rank; ++k) {
            for (size_t m = 0; m < n; ++m) {
                values[m] = off(m, k);
            }
            std::sort(values.begin(), values.end());
            const auto distinct = static_cast<size_t>(std::unique(values.begin(), values.end()) - values.begin());
            if (distinct > best) {
                best = distinct;
                sweep = k;
            }
        }
        std::vector<size_t> order(n);
        std::iota(order.begin(), order.end(), size_t{0});
        std::stable_sort(order.begin(), order.end(),
                         [&](size_t a, size_t b) { return off(a, sweep) < off(b, sweep); });
        std::vector<size_t> active;
        for (size_t b : order) {
            const uint64_t start = off(b, sweep);
            // Boxes ending at or before this start cannot meet it or any later box.
            std::erase_if(active, [&](size_t a) { return off(a, sweep) + ext(a, sweep) <= start; });
            for (size_t a : active) {
                bool overlap = true;
                for (size_t k = 0; k < rank && overlap; ++k) {
                    overlap = off(a, k) < off(b, k) + ext(b, k) && off(b, k) < off(a, k) + ext(a, k);
                }
                if (overlap) {
                    return overlap_error(a, b);
                }
            }
            active.push_back(b);
        }
    }

    // Exact cover: disjoint boxes inside the head cover it iff their volumes add up to its volume.
    const std::optional<u128> whole = volume(s.shape);
    if (!whole) {
        return Error(ErrorCode::kSizeOverflow,
                     where + "the volume of the shape " + shape_text(s.shape) + " exceeds 2^128; coverage cannot be checked");
    }
    u128 covered = 0;
    for (size_t m = 0; m < n; ++m) {
        const std::optional<u128> v = volume(exts.subspan(m * rank, rank));
        if (!v || __builtin_add_overflow(covered, *v, &covered)) {
            return Error(ErrorCode::kSizeOverflow, where + "the member volumes overflow 128 bits");
        }
    }
    if (covered != *whole) {
        return Error(ErrorCode::kInvalidComposite,
                     where + "the " + dec(n) + " members cover " + u128_text(covered) + " of the " + u128_text(*whole) +
                         " elements of the shape " + shape_text(s.shape) +
                         ": the partition leaves a gap (members must cover the index space exactly)");
    }
    return Status::success();
}

Status CompositeAssembler::finish() const {
    if (failure_) {
        return *failure_;
    }
    if (scopes_.empty()) {
        return Status::success();
    }
    const Scope& outer = scopes_.front();
    std::string msg = "torn composite: composite head #" + dec(outer.head) + " (" + rule_name(outer.rule) +
                      ") declared " + dec(outer.member_count) + " members, " + dec(outer.members.size()) +
                      " arrived before the end";
    if (scopes_.size() > 1) {
        const Scope& inner = scopes_.back();
        msg += " (the innermost open composite, head #" + dec(inner.head) + " at nesting level " +
               dec(scopes_.size()) + ", has " + dec(inner.members.size()) + " of " + dec(inner.member_count) + ")";
    }
    return Error(ErrorCode::kInvalidComposite, msg);
}

}  // namespace hurray
