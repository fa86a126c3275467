// SPDX-License-Identifier: Apache-2.0
// The C ABI's buffer lists: the reference implementation's HurrayBufferList
// functions, with its signatures and semantics.
#include "c/c_internal.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

using hurray::c::fail;
using hurray::c::guarded;
using hurray::c::require;

/// Behind `HurrayBufferList*`: owned buffer handles, in push order.
extern "C" {

HURRAY_C_API HurrayStatus hurray_buffer_list_new(uint64_t capacity, HurrayBufferList** out_list) {
    static constexpr const char* kFn = "hurray_buffer_list_new";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{out_list, "out_list"}}); s != HURRAY_OK) {
            return s;
        }
        *out_list = nullptr;
        auto list = std::make_unique<HurrayBufferList>();
        // Only a hint: a tensor has at most 255 buffers, and a huge value must
        // not turn into a huge allocation.
        list->buffers.reserve(static_cast<size_t>(std::min<uint64_t>(capacity, 64)));
        *out_list = hurray::c::publish_handle(std::move(list));
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_buffer_list_push(HurrayBufferList* list, HurrayBuffer* buffer) {
    static constexpr const char* kFn = "hurray_buffer_list_push";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{list, "list"}, {buffer, "buffer"}}); s != HURRAY_OK) {
            return s;
        }
        // SAFETY: `list` is a live list and `buffer` a live handle owned by the
        // caller (caller contract). push_back either succeeds or throws without
        // change, so on failure the caller still owns `buffer`.
        list->buffers.push_back(buffer);
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_buffer_list_len(const HurrayBufferList* list, uint64_t* out_len) {
    static constexpr const char* kFn = "hurray_buffer_list_len";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{list, "list"}, {out_len, "out_len"}}); s != HURRAY_OK) {
            return s;
        }
        *out_len = list->buffers.size();
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_buffer_list_get(const HurrayBufferList* list, uint64_t index,
                                                 HurrayBuffer** out_buffer) {
    static constexpr const char* kFn = "hurray_buffer_list_get";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{list, "list"}, {out_buffer, "out_buffer"}}); s != HURRAY_OK) {
            return s;
        }
        if (index >= list->buffers.size() || list->buffers[static_cast<size_t>(index)] == nullptr) {
            return fail(HURRAY_ERR_INDEX_OUT_OF_BOUNDS, kFn,
                        "buffer index " + std::to_string(index) + " is out of range (there are " +
                            std::to_string(list->buffers.size()) + ")");
        }
        *out_buffer = list->buffers[static_cast<size_t>(index)];
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_buffer_list_destroy(HurrayBufferList** list) {
    static constexpr const char* kFn = "hurray_buffer_list_destroy";
    if (const HurrayStatus s = require(kFn, {{list, "list"}}); s != HURRAY_OK) {
        return s;
    }
    HurrayBufferList* const owned = *list;
    if (owned == nullptr) {
        return HURRAY_OK;
    }
    if (const HurrayStatus s = hurray::c::retire_handle(kFn, "*list", owned); s != HURRAY_OK) {
        return s;
    }
    HurrayStatus status = HURRAY_OK;
    for (HurrayBuffer*& slot : owned->buffers) {
        // The slot is cleared first: nothing can destroy this handle twice.
        HurrayBuffer* const buffer = std::exchange(slot, nullptr);
        if (buffer != nullptr) {
            const HurrayStatus destroyed = hurray_buffer_destroy(buffer);
            if (status == HURRAY_OK) {
                status = destroyed;
            }
        }
    }
    // SAFETY: a live list from hurray_buffer_list_new, destroyed once; the
    // caller's pointer is cleared so that a repeated call is a no-op.
    delete owned;
    *list = nullptr;
    return status;
}

}  // extern "C"
