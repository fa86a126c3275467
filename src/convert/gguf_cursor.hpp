// SPDX-License-Identifier: Apache-2.0
// Internal: the bounds-checked reading of GGUF fields, shared by the reader and by the
// writer's check of the raw bytes of arrays of arrays (src/convert/gguf_reader.cpp,
// gguf_writer.cpp).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "convert/gguf_format.hpp"
#include "hurray/core/byte_io.hpp"
#include "hurray/core/result.hpp"

namespace hurray::convert::detail {

/// Deepest nesting of arrays of arrays accepted.
inline constexpr int kMaxArrayDepth = 8;

/// The smallest encoding of one value of `t` (arrays: element type + count).
inline uint64_t min_value_bytes(GgufType t) noexcept {
    switch (t) {
        case GgufType::kUint8:
        case GgufType::kInt8:
        case GgufType::kBool:
            return 1;
        case GgufType::kUint16:
        case GgufType::kInt16:
            return 2;
        case GgufType::kUint32:
        case GgufType::kInt32:
        case GgufType::kFloat32:
            return 4;
        case GgufType::kString:
        case GgufType::kUint64:
        case GgufType::kInt64:
        case GgufType::kFloat64:
            return 8;
        case GgufType::kArray:
            return 12;
    }
    return 1;
}

/// What every GGUF error message starts with.
inline constexpr std::string_view kGgufPrefix = "gguf: ";

/// The GGUF reader's cursor over the mapped header: hurray's one bounds-checked
/// reader (hurray/core/byte_io.hpp), its errors prefixed kGgufPrefix.
inline ByteReader gguf_cursor(std::span<const uint8_t> bytes) noexcept { return {bytes, 0, kGgufPrefix}; }

/// A GGUF string at the cursor: u64 length, bytes.
inline Result<std::string_view> read_string(ByteReader& c, const std::string& field) {
    const uint64_t at = c.pos();
    HURRAY_ASSIGN_OR_RETURN(uint64_t n, c.u64(field + " length"));
    if (n > c.remaining()) {
        return Error(ErrorCode::kTruncated,
                     std::string(kGgufPrefix) + field + ": length " + std::to_string(n) + " at offset " +
                         std::to_string(at) + " runs past the end of the file (" + std::to_string(c.remaining()) +
                         " bytes left)",
                     at);
    }
    HURRAY_ASSIGN_OR_RETURN(const std::span<const uint8_t> bytes, c.bytes(n, field));
    // SAFETY: `bytes` lies inside the mapping (ByteReader checked it).
    return std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

inline Error invalid(const std::string& msg, uint64_t at) {
    return {ErrorCode::kInvalidFile, std::string(kGgufPrefix) + msg, at};
}

/// Walks the body of an array of arrays (element type, count, elements; the bytes the
/// reader keeps raw), checking every nested header, without recursion.
inline Status skip_nested_array(ByteReader& c, const std::string& field) {
    struct Level {
        GgufType type;
        uint64_t left;
    };
    std::vector<Level> stack;
    auto open_array = [&]() -> Status {
        const uint64_t at = c.pos();
        if (stack.size() >= static_cast<size_t>(kMaxArrayDepth)) {
            return Error(
                ErrorCode::kNestingTooDeep,
                std::string(kGgufPrefix) + field + ": arrays nested deeper than " + std::to_string(kMaxArrayDepth),
                at);
        }
        HURRAY_ASSIGN_OR_RETURN(uint32_t et, c.u32(field + " element type"));
        if (et >= detail::kGgufTypeCount) {
            return invalid(field + ": unknown array element type " + std::to_string(et), at);
        }
        const uint64_t count_at = c.pos();
        HURRAY_ASSIGN_OR_RETURN(uint64_t count, c.u64(field + " count"));
        const auto e = static_cast<GgufType>(et);
        if (count > c.remaining() / min_value_bytes(e)) {
            return Error(ErrorCode::kTruncated,
                         std::string(kGgufPrefix) + field + ": " + std::to_string(count) +
                             " elements cannot fit in the " + std::to_string(c.remaining()) +
                             " bytes left",
                         count_at);
        }
        stack.push_back(Level{e, count});
        return Status::success();
    };
    HURRAY_RETURN_IF_ERROR(open_array());
    while (!stack.empty()) {
        if (stack.back().left == 0) {
            stack.pop_back();
            continue;
        }
        --stack.back().left;
        const GgufType t = stack.back().type;
        if (t == GgufType::kArray) {
            HURRAY_RETURN_IF_ERROR(open_array());
        } else if (t == GgufType::kString) {
            auto str = read_string(c, field);
            if (!str) {
                return str.error();
            }
        } else {
            HURRAY_RETURN_IF_ERROR(c.skip(min_value_bytes(t), field));
        }
    }
    return Status::success();
}

}  // namespace hurray::convert::detail
