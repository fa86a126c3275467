// SPDX-License-Identifier: Apache-2.0
// The C ABI's descriptor construction for writers: a dense row-major
// descriptor from a type tag and a shape (hurray::make_dense), its wire bytes
// (hurray::encode), and the byte size each of its buffers must have.
#include "c/c_internal.hpp"

#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "hurray/core/builder.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/element_type.hpp"
#include "hurray/core/shape.hpp"

using hurray::c::fail;
using hurray::c::guarded;
using hurray::c::require;

extern "C" {

HURRAY_C_API HurrayStatus hurray_descriptor_new_dense(uint8_t element_type_tag, uint32_t rank, const uint64_t* dims,
                                                      HurrayDescriptor** out) {
    static constexpr const char* kFn = "hurray_descriptor_new_dense";
    return hurray::c::guarded_out(kFn, out, {}, [&]() -> HurrayStatus {
        if (rank > 0) {
            if (const HurrayStatus s = require(kFn, {{dims, "dims"}}); s != HURRAY_OK) {
                return s;
            }
        }
        const auto type = static_cast<hurray::ElementType>(element_type_tag);
        if (!hurray::is_builtin(type)) {
            return fail(HURRAY_ERR_INVALID_TYPE, kFn,
                        "element type tag " + std::to_string(element_type_tag) +
                            " is not a built-in element type (private and reserved tags need a descriptor "
                            "built elsewhere)");
        }
        // Checked before the copy, so that a huge rank never reads (or
        // allocates) more than the format's 64 dimensions.
        if (rank > hurray::kMaxRank) {
            return fail(HURRAY_ERR_INVALID_LAYOUT, kFn,
                        "rank " + std::to_string(rank) + " exceeds the format's maximum of " +
                            std::to_string(hurray::kMaxRank));
        }
        hurray::Shape shape(rank);
        if (rank > 0) {
            // SAFETY: the caller guarantees `rank` readable uint64_t at `dims`
            // (non-NULL, checked above); rank <= 64, so the byte count
            // rank * 8 cannot overflow.
            std::memcpy(shape.data(), dims, static_cast<size_t>(rank) * sizeof(uint64_t));
        }
        // make_dense computes the buffer size with overflow checks
        // (kSizeOverflow, HURRAY_ERR_INVALID_LAYOUT) and validates the result.
        auto made = hurray::make_dense(type, std::move(shape));
        if (!made.ok()) {
            return fail(made.error());
        }
        auto handle = std::make_unique<HurrayDescriptor>(HurrayDescriptor{std::move(made).value_unchecked()});
        *out = hurray::c::publish_handle(std::move(handle));
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_descriptor_encode(const HurrayDescriptor* handle, uint8_t* out, size_t capacity,
                                                   size_t* out_len) {
    static constexpr const char* kFn = "hurray_descriptor_encode";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{handle, "handle"}, {out_len, "out_len"}}); s != HURRAY_OK) {
            return s;
        }
        // encode() validates the descriptor (strictly) before producing bytes.
        auto encoded = hurray::encode(handle->descriptor);
        if (!encoded.ok()) {
            return fail(encoded.error());
        }
        const std::vector<uint8_t>& bytes = encoded.value_unchecked();
        *out_len = bytes.size();
        if (out == nullptr || capacity < bytes.size()) {
            return fail(HURRAY_ERR_BUFFER_TOO_SMALL, kFn,
                        "out holds " + std::to_string(out == nullptr ? 0 : capacity) + " byte(s), the descriptor " +
                            "needs " + std::to_string(bytes.size()) + " (*out_len now holds that size)");
        }
        // SAFETY: the caller guarantees `capacity` writable bytes at `out`,
        // and capacity >= bytes.size() (checked above).
        std::memcpy(out, bytes.data(), bytes.size());
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_descriptor_buffer_size(const HurrayDescriptor* handle, uint32_t buffer,
                                                        uint64_t* out) {
    static constexpr const char* kFn = "hurray_descriptor_buffer_size";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{handle, "handle"}, {out, "out"}}); s != HURRAY_OK) {
            return s;
        }
        const auto& buffers = handle->descriptor.buffers;
        if (buffer >= buffers.size()) {
            return fail(HURRAY_ERR_INDEX_OUT_OF_BOUNDS, kFn,
                        "buffer index " + std::to_string(buffer) + " is out of range (the descriptor has " +
                            std::to_string(buffers.size()) + " buffer(s))");
        }
        *out = buffers[buffer].byte_size;
        return HURRAY_OK;
    });
}

}  // extern "C"
