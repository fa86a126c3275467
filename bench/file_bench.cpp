// SPDX-License-Identifier: Apache-2.0
// HRRYFILE container: open + enumerate, read every tensor byte, write ~1 GiB,
// each against a raw limit timed in the same iterations.
//
//   cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DHURRAY_BUILD_BENCH=ON
//   cmake --build build/bench --target hurray_bench
//   build/bench/bench/hurray_bench --benchmark_filter='File'
//
// Files go to $TMPDIR (default /tmp). HURRAY_BENCH_FILE_MIB sets the size of
// the read and write files (default 1024). Times are wall-clock (I/O).
//
//   BM_FileOpenEnumerate/N  FileReader::open + name, element type, shape and
//                           buffer sizes of every tensor (descriptors decoded),
//                           for N = 10, 1,000, 100,000 tensors. Limit: open +
//                           mmap + a checksum over the index and every
//                           descriptor's bytes (touching all metadata once).
//                           vs_raw = limit time / hurray time.
//   BM_FileReadAll          open + zero-copy view of every tensor + sum of all
//                           its bytes. Limit: mmap + sum of the raw file.
//   BM_FileWrite300         FileWriter writing 300 tensors (~1 GiB in all) to
//                           a file. Limit: one write() of the same bytes.
#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_files.hpp"
#include "bench_support.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"

namespace {

using hurray_bench::now_s;

using hurray_bench::numbered;

using hurray_bench::tmp_path;

uint64_t file_mib() { return hurray_bench::env_mib("HURRAY_BENCH_FILE_MIB", 1024); }

using sum_bytes_fn = uint64_t (*)(const uint8_t*, size_t);
constexpr sum_bytes_fn sum_bytes = hurray_bench::sum_words;

/// A read-only mapping of a whole file (the raw limits' access path).
class RawMapping {
public:
    explicit RawMapping(const std::string& path) {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            return;
        }
        struct stat st {};
        if (::fstat(fd, &st) == 0 && st.st_size > 0) {
            size_ = static_cast<size_t>(st.st_size);
            void* m = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
            base_ = m == MAP_FAILED ? nullptr : static_cast<const uint8_t*>(m);
        }
        ::close(fd);
    }
    ~RawMapping() {
        if (base_ != nullptr) {
            ::munmap(const_cast<uint8_t*>(base_), size_);  // NOLINT(cppcoreguidelines-pro-type-const-cast)
        }
    }
    RawMapping(const RawMapping&) = delete;
    RawMapping& operator=(const RawMapping&) = delete;
    RawMapping(RawMapping&&) = delete;
    RawMapping& operator=(RawMapping&&) = delete;
    [[nodiscard]] const uint8_t* data() const { return base_; }
    [[nodiscard]] size_t size() const { return base_ == nullptr ? 0 : size_; }

private:
    const uint8_t* base_ = nullptr;
    size_t size_ = 0;
};

/// Maps `path` read-only and sums every byte; returns the sum.
uint64_t mmap_sum(const std::string& path, uint64_t* size_out = nullptr) {
    const RawMapping m(path);
    if (size_out != nullptr) {
        *size_out = m.size();
    }
    return m.data() == nullptr ? 0 : sum_bytes(m.data(), m.size());
}

/// Writes a file of `count` tensors of `bytes_each` bytes (uint8 vectors).
bool write_file(const std::string& path, uint64_t count, uint64_t bytes_each) {
    return hurray_bench::write_layers_file(path, count, bytes_each, true);
}

// ---------------------------------------------------------------------------

void BM_FileOpenEnumerate(benchmark::State& state) {
    const auto n = static_cast<uint64_t>(state.range(0));
    const std::string path = tmp_path(numbered("enum_", n).append(".hrry"));
    if (!write_file(path, n, 16)) {
        state.SkipWithError("could not write the file");
        return;
    }
    double hurray_s = 0;
    double raw_s = 0;
    uint64_t check = 0;
    for (auto _ : state) {
        const double t0 = now_s();
        auto file = hurray::FileReader::open(path);
        if (!file.ok()) {
            state.SkipWithError(file.error().to_string().c_str());
            break;
        }
        uint64_t acc = 0;
        for (size_t i = 0; i < file->tensor_count(); ++i) {
            const hurray::IndexEntry& e = file->entry(i);
            auto d = file->descriptor(i);
            if (!d.ok()) {
                state.SkipWithError(d.error().to_string().c_str());
                break;
            }
            acc += e.name.size() + static_cast<uint64_t>((*d)->element_type) + (*d)->shape.size() +
                   (*d)->buffers[0].byte_size;
        }
        benchmark::DoNotOptimize(acc);
        const double t1 = now_s();
        // The limit: map the file and touch the index and every descriptor
        // once (offsets taken from the reader above, outside the timing).
        const RawMapping m(path);
        const uint8_t* base = m.data();
        uint64_t raw = sum_bytes(base + file->trailer().index_offset, file->trailer().index_length);
        for (size_t i = 0; i < file->tensor_count(); ++i) {
            const hurray::IndexEntry& e = file->entry(i);
            raw += sum_bytes(base + e.descriptor_offset, e.descriptor_length);
        }
        benchmark::DoNotOptimize(raw);
        const double t2 = now_s();
        check += acc;
        hurray_s += t1 - t0;
        raw_s += t2 - t1;
        state.SetIterationTime(t1 - t0);
    }
    benchmark::DoNotOptimize(check);
    ::unlink(path.c_str());
    state.counters["tensors"] = static_cast<double>(n);
    state.counters["ns_per_tensor"] = hurray_s / static_cast<double>(state.iterations()) * 1e9 / static_cast<double>(n);
    state.counters["vs_raw"] = raw_s / hurray_s;
}

void BM_FileReadAll(benchmark::State& state) {
    const uint64_t total = file_mib() << 20U;
    constexpr uint64_t kTensors = 64;
    const std::string path = tmp_path("read.hrry");
    if (!write_file(path, kTensors, total / kTensors)) {
        state.SkipWithError("could not write the file");
        return;
    }
    (void)mmap_sum(path);  // warm the page cache
    double hurray_s = 0;
    double raw_s = 0;
    uint64_t bytes = 0;
    for (auto _ : state) {
        const double t0 = now_s();
        auto file = hurray::FileReader::open(path);
        if (!file.ok()) {
            state.SkipWithError(file.error().to_string().c_str());
            break;
        }
        uint64_t acc = 0;
        for (size_t i = 0; i < file->tensor_count(); ++i) {
            auto t = file->tensor(i);
            if (!t.ok()) {
                state.SkipWithError(t.error().to_string().c_str());
                break;
            }
            for (const hurray::SharedBuffer& b : t->buffers()) {
                acc += sum_bytes(b.data(), b.size());
            }
        }
        benchmark::DoNotOptimize(acc);
        const double t1 = now_s();
        uint64_t size = 0;
        benchmark::DoNotOptimize(mmap_sum(path, &size));
        const double t2 = now_s();
        bytes += size;
        hurray_s += t1 - t0;
        raw_s += t2 - t1;
        state.SetIterationTime(t1 - t0);
    }
    ::unlink(path.c_str());
    state.SetBytesProcessed(static_cast<int64_t>(bytes));
    state.counters["raw_GBps"] = static_cast<double>(bytes) / raw_s / 1e9;
    state.counters["vs_raw"] = raw_s / hurray_s;
}

void BM_FileWrite300(benchmark::State& state) {
    const uint64_t total = file_mib() << 20U;
    constexpr uint64_t kTensors = 300;
    const uint64_t each = total / kTensors;
    const auto tensor = hurray_bench::byte_tensor(state, each, 17, 3);
    if (!tensor) {
        return;
    }
    const auto buffers = tensor->buffers();
    // The raw limit writes the same number of bytes the file holds, from one
    // buffer of that size.
    std::vector<uint8_t> raw_bytes;
    const std::string path = tmp_path("write.hrry");
    const std::string raw_path = tmp_path("write.raw");
    double hurray_s = 0;
    double raw_s = 0;
    uint64_t bytes = 0;
    for (auto _ : state) {
        ::unlink(path.c_str());
        ::unlink(raw_path.c_str());
        const double t0 = now_s();
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        uint64_t written = 0;
        {
            hurray::FdSink sink(fd, true);
            auto w = hurray::FileWriter::create(sink);
            bool ok = w.ok();
            for (uint64_t i = 0; ok && i < kTensors; ++i) {
                ok = w->add_tensor(numbered("t", i), tensor->desc, buffers).ok();
            }
            ok = ok && w->finish().ok();
            if (!ok) {
                state.SkipWithError("write failed");
                break;
            }
            written = w->offset();
        }
        const double t1 = now_s();
        if (raw_bytes.size() != written) {  // first iteration only, not timed
            raw_bytes.assign(written, 0x5A);
        }
        const double t1b = now_s();
        const int rfd = ::open(raw_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        size_t off = 0;
        while (off < raw_bytes.size()) {
            const ssize_t n = ::write(rfd, raw_bytes.data() + off, raw_bytes.size() - off);
            if (n <= 0) {
                break;
            }
            off += static_cast<size_t>(n);
        }
        ::close(rfd);
        const double t2 = now_s();
        bytes += written;
        hurray_s += t1 - t0;
        raw_s += t2 - t1b;
        state.SetIterationTime(t1 - t0);
    }
    ::unlink(path.c_str());
    ::unlink(raw_path.c_str());
    state.SetBytesProcessed(static_cast<int64_t>(bytes));
    state.counters["raw_GBps"] = static_cast<double>(bytes) / raw_s / 1e9;
    state.counters["vs_raw"] = raw_s / hurray_s;
}

BENCHMARK(BM_FileOpenEnumerate)->Arg(10)->Arg(1000)->Arg(100000)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FileReadAll)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_FileWrite300)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace
