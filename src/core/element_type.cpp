// SPDX-License-Identifier: Apache-2.0
#include "hurray/core/element_type.hpp"

#include <array>
#include <string>

#include "hurray/core/checked_math.hpp"
#include "hurray/core/text.hpp"

namespace hurray {
namespace {

struct TypeInfo {
    ElementType type;
    std::string_view name;
    uint8_t bits;
    bool tier1;
    enum Kind : uint8_t { kFloat, kSigned, kUnsigned, kBool } kind;
};

constexpr std::array<TypeInfo, 26> kTypes{{
    {ElementType::kFloat16, "float16", 16, true, TypeInfo::kFloat},
    {ElementType::kBFloat16, "bfloat16", 16, true, TypeInfo::kFloat},
    {ElementType::kFloat32, "float32", 32, true, TypeInfo::kFloat},
    {ElementType::kFloat64, "float64", 64, true, TypeInfo::kFloat},
    {ElementType::kInt8, "int8", 8, true, TypeInfo::kSigned},
    {ElementType::kUInt8, "uint8", 8, true, TypeInfo::kUnsigned},
    {ElementType::kInt16, "int16", 16, true, TypeInfo::kSigned},
    {ElementType::kUInt16, "uint16", 16, true, TypeInfo::kUnsigned},
    {ElementType::kInt32, "int32", 32, true, TypeInfo::kSigned},
    {ElementType::kUInt32, "uint32", 32, true, TypeInfo::kUnsigned},
    {ElementType::kInt64, "int64", 64, true, TypeInfo::kSigned},
    {ElementType::kUInt64, "uint64", 64, true, TypeInfo::kUnsigned},
    {ElementType::kBool, "bool", 1, true, TypeInfo::kBool},
    {ElementType::kFloat8E4M3, "float8_e4m3", 8, false, TypeInfo::kFloat},
    {ElementType::kFloat8E5M2, "float8_e5m2", 8, false, TypeInfo::kFloat},
    {ElementType::kFloat8E8M0, "float8_e8m0", 8, false, TypeInfo::kFloat},
    {ElementType::kFloat4E2M1, "float4_e2m1", 4, false, TypeInfo::kFloat},
    {ElementType::kFloat6E2M3, "float6_e2m3", 6, false, TypeInfo::kFloat},
    {ElementType::kFloat6E3M2, "float6_e3m2", 6, false, TypeInfo::kFloat},
    {ElementType::kFloat128, "float128", 128, false, TypeInfo::kFloat},
    {ElementType::kInt4, "int4", 4, false, TypeInfo::kSigned},
    {ElementType::kUInt4, "uint4", 4, false, TypeInfo::kUnsigned},
    {ElementType::kInt2, "int2", 2, false, TypeInfo::kSigned},
    {ElementType::kUInt2, "uint2", 2, false, TypeInfo::kUnsigned},
    {ElementType::kComplex64, "complex64", 64, false, TypeInfo::kFloat},
    {ElementType::kComplex128, "complex128", 128, false, TypeInfo::kFloat},
}};

// Index into kTypes by tag byte (kNone where unassigned), built at compile time.
constexpr uint8_t kNone = 0xFF;
constexpr std::array<uint8_t, 256> kIndexByTag = [] {
    std::array<uint8_t, 256> index{};
    index.fill(kNone);
    for (size_t i = 0; i < kTypes.size(); ++i) {
        index[static_cast<uint8_t>(kTypes[i].type)] = static_cast<uint8_t>(i);
    }
    return index;
}();

const TypeInfo* find(ElementType t) noexcept {
    const uint8_t i = kIndexByTag[static_cast<uint8_t>(t)];
    return i == kNone ? nullptr : &kTypes[i];
}

}  // namespace

TypeTagClass classify_type_tag(uint8_t tag) noexcept {
    if (tag == 0x00 || tag == 0xFF) {
        return TypeTagClass::kInvalid;
    }
    if (tag >= 0xF0) {
        return TypeTagClass::kPrivate;
    }
    const TypeInfo* info = find(static_cast<ElementType>(tag));
    if (info == nullptr) {
        return TypeTagClass::kReserved;
    }
    return info->tier1 ? TypeTagClass::kTier1 : TypeTagClass::kTier2;
}

bool is_builtin(ElementType t) noexcept { return find(t) != nullptr; }

uint32_t bit_width(ElementType t) noexcept {
    const TypeInfo* info = find(t);
    return info == nullptr ? 0 : info->bits;
}

bool is_sub_byte(ElementType t) noexcept {
    const uint32_t b = bit_width(t);
    return b != 0 && b < 8;
}

bool is_floating_point(ElementType t) noexcept {
    const TypeInfo* info = find(t);
    return info != nullptr && info->kind == TypeInfo::kFloat;
}

bool is_signed_integer(ElementType t) noexcept {
    const TypeInfo* info = find(t);
    return info != nullptr && info->kind == TypeInfo::kSigned;
}

bool is_unsigned_integer(ElementType t) noexcept {
    const TypeInfo* info = find(t);
    return info != nullptr && info->kind == TypeInfo::kUnsigned;
}

std::string_view type_name(ElementType t) noexcept {
    const TypeInfo* info = find(t);
    return info == nullptr ? std::string_view() : info->name;
}

std::optional<ElementType> type_from_name(std::string_view name) noexcept {
    for (const auto& info : kTypes) {
        if (info.name == name) {
            return info.type;
        }
    }
    return std::nullopt;
}

Result<uint64_t> storage_bytes_for_bits(uint32_t bit_width, uint64_t count) {
    const uint32_t bits = bit_width;
    if (bits == 1 || bits == 2 || bits == 4) {
        const uint64_t per_byte = 8 / bits;
        return ceil_div(count, per_byte);
    }
    if (bits == 6) {
        // Four 6-bit elements pack into three bytes (element-types.md § 6-bit packing).
        if (auto r = mul_u64(ceil_div(count, 4), 3)) {
            return *r;
        }
    } else if (bits >= 8 && bits % 8 == 0) {
        if (auto r = mul_u64(count, bits / 8)) {
            return *r;
        }
    } else {
        return Error(ErrorCode::kInvalidArgument,
                     "bit_width: " + std::to_string(bits) + " bits per element cannot be sized");
    }
    return Error(ErrorCode::kSizeOverflow, "buffer size: " + std::to_string(count) + " elements of " +
                                               std::to_string(bits) +
                                               " bits exceed 2^64-1 bytes");
}

Result<uint64_t> storage_bytes(ElementType t, uint64_t count) {
    const uint32_t bits = bit_width(t);
    if (bits == 0) {
        return Error(ErrorCode::kUnknownElementType,
                     "type_tag: " + hex(type_tag(t)) + " has no known size");
    }
    return storage_bytes_for_bits(bits, count);
}

}  // namespace hurray
