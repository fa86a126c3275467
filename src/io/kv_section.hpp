// SPDX-License-Identifier: Apache-2.0
// Internal: decoding a KV section with one entry set aside (the descriptor
// table), so that the readers neither copy it nor show it as user metadata.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "hurray/io/kv_metadata.hpp"

namespace hurray::detail {

/// `decode_kv_section`, except for the entry whose key is `set_aside` (none when
/// empty): it is checked as any other entry (inside the section, not duplicated,
/// its value well formed) but not put in the result. When its value is of type
/// bytes, `*set_aside_value` (when not null) is set to its payload, a view of
/// `bytes` (nothing is copied); it is left empty otherwise.
Result<KvMetadata> decode_kv_section_except(std::span<const uint8_t> bytes, uint64_t base,
                                            const KvDecodeOptions& options, std::string_view set_aside,
                                            std::span<const uint8_t>* set_aside_value);

}  // namespace hurray::detail
