// SPDX-License-Identifier: Apache-2.0
// Composites (composite.hpp, composite_materialize.hpp; layouts/composite.md):
// every binding and validation rule has a rejection test naming the member
// and the rule, each valid composition (nested too) round-trips through
// encode/decode and the assembler, and the merged view of partitions and
// overlays is checked value by value.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "descriptor_test_support.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/core/composite.hpp"
#include "hurray/core/composite_materialize.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/element_convert.hpp"
#include "hurray/core/tensor_view.hpp"
#include "le_bytes.hpp"

namespace {

using namespace hurray;            // NOLINT(google-build-using-namespace): test brevity
using namespace hurray_desc_test;  // NOLINT(google-build-using-namespace)
using E = ErrorCode;

const CompositeOptions kPermissiveComposite{.strict = false};

// ---------------------------------------------------------------------------
// Builders

TensorDescriptor head(ElementType t, Shape shape, CompositionRule rule, uint32_t members,
                      CombineOp op = CombineOp::kNone) {
    TensorDescriptor d;
    d.element_type = t;
    d.shape = std::move(shape);
    d.layout = CompositeLayout{rule, op, members};
    return d;
}

/// A dense row-major member placed at `offset` in `parent`.
TensorDescriptor member(ElementType t, Shape shape, Shape parent, Shape offset,
                        std::optional<MemberRole> role = std::nullopt) {
    TensorDescriptor d = must(make_dense(t, std::move(shape)));
    d.shard = ShardDescriptor{parent.to_vector(), offset.to_vector()};
    if (role) {
        d.composite_member = CompositeMember{*role};
    }
    return d;
}

/// Encodes (checked) and decodes a descriptor, as a stream or file reader sees it.
TensorDescriptor round_trip(const TensorDescriptor& d) {
    const Bytes bytes = must_encode(d);
    auto back = decode(bytes);
    if (!back.ok()) {
        ADD_FAILURE() << "decode: " << back.error().to_string();
        return d;
    }
    EXPECT_EQ(*back, d);
    return *back;
}

/// Feeds descriptors in order; returns the first failure (or finish()).
Status feed(CompositeAssembler& a, const std::vector<TensorDescriptor>& ds, bool finish = true) {
    for (const TensorDescriptor& d : ds) {
        HURRAY_RETURN_IF_ERROR(a.add(d));
    }
    if (finish) {
        return a.finish();
    }
    return Status::success();
}

/// The whole sequence round-trips through encode/decode and assembles.
::testing::AssertionResult Assembles(const std::vector<TensorDescriptor>& ds, CompositeAssembler& a) {
    std::vector<TensorDescriptor> decoded;
    for (const TensorDescriptor& d : ds) {
        decoded.push_back(round_trip(d));
    }
    auto s = feed(a, decoded);
    if (!s.ok()) {
        return ::testing::AssertionFailure() << s.error().to_string();
    }
    if (!a.idle()) {
        return ::testing::AssertionFailure() << "still " << a.depth() << " composites open";
    }
    return ::testing::AssertionSuccess();
}

/// Fails with `code` and a message holding every fragment.
::testing::AssertionResult Fails(const Status& s, E code, std::initializer_list<std::string> fragments) {
    if (s.ok()) {
        return ::testing::AssertionFailure() << "accepted; expected " << error_code_name(code);
    }
    if (s.error().code() != code) {
        return ::testing::AssertionFailure() << "got \"" << s.error().to_string() << "\"; expected "
                                             << error_code_name(code);
    }
    for (const std::string& f : fragments) {
        if (s.error().message().find(f) == std::string::npos) {
            return ::testing::AssertionFailure() << "message \"" << s.error().message() << "\" lacks \"" << f << "\"";
        }
    }
    return ::testing::AssertionSuccess() << s.error().to_string();
}

constexpr auto kPartition = CompositionRule::kPartition;
constexpr auto kOverlay = CompositionRule::kOverlay;
constexpr auto kGroup = CompositionRule::kGroup;
constexpr auto kF32 = ElementType::kFloat32;
constexpr auto kBase = MemberRole::kBase;
constexpr auto kCorrection = MemberRole::kCorrection;

// ---------------------------------------------------------------------------
// Partition

// composite.md's example: [8, 8] split into two [8, 4] members.
std::vector<TensorDescriptor> partition_example() {
    return {head(kF32, {8, 8}, kPartition, 2), member(kF32, {8, 4}, {8, 8}, {0, 0}),
            member(kF32, {8, 4}, {8, 8}, {0, 4})};
}

TEST(CompositePartition, SpecExampleAssembles) {
    CompositeAssembler a;
    ASSERT_TRUE(Assembles(partition_example(), a));
    ASSERT_EQ(a.completed().size(), 1U);
    EXPECT_EQ(a.completed()[0], (CompletedComposite{0, 0, kPartition, {1, 2}}));
    EXPECT_EQ(a.count(), 3U);
    EXPECT_EQ(a.depth(), 0U);
}

// A 3 x 3 grid of uneven tiles, members in any order, and a COO member.
TEST(CompositePartition, GridOfHeterogeneousMembersAssembles) {
    std::vector<TensorDescriptor> ds = {head(kF32, {10, 7}, kPartition, 9)};
    const uint64_t rows[] = {0, 3, 4, 10};
    const uint64_t cols[] = {0, 5, 6, 7};
    for (int i = 2; i >= 0; --i) {
        for (int j = 0; j < 3; ++j) {
            ds.push_back(member(kF32, {rows[i + 1] - rows[i], cols[j + 1] - cols[j]}, {10, 7}, {rows[i], cols[j]}));
        }
    }
    TensorDescriptor coo = must(make_coo(kF32, {6, 5}, 2, true));
    coo.shard = ShardDescriptor{{10, 7}, {4, 0}};
    ds[1] = coo;  // rows 4..10, cols 0..5
    CompositeAssembler a;
    ASSERT_TRUE(Assembles(ds, a));
    EXPECT_EQ(a.completed()[0].members.size(), 9U);
}

// Per-member check 1: a shard section.
TEST(CompositePartition, RejectsMemberWithoutShard) {
    auto ds = partition_example();
    ds[2].shard.reset();
    CompositeAssembler a;
    EXPECT_TRUE(Fails(feed(a, ds), E::kInvalidComposite,
                      {"composite head #0 (partition), member 1 (descriptor #2)", "must carry a shard section"}));
}

// Per-member check 1: parent_shape equals the head's shape.
TEST(CompositePartition, RejectsWrongParentShape) {
    auto ds = partition_example();
    ds[1].shard->parent_shape = {8, 9};
    CompositeAssembler a;
    EXPECT_TRUE(Fails(feed(a, ds), E::kInvalidComposite,
                      {"member 0 (descriptor #1)", "shard.parent_shape [8, 9] must equal the head's shape [8, 8]"}));
}

// Per-member check 1: the box lies in the head (a model check_descriptor would refuse).
TEST(CompositePartition, RejectsBoxOutOfBounds) {
    auto ds = partition_example();
    ds[2].shard->shard_offset = {0, 5};
    CompositeAssembler a;
    EXPECT_TRUE(Fails(feed(a, ds), E::kInvalidComposite,
                      {"member 1 (descriptor #2)", "along dimension 1, offset 5 + extent 4", "shape[1] = 8"}));
    ds[2].shard->shard_offset = {0, UINT64_MAX - 1};
    a.reset();
    EXPECT_TRUE(Fails(feed(a, ds), E::kInvalidComposite, {"along dimension 1"}));
}

// Close-time check: no overlap.
TEST(CompositePartition, RejectsOverlap) {
    std::vector<TensorDescriptor> ds = {head(kF32, {8, 8}, kPartition, 3), member(kF32, {8, 4}, {8, 8}, {0, 0}),
                                        member(kF32, {4, 4}, {8, 8}, {0, 4}), member(kF32, {5, 4}, {8, 8}, {3, 4})};
    CompositeAssembler a;
    EXPECT_TRUE(Fails(feed(a, ds), E::kInvalidComposite,
                      {"composite head #0 (partition)", "members 1 (descriptor #2) and 2 (descriptor #3) overlap",
                       "[0..4, 4..8)", "[3..8, 4..8)"}));
    EXPECT_FALSE(a.idle());  // the failure leaves the composite open
    // Permissive mode may skip the cover checks.
    CompositeAssembler p(kPermissiveComposite);
    EXPECT_TRUE(feed(p, ds).ok());
}

// Close-time check: exact cover (a gap).
TEST(CompositePartition, RejectsGap) {
    std::vector<TensorDescriptor> ds = {head(kF32, {8, 8}, kPartition, 2), member(kF32, {8, 4}, {8, 8}, {0, 0}),
                                        member(kF32, {4, 4}, {8, 8}, {4, 4})};
    CompositeAssembler a;
    EXPECT_TRUE(Fails(feed(a, ds), E::kInvalidComposite,
                      {"composite head #0 (partition)", "the 2 members cover 48 of the 64 elements", "gap"}));
    CompositeAssembler p(kPermissiveComposite);
    EXPECT_TRUE(feed(p, ds).ok());
}

// The spec's overlap formula along every dimension: boxes that only touch do not overlap.
TEST(CompositePartition, TouchingBoxesAndEmptyMembers) {
    // Rank 3, 2 x 2 x 2 cubes of a [4, 4, 4] head.
    std::vector<TensorDescriptor> ds = {head(ElementType::kInt8, {4, 4, 4}, kPartition, 9)};
    for (uint64_t i : {0, 2}) {
        for (uint64_t j : {0, 2}) {
            for (uint64_t k : {0, 2}) {
                ds.push_back(member(ElementType::kInt8, {2, 2, 2}, {4, 4, 4}, {i, j, k}));
            }
        }
    }
    // An empty member on a box edge covers nothing and overlaps nothing.
    ds.push_back(member(ElementType::kInt8, {0, 2, 2}, {4, 4, 4}, {2, 0, 0}));
    CompositeAssembler a;
    EXPECT_TRUE(Assembles(ds, a));
    // Strictly inside another box along every dimension, the formula says overlap.
    ds.back().shard->shard_offset = {1, 1, 1};
    a.reset();
    EXPECT_TRUE(Fails(feed(a, ds), E::kInvalidComposite, {"members 0 (descriptor #1) and 8 (descriptor #9) overlap"}));
}

// A scalar head is covered by one rank-0 member.
TEST(CompositePartition, ScalarHead) {
    CompositeAssembler a;
    EXPECT_TRUE(Assembles({head(kF32, {}, kPartition, 1), member(kF32, {}, {}, {})}, a));
    a.reset();
    EXPECT_TRUE(Fails(feed(a, {head(kF32, {}, kPartition, 2), member(kF32, {}, {}, {}), member(kF32, {}, {}, {})}),
                      E::kInvalidComposite, {"overlap"}));
}

// Many members: a 1 x 4000 strip and a 64 x 64 grid stay fast (sweep along the best dimension).
TEST(CompositePartition, ManyMembers) {
    std::vector<TensorDescriptor> ds = {head(kF32, {2, 4000}, kPartition, 4000)};
    for (uint64_t j = 0; j < 4000; ++j) {
        ds.push_back(member(kF32, {2, 1}, {2, 4000}, {0, j}));
    }
    CompositeAssembler a;
    ASSERT_TRUE(feed(a, ds).ok());
    ds = {head(kF32, {64, 64}, kPartition, 4096)};
    for (uint64_t i = 0; i < 64; ++i) {
        for (uint64_t j = 0; j < 64; ++j) {
            ds.push_back(member(kF32, {1, 1}, {64, 64}, {63 - i, j}));
        }
    }
    a.reset();
    ASSERT_TRUE(feed(a, ds).ok());
    ds[4000].shard->shard_offset = {63, 63};  // a duplicate box: overlap (and a gap)
    a.reset();
    EXPECT_TRUE(Fails(feed(a, ds), E::kInvalidComposite, {"overlap"}));
}

// A partition head needs a static shape.
TEST(CompositePartition, RejectsDynamicHeadShape) {
    CompositeAssembler a;
    EXPECT_TRUE(Fails(a.add(head(kF32, {kDynamicDim, 4}, kPartition, 1)), E::kInvalidComposite,
                      {"composite head #0 (partition)", "dynamic dimension"}));
}

// Per-member check 5: partition members carry no composite member section.
TEST(CompositePartition, RejectsMemberSection) {
    auto ds = partition_example();
    ds[1].composite_member = CompositeMember{kBase};
    CompositeAssembler a;
    EXPECT_TRUE(Fails(feed(a, ds), E::kInvalidComposite,
                      {"member 0 (descriptor #1)", "a partition member must not carry a composite member section"}));
}

// ---------------------------------------------------------------------------
// Decoded value type (per-member check 2)

TEST(CompositeTypes, UnquantizedMemberMustStoreTheHeadType) {
    auto ds = partition_example();
    ds[2] = member(ElementType::kFloat16, {8, 4}, {8, 8}, {0, 4});
    CompositeAssembler a;
    EXPECT_TRUE(Fails(feed(a, ds), E::kInvalidComposite,
                      {"member 1 (descriptor #2)", "element type float16 differs from the head's type_tag float32"}));
}

// A quantized member decodes to float32, presentable as float32/float64 or a narrower real float.
TEST(CompositeTypes, QuantizedMemberDecodesToFloat) {
    auto quantized = [] {
        TensorDescriptor q = must(make_per_block_quantized(ElementType::kInt4, {8, 8}, 1, 4));
        q.shard = ShardDescriptor{{8, 8}, {0, 0}};
        q.composite_member = CompositeMember{kBase};
        return q;
    };
    for (ElementType t : {ElementType::kFloat16, ElementType::kBFloat16, ElementType::kFloat32, ElementType::kFloat64,
                          ElementType::kFloat8E4M3}) {
        CompositeAssembler a;
        // The SpQR example: an int4 per-block base under a float16 head, a float16 COO correction.
        TensorDescriptor outliers = must(make_coo(t, {8, 8}, 3, true));
        outliers.shard = ShardDescriptor{{8, 8}, {0, 0}};
        outliers.composite_member = CompositeMember{kCorrection};
        EXPECT_TRUE(Assembles({head(t, {8, 8}, kOverlay, 2, CombineOp::kReplace), quantized(), outliers}, a))
            << type_name(t);
    }
    for (ElementType t : {ElementType::kInt8, ElementType::kInt4, ElementType::kFloat8E8M0, ElementType::kComplex64,
                          ElementType::kFloat128}) {
        CompositeAssembler a;
        EXPECT_TRUE(Fails(feed(a, {head(t, {8, 8}, kOverlay, 1, CombineOp::kAdd), quantized()}), E::kInvalidComposite,
                          {"member 0 (descriptor #1)", "quantized (per_block_affine) and decodes to float32",
                           std::string(type_name(t))}));
    }
}

// A private quantization scheme hides the decoded type: unsupported in strict mode.
TEST(CompositeTypes, OpaqueQuantizationSchemeNeedsPermissiveMode) {
    TensorDescriptor q = member(ElementType::kInt8, {4}, {4}, {0});
    q.quantization = QuantizationDescriptor{OpaqueQuantization{0xF3, 1, 0, {}}, {}};
    const std::vector<TensorDescriptor> ds = {head(kF32, {4}, kPartition, 1), q};
    CompositeAssembler a;
    EXPECT_TRUE(Fails(feed(a, ds), E::kUnsupported, {"member 0 (descriptor #1)", "quantization scheme 0xF3"}));
    CompositeAssembler p(kPermissiveComposite);
    EXPECT_TRUE(feed(p, ds).ok());
}

// ---------------------------------------------------------------------------
// Overlay

// composite.md's overlay example, shrunk: a float16 base and a float16 COO correction.
std::vector<TensorDescriptor> overlay_example(CombineOp op = CombineOp::kReplace) {
    TensorDescriptor outliers = must(make_coo(ElementType::kFloat16, {16, 16}, 2, true));
    outliers.shard = ShardDescriptor{{16, 16}, {0, 0}};
    outliers.composite_member = CompositeMember{kCorrection};
    return {head(ElementType::kFloat16, {16, 16}, kOverlay, 3, op),
            member(ElementType::kFloat16, {16, 16}, {16, 16}, {0, 0}, kBase), outliers,
            member(ElementType::kFloat16, {2, 3}, {16, 16}, {14, 13}, kCorrection)};
}

TEST(CompositeOverlay, ExampleAssembles) {
    for (CombineOp op : {CombineOp::kReplace, CombineOp::kAdd}) {
        CompositeAssembler a;
        ASSERT_TRUE(Assembles(overlay_example(op), a));
        EXPECT_EQ(a.completed()[0], (CompletedComposite{0, 0, kOverlay, {1, 2, 3}}));
    }
    // Corrections may overlap each other and repeat boxes.
    auto ds = overlay_example();
    ds[3].shard->shard_offset = {0, 0};
    CompositeAssembler a;
    EXPECT_TRUE(Assembles(ds, a));
}

// Per-member check 4: every overlay member carries a composite member section.
TEST(CompositeOverlay, RejectsMemberWithoutSection) {
    auto ds = overlay_example();
    ds[3].composite_member.reset();
    CompositeAssembler a;
    EXPECT_TRUE(Fails(feed(a, ds), E::kInvalidComposite,
                      {"composite head #0 (overlay), member 2 (descriptor #3)",
                       "must carry a composite member section"}));
}

// Per-member check 4: the first member is the base.
TEST(CompositeOverlay, RejectsCorrectionFirst) {
    auto ds = overlay_example();
    ds[1].composite_member = CompositeMember{kCorrection};
    CompositeAssembler a;
    EXPECT_TRUE(Fails(feed(a, ds), E::kInvalidComposite,
                      {"member 0 (descriptor #1)", "the first overlay member must be the base"}));
}

// Per-member check 4: the base spans the whole index space.
TEST(CompositeOverlay, RejectsBaseNotSpanning) {
    auto ds = overlay_example();
    ds[1] = member(ElementType::kFloat16, {16, 8}, {16, 16}, {0, 0}, kBase);
    CompositeAssembler a;
    EXPECT_TRUE(Fails(feed(a, ds), E::kInvalidComposite,
                      {"member 0 (descriptor #1)", "the base must span the whole index space", "shape [16, 8]"}));
    ds[1] = member(ElementType::kFloat16, {8, 16}, {16, 16}, {8, 0}, kBase);
    a.reset();
    EXPECT_TRUE(Fails(feed(a, ds), E::kInvalidComposite, {"got offset [8, 0]"}));
}

// Per-member check 4: later members are corrections.
TEST(CompositeOverlay, RejectsSecondBase) {
    auto ds = overlay_example();
    ds[3].composite_member = CompositeMember{kBase};
    CompositeAssembler a;
    EXPECT_TRUE(Fails(feed(a, ds), E::kInvalidComposite,
                      {"member 2 (descriptor #3)", "later members must be corrections"}));
}

// Per-member check 4: a reserved member_role.
TEST(CompositeOverlay, RejectsReservedRole) {
    auto ds = overlay_example();
    ds[2].composite_member = CompositeMember{static_cast<MemberRole>(0x02)};
    CompositeAssembler a;
    EXPECT_TRUE(Fails(feed(a, ds), E::kInvalidComposite, {"member 1 (descriptor #2)", "member_role 0x02 is reserved"}));
}

// Per-member check 1 holds for overlay too.
TEST(CompositeOverlay, RejectsMissingShardAndWrongParent) {
    auto ds = overlay_example();
    ds[3].shard.reset();
    CompositeAssembler a;
    EXPECT_TRUE(Fails(feed(a, ds), E::kInvalidComposite, {"member 2 (descriptor #3)", "shard section"}));
    ds = overlay_example();
    ds[2].shard->parent_shape = {16, 8};
    a.reset();
    EXPECT_TRUE(Fails(feed(a, ds), E::kInvalidComposite, {"member 1 (descriptor #2)", "parent_shape [16, 8]"}));
}

// Close-time: an overlay with member_count 0 has no base.
TEST(CompositeOverlay, RejectsZeroMembers) {
    CompositeAssembler a;
    EXPECT_TRUE(Fails(a.add(head(kF32, {4}, kOverlay, 0, CombineOp::kAdd)), E::kInvalidComposite,
                      {"composite head #0 (overlay)", "member_count 0", "needs a base member"}));
    // Zero-member partitions and groups complete at once.
    CompositeAssembler b;
    ASSERT_TRUE(b.add(head(kF32, {0, 4}, kPartition, 0)).ok());
    ASSERT_TRUE(b.add(head(kF32, {4}, kGroup, 0)).ok());
    EXPECT_TRUE(b.idle());
    EXPECT_EQ(b.completed().size(), 2U);
    // A zero-member partition of a non-empty head leaves a gap.
    CompositeAssembler c;
    EXPECT_TRUE(Fails(c.add(head(kF32, {4}, kPartition, 0)), E::kInvalidComposite, {"cover 0 of the 4"}));
}

// A nested head cannot be an overlay member: it must carry a composite member
// section, which a head must not carry.
TEST(CompositeOverlay, RejectsNestedHeadAsMember) {
    TensorDescriptor nested = head(ElementType::kFloat16, {16, 16}, kPartition, 1);
    nested.shard = ShardDescriptor{{16, 16}, {0, 0}};
    CompositeAssembler a;
    EXPECT_TRUE(Fails(feed(a, {head(ElementType::kFloat16, {16, 16}, kOverlay, 1, CombineOp::kReplace), nested}),
                      E::kInvalidComposite, {"member 0 (descriptor #1)", "a composite cannot be an overlay member"}));
}

// ---------------------------------------------------------------------------
// Group

// Group members may differ arbitrarily and need no shard.
TEST(CompositeGroup, MembersAreFree) {
    TensorDescriptor sharded = member(ElementType::kInt8, {2}, {9}, {7});
    std::vector<TensorDescriptor> ds = {head(kF32, {1}, kGroup, 5),
                                        must(make_dense(ElementType::kInt64, {3, 3, 3})),
                                        must(make_csr(ElementType::kFloat16, 3, 4, 2)),
                                        must(make_per_block_quantized(ElementType::kUInt4, {64}, 0, 32)),
                                        sharded,
                                        must(make_dense(ElementType::kBool, {}))};
    CompositeAssembler a;
    ASSERT_TRUE(Assembles(ds, a));
    EXPECT_EQ(a.completed()[0], (CompletedComposite{0, 0, kGroup, {1, 2, 3, 4, 5}}));
}

// Per-member check 5: group members carry no composite member section.
TEST(CompositeGroup, RejectsMemberSection) {
    TensorDescriptor m = must(make_dense(kF32, {2}));
    m.composite_member = CompositeMember{kCorrection};
    CompositeAssembler a;
    EXPECT_TRUE(Fails(feed(a, {head(kF32, {1}, kGroup, 2), must(make_dense(kF32, {2})), m}), E::kInvalidComposite,
                      {"composite head #0 (group), member 1 (descriptor #2)",
                       "a group member must not carry a composite member section"}));
}

// ---------------------------------------------------------------------------
// Binding: standalone tensors, nesting, torn composites, reserved counts.

// Tensors outside composites are not members; positions count every descriptor.
TEST(CompositeBinding, StandaloneTensorsAndSeveralComposites) {
    std::vector<TensorDescriptor> ds = {must(make_dense(kF32, {2}))};
    for (const TensorDescriptor& d : partition_example()) {
        ds.push_back(d);
    }
    ds.push_back(must(make_dense(kF32, {2})));
    for (const TensorDescriptor& d : partition_example()) {
        ds.push_back(d);
    }
    CompositeAssembler a;
    ASSERT_TRUE(feed(a, {ds[0]}, false).ok());
    EXPECT_TRUE(a.idle());
    ASSERT_TRUE(feed(a, {ds[1], ds[2]}, false).ok());
    EXPECT_FALSE(a.idle());
    EXPECT_EQ(a.depth(), 1U);
    ASSERT_TRUE(feed(a, {ds.begin() + 3, ds.end()}).ok());
    ASSERT_EQ(a.completed().size(), 2U);
    EXPECT_EQ(a.completed()[0], (CompletedComposite{1, 0, kPartition, {2, 3}}));
    EXPECT_EQ(a.completed()[1], (CompletedComposite{5, 0, kPartition, {6, 7}}));
    const auto taken = a.take_completed();
    EXPECT_EQ(taken.size(), 2U);
    EXPECT_TRUE(a.completed().empty());
}

// Nested composites: pre-order, a nested head is one member of its parent.
TEST(CompositeBinding, NestedPartitionAndGroup) {
    // [8, 8] = nested partition [8, 4] at (0, 0) (two [4, 4]) + dense [8, 4] at (0, 4);
    // then a group holding that whole composite and a tensor.
    TensorDescriptor inner = head(kF32, {8, 4}, kPartition, 2);
    inner.shard = ShardDescriptor{{8, 8}, {0, 0}};
    const std::vector<TensorDescriptor> ds = {
        head(kF32, {1}, kGroup, 2),
        head(kF32, {8, 8}, kPartition, 2),
        inner,
        member(kF32, {4, 4}, {8, 4}, {0, 0}),
        member(kF32, {4, 4}, {8, 4}, {4, 0}),
        member(kF32, {8, 4}, {8, 8}, {0, 4}),
        must(make_dense(ElementType::kInt8, {5})),
    };
    CompositeAssembler a;
    ASSERT_TRUE(Assembles(ds, a));
    ASSERT_EQ(a.completed().size(), 3U);
    EXPECT_EQ(a.completed()[0], (CompletedComposite{2, 2, kPartition, {3, 4}}));
    EXPECT_EQ(a.completed()[1], (CompletedComposite{1, 1, kPartition, {2, 5}}));
    EXPECT_EQ(a.completed()[2], (CompletedComposite{0, 0, kGroup, {1, 6}}));

    // The nested head is checked as a member of its parent.
    auto bad = ds;
    bad[2].shard.reset();
    a.reset();
    EXPECT_TRUE(Fails(feed(a, bad), E::kInvalidComposite, {"composite head #1 (partition), member 0 (descriptor #2)"}));
    // Its own members are checked against it, not against the outer head.
    bad = ds;
    bad[4].shard->parent_shape = {8, 8};
    a.reset();
    EXPECT_TRUE(Fails(feed(a, bad), E::kInvalidComposite,
                      {"composite head #2 (partition), member 1 (descriptor #4)", "must equal the head's shape [8, 4]"}));
}

// Nesting depth: 8 levels are fine, the 9th head is rejected.
TEST(CompositeBinding, NestingDepthLimit) {
    std::vector<TensorDescriptor> ds;
    for (int i = 0; i < 8; ++i) {
        ds.push_back(head(kF32, {1}, kGroup, 1));
    }
    ds.push_back(must(make_dense(kF32, {1})));
    CompositeAssembler a;
    ASSERT_TRUE(Assembles(ds, a));
    EXPECT_EQ(a.completed().size(), 8U);
    EXPECT_EQ(a.completed().back().depth, 0U);
    EXPECT_EQ(a.completed().front().depth, 7U);

    ds.insert(ds.begin(), head(kF32, {1}, kGroup, 1));
    a.reset();
    auto s = feed(a, ds);
    EXPECT_TRUE(Fails(s, E::kNestingTooDeep, {"composite head #8 (group)", "opens nesting level 9", "at most 8"}));
    EXPECT_EQ(a.count(), 9U);
}

// A torn composite: the stream ends before all members arrived.
TEST(CompositeBinding, TornComposite) {
    auto ds = partition_example();
    ds.pop_back();
    CompositeAssembler a;
    ASSERT_TRUE(feed(a, ds, false).ok());
    EXPECT_TRUE(Fails(a.finish(), E::kInvalidComposite,
                      {"torn composite: composite head #0 (partition) declared 2 members, 1 arrived"}));
    // Permissive readers must not present it as complete either.
    CompositeAssembler p(kPermissiveComposite);
    ASSERT_TRUE(feed(p, ds, false).ok());
    EXPECT_FALSE(p.finish().ok());
    EXPECT_TRUE(p.completed().empty());
    // Torn inside a nested composite: the outermost head is named, the innermost too.
    CompositeAssembler n;
    ASSERT_TRUE(feed(n, {head(kF32, {1}, kGroup, 3), must(make_dense(kF32, {1})), head(kF32, {1}, kGroup, 2),
                         must(make_dense(kF32, {1}))},
                     false)
                    .ok());
    EXPECT_TRUE(Fails(n.finish(), E::kInvalidComposite,
                      {"head #0 (group) declared 3 members, 2 arrived", "head #2 at nesting level 2, has 1 of 2"}));
    // An empty stream and a complete one are not torn.
    EXPECT_TRUE(CompositeAssembler().finish().ok());
}

// member_count 0xFFFFFFFF (open composite) is reserved.
TEST(CompositeBinding, RejectsOpenMemberCount) {
    const TensorDescriptor open = head(kF32, {4}, kOverlay, kOpenCompositeMemberCount, CombineOp::kReplace);
    CompositeAssembler a;
    EXPECT_TRUE(Fails(a.add(open), E::kInvalidComposite, {"composite head #0 (overlay)", "0xFFFFFFFF", "reserved"}));
    CompositeAssembler p(kPermissiveComposite);
    EXPECT_TRUE(Fails(p.add(open), E::kUnsupported, {"open composite"}));
    // check_descriptor rejects it too in strict mode.
    EXPECT_FALSE(check_descriptor(open).ok());
}

// Head fields the descriptor check guards are re-checked for unchecked models.
TEST(CompositeBinding, RejectsIllegalHeadFields) {
    CompositeAssembler a;
    EXPECT_TRUE(Fails(a.add(head(kF32, {4}, kPartition, 1, CombineOp::kAdd)), E::kInvalidComposite,
                      {"combine_op 0x02 is not allowed"}));
    a.reset();
    EXPECT_TRUE(Fails(a.add(head(kF32, {4}, kOverlay, 1, CombineOp::kNone)), E::kInvalidComposite,
                      {"combine_op 0x00"}));
    a.reset();
    EXPECT_TRUE(Fails(a.add(head(kF32, {4}, static_cast<CompositionRule>(0x04), 1)), E::kInvalidComposite,
                      {"composition_rule 0x04 is reserved"}));
}

// Private composition rules: unsupported in strict mode, bound unchecked in permissive mode.
TEST(CompositeBinding, PrivateRule) {
    const std::vector<TensorDescriptor> ds = {head(kF32, {4}, static_cast<CompositionRule>(0xF1), 2),
                                              must(make_dense(ElementType::kInt8, {3})),
                                              must(make_dense(kF32, {9}))};
    CompositeAssembler a;
    EXPECT_TRUE(Fails(feed(a, ds), E::kUnsupported, {"implementation-private composition rule"}));
    CompositeAssembler p(kPermissiveComposite);
    ASSERT_TRUE(feed(p, ds).ok());
    EXPECT_EQ(p.completed()[0].members, (std::vector<uint64_t>{1, 2}));
}

// The first error sticks until reset.
TEST(CompositeBinding, ErrorsStick) {
    auto ds = partition_example();
    ds[1].shard.reset();
    CompositeAssembler a;
    const Status first = feed(a, ds, false);
    ASSERT_FALSE(first.ok());
    ASSERT_TRUE(a.failure().has_value());
    const Status again = a.add(must(make_dense(kF32, {1})));
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.error().message(), first.error().message());
    EXPECT_FALSE(a.finish().ok());
    a.reset();
    EXPECT_FALSE(a.failure().has_value());
    EXPECT_TRUE(feed(a, partition_example()).ok());
}

// ---------------------------------------------------------------------------
// Merged view (materialize_composite)

/// A member with its bytes; views point into it, so it must not move.
struct Member {
    TensorDescriptor d;
    std::vector<Bytes> data;
    std::vector<std::span<const uint8_t>> spans;
};

/// Owns members at stable addresses and their views.
class Members {
public:
    void add(TensorDescriptor d, std::vector<Bytes> data) {
        for (size_t i = 0; i < data.size() && i < d.buffers.size(); ++i) {
            d.buffers[i].byte_size = data[i].size();
        }
        Member& m = store_.emplace_back(Member{std::move(d), std::move(data), {}});
        for (const Bytes& b : m.data) {
            m.spans.emplace_back(b);
        }
    }
    std::vector<TensorView> views() const {
        std::vector<TensorView> v;
        for (const Member& m : store_) {
            auto view = TensorView::make(m.d, m.spans);
            if (!view.ok()) {
                ADD_FAILURE() << view.error().to_string();
                continue;
            }
            v.push_back(*view);
        }
        return v;
    }

private:
    std::deque<Member> store_;
};

template <typename T>
Bytes le_bytes(std::initializer_list<T> v) {
    Bytes b;
    for (T x : v) {
        for (size_t i = 0; i < sizeof(T); ++i) {
            b.push_back(static_cast<uint8_t>(static_cast<uint64_t>(x) >> (8 * i)));
        }
    }
    return b;
}
using hurray_test::f32s;
std::vector<float> as_f32(const Bytes& b) {
    std::vector<float> v(b.size() / 4);
    std::memcpy(v.data(), b.data(), v.size() * 4);
    return v;
}

/// A COO member with values `values` at `coords` (rank 2), placed at `offset`.
TensorDescriptor coo_member(ElementType t, Shape shape, uint64_t nnz, Shape parent, Shape offset,
                            std::optional<MemberRole> role = std::nullopt) {
    TensorDescriptor d = must(make_coo(t, std::move(shape), nnz, false));
    d.shard = ShardDescriptor{parent.to_vector(), offset.to_vector()};
    if (role) {
        d.composite_member = CompositeMember{*role};
    }
    return d;
}

// A partition of sparse members: each box gets its stored values, zeros elsewhere.
TEST(CompositeMaterialize, PartitionOfSparseMembers) {
    const TensorDescriptor h = head(kF32, {2, 4}, kPartition, 3);
    Members m;
    m.add(coo_member(kF32, {2, 2}, 2, {2, 4}, {0, 0}), {f32s({1, 2}), le_bytes<uint64_t>({0, 1, 1, 0})});
    TensorDescriptor csr = must(make_csr(kF32, 2, 1, 1));
    csr.shard = ShardDescriptor{{2, 4}, {0, 2}};
    m.add(csr, {f32s({3}), le_bytes<uint64_t>({0}), le_bytes<uint64_t>({0, 0, 1})});
    TensorDescriptor csc = csr;
    csc.layout = CscLayout{2};
    csc.shard = ShardDescriptor{{2, 4}, {0, 3}};
    m.add(csc, {f32s({4, 5}), le_bytes<uint64_t>({0, 1}), le_bytes<uint64_t>({0, 2})});
    const auto views = m.views();
    auto out = materialize_composite(h, views);
    ASSERT_TRUE(out.ok()) << out.error().to_string();
    EXPECT_EQ(as_f32(*out), (std::vector<float>{0, 1, 0, 4, 2, 0, 3, 5}));
}

// Overlay, sparse base and sparse corrections: replace keeps the base where nothing is stored.
TEST(CompositeMaterialize, OverlayReplaceAndAdd) {
    for (CombineOp op : {CombineOp::kReplace, CombineOp::kAdd}) {
        const TensorDescriptor h = head(kF32, {3, 3}, kOverlay, 3, op);
        Members m;
        m.add(coo_member(kF32, {3, 3}, 3, {3, 3}, {0, 0}, kBase),
              {f32s({1, 2, 3}), le_bytes<uint64_t>({0, 0, 1, 1, 2, 2})});
        m.add(coo_member(kF32, {3, 3}, 2, {3, 3}, {0, 0}, kCorrection),
              {f32s({10, 20}), le_bytes<uint64_t>({1, 1, 0, 2})});
        // A later correction over [1..3, 1..3): its (0, 0) is the head's (1, 1).
        m.add(coo_member(kF32, {2, 2}, 1, {3, 3}, {1, 1}, kCorrection), {f32s({100}), le_bytes<uint64_t>({0, 0})});
        const auto views = m.views();
        auto out = materialize_composite(h, views);
        ASSERT_TRUE(out.ok()) << out.error().to_string();
        if (op == CombineOp::kReplace) {
            EXPECT_EQ(as_f32(*out), (std::vector<float>{1, 0, 20, 0, 100, 0, 0, 0, 3}));
        } else {
            EXPECT_EQ(as_f32(*out), (std::vector<float>{1, 0, 20, 0, 112, 0, 0, 0, 3}));
        }
    }
}

// Add in the head's type: integers saturate, float16 rounds once to nearest even.
TEST(CompositeMaterialize, AddInTheHeadType) {
    {
        const TensorDescriptor h = head(ElementType::kInt8, {3}, kOverlay, 2, CombineOp::kAdd);
        Members m;
        m.add(coo_member(ElementType::kInt8, {3}, 3, {3}, {0}, kBase),
              {le_bytes<int8_t>({100, -100, 5}), le_bytes<uint64_t>({0, 1, 2})});
        m.add(coo_member(ElementType::kInt8, {3}, 3, {3}, {0}, kCorrection),
              {le_bytes<int8_t>({100, -100, -7}), le_bytes<uint64_t>({0, 1, 2})});
        const auto views = m.views();
        auto out = materialize_composite(h, views);
        ASSERT_TRUE(out.ok()) << out.error().to_string();
        EXPECT_EQ(*out, (Bytes{127, static_cast<uint8_t>(-128), static_cast<uint8_t>(-2)}));
    }
    {
        // 2048 + 1 is a float16 tie: rounds to even (2048); 2048 + 3 -> 2052.
        const TensorDescriptor h = head(ElementType::kFloat16, {2}, kOverlay, 2, CombineOp::kAdd);
        Members m;
        const uint16_t k2048 = float_to_float16(2048.0F);
        m.add(coo_member(ElementType::kFloat16, {2}, 2, {2}, {0}, kBase),
              {le_bytes<uint16_t>({k2048, k2048}), le_bytes<uint64_t>({0, 1})});
        m.add(coo_member(ElementType::kFloat16, {2}, 2, {2}, {0}, kCorrection),
              {le_bytes<uint16_t>({float_to_float16(1.0F), float_to_float16(3.0F)}), le_bytes<uint64_t>({0, 1})});
        const auto views = m.views();
        auto out = materialize_composite(h, views);
        ASSERT_TRUE(out.ok()) << out.error().to_string();
        EXPECT_EQ(*out, le_bytes<uint16_t>({k2048, float_to_float16(2052.0F)}));
    }
    {
        // Packed int4: 7 + 3 saturates to 7, -8 + -1 to -8.
        const TensorDescriptor h = head(ElementType::kInt4, {3}, kOverlay, 2, CombineOp::kAdd);
        Members m;
        m.add(coo_member(ElementType::kInt4, {3}, 2, {3}, {0}, kBase), {Bytes{0x87}, le_bytes<uint64_t>({0, 1})});
        m.add(coo_member(ElementType::kInt4, {3}, 3, {3}, {0}, kCorrection),
              {Bytes{0xF3, 0x02}, le_bytes<uint64_t>({0, 1, 2})});
        const auto views = m.views();
        auto out = materialize_composite(h, views);
        ASSERT_TRUE(out.ok()) << out.error().to_string();
        EXPECT_EQ(*out, (Bytes{0x87, 0x02}));
    }
}

// Dense members go through TensorView::materialize (the addressing change).
TEST(CompositeMaterialize, PartitionOfDenseMembers) {
    const TensorDescriptor h = head(kF32, {2, 3}, kPartition, 2);
    Members m;
    m.add(member(kF32, {2, 2}, {2, 3}, {0, 0}), {f32s({1, 2, 4, 5})});
    m.add(member(kF32, {2, 1}, {2, 3}, {0, 2}), {f32s({3, 6})});
    const auto views = m.views();
    auto out = materialize_composite(h, views);
    ASSERT_TRUE(out.ok()) << out.error().to_string();
    EXPECT_EQ(as_f32(*out), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

// The SpQR shape: a dense base with sparse outliers; replace and add.
TEST(CompositeMaterialize, DenseBaseWithSparseOutliers) {
    for (CombineOp op : {CombineOp::kReplace, CombineOp::kAdd}) {
        const TensorDescriptor h = head(kF32, {2, 2}, kOverlay, 3, op);
        Members m;
        m.add(member(kF32, {2, 2}, {2, 2}, {0, 0}, kBase), {f32s({1, 2, 3, 4})});
        m.add(coo_member(kF32, {2, 2}, 1, {2, 2}, {0, 0}, kCorrection), {f32s({50}), le_bytes<uint64_t>({1, 0})});
        m.add(member(kF32, {1, 1}, {2, 2}, {0, 1}, kCorrection), {f32s({7})});
        const auto views = m.views();
        auto out = materialize_composite(h, views);
        ASSERT_TRUE(out.ok()) << out.error().to_string();
        if (op == CombineOp::kReplace) {
            EXPECT_EQ(as_f32(*out), (std::vector<float>{1, 7, 50, 4}));
        } else {
            EXPECT_EQ(as_f32(*out), (std::vector<float>{1, 9, 53, 4}));
        }
    }
}

// What has no merged view here, and what the arguments must satisfy.
TEST(CompositeMaterialize, RejectsWhatItCannotMerge) {
    Members m;
    m.add(coo_member(kF32, {4}, 0, {4}, {0}), {Bytes{}, Bytes{}});
    const auto views = m.views();
    Bytes out(16);
    EXPECT_TRUE(Fails(materialize_composite(head(kF32, {4}, kGroup, 1), views, out), E::kUnsupported,
                      {"only partition and overlay"}));
    EXPECT_TRUE(Fails(materialize_composite(must(make_dense(kF32, {4})), views, out), E::kInvalidArgument,
                      {"not composite"}));
    EXPECT_TRUE(Fails(materialize_composite(head(kF32, {4}, kPartition, 2), views, out), E::kInvalidArgument,
                      {"1 member views given, the head declares 2"}));
    Bytes small(15);
    EXPECT_TRUE(Fails(materialize_composite(head(kF32, {4}, kPartition, 1), views, small), E::kInvalidArgument,
                      {"holds 15 bytes", "needs 16"}));
    // The composite rules apply: the member's parent_shape is not the head's shape.
    Bytes out20(20);
    EXPECT_TRUE(Fails(materialize_composite(head(kF32, {5}, kPartition, 1), views, out20), E::kInvalidComposite,
                      {"parent_shape"}));
    // Member data is validated first.
    Members bad;
    bad.add(coo_member(kF32, {4}, 2, {4}, {0}), {f32s({1, 2}), le_bytes<uint64_t>({3, 3})});
    EXPECT_TRUE(Fails(materialize_composite(head(kF32, {4}, kPartition, 1), bad.views(), out), E::kInvalidData,
                      {"repeats"}));
    // A quantized sparse member has no merged view here.
    Members qs;
    TensorDescriptor qsd = coo_member(ElementType::kInt8, {4}, 1, {4}, {0});
    qsd.quantization = QuantizationDescriptor{PerTensorAffine{1.0F, 0}};
    qs.add(qsd, {Bytes(1), le_bytes<uint64_t>({0})});
    EXPECT_TRUE(Fails(materialize_composite(head(kF32, {4}, kPartition, 1), qs.views(), out), E::kUnsupported,
                      {"member 0 is a quantized sparse tensor"}));
    // No float128 arithmetic for add.
    Members w;
    w.add(coo_member(ElementType::kFloat128, {1}, 0, {1}, {0}, kBase), {Bytes{}, Bytes{}});
    Bytes out16(16);
    EXPECT_TRUE(Fails(materialize_composite(head(ElementType::kFloat128, {1}, kOverlay, 1, CombineOp::kAdd),
                                            w.views(), out16),
                      E::kUnsupported, {"float128"}));
}

// composite.md § Element type across members: a quantized member contributes
// its dequantized values in the head's type (the SpQR shape: an int8 base and
// a float correction, overlay add).
TEST(CompositeMaterialize, QuantizedMembersAreDequantizedIntoTheHeadType) {
    // Partition of one per-block int8 member: q = [1, 2, 3, 4], scales [0.5, 2].
    Members q;
    TensorDescriptor qd = must(make_per_block_quantized(ElementType::kInt8, {4}, 0, 2, ElementType::kFloat32));
    qd.shard = ShardDescriptor{{4}, {0}};
    q.add(qd, {Bytes{1, 2, 3, 4}, f32s({0.5F, 2.0F})});
    Bytes out(16);
    auto s1 = materialize_composite(head(kF32, {4}, kPartition, 1), q.views(), out);
    ASSERT_TRUE(s1.ok()) << s1.error().to_string();
    EXPECT_EQ(out, f32s({0.5F, 1.0F, 6.0F, 8.0F}));

    // Overlay add under a float16 head: the quantized base plus a sparse correction.
    Members o;
    TensorDescriptor base = must(make_per_block_quantized(ElementType::kInt8, {4}, 0, 2, ElementType::kFloat32));
    base.shard = ShardDescriptor{{4}, {0}};
    base.composite_member = CompositeMember{kBase};
    o.add(base, {Bytes{1, 2, 3, 4}, f32s({0.5F, 2.0F})});
    o.add(coo_member(ElementType::kFloat16, {4}, 1, {4}, {0}, kCorrection),
          {le_bytes<uint16_t>({0x3C00}), le_bytes<uint64_t>({2})});  // +1.0 at [2]
    Bytes half(8);
    auto s2 = materialize_composite(head(ElementType::kFloat16, {4}, kOverlay, 2, CombineOp::kAdd), o.views(), half);
    ASSERT_TRUE(s2.ok()) << s2.error().to_string();
    // 0.5, 1, 7, 8 in float16.
    EXPECT_EQ(half, le_bytes<uint16_t>({0x3800, 0x3C00, 0x4700, 0x4800}));
}

}  // namespace
