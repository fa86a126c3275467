// SPDX-License-Identifier: Apache-2.0
// One test per rejection rule of the tensor descriptor (metadata.md and the
// documents it refers to). Each test asserts the exact ErrorCode and the byte
// offset of the offending field. Invalid inputs are built two ways: byte edits
// of a valid encoding, and invalid models given to check_descriptor()/encode().
//
// Wire offsets used below (metadata.md § Overall Descriptor Structure): fixed
// header 0..19 (magic 0, version_major 4, version_minor 5, descriptor_length 6,
// flags 10, type_tag 14, layout_tag 15, rank 16), shape at 20, byte_offset after
// the shape, the layout fields, buffer_count, 16-byte handles (byte_size +0,
// alignment +8, device_tag +12, sync_mode +13, memory_class +14, reserved +15),
// then quantization (u32 length + payload), shard, statistics (72 B),
// extension type (20 B), composite member (16 B).
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "descriptor_test_support.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/core/descriptor_codec.hpp"

namespace {

using namespace hurray;       // NOLINT(google-build-using-namespace): test brevity
using namespace hurray_desc_test;  // NOLINT(google-build-using-namespace)
using E = ErrorCode;

const DecodeOptions kPermissive{.strict = false};

uint64_t f64_bits(double v) { return std::bit_cast<uint64_t>(v); }

// ---------------------------------------------------------------------------
// Base descriptors. Each comment gives the offsets the tests patch.

// float32 [3,4] row-major, one 48-byte buffer: shape 20, byte_offset 36,
// buffer_count 44, buffer 0 at 45 (alignment 53, device 57, sync 58,
// memory_class 59, reserved 60); 61 bytes.
TensorDescriptor dense_f32() {
    TensorDescriptor d;
    d.element_type = ElementType::kFloat32;
    d.shape = {3, 4};
    d.buffers = {buf(48)};
    return d;
}
constexpr size_t kBuf0 = 45;

// float32 scalar: byte_offset 20, buffer_count 28, buffer 0 at 29; 45 bytes.
TensorDescriptor scalar_f32() {
    TensorDescriptor d;
    d.element_type = ElementType::kFloat32;
    d.buffers = {buf(4)};
    return d;
}

// Private type 0xF0 (16-bit float), float32-sized [3,4] in a 24-byte buffer;
// extension section at 61: bit_width 61, packing_factor 65, is_float 66,
// is_signed 67, sign_bits 68, exponent_bits 69, mantissa_bits 70, reserved
// 71..72, exponent_bias 73, has_nan 77, has_inf 78, reserved2 79..80; 81 bytes.
TensorDescriptor private_float16() {
    TensorDescriptor d;
    d.element_type = static_cast<ElementType>(0xF0);
    d.shape = {3, 4};
    d.buffers = {buf(24)};
    d.extension_type = ExtensionTypeDescriptor{.bit_width = 16,
                                               .packing_factor = 1,
                                               .is_float = true,
                                               .is_signed = false,
                                               .sign_bits = 1,
                                               .exponent_bits = 5,
                                               .mantissa_bits = 10,
                                               .exponent_bias = 15,
                                               .has_nan = true,
                                               .has_inf = true};
    return d;
}
constexpr size_t kExt = 61;

// Same as private_float16 but a signed 16-bit integer type.
TensorDescriptor private_int16() {
    TensorDescriptor d = private_float16();
    d.extension_type = ExtensionTypeDescriptor{.bit_width = 16, .packing_factor = 1, .is_signed = true};
    return d;
}

// float32 [4,4] tiled with 2x2 tiles: tile_shape 44..59, outer 60, inner 61,
// reserved 62..63, buffer_count 64, buffer 0 at 65.
TensorDescriptor tiled_f32() {
    TensorDescriptor d;
    d.element_type = ElementType::kFloat32;
    d.shape = {4, 4};
    d.layout = TiledLayout{{TiledLevel{.tile_shape = {2, 2}}}};
    d.buffers = {buf(64)};
    return d;
}

// A tiled layout of `levels` nested 2x2 levels.
TiledLayout nested_tiles(size_t levels) {
    TiledLayout t;
    for (size_t i = 0; i < levels; ++i) {
        TiledLevel lv{.tile_shape = {2, 2}};
        lv.inner_layout = i + 1 < levels ? LayoutTag::kTiled : LayoutTag::kRowMajor;
        t.levels.push_back(lv);
    }
    return t;
}

// float32 [4,4] Morton, bits [2,2]: morton_bits 44..51, buffer_count 52, buffer 0 at 53.
TensorDescriptor morton_f32() {
    TensorDescriptor d;
    d.element_type = ElementType::kFloat32;
    d.shape = {4, 4};
    d.layout = MortonLayout{{2, 2}};
    d.buffers = {buf(64)};
    return d;
}

// float32 [4,5] COO nnz 3 sorted: nnz 44, is_sorted 52, reserved 53..59,
// buffer_count 60, values at 61 (12 B), indices at 77 (48 B); 93 bytes.
TensorDescriptor coo_f32() { return must(make_coo(ElementType::kFloat32, {4, 5}, 3, true)); }

// float32 [4,5] CSR nnz 2: nnz 44, reserved 52..59, buffer_count 60,
// values at 61 (8 B), col_indices at 77 (16 B), row_ptr at 93 (40 B); 109 bytes.
TensorDescriptor csr_f32() { return must(make_csr(ElementType::kFloat32, 4, 5, 2)); }

// float32 [2,3,4] CSF nnz 5, mode_order {0,1,2}: nnz 52, mode_order 60..71,
// reserved 72..79, buffer_count 80.
TensorDescriptor csf_f32() {
    TensorDescriptor d;
    d.element_type = ElementType::kFloat32;
    d.shape = {2, 3, 4};
    d.layout = CsfLayout{5, {0, 1, 2}};
    const uint64_t dd[] = {16, 24, 24, 32};  // crd_0, pos_1, crd_1, pos_2
    return must(size_buffers(d, {}, dd));
}

// float16 [32,2,4] block-paged, page_size 16, 4 pages, 2 sequences:
// page_size 52, num_pages 56, paged_axis 64, num_seqs 68, kv_role 72,
// layer_index 73, index_type 77, reserved 78..83, buffer_count 84,
// buffers at 85 (1024 B), 101 (16 B), 117 (12 B).
TensorDescriptor paged(ElementType t = ElementType::kFloat16, Shape shape = {32, 2, 4}) {
    TensorDescriptor d;
    d.element_type = t;
    d.shape = std::move(shape);
    d.layout = BlockPagedLayout{.page_size = 16, .num_pages = 4, .num_seqs = 2};
    const uint64_t dd[] = {16};  // block_table
    return must(size_buffers(d, {}, dd));
}

// float32 [4,4] Hilbert order 2: hilbert_order 44, hilbert_rank 48,
// buffer_count 52, buffer 0 at 53.
TensorDescriptor hilbert_f32() {
    TensorDescriptor d;
    d.element_type = ElementType::kFloat32;
    d.shape = {4, 4};
    d.layout = HilbertLayout{2, 2};
    d.buffers = {buf(64)};
    return d;
}

// float32 [8,8] partition head of 2 members: composition_rule 44,
// combine_op 45, reserved 46..47, member_count 48, buffer_count 52; 53 bytes.
TensorDescriptor head() {
    return must(make_composite_head(ElementType::kFloat32, {8, 8}, CompositionRule::kPartition, 2));
}

// int8 [3,4] per-tensor affine: buffer 0 at 45, quantization_length 61,
// payload 65: scheme_tag 65, scheme_version 66, flags 67, scale 69,
// zero_point 73, reserved 77..80; 81 bytes.
TensorDescriptor per_tensor(ElementType t = ElementType::kInt8, float scale = 0.5F, int32_t zp = 0) {
    TensorDescriptor d;
    d.element_type = t;
    d.shape = {3, 4};
    d.quantization = QuantizationDescriptor{PerTensorAffine{scale, zp}, {}};
    return must(size_buffers(d));
}

// int4 [4,64] per-block (axis 1, block 32, float16 scales, symmetric):
// buffers at 45 (128 B) and 61 (16 B), quantization_length 77, payload 81:
// flags 83, axis 85, block_size 89, scale_buffer_index 93,
// zero_point_buffer_index 97, scale_type 101, reserved 102..104; 105 bytes.
TensorDescriptor per_block() { return must(make_per_block_quantized(ElementType::kInt4, {4, 64}, 1, 32)); }

// As per_block but asymmetric: buffers at 45 (128), 61 (16), 77 (32),
// quantization_length 93, payload 97: scale index 109, zero-point index 113.
TensorDescriptor per_block_asym() {
    return must(make_per_block_quantized(ElementType::kInt4, {4, 64}, 1, 32, ElementType::kFloat16, false));
}

// int8 [3,4] per-channel (axis 0, symmetric): buffers at 45 (12), 61 (12),
// quantization_length 77, payload 81: axis 85, scale index 89, zero-point
// index 93, scale_type 97, reserved 98..100.
TensorDescriptor per_channel() {
    TensorDescriptor d;
    d.element_type = ElementType::kInt8;
    d.shape = {3, 4};
    d.quantization = QuantizationDescriptor{PerChannelAffine{.axis = 0, .scale_buffer_index = 1}, {}};
    return must(size_buffers(d));
}

// uint4 [4,64] NF4 (axis 1, block 32): payload 81: flags 83, axis 85, block 89, scale 93.
TensorDescriptor nf4() {
    TensorDescriptor d;
    d.element_type = ElementType::kUInt4;
    d.shape = {4, 64};
    d.quantization = QuantizationDescriptor{Nf4Quantization{1, 32, 1}, {}};
    return must(size_buffers(d));
}

// float8_e4m3 [4,64] MXFP (axis 1, block 32): same offsets as nf4().
TensorDescriptor mxfp(ElementType t = ElementType::kFloat8E4M3, Shape shape = {4, 64}, uint32_t block = 32) {
    TensorDescriptor d;
    d.element_type = t;
    d.shape = std::move(shape);
    d.quantization = QuantizationDescriptor{MxfpQuantization{1, block, 1}, {}};
    return d;
}
constexpr size_t kQPayload = 81;  // payload of every two-buffer quantized base above

// float32 [3,4] with shard parent [6,8] offset [3,4]: parent_shape 61..76,
// shard_offset 77..92; 93 bytes.
TensorDescriptor sharded() {
    TensorDescriptor d = dense_f32();
    d.shard = ShardDescriptor{{6, 8}, {3, 4}};
    return d;
}

// float32 [3,4] with every statistic valid; section at 61: mask 61,
// reserved 65, nnz 69, sparsity 77, min 85, max 93, abs_max 101, mean 109,
// stddev 117, nm_n 125, nm_m 126, has_nan 127, has_inf 128, reserved2 129..132.
Statistics all_stats() {
    return Statistics{.computed_mask = kStatAllValid,
                      .nnz = 12,
                      .sparsity_ratio = 0.0,
                      .value_min = -1.0,
                      .value_max = 1.0,
                      .value_abs_max = 1.0,
                      .value_mean = 0.0,
                      .value_stddev = 0.5,
                      .nm_n = 2,
                      .nm_m = 4};
}
TensorDescriptor with_stats() {
    TensorDescriptor d = dense_f32();
    d.statistics = all_stats();
    return d;
}
constexpr size_t kStats = 61;

// float32 [8,8] overlay base member: buffer 0 at 45 (256 B), member section at 61..76.
TensorDescriptor member() {
    TensorDescriptor d;
    d.element_type = ElementType::kFloat32;
    d.shape = {8, 8};
    d.buffers = {buf(256)};
    d.composite_member = CompositeMember{MemberRole::kBase};
    return d;
}

// Sanity check of the bases themselves: each is valid and its encoding has
// the length the offsets above assume.
TEST(DescriptorRejectionBases, EveryBaseIsValidAndHasTheAssumedLength) {
    struct Case {
        const char* name;
        TensorDescriptor d;
        size_t length;
    };
    const Case cases[] = {
        {"dense_f32", dense_f32(), 61},     {"scalar_f32", scalar_f32(), 45},
        {"private_float16", private_float16(), 81}, {"private_int16", private_int16(), 81},
        {"tiled_f32", tiled_f32(), 81},     {"morton_f32", morton_f32(), 69},
        {"coo_f32", coo_f32(), 93},         {"csr_f32", csr_f32(), 109},
        {"csf_f32", csf_f32(), 81 + 7 * 16}, {"paged", paged(), 85 + 3 * 16},
        {"hilbert_f32", hilbert_f32(), 69}, {"head", head(), 53},
        {"per_tensor", per_tensor(), 81},   {"per_block", per_block(), 105},
        {"per_block_asym", per_block_asym(), 121}, {"per_channel", per_channel(), 101},
        {"nf4", nf4(), 97},                 {"mxfp", must(size_buffers(mxfp())), 97},
        {"sharded", sharded(), 93},         {"with_stats", with_stats(), 133},
        {"member", member(), 77},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        const Bytes b = must_encode(c.d);
        EXPECT_EQ(b.size(), c.length);
        EXPECT_TRUE(RoundTrips(b));
    }
}

// ---------------------------------------------------------------------------
// Framing: magic, versions, descriptor_length, flags

// metadata.md § Fixed Header: descriptor_length is bytes 6..9, so fewer than
// 10 bytes cannot even be sized.
TEST(DescriptorRejection, InputShorterThanTenBytesIsTruncated) {
    const Bytes b = must_encode(dense_f32());
    for (size_t n = 0; n < kDescriptorPeekSize; ++n) {
        const Bytes prefix(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n));
        EXPECT_TRUE(Rejected(decode(prefix), E::kTruncated, 0)) << n;
        EXPECT_TRUE(Rejected(peek_length(prefix), E::kTruncated, 0)) << n;
    }
}

// metadata.md: a reader MUST NOT read beyond what it has; a declared length
// past the end of the input is truncation, reported at descriptor_length.
TEST(DescriptorRejection, DescriptorLengthBeyondInputIsTruncated) {
    for (uint32_t len : {62U, 1000U, 0xFFFFFFFFU}) {
        Bytes b = must_encode(dense_f32());
        put_u32(b, 6, len);
        EXPECT_TRUE(Rejected(decode(b), E::kTruncated, 6)) << len;
    }
}

// metadata.md § Fixed Header: a descriptor_length below 20 MUST be rejected.
TEST(DescriptorRejection, DescriptorLengthBelowTwentyIsRejected) {
    for (uint32_t len : {0U, 10U, 19U}) {
        Bytes b = must_encode(dense_f32());
        put_u32(b, 6, len);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidDescriptorLength, 6)) << len;
        EXPECT_TRUE(Rejected(peek_length(b), E::kInvalidDescriptorLength, 6)) << len;
    }
}

// SPEC-NOTES 5: for version_minor 0 the fields must consume exactly
// descriptor_length bytes; extra bytes are an invalid length.
TEST(DescriptorRejection, TrailingBytesAfterTheFieldsOfMinorZeroAreRejected) {
    Bytes b = must_encode(dense_f32());
    insert_bytes(b, b.size(), {0x00, 0x00, 0x00});
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidDescriptorLength, 6));
    EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kInvalidDescriptorLength, 6));
}

// Same rule on the model: trailing bytes are only representable for a newer minor.
TEST(DescriptorRejection, ModelWithTrailingBytesAtMinorZeroIsRefused) {
    TensorDescriptor d = dense_f32();
    d.unknown_trailing_bytes = {1, 2, 3};
    EXPECT_TRUE(ModelRejected(d, E::kInvalidDescriptorLength, 61));
}

// metadata.md: a reader MUST NOT read beyond descriptor_length; a length that
// cuts the fields short leaves the buffer table incomplete (16 bytes needed at 45).
TEST(DescriptorRejection, DescriptorLengthShorterThanTheFieldsIsTruncated) {
    Bytes b = must_encode(dense_f32());
    put_u32(b, 6, 60);  // the input still holds all 61 bytes
    EXPECT_TRUE(Rejected(decode(b), E::kTruncated, kBuf0));
    put_u32(b, 6, 44);  // buffer_count itself is cut
    EXPECT_TRUE(Rejected(decode(b), E::kTruncated, 44));
}

// metadata.md § Version Compatibility: a newer minor is accepted, its extra
// bytes are not interpreted; we keep them so that re-encoding is lossless.
TEST(DescriptorRejection, NewerMinorVersionWithTrailingBytesIsAcceptedAndPreserved) {
    Bytes b = must_encode(dense_f32());
    put_u8(b, 5, 1);
    insert_bytes(b, b.size(), {0xAB, 0xCD, 0xEF});
    auto d = decode(b);
    ASSERT_TRUE(Accepted(d));
    EXPECT_EQ(d->version_minor, 1);
    EXPECT_EQ(d->unknown_trailing_bytes, (Bytes{0xAB, 0xCD, 0xEF}));
    EXPECT_EQ(d->buffers, dense_f32().buffers);
    auto again = encode(*d);
    ASSERT_TRUE(Accepted(again));
    EXPECT_EQ(*again, b);
}

// metadata.md § Fixed Header: magic MUST be "HRRY"; each byte is checked.
TEST(DescriptorRejection, BadMagicIsRejectedAtTheWrongByte) {
    for (size_t i = 0; i < 4; ++i) {
        Bytes b = must_encode(dense_f32());
        b[i] ^= 0x20;
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidMagic, i)) << i;
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kInvalidMagic, i)) << i;
        EXPECT_TRUE(Rejected(peek_length(b), E::kInvalidMagic, i)) << i;
    }
}

// metadata.md § Version Compatibility; SPEC-NOTES 5: only major 1 exists (0 too is rejected).
TEST(DescriptorRejection, UnsupportedMajorVersionIsRejected) {
    for (uint8_t major : {0, 2, 0xFF}) {
        Bytes b = must_encode(dense_f32());
        put_u8(b, 4, major);
        EXPECT_TRUE(Rejected(decode(b), E::kUnsupportedVersion, 4)) << int{major};
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kUnsupportedVersion, 4)) << int{major};
        TensorDescriptor d = dense_f32();
        d.version_major = major;
        EXPECT_TRUE(ModelRejected(d, E::kUnsupportedVersion, 4)) << int{major};
    }
}

// metadata.md § Flags: bits 5..31 are reserved; a reader MUST reject any of them.
TEST(DescriptorRejection, EveryReservedFlagBitIsRejected) {
    for (uint32_t bit = 5; bit < 32; ++bit) {
        Bytes b = must_encode(dense_f32());
        put_u32(b, 10, 1U << bit);
        EXPECT_TRUE(Rejected(decode(b), E::kReservedFlagBits, 10)) << bit;
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kReservedFlagBits, 10)) << bit;
    }
}

// ---------------------------------------------------------------------------
// Element type and extension type section

// element-types.md § Type Identifier Encoding: 0x00 and 0xFF MUST be rejected, in every mode.
TEST(DescriptorRejection, InvalidTypeTagsAreRejectedInEveryMode) {
    for (uint8_t tag : {0x00, 0xFF}) {
        Bytes b = must_encode(dense_f32());
        put_u8(b, 14, tag);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidElementType, 14)) << int{tag};
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kInvalidElementType, 14)) << int{tag};
        TensorDescriptor d = dense_f32();
        d.element_type = static_cast<ElementType>(tag);
        EXPECT_TRUE(ModelRejected(d, E::kInvalidElementType, 14)) << int{tag};
    }
}

// element-types.md: an unrecognised tag MUST be rejected unless the reader is
// permissive; 0x47 is an unassigned Tier 2 slot, 0x80-0xEF reserved.
TEST(DescriptorRejection, UnassignedTypeTagsAreRejectedStrictAndAcceptedPermissive) {
    for (uint8_t tag : {0x05, 0x30, 0x47, 0x4C, 0x80, 0xEF}) {
        Bytes b = must_encode(dense_f32());
        put_u8(b, 14, tag);
        EXPECT_TRUE(Rejected(decode(b), E::kUnknownElementType, 14)) << int{tag};
        auto d = decode(b, kPermissive);
        ASSERT_TRUE(Accepted(d)) << int{tag};
        EXPECT_EQ(type_tag(d->element_type), tag);
        EXPECT_EQ(must_encode_unchecked(*d), b);
        EXPECT_TRUE(ModelRejected(*d, E::kUnknownElementType, 14)) << int{tag};
    }
}

// metadata.md § Flags: HAS_EXTENSION_TYPE MUST be set iff the type tag is private (0xF0-0xFE).
TEST(DescriptorRejection, PrivateTypeTagWithoutExtensionSectionIsRejected) {
    for (uint8_t tag : {0xF0, 0xFE}) {
        Bytes b = must_encode(dense_f32());
        put_u8(b, 14, tag);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidExtensionType, 10)) << int{tag};
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kInvalidExtensionType, 10)) << int{tag};
    }
    TensorDescriptor d = private_float16();
    d.extension_type.reset();
    EXPECT_TRUE(ModelRejected(d, E::kInvalidExtensionType, 10));
}

// metadata.md § Flags: HAS_EXTENSION_TYPE MUST NOT be set for a non-private tag.
TEST(DescriptorRejection, ExtensionSectionOnBuiltinTypeIsRejected) {
    TensorDescriptor d = dense_f32();
    d.extension_type = ExtensionTypeDescriptor{.bit_width = 32, .packing_factor = 1, .is_float = true};
    EXPECT_TRUE(ModelRejected(d, E::kInvalidExtensionType, 10));
    const Bytes b = must_encode_unchecked(d);
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidExtensionType, 10));
    EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kInvalidExtensionType, 10));
}

// metadata.md § Extension Type Section: bit_width MUST be > 0.
TEST(DescriptorRejection, ExtensionBitWidthZeroIsRejected) {
    Bytes b = must_encode(private_float16());
    put_u32(b, kExt, 0);
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidExtensionType, kExt));
    EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kInvalidExtensionType, kExt));
}

// metadata.md § Extension Type Section: sub-byte widths MUST be 1, 2 or 4
// (3 and 6 are excluded; 6-bit is reserved to built-in tags).
TEST(DescriptorRejection, ExtensionSubByteWidthOtherThanOneTwoFourIsRejected) {
    for (uint32_t width : {3U, 5U, 6U, 7U}) {
        Bytes b = must_encode(private_float16());
        put_u32(b, kExt, width);
        put_u8(b, kExt + 4, 1);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidExtensionType, kExt)) << width;
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kInvalidExtensionType, kExt)) << width;
    }
}

// metadata.md § Extension Type Section: widths of 8 bits or more are whole bytes.
TEST(DescriptorRejection, ExtensionWidthNotAWholeNumberOfBytesIsRejected) {
    for (uint32_t width : {9U, 12U, 33U}) {
        Bytes b = must_encode(private_float16());
        put_u32(b, kExt, width);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidExtensionType, kExt)) << width;
    }
}

// metadata.md § Extension Type Section: packing_factor is 8 / bit_width below
// 8 bits and exactly 1 from 8 bits up.
TEST(DescriptorRejection, ExtensionPackingFactorWrongIsRejected) {
    struct Case {
        uint32_t width;
        uint8_t packing;
    };
    for (const Case c : {Case{4, 1}, Case{4, 4}, Case{2, 2}, Case{1, 0}, Case{16, 2}, Case{16, 0}}) {
        Bytes b = must_encode(private_float16());
        put_u32(b, kExt, c.width);
        put_u8(b, kExt + 4, c.packing);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidExtensionType, kExt + 4)) << c.width << "/" << int{c.packing};
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kInvalidExtensionType, kExt + 4));
    }
}

// metadata.md § Extension Type Section: is_signed MUST be 0 for float types
// (a semantic rule: strict only).
TEST(DescriptorRejection, ExtensionFloatMarkedSignedIsRejectedStrict) {
    Bytes b = must_encode(private_float16());
    put_u8(b, kExt + 6, 1);
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidExtensionType, kExt + 6));
    EXPECT_TRUE(Accepted(decode(b, kPermissive)));
}

// metadata.md § Extension Type Section: sign_bits MUST be 0 or 1.
TEST(DescriptorRejection, ExtensionFloatWithTwoSignBitsIsRejectedStrict) {
    Bytes b = must_encode(private_float16());
    put_u8(b, kExt + 7, 2);
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidExtensionType, kExt + 7));
    EXPECT_TRUE(Accepted(decode(b, kPermissive)));
}

// metadata.md § Extension Type Section: sign_bits, exponent_bits,
// mantissa_bits and exponent_bias MUST be 0 for integer types; the error
// names the first offending field.
TEST(DescriptorRejection, ExtensionIntegerWithFloatFieldsIsRejectedStrict) {
    struct Case {
        size_t at;
        size_t width;
    };
    for (const Case c : {Case{kExt + 7, 1}, Case{kExt + 8, 1}, Case{kExt + 9, 1}, Case{kExt + 12, 4}}) {
        Bytes b = must_encode(private_int16());
        put_le(b, c.at, 5, c.width);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidExtensionType, c.at)) << c.at;
        EXPECT_TRUE(Accepted(decode(b, kPermissive))) << c.at;
    }
}

// metadata.md § Extension Type Section: _reserved and _reserved2 MUST be 0.
TEST(DescriptorRejection, ExtensionReservedBytesNonZeroAreRejected) {
    for (size_t at : {kExt + 10, kExt + 11, kExt + 18, kExt + 19}) {
        Bytes b = must_encode(private_float16());
        put_u8(b, at, 0x01);
        EXPECT_TRUE(Rejected(decode(b), E::kReservedBytesNonZero, at)) << at;
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kReservedBytesNonZero, at)) << at;
    }
}

// metadata.md § Extension Type Section: boolean bytes are 0x00/0x01; strict
// rejects 0x02, permissive reads it as true.
TEST(DescriptorRejection, ExtensionBooleanByteTwoIsRejectedStrictAcceptedPermissive) {
    for (size_t at : {kExt + 5, kExt + 16, kExt + 17}) {
        Bytes b = must_encode(private_float16());
        put_u8(b, at, 0x02);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidExtensionType, at)) << at;
        auto d = decode(b, kPermissive);
        ASSERT_TRUE(Accepted(d)) << at;
        EXPECT_TRUE(d->extension_type->is_float);
        EXPECT_TRUE(d->extension_type->has_nan);
        EXPECT_TRUE(d->extension_type->has_inf);
    }
}

// ---------------------------------------------------------------------------
// Rank

// data-model.md § Rank, ADR-008, compliance.md § Test Requirements: rank 65 MUST be rejected.
TEST(DescriptorRejection, RankSixtyFiveIsRejected) {
    Bytes b = must_encode(dense_f32());
    put_u32(b, 16, 65);
    EXPECT_TRUE(Rejected(decode(b), E::kRankTooLarge, 16));
    EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kRankTooLarge, 16));
    put_u32(b, 16, 0xFFFFFFFF);  // must not try to read 2^32 dimensions
    EXPECT_TRUE(Rejected(decode(b), E::kRankTooLarge, 16));

    TensorDescriptor d;
    d.element_type = ElementType::kFloat32;
    d.shape = Shape(65, 1);
    d.buffers = {buf(4)};
    EXPECT_TRUE(ModelRejected(d, E::kRankTooLarge, 16));
    d.shape = Shape(64, 1);  // the maximum is fine
    EXPECT_TRUE(RoundTrips(must_encode(d)));
}

// data-model.md § Scalar Tensors: only row-major is permitted for rank 0.
TEST(DescriptorRejection, ScalarWithNonRowMajorLayoutIsRejected) {
    for (uint8_t tag : {0x02, 0x03}) {  // column-major, strided (no fields at rank 0)
        Bytes b = must_encode(scalar_f32());
        put_u8(b, 15, tag);
        EXPECT_TRUE(Rejected(decode(b), E::kRankNotAllowed, 16)) << int{tag};
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kRankNotAllowed, 16)) << int{tag};
    }
    TensorDescriptor d = scalar_f32();
    d.layout = ColumnMajorLayout{};
    EXPECT_TRUE(ModelRejected(d, E::kRankNotAllowed, 16));
    d.layout = StridedLayout{};
    EXPECT_TRUE(ModelRejected(d, E::kRankNotAllowed, 16));
    d.layout = CooLayout{1, true};
    EXPECT_TRUE(ModelRejected(d, E::kRankNotAllowed, 16));
}

// ---------------------------------------------------------------------------
// Layout tags

// memory-layout.md: layout tags 0x00 and 0xFF MUST be rejected.
TEST(DescriptorRejection, InvalidLayoutTagsAreRejectedInEveryMode) {
    for (uint8_t tag : {0x00, 0xFF}) {
        Bytes b = must_encode(dense_f32());
        put_u8(b, 15, tag);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidLayoutTag, 15)) << int{tag};
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kInvalidLayoutTag, 15)) << int{tag};
    }
}

// memory-layout.md: unrecognised tags MUST be rejected; their fields' length
// is unknown, so even a permissive reader cannot locate the buffer table.
TEST(DescriptorRejection, UnassignedLayoutTagsAreRejected) {
    for (uint8_t tag : {0x0C, 0x3F, 0x41, 0x80, 0xEF}) {
        Bytes b = must_encode(dense_f32());
        put_u8(b, 15, tag);
        EXPECT_TRUE(Rejected(decode(b), E::kUnknownLayoutTag, 15)) << int{tag};
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kUnknownLayoutTag, 15)) << int{tag};
    }
}

// metadata.md § Extension Layouts: an unrecognised extension_layout_id MUST be
// rejected unless permissive. Layout fields at 44 (id), 52 (length), 56 (data).
TEST(DescriptorRejection, UnknownExtensionLayoutIsRejectedStrictUnlessKnown) {
    TensorDescriptor d = dense_f32();
    d.layout = ExtensionLayout{0xF0, 0x1234, {1, 2, 3}};
    const Bytes b = must_encode_unchecked(d);
    EXPECT_TRUE(Rejected(decode(b), E::kUnsupportedExtensionLayout, 44));
    EXPECT_TRUE(Rejected(check_descriptor(d), E::kUnsupportedExtensionLayout, 44));

    const uint64_t known[] = {7, 0x1234};
    DecodeOptions knows{};
    knows.known_extension_layouts = known;
    auto strict_known = decode(b, knows);
    ASSERT_TRUE(Accepted(strict_known));
    EXPECT_EQ(*strict_known, d);
    EXPECT_TRUE(Accepted(check_descriptor(d, knows)));

    auto permissive = decode(b, kPermissive);
    ASSERT_TRUE(Accepted(permissive));
    EXPECT_EQ(*permissive, d);
    EXPECT_EQ(must_encode_unchecked(*permissive), b);
}

// metadata.md § Extension Layouts: the model cannot carry an extension
// layout under a non-private tag.
TEST(DescriptorRejection, ExtensionLayoutModelWithNonPrivateTagIsRefused) {
    TensorDescriptor d = dense_f32();
    d.layout = ExtensionLayout{0x50, 1, {}};
    EXPECT_TRUE(ModelRejected(d, E::kInvalidLayoutTag, 15, kPermissive));
}

// metadata.md: a reader MUST NOT read beyond descriptor_length; an
// extension_data_length past the end is truncation at the data.
TEST(DescriptorRejection, ExtensionLayoutDataLongerThanTheDescriptorIsTruncated) {
    TensorDescriptor d = dense_f32();
    d.layout = ExtensionLayout{0xF0, 0x1234, {1, 2, 3}};
    Bytes b = must_encode_unchecked(d);
    put_u32(b, 52, 1000);
    EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kTruncated, 56));
}

// ---------------------------------------------------------------------------
// Strided

// metadata.md § Strided: one stride per dimension (model-only: the wire count is the rank).
TEST(DescriptorRejection, StridedWithWrongNumberOfStridesIsRefused) {
    TensorDescriptor d = dense_f32();
    d.layout = StridedLayout{{4}};
    EXPECT_TRUE(ModelRejected(d, E::kInvalidLayout, 44));
}

// ---------------------------------------------------------------------------
// Tiled

// layouts/tiled.md: every tile_shape value MUST be > 0.
TEST(DescriptorRejection, TiledTileShapeZeroIsRejected) {
    Bytes b = must_encode(tiled_f32());
    put_u64(b, 52, 0);
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidLayout, 52));
    EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kInvalidLayout, 52));
    // In a nested level: level 0 takes 20 bytes, so level 1's tile_shape[1] is at 72.
    TensorDescriptor d = tiled_f32();
    d.layout = nested_tiles(2);
    std::get<TiledLayout>(d.layout).levels[1].tile_shape[1] = 0;
    EXPECT_TRUE(ModelRejected(d, E::kInvalidLayout, 72));
}

// layouts/tiled.md: outer_layout MUST be 0x01, 0x02 or 0x03.
TEST(DescriptorRejection, TiledOuterLayoutOutOfRangeIsRejected) {
    for (uint8_t tag : {0x00, 0x04, 0x05, 0xFF}) {
        Bytes b = must_encode(tiled_f32());
        put_u8(b, 60, tag);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidLayout, 60)) << int{tag};
    }
}

// layouts/tiled.md: inner_layout MUST be 0x01-0x04.
TEST(DescriptorRejection, TiledInnerLayoutOutOfRangeIsRejected) {
    for (uint8_t tag : {0x00, 0x05, 0xFF}) {
        Bytes b = must_encode(tiled_f32());
        put_u8(b, 61, tag);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidLayout, 61)) << int{tag};
    }
}

// layouts/tiled.md: the two reserved bytes of each level MUST be 0.
TEST(DescriptorRejection, TiledReservedBytesNonZeroAreRejected) {
    for (size_t at : {62U, 63U}) {
        Bytes b = must_encode(tiled_f32());
        put_u8(b, at, 0x80);
        EXPECT_TRUE(Rejected(decode(b), E::kReservedBytesNonZero, at)) << at;
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kReservedBytesNonZero, at)) << at;
    }
}

// metadata.md § Tiled: a reader MUST enforce a recursion limit (8 recommended):
// 8 levels pass, 9 are rejected where the 9th level starts (44 + 8 * 20).
TEST(DescriptorRejection, TiledNestingBeyondEightLevelsIsRejected) {
    TensorDescriptor d = tiled_f32();
    d.layout = nested_tiles(8);
    EXPECT_TRUE(RoundTrips(must_encode(d)));

    d.layout = nested_tiles(9);
    EXPECT_TRUE(ModelRejected(d, E::kNestingTooDeep, 44));
    const Bytes b = must_encode_unchecked(d);
    EXPECT_TRUE(Rejected(decode(b), E::kNestingTooDeep, 44 + 8 * 20));
    EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kNestingTooDeep, 44 + 8 * 20));

    // The limit is the reader's: a limit of 2 rejects 3 levels at the third.
    d.layout = nested_tiles(3);
    DecodeOptions shallow{};
    shallow.max_tiled_depth = 2;
    EXPECT_TRUE(Rejected(decode(must_encode(d), shallow), E::kNestingTooDeep, 44 + 2 * 20));
}

// layouts/tiled.md: inner_layout 0x04 means a nested level follows; the last
// level cannot be tiled inside, and a non-last level must be.
TEST(DescriptorRejection, TiledInnerTiledOnTheLastLevelIsRefused) {
    TensorDescriptor d = tiled_f32();
    std::get<TiledLayout>(d.layout).levels[0].inner_layout = LayoutTag::kTiled;
    EXPECT_TRUE(ModelRejected(d, E::kInvalidLayout, 61));

    d.layout = nested_tiles(2);
    std::get<TiledLayout>(d.layout).levels[0].inner_layout = LayoutTag::kRowMajor;
    EXPECT_TRUE(ModelRejected(d, E::kInvalidLayout, 61));
}

// layouts/tiled.md: outer_strides are present iff outer_layout is strided.
TEST(DescriptorRejection, TiledStridedOuterWithoutStridesIsRefused) {
    TensorDescriptor d = tiled_f32();
    std::get<TiledLayout>(d.layout).levels[0].outer_layout = LayoutTag::kStrided;
    EXPECT_TRUE(ModelRejected(d, E::kInvalidLayout, 64));
}

// ---------------------------------------------------------------------------
// Morton

// layouts/morton.md: each morton_bits value MUST be > 0.
TEST(DescriptorRejection, MortonBitsZeroIsRejected) {
    Bytes b = must_encode(morton_f32());
    put_u32(b, 48, 0);
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidLayout, 48));
}

// layouts/morton.md: shape[k] MUST be <= 2^morton_bits[k]; reported at shape[k].
TEST(DescriptorRejection, MortonShapeLargerThanTwoToTheBitsIsRejected) {
    Bytes b = must_encode(morton_f32());
    put_u32(b, 48, 1);  // shape[1] = 4 > 2^1
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidLayout, 28));
}

// layouts/morton.md: the buffer holds 2^(sum of bits) elements; a sum above 63
// cannot be addressed.
TEST(DescriptorRejection, MortonSumOfBitsAboveSixtyThreeIsRejected) {
    Bytes b = must_encode(morton_f32());
    put_u32(b, 44, 32);
    put_u32(b, 48, 32);
    EXPECT_TRUE(Rejected(decode(b), E::kSizeOverflow, 48));
}

// ---------------------------------------------------------------------------
// COO, CSR, CSC, CSF

// metadata.md § COO; SPEC-NOTES 7: is_sorted is 0x00 or 0x01; strict rejects
// anything else, permissive reads it as true.
TEST(DescriptorRejection, CooIsSortedTwoIsRejectedStrictAcceptedPermissive) {
    Bytes b = must_encode(coo_f32());
    put_u8(b, 52, 2);
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidLayout, 52));
    auto d = decode(b, kPermissive);
    ASSERT_TRUE(Accepted(d));
    EXPECT_TRUE(std::get<CooLayout>(d->layout).is_sorted);
}

// metadata.md § COO: the 7 reserved bytes MUST be 0.
TEST(DescriptorRejection, CooReservedBytesNonZeroAreRejected) {
    for (size_t at = 53; at < 60; ++at) {
        Bytes b = must_encode(coo_f32());
        put_u8(b, at, 1);
        EXPECT_TRUE(Rejected(decode(b), E::kReservedBytesNonZero, at)) << at;
    }
}

// metadata.md § CSR/CSC: the 8 reserved bytes MUST be 0.
TEST(DescriptorRejection, CsrReservedBytesNonZeroAreRejected) {
    for (size_t at = 52; at < 60; ++at) {
        Bytes b = must_encode(csr_f32());
        put_u8(b, at, 1);
        EXPECT_TRUE(Rejected(decode(b), E::kReservedBytesNonZero, at)) << at;
    }
}

// layouts/csr.md, layouts/csc.md: rank MUST be 2.
TEST(DescriptorRejection, CsrAndCscOfRankThreeAreRejected) {
    for (const LayoutDescriptor& l : {LayoutDescriptor{CsrLayout{1}}, LayoutDescriptor{CscLayout{1}}}) {
        TensorDescriptor d;
        d.element_type = ElementType::kFloat32;
        d.shape = {2, 2, 2};
        d.layout = l;
        d.buffers = {buf(4), buf(8), buf(24)};
        EXPECT_TRUE(ModelRejected(d, E::kRankNotAllowed, 16));
        EXPECT_TRUE(Rejected(decode(must_encode_unchecked(d)), E::kRankNotAllowed, 16));
    }
}

// layouts/csf.md § Validity Constraints: rank MUST be >= 3.
TEST(DescriptorRejection, CsfOfRankTwoIsRejected) {
    TensorDescriptor d;
    d.element_type = ElementType::kFloat32;
    d.shape = {3, 4};
    d.layout = CsfLayout{1, {0, 1}};
    d.buffers = {buf(4), buf(16), buf(8), buf(16), buf(8)};
    EXPECT_TRUE(ModelRejected(d, E::kRankNotAllowed, 16));
    EXPECT_TRUE(Rejected(decode(must_encode_unchecked(d)), E::kRankNotAllowed, 16));
}

// layouts/csf.md § Mode Ordering: mode_order MUST be a permutation of 0..rank-1
// (a repeat is reported at the repeating level, mode_order at 60 + 4L).
TEST(DescriptorRejection, CsfModeOrderDuplicateIsRejected) {
    Bytes b = must_encode(csf_f32());
    put_u32(b, 64, 0);  // {0, 0, 2}
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidLayout, 64));
    EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kInvalidLayout, 64));
}

// layouts/csf.md § Mode Ordering: every entry MUST be < rank.
TEST(DescriptorRejection, CsfModeOrderOutOfRangeIsRejected) {
    for (uint32_t bad : {3U, 64U, 0xFFFFFFFFU}) {
        Bytes b = must_encode(csf_f32());
        put_u32(b, 68, bad);  // {0, 1, bad}
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidLayout, 68)) << bad;
    }
}

// layouts/csf.md: the 8 reserved bytes MUST be 0.
TEST(DescriptorRejection, CsfReservedBytesNonZeroAreRejected) {
    for (size_t at : {72U, 79U}) {
        Bytes b = must_encode(csf_f32());
        put_u8(b, at, 1);
        EXPECT_TRUE(Rejected(decode(b), E::kReservedBytesNonZero, at)) << at;
    }
}

// layouts/csf.md: a CSF tensor MUST NOT carry a shard section (reported at flags).
TEST(DescriptorRejection, CsfWithShardIsRejected) {
    TensorDescriptor d = csf_f32();
    d.shard = ShardDescriptor{{2, 3, 4}, {0, 0, 0}};
    EXPECT_TRUE(ModelRejected(d, E::kInvalidShard, 10));
    EXPECT_TRUE(Rejected(decode(must_encode_unchecked(d)), E::kInvalidShard, 10));
}

// ---------------------------------------------------------------------------
// Block-paged

// layouts/block-paged.md: rank MUST be 3.
TEST(DescriptorRejection, BlockPagedOfRankTwoIsRejected) {
    TensorDescriptor d = paged();
    d.shape = {32, 8};
    EXPECT_TRUE(ModelRejected(d, E::kRankNotAllowed, 16));
}

// layouts/block-paged.md: page_size MUST be >= 1.
TEST(DescriptorRejection, BlockPagedPageSizeZeroIsRejected) {
    Bytes b = must_encode(paged());
    put_u32(b, 52, 0);
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidLayout, 52));
}

// layouts/block-paged.md: paged_axis MUST be 0 in this version.
TEST(DescriptorRejection, BlockPagedAxisOneIsRejected) {
    Bytes b = must_encode(paged());
    put_u32(b, 64, 1);
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidLayout, 64));
}

// layouts/block-paged.md: kv_role is 0x00, 0x01 or 0x02.
TEST(DescriptorRejection, BlockPagedKvRoleThreeIsRejected) {
    Bytes b = must_encode(paged());
    put_u8(b, 72, 3);
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidLayout, 72));
}

// layouts/block-paged.md: block_table_index_type is 0x00 (uint32) or 0x01 (uint64).
TEST(DescriptorRejection, BlockPagedIndexTypeTwoIsRejected) {
    Bytes b = must_encode(paged());
    put_u8(b, 77, 2);
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidLayout, 77));
}

// layouts/block-paged.md: reserved bytes MUST be 0 and readers MUST reject otherwise.
TEST(DescriptorRejection, BlockPagedReservedBytesNonZeroAreRejected) {
    for (size_t at = 78; at < 84; ++at) {
        Bytes b = must_encode(paged());
        put_u8(b, at, 1);
        EXPECT_TRUE(Rejected(decode(b), E::kReservedBytesNonZero, at)) << at;
    }
}

// layouts/block-paged.md: a shard section MUST be rejected on a block-paged tensor.
TEST(DescriptorRejection, BlockPagedWithShardIsRejected) {
    TensorDescriptor d = paged();
    d.shard = ShardDescriptor{{32, 2, 4}, {0, 0, 0}};
    EXPECT_TRUE(ModelRejected(d, E::kInvalidShard, 10));
}

// ---------------------------------------------------------------------------
// Hilbert

// layouts/hilbert.md: hilbert_rank MUST be >= 2 (and equal the rank).
TEST(DescriptorRejection, HilbertOfRankOneIsRejected) {
    TensorDescriptor d = hilbert_f32();
    d.shape = {4};
    d.layout = HilbertLayout{2, 1};
    d.buffers = {buf(16)};
    EXPECT_TRUE(ModelRejected(d, E::kRankNotAllowed, 16));
}

// layouts/hilbert.md: hilbert_rank MUST equal rank.
TEST(DescriptorRejection, HilbertRankDifferentFromRankIsRejected) {
    Bytes b = must_encode(hilbert_f32());
    put_u32(b, 48, 3);
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidLayout, 48));
}

// layouts/hilbert.md: hilbert_order MUST be > 0.
TEST(DescriptorRejection, HilbertOrderZeroIsRejected) {
    Bytes b = must_encode(hilbert_f32());
    put_u32(b, 44, 0);
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidLayout, 44));
}

// layouts/hilbert.md: every dimension MUST equal 2^hilbert_order (reported at shape[k]).
TEST(DescriptorRejection, HilbertShapeNotTwoToTheOrderIsRejected) {
    Bytes b = must_encode(hilbert_f32());
    put_u32(b, 44, 3);  // dimensions would need to be 8
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidLayout, 20));
    TensorDescriptor d = hilbert_f32();
    d.shape = {4, 2};
    EXPECT_TRUE(ModelRejected(d, E::kInvalidLayout, 28));
}

// layouts/hilbert.md: the buffer holds 2^(rank * order) elements; beyond 2^63 it overflows.
TEST(DescriptorRejection, HilbertOrderTooLargeOverflows) {
    Bytes b = must_encode(hilbert_f32());
    put_u32(b, 44, 40);
    EXPECT_TRUE(Rejected(decode(b), E::kSizeOverflow, 44));
}

// ---------------------------------------------------------------------------
// Composite head and member sections

// layouts/composite.md: composition_rule 0x00, 0x04-0xEF and 0xFF MUST be rejected.
TEST(DescriptorRejection, CompositeReservedOrInvalidRuleIsRejected) {
    for (uint8_t rule : {0x00, 0x04, 0xEF, 0xFF}) {
        Bytes b = must_encode(head());
        put_u8(b, 44, rule);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidComposite, 44)) << int{rule};
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kInvalidComposite, 44)) << int{rule};
    }
}

// layouts/composite.md: an unrecognised private rule is rejected unless permissive.
TEST(DescriptorRejection, CompositePrivateRuleIsRejectedStrictAcceptedPermissive) {
    Bytes b = must_encode(head());
    put_u8(b, 44, 0xF0);
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidComposite, 44));
    auto d = decode(b, kPermissive);
    ASSERT_TRUE(Accepted(d));
    EXPECT_EQ(static_cast<uint8_t>(std::get<CompositeLayout>(d->layout).rule), 0xF0);
}

// layouts/composite.md: combine_op MUST be 0x00 for partition and group.
TEST(DescriptorRejection, CompositeCombineOpOnPartitionOrGroupIsRejected) {
    for (uint8_t rule : {0x01, 0x03}) {
        Bytes b = must_encode(head());
        put_u8(b, 44, rule);
        put_u8(b, 45, 0x01);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidComposite, 45)) << int{rule};
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kInvalidComposite, 45)) << int{rule};
    }
}

// layouts/composite.md: an overlay's combine_op MUST be 0x01 or 0x02.
TEST(DescriptorRejection, CompositeOverlayWithoutCombineOpIsRejected) {
    for (uint8_t op : {0x00, 0x03}) {
        Bytes b = must_encode(head());
        put_u8(b, 44, 0x02);
        put_u8(b, 45, op);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidComposite, 45)) << int{op};
    }
}

// layouts/composite.md: the head's two reserved bytes MUST be 0.
TEST(DescriptorRejection, CompositeHeadReservedBytesNonZeroAreRejected) {
    for (size_t at : {46U, 47U}) {
        Bytes b = must_encode(head());
        put_u8(b, at, 1);
        EXPECT_TRUE(Rejected(decode(b), E::kReservedBytesNonZero, at)) << at;
    }
}

// layouts/composite.md: member_count 0xFFFFFFFF (open composite) is reserved:
// a strict reader MUST reject it.
TEST(DescriptorRejection, CompositeOpenMemberCountIsRejectedStrictAcceptedPermissive) {
    Bytes b = must_encode(head());
    put_u32(b, 48, kOpenCompositeMemberCount);
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidComposite, 48));
    EXPECT_TRUE(Accepted(decode(b, kPermissive)));
}

// layouts/composite.md: the head owns no data, buffer_count MUST be 0.
TEST(DescriptorRejection, CompositeHeadWithBuffersIsRejected) {
    TensorDescriptor d = head();
    d.buffers = {buf(256)};
    EXPECT_TRUE(ModelRejected(d, E::kInvalidComposite, 52));
    EXPECT_TRUE(Rejected(decode(must_encode_unchecked(d), kPermissive), E::kInvalidComposite, 52));
}

// layouts/composite.md: the head's byte_offset MUST be 0.
TEST(DescriptorRejection, CompositeHeadWithByteOffsetIsRejected) {
    Bytes b = must_encode(head());
    put_u64(b, 36, 64);
    EXPECT_TRUE(Rejected(decode(b), E::kByteOffsetOutOfRange, 36));
    EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kByteOffsetOutOfRange, 36));
}

// layouts/composite.md: the head MUST NOT set HAS_QUANTIZATION.
TEST(DescriptorRejection, CompositeHeadWithQuantizationIsRejected) {
    TensorDescriptor d = must(make_composite_head(ElementType::kInt8, {8, 8}, CompositionRule::kGroup, 2));
    d.quantization = QuantizationDescriptor{PerTensorAffine{0.5F, 0}, {}};
    EXPECT_TRUE(ModelRejected(d, E::kInvalidComposite, 10));
    EXPECT_TRUE(Rejected(decode(must_encode_unchecked(d)), E::kInvalidComposite, 10));
}

// layouts/composite.md: the head MUST NOT set HAS_COMPOSITE_MEMBER.
TEST(DescriptorRejection, CompositeHeadWithMemberSectionIsRejected) {
    TensorDescriptor d = head();
    d.composite_member = CompositeMember{MemberRole::kBase};
    EXPECT_TRUE(ModelRejected(d, E::kInvalidComposite, 10));
    EXPECT_TRUE(Rejected(decode(must_encode_unchecked(d)), E::kInvalidComposite, 10));
}

// metadata.md § Composite Member Section: member_role MUST be 0x00 or 0x01.
TEST(DescriptorRejection, CompositeMemberRoleReservedIsRejected) {
    for (uint8_t role : {0x02, 0xFF}) {
        Bytes b = must_encode(member());
        put_u8(b, 61, role);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidComposite, 61)) << int{role};
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kInvalidComposite, 61)) << int{role};
    }
}

// metadata.md § Composite Member Section: the 15 reserved bytes MUST be 0.
TEST(DescriptorRejection, CompositeMemberReservedBytesNonZeroAreRejected) {
    for (size_t at : {62U, 70U, 76U}) {
        Bytes b = must_encode(member());
        put_u8(b, at, 1);
        EXPECT_TRUE(Rejected(decode(b), E::kReservedBytesNonZero, at)) << at;
    }
}

// ---------------------------------------------------------------------------
// byte_offset

// memory-layout.md: byte_offset MUST be 0 for sparse (COO, CSR, CSC, CSF) and
// indirect (block-paged) layouts.
TEST(DescriptorRejection, ByteOffsetOnSparseAndPagedLayoutsIsRejected) {
    TensorDescriptor csc = csr_f32();
    csc.layout = CscLayout{2};
    csc.buffers[2].byte_size = 48;
    struct Case {
        const char* name;
        TensorDescriptor d;
        size_t at;
    };
    const Case cases[] = {{"coo", coo_f32(), 36}, {"csr", csr_f32(), 36}, {"csc", csc, 36},
                          {"csf", csf_f32(), 44}, {"block_paged", paged(), 44}};
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        Bytes b = must_encode(c.d);
        put_u64(b, c.at, 8);
        EXPECT_TRUE(Rejected(decode(b), E::kByteOffsetOutOfRange, c.at));
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kByteOffsetOutOfRange, c.at));
        TensorDescriptor d = c.d;
        d.byte_offset = 8;
        EXPECT_TRUE(ModelRejected(d, E::kByteOffsetOutOfRange, c.at));
    }
}

// metadata.md § byte_offset: MUST be <= the byte size of buffer 0.
TEST(DescriptorRejection, ByteOffsetBeyondBufferZeroIsRejected) {
    Bytes b = must_encode(dense_f32());
    put_u64(b, 36, 49);
    EXPECT_TRUE(Rejected(decode(b), E::kByteOffsetOutOfRange, 36));
    put_u64(b, 36, UINT64_MAX);
    EXPECT_TRUE(Rejected(decode(b), E::kByteOffsetOutOfRange, 36));
}

// layouts/strided.md: with negative strides byte_offset MUST reach every
// addressed element: int8 [4,4] strides [-4,1] reaches 12 bytes below [0,0].
TEST(DescriptorRejection, NegativeStridesWithTooSmallByteOffsetAreRejected) {
    TensorDescriptor d;
    d.element_type = ElementType::kInt8;
    d.shape = {4, 4};
    d.layout = StridedLayout{{-4, 1}};
    d.byte_offset = 12;
    d.buffers = {buf(16)};
    EXPECT_TRUE(RoundTrips(must_encode(d)));
    d.byte_offset = 11;
    EXPECT_TRUE(ModelRejected(d, E::kByteOffsetOutOfRange, 36));
    EXPECT_TRUE(Rejected(decode(must_encode_unchecked(d)), E::kByteOffsetOutOfRange, 36));
}

// ---------------------------------------------------------------------------
// Buffer sizes (memory-layout.md, element-types.md): the data buffer must hold
// what the shape, type and layout address.

// row-major: 12 float32 need 48 bytes.
TEST(DescriptorRejection, RowMajorBufferTooSmallIsRejected) {
    Bytes b = must_encode(dense_f32());
    put_u64(b, kBuf0, 47);
    EXPECT_TRUE(Rejected(decode(b), E::kBufferTooSmall, kBuf0));
    EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kBufferTooSmall, kBuf0));
    // byte_offset adds to the requirement.
    Bytes c = must_encode(dense_f32());
    put_u64(c, 36, 4);
    EXPECT_TRUE(Rejected(decode(c), E::kBufferTooSmall, kBuf0));
}

// column-major: same element count as row-major.
TEST(DescriptorRejection, ColumnMajorBufferTooSmallIsRejected) {
    TensorDescriptor d = dense_f32();
    d.layout = ColumnMajorLayout{};
    d.buffers[0].byte_size = 47;
    EXPECT_TRUE(ModelRejected(d, E::kBufferTooSmall, kBuf0));
}

// strided: float32 [3,4] strides [8,1] span 8*2 + 3 + 1 = 20 elements = 80 bytes (buffer at 61).
TEST(DescriptorRejection, StridedBufferTooSmallIsRejected) {
    TensorDescriptor d = dense_f32();
    d.layout = StridedLayout{{8, 1}};
    d.buffers[0].byte_size = 80;
    EXPECT_TRUE(RoundTrips(must_encode(d)));
    d.buffers[0].byte_size = 79;
    EXPECT_TRUE(ModelRejected(d, E::kBufferTooSmall, 61));
    // Negative strides: byte_offset 12 plus the 4 elements of the last row.
    TensorDescriptor n;
    n.element_type = ElementType::kInt8;
    n.shape = {4, 4};
    n.layout = StridedLayout{{-4, 1}};
    n.byte_offset = 12;
    n.buffers = {buf(15)};
    EXPECT_TRUE(ModelRejected(n, E::kBufferTooSmall, 61));
}

// layouts/tiled.md § Boundary Padding: storage for full tiles. float32 [3,5]
// in 2x2 tiles: 2 * 3 tiles of 4 = 24 elements = 96 bytes (buffer at 65).
TEST(DescriptorRejection, TiledBufferWithoutPartialTilePaddingIsRejected) {
    TensorDescriptor d = tiled_f32();
    d.shape = {3, 5};
    d.buffers[0].byte_size = 96;
    EXPECT_TRUE(RoundTrips(must_encode(d)));
    for (uint64_t size : {95U, 60U}) {
        d.buffers[0].byte_size = size;
        EXPECT_TRUE(ModelRejected(d, E::kBufferTooSmall, 65)) << size;
    }
}

// layouts/morton.md: the buffer holds 2^(sum of bits) elements, padding included.
TEST(DescriptorRejection, MortonBufferTooSmallIsRejected) {
    TensorDescriptor d = morton_f32();
    d.shape = {3, 3};  // 9 elements, but 16 slots
    d.buffers[0].byte_size = 63;
    EXPECT_TRUE(ModelRejected(d, E::kBufferTooSmall, 53));
}

// layouts/hilbert.md: the buffer holds 2^(rank * order) elements.
TEST(DescriptorRejection, HilbertBufferTooSmallIsRejected) {
    Bytes b = must_encode(hilbert_f32());
    put_u64(b, 53, 63);
    EXPECT_TRUE(Rejected(decode(b), E::kBufferTooSmall, 53));
}

// element-types.md: sub-byte types pack (bool 8, 4-bit 2, 2-bit 4 per byte;
// 6-bit 4 per 3 bytes: ceil(N/4) * 3). Rank-1 buffer 0 is at 37.
TEST(DescriptorRejection, SubByteBufferOneByteTooSmallIsRejected) {
    struct Case {
        ElementType type;
        uint64_t n;
        uint64_t bytes;
    };
    const Case cases[] = {
        {ElementType::kBool, 10, 2},       {ElementType::kInt4, 5, 3},        {ElementType::kUInt4, 5, 3},
        {ElementType::kInt2, 5, 2},        {ElementType::kUInt2, 5, 2},       {ElementType::kFloat4E2M1, 5, 3},
        {ElementType::kFloat6E2M3, 5, 6},  {ElementType::kFloat6E3M2, 4, 3},  {ElementType::kFloat6E3M2, 9, 9},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(std::string(type_name(c.type)) + " x" + std::to_string(c.n));
        TensorDescriptor d;
        d.element_type = c.type;
        d.shape = {c.n};
        d.buffers = {buf(c.bytes)};
        EXPECT_TRUE(RoundTrips(must_encode(d)));
        d.buffers[0].byte_size = c.bytes - 1;
        EXPECT_TRUE(ModelRejected(d, E::kBufferTooSmall, 37));
    }
    // 6-bit: ceil(5 * 6 / 8) = 4 bytes is NOT enough; groups of 3 bytes are.
    TensorDescriptor f6;
    f6.element_type = ElementType::kFloat6E2M3;
    f6.shape = {5};
    f6.buffers = {buf(4)};
    EXPECT_TRUE(ModelRejected(f6, E::kBufferTooSmall, 37));
}

// layouts/coo.md: values hold nnz elements, indices nnz * rank uint64.
TEST(DescriptorRejection, CooBuffersTooSmallAreRejected) {
    Bytes b = must_encode(coo_f32());
    put_u64(b, 77, 47);
    EXPECT_TRUE(Rejected(decode(b), E::kBufferTooSmall, 77));
    Bytes v = must_encode(coo_f32());
    put_u64(v, 61, 11);
    EXPECT_TRUE(Rejected(decode(v), E::kBufferTooSmall, 61));
}

// layouts/csr.md, csc.md: row_ptr holds rows + 1 uint64 (col_ptr cols + 1).
TEST(DescriptorRejection, CsrRowPtrAndCscColPtrTooSmallAreRejected) {
    Bytes b = must_encode(csr_f32());
    put_u64(b, 93, 39);
    EXPECT_TRUE(Rejected(decode(b), E::kBufferTooSmall, 93));
    Bytes c = must_encode(csr_f32());
    put_u64(c, 77, 15);  // col_indices: nnz uint64
    EXPECT_TRUE(Rejected(decode(c), E::kBufferTooSmall, 77));

    TensorDescriptor csc = csr_f32();
    csc.layout = CscLayout{2};
    csc.buffers[2].byte_size = 47;  // 5 columns + 1
    EXPECT_TRUE(ModelRejected(csc, E::kBufferTooSmall, 93));
}

// layouts/block-paged.md: page_pool holds num_pages * page_size * heads * dim
// elements; seq_ptr num_seqs + 1 entries.
TEST(DescriptorRejection, BlockPagedBuffersTooSmallAreRejected) {
    Bytes b = must_encode(paged());
    put_u64(b, 85, 1023);
    EXPECT_TRUE(Rejected(decode(b), E::kBufferTooSmall, 85));
    Bytes s = must_encode(paged());
    put_u64(s, 117, 11);
    EXPECT_TRUE(Rejected(decode(s), E::kBufferTooSmall, 117));
}

// ---------------------------------------------------------------------------
// Buffer counts

// metadata.md § Buffer Table: buffer_count is a uint8, so at most 255 buffers.
TEST(DescriptorRejection, MoreThan255BuffersAreRefused) {
    TensorDescriptor d = dense_f32();
    d.buffers.assign(256, buf(48));
    EXPECT_TRUE(ModelRejected(d, E::kInvalidBufferCount, 44));
    EXPECT_TRUE(Rejected(encode_unchecked(d), E::kInvalidBufferCount, 44));
}

// encode_to refuses an output shorter than the descriptor and writes nothing.
TEST(DescriptorRejection, EncodeToRefusesAShortOutput) {
    Bytes out(60, 0xAA);  // the descriptor needs 61
    auto r = encode_to(dense_f32(), out);
    EXPECT_TRUE(RejectedWith(r, E::kInvalidArgument));
    EXPECT_EQ(out, Bytes(60, 0xAA));
    TensorDescriptor bad = dense_f32();
    bad.buffers[0].byte_size = 1;
    Bytes big(100, 0xAA);
    EXPECT_TRUE(Rejected(encode_to(bad, big), E::kBufferTooSmall, kBuf0));
    EXPECT_EQ(big, Bytes(100, 0xAA));
}

// metadata.md § Buffer Table: a non-quantized dense tensor has exactly one buffer.
TEST(DescriptorRejection, DenseBufferCountOtherThanOneIsRejected) {
    TensorDescriptor d = dense_f32();
    d.buffers = {};
    EXPECT_TRUE(ModelRejected(d, E::kInvalidBufferCount, 44));
    d.buffers = {buf(48), buf(48)};
    EXPECT_TRUE(ModelRejected(d, E::kInvalidBufferCount, 44));
    EXPECT_TRUE(Rejected(decode(must_encode_unchecked(d)), E::kInvalidBufferCount, 44));
}

// layouts/coo.md: buffer_count MUST be 2.
TEST(DescriptorRejection, CooBufferCountOneIsRejected) {
    TensorDescriptor d = coo_f32();
    d.buffers.pop_back();
    EXPECT_TRUE(ModelRejected(d, E::kInvalidBufferCount, 60));
    EXPECT_TRUE(Rejected(decode(must_encode_unchecked(d)), E::kInvalidBufferCount, 60));
}

// layouts/csr.md: buffer_count MUST be 3.
TEST(DescriptorRejection, CsrBufferCountTwoIsRejected) {
    TensorDescriptor d = csr_f32();
    d.buffers.pop_back();
    EXPECT_TRUE(ModelRejected(d, E::kInvalidBufferCount, 60));
}

// layouts/csf.md: buffer_count MUST be 2 * rank + 1.
TEST(DescriptorRejection, CsfBufferCountOtherThanTwoRankPlusOneIsRejected) {
    TensorDescriptor d = csf_f32();
    d.buffers.pop_back();
    EXPECT_TRUE(ModelRejected(d, E::kInvalidBufferCount, 80));
    d = csf_f32();
    d.buffers.push_back(buf(8));
    EXPECT_TRUE(ModelRejected(d, E::kInvalidBufferCount, 80));
}

// layouts/block-paged.md: page_pool, block_table and seq_ptr (3 buffers).
TEST(DescriptorRejection, BlockPagedBufferCountTwoIsRejected) {
    TensorDescriptor d = paged();
    d.buffers.pop_back();
    EXPECT_TRUE(ModelRejected(d, E::kInvalidBufferCount, 84));
}

// ---------------------------------------------------------------------------
// Buffer handles (buffer-protocol.md § Buffer Handle; SPEC-NOTES 1, 3, 4)

// buffer-protocol.md: alignment MUST be a power of two and >= 64 for a non-empty buffer.
TEST(DescriptorRejection, BufferAlignmentInvalidForNonEmptyBufferIsRejected) {
    for (uint32_t alignment : {0U, 3U, 32U, 1U, 96U}) {
        Bytes b = must_encode(dense_f32());
        put_u32(b, kBuf0 + 8, alignment);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidBufferHandle, kBuf0 + 8)) << alignment;
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kInvalidBufferHandle, kBuf0 + 8)) << alignment;
    }
}

// buffer-protocol.md § Empty Buffers: any power of two (1 included) is valid for
// an empty buffer; a non-power of two still is not.
TEST(DescriptorRejection, EmptyBufferAcceptsAnyPowerOfTwoAlignment) {
    TensorDescriptor d = dense_f32();
    d.shape = {0, 4};
    for (uint32_t alignment : {1U, 2U, 32U, 64U, 4096U}) {
        d.buffers = {buf(0, alignment)};
        EXPECT_TRUE(RoundTrips(must_encode(d))) << alignment;
    }
    for (uint32_t alignment : {0U, 3U}) {
        d.buffers = {buf(0, alignment)};
        EXPECT_TRUE(ModelRejected(d, E::kInvalidBufferHandle, kBuf0 + 8)) << alignment;
    }
}

// buffer-protocol.md § Device Tags: 0x09-0xEF reserved, 0xFF invalid; 0xF0-0xFE private.
TEST(DescriptorRejection, ReservedOrInvalidDeviceTagIsRejected) {
    for (uint8_t dev : {0x09, 0x80, 0xEF, 0xFF}) {
        Bytes b = must_encode(dense_f32());
        put_u8(b, kBuf0 + 12, dev);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidBufferHandle, kBuf0 + 12)) << int{dev};
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kInvalidBufferHandle, kBuf0 + 12)) << int{dev};
    }
    for (uint8_t dev : {0xF0, 0xFE}) {
        Bytes b = must_encode(dense_f32());
        put_u8(b, kBuf0 + 12, dev);
        EXPECT_TRUE(RoundTrips(b)) << int{dev};
    }
}

// buffer-protocol.md § sync_mode Values: 0x03-0xFE reserved, 0xFF invalid.
TEST(DescriptorRejection, ReservedOrInvalidSyncModeIsRejected) {
    for (uint8_t sync : {0x03, 0x80, 0xFF}) {
        Bytes b = must_encode(dense_f32());
        put_u8(b, kBuf0 + 12, 0x01);  // CUDA, so that only the value itself is wrong
        put_u8(b, kBuf0 + 13, sync);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidBufferHandle, kBuf0 + 13)) << int{sync};
    }
}

// buffer-protocol.md § Producer Requirement; SPEC-NOTES 4: a CPU buffer MUST be
// producer-synced; a CUDA buffer may use an event or the consumer's stream.
TEST(DescriptorRejection, CpuBufferThatIsNotProducerSyncedIsRejected) {
    for (uint8_t sync : {0x01, 0x02}) {
        Bytes b = must_encode(dense_f32());
        put_u8(b, kBuf0 + 13, sync);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidBufferHandle, kBuf0 + 13)) << int{sync};
        put_u8(b, kBuf0 + 12, 0x01);
        EXPECT_TRUE(RoundTrips(b)) << int{sync};
    }
}

// buffer-protocol.md § Memory Class: 0x04-0xEF reserved and 0xFF invalid MUST be rejected.
TEST(DescriptorRejection, ReservedOrInvalidMemoryClassIsRejected) {
    for (uint8_t cls : {0x04, 0xEF, 0xFF}) {
        Bytes b = must_encode(dense_f32());
        put_u8(b, kBuf0 + 14, cls);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidBufferHandle, kBuf0 + 14)) << int{cls};
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kInvalidBufferHandle, kBuf0 + 14)) << int{cls};
    }
}

// buffer-protocol.md § Per-Device Validity: PEER is invalid on CPU, valid on CUDA.
TEST(DescriptorRejection, CpuPeerMemoryIsRejectedButCudaPeerIsAccepted) {
    Bytes b = must_encode(dense_f32());
    put_u8(b, kBuf0 + 14, 0x03);
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidBufferHandle, kBuf0 + 14));
    put_u8(b, kBuf0 + 12, 0x01);
    EXPECT_TRUE(RoundTrips(b));
}

// buffer-protocol.md § Memory Class: private classes are valid only with a private device.
TEST(DescriptorRejection, PrivateMemoryClassOnCpuIsRejected) {
    Bytes b = must_encode(dense_f32());
    put_u8(b, kBuf0 + 14, 0xF0);
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidBufferHandle, kBuf0 + 14));
    put_u8(b, kBuf0 + 12, 0xF3);
    EXPECT_TRUE(RoundTrips(b));
}

// buffer-protocol.md § Buffer Handle: the reserved byte MUST be 0x00.
TEST(DescriptorRejection, BufferReservedByteNonZeroIsRejected) {
    Bytes b = must_encode(dense_f32());
    put_u8(b, kBuf0 + 15, 0x01);
    EXPECT_TRUE(Rejected(decode(b), E::kReservedBytesNonZero, kBuf0 + 15));
    EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kReservedBytesNonZero, kBuf0 + 15));
}

// buffer-protocol.md § Device Colocation: every buffer shares buffer 0's
// device_tag AND memory_class (CSR buffer 1 at 77).
TEST(DescriptorRejection, BuffersOnDifferentDevicesOrClassesAreRejected) {
    Bytes dev = must_encode(csr_f32());
    put_u8(dev, 77 + 12, 0x01);
    EXPECT_TRUE(Rejected(decode(dev), E::kDeviceMismatch, 77 + 12));
    EXPECT_TRUE(Rejected(decode(dev, kPermissive), E::kDeviceMismatch, 77 + 12));

    Bytes cls = must_encode(csr_f32());
    put_u8(cls, 77 + 14, 0x01);  // HOST_PINNED: a valid CPU class, but not buffer 0's
    EXPECT_TRUE(Rejected(decode(cls), E::kDeviceMismatch, 77 + 14));

    // Quantization parameter buffers too (quantization.md § Buffer Table Placement Rules, 4).
    TensorDescriptor q = per_block();
    q.buffers[1].memory_class = MemoryClass::kUnified;
    EXPECT_TRUE(ModelRejected(q, E::kDeviceMismatch, 61 + 14));
}

// ---------------------------------------------------------------------------
// Quantization section

// metadata.md § Quantization Section; quantization.md § Descriptor Header: the
// payload holds at least the 4-byte header (reported at quantization_length).
TEST(DescriptorRejection, QuantizationLengthBelowFourIsRejected) {
    for (uint32_t len : {0U, 3U}) {
        Bytes b = must_encode(per_tensor());
        put_u32(b, 61, len);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidQuantization, 61)) << len;
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kInvalidQuantization, 61)) << len;
    }
}

// quantization/*.md § Binary Encoding; SPEC-NOTES 8: the length covers the scheme's fields.
TEST(DescriptorRejection, QuantizationLengthShorterThanTheSchemeIsRejected) {
    Bytes b = must_encode(per_tensor());
    put_u32(b, 61, 12);
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidQuantization, 61));
    // Also when descriptor_length is consistent with the short section.
    Bytes c = must_encode(per_tensor());
    put_u32(c, 61, 12);
    erase_bytes(c, 77, 4);
    EXPECT_TRUE(Rejected(decode(c), E::kInvalidQuantization, 61));
    Bytes p = must_encode(per_block());
    put_u32(p, 77, 20);
    erase_bytes(p, 101, 4);
    EXPECT_TRUE(Rejected(decode(p), E::kInvalidQuantization, 77));
}

// quantization.md § Scheme Tag Space: 0x00 and 0xFF MUST be rejected, in every mode.
TEST(DescriptorRejection, InvalidQuantizationSchemeTagIsRejectedInEveryMode) {
    for (uint8_t tag : {0x00, 0xFF}) {
        Bytes b = must_encode(per_tensor());
        put_u8(b, 65, tag);
        EXPECT_TRUE(Rejected(decode(b), E::kUnknownQuantizationScheme, 65)) << int{tag};
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kUnknownQuantizationScheme, 65)) << int{tag};
    }
}

// quantization.md § Descriptor Header: an unrecognised scheme MUST be rejected
// unless permissive (which skips it using quantization_length).
TEST(DescriptorRejection, UnassignedQuantizationSchemeIsRejectedStrictAcceptedPermissive) {
    for (uint8_t tag : {0x06, 0x40, 0x60, 0x80, 0xEF}) {
        Bytes b = must_encode(per_tensor());
        put_u8(b, 65, tag);
        EXPECT_TRUE(Rejected(decode(b), E::kUnknownQuantizationScheme, 65)) << int{tag};
        auto d = decode(b, kPermissive);
        ASSERT_TRUE(Accepted(d)) << int{tag};
        const auto& o = std::get<OpaqueQuantization>(d->quantization->scheme);
        EXPECT_EQ(o.scheme_tag, tag);
        EXPECT_EQ(o.payload.size(), 12U);
        EXPECT_EQ(must_encode_unchecked(*d), b);
    }
}

// quantization.md § Extension Schemes: a private scheme is accepted only by a
// reader that knows it (or a permissive one).
TEST(DescriptorRejection, PrivateQuantizationSchemeIsRejectedUnlessKnown) {
    Bytes b = must_encode(per_tensor());
    put_u8(b, 65, 0xF0);
    EXPECT_TRUE(Rejected(decode(b), E::kUnknownQuantizationScheme, 65));
    const uint8_t other[] = {0xF1};
    DecodeOptions knows_other{};
    knows_other.known_private_schemes = other;
    EXPECT_TRUE(Rejected(decode(b, knows_other), E::kUnknownQuantizationScheme, 65));
    const uint8_t known[] = {0xF1, 0xF0};
    DecodeOptions knows{};
    knows.known_private_schemes = known;
    EXPECT_TRUE(Accepted(decode(b, knows)));
    EXPECT_TRUE(Accepted(decode(b, kPermissive)));
}

// quantization.md § Version Compatibility: scheme_version 0 is invalid, newer than 1 unsupported.
TEST(DescriptorRejection, QuantizationSchemeVersionZeroOrNewerIsRejected) {
    Bytes b = must_encode(per_tensor());
    put_u8(b, 66, 0);
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidQuantization, 66));
    EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kInvalidQuantization, 66));
    put_u8(b, 66, 2);
    EXPECT_TRUE(Rejected(decode(b), E::kUnsupportedQuantizationVersion, 66));
    EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kUnsupportedQuantizationVersion, 66));
}

// quantization.md § Descriptor Header: reserved flag bits MUST be 0
// (per-tensor/NF4/MXFP define none; per-channel/per-block only SYMMETRIC).
TEST(DescriptorRejection, QuantizationReservedFlagBitsAreRejected) {
    Bytes pt = must_encode(per_tensor());
    put_u16(pt, 67, 0x0001);
    EXPECT_TRUE(Rejected(decode(pt), E::kReservedFlagBits, 67));
    for (uint16_t flags : {0x0002, 0x8001}) {
        Bytes pb = must_encode(per_block());
        put_u16(pb, 83, flags);
        EXPECT_TRUE(Rejected(decode(pb), E::kReservedFlagBits, 83)) << flags;
    }
    Bytes n = must_encode(nf4());
    put_u16(n, 83, 0x0001);
    EXPECT_TRUE(Rejected(decode(n), E::kReservedFlagBits, 83));
    Bytes m = must_encode(must(size_buffers(mxfp())));
    put_u16(m, 83, 0x0001);
    EXPECT_TRUE(Rejected(decode(m), E::kReservedFlagBits, 83));
}

// per-block-affine.md § Referenced Buffers: with SYMMETRIC clear the
// zero-point index is a real index and MUST be < buffer_count; 0xFFFFFFFF is
// not a "no zero point" marker then.
TEST(DescriptorRejection, AsymmetricWithZeroPointIndexAllOnesIsRejected) {
    Bytes b = must_encode(per_block());
    put_u16(b, 83, 0x0000);  // clear SYMMETRIC; the index stays 0xFFFFFFFF
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidQuantizationBuffer, 97));
    EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kInvalidQuantizationBuffer, 97));
    TensorDescriptor d = per_block();
    std::get<PerBlockAffine>(d.quantization->scheme).zero_point_buffer_index = 0xFFFFFFFFU;
    EXPECT_TRUE(ModelRejected(d, E::kInvalidQuantizationBuffer, 97));
    EXPECT_TRUE(RejectedWith(required_buffer_sizes(d), E::kInvalidQuantizationBuffer));
    Bytes c = must_encode(per_channel());
    put_u16(c, 83, 0x0000);
    EXPECT_TRUE(Rejected(decode(c), E::kInvalidQuantizationBuffer, 93));
}

// quantization.md: an assigned scheme tag (0x01-0x05) has a defined encoding;
// the model cannot carry it as an opaque payload.
TEST(DescriptorRejection, AssignedSchemeAsOpaquePayloadIsRefused) {
    TensorDescriptor d = per_tensor();
    d.quantization = QuantizationDescriptor{OpaqueQuantization{0x01, 1, 0, Bytes(12, 0)}, {}};
    EXPECT_TRUE(ModelRejected(d, E::kInvalidQuantization, 65, kPermissive));
}

// metadata.md: a reader MUST NOT read beyond descriptor_length; a
// quantization_length past the end is truncation at the payload.
TEST(DescriptorRejection, QuantizationLengthBeyondTheDescriptorIsTruncated) {
    for (uint32_t len : {17U, 1000U, 0xFFFFFFFFU}) {
        Bytes b = must_encode(per_tensor());
        put_u32(b, 61, len);
        EXPECT_TRUE(Rejected(decode(b), E::kTruncated, 65)) << len;
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kTruncated, 65)) << len;
    }
}

// per-block-affine.md, per-channel-affine.md § Flags: SYMMETRIC requires
// zero_point_buffer_index = 0xFFFFFFFF.
TEST(DescriptorRejection, SymmetricWithZeroPointIndexIsRejected) {
    Bytes b = must_encode(per_block());
    put_u32(b, 97, 2);
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidQuantization, 97));
    Bytes c = must_encode(per_channel());
    put_u32(c, 93, 1);
    EXPECT_TRUE(Rejected(decode(c), E::kInvalidQuantization, 93));
}

// quantization/*.md § Binary Encoding: _reserved bytes MUST be 0.
TEST(DescriptorRejection, QuantizationReservedBytesNonZeroAreRejected) {
    struct Case {
        const char* name;
        TensorDescriptor d;
        size_t at;
    };
    const Case cases[] = {{"per_tensor", per_tensor(), 77}, {"per_tensor", per_tensor(), 80},
                          {"per_channel", per_channel(), 98}, {"per_channel", per_channel(), 100},
                          {"per_block", per_block(), 102},  {"per_block", per_block(), 104}};
    for (const Case& c : cases) {
        SCOPED_TRACE(std::string(c.name) + " @" + std::to_string(c.at));
        Bytes b = must_encode(c.d);
        put_u8(b, c.at, 1);
        EXPECT_TRUE(Rejected(decode(b), E::kReservedBytesNonZero, c.at));
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kReservedBytesNonZero, c.at));
    }
}

// per-tensor-affine.md § Validity Constraints: scale MUST be finite and non-zero.
TEST(DescriptorRejection, PerTensorScaleZeroNanOrInfiniteIsRejected) {
    for (uint32_t bits : {0x00000000U, 0x80000000U, 0x7FC00000U, 0x7F800001U, 0x7F800000U, 0xFF800000U}) {
        Bytes b = must_encode(per_tensor());
        put_u32(b, 69, bits);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidQuantization, 69)) << std::hex << bits;
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kInvalidQuantization, 69)) << std::hex << bits;
    }
}

// per-tensor-affine.md § Validity Constraints: zero_point within the storage type's range.
TEST(DescriptorRejection, PerTensorZeroPointOutOfRangeIsRejected) {
    struct Case {
        ElementType type;
        int32_t zp;
        bool ok;
    };
    const Case cases[] = {{ElementType::kUInt8, 255, true}, {ElementType::kUInt8, 256, false},
                          {ElementType::kUInt8, 0, true},   {ElementType::kUInt8, -1, false},
                          {ElementType::kInt4, 7, true},    {ElementType::kInt4, 8, false},
                          {ElementType::kInt4, -8, true},   {ElementType::kInt4, -9, false},
                          {ElementType::kInt8, -129, false}, {ElementType::kUInt2, 4, false}};
    for (const Case& c : cases) {
        SCOPED_TRACE(std::string(type_name(c.type)) + " zp " + std::to_string(c.zp));
        TensorDescriptor ok = per_tensor(c.type);
        Bytes b = must_encode(ok);
        put_u32(b, 73, static_cast<uint32_t>(c.zp));
        if (c.ok) {
            EXPECT_TRUE(RoundTrips(b));
        } else {
            EXPECT_TRUE(Rejected(decode(b), E::kInvalidQuantization, 73));
            TensorDescriptor d = ok;
            std::get<PerTensorAffine>(d.quantization->scheme).zero_point = c.zp;
            EXPECT_TRUE(ModelRejected(d, E::kInvalidQuantization, 73));
        }
    }
}

// quantization/*.md § Valid Storage Types: a storage type outside the scheme's
// list MUST be rejected (reported at type_tag).
TEST(DescriptorRejection, QuantizationStorageTypeNotAllowedByTheSchemeIsRejected) {
    Bytes pt = must_encode(per_tensor());
    put_u8(pt, 14, type_tag(ElementType::kFloat32));
    EXPECT_TRUE(Rejected(decode(pt), E::kInvalidQuantizationStorageType, 14));

    TensorDescriptor pb = per_block();
    pb.element_type = ElementType::kInt16;
    EXPECT_TRUE(ModelRejected(pb, E::kInvalidQuantizationStorageType, 14));

    TensorDescriptor n = nf4();
    n.element_type = ElementType::kInt8;
    EXPECT_TRUE(ModelRejected(n, E::kInvalidQuantizationStorageType, 14));

    TensorDescriptor m = must(size_buffers(mxfp()));
    m.element_type = ElementType::kUInt8;
    EXPECT_TRUE(ModelRejected(m, E::kInvalidQuantizationStorageType, 14));
    m.element_type = ElementType::kFloat8E8M0;
    EXPECT_TRUE(ModelRejected(m, E::kInvalidQuantizationStorageType, 14));

    TensorDescriptor pc = per_channel();
    pc.element_type = ElementType::kBool;
    EXPECT_TRUE(ModelRejected(pc, E::kInvalidQuantizationStorageType, 14));
}

// quantization/*.md § Validity Constraints: axis MUST be < rank.
TEST(DescriptorRejection, QuantizationAxisNotBelowRankIsRejected) {
    for (uint32_t axis : {2U, 0xFFFFFFFFU}) {
        Bytes b = must_encode(per_block());
        put_u32(b, 85, axis);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidQuantization, 85)) << axis;
        Bytes c = must_encode(per_channel());
        put_u32(c, 85, axis);
        EXPECT_TRUE(Rejected(decode(c), E::kInvalidQuantization, 85)) << axis;
    }
}

// data-model.md § Dynamic Dimensions; quantization/*.md: shape[axis] MUST NOT be dynamic.
TEST(DescriptorRejection, QuantizationAxisWithDynamicDimensionIsRejected) {
    TensorDescriptor d = per_block();
    d.shape[1] = kDynamicDim;
    EXPECT_TRUE(ModelRejected(d, E::kInvalidQuantization, 85));
    TensorDescriptor c = per_channel();
    c.shape[0] = kDynamicDim;
    EXPECT_TRUE(ModelRejected(c, E::kInvalidQuantization, 85));
}

// per-channel-affine.md: scale_type_tag MUST be 0x03 in scheme_version 1.
TEST(DescriptorRejection, PerChannelScaleTypeOtherThanFloat32IsRejected) {
    for (uint8_t tag : {0x01, 0x02, 0x04, 0x00}) {
        Bytes b = must_encode(per_channel());
        put_u8(b, 97, tag);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidQuantization, 97)) << int{tag};
    }
}

// per-block-affine.md: scale_type_tag MUST be 0x01, 0x02 or 0x03.
TEST(DescriptorRejection, PerBlockScaleTypeOutsideFloat16Bfloat16Float32IsRejected) {
    for (uint8_t tag : {0x00, 0x04, 0x10, 0x42}) {
        Bytes b = must_encode(per_block());
        put_u8(b, 101, tag);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidQuantization, 101)) << int{tag};
    }
}

// per-block-affine.md, nf4.md, mxfp.md: block_size is a power of two with a
// per-scheme minimum (2, 8, 16), at most 2048 for MXFP, and at most a
// non-zero shape[axis].
TEST(DescriptorRejection, QuantizationBlockSizeOutOfItsRangeIsRejected) {
    for (uint32_t block : {0U, 1U, 3U, 48U, 128U}) {  // 128 > shape[1] = 64
        Bytes b = must_encode(per_block());
        put_u32(b, 89, block);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidQuantization, 89)) << "per_block " << block;
    }
    for (uint32_t block : {4U, 12U, 128U}) {
        Bytes b = must_encode(nf4());
        put_u32(b, 89, block);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidQuantization, 89)) << "nf4 " << block;
    }
    for (uint32_t block : {8U, 24U, 128U}) {
        Bytes b = must_encode(must(size_buffers(mxfp())));
        put_u32(b, 89, block);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidQuantization, 89)) << "mxfp " << block;
    }
    // MXFP: 4096 exceeds 2048 even when shape[axis] is a multiple of it.
    TensorDescriptor m = mxfp(ElementType::kFloat8E4M3, {2, 8192}, 2048);
    m = must(size_buffers(m));
    std::get<MxfpQuantization>(m.quantization->scheme).block_size = 4096;
    m.buffers[1].byte_size = 4;
    EXPECT_TRUE(ModelRejected(m, E::kInvalidQuantization, 89));
}

// quantization.md § Partial Block Policy; mxfp.md: shape[axis] MUST be a positive
// multiple of block_size.
TEST(DescriptorRejection, MxfpShapeNotAMultipleOfTheBlockIsRejected) {
    TensorDescriptor d = mxfp(ElementType::kFloat8E4M3, {4, 48}, 32);
    d.buffers = {buf(192), buf(8)};
    EXPECT_TRUE(ModelRejected(d, E::kInvalidQuantization, 89));
    TensorDescriptor z = mxfp(ElementType::kFloat8E4M3, {4, 0}, 32);
    z.buffers = {buf(0), buf(0)};
    EXPECT_TRUE(ModelRejected(z, E::kInvalidQuantization, 89));
}

// quantization.md § Buffer Table Placement Rules, 2: a parameter buffer MUST NOT
// be the data buffer; per-block's scale index is at payload + 12.
TEST(DescriptorRejection, ScaleBufferIndexNamingTheDataBufferIsRejected) {
    Bytes b = must_encode(per_block());
    put_u32(b, 93, 0);
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidQuantizationBuffer, 93));
    EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kInvalidQuantizationBuffer, 93));
    Bytes c = must_encode(per_channel());
    put_u32(c, 89, 0);
    EXPECT_TRUE(Rejected(decode(c), E::kInvalidQuantizationBuffer, 89));
}

// per-block-affine.md § Referenced Buffers: indices MUST be < buffer_count.
TEST(DescriptorRejection, ParameterBufferIndexBeyondTheTableIsRejected) {
    Bytes b = must_encode(per_block());
    put_u32(b, 93, 2);
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidQuantizationBuffer, 93));
    Bytes z = must_encode(per_block_asym());
    put_u32(z, 113, 3);
    EXPECT_TRUE(Rejected(decode(z), E::kInvalidQuantizationBuffer, 113));
    Bytes n = must_encode(nf4());
    put_u32(n, 93, 7);
    EXPECT_TRUE(Rejected(decode(n), E::kInvalidQuantizationBuffer, 93));
}

// per-block-affine.md § Referenced Buffers: the scale buffer is EXACTLY
// num_blocks * sizeof(scale) bytes (4 * 2 float16 = 16; buffer 1 at 61).
TEST(DescriptorRejection, ScaleBufferNotExactlyTheRightSizeIsRejected) {
    for (uint64_t size : {15U, 17U, 0U}) {
        Bytes b = must_encode(per_block());
        put_u64(b, 61, size);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidQuantizationBuffer, 61)) << size;
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kInvalidQuantizationBuffer, 61)) << size;
    }
    Bytes c = must_encode(per_channel());  // shape[0] * 4 = 12
    put_u64(c, 61, 13);
    EXPECT_TRUE(Rejected(decode(c), E::kInvalidQuantizationBuffer, 61));
}

// per-block-affine.md § Referenced Buffers: the zero-point buffer is EXACTLY
// num_blocks int32 (32 bytes; buffer 2 at 77).
TEST(DescriptorRejection, ZeroPointBufferNotExactlyTheRightSizeIsRejected) {
    for (uint64_t size : {31U, 33U}) {
        Bytes b = must_encode(per_block_asym());
        put_u64(b, 77, size);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidQuantizationBuffer, 77)) << size;
    }
}

// quantization.md § Buffer Table Placement Rules, 3: scale and zero point may
// share one buffer holding [scales | zero_points], exactly 16 + 32 bytes.
TEST(DescriptorRejection, SharedScaleAndZeroPointBufferMustHoldBothArrays) {
    TensorDescriptor d = per_block();
    auto& s = std::get<PerBlockAffine>(d.quantization->scheme);
    s.zero_point_buffer_index = 1;
    d.buffers[1].byte_size = 48;
    EXPECT_TRUE(RoundTrips(must_encode(d)));
    for (uint64_t size : {47U, 49U, 16U}) {
        d.buffers[1].byte_size = size;
        EXPECT_TRUE(ModelRejected(d, E::kInvalidQuantizationBuffer, 61)) << size;
    }
}

// layouts/block-paged.md § Quantization: per-channel MUST NOT quantize the
// paged axis 0. Block-paged quantized: buffers 85..148, quantization_length
// 149, payload 153, axis at 157.
TEST(DescriptorRejection, BlockPagedPerChannelOnThePagedAxisIsRejected) {
    TensorDescriptor d = paged(ElementType::kInt8);
    d.quantization = QuantizationDescriptor{PerChannelAffine{.axis = 0, .scale_buffer_index = 3}, {}};
    d.buffers.push_back(buf(32 * 4));
    EXPECT_TRUE(ModelRejected(d, E::kInvalidQuantization, 157));
    EXPECT_TRUE(Rejected(decode(must_encode_unchecked(d)), E::kInvalidQuantization, 157));
    // Per-channel on the head axis is fine.
    std::get<PerChannelAffine>(d.quantization->scheme).axis = 1;
    d.buffers[3].byte_size = 2 * 4;
    EXPECT_TRUE(RoundTrips(must_encode(d)));
}

// layouts/block-paged.md § Quantization: per-block needs axis 0 and
// block_size = page_size.
TEST(DescriptorRejection, BlockPagedPerBlockOffThePageIsRejected) {
    TensorDescriptor ok = paged(ElementType::kInt8, {32, 16, 4});
    ok.quantization = QuantizationDescriptor{PerBlockAffine{.axis = 0, .block_size = 16, .scale_buffer_index = 3}, {}};
    ok.buffers.push_back(buf(4 * 16 * 2));  // num_pages * page_size float16 scales
    EXPECT_TRUE(RoundTrips(must_encode(ok)));

    TensorDescriptor axis1 = ok;
    std::get<PerBlockAffine>(axis1.quantization->scheme).axis = 1;
    EXPECT_TRUE(ModelRejected(axis1, E::kInvalidQuantization, 157));

    TensorDescriptor small = ok;
    std::get<PerBlockAffine>(small.quantization->scheme).block_size = 8;
    EXPECT_TRUE(ModelRejected(small, E::kInvalidQuantization, 157));
}

// ---------------------------------------------------------------------------
// Shard section (metadata.md § Shard Section)

// shard_offset[k] + shape[k] <= parent_shape[k] MUST hold (reported at shard_offset[k]).
TEST(DescriptorRejection, ShardExceedingItsParentIsRejected) {
    Bytes b = must_encode(sharded());
    put_u64(b, 85, 5);  // 5 + 4 > 8
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidShard, 85));
    EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kInvalidShard, 85));
    Bytes p = must_encode(sharded());
    put_u64(p, 61, 2);  // parent_shape[0] = 2 < 3 + 3
    EXPECT_TRUE(Rejected(decode(p), E::kInvalidShard, 77));
}

// shard_offset + shape must not wrap around 2^64.
TEST(DescriptorRejection, ShardOffsetPlusShapeOverflowIsRejected) {
    Bytes b = must_encode(sharded());
    put_u64(b, 77, UINT64_MAX - 1);
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidShard, 77));
}

// data-model.md § Dynamic Dimensions, 4: shards MUST NOT use dynamic dimensions;
// the error names the dynamic field.
TEST(DescriptorRejection, ShardWithDynamicDimensionIsRejected) {
    Bytes parent = must_encode(sharded());
    put_u64(parent, 69, UINT64_MAX);  // parent_shape[1]
    EXPECT_TRUE(Rejected(decode(parent), E::kInvalidShard, 69));
    Bytes offset = must_encode(sharded());
    put_u64(offset, 85, UINT64_MAX);  // shard_offset[1]
    EXPECT_TRUE(Rejected(decode(offset), E::kInvalidShard, 85));
    TensorDescriptor shape = sharded();
    shape.shape[1] = kDynamicDim;  // shape[1] at 28
    EXPECT_TRUE(ModelRejected(shape, E::kInvalidShard, 28));
}

// metadata.md § Shard Section: parent_shape and shard_offset have rank entries (model only).
TEST(DescriptorRejection, ShardWithWrongRankIsRefused) {
    TensorDescriptor d = sharded();
    d.shard->parent_shape = {6};
    EXPECT_TRUE(ModelRejected(d, E::kInvalidShard, 61));
}

// ---------------------------------------------------------------------------
// Statistics section (metadata.md § Statistics Section)

// computed_mask bits 6-31 are reserved: a reader MUST reject them (every mode).
TEST(DescriptorRejection, StatisticsReservedMaskBitsAreRejected) {
    for (uint32_t mask : {0x40U, 0x7FU, 0x80000000U}) {
        Bytes b = must_encode(with_stats());
        put_u32(b, kStats, mask);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidStatistics, kStats)) << mask;
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kInvalidStatistics, kStats)) << mask;
    }
}

// _reserved (4 bytes at +4) and _reserved2 (4 bytes at +68) MUST be 0.
TEST(DescriptorRejection, StatisticsReservedBytesNonZeroAreRejected) {
    for (size_t at : {kStats + 4, kStats + 7, kStats + 68, kStats + 71}) {
        Bytes b = must_encode(with_stats());
        put_u8(b, at, 1);
        EXPECT_TRUE(Rejected(decode(b), E::kReservedBytesNonZero, at)) << at;
        EXPECT_TRUE(Rejected(decode(b, kPermissive), E::kReservedBytesNonZero, at)) << at;
    }
}

// has_nan / has_inf are 0x00 or 0x01; strict rejects 0x02, permissive reads true.
TEST(DescriptorRejection, StatisticsBooleanByteTwoIsRejectedStrictAcceptedPermissive) {
    for (size_t at : {kStats + 66, kStats + 67}) {
        Bytes b = must_encode(with_stats());
        put_u8(b, at, 2);
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidStatistics, at)) << at;
        auto d = decode(b, kPermissive);
        ASSERT_TRUE(Accepted(d)) << at;
        EXPECT_TRUE(at == kStats + 66 ? d->statistics->has_nan : d->statistics->has_inf);
    }
}

// sparsity_ratio is in [0, 1] when SPARSITY_VALID is set (strict); ignored when clear.
TEST(DescriptorRejection, StatisticsSparsityOutsideZeroOneIsRejectedStrict) {
    for (double v : {1.5, -0.25, std::numeric_limits<double>::quiet_NaN()}) {
        Bytes b = must_encode(with_stats());
        put_u64(b, kStats + 16, f64_bits(v));
        EXPECT_TRUE(Rejected(decode(b), E::kInvalidStatistics, kStats + 16)) << v;
        EXPECT_TRUE(Accepted(decode(b, kPermissive))) << v;
        put_u32(b, kStats, kStatAllValid & ~uint32_t{kStatSparsityValid});
        EXPECT_TRUE(Accepted(decode(b))) << v;
    }
}

// value_stddev MUST be >= 0 when VALUE_STATS_VALID is set (strict).
TEST(DescriptorRejection, StatisticsNegativeStddevIsRejectedStrict) {
    Bytes b = must_encode(with_stats());
    put_u64(b, kStats + 56, f64_bits(-1.0));
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidStatistics, kStats + 56));
    EXPECT_TRUE(Accepted(decode(b, kPermissive)));
}

// nm_n <= nm_m MUST hold when NM_SPARSITY_VALID is set (strict).
TEST(DescriptorRejection, StatisticsNmNAboveNmMIsRejectedStrict) {
    Bytes b = must_encode(with_stats());
    put_u8(b, kStats + 64, 5);  // 5:4
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidStatistics, kStats + 64));
    EXPECT_TRUE(Accepted(decode(b, kPermissive)));
}

// layouts/coo.md § Statistics: a valid statistics nnz MUST match the layout's
// nnz, which is authoritative (COO stats section at 93, nnz at 101).
TEST(DescriptorRejection, StatisticsNnzDisagreeingWithTheLayoutIsRejectedStrict) {
    TensorDescriptor d = coo_f32();
    d.statistics = Statistics{.computed_mask = kStatNnzValid, .nnz = 3};
    Bytes b = must_encode(d);
    put_u64(b, 101, 4);
    EXPECT_TRUE(Rejected(decode(b), E::kInvalidStatistics, 101));
    EXPECT_TRUE(Accepted(decode(b, kPermissive)));
    d.statistics->nnz = 4;
    EXPECT_TRUE(ModelRejected(d, E::kInvalidStatistics, 101));
}

// ---------------------------------------------------------------------------
// Truncation everywhere (metadata.md: a reader MUST NOT read beyond
// descriptor_length): every proper prefix, with descriptor_length fixed to the
// prefix, is rejected as truncated or of invalid length, never read past.

std::vector<std::pair<const char*, TensorDescriptor>> rich_descriptors() {
    std::vector<std::pair<const char*, TensorDescriptor>> v;
    TensorDescriptor q = per_block_asym();
    q.shard = ShardDescriptor{{8, 64}, {4, 0}};
    Statistics st = all_stats();
    st.nnz = 256;
    q.statistics = st;
    q.composite_member = CompositeMember{MemberRole::kCorrection};
    v.emplace_back("quantized+shard+statistics+member", q);
    TensorDescriptor e = private_float16();
    e.shape = {4, 4};
    e.layout = nested_tiles(2);
    std::get<TiledLayout>(e.layout).levels[1].inner_layout = LayoutTag::kStrided;
    std::get<TiledLayout>(e.layout).levels[1].inner_strides = {2, 1};
    std::get<TiledLayout>(e.layout).levels[0].outer_layout = LayoutTag::kStrided;
    std::get<TiledLayout>(e.layout).levels[0].outer_strides = {2, 1};
    e.buffers = {buf(32)};
    v.emplace_back("private type + tiled", e);
    v.emplace_back("per_tensor", per_tensor());
    v.emplace_back("per_channel", per_channel());
    v.emplace_back("nf4", nf4());
    v.emplace_back("mxfp", must(size_buffers(mxfp())));
    v.emplace_back("coo", coo_f32());
    v.emplace_back("csr", csr_f32());
    v.emplace_back("csf", csf_f32());
    v.emplace_back("block_paged", paged());
    v.emplace_back("morton", morton_f32());
    v.emplace_back("hilbert", hilbert_f32());
    v.emplace_back("strided", [] {
        TensorDescriptor s = dense_f32();
        s.layout = StridedLayout{{4, 1}};
        return s;
    }());
    v.emplace_back("head", head());
    v.emplace_back("scalar", scalar_f32());
    return v;
}

TEST(DescriptorRejection, EveryPrefixOfEverySectionIsRejectedAsTruncated) {
    const DecodeOptions modes[] = {DecodeOptions{}, kPermissive};
    for (const auto& [name, d] : rich_descriptors()) {
        SCOPED_TRACE(name);
        const Bytes full = must_encode(d);
        ASSERT_FALSE(full.empty());
        ASSERT_TRUE(RoundTrips(full));
        for (size_t n = 0; n < full.size(); ++n) {
            Bytes prefix(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
            if (n >= kDescriptorPeekSize) {
                fix_length(prefix);
            }
            for (const DecodeOptions& opt : modes) {
                auto r = decode(prefix, opt);
                ASSERT_FALSE(r.ok()) << "prefix of " << n << " bytes was accepted";
                const ErrorCode code = r.error().code();
                EXPECT_TRUE(code == E::kTruncated || code == E::kInvalidDescriptorLength)
                    << "prefix of " << n << " bytes: " << r.error().to_string();
                EXPECT_LE(r.error().offset(), n) << r.error().to_string();
            }
            // The same cut, announced by descriptor_length while the input
            // continues: the reader must stop at descriptor_length.
            if (n >= kDescriptorPeekSize) {
                Bytes shortened = full;
                put_u32(shortened, 6, static_cast<uint32_t>(n));
                auto r = decode(shortened);
                ASSERT_FALSE(r.ok()) << n;
                EXPECT_TRUE(r.error().code() == E::kTruncated || r.error().code() == E::kInvalidDescriptorLength)
                    << r.error().to_string();
            }
            // And the prefix without fixing descriptor_length: truncated at byte 6.
            if (n >= kDescriptorPeekSize) {
                const Bytes raw(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
                EXPECT_TRUE(Rejected(decode(raw), E::kTruncated, 6)) << n;
            }
        }
    }
}

}  // namespace
