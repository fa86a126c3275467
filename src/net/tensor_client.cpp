// SPDX-License-Identifier: Apache-2.0
// The tensor client: one connection, one operation at a time; every message
// from the server is decoded by hurray::io's transport_message codec and
// checked before use.
#include "hurray/net/tensor_client.hpp"

#include <asio/connect.hpp>
#include <asio/generic/stream_protocol.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/local/stream_protocol.hpp>
#include <asio/read.hpp>
#include <asio/redirect_error.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>

#include <algorithm>
#include <cstring>
#include <new>
#include <unordered_map>

#include "hurray/core/builder.hpp"
#include "hurray/core/byte_io.hpp"
#include "hurray/core/checked_math.hpp"
#include "hurray/core/composite.hpp"
#include "hurray/core/composite_materialize.hpp"
#include "hurray/core/tensor_view.hpp"
#include "hurray/net/async_common.hpp"
#include "hurray/net/dequantize_entry.hpp"
#include "hurray/net/transport_address.hpp"
#include "net/full_transfer.hpp"

namespace hurray::net {

namespace {

using Socket = asio::generic::stream_protocol::socket;

/// Every layout this library reads, advertised in CLIENT_HELLO.
std::vector<LayoutEntry> readable_layouts() {
    std::vector<LayoutEntry> out;
    for (uint8_t t = 0x01; t <= 0x0B; ++t) {
        out.push_back(LayoutEntry{.tag = t, .ext_metadata = {}});
    }
    out.push_back(LayoutEntry{.tag = 0x40, .ext_metadata = {}});
    return out;
}

/// `n` bytes aligned to `alignment`, owned by the returned SharedBuffer's owner.
Result<std::pair<uint8_t*, std::shared_ptr<const void>>> allocate_aligned(uint64_t n, uint32_t alignment) {
    const size_t size = static_cast<size_t>(std::max<uint64_t>(n, 1));
    if (n > SIZE_MAX / 2) {
        return Error(ErrorCode::kOutOfMemory, "a tensor of " + std::to_string(n) + " bytes cannot be held in memory");
    }
    const std::align_val_t align{std::max<size_t>(alignment, alignof(std::max_align_t))};
    void* p = ::operator new(size, align, std::nothrow);
    if (p == nullptr) {
        return Error(ErrorCode::kOutOfMemory, "out of memory for a tensor of " + std::to_string(n) + " bytes");
    }
    std::shared_ptr<const void> owner(p, [align](const void* q) { ::operator delete(const_cast<void*>(q), align); });
    return std::pair<uint8_t*, std::shared_ptr<const void>>{static_cast<uint8_t*>(p), std::move(owner)};
}

Error protocol_error(std::string message) { return {ErrorCode::kInvalidData, "server: " + std::move(message)}; }

/// Where `fetch` puts a tensor that arrives as parallel shards: the block for
/// the whole reassembled tensor, asked for once every shard's descriptor has
/// been checked (its descriptor, encoded bytes and transport fields).
using ReserveWhole =
    std::function<Result<std::span<uint8_t>>(const TensorDescriptor&, std::span<const uint8_t>, const DescriptorTransport&)>;

/// One shard of a parallel transfer being received.
struct IncomingShard {
    uint32_t index = 0;     // shard_index
    uint32_t stream_id = 0;
    TensorDescriptor descriptor;
    uint64_t total = 0;     // its data bytes
    uint64_t received = 0;
    bool ended = false;
    uint64_t place = 0;              // received in place: where its bytes start in the whole tensor
    std::vector<uint8_t> bytes;      // otherwise: its data, reassembled at the end
};

/// Whether the shards are slices of whole rows of a row-major tensor, each
/// stored row-major in one buffer: then their bytes go straight to their
/// place in the whole tensor (set in `place`), in any order.
bool slices_of_rows(std::vector<IncomingShard>& shards, const Shape& parent, uint64_t whole_bytes) {
    const uint32_t bits = shards.empty() ? 0 : shards[0].descriptor.element_bits();
    if (parent.empty() || parent[0] == 0 || bits == 0 || bits % 8 != 0) {
        return false;  // packed elements: a row need not end on a byte
    }
    const uint64_t row_bytes = whole_bytes / parent[0];
    if (row_bytes == 0 || row_bytes * parent[0] != whole_bytes) {
        return false;
    }
    for (const IncomingShard& s : shards) {
        const TensorDescriptor& d = s.descriptor;
        if (d.layout_tag() != static_cast<uint8_t>(LayoutTag::kRowMajor) || d.buffers.size() != 1 ||
            d.byte_offset != 0 || d.shape.size() != parent.size() ||
            !std::equal(d.shape.begin() + 1, d.shape.end(), parent.begin() + 1) ||
            !std::all_of(d.shard->shard_offset.begin() + 1, d.shard->shard_offset.end(), [](uint64_t v) { return v == 0; }) ||
            mul_u64(d.shape[0], row_bytes) != std::optional<uint64_t>(s.total)) {
            return false;
        }
    }
    for (IncomingShard& s : shards) {
        s.place = s.descriptor.shard->shard_offset[0] * row_bytes;  // within the whole: the box is in bounds
    }
    return true;
}

}  // namespace

std::vector<SharedBuffer> ReceivedTensor::buffers() const {
    std::vector<SharedBuffer> out;
    size_t pos = 0;
    for (const BufferHandle& b : descriptor.buffers) {
        out.push_back(data.slice(pos, static_cast<size_t>(b.byte_size)));
        pos += static_cast<size_t>(b.byte_size);
    }
    return out;
}

struct HURRAY_NET_NO_EXPORT TensorClient::Impl {
    Impl(asio::any_io_executor ex, ClientOptions o) : socket(ex), timer(ex), options(std::move(o)) {}

    Socket socket;
    asio::steady_timer timer;
    ClientOptions options;
    Hello server_hello;
    uint32_t next_stream = 1;
    bool broken = false;
    bool timed_out = false;
    std::vector<uint8_t> payload;

    /// Closes the socket when `limit` passes before `disarm`.
    void arm(std::chrono::milliseconds limit) {
        timer.expires_after(limit);
        timer.async_wait([this](const std::error_code& ec) {
            if (!ec) {
                timed_out = true;
                std::error_code e;
                socket.close(e);
            }
        });
    }
    void disarm() { timer.cancel(); }

    /// The next stream id of this client: 1 to 2^31 - 1 (ids with bit 31 set
    /// are left to the server's parallel transfers, docs/server.md).
    uint32_t new_stream() {
        const uint32_t sid = next_stream++;
        if (next_stream == 0x80000000U) {
            next_stream = 1;
        }
        return sid;
    }

    Error transport_failure(const std::error_code& ec, std::string_view op) {
        broken = true;
        if (timed_out) {
            return {ErrorCode::kIoError, std::string(op) + ": the server did not answer in time"};
        }
        return transport_error(ec, op, Error::kNoOffset);
    }

    asio::awaitable<Status> send(std::span<const uint8_t> msg) {
        if (broken) {
            co_return Error(ErrorCode::kIoError, "the connection to the server is closed");
        }
        std::error_code ec;
        co_await asio::async_write(socket, asio::buffer(msg.data(), msg.size()),
                                   asio::redirect_error(asio::use_awaitable, ec));
        if (ec) {
            co_return transport_failure(ec, "send");
        }
        co_return Status::success();
    }

    /// Reads the next message into `payload`.
    asio::awaitable<Result<MessageHeader>> receive(std::chrono::milliseconds limit) {
        if (broken) {
            co_return Error(ErrorCode::kIoError, "the connection to the server is closed");
        }
        std::array<uint8_t, kMessageHeaderSize> head{};
        std::error_code ec;
        arm(limit);
        co_await asio::async_read(socket, asio::buffer(head), asio::redirect_error(asio::use_awaitable, ec));
        if (ec) {
            disarm();
            co_return transport_failure(ec, "receive");
        }
        auto h = decode_message_header(head);
        if (h->payload_length > options.max_message_size) {
            disarm();
            broken = true;
            co_return protocol_error(std::string(message_type_name(h->type)) + " of " +
                                     std::to_string(h->payload_length) + " bytes exceeds max_message_size " +
                                     std::to_string(options.max_message_size));
        }
        payload.resize(h->payload_length);
        co_await detail::read_exact(socket, payload, ec);
        disarm();
        if (ec) {
            co_return transport_failure(ec, "receive");
        }
        co_return *h;
    }

    /// The error for an ERROR message in `payload`.
    Error remote_error() const {
        auto e = decode_error(payload);
        if (!e) {
            return protocol_error("malformed ERROR: " + e.error().to_string());
        }
        return {error_code_of_transport_error(e->code),
                "server: " + std::string(transport_error_name(e->code)) + ": " + e->message};
    }

    /// Tells the server that this client gives up stream `sid` (best effort).
    asio::awaitable<void> abandon(uint32_t sid, std::string_view why,
                                  TransportErrorCode code = TransportErrorCode::kInvalidMessage) {
        const auto msg = encode_error(sid, static_cast<uint32_t>(code), why, server_hello.max_message_size);
        (void)co_await send(msg);
    }

    /// Receives the next message, answering a PING on the way.
    asio::awaitable<Result<MessageHeader>> receive_answering_pings() {
        for (;;) {
            auto h = co_await receive(options.read_timeout);
            if (!h || h->type != static_cast<uint32_t>(MessageType::kPing)) {
                co_return h;
            }
            auto pong = encode_message(MessageType::kPong, h->stream_id, payload);
            if (pong) {
                HURRAY_NET_CO_TRY(co_await send(*pong));
            }
        }
    }

    /// Receives the next message of stream `sid`: answers a PING, skips what
    /// belongs to other (abandoned) streams.
    asio::awaitable<Result<MessageHeader>> receive_on(uint32_t sid) {
        for (;;) {
            auto h = co_await receive_answering_pings();
            if (!h) {
                co_return h;
            }
            if (h->stream_id != sid && h->stream_id != 0) {
                continue;
            }
            if (h->stream_id == 0 && h->type != static_cast<uint32_t>(MessageType::kError)) {
                continue;
            }
            co_return h;
        }
    }

    asio::awaitable<Result<uint64_t>> fetch_into(std::string key, FetchHandler& handler, const FetchOptions& o,
                                                 const ReserveWhole* reserve);
    asio::awaitable<Status> receive_shards(const std::string& key, uint32_t sid, const DescriptorTransport& first,
                                           TensorDescriptor first_decoded, const FetchOptions& o,
                                           const ReserveWhole& reserve, TensorDescriptor& whole,
                                           TransportErrorCode& why);
};

asio::awaitable<Result<uint64_t>> TensorClient::Impl::fetch_into(std::string key, FetchHandler& handler,
                                                                const FetchOptions& o, const ReserveWhole* reserve) {
    TensorRequest req;
    req.key = std::move(key);
    if (o.dequantize) {
        req.preferred_layouts.push_back(dequantize_layout_entry());
    }
    for (uint8_t t : o.preferred_layouts) {
        req.preferred_layouts.push_back(LayoutEntry{.tag = t, .ext_metadata = {}});
    }
    req.preferred_device = o.device;
    req.min_alignment = o.min_alignment;
    req.flags = (o.allow_transcode || o.dequantize ? static_cast<uint32_t>(kRequestAllowTranscode) : 0U) |
                (reserve != nullptr ? static_cast<uint32_t>(kRequestParallelOk) : 0U);
    const uint32_t sid = new_stream();
    HURRAY_NET_CO_ASSIGN(std::vector<uint8_t> msg, encode_tensor_request(sid, req));
    HURRAY_NET_CO_TRY(co_await send(msg));

    CompositeAssembler assembler;
    uint64_t tensors = 0;
    bool in_tensor = false;
    uint64_t total = 0;
    uint64_t received = 0;
    for (;;) {
        HURRAY_NET_CO_ASSIGN(MessageHeader h, co_await receive_on(sid));
        const std::span<const uint8_t> p(payload);
        Status step = Status::success();
        bool finished = false;
        switch (static_cast<MessageType>(h.type)) {
            case MessageType::kError: co_return remote_error();
            case MessageType::kTensorDescriptor: {
                if (in_tensor) {
                    step = protocol_error("TENSOR_DESCRIPTOR before the previous tensor's TENSOR_DATA_END");
                    break;
                }
                auto m = decode_tensor_descriptor(p);
                if (!m) {
                    step = protocol_error("TENSOR_DESCRIPTOR: " + m.error().to_string());
                    break;
                }
                auto d = decode(m->descriptor, options.decode);
                if (!d) {
                    step = protocol_error("TENSOR_DESCRIPTOR of '" + req.key + "': " + d.error().to_string());
                    break;
                }
                auto run = data_run_bytes(*d);
                if (!run) {
                    step = protocol_error("TENSOR_DESCRIPTOR of '" + req.key + "': " + run.error().to_string());
                    break;
                }
                const uint64_t sum = *run;
                if (m->transport.total_data_bytes != sum) {
                    step = protocol_error("TENSOR_DESCRIPTOR total_data_bytes " +
                                          std::to_string(m->transport.total_data_bytes) +
                                          " disagrees with the descriptor's buffers (" + std::to_string(sum) + " bytes)");
                    break;
                }
                if (m->transport.total_shards != 1 && reserve != nullptr) {
                    TensorDescriptor whole;
                    TransportErrorCode why = TransportErrorCode::kInvalidMessage;
                    Status got = co_await receive_shards(req.key, sid, m->transport, std::move(*d), o, *reserve, whole, why);
                    if (!got) {
                        if (!broken) {
                            co_await abandon(sid, got.error().message(), why);
                        }
                        co_return std::move(got).error();
                    }
                    if (++tensors > o.max_tensors) {
                        step = Error(ErrorCode::kInvalidArgument, "the answer holds more than max_tensors = " +
                                                                      std::to_string(o.max_tensors) + " tensors");
                    } else if (Status s = assembler.add(whole); !s) {
                        step = protocol_error("composite: " + s.error().to_string());
                    } else if (handler.on_end) {
                        step = handler.on_end();
                    }
                    finished = step.ok() && assembler.idle();
                    break;
                }
                if (m->transport.total_shards != 1) {
                    step = protocol_error("a parallel transfer (" + std::to_string(m->transport.total_shards) +
                                          " shards) that this client did not ask for");
                    break;
                }
                if (sum > o.max_tensor_bytes) {
                    step = Error(ErrorCode::kInvalidArgument, "tensor of " + std::to_string(sum) +
                                                                  " bytes exceeds max_tensor_bytes " +
                                                                  std::to_string(o.max_tensor_bytes));
                    break;
                }
                if (++tensors > o.max_tensors) {
                    step = Error(ErrorCode::kInvalidArgument,
                                 "the answer holds more than max_tensors = " + std::to_string(o.max_tensors) + " tensors");
                    break;
                }
                if (Status s = assembler.add(*d); !s) {
                    step = protocol_error("composite: " + s.error().to_string());
                    break;
                }
                in_tensor = true;
                total = sum;
                received = 0;
                if (handler.on_descriptor) {
                    step = handler.on_descriptor(*d, m->descriptor, m->transport);
                }
                break;
            }
            case MessageType::kTensorData: {
                auto f = decode_tensor_data(p);
                if (!f) {
                    step = protocol_error("TENSOR_DATA: " + f.error().to_string());
                } else if (!in_tensor) {
                    step = protocol_error("TENSOR_DATA before TENSOR_DESCRIPTOR");
                } else if (f->offset != received) {
                    step = protocol_error("TENSOR_DATA at byte_offset_in_buffer " + std::to_string(f->offset) +
                                          ", expected " + std::to_string(received) + " (frames in order, no gaps)");
                } else if (f->data.size() > total - received) {
                    step = protocol_error("TENSOR_DATA runs past total_data_bytes " + std::to_string(total));
                } else {
                    received += f->data.size();
                    if (handler.on_data) {
                        step = handler.on_data(f->data);
                    }
                }
                break;
            }
            case MessageType::kTensorDataEnd: {
                if (Status s = check_empty_payload(MessageType::kTensorDataEnd, p); !s) {
                    step = protocol_error(s.error().to_string());
                } else if (!in_tensor) {
                    step = protocol_error("TENSOR_DATA_END without TENSOR_DESCRIPTOR");
                } else if (received != total) {
                    step = protocol_error("TENSOR_DATA_END after " + std::to_string(received) + " of " +
                                          std::to_string(total) + " bytes");
                } else {
                    in_tensor = false;
                    if (handler.on_end) {
                        step = handler.on_end();
                    }
                    finished = step.ok() && assembler.idle();
                }
                break;
            }
            default:
                step = protocol_error("unexpected " + std::string(message_type_name(h.type)) + " in answer to TENSOR_REQUEST");
                break;
        }
        if (!step) {
            co_await abandon(sid, step.error().message());
            co_return std::move(step).error();
        }
        if (finished) {
            co_return tensors;
        }
    }
}

asio::awaitable<Status> TensorClient::Impl::receive_shards(const std::string& key, uint32_t sid,
                                                           const DescriptorTransport& first,
                                                           TensorDescriptor first_decoded, const FetchOptions& o,
                                                           const ReserveWhole& reserve, TensorDescriptor& whole,
                                                           TransportErrorCode& why) {
    const uint32_t n = first.total_shards;
    const std::string what = "the parallel transfer of '" + key + "'";
    if (n == 0 || n > o.max_tensors) {
        co_return protocol_error(what + ": total_shards " + std::to_string(n) +
                                 (n == 0 ? " (at least 1)" : " exceeds max_tensors " + std::to_string(o.max_tensors)));
    }
    std::vector<IncomingShard> shards;  // as they come (each one a message the server sent), then by index
    shards.reserve(std::min<uint32_t>(n, 1024));
    std::vector<bool> bound(n, false);
    std::unordered_map<uint32_t, uint32_t> by_stream;  // stream id -> shard index
    uint64_t shard_bytes = 0;
    // Binds one shard's descriptor to its stream; checks what can be checked alone.
    auto bind = [&](uint32_t stream, const DescriptorTransport& t, TensorDescriptor d) -> Status {
        if (t.total_shards != n) {
            return protocol_error(what + ": a shard says total_shards " + std::to_string(t.total_shards) +
                                  ", the first said " + std::to_string(n));
        }
        if (t.shard_index >= n || bound[t.shard_index]) {
            return protocol_error(what + ": shard_index " + std::to_string(t.shard_index) +
                                  (t.shard_index >= n ? " is out of range" : " arrived twice"));
        }
        if (by_stream.contains(stream)) {
            return protocol_error(what + ": two shards on stream " + std::to_string(stream));
        }
        HURRAY_ASSIGN_OR_RETURN(uint64_t run, data_run_bytes(d));
        if (run != t.total_data_bytes) {
            return protocol_error(what + ": shard " + std::to_string(t.shard_index) + "'s total_data_bytes " +
                                  std::to_string(t.total_data_bytes) + " disagrees with its buffers (" +
                                  std::to_string(run) + " bytes)");
        }
        const auto sum = add_u64(shard_bytes, run);
        if (!sum || *sum > o.max_tensor_bytes) {
            return Error(ErrorCode::kInvalidArgument,
                         what + ": shards of more than max_tensor_bytes " + std::to_string(o.max_tensor_bytes) + " bytes");
        }
        shard_bytes = *sum;
        bound[t.shard_index] = true;
        by_stream.emplace(stream, 0);  // its position once sorted, below
        IncomingShard& sh = shards.emplace_back();
        sh.index = t.shard_index;
        sh.stream_id = stream;
        sh.descriptor = std::move(d);
        sh.total = run;
        return Status::success();
    };
    HURRAY_NET_CO_TRY(bind(sid, first, std::move(first_decoded)));
    // The other shards' descriptors come next, back to back, on streams the
    // server opened: they bind to this request by position.
    for (uint32_t got = 1; got < n; ++got) {
        HURRAY_NET_CO_ASSIGN(MessageHeader h, co_await receive_answering_pings());
        if (h.type == static_cast<uint32_t>(MessageType::kError) && (h.stream_id == sid || h.stream_id == 0)) {
            co_return remote_error();
        }
        if (h.type != static_cast<uint32_t>(MessageType::kTensorDescriptor) || h.stream_id == sid) {
            co_return protocol_error(what + ": expected the TENSOR_DESCRIPTOR of shard " + std::to_string(got + 1) +
                                     " of " + std::to_string(n) + " on a stream of its own, got " +
                                     std::string(message_type_name(h.type)) + " on stream " + std::to_string(h.stream_id));
        }
        auto m = decode_tensor_descriptor(payload);
        if (!m) {
            co_return protocol_error("TENSOR_DESCRIPTOR: " + m.error().to_string());
        }
        auto d = decode(m->descriptor, options.decode);
        if (!d) {
            co_return protocol_error(what + ": " + d.error().to_string());
        }
        HURRAY_NET_CO_TRY(bind(h.stream_id, m->transport, std::move(*d)));
    }
    std::sort(shards.begin(), shards.end(), [](const IncomingShard& a, const IncomingShard& b) { return a.index < b.index; });
    for (uint32_t k = 0; k < n; ++k) {
        by_stream[shards[k].stream_id] = k;
    }
    // Shard consistency (interchange.md § Shard Consistency): the shards are
    // checked as the members of a partition composite of the parent's shape,
    // whose rules are the same (same parent_shape and value type, boxes in
    // bounds covering it exactly without overlap); plus one layout tag.
    why = TransportErrorCode::kShardMismatch;
    const TensorDescriptor& d0 = shards[0].descriptor;
    for (const IncomingShard& sh : shards) {
        const TensorDescriptor& d = sh.descriptor;
        if (!d.shard) {
            co_return protocol_error(what + ": a shard descriptor without a shard section");
        }
        if (d.element_type != d0.element_type || d.layout_tag() != d0.layout_tag()) {
            co_return protocol_error(what + ": the shards differ in element type or layout");
        }
        if (d.quantization || d.extension_type || d.composite_member ||
            d.layout_tag() == static_cast<uint8_t>(LayoutTag::kComposite)) {
            why = TransportErrorCode::kInvalidMessage;
            co_return Error(ErrorCode::kUnsupported, what + ": this client reassembles shards of plain (unquantized, "
                                                            "non-extension, non-composite) tensors only");
        }
    }
    const Shape parent(d0.shard->parent_shape.begin(), d0.shard->parent_shape.end());
    HURRAY_NET_CO_ASSIGN(TensorDescriptor head, make_composite_head(d0.element_type, parent, CompositionRule::kPartition, n));
    CompositeAssembler assembler;
    Status consistent = assembler.add(head);
    for (uint32_t k = 0; k < n && consistent.ok(); ++k) {
        consistent = assembler.add(shards[k].descriptor);
    }
    if (!consistent) {
        co_return protocol_error(what + ": shards inconsistent: " + consistent.error().message());
    }
    why = TransportErrorCode::kInvalidMessage;
    HURRAY_NET_CO_ASSIGN(whole, make_dense(d0.element_type, parent));
    const uint64_t whole_bytes = whole.buffers[0].byte_size;
    if (whole_bytes > o.max_tensor_bytes) {
        co_return Error(ErrorCode::kInvalidArgument, "tensor of " + std::to_string(whole_bytes) +
                                                         " bytes exceeds max_tensor_bytes " + std::to_string(o.max_tensor_bytes));
    }
    HURRAY_NET_CO_ASSIGN(std::vector<uint8_t> whole_bytes_encoded, encode(whole));
    const DescriptorTransport t{.total_data_bytes = whole_bytes, .shard_index = 0, .total_shards = n};
    HURRAY_NET_CO_ASSIGN(std::span<uint8_t> out, reserve(whole, whole_bytes_encoded, t));
    const bool in_place = slices_of_rows(shards, parent, whole_bytes);
    // The data: frames of the shards' streams in any interleaving, each
    // stream's in order.
    for (uint32_t ended = 0; ended < n;) {
        HURRAY_NET_CO_ASSIGN(MessageHeader h, co_await receive_answering_pings());
        const auto at = by_stream.find(h.stream_id);
        if (h.type == static_cast<uint32_t>(MessageType::kError) && (at != by_stream.end() || h.stream_id == 0)) {
            co_return remote_error();
        }
        if (at == by_stream.end()) {
            continue;  // an abandoned stream's late frames
        }
        IncomingShard& sh = shards[at->second];
        const std::string which = what + ", shard " + std::to_string(at->second);
        if (sh.ended) {
            co_return protocol_error(which + ": " + std::string(message_type_name(h.type)) + " after its TENSOR_DATA_END");
        }
        if (h.type == static_cast<uint32_t>(MessageType::kTensorDataEnd)) {
            if (Status st = check_empty_payload(MessageType::kTensorDataEnd, payload); !st) {
                co_return protocol_error(st.error().to_string());
            }
            if (sh.received != sh.total) {
                co_return protocol_error(which + ": TENSOR_DATA_END after " + std::to_string(sh.received) + " of " +
                                         std::to_string(sh.total) + " bytes");
            }
            sh.ended = true;
            ++ended;
            continue;
        }
        if (h.type != static_cast<uint32_t>(MessageType::kTensorData)) {
            co_return protocol_error(which + ": unexpected " + std::string(message_type_name(h.type)));
        }
        auto f = decode_tensor_data(payload);
        if (!f) {
            co_return protocol_error("TENSOR_DATA: " + f.error().to_string());
        }
        if (f->offset != sh.received || f->data.size() > sh.total - sh.received) {
            co_return protocol_error(which + ": TENSOR_DATA at " + std::to_string(f->offset) + " (+" +
                                     std::to_string(f->data.size()) + " bytes), expected the next bytes from " +
                                     std::to_string(sh.received) + " of " + std::to_string(sh.total));
        }
        if (in_place) {
            // SAFETY: slices_of_rows placed the shard's box (in bounds, checked by
            // the assembler) at `place`, and the frame lies within its `total` bytes.
            std::memcpy(out.data() + sh.place + sh.received, f->data.data(), f->data.size());
        } else {
            sh.bytes.insert(sh.bytes.end(), f->data.begin(), f->data.end());
        }
        sh.received += f->data.size();
    }
    if (!in_place) {
        std::vector<std::vector<std::span<const uint8_t>>> spans(n);
        std::vector<TensorView> views;
        for (uint32_t k = 0; k < n; ++k) {
            size_t pos = 0;
            for (const BufferHandle& b : shards[k].descriptor.buffers) {
                spans[k].emplace_back(shards[k].bytes.data() + pos, static_cast<size_t>(b.byte_size));
                pos += static_cast<size_t>(b.byte_size);
            }
            HURRAY_NET_CO_ASSIGN(TensorView v, TensorView::make(shards[k].descriptor, spans[k]));
            views.push_back(std::move(v));
        }
        HURRAY_NET_CO_TRY(materialize_composite(head, views, out));
    }
    co_return Status::success();
}

TensorClient::TensorClient(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}

TensorClient::~TensorClient() { close(); }

const Hello& TensorClient::server_hello() const noexcept { return impl_->server_hello; }

void TensorClient::close() noexcept {
    if (impl_) {
        impl_->broken = true;
        std::error_code ec;
        impl_->timer.cancel();
        impl_->socket.shutdown(asio::socket_base::shutdown_both, ec);
        impl_->socket.close(ec);
    }
}

namespace {

asio::awaitable<Status> connect_socket(TensorClient::Impl& c, const TransportAddress& a) {
    std::error_code ec;
    if (a.kind == TransportAddress::Kind::kUnix) {
        const asio::local::stream_protocol::endpoint ep(a.path);
        co_await c.socket.async_connect(asio::generic::stream_protocol::endpoint(ep),
                                        asio::redirect_error(asio::use_awaitable, ec));
        if (ec) {
            co_return c.transport_failure(ec, "connect to " + a.to_string());
        }
        co_return Status::success();
    }
    asio::ip::tcp::resolver resolver(c.socket.get_executor());
    const auto results = co_await resolver.async_resolve(a.host, std::to_string(a.port),
                                                         asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
        co_return c.transport_failure(ec, "resolve " + a.host);
    }
    for (const auto& r : results) {
        std::error_code e;
        c.socket.close(e);
        co_await c.socket.async_connect(asio::generic::stream_protocol::endpoint(r.endpoint()),
                                        asio::redirect_error(asio::use_awaitable, ec));
        if (!ec) {
            c.socket.set_option(asio::ip::tcp::no_delay(true), e);
            co_return Status::success();
        }
        if (c.timed_out) {
            break;
        }
    }
    co_return c.transport_failure(ec, "connect to " + a.to_string());
}

asio::awaitable<Status> connect_impl(asio::any_io_executor executor, std::string address,
                                                                    ClientOptions options,
                                                                    std::unique_ptr<TensorClient::Impl>& impl) {
    HURRAY_NET_CO_ASSIGN(TransportAddress a, parse_transport_address(address));
    if (options.max_message_size < 4096) {
        co_return Error(ErrorCode::kInvalidArgument, "ClientOptions::max_message_size must be at least 4096");
    }
    impl = std::make_unique<TensorClient::Impl>(executor, std::move(options));
    TensorClient::Impl& c = *impl;
    c.arm(c.options.connect_timeout);
    Status connected = co_await connect_socket(c, a);
    c.disarm();
    HURRAY_NET_CO_TRY(connected);
    Hello hello;
    hello.max_message_size = c.options.max_message_size;
    hello.capability_flags = 0;
    hello.layouts = readable_layouts();
    hello.devices = {0x00};
    hello.memory_classes = {0x00};
    const uint32_t sid = c.new_stream();
    HURRAY_NET_CO_ASSIGN(std::vector<uint8_t> msg, encode_hello(MessageType::kClientHello, sid, hello));
    HURRAY_NET_CO_TRY(co_await c.send(msg));
    HURRAY_NET_CO_ASSIGN(MessageHeader h, co_await c.receive(c.options.connect_timeout));
    if (h.type == static_cast<uint32_t>(MessageType::kError)) {
        co_return c.remote_error();
    }
    if (h.type != static_cast<uint32_t>(MessageType::kServerHello)) {
        co_return protocol_error("expected SERVER_HELLO, got " + std::string(message_type_name(h.type)));
    }
    auto reply = decode_hello(c.payload);
    if (!reply) {
        co_return protocol_error("SERVER_HELLO: " + reply.error().to_string());
    }
    if (reply->protocol_version > kTransportProtocolVersion) {
        co_return protocol_error("SERVER_HELLO protocol_version " + std::to_string(reply->protocol_version) +
                                 " is above the client's (" + std::to_string(kTransportProtocolVersion) + ")");
    }
    c.server_hello = std::move(*reply);
    co_return Status::success();
}

}  // namespace

asio::awaitable<Result<std::unique_ptr<TensorClient>>> TensorClient::connect(asio::any_io_executor executor,
                                                                             std::string address,
                                                                             ClientOptions options) {
    std::unique_ptr<Impl> impl;
    try {
        Status s = co_await connect_impl(std::move(executor), std::move(address), std::move(options), impl);
        if (!s) {
            co_return std::move(s).error();
        }
    } catch (...) {
        co_return exception_error(std::current_exception(), "connect", Error::kNoOffset);
    }
    co_return std::unique_ptr<TensorClient>(new TensorClient(std::move(impl)));
}

asio::awaitable<Result<uint64_t>> TensorClient::fetch_into(std::string key, FetchHandler& handler, FetchOptions options) {
    try {
        co_return co_await impl_->fetch_into(std::move(key), handler, options, nullptr);
    } catch (...) {
        impl_->broken = true;
        co_return exception_error(std::current_exception(), "fetch", Error::kNoOffset);
    }
}

asio::awaitable<Result<std::vector<ReceivedTensor>>> TensorClient::fetch(std::string key, FetchOptions options) {
    std::vector<ReceivedTensor> out;
    uint8_t* dest = nullptr;
    FetchHandler h;
    h.on_descriptor = [&](const TensorDescriptor& d, std::span<const uint8_t> bytes, const DescriptorTransport& t) -> Status {
        ReceivedTensor r;
        r.descriptor = d;
        r.descriptor_bytes.assign(bytes.begin(), bytes.end());
        r.transport = t;
        HURRAY_ASSIGN_OR_RETURN(auto block, allocate_aligned(t.total_data_bytes, options.min_alignment));
        dest = block.first;
        r.data = SharedBuffer(std::span<const uint8_t>(block.first, static_cast<size_t>(t.total_data_bytes)),
                              std::move(block.second));
        out.push_back(std::move(r));
        return Status::success();
    };
    h.on_data = [&](std::span<const uint8_t> piece) -> Status {
        // SAFETY: the client checked that the frames are in order and end
        // within total_data_bytes, the size of the block `dest` points into.
        std::memcpy(dest, piece.data(), piece.size());
        dest += piece.size();
        return Status::success();
    };
    const ReserveWhole reserve = [&](const TensorDescriptor& d, std::span<const uint8_t> bytes,
                                     const DescriptorTransport& t) -> Result<std::span<uint8_t>> {
        HURRAY_RETURN_IF_ERROR(h.on_descriptor(d, bytes, t));
        return std::span<uint8_t>(dest, static_cast<size_t>(t.total_data_bytes));
    };
    Result<uint64_t> n = Error(ErrorCode::kIoError, "fetch: not run");
    try {
        n = co_await impl_->fetch_into(std::move(key), h, options, options.parallel ? &reserve : nullptr);
    } catch (...) {
        impl_->broken = true;
        n = exception_error(std::current_exception(), "fetch", Error::kNoOffset);
    }
    if (!n) {
        co_return std::move(n).error();
    }
    co_return out;
}

asio::awaitable<Result<std::vector<RemoteTensor>>> TensorClient::list() {
    try {
        Impl& c = *impl_;
        const uint32_t sid = c.new_stream();
        HURRAY_NET_CO_ASSIGN(std::vector<uint8_t> msg, encode_message(MessageType::kListRequest, sid));
        HURRAY_NET_CO_TRY(co_await c.send(msg));
        std::vector<RemoteTensor> out;
        for (;;) {
            HURRAY_NET_CO_ASSIGN(MessageHeader h, co_await c.receive_on(sid));
            if (h.type == static_cast<uint32_t>(MessageType::kError)) {
                co_return c.remote_error();
            }
            if (h.type == static_cast<uint32_t>(MessageType::kListEnd)) {
                auto n = decode_list_end(c.payload);
                if (!n) {
                    co_return protocol_error("LIST_END: " + n.error().to_string());
                }
                if (*n != out.size()) {
                    co_return protocol_error("LIST_END counts " + std::to_string(*n) + " entries, " +
                                             std::to_string(out.size()) + " arrived");
                }
                co_return out;
            }
            if (h.type != static_cast<uint32_t>(MessageType::kListEntries)) {
                co_await c.abandon(sid, "unexpected message");
                co_return protocol_error("unexpected " + std::string(message_type_name(h.type)) + " in a listing");
            }
            auto entries = decode_list_entries(c.payload);
            if (!entries) {
                co_return protocol_error("LIST_ENTRIES: " + entries.error().to_string());
            }
            for (const ListEntry& e : *entries) {
                auto d = decode(e.descriptor, c.options.decode);
                if (!d) {
                    co_return protocol_error("the listed descriptor of '" + e.key + "': " + d.error().to_string());
                }
                out.push_back(RemoteTensor{.key = e.key,
                                           .descriptor = std::move(*d),
                                           .descriptor_bytes = std::vector<uint8_t>(e.descriptor.begin(), e.descriptor.end())});
            }
        }
    } catch (...) {
        impl_->broken = true;
        co_return exception_error(std::current_exception(), "list", Error::kNoOffset);
    }
}

asio::awaitable<Status> TensorClient::put(std::string key, const TensorDescriptor& desc,
                                          std::span<const std::span<const uint8_t>> buffers) {
    try {
        Impl& c = *impl_;
        if (buffers.size() != desc.buffers.size()) {
            co_return Error(ErrorCode::kSizeMismatch, "put '" + key + "': " + std::to_string(buffers.size()) +
                                                          " buffers given, the descriptor has " +
                                                          std::to_string(desc.buffers.size()));
        }
        uint64_t total = 0;
        for (size_t i = 0; i < buffers.size(); ++i) {
            if (buffers[i].size() != desc.buffers[i].byte_size) {
                co_return Error(ErrorCode::kSizeMismatch, "put '" + key + "': buffer " + std::to_string(i) + " has " +
                                                              std::to_string(buffers[i].size()) + " bytes, the descriptor says " +
                                                              std::to_string(desc.buffers[i].byte_size));
            }
            total += buffers[i].size();
        }
        HURRAY_NET_CO_ASSIGN(std::vector<uint8_t> encoded, encode(desc));
        const uint32_t sid = c.new_stream();
        HURRAY_NET_CO_ASSIGN(std::vector<uint8_t> msg,
                             encode_tensor_put(sid, TensorPut{.key = key, .descriptor = encoded, .total_data_bytes = total}));
        HURRAY_NET_CO_TRY(co_await c.send(msg));
        // Frames of at most the server's limit, gathered from the buffers in order.
        const uint64_t room = std::max<uint64_t>(1, std::min<uint64_t>(c.server_hello.max_message_size, 4U << 20U) -
                                                        kDataFrameHeaderSize);
        uint64_t pos = 0;
        size_t b = 0;
        uint64_t in_b = 0;
        std::vector<asio::const_buffer> pieces;
        while (pos < total) {
            const uint64_t len = std::min(room, total - pos);
            HURRAY_NET_CO_ASSIGN(auto head, encode_tensor_data_header(sid, pos, static_cast<size_t>(len)));
            pieces.clear();
            pieces.emplace_back(head.data(), head.size());
            for (uint64_t left = len; left > 0;) {
                while (buffers[b].size() == in_b) {
                    ++b;
                    in_b = 0;
                }
                const uint64_t take = std::min<uint64_t>(left, buffers[b].size() - in_b);
                pieces.emplace_back(buffers[b].data() + in_b, static_cast<size_t>(take));
                in_b += take;
                left -= take;
            }
            std::error_code ec;
            co_await detail::write_all(c.socket, pieces, ec);
            if (ec) {
                co_return c.transport_failure(ec, "send");
            }
            pos += len;
        }
        HURRAY_NET_CO_ASSIGN(std::vector<uint8_t> end, encode_message(MessageType::kTensorDataEnd, sid));
        HURRAY_NET_CO_TRY(co_await c.send(end));
        for (;;) {
            HURRAY_NET_CO_ASSIGN(MessageHeader h, co_await c.receive_on(sid));
            if (h.type == static_cast<uint32_t>(MessageType::kError)) {
                co_return c.remote_error();
            }
            if (h.type == static_cast<uint32_t>(MessageType::kTensorPutAck)) {
                if (Status s = check_empty_payload(MessageType::kTensorPutAck, c.payload); !s) {
                    co_return protocol_error(s.error().to_string());
                }
                co_return Status::success();
            }
            co_return protocol_error("TENSOR_PUT answered with " + std::string(message_type_name(h.type)));
        }
    } catch (...) {
        impl_->broken = true;
        co_return exception_error(std::current_exception(), "put", Error::kNoOffset);
    }
}

asio::awaitable<Result<std::chrono::nanoseconds>> TensorClient::ping() {
    try {
        Impl& c = *impl_;
        const uint32_t sid = c.new_stream();
        const auto start = std::chrono::steady_clock::now();
        std::array<uint8_t, 8> token{};
        store_le<uint64_t>(token.data(), static_cast<uint64_t>(start.time_since_epoch().count()));
        HURRAY_NET_CO_ASSIGN(std::vector<uint8_t> msg, encode_message(MessageType::kPing, sid, token));
        HURRAY_NET_CO_TRY(co_await c.send(msg));
        for (;;) {
            HURRAY_NET_CO_ASSIGN(MessageHeader h, co_await c.receive(c.options.read_timeout));
            if (h.stream_id != sid) {
                continue;
            }
            if (h.type == static_cast<uint32_t>(MessageType::kError)) {
                co_return c.remote_error();
            }
            if (h.type == static_cast<uint32_t>(MessageType::kPong) &&
                std::equal(c.payload.begin(), c.payload.end(), token.begin(), token.end())) {
                co_return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start);
            }
            co_return protocol_error("PING answered with " + std::string(message_type_name(h.type)));
        }
    } catch (...) {
        impl_->broken = true;
        co_return exception_error(std::current_exception(), "ping", Error::kNoOffset);
    }
}

}  // namespace hurray::net
