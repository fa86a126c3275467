/* SPDX-License-Identifier: Apache-2.0 */
/**
 * @file
 * The C ABI of libhurray (`hurray::c`, library `libhurray_c`).
 *
 * A C99 header, usable from C++ as well. Every function returns a
 * `HurrayStatus` (0 on success, a negative `HURRAY_ERR_*` code otherwise) or
 * is documented as infallible; none throws, aborts or crashes on bad input.
 * A NULL required pointer gives `HURRAY_ERR_NULL_POINTER`. After a failure,
 * `hurray_last_error_message()` describes it.
 *
 * Names, signatures, status values and semantics of the functions that also
 * exist in the reference implementation's `hurray.h` (`pgillet/hurray`,
 * `hurray-ffi`) are the same: descriptors, buffers, buffer lists, sync
 * handoffs, tensor contexts, `hurray_c_abi_version`. This library's own
 * additions: reading files (`hurray_file_*`, `HURRAY_FILE_*`, `HURRAY_KV_*`),
 * writing them (`hurray_file_writer_*`, `hurray_descriptor_new_dense`,
 * `_encode`, `_buffer_size`), streams (`hurray_stream_*`, on the reference's
 * `HurrayReader` and `HurrayWriter` handle names), DLPack export
 * (`hurray_file_tensor_to_dlpack`, `hurray_tensor_to_dlpack`),
 * `hurray_last_error_message`, `hurray_element_type_name`, and the status
 * codes after `HURRAY_ERR_INDEX_OUT_OF_BOUNDS`. Ownership, threading and the
 * error mapping: docs/c-api.md.
 */
#ifndef HURRAY_H
#define HURRAY_H

#include <stddef.h>
#include <stdint.h>

/**
 * Marks a function exported by libhurray_c. The library is built with hidden
 * visibility: only functions carrying this attribute are visible to callers.
 */
#if defined(__GNUC__) || defined(__clang__)
#define HURRAY_C_API __attribute__((visibility("default")))
#else
#define HURRAY_C_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Version of the C ABI this header declares (the reference implementation's
 * numbering). Compare it with `hurray_c_abi_version()` at run time. It is also
 * the SOVERSION of libhurray_c: `libhurray_c.so.4`.
 */
#define HURRAY_C_ABI_VERSION 4

/* ------------------------------------------------------------------------ */
/* Status codes                                                             */
/* ------------------------------------------------------------------------ */

/** Result of every fallible function: `HURRAY_OK` or a negative error code. */
typedef int32_t HurrayStatus;

/** Success. */
#define HURRAY_OK 0
/** Bad magic bytes: not "HRRY" (descriptor) or not "HRRYFILE" (file). */
#define HURRAY_ERR_INVALID_MAGIC -1
/** A descriptor or file version this library does not read. */
#define HURRAY_ERR_VERSION_MISMATCH -2
/** A structural field of a descriptor (layout, shape, sections, sizes) is invalid. */
#define HURRAY_ERR_INVALID_LAYOUT -3
/** An element type tag, device tag or memory class is invalid. */
#define HURRAY_ERR_INVALID_TYPE -4
/** A caller-provided output array is too small (see `hurray_descriptor_shape`). */
#define HURRAY_ERR_BUFFER_TOO_SMALL -5
/** A required pointer argument is NULL. */
#define HURRAY_ERR_NULL_POINTER -6
/** An unexpected exception was caught inside the library; do not reuse the handle. */
#define HURRAY_ERR_INTERNAL_PANIC -7
/** A sync mode byte is not a defined value. */
#define HURRAY_ERR_INVALID_SYNC_MODE -8
/** A sync-mode handoff payload does not match the buffer's sync mode. */
#define HURRAY_ERR_SYNC_MODE_MISMATCH -9
/** An internal error that fits no other code; in builds with handle checks, a handle that is not live. */
#define HURRAY_ERR_INTERNAL -10
/** An index argument is outside its collection. */
#define HURRAY_ERR_INDEX_OUT_OF_BOUNDS -11
/** An operating-system I/O call failed (open, read, map). */
#define HURRAY_ERR_IO -12
/** A named tensor or KV key does not exist. */
#define HURRAY_ERR_NOT_FOUND -13
/** Valid input that this build does not support. */
#define HURRAY_ERR_UNSUPPORTED -14
/** Memory could not be allocated. */
#define HURRAY_ERR_OUT_OF_MEMORY -15
/** The input ends before a field that must be read. */
#define HURRAY_ERR_TRUNCATED -16
/** A container file or its data is invalid (index, checksums, names, KV, data bytes). */
#define HURRAY_ERR_INVALID_FILE -17
/** The input is another Hurray format (a stream or a bare descriptor given to a file entry point). */
#define HURRAY_ERR_WRONG_FORMAT -18
/** An argument has a value that cannot be honoured (unknown flag bits, say). */
#define HURRAY_ERR_INVALID_ARGUMENT -19
/** A KV value has another type than the getter asks for. */
#define HURRAY_ERR_TYPE_MISMATCH -20
/** The caller cancelled the operation (`HurrayConvertOptions::cancellable_progress` returned nonzero). */
#define HURRAY_ERR_CANCELLED -21

/* ------------------------------------------------------------------------ */
/* Opaque handles                                                           */
/* ------------------------------------------------------------------------ */

/** An open HRRYFILE container (`hurray_file_open`, `hurray_file_close`). */
typedef struct HurrayFile HurrayFile;
/** A decoded tensor descriptor, owned by the caller (`hurray_descriptor_destroy`). */
typedef struct HurrayDescriptor HurrayDescriptor;
/** A data buffer with its metadata, owned by the caller (`hurray_buffer_destroy`). */
typedef struct HurrayBuffer HurrayBuffer;

/**
 * An ordered list that owns buffer handles: the buffers of one tensor, in its
 * buffer table order (`hurray_buffer_list_new`, `hurray_buffer_list_destroy`).
 */
typedef struct HurrayBufferList HurrayBufferList;

/**
 * A container being written (`hurray_file_writer_create`,
 * `hurray_file_writer_finish`, `hurray_file_writer_abort`).
 */
typedef struct HurrayFileWriter HurrayFileWriter;

/** A streaming-format reader (`hurray_stream_open`, `hurray_stream_close`). */
typedef struct HurrayReader HurrayReader;

/** A streaming-format writer (`hurray_stream_writer_open`, `hurray_stream_writer_close`). */
typedef struct HurrayWriter HurrayWriter;

/**
 * What a capsule carries besides the data: the producer's C ABI version, the
 * encoded descriptor, and the owner that keeps the memory alive
 * (`hurray_tensor_context_new`, `hurray_tensor_context_destroy`).
 */
typedef struct HurrayTensorContext HurrayTensorContext;

/** DLPack's managed tensor (<dlpack/dlpack.h>); see `hurray_file_tensor_to_dlpack`. */
struct DLManagedTensor;

/**
 * Release callback of a caller-owned buffer (`hurray_buffer_from_ptr`): called
 * exactly once, by `hurray_buffer_destroy`, with the `data` and
 * `release_context` given at creation. It must not call back into this library.
 */
typedef void (*HurrayReleaseCallback)(void* data, void* release_context);

/**
 * Owner release callback of a tensor context (`hurray_tensor_context_new`):
 * called exactly once, by `hurray_tensor_context_destroy`, with the `owner`
 * given at creation. It must not call back into this library.
 */
typedef void (*HurrayOwnerReleaseFn)(void* owner);

/**
 * Release callback of a device event (`HurraySyncEventPayload`), called with
 * the event handle and `event_release_context` by whoever consumes the
 * event. It must not call back into this library.
 */
typedef void (*HurrayEventReleaseFn)(void* sync_handle, void* event_release_context);

/**
 * What a consumer passes to `hurray_buffer_handoff_consumer_stream`: the
 * stream it will use the buffer on. Layout fixed by the reference ABI.
 */
typedef struct HurraySyncConsumerStreamPayload {
    /** The consumer's stream (a `cudaStream_t`, say); must not be NULL. */
    void* consumer_stream;
    /** Device tag (wire byte) of the device the stream belongs to. */
    uint8_t consumer_stream_device_tag;
} HurraySyncConsumerStreamPayload;

/**
 * What a consumer passes to `hurray_buffer_handoff_event`: the event the
 * producer recorded, which the consumer waits on before reading. Layout fixed
 * by the reference ABI.
 */
typedef struct HurraySyncEventPayload {
    /** The event (a `cudaEvent_t`, say); must not be NULL. */
    void* sync_handle;
    /** Device tag (wire byte) of the device the event was recorded on. */
    uint8_t sync_handle_device_tag;
    /** Releases `sync_handle`; must not be NULL. */
    HurrayEventReleaseFn event_release_fn;
    /** Second argument of `event_release_fn`; may be NULL. */
    void* event_release_context;
} HurraySyncEventPayload;

/* ------------------------------------------------------------------------ */
/* Version and errors                                                       */
/* ------------------------------------------------------------------------ */

/** The C ABI version of the loaded library (`HURRAY_C_ABI_VERSION` of its build). Infallible. */
HURRAY_C_API uint32_t hurray_c_abi_version(void);

/**
 * The message of the last failure on the calling thread: the library's full
 * error text (code name, byte offset when known, what is wrong), or "" when no
 * call on this thread has failed. Never NULL. Successful calls leave it as it
 * is. The pointer is valid until the next failing call on the same thread.
 */
HURRAY_C_API const char* hurray_last_error_message(void);

/**
 * @name Library error codes
 * The precise code of a failure (`hurray_last_error_code`): the values of
 * `hurray::ErrorCode`, stable, each named as `hurray_error_code_name` names it
 * and as error messages begin. Several map to one status (docs/c-api.md).
 * @{
 */
/** No failure on this thread yet (`hurray_last_error_code`). */
#define HURRAY_CODE_NONE 0
/** `truncated`: The input ends before a field that must be read. */
#define HURRAY_CODE_TRUNCATED 1
/** `invalid_magic`: The magic bytes are not "HRRY". */
#define HURRAY_CODE_INVALID_MAGIC 2
/** `unsupported_version`: `version_major` is not one this library reads. */
#define HURRAY_CODE_UNSUPPORTED_VERSION 3
/** `invalid_descriptor_length`: `descriptor_length` is too short or disagrees with the fields. */
#define HURRAY_CODE_INVALID_DESCRIPTOR_LENGTH 4
/** `reserved_flag_bits`: A reserved bit of a flags field is set. */
#define HURRAY_CODE_RESERVED_FLAG_BITS 5
/** `reserved_bytes_non_zero`: A reserved byte is not zero. */
#define HURRAY_CODE_RESERVED_BYTES_NON_ZERO 6
/** `invalid_element_type`: Type tag 0x00/0xFF, or a type not allowed in this position. */
#define HURRAY_CODE_INVALID_ELEMENT_TYPE 7
/** `unknown_element_type`: Type tag reserved or unassigned (strict mode). */
#define HURRAY_CODE_UNKNOWN_ELEMENT_TYPE 8
/** `invalid_extension_type`: Extension type section violates its rules or its flag. */
#define HURRAY_CODE_INVALID_EXTENSION_TYPE 9
/** `rank_too_large`: `rank` exceeds 64. */
#define HURRAY_CODE_RANK_TOO_LARGE 10
/** `invalid_shape`: A dimension is not allowed here (e.g. dynamic). */
#define HURRAY_CODE_INVALID_SHAPE 11
/** `size_overflow`: A size computation overflows 64 bits. */
#define HURRAY_CODE_SIZE_OVERFLOW 12
/** `invalid_layout_tag`: Layout tag 0x00 or 0xFF. */
#define HURRAY_CODE_INVALID_LAYOUT_TAG 13
/** `unknown_layout_tag`: Layout tag reserved or unassigned. */
#define HURRAY_CODE_UNKNOWN_LAYOUT_TAG 14
/** `unsupported_extension_layout`: Private layout whose id the reader does not know. */
#define HURRAY_CODE_UNSUPPORTED_EXTENSION_LAYOUT 15
/** `invalid_layout`: A layout-specific field violates its rule. */
#define HURRAY_CODE_INVALID_LAYOUT 16
/** `rank_not_allowed`: The rank is not allowed for this layout. */
#define HURRAY_CODE_RANK_NOT_ALLOWED 17
/** `nesting_too_deep`: Recursive tiling or composite nesting too deep. */
#define HURRAY_CODE_NESTING_TOO_DEEP 18
/** `invalid_buffer_count`: `buffer_count` disagrees with layout and quantization. */
#define HURRAY_CODE_INVALID_BUFFER_COUNT 19
/** `invalid_buffer_handle`: A buffer handle field is invalid. */
#define HURRAY_CODE_INVALID_BUFFER_HANDLE 20
/** `device_mismatch`: Buffers of one tensor on different devices/classes. */
#define HURRAY_CODE_DEVICE_MISMATCH 21
/** `buffer_too_small`: A declared buffer cannot hold what the shape requires. */
#define HURRAY_CODE_BUFFER_TOO_SMALL 22
/** `byte_offset_out_of_range`: `byte_offset` is not allowed or exceeds buffer 0. */
#define HURRAY_CODE_BYTE_OFFSET_OUT_OF_RANGE 23
/** `invalid_quantization`: A quantization field violates its rule. */
#define HURRAY_CODE_INVALID_QUANTIZATION 24
/** `unknown_quantization_scheme`: Scheme tag reserved, unassigned or private (strict). */
#define HURRAY_CODE_UNKNOWN_QUANTIZATION_SCHEME 25
/** `unsupported_quantization_version`: `scheme_version` newer than supported. */
#define HURRAY_CODE_UNSUPPORTED_QUANTIZATION_VERSION 26
/** `invalid_quantization_storage_type`: The storage type is not allowed by the scheme. */
#define HURRAY_CODE_INVALID_QUANTIZATION_STORAGE_TYPE 27
/** `invalid_quantization_buffer`: A parameter buffer index or size is wrong. */
#define HURRAY_CODE_INVALID_QUANTIZATION_BUFFER 28
/** `invalid_shard`: Shard section violates its bounds. */
#define HURRAY_CODE_INVALID_SHARD 29
/** `invalid_statistics`: Statistics section violates its rules. */
#define HURRAY_CODE_INVALID_STATISTICS 30
/** `invalid_composite`: Composite head or member section violates its rules. */
#define HURRAY_CODE_INVALID_COMPOSITE 31
/** `invalid_argument`: A caller passed an argument that cannot be honoured. */
#define HURRAY_CODE_INVALID_ARGUMENT 32
/** `io_error`: An operating-system I/O call failed. */
#define HURRAY_CODE_IO_ERROR 33
/** `invalid_file`: A container file is structurally invalid. */
#define HURRAY_CODE_INVALID_FILE 34
/** `checksum_mismatch`: A stored checksum does not match. */
#define HURRAY_CODE_CHECKSUM_MISMATCH 35
/** `not_found`: A named item does not exist. */
#define HURRAY_CODE_NOT_FOUND 36
/** `invalid_data`: Data bytes violate an invariant (sparse indices...). */
#define HURRAY_CODE_INVALID_DATA 37
/** `unsupported`: Valid, but not supported by this build. */
#define HURRAY_CODE_UNSUPPORTED 38
/** `invalid_document`: A JSON or CBOR document is malformed or does not match its schema. */
#define HURRAY_CODE_INVALID_DOCUMENT 39
/** `duplicate_name`: A tensor name or KV key appears twice. */
#define HURRAY_CODE_DUPLICATE_NAME 40
/** `size_mismatch`: Bytes given or stored disagree with the declared size. */
#define HURRAY_CODE_SIZE_MISMATCH 41
/** `invalid_name`: A tensor name or KV key is empty, too long or not UTF-8. */
#define HURRAY_CODE_INVALID_NAME 42
/** `overlap`: Two regions of a container overlap. */
#define HURRAY_CODE_OVERLAP 43
/** `type_mismatch`: A value has another type than the one asked for. */
#define HURRAY_CODE_TYPE_MISMATCH 44
/** `out_of_memory`: Memory for a result could not be allocated. */
#define HURRAY_CODE_OUT_OF_MEMORY 45
/** `cancelled`: The caller cancelled the operation (a progress callback). */
#define HURRAY_CODE_CANCELLED 46
/** A failure of the C layer itself that no library code describes (`HURRAY_ERR_INTERNAL`, `HURRAY_ERR_INTERNAL_PANIC`). */
#define HURRAY_CODE_INTERNAL -1
/** `hurray_last_error_offset` when no byte offset applies. */
#define HURRAY_NO_OFFSET UINT64_MAX
/** @} */

/**
 * The precise code (`HURRAY_CODE_*`) of the last failure on the calling
 * thread, `HURRAY_CODE_NONE` when no call on this thread has failed. The
 * status a call returns is coarser (23 codes give `HURRAY_ERR_INVALID_LAYOUT`):
 * this tells them apart without reading the message. A failure the C layer
 * detects itself gives the code of its class (a NULL argument, an index past
 * the end or a caller's array too small: `HURRAY_CODE_INVALID_ARGUMENT`).
 * Successful calls leave it as it is.
 *
 * @code
 * if (hurray_file_open(path, 0, &file) != HURRAY_OK &&
 *     hurray_last_error_code() == HURRAY_CODE_CHECKSUM_MISMATCH) { ... }
 * @endcode
 */
HURRAY_C_API int32_t hurray_last_error_code(void);

/**
 * The byte offset of the last failure on the calling thread (in the file,
 * stream or descriptor being read: the field that is wrong), or
 * `HURRAY_NO_OFFSET` when none applies or no call has failed.
 */
HURRAY_C_API uint64_t hurray_last_error_offset(void);

/**
 * The file or URL of the last failure on the calling thread, as the library
 * names it, or "" when it names none (or no call has failed). Never NULL;
 * valid until the next failing call on this thread.
 */
HURRAY_C_API const char* hurray_last_error_file(void);

/**
 * The name of the tensor of the last failure on the calling thread, or ""
 * when the failure is in no tensor (or no call has failed). Never NULL; valid
 * until the next failing call on this thread.
 */
HURRAY_C_API const char* hurray_last_error_tensor(void);

/**
 * The name of a `HURRAY_CODE_*` value ("truncated", "checksum_mismatch", ...;
 * "none" for 0, "internal" for `HURRAY_CODE_INTERNAL`, "unknown" for any other
 * value). Infallible; a static string.
 */
HURRAY_C_API const char* hurray_error_code_name(int32_t code);

/* ------------------------------------------------------------------------ */
/* Files (read side)                                                        */
/* ------------------------------------------------------------------------ */

/** `hurray_file_open` flag: read with pread into memory instead of mapping the file. */
#define HURRAY_FILE_NO_MMAP 0x1u
/**
 * `hurray_file_open` flag: permissive reading (the relaxations of docs/file.md
 * and docs/descriptor.md) instead of the default strict checks.
 */
#define HURRAY_FILE_PERMISSIVE 0x2u
/**
 * `hurray_file_open` flag: read by the Hurray specification alone, as another
 * implementation does. Without it, libhurray's own private quantization schemes
 * (GGML blocks, tag 0xF0, which files converted from GGUF hold) are understood:
 * validated, listed and dequantized. With it, a strict reader refuses such a
 * tensor as a private scheme it does not know (`HURRAY_ERR_UNSUPPORTED`), when
 * its descriptor is first decoded (the open itself decodes none).
 */
#define HURRAY_FILE_SPEC_ONLY 0x8u

/**
 * Opens and validates the HRRYFILE container at `path` (NUL-terminated).
 * `flags`: 0 (strict, memory-mapped) or an OR of `HURRAY_FILE_*`; other bits
 * give `HURRAY_ERR_INVALID_ARGUMENT`. On success `*out` is a new handle that
 * the caller releases with `hurray_file_close`; on failure `*out` is set to NULL.
 * A stream or a bare descriptor gives `HURRAY_ERR_WRONG_FORMAT`, other
 * non-container input `HURRAY_ERR_INVALID_MAGIC` or `HURRAY_ERR_TRUNCATED`;
 * the message says what the input looks like.
 */
HURRAY_C_API HurrayStatus hurray_file_open(const char* path, uint32_t flags, HurrayFile** out);

/**
 * Validates an HRRYFILE container held in memory (`len` bytes at `bytes`),
 * without copying it. The caller keeps the bytes alive and unchanged until the
 * file and every buffer obtained from it are released. `flags` as for
 * `hurray_file_open` (`HURRAY_FILE_NO_MMAP` has no effect here).
 */
HURRAY_C_API HurrayStatus hurray_file_open_memory(const uint8_t* bytes, size_t len, uint32_t flags,
                                                  HurrayFile** out);

/**
 * Opens and validates the HRRYFILE at `url` (an NUL-terminated `http://` or
 * `https://` URL: a web server, a CDN, an S3-compatible store) with HTTP range
 * requests: its trailer, then its header, index and KV section at open, each
 * tensor's bytes when first read, kept while the file is open. `headers` holds
 * `header_count` extra request headers (NUL-terminated `"Name: value"` lines,
 * e.g. an `Authorization`; NULL when `header_count` is 0). `flags` as for
 * `hurray_file_open` (`HURRAY_FILE_NO_MMAP` has no effect here). A bad URL or
 * header is `HURRAY_ERR_INVALID_ARGUMENT`; an unreachable server, an HTTP
 * error or a file replaced on the server while it is read is
 * `HURRAY_ERR_IO`, whose message (and `hurray_last_error_file()`) names the
 * URL without credentials or query string. `HURRAY_ERR_UNSUPPORTED` in a
 * build without HTTP support. Release with `hurray_file_close`.
 */
HURRAY_C_API HurrayStatus hurray_file_open_url(const char* url, const char* const* headers, size_t header_count,
                                               uint32_t flags, HurrayFile** out);

/**
 * Progress callback that can cancel (a conversion, a download): called with
 * `context`, the bytes done and the total (0 when unknown), returning 0 to go
 * on and nonzero to cancel. A cancelled conversion returns
 * `HURRAY_ERR_CANCELLED` (`HURRAY_CODE_CANCELLED`) and leaves no output (an
 * existing file keeps its content). See `hurray_convert_file_cancellable`.
 */
typedef int (*HurrayCancellableProgressFn)(void* context, uint64_t done_bytes, uint64_t total_bytes);

/**
 * How `hurray_file_open_url_ex` talks to the server. Fill it with
 * `hurray_url_options_init`, which sets `struct_size` and the defaults, then
 * change fields: a later version of this header may append fields, and the
 * library reads only the first `struct_size` bytes (the fields after them keep
 * their defaults). Strings are NUL-terminated and only read during the call.
 */
typedef struct HurrayUrlOptions {
    /** `sizeof(HurrayUrlOptions)` as this header declares it (set by `hurray_url_options_init`). */
    uint32_t struct_size;
    /** Retries of a request that failed in a way worth repeating (5xx, connection, stall); default 3, at most 10. */
    uint32_t max_retries;
    /** Longest wait for a connection, in milliseconds; default 10000. */
    uint32_t connect_timeout_ms;
    /** Longest time without a body byte received, in milliseconds (checked about once a second); default 30000. */
    uint32_t idle_timeout_ms;
    /** Longest time one request may take, its retries included, in milliseconds; default 0: no limit. */
    uint32_t deadline_ms;
    /** Connections used at once by a large read; default 4, clamped to [1, 16]. */
    uint32_t parallel;
    /** Extra request headers, `"Name: value"` each (`header_count` of them; NULL when 0). Never in messages. */
    const char* const* headers;
    /** Number of `headers`. */
    size_t header_count;
    /**
     * AWS Signature Version 4 credentials (S3 and S3-compatible stores): an
     * access key ID and a secret access key, both or neither. NULL (default):
     * unsigned requests, except for `s3://` URLs, which take the environment's
     * (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`,
     * `AWS_REGION`) when it has some. The secret is never sent or shown.
     */
    const char* aws_access_key_id;
    /** The secret access key (with `aws_access_key_id`). */
    const char* aws_secret_access_key;
    /** The session token of temporary credentials; NULL or "" for none. */
    const char* aws_session_token;
    /** The signing region; NULL: `AWS_REGION`, else `AWS_DEFAULT_REGION`, else `us-east-1`. */
    const char* aws_region;
    /** Where `s3://` URLs go (`http://127.0.0.1:9000`); NULL: `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL`, else AWS. */
    const char* s3_endpoint;
    /**
     * Called during transfers with the body bytes received so far (`total` is
     * 0: unknown); returning nonzero cancels: the call fails with
     * `HURRAY_ERR_CANCELLED`, not retried. NULL (default): none. Called on
     * the thread of the call, and may be called from several at once.
     */
    HurrayCancellableProgressFn progress;
    /** First argument of `progress`; may be NULL. */
    void* progress_context;
} HurrayUrlOptions;

/**
 * Sets `*options` to the defaults (3 retries, 10 s to connect, 30 s idle, no
 * deadline, 4 connections, no headers, no credentials: the environment's for
 * `s3://`, no progress) and `options->struct_size` to `sizeof(HurrayUrlOptions)`.
 */
HURRAY_C_API HurrayStatus hurray_url_options_init(HurrayUrlOptions* options);

/**
 * As `hurray_file_open_url`, with `options` (NULL: the defaults), for
 * `http://`, `https://` and `s3://bucket/key` URLs. A bad option
 * (`struct_size` other than this library's, a key without a secret, a region
 * that is not letters, digits and '-') is `HURRAY_ERR_INVALID_ARGUMENT`; a
 * refused request is `HURRAY_ERR_IO` whose message quotes the store's error
 * code (`HTTP status 403 ... (SignatureDoesNotMatch: ...)`) and never the
 * secret; a cancellation from `progress` is `HURRAY_ERR_CANCELLED`.
 * @code
 * HurrayUrlOptions opt;
 * hurray_url_options_init(&opt);
 * opt.s3_endpoint = "http://127.0.0.1:9000";
 * opt.aws_access_key_id = key_id;
 * opt.aws_secret_access_key = secret;
 * HurrayFile* file = NULL;
 * if (hurray_file_open_url_ex("s3://models/q4.hrry", &opt, 0, &file) != HURRAY_OK) {
 *     fprintf(stderr, "%s\n", hurray_last_error_message());
 * }
 * @endcode
 */
HURRAY_C_API HurrayStatus hurray_file_open_url_ex(const char* url, const HurrayUrlOptions* options, uint32_t flags,
                                                  HurrayFile** out);

/**
 * Releases a file handle (NULL is a no-op). Buffers obtained from it stay
 * valid: each keeps the file's memory alive until it is destroyed.
 */
HURRAY_C_API void hurray_file_close(HurrayFile* file);

/** Number of tensors in the file. */
HURRAY_C_API HurrayStatus hurray_file_tensor_count(const HurrayFile* file, uint64_t* out);

/**
 * Name of tensor `index` (index order): `*name` points to `*len` bytes of UTF-8,
 * followed by a NUL (the name itself may contain NULs: trust `*len`). Valid
 * while the file is open. `HURRAY_ERR_INDEX_OUT_OF_BOUNDS` past the last tensor.
 */
HURRAY_C_API HurrayStatus hurray_file_tensor_name(const HurrayFile* file, uint64_t index, const char** name,
                                                  size_t* len);

/**
 * Index of the tensor named by the `name_len` bytes at `name` (no NUL needed),
 * or `HURRAY_ERR_NOT_FOUND`.
 */
HURRAY_C_API HurrayStatus hurray_file_find(const HurrayFile* file, const char* name, size_t name_len,
                                           uint64_t* index);

/**
 * The descriptor of tensor `index`, decoded and checked: a new handle, owned
 * by the caller (`hurray_descriptor_destroy`), independent of the file.
 */
HURRAY_C_API HurrayStatus hurray_file_tensor_descriptor(const HurrayFile* file, uint64_t index,
                                                        HurrayDescriptor** out);

/**
 * The encoded descriptor of tensor `index`, byte for byte as the file stores
 * it, copied into `out` (`capacity` bytes); `*out_len` is set to its size.
 * With `out` NULL or `capacity` too small: `HURRAY_ERR_BUFFER_TOO_SMALL`,
 * nothing copied, `*out_len` the size needed. Feeds
 * `hurray_tensor_context_new` or `hurray_descriptor_decode`.
 */
HURRAY_C_API HurrayStatus hurray_file_tensor_descriptor_bytes(const HurrayFile* file, uint64_t index,
                                                              uint8_t* out, size_t capacity, size_t* out_len);

/**
 * All the data buffers of tensor `index`, in buffer table order, as a new list
 * owned by the caller (`hurray_buffer_list_destroy`); zero-copy, each buffer
 * keeps the file's memory alive, as `hurray_file_tensor_buffer` does.
 * @code
 * HurrayBufferList* buffers = NULL;
 * if (hurray_file_tensor_buffers(file, i, &buffers) == HURRAY_OK) {
 *     uint64_t n = 0;
 *     hurray_buffer_list_len(buffers, &n);
 *     hurray_buffer_list_destroy(&buffers);
 * }
 * @endcode
 */
HURRAY_C_API HurrayStatus hurray_file_tensor_buffers(const HurrayFile* file, uint64_t index,
                                                     HurrayBufferList** out);

/**
 * Every logical element of tensor `index` as float32, row-major, copied into
 * `out` (room for `capacity` floats), for any tensor: converted from its
 * element type, dequantized, densified from any layout (strided, tiled,
 * sparse, ...), a composite assembled from its members. `*out_count` is set
 * to the element count; when `capacity` is below it (or `out` is NULL for a
 * non-empty tensor) the result is `HURRAY_ERR_BUFFER_TOO_SMALL` and nothing is
 * converted.
 * @code
 * uint64_t n = 0;
 * hurray_file_tensor_to_float32(file, i, NULL, 0, &n);  // HURRAY_ERR_BUFFER_TOO_SMALL, n set
 * float* values = malloc((n ? n : 1) * sizeof *values);
 * if (hurray_file_tensor_to_float32(file, i, values, n, &n) == HURRAY_OK) { ... }
 * @endcode
 */
HURRAY_C_API HurrayStatus hurray_file_tensor_to_float32(const HurrayFile* file, uint64_t index, float* out,
                                                        uint64_t capacity, uint64_t* out_count);

/**
 * Buffer `buffer` of tensor `index` (its descriptor's buffer table order):
 * a new handle, owned by the caller (`hurray_buffer_destroy`), pointing into
 * the file without a copy. It keeps the file's memory alive, so it stays valid
 * after `hurray_file_close`. The bytes are read-only: never write through
 * `hurray_buffer_data_ptr`. `HURRAY_ERR_INDEX_OUT_OF_BOUNDS` for a tensor or
 * buffer index out of range (a composite head has no buffers).
 */
HURRAY_C_API HurrayStatus hurray_file_tensor_buffer(const HurrayFile* file, uint64_t index, uint32_t buffer,
                                                    HurrayBuffer** out);

/* ------------------------------------------------------------------------ */
/* DLPack                                                                   */
/* ------------------------------------------------------------------------ */

/*
 * A tensor handed to a DLPack consumer (PyTorch, NumPy, JAX, CuPy...) without
 * a copy. The caller includes <dlpack/dlpack.h> (DLPack 0.6 or later) itself;
 * this header only declares `struct DLManagedTensor`. Exported: dense tensors
 * (row-major, column-major or strided layout), unquantized, on the CPU, of a
 * type DLPack 0.6 has: float16/32/64, bfloat16, int8..int64, uint8..uint64,
 * complex64/128. The DLTensor filled in: `data` is the first byte of the data
 * buffer and `byte_offset` the descriptor's byte_offset (element [0,...,0] is
 * at `data + byte_offset`; negative strides reach below it, never below
 * `data`); `device` {kDLCPU, 0}; `shape` the descriptor's; `strides` in
 * elements, always filled (never NULL, also for a compact row-major tensor;
 * negative and zero strides as the descriptor has them); `dtype` with one lane.
 * The bytes are read-only (a file is mapped read-only): a consumer must not
 * write to them, which DLPack 0.6 cannot express. Each DLManagedTensor is
 * released by calling its `deleter` exactly once (DLPack's contract).
 */

/**
 * Exports tensor `index` of `file` as a new DLPack managed tensor pointing
 * into the file without a copy. `*out` holds a share of the file's memory (as
 * a buffer from `hurray_file_tensor_buffer` does): it stays valid after
 * `hurray_file_close`, until `(*out)->deleter(*out)`, which the caller (or the
 * consumer it hands the tensor to) calls exactly once. On failure `*out` is
 * set to NULL (when `out` is not NULL). `HURRAY_ERR_INDEX_OUT_OF_BOUNDS` past
 * the last tensor; `HURRAY_ERR_UNSUPPORTED`, with a message saying why, for a
 * tensor DLPack cannot describe: a composite head, a quantized tensor, a
 * sub-byte, bool, float8, float128 or private element type, a layout other
 * than row-major, column-major or strided, data not on the CPU (or CPU peer
 * memory).
 */
HURRAY_C_API HurrayStatus hurray_file_tensor_to_dlpack(const HurrayFile* file, uint64_t index,
                                                       struct DLManagedTensor** out);

/**
 * Exports the tensor that `descriptor` describes, whose data buffer is
 * `buffer` (a buffer from `hurray_buffer_from_ptr`, `hurray_file_tensor_buffer`
 * or a stream), as a new DLPack managed tensor, without a copy.
 * `descriptor` is only read: the caller still destroys it. On success
 * `buffer` is consumed: the managed tensor owns it and its deleter destroys
 * it (calling its release callback once, for caller memory); the caller must
 * no longer use or destroy it (never pass a buffer borrowed from a
 * `HurrayBufferList`). On failure nothing is consumed: the caller keeps the
 * buffer and `*out` is set to NULL. The same tensors are exported as by
 * `hurray_file_tensor_to_dlpack` (`HURRAY_ERR_UNSUPPORTED` otherwise, also
 * when the buffer itself is not on the CPU); `HURRAY_ERR_INVALID_ARGUMENT`
 * when the buffer holds fewer bytes than the descriptor's buffer 0 declares.
 */
HURRAY_C_API HurrayStatus hurray_tensor_to_dlpack(const HurrayDescriptor* descriptor, HurrayBuffer* buffer,
                                                  struct DLManagedTensor** out);

/* KV metadata of a file. Value type tags (the file format's wire tags). */

/** KV value type tag: UTF-8 string. */
#define HURRAY_KV_STRING 0x01
/** KV value type tag: signed 64-bit integer. */
#define HURRAY_KV_INT64 0x02
/** KV value type tag: unsigned 64-bit integer. */
#define HURRAY_KV_UINT64 0x03
/** KV value type tag: IEEE 754 binary64. */
#define HURRAY_KV_FLOAT64 0x04
/** KV value type tag: boolean. */
#define HURRAY_KV_BOOL 0x05
/** KV value type tag: opaque bytes. */
#define HURRAY_KV_BYTES 0x06
/** KV value type tag: homogeneous array. */
#define HURRAY_KV_ARRAY 0x07

/** Number of KV entries of the file (0 when it has none). */
HURRAY_C_API HurrayStatus hurray_file_kv_count(const HurrayFile* file, uint64_t* out);

/**
 * Key of KV entry `index` (file order): `*key` points to `*len` bytes of UTF-8
 * followed by a NUL, valid while the file is open.
 */
HURRAY_C_API HurrayStatus hurray_file_kv_key(const HurrayFile* file, uint64_t index, const char** key,
                                             size_t* len);

/**
 * Type tag (`HURRAY_KV_*`, or a private tag 0xF0-0xFE) of the value of the key
 * given as `key_len` bytes at `key`; `HURRAY_ERR_NOT_FOUND` when absent.
 */
HURRAY_C_API HurrayStatus hurray_file_kv_type(const HurrayFile* file, const char* key, size_t key_len,
                                              uint8_t* type);

/**
 * String value of a key: `*value` points to `*len` bytes of UTF-8 followed by a
 * NUL, valid while the file is open. `HURRAY_ERR_NOT_FOUND` when the key is
 * absent, `HURRAY_ERR_TYPE_MISMATCH` when the value is not a string.
 */
HURRAY_C_API HurrayStatus hurray_file_kv_get_string(const HurrayFile* file, const char* key, size_t key_len,
                                                    const char** value, size_t* len);

/** int64 value of a key (errors as `hurray_file_kv_get_string`). */
HURRAY_C_API HurrayStatus hurray_file_kv_get_int64(const HurrayFile* file, const char* key, size_t key_len,
                                                   int64_t* value);

/** uint64 value of a key (errors as `hurray_file_kv_get_string`). */
HURRAY_C_API HurrayStatus hurray_file_kv_get_uint64(const HurrayFile* file, const char* key, size_t key_len,
                                                    uint64_t* value);

/** float64 value of a key (errors as `hurray_file_kv_get_string`). */
HURRAY_C_API HurrayStatus hurray_file_kv_get_float64(const HurrayFile* file, const char* key, size_t key_len,
                                                     double* value);

/** bool value of a key, as 0 or 1 (errors as `hurray_file_kv_get_string`). */
HURRAY_C_API HurrayStatus hurray_file_kv_get_bool(const HurrayFile* file, const char* key, size_t key_len,
                                                  uint8_t* value);

/**
 * Bytes value of a key: `*value` points to `*len` bytes, valid while the file
 * is open (never NULL; not to be read when `*len` is 0). Errors as
 * `hurray_file_kv_get_string`.
 */
HURRAY_C_API HurrayStatus hurray_file_kv_get_bytes(const HurrayFile* file, const char* key, size_t key_len,
                                                   const uint8_t** value, size_t* len);

/**
 * Element type (`HURRAY_KV_STRING` .. `HURRAY_KV_BYTES`) and number of
 * elements of the array value of a key. `HURRAY_ERR_NOT_FOUND` when the key is
 * absent, `HURRAY_ERR_TYPE_MISMATCH` when the value is not an array.
 */
HURRAY_C_API HurrayStatus hurray_file_kv_get_array_info(const HurrayFile* file, const char* key, size_t key_len,
                                                        uint8_t* element_type, size_t* count);

/**
 * Elements of an int64 array: `*values` points to `*count` elements owned by
 * the file, valid while it is open (never NULL; not to be read when `*count`
 * is 0). `HURRAY_ERR_NOT_FOUND` when the key is absent,
 * `HURRAY_ERR_TYPE_MISMATCH` when the value is not an array or an array of
 * another element type.
 */
HURRAY_C_API HurrayStatus hurray_file_kv_get_int64_array(const HurrayFile* file, const char* key, size_t key_len,
                                                         const int64_t** values, size_t* count);

/** Elements of a uint64 array (as `hurray_file_kv_get_int64_array`). */
HURRAY_C_API HurrayStatus hurray_file_kv_get_uint64_array(const HurrayFile* file, const char* key, size_t key_len,
                                                          const uint64_t** values, size_t* count);

/** Elements of a float64 array (as `hurray_file_kv_get_int64_array`). */
HURRAY_C_API HurrayStatus hurray_file_kv_get_float64_array(const HurrayFile* file, const char* key, size_t key_len,
                                                           const double** values, size_t* count);

/**
 * Elements of a bool array, copied as bytes 0 or 1 (the file does not hold
 * them as bytes). On entry `*count` is the number of bytes `out` can hold
 * (ignored when `out` is NULL, which holds none); on return it is the array's
 * length. When the array is longer than that, the result is
 * `HURRAY_ERR_BUFFER_TOO_SMALL` and nothing is written: allocate `*count`
 * bytes and call again. Other errors as `hurray_file_kv_get_int64_array`.
 */
HURRAY_C_API HurrayStatus hurray_file_kv_get_bool_array(const HurrayFile* file, const char* key, size_t key_len,
                                                        uint8_t* out, size_t* count);

/**
 * Element `index` of a string array: `*value` points to `*len` bytes of UTF-8
 * followed by a NUL, valid while the file is open. `HURRAY_ERR_INDEX_OUT_OF_BOUNDS`
 * past the last element (`hurray_file_kv_get_array_info` gives the count); other
 * errors as `hurray_file_kv_get_int64_array`.
 */
HURRAY_C_API HurrayStatus hurray_file_kv_get_string_array_element(const HurrayFile* file, const char* key,
                                                                  size_t key_len, size_t index, const char** value,
                                                                  size_t* len);

/**
 * Element `index` of a bytes array: `*value` points to `*len` bytes, valid
 * while the file is open (never NULL; not to be read when `*len` is 0).
 * Errors as `hurray_file_kv_get_string_array_element`.
 */
HURRAY_C_API HurrayStatus hurray_file_kv_get_bytes_array_element(const HurrayFile* file, const char* key,
                                                                 size_t key_len, size_t index, const uint8_t** value,
                                                                 size_t* len);

/* ------------------------------------------------------------------------ */
/* Writing files                                                            */
/* ------------------------------------------------------------------------ */

/**
 * A plain dense row-major descriptor, as the C++ builder (`make_dense`) makes
 * it: element type `element_type_tag` (a built-in type, e.g. 0x03 float32),
 * `rank` dimensions read from `dims` (which may be NULL when `rank` is 0: a
 * scalar), byte offset 0 and one CPU buffer of exactly the size the shape
 * needs, 64-byte aligned. On success `*out` is a new handle released with
 * `hurray_descriptor_destroy`; on failure `*out` is set to NULL.
 * `HURRAY_ERR_INVALID_TYPE` for a tag that is not a built-in element type
 * (reserved or private), `HURRAY_ERR_INVALID_LAYOUT` for a rank above 64 or
 * a byte size that overflows 64 bits.
 */
HURRAY_C_API HurrayStatus hurray_descriptor_new_dense(uint8_t element_type_tag, uint32_t rank, const uint64_t* dims,
                                                      HurrayDescriptor** out);

/**
 * The wire bytes of a descriptor (what `hurray_descriptor_decode` reads). It is
 * checked strictly first; an invalid one gives that check's status. On success
 * `*out_len` bytes are written to `out`. When `out` is NULL or `capacity` is
 * smaller than the encoding, the result is `HURRAY_ERR_BUFFER_TOO_SMALL`,
 * nothing is written and `*out_len` is set to the size needed: allocate it and
 * call again. Otherwise `*out_len` is left as it was on failure.
 */
HURRAY_C_API HurrayStatus hurray_descriptor_encode(const HurrayDescriptor* handle, uint8_t* out, size_t capacity,
                                                   size_t* out_len);

/**
 * The byte size of buffer `buffer` in the descriptor's buffer table: exactly
 * the number of bytes a writer must be given for it
 * (`hurray_file_writer_add_tensor`). `HURRAY_ERR_INDEX_OUT_OF_BOUNDS` past the
 * last buffer (a composite head has none).
 */
HURRAY_C_API HurrayStatus hurray_descriptor_buffer_size(const HurrayDescriptor* handle, uint32_t buffer,
                                                        uint64_t* out);

/**
 * `hurray_file_writer_create*` flag: sort the index by the raw bytes of the
 * tensor names and mark it sorted (`SORTED_INDEX`), so that readers can
 * binary-search it. By default the index is in write order.
 */
#define HURRAY_FILE_WRITER_SORTED_INDEX 0x1u

/**
 * `hurray_file_writer_create` flag: replace `path` atomically but not
 * durably. `hurray_file_writer_finish` then skips both fsyncs and only
 * replaces the file (a rename; over an existing regular file, an exchange
 * of the two names and an unlink of the old file, which spares ext4's flush
 * of a file renamed over another): other processes still see the old file
 * or the complete new one, never a mix, and the save costs what writing the
 * bytes costs; but a power loss or kernel crash soon after may leave `path`
 * with its old content, or empty or partly written. Without it (the default) finish fsyncs the file
 * and its directory. Ignored by `hurray_file_writer_create_fd` (which never
 * fsyncs). Libraries from before this flag reject the bit with
 * `HURRAY_ERR_INVALID_ARGUMENT`, so asking for it is never silently ignored.
 */
#define HURRAY_FILE_WRITER_NO_FSYNC 0x2u

/**
 * `hurray_file_writer_create*` flag: write no descriptor table. By default the
 * writer also stores a copy of every descriptor, in index order, in the KV
 * entry `hurray.descriptor_table` (docs/descriptor-table.md), so that readers
 * list the file from its tail; readers of this library never show that entry
 * (`hurray_file_kv_count`, `hurray_file_kv_key`), and other readers, the Rust
 * reference included, read the file as before. With this flag the file has
 * the reference's layout (C++: `FileWriterOptions::descriptor_table = false`).
 * Libraries from before this flag reject the bit with
 * `HURRAY_ERR_INVALID_ARGUMENT`.
 */
#define HURRAY_FILE_WRITER_NO_DESCRIPTOR_TABLE 0x4u

/**
 * Starts an HRRYFILE container that `hurray_file_writer_finish` moves to
 * `path` (NUL-terminated) atomically and durably: the bytes go to a new
 * temporary file in the same directory (`.<name>.tmp-XXXXXX`), and finish
 * fsyncs it, renames it over `path` and fsyncs the directory. Until then
 * `path` is untouched; after a failure or `hurray_file_writer_abort` it keeps
 * its old content (or stays absent) and the temporary file is removed.
 * `flags`: 0 or an OR of `HURRAY_FILE_WRITER_SORTED_INDEX`,
 * `HURRAY_FILE_WRITER_NO_FSYNC` (atomic but not durable) and
 * `HURRAY_FILE_WRITER_NO_DESCRIPTOR_TABLE`; other bits give
 * `HURRAY_ERR_INVALID_ARGUMENT`. On success `*out` is a new writer, which the
 * caller must end with exactly one of `hurray_file_writer_finish` or
 * `hurray_file_writer_abort` (the only ways to release it); on failure `*out`
 * is set to NULL. `HURRAY_ERR_IO` when the temporary file cannot be created
 * (no such directory, no permission); `HURRAY_ERR_INVALID_ARGUMENT` for a path
 * that names no file ("", or one ending in '/').
 */
HURRAY_C_API HurrayStatus hurray_file_writer_create(const char* path, uint32_t flags, HurrayFileWriter** out);

/**
 * Starts an HRRYFILE container written sequentially to the open descriptor
 * `fd` (a file, pipe or socket; never seeks; on a pipe whose reader has gone,
 * the process's `SIGPIPE` disposition applies). The descriptor stays the
 * caller's: the writer neither fsyncs nor closes it; close it after
 * `hurray_file_writer_finish` or `hurray_file_writer_abort`. Bytes may be held
 * back (up to 64 KiB) until finish. There is no atomicity: after a failure or
 * an abort the descriptor holds an incomplete file, which the caller discards.
 * A negative `fd` gives `HURRAY_ERR_INVALID_ARGUMENT`; flags and `*out` as for
 * `hurray_file_writer_create`.
 */
HURRAY_C_API HurrayStatus hurray_file_writer_create_fd(int fd, uint32_t flags, HurrayFileWriter** out);

/**
 * Writes one tensor with all its data: name `name_len` bytes of UTF-8 at
 * `name` (1 .. 65,535 bytes, unique in the file), descriptor `desc` (not
 * taken: the caller still destroys it), and `count` buffers in the
 * descriptor's buffer table order, `sizes[i]` bytes at `buffers[i]` (NULL
 * only when `sizes[i]` is 0; `buffers` and `sizes` may be NULL when `count`
 * is 0). The bytes are copied to the output before the call returns.
 * `count` and each size must equal the descriptor's buffer count and
 * `hurray_descriptor_buffer_size` (`HURRAY_ERR_INVALID_FILE`, the library's
 * size mismatch, otherwise); an invalid or duplicate name gives
 * `HURRAY_ERR_INVALID_FILE`, an invalid descriptor its check's status, a call
 * while a tensor begun with `hurray_file_writer_begin_tensor` is open
 * `HURRAY_ERR_INVALID_ARGUMENT`. These errors are found before anything is
 * written and leave the writer usable. An I/O error (`HURRAY_ERR_IO`) leaves
 * it failed: every later call returns that error; abort it.
 */
HURRAY_C_API HurrayStatus hurray_file_writer_add_tensor(HurrayFileWriter* writer, const char* name, size_t name_len,
                                                        const HurrayDescriptor* desc, const void* const* buffers,
                                                        const uint64_t* sizes, uint32_t count);

/**
 * `hurray_file_writer_add_tensor` with the buffers of a buffer list (in buffer
 * table order; each buffer's byte size is the size given): buffers from a
 * file (`hurray_file_tensor_buffer`, to copy a tensor) or from
 * `hurray_buffer_from_ptr`. The list and its buffers stay the caller's,
 * unchanged. A non-empty buffer from `hurray_buffer_from_ptr` whose device tag
 * is not CPU gives `HURRAY_ERR_INVALID_TYPE`: the writer reads host memory only.
 */
HURRAY_C_API HurrayStatus hurray_file_writer_add_tensor_buffers(HurrayFileWriter* writer, const char* name,
                                                                size_t name_len, const HurrayDescriptor* desc,
                                                                const HurrayBufferList* buffers);

/**
 * Starts a tensor whose data comes in pieces (`hurray_file_writer_write`,
 * then `hurray_file_writer_end_tensor`): writes its descriptor. Name and
 * descriptor errors as `hurray_file_writer_add_tensor`;
 * `HURRAY_ERR_INVALID_ARGUMENT` when a tensor is already open.
 */
HURRAY_C_API HurrayStatus hurray_file_writer_begin_tensor(HurrayFileWriter* writer, const char* name,
                                                          size_t name_len, const HurrayDescriptor* desc);

/**
 * Appends the next `len` bytes at `data` (NULL only when `len` is 0) of the
 * open tensor's data: all its buffers in order, as one run (the writer inserts
 * the padding between buffers); a piece may span buffers.
 * `HURRAY_ERR_INVALID_ARGUMENT` when no tensor is open; `HURRAY_ERR_INVALID_FILE`
 * when the piece is longer than what the buffers still expect (nothing of it is
 * written and the writer stays usable).
 */
HURRAY_C_API HurrayStatus hurray_file_writer_write(HurrayFileWriter* writer, const void* data, size_t len);

/**
 * Ends the open tensor. `HURRAY_ERR_INVALID_ARGUMENT` when no tensor is open;
 * `HURRAY_ERR_INVALID_FILE` when fewer bytes were written than its buffers
 * declare, which leaves the writer failed (the missing bytes cannot be added
 * later): every later call returns that error; abort it.
 */
HURRAY_C_API HurrayStatus hurray_file_writer_end_tensor(HurrayFileWriter* writer);

/**
 * KV metadata, written by `hurray_file_writer_finish`. Each setter stores the
 * value of the key given as `key_len` bytes at `key` (UTF-8, 1 .. 65,535
 * bytes), replacing an earlier value of that key (which keeps its position;
 * entries are otherwise in the order first set). Values are copied. Errors
 * store nothing: an invalid key (empty, longer than 65,535 bytes, not UTF-8)
 * gives `HURRAY_ERR_INVALID_FILE`, as an invalid tensor name does; a string
 * that is not UTF-8, or a length or element count above 4,294,967,295 (the
 * format's uint32 fields), `HURRAY_ERR_INVALID_ARGUMENT`. Sets a string: `len`
 * bytes of UTF-8 at `value` (NULL only when `len` is 0).
 */
HURRAY_C_API HurrayStatus hurray_file_writer_set_string(HurrayFileWriter* writer, const char* key, size_t key_len,
                                                        const char* value, size_t len);

/** Sets an int64 value (see `hurray_file_writer_set_string`). */
HURRAY_C_API HurrayStatus hurray_file_writer_set_int64(HurrayFileWriter* writer, const char* key, size_t key_len,
                                                       int64_t value);

/** Sets a uint64 value (see `hurray_file_writer_set_string`). */
HURRAY_C_API HurrayStatus hurray_file_writer_set_uint64(HurrayFileWriter* writer, const char* key, size_t key_len,
                                                        uint64_t value);

/** Sets a float64 value, kept bit for bit (see `hurray_file_writer_set_string`). */
HURRAY_C_API HurrayStatus hurray_file_writer_set_float64(HurrayFileWriter* writer, const char* key, size_t key_len,
                                                         double value);

/** Sets a bool value: 0 is false, any other value true (see `hurray_file_writer_set_string`). */
HURRAY_C_API HurrayStatus hurray_file_writer_set_bool(HurrayFileWriter* writer, const char* key, size_t key_len,
                                                      uint8_t value);

/** Sets a bytes value: `len` bytes at `value`, NULL only when `len` is 0. */
HURRAY_C_API HurrayStatus hurray_file_writer_set_bytes(HurrayFileWriter* writer, const char* key, size_t key_len,
                                                       const void* value, size_t len);

/** Sets an int64 array: `count` elements at `values` (NULL only when `count` is 0). */
HURRAY_C_API HurrayStatus hurray_file_writer_set_int64_array(HurrayFileWriter* writer, const char* key,
                                                             size_t key_len, const int64_t* values, size_t count);

/** Sets a uint64 array (as `hurray_file_writer_set_int64_array`). */
HURRAY_C_API HurrayStatus hurray_file_writer_set_uint64_array(HurrayFileWriter* writer, const char* key,
                                                              size_t key_len, const uint64_t* values, size_t count);

/** Sets a float64 array (as `hurray_file_writer_set_int64_array`). */
HURRAY_C_API HurrayStatus hurray_file_writer_set_float64_array(HurrayFileWriter* writer, const char* key,
                                                               size_t key_len, const double* values, size_t count);

/** Sets a bool array: one byte per element, 0 false, anything else true. */
HURRAY_C_API HurrayStatus hurray_file_writer_set_bool_array(HurrayFileWriter* writer, const char* key,
                                                            size_t key_len, const uint8_t* values, size_t count);

/**
 * Sets a string array: `count` UTF-8 strings, `values[i]` of `lens[i]` bytes;
 * with `lens` NULL each `values[i]` is NUL-terminated. `values` may be NULL
 * only when `count` is 0, `values[i]` only when `lens[i]` is 0.
 */
HURRAY_C_API HurrayStatus hurray_file_writer_set_string_array(HurrayFileWriter* writer, const char* key,
                                                              size_t key_len, const char* const* values,
                                                              const size_t* lens, size_t count);

/**
 * Sets a bytes array: `count` byte strings, `values[i]` of `lens[i]` bytes.
 * `values` and `lens` may be NULL only when `count` is 0, `values[i]` only
 * when `lens[i]` is 0.
 */
HURRAY_C_API HurrayStatus hurray_file_writer_set_bytes_array(HurrayFileWriter* writer, const char* key,
                                                             size_t key_len, const void* const* values,
                                                             const size_t* lens, size_t count);

/**
 * Completes the file: writes the KV section, the index and the trailer and,
 * for `hurray_file_writer_create`, commits it (fsync, rename onto the path,
 * fsync of the directory). Then, success or not, destroys the writer and sets
 * `*writer` to NULL. On failure no file is left at the path (or its old
 * content stays) and the temporary file is removed; in descriptor mode the
 * descriptor holds an incomplete file. Fails with
 * `HURRAY_ERR_INVALID_ARGUMENT` when a tensor is still open, with the
 * writer's earlier error when it has failed, `HURRAY_ERR_INVALID_LAYOUT` when a
 * composite head (written from a decoded descriptor) lacks members or the KV
 * section would exceed 4 GiB, `HURRAY_ERR_IO` when writing or committing
 * fails. `writer` or `*writer` NULL gives `HURRAY_ERR_NULL_POINTER`.
 */
HURRAY_C_API HurrayStatus hurray_file_writer_finish(HurrayFileWriter** writer);

/**
 * Abandons the file: destroys the writer and sets `*writer` to NULL. For
 * `hurray_file_writer_create`, the temporary file is removed and the path is
 * left as it was; for a descriptor, what was written stays there (the caller
 * discards it and closes the descriptor). `*writer` NULL is a no-op
 * (`HURRAY_OK`), so abort after finish is harmless; `writer` NULL gives
 * `HURRAY_ERR_NULL_POINTER`. A writer must be ended by finish or abort: there
 * is no other way to release it.
 */
HURRAY_C_API HurrayStatus hurray_file_writer_abort(HurrayFileWriter** writer);

/* ------------------------------------------------------------------------ */
/* Descriptors (same functions as the reference implementation)             */
/* ------------------------------------------------------------------------ */

/**
 * Decodes and validates (strictly) the binary tensor descriptor at the start of
 * the `len` bytes at `bytes`. On success `*out_handle` is a new handle that the
 * caller releases with `hurray_descriptor_destroy`.
 */
HURRAY_C_API HurrayStatus hurray_descriptor_decode(const uint8_t* bytes, uintptr_t len,
                                                   HurrayDescriptor** out_handle);

/** Releases a descriptor handle. NULL gives `HURRAY_ERR_NULL_POINTER`. */
HURRAY_C_API HurrayStatus hurray_descriptor_destroy(HurrayDescriptor* handle);

/** The element type tag byte (e.g. 0x03 float32, 0x10 int8). */
HURRAY_C_API HurrayStatus hurray_descriptor_element_type_tag(const HurrayDescriptor* handle, uint8_t* out_tag);

/**
 * The format's name of an element type tag ("float32", "int8", "bfloat16",
 * ...), or "" for a tag that is not a built-in type. Infallible; the string is
 * static. (This library's own addition.)
 */
HURRAY_C_API const char* hurray_element_type_name(uint8_t tag);

/**
 * The format's name of a layout tag ("row_major", "strided", "csr", ...), or
 * "" for a tag without one. Infallible; the string is static. (This library's
 * own addition.)
 */
HURRAY_C_API const char* hurray_layout_name(uint8_t tag);

/**
 * The format's name of a quantization scheme tag, or "" for a tag without
 * one. Infallible; the string is static. (This library's own addition.)
 */
HURRAY_C_API const char* hurray_quantization_scheme_name(uint8_t tag);

/**
 * The quantization scheme tag of a quantized tensor (0 .. 255), or -1 when
 * the descriptor has no quantization section. (This library's own addition.)
 */
HURRAY_C_API HurrayStatus hurray_descriptor_quantization_scheme(const HurrayDescriptor* handle,
                                                                int32_t* out_scheme);

/** The layout tag byte (e.g. 0x01 row-major). */
HURRAY_C_API HurrayStatus hurray_descriptor_layout_tag(const HurrayDescriptor* handle, uint8_t* out_tag);

/** The rank (number of dimensions). */
HURRAY_C_API HurrayStatus hurray_descriptor_rank(const HurrayDescriptor* handle, uint32_t* out_rank);

/**
 * The dimensions. On entry `*out_rank` is the number of `uint64_t` that
 * `out_dims` can hold (0 when `out_dims` is NULL); on return it is the true
 * rank. When `out_dims` is NULL or too small the result is
 * `HURRAY_ERR_BUFFER_TOO_SMALL` and nothing is written to `out_dims`: allocate
 * `*out_rank` elements and call again. Otherwise the first `*out_rank`
 * elements of `out_dims` are written and the result is `HURRAY_OK`.
 */
HURRAY_C_API HurrayStatus hurray_descriptor_shape(const HurrayDescriptor* handle, uint64_t* out_dims,
                                                  uintptr_t* out_rank);

/** Byte offset of element [0, ..., 0] from the start of buffer 0. */
HURRAY_C_API HurrayStatus hurray_descriptor_byte_offset(const HurrayDescriptor* handle, uint64_t* out_offset);

/** Number of entries of the descriptor's buffer table. */
HURRAY_C_API HurrayStatus hurray_descriptor_buffer_count(const HurrayDescriptor* handle, uint32_t* out_count);

/* ------------------------------------------------------------------------ */
/* Buffers (same functions as the reference implementation)                 */
/* ------------------------------------------------------------------------ */

/**
 * Wraps caller-owned memory in a buffer handle, without copying: `byte_size`
 * bytes at `data` (non-NULL), aligned to `alignment` bytes, with the buffer
 * protocol's `device_tag`, `sync_mode` and `memory_class` bytes. The values are
 * checked as in a descriptor's buffer table (alignment a power of two, at
 * least 64 unless the buffer is empty, and honoured by `data`; tags in their
 * ranges; a CPU buffer producer-synced): `HURRAY_ERR_INVALID_SYNC_MODE` for an
 * undefined sync mode, `HURRAY_ERR_INVALID_TYPE` for an invalid device tag or
 * memory class, `HURRAY_ERR_INVALID_LAYOUT` for the other rules. On success
 * `*out_handle` is a new handle, released with `hurray_buffer_destroy`, which
 * then calls `release(data, release_context)` if `release` is not NULL; the
 * memory must stay valid until then. On failure nothing is called and the
 * memory stays the caller's.
 */
HURRAY_C_API HurrayStatus hurray_buffer_from_ptr(void* data, uint64_t byte_size, uint32_t alignment,
                                                 uint8_t device_tag, uint8_t sync_mode, uint8_t memory_class,
                                                 HurrayReleaseCallback release, void* release_context,
                                                 HurrayBuffer** out_handle);

/**
 * Releases a buffer handle: for a buffer from a file, drops its share of the
 * file (the file's memory is released with its last handle or buffer); for one
 * from `hurray_buffer_from_ptr`, calls its release callback once. NULL gives
 * `HURRAY_ERR_NULL_POINTER`. Must be called exactly once per handle.
 */
HURRAY_C_API HurrayStatus hurray_buffer_destroy(HurrayBuffer* buffer);

/**
 * Address of the first byte. For a buffer from a file the bytes are read-only
 * (the pointer type follows the reference ABI). An empty buffer may report any
 * address, NULL included.
 */
HURRAY_C_API HurrayStatus hurray_buffer_data_ptr(const HurrayBuffer* buffer, void** out_data);

/** Size in bytes (the size declared in the descriptor's buffer table). */
HURRAY_C_API HurrayStatus hurray_buffer_byte_size(const HurrayBuffer* buffer, uint64_t* out_byte_size);

/**
 * Alignment of the data address in bytes: the descriptor's declared alignment,
 * or, when the address does not honour it (memory given to
 * `hurray_file_open_memory` at an unaligned address), the largest power of two
 * that divides the address.
 */
HURRAY_C_API HurrayStatus hurray_buffer_alignment(const HurrayBuffer* buffer, uint32_t* out_alignment);

/** Device tag byte of the buffer (for a file buffer, the one its descriptor declares). */
HURRAY_C_API HurrayStatus hurray_buffer_device_tag(const HurrayBuffer* buffer, uint8_t* out_device_tag);

/** Sync mode byte of the buffer (for a file buffer, the one its descriptor declares). */
HURRAY_C_API HurrayStatus hurray_buffer_sync_mode(const HurrayBuffer* buffer, uint8_t* out_sync_mode);

/** Memory class byte of the buffer (for a file buffer, the one its descriptor declares). */
HURRAY_C_API HurrayStatus hurray_buffer_memory_class(const HurrayBuffer* buffer, uint8_t* out_memory_class);

/* ------------------------------------------------------------------------ */
/* Sync-mode handoffs (same functions as the reference implementation)      */
/* ------------------------------------------------------------------------ */

/**
 * Asserts that the producer has finished with `buffer` before handing it
 * over (sync mode `producer_synced`, 0x00): `HURRAY_OK` when the buffer
 * declares that mode, `HURRAY_ERR_SYNC_MODE_MISMATCH` otherwise.
 */
HURRAY_C_API HurrayStatus hurray_buffer_handoff_producer_synced(const HurrayBuffer* buffer);

/**
 * Checks an `event` (0x01) handoff: the buffer declares sync mode `event`,
 * `payload->sync_handle` and `payload->event_release_fn` are not NULL, and
 * `payload->sync_handle_device_tag` is the buffer's device tag. `HURRAY_OK`,
 * or `HURRAY_ERR_SYNC_MODE_MISMATCH` naming the first check that failed. The
 * event is neither waited on nor released here.
 */
HURRAY_C_API HurrayStatus hurray_buffer_handoff_event(const HurrayBuffer* buffer,
                                                      const HurraySyncEventPayload* payload);

/**
 * Checks a `consumer_stream` (0x02) handoff: the buffer declares sync mode
 * `consumer_stream`, `payload->consumer_stream` is not NULL and
 * `payload->consumer_stream_device_tag` is the buffer's device tag.
 * `HURRAY_OK`, or `HURRAY_ERR_SYNC_MODE_MISMATCH` naming the check that failed.
 */
HURRAY_C_API HurrayStatus hurray_buffer_handoff_consumer_stream(const HurrayBuffer* buffer,
                                                                const HurraySyncConsumerStreamPayload* payload);

/* ------------------------------------------------------------------------ */
/* Tensor contexts (same functions as the reference implementation)         */
/* ------------------------------------------------------------------------ */

/**
 * Creates a tensor context: `abi_version` (the producer's
 * `HURRAY_C_ABI_VERSION`, recorded as given), a copy of the `descriptor_len`
 * encoded descriptor bytes (not decoded or checked here; `descriptor_bytes`
 * may be NULL when `descriptor_len` is 0), and `owner`, handed to
 * `owner_release` (may be NULL) exactly once by `hurray_tensor_context_destroy`.
 * The caller destroys `*out_ctx` exactly once.
 * @code
 * HurrayTensorContext* ctx = NULL;
 * if (hurray_tensor_context_new(HURRAY_C_ABI_VERSION, bytes, len, owner, release_owner, &ctx) == HURRAY_OK) {
 *     uint32_t version = 0;
 *     hurray_tensor_context_abi_version(ctx, &version);  // compare before anything else
 *     hurray_tensor_context_destroy(&ctx);                // calls release_owner(owner); ctx == NULL
 * }
 * @endcode
 */
HURRAY_C_API HurrayStatus hurray_tensor_context_new(uint32_t abi_version, const uint8_t* descriptor_bytes,
                                                    uint64_t descriptor_len, void* owner,
                                                    HurrayOwnerReleaseFn owner_release,
                                                    HurrayTensorContext** out_ctx);

/**
 * The C ABI version the context's producer recorded. Call it first: every
 * other accessor assumes the caller has compared it with its own
 * `HURRAY_C_ABI_VERSION`.
 */
HURRAY_C_API HurrayStatus hurray_tensor_context_abi_version(const HurrayTensorContext* ctx, uint32_t* out);

/**
 * Borrows the context's encoded descriptor: `*out_bytes` (NULL when the
 * context has none, with `*out_len` 0) stays valid until the context is
 * destroyed. Decode it with `hurray_descriptor_decode`.
 */
HURRAY_C_API HurrayStatus hurray_tensor_context_descriptor(const HurrayTensorContext* ctx,
                                                           const uint8_t** out_bytes, uint64_t* out_len);

/**
 * Destroys `*ctx`, sets `*ctx` to NULL, then calls the owner release callback
 * (if any) once. `*ctx` NULL is a no-op (`HURRAY_OK`); `ctx` NULL gives
 * `HURRAY_ERR_NULL_POINTER`.
 */
HURRAY_C_API HurrayStatus hurray_tensor_context_destroy(HurrayTensorContext** ctx);

/* ------------------------------------------------------------------------ */
/* Buffer lists (same functions as the reference implementation)            */
/* ------------------------------------------------------------------------ */

/**
 * Creates an empty buffer list; `capacity` is only a hint. The caller releases
 * it with `hurray_buffer_list_destroy`.
 */
HURRAY_C_API HurrayStatus hurray_buffer_list_new(uint64_t capacity, HurrayBufferList** out_list);

/**
 * Appends `buffer` to `list`. On success the list owns it (destroying the
 * list destroys it; the caller must not); on failure the caller still does.
 * Push a tensor's buffers in its buffer table order.
 */
HURRAY_C_API HurrayStatus hurray_buffer_list_push(HurrayBufferList* list, HurrayBuffer* buffer);

/** Number of buffers in `list`. */
HURRAY_C_API HurrayStatus hurray_buffer_list_len(const HurrayBufferList* list, uint64_t* out_len);

/**
 * Borrows buffer `index` of `list`: the list keeps owning it (never pass it to
 * `hurray_buffer_destroy`); valid until the list is destroyed.
 * `HURRAY_ERR_INDEX_OUT_OF_BOUNDS` past the end.
 */
HURRAY_C_API HurrayStatus hurray_buffer_list_get(const HurrayBufferList* list, uint64_t index,
                                                 HurrayBuffer** out_buffer);

/**
 * Destroys `*list` and every buffer it owns (each exactly once, release
 * callbacks included), then sets `*list` to NULL. `*list` NULL is a no-op
 * (`HURRAY_OK`), so a second call is harmless; `list` NULL gives
 * `HURRAY_ERR_NULL_POINTER`.
 */
HURRAY_C_API HurrayStatus hurray_buffer_list_destroy(HurrayBufferList** list);

/* ------------------------------------------------------------------------ */
/* Streams                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * The streaming format (docs/stream.md): tensors back to back, each its
 * encoded descriptor followed by its buffers' bytes, over a pipe, a socket, a
 * file or memory, ending where the channel ends. Reading and writing block.
 * Memory stays bounded whatever the tensor sizes: data goes straight between
 * the channel and the caller's memory. A reader or a writer is used by one
 * thread at a time. Errors of the channel and of the stream are sticky: after
 * one, every call on the handle returns the same status. The reference declares
 * the two handle types only: the `hurray_stream_*` functions, `HurrayReadFn`,
 * `HurrayWriteFn` and the `HURRAY_STREAM_*` flags are this library's own.
 * Details: docs/c-api.md, "Streams".
 */

/**
 * Stream flag (`hurray_stream_open*`): permissive reading of descriptors and
 * composites (the relaxations of docs/descriptor.md) instead of the default
 * strict checks. Same value as `HURRAY_FILE_PERMISSIVE`.
 */
#define HURRAY_STREAM_PERMISSIVE 0x2u
/**
 * Stream flag (readers and writers): every buffer must be producer-synced
 * (sync mode 0), as a stream that crosses machines requires; another sync
 * mode gives `HURRAY_ERR_INVALID_LAYOUT` (reader: sticky; writer: nothing is
 * written, the writer stays usable).
 */
#define HURRAY_STREAM_REQUIRE_PRODUCER_SYNCED 0x4u
/**
 * Stream reader flag: read by the specification alone, refusing libhurray's own
 * private schemes (see `HURRAY_FILE_SPEC_ONLY`, the same value).
 */
#define HURRAY_STREAM_SPEC_ONLY 0x8u

/**
 * Read callback of `hurray_stream_open_callbacks`: reads at most `len` bytes
 * (`len` > 0) into `buf` and returns how many (at least 1, at most `len`), 0
 * at the end of the input, or a negative value on an error (the reader then
 * fails with `HURRAY_ERR_IO`, sticky). It may block. It is not called again
 * after it returned 0 or a negative value. It must not unwind through the
 * library nor call it with the same reader.
 */
typedef int64_t (*HurrayReadFn)(void* context, void* buf, size_t len);

/**
 * Write callback of `hurray_stream_writer_open_callbacks`: writes all `len`
 * bytes at `data` (`len` > 0) and returns 0, or a negative value on an error
 * (the writer then fails with `HURRAY_ERR_IO`, sticky). It may block. It must
 * not unwind through the library nor call it with the same writer.
 */
typedef int32_t (*HurrayWriteFn)(void* context, const void* data, size_t len);

/**
 * Opens a stream reader on the file descriptor `fd` (a pipe, a socket, a file,
 * standard input: 0), which stays the caller's: it is never closed, and must
 * stay open until `hurray_stream_close`. `flags`: 0 or an OR of
 * `HURRAY_STREAM_PERMISSIVE` and `HURRAY_STREAM_REQUIRE_PRODUCER_SYNCED`;
 * other bits give `HURRAY_ERR_INVALID_ARGUMENT`, as does a negative `fd`.
 *
 * Opening reads the first 8 bytes of the input (blocking until they arrive or
 * the input ends; never more, and every stream that holds a tensor starts with
 * at least 10) to tell a container from a stream: input that starts with
 * "HRRYFILE" gives `HURRAY_ERR_WRONG_FORMAT` with a message saying it is an
 * HRRYFILE container to open with `hurray_file_open`. A read error gives
 * `HURRAY_ERR_IO`. Anything else is checked by `hurray_stream_next`. On
 * success `*out` is a new handle that the caller releases with
 * `hurray_stream_close`; on failure `*out` is set to NULL.
 */
HURRAY_C_API HurrayStatus hurray_stream_open(int fd, uint32_t flags, HurrayReader** out);

/**
 * Opens a stream reader that gets its bytes from `read(context, buf, len)`
 * (see `HurrayReadFn`); otherwise as `hurray_stream_open` (the first 8 bytes
 * are read at once). `context` is passed as is and may be NULL.
 */
HURRAY_C_API HurrayStatus hurray_stream_open_callbacks(HurrayReadFn read, void* context, uint32_t flags,
                                                       HurrayReader** out);

/**
 * Opens a stream reader on the `len` bytes at `bytes`, without copying them:
 * the caller keeps them alive and unchanged until `hurray_stream_close`
 * (buffers from `hurray_stream_read_buffer` are copies and do not need them).
 * Otherwise as `hurray_stream_open`.
 */
HURRAY_C_API HurrayStatus hurray_stream_open_memory(const uint8_t* bytes, size_t len, uint32_t flags,
                                                    HurrayReader** out);

/** Releases a stream reader (NULL is a no-op). It does not close the caller's fd. */
HURRAY_C_API void hurray_stream_close(HurrayReader* reader);

/**
 * Moves to the next tensor, skipping what is left of the current one's data,
 * and reads its descriptor. On success `*out_desc` is a new descriptor handle
 * owned by the caller (`hurray_descriptor_destroy`), or NULL at the clean end
 * of the stream (the input ended on a tensor boundary, no composite open;
 * later calls return NULL again). On failure `*out_desc` is NULL:
 * `HURRAY_ERR_TRUNCATED` when the input ends inside a tensor, the decoder's
 * status for a bad descriptor (`HURRAY_ERR_INVALID_MAGIC` for input that is
 * not a stream: the message shows its first bytes; `HURRAY_ERR_VERSION_MISMATCH`,
 * `HURRAY_ERR_INVALID_LAYOUT`, ...), `HURRAY_ERR_IO` when the fd or the read
 * callback fails. All of them are sticky.
 */
HURRAY_C_API HurrayStatus hurray_stream_next(HurrayReader* reader, HurrayDescriptor** out_desc);

/**
 * Where the next data byte of the current tensor belongs: `*out_buffer` the
 * buffer (its index in the buffer table), `*out_offset` the offset inside it,
 * `*out_left` how many bytes of that buffer are left (what
 * `hurray_stream_read_into` takes). When the tensor's data is all read:
 * buffer count, 0, 0. `HURRAY_ERR_INVALID_ARGUMENT` without a current tensor
 * (before the first `hurray_stream_next`, after the end).
 */
HURRAY_C_API HurrayStatus hurray_stream_data_position(const HurrayReader* reader, uint32_t* out_buffer,
                                                      uint64_t* out_offset, uint64_t* out_left);

/**
 * Reads the next piece of the current tensor's data into `out`: at least 1
 * byte and at most `capacity`, never past the end of the current buffer (call
 * again for the next one); `*out_len` is how many, 0 when the tensor's data is
 * all read. `capacity` 0, or no current tensor, gives
 * `HURRAY_ERR_INVALID_ARGUMENT`; the input ending here `HURRAY_ERR_TRUNCATED`.
 */
HURRAY_C_API HurrayStatus hurray_stream_read(HurrayReader* reader, void* out, size_t capacity, size_t* out_len);

/**
 * Reads exactly the rest of the current buffer (`len` must be the `*out_left`
 * of `hurray_stream_data_position`; otherwise `HURRAY_ERR_INVALID_ARGUMENT`
 * and nothing is read) into `out`. No current tensor:
 * `HURRAY_ERR_INVALID_ARGUMENT`.
 */
HURRAY_C_API HurrayStatus hurray_stream_read_into(HurrayReader* reader, void* out, size_t len);

/**
 * Reads the next whole buffer of the current tensor (buffer table order,
 * empty buffers included) into a new allocation and returns it as a buffer
 * handle owned by the caller (`hurray_buffer_destroy`), independent of the
 * reader, with the metadata its descriptor declares. `*out` is NULL (and the
 * status `HURRAY_OK`) once every buffer of the tensor was returned or read
 * otherwise. A buffer of which `hurray_stream_read` took a part, or one larger
 * than 1 GiB (read it in pieces), gives `HURRAY_ERR_INVALID_ARGUMENT` with
 * nothing read; no current tensor too. On failure `*out` is NULL.
 */
HURRAY_C_API HurrayStatus hurray_stream_read_buffer(HurrayReader* reader, HurrayBuffer** out);

/**
 * Skips what is left of the current tensor's data (a regular file is skipped
 * by seeking, other input by reading into a small stack buffer).
 * `HURRAY_ERR_INVALID_ARGUMENT` without a current tensor.
 */
HURRAY_C_API HurrayStatus hurray_stream_skip(HurrayReader* reader);

/**
 * Opens a stream writer on the file descriptor `fd` (a pipe, a socket, a file,
 * standard output: 1), which stays the caller's: never closed; closing it (or
 * shutting down the socket) after `hurray_stream_writer_finish` is what ends
 * the stream. On a pipe whose reader is gone the process gets SIGPIPE unless
 * it ignores it (then `HURRAY_ERR_IO`). `flags`: 0 or
 * `HURRAY_STREAM_REQUIRE_PRODUCER_SYNCED`; other bits, or a negative `fd`, give
 * `HURRAY_ERR_INVALID_ARGUMENT`. Nothing is written yet. On success `*out` is
 * a new handle released with `hurray_stream_writer_close`; on failure NULL.
 */
HURRAY_C_API HurrayStatus hurray_stream_writer_open(int fd, uint32_t flags, HurrayWriter** out);

/**
 * Opens a stream writer that hands its bytes to `write(context, data, len)`
 * (see `HurrayWriteFn`); otherwise as `hurray_stream_writer_open`.
 */
HURRAY_C_API HurrayStatus hurray_stream_writer_open_callbacks(HurrayWriteFn write, void* context, uint32_t flags,
                                                              HurrayWriter** out);

/**
 * Releases a stream writer (NULL is a no-op) without checking or flushing
 * anything and without closing the caller's fd: call
 * `hurray_stream_writer_finish` first, or the reader may find the stream torn.
 */
HURRAY_C_API void hurray_stream_writer_close(HurrayWriter* writer);

/**
 * Writes one tensor: its descriptor, then `count` buffers, buffer `i` being
 * the `sizes[i]` bytes at `buffers[i]`, sent as they are (no copy). `count`
 * and every size must be what the descriptor's buffer table declares
 * (`HURRAY_ERR_INVALID_ARGUMENT` otherwise, nothing written); `buffers` and
 * `sizes` may be NULL when `count` is 0 (a composite head, whose members are
 * the tensors written after it), `buffers[i]` when `sizes[i]` is 0. Checked
 * before any byte goes out, leaving the writer usable: the descriptor, the
 * sizes, the composite rules, producer sync when asked for. A failing fd or
 * callback gives `HURRAY_ERR_IO` (sticky). `HURRAY_ERR_INVALID_ARGUMENT`
 * inside a chunked tensor or after `hurray_stream_writer_finish`.
 */
HURRAY_C_API HurrayStatus hurray_stream_write_tensor(HurrayWriter* writer, const HurrayDescriptor* desc,
                                                     const void* const* buffers, const uint64_t* sizes,
                                                     uint32_t count);

/**
 * Starts a tensor whose data follows in pieces (`hurray_stream_write`, then
 * `hurray_stream_end_tensor`): checks and writes its descriptor.
 * `HURRAY_ERR_INVALID_ARGUMENT` while another tensor is open or after
 * `hurray_stream_writer_finish`; descriptor errors as `hurray_stream_write_tensor`.
 */
HURRAY_C_API HurrayStatus hurray_stream_begin_tensor(HurrayWriter* writer, const HurrayDescriptor* desc);

/**
 * Writes the next `len` bytes of the open tensor's data (its buffers in table
 * order, as one run: a piece may span buffers), sent as they are. `data` may
 * be NULL when `len` is 0. No open tensor, or more bytes than the tensor still
 * expects: `HURRAY_ERR_INVALID_ARGUMENT`, nothing written, writer usable.
 */
HURRAY_C_API HurrayStatus hurray_stream_write(HurrayWriter* writer, const void* data, size_t len);

/**
 * Ends the open tensor. No open tensor: `HURRAY_ERR_INVALID_ARGUMENT` (writer
 * usable); bytes missing: `HURRAY_ERR_INVALID_ARGUMENT` and the writer fails
 * (sticky: the stream cannot be repaired).
 */
HURRAY_C_API HurrayStatus hurray_stream_end_tensor(HurrayWriter* writer);

/**
 * Ends the stream: checks that it may end here and flushes. An open tensor
 * gives `HURRAY_ERR_INVALID_ARGUMENT`, a composite still waiting for members
 * `HURRAY_ERR_INVALID_LAYOUT` (the writer stays usable after both). It writes nothing: the end of the stream is the end of
 * the channel. Afterwards only `hurray_stream_writer_finish` (`HURRAY_OK`
 * again) and `hurray_stream_writer_close` may be called.
 */
HURRAY_C_API HurrayStatus hurray_stream_writer_finish(HurrayWriter* writer);

/* ------------------------------------------------------------------------ */
/* Other formats: conversion, detection, read-only sources                  */
/* ------------------------------------------------------------------------ */

/*
 * `hurray::convert` from C (docs/convert.md): SafeTensors, GGUF and NumPy
 * `.npy` / `.npz` files converted to and from HRRYFILE containers, a file's
 * format told from its bytes, and any supported file opened read-only and
 * enumerated without converting it (`HurraySource`). A build without
 * `hurray::convert` (`-DHURRAY_BUILD_CONVERT=OFF`) keeps these functions and
 * returns `HURRAY_ERR_UNSUPPORTED` from each, saying so. This library's own
 * additions. Details: docs/c-api.md, "Other formats".
 */

/** Format tag: not recognised (`hurray_detect_format`); as an output, "from the extension". */
#define HURRAY_FORMAT_UNKNOWN 0
/** Format tag: an HRRYFILE container (`.hrry`). */
#define HURRAY_FORMAT_HRRYFILE 1
/** Format tag: the Hurray streaming format (`.hrrys`). */
#define HURRAY_FORMAT_STREAM 2
/** Format tag: SafeTensors (`.safetensors`). */
#define HURRAY_FORMAT_SAFETENSORS 3
/** Format tag: GGUF v2 / v3 (`.gguf`; written as v3). */
#define HURRAY_FORMAT_GGUF 4
/** Format tag: one NumPy array (`.npy`). */
#define HURRAY_FORMAT_NPY 5
/** Format tag: a zip archive of `.npy` members (`.npz`). */
#define HURRAY_FORMAT_NPZ 6

/**
 * The lower-case name of a format tag ("hrryfile", "stream", "safetensors",
 * "gguf", "npy", "npz", "unknown"; "" for a value that is no tag).
 * Infallible; the string is static.
 */
HURRAY_C_API const char* hurray_format_name(uint8_t format);

/**
 * Tells the format of the file at `path` (NUL-terminated) from its first
 * bytes and its size: the magics of HRRYFILE, GGUF, `.npy` and zip (`.npz`),
 * a SafeTensors header. `*out_format` is a `HURRAY_FORMAT_*` tag;
 * `HURRAY_FORMAT_UNKNOWN` (with `HURRAY_OK`) for anything else, a Hurray
 * stream included (a stream has no magic). `HURRAY_ERR_IO` when the file
 * cannot be opened or read.
 */
HURRAY_C_API HurrayStatus hurray_detect_format(const char* path, uint8_t* out_format);

/**
 * Progress callback of a conversion: bytes of tensor data written so far and
 * in all. Called on the converting thread; it must not call back into this
 * library.
 */
typedef void (*HurrayProgressFn)(void* context, uint64_t done_bytes, uint64_t total_bytes);


/**
 * How `hurray_convert_file` converts. Fill it with
 * `hurray_convert_options_init`, which sets `struct_size` and the defaults,
 * then change fields: a later version of this header may append fields, and
 * the library reads only the first `struct_size` bytes (the fields after them
 * keep their defaults).
 */
typedef struct HurrayConvertOptions {
    /** `sizeof(HurrayConvertOptions)` as this header declares it (set by `hurray_convert_options_init`). */
    uint32_t struct_size;
    /** Output format (`HURRAY_FORMAT_*`); `HURRAY_FORMAT_UNKNOWN` (default): from the output's extension. */
    uint8_t to;
    /**
     * Nonzero: quantized, sparse and composite tensors are written as dense
     * tensors of `dequantize_type` (formats that hold dense tensors only need
     * it; without it such a tensor is an error naming it). Default 0.
     */
    uint8_t dequantize;
    /** Element type tag of dequantized tensors: 0x03 float32 (default), 0x01 float16 or 0x02 bfloat16. */
    uint8_t dequantize_type;
    /** Nonzero: re-read the output and compare every value before it replaces anything. Default 0. */
    uint8_t verify;
    /** Nonzero (default): fsync the output before its atomic rename; 0 for scratch files. */
    uint8_t durable;
    /** Reserved, 0 (brings `chunk_bytes` to offset 16 without padding). */
    uint8_t reserved[7];
    /** Bytes of data copied at a time (the memory a conversion holds); 0: the default, 8 MiB. */
    uint64_t chunk_bytes;
    /** Progress reports; NULL (default) for none. */
    HurrayProgressFn progress;
    /** First argument of `progress`; may be NULL. */
    void* progress_context;
} HurrayConvertOptions;

/** What a conversion did (`hurray_convert_file`). */
typedef struct HurrayConvertReport {
    /** The input's format (`HURRAY_FORMAT_*`). */
    uint8_t from;
    /** The output's format. */
    uint8_t to;
    /** 1 when `verify` ran and found no difference, else 0. */
    uint8_t verified;
    /** Reserved. */
    uint8_t reserved[5];
    /** Tensors written. */
    uint64_t tensors;
    /** Bytes of tensor data written. */
    uint64_t data_bytes;
} HurrayConvertReport;

/**
 * Sets `*options` to the defaults (output format from the extension, no
 * dequantization, float32, no verification, durable, 8 MiB chunks, no
 * progress) and `options->struct_size` to `sizeof(HurrayConvertOptions)`.
 */
HURRAY_C_API HurrayStatus hurray_convert_options_init(HurrayConvertOptions* options);

/**
 * Converts the file at `in_path` (any format `hurray_detect_format` knows
 * but the streaming format) to `out_path` (both NUL-terminated) in
 * `options->to`'s format, or the one its extension names: every tensor and
 * the metadata, a chunk at a time, atomically (a temporary file renamed over
 * `out_path` when complete: after a failure `out_path` is untouched and no
 * temporary file is left). `options` may be NULL (the defaults); `report`
 * may be NULL, otherwise it is filled on success. Errors name the tensor and
 * the byte offset: `HURRAY_ERR_INVALID_ARGUMENT` for an output without a
 * format (no `to`, no known extension), a bad option value (an unknown
 * format tag, a `dequantize_type` other than float32/float16/bfloat16,
 * `struct_size` smaller than the first version's or larger than this
 * library's `HurrayConvertOptions`, nonzero reserved bytes);
 * `HURRAY_ERR_UNSUPPORTED` for what the output format cannot hold (a
 * quantized tensor without `dequantize`, a type the format lacks), for a
 * streaming-format input and for the streaming format as an output (use
 * `hurray_stream_writer_*` with an HRRYFILE); the input's error
 * (`HURRAY_ERR_INVALID_FILE`, `HURRAY_ERR_TRUNCATED`, ...) for a malformed
 * input; `HURRAY_ERR_INVALID_FILE` for a verification mismatch;
 * `HURRAY_ERR_IO` when a file cannot be read or written.
 * @code
 * HurrayConvertOptions opt;
 * HurrayConvertReport report;
 * hurray_convert_options_init(&opt);
 * opt.verify = 1;
 * if (hurray_convert_file("model.safetensors", "model.hrry", &opt, &report) != HURRAY_OK) {
 *     fprintf(stderr, "%s\n", hurray_last_error_message());
 * }
 * @endcode
 */
HURRAY_C_API HurrayStatus hurray_convert_file(const char* in_path, const char* out_path,
                                              const HurrayConvertOptions* options, HurrayConvertReport* report);

/**
 * `hurray_convert_file`, with a progress callback that can cancel: `progress`
 * (NULL: none) is called with `context` after each chunk, in place of
 * `options->progress`, and a nonzero return cancels the conversion:
 * `HURRAY_ERR_CANCELLED`, and no output is left (an existing file keeps its
 * content). Return 0 to go on.
 *
 * @code
 * static int keep_going(void* stop, uint64_t done, uint64_t total) { return *(volatile int*)stop; }
 * hurray_convert_file_cancellable("in.gguf", "out.hrry", NULL, keep_going, &stop_flag, NULL);
 * @endcode
 */
HURRAY_C_API HurrayStatus hurray_convert_file_cancellable(const char* in_path, const char* out_path,
                                                          const HurrayConvertOptions* options,
                                                          HurrayCancellableProgressFn progress, void* context,
                                                          HurrayConvertReport* report);

/**
 * Any supported file opened read-only: its tensors in Hurray's terms (names,
 * descriptors, data) and its metadata (`hurray_source_open`,
 * `hurray_source_free`).
 */
typedef struct HurraySource HurraySource;

/**
 * Opens the file at `path` (NUL-terminated), its format detected from its
 * bytes: an HRRYFILE, SafeTensors, GGUF, `.npy` or `.npz` file, validated as
 * its reader does (data spans inside the file, no overlaps, ...). `flags`
 * must be 0 (other bits: `HURRAY_ERR_INVALID_ARGUMENT`). On success `*out` is
 * a new handle released with `hurray_source_free`; on failure `*out` is set
 * to NULL: `HURRAY_ERR_UNSUPPORTED` for an unknown format or a stream, the
 * reader's status naming the field and byte offset for a malformed file,
 * `HURRAY_ERR_IO` when it cannot be read.
 * @code
 * HurraySource* src = NULL;
 * uint64_t n = 0, i;
 * if (hurray_source_open("model.safetensors", 0, &src) == HURRAY_OK) {
 *     hurray_source_tensor_count(src, &n);
 *     for (i = 0; i < n; ++i) {
 *         const char* name; size_t len; HurrayDescriptor* d = NULL;
 *         hurray_source_tensor_name(src, i, &name, &len);
 *         hurray_source_tensor_descriptor(src, i, &d);  // the descriptor accessors apply
 *         hurray_descriptor_destroy(d);
 *     }
 *     hurray_source_free(src);
 * }
 * @endcode
 */
HURRAY_C_API HurrayStatus hurray_source_open(const char* path, uint32_t flags, HurraySource** out);

/**
 * Releases a source (NULL is a no-op). Buffers from `hurray_source_tensor_buffer`
 * and KV handles from `hurray_source_kv` stay valid: each holds its own share.
 * Every handle that libhurray adds to the reference ABI is released this way,
 * by a `hurray_<handle>_free(T*)` that takes NULL as a no-op.
 */
HURRAY_C_API void hurray_source_free(HurraySource* source);

/**
 * Former name of `hurray_source_free`, which it calls; kept for one release of
 * the C ABI.
 */
HURRAY_C_API void hurray_source_close(HurraySource* source);

/** The format the source was read from (`HURRAY_FORMAT_*`). */
HURRAY_C_API HurrayStatus hurray_source_format(const HurraySource* source, uint8_t* out_format);

/** Number of tensors of the source. */
HURRAY_C_API HurrayStatus hurray_source_tensor_count(const HurraySource* source, uint64_t* out);

/**
 * Name of tensor `index` (the source's order): `*name` points to `*len` bytes
 * of UTF-8 followed by a NUL, valid while the source is open.
 * `HURRAY_ERR_INDEX_OUT_OF_BOUNDS` past the last tensor.
 */
HURRAY_C_API HurrayStatus hurray_source_tensor_name(const HurraySource* source, uint64_t index, const char** name,
                                                    size_t* len);

/** Index of the tensor named by the `name_len` bytes at `name`, or `HURRAY_ERR_NOT_FOUND`. */
HURRAY_C_API HurrayStatus hurray_source_find(const HurraySource* source, const char* name, size_t name_len,
                                             uint64_t* index);

/**
 * The descriptor tensor `index` has (or would have in an HRRYFILE): a new
 * handle owned by the caller (`hurray_descriptor_destroy`), read with the
 * `hurray_descriptor_*` accessors; its buffer sizes
 * (`hurray_descriptor_buffer_size`) are what `hurray_source_read` reads.
 */
HURRAY_C_API HurrayStatus hurray_source_tensor_descriptor(const HurraySource* source, uint64_t index,
                                                          HurrayDescriptor** out);

/**
 * Copies bytes [`offset`, `offset + len`) of buffer `buffer` of tensor
 * `index` into `out` (room for `len` bytes; NULL only when `len` is 0): any
 * part of a buffer, so a tensor of any size is read in bounded pieces. The
 * bytes are the ones the descriptor describes (a reader may present them
 * transformed, as docs/convert.md says). `HURRAY_ERR_INDEX_OUT_OF_BOUNDS` for
 * a tensor or buffer index out of range, `HURRAY_ERR_INVALID_ARGUMENT` for a
 * range past the buffer's end, the reader's status (`HURRAY_ERR_IO`,
 * `HURRAY_ERR_TRUNCATED`, ...) naming the tensor and the byte offset in the
 * file when it cannot be read.
 */
HURRAY_C_API HurrayStatus hurray_source_read(const HurraySource* source, uint64_t index, uint32_t buffer,
                                             uint64_t offset, void* out, size_t len);

/**
 * Buffer `buffer` of tensor `index` without a copy, when the source holds its
 * bytes in memory as presented (a mapped file; `hurray_source_read` otherwise):
 * a new buffer handle owned by the caller (`hurray_buffer_destroy`) with the
 * metadata of the descriptor's buffer table, holding a share of the source,
 * so valid after `hurray_source_free`. Read-only: never write through
 * `hurray_buffer_data_ptr`. `HURRAY_ERR_UNSUPPORTED` when the bytes have no
 * zero-copy view; `HURRAY_ERR_INDEX_OUT_OF_BOUNDS` for an index out of range.
 */
HURRAY_C_API HurrayStatus hurray_source_tensor_buffer(const HurraySource* source, uint64_t index, uint32_t buffer,
                                                      HurrayBuffer** out);

/**
 * The source's key-value metadata (as its reader maps it to Hurray's typed
 * KV; empty for a format without any) as a new file handle that holds no
 * tensors: read it with `hurray_file_kv_count`, `hurray_file_kv_key`,
 * `hurray_file_kv_type` and the `hurray_file_kv_get_*` getters, release it
 * with `hurray_file_close`. Independent of the source (a copy of the
 * metadata, made by this call).
 */
HURRAY_C_API HurrayStatus hurray_source_kv(const HurraySource* source, HurrayFile** out);

#ifdef __cplusplus
}
#endif

#endif /* HURRAY_H */
