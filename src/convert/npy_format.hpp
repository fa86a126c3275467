// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file
/// Internal: the NumPy .npy format — the magic, the header (a Python dict literal with
/// 'descr', 'fortran_order' and 'shape'), the dtypes and their Hurray element types.
///
/// File layout: `\x93NUMPY`, major and minor version bytes, the header length (2 bytes
/// little-endian in version 1.0, 4 bytes in 2.0 and 3.0), the header (ASCII; UTF-8 in
/// 3.0) padded with spaces and ended by '\n' so that the data starts at a multiple of 64
/// (16 in old writers), then the array's bytes.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hurray/core/element_type.hpp"
#include "hurray/core/result.hpp"
#include "hurray/core/shape.hpp"

namespace hurray::convert::detail {

/// The six magic bytes of a .npy file.
inline constexpr uint8_t kNpyMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/// Bytes before the header in version 1.0 (magic, version, 2-byte length); 2.0 and 3.0
/// have 12.
inline constexpr uint64_t kNpyPrefixV1 = 10;

/// The largest header this reader accepts (NumPy itself refuses more than 10,000 bytes
/// by default; shapes of high rank fit easily).
inline constexpr uint64_t kNpyMaxHeader = uint64_t{1} << 20;

/// A NumPy dtype this library converts.
struct NpyDtype {
    ElementType type = ElementType::kFloat32;  ///< The Hurray element type.
    uint32_t item_size = 0;                    ///< NumPy's bytes per element.
    bool big_endian = false;                   ///< Stored big-endian ('>'): swapped when read.
    uint32_t swap_unit = 1;  ///< Bytes swapped together (item_size; half of it for complex).
};

/// A parsed .npy header.
struct NpyHeader {
    uint8_t major = 1;           ///< Format version.
    uint8_t minor = 0;           ///< Format version.
    std::string descr;           ///< The dtype as written ('<f4').
    NpyDtype dtype;              ///< Its meaning.
    bool fortran_order = false;  ///< Column-major data.
    Shape shape;                 ///< The array's shape.
    uint64_t data_offset = 0;    ///< Where the data starts (prefix + header).
    uint64_t data_bytes = 0;     ///< count * item_size.
};

/// From the first bytes of a .npy (at least 12, fewer for a short input): the total size
/// of the prefix and header, i.e. where the data starts. Errors name `what` and the field
/// (magic, version, header_len) and its offset.
Result<uint64_t> npy_data_offset(std::span<const uint8_t> prefix, const std::string& what);

/// Parses the prefix and header held in `bytes` (npy_data_offset() bytes). `what` names
/// the array in errors ("x.npy", "member 'w.npy'"). Refuses with kUnsupported the dtypes
/// without a Hurray equivalent (object, strings, structured, datetime, long double),
/// naming the array and the dtype; with kInvalidDocument a malformed dict (naming the key
/// and the byte offset).
Result<NpyHeader> parse_npy_header(std::span<const uint8_t> bytes, const std::string& what);

/// The dtype `descr` ('<f4', '|b1', '>i8', ...).
Result<NpyDtype> parse_npy_descr(std::string_view descr, const std::string& what);

/// The little-endian descr of `type` ('<f4'), kUnsupported for types NumPy lacks.
Result<std::string> npy_descr_of(ElementType type, const std::string& what);

/// The prefix and header of an array: version 1.0 when the header fits in 65,535
/// bytes, else 2.0; padded to a multiple of 64 bytes.
std::vector<uint8_t> format_npy_header(const std::string& descr, bool fortran_order,
                                       const Shape& shape);

}  // namespace hurray::convert::detail
