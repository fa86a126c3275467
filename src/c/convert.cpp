// SPDX-License-Identifier: Apache-2.0
// The C ABI of hurray::convert: hurray_convert_file, hurray_detect_format and
// HurraySource, a read-only view of any file the converters read (HRRYFILE,
// SafeTensors, GGUF, .npy, .npz). Without hurray::convert in the build
// (HURRAY_C_HAVE_CONVERT undefined) every function but hurray_format_name and
// hurray_convert_options_init returns HURRAY_ERR_UNSUPPORTED.
#include "c/c_internal.hpp"

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#ifdef HURRAY_C_HAVE_CONVERT
#include <utility>
#include <vector>

#include "hurray/convert/convert.hpp"
#include "hurray/convert/format.hpp"
#include "hurray/convert/tensor_source.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/file_writer.hpp"
#endif

using hurray::c::fail;
using hurray::c::guarded;
using hurray::c::out_of_range;
using hurray::c::require;

#ifdef HURRAY_C_HAVE_CONVERT
/// Behind `HurraySource*`: an opened source, shared with the buffers made from it.
struct HurraySource {
    /// The source (immutable; read and view are thread-safe).
    std::shared_ptr<const hurray::convert::TensorSource> source;
};
#else
/// Behind `HurraySource*` in a build without hurray::convert: never created.
struct HurraySource {};
#endif

namespace {

// The first version of HurrayConvertOptions (this header's): the smallest
// struct_size accepted, and the largest this library knows.
constexpr uint32_t kOptionsSize = sizeof(HurrayConvertOptions);

constexpr const char* kFormatNames[] = {"unknown", "hrryfile", "stream", "safetensors",  // NOLINT(*-avoid-c-arrays)
                                        "gguf",    "npy",      "npz"};

#ifndef HURRAY_C_HAVE_CONVERT
HurrayStatus not_built(const char* function) {
    return fail(HURRAY_ERR_UNSUPPORTED, function,
                "this libhurray_c was built without hurray::convert (HURRAY_BUILD_CONVERT=OFF)");
}
#else
namespace fmt = hurray::convert;

// The C++ options of `options` (NULL: the defaults), or a status.
HurrayStatus options_from_c(const char* function, const HurrayConvertOptions* options, fmt::ConvertOptions& out) {
    if (options == nullptr) {
        return HURRAY_OK;
    }
    if (options->struct_size != kOptionsSize) {
        return fail(HURRAY_ERR_INVALID_ARGUMENT, function,
                    "options->struct_size is " + std::to_string(options->struct_size) + "; this library reads " +
                        std::to_string(kOptionsSize) + " (call hurray_convert_options_init)");
    }
    if (options->to > HURRAY_FORMAT_NPZ) {
        return fail(HURRAY_ERR_INVALID_ARGUMENT, function,
                    "options->to: " + std::to_string(options->to) + " is not a HURRAY_FORMAT_* tag");
    }
    for (const uint8_t r : options->reserved) {
        if (r != 0) {
            return fail(HURRAY_ERR_INVALID_ARGUMENT, function, "options->reserved: must be zero");
        }
    }
    switch (options->dequantize_type) {
        case 0x01:
            out.dequantize_type = hurray::ElementType::kFloat16;
            break;
        case 0x02:
            out.dequantize_type = hurray::ElementType::kBFloat16;
            break;
        case 0x03:
            out.dequantize_type = hurray::ElementType::kFloat32;
            break;
        default:
            return fail(HURRAY_ERR_INVALID_ARGUMENT, function,
                        "options->dequantize_type: " + std::to_string(options->dequantize_type) +
                            " is not 0x03 (float32), 0x01 (float16) or 0x02 (bfloat16)");
    }
    out.to = static_cast<fmt::Format>(options->to);
    out.dequantize = options->dequantize != 0;
    out.verify = options->verify != 0;
    out.durable = options->durable != 0;
    if (options->chunk_bytes != 0) {
        out.chunk_bytes = options->chunk_bytes;
    }
    if (options->progress != nullptr) {
        const HurrayProgressFn progress = options->progress;
        void* const context = options->progress_context;
        out.progress = [progress, context](uint64_t done, uint64_t total) { progress(context, done, total); };
    }
    return HURRAY_OK;
}

// `HURRAY_OK` when `index` names a tensor of `source`, else out_of_range.
HurrayStatus check_index(const char* function, const HurraySource* source, uint64_t index) {
    const size_t count = source->source->tensor_count();
    return index < count ? HURRAY_OK : out_of_range(function, "tensor index", index, count);
}

// check_index, then that `buffer` is in tensor `index`'s buffer table.
HurrayStatus check_buffer(const char* function, const HurraySource* source, uint64_t index, uint32_t buffer) {
    if (const HurrayStatus s = check_index(function, source, index); s != HURRAY_OK) {
        return s;
    }
    const size_t buffers = source->source->tensor(static_cast<size_t>(index)).descriptor.buffers.size();
    return buffer < buffers ? HURRAY_OK : out_of_range(function, "buffer index", buffer, buffers);
}
#endif

}  // namespace

extern "C" {

HURRAY_C_API const char* hurray_format_name(uint8_t format) {
    return format <= HURRAY_FORMAT_NPZ ? kFormatNames[format] : "";
}

HURRAY_C_API HurrayStatus hurray_convert_options_init(HurrayConvertOptions* options) {
    static constexpr const char* kFn = "hurray_convert_options_init";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{options, "options"}}); s != HURRAY_OK) {
            return s;
        }
        *options = HurrayConvertOptions{};
        options->struct_size = kOptionsSize;
        options->to = HURRAY_FORMAT_UNKNOWN;
        options->dequantize_type = 0x03;
        options->durable = 1;
        options->chunk_bytes = uint64_t{8} << 20;
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_detect_format(const char* path, uint8_t* out_format) {
    static constexpr const char* kFn = "hurray_detect_format";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{path, "path"}, {out_format, "out_format"}}); s != HURRAY_OK) {
            return s;
        }
#ifdef HURRAY_C_HAVE_CONVERT
        std::FILE* f = std::fopen(path, "rb");
        if (f == nullptr) {
            return fail(HURRAY_ERR_IO, kFn, std::string("cannot open '") + path + "': " + std::strerror(errno));
        }
        std::vector<uint8_t> head(fmt::kDetectHeadBytes);
        const size_t n = std::fread(head.data(), 1, head.size(), f);
        const bool read_error = std::ferror(f) != 0;
        std::optional<uint64_t> size;
        if (!read_error && std::fseek(f, 0, SEEK_END) == 0) {
            const long end = std::ftell(f);
            if (end >= 0) {
                size = static_cast<uint64_t>(end);
            }
        }
        std::fclose(f);
        if (read_error) {
            return fail(HURRAY_ERR_IO, kFn, std::string("cannot read '") + path + "'");
        }
        head.resize(n);
        *out_format = static_cast<uint8_t>(fmt::detect_format(head, size));
        return HURRAY_OK;
#else
        return not_built(kFn);
#endif
    });
}

namespace {

// hurray_convert_file(_cancellable): `cancellable` (when not NULL) replaces options->progress.
HurrayStatus convert_file_c(const char* kFn, const char* in_path, const char* out_path,
                            const HurrayConvertOptions* options, HurrayCancellableProgressFn cancellable,
                            void* context, HurrayConvertReport* report) {
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{in_path, "in_path"}, {out_path, "out_path"}}); s != HURRAY_OK) {
            return s;
        }
#ifdef HURRAY_C_HAVE_CONVERT
        fmt::ConvertOptions opt;
        if (const HurrayStatus s = options_from_c(kFn, options, opt); s != HURRAY_OK) {
            return s;
        }
        if (cancellable != nullptr) {
            opt.progress = [cancellable, context](uint64_t done, uint64_t total) {
                return cancellable(context, done, total) == 0;
            };
        }
        auto done = fmt::convert_file(in_path, out_path, opt);
        if (!done.ok()) {
            return fail(done.error());
        }
        if (report != nullptr) {
            const fmt::ConvertReport& r = done.value_unchecked();
            *report = HurrayConvertReport{};
            report->from = static_cast<uint8_t>(r.from);
            report->to = static_cast<uint8_t>(r.to);
            report->verified = r.verified ? 1 : 0;
            report->tensors = r.tensors;
            report->data_bytes = r.data_bytes;
        }
        return HURRAY_OK;
#else
        (void)options;
        (void)cancellable;
        (void)context;
        (void)report;
        return not_built(kFn);
#endif
    });
}

}  // namespace

HURRAY_C_API HurrayStatus hurray_convert_file(const char* in_path, const char* out_path,
                                              const HurrayConvertOptions* options, HurrayConvertReport* report) {
    return convert_file_c("hurray_convert_file", in_path, out_path, options, nullptr, nullptr, report);
}

HURRAY_C_API HurrayStatus hurray_convert_file_cancellable(const char* in_path, const char* out_path,
                                                          const HurrayConvertOptions* options,
                                                          HurrayCancellableProgressFn progress, void* context,
                                                          HurrayConvertReport* report) {
    return convert_file_c("hurray_convert_file_cancellable", in_path, out_path, options, progress, context, report);
}

HURRAY_C_API HurrayStatus hurray_source_open(const char* path, uint32_t flags, HurraySource** out) {
    static constexpr const char* kFn = "hurray_source_open";
    return hurray::c::guarded_out(kFn, out, {{path, "path"}}, [&]() -> HurrayStatus {
        if (flags != 0) {
            return hurray::c::unknown_flags(kFn, flags);
        }
#ifdef HURRAY_C_HAVE_CONVERT
        auto opened = fmt::open_source(path);
        if (!opened.ok()) {
            return fail(opened.error());
        }
        auto handle = std::make_unique<HurraySource>();
        handle->source = std::move(opened).value_unchecked();
        *out = hurray::c::publish_handle(std::move(handle));
        return HURRAY_OK;
#else
        return not_built(kFn);
#endif
    });
}

HURRAY_C_API void hurray_source_close(HurraySource* source) { hurray_source_free(source); }

HURRAY_C_API void hurray_source_free(HurraySource* source) {
    if (source == nullptr || hurray::c::retire_handle("hurray_source_free", "source", source) != HURRAY_OK) {
        return;  // a handle that is not live (handle checks): the message is recorded
    }
    // SAFETY: `source` is a live handle from hurray_source_open, released once
    // (documented); buffers hold their own shares of the source.
    delete source;
}

#ifdef HURRAY_C_HAVE_CONVERT

HURRAY_C_API HurrayStatus hurray_source_format(const HurraySource* source, uint8_t* out_format) {
    static constexpr const char* kFn = "hurray_source_format";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{source, "source"}, {out_format, "out_format"}}); s != HURRAY_OK) {
            return s;
        }
        *out_format = static_cast<uint8_t>(source->source->format());
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_source_tensor_count(const HurraySource* source, uint64_t* out) {
    static constexpr const char* kFn = "hurray_source_tensor_count";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{source, "source"}, {out, "out"}}); s != HURRAY_OK) {
            return s;
        }
        *out = source->source->tensor_count();
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_source_tensor_name(const HurraySource* source, uint64_t index, const char** name,
                                                    size_t* len) {
    static constexpr const char* kFn = "hurray_source_tensor_name";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{source, "source"}, {name, "name"}, {len, "len"}});
            s != HURRAY_OK) {
            return s;
        }
        if (const HurrayStatus s = check_index(kFn, source, index); s != HURRAY_OK) {
            return s;
        }
        // The tensor's std::string lives as long as the source: NUL-terminated.
        const std::string& n = source->source->tensor(static_cast<size_t>(index)).name;
        *name = n.c_str();
        *len = n.size();
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_source_find(const HurraySource* source, const char* name, size_t name_len,
                                             uint64_t* index) {
    static constexpr const char* kFn = "hurray_source_find";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{source, "source"}, {name, "name"}, {index, "index"}});
            s != HURRAY_OK) {
            return s;
        }
        // SAFETY: the caller guarantees `name_len` readable bytes at `name`.
        const std::string_view wanted(name, name_len);
        const auto found = source->source->find(wanted);
        if (!found) {
            return fail(hurray::Error(hurray::ErrorCode::kNotFound,
                                      std::string("tensor \"") + std::string(wanted) + "\": no such tensor"));
        }
        *index = *found;
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_source_tensor_descriptor(const HurraySource* source, uint64_t index,
                                                          HurrayDescriptor** out) {
    static constexpr const char* kFn = "hurray_source_tensor_descriptor";
    return hurray::c::guarded_out(kFn, out, {{source, "source"}}, [&]() -> HurrayStatus {
        if (const HurrayStatus s = check_index(kFn, source, index); s != HURRAY_OK) {
            return s;
        }
        const auto& t = source->source->tensor(static_cast<size_t>(index));
        *out = hurray::c::publish_handle(std::make_unique<HurrayDescriptor>(HurrayDescriptor{t.descriptor}));
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_source_read(const HurraySource* source, uint64_t index, uint32_t buffer,
                                             uint64_t offset, void* out, size_t len) {
    static constexpr const char* kFn = "hurray_source_read";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{source, "source"}}); s != HURRAY_OK) {
            return s;
        }
        if (len > 0 && out == nullptr) {
            return hurray::c::null_argument(kFn, "out");
        }
        if (const HurrayStatus s = check_buffer(kFn, source, index, buffer); s != HURRAY_OK) {
            return s;
        }
        // SAFETY: the caller guarantees room for `len` bytes at `out` (non-NULL
        // when len > 0, checked above); the source checks the range against the
        // buffer before writing.
        const std::span<uint8_t> dest(static_cast<uint8_t*>(out), len);
        if (auto s = source->source->read(static_cast<size_t>(index), buffer, offset, dest); !s) {
            return fail(s.error());
        }
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_source_tensor_buffer(const HurraySource* source, uint64_t index, uint32_t buffer,
                                                      HurrayBuffer** out) {
    static constexpr const char* kFn = "hurray_source_tensor_buffer";
    return hurray::c::guarded_out(kFn, out, {{source, "source"}}, [&]() -> HurrayStatus {
        if (const HurrayStatus s = check_buffer(kFn, source, index, buffer); s != HURRAY_OK) {
            return s;
        }
        const auto i = static_cast<size_t>(index);
        const auto view = source->source->view(i, buffer);
        const auto& t = source->source->tensor(i);
        if (!view) {
            return fail(HURRAY_ERR_UNSUPPORTED, kFn,
                        "tensor '" + t.name + "' buffer " + std::to_string(buffer) +
                            ": the source has no zero-copy view of it (read it with hurray_source_read)");
        }
        auto handle = std::make_unique<HurrayBuffer>();
        handle->meta = t.descriptor.buffers[buffer];
        handle->keep = hurray::SharedBuffer(*view, source->source);
        handle->meta.byte_size = handle->keep.size();
        // SAFETY: the reference ABI hands out `void*`; the bytes stay read-only
        // (documented: callers never write through hurray_buffer_data_ptr). The
        // view lives as long as the source, which `keep` holds a share of.
        handle->data = const_cast<uint8_t*>(handle->keep.data());
        *out = hurray::c::publish_handle(std::move(handle));
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_source_kv(const HurraySource* source, HurrayFile** out) {
    static constexpr const char* kFn = "hurray_source_kv";
    return hurray::c::guarded_out(kFn, out, {{source, "source"}}, [&]() -> HurrayStatus {
        // An HRRYFILE with no tensors and the source's KV, in memory: the
        // hurray_file_kv_* getters read it as they read any file.
        hurray::MemorySink sink;
        auto writer = hurray::FileWriter::create(sink);
        if (!writer.ok()) {
            return fail(writer.error());
        }
        writer.value_unchecked().kv() = source->source->kv();
        if (auto s = writer.value_unchecked().finish(); !s) {
            return fail(s.error());
        }
        auto bytes = std::make_shared<const std::vector<uint8_t>>(std::move(sink).take());
        auto opened = hurray::FileReader::open_memory(*bytes, bytes);
        if (!opened.ok()) {
            return fail(opened.error());
        }
        *out = hurray::c::publish_handle(
            std::make_unique<HurrayFile>(std::move(opened).value_unchecked()));
        return HURRAY_OK;
    });
}

#else  // !HURRAY_C_HAVE_CONVERT: the same functions, each refusing.

HURRAY_C_API HurrayStatus hurray_source_format(const HurraySource*, uint8_t*) {
    return not_built("hurray_source_format");
}
HURRAY_C_API HurrayStatus hurray_source_tensor_count(const HurraySource*, uint64_t*) {
    return not_built("hurray_source_tensor_count");
}
HURRAY_C_API HurrayStatus hurray_source_tensor_name(const HurraySource*, uint64_t, const char**, size_t*) {
    return not_built("hurray_source_tensor_name");
}
HURRAY_C_API HurrayStatus hurray_source_find(const HurraySource*, const char*, size_t, uint64_t*) {
    return not_built("hurray_source_find");
}
HURRAY_C_API HurrayStatus hurray_source_tensor_descriptor(const HurraySource*, uint64_t, HurrayDescriptor** out) {
    if (out != nullptr) {
        *out = nullptr;
    }
    return not_built("hurray_source_tensor_descriptor");
}
HURRAY_C_API HurrayStatus hurray_source_read(const HurraySource*, uint64_t, uint32_t, uint64_t, void*, size_t) {
    return not_built("hurray_source_read");
}
HURRAY_C_API HurrayStatus hurray_source_tensor_buffer(const HurraySource*, uint64_t, uint32_t, HurrayBuffer** out) {
    if (out != nullptr) {
        *out = nullptr;
    }
    return not_built("hurray_source_tensor_buffer");
}
HURRAY_C_API HurrayStatus hurray_source_kv(const HurraySource*, HurrayFile** out) {
    if (out != nullptr) {
        *out = nullptr;
    }
    return not_built("hurray_source_kv");
}

#endif

}  // extern "C"
