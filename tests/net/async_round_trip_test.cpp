// SPDX-License-Identifier: Apache-2.0
// hurray::net round trips: every pairing of blocking and asynchronous ends
// (async writer -> blocking reader, blocking writer -> async reader, async
// <-> async) over a socketpair, a pipe, TCP loopback and a Unix-domain
// socket, with generated descriptors of every element type, layout and
// scheme, composites of every rule, empty tensors, zero tensors and many
// tensors back to back; and truncation at many cut points.
#include <gtest/gtest.h>

#include <thread>

#include "net_test_support.hpp"

namespace hurray {
namespace {

using nettest::Channel;
using streamtest::Item;
using streamtest::Known;

enum class End { kBlocking, kAsync };

struct Outcome {
    std::optional<Status> write;
    std::optional<Result<std::vector<Item>>> read;
};

/// Writes `items` on one end of a fresh channel and reads them on the other,
/// each end blocking (its own thread) or async (one io_context, this thread).
Outcome transfer(Channel c, End we, End re, const std::vector<Item>& items, const Known& known, size_t piece,
                 int mode) {
    test::TempDir dir;
    const std::pair<int, int> fds = nettest::open_channel(c, dir.file("s"));
    const int rfd = fds.first;
    const int wfd = fds.second;
    asio::io_context ioc;
    Outcome out;
    std::thread wt;
    std::thread rt;
    StreamReadOptions ro = known.options();
    ro.chunk_size = 4096;
    nettest::with_ends(c, [&](auto ends) {
        using E = decltype(ends);
        if (we == End::kAsync) {
            asio::co_spawn(ioc,
                           nettest::store(nettest::async_write_items(
                                              nettest::adopt<typename E::Write>(ioc.get_executor(), wfd), &items, piece),
                                          &out.write),
                           nettest::no_exception());
        } else {
            wt = std::thread([&out, &items, wfd, piece] {
                FdSink sink(wfd, true);
                out.write = streamtest::write_items(sink, items, piece);
            });
        }
        if (re == End::kAsync) {
            net::AsyncReadOptions ao;
            ao.stream = ro;
            asio::co_spawn(ioc,
                           nettest::store(nettest::async_read_items(
                                              nettest::adopt<typename E::Read>(ioc.get_executor(), rfd), ao, mode),
                                          &out.read),
                           nettest::no_exception());
        } else {
            rt = std::thread([&out, ro, rfd, mode] {
                FdSource src(rfd, true);
                out.read.emplace(streamtest::read_items(src, ro, mode));
            });
        }
    });
    ioc.run();
    if (wt.joinable()) {
        wt.join();
    }
    if (rt.joinable()) {
        rt.join();
    }
    return out;
}

const char* end_name(End e) { return e == End::kAsync ? "async" : "blocking"; }

void round_trip(Channel c, End we, End re, const std::vector<Item>& items, const Known& known, size_t piece,
                int mode) {
    SCOPED_TRACE(std::string(nettest::channel_name(c)) + " " + end_name(we) + " -> " + end_name(re) + " piece " +
                 std::to_string(piece) + " mode " + std::to_string(mode));
    Outcome o = transfer(c, we, re, items, known, piece, mode);
    ASSERT_TRUE(o.write.has_value());
    ASSERT_TRUE(o.write->ok()) << o.write->error().to_string();
    ASSERT_TRUE(o.read.has_value());
    ASSERT_TRUE(o.read->ok()) << o.read->error().to_string();
    const std::vector<Item>& back = **o.read;
    ASSERT_EQ(back.size(), items.size());
    for (size_t i = 0; i < items.size(); ++i) {
        EXPECT_EQ(back[i], items[i]) << "tensor " << i;
    }
}

constexpr std::pair<End, End> kPairings[] = {
    {End::kAsync, End::kBlocking}, {End::kBlocking, End::kAsync}, {End::kAsync, End::kAsync}};

constexpr Channel kChannels[] = {Channel::kSocketPair, Channel::kPipe, Channel::kTcp, Channel::kUnix};

std::vector<Item> mixed_items(uint64_t seed, size_t count, Known& known) {
    auto items = streamtest::generated_items(seed, count, known, 128U << 10U);
    const auto comps = streamtest::composite_items();
    items.insert(items.begin() + static_cast<std::ptrdiff_t>(items.size() / 2), comps.begin(), comps.end());
    const auto empties = streamtest::empty_items();
    items.insert(items.end(), empties.begin(), empties.end());
    return items;
}

TEST(NetRoundTrip, EveryChannelEveryPairing) {
    uint64_t batch = 0;
    for (Channel c : kChannels) {
        for (const auto& [we, re] : kPairings) {
            Known known;
            const auto items = mixed_items(batch * 1013 + 5, 24, known);
            // Whole tensors or 4099-byte pieces; each way of reading in turns.
            round_trip(c, we, re, items, known, batch % 2 == 0 ? 0 : 4099, -1);
            ++batch;
        }
    }
}

TEST(NetRoundTrip, GeneratedDescriptorsAsyncBothEnds) {
    // More of the generator's space, async at both ends over a socketpair,
    // each way of reading on its own.
    for (int mode = 0; mode < 4; ++mode) {
        Known known;
        const auto items = mixed_items(900001 + static_cast<uint64_t>(mode) * 7777, 60, known);
        round_trip(Channel::kSocketPair, End::kAsync, End::kAsync, items, known, mode == 1 ? 333 : 0, mode);
    }
}

TEST(NetRoundTrip, ZeroTensors) {
    for (Channel c : kChannels) {
        for (const auto& [we, re] : kPairings) {
            round_trip(c, we, re, {}, {}, 0, 0);
        }
    }
}

TEST(NetRoundTrip, EmptyTensors) {
    for (const auto& [we, re] : kPairings) {
        round_trip(Channel::kSocketPair, we, re, streamtest::empty_items(), {}, 0, -1);
        round_trip(Channel::kPipe, we, re, streamtest::empty_items(), {}, 7, -1);
    }
}

TEST(NetRoundTrip, ManyTensorsBackToBack) {
    const std::vector<Item> many = streamtest::many_small_items(2000);
    for (Channel c : {Channel::kTcp, Channel::kPipe}) {
        for (const auto& [we, re] : kPairings) {
            round_trip(c, we, re, many, {}, 0, -1);
        }
    }
}

TEST(NetRoundTrip, LargeTensorInChunks) {
    // 8 MiB in 1 MiB chunks (the default chunk size) through TCP.
    Item big;
    big.desc = *make_dense(ElementType::kUInt8, {8U << 20U});
    hurray_test::Rng rng(77);
    big.buffers.push_back(rng.bytes(8U << 20U));
    round_trip(Channel::kTcp, End::kAsync, End::kAsync, {big}, {}, 0, 0);
    round_trip(Channel::kTcp, End::kAsync, End::kAsync, {big}, {}, 1U << 20U, 2);
}

TEST(NetRoundTrip, TruncationNamesTensorAndOffset) {
    // The peer writes a prefix of a valid stream and closes: the async reader
    // returns the complete tensors, then a clean end (cut on a boundary) or
    // kTruncated naming the tensor, at the offset where the input ended.
    Known known;
    auto items = streamtest::generated_items(31337, 6, known, 2048);
    const auto comps = streamtest::composite_items();
    items.insert(items.end(), comps.begin(), comps.begin() + 3);
    const std::vector<uint8_t> bytes = streamtest::stream_bytes(items);
    std::vector<uint64_t> boundaries = {0};
    {
        MemorySource src(bytes);
        StreamReader r(src, known.options());
        while (true) {
            auto t = r.next();
            ASSERT_TRUE(t.ok());
            if (*t == nullptr) {
                break;
            }
            ASSERT_TRUE(r.skip_data().ok());
            boundaries.push_back(r.decoder().offset());
        }
    }
    const size_t step = std::max<size_t>(1, bytes.size() / 97);
    for (size_t cut = 0; cut < bytes.size(); cut += (cut < 64 ? 1 : step)) {
        SCOPED_TRACE("cut at " + std::to_string(cut));
        int fds[2];
        ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
        std::thread writer([&bytes, cut, fd = fds[1]] {
            FdSink sink(fd, true);
            EXPECT_TRUE(sink.write(std::span<const uint8_t>(bytes).first(cut)).ok());
        });
        asio::io_context ioc;
        std::optional<Result<std::vector<Item>>> got;
        net::AsyncReadOptions ao;
        ao.stream = known.options();
        ao.stream.chunk_size = 100;
        asio::co_spawn(ioc,
                       nettest::store(nettest::async_read_items(
                                          nettest::adopt<asio::local::stream_protocol::socket>(ioc.get_executor(),
                                                                                                 fds[0]),
                                          ao, static_cast<int>(cut % 4)),
                                      &got),
                       nettest::no_exception());
        ioc.run();
        writer.join();
        ASSERT_TRUE(got.has_value());
        const auto complete = static_cast<size_t>(
            std::upper_bound(boundaries.begin(), boundaries.end(), cut) - boundaries.begin() - 1);
        const bool on_boundary = boundaries[complete] == cut;
        if (on_boundary && complete >= 7 && complete < 9) {
            // Inside the composite (head written, members missing): torn.
            ASSERT_FALSE(got->ok());
            EXPECT_EQ(got->error().code(), ErrorCode::kInvalidComposite) << got->error().to_string();
            continue;
        }
        if (on_boundary) {
            ASSERT_TRUE(got->ok()) << got->error().to_string();
            ASSERT_EQ((*got)->size(), complete);
            continue;
        }
        ASSERT_FALSE(got->ok());
        EXPECT_EQ(got->error().code(), ErrorCode::kTruncated) << got->error().to_string();
        EXPECT_EQ(got->error().offset(), cut);
        EXPECT_NE(got->error().message().find("stream tensor #" + std::to_string(complete)), std::string::npos)
            << got->error().to_string();
    }
}

}  // namespace
}  // namespace hurray
