// SPDX-License-Identifier: Apache-2.0
// Small pieces the benchmarks share: a wall clock, sizes from the environment, and a
// dense byte tensor with patterned data.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <array>
#include <span>
#include <vector>

#include <benchmark/benchmark.h>

#include "hurray/core/builder.hpp"

namespace hurray_bench {

/// Seconds on the steady clock.
inline double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// The positive integer in environment variable `name`, else `fallback` (sizes in MiB).
inline uint64_t env_mib(const char* name, uint64_t fallback) {
    const char* v = std::getenv(name);
    const long n = v != nullptr ? std::strtol(v, nullptr, 10) : 0;
    return n > 0 ? static_cast<uint64_t>(n) : fallback;
}

/// A dense uint8 tensor of `n` elements and its data, byte i = i * mul + add.
struct ByteTensor {
    hurray::TensorDescriptor desc;
    std::vector<uint8_t> data;
    /// The buffer table's one buffer, for the writers.
    [[nodiscard]] std::array<std::span<const uint8_t>, 1> buffers() const { return {data}; }
};

/// See ByteTensor; nullopt when the descriptor cannot be built.
inline std::optional<ByteTensor> byte_tensor(uint64_t n, uint8_t mul, uint8_t add) {
    auto desc = hurray::make_dense(hurray::ElementType::kUInt8, {n});
    if (!desc.ok()) {
        return std::nullopt;
    }
    ByteTensor t{std::move(*desc), std::vector<uint8_t>(n)};
    for (size_t i = 0; i < t.data.size(); ++i) {
        t.data[i] = static_cast<uint8_t>(i * mul + add);
    }
    return t;
}

/// byte_tensor(n, mul, add), marking `state` skipped when it cannot be built.
inline std::optional<ByteTensor> byte_tensor(benchmark::State& state, uint64_t n, uint8_t mul, uint8_t add) {
    auto t = byte_tensor(n, mul, add);
    if (!t) {
        state.SkipWithError("descriptor");
    }
    return t;
}

}  // namespace hurray_bench
