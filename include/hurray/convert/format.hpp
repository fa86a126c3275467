// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file
/// The file formats `hurray::convert` reads and writes, and how it tells them apart from
/// their first bytes or from a file name.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string_view>

#include "hurray/convert/export.hpp"
#include "hurray/core/result.hpp"

namespace hurray::convert {

/// A tensor file format.
enum class Format : uint8_t {
    kUnknown = 0,      ///< Not recognised.
    kHrryFile = 1,     ///< Hurray container (`HRRYFILE` magic).
    kStream = 2,       ///< Hurray streaming format (descriptor + data, tensor after tensor).
    kSafeTensors = 3,  ///< SafeTensors: u64 header length, JSON header, data.
    kGguf = 4,         ///< GGUF v2 / v3 (`GGUF` magic), llama.cpp's format.
    kNpy = 5,          ///< One NumPy array (`\x93NUMPY` magic).
    kNpz = 6,          ///< A zip archive of .npy members (`numpy.savez`).
};

/// How many leading bytes detect_format() looks at (fewer is fine for short inputs).
inline constexpr size_t kDetectHeadBytes = 64;

/// The format's lower-case name: "hrryfile", "stream", "safetensors", "gguf", "npy",
/// "npz" or "unknown" (the names `hurray convert --to` accepts).
HURRAY_CONVERT_EXPORT std::string_view format_name(Format format) noexcept;

/// The format named `name` (format_name()'s names; "hrry" and "file" too). Fails with
/// kInvalidArgument naming the accepted names.
HURRAY_CONVERT_EXPORT Result<Format> parse_format_name(std::string_view name);

/// Tells a format from the first bytes of an input (`head`, up to kDetectHeadBytes) and,
/// when known, its total size: the magics of HRRYFILE, GGUF, .npy and zip (.npz); a
/// SafeTensors header (8-byte little-endian length, then `{`, the length within the
/// total size); kUnknown for anything else (a caller that reads streams treats that as
/// a stream: a stream has no magic).
/// @code
/// std::array<uint8_t, hurray::convert::kDetectHeadBytes> head{};  // read from the file
/// auto f = hurray::convert::detect_format(head, file_size);
/// @endcode
HURRAY_CONVERT_EXPORT Format detect_format(std::span<const uint8_t> head,
                                           std::optional<uint64_t> total_size) noexcept;

/// The format an output file name asks for, from its extension: .hrry -> kHrryFile,
/// .hrrys -> kStream, .safetensors -> kSafeTensors, .gguf -> kGguf, .npy -> kNpy,
/// .npz -> kNpz; nullopt for anything else (case-insensitive).
HURRAY_CONVERT_EXPORT std::optional<Format> format_from_extension(
    const std::filesystem::path& path);

}  // namespace hurray::convert

namespace hurray {
/// The former name of `hurray::convert` (before the namespace took the
/// target's name), kept for one release so that code written for it
/// compiles. It will be removed: write `hurray::convert`.
namespace formats = convert;
}  // namespace hurray
