// SPDX-License-Identifier: Apache-2.0
// Reading every tensor of an HRRYFILE through the C ABI (hurray.h) against the
// C++ API and against a raw mapping, all three timed in the same iterations
// with the same consume loop.
//
//   cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DHURRAY_BUILD_BENCH=ON
//   cmake --build build/bench --target hurray_bench
//   build/bench/bench/hurray_bench --benchmark_filter='CApiRead'
//
// The file (64 uint8 tensors, HURRAY_BENCH_FILE_MIB in all, default 1024, so
// 16 MiB each) is written once with the C++ FileWriter to $TMPDIR (default
// /tmp) and read from the page cache. Times are wall-clock.
//
//   BM_CApiReadAll   Each iteration runs the three paths, in an order that
//                    alternates between iterations (C, C++, raw, then raw,
//                    C++, C), each one: open, then for every tensor its data
//                    buffer, then a sum of its 64-bit words (the consume loop).
//                      C:   hurray_file_open, hurray_file_tensor_buffer,
//                           hurray_buffer_data_ptr / _byte_size, sum,
//                           hurray_buffer_destroy, hurray_file_close.
//                      C++: hurray::load, TensorFile::at(i), FileTensor::buffers, sum.
//                      raw: open + mmap + the same sum over the same byte
//                           ranges (offsets from the index, read outside the
//                           timing) + munmap.
//                    The iteration time is the C path's. Counters:
//                      c_over_cpp  C time / C++ time (1.00: the C ABI costs
//                                  nothing; the target is <= 1.05)
//                      c_vs_raw    raw time / C time (1.0: no overhead)
//                      cpp_vs_raw  raw time / C++ time
//                      raw_GBps    the raw path's throughput
#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hurray.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "bench_files.hpp"
#include "bench_support.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/tensor_file.hpp"

namespace {

using hurray_bench::now_s;

constexpr uint64_t kTensors = 64;

std::string tmp_file(const char* name) { return hurray_bench::tmp_path(name); }

/// The consume loop of all three paths.
constexpr auto consume = hurray_bench::sum_words;


/// The C path; returns the sum, or false in `ok` when a call failed.
uint64_t read_c(const char* path, bool& ok) {
    HurrayFile* file = nullptr;
    uint64_t count = 0;
    uint64_t acc = 0;
    ok = hurray_file_open(path, 0, &file) == HURRAY_OK && hurray_file_tensor_count(file, &count) == HURRAY_OK;
    for (uint64_t i = 0; ok && i < count; ++i) {
        HurrayBuffer* b = nullptr;
        void* data = nullptr;
        uint64_t size = 0;
        ok = hurray_file_tensor_buffer(file, i, 0, &b) == HURRAY_OK && hurray_buffer_data_ptr(b, &data) == HURRAY_OK &&
             hurray_buffer_byte_size(b, &size) == HURRAY_OK;
        if (ok) {
            acc += consume(static_cast<const uint8_t*>(data), static_cast<size_t>(size));
        }
        if (b != nullptr) {
            (void)hurray_buffer_destroy(b);
        }
    }
    hurray_file_close(file);
    return acc;
}

/// The C++ path.
uint64_t read_cpp(const std::string& path, bool& ok) {
    auto file = hurray::load(path);
    ok = file.ok();
    uint64_t acc = 0;
    for (size_t i = 0; ok && i < file->size(); ++i) {
        auto t = file->at(i);
        ok = t.ok() && !t->buffers().empty();
        if (ok) {
            const hurray::SharedBuffer& b = t->buffers()[0];
            acc += consume(b.data(), b.size());
        }
    }
    return acc;
}

/// The raw limit: map the file, consume the same byte ranges, unmap.
uint64_t read_raw(const std::string& path, const std::vector<std::pair<uint64_t, uint64_t>>& ranges, bool& ok) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    ok = fd >= 0 && ::fstat(fd, &st) == 0 && st.st_size > 0;
    void* m = ok ? ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    if (fd >= 0) {
        ::close(fd);
    }
    ok = ok && m != MAP_FAILED;
    uint64_t acc = 0;
    if (ok) {
        const auto* base = static_cast<const uint8_t*>(m);
        for (const auto& [offset, size] : ranges) {
            acc += consume(base + offset, static_cast<size_t>(size));
        }
        ::munmap(m, static_cast<size_t>(st.st_size));
    }
    return acc;
}

void BM_CApiReadAll(benchmark::State& state) {
    const uint64_t total = hurray_bench::env_mib("HURRAY_BENCH_FILE_MIB", 1024) << 20U;
    const std::string path = tmp_file("c_api_read.hrry");
    if (!hurray_bench::write_layers_file(path, kTensors, total / kTensors, false)) {
        state.SkipWithError("could not write the file");
        return;
    }
    // The data ranges (from the index), for the raw path.
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    uint64_t bytes_per_pass = 0;
    {
        auto reader = hurray::FileReader::open(path);
        if (!reader.ok()) {
            state.SkipWithError(reader.error().to_string().c_str());
            ::unlink(path.c_str());
            return;
        }
        for (size_t i = 0; i < reader->tensor_count(); ++i) {
            const hurray::IndexEntry& e = reader->entry(i);
            auto t = reader->tensor(i);
            const uint64_t size = t.ok() && !t->buffers().empty() ? t->buffers()[0].size() : 0;
            ranges.emplace_back(e.data_offset, size);
            bytes_per_pass += size;
        }
    }
    bool ok = true;
    (void)read_raw(path, ranges, ok);  // warm the page cache
    double c_s = 0;
    double cpp_s = 0;
    double raw_s = 0;
    uint64_t iteration = 0;
    for (auto _ : state) {
        double t_c = 0;
        double t_cpp = 0;
        double t_raw = 0;
        uint64_t sum_c = 0;
        uint64_t sum_cpp = 0;
        uint64_t sum_raw = 0;
        bool ok_c = false;
        bool ok_cpp = false;
        bool ok_raw = false;
        auto run_c = [&] {
            const double t0 = now_s();
            sum_c = read_c(path.c_str(), ok_c);
            benchmark::DoNotOptimize(sum_c);
            t_c = now_s() - t0;
        };
        auto run_cpp = [&] {
            const double t0 = now_s();
            sum_cpp = read_cpp(path, ok_cpp);
            benchmark::DoNotOptimize(sum_cpp);
            t_cpp = now_s() - t0;
        };
        auto run_raw = [&] {
            const double t0 = now_s();
            sum_raw = read_raw(path, ranges, ok_raw);
            benchmark::DoNotOptimize(sum_raw);
            t_raw = now_s() - t0;
        };
        if (iteration++ % 2 == 0) {
            run_c();
            run_cpp();
            run_raw();
        } else {
            run_raw();
            run_cpp();
            run_c();
        }
        if (!ok_c || !ok_cpp || !ok_raw) {
            state.SkipWithError(!ok_c ? hurray_last_error_message() : "C++ or raw read failed");
            break;
        }
        if (sum_c != sum_cpp || sum_c != sum_raw) {
            state.SkipWithError("the three paths read different bytes");
            break;
        }
        c_s += t_c;
        cpp_s += t_cpp;
        raw_s += t_raw;
        state.SetIterationTime(t_c);
    }
    ::unlink(path.c_str());
    const auto iterations = static_cast<double>(state.iterations());
    state.SetBytesProcessed(static_cast<int64_t>(bytes_per_pass * static_cast<uint64_t>(state.iterations())));
    state.counters["c_over_cpp"] = c_s / cpp_s;
    state.counters["c_vs_raw"] = raw_s / c_s;
    state.counters["cpp_vs_raw"] = raw_s / cpp_s;
    state.counters["raw_GBps"] = static_cast<double>(bytes_per_pass) * iterations / raw_s / 1e9;
}

BENCHMARK(BM_CApiReadAll)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace
