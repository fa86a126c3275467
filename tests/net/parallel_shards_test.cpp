// SPDX-License-Identifier: Apache-2.0
// The client's side of parallel shard transfers (interchange.md § Parallel
// Transfers), against a scripted server: shards of any rectangular shape
// reassembled, and every inconsistency refused with SHARD_MISMATCH before
// any data is used. tensor_server_test.cpp drives our own server's shards.
#include <gtest/gtest.h>

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/read.hpp>
#include <asio/write.hpp>

#include <cstring>
#include <functional>
#include <thread>

#include "hurray/core/builder.hpp"
#include "hurray/core/byte_io.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/io/transport_message.hpp"
#include "hurray/net/tensor_client.hpp"
#include "net_test_support.hpp"

namespace {

using namespace hurray;
using hurray::net::TensorClient;
using hurray::nettest::run_on;

using Message = std::pair<MessageHeader, std::vector<uint8_t>>;

/// A server of one scripted answer: answers the client's hello, reads its
/// TENSOR_REQUEST, sends `script(request stream)`, then records what the
/// client sends until it closes the connection.
class ScriptedServer {
public:
    explicit ScriptedServer(std::function<std::vector<uint8_t>(uint32_t)> script)
        : acceptor_(io_, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)), script_(std::move(script)) {
        thread_ = std::thread([this] { serve(); });
    }
    ScriptedServer(const ScriptedServer&) = delete;
    ScriptedServer& operator=(const ScriptedServer&) = delete;
    ~ScriptedServer() { join(); }

    [[nodiscard]] std::string address() const { return "127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()); }

    /// Waits for the client to close; then `received` and `request_flags` hold.
    void join() {
        if (thread_.joinable()) {
            thread_.join();
        }
    }

    /// The `error_code` of the client's first ERROR, or 0.
    [[nodiscard]] uint32_t client_error() const {
        for (const Message& m : received) {
            if (m.first.type == static_cast<uint32_t>(MessageType::kError)) {
                return decode_error(m.second)->code;
            }
        }
        return 0;
    }

    std::vector<Message> received;
    uint32_t request_flags = 0;

private:
    std::optional<Message> next(asio::ip::tcp::socket& s) {
        std::array<uint8_t, kMessageHeaderSize> head{};
        std::error_code ec;
        asio::read(s, asio::buffer(head), ec);
        if (ec) {
            return std::nullopt;
        }
        auto h = decode_message_header(head);
        std::vector<uint8_t> payload(h->payload_length);
        asio::read(s, asio::buffer(payload), ec);
        if (ec) {
            return std::nullopt;
        }
        return Message{*h, std::move(payload)};
    }

    void serve() {
        asio::ip::tcp::socket s(io_);
        acceptor_.accept(s);
        auto hello = next(s);
        if (!hello) {
            return;
        }
        Hello h;
        h.max_message_size = 1U << 20;
        h.capability_flags = kCapParallelStreams;
        asio::write(s, asio::buffer(*encode_hello(MessageType::kServerHello, hello->first.stream_id, h)));
        auto req = next(s);
        if (!req) {
            return;
        }
        request_flags = decode_tensor_request(req->second)->flags;
        std::error_code ec;
        asio::write(s, asio::buffer(script_(req->first.stream_id)), ec);
        while (auto m = next(s)) {
            received.push_back(std::move(*m));
        }
    }

    asio::io_context io_;
    asio::ip::tcp::acceptor acceptor_;
    std::function<std::vector<uint8_t>(uint32_t)> script_;
    std::thread thread_;
};

void append(std::vector<uint8_t>& out, const std::vector<uint8_t>& msg) { out.insert(out.end(), msg.begin(), msg.end()); }

/// The TENSOR_DESCRIPTOR of a float32 shard of `shape` at `offset` in `parent`.
std::vector<uint8_t> shard_descriptor(uint32_t sid, Shape shape, std::vector<uint64_t> parent, std::vector<uint64_t> offset,
                           uint32_t index, uint32_t total, ElementType type = ElementType::kFloat32) {
    TensorDescriptor d = *make_dense(type, std::move(shape));
    d.shard = ShardDescriptor{.parent_shape = std::move(parent), .shard_offset = std::move(offset)};
    const auto bytes = *encode(d);
    const DescriptorTransport t{.total_data_bytes = d.buffers[0].byte_size, .shard_index = index, .total_shards = total};
    return *encode_tensor_descriptor(sid, bytes, t);
}

std::vector<uint8_t> floats(std::initializer_list<float> v) {
    std::vector<uint8_t> out(v.size() * 4);
    size_t i = 0;
    for (float f : v) {
        store_le<float>(out.data() + 4 * i++, f);
    }
    return out;
}

std::vector<uint8_t> data_frame(uint32_t sid, uint64_t offset, const std::vector<uint8_t>& bytes) {
    const auto head = *encode_tensor_data_header(sid, offset, bytes.size());
    std::vector<uint8_t> out(head.begin(), head.end());
    append(out, bytes);
    return out;
}

std::vector<uint8_t> data_end(uint32_t sid) { return *encode_message(MessageType::kTensorDataEnd, sid); }

constexpr uint32_t kB = 0x80000001U;  // the second shard's stream, opened by the server

class ParallelShardsTest : public ::testing::Test {
protected:
    /// Fetches "t" with `parallel` from a server that answers with `script`.
    Result<std::vector<net::ReceivedTensor>> fetch(ScriptedServer& server, bool parallel = true) {
        auto c = run_on(io_, TensorClient::connect(io_.get_executor(), server.address()));
        EXPECT_TRUE(c.ok()) << c.error().to_string();
        if (!c.ok()) {
            return std::move(c).error();
        }
        net::FetchOptions o;
        o.parallel = parallel;
        auto got = run_on(io_, (*c)->fetch("t", o));
        c->reset();  // closes: the server's recording ends
        server.join();
        return got;
    }

    asio::io_context io_;
};

// A 2 x 4 float32 tensor (p[i][j] = 10 i + j) as two 2 x 2 column blocks:
// not slices of rows, so the client reassembles them through the general path.
TEST_F(ParallelShardsTest, ColumnBlocksAreReassembledInTheirBoxes) {
    ScriptedServer server([](uint32_t sid) {
        std::vector<uint8_t> s;
        append(s, shard_descriptor(sid, {2, 2}, {2, 4}, {0, 0}, 0, 2));
        append(s, shard_descriptor(kB, {2, 2}, {2, 4}, {0, 2}, 1, 2));
        const auto a = floats({0, 1, 10, 11});
        const auto b = floats({2, 3, 12, 13});
        append(s, data_frame(kB, 0, std::vector<uint8_t>(b.begin(), b.begin() + 6)));  // frames interleaved, split anywhere
        append(s, data_frame(sid, 0, a));
        append(s, data_frame(kB, 6, std::vector<uint8_t>(b.begin() + 6, b.end())));
        append(s, data_end(sid));
        append(s, data_end(kB));
        return s;
    });
    auto got = fetch(server);
    ASSERT_TRUE(got.ok()) << got.error().to_string();
    EXPECT_NE(server.request_flags & kRequestParallelOk, 0U);
    ASSERT_EQ(got->size(), 1U);
    const net::ReceivedTensor& t = (*got)[0];
    EXPECT_EQ(t.descriptor, *make_dense(ElementType::kFloat32, {2, 4}));
    EXPECT_EQ(t.transport.total_shards, 2U);
    const auto want = floats({0, 1, 2, 3, 10, 11, 12, 13});
    ASSERT_EQ(t.data.size(), want.size());
    EXPECT_TRUE(std::equal(want.begin(), want.end(), t.data.begin()));
    EXPECT_EQ(server.client_error(), 0U);
}

struct BadCase {
    const char* name;
    std::function<std::vector<uint8_t>(uint32_t)> script;
    TransportErrorCode sent;  // what the client answers on the stream
    const char* says;         // in the client's error message
};

TEST_F(ParallelShardsTest, InconsistentShardsAreRefusedBeforeAnyDataIsUsed) {
    const auto two = [](std::vector<uint8_t> second) {
        return [second](uint32_t sid) {
            std::vector<uint8_t> s = shard_descriptor(sid, {2, 2}, {2, 4}, {0, 0}, 0, 2);
            append(s, second);
            return s;
        };
    };
    const std::vector<BadCase> cases = {
        {"overlapping boxes", two(shard_descriptor(kB, {2, 2}, {2, 4}, {0, 1}, 1, 2)), TransportErrorCode::kShardMismatch,
         "overlap"},
        {"a gap", two(shard_descriptor(kB, {2, 1}, {2, 4}, {0, 2}, 1, 2)), TransportErrorCode::kShardMismatch, "inconsistent"},
        {"another parent_shape", two(shard_descriptor(kB, {2, 2}, {2, 5}, {0, 2}, 1, 2)), TransportErrorCode::kShardMismatch,
         "parent_shape"},
        {"another element type", two(shard_descriptor(kB, {2, 2}, {2, 4}, {0, 2}, 1, 2, ElementType::kInt32)),
         TransportErrorCode::kShardMismatch, "element type"},
        {"a shard_index twice", two(shard_descriptor(kB, {2, 2}, {2, 4}, {0, 2}, 0, 2)), TransportErrorCode::kInvalidMessage,
         "arrived twice"},
        {"another total_shards", two(shard_descriptor(kB, {2, 2}, {2, 4}, {0, 2}, 1, 3)), TransportErrorCode::kInvalidMessage,
         "total_shards"},
        {"both on the request's stream", [](uint32_t sid) {
             std::vector<uint8_t> s = shard_descriptor(sid, {2, 2}, {2, 4}, {0, 0}, 0, 2);
             append(s, shard_descriptor(sid, {2, 2}, {2, 4}, {0, 2}, 1, 2));
             return s;
         },
         TransportErrorCode::kInvalidMessage, "on a stream of its own"},
        {"data before every descriptor", [](uint32_t sid) {
             std::vector<uint8_t> s = shard_descriptor(sid, {2, 2}, {2, 4}, {0, 0}, 0, 2);
             append(s, data_frame(sid, 0, floats({0, 1, 10, 11})));
             return s;
         },
         TransportErrorCode::kInvalidMessage, "TENSOR_DATA"},
        {"a shard's data ending early", [](uint32_t sid) {
             std::vector<uint8_t> s = shard_descriptor(sid, {2, 2}, {2, 4}, {0, 0}, 0, 2);
             append(s, shard_descriptor(kB, {2, 2}, {2, 4}, {0, 2}, 1, 2));
             append(s, data_frame(sid, 0, floats({0, 1})));
             append(s, data_end(sid));
             return s;
         },
         TransportErrorCode::kInvalidMessage, "TENSOR_DATA_END after 8 of 16 bytes"},
        {"a frame out of order", [](uint32_t sid) {
             std::vector<uint8_t> s = shard_descriptor(sid, {2, 2}, {2, 4}, {0, 0}, 0, 2);
             append(s, shard_descriptor(kB, {2, 2}, {2, 4}, {0, 2}, 1, 2));
             append(s, data_frame(kB, 8, floats({12, 13})));
             return s;
         },
         TransportErrorCode::kInvalidMessage, "expected the next bytes from 0"},
    };
    for (const BadCase& bad : cases) {
        SCOPED_TRACE(bad.name);
        ScriptedServer server(bad.script);
        auto got = fetch(server);
        ASSERT_FALSE(got.ok());
        EXPECT_EQ(got.error().code(), ErrorCode::kInvalidData) << got.error().to_string();
        EXPECT_NE(got.error().message().find("parallel transfer"), std::string::npos) << got.error().message();
        EXPECT_NE(got.error().message().find(bad.says), std::string::npos) << got.error().message();
        EXPECT_EQ(server.client_error(), static_cast<uint32_t>(bad.sent)) << got.error().message();
    }
}

TEST_F(ParallelShardsTest, ShardsThatWereNotAskedForAreRefused) {
    ScriptedServer server([](uint32_t sid) {
        std::vector<uint8_t> s = shard_descriptor(sid, {2, 2}, {2, 4}, {0, 0}, 0, 2);
        append(s, shard_descriptor(kB, {2, 2}, {2, 4}, {0, 2}, 1, 2));
        return s;
    });
    auto got = fetch(server, /*parallel=*/false);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(server.request_flags & kRequestParallelOk, 0U);
    EXPECT_NE(got.error().message().find("did not ask for"), std::string::npos) << got.error().message();
}

TEST_F(ParallelShardsTest, QuantizedShardsAreNotReassembled) {
    ScriptedServer server([](uint32_t sid) {
        std::vector<uint8_t> s;
        for (uint32_t k = 0; k < 2; ++k) {
            TensorDescriptor d = *make_per_block_quantized(ElementType::kInt8, {1, 32}, 1, 32);
            d.shard = ShardDescriptor{.parent_shape = {2, 32}, .shard_offset = {k, 0}};
            const DescriptorTransport t{.total_data_bytes = *data_run_bytes(d), .shard_index = k, .total_shards = 2};
            append(s, *encode_tensor_descriptor(k == 0 ? sid : kB, *encode(d), t));
        }
        return s;
    });
    auto got = fetch(server);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().code(), ErrorCode::kUnsupported) << got.error().to_string();
    EXPECT_EQ(server.client_error(), static_cast<uint32_t>(TransportErrorCode::kInvalidMessage));
}

}  // namespace
