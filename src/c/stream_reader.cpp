// SPDX-License-Identifier: Apache-2.0
// The C ABI's stream reader: HurrayReader over the blocking hurray::StreamReader,
// reading from a caller's fd, a read callback or memory. Opening reads the
// first 8 bytes to turn an HRRYFILE container away (ADR-011: separate entry
// points); those bytes are then replayed to the reader.
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <utility>

#include "c/c_internal.hpp"
#include "c/stream_internal.hpp"
#include "hurray/core/describe.hpp"
#include "hurray/io/byte_source.hpp"
#include "hurray/io/file_format.hpp"
#include "hurray/io/stream_reader.hpp"

using hurray::c::fail;
using hurray::c::fail_stream;
using hurray::c::guarded;
using hurray::c::out_of_order;
using hurray::c::require;

namespace {

// How many first bytes opening reads: the length of the "HRRYFILE" magic.
constexpr size_t kPeekSize = 8;

// Largest buffer hurray_stream_read_buffer allocates (as documented: 1 GiB,
// the C++ reader's default max_tensor_bytes).
constexpr uint64_t kMaxReadBuffer = uint64_t{1} << 30;

// Largest alignment hurray_stream_read_buffer asks the allocator for; a larger
// declared alignment is reported as what the address really has.
constexpr size_t kMaxAllocAlignment = 4096;

// A ByteSource over a HurrayReadFn.
class CallbackSource final : public hurray::ByteSource {
public:
    CallbackSource(HurrayReadFn read, void* context) noexcept : read_(read), context_(context) {}

    hurray::Result<size_t> read_some(std::span<uint8_t> out) override {
        // SAFETY: `out` is writable memory of out.size() bytes owned by the
        // reader; the callback was vouched for by the caller and is told that
        // size.
        const int64_t n = read_(context_, out.data(), out.size());
        if (n < 0) {
            return hurray::Error(hurray::ErrorCode::kIoError, "read callback returned " + std::to_string(n));
        }
        if (static_cast<uint64_t>(n) > out.size()) {
            return hurray::Error(hurray::ErrorCode::kIoError, "read callback returned " + std::to_string(n) +
                                                                  " for a " + std::to_string(out.size()) +
                                                                  "-byte request");
        }
        return static_cast<size_t>(n);
    }

private:
    HurrayReadFn read_;
    void* context_;
};

// A ByteSource that first hands out the bytes read at open (`peek`), then
// reads from `inner`. Skips go to `inner` once the peeked bytes are used, so
// a regular file is still skipped by seeking.
class PeekedSource final : public hurray::ByteSource {
public:
    explicit PeekedSource(std::unique_ptr<hurray::ByteSource> inner) noexcept : inner_(std::move(inner)) {}

    // Reads up to kPeekSize bytes (fewer only at the end of input).
    hurray::Status peek() {
        auto n = inner_->read_full(std::span<uint8_t>(prefix_));
        if (!n.ok()) {
            return n.error();
        }
        prefix_len_ = n.value_unchecked();
        ended_ = prefix_len_ < prefix_.size();
        return hurray::Status::success();
    }

    [[nodiscard]] std::span<const uint8_t> prefix() const noexcept {
        return std::span<const uint8_t>(prefix_).first(prefix_len_);
    }

    hurray::Result<size_t> read_some(std::span<uint8_t> out) override {
        if (prefix_pos_ < prefix_len_) {
            const size_t n = std::min(out.size(), prefix_len_ - prefix_pos_);
            // SAFETY: `n` bytes fit in `out` and lie inside the peeked bytes.
            std::memcpy(out.data(), prefix_.data() + prefix_pos_, n);
            prefix_pos_ += n;
            return n;
        }
        if (ended_) {
            return size_t{0};
        }
        return inner_->read_some(out);
    }

    hurray::Result<uint64_t> skip(uint64_t n) override {
        const size_t from_prefix = static_cast<size_t>(std::min<uint64_t>(n, prefix_len_ - prefix_pos_));
        prefix_pos_ += from_prefix;
        if (from_prefix == n || ended_) {
            return uint64_t{from_prefix};
        }
        auto rest = inner_->skip(n - from_prefix);
        if (!rest.ok()) {
            return rest.error();
        }
        return from_prefix + rest.value_unchecked();
    }

private:
    std::unique_ptr<hurray::ByteSource> inner_;
    std::array<uint8_t, kPeekSize> prefix_{};
    size_t prefix_len_ = 0;
    size_t prefix_pos_ = 0;
    bool ended_ = false;  // the input ended during peek()
};

// "48 52 52 59 46 49 4c 45 ("HRRYFILE")": the first bytes of an input.
std::string describe_prefix(std::span<const uint8_t> prefix) { return hurray::leading_bytes(prefix); }

bool is_container(std::span<const uint8_t> prefix) {
    const auto& magic = hurray::kFileMagic;
    return prefix.size() >= magic.size() && std::equal(magic.begin(), magic.end(), prefix.begin());
}

hurray::StreamReadOptions options_from_flags(uint32_t flags) {
    hurray::StreamReadOptions options;
    const bool strict = (flags & HURRAY_STREAM_PERMISSIVE) == 0;
    options.descriptor.strict = strict;
    options.composite.strict = strict;
    options.require_producer_synced = (flags & HURRAY_STREAM_REQUIRE_PRODUCER_SYNCED) != 0;
    options.descriptor.libhurray_schemes = (flags & HURRAY_STREAM_SPEC_ONLY) == 0;
    options.max_tensor_bytes = kMaxReadBuffer;
    return options;
}

}  // namespace

/// Behind `HurrayReader*`: the source chain and the C++ reader over it.
struct HurrayReader {
    HurrayReader(std::unique_ptr<hurray::ByteSource> inner, const hurray::StreamReadOptions& options)
        : source(std::move(inner)), reader(source, options) {}

    /// The caller's fd, callback or memory, behind the peeked first bytes.
    PeekedSource source;
    /// Reads from `source` (declared after it: constructed after, destroyed before).
    hurray::StreamReader reader;
    /// The buffer of the current tensor that hurray_stream_read_buffer returns next.
    uint32_t next_buffer = 0;
};

namespace {

// Checks the flags, peeks at the input and publishes a reader over `inner`.
HurrayStatus open_reader(const char* function, std::unique_ptr<hurray::ByteSource> inner, uint32_t flags,
                         HurrayReader** out) {
    if ((flags & ~hurray::c::kStreamReaderFlags) != 0) {
        return hurray::c::unknown_flags(function, flags);
    }
    auto handle = std::make_unique<HurrayReader>(std::move(inner), options_from_flags(flags));
    if (auto peeked = handle->source.peek(); !peeked.ok()) {
        return fail(peeked.error());
    }
    const std::span<const uint8_t> prefix = handle->source.prefix();
    if (is_container(prefix)) {
        fail(hurray::Error(hurray::ErrorCode::kInvalidMagic,
                           std::string(function) + ": the input starts with " + describe_prefix(prefix) +
                               ": it is an HRRYFILE container, not a Hurray stream; open it with "
                               "hurray_file_open (or hurray_file_open_memory)",
                           0));
        return HURRAY_ERR_WRONG_FORMAT;
    }
    *out = hurray::c::publish_handle(std::move(handle));
    return HURRAY_OK;
}

// The reader's sticky error as a status, or HURRAY_OK.
HurrayStatus sticky(const HurrayReader& r) {
    const auto& failure = r.reader.decoder().failure();
    return failure ? fail_stream(*failure) : HURRAY_OK;
}

// The checks every data call starts with: the sticky error, then a current tensor.
HurrayStatus require_tensor(const char* function, const HurrayReader& r) {
    if (const HurrayStatus s = sticky(r); s != HURRAY_OK) {
        return s;
    }
    if (r.reader.tensor() == nullptr) {
        return out_of_order(function, "no current tensor: call hurray_stream_next first (and not after it "
                                      "reported the end of the stream)");
    }
    return HURRAY_OK;
}

// Where the next data byte belongs: (buffer, offset, bytes left in it), or
// (buffer count, 0, 0) once the tensor's data is all read.
struct Position {
    uint32_t buffer;
    uint64_t offset;
    uint64_t left;
};

Position position_of(const HurrayReader& r) {
    const hurray::StreamDecoder& d = r.reader.decoder();
    if (d.need() == hurray::StreamNeed::kData) {
        return {d.buffer_index(), d.buffer_offset(), d.need_size()};
    }
    return {static_cast<uint32_t>(r.reader.tensor()->descriptor.buffers.size()), 0, 0};
}

// A buffer handle over a new allocation of `size` bytes for `meta`.
std::unique_ptr<HurrayBuffer> new_buffer(const hurray::BufferHandle& meta, size_t size) {
    auto handle = std::make_unique<HurrayBuffer>();
    handle->meta = meta;
    if (size > 0) {
        const size_t alignment = std::min<size_t>(std::max<size_t>(meta.alignment, 1), kMaxAllocAlignment);
        // SAFETY: the block is allocated with `alignment` and handed to the
        // shared_ptr at once, which frees it with the same alignment exactly
        // once (also when allocating its control block throws).
        std::shared_ptr<uint8_t> block(static_cast<uint8_t*>(::operator new(size, std::align_val_t(alignment))),
                                       [alignment](uint8_t* p) { ::operator delete(p, std::align_val_t(alignment)); });
        handle->data = block.get();
        handle->keep = hurray::SharedBuffer(std::span<const uint8_t>(block.get(), size), std::move(block));
    }
    return handle;
}

}  // namespace

extern "C" {

HURRAY_C_API HurrayStatus hurray_stream_open(int fd, uint32_t flags, HurrayReader** out) {
    static constexpr const char* kFn = "hurray_stream_open";
    return hurray::c::open_fd(kFn, fd, out, [&] {
        return open_reader(kFn, std::make_unique<hurray::FdSource>(fd, /*owns=*/false), flags, out);
    });
}

HURRAY_C_API HurrayStatus hurray_stream_open_callbacks(HurrayReadFn read, void* context, uint32_t flags,
                                                       HurrayReader** out) {
    static constexpr const char* kFn = "hurray_stream_open_callbacks";
    return hurray::c::open_callback(kFn, read, "read", out, [&] {
        return open_reader(kFn, std::make_unique<CallbackSource>(read, context), flags, out);
    });
}

HURRAY_C_API HurrayStatus hurray_stream_open_memory(const uint8_t* bytes, size_t len, uint32_t flags,
                                                    HurrayReader** out) {
    static constexpr const char* kFn = "hurray_stream_open_memory";
    return hurray::c::guarded_out(kFn, out, {{bytes, "bytes"}}, [&] {
        // SAFETY: the caller guarantees `len` readable bytes at `bytes`, alive
        // and unchanged until the reader is closed (documented); the source
        // only reads inside them.
        return open_reader(kFn, std::make_unique<hurray::MemorySource>(std::span<const uint8_t>(bytes, len)), flags,
                           out);
    });
}

HURRAY_C_API void hurray_stream_close(HurrayReader* reader) {
    // SAFETY: `reader` is NULL or a live handle from hurray_stream_open*,
    // released once (documented). The FdSource does not own the fd, so
    // nothing is closed; destroying the reader and its sources does not throw.
    if (reader == nullptr || hurray::c::retire_handle("hurray_stream_close", "reader", reader) != HURRAY_OK) {
        return;  // a handle that is not live (handle checks): the message is recorded
    }
    delete reader;
}

HURRAY_C_API HurrayStatus hurray_stream_next(HurrayReader* reader, HurrayDescriptor** out_desc) {
    static constexpr const char* kFn = "hurray_stream_next";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{out_desc, "out_desc"}}); s != HURRAY_OK) {
            return s;
        }
        *out_desc = nullptr;
        if (const HurrayStatus s = require(kFn, {{reader, "reader"}}); s != HURRAY_OK) {
            return s;
        }
        auto next = reader->reader.next();
        if (!next.ok()) {
            const hurray::Error& e = next.error();
            if (e.code() == hurray::ErrorCode::kInvalidMagic && e.offset() == 0) {
                // Not a stream at all: say what the input starts with.
                return fail_stream(hurray::Error(e.code(),
                                                 e.message() + "; the input starts with " +
                                                     describe_prefix(reader->source.prefix()) +
                                                     ", which is not a Hurray stream",
                                                 e.offset()));
            }
            return fail_stream(e);
        }
        reader->next_buffer = 0;
        const hurray::StreamTensor* tensor = next.value_unchecked();
        if (tensor == nullptr) {
            return HURRAY_OK;  // the clean end
        }
        auto handle = std::make_unique<HurrayDescriptor>(HurrayDescriptor{tensor->descriptor});
        *out_desc = hurray::c::publish_handle(std::move(handle));
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_stream_data_position(const HurrayReader* reader, uint32_t* out_buffer,
                                                      uint64_t* out_offset, uint64_t* out_left) {
    static constexpr const char* kFn = "hurray_stream_data_position";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(
                kFn, {{reader, "reader"}, {out_buffer, "out_buffer"}, {out_offset, "out_offset"}, {out_left, "out_left"}});
            s != HURRAY_OK) {
            return s;
        }
        if (const HurrayStatus s = require_tensor(kFn, *reader); s != HURRAY_OK) {
            return s;
        }
        const Position p = position_of(*reader);
        *out_buffer = p.buffer;
        *out_offset = p.offset;
        *out_left = p.left;
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_stream_read(HurrayReader* reader, void* out, size_t capacity, size_t* out_len) {
    static constexpr const char* kFn = "hurray_stream_read";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{reader, "reader"}, {out, "out"}, {out_len, "out_len"}});
            s != HURRAY_OK) {
            return s;
        }
        *out_len = 0;
        if (const HurrayStatus s = require_tensor(kFn, *reader); s != HURRAY_OK) {
            return s;
        }
        if (capacity == 0) {
            return fail(HURRAY_ERR_INVALID_ARGUMENT, kFn, "capacity is 0");
        }
        // SAFETY: the caller guarantees `capacity` writable bytes at `out`;
        // the reader writes at most that many.
        auto n = reader->reader.read_data(std::span<uint8_t>(static_cast<uint8_t*>(out), capacity));
        if (!n.ok()) {
            return fail_stream(n.error());
        }
        *out_len = n.value_unchecked();
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_stream_read_into(HurrayReader* reader, void* out, size_t len) {
    static constexpr const char* kFn = "hurray_stream_read_into";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{reader, "reader"}, {out, "out"}}); s != HURRAY_OK) {
            return s;
        }
        if (const HurrayStatus s = require_tensor(kFn, *reader); s != HURRAY_OK) {
            return s;
        }
        // SAFETY: the caller guarantees `len` writable bytes at `out`; the
        // reader checks that `len` is exactly what is left of the current
        // buffer before writing any of them.
        const hurray::Status read = reader->reader.read_into(std::span<uint8_t>(static_cast<uint8_t*>(out), len));
        return read.ok() ? HURRAY_OK : fail_stream(read.error());
    });
}

HURRAY_C_API HurrayStatus hurray_stream_read_buffer(HurrayReader* reader, HurrayBuffer** out) {
    static constexpr const char* kFn = "hurray_stream_read_buffer";
    return hurray::c::guarded_out(kFn, out, {{reader, "reader"}}, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require_tensor(kFn, *reader); s != HURRAY_OK) {
            return s;
        }
        const auto& buffers = reader->reader.tensor()->descriptor.buffers;
        const Position p = position_of(*reader);
        uint32_t& b = reader->next_buffer;
        // Buffers before the reading position that hold bytes were read (or
        // skipped) by other calls; empty ones are still returned, in order.
        while (b < p.buffer && buffers[b].byte_size != 0) {
            ++b;
        }
        if (b >= buffers.size()) {
            return HURRAY_OK;  // every buffer was returned or read
        }
        if (b < p.buffer) {  // an empty buffer
            *out = hurray::c::publish_handle(new_buffer(buffers[b], 0));
            ++b;
            return HURRAY_OK;
        }
        const uint64_t size = buffers[b].byte_size;
        if (p.offset != 0) {
            return fail(HURRAY_ERR_INVALID_ARGUMENT, kFn,
                        "buffer " + std::to_string(b) + ": " + std::to_string(p.offset) + " of its " +
                            std::to_string(size) + " bytes were already read; read the rest with "
                                                   "hurray_stream_read or hurray_stream_read_into");
        }
        if (size > kMaxReadBuffer) {
            return fail(HURRAY_ERR_INVALID_ARGUMENT, kFn,
                        "buffer " + std::to_string(b) + " has " + std::to_string(size) +
                            " bytes, more than the 1 GiB read whole; read it in pieces with hurray_stream_read");
        }
        std::unique_ptr<HurrayBuffer> handle = new_buffer(buffers[b], static_cast<size_t>(size));
        // SAFETY: `handle->data` is the new block of exactly `size` bytes,
        // which is what is left of the current buffer (offset 0).
        const hurray::Status read =
            reader->reader.read_into(std::span<uint8_t>(static_cast<uint8_t*>(handle->data), static_cast<size_t>(size)));
        if (!read.ok()) {
            return fail_stream(read.error());
        }
        ++b;
        *out = hurray::c::publish_handle(std::move(handle));
        return HURRAY_OK;
    });
}

HURRAY_C_API HurrayStatus hurray_stream_skip(HurrayReader* reader) {
    static constexpr const char* kFn = "hurray_stream_skip";
    return guarded(kFn, [&]() -> HurrayStatus {
        if (const HurrayStatus s = require(kFn, {{reader, "reader"}}); s != HURRAY_OK) {
            return s;
        }
        if (const HurrayStatus s = require_tensor(kFn, *reader); s != HURRAY_OK) {
            return s;
        }
        const hurray::Status skipped = reader->reader.skip_data();
        if (!skipped.ok()) {
            return fail_stream(skipped.error());
        }
        reader->next_buffer = static_cast<uint32_t>(reader->reader.tensor()->descriptor.buffers.size());
        return HURRAY_OK;
    });
}

}  // extern "C"
