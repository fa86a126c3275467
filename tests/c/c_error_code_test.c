// SPDX-License-Identifier: Apache-2.0
// Errors as data in C (issue 30): hurray_last_error_code() and
// hurray_last_error_offset() give the precise library code and byte offset of
// every class of failure, without reading the message; hurray_error_code_name()
// names each code as the message begins.
#include <stdlib.h>

#include "c_test_util.h"

// The last failure was a library error: its code is `code`, its message begins
// with the code's name, and its offset is `offset` (the message says "at byte N")
// or HURRAY_NO_OFFSET.
static void check_last(int32_t code, uint64_t offset) {
    const char* name = hurray_error_code_name(code);
    const char* message = hurray_last_error_message();
    CHECK(hurray_last_error_code() == code);
    CHECK(hurray_last_error_offset() == offset);
    CHECK(strncmp(message, name, strlen(name)) == 0);
    if (offset != HURRAY_NO_OFFSET) {
        char at[48];
        snprintf(at, sizeof at, "at byte %llu", (unsigned long long)offset);
        CHECK(strstr(message, at) != NULL);
    }
    if (hurray_last_error_code() != code || hurray_last_error_offset() != offset) {
        fprintf(stderr, "  expected %s (%d) at %llu, got %s (%d) at %llu: %s\n", name, (int)code,
                (unsigned long long)offset, hurray_error_code_name(hurray_last_error_code()),
                (int)hurray_last_error_code(), (unsigned long long)hurray_last_error_offset(), message);
    }
}

static uint64_t le64(const uint8_t* p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) {
        v = (v << 8) | p[i];
    }
    return v;
}

static void names(void) {
    CHECK(strcmp(hurray_error_code_name(HURRAY_CODE_NONE), "none") == 0);
    CHECK(strcmp(hurray_error_code_name(HURRAY_CODE_TRUNCATED), "truncated") == 0);
    CHECK(strcmp(hurray_error_code_name(HURRAY_CODE_INVALID_LAYOUT), "invalid_layout") == 0);
    CHECK(strcmp(hurray_error_code_name(HURRAY_CODE_CHECKSUM_MISMATCH), "checksum_mismatch") == 0);
    CHECK(strcmp(hurray_error_code_name(HURRAY_CODE_OUT_OF_MEMORY), "out_of_memory") == 0);
    CHECK(strcmp(hurray_error_code_name(HURRAY_CODE_INTERNAL), "internal") == 0);
    CHECK(strcmp(hurray_error_code_name(HURRAY_CODE_CANCELLED), "cancelled") == 0);
    CHECK(strcmp(hurray_error_code_name(47), "unknown") == 0);
    CHECK(strcmp(hurray_error_code_name(-2), "unknown") == 0);
    for (int32_t c = 1; c <= HURRAY_CODE_CANCELLED; ++c) {
        CHECK(strcmp(hurray_error_code_name(c), "unknown") != 0);
    }
}

// Files: the conformance file basic.hrry corrupted in several ways.
static void files(void) {
    char path[1024];
    join(path, sizeof path, g_conformance_dir, "files/basic.hrry");
    size_t len = 0;
    uint8_t* good = read_all(path, &len);
    CHECK(good != NULL && len > 200);
    if (good == NULL || len <= 200) {
        free(good);
        return;
    }
    uint8_t* bad = (uint8_t*)malloc(len);
    HurrayFile* file = NULL;
    const uint64_t trailer = len - 40;
    const uint64_t index_offset = le64(good + trailer);  // the trailer's first field

    // The header's magic: invalid_magic at byte 0.
    memcpy(bad, good, len);
    bad[0] ^= 0x20;
    CHECK_STATUS(hurray_file_open_memory(bad, len, 0, &file), HURRAY_ERR_INVALID_MAGIC);
    check_last(HURRAY_CODE_INVALID_MAGIC, 0);

    // A byte of the index: its CRC-32C no longer matches (reported at the
    // trailer's index_crc32c field, 28 bytes into the trailer).
    memcpy(bad, good, len);
    bad[index_offset + 3] ^= 0x01;
    CHECK_STATUS(hurray_file_open_memory(bad, len, 0, &file), HURRAY_ERR_INVALID_FILE);
    check_last(HURRAY_CODE_CHECKSUM_MISMATCH, trailer + 28);

    // Shorter than a header and a trailer: truncated, at the end of the input.
    CHECK_STATUS(hurray_file_open_memory(good, 50, 0, &file), HURRAY_ERR_TRUNCATED);
    CHECK(hurray_last_error_code() == HURRAY_CODE_TRUNCATED);
    CHECK(hurray_last_error_offset() != HURRAY_NO_OFFSET);

    // A missing file: io_error, no offset; the file is named as data.
    join(path, sizeof path, g_tmp_dir, "no-such-file.hrry");
    CHECK_STATUS(hurray_file_open(path, 0, &file), HURRAY_ERR_IO);
    check_last(HURRAY_CODE_IO_ERROR, HURRAY_NO_OFFSET);
    CHECK(strcmp(hurray_last_error_file(), path) == 0);
    CHECK(strcmp(hurray_last_error_tensor(), "") == 0);
    // A NULL argument after it names no file: the earlier failure's is gone.
    CHECK(hurray_file_open(NULL, 0, &file) == HURRAY_ERR_NULL_POINTER);
    CHECK(strcmp(hurray_last_error_file(), "") == 0);
    CHECK(strcmp(hurray_last_error_tensor(), "") == 0);
    CHECK(hurray_last_error_offset() == HURRAY_NO_OFFSET);

    // The first tensor's descriptor ("weights"; the first "HRRY" after the
    // header followed by version_major 1) gets an unknown major version: the
    // failure names the tensor as data, at open or when the tensor is read.
    memcpy(bad, good, len);
    size_t magic_at = 0;
    for (size_t k = 8; k + 4 < len; ++k) {
        if (memcmp(bad + k, "HRRY", 4) == 0 && bad[k + 4] == 1) {
            magic_at = k;
            break;
        }
    }
    CHECK(magic_at != 0);
    bad[magic_at + 4] = 9;
    HurrayStatus st = hurray_file_open_memory(bad, len, HURRAY_FILE_NO_MMAP, &file);
    if (st == HURRAY_OK) {
        HurrayDescriptor* d = NULL;
        st = hurray_file_tensor_descriptor(file, 0, &d);
        if (st == HURRAY_OK) {
            hurray_descriptor_destroy(d);
        }
        hurray_file_close(file);
        file = NULL;
    }
    CHECK(st == HURRAY_ERR_VERSION_MISMATCH);
    CHECK(hurray_last_error_code() == HURRAY_CODE_UNSUPPORTED_VERSION);
    CHECK(strcmp(hurray_last_error_tensor(), "weights") == 0);
    if (strcmp(hurray_last_error_tensor(), "weights") != 0) {
        fprintf(stderr, "  tensor \"%s\": %s\n", hurray_last_error_tensor(), hurray_last_error_message());
    }

    // On a good file: a name that is not there, and a KV value of another type.
    CHECK_STATUS(hurray_file_open_memory(good, len, 0, &file), HURRAY_OK);
    uint64_t index = 0;
    CHECK_STATUS(hurray_file_find(file, "absent", 6, &index), HURRAY_ERR_NOT_FOUND);
    check_last(HURRAY_CODE_NOT_FOUND, HURRAY_NO_OFFSET);
    int64_t count = 0;
    CHECK_STATUS(hurray_file_kv_get_int64(file, "tensor_count", 12, &count), HURRAY_OK);
    const char* text = NULL;
    size_t text_len = 0;
    CHECK_STATUS(hurray_file_kv_get_string(file, "tensor_count", 12, &text, &text_len), HURRAY_ERR_TYPE_MISMATCH);
    CHECK(hurray_last_error_code() == HURRAY_CODE_TYPE_MISMATCH);

    // Failures the C layer detects itself give their class: invalid_argument.
    const char* name = NULL;
    size_t name_len = 0;
    CHECK_STATUS(hurray_file_tensor_name(file, 99, &name, &name_len), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    CHECK(hurray_last_error_code() == HURRAY_CODE_INVALID_ARGUMENT);
    CHECK(hurray_last_error_offset() == HURRAY_NO_OFFSET);
    CHECK_NULL_ARG(hurray_file_tensor_count(file, NULL));
    CHECK(hurray_last_error_code() == HURRAY_CODE_INVALID_ARGUMENT);
    CHECK(hurray_last_error_offset() == HURRAY_NO_OFFSET);

    // A success leaves the last error as it is.
    CHECK_STATUS(hurray_file_tensor_count(file, &index), HURRAY_OK);
    CHECK(hurray_last_error_code() == HURRAY_CODE_INVALID_ARGUMENT);
    hurray_file_close(file);
    free(bad);
    free(good);
}

// Descriptors: 23 codes share HURRAY_ERR_INVALID_LAYOUT; the code tells them apart.
static void descriptors(void) {
    const uint64_t dims[2] = {2, 3};
    HurrayDescriptor* d = NULL;
    CHECK_STATUS(hurray_descriptor_new_dense(0x01 /* float32 */, 2, dims, &d), HURRAY_OK);
    uint8_t bytes[256];
    size_t n = 0;
    CHECK_STATUS(hurray_descriptor_encode(d, bytes, sizeof bytes, &n), HURRAY_OK);
    hurray_descriptor_destroy(d);
    CHECK(n > 16 && n <= sizeof bytes);
    if (n <= 16 || n > sizeof bytes) {
        return;
    }
    HurrayDescriptor* out = NULL;
    // The magic, at its first wrong byte.
    uint8_t bad[256];
    memcpy(bad, bytes, n);
    bad[1] = 'X';
    CHECK_STATUS(hurray_descriptor_decode(bad, n, &out), HURRAY_ERR_INVALID_MAGIC);
    check_last(HURRAY_CODE_INVALID_MAGIC, 1);
    // A reserved bit of the descriptor's flags (a u32 at byte 10; bits 0-4 defined).
    memcpy(bad, bytes, n);
    bad[10] |= 0x80;
    CHECK_STATUS(hurray_descriptor_decode(bad, n, &out), HURRAY_ERR_INVALID_LAYOUT);
    check_last(HURRAY_CODE_RESERVED_FLAG_BITS, 10);
    // Cut short: the reference reports INVALID_LAYOUT; the code says truncated.
    CHECK_STATUS(hurray_descriptor_decode(bytes, 9, &out), HURRAY_ERR_INVALID_LAYOUT);
    CHECK(hurray_last_error_code() == HURRAY_CODE_TRUNCATED);
}

void error_code_tests(void) {
    names();
    files();
    descriptors();
}
