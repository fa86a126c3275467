// SPDX-License-Identifier: Apache-2.0
// SafeTensors dtype names <-> Hurray element types.
#include <array>
#include <optional>
#include <string_view>
#include <utility>

#include "hurray/convert/safetensors.hpp"

namespace hurray::convert {

namespace {

struct DtypeName {
    std::string_view name;
    ElementType type;
};

// Every SafeTensors dtype Hurray has a type for. F4 and F6_* are sub-byte: SafeTensors
// stores their bytes without defining a bit order; they are read as Hurray's LSB-first
// packing (docs/convert.md).
constexpr std::array kDtypes = {
    DtypeName{"F64", ElementType::kFloat64},        DtypeName{"F32", ElementType::kFloat32},
    DtypeName{"F16", ElementType::kFloat16},        DtypeName{"BF16", ElementType::kBFloat16},
    DtypeName{"I64", ElementType::kInt64},          DtypeName{"I32", ElementType::kInt32},
    DtypeName{"I16", ElementType::kInt16},          DtypeName{"I8", ElementType::kInt8},
    DtypeName{"U64", ElementType::kUInt64},         DtypeName{"U32", ElementType::kUInt32},
    DtypeName{"U16", ElementType::kUInt16},         DtypeName{"U8", ElementType::kUInt8},
    DtypeName{"BOOL", ElementType::kBool},          DtypeName{"F8_E4M3", ElementType::kFloat8E4M3},
    DtypeName{"F8_E5M2", ElementType::kFloat8E5M2}, DtypeName{"F8_E8M0", ElementType::kFloat8E8M0},
    DtypeName{"F4", ElementType::kFloat4E2M1},      DtypeName{"F6_E2M3", ElementType::kFloat6E2M3},
    DtypeName{"F6_E3M2", ElementType::kFloat6E3M2}, DtypeName{"C64", ElementType::kComplex64},
};

}  // namespace

std::optional<ElementType> safetensors_element_type(std::string_view dtype) noexcept {
    for (const auto& d : kDtypes) {
        if (d.name == dtype) {
            return d.type;
        }
    }
    return std::nullopt;
}

std::string_view safetensors_dtype_name(ElementType type) noexcept {
    for (const auto& d : kDtypes) {
        if (d.type == type) {
            return d.name;
        }
    }
    return {};
}

}  // namespace hurray::convert
