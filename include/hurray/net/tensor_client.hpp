// SPDX-License-Identifier: Apache-2.0
/// @file
/// `TensorClient`: fetches tensors from a Hurray tensor server (`hurray serve`,
/// `TensorServer`) over the network transport protocol, as C++20 coroutines.
///
/// A client is one connection. Its operations run one at a time (await one
/// before starting the next); open several clients to fetch in parallel. Its
/// executor must not run two of its handlers at once: an `io_context` run by
/// one thread, or a strand (`asio::make_strand(io)`) when several threads run it.
/// Everything the server sends is checked before it is used: message sizes
/// against `max_message_size`, each descriptor fully decoded and validated,
/// the data frames in order with no gap or overlap, their total against
/// the descriptor's buffers, a tensor's size against `max_tensor_bytes` before
/// any memory is reserved for it. No exception leaves the API.
#pragma once

#include "hurray/net/export.hpp"

#include <asio/any_io_executor.hpp>
#include <asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"
#include "hurray/io/shared_buffer.hpp"
#include "hurray/io/transport_message.hpp"

namespace hurray::net {

/// How a `TensorClient` connects and what it accepts.
struct HURRAY_NET_EXPORT ClientOptions {
    /// The largest message payload the client accepts (`CLIENT_HELLO`'s
    /// `max_message_size`); the server's data frames are at most this long.
    uint32_t max_message_size = 16U << 20;
    /// Connecting and the hello exchange must finish within this time.
    std::chrono::milliseconds connect_timeout = std::chrono::seconds(30);
    /// Each message of an answer must arrive within this time of the last.
    std::chrono::milliseconds read_timeout = std::chrono::seconds(120);
    /// How descriptors from the server are decoded (strictness, limits).
    DecodeOptions decode{};
};

/// What one request asks for (`TENSOR_REQUEST`).
struct HURRAY_NET_EXPORT FetchOptions {
    /// Layout tags in preference order (`LayoutTag` values); empty: as stored.
    std::vector<uint8_t> preferred_layouts;
    /// Let the server transcode to a preferred layout (`ALLOW_TRANSCODE`).
    bool allow_transcode = false;
    /// Ask for a quantized tensor's real values: a dense row-major float32
    /// tensor of its shape (`dequantize_layout_entry`, put before
    /// `preferred_layouts`; sets `ALLOW_TRANSCODE`, which then holds for the
    /// other preferences too). A server that does not know the entry, or
    /// cannot hold the values under its transcoding limit, answers as the
    /// other preferences say: check the answer's descriptor. Unquantized
    /// tensors are answered as if it were not set.
    bool dequantize = false;
    /// `preferred_device` (0x00: CPU). This library receives into CPU memory.
    uint8_t device = 0x00;
    /// `min_alignment` of the received data (a power of two); `fetch` honours it.
    uint32_t min_alignment = 64;
    /// The most data bytes accepted for one tensor (a composite's members each).
    uint64_t max_tensor_bytes = 1ULL << 40;
    /// The most tensors one answer may hold (a composite head and its members;
    /// the shards of a parallel transfer count each).
    uint64_t max_tensors = 1U << 20;
    /// Accept the tensor as parallel shards (`PARALLEL_OK`;
    /// interchange.md § Parallel Transfers). `fetch` checks the shards'
    /// consistency once every shard's descriptor has arrived (same
    /// `parent_shape`, element type and layout; boxes covering the parent
    /// exactly, without overlap; else `SHARD_MISMATCH` to the server and
    /// `kInvalidData` here) and returns the logical tensor, reassembled: a
    /// dense row-major descriptor of `parent_shape` and its data (shards
    /// stored row-major along dimension 0 are received in place, any other
    /// rectangular shards through `materialize_composite`), with
    /// `transport.total_shards` saying how many shards it came in.
    /// `fetch_into` ignores it (its handler takes the bytes in order).
    bool parallel = false;
};

/// A tensor received whole.
struct HURRAY_NET_EXPORT ReceivedTensor {
    /// Its descriptor, decoded and validated.
    TensorDescriptor descriptor;
    /// The descriptor's bytes as the server sent them.
    std::vector<uint8_t> descriptor_bytes;
    /// The transport fields (total data bytes, shard position).
    DescriptorTransport transport;
    /// All its data: its buffers back to back, aligned to `min_alignment`.
    SharedBuffer data;
    /// One buffer per entry of the descriptor's buffer table (views of `data`).
    [[nodiscard]] std::vector<SharedBuffer> buffers() const;
};

/// A tensor of a server's listing.
struct HURRAY_NET_EXPORT RemoteTensor {
    /// Its key.
    std::string key;
    /// Its descriptor, decoded and validated.
    TensorDescriptor descriptor;
    /// The descriptor's bytes.
    std::vector<uint8_t> descriptor_bytes;
};

/// Callbacks that take an answer as it arrives (`TensorClient::fetch_into`),
/// so that a tensor of any size passes through bounded memory. A callback that
/// returns an error stops the fetch: the client sends `ERROR` on the stream
/// and returns that error.
struct HURRAY_NET_EXPORT FetchHandler {
    /// A tensor begins: its descriptor (validated) and transport fields.
    std::function<Status(const TensorDescriptor&, std::span<const uint8_t> descriptor_bytes, const DescriptorTransport&)>
        on_descriptor;
    /// The next bytes of the current tensor's data, in order.
    std::function<Status(std::span<const uint8_t>)> on_data;
    /// The current tensor's data is complete.
    std::function<Status()> on_end;
};

/// A connection to a tensor server.
///
/// @code
/// asio::co_spawn(io, [&]() -> asio::awaitable<void> {
///     auto client = co_await hurray::net::TensorClient::connect(io.get_executor(), "127.0.0.1:7447");
///     if (!client) { report(client.error()); co_return; }
///     auto w = co_await (*client)->fetch("w");   // head + members for a composite
///     if (w) use((*w)[0].data);
/// }, asio::detached);
/// io.run();
/// @endcode
class HURRAY_NET_EXPORT TensorClient {
public:
    /// Connects to `address` (`parse_transport_address`) and exchanges hellos.
    /// An `ERROR` answer (the server is busy, speaks another version) is
    /// returned as an error with the server's message.
    static asio::awaitable<Result<std::unique_ptr<TensorClient>>> connect(asio::any_io_executor executor,
                                                                          std::string address,
                                                                          ClientOptions options = {});
    TensorClient(const TensorClient&) = delete;
    TensorClient& operator=(const TensorClient&) = delete;
    ~TensorClient();

    /// The server's `SERVER_HELLO`.
    [[nodiscard]] const Hello& server_hello() const noexcept;

    /// Fetches `key`: one tensor, or a composite head followed by its members
    /// (pre-order), each whole in memory.
    asio::awaitable<Result<std::vector<ReceivedTensor>>> fetch(std::string key, FetchOptions options = {});

    /// Fetches `key` through `handler`: nothing is held in memory but one
    /// message. Returns the number of tensors received.
    asio::awaitable<Result<uint64_t>> fetch_into(std::string key, FetchHandler& handler, FetchOptions options = {});

    /// The server's tensors, in its order (the private listing extension of
    /// `hurray serve`; another server answers with an error).
    asio::awaitable<Result<std::vector<RemoteTensor>>> list();

    /// Uploads a tensor under `key` (`TENSOR_PUT`, its data in frames of at
    /// most the server's `max_message_size`, `TENSOR_DATA_END`) and waits for
    /// the server's `TENSOR_PUT_ACK`. `buffers`: one span per buffer of
    /// `desc`, each exactly its `byte_size` (`kSizeMismatch` otherwise, before
    /// anything is sent). A refusal (`PUT_REJECTED`, `DEVICE_UNAVAILABLE`...) is
    /// returned as an error with the server's message.
    asio::awaitable<Status> put(std::string key, const TensorDescriptor& desc,
                                std::span<const std::span<const uint8_t>> buffers);

    /// Sends `PING` and waits for the `PONG`; returns the round-trip time.
    asio::awaitable<Result<std::chrono::nanoseconds>> ping();

    /// Closes the connection (later calls fail with `kIoError`).
    void close() noexcept;

    /// Internal state (defined in the source).
    struct Impl;

private:
    explicit TensorClient(std::unique_ptr<Impl> impl) noexcept;
    std::unique_ptr<Impl> impl_;
};

}  // namespace hurray::net
