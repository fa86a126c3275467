// SPDX-License-Identifier: Apache-2.0
// Element types (element-types.md): the tag space, bit widths, names and
// storage sizes.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "hurray/core/element_type.hpp"

namespace {

using hurray::ElementType;
using hurray::ErrorCode;
using hurray::TypeTagClass;

struct TypeFacts {
    ElementType type;
    uint8_t tag;
    std::string_view name;
    uint32_t bits;
    TypeTagClass tier;
    enum Kind { kFloat, kSigned, kUnsigned, kBool } kind;
};

// element-types.md § Tier 1 and § Tier 2 tables.
const TypeFacts kTypes[] = {
    {ElementType::kFloat16, 0x01, "float16", 16, TypeTagClass::kTier1, TypeFacts::kFloat},
    {ElementType::kBFloat16, 0x02, "bfloat16", 16, TypeTagClass::kTier1, TypeFacts::kFloat},
    {ElementType::kFloat32, 0x03, "float32", 32, TypeTagClass::kTier1, TypeFacts::kFloat},
    {ElementType::kFloat64, 0x04, "float64", 64, TypeTagClass::kTier1, TypeFacts::kFloat},
    {ElementType::kInt8, 0x10, "int8", 8, TypeTagClass::kTier1, TypeFacts::kSigned},
    {ElementType::kUInt8, 0x11, "uint8", 8, TypeTagClass::kTier1, TypeFacts::kUnsigned},
    {ElementType::kInt16, 0x12, "int16", 16, TypeTagClass::kTier1, TypeFacts::kSigned},
    {ElementType::kUInt16, 0x13, "uint16", 16, TypeTagClass::kTier1, TypeFacts::kUnsigned},
    {ElementType::kInt32, 0x14, "int32", 32, TypeTagClass::kTier1, TypeFacts::kSigned},
    {ElementType::kUInt32, 0x15, "uint32", 32, TypeTagClass::kTier1, TypeFacts::kUnsigned},
    {ElementType::kInt64, 0x16, "int64", 64, TypeTagClass::kTier1, TypeFacts::kSigned},
    {ElementType::kUInt64, 0x17, "uint64", 64, TypeTagClass::kTier1, TypeFacts::kUnsigned},
    {ElementType::kBool, 0x20, "bool", 1, TypeTagClass::kTier1, TypeFacts::kBool},
    {ElementType::kFloat8E4M3, 0x40, "float8_e4m3", 8, TypeTagClass::kTier2, TypeFacts::kFloat},
    {ElementType::kFloat8E5M2, 0x41, "float8_e5m2", 8, TypeTagClass::kTier2, TypeFacts::kFloat},
    {ElementType::kFloat8E8M0, 0x42, "float8_e8m0", 8, TypeTagClass::kTier2, TypeFacts::kFloat},
    {ElementType::kFloat4E2M1, 0x43, "float4_e2m1", 4, TypeTagClass::kTier2, TypeFacts::kFloat},
    {ElementType::kFloat6E2M3, 0x44, "float6_e2m3", 6, TypeTagClass::kTier2, TypeFacts::kFloat},
    {ElementType::kFloat6E3M2, 0x45, "float6_e3m2", 6, TypeTagClass::kTier2, TypeFacts::kFloat},
    {ElementType::kFloat128, 0x46, "float128", 128, TypeTagClass::kTier2, TypeFacts::kFloat},
    {ElementType::kInt4, 0x48, "int4", 4, TypeTagClass::kTier2, TypeFacts::kSigned},
    {ElementType::kUInt4, 0x49, "uint4", 4, TypeTagClass::kTier2, TypeFacts::kUnsigned},
    {ElementType::kInt2, 0x4A, "int2", 2, TypeTagClass::kTier2, TypeFacts::kSigned},
    {ElementType::kUInt2, 0x4B, "uint2", 2, TypeTagClass::kTier2, TypeFacts::kUnsigned},
    {ElementType::kComplex64, 0x50, "complex64", 64, TypeTagClass::kTier2, TypeFacts::kFloat},
    {ElementType::kComplex128, 0x51, "complex128", 128, TypeTagClass::kTier2, TypeFacts::kFloat},
};

// element-types.md § Type Identifier Encoding: 0x00/0xFF invalid, 0xF0-0xFE
// private, 13 Tier 1 and 13 Tier 2 assignments, everything else reserved.
TEST(ElementType, ClassifiesAll256TagsIntoTheSpecsRanges) {
    size_t tier1 = 0;
    size_t tier2 = 0;
    size_t priv = 0;
    size_t invalid = 0;
    size_t reserved = 0;
    for (int tag = 0; tag < 256; ++tag) {
        switch (hurray::classify_type_tag(static_cast<uint8_t>(tag))) {
            case TypeTagClass::kTier1: ++tier1; EXPECT_LT(tag, 0x40) << tag; break;
            case TypeTagClass::kTier2:
                ++tier2;
                EXPECT_GE(tag, 0x40) << tag;
                EXPECT_LT(tag, 0x80) << tag;
                break;
            case TypeTagClass::kPrivate:
                ++priv;
                EXPECT_GE(tag, 0xF0) << tag;
                EXPECT_LE(tag, 0xFE) << tag;
                break;
            case TypeTagClass::kInvalid:
                ++invalid;
                EXPECT_TRUE(tag == 0x00 || tag == 0xFF) << tag;
                break;
            case TypeTagClass::kReserved: ++reserved; break;
        }
    }
    EXPECT_EQ(tier1, 13U);
    EXPECT_EQ(tier2, 13U);
    EXPECT_EQ(priv, 15U);
    EXPECT_EQ(invalid, 2U);
    EXPECT_EQ(reserved, 256U - 13U - 13U - 15U - 2U);
}

// element-types.md § Tier 1 / Tier 2: exactly the assigned tags, in their tier;
// 0x47 (between float128 and int4) and 0x80-0xEF are reserved.
TEST(ElementType, AssignedTagsAreInTheirTierAndGapsAreReserved) {
    std::set<uint8_t> assigned;
    for (const TypeFacts& t : kTypes) {
        EXPECT_EQ(hurray::type_tag(t.type), t.tag) << t.name;
        EXPECT_EQ(hurray::classify_type_tag(t.tag), t.tier) << t.name;
        EXPECT_TRUE(hurray::is_builtin(t.type)) << t.name;
        assigned.insert(t.tag);
    }
    EXPECT_EQ(assigned.size(), 26U);
    for (uint8_t tag : {0x05, 0x0F, 0x18, 0x21, 0x3F, 0x47, 0x4C, 0x52, 0x7F, 0x80, 0xEF}) {
        EXPECT_EQ(hurray::classify_type_tag(tag), TypeTagClass::kReserved) << int{tag};
        EXPECT_FALSE(hurray::is_builtin(static_cast<ElementType>(tag))) << int{tag};
    }
    for (uint8_t tag : {0xF0, 0xF7, 0xFE}) {
        EXPECT_EQ(hurray::classify_type_tag(tag), TypeTagClass::kPrivate) << int{tag};
        EXPECT_FALSE(hurray::is_builtin(static_cast<ElementType>(tag))) << int{tag};
    }
}

// element-types.md: bit widths, and the sub-byte / float / signed / unsigned classification.
TEST(ElementType, BitWidthsAndKindsMatchTheSpec) {
    for (const TypeFacts& t : kTypes) {
        SCOPED_TRACE(t.name);
        EXPECT_EQ(hurray::bit_width(t.type), t.bits);
        EXPECT_EQ(hurray::is_sub_byte(t.type), t.bits < 8);
        EXPECT_EQ(hurray::is_floating_point(t.type), t.kind == TypeFacts::kFloat);
        EXPECT_EQ(hurray::is_signed_integer(t.type), t.kind == TypeFacts::kSigned);
        EXPECT_EQ(hurray::is_unsigned_integer(t.type), t.kind == TypeFacts::kUnsigned);
    }
    // Not built in: no width, no kind.
    for (uint8_t tag : {0x00, 0x47, 0x80, 0xF0, 0xFF}) {
        const auto t = static_cast<ElementType>(tag);
        EXPECT_EQ(hurray::bit_width(t), 0U) << int{tag};
        EXPECT_FALSE(hurray::is_sub_byte(t)) << int{tag};
        EXPECT_FALSE(hurray::is_floating_point(t)) << int{tag};
        EXPECT_FALSE(hurray::is_signed_integer(t)) << int{tag};
        EXPECT_FALSE(hurray::is_unsigned_integer(t)) << int{tag};
    }
}

// element-types.md names: type_name and type_from_name are inverse and unique.
TEST(ElementType, NamesRoundTripThroughTypeFromName) {
    std::set<std::string_view> names;
    for (const TypeFacts& t : kTypes) {
        EXPECT_EQ(hurray::type_name(t.type), t.name);
        const auto back = hurray::type_from_name(t.name);
        ASSERT_TRUE(back.has_value()) << t.name;
        EXPECT_EQ(*back, t.type);
        names.insert(t.name);
    }
    EXPECT_EQ(names.size(), 26U);
    for (std::string_view bad : {"", "float", "Float32", "float32 ", "fp16", "int1", "private"}) {
        EXPECT_FALSE(hurray::type_from_name(bad).has_value()) << bad;
    }
    EXPECT_TRUE(hurray::type_name(static_cast<ElementType>(0xF0)).empty());
    EXPECT_TRUE(hurray::type_name(static_cast<ElementType>(0x47)).empty());
}

// element-types.md § Sub-Byte packing and § 6-bit packing: bytes for N elements.
TEST(ElementType, StorageBytesFollowThePackingRules) {
    struct Case {
        uint32_t bits;
        uint64_t count;
        uint64_t bytes;
    };
    const Case cases[] = {
        {1, 0, 0},   {1, 1, 1},   {1, 8, 1},   {1, 9, 2},   {2, 5, 2},    {2, 4, 1},
        {4, 5, 3},   {4, 4, 2},   {6, 0, 0},   {6, 1, 3},   {6, 4, 3},    {6, 5, 6},
        {6, 8, 6},   {8, 3, 3},   {16, 3, 6},  {24, 2, 6},  {128, 1, 16}, {64, 0, 0},
    };
    for (const Case& c : cases) {
        auto r = hurray::storage_bytes_for_bits(c.bits, c.count);
        ASSERT_TRUE(r.ok()) << c.bits << " x" << c.count << ": " << r.error().to_string();
        EXPECT_EQ(*r, c.bytes) << c.bits << " x" << c.count;
    }
    // Counts that only fit when packed: a 1-bit width handles 2^64-1 elements.
    auto max_bits = hurray::storage_bytes_for_bits(1, UINT64_MAX);
    ASSERT_TRUE(max_bits.ok());
    EXPECT_EQ(*max_bits, UINT64_MAX / 8 + 1);
    auto max_float32 = hurray::storage_bytes(ElementType::kFloat32, UINT64_MAX / 4);
    ASSERT_TRUE(max_float32.ok());
    EXPECT_EQ(*max_float32, UINT64_MAX / 4 * 4);
}

// A size that does not fit in 64 bits is kSizeOverflow, never a wrapped value.
TEST(ElementType, StorageBytesOverflowIsReported) {
    struct Case {
        ElementType type;
        uint64_t count;
    };
    const Case cases[] = {{ElementType::kFloat32, UINT64_MAX},
                          {ElementType::kFloat32, UINT64_MAX / 4 + 1},
                          {ElementType::kUInt16, UINT64_MAX / 2 + 1},
                          {ElementType::kComplex128, UINT64_MAX / 16 + 1},
                          {ElementType::kFloat128, UINT64_MAX}};
    for (const Case& c : cases) {
        auto r = hurray::storage_bytes(c.type, c.count);
        ASSERT_FALSE(r.ok()) << hurray::type_name(c.type) << " x" << c.count;
        EXPECT_EQ(r.error().code(), ErrorCode::kSizeOverflow) << r.error().to_string();
    }
    auto bits = hurray::storage_bytes_for_bits(64, UINT64_MAX);
    ASSERT_FALSE(bits.ok());
    EXPECT_EQ(bits.error().code(), ErrorCode::kSizeOverflow);
    // 6-bit groups never overflow: ceil((2^64 - 1) / 4) * 3 = 3 * 2^62 still fits.
    auto six = hurray::storage_bytes(ElementType::kFloat6E2M3, UINT64_MAX);
    ASSERT_TRUE(six.ok());
    EXPECT_EQ(*six, 3 * (uint64_t{1} << 62));
}

// Widths the format cannot size (0, odd sub-byte, non-whole bytes) are invalid arguments.
TEST(ElementType, StorageBytesForBitsRejectsUnsizableWidths) {
    for (uint32_t bits : {0U, 3U, 5U, 7U, 9U, 12U, 15U, 33U, 127U, 0xFFFFFFFFU}) {
        auto r = hurray::storage_bytes_for_bits(bits, 4);
        ASSERT_FALSE(r.ok()) << bits;
        EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument) << bits;
    }
}

// A type this library cannot size (reserved, private without its extension
// section) has no storage size.
TEST(ElementType, StorageBytesOfAnUnknownTypeIsUnknownElementType) {
    for (uint8_t tag : {0x00, 0x47, 0x80, 0xF0, 0xFF}) {
        auto r = hurray::storage_bytes(static_cast<ElementType>(tag), 4);
        ASSERT_FALSE(r.ok()) << int{tag};
        EXPECT_EQ(r.error().code(), ErrorCode::kUnknownElementType) << int{tag};
    }
}

// storage_bytes agrees with storage_bytes_for_bits for every built-in type.
TEST(ElementType, StorageBytesUsesTheTypesBitWidth) {
    for (const TypeFacts& t : kTypes) {
        for (uint64_t n : {0U, 1U, 3U, 4U, 7U, 1000U}) {
            auto a = hurray::storage_bytes(t.type, n);
            auto b = hurray::storage_bytes_for_bits(t.bits, n);
            ASSERT_TRUE(a.ok() && b.ok()) << t.name;
            EXPECT_EQ(*a, *b) << t.name << " x" << n;
        }
    }
}

}  // namespace
