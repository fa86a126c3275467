// SPDX-License-Identifier: Apache-2.0
// Listing a file (issue 28): open + enumerate an HRRYFILE container with and
// without its descriptor table, each against floors measured in the same
// iterations.
//
//   build/gcc/bench/hurray_bench --benchmark_filter=List
//
// Files go to $TMPDIR (default /tmp) and are deleted when their benchmark ends.
//
//   BM_List/N/T  FileReader::open with the default options, then the name,
//                element type, shape and data offset of every tensor, each
//                descriptor decoded and validated (FileReader::descriptor: one
//                decode per distinct descriptor, kept, each entry checked against
//                it); no data is touched. N tensors (291: the LLM-like file of ~1 GiB;
//                100,000 and 1,000,000: uint8[16] tensors, 4 KiB data
//                alignment, the 1M file ~8 GiB, written on demand and deleted
//                after; HURRAY_BENCH_META_MAX=100000 skips it). T = 1: the file
//                has a descriptor table (the writer's default); T = 0: written
//                with FileWriterOptions::descriptor_table = false, as the
//                reference and other writers write.
//   Floors, each timed in the same iterations, in an order that rotates (open + fstat ... close):
//     tail_us   one pread of the header and one of the tail (KV section, index
//               and trailer, the table included), checksummed: what any reader
//               that lists from the tail pays. With a table, x_tail is
//               hurray / tail.
//     pread_us  the same plus one pread per descriptor into one buffer: the
//               limit for a file without a table. x_pread = hurray / pread.
//     touch_us  mmap, a checksum over the index and every descriptor through
//               the mapping (one page fault per descriptor page): what listing
//               cost before this issue. x_touch = hurray / touch.
//     mmap_us   mmap + munmap, no byte touched.
//     checks_us the least any lister that validates does, through a mapping as
//               libhurray reads a large tail: the CRC-32C of the index, every
//               byte of the KV section (the table) read once, and one insert per
//               name into an open-addressing set (32-bit slots holding a hash tag
//               only, prefetched; no name compared, no descriptor decoded, no
//               offset checked): a lower bound, not a reader. x_checks = hurray
//               / checks.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <span>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "bench_files.hpp"
#include "bench_support.hpp"
#include "hurray/io/crc32c.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"

namespace {

using hurray_bench::now_s;
using hurray_bench::sum_words;

/// Where the bytes a lister reads lie, taken from the file before timing.
struct Layout {
    uint64_t tail_offset = 0;  // the first byte of the KV section or index
    uint64_t index_offset = 0;
    uint64_t index_length = 0;
    uint64_t kv_offset = 0;
    uint64_t kv_length = 0;
    std::vector<std::pair<uint64_t, uint32_t>> descriptors;
    uint64_t descriptor_bytes = 0;
};

/// pread of exactly out.size() bytes at `offset`.
bool pread_all(int fd, uint8_t* out, size_t n, uint64_t offset) {
    size_t done = 0;
    while (done < n) {
        const ssize_t r = ::pread(fd, out + done, n - done, static_cast<off_t>(offset + done));
        if (r <= 0) {
            return false;
        }
        done += static_cast<size_t>(r);
    }
    return true;
}

/// The tail floor (`each_descriptor` false) or the pread floor (true).
uint64_t pread_floor(const std::string& path, const Layout& l, bool each_descriptor) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0) {
        return 0;
    }
    const auto size = static_cast<uint64_t>(st.st_size);
    std::array<uint8_t, 64> header{};
    std::vector<uint8_t> tail(static_cast<size_t>(size - l.tail_offset));
    uint64_t acc = 0;
    if (pread_all(fd, header.data(), header.size(), 0) && pread_all(fd, tail.data(), tail.size(), l.tail_offset)) {
        acc = sum_words(header.data(), header.size()) + sum_words(tail.data(), tail.size());
        if (each_descriptor) {
            std::vector<uint8_t> d(static_cast<size_t>(l.descriptor_bytes));
            size_t at = 0;
            for (const auto& [off, len] : l.descriptors) {
                if (!pread_all(fd, d.data() + at, len, off)) {
                    break;
                }
                at += len;
            }
            acc += sum_words(d.data(), d.size());
        }
    }
    ::close(fd);
    return acc;
}

/// The checks floor (see the file comment): CRC-32C of the index, the KV section read
/// once, a hash-tag insert per name; through a mapping of the file.
uint64_t checks_floor(const std::string& path, const Layout& l) {
    const hurray_bench::MappedFile file(path);
    uint64_t acc = 0;
    if (const uint8_t* base = file.base(); base != nullptr && l.index_length >= 8) {
        const uint8_t* index = base + l.index_offset;
        acc = hurray::crc32c(std::span<const uint8_t>(index, static_cast<size_t>(l.index_length)));
        acc += sum_words(base + l.kv_offset, static_cast<size_t>(l.kv_length));
        uint64_t count = 0;
        std::memcpy(&count, index, 8);
        size_t cap = 16;
        while (cap < 2 * count) {
            cap *= 2;
        }
        std::vector<uint32_t> slots(cap);
        const size_t mask = cap - 1;
        constexpr size_t kAhead = 16;
        std::array<uint64_t, kAhead> ahead{};
        size_t at = 8;       // the next entry to hash
        size_t hashed = 0;   // entries hashed so far
        const auto hash_next = [&] {
            uint16_t len = 0;
            std::memcpy(&len, index + at, 2);
            uint64_t h = 0x9E3779B97F4A7C15ULL * (len + 1U);
            size_t k = 0;
            for (; k + 8 <= len; k += 8) {
                uint64_t w = 0;
                std::memcpy(&w, index + at + 2 + k, 8);
                h = std::rotl((h ^ w) * 0x9E3779B97F4A7C15ULL, 29);
            }
            for (; k < len; ++k) {
                h = (h ^ index[at + 2 + k]) * 0x100000001B3ULL;
            }
            h ^= h >> 31U;
            at += 2 + size_t{len} + 32;  // name_length, name, the 32 bytes of fixed fields
            ahead[hashed % kAhead] = h;
            __builtin_prefetch(&slots[static_cast<size_t>(h) & mask], 1);
            ++hashed;
        };
        while (hashed < count && hashed < kAhead && at + 34 <= l.index_length) {
            hash_next();
        }
        for (size_t i = 0; i < hashed; ++i) {
            const uint64_t h = ahead[i % kAhead];
            const auto tag = static_cast<uint32_t>(h >> 32U) | 1U;
            size_t k = static_cast<size_t>(h) & mask;
            while (slots[k] != 0 && slots[k] != tag) {
                k = (k + 1) & mask;
            }
            acc += slots[k] == tag ? 1 : 0;  // a tag seen before: a real reader compares names
            slots[k] = tag;
            if (hashed < count && at + 34 <= l.index_length) {
                hash_next();
            }
        }
    }
    return acc;
}

/// The touch floor (`touch` true) or the bare mapping (false).
uint64_t mmap_floor(const std::string& path, const Layout& l, bool touch) {
    const hurray_bench::MappedFile file(path);
    uint64_t acc = 0;
    if (const uint8_t* base = file.base(); base != nullptr && touch) {
        acc = sum_words(base + l.tail_offset, file.size() - l.tail_offset);
        for (const auto& [off, len] : l.descriptors) {
            acc += sum_words(base + off, len);
        }
    }
    return acc;
}

void BM_List(benchmark::State& state) {
    const int64_t n = state.range(0);
    const bool table = state.range(1) != 0;
    if (static_cast<uint64_t>(n) > hurray_bench::max_tensors()) {
        state.SkipWithError("skipped (HURRAY_BENCH_META_MAX)");
        return;
    }
    hurray::FileWriterOptions wo;
    wo.descriptor_table = table;
    const std::string path = hurray_bench::tmp_path(hurray_bench::numbered("list_", static_cast<uint64_t>(n),
                                                                           table ? "_t.hrry" : ".hrry"));
    const bool written = n == hurray_bench::kLlmLike ? hurray_bench::write_llm_like(path, wo)
                                                     : hurray_bench::write_small(path, static_cast<uint64_t>(n), wo);
    if (!written) {
        ::unlink(path.c_str());
        state.SkipWithError("could not write the file");
        return;
    }
    Layout layout;
    uint64_t table_bytes = 0;
    {
        auto file = hurray::FileReader::open(path);
        if (!file.ok()) {
            state.SkipWithError(file.error().to_string().c_str());
            ::unlink(path.c_str());
            return;
        }
        layout.tail_offset = file->trailer().index_offset;
        layout.index_offset = file->trailer().index_offset;
        layout.index_length = file->trailer().index_length;
        layout.kv_offset = file->trailer().kv_offset;
        layout.kv_length = file->trailer().kv_length;
        if (file->trailer().kv_length > 0) {
            layout.tail_offset = std::min(layout.tail_offset, file->trailer().kv_offset);
        }
        for (size_t i = 0; i < file->tensor_count(); ++i) {
            layout.descriptors.emplace_back(file->entry(i).descriptor_offset, file->entry(i).descriptor_length);
            layout.descriptor_bytes += file->entry(i).descriptor_length;
        }
        table_bytes = file->descriptor_table_bytes().value_or(0);
        if ((table_bytes != 0) != table) {
            state.SkipWithError("the file's descriptor table is not as written");
            ::unlink(path.c_str());
            return;
        }
    }
    // The six measurements, run in an order that rotates with each iteration: what
    // runs just before one (the unmapping of a 1 GiB mapping, a walk of its pages)
    // shifts its time by 10-30%, so no one always runs first or after the same one.
    std::array<double, 6> t{};  // hurray, tail, pread, touch, mmap, checks
    uint64_t check = 0;
    bool failed = false;
    const auto list_once = [&]() {
        auto file = hurray::FileReader::open(path);
        if (!file.ok()) {
            state.SkipWithError(file.error().to_string().c_str());
            failed = true;
            return;
        }
        uint64_t acc = 0;
        for (size_t i = 0; i < file->tensor_count(); ++i) {
            const hurray::IndexEntry& e = file->entry(i);
            auto d = file->descriptor(i);
            if (!d.ok()) {
                state.SkipWithError(d.error().to_string().c_str());
                failed = true;
                return;
            }
            const hurray::TensorDescriptor& desc = **d;
            acc += e.name.size() + static_cast<uint64_t>(desc.element_type) + e.data_offset;
            for (const uint64_t dim : desc.shape) {
                acc += dim;
            }
        }
        benchmark::DoNotOptimize(acc);
        check += acc;
    };
    size_t round = 0;
    for (auto _ : state) {
        double t_this = 0;
        for (size_t k = 0; k < t.size() && !failed; ++k) {
            const size_t which = (round + k) % t.size();
            const double t0 = now_s();
            switch (which) {
                case 0:
                    list_once();
                    break;
                case 1:
                    benchmark::DoNotOptimize(pread_floor(path, layout, false));
                    break;
                case 2:
                    benchmark::DoNotOptimize(pread_floor(path, layout, true));
                    break;
                case 3:
                    benchmark::DoNotOptimize(mmap_floor(path, layout, true));
                    break;
                case 4:
                    benchmark::DoNotOptimize(mmap_floor(path, layout, false));
                    break;
                default:
                    benchmark::DoNotOptimize(checks_floor(path, layout));
                    break;
            }
            const double dt = now_s() - t0;
            t[which] += dt;
            if (which == 0) {
                t_this = dt;
            }
        }
        if (failed) {
            break;
        }
        ++round;
        state.SetIterationTime(t_this);
    }
    const double t_hurray = t[0];
    const double t_tail = t[1];
    const double t_pread = t[2];
    const double t_touch = t[3];
    const double t_mmap = t[4];
    const double t_checks = t[5];
    benchmark::DoNotOptimize(check);
    ::unlink(path.c_str());
    const auto iters = static_cast<double>(state.iterations());
    state.counters["tensors"] = static_cast<double>(n);
    state.counters["table_bytes"] = static_cast<double>(table_bytes);
    state.counters["ns_per_tensor"] = t_hurray / iters * 1e9 / static_cast<double>(n);
    state.counters["tail_us"] = t_tail / iters * 1e6;
    state.counters["pread_us"] = t_pread / iters * 1e6;
    state.counters["touch_us"] = t_touch / iters * 1e6;
    state.counters["mmap_us"] = t_mmap / iters * 1e6;
    state.counters["checks_us"] = t_checks / iters * 1e6;
    state.counters["x_checks"] = t_hurray / t_checks;
    state.counters["x_tail"] = t_hurray / t_tail;
    state.counters["x_pread"] = t_hurray / t_pread;
    state.counters["x_touch"] = t_hurray / t_touch;
}

BENCHMARK(BM_List)
    ->Args({hurray_bench::kLlmLike, 1})
    ->Args({hurray_bench::kLlmLike, 0})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->Iterations(200);
BENCHMARK(BM_List)->Args({100000, 1})->Args({100000, 0})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(20);
BENCHMARK(BM_List)->Args({1000000, 1})->Args({1000000, 0})->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
