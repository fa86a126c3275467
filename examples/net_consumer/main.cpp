// Async streaming with hurray::net: a writer coroutine sends two tensors over a Unix
// socket pair, a reader coroutine receives them chunk by chunk; exits 0 when every byte
// arrived intact.
#include <asio.hpp>

#include <cstdint>
#include <cstdio>
#include <span>
#include <vector>

#include <hurray/core/builder.hpp>
#include <hurray/net/async_stream_reader.hpp>
#include <hurray/net/async_stream_writer.hpp>

namespace {

using Socket = asio::local::stream_protocol::socket;

asio::awaitable<hurray::Status> produce(Socket& out, const hurray::TensorDescriptor& desc,
                                        std::span<const uint8_t> data) {
    hurray::net::AsyncStreamWriter<Socket> writer(out);
    const std::span<const uint8_t> buffers[] = {data};
    for (int i = 0; i < 2; ++i) {
        if (auto s = co_await writer.write_tensor(desc, buffers); !s) {
            co_return s;
        }
    }
    auto done = writer.finish();
    out.shutdown(asio::socket_base::shutdown_send);
    co_return done;
}

// readme:begin net
asio::awaitable<hurray::Result<uint64_t>> consume(Socket& in, std::span<const uint8_t> expected) {
    hurray::net::AsyncStreamReader<Socket> reader(in);
    uint64_t tensors = 0;
    for (;;) {
        auto t = co_await reader.next();
        if (!t) {
            co_return t.error();
        }
        if (*t == nullptr) {
            co_return tensors;  // clean end on a tensor boundary
        }
        for (;;) {
            auto c = co_await reader.read_chunk();  // at most 1 MiB at a time
            if (!c) {
                co_return c.error();
            }
            if (c->bytes.empty()) {
                break;
            }
            for (size_t i = 0; i < c->bytes.size(); ++i) {
                if (c->bytes[i] != expected[c->offset + i]) {
                    co_return hurray::Error(hurray::ErrorCode::kInvalidArgument, "data differs");
                }
            }
        }
        ++tensors;
    }
}
// readme:end net

}  // namespace

int main() {
    auto desc = hurray::make_dense(hurray::ElementType::kFloat32, {512, 1024});
    if (!desc) {
        std::puts(desc.error().to_string().c_str());
        return 1;
    }
    std::vector<uint8_t> data(desc->buffers[0].byte_size);
    for (size_t i = 0; i < data.size(); ++i) {
        data[i] = static_cast<uint8_t>(i * 7);
    }
    asio::io_context io;
    Socket a(io);
    Socket b(io);
    asio::local::connect_pair(a, b);
    hurray::Status sent = hurray::Status::success();
    uint64_t received = 0;
    bool ok = false;
    asio::co_spawn(io, [&]() -> asio::awaitable<void> { sent = co_await produce(a, *desc, data); },
                   asio::detached);
    asio::co_spawn(io,
                   [&]() -> asio::awaitable<void> {
                       auto r = co_await consume(b, data);
                       if (!r) {
                           std::printf("reader: %s\n", r.error().to_string().c_str());
                           co_return;
                       }
                       received = *r;
                       ok = true;
                   },
                   asio::detached);
    io.run();
    if (!sent) {
        std::printf("writer: %s\n", sent.error().to_string().c_str());
        return 1;
    }
    std::printf("hurray::net: %llu tensors of %zu bytes streamed over a socket pair\n",
                static_cast<unsigned long long>(received), data.size());
    return ok && received == 2 ? 0 : 1;
}
