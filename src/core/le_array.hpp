// SPDX-License-Identifier: Apache-2.0
// Internal: a bounds-checked view of a little-endian array of unsigned
// integers (1, 2, 4 or 8 bytes each) in a data buffer: sparse indices and
// pointers, block tables, raw quantization parameters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace hurray::detail {

/// `count` little-endian unsigned integers of `width` bytes (1, 2, 4 or 8) at the
/// start of a byte span. Built only through `make`, which proves that the
/// span holds them; every read checks its index again, so no read can leave
/// the span even if a caller miscounts.
class LeArray {
public:
    LeArray() = default;

    /// The first `count` entries of `bytes`, or nullopt when `bytes` is
    /// shorter than `count * width` (or that product overflows) or `width`
    /// is not 1, 2, 4 or 8.
    static std::optional<LeArray> make(std::span<const uint8_t> bytes, uint32_t width, uint64_t count) {
        if (!valid_width(width)) {
            return std::nullopt;
        }
        if (count > bytes.size() / width) {
            return std::nullopt;
        }
        return LeArray(bytes.first(static_cast<size_t>(count * width)), width, count);
    }

    /// Every whole entry of `bytes` (a trailing partial entry is ignored);
    /// a width other than 1, 2, 4 or 8 reads as 8.
    static LeArray whole(std::span<const uint8_t> bytes, uint32_t width) {
        const uint32_t w = valid_width(width) ? width : 8;
        const uint64_t n = bytes.size() / w;
        return {bytes.first(static_cast<size_t>(n * w)), w, n};
    }

    /// Number of entries.
    [[nodiscard]] uint64_t size() const noexcept { return count_; }
    /// Bytes per entry.
    [[nodiscard]] uint32_t width() const noexcept { return width_; }
    /// Byte offset of entry `i` in the buffer.
    [[nodiscard]] uint64_t byte_of(uint64_t i) const noexcept { return i * width_; }

    /// Entry `i`; 0 when `i >= size()` (callers loop below `size()`; the
    /// check only guarantees that a miscounting caller never reads outside).
    [[nodiscard]] uint64_t operator[](uint64_t i) const noexcept {
        if (i >= count_) {
            return 0;
        }
        // SAFETY: i < count_ and make()/whole() sized bytes_ to count_ * width_
        // bytes, so the width_ bytes at i * width_ lie inside bytes_. The value
        // is assembled byte by byte: no alignment or host byte-order assumption.
        const uint8_t* p = bytes_.data() + static_cast<size_t>(i) * width_;
        uint64_t v = 0;
        for (uint32_t k = 0; k < width_; ++k) {
            v |= static_cast<uint64_t>(p[k]) << (8 * k);
        }
        return v;
    }

private:
    static bool valid_width(uint32_t w) noexcept { return w == 1 || w == 2 || w == 4 || w == 8; }

    LeArray(std::span<const uint8_t> bytes, uint32_t width, uint64_t count)
        : bytes_(bytes), width_(width), count_(count) {}

    std::span<const uint8_t> bytes_;
    uint32_t width_ = 8;
    uint64_t count_ = 0;
};

}  // namespace hurray::detail
