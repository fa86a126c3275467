// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the NumPy .npz reader of hurray::convert (open_npz: the zip structure
// check of zip_directory.cpp, then libzip) on untrusted bytes, given as a file (a memfd,
// fuzz_support.hpp), as open_npz opens a path.
//
// Whatever opens is enumerated and every tensor read: whole, in 7-byte pieces from the
// start (sequential reads of one member), then its last and first pieces (a read behind
// the last one restarts the member). Properties:
//  - every error, of open_npz or of a read, carries a code, a message and a byte offset
//    (in the file for the zip structure, in the member for a .npy header);
//  - find(name) finds each tensor at its own index; each has one buffer;
//  - a tensor read whole reads the same bytes in pieces, and a read past its end fails;
//  - the same bytes behind a range source open exactly when the path does (the same
//    error code and offset), and read alike.
// With HURRAY_FUZZ_NPZ_STRICT=1 in the environment, an archive that passes the structure
// check but that libzip refuses (the fallback message, which names only the central
// directory's offset) traps too: a run that way finds checks zip_directory.cpp lacks.
// Tensors over 1 MiB are read in their first 64 KiB only (a zip bomb's declared size is
// not inflated). Built with exceptions (like hurray::convert); none may escape.
// Seed corpus: .npz files written by NumPy (tests/convert/writers/numpy_arrays.py) and
// small archives of every shape the reader handles (tests/convert/writers/npz_seeds.py).
#include <algorithm>
#include <memory>
#include <cstddef>
#include <cstdlib>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "hurray/convert/numpy.hpp"
#include "hurray/io/range_source.hpp"

namespace {

using hurray::convert::TensorSource;

constexpr uint64_t kWholeLimit = uint64_t{1} << 20;
constexpr uint64_t kPrefixLimit = uint64_t{64} << 10;

void require(bool ok) {
    if (!ok) {
        __builtin_trap();
    }
}

void require_well_formed(const hurray::Error& e) {
    require(e.code() != hurray::ErrorCode::kOk && !e.message().empty());
    require(e.has_offset());
}

void exercise_tensor(const TensorSource& s, size_t i) {
    const auto& t = s.tensor(i);
    require(t.descriptor.buffers.size() == 1);
    const auto found = s.find(t.name);
    require(found.has_value() && *found == i);
    const uint64_t size = t.descriptor.buffers[0].byte_size;
    const uint64_t len = size <= kWholeLimit ? size : kPrefixLimit;
    std::vector<uint8_t> whole(static_cast<size_t>(len));
    const auto r = s.read(i, 0, 0, whole);
    if (!r.ok()) {
        require_well_formed(r.error());
        return;
    }
    std::vector<uint8_t> piece(7);
    for (uint64_t off = 0; off < len; off += piece.size()) {
        const auto n = static_cast<size_t>(std::min<uint64_t>(piece.size(), len - off));
        const auto p = s.read(i, 0, off, std::span<uint8_t>(piece.data(), n));
        require(p.ok());
        require(std::equal(piece.begin(), piece.begin() + static_cast<std::ptrdiff_t>(n),
                           whole.begin() + static_cast<std::ptrdiff_t>(off)));
    }
    if (len > 0) {
        std::vector<uint8_t> last(1);
        require(s.read(i, 0, len - 1, last).ok() && last[0] == whole.back());
        std::vector<uint8_t> first(1);
        require(s.read(i, 0, 0, first).ok() && first[0] == whole.front());
    }
    if (len == size) {
        std::vector<uint8_t> past(1);
        require(!s.read(i, 0, size, past).ok());
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // SAFETY: libFuzzer passes `size` readable bytes at `data` (data may be null when size is 0).
    const hurray::fuzz::InputFile in(std::span<const uint8_t>(data, size));
    if (!in.ok()) {
        return 0;
    }
    auto src = hurray::convert::open_npz(in.path());
    // The same bytes behind a range source (a remote archive, read through our libzip
    // source): it opens exactly when the path does, failing with the same code at the
    // same byte, and its tensors take the same exercise.
    auto ranged = hurray::convert::open_npz(
        std::make_shared<hurray::MemoryRangeSource>(std::vector<uint8_t>(data, data + size)));
    require(ranged.ok() == src.ok());
    if (!src.ok()) {
        require(ranged.error().code() == src.error().code() && ranged.error().offset() == src.error().offset());
    } else {
        require((*ranged)->tensor_count() == (*src)->tensor_count());
        for (size_t i = 0; i < (*ranged)->tensor_count(); ++i) {
            exercise_tensor(**ranged, i);
        }
    }
    if (!src.ok()) {
        require_well_formed(src.error());
        static const bool strict = std::getenv("HURRAY_FUZZ_NPZ_STRICT") != nullptr;
        if (strict) {
            // The fallback messages start "<path>: libzip " (a member's start "<path> member").
            require(!src.error().message().starts_with(in.path() + ": libzip "));
        }
        return 0;
    }
    for (size_t i = 0; i < (*src)->tensor_count(); ++i) {
        exercise_tensor(**src, i);
    }
    return 0;
}
