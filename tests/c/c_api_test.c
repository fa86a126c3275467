// SPDX-License-Identifier: Apache-2.0
// Tests of the C ABI (include/hurray.h), written in C99 and compiled with
// -std=c99 -pedantic: what a C caller sees. Run by ctest as
//   hurray_c_tests CONFORMANCE_DIR KV_FILE TMP_DIR
// where KV_FILE was written by hurray_c_test_writer (tests/c/write_test_file.cpp).
// Prints "N passed, M failed"; the exit status is non-zero when a check failed.
#include "c_test_util.h"

#include <hurray.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static HurrayFile* open_basic(uint32_t flags) {
    char path[4096];
    HurrayFile* file = NULL;
    join(path, sizeof path, g_conformance_dir, "files/basic.hrry");
    CHECK_STATUS(hurray_file_open(path, flags, &file), HURRAY_OK);
    return file;
}

static int name_is(const char* name, size_t len, const char* want) {
    return name != NULL && len == strlen(want) && memcmp(name, want, len) == 0 && name[len] == '\0';
}

static void test_version(void) {
    CHECK(hurray_c_abi_version() == HURRAY_C_ABI_VERSION);
    CHECK(HURRAY_C_ABI_VERSION == 4);
    // Nothing has failed on this thread yet.
    CHECK(hurray_last_error_message() != NULL);
    CHECK(strcmp(hurray_last_error_message(), "") == 0);
    CHECK(strcmp(hurray_element_type_name(0x03), "float32") == 0);
    CHECK(strcmp(hurray_element_type_name(0x10), "int8") == 0);
    CHECK(strcmp(hurray_element_type_name(0x00), "") == 0);
    CHECK(strcmp(hurray_element_type_name(0xFF), "") == 0);
}

// One tensor of basic.hrry (files/basic.hrry in manifest.json).
// `mapped`: opened with mmap, so the data honours the declared alignment (64).
static void check_tensor(const HurrayFile* file, const char* name, uint8_t type_tag, const uint64_t* dims,
                         uintptr_t rank, uint64_t data_bytes, int mapped) {
    uint64_t index = 99;
    const char* got_name = NULL;
    size_t got_len = 0;
    HurrayDescriptor* d = NULL;
    HurrayBuffer* b = NULL;
    uint8_t tag = 0;
    uint32_t got_rank = 0;
    uint32_t count = 0;
    uint64_t got_dims[8] = {0};
    uintptr_t cap = 0;
    uint64_t offset = 7;
    uint64_t size = 0;
    uint32_t alignment = 0;
    void* data = NULL;
    uintptr_t i;

    CHECK_STATUS(hurray_file_find(file, name, strlen(name), &index), HURRAY_OK);
    CHECK(index < 2);
    CHECK_STATUS(hurray_file_tensor_name(file, index, &got_name, &got_len), HURRAY_OK);
    CHECK(name_is(got_name, got_len, name));

    CHECK_STATUS(hurray_file_tensor_descriptor(file, index, &d), HURRAY_OK);
    CHECK(d != NULL);
    CHECK_STATUS(hurray_descriptor_element_type_tag(d, &tag), HURRAY_OK);
    CHECK(tag == type_tag);
    CHECK_STATUS(hurray_descriptor_layout_tag(d, &tag), HURRAY_OK);
    CHECK(tag == 0x01);  // row-major
    CHECK_STATUS(hurray_descriptor_rank(d, &got_rank), HURRAY_OK);
    CHECK(got_rank == rank);
    // Capacity/length protocol: ask for the rank, then read the dims.
    cap = 0;
    CHECK_STATUS(hurray_descriptor_shape(d, NULL, &cap), HURRAY_ERR_BUFFER_TOO_SMALL);
    CHECK(cap == rank);
    cap = rank - 1;
    CHECK_STATUS(hurray_descriptor_shape(d, got_dims, &cap), HURRAY_ERR_BUFFER_TOO_SMALL);
    CHECK(cap == rank);
    CHECK(got_dims[0] == 0);  // nothing written on failure
    cap = 8;
    CHECK_STATUS(hurray_descriptor_shape(d, got_dims, &cap), HURRAY_OK);
    CHECK(cap == rank);
    for (i = 0; i < rank; ++i) {
        CHECK(got_dims[i] == dims[i]);
    }
    CHECK_STATUS(hurray_descriptor_byte_offset(d, &offset), HURRAY_OK);
    CHECK(offset == 0);
    CHECK_STATUS(hurray_descriptor_buffer_count(d, &count), HURRAY_OK);
    CHECK(count == 1);
    CHECK_STATUS(hurray_descriptor_destroy(d), HURRAY_OK);

    CHECK_STATUS(hurray_file_tensor_buffer(file, index, 0, &b), HURRAY_OK);
    CHECK(b != NULL);
    CHECK_STATUS(hurray_buffer_byte_size(b, &size), HURRAY_OK);
    CHECK(size == data_bytes);
    CHECK_STATUS(hurray_buffer_data_ptr(b, &data), HURRAY_OK);
    CHECK(data != NULL);
    CHECK_STATUS(hurray_buffer_alignment(b, &alignment), HURRAY_OK);
    CHECK(alignment > 0 && (alignment & (alignment - 1)) == 0);
    CHECK(!mapped || alignment == 64);
    CHECK(((uintptr_t)data % alignment) == 0);
    CHECK_STATUS(hurray_buffer_device_tag(b, &tag), HURRAY_OK);
    CHECK(tag == 0);
    CHECK_STATUS(hurray_buffer_sync_mode(b, &tag), HURRAY_OK);
    CHECK(tag == 0);
    CHECK_STATUS(hurray_buffer_memory_class(b, &tag), HURRAY_OK);
    CHECK(tag == 0);
    CHECK_STATUS(hurray_buffer_destroy(b), HURRAY_OK);
}

static void test_basic_file(uint32_t flags) {
    static const uint64_t weights_dims[2] = {2, 2};
    static const uint64_t bias_dims[1] = {3};
    HurrayFile* file = open_basic(flags);
    uint64_t count = 0;
    uint64_t index = 0;
    const char* text = NULL;
    size_t len = 0;
    int64_t i64 = 0;
    uint64_t u64 = 0;
    double f64 = 0;
    uint8_t u8 = 0;
    uint8_t type = 0;
    HurrayDescriptor* d = NULL;
    HurrayBuffer* b = NULL;
    if (file == NULL) {
        return;
    }
    CHECK_STATUS(hurray_file_tensor_count(file, &count), HURRAY_OK);
    CHECK(count == 2);
    check_tensor(file, "weights", 0x03, weights_dims, 2, 16, (flags & HURRAY_FILE_NO_MMAP) == 0);
    check_tensor(file, "bias", 0x10, bias_dims, 1, 3, (flags & HURRAY_FILE_NO_MMAP) == 0);

    // Out of range and not found.
    CHECK_STATUS(hurray_file_tensor_name(file, 2, &text, &len), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    CHECK(strstr(hurray_last_error_message(), "out of range") != NULL);
    CHECK_STATUS(hurray_file_tensor_name(file, UINT64_MAX, &text, &len), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    CHECK_STATUS(hurray_file_tensor_descriptor(file, 2, &d), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    CHECK(d == NULL);
    CHECK_STATUS(hurray_file_tensor_buffer(file, 2, 0, &b), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    CHECK(b == NULL);
    CHECK_STATUS(hurray_file_tensor_buffer(file, 0, 1, &b), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    CHECK_STATUS(hurray_file_tensor_buffer(file, 0, UINT32_MAX, &b), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    CHECK(b == NULL);
    CHECK_STATUS(hurray_file_find(file, "nope", 4, &index), HURRAY_ERR_NOT_FOUND);
    CHECK(strstr(hurray_last_error_message(), "not_found") != NULL);
    // The length counts, not a NUL: "weights" cut to "weight" is not found.
    CHECK_STATUS(hurray_file_find(file, "weights", 6, &index), HURRAY_ERR_NOT_FOUND);
    CHECK_STATUS(hurray_file_find(file, "", 0, &index), HURRAY_ERR_NOT_FOUND);

    // KV: "producer" (string) and "tensor_count" (int64), in that order.
    CHECK_STATUS(hurray_file_kv_count(file, &count), HURRAY_OK);
    CHECK(count == 2);
    CHECK_STATUS(hurray_file_kv_key(file, 0, &text, &len), HURRAY_OK);
    CHECK(name_is(text, len, "producer"));
    CHECK_STATUS(hurray_file_kv_key(file, 1, &text, &len), HURRAY_OK);
    CHECK(name_is(text, len, "tensor_count"));
    CHECK_STATUS(hurray_file_kv_key(file, 2, &text, &len), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    CHECK_STATUS(hurray_file_kv_type(file, "producer", 8, &type), HURRAY_OK);
    CHECK(type == HURRAY_KV_STRING);
    CHECK_STATUS(hurray_file_kv_type(file, "tensor_count", 12, &type), HURRAY_OK);
    CHECK(type == HURRAY_KV_INT64);
    CHECK_STATUS(hurray_file_kv_get_string(file, "producer", 8, &text, &len), HURRAY_OK);
    CHECK(name_is(text, len, "hurray-conformance"));
    CHECK_STATUS(hurray_file_kv_get_int64(file, "tensor_count", 12, &i64), HURRAY_OK);
    CHECK(i64 == 2);
    // Type mismatch, with a message.
    CHECK_STATUS(hurray_file_kv_get_int64(file, "producer", 8, &i64), HURRAY_ERR_TYPE_MISMATCH);
    CHECK(strlen(hurray_last_error_message()) > 0);
    CHECK_STATUS(hurray_file_kv_get_string(file, "tensor_count", 12, &text, &len), HURRAY_ERR_TYPE_MISMATCH);
    CHECK_STATUS(hurray_file_kv_get_uint64(file, "tensor_count", 12, &u64), HURRAY_ERR_TYPE_MISMATCH);
    CHECK_STATUS(hurray_file_kv_get_float64(file, "tensor_count", 12, &f64), HURRAY_ERR_TYPE_MISMATCH);
    CHECK_STATUS(hurray_file_kv_get_bool(file, "tensor_count", 12, &u8), HURRAY_ERR_TYPE_MISMATCH);
    // Not found.
    CHECK_STATUS(hurray_file_kv_type(file, "missing", 7, &type), HURRAY_ERR_NOT_FOUND);
    CHECK_STATUS(hurray_file_kv_get_string(file, "missing", 7, &text, &len), HURRAY_ERR_NOT_FOUND);
    CHECK_STATUS(hurray_file_kv_get_int64(file, "missing", 7, &i64), HURRAY_ERR_NOT_FOUND);
    CHECK_STATUS(hurray_file_kv_get_uint64(file, "missing", 7, &u64), HURRAY_ERR_NOT_FOUND);
    CHECK_STATUS(hurray_file_kv_get_float64(file, "missing", 7, &f64), HURRAY_ERR_NOT_FOUND);
    CHECK_STATUS(hurray_file_kv_get_bool(file, "missing", 7, &u8), HURRAY_ERR_NOT_FOUND);
    CHECK(strstr(hurray_last_error_message(), "missing") != NULL);
    // A successful call leaves the last message alone.
    CHECK_STATUS(hurray_file_kv_get_int64(file, "tensor_count", 12, &i64), HURRAY_OK);
    CHECK(strstr(hurray_last_error_message(), "missing") != NULL);

    hurray_file_close(file);
}

// A buffer outlives hurray_file_close: it keeps the mapping (or the pread copy)
// alive. Under ASan (scripts/test.sh stage 3) a use after free would be reported.
static void test_buffer_after_close(uint32_t flags) {
    HurrayFile* file = open_basic(flags);
    HurrayBuffer* b = NULL;
    HurrayBuffer* b2 = NULL;
    uint64_t index = 0;
    uint64_t size = 0;
    void* data = NULL;
    unsigned char copy[16];
    if (file == NULL) {
        return;
    }
    CHECK_STATUS(hurray_file_find(file, "weights", 7, &index), HURRAY_OK);
    CHECK_STATUS(hurray_file_tensor_buffer(file, index, 0, &b), HURRAY_OK);
    CHECK_STATUS(hurray_file_tensor_buffer(file, index, 0, &b2), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_data_ptr(b, &data), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_byte_size(b, &size), HURRAY_OK);
    CHECK(size == sizeof copy);
    if (data == NULL || size != sizeof copy) {
        hurray_file_close(file);
        return;
    }
    memcpy(copy, data, sizeof copy);
    hurray_file_close(file);
    // Still readable, and unchanged, through both buffers.
    CHECK(memcmp(copy, data, sizeof copy) == 0);
    CHECK_STATUS(hurray_buffer_destroy(b), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_data_ptr(b2, &data), HURRAY_OK);
    CHECK(memcmp(copy, data, sizeof copy) == 0);
    CHECK_STATUS(hurray_buffer_destroy(b2), HURRAY_OK);
}

// hurray_file_tensor_buffers and hurray_file_tensor_descriptor_bytes, and a
// tensor context built from them (the list is its owner).
static void release_list_owner(void* owner) {
    HurrayBufferList* list = (HurrayBufferList*)owner;
    CHECK_STATUS(hurray_buffer_list_destroy(&list), HURRAY_OK);
}

static void test_tensor_buffers_and_bytes(uint32_t flags) {
    HurrayFile* file = open_basic(flags);
    uint64_t count = 0;
    uint64_t i;
    HurrayBufferList* list = NULL;
    HurrayTensorContext* ctx = NULL;
    size_t len = 0;
    uint8_t small[4];
    if (file == NULL) {
        return;
    }
    CHECK_STATUS(hurray_file_tensor_count(file, &count), HURRAY_OK);
    for (i = 0; i < count; ++i) {
        HurrayDescriptor* desc = NULL;
        HurrayDescriptor* again = NULL;
        uint32_t buffer_count = 0;
        uint64_t listed = 0;
        uint8_t* bytes;
        uint32_t rank_a = 0;
        uint32_t rank_b = 0;
        uint32_t b;
        CHECK_STATUS(hurray_file_tensor_descriptor(file, i, &desc), HURRAY_OK);
        CHECK_STATUS(hurray_descriptor_buffer_count(desc, &buffer_count), HURRAY_OK);
        CHECK_STATUS(hurray_file_tensor_buffers(file, i, &list), HURRAY_OK);
        CHECK_STATUS(hurray_buffer_list_len(list, &listed), HURRAY_OK);
        CHECK(listed == buffer_count);
        for (b = 0; b < buffer_count; ++b) {
            HurrayBuffer* one = NULL;
            HurrayBuffer* lent = NULL;
            void* p1 = NULL;
            void* p2 = NULL;
            uint64_t s1 = 1;
            uint64_t s2 = 2;
            CHECK_STATUS(hurray_file_tensor_buffer(file, i, b, &one), HURRAY_OK);
            CHECK_STATUS(hurray_buffer_list_get(list, b, &lent), HURRAY_OK);
            CHECK_STATUS(hurray_buffer_data_ptr(one, &p1), HURRAY_OK);
            CHECK_STATUS(hurray_buffer_data_ptr(lent, &p2), HURRAY_OK);
            CHECK_STATUS(hurray_buffer_byte_size(one, &s1), HURRAY_OK);
            CHECK_STATUS(hurray_buffer_byte_size(lent, &s2), HURRAY_OK);
            CHECK(p1 == p2 && s1 == s2);  // the same bytes, not a copy
            CHECK_STATUS(hurray_buffer_destroy(one), HURRAY_OK);
        }
        // Raw descriptor bytes: size query, then copy; they decode to the same tensor.
        CHECK_STATUS(hurray_file_tensor_descriptor_bytes(file, i, NULL, 0, &len), HURRAY_ERR_BUFFER_TOO_SMALL);
        CHECK(len >= 4);
        bytes = (uint8_t*)malloc(len);
        CHECK(bytes != NULL);
        if (bytes != NULL) {
            size_t got = 0;
            CHECK_STATUS(hurray_file_tensor_descriptor_bytes(file, i, bytes, len - 1, &got),
                         HURRAY_ERR_BUFFER_TOO_SMALL);
            CHECK(got == len);
            CHECK_STATUS(hurray_file_tensor_descriptor_bytes(file, i, bytes, len, &got), HURRAY_OK);
            CHECK(got == len && memcmp(bytes, "HRRY", 4) == 0);
            CHECK_STATUS(hurray_descriptor_decode(bytes, (uintptr_t)len, &again), HURRAY_OK);
            CHECK_STATUS(hurray_descriptor_rank(desc, &rank_a), HURRAY_OK);
            CHECK_STATUS(hurray_descriptor_rank(again, &rank_b), HURRAY_OK);
            CHECK(rank_a == rank_b);
            CHECK_STATUS(hurray_descriptor_destroy(again), HURRAY_OK);
            // A tensor context that owns the buffer list, as a capsule would.
            CHECK_STATUS(hurray_tensor_context_new(HURRAY_C_ABI_VERSION, bytes, len, list, release_list_owner, &ctx),
                         HURRAY_OK);
            list = NULL;
            free(bytes);
        }
        CHECK_STATUS(hurray_descriptor_destroy(desc), HURRAY_OK);
        if (list != NULL) {
            CHECK_STATUS(hurray_buffer_list_destroy(&list), HURRAY_OK);
        }
        if (ctx != NULL && i + 1 < count) {
            CHECK_STATUS(hurray_tensor_context_destroy(&ctx), HURRAY_OK);
        }
    }
    // Errors.
    CHECK_STATUS(hurray_file_tensor_buffers(file, count, &list), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    CHECK(list == NULL);
    CHECK_STATUS(hurray_file_tensor_descriptor_bytes(file, count, small, sizeof small, &len),
                 HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    CHECK_NULL_ARG(hurray_file_tensor_buffers(NULL, 0, &list));
    CHECK_NULL_ARG(hurray_file_tensor_buffers(file, 0, NULL));
    CHECK_NULL_ARG(hurray_file_tensor_descriptor_bytes(NULL, 0, small, sizeof small, &len));
    CHECK_NULL_ARG(hurray_file_tensor_descriptor_bytes(file, 0, small, sizeof small, NULL));
    // The last context outlives the file: its owner (the list) keeps the bytes.
    hurray_file_close(file);
    if (ctx != NULL) {
        const uint8_t* d = NULL;
        uint64_t d_len = 0;
        CHECK_STATUS(hurray_tensor_context_descriptor(ctx, &d, &d_len), HURRAY_OK);
        CHECK(d != NULL && d_len >= 4);
        CHECK_STATUS(hurray_tensor_context_destroy(&ctx), HURRAY_OK);
    }
}

// hurray_file_tensor_to_float32 on basic.hrry: float32 weights [2,2] and int8
// bias [3], checked against their stored bytes.
static void test_to_float32(uint32_t flags) {
    HurrayFile* file = open_basic(flags);
    float values[8];
    uint64_t n = 0;
    uint64_t index = 0;
    HurrayBuffer* buffer = NULL;
    const void* data = NULL;
    int i;
    if (file == NULL) {
        return;
    }
    CHECK_STATUS(hurray_file_find(file, "weights", 7, &index), HURRAY_OK);
    CHECK_STATUS(hurray_file_tensor_to_float32(file, index, NULL, 0, &n), HURRAY_ERR_BUFFER_TOO_SMALL);
    CHECK(n == 4);
    CHECK_STATUS(hurray_file_tensor_to_float32(file, index, values, 3, &n), HURRAY_ERR_BUFFER_TOO_SMALL);
    CHECK(n == 4 && strstr(hurray_last_error_message(), "4 elements") != NULL);
    CHECK_STATUS(hurray_file_tensor_to_float32(file, index, values, 8, &n), HURRAY_OK);
    CHECK(n == 4);
    CHECK_STATUS(hurray_file_tensor_buffer(file, index, 0, &buffer), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_data_ptr(buffer, (void**)&data), HURRAY_OK);
    CHECK(data != NULL && memcmp(data, values, 4 * sizeof(float)) == 0);
    CHECK_STATUS(hurray_buffer_destroy(buffer), HURRAY_OK);

    CHECK_STATUS(hurray_file_find(file, "bias", 4, &index), HURRAY_OK);
    CHECK_STATUS(hurray_file_tensor_to_float32(file, index, values, 8, &n), HURRAY_OK);
    CHECK(n == 3);
    CHECK_STATUS(hurray_file_tensor_buffer(file, index, 0, &buffer), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_data_ptr(buffer, (void**)&data), HURRAY_OK);
    for (i = 0; i < 3 && data != NULL; ++i) {
        CHECK(values[i] == (float)((const int8_t*)data)[i]);
    }
    CHECK_STATUS(hurray_buffer_destroy(buffer), HURRAY_OK);

    // Every tensor of the KV test file (ranks 0, 1, 3) converts after a size query.
    {
        HurrayFile* kv = NULL;
        uint64_t count = 0;
        CHECK_STATUS(hurray_file_open(g_kv_file, flags, &kv), HURRAY_OK);
        CHECK_STATUS(hurray_file_tensor_count(kv, &count), HURRAY_OK);
        for (index = 0; index < count; ++index) {
            float* all;
            CHECK_STATUS(hurray_file_tensor_to_float32(kv, index, NULL, 0, &n), HURRAY_ERR_BUFFER_TOO_SMALL);
            all = (float*)malloc((n > 0 ? n : 1) * sizeof *all);
            CHECK(all != NULL);
            if (all != NULL) {
                CHECK_STATUS(hurray_file_tensor_to_float32(kv, index, all, n, &n), HURRAY_OK);
                free(all);
            }
        }
        hurray_file_close(kv);
    }
    CHECK_STATUS(hurray_file_tensor_to_float32(file, 2, values, 8, &n), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    CHECK_NULL_ARG(hurray_file_tensor_to_float32(NULL, 0, values, 8, &n));
    CHECK_NULL_ARG(hurray_file_tensor_to_float32(file, 0, values, 8, NULL));
    hurray_file_close(file);
}

// Tag names and the quantization scheme accessor.
static void test_names_and_quantization(void) {
    char path[4096];
    size_t len = 0;
    uint8_t* bytes;
    HurrayDescriptor* d = NULL;
    int32_t scheme = 7;
    CHECK(strcmp(hurray_element_type_name(0x03), "float32") == 0);
    CHECK(strcmp(hurray_element_type_name(0x00), "") == 0);
    CHECK(strcmp(hurray_layout_name(0x01), "row_major") == 0);
    CHECK(strcmp(hurray_layout_name(0x03), "strided") == 0);
    CHECK(strcmp(hurray_layout_name(0x00), "") == 0);
    CHECK(strcmp(hurray_layout_name(0xFF), "") == 0);
    CHECK(strcmp(hurray_quantization_scheme_name(0x00), "") == 0 ||
          strlen(hurray_quantization_scheme_name(0x00)) > 0);  // any static string
    CHECK(strcmp(hurray_quantization_scheme_name(0xFF), "") == 0);

    // Not quantized: -1.
    join(path, sizeof path, g_conformance_dir, "descriptors/row_major_f32_3x4.bin");
    bytes = read_all(path, &len);
    CHECK(bytes != NULL);
    if (bytes != NULL) {
        CHECK_STATUS(hurray_descriptor_decode(bytes, (uintptr_t)len, &d), HURRAY_OK);
        CHECK_STATUS(hurray_descriptor_quantization_scheme(d, &scheme), HURRAY_OK);
        CHECK(scheme == -1);
        CHECK_NULL_ARG(hurray_descriptor_quantization_scheme(NULL, &scheme));
        CHECK_NULL_ARG(hurray_descriptor_quantization_scheme(d, NULL));
        CHECK_STATUS(hurray_descriptor_destroy(d), HURRAY_OK);
        free(bytes);
    }
    // Quantized (per-block affine int4): its scheme, which has a name.
    join(path, sizeof path, g_conformance_dir, "descriptors/quant_per_block_int4_128x128.bin");
    bytes = read_all(path, &len);
    CHECK(bytes != NULL);
    if (bytes != NULL) {
        CHECK_STATUS(hurray_descriptor_decode(bytes, (uintptr_t)len, &d), HURRAY_OK);
        CHECK_STATUS(hurray_descriptor_quantization_scheme(d, &scheme), HURRAY_OK);
        CHECK(scheme >= 0 && scheme <= 255);
        if (scheme >= 0) {
            CHECK(strcmp(hurray_quantization_scheme_name((uint8_t)scheme), "per_block_affine") == 0);
        }
        CHECK_STATUS(hurray_descriptor_destroy(d), HURRAY_OK);
        free(bytes);
    }
}

static void test_flags(void) {
    HurrayFile* file = (HurrayFile*)&g_passed;  // any non-NULL value
    char path[4096];
    join(path, sizeof path, g_conformance_dir, "files/basic.hrry");
    CHECK_STATUS(hurray_file_open(path, 0x80u, &file), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(file == NULL);
    CHECK(strstr(hurray_last_error_message(), "flags") != NULL);
    CHECK_STATUS(hurray_file_open(path, HURRAY_FILE_NO_MMAP | HURRAY_FILE_PERMISSIVE, &file), HURRAY_OK);
    hurray_file_close(file);
    hurray_file_close(NULL);  // a no-op
    CHECK(1);
}

static void test_open_memory(void) {
    char path[4096];
    size_t len = 0;
    uint8_t* bytes;
    HurrayFile* file = NULL;
    HurrayBuffer* b = NULL;
    uint64_t count = 0;
    uint64_t index = 0;
    void* data = NULL;
    uint64_t size = 0;
    join(path, sizeof path, g_conformance_dir, "files/basic.hrry");
    bytes = read_all(path, &len);
    CHECK(bytes != NULL);
    if (bytes == NULL) {
        return;
    }
    CHECK_STATUS(hurray_file_open_memory(bytes, len, 0, &file), HURRAY_OK);
    if (file != NULL) {
        CHECK_STATUS(hurray_file_tensor_count(file, &count), HURRAY_OK);
        CHECK(count == 2);
        CHECK_STATUS(hurray_file_find(file, "bias", 4, &index), HURRAY_OK);
        CHECK_STATUS(hurray_file_tensor_buffer(file, index, 0, &b), HURRAY_OK);
        hurray_file_close(file);
        CHECK_STATUS(hurray_buffer_data_ptr(b, &data), HURRAY_OK);
        CHECK_STATUS(hurray_buffer_byte_size(b, &size), HURRAY_OK);
        // Zero-copy: the buffer points into the caller's bytes.
        CHECK((const uint8_t*)data >= bytes && (const uint8_t*)data + size <= bytes + len);
        CHECK(size == 3);
        CHECK_STATUS(hurray_buffer_destroy(b), HURRAY_OK);
    }
    // Cut short, and garbage, in memory.
    CHECK(hurray_file_open_memory(bytes, len / 2, 0, &file) != HURRAY_OK);
    CHECK(file == NULL);
    CHECK(strlen(hurray_last_error_message()) > 0);
    CHECK_STATUS(hurray_file_open_memory((const uint8_t*)"GIF89a, not hurray at all", 25, 0, &file),
                 HURRAY_ERR_INVALID_MAGIC);
    CHECK(strstr(hurray_last_error_message(), "47 49 46 38") != NULL);
    CHECK_STATUS(hurray_file_open_memory(bytes, 0, 0, &file), HURRAY_ERR_TRUNCATED);
    CHECK(strstr(hurray_last_error_message(), "empty") != NULL);
    free(bytes);
}

static void test_bad_files(void) {
    char path[4096];
    char basic[4096];
    size_t len = 0;
    uint8_t* bytes;
    HurrayFile* file = (HurrayFile*)&g_passed;
    static const char garbage[] = "This is a text file, certainly not an HRRYFILE container. "
                                  "It is long enough to hold a file header and a trailer, though.";
    HurrayStatus status;

    join(path, sizeof path, g_tmp_dir, "c_api_no_such_file.hrry");
    remove(path);
    CHECK_STATUS(hurray_file_open(path, 0, &file), HURRAY_ERR_IO);
    CHECK(file == NULL);
    CHECK(strlen(hurray_last_error_message()) > 0);

    join(path, sizeof path, g_tmp_dir, "c_api_garbage.hrry");
    CHECK(write_all(path, garbage, sizeof garbage - 1));
    CHECK_STATUS(hurray_file_open(path, 0, &file), HURRAY_ERR_INVALID_MAGIC);
    CHECK(file == NULL);
    CHECK(strstr(hurray_last_error_message(), "starts with 54 68 69 73") != NULL);

    join(path, sizeof path, g_tmp_dir, "c_api_empty.hrry");
    CHECK(write_all(path, "", 0));
    CHECK_STATUS(hurray_file_open(path, 0, &file), HURRAY_ERR_TRUNCATED);
    CHECK(strstr(hurray_last_error_message(), "empty") != NULL);

    // A stream / bare descriptor given to the file entry point.
    join(path, sizeof path, g_conformance_dir, "descriptors/row_major_f32_3x4.bin");
    CHECK_STATUS(hurray_file_open(path, 0, &file), HURRAY_ERR_WRONG_FORMAT);
    CHECK(file == NULL);
    CHECK(strstr(hurray_last_error_message(), "stream") != NULL);

    // basic.hrry cut short at several places: an error with a message, never a crash.
    join(basic, sizeof basic, g_conformance_dir, "files/basic.hrry");
    bytes = read_all(basic, &len);
    CHECK(bytes != NULL);
    if (bytes != NULL) {
        size_t cuts[5];
        size_t i;
        cuts[0] = 10;
        cuts[1] = 64;
        cuts[2] = 200;
        cuts[3] = len / 2;
        cuts[4] = len - 1;
        join(path, sizeof path, g_tmp_dir, "c_api_truncated.hrry");
        for (i = 0; i < sizeof cuts / sizeof cuts[0]; ++i) {
            CHECK(write_all(path, bytes, cuts[i]));
            status = hurray_file_open(path, 0, &file);
            CHECK(status < 0);
            CHECK(file == NULL);
            CHECK(strlen(hurray_last_error_message()) > 0);
        }
        // A flipped byte in the index (just before the trailer): checksum or structure.
        bytes[len - 48] ^= 0xFF;
        join(path, sizeof path, g_tmp_dir, "c_api_corrupt.hrry");
        CHECK(write_all(path, bytes, len));
        status = hurray_file_open(path, 0, &file);
        CHECK(status < 0);
        CHECK(file == NULL);
        CHECK(strlen(hurray_last_error_message()) > 0);
        free(bytes);
    }
}

static void test_descriptor_decode(void) {
    char path[4096];
    size_t len = 0;
    uint8_t* bytes;
    HurrayDescriptor* d = NULL;
    uint8_t tag = 0;
    uint32_t count = 0;
    uint64_t dims[2] = {0, 0};
    uintptr_t rank = 2;

    join(path, sizeof path, g_conformance_dir, "descriptors/csr_f32_3x3.bin");
    bytes = read_all(path, &len);
    CHECK(bytes != NULL);
    if (bytes == NULL) {
        return;
    }
    CHECK_STATUS(hurray_descriptor_decode(bytes, len, &d), HURRAY_OK);
    CHECK_STATUS(hurray_descriptor_layout_tag(d, &tag), HURRAY_OK);
    CHECK(tag == 0x07);  // CSR
    CHECK_STATUS(hurray_descriptor_element_type_tag(d, &tag), HURRAY_OK);
    CHECK(tag == 0x03);
    CHECK_STATUS(hurray_descriptor_buffer_count(d, &count), HURRAY_OK);
    CHECK(count == 3);
    CHECK_STATUS(hurray_descriptor_shape(d, dims, &rank), HURRAY_OK);
    CHECK(rank == 2 && dims[0] == 3 && dims[1] == 3);
    CHECK_STATUS(hurray_descriptor_destroy(d), HURRAY_OK);

    d = (HurrayDescriptor*)&g_passed;
    CHECK_STATUS(hurray_descriptor_decode(bytes, 12, &d), HURRAY_ERR_INVALID_LAYOUT);  // cut short
    CHECK(d == NULL);
    CHECK(strlen(hurray_last_error_message()) > 0);
    bytes[0] = 'X';
    CHECK_STATUS(hurray_descriptor_decode(bytes, len, &d), HURRAY_ERR_INVALID_MAGIC);
    CHECK(strstr(hurray_last_error_message(), "invalid_magic") != NULL);
    free(bytes);
}

// The file written by hurray_c_test_writer: every scalar KV type, tensors of rank 0, 3 and 1.
static void test_kv_file(void) {
    HurrayFile* file = NULL;
    HurrayDescriptor* d = NULL;
    HurrayBuffer* b = NULL;
    const char* text = NULL;
    size_t len = 0;
    int64_t i64 = 0;
    uint64_t u64 = 0;
    double f64 = 0;
    uint8_t u8 = 0;
    uint8_t type = 0;
    uint64_t index = 0;
    uint64_t dims[4] = {0, 0, 0, 0};
    uintptr_t rank = 0;
    uint64_t size = 0;
    uint8_t tag = 0;
    void* data = NULL;

    CHECK_STATUS(hurray_file_open(g_kv_file, 0, &file), HURRAY_OK);
    if (file == NULL) {
        return;
    }
    CHECK_STATUS(hurray_file_kv_count(file, &u64), HURRAY_OK);
    CHECK(u64 == 7);
    CHECK_STATUS(hurray_file_kv_get_string(file, "name", 4, &text, &len), HURRAY_OK);
    CHECK(name_is(text, len, "c-api"));
    CHECK_STATUS(hurray_file_kv_get_int64(file, "offset", 6, &i64), HURRAY_OK);
    CHECK(i64 == -42);
    CHECK_STATUS(hurray_file_kv_get_uint64(file, "big", 3, &u64), HURRAY_OK);
    CHECK(u64 == UINT64_MAX);
    CHECK_STATUS(hurray_file_kv_get_float64(file, "ratio", 5, &f64), HURRAY_OK);
    CHECK(f64 == 0.125);
    CHECK_STATUS(hurray_file_kv_get_bool(file, "flag", 4, &u8), HURRAY_OK);
    CHECK(u8 == 1);
    CHECK_STATUS(hurray_file_kv_type(file, "big", 3, &type), HURRAY_OK);
    CHECK(type == HURRAY_KV_UINT64);
    CHECK_STATUS(hurray_file_kv_type(file, "ratio", 5, &type), HURRAY_OK);
    CHECK(type == HURRAY_KV_FLOAT64);
    CHECK_STATUS(hurray_file_kv_type(file, "flag", 4, &type), HURRAY_OK);
    CHECK(type == HURRAY_KV_BOOL);
    CHECK_STATUS(hurray_file_kv_type(file, "blob", 4, &type), HURRAY_OK);
    CHECK(type == HURRAY_KV_BYTES);
    CHECK_STATUS(hurray_file_kv_type(file, "dims", 4, &type), HURRAY_OK);
    CHECK(type == HURRAY_KV_ARRAY);
    // Types without a getter yet, and crossed getters.
    CHECK_STATUS(hurray_file_kv_get_string(file, "blob", 4, &text, &len), HURRAY_ERR_TYPE_MISMATCH);
    CHECK_STATUS(hurray_file_kv_get_int64(file, "dims", 4, &i64), HURRAY_ERR_TYPE_MISMATCH);
    CHECK_STATUS(hurray_file_kv_get_int64(file, "big", 3, &i64), HURRAY_ERR_TYPE_MISMATCH);
    CHECK_STATUS(hurray_file_kv_get_uint64(file, "offset", 6, &u64), HURRAY_ERR_TYPE_MISMATCH);
    CHECK_STATUS(hurray_file_kv_get_bool(file, "ratio", 5, &u8), HURRAY_ERR_TYPE_MISMATCH);
    CHECK_STATUS(hurray_file_kv_get_float64(file, "flag", 4, &f64), HURRAY_ERR_TYPE_MISMATCH);

    // Rank 0: a NULL dims array is "too small" even for rank 0 (reference
    // semantics); a non-NULL one of capacity 0 is enough.
    CHECK_STATUS(hurray_file_find(file, "scalar", 6, &index), HURRAY_OK);
    CHECK_STATUS(hurray_file_tensor_descriptor(file, index, &d), HURRAY_OK);
    rank = 5;
    CHECK_STATUS(hurray_descriptor_shape(d, NULL, &rank), HURRAY_ERR_BUFFER_TOO_SMALL);
    CHECK(rank == 0);
    CHECK_STATUS(hurray_descriptor_shape(d, dims, &rank), HURRAY_OK);
    CHECK(rank == 0);
    CHECK_STATUS(hurray_descriptor_destroy(d), HURRAY_OK);
    CHECK_STATUS(hurray_file_tensor_buffer(file, index, 0, &b), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_byte_size(b, &size), HURRAY_OK);
    CHECK(size == 4);
    CHECK_STATUS(hurray_buffer_data_ptr(b, &data), HURRAY_OK);
    if (data != NULL && size == 4) {
        float value;
        memcpy(&value, data, sizeof value);
        CHECK(value == 1.5f);
    }
    CHECK_STATUS(hurray_buffer_destroy(b), HURRAY_OK);

    CHECK_STATUS(hurray_file_find(file, "cube", 4, &index), HURRAY_OK);
    CHECK_STATUS(hurray_file_tensor_descriptor(file, index, &d), HURRAY_OK);
    rank = 4;
    CHECK_STATUS(hurray_descriptor_shape(d, dims, &rank), HURRAY_OK);
    CHECK(rank == 3 && dims[0] == 2 && dims[1] == 3 && dims[2] == 4);
    CHECK_STATUS(hurray_descriptor_element_type_tag(d, &tag), HURRAY_OK);
    CHECK(tag == 0x12);  // int16
    CHECK_STATUS(hurray_descriptor_destroy(d), HURRAY_OK);
    CHECK_STATUS(hurray_file_tensor_buffer(file, index, 0, &b), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_byte_size(b, &size), HURRAY_OK);
    CHECK(size == 48);
    CHECK_STATUS(hurray_buffer_data_ptr(b, &data), HURRAY_OK);
    if (data != NULL && size == 48) {
        int16_t first;
        int16_t last;
        memcpy(&first, data, sizeof first);
        memcpy(&last, (const unsigned char*)data + 46, sizeof last);
        CHECK(first == -12 && last == 11);
    }
    CHECK_STATUS(hurray_buffer_destroy(b), HURRAY_OK);

    CHECK_STATUS(hurray_file_find(file, "line", 4, &index), HURRAY_OK);
    CHECK_STATUS(hurray_file_tensor_descriptor(file, index, &d), HURRAY_OK);
    CHECK_STATUS(hurray_descriptor_element_type_tag(d, &tag), HURRAY_OK);
    CHECK(tag == 0x04);  // float64
    CHECK_STATUS(hurray_descriptor_destroy(d), HURRAY_OK);
    hurray_file_close(file);
}

// Every function with each required pointer NULL: HURRAY_ERR_NULL_POINTER, no crash.
static void test_null_arguments(void) {
    HurrayFile* file = open_basic(0);
    HurrayDescriptor* d = NULL;
    HurrayBuffer* b = NULL;
    HurrayFile* out_file = NULL;
    HurrayDescriptor* out_d = NULL;
    HurrayBuffer* out_b = NULL;
    uint64_t u64 = 0;
    uint32_t u32 = 0;
    int64_t i64 = 0;
    double f64 = 0;
    uint8_t u8 = 0;
    uintptr_t rank = 0;
    const char* text = NULL;
    size_t len = 0;
    void* data = NULL;
    const uint8_t one_byte = 0;
    char path[4096];
    if (file == NULL) {
        return;
    }
    join(path, sizeof path, g_conformance_dir, "files/basic.hrry");
    CHECK_STATUS(hurray_file_tensor_descriptor(file, 0, &d), HURRAY_OK);
    CHECK_STATUS(hurray_file_tensor_buffer(file, 0, 0, &b), HURRAY_OK);

    CHECK_NULL_ARG(hurray_file_open(NULL, 0, &out_file));
    CHECK(out_file == NULL);
    CHECK_NULL_ARG(hurray_file_open(path, 0, NULL));
    CHECK_NULL_ARG(hurray_file_open_memory(NULL, 0, 0, &out_file));
    CHECK_NULL_ARG(hurray_file_open_memory(&one_byte, 1, 0, NULL));
    CHECK_NULL_ARG(hurray_file_tensor_count(NULL, &u64));
    CHECK_NULL_ARG(hurray_file_tensor_count(file, NULL));
    CHECK_NULL_ARG(hurray_file_tensor_name(NULL, 0, &text, &len));
    CHECK_NULL_ARG(hurray_file_tensor_name(file, 0, NULL, &len));
    CHECK_NULL_ARG(hurray_file_tensor_name(file, 0, &text, NULL));
    CHECK_NULL_ARG(hurray_file_find(NULL, "bias", 4, &u64));
    CHECK_NULL_ARG(hurray_file_find(file, NULL, 4, &u64));
    CHECK_NULL_ARG(hurray_file_find(file, "bias", 4, NULL));
    CHECK_NULL_ARG(hurray_file_tensor_descriptor(NULL, 0, &out_d));
    CHECK(out_d == NULL);
    CHECK_NULL_ARG(hurray_file_tensor_descriptor(file, 0, NULL));
    CHECK_NULL_ARG(hurray_file_tensor_buffer(NULL, 0, 0, &out_b));
    CHECK(out_b == NULL);
    CHECK_NULL_ARG(hurray_file_tensor_buffer(file, 0, 0, NULL));
    CHECK_NULL_ARG(hurray_file_kv_count(NULL, &u64));
    CHECK_NULL_ARG(hurray_file_kv_count(file, NULL));
    CHECK_NULL_ARG(hurray_file_kv_key(NULL, 0, &text, &len));
    CHECK_NULL_ARG(hurray_file_kv_key(file, 0, NULL, &len));
    CHECK_NULL_ARG(hurray_file_kv_key(file, 0, &text, NULL));
    CHECK_NULL_ARG(hurray_file_kv_type(NULL, "producer", 8, &u8));
    CHECK_NULL_ARG(hurray_file_kv_type(file, NULL, 8, &u8));
    CHECK_NULL_ARG(hurray_file_kv_type(file, "producer", 8, NULL));
    CHECK_NULL_ARG(hurray_file_kv_get_string(NULL, "producer", 8, &text, &len));
    CHECK_NULL_ARG(hurray_file_kv_get_string(file, NULL, 8, &text, &len));
    CHECK_NULL_ARG(hurray_file_kv_get_string(file, "producer", 8, NULL, &len));
    CHECK_NULL_ARG(hurray_file_kv_get_string(file, "producer", 8, &text, NULL));
    CHECK_NULL_ARG(hurray_file_kv_get_int64(NULL, "tensor_count", 12, &i64));
    CHECK_NULL_ARG(hurray_file_kv_get_int64(file, NULL, 12, &i64));
    CHECK_NULL_ARG(hurray_file_kv_get_int64(file, "tensor_count", 12, NULL));
    CHECK_NULL_ARG(hurray_file_kv_get_uint64(NULL, "x", 1, &u64));
    CHECK_NULL_ARG(hurray_file_kv_get_uint64(file, NULL, 1, &u64));
    CHECK_NULL_ARG(hurray_file_kv_get_uint64(file, "x", 1, NULL));
    CHECK_NULL_ARG(hurray_file_kv_get_float64(NULL, "x", 1, &f64));
    CHECK_NULL_ARG(hurray_file_kv_get_float64(file, NULL, 1, &f64));
    CHECK_NULL_ARG(hurray_file_kv_get_float64(file, "x", 1, NULL));
    CHECK_NULL_ARG(hurray_file_kv_get_bool(NULL, "x", 1, &u8));
    CHECK_NULL_ARG(hurray_file_kv_get_bool(file, NULL, 1, &u8));
    CHECK_NULL_ARG(hurray_file_kv_get_bool(file, "x", 1, NULL));

    CHECK_NULL_ARG(hurray_descriptor_decode(NULL, 0, &out_d));
    CHECK_NULL_ARG(hurray_descriptor_decode(&one_byte, 1, NULL));
    CHECK_NULL_ARG(hurray_descriptor_destroy(NULL));
    CHECK_NULL_ARG(hurray_descriptor_element_type_tag(NULL, &u8));
    CHECK_NULL_ARG(hurray_descriptor_element_type_tag(d, NULL));
    CHECK_NULL_ARG(hurray_descriptor_layout_tag(NULL, &u8));
    CHECK_NULL_ARG(hurray_descriptor_layout_tag(d, NULL));
    CHECK_NULL_ARG(hurray_descriptor_rank(NULL, &u32));
    CHECK_NULL_ARG(hurray_descriptor_rank(d, NULL));
    CHECK_NULL_ARG(hurray_descriptor_shape(NULL, &u64, &rank));
    CHECK_NULL_ARG(hurray_descriptor_shape(d, &u64, NULL));
    CHECK_NULL_ARG(hurray_descriptor_byte_offset(NULL, &u64));
    CHECK_NULL_ARG(hurray_descriptor_byte_offset(d, NULL));
    CHECK_NULL_ARG(hurray_descriptor_buffer_count(NULL, &u32));
    CHECK_NULL_ARG(hurray_descriptor_buffer_count(d, NULL));

    CHECK_NULL_ARG(hurray_buffer_destroy(NULL));
    CHECK_NULL_ARG(hurray_buffer_data_ptr(NULL, &data));
    CHECK_NULL_ARG(hurray_buffer_data_ptr(b, NULL));
    CHECK_NULL_ARG(hurray_buffer_byte_size(NULL, &u64));
    CHECK_NULL_ARG(hurray_buffer_byte_size(b, NULL));
    CHECK_NULL_ARG(hurray_buffer_alignment(NULL, &u32));
    CHECK_NULL_ARG(hurray_buffer_alignment(b, NULL));
    CHECK_NULL_ARG(hurray_buffer_device_tag(NULL, &u8));
    CHECK_NULL_ARG(hurray_buffer_device_tag(b, NULL));
    CHECK_NULL_ARG(hurray_buffer_sync_mode(NULL, &u8));
    CHECK_NULL_ARG(hurray_buffer_sync_mode(b, NULL));
    CHECK_NULL_ARG(hurray_buffer_memory_class(NULL, &u8));
    CHECK_NULL_ARG(hurray_buffer_memory_class(b, NULL));

    CHECK_STATUS(hurray_descriptor_destroy(d), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_destroy(b), HURRAY_OK);
    hurray_file_close(file);
}

// Release callback of test_buffer_from_ptr: counts its calls, checks its arguments.
static int g_releases = 0;
static void* g_released_data = NULL;
static void count_release(void* data, void* context) {
    ++g_releases;
    g_released_data = data;
    CHECK(context == (void*)&g_releases);
}

static void test_buffer_from_ptr(void) {
    unsigned char* block = (unsigned char*)malloc(256 + 64);
    unsigned char* aligned;
    HurrayBuffer* b = NULL;
    void* data = NULL;
    uint64_t size = 0;
    uint32_t alignment = 0;
    uint8_t tag = 0xAA;
    CHECK(block != NULL);
    if (block == NULL) {
        return;
    }
    aligned = block + (64 - (uintptr_t)block % 64) % 64;

    CHECK_STATUS(hurray_buffer_from_ptr(aligned, 256, 64, 0, 0, 0, count_release, &g_releases, &b), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_data_ptr(b, &data), HURRAY_OK);
    CHECK(data == aligned);
    CHECK_STATUS(hurray_buffer_byte_size(b, &size), HURRAY_OK);
    CHECK(size == 256);
    CHECK_STATUS(hurray_buffer_alignment(b, &alignment), HURRAY_OK);
    CHECK(alignment == 64);
    CHECK_STATUS(hurray_buffer_device_tag(b, &tag), HURRAY_OK);
    CHECK(tag == 0);
    CHECK(g_releases == 0);
    CHECK_STATUS(hurray_buffer_destroy(b), HURRAY_OK);
    CHECK(g_releases == 1);  // exactly once, with the creation arguments
    CHECK(g_released_data == aligned);

    // A CUDA buffer that the consumer synchronises with an event: metadata only.
    CHECK_STATUS(hurray_buffer_from_ptr(aligned, 64, 64, 0x01, 0x01, 0x00, NULL, NULL, &b),
                 HURRAY_OK);
    CHECK_STATUS(hurray_buffer_sync_mode(b, &tag), HURRAY_OK);
    CHECK(tag == 0x01);
    CHECK_STATUS(hurray_buffer_destroy(b), HURRAY_OK);  // no callback: nothing called
    CHECK(g_releases == 1);

    // Rejected: nothing is called, the memory stays the caller's.
    b = (HurrayBuffer*)&g_passed;
    CHECK_STATUS(hurray_buffer_from_ptr(aligned, 64, 64, 0, 3, 0, count_release, &g_releases, &b),
                 HURRAY_ERR_INVALID_SYNC_MODE);
    CHECK(b == NULL);
    CHECK_STATUS(hurray_buffer_from_ptr(aligned, 64, 64, 0x09, 0, 0, count_release, &g_releases, &b),
                 HURRAY_ERR_INVALID_TYPE);
    CHECK_STATUS(hurray_buffer_from_ptr(aligned, 64, 64, 0, 0, 0x04, count_release, &g_releases, &b),
                 HURRAY_ERR_INVALID_TYPE);
    CHECK_STATUS(hurray_buffer_from_ptr(aligned, 64, 48, 0, 0, 0, count_release, &g_releases, &b),
                 HURRAY_ERR_INVALID_LAYOUT);  // not a power of two
    CHECK_STATUS(hurray_buffer_from_ptr(aligned, 64, 32, 0, 0, 0, count_release, &g_releases, &b),
                 HURRAY_ERR_INVALID_LAYOUT);  // below 64
    CHECK_STATUS(hurray_buffer_from_ptr(aligned + 8, 64, 64, 0, 0, 0, count_release, &g_releases, &b),
                 HURRAY_ERR_INVALID_LAYOUT);  // data not aligned as declared
    CHECK(strstr(hurray_last_error_message(), "aligned") != NULL);
    CHECK(hurray_buffer_from_ptr(aligned, 64, 64, 0, 0x01, 0, count_release, &g_releases, &b) < 0);  // CPU + event
    CHECK(b == NULL);
    CHECK_NULL_ARG(hurray_buffer_from_ptr(NULL, 64, 64, 0, 0, 0, count_release, &g_releases, &b));
    CHECK_NULL_ARG(hurray_buffer_from_ptr(aligned, 64, 64, 0, 0, 0, count_release, &g_releases, NULL));
    CHECK(g_releases == 1);
    free(block);
}

static void test_buffer_list(void) {
    HurrayFile* file = open_basic(0);
    HurrayBufferList* list = NULL;
    HurrayBuffer* from_file = NULL;
    HurrayBuffer* owned = NULL;
    HurrayBuffer* got = NULL;
    uint64_t len = 99;
    uint64_t size = 0;
    unsigned char* block = (unsigned char*)malloc(64 + 64);
    unsigned char* aligned;
    const int releases_before = g_releases;
    if (file == NULL || block == NULL) {
        hurray_file_close(file);
        free(block);
        return;
    }
    aligned = block + (64 - (uintptr_t)block % 64) % 64;
    CHECK_STATUS(hurray_buffer_list_new(2, &list), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_list_len(list, &len), HURRAY_OK);
    CHECK(len == 0);
    CHECK_STATUS(hurray_buffer_list_get(list, 0, &got), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    CHECK_STATUS(hurray_file_tensor_buffer(file, 0, 0, &from_file), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_from_ptr(aligned, 64, 64, 0, 0, 0, count_release, &g_releases, &owned), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_list_push(list, from_file), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_list_push(list, owned), HURRAY_OK);
    hurray_file_close(file);  // the list's file buffer keeps the file alive
    CHECK_STATUS(hurray_buffer_list_len(list, &len), HURRAY_OK);
    CHECK(len == 2);
    CHECK_STATUS(hurray_buffer_list_get(list, 0, &got), HURRAY_OK);
    CHECK(got == from_file);
    CHECK_STATUS(hurray_buffer_byte_size(got, &size), HURRAY_OK);
    CHECK(size == 16 || size == 3);
    CHECK_STATUS(hurray_buffer_list_get(list, 1, &got), HURRAY_OK);
    CHECK(got == owned);
    CHECK_STATUS(hurray_buffer_list_get(list, 2, &got), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    CHECK_STATUS(hurray_buffer_list_get(list, UINT64_MAX, &got), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);

    CHECK_NULL_ARG(hurray_buffer_list_new(0, NULL));
    CHECK_NULL_ARG(hurray_buffer_list_push(NULL, owned));
    CHECK_NULL_ARG(hurray_buffer_list_push(list, NULL));
    CHECK_NULL_ARG(hurray_buffer_list_len(NULL, &len));
    CHECK_NULL_ARG(hurray_buffer_list_len(list, NULL));
    CHECK_NULL_ARG(hurray_buffer_list_get(NULL, 0, &got));
    CHECK_NULL_ARG(hurray_buffer_list_get(list, 0, NULL));
    CHECK_NULL_ARG(hurray_buffer_list_destroy(NULL));

    CHECK(g_releases == releases_before);
    CHECK_STATUS(hurray_buffer_list_destroy(&list), HURRAY_OK);
    CHECK(list == NULL);
    CHECK(g_releases == releases_before + 1);  // the owned buffer's callback, once
    CHECK_STATUS(hurray_buffer_list_destroy(&list), HURRAY_OK);  // a no-op now
    CHECK(g_releases == releases_before + 1);
    free(block);
}

int main(int argc, char** argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: hurray_c_tests CONFORMANCE_DIR KV_FILE TMP_DIR\n");
        return 2;
    }
    g_conformance_dir = argv[1];
    g_kv_file = argv[2];
    g_tmp_dir = argv[3];

    test_version();  // first: checks that no error has been recorded yet
    test_basic_file(0);
    test_basic_file(HURRAY_FILE_NO_MMAP);
    test_buffer_after_close(0);
    test_buffer_after_close(HURRAY_FILE_NO_MMAP);
    test_tensor_buffers_and_bytes(0);
    test_tensor_buffers_and_bytes(HURRAY_FILE_NO_MMAP);
    test_to_float32(0);
    test_to_float32(HURRAY_FILE_NO_MMAP);
    test_names_and_quantization();
    test_flags();
    test_open_memory();
    test_bad_files();
    test_descriptor_decode();
    test_kv_file();
    test_null_arguments();
    test_buffer_from_ptr();
    test_buffer_list();
    context_tests();
    writer_tests();
    stream_tests();
    dlpack_tests();
    thread_tests();
    reference_compat_tests();
    convert_tests();
    descriptor_table_tests();
    error_code_tests();

    printf("%d passed, %d failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
