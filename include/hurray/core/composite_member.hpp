// SPDX-License-Identifier: Apache-2.0
/// @file
/// Composite member section (docs/spec/metadata.md § Composite Member Section):
/// carried by members of an overlay composite.
#pragma once

#include "hurray/core/export.hpp"
#include <cstdint>

namespace hurray {

/// Role of an overlay member.
enum class MemberRole : uint8_t {
    kCorrection = 0x00,  ///< A correction applied over the base.
    kBase = 0x01,        ///< The base spanning the whole index space.
};

/// Size of the composite member section.
inline constexpr uint32_t kCompositeMemberSize = 16;

/// The composite member section: a role and 15 reserved bytes.
struct HURRAY_CORE_EXPORT CompositeMember {
    MemberRole role = MemberRole::kBase;  ///< Base or correction.
    bool operator==(const CompositeMember&) const = default;
};

}  // namespace hurray
