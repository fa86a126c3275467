// SPDX-License-Identifier: Apache-2.0
// C tests of the C ABI: hurray_last_error_message() is per thread. Threads
// fail in different ways at the same time, each checks that it reads its own
// message back, and that a success leaves its message in place.
#define _POSIX_C_SOURCE 200809L

#include "c_test_util.h"

#include <pthread.h>

#define THREADS 4
#define ROUNDS 2000

struct ThreadResult {
    int id;
    int mismatches;  // messages that were not this thread's
};

static void* fail_repeatedly(void* arg) {
    struct ThreadResult* result = (struct ThreadResult*)arg;
    uint32_t rank = 0;
    uint64_t count = 0;
    HurrayFile* file = NULL;
    int i;
    for (i = 0; i < ROUNDS; ++i) {
        const char* message;
        const char* want;
        switch (result->id) {
            case 0:  // NULL handle
                (void)hurray_descriptor_rank(NULL, &rank);
                want = "hurray_descriptor_rank";
                break;
            case 1:  // NULL output
                (void)hurray_buffer_list_len(NULL, &count);
                want = "hurray_buffer_list_len";
                break;
            case 2:  // a missing file
                (void)hurray_file_open("/nonexistent/hurray-thread-test.hrry", 0, &file);
                want = "hurray-thread-test.hrry";
                break;
            default:  // bad flags
                (void)hurray_file_open_memory((const uint8_t*)"x", 1, 0x80000000u, &file);
                want = "flags";
                break;
        }
        // A success in between must not clear or change the message.
        (void)hurray_c_abi_version();
        message = hurray_last_error_message();
        if (message == NULL || strstr(message, want) == NULL) {
            ++result->mismatches;
        }
    }
    return NULL;
}

void thread_tests(void) {
    pthread_t threads[THREADS];
    struct ThreadResult results[THREADS];
    int started[THREADS];
    int i;
    for (i = 0; i < THREADS; ++i) {
        results[i].id = i;
        results[i].mismatches = 0;
        started[i] = pthread_create(&threads[i], NULL, fail_repeatedly, &results[i]) == 0;
        CHECK(started[i]);
    }
    for (i = 0; i < THREADS; ++i) {
        if (started[i]) {
            CHECK(pthread_join(threads[i], NULL) == 0);
            CHECK(results[i].mismatches == 0);
        }
    }
}
