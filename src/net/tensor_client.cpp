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

#include <cstring>
#include <new>

#include "hurray/core/byte_io.hpp"
#include "hurray/core/composite.hpp"
#include "hurray/net/async_common.hpp"
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

    uint32_t new_stream() {
        const uint32_t sid = next_stream++;
        if (next_stream == 0) {
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
    asio::awaitable<void> abandon(uint32_t sid, std::string_view why) {
        const auto msg = encode_error(sid, static_cast<uint32_t>(TransportErrorCode::kInvalidMessage), why,
                                      server_hello.max_message_size);
        (void)co_await send(msg);
    }

    /// Receives the next message of stream `sid`: answers a PING, skips what
    /// belongs to other (abandoned) streams.
    asio::awaitable<Result<MessageHeader>> receive_on(uint32_t sid) {
        for (;;) {
            auto h = co_await receive(options.read_timeout);
            if (!h) {
                co_return h;
            }
            if (h->type == static_cast<uint32_t>(MessageType::kPing)) {
                auto pong = encode_message(MessageType::kPong, h->stream_id, payload);
                if (pong) {
                    HURRAY_NET_CO_TRY(co_await send(*pong));
                }
                continue;
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

    asio::awaitable<Result<uint64_t>> fetch_into(std::string key, FetchHandler& handler, const FetchOptions& o);
};

asio::awaitable<Result<uint64_t>> TensorClient::Impl::fetch_into(std::string key, FetchHandler& handler,
                                                                const FetchOptions& o) {
    TensorRequest req;
    req.key = std::move(key);
    for (uint8_t t : o.preferred_layouts) {
        req.preferred_layouts.push_back(LayoutEntry{.tag = t, .ext_metadata = {}});
    }
    req.preferred_device = o.device;
    req.min_alignment = o.min_alignment;
    req.flags = o.allow_transcode ? static_cast<uint32_t>(kRequestAllowTranscode) : 0U;
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
        co_return co_await impl_->fetch_into(std::move(key), handler, options);
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
    auto n = co_await fetch_into(std::move(key), h, options);
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
