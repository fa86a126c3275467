// SPDX-License-Identifier: Apache-2.0
// A bounded load test of TensorServer on loopback: 64 well-behaved clients fetch
// tensors at once while 8 others send garbage, oversized messages, stall in the
// middle of a message or flood PINGs without reading the answers. Every good client
// must get byte-identical tensors, the server's held memory must stay within its
// bound, and the server must still serve afterwards.
#include <gtest/gtest.h>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/read.hpp>
#include <asio/steady_timer.hpp>
#include <asio/strand.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>

#include <atomic>
#include <filesystem>
#include <random>
#include <thread>

#include "hurray/core/builder.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/transport_message.hpp"
#include "hurray/net/tensor_client.hpp"
#include "hurray/net/tensor_server.hpp"
#include "hurray/net/transport_address.hpp"
#include "net_test_support.hpp"

namespace {

using namespace hurray;
namespace fs = std::filesystem;
using hurray::nettest::random_bytes;

/// A misbehaving peer: connects, does `kind` of harm, and keeps the socket until the
/// server closes it or the test ends.
asio::awaitable<void> bad_client(std::string address, int kind, std::atomic<int>* closed_by_server) {
    const auto a = *net::parse_transport_address(address);
    auto ex = co_await asio::this_coro::executor;
    asio::ip::tcp::socket s(ex);
    std::error_code ec;
    co_await s.async_connect({asio::ip::make_address(a.host), a.port}, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
        co_return;
    }
    Hello h;
    const std::vector<uint8_t> hello = *encode_hello(MessageType::kClientHello, 1, h);
    switch (kind % 4) {
        case 0: {  // garbage from the first byte
            const auto junk = random_bytes(4096, static_cast<uint32_t>(kind));
            co_await asio::async_write(s, asio::buffer(junk), asio::redirect_error(asio::use_awaitable, ec));
            break;
        }
        case 1: {  // a hello, then a header announcing 4 GiB
            co_await asio::async_write(s, asio::buffer(hello), asio::redirect_error(asio::use_awaitable, ec));
            const auto head = encode_message_header(MessageHeader{.type = 3, .stream_id = 5, .payload_length = UINT32_MAX});
            co_await asio::async_write(s, asio::buffer(head), asio::redirect_error(asio::use_awaitable, ec));
            break;
        }
        case 2: {  // a hello, then half a message, then silence
            co_await asio::async_write(s, asio::buffer(hello), asio::redirect_error(asio::use_awaitable, ec));
            const auto head = encode_message_header(MessageHeader{.type = 0x0A, .stream_id = 5, .payload_length = 1000});
            co_await asio::async_write(s, asio::buffer(head), asio::redirect_error(asio::use_awaitable, ec));
            const std::vector<uint8_t> half(500, 7);
            co_await asio::async_write(s, asio::buffer(half), asio::redirect_error(asio::use_awaitable, ec));
            break;
        }
        default: {  // a hello, then big PINGs as fast as possible, never reading a PONG
            co_await asio::async_write(s, asio::buffer(hello), asio::redirect_error(asio::use_awaitable, ec));
            const std::vector<uint8_t> ping = *encode_message(MessageType::kPing, 9, std::vector<uint8_t>(60000, 1));
            for (int i = 0; i < 400 && !ec; ++i) {
                co_await asio::async_write(s, asio::buffer(ping), asio::redirect_error(asio::use_awaitable, ec));
            }
            break;
        }
    }
    // Wait for the server to end it (a timeout or the error it answered), reading nothing
    // in the flooding case until the end.
    if (kind % 4 == 3) {
        asio::steady_timer t(ex, std::chrono::milliseconds(1500));
        co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        s.close(ec);
        co_return;
    }
    std::vector<uint8_t> sink(65536);
    for (;;) {
        co_await s.async_read_some(asio::buffer(sink), asio::redirect_error(asio::use_awaitable, ec));
        if (ec) {
            closed_by_server->fetch_add(1);
            break;
        }
    }
}

TEST(TensorServerLoad, GoodClientsAreServedWhileBadOnesAreContained) {
    const fs::path dir = fs::temp_directory_path() / ("hurray_server_load_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path path = dir / "m.hrry";
    std::vector<std::vector<uint8_t>> contents;
    {
        auto w = FileWriter::create_file(path);
        ASSERT_TRUE(w.ok());
        for (int i = 0; i < 8; ++i) {
            contents.push_back(random_bytes(static_cast<size_t>(20000 + 70000 * i), static_cast<uint32_t>(i)));
            const auto d = *make_dense(ElementType::kUInt8, {contents.back().size()});
            const std::span<const uint8_t> b[] = {contents.back()};
            // Appended, not "t" + to_string(i): GCC 12 -O3 sees a false -Wstringop-overflow there.
            std::string name = "t";
            name.append(std::to_string(i));
            ASSERT_TRUE(w->add_tensor(name, d, b).ok());
        }
        ASSERT_TRUE(w->finish().ok());
    }
    auto f = FileReader::open(path);
    ASSERT_TRUE(f.ok());
    const std::shared_ptr<const FileReader> files[] = {std::make_shared<const FileReader>(std::move(*f))};

    // The acceptor on one io_context, the connections spread over two more,
    // each run by a thread of its own (ServerOptions::connection_executors).
    asio::io_context server_io;
    asio::io_context connections_a(1);
    asio::io_context connections_b(1);
    net::ServerOptions so;
    so.connection_executors = {connections_a.get_executor(), connections_b.get_executor()};
    so.min_shard_bytes = 16 * 1024;  // the clients that ask for parallel shards get them
    so.max_clients = 80;
    so.max_message_size = 64 * 1024;
    so.data_frame_size = 16 * 1024;
    so.message_timeout = std::chrono::milliseconds(300);
    so.idle_timeout = std::chrono::seconds(5);
    so.write_timeout = std::chrono::seconds(1);
    auto server = net::TensorServer::create(server_io.get_executor(), files, so);
    ASSERT_TRUE(server.ok());
    auto address = (*server)->listen("127.0.0.1:0");
    ASSERT_TRUE(address.ok());
    std::vector<std::thread> server_threads;
    server_threads.emplace_back([&] { server_io.run(); });
    auto busy_a = asio::make_work_guard(connections_a);
    auto busy_b = asio::make_work_guard(connections_b);
    server_threads.emplace_back([&] { connections_a.run(); });
    server_threads.emplace_back([&] { connections_b.run(); });

    asio::io_context client_io;
    std::atomic<int> good{0};
    std::atomic<int> failures{0};
    std::atomic<int> closed_by_server{0};
    for (int c = 0; c < 64; ++c) {
        asio::co_spawn(
            asio::make_strand(client_io),  // a client's handlers never run concurrently
            [&, c]() -> asio::awaitable<void> {
                auto client = co_await net::TensorClient::connect(co_await asio::this_coro::executor, *address);
                if (!client) {
                    ADD_FAILURE() << "client " << c << ": " << client.error().to_string();
                    failures.fetch_add(1);
                    co_return;
                }
                net::FetchOptions o;
                o.parallel = c % 2 == 1;  // half of them as parallel shards
                for (int k = 0; k < 3; ++k) {
                    const int i = (c + 3 * k) % 8;
                    std::string key = "t";
                    key.append(std::to_string(i));
                    auto t = co_await (*client)->fetch(key, o);
                    if (!t || t->size() != 1 || (*t)[0].data.size() != contents[i].size() ||
                        !std::equal(contents[i].begin(), contents[i].end(), (*t)[0].data.begin())) {
                        ADD_FAILURE() << "client " << c << " tensor t" << i << ": "
                                      << (t ? std::string("wrong bytes") : t.error().to_string());
                        failures.fetch_add(1);
                        co_return;
                    }
                }
                good.fetch_add(1);
            },
            asio::detached);
    }
    for (int b = 0; b < 8; ++b) {
        asio::co_spawn(asio::make_strand(client_io), bad_client(*address, b, &closed_by_server), asio::detached);
    }
    std::vector<std::thread> client_threads;
    for (int i = 0; i < 2; ++i) {
        client_threads.emplace_back([&] { client_io.run(); });
    }
    for (auto& t : client_threads) {
        t.join();
    }
    EXPECT_EQ(good.load(), 64);
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(closed_by_server.load(), 6) << "garbage, oversized and stalled peers are cut off";

    // Still serving, and within its memory bound: per connection one input payload and
    // a bounded queue of answers (docs/server.md), nothing per tensor byte.
    client_io.restart();
    std::optional<bool> after;
    asio::co_spawn(
        client_io,
        [&]() -> asio::awaitable<void> {
            auto client = co_await net::TensorClient::connect(client_io.get_executor(), *address);
            after = client && (co_await (*client)->fetch("t7")).ok();
        },
        asio::detached);
    client_io.run();
    EXPECT_EQ(after, std::optional<bool>(true));
    const net::ServerStats s = (*server)->stats();
    const uint64_t per_connection = 4ULL * so.max_message_size + 65536;
    EXPECT_LE(s.held_bytes_peak, 73 * per_connection);
    EXPECT_LE(s.held_bytes_peak, 8ULL << 20) << "far below the bound in practice";
    EXPECT_GE(s.errors_sent, 4U);
    (*server)->stop();
    busy_a.reset();
    busy_b.reset();
    for (auto& t : server_threads) {
        t.join();
    }
    EXPECT_EQ((*server)->stats().held_bytes, 0U);
    fs::remove_all(dir);
}

}  // namespace
