// SPDX-License-Identifier: Apache-2.0
// The text form of typed KV values in a SafeTensors `__metadata__` (strings only there).
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "convert/safetensors_internal.hpp"
#include "hurray/core/describe.hpp"

namespace hurray::convert::detail {

namespace {

/// Shortest text that reads back as the same double ("nan", "inf", "-inf" for the
/// non-finite values; a NaN's payload and sign are not kept).
std::string float_text(double v) {
    if (std::isnan(v)) {
        return "nan";
    }
    std::array<char, 64> buf{};
    const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v);
    return {buf.data(), r.ptr};
}


/// One array element as JSON text.
template <typename T>
std::string json_element(const T& v) {
    if constexpr (std::is_same_v<T, std::string>) {
        return nlohmann::json(v).dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
    } else if constexpr (std::is_same_v<T, double>) {
        std::string s = float_text(v);
        if (!std::isfinite(v)) {
            s.insert(s.begin(), '"');
            s.push_back('"');
        }
        return s;
    } else if constexpr (std::is_same_v<T, bool>) {
        return v ? "true" : "false";
    } else if constexpr (std::is_same_v<T, std::vector<uint8_t>>) {
        std::string s = hex_bytes(v);
        s.insert(s.begin(), '"');
        s.push_back('"');
        return s;
    } else {
        return std::to_string(v);
    }
}

std::string array_text(const KvArray& a) {
    return std::visit(
        [](const auto& values) {
            std::string s = "[";
            bool first = true;
            for (const auto& v : values) {
                if (!first) {
                    s += ',';
                }
                first = false;
                using V = std::decay_t<decltype(values)>;
                s += json_element(static_cast<typename V::value_type>(v));
            }
            s += ']';
            return s;
        },
        a.values);
}

}  // namespace

Result<std::string> kv_text_form(const KvValue& value) {
    if (const auto* s = value.as_string()) {
        return *s;
    }
    if (const auto* v = value.as_int64()) {
        return std::to_string(*v);
    }
    if (const auto* v = value.as_uint64()) {
        return std::to_string(*v);
    }
    if (const auto* v = value.as_float64()) {
        return float_text(*v);
    }
    if (const auto* v = value.as_bool()) {
        return std::string(*v ? "true" : "false");
    }
    if (const auto* v = value.as_bytes()) {
        return hex_bytes(*v);
    }
    if (const auto* v = value.as_array()) {
        return array_text(*v);
    }
    return Error(ErrorCode::kUnsupported,
                 "a private-tag KV value has no text form in SafeTensors __metadata__");
}

}  // namespace hurray::convert::detail
