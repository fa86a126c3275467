// SPDX-License-Identifier: Apache-2.0
// libhurray's side of the Rust reference check: lists an HRRYFILE in the line format of
// src/main.rs (the reference's side) so that the two listings compare with diff.
//
//   list FILE
//
// Tensors with FileReader (index order, data from tensor(i).buffers()). KV entries:
// every entry of the KV section as stored, decoded from the raw section with
// decode_kv_section, so that the descriptor table's entry, which FileReader::kv() does
// not list, is listed here as the reference lists it. '#' lines are this side's own
// checks and are not compared. Not built by CMake: run.sh compiles it.
#include <hurray/hurray.hpp>
#include <hurray/io/descriptor_table.hpp>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

uint64_t fnv1a64(uint64_t h, std::span<const uint8_t> b) {
    for (uint8_t c : b) {
        h ^= c;
        h *= 0x00000100000001b3ULL;
    }
    return h;
}
constexpr uint64_t kFnvBasis = 0xcbf29ce484222325ULL;

std::span<const uint8_t> as_bytes(std::string_view s) {
    return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::string hex16(uint64_t v) {
    char b[17];
    std::snprintf(b, sizeof b, "%016" PRIx64, v);
    return b;
}

std::string scalar_line(const hurray::KvValue& v);

template <typename T>
std::string scalar_of(const T& x) {
    if constexpr (std::is_same_v<T, std::string>) {
        return scalar_line(hurray::KvValue::string(x));
    } else if constexpr (std::is_same_v<T, int64_t>) {
        return scalar_line(hurray::KvValue::int64(x));
    } else if constexpr (std::is_same_v<T, uint64_t>) {
        return scalar_line(hurray::KvValue::uint64(x));
    } else if constexpr (std::is_same_v<T, double>) {
        return scalar_line(hurray::KvValue::float64(x));
    } else if constexpr (std::is_same_v<T, bool>) {
        return scalar_line(hurray::KvValue::boolean(x));
    } else {
        return scalar_line(hurray::KvValue::bytes(x));
    }
}

std::string scalar_line(const hurray::KvValue& v) {
    if (auto* s = v.as_string()) return "string len=" + std::to_string(s->size()) + " fnv=" + hex16(fnv1a64(kFnvBasis, as_bytes(*s)));
    if (auto* x = v.as_int64()) return "int64 " + std::to_string(*x);
    if (auto* x = v.as_uint64()) return "uint64 " + std::to_string(*x);
    if (auto* x = v.as_float64()) {
        uint64_t bits;
        std::memcpy(&bits, x, 8);
        return "float64 bits=" + hex16(bits);
    }
    if (auto* x = v.as_bool()) return std::string("bool ") + (*x ? "1" : "0");
    if (auto* b = v.as_bytes()) return "bytes len=" + std::to_string(b->size()) + " fnv=" + hex16(fnv1a64(kFnvBasis, *b));
    if (auto* a = v.as_array()) {
        static const char* const kElem[] = {"string", "int64", "uint64", "float64", "bool", "bytes"};
        std::string joined;
        size_t count = 0;
        std::visit(
            [&](const auto& vec) {
                for (const auto& e : vec) {
                    using E = std::decay_t<decltype(vec[0])>;
                    if (count++ != 0) joined += '\n';
                    joined += scalar_of<E>(E(e));
                }
            },
            a->values);
        return std::string("array elem=") + (count == 0 ? "?" : kElem[a->values.index()]) +
               " count=" + std::to_string(count) + " fnv=" + hex16(fnv1a64(kFnvBasis, as_bytes(joined)));
    }
    return "other tag=" + std::to_string(v.tag());
}

std::string shape_text(std::span<const uint64_t> dims) {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) {
        if (i != 0) s += ',';
        s += dims[i] == hurray::kDynamicDim ? std::string("?") : std::to_string(dims[i]);
    }
    return s + "]";
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: list FILE\n");
        return 2;
    }
    auto file = hurray::FileReader::open(argv[1]);
    if (!file) {
        std::printf("error %s\n", file.error().to_string().c_str());
        return 1;
    }
    std::printf("tensors %zu\n", file->tensor_count());
    for (size_t i = 0; i < file->tensor_count(); ++i) {
        const hurray::IndexEntry& e = file->entry(i);
        auto t = file->tensor(i);
        if (!t) {
            std::printf("error %s\n", t.error().to_string().c_str());
            return 1;
        }
        const hurray::TensorDescriptor& d = t->descriptor();
        std::string sizes;
        uint64_t h = kFnvBasis;
        for (const hurray::SharedBuffer& b : t->buffers()) {
            if (!sizes.empty()) sizes += ',';
            sizes += std::to_string(b.size());
            h = fnv1a64(h, b.span());
        }
        std::printf("tensor %zu %.*s dtype=0x%02x shape=%s layout=0x%02x buffers=[%s] data_length=%" PRIu64
                    " fnv=%s\n",
                    i, static_cast<int>(e.name.size()), e.name.data(), static_cast<unsigned>(d.element_type),
                    shape_text(d.shape).c_str(), static_cast<unsigned>(hurray::layout_tag(d.layout)), sizes.c_str(),
                    e.data_length, hex16(h).c_str());
    }
    if (auto s = file->check_all(); !s) {
        std::printf("error check_all: %s\n", s.error().to_string().c_str());
        return 1;
    }

    // The KV section as stored.
    const hurray::FileTrailer& tr = file->trailer();
    hurray::KvMetadata all;
    if (tr.kv_offset != 0 && tr.kv_length != 0) {
        std::vector<uint8_t> raw(tr.kv_length);
        std::ifstream in(argv[1], std::ios::binary);
        in.seekg(static_cast<std::streamoff>(tr.kv_offset));
        if (!in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(raw.size()))) {
            std::printf("error reading the KV section\n");
            return 1;
        }
        auto kv = hurray::decode_kv_section(raw, tr.kv_offset);
        if (!kv) {
            std::printf("error %s\n", kv.error().to_string().c_str());
            return 1;
        }
        all = std::move(*kv);
    }
    std::printf("kv %zu\n", all.size());
    size_t user = 0;
    bool hidden_ok = true;
    for (const hurray::KvEntry& e : all.entries()) {
        std::printf("kv %s %s\n", e.key.c_str(), scalar_line(e.value).c_str());
        if (e.key != hurray::kDescriptorTableKey) {
            const hurray::KvValue* mine = file->kv().find(e.key);
            hidden_ok = hidden_ok && mine != nullptr && *mine == e.value;
            ++user;
        }
    }
    hidden_ok = hidden_ok && user == file->kv().size() && !file->kv().contains(hurray::kDescriptorTableKey);
    auto table = file->descriptor_table_bytes();
    const hurray::KvValue* stored = all.find(hurray::kDescriptorTableKey);
    std::printf("# libhurray: table %s, kv() lists %zu entries = the stored ones without the table: %s\n",
                table ? ("in use, " + std::to_string(*table) + " bytes").c_str() : "not in use", file->kv().size(),
                hidden_ok ? "ok" : "BAD");
    const bool consistent = (stored != nullptr) == table.has_value() &&
                            (stored == nullptr || (stored->as_bytes() != nullptr && stored->as_bytes()->size() == *table));
    if (!hidden_ok || !consistent) {
        std::printf("error libhurray's KV view or table use is not the stored entry's\n");
        return 1;
    }
    return 0;
}
