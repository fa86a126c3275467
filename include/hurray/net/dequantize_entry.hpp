// SPDX-License-Identifier: Apache-2.0
/// @file
/// The private layout entry by which a client asks a tensor server for a
/// quantized tensor's values, dequantized (docs/server.md, decision 10).
///
/// interchange.md lets a layout list carry extension entries (tags 0xF0-0xFE
/// with opaque `ext_metadata`) and tells every reader to skip one it does not
/// understand. This library gives one of them a meaning: tag 0xF0 with the
/// metadata `"hurray.dequantize"` followed by the element type tag of the
/// values asked for (float32, the type `hurray::dequantize` produces). A
/// `hurray serve` server advertises it in `SERVER_HELLO`; asked for it with
/// `ALLOW_TRANSCODE` set, it answers a quantized tensor with a dense
/// row-major float32 tensor of the same shape whose elements are the real
/// values of the stored ones (quantization/*.md), and treats an unquantized
/// tensor as if the entry were not in the list. Any other server skips it.
#pragma once

#include <cstdint>
#include <string_view>

#include "hurray/core/element_type.hpp"
#include "hurray/io/transport_message.hpp"

namespace hurray::net {

/// The layout tag of the dequantize entry (the first implementation-private tag).
inline constexpr uint8_t kDequantizeLayoutTag = 0xF0;

/// The text that begins the dequantize entry's `ext_metadata`.
inline constexpr std::string_view kDequantizeMetadataPrefix = "hurray.dequantize";

/// The dequantize entry: tag 0xF0, metadata `"hurray.dequantize"` then the
/// float32 element type tag.
[[nodiscard]] inline LayoutEntry dequantize_layout_entry() {
    LayoutEntry e{.tag = kDequantizeLayoutTag, .ext_metadata = {}};
    e.ext_metadata.assign(kDequantizeMetadataPrefix.begin(), kDequantizeMetadataPrefix.end());
    e.ext_metadata.push_back(static_cast<uint8_t>(ElementType::kFloat32));
    return e;
}

/// Whether `e` is the dequantize entry, byte for byte.
[[nodiscard]] inline bool is_dequantize_layout_entry(const LayoutEntry& e) { return e == dequantize_layout_entry(); }

}  // namespace hurray::net
