// SPDX-License-Identifier: Apache-2.0
/// @file
/// Shard section (docs/spec/metadata.md § Shard Section, ADR-004).
#pragma once

#include "hurray/core/export.hpp"
#include <cstdint>
#include <vector>

namespace hurray {

/// Where a tensor sits inside a larger logical parent tensor. Both vectors
/// have the tensor's rank, and `shard_offset[k] + shape[k] <= parent_shape[k]`.
///
/// @code
/// hurray::ShardDescriptor s{.parent_shape = {8, 8}, .shard_offset = {0, 4}};
/// @endcode
struct HURRAY_CORE_EXPORT ShardDescriptor {
    std::vector<uint64_t> parent_shape{};  ///< Shape of the parent tensor.
    std::vector<uint64_t> shard_offset{};  ///< Start of this shard in the parent, per dimension.
    bool operator==(const ShardDescriptor&) const = default;
};

}  // namespace hurray
