// SPDX-License-Identifier: Apache-2.0
// Lists the tensors of an HRRYFILE through the C ABI, printing the table
// `hurray ls FILE` prints (ctest example.c_list_matches_ls compares the two):
// name, element type, shape, layout, quantization scheme, data bytes. C99;
// docs/c-api.md shows it. Usage: hurray_c_list FILE.hrry
#include <hurray.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COLUMNS 6

static int fail(const char* what, HurrayStatus status) {
    fprintf(stderr, "%s failed (%d): %s\n", what, (int)status, hurray_last_error_message());
    return 1;
}

// Appends printf-style text to the malloc'ed string *s (NULL: a new one).
static void append(char** s, const char* format, ...) {
    va_list args;
    size_t had = *s != NULL ? strlen(*s) : 0;
    int more;
    char* grown;
    va_start(args, format);
    more = vsnprintf(NULL, 0, format, args);
    va_end(args);
    if (more < 0 || (grown = (char*)realloc(*s, had + (size_t)more + 1)) == NULL) {
        return;
    }
    va_start(args, format);
    vsnprintf(grown + had, (size_t)more + 1, format, args);
    va_end(args);
    *s = grown;
}

// A name, or "tag 0xNN" when the tag has none.
static void append_name(char** s, const char* name, uint8_t tag) {
    if (name[0] != '\0') {
        append(s, "%s", name);
    } else {
        append(s, "tag 0x%02x", (unsigned)tag);
    }
}

// One table row: the six cells of a tensor.
static HurrayStatus describe(const HurrayFile* file, uint64_t i, char** cells) {
    // readme:begin c
    const char* name = NULL;
    size_t name_len = 0;
    HurrayDescriptor* d = NULL;
    uint8_t type = 0, layout = 0;
    int32_t scheme = -1;
    uint64_t dims[64];  // 64 is the format's maximum rank
    uintptr_t rank = 64, k;
    uint32_t buffers = 0, b;
    uint64_t bytes = 0;
    HurrayStatus st;

    if ((st = hurray_file_tensor_name(file, i, &name, &name_len)) != HURRAY_OK ||
        (st = hurray_file_tensor_descriptor(file, i, &d)) != HURRAY_OK) {
        return st;
    }
    hurray_descriptor_element_type_tag(d, &type);
    hurray_descriptor_layout_tag(d, &layout);
    hurray_descriptor_quantization_scheme(d, &scheme);
    hurray_descriptor_shape(d, dims, &rank);
    hurray_descriptor_buffer_count(d, &buffers);
    for (b = 0; b < buffers; ++b) {  // declared sizes of the data and parameter buffers
        uint64_t size = 0;
        hurray_descriptor_buffer_size(d, b, &size);
        bytes += size;
    }
    hurray_descriptor_destroy(d);
    // readme:end c

    for (k = 0; k < name_len; ++k) {  // control characters as \xNN, as hurray ls shows them
        const unsigned char c = (unsigned char)name[k];
        append(&cells[0], c < 0x20 || c == 0x7F ? "\\x%02x" : "%c", (unsigned)c);
    }
    append(&cells[0], "");
    append_name(&cells[1], hurray_element_type_name(type), type);
    append(&cells[2], "[");
    for (k = 0; k < rank; ++k) {
        append(&cells[2], k == 0 ? "" : ", ");
        append(&cells[2], dims[k] == UINT64_MAX ? "?" : "%" PRIu64, dims[k]);  // UINT64_MAX: dynamic
    }
    append(&cells[2], "]");
    append_name(&cells[3], hurray_layout_name(layout), layout);
    if (scheme < 0) {
        append(&cells[4], "-");
    } else {
        append_name(&cells[4], hurray_quantization_scheme_name((uint8_t)scheme), (uint8_t)scheme);
    }
    append(&cells[5], "%" PRIu64, bytes);
    return HURRAY_OK;
}

int main(int argc, char** argv) {
    static const char* const header[COLUMNS] = {"NAME", "TYPE", "SHAPE", "LAYOUT", "QUANTIZATION", "BYTES"};
    HurrayFile* file = NULL;
    HurrayStatus st;
    uint64_t count = 0, i;
    size_t widths[COLUMNS];
    char** cells;  // (count + 1) rows of COLUMNS cells, the header first
    int c;
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE.hrry\n", argv[0]);
        return 2;
    }
    if (hurray_c_abi_version() != HURRAY_C_ABI_VERSION) {
        fprintf(stderr, "libhurray_c has C ABI %" PRIu32 ", this program was built for %d\n",
                hurray_c_abi_version(), HURRAY_C_ABI_VERSION);
        return 1;
    }
    if ((st = hurray_file_open(argv[1], 0, &file)) != HURRAY_OK) return fail("hurray_file_open", st);
    if ((st = hurray_file_tensor_count(file, &count)) != HURRAY_OK) return fail("tensor_count", st);
    if ((cells = (char**)calloc((size_t)(count + 1) * COLUMNS, sizeof *cells)) == NULL) {
        hurray_file_close(file);
        return fail("calloc", HURRAY_ERR_OUT_OF_MEMORY);
    }
    for (c = 0; c < COLUMNS; ++c) append(&cells[c], "%s", header[c]);
    for (i = 0; i < count; ++i) {
        if ((st = describe(file, i, &cells[(i + 1) * COLUMNS])) != HURRAY_OK) {
            hurray_file_close(file);
            return fail("reading a tensor", st);
        }
    }
    hurray_file_close(file);

    // Columns as wide as their widest cell, two spaces apart; BYTES right-aligned.
    for (c = 0; c < COLUMNS; ++c) {
        widths[c] = 0;
        for (i = 0; i <= count; ++i) {
            const char* cell = cells[i * COLUMNS + c];
            size_t len = cell != NULL ? strlen(cell) : 0;
            if (len > widths[c]) widths[c] = len;
        }
    }
    for (i = 0; i <= count; ++i) {
        for (c = 0; c < COLUMNS; ++c) {
            const char* cell = cells[i * COLUMNS + c] != NULL ? cells[i * COLUMNS + c] : "";
            if (c + 1 < COLUMNS) {
                printf("%-*s  ", (int)widths[c], cell);
            } else {
                printf("%*s\n", (int)widths[c], cell);
            }
            free(cells[i * COLUMNS + c]);
        }
    }
    free(cells);
    return 0;
}
