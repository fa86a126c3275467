// SPDX-License-Identifier: Apache-2.0
// The C ABI's stream writer: HurrayWriter over the blocking hurray::StreamWriter,
// writing to a caller's fd or a write callback. Data goes from the caller's
// memory straight to the fd or callback, never copied.
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "c/c_internal.hpp"
#include "c/stream_internal.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/stream_writer.hpp"

using hurray::c::fail_stream;
using hurray::c::guarded;
using hurray::c::out_of_order;
using hurray::c::require;

namespace {

// A ByteSink over a HurrayWriteFn.
class CallbackSink final : public hurray::ByteSink {
public:
    CallbackSink(HurrayWriteFn write, void* context) noexcept : write_(write), context_(context) {}

    hurray::Status write(std::span<const uint8_t> bytes) override {
        if (bytes.empty()) {
            return hurray::Status::success();
        }
        // SAFETY: `bytes` is readable memory (the caller's data or the
        // writer's encoded descriptor) for the duration of the call; the
        // callback is told its size.
        const int32_t status = write_(context_, bytes.data(), bytes.size());
        if (status != 0) {
            return hurray::Error(hurray::ErrorCode::kIoError, "write callback returned " + std::to_string(status));
        }
        return hurray::Status::success();
    }

private:
    HurrayWriteFn write_;
    void* context_;
};

}  // namespace

/// Behind `HurrayWriter*`: the sink and the C++ writer over it.
struct HurrayWriter {
    HurrayWriter(std::unique_ptr<hurray::ByteSink> out, const hurray::StreamWriteOptions& options)
        : sink(std::move(out)), writer(*sink, options) {}

    /// The caller's fd or callback.
    std::unique_ptr<hurray::ByteSink> sink;
    /// Writes to `sink` (declared after it: constructed after, destroyed before).
    hurray::StreamWriter writer;
    /// hurray_stream_writer_finish succeeded: nothing more may be written.
    bool finished = false;
};

namespace {

HurrayStatus open_writer(const char* function, std::unique_ptr<hurray::ByteSink> sink, uint32_t flags,
                         HurrayWriter** out) {
    if ((flags & ~hurray::c::kStreamWriterFlags) != 0) {
        return hurray::c::unknown_flags(function, flags);
    }
    hurray::StreamWriteOptions options;
    options.require_producer_synced = (flags & HURRAY_STREAM_REQUIRE_PRODUCER_SYNCED) != 0;
    auto handle = std::make_unique<HurrayWriter>(std::move(sink), options);
    *out = hurray::c::publish_handle(std::move(handle));
    return HURRAY_OK;
}

// The checks every writing call starts with: not finished.
HurrayStatus require_open(const char* function, const HurrayWriter& w) {
    if (w.finished) {
        return out_of_order(function, "the stream was finished (hurray_stream_writer_finish)");
    }
    return HURRAY_OK;
}

HurrayStatus status_of(const hurray::Status& s) { return s.ok() ? HURRAY_OK : fail_stream(s.error()); }

}  // namespace

extern "C" {

HURRAY_C_API HurrayStatus hurray_stream_writer_open(int fd, uint32_t flags, HurrayWriter** out) {
    static constexpr const char* kFn = "hurray_stream_writer_open";
    return hurray::c::open_fd(kFn, fd, out, [&] {
        return open_writer(kFn, std::make_unique<hurray::FdSink>(fd, /*owns=*/false), flags, out);
    });
}

HURRAY_C_API HurrayStatus hurray_stream_writer_open_callbacks(HurrayWriteFn write, void* context, uint32_t flags,
                                                              HurrayWriter** out) {
    static constexpr const char* kFn = "hurray_stream_writer_open_callbacks";
    return hurray::c::open_callback(kFn, write, "write", out, [&] {
        return open_writer(kFn, std::make_unique<CallbackSink>(write, context), flags, out);
    });
}

HURRAY_C_API void hurray_stream_writer_close(HurrayWriter* writer) {
    // SAFETY: `writer` is NULL or a live handle from hurray_stream_writer_open*,
    // released once (documented). The FdSink does not own the fd, so nothing
    // is closed; destroying the writer and its sink does not throw.
    if (writer == nullptr || hurray::c::retire_handle("hurray_stream_writer_close", "writer", writer) != HURRAY_OK) {
        return;  // a handle that is not live (handle checks): the message is recorded
    }
    delete writer;
}

HURRAY_C_API HurrayStatus hurray_stream_write_tensor(HurrayWriter* writer, const HurrayDescriptor* desc,
                                                     const void* const* buffers, const uint64_t* sizes,
                                                     uint32_t count) {
    static constexpr const char* kFn = "hurray_stream_write_tensor";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{writer, "writer"}, {desc, "desc"}}); s != HURRAY_OK) {
            return s;
        }
        std::vector<std::span<const uint8_t>> spans;
        if (const HurrayStatus s = hurray::c::buffer_spans(kFn, buffers, sizes, count, spans); s != HURRAY_OK) {
            return s;
        }
        if (const HurrayStatus s = require_open(kFn, *writer); s != HURRAY_OK) {
            return s;
        }
        return status_of(writer->writer.write_tensor(desc->descriptor, spans));
    });
}

HURRAY_C_API HurrayStatus hurray_stream_begin_tensor(HurrayWriter* writer, const HurrayDescriptor* desc) {
    static constexpr const char* kFn = "hurray_stream_begin_tensor";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{writer, "writer"}, {desc, "desc"}}); s != HURRAY_OK) {
            return s;
        }
        if (const HurrayStatus s = require_open(kFn, *writer); s != HURRAY_OK) {
            return s;
        }
        return status_of(writer->writer.begin_tensor(desc->descriptor));
    });
}

HURRAY_C_API HurrayStatus hurray_stream_write(HurrayWriter* writer, const void* data, size_t len) {
    static constexpr const char* kFn = "hurray_stream_write";
    return hurray::c::write_bytes(kFn, writer, data, len, [&](std::span<const uint8_t> piece) -> HurrayStatus {
        if (const HurrayStatus s = require_open(kFn, *writer); s != HURRAY_OK) {
            return s;
        }
        return status_of(writer->writer.write_data(piece));
    });
}

HURRAY_C_API HurrayStatus hurray_stream_end_tensor(HurrayWriter* writer) {
    static constexpr const char* kFn = "hurray_stream_end_tensor";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{writer, "writer"}}); s != HURRAY_OK) {
            return s;
        }
        if (const HurrayStatus s = require_open(kFn, *writer); s != HURRAY_OK) {
            return s;
        }
        return status_of(writer->writer.end_tensor());
    });
}

HURRAY_C_API HurrayStatus hurray_stream_writer_finish(HurrayWriter* writer) {
    static constexpr const char* kFn = "hurray_stream_writer_finish";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{writer, "writer"}}); s != HURRAY_OK) {
            return s;
        }
        if (writer->finished) {
            return HURRAY_OK;
        }
        const HurrayStatus status = status_of(writer->writer.finish());
        writer->finished = status == HURRAY_OK;
        return status;
    });
}

}  // extern "C"
