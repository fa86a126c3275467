// SPDX-License-Identifier: Apache-2.0
// Internal: the one view of an array of little-endian unsigned integers (1, 2,
// 4 or 8 bytes each) inside a buffer of untrusted bytes: the index, pointer and
// coordinate arrays of the sparse and block-paged layouts, block tables, raw
// quantization parameters. Validation and lookup read them through it alike:
// `operator[]` never reads outside the span (an entry past the end reads as 0,
// for loops whose bounds were checked once), and `at` reports such an entry as
// kInvalidData naming the array, its buffer and the position.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "hurray/core/byte_io.hpp"
#include "hurray/core/result.hpp"
#include "hurray/core/text.hpp"

namespace hurray::detail {

class IndexArray {
public:
    /// An empty array.
    IndexArray() = default;

    /// Every whole entry of `bytes` (buffer `buffer`'s span; a trailing partial
    /// entry is ignored); `width` is 1, 2, 4 or 8 (another reads as 8). `name`
    /// (a string literal, e.g. "row_ptr") names it in errors; `level`, when
    /// not negative, is appended to the name (CSF's "pos_2").
    IndexArray(std::span<const uint8_t> bytes, uint32_t width, const char* name = "array", uint32_t buffer = 0,
               int level = -1) noexcept
        : width_(valid_width(width) ? width : 8),
          count_(bytes.size() / width_),
          bytes_(bytes.first(static_cast<size_t>(count_ * width_))),
          name_(name),
          buffer_(buffer),
          level_(level) {}

    /// The first `count` entries of `bytes`, or nullopt when `bytes` is
    /// shorter than `count * width` (or that product overflows) or `width`
    /// is not 1, 2, 4 or 8.
    static std::optional<IndexArray> make(std::span<const uint8_t> bytes, uint32_t width, uint64_t count) {
        if (!valid_width(width) || count > bytes.size() / width) {
            return std::nullopt;
        }
        return IndexArray(bytes.first(static_cast<size_t>(count * width)), width);
    }

    /// Every whole entry of `bytes`; a width other than 1, 2, 4 or 8 reads as 8.
    static IndexArray whole(std::span<const uint8_t> bytes, uint32_t width) { return {bytes, width}; }

    /// Number of entries.
    [[nodiscard]] uint64_t size() const noexcept { return count_; }
    /// Bytes per entry.
    [[nodiscard]] uint32_t width() const noexcept { return width_; }
    /// Byte offset of entry `i` in the buffer.
    [[nodiscard]] uint64_t byte_of(uint64_t i) const noexcept { return i * width_; }

    /// Entry `i`; 0 when `i >= size()` (callers loop below a bound they
    /// checked once, with `check_range` or `at`; the check only guarantees
    /// that a miscounting caller never reads outside the span).
    [[nodiscard]] uint64_t operator[](uint64_t i) const noexcept {
        if (i >= count_) [[unlikely]] {
            return 0;
        }
        // SAFETY: i < count_, and the constructor sized bytes_ to count_ * width_
        // bytes, so the width_ bytes at i * width_ lie inside bytes_.
        const uint8_t* p = bytes_.data() + static_cast<size_t>(i) * width_;
        switch (width_) {
            case 1:
                return *p;
            case 2:
                return load_le<uint16_t>(p);
            case 4:
                return load_le<uint32_t>(p);
            default:
                return load_le<uint64_t>(p);
        }
    }

    /// Entry `i`, or kInvalidData when it lies outside the buffer.
    [[nodiscard]] Result<uint64_t> at(uint64_t i) const {
        if (i >= count_) [[unlikely]] {
            return outside(i);
        }
        return (*this)[i];
    }

    /// Checks that entries `[first, first + count)` lie inside the buffer.
    [[nodiscard]] Status check_range(uint64_t first, uint64_t count) const {
        if (first > count_ || count > count_ - first) [[unlikely]] {
            return outside(first > count_ ? first : first + count - 1);
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
    static bool valid_width(uint32_t w) noexcept { return w == 1 || w == 2 || w == 4 || w == 8; }

    [[nodiscard]] Error outside(uint64_t i) const {
        return {ErrorCode::kInvalidData, entry(i) + " lies outside buffer " + dec(buffer_) + " (" + name() +
                                             ", " + dec(count_) + " entries of " + dec(width_) + " bytes)"};
    }

    uint32_t width_ = 8;
    uint64_t count_ = 0;
    std::span<const uint8_t> bytes_;
    const char* name_ = "array";
    uint32_t buffer_ = 0;
    int level_ = -1;
};

}  // namespace hurray::detail
