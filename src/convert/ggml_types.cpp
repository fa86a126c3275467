// SPDX-License-Identifier: Apache-2.0
// GGUF KV type names, and the Hurray element types of the plain GGML types.
#include <array>

#include "convert/ggml_blocks.hpp"
#include "hurray/convert/gguf.hpp"

namespace hurray::convert {

std::string_view gguf_kv_type_name(uint32_t type) noexcept {
    static constexpr std::array<std::string_view, 13> kNames{
        "uint8", "int8",   "uint16", "int16",  "uint32", "int32",  "float32",
        "bool",  "string", "array",  "uint64", "int64",  "float64"};
    return type < kNames.size() ? kNames[type] : std::string_view{};
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
    for (const GgmlType t : {GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16, GgmlType::kF64,
                             GgmlType::kI8, GgmlType::kI16, GgmlType::kI32, GgmlType::kI64}) {
        if (ggml_dense_element_type(static_cast<uint32_t>(t)) == type) {
            return static_cast<uint32_t>(t);
        }
    }
    return std::nullopt;
}

}  // namespace detail

}  // namespace hurray::convert
