// SPDX-License-Identifier: Apache-2.0
// TensorView::materialize throughput against memcpy of the same bytes.
//
//   cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DHURRAY_BUILD_BENCH=ON
//   cmake --build build/bench --target hurray_bench
//   build/bench/bench/hurray_bench --benchmark_filter='View'
//
// Each benchmark reports bytes_per_second (bytes written, per second of the
// thread's CPU time) and the counter vs_memcpy: its throughput divided by
// that of a memcpy of the same 64 MiB timed in the same iterations.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <ctime>
#include <memory>
#include <span>
#include <vector>

#include "hurray/core/builder.hpp"
#include "hurray/core/tensor_view.hpp"

namespace {

constexpr uint64_t kSide = 4096;
constexpr size_t kBytes = kSide * kSide * sizeof(float);  // 64 MiB

/// CPU time of the calling thread, in seconds: unlike wall time, it does not
/// count the time the thread waits for a core on a shared machine.
double thread_seconds() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

/// A 4096 x 4096 float32 tensor over 64 MiB of bytes.
struct Square {
    hurray::TensorDescriptor d;
    std::vector<uint8_t> data;
};

std::unique_ptr<Square> square(hurray::LayoutDescriptor layout) {
    hurray::TensorDescriptor d;
    d.element_type = hurray::ElementType::kFloat32;
    d.shape = {kSide, kSide};
    d.layout = std::move(layout);
    auto sized = hurray::size_buffers(std::move(d));
    if (!sized.ok()) {
        return nullptr;
    }
    auto s = std::make_unique<Square>();
    s->d = std::move(*sized);
    s->data.resize(kBytes);
    for (size_t i = 0; i < kBytes / 4; ++i) {
        const auto f = static_cast<float>(i);
        std::memcpy(s->data.data() + 4 * i, &f, 4);
    }
    return s;
}

/// Times `materialize` of a 4096 x 4096 float32 view with `layout`, and in
/// each iteration also a memcpy of the same 64 MiB (buffers touched
/// beforehand): the iteration time is the materialize time alone, and
/// vs_memcpy is memcpy time over materialize time.
void run_materialize(benchmark::State& state, hurray::LayoutDescriptor layout) {
    auto s = square(std::move(layout));
    if (!s) {
        state.SkipWithError("descriptor");
        return;
    }
    const std::span<const uint8_t> bytes(s->data);
    const std::vector<std::span<const uint8_t>> spans = {bytes};
    auto view = hurray::TensorView::make(s->d, spans);
    if (!view.ok()) {
        state.SkipWithError("view");
        return;
    }
    std::vector<uint8_t> out(kBytes, 0);
    std::vector<uint8_t> copy(kBytes, 0);
    double materialize_s = 0;
    double memcpy_s = 0;
    for (auto _ : state) {
        const double t0 = thread_seconds();
        auto st = view->materialize(out);
        benchmark::ClobberMemory();
        const double t1 = thread_seconds();
        std::memcpy(copy.data(), s->data.data(), kBytes);
        benchmark::ClobberMemory();
        const double t2 = thread_seconds();
        if (!st.ok()) {
            state.SkipWithError("materialize");
            return;
        }
        state.SetIterationTime(t1 - t0);
        materialize_s += t1 - t0;
        memcpy_s += t2 - t1;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::DoNotOptimize(copy.data());
    const auto total = static_cast<double>(state.iterations()) * static_cast<double>(kBytes);
    state.SetBytesProcessed(static_cast<int64_t>(total));
    state.counters["memcpy_GBps"] = total / memcpy_s / 1e9;
    state.counters["vs_memcpy"] = memcpy_s / materialize_s;
}

/// The limit: memcpy of the same 64 MiB.
void BM_ViewMemcpy64MiB(benchmark::State& state) {
    std::vector<uint8_t> src(kBytes, 1);
    std::vector<uint8_t> dst(kBytes, 0);
    for (auto _ : state) {
        const double t0 = thread_seconds();
        std::memcpy(dst.data(), src.data(), kBytes);
        benchmark::ClobberMemory();
        state.SetIterationTime(thread_seconds() - t0);
    }
    benchmark::DoNotOptimize(dst.data());
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(kBytes));
}

/// A transposed view (strides [1, 4096]) to row-major: blocked transposition.
void BM_ViewMaterializeTransposed4096(benchmark::State& state) {
    run_materialize(state, hurray::StridedLayout{{1, static_cast<int64_t>(kSide)}});
}

/// A column-major tensor to row-major: the same copy as the transposed view.
void BM_ViewMaterializeColumnMajor4096(benchmark::State& state) {
    run_materialize(state, hurray::ColumnMajorLayout{});
}

/// A row-major tensor: one memcpy.
void BM_ViewMaterializeRowMajor4096(benchmark::State& state) { run_materialize(state, hurray::RowMajorLayout{}); }

BENCHMARK(BM_ViewMemcpy64MiB)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ViewMaterializeRowMajor4096)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ViewMaterializeTransposed4096)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ViewMaterializeColumnMajor4096)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
