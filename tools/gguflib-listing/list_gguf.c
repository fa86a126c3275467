// SPDX-License-Identifier: Apache-2.0
// Open + list with gguflib (antirez/gguf-tools): the peer figure of issue 28's
// listing goal. Writes a GGUF file of N float32[4] tensors (16 bytes each, as
// the uint8[16] tensors of bench/listing_bench.cpp's files) named
// model.layers.<i>.weight, then times, ITER times, gguf_open + skipping the KV
// section + gguf_get_tensor for every tensor (name, type, shape, data offset)
// + gguf_close, and prints the median in microseconds.
//
//   list_gguf FILE N ITER
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gguflib.h"

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void* a, const void* b) {
    const double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

static int write_file(const char* path, uint64_t n) {
    gguf_ctx* ctx = gguf_create(path, GGUF_OVERWRITE);
    if (!ctx) return 0;
    // A string value is its uint64 length, then its bytes.
    unsigned char arch[8 + 5];
    const uint64_t arch_len = 5;
    memcpy(arch, &arch_len, 8);
    memcpy(arch + 8, "bench", 5);
    if (!gguf_append_kv(ctx, "general.architecture", strlen("general.architecture"), GGUF_VALUE_TYPE_STRING, arch,
                        sizeof arch))
        return 0;
    char name[64];
    uint64_t dim[1] = {4};
    for (uint64_t i = 0; i < n; ++i) {
        const int len = snprintf(name, sizeof name, "model.layers.%llu.weight", (unsigned long long)i);
        if (!gguf_append_tensor_info(ctx, name, (uint64_t)len, 1, dim, GGUF_TYPE_F32, i * 32)) return 0;
    }
    const float data[4] = {0};
    for (uint64_t i = 0; i < n; ++i) {
        if (!gguf_append_tensor_data(ctx, (void*)data, sizeof data)) return 0;
    }
    gguf_close(ctx);
    return 1;
}

int main(int argc, char** argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: list_gguf FILE N ITER\n");
        return 2;
    }
    const char* path = argv[1];
    const uint64_t n = strtoull(argv[2], NULL, 10);
    const int iter = atoi(argv[3]);
    if (!write_file(path, n)) {
        fprintf(stderr, "list_gguf: cannot write %s\n", path);
        return 1;
    }
    double* t = calloc((size_t)iter, sizeof *t);
    uint64_t acc = 0;
    for (int k = 0; k < iter; ++k) {
        const double t0 = now_us();
        gguf_ctx* ctx = gguf_open(path);
        if (!ctx) return 1;
        gguf_skip_key_values_section(ctx);
        gguf_tensor tensor;
        uint64_t listed = 0;
        while (gguf_get_tensor(ctx, &tensor)) {
            acc += tensor.namelen + tensor.type + tensor.dim[0] + tensor.offset + (uint8_t)tensor.name[0];
            ++listed;
        }
        gguf_close(ctx);
        t[k] = now_us() - t0;
        if (listed != n) {
            fprintf(stderr, "list_gguf: listed %llu of %llu\n", (unsigned long long)listed, (unsigned long long)n);
            return 1;
        }
    }
    qsort(t, (size_t)iter, sizeof *t, cmp_double);
    printf("gguflib open+list %llu tensors: median %.1f us (min %.1f, max %.1f; %d runs; acc %llu)\n",
           (unsigned long long)n, t[iter / 2], t[0], t[iter - 1], iter, (unsigned long long)acc);
    free(t);
    remove(path);
    return 0;
}
