// SPDX-License-Identifier: Apache-2.0
/// @file
/// Human-readable text for descriptors, for logs, tools and the demo.
#pragma once

#include "hurray/core/export.hpp"
#include <string>
#include <cstdint>
#include <string_view>
#include <span>

#include "hurray/core/tensor_descriptor.hpp"

namespace hurray {

/// A one-line summary: type, shape, layout and the optional sections, e.g.
/// `float32[3, 4] row_major, 1 buffer (48 B)`.
///
/// @code
/// std::puts(hurray::summarize(d).c_str());
/// @endcode
HURRAY_CORE_EXPORT std::string summarize(const TensorDescriptor& d);

/// A multi-line listing of every field of a descriptor: header, layout
/// fields, each buffer handle and each optional section, one per line,
/// each line starting with `indent`.
///
/// @code
/// std::fputs(hurray::describe(d).c_str(), stdout);
/// @endcode
HURRAY_CORE_EXPORT std::string describe(const TensorDescriptor& d, const std::string& indent = "  ");

/// Lower-case hex of `bytes`, two digits a byte, `separator` between bytes.
///
/// @code
/// const uint8_t magic[] = {0x48, 0x52, 0x52, 0x59};
/// std::string a = hurray::hex_bytes(magic);        // "48525259"
/// std::string b = hurray::hex_bytes(magic, " ");   // "48 52 52 59"
/// @endcode
HURRAY_CORE_EXPORT std::string hex_bytes(std::span<const uint8_t> bytes, std::string_view separator = {});

/// The first `max` bytes of `bytes` for a message about what an input is: hex,
/// then as text with bytes outside printable ASCII shown as '.'.
///
/// @code
/// const uint8_t text[] = {'h', 'i', '\n'};
/// std::string s = hurray::leading_bytes(text);  // "68 69 0a (\"hi.\")"
/// @endcode
HURRAY_CORE_EXPORT std::string leading_bytes(std::span<const uint8_t> bytes, size_t max = 8);

}  // namespace hurray
