// SPDX-License-Identifier: Apache-2.0
// Definitions behind c_test_util.h.
#include "c_test_util.h"

#include <stdlib.h>

int g_passed = 0;
int g_failed = 0;

const char* g_conformance_dir;
const char* g_kv_file;
const char* g_tmp_dir;

void join(char* out, size_t size, const char* dir, const char* name) {
    snprintf(out, size, "%s/%s", dir, name);
}

// Reads a whole file into malloc'ed memory; NULL on failure.
uint8_t* read_all(const char* path, size_t* len) {
    FILE* f = fopen(path, "rb");
    uint8_t* bytes = NULL;
    long size;
    if (f == NULL) {
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        bytes = (uint8_t*)malloc(size > 0 ? (size_t)size : 1);
        if (bytes != NULL && fread(bytes, 1, (size_t)size, f) != (size_t)size) {
            free(bytes);
            bytes = NULL;
        }
        *len = (size_t)size;
    }
    fclose(f);
    return bytes;
}

int write_all(const char* path, const void* bytes, size_t len) {
    FILE* f = fopen(path, "wb");
    int ok;
    if (f == NULL) {
        return 0;
    }
    ok = fwrite(bytes, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}
