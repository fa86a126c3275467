// SPDX-License-Identifier: Apache-2.0
// hurray_remote_bench: the hurray side of bench/remote_bench.sh, which starts
// nginx on 127.0.0.1, runs this program and curl against the same URLs and
// prints the ratios (see that script).
//
//   hurray_remote_bench make-many OUT N     N tensors uint8[16] (one per 4 KiB page)
//   hurray_remote_bench make-big OUT MIB    float32 tensors of 64 MiB, MIB in all
//   hurray_remote_bench list URL            open + every descriptor decoded (the
//                                           default DescriptorCheck::kPeek, then
//                                           check_all): requests, bytes received,
//                                           index + descriptor bytes, seconds
//   hurray_remote_bench tensor URL NAME     one tensor fetched whole into memory:
//                                           seconds (and with the open), its
//                                           data range, requests after open
//   hurray_remote_bench range URL OFF LEN   HttpRangeSource::read of that range
//                                           into a reused (warm) buffer: best of 5
//
// Output: one line of key=value pairs per measurement, for the script.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hurray/core/builder.hpp"
#include "hurray/http/http_range_source.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"

namespace {

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int fail(const std::string& what) {
    std::fprintf(stderr, "hurray_remote_bench: %s\n", what.c_str());
    return 1;
}

int make_many(const std::string& out, uint64_t n) {
    auto desc = hurray::make_dense(hurray::ElementType::kUInt8, {16});
    if (!desc.ok()) {
        return fail(desc.error().to_string());
    }
    std::vector<uint8_t> data(16);
    for (size_t i = 0; i < data.size(); ++i) {
        data[i] = static_cast<uint8_t>(i * 131 + 7);
    }
    auto w = hurray::FileWriter::create_file(out);
    if (!w.ok()) {
        return fail(w.error().to_string());
    }
    const std::span<const uint8_t> buffers[] = {data};
    for (uint64_t i = 0; i < n; ++i) {
        if (auto s = w->add_tensor("model.layers." + std::to_string(i) + ".weight", *desc, buffers); !s.ok()) {
            return fail(s.error().to_string());
        }
    }
    if (auto s = w->kv().set("general.architecture", hurray::KvValue::string("bench")); !s.ok()) {
        return fail(s.error().to_string());
    }
    if (auto s = w->finish(); !s.ok()) {
        return fail(s.error().to_string());
    }
    return 0;
}

int make_big(const std::string& out, uint64_t mib) {
    constexpr uint64_t kTensorMiB = 64;
    const uint64_t elements = kTensorMiB * 1024 * 1024 / 4;
    auto desc = hurray::make_dense(hurray::ElementType::kFloat32, {elements});
    if (!desc.ok()) {
        return fail(desc.error().to_string());
    }
    std::vector<uint8_t> data(kTensorMiB * 1024 * 1024);
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (size_t i = 0; i < data.size(); i += 8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        std::memcpy(data.data() + i, &x, 8);
    }
    auto w = hurray::FileWriter::create_file(out);
    if (!w.ok()) {
        return fail(w.error().to_string());
    }
    const std::span<const uint8_t> buffers[] = {data};
    for (uint64_t i = 0; i < mib / kTensorMiB; ++i) {
        data[0] = static_cast<uint8_t>(i);
        if (auto s = w->add_tensor("t" + std::to_string(i), *desc, buffers); !s.ok()) {
            return fail(s.error().to_string());
        }
    }
    if (auto s = w->finish(); !s.ok()) {
        return fail(s.error().to_string());
    }
    return 0;
}

hurray::http::HttpOptions http_options() {
    hurray::http::HttpOptions o;
    if (const char* budget = std::getenv("HURRAY_BENCH_RANGE_HEADER_BYTES")) {
        o.max_range_header_bytes = std::strtoull(budget, nullptr, 10);
    }
    if (const char* parallel = std::getenv("HURRAY_BENCH_PARALLEL")) {
        o.parallel = static_cast<unsigned>(std::strtoul(parallel, nullptr, 10));
    }
    return o;
}

int list(const std::string& url) {
    const double t0 = now_s();
    auto src = hurray::http::HttpRangeSource::open(url, http_options());
    if (!src.ok()) {
        return fail(src.error().to_string());
    }
    auto file = hurray::FileReader::open(*src);
    if (!file.ok()) {
        return fail(file.error().to_string());
    }
    if (auto s = file->check_all(); !s.ok()) {
        return fail(s.error().to_string());
    }
    const double seconds = now_s() - t0;
    uint64_t descriptor_bytes = 0;
    for (size_t i = 0; i < file->tensor_count(); ++i) {
        descriptor_bytes += file->entry(i).descriptor_length;
    }
    std::printf("tensors=%zu requests=%llu bytes=%llu index_bytes=%llu descriptor_bytes=%llu seconds=%.4f\n",
                file->tensor_count(), static_cast<unsigned long long>((*src)->request_count()),
                static_cast<unsigned long long>((*src)->bytes_received()),
                static_cast<unsigned long long>(file->trailer().index_length),
                static_cast<unsigned long long>(descriptor_bytes), seconds);
    return 0;
}

int tensor(const std::string& url, const std::string& name) {
    const double t_open = now_s();
    auto src = hurray::http::HttpRangeSource::open(url, http_options());
    if (!src.ok()) {
        return fail(src.error().to_string());
    }
    hurray::FileReadOptions lazy;
    lazy.descriptors = hurray::DescriptorCheck::kLazy;
    auto file = hurray::FileReader::open(*src, lazy);
    if (!file.ok()) {
        return fail(file.error().to_string());
    }
    const uint64_t before = (*src)->request_count();
    const double t0 = now_s();
    auto t = file->tensor(name);
    if (!t.ok()) {
        return fail(t.error().to_string());
    }
    const double seconds = now_s() - t0;
    const hurray::IndexEntry& e = t->entry();
    std::printf("data_offset=%llu data_length=%llu requests=%llu seconds=%.4f with_open=%.4f\n",
                static_cast<unsigned long long>(e.data_offset), static_cast<unsigned long long>(e.data_length),
                static_cast<unsigned long long>((*src)->request_count() - before), seconds, now_s() - t_open);
    return 0;
}

/// One range read with HttpRangeSource::read into a buffer the caller reuses (touched
/// before: no page faults), as an engine reading into its own tensor memory does; the
/// best of 5.
int range(const std::string& url, uint64_t offset, uint64_t length) {
    auto src = hurray::http::HttpRangeSource::open(url, http_options());
    if (!src.ok()) {
        return fail(src.error().to_string());
    }
    std::vector<uint8_t> buffer(static_cast<size_t>(length), 1);
    double best = 1e9;
    for (int run = 0; run < 5; ++run) {
        const double t0 = now_s();
        if (auto s = (*src)->read(offset, buffer); !s.ok()) {
            return fail(s.error().to_string());
        }
        best = std::min(best, now_s() - t0);
    }
    std::printf("seconds=%.4f\n", best);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::vector<std::string> a(argv + 1, argv + argc);
    if (a.size() == 3 && a[0] == "make-many") {
        return make_many(a[1], std::strtoull(a[2].c_str(), nullptr, 10));
    }
    if (a.size() == 3 && a[0] == "make-big") {
        return make_big(a[1], std::strtoull(a[2].c_str(), nullptr, 10));
    }
    if (a.size() == 2 && a[0] == "list") {
        return list(a[1]);
    }
    if (a.size() == 3 && a[0] == "tensor") {
        return tensor(a[1], a[2]);
    }
    if (a.size() == 4 && a[0] == "range") {
        return range(a[1], std::strtoull(a[2].c_str(), nullptr, 10), std::strtoull(a[3].c_str(), nullptr, 10));
    }
    std::fprintf(stderr,
                 "usage: hurray_remote_bench make-many OUT N | make-big OUT MIB | list URL | tensor URL NAME | "
                 "range URL OFFSET LENGTH\n");
    return 2;
}
