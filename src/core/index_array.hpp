// SPDX-License-Identifier: Apache-2.0
// Internal: an array of little-endian unsigned integers (uint32 or uint64)
// inside a buffer of untrusted bytes — the index, pointer and coordinate
// arrays of the sparse and block-paged layouts. Reads are bounds-checked
// against the buffer's span; an entry outside it is kInvalidData naming the
// array, the buffer and the position.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "hurray/core/text.hpp"
#include "hurray/core/result.hpp"

namespace hurray::detail {

class IndexArray {
public:
    /// `bytes` is buffer `buffer`'s span; `width` is 4 or 8; `name` (a string
    /// literal) is used in error messages, e.g. "row_ptr".
    /// `level`, when not negative, is appended to the name (CSF's "pos_2").
    IndexArray(std::span<const uint8_t> bytes, uint32_t width, const char* name, uint32_t buffer,
               int level = -1) noexcept
        : bytes_(bytes), width_(width), name_(name), buffer_(buffer), level_(level) {}

    /// Number of whole entries in the buffer.
    [[nodiscard]] uint64_t size() const noexcept { return bytes_.size() / width_; }

    /// Entry `i`, or kInvalidData when it lies outside the buffer.
    [[nodiscard]] Result<uint64_t> at(uint64_t i) const {
        if (i >= size()) [[unlikely]] {
            return outside(i);
        }
        return (*this)[i];
    }

    /// Entry `i`, unchecked. Precondition: `i < size()` (callers check a
    /// whole range once with `check_range` or `at`).
    [[nodiscard]] uint64_t operator[](uint64_t i) const noexcept {
        // SAFETY: the precondition i < size() puts bytes [i*width, i*width + width)
        // inside bytes_; the value is assembled byte by byte (little-endian,
        // independent of host byte order and alignment).
        const uint8_t* p = bytes_.data() + static_cast<size_t>(i) * width_;
        uint64_t v = 0;
        for (uint32_t k = 0; k < width_; ++k) {
            v |= static_cast<uint64_t>(p[k]) << (8 * k);
        }
        return v;
    }

    /// Checks that entries `[first, first + count)` lie inside the buffer.
    [[nodiscard]] Status check_range(uint64_t first, uint64_t count) const {
        if (first > size() || count > size() - first) [[unlikely]] {
            return outside(first > size() ? first : first + count - 1);
        }
        return Status::success();
    }

    /// "name[i]" (or "name_level[i]") for error messages.
    [[nodiscard]] std::string entry(uint64_t i) const { return name() + "[" + dec(i) + "]"; }
    /// The array's name, e.g. "row_ptr" or "pos_2".
    [[nodiscard]] std::string name() const {
        return level_ < 0 ? std::string(name_) : std::string(name_) + "_" + dec(static_cast<uint64_t>(level_));
    }
    /// The buffer index.
    [[nodiscard]] uint32_t buffer() const noexcept { return buffer_; }

private:
    [[nodiscard]] Error outside(uint64_t i) const {
        return {ErrorCode::kInvalidData, entry(i) + " lies outside buffer " + dec(buffer_) + " (" + name() +
                                             ", " + dec(size()) + " entries of " + dec(width_) + " bytes)"};
    }

    std::span<const uint8_t> bytes_;
    uint32_t width_;
    const char* name_;
    uint32_t buffer_;
    int level_;
};

}  // namespace hurray::detail
