// SPDX-License-Identifier: Apache-2.0
/// @file
/// The streaming format at the wire level for the `hurray` package
/// (hurray/_stream.py builds `hurray.StreamReader` / `StreamWriter` on it):
///
///  - `_StreamReader` over a path, a duplicated file descriptor or a
///    bytes-like object (viewed, not copied), yielding one item per call as
///    soon as its bytes have arrived: a tensor as (descriptor bytes, buffers,
///    None), a composite as (head descriptor bytes, [], members), the members
///    being items themselves (nested composites included);
///  - `_StreamWriter` to a path, a duplicated file descriptor or memory,
///    taking (descriptor bytes, buffer-protocol objects) per tensor and a head
///    plus its members (pre-order) per composite, sending each as it is given;
///  - small helpers over descriptors (`_wire_info`, `_wire_composite_head`,
///    `_wire_dense`, `_wire_csr`, `_wire_check_composite`) for the composite
///    class and the tests.
///
/// The GIL is released around every read, write, flush, open and close of a
/// transport. Errors: framing and truncation -> StreamError, a descriptor that
/// does not decode or validate -> InvalidDescriptorError, the transport ->
/// FileError; messages carry the absolute stream offset.

#include <fcntl.h>
#include <unistd.h>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "layout.hpp"
#include "common.hpp"
#include "wire.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/core/composite.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/element_type.hpp"
#include "hurray/core/layout.hpp"
#include "hurray/core/shape.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/byte_source.hpp"
#include "hurray/io/shared_buffer.hpp"
#include "hurray/io/stream_reader.hpp"
#include "hurray/io/stream_writer.hpp"

namespace hurray::python {

namespace {

/// Default bound on one tensor's data read from a descriptor or path (the
/// sum of its buffers): the C++ reader's `max_tensor_bytes` default, 1 GiB.
constexpr uint64_t kDefaultMaxTensorBytes = uint64_t{1} << 30;

/// Smallest alignment of a buffer read from a descriptor (enough for any
/// NumPy dtype and SIMD loads); a larger declared alignment is honoured up to
/// `kMaxBufferAlignment`.
constexpr size_t kMinBufferAlignment = 64;
constexpr size_t kMaxBufferAlignment = 4096;

/// A failure found without the GIL, raised once it is held again.
struct Failure {
    Error error;
    /// The class to raise, when the error code alone does not decide it.
    std::optional<PythonError> kind;
};

/// Raises `error` as `kind` (its attributes set: code, offset, file, tensor,
/// field), the message prefixed by `context`.
[[noreturn]] void raise_as(PythonError kind, const Error& error, const std::string& context) {
    raise_error_as(kind, error, Site{.label = context});
}

/// The class of a reading error. `at_end`: the input had ended when it was
/// found (a truncated tensor, a torn composite).
PythonError read_error_kind(const Error& e, bool at_end) noexcept {
    if (at_end && e.code() != ErrorCode::kIoError) {
        return PythonError::kStream;
    }
    return error_kind(e.code(), PythonSite::kStreamRead);
}

/// The class of a writing error (the stream's own state is checked before).
PythonError write_error_kind(const Error& e) noexcept { return error_kind(e.code(), PythonSite::kStreamWrite); }

/// The `errno` failure of `what` as a kIoError.
Error errno_error(const std::string& what, int err) {
    std::array<char, 256> buf{};
    // SAFETY: buf is a local array of the size passed; the GNU strerror_r
    // returns buf or a static string, both NUL-terminated (thread-safe,
    // unlike strerror: this runs without the GIL).
    const char* text = ::strerror_r(err, buf.data(), buf.size());
    return {ErrorCode::kIoError, what + ": " + text};
}

/// Duplicates `fd` (close-on-exec) without the GIL; FileError when it fails.
int duplicate_fd(int fd) {
    if (fd < 0) {
        raise_kind(PythonError::kInvalidArgument, "file descriptor " + std::to_string(fd) + " is negative");
    }
    int dup = -1;
    int err = 0;
    {
        const py::gil_scoped_release release;
        dup = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);  // NOLINT(*-vararg): the POSIX interface
        err = errno;
    }
    if (dup < 0) {
        raise_as(PythonError::kFile, errno_error("dup of file descriptor " + std::to_string(fd), err), "");
    }
    return dup;
}

/// Opens `path` with `flags` (close-on-exec added) without the GIL.
int open_path(const std::filesystem::path& path, int flags) {
    int fd = -1;
    int err = 0;
    {
        const py::gil_scoped_release release;
        // SAFETY: c_str() is a NUL-terminated string alive for the call.
        fd = ::open(path.c_str(), flags | O_CLOEXEC, 0666);  // NOLINT(*-vararg): the POSIX interface
        err = errno;
    }
    if (fd < 0) {
        raise_as(PythonError::kFile, errno_error("open " + path.string(), err), "");
    }
    return fd;
}

// ---------------------------------------------------------------------------
// Interruptible file descriptors

/// Lets a blocking read or write on a descriptor be interrupted by Ctrl-C:
/// Python's handlers are installed without SA_RESTART, so a signal makes the
/// system call fail with EINTR, and the descriptor's `InterruptHook` (io's
/// FdSource and FdSink) calls `handler_raised`, which takes the GIL to run
/// the handlers; when one raised (KeyboardInterrupt) the call fails and the
/// exception stays pending for the caller to raise. Other signals, and every
/// signal on threads other than the main one, just retry the call.
class SignalAware {
public:
    /// Whether a handler raised since the last call (and forget it).
    bool take_interrupted() noexcept { return std::exchange(interrupted_, false); }

    /// Runs Python's signal handlers (without the GIL on entry); true when one raised.
    bool handler_raised() {
        const py::gil_scoped_acquire acquire;
        if (PyErr_CheckSignals() != 0) {
            interrupted_ = true;
            return true;
        }
        return false;
    }

    /// The hook that asks `signals`, which must outlive the descriptor's source or sink.
    static InterruptHook hook(SignalAware* signals) {
        return [signals] { return signals->handler_raised(); };
    }

private:
    bool interrupted_ = false;
};

// ---------------------------------------------------------------------------
// Reading

/// A source that passes every call to `inner`, counts the bytes consumed and
/// remembers whether the input ended.
class TapSource final : public ByteSource {
public:
    explicit TapSource(std::unique_ptr<ByteSource> inner) noexcept : inner_(std::move(inner)) {}

    Result<size_t> read_some(std::span<uint8_t> out) override {
        auto n = inner_->read_some(out);
        if (n.ok()) {
            const size_t got = n.value_unchecked();
            if (got == 0) {
                ended_ = true;
            }
            position_ += got;
        }
        return n;
    }

    Result<uint64_t> skip(uint64_t n) override {
        auto skipped = inner_->skip(n);
        if (skipped.ok()) {
            position_ += skipped.value_unchecked();
            if (skipped.value_unchecked() < n) {
                ended_ = true;
            }
        }
        return skipped;
    }

    /// Bytes consumed so far.
    [[nodiscard]] uint64_t position() const noexcept { return position_; }
    /// Whether the input reported its end.
    [[nodiscard]] bool ended() const noexcept { return ended_; }

    TapSource(const TapSource&) = delete;
    TapSource& operator=(const TapSource&) = delete;
    TapSource(TapSource&&) = delete;
    TapSource& operator=(TapSource&&) = delete;
    ~TapSource() override = default;

private:
    std::unique_ptr<ByteSource> inner_;
    uint64_t position_ = 0;
    bool ended_ = false;
};

/// A `Py_buffer` held for as long as a reader or any array viewing it lives
/// (owned by a capsule, released with the GIL when the capsule goes).
struct HeldStreamBuffer {
    Py_buffer view{};
};

/// One item read without the GIL: a tensor (descriptor and buffers) or a
/// composite (head descriptor and members).
struct WireItem {
    std::vector<uint8_t> descriptor;
    /// Per buffer: bytes that own their block (descriptor and path sources)
    /// or view the caller's memory (bytes sources; no owner).
    std::vector<SharedBuffer> buffers;
    std::vector<WireItem> members;
    bool composite = false;
};

/// An aligned heap block of `size` bytes (size > 0) owned by a shared_ptr.
std::shared_ptr<uint8_t> aligned_block(size_t size, size_t alignment) {
    // SAFETY: the block is allocated with `alignment` and handed to the
    // shared_ptr at once, which frees it with the same alignment exactly once
    // (also when allocating the control block throws).
    return {static_cast<uint8_t*>(::operator new(size, std::align_val_t(alignment))),
            [alignment](uint8_t* p) { ::operator delete(p, std::align_val_t(alignment)); }};
}

/// Buffers of at least this size are read into a recycled block when the
/// reader has one free (`WireReader::block_for`).
constexpr size_t kRecycleMin = size_t{64} << 10;

/// Marks an object busy for a scope (a call that releases the GIL), so that
/// another thread's call is refused rather than racing it.
class BusyScope {
public:
    explicit BusyScope(bool& busy) noexcept : busy_(busy) { busy_ = true; }
    ~BusyScope() { busy_ = false; }
    BusyScope(const BusyScope&) = delete;
    BusyScope& operator=(const BusyScope&) = delete;
    BusyScope(BusyScope&&) = delete;
    BusyScope& operator=(BusyScope&&) = delete;

private:
    bool& busy_;
};

/// `hurray._hurray._StreamReader`: items of a stream, one per `next`.
class WireReader {
public:
    /// Reads the file at `path`.
    static std::unique_ptr<WireReader> from_path(const std::filesystem::path& path, uint64_t max_tensor_bytes) {
        const int fd = open_path(path, O_RDONLY);
        return with_fd(fd, "stream " + path.string(), max_tensor_bytes);
    }

    /// Reads from a duplicate of `fd` (the caller's stays open).
    static std::unique_ptr<WireReader> from_fd(int fd, uint64_t max_tensor_bytes) {
        const int dup = duplicate_fd(fd);
        return with_fd(dup, "stream on fd " + std::to_string(fd), max_tensor_bytes);
    }

    /// Reads a contiguous bytes-like object in place: the buffers handed out
    /// view it (read-only) and keep it alive.
    static std::unique_ptr<WireReader> from_buffer(const py::object& data) {
        auto held = std::make_unique<HeldStreamBuffer>();
        // SAFETY: `held->view` is filled by CPython and released exactly once,
        // by the capsule's destructor below (which runs with the GIL held).
        if (PyObject_GetBuffer(data.ptr(), &held->view, PyBUF_C_CONTIGUOUS) != 0) {
            throw py::error_already_set();
        }
        HeldStreamBuffer* raw = held.release();
        const py::capsule owner(raw, [](void* p) {
            auto* h = static_cast<HeldStreamBuffer*>(p);
            PyBuffer_Release(&h->view);
            delete h;  // NOLINT(*-owning-memory): the capsule owns it
        });
        // SAFETY: a C-contiguous buffer holds `len` readable bytes at `buf`
        // for as long as the export lives (`owner`); bytes-like objects that
        // could resize (bytearray) refuse to while it is exported.
        const std::span<const uint8_t> bytes(static_cast<const uint8_t*>(raw->view.buf),
                                             static_cast<size_t>(raw->view.len));
        auto reader = std::unique_ptr<WireReader>(new WireReader(  // NOLINT(*-owning-memory): private constructor
            std::make_unique<MemorySource>(bytes), "stream <bytes>", owner, kDefaultMaxTensorBytes));
        reader->memory_ = bytes;
        return reader;
    }

    /// The next item, or None at the clean end (and once closed).
    py::object next() {
        if (source_ == nullptr || ended_) {
            return py::none();
        }
        if (busy_) {
            throw std::runtime_error("hurray.StreamReader: already reading on another thread");
        }
        std::optional<WireItem> item;
        std::optional<Failure> failure;
        bool end = false;
        {
            const BusyScope busy(busy_);
            const py::gil_scoped_release release;
            read_item(0, item, failure, end);
        }
        if (signals_ != nullptr && signals_->take_interrupted()) {
            ended_ = true;  // the reader's error is sticky: the stream cannot go on
            drop_source();
            throw py::error_already_set();  // the handler's exception (KeyboardInterrupt), pending
        }
        if (close_requested_) {
            drop_source();
        }
        if (failure) {
            ended_ = true;  // the reader's error is sticky; report it once, then behave as exhausted
            const PythonError kind = failure->kind ? *failure->kind : read_error_kind(failure->error, at_end_);
            raise_as(kind, failure->error, context_);
        }
        if (end) {
            ended_ = true;
            return py::none();
        }
        return to_python(*item);
    }

    /// Releases the transport; later `next` calls return None.
    void close() {
        if (busy_) {
            close_requested_ = true;  // the reading thread drops it when its call returns
            return;
        }
        drop_source();
    }

    [[nodiscard]] bool closed() const noexcept { return source_ == nullptr; }
    /// Bytes consumed so far.
    [[nodiscard]] uint64_t offset() const noexcept { return offset_; }
    /// Items (top-level) handed out so far.
    [[nodiscard]] uint64_t count() const noexcept { return count_; }
    [[nodiscard]] const std::string& name() const noexcept { return context_; }

private:
    /// A reader that owns `fd`.
    static std::unique_ptr<WireReader> with_fd(int fd, std::string context, uint64_t max_tensor_bytes) {
        auto signals = std::make_unique<SignalAware>();
        auto source = std::make_unique<FdSource>(fd, /*owns=*/true);
        source->set_interrupt_hook(SignalAware::hook(signals.get()));
        auto reader = std::unique_ptr<WireReader>(new WireReader(  // NOLINT(*-owning-memory): private constructor
            std::move(source), std::move(context), {}, max_tensor_bytes));
        reader->signals_ = std::move(signals);
        return reader;
    }

    WireReader(std::unique_ptr<ByteSource> inner, std::string context, py::object owner, uint64_t max_tensor_bytes)
        : source_(std::make_unique<TapSource>(std::move(inner))),
          reader_(std::make_unique<StreamReader>(*source_)),
          context_(std::move(context)),
          owner_(std::move(owner)),
          max_tensor_bytes_(max_tensor_bytes) {}

    void drop_source() {
        // The reader refers to the source: destroy it first. Closing an fd
        // does not block; nothing here touches Python.
        reader_.reset();
        source_.reset();
        signals_ = nullptr;
        spare_.reset();  // arrays still using it keep it alive
        close_requested_ = false;
    }

    /// Reads the next item (a tensor, or a composite with all its members),
    /// without the GIL. `depth` 0 is top level; `end` is set at a clean end
    /// there. Recursion depth is bounded by the decoder's composite nesting
    /// limit (`max_composite_depth`, at most kMaxCompositeDepth = 8).
    // NOLINTNEXTLINE(misc-no-recursion)
    void read_item(uint32_t depth, std::optional<WireItem>& out, std::optional<Failure>& failure, bool& end) {
        auto next = reader_->next();
        offset_ = source_->position();
        at_end_ = source_->ended();
        if (!next.ok()) {
            failure = Failure{next.error(), std::nullopt};
            return;
        }
        const StreamTensor* t = next.value_unchecked();
        if (t == nullptr) {
            if (depth > 0) {
                // The decoder reports a torn composite at the end; this is a
                // second line of defence.
                failure = Failure{Error(ErrorCode::kTruncated, "the stream ended inside a composite", offset_),
                                  PythonError::kStream};
                return;
            }
            end = true;
            return;
        }
        WireItem item;
        item.descriptor = t->descriptor_bytes;  // exactly as the stream carried it
        const auto* head = std::get_if<CompositeLayout>(&t->descriptor.layout);
        if (head != nullptr) {
            item.composite = true;
            const uint32_t members = head->member_count;
            for (uint32_t i = 0; i < members; ++i) {
                std::optional<WireItem> member;
                bool member_end = false;
                read_item(depth + 1, member, failure, member_end);
                if (failure) {
                    return;
                }
                item.members.push_back(std::move(*member));
            }
        } else if (auto st = read_buffers(*t, item.buffers, failure); !st) {
            return;
        }
        if (depth == 0) {
            ++count_;
            // The decoder keeps every completed composite until asked: drop
            // them (the item holds the tree) so long streams stay bounded.
            (void)reader_->take_completed();
        }
        out = std::move(item);
    }

    /// Reads (or, from memory, locates) every buffer of the current tensor.
    /// Returns false after setting `failure`.
    bool read_buffers(const StreamTensor& t, std::vector<SharedBuffer>& out, std::optional<Failure>& failure) {
        const auto& handles = t.descriptor.buffers;
        out.reserve(handles.size());
        uint64_t total = 0;
        for (size_t i = 0; i < handles.size(); ++i) {
            const uint64_t size = handles[i].byte_size;
            if (size == 0) {
                out.emplace_back();
                continue;
            }
            if (reader_->data_position().first != i) {
                failure = Failure{Error(ErrorCode::kInvalidArgument,
                                        "tensor " + std::to_string(t.index) + ": reader is not at buffer " +
                                            std::to_string(i),
                                        source_->position()),
                                  PythonError::kInternal};
                return false;
            }
            if (memory_) {
                const uint64_t start = source_->position();
                auto st = reader_->skip_buffer();
                at_end_ = source_->ended();
                offset_ = source_->position();
                if (!st.ok()) {
                    failure = Failure{st.error(), std::nullopt};
                    return false;
                }
                if (source_->position() - start != size || source_->position() > memory_->size()) {
                    failure = Failure{Error(ErrorCode::kInvalidArgument,
                                            "tensor " + std::to_string(t.index) + ": buffer " + std::to_string(i) +
                                                " was not where the reader left it",
                                            start),
                                      PythonError::kInternal};
                    return false;
                }
                out.emplace_back(memory_->subspan(static_cast<size_t>(start), static_cast<size_t>(size)), nullptr);
                continue;
            }
            // Bounded memory: the sum of the buffers (overflow-checked) may not
            // pass max_tensor_bytes, checked before each allocation.
            if (size > max_tensor_bytes_ || total > max_tensor_bytes_ - size) {
                failure = Failure{Error(ErrorCode::kInvalidArgument,
                                        "tensor " + std::to_string(t.index) + ": buffer " + std::to_string(i) +
                                            " brings its data to more than max_tensor_bytes (" +
                                            std::to_string(max_tensor_bytes_) + "); pass a larger max_tensor_bytes",
                                        t.descriptor_offset),
                                  PythonError::kStream};
                return false;
            }
            total += size;
            const auto n = static_cast<size_t>(size);  // <= max_tensor_bytes <= SIZE_MAX on 64-bit
            const size_t alignment = std::clamp<size_t>(handles[i].alignment, kMinBufferAlignment, kMaxBufferAlignment);
            std::shared_ptr<uint8_t> block;
            try {
                block = block_for(n, std::has_single_bit(alignment) ? alignment : kMinBufferAlignment);
            } catch (const std::bad_alloc&) {
                failure = Failure{Error(ErrorCode::kOutOfMemory, "buffer of " + std::to_string(n) + " bytes"),
                                  std::nullopt};
                return false;
            }
            // SAFETY: `block` holds `n` writable bytes; read_into writes
            // exactly that many (it checks the size against the buffer first).
            const std::span<uint8_t> dest(block.get(), n);
            auto st = reader_->read_into(dest);
            at_end_ = source_->ended();
            offset_ = source_->position();
            if (!st.ok()) {
                failure = Failure{st.error(), std::nullopt};
                return false;
            }
            out.emplace_back(std::span<const uint8_t>(dest), std::shared_ptr<const void>(std::move(block)));
        }
        return true;
    }

    /// A block for a buffer of `n` bytes: the reader's spare block when the
    /// items read into it are all gone (only `spare_` still refers to it) and
    /// it fits, else a new one, which becomes the spare. A consumer that drops
    /// each large tensor before taking the next then reads every one into the
    /// same memory: no new pages to fault in, no freed blocks piling up in the
    /// heap. Called without the GIL: a use count of 1 means that no array
    /// refers to the block and none can come to (the reader hands it out only
    /// here).
    std::shared_ptr<uint8_t> block_for(size_t n, size_t alignment) {
        if (n < kRecycleMin) {
            return aligned_block(n, alignment);
        }
        if (spare_ && spare_.use_count() == 1 && n <= spare_size_ && n >= spare_size_ / 2 &&
            alignment <= spare_alignment_) {
            return spare_;
        }
        spare_ = aligned_block(n, alignment);
        spare_size_ = n;
        spare_alignment_ = alignment;
        return spare_;
    }

    /// The item as Python objects (GIL held); as deep as `read_item` went.
    // NOLINTNEXTLINE(misc-no-recursion)
    [[nodiscard]] py::object to_python(const WireItem& item) const {
        const py::bytes descriptor(reinterpret_cast<const char*>(item.descriptor.data()), item.descriptor.size());
        if (item.composite) {
            py::list members;
            for (const WireItem& m : item.members) {
                members.append(to_python(m));
            }
            return py::make_tuple(descriptor, py::list(), members);
        }
        py::list buffers;
        for (const SharedBuffer& b : item.buffers) {
            buffers.append(to_array(b));
        }
        return py::make_tuple(descriptor, buffers, py::none());
    }

    /// A one-dimensional uint8 array over `b`: writable memory it owns
    /// (descriptor and path sources) or a read-only view of the caller's bytes.
    [[nodiscard]] py::array to_array(const SharedBuffer& b) const {
        const py::dtype u8("uint8");
        if (b.empty()) {
            return {u8, std::vector<py::ssize_t>{0}};
        }
        const std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(b.size())};
        if (b.owner() == nullptr) {
            // SAFETY: the span lies inside the caller's buffer (checked when it
            // was located), which `owner_`, the array's base, keeps exported.
            py::array a(u8, shape, {}, static_cast<const void*>(b.data()), owner_);
            a.attr("flags").attr("writeable") = false;
            return a;
        }
        auto* keep = new SharedBuffer(b);  // NOLINT(*-owning-memory): owned by the capsule
        const py::capsule owner(keep, [](void* p) { delete static_cast<SharedBuffer*>(p); });  // NOLINT(*-owning-memory)
        // SAFETY: the SharedBuffer in `owner` (the array's base) keeps the
        // block of b.size() bytes alive; nothing else refers to the block, so
        // the array may write to it.
        return {u8, shape, {}, static_cast<const void*>(b.data()), owner};
    }

    std::unique_ptr<TapSource> source_;
    std::unique_ptr<StreamReader> reader_;
    std::unique_ptr<SignalAware> signals_;          // descriptor sources: what their hook asks
    std::string context_;
    py::object owner_;                              // bytes sources: the capsule holding the Py_buffer
    std::optional<std::span<const uint8_t>> memory_;  // bytes sources: the bytes
    uint64_t max_tensor_bytes_;
    std::shared_ptr<uint8_t> spare_;  // the last large block allocated (see block_for)
    size_t spare_size_ = 0;
    size_t spare_alignment_ = 0;
    uint64_t offset_ = 0;
    uint64_t count_ = 0;
    bool at_end_ = false;
    bool ended_ = false;
    bool busy_ = false;
    bool close_requested_ = false;
};

// ---------------------------------------------------------------------------
// Writing

}  // namespace

/// Decodes `descriptor` (strict) for writing; InvalidDescriptorError when it
/// does not decode.
TensorDescriptor decode_for_write(const py::bytes& descriptor, const std::string& what) {
    const std::string_view bytes(descriptor);
    std::optional<Result<TensorDescriptor>> decoded;
    {
        const py::gil_scoped_release release;
        // SAFETY: char and uint8_t alias; the bytes object is held by the caller.
        decoded.emplace(decode(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size())));
    }
    if (!*decoded) {
        const Error& e = decoded->error();
        raise_as(is_unsupported(e.code()) ? PythonError::kUnsupported : PythonError::kInvalidDescriptor, e, what);
    }
    return std::move(decoded->value());
}

PreparedTensor prepare_tensor(const py::bytes& descriptor, const py::sequence& buffers, const std::string& what) {
    PreparedTensor p;
    p.descriptor = decode_for_write(descriptor, what);
    const auto n = static_cast<size_t>(py::len(buffers));
    if (n != p.descriptor.buffers.size()) {
        raise_kind(PythonError::kBuffer, what + ": " + std::to_string(n) + " buffers given, its descriptor declares " +
                                           std::to_string(p.descriptor.buffers.size()));
    }
    p.exports.reserve(n);
    p.spans.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        p.exports.emplace_back(buffers[i], what + ": buffer " + std::to_string(i));
        p.spans.push_back(p.exports.back().bytes());
    }
    return p;
}

namespace {

/// `hurray._hurray._StreamWriter`: writes tensors and composites as they come.
/// Every call checks `busy_` and holds it (with the GIL) before anything that
/// releases the GIL, so calls from several threads never overlap.
class WireWriter {
public:
    /// Writes the file at `path` (created or truncated).
    static std::unique_ptr<WireWriter> to_path(const std::filesystem::path& path) {
        const int fd = open_path(path, O_WRONLY | O_CREAT | O_TRUNC);
        return with_fd(fd, "stream " + path.string());
    }
    /// Writes to a duplicate of `fd` (the caller's stays open).
    static std::unique_ptr<WireWriter> to_fd(int fd) {
        const int dup = duplicate_fd(fd);
        return with_fd(dup, "stream on fd " + std::to_string(fd));
    }
    /// Builds the stream in memory (`getvalue`).
    static std::unique_ptr<WireWriter> to_memory() {
        return std::unique_ptr<WireWriter>(  // NOLINT(*-owning-memory): private constructor
            new WireWriter(std::make_unique<MemorySink>(), "stream <memory>", true));
    }

    /// Writes one tensor (a composite head too: its members are the next
    /// tensors written) and flushes.
    void write(const py::bytes& descriptor, const py::sequence& buffers) {
        check_open();
        const BusyScope busy(busy_);
        const std::string what = context_ + ": tensor " + std::to_string(writer_->tensor_count());
        const PreparedTensor p = prepare_tensor(descriptor, buffers, what);
        run(what, [&]() -> Status {
            HURRAY_RETURN_IF_ERROR(writer_->write_tensor(p.descriptor, p.spans));
            return sink_->flush();
        });
    }

    /// Writes a composite: `head`, then `members` (pre-order, nested heads
    /// included, each (descriptor, buffers)), validated whole before its first
    /// byte goes out; then flushes.
    void write_composite(const py::bytes& head, const py::sequence& members) {
        check_open();
        const BusyScope busy(busy_);
        const std::string what = context_ + ": composite at tensor " + std::to_string(writer_->tensor_count());
        const TensorDescriptor head_desc = decode_for_write(head, what + " (head)");
        std::vector<PreparedTensor> prepared;
        prepared.reserve(static_cast<size_t>(py::len(members)));
        for (const py::handle m : members) {
            const auto pair = py::reinterpret_borrow<py::sequence>(m);
            if (py::len(pair) != 2) {
                throw py::type_error(what + ": each member must be a (descriptor, buffers) pair");
            }
            prepared.push_back(prepare_tensor(py::bytes(pair[0]), py::sequence(pair[1]),
                                              what + ", member " + std::to_string(prepared.size())));
        }
        std::vector<StreamTensorInput> inputs;
        inputs.reserve(prepared.size());
        for (const PreparedTensor& p : prepared) {
            inputs.push_back({&p.descriptor, p.spans});
        }
        run(what, [&]() -> Status {
            HURRAY_RETURN_IF_ERROR(writer_->write_composite(head_desc, inputs));
            return sink_->flush();
        });
    }

    /// Checks that the stream may end here, flushes and closes the transport.
    /// Idempotent. StreamError when a tensor or composite is incomplete.
    void finish() {
        if (finished_) {
            return;
        }
        if (busy_) {
            throw std::runtime_error("hurray.StreamWriter: writing on another thread");
        }
        std::optional<Error> error;
        {
            const BusyScope busy(busy_);
            const py::gil_scoped_release release;
            if (auto st = writer_->finish(); !st) {
                error = st.error();
            }
        }
        if (error) {
            raise_as(error->code() == ErrorCode::kIoError ? PythonError::kFile : PythonError::kStream, *error, context_);
        }
        release_sink();
    }

    /// Closes the transport without checks (for a `with` block left by an
    /// exception); later writes raise StreamError.
    void close() {
        if (finished_ || busy_) {
            return;
        }
        release_sink();
    }

    /// The bytes written so far (memory writers only).
    [[nodiscard]] py::bytes getvalue() const {
        if (!memory_) {
            raise_kind(PythonError::kStream, "getvalue: this hurray.StreamWriter writes to a destination (" + context_ +
                                               "), not to memory; only a writer created without a destination has a value");
        }
        const std::vector<uint8_t>& bytes =
            finished_ ? value_ : static_cast<const MemorySink&>(*sink_).bytes();  // NOLINT(*-static-cast-downcast): created as one
        // SAFETY: char may alias the bytes of the vector; py::bytes copies them.
        return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
    }

    [[nodiscard]] bool finished() const noexcept { return finished_; }
    [[nodiscard]] uint64_t offset() const noexcept { return offset_; }
    [[nodiscard]] uint64_t count() const noexcept { return count_; }

private:
    /// A writer that owns `fd`.
    static std::unique_ptr<WireWriter> with_fd(int fd, std::string context) {
        auto signals = std::make_unique<SignalAware>();
        auto sink = std::make_unique<FdSink>(fd, /*owns=*/true);
        sink->set_interrupt_hook(SignalAware::hook(signals.get()));
        auto writer = std::unique_ptr<WireWriter>(  // NOLINT(*-owning-memory): private constructor
            new WireWriter(std::move(sink), std::move(context), false));
        writer->signals_ = std::move(signals);
        return writer;
    }

    WireWriter(std::unique_ptr<ByteSink> sink, std::string context, bool memory)
        : sink_(std::move(sink)),
          writer_(std::make_unique<StreamWriter>(*sink_)),
          context_(std::move(context)),
          memory_(memory) {}

    void check_open() const {
        if (finished_) {
            raise_kind(PythonError::kStream, context_ + ": write after finish(): the stream is finished");
        }
        if (busy_) {
            throw std::runtime_error("hurray.StreamWriter: already writing on another thread");
        }
    }

    /// Runs `body` without the GIL, then raises its error.
    template <typename Body>
    void run(const std::string& what, Body&& body) {
        std::optional<Error> error;
        {
            const py::gil_scoped_release release;
            if (auto st = body(); !st) {
                error = st.error();
            }
        }
        offset_ = writer_->offset();
        count_ = writer_->tensor_count();
        if (signals_ != nullptr && signals_->take_interrupted()) {
            throw py::error_already_set();  // the handler's exception (KeyboardInterrupt), pending
        }
        if (error) {
            raise_as(write_error_kind(*error), *error, what);
        }
    }

    void release_sink() {
        finished_ = true;
        offset_ = writer_->offset();
        count_ = writer_->tensor_count();
        writer_.reset();
        if (memory_) {
            value_ = std::move(static_cast<MemorySink&>(*sink_)).take();  // NOLINT(*-static-cast-downcast): created as one
        }
        const py::gil_scoped_release release;
        sink_.reset();  // closes a descriptor or file
    }

    std::unique_ptr<ByteSink> sink_;
    std::unique_ptr<StreamWriter> writer_;
    std::unique_ptr<SignalAware> signals_;  // descriptor sinks: what their hook asks
    std::string context_;
    bool memory_;
    std::vector<uint8_t> value_;  // memory writers, once finished
    uint64_t offset_ = 0;
    uint64_t count_ = 0;
    bool finished_ = false;
    bool busy_ = false;
};

// ---------------------------------------------------------------------------
// Descriptor helpers

std::span<const uint8_t> bytes_span(const py::bytes& b) {
    const std::string_view v(b);
    // SAFETY: char and uint8_t alias; the view lives as long as `b`.
    return {reinterpret_cast<const uint8_t*>(v.data()), v.size()};
}

py::bytes to_bytes(const std::vector<uint8_t>& v) {
    // SAFETY: char may alias the vector's bytes; py::bytes copies them.
    return {reinterpret_cast<const char*>(v.data()), v.size()};
}

TensorDescriptor decode_or_raise(const py::bytes& descriptor) {
    auto d = decode(bytes_span(descriptor));
    if (!d) {
        raise_as(is_unsupported(d.error().code()) ? PythonError::kUnsupported : PythonError::kInvalidDescriptor, d.error(),
                 "descriptor");
    }
    return std::move(d.value());
}

ElementType element_type_named(const std::string& name) {
    const auto t = type_from_name(name);
    if (!t) {
        raise_kind(PythonError::kInvalidArgument, "unknown element type '" + name + "'");
    }
    return *t;
}

const char* rule_name(CompositionRule r) noexcept {
    switch (r) {
        case CompositionRule::kPartition: return "partition";
        case CompositionRule::kOverlay: return "overlay";
        case CompositionRule::kGroup: return "group";
    }
    return nullptr;
}

CompositionRule rule_named(const std::string& name) {
    for (const CompositionRule r : {CompositionRule::kPartition, CompositionRule::kOverlay, CompositionRule::kGroup}) {
        if (name == rule_name(r)) {
            return r;
        }
    }
    raise_kind(PythonError::kInvalidArgument,
               "unknown composition rule '" + name + "' (expected 'partition', 'overlay' or 'group')");
}

const char* combine_name(CombineOp op) noexcept {
    switch (op) {
        case CombineOp::kNone: return "none";
        case CombineOp::kReplace: return "replace";
        case CombineOp::kAdd: return "add";
    }
    return nullptr;
}

CombineOp combine_named(const std::string& name) {
    for (const CombineOp op : {CombineOp::kNone, CombineOp::kReplace, CombineOp::kAdd}) {
        if (name == combine_name(op)) {
            return op;
        }
    }
    raise_kind(PythonError::kInvalidArgument, "unknown combine operation '" + name + "' (expected 'none', 'replace' or 'add')");
}

py::object optional_name(const char* name, unsigned raw) {
    return name != nullptr ? py::object(py::str(name)) : py::object(py::int_(raw));
}

/// `_wire_info(descriptor)`: what a descriptor says, as a dict.
py::dict wire_info(const py::bytes& descriptor) {
    const TensorDescriptor d = decode_or_raise(descriptor);
    py::dict out;
    const std::string_view type = type_name(d.element_type);
    out["dtype"] = type.empty() ? py::object(py::int_(static_cast<unsigned>(d.element_type)))
                                : py::object(py::str(std::string(type)));
    py::list shape;
    for (const uint64_t dim : d.shape) {
        shape.append(dim == kDynamicDim ? py::object(py::none()) : py::object(py::int_(dim)));
    }
    out["shape"] = py::tuple(shape);
    out["layout"] = py::str(std::string(python_layout_name(d.layout)));
    py::list sizes;
    for (const BufferHandle& b : d.buffers) {
        sizes.append(py::int_(b.byte_size));
    }
    out["buffer_sizes"] = sizes;
    if (const auto* c = std::get_if<CompositeLayout>(&d.layout)) {
        out["composition_rule"] = optional_name(rule_name(c->rule), static_cast<unsigned>(c->rule));
        out["combine_op"] = optional_name(combine_name(c->combine_op), static_cast<unsigned>(c->combine_op));
        out["member_count"] = py::int_(c->member_count);
    }
    if (d.shard) {
        out["shard_parent_shape"] = py::tuple(py::cast(d.shard->parent_shape));
        out["shard_offset"] = py::tuple(py::cast(d.shard->shard_offset));
    }
    return out;
}

Shape shape_of(const std::vector<uint64_t>& dims) { return {dims.begin(), dims.end()}; }

/// `_wire_composite_head(dtype, shape, rule, member_count, combine_op)`.
py::bytes wire_composite_head(const std::string& dtype, const std::vector<uint64_t>& shape, const std::string& rule,
                              uint32_t member_count, const std::string& combine_op) {
    auto d = make_composite_head(element_type_named(dtype), shape_of(shape), rule_named(rule), member_count,
                                 combine_named(combine_op));
    if (!d) {
        raise_as(PythonError::kInvalidDescriptor, d.error(), "composite head");
    }
    auto encoded = encode(*d);
    if (!encoded) {
        raise_as(PythonError::kInvalidDescriptor, encoded.error(), "composite head");
    }
    return to_bytes(*encoded);
}

/// `_wire_dense(dtype, shape, shard_parent_shape=None, shard_offset=None,
/// member_role=None)`: `member_role` "base" or "correction" adds the
/// composite member section of an overlay member.
py::bytes wire_dense(const std::string& dtype, const std::vector<uint64_t>& shape,
                     const std::optional<std::vector<uint64_t>>& parent, const std::optional<std::vector<uint64_t>>& offset,
                     const std::optional<std::string>& member_role) {
    auto d = make_dense(element_type_named(dtype), shape_of(shape));
    if (!d) {
        raise_as(PythonError::kInvalidDescriptor, d.error(), "dense descriptor");
    }
    if (parent || offset) {
        if (!parent || !offset) {
            throw py::value_error("shard_parent_shape and shard_offset go together");
        }
        d->shard = ShardDescriptor{*parent, *offset};
    }
    if (member_role) {
        if (*member_role != "base" && *member_role != "correction") {
            raise_kind(PythonError::kInvalidArgument, "member_role must be 'base' or 'correction', not '" + *member_role + "'");
        }
        d->composite_member = CompositeMember{*member_role == "base" ? MemberRole::kBase : MemberRole::kCorrection};
    }
    auto encoded = encode(*d);
    if (!encoded) {
        raise_as(PythonError::kInvalidDescriptor, encoded.error(), "dense descriptor");
    }
    return to_bytes(*encoded);
}

/// `_wire_csr(dtype, rows, cols, nnz)`: buffers values, row pointers, column indices.
py::bytes wire_csr(const std::string& dtype, uint64_t rows, uint64_t cols, uint64_t nnz) {
    auto d = make_csr(element_type_named(dtype), rows, cols, nnz);
    if (!d) {
        raise_as(PythonError::kInvalidDescriptor, d.error(), "csr descriptor");
    }
    auto encoded = encode(*d);
    if (!encoded) {
        raise_as(PythonError::kInvalidDescriptor, encoded.error(), "csr descriptor");
    }
    return to_bytes(*encoded);
}

/// `_wire_check_composite(head, members)`: runs core's composite validator
/// over a head and its members' descriptors (pre-order, nested heads
/// included); InvalidDescriptorError naming the rule broken.
void wire_check_composite(const py::bytes& head, const std::vector<py::bytes>& members) {
    std::vector<TensorDescriptor> decoded;
    decoded.reserve(members.size() + 1);
    decoded.push_back(decode_or_raise(head));
    for (const py::bytes& m : members) {
        decoded.push_back(decode_or_raise(m));
    }
    if (!std::holds_alternative<CompositeLayout>(decoded.front().layout)) {
        raise_kind(PythonError::kInvalidArgument, "composite head: its layout is not composite");
    }
    std::optional<Error> error;
    {
        const py::gil_scoped_release release;
        CompositeAssembler assembler;
        for (const TensorDescriptor& d : decoded) {
            if (auto st = assembler.add(d); !st) {
                error = st.error();
                break;
            }
            if (assembler.idle()) {
                if (&d != &decoded.back()) {
                    error = Error(ErrorCode::kInvalidComposite,
                                  "more members given than the head declares (" +
                                      std::to_string(std::get<CompositeLayout>(decoded.front().layout).member_count) +
                                      ")");
                }
                break;
            }
        }
        if (!error) {
            if (auto st = assembler.finish(); !st) {
                error = st.error();
            }
        }
    }
    if (error) {
        raise_as(is_unsupported(error->code()) ? PythonError::kUnsupported : PythonError::kInvalidDescriptor, *error,
                 "composite");
    }
}

}  // namespace

void register_stream(py::module_& m) {
    py::class_<WireReader>(m, "_StreamReader", "Wire-level stream reader (use hurray.StreamReader)")
        .def_static("from_path", &WireReader::from_path, py::arg("path"),
                    py::arg("max_tensor_bytes") = kDefaultMaxTensorBytes, "Reads the stream in the file at `path`")
        .def_static("from_fd", &WireReader::from_fd, py::arg("fd"), py::arg("max_tensor_bytes") = kDefaultMaxTensorBytes,
                    "Reads from a duplicate of `fd`")
        .def_static("from_buffer", &WireReader::from_buffer, py::arg("data"),
                    "Reads a C-contiguous bytes-like object in place")
        .def("next", &WireReader::next,
             "The next item: (descriptor, buffers, None) for a tensor, (head, [], members) for a composite; "
             "None at the clean end")
        .def("close", &WireReader::close, "Releases the transport")
        .def_property_readonly("closed", &WireReader::closed)
        .def_property_readonly("offset", &WireReader::offset, "Bytes consumed so far")
        .def_property_readonly("count", &WireReader::count, "Items handed out so far")
        .def_property_readonly("name", &WireReader::name);

    py::class_<WireWriter>(m, "_StreamWriter", "Wire-level stream writer (use hurray.StreamWriter)")
        .def_static("to_path", &WireWriter::to_path, py::arg("path"), "Writes the file at `path`")
        .def_static("to_fd", &WireWriter::to_fd, py::arg("fd"), "Writes to a duplicate of `fd`")
        .def_static("to_memory", &WireWriter::to_memory, "Builds the stream in memory")
        .def("write", &WireWriter::write, py::arg("descriptor"), py::arg("buffers"),
             "Writes one tensor: its encoded descriptor and one buffer-protocol object per buffer")
        .def("write_composite", &WireWriter::write_composite, py::arg("head"), py::arg("members"),
             "Writes a composite head and its members, pre-order, as (descriptor, buffers) pairs")
        .def("finish", &WireWriter::finish, "Checks the stream may end, flushes, closes the transport (idempotent)")
        .def("close", &WireWriter::close, "Closes the transport without checks")
        .def("getvalue", &WireWriter::getvalue, "The stream's bytes (writers without a destination)")
        .def_property_readonly("finished", &WireWriter::finished)
        .def_property_readonly("offset", &WireWriter::offset, "Bytes written so far")
        .def_property_readonly("count", &WireWriter::count, "Tensors written so far");

    m.def("_wire_info", &wire_info, py::arg("descriptor"),
          "A dict of what an encoded descriptor says: dtype, shape, layout, buffer_sizes, composite fields");
    m.def("_wire_composite_head", &wire_composite_head, py::arg("dtype"), py::arg("shape"), py::arg("rule"),
          py::arg("member_count"), py::arg("combine_op") = "none", "The encoded descriptor of a composite head");
    m.def("_wire_dense", &wire_dense, py::arg("dtype"), py::arg("shape"), py::arg("shard_parent_shape") = py::none(),
          py::arg("shard_offset") = py::none(), py::arg("member_role") = py::none(),
          "The encoded descriptor of a dense row-major tensor (with a shard and an overlay member section if asked)");
    m.def("_wire_csr", &wire_csr, py::arg("dtype"), py::arg("rows"), py::arg("cols"), py::arg("nnz"),
          "The encoded descriptor of a CSR matrix");
    m.def("_wire_check_composite", &wire_check_composite, py::arg("head"), py::arg("members"),
          "Validates a composite (head and pre-order member descriptors) with the core's validator");
}

}  // namespace hurray::python
