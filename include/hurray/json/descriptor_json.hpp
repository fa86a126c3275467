// SPDX-License-Identifier: Apache-2.0
/// @file
/// The JSON form of a tensor descriptor, and the same document in CBOR
/// (`hurray::json`). docs/json.md describes every field.
///
/// The form is lossless: `from_json(to_json(d)) == d` for every
/// `TensorDescriptor`, valid or not, and likewise for CBOR. 64-bit integers are
/// exact; floating-point fields keep their bit patterns (non-finite values are
/// written as strings such as `"inf"` or `"nan:0x7ff8000000000001"`); enums are
/// the spec's names where one exists and raw numbers otherwise; byte strings are
/// lowercase hex.
///
/// `from_json` and `from_cbor` check the document's structure only: every field
/// present, of the right JSON type and in the range of its model field, with no
/// unknown fields. They return the descriptor exactly as written; run
/// `hurray::check_descriptor` to learn whether it is a valid descriptor
/// (`hurray::encode` runs it too).
///
/// This header does not expose the JSON library the implementation uses.
#pragma once

#include "hurray/json/export.hpp"
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"

namespace hurray {

/// The deepest nesting of arrays and objects that `from_json` and `from_cbor`
/// accept. A descriptor document needs 5 levels; deeper input is rejected
/// while it is parsed, before it is built in memory.
inline constexpr uint32_t kMaxDocumentDepth = 64;

/// The largest indent `to_json` uses; a larger one is treated as this.
inline constexpr int kMaxJsonIndent = 64;

/// Writes `d` as a JSON document.
///
/// `indent < 0` gives a single line; `indent >= 0` puts every member on its
/// own line, indented by that many spaces per level (at most
/// `kMaxJsonIndent`). Keys appear in the order of the model. Optional sections that are absent are left out.
/// Allocation failure terminates, as elsewhere in libhurray.
///
/// @code
/// auto d = hurray::make_dense(hurray::ElementType::kFloat32, {3, 4});
/// std::string text = hurray::to_json(*d);
/// // {"version_major":1,"version_minor":0,"element_type":"float32","shape":[3,4],...}
/// @endcode
HURRAY_JSON_EXPORT std::string to_json(const TensorDescriptor& d, int indent = -1) noexcept;  // NOLINT(bugprone-exception-escape)

/// Reads a descriptor from the JSON form that `to_json` writes.
///
/// Fails with `ErrorCode::kInvalidDocument` when the text is not JSON (the
/// error's offset is the byte where parsing stopped), nests deeper than
/// `kMaxDocumentDepth`, or does not match the form; the message then names
/// the JSON path of the offending value, e.g.
/// `layout.levels[0].tile_shape[2]: expected an unsigned integer, got a string`.
/// Does not run `check_descriptor`.
///
/// @code
/// auto d = hurray::from_json(text);
/// if (!d) { std::puts(d.error().to_string().c_str()); return; }
/// if (auto ok = hurray::check_descriptor(*d); !ok) { /* structurally fine, but invalid */ }
/// @endcode
HURRAY_JSON_EXPORT Result<TensorDescriptor> from_json(std::string_view text);

/// Writes `d` as CBOR (RFC 8949): the same document as `to_json`, with the
/// same keys and values, in binary form. Allocation failure terminates.
///
/// @code
/// std::vector<uint8_t> bytes = hurray::to_cbor(d);
/// auto back = hurray::from_cbor(bytes);  // *back == d
/// @endcode
HURRAY_JSON_EXPORT std::vector<uint8_t> to_cbor(const TensorDescriptor& d) noexcept;  // NOLINT(bugprone-exception-escape)

/// Reads a descriptor from the CBOR form that `to_cbor` writes. The rules and
/// errors are those of `from_json`; CBOR tags and byte strings are not part
/// of the form and are rejected.
///
/// @code
/// auto d = hurray::from_cbor(bytes);
/// if (!d) { std::puts(d.error().to_string().c_str()); }
/// @endcode
HURRAY_JSON_EXPORT Result<TensorDescriptor> from_cbor(std::span<const uint8_t> bytes);

}  // namespace hurray
