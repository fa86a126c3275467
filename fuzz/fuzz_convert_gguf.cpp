// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: hurray::convert::open_gguf on untrusted bytes (in a memfd, as open_gguf
// maps a path: fuzz_support.hpp), then write_gguf of what opened.
//
// Properties:
//  - every error carries a code and a message;
//  - the same bytes behind a range source (open_gguf(RangeSource), for remote files)
//    open exactly when the path does, failing with the same code and offset, with the
//    same names and KV, and the same bytes wherever the descriptors agree;
//  - whatever opens is read completely: every buffer of every tensor through read(), and
//    view() gives the same bytes where it exists;
//  - what opens is written back (write_gguf), and the copy opens again with the same KV,
//    the same descriptors and the same bytes in every buffer.
// A violated property traps.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "hurray/convert/gguf.hpp"
#include "hurray/io/range_source.hpp"

namespace {

void require(bool ok) {
    if (!ok) {
        __builtin_trap();
    }
}

std::filesystem::path scratch(const char* what) {
    const std::filesystem::path dir = std::filesystem::exists("/dev/shm") ? "/dev/shm" : "/tmp";
    return dir / ("fuzz_convert_gguf_" + std::to_string(::getpid()) + what);
}

std::vector<uint8_t> read_all(const hurray::convert::TensorSource& src, size_t i, size_t b) {
    const uint64_t size = src.tensor(i).descriptor.buffers[b].byte_size;
    std::vector<uint8_t> out(static_cast<size_t>(size));
    // Two pieces, so that reads starting inside a buffer are exercised too.
    const size_t half = out.size() / 2;
    require(src.read(i, b, 0, std::span<uint8_t>(out.data(), half)).ok());
    require(src.read(i, b, half, std::span<uint8_t>(out.data() + half, out.size() - half)).ok());
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > (size_t{1} << 20)) {
        return 0;
    }
    const std::filesystem::path out = scratch(".out.gguf");
    // SAFETY: libFuzzer passes `size` readable bytes at `data` (data may be null when size is 0).
    const hurray::fuzz::InputFile in(std::span<const uint8_t>(data, size));
    if (!in.ok()) {
        return 0;
    }
    auto src = hurray::convert::open_gguf(in.path());
    // The same bytes behind a range source (a remote file): it opens exactly when the
    // path does, with the same error code and offset, and the same names and KV.
    auto ranged = hurray::convert::open_gguf(std::make_shared<hurray::MemoryRangeSource>(
        std::vector<uint8_t>(data, data + size)));
    require(src.ok() == ranged.ok());
    if (!src) {
        require(src.error().code() != hurray::ErrorCode::kOk && !src.error().message().empty());
        require(ranged.error().code() == src.error().code() && ranged.error().offset() == src.error().offset());
        return 0;
    }
    const auto& s = **src;
    const auto& r = **ranged;
    require(r.tensor_count() == s.tensor_count() && r.kv() == s.kv());
    for (size_t i = 0; i < s.tensor_count(); ++i) {
        require(r.tensor(i).name == s.tensor(i).name);
        for (size_t b = 0; b < s.tensor(i).descriptor.buffers.size(); ++b) {
            const auto bytes = read_all(s, i, b);
            if (auto v = s.view(i, b)) {
                require(std::vector<uint8_t>(v->begin(), v->end()) == bytes);
            }
            if (r.tensor(i).descriptor == s.tensor(i).descriptor) {
                require(read_all(r, i, b) == bytes);
            }
        }
    }
    hurray::convert::ConvertOptions opt;
    opt.durable = false;
    opt.chunk_bytes = 64;
    const auto st = hurray::convert::write_gguf(s, out, opt);
    if (!st.ok()) {
        std::fprintf(stderr, "write_gguf: %s\n", st.error().to_string().c_str());
        require(false);
    }
    auto back = hurray::convert::open_gguf(out);
    if (!back.ok()) {
        std::fprintf(stderr, "open_gguf(copy): %s\n", back.error().to_string().c_str());
        require(false);
    }
    const auto& t = **back;
    require(t.kv() == s.kv());
    require(t.tensor_count() == s.tensor_count());
    for (size_t i = 0; i < s.tensor_count(); ++i) {
        require(t.tensor(i).name == s.tensor(i).name);
        require(t.tensor(i).descriptor == s.tensor(i).descriptor);
        for (size_t b = 0; b < s.tensor(i).descriptor.buffers.size(); ++b) {
            require(read_all(t, i, b) == read_all(s, i, b));
        }
    }
    std::error_code ec;
    std::filesystem::remove(out, ec);
    return 0;
}
