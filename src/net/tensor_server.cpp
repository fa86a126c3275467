// SPDX-License-Identifier: Apache-2.0
// The tensor server: accept loops, one Connection per client (a reader, a
// writer and a watchdog coroutine on the connection's strand), the catalog of
// served tensors, and the jobs that turn a request into frames.
#include "hurray/net/tensor_server.hpp"

#include <asio/bind_executor.hpp>
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/generic/stream_protocol.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/local/stream_protocol.hpp>
#include <asio/post.hpp>
#include <asio/read.hpp>
#include <asio/redirect_error.hpp>
#include <asio/steady_timer.hpp>
#include <asio/strand.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>

#include <algorithm>
#include <cctype>
#include <atomic>
#include <deque>
#include <functional>
#include <filesystem>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "hurray/core/builder.hpp"
#include "hurray/core/byte_io.hpp"
#include "hurray/core/checked_math.hpp"
#include "hurray/core/dequantize.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/relayout.hpp"
#include "hurray/core/shape.hpp"
#include "hurray/core/text.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/transport_message.hpp"
#include "hurray/net/dequantize_entry.hpp"
#include "hurray/net/transport_address.hpp"
#include "net/full_transfer.hpp"

namespace hurray::net {

namespace {

using Clock = std::chrono::steady_clock;
using Socket = asio::generic::stream_protocol::socket;

/// One served tensor.
struct CatalogEntry {
    std::string key;
    std::shared_ptr<const FileReader> file;
    size_t index = 0;                       // in its file
    std::vector<uint8_t> descriptor_bytes;  // as stored
    TensorDescriptor descriptor;
    std::vector<SharedBuffer> buffers;      // its data, in the file mapping
    uint64_t data_bytes = 0;
    std::vector<size_t> tree;               // what a request sends: itself, then its members (pre-order)
};

/// The layouts the server transcodes to, from its row-major materialization:
/// row-major itself, column-major (`column_major_from_row_major`), strided
/// with the row-major strides (the same bytes) and tiled
/// (`tiled_from_row_major`, tiles of `server_tile_shape`).
constexpr uint8_t kTranscodeTargets[] = {
    static_cast<uint8_t>(LayoutTag::kRowMajor), static_cast<uint8_t>(LayoutTag::kColumnMajor),
    static_cast<uint8_t>(LayoutTag::kStrided), static_cast<uint8_t>(LayoutTag::kTiled)};

/// Whether `e` is one dense tensor the server can read row-major: not a
/// composite, no extension type or layout.
bool plain_tensor(const CatalogEntry& e) {
    const TensorDescriptor& d = e.descriptor;
    return e.tree.size() == 1 && d.layout_tag() != static_cast<uint8_t>(LayoutTag::kComposite) && !d.extension_type &&
           d.layout_tag() < 0xF0;
}

/// Whether the server can give `e` in layout `target`: an unquantized
/// `plain_tensor` into another layout of `kTranscodeTargets`; row-major from
/// any rank (a scalar is row-major by rule), tiled for whole-byte element
/// types only.
bool can_transcode(const CatalogEntry& e, uint8_t target) {
    const TensorDescriptor& d = e.descriptor;
    if (!plain_tensor(e) || d.quantization || d.layout_tag() == target ||
        std::find(std::begin(kTranscodeTargets), std::end(kTranscodeTargets), target) == std::end(kTranscodeTargets)) {
        return false;
    }
    if (target == static_cast<uint8_t>(LayoutTag::kTiled)) {
        return !d.shape.empty() && bit_width(d.element_type) % 8 == 0;
    }
    return target == static_cast<uint8_t>(LayoutTag::kRowMajor) || !d.shape.empty();
}

/// Whether the server can give `e` dequantized (`dequantize_layout_entry`):
/// a `plain_tensor` quantized by a scheme core interprets (not a private one).
bool can_dequantize(const CatalogEntry& e) {
    const auto& q = e.descriptor.quantization;
    return plain_tensor(e) && q && !std::holds_alternative<OpaqueQuantization>(q->scheme);
}

/// The tiles of a tiled answer (docs/server.md): `min(dim, edge)` (at least
/// 1) along the last two dimensions, 1 along the others.
std::vector<uint64_t> server_tile_shape(std::span<const uint64_t> shape, uint64_t edge) {
    std::vector<uint64_t> tile(shape.size(), 1);
    for (size_t k = shape.size() >= 2 ? shape.size() - 2 : 0; k < shape.size(); ++k) {
        tile[k] = std::max<uint64_t>(1, std::min(shape[k], edge));
    }
    return tile;
}

/// The bytes a transcoding of `e` to `target` holds at once (its row-major
/// materialization and, but for row-major and strided, the laid out copy;
/// float32 values when dequantized), or nullopt when that overflows.
std::optional<uint64_t> transcode_held_bytes(const CatalogEntry& e, uint8_t target, uint64_t tile_edge) {
    const auto count = element_count(e.descriptor.shape);
    if (!count) {
        return std::nullopt;
    }
    if (target == kDequantizeLayoutTag) {
        return mul_u64(*count, sizeof(float));
    }
    const auto row_major = e.descriptor.element_storage_bytes(*count);
    if (!row_major) {
        return std::nullopt;
    }
    if (target == static_cast<uint8_t>(LayoutTag::kColumnMajor)) {
        return mul_u64(*row_major, 2);
    }
    if (target == static_cast<uint8_t>(LayoutTag::kTiled)) {
        const auto tiled = tiled_storage_bytes(e.descriptor.element_type, e.descriptor.shape,
                                               server_tile_shape(e.descriptor.shape, tile_edge));
        return tiled ? add_u64(*row_major, *tiled) : std::nullopt;
    }
    return *row_major;
}

/// A tensor transcoded for one request; holds its share of the budget.
struct Transcoded {
    TensorDescriptor descriptor;
    std::vector<uint8_t> descriptor_bytes;
    SharedBuffer data;
    std::shared_ptr<void> reservation;  // releases the budget when the last holder goes
};

/// One message to write: small messages are owned; a data frame is its
/// 20-byte head and views of the data (kept alive by `keep`).
struct Frame {
    std::vector<uint8_t> owned;
    std::array<uint8_t, kMessageHeaderSize + kDataFrameHeaderSize> head{};
    bool has_head = false;
    std::vector<asio::const_buffer> data;
    uint64_t data_bytes = 0;
    std::shared_ptr<const void> keep;
};

/// Work that produces the frames of one stream.
class Job {
public:
    explicit Job(uint32_t stream_id) noexcept : stream_id_(stream_id) {}
    Job(const Job&) = delete;
    Job& operator=(const Job&) = delete;
    virtual ~Job() = default;
    /// Fills `frame` with the next message (whose payload is at most `max_payload`).
    virtual Status next(Frame& frame, uint32_t max_payload) = 0;
    /// Whether every frame has been produced.
    [[nodiscard]] virtual bool done() const noexcept = 0;
    [[nodiscard]] uint32_t stream_id() const noexcept { return stream_id_; }
    /// The streams the server opened for this job (a parallel transfer's
    /// shards after the first), besides `stream_id()`.
    [[nodiscard]] virtual std::span<const uint32_t> server_streams() const noexcept { return {}; }
    /// Whether `sid` is one of this job's streams.
    [[nodiscard]] bool owns(uint32_t sid) const noexcept {
        const auto more = server_streams();
        return sid == stream_id_ || std::find(more.begin(), more.end(), sid) != more.end();
    }

private:
    uint32_t stream_id_;
};

/// The frames of a tensor, or of a composite head and its members.
class TensorJob final : public Job {
public:
    TensorJob(uint32_t stream_id, const std::vector<CatalogEntry>& catalog, const CatalogEntry& entry,
              std::optional<Transcoded> transcoded, uint32_t frame_size)
        : Job(stream_id), catalog_(catalog), entry_(entry), transcoded_(std::move(transcoded)), frame_size_(frame_size) {
        start_item();
    }

    Status next(Frame& frame, uint32_t max_payload) override {
        switch (phase_) {
            case Phase::kDescriptor: {
                const DescriptorTransport t{.total_data_bytes = total_, .shard_index = 0, .total_shards = 1};
                auto msg = encode_tensor_descriptor(stream_id(), descriptor_bytes(), t);
                if (!msg) {
                    return std::move(msg).error();
                }
                if (msg->size() - kMessageHeaderSize > max_payload) {
                    return Error(ErrorCode::kInvalidArgument,
                                 "the descriptor of '" + current().key + "' (" + std::to_string(msg->size()) +
                                     " bytes) exceeds the client's max_message_size of " + std::to_string(max_payload));
                }
                frame.owned = std::move(*msg);
                phase_ = total_ > 0 ? Phase::kData : Phase::kEnd;
                return Status::success();
            }
            case Phase::kData: {
                const uint64_t room = std::max<uint64_t>(1, std::min<uint64_t>(frame_size_, max_payload - kDataFrameHeaderSize));
                const uint64_t len = std::min(room, total_ - pos_);
                auto head = encode_tensor_data_header(stream_id(), pos_, static_cast<size_t>(len));
                if (!head) {
                    return std::move(head).error();
                }
                frame.head = *head;
                frame.has_head = true;
                frame.data_bytes = len;
                uint64_t left = len;
                while (left > 0) {
                    const std::span<const uint8_t> piece = span_at(buffer_);
                    const uint64_t take = std::min<uint64_t>(left, piece.size() - in_buffer_);
                    frame.data.emplace_back(piece.data() + in_buffer_, static_cast<size_t>(take));
                    left -= take;
                    in_buffer_ += take;
                    if (in_buffer_ == piece.size()) {
                        ++buffer_;
                        in_buffer_ = 0;
                    }
                }
                if (transcoded_ && item_ == 0) {
                    frame.keep = transcoded_->data.owner();
                }
                pos_ += len;
                if (pos_ == total_) {
                    phase_ = Phase::kEnd;
                }
                return Status::success();
            }
            case Phase::kEnd: {
                auto msg = encode_message(MessageType::kTensorDataEnd, stream_id());
                if (!msg) {
                    return std::move(msg).error();
                }
                frame.owned = std::move(*msg);
                ++item_;
                if (item_ < entry_.tree.size()) {
                    start_item();
                } else {
                    phase_ = Phase::kDone;
                }
                return Status::success();
            }
            case Phase::kDone: break;
        }
        return Error(ErrorCode::kInvalidArgument, "tensor job: no frame left");
    }

    [[nodiscard]] bool done() const noexcept override { return phase_ == Phase::kDone; }

private:
    enum class Phase : uint8_t { kDescriptor, kData, kEnd, kDone };

    [[nodiscard]] const CatalogEntry& current() const { return catalog_[entry_.tree[item_]]; }

    [[nodiscard]] std::span<const uint8_t> descriptor_bytes() const {
        if (transcoded_ && item_ == 0) {
            return transcoded_->descriptor_bytes;
        }
        return current().descriptor_bytes;
    }

    [[nodiscard]] size_t buffer_count() const {
        return transcoded_ && item_ == 0 ? 1 : current().buffers.size();
    }

    [[nodiscard]] std::span<const uint8_t> span_at(size_t b) const {
        if (transcoded_ && item_ == 0) {
            return transcoded_->data.span();
        }
        return current().buffers[b].span();
    }

    void start_item() {
        phase_ = Phase::kDescriptor;
        pos_ = 0;
        buffer_ = 0;
        in_buffer_ = 0;
        total_ = transcoded_ && item_ == 0 ? transcoded_->data.size() : current().data_bytes;
        // Skip empty buffers up front, so that span_at(buffer_) always has bytes left.
        while (buffer_ < buffer_count() && span_at(buffer_).empty()) {
            ++buffer_;
        }
    }

    const std::vector<CatalogEntry>& catalog_;
    const CatalogEntry& entry_;
    std::optional<Transcoded> transcoded_;
    uint32_t frame_size_;
    size_t item_ = 0;
    Phase phase_ = Phase::kDescriptor;
    uint64_t total_ = 0;
    uint64_t pos_ = 0;
    size_t buffer_ = 0;
    uint64_t in_buffer_ = 0;
};

/// What a parallel transfer sends: the tensor as slices along dimension 0.
struct ShardPlan {
    struct Shard {
        std::vector<uint8_t> descriptor;  // the shard's descriptor (with its shard section)
        uint64_t begin = 0;               // its bytes within the tensor's data
        uint64_t size = 0;
    };
    std::vector<Shard> shards;
};

/// Splits a dense row-major tensor of `data_bytes` (one buffer, nothing
/// before element 0, no quantization, extension type, shard or member
/// section) into at most `o.max_shards` slices of whole rows along dimension
/// 0, each of at least `o.min_shard_bytes`; nullopt when the tensor does not
/// qualify or would make fewer than two shards. Each shard's descriptor is the
/// tensor's with its row count, its buffer's size and a shard section
/// (`parent_shape` the tensor's shape, `shard_offset` its first row); the
/// statistics section, which describes the whole tensor, is left out.
std::optional<ShardPlan> plan_shards(const TensorDescriptor& d, uint64_t data_bytes, const ServerOptions& o) {
    if (o.max_shards < 2 || d.layout_tag() != static_cast<uint8_t>(LayoutTag::kRowMajor) || d.buffers.size() != 1 ||
        d.byte_offset != 0 || d.quantization || d.extension_type || d.shard || d.composite_member || d.shape.empty() ||
        d.shape[0] < 2 || d.buffers[0].byte_size != data_bytes) {
        return std::nullopt;
    }
    uint64_t row_elements = 1;
    for (size_t k = 1; k < d.shape.size(); ++k) {
        const auto next = mul_u64(row_elements, d.shape[k]);
        if (!next) {
            return std::nullopt;
        }
        row_elements = *next;
    }
    const auto row_bytes = d.element_storage_bytes(row_elements);
    const uint64_t rows = d.shape[0];
    if (!row_bytes || *row_bytes == 0 || mul_u64(*row_bytes, rows) != std::optional<uint64_t>(data_bytes)) {
        return std::nullopt;  // empty rows, or sub-byte elements packed across rows
    }
    const uint64_t by_size = data_bytes / std::max<uint64_t>(o.min_shard_bytes, 1);
    const uint64_t n = std::min({static_cast<uint64_t>(o.max_shards), rows, by_size});
    if (n < 2) {
        return std::nullopt;
    }
    ShardPlan plan;
    std::vector<uint64_t> parent(d.shape.begin(), d.shape.end());
    uint64_t row = 0;
    for (uint64_t k = 0; k < n; ++k) {
        const uint64_t count = rows / n + (k < rows % n ? 1 : 0);
        TensorDescriptor s = d;
        s.shape[0] = count;
        s.buffers[0].byte_size = count * *row_bytes;
        s.statistics.reset();
        s.shard = ShardDescriptor{.parent_shape = parent, .shard_offset = std::vector<uint64_t>(parent.size(), 0)};
        s.shard->shard_offset[0] = row;
        auto bytes = encode(s);
        if (!bytes) {
            return std::nullopt;
        }
        plan.shards.push_back(ShardPlan::Shard{.descriptor = std::move(*bytes), .begin = row * *row_bytes,
                                               .size = count * *row_bytes});
        row += count;
    }
    return plan;
}

/// A parallel transfer (interchange.md § Parallel Transfers): every shard's
/// TENSOR_DESCRIPTOR back to back in one write (shard 0 on the request's
/// stream, the others on streams the server opened), so that a client binds
/// the shards to its request by position; then the shards' data frames in
/// turn, each shard's TENSOR_DATA_END after its last frame.
class ShardedJob final : public Job {
public:
    /// `streams[k]` carries shard k (`streams[0]` is the request's); `data`
    /// is the tensor's bytes, kept alive by `keep` (or by the catalog).
    ShardedJob(std::vector<uint32_t> streams, ShardPlan plan, std::span<const uint8_t> data,
               std::shared_ptr<const void> keep, uint32_t frame_size)
        : Job(streams.at(0)),
          streams_(std::move(streams)),
          plan_(std::move(plan)),
          sent_(plan_.shards.size(), 0),
          ended_(plan_.shards.size(), false),
          data_(data),
          keep_(std::move(keep)),
          frame_size_(frame_size) {}

    Status next(Frame& frame, uint32_t max_payload) override {
        const auto total = static_cast<uint32_t>(plan_.shards.size());
        if (!announced_) {
            for (uint32_t k = 0; k < total; ++k) {
                const ShardPlan::Shard& s = plan_.shards[k];
                const DescriptorTransport t{.total_data_bytes = s.size, .shard_index = k, .total_shards = total};
                HURRAY_ASSIGN_OR_RETURN(std::vector<uint8_t> msg, encode_tensor_descriptor(streams_[k], s.descriptor, t));
                if (msg.size() - kMessageHeaderSize > max_payload) {
                    return Error(ErrorCode::kInvalidArgument, "a shard descriptor (" + std::to_string(msg.size()) +
                                                                  " bytes) exceeds the client's max_message_size of " +
                                                                  std::to_string(max_payload));
                }
                frame.owned.insert(frame.owned.end(), msg.begin(), msg.end());
            }
            announced_ = true;
            return Status::success();
        }
        const uint32_t k = turn_;
        const ShardPlan::Shard& s = plan_.shards[k];
        if (sent_[k] < s.size) {
            const uint64_t room = std::max<uint64_t>(1, std::min<uint64_t>(frame_size_, max_payload - kDataFrameHeaderSize));
            const uint64_t len = std::min(room, s.size - sent_[k]);
            HURRAY_ASSIGN_OR_RETURN(frame.head, encode_tensor_data_header(streams_[k], sent_[k], static_cast<size_t>(len)));
            frame.has_head = true;
            frame.data.emplace_back(data_.data() + s.begin + sent_[k], static_cast<size_t>(len));
            frame.data_bytes = len;
            frame.keep = keep_;
            sent_[k] += len;
        } else {
            HURRAY_ASSIGN_OR_RETURN(frame.owned, encode_message(MessageType::kTensorDataEnd, streams_[k]));
            ended_[k] = true;
            ++ended_count_;
        }
        // The next shard with something left to send, in turn.
        for (uint32_t step = 1; step <= total && ended_count_ < total; ++step) {
            const uint32_t c = (k + step) % total;
            if (!ended_[c]) {
                turn_ = c;
                break;
            }
        }
        return Status::success();
    }

    [[nodiscard]] bool done() const noexcept override { return ended_count_ == plan_.shards.size(); }
    [[nodiscard]] std::span<const uint32_t> server_streams() const noexcept override {
        return std::span<const uint32_t>(streams_).subspan(1);
    }

private:
    std::vector<uint32_t> streams_;
    ShardPlan plan_;
    std::vector<uint64_t> sent_;
    std::vector<bool> ended_;
    std::span<const uint8_t> data_;
    std::shared_ptr<const void> keep_;
    uint32_t frame_size_;
    bool announced_ = false;
    uint32_t turn_ = 0;
    size_t ended_count_ = 0;
};

/// The listing (private extension): batches of entries, then the end.
class ListJob final : public Job {
public:
    ListJob(uint32_t stream_id, const std::vector<CatalogEntry>& catalog) : Job(stream_id), catalog_(catalog) {}

    Status next(Frame& frame, uint32_t max_payload) override {
        if (next_ == catalog_.size()) {
            frame.owned = encode_list_end(stream_id(), catalog_.size());
            ended_ = true;
            return Status::success();
        }
        std::vector<ListEntry> batch;
        uint64_t size = 4;
        while (next_ < catalog_.size()) {
            const CatalogEntry& e = catalog_[next_];
            ListEntry le{.key = e.key, .descriptor = e.descriptor_bytes};
            const uint64_t add = list_entry_encoded_size(le);
            if (size + add > max_payload) {
                if (batch.empty()) {
                    return Error(ErrorCode::kInvalidArgument, "the listing entry of '" + e.key +
                                                                  "' exceeds the client's max_message_size");
                }
                break;
            }
            size += add;
            batch.push_back(std::move(le));
            ++next_;
        }
        auto msg = encode_list_entries(stream_id(), batch);
        if (!msg) {
            return std::move(msg).error();
        }
        frame.owned = std::move(*msg);
        return Status::success();
    }

    [[nodiscard]] bool done() const noexcept override { return ended_; }

private:
    const std::vector<CatalogEntry>& catalog_;
    size_t next_ = 0;
    bool ended_ = false;
};

}  // namespace

class Connection;

/// The server's shared state: the catalog (immutable after create), the
/// acceptors and connections, the counters.
struct HURRAY_NET_NO_EXPORT TensorServer::State : std::enable_shared_from_this<TensorServer::State> {
    asio::any_io_executor executor;
    ServerOptions options;
    std::vector<CatalogEntry> catalog;
    std::unordered_map<std::string_view, size_t> by_key;
    std::vector<std::string> keys;
    std::vector<LayoutEntry> layouts;  // advertised in SERVER_HELLO

    std::mutex mutex;  // guards what follows
    bool stopping = false;
    std::vector<std::function<void()>> closers;     // close each acceptor
    std::vector<std::weak_ptr<Connection>> connections;
    std::vector<std::string> unix_paths;            // removed at stop

    std::atomic<uint64_t> accepted{0}, refused{0}, open{0}, requests{0}, errors_sent{0}, data_bytes_sent{0};
    std::atomic<uint64_t> transcode_bytes{0}, transcode_peak{0};
    std::atomic<uint64_t> held_bytes{0}, held_peak{0};

    /// Adds `delta` to the bytes held for connections (input payloads, queued answers).
    void hold(int64_t delta) {
        const uint64_t now = held_bytes.fetch_add(static_cast<uint64_t>(delta)) + static_cast<uint64_t>(delta);
        uint64_t peak = held_peak.load();
        while (now > peak && !held_peak.compare_exchange_weak(peak, now)) {
        }
    }

    /// Reserves `n` bytes of the transcoding budget; nullptr when it would be exceeded.
    std::shared_ptr<void> reserve_transcode(uint64_t n) {
        uint64_t cur = transcode_bytes.load();
        for (;;) {
            if (n > options.transcode_memory_limit || cur > options.transcode_memory_limit - n) {
                return nullptr;
            }
            if (transcode_bytes.compare_exchange_weak(cur, cur + n)) {
                break;
            }
        }
        uint64_t peak = transcode_peak.load();
        while (cur + n > peak && !transcode_peak.compare_exchange_weak(peak, cur + n)) {
        }
        std::weak_ptr<State> weak = weak_from_this();
        return {reinterpret_cast<void*>(1), [weak, n](void*) {
                    if (auto s = weak.lock()) {
                        s->transcode_bytes.fetch_sub(n);
                    }
                }};
    }

    void drain();
};

namespace {

/// The file an uploaded tensor is stored in: its key with every byte outside
/// [A-Za-z0-9._-] written %XX, a leading '.' too (no path, no hidden file), + ".hrry".
std::string put_file_name(std::string_view key) {
    std::string out;
    for (size_t i = 0; i < key.size(); ++i) {
        const auto c = static_cast<unsigned char>(key[i]);
        const bool plain = (std::isalnum(c) != 0 || c == '_' || c == '-' || c == '.') && !(i == 0 && c == '.');
        if (plain) {
            out.push_back(static_cast<char>(c));
        } else {
            out += '%';
            out += hex_digits(c, 2, true);
        }
    }
    return out + ".hrry";
}

}  // namespace

/// One client connection. Its three coroutines run on the socket's strand and
/// share this object; the last one to finish destroys it.
class Connection : public std::enable_shared_from_this<Connection> {
public:
    Connection(std::shared_ptr<TensorServer::State> state, Socket socket)
        : state_(std::move(state)),
          socket_(std::move(socket)),
          wake_(socket_.get_executor()),
          drained_(socket_.get_executor()),
          watchdog_timer_(socket_.get_executor()) {
        wake_.expires_at(Clock::time_point::max());
        drained_.expires_at(Clock::time_point::max());
        state_->open.fetch_add(1);
    }
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;
    ~Connection() {
        state_->hold(-static_cast<int64_t>(payload_.capacity() + control_bytes_));
        state_->open.fetch_sub(1);
        asio::post(state_->executor, [s = state_] { s->drain(); });
    }

    /// Starts the reader, writer and watchdog.
    void start() {
        auto self = shared_from_this();
        const auto ex = socket_.get_executor();
        asio::co_spawn(ex, [self]() { return self->guarded(self->read_loop()); }, asio::detached);
        asio::co_spawn(ex, [self]() { return self->guarded(self->write_loop()); }, asio::detached);
        asio::co_spawn(ex, [self]() { return self->guarded(self->watchdog()); }, asio::detached);
    }

    /// Answers `SERVER_BUSY` and closes (over `max_clients`).
    void refuse() {
        auto self = shared_from_this();
        queue_error(0, TransportErrorCode::kServerBusy,
                    "the server serves " + std::to_string(state_->options.max_clients) + " clients at most; try later");
        reading_done_ = true;
        asio::co_spawn(socket_.get_executor(), [self]() { return self->guarded(self->write_loop()); }, asio::detached);
    }

    /// Graceful stop: read no more requests, finish what is in flight (posted
    /// to the strand by the server).
    void drain() {
        draining_ = true;
        if (!reading_done_) {
            std::error_code ec;
            socket_.shutdown(asio::socket_base::shutdown_receive, ec);
        }
        notify();
    }

    [[nodiscard]] asio::any_io_executor executor() { return socket_.get_executor(); }

private:
    asio::awaitable<void> guarded(asio::awaitable<void> body) {
        try {
            co_await std::move(body);
        } catch (...) {
            close();
        }
    }

    void close() {
        if (closed_) {
            return;
        }
        closed_ = true;
        std::error_code ec;
        socket_.shutdown(asio::socket_base::shutdown_both, ec);
        socket_.close(ec);
        wake_.cancel();
        drained_.cancel();
        watchdog_timer_.cancel();
        jobs_.clear();
    }

    void notify() { wake_.cancel(); }

    uint32_t max_payload() const noexcept { return client_max_payload_; }

    void queue(std::vector<uint8_t> msg) {
        control_bytes_ += msg.size();
        state_->hold(static_cast<int64_t>(msg.size()));
        control_.push_back(std::move(msg));
        notify();
    }

    void queue_error(uint32_t stream_id, TransportErrorCode code, std::string_view message) {
        state_->errors_sent.fetch_add(1);
        queue(encode_error(stream_id, static_cast<uint32_t>(code), message, max_payload()));
    }

    /// Ends the stream `stream_id`: its job (if any) goes with every stream
    /// it holds, no more frames.
    void end_stream(uint32_t stream_id) {
        std::erase_if(jobs_, [&](const std::unique_ptr<Job>& j) {
            if (!j->owns(stream_id)) {
                return false;
            }
            release_streams(*j);
            return true;
        });
        streams_.erase(stream_id);
        puts_.erase(stream_id);  // an unfinished upload leaves no file
    }

    asio::awaitable<void> read_loop() {
        std::array<uint8_t, kMessageHeaderSize> head{};
        while (!closed_ && !draining_ && !reading_done_) {
            read_deadline_ = Clock::now() + state_->options.idle_timeout;
            std::error_code ec;
            co_await asio::async_read(socket_, asio::buffer(head), asio::redirect_error(asio::use_awaitable, ec));
            if (ec) {
                break;
            }
            auto h = decode_message_header(head);
            if (h->payload_length > state_->options.max_message_size) {
                queue_error(h->stream_id, TransportErrorCode::kMessageTooLarge,
                            "payload_length " + std::to_string(h->payload_length) + " exceeds max_message_size " +
                                std::to_string(state_->options.max_message_size));
                break;
            }
            message_in_progress_ = true;
            read_deadline_ = Clock::now() + state_->options.message_timeout;
            const size_t before = payload_.capacity();
            payload_.resize(h->payload_length);
            state_->hold(static_cast<int64_t>(payload_.capacity() - before));
            co_await detail::read_exact(socket_, payload_, ec);
            message_in_progress_ = false;
            if (ec) {
                break;
            }
            if (!handle(*h)) {
                break;  // a connection-level error: stop reading, flush, close
            }
            // Backpressure: a client that sends faster than it reads the answers waits.
            while (!closed_ && control_bytes_ > 2 * static_cast<uint64_t>(state_->options.max_message_size) + 65536) {
                co_await drained_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
                drained_.expires_at(Clock::time_point::max());
            }
        }
        reading_done_ = true;
        notify();
    }

    /// Handles one message; false when the connection must close (after
    /// the queued messages have gone out).
    bool handle(const MessageHeader& h) {
        const std::span<const uint8_t> p(payload_);
        const uint32_t sid = h.stream_id;
        if (!is_known_message_type(h.type)) {
            queue_error(sid, TransportErrorCode::kInvalidMessage, "unknown message type " + hex(h.type, 8));
            end_stream(sid);
            return true;
        }
        const auto type = static_cast<MessageType>(h.type);
        if (!hello_done_) {
            return handle_hello(h, p);
        }
        if (sid == 0) {
            queue_error(0, TransportErrorCode::kInvalidMessage,
                        std::string(message_type_name(h.type)) + " on stream_id 0, which is reserved");
            return false;
        }
        switch (type) {
            case MessageType::kTensorRequest: handle_request(sid, p); return true;
            case MessageType::kListRequest: {
                if (Status s = check_empty_payload(type, p); !s) {
                    queue_error(sid, TransportErrorCode::kInvalidMessage, s.error().to_string());
                    return true;
                }
                if (!open_stream(sid)) {
                    return true;
                }
                state_->requests.fetch_add(1);
                add_job(std::make_unique<ListJob>(sid, state_->catalog));
                return true;
            }
            case MessageType::kPing: {
                auto pong = encode_message(MessageType::kPong, sid, p);
                if (pong) {
                    queue(std::move(*pong));
                }
                return true;
            }
            case MessageType::kPong: return true;
            case MessageType::kError: end_stream(sid); return true;
            case MessageType::kTensorPut: handle_put(sid, p); return true;
            case MessageType::kTensorData:
            case MessageType::kTensorDataEnd:
                if (auto put = puts_.find(sid); put != puts_.end()) {
                    handle_put_data(put, type, p);
                    return true;
                }
                if (rejected_puts_.contains(sid)) {
                    if (type == MessageType::kTensorDataEnd) {
                        rejected_puts_.erase(sid);
                    }
                    return true;  // the rest of a PUT already answered with ERROR
                }
                [[fallthrough]];
            default:
                queue_error(sid, TransportErrorCode::kInvalidMessage,
                            "a server does not accept " + std::string(message_type_name(h.type)) +
                                (type == MessageType::kClientHello ? " twice" : ""));
                end_stream(sid);
                return true;
        }
    }

    /// A PUT being received: its file, what it expects, what has come.
    struct PutInProgress {
        std::string key;
        std::filesystem::path path;
        std::optional<FileWriter> writer;
        uint64_t total = 0;
        uint64_t received = 0;
    };

    /// Refuses PUT `sid` with `code`: its later data frames are dropped quietly.
    void refuse_put(uint32_t sid, TransportErrorCode code, std::string_view why) {
        remember_rejected_put(sid);
        queue_error(sid, code, why);
    }

    void handle_put(uint32_t sid, std::span<const uint8_t> p) {
        const ServerOptions& o = state_->options;
        if (o.put_directory.empty()) {
            refuse_put(sid, TransportErrorCode::kPutRejected, "this server does not accept uploads");
            return;
        }
        auto put = decode_tensor_put(p);
        if (!put) {
            refuse_put(sid, TransportErrorCode::kInvalidMessage, put.error().to_string());
            return;
        }
        auto desc = decode(put->descriptor);
        if (!desc) {
            refuse_put(sid, TransportErrorCode::kInvalidMessage, "TENSOR_PUT descriptor of '" + put->key + "': " +
                                                                     desc.error().to_string());
            return;
        }
        for (const BufferHandle& b : desc->buffers) {
            if (b.device_tag != DeviceTag::kCpu) {
                refuse_put(sid, TransportErrorCode::kDeviceUnavailable,
                           "this server stores tensors from CPU memory (device 0x00) only");
                return;
            }
        }
        auto run = data_run_bytes(*desc);
        if (!run) {
            refuse_put(sid, TransportErrorCode::kInvalidMessage,
                       "TENSOR_PUT descriptor of '" + put->key + "': " + run.error().to_string());
            return;
        }
        const uint64_t sum = *run;
        if (sum != put->total_data_bytes) {
            refuse_put(sid, TransportErrorCode::kInvalidMessage,
                       "TENSOR_PUT total_data_bytes " + std::to_string(put->total_data_bytes) +
                           " disagrees with the descriptor's buffers (" + std::to_string(sum) + " bytes)");
            return;
        }
        if (sum > o.max_put_bytes) {
            refuse_put(sid, TransportErrorCode::kPutRejected,
                       "a tensor of " + std::to_string(sum) + " bytes exceeds this server's limit of " +
                           std::to_string(o.max_put_bytes));
            return;
        }
        if (desc->layout_tag() == static_cast<uint8_t>(LayoutTag::kComposite) || desc->composite_member) {
            refuse_put(sid, TransportErrorCode::kPutRejected, "composites cannot be uploaded to this server");
            return;
        }
        if (puts_.contains(sid) || !open_stream(sid)) {
            remember_rejected_put(sid);
            return;
        }
        PutInProgress in;
        in.key = put->key;
        in.path = std::filesystem::path(o.put_directory) / put_file_name(put->key);
        in.total = sum;
        auto writer = FileWriter::create_file(in.path);
        Status begun = writer ? writer->begin_tensor(put->key, *desc) : Status(writer.error());
        if (!begun) {
            streams_.erase(sid);
            refuse_put(sid, TransportErrorCode::kInternal, "storing '" + put->key + "': " + begun.error().to_string());
            return;
        }
        in.writer.emplace(std::move(*writer));
        state_->requests.fetch_add(1);
        puts_.emplace(sid, std::move(in));
    }

    void handle_put_data(std::unordered_map<uint32_t, PutInProgress>::iterator it, MessageType type,
                         std::span<const uint8_t> p) {
        const uint32_t sid = it->first;
        PutInProgress& in = it->second;
        auto fail = [&](TransportErrorCode code, std::string why) {
            puts_.erase(it);  // the unfinished writer leaves no file
            streams_.erase(sid);
            refuse_put(sid, code, why);
        };
        if (type == MessageType::kTensorData) {
            auto f = decode_tensor_data(p);
            if (!f) {
                return fail(TransportErrorCode::kInvalidMessage, f.error().to_string());
            }
            if (f->offset != in.received || f->data.size() > in.total - in.received) {
                return fail(TransportErrorCode::kInvalidMessage,
                            "TENSOR_DATA at " + std::to_string(f->offset) + " (+" + std::to_string(f->data.size()) +
                                " bytes): expected the next bytes from " + std::to_string(in.received) + " of " +
                                std::to_string(in.total));
            }
            if (Status s = in.writer->write_data(f->data); !s) {
                return fail(TransportErrorCode::kInternal, "storing '" + in.key + "': " + s.error().to_string());
            }
            in.received += f->data.size();
            return;
        }
        if (Status s = check_empty_payload(type, p); !s) {
            return fail(TransportErrorCode::kInvalidMessage, s.error().to_string());
        }
        if (in.received != in.total) {
            return fail(TransportErrorCode::kInvalidMessage, "TENSOR_DATA_END after " + std::to_string(in.received) +
                                                                 " of " + std::to_string(in.total) + " bytes");
        }
        Status done = in.writer->end_tensor();
        if (done) {
            done = in.writer->finish();  // fsync, rename: the file appears whole
        }
        if (!done) {
            return fail(TransportErrorCode::kInternal, "storing '" + in.key + "': " + done.error().to_string());
        }
        puts_.erase(it);
        streams_.erase(sid);
        auto ack = encode_message(MessageType::kTensorPutAck, sid);
        if (ack) {
            queue(std::move(*ack));
        }
    }

    bool handle_hello(const MessageHeader& h, std::span<const uint8_t> p) {
        if (h.type != static_cast<uint32_t>(MessageType::kClientHello)) {
            queue_error(h.stream_id, TransportErrorCode::kInvalidMessage,
                        "the first message must be CLIENT_HELLO, not " + std::string(message_type_name(h.type)));
            return false;
        }
        if (p.size() >= 4 && load_le<uint32_t>(p.data()) == 0) {
            queue_error(h.stream_id, TransportErrorCode::kProtocolVersionMismatch,
                        "protocol_version 0 does not exist; this server speaks version 1");
            return false;
        }
        auto hello = decode_hello(p);
        if (!hello) {
            queue_error(h.stream_id, TransportErrorCode::kInvalidMessage, hello.error().to_string());
            return false;
        }
        client_max_payload_ = hello->max_message_size;
        Hello reply;
        reply.protocol_version = std::min(hello->protocol_version, kTransportProtocolVersion);
        reply.max_message_size = state_->options.max_message_size;
        reply.capability_flags = static_cast<uint64_t>(kCapTranscoding) |
                                 (state_->options.max_shards > 1 ? static_cast<uint64_t>(kCapParallelStreams) : 0U);
        reply.layouts = state_->layouts;
        reply.devices = {0x00};
        reply.memory_classes = {0x00};
        auto msg = encode_hello(MessageType::kServerHello, h.stream_id, reply);
        if (!msg) {
            queue_error(h.stream_id, TransportErrorCode::kInternal, msg.error().to_string());
            return false;
        }
        queue(std::move(*msg));
        hello_done_ = true;
        return true;
    }

    /// Reserves `sid` for a new stream; answers an error and returns false when it cannot be.
    bool open_stream(uint32_t sid) {
        if (streams_.contains(sid)) {
            queue_error(sid, TransportErrorCode::kInvalidMessage,
                        "stream " + std::to_string(sid) + " already has a request in flight");
            end_stream(sid);
            return false;
        }
        if (streams_.size() >= state_->options.max_streams_per_connection) {
            queue_error(sid, TransportErrorCode::kServerBusy,
                        std::to_string(streams_.size()) + " streams are in flight on this connection already");
            return false;
        }
        streams_.emplace(sid, ++next_token_);
        return true;
    }

    /// Opens a stream of the server's own for request `token` (a parallel
    /// transfer's shard): ids with bit 31 set, never one in flight.
    uint32_t open_server_stream(uint64_t token) {
        uint32_t sid = 0;
        do {
            sid = next_server_stream_;
            next_server_stream_ = next_server_stream_ == UINT32_MAX ? kFirstServerStream : next_server_stream_ + 1;
        } while (streams_.contains(sid));
        streams_.emplace(sid, token);
        return sid;
    }

    /// Forgets every stream of `job` (it ended or failed).
    void release_streams(const Job& job) {
        streams_.erase(job.stream_id());
        for (uint32_t sid : job.server_streams()) {
            streams_.erase(sid);
        }
    }

    void add_job(std::unique_ptr<Job> job) {
        jobs_.push_back(std::move(job));
        notify();
    }

    /// Queues the answer to request `sid` for `entry` (or its transcoded
    /// form): as parallel shards when the client accepts them and the tensor
    /// qualifies (`plan_shards`), else whole.
    void answer(uint32_t sid, const CatalogEntry& entry, std::optional<Transcoded> t, bool parallel_ok) {
        if (parallel_ok && entry.tree.size() == 1) {
            const TensorDescriptor& d = t ? t->descriptor : entry.descriptor;
            const uint64_t bytes = t ? t->data.size() : entry.data_bytes;
            if (auto plan = plan_shards(d, bytes, state_->options)) {
                std::shared_ptr<const Transcoded> keep = t ? std::make_shared<const Transcoded>(std::move(*t)) : nullptr;
                const std::span<const uint8_t> data = keep ? keep->data.span() : entry.buffers[0].span();
                std::vector<uint32_t> streams{sid};
                const uint64_t token = streams_.at(sid);
                for (size_t k = 1; k < plan->shards.size(); ++k) {
                    streams.push_back(open_server_stream(token));
                }
                add_job(std::make_unique<ShardedJob>(std::move(streams), std::move(*plan), data, std::move(keep),
                                                     frame_size()));
                return;
            }
        }
        add_job(std::make_unique<TensorJob>(sid, state_->catalog, entry, std::move(t), frame_size()));
    }

    void remember_rejected_put(uint32_t sid) {
        if (rejected_puts_.size() >= state_->options.max_streams_per_connection) {
            rejected_puts_.clear();
        }
        rejected_puts_.insert(sid);
    }

    void handle_request(uint32_t sid, std::span<const uint8_t> p) {
        auto req = decode_tensor_request(p);
        if (!req) {
            queue_error(sid, TransportErrorCode::kInvalidMessage, req.error().to_string());
            end_stream(sid);
            return;
        }
        const auto it = state_->by_key.find(req->key);
        if (it == state_->by_key.end()) {
            queue_error(sid, TransportErrorCode::kUnknownTensor, "no tensor '" + req->key + "' on this server");
            return;
        }
        if (req->preferred_device != 0x00) {
            queue_error(sid, TransportErrorCode::kDeviceUnavailable,
                        "this server holds tensors in CPU memory (device 0x00) only; device " +
                            hex(req->preferred_device) + " was asked");
            return;
        }
        if (!open_stream(sid)) {
            return;
        }
        state_->requests.fetch_add(1);
        const CatalogEntry& entry = state_->catalog[it->second];
        // Layout selection (interchange.md § Server Layout Selection).
        const uint8_t stored = entry.descriptor.layout_tag();
        std::shared_ptr<void> reservation;
        uint8_t target = stored;  // kDequantizeLayoutTag: dequantized
        const bool allow = (req->flags & kRequestAllowTranscode) != 0;
        for (const LayoutEntry& pref : req->preferred_layouts) {
            const bool dequantize = is_dequantize_layout_entry(pref);
            if (!dequantize && pref.tag == stored) {
                break;
            }
            if (allow && (dequantize ? can_dequantize(entry) : can_transcode(entry, pref.tag))) {
                const uint8_t candidate = dequantize ? kDequantizeLayoutTag : pref.tag;
                if (const auto held = transcode_held_bytes(entry, candidate, state_->options.tile_edge)) {
                    reservation = state_->reserve_transcode(*held);
                }
                if (reservation) {
                    target = candidate;
                    break;
                }
            }
        }
        const bool parallel_ok = (req->flags & kRequestParallelOk) != 0;
        if (!reservation) {
            answer(sid, entry, std::nullopt, parallel_ok);
            return;
        }
        // Transcode on the pool, then queue the job back on this strand.
        ++pending_transcodes_;
        const asio::any_io_executor pool = state_->options.transcode ? state_->options.transcode : state_->executor;
        const uint64_t token = streams_.at(sid);
        asio::post(pool, [self = shared_from_this(), sid, token, &entry, parallel_ok, target,
                          tile_edge = state_->options.tile_edge, reservation = std::move(reservation)]() mutable {
            Result<Transcoded> t = Error(ErrorCode::kOutOfMemory, "out of memory");
            try {
                t = transcode(entry, target, tile_edge, std::move(reservation));
            } catch (const std::bad_alloc&) {
                // t says so; nothing may escape a handler of the pool
            }
            asio::post(self->executor(), [self, sid, token, &entry, parallel_ok, t = std::move(t)]() mutable {
                self->transcoded(sid, token, entry, std::move(t), parallel_ok);
            });
        });
    }

    /// `entry` in layout `target` (`can_transcode`), or dequantized
    /// (`kDequantizeLayoutTag`, `can_dequantize`). Errors are named after the
    /// tensor by `transcoded`.
    static Result<Transcoded> transcode(const CatalogEntry& entry, uint8_t target, uint64_t tile_edge,
                                        std::shared_ptr<void> reservation) {
        HURRAY_ASSIGN_OR_RETURN(FileTensor tensor, entry.file->tensor(entry.index));
        Transcoded t;
        if (target == kDequantizeLayoutTag) {
            HURRAY_RETURN_IF_ERROR(dequantized(entry, tensor, t));
        } else {
            HURRAY_RETURN_IF_ERROR(relaid(entry, tensor, target, tile_edge, t));
        }
        HURRAY_ASSIGN_OR_RETURN(t.descriptor_bytes, encode(t.descriptor));
        t.reservation = std::move(reservation);
        return t;
    }

    /// Into `t`: the float32 values of the quantized `tensor`, row-major,
    /// with its shard section (its statistics describe the stored values).
    static Status dequantized(const CatalogEntry& entry, const FileTensor& tensor, Transcoded& t) {
        HURRAY_ASSIGN_OR_RETURN(const TensorView view, tensor.view());
        HURRAY_ASSIGN_OR_RETURN(std::vector<float> values, dequantize(view));
        HURRAY_ASSIGN_OR_RETURN(t.descriptor, make_dense(ElementType::kFloat32, entry.descriptor.shape));
        t.descriptor.shard = entry.descriptor.shard;
        auto owner = std::make_shared<const std::vector<float>>(std::move(values));
        const auto bytes = std::as_bytes(std::span<const float>(*owner));
        // SAFETY: the floats' object representation, read as bytes (any
        // object may be; little-endian on the hosts this library builds
        // for), kept alive by `owner`, which the buffer holds.
        t.data = SharedBuffer({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, owner);
        return Status::success();
    }

    /// Into `t`: `tensor`'s row-major materialization, laid out again for
    /// column-major and tiled; strided gets the row-major strides.
    static Status relaid(const CatalogEntry& entry, const FileTensor& tensor, uint8_t target, uint64_t tile_edge,
                         Transcoded& t) {
        HURRAY_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, tensor.materialize());
        HURRAY_ASSIGN_OR_RETURN(TensorDescriptor desc, make_dense(entry.descriptor.element_type, entry.descriptor.shape));
        if (target == static_cast<uint8_t>(LayoutTag::kColumnMajor)) {
            HURRAY_ASSIGN_OR_RETURN(bytes, column_major_from_row_major(desc.element_type, desc.shape, bytes));
            desc.layout = ColumnMajorLayout{};
        } else if (target == static_cast<uint8_t>(LayoutTag::kTiled)) {
            std::vector<uint64_t> tile = server_tile_shape(desc.shape, tile_edge);
            HURRAY_ASSIGN_OR_RETURN(bytes, tiled_from_row_major(desc.element_type, desc.shape, tile, bytes));
            desc.layout = TiledLayout{{TiledLevel{.tile_shape = std::move(tile)}}};
            HURRAY_ASSIGN_OR_RETURN(desc, size_buffers(std::move(desc)));  // whole tiles: more bytes than row-major
        } else if (target == static_cast<uint8_t>(LayoutTag::kStrided)) {
            HURRAY_ASSIGN_OR_RETURN(std::vector<int64_t> strides, row_major_strides(desc.shape));
            desc.layout = StridedLayout{.strides = std::move(strides)};
        }
        desc.shard = entry.descriptor.shard;
        desc.statistics = entry.descriptor.statistics;
        t.descriptor = std::move(desc);
        t.data = SharedBuffer::from_vector(std::move(bytes));
        return Status::success();
    }

    void transcoded(uint32_t sid, uint64_t token, const CatalogEntry& entry, Result<Transcoded> t, bool parallel_ok) {
        --pending_transcodes_;
        const auto it = streams_.find(sid);
        if (closed_ || it == streams_.end() || it->second != token) {
            notify();
            return;  // the client gave up the stream meanwhile
        }
        if (!t && t.error().code() == ErrorCode::kUnsupported) {
            answer(sid, entry, std::nullopt, parallel_ok);  // what core cannot convert comes as stored
            return;
        }
        if (!t) {
            streams_.erase(sid);
            queue_error(sid, TransportErrorCode::kInternal, "transcoding '" + entry.key + "': " + t.error().to_string());
            return;
        }
        answer(sid, entry, std::move(*t), parallel_ok);
    }

    uint32_t frame_size() const noexcept { return state_->options.data_frame_size; }

    asio::awaitable<void> write_loop() {
        std::vector<asio::const_buffer> bufs;
        while (!closed_) {
            Frame frame;
            if (!control_.empty()) {
                frame.owned = std::move(control_.front());
                control_.pop_front();
                control_bytes_ -= frame.owned.size();
                state_->hold(-static_cast<int64_t>(frame.owned.size()));
                drained_.cancel();
            } else if (!jobs_.empty()) {
                std::unique_ptr<Job> job = std::move(jobs_.front());
                jobs_.pop_front();
                const uint32_t sid = job->stream_id();
                if (Status s = job->next(frame, max_payload()); !s) {
                    release_streams(*job);
                    queue_error(sid, TransportErrorCode::kInternal, s.error().to_string());
                    continue;
                }
                if (job->done()) {
                    release_streams(*job);
                } else {
                    jobs_.push_back(std::move(job));  // round robin over the streams
                }
            } else if (reading_done_ && pending_transcodes_ == 0) {
                break;
            } else {
                std::error_code ec;
                co_await wake_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
                wake_.expires_at(Clock::time_point::max());
                continue;
            }
            bufs.clear();
            if (frame.has_head) {
                bufs.emplace_back(frame.head.data(), frame.head.size());
                bufs.insert(bufs.end(), frame.data.begin(), frame.data.end());
            } else {
                bufs.emplace_back(frame.owned.data(), frame.owned.size());
            }
            write_deadline_ = Clock::now() + state_->options.write_timeout;
            std::error_code ec;
            co_await detail::write_all(socket_, bufs, ec);
            write_deadline_ = Clock::time_point::max();
            if (ec) {
                break;
            }
            state_->data_bytes_sent.fetch_add(frame.data_bytes);
            if (!message_in_progress_) {
                read_deadline_ = Clock::now() + state_->options.idle_timeout;  // sending is not idle
            }
        }
        if (!closed_) {
            co_await linger();
        }
        close();
    }

    /// A graceful end: no more sending, then what the client still sends is
    /// read and dropped until it closes (1 s at most), so that closing with
    /// unread input does not reset the connection before the client has read
    /// the last messages (an ERROR, say).
    asio::awaitable<void> linger() {
        std::error_code ec;
        socket_.shutdown(asio::socket_base::shutdown_send, ec);
        asio::steady_timer limit(socket_.get_executor(), std::chrono::seconds(1));
        limit.async_wait([self = shared_from_this()](const std::error_code& e) {
            if (!e) {
                self->close();
            }
        });
        std::array<uint8_t, 4096> sink{};
        while (!closed_) {
            co_await socket_.async_read_some(asio::buffer(sink), asio::redirect_error(asio::use_awaitable, ec));
            if (ec) {
                break;
            }
        }
        limit.cancel();
    }

    asio::awaitable<void> watchdog() {
        const auto& o = state_->options;
        const auto tick = std::clamp<Clock::duration>(
            std::min({o.idle_timeout, o.message_timeout, o.write_timeout}) / 4, std::chrono::milliseconds(5),
            std::chrono::milliseconds(250));
        while (!closed_) {
            watchdog_timer_.expires_after(tick);
            std::error_code ec;
            co_await watchdog_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
            if (closed_) {
                break;
            }
            const auto now = Clock::now();
            if (write_deadline_ <= now) {
                close();  // the client does not read
                break;
            }
            const bool idle = jobs_.empty() && control_.empty() && pending_transcodes_ == 0;
            if (!reading_done_ && read_deadline_ <= now && (message_in_progress_ || idle)) {
                queue_error(0, TransportErrorCode::kTimeout,
                            message_in_progress_ ? "a message did not arrive whole in time"
                                                 : "the connection was idle too long");
                reading_done_ = true;
                std::error_code sec;
                socket_.shutdown(asio::socket_base::shutdown_receive, sec);
                notify();
            }
        }
    }

    std::shared_ptr<TensorServer::State> state_;
    Socket socket_;
    asio::steady_timer wake_;     // wakes the writer (cancel)
    asio::steady_timer drained_;  // wakes a reader waiting for the control queue to drain
    asio::steady_timer watchdog_timer_;
    std::vector<uint8_t> payload_;
    std::deque<std::vector<uint8_t>> control_;
    uint64_t control_bytes_ = 0;
    std::deque<std::unique_ptr<Job>> jobs_;
    std::unordered_map<uint32_t, uint64_t> streams_;  // streams with a request in flight -> their request's token
    uint64_t next_token_ = 0;
    static constexpr uint32_t kFirstServerStream = 0x80000000U;
    uint32_t next_server_stream_ = kFirstServerStream;  // the next id for a stream the server opens
    std::unordered_set<uint32_t> rejected_puts_;  // PUT streams answered with ERROR
    std::unordered_map<uint32_t, PutInProgress> puts_;  // PUT streams being received
    uint32_t client_max_payload_ = 1U << 20;
    size_t pending_transcodes_ = 0;
    Clock::time_point read_deadline_ = Clock::time_point::max();
    Clock::time_point write_deadline_ = Clock::time_point::max();
    bool hello_done_ = false;
    bool message_in_progress_ = false;
    bool reading_done_ = false;
    bool draining_ = false;
    bool closed_ = false;
};

void TensorServer::State::drain() {
    std::lock_guard lock(mutex);
    std::erase_if(connections, [](const std::weak_ptr<Connection>& c) { return c.expired(); });
}

namespace {

/// Accepts on `acceptor` until it is closed; each socket becomes a Connection
/// on a strand of its own.
template <typename Acceptor>
asio::awaitable<void> accept_loop(std::shared_ptr<TensorServer::State> state, std::shared_ptr<Acceptor> acceptor,
                                  asio::generic::stream_protocol protocol, bool tcp) {
    for (;;) {
        typename Acceptor::protocol_type::socket raw(state->executor);
        std::error_code ec;
        co_await acceptor->async_accept(raw, asio::redirect_error(asio::use_awaitable, ec));
        if (ec) {
            if (ec == asio::error::operation_aborted || !acceptor->is_open()) {
                break;
            }
            // Out of descriptors and the like: wait a little rather than spin.
            asio::steady_timer pause(state->executor, std::chrono::milliseconds(50));
            co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
            continue;
        }
        if (tcp) {
            raw.set_option(asio::ip::tcp::no_delay(true), ec);
        }
        const auto handle = raw.release(ec);
        if (ec) {
            continue;
        }
        const auto& spread = state->options.connection_executors;
        Socket socket(asio::make_strand(spread.empty() ? state->executor
                                                       : spread[state->accepted.load() % spread.size()]));
        socket.assign(protocol, handle, ec);
        if (ec) {
            continue;
        }
        auto conn = std::make_shared<Connection>(state, std::move(socket));
        bool refuse = false;
        {
            std::lock_guard lock(state->mutex);
            if (state->stopping) {
                break;
            }
            std::erase_if(state->connections, [](const std::weak_ptr<Connection>& c) { return c.expired(); });
            refuse = state->connections.size() >= state->options.max_clients;
            if (!refuse) {
                state->connections.push_back(conn);
            }
        }
        state->accepted.fetch_add(1);
        if (refuse) {
            state->refused.fetch_add(1);
            asio::post(conn->executor(), [conn] { conn->refuse(); });
        } else {
            asio::post(conn->executor(), [conn] { conn->start(); });
        }
    }
}

/// Builds the catalog of `files`.
Status build_catalog(TensorServer::State& st, std::span<const std::shared_ptr<const FileReader>> files) {
    for (const auto& file : files) {
        if (!file) {
            return Error(ErrorCode::kInvalidArgument, "TensorServer: a file is null");
        }
        HURRAY_RETURN_IF_ERROR(file->check_all());
        const size_t base = st.catalog.size();
        std::vector<size_t> position(file->tensor_count());
        for (size_t i : file->write_order()) {
            CatalogEntry e;
            e.file = file;
            e.index = i;
            e.key = file->entry(i).name;
            HURRAY_ASSIGN_OR_RETURN(SharedBuffer bytes, file->descriptor_bytes(i));
            e.descriptor_bytes.assign(bytes.begin(), bytes.end());
            HURRAY_ASSIGN_OR_RETURN(const TensorDescriptor* d, file->descriptor(i));
            e.descriptor = *d;
            auto tensor = file->tensor(i);
            if (!tensor) {
                return std::move(tensor).error();
            }
            for (const SharedBuffer& b : tensor->buffers()) {
                e.buffers.push_back(b);
                e.data_bytes += b.size();
            }
            position[i] = st.catalog.size();
            st.catalog.push_back(std::move(e));
        }
        // Each composite head sends its members after it, pre-order (nested heads with theirs).
        for (size_t c = st.catalog.size(); c-- > base;) {
            CatalogEntry& e = st.catalog[c];
            e.tree = {c};
            if (e.descriptor.layout_tag() == static_cast<uint8_t>(LayoutTag::kComposite)) {
                HURRAY_ASSIGN_OR_RETURN(FileComposite comp, file->composite(e.index));
                for (size_t m : comp.members) {
                    const auto& sub = st.catalog[position[m]].tree;
                    e.tree.insert(e.tree.end(), sub.begin(), sub.end());
                }
            }
        }
    }
    std::unordered_set<uint8_t> tags;
    for (size_t c = 0; c < st.catalog.size(); ++c) {
        const CatalogEntry& e = st.catalog[c];
        if (!st.by_key.emplace(e.key, c).second) {
            return Error(ErrorCode::kDuplicateName, "TensorServer: two files hold a tensor named '" + e.key + "'");
        }
        st.keys.push_back(e.key);
        tags.insert(e.descriptor.layout_tag());
    }
    tags.insert(std::begin(kTranscodeTargets), std::end(kTranscodeTargets));
    std::vector<uint8_t> sorted(tags.begin(), tags.end());
    std::sort(sorted.begin(), sorted.end());
    for (uint8_t t : sorted) {
        if (t < 0xF0 || t == 0xFF) {
            st.layouts.push_back(LayoutEntry{.tag = t, .ext_metadata = {}});
        }
    }
    st.layouts.push_back(dequantize_layout_entry());
    return Status::success();
}

}  // namespace

TensorServer::TensorServer(std::shared_ptr<State> state) noexcept : state_(std::move(state)) {}

TensorServer::~TensorServer() { stop(); }

Result<std::shared_ptr<TensorServer>> TensorServer::create(asio::any_io_executor executor,
                                                           std::span<const std::shared_ptr<const FileReader>> files,
                                                           ServerOptions options) {
    if (options.max_message_size < 64) {
        return Error(ErrorCode::kInvalidArgument, "ServerOptions::max_message_size must be at least 64");
    }
    if (options.data_frame_size < 4096) {
        return Error(ErrorCode::kInvalidArgument, "ServerOptions::data_frame_size must be at least 4096");
    }
    if (options.tile_edge == 0) {
        return Error(ErrorCode::kInvalidArgument, "ServerOptions::tile_edge must be at least 1");
    }
    if (options.max_shards == 0) {
        return Error(ErrorCode::kInvalidArgument, "ServerOptions::max_shards must be at least 1 (1: no parallel transfers)");
    }
    if (options.max_clients == 0 || options.max_streams_per_connection == 0) {
        return Error(ErrorCode::kInvalidArgument, "ServerOptions: max_clients and max_streams_per_connection must be positive");
    }
    if (options.idle_timeout.count() <= 0 || options.message_timeout.count() <= 0 || options.write_timeout.count() <= 0) {
        return Error(ErrorCode::kInvalidArgument, "ServerOptions: timeouts must be positive");
    }
    if (!options.put_directory.empty()) {
        std::error_code ec;
        if (!std::filesystem::is_directory(options.put_directory, ec)) {
            return Error(ErrorCode::kInvalidArgument,
                         "ServerOptions::put_directory '" + options.put_directory + "' is not a directory");
        }
    }
    auto state = std::make_shared<State>();
    state->executor = std::move(executor);
    state->options = std::move(options);
    try {
        HURRAY_RETURN_IF_ERROR(build_catalog(*state, files));
    } catch (const std::bad_alloc&) {
        return Error(ErrorCode::kOutOfMemory, "TensorServer: out of memory building the catalog");
    }
    return std::shared_ptr<TensorServer>(new TensorServer(std::move(state)));
}

namespace {

/// An acceptor of `Protocol` listening on `ep`, on a strand of its own (its accept
/// loop and its close never run at once).
template <typename Protocol>
Result<std::shared_ptr<typename Protocol::acceptor>> open_acceptor(const asio::any_io_executor& executor,
                                                                   const typename Protocol::endpoint& ep,
                                                                   bool reuse_address, const std::string& where) {
    auto acc = std::make_shared<typename Protocol::acceptor>(asio::make_strand(executor));
    std::error_code ec;
    acc->open(ep.protocol(), ec);
    if (!ec && reuse_address) {
        acc->set_option(asio::socket_base::reuse_address(true), ec);
    }
    if (!ec) {
        acc->bind(ep, ec);
    }
    if (!ec) {
        acc->listen(asio::socket_base::max_listen_connections, ec);
    }
    if (ec) {
        return Error(ErrorCode::kIoError, "listen on " + where + ": " + ec.message());
    }
    return acc;
}

/// Starts accepting on `acc` and lets stop() close it (under the state's lock).
template <typename Acceptor>
void serve_acceptor(const std::shared_ptr<TensorServer::State>& state, const std::shared_ptr<Acceptor>& acc,
                    asio::generic::stream_protocol protocol, bool tcp) {
    state->closers.push_back([acc] {
        asio::post(acc->get_executor(), [acc] {
            std::error_code e;
            acc->close(e);
        });
    });
    asio::co_spawn(acc->get_executor(), accept_loop(state, acc, protocol, tcp), asio::detached);
}

}  // namespace

Result<std::string> TensorServer::listen(std::string_view address) {
    HURRAY_ASSIGN_OR_RETURN(TransportAddress a, parse_transport_address(address));
    State& st = *state_;
    {
        std::lock_guard lock(st.mutex);
        if (st.stopping) {
            return Error(ErrorCode::kInvalidArgument, "TensorServer::listen: the server is stopping");
        }
    }
    if (a.kind == TransportAddress::Kind::kUnix) {
        std::error_code ec;
        if (std::filesystem::exists(a.path, ec)) {
            return Error(ErrorCode::kIoError, "listen on " + a.to_string() + ": the socket path exists");
        }
        using Proto = asio::local::stream_protocol;
        HURRAY_ASSIGN_OR_RETURN(auto acc, open_acceptor<Proto>(st.executor, Proto::endpoint(a.path), false, a.to_string()));
        std::lock_guard lock(st.mutex);
        st.unix_paths.push_back(a.path);
        serve_acceptor(state_, acc, asio::generic::stream_protocol(AF_UNIX, 0), false);
        return a.to_string();
    }
    using Tcp = asio::ip::tcp;
    Tcp::resolver resolver(st.executor);
    std::error_code ec;
    const auto results = resolver.resolve(a.host, std::to_string(a.port), Tcp::resolver::passive, ec);
    if (ec || results.empty()) {
        return Error(ErrorCode::kIoError, "listen on " + a.to_string() + ": resolve '" + a.host + "': " + ec.message());
    }
    const Tcp::endpoint ep = results.begin()->endpoint();
    HURRAY_ASSIGN_OR_RETURN(auto acc, open_acceptor<Tcp>(st.executor, ep, true, a.to_string()));
    const Tcp::endpoint bound = acc->local_endpoint(ec);
    a.host = bound.address().to_string();
    a.port = bound.port();
    std::lock_guard lock(st.mutex);
    serve_acceptor(state_, acc, asio::generic::stream_protocol(ep.protocol().family(), IPPROTO_TCP), true);
    return a.to_string();
}

void TensorServer::stop() {
    std::vector<std::shared_ptr<Connection>> live;
    {
        std::lock_guard lock(state_->mutex);
        if (state_->stopping) {
            return;
        }
        state_->stopping = true;
        for (auto& close : state_->closers) {
            close();  // posts the close to the acceptor's strand
        }
        state_->closers.clear();
        for (const auto& w : state_->connections) {
            if (auto c = w.lock()) {
                live.push_back(std::move(c));
            }
        }
        for (const auto& path : state_->unix_paths) {
            std::error_code ec;
            std::filesystem::remove(path, ec);
        }
    }
    for (auto& c : live) {
        asio::post(c->executor(), [c] { c->drain(); });
    }
}

ServerStats TensorServer::stats() const noexcept {
    const State& s = *state_;
    return ServerStats{.connections_accepted = s.accepted.load(),
                       .connections_refused = s.refused.load(),
                       .connections_open = s.open.load(),
                       .requests = s.requests.load(),
                       .errors_sent = s.errors_sent.load(),
                       .data_bytes_sent = s.data_bytes_sent.load(),
                       .transcode_bytes = s.transcode_bytes.load(),
                       .transcode_bytes_peak = s.transcode_peak.load(),
                       .held_bytes = s.held_bytes.load(),
                       .held_bytes_peak = s.held_peak.load()};
}

std::span<const std::string> TensorServer::keys() const noexcept { return state_->keys; }

}  // namespace hurray::net
