// SPDX-License-Identifier: Apache-2.0
// The tensor server (hurray::net::TensorServer / TensorClient) on TCP loopback,
// against a raw socket copy of the same bytes timed in the same iterations.
//
//   build/gcc/bench/hurray_bench --benchmark_filter='Server'
//
// HURRAY_BENCH_SERVER_MIB sets the file size (default 1024): 16 uint8 tensors of a
// sixteenth each, written once to $TMPDIR and removed at exit.
//
//   BM_ServerFetch      one client fetches the 16 tensors in turn (fetch_into: each
//                       frame handed to a callback that sums it, no copy) from a
//                       server run by one thread. Raw: one thread send()s the
//                       same bytes from the file mapping in 4 MiB pieces, another
//                       recv()s them into a 4 MiB buffer and sums them.
//   BM_ServerFetch4     four clients on four connections fetch four tensors each,
//                       at once (server and clients each run by four threads).
//                       Raw: four such socket pairs at once.
//   BM_ServerFetchParallel  one client fetches the 16 tensors in turn as parallel
//                       shards (FetchOptions::parallel: 4 shards of 16 MiB on
//                       four streams of one connection, received in place into
//                       the tensor's memory by fetch), summing each tensor. Raw:
//                       recv() of each tensor into fresh memory of its size,
//                       then its sum (page faults included, as for fetch).
//   BM_ServerFetchWhole the same through fetch without parallel shards.
// vs_raw = raw time / hurray time (1.0: no overhead over the raw copy).
#include <benchmark/benchmark.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>
#include <asio/strand.hpp>
#include <asio/this_coro.hpp>

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/net/tensor_client.hpp"
#include "hurray/net/tensor_server.hpp"

namespace {

using hurray_bench::now_s;

constexpr size_t kTensors = 16;

/// "t<i>" (appended: GCC 12 -O3 reports a false -Wrestrict for "t" + std::to_string(i)).
std::string tensor_name(size_t i) {
    std::string name = "t";
    name.append(std::to_string(i));
    return name;
}

/// The benchmark file, written once.
struct ServedFile {
    std::string path;
    std::shared_ptr<const hurray::FileReader> file;
    uint64_t bytes = 0;
    ServedFile() {
        path = hurray_bench::tmp_path("server.hrry");
        const uint64_t each = (hurray_bench::env_mib("HURRAY_BENCH_SERVER_MIB", 1024) << 20U) / kTensors;
        auto w = hurray::FileWriter::create_file(path, {}, hurray::Durability::kAtomicOnly);
        if (!w) {
            return;
        }
        for (size_t i = 0; i < kTensors; ++i) {
            const auto t = hurray_bench::byte_tensor(each, static_cast<uint8_t>(2 * i + 1), static_cast<uint8_t>(i));
            if (!t || !w->add_tensor(tensor_name(i), t->desc, t->buffers())) {
                return;
            }
            bytes += each;
        }
        if (!w->finish()) {
            return;
        }
        auto f = hurray::FileReader::open(path);
        if (f) {
            file = std::make_shared<const hurray::FileReader>(std::move(*f));
        }
    }
    ~ServedFile() { std::remove(path.c_str()); }
    ServedFile(const ServedFile&) = delete;
    ServedFile& operator=(const ServedFile&) = delete;
};

const ServedFile& served() {
    static const ServedFile f;
    return f;
}

/// The data of tensor `i` in the mapping.
std::span<const uint8_t> tensor_data(size_t i) {
    auto t = served().file->tensor(i);
    return t ? t->buffers()[0].span() : std::span<const uint8_t>{};
}

/// How a benchmark client receives a tensor.
enum class Receive { kStreamed, kWhole, kParallel };

/// Raw: `tensors` copied over one TCP loopback connection, send() of 4 MiB pieces
/// from the mapping on one thread, recv() on this one into a 4 MiB buffer
/// (kStreamed), or each tensor into fresh memory of its size (otherwise).
uint64_t raw_copy(const std::vector<size_t>& tensors, Receive how) {
    const auto [rfd, wfd] = hurray_bench::open_channel(true);
    if (rfd < 0) {
        return 0;
    }
    std::thread sender([wfd = wfd, &tensors] {
        for (size_t i : tensors) {
            const auto data = tensor_data(i);
            for (size_t pos = 0; pos < data.size();) {
                const ssize_t n = ::send(wfd, data.data() + pos, std::min<size_t>(4U << 20U, data.size() - pos), 0);
                if (n <= 0) {
                    return;
                }
                pos += static_cast<size_t>(n);
            }
        }
        ::shutdown(wfd, SHUT_WR);
    });
    uint64_t got = 0;
    uint64_t sum = 0;
    if (how != Receive::kStreamed) {
        for (size_t i : tensors) {
            const size_t size = tensor_data(i).size();
            const std::unique_ptr<uint8_t[]> fresh(new uint8_t[size]);  // NOLINT(modernize-avoid-c-arrays): not zeroed
            size_t pos = 0;
            while (pos < size) {
                const ssize_t n = ::recv(rfd, fresh.get() + pos, size - pos, 0);
                if (n <= 0) {
                    break;
                }
                pos += static_cast<size_t>(n);
            }
            sum += hurray_bench::sum_words(fresh.get(), pos);
            got += pos;
        }
    }
    std::vector<uint8_t> buf(how == Receive::kStreamed ? 4U << 20U : 0U);
    for (; how == Receive::kStreamed;) {
        const ssize_t n = ::recv(rfd, buf.data(), buf.size(), 0);
        if (n <= 0) {
            break;
        }
        sum += hurray_bench::sum_words(buf.data(), static_cast<size_t>(n));
        got += static_cast<uint64_t>(n);
    }
    sender.join();
    ::close(rfd);
    ::close(wfd);
    benchmark::DoNotOptimize(sum);
    return got;
}

/// One client: fetches `tensors` in turn through fetch_into, summing each
/// frame; or through fetch (with parallel shards or not), summing the tensor.
asio::awaitable<void> fetch_some(std::string address, std::vector<size_t> tensors, std::atomic<uint64_t>* got,
                                 Receive how) {
    auto client = co_await hurray::net::TensorClient::connect(co_await asio::this_coro::executor, address);
    if (!client) {
        co_return;
    }
    uint64_t sum = 0;
    uint64_t bytes = 0;
    hurray::net::FetchHandler h;
    h.on_data = [&](std::span<const uint8_t> piece) {
        sum += hurray_bench::sum_words(piece.data(), piece.size());
        bytes += piece.size();
        return hurray::Status::success();
    };
    hurray::net::FetchOptions o;
    o.parallel = how == Receive::kParallel;
    for (size_t i : tensors) {
        if (how != Receive::kStreamed) {
            auto t = co_await (*client)->fetch(tensor_name(i), o);
            if (!t || t->size() != 1 || ((*t)[0].transport.total_shards < 2) == o.parallel) {
                co_return;
            }
            (void)h.on_data((*t)[0].data.span());
        } else if (!co_await (*client)->fetch_into(tensor_name(i), h)) {
            co_return;
        }
    }
    benchmark::DoNotOptimize(sum);
    got->fetch_add(bytes);
}

void run(benchmark::State& state, size_t clients, Receive how = Receive::kStreamed) {
    const ServedFile& f = served();
    if (!f.file) {
        state.SkipWithError("cannot write the benchmark file");
        return;
    }
    // The server: its acceptor on one io_context, its connections spread over
    // one io_context per client, each run by a thread of its own.
    asio::io_context server_io(1);
    std::vector<std::unique_ptr<asio::io_context>> connection_ios;
    hurray::net::ServerOptions options;
    for (size_t i = 0; i < clients; ++i) {
        connection_ios.push_back(std::make_unique<asio::io_context>(1));
        options.connection_executors.push_back(connection_ios.back()->get_executor());
    }
    const std::shared_ptr<const hurray::FileReader> files[] = {f.file};
    auto server = hurray::net::TensorServer::create(server_io.get_executor(), files, options);
    auto address = server ? (*server)->listen("127.0.0.1:0") : hurray::Result<std::string>(server.error());
    if (!address) {
        state.SkipWithError("server");
        return;
    }
    auto guard = asio::make_work_guard(server_io);
    std::vector<decltype(asio::make_work_guard(server_io))> connection_guards;
    std::vector<std::thread> server_threads;
    server_threads.emplace_back([&] { server_io.run(); });
    for (auto& io : connection_ios) {
        connection_guards.push_back(asio::make_work_guard(*io));
        server_threads.emplace_back([&io] { io->run(); });
    }
    std::vector<std::vector<size_t>> share(clients);
    for (size_t i = 0; i < kTensors; ++i) {
        share[i % clients].push_back(i);
    }
    double hurray_s = 0;
    double raw_s = 0;
    for (auto _ : state) {
        std::atomic<uint64_t> got{0};
        // One io_context per client, each run by a thread of its own: no
        // scheduler shared between the clients.
        std::vector<std::unique_ptr<asio::io_context>> client_ios;
        for (size_t c = 0; c < clients; ++c) {
            client_ios.push_back(std::make_unique<asio::io_context>(1));
            asio::co_spawn(*client_ios.back(), fetch_some(*address, share[c], &got, how), asio::detached);
        }
        const double t0 = now_s();
        std::vector<std::thread> client_threads;
        for (size_t c = 1; c < clients; ++c) {
            client_threads.emplace_back([&, c] { client_ios[c]->run(); });
        }
        client_ios[0]->run();
        for (auto& t : client_threads) {
            t.join();
        }
        const double t1 = now_s();
        if (got.load() != f.bytes) {
            state.SkipWithError("short fetch");
            break;
        }
        std::atomic<uint64_t> raw_got{0};
        const double t2 = now_s();
        std::vector<std::thread> raw_threads;
        for (size_t c = 0; c < clients; ++c) {
            raw_threads.emplace_back([&, c] { raw_got.fetch_add(raw_copy(share[c], how)); });
        }
        for (auto& t : raw_threads) {
            t.join();
        }
        const double t3 = now_s();
        if (raw_got.load() != f.bytes) {
            state.SkipWithError("short raw copy");
            break;
        }
        hurray_s += t1 - t0;
        raw_s += t3 - t2;
        state.SetIterationTime(t1 - t0);
    }
    (*server)->stop();
    guard.reset();
    connection_guards.clear();
    for (auto& t : server_threads) {
        t.join();
    }
    hurray_bench::report_vs_raw(state, f.bytes, hurray_s, raw_s);
}

void BM_ServerFetch(benchmark::State& state) { run(state, 1); }
void BM_ServerFetch4(benchmark::State& state) { run(state, 4); }
void BM_ServerFetchParallel(benchmark::State& state) { run(state, 1, Receive::kParallel); }
void BM_ServerFetchWhole(benchmark::State& state) { run(state, 1, Receive::kWhole); }

}  // namespace

BENCHMARK(BM_ServerFetch)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_ServerFetch4)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_ServerFetchParallel)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_ServerFetchWhole)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
