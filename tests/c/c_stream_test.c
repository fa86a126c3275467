// SPDX-License-Identifier: Apache-2.0
// C tests of the C ABI: streams (HurrayReader, HurrayWriter). Tensors from
// basic.hrry and from the conformance descriptors are written through an fd
// (a file, a pipe) and through callbacks, compared byte for byte with the
// conformance descriptors, and read back in every way (read, read_into,
// read_buffer, skip); then truncated and garbage input, failing callbacks,
// calls out of order, the container/stream entry points both ways, and every
// NULL argument.
#define _POSIX_C_SOURCE 200809L

#include "c_test_util.h"

#include <fcntl.h>
#include <unistd.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------
// The tensors written and read back.

#define MAX_BUFFERS 4
#define MAX_TENSORS 12

typedef struct {
    const char* label;              // for messages
    HurrayDescriptor* desc;         // owned
    uint32_t count;                 // buffers
    uint64_t sizes[MAX_BUFFERS];    // declared sizes (manifest.json)
    uint8_t* data[MAX_BUFFERS];     // malloc'ed (NULL when empty)
    uint8_t* raw;                   // the conformance descriptor's bytes (NULL for basic.hrry's)
    size_t raw_len;
} Tensor;

typedef struct {
    Tensor t[MAX_TENSORS];
    size_t n;
} Corpus;

// Byte j of buffer b of tensor i: a pattern that differs between buffers and tensors.
static uint8_t pattern(size_t i, uint32_t b, uint64_t j) {
    return (uint8_t)(i * 31u + b * 7u + j * 13u + 1u);
}

static void fill_data(Tensor* t, size_t i) {
    uint32_t b;
    for (b = 0; b < t->count; ++b) {
        uint64_t j;
        t->data[b] = t->sizes[b] > 0 ? (uint8_t*)malloc((size_t)t->sizes[b]) : NULL;
        for (j = 0; t->data[b] != NULL && j < t->sizes[b]; ++j) {
            t->data[b][j] = pattern(i, b, j);
        }
    }
}

// A conformance descriptor (descriptors/NAME) with its buffer sizes from manifest.json.
static int add_descriptor(Corpus* c, const char* name, uint32_t count, const uint64_t* sizes) {
    char path[4096];
    char relative[256];
    Tensor* t = &c->t[c->n];
    uint32_t b;
    uint32_t declared = 0;
    memset(t, 0, sizeof *t);
    t->label = name;
    join(relative, sizeof relative, "descriptors", name);
    join(path, sizeof path, g_conformance_dir, relative);
    t->raw = read_all(path, &t->raw_len);
    CHECK(t->raw != NULL);
    if (t->raw == NULL) {
        return 0;
    }
    CHECK_STATUS(hurray_descriptor_decode(t->raw, t->raw_len, &t->desc), HURRAY_OK);
    if (t->desc == NULL) {
        free(t->raw);
        return 0;
    }
    CHECK_STATUS(hurray_descriptor_buffer_count(t->desc, &declared), HURRAY_OK);
    CHECK(declared == count);
    t->count = count;
    for (b = 0; b < count; ++b) {
        t->sizes[b] = sizes[b];
    }
    fill_data(t, c->n);
    ++c->n;
    return 1;
}

// Tensor `index` of basic.hrry, with its own bytes (copied from the file).
static int add_file_tensor(Corpus* c, const HurrayFile* file, uint64_t index, const char* label) {
    Tensor* t = &c->t[c->n];
    HurrayBuffer* buf = NULL;
    void* ptr = NULL;
    memset(t, 0, sizeof *t);
    t->label = label;
    CHECK_STATUS(hurray_file_tensor_descriptor(file, index, &t->desc), HURRAY_OK);
    CHECK_STATUS(hurray_descriptor_buffer_count(t->desc, &t->count), HURRAY_OK);
    CHECK(t->count == 1);
    CHECK_STATUS(hurray_file_tensor_buffer(file, index, 0, &buf), HURRAY_OK);
    if (t->desc == NULL || buf == NULL || t->count != 1) {
        return 0;
    }
    hurray_buffer_byte_size(buf, &t->sizes[0]);
    hurray_buffer_data_ptr(buf, &ptr);
    t->data[0] = (uint8_t*)malloc((size_t)t->sizes[0]);
    if (t->data[0] != NULL) {
        memcpy(t->data[0], ptr, (size_t)t->sizes[0]);
    }
    hurray_buffer_destroy(buf);
    ++c->n;
    return 1;
}

static void free_corpus(Corpus* c) {
    size_t i;
    for (i = 0; i < c->n; ++i) {
        uint32_t b;
        for (b = 0; b < c->t[i].count; ++b) {
            free(c->t[i].data[b]);
        }
        free(c->t[i].raw);
        hurray_descriptor_destroy(c->t[i].desc);
    }
    c->n = 0;
}

static int load_corpus(Corpus* c) {
    static const uint64_t f32_3x4[1] = {48};
    static const uint64_t csr[3] = {8, 16, 32};
    static const uint64_t empty[1] = {0};
    static const uint64_t quant[2] = {8192, 256};
    static const uint64_t bools[1] = {2};
    static const uint64_t f16[1] = {8};
    static const uint64_t morton[1] = {64};
    static const uint64_t sharded[1] = {128};
    char path[4096];
    HurrayFile* file = NULL;
    int ok = 1;
    c->n = 0;
    join(path, sizeof path, g_conformance_dir, "files/basic.hrry");
    CHECK_STATUS(hurray_file_open(path, 0, &file), HURRAY_OK);
    if (file == NULL) {
        return 0;
    }
    ok &= add_file_tensor(c, file, 0, "basic.hrry tensor 0");
    ok &= add_file_tensor(c, file, 1, "basic.hrry tensor 1");
    hurray_file_close(file);
    ok &= add_descriptor(c, "row_major_f32_3x4.bin", 1, f32_3x4);
    ok &= add_descriptor(c, "csr_f32_3x3.bin", 3, csr);
    ok &= add_descriptor(c, "empty_f32_0x4.bin", 1, empty);
    ok &= add_descriptor(c, "quant_per_block_int4_128x128.bin", 2, quant);
    ok &= add_descriptor(c, "bool_packed_10.bin", 1, bools);
    ok &= add_descriptor(c, "row_major_f16_2x2.bin", 1, f16);
    ok &= add_descriptor(c, "morton_f32_4x4.bin", 1, morton);
    ok &= add_descriptor(c, "sharded_f32_8x4.bin", 1, sharded);
    if (!ok) {
        free_corpus(c);
    }
    return ok;
}

// The tensor's buffers as the `buffers` argument of hurray_stream_write_tensor.
static const void* const* buffers_of(const Tensor* t, const void** bufs) {
    uint32_t b;
    for (b = 0; b < t->count; ++b) {
        bufs[b] = t->data[b];
    }
    return bufs;
}

static uint64_t total_size(const Tensor* t) {
    uint64_t sum = 0;
    uint32_t b;
    for (b = 0; b < t->count; ++b) {
        sum += t->sizes[b];
    }
    return sum;
}

// ---------------------------------------------------------------------------
// Memory sinks and sources for the callbacks.

typedef struct {
    uint8_t* bytes;
    size_t len;
    size_t cap;
    int calls;
    int fail_after;  // fail the call with this number (1-based); 0: never
} MemSink;

// Callback calls with len 0 (the library promises none); checked at the end.
static int g_empty_calls = 0;

static int32_t mem_write(void* context, const void* data, size_t len) {
    MemSink* s = (MemSink*)context;
    ++s->calls;
    g_empty_calls += len == 0;
    if (s->fail_after > 0 && s->calls >= s->fail_after) {
        return -5;
    }
    if (s->len + len > s->cap) {
        size_t cap = s->cap == 0 ? 1024 : s->cap;
        uint8_t* grown;
        while (cap < s->len + len) {
            cap *= 2;
        }
        grown = (uint8_t*)realloc(s->bytes, cap);
        if (grown == NULL) {
            return -12;
        }
        s->bytes = grown;
        s->cap = cap;
    }
    memcpy(s->bytes + s->len, data, len);
    s->len += len;
    return 0;
}

typedef struct {
    const uint8_t* bytes;
    size_t len;
    size_t pos;
    size_t max_chunk;   // at most this many bytes per call (short reads)
    int calls;
    int calls_after_end;
    int ended;
    size_t fail_at;     // fail once pos reaches this (SIZE_MAX: never)
    int overlong;       // claim one byte more than asked
} MemSource;

static int64_t mem_read(void* context, void* buf, size_t len) {
    MemSource* s = (MemSource*)context;
    size_t n;
    ++s->calls;
    g_empty_calls += len == 0;
    if (s->ended) {
        ++s->calls_after_end;
    }
    if (s->overlong) {
        return (int64_t)len + 1;
    }
    if (s->pos >= s->fail_at) {
        s->ended = 1;
        return -1;
    }
    n = s->len - s->pos;
    if (n > len) {
        n = len;
    }
    if (n > s->max_chunk) {
        n = s->max_chunk;
    }
    if (s->fail_at != SIZE_MAX && s->pos + n > s->fail_at) {
        n = s->fail_at - s->pos;
    }
    memcpy(buf, s->bytes + s->pos, n);
    s->pos += n;
    if (n == 0) {
        s->ended = 1;
    }
    return (int64_t)n;
}

static MemSource mem_source(const uint8_t* bytes, size_t len, size_t max_chunk) {
    MemSource s;
    s.bytes = bytes;
    s.len = len;
    s.pos = 0;
    s.max_chunk = max_chunk;
    s.calls = 0;
    s.calls_after_end = 0;
    s.ended = 0;
    s.fail_at = SIZE_MAX;
    s.overlong = 0;
    return s;
}

// ---------------------------------------------------------------------------
// Writing and reading a corpus.

// Writes every tensor of `c`: whole (write_tensor) when `chunked` is 0, else
// odd tensors in pieces of `piece` bytes that span buffers. Then finishes.
static void write_corpus(HurrayWriter* w, const Corpus* c, int chunked, size_t piece) {
    size_t i;
    for (i = 0; i < c->n; ++i) {
        const Tensor* t = &c->t[i];
        if (!chunked || i % 2 == 0) {
            const void* bufs[MAX_BUFFERS];
            uint32_t b;
            for (b = 0; b < t->count; ++b) {
                bufs[b] = t->data[b];
            }
            CHECK_STATUS(hurray_stream_write_tensor(w, t->desc, bufs, t->sizes, t->count), HURRAY_OK);
        } else {
            // The buffers as one run, sent in pieces that cross buffer ends.
            const uint64_t total = total_size(t);
            uint8_t* run = (uint8_t*)malloc(total > 0 ? (size_t)total : 1);
            size_t pos = 0;
            uint32_t b;
            if (run == NULL) {
                CHECK(0);
                return;
            }
            for (b = 0; b < t->count; ++b) {
                if (t->sizes[b] > 0) {
                    memcpy(run + pos, t->data[b], (size_t)t->sizes[b]);
                }
                pos += (size_t)t->sizes[b];
            }
            CHECK_STATUS(hurray_stream_begin_tensor(w, t->desc), HURRAY_OK);
            CHECK_STATUS(hurray_stream_write(w, NULL, 0), HURRAY_OK);  // an empty piece
            for (pos = 0; pos < total; pos += piece) {
                const size_t n = total - pos < piece ? (size_t)(total - pos) : piece;
                CHECK_STATUS(hurray_stream_write(w, run + pos, n), HURRAY_OK);
            }
            CHECK_STATUS(hurray_stream_end_tensor(w), HURRAY_OK);
            free(run);
        }
    }
    CHECK_STATUS(hurray_stream_writer_finish(w), HURRAY_OK);
}

// The descriptor read from a stream has the fields of the one written.
static int same_descriptor(const HurrayDescriptor* a, const HurrayDescriptor* b) {
    uint8_t ta = 0;
    uint8_t tb = 1;
    uint8_t la = 0;
    uint8_t lb = 1;
    uint64_t da[8];
    uint64_t db[8];
    uintptr_t ra = 8;
    uintptr_t rb = 8;
    uint64_t oa = 1;
    uint64_t ob = 2;
    uint32_t ca = 0;
    uint32_t cb = 1;
    uintptr_t k;
    if (hurray_descriptor_element_type_tag(a, &ta) != HURRAY_OK ||
        hurray_descriptor_element_type_tag(b, &tb) != HURRAY_OK || ta != tb) {
        return 0;
    }
    if (hurray_descriptor_layout_tag(a, &la) != HURRAY_OK || hurray_descriptor_layout_tag(b, &lb) != HURRAY_OK ||
        la != lb) {
        return 0;
    }
    if (hurray_descriptor_shape(a, da, &ra) != HURRAY_OK || hurray_descriptor_shape(b, db, &rb) != HURRAY_OK ||
        ra != rb) {
        return 0;
    }
    for (k = 0; k < ra; ++k) {
        if (da[k] != db[k]) {
            return 0;
        }
    }
    if (hurray_descriptor_byte_offset(a, &oa) != HURRAY_OK || hurray_descriptor_byte_offset(b, &ob) != HURRAY_OK ||
        oa != ob) {
        return 0;
    }
    return hurray_descriptor_buffer_count(a, &ca) == HURRAY_OK && hurray_descriptor_buffer_count(b, &cb) == HURRAY_OK &&
           ca == cb;
}

enum ReadMode {
    READ_PIECES,   // hurray_stream_read with a small capacity
    READ_INTO,     // hurray_stream_read_into the rest of each buffer
    READ_BUFFERS,  // hurray_stream_read_buffer
    READ_MIXED,    // a piece with hurray_stream_read, then read_into, then read_buffer
    SKIP_ODD,      // read even tensors whole, skip odd ones explicitly
    NEXT_ONLY      // hurray_stream_next only: next skips the data
};

// Reads the data of tensor `i` with hurray_stream_read, `capacity` bytes at most per call.
static int read_pieces(HurrayReader* r, const Tensor* t, size_t capacity) {
    uint8_t buf[64];
    uint32_t b = 0;
    uint64_t off = 0;
    int ok = 1;
    for (;;) {
        size_t got = 0;
        uint32_t pb = 99;
        uint64_t po = 99;
        uint64_t left = 99;
        HurrayStatus s = hurray_stream_data_position(r, &pb, &po, &left);
        while (b < t->count && off == t->sizes[b]) {
            ++b;
            off = 0;
        }
        if (s != HURRAY_OK) {
            return 0;
        }
        if (b == t->count) {
            ok &= pb == t->count && po == 0 && left == 0;
        } else {
            ok &= pb == b && po == off && left == t->sizes[b] - off;
        }
        s = hurray_stream_read(r, buf, capacity, &got);
        if (s != HURRAY_OK) {
            return 0;
        }
        if (got == 0) {
            break;
        }
        // Never past the end of the current buffer, never more than asked.
        if (b == t->count || got > capacity || off + got > t->sizes[b] || memcmp(buf, t->data[b] + off, got) != 0) {
            return 0;
        }
        off += got;
    }
    while (b < t->count && off == t->sizes[b]) {
        ++b;
        off = 0;
    }
    return ok && b == t->count;
}

static int read_into_all(HurrayReader* r, const Tensor* t) {
    for (;;) {
        uint32_t pb = 0;
        uint64_t po = 0;
        uint64_t left = 0;
        uint8_t* out;
        int same;
        if (hurray_stream_data_position(r, &pb, &po, &left) != HURRAY_OK) {
            return 0;
        }
        if (pb == t->count) {
            return left == 0;
        }
        if (pb > t->count || po != 0 || left != t->sizes[pb]) {
            return 0;
        }
        out = (uint8_t*)malloc((size_t)left);
        if (out == NULL || hurray_stream_read_into(r, out, (size_t)left) != HURRAY_OK) {
            free(out);
            return 0;
        }
        same = memcmp(out, t->data[pb], (size_t)left) == 0;
        free(out);
        if (!same) {
            return 0;
        }
    }
}

// Reads buffers `from` .. count-1 with hurray_stream_read_buffer, then expects NULL.
static int read_buffers(HurrayReader* r, const Tensor* t, uint32_t from) {
    uint32_t b;
    HurrayBuffer* buf = NULL;
    int ok = 1;
    for (b = from; b < t->count; ++b) {
        void* ptr = NULL;
        uint64_t size = 99;
        uint32_t alignment = 0;
        uint8_t tag = 0xAA;
        if (hurray_stream_read_buffer(r, &buf) != HURRAY_OK || buf == NULL) {
            return 0;
        }
        ok &= hurray_buffer_byte_size(buf, &size) == HURRAY_OK && size == t->sizes[b];
        ok &= hurray_buffer_data_ptr(buf, &ptr) == HURRAY_OK;
        ok &= size == 0 || (ptr != NULL && memcmp(ptr, t->data[b], (size_t)size) == 0);
        // Its own allocation, aligned as declared (64 in every conformance descriptor).
        ok &= hurray_buffer_alignment(buf, &alignment) == HURRAY_OK && (size == 0 || alignment == 64);
        ok &= size == 0 || (uintptr_t)ptr % 64 == 0;
        ok &= hurray_buffer_device_tag(buf, &tag) == HURRAY_OK && tag == 0;
        ok &= hurray_buffer_destroy(buf) == HURRAY_OK;
    }
    buf = (HurrayBuffer*)&g_passed;
    ok &= hurray_stream_read_buffer(r, &buf) == HURRAY_OK && buf == NULL;  // every buffer returned
    ok &= hurray_stream_read_buffer(r, &buf) == HURRAY_OK && buf == NULL;
    return ok;
}

static int read_mixed(HurrayReader* r, const Tensor* t) {
    uint8_t piece[3];
    size_t got = 0;
    uint32_t pb = 0;
    uint64_t po = 0;
    uint64_t left = 0;
    uint8_t* rest;
    int ok = 1;
    HurrayBuffer* buf = NULL;
    if (t->count == 0 || t->sizes[0] < 4) {
        return read_buffers(r, t, 0);
    }
    ok &= hurray_stream_read(r, piece, sizeof piece, &got) == HURRAY_OK && got > 0;
    ok &= memcmp(piece, t->data[0], got) == 0;
    // Part of buffer 0 was read: read_buffer refuses it, and reads nothing.
    ok &= hurray_stream_read_buffer(r, &buf) == HURRAY_ERR_INVALID_ARGUMENT && buf == NULL;
    ok &= strstr(hurray_last_error_message(), "already read") != NULL;
    ok &= hurray_stream_data_position(r, &pb, &po, &left) == HURRAY_OK && pb == 0 && po == got;
    // read_into takes exactly the rest: one byte less is refused, nothing read.
    rest = (uint8_t*)malloc((size_t)left);
    if (rest == NULL) {
        return 0;
    }
    ok &= hurray_stream_read_into(r, rest, (size_t)left - 1) == HURRAY_ERR_INVALID_ARGUMENT;
    ok &= strstr(hurray_last_error_message(), "size_mismatch") != NULL;
    ok &= hurray_stream_read_into(r, rest, (size_t)left) == HURRAY_OK;
    ok &= memcmp(rest, t->data[0] + got, (size_t)left) == 0;
    free(rest);
    // The remaining buffers whole; buffer 0 is not returned again.
    return ok && read_buffers(r, t, 1);
}

// Reads a whole stream of `c` from `r` in `mode`, then the clean end (twice).
static void read_corpus(HurrayReader* r, const Corpus* c, enum ReadMode mode, const char* what) {
    size_t i;
    HurrayDescriptor* d = NULL;
    for (i = 0; i < c->n; ++i) {
        const Tensor* t = &c->t[i];
        int ok = 1;
        CHECK_STATUS(hurray_stream_next(r, &d), HURRAY_OK);
        CHECK(d != NULL);
        if (d == NULL) {
            return;
        }
        ok = same_descriptor(d, t->desc);
        hurray_descriptor_destroy(d);
        d = NULL;
        switch (mode) {
            case READ_PIECES:
                ok &= read_pieces(r, t, 1 + i % 7);
                break;
            case READ_INTO:
                ok &= read_into_all(r, t);
                break;
            case READ_BUFFERS:
                ok &= read_buffers(r, t, 0);
                break;
            case READ_MIXED:
                ok &= read_mixed(r, t);
                break;
            case SKIP_ODD:
                if (i % 2 == 0) {
                    ok &= read_pieces(r, t, 64);
                } else {
                    HurrayBuffer* buf = (HurrayBuffer*)&g_passed;
                    ok &= hurray_stream_skip(r) == HURRAY_OK;
                    ok &= hurray_stream_skip(r) == HURRAY_OK;  // nothing left: still fine
                    ok &= hurray_stream_read_buffer(r, &buf) == HURRAY_OK && buf == NULL;
                }
                break;
            case NEXT_ONLY:
                break;
        }
        if (!ok) {
            fprintf(stderr, "%s: tensor %s (mode %d) differs\n", what, t->label, (int)mode);
        }
        CHECK(ok);
    }
    d = (HurrayDescriptor*)&g_passed;
    CHECK_STATUS(hurray_stream_next(r, &d), HURRAY_OK);
    CHECK(d == NULL);
    d = (HurrayDescriptor*)&g_passed;
    CHECK_STATUS(hurray_stream_next(r, &d), HURRAY_OK);  // the end stays the end
    CHECK(d == NULL);
}

static const enum ReadMode kAllModes[] = {READ_PIECES, READ_INTO, READ_BUFFERS, READ_MIXED, SKIP_ODD, NEXT_ONLY};
#define MODE_COUNT (sizeof kAllModes / sizeof kAllModes[0])

// The corpus written through callbacks into memory.
static uint8_t* corpus_stream(const Corpus* c, int chunked, size_t* len) {
    MemSink sink;
    HurrayWriter* w = NULL;
    memset(&sink, 0, sizeof sink);
    CHECK_STATUS(hurray_stream_writer_open_callbacks(mem_write, &sink, 0, &w), HURRAY_OK);
    if (w == NULL) {
        return NULL;
    }
    write_corpus(w, c, chunked, 5);
    hurray_stream_writer_close(w);
    *len = sink.len;
    return sink.bytes;
}

// ---------------------------------------------------------------------------
// Tests.

// The same stream through callbacks, an fd on a file, and chunked writes; read
// back from memory, callbacks (short reads) and the file in every mode.
static void test_round_trips(const Corpus* c) {
    size_t len = 0;
    size_t chunked_len = 0;
    uint8_t* bytes = corpus_stream(c, 0, &len);
    uint8_t* chunked = corpus_stream(c, 1, &chunked_len);
    uint8_t* from_file;
    size_t file_len = 0;
    char path[4096];
    size_t m;
    int fd;
    HurrayWriter* w = NULL;
    CHECK(bytes != NULL && chunked != NULL);
    if (bytes == NULL || chunked == NULL) {
        free(bytes);
        free(chunked);
        return;
    }
    // Whole and chunked writes give the same bytes.
    CHECK(len == chunked_len && memcmp(bytes, chunked, len) == 0);

    // Through an fd on a regular file.
    join(path, sizeof path, g_tmp_dir, "c_stream_corpus.hrrys");
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    CHECK_STATUS(hurray_stream_writer_open(fd, HURRAY_STREAM_REQUIRE_PRODUCER_SYNCED, &w), HURRAY_OK);
    if (w != NULL) {
        write_corpus(w, c, 1, 1000);
        CHECK_STATUS(hurray_stream_writer_finish(w), HURRAY_OK);  // again: still fine
        hurray_stream_writer_close(w);
    }
    CHECK(close(fd) == 0);
    from_file = read_all(path, &file_len);
    CHECK(from_file != NULL && file_len == len && memcmp(from_file, bytes, len) == 0);
    free(from_file);

    for (m = 0; m < MODE_COUNT; ++m) {
        HurrayReader* r = NULL;
        MemSource src = mem_source(bytes, len, 3 + m);
        // Memory.
        CHECK_STATUS(hurray_stream_open_memory(bytes, len, 0, &r), HURRAY_OK);
        if (r != NULL) {
            read_corpus(r, c, kAllModes[m], "memory");
            hurray_stream_close(r);
        }
        // Callbacks, with short reads; not called again after the end.
        r = NULL;
        CHECK_STATUS(hurray_stream_open_callbacks(mem_read, &src, HURRAY_STREAM_PERMISSIVE, &r), HURRAY_OK);
        if (r != NULL) {
            read_corpus(r, c, kAllModes[m], "callbacks");
            hurray_stream_close(r);
        }
        CHECK(src.pos == len && src.calls_after_end == 0);
        // The file (skips seek).
        r = NULL;
        fd = open(path, O_RDONLY);
        CHECK(fd >= 0);
        CHECK_STATUS(hurray_stream_open(fd, HURRAY_STREAM_REQUIRE_PRODUCER_SYNCED, &r), HURRAY_OK);
        if (r != NULL) {
            read_corpus(r, c, kAllModes[m], "file");
            hurray_stream_close(r);
        }
        // The fd stays the caller's: still open after hurray_stream_close.
        CHECK(close(fd) == 0);
    }
    remove(path);
    free(bytes);
    free(chunked);
}

// Through a pipe: the writer on one end, the reader on the other.
static void test_pipe(const Corpus* c) {
    int fds[2];
    HurrayWriter* w = NULL;
    HurrayReader* r = NULL;
    CHECK(pipe(fds) == 0);
    // The whole corpus (about 9 KiB) fits in the pipe's buffer.
    CHECK_STATUS(hurray_stream_writer_open(fds[1], 0, &w), HURRAY_OK);
    if (w != NULL) {
        write_corpus(w, c, 1, 7);
        hurray_stream_writer_close(w);
    }
    CHECK(close(fds[1]) == 0);
    CHECK_STATUS(hurray_stream_open(fds[0], 0, &r), HURRAY_OK);
    if (r != NULL) {
        read_corpus(r, c, SKIP_ODD, "pipe");
        hurray_stream_close(r);
    }
    CHECK(close(fds[0]) == 0);
}

// Golden streams: manifest.json lists no stream files, but a one-tensor stream
// is its encoded descriptor followed by its data, so each conformance
// descriptor gives one: the writer must produce exactly those bytes, and the
// reader must read them.
static void test_golden(const Corpus* c) {
    size_t i;
    for (i = 0; i < c->n; ++i) {
        const Tensor* t = &c->t[i];
        MemSink sink;
        HurrayWriter* w = NULL;
        HurrayReader* r = NULL;
        const void* bufs[MAX_BUFFERS];
        uint8_t* golden;
        size_t pos;
        uint32_t b;
        Corpus one;
        if (t->raw == NULL) {
            continue;
        }
        golden = (uint8_t*)malloc(t->raw_len + (size_t)total_size(t));
        if (golden == NULL) {
            CHECK(0);
            return;
        }
        memcpy(golden, t->raw, t->raw_len);
        pos = t->raw_len;
        for (b = 0; b < t->count; ++b) {
            bufs[b] = t->data[b];
            if (t->sizes[b] > 0) {
                memcpy(golden + pos, t->data[b], (size_t)t->sizes[b]);
            }
            pos += (size_t)t->sizes[b];
        }
        memset(&sink, 0, sizeof sink);
        CHECK_STATUS(hurray_stream_writer_open_callbacks(mem_write, &sink, 0, &w), HURRAY_OK);
        CHECK_STATUS(hurray_stream_write_tensor(w, t->desc, bufs, t->sizes, t->count), HURRAY_OK);
        CHECK_STATUS(hurray_stream_writer_finish(w), HURRAY_OK);
        hurray_stream_writer_close(w);
        CHECK(sink.len == pos && memcmp(sink.bytes, golden, pos) == 0);
        free(sink.bytes);

        one.t[0] = *t;
        one.n = 1;
        CHECK_STATUS(hurray_stream_open_memory(golden, pos, 0, &r), HURRAY_OK);
        if (r != NULL) {
            read_corpus(r, &one, READ_BUFFERS, t->label);
            hurray_stream_close(r);
        }
        free(golden);
    }
}

// ADR-011: a container given to a stream entry point, and a stream given to a
// file entry point, are both HURRAY_ERR_WRONG_FORMAT with a message that says so.
static void test_entry_points(const Corpus* c) {
    char path[4096];
    char stream_path[4096];
    size_t len = 0;
    uint8_t* bytes;
    HurrayReader* r = (HurrayReader*)&g_passed;
    HurrayFile* f = (HurrayFile*)&g_passed;
    MemSource src;
    int fd;
    uint8_t* stream;
    size_t stream_len = 0;

    join(path, sizeof path, g_conformance_dir, "files/basic.hrry");
    bytes = read_all(path, &len);
    CHECK(bytes != NULL);
    if (bytes == NULL) {
        return;
    }
    CHECK_STATUS(hurray_stream_open_memory(bytes, len, 0, &r), HURRAY_ERR_WRONG_FORMAT);
    CHECK(r == NULL);
    CHECK(strstr(hurray_last_error_message(), "HRRYFILE container") != NULL);
    CHECK(strstr(hurray_last_error_message(), "hurray_file_open") != NULL);
    CHECK(strstr(hurray_last_error_message(), "48 52 52 59 46 49 4c 45") != NULL);

    src = mem_source(bytes, len, 3);
    r = (HurrayReader*)&g_passed;
    CHECK_STATUS(hurray_stream_open_callbacks(mem_read, &src, 0, &r), HURRAY_ERR_WRONG_FORMAT);
    CHECK(r == NULL);
    CHECK(src.pos == 8);  // only the magic was read
    CHECK(strstr(hurray_last_error_message(), "hurray_file_open") != NULL);

    fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    r = (HurrayReader*)&g_passed;
    CHECK_STATUS(hurray_stream_open(fd, 0, &r), HURRAY_ERR_WRONG_FORMAT);
    CHECK(r == NULL);
    CHECK(strstr(hurray_last_error_message(), "HRRYFILE container") != NULL);
    CHECK(close(fd) == 0);  // still the caller's
    free(bytes);

    // The other way round: a stream given to hurray_file_open(_memory).
    stream = corpus_stream(c, 0, &stream_len);
    CHECK(stream != NULL);
    if (stream == NULL) {
        return;
    }
    join(stream_path, sizeof stream_path, g_tmp_dir, "c_stream_given_to_file_open.hrrys");
    CHECK(write_all(stream_path, stream, stream_len));
    CHECK_STATUS(hurray_file_open(stream_path, 0, &f), HURRAY_ERR_WRONG_FORMAT);
    CHECK(f == NULL);
    CHECK(strstr(hurray_last_error_message(), "Hurray stream") != NULL);
    CHECK(strstr(hurray_last_error_message(), "not an HRRYFILE container") != NULL);
    f = (HurrayFile*)&g_passed;
    CHECK_STATUS(hurray_file_open_memory(stream, stream_len, 0, &f), HURRAY_ERR_WRONG_FORMAT);
    CHECK(f == NULL);
    CHECK(strstr(hurray_last_error_message(), "stream") != NULL);
    remove(stream_path);
    free(stream);
}

// Reads a stream to its end or first error, reading all data; returns the
// status that stopped it and counts the tensors read whole.
static HurrayStatus drain(HurrayReader* r, size_t* whole) {
    *whole = 0;
    for (;;) {
        HurrayDescriptor* d = NULL;
        uint8_t buf[256];
        size_t got = 1;
        HurrayStatus s = hurray_stream_next(r, &d);
        if (s != HURRAY_OK || d == NULL) {
            return s;
        }
        hurray_descriptor_destroy(d);
        while (got > 0) {
            s = hurray_stream_read(r, buf, sizeof buf, &got);
            if (s != HURRAY_OK) {
                return s;
            }
        }
        ++*whole;
    }
}

// The stream cut at every byte: the complete tensors before the cut, then a
// clean end on a tensor boundary or HURRAY_ERR_TRUNCATED (sticky) elsewhere.
static void test_truncated(const Corpus* c) {
    size_t len = 0;
    uint8_t* bytes = corpus_stream(c, 0, &len);
    size_t ends[MAX_TENSORS + 1];
    size_t i;
    size_t cut;
    int bad = 0;
    HurrayReader* r = NULL;
    HurrayDescriptor* d = NULL;
    uint8_t buf[8];
    size_t got = 0;
    if (bytes == NULL) {
        CHECK(0);
        return;
    }
    // Tensor boundaries: ends[k] = where tensor k ends.
    {
        size_t pos = 0;
        for (i = 0; i < c->n; ++i) {
            size_t one_len = 0;
            Corpus one;
            uint8_t* one_bytes;
            one.t[0] = c->t[i];
            one.n = 1;
            one_bytes = corpus_stream(&one, 0, &one_len);
            free(one_bytes);
            pos += one_len;
            ends[i] = pos;
        }
        CHECK(pos == len);
    }
    for (cut = 0; cut < len; ++cut) {
        size_t whole = 0;
        size_t complete = 0;
        int boundary = cut == 0;
        HurrayStatus s;
        MemSource src = mem_source(bytes, cut, 1 + cut % 5);
        for (i = 0; i < c->n; ++i) {
            if (ends[i] <= cut) {
                complete = i + 1;
            }
            boundary |= ends[i] == cut;
        }
        r = NULL;
        if (cut % 2 == 0) {
            s = hurray_stream_open_memory(bytes, cut, 0, &r);
        } else {
            s = hurray_stream_open_callbacks(mem_read, &src, 0, &r);
        }
        if (s != HURRAY_OK || r == NULL) {
            ++bad;
            continue;
        }
        s = drain(r, &whole);
        if (whole != complete || s != (boundary ? HURRAY_OK : HURRAY_ERR_TRUNCATED)) {
            if (bad < 5) {
                fprintf(stderr, "cut at %zu: %zu whole (want %zu), status %d: %s\n", cut, whole, complete, (int)s,
                        hurray_last_error_message());
            }
            ++bad;
        }
        if (!boundary) {
            // Sticky: every call now returns it.
            d = (HurrayDescriptor*)&g_passed;
            HurrayBuffer* out = (HurrayBuffer*)&g_passed;
            uint32_t pb = 0;
            uint64_t po = 0;
            uint64_t left = 0;
            if (hurray_stream_next(r, &d) != HURRAY_ERR_TRUNCATED || d != NULL ||
                hurray_stream_skip(r) != HURRAY_ERR_TRUNCATED ||
                hurray_stream_read(r, buf, sizeof buf, &got) != HURRAY_ERR_TRUNCATED ||
                hurray_stream_read_into(r, buf, 1) != HURRAY_ERR_TRUNCATED ||
                hurray_stream_read_buffer(r, &out) != HURRAY_ERR_TRUNCATED || out != NULL ||
                hurray_stream_data_position(r, &pb, &po, &left) != HURRAY_ERR_TRUNCATED ||
                strstr(hurray_last_error_message(), "truncated") == NULL) {
                ++bad;
            }
        }
        hurray_stream_close(r);
    }
    CHECK(bad == 0);

    // The message names the tensor and what was cut.
    CHECK_STATUS(hurray_stream_open_memory(bytes, ends[0] + 5, 0, &r), HURRAY_OK);
    CHECK_STATUS(hurray_stream_next(r, &d), HURRAY_OK);
    hurray_descriptor_destroy(d);
    CHECK_STATUS(hurray_stream_next(r, &d), HURRAY_ERR_TRUNCATED);
    CHECK(d == NULL);
    CHECK(strstr(hurray_last_error_message(), "stream tensor #1") != NULL);
    CHECK(strstr(hurray_last_error_message(), "descriptor prefix") != NULL);
    hurray_stream_close(r);

    // Cut inside the data: read, read_into, read_buffer and skip each report it.
    {
        const size_t cut_at = ends[2] + c->t[3].raw_len + 3;  // 3 bytes into the CSR tensor's data
        int k;
        for (k = 0; k < 4; ++k) {
            HurrayBuffer* out = (HurrayBuffer*)&g_passed;
            uint8_t eight[8];
            HurrayStatus s = HURRAY_OK;
            CHECK_STATUS(hurray_stream_open_memory(bytes, cut_at, 0, &r), HURRAY_OK);
            for (i = 0; i < 4; ++i) {
                CHECK_STATUS(hurray_stream_next(r, &d), HURRAY_OK);
                hurray_descriptor_destroy(d);
            }
            switch (k) {
                case 0:
                    CHECK_STATUS(hurray_stream_read(r, eight, sizeof eight, &got), HURRAY_OK);
                    CHECK(got == 3);  // what there is
                    s = hurray_stream_read(r, eight, sizeof eight, &got);
                    break;
                case 1:
                    s = hurray_stream_read_into(r, eight, sizeof eight);
                    break;
                case 2:
                    s = hurray_stream_read_buffer(r, &out);
                    CHECK(out == NULL);
                    break;
                default:
                    s = hurray_stream_skip(r);
                    break;
            }
            CHECK(s == HURRAY_ERR_TRUNCATED);
            CHECK(strstr(hurray_last_error_message(), "stream ends inside buffer 0") != NULL);
            hurray_stream_close(r);
        }
    }
    free(bytes);
}

// Input that is not a stream: the decoder's status, sticky, with a message.
static void test_garbage(const Corpus* c) {
    static const char gif[] = "GIF89a, certainly not a Hurray stream";
    HurrayReader* r = NULL;
    HurrayDescriptor* d = NULL;
    uint8_t* bytes;
    const Tensor* f32 = &c->t[2];  // row_major_f32_3x4.bin
    size_t len;

    CHECK_STATUS(hurray_stream_open_memory((const uint8_t*)gif, sizeof gif - 1, 0, &r), HURRAY_OK);
    CHECK_STATUS(hurray_stream_next(r, &d), HURRAY_ERR_INVALID_MAGIC);
    CHECK(d == NULL);
    CHECK(strstr(hurray_last_error_message(), "47 49 46 38 39 61 2c 20") != NULL);
    CHECK(strstr(hurray_last_error_message(), "not a Hurray stream") != NULL);
    CHECK_STATUS(hurray_stream_next(r, &d), HURRAY_ERR_INVALID_MAGIC);  // sticky
    hurray_stream_close(r);

    // An empty input is an empty stream: no tensor, a clean end.
    r = NULL;
    CHECK_STATUS(hurray_stream_open_memory((const uint8_t*)gif, 0, 0, &r), HURRAY_OK);
    d = (HurrayDescriptor*)&g_passed;
    CHECK_STATUS(hurray_stream_next(r, &d), HURRAY_OK);
    CHECK(d == NULL);
    hurray_stream_close(r);

    // Damaged descriptors: version, a reserved byte, the buffer count.
    len = f32->raw_len + 48;
    bytes = (uint8_t*)malloc(len);
    if (bytes == NULL) {
        CHECK(0);
        return;
    }
    memcpy(bytes, f32->raw, f32->raw_len);
    memcpy(bytes + f32->raw_len, f32->data[0], 48);
    bytes[4] = 0x09;  // version_major
    CHECK_STATUS(hurray_stream_open_memory(bytes, len, 0, &r), HURRAY_OK);
    CHECK_STATUS(hurray_stream_next(r, &d), HURRAY_ERR_VERSION_MISMATCH);
    hurray_stream_close(r);
    bytes[4] = 0x01;
    bytes[60] = 0x01;  // the last reserved byte of the buffer handle
    CHECK_STATUS(hurray_stream_open_memory(bytes, len, HURRAY_STREAM_PERMISSIVE, &r), HURRAY_OK);
    CHECK_STATUS(hurray_stream_next(r, &d), HURRAY_ERR_INVALID_LAYOUT);
    CHECK(strstr(hurray_last_error_message(), "stream tensor #0") != NULL);
    hurray_stream_close(r);
    bytes[60] = 0x00;
    // An unassigned element type tag: strict reading rejects it, permissive
    // reading carries it without interpretation.
    bytes[14] = 0x7E;
    CHECK_STATUS(hurray_stream_open_memory(bytes, len, 0, &r), HURRAY_OK);
    CHECK_STATUS(hurray_stream_next(r, &d), HURRAY_ERR_INVALID_TYPE);
    hurray_stream_close(r);
    CHECK_STATUS(hurray_stream_open_memory(bytes, len, HURRAY_STREAM_PERMISSIVE, &r), HURRAY_OK);
    CHECK_STATUS(hurray_stream_next(r, &d), HURRAY_OK);
    if (d != NULL) {
        uint8_t tag = 0;
        CHECK_STATUS(hurray_descriptor_element_type_tag(d, &tag), HURRAY_OK);
        CHECK(tag == 0x7E);
        hurray_descriptor_destroy(d);
    }
    CHECK_STATUS(hurray_stream_skip(r), HURRAY_OK);
    d = (HurrayDescriptor*)&g_passed;
    CHECK_STATUS(hurray_stream_next(r, &d), HURRAY_OK);
    CHECK(d == NULL);
    hurray_stream_close(r);
    bytes[14] = 0x03;
    bytes[44] = 0x02;  // buffer_count 2 where the layout needs 1 (and the bytes run short)
    CHECK_STATUS(hurray_stream_open_memory(bytes, len, 0, &r), HURRAY_OK);
    CHECK(hurray_stream_next(r, &d) < 0);
    CHECK(d == NULL);
    hurray_stream_close(r);
    free(bytes);
}

// A descriptor patched from row_major_int8_5.bin (53 bytes): int8 [n] with
// its buffer of n bytes on `device`, synchronised with `sync`.
static HurrayDescriptor* patched_int8(uint64_t n, uint8_t device, uint8_t sync, uint8_t* raw) {
    HurrayDescriptor* d = NULL;
    char path[4096];
    size_t len = 0;
    uint8_t* bytes;
    int k;
    join(path, sizeof path, g_conformance_dir, "descriptors/row_major_int8_5.bin");
    bytes = read_all(path, &len);
    CHECK(bytes != NULL && len == 53);
    if (bytes == NULL || len != 53) {
        free(bytes);
        return NULL;
    }
    memcpy(raw, bytes, 53);
    free(bytes);
    for (k = 0; k < 8; ++k) {
        raw[20 + k] = (uint8_t)(n >> (8 * k));  // shape[0]
        raw[37 + k] = (uint8_t)(n >> (8 * k));  // buffer 0 byte_size
    }
    raw[49] = device;
    raw[50] = sync;
    CHECK_STATUS(hurray_descriptor_decode(raw, 53, &d), HURRAY_OK);
    return d;
}

// HURRAY_STREAM_REQUIRE_PRODUCER_SYNCED on both ends, and buffers over the
// 1 GiB that read_buffer reads whole.
static void test_limits(const Corpus* c) {
    uint8_t raw[53];
    uint8_t five[5] = {1, 2, 3, 4, 5};
    const void* bufs[1];
    const void* other[MAX_BUFFERS];
    uint64_t sizes[1] = {5};
    HurrayDescriptor* cuda = patched_int8(5, 0x01, 0x01, raw);  // CUDA, event-synced
    HurrayDescriptor* big;
    HurrayDescriptor* d = NULL;
    HurrayWriter* w = NULL;
    HurrayReader* r = NULL;
    HurrayBuffer* buf = (HurrayBuffer*)&g_passed;
    MemSink sink;
    uint8_t stream[53 + 5];
    uint8_t big_raw[53];
    if (cuda == NULL) {
        return;
    }
    bufs[0] = five;
    memset(&sink, 0, sizeof sink);
    CHECK_STATUS(hurray_stream_writer_open_callbacks(mem_write, &sink, HURRAY_STREAM_REQUIRE_PRODUCER_SYNCED, &w),
                 HURRAY_OK);
    CHECK_STATUS(hurray_stream_write_tensor(w, cuda, bufs, sizes, 1), HURRAY_ERR_INVALID_LAYOUT);
    CHECK(strstr(hurray_last_error_message(), "producer-synced") != NULL);
    CHECK_STATUS(hurray_stream_begin_tensor(w, cuda), HURRAY_ERR_INVALID_LAYOUT);
    CHECK(sink.len == 0);  // nothing went out; the writer is still usable
    CHECK_STATUS(hurray_stream_write_tensor(w, c->t[1].desc, buffers_of(&c->t[1], other), c->t[1].sizes, 1),
                 HURRAY_OK);
    CHECK_STATUS(hurray_stream_writer_finish(w), HURRAY_OK);
    hurray_stream_writer_close(w);
    free(sink.bytes);

    // Without the flag it is written, and read unless the reader asks for it.
    memset(&sink, 0, sizeof sink);
    CHECK_STATUS(hurray_stream_writer_open_callbacks(mem_write, &sink, 0, &w), HURRAY_OK);
    CHECK_STATUS(hurray_stream_write_tensor(w, cuda, bufs, sizes, 1), HURRAY_OK);
    CHECK_STATUS(hurray_stream_writer_finish(w), HURRAY_OK);
    hurray_stream_writer_close(w);
    CHECK(sink.len == sizeof stream && memcmp(sink.bytes, raw, 53) == 0);
    if (sink.len == sizeof stream) {
        memcpy(stream, sink.bytes, sizeof stream);
    }
    free(sink.bytes);
    CHECK_STATUS(hurray_stream_open_memory(stream, sizeof stream, 0, &r), HURRAY_OK);
    CHECK_STATUS(hurray_stream_next(r, &d), HURRAY_OK);
    CHECK(d != NULL);
    hurray_descriptor_destroy(d);
    CHECK_STATUS(hurray_stream_read_buffer(r, &buf), HURRAY_OK);
    if (buf != NULL) {
        uint8_t tag = 0;
        void* ptr = NULL;
        CHECK_STATUS(hurray_buffer_device_tag(buf, &tag), HURRAY_OK);
        CHECK(tag == 0x01);  // as declared
        CHECK_STATUS(hurray_buffer_sync_mode(buf, &tag), HURRAY_OK);
        CHECK(tag == 0x01);
        CHECK_STATUS(hurray_buffer_data_ptr(buf, &ptr), HURRAY_OK);
        CHECK(ptr != NULL && memcmp(ptr, five, 5) == 0);
        CHECK_STATUS(hurray_buffer_destroy(buf), HURRAY_OK);
    }
    hurray_stream_close(r);
    CHECK_STATUS(hurray_stream_open_memory(stream, sizeof stream, HURRAY_STREAM_REQUIRE_PRODUCER_SYNCED, &r),
                 HURRAY_OK);
    CHECK_STATUS(hurray_stream_next(r, &d), HURRAY_ERR_INVALID_LAYOUT);
    CHECK(strstr(hurray_last_error_message(), "producer-synced") != NULL);
    hurray_stream_close(r);
    hurray_descriptor_destroy(cuda);

    // A 2 GiB buffer: read_buffer refuses it before reading; read and skip
    // take what there is and then report the cut.
    big = patched_int8(UINT64_C(1) << 31, 0, 0, big_raw);
    if (big == NULL) {
        return;
    }
    memcpy(stream, big_raw, 53);
    memcpy(stream + 53, five, 5);
    CHECK_STATUS(hurray_stream_open_memory(stream, sizeof stream, 0, &r), HURRAY_OK);
    CHECK_STATUS(hurray_stream_next(r, &d), HURRAY_OK);
    hurray_descriptor_destroy(d);
    buf = (HurrayBuffer*)&g_passed;
    CHECK_STATUS(hurray_stream_read_buffer(r, &buf), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(buf == NULL);
    CHECK(strstr(hurray_last_error_message(), "1 GiB") != NULL);
    {
        uint32_t pb = 9;
        uint64_t po = 9;
        uint64_t left = 0;
        CHECK_STATUS(hurray_stream_data_position(r, &pb, &po, &left), HURRAY_OK);
        CHECK(pb == 0 && po == 0 && left == (UINT64_C(1) << 31));  // nothing was read
    }
    CHECK_STATUS(hurray_stream_skip(r), HURRAY_ERR_TRUNCATED);
    hurray_stream_close(r);
    hurray_descriptor_destroy(big);
}

// Failing callbacks and fds: HURRAY_ERR_IO, sticky.
static void test_io_errors(const Corpus* c) {
    size_t len = 0;
    uint8_t* bytes = corpus_stream(c, 0, &len);
    HurrayReader* r = (HurrayReader*)&g_passed;
    HurrayWriter* w = NULL;
    HurrayDescriptor* d = NULL;
    MemSource src;
    MemSink sink;
    const void* bufs[MAX_BUFFERS];
    uint8_t buf[16];
    size_t got = 0;
    char path[4096];
    int fd;
    if (bytes == NULL) {
        CHECK(0);
        return;
    }
    // The read callback fails at once: opening reports it.
    src = mem_source(bytes, len, 64);
    src.fail_at = 0;
    CHECK_STATUS(hurray_stream_open_callbacks(mem_read, &src, 0, &r), HURRAY_ERR_IO);
    CHECK(r == NULL);
    CHECK(strstr(hurray_last_error_message(), "read callback returned -1") != NULL);

    // ... in the middle of a descriptor, and in the middle of data.
    src = mem_source(bytes, len, 64);
    src.fail_at = 20;
    CHECK_STATUS(hurray_stream_open_callbacks(mem_read, &src, 0, &r), HURRAY_OK);
    CHECK_STATUS(hurray_stream_next(r, &d), HURRAY_ERR_IO);
    CHECK(d == NULL);
    CHECK_STATUS(hurray_stream_next(r, &d), HURRAY_ERR_IO);  // sticky, and not called again
    CHECK(src.calls_after_end == 0);
    hurray_stream_close(r);

    // 5 bytes into the first tensor's data (its descriptor_length is at byte 6).
    // Each way of reading data reports it.
    {
        int k;
        for (k = 0; k < 4; ++k) {
            HurrayBuffer* out = (HurrayBuffer*)&g_passed;
            HurrayStatus s;
            src = mem_source(bytes, len, 64);
            src.fail_at = (size_t)bytes[6] + ((size_t)bytes[7] << 8) + 5;
            CHECK_STATUS(hurray_stream_open_callbacks(mem_read, &src, 0, &r), HURRAY_OK);
            s = hurray_stream_next(r, &d);
            CHECK(s == HURRAY_OK);
            if (s == HURRAY_OK) {
                hurray_descriptor_destroy(d);
                switch (k) {
                    case 0:
                        CHECK_STATUS(hurray_stream_read(r, buf, sizeof buf, &got), HURRAY_OK);
                        CHECK(got == 5);
                        s = hurray_stream_read(r, buf, sizeof buf, &got);
                        break;
                    case 1:
                        s = hurray_stream_read_into(r, buf, (size_t)c->t[0].sizes[0]);
                        break;
                    case 2:
                        s = hurray_stream_read_buffer(r, &out);
                        CHECK(out == NULL);
                        break;
                    default:
                        s = hurray_stream_skip(r);
                        break;
                }
            }
            CHECK(s == HURRAY_ERR_IO);
            CHECK_STATUS(hurray_stream_read(r, buf, sizeof buf, &got), HURRAY_ERR_IO);
            CHECK_STATUS(hurray_stream_skip(r), HURRAY_ERR_IO);
            CHECK(strstr(hurray_last_error_message(), "io_error") != NULL);
            hurray_stream_close(r);
        }
    }

    // A read callback that claims more than it was asked for.
    src = mem_source(bytes, len, 64);
    src.overlong = 1;
    r = (HurrayReader*)&g_passed;
    CHECK_STATUS(hurray_stream_open_callbacks(mem_read, &src, 0, &r), HURRAY_ERR_IO);
    CHECK(r == NULL);
    CHECK(strstr(hurray_last_error_message(), "-byte request") != NULL);

    // An fd that cannot be read (opened for writing only).
    join(path, sizeof path, g_tmp_dir, "c_stream_write_only.hrrys");
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    r = (HurrayReader*)&g_passed;
    CHECK_STATUS(hurray_stream_open(fd, 0, &r), HURRAY_ERR_IO);
    CHECK(r == NULL);
    CHECK(close(fd) == 0);

    // A write callback that fails on its second call (the first tensor's data).
    memset(&sink, 0, sizeof sink);
    sink.fail_after = 2;
    CHECK_STATUS(hurray_stream_writer_open_callbacks(mem_write, &sink, 0, &w), HURRAY_OK);
    CHECK_STATUS(hurray_stream_write_tensor(w, c->t[0].desc, buffers_of(&c->t[0], bufs), c->t[0].sizes, 1),
                 HURRAY_ERR_IO);
    CHECK(strstr(hurray_last_error_message(), "write callback returned -5") != NULL);
    CHECK_STATUS(hurray_stream_write_tensor(w, c->t[1].desc, buffers_of(&c->t[1], bufs), c->t[1].sizes, 1),
                 HURRAY_ERR_IO);  // sticky
    CHECK_STATUS(hurray_stream_begin_tensor(w, c->t[1].desc), HURRAY_ERR_IO);
    CHECK_STATUS(hurray_stream_write(w, buf, 1), HURRAY_ERR_IO);
    CHECK_STATUS(hurray_stream_end_tensor(w), HURRAY_ERR_IO);
    CHECK_STATUS(hurray_stream_writer_finish(w), HURRAY_ERR_IO);
    CHECK(sink.calls == 2);  // not called again after failing
    hurray_stream_writer_close(w);
    free(sink.bytes);

    // An fd that cannot be written (opened for reading only).
    fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    CHECK_STATUS(hurray_stream_writer_open(fd, 0, &w), HURRAY_OK);  // nothing written yet
    CHECK_STATUS(hurray_stream_begin_tensor(w, c->t[1].desc), HURRAY_ERR_IO);
    CHECK_STATUS(hurray_stream_writer_finish(w), HURRAY_ERR_IO);
    hurray_stream_writer_close(w);
    CHECK(close(fd) == 0);
    remove(path);
    free(bytes);
}

// Calls out of order, bad flags and bad sizes: HURRAY_ERR_INVALID_ARGUMENT
// (or the composite rule's HURRAY_ERR_INVALID_LAYOUT), with a message.
static void test_misuse(const Corpus* c) {
    size_t len = 0;
    uint8_t* bytes = corpus_stream(c, 0, &len);
    HurrayReader* r = (HurrayReader*)&g_passed;
    HurrayWriter* w = (HurrayWriter*)&g_passed;
    HurrayDescriptor* d = NULL;
    HurrayDescriptor* head = NULL;
    HurrayBuffer* buf = (HurrayBuffer*)&g_passed;
    MemSink sink;
    uint8_t out[64];
    size_t got = 7;
    uint32_t pb = 0;
    uint64_t po = 0;
    uint64_t left = 0;
    const Tensor* f32 = &c->t[2];  // one 48-byte buffer
    const Tensor* csr = &c->t[3];  // buffers of 8, 16, 32 bytes
    const void* bufs[MAX_BUFFERS];
    uint64_t sizes[MAX_BUFFERS];
    char path[4096];
    size_t raw_len = 0;
    uint8_t* raw;
    if (bytes == NULL) {
        CHECK(0);
        return;
    }

    // Flags and fds.
    CHECK_STATUS(hurray_stream_open_memory(bytes, len, 0x1u, &r), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(r == NULL);
    CHECK(strstr(hurray_last_error_message(), "flags") != NULL);
    CHECK_STATUS(hurray_stream_open(0, 0x100u, &r), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hurray_stream_open_callbacks(mem_read, NULL, 0x80000000u, &r), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hurray_stream_open(-1, 0, &r), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(strstr(hurray_last_error_message(), "negative") != NULL);
    CHECK_STATUS(hurray_stream_writer_open(1, HURRAY_STREAM_PERMISSIVE, &w), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(w == NULL);
    CHECK_STATUS(hurray_stream_writer_open(-3, 0, &w), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hurray_stream_writer_open_callbacks(mem_write, NULL, 0x8u, &w), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(w == NULL);

    // Reader: data calls before the first next, and after the end.
    CHECK_STATUS(hurray_stream_open_memory(bytes, len, 0, &r), HURRAY_OK);
    CHECK_STATUS(hurray_stream_read(r, out, sizeof out, &got), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(got == 0);
    CHECK(strstr(hurray_last_error_message(), "hurray_stream_next first") != NULL);
    CHECK_STATUS(hurray_stream_read_into(r, out, 0), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hurray_stream_read_buffer(r, &buf), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(buf == NULL);
    CHECK_STATUS(hurray_stream_skip(r), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hurray_stream_data_position(r, &pb, &po, &left), HURRAY_ERR_INVALID_ARGUMENT);
    // None of that was sticky.
    CHECK_STATUS(hurray_stream_next(r, &d), HURRAY_OK);
    hurray_descriptor_destroy(d);
    CHECK_STATUS(hurray_stream_read(r, out, 0, &got), HURRAY_ERR_INVALID_ARGUMENT);  // capacity 0
    CHECK(strstr(hurray_last_error_message(), "capacity") != NULL);
    CHECK_STATUS(hurray_stream_read_into(r, out, 3), HURRAY_ERR_INVALID_ARGUMENT);  // not the 16 left
    CHECK_STATUS(hurray_stream_data_position(r, &pb, &po, &left), HURRAY_OK);
    CHECK(pb == 0 && po == 0 && left == c->t[0].sizes[0]);  // nothing was read
    CHECK_STATUS(hurray_stream_read_into(r, out, (size_t)left), HURRAY_OK);
    CHECK(memcmp(out, c->t[0].data[0], (size_t)left) == 0);
    // Data all read: read gives 0, read_into takes 0 bytes, read_buffer NULL.
    CHECK_STATUS(hurray_stream_read(r, out, sizeof out, &got), HURRAY_OK);
    CHECK(got == 0);
    CHECK_STATUS(hurray_stream_read_into(r, out, 0), HURRAY_OK);
    CHECK_STATUS(hurray_stream_read_into(r, out, 1), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hurray_stream_read_buffer(r, &buf), HURRAY_OK);
    CHECK(buf == NULL);
    for (;;) {
        CHECK_STATUS(hurray_stream_next(r, &d), HURRAY_OK);
        if (d == NULL) {
            break;
        }
        hurray_descriptor_destroy(d);
    }
    CHECK_STATUS(hurray_stream_read(r, out, sizeof out, &got), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hurray_stream_skip(r), HURRAY_ERR_INVALID_ARGUMENT);
    hurray_stream_close(r);

    // Writer: write_tensor with the wrong buffers.
    memset(&sink, 0, sizeof sink);
    CHECK_STATUS(hurray_stream_writer_open_callbacks(mem_write, &sink, 0, &w), HURRAY_OK);
    bufs[0] = csr->data[0];
    bufs[1] = csr->data[1];
    bufs[2] = csr->data[2];
    sizes[0] = 8;
    sizes[1] = 16;
    sizes[2] = 32;
    CHECK_STATUS(hurray_stream_write_tensor(w, csr->desc, bufs, sizes, 2), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(strstr(hurray_last_error_message(), "2 buffers given, the descriptor declares 3") != NULL);
    sizes[1] = 15;
    CHECK_STATUS(hurray_stream_write_tensor(w, csr->desc, bufs, sizes, 3), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(strstr(hurray_last_error_message(), "buffer 1 has 15 bytes") != NULL);
    sizes[1] = 16;
    bufs[2] = NULL;
    CHECK_NULL_ARG(hurray_stream_write_tensor(w, csr->desc, bufs, sizes, 3));
    CHECK(strstr(hurray_last_error_message(), "buffers[2]") != NULL);
    bufs[2] = csr->data[2];
    CHECK_STATUS(hurray_stream_write_tensor(w, csr->desc, NULL, NULL, 0), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(sink.len == 0);  // nothing went out

    // Chunked: out of order.
    CHECK_STATUS(hurray_stream_write(w, out, 4), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(strstr(hurray_last_error_message(), "outside a tensor") != NULL);
    CHECK_STATUS(hurray_stream_end_tensor(w), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(strstr(hurray_last_error_message(), "without a tensor") != NULL);
    CHECK_STATUS(hurray_stream_begin_tensor(w, f32->desc), HURRAY_OK);
    CHECK_STATUS(hurray_stream_begin_tensor(w, f32->desc), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(strstr(hurray_last_error_message(), "still expects 48") != NULL);
    CHECK_STATUS(hurray_stream_write_tensor(w, c->t[1].desc, buffers_of(&c->t[1], bufs), c->t[1].sizes, 1),
                 HURRAY_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hurray_stream_write(w, f32->data[0], 40), HURRAY_OK);
    CHECK_STATUS(hurray_stream_write(w, f32->data[0] + 40, 9), HURRAY_ERR_INVALID_ARGUMENT);  // one too many
    CHECK(strstr(hurray_last_error_message(), "9 data bytes written where 8 remain") != NULL);
    CHECK_STATUS(hurray_stream_writer_finish(w), HURRAY_ERR_INVALID_ARGUMENT);  // inside a tensor
    CHECK_STATUS(hurray_stream_write(w, f32->data[0] + 40, 8), HURRAY_OK);     // still usable
    CHECK_STATUS(hurray_stream_end_tensor(w), HURRAY_OK);

    // A composite head whose members never come: finish refuses to end there.
    join(path, sizeof path, g_conformance_dir, "descriptors/composite_head_partition.bin");
    raw = read_all(path, &raw_len);
    CHECK(raw != NULL);
    if (raw != NULL) {
        CHECK_STATUS(hurray_descriptor_decode(raw, raw_len, &head), HURRAY_OK);
        CHECK_STATUS(hurray_stream_write_tensor(w, head, NULL, NULL, 0), HURRAY_OK);
        CHECK_STATUS(hurray_stream_writer_finish(w), HURRAY_ERR_INVALID_LAYOUT);
        CHECK(strstr(hurray_last_error_message(), "composite") != NULL);
        hurray_stream_writer_close(w);
        // And a reader of that stream (the head alone) finds it torn.
        r = NULL;
        CHECK(sink.len == f32->raw_len + 48 + raw_len);
        CHECK_STATUS(hurray_stream_open_memory(sink.bytes + f32->raw_len + 48, raw_len, 0, &r), HURRAY_OK);
        CHECK_STATUS(hurray_stream_next(r, &d), HURRAY_OK);
        CHECK(d != NULL);
        if (d != NULL) {
            uint32_t count = 9;
            CHECK_STATUS(hurray_descriptor_buffer_count(d, &count), HURRAY_OK);
            CHECK(count == 0);
            hurray_descriptor_destroy(d);
        }
        // A head has no data.
        CHECK_STATUS(hurray_stream_data_position(r, &pb, &po, &left), HURRAY_OK);
        CHECK(pb == 0 && po == 0 && left == 0);
        CHECK_STATUS(hurray_stream_read_buffer(r, &buf), HURRAY_OK);
        CHECK(buf == NULL);
        CHECK_STATUS(hurray_stream_next(r, &d), HURRAY_ERR_INVALID_LAYOUT);
        CHECK(strstr(hurray_last_error_message(), "composite") != NULL);
        hurray_stream_close(r);
        hurray_descriptor_destroy(head);
        free(raw);
    } else {
        hurray_stream_writer_close(w);
    }
    free(sink.bytes);

    // Ending a tensor with bytes missing fails the writer for good.
    memset(&sink, 0, sizeof sink);
    CHECK_STATUS(hurray_stream_writer_open_callbacks(mem_write, &sink, 0, &w), HURRAY_OK);
    CHECK_STATUS(hurray_stream_begin_tensor(w, f32->desc), HURRAY_OK);
    CHECK_STATUS(hurray_stream_write(w, f32->data[0], 10), HURRAY_OK);
    CHECK_STATUS(hurray_stream_end_tensor(w), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(strstr(hurray_last_error_message(), "38 of its declared data bytes missing") != NULL);
    CHECK_STATUS(hurray_stream_begin_tensor(w, f32->desc), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(strstr(hurray_last_error_message(), "missing") != NULL);
    CHECK_STATUS(hurray_stream_writer_finish(w), HURRAY_ERR_INVALID_ARGUMENT);
    hurray_stream_writer_close(w);
    free(sink.bytes);

    // After finish, only finish and close.
    memset(&sink, 0, sizeof sink);
    CHECK_STATUS(hurray_stream_writer_open_callbacks(mem_write, &sink, 0, &w), HURRAY_OK);
    CHECK_STATUS(hurray_stream_writer_finish(w), HURRAY_OK);  // an empty stream
    CHECK_STATUS(hurray_stream_begin_tensor(w, f32->desc), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK(strstr(hurray_last_error_message(), "finished") != NULL);
    CHECK_STATUS(hurray_stream_write_tensor(w, f32->desc, buffers_of(f32, bufs), f32->sizes, 1),
                 HURRAY_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hurray_stream_write(w, out, 1), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hurray_stream_end_tensor(w), HURRAY_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(hurray_stream_writer_finish(w), HURRAY_OK);
    CHECK(sink.len == 0 && sink.calls == 0);
    hurray_stream_writer_close(w);
    hurray_stream_writer_close(NULL);  // no-ops
    hurray_stream_close(NULL);
    CHECK(1);
    free(bytes);
}

// Every function with each required pointer NULL.
static void test_null_arguments(const Corpus* c) {
    HurrayReader* r = NULL;
    HurrayWriter* w = NULL;
    HurrayReader* out_r = (HurrayReader*)&g_passed;
    HurrayWriter* out_w = (HurrayWriter*)&g_passed;
    HurrayDescriptor* d = (HurrayDescriptor*)&g_passed;
    HurrayBuffer* b = (HurrayBuffer*)&g_passed;
    MemSink sink;
    uint8_t byte = 0;
    uint8_t out[8];
    size_t got = 0;
    uint32_t u32 = 0;
    uint64_t u64 = 0;
    uint64_t size = 1;
    const void* bufs[1];

    bufs[0] = &byte;
    memset(&sink, 0, sizeof sink);
    CHECK_NULL_ARG(hurray_stream_open(0, 0, NULL));
    CHECK_NULL_ARG(hurray_stream_open_callbacks(NULL, NULL, 0, &out_r));
    CHECK(out_r == NULL);
    CHECK_NULL_ARG(hurray_stream_open_callbacks(mem_read, NULL, 0, NULL));
    out_r = (HurrayReader*)&g_passed;
    CHECK_NULL_ARG(hurray_stream_open_memory(NULL, 0, 0, &out_r));
    CHECK(out_r == NULL);
    CHECK_NULL_ARG(hurray_stream_open_memory(&byte, 1, 0, NULL));
    CHECK_NULL_ARG(hurray_stream_writer_open(1, 0, NULL));
    CHECK_NULL_ARG(hurray_stream_writer_open_callbacks(NULL, NULL, 0, &out_w));
    CHECK(out_w == NULL);
    CHECK_NULL_ARG(hurray_stream_writer_open_callbacks(mem_write, NULL, 0, NULL));

    CHECK_STATUS(hurray_stream_open_memory(&byte, 0, 0, &r), HURRAY_OK);
    CHECK_NULL_ARG(hurray_stream_next(NULL, &d));
    CHECK(d == NULL);
    CHECK_NULL_ARG(hurray_stream_next(r, NULL));
    CHECK_NULL_ARG(hurray_stream_data_position(NULL, &u32, &u64, &u64));
    CHECK_NULL_ARG(hurray_stream_data_position(r, NULL, &u64, &u64));
    CHECK_NULL_ARG(hurray_stream_data_position(r, &u32, NULL, &u64));
    CHECK_NULL_ARG(hurray_stream_data_position(r, &u32, &u64, NULL));
    CHECK_NULL_ARG(hurray_stream_read(NULL, out, sizeof out, &got));
    CHECK_NULL_ARG(hurray_stream_read(r, NULL, sizeof out, &got));
    CHECK_NULL_ARG(hurray_stream_read(r, out, sizeof out, NULL));
    CHECK_NULL_ARG(hurray_stream_read_into(NULL, out, 0));
    CHECK_NULL_ARG(hurray_stream_read_into(r, NULL, 0));
    CHECK_NULL_ARG(hurray_stream_read_buffer(NULL, &b));
    CHECK(b == NULL);
    CHECK_NULL_ARG(hurray_stream_read_buffer(r, NULL));
    CHECK_NULL_ARG(hurray_stream_skip(NULL));
    hurray_stream_close(r);

    CHECK_STATUS(hurray_stream_writer_open_callbacks(mem_write, &sink, 0, &w), HURRAY_OK);
    CHECK_NULL_ARG(hurray_stream_write_tensor(NULL, c->t[1].desc, bufs, &size, 1));
    CHECK_NULL_ARG(hurray_stream_write_tensor(w, NULL, bufs, &size, 1));
    CHECK_NULL_ARG(hurray_stream_write_tensor(w, c->t[1].desc, NULL, &size, 1));
    CHECK_NULL_ARG(hurray_stream_write_tensor(w, c->t[1].desc, bufs, NULL, 1));
    CHECK_NULL_ARG(hurray_stream_begin_tensor(NULL, c->t[1].desc));
    CHECK_NULL_ARG(hurray_stream_begin_tensor(w, NULL));
    CHECK_NULL_ARG(hurray_stream_write(NULL, out, 1));
    CHECK_NULL_ARG(hurray_stream_write(w, NULL, 1));
    CHECK_NULL_ARG(hurray_stream_end_tensor(NULL));
    CHECK_NULL_ARG(hurray_stream_writer_finish(NULL));
    CHECK(sink.len == 0);
    CHECK_STATUS(hurray_stream_writer_finish(w), HURRAY_OK);  // nothing of that broke it
    hurray_stream_writer_close(w);
    free(sink.bytes);
}

void stream_tests(void) {
    Corpus c;
    if (!load_corpus(&c)) {
        CHECK(0);
        return;
    }
    test_round_trips(&c);
    test_pipe(&c);
    test_golden(&c);
    test_entry_points(&c);
    test_truncated(&c);
    test_garbage(&c);
    test_limits(&c);
    test_io_errors(&c);
    test_misuse(&c);
    test_null_arguments(&c);
    CHECK(g_empty_calls == 0);
    free_corpus(&c);
}
