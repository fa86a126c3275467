// SPDX-License-Identifier: Apache-2.0
// The C ABI's descriptor and buffer accessors: the functions of the reference
// implementation's hurray.h, with its signatures and semantics.
#include "c/c_internal.hpp"

#include <array>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/layout.hpp"
#include "hurray/core/quantization.hpp"

using hurray::c::fail;
using hurray::c::guarded;
using hurray::c::null_argument;
using hurray::c::require;

namespace {

// The parameter name of a handle argument, for messages: as in <hurray.h>.
constexpr const char* handle_name(const HurrayDescriptor* /*handle*/) noexcept { return "handle"; }
constexpr const char* handle_name(const HurrayBuffer* /*buffer*/) noexcept { return "buffer"; }

// Reads one field of a live handle into `*out` (both checked for NULL).
template <typename Handle, typename Out, typename Read>
HurrayStatus read_field(const char* function, const Handle* handle, Out* out, const char* out_name,
                        Read&& read) {
    return guarded(function, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(function, {{handle, handle_name(handle)}, {out, out_name}});
            s != HURRAY_OK) {
            return s;
        }
        // SAFETY: `handle` is a live handle of this library (caller contract)
        // and `out` a writable pointer to one `Out`.
        *out = read(*handle);
        return HURRAY_OK;
    });
}

// The 256 names of a tag byte as NUL-terminated strings, built once (by a
// thread-safe static). Only allocation can fail: then every name is "".
class NameTable {
public:
    explicit NameTable(std::string_view (*name_of)(uint8_t)) noexcept {
        try {
            for (size_t t = 0; t < text_.size(); ++t) {
                text_[t] = std::string(name_of(static_cast<uint8_t>(t)));
            }
            ok_ = true;
        } catch (...) {
            ok_ = false;
        }
    }
    const char* operator[](uint8_t tag) const noexcept { return ok_ ? text_[tag].c_str() : ""; }

private:
    std::array<std::string, 256> text_{};
    bool ok_ = false;
};

}  // namespace

extern "C" {

// ---------------------------------------------------------------------------
// Descriptors
// ---------------------------------------------------------------------------

HURRAY_C_API HurrayStatus hurray_descriptor_decode(const uint8_t* bytes, uintptr_t len,
                                                   HurrayDescriptor** out_handle) {
    static constexpr const char* kFn = "hurray_descriptor_decode";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{out_handle, "out_handle"}}); s != HURRAY_OK) {
            return s;
        }
        *out_handle = nullptr;
        if (const HurrayStatus s = require(kFn, {{bytes, "bytes"}}); s != HURRAY_OK) {
            return s;
        }
        // SAFETY: the caller guarantees `len` readable bytes at `bytes` for the
        // duration of the call; the decoded descriptor copies what it keeps.
        auto decoded = hurray::decode(std::span<const uint8_t>(bytes, static_cast<size_t>(len)));
        if (!decoded.ok()) {
            const HurrayStatus status = fail(decoded.error());
            // The reference reports a descriptor cut short as a structural
            // (layout) error; keep its code for this reference function.
            return status == HURRAY_ERR_TRUNCATED ? HURRAY_ERR_INVALID_LAYOUT : status;
        }
        *out_handle = hurray::c::publish_handle(
            std::make_unique<HurrayDescriptor>(HurrayDescriptor{std::move(decoded).value_unchecked()}));
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_descriptor_destroy(HurrayDescriptor* handle) {
    if (handle == nullptr) {
        return null_argument("hurray_descriptor_destroy", "handle");
    }
    if (const HurrayStatus s = hurray::c::retire_handle("hurray_descriptor_destroy", "handle", handle);
        s != HURRAY_OK) {
        return s;
    }
    // SAFETY: a live handle from this library, destroyed once (caller contract).
    delete handle;
    return HURRAY_OK;
}

HURRAY_C_API HurrayStatus hurray_descriptor_element_type_tag(const HurrayDescriptor* handle, uint8_t* out_tag) {
    return read_field("hurray_descriptor_element_type_tag", handle, out_tag, "out_tag",
                      [](const HurrayDescriptor& d) { return hurray::type_tag(d.descriptor.element_type); });
}

HURRAY_C_API const char* hurray_element_type_name(uint8_t tag) {
    static const NameTable names(
        [](uint8_t t) -> std::string_view { return hurray::type_name(static_cast<hurray::ElementType>(t)); });
    return names[tag];
}

HURRAY_C_API const char* hurray_layout_name(uint8_t tag) {
    static const NameTable names([](uint8_t t) -> std::string_view { return hurray::layout_name(t); });
    return names[tag];
}

HURRAY_C_API const char* hurray_quantization_scheme_name(uint8_t tag) {
    static const NameTable names([](uint8_t t) -> std::string_view { return hurray::scheme_name(t); });
    return names[tag];
}

HURRAY_C_API HurrayStatus hurray_descriptor_quantization_scheme(const HurrayDescriptor* handle,
                                                                int32_t* out_scheme) {
    return read_field("hurray_descriptor_quantization_scheme", handle, out_scheme, "out_scheme",
                      [](const HurrayDescriptor& d) -> int32_t {
                          return d.descriptor.quantization ? hurray::scheme_tag(d.descriptor.quantization->scheme)
                                                           : -1;
                      });
}

HURRAY_C_API HurrayStatus hurray_descriptor_layout_tag(const HurrayDescriptor* handle, uint8_t* out_tag) {
    return read_field("hurray_descriptor_layout_tag", handle, out_tag, "out_tag",
                      [](const HurrayDescriptor& d) { return d.descriptor.layout_tag(); });
}

HURRAY_C_API HurrayStatus hurray_descriptor_rank(const HurrayDescriptor* handle, uint32_t* out_rank) {
    return read_field("hurray_descriptor_rank", handle, out_rank, "out_rank",
                      [](const HurrayDescriptor& d) { return d.descriptor.rank(); });
}

HURRAY_C_API HurrayStatus hurray_descriptor_shape(const HurrayDescriptor* handle, uint64_t* out_dims,
                                                  uintptr_t* out_rank) {
    static constexpr const char* kFn = "hurray_descriptor_shape";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{handle, "handle"}, {out_rank, "out_rank"}}); s != HURRAY_OK) {
            return s;
        }
        const hurray::Shape& shape = handle->descriptor.shape;
        const uintptr_t capacity = *out_rank;
        *out_rank = shape.size();
        if (out_dims == nullptr || capacity < shape.size()) {
            return fail(HURRAY_ERR_BUFFER_TOO_SMALL, kFn,
                        "out_dims holds " + std::to_string(out_dims == nullptr ? 0 : capacity) +
                            " dimension(s), the rank is " + std::to_string(shape.size()) +
                            " (*out_rank now holds the rank)");
        }
        if (!shape.empty()) {
            // SAFETY: the caller guarantees `capacity` writable uint64_t at
            // `out_dims`, and capacity >= shape.size().
            std::memcpy(out_dims, shape.data(), shape.size() * sizeof(uint64_t));
        }
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_descriptor_byte_offset(const HurrayDescriptor* handle, uint64_t* out_offset) {
    return read_field("hurray_descriptor_byte_offset", handle, out_offset, "out_offset",
                      [](const HurrayDescriptor& d) { return d.descriptor.byte_offset; });
}

HURRAY_C_API HurrayStatus hurray_descriptor_buffer_count(const HurrayDescriptor* handle, uint32_t* out_count) {
    return read_field("hurray_descriptor_buffer_count", handle, out_count, "out_count",
                      [](const HurrayDescriptor& d) { return static_cast<uint32_t>(d.descriptor.buffers.size()); });
}

// ---------------------------------------------------------------------------
// Buffers
// ---------------------------------------------------------------------------

HURRAY_C_API HurrayStatus hurray_buffer_from_ptr(void* data, uint64_t byte_size, uint32_t alignment,
                                                 uint8_t device_tag, uint8_t sync_mode, uint8_t memory_class,
                                                 HurrayReleaseCallback release, void* release_context,
                                                 HurrayBuffer** out_handle) {
    static constexpr const char* kFn = "hurray_buffer_from_ptr";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{out_handle, "out_handle"}}); s != HURRAY_OK) {
            return s;
        }
        *out_handle = nullptr;
        if (const HurrayStatus s = require(kFn, {{data, "data"}}); s != HURRAY_OK) {
            return s;
        }
        // The reference's codes for the three tag bytes, before the other rules.
        if (sync_mode > static_cast<uint8_t>(hurray::SyncMode::kConsumerStream)) {
            return fail(HURRAY_ERR_INVALID_SYNC_MODE, kFn, "sync_mode " + std::to_string(sync_mode) + " is not defined");
        }
        const bool private_device = device_tag >= 0xF0 && device_tag <= 0xFE;
        if (device_tag > static_cast<uint8_t>(hurray::DeviceTag::kOpenCl) && !private_device) {
            return fail(HURRAY_ERR_INVALID_TYPE, kFn, "device_tag " + std::to_string(device_tag) + " is not defined");
        }
        const bool private_class = memory_class >= 0xF0 && memory_class <= 0xFE;
        if (memory_class > static_cast<uint8_t>(hurray::MemoryClass::kPeer) && !private_class) {
            return fail(HURRAY_ERR_INVALID_TYPE, kFn,
                        "memory_class " + std::to_string(memory_class) + " is not defined");
        }
        hurray::BufferHandle meta{};
        meta.byte_size = byte_size;
        meta.alignment = alignment;
        meta.device_tag = static_cast<hurray::DeviceTag>(device_tag);
        meta.sync_mode = static_cast<hurray::SyncMode>(sync_mode);
        meta.memory_class = static_cast<hurray::MemoryClass>(memory_class);
        const hurray::Status checked = hurray::check_buffer_handle(meta, 0);
        if (!checked.ok()) {
            return fail(checked.error());  // kInvalidBufferHandle: HURRAY_ERR_INVALID_LAYOUT
        }
        // SAFETY: only the address's value is used, never dereferenced.
        const auto address = reinterpret_cast<uintptr_t>(data);
        if (byte_size > 0 && address % alignment != 0) {
            return fail(HURRAY_ERR_INVALID_LAYOUT, kFn,
                        "data is not aligned to the declared alignment of " + std::to_string(alignment));
        }
        auto handle = std::make_unique<HurrayBuffer>();
        handle->data = data;
        handle->meta = meta;
        handle->release = release;
        handle->release_context = release_context;
        *out_handle = hurray::c::publish_handle(std::move(handle));
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_buffer_destroy(HurrayBuffer* buffer) {
    static constexpr const char* kFn = "hurray_buffer_destroy";
    if (buffer == nullptr) {
        return null_argument(kFn, "buffer");
    }
    if (const HurrayStatus s = hurray::c::retire_handle(kFn, "buffer", buffer); s != HURRAY_OK) {
        return s;
    }
    const HurrayReleaseCallback release = buffer->release;
    void* const data = buffer->data;
    void* const context = buffer->release_context;
    // SAFETY: a live handle from this library, destroyed once (caller
    // contract). Dropping the SharedBuffer releases one share of the file
    // (an atomic reference count); it does not throw.
    delete buffer;
    if (release == nullptr) {
        return HURRAY_OK;
    }
    // The handle is gone before the callback runs, so even a callback that
    // unwinds cannot lead to a second release.
    return guarded(kFn, [&]() -> HurrayStatus {
        // SAFETY: the callback and its arguments are exactly those given to
        // hurray_buffer_from_ptr, which the caller vouched for.
        release(data, context);
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_buffer_data_ptr(const HurrayBuffer* buffer, void** out_data) {
    return read_field("hurray_buffer_data_ptr", buffer, out_data, "out_data",
                      [](const HurrayBuffer& b) { return b.data; });
}

HURRAY_C_API HurrayStatus hurray_buffer_byte_size(const HurrayBuffer* buffer, uint64_t* out_byte_size) {
    return read_field("hurray_buffer_byte_size", buffer, out_byte_size, "out_byte_size",
                      [](const HurrayBuffer& b) { return b.meta.byte_size; });
}

HURRAY_C_API HurrayStatus hurray_buffer_alignment(const HurrayBuffer* buffer, uint32_t* out_alignment) {
    return read_field("hurray_buffer_alignment", buffer, out_alignment, "out_alignment", [](const HurrayBuffer& b) {
        const uint32_t declared = b.meta.alignment;
        // SAFETY: only the address's value is used, never dereferenced.
        const auto address = reinterpret_cast<uintptr_t>(b.data);
        if (b.meta.byte_size == 0 || declared == 0 || address % declared == 0) {
            return declared;
        }
        // The largest power of two dividing the address (below `declared`,
        // since the address is not a multiple of it).
        return static_cast<uint32_t>(address & (~address + 1));
    });
}

HURRAY_C_API HurrayStatus hurray_buffer_device_tag(const HurrayBuffer* buffer, uint8_t* out_device_tag) {
    return read_field("hurray_buffer_device_tag", buffer, out_device_tag, "out_device_tag",
                      [](const HurrayBuffer& b) { return static_cast<uint8_t>(b.meta.device_tag); });
}

HURRAY_C_API HurrayStatus hurray_buffer_sync_mode(const HurrayBuffer* buffer, uint8_t* out_sync_mode) {
    return read_field("hurray_buffer_sync_mode", buffer, out_sync_mode, "out_sync_mode",
                      [](const HurrayBuffer& b) { return static_cast<uint8_t>(b.meta.sync_mode); });
}

HURRAY_C_API HurrayStatus hurray_buffer_memory_class(const HurrayBuffer* buffer, uint8_t* out_memory_class) {
    return read_field("hurray_buffer_memory_class", buffer, out_memory_class, "out_memory_class",
                      [](const HurrayBuffer& b) { return static_cast<uint8_t>(b.meta.memory_class); });
}

}  // extern "C"
