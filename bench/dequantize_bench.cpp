// SPDX-License-Identifier: Apache-2.0
// Dequantization throughput of a 4096 x 4096 weight matrix to float32,
// reported as bytes of float32 output per second, against memcpy of the same
// 64 MiB in the same run (the practical limit: every output byte is written
// once, and memcpy reads as many bytes as it writes).
//
//   cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DHURRAY_BUILD_BENCH=ON
//         -DHURRAY_BUILD_TESTS=OFF
//   cmake --build build/bench --target hurray_bench
//   ./build/bench/bench/hurray_bench --benchmark_filter='Dequantize|Memcpy'
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "hurray/core/dequantize.hpp"
#include "hurray/core/quantize.hpp"
#include "hurray/core/tensor_view.hpp"

namespace {

// The matrix is n x n with n = state.range(0): 4096 (64 MiB of output, the
// measured case) or 256 (256 KiB, cache-resident: the compute cost alone).
std::vector<float> weights(uint64_t n) {
    std::mt19937 rng(42);
    std::normal_distribution<float> normal(0.0F, 0.02F);
    std::vector<float> w(n * n);
    for (float& x : w) {
        x = normal(rng);
    }
    return w;
}

// Quantizes once per (scheme, size): setup is not what is measured.
template <typename Make>
const hurray::Result<hurray::QuantizedTensor>& cached(const char* scheme, uint64_t n, Make make) {
    static std::map<std::pair<std::string, uint64_t>, hurray::Result<hurray::QuantizedTensor>> cache;
    auto key = std::make_pair(std::string(scheme), n);
    auto it = cache.find(key);
    if (it == cache.end()) {
        it = cache.emplace(key, make(weights(n))).first;
    }
    return it->second;
}

void run(benchmark::State& state, const hurray::Result<hurray::QuantizedTensor>& q) {
    if (!q.ok()) {
        state.SkipWithError(q.error().to_string().c_str());
        return;
    }
    const auto spans = q->spans();
    auto view = hurray::TensorView::make(q->descriptor, spans);
    if (!view.ok()) {
        state.SkipWithError(view.error().to_string().c_str());
        return;
    }
    const auto n = static_cast<uint64_t>(state.range(0));
    std::vector<float> out(n * n);
    for (auto _ : state) {
        auto st = hurray::dequantize(*view, out);
        if (!st.ok()) {
            state.SkipWithError(st.error().to_string().c_str());
            return;
        }
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(out.size() * sizeof(float)));
}

// Per-block affine, int4 storage, blocks of 32 along the rows, float16 scales.
void BM_DequantizePerBlockInt4(benchmark::State& state) {
    const auto n = static_cast<uint64_t>(state.range(0));
    run(state, cached("int4", n, [n](const std::vector<float>& w) {
            return hurray::quantize_per_block(w, {n, n}, hurray::ElementType::kInt4, 1, 32,
                                              hurray::ElementType::kFloat16, true);
        }));
}


// The same, asymmetric (int32 zero points).
void BM_DequantizePerBlockInt4Asymmetric(benchmark::State& state) {
    const auto n = static_cast<uint64_t>(state.range(0));
    run(state, cached("int4-asym", n, [n](const std::vector<float>& w) {
            return hurray::quantize_per_block(w, {n, n}, hurray::ElementType::kInt4, 1, 32,
                                              hurray::ElementType::kFloat16, false);
        }));
}


// NF4, blocks of 64 along the rows.
void BM_DequantizeNf4(benchmark::State& state) {
    const auto n = static_cast<uint64_t>(state.range(0));
    run(state, cached("nf4", n, [n](const std::vector<float>& w) { return hurray::quantize_nf4(w, {n, n}, 1, 64); }));
}


// The limit: memcpy of the output size (64 MiB for n = 4096).
void BM_MemcpyOutput(benchmark::State& state) {
    const auto n = static_cast<size_t>(state.range(0));
    std::vector<float> src(n * n, 1.0F);
    std::vector<float> dst(n * n);
    for (auto _ : state) {
        std::memcpy(dst.data(), src.data(), dst.size() * sizeof(float));
        benchmark::DoNotOptimize(dst.data());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(dst.size() * sizeof(float)));
}


BENCHMARK(BM_DequantizePerBlockInt4)->Arg(4096)->Arg(256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DequantizePerBlockInt4Asymmetric)->Arg(4096)->Arg(256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DequantizeNf4)->Arg(4096)->Arg(256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MemcpyOutput)->Arg(4096)->Arg(256)->Unit(benchmark::kMicrosecond);

}  // namespace
