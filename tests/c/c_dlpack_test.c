// SPDX-License-Identifier: Apache-2.0
// C tests of the C ABI: DLPack export (hurray_file_tensor_to_dlpack,
// hurray_tensor_to_dlpack). Every tensor of the conformance files, of the KV
// file and of the file hurray_c_test_dlpack_writer wrote (c_api_dlpack.hrry
// in TMP_DIR) is exported; the file is closed before the exported bytes are
// read and before the deleter runs (under ASan a freed or unmapped file shows).
#define _POSIX_C_SOURCE 200809L  // opendir, to list the conformance files

#include "c_test_util.h"

#include <dlpack/dlpack.h>
#include <hurray.h>

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// --- The deleter, counted -------------------------------------------------

static int g_deleter_calls = 0;
static void (*g_library_deleter)(DLManagedTensor*) = NULL;

static void counting_deleter(DLManagedTensor* self) {
    ++g_deleter_calls;
    g_library_deleter(self);
}

// Routes `m`'s deleter through counting_deleter (every export has the same one).
static void count_deleter(DLManagedTensor* m) {
    CHECK(m->deleter != NULL);
    if (g_library_deleter == NULL) {
        g_library_deleter = m->deleter;
    }
    CHECK(m->deleter == g_library_deleter);
    m->deleter = counting_deleter;
}

// Calls `m`'s (counting) deleter and checks that it ran exactly once.
static void delete_managed(DLManagedTensor* m) {
    const int before = g_deleter_calls;
    m->deleter(m);
    CHECK(g_deleter_calls == before + 1);
}

// --- Caller memory with a counted release -----------------------------------

static int g_released = 0;

static void release_block(void* data, void* context) {
    (void)data;
    free(context);
    ++g_released;
}

// A buffer over `size` bytes of fresh 64-byte-aligned heap memory (filled
// with `fill`), released by release_block; NULL on failure.
static HurrayBuffer* heap_buffer(uint64_t size, uint8_t device_tag, const void* fill, uint8_t** data) {
    uint8_t* block = (uint8_t*)malloc((size_t)size + 64);
    uint8_t* aligned;
    HurrayBuffer* buffer = NULL;
    if (block == NULL) {
        return NULL;
    }
    aligned = block + (64 - (uintptr_t)block % 64);
    if (fill != NULL) {
        memcpy(aligned, fill, (size_t)size);
    }
    if (hurray_buffer_from_ptr(aligned, size, 64, device_tag, 0, 0, release_block, block, &buffer) != HURRAY_OK) {
        free(block);
        return NULL;
    }
    *data = aligned;
    return buffer;
}

static HurrayDescriptor* read_descriptor(const char* name) {
    char path[4096];
    char rel[256];
    size_t len = 0;
    uint8_t* bytes;
    HurrayDescriptor* d = NULL;
    snprintf(rel, sizeof rel, "descriptors/%s", name);
    join(path, sizeof path, g_conformance_dir, rel);
    bytes = read_all(path, &len);
    CHECK(bytes != NULL);
    if (bytes == NULL) {
        return NULL;
    }
    CHECK_STATUS(hurray_descriptor_decode(bytes, len, &d), HURRAY_OK);
    free(bytes);
    return d;
}

// --- What an export must look like -----------------------------------------

// The DLPack type of an element type tag; 0 when DLPack 0.6 has none.
static int dtype_of_tag(uint8_t tag, DLDataType* out) {
    uint8_t code;
    uint8_t bits;
    switch (tag) {
        case 0x01: code = kDLFloat; bits = 16; break;
        case 0x02: code = kDLBfloat; bits = 16; break;
        case 0x03: code = kDLFloat; bits = 32; break;
        case 0x04: code = kDLFloat; bits = 64; break;
        case 0x10: code = kDLInt; bits = 8; break;
        case 0x11: code = kDLUInt; bits = 8; break;
        case 0x12: code = kDLInt; bits = 16; break;
        case 0x13: code = kDLUInt; bits = 16; break;
        case 0x14: code = kDLInt; bits = 32; break;
        case 0x15: code = kDLUInt; bits = 32; break;
        case 0x16: code = kDLInt; bits = 64; break;
        case 0x17: code = kDLUInt; bits = 64; break;
        case 0x50: code = kDLComplex; bits = 64; break;
        case 0x51: code = kDLComplex; bits = 128; break;
        default: return 0;
    }
    out->code = code;
    out->bits = bits;
    out->lanes = 1;
    return 1;
}

// The element at `index` (one coordinate per dimension) read through data,
// byte_offset, strides and dtype, as a double (complex: the real part).
static double read_element(const DLTensor* t, const int64_t* index) {
    int64_t offset = 0;
    const unsigned char* p;
    int k;
    for (k = 0; k < t->ndim; ++k) {
        offset += index[k] * t->strides[k];
    }
    p = (const unsigned char*)t->data + t->byte_offset + offset * (int64_t)(t->dtype.bits / 8);
    switch (t->dtype.code) {
        case kDLInt:
            if (t->dtype.bits == 8) { int8_t v; memcpy(&v, p, 1); return v; }
            if (t->dtype.bits == 16) { int16_t v; memcpy(&v, p, 2); return v; }
            if (t->dtype.bits == 32) { int32_t v; memcpy(&v, p, 4); return v; }
            { int64_t v; memcpy(&v, p, 8); return (double)v; }
        case kDLUInt:
            if (t->dtype.bits == 8) { uint8_t v; memcpy(&v, p, 1); return v; }
            if (t->dtype.bits == 16) { uint16_t v; memcpy(&v, p, 2); return v; }
            if (t->dtype.bits == 32) { uint32_t v; memcpy(&v, p, 4); return v; }
            { uint64_t v; memcpy(&v, p, 8); return (double)v; }
        case kDLBfloat: {
            uint16_t half;
            uint32_t bits;
            float v;
            memcpy(&half, p, 2);
            bits = (uint32_t)half << 16;
            memcpy(&v, &bits, 4);
            return v;
        }
        case kDLFloat:
        case kDLComplex:
            if (t->dtype.bits == 32 || (t->dtype.code == kDLComplex && t->dtype.bits == 64)) {
                float v;
                memcpy(&v, p, 4);
                return v;
            }
            if (t->dtype.bits == 64 || t->dtype.bits == 128) {
                double v;
                memcpy(&v, p, 8);
                return v;
            }
            return -1e300;  // float16: not decoded here
        default:
            return -1e300;
    }
}

// Checks that logical element n (row-major order) reads `base + n % period`
// (period 0: `base + n`), walking every index of the tensor.
static void check_values(const DLTensor* t, int64_t base, int64_t period) {
    int64_t index[64];
    int64_t n = 0;
    int64_t total = 1;
    int k;
    int bad = 0;
    for (k = 0; k < t->ndim; ++k) {
        index[k] = 0;
        total *= t->shape[k];
    }
    for (n = 0; n < total; ++n) {
        const int64_t want = base + (period > 0 ? n % period : n);
        if (read_element(t, index) != (double)want) {
            ++bad;
        }
        for (k = t->ndim - 1; k >= 0; --k) {  // next index, last dimension fastest
            if (++index[k] < t->shape[k]) {
                break;
            }
            index[k] = 0;
        }
    }
    CHECK(bad == 0);
}

// Compact strides (elements) of `dims`: row-major, or column-major when `column_major`.
static void compact_strides(const uint64_t* dims, uint32_t rank, int column_major, int64_t* out) {
    int64_t step = 1;
    uint32_t i;
    for (i = 0; i < rank; ++i) {
        const uint32_t k = column_major ? i : rank - 1 - i;
        out[k] = step;
        step *= dims[k] == 0 ? 1 : (int64_t)dims[k];
    }
}

// Expectations for the tensors of c_api_dlpack.hrry (write_dlpack_file.cpp).
typedef struct {
    const char* name;
    HurrayStatus status;
    const char* why;      // failures: text the message contains
    int strided;          // OK: strides are `strides`, not compact
    int64_t strides[2];
    int64_t base;         // OK: logical element n holds base + n % period
    int64_t period;
} Expect;

static const Expect kDlpackFile[] = {
    {"strided_reversed", HURRAY_OK, NULL, 1, {-4, 1}, 0, 0},
    {"column_major", HURRAY_OK, NULL, 0, {0, 0}, 0, 0},
    {"broadcast", HURRAY_OK, NULL, 1, {0, 1}, 0, 4},
    {"bf16", HURRAY_OK, NULL, 0, {0, 0}, 0, 0},
    {"c64", HURRAY_OK, NULL, 0, {0, 0}, 0, 0},
    {"u64", HURRAY_OK, NULL, 0, {0, 0}, 0, 0},
    {"empty", HURRAY_OK, NULL, 0, {0, 0}, 0, 0},
    {"flags", HURRAY_ERR_UNSUPPORTED, "element type bool has no DLPack type", 0, {0, 0}, 0, 0},
    {"i4", HURRAY_ERR_UNSUPPORTED, "element type int4 has no DLPack type", 0, {0, 0}, 0, 0},
    {"f8", HURRAY_ERR_UNSUPPORTED, "element type float8_e4m3 has no DLPack type", 0, {0, 0}, 0, 0},
    {"f128", HURRAY_ERR_UNSUPPORTED, "element type float128 has no DLPack type", 0, {0, 0}, 0, 0},
    {"q8", HURRAY_ERR_UNSUPPORTED, "quantized", 0, {0, 0}, 0, 0},
    {"csr", HURRAY_ERR_UNSUPPORTED, "the csr layout", 0, {0, 0}, 0, 0},
    {"morton", HURRAY_ERR_UNSUPPORTED, "the morton layout", 0, {0, 0}, 0, 0},
    {"cuda", HURRAY_ERR_UNSUPPORTED, "not on the CPU", 0, {0, 0}, 0, 0},
    {"part", HURRAY_ERR_UNSUPPORTED, "composite head", 0, {0, 0}, 0, 0},
    {"part.top", HURRAY_OK, NULL, 0, {0, 0}, 0, 0},
    {"part.bottom", HURRAY_OK, NULL, 0, {0, 0}, 3, 0},
};

static const Expect* find_expect(const char* name, size_t len) {
    size_t i;
    for (i = 0; i < sizeof kDlpackFile / sizeof kDlpackFile[0]; ++i) {
        if (strlen(kDlpackFile[i].name) == len && memcmp(kDlpackFile[i].name, name, len) == 0) {
            return &kDlpackFile[i];
        }
    }
    return NULL;
}

// One exported tensor, and what it must show once its file is closed.
typedef struct {
    DLManagedTensor* managed;
    const Expect* expect;  // NULL: a conformance or KV file tensor (bytes only)
    DLDataType dtype;
    uint32_t rank;
    uint64_t dims[8];
    uint8_t layout;
    uint64_t byte_offset;
    uint8_t* bytes;  // a copy of hurray_file_tensor_buffer's bytes
    uint64_t size;
} Exported;

// Checks an export against its descriptor and the buffer's bytes, then deletes it.
static void check_exported(const Exported* e) {
    const DLTensor* t = &e->managed->dl_tensor;
    int64_t strides[8];
    uint32_t k;
    CHECK(e->managed->manager_ctx != NULL);
    CHECK(t->device.device_type == kDLCPU && t->device.device_id == 0);
    CHECK(t->ndim == (int)e->rank);
    CHECK(t->dtype.code == e->dtype.code && t->dtype.bits == e->dtype.bits && t->dtype.lanes == 1);
    CHECK(t->byte_offset == e->byte_offset);
    CHECK(t->shape != NULL && t->strides != NULL);
    if (e->expect != NULL && e->expect->strided) {
        memcpy(strides, e->expect->strides, sizeof e->expect->strides);
    } else {
        CHECK(e->layout == 0x01 || e->layout == 0x02);
        compact_strides(e->dims, e->rank, e->layout == 0x02, strides);
    }
    for (k = 0; k < e->rank && t->shape != NULL && t->strides != NULL; ++k) {
        CHECK(t->shape[k] == (int64_t)e->dims[k]);
        CHECK(t->strides[k] == strides[k]);
    }
    // The data is the buffer, byte for byte (read after the file was closed).
    if (e->size > 0) {
        CHECK(t->data != NULL && memcmp(t->data, e->bytes, (size_t)e->size) == 0);
    }
    if (e->expect != NULL && t->shape != NULL && t->strides != NULL) {
        check_values(t, e->expect->base, e->expect->period);
    }
    delete_managed(e->managed);
}

// Exports every tensor of the file at `path` (opened with `flags`), closes
// the file, then checks each export and deletes it. `expect_table`: use
// kDlpackFile (every tensor listed); otherwise every tensor must export.
// Returns the number of tensors exported.
static int export_all(const char* path, uint32_t flags, int expect_table) {
    HurrayFile* file = NULL;
    uint64_t count = 0;
    uint64_t i;
    Exported* out;
    int exported = 0;
    int k;
    CHECK_STATUS(hurray_file_open(path, flags, &file), HURRAY_OK);
    if (file == NULL) {
        return 0;
    }
    CHECK_STATUS(hurray_file_tensor_count(file, &count), HURRAY_OK);
    out = (Exported*)calloc(count + 1, sizeof *out);
    CHECK(out != NULL);
    for (i = 0; out != NULL && i < count; ++i) {
        Exported* e = &out[exported];  // reused until a tensor exports
        const char* name = NULL;
        size_t name_len = 0;
        HurrayDescriptor* d = NULL;
        HurrayBuffer* b = NULL;
        uintptr_t rank = 8;
        uint8_t tag = 0;
        void* data = NULL;
        DLManagedTensor* m = NULL;
        HurrayStatus want = HURRAY_OK;
        HurrayStatus got;

        memset(e, 0, sizeof *e);
        CHECK_STATUS(hurray_file_tensor_name(file, i, &name, &name_len), HURRAY_OK);
        CHECK_STATUS(hurray_file_tensor_descriptor(file, i, &d), HURRAY_OK);
        if (d == NULL) {
            continue;
        }
        CHECK_STATUS(hurray_descriptor_element_type_tag(d, &tag), HURRAY_OK);
        CHECK_STATUS(hurray_descriptor_layout_tag(d, &e->layout), HURRAY_OK);
        CHECK_STATUS(hurray_descriptor_shape(d, e->dims, &rank), HURRAY_OK);
        CHECK_STATUS(hurray_descriptor_byte_offset(d, &e->byte_offset), HURRAY_OK);
        CHECK_STATUS(hurray_descriptor_destroy(d), HURRAY_OK);
        e->rank = (uint32_t)rank;
        if (expect_table) {
            e->expect = find_expect(name, name_len);
            CHECK(e->expect != NULL);
            if (e->expect == NULL) {
                continue;
            }
            want = e->expect->status;
        }
        if (want == HURRAY_OK) {
            CHECK(dtype_of_tag(tag, &e->dtype));
        }

        got = hurray_file_tensor_to_dlpack(file, i, &m);
        CHECK_STATUS(got, want);
        if (got != HURRAY_OK) {
            CHECK(m == NULL);
            if (e->expect != NULL && e->expect->why != NULL) {
                CHECK(strstr(hurray_last_error_message(), e->expect->why) != NULL);
                CHECK(strstr(hurray_last_error_message(), e->expect->name) != NULL);  // names the tensor
            }
            continue;
        }
        CHECK(m != NULL);
        if (m == NULL) {
            continue;
        }
        count_deleter(m);
        e->managed = m;
        // The buffer's bytes, copied now (the buffer is released before the file).
        CHECK_STATUS(hurray_file_tensor_buffer(file, i, 0, &b), HURRAY_OK);
        if (b != NULL) {
            CHECK_STATUS(hurray_buffer_byte_size(b, &e->size), HURRAY_OK);
            CHECK_STATUS(hurray_buffer_data_ptr(b, &data), HURRAY_OK);
            CHECK(m->dl_tensor.data == data);  // zero-copy: the same bytes
            e->bytes = (uint8_t*)malloc(e->size > 0 ? (size_t)e->size : 1);
            CHECK(e->bytes != NULL);
            if (e->bytes != NULL && e->size > 0) {
                memcpy(e->bytes, data, (size_t)e->size);
            }
            CHECK_STATUS(hurray_buffer_destroy(b), HURRAY_OK);
        }
        ++exported;
    }
    // The exports keep the memory alive: close the file first.
    hurray_file_close(file);
    for (k = 0; out != NULL && k < exported; ++k) {
        check_exported(&out[k]);
        free(out[k].bytes);
    }
    free(out);
    return exported;
}

static int ends_with(const char* s, const char* suffix) {
    const size_t n = strlen(s);
    const size_t m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

// Every tensor of every conformance file (files/*.hrry) exports, with both reads.
static void test_conformance_files(void) {
    char dir_path[4096];
    DIR* dir;
    struct dirent* entry;
    int files = 0;
    join(dir_path, sizeof dir_path, g_conformance_dir, "files");
    dir = opendir(dir_path);
    CHECK(dir != NULL);
    if (dir == NULL) {
        return;
    }
    while ((entry = readdir(dir)) != NULL) {
        char path[4096];
        if (!ends_with(entry->d_name, ".hrry")) {
            continue;
        }
        join(path, sizeof path, dir_path, entry->d_name);
        CHECK(export_all(path, 0, 0) > 0);
        CHECK(export_all(path, HURRAY_FILE_NO_MMAP, 0) > 0);
        ++files;
    }
    closedir(dir);
    CHECK(files >= 1);
}

static void test_files(void) {
    char path[4096];
    test_conformance_files();
    // The KV file: float32 scalar (rank 0), int16 [2, 3, 4], float64 [3].
    CHECK(export_all(g_kv_file, 0, 0) == 3);
    CHECK(export_all(g_kv_file, HURRAY_FILE_NO_MMAP, 0) == 3);
    // Strided, column-major, other types, and tensors DLPack cannot describe.
    join(path, sizeof path, g_tmp_dir, "c_api_dlpack.hrry");
    CHECK(export_all(path, 0, 1) == 9);
    CHECK(export_all(path, HURRAY_FILE_NO_MMAP, 1) == 9);
}

// NULL arguments and indexes out of range of hurray_file_tensor_to_dlpack.
static void test_file_arguments(void) {
    char path[4096];
    HurrayFile* file = NULL;
    DLManagedTensor sentinel;
    DLManagedTensor* m = &sentinel;
    join(path, sizeof path, g_conformance_dir, "files/basic.hrry");
    CHECK_STATUS(hurray_file_open(path, 0, &file), HURRAY_OK);
    if (file == NULL) {
        return;
    }
    CHECK_NULL_ARG(hurray_file_tensor_to_dlpack(file, 0, NULL));
    CHECK_NULL_ARG(hurray_file_tensor_to_dlpack(NULL, 0, &m));
    CHECK(m == NULL);
    CHECK(strstr(hurray_last_error_message(), "`file`") != NULL);
    m = &sentinel;
    CHECK_STATUS(hurray_file_tensor_to_dlpack(file, 2, &m), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    CHECK(m == NULL);
    CHECK(strstr(hurray_last_error_message(), "tensor index 2 is out of range (there are 2)") != NULL);
    m = &sentinel;
    CHECK_STATUS(hurray_file_tensor_to_dlpack(file, UINT64_MAX, &m), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    CHECK(m == NULL);
    hurray_file_close(file);
}

// hurray_tensor_to_dlpack over caller memory: the buffer is consumed on
// success (its release runs once, from the deleter), kept on failure.
static void test_caller_memory(void) {
    float values[12];
    uint8_t* data = NULL;
    HurrayDescriptor* d = read_descriptor("row_major_f32_3x4.bin");
    HurrayBuffer* b;
    DLManagedTensor sentinel;
    DLManagedTensor* m = NULL;
    int released;
    int i;
    if (d == NULL) {
        return;
    }
    for (i = 0; i < 12; ++i) {
        values[i] = (float)i;
    }
    b = heap_buffer(48, 0, values, &data);
    CHECK(b != NULL);
    if (b == NULL) {
        hurray_descriptor_destroy(d);
        return;
    }
    released = g_released;
    CHECK_STATUS(hurray_tensor_to_dlpack(d, b, &m), HURRAY_OK);
    CHECK(m != NULL);
    // The descriptor is only read: destroying it leaves the export whole.
    CHECK_STATUS(hurray_descriptor_destroy(d), HURRAY_OK);
    if (m != NULL) {
        const DLTensor* t = &m->dl_tensor;
        count_deleter(m);
        CHECK(t->data == data);  // zero-copy
        CHECK(t->byte_offset == 0);
        CHECK(t->device.device_type == kDLCPU && t->device.device_id == 0);
        CHECK(t->dtype.code == kDLFloat && t->dtype.bits == 32 && t->dtype.lanes == 1);
        CHECK(t->ndim == 2 && t->shape[0] == 3 && t->shape[1] == 4);
        CHECK(t->strides[0] == 4 && t->strides[1] == 1);
        check_values(t, 0, 0);
        CHECK(g_released == released);  // still alive
        delete_managed(m);
        CHECK(g_released == released + 1);  // the deleter destroyed the buffer once
    }

    // Failures leave the buffer to the caller, and *out NULL.
    d = read_descriptor("row_major_f32_3x4.bin");
    b = heap_buffer(40, 0, NULL, &data);  // 8 bytes short of 48
    CHECK(d != NULL && b != NULL);
    if (d != NULL && b != NULL) {
        m = &sentinel;
        CHECK_STATUS(hurray_tensor_to_dlpack(d, b, &m), HURRAY_ERR_INVALID_ARGUMENT);
        CHECK(m == NULL);
        released = g_released;
        CHECK_STATUS(hurray_buffer_destroy(b), HURRAY_OK);
        CHECK(g_released == released + 1);
        b = heap_buffer(48, 0x01, NULL, &data);  // a CUDA buffer
        CHECK(b != NULL);
        if (b != NULL) {
            m = &sentinel;
            CHECK_STATUS(hurray_tensor_to_dlpack(d, b, &m), HURRAY_ERR_UNSUPPORTED);
            CHECK(m == NULL);
            CHECK(strstr(hurray_last_error_message(), "the buffer is not on the CPU") != NULL);
            CHECK_STATUS(hurray_buffer_destroy(b), HURRAY_OK);
        }
        // NULL arguments: nothing consumed either.
        b = heap_buffer(48, 0, NULL, &data);
        CHECK(b != NULL);
        m = &sentinel;
        CHECK_NULL_ARG(hurray_tensor_to_dlpack(NULL, b, &m));
        CHECK(m == NULL);
        CHECK(strstr(hurray_last_error_message(), "`descriptor`") != NULL);
        m = &sentinel;
        CHECK_NULL_ARG(hurray_tensor_to_dlpack(d, NULL, &m));
        CHECK(m == NULL);
        CHECK(strstr(hurray_last_error_message(), "`buffer`") != NULL);
        CHECK_NULL_ARG(hurray_tensor_to_dlpack(d, b, NULL));
        released = g_released;
        if (b != NULL) {
            CHECK_STATUS(hurray_buffer_destroy(b), HURRAY_OK);
        }
        CHECK(g_released == released + 1);
    }
    if (d != NULL) {
        hurray_descriptor_destroy(d);
    }
}

// Conformance descriptors with caller memory: which export, which do not.
static void test_descriptors(void) {
    static const struct {
        const char* file;
        HurrayStatus status;
        uint64_t bytes;   // buffer size to give
        const char* why;  // failures: text the message contains
    } kCases[] = {
        {"row_major_f16_2x2.bin", HURRAY_OK, 8, NULL},
        {"row_major_int8_5.bin", HURRAY_OK, 5, NULL},
        {"empty_f32_0x4.bin", HURRAY_OK, 0, NULL},
        {"sharded_f32_8x4.bin", HURRAY_OK, 128, NULL},
        {"bool_packed_10.bin", HURRAY_ERR_UNSUPPORTED, 2, "element type bool has no DLPack type"},
        {"composite_head_partition.bin", HURRAY_ERR_UNSUPPORTED, 64, "composite head"},
        {"csr_f32_3x3.bin", HURRAY_ERR_UNSUPPORTED, 64, "the csr layout"},
        {"morton_f32_4x4.bin", HURRAY_ERR_UNSUPPORTED, 64, "the morton layout"},
        {"quant_per_block_int4_128x128.bin", HURRAY_ERR_UNSUPPORTED, 8192, "quantized"},
    };
    size_t i;
    for (i = 0; i < sizeof kCases / sizeof kCases[0]; ++i) {
        HurrayDescriptor* d = read_descriptor(kCases[i].file);
        uint8_t* data = NULL;
        HurrayBuffer* b = heap_buffer(kCases[i].bytes, 0, NULL, &data);
        DLManagedTensor sentinel;
        DLManagedTensor* m = &sentinel;
        const int released = g_released;
        CHECK(d != NULL && b != NULL);
        if (d == NULL || b == NULL) {
            if (d != NULL) {
                hurray_descriptor_destroy(d);
            }
            if (b != NULL) {
                hurray_buffer_destroy(b);
            }
            continue;
        }
        CHECK_STATUS(hurray_tensor_to_dlpack(d, b, &m), kCases[i].status);
        if (kCases[i].status == HURRAY_OK) {
            uint64_t dims[8];
            uintptr_t rank = 8;
            uint8_t tag = 0;
            DLDataType dtype;
            int64_t strides[8];
            uintptr_t k;
            CHECK(m != NULL && m != &sentinel);
            if (m == NULL || m == &sentinel) {
                hurray_descriptor_destroy(d);
                continue;
            }
            count_deleter(m);
            CHECK_STATUS(hurray_descriptor_shape(d, dims, &rank), HURRAY_OK);
            CHECK_STATUS(hurray_descriptor_element_type_tag(d, &tag), HURRAY_OK);
            CHECK(dtype_of_tag(tag, &dtype));
            CHECK(m->dl_tensor.dtype.code == dtype.code && m->dl_tensor.dtype.bits == dtype.bits);
            CHECK(m->dl_tensor.data == data);
            CHECK(m->dl_tensor.ndim == (int)rank);
            compact_strides(dims, (uint32_t)rank, 0, strides);
            for (k = 0; k < rank; ++k) {
                CHECK(m->dl_tensor.shape[k] == (int64_t)dims[k]);
                CHECK(m->dl_tensor.strides[k] == strides[k]);
            }
            delete_managed(m);
            CHECK(g_released == released + 1);
        } else {
            CHECK(m == NULL);
            CHECK(strstr(hurray_last_error_message(), kCases[i].why) != NULL);
            CHECK(g_released == released);  // not consumed
            CHECK_STATUS(hurray_buffer_destroy(b), HURRAY_OK);
            CHECK(g_released == released + 1);
        }
        hurray_descriptor_destroy(d);
    }
}

// A buffer from a file, consumed by hurray_tensor_to_dlpack, outlives the file.
static void test_file_buffer(void) {
    char path[4096];
    HurrayFile* file = NULL;
    HurrayDescriptor* d = NULL;
    HurrayBuffer* b = NULL;
    DLManagedTensor* m = NULL;
    uint64_t index = 0;
    uint8_t copy[3] = {0, 0, 0};
    uint64_t size = 0;
    void* data = NULL;
    join(path, sizeof path, g_conformance_dir, "files/basic.hrry");
    CHECK_STATUS(hurray_file_open(path, HURRAY_FILE_NO_MMAP, &file), HURRAY_OK);
    if (file == NULL) {
        return;
    }
    CHECK_STATUS(hurray_file_find(file, "bias", 4, &index), HURRAY_OK);
    CHECK_STATUS(hurray_file_tensor_descriptor(file, index, &d), HURRAY_OK);
    CHECK_STATUS(hurray_file_tensor_buffer(file, index, 0, &b), HURRAY_OK);
    if (d != NULL && b != NULL) {
        CHECK_STATUS(hurray_buffer_byte_size(b, &size), HURRAY_OK);
        CHECK_STATUS(hurray_buffer_data_ptr(b, &data), HURRAY_OK);
        CHECK(size == 3);
        if (size == 3 && data != NULL) {
            memcpy(copy, data, 3);
        }
        CHECK_STATUS(hurray_tensor_to_dlpack(d, b, &m), HURRAY_OK);
    }
    hurray_file_close(file);
    if (d != NULL) {
        hurray_descriptor_destroy(d);
    }
    CHECK(m != NULL);
    if (m != NULL) {
        count_deleter(m);
        CHECK(m->dl_tensor.data == data);
        CHECK(m->dl_tensor.dtype.code == kDLInt && m->dl_tensor.dtype.bits == 8);
        CHECK(m->dl_tensor.ndim == 1 && m->dl_tensor.shape[0] == 3 && m->dl_tensor.strides[0] == 1);
        // Read after close: the consumed buffer holds the file's memory.
        CHECK(m->dl_tensor.data != NULL && memcmp(m->dl_tensor.data, copy, 3) == 0);
        delete_managed(m);
    } else if (b != NULL) {
        hurray_buffer_destroy(b);
    }
}

// The example of docs/c-api.md ("DLPack"): that block is the region below.
static void test_doc_example(void) {
    char path[4096];
    HurrayFile* file = NULL;
    HurrayBuffer* b = NULL;
    void* data = NULL;
    float want = -1.0f;
    float w11 = -2.0f;
    uint64_t i = 0;
    DLManagedTensor* m = NULL;
    join(path, sizeof path, g_conformance_dir, "files/basic.hrry");
    CHECK_STATUS(hurray_file_open(path, 0, &file), HURRAY_OK);
    if (file == NULL) {
        return;
    }
    // weights[1][1], read through a buffer.
    CHECK_STATUS(hurray_file_find(file, "weights", 7, &i), HURRAY_OK);
    CHECK_STATUS(hurray_file_tensor_buffer(file, i, 0, &b), HURRAY_OK);
    if (b != NULL && hurray_buffer_data_ptr(b, &data) == HURRAY_OK && data != NULL) {
        memcpy(&want, (const char*)data + 12, sizeof want);
    }
    if (b != NULL) {
        hurray_buffer_destroy(b);
    }
    // readme:begin dlpack
    if (hurray_file_find(file, "weights", 7, &i) == HURRAY_OK &&
        hurray_file_tensor_to_dlpack(file, i, &m) == HURRAY_OK) {
        hurray_file_close(file);  // m keeps the file's memory
        const DLTensor* t = &m->dl_tensor;  // float32 [2, 2]
        const float* base = (const float*)((const char*)t->data + t->byte_offset);
        w11 = base[1 * t->strides[0] + 1 * t->strides[1]];  // weights[1][1]
        m->deleter(m);  // exactly once
    }
    // readme:end dlpack
    CHECK(m != NULL);
    CHECK(w11 == want);
    if (m == NULL) {
        hurray_file_close(file);
    }
}

void dlpack_tests(void) {
    test_files();
    test_file_arguments();
    test_caller_memory();
    test_descriptors();
    test_file_buffer();
    test_doc_example();
}
