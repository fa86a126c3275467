// SPDX-License-Identifier: Apache-2.0
// TensorDescriptor -> document tree (docs/json.md).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "hurray/core/text.hpp"
#include "hurray/core/describe.hpp"
#include "json/json_fields.hpp"
#include "json/json_internal.hpp"

namespace hurray::json_detail {
namespace {

// An enum field: its name when it has one, else its raw value.
template <typename E>
Json enum_value(E v, NameFn names) {
    const auto raw = static_cast<uint8_t>(v);
    const std::string_view name = names(raw);
    if (name.empty()) {
        return raw;
    }
    return std::string(name);
}

Json shape_value(const Shape& shape) {
    Json a = Json::array();
    for (const uint64_t dim : shape) {
        if (dim == kDynamicDim) {
            a.push_back(std::string(kDynamicName));
        } else {
            a.push_back(dim);
        }
    }
    return a;
}

/// The value of a member by its type (see visit_fields); defined below.
template <typename T>
Json value_of(const T& v);

/// Writes the members of `s` into the object `o` in the order of visit_fields;
/// defined below.
template <typename S>
void put_fields(Json& o, const S& s);

/// Writes the selector `key` of a layout or scheme, spelled as `how` says, then
/// the fields of its alternative.
template <typename V, typename Open>
void put_selected(Json& o, std::string_view key, const V& v, const Selection<V, Open>& how) {
    const uint8_t tag = how.tag_of(v);
    if (std::holds_alternative<Open>(v)) {
        o[std::string(key)] = tag;  // a number: it selects the open alternative whatever its value
    } else {
        o[std::string(key)] = std::string(how.names(tag));
    }
    std::visit([&o](const auto& alternative) { put_fields(o, alternative); }, v);
}

/// Writes the member `key` that visit_fields passed as `m`; leaves out an empty
/// Omittable and an empty std::optional.
template <typename M>
void put_member(Json& o, std::string_view key, const M& m) {
    if constexpr (kIsSpecialization<M, EnumField>) {
        o[std::string(key)] = enum_value(m.value, m.names);
    } else if constexpr (kIsSpecialization<M, Omittable>) {
        if (!m.value.empty()) {
            o[std::string(key)] = value_of(m.value);
        }
    } else if constexpr (kIsSpecialization<M, std::optional>) {
        if (m) {
            o[std::string(key)] = value_of(*m);
        }
    } else if constexpr (kIsSpecialization<M, Selector>) {
        put_selected(o, key, m.value, m.how);
    } else {
        o[std::string(key)] = value_of(m);
    }
}

template <typename S>
void put_fields(Json& o, const S& s) {
    visit_fields(s, [&o](std::string_view key, const auto& m) { put_member(o, key, m); });
}

template <typename T>
Json value_of(const T& v) {
    if constexpr (std::is_same_v<T, float>) {
        return float32_value(v);
    } else if constexpr (std::is_same_v<T, double>) {
        return float64_value(v);
    } else if constexpr (std::is_same_v<T, std::vector<uint8_t>>) {
        return hex_bytes(v);
    } else if constexpr (std::is_same_v<T, Shape>) {
        return shape_value(v);
    } else if constexpr (kIsObject<T>) {
        Json o = Json::object();
        put_fields(o, v);
        return o;
    } else if constexpr (ObjectArray<T>) {
        Json a = Json::array();
        for (const auto& element : v) {
            a.push_back(value_of(element));
        }
        return a;
    } else {
        return v;  // integers, bools, and arrays of integers, as they are
    }
}

}  // namespace

Json descriptor_to_document(const TensorDescriptor& d) { return value_of(d); }

}  // namespace hurray::json_detail
