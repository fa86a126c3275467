// SPDX-License-Identifier: Apache-2.0
// hurray::convert: a SafeTensors file converted to HRRYFILE against the `cp` floor
// (a read + write loop over the same bytes, 8 MiB at a time), both timed in the same
// iterations.
//
//   BM_ConvertSafeTensorsToHrry
//                    The input: a SafeTensors file of HURRAY_BENCH_CONVERT_MIB MiB (default
//                    1024) in $TMPDIR (else /tmp), 291 tensors of float16 / bfloat16 /
//                    float32 (sizes like a small LLM's: a few large embeddings, many
//                    mid-size matrices, small norms), made once. Each iteration copies it
//                    (read + write, the `cp` floor) and converts it (open_safetensors +
//                    write_hrryfile, not durable: cp does not fsync either), alternating
//                    which goes first so that the page cache favours neither. The
//                    iteration time is the conversion's. Counters:
//                      vs_cp        copy time / conversion time (1 = as fast as cp;
//                                   goal >= 0.8)
//                      convert_GBps, cp_GBps   throughput of each
//                      rss_growth_MiB          peak resident memory (VmHWM, reset before
//                                   each conversion through /proc/self/clear_refs) minus
//                                   the resident memory before it. It counts the pages of
//                                   the mapped input the writer touched through view()
//                                   (page cache, shared with every reader of the file)
//                      anon_growth_MiB         peak anonymous resident memory (RssAnon,
//                                   sampled every millisecond by a thread) minus the
//                                   value before: what the conversion holds beyond the
//                                   page cache (goal < 64 MiB)
//                      tensors      tensors in the file
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.hpp"
#include "hurray/convert/convert.hpp"
#include "hurray/convert/hrryfile.hpp"
#include "hurray/convert/safetensors.hpp"

namespace {

constexpr size_t kTensorCount = 291;
constexpr size_t kCopyChunk = size_t{8} << 20;

/// A value of /proc/self/status in KiB ("VmHWM", "VmRSS"); 0 when unreadable.
uint64_t status_kib(const std::string& field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(field + ":", 0) == 0) {
            return std::strtoull(line.c_str() + field.size() + 1, nullptr, 10);
        }
    }
    return 0;
}

/// Samples RssAnon every millisecond while alive; peak() is the largest value seen.
class AnonSampler {
public:
    AnonSampler()
        : thread_([this] {
              while (!stop_.load()) {
                  const uint64_t v = status_kib("RssAnon");
                  uint64_t p = peak_.load();
                  while (v > p && !peak_.compare_exchange_weak(p, v)) {
                  }
                  std::this_thread::sleep_for(std::chrono::milliseconds(1));
              }
          }) {}
    ~AnonSampler() {
        stop_ = true;
        thread_.join();
    }
    AnonSampler(const AnonSampler&) = delete;
    AnonSampler& operator=(const AnonSampler&) = delete;
    AnonSampler(AnonSampler&&) = delete;
    AnonSampler& operator=(AnonSampler&&) = delete;
    [[nodiscard]] uint64_t peak() const { return peak_.load(); }

private:
    std::atomic<bool> stop_{false};
    std::atomic<uint64_t> peak_{0};
    std::thread thread_;
};

/// Resets VmHWM to the current RSS (Linux >= 4.0); false when not possible.
bool reset_peak_rss() {
    std::ofstream out("/proc/self/clear_refs");
    out << "5";
    return out.good();
}

bool write_all(int fd, const uint8_t* p, size_t n) {
    while (n > 0) {
        const ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return false;
        }
        p += w;
        n -= static_cast<size_t>(w);
    }
    return true;
}

/// The tensor sizes in bytes: 291 tensors summing to `total` (a multiple of 4096):
/// two embedding-like tensors of 1/8 each, 256 matrices sharing most of the rest,
/// 33 small "norm" tensors of 4 KiB.
std::vector<uint64_t> tensor_sizes(uint64_t total) {
    std::vector<uint64_t> sizes;
    const uint64_t big = total / 8 / 4096 * 4096;
    sizes.push_back(big);
    sizes.push_back(big);
    const uint64_t small = 4096;
    const uint64_t rest = total - 2 * big - 33 * small;
    const uint64_t mid = rest / 256 / 4096 * 4096;
    for (int i = 0; i < 256; ++i) {
        sizes.push_back(i == 255 ? rest - 255 * mid : mid);
    }
    for (int i = 0; i < 33; ++i) {
        sizes.push_back(small);
    }
    return sizes;
}

/// Writes the input file (header by hand, data patterned), once per process.
const std::string& input_file(uint64_t total) {
    static const std::string path = [total] {
        const std::string p = hurray_bench::tmp_path("convert_in.safetensors");
        const std::vector<uint64_t> sizes = tensor_sizes(total);
        static constexpr const char* kDtypes[3] = {"F16", "BF16", "F32"};
        std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
        uint64_t offset = 0;
        for (size_t i = 0; i < sizes.size(); ++i) {
            const char* dtype = kDtypes[i % 3];
            const uint64_t elem = i % 3 == 2 ? 4 : 2;
            const uint64_t cols = sizes[i] / elem >= 4096 ? 1024 : 1;
            header += ",\"model.layers." + std::to_string(i) + ".weight\":{\"dtype\":\"" + dtype +
                      "\",\"shape\":[" + std::to_string(sizes[i] / elem / cols) + "," +
                      std::to_string(cols) + "],\"data_offsets\":[" + std::to_string(offset) + "," +
                      std::to_string(offset + sizes[i]) + "]}";
            offset += sizes[i];
        }
        header += "}";
        header.append((8 - header.size() % 8) % 8, ' ');
        const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) {
            std::perror("convert_bench: open input");
            std::abort();
        }
        std::vector<uint8_t> buf(kCopyChunk);
        for (size_t i = 0; i < buf.size(); ++i) {
            buf[i] = static_cast<uint8_t>(i * 131 + 7);
        }
        uint8_t len[8];
        for (int k = 0; k < 8; ++k) {
            len[k] = static_cast<uint8_t>(static_cast<uint64_t>(header.size()) >> (8 * k));
        }
        bool ok = write_all(fd, len, 8) &&
                  write_all(fd, reinterpret_cast<const uint8_t*>(header.data()), header.size());
        for (uint64_t left = offset; ok && left > 0;) {
            const size_t n = static_cast<size_t>(std::min<uint64_t>(left, buf.size()));
            ok = write_all(fd, buf.data(), n);
            left -= n;
        }
        ::close(fd);
        if (!ok) {
            std::fprintf(stderr, "convert_bench: writing the input failed\n");
            std::abort();
        }
        std::atexit([] { ::unlink(path.c_str()); });
        return p;
    }();
    return path;
}

/// The `cp` floor: read + write loop, 8 MiB at a time.
double copy_file(const std::string& from, const std::string& to) {
    const double t0 = hurray_bench::now_s();
    const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
    const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    static std::vector<uint8_t> buf(kCopyChunk);
    bool ok = in >= 0 && out >= 0;
    while (ok) {
        const ssize_t n = ::read(in, buf.data(), buf.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            ok = n == 0;
            break;
        }
        ok = write_all(out, buf.data(), static_cast<size_t>(n));
    }
    if (in >= 0) {
        ::close(in);
    }
    if (out >= 0) {
        ::close(out);
    }
    if (!ok) {
        std::fprintf(stderr, "convert_bench: copy failed\n");
        std::abort();
    }
    return hurray_bench::now_s() - t0;
}

void BM_ConvertSafeTensorsToHrry(benchmark::State& state) {
    const uint64_t total = hurray_bench::env_mib("HURRAY_BENCH_CONVERT_MIB", 1024) << 20;
    const std::string& in = input_file(total);
    const std::string copy_out = hurray_bench::tmp_path("convert_cp.safetensors");
    const std::string hrry_out = hurray_bench::tmp_path("convert_out.hrry");
    struct stat st {};
    const uint64_t file_bytes =
        ::stat(in.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;

    double convert_s = 0;
    double copy_s = 0;
    uint64_t rss_growth_kib = 0;
    uint64_t anon_growth_kib = 0;
    size_t tensors = 0;
    uint64_t iteration = 0;
    for (auto _ : state) {
        double t_convert = 0;
        const auto convert = [&] {
            const uint64_t rss_before = status_kib("VmRSS");
            const uint64_t anon_before = status_kib("RssAnon");
            const bool reset = reset_peak_rss();
            AnonSampler sampler;
            const double t0 = hurray_bench::now_s();
            auto src = hurray::convert::open_safetensors(in);
            if (!src) {
                state.SkipWithError(src.error().to_string().c_str());
                return;
            }
            hurray::convert::ConvertOptions opt;
            opt.durable = false;
            if (auto s = hurray::convert::write_hrryfile(**src, hrry_out, opt); !s) {
                state.SkipWithError(s.error().to_string().c_str());
                return;
            }
            tensors = (*src)->tensor_count();
            src->reset();  // unmapped before the time is taken
            t_convert = hurray_bench::now_s() - t0;
            const uint64_t peak = status_kib("VmHWM");
            if (reset && peak > rss_before) {
                rss_growth_kib = std::max(rss_growth_kib, peak - rss_before);
            }
            if (sampler.peak() > anon_before) {
                anon_growth_kib = std::max(anon_growth_kib, sampler.peak() - anon_before);
            }
        };
        double t_copy = 0;
        if (iteration++ % 2 == 0) {
            convert();
            t_copy = copy_file(in, copy_out);
        } else {
            t_copy = copy_file(in, copy_out);
            convert();
        }
        convert_s += t_convert;
        copy_s += t_copy;
        state.SetIterationTime(t_convert);
    }
    ::unlink(copy_out.c_str());
    ::unlink(hrry_out.c_str());
    const auto iters = static_cast<double>(state.iterations());
    state.SetBytesProcessed(static_cast<int64_t>(file_bytes) * state.iterations());
    state.counters["vs_cp"] = copy_s / convert_s;
    state.counters["convert_GBps"] = static_cast<double>(file_bytes) * iters / convert_s / 1e9;
    state.counters["cp_GBps"] = static_cast<double>(file_bytes) * iters / copy_s / 1e9;
    state.counters["rss_growth_MiB"] = static_cast<double>(rss_growth_kib) / 1024.0;
    state.counters["anon_growth_MiB"] = static_cast<double>(anon_growth_kib) / 1024.0;
    state.counters["tensors"] = static_cast<double>(tensors);
}

}  // namespace

BENCHMARK(BM_ConvertSafeTensorsToHrry)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
