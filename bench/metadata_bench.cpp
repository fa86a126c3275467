// SPDX-License-Identifier: Apache-2.0
// The metadata path (issue 15): open + enumerate an HRRYFILE container, and
// the descriptor codec, each against a floor measured in the same run.
//
//   cmake -S . -B build/gcc -G Ninja -DCMAKE_BUILD_TYPE=Release -DHURRAY_BUILD_BENCH=ON ...
//   ninja -C build/gcc hurray_bench
//   build/gcc/bench/hurray_bench --benchmark_filter=Meta
//
// Files go to $TMPDIR (default /tmp) and are deleted when their benchmark ends.
//
//   BM_MetaOpenEnumerate/N  FileReader::open, then the name, element type,
//                           shape and data span (offset, length, buffer sizes)
//                           of every tensor, every descriptor decoded and
//                           validated (FileReadOptions::descriptors = kFull
//                           when the library has it). N = 291: an LLM-like
//                           file of ~1 GiB (32 layers of int4 per-block
//                           matrices and float32 norms, float16 embeddings);
//                           N = 100,000 and 1,000,000: uint8[16] tensors (the
//                           1M file, ~8 GiB with the 4 KiB data alignment, is
//                           written on demand and deleted after; set
//                           HURRAY_BENCH_META_MAX=100000 to skip it).
//   BM_MetaOpenIndexOnly/N  FileReader::open with descriptors checked on first
//                           use (kLazy) and the name and offsets of every entry.
//   Floors, timed in the same iterations: open + fstat + mmap of the file and a
//   checksum over the index and every descriptor's bytes (index only for the
//   index-only open), then munmap + close.
//   Counters: floor_us, x_floor = hurray / floor, ns_per_tensor; and the bare
//   open + fstat + mmap + munmap + close (no byte touched): mmap_us, x_mmap.
//
//   BM_MetaDecode/K, BM_MetaEncodeTo/K, BM_MetaEncode/K  decode (full
//   validation), encode into a reused buffer, encode to a new vector; K = 0:
//   float16 [8, 32, 128, 128] row-major (77 bytes), K = 1: int4 [4, 32, 128,
//   4096] per-block affine, block 32, float16 scales (121 bytes).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_files.hpp"
#include "bench_support.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"

namespace {

using hurray_bench::kLlmLike;
using hurray_bench::max_tensors;
using hurray_bench::now_s;
using hurray_bench::numbered;
using hurray_bench::write_llm_like;
using hurray_bench::write_small;
using hurray_bench::sum_words;
using hurray_bench::tmp_path;

/// The test file for `n` tensors (written now; the caller deletes it).
std::string make_file(benchmark::State& state, int64_t n) {
    const std::string path = tmp_path(numbered("meta_", static_cast<uint64_t>(n), ".hrry"));
    const bool ok =
        n == kLlmLike ? write_llm_like(path) : write_small(path, static_cast<uint64_t>(n));
    if (!ok) {
        ::unlink(path.c_str());
        state.SkipWithError("could not write the file");
        return {};
    }
    return path;
}

/// The floor: open + fstat + mmap, a checksum over the index and (unless
/// `index_only`) every descriptor, munmap + close. Offsets from `file`
/// (read before the timing starts).
struct Floor {
    uint64_t index_offset = 0;
    uint64_t index_length = 0;
    std::vector<std::pair<uint64_t, uint32_t>> descriptors;

    /// open + fstat + mmap + munmap + close, touching nothing.
    static uint64_t bare(const std::string& path) { return hurray_bench::MappedFile(path).base() != nullptr ? 1 : 0; }

    [[nodiscard]] uint64_t run(const std::string& path, bool index_only) const {
        const hurray_bench::MappedFile file(path);
        const uint8_t* base = file.base();
        if (base == nullptr) {
            return 0;
        }
        uint64_t acc = sum_words(base + index_offset, index_length);
        if (!index_only) {
            for (const auto& [off, len] : descriptors) {
                acc += sum_words(base + off, len);
            }
        }
        return acc;
    }
};

/// Opens `path`: descriptors decoded at open (`full`) or on first use, where
/// the library has that choice (FileReadOptions::descriptors).
hurray::Result<hurray::FileReader> open_file(const std::string& path, [[maybe_unused]] bool full) {
    hurray::FileReadOptions options;
#ifdef HURRAY_HAS_DESCRIPTOR_CHECK
    options.descriptors = full ? hurray::DescriptorCheck::kFull : hurray::DescriptorCheck::kLazy;
#endif
    return hurray::FileReader::open(path, options);
}

void report(benchmark::State& state, int64_t n, double hurray_s, double floor_s, double mmap_s) {
    const auto iters = static_cast<double>(state.iterations());
    state.counters["mmap_us"] = mmap_s / iters * 1e6;
    state.counters["x_mmap"] = hurray_s / mmap_s;
    state.counters["tensors"] = static_cast<double>(n);
    state.counters["floor_us"] = floor_s / iters * 1e6;
    state.counters["x_floor"] = hurray_s / floor_s;
    state.counters["ns_per_tensor"] = hurray_s / iters * 1e9 / static_cast<double>(n);
}

void BM_MetaOpenEnumerate(benchmark::State& state) {
    const int64_t n = state.range(0);
    if (static_cast<uint64_t>(n) > max_tensors()) {
        state.SkipWithError("skipped (HURRAY_BENCH_META_MAX)");
        return;
    }
    const std::string path = make_file(state, n);
    if (path.empty()) {
        return;
    }
    Floor floor;
    {
        auto file = hurray::FileReader::open(path);
        if (!file.ok()) {
            state.SkipWithError(file.error().to_string().c_str());
            ::unlink(path.c_str());
            return;
        }
        floor.index_offset = file->trailer().index_offset;
        floor.index_length = file->trailer().index_length;
        for (size_t i = 0; i < file->tensor_count(); ++i) {
            floor.descriptors.emplace_back(file->entry(i).descriptor_offset,
                                           file->entry(i).descriptor_length);
        }
    }
    double hurray_s = 0;
    double floor_s = 0;
    double mmap_s = 0;
    uint64_t check = 0;
    for (auto _ : state) {
        const double t0 = now_s();
        {
            auto file = open_file(path, true);
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
                const hurray::TensorDescriptor& desc = **d;
                acc += e.name.size() + static_cast<uint64_t>(desc.element_type) + e.data_offset +
                       e.data_length;
                for (const uint64_t dim : desc.shape) {
                    acc += dim;
                }
                for (const hurray::BufferHandle& b : desc.buffers) {
                    acc += b.byte_size;
                }
            }
            benchmark::DoNotOptimize(acc);
            check += acc;
        }
        const double t1 = now_s();
        benchmark::DoNotOptimize(floor.run(path, false));
        const double t2 = now_s();
        benchmark::DoNotOptimize(Floor::bare(path));
        const double t3 = now_s();
        hurray_s += t1 - t0;
        floor_s += t2 - t1;
        mmap_s += t3 - t2;
        state.SetIterationTime(t1 - t0);
    }
    benchmark::DoNotOptimize(check);
    ::unlink(path.c_str());
    report(state, n, hurray_s, floor_s, mmap_s);
}

void BM_MetaOpenIndexOnly(benchmark::State& state) {
    const int64_t n = state.range(0);
    const std::string path = make_file(state, n);
    if (path.empty()) {
        return;
    }
    Floor floor;
    {
        auto file = hurray::FileReader::open(path);
        if (!file.ok()) {
            state.SkipWithError(file.error().to_string().c_str());
            ::unlink(path.c_str());
            return;
        }
        floor.index_offset = file->trailer().index_offset;
        floor.index_length = file->trailer().index_length;
    }
    double hurray_s = 0;
    double floor_s = 0;
    double mmap_s = 0;
    for (auto _ : state) {
        const double t0 = now_s();
        {
            auto file = open_file(path, false);
            if (!file.ok()) {
                state.SkipWithError(file.error().to_string().c_str());
                break;
            }
            uint64_t acc = 0;
            for (size_t i = 0; i < file->tensor_count(); ++i) {
                const hurray::IndexEntry& e = file->entry(i);
                acc += e.name.size() + e.descriptor_offset + e.data_offset + e.data_length;
            }
            benchmark::DoNotOptimize(acc);
        }
        const double t1 = now_s();
        benchmark::DoNotOptimize(floor.run(path, true));
        const double t2 = now_s();
        benchmark::DoNotOptimize(Floor::bare(path));
        const double t3 = now_s();
        hurray_s += t1 - t0;
        floor_s += t2 - t1;
        mmap_s += t3 - t2;
        state.SetIterationTime(t1 - t0);
    }
    ::unlink(path.c_str());
    report(state, n, hurray_s, floor_s, mmap_s);
}

hurray::TensorDescriptor codec_case(int64_t which) {
    auto d = which == 0
                 ? hurray::make_dense(hurray::ElementType::kFloat16, {8, 32, 128, 128})
                 : hurray::make_per_block_quantized(hurray::ElementType::kInt4, {4, 32, 128, 4096},
                                                    3, 32, hurray::ElementType::kFloat16);
    if (!d.ok()) {
        std::fprintf(stderr, "metadata_bench: %s\n", d.error().to_string().c_str());
        std::abort();
    }
    return *std::move(d);
}

void codec_label(benchmark::State& state, size_t bytes) {
    state.SetItemsProcessed(state.iterations());
    state.counters["bytes"] = static_cast<double>(bytes);
    state.SetLabel(state.range(0) == 0 ? "dense_f16_rank4" : "int4_per_block");
}

void BM_MetaDecode(benchmark::State& state) {
    const auto bytes = hurray::encode(codec_case(state.range(0)));
    for (auto _ : state) {
        benchmark::DoNotOptimize(bytes->data());
        auto d = hurray::decode(*bytes);
        benchmark::DoNotOptimize(d);
    }
    codec_label(state, bytes->size());
}

void BM_MetaEncodeTo(benchmark::State& state) {
    const hurray::TensorDescriptor d = codec_case(state.range(0));
    std::vector<uint8_t> out(hurray::encode(d)->size());
    for (auto _ : state) {
        auto n = hurray::encode_to(d, out);
        benchmark::DoNotOptimize(n);
        benchmark::ClobberMemory();
    }
    codec_label(state, out.size());
}

void BM_MetaEncode(benchmark::State& state) {
    const hurray::TensorDescriptor d = codec_case(state.range(0));
    size_t n = 0;
    for (auto _ : state) {
        auto b = hurray::encode(d);
        benchmark::DoNotOptimize(b);
        n = b->size();
    }
    codec_label(state, n);
}

BENCHMARK(BM_MetaDecode)->Arg(0)->Arg(1);
BENCHMARK(BM_MetaEncodeTo)->Arg(0)->Arg(1);
BENCHMARK(BM_MetaEncode)->Arg(0)->Arg(1);
BENCHMARK(BM_MetaOpenIndexOnly)
    ->Arg(100000)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(30);
BENCHMARK(BM_MetaOpenEnumerate)
    ->Arg(kLlmLike)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->Iterations(200);
BENCHMARK(BM_MetaOpenEnumerate)
    ->Arg(100000)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(20);
BENCHMARK(BM_MetaOpenEnumerate)
    ->Arg(1000000)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

}  // namespace
