// SPDX-License-Identifier: Apache-2.0
// Internal: facts of the GGUF format shared by its reader and writer
// (src/convert/gguf_reader.cpp, gguf_writer.cpp).
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hurray/convert/gguf.hpp"

namespace hurray::convert::detail {

/// "GGUF" read as a little-endian u32.
inline constexpr uint32_t kGgufMagic = 0x46554747;
/// The version write_gguf() writes.
inline constexpr uint32_t kGgufVersion = 3;
/// Tensor data alignment when `general.alignment` is absent.
inline constexpr uint32_t kGgufDefaultAlignment = 32;
/// The key of the data alignment.
inline constexpr std::string_view kGgufAlignmentKey = "general.alignment";
/// GGML_MAX_DIMS.
inline constexpr uint32_t kGgufMaxDims = 4;

/// GGUF KV value types.
enum class GgufType : uint32_t {
    kUint8 = 0,
    kInt8 = 1,
    kUint16 = 2,
    kInt16 = 3,
    kUint32 = 4,
    kInt32 = 5,
    kFloat32 = 6,
    kBool = 7,
    kString = 8,
    kArray = 9,
    kUint64 = 10,
    kInt64 = 11,
    kFloat64 = 12,
};
inline constexpr uint32_t kGgufTypeCount = 13;

/// The recorded type of a KV value: its GGUF type and, for arrays, the element type.
struct GgufKvType {
    GgufType type = GgufType::kUint8;
    GgufType element = GgufType::kUint8;  ///< Arrays only (kArray: an array of arrays).
};

/// The name kGgufKvTypesKey records: "uint32", "array[string]", "array[array]", ...
inline std::string gguf_kv_type_string(const GgufKvType& t) {
    if (t.type != GgufType::kArray) {
        return std::string(gguf_kv_type_name(static_cast<uint32_t>(t.type)));
    }
    return "array[" + std::string(gguf_kv_type_name(static_cast<uint32_t>(t.element))) + "]";
}

/// Parses gguf_kv_type_string()'s names.
inline std::optional<GgufKvType> parse_gguf_kv_type(std::string_view s) {
    auto scalar = [](std::string_view n) -> std::optional<GgufType> {
        for (uint32_t i = 0; i < kGgufTypeCount; ++i) {
            if (gguf_kv_type_name(i) == n) {
                return static_cast<GgufType>(i);
            }
        }
        return std::nullopt;
    };
    if (s.size() > 7 && s.substr(0, 6) == "array[" && s.back() == ']') {
        const auto e = scalar(s.substr(6, s.size() - 7));
        if (!e) {
            return std::nullopt;
        }
        return GgufKvType{GgufType::kArray, *e};
    }
    const auto t = scalar(s);
    if (!t || *t == GgufType::kArray) {
        return std::nullopt;
    }
    return GgufKvType{*t, GgufType::kUint8};
}

/// float32 bits to float64, exactly, NaN payloads (signalling ones too) kept bit for bit.
inline double widen_float32_bits(uint32_t f) noexcept {
    if ((f & 0x7F800000U) == 0x7F800000U && (f & 0x007FFFFFU) != 0) {
        const uint64_t sign = static_cast<uint64_t>(f >> 31) << 63;
        const uint64_t mant = static_cast<uint64_t>(f & 0x007FFFFFU) << 29;
        return std::bit_cast<double>(sign | 0x7FF0000000000000ULL | mant);
    }
    return static_cast<double>(std::bit_cast<float>(f));
}

/// The float32 bits of a float64 that widen_float32_bits() can give, nullopt otherwise.
inline std::optional<uint32_t> narrow_float64_exact(double d) noexcept {
    const auto b = std::bit_cast<uint64_t>(d);
    if ((b & 0x7FF0000000000000ULL) == 0x7FF0000000000000ULL && (b & 0x000FFFFFFFFFFFFFULL) != 0) {
        if ((b & 0x1FFFFFFFULL) != 0) {
            return std::nullopt;
        }
        const auto sign = static_cast<uint32_t>(b >> 63) << 31;
        const auto mant = static_cast<uint32_t>((b & 0x000FFFFFFFFFFFFFULL) >> 29);
        return sign | 0x7F800000U | mant;
    }
    if (d == d && (d > 3.4028234663852886e38 || d < -3.4028234663852886e38) &&
        (b & 0x7FF0000000000000ULL) != 0x7FF0000000000000ULL) {
        return std::nullopt;  // finite, beyond float32's range
    }
    const auto f = static_cast<float>(d);
    if (std::bit_cast<uint64_t>(static_cast<double>(f)) != b) {
        return std::nullopt;
    }
    return std::bit_cast<uint32_t>(f);
}

}  // namespace hurray::convert::detail
