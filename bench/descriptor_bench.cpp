// SPDX-License-Identifier: Apache-2.0
// Descriptor codec benchmarks: encode, encode_to, decode, check_descriptor and
// peek_length on two typical descriptors, against the limit measured in the
// same run, a memcpy of the encoded size.
//
//   dense_f16:  float16 [8, 32, 128, 128] row-major, one buffer (77 bytes)
//   int4_pb32:  int4 [4, 32, 128, 4096] per-block affine along axis 3, block 32,
//               float16 scales in buffer 1 (121 bytes)
//
// Every benchmark reports items_per_second (one item = one descriptor) and the
// encoded size; decode also reports memcpy_ns (a memcpy of the same bytes,
// timed in the same process just before) and x_memcpy = decode ns / memcpy ns.
//
//   cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DHURRAY_BUILD_BENCH=ON
//         -DHURRAY_BUILD_TESTS=OFF && cmake --build build/bench
//   build/bench/bench/hurray_bench --benchmark_filter=Descriptor
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "hurray/core/builder.hpp"
#include "hurray/core/descriptor_codec.hpp"

namespace {

enum Case : int { kDenseF16 = 0, kInt4PerBlock = 1 };

hurray::TensorDescriptor make_case(int which) {
    auto d = which == kDenseF16
                 ? hurray::make_dense(hurray::ElementType::kFloat16, {8, 32, 128, 128})
                 : hurray::make_per_block_quantized(hurray::ElementType::kInt4, {4, 32, 128, 4096}, 3, 32,
                                                    hurray::ElementType::kFloat16);
    if (!d.ok()) {
        std::fprintf(stderr, "descriptor_bench: %s\n", d.error().to_string().c_str());
        std::abort();
    }
    return *std::move(d);
}

std::vector<uint8_t> encoded(const hurray::TensorDescriptor& d) {
    auto b = hurray::encode(d);
    if (!b.ok()) {
        std::fprintf(stderr, "descriptor_bench: %s\n", b.error().to_string().c_str());
        std::abort();
    }
    return *std::move(b);
}

void finish(benchmark::State& state, size_t bytes) {
    state.SetItemsProcessed(state.iterations());
    state.counters["bytes"] = static_cast<double>(bytes);
    state.SetLabel(state.range(0) == kDenseF16 ? "dense_f16" : "int4_pb32");
}

/// ns per memcpy of `n` bytes, timed with a plain loop (the reference for decode).
double memcpy_ns(size_t n) {
    std::vector<uint8_t> src(n, 0x5A);
    std::vector<uint8_t> dst(n);
    constexpr int kIters = 2'000'000;
    double best = 1e30;
    for (int round = 0; round < 5; ++round) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < kIters; ++i) {
            benchmark::DoNotOptimize(src.data());
            std::memcpy(dst.data(), src.data(), n);
            benchmark::DoNotOptimize(dst.data());
            benchmark::ClobberMemory();
        }
        const auto t1 = std::chrono::steady_clock::now();
        best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count() / kIters);
    }
    return best;
}

void BM_DescriptorMemcpy(benchmark::State& state) {
    const std::vector<uint8_t> src = encoded(make_case(static_cast<int>(state.range(0))));
    std::vector<uint8_t> dst(src.size());
    for (auto _ : state) {
        benchmark::DoNotOptimize(src.data());
        std::memcpy(dst.data(), src.data(), src.size());
        benchmark::DoNotOptimize(dst.data());
        benchmark::ClobberMemory();
    }
    finish(state, src.size());
}

void BM_DescriptorEncode(benchmark::State& state) {
    const hurray::TensorDescriptor d = make_case(static_cast<int>(state.range(0)));
    size_t n = 0;
    for (auto _ : state) {
        auto b = hurray::encode(d);
        benchmark::DoNotOptimize(b);
        n = b->size();
    }
    finish(state, n);
}

void BM_DescriptorEncodeTo(benchmark::State& state) {
    const hurray::TensorDescriptor d = make_case(static_cast<int>(state.range(0)));
    std::vector<uint8_t> out(encoded(d).size());  // reused: no allocation per call
    for (auto _ : state) {
        auto n = hurray::encode_to(d, out);
        benchmark::DoNotOptimize(n);
        benchmark::ClobberMemory();
    }
    finish(state, out.size());
}

void BM_DescriptorDecode(benchmark::State& state) {
    const std::vector<uint8_t> bytes = encoded(make_case(static_cast<int>(state.range(0))));
    const double copy_ns = memcpy_ns(bytes.size());
    const auto t0 = std::chrono::steady_clock::now();
    for (auto _ : state) {
        auto d = hurray::decode(bytes);
        benchmark::DoNotOptimize(d);
    }
    const auto t1 = std::chrono::steady_clock::now();
    const double decode_ns =
        std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(state.iterations());
    finish(state, bytes.size());
    state.counters["memcpy_ns"] = copy_ns;
    state.counters["x_memcpy"] = decode_ns / copy_ns;
}

void BM_DescriptorCheck(benchmark::State& state) {
    const hurray::TensorDescriptor d = make_case(static_cast<int>(state.range(0)));
    for (auto _ : state) {
        auto s = hurray::check_descriptor(d);
        benchmark::DoNotOptimize(s);
    }
    finish(state, encoded(d).size());
}

void BM_DescriptorPeekLength(benchmark::State& state) {
    const std::vector<uint8_t> bytes = encoded(make_case(static_cast<int>(state.range(0))));
    for (auto _ : state) {
        benchmark::DoNotOptimize(bytes.data());
        auto n = hurray::peek_length(bytes);
        benchmark::DoNotOptimize(n);
    }
    finish(state, bytes.size());
}

BENCHMARK(BM_DescriptorMemcpy)->Arg(kDenseF16)->Arg(kInt4PerBlock);
BENCHMARK(BM_DescriptorEncode)->Arg(kDenseF16)->Arg(kInt4PerBlock);
BENCHMARK(BM_DescriptorEncodeTo)->Arg(kDenseF16)->Arg(kInt4PerBlock);
BENCHMARK(BM_DescriptorDecode)->Arg(kDenseF16)->Arg(kInt4PerBlock);
BENCHMARK(BM_DescriptorCheck)->Arg(kDenseF16)->Arg(kInt4PerBlock);
BENCHMARK(BM_DescriptorPeekLength)->Arg(kDenseF16)->Arg(kInt4PerBlock);

}  // namespace
