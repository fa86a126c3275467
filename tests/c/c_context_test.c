// SPDX-License-Identifier: Apache-2.0
// C tests of the C ABI: tensor contexts, sync-mode handoffs, and (in builds
// with HURRAY_C_HANDLE_CHECKS) handles used after they were destroyed.
#include "c_test_util.h"

#include <stdlib.h>

// ---------------------------------------------------------------------------
// Tensor contexts
// ---------------------------------------------------------------------------

static int g_owner_releases = 0;
static void* g_released_owner = NULL;
static void count_owner_release(void* owner) {
    ++g_owner_releases;
    g_released_owner = owner;
}

static void test_tensor_context(void) {
    uint8_t descriptor[4] = {0x48, 0x52, 0x52, 0x59};
    int owner = 7;
    HurrayTensorContext* ctx = NULL;
    HurrayTensorContext* other = NULL;
    const uint8_t* bytes = NULL;
    uint64_t len = 99;
    uint32_t version = 0;

    // With a descriptor and an owner: the bytes are copied, the owner released once.
    g_owner_releases = 0;
    CHECK_STATUS(hurray_tensor_context_new(HURRAY_C_ABI_VERSION, descriptor, sizeof descriptor, &owner,
                                           count_owner_release, &ctx),
                 HURRAY_OK);
    CHECK(ctx != NULL);
    descriptor[0] = 0;  // the context holds its own copy
    CHECK_STATUS(hurray_tensor_context_abi_version(ctx, &version), HURRAY_OK);
    CHECK(version == HURRAY_C_ABI_VERSION);
    CHECK_STATUS(hurray_tensor_context_descriptor(ctx, &bytes, &len), HURRAY_OK);
    CHECK(len == 4 && bytes != NULL && bytes[0] == 0x48 && bytes[3] == 0x59);
    CHECK(g_owner_releases == 0);
    CHECK_STATUS(hurray_tensor_context_destroy(&ctx), HURRAY_OK);
    CHECK(ctx == NULL);
    CHECK(g_owner_releases == 1 && g_released_owner == &owner);
    // A second destroy through the nulled pointer is a no-op.
    CHECK_STATUS(hurray_tensor_context_destroy(&ctx), HURRAY_OK);
    CHECK(g_owner_releases == 1);

    // Without a descriptor or owner; any ABI version is recorded as given.
    CHECK_STATUS(hurray_tensor_context_new(99, NULL, 0, NULL, NULL, &other), HURRAY_OK);
    CHECK_STATUS(hurray_tensor_context_abi_version(other, &version), HURRAY_OK);
    CHECK(version == 99);
    bytes = descriptor;
    CHECK_STATUS(hurray_tensor_context_descriptor(other, &bytes, &len), HURRAY_OK);
    CHECK(bytes == NULL && len == 0);
    CHECK_STATUS(hurray_tensor_context_destroy(&other), HURRAY_OK);
    CHECK(other == NULL);

    // A context built from a real descriptor decodes back.
    {
        char path[4096];
        size_t size = 0;
        uint8_t* golden;
        HurrayDescriptor* decoded = NULL;
        uint32_t rank = 0;
        join(path, sizeof path, g_conformance_dir, "descriptors/row_major_f32_3x4.bin");
        golden = read_all(path, &size);
        CHECK(golden != NULL);
        if (golden != NULL) {
            CHECK_STATUS(hurray_tensor_context_new(HURRAY_C_ABI_VERSION, golden, size, NULL, NULL, &ctx), HURRAY_OK);
            free(golden);
            CHECK_STATUS(hurray_tensor_context_descriptor(ctx, &bytes, &len), HURRAY_OK);
            CHECK_STATUS(hurray_descriptor_decode(bytes, (uintptr_t)len, &decoded), HURRAY_OK);
            CHECK_STATUS(hurray_descriptor_rank(decoded, &rank), HURRAY_OK);
            CHECK(rank == 2);
            CHECK_STATUS(hurray_descriptor_destroy(decoded), HURRAY_OK);
            CHECK_STATUS(hurray_tensor_context_destroy(&ctx), HURRAY_OK);
        }
    }

    // NULL arguments.
    CHECK_NULL_ARG(hurray_tensor_context_new(HURRAY_C_ABI_VERSION, NULL, 0, NULL, NULL, NULL));
    CHECK_NULL_ARG(hurray_tensor_context_new(HURRAY_C_ABI_VERSION, NULL, 4, NULL, NULL, &ctx));
    CHECK(ctx == NULL);
    CHECK_STATUS(hurray_tensor_context_new(HURRAY_C_ABI_VERSION, NULL, 0, NULL, NULL, &ctx), HURRAY_OK);
    CHECK_NULL_ARG(hurray_tensor_context_abi_version(NULL, &version));
    CHECK_NULL_ARG(hurray_tensor_context_abi_version(ctx, NULL));
    CHECK_NULL_ARG(hurray_tensor_context_descriptor(NULL, &bytes, &len));
    CHECK_NULL_ARG(hurray_tensor_context_descriptor(ctx, NULL, &len));
    CHECK_NULL_ARG(hurray_tensor_context_descriptor(ctx, &bytes, NULL));
    CHECK_NULL_ARG(hurray_tensor_context_destroy(NULL));
    CHECK_STATUS(hurray_tensor_context_destroy(&ctx), HURRAY_OK);
}

// ---------------------------------------------------------------------------
// Sync-mode handoffs
// ---------------------------------------------------------------------------

#define DEVICE_CPU 0x00
#define DEVICE_CUDA 0x01
#define DEVICE_ROCM 0x02
#define SYNC_PRODUCER_SYNCED 0x00
#define SYNC_EVENT 0x01
#define SYNC_CONSUMER_STREAM 0x02

static void release_event(void* event, void* context) {
    (void)event;
    (void)context;
}

static HurrayBuffer* buffer_with(uint8_t device_tag, uint8_t sync_mode, uint8_t* data) {
    HurrayBuffer* buffer = NULL;
    CHECK_STATUS(hurray_buffer_from_ptr(data, 64, 64, device_tag, sync_mode, 0, NULL, NULL, &buffer), HURRAY_OK);
    return buffer;
}

static void test_handoffs(void) {
    // 64-byte aligned storage for the buffers.
    uint8_t* data = (uint8_t*)malloc(128);
    uint8_t* aligned;
    int stream_object = 0;
    int event_object = 0;
    HurraySyncConsumerStreamPayload stream;
    HurraySyncEventPayload event;
    HurrayBuffer* synced;
    HurrayBuffer* evented;
    HurrayBuffer* streamed;
    HurrayBuffer* rocm_streamed;
    CHECK(data != NULL);
    if (data == NULL) {
        return;
    }
    aligned = data + (64 - (uintptr_t)data % 64) % 64;
    synced = buffer_with(DEVICE_CUDA, SYNC_PRODUCER_SYNCED, aligned);
    evented = buffer_with(DEVICE_CUDA, SYNC_EVENT, aligned);
    streamed = buffer_with(DEVICE_CUDA, SYNC_CONSUMER_STREAM, aligned);
    rocm_streamed = buffer_with(DEVICE_ROCM, SYNC_CONSUMER_STREAM, aligned);

    stream.consumer_stream = &stream_object;
    stream.consumer_stream_device_tag = DEVICE_CUDA;
    event.sync_handle = &event_object;
    event.sync_handle_device_tag = DEVICE_CUDA;
    event.event_release_fn = release_event;
    event.event_release_context = NULL;

    // producer_synced
    CHECK_STATUS(hurray_buffer_handoff_producer_synced(synced), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_handoff_producer_synced(evented), HURRAY_ERR_SYNC_MODE_MISMATCH);
    CHECK(strstr(hurray_last_error_message(), "producer_synced") != NULL);
    CHECK_STATUS(hurray_buffer_handoff_producer_synced(streamed), HURRAY_ERR_SYNC_MODE_MISMATCH);
    CHECK_NULL_ARG(hurray_buffer_handoff_producer_synced(NULL));

    // event
    CHECK_STATUS(hurray_buffer_handoff_event(evented, &event), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_handoff_event(synced, &event), HURRAY_ERR_SYNC_MODE_MISMATCH);
    CHECK_STATUS(hurray_buffer_handoff_event(streamed, &event), HURRAY_ERR_SYNC_MODE_MISMATCH);
    event.sync_handle = NULL;
    CHECK_STATUS(hurray_buffer_handoff_event(evented, &event), HURRAY_ERR_SYNC_MODE_MISMATCH);
    CHECK(strstr(hurray_last_error_message(), "sync_handle is NULL") != NULL);
    event.sync_handle = &event_object;
    event.event_release_fn = NULL;
    CHECK_STATUS(hurray_buffer_handoff_event(evented, &event), HURRAY_ERR_SYNC_MODE_MISMATCH);
    CHECK(strstr(hurray_last_error_message(), "event_release_fn is NULL") != NULL);
    event.event_release_fn = release_event;
    event.sync_handle_device_tag = DEVICE_CPU;
    CHECK_STATUS(hurray_buffer_handoff_event(evented, &event), HURRAY_ERR_SYNC_MODE_MISMATCH);
    CHECK(strstr(hurray_last_error_message(), "device tag") != NULL);
    event.sync_handle_device_tag = DEVICE_CUDA;
    CHECK_NULL_ARG(hurray_buffer_handoff_event(NULL, &event));
    CHECK_NULL_ARG(hurray_buffer_handoff_event(evented, NULL));

    // consumer_stream
    CHECK_STATUS(hurray_buffer_handoff_consumer_stream(streamed, &stream), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_handoff_consumer_stream(synced, &stream), HURRAY_ERR_SYNC_MODE_MISMATCH);
    CHECK_STATUS(hurray_buffer_handoff_consumer_stream(evented, &stream), HURRAY_ERR_SYNC_MODE_MISMATCH);
    CHECK_STATUS(hurray_buffer_handoff_consumer_stream(rocm_streamed, &stream), HURRAY_ERR_SYNC_MODE_MISMATCH);
    stream.consumer_stream_device_tag = DEVICE_ROCM;
    CHECK_STATUS(hurray_buffer_handoff_consumer_stream(rocm_streamed, &stream), HURRAY_OK);
    stream.consumer_stream = NULL;
    CHECK_STATUS(hurray_buffer_handoff_consumer_stream(rocm_streamed, &stream), HURRAY_ERR_SYNC_MODE_MISMATCH);
    CHECK(strstr(hurray_last_error_message(), "consumer_stream is NULL") != NULL);
    CHECK_NULL_ARG(hurray_buffer_handoff_consumer_stream(NULL, &stream));
    CHECK_NULL_ARG(hurray_buffer_handoff_consumer_stream(streamed, NULL));

    CHECK_STATUS(hurray_buffer_destroy(synced), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_destroy(evented), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_destroy(streamed), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_destroy(rocm_streamed), HURRAY_OK);
    free(data);
}

// ---------------------------------------------------------------------------
// Destroyed handles (HURRAY_C_HANDLE_CHECKS builds only: elsewhere these
// calls are undefined behaviour, as the header says)
// ---------------------------------------------------------------------------

#ifdef HURRAY_C_HANDLE_CHECKS
static int message_has(const char* text) { return strstr(hurray_last_error_message(), text) != NULL; }

static void test_destroyed_handles(void) {
    char path[4096];
    HurrayFile* file = NULL;
    HurrayDescriptor* desc = NULL;
    HurrayBuffer* buffer = NULL;
    HurrayBufferList* list = NULL;
    HurrayBufferList* list_copy;
    HurrayTensorContext* ctx = NULL;
    HurrayTensorContext* ctx_copy;
    uint64_t count = 0;
    uint32_t rank = 0;
    int owner = 0;

    join(path, sizeof path, g_conformance_dir, "files/basic.hrry");
    CHECK_STATUS(hurray_file_open(path, 0, &file), HURRAY_OK);
    CHECK_STATUS(hurray_file_tensor_descriptor(file, 0, &desc), HURRAY_OK);
    CHECK_STATUS(hurray_file_tensor_buffer(file, 0, 0, &buffer), HURRAY_OK);

    // A handle of one kind passed as another is named.
    CHECK_STATUS(hurray_descriptor_rank((const HurrayDescriptor*)(const void*)buffer, &rank), HURRAY_ERR_INTERNAL);
    CHECK(message_has("is not a live HurrayDescriptor") && message_has("it is a live HurrayBuffer"));

    // Descriptor: use after destroy, double destroy.
    CHECK_STATUS(hurray_descriptor_destroy(desc), HURRAY_OK);
    CHECK_STATUS(hurray_descriptor_rank(desc, &rank), HURRAY_ERR_INTERNAL);
    CHECK(message_has("hurray_descriptor_rank") && message_has("not a live HurrayDescriptor"));
    CHECK_STATUS(hurray_descriptor_destroy(desc), HURRAY_ERR_INTERNAL);
    CHECK(message_has("hurray_descriptor_destroy") && message_has("destroyed already"));

    // File: close twice; a closed file is not usable; its buffer still is.
    hurray_file_close(file);
    CHECK_STATUS(hurray_file_tensor_count(file, &count), HURRAY_ERR_INTERNAL);
    CHECK(message_has("not a live HurrayFile"));
    hurray_file_close(file);
    CHECK(message_has("hurray_file_close") && message_has("not a live HurrayFile"));
    CHECK_STATUS(hurray_buffer_byte_size(buffer, &count), HURRAY_OK);

    // Buffer: double destroy.
    CHECK_STATUS(hurray_buffer_destroy(buffer), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_destroy(buffer), HURRAY_ERR_INTERNAL);
    CHECK(message_has("not a live HurrayBuffer"));

    // List and context: destroyed through one pointer, then through a copy.
    CHECK_STATUS(hurray_buffer_list_new(1, &list), HURRAY_OK);
    list_copy = list;
    CHECK_STATUS(hurray_buffer_list_destroy(&list), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_list_len(list_copy, &count), HURRAY_ERR_INTERNAL);
    CHECK_STATUS(hurray_buffer_list_destroy(&list_copy), HURRAY_ERR_INTERNAL);
    CHECK(message_has("not a live HurrayBufferList"));
    g_owner_releases = 0;
    CHECK_STATUS(hurray_tensor_context_new(HURRAY_C_ABI_VERSION, NULL, 0, &owner, count_owner_release, &ctx),
                 HURRAY_OK);
    ctx_copy = ctx;
    CHECK_STATUS(hurray_tensor_context_destroy(&ctx), HURRAY_OK);
    CHECK_STATUS(hurray_tensor_context_destroy(&ctx_copy), HURRAY_ERR_INTERNAL);
    CHECK(message_has("not a live HurrayTensorContext"));
    CHECK(g_owner_releases == 1);  // not released a second time

    // Stream reader and writer: closed twice.
    {
        static const uint8_t nothing[1] = {0};
        HurrayReader* reader = NULL;
        HurrayDescriptor* next = NULL;
        (void)nothing;
        CHECK_STATUS(hurray_stream_open_memory(nothing, 0, 0, &reader), HURRAY_OK);
        hurray_stream_close(reader);
        CHECK_STATUS(hurray_stream_next(reader, &next), HURRAY_ERR_INTERNAL);
        CHECK(message_has("not a live HurrayReader"));
        hurray_stream_close(reader);
        CHECK(message_has("hurray_stream_close") && message_has("not a live HurrayReader"));
    }

    // File writer: aborted through one pointer, then finished through a copy.
    {
        char out_path[4096];
        HurrayFileWriter* writer = NULL;
        HurrayFileWriter* writer_copy;
        join(out_path, sizeof out_path, g_tmp_dir, "c_context_dead_writer.hrry");
        CHECK_STATUS(hurray_file_writer_create(out_path, 0, &writer), HURRAY_OK);
        writer_copy = writer;
        CHECK_STATUS(hurray_file_writer_abort(&writer), HURRAY_OK);
        CHECK_STATUS(hurray_file_writer_set_int64(writer_copy, "k", 1, 1), HURRAY_ERR_INTERNAL);
        CHECK(message_has("not a live HurrayFileWriter"));
        CHECK_STATUS(hurray_file_writer_finish(&writer_copy), HURRAY_ERR_INTERNAL);
        CHECK(message_has("not a live HurrayFileWriter"));
    }
}
#endif

void context_tests(void) {
    test_tensor_context();
    test_handoffs();
#ifdef HURRAY_C_HANDLE_CHECKS
    test_destroyed_handles();
#endif
}
