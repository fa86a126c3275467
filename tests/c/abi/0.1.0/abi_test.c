// SPDX-License-Identifier: Apache-2.0
// ABI test of release 0.1.0 (C ABI version 4): compiled against the hurray.h
// of that release (the copy beside this file, never edited) and linked with
// the library being built. Every later release must keep it passing; only a
// new C ABI major version (a new SONAME) may retire it.
//   hurray_c_abi_test_0_1_0 CONFORMANCE_DIR TMP_DIR
// Prints "N passed, M failed".
#include "hurray.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_passed = 0;
static int g_failed = 0;

#define CHECK(cond)                                                                                 \
    do {                                                                                            \
        if (cond) {                                                                                 \
            ++g_passed;                                                                             \
        } else {                                                                                    \
            ++g_failed;                                                                             \
            fprintf(stderr, "%s:%d: CHECK(%s) failed (last error: \"%s\")\n", __FILE__, __LINE__, \
                    #cond, hurray_last_error_message());                                            \
        }                                                                                           \
    } while (0)

#define CHECK_OK(expr) CHECK((expr) == HURRAY_OK)

// A growable memory sink for the stream writer.
struct Sink {
    uint8_t* bytes;
    size_t len;
    size_t cap;
};

static int32_t sink_write(void* context, const void* data, size_t len) {
    struct Sink* sink = (struct Sink*)context;
    if (sink->len + len > sink->cap) {
        size_t cap = sink->cap == 0 ? 4096 : sink->cap;
        uint8_t* grown;
        while (cap < sink->len + len) {
            cap *= 2;
        }
        grown = (uint8_t*)realloc(sink->bytes, cap);
        if (grown == NULL) {
            return -1;
        }
        sink->bytes = grown;
        sink->cap = cap;
    }
    memcpy(sink->bytes + sink->len, data, len);
    sink->len += len;
    return 0;
}

static int g_owner_released = 0;
static void release_owner(void* owner) {
    (void)owner;
    ++g_owner_released;
}

// Reading the conformance file basic.hrry (float32 weights [2,2], int8 bias [3]).
static void read_basic(const char* conformance_dir) {
    char path[4096];
    HurrayFile* file = NULL;
    uint64_t count = 0;
    uint64_t index = 99;
    HurrayDescriptor* desc = NULL;
    uint8_t tag = 0;
    uint32_t rank = 0;
    uint64_t dims[4];
    uintptr_t dims_len = 4;
    HurrayBuffer* buffer = NULL;
    uint64_t size = 0;
    const char* text = NULL;
    size_t text_len = 0;
    int64_t number = 0;
    float values[4];
    uint64_t n = 0;
    uint8_t bytes[256];
    size_t bytes_len = 0;
    HurrayTensorContext* ctx = NULL;
    HurrayBufferList* list = NULL;
    uint64_t listed = 0;

    snprintf(path, sizeof path, "%s/files/basic.hrry", conformance_dir);
    CHECK_OK(hurray_file_open(path, 0, &file));
    if (file == NULL) {
        return;
    }
    CHECK_OK(hurray_file_tensor_count(file, &count));
    CHECK(count == 2);
    CHECK_OK(hurray_file_find(file, "weights", 7, &index));
    CHECK_OK(hurray_file_tensor_descriptor(file, index, &desc));
    CHECK_OK(hurray_descriptor_element_type_tag(desc, &tag));
    CHECK(tag == 3);
    CHECK_OK(hurray_descriptor_rank(desc, &rank));
    CHECK(rank == 2);
    CHECK_OK(hurray_descriptor_shape(desc, dims, &dims_len));
    CHECK(dims_len == 2 && dims[0] == 2 && dims[1] == 2);
    CHECK_OK(hurray_descriptor_destroy(desc));
    CHECK_OK(hurray_file_tensor_buffer(file, index, 0, &buffer));
    CHECK_OK(hurray_buffer_byte_size(buffer, &size));
    CHECK(size == 16);
    CHECK_OK(hurray_buffer_handoff_producer_synced(buffer));
    CHECK_OK(hurray_file_tensor_to_float32(file, index, values, 4, &n));
    CHECK(n == 4);
    CHECK_OK(hurray_file_kv_get_string(file, "producer", 8, &text, &text_len));
    CHECK(text_len == 18 && memcmp(text, "hurray-conformance", 18) == 0);
    CHECK_OK(hurray_file_kv_get_int64(file, "tensor_count", 12, &number));
    CHECK(number == 2);
    CHECK_OK(hurray_file_tensor_buffers(file, index, &list));
    CHECK_OK(hurray_buffer_list_len(list, &listed));
    CHECK(listed == 1);
    CHECK_OK(hurray_file_tensor_descriptor_bytes(file, index, bytes, sizeof bytes, &bytes_len));
    CHECK_OK(hurray_tensor_context_new(HURRAY_C_ABI_VERSION, bytes, bytes_len, list, release_owner, &ctx));

    // Statuses keep their values.
    CHECK(hurray_file_tensor_count(NULL, &count) == HURRAY_ERR_NULL_POINTER);
    {
        HurrayBuffer* none = NULL;
        CHECK(hurray_file_tensor_buffer(file, 2, 0, &none) == HURRAY_ERR_INDEX_OUT_OF_BOUNDS && none == NULL);
    }
    CHECK(hurray_file_find(file, "nope", 4, &index) == HURRAY_ERR_NOT_FOUND);
    CHECK(hurray_file_kv_get_int64(file, "producer", 8, &number) == HURRAY_ERR_TYPE_MISMATCH);
    hurray_file_close(file);

    // The buffer and the context outlive the file.
    CHECK_OK(hurray_buffer_byte_size(buffer, &size));
    CHECK_OK(hurray_buffer_destroy(buffer));
    CHECK_OK(hurray_tensor_context_destroy(&ctx));
    CHECK(ctx == NULL && g_owner_released == 1);
    CHECK_OK(hurray_buffer_list_destroy(&list));  // the owner callback did not destroy it
}

// Writing a file, then a stream, and reading both back.
static void write_and_stream(const char* tmp_dir) {
    char path[4096];
    const uint64_t dims[2] = {2, 3};
    int32_t data[6] = {1, -2, 3, -4, 5, -6};
    const void* buffers[1];
    uint64_t sizes[1];
    HurrayDescriptor* desc = NULL;
    HurrayFileWriter* writer = NULL;
    HurrayFile* file = NULL;
    uint64_t index = 0;
    float values[6];
    uint64_t n = 0;
    struct Sink sink = {NULL, 0, 0};
    HurrayWriter* stream_writer = NULL;
    HurrayReader* reader = NULL;
    HurrayDescriptor* next = NULL;
    int32_t back[6];
    uint64_t buffer_size = 0;
    int i;

    snprintf(path, sizeof path, "%s/abi_0_1_0.hrry", tmp_dir);
    CHECK_OK(hurray_descriptor_new_dense(0x14 /* int32 */, 2, dims, &desc));
    CHECK_OK(hurray_descriptor_buffer_size(desc, 0, &buffer_size));
    CHECK(buffer_size == sizeof data);
    buffers[0] = data;
    sizes[0] = sizeof data;
    CHECK_OK(hurray_file_writer_create(path, 0, &writer));
    CHECK_OK(hurray_file_writer_add_tensor(writer, "t", 1, desc, buffers, sizes, 1));
    CHECK_OK(hurray_file_writer_set_int64(writer, "answer", 6, 42));
    CHECK_OK(hurray_file_writer_finish(&writer));
    CHECK(writer == NULL);
    CHECK_OK(hurray_file_open(path, HURRAY_FILE_NO_MMAP, &file));
    if (file != NULL) {
        CHECK_OK(hurray_file_find(file, "t", 1, &index));
        CHECK_OK(hurray_file_tensor_to_float32(file, index, values, 6, &n));
        CHECK(n == 6 && values[0] == 1.0f && values[5] == -6.0f);
        hurray_file_close(file);
    }
    remove(path);

    CHECK_OK(hurray_stream_writer_open_callbacks(sink_write, &sink, 0, &stream_writer));
    CHECK_OK(hurray_stream_write_tensor(stream_writer, desc, buffers, sizes, 1));
    CHECK_OK(hurray_stream_writer_finish(stream_writer));
    hurray_stream_writer_close(stream_writer);
    CHECK_OK(hurray_stream_open_memory(sink.bytes, sink.len, 0, &reader));
    CHECK_OK(hurray_stream_next(reader, &next));
    CHECK(next != NULL);
    CHECK_OK(hurray_stream_read_into(reader, back, sizeof back));
    for (i = 0; i < 6; ++i) {
        CHECK(back[i] == data[i]);
    }
    if (next != NULL) {
        CHECK_OK(hurray_descriptor_destroy(next));
    }
    next = desc;
    CHECK_OK(hurray_stream_next(reader, &next));
    CHECK(next == NULL);  // a clean end
    hurray_stream_close(reader);
    free(sink.bytes);
    CHECK_OK(hurray_descriptor_destroy(desc));
}

int main(int argc, char** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: hurray_c_abi_test_0_1_0 CONFORMANCE_DIR TMP_DIR\n");
        return 2;
    }
    CHECK(hurray_c_abi_version() == HURRAY_C_ABI_VERSION);
    read_basic(argv[1]);
    write_and_stream(argv[2]);
    printf("%d passed, %d failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
