// SPDX-License-Identifier: Apache-2.0
// The GGML tensor types: names, block geometry, and the plain ones' Hurray element types.
#include <array>

#include "convert/ggml_blocks.hpp"
#include "hurray/convert/gguf.hpp"

namespace hurray::formats {

namespace {

struct TypeRow {
    uint32_t id = 0;
    GgmlTypeInfo info;
};

// ggml_type numbers with their names, values per block and bytes per block (the block
// layouts of ggml's quantized types; 1 value per "block" for the plain types).
constexpr std::array<TypeRow, 32> kTypes{{
    {0, {"f32", 1, 4}},         {1, {"f16", 1, 2}},         {2, {"q4_0", 32, 18}},
    {3, {"q4_1", 32, 20}},      {6, {"q5_0", 32, 22}},      {7, {"q5_1", 32, 24}},
    {8, {"q8_0", 32, 34}},      {9, {"q8_1", 32, 36}},      {10, {"q2_K", 256, 84}},
    {11, {"q3_K", 256, 110}},   {12, {"q4_K", 256, 144}},   {13, {"q5_K", 256, 176}},
    {14, {"q6_K", 256, 210}},   {15, {"q8_K", 256, 292}},   {16, {"iq2_xxs", 256, 66}},
    {17, {"iq2_xs", 256, 74}},  {18, {"iq3_xxs", 256, 98}}, {19, {"iq1_s", 256, 50}},
    {20, {"iq4_nl", 32, 18}},   {21, {"iq3_s", 256, 110}},  {22, {"iq2_s", 256, 82}},
    {23, {"iq4_xs", 256, 136}}, {24, {"i8", 1, 1}},         {25, {"i16", 1, 2}},
    {26, {"i32", 1, 4}},        {27, {"i64", 1, 8}},        {28, {"f64", 1, 8}},
    {29, {"iq1_m", 256, 56}},   {30, {"bf16", 1, 2}},       {34, {"tq1_0", 256, 54}},
    {35, {"tq2_0", 256, 66}},   {39, {"mxfp4", 32, 17}},
}};

}  // namespace

std::optional<GgmlTypeInfo> ggml_type_info(uint32_t type) noexcept {
    for (const TypeRow& row : kTypes) {
        if (row.id == type) {
            return row.info;
        }
    }
    return std::nullopt;
}

std::string_view gguf_kv_type_name(uint32_t type) noexcept {
    static constexpr std::array<std::string_view, 13> kNames{
        "uint8", "int8",   "uint16", "int16",  "uint32", "int32",  "float32",
        "bool",  "string", "array",  "uint64", "int64",  "float64"};
    return type < kNames.size() ? kNames[type] : std::string_view{};
}

std::optional<uint32_t> ggml_blocks_type(const TensorDescriptor& d) noexcept {
    if (!d.quantization) {
        return std::nullopt;
    }
    const auto* o = std::get_if<OpaqueQuantization>(&d.quantization->scheme);
    if (o == nullptr || o->scheme_tag != kGgmlBlocksTag || o->scheme_version != 1 ||
        o->payload.size() != 16 || o->payload[0] != 'G' || o->payload[1] != 'G' ||
        o->payload[2] != 'M' || o->payload[3] != 'L') {
        return std::nullopt;
    }
    auto u32 = [&o](size_t at) {
        return static_cast<uint32_t>(o->payload[at]) |
               (static_cast<uint32_t>(o->payload[at + 1]) << 8) |
               (static_cast<uint32_t>(o->payload[at + 2]) << 16) |
               (static_cast<uint32_t>(o->payload[at + 3]) << 24);
    };
    const uint32_t type = u32(4);
    const auto info = ggml_type_info(type);
    if (!info || info->elements != u32(8) || info->bytes != u32(12)) {
        return std::nullopt;
    }
    return type;
}

namespace detail {

std::optional<ElementType> ggml_dense_element_type(uint32_t type) noexcept {
    switch (static_cast<GgmlType>(type)) {
        case GgmlType::kF32:
            return ElementType::kFloat32;
        case GgmlType::kF16:
            return ElementType::kFloat16;
        case GgmlType::kBF16:
            return ElementType::kBFloat16;
        case GgmlType::kF64:
            return ElementType::kFloat64;
        case GgmlType::kI8:
            return ElementType::kInt8;
        case GgmlType::kI16:
            return ElementType::kInt16;
        case GgmlType::kI32:
            return ElementType::kInt32;
        case GgmlType::kI64:
            return ElementType::kInt64;
        default:
            break;
    }
    return std::nullopt;
}

std::optional<uint32_t> ggml_type_of_element(ElementType type) noexcept {
    for (const TypeRow& row : kTypes) {
        if (ggml_dense_element_type(row.id) == type) {
            return row.id;
        }
    }
    return std::nullopt;
}

}  // namespace detail

}  // namespace hurray::formats
