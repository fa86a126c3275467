// SPDX-License-Identifier: Apache-2.0
// HurrayTensorContext: the producer's C ABI version, a copy of the encoded
// descriptor, and an owner released exactly once (the reference ABI's
// functions, with its signatures and semantics).
#include "c/c_internal.hpp"

#include <cstring>
#include <memory>
#include <utility>
#include <vector>

using hurray::c::fail;
using hurray::c::guarded;
using hurray::c::require;

struct HurrayTensorContext {
    /// HURRAY_C_ABI_VERSION of the producing build, as given.
    uint32_t abi_version = 0;
    /// The encoded descriptor (a copy; possibly empty).
    std::vector<uint8_t> descriptor;
    /// Opaque owner, handed to `owner_release` at destruction.
    void* owner = nullptr;
    /// Called once with `owner` by hurray_tensor_context_destroy; may be NULL.
    HurrayOwnerReleaseFn owner_release = nullptr;
};

extern "C" {

HURRAY_C_API HurrayStatus hurray_tensor_context_new(uint32_t abi_version, const uint8_t* descriptor_bytes,
                                                    uint64_t descriptor_len, void* owner,
                                                    HurrayOwnerReleaseFn owner_release,
                                                    HurrayTensorContext** out_ctx) {
    static constexpr const char* kFn = "hurray_tensor_context_new";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{out_ctx, "out_ctx"}}); s != HURRAY_OK) {
            return s;
        }
        if (descriptor_len != 0) {
            if (const HurrayStatus s = require(kFn, {{descriptor_bytes, "descriptor_bytes"}}); s != HURRAY_OK) {
                return s;
            }
        }
        if (descriptor_len > SIZE_MAX) {
            return fail(HURRAY_ERR_OUT_OF_MEMORY, kFn, "descriptor_len does not fit in memory");
        }
        auto ctx = std::make_unique<HurrayTensorContext>();
        ctx->abi_version = abi_version;
        if (descriptor_len != 0) {
            ctx->descriptor.resize(static_cast<size_t>(descriptor_len));
            // SAFETY: the caller guarantees `descriptor_len` readable bytes at
            // `descriptor_bytes` (checked non-NULL above); the vector has
            // exactly that many.
            std::memcpy(ctx->descriptor.data(), descriptor_bytes, static_cast<size_t>(descriptor_len));
        }
        ctx->owner = owner;
        ctx->owner_release = owner_release;
        *out_ctx = hurray::c::publish_handle(std::move(ctx));
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_tensor_context_abi_version(const HurrayTensorContext* ctx, uint32_t* out) {
    static constexpr const char* kFn = "hurray_tensor_context_abi_version";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{ctx, "ctx"}, {out, "out"}}); s != HURRAY_OK) {
            return s;
        }
        *out = ctx->abi_version;
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_tensor_context_descriptor(const HurrayTensorContext* ctx,
                                                           const uint8_t** out_bytes, uint64_t* out_len) {
    static constexpr const char* kFn = "hurray_tensor_context_descriptor";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{ctx, "ctx"}, {out_bytes, "out_bytes"}, {out_len, "out_len"}});
            s != HURRAY_OK) {
            return s;
        }
        *out_bytes = ctx->descriptor.empty() ? nullptr : ctx->descriptor.data();
        *out_len = ctx->descriptor.size();
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_tensor_context_destroy(HurrayTensorContext** ctx) {
    static constexpr const char* kFn = "hurray_tensor_context_destroy";
    if (const HurrayStatus s = require(kFn, {{ctx, "ctx"}}); s != HURRAY_OK) {
        return s;
    }
    HurrayTensorContext* const owned = *ctx;
    if (owned == nullptr) {
        return HURRAY_OK;  // destroyed already through this pointer: a no-op
    }
    if (const HurrayStatus s = hurray::c::retire_handle(kFn, "*ctx", owned); s != HURRAY_OK) {
        return s;
    }
    const HurrayOwnerReleaseFn release = std::exchange(owned->owner_release, nullptr);
    void* const owner = owned->owner;
    // SAFETY: a live context from hurray_tensor_context_new, destroyed once;
    // the caller's pointer is cleared before the owner is released, so the
    // callback cannot observe (or destroy again) a dangling handle.
    delete owned;
    *ctx = nullptr;
    if (release == nullptr) {
        return HURRAY_OK;
    }
    return guarded(kFn, [&]() -> HurrayStatus {
        // SAFETY: exactly the callback and owner given to
        // hurray_tensor_context_new, which the caller vouched for; called once.
        release(owner);
        return HURRAY_OK;
    });
}

}  // extern "C"
