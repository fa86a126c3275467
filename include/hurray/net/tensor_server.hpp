// SPDX-License-Identifier: Apache-2.0
/// @file
/// `TensorServer`: serves the tensors of HRRYFILEs over the Hurray network
/// transport protocol (interchange.md, "Network Transport Protocol"; what this
/// server implements of it is in docs/server.md), on TCP or Unix sockets.
///
/// Each connection runs on its own strand: one coroutine reads and answers
/// messages, one writes, one enforces the timeouts. Tensor data goes out
/// straight from the file mappings (gathered writes of frame header + mapped
/// bytes, no copy). Several requests on one connection (distinct `stream_id`s)
/// are served at once, frame by frame in turn. Transcoding (to row-major, when
/// the client allows it) runs on the `transcode` executor under a global memory
/// budget. Nothing a client sends can make the server hold more than
/// `max_message_size` bytes of its input per connection, and no exception
/// leaves the server: a failed connection is closed, the others go on.
#pragma once

#include "hurray/net/export.hpp"

#include <asio/any_io_executor.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/io/file_reader.hpp"

namespace hurray::net {

/// Limits and behaviour of a `TensorServer`.
struct HURRAY_NET_EXPORT ServerOptions {
    /// The largest message payload the server accepts (`SERVER_HELLO`'s
    /// `max_message_size`; a larger `payload_length` is answered with
    /// `MESSAGE_TOO_LARGE` and the connection is closed). Requests are small:
    /// 1 MiB is plenty. At least 64.
    uint32_t max_message_size = 1U << 20;
    /// Connections served at once; one more is answered `SERVER_BUSY` and closed.
    size_t max_clients = 64;
    /// Streams (requests) in flight on one connection; one more is answered
    /// `SERVER_BUSY` on its stream.
    size_t max_streams_per_connection = 64;
    /// Data bytes in one `TENSOR_DATA` frame (less when the client accepts
    /// smaller messages). At least 4096.
    uint32_t data_frame_size = 4U << 20;
    /// A connection on which nothing arrives for this long while nothing is
    /// being sent to it is closed (after an `ERROR` `TIMEOUT`).
    std::chrono::milliseconds idle_timeout = std::chrono::seconds(120);
    /// A message whose header has arrived must arrive whole within this time.
    std::chrono::milliseconds message_timeout = std::chrono::seconds(15);
    /// A write the client does not take within this time closes the connection.
    std::chrono::milliseconds write_timeout = std::chrono::seconds(60);
    /// Bytes of transcoded tensors held at once, over all connections. A
    /// request whose transcoding would exceed it is served in a later
    /// preferred layout or the stored one, as the spec says.
    uint64_t transcode_memory_limit = 1ULL << 30;
    /// Tiled answers (layout 0x04, from a tensor of whole-byte elements) use
    /// one level of tiles, the grid and each tile row-major, of
    /// `min(dim, tile_edge)` elements along the last two dimensions and 1
    /// along the others (a 32 x 32 block of a matrix by default).
    uint64_t tile_edge = 32;
    /// Where transcoding runs (an `asio::thread_pool`'s executor). Empty: the
    /// server's own executor.
    asio::any_io_executor transcode{};
    /// Where connections run, each on a strand of one of these, taken in
    /// turn. One `io_context` per thread, each run by its own thread, spreads
    /// connections over threads without a scheduler shared between them
    /// (what `hurray serve --threads N` does). Empty: the server's executor.
    std::vector<asio::any_io_executor> connection_executors{};
    /// Where uploaded tensors (`TENSOR_PUT`) are stored, one HRRYFILE per tensor
    /// named after its key (`KEY.hrry`; bytes outside `[A-Za-z0-9._-]` and a
    /// leading `.` written `%XX`), committed atomically and durably when its
    /// data is complete, then acknowledged (`TENSOR_PUT_ACK`); an existing file
    /// of that name is replaced. Empty (default): every PUT is answered
    /// `PUT_REJECTED`. Uploaded tensors are not served.
    std::string put_directory;
    /// The most data bytes one uploaded tensor may have.
    uint64_t max_put_bytes = 1ULL << 40;
    /// Parallel shard transfers (interchange.md § Parallel Transfers): a
    /// request with `PARALLEL_OK` for a dense row-major tensor (stored so, or
    /// transcoded to it) of at least `2 * min_shard_bytes` is answered as up
    /// to this many shards, slices along dimension 0, each on its own stream
    /// (docs/server.md says which stream ids). 1 turns parallel transfers off
    /// (`PARALLEL_STREAMS` is then not advertised). At least 1.
    uint32_t max_shards = 4;
    /// The smallest shard worth its own stream, in data bytes.
    uint64_t min_shard_bytes = 1U << 20;
};

/// Counters of a `TensorServer` (a snapshot; each counter is read atomically).
struct HURRAY_NET_EXPORT ServerStats {
    uint64_t connections_accepted = 0;  ///< Connections that got a session or an error.
    uint64_t connections_refused = 0;   ///< Answered `SERVER_BUSY` (over `max_clients`).
    uint64_t connections_open = 0;      ///< Open now.
    uint64_t requests = 0;              ///< `TENSOR_REQUEST`s and listings accepted.
    uint64_t errors_sent = 0;           ///< `ERROR` messages sent.
    uint64_t data_bytes_sent = 0;       ///< Tensor data bytes sent in `TENSOR_DATA` frames.
    uint64_t transcode_bytes = 0;       ///< Transcoded bytes held now.
    uint64_t transcode_bytes_peak = 0;  ///< The most ever held at once.
    /// Bytes held for connections now: input payloads (at most one
    /// `max_message_size` per connection) and answers queued behind a client
    /// that reads slowly (bounded per connection too). Tensor data is not
    /// copied (it goes out from the mapping) and transcoded tensors are counted
    /// in `transcode_bytes`.
    uint64_t held_bytes = 0;
    uint64_t held_bytes_peak = 0;       ///< The most ever held at once.
};

/// A server of the tensors of one or more HRRYFILEs, read-only.
///
/// @code
/// asio::io_context io;
/// auto file = hurray::FileReader::open("model.hrry");
/// std::shared_ptr<const hurray::FileReader> files[] = {std::make_shared<hurray::FileReader>(std::move(*file))};
/// auto server = hurray::net::TensorServer::create(io.get_executor(), files);
/// auto bound = (*server)->listen("127.0.0.1:7447");   // "hurray://127.0.0.1:7447"
/// io.run();                                           // until stop()
/// @endcode
class HURRAY_NET_EXPORT TensorServer {
public:
    /// A server of every tensor of `files`, under its name (its key). Checks
    /// each file whole first (`FileReader::check_all`). Fails with
    /// `kDuplicateName` when two files hold the same name, `kInvalidArgument`
    /// for options out of range. Serves nothing until `listen`.
    static Result<std::shared_ptr<TensorServer>> create(asio::any_io_executor executor,
                                                        std::span<const std::shared_ptr<const FileReader>> files,
                                                        ServerOptions options = {});
    TensorServer(const TensorServer&) = delete;
    TensorServer& operator=(const TensorServer&) = delete;
    ~TensorServer();

    /// Listens on `address` (`parse_transport_address`: `HOST:PORT`,
    /// `unix:PATH`, ...) and accepts connections from then on. Returns the
    /// address bound (with the port chosen when it was 0), as
    /// `TransportAddress::to_string` writes it. May be called for several
    /// addresses. A Unix socket path must not exist yet (`kIoError`).
    Result<std::string> listen(std::string_view address);

    /// Stops gracefully; callable from any thread, more than once: stops
    /// accepting, reads no more requests, finishes the transfers in flight,
    /// then closes each connection. The executor's `run()` returns when the
    /// last one is closed (if nothing else keeps it busy).
    void stop();

    /// The counters now.
    [[nodiscard]] ServerStats stats() const noexcept;

    /// The keys served, in the order of the files and, in each, write order.
    [[nodiscard]] std::span<const std::string> keys() const noexcept;

    /// Internal state (defined in the source).
    struct State;

private:
    explicit TensorServer(std::shared_ptr<State> state) noexcept;
    std::shared_ptr<State> state_;
};

}  // namespace hurray::net
