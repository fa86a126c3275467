// SPDX-License-Identifier: Apache-2.0
// The streaming format over a pipe and over TCP loopback (blocking), each
// against a raw copy of the same bytes over the same kind of channel, timed
// in the same iterations.
//
//   cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DHURRAY_BUILD_BENCH=ON
//   cmake --build build/bench --target hurray_bench
//   build/bench/bench/hurray_bench --benchmark_filter='Stream'
//
// HURRAY_BENCH_STREAM_MIB sets the amount streamed (default 1024): 16
// tensors of a sixteenth each. A writer thread sends, the benchmark thread
// receives.
//
//   BM_StreamPipe  StreamWriter -> pipe (1 MiB pipe buffer) -> StreamReader
//                  reading 1 MiB chunks. Limit: write() of the same bytes in
//                  the same pieces, read() into a 1 MiB buffer.
//   BM_StreamTcp   the same over a TCP loopback connection.
// vs_raw = raw time / hurray time (1.0: no overhead over the raw copy).
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdint>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "bench_support.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/byte_source.hpp"
#include "hurray/io/stream_reader.hpp"
#include "hurray/io/stream_writer.hpp"

namespace {

using hurray_bench::now_s;

using hurray_bench::open_channel;
using hurray_bench::stream_mib;

void run(benchmark::State& state, bool tcp) {
    constexpr uint64_t kTensors = 16;
    const uint64_t each = (stream_mib() << 20U) / kTensors;
    const auto tensor = hurray_bench::byte_tensor(state, each, 31, 7);
    if (!tensor) {
        return;
    }
    const auto buffers = tensor->buffers();
    std::vector<uint8_t> raw_in(size_t{1} << 20U);
    double hurray_s = 0;
    double raw_s = 0;
    uint64_t stream_bytes = 0;
    for (auto _ : state) {
        // --- hurray: StreamWriter -> channel -> StreamReader ---------------
        auto [rfd, wfd] = open_channel(tcp);
        if (rfd < 0) {
            state.SkipWithError("channel");
            return;
        }
        const double t0 = now_s();
        std::thread writer([&, wfd = wfd] {
            hurray::FdSink sink(wfd, true);
            hurray::StreamWriter w(sink);
            for (uint64_t i = 0; i < kTensors; ++i) {
                if (!w.write_tensor(tensor->desc, buffers).ok()) {
                    return;
                }
            }
            (void)w.finish();
        });
        uint64_t got = 0;
        {
            hurray::FdSource src(rfd, true);
            hurray::StreamReader r(src);
            while (true) {
                auto t = r.next();
                if (!t.ok() || *t == nullptr) {
                    break;
                }
                while (true) {
                    auto c = r.read_chunk();
                    if (!c.ok() || c->bytes.empty()) {
                        break;
                    }
                    got += c->bytes.size();
                }
            }
            stream_bytes = r.decoder().offset();
        }
        writer.join();
        const double t1 = now_s();
        if (got != each * kTensors) {
            state.SkipWithError("short stream");
            return;
        }

        // --- raw: the same number of bytes, same pieces, same channel -------
        auto [rrfd, rwfd] = open_channel(tcp);
        const double t2 = now_s();
        std::thread raw_writer([&, rwfd = rwfd] {
            uint64_t left = stream_bytes;
            while (left > 0) {
                const size_t piece = static_cast<size_t>(std::min<uint64_t>(left, tensor->data.size()));
                size_t off = 0;
                while (off < piece) {
                    const ssize_t n = ::write(rwfd, tensor->data.data() + off, piece - off);
                    if (n <= 0) {
                        ::close(rwfd);
                        return;
                    }
                    off += static_cast<size_t>(n);
                }
                left -= piece;
            }
            ::close(rwfd);
        });
        uint64_t raw_got = 0;
        while (true) {
            const ssize_t n = ::read(rrfd, raw_in.data(), raw_in.size());
            if (n <= 0) {
                break;
            }
            raw_got += static_cast<uint64_t>(n);
        }
        ::close(rrfd);
        raw_writer.join();
        const double t3 = now_s();
        benchmark::DoNotOptimize(raw_got);
        hurray_s += t1 - t0;
        raw_s += t3 - t2;
        state.SetIterationTime(t1 - t0);
    }
    hurray_bench::report_vs_raw(state, stream_bytes, hurray_s, raw_s);
}

void BM_StreamPipe(benchmark::State& state) { run(state, false); }
void BM_StreamTcp(benchmark::State& state) { run(state, true); }

}  // namespace

BENCHMARK(BM_StreamPipe)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_StreamTcp)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
