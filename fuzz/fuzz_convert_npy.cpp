// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the NumPy .npy reader of hurray::convert on untrusted bytes.
//
// Each input is parsed as a header (detail::parse_npy_header) and opened as a file
// (open_npy over a memfd). Whatever opens is read completely, whole and in 7-byte pieces.
// Properties:
//  - every error carries a code and a message;
//  - a header that parses describes data that fits in 64 bits;
//  - an opened source has one tensor whose buffer is its declared size, and reading it
//    in pieces gives the bytes of reading it whole (bool packing, byte swapping).
// Seed corpus: .npy files written by NumPy (tests/convert/writers/numpy_arrays.py OUT
// writes a set of them into OUT).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "convert/npy_format.hpp"
#include "fuzz_support.hpp"
#include "hurray/convert/numpy.hpp"

namespace {

void require(bool ok) {
    if (!ok) {
        __builtin_trap();
    }
}

template <typename R>
void require_error_well_formed(const R& r) {
    if (!r.ok()) {
        require(r.error().code() != hurray::ErrorCode::kOk && !r.error().message().empty());
    }
}

void exercise_header(std::span<const uint8_t> input) {
    auto end = hurray::convert::detail::npy_data_offset(input, "fuzz");
    require_error_well_formed(end);
    if (!end || *end > input.size()) {
        return;
    }
    auto h =
        hurray::convert::detail::parse_npy_header(input.first(static_cast<size_t>(*end)), "fuzz");
    require_error_well_formed(h);
    if (h) {
        require(h->data_offset == *end);
        require(h->dtype.item_size == 0 || h->data_bytes / h->dtype.item_size <= UINT64_MAX);
    }
}

void exercise_file(std::span<const uint8_t> input) {
    const hurray::fuzz::InputFile in(input);
    if (!in.ok()) {
        return;
    }
    const std::string path = in.path();
    auto src = hurray::convert::open_npy(path);
    require_error_well_formed(src);
    if (src) {
        const auto& s = **src;
        require(s.tensor_count() == 1);
        const auto& d = s.tensor(0).descriptor;
        require(d.buffers.size() == 1);
        const uint64_t size = d.buffers[0].byte_size;
        if (size <= (uint64_t{1} << 20)) {
            std::vector<uint8_t> whole(static_cast<size_t>(size));
            auto r = s.read(0, 0, 0, whole);
            require_error_well_formed(r);
            if (r) {
                std::vector<uint8_t> piece(7);
                for (uint64_t off = 0; off < size; off += piece.size()) {
                    const auto n =
                        static_cast<size_t>(std::min<uint64_t>(piece.size(), size - off));
                    auto p = s.read(0, 0, off, std::span<uint8_t>(piece.data(), n));
                    require(p.ok());
                    for (size_t k = 0; k < n; ++k) {
                        require(piece[k] == whole[static_cast<size_t>(off) + k]);
                    }
                }
            }
            std::vector<uint8_t> past(1);
            require(!s.read(0, 0, size, past).ok());
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // SAFETY: libFuzzer passes `size` readable bytes at `data` (data may be null when size is 0).
    const std::span<const uint8_t> input(data, size);
    exercise_header(input);
    exercise_file(input);
    return 0;
}
