// SPDX-License-Identifier: Apache-2.0
// Bulk float32 <-> float16 / bfloat16 conversion (float_types.hpp) against two
// limits measured in the same iterations: a memcpy of the bytes the conversion
// writes (vs_memcpy = memcpy time / conversion time) and the scalar per-element
// conversion of element_convert.hpp (vs_scalar = scalar time / bulk time).
//
//   cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DHURRAY_BUILD_BENCH=ON
//   cmake --build build/bench --target hurray_bench
//   build/bench/bench/hurray_bench --benchmark_filter='Bulk'
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "bench_support.hpp"
#include "hurray/core/element_convert.hpp"
#include "hurray/core/float_types.hpp"

namespace {

constexpr size_t kCount = size_t{16} << 20;  // 16 Mi values: 64 MiB of float32

std::vector<float> inputs() {
    std::vector<float> v(kCount);
    uint32_t x = 12345;
    for (float& f : v) {
        x = x * 1664525U + 1013904223U;
        f = static_cast<float>(static_cast<int32_t>(x)) * 1e-6F;
    }
    return v;
}

/// Times `bulk` (the reported time), then a memcpy of `out_bytes` and the
/// scalar loop, each iteration.
template <typename Bulk, typename Scalar>
void run(benchmark::State& state, size_t out_bytes, Bulk bulk, Scalar scalar) {
    std::vector<uint8_t> src(out_bytes, 1);
    std::vector<uint8_t> dst(out_bytes, 0);
    double bulk_s = 0;
    double copy_s = 0;
    double scalar_s = 0;
    for (auto _ : state) {
        const double t0 = hurray_bench::now_s();
        bulk();
        benchmark::ClobberMemory();
        const double t1 = hurray_bench::now_s();
        std::memcpy(dst.data(), src.data(), out_bytes);
        benchmark::ClobberMemory();
        const double t2 = hurray_bench::now_s();
        scalar();
        benchmark::ClobberMemory();
        const double t3 = hurray_bench::now_s();
        state.SetIterationTime(t1 - t0);
        bulk_s += t1 - t0;
        copy_s += t2 - t1;
        scalar_s += t3 - t2;
    }
    benchmark::DoNotOptimize(dst.data());
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(kCount));
    state.counters["vs_memcpy"] = copy_s / bulk_s;
    state.counters["vs_scalar"] = scalar_s / bulk_s;
}

void BM_BulkFloat32ToFloat16(benchmark::State& state) {
    const std::vector<float> in = inputs();
    std::vector<hurray::float16_t> out(kCount);
    std::vector<uint16_t> ref(kCount);
    run(
        state, kCount * 2, [&] { benchmark::DoNotOptimize(hurray::convert_floats(in, std::span<hurray::float16_t>(out))); },
        [&] {
            for (size_t i = 0; i < kCount; ++i) {
                ref[i] = hurray::float_to_float16(in[i]);
            }
        });
}

void BM_BulkFloat32ToBFloat16(benchmark::State& state) {
    const std::vector<float> in = inputs();
    std::vector<hurray::bfloat16_t> out(kCount);
    std::vector<uint16_t> ref(kCount);
    run(
        state, kCount * 2, [&] { benchmark::DoNotOptimize(hurray::convert_floats(in, std::span<hurray::bfloat16_t>(out))); },
        [&] {
            for (size_t i = 0; i < kCount; ++i) {
                ref[i] = hurray::float_to_bfloat16(in[i]);
            }
        });
}

void BM_BulkFloat16ToFloat32(benchmark::State& state) {
    const std::vector<hurray::float16_t> in = hurray::to_float16(inputs());
    std::vector<float> out(kCount);
    std::vector<float> ref(kCount);
    run(
        state, kCount * 4,
        [&] { benchmark::DoNotOptimize(hurray::convert_floats(std::span<const hurray::float16_t>(in), std::span<float>(out))); },
        [&] {
            for (size_t i = 0; i < kCount; ++i) {
                ref[i] = hurray::float16_to_float(in[i].bits);
            }
        });
}

BENCHMARK(BM_BulkFloat32ToFloat16)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BulkFloat32ToBFloat16)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BulkFloat16ToFloat32)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
