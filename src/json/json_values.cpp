// SPDX-License-Identifier: Apache-2.0
// Enum names and scalar encodings of the JSON form (docs/json.md).
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <string>
#include <system_error>

#include "hurray/core/buffer_handle.hpp"
#include "hurray/core/element_type.hpp"
#include "hurray/core/layout.hpp"
#include "hurray/core/quantization.hpp"
#include "hurray/core/text.hpp"
#include "json/json_internal.hpp"

namespace hurray::json_detail {
namespace {

template <size_t N>
std::string_view from_table(const std::array<std::string_view, N>& names, uint8_t v) noexcept {
    return v < N ? names[v] : std::string_view();
}

bool is_private(uint8_t v) noexcept { return v >= 0xF0 && v <= 0xFE; }

constexpr std::string_view kNanPrefix = "nan:0x";

// Parses 1..max_digits hex digits (either case) into `out`.
bool parse_hex_bits(std::string_view s, size_t max_digits, uint64_t& out) noexcept {
    if (s.empty() || s.size() > max_digits) {
        return false;
    }
    uint64_t v = 0;
    for (const char c : s) {
        int digit = 0;
        if (c >= '0' && c <= '9') {
            digit = c - '0';
        } else if (c >= 'a' && c <= 'f') {
            digit = c - 'a' + 10;
        } else if (c >= 'A' && c <= 'F') {
            digit = c - 'A' + 10;
        } else {
            return false;
        }
        v = (v << 4U) | static_cast<uint64_t>(digit);
    }
    out = v;
    return true;
}

}  // namespace

std::string_view element_type_name(uint8_t v) noexcept { return type_name(static_cast<ElementType>(v)); }

std::string_view layout_tag_name(uint8_t v) noexcept { return is_private(v) ? std::string_view() : layout_name(v); }

std::string_view scheme_tag_name(uint8_t v) noexcept { return is_private(v) ? std::string_view() : scheme_name(v); }

std::string_view device_tag_name(uint8_t v) noexcept {
    const auto d = static_cast<DeviceTag>(v);
    const std::string_view name = device_name(d);
    return (is_private_device(d) || name == "invalid") ? std::string_view() : name;
}

std::string_view sync_mode_name(uint8_t v) noexcept {
    static constexpr std::array<std::string_view, 3> kNames = {"producer_synced", "event", "consumer_stream"};
    return from_table(kNames, v);
}

std::string_view memory_class_name(uint8_t v) noexcept {
    static constexpr std::array<std::string_view, 4> kNames = {"standard", "host_pinned", "unified", "peer"};
    return from_table(kNames, v);
}

std::string_view kv_role_name(uint8_t v) noexcept {
    static constexpr std::array<std::string_view, 3> kNames = {"key", "value", "fused"};
    return from_table(kNames, v);
}

std::string_view index_type_name(uint8_t v) noexcept {
    static constexpr std::array<std::string_view, 2> kNames = {"uint32", "uint64"};
    return from_table(kNames, v);
}

std::string_view composition_rule_name(uint8_t v) noexcept {
    static constexpr std::array<std::string_view, 4> kNames = {"", "partition", "overlay", "group"};
    return from_table(kNames, v);
}

std::string_view combine_op_name(uint8_t v) noexcept {
    static constexpr std::array<std::string_view, 3> kNames = {"none", "replace", "add"};
    return from_table(kNames, v);
}

std::string_view member_role_name(uint8_t v) noexcept {
    static constexpr std::array<std::string_view, 2> kNames = {"correction", "base"};
    return from_table(kNames, v);
}

int value_of_name(NameFn names, std::string_view name) noexcept {
    if (name.empty()) {
        return -1;
    }
    for (int v = 0; v <= 0xFF; ++v) {
        if (names(static_cast<uint8_t>(v)) == name) {
            return v;
        }
    }
    return -1;
}

Json float64_value(double v) {
    if (std::isnan(v)) {
        return concat({kNanPrefix, hex_digits(std::bit_cast<uint64_t>(v), 16)});
    }
    if (std::isinf(v)) {
        return v > 0 ? "inf" : "-inf";
    }
    // nlohmann/json prints a double with the shortest digits that read back to
    // the same double, and reads numbers with correct rounding: finite values,
    // -0.0 and subnormals included, survive as numbers.
    return v;
}

Json float32_value(float v) {
    if (std::isnan(v)) {
        return concat({kNanPrefix, hex_digits(std::bit_cast<uint32_t>(v), 8)});
    }
    if (std::isinf(v)) {
        return v > 0 ? "inf" : "-inf";
    }
    // The document holds doubles. Store the double nearest to the float's
    // shortest decimal form ("0.1", not "0.10000000149011612") when it rounds
    // back to the same float, else the float's exact value. The second case is
    // real: of all 2^32 patterns, +-0x15AE43FD fail the first (double rounding).
    std::array<char, 64> buf{};
    const auto printed = std::to_chars(buf.data(), buf.data() + buf.size(), v);
    double d = 0;
    const auto parsed = std::from_chars(buf.data(), printed.ptr, d);
    if (printed.ec == std::errc() && parsed.ec == std::errc() &&
        std::bit_cast<uint32_t>(static_cast<float>(d)) == std::bit_cast<uint32_t>(v)) {
        return d;
    }
    return static_cast<double>(v);
}

bool parse_float64_string(std::string_view s, double& out) noexcept {
    if (s == "inf" || s == "-inf") {
        out = s[0] == '-' ? -HUGE_VAL : HUGE_VAL;
        return true;
    }
    if (s == "nan") {
        out = std::bit_cast<double>(uint64_t{0x7FF8000000000000});
        return true;
    }
    uint64_t bits = 0;
    if (!s.starts_with(kNanPrefix) || !parse_hex_bits(s.substr(kNanPrefix.size()), 16, bits)) {
        return false;
    }
    const auto v = std::bit_cast<double>(bits);
    if (!std::isnan(v)) {
        return false;
    }
    out = v;
    return true;
}

bool parse_float32_string(std::string_view s, float& out) noexcept {
    if (s == "inf" || s == "-inf") {
        out = s[0] == '-' ? -HUGE_VALF : HUGE_VALF;
        return true;
    }
    if (s == "nan") {
        out = std::bit_cast<float>(uint32_t{0x7FC00000});
        return true;
    }
    uint64_t bits = 0;
    if (!s.starts_with(kNanPrefix) || !parse_hex_bits(s.substr(kNanPrefix.size()), 8, bits)) {
        return false;
    }
    const auto v = std::bit_cast<float>(static_cast<uint32_t>(bits));
    if (!std::isnan(v)) {
        return false;
    }
    out = v;
    return true;
}

bool parse_hex(std::string_view s, std::vector<uint8_t>& out, size_t& bad_at) {
    out.clear();
    out.reserve(s.size() / 2);
    for (size_t i = 0; i + 1 < s.size(); i += 2) {
        uint64_t byte = 0;
        if (!parse_hex_bits(s.substr(i, 2), 2, byte)) {
            bad_at = parse_hex_bits(s.substr(i, 1), 1, byte) ? i + 1 : i;
            return false;
        }
        out.push_back(static_cast<uint8_t>(byte));
    }
    if (s.size() % 2 != 0) {
        bad_at = s.size();
        return false;
    }
    return true;
}

}  // namespace hurray::json_detail
