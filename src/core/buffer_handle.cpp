// SPDX-License-Identifier: Apache-2.0
#include "hurray/core/buffer_handle.hpp"

#include <string>

#include "hurray/core/checked_math.hpp"
#include "hurray/core/text.hpp"

namespace hurray {
namespace {

// Per-device validity of memory classes (buffer-protocol.md § Per-Device Validity),
// as a bit set over STANDARD(0), HOST_PINNED(1), UNIFIED(2), PEER(3).
uint8_t allowed_classes(uint8_t device) noexcept {
    static constexpr uint8_t kAllowed[] = {
        0b0111,  // 0x00 CPU: no PEER
        0b1111,  // 0x01 CUDA
        0b1111,  // 0x02 ROCm
        0b0111,  // 0x03 Metal: no PEER
        0b1111,  // 0x04 Vulkan
        0b0001,  // 0x05 WebGPU: STANDARD only
        0b0111,  // 0x06 Hexagon: no PEER
        0b1111,  // 0x07 Level Zero
        0b0111,  // 0x08 OpenCL: no PEER
    };
    return device < sizeof kAllowed ? kAllowed[device] : 0;
}

}  // namespace

std::string_view device_name(DeviceTag d) noexcept {
    switch (d) {
        case DeviceTag::kCpu: return "cpu";
        case DeviceTag::kCuda: return "cuda";
        case DeviceTag::kRocm: return "rocm";
        case DeviceTag::kMetal: return "metal";
        case DeviceTag::kVulkan: return "vulkan";
        case DeviceTag::kWebGpu: return "webgpu";
        case DeviceTag::kHexagon: return "hexagon";
        case DeviceTag::kLevelZero: return "level_zero";
        case DeviceTag::kOpenCl: return "opencl";
    }
    return is_private_device(d) ? "private" : "invalid";
}

Status check_buffer_handle(const BufferHandle& h, uint32_t index, uint64_t offset) {
    // Built only when a check fails: this runs for every handle decoded.
    auto name = [index] { return "buffer[" + std::to_string(index) + "]."; };
    auto at = [&](uint64_t field_offset) {
        return offset == Error::kNoOffset ? Error::kNoOffset : offset + field_offset;
    };
    if (!is_pow2(h.alignment)) {
        return Error(ErrorCode::kInvalidBufferHandle,
                     name() + "alignment: " + std::to_string(h.alignment) + " is not a power of two",
                     at(8));
    }
    if (h.byte_size > 0 && h.alignment < kMinBufferAlignment) {
        return Error(ErrorCode::kInvalidBufferHandle,
                     name() + "alignment: " + std::to_string(h.alignment) +
                         " is below the 64-byte minimum for a non-empty buffer",
                     at(8));
    }
    const auto dev = static_cast<uint8_t>(h.device_tag);
    const bool private_dev = is_private_device(h.device_tag);
    if (!private_dev && dev > 0x08) {
        return Error(ErrorCode::kInvalidBufferHandle,
                     name() + "device_tag: " + hex(dev) + " is reserved or invalid", at(12));
    }
    const auto sync = static_cast<uint8_t>(h.sync_mode);
    if (sync > 0x02) {
        return Error(ErrorCode::kInvalidBufferHandle,
                     name() + "sync_mode: " + hex(sync) + " is reserved or invalid", at(13));
    }
    if (h.device_tag == DeviceTag::kCpu && h.sync_mode != SyncMode::kProducerSynced) {
        return Error(ErrorCode::kInvalidBufferHandle,
                     name() + "sync_mode: a CPU buffer must be producer-synced (0x00), got " + hex(sync),
                     at(13));
    }
    const auto cls = static_cast<uint8_t>(h.memory_class);
    const bool private_cls = is_private_memory_class(h.memory_class);
    if (!private_cls && cls > 0x03) {
        return Error(ErrorCode::kInvalidBufferHandle,
                     name() + "memory_class: " + hex(cls) + " is reserved or invalid", at(14));
    }
    if (private_dev) {
        if (!private_cls && h.memory_class != MemoryClass::kStandard) {
            return Error(ErrorCode::kInvalidBufferHandle,
                         name() + "memory_class: a private device takes STANDARD or a private class, got " +
                             hex(cls),
                         at(14));
        }
    } else if (private_cls) {
        return Error(ErrorCode::kInvalidBufferHandle,
                     name() + "memory_class: private class " + hex(cls) +
                         " requires a private device_tag, got " + hex(dev),
                     at(14));
    } else if ((allowed_classes(dev) & (1U << cls)) == 0) {
        return Error(ErrorCode::kInvalidBufferHandle,
                     name() + "memory_class: " + hex(cls) + " is not valid for device " +
                         std::string(device_name(h.device_tag)),
                     at(14));
    }
    return Status::success();
}

}  // namespace hurray
