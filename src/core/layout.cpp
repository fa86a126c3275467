// SPDX-License-Identifier: Apache-2.0
#include "hurray/core/layout.hpp"

namespace hurray {

uint8_t layout_tag(const LayoutDescriptor& layout) noexcept {
    if (const auto* e = std::get_if<ExtensionLayout>(&layout)) {
        return e->tag;
    }
    static constexpr LayoutTag kTags[] = {
        LayoutTag::kRowMajor, LayoutTag::kColumnMajor, LayoutTag::kStrided, LayoutTag::kTiled,
        LayoutTag::kMorton,   LayoutTag::kCoo,         LayoutTag::kCsr,     LayoutTag::kCsc,
        LayoutTag::kCsf,      LayoutTag::kBlockPaged,  LayoutTag::kComposite, LayoutTag::kHilbert,
    };
    return static_cast<uint8_t>(kTags[layout.index()]);
}

LayoutKind layout_kind(const LayoutDescriptor& layout) noexcept {
    switch (static_cast<LayoutTag>(layout_tag(layout))) {
        case LayoutTag::kRowMajor:
        case LayoutTag::kColumnMajor:
        case LayoutTag::kStrided:
        case LayoutTag::kTiled:
        case LayoutTag::kMorton:
        case LayoutTag::kHilbert: return LayoutKind::kDense;
        case LayoutTag::kCoo:
        case LayoutTag::kCsr:
        case LayoutTag::kCsc:
        case LayoutTag::kCsf: return LayoutKind::kSparse;
        case LayoutTag::kBlockPaged: return LayoutKind::kIndirect;
        case LayoutTag::kComposite: return LayoutKind::kVirtual;
    }
    return LayoutKind::kExtension;
}

std::string_view layout_name(uint8_t tag) noexcept {
    switch (tag) {
        case 0x01: return "row_major";
        case 0x02: return "column_major";
        case 0x03: return "strided";
        case 0x04: return "tiled";
        case 0x05: return "morton";
        case 0x06: return "coo";
        case 0x07: return "csr";
        case 0x08: return "csc";
        case 0x09: return "csf";
        case 0x0A: return "block_paged";
        case 0x0B: return "composite";
        case 0x40: return "hilbert";
        default: break;
    }
    return (tag >= 0xF0 && tag <= 0xFE) ? "extension" : "";
}

uint32_t layout_buffer_count(const LayoutDescriptor& layout, uint32_t rank) noexcept {
    switch (static_cast<LayoutTag>(layout_tag(layout))) {
        case LayoutTag::kCoo: return 2;
        case LayoutTag::kCsr:
        case LayoutTag::kCsc:
        case LayoutTag::kBlockPaged: return 3;
        case LayoutTag::kCsf: return 2 * rank + 1;
        case LayoutTag::kComposite: return 0;
        default: return 1;
    }
}

}  // namespace hurray
