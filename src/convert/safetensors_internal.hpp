// SPDX-License-Identifier: Apache-2.0
// Internal: the SafeTensors header model shared by the reader, the writer and the tests.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hurray/io/read_only_file.hpp"
#include "hurray/convert/tensor_source.hpp"
#include "hurray/core/element_type.hpp"
#include "hurray/core/result.hpp"
#include "hurray/core/shape.hpp"
#include "hurray/io/kv_metadata.hpp"

namespace hurray::convert::detail {

/// The `__metadata__` key of a SafeTensors header.
inline constexpr std::string_view kSafeTensorsMetadataKey = "__metadata__";

/// One validated tensor entry of a SafeTensors header.
struct SafeTensorsEntry {
    std::string name;            ///< The tensor's key in the header.
    ElementType type{};          ///< Its element type.
    Shape shape;                 ///< Its dimensions (empty for a scalar).
    uint64_t element_count = 0;  ///< Product of the dimensions.
    uint64_t begin = 0;          ///< data_offsets[0], relative to the data area.
    uint64_t end = 0;            ///< data_offsets[1], relative to the data area.
    uint64_t header_offset = 0;  ///< File offset of the entry's key (8 + header position).
};

/// A parsed and validated header.
struct SafeTensorsHeader {
    std::vector<SafeTensorsEntry> tensors;  ///< In header order.
    KvMetadata kv;                          ///< `__metadata__`, in header order.
};

/// Parses the JSON header `text` (the bytes after the 8-byte length; the data area that
/// follows it is `data_size` bytes long) and validates every entry: JSON types, dtype,
/// shape product * element size == end - begin (overflow-checked), spans inside the data
/// area, no two non-empty spans overlapping, `__metadata__` a string -> string object.
/// Errors carry the file offset of the offending key (8 + position in `text`).
Result<SafeTensorsHeader> parse_safetensors_header(std::string_view text, uint64_t data_size);

/// Opens the SafeTensors bytes of `file` (a mapped file, or bytes in memory for the fuzz
/// target and tests); open_safetensors() is this on a mapped file. Errors carry no path.
Result<std::unique_ptr<TensorSource>> open_safetensors_file(ReadOnlyFile file);

/// The text form a typed KV value takes in `__metadata__` (docs/convert.md): strings as
/// they are, integers in decimal, float64 in shortest round-trip form, bools true/false,
/// bytes in lower-case hex, arrays as JSON text. Private-tag values are refused.
Result<std::string> kv_text_form(const KvValue& value);

}  // namespace hurray::convert::detail
