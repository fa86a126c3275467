// SPDX-License-Identifier: Apache-2.0
// TensorServer and TensorClient on loopback: every message type, negotiation
// outcomes, transcoding against core's materialize, composites, multiplexed
// streams, limits, timeouts and graceful stop; raw sockets for what a
// well-behaved client never sends.
#include <gtest/gtest.h>

#include <asio/co_spawn.hpp>
#include <asio/connect.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/read.hpp>
#include <asio/write.hpp>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <algorithm>
#include <thread>

#include "hurray/core/builder.hpp"
#include "hurray/core/byte_io.hpp"
#include "hurray/core/dequantize.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/quantize.hpp"
#include "hurray/core/tensor_view.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/transport_message.hpp"
#include "hurray/net/dequantize_entry.hpp"
#include "hurray/net/remote_listing.hpp"
#include "hurray/net/tensor_client.hpp"
#include "hurray/net/tensor_server.hpp"
#include "hurray/net/transport_address.hpp"
#include "net_test_support.hpp"

namespace {

using namespace hurray;
using hurray::net::TensorClient;
using hurray::net::TensorServer;
using hurray::nettest::random_bytes;
using hurray::nettest::run_on;
namespace fs = std::filesystem;

/// A file with the tensors the tests fetch, served on 127.0.0.1:0.
class TensorServerTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("hurray_server_test_" + std::to_string(::getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        path_ = dir_ / "a.hrry";
        write_file(path_);
        auto f = FileReader::open(path_);
        ASSERT_TRUE(f.ok()) << f.error().to_string();
        file_ = std::make_shared<const FileReader>(std::move(*f));
    }

    void TearDown() override {
        stop_server();
        fs::remove_all(dir_);
    }

    static void write_file(const fs::path& path) {
        auto w = FileWriter::create_file(path);
        ASSERT_TRUE(w.ok());
        auto add = [&](std::string_view name, const TensorDescriptor& d, std::vector<std::vector<uint8_t>> bufs) {
            std::vector<std::span<const uint8_t>> spans(bufs.begin(), bufs.end());
            ASSERT_TRUE(w->add_tensor(name, d, spans).ok()) << name;
        };
        add("w", *make_dense(ElementType::kFloat32, {4, 1000}), {random_bytes(16000, 1)});
        add("big", *make_dense(ElementType::kUInt8, {3 * 1024 * 1024 + 123}), {random_bytes(3 * 1024 * 1024 + 123, 2)});
        add("empty", *make_dense(ElementType::kFloat32, {0, 3}), {{}});
        TensorDescriptor cm = *make_dense(ElementType::kFloat32, {3, 5});
        cm.layout = ColumnMajorLayout{};
        add("cm", cm, {random_bytes(60, 3)});
        TensorDescriptor csr = *make_csr(ElementType::kFloat32, 3, 3, 2);
        std::vector<uint8_t> values(8), cols(16), rows(32);
        store_le<float>(values.data(), 1.5F);
        store_le<float>(values.data() + 4, -2.0F);
        store_le<int64_t>(cols.data(), 0);
        store_le<int64_t>(cols.data() + 8, 2);
        const int64_t row_ptr[] = {0, 1, 1, 2};
        for (size_t i = 0; i < 4; ++i) {
            store_le<int64_t>(rows.data() + 8 * i, row_ptr[i]);
        }
        add("csr", csr, {values, cols, rows});
        // A partition composite of two row blocks.
        TensorDescriptor head = *make_composite_head(ElementType::kFloat32, {4, 3}, CompositionRule::kPartition, 2);
        TensorDescriptor m0 = *make_dense(ElementType::kFloat32, {2, 3});
        m0.shard = ShardDescriptor{{4, 3}, {0, 0}};
        TensorDescriptor m1 = m0;
        m1.shard = ShardDescriptor{{4, 3}, {2, 0}};
        const std::vector<uint8_t> b0(24, 0x11), b1(24, 0x22);
        const std::span<const uint8_t> s0[] = {b0};
        const std::span<const uint8_t> s1[] = {b1};
        const FileTensorInput members[] = {{"comp.0", &m0, s0}, {"comp.1", &m1, s1}};
        ASSERT_TRUE(w->add_composite("comp", head, members).ok());
        ASSERT_TRUE(w->finish().ok());
    }

    void start_server(net::ServerOptions o = {}) {
        o.data_frame_size = o.data_frame_size == net::ServerOptions{}.data_frame_size ? 65536 : o.data_frame_size;
        const std::shared_ptr<const FileReader> files[] = {file_};
        auto s = TensorServer::create(server_io_.get_executor(), files, o);
        ASSERT_TRUE(s.ok()) << s.error().to_string();
        server_ = *s;
        auto bound = server_->listen("127.0.0.1:0");
        ASSERT_TRUE(bound.ok()) << bound.error().to_string();
        address_ = *bound;
        for (int i = 0; i < 2; ++i) {
            threads_.emplace_back([this] { server_io_.run(); });
        }
    }

    void stop_server() {
        if (server_) {
            server_->stop();
        }
        for (auto& t : threads_) {
            t.join();
        }
        threads_.clear();
        server_.reset();
    }

    std::unique_ptr<TensorClient> connect(net::ClientOptions o = {}) {
        auto c = run_on(client_io_, TensorClient::connect(client_io_.get_executor(), address_, o));
        EXPECT_TRUE(c.ok()) << c.error().to_string();
        return c.ok() ? std::move(*c) : nullptr;
    }

    /// Options that ask for `layout`, transcoding allowed.
    static net::FetchOptions transcoding_to(uint8_t layout) {
        net::FetchOptions o;
        o.allow_transcode = true;
        o.preferred_layouts = {layout};
        return o;
    }

    std::vector<uint8_t> stored_bytes(std::string_view name) const {
        auto t = file_->tensor(name);
        std::vector<uint8_t> out;
        for (const SharedBuffer& b : t->buffers()) {
            out.insert(out.end(), b.begin(), b.end());
        }
        return out;
    }

    fs::path dir_;
    fs::path path_;
    std::shared_ptr<const FileReader> file_;
    asio::io_context server_io_;
    asio::io_context client_io_;
    std::vector<std::thread> threads_;
    std::shared_ptr<TensorServer> server_;
    std::string address_;
};

TEST_F(TensorServerTest, HelloAdvertisesWhatTheServerDoes) {
    start_server();
    auto c = connect();
    ASSERT_TRUE(c);
    const Hello& h = c->server_hello();
    EXPECT_EQ(h.protocol_version, 1U);
    EXPECT_EQ(h.max_message_size, net::ServerOptions{}.max_message_size);
    EXPECT_EQ(h.capability_flags, static_cast<uint64_t>(kCapTranscoding) | static_cast<uint64_t>(kCapParallelStreams));
    EXPECT_EQ(h.devices, std::vector<uint8_t>{0x00});
    std::vector<uint8_t> tags;
    for (const auto& l : h.layouts) {
        tags.push_back(l.tag);
    }
    EXPECT_EQ(tags, (std::vector<uint8_t>{0x01, 0x02, 0x03, 0x04, 0x07, 0x0B, 0xF0}))
        << "stored, plus the transcoding targets, plus the dequantize entry";
    EXPECT_EQ(h.layouts.back(), net::dequantize_layout_entry());
    EXPECT_TRUE(address_.starts_with("hurray://127.0.0.1:"));
}

TEST_F(TensorServerTest, FetchesTensorsByteIdentical) {
    start_server();
    auto c = connect();
    ASSERT_TRUE(c);
    for (const char* key : {"w", "big", "empty", "cm", "csr"}) {
        for (uint32_t alignment : {64U, 4096U}) {
            net::FetchOptions o;
            o.min_alignment = alignment;
            auto got = run_on(client_io_, c->fetch(key, o));
            ASSERT_TRUE(got.ok()) << key << ": " << got.error().to_string();
            ASSERT_EQ(got->size(), 1U);
            const net::ReceivedTensor& t = (*got)[0];
            EXPECT_EQ(t.descriptor, **file_->descriptor(key)) << key;
            const std::vector<uint8_t> want = stored_bytes(key);
            ASSERT_EQ(t.data.size(), want.size()) << key;
            EXPECT_TRUE(std::equal(want.begin(), want.end(), t.data.begin())) << key;
            EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data.data()) % alignment, 0U) << key;
            EXPECT_EQ(t.transport.total_data_bytes, want.size());
            EXPECT_EQ(t.transport.total_shards, 1U);
            EXPECT_EQ(t.buffers().size(), t.descriptor.buffers.size());
        }
    }
    EXPECT_GE(server_->stats().data_bytes_sent, 2 * (3ULL * 1024 * 1024 + 123));
}

TEST_F(TensorServerTest, CompositeComesWithItsMembersInOrder) {
    start_server();
    auto c = connect();
    ASSERT_TRUE(c);
    auto got = run_on(client_io_, c->fetch("comp"));
    ASSERT_TRUE(got.ok()) << got.error().to_string();
    ASSERT_EQ(got->size(), 3U);
    EXPECT_EQ((*got)[0].descriptor, **file_->descriptor("comp"));
    EXPECT_EQ((*got)[0].data.size(), 0U);
    EXPECT_EQ((*got)[1].descriptor, **file_->descriptor("comp.0"));
    EXPECT_EQ((*got)[2].descriptor, **file_->descriptor("comp.1"));
    EXPECT_EQ((*got)[1].data.span()[0], 0x11);
    EXPECT_EQ((*got)[2].data.span()[23], 0x22);
}

TEST_F(TensorServerTest, TranscodesToRowMajorOnlyWhenAllowed) {
    start_server();
    auto c = connect();
    ASSERT_TRUE(c);
    for (const char* key : {"cm", "csr"}) {
        net::FetchOptions o;
        o.preferred_layouts = {0x01};
        auto native = run_on(client_io_, c->fetch(key, o));
        ASSERT_TRUE(native.ok());
        EXPECT_EQ((*native)[0].descriptor, **file_->descriptor(key)) << "no ALLOW_TRANSCODE: the stored layout";
        o.allow_transcode = true;
        auto dense = run_on(client_io_, c->fetch(key, o));
        ASSERT_TRUE(dense.ok()) << dense.error().to_string();
        const net::ReceivedTensor& t = (*dense)[0];
        EXPECT_EQ(t.descriptor.layout_tag(), 0x01) << key;
        EXPECT_EQ(t.descriptor.shape, (**file_->descriptor(key)).shape);
        auto want = file_->tensor(key)->materialize();
        ASSERT_TRUE(want.ok());
        ASSERT_EQ(t.data.size(), want->size());
        EXPECT_TRUE(std::equal(want->begin(), want->end(), t.data.begin())) << key;
    }
    // The stored layout listed first wins over a transcoding listed later.
    net::FetchOptions o;
    o.preferred_layouts = {0x02, 0x01};
    o.allow_transcode = true;
    auto got = run_on(client_io_, c->fetch("cm", o));
    ASSERT_TRUE(got.ok());
    EXPECT_EQ((*got)[0].descriptor.layout_tag(), 0x02);
    EXPECT_EQ(server_->stats().transcode_bytes, 0U) << "the budget is given back";
    EXPECT_EQ(server_->stats().transcode_bytes_peak, 60U);
}

/// `t`'s elements read back row-major through a view of its buffers.
std::vector<uint8_t> received_row_major(const net::ReceivedTensor& t) {
    const auto bufs = t.buffers();
    std::vector<std::span<const uint8_t>> spans;
    for (const SharedBuffer& b : bufs) {
        spans.push_back(b.span());
    }
    auto view = TensorView::make(t.descriptor, spans);
    EXPECT_TRUE(view.ok()) << view.error().to_string();
    if (!view.ok()) {
        return {};
    }
    auto back = view->materialize();
    EXPECT_TRUE(back.ok()) << back.error().to_string();
    return back.ok() ? *back : std::vector<uint8_t>{};
}

TEST_F(TensorServerTest, TranscodesToColumnMajorAndStrided) {
    start_server();
    auto c = connect();
    ASSERT_TRUE(c);
    net::FetchOptions o;
    o.allow_transcode = true;
    for (const char* key : {"w", "csr", "cm"}) {
        for (uint8_t target : {uint8_t{0x02}, uint8_t{0x03}}) {
            SCOPED_TRACE(std::string(key) + " to layout " + std::to_string(target));
            o.preferred_layouts = {target};
            auto got = run_on(client_io_, c->fetch(key, o));
            ASSERT_TRUE(got.ok()) << got.error().to_string();
            const net::ReceivedTensor& t = (*got)[0];
            EXPECT_EQ(t.descriptor.layout_tag(), target);
            EXPECT_EQ(t.descriptor.shape, (**file_->descriptor(key)).shape);
            // The same logical tensor: read back row-major, it is the stored one's.
            EXPECT_EQ(received_row_major(t), *file_->tensor(key)->materialize());
        }
    }
    // Column-major holds the row-major bytes and their transposition at once:
    // "w" (16000 bytes) reserved twice over. Strided is the row-major bytes.
    EXPECT_EQ(server_->stats().transcode_bytes_peak, 32000U);
    EXPECT_EQ(server_->stats().transcode_bytes, 0U);
    o.preferred_layouts = {0x03};
    auto strided = run_on(client_io_, c->fetch("w", o));
    ASSERT_TRUE(strided.ok());
    EXPECT_EQ(std::get<StridedLayout>((*strided)[0].descriptor.layout).strides, (std::vector<int64_t>{1000, 1}));
    const auto stored = stored_bytes("w");
    EXPECT_TRUE(std::equal(stored.begin(), stored.end(), (*strided)[0].data.begin()));
}

TEST_F(TensorServerTest, TranscodesToTiles) {
    net::ServerOptions so;
    start_server(so);
    auto c = connect();
    ASSERT_TRUE(c);
    const net::FetchOptions o = transcoding_to(0x04);
    // Tiles of min(dim, 32) along the last two dimensions.
    const std::pair<const char*, std::vector<uint64_t>> cases[] = {{"w", {4, 32}}, {"cm", {3, 5}}, {"csr", {3, 3}},
                                                                   {"big", {32}}};
    for (const auto& [key, tile] : cases) {
        SCOPED_TRACE(key);
        auto got = run_on(client_io_, c->fetch(key, o));
        ASSERT_TRUE(got.ok()) << got.error().to_string();
        const net::ReceivedTensor& t = (*got)[0];
        ASSERT_EQ(t.descriptor.layout_tag(), 0x04);
        const auto& levels = std::get<TiledLayout>(t.descriptor.layout).levels;
        ASSERT_EQ(levels.size(), 1U);
        EXPECT_EQ(levels[0].tile_shape, tile);
        EXPECT_EQ(t.descriptor.shape, (**file_->descriptor(key)).shape);
        EXPECT_EQ(received_row_major(t), *file_->tensor(key)->materialize());
    }
    // The largest held at once: "big"'s row-major bytes and their tiled copy,
    // padded to whole tiles of 32 bytes.
    EXPECT_EQ(server_->stats().transcode_bytes_peak, (3U * 1024 * 1024 + 123) + (3U * 1024 * 1024 + 128));
    EXPECT_EQ(server_->stats().transcode_bytes, 0U);
    // "empty" [0, 3]: a tiled tensor of no tile.
    auto empty = run_on(client_io_, c->fetch("empty", o));
    ASSERT_TRUE(empty.ok()) << empty.error().to_string();
    EXPECT_EQ((*empty)[0].descriptor.layout_tag(), 0x04);
    EXPECT_EQ((*empty)[0].data.size(), 0U);
}

TEST_F(TensorServerTest, TileEdgeIsAnOption) {
    net::ServerOptions so;
    so.tile_edge = 2;
    start_server(so);
    auto c = connect();
    ASSERT_TRUE(c);
    const net::FetchOptions o = transcoding_to(0x04);
    auto got = run_on(client_io_, c->fetch("cm", o));
    ASSERT_TRUE(got.ok()) << got.error().to_string();
    EXPECT_EQ(std::get<TiledLayout>((*got)[0].descriptor.layout).levels[0].tile_shape, (std::vector<uint64_t>{2, 2}));
    EXPECT_EQ((*got)[0].data.size(), 2U * 3 * 4 * 4) << "a 2 x 3 grid of 2 x 2 float tiles, padded";
    EXPECT_EQ(received_row_major((*got)[0]), *file_->tensor("cm")->materialize());
    so.tile_edge = 0;
    const std::shared_ptr<const FileReader> files[] = {file_};
    EXPECT_EQ(TensorServer::create(server_io_.get_executor(), files, so).error().code(), ErrorCode::kInvalidArgument);
}

TEST_F(TensorServerTest, TranscodingOverTheMemoryLimitFallsBackToTheStoredLayout) {
    net::ServerOptions so;
    so.transcode_memory_limit = 59;  // "cm" needs 60 bytes
    start_server(so);
    auto c = connect();
    ASSERT_TRUE(c);
    auto got = run_on(client_io_, c->fetch("cm", transcoding_to(0x01)));
    ASSERT_TRUE(got.ok());
    EXPECT_EQ((*got)[0].descriptor.layout_tag(), 0x02);
}

TEST_F(TensorServerTest, ErrorsNameTheCauseAndKeepTheConnection) {
    start_server();
    auto c = connect();
    ASSERT_TRUE(c);
    auto missing = run_on(client_io_, c->fetch("nope"));
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
    EXPECT_NE(missing.error().message().find("UNKNOWN_TENSOR"), std::string::npos) << missing.error().message();
    net::FetchOptions gpu;
    gpu.device = 0x01;
    auto cuda = run_on(client_io_, c->fetch("w", gpu));
    ASSERT_FALSE(cuda.ok());
    EXPECT_EQ(cuda.error().code(), ErrorCode::kUnsupported);
    EXPECT_NE(cuda.error().message().find("DEVICE_UNAVAILABLE"), std::string::npos);
    net::FetchOptions tiny;
    tiny.max_tensor_bytes = 100;
    auto big = run_on(client_io_, c->fetch("w", tiny));
    ASSERT_FALSE(big.ok());
    EXPECT_EQ(big.error().code(), ErrorCode::kInvalidArgument);
    // The connection still serves.
    auto w = run_on(client_io_, c->fetch("w"));
    ASSERT_TRUE(w.ok()) << w.error().to_string();
    auto rtt = run_on(client_io_, c->ping());
    EXPECT_TRUE(rtt.ok());
}

TEST_F(TensorServerTest, ListsInWriteOrderWithCompositeStructure) {
    start_server();
    auto c = connect();
    ASSERT_TRUE(c);
    auto listed = run_on(client_io_, c->list());
    ASSERT_TRUE(listed.ok()) << listed.error().to_string();
    std::vector<std::string> keys;
    for (const auto& t : *listed) {
        keys.push_back(t.key);
        EXPECT_EQ(t.descriptor, **file_->descriptor(t.key));
    }
    EXPECT_EQ(keys, (std::vector<std::string>{"w", "big", "empty", "cm", "csr", "comp", "comp.0", "comp.1"}));
    const net::RemoteListing listing(std::move(*listed));
    EXPECT_EQ(listing.top_level(), (std::vector<size_t>{0, 1, 2, 3, 4, 5}));
    EXPECT_EQ(listing.subtree(5), (std::vector<size_t>{5, 6, 7}));
    EXPECT_EQ(listing.head_of(7), std::optional<size_t>(5));
    EXPECT_EQ(listing.find("csr"), std::optional<size_t>(4));
}

TEST_F(TensorServerTest, ListingSpansSeveralMessagesUnderASmallClientLimit) {
    start_server();
    net::ClientOptions o;
    o.max_message_size = 4096;
    auto c = connect(o);
    ASSERT_TRUE(c);
    auto listed = run_on(client_io_, c->list());
    ASSERT_TRUE(listed.ok()) << listed.error().to_string();
    EXPECT_EQ(listed->size(), 8U);
    auto big = run_on(client_io_, c->fetch("big"));  // frames of at most 4096 - 8 bytes
    ASSERT_TRUE(big.ok()) << big.error().to_string();
    EXPECT_EQ((*big)[0].data.size(), 3U * 1024 * 1024 + 123);
}

TEST_F(TensorServerTest, MaxClientsRefusesWithServerBusy) {
    net::ServerOptions so;
    so.max_clients = 1;
    start_server(so);
    auto first = connect();
    ASSERT_TRUE(first);
    auto second = run_on(client_io_, TensorClient::connect(client_io_.get_executor(), address_));
    ASSERT_FALSE(second.ok());
    EXPECT_NE(second.error().message().find("SERVER_BUSY"), std::string::npos) << second.error().message();
    EXPECT_EQ(server_->stats().connections_refused, 1U);
}

TEST_F(TensorServerTest, DuplicateNamesAcrossFilesAreRefused) {
    const std::shared_ptr<const FileReader> files[] = {file_, file_};
    auto s = TensorServer::create(server_io_.get_executor(), files);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code(), ErrorCode::kDuplicateName);
}

TEST_F(TensorServerTest, ServesOnAUnixSocket) {
    const std::shared_ptr<const FileReader> files[] = {file_};
    auto s = TensorServer::create(server_io_.get_executor(), files);
    ASSERT_TRUE(s.ok());
    server_ = *s;
    const std::string sock = (dir_ / "s.sock").string();
    auto bound = server_->listen("unix:" + sock);
    ASSERT_TRUE(bound.ok()) << bound.error().to_string();
    EXPECT_EQ(*bound, "hurray+unix://" + sock);
    EXPECT_FALSE(server_->listen("unix:" + sock).ok()) << "an existing path is not taken over";
    address_ = *bound;
    threads_.emplace_back([this] { server_io_.run(); });
    auto c = connect();
    ASSERT_TRUE(c);
    auto w = run_on(client_io_, c->fetch("w"));
    ASSERT_TRUE(w.ok());
    stop_server();
    EXPECT_FALSE(fs::exists(sock)) << "the socket file goes at stop";
}

TEST_F(TensorServerTest, PutStoresEachTensorAtomicallyThenAcknowledges) {
    const fs::path up = dir_ / "up";
    fs::create_directories(up);
    net::ServerOptions so;
    so.put_directory = up.string();
    so.max_message_size = 4096;  // many frames
    start_server(so);
    auto c = connect();
    ASSERT_TRUE(c);
    for (const char* key : {"w", "csr", "../evil/x", ".hidden"}) {
        const std::string source = key[0] == '.' ? "cm" : key;
        auto t = file_->tensor(source);
        std::vector<std::span<const uint8_t>> spans;
        for (const SharedBuffer& b : t->buffers()) {
            spans.push_back(b.span());
        }
        const Status s = run_on(client_io_, c->put(key, t->descriptor(), spans));
        ASSERT_TRUE(s.ok()) << key << ": " << s.error().to_string();
    }
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(up)) {
        names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"%2E.%2Fevil%2Fx.hrry", "%2Ehidden.hrry", "csr.hrry", "w.hrry"}));
    auto stored = FileReader::open(up / "csr.hrry");
    ASSERT_TRUE(stored.ok());
    ASSERT_EQ(stored->tensor_count(), 1U);
    EXPECT_EQ(stored->entry(0).name, "csr");
    EXPECT_EQ(**stored->descriptor(0), **file_->descriptor("csr"));
    std::vector<uint8_t> got;
    const auto tensor = stored->tensor(0);  // named: buffers() views it
    for (const SharedBuffer& b : tensor->buffers()) {
        got.insert(got.end(), b.begin(), b.end());
    }
    EXPECT_EQ(got, stored_bytes("csr"));
    EXPECT_EQ(FileReader::open(up / "%2E.%2Fevil%2Fx.hrry")->entry(0).name, "../evil/x");

    // Refusals: wrong sizes never leave the client; a GPU buffer, a composite.
    auto t = file_->tensor("w");
    const std::span<const uint8_t> none[] = {std::span<const uint8_t>{}};
    EXPECT_EQ(run_on(client_io_, c->put("bad", t->descriptor(), none)).error().code(), ErrorCode::kSizeMismatch);
    TensorDescriptor gpu = t->descriptor();
    gpu.buffers[0].device_tag = DeviceTag::kCuda;
    const std::span<const uint8_t> w_span[] = {t->buffers()[0].span()};
    const Status on_gpu = run_on(client_io_, c->put("gpu", gpu, w_span));
    ASSERT_FALSE(on_gpu.ok());
    EXPECT_NE(on_gpu.error().message().find("DEVICE_UNAVAILABLE"), std::string::npos) << on_gpu.error().message();
    const Status comp = run_on(client_io_, c->put("comp", **file_->descriptor("comp"), {}));
    ASSERT_FALSE(comp.ok());
    EXPECT_NE(comp.error().message().find("PUT_REJECTED"), std::string::npos);
    EXPECT_FALSE(fs::exists(up / "gpu.hrry"));
    EXPECT_TRUE(run_on(client_io_, c->ping()).ok()) << "the connection goes on";
}

// --- Parallel shard transfers. ----------------------------------------------

TEST_F(TensorServerTest, ParallelFetchReassemblesShardsByteIdentical) {
    net::ServerOptions so;
    so.min_shard_bytes = 4096;
    start_server(so);
    auto c = connect();
    ASSERT_TRUE(c);
    // key -> shards expected: "w" (16000 bytes in 4 rows: 16000 / 4096 -> 3),
    // "big" (3 MiB in 1-byte rows -> max_shards 4), the rest too small or not
    // row-major: whole.
    const std::map<std::string, uint32_t> shards = {{"w", 3}, {"big", 4}, {"empty", 1}, {"cm", 1}, {"csr", 1}};
    for (const auto& [key, n] : shards) {
        net::FetchOptions o;
        o.parallel = true;
        o.min_alignment = 4096;
        auto got = run_on(client_io_, c->fetch(key, o));
        ASSERT_TRUE(got.ok()) << key << ": " << got.error().to_string();
        ASSERT_EQ(got->size(), 1U);
        const net::ReceivedTensor& t = (*got)[0];
        EXPECT_EQ(t.transport.total_shards, n) << key;
        EXPECT_EQ(t.descriptor, **file_->descriptor(key)) << key << ": the logical tensor, as stored";
        const std::vector<uint8_t> want = stored_bytes(key);
        ASSERT_EQ(t.data.size(), want.size()) << key;
        EXPECT_TRUE(std::equal(want.begin(), want.end(), t.data.begin())) << key;
        EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data.data()) % 4096, 0U) << key;
    }
}

TEST_F(TensorServerTest, ParallelFetchOfATranscodedTensor) {
    // Transcoded, then sharded: "cm" (3 x 5 column-major floats) as 3 row shards.
    net::ServerOptions so;
    so.min_shard_bytes = 16;
    start_server(so);
    auto c = connect();
    ASSERT_TRUE(c);
    net::FetchOptions o = transcoding_to(0x01);
    o.parallel = true;
    auto cm = run_on(client_io_, c->fetch("cm", o));
    ASSERT_TRUE(cm.ok()) << cm.error().to_string();
    EXPECT_EQ((*cm)[0].transport.total_shards, 3U);
    EXPECT_EQ((*cm)[0].descriptor.layout_tag(), 0x01);
    auto want = file_->tensor("cm")->materialize();
    ASSERT_TRUE(want.ok());
    ASSERT_EQ((*cm)[0].data.size(), want->size());
    EXPECT_TRUE(std::equal(want->begin(), want->end(), (*cm)[0].data.begin()));
    EXPECT_EQ(server_->stats().transcode_bytes, 0U) << "the budget is given back when the shards are sent";
    // A composite is never sharded; its members come as before.
    auto comp = run_on(client_io_, c->fetch("comp", o));
    ASSERT_TRUE(comp.ok()) << comp.error().to_string();
    EXPECT_EQ(comp->size(), 3U);
}

TEST_F(TensorServerTest, ParallelTransfersCanBeTurnedOff) {
    net::ServerOptions so;
    so.max_shards = 1;
    so.min_shard_bytes = 16;
    start_server(so);
    auto c = connect();
    ASSERT_TRUE(c);
    EXPECT_EQ(c->server_hello().capability_flags & kCapParallelStreams, 0U);
    net::FetchOptions o;
    o.parallel = true;
    auto got = run_on(client_io_, c->fetch("big", o));
    ASSERT_TRUE(got.ok()) << got.error().to_string();
    EXPECT_EQ((*got)[0].transport.total_shards, 1U);
    so.max_shards = 0;
    const std::shared_ptr<const FileReader> files[] = {file_};
    auto bad = TensorServer::create(server_io_.get_executor(), files, so);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
}

// --- Raw sockets: what a well-behaved client never sends. -------------------

class RawClient {
public:
    RawClient(asio::io_context& io, const std::string& address) : socket_(io) {
        auto a = net::parse_transport_address(address);
        socket_.connect(asio::ip::tcp::endpoint(asio::ip::make_address(a->host), a->port));
    }

    void send(const std::vector<uint8_t>& bytes) { asio::write(socket_, asio::buffer(bytes)); }

    void hello() {
        Hello h;
        h.max_message_size = 1U << 20;
        send(*encode_hello(MessageType::kClientHello, 1, h));
        auto m = receive();
        ASSERT_TRUE(m.has_value());
        ASSERT_EQ(m->first.type, static_cast<uint32_t>(MessageType::kServerHello));
    }

    /// The next message, or nullopt at the end of the connection.
    std::optional<std::pair<MessageHeader, std::vector<uint8_t>>> receive() {
        std::array<uint8_t, kMessageHeaderSize> head{};
        std::error_code ec;
        asio::read(socket_, asio::buffer(head), ec);
        if (ec) {
            return std::nullopt;
        }
        auto h = decode_message_header(head);
        std::vector<uint8_t> payload(h->payload_length);
        asio::read(socket_, asio::buffer(payload), ec);
        if (ec) {
            return std::nullopt;
        }
        return std::make_pair(*h, std::move(payload));
    }

    /// The next ERROR's code (and checks its stream), or 0 when something else came.
    uint32_t error_code(uint32_t stream_id) {
        auto m = receive();
        if (!m || m->first.type != static_cast<uint32_t>(MessageType::kError)) {
            return 0;
        }
        EXPECT_EQ(m->first.stream_id, stream_id);
        auto e = decode_error(m->second);
        return e.ok() ? e->code : 0;
    }

    bool at_end() { return !receive().has_value(); }

    asio::ip::tcp::socket socket_;
};

std::vector<uint8_t> request(uint32_t sid, std::string key) {
    TensorRequest r;
    r.key = std::move(key);
    return *encode_tensor_request(sid, r);
}

/// A TENSOR_REQUEST for `key` on stream 5 with PARALLEL_OK.
std::vector<uint8_t> parallel_request_message(std::string key) {
    TensorRequest r;
    r.key = std::move(key);
    r.flags = kRequestParallelOk;
    return *encode_tensor_request(5, r);
}

constexpr auto code = [](TransportErrorCode c) { return static_cast<uint32_t>(c); };

TEST_F(TensorServerTest, RawFirstMessageMustBeHello) {
    start_server();
    RawClient raw(client_io_, address_);
    raw.send(request(3, "w"));
    EXPECT_EQ(raw.error_code(3), code(TransportErrorCode::kInvalidMessage));
    EXPECT_TRUE(raw.at_end());
}

TEST_F(TensorServerTest, RawVersionZeroIsAMismatch) {
    start_server();
    RawClient raw(client_io_, address_);
    std::vector<uint8_t> hello = *encode_hello(MessageType::kClientHello, 1, Hello{});
    store_le<uint32_t>(hello.data() + kMessageHeaderSize, 0);
    raw.send(hello);
    EXPECT_EQ(raw.error_code(1), code(TransportErrorCode::kProtocolVersionMismatch));
    EXPECT_TRUE(raw.at_end());
}

TEST_F(TensorServerTest, RawOversizedMessageIsRefusedAndClosed) {
    start_server();
    RawClient raw(client_io_, address_);
    raw.hello();
    const auto head = encode_message_header(
        MessageHeader{.type = 0x03, .stream_id = 9, .payload_length = net::ServerOptions{}.max_message_size + 1});
    raw.send(std::vector<uint8_t>(head.begin(), head.end()));
    EXPECT_EQ(raw.error_code(9), code(TransportErrorCode::kMessageTooLarge));
    EXPECT_TRUE(raw.at_end());
}

TEST_F(TensorServerTest, RawUnknownTypeMalformedRequestAndPutCloseOnlyTheirStream) {
    start_server();
    RawClient raw(client_io_, address_);
    raw.hello();
    raw.send(*encode_message(static_cast<MessageType>(0x77), 4, std::vector<uint8_t>{1, 2, 3}));
    EXPECT_EQ(raw.error_code(4), code(TransportErrorCode::kInvalidMessage));
    std::vector<uint8_t> bad = request(5, "w");
    bad.resize(bad.size() - 3);
    store_le<uint32_t>(bad.data() + 8, static_cast<uint32_t>(bad.size() - kMessageHeaderSize));
    raw.send(bad);
    EXPECT_EQ(raw.error_code(5), code(TransportErrorCode::kInvalidMessage));
    // A PUT is refused; its data frames that follow are dropped quietly.
    const auto desc = *encode(*make_dense(ElementType::kUInt8, {4}));
    raw.send(*encode_tensor_put(6, TensorPut{.key = "x", .descriptor = desc, .total_data_bytes = 4}));
    const auto frame = encode_tensor_data_header(6, 0, 4);
    std::vector<uint8_t> data(frame->begin(), frame->end());
    data.insert(data.end(), {1, 2, 3, 4});
    raw.send(data);
    raw.send(*encode_message(MessageType::kTensorDataEnd, 6));
    EXPECT_EQ(raw.error_code(6), code(TransportErrorCode::kPutRejected));
    // Requests on stream 0 are a connection error.
    raw.send(*encode_message(MessageType::kPing, 7, std::vector<uint8_t>{42}));
    auto pong = raw.receive();
    ASSERT_TRUE(pong.has_value());
    EXPECT_EQ(pong->first.type, static_cast<uint32_t>(MessageType::kPong));
    EXPECT_EQ(pong->first.stream_id, 7U);
    EXPECT_EQ(pong->second, std::vector<uint8_t>{42});
    // What only a server sends, and the RDMA handshake this server does not offer.
    raw.send(*encode_hello(MessageType::kServerHello, 8, Hello{}));
    EXPECT_EQ(raw.error_code(8), code(TransportErrorCode::kInvalidMessage));
    raw.send(*encode_message(MessageType::kRdmaRegister, 10, std::vector<uint8_t>(24, 0)));
    EXPECT_EQ(raw.error_code(10), code(TransportErrorCode::kInvalidMessage));
    raw.send(*encode_hello(MessageType::kClientHello, 12, Hello{}));
    EXPECT_EQ(raw.error_code(12), code(TransportErrorCode::kInvalidMessage)) << "a second CLIENT_HELLO";
    raw.send(request(0, "w"));
    EXPECT_EQ(raw.error_code(0), code(TransportErrorCode::kInvalidMessage));
    EXPECT_TRUE(raw.at_end());
}

TEST_F(TensorServerTest, RawPutWithFramesOutOfOrderOrShortLeavesNoFile) {
    const fs::path up = dir_ / "up";
    fs::create_directories(up);
    net::ServerOptions so;
    so.put_directory = up.string();
    start_server(so);
    RawClient raw(client_io_, address_);
    raw.hello();
    const auto desc = *encode(*make_dense(ElementType::kUInt8, {8}));
    auto frame = [](uint32_t sid, uint64_t offset, std::vector<uint8_t> bytes) {
        const auto head = encode_tensor_data_header(sid, offset, bytes.size());
        std::vector<uint8_t> m(head->begin(), head->end());
        for (const uint8_t b : bytes) {
            m.push_back(b);  // not insert(): GCC 12 -O3 reports a false -Warray-bounds there
        }
        return m;
    };
    // A gap: the frame at 4 comes first.
    raw.send(*encode_tensor_put(3, TensorPut{.key = "gap", .descriptor = desc, .total_data_bytes = 8}));
    raw.send(frame(3, 4, {1, 2, 3, 4}));
    EXPECT_EQ(raw.error_code(3), code(TransportErrorCode::kInvalidMessage));
    // Short: TENSOR_DATA_END after 4 of 8 bytes.
    raw.send(*encode_tensor_put(5, TensorPut{.key = "short", .descriptor = desc, .total_data_bytes = 8}));
    raw.send(frame(5, 0, {1, 2, 3, 4}));
    raw.send(*encode_message(MessageType::kTensorDataEnd, 5));
    EXPECT_EQ(raw.error_code(5), code(TransportErrorCode::kInvalidMessage));
    // total_data_bytes that disagrees with the descriptor.
    raw.send(*encode_tensor_put(7, TensorPut{.key = "total", .descriptor = desc, .total_data_bytes = 9}));
    EXPECT_EQ(raw.error_code(7), code(TransportErrorCode::kInvalidMessage));
    // And a good one on the same connection.
    raw.send(*encode_tensor_put(9, TensorPut{.key = "good", .descriptor = desc, .total_data_bytes = 8}));
    raw.send(frame(9, 0, {1, 2, 3, 4}));
    raw.send(frame(9, 4, {5, 6, 7, 8}));
    raw.send(*encode_message(MessageType::kTensorDataEnd, 9));
    auto ack = raw.receive();
    ASSERT_TRUE(ack.has_value());
    EXPECT_EQ(ack->first.type, static_cast<uint32_t>(MessageType::kTensorPutAck));
    EXPECT_EQ(ack->first.stream_id, 9U);
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(up)) {
        names.push_back(e.path().filename().string());
    }
    EXPECT_EQ(names, std::vector<std::string>{"good.hrry"}) << "nothing of the failed uploads, not even a temporary";
}

TEST_F(TensorServerTest, RawStreamsAreMultiplexedFrameByFrame) {
    start_server();
    RawClient raw(client_io_, address_);
    raw.hello();
    std::vector<uint8_t> both = request(11, "big");
    const std::vector<uint8_t> second = request(13, "big");
    both.insert(both.end(), second.begin(), second.end());
    raw.send(both);
    std::map<uint32_t, std::vector<uint8_t>> data;
    std::map<uint32_t, bool> ended;
    std::vector<uint32_t> order;
    while (ended.size() < 2) {
        auto m = raw.receive();
        ASSERT_TRUE(m.has_value());
        const uint32_t sid = m->first.stream_id;
        if (m->first.type == static_cast<uint32_t>(MessageType::kTensorData)) {
            auto f = decode_tensor_data(m->second);
            ASSERT_TRUE(f.ok());
            ASSERT_EQ(f->offset, data[sid].size());
            data[sid].insert(data[sid].end(), f->data.begin(), f->data.end());
            order.push_back(sid);
        } else if (m->first.type == static_cast<uint32_t>(MessageType::kTensorDataEnd)) {
            ended[sid] = true;
        }
    }
    const std::vector<uint8_t> want = stored_bytes("big");
    EXPECT_EQ(data[11], want);
    EXPECT_EQ(data[13], want);
    size_t switches = 0;
    for (size_t i = 1; i < order.size(); ++i) {
        switches += order[i] != order[i - 1] ? 1 : 0;
    }
    EXPECT_GT(switches, 10U) << "frames of the two streams take turns";
}

TEST_F(TensorServerTest, RawIdleAndSlowClientsTimeOut) {
    net::ServerOptions so;
    so.idle_timeout = std::chrono::milliseconds(200);
    so.message_timeout = std::chrono::milliseconds(200);
    start_server(so);
    RawClient idle(client_io_, address_);
    idle.hello();
    EXPECT_EQ(idle.error_code(0), code(TransportErrorCode::kTimeout));
    EXPECT_TRUE(idle.at_end());
    RawClient slow(client_io_, address_);
    slow.hello();
    const auto head = encode_message_header(MessageHeader{.type = 0x0A, .stream_id = 3, .payload_length = 100});
    slow.send(std::vector<uint8_t>(head.begin(), head.end()));
    EXPECT_EQ(slow.error_code(0), code(TransportErrorCode::kTimeout));
    EXPECT_TRUE(slow.at_end());
}

TEST_F(TensorServerTest, RawParallelShardsComeBackToBackOnServerStreams) {
    net::ServerOptions so;
    so.min_shard_bytes = 4000;
    start_server(so);
    RawClient raw(client_io_, address_);
    raw.hello();
    raw.send(parallel_request_message("w"));
    // Four descriptors first, back to back: shard 0 on the request's stream,
    // the others on distinct streams with bit 31 set.
    std::map<uint32_t, uint32_t> shard_of;  // stream -> shard index
    std::vector<uint8_t> whole(16000);
    std::map<uint32_t, uint64_t> placed;    // stream -> byte where its shard starts
    for (uint32_t k = 0; k < 4; ++k) {
        auto m = raw.receive();
        ASSERT_TRUE(m.has_value());
        ASSERT_EQ(m->first.type, static_cast<uint32_t>(MessageType::kTensorDescriptor)) << k;
        auto td = decode_tensor_descriptor(m->second);
        ASSERT_TRUE(td.ok());
        EXPECT_EQ(td->transport.shard_index, k);
        EXPECT_EQ(td->transport.total_shards, 4U);
        EXPECT_EQ(td->transport.total_data_bytes, 4000U);
        if (k == 0) {
            EXPECT_EQ(m->first.stream_id, 5U);
        } else {
            EXPECT_NE(m->first.stream_id & 0x80000000U, 0U);
        }
        auto d = decode(td->descriptor);
        ASSERT_TRUE(d.ok());
        EXPECT_EQ(d->shape, (Shape{1, 1000}));
        ASSERT_TRUE(d->shard.has_value());
        EXPECT_EQ(d->shard->parent_shape, (std::vector<uint64_t>{4, 1000}));
        EXPECT_EQ(d->shard->shard_offset, (std::vector<uint64_t>{k, 0}));
        EXPECT_TRUE(shard_of.emplace(m->first.stream_id, k).second) << "one stream per shard";
        placed[m->first.stream_id] = k * 4000ULL;
    }
    std::map<uint32_t, uint64_t> received;
    size_t ended = 0;
    while (ended < 4) {
        auto m = raw.receive();
        ASSERT_TRUE(m.has_value());
        const uint32_t sid = m->first.stream_id;
        ASSERT_TRUE(shard_of.contains(sid));
        if (m->first.type == static_cast<uint32_t>(MessageType::kTensorDataEnd)) {
            EXPECT_EQ(received[sid], 4000U);
            ++ended;
            continue;
        }
        ASSERT_EQ(m->first.type, static_cast<uint32_t>(MessageType::kTensorData));
        auto f = decode_tensor_data(m->second);
        ASSERT_TRUE(f.ok());
        ASSERT_EQ(f->offset, received[sid]);
        ASSERT_LE(f->offset + f->data.size(), 4000U);
        std::copy(f->data.begin(), f->data.end(), whole.begin() + static_cast<ptrdiff_t>(placed[sid] + f->offset));
        received[sid] += f->data.size();
    }
    EXPECT_EQ(whole, stored_bytes("w"));
    // The connection goes on; the shard streams are free again.
    raw.send(request(7, "w"));
    auto m = raw.receive();
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->first.type, static_cast<uint32_t>(MessageType::kTensorDescriptor));
    EXPECT_EQ(decode_tensor_descriptor(m->second)->transport.total_shards, 1U) << "no PARALLEL_OK: whole";
}

TEST_F(TensorServerTest, RawErrorOnAShardStreamEndsTheWholeTransfer) {
    net::ServerOptions so;
    so.min_shard_bytes = 4096;
    start_server(so);
    RawClient raw(client_io_, address_);
    raw.hello();
    raw.send(parallel_request_message("big"));
    std::vector<uint32_t> streams;
    for (int k = 0; k < 4; ++k) {
        auto m = raw.receive();
        ASSERT_TRUE(m.has_value());
        ASSERT_EQ(m->first.type, static_cast<uint32_t>(MessageType::kTensorDescriptor));
        streams.push_back(m->first.stream_id);
    }
    raw.send(encode_error(streams[2], code(TransportErrorCode::kShardMismatch), "give up", 1U << 20));
    raw.send(*encode_message(MessageType::kPing, 9, std::vector<uint8_t>{1, 2}));
    // Whatever was already on its way may arrive; then the PONG, and no more data.
    for (;;) {
        auto m = raw.receive();
        ASSERT_TRUE(m.has_value());
        if (m->first.type == static_cast<uint32_t>(MessageType::kPong)) {
            break;
        }
    }
    raw.send(*encode_message(MessageType::kPing, 9, std::vector<uint8_t>{3}));
    auto m = raw.receive();
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->first.type, static_cast<uint32_t>(MessageType::kPong)) << "the transfer has stopped";
}

/// Serves a file of quantized tensors instead of the fixture's: "q" int4
/// per-block [8, 64], "pc" int8 per-channel [6, 5], "h" float16 [3, 4],
/// "priv" int8 [4] under a private scheme.
class DequantizingServerTest : public TensorServerTest {
protected:
    void SetUp() override {
        TensorServerTest::SetUp();
        const fs::path path = dir_ / "q.hrry";
        auto w = FileWriter::create_file(path);
        ASSERT_TRUE(w.ok());
        std::mt19937 rng(5);
        std::uniform_real_distribution<float> dist(-3.0F, 3.0F);
        auto values = [&](size_t n) {
            std::vector<float> v(n);
            for (float& x : v) {
                x = dist(rng);
            }
            return v;
        };
        auto q = quantize_per_block(values(8 * 64), Shape{8, 64}, ElementType::kInt4, 1, 32, ElementType::kFloat16, false);
        auto pc = quantize_per_channel(values(30), Shape{6, 5}, ElementType::kInt8, 0, true);
        ASSERT_TRUE(q.ok() && pc.ok());
        ASSERT_TRUE(w->add_tensor("q", q->descriptor, q->spans()).ok());
        ASSERT_TRUE(w->add_tensor("pc", pc->descriptor, pc->spans()).ok());
        const std::vector<uint8_t> h = random_bytes(24, 9);
        const std::span<const uint8_t> hs[] = {h};
        ASSERT_TRUE(w->add_tensor("h", *make_dense(ElementType::kFloat16, {3, 4}), hs).ok());
        // A private scheme (0xF0), which core carries but does not interpret.
        TensorDescriptor priv = *make_dense(ElementType::kInt8, {4});
        priv.quantization = QuantizationDescriptor{.scheme = OpaqueQuantization{.scheme_tag = 0xF0, .payload = {1, 2}}};
        const std::vector<uint8_t> pb = {1, 2, 3, 4};
        const std::span<const uint8_t> ps[] = {pb};
        auto added = w->add_tensor("priv", priv, ps);
        ASSERT_TRUE(added.ok()) << added.error().to_string();
        ASSERT_TRUE(w->finish().ok());
        FileReadOptions permissive;  // "priv" is served only by a permissive reader
        permissive.strict = false;
        auto f = FileReader::open(path, permissive);
        ASSERT_TRUE(f.ok()) << f.error().to_string();
        file_ = std::make_shared<const FileReader>(std::move(*f));
    }

    /// The stored tensor's real values, as bytes.
    std::vector<uint8_t> real_values(std::string_view key) const {
        auto view = file_->tensor(key)->view();
        auto v = dequantize(*view);
        EXPECT_TRUE(v.ok());
        const auto bytes = std::as_bytes(std::span<const float>(*v));
        std::vector<uint8_t> out(bytes.size());
        std::memcpy(out.data(), bytes.data(), bytes.size());
        return out;
    }
};

TEST_F(DequantizingServerTest, AnswersQuantizedTensorsWithTheirValues) {
    net::ServerOptions so;
    so.min_shard_bytes = 256;
    start_server(so);
    net::ClientOptions co;
    co.decode.strict = false;  // "priv" comes with its private scheme
    auto c = connect(co);
    ASSERT_TRUE(c);
    net::FetchOptions o;
    o.dequantize = true;
    for (const char* key : {"q", "pc"}) {
        SCOPED_TRACE(key);
        auto got = run_on(client_io_, c->fetch(key, o));
        ASSERT_TRUE(got.ok()) << got.error().to_string();
        const net::ReceivedTensor& t = (*got)[0];
        EXPECT_EQ(t.descriptor.element_type, ElementType::kFloat32);
        EXPECT_EQ(t.descriptor.layout_tag(), 0x01);
        EXPECT_FALSE(t.descriptor.quantization.has_value());
        EXPECT_EQ(t.descriptor.shape, (**file_->descriptor(key)).shape);
        const std::vector<uint8_t> want = real_values(key);
        ASSERT_EQ(t.data.size(), want.size());
        EXPECT_TRUE(std::equal(want.begin(), want.end(), t.data.begin()));
    }
    EXPECT_EQ(server_->stats().transcode_bytes_peak, 8U * 64 * 4) << "the float32 values of q, held once";
    // An unquantized tensor comes as stored; so does a quantized one not asked for.
    auto h = run_on(client_io_, c->fetch("h", o));
    ASSERT_TRUE(h.ok());
    EXPECT_EQ((*h)[0].descriptor.element_type, ElementType::kFloat16);
    auto q = run_on(client_io_, c->fetch("q"));
    ASSERT_TRUE(q.ok());
    EXPECT_EQ((*q)[0].descriptor, **file_->descriptor("q"));
    // A private scheme is not dequantized: it comes as stored.
    auto priv = run_on(client_io_, c->fetch("priv", o));
    ASSERT_TRUE(priv.ok()) << priv.error().to_string();
    EXPECT_EQ((*priv)[0].descriptor, **file_->descriptor("priv"));
    // Dequantized answers come as parallel shards too (2048 bytes, shards of >= 256).
    o.parallel = true;
    auto par = run_on(client_io_, c->fetch("q", o));
    ASSERT_TRUE(par.ok()) << par.error().to_string();
    EXPECT_EQ((*par)[0].descriptor.element_type, ElementType::kFloat32);
    EXPECT_EQ((*par)[0].transport.total_shards, 4U);
    const std::vector<uint8_t> want = real_values("q");
    ASSERT_EQ((*par)[0].data.size(), want.size());
    EXPECT_TRUE(std::equal(want.begin(), want.end(), (*par)[0].data.begin()));
}

TEST_F(DequantizingServerTest, OverTheLimitOrWithoutTranscodingTheStoredTensorComes) {
    net::ServerOptions so;
    so.transcode_memory_limit = 8 * 64 * 4 - 1;
    start_server(so);
    auto c = connect();
    ASSERT_TRUE(c);
    net::FetchOptions o;
    o.dequantize = true;
    auto q = run_on(client_io_, c->fetch("q", o));
    ASSERT_TRUE(q.ok());
    EXPECT_EQ((*q)[0].descriptor, **file_->descriptor("q"));
    // The entry without ALLOW_TRANSCODE, and another implementation's private
    // entry (same tag, other metadata), are passed over: raw requests.
    RawClient raw(client_io_, address_);
    raw.hello();
    for (const bool allow : {false, true}) {
        TensorRequest r;
        r.key = "pc";
        r.flags = allow ? kRequestAllowTranscode : 0U;
        r.preferred_layouts = {allow ? LayoutEntry{.tag = 0xF0, .ext_metadata = {'x', 'y'}} : net::dequantize_layout_entry(),
                               LayoutEntry{.tag = 0x02, .ext_metadata = {}}};
        raw.send(*encode_tensor_request(7, r));
        auto m = raw.receive();
        ASSERT_TRUE(m.has_value());
        ASSERT_EQ(m->first.type, static_cast<uint32_t>(MessageType::kTensorDescriptor));
        auto d = decode(decode_tensor_descriptor(m->second)->descriptor);
        ASSERT_TRUE(d.ok());
        EXPECT_TRUE(d->quantization.has_value()) << "allow " << allow;
        EXPECT_EQ(d->layout_tag(), 0x01) << "quantized tensors are not transcoded";
        while (auto next = raw.receive()) {
            if (next->first.type == static_cast<uint32_t>(MessageType::kTensorDataEnd)) {
                break;
            }
        }
    }
}

TEST_F(TensorServerTest, GracefulStopFinishesTransfersInFlight) {
    start_server();
    RawClient raw(client_io_, address_);
    raw.hello();
    raw.send(request(21, "big"));
    auto first = raw.receive();
    ASSERT_TRUE(first.has_value());
    ASSERT_EQ(first->first.type, static_cast<uint32_t>(MessageType::kTensorDescriptor));
    server_->stop();
    uint64_t bytes = 0;
    bool ended = false;
    while (auto m = raw.receive()) {
        if (m->first.type == static_cast<uint32_t>(MessageType::kTensorData)) {
            bytes += m->second.size() - kDataFrameHeaderSize;
        } else if (m->first.type == static_cast<uint32_t>(MessageType::kTensorDataEnd)) {
            ended = true;
        }
    }
    EXPECT_TRUE(ended);
    EXPECT_EQ(bytes, 3U * 1024 * 1024 + 123);
    for (auto& t : threads_) {
        t.join();  // run() returns: nothing is left
    }
    threads_.clear();
}

// --- Addresses. --------------------------------------------------------------

TEST(TransportAddress, ParsesEveryForm) {
    auto a = net::parse_transport_address("hurray://example.org:81");
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a->host, "example.org");
    EXPECT_EQ(a->port, 81);
    EXPECT_EQ(net::parse_transport_address("10.0.0.1")->port, net::kDefaultServerPort);
    EXPECT_EQ(net::parse_transport_address(":0")->host, "127.0.0.1");
    EXPECT_EQ(net::parse_transport_address("[::1]:9")->host, "::1");
    EXPECT_EQ(net::parse_transport_address("[::1]:9")->to_string(), "hurray://[::1]:9");
    auto u = net::parse_transport_address("unix:/tmp/x.sock");
    ASSERT_TRUE(u.ok());
    EXPECT_EQ(u->kind, net::TransportAddress::Kind::kUnix);
    EXPECT_EQ(u->to_string(), "hurray+unix:///tmp/x.sock");
    EXPECT_EQ(net::parse_transport_address(u->to_string())->path, "/tmp/x.sock");
    for (const char* bad : {"", "host:", "host:65536", "host:x", "::1:80", "http://x", "unix:", "[::1", "[::1]x",
                            "hurray://"}) {
        auto r = net::parse_transport_address(bad);
        EXPECT_FALSE(r.ok()) << bad;
        if (!r.ok()) {
            EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
        }
    }
    EXPECT_TRUE(net::is_server_url("hurray://h"));
    EXPECT_TRUE(net::is_server_url("hurray+unix:///s"));
    EXPECT_FALSE(net::is_server_url("model.hrry"));
}

}  // namespace
