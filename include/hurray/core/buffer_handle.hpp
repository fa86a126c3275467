// SPDX-License-Identifier: Apache-2.0
/// @file
/// Buffer handles (docs/spec/buffer-protocol.md): the 16-byte entries of a
/// descriptor's buffer table.
#pragma once

#include "hurray/core/export.hpp"
#include <cstdint>
#include <string_view>

#include "hurray/core/result.hpp"

namespace hurray {

/// Where a buffer resides. 0xF0-0xFE are private device types, carried raw.
enum class DeviceTag : uint8_t {
    kCpu = 0x00,        ///< CPU host memory.
    kCuda = 0x01,       ///< CUDA device memory.
    kRocm = 0x02,       ///< ROCm device memory.
    kMetal = 0x03,      ///< Metal device memory.
    kVulkan = 0x04,     ///< Vulkan device memory.
    kWebGpu = 0x05,     ///< WebGPU device memory.
    kHexagon = 0x06,    ///< Qualcomm Hexagon memory.
    kLevelZero = 0x07,  ///< Intel Level Zero / oneAPI device memory.
    kOpenCl = 0x08,     ///< OpenCL device memory.
};

/// How the producer synchronised the buffer before handing it over.
enum class SyncMode : uint8_t {
    kProducerSynced = 0x00,  ///< Producer waited; consumer may read at once.
    kEvent = 0x01,           ///< Consumer must wait on the producer's event.
    kConsumerStream = 0x02,  ///< Producer ordered work onto the consumer's stream.
};

/// How a buffer is accessible. 0xF0-0xFE are private classes, carried raw.
enum class MemoryClass : uint8_t {
    kStandard = 0x00,    ///< Device-exclusive memory.
    kHostPinned = 0x01,  ///< CPU-accessible, device-mapped.
    kUnified = 0x02,     ///< Hardware-coherent unified memory.
    kPeer = 0x03,        ///< Peer-to-peer device memory.
};

/// The minimum alignment of a non-empty buffer.
inline constexpr uint32_t kMinBufferAlignment = 64;

/// One entry of a descriptor's buffer table (16 bytes on the wire:
/// `byte_size u64 | alignment u32 | device_tag u8 | sync_mode u8 |
/// memory_class u8 | reserved u8`).
///
/// @code
/// hurray::BufferHandle h{.byte_size = 192, .alignment = 64};
/// @endcode
struct HURRAY_CORE_EXPORT BufferHandle {
    uint64_t byte_size = 0;                           ///< Size of the buffer in bytes.
    uint32_t alignment = kMinBufferAlignment;         ///< Guaranteed base alignment (power of two).
    DeviceTag device_tag = DeviceTag::kCpu;           ///< Device holding the buffer.
    SyncMode sync_mode = SyncMode::kProducerSynced;   ///< Producer-side synchronisation.
    MemoryClass memory_class = MemoryClass::kStandard;///< Access class.

    /// Field-wise equality.
    bool operator==(const BufferHandle&) const = default;
};

/// Size of one encoded buffer handle.
inline constexpr uint32_t kBufferHandleSize = 16;

/// Whether a device tag byte is in the private range 0xF0-0xFE.
constexpr bool is_private_device(DeviceTag d) noexcept {
    return static_cast<uint8_t>(d) >= 0xF0 && static_cast<uint8_t>(d) <= 0xFE;
}

/// Whether a memory class byte is in the private range 0xF0-0xFE.
constexpr bool is_private_memory_class(MemoryClass m) noexcept {
    return static_cast<uint8_t>(m) >= 0xF0 && static_cast<uint8_t>(m) <= 0xFE;
}

/// A stable name for a device tag (`"cpu"`, `"cuda"`, `"private"`, `"invalid"`).
HURRAY_CORE_EXPORT std::string_view device_name(DeviceTag d) noexcept;

/// Checks one buffer handle against buffer-protocol.md: alignment a power of
/// two and >= 64 unless the buffer is empty; device tag, sync mode and memory
/// class in their allowed ranges; the (device, memory class) pair valid for
/// the device; a CPU buffer producer-synced. `offset` is the byte offset of
/// the handle, used in the error; `index` its position in the table.
HURRAY_CORE_EXPORT Status check_buffer_handle(const BufferHandle& h, uint32_t index, uint64_t offset = Error::kNoOffset);

}  // namespace hurray
