// SPDX-License-Identifier: Apache-2.0
// Tests of the converters through the C ABI (hurray_convert_file,
// hurray_detect_format, HurraySource): a .npy and a .safetensors file, written
// here byte by byte from their format descriptions, converted to .hrry and
// back, enumerated and read through a source; bad input gives a status and a
// message. C99.
#include "c_test_util.h"

#include <stdlib.h>

// A .npy v1.0 file of a little-endian float32 array of shape (2, 3), values
// k * 0.5 - 1 (k = 0..5), into `path`; 1 on success.
static int write_npy(const char* path) {
    static const char kDict[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    uint8_t bytes[128 + 24];
    size_t header_len = 0;
    size_t dict_len = sizeof kDict - 1;
    size_t total;
    size_t k;
    memset(bytes, 0, sizeof bytes);
    memcpy(bytes, "\x93NUMPY\x01\x00", 8);
    // magic (6) + version (2) + length (2) + dict, padded with spaces and a
    // newline to a multiple of 64.
    header_len = 64 * ((10 + dict_len + 1 + 63) / 64) - 10;
    bytes[8] = (uint8_t)(header_len & 0xFF);
    bytes[9] = (uint8_t)(header_len >> 8);
    memcpy(bytes + 10, kDict, dict_len);
    memset(bytes + 10 + dict_len, ' ', header_len - dict_len - 1);
    bytes[10 + header_len - 1] = '\n';
    total = 10 + header_len;
    for (k = 0; k < 6; ++k) {
        float v = (float)k * 0.5F - 1.0F;
        memcpy(bytes + total + 4 * k, &v, 4);  // little-endian host (x86-64, aarch64)
    }
    return write_all(path, bytes, total + 24);
}

// A SafeTensors file: "w" float32 (2, 2) = 1, 2, 3, 4; "ids" int64 (3,) = -1, 0, 7;
// metadata {"format": "pt"}. `cut` bytes are left off the end (a truncated
// file when nonzero). 1 on success.
static int write_safetensors(const char* path, size_t cut) {
    static const char kHeader[] =
        "{\"__metadata__\":{\"format\":\"pt\"},"
        "\"w\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},"
        "\"ids\":{\"dtype\":\"I64\",\"shape\":[3],\"data_offsets\":[16,40]}}";
    uint8_t bytes[512];
    size_t n = sizeof kHeader - 1;
    size_t padded = (n + 7) / 8 * 8;  // the data area starts 8-byte aligned
    const float w[4] = {1.0F, 2.0F, 3.0F, 4.0F};
    const int64_t ids[3] = {-1, 0, 7};
    size_t k;
    memset(bytes, 0, sizeof bytes);
    for (k = 0; k < 8; ++k) {
        bytes[k] = (uint8_t)((uint64_t)padded >> (8 * k));
    }
    memcpy(bytes + 8, kHeader, n);
    memset(bytes + 8 + n, ' ', padded - n);
    memcpy(bytes + 8 + padded, w, sizeof w);
    memcpy(bytes + 8 + padded + sizeof w, ids, sizeof ids);
    return write_all(path, bytes, 8 + padded + sizeof w + sizeof ids - cut);
}

// hurray_convert_file_cancellable's callback: cancels at call *(uint64_t*)context.
static uint64_t g_cancel_calls;
static int cancel_at(void* context, uint64_t done, uint64_t total) {
    (void)done;
    (void)total;
    return ++g_cancel_calls >= *(const uint64_t*)context;
}

static uint64_t g_progress_calls;
static uint64_t g_progress_done;
static uint64_t g_progress_total;
static void on_progress(void* context, uint64_t done, uint64_t total) {
    CHECK(context == (void*)&g_progress_calls);
    ++g_progress_calls;
    g_progress_done = done;
    g_progress_total = total;
}

// The float32 values of tensor `name` of an HRRYFILE at `path` into `out` (n values); 1 when read.
static int hrry_floats(const char* path, const char* name, float* out, uint64_t n) {
    HurrayFile* file = NULL;
    uint64_t index = 0, count = 0;
    int ok = 0;
    if (hurray_file_open(path, 0, &file) != HURRAY_OK) {
        return 0;
    }
    if (hurray_file_find(file, name, strlen(name), &index) == HURRAY_OK &&
        hurray_file_tensor_to_float32(file, index, out, n, &count) == HURRAY_OK && count == n) {
        ok = 1;
    }
    hurray_file_close(file);
    return ok;
}

static void test_detect(const char* npy, const char* st, const char* hrry) {
    uint8_t f = 99;
    char path[1024];
    CHECK_STATUS(hurray_detect_format(npy, &f), HURRAY_OK);
    CHECK(f == HURRAY_FORMAT_NPY);
    CHECK_STATUS(hurray_detect_format(st, &f), HURRAY_OK);
    CHECK(f == HURRAY_FORMAT_SAFETENSORS);
    CHECK_STATUS(hurray_detect_format(hrry, &f), HURRAY_OK);
    CHECK(f == HURRAY_FORMAT_HRRYFILE);
    join(path, sizeof path, g_tmp_dir, "c_convert_text.txt");
    CHECK(write_all(path, "just some text, no tensors here", 31));
    CHECK_STATUS(hurray_detect_format(path, &f), HURRAY_OK);
    CHECK(f == HURRAY_FORMAT_UNKNOWN);
    join(path, sizeof path, g_tmp_dir, "c_convert_no_such_file.npy");
    CHECK_STATUS(hurray_detect_format(path, &f), HURRAY_ERR_IO);
    CHECK(strstr(hurray_last_error_message(), "c_convert_no_such_file.npy") != NULL);
    CHECK(strcmp(hurray_format_name(HURRAY_FORMAT_SAFETENSORS), "safetensors") == 0);
    CHECK(strcmp(hurray_format_name(HURRAY_FORMAT_HRRYFILE), "hrryfile") == 0);
    CHECK(strcmp(hurray_format_name(200), "") == 0);
    CHECK_NULL_ARG(hurray_detect_format(NULL, &f));
    CHECK_NULL_ARG(hurray_detect_format(npy, NULL));
}

// .npy -> .hrry (verified, progress reported) -> .npy, values compared.
static void test_npy_round_trip(const char* npy, const char* dir) {
    char hrry[1024], back[1024];
    HurrayConvertOptions opt;
    HurrayConvertReport report;
    float values[6];
    HurraySource* src = NULL;
    uint64_t n = 0;
    uint8_t f = 0;
    int k;
    join(hrry, sizeof hrry, dir, "c_convert_npy.hrry");
    join(back, sizeof back, dir, "c_convert_back.npy");
    CHECK_STATUS(hurray_convert_options_init(&opt), HURRAY_OK);
    CHECK(opt.struct_size == sizeof opt && opt.durable == 1 && opt.dequantize_type == 0x03);
    opt.verify = 1;
    opt.durable = 0;
    opt.progress = on_progress;
    opt.progress_context = &g_progress_calls;
    g_progress_calls = 0;
    memset(&report, 0xAB, sizeof report);
    CHECK_STATUS(hurray_convert_file(npy, hrry, &opt, &report), HURRAY_OK);
    CHECK(report.from == HURRAY_FORMAT_NPY && report.to == HURRAY_FORMAT_HRRYFILE);
    CHECK(report.tensors == 1 && report.data_bytes == 24 && report.verified == 1);
    CHECK(g_progress_calls > 0 && g_progress_done == 24 && g_progress_total == 24);

    memset(values, 0, sizeof values);
    {
        HurrayFile* file = NULL;
        const char* name = NULL;
        size_t len = 0;
        uint64_t count = 0;
        CHECK_STATUS(hurray_file_open(hrry, 0, &file), HURRAY_OK);
        CHECK_STATUS(hurray_file_tensor_count(file, &count), HURRAY_OK);
        CHECK(count == 1);
        CHECK_STATUS(hurray_file_tensor_name(file, 0, &name, &len), HURRAY_OK);
        CHECK_STATUS(hurray_file_tensor_to_float32(file, 0, values, 6, &count), HURRAY_OK);
        CHECK(count == 6);
        hurray_file_close(file);
    }
    for (k = 0; k < 6; ++k) {
        CHECK(values[k] == (float)k * 0.5F - 1.0F);
    }

    // A callback that cancels: HURRAY_ERR_CANCELLED, its code, and no output; one that
    // returns 0 lets the conversion finish.
    {
        char cancelled[1024];
        FILE* probe;
        uint64_t stop_at = 1;
        join(cancelled, sizeof cancelled, dir, "c_convert_cancelled.hrry");
        g_cancel_calls = 0;
        CHECK_STATUS(hurray_convert_file_cancellable(npy, cancelled, NULL, cancel_at, &stop_at, NULL),
                     HURRAY_ERR_CANCELLED);
        CHECK(hurray_last_error_code() == HURRAY_CODE_CANCELLED);
        CHECK(g_cancel_calls == 1);
        probe = fopen(cancelled, "rb");
        CHECK(probe == NULL);
        if (probe != NULL) {
            fclose(probe);
        }
        stop_at = 1000000;
        g_cancel_calls = 0;
        CHECK_STATUS(hurray_convert_file_cancellable(npy, cancelled, NULL, cancel_at, &stop_at, &report), HURRAY_OK);
        CHECK(g_cancel_calls > 0 && report.tensors == 1);
        CHECK(remove(cancelled) == 0);
    }

    // Back to .npy (options NULL: the defaults, format from the extension).
    CHECK_STATUS(hurray_convert_file(hrry, back, NULL, NULL), HURRAY_OK);
    CHECK_STATUS(hurray_source_open(back, 0, &src), HURRAY_OK);
    CHECK_STATUS(hurray_source_format(src, &f), HURRAY_OK);
    CHECK(f == HURRAY_FORMAT_NPY);
    CHECK_STATUS(hurray_source_tensor_count(src, &n), HURRAY_OK);
    CHECK(n == 1);
    memset(values, 0, sizeof values);
    CHECK_STATUS(hurray_source_read(src, 0, 0, 0, values, sizeof values), HURRAY_OK);
    for (k = 0; k < 6; ++k) {
        CHECK(values[k] == (float)k * 0.5F - 1.0F);
    }
    hurray_source_free(src);
}

// .safetensors -> .hrry -> .safetensors, and the source API over the original.
static void test_safetensors(const char* st, const char* dir) {
    char hrry[1024], back[1024];
    HurraySource* src = NULL;
    HurrayDescriptor* d = NULL;
    HurrayBuffer* b = NULL;
    HurrayFile* kv = NULL;
    const char* name = NULL;
    const char* value = NULL;
    size_t len = 0;
    uint64_t n = 0, index = 99, dims[4], size = 0;
    uintptr_t rank = 4;
    uint8_t tag = 0;
    uint32_t buffers = 0;
    float w[4];
    int64_t ids[3];
    void* data = NULL;
    int k;

    join(hrry, sizeof hrry, dir, "c_convert_st.hrry");
    join(back, sizeof back, dir, "c_convert_back.safetensors");
    CHECK_STATUS(hurray_convert_file(st, hrry, NULL, NULL), HURRAY_OK);
    CHECK(hrry_floats(hrry, "w", w, 4));
    for (k = 0; k < 4; ++k) {
        CHECK(w[k] == (float)(k + 1));
    }
    CHECK_STATUS(hurray_convert_file(hrry, back, NULL, NULL), HURRAY_OK);

    // Enumerate the original through a source.
    CHECK_STATUS(hurray_source_open(st, 0, &src), HURRAY_OK);
    CHECK_STATUS(hurray_source_tensor_count(src, &n), HURRAY_OK);
    CHECK(n == 2);
    CHECK_STATUS(hurray_source_find(src, "ids", 3, &index), HURRAY_OK);
    CHECK(index < 2);
    CHECK_STATUS(hurray_source_tensor_name(src, index, &name, &len), HURRAY_OK);
    CHECK(len == 3 && memcmp(name, "ids", 3) == 0 && name[3] == '\0');
    CHECK_STATUS(hurray_source_tensor_descriptor(src, index, &d), HURRAY_OK);
    CHECK_STATUS(hurray_descriptor_element_type_tag(d, &tag), HURRAY_OK);
    CHECK(strcmp(hurray_element_type_name(tag), "int64") == 0);
    CHECK_STATUS(hurray_descriptor_shape(d, dims, &rank), HURRAY_OK);
    CHECK(rank == 1 && dims[0] == 3);
    CHECK_STATUS(hurray_descriptor_buffer_count(d, &buffers), HURRAY_OK);
    CHECK(buffers == 1);
    CHECK_STATUS(hurray_descriptor_buffer_size(d, 0, &size), HURRAY_OK);
    CHECK(size == 24);
    hurray_descriptor_destroy(d);
    // Chunked: three reads of 8 bytes.
    for (k = 0; k < 3; ++k) {
        CHECK_STATUS(hurray_source_read(src, index, 0, (uint64_t)k * 8, &ids[k], 8), HURRAY_OK);
    }
    CHECK(ids[0] == -1 && ids[1] == 0 && ids[2] == 7);
    CHECK_STATUS(hurray_source_read(src, index, 0, 16, ids, 16), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hurray_source_read(src, index, 1, 0, ids, 8), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    CHECK_STATUS(hurray_source_read(src, 2, 0, 0, ids, 8), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    CHECK_STATUS(hurray_source_read(src, index, 0, 0, NULL, 0), HURRAY_OK);
    CHECK_STATUS(hurray_source_tensor_name(src, 2, &name, &len), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    CHECK_STATUS(hurray_source_find(src, "nope", 4, &index), HURRAY_ERR_NOT_FOUND);

    // Zero-copy view of "w" (a mapped SafeTensors file), valid after close.
    CHECK_STATUS(hurray_source_find(src, "w", 1, &index), HURRAY_OK);
    CHECK_STATUS(hurray_source_tensor_buffer(src, index, 0, &b), HURRAY_OK);
    CHECK_STATUS(hurray_source_tensor_buffer(src, index, 1, &b), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    CHECK(b == NULL);

    // KV metadata through the file KV getters.
    CHECK_STATUS(hurray_source_kv(src, &kv), HURRAY_OK);
    hurray_source_free(src);
    CHECK_STATUS(hurray_file_kv_count(kv, &n), HURRAY_OK);
    CHECK(n == 1);
    CHECK_STATUS(hurray_file_kv_get_string(kv, "format", 6, &value, &len), HURRAY_OK);
    CHECK(len == 2 && memcmp(value, "pt", 2) == 0);
    CHECK_STATUS(hurray_file_tensor_count(kv, &n), HURRAY_OK);
    CHECK(n == 0);
    hurray_file_close(kv);

    // The buffer from before the close, re-taken (the first call above failed
    // on purpose and set b to NULL): take it again from a new source.
    CHECK_STATUS(hurray_source_open(back, 0, &src), HURRAY_OK);
    CHECK_STATUS(hurray_source_find(src, "w", 1, &index), HURRAY_OK);
    CHECK_STATUS(hurray_source_tensor_buffer(src, index, 0, &b), HURRAY_OK);
    hurray_source_close(src);  // the former name of hurray_source_free
    CHECK_STATUS(hurray_buffer_byte_size(b, &size), HURRAY_OK);
    CHECK(size == 16);
    CHECK_STATUS(hurray_buffer_data_ptr(b, &data), HURRAY_OK);
    memcpy(w, data, sizeof w);
    for (k = 0; k < 4; ++k) {
        CHECK(w[k] == (float)(k + 1));  // the round trip kept every value
    }
    hurray_buffer_destroy(b);
}

// Bad input and bad arguments: a status and a message, never a crash.
static void test_bad_input(const char* st, const char* dir) {
    char cut[1024], out[1024], text[1024];
    HurrayConvertOptions opt;
    HurraySource* src = (HurraySource*)&opt;
    HurrayFile* kv = NULL;
    size_t k;
    join(cut, sizeof cut, dir, "c_convert_cut.safetensors");
    join(out, sizeof out, dir, "c_convert_cut.hrry");
    join(text, sizeof text, dir, "c_convert_text.txt");
    // Every truncation of the SafeTensors file.
    for (k = 1; k <= 40 + 8; k += 3) {
        HurrayStatus st_open, st_conv;
        CHECK(write_safetensors(cut, k));
        st_open = hurray_source_open(cut, 0, &src);
        CHECK(st_open != HURRAY_OK && src == NULL);
        CHECK(hurray_last_error_message()[0] != '\0');
        st_conv = hurray_convert_file(cut, out, NULL, NULL);
        CHECK(st_conv != HURRAY_OK);
        CHECK(strstr(hurray_last_error_message(), "c_convert_cut.safetensors") != NULL);
    }
    {
        FILE* f = fopen(out, "rb");  // no partial output was left behind
        CHECK(f == NULL);
        if (f != NULL) {
            fclose(f);
        }
    }
    CHECK_STATUS(hurray_source_open(text, 0, &src), HURRAY_ERR_UNSUPPORTED);
    CHECK(src == NULL);
    CHECK_STATUS(hurray_source_open(st, 1, &src), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK_NULL_ARG(hurray_source_open(NULL, 0, &src));
    CHECK_NULL_ARG(hurray_source_open(st, 0, NULL));
    CHECK_NULL_ARG(hurray_source_tensor_count(NULL, NULL));
    CHECK_NULL_ARG(hurray_source_kv(NULL, &kv));
    CHECK(kv == NULL);
    hurray_source_free(NULL);
    hurray_source_close(NULL);

    // Options: a wrong struct_size, an unknown format, a bad dequantize type, no format.
    CHECK_STATUS(hurray_convert_options_init(&opt), HURRAY_OK);
    opt.struct_size = 8;
    CHECK_STATUS(hurray_convert_file(st, out, &opt, NULL), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(strstr(hurray_last_error_message(), "struct_size") != NULL);
    hurray_convert_options_init(&opt);
    opt.to = 42;
    CHECK_STATUS(hurray_convert_file(st, out, &opt, NULL), HURRAY_ERR_INVALID_ARGUMENT);
    hurray_convert_options_init(&opt);
    opt.dequantize_type = 0x04;
    CHECK_STATUS(hurray_convert_file(st, out, &opt, NULL), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(strstr(hurray_last_error_message(), "dequantize_type") != NULL);
    join(out, sizeof out, dir, "c_convert_out.unknown_extension");
    CHECK_STATUS(hurray_convert_file(st, out, NULL, NULL), HURRAY_ERR_INVALID_ARGUMENT);
    hurray_convert_options_init(&opt);
    opt.to = HURRAY_FORMAT_STREAM;
    CHECK_STATUS(hurray_convert_file(st, out, &opt, NULL), HURRAY_ERR_UNSUPPORTED);
    CHECK_STATUS(hurray_convert_file(text, out, NULL, NULL), HURRAY_ERR_UNSUPPORTED);
    CHECK_NULL_ARG(hurray_convert_file(NULL, out, NULL, NULL));
    CHECK_NULL_ARG(hurray_convert_file(st, NULL, NULL, NULL));
    CHECK_NULL_ARG(hurray_convert_options_init(NULL));
}

// A GGUF v3 file as ggml's writer lays it out: no KV, one Q4_K tensor "w" of 256 values
// (ne = [256]) whose one block has d = 1, dmin = 0, every scale 1 and min 0, and quant byte
// l of group g = (l % 16) | ((15 - l % 16) << 4); tensor infos padded to 32, the 144 data
// bytes padded to 160. Value 64g + l is l % 16, value 64g + 32 + l is 15 - l % 16.
// Its length goes to `*len`; 1 on success.
static int write_q4k_gguf(const char* path, size_t* len) {
    uint8_t b[64 + 160];
    size_t at = 0;
    size_t k;
    memset(b, 0, sizeof b);
    memcpy(b, "GGUF", 4);
    b[4] = 3;      // version (u32)
    b[8] = 1;      // n_tensors (u64)
    at = 24;       // n_kv (u64) = 0
    b[at] = 1;     // name length (u64)
    b[at + 8] = 'w';
    at += 9;
    b[at] = 1;     // n_dims (u32)
    b[at + 5] = 1; // ne[0] = 256 (u64: 0x100)
    at += 12;
    b[at] = 12;    // type (u32): GGML_TYPE_Q4_K
    at += 4 + 8;   // offset (u64) = 0; 57 bytes, padded to 64
    at = 64;
    b[at + 1] = 0x3C;  // d = float16 1.0
    for (k = 0; k < 4; ++k) {
        b[at + 4 + k] = 1;
        b[at + 12 + k] = 1;
    }
    for (k = 0; k < 128; ++k) {
        b[at + 16 + k] = (uint8_t)((k % 16) | ((15 - k % 16) << 4));
    }
    *len = sizeof b;
    return write_all(path, b, sizeof b);
}

// GGUF (libhurray's private GGML blocks) -> .hrry: hurray_file_open lists and dequantizes
// it by default, refuses it with HURRAY_FILE_SPEC_ONLY; .hrry -> GGUF is the same file.
static void test_gguf_blocks(const char* dir) {
    char gguf[1024], hrry[1024], back[1024];
    HurrayFile* file = NULL;
    float values[256];
    uint64_t count = 0;
    size_t len = 0, back_len = 0;
    uint8_t* want = NULL;
    uint8_t* got = NULL;
    int k;
    join(gguf, sizeof gguf, dir, "c_convert_q4k.gguf");
    join(hrry, sizeof hrry, dir, "c_convert_q4k.hrry");
    join(back, sizeof back, dir, "c_convert_q4k_back.gguf");
    CHECK(write_q4k_gguf(gguf, &len));
    CHECK_STATUS(hurray_convert_file(gguf, hrry, NULL, NULL), HURRAY_OK);
    CHECK_STATUS(hurray_file_open(hrry, 0, &file), HURRAY_OK);
    if (file != NULL) {
        CHECK_STATUS(hurray_file_tensor_count(file, &count), HURRAY_OK);
        CHECK(count == 1);
        memset(values, 0, sizeof values);
        CHECK_STATUS(hurray_file_tensor_to_float32(file, 0, values, 256, &count), HURRAY_OK);
        CHECK(count == 256);
        for (k = 0; k < 256; ++k) {
            const int l = k % 64;
            const float want_value = l < 32 ? (float)(l % 16) : (float)(15 - (l - 32) % 16);
            CHECK(values[k] == want_value);
        }
        hurray_file_close(file);
        file = NULL;
    }
    // Descriptors are decoded on first use: the file opens, the tensor is refused.
    CHECK_STATUS(hurray_file_open(hrry, HURRAY_FILE_SPEC_ONLY, &file), HURRAY_OK);
    if (file != NULL) {
        CHECK_STATUS(hurray_file_tensor_to_float32(file, 0, values, 256, &count), HURRAY_ERR_UNSUPPORTED);
        CHECK(strstr(hurray_last_error_message(), "0xF0 is a private scheme this reader does not know") != NULL);
        hurray_file_close(file);
        file = NULL;
    }
    CHECK_STATUS(hurray_file_open(hrry, HURRAY_FILE_SPEC_ONLY | HURRAY_FILE_PERMISSIVE, &file), HURRAY_OK);
    if (file != NULL) {  // permissive: carried; dequantization knows the scheme all the same
        CHECK_STATUS(hurray_file_tensor_to_float32(file, 0, values, 256, &count), HURRAY_OK);
        CHECK(values[1] == 1.0F && values[32] == 15.0F);
        hurray_file_close(file);
        file = NULL;
    }
    CHECK_STATUS(hurray_file_open(hrry, 0x10u, &file), HURRAY_ERR_INVALID_ARGUMENT);

    CHECK_STATUS(hurray_convert_file(hrry, back, NULL, NULL), HURRAY_OK);
    want = read_all(gguf, &len);
    got = read_all(back, &back_len);
    CHECK(want != NULL && got != NULL && len == back_len && len == 224 && memcmp(want, got, len) == 0);
    free(want);
    free(got);
}

void convert_tests(void) {
    char npy[1024], st[1024], hrry[1024];
    join(npy, sizeof npy, g_tmp_dir, "c_convert.npy");
    join(st, sizeof st, g_tmp_dir, "c_convert.safetensors");
    join(hrry, sizeof hrry, g_tmp_dir, "c_convert_npy.hrry");
    CHECK(write_npy(npy));
    CHECK(write_safetensors(st, 0));
    test_npy_round_trip(npy, g_tmp_dir);
    test_detect(npy, st, hrry);
    test_safetensors(st, g_tmp_dir);
    test_bad_input(st, g_tmp_dir);
    test_gguf_blocks(g_tmp_dir);
}
