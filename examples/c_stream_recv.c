#include <hurray.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* c_stream_recv FILE.hrry < STREAM: reads a stream from standard input and
   compares it, tensor by tensor, with the tensors of FILE in index order (what
   c_stream_send FILE writes): descriptor fields and data bytes. Reads the data
   in pieces of at most 64 KiB, whatever the tensor sizes. Exit status: 0 equal,
   1 different or unreadable, 2 usage. */

static unsigned char piece[64 * 1024];

static int fail(const char* what, HurrayStatus status) {
    fprintf(stderr, "c_stream_recv: %s failed (%d): %s\n", what, (int)status, hurray_last_error_message());
    return 1;
}

/* 1 when the descriptor read from the stream has the fields of the file's. */
static int same_fields(const HurrayDescriptor* a, const HurrayDescriptor* b) {
    uint8_t ta = 0, tb = 0, la = 0, lb = 0;
    uint64_t da[64], db[64], oa = 0, ob = 0;
    uintptr_t ra = 64, rb = 64, k;
    uint32_t ca = 0, cb = 0;
    hurray_descriptor_element_type_tag(a, &ta);
    hurray_descriptor_element_type_tag(b, &tb);
    hurray_descriptor_layout_tag(a, &la);
    hurray_descriptor_layout_tag(b, &lb);
    hurray_descriptor_byte_offset(a, &oa);
    hurray_descriptor_byte_offset(b, &ob);
    hurray_descriptor_buffer_count(a, &ca);
    hurray_descriptor_buffer_count(b, &cb);
    if (hurray_descriptor_shape(a, da, &ra) != HURRAY_OK || hurray_descriptor_shape(b, db, &rb) != HURRAY_OK) return 0;
    if (ta != tb || la != lb || oa != ob || ca != cb || ra != rb) return 0;
    for (k = 0; k < ra; ++k) {
        if (da[k] != db[k]) return 0;
    }
    return 1;
}

// readme:begin recv-data
/* Reads the current tensor's data and compares it with tensor i of the file. */
static HurrayStatus compare_data(HurrayReader* r, const HurrayFile* file, uint64_t i, int* equal,
                                 uint64_t* bytes) {
    for (;;) {
        uint32_t b = 0;
        uint64_t offset = 0, left = 0, size = 0;
        size_t got = 0;
        HurrayBuffer* buf = NULL;
        void* p = NULL;
        HurrayStatus st = hurray_stream_data_position(r, &b, &offset, &left);
        if (st != HURRAY_OK) return st;
        if ((st = hurray_stream_read(r, piece, sizeof piece, &got)) != HURRAY_OK) return st;
        if (got == 0) return HURRAY_OK; /* the tensor's data is all read */
        if ((st = hurray_file_tensor_buffer(file, i, b, &buf)) != HURRAY_OK) return st;
        hurray_buffer_data_ptr(buf, &p);
        hurray_buffer_byte_size(buf, &size);
        if (offset + got > size || memcmp((const unsigned char*)p + offset, piece, got) != 0) {
            fprintf(stderr, "c_stream_recv: tensor %" PRIu64 " buffer %" PRIu32 ": bytes %" PRIu64 "..%" PRIu64
                            " differ\n", i, b, offset, offset + got);
            *equal = 0;
        }
        hurray_buffer_destroy(buf);
        *bytes += got;
    }
}
// readme:end recv-data

int main(int argc, char** argv) {
    HurrayFile* file = NULL;
    HurrayReader* r = NULL;
    HurrayStatus st;
    uint64_t count = 0, i = 0, bytes = 0;
    int equal = 1;
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE.hrry < STREAM\n", argv[0]);
        return 2;
    }
    if ((st = hurray_file_open(argv[1], 0, &file)) != HURRAY_OK) return fail("hurray_file_open", st);
    hurray_file_tensor_count(file, &count);
    if ((st = hurray_stream_open(0, 0, &r)) != HURRAY_OK) {
        hurray_file_close(file);
        return fail("hurray_stream_open", st);
    }
    for (;;) {
        HurrayDescriptor* got = NULL;
        HurrayDescriptor* want = NULL;
        if ((st = hurray_stream_next(r, &got)) != HURRAY_OK || got == NULL) break; /* error or clean end */
        if (i >= count) {
            fprintf(stderr, "c_stream_recv: the stream has more than the file's %" PRIu64 " tensors\n", count);
            equal = 0;
        } else if ((st = hurray_file_tensor_descriptor(file, i, &want)) == HURRAY_OK) {
            if (!same_fields(got, want)) {
                fprintf(stderr, "c_stream_recv: tensor %" PRIu64 ": the descriptors differ\n", i);
                equal = 0;
            } else {
                st = compare_data(r, file, i, &equal, &bytes);
            }
            hurray_descriptor_destroy(want);
        }
        hurray_descriptor_destroy(got);
        if (st != HURRAY_OK) break;
        ++i;
    }
    if (st != HURRAY_OK) {
        fail("reading the stream", st);
        equal = 0;
    } else if (i != count) {
        fprintf(stderr, "c_stream_recv: the stream ended after %" PRIu64 " of the file's %" PRIu64 " tensors\n", i,
                count);
        equal = 0;
    }
    hurray_stream_close(r);
    hurray_file_close(file);
    printf("%" PRIu64 " tensors, %" PRIu64 " data bytes: %s %s\n", i, bytes,
           equal ? "the stream equals" : "the stream differs from", argv[1]);
    return equal ? 0 : 1;
}
