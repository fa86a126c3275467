// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the SafeTensors reader (and writer) on untrusted bytes.
//
// The input is opened from memory (the reader's own entry point behind
// open_safetensors, no file), so each run is fast. Whatever opens is enumerated
// completely: every tensor read whole and in two pieces, its view, lookup by name, the
// KV. A source that opens is then written back with write_safetensors (to a temporary
// directory made once, not durable) and reopened. Properties:
//  - every error carries a code, a message and a byte offset within the input;
//  - a tensor's buffer size is what its type and shape need; reads of it succeed (or,
//    for BOOL, fail with kInvalidData naming a byte inside the input); view() gives the
//    bytes read() gives; find(name) finds each tensor at its own index;
//  - the written file reopens with the same names, descriptors, bytes and KV.
// Built with exceptions (like hurray::convert) but none may escape: one would abort.
#include <stdlib.h>  // mkdtemp

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "convert/safetensors_internal.hpp"
#include "hurray/io/read_only_file.hpp"
#include "hurray/convert/safetensors.hpp"

namespace {

using hurray::ErrorCode;
using hurray::convert::TensorSource;

void require(bool ok) {
    if (!ok) {
        __builtin_trap();
    }
}

/// A directory for the written files, made once and removed at exit.
const std::filesystem::path& scratch_dir() {
    static const std::filesystem::path dir = [] {
        std::string tmpl =
            (std::filesystem::temp_directory_path() / "fuzz-safetensors-XXXXXX").string();
        require(::mkdtemp(tmpl.data()) != nullptr);
        std::atexit([] {
            std::error_code ec;
            std::filesystem::remove_all(scratch_dir(), ec);
        });
        return std::filesystem::path(tmpl);
    }();
    return dir;
}

/// Reads every tensor of `src`; returns their bytes (empty for BOOL tensors that fail
/// with kInvalidData, which `readable` then marks false).
std::vector<std::vector<uint8_t>> read_all(const TensorSource& src, uint64_t input_size,
                                           std::vector<bool>& readable) {
    std::vector<std::vector<uint8_t>> all;
    readable.assign(src.tensor_count(), true);
    for (size_t i = 0; i < src.tensor_count(); ++i) {
        const auto& t = src.tensor(i);
        require(t.descriptor.buffers.size() == 1);
        const auto count = hurray::element_count(t.descriptor.shape);
        require(count.ok());
        const auto need = hurray::storage_bytes(t.descriptor.element_type, *count);
        require(need.ok() && *need == t.descriptor.buffers[0].byte_size);
        require(*need <= input_size);  // every byte presented comes from the input
        const auto found = src.find(t.name);
        require(found.has_value() && *found == i);

        std::vector<uint8_t> whole(*need);
        const auto s = src.read(i, 0, 0, whole);
        if (!s.ok()) {
            require(t.descriptor.element_type == hurray::ElementType::kBool &&
                    s.error().code() == ErrorCode::kInvalidData && s.error().offset() < input_size);
            readable[i] = false;
            all.emplace_back();
            continue;
        }
        if (whole.size() > 1) {
            std::vector<uint8_t> pieces(whole.size());
            const size_t half = whole.size() / 2;
            require(src.read(i, 0, 0, std::span<uint8_t>(pieces.data(), half)).ok());
            require(
                src.read(i, 0, half, std::span<uint8_t>(pieces.data() + half, pieces.size() - half))
                    .ok());
            require(pieces == whole);
        }
        if (const auto v = src.view(i, 0)) {
            require(std::vector<uint8_t>(v->begin(), v->end()) == whole);
        }
        std::vector<uint8_t> past(1);
        require(!src.read(i, 0, *need, past).ok());
        all.push_back(std::move(whole));
    }
    return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::span<const uint8_t> input(data, size);
    auto src = hurray::convert::detail::open_safetensors_file(
        hurray::ReadOnlyFile::memory(input));
    if (!src.ok()) {
        const auto& e = src.error();
        require(e.code() != ErrorCode::kOk && !e.message().empty());
        require(e.has_offset() && e.offset() <= size);
        return 0;
    }
    std::vector<bool> readable;
    const auto bytes = read_all(**src, size, readable);
    for (const bool r : readable) {
        if (!r) {
            return 0;  // a BOOL byte other than 0/1: nothing to write back
        }
    }

    hurray::convert::ConvertOptions opt;
    opt.durable = false;
    opt.chunk_bytes = 7;  // odd chunks: every boundary case of the copy and the unpacking
    const auto out = scratch_dir() / "out.safetensors";
    const auto w = hurray::convert::write_safetensors(**src, out, opt);
    if (!w.ok()) {
        // Only what SafeTensors cannot hold is refused: a name or key that is not UTF-8.
        require(w.error().code() == ErrorCode::kInvalidName);
        return 0;
    }
    auto back = hurray::convert::open_safetensors(out);
    require(back.ok());
    require((*back)->tensor_count() == (*src)->tensor_count());
    for (size_t i = 0; i < (*src)->tensor_count(); ++i) {
        require((*back)->tensor(i).name == (*src)->tensor(i).name);
        require((*back)->tensor(i).descriptor == (*src)->tensor(i).descriptor);
        std::vector<uint8_t> again(bytes[i].size());
        require((*back)->read(i, 0, 0, again).ok());
        require(again == bytes[i]);
    }
    require((*back)->kv() == (*src)->kv());
    return 0;
}
