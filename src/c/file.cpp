// SPDX-License-Identifier: Apache-2.0
// The C ABI's file functions: open, close, tensor names, descriptors, zero-copy
// buffers and typed KV getters over hurray::FileReader.
#include "c/c_internal.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hurray/core/describe.hpp"
#include "hurray/core/shape.hpp"
#include "hurray/io/file_format.hpp"
#ifdef HURRAY_C_HAVE_HTTP
#include "hurray/http/http_range_source.hpp"
#endif

using hurray::c::fail;
using hurray::c::guarded;
using hurray::c::guarded_out;
using hurray::c::null_argument;
using hurray::c::check_tensor_index;
using hurray::c::out_of_range;
using hurray::c::require;
using hurray::c::with_tensor;

namespace {

constexpr uint32_t kKnownFileFlags = HURRAY_FILE_NO_MMAP | HURRAY_FILE_PERMISSIVE | HURRAY_FILE_SPEC_ONLY;

// Reader options for `flags`; HURRAY_ERR_INVALID_ARGUMENT when an unknown bit
// is set.
HurrayStatus options_from_flags(const char* function, uint32_t flags, hurray::FileReadOptions& options) {
    if ((flags & ~kKnownFileFlags) != 0) {
        return hurray::c::unknown_flags(function, flags);
    }
    options.use_mmap = (flags & HURRAY_FILE_NO_MMAP) == 0;
    options.strict = (flags & HURRAY_FILE_PERMISSIVE) == 0;
    options.descriptor.strict = options.strict;
    options.descriptor.libhurray_schemes = (flags & HURRAY_FILE_SPEC_ONLY) == 0;
    return HURRAY_OK;
}

// "7f 45 4c 46 ("\x7fELF")"-like rendering of the first bytes of an input.
std::string describe_prefix(std::span<const uint8_t> prefix) { return hurray::leading_bytes(prefix); }

// Explains an open failure from the first bytes of the input: a stream or bare
// descriptor ("HRRY" without "FILE") is HURRAY_ERR_WRONG_FORMAT, an empty input
// says so. Other failures are passed on unchanged: the reader's message already
// names input that is not Hurray at all, with its first bytes.
HurrayStatus fail_open(const hurray::Error& error, std::span<const uint8_t> prefix, uint64_t total_size) {
    const bool magic_or_short = (error.code() == hurray::ErrorCode::kInvalidMagic && error.offset() == 0) ||
                                error.code() == hurray::ErrorCode::kTruncated;
    const auto& file_magic = hurray::kFileMagic;
    const bool is_container = prefix.size() >= file_magic.size() &&
                              std::equal(file_magic.begin(), file_magic.end(), prefix.begin());
    if (!magic_or_short || is_container) {
        return fail(error);
    }
    if (total_size == 0) {
        return fail(hurray::Error(error.code(), error.message() + "; the input is empty", error.offset()));
    }
    const auto& descriptor_magic = hurray::kDescriptorMagic;
    const bool is_stream = prefix.size() >= 4 && std::equal(prefix.begin(), prefix.begin() + 4, descriptor_magic);
    if (is_stream) {
        // decode_file_header reports a stream's magic (kInvalidMagic at byte 0) saying what
        // the input is; a too-short input (kTruncated) has not been described yet.
        const bool described = error.code() == hurray::ErrorCode::kInvalidMagic;
        fail(hurray::Error(error.code(),
                           error.message() +
                               (described ? std::string()
                                          : "; the input starts with " + describe_prefix(prefix) +
                                                ": a Hurray stream or bare descriptor, not an HRRYFILE container") +
                               " (hurray_file_open reads HRRYFILE containers only; use hurray_stream_open)",
                           error.offset()));
        return HURRAY_ERR_WRONG_FORMAT;
    }
    return fail(error);
}

// Up to 8 first bytes of the file at `path`, and its size (0 when unreadable).
std::pair<std::vector<uint8_t>, uint64_t> read_prefix(const char* path) {
    std::vector<uint8_t> prefix(8);
    uint64_t size = 0;
    std::FILE* f = std::fopen(path, "rb");
    if (f == nullptr) {
        return {{}, 0};
    }
    const size_t n = std::fread(prefix.data(), 1, prefix.size(), f);
    prefix.resize(n);
    if (std::fseek(f, 0, SEEK_END) == 0) {
        const long end = std::ftell(f);
        size = end > 0 ? static_cast<uint64_t>(end) : 0;
    }
    std::fclose(f);
    return {std::move(prefix), size};
}

// A new buffer handle for buffer `buffer` (< t.buffers().size()) of `t`:
// zero-copy, holding a share of the file's memory.
std::unique_ptr<HurrayBuffer> file_buffer(const hurray::FileTensor& t, uint32_t buffer) {
    auto handle = std::make_unique<HurrayBuffer>();
    handle->keep = t.buffers()[buffer];
    if (buffer < t.descriptor().buffers.size()) {
        handle->meta = t.descriptor().buffers[buffer];
    }
    handle->meta.byte_size = handle->keep.size();
    // SAFETY: the reference ABI hands out `void*`; the bytes stay read-only
    // (documented: callers never write through hurray_buffer_data_ptr).
    handle->data = const_cast<uint8_t*>(handle->keep.data());
    return handle;
}

// Moves an opened reader into a new handle.
HurrayStatus publish(hurray::Result<hurray::FileReader>&& opened, HurrayFile** out) {
    *out = hurray::c::publish_handle(std::make_unique<HurrayFile>(std::move(opened).value_unchecked()));
    return HURRAY_OK;
}

// The first version of HurrayUrlOptions (this header's): the struct_size accepted.
constexpr uint32_t kUrlOptionsSize = sizeof(HurrayUrlOptions);

// hurray_file_open_url(_ex): `options` is not NULL.
HurrayStatus open_url(const char* fn, const char* url, const HurrayUrlOptions* options, uint32_t flags,
                      HurrayFile** out) {
    if (const HurrayStatus s = hurray::c::require_out(fn, out, {{url, "url"}}); s != HURRAY_OK) {
        return s;
    }
    if (options->struct_size != kUrlOptionsSize) {
        return fail(HURRAY_ERR_INVALID_ARGUMENT, fn,
                    "options->struct_size is " + std::to_string(options->struct_size) + "; this library reads " +
                        std::to_string(kUrlOptionsSize) + " (call hurray_url_options_init)");
    }
    if (options->header_count > 0) {
        if (const HurrayStatus s = require(fn, {{options->headers, "headers"}}); s != HURRAY_OK) {
            return s;
        }
    }
    hurray::FileReadOptions read_options;
    if (const HurrayStatus s = options_from_flags(fn, flags, read_options); s != HURRAY_OK) {
        return s;
    }
#ifdef HURRAY_C_HAVE_HTTP
    namespace http = hurray::http;
    http::HttpOptions o;
    for (size_t i = 0; i < options->header_count; ++i) {
        // SAFETY: the caller passes `header_count` readable pointers at `headers`.
        const char* h = options->headers[i];
        if (h == nullptr) {
            return fail(HURRAY_ERR_NULL_POINTER, fn, "headers[" + std::to_string(i) + "] is NULL");
        }
        o.headers.emplace_back(h);
    }
    o.max_retries = std::min<uint32_t>(options->max_retries, 10);
    o.connect_timeout = std::chrono::milliseconds(options->connect_timeout_ms);
    o.idle_timeout = std::chrono::milliseconds(options->idle_timeout_ms);
    o.deadline = std::chrono::milliseconds(options->deadline_ms);
    o.parallel = options->parallel;
    const auto text = [](const char* s) { return s == nullptr ? std::string() : std::string(s); };
    if (options->aws_access_key_id != nullptr || options->aws_secret_access_key != nullptr) {
        http::AwsCredentials c;
        c.access_key_id = text(options->aws_access_key_id);
        c.secret_access_key = text(options->aws_secret_access_key);
        c.session_token = text(options->aws_session_token);
        if (options->aws_region != nullptr) {
            c.region = options->aws_region;
        } else if (auto env = http::S3Location::from_environment(); env.ok()) {
            c.region = env->region;  // AWS_REGION, else AWS_DEFAULT_REGION, else us-east-1
        }
        o.aws = std::move(c);
    }
    if (options->s3_endpoint != nullptr) {
        auto at = http::S3Location::from_environment();
        if (!at.ok()) {
            return fail(at.error());
        }
        at->endpoint = options->s3_endpoint;
        if (o.aws) {
            at->region = o.aws->region;
        }
        o.s3 = *at;
    }
    if (options->progress != nullptr) {
        const HurrayCancellableProgressFn progress = options->progress;
        void* const context = options->progress_context;
        o.progress = [progress, context](uint64_t received) { return progress(context, received, 0) == 0; };
    }
    auto source = http::HttpRangeSource::open(url, o);
    if (!source.ok()) {
        return fail(source.error());
    }
    auto opened = hurray::FileReader::open(std::move(*source), read_options);
    if (!opened.ok()) {
        return fail(opened.error());
    }
    return publish(std::move(opened), out);
#else
    return fail(HURRAY_ERR_UNSUPPORTED, fn, "this libhurray_c was built without hurray::http (no URL support)");
#endif
}

/// A count getter (tensors, KV entries): checks the arguments and stores
/// `count(file->reader)` in `*out`.
template <typename Count>
HurrayStatus get_count(const char* function, const HurrayFile* file, uint64_t* out, Count&& count) {
    return guarded(function, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(function, {{file, "file"}, {out, "out"}}); s != HURRAY_OK) {
            return s;
        }
        *out = count(file->reader);
        return HURRAY_OK;
    });
}

// A KV getter: checks the arguments, runs `get` on the file's KV metadata
// and hands its value to `store`.
template <typename Get, typename Store>
HurrayStatus kv_get(const char* function, const HurrayFile* file, const char* key, size_t key_len,
                    const void* out, Get&& get, Store&& store) {
    return guarded(function, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(function, {{file, "file"}, {key, "key"}, {out, "value"}});
            s != HURRAY_OK) {
            return s;
        }
        // SAFETY: the caller guarantees `key_len` readable bytes at `key`.
        auto value = get(file->reader.kv(), std::string_view(key, key_len));
        if (!value.ok()) {
            return fail(value.error());
        }
        store(value.value_unchecked());
        return HURRAY_OK;
    });
}

/// A scalar KV getter (int64, uint64, float64, bool): the value that `get`
/// (a KvMetadata getter such as get_int64) reads, stored in `*out` (a bool as
/// 1 or 0).
template <typename Out, typename Value>
HurrayStatus kv_get_scalar(const char* function, const HurrayFile* file, const char* key, size_t key_len, Out* out,
                           hurray::Result<Value> (hurray::KvMetadata::*get)(std::string_view) const) {
    return kv_get(function, file, key, key_len, out, std::mem_fn(get), [out](Value v) { *out = static_cast<Out>(v); });
}

/// A getter of a string or bytes value: checks `len` first, then stores the
/// address that `address` gives for the file's own copy of the value (read by
/// `get`, a KvMetadata getter such as get_string) in `*value`, and its size in
/// `*len`.
template <typename Out, typename View, typename Address>
HurrayStatus kv_get_sized(const char* function, const HurrayFile* file, const char* key, size_t key_len,
                          const Out** value, size_t* len,
                          hurray::Result<View> (hurray::KvMetadata::*get)(std::string_view) const, Address&& address) {
    if (len == nullptr) {
        return null_argument(function, "len");
    }
    return kv_get(function, file, key, key_len, value, std::mem_fn(get), [&](View view) {
        *value = address(view);
        *len = view.size();
    });
}

}  // namespace

extern "C" {

HURRAY_C_API HurrayStatus hurray_file_open(const char* path, uint32_t flags, HurrayFile** out) {
    static constexpr const char* kFn = "hurray_file_open";
    return guarded_out(kFn, out, {{path, "path"}}, [&]() -> HurrayStatus {
        hurray::FileReadOptions options;
        if (const HurrayStatus s = options_from_flags(kFn, flags, options); s != HURRAY_OK) {
            return s;
        }
        auto opened = hurray::FileReader::open(path, options);
        if (!opened.ok()) {
            auto [prefix, size] = read_prefix(path);
            return fail_open(opened.error(), prefix, size);
        }
        return publish(std::move(opened), out);
    });
}

HURRAY_C_API HurrayStatus hurray_file_open_memory(const uint8_t* bytes, size_t len, uint32_t flags,
                                                  HurrayFile** out) {
    static constexpr const char* kFn = "hurray_file_open_memory";
    return guarded_out(kFn, out, {{bytes, "bytes"}}, [&]() -> HurrayStatus {
        hurray::FileReadOptions options;
        if (const HurrayStatus s = options_from_flags(kFn, flags, options); s != HURRAY_OK) {
            return s;
        }
        // SAFETY: the caller guarantees `len` readable bytes at `bytes`, kept
        // alive and unchanged until the file and its buffers are released (no
        // owner is passed, so the reader borrows them).
        const std::span<const uint8_t> input(bytes, len);
        auto opened = hurray::FileReader::open_memory(input, {}, options);
        if (!opened.ok()) {
            return fail_open(opened.error(), input.first(std::min<size_t>(len, 8)), len);
        }
        return publish(std::move(opened), out);
    });
}

HURRAY_C_API HurrayStatus hurray_file_open_url(const char* url, const char* const* headers, size_t header_count,
                                               uint32_t flags, HurrayFile** out) {
    static constexpr const char* kFn = "hurray_file_open_url";
    return guarded(kFn, [&]() -> HurrayStatus {
        HurrayUrlOptions options{};
        if (const HurrayStatus s = hurray_url_options_init(&options); s != HURRAY_OK) {
            return s;
        }
        options.headers = headers;
        options.header_count = header_count;
        return open_url(kFn, url, &options, flags, out);
    });
}

HURRAY_C_API HurrayStatus hurray_url_options_init(HurrayUrlOptions* options) {
    static constexpr const char* kFn = "hurray_url_options_init";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{options, "options"}}); s != HURRAY_OK) {
            return s;
        }
        *options = HurrayUrlOptions{};
        options->struct_size = kUrlOptionsSize;
        options->max_retries = 3;
        options->connect_timeout_ms = 10000;
        options->idle_timeout_ms = 30000;
        options->parallel = 4;
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_file_open_url_ex(const char* url, const HurrayUrlOptions* options, uint32_t flags,
                                                  HurrayFile** out) {
    static constexpr const char* kFn = "hurray_file_open_url_ex";
    return guarded(kFn, [&]() -> HurrayStatus {
        HurrayUrlOptions defaults{};
        if (options == nullptr) {
            if (const HurrayStatus s = hurray_url_options_init(&defaults); s != HURRAY_OK) {
                return s;
            }
            options = &defaults;
        }
        return open_url(kFn, url, options, flags, out);
    });
}

HURRAY_C_API void hurray_file_close(HurrayFile* file) {
    if (file == nullptr || hurray::c::retire_handle("hurray_file_close", "file", file) != HURRAY_OK) {
        return;  // a handle that is not live (handle checks): the message is recorded
    }
    // SAFETY: `file` is a live handle from hurray_file_open*, released once
    // (documented). Destroying a FileReader does not throw.
    delete file;
}

std::string_view HurrayFile::c_name(size_t i) const {
    if (!names_ready_.load(std::memory_order_acquire)) {
        const std::lock_guard<std::mutex> lock(names_mutex_);
        if (!names_ready_.load(std::memory_order_relaxed)) {
            const size_t n = reader.tensor_count();
            size_t total = 0;
            for (size_t k = 0; k < n; ++k) {
                total += reader.entry(k).name.size() + 1;  // <= the index section's size: no overflow
            }
            std::string names;
            std::vector<size_t> starts;
            names.reserve(total);
            starts.reserve(n + 1);
            for (size_t k = 0; k < n; ++k) {
                starts.push_back(names.size());
                names.append(reader.entry(k).name);
                names.push_back('\0');
            }
            starts.push_back(names.size());
            names_ = std::move(names);  // published only complete (a throw above leaves nothing)
            name_starts_ = std::move(starts);
            names_ready_.store(true, std::memory_order_release);
        }
    }
    return std::string_view(names_).substr(name_starts_[i], name_starts_[i + 1] - name_starts_[i] - 1);
}

HURRAY_C_API HurrayStatus hurray_file_tensor_count(const HurrayFile* file, uint64_t* out) {
    return get_count("hurray_file_tensor_count", file, out,
                     [](const hurray::FileReader& reader) { return reader.tensor_count(); });
}

HURRAY_C_API HurrayStatus hurray_file_tensor_name(const HurrayFile* file, uint64_t index, const char** name,
                                                  size_t* len) {
    static constexpr const char* kFn = "hurray_file_tensor_name";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{file, "file"}, {name, "name"}, {len, "len"}}); s != HURRAY_OK) {
            return s;
        }
        if (const HurrayStatus s = check_tensor_index(kFn, file, index); s != HURRAY_OK) {
            return s;
        }
        const std::string_view entry_name = file->c_name(static_cast<size_t>(index));
        *name = entry_name.data();  // NUL-terminated: see HurrayFile::c_name
        *len = entry_name.size();
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_file_find(const HurrayFile* file, const char* name, size_t name_len,
                                           uint64_t* index) {
    static constexpr const char* kFn = "hurray_file_find";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{file, "file"}, {name, "name"}, {index, "index"}}); s != HURRAY_OK) {
            return s;
        }
        // SAFETY: the caller guarantees `name_len` readable bytes at `name`.
        const std::string_view wanted(name, name_len);
        const auto found = file->reader.find(wanted);
        if (!found) {
            return fail(hurray::Error(hurray::ErrorCode::kNotFound,
                                      std::string("tensor \"") + std::string(wanted) + "\": no such tensor"));
        }
        *index = *found;
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_file_tensor_descriptor(const HurrayFile* file, uint64_t index,
                                                        HurrayDescriptor** out) {
    static constexpr const char* kFn = "hurray_file_tensor_descriptor";
    return guarded_out(kFn, out, {{file, "file"}}, [&]() -> HurrayStatus {
        if (const HurrayStatus s = check_tensor_index(kFn, file, index); s != HURRAY_OK) {
            return s;
        }
        // Decoded into the handle's own copy, without keeping one in the reader
        // (FileReader::decode_descriptor): listing a file through this call costs
        // no memory per tensor beyond the handles the caller holds.
        auto handle = std::make_unique<HurrayDescriptor>();
        if (const hurray::Status decoded = file->reader.decode_descriptor(static_cast<size_t>(index), handle->descriptor);
            !decoded.ok()) {
            return fail(decoded.error());
        }
        *out = hurray::c::publish_handle(std::move(handle));
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_file_tensor_buffer(const HurrayFile* file, uint64_t index, uint32_t buffer,
                                                    HurrayBuffer** out) {
    static constexpr const char* kFn = "hurray_file_tensor_buffer";
    return guarded_out(kFn, out, {{file, "file"}}, [&]() -> HurrayStatus {
        return with_tensor(kFn, file, index, [&](const hurray::FileTensor& t) -> HurrayStatus {
            const size_t buffers = t.buffers().size();
            if (buffer >= buffers) {
                return out_of_range(kFn, "buffer index", buffer, buffers);
            }
            *out = hurray::c::publish_handle(file_buffer(t, buffer));
            return HURRAY_OK;
        });
    });
}

HURRAY_C_API HurrayStatus hurray_file_tensor_buffers(const HurrayFile* file, uint64_t index,
                                                     HurrayBufferList** out) {
    static constexpr const char* kFn = "hurray_file_tensor_buffers";
    return guarded_out(kFn, out, {{file, "file"}}, [&]() -> HurrayStatus {
        return with_tensor(kFn, file, index, [&](const hurray::FileTensor& t) -> HurrayStatus {
            const size_t buffers = t.buffers().size();
            // The buffers are built first, then handed out together: on failure
            // nothing is published and the unique_ptrs free what was made.
            std::vector<std::unique_ptr<HurrayBuffer>> made;
            made.reserve(buffers);
            for (size_t i = 0; i < buffers; ++i) {
                made.push_back(file_buffer(t, static_cast<uint32_t>(i)));
            }
            auto list = std::make_unique<HurrayBufferList>();
            list->buffers.reserve(buffers);
            for (auto& b : made) {
                list->buffers.push_back(hurray::c::publish_handle(std::move(b)));
            }
            *out = hurray::c::publish_handle(std::move(list));
            return HURRAY_OK;
        });
    });
}

HURRAY_C_API HurrayStatus hurray_file_tensor_to_float32(const HurrayFile* file, uint64_t index, float* out,
                                                        uint64_t capacity, uint64_t* out_count) {
    static constexpr const char* kFn = "hurray_file_tensor_to_float32";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{file, "file"}, {out_count, "out_count"}}); s != HURRAY_OK) {
            return s;
        }
        return with_tensor(kFn, file, index, [&](const hurray::FileTensor& t) -> HurrayStatus {
            auto elements = hurray::element_count(t.descriptor().shape);
            if (!elements.ok()) {
                return fail(elements.error());
            }
            const uint64_t n = elements.value_unchecked();
            *out_count = n;
            if ((out == nullptr && n > 0) || capacity < n) {
                return fail(HURRAY_ERR_BUFFER_TOO_SMALL, kFn,
                            "tensor " + std::to_string(index) + " has " + std::to_string(n) +
                                " elements; capacity is " + std::to_string(out == nullptr ? 0 : capacity));
            }
            auto values = t.to_float32();
            if (!values.ok()) {
                return fail(values.error());
            }
            const std::vector<float>& v = values.value_unchecked();
            if (v.size() != n) {
                return fail(HURRAY_ERR_INTERNAL, kFn, "to_float32 gave " + std::to_string(v.size()) +
                                                          " values for " + std::to_string(n) + " elements");
            }
            if (n > 0) {
                // SAFETY: `out` has room for `capacity` >= n floats (caller
                // contract, checked above).
                std::memcpy(out, v.data(), v.size() * sizeof(float));
            }
            return HURRAY_OK;
        });
    });
}

HURRAY_C_API HurrayStatus hurray_file_tensor_descriptor_bytes(const HurrayFile* file, uint64_t index,
                                                              uint8_t* out, size_t capacity, size_t* out_len) {
    static constexpr const char* kFn = "hurray_file_tensor_descriptor_bytes";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{file, "file"}, {out_len, "out_len"}}); s != HURRAY_OK) {
            return s;
        }
        if (const HurrayStatus s = check_tensor_index(kFn, file, index); s != HURRAY_OK) {
            return s;
        }
        auto bytes = file->reader.descriptor_bytes(static_cast<size_t>(index));
        if (!bytes.ok()) {
            return fail(bytes.error());
        }
        const hurray::SharedBuffer& b = bytes.value_unchecked();
        *out_len = b.size();
        if (out == nullptr || capacity < b.size()) {
            return fail(HURRAY_ERR_BUFFER_TOO_SMALL, kFn,
                        "the descriptor has " + std::to_string(b.size()) + " bytes; capacity is " +
                            std::to_string(out == nullptr ? 0 : capacity));
        }
        // SAFETY: `out` has room for `capacity` >= b.size() bytes (caller
        // contract, checked above); the source is the file's own memory.
        std::memcpy(out, b.data(), b.size());
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_file_kv_count(const HurrayFile* file, uint64_t* out) {
    return get_count("hurray_file_kv_count", file, out,
                     [](const hurray::FileReader& reader) { return reader.kv().size(); });
}

HURRAY_C_API HurrayStatus hurray_file_kv_key(const HurrayFile* file, uint64_t index, const char** key,
                                             size_t* len) {
    static constexpr const char* kFn = "hurray_file_kv_key";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{file, "file"}, {key, "key"}, {len, "len"}}); s != HURRAY_OK) {
            return s;
        }
        const auto& entries = file->reader.kv().entries();
        if (index >= entries.size()) {
            return out_of_range(kFn, "KV index", index, entries.size());
        }
        const std::string& k = entries[static_cast<size_t>(index)].key;
        *key = k.c_str();
        *len = k.size();
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_file_kv_type(const HurrayFile* file, const char* key, size_t key_len,
                                              uint8_t* type) {
    return kv_get(
        "hurray_file_kv_type", file, key, key_len, type,
        [](const hurray::KvMetadata& kv, std::string_view k) -> hurray::Result<uint8_t> {
            const hurray::KvValue* value = kv.find(k);
            if (value == nullptr) {
                return hurray::Error(hurray::ErrorCode::kNotFound, "KV key \"" + std::string(k) + "\": no such key");
            }
            return value->tag();
        },
        [&](uint8_t tag) { *type = tag; });
}

HURRAY_C_API HurrayStatus hurray_file_kv_get_string(const HurrayFile* file, const char* key, size_t key_len,
                                                    const char** value, size_t* len) {
    return kv_get_sized("hurray_file_kv_get_string", file, key, key_len, value, len, &hurray::KvMetadata::get_string,
                        [](std::string_view s) {
                            // The view covers a whole std::string held by the file: NUL-terminated.
                            return s.data();
                        });
}

HURRAY_C_API HurrayStatus hurray_file_kv_get_int64(const HurrayFile* file, const char* key, size_t key_len,
                                                   int64_t* value) {
    return kv_get_scalar("hurray_file_kv_get_int64", file, key, key_len, value, &hurray::KvMetadata::get_int64);
}

HURRAY_C_API HurrayStatus hurray_file_kv_get_uint64(const HurrayFile* file, const char* key, size_t key_len,
                                                    uint64_t* value) {
    return kv_get_scalar("hurray_file_kv_get_uint64", file, key, key_len, value, &hurray::KvMetadata::get_uint64);
}

HURRAY_C_API HurrayStatus hurray_file_kv_get_float64(const HurrayFile* file, const char* key, size_t key_len,
                                                     double* value) {
    return kv_get_scalar("hurray_file_kv_get_float64", file, key, key_len, value, &hurray::KvMetadata::get_float64);
}

HURRAY_C_API HurrayStatus hurray_file_kv_get_bool(const HurrayFile* file, const char* key, size_t key_len,
                                                  uint8_t* value) {
    return kv_get_scalar("hurray_file_kv_get_bool", file, key, key_len, value, &hurray::KvMetadata::get_bool);
}

}  // extern "C"

// ---------------------------------------------------------------------------
// KV getters for bytes and arrays
// ---------------------------------------------------------------------------

namespace {

// The key as KV messages show it: quoted, cut after 64 bytes.
std::string quoted_key(std::string_view key) {
    constexpr size_t kShown = 64;
    return "KV '" + std::string(key.substr(0, kShown)) + (key.size() > kShown ? "...'" : "'");
}

// The elements of the array value of `key` when they are of type `want`
// (`Vector`, the KvArray alternative of that type): kNotFound when the key
// is absent, kTypeMismatch when the value is not an array or holds
// elements of another type.
template <typename Vector>
hurray::Result<const Vector*> array_elements(const hurray::KvMetadata& kv, std::string_view key,
                                             hurray::KvType want) {
    auto array = kv.get_array(key);
    if (!array.ok()) {
        return array.error();
    }
    const hurray::KvArray& a = *array.value_unchecked();
    const auto* elements = std::get_if<Vector>(&a.values);
    if (elements == nullptr) {
        return hurray::Error(hurray::ErrorCode::kTypeMismatch,
                             quoted_key(key) + ": holds an array of " +
                                 std::string(hurray::kv_type_name(static_cast<uint8_t>(a.element_type()))) +
                                 ", not an array of " + std::string(hurray::kv_type_name(static_cast<uint8_t>(want))));
    }
    return elements;
}

// An array getter: checks the file and key, finds the elements of type
// `want` and hands them to `store`, which returns the status. The output
// pointers are checked by the caller, before.
template <typename Vector, typename Store>
HurrayStatus kv_array_get(const char* function, const HurrayFile* file, const char* key, size_t key_len,
                          hurray::KvType want, Store&& store) {
    return guarded(function, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(function, {{file, "file"}, {key, "key"}}); s != HURRAY_OK) {
            return s;
        }
        // SAFETY: the caller guarantees `key_len` readable bytes at `key`.
        auto elements = array_elements<Vector>(file->reader.kv(), std::string_view(key, key_len), want);
        if (!elements.ok()) {
            return fail(elements.error());
        }
        return store(*elements.value_unchecked());
    });
}

// Where an empty value points: callers always get a non-NULL address.
constexpr uint8_t kNoByte = 0;
constexpr int64_t kNoInt64 = 0;
constexpr uint64_t kNoUint64 = 0;
constexpr double kNoFloat64 = 0;

// A borrowed typed array getter (int64, uint64, float64): the elements of
// the file's own vector, valid while the file is open.
template <typename T>
HurrayStatus kv_get_numbers(const char* function, const HurrayFile* file, const char* key, size_t key_len,
                            hurray::KvType want, const T* empty, const T** values, size_t* count) {
    if (const HurrayStatus s = require(function, {{values, "values"}, {count, "count"}}); s != HURRAY_OK) {
        return s;
    }
    return kv_array_get<std::vector<T>>(function, file, key, key_len, want,
                                        [&](const std::vector<T>& v) -> HurrayStatus {
                                            *values = v.empty() ? empty : v.data();
                                            *count = v.size();
                                            return HURRAY_OK;
                                        });
}

/// An element getter of a string or bytes array: element `index` of the
/// array of `Element`s (type `want`), its address as `address` gives it in
/// `*value` and its size in `*len`.
template <typename Element, typename Out, typename Address>
HurrayStatus kv_get_element(const char* function, const HurrayFile* file, const char* key, size_t key_len,
                            hurray::KvType want, size_t index, const Out** value, size_t* len, Address&& address) {
    if (const HurrayStatus s = require(function, {{value, "value"}, {len, "len"}}); s != HURRAY_OK) {
        return s;
    }
    return kv_array_get<std::vector<Element>>(
        function, file, key, key_len, want, [&](const std::vector<Element>& v) -> HurrayStatus {
            if (index >= v.size()) {
                return out_of_range(function, "array index", index, v.size());
            }
            *value = address(v[index]);
            *len = v[index].size();
            return HURRAY_OK;
        });
}

}  // namespace

extern "C" {

HURRAY_C_API HurrayStatus hurray_file_kv_get_bytes(const HurrayFile* file, const char* key, size_t key_len,
                                                   const uint8_t** value, size_t* len) {
    return kv_get_sized("hurray_file_kv_get_bytes", file, key, key_len, value, len, &hurray::KvMetadata::get_bytes,
                        [](std::span<const uint8_t> bytes) {
                            // The span covers a vector held by the file: valid while it is open.
                            return bytes.empty() ? &kNoByte : bytes.data();
                        });
}

HURRAY_C_API HurrayStatus hurray_file_kv_get_array_info(const HurrayFile* file, const char* key, size_t key_len,
                                                        uint8_t* element_type, size_t* count) {
    if (count == nullptr) {
        return null_argument("hurray_file_kv_get_array_info", "count");
    }
    return kv_get(
        "hurray_file_kv_get_array_info", file, key, key_len, element_type,
        [](const hurray::KvMetadata& kv, std::string_view k) { return kv.get_array(k); },
        [&](const hurray::KvArray* array) {
            *element_type = static_cast<uint8_t>(array->element_type());
            *count = array->size();
        });
}

HURRAY_C_API HurrayStatus hurray_file_kv_get_int64_array(const HurrayFile* file, const char* key, size_t key_len,
                                                         const int64_t** values, size_t* count) {
    return kv_get_numbers("hurray_file_kv_get_int64_array", file, key, key_len, hurray::KvType::kInt64, &kNoInt64,
                          values, count);
}

HURRAY_C_API HurrayStatus hurray_file_kv_get_uint64_array(const HurrayFile* file, const char* key, size_t key_len,
                                                          const uint64_t** values, size_t* count) {
    return kv_get_numbers("hurray_file_kv_get_uint64_array", file, key, key_len, hurray::KvType::kUint64,
                          &kNoUint64, values, count);
}

HURRAY_C_API HurrayStatus hurray_file_kv_get_float64_array(const HurrayFile* file, const char* key, size_t key_len,
                                                           const double** values, size_t* count) {
    return kv_get_numbers("hurray_file_kv_get_float64_array", file, key, key_len, hurray::KvType::kFloat64,
                          &kNoFloat64, values, count);
}

HURRAY_C_API HurrayStatus hurray_file_kv_get_bool_array(const HurrayFile* file, const char* key, size_t key_len,
                                                        uint8_t* out, size_t* count) {
    static constexpr const char* kFn = "hurray_file_kv_get_bool_array";
    if (const HurrayStatus s = require(kFn, {{count, "count"}}); s != HURRAY_OK) {
        return s;
    }
    return kv_array_get<std::vector<bool>>(
        kFn, file, key, key_len, hurray::KvType::kBool, [&](const std::vector<bool>& v) -> HurrayStatus {
            const size_t capacity = out == nullptr ? 0 : *count;
            *count = v.size();
            if (capacity < v.size()) {
                return fail(HURRAY_ERR_BUFFER_TOO_SMALL, kFn,
                            "out holds " + std::to_string(capacity) + " element(s), the array has " +
                                std::to_string(v.size()) + " (*count now holds that length)");
            }
            for (size_t i = 0; i < v.size(); ++i) {
                // SAFETY: the caller guarantees `capacity` writable bytes at
                // `out`, and i < v.size() <= capacity.
                out[i] = v[i] ? 1 : 0;
            }
            return HURRAY_OK;
        });
}

HURRAY_C_API HurrayStatus hurray_file_kv_get_string_array_element(const HurrayFile* file, const char* key,
                                                                  size_t key_len, size_t index, const char** value,
                                                                  size_t* len) {
    return kv_get_element<std::string>("hurray_file_kv_get_string_array_element", file, key, key_len,
                                       hurray::KvType::kString, index, value, len, [](const std::string& element) {
                                           // A std::string held by the file: NUL-terminated, valid while it is open.
                                           return element.c_str();
                                       });
}

HURRAY_C_API HurrayStatus hurray_file_kv_get_bytes_array_element(const HurrayFile* file, const char* key,
                                                                 size_t key_len, size_t index, const uint8_t** value,
                                                                 size_t* len) {
    return kv_get_element<std::vector<uint8_t>>("hurray_file_kv_get_bytes_array_element", file, key, key_len,
                                                hurray::KvType::kBytes, index, value, len,
                                                [](const std::vector<uint8_t>& element) {
                                                    // A vector held by the file: valid while it is open.
                                                    return element.empty() ? &kNoByte : element.data();
                                                });
}

}  // extern "C"
