// SPDX-License-Identifier: Apache-2.0
// Buffer handles (buffer-protocol.md § Buffer Handle, § Device Tags, § Memory
// Class, § Stream and Event Synchronisation; SPEC-NOTES 1, 3, 4), checked one
// handle at a time with check_buffer_handle.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "hurray/core/buffer_handle.hpp"

namespace {

using hurray::BufferHandle;
using hurray::DeviceTag;
using hurray::Error;
using hurray::ErrorCode;
using hurray::MemoryClass;
using hurray::SyncMode;

constexpr uint64_t kAt = 100;  // where the handle is said to start

BufferHandle handle(uint64_t size, uint32_t alignment, uint8_t device, uint8_t sync = 0, uint8_t cls = 0) {
    BufferHandle h;
    h.byte_size = size;
    h.alignment = alignment;
    h.device_tag = static_cast<DeviceTag>(device);
    h.sync_mode = static_cast<SyncMode>(sync);
    h.memory_class = static_cast<MemoryClass>(cls);
    return h;
}

::testing::AssertionResult RejectedAt(const hurray::Status& s, uint64_t offset) {
    if (s.ok()) {
        return ::testing::AssertionFailure() << "accepted";
    }
    if (s.error().code() != ErrorCode::kInvalidBufferHandle || s.error().offset() != offset) {
        return ::testing::AssertionFailure() << s.error().to_string() << " (expected byte " << offset << ")";
    }
    return ::testing::AssertionSuccess();
}

// buffer-protocol.md § Buffer Handle: the wire size and the 64-byte minimum.
TEST(BufferHandle, ConstantsAndDefaults) {
    EXPECT_EQ(hurray::kBufferHandleSize, 16U);
    EXPECT_EQ(hurray::kMinBufferAlignment, 64U);
    const BufferHandle h;
    EXPECT_EQ(h.byte_size, 0U);
    EXPECT_EQ(h.alignment, 64U);
    EXPECT_EQ(h.device_tag, DeviceTag::kCpu);
    EXPECT_EQ(h.sync_mode, SyncMode::kProducerSynced);
    EXPECT_EQ(h.memory_class, MemoryClass::kStandard);
    EXPECT_TRUE(hurray::check_buffer_handle(h, 0).ok());
    EXPECT_TRUE(hurray::check_buffer_handle(handle(1 << 20, 64, 0), 0).ok());
}

// Field-wise equality.
TEST(BufferHandle, EqualityComparesEveryField) {
    const BufferHandle a = handle(64, 64, 1, 1, 2);
    EXPECT_EQ(a, handle(64, 64, 1, 1, 2));
    EXPECT_NE(a, handle(65, 64, 1, 1, 2));
    EXPECT_NE(a, handle(64, 128, 1, 1, 2));
    EXPECT_NE(a, handle(64, 64, 2, 1, 2));
    EXPECT_NE(a, handle(64, 64, 1, 2, 2));
    EXPECT_NE(a, handle(64, 64, 1, 1, 1));
}

// buffer-protocol.md § Alignment: a power of two, at least 64 for a
// non-empty buffer (reported at alignment, +8).
TEST(BufferHandle, NonEmptyBufferNeedsAPowerOfTwoOfAtLeast64) {
    for (uint32_t a : {64U, 128U, 4096U, 1U << 31}) {
        EXPECT_TRUE(hurray::check_buffer_handle(handle(8, a, 0), 0, kAt).ok()) << a;
    }
    for (uint32_t a : {0U, 1U, 2U, 32U, 63U, 65U, 96U, 0xFFFFFFFFU}) {
        EXPECT_TRUE(RejectedAt(hurray::check_buffer_handle(handle(8, a, 0), 0, kAt), kAt + 8)) << a;
    }
}

// buffer-protocol.md § Empty Buffers: any power of two (1 included) for an empty buffer.
TEST(BufferHandle, EmptyBufferAcceptsAnyPowerOfTwo) {
    for (uint32_t a : {1U, 2U, 4U, 32U, 64U, 1U << 31}) {
        EXPECT_TRUE(hurray::check_buffer_handle(handle(0, a, 0), 0, kAt).ok()) << a;
    }
    for (uint32_t a : {0U, 3U, 48U}) {
        EXPECT_TRUE(RejectedAt(hurray::check_buffer_handle(handle(0, a, 0), 0, kAt), kAt + 8)) << a;
    }
}

// buffer-protocol.md § Device Tags: 0x00-0x08 named, 0xF0-0xFE private, the rest rejected (+12).
TEST(BufferHandle, DeviceTagRanges) {
    for (int dev = 0; dev < 256; ++dev) {
        const bool valid = dev <= 0x08 || (dev >= 0xF0 && dev <= 0xFE);
        auto s = hurray::check_buffer_handle(handle(64, 64, static_cast<uint8_t>(dev)), 0, kAt);
        if (valid) {
            EXPECT_TRUE(s.ok()) << dev << ": " << s.error().to_string();
        } else {
            EXPECT_TRUE(RejectedAt(s, kAt + 12)) << dev;
        }
    }
}

// buffer-protocol.md § sync_mode Values: 0x00-0x02 defined, 0x03-0xFF rejected (+13);
// § Producer Requirement, SPEC-NOTES 4: a CPU buffer MUST be producer-synced.
TEST(BufferHandle, SyncModeRangesAndCpuMustBeProducerSynced) {
    for (int sync = 0; sync < 256; ++sync) {
        auto cuda = hurray::check_buffer_handle(handle(64, 64, 0x01, static_cast<uint8_t>(sync)), 0, kAt);
        auto cpu = hurray::check_buffer_handle(handle(64, 64, 0x00, static_cast<uint8_t>(sync)), 0, kAt);
        if (sync <= 0x02) {
            EXPECT_TRUE(cuda.ok()) << sync;
        } else {
            EXPECT_TRUE(RejectedAt(cuda, kAt + 13)) << sync;
        }
        if (sync == 0) {
            EXPECT_TRUE(cpu.ok());
        } else {
            EXPECT_TRUE(RejectedAt(cpu, kAt + 13)) << sync;
        }
    }
    // Private devices may use any defined mode.
    EXPECT_TRUE(hurray::check_buffer_handle(handle(64, 64, 0xF0, 0x01), 0).ok());
}

// buffer-protocol.md § Per-Device Validity: the (device, memory class) table.
TEST(BufferHandle, MemoryClassValidityPerDevice) {
    // Columns: STANDARD, HOST_PINNED, UNIFIED, PEER.
    const bool kValid[9][4] = {
        {true, true, true, false},   // CPU
        {true, true, true, true},    // CUDA
        {true, true, true, true},    // ROCm
        {true, true, true, false},   // Metal
        {true, true, true, true},    // Vulkan
        {true, false, false, false}, // WebGPU
        {true, true, true, false},   // Hexagon
        {true, true, true, true},    // Level Zero
        {true, true, true, false},   // OpenCL
    };
    for (uint8_t dev = 0; dev <= 0x08; ++dev) {
        for (uint8_t cls = 0; cls <= 0x03; ++cls) {
            auto s = hurray::check_buffer_handle(handle(64, 64, dev, 0, cls), 0, kAt);
            if (kValid[dev][cls]) {
                EXPECT_TRUE(s.ok()) << int{dev} << "/" << int{cls} << ": " << s.error().to_string();
            } else {
                EXPECT_TRUE(RejectedAt(s, kAt + 14)) << int{dev} << "/" << int{cls};
            }
        }
    }
}

// buffer-protocol.md § Memory Class: 0x04-0xEF reserved and 0xFF invalid, on every device (+14).
TEST(BufferHandle, ReservedAndInvalidMemoryClassesAreRejected) {
    for (int cls = 0x04; cls < 256; ++cls) {
        if (cls >= 0xF0 && cls <= 0xFE) {
            continue;
        }
        for (uint8_t dev : {0x00, 0x01, 0xF0}) {
            auto s = hurray::check_buffer_handle(handle(64, 64, dev, 0, static_cast<uint8_t>(cls)), 0, kAt);
            EXPECT_TRUE(RejectedAt(s, kAt + 14)) << int{dev} << "/" << cls;
        }
    }
}

// buffer-protocol.md § Memory Class and § Per-Device Validity: private classes
// (0xF0-0xFE) only with a private device; a private device takes STANDARD or a
// private class.
TEST(BufferHandle, PrivateMemoryClassesNeedAPrivateDevice) {
    for (uint8_t cls : {0xF0, 0xF5, 0xFE}) {
        for (uint8_t dev = 0; dev <= 0x08; ++dev) {
            EXPECT_TRUE(RejectedAt(hurray::check_buffer_handle(handle(64, 64, dev, 0, cls), 0, kAt), kAt + 14))
                << int{dev} << "/" << int{cls};
        }
        EXPECT_TRUE(hurray::check_buffer_handle(handle(64, 64, 0xF0, 0, cls), 0).ok()) << int{cls};
        EXPECT_TRUE(hurray::check_buffer_handle(handle(64, 64, 0xFE, 0, cls), 0).ok()) << int{cls};
    }
    EXPECT_TRUE(hurray::check_buffer_handle(handle(64, 64, 0xF0, 0, 0x00), 0).ok());
    for (uint8_t cls : {0x01, 0x02, 0x03}) {
        EXPECT_TRUE(RejectedAt(hurray::check_buffer_handle(handle(64, 64, 0xF0, 0, cls), 0, kAt), kAt + 14))
            << int{cls};
    }
}

// Without a handle offset the error carries none; the message names the buffer index.
TEST(BufferHandle, ErrorsNameTheIndexAndCarryTheOffsetOnlyWhenGiven) {
    auto s = hurray::check_buffer_handle(handle(64, 3, 0), 7);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code(), ErrorCode::kInvalidBufferHandle);
    EXPECT_FALSE(s.error().has_offset());
    EXPECT_EQ(s.error().offset(), Error::kNoOffset);
    EXPECT_NE(s.error().message().find("buffer[7]"), std::string::npos) << s.error().message();
    EXPECT_NE(s.error().message().find("alignment"), std::string::npos) << s.error().message();
}

// Device names and the private-range predicates.
TEST(BufferHandle, DeviceNamesAndPrivateRanges) {
    const char* kNames[] = {"cpu", "cuda", "rocm", "metal", "vulkan", "webgpu", "hexagon", "level_zero", "opencl"};
    for (uint8_t dev = 0; dev <= 0x08; ++dev) {
        EXPECT_EQ(hurray::device_name(static_cast<DeviceTag>(dev)), kNames[dev]);
        EXPECT_FALSE(hurray::is_private_device(static_cast<DeviceTag>(dev)));
    }
    for (int dev = 0x09; dev < 256; ++dev) {
        const auto d = static_cast<DeviceTag>(dev);
        const bool priv = dev >= 0xF0 && dev <= 0xFE;
        EXPECT_EQ(hurray::is_private_device(d), priv) << dev;
        EXPECT_EQ(hurray::device_name(d), priv ? "private" : "invalid") << dev;
    }
    for (int cls = 0; cls < 256; ++cls) {
        EXPECT_EQ(hurray::is_private_memory_class(static_cast<MemoryClass>(cls)), cls >= 0xF0 && cls <= 0xFE)
            << cls;
    }
}

}  // namespace
