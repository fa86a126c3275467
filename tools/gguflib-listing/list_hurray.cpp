// SPDX-License-Identifier: Apache-2.0
// Open + list with libhurray, timed exactly as list_gguf.c times gguflib: the same
// tensors (N float32[4] tensors named model.layers.<i>.weight, one string KV entry),
// written by FileWriter with its default options (a descriptor table) or without a
// table, then ITER times back to back: FileReader::open + for every tensor its index
// entry and FileReader::descriptor (name, type, shape, data offset: every descriptor
// decoded and validated, every entry checked) + close; prints the median in
// microseconds. BM_List (bench/listing_bench.cpp) times the same listing between
// floors that evict the caches; this loop, like list_gguf's, runs hot.
//
//   list_hurray FILE N ITER [notable|v1]
#include <hurray/hurray.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

double now_us() {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool write_file(const std::string& path, uint64_t n, const hurray::FileWriterOptions& options) {
    auto w = hurray::FileWriter::create_file(path, options);
    if (!w.ok()) {
        return false;
    }
    if (!w->kv().set("general.architecture", hurray::KvValue::string("bench")).ok()) {
        return false;
    }
    auto d = hurray::make_dense(hurray::ElementType::kFloat32, {4});
    if (!d.ok()) {
        return false;
    }
    const std::vector<uint8_t> data(16, 0);
    const std::span<const uint8_t> bufs[] = {data};
    for (uint64_t i = 0; i < n; ++i) {
        const std::string name = "model.layers." + std::to_string(i) + ".weight";
        if (!w->add_tensor(name, *d, bufs).ok()) {
            return false;
        }
    }
    return w->finish().ok();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: list_hurray FILE N ITER [notable|v1]\n");
        return 2;
    }
    const std::string path = argv[1];
    const uint64_t n = std::strtoull(argv[2], nullptr, 10);
    const int iter = std::atoi(argv[3]);
    const std::string variant = argc > 4 ? argv[4] : "";
    hurray::FileWriterOptions options;
    options.descriptor_table = variant != "notable";
    if (variant == "v1") {
        options.descriptor_table_version = hurray::kDescriptorTableVersion1;
    }
    if (iter < 1 || !write_file(path, n, options)) {
        std::fprintf(stderr, "list_hurray: cannot write %s\n", path.c_str());
        return 1;
    }
    std::vector<double> t(static_cast<size_t>(iter));
    uint64_t acc = 0;
    for (double& dt : t) {
        const double t0 = now_us();
        auto file = hurray::FileReader::open(path);
        if (!file.ok()) {
            std::fprintf(stderr, "list_hurray: %s\n", file.error().to_string().c_str());
            return 1;
        }
        for (size_t i = 0; i < file->tensor_count(); ++i) {
            const hurray::IndexEntry& e = file->entry(i);
            auto d = file->descriptor(i);
            if (!d.ok()) {
                std::fprintf(stderr, "list_hurray: %s\n", d.error().to_string().c_str());
                return 1;
            }
            acc += e.name.size() + static_cast<uint64_t>((*d)->element_type) + (*d)->shape[0] + e.data_offset +
                   static_cast<uint8_t>(e.name[0]);
        }
        dt = now_us() - t0;
    }
    std::sort(t.begin(), t.end());
    std::printf("libhurray open+list %llu tensors%s%s: median %.1f us (min %.1f, max %.1f; %d runs; acc %llu)\n",
                static_cast<unsigned long long>(n), variant.empty() ? "" : ", ", variant.c_str(), t[t.size() / 2],
                t.front(), t.back(), iter, static_cast<unsigned long long>(acc));
    std::remove(path.c_str());
    return 0;
}
