// SPDX-License-Identifier: Apache-2.0
// Lists the tensors of an HRRYFILE through the C ABI (like `hurray ls`): name,
// element type, shape and data size, then the KV keys. C99; docs/c-api.md
// shows it. Usage: hurray_c_list FILE.hrry
#include <hurray.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(const char* what, HurrayStatus status) {
    fprintf(stderr, "%s failed (%d): %s\n", what, (int)status, hurray_last_error_message());
    return 1;
}

int main(int argc, char** argv) {
    HurrayFile* file = NULL;
    HurrayStatus st;
    uint64_t count = 0;
    uint64_t i;
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE.hrry\n", argv[0]);
        return 2;
    }
    if (hurray_c_abi_version() != HURRAY_C_ABI_VERSION) {
        fprintf(stderr, "libhurray_c has C ABI %" PRIu32 ", this program was built for %d\n",
                hurray_c_abi_version(), HURRAY_C_ABI_VERSION);
        return 1;
    }
    // readme:begin c
    if ((st = hurray_file_open(argv[1], 0, &file)) != HURRAY_OK) return fail("hurray_file_open", st);
    if ((st = hurray_file_tensor_count(file, &count)) != HURRAY_OK) return fail("tensor_count", st);

    for (i = 0; i < count; ++i) {
        const char* name = NULL;
        size_t name_len = 0;
        HurrayDescriptor* d = NULL;
        uint8_t tag = 0;
        uint64_t dims[64];  // 64 is the format's maximum rank
        uintptr_t rank = 64;
        uint32_t buffers = 0;
        uint64_t bytes = 0;
        uintptr_t k;

        if ((st = hurray_file_tensor_name(file, i, &name, &name_len)) != HURRAY_OK ||
            (st = hurray_file_tensor_descriptor(file, i, &d)) != HURRAY_OK) {
            hurray_file_close(file);
            return fail("reading a tensor", st);
        }
        hurray_descriptor_element_type_tag(d, &tag);
        hurray_descriptor_shape(d, dims, &rank);
        hurray_descriptor_buffer_count(d, &buffers);
        hurray_descriptor_destroy(d);

        if (buffers > 0) {  // the data buffer; a composite head has none
            HurrayBuffer* b = NULL;
            if (hurray_file_tensor_buffer(file, i, 0, &b) == HURRAY_OK) {
                hurray_buffer_byte_size(b, &bytes);
                hurray_buffer_destroy(b);
            }
        }
        printf("%.*s  %s  [", (int)name_len, name, hurray_element_type_name(tag));
        for (k = 0; k < rank; ++k) printf(k == 0 ? "%" PRIu64 : ", %" PRIu64, dims[k]);
        printf("]  %" PRIu64 " bytes\n", bytes);
    }
    // readme:end c

    if (hurray_file_kv_count(file, &count) == HURRAY_OK) {
        for (i = 0; i < count; ++i) {
            const char* key = NULL;
            size_t key_len = 0;
            if (hurray_file_kv_key(file, i, &key, &key_len) == HURRAY_OK) {
                printf("kv %.*s\n", (int)key_len, key);
            }
        }
    }
    hurray_file_close(file);
    return 0;
}
