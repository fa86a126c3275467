// SPDX-License-Identifier: Apache-2.0
// What the C tests of the C ABI share (tests/c/*.c): the pass/fail counters and
// their CHECK macros, the command-line paths, small file helpers, and one entry
// point per test file, called in turn by main() in c_api_test.c.
#ifndef HURRAY_C_TEST_UTIL_H
#define HURRAY_C_TEST_UTIL_H

#include <hurray.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

extern int g_passed;  // checks that held
extern int g_failed;  // checks that failed

extern const char* g_conformance_dir;  // argv[1]: ../shared/conformance
extern const char* g_kv_file;          // argv[2]: the file hurray_c_test_writer wrote
extern const char* g_tmp_dir;          // argv[3]: a directory the tests may write to

// CHECK(cond): counts a pass, or prints the failed condition and the last error message.
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

// CHECK_STATUS(expr, want): `expr` returns the status `want`.
#define CHECK_STATUS(expr, want)                                                                     \
    do {                                                                                             \
        HurrayStatus got_ = (expr);                                                                  \
        if (got_ == (want)) {                                                                        \
            ++g_passed;                                                                              \
        } else {                                                                                     \
            ++g_failed;                                                                              \
            fprintf(stderr, "%s:%d: %s returned %d, expected %s = %d (last error: \"%s\")\n",       \
                    __FILE__, __LINE__, #expr, (int)got_, #want, (int)(want),                        \
                    hurray_last_error_message());                                                    \
        }                                                                                            \
    } while (0)

// CHECK_NULL_ARG(expr): `expr` returns HURRAY_ERR_NULL_POINTER with a message naming "NULL".
#define CHECK_NULL_ARG(expr)                                                   \
    do {                                                                       \
        CHECK_STATUS(expr, HURRAY_ERR_NULL_POINTER);                           \
        CHECK(strstr(hurray_last_error_message(), "is NULL") != NULL);         \
    } while (0)

// Writes "DIR/NAME" into `out` (`size` bytes).
void join(char* out, size_t size, const char* dir, const char* name);

// Reads a whole file into malloc'ed memory (free() it); NULL on failure.
uint8_t* read_all(const char* path, size_t* len);

// Writes `len` bytes to `path`; 1 on success, 0 on failure.
int write_all(const char* path, const void* bytes, size_t len);

// The test files' entry points, in the order main() runs them.
void context_tests(void);  // c_context_test.c: tensor contexts, sync handoffs, destroyed handles
void writer_tests(void);   // c_writer_test.c: writing files
void stream_tests(void);   // c_stream_test.c: streams
void dlpack_tests(void);   // c_dlpack_test.c: DLPack export
void thread_tests(void);   // c_thread_test.c: the last error message is per thread
void reference_compat_tests(void);  // c_reference_compat_test.c: the reference hurray.h, ABI 4
void convert_tests(void);  // c_convert_test.c: converters, format detection, sources
void descriptor_table_tests(void);  // c_descriptor_table_test.c: files with, without and with broken tables
void error_code_tests(void);  // c_error_code_test.c: the precise code and offset of each failure

#endif  // HURRAY_C_TEST_UTIL_H
