// SPDX-License-Identifier: Apache-2.0
// C tests of the C ABI: source compatibility with the reference
// implementation's hurray.h (ABI version 4). Every function it declares is
// assigned to a pointer of exactly the reference's type, so a signature that
// drifts fails to compile (-Werror); constants and the layout of the two
// payload structs are compared with the reference's values.
#include "c_test_util.h"

#include <stddef.h>

// The reference's payload layouts, field by field (its struct definitions are
// part of the ABI: callers fill them in).
struct RefConsumerStreamPayload {
    void* consumer_stream;
    uint8_t consumer_stream_device_tag;
};
struct RefEventPayload {
    void* sync_handle;
    uint8_t sync_handle_device_tag;
    void (*event_release_fn)(void*, void*);
    void* event_release_context;
};

void reference_compat_tests(void) {
    // Functions, with the reference's parameter and return types.
    HurrayStatus (*buffer_alignment)(const struct HurrayBuffer*, uint32_t*) = hurray_buffer_alignment;
    HurrayStatus (*buffer_byte_size)(const struct HurrayBuffer*, uint64_t*) = hurray_buffer_byte_size;
    HurrayStatus (*buffer_data_ptr)(const struct HurrayBuffer*, void**) = hurray_buffer_data_ptr;
    HurrayStatus (*buffer_destroy)(struct HurrayBuffer*) = hurray_buffer_destroy;
    HurrayStatus (*buffer_device_tag)(const struct HurrayBuffer*, uint8_t*) = hurray_buffer_device_tag;
    HurrayStatus (*buffer_from_ptr)(void*, uint64_t, uint32_t, uint8_t, uint8_t, uint8_t, HurrayReleaseCallback,
                                    void*, struct HurrayBuffer**) = hurray_buffer_from_ptr;
    HurrayStatus (*handoff_consumer_stream)(const struct HurrayBuffer*,
                                            const struct HurraySyncConsumerStreamPayload*) =
        hurray_buffer_handoff_consumer_stream;
    HurrayStatus (*handoff_event)(const struct HurrayBuffer*, const struct HurraySyncEventPayload*) =
        hurray_buffer_handoff_event;
    HurrayStatus (*handoff_producer_synced)(const struct HurrayBuffer*) = hurray_buffer_handoff_producer_synced;
    HurrayStatus (*list_destroy)(struct HurrayBufferList**) = hurray_buffer_list_destroy;
    HurrayStatus (*list_get)(const struct HurrayBufferList*, uint64_t, struct HurrayBuffer**) =
        hurray_buffer_list_get;
    HurrayStatus (*list_len)(const struct HurrayBufferList*, uint64_t*) = hurray_buffer_list_len;
    HurrayStatus (*list_new)(uint64_t, struct HurrayBufferList**) = hurray_buffer_list_new;
    HurrayStatus (*list_push)(struct HurrayBufferList*, struct HurrayBuffer*) = hurray_buffer_list_push;
    HurrayStatus (*buffer_memory_class)(const struct HurrayBuffer*, uint8_t*) = hurray_buffer_memory_class;
    HurrayStatus (*buffer_sync_mode)(const struct HurrayBuffer*, uint8_t*) = hurray_buffer_sync_mode;
    uint32_t (*abi_version)(void) = hurray_c_abi_version;
    HurrayStatus (*descriptor_buffer_count)(const struct HurrayDescriptor*, uint32_t*) =
        hurray_descriptor_buffer_count;
    HurrayStatus (*descriptor_byte_offset)(const struct HurrayDescriptor*, uint64_t*) =
        hurray_descriptor_byte_offset;
    HurrayStatus (*descriptor_decode)(const uint8_t*, uintptr_t, struct HurrayDescriptor**) =
        hurray_descriptor_decode;
    HurrayStatus (*descriptor_destroy)(struct HurrayDescriptor*) = hurray_descriptor_destroy;
    HurrayStatus (*descriptor_element_type_tag)(const struct HurrayDescriptor*, uint8_t*) =
        hurray_descriptor_element_type_tag;
    HurrayStatus (*descriptor_layout_tag)(const struct HurrayDescriptor*, uint8_t*) = hurray_descriptor_layout_tag;
    HurrayStatus (*descriptor_rank)(const struct HurrayDescriptor*, uint32_t*) = hurray_descriptor_rank;
    HurrayStatus (*descriptor_shape)(const struct HurrayDescriptor*, uint64_t*, uintptr_t*) =
        hurray_descriptor_shape;
    HurrayStatus (*context_abi_version)(const struct HurrayTensorContext*, uint32_t*) =
        hurray_tensor_context_abi_version;
    HurrayStatus (*context_descriptor)(const struct HurrayTensorContext*, const uint8_t**, uint64_t*) =
        hurray_tensor_context_descriptor;
    HurrayStatus (*context_destroy)(struct HurrayTensorContext**) = hurray_tensor_context_destroy;
    HurrayStatus (*context_new)(uint32_t, const uint8_t*, uint64_t, void*, HurrayOwnerReleaseFn,
                                struct HurrayTensorContext**) = hurray_tensor_context_new;
    // The reference's handle type names, and its callback types.
    HurrayReader* reader = NULL;
    HurrayWriter* writer = NULL;
    void (*release)(void*, void*) = (HurrayReleaseCallback)NULL;
    void (*event_release)(void*, void*) = (HurrayEventReleaseFn)NULL;
    void (*owner_release)(void*) = (HurrayOwnerReleaseFn)NULL;
    const void* all[] = {
        (const void*)&buffer_alignment, (const void*)&buffer_byte_size, (const void*)&buffer_data_ptr,
        (const void*)&buffer_destroy, (const void*)&buffer_device_tag, (const void*)&buffer_from_ptr,
        (const void*)&handoff_consumer_stream, (const void*)&handoff_event, (const void*)&handoff_producer_synced,
        (const void*)&list_destroy, (const void*)&list_get, (const void*)&list_len, (const void*)&list_new,
        (const void*)&list_push, (const void*)&buffer_memory_class, (const void*)&buffer_sync_mode,
        (const void*)&abi_version, (const void*)&descriptor_buffer_count, (const void*)&descriptor_byte_offset,
        (const void*)&descriptor_decode, (const void*)&descriptor_destroy, (const void*)&descriptor_element_type_tag,
        (const void*)&descriptor_layout_tag, (const void*)&descriptor_rank, (const void*)&descriptor_shape,
        (const void*)&context_abi_version, (const void*)&context_descriptor, (const void*)&context_destroy,
        (const void*)&context_new};
    size_t i;
    for (i = 0; i < sizeof all / sizeof all[0]; ++i) {
        CHECK(*(void* const*)all[i] != NULL);  // each pointer holds its function
    }
    CHECK(abi_version() == 4 && HURRAY_C_ABI_VERSION == 4);
    CHECK(reader == NULL && writer == NULL && release == NULL && event_release == NULL && owner_release == NULL);

    // Status values.
    CHECK(HURRAY_OK == 0 && HURRAY_ERR_INVALID_MAGIC == -1 && HURRAY_ERR_VERSION_MISMATCH == -2);
    CHECK(HURRAY_ERR_INVALID_LAYOUT == -3 && HURRAY_ERR_INVALID_TYPE == -4 && HURRAY_ERR_BUFFER_TOO_SMALL == -5);
    CHECK(HURRAY_ERR_NULL_POINTER == -6 && HURRAY_ERR_INTERNAL_PANIC == -7 && HURRAY_ERR_INVALID_SYNC_MODE == -8);
    CHECK(HURRAY_ERR_SYNC_MODE_MISMATCH == -9 && HURRAY_ERR_INTERNAL == -10);
    CHECK(HURRAY_ERR_INDEX_OUT_OF_BOUNDS == -11);
    CHECK(sizeof(HurrayStatus) == sizeof(int32_t) && (HurrayStatus)-1 < 0);

    // Payload layouts.
    CHECK(sizeof(HurraySyncConsumerStreamPayload) == sizeof(struct RefConsumerStreamPayload));
    CHECK(offsetof(HurraySyncConsumerStreamPayload, consumer_stream) ==
          offsetof(struct RefConsumerStreamPayload, consumer_stream));
    CHECK(offsetof(HurraySyncConsumerStreamPayload, consumer_stream_device_tag) ==
          offsetof(struct RefConsumerStreamPayload, consumer_stream_device_tag));
    CHECK(sizeof(HurraySyncEventPayload) == sizeof(struct RefEventPayload));
    CHECK(offsetof(HurraySyncEventPayload, sync_handle) == offsetof(struct RefEventPayload, sync_handle));
    CHECK(offsetof(HurraySyncEventPayload, sync_handle_device_tag) ==
          offsetof(struct RefEventPayload, sync_handle_device_tag));
    CHECK(offsetof(HurraySyncEventPayload, event_release_fn) == offsetof(struct RefEventPayload, event_release_fn));
    CHECK(offsetof(HurraySyncEventPayload, event_release_context) ==
          offsetof(struct RefEventPayload, event_release_context));
}
