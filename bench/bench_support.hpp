// SPDX-License-Identifier: Apache-2.0
// Small pieces the benchmarks share: a wall clock, sizes from the environment, a
// dense byte tensor with patterned data, and for the stream benchmarks a pipe or
// TCP loopback channel and the report against a raw copy.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include "hurray/core/builder.hpp"

namespace hurray_bench {

/// Seconds on the steady clock.
inline double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// A file path for `name` in $TMPDIR (else /tmp), unique to this process.
inline std::string tmp_path(const std::string& name) {
    const char* dir = std::getenv("TMPDIR");
    std::string s(dir != nullptr && *dir != '\0' ? dir : "/tmp");
    s.append("/hurray_bench_");
    s.append(std::to_string(static_cast<uint64_t>(getpid())));
    s.append("_");
    s.append(name);
    return s;
}

/// A file opened, fstat'ed and mapped read-only (MAP_PRIVATE), as a floor that reads
/// through a mapping pays; unmapped and closed when it goes. `base()` is null when the
/// open, fstat or mmap failed.
class MappedFile {
public:
    /// Opens and maps `path`.
    explicit MappedFile(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
        struct stat st {};
        if (fd_ < 0 || ::fstat(fd_, &st) != 0) {
            return;
        }
        size_ = static_cast<size_t>(st.st_size);
        void* m = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
        if (m != MAP_FAILED) {
            base_ = static_cast<const uint8_t*>(m);
        }
    }
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    ~MappedFile() {
        if (base_ != nullptr) {
            ::munmap(const_cast<uint8_t*>(base_), size_);  // NOLINT(cppcoreguidelines-pro-type-const-cast)
        }
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }
    /// The first byte of the mapping, or null.
    [[nodiscard]] const uint8_t* base() const { return base_; }
    /// The file's size.
    [[nodiscard]] size_t size() const { return size_; }

private:
    int fd_;
    size_t size_ = 0;
    const uint8_t* base_ = nullptr;
};

/// The sum of the 64-bit words of the `n` bytes at `p` (two accumulators; tail
/// bytes added one by one): the consume loop of the read benchmarks.
inline uint64_t sum_words(const uint8_t* p, size_t n) {
    uint64_t s0 = 0;
    uint64_t s1 = 0;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        uint64_t a = 0;
        uint64_t b = 0;
        std::memcpy(&a, p + i, 8);
        std::memcpy(&b, p + i + 8, 8);
        s0 += a;
        s1 += b;
    }
    for (; i < n; ++i) {
        s0 += p[i];
    }
    return s0 + s1;
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

/// Megabytes streamed by the stream benchmarks: HURRAY_BENCH_STREAM_MIB (default 1024).
inline uint64_t stream_mib() { return env_mib("HURRAY_BENCH_STREAM_MIB", 1024); }

/// {read end, write end} of a pipe (1 MiB pipe buffer) or a TCP loopback
/// connection (the accepting side reads); {-1, -1} when one cannot be opened.
inline std::pair<int, int> open_channel(bool tcp) {
    if (!tcp) {
        int fds[2] = {-1, -1};
        if (::pipe(fds) != 0) {
            return {-1, -1};
        }
        (void)::fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
        return {fds[0], fds[1]};
    }
    const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||  // NOLINT
        ::listen(listener, 1) != 0 || ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {  // NOLINT
        return {-1, -1};
    }
    const int client = ::socket(AF_INET, SOCK_STREAM, 0);
    if (::connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {  // NOLINT
        return {-1, -1};
    }
    const int server = ::accept(listener, nullptr, nullptr);
    ::close(listener);
    return {server, client};
}

/// Sets the counters of a stream benchmark timed against a raw copy of the
/// same `stream_bytes` per iteration: bytes processed, raw_GBps and
/// vs_raw = raw time / hurray time (1.0: no overhead over the raw copy).
inline void report_vs_raw(benchmark::State& state, uint64_t stream_bytes, double hurray_s, double raw_s) {
    state.SetBytesProcessed(static_cast<int64_t>(stream_bytes * static_cast<uint64_t>(state.iterations())));
    state.counters["raw_GBps"] =
        static_cast<double>(stream_bytes) * static_cast<double>(state.iterations()) / raw_s / 1e9;
    state.counters["vs_raw"] = raw_s / hurray_s;
}

}  // namespace hurray_bench
