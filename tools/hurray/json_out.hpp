#pragma once
/// @file
/// Shared output helpers of the `hurray` commands: the JSON vocabulary of descriptors,
/// tensors and KV metadata (stable: tests and scripts parse it), and the text forms of
/// shapes, byte counts and KV values.
///
/// JSON forms:
/// - a descriptor (descriptor_json): the conformance manifest's vocabulary:
///   `version_major`, `version_minor`, `element_type_tag`, `element_type`, `shape`,
///   `byte_offset`, `layout_tag`, `buffer_byte_sizes`, `has_quantization`, `has_shard`.
/// - a listed tensor (tensor_json): `name`, then the descriptor fields above (without the
///   versions), then `descriptor_offset`, `descriptor_length`, `data_offset`, `data_bytes`.
///   A dynamic dimension is the exact integer 18446744073709551615 (UINT64_MAX).
/// - a KV entry (kv_entry_json): `{"key", "kind", "value"}` with kind one of string,
///   int64, uint64, float64, bool, bytes, array (private for a private tag). Values:
///   integers exact; float64 a number, or the strings "nan", "inf", "-inf"; bytes a
///   lowercase hex string; an array `{"element_kind": <scalar kind>, "values": [...]}`
///   whose values follow the same rules; a private value `{"tag": u8, "payload": hex}`.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "hurray/core/tensor_descriptor.hpp"
#include "hurray/io/kv_metadata.hpp"

namespace hurray::cli {

/// Where a tensor lies in its file or stream (absolute byte offsets).
struct TensorPlacement {
    uint64_t descriptor_offset = 0;  ///< where its descriptor starts
    uint32_t descriptor_length = 0;  ///< its descriptor's length
    uint64_t data_offset = 0;        ///< where its first data byte is
};

/// The descriptor in the conformance manifest's vocabulary (see the file comment).
nlohmann::ordered_json descriptor_json(const TensorDescriptor& d);

/// One tensor of `ls --json` (see the file comment).
nlohmann::ordered_json tensor_json(const std::string& name, const TensorDescriptor& d,
                                   const TensorPlacement& where);

/// One KV entry (see the file comment).
nlohmann::ordered_json kv_entry_json(const KvEntry& entry);

/// Every KV entry, in file order.
nlohmann::ordered_json kv_json(const KvMetadata& kv);

/// The sum of the buffer sizes (saturating at UINT64_MAX).
uint64_t data_bytes(const TensorDescriptor& d) noexcept;

/// `[4096, 4096]`; a dynamic dimension prints as `?`; a scalar as `[]`.
std::string shape_text(std::span<const uint64_t> shape);

/// The element type's spec name, or `tag 0xNN` for an unnamed tag.
std::string element_type_text(const TensorDescriptor& d);

/// The layout's spec name, or `tag 0xNN`.
std::string layout_text(const TensorDescriptor& d);

/// The quantization scheme's spec name, or `-` when the tensor is not quantized.
std::string quantization_text(const TensorDescriptor& d);

/// `1234 B`, `1.5 KiB`, `3.2 MiB`, ...
std::string bytes_text(uint64_t n);

/// The value in text: strings quoted (JSON escapes), arrays in brackets (long arrays
/// abbreviated after `max_items` elements), bytes in hex.
std::string kv_value_text(const KvValue& v, size_t max_items = 16);

/// `s` with control characters shown as `\xNN` (names and keys are printed raw otherwise).
std::string printable(std::string_view s);

}  // namespace hurray::cli
