// SPDX-License-Identifier: Apache-2.0
// C tests of the C ABI: the descriptor table (docs/descriptor-table.md), the KV entry
// "hurray.descriptor_table" the writer adds unless HURRAY_FILE_WRITER_NO_DESCRIPTOR_TABLE.
// Files with a table, without one, and with a table that is truncated, of another
// version, or that disagrees with a descriptor in place, opened from memory, mapped
// and with pread: every tensor is listed (name, type, shape, buffer sizes, where its
// data lies) and its data read; the table's KV entry is never shown; a tensor whose
// copy in the table disagrees with its descriptor in place never yields data (every
// call that hands out data fails with HURRAY_ERR_INVALID_FILE naming the tensor).
#define _POSIX_C_SOURCE 200809L

#include "c_test_util.h"

#include <dlpack/dlpack.h>

#include <stdlib.h>

#define TABLE_TENSORS 3

static const char* const kTableNames[TABLE_TENSORS] = {"weights", "bias", "codes"};
static const uint8_t kTableTags[TABLE_TENSORS] = {0x03, 0x12, 0x11};  // float32, int16, uint8
static const uint32_t kTableRanks[TABLE_TENSORS] = {2, 1, 1};
static const uint64_t kTableDims[TABLE_TENSORS][2] = {{2, 3}, {4, 0}, {5, 0}};
static const uint64_t kTableSizes[TABLE_TENSORS] = {24, 8, 5};
static const char kTableKey[] = "hurray.descriptor_table";
static const char kNoteKey[] = "note";
static const size_t kNotFound = (size_t)-1;

// Byte k of tensor i's data (float32 "weights" gets whole floats: see weights_values).
static uint8_t data_byte(size_t i, size_t k) { return (uint8_t)(0x40 + 16 * i + k); }

// The data of tensor `i` (kTableSizes[i] bytes) into `out`.
static void fill_data(size_t i, uint8_t* out) {
    size_t k;
    for (k = 0; k < kTableSizes[i]; ++k) {
        out[k] = data_byte(i, k);
    }
}

static int table_message_has(const char* needle) { return strstr(hurray_last_error_message(), needle) != NULL; }

// Writes the three tensors and the KV entry "note" to `path` with the C writer; 1 on success.
static int write_table_file(const char* path, uint32_t flags) {
    HurrayFileWriter* w = NULL;
    size_t i;
    int ok = 1;
    if (hurray_file_writer_create(path, flags | HURRAY_FILE_WRITER_NO_FSYNC, &w) != HURRAY_OK) {
        return 0;
    }
    for (i = 0; i < TABLE_TENSORS; ++i) {
        HurrayDescriptor* d = NULL;
        uint8_t data[32];
        const void* one[1];
        uint64_t size[1];
        fill_data(i, data);
        one[0] = data;
        size[0] = kTableSizes[i];
        if (hurray_descriptor_new_dense(kTableTags[i], kTableRanks[i], kTableDims[i], &d) != HURRAY_OK) {
            ok = 0;
            break;
        }
        ok = hurray_file_writer_add_tensor(w, kTableNames[i], strlen(kTableNames[i]), d, one, size, 1) == HURRAY_OK &&
             ok;
        hurray_descriptor_destroy(d);
    }
    ok = hurray_file_writer_set_string(w, kNoteKey, strlen(kNoteKey), "kept", 4) == HURRAY_OK && ok;
    if (!ok) {
        hurray_file_writer_abort(&w);
        return 0;
    }
    return hurray_file_writer_finish(&w) == HURRAY_OK;
}

// Position of the `n` bytes at `needle` in `hay` (`len` bytes) at or after `from`; kNotFound when absent.
static size_t find_bytes(const uint8_t* hay, size_t len, size_t from, const void* needle, size_t n) {
    size_t at;
    for (at = from; n <= len && at <= len - n; ++at) {
        if (memcmp(hay + at, needle, n) == 0) {
            return at;
        }
    }
    return kNotFound;
}

static uint32_t get_le32(const uint8_t* p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static void put_le32(uint8_t* p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

// Where the table's value starts in a file (after its key, its tag 0x06 and its
// uint32 length), or kNotFound when the file has no table entry.
static size_t table_value_at(const uint8_t* bytes, size_t len) {
    const size_t key_at = find_bytes(bytes, len, 0, kTableKey, strlen(kTableKey));
    return key_at == kNotFound ? kNotFound : key_at + strlen(kTableKey) + 1 + 4;
}

// The file's KV metadata is "note" alone: the table's entry is never listed or found.
static void check_kv_hidden(const HurrayFile* file) {
    uint64_t count = 99;
    const char* key = NULL;
    size_t len = 0;
    uint8_t type = 0;
    const uint8_t* bytes = NULL;
    CHECK_STATUS(hurray_file_kv_count(file, &count), HURRAY_OK);
    CHECK(count == 1);
    CHECK_STATUS(hurray_file_kv_key(file, 0, &key, &len), HURRAY_OK);
    CHECK(key != NULL && len == strlen(kNoteKey) && memcmp(key, kNoteKey, len) == 0);
    CHECK_STATUS(hurray_file_kv_key(file, 1, &key, &len), HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
    CHECK_STATUS(hurray_file_kv_type(file, kTableKey, strlen(kTableKey), &type), HURRAY_ERR_NOT_FOUND);
    CHECK_STATUS(hurray_file_kv_get_bytes(file, kTableKey, strlen(kTableKey), &bytes, &len), HURRAY_ERR_NOT_FOUND);
}

// Tensor `i`'s listing: name, element type, shape, one buffer of the written size
// (`dims` overrides the shape expected, for a listing that reads a changed copy).
static void check_listed(const HurrayFile* file, size_t i, const uint64_t* dims) {
    const char* name = NULL;
    size_t len = 0;
    uint64_t found = 99;
    HurrayDescriptor* d = NULL;
    uint8_t tag = 0;
    uint32_t rank = 99;
    uint64_t got[4] = {0, 0, 0, 0};
    uintptr_t cap = 4;
    uint32_t buffers = 0;
    uint64_t size = 0;
    uint32_t k;
    CHECK_STATUS(hurray_file_tensor_name(file, i, &name, &len), HURRAY_OK);
    CHECK(name != NULL && len == strlen(kTableNames[i]) && memcmp(name, kTableNames[i], len) == 0);
    CHECK_STATUS(hurray_file_find(file, kTableNames[i], strlen(kTableNames[i]), &found), HURRAY_OK);
    CHECK(found == i);
    CHECK_STATUS(hurray_file_tensor_descriptor(file, i, &d), HURRAY_OK);
    if (d == NULL) {
        return;
    }
    CHECK_STATUS(hurray_descriptor_element_type_tag(d, &tag), HURRAY_OK);
    CHECK(tag == kTableTags[i]);
    CHECK_STATUS(hurray_descriptor_rank(d, &rank), HURRAY_OK);
    CHECK(rank == kTableRanks[i]);
    CHECK_STATUS(hurray_descriptor_shape(d, got, &cap), HURRAY_OK);
    for (k = 0; k < kTableRanks[i]; ++k) {
        CHECK(got[k] == dims[k]);
    }
    CHECK_STATUS(hurray_descriptor_buffer_count(d, &buffers), HURRAY_OK);
    CHECK(buffers == 1);
    CHECK_STATUS(hurray_descriptor_buffer_size(d, 0, &size), HURRAY_OK);
    CHECK(size == kTableSizes[i]);
    CHECK_STATUS(hurray_descriptor_destroy(d), HURRAY_OK);
}

// Tensor `i`'s data, through each call that hands it out, equals what was written.
// `*where` gets the data's offset from `base` (the input of hurray_file_open_memory),
// left alone when `base` is NULL.
static void check_data(const HurrayFile* file, size_t i, const uint8_t* base, uint64_t* where) {
    uint8_t want[32];
    HurrayBuffer* b = NULL;
    HurrayBufferList* list = NULL;
    void* ptr = NULL;
    uint64_t size = 0;
    uint64_t count = 0;
    float values[6];
    DLManagedTensor* dl = NULL;
    fill_data(i, want);
    CHECK_STATUS(hurray_file_tensor_buffer(file, i, 0, &b), HURRAY_OK);
    if (b != NULL) {
        CHECK_STATUS(hurray_buffer_byte_size(b, &size), HURRAY_OK);
        CHECK_STATUS(hurray_buffer_data_ptr(b, &ptr), HURRAY_OK);
        CHECK(size == kTableSizes[i] && ptr != NULL && memcmp(ptr, want, (size_t)size) == 0);
        if (base != NULL && where != NULL && ptr != NULL) {
            *where = (uint64_t)((const uint8_t*)ptr - base);
        }
        CHECK_STATUS(hurray_buffer_destroy(b), HURRAY_OK);
    }
    CHECK_STATUS(hurray_file_tensor_buffers(file, i, &list), HURRAY_OK);
    CHECK(list != NULL);
    if (list != NULL) {
        CHECK_STATUS(hurray_buffer_list_destroy(&list), HURRAY_OK);
    }
    CHECK_STATUS(hurray_file_tensor_to_float32(file, i, values, 6, &count), HURRAY_OK);
    CHECK(count == kTableSizes[i] / (i == 0 ? 4 : i == 1 ? 2 : 1));
    CHECK_STATUS(hurray_file_tensor_to_dlpack(file, i, &dl), HURRAY_OK);
    CHECK(dl != NULL);
    if (dl != NULL) {
        CHECK(memcmp(dl->dl_tensor.data, want, (size_t)kTableSizes[i]) == 0);
        dl->deleter(dl);
    }
}

// Every call that hands out tensor `i`'s data fails with HURRAY_ERR_INVALID_FILE,
// naming the tensor, and hands out nothing.
static void check_no_data(const HurrayFile* file, size_t i) {
    char named[64];
    HurrayBuffer* b = (HurrayBuffer*)&g_passed;
    HurrayBufferList* list = (HurrayBufferList*)&g_passed;
    DLManagedTensor* dl = (DLManagedTensor*)&g_passed;
    float values[6];
    uint64_t count = 0;
    snprintf(named, sizeof named, "tensor '%s'", kTableNames[i]);
    CHECK_STATUS(hurray_file_tensor_buffer(file, i, 0, &b), HURRAY_ERR_INVALID_FILE);
    CHECK(b == NULL);
    CHECK(table_message_has(named));
    CHECK(table_message_has("differs from the descriptor at "));
    CHECK(table_message_has("no data is read"));
    CHECK_STATUS(hurray_file_tensor_buffers(file, i, &list), HURRAY_ERR_INVALID_FILE);
    CHECK(list == NULL);
    CHECK(table_message_has(named));
    CHECK_STATUS(hurray_file_tensor_to_float32(file, i, values, 6, &count), HURRAY_ERR_INVALID_FILE);
    CHECK(table_message_has(named));
    CHECK_STATUS(hurray_file_tensor_to_dlpack(file, i, &dl), HURRAY_ERR_INVALID_FILE);
    CHECK(dl == NULL);
    CHECK(table_message_has(named));
}

// Checks one file (its `len` bytes at `bytes`) opened from memory, mapped and with
// pread: the KV entry is hidden, every tensor listed (tensor `victim`'s shape as
// `victim_dims`), every tensor's data read except `victim`'s (TABLE_TENSORS for
// none), which is refused. `where` (may be NULL) gets each tensor's data offset.
static void check_file(const char* what, const uint8_t* bytes, size_t len, size_t victim, const uint64_t* victim_dims,
                       uint64_t* where) {
    char path[4096];
    char name[128];
    int mode;
    snprintf(name, sizeof name, "c_table_%s.hrry", what);
    join(path, sizeof path, g_tmp_dir, name);
    CHECK(write_all(path, bytes, len));
    for (mode = 0; mode < 3; ++mode) {
        HurrayFile* file = NULL;
        uint64_t n = 0;
        size_t i;
        if (mode == 0) {
            CHECK_STATUS(hurray_file_open_memory(bytes, len, 0, &file), HURRAY_OK);
        } else {
            CHECK_STATUS(hurray_file_open(path, mode == 1 ? 0 : HURRAY_FILE_NO_MMAP, &file), HURRAY_OK);
        }
        if (file == NULL) {
            fprintf(stderr, "  (file %s, mode %d)\n", what, mode);
            continue;
        }
        check_kv_hidden(file);
        CHECK_STATUS(hurray_file_tensor_count(file, &n), HURRAY_OK);
        CHECK(n == TABLE_TENSORS);
        for (i = 0; i < TABLE_TENSORS; ++i) {
            check_listed(file, i, i == victim ? victim_dims : kTableDims[i]);
        }
        for (i = 0; i < TABLE_TENSORS; ++i) {
            if (i == victim) {
                check_no_data(file, i);
            } else {
                check_data(file, i, mode == 0 ? bytes : NULL, where != NULL ? &where[i] : NULL);
            }
        }
        // Listed again after the refusals: the same (a refusal keeps nothing wrong).
        for (i = 0; i < TABLE_TENSORS; ++i) {
            check_listed(file, i, i == victim ? victim_dims : kTableDims[i]);
        }
        if (victim < TABLE_TENSORS) {
            check_no_data(file, victim);  // refused every time, not only the first
        }
        hurray_file_close(file);
    }
}

void descriptor_table_tests(void) {
    char path[4096];
    uint8_t* with = NULL;
    uint8_t* without = NULL;
    uint8_t* bytes = NULL;
    size_t with_len = 0;
    size_t without_len = 0;
    size_t value_at;
    uint64_t at_with[TABLE_TENSORS] = {0, 0, 0};
    uint64_t at_without[TABLE_TENSORS] = {1, 1, 1};
    static const uint64_t kSwapped[2] = {3, 2};
    size_t i;

    // With a table (the default) and without one (the flag).
    join(path, sizeof path, g_tmp_dir, "c_table_with.hrry");
    CHECK(write_table_file(path, 0));
    with = read_all(path, &with_len);
    join(path, sizeof path, g_tmp_dir, "c_table_without.hrry");
    CHECK(write_table_file(path, HURRAY_FILE_WRITER_NO_DESCRIPTOR_TABLE));
    without = read_all(path, &without_len);
    CHECK(with != NULL && without != NULL);
    if (with == NULL || without == NULL) {
        free(with);
        free(without);
        return;
    }
    value_at = table_value_at(with, with_len);
    CHECK(value_at != kNotFound);
    CHECK(table_value_at(without, without_len) == kNotFound);
    CHECK(without_len < with_len);
    if (value_at == kNotFound || value_at + 16 > with_len) {
        free(with);
        free(without);
        return;
    }
    CHECK(memcmp(with + value_at, "HRDT", 4) == 0 && with[value_at + 4] == 2 && with[value_at + 5] == 0);
    CHECK(with[value_at + 8] == TABLE_TENSORS);
    check_file("with", with, with_len, TABLE_TENSORS, NULL, at_with);
    check_file("without", without, without_len, TABLE_TENSORS, NULL, at_without);
    for (i = 0; i < TABLE_TENSORS; ++i) {
        CHECK(at_with[i] == at_without[i]);  // the table lies after the data: same places
        CHECK(at_with[i] % 4096 == 0);
    }

    bytes = (uint8_t*)malloc(with_len);
    CHECK(bytes != NULL);
    if (bytes != NULL) {
        const size_t trailer = with_len - 40;
        const uint32_t value_len = get_le32(with + value_at - 4);
        const uint32_t kv_len = get_le32(with + trailer + 24);
        HurrayDescriptor* victim = NULL;
        uint8_t in_place[256];
        uint8_t swapped[256];
        size_t in_place_len = 0;
        size_t swapped_len = 0;
        HurrayFile* file = NULL;
        size_t copy_at = kNotFound;
        size_t place_at = kNotFound;

        // The copy of "weights" in the table and its descriptor in place, and a
        // descriptor of the same length that says [3, 2] where they say [2, 3].
        CHECK_STATUS(hurray_file_open_memory(with, with_len, 0, &file), HURRAY_OK);
        if (file != NULL) {
            CHECK_STATUS(hurray_file_tensor_descriptor_bytes(file, 0, in_place, sizeof in_place, &in_place_len),
                         HURRAY_OK);
            hurray_file_close(file);
        }
        CHECK_STATUS(hurray_descriptor_new_dense(0x03, 2, kSwapped, &victim), HURRAY_OK);
        if (victim != NULL) {
            CHECK_STATUS(hurray_descriptor_encode(victim, swapped, sizeof swapped, &swapped_len), HURRAY_OK);
            hurray_descriptor_destroy(victim);
        }
        CHECK(in_place_len > 0 && swapped_len == in_place_len && memcmp(in_place, swapped, in_place_len) != 0);
        if (in_place_len > 0 && swapped_len == in_place_len) {
            copy_at = find_bytes(with, with_len, value_at + 16, in_place, in_place_len);
            place_at = find_bytes(with, with_len, 0, in_place, in_place_len);
        }
        CHECK(copy_at != kNotFound && place_at < value_at && copy_at < value_at + value_len);
        if (copy_at != kNotFound && place_at < value_at && copy_at < value_at + value_len) {
            // Tables a reader must not use (truncated, of another version, of another
            // entry count), each with the copy of "weights" changed too: read in
            // place, "weights" is listed as [2, 3] and read, which shows the table
            // unused (a reader that used it would list [3, 2] and refuse the data).
            for (i = 0; i < 2; ++i) {
                const int swap = i == 1;
                char what[64];

                // Truncated: the value 8 bytes shorter (its length and the KV section's
                // length cut, the 8 bytes freed zeroed): a table of the wrong length.
                memcpy(bytes, with, with_len);
                CHECK(value_len > 16 + 8 && kv_len > 8);
                put_le32(bytes + value_at - 4, value_len - 8);
                put_le32(bytes + trailer + 24, kv_len - 8);
                memset(bytes + value_at + value_len - 8, 0, 8);
                if (swap) {
                    memcpy(bytes + copy_at, swapped, swapped_len);
                }
                snprintf(what, sizeof what, "truncated%s", swap ? "_swapped" : "");
                check_file(what, bytes, with_len, TABLE_TENSORS, NULL, NULL);

                // Of another version (3).
                memcpy(bytes, with, with_len);
                bytes[value_at + 4] = 3;
                if (swap) {
                    memcpy(bytes + copy_at, swapped, swapped_len);
                }
                snprintf(what, sizeof what, "version3%s", swap ? "_swapped" : "");
                check_file(what, bytes, with_len, TABLE_TENSORS, NULL, NULL);

                // Another entry count (the table of another index).
                memcpy(bytes, with, with_len);
                bytes[value_at + 8] = TABLE_TENSORS + 1;
                if (swap) {
                    memcpy(bytes + copy_at, swapped, swapped_len);
                }
                snprintf(what, sizeof what, "count%s", swap ? "_swapped" : "");
                check_file(what, bytes, with_len, TABLE_TENSORS, NULL, NULL);
            }

            // Disagreeing, in a well-formed table: the copy of "weights" says [3, 2],
            // the descriptor in place [2, 3]. Listing reads the table (as the C++
            // reader does); the data of "weights" is never handed out under either
            // reading; the other tensors read.
            memcpy(bytes, with, with_len);
            memcpy(bytes + copy_at, swapped, swapped_len);
            check_file("disagreeing_copy", bytes, with_len, 0, kSwapped, NULL);

            // The other way round: the copy intact, the descriptor in place changed.
            // Listing shows the table's [2, 3]; no data either.
            memcpy(bytes, with, with_len);
            memcpy(bytes + place_at, swapped, swapped_len);
            check_file("disagreeing_in_place", bytes, with_len, 0, kTableDims[0], NULL);
        }
        free(bytes);
    }
    free(with);
    free(without);
}
