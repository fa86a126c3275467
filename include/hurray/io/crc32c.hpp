// SPDX-License-Identifier: Apache-2.0
/// @file
/// CRC-32C (Castagnoli), the checksum of the HRRYFILE index section
/// (file-format.md § Trailer). Computed with ISA-L's hardware-accelerated
/// routine.
#pragma once

#include "hurray/io/export.hpp"
#include <cstdint>
#include <span>

namespace hurray {

/// The standard CRC-32C of `bytes` (reflected, initial value and final XOR
/// 0xFFFFFFFF). The check value of the ASCII bytes "123456789" is 0xE3069283.
///
/// @code
/// uint32_t crc = hurray::crc32c(index_bytes);
/// @endcode
HURRAY_IO_EXPORT uint32_t crc32c(std::span<const uint8_t> bytes) noexcept;

/// Continues a CRC-32C: `crc32c_extend(crc32c(a), b) == crc32c(a followed by b)`.
/// Start with `crc32c_extend(0, first_piece)`.
HURRAY_IO_EXPORT uint32_t crc32c_extend(uint32_t crc, std::span<const uint8_t> bytes) noexcept;

}  // namespace hurray
