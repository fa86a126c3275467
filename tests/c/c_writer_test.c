// SPDX-License-Identifier: Apache-2.0
// C tests of the C ABI: writing files. Every file written here is read back
// through the C read API (hurray_file_open validates the whole container
// strictly) and compared: names, descriptors, data bytes, KV values.
#define _POSIX_C_SOURCE 200809L  // open(2), close(2), mkdir(2), opendir(3): fd mode, temporary files

#include "c_test_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

// ---------------------------------------------------------------------------
// Helpers

static void tmp_path(char* out, size_t size, const char* name) { join(out, size, g_tmp_dir, name); }

static int file_exists(const char* path) {
    FILE* f = fopen(path, "rb");
    if (f == NULL) {
        return 0;
    }
    fclose(f);
    return 1;
}

// Number of temporary files (".NAME.tmp-XXXXXX") of `name` left in g_tmp_dir.
static int temp_files_of(const char* name) {
    char prefix[512];
    DIR* dir = opendir(g_tmp_dir);
    struct dirent* entry;
    int count = 0;
    if (dir == NULL) {
        return -1;
    }
    snprintf(prefix, sizeof prefix, ".%s.tmp-", name);
    while ((entry = readdir(dir)) != NULL) {
        if (strncmp(entry->d_name, prefix, strlen(prefix)) == 0) {
            ++count;
        }
    }
    closedir(dir);
    return count;
}

static int bytes_are(const char* got, size_t got_len, const char* want, size_t want_len) {
    return got != NULL && got_len == want_len && (want_len == 0 || memcmp(got, want, want_len) == 0);
}

static int text_is(const char* got, size_t got_len, const char* want) {
    return bytes_are(got, got_len, want, strlen(want)) && got[got_len] == '\0';
}

static int message_has(const char* needle) { return strstr(hurray_last_error_message(), needle) != NULL; }

// A dense descriptor, checked to be created.
static HurrayDescriptor* dense(uint8_t tag, uint32_t rank, const uint64_t* dims) {
    HurrayDescriptor* d = NULL;
    CHECK_STATUS(hurray_descriptor_new_dense(tag, rank, dims, &d), HURRAY_OK);
    return d;
}

// Tensor `index` of `file` is `name` with this type and shape, and one buffer
// holding exactly the `size` bytes at `data`.
static void check_tensor(const HurrayFile* file, uint64_t index, const char* name, uint8_t tag, uint32_t rank,
                         const uint64_t* dims, const void* data, uint64_t size) {
    const char* got_name = NULL;
    size_t name_len = 0;
    HurrayDescriptor* d = NULL;
    HurrayBuffer* b = NULL;
    uint8_t got_tag = 0;
    uint32_t got_rank = 99;
    uint32_t buffers = 0;
    uint64_t got_dims[8] = {0};
    uintptr_t cap = 8;
    uint64_t got_size = 0;
    void* got_data = NULL;
    uint64_t found = 99;
    uint32_t i;

    CHECK_STATUS(hurray_file_tensor_name(file, index, &got_name, &name_len), HURRAY_OK);
    CHECK(text_is(got_name, name_len, name));
    CHECK_STATUS(hurray_file_find(file, name, strlen(name), &found), HURRAY_OK);
    CHECK(found == index);
    CHECK_STATUS(hurray_file_tensor_descriptor(file, index, &d), HURRAY_OK);
    if (d == NULL) {
        return;
    }
    CHECK_STATUS(hurray_descriptor_element_type_tag(d, &got_tag), HURRAY_OK);
    CHECK(got_tag == tag);
    CHECK_STATUS(hurray_descriptor_layout_tag(d, &got_tag), HURRAY_OK);
    CHECK(got_tag == 0x01);  // row-major
    CHECK_STATUS(hurray_descriptor_rank(d, &got_rank), HURRAY_OK);
    CHECK(got_rank == rank);
    CHECK_STATUS(hurray_descriptor_shape(d, got_dims, &cap), HURRAY_OK);
    CHECK(cap == rank);
    for (i = 0; i < rank && i < 8; ++i) {
        CHECK(got_dims[i] == dims[i]);
    }
    CHECK_STATUS(hurray_descriptor_buffer_count(d, &buffers), HURRAY_OK);
    CHECK(buffers == 1);
    CHECK_STATUS(hurray_descriptor_buffer_size(d, 0, &got_size), HURRAY_OK);
    CHECK(got_size == size);
    CHECK_STATUS(hurray_descriptor_destroy(d), HURRAY_OK);

    CHECK_STATUS(hurray_file_tensor_buffer(file, index, 0, &b), HURRAY_OK);
    if (b == NULL) {
        return;
    }
    CHECK_STATUS(hurray_buffer_byte_size(b, &got_size), HURRAY_OK);
    CHECK(got_size == size);
    CHECK_STATUS(hurray_buffer_data_ptr(b, &got_data), HURRAY_OK);
    CHECK(size == 0 || (got_data != NULL && got_size == size && memcmp(got_data, data, (size_t)size) == 0));
    CHECK_STATUS(hurray_buffer_destroy(b), HURRAY_OK);
}

// Release callback of the buffers given through a buffer list.
static int g_writer_releases = 0;
static void count_writer_release(void* data, void* context) {
    (void)data;
    CHECK(context == (void*)&g_writer_releases);
    ++g_writer_releases;
}

// 64-byte aligned memory inside a malloc'ed block (buffer_from_ptr wants it).
static unsigned char* aligned64(unsigned char* block) { return block + (64 - (uintptr_t)block % 64) % 64; }

// ---------------------------------------------------------------------------
// Descriptors built from C

static void test_new_dense(void) {
    static const uint64_t dims3[3] = {2, 3, 4};
    static const uint64_t bits[1] = {10};
    static const uint64_t nibbles[1] = {5};
    static const uint64_t none[2] = {0, 4};
    static const uint64_t huge[2] = {UINT64_C(1) << 40, UINT64_C(1) << 40};
    uint64_t many[65];
    HurrayDescriptor* d = NULL;
    HurrayDescriptor* back = NULL;
    uint64_t size = 0;
    uint64_t offset = 9;
    uint8_t tag = 0;
    uint32_t rank = 99;
    uint32_t count = 0;
    uint64_t got_dims[3] = {0, 0, 0};
    uintptr_t cap = 3;
    uint8_t wire[512];
    size_t wire_len = 0;
    size_t i;

    // Rank 3 int16: 48 bytes in one buffer.
    d = dense(0x12, 3, dims3);
    CHECK_STATUS(hurray_descriptor_element_type_tag(d, &tag), HURRAY_OK);
    CHECK(tag == 0x12);
    CHECK_STATUS(hurray_descriptor_layout_tag(d, &tag), HURRAY_OK);
    CHECK(tag == 0x01);
    CHECK_STATUS(hurray_descriptor_rank(d, &rank), HURRAY_OK);
    CHECK(rank == 3);
    CHECK_STATUS(hurray_descriptor_shape(d, got_dims, &cap), HURRAY_OK);
    CHECK(cap == 3 && got_dims[0] == 2 && got_dims[1] == 3 && got_dims[2] == 4);
    CHECK_STATUS(hurray_descriptor_byte_offset(d, &offset), HURRAY_OK);
    CHECK(offset == 0);
    CHECK_STATUS(hurray_descriptor_buffer_count(d, &count), HURRAY_OK);
    CHECK(count == 1);
    CHECK_STATUS(hurray_descriptor_buffer_size(d, 0, &size), HURRAY_OK);
    CHECK(size == 48);
    size = 7;
    CHECK_STATUS(hurray_descriptor_buffer_size(d, 1, &size), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    CHECK(message_has("out of range"));
    CHECK(size == 7);  // untouched on failure
    CHECK_STATUS(hurray_descriptor_buffer_size(d, UINT32_MAX, &size), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);

    // Encode: ask for the size, too small, exact; the bytes decode to the same descriptor.
    wire_len = 0;
    CHECK_STATUS(hurray_descriptor_encode(d, NULL, 0, &wire_len), HURRAY_ERR_BUFFER_TOO_SMALL);
    CHECK(wire_len > 10 && wire_len <= sizeof wire);
    CHECK(message_has("needs"));
    memset(wire, 0xAB, sizeof wire);
    i = wire_len;
    CHECK_STATUS(hurray_descriptor_encode(d, wire, i - 1, &wire_len), HURRAY_ERR_BUFFER_TOO_SMALL);
    CHECK(wire_len == i);
    CHECK(wire[0] == 0xAB);  // nothing written
    CHECK_STATUS(hurray_descriptor_encode(d, NULL, sizeof wire, &wire_len), HURRAY_ERR_BUFFER_TOO_SMALL);
    CHECK_STATUS(hurray_descriptor_encode(d, wire, sizeof wire, &wire_len), HURRAY_OK);
    CHECK(wire_len == i);
    CHECK(memcmp(wire, "HRRY", 4) == 0);
    CHECK_STATUS(hurray_descriptor_decode(wire, wire_len, &back), HURRAY_OK);
    CHECK_STATUS(hurray_descriptor_buffer_size(back, 0, &size), HURRAY_OK);
    CHECK(size == 48);
    cap = 3;
    CHECK_STATUS(hurray_descriptor_shape(back, got_dims, &cap), HURRAY_OK);
    CHECK(cap == 3 && got_dims[2] == 4);
    CHECK_STATUS(hurray_descriptor_destroy(back), HURRAY_OK);
    CHECK_STATUS(hurray_descriptor_destroy(d), HURRAY_OK);

    // Rank 0 (dims may be NULL): one element.
    d = dense(0x03, 0, NULL);
    CHECK_STATUS(hurray_descriptor_rank(d, &rank), HURRAY_OK);
    CHECK(rank == 0);
    CHECK_STATUS(hurray_descriptor_buffer_size(d, 0, &size), HURRAY_OK);
    CHECK(size == 4);
    CHECK_STATUS(hurray_descriptor_destroy(d), HURRAY_OK);
    // Sub-byte and empty shapes.
    d = dense(0x20, 1, bits);  // bool: 8 per byte
    CHECK_STATUS(hurray_descriptor_buffer_size(d, 0, &size), HURRAY_OK);
    CHECK(size == 2);
    CHECK_STATUS(hurray_descriptor_destroy(d), HURRAY_OK);
    d = dense(0x48, 1, nibbles);  // int4: 2 per byte
    CHECK_STATUS(hurray_descriptor_buffer_size(d, 0, &size), HURRAY_OK);
    CHECK(size == 3);
    CHECK_STATUS(hurray_descriptor_destroy(d), HURRAY_OK);
    d = dense(0x11, 2, none);
    CHECK_STATUS(hurray_descriptor_buffer_size(d, 0, &size), HURRAY_OK);
    CHECK(size == 0);
    CHECK_STATUS(hurray_descriptor_destroy(d), HURRAY_OK);

    // Rejected: *out is NULLed.
    d = (HurrayDescriptor*)&g_passed;
    CHECK_STATUS(hurray_descriptor_new_dense(0x00, 1, bits, &d), HURRAY_ERR_INVALID_TYPE);
    CHECK(d == NULL);
    CHECK(message_has("element type"));
    CHECK_STATUS(hurray_descriptor_new_dense(0x47, 1, bits, &d), HURRAY_ERR_INVALID_TYPE);  // reserved
    CHECK_STATUS(hurray_descriptor_new_dense(0xF0, 1, bits, &d), HURRAY_ERR_INVALID_TYPE);  // private
    CHECK_STATUS(hurray_descriptor_new_dense(0xFF, 1, bits, &d), HURRAY_ERR_INVALID_TYPE);
    for (i = 0; i < 65; ++i) {
        many[i] = 1;
    }
    d = (HurrayDescriptor*)&g_passed;
    CHECK_STATUS(hurray_descriptor_new_dense(0x03, 65, many, &d), HURRAY_ERR_INVALID_LAYOUT);
    CHECK(d == NULL);
    CHECK_STATUS(hurray_descriptor_new_dense(0x03, UINT32_MAX, many, &d), HURRAY_ERR_INVALID_LAYOUT);
    CHECK_STATUS(hurray_descriptor_new_dense(0x03, 64, many, &d), HURRAY_OK);  // the maximum rank
    CHECK_STATUS(hurray_descriptor_destroy(d), HURRAY_OK);
    d = (HurrayDescriptor*)&g_passed;
    CHECK(hurray_descriptor_new_dense(0x03, 2, huge, &d) < 0);  // 2^80 elements: the byte size overflows
    CHECK(d == NULL);
    CHECK(strlen(hurray_last_error_message()) > 0);
}

// ---------------------------------------------------------------------------
// The example of docs/c-api.md ("Writing files"), run as written.

static void test_doc_example(void) {
    char path_buffer[4096];
    const char* path = path_buffer;
    HurrayFile* file = NULL;
    double ratio = 0;
    tmp_path(path_buffer, sizeof path_buffer, "c_writer_example.hrry");
    {
        // readme:begin c_writer_example
        HurrayFileWriter* w = NULL;
        HurrayDescriptor* d = NULL;
        const float weights[6] = {1, 2, 3, 4, 5, 6};
        const uint64_t dims[2] = {2, 3};
        const void* buffers[1] = {weights};
        const uint64_t sizes[1] = {sizeof weights};

        HurrayStatus st = hurray_file_writer_create(path, 0, &w);  // a temporary file next to `path`
        if (st == HURRAY_OK) st = hurray_descriptor_new_dense(0x03 /* float32 */, 2, dims, &d);
        if (st == HURRAY_OK) st = hurray_file_writer_add_tensor(w, "weights", 7, d, buffers, sizes, 1);
        if (st == HURRAY_OK) st = hurray_file_writer_set_string(w, "general.architecture", 20, "demo", 4);
        if (st == HURRAY_OK) st = hurray_file_writer_set_float64(w, "ratio", 5, 0.5);
        if (st == HURRAY_OK) st = hurray_file_writer_finish(&w);  // index, fsync, rename; frees w
        if (st != HURRAY_OK) fprintf(stderr, "writing %s: %s\n", path, hurray_last_error_message());
        hurray_file_writer_abort(&w);  // frees w after an earlier failure; a no-op once finished
        if (d != NULL) hurray_descriptor_destroy(d);
        // readme:end c_writer_example
        CHECK(st == HURRAY_OK);
        CHECK(w == NULL);
    }
    CHECK_STATUS(hurray_file_open(path, 0, &file), HURRAY_OK);
    CHECK_STATUS(hurray_file_kv_get_float64(file, "ratio", 5, &ratio), HURRAY_OK);
    CHECK(ratio == 0.5);
    hurray_file_close(file);
}

// ---------------------------------------------------------------------------
// A file with tensors of rank 0, 1 and 3 and several types, written whole and
// in pieces, and a KV entry of every type.

static const float kScalar = 1.5f;
static const double kLine[3] = {0.5, -0.25, 8.0};
static const uint64_t kLineDims[1] = {3};
static const uint64_t kCubeDims[3] = {2, 3, 4};
static const uint64_t kMaskDims[1] = {10};
static const uint8_t kMask[2] = {0xA5, 0x02};  // 10 bools; the unused bits are zero
static const uint64_t kEmptyDims[2] = {0, 4};
static const uint64_t kBigDims[1] = {3000};  // 3000 uint32: 12,000 bytes, written in odd pieces
static const char kUnicodeName[] = "poids.\xC3\xA9t\xC3\xA9";  // "poids.été"
static const uint64_t kNanBits = UINT64_C(0x7FF8000000000123);

static void fill_cube(int16_t* cube) {
    int i;
    for (i = 0; i < 24; ++i) {
        cube[i] = (int16_t)(i * 37 - 400);
    }
}

static void fill_big(uint32_t* big) {
    uint32_t i;
    for (i = 0; i < 3000; ++i) {
        big[i] = i * 2654435761u;
    }
}

// Writes the tensors and KV entries into `w` (which it does not end).
static void write_everything(HurrayFileWriter* w) {
    HurrayDescriptor* d;
    HurrayBufferList* list = NULL;
    HurrayBuffer* b = NULL;
    unsigned char* block = (unsigned char*)malloc(64 + sizeof kLine);
    const void* one[1];
    uint64_t size[1];
    int16_t cube[24];
    uint32_t big[3000];
    const unsigned char* p;
    size_t at;
    double nan_value;
    double minus_zero = -0.0;
    static const int64_t i64s[3] = {-1, 0, INT64_MAX};
    static const uint64_t u64s[2] = {UINT64_MAX, 7};
    static const double f64s[3] = {0.125, -2.5, 1e300};
    static const uint8_t bools[5] = {1, 0, 0, 1, 7};  // 7 is true
    static const char* const words[3] = {"alpha", "", "\xCE\xB2\xC3\xABta"};  // NUL-terminated
    static const char* const counted[2] = {"ab\0cd", NULL};                   // with lengths; a NUL inside
    static const size_t counted_lens[2] = {5, 0};
    static const uint8_t blob_a[3] = {0, 1, 255};
    const void* blobs[3];
    size_t blob_lens[3];
    const int releases_before = g_writer_releases;

    fill_cube(cube);
    fill_big(big);
    memcpy(&nan_value, &kNanBits, sizeof nan_value);

    // Rank 0 float32, whole from memory.
    d = dense(0x03, 0, NULL);
    one[0] = &kScalar;
    size[0] = sizeof kScalar;
    CHECK_STATUS(hurray_file_writer_add_tensor(w, "scalar", 6, d, one, size, 1), HURRAY_OK);
    hurray_descriptor_destroy(d);

    // Rank 1 float64, whole from a buffer list (caller memory with a release callback).
    CHECK(block != NULL);
    if (block != NULL) {
        memcpy(aligned64(block), kLine, sizeof kLine);
        d = dense(0x04, 1, kLineDims);
        CHECK_STATUS(hurray_buffer_list_new(1, &list), HURRAY_OK);
        CHECK_STATUS(hurray_buffer_from_ptr(aligned64(block), sizeof kLine, 64, 0, 0, 0, count_writer_release,
                                            &g_writer_releases, &b),
                     HURRAY_OK);
        CHECK_STATUS(hurray_buffer_list_push(list, b), HURRAY_OK);
        CHECK_STATUS(hurray_file_writer_add_tensor_buffers(w, "line", 4, d, list), HURRAY_OK);
        CHECK(g_writer_releases == releases_before);  // the list and its buffers stay the caller's
        CHECK_STATUS(hurray_buffer_list_destroy(&list), HURRAY_OK);
        CHECK(g_writer_releases == releases_before + 1);
        hurray_descriptor_destroy(d);
        free(block);
    }

    // Rank 3 int16, in pieces of 7 bytes (they straddle elements).
    d = dense(0x12, 3, kCubeDims);
    CHECK_STATUS(hurray_file_writer_begin_tensor(w, "cube", 4, d), HURRAY_OK);
    p = (const unsigned char*)cube;
    for (at = 0; at < sizeof cube; at += 7) {
        const size_t n = sizeof cube - at < 7 ? sizeof cube - at : 7;
        CHECK_STATUS(hurray_file_writer_write(w, p + at, n), HURRAY_OK);
    }
    CHECK_STATUS(hurray_file_writer_write(w, NULL, 0), HURRAY_OK);  // an empty piece is fine
    CHECK_STATUS(hurray_file_writer_end_tensor(w), HURRAY_OK);
    hurray_descriptor_destroy(d);

    // Bool, a UTF-8 name; an empty tensor (a 0-byte buffer, NULL data); a
    // larger one in pieces of 4097 bytes.
    d = dense(0x20, 1, kMaskDims);
    one[0] = kMask;
    size[0] = sizeof kMask;
    CHECK_STATUS(hurray_file_writer_add_tensor(w, kUnicodeName, strlen(kUnicodeName), d, one, size, 1), HURRAY_OK);
    hurray_descriptor_destroy(d);
    d = dense(0x11, 2, kEmptyDims);
    one[0] = NULL;
    size[0] = 0;
    CHECK_STATUS(hurray_file_writer_add_tensor(w, "empty", 5, d, one, size, 1), HURRAY_OK);
    hurray_descriptor_destroy(d);
    d = dense(0x15, 1, kBigDims);
    CHECK_STATUS(hurray_file_writer_begin_tensor(w, "big", 3, d), HURRAY_OK);
    p = (const unsigned char*)big;
    for (at = 0; at < sizeof big; at += 4097) {
        const size_t n = sizeof big - at < 4097 ? sizeof big - at : 4097;
        CHECK_STATUS(hurray_file_writer_write(w, p + at, n), HURRAY_OK);
    }
    CHECK_STATUS(hurray_file_writer_end_tensor(w), HURRAY_OK);
    hurray_descriptor_destroy(d);

    // KV of every type.
    CHECK_STATUS(hurray_file_writer_set_string(w, "name", 4, "first", 5), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_set_int64(w, "offset", 6, INT64_MIN), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_set_uint64(w, "big", 3, UINT64_MAX), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_set_float64(w, "nan", 3, nan_value), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_set_float64(w, "minus_zero", 10, minus_zero), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_set_bool(w, "flag", 4, 1), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_set_bool(w, "other_flag", 10, 0), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_set_bytes(w, "blob", 4, blob_a, sizeof blob_a), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_set_bytes(w, "no_bytes", 8, NULL, 0), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_set_string(w, "no_text", 7, NULL, 0), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_set_int64_array(w, "i64s", 4, i64s, 3), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_set_int64_array(w, "no_i64s", 7, NULL, 0), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_set_uint64_array(w, "u64s", 4, u64s, 2), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_set_float64_array(w, "f64s", 4, f64s, 3), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_set_bool_array(w, "bools", 5, bools, 5), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_set_string_array(w, "words", 5, words, NULL, 3), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_set_string_array(w, "counted", 7, counted, counted_lens, 2), HURRAY_OK);
    blobs[0] = blob_a;
    blob_lens[0] = sizeof blob_a;
    blobs[1] = NULL;
    blob_lens[1] = 0;
    blobs[2] = "xyz";
    blob_lens[2] = 3;
    CHECK_STATUS(hurray_file_writer_set_bytes_array(w, "blobs", 5, blobs, blob_lens, 3), HURRAY_OK);
    // Setting a key again replaces its value and keeps its position (first).
    CHECK_STATUS(hurray_file_writer_set_string(w, "name", 4, "c-writer", 8), HURRAY_OK);
}

// Number of KV entries write_everything sets.
#define KV_ENTRIES 18u

// Reads back and checks what write_everything wrote.
static void check_everything(const HurrayFile* file) {
    int16_t cube[24];
    uint32_t big[3000];
    uint64_t count = 0;
    const char* text = NULL;
    size_t len = 0;
    const uint8_t* bytes = NULL;
    int64_t i64 = 0;
    uint64_t u64 = 0;
    double f64 = 0;
    uint8_t u8 = 9;
    uint8_t type = 0;
    size_t n = 0;
    const int64_t* i64s = NULL;
    const uint64_t* u64s = NULL;
    const double* f64s = NULL;
    uint8_t bools[8];
    uint64_t bits = 0;

    fill_cube(cube);
    fill_big(big);
    CHECK_STATUS(hurray_file_tensor_count(file, &count), HURRAY_OK);
    CHECK(count == 6);
    check_tensor(file, 0, "scalar", 0x03, 0, NULL, &kScalar, 4);
    check_tensor(file, 1, "line", 0x04, 1, kLineDims, kLine, sizeof kLine);
    check_tensor(file, 2, "cube", 0x12, 3, kCubeDims, cube, sizeof cube);
    check_tensor(file, 3, kUnicodeName, 0x20, 1, kMaskDims, kMask, sizeof kMask);
    check_tensor(file, 4, "empty", 0x11, 2, kEmptyDims, NULL, 0);
    check_tensor(file, 5, "big", 0x15, 1, kBigDims, big, sizeof big);

    CHECK_STATUS(hurray_file_kv_count(file, &count), HURRAY_OK);
    CHECK(count == KV_ENTRIES);
    CHECK_STATUS(hurray_file_kv_key(file, 0, &text, &len), HURRAY_OK);
    CHECK(text_is(text, len, "name"));
    CHECK_STATUS(hurray_file_kv_key(file, KV_ENTRIES - 1, &text, &len), HURRAY_OK);
    CHECK(text_is(text, len, "blobs"));
    CHECK_STATUS(hurray_file_kv_get_string(file, "name", 4, &text, &len), HURRAY_OK);
    CHECK(text_is(text, len, "c-writer"));
    CHECK_STATUS(hurray_file_kv_get_string(file, "no_text", 7, &text, &len), HURRAY_OK);
    CHECK(text_is(text, len, ""));
    CHECK_STATUS(hurray_file_kv_get_int64(file, "offset", 6, &i64), HURRAY_OK);
    CHECK(i64 == INT64_MIN);
    CHECK_STATUS(hurray_file_kv_get_uint64(file, "big", 3, &u64), HURRAY_OK);
    CHECK(u64 == UINT64_MAX);
    CHECK_STATUS(hurray_file_kv_get_float64(file, "nan", 3, &f64), HURRAY_OK);
    memcpy(&bits, &f64, sizeof bits);
    CHECK(bits == kNanBits);  // the NaN payload, bit for bit
    CHECK_STATUS(hurray_file_kv_get_float64(file, "minus_zero", 10, &f64), HURRAY_OK);
    memcpy(&bits, &f64, sizeof bits);
    CHECK(bits == UINT64_C(0x8000000000000000));
    CHECK_STATUS(hurray_file_kv_get_bool(file, "flag", 4, &u8), HURRAY_OK);
    CHECK(u8 == 1);
    CHECK_STATUS(hurray_file_kv_get_bool(file, "other_flag", 10, &u8), HURRAY_OK);
    CHECK(u8 == 0);
    CHECK_STATUS(hurray_file_kv_get_bytes(file, "blob", 4, &bytes, &len), HURRAY_OK);
    CHECK(len == 3 && bytes[0] == 0 && bytes[1] == 1 && bytes[2] == 255);
    CHECK_STATUS(hurray_file_kv_get_bytes(file, "no_bytes", 8, &bytes, &len), HURRAY_OK);
    CHECK(len == 0 && bytes != NULL);

    CHECK_STATUS(hurray_file_kv_type(file, "i64s", 4, &type), HURRAY_OK);
    CHECK(type == HURRAY_KV_ARRAY);
    CHECK_STATUS(hurray_file_kv_get_array_info(file, "i64s", 4, &type, &n), HURRAY_OK);
    CHECK(type == HURRAY_KV_INT64 && n == 3);
    CHECK_STATUS(hurray_file_kv_get_int64_array(file, "i64s", 4, &i64s, &n), HURRAY_OK);
    CHECK(n == 3 && i64s[0] == -1 && i64s[1] == 0 && i64s[2] == INT64_MAX);
    CHECK_STATUS(hurray_file_kv_get_int64_array(file, "no_i64s", 7, &i64s, &n), HURRAY_OK);
    CHECK(n == 0 && i64s != NULL);
    CHECK_STATUS(hurray_file_kv_get_array_info(file, "u64s", 4, &type, &n), HURRAY_OK);
    CHECK(type == HURRAY_KV_UINT64 && n == 2);
    CHECK_STATUS(hurray_file_kv_get_uint64_array(file, "u64s", 4, &u64s, &n), HURRAY_OK);
    CHECK(n == 2 && u64s[0] == UINT64_MAX && u64s[1] == 7);
    CHECK_STATUS(hurray_file_kv_get_float64_array(file, "f64s", 4, &f64s, &n), HURRAY_OK);
    CHECK(n == 3 && f64s[0] == 0.125 && f64s[1] == -2.5 && f64s[2] == 1e300);
    CHECK_STATUS(hurray_file_kv_get_array_info(file, "bools", 5, &type, &n), HURRAY_OK);
    CHECK(type == HURRAY_KV_BOOL && n == 5);
    memset(bools, 9, sizeof bools);
    n = sizeof bools;
    CHECK_STATUS(hurray_file_kv_get_bool_array(file, "bools", 5, bools, &n), HURRAY_OK);
    CHECK(n == 5 && bools[0] == 1 && bools[1] == 0 && bools[2] == 0 && bools[3] == 1 && bools[4] == 1);
    CHECK(bools[5] == 9);  // nothing past the array
    CHECK_STATUS(hurray_file_kv_get_array_info(file, "words", 5, &type, &n), HURRAY_OK);
    CHECK(type == HURRAY_KV_STRING && n == 3);
    CHECK_STATUS(hurray_file_kv_get_string_array_element(file, "words", 5, 0, &text, &len), HURRAY_OK);
    CHECK(text_is(text, len, "alpha"));
    CHECK_STATUS(hurray_file_kv_get_string_array_element(file, "words", 5, 1, &text, &len), HURRAY_OK);
    CHECK(text_is(text, len, ""));
    CHECK_STATUS(hurray_file_kv_get_string_array_element(file, "words", 5, 2, &text, &len), HURRAY_OK);
    CHECK(text_is(text, len, "\xCE\xB2\xC3\xABta"));
    CHECK_STATUS(hurray_file_kv_get_string_array_element(file, "counted", 7, 0, &text, &len), HURRAY_OK);
    CHECK(bytes_are(text, len, "ab\0cd", 5) && text[5] == '\0');
    CHECK_STATUS(hurray_file_kv_get_string_array_element(file, "counted", 7, 1, &text, &len), HURRAY_OK);
    CHECK(text_is(text, len, ""));
    CHECK_STATUS(hurray_file_kv_get_array_info(file, "blobs", 5, &type, &n), HURRAY_OK);
    CHECK(type == HURRAY_KV_BYTES && n == 3);
    CHECK_STATUS(hurray_file_kv_get_bytes_array_element(file, "blobs", 5, 0, &bytes, &len), HURRAY_OK);
    CHECK(len == 3 && bytes[2] == 255);
    CHECK_STATUS(hurray_file_kv_get_bytes_array_element(file, "blobs", 5, 1, &bytes, &len), HURRAY_OK);
    CHECK(len == 0 && bytes != NULL);
    CHECK_STATUS(hurray_file_kv_get_bytes_array_element(file, "blobs", 5, 2, &bytes, &len), HURRAY_OK);
    CHECK(bytes_are((const char*)bytes, len, "xyz", 3));
}

static void test_write_path(void) {
    char path[4096];
    HurrayFileWriter* w = NULL;
    HurrayFile* file = NULL;
    size_t len = 0;
    uint8_t* bytes;
    tmp_path(path, sizeof path, "c_writer_all.hrry");
    remove(path);

    CHECK_STATUS(hurray_file_writer_create(path, 0, &w), HURRAY_OK);
    CHECK(w != NULL);
    if (w == NULL) {
        return;
    }
    write_everything(w);
    CHECK(!file_exists(path));  // nothing at the path before finish
    CHECK(temp_files_of("c_writer_all.hrry") == 1);
    CHECK_STATUS(hurray_file_writer_finish(&w), HURRAY_OK);
    CHECK(w == NULL);
    CHECK(temp_files_of("c_writer_all.hrry") == 0);
    CHECK_STATUS(hurray_file_writer_abort(&w), HURRAY_OK);  // a no-op after finish

    // Strict (the default: full validation), mapped and read, and from memory.
    CHECK_STATUS(hurray_file_open(path, 0, &file), HURRAY_OK);
    if (file != NULL) {
        check_everything(file);
        hurray_file_close(file);
    }
    CHECK_STATUS(hurray_file_open(path, HURRAY_FILE_NO_MMAP, &file), HURRAY_OK);
    if (file != NULL) {
        check_everything(file);
        hurray_file_close(file);
    }
    bytes = read_all(path, &len);
    CHECK(bytes != NULL);
    if (bytes != NULL) {
        CHECK(memcmp(bytes, "HRRYFILE", 8) == 0);
        CHECK_STATUS(hurray_file_open_memory(bytes, len, 0, &file), HURRAY_OK);
        if (file != NULL) {
            check_everything(file);
            hurray_file_close(file);
        }
        free(bytes);
    }

    // Finishing over an existing file replaces it atomically.
    tmp_path(path, sizeof path, "c_writer_replaced.hrry");
    CHECK(write_all(path, "old content", 11));
    CHECK_STATUS(hurray_file_writer_create(path, 0, &w), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_set_int64(w, "generation", 10, 2), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_finish(&w), HURRAY_OK);
    CHECK_STATUS(hurray_file_open(path, 0, &file), HURRAY_OK);
    if (file != NULL) {
        uint64_t count = 9;
        int64_t generation = 0;
        CHECK_STATUS(hurray_file_tensor_count(file, &count), HURRAY_OK);
        CHECK(count == 0);
        CHECK_STATUS(hurray_file_kv_get_int64(file, "generation", 10, &generation), HURRAY_OK);
        CHECK(generation == 2);
        hurray_file_close(file);
    }
}

// Copies every tensor of the file test_write_path wrote into a new file, from
// the source file's own buffers (zero-copy handles in a buffer list), then
// closes the source before finishing: the buffers keep its memory alive.
static void test_copy_tensors(void) {
    char from[4096];
    char to[4096];
    HurrayFile* src = NULL;
    HurrayFile* copy = NULL;
    HurrayFileWriter* w = NULL;
    uint64_t count = 0;
    uint64_t i;
    tmp_path(from, sizeof from, "c_writer_all.hrry");
    tmp_path(to, sizeof to, "c_writer_copy.hrry");
    CHECK_STATUS(hurray_file_open(from, 0, &src), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_create(to, HURRAY_FILE_WRITER_SORTED_INDEX, &w), HURRAY_OK);
    if (src == NULL || w == NULL) {
        hurray_file_close(src);
        hurray_file_writer_abort(&w);
        return;
    }
    CHECK_STATUS(hurray_file_tensor_count(src, &count), HURRAY_OK);
    for (i = 0; i < count; ++i) {
        HurrayDescriptor* d = NULL;
        HurrayBufferList* list = NULL;
        HurrayBuffer* b = NULL;
        const char* name = NULL;
        size_t name_len = 0;
        uint32_t buffers = 0;
        uint32_t k;
        CHECK_STATUS(hurray_file_tensor_name(src, i, &name, &name_len), HURRAY_OK);
        CHECK_STATUS(hurray_file_tensor_descriptor(src, i, &d), HURRAY_OK);
        CHECK_STATUS(hurray_descriptor_buffer_count(d, &buffers), HURRAY_OK);
        CHECK_STATUS(hurray_buffer_list_new(buffers, &list), HURRAY_OK);
        for (k = 0; k < buffers; ++k) {
            CHECK_STATUS(hurray_file_tensor_buffer(src, i, k, &b), HURRAY_OK);
            CHECK_STATUS(hurray_buffer_list_push(list, b), HURRAY_OK);
        }
        CHECK_STATUS(hurray_file_writer_add_tensor_buffers(w, name, name_len, d, list), HURRAY_OK);
        CHECK_STATUS(hurray_buffer_list_destroy(&list), HURRAY_OK);
        CHECK_STATUS(hurray_descriptor_destroy(d), HURRAY_OK);
    }
    hurray_file_close(src);
    CHECK_STATUS(hurray_file_writer_finish(&w), HURRAY_OK);

    CHECK_STATUS(hurray_file_open(to, 0, &copy), HURRAY_OK);
    if (copy != NULL) {
        int16_t cube[24];
        uint32_t big[3000];
        uint64_t index = 0;
        fill_cube(cube);
        fill_big(big);
        CHECK_STATUS(hurray_file_tensor_count(copy, &count), HURRAY_OK);
        CHECK(count == 6);
        CHECK_STATUS(hurray_file_find(copy, "cube", 4, &index), HURRAY_OK);
        check_tensor(copy, index, "cube", 0x12, 3, kCubeDims, cube, sizeof cube);
        CHECK_STATUS(hurray_file_find(copy, "line", 4, &index), HURRAY_OK);
        check_tensor(copy, index, "line", 0x04, 1, kLineDims, kLine, sizeof kLine);
        check_tensor(copy, 0, "big", 0x15, 1, kBigDims, big, sizeof big);  // sorted: "big" first
        hurray_file_close(copy);
    }
}

static void test_write_fd(void) {
    char path[4096];
    HurrayFileWriter* w = NULL;
    HurrayFile* file = NULL;
    int fd;
    tmp_path(path, sizeof path, "c_writer_fd.hrry");
    remove(path);

    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    if (fd < 0) {
        return;
    }
    CHECK_STATUS(hurray_file_writer_create_fd(fd, 0, &w), HURRAY_OK);
    write_everything(w);
    CHECK_STATUS(hurray_file_writer_finish(&w), HURRAY_OK);
    CHECK(w == NULL);
    CHECK(close(fd) == 0);  // still open: the caller's to close
    CHECK_STATUS(hurray_file_open(path, 0, &file), HURRAY_OK);
    if (file != NULL) {
        check_everything(file);
        hurray_file_close(file);
    }

    // A descriptor open for reading only: the bytes held back fail at finish,
    // which still releases the writer.
    fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    if (fd >= 0) {
        HurrayDescriptor* d = dense(0x03, 0, NULL);
        const void* one[1];
        uint64_t size[1];
        one[0] = &kScalar;
        size[0] = sizeof kScalar;
        CHECK_STATUS(hurray_file_writer_create_fd(fd, 0, &w), HURRAY_OK);
        CHECK_STATUS(hurray_file_writer_add_tensor(w, "scalar", 6, d, one, size, 1), HURRAY_OK);
        CHECK_STATUS(hurray_file_writer_finish(&w), HURRAY_ERR_IO);
        CHECK(w == NULL);
        CHECK(strlen(hurray_last_error_message()) > 0);
        hurray_descriptor_destroy(d);
        close(fd);
    }
    // Aborting in descriptor mode leaves the descriptor open.
    fd = open(path, O_WRONLY | O_APPEND);
    CHECK(fd >= 0);
    if (fd >= 0) {
        CHECK_STATUS(hurray_file_writer_create_fd(fd, 0, &w), HURRAY_OK);
        CHECK_STATUS(hurray_file_writer_abort(&w), HURRAY_OK);
        CHECK(w == NULL);
        CHECK(close(fd) == 0);
    }

    w = (HurrayFileWriter*)&g_passed;
    CHECK_STATUS(hurray_file_writer_create_fd(-1, 0, &w), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(w == NULL);
    CHECK(message_has("fd"));
}

// SORTED_INDEX: the index lists the names in byte order; without it, in write order.
static void test_sorted_index(void) {
    static const char* const names[3] = {"zeta", "alpha", "mu"};
    char path[4096];
    HurrayFileWriter* w = NULL;
    HurrayFile* file = NULL;
    HurrayDescriptor* d = dense(0x10, 0, NULL);
    const int8_t value = -3;
    const void* one[1];
    uint64_t size[1];
    const char* name = NULL;
    size_t len = 0;
    uint64_t index = 0;
    int sorted;
    int pass;
    int i;
    one[0] = &value;
    size[0] = 1;
    /* 0: write order, 1: sorted, 2: write order saved without fsync (same content). */
    for (pass = 0; pass < 3; ++pass) {
        sorted = pass == 1;
        tmp_path(path, sizeof path,
                 pass == 1 ? "c_writer_sorted.hrry" : pass == 2 ? "c_writer_nofsync.hrry" : "c_writer_unsorted.hrry");
        CHECK_STATUS(hurray_file_writer_create(path,
                                               pass == 1   ? HURRAY_FILE_WRITER_SORTED_INDEX
                                               : pass == 2 ? HURRAY_FILE_WRITER_NO_FSYNC
                                                           : 0u,
                                               &w),
                     HURRAY_OK);
        for (i = 0; i < 3; ++i) {
            CHECK_STATUS(hurray_file_writer_add_tensor(w, names[i], strlen(names[i]), d, one, size, 1), HURRAY_OK);
        }
        CHECK_STATUS(hurray_file_writer_finish(&w), HURRAY_OK);
        CHECK_STATUS(hurray_file_open(path, 0, &file), HURRAY_OK);
        if (file == NULL) {
            continue;
        }
        CHECK_STATUS(hurray_file_tensor_name(file, 0, &name, &len), HURRAY_OK);
        CHECK(text_is(name, len, sorted ? "alpha" : "zeta"));
        CHECK_STATUS(hurray_file_tensor_name(file, 2, &name, &len), HURRAY_OK);
        CHECK(text_is(name, len, sorted ? "zeta" : "mu"));
        CHECK_STATUS(hurray_file_find(file, "mu", 2, &index), HURRAY_OK);
        CHECK(index == (sorted ? 1u : 2u));
        hurray_file_close(file);
    }
    hurray_descriptor_destroy(d);
}

// ---------------------------------------------------------------------------
// Abort, failed finish, and errors

static void test_abort(void) {
    char path[4096];
    size_t len = 0;
    uint8_t* before;
    uint8_t* after;
    HurrayFileWriter* w = NULL;
    HurrayDescriptor* d = dense(0x03, 0, NULL);
    const void* one[1];
    uint64_t size[1];
    one[0] = &kScalar;
    size[0] = sizeof kScalar;

    // Nothing at the path, before or after.
    tmp_path(path, sizeof path, "c_writer_aborted.hrry");
    remove(path);
    CHECK_STATUS(hurray_file_writer_create(path, 0, &w), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_add_tensor(w, "scalar", 6, d, one, size, 1), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_set_int64(w, "k", 1, 1), HURRAY_OK);
    CHECK(temp_files_of("c_writer_aborted.hrry") == 1);
    CHECK_STATUS(hurray_file_writer_abort(&w), HURRAY_OK);
    CHECK(w == NULL);
    CHECK(!file_exists(path));
    CHECK(temp_files_of("c_writer_aborted.hrry") == 0);
    CHECK_STATUS(hurray_file_writer_abort(&w), HURRAY_OK);  // *w NULL: a no-op

    // An existing file keeps its content: after an abort, and after a failed finish.
    tmp_path(path, sizeof path, "c_writer_kept.hrry");
    CHECK(write_all(path, "old content", 11));
    CHECK_STATUS(hurray_file_writer_create(path, 0, &w), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_add_tensor(w, "scalar", 6, d, one, size, 1), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_abort(&w), HURRAY_OK);
    before = read_all(path, &len);
    CHECK(before != NULL && len == 11 && memcmp(before, "old content", 11) == 0);
    free(before);
    CHECK_STATUS(hurray_file_writer_create(path, 0, &w), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_begin_tensor(w, "open", 4, d), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_finish(&w), HURRAY_ERR_INVALID_ARGUMENT);  // a tensor is open
    CHECK(w == NULL);  // destroyed all the same
    CHECK(message_has("still open"));
    after = read_all(path, &len);
    CHECK(after != NULL && len == 11 && memcmp(after, "old content", 11) == 0);
    free(after);
    CHECK(temp_files_of("c_writer_kept.hrry") == 0);

    // A failed finish at a new path leaves nothing there.
    tmp_path(path, sizeof path, "c_writer_unfinished.hrry");
    remove(path);
    CHECK_STATUS(hurray_file_writer_create(path, 0, &w), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_begin_tensor(w, "open", 4, d), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_write(w, one[0], 4), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_finish(&w), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(w == NULL);
    CHECK(!file_exists(path));
    CHECK(temp_files_of("c_writer_unfinished.hrry") == 0);
    hurray_descriptor_destroy(d);
}

static void test_create_errors(void) {
    char path[4096];
    HurrayFileWriter* w = (HurrayFileWriter*)&g_passed;
    tmp_path(path, sizeof path, "c_writer_flags.hrry");
    CHECK_STATUS(hurray_file_writer_create(path, 0x80u, &w), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(w == NULL);
    CHECK(message_has("flags"));
    CHECK_STATUS(hurray_file_writer_create(path,
                                           HURRAY_FILE_WRITER_SORTED_INDEX | HURRAY_FILE_WRITER_NO_FSYNC |
                                               HURRAY_FILE_WRITER_NO_DESCRIPTOR_TABLE | 0x8u,
                                           &w),
                 HURRAY_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hurray_file_writer_create_fd(1, 0x80000000u, &w), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(w == NULL);
    CHECK(!file_exists(path));

    // A directory that does not exist.
    tmp_path(path, sizeof path, "c_writer_no_such_dir/x.hrry");
    w = (HurrayFileWriter*)&g_passed;
    CHECK_STATUS(hurray_file_writer_create(path, 0, &w), HURRAY_ERR_IO);
    CHECK(w == NULL);
    CHECK(strlen(hurray_last_error_message()) > 0);
    // Paths that name no file.
    CHECK_STATUS(hurray_file_writer_create("", 0, &w), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(w == NULL);
    tmp_path(path, sizeof path, "");
    CHECK_STATUS(hurray_file_writer_create(path, 0, &w), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(message_has("does not name a file"));

    // The rename at finish fails (the path is a directory): HURRAY_ERR_IO, the
    // writer is released, the temporary file removed, the directory untouched.
    tmp_path(path, sizeof path, "c_writer_a_dir.hrry");
    mkdir(path, 0755);
    CHECK_STATUS(hurray_file_writer_create(path, 0, &w), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_set_bool(w, "k", 1, 1), HURRAY_OK);
    CHECK(temp_files_of("c_writer_a_dir.hrry") == 1);
    CHECK_STATUS(hurray_file_writer_finish(&w), HURRAY_ERR_IO);
    CHECK(w == NULL);
    CHECK(strlen(hurray_last_error_message()) > 0);
    CHECK(temp_files_of("c_writer_a_dir.hrry") == 0);
    CHECK(rmdir(path) == 0);  // still an (empty) directory
}

static void test_tensor_errors(void) {
    static const uint64_t dims2[1] = {4};
    char path[4096];
    HurrayFileWriter* w = NULL;
    HurrayFile* file = NULL;
    HurrayDescriptor* d = dense(0x03, 1, dims2);  // 16 bytes
    HurrayBufferList* list = NULL;
    HurrayBuffer* b = NULL;
    const float data[5] = {1, 2, 3, 4, 5};
    const void* one[2];
    uint64_t size[2];
    unsigned char* block = (unsigned char*)malloc(64 + 64);
    uint64_t count = 0;

    tmp_path(path, sizeof path, "c_writer_errors.hrry");
    remove(path);
    CHECK_STATUS(hurray_file_writer_create(path, 0, &w), HURRAY_OK);
    if (w == NULL || block == NULL) {
        hurray_file_writer_abort(&w);
        hurray_descriptor_destroy(d);
        free(block);
        return;
    }
    one[0] = data;
    one[1] = data;
    size[0] = 16;
    size[1] = 16;

    // Wrong sizes and counts: refused before anything is written.
    size[0] = 15;
    CHECK_STATUS(hurray_file_writer_add_tensor(w, "t", 1, d, one, size, 1), HURRAY_ERR_INVALID_FILE);
    CHECK(message_has("size_mismatch"));
    CHECK(message_has("15 bytes given"));
    size[0] = 20;
    CHECK_STATUS(hurray_file_writer_add_tensor(w, "t", 1, d, one, size, 1), HURRAY_ERR_INVALID_FILE);
    size[0] = 16;
    CHECK_STATUS(hurray_file_writer_add_tensor(w, "t", 1, d, one, size, 2), HURRAY_ERR_INVALID_FILE);
    CHECK(message_has("2 buffers given"));
    CHECK_STATUS(hurray_file_writer_add_tensor(w, "t", 1, d, NULL, NULL, 0), HURRAY_ERR_INVALID_FILE);
    CHECK_STATUS(hurray_file_writer_add_tensor(w, "t", 1, d, one, size, UINT32_MAX), HURRAY_ERR_INVALID_FILE);
    // Names: empty, not UTF-8, duplicate.
    CHECK_STATUS(hurray_file_writer_add_tensor(w, "", 0, d, one, size, 1), HURRAY_ERR_INVALID_FILE);
    CHECK_STATUS(hurray_file_writer_add_tensor(w, "\xFF", 1, d, one, size, 1), HURRAY_ERR_INVALID_FILE);
    CHECK_STATUS(hurray_file_writer_begin_tensor(w, "\xC3", 1, d), HURRAY_ERR_INVALID_FILE);
    // Still usable: "t" is written now, and a second "t" is a duplicate.
    CHECK_STATUS(hurray_file_writer_add_tensor(w, "t", 1, d, one, size, 1), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_add_tensor(w, "t", 1, d, one, size, 1), HURRAY_ERR_INVALID_FILE);
    CHECK(message_has("already"));
    CHECK_STATUS(hurray_file_writer_begin_tensor(w, "t", 1, d), HURRAY_ERR_INVALID_FILE);
    // The length counts, not a NUL: "t2" cut to one byte is "t" again.
    CHECK_STATUS(hurray_file_writer_add_tensor(w, "t2", 1, d, one, size, 1), HURRAY_ERR_INVALID_FILE);

    // Buffer lists: a wrong count, a device buffer.
    CHECK_STATUS(hurray_buffer_list_new(1, &list), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_add_tensor_buffers(w, "from_list", 9, d, list), HURRAY_ERR_INVALID_FILE);
    CHECK(message_has("0 buffers given"));
    CHECK_STATUS(hurray_buffer_from_ptr(aligned64(block), 16, 64, 0x01, 0x01, 0x00, NULL, NULL, &b), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_list_push(list, b), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_add_tensor_buffers(w, "from_list", 9, d, list), HURRAY_ERR_INVALID_TYPE);
    CHECK(message_has("host"));
    CHECK_STATUS(hurray_buffer_list_destroy(&list), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_list_new(1, &list), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_from_ptr(aligned64(block), 64, 64, 0, 0, 0, NULL, NULL, &b), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_list_push(list, b), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_add_tensor_buffers(w, "from_list", 9, d, list),
                 HURRAY_ERR_INVALID_FILE);  // 64 bytes for a 16-byte buffer
    CHECK(message_has("size_mismatch"));

    // Out of order.
    CHECK_STATUS(hurray_file_writer_write(w, data, 4), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(message_has("no tensor is open"));
    CHECK_STATUS(hurray_file_writer_end_tensor(w), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hurray_file_writer_begin_tensor(w, "chunked", 7, d), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_begin_tensor(w, "other", 5, d), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(message_has("still open"));
    CHECK_STATUS(hurray_file_writer_add_tensor(w, "other", 5, d, one, size, 1), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hurray_file_writer_add_tensor_buffers(w, "other", 5, d, list), HURRAY_ERR_INVALID_ARGUMENT);
    // Too much data: refused whole, the tensor still expects its bytes.
    CHECK_STATUS(hurray_file_writer_write(w, data, 20), HURRAY_ERR_INVALID_FILE);
    CHECK(message_has("exceeds"));
    CHECK_STATUS(hurray_file_writer_write(w, data, 10), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_write(w, data, 7), HURRAY_ERR_INVALID_FILE);
    CHECK_STATUS(hurray_file_writer_write(w, (const unsigned char*)data + 10, 6), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_end_tensor(w), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_end_tensor(w), HURRAY_ERR_INVALID_ARGUMENT);

    // KV errors store nothing.
    CHECK_STATUS(hurray_file_writer_set_int64(w, "", 0, 1), HURRAY_ERR_INVALID_FILE);
    CHECK_STATUS(hurray_file_writer_set_int64(w, "\xFF", 1, 1), HURRAY_ERR_INVALID_FILE);
    CHECK_STATUS(hurray_file_writer_set_string(w, "bad_text", 8, "\xC3\x28", 2), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(message_has("UTF-8"));
    {
        const char* const bad[2] = {"fine", "\xE2\x82"};
        CHECK_STATUS(hurray_file_writer_set_string_array(w, "bad_words", 9, bad, NULL, 2),
                     HURRAY_ERR_INVALID_ARGUMENT);
    }
    if (SIZE_MAX > UINT32_MAX) {
        // Never read: the count is refused first.
        static const int64_t few[1] = {1};
        const size_t too_many = (size_t)UINT32_MAX + 1u;
        CHECK_STATUS(hurray_file_writer_set_int64_array(w, "many", 4, few, too_many),
                     HURRAY_ERR_INVALID_ARGUMENT);
        CHECK(message_has("uint32"));
        CHECK_STATUS(hurray_file_writer_set_bytes(w, "many", 4, data, too_many), HURRAY_ERR_INVALID_ARGUMENT);
        CHECK_STATUS(hurray_file_writer_set_string(w, "many", 4, "x", too_many), HURRAY_ERR_INVALID_ARGUMENT);
        {
            const char* const one_word[1] = {"x"};
            const void* const one_blob[1] = {"x"};
            const size_t huge_len[1] = {too_many};
            CHECK_STATUS(hurray_file_writer_set_string_array(w, "many", 4, one_word, huge_len, 1),
                         HURRAY_ERR_INVALID_ARGUMENT);
            CHECK(message_has("lens[0]"));
            CHECK_STATUS(hurray_file_writer_set_bytes_array(w, "many", 4, one_blob, huge_len, 1),
                         HURRAY_ERR_INVALID_ARGUMENT);
        }
    }
    CHECK_STATUS(hurray_file_writer_set_string(w, "good", 4, "ok", 2), HURRAY_OK);

    CHECK_STATUS(hurray_file_writer_finish(&w), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_list_destroy(&list), HURRAY_OK);
    CHECK_STATUS(hurray_file_open(path, 0, &file), HURRAY_OK);
    if (file != NULL) {
        uint8_t type = 0;
        CHECK_STATUS(hurray_file_tensor_count(file, &count), HURRAY_OK);
        CHECK(count == 2);  // "t" and "chunked"
        check_tensor(file, 0, "t", 0x03, 1, dims2, data, 16);
        check_tensor(file, 1, "chunked", 0x03, 1, dims2, data, 16);
        CHECK_STATUS(hurray_file_kv_count(file, &count), HURRAY_OK);
        CHECK(count == 1);
        CHECK_STATUS(hurray_file_kv_type(file, "bad_text", 8, &type), HURRAY_ERR_NOT_FOUND);
        hurray_file_close(file);
    }

    // Missing bytes at end_tensor: the writer fails for good.
    CHECK_STATUS(hurray_file_writer_create(path, 0, &w), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_begin_tensor(w, "short", 5, d), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_write(w, data, 8), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_end_tensor(w), HURRAY_ERR_INVALID_FILE);
    CHECK(message_has("never written"));
    CHECK_STATUS(hurray_file_writer_add_tensor(w, "t", 1, d, one, size, 1), HURRAY_ERR_INVALID_FILE);
    CHECK(message_has("never written"));  // the first error, again
    CHECK_STATUS(hurray_file_writer_finish(&w), HURRAY_ERR_INVALID_FILE);
    CHECK(w == NULL);
    // The earlier file at the path is intact.
    CHECK_STATUS(hurray_file_open(path, 0, &file), HURRAY_OK);
    hurray_file_close(file);

    hurray_descriptor_destroy(d);
    free(block);
}

// The new getters' errors, on the file hurray_c_test_writer wrote ("blob"
// bytes {1, 2, 3}, "dims" int64 array {4096, 11008}, scalars) and on a file
// with arrays of every element type.
static void test_getter_errors(void) {
    char path[4096];
    HurrayFile* file = NULL;
    HurrayFileWriter* w = NULL;
    const uint8_t* bytes = NULL;
    const int64_t* i64s = NULL;
    const uint64_t* u64s = NULL;
    const double* f64s = NULL;
    const char* text = NULL;
    size_t len = 0;
    size_t n = 0;
    uint8_t type = 0;
    uint8_t bools[4] = {9, 9, 9, 9};
    static const uint8_t three_bools[3] = {1, 0, 1};

    CHECK_STATUS(hurray_file_open(g_kv_file, 0, &file), HURRAY_OK);
    if (file != NULL) {
        CHECK_STATUS(hurray_file_kv_get_bytes(file, "blob", 4, &bytes, &len), HURRAY_OK);
        CHECK(len == 3 && bytes[0] == 1 && bytes[2] == 3);
        CHECK_STATUS(hurray_file_kv_get_int64_array(file, "dims", 4, &i64s, &n), HURRAY_OK);
        CHECK(n == 2 && i64s[0] == 4096 && i64s[1] == 11008);
        // Type mismatch: another scalar type, not an array, another element type.
        len = 77;
        CHECK_STATUS(hurray_file_kv_get_bytes(file, "name", 4, &bytes, &len), HURRAY_ERR_TYPE_MISMATCH);
        CHECK(message_has("string"));
        CHECK(len == 77);
        CHECK_STATUS(hurray_file_kv_get_bytes(file, "dims", 4, &bytes, &len), HURRAY_ERR_TYPE_MISMATCH);
        CHECK_STATUS(hurray_file_kv_get_array_info(file, "blob", 4, &type, &n), HURRAY_ERR_TYPE_MISMATCH);
        CHECK_STATUS(hurray_file_kv_get_int64_array(file, "offset", 6, &i64s, &n), HURRAY_ERR_TYPE_MISMATCH);
        CHECK_STATUS(hurray_file_kv_get_uint64_array(file, "dims", 4, &u64s, &n), HURRAY_ERR_TYPE_MISMATCH);
        CHECK(message_has("array of int64"));
        CHECK(message_has("not an array of uint64"));
        CHECK_STATUS(hurray_file_kv_get_float64_array(file, "dims", 4, &f64s, &n), HURRAY_ERR_TYPE_MISMATCH);
        CHECK_STATUS(hurray_file_kv_get_bool_array(file, "dims", 4, bools, &n), HURRAY_ERR_TYPE_MISMATCH);
        CHECK_STATUS(hurray_file_kv_get_string_array_element(file, "dims", 4, 0, &text, &len),
                     HURRAY_ERR_TYPE_MISMATCH);
        CHECK_STATUS(hurray_file_kv_get_bytes_array_element(file, "dims", 4, 0, &bytes, &len),
                     HURRAY_ERR_TYPE_MISMATCH);
        CHECK_STATUS(hurray_file_kv_get_string_array_element(file, "name", 4, 0, &text, &len),
                     HURRAY_ERR_TYPE_MISMATCH);
        // Not found.
        CHECK_STATUS(hurray_file_kv_get_bytes(file, "missing", 7, &bytes, &len), HURRAY_ERR_NOT_FOUND);
        CHECK(message_has("missing"));
        CHECK_STATUS(hurray_file_kv_get_array_info(file, "missing", 7, &type, &n), HURRAY_ERR_NOT_FOUND);
        CHECK_STATUS(hurray_file_kv_get_int64_array(file, "missing", 7, &i64s, &n), HURRAY_ERR_NOT_FOUND);
        CHECK_STATUS(hurray_file_kv_get_uint64_array(file, "missing", 7, &u64s, &n), HURRAY_ERR_NOT_FOUND);
        CHECK_STATUS(hurray_file_kv_get_float64_array(file, "missing", 7, &f64s, &n), HURRAY_ERR_NOT_FOUND);
        CHECK_STATUS(hurray_file_kv_get_bool_array(file, "missing", 7, bools, &n), HURRAY_ERR_NOT_FOUND);
        CHECK_STATUS(hurray_file_kv_get_string_array_element(file, "missing", 7, 0, &text, &len),
                     HURRAY_ERR_NOT_FOUND);
        CHECK_STATUS(hurray_file_kv_get_bytes_array_element(file, "missing", 7, 0, &bytes, &len),
                     HURRAY_ERR_NOT_FOUND);
        CHECK_STATUS(hurray_file_kv_get_bytes(file, "blob", 3, &bytes, &len), HURRAY_ERR_NOT_FOUND);  // "blo"
        hurray_file_close(file);
    }

    // Bool arrays: the capacity protocol; string and bytes elements: the index.
    tmp_path(path, sizeof path, "c_writer_getters.hrry");
    CHECK_STATUS(hurray_file_writer_create(path, 0, &w), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_set_bool_array(w, "bools", 5, three_bools, 3), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_set_bool_array(w, "no_bools", 8, NULL, 0), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_set_string_array(w, "words", 5, NULL, NULL, 0), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_set_bytes_array(w, "blobs", 5, NULL, NULL, 0), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_set_float64_array(w, "f64s", 4, NULL, 0), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_set_uint64_array(w, "u64s", 4, NULL, 0), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_finish(&w), HURRAY_OK);
    CHECK_STATUS(hurray_file_open(path, 0, &file), HURRAY_OK);
    if (file == NULL) {
        return;
    }
    n = 0;
    CHECK_STATUS(hurray_file_kv_get_bool_array(file, "bools", 5, NULL, &n), HURRAY_ERR_BUFFER_TOO_SMALL);
    CHECK(n == 3);
    CHECK(message_has("*count now holds"));
    n = 2;
    CHECK_STATUS(hurray_file_kv_get_bool_array(file, "bools", 5, bools, &n), HURRAY_ERR_BUFFER_TOO_SMALL);
    CHECK(n == 3);
    CHECK(bools[0] == 9);  // nothing written
    n = 4;
    CHECK_STATUS(hurray_file_kv_get_bool_array(file, "bools", 5, NULL, &n), HURRAY_ERR_BUFFER_TOO_SMALL);
    n = 3;
    CHECK_STATUS(hurray_file_kv_get_bool_array(file, "bools", 5, bools, &n), HURRAY_OK);
    CHECK(n == 3 && bools[0] == 1 && bools[1] == 0 && bools[2] == 1 && bools[3] == 9);
    n = 5;
    CHECK_STATUS(hurray_file_kv_get_bool_array(file, "no_bools", 8, NULL, &n), HURRAY_OK);  // empty fits
    CHECK(n == 0);
    CHECK_STATUS(hurray_file_kv_get_array_info(file, "words", 5, &type, &n), HURRAY_OK);
    CHECK(type == HURRAY_KV_STRING && n == 0);
    CHECK_STATUS(hurray_file_kv_get_string_array_element(file, "words", 5, 0, &text, &len),
                 HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    CHECK(message_has("out of range"));
    CHECK_STATUS(hurray_file_kv_get_bytes_array_element(file, "blobs", 5, 0, &bytes, &len),
                 HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    CHECK_STATUS(hurray_file_kv_get_bytes_array_element(file, "blobs", 5, SIZE_MAX, &bytes, &len),
                 HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    CHECK_STATUS(hurray_file_kv_get_float64_array(file, "f64s", 4, &f64s, &n), HURRAY_OK);
    CHECK(n == 0 && f64s != NULL);
    CHECK_STATUS(hurray_file_kv_get_uint64_array(file, "u64s", 4, &u64s, &n), HURRAY_OK);
    CHECK(n == 0 && u64s != NULL);
    hurray_file_close(file);
}

// Every new function with each required pointer NULL: HURRAY_ERR_NULL_POINTER, no crash.
static void test_null_arguments(void) {
    static const uint64_t dims[1] = {2};
    static const char* const words[2] = {"a", NULL};
    static const void* const blobs[2] = {"a", NULL};
    static const size_t lens[2] = {1, 1};
    char path[4096];
    HurrayFileWriter* w = NULL;
    HurrayFile* file = NULL;
    HurrayDescriptor* d = dense(0x10, 1, dims);  // 2 bytes
    HurrayDescriptor* out_d = (HurrayDescriptor*)&g_passed;
    HurrayFileWriter* out_w = (HurrayFileWriter*)&g_passed;
    HurrayBufferList* list = NULL;
    const int8_t data[2] = {1, 2};
    const void* one[1];
    const void* nothing[1];
    uint64_t size[1];
    uint64_t u64 = 0;
    uint8_t u8 = 0;
    uint8_t bools[2];
    size_t n = 0;
    const uint8_t* bytes = NULL;
    const int64_t* i64s = NULL;
    const uint64_t* u64s = NULL;
    const double* f64s = NULL;
    const char* text = NULL;
    one[0] = data;
    nothing[0] = NULL;
    size[0] = 2;

    CHECK_NULL_ARG(hurray_descriptor_new_dense(0x10, 1, dims, NULL));
    CHECK_NULL_ARG(hurray_descriptor_new_dense(0x10, 1, NULL, &out_d));
    CHECK(out_d == NULL);
    CHECK(message_has("dims"));
    CHECK_NULL_ARG(hurray_descriptor_encode(NULL, NULL, 0, &n));
    CHECK_NULL_ARG(hurray_descriptor_encode(d, NULL, 0, NULL));
    CHECK_NULL_ARG(hurray_descriptor_buffer_size(NULL, 0, &u64));
    CHECK_NULL_ARG(hurray_descriptor_buffer_size(d, 0, NULL));

    tmp_path(path, sizeof path, "c_writer_nulls.hrry");
    CHECK_NULL_ARG(hurray_file_writer_create(NULL, 0, &out_w));
    CHECK(out_w == NULL);
    CHECK_NULL_ARG(hurray_file_writer_create(path, 0, NULL));
    CHECK_NULL_ARG(hurray_file_writer_create_fd(1, 0, NULL));

    CHECK_STATUS(hurray_file_writer_create(path, 0, &w), HURRAY_OK);
    CHECK_STATUS(hurray_buffer_list_new(1, &list), HURRAY_OK);
    CHECK_NULL_ARG(hurray_file_writer_add_tensor(NULL, "t", 1, d, one, size, 1));
    CHECK_NULL_ARG(hurray_file_writer_add_tensor(w, NULL, 1, d, one, size, 1));
    CHECK_NULL_ARG(hurray_file_writer_add_tensor(w, "t", 1, NULL, one, size, 1));
    CHECK_NULL_ARG(hurray_file_writer_add_tensor(w, "t", 1, d, NULL, size, 1));
    CHECK_NULL_ARG(hurray_file_writer_add_tensor(w, "t", 1, d, one, NULL, 1));
    CHECK_NULL_ARG(hurray_file_writer_add_tensor(w, "t", 1, d, nothing, size, 1));
    CHECK(message_has("buffers[0]"));
    CHECK_NULL_ARG(hurray_file_writer_add_tensor_buffers(NULL, "t", 1, d, list));
    CHECK_NULL_ARG(hurray_file_writer_add_tensor_buffers(w, NULL, 1, d, list));
    CHECK_NULL_ARG(hurray_file_writer_add_tensor_buffers(w, "t", 1, NULL, list));
    CHECK_NULL_ARG(hurray_file_writer_add_tensor_buffers(w, "t", 1, d, NULL));
    CHECK_NULL_ARG(hurray_file_writer_begin_tensor(NULL, "t", 1, d));
    CHECK_NULL_ARG(hurray_file_writer_begin_tensor(w, NULL, 1, d));
    CHECK_NULL_ARG(hurray_file_writer_begin_tensor(w, "t", 1, NULL));
    CHECK_NULL_ARG(hurray_file_writer_write(NULL, data, 2));
    CHECK_NULL_ARG(hurray_file_writer_end_tensor(NULL));
    CHECK_STATUS(hurray_file_writer_begin_tensor(w, "t", 1, d), HURRAY_OK);
    CHECK_NULL_ARG(hurray_file_writer_write(w, NULL, 2));
    CHECK_STATUS(hurray_file_writer_write(w, data, 2), HURRAY_OK);
    CHECK_STATUS(hurray_file_writer_end_tensor(w), HURRAY_OK);

    CHECK_NULL_ARG(hurray_file_writer_set_string(NULL, "k", 1, "v", 1));
    CHECK_NULL_ARG(hurray_file_writer_set_string(w, NULL, 1, "v", 1));
    CHECK_NULL_ARG(hurray_file_writer_set_string(w, "k", 1, NULL, 1));
    CHECK_NULL_ARG(hurray_file_writer_set_int64(NULL, "k", 1, 1));
    CHECK_NULL_ARG(hurray_file_writer_set_int64(w, NULL, 1, 1));
    CHECK_NULL_ARG(hurray_file_writer_set_uint64(NULL, "k", 1, 1));
    CHECK_NULL_ARG(hurray_file_writer_set_uint64(w, NULL, 1, 1));
    CHECK_NULL_ARG(hurray_file_writer_set_float64(NULL, "k", 1, 1.0));
    CHECK_NULL_ARG(hurray_file_writer_set_float64(w, NULL, 1, 1.0));
    CHECK_NULL_ARG(hurray_file_writer_set_bool(NULL, "k", 1, 1));
    CHECK_NULL_ARG(hurray_file_writer_set_bool(w, NULL, 1, 1));
    CHECK_NULL_ARG(hurray_file_writer_set_bytes(NULL, "k", 1, data, 2));
    CHECK_NULL_ARG(hurray_file_writer_set_bytes(w, NULL, 1, data, 2));
    CHECK_NULL_ARG(hurray_file_writer_set_bytes(w, "k", 1, NULL, 2));
    CHECK_NULL_ARG(hurray_file_writer_set_int64_array(NULL, "k", 1, NULL, 0));
    CHECK_NULL_ARG(hurray_file_writer_set_int64_array(w, NULL, 1, NULL, 0));
    CHECK_NULL_ARG(hurray_file_writer_set_int64_array(w, "k", 1, NULL, 1));
    CHECK_NULL_ARG(hurray_file_writer_set_uint64_array(NULL, "k", 1, NULL, 0));
    CHECK_NULL_ARG(hurray_file_writer_set_uint64_array(w, NULL, 1, NULL, 0));
    CHECK_NULL_ARG(hurray_file_writer_set_uint64_array(w, "k", 1, NULL, 1));
    CHECK_NULL_ARG(hurray_file_writer_set_float64_array(NULL, "k", 1, NULL, 0));
    CHECK_NULL_ARG(hurray_file_writer_set_float64_array(w, NULL, 1, NULL, 0));
    CHECK_NULL_ARG(hurray_file_writer_set_float64_array(w, "k", 1, NULL, 1));
    CHECK_NULL_ARG(hurray_file_writer_set_bool_array(NULL, "k", 1, NULL, 0));
    CHECK_NULL_ARG(hurray_file_writer_set_bool_array(w, NULL, 1, NULL, 0));
    CHECK_NULL_ARG(hurray_file_writer_set_bool_array(w, "k", 1, NULL, 1));
    CHECK_NULL_ARG(hurray_file_writer_set_string_array(NULL, "k", 1, words, NULL, 1));
    CHECK_NULL_ARG(hurray_file_writer_set_string_array(w, NULL, 1, words, NULL, 1));
    CHECK_NULL_ARG(hurray_file_writer_set_string_array(w, "k", 1, NULL, NULL, 1));
    CHECK_NULL_ARG(hurray_file_writer_set_string_array(w, "k", 1, words, NULL, 2));  // words[1]
    CHECK(message_has("values[1]"));
    CHECK_NULL_ARG(hurray_file_writer_set_string_array(w, "k", 1, words, lens, 2));  // words[1], 1 byte
    CHECK_NULL_ARG(hurray_file_writer_set_bytes_array(NULL, "k", 1, blobs, lens, 1));
    CHECK_NULL_ARG(hurray_file_writer_set_bytes_array(w, NULL, 1, blobs, lens, 1));
    CHECK_NULL_ARG(hurray_file_writer_set_bytes_array(w, "k", 1, NULL, lens, 1));
    CHECK_NULL_ARG(hurray_file_writer_set_bytes_array(w, "k", 1, blobs, NULL, 1));
    CHECK(message_has("lens"));
    CHECK_NULL_ARG(hurray_file_writer_set_bytes_array(w, "k", 1, blobs, lens, 2));  // blobs[1]
    CHECK(message_has("values[1]"));
    CHECK_NULL_ARG(hurray_file_writer_finish(NULL));
    CHECK_NULL_ARG(hurray_file_writer_abort(NULL));
    out_w = NULL;
    CHECK_NULL_ARG(hurray_file_writer_finish(&out_w));
    CHECK(message_has("*writer"));
    CHECK_STATUS(hurray_buffer_list_destroy(&list), HURRAY_OK);
    // None of the failed setters stored anything.
    CHECK_STATUS(hurray_file_writer_finish(&w), HURRAY_OK);

    CHECK_STATUS(hurray_file_open(path, 0, &file), HURRAY_OK);
    if (file == NULL) {
        hurray_descriptor_destroy(d);
        return;
    }
    CHECK_STATUS(hurray_file_kv_count(file, &u64), HURRAY_OK);
    CHECK(u64 == 0);
    CHECK_NULL_ARG(hurray_file_kv_get_bytes(NULL, "k", 1, &bytes, &n));
    CHECK_NULL_ARG(hurray_file_kv_get_bytes(file, NULL, 1, &bytes, &n));
    CHECK_NULL_ARG(hurray_file_kv_get_bytes(file, "k", 1, NULL, &n));
    CHECK_NULL_ARG(hurray_file_kv_get_bytes(file, "k", 1, &bytes, NULL));
    CHECK_NULL_ARG(hurray_file_kv_get_array_info(NULL, "k", 1, &u8, &n));
    CHECK_NULL_ARG(hurray_file_kv_get_array_info(file, NULL, 1, &u8, &n));
    CHECK_NULL_ARG(hurray_file_kv_get_array_info(file, "k", 1, NULL, &n));
    CHECK_NULL_ARG(hurray_file_kv_get_array_info(file, "k", 1, &u8, NULL));
    CHECK_NULL_ARG(hurray_file_kv_get_int64_array(NULL, "k", 1, &i64s, &n));
    CHECK_NULL_ARG(hurray_file_kv_get_int64_array(file, NULL, 1, &i64s, &n));
    CHECK_NULL_ARG(hurray_file_kv_get_int64_array(file, "k", 1, NULL, &n));
    CHECK_NULL_ARG(hurray_file_kv_get_int64_array(file, "k", 1, &i64s, NULL));
    CHECK_NULL_ARG(hurray_file_kv_get_uint64_array(NULL, "k", 1, &u64s, &n));
    CHECK_NULL_ARG(hurray_file_kv_get_uint64_array(file, NULL, 1, &u64s, &n));
    CHECK_NULL_ARG(hurray_file_kv_get_uint64_array(file, "k", 1, NULL, &n));
    CHECK_NULL_ARG(hurray_file_kv_get_uint64_array(file, "k", 1, &u64s, NULL));
    CHECK_NULL_ARG(hurray_file_kv_get_float64_array(NULL, "k", 1, &f64s, &n));
    CHECK_NULL_ARG(hurray_file_kv_get_float64_array(file, NULL, 1, &f64s, &n));
    CHECK_NULL_ARG(hurray_file_kv_get_float64_array(file, "k", 1, NULL, &n));
    CHECK_NULL_ARG(hurray_file_kv_get_float64_array(file, "k", 1, &f64s, NULL));
    CHECK_NULL_ARG(hurray_file_kv_get_bool_array(NULL, "k", 1, bools, &n));
    CHECK_NULL_ARG(hurray_file_kv_get_bool_array(file, NULL, 1, bools, &n));
    CHECK_NULL_ARG(hurray_file_kv_get_bool_array(file, "k", 1, bools, NULL));
    CHECK_NULL_ARG(hurray_file_kv_get_string_array_element(NULL, "k", 1, 0, &text, &n));
    CHECK_NULL_ARG(hurray_file_kv_get_string_array_element(file, NULL, 1, 0, &text, &n));
    CHECK_NULL_ARG(hurray_file_kv_get_string_array_element(file, "k", 1, 0, NULL, &n));
    CHECK_NULL_ARG(hurray_file_kv_get_string_array_element(file, "k", 1, 0, &text, NULL));
    CHECK_NULL_ARG(hurray_file_kv_get_bytes_array_element(NULL, "k", 1, 0, &bytes, &n));
    CHECK_NULL_ARG(hurray_file_kv_get_bytes_array_element(file, NULL, 1, 0, &bytes, &n));
    CHECK_NULL_ARG(hurray_file_kv_get_bytes_array_element(file, "k", 1, 0, NULL, &n));
    CHECK_NULL_ARG(hurray_file_kv_get_bytes_array_element(file, "k", 1, 0, &bytes, NULL));
    hurray_file_close(file);
    hurray_descriptor_destroy(d);
}

void writer_tests(void) {
    test_new_dense();
    test_doc_example();
    test_write_path();
    test_copy_tensors();
    test_write_fd();
    test_sorted_index();
    test_abort();
    test_create_errors();
    test_tensor_errors();
    test_getter_errors();
    test_null_arguments();
}
