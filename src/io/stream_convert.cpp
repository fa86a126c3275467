// SPDX-License-Identifier: Apache-2.0
// Container <-> stream conversion over FileReader / FileWriter and the
// blocking stream reader and writer.
#include "hurray/io/stream_convert.hpp"

#include <string>
#include <vector>

#include <sys/uio.h>

#include "hurray/core/text.hpp"
#include "hurray/io/stream_steps.hpp"
#include "hurray/io/stream_reader.hpp"
#include "hurray/io/stream_writer.hpp"
#include "io/fd_transfer.hpp"

namespace hurray {

namespace {

/// A gathered write is sent once it holds this many bytes.
constexpr uint64_t kBatchBytes = uint64_t{8} << 20;
/// Data runs at least this long go to a pipe by vmsplice (shorter ones are
/// cheaper to copy along with the descriptors around them).
constexpr size_t kSpliceMin = size_t{64} << 10;
/// A gathered write is sent once it has this many pieces.
constexpr size_t kBatchPieces = 512;

/// Pieces of the stream gathered for one writev: descriptor bytes (kept in
/// `staged`, which only grows until the batch is sent) and spans of the
/// file's data.
class Batch {
public:
    explicit Batch(detail::FdWriter& out) : out_(out) {}

    void add_staged(std::span<const uint8_t> bytes) {
        pieces_.push_back(Piece{nullptr, staged_.size(), bytes.size()});
        staged_.insert(staged_.end(), bytes.begin(), bytes.end());
        bytes_ += bytes.size();
    }
    void add_data(std::span<const uint8_t> bytes) {
        if (!bytes.empty()) {
            pieces_.push_back(Piece{bytes.data(), 0, bytes.size()});
            bytes_ += bytes.size();
        }
    }
    [[nodiscard]] bool full() const noexcept { return bytes_ >= kBatchBytes || pieces_.size() >= kBatchPieces; }

    Status send() {
        if (pieces_.empty()) {
            return Status::success();
        }
        iov_.clear();
        for (const Piece& p : pieces_) {
            // SAFETY: writev never writes through iov_base; the const_cast only
            // fits the POSIX signature. Staged offsets lie inside `staged_`,
            // which is not resized until the batch is sent.
            const uint8_t* base = p.data != nullptr ? p.data : staged_.data() + p.offset;
            iov_.push_back(iovec{const_cast<uint8_t*>(base), p.size});  // NOLINT(cppcoreguidelines-pro-type-const-cast)
        }
        Status st = out_.write_all(iov_);
        pieces_.clear();
        staged_.clear();
        bytes_ = 0;
        return st;
    }

private:
    struct Piece {
        const uint8_t* data;  // null: staged bytes at `offset`
        size_t offset;
        size_t size;
    };
    detail::FdWriter& out_;
    std::vector<Piece> pieces_;
    std::vector<uint8_t> staged_;
    std::vector<iovec> iov_;
    uint64_t bytes_ = 0;
};

/// A transport error, unless the file changed under the mapping (the real
/// cause: a write from a vanished page fails with EFAULT or sends zeros).
Status transport_error(const FileReader& file, StreamEncoder& encoder, const Status& st) {
    HURRAY_RETURN_IF_ERROR(file.check_unchanged());
    return encoder.fail(st.error());
}

}  // namespace

Status file_to_stream(const FileReader& file, int fd, const StreamSendOptions& options) {
    HURRAY_RETURN_IF_ERROR(file.check_all());
    HURRAY_ASSIGN_OR_RETURN(const detail::FdKind kind, detail::fd_kind(fd));
    const bool zero_copy =
        options.zero_copy && kind == detail::FdKind::kPipe && file.mapped() && !file.copy_on_write();
    const detail::SigpipeGuard no_sigpipe;
    detail::FdWriter out(fd, kind);
    Batch batch(out);
    StreamEncoder encoder(options.write);
    std::vector<std::span<const uint8_t>> spans;
    const auto report = [&] {
        if (options.progress) {
            options.progress(out.written());
        }
    };
    for (const size_t i : file.write_order()) {
        HURRAY_ASSIGN_OR_RETURN(const FileTensor t, file.tensor(i));
        spans.clear();
        for (const SharedBuffer& b : t.buffers()) {
            spans.push_back(b.span());
        }
        HURRAY_RETURN_IF_ERROR(stream_steps::check_given_buffers(encoder, t.descriptor(), spans));
        HURRAY_ASSIGN_OR_RETURN(const std::vector<uint8_t> desc, encoder.begin_tensor(t.descriptor()));
        batch.add_staged(desc);
        for (const std::span<const uint8_t> b : spans) {
            HURRAY_RETURN_IF_ERROR(encoder.data(b.size()));
            if (zero_copy && b.size() >= kSpliceMin) {
                if (auto st = batch.send(); !st) {
                    return transport_error(file, encoder, st);
                }
                if (auto st = out.splice_all(b); !st) {
                    return transport_error(file, encoder, st);
                }
                report();
            } else {
                batch.add_data(b);
            }
        }
        HURRAY_RETURN_IF_ERROR(encoder.end_tensor());
        // Without a mapping the buffers are copies that `t` owns: send them before it goes.
        if (batch.full() || !file.mapped()) {
            if (auto st = batch.send(); !st) {
                return transport_error(file, encoder, st);
            }
            report();
        }
        HURRAY_RETURN_IF_ERROR(file.check_unchanged());
    }
    if (auto st = batch.send(); !st) {
        return transport_error(file, encoder, st);
    }
    report();
    HURRAY_RETURN_IF_ERROR(encoder.finish());
    return file.check_unchanged();
}

Status file_to_stream(const FileReader& file, ByteSink& sink, const StreamWriteOptions& options) {
    // Every descriptor decoded and every composite checked before a byte goes out.
    HURRAY_RETURN_IF_ERROR(file.check_all());
    StreamWriter writer(sink, options);
    std::vector<std::span<const uint8_t>> spans;
    for (const size_t i : file.write_order()) {
        HURRAY_ASSIGN_OR_RETURN(const FileTensor t, file.tensor(i));
        spans.clear();
        for (const SharedBuffer& b : t.buffers()) {
            spans.push_back(b.span());
        }
        if (auto s = writer.write_tensor(t.descriptor(), spans); !s) {
            // A write from a vanished page fails (EFAULT from write(2)) or
            // reads zeros; either way the file's change is the real cause.
            HURRAY_RETURN_IF_ERROR(file.check_unchanged());
            return s;
        }
        HURRAY_RETURN_IF_ERROR(file.check_unchanged());
    }
    return writer.finish();
}

Result<uint64_t> stream_to_file(ByteSource& source, FileWriter& writer, std::span<const std::string> names,
                                const StreamReadOptions& options) {
    StreamReader reader(source, options);
    const bool direct = source.splice_fd() >= 0;
    const std::function<Result<uint64_t>(ByteSource&, uint64_t)> move = [&writer](ByteSource& src, uint64_t n) {
        return writer.write_data_from(src, n);
    };
    while (true) {
        HURRAY_ASSIGN_OR_RETURN(const StreamTensor* t, reader.next());
        if (t == nullptr) {
            return reader.decoder().tensor_count();
        }
        std::string generated;
        if (t->index >= names.size()) {
            generated = "tensor_" + dec(t->index);
        }
        const std::string& name = t->index < names.size() ? names[t->index] : generated;
        HURRAY_RETURN_IF_ERROR(writer.begin_tensor(name, t->descriptor));
        while (direct) {
            // Straight from the pipe into the file (splice), buffer by buffer.
            HURRAY_ASSIGN_OR_RETURN(const uint64_t moved, reader.move_buffer(move));
            if (moved == 0) {
                break;
            }
        }
        while (!direct) {
            HURRAY_ASSIGN_OR_RETURN(const StreamChunk c, reader.read_chunk());
            if (c.bytes.empty()) {
                break;
            }
            HURRAY_RETURN_IF_ERROR(writer.write_data(c.bytes));
        }
        HURRAY_RETURN_IF_ERROR(writer.end_tensor());
        // Composites are validated by the reader; the list is not needed here.
        (void)reader.take_completed();
    }
}

}  // namespace hurray
