// SPDX-License-Identifier: Apache-2.0
// hurray::net beyond round trips: cancellation and timeouts (cancellation
// slot, awaitable_operators || with a timer, closing the socket), an
// io_context run on 4 threads with several streams on strands, data
// validation on a thread pool (off the I/O thread), the writer's checks
// before the first byte, and reader misuse.
#include <gtest/gtest.h>

#include <asio/experimental/awaitable_operators.hpp>

#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "hurray/core/descriptor_codec.hpp"
#include "net_test_support.hpp"

namespace hurray {
namespace {

using namespace asio::experimental::awaitable_operators;  // NOLINT(google-build-using-namespace): operator||
using namespace std::chrono_literals;                      // NOLINT(google-build-using-namespace)
using Socket = asio::local::stream_protocol::socket;
using streamtest::Item;
using streamtest::Known;

Item dense_item(ElementType type, Shape shape, uint8_t fill) {
    Item it;
    it.desc = *make_dense(type, std::move(shape));
    it.buffers.emplace_back(static_cast<size_t>(it.desc.buffers[0].byte_size), fill);
    return it;
}

bool says_cancelled(const Error& e) { return e.message().find("cancelled") != std::string::npos; }

/// A connected socket pair `a` (read) / `b` (write) on `ioc`.
class SocketPairTest : public ::testing::Test {
protected:
    SocketPairTest() { asio::local::connect_pair(a, b); }

    /// Runs coroutine `body` (a lambda returning asio::awaitable<void>) on
    /// `ioc` until the context runs out of work; true when `body` completed.
    template <typename Body>
    bool run_to_end(Body body) {
        bool done = false;
        asio::co_spawn(
            ioc,
            [&]() -> asio::awaitable<void> {
                co_await body();
                done = true;
            },
            nettest::no_exception());
        ioc.run();
        return done;
    }

    /// Spawns the writing of `items` (whole tensors) to `b`, which it takes;
    /// `*wrote` gets the result. `items` must outlive `ioc.run()`.
    void spawn_write(const std::vector<Item>& items, std::optional<Status>* wrote) {
        asio::co_spawn(ioc, nettest::store(nettest::async_write_items(std::move(b), &items, 0), wrote),
                       nettest::no_exception());
    }

    asio::io_context ioc;
    Socket a{ioc};
    Socket b{ioc};
};

using NetCancel = SocketPairTest;
using NetPool = SocketPairTest;
using NetWriter = SocketPairTest;
using NetReader = SocketPairTest;

// --- Cancellation and timeouts -------------------------------------------------

TEST_F(NetCancel, IdleTimeoutOnNextCanBeRetried) {
    const Item it = dense_item(ElementType::kFloat32, {16}, 3);
    const std::vector<uint8_t> bytes = streamtest::stream_bytes({it});
    const bool done = run_to_end([&]() -> asio::awaitable<void> {
        net::AsyncStreamReader<Socket> reader(a);
        asio::steady_timer timer(co_await asio::this_coro::executor, 30ms);
        auto first = co_await (reader.next() || timer.async_wait(asio::use_awaitable));
        EXPECT_EQ(first.index(), 1U) << "the timer should win: nothing was sent";
        EXPECT_FALSE(reader.decoder().failure().has_value()) << "an idle timeout must not fail the reader";
        co_await asio::async_write(b, asio::buffer(bytes), asio::use_awaitable);
        b.shutdown(asio::socket_base::shutdown_send);
        auto t = co_await reader.next();
        EXPECT_TRUE(t.ok() && *t != nullptr && (*t)->descriptor == it.desc);
        auto end = co_await reader.next();
        EXPECT_TRUE(end.ok() && *end == nullptr);
    });
    EXPECT_TRUE(done);
}

TEST_F(NetCancel, TimeoutInsideATensorIsSticky) {
    const Item it = dense_item(ElementType::kUInt8, {4096}, 9);
    std::vector<uint8_t> bytes = streamtest::stream_bytes({it});
    bytes.resize(bytes.size() - 1000);  // the peer stalls 1000 bytes short
    const bool done = run_to_end([&]() -> asio::awaitable<void> {
        net::AsyncStreamReader<Socket> reader(a);
        co_await asio::async_write(b, asio::buffer(bytes), asio::use_awaitable);
        auto t = co_await reader.next();
        EXPECT_TRUE(t.ok() && *t != nullptr);
        asio::steady_timer timer(co_await asio::this_coro::executor, 30ms);
        auto r = co_await (reader.read_chunk() || timer.async_wait(asio::use_awaitable));
        EXPECT_EQ(r.index(), 1U);
        auto again = co_await reader.read_chunk();
        EXPECT_FALSE(again.ok());
        if (!again.ok()) {
            EXPECT_EQ(again.error().code(), ErrorCode::kIoError);
            EXPECT_TRUE(says_cancelled(again.error())) << again.error().to_string();
        }
        auto next = co_await reader.next();  // sticky
        EXPECT_FALSE(next.ok());
    });
    EXPECT_TRUE(done);
}

// --- Hostile peers ----------------------------------------------------------------

TEST_F(NetCancel, HugeClaimThenStallAllocatesNothingAndTimesOut) {
    // A descriptor claiming a 1 TiB buffer, 100 bytes of it, then silence.
    const TensorDescriptor claim = *make_dense(ElementType::kUInt8, {uint64_t{1} << 40});
    std::vector<uint8_t> bytes = *encode(claim);
    bytes.insert(bytes.end(), 100, 0x11);
    const bool done = run_to_end([&]() -> asio::awaitable<void> {
        net::AsyncStreamReader<Socket> reader(a);
        co_await asio::async_write(b, asio::buffer(bytes), asio::use_awaitable);
        auto t = co_await reader.next();
        EXPECT_TRUE(t.ok() && *t != nullptr);
        // Whole: refused before anything is allocated or read.
        auto whole = co_await reader.read_tensor();
        EXPECT_FALSE(whole.ok());
        if (!whole.ok()) {
            EXPECT_EQ(whole.error().code(), ErrorCode::kInvalidArgument) << whole.error().to_string();
        }
        // In pieces: what came, then a timer ends the wait for the rest.
        std::vector<uint8_t> buf(4096);
        auto got = co_await reader.read_data(buf);
        EXPECT_TRUE(got.ok() && *got == 100U);
        const auto t0 = std::chrono::steady_clock::now();
        asio::steady_timer timer(co_await asio::this_coro::executor, 50ms);
        auto r = co_await (reader.read_data(buf) || timer.async_wait(asio::use_awaitable));
        EXPECT_EQ(r.index(), 1U) << "the stalled read should lose to the timer";
        EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
    });
    EXPECT_TRUE(done);
}

TEST_F(NetCancel, TricklingPeerIsCutByAnOverallDeadline) {
    const Item it = dense_item(ElementType::kFloat32, {256}, 4);
    const std::vector<uint8_t> bytes = streamtest::stream_bytes({it, it});
    bool stop = false;
    // The peer sends one byte every 5 ms: the whole stream would take ~10 s.
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            asio::steady_timer pause(co_await asio::this_coro::executor);
            for (size_t i = 0; i < bytes.size() && !stop; ++i) {
                co_await asio::async_write(b, asio::buffer(&bytes[i], 1), asio::use_awaitable);
                pause.expires_after(5ms);
                co_await pause.async_wait(asio::use_awaitable);
            }
        },
        [](const std::exception_ptr&) {});  // the write may fail once the reader has gone
    const bool done = run_to_end([&]() -> asio::awaitable<void> {
        net::AsyncStreamReader<Socket> reader(a);
        auto read_all = [&]() -> asio::awaitable<int> {
            int tensors = 0;
            while (true) {
                auto t = co_await reader.next();
                if (!t.ok() || *t == nullptr) {
                    co_return tensors;
                }
                auto data = co_await reader.read_tensor();
                if (!data.ok()) {
                    co_return tensors;
                }
                ++tensors;
            }
        };
        const auto t0 = std::chrono::steady_clock::now();
        asio::steady_timer deadline(co_await asio::this_coro::executor, 200ms);
        auto r = co_await (read_all() || deadline.async_wait(asio::use_awaitable));
        const auto took = std::chrono::steady_clock::now() - t0;
        EXPECT_EQ(r.index(), 1U) << "the deadline should end the reading";
        EXPECT_GE(took, 190ms);
        EXPECT_LT(took, 5s);
        stop = true;
        a.close();
        b.close();
    });
    EXPECT_TRUE(done);
}

TEST_F(NetCancel, CancellationSlotEndsTheReadWithAnError) {
    net::AsyncStreamReader<Socket> reader(a);
    asio::cancellation_signal sig;
    std::optional<Result<const StreamTensor*>> got;
    asio::co_spawn(ioc, nettest::store(reader.next(), &got),
                   asio::bind_cancellation_slot(sig.slot(), nettest::no_exception()));
    asio::steady_timer timer(ioc, 20ms);
    timer.async_wait([&](std::error_code) { sig.emit(asio::cancellation_type::terminal); });
    ioc.run();
    ASSERT_TRUE(got.has_value());
    ASSERT_FALSE(got->ok());
    EXPECT_EQ(got->error().code(), ErrorCode::kIoError);
    EXPECT_TRUE(says_cancelled(got->error())) << got->error().to_string();
}

TEST_F(NetCancel, ClosingTheSocketEndsTheRead) {
    // Half a descriptor arrives, then the reading socket is closed under the reader.
    const std::vector<uint8_t> bytes = streamtest::stream_bytes({dense_item(ElementType::kInt8, {3}, 1)});
    asio::write(b, asio::buffer(bytes.data(), 5));
    net::AsyncStreamReader<Socket> reader(a);
    std::optional<Result<const StreamTensor*>> got;
    asio::co_spawn(ioc, nettest::store(reader.next(), &got), nettest::no_exception());
    asio::steady_timer timer(ioc, 20ms);
    timer.async_wait([&](std::error_code) { a.close(); });
    ioc.run();
    ASSERT_TRUE(got.has_value());
    ASSERT_FALSE(got->ok());
    EXPECT_EQ(got->error().code(), ErrorCode::kIoError) << got->error().to_string();
    // Sticky: bytes of the descriptor were lost with the socket.
    ioc.restart();
    std::optional<Result<const StreamTensor*>> again;
    asio::co_spawn(ioc, nettest::store(reader.next(), &again), nettest::no_exception());
    ioc.run();
    ASSERT_TRUE(again.has_value());
    EXPECT_FALSE(again->ok());
}

TEST_F(NetCancel, WriterTimeoutFailsTheWriter) {
    // Nobody reads `a`: the write blocks once the buffers fill.
    const Item big = dense_item(ElementType::kUInt8, {16U << 20U}, 5);
    const bool done = run_to_end([&]() -> asio::awaitable<void> {
        net::AsyncStreamWriter<Socket> writer(b);
        const auto spans = streamtest::spans(big);
        asio::steady_timer timer(co_await asio::this_coro::executor, 50ms);
        auto r = co_await (writer.write_tensor(big.desc, spans) || timer.async_wait(asio::use_awaitable));
        EXPECT_EQ(r.index(), 1U);
        EXPECT_TRUE(writer.encoder().failure().has_value());
        if (writer.encoder().failure()) {
            EXPECT_EQ(writer.encoder().failure()->code(), ErrorCode::kIoError);
            EXPECT_TRUE(says_cancelled(*writer.encoder().failure())) << writer.encoder().failure()->to_string();
        }
        const Status again = co_await writer.write_tensor(big.desc, spans);
        EXPECT_FALSE(again.ok());
        EXPECT_FALSE(writer.finish().ok());
    });
    EXPECT_TRUE(done);
}

// --- Multi-threaded io_context ---------------------------------------------------

TEST(NetThreads, FourThreadsSeveralStreamsOnStrands) {
    constexpr size_t kStreams = 8;
    asio::io_context ioc;
    std::vector<std::vector<Item>> items(kStreams);
    std::vector<Known> known(kStreams);
    std::vector<std::optional<Status>> wrote(kStreams);
    std::vector<std::optional<Result<std::vector<Item>>>> read(kStreams);
    for (size_t i = 0; i < kStreams; ++i) {
        items[i] = streamtest::generated_items(5000 + i * 101, 20, known[i], 64U << 10U);
        const auto comps = streamtest::composite_items();
        items[i].insert(items[i].end(), comps.begin(), comps.end());
        // Each end on its own strand: its socket's executor and its coroutine's.
        auto rs = asio::make_strand(ioc);
        auto ws = asio::make_strand(ioc);
        Socket r(rs);
        Socket w(ws);
        asio::local::connect_pair(r, w);
        net::AsyncReadOptions ao;
        ao.stream = known[i].options();
        ao.stream.chunk_size = 1000 + i * 500;
        asio::co_spawn(ws, nettest::store(nettest::async_write_items(std::move(w), &items[i], i % 2 == 0 ? 0 : 777),
                                          &wrote[i]),
                       nettest::no_exception());
        asio::co_spawn(rs, nettest::store(nettest::async_read_items(std::move(r), ao, -1), &read[i]),
                       nettest::no_exception());
    }
    std::vector<std::thread> threads;
    std::mutex m;
    std::set<std::thread::id> ran;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            ioc.run();
            const std::lock_guard<std::mutex> lock(m);
            ran.insert(std::this_thread::get_id());
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    EXPECT_EQ(ran.size(), 4U);
    for (size_t i = 0; i < kStreams; ++i) {
        SCOPED_TRACE("stream " + std::to_string(i));
        ASSERT_TRUE(wrote[i].has_value() && read[i].has_value());
        ASSERT_TRUE(wrote[i]->ok()) << wrote[i]->error().to_string();
        ASSERT_TRUE(read[i]->ok()) << read[i]->error().to_string();
        EXPECT_EQ(**read[i], items[i]);
    }
}

// --- Data validation on a thread pool ----------------------------------------------

TEST_F(NetPool, ValidationRunsOnThePoolNotTheIoThread) {
    asio::thread_pool pool(2);
    Item bad;  // float8_e8m0 0xFF is reserved: validate_data rejects it
    bad.desc = *make_dense(ElementType::kFloat8E8M0, {4});
    bad.buffers = {{0x7F, 0x80, 0xFF, 0x01}};
    const std::vector<Item> items = {dense_item(ElementType::kFloat32, {8}, 0), bad,
                                     dense_item(ElementType::kInt32, {2, 2}, 7)};
    const std::thread::id io_thread = std::this_thread::get_id();
    std::mutex m;
    std::vector<std::thread::id> check_threads;
    net::AsyncReadOptions ao;
    ao.validate_data = true;
    ao.compute = pool.get_executor();
    ao.check = [&](const StreamTensor& t, std::span<const SharedBuffer> bufs) -> Status {
        const std::lock_guard<std::mutex> lock(m);
        check_threads.push_back(std::this_thread::get_id());
        EXPECT_EQ(bufs.size(), t.descriptor.buffers.size());
        return Status::success();
    };
    std::optional<Status> wrote;
    spawn_write(items, &wrote);
    const bool done = run_to_end([&]() -> asio::awaitable<void> {
        net::AsyncStreamReader<Socket> reader(a, ao);
        for (size_t k = 0; k < items.size(); ++k) {
            auto t = co_await reader.next();
            EXPECT_TRUE(t.ok() && *t != nullptr);
            auto bufs = co_await reader.read_tensor();
            EXPECT_EQ(std::this_thread::get_id(), io_thread) << "resumed on the I/O thread";
            if (k == 1) {
                EXPECT_FALSE(bufs.ok());
                if (!bufs.ok()) {
                    EXPECT_EQ(bufs.error().code(), ErrorCode::kInvalidData) << bufs.error().to_string();
                    EXPECT_NE(bufs.error().message().find("stream tensor #1"), std::string::npos);
                }
                EXPECT_FALSE(reader.decoder().failure().has_value()) << "invalid data is not a stream error";
            } else {
                EXPECT_TRUE(bufs.ok());
                if (bufs.ok()) {
                    EXPECT_EQ(std::vector<uint8_t>(bufs->at(0).data(), bufs->at(0).data() + bufs->at(0).size()),
                              items[k].buffers[0]);
                }
            }
        }
        auto end = co_await reader.next();
        EXPECT_TRUE(end.ok() && *end == nullptr);
    });
    pool.join();
    EXPECT_TRUE(done);
    ASSERT_TRUE(wrote.has_value() && wrote->ok());
    ASSERT_EQ(check_threads.size(), 2U);  // the bad tensor fails validation before the check
    for (const auto& id : check_threads) {
        EXPECT_NE(id, io_thread);
    }
}

TEST_F(NetPool, ValidationWithoutAnExecutorIsRefused) {
    const std::vector<Item> items = {dense_item(ElementType::kFloat32, {8}, 1)};
    std::optional<Status> wrote;
    spawn_write(items, &wrote);
    const bool done = run_to_end([&]() -> asio::awaitable<void> {
        net::AsyncReadOptions ao;
        ao.validate_data = true;
        net::AsyncStreamReader<Socket> reader(a, ao);
        auto t = co_await reader.next();
        EXPECT_TRUE(t.ok() && *t != nullptr);
        auto bufs = co_await reader.read_tensor();
        EXPECT_FALSE(bufs.ok());
        if (!bufs.ok()) {
            EXPECT_EQ(bufs.error().code(), ErrorCode::kInvalidArgument);
        }
        auto c = co_await reader.read_chunk();  // nothing was read: the data is still there
        EXPECT_TRUE(c.ok() && c->bytes.size() == 32U);
    });
    EXPECT_TRUE(done);
}

// --- Writer checks before the first byte -------------------------------------------

TEST_F(NetWriter, ChecksBeforeAnyByteLeaveTheWriterUsable) {
    const Item good = dense_item(ElementType::kFloat32, {4}, 2);
    const Item h = streamtest::head({4, 4}, CompositionRule::kPartition, 2);
    const Item m0 = streamtest::member({2, 4}, {4, 4}, {0, 0});
    const Item m1 = streamtest::member({2, 4}, {4, 4}, {2, 0});
    const bool done = run_to_end([&]() -> asio::awaitable<void> {
        net::AsyncStreamWriter<Socket> w(b);
        // Wrong buffer count and size.
        Status s = co_await w.write_tensor(good.desc, {});
        EXPECT_EQ(s.ok() ? ErrorCode::kOk : s.error().code(), ErrorCode::kSizeMismatch);
        const std::vector<uint8_t> short_buf(3);
        const std::span<const uint8_t> short_spans[] = {short_buf};
        s = co_await w.write_tensor(good.desc, short_spans);
        EXPECT_EQ(s.ok() ? ErrorCode::kOk : s.error().code(), ErrorCode::kSizeMismatch);
        // An incomplete composite writes nothing.
        const auto s0 = streamtest::spans(m0);
        const StreamTensorInput one[] = {{&m0.desc, s0}};
        s = co_await w.write_composite(h.desc, one);
        EXPECT_FALSE(s.ok());
        EXPECT_EQ(w.offset(), 0U);
        // Producer sync required: an event-synced buffer is refused.
        {
            Item ev = good;
            ev.desc.buffers[0].sync_mode = SyncMode::kEvent;
            StreamWriteOptions wo;
            wo.require_producer_synced = true;
            net::AsyncStreamWriter<Socket> strict(b, wo);
            const auto sp = streamtest::spans(ev);
            s = co_await strict.write_tensor(ev.desc, sp);
            EXPECT_EQ(s.ok() ? ErrorCode::kOk : s.error().code(), ErrorCode::kInvalidBufferHandle);
            EXPECT_EQ(strict.offset(), 0U);
        }
        // A valid composite, whole.
        const auto s1 = streamtest::spans(m1);
        const StreamTensorInput two[] = {{&m0.desc, s0}, {&m1.desc, s1}};
        s = co_await w.write_composite(h.desc, two);
        EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().to_string());
        // In pieces: too long a piece is refused, the writer stays usable.
        s = co_await w.begin_tensor(good.desc);
        EXPECT_TRUE(s.ok());
        const std::vector<uint8_t> data(16, 2);
        const std::vector<uint8_t> too_long(17, 2);
        s = co_await w.write_data(too_long);
        EXPECT_EQ(s.ok() ? ErrorCode::kOk : s.error().code(), ErrorCode::kSizeMismatch);
        EXPECT_FALSE(w.finish().ok()) << "inside a tensor";
        s = co_await w.write_data(std::span<const uint8_t>(data).first(10));
        EXPECT_TRUE(s.ok());
        s = co_await w.write_data(std::span<const uint8_t>(data).subspan(10));
        EXPECT_TRUE(s.ok());
        EXPECT_TRUE(w.end_tensor().ok());
        EXPECT_TRUE(w.finish().ok());
        // end_tensor with bytes missing fails the writer for good.
        s = co_await w.begin_tensor(good.desc);
        EXPECT_TRUE(s.ok());
        EXPECT_FALSE(w.end_tensor().ok());
        const auto gs = streamtest::spans(good);
        s = co_await w.write_tensor(good.desc, gs);
        EXPECT_FALSE(s.ok());
        b.close();
    });
    ASSERT_TRUE(done);
    // What went out: the composite and the tensor in pieces, then a torn tensor
    // (its descriptor only).
    FdSource src(a.release(), true);
    StreamReader r(src);
    std::vector<Item> back;
    for (int k = 0; k < 4; ++k) {
        auto t = r.next();
        ASSERT_TRUE(t.ok()) << t.error().to_string();
        ASSERT_NE(*t, nullptr);
        Item it;
        it.desc = (*t)->descriptor;
        auto bufs = r.read_tensor();
        ASSERT_TRUE(bufs.ok()) << bufs.error().to_string();
        for (const auto& buf : *bufs) {
            it.buffers.emplace_back(buf.data(), buf.data() + buf.size());
        }
        back.push_back(it);
    }
    EXPECT_EQ(back[0], h);
    EXPECT_EQ(back[1], m0);
    EXPECT_EQ(back[2], m1);
    EXPECT_EQ(back[3], good);
    auto torn = r.next();
    ASSERT_TRUE(torn.ok() && *torn != nullptr);
    auto rest = r.skip_data();
    ASSERT_FALSE(rest.ok());
    EXPECT_EQ(rest.error().code(), ErrorCode::kTruncated);
}

// --- Reader misuse and options --------------------------------------------------------

TEST_F(NetReader, MisuseAndBounds) {
    Item two;
    two.desc = *make_dense(ElementType::kUInt8, {100});
    two.buffers = {std::vector<uint8_t>(100, 4)};
    const std::vector<Item> items = {two, dense_item(ElementType::kUInt8, {10}, 6), two};
    std::optional<Status> wrote;
    spawn_write(items, &wrote);
    const bool done = run_to_end([&]() -> asio::awaitable<void> {
        net::AsyncReadOptions ao;
        ao.stream.max_tensor_bytes = 50;
        ao.stream.chunk_size = 30;
        net::AsyncStreamReader<Socket> reader(a, ao);
        auto c0 = co_await reader.read_chunk();  // before the first tensor: empty
        EXPECT_TRUE(c0.ok() && c0->bytes.empty());
        auto t = co_await reader.next();
        EXPECT_TRUE(t.ok() && *t != nullptr);
        auto whole = co_await reader.read_tensor();  // 100 > max_tensor_bytes
        EXPECT_FALSE(whole.ok());
        std::vector<uint8_t> wrong(7);
        const Status s = co_await reader.read_into(wrong);
        EXPECT_EQ(s.ok() ? ErrorCode::kOk : s.error().code(), ErrorCode::kSizeMismatch);
        std::vector<uint8_t> empty;
        auto n = co_await reader.read_data(empty);
        EXPECT_FALSE(n.ok());
        auto c = co_await reader.read_chunk();
        EXPECT_TRUE(c.ok() && c->bytes.size() == 30U && c->offset == 0U);
        const Status skipped = co_await reader.skip_buffer();
        EXPECT_TRUE(skipped.ok());
        auto t1 = co_await reader.next();
        EXPECT_TRUE(t1.ok() && *t1 != nullptr && (*t1)->index == 1U);
        auto small = co_await reader.read_tensor();
        EXPECT_TRUE(small.ok() && small->at(0).size() == 10U);
        auto t2 = co_await reader.next();
        EXPECT_TRUE(t2.ok() && *t2 != nullptr);
        const Status sd = co_await reader.skip_data();
        EXPECT_TRUE(sd.ok());
        auto end = co_await reader.next();
        EXPECT_TRUE(end.ok() && *end == nullptr);
        EXPECT_EQ(reader.decoder().tensor_count(), 3U);
    });
    EXPECT_TRUE(done);
    ASSERT_TRUE(wrote.has_value() && wrote->ok());
}

}  // namespace
}  // namespace hurray
