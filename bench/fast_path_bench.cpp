// SPDX-License-Identifier: Apache-2.0
// The conversion fast paths and atomic saves against floors measured in the
// same iterations (issue 15). A 1 GiB HRRYFILE of 291 tensors shaped like a
// 32-layer transformer checkpoint (HURRAY_BENCH_STREAM_MIB sets the size),
// page cache warm:
//
//   build/gcc/bench/hurray_bench --benchmark_filter='FastPath'
//
//   BM_FastPathStreamFileToPipe  file_to_stream(file, pipe fd) (what
//       `hurray convert FILE -` runs), FileReader::open included, into a pipe
//       (default size) drained by a thread in 1 MiB reads. Floors, same pipe
//       and drain: vs_cat = read() the file and write() it in 1 MiB chunks
//       (what `cat FILE |` does); vs_splice = splice(2) the file into the pipe.
//   BM_FastPathStreamPipeToFile  stream_to_file from a pipe into
//       FileWriter::create_file(kAtomicOnly) (what `hurray convert - OUT
//       --no-fsync` runs), fed by a thread writing the stream in 1 MiB
//       chunks. Floor vs_raw: read() the pipe in 1 MiB chunks, write() to a
//       new file, close.
//   BM_FastPathSaveAtomicOnly  FileWriter::create_file(kAtomicOnly) of the
//       291 tensors from memory. Floor vs_raw: open, write() each tensor, close.
//   BM_FastPathSaveDurable  the same with kDurable (fsync, rename, fsync of
//       the directory). Floor vs_raw: write() each tensor, fsync, close.
// Ratios are floor time / hurray time: 1.0 means as fast as the floor (goals:
// >= 0.95 for file -> pipe, >= 0.9 for the others).
#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/byte_source.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/stream_convert.hpp"

namespace {

using hurray_bench::now_s;

constexpr size_t kChunk = size_t{1} << 20;

/// One float32 tensor of the checkpoint: its shape and its bytes.
struct Weight {
    std::string name;
    std::vector<uint64_t> shape;
    std::vector<uint8_t> bytes;
};

/// 291 tensors of about `total` bytes: embedding and head (vocab 7.8125 x
/// hidden), 32 layers of four attention projections, three MLP projections
/// (2.6875 x hidden) and two norm vectors, and the final norm.
std::vector<Weight> checkpoint(uint64_t total) {
    constexpr uint64_t kLayers = 32;
    const auto params = [](uint64_t h) {
        const uint64_t f = h * 43 / 16;
        const uint64_t v = h * 125 / 16;
        return 2 * v * h + kLayers * (4 * h * h + 3 * h * f + 2 * h) + h;
    };
    uint64_t h = 64;
    while (params(h + 64) * 4 <= total) {
        h += 64;
    }
    const uint64_t f = h * 43 / 16;
    const uint64_t v = h * 125 / 16;
    std::vector<Weight> out;
    const auto add = [&](std::string name, std::vector<uint64_t> shape) {
        uint64_t n = 4;
        for (const uint64_t d : shape) {
            n *= d;
        }
        Weight w{std::move(name), std::move(shape), std::vector<uint8_t>(n)};
        for (size_t i = 0; i < w.bytes.size(); i += 4096) {
            w.bytes[i] = static_cast<uint8_t>(i / 4096 + out.size());
        }
        out.push_back(std::move(w));
    };
    add("model.embed_tokens.weight", {v, h});
    for (uint64_t l = 0; l < kLayers; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        for (const char* n : {"q", "k", "v", "o"}) {
            add(p + "self_attn." + n + "_proj.weight", {h, h});
        }
        add(p + "mlp.gate_proj.weight", {f, h});
        add(p + "mlp.up_proj.weight", {f, h});
        add(p + "mlp.down_proj.weight", {h, f});
        add(p + "input_layernorm.weight", {h});
        add(p + "post_attention_layernorm.weight", {h});
    }
    add("model.norm.weight", {h});
    add("lm_head.weight", {v, h});
    return out;
}

/// The checkpoint in memory, as an HRRYFILE on disk and as a stream on disk,
/// built once per process.
struct Corpus {
    std::vector<Weight> weights;
    std::vector<hurray::TensorDescriptor> descs;
    std::string file = hurray_bench::tmp_path("fast_path.hrry");
    std::string stream = hurray_bench::tmp_path("fast_path.stream");
    uint64_t data_bytes = 0;
    bool ok = false;

    Corpus() {
        weights = checkpoint(hurray_bench::stream_mib() << 20U);
        for (const Weight& w : weights) {
            auto d = hurray::make_dense(hurray::ElementType::kFloat32, w.shape);
            if (!d) {
                return;
            }
            descs.push_back(std::move(*d));
            data_bytes += w.bytes.size();
        }
        if (!save(file, hurray::Durability::kAtomicOnly).ok()) {
            return;
        }
        auto f = hurray::FileReader::open(file);
        const int fd = ::open(stream.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ok = f.ok() && fd >= 0 && hurray::file_to_stream(*f, fd).ok();
        if (fd >= 0) {
            ::close(fd);
        }
    }
    ~Corpus() {
        ::unlink(file.c_str());
        ::unlink(stream.c_str());
    }
    Corpus(const Corpus&) = delete;
    Corpus& operator=(const Corpus&) = delete;
    Corpus(Corpus&&) = delete;
    Corpus& operator=(Corpus&&) = delete;

    [[nodiscard]] hurray::Status save(const std::string& path, hurray::Durability durability) const {
        HURRAY_ASSIGN_OR_RETURN(hurray::FileWriter w, hurray::FileWriter::create_file(path, {}, durability));
        for (size_t i = 0; i < weights.size(); ++i) {
            const std::span<const uint8_t> bufs[] = {weights[i].bytes};
            HURRAY_RETURN_IF_ERROR(w.add_tensor(weights[i].name, descs[i], bufs));
        }
        return w.finish();
    }
};

const Corpus& corpus() {
    static const Corpus c;
    return c;
}

/// Writes all of [p, p + n) to fd.
bool write_fully(int fd, const uint8_t* p, size_t n) {
    while (n > 0) {
        const ssize_t k = ::write(fd, p, n);
        if (k <= 0) {
            return false;
        }
        p += k;
        n -= static_cast<size_t>(k);
    }
    return true;
}

/// Copies fd `in` to fd `out` with read()/write() in 1 MiB chunks; bytes copied.
uint64_t copy_fd(int in, int out) {
    std::vector<uint8_t> buf(kChunk);
    uint64_t total = 0;
    while (true) {
        const ssize_t n = ::read(in, buf.data(), buf.size());
        if (n <= 0 || !write_fully(out, buf.data(), static_cast<size_t>(n))) {
            return total;
        }
        total += static_cast<uint64_t>(n);
    }
}

/// Runs `send(write end)` against a thread draining a fresh pipe in 1 MiB
/// reads; returns the seconds and sets `got` to the bytes drained.
template <class Send>
double through_pipe(Send send, uint64_t& got) {
    int fds[2] = {-1, -1};
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        return -1;
    }
    const double t0 = now_s();
    std::thread drain([&got, rfd = fds[0]] {
        std::vector<uint8_t> buf(kChunk);
        got = 0;
        while (true) {
            const ssize_t n = ::read(rfd, buf.data(), buf.size());
            if (n <= 0) {
                break;
            }
            got += static_cast<uint64_t>(n);
        }
        ::close(rfd);
    });
    send(fds[1]);
    ::close(fds[1]);
    drain.join();
    return now_s() - t0;
}

/// Times a hurray run against its floor in every iteration, taking turns going
/// first (so that a slow spell of a shared machine hits both alike), and
/// reports vs_raw = floor time / hurray time.
class Turns {
public:
    /// Runs `hurray()` and `raw()` (each returns its seconds) once each.
    template <class Hurray, class Raw>
    void run(benchmark::State& state, Hurray hurray, Raw raw) {
        const bool raw_first = (iteration_++ % 2) == 1;
        const double r0 = raw_first ? raw() : 0.0;
        const double h = hurray();
        const double r = raw_first ? r0 : raw();
        hurray_s_ += h;
        raw_s_ += r;
        state.SetIterationTime(h);
    }
    /// Sets the counters for `bytes` per iteration and removes the two outputs.
    void report(benchmark::State& state, uint64_t bytes, const std::string& out, const std::string& raw) const {
        ::unlink(out.c_str());
        ::unlink(raw.c_str());
        state.SetBytesProcessed(static_cast<int64_t>(bytes * static_cast<uint64_t>(state.iterations())));
        state.counters["vs_raw"] = raw_s_ / hurray_s_;
    }

private:
    uint64_t iteration_ = 0;
    double hurray_s_ = 0;
    double raw_s_ = 0;
};

void BM_FastPathStreamFileToPipe(benchmark::State& state) {
    const Corpus& c = corpus();
    if (!c.ok) {
        state.SkipWithError("corpus");
        return;
    }
    struct stat st {};
    ::stat(c.stream.c_str(), &st);
    const auto stream_bytes = static_cast<uint64_t>(st.st_size);
    double hurray_s = 0;
    double cat_s = 0;
    double splice_s = 0;
    for (auto _ : state) {
        uint64_t got = 0;
        const double h = through_pipe(
            [&](int wfd) {
                auto f = hurray::FileReader::open(c.file);
                if (!f || !hurray::file_to_stream(*f, wfd).ok()) {
                    state.SkipWithError("file_to_stream");
                }
            },
            got);
        if (got != stream_bytes) {
            state.SkipWithError("short stream");
            return;
        }
        // The floors move the stream file's bytes (the same count).
        const double k = through_pipe(
            [&](int wfd) {
                const int in = ::open(c.stream.c_str(), O_RDONLY | O_CLOEXEC);
                (void)copy_fd(in, wfd);
                ::close(in);
            },
            got);
        const double s = through_pipe(
            [&](int wfd) {
                const int in = ::open(c.stream.c_str(), O_RDONLY | O_CLOEXEC);
                while (::splice(in, nullptr, wfd, nullptr, kChunk, SPLICE_F_MOVE) > 0) {
                }
                ::close(in);
            },
            got);
        hurray_s += h;
        cat_s += k;
        splice_s += s;
        state.SetIterationTime(h);
    }
    state.SetBytesProcessed(static_cast<int64_t>(stream_bytes * static_cast<uint64_t>(state.iterations())));
    state.counters["vs_cat"] = cat_s / hurray_s;
    state.counters["vs_splice"] = splice_s / hurray_s;
}

void BM_FastPathStreamPipeToFile(benchmark::State& state) {
    const Corpus& c = corpus();
    if (!c.ok) {
        state.SkipWithError("corpus");
        return;
    }
    const std::string out = hurray_bench::tmp_path("fast_path_out.hrry");
    const std::string raw = hurray_bench::tmp_path("fast_path_out.raw");
    Turns turns;
    // Feeds the stream file into a fresh pipe from a thread; runs `take(read end)`.
    const auto fed = [&](auto take) {
        int fds[2] = {-1, -1};
        if (::pipe2(fds, O_CLOEXEC) != 0) {
            return -1.0;
        }
        const double t0 = now_s();
        std::thread feed([&, wfd = fds[1]] {
            const int in = ::open(c.stream.c_str(), O_RDONLY | O_CLOEXEC);
            (void)copy_fd(in, wfd);
            ::close(in);
            ::close(wfd);
        });
        take(fds[0]);
        ::close(fds[0]);
        feed.join();
        return now_s() - t0;
    };
    for (auto _ : state) {
        ::unlink(out.c_str());
        ::unlink(raw.c_str());
        const auto take_hurray = [&](int rfd) {
            auto w = hurray::FileWriter::create_file(out, {}, hurray::Durability::kAtomicOnly);
            hurray::FdSource src(rfd);
            if (!w || !hurray::stream_to_file(src, *w).ok() || !w->finish().ok()) {
                state.SkipWithError("stream_to_file");
            }
        };
        const auto take_raw = [&](int rfd) {
            const int fd = ::open(raw.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            (void)copy_fd(rfd, fd);
            ::close(fd);
        };
        turns.run(state, [&] { return fed(take_hurray); }, [&] { return fed(take_raw); });
    }
    turns.report(state, c.data_bytes, out, raw);
}

void save_bench(benchmark::State& state, hurray::Durability durability) {
    const Corpus& c = corpus();
    if (!c.ok) {
        state.SkipWithError("corpus");
        return;
    }
    const std::string out = hurray_bench::tmp_path("fast_path_save.hrry");
    const std::string raw = hurray_bench::tmp_path("fast_path_save.raw");
    const bool durable = durability == hurray::Durability::kDurable;
    Turns turns;
    for (auto _ : state) {
        ::unlink(out.c_str());
        ::unlink(raw.c_str());
        const auto timed_save = [&] {
            ::sync();  // no dirty pages of the previous run left to write back
            const double t0 = now_s();
            if (!c.save(out, durability).ok()) {
                state.SkipWithError("save");
            }
            return now_s() - t0;
        };
        const auto timed_raw = [&] {
            ::sync();
            const double t0 = now_s();
            const int fd = ::open(raw.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            for (const Weight& w : c.weights) {
                (void)write_fully(fd, w.bytes.data(), w.bytes.size());
            }
            if (durable) {
                (void)::fsync(fd);
            }
            ::close(fd);
            return now_s() - t0;
        };
        // Take turns going first, so that a slow spell of a shared machine hits both alike.
        turns.run(state, timed_save, timed_raw);
    }
    turns.report(state, c.data_bytes, out, raw);
}

void BM_FastPathSaveAtomicOnly(benchmark::State& state) { save_bench(state, hurray::Durability::kAtomicOnly); }
void BM_FastPathSaveDurable(benchmark::State& state) { save_bench(state, hurray::Durability::kDurable); }

}  // namespace

BENCHMARK(BM_FastPathStreamFileToPipe)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(3.0);
BENCHMARK(BM_FastPathStreamPipeToFile)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(4);
BENCHMARK(BM_FastPathSaveAtomicOnly)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(3.0);
BENCHMARK(BM_FastPathSaveDurable)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(4);
