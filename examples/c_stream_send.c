#include <hurray.h>

#include <inttypes.h>
#include <stdio.h>

/* c_stream_send FILE.hrry: lists the file's tensors on stderr and streams them,
   in index order, to standard output: descriptor then buffers, straight from
   the file's mapping (no copy). Exit status: 0 sent, 1 failed, 2 usage,
   3 the file holds a composite (not streamed: see docs/c-api.md, "Streams"). */

static int fail(const char* what, HurrayStatus status) {
    fprintf(stderr, "c_stream_send: %s failed (%d): %s\n", what, (int)status, hurray_last_error_message());
    return 1;
}

/* Prints "name  type  [dims]  N bytes" for tensor i; returns its layout tag. */
static uint8_t describe(const HurrayFile* file, uint64_t i, const HurrayDescriptor* d) {
    const char* name = NULL;
    size_t name_len = 0;
    uint8_t tag = 0;
    uint8_t layout = 0;
    uint64_t dims[64]; /* the format's maximum rank */
    uintptr_t rank = 64;
    uint32_t buffers = 0;
    uint64_t bytes = 0;
    uint32_t b;
    uintptr_t k;
    hurray_file_tensor_name(file, i, &name, &name_len);
    hurray_descriptor_element_type_tag(d, &tag);
    hurray_descriptor_layout_tag(d, &layout);
    hurray_descriptor_shape(d, dims, &rank);
    hurray_descriptor_buffer_count(d, &buffers);
    for (b = 0; b < buffers; ++b) {
        HurrayBuffer* buf = NULL;
        uint64_t size = 0;
        if (hurray_file_tensor_buffer(file, i, b, &buf) == HURRAY_OK) {
            hurray_buffer_byte_size(buf, &size);
            hurray_buffer_destroy(buf);
        }
        bytes += size;
    }
    fprintf(stderr, "%.*s  %s  [", (int)name_len, name, hurray_element_type_name(tag));
    for (k = 0; k < rank; ++k) fprintf(stderr, k == 0 ? "%" PRIu64 : ", %" PRIu64, dims[k]);
    fprintf(stderr, "]  %" PRIu64 " bytes\n", bytes);
    return layout;
}

// readme:begin send-tensor
/* Streams tensor i: its descriptor and its buffers, pointing into the file. */
static HurrayStatus send_tensor(HurrayWriter* w, const HurrayFile* file, uint64_t i, const HurrayDescriptor* d) {
    HurrayBuffer* bufs[255]; /* a descriptor has at most 255 buffers */
    const void* data[255];
    uint64_t sizes[255];
    uint32_t count = 0;
    uint32_t b;
    HurrayStatus st = hurray_descriptor_buffer_count(d, &count);
    for (b = 0; b < count && st == HURRAY_OK; ++b) {
        void* p = NULL;
        st = hurray_file_tensor_buffer(file, i, b, &bufs[b]);
        if (st != HURRAY_OK) break;
        hurray_buffer_data_ptr(bufs[b], &p);
        hurray_buffer_byte_size(bufs[b], &sizes[b]);
        data[b] = p;
    }
    if (st == HURRAY_OK) st = hurray_stream_write_tensor(w, d, data, sizes, count);
    while (b > 0) hurray_buffer_destroy(bufs[--b]);
    return st;
}
// readme:end send-tensor

int main(int argc, char** argv) {
    HurrayFile* file = NULL;
    HurrayWriter* w = NULL;
    HurrayStatus st;
    uint64_t count = 0;
    uint64_t i;
    int composite = 0;
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE.hrry > STREAM\n", argv[0]);
        return 2;
    }
    if ((st = hurray_file_open(argv[1], 0, &file)) != HURRAY_OK) return fail("hurray_file_open", st);
    if ((st = hurray_file_tensor_count(file, &count)) != HURRAY_OK) return fail("tensor_count", st);

    /* First pass: list, and refuse composites before writing anything. */
    for (i = 0; i < count; ++i) {
        HurrayDescriptor* d = NULL;
        if ((st = hurray_file_tensor_descriptor(file, i, &d)) != HURRAY_OK) {
            hurray_file_close(file);
            return fail("hurray_file_tensor_descriptor", st);
        }
        if (describe(file, i, d) == 0x0B) composite = 1; /* a composite head */
        hurray_descriptor_destroy(d);
    }
    if (composite) {
        fprintf(stderr, "c_stream_send: %s holds a composite: not streamed (a composite goes out as its head "
                        "followed by its members in write order, and this program streams tensors one by one "
                        "in index order)\n", argv[1]);
        hurray_file_close(file);
        return 3;
    }

    // readme:begin send-loop
    if ((st = hurray_stream_writer_open(1, 0, &w)) != HURRAY_OK) { /* fd 1: standard output */
        hurray_file_close(file);
        return fail("hurray_stream_writer_open", st);
    }
    for (i = 0; i < count && st == HURRAY_OK; ++i) {
        HurrayDescriptor* d = NULL;
        st = hurray_file_tensor_descriptor(file, i, &d);
        if (st == HURRAY_OK) {
            st = send_tensor(w, file, i, d);
            hurray_descriptor_destroy(d);
        }
    }
    if (st == HURRAY_OK) st = hurray_stream_writer_finish(w);
    if (st != HURRAY_OK) fail("streaming", st);
    hurray_stream_writer_close(w); /* does not close fd 1 */
    // readme:end send-loop
    hurray_file_close(file);
    if (st == HURRAY_OK) fprintf(stderr, "c_stream_send: %" PRIu64 " tensors sent\n", count);
    return st == HURRAY_OK ? 0 : 1;
}
