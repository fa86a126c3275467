// SPDX-License-Identifier: Apache-2.0
// The C ABI's file writer over hurray::FileWriter: atomic files at a path or
// sequential output to a caller's descriptor, tensors given whole (memory or
// a buffer list) or in pieces, KV entries of every type, finish and abort.
#include "c/c_internal.hpp"

#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hurray/io/byte_sink.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/kv_metadata.hpp"

using hurray::c::fail;
using hurray::c::guarded;
using hurray::c::null_argument;
using hurray::c::require;
using hurray::c::unknown_flags;

/// Behind `HurrayFileWriter*`: the C++ writer and, in descriptor mode, the
/// sink it writes to. The sink is declared first so that it is destroyed
/// after the writer, which points to it.
struct HurrayFileWriter {
    /// The sink over the caller's descriptor (hurray_file_writer_create_fd);
    /// null for an atomic file, whose sink the writer owns itself.
    std::unique_ptr<hurray::FdSink> fd_sink;
    /// The writer.
    hurray::FileWriter writer;
};

namespace {

constexpr uint32_t kKnownWriterFlags =
    HURRAY_FILE_WRITER_SORTED_INDEX | HURRAY_FILE_WRITER_NO_FSYNC | HURRAY_FILE_WRITER_NO_DESCRIPTOR_TABLE;

// Writer options for `flags`; false when an unknown bit is set.
bool writer_options_from_flags(uint32_t flags, hurray::FileWriterOptions& options) {
    if ((flags & ~kKnownWriterFlags) != 0) {
        return false;
    }
    options.sorted_index = (flags & HURRAY_FILE_WRITER_SORTED_INDEX) != 0;
    options.descriptor_table = (flags & HURRAY_FILE_WRITER_NO_DESCRIPTOR_TABLE) == 0;
    return true;
}

// HURRAY_OK, or the status of `status`'s error (recorded as the last error).
HurrayStatus to_status(const hurray::Status& status) { return status.ok() ? HURRAY_OK : fail(status.error()); }

// Whether `n` fits a size_t: a byte count of the caller's memory must.
bool fits_size_t(uint64_t n) { return static_cast<uint64_t>(static_cast<size_t>(n)) == n; }

// Whether `n` fits the format's uint32 length and count fields.
bool fits_u32(uint64_t n) { return n <= UINT32_MAX; }

// A length or element count above what the format's uint32 fields hold.
HurrayStatus too_long(const char* function, const char* what, uint64_t n) {
    return fail(HURRAY_ERR_INVALID_ARGUMENT, function,
                std::string(what) + ": " + std::to_string(n) +
                    " exceeds 4294967295, the most the format's uint32 length and count fields hold");
}

// "name[i]", for the message about a NULL element of an array argument.
std::string element_name(const char* array, uint64_t i) { return std::string(array) + "[" + std::to_string(i) + "]"; }

// A size mismatch between what the caller gives and what `desc` declares
// (the library's kSizeMismatch, so the same status as the C++ writer's).
HurrayStatus buffer_count_mismatch(std::string_view name, uint64_t given, size_t declared) {
    return fail(hurray::Error(hurray::ErrorCode::kSizeMismatch,
                              "tensor \"" + std::string(name) + "\": " + std::to_string(given) +
                                  " buffers given, the descriptor declares " + std::to_string(declared)));
}

// Moves a created writer (and its descriptor sink, if any) into a new handle.
HurrayStatus publish(hurray::Result<hurray::FileWriter>&& created, std::unique_ptr<hurray::FdSink> sink,
                     HurrayFileWriter** out) {
    if (!created.ok()) {
        return fail(created.error());
    }
    auto handle = std::make_unique<HurrayFileWriter>(
        HurrayFileWriter{std::move(sink), std::move(created).value_unchecked()});
    *out = hurray::c::publish_handle(std::move(handle));
    return HURRAY_OK;
}

// A KV setter: checks the writer and key, lets `make` build the value (it
// checks its own pointer arguments), checks key and value as the file
// format requires (check_kv) and stores them, replacing an earlier value of
// the key. Nothing is stored on failure.
template <typename Make>
HurrayStatus kv_set(const char* function, HurrayFileWriter* writer, const char* key, size_t key_len, Make&& make) {
    return guarded(function, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(function, {{writer, "writer"}, {key, "key"}}); s != HURRAY_OK) {
            return s;
        }
        hurray::KvValue value;
        if (const HurrayStatus s = make(value); s != HURRAY_OK) {
            return s;
        }
        // SAFETY: the caller guarantees `key_len` readable bytes at `key`.
        std::string k(key, key_len);
        // Checked on a one-entry copy first, so that a bad key or value is
        // reported now (not by finish) and never reaches the writer.
        hurray::KvMetadata probe;
        if (const HurrayStatus s = to_status(probe.set(k, value)); s != HURRAY_OK) {
            return s;
        }
        if (const HurrayStatus s = to_status(hurray::check_kv(probe)); s != HURRAY_OK) {
            return s;
        }
        return to_status(writer->writer.kv().set(std::move(k), std::move(value)));
    });
}

// Copies `count` elements at `values` (the argument named `name`) into a
// vector; `values` may be NULL only when count is 0. The format stores
// lengths and element counts as uint32.
template <typename T>
HurrayStatus copy_array(const char* function, const char* name, const T* values, size_t count,
                        std::vector<T>& out) {
    if (!fits_u32(count)) {
        return too_long(function, name, count);
    }
    if (count == 0) {
        return HURRAY_OK;
    }
    if (const HurrayStatus s = require(function, {{values, name}}); s != HURRAY_OK) {
        return s;
    }
    // SAFETY: the caller guarantees `count` readable elements at `values`
    // (non-NULL, checked above); count <= UINT32_MAX, and the vector computes
    // its own byte size.
    out.assign(values, values + count);
    return HURRAY_OK;
}

/// A scalar KV setter: stores `make(value)` as the value of `key` (see
/// kv_set).
template <typename T>
HurrayStatus kv_set_scalar(const char* function, HurrayFileWriter* writer, const char* key, size_t key_len, T value,
                           hurray::KvValue (*make)(T)) {
    return kv_set(function, writer, key, key_len, [&](hurray::KvValue& v) -> HurrayStatus {
        v = make(value);
        return HURRAY_OK;
    });
}

/// An array KV setter: copies the `count` elements at `values` (the argument
/// `name`; see copy_array) and stores `make(elements)` as the value of `key`
/// (see kv_set).
template <typename T, typename Make>
HurrayStatus kv_set_array(const char* function, HurrayFileWriter* writer, const char* key, size_t key_len,
                          const char* name, const T* values, size_t count, Make&& make) {
    return kv_set(function, writer, key, key_len, [&](hurray::KvValue& v) -> HurrayStatus {
        std::vector<T> elements;
        if (const HurrayStatus s = copy_array(function, name, values, count, elements); s != HURRAY_OK) {
            return s;
        }
        v = make(std::move(elements));
        return HURRAY_OK;
    });
}

}  // namespace

extern "C" {

// ---------------------------------------------------------------------------
// Creation
// ---------------------------------------------------------------------------

HURRAY_C_API HurrayStatus hurray_file_writer_create(const char* path, uint32_t flags, HurrayFileWriter** out) {
    static constexpr const char* kFn = "hurray_file_writer_create";
    return hurray::c::guarded_out(kFn, out, {{path, "path"}}, [&]() -> HurrayStatus {
        hurray::FileWriterOptions options;
        if (!writer_options_from_flags(flags, options)) {
            return unknown_flags(kFn, flags);
        }
        const hurray::Durability durability = (flags & HURRAY_FILE_WRITER_NO_FSYNC) != 0
                                                  ? hurray::Durability::kAtomicOnly
                                                  : hurray::Durability::kDurable;
        // SAFETY: `path` is a NUL-terminated string (caller contract).
        return publish(hurray::FileWriter::create_file(path, options, durability), nullptr, out);
    });
}

HURRAY_C_API HurrayStatus hurray_file_writer_create_fd(int fd, uint32_t flags, HurrayFileWriter** out) {
    static constexpr const char* kFn = "hurray_file_writer_create_fd";
    return hurray::c::guarded_out(kFn, out, {}, [&]() -> HurrayStatus {
        if (fd < 0) {
            return fail(HURRAY_ERR_INVALID_ARGUMENT, kFn, "fd " + std::to_string(fd) + " is not a file descriptor");
        }
        hurray::FileWriterOptions options;
        if (!writer_options_from_flags(flags, options)) {
            return unknown_flags(kFn, flags);
        }
        // Not owned: the caller closes the descriptor.
        auto sink = std::make_unique<hurray::FdSink>(fd, false);
        auto created = hurray::FileWriter::create(*sink, options);
        return publish(std::move(created), std::move(sink), out);
    });
}

// ---------------------------------------------------------------------------
// Tensors
// ---------------------------------------------------------------------------

HURRAY_C_API HurrayStatus hurray_file_writer_add_tensor(HurrayFileWriter* writer, const char* name, size_t name_len,
                                                        const HurrayDescriptor* desc, const void* const* buffers,
                                                        const uint64_t* sizes, uint32_t count) {
    static constexpr const char* kFn = "hurray_file_writer_add_tensor";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{writer, "writer"}, {name, "name"}, {desc, "desc"}});
            s != HURRAY_OK) {
            return s;
        }
        // SAFETY: the caller guarantees `name_len` readable bytes at `name`.
        const std::string_view tensor_name(name, name_len);
        const size_t declared = desc->descriptor.buffers.size();
        // Before anything is read from the arrays or allocated for them.
        if (count != declared) {
            return buffer_count_mismatch(tensor_name, count, declared);
        }
        std::vector<std::span<const uint8_t>> spans;
        if (const HurrayStatus s = hurray::c::buffer_spans(kFn, buffers, sizes, count, spans); s != HURRAY_OK) {
            return s;
        }
        // The C++ writer checks each size against the descriptor (kSizeMismatch)
        // and the name (valid, unique) before writing anything.
        return to_status(writer->writer.add_tensor(tensor_name, desc->descriptor, spans));
    });
}

HURRAY_C_API HurrayStatus hurray_file_writer_add_tensor_buffers(HurrayFileWriter* writer, const char* name,
                                                                size_t name_len, const HurrayDescriptor* desc,
                                                                const HurrayBufferList* buffers) {
    static constexpr const char* kFn = "hurray_file_writer_add_tensor_buffers";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s =
                require(kFn, {{writer, "writer"}, {name, "name"}, {desc, "desc"}, {buffers, "buffers"}});
            s != HURRAY_OK) {
            return s;
        }
        // SAFETY: the caller guarantees `name_len` readable bytes at `name`.
        const std::string_view tensor_name(name, name_len);
        uint64_t len = 0;
        if (const HurrayStatus s = hurray_buffer_list_len(buffers, &len); s != HURRAY_OK) {
            return s;
        }
        const size_t declared = desc->descriptor.buffers.size();
        if (len != declared) {
            return buffer_count_mismatch(tensor_name, len, declared);
        }
        std::vector<std::span<const uint8_t>> spans;
        spans.reserve(declared);
        for (size_t i = 0; i < declared; ++i) {
            HurrayBuffer* buffer = nullptr;
            if (const HurrayStatus s = hurray_buffer_list_get(buffers, i, &buffer); s != HURRAY_OK) {
                return s;
            }
            const uint64_t size = buffer->meta.byte_size;
            // A file's buffer lies in host memory (the mapping or a copy),
            // whatever device its descriptor declares; caller memory is
            // host memory only when its device tag says CPU.
            const bool from_file = !buffer->keep.empty();
            if (size > 0 && !from_file && buffer->meta.device_tag != hurray::DeviceTag::kCpu) {
                return fail(HURRAY_ERR_INVALID_TYPE, kFn,
                            "buffer " + std::to_string(i) + " has device tag " +
                                std::to_string(static_cast<unsigned>(buffer->meta.device_tag)) +
                                "; the writer reads host (CPU) memory only");
            }
            if (!fits_size_t(size)) {
                return fail(HURRAY_ERR_INVALID_ARGUMENT, kFn,
                            "buffer " + std::to_string(i) + " of " + std::to_string(size) +
                                " bytes does not fit in memory (size_t)");
            }
            if (size > 0 && buffer->data == nullptr) {
                return fail(HURRAY_ERR_INVALID_ARGUMENT, kFn, "buffer " + std::to_string(i) + " has no data");
            }
            // SAFETY: a live CPU buffer handle: `byte_size` readable bytes at
            // `data`, kept alive by the list (a file's share, or the caller's
            // memory until its release callback) for the duration of the call.
            spans.emplace_back(static_cast<const uint8_t*>(buffer->data), static_cast<size_t>(size));
        }
        return to_status(writer->writer.add_tensor(tensor_name, desc->descriptor, spans));
    });
}

HURRAY_C_API HurrayStatus hurray_file_writer_begin_tensor(HurrayFileWriter* writer, const char* name,
                                                          size_t name_len, const HurrayDescriptor* desc) {
    static constexpr const char* kFn = "hurray_file_writer_begin_tensor";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{writer, "writer"}, {name, "name"}, {desc, "desc"}});
            s != HURRAY_OK) {
            return s;
        }
        // SAFETY: the caller guarantees `name_len` readable bytes at `name`.
        return to_status(writer->writer.begin_tensor(std::string_view(name, name_len), desc->descriptor));
    });
}

HURRAY_C_API HurrayStatus hurray_file_writer_write(HurrayFileWriter* writer, const void* data, size_t len) {
    return hurray::c::write_bytes("hurray_file_writer_write", writer, data, len, [&](std::span<const uint8_t> piece) {
        return to_status(writer->writer.write_data(piece));
    });
}

HURRAY_C_API HurrayStatus hurray_file_writer_end_tensor(HurrayFileWriter* writer) {
    static constexpr const char* kFn = "hurray_file_writer_end_tensor";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{writer, "writer"}}); s != HURRAY_OK) {
            return s;
        }
        return to_status(writer->writer.end_tensor());
    });
}

// ---------------------------------------------------------------------------
// KV metadata
// ---------------------------------------------------------------------------

HURRAY_C_API HurrayStatus hurray_file_writer_set_string(HurrayFileWriter* writer, const char* key, size_t key_len,
                                                        const char* value, size_t len) {
    static constexpr const char* kFn = "hurray_file_writer_set_string";
    return kv_set(kFn, writer, key, key_len, [&](hurray::KvValue& v) -> HurrayStatus {
        if (len > 0) {
            if (const HurrayStatus s = require(kFn, {{value, "value"}}); s != HURRAY_OK) {
                return s;
            }
        }
        if (!fits_u32(len)) {
            return too_long(kFn, "len", len);
        }
        // SAFETY: `len` readable bytes at `value` (caller contract; non-NULL
        // when len > 0). check_kv checks UTF-8.
        v = hurray::KvValue::string(len > 0 ? std::string(value, len) : std::string());
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_file_writer_set_int64(HurrayFileWriter* writer, const char* key, size_t key_len,
                                                       int64_t value) {
    return kv_set_scalar("hurray_file_writer_set_int64", writer, key, key_len, value, &hurray::KvValue::int64);
}

HURRAY_C_API HurrayStatus hurray_file_writer_set_uint64(HurrayFileWriter* writer, const char* key, size_t key_len,
                                                        uint64_t value) {
    return kv_set_scalar("hurray_file_writer_set_uint64", writer, key, key_len, value, &hurray::KvValue::uint64);
}

HURRAY_C_API HurrayStatus hurray_file_writer_set_float64(HurrayFileWriter* writer, const char* key, size_t key_len,
                                                         double value) {
    return kv_set_scalar("hurray_file_writer_set_float64", writer, key, key_len, value, &hurray::KvValue::float64);
}

HURRAY_C_API HurrayStatus hurray_file_writer_set_bool(HurrayFileWriter* writer, const char* key, size_t key_len,
                                                      uint8_t value) {
    return kv_set_scalar("hurray_file_writer_set_bool", writer, key, key_len, value != 0, &hurray::KvValue::boolean);
}

HURRAY_C_API HurrayStatus hurray_file_writer_set_bytes(HurrayFileWriter* writer, const char* key, size_t key_len,
                                                       const void* value, size_t len) {
    return kv_set_array("hurray_file_writer_set_bytes", writer, key, key_len, "value",
                        static_cast<const uint8_t*>(value), len, &hurray::KvValue::bytes);
}

HURRAY_C_API HurrayStatus hurray_file_writer_set_int64_array(HurrayFileWriter* writer, const char* key,
                                                             size_t key_len, const int64_t* values, size_t count) {
    return kv_set_array("hurray_file_writer_set_int64_array", writer, key, key_len, "values", values, count,
                        &hurray::KvValue::int64_array);
}

HURRAY_C_API HurrayStatus hurray_file_writer_set_uint64_array(HurrayFileWriter* writer, const char* key,
                                                              size_t key_len, const uint64_t* values, size_t count) {
    return kv_set_array("hurray_file_writer_set_uint64_array", writer, key, key_len, "values", values, count,
                        &hurray::KvValue::uint64_array);
}

HURRAY_C_API HurrayStatus hurray_file_writer_set_float64_array(HurrayFileWriter* writer, const char* key,
                                                               size_t key_len, const double* values, size_t count) {
    return kv_set_array("hurray_file_writer_set_float64_array", writer, key, key_len, "values", values, count,
                        &hurray::KvValue::float64_array);
}

HURRAY_C_API HurrayStatus hurray_file_writer_set_bool_array(HurrayFileWriter* writer, const char* key,
                                                            size_t key_len, const uint8_t* values, size_t count) {
    return kv_set_array("hurray_file_writer_set_bool_array", writer, key, key_len, "values", values, count,
                        [](std::vector<uint8_t>&& raw) {
                            std::vector<bool> elements(raw.size());
                            for (size_t i = 0; i < raw.size(); ++i) {
                                elements[i] = raw[i] != 0;
                            }
                            return hurray::KvValue::bool_array(std::move(elements));
                        });
}

HURRAY_C_API HurrayStatus hurray_file_writer_set_string_array(HurrayFileWriter* writer, const char* key,
                                                              size_t key_len, const char* const* values,
                                                              const size_t* lens, size_t count) {
    static constexpr const char* kFn = "hurray_file_writer_set_string_array";
    return kv_set(kFn, writer, key, key_len, [&](hurray::KvValue& v) -> HurrayStatus {
        std::vector<const char*> pointers;
        if (const HurrayStatus s = copy_array(kFn, "values", values, count, pointers); s != HURRAY_OK) {
            return s;
        }
        std::vector<std::string> elements;
        elements.reserve(count);
        for (size_t i = 0; i < count; ++i) {
            // SAFETY: `lens`, when not NULL, has `count` readable elements
            // (caller contract).
            const bool has_len = lens != nullptr;
            const size_t n = has_len ? lens[i] : 0;
            if (!fits_u32(n)) {
                return too_long(kFn, element_name("lens", i).c_str(), n);
            }
            if (pointers[i] == nullptr) {
                if (has_len && n == 0) {
                    elements.emplace_back();
                    continue;
                }
                return null_argument(kFn, element_name("values", i).c_str());
            }
            // SAFETY: `n` readable bytes at values[i], or a NUL-terminated
            // string when `lens` is NULL (caller contract).
            elements.emplace_back(has_len ? std::string(pointers[i], n) : std::string(pointers[i]));
        }
        v = hurray::KvValue::string_array(std::move(elements));
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_file_writer_set_bytes_array(HurrayFileWriter* writer, const char* key,
                                                             size_t key_len, const void* const* values,
                                                             const size_t* lens, size_t count) {
    static constexpr const char* kFn = "hurray_file_writer_set_bytes_array";
    return kv_set(kFn, writer, key, key_len, [&](hurray::KvValue& v) -> HurrayStatus {
        std::vector<const void*> pointers;
        if (const HurrayStatus s = copy_array(kFn, "values", values, count, pointers); s != HURRAY_OK) {
            return s;
        }
        std::vector<size_t> lengths;
        if (const HurrayStatus s = copy_array(kFn, "lens", lens, count, lengths); s != HURRAY_OK) {
            return s;
        }
        std::vector<std::vector<uint8_t>> elements(count);
        for (size_t i = 0; i < count; ++i) {
            const auto* bytes = static_cast<const uint8_t*>(pointers[i]);
            if (lengths[i] > 0 && bytes == nullptr) {
                return null_argument(kFn, element_name("values", i).c_str());
            }
            if (!fits_u32(lengths[i])) {
                return too_long(kFn, element_name("lens", i).c_str(), lengths[i]);
            }
            if (lengths[i] > 0) {
                // SAFETY: `lengths[i]` readable bytes at `bytes` (caller
                // contract; non-NULL, checked above).
                elements[i].assign(bytes, bytes + lengths[i]);
            }
        }
        v = hurray::KvValue::bytes_array(std::move(elements));
        return HURRAY_OK;
    });
}

// ---------------------------------------------------------------------------
// Finish and abort
// ---------------------------------------------------------------------------

HURRAY_C_API HurrayStatus hurray_file_writer_finish(HurrayFileWriter** writer) {
    static constexpr const char* kFn = "hurray_file_writer_finish";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{writer, "writer"}}); s != HURRAY_OK) {
            return s;
        }
        if (*writer == nullptr) {
            return null_argument(kFn, "*writer");
        }
        if (const HurrayStatus s = hurray::c::retire_handle(kFn, "*writer", *writer); s != HURRAY_OK) {
            return s;
        }
        // SAFETY: a live handle from hurray_file_writer_create*, finished or
        // aborted once (caller contract). Ownership moves here and the
        // caller's pointer is cleared first, so the handle is destroyed
        // exactly once whatever finish() returns (an exception included).
        const std::unique_ptr<HurrayFileWriter> owned(std::exchange(*writer, nullptr));
        // On failure, destroying the writer removes an atomic file's
        // temporary file; the target path keeps its old content.
        return to_status(owned->writer.finish());
    });
}

HURRAY_C_API HurrayStatus hurray_file_writer_abort(HurrayFileWriter** writer) {
    static constexpr const char* kFn = "hurray_file_writer_abort";
    if (const HurrayStatus s = require(kFn, {{writer, "writer"}}); s != HURRAY_OK) {
        return s;
    }
    // SAFETY: NULL or a live handle from hurray_file_writer_create*, aborted
    // or finished once (caller contract). Destroying the writer removes an
    // atomic file's temporary file (AtomicFileSink never throws there) and
    // leaves a caller's descriptor open.
    if (*writer != nullptr) {
        if (const HurrayStatus s = hurray::c::retire_handle(kFn, "*writer", *writer); s != HURRAY_OK) {
            return s;
        }
    }
    delete std::exchange(*writer, nullptr);
    return HURRAY_OK;
}

}  // extern "C"
