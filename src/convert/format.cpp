// SPDX-License-Identifier: Apache-2.0
#include "hurray/convert/format.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <string>

#include "hurray/core/byte_io.hpp"

namespace hurray::convert {

std::string_view format_name(Format format) noexcept {
    switch (format) {
        case Format::kHrryFile:
            return "hrryfile";
        case Format::kStream:
            return "stream";
        case Format::kSafeTensors:
            return "safetensors";
        case Format::kGguf:
            return "gguf";
        case Format::kNpy:
            return "npy";
        case Format::kNpz:
            return "npz";
        case Format::kUnknown:
            break;
    }
    return "unknown";
}

Result<Format> parse_format_name(std::string_view name) {
    static constexpr std::array kAll = {Format::kHrryFile, Format::kStream, Format::kSafeTensors,
                                        Format::kGguf,     Format::kNpy,    Format::kNpz};
    if (name == "hrry" || name == "file") {
        return Format::kHrryFile;
    }
    for (Format f : kAll) {
        if (format_name(f) == name) {
            return f;
        }
    }
    return Error(ErrorCode::kInvalidArgument,
                 "format: '" + std::string(name) +
                     "' is not one of hrryfile (hrry), stream, safetensors, gguf, npy, npz");
}

namespace {

bool starts_with(std::span<const uint8_t> head, std::string_view magic) noexcept {
    return head.size() >= magic.size() && std::memcmp(head.data(), magic.data(), magic.size()) == 0;
}

}  // namespace

Format detect_format(std::span<const uint8_t> head, std::optional<uint64_t> total_size) noexcept {
    if (starts_with(head, "HRRYFILE")) {
        return Format::kHrryFile;
    }
    if (starts_with(head, "GGUF")) {
        return Format::kGguf;
    }
    if (starts_with(head, "\x93NUMPY")) {
        return Format::kNpy;
    }
    if (starts_with(head, std::string_view("PK\x03\x04", 4)) ||
        starts_with(head, std::string_view("PK\x05\x06", 4))) {
        return Format::kNpz;
    }
    // SafeTensors: an 8-byte little-endian header length, then the JSON header, which
    // starts with '{' (the format allows leading spaces only as trailing padding).
    if (head.size() >= 9 && head[8] == '{') {
        const uint64_t header_len = hurray::ByteCursor(head).u64();
        const bool fits = total_size
                              ? header_len <= *total_size - std::min<uint64_t>(*total_size, 8)
                              : header_len < (uint64_t{1} << 32);
        if (header_len >= 2 && fits) {
            return Format::kSafeTensors;
        }
    }
    return Format::kUnknown;
}

std::optional<Format> format_from_extension(const std::filesystem::path& path) {
    std::string ext = path.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (ext == ".hrry") {
        return Format::kHrryFile;
    }
    if (ext == ".hrrys") {
        return Format::kStream;
    }
    if (ext == ".safetensors") {
        return Format::kSafeTensors;
    }
    if (ext == ".gguf") {
        return Format::kGguf;
    }
    if (ext == ".npy") {
        return Format::kNpy;
    }
    if (ext == ".npz") {
        return Format::kNpz;
    }
    return std::nullopt;
}

}  // namespace hurray::convert
