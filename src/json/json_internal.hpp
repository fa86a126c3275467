// SPDX-License-Identifier: Apache-2.0
// Internal to hurray::json: the document tree type, the conversion of a
// descriptor to and from that tree, and the encodings of its scalar values.
// nlohmann/json appears only here and in src/json/*.cpp, never in a public header.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"

namespace hurray::json_detail {

/// The document tree. Ordered, so that keys are written in the model's order.
using Json = nlohmann::ordered_json;

/// Joins strings. Used for messages instead of `"literal" + std::string(...)`,
/// which GCC 12 at -O3 misreports under -Wrestrict (GCC bug 105329).
inline std::string concat(std::initializer_list<std::string_view> parts) {
    size_t n = 0;
    for (const std::string_view p : parts) {
        n += p.size();
    }
    std::string s;
    s.reserve(n);
    for (const std::string_view p : parts) {
        s += p;
    }
    return s;
}

/// A string from the document as it appears in an error message: more than 40
/// characters are cut to 40 followed by "...".
inline std::string shortened(std::string_view s) {
    constexpr size_t kMax = 40;
    return s.size() > kMax ? concat({s.substr(0, kMax), "..."}) : std::string(s);
}

/// Builds the document of a descriptor (docs/json.md). Never fails.
Json descriptor_to_document(const TensorDescriptor& d);

/// Reads a descriptor from a document tree; structural checks only.
Result<TensorDescriptor> descriptor_from_document(const Json& doc);

// --- Enum names ----------------------------------------------------------------
// Each returns the name of a raw byte value, or an empty view when the value has
// no name (private, reserved or invalid): such values are written as numbers.

/// Element type names (`type_name`).
std::string_view element_type_name(uint8_t v) noexcept;
/// Named layout tags (`layout_name`, except the private range).
std::string_view layout_tag_name(uint8_t v) noexcept;
/// Named quantization schemes (`scheme_name`, except the private range).
std::string_view scheme_tag_name(uint8_t v) noexcept;
/// Device tags (`device_name`, except private and invalid tags).
std::string_view device_tag_name(uint8_t v) noexcept;
/// Sync modes: `producer_synced`, `event`, `consumer_stream`.
std::string_view sync_mode_name(uint8_t v) noexcept;
/// Memory classes: `standard`, `host_pinned`, `unified`, `peer`.
std::string_view memory_class_name(uint8_t v) noexcept;
/// KV roles: `key`, `value`, `fused`.
std::string_view kv_role_name(uint8_t v) noexcept;
/// Block table index types: `uint32`, `uint64`.
std::string_view index_type_name(uint8_t v) noexcept;
/// Composition rules: `partition`, `overlay`, `group`.
std::string_view composition_rule_name(uint8_t v) noexcept;
/// Combine ops: `none`, `replace`, `add`.
std::string_view combine_op_name(uint8_t v) noexcept;
/// Member roles: `correction`, `base`.
std::string_view member_role_name(uint8_t v) noexcept;

/// A function from a raw byte value to its name (empty: no name).
using NameFn = std::string_view (*)(uint8_t) noexcept;

/// The value whose name is `name`, or -1 when no value has that name.
int value_of_name(NameFn names, std::string_view name) noexcept;

// --- Scalar encodings ------------------------------------------------------------

/// The string written for the dynamic dimension sentinel in `shape`.
inline constexpr std::string_view kDynamicName = "dynamic";

/// A float64 field: a number when finite, else `"inf"`, `"-inf"` or
/// `"nan:0x<16 hex digits>"`.
Json float64_value(double v);
/// A float32 field: the shortest decimal number that reads back to the same
/// float when finite, else `"inf"`, `"-inf"` or `"nan:0x<8 hex digits>"`.
Json float32_value(float v);

/// Parses the string forms of a non-finite float64 (`"inf"`, `"-inf"`, `"nan"`,
/// `"nan:0x<1-16 hex digits>"` holding a NaN). Returns false when `s` is none of them.
bool parse_float64_string(std::string_view s, double& out) noexcept;
/// The float32 counterpart (`"nan:0x<1-8 hex digits>"`).
bool parse_float32_string(std::string_view s, float& out) noexcept;
/// Parses hex digits (either case), two per byte. On failure returns false and
/// sets `bad_at` to the offending position (`s.size()` for an odd length).
bool parse_hex(std::string_view s, std::vector<uint8_t>& out, size_t& bad_at);

}  // namespace hurray::json_detail
