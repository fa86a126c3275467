// SPDX-License-Identifier: Apache-2.0
// Sync-mode handoffs (the reference ABI's functions, with its signatures and
// semantics): the consumer asserts how it will order its use of a buffer;
// each call checks that the buffer declares that sync mode and that the
// payload is complete and on the buffer's device, and returns
// HURRAY_ERR_SYNC_MODE_MISMATCH otherwise. Nothing is waited on here.
#include "c/c_internal.hpp"

#include <string>

using hurray::c::fail;
using hurray::c::guarded;
using hurray::c::require;

extern "C" {

HURRAY_C_API HurrayStatus hurray_buffer_handoff_producer_synced(const HurrayBuffer* buffer) {
    static constexpr const char* kFn = "hurray_buffer_handoff_producer_synced";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{buffer, "buffer"}}); s != HURRAY_OK) {
            return s;
        }
        if (buffer->meta.sync_mode != hurray::SyncMode::kProducerSynced) {
            return fail(HURRAY_ERR_SYNC_MODE_MISMATCH, kFn,
                        "the buffer's sync mode is not producer_synced (0x00)");
        }
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_buffer_handoff_event(const HurrayBuffer* buffer,
                                                      const HurraySyncEventPayload* payload) {
    static constexpr const char* kFn = "hurray_buffer_handoff_event";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{buffer, "buffer"}, {payload, "payload"}}); s != HURRAY_OK) {
            return s;
        }
        if (buffer->meta.sync_mode != hurray::SyncMode::kEvent) {
            return fail(HURRAY_ERR_SYNC_MODE_MISMATCH, kFn, "the buffer's sync mode is not event (0x01)");
        }
        if (payload->sync_handle == nullptr) {
            return fail(HURRAY_ERR_SYNC_MODE_MISMATCH, kFn, "payload->sync_handle is NULL");
        }
        if (payload->event_release_fn == nullptr) {
            return fail(HURRAY_ERR_SYNC_MODE_MISMATCH, kFn, "payload->event_release_fn is NULL");
        }
        if (payload->sync_handle_device_tag != static_cast<uint8_t>(buffer->meta.device_tag)) {
            return fail(HURRAY_ERR_SYNC_MODE_MISMATCH, kFn,
                        "payload->sync_handle_device_tag " + std::to_string(payload->sync_handle_device_tag) +
                            " is not the buffer's device tag " +
                            std::to_string(static_cast<unsigned>(buffer->meta.device_tag)));
        }
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_buffer_handoff_consumer_stream(const HurrayBuffer* buffer,
                                                                const HurraySyncConsumerStreamPayload* payload) {
    static constexpr const char* kFn = "hurray_buffer_handoff_consumer_stream";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{buffer, "buffer"}, {payload, "payload"}}); s != HURRAY_OK) {
            return s;
        }
        if (buffer->meta.sync_mode != hurray::SyncMode::kConsumerStream) {
            return fail(HURRAY_ERR_SYNC_MODE_MISMATCH, kFn,
                        "the buffer's sync mode is not consumer_stream (0x02)");
        }
        if (payload->consumer_stream == nullptr) {
            return fail(HURRAY_ERR_SYNC_MODE_MISMATCH, kFn, "payload->consumer_stream is NULL");
        }
        if (payload->consumer_stream_device_tag != static_cast<uint8_t>(buffer->meta.device_tag)) {
            return fail(HURRAY_ERR_SYNC_MODE_MISMATCH, kFn,
                        "payload->consumer_stream_device_tag " +
                            std::to_string(payload->consumer_stream_device_tag) +
                            " is not the buffer's device tag " +
                            std::to_string(static_cast<unsigned>(buffer->meta.device_tag)));
        }
        return HURRAY_OK;
    });
}

}  // extern "C"
