// SPDX-License-Identifier: Apache-2.0
/// @file
/// Bounds-checked little-endian reading and writing of raw bytes: the one
/// byte reader and the one little-endian load and store of every hurray
/// library (the descriptor codec, the container's sections, the converters).
/// Header-only. With the parsers that use it, the only code that touches
/// untrusted bytes directly.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "hurray/core/result.hpp"
#include "hurray/core/text.hpp"

namespace hurray {

// Little-endian loads and stores at a raw position, for the one-pass
// descriptor fast paths that prove the whole extent first (one length
// check) and then read or write field after field without a check each.
// The callers' SAFETY comments say why every position is in bounds.

/// The little-endian `T` at `p`; `sizeof(T)` bytes must be readable there.
template <typename T>
[[nodiscard]] inline T load_le(const uint8_t* p) noexcept {
    T v = 0;
    // SAFETY: the caller proved sizeof(T) readable bytes at p; memcpy has no
    // alignment requirement, and the swap makes the value host-order.
    std::memcpy(&v, p, sizeof(T));
    if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) {
        T swapped = 0;
        for (size_t i = 0; i < sizeof(T); ++i) {
            swapped = static_cast<T>((swapped << 8U) | ((v >> (8U * i)) & 0xFFU));
        }
        v = swapped;
    }
    return v;
}

/// Writes `v` little-endian at `p`; `sizeof(T)` bytes must be writable there.
template <typename T>
inline void store_le(uint8_t* p, T v) noexcept {
    if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) {
        T swapped = 0;
        for (size_t i = 0; i < sizeof(T); ++i) {
            swapped = static_cast<T>((swapped << 8U) | ((v >> (8U * i)) & 0xFFU));
        }
        v = swapped;
    }
    // SAFETY: the caller proved sizeof(T) writable bytes at p; memcpy has no
    // alignment requirement.
    std::memcpy(p, &v, sizeof(T));
}

/// Reads little-endian fields from a byte span, never past its end.
/// Every read either succeeds or returns `kTruncated` naming the field and
/// the offset at which it starts (relative to `base`).
class ByteReader {
public:
    /// Reads `bytes`, whose first byte is at offset `base` of the input that
    /// error offsets count in. `prefix` (a string that outlives the reader,
    /// e.g. "gguf: ") starts every error message.
    ByteReader(std::span<const uint8_t> bytes, uint64_t base = 0, std::string_view prefix = {})
        : bytes_(bytes), base_(base), prefix_(prefix) {}

    /// Bytes read so far.
    [[nodiscard]] size_t pos() const noexcept { return pos_; }
    /// The offset of the next byte in the input (`base + pos()`).
    [[nodiscard]] uint64_t abs_pos() const noexcept { return base_ + pos_; }
    /// Bytes left to read.
    [[nodiscard]] size_t remaining() const noexcept { return bytes_.size() - pos_; }

    /// The next byte; `field` names it in the error.
    Result<uint8_t> u8(std::string_view field) {
        HURRAY_RETURN_IF_ERROR(need(1, field));
        return bytes_[pos_++];
    }
    /// The next little-endian `uint16_t`.
    Result<uint16_t> u16(std::string_view field) { return read_le<uint16_t>(field); }
    /// The next little-endian `uint32_t`.
    Result<uint32_t> u32(std::string_view field) { return read_le<uint32_t>(field); }
    /// The next little-endian `uint64_t`.
    Result<uint64_t> u64(std::string_view field) { return read_le<uint64_t>(field); }
    /// The next little-endian two's-complement `int32_t`.
    Result<int32_t> i32(std::string_view field) {
        HURRAY_ASSIGN_OR_RETURN(uint32_t v, read_le<uint32_t>(field));
        return static_cast<int32_t>(v);
    }
    /// The next little-endian two's-complement `int64_t`.
    Result<int64_t> i64(std::string_view field) {
        HURRAY_ASSIGN_OR_RETURN(uint64_t v, read_le<uint64_t>(field));
        return static_cast<int64_t>(v);
    }
    /// The next little-endian IEEE 754 binary32.
    Result<float> f32(std::string_view field) {
        HURRAY_ASSIGN_OR_RETURN(uint32_t v, read_le<uint32_t>(field));
        float f = 0;
        std::memcpy(&f, &v, sizeof f);
        return f;
    }
    /// The next little-endian IEEE 754 binary64.
    Result<double> f64(std::string_view field) {
        HURRAY_ASSIGN_OR_RETURN(uint64_t v, read_le<uint64_t>(field));
        double d = 0;
        std::memcpy(&d, &v, sizeof d);
        return d;
    }

    /// The next little-endian integer of type `T` (any integral type).
    template <typename T>
    Result<T> le(std::string_view field) {
        static_assert(std::is_integral_v<T>, "ByteReader::le reads integers");
        return read_le<T>(field);
    }

    /// Moves past the next `n` bytes.
    Status skip(uint64_t n, std::string_view field) {
        HURRAY_RETURN_IF_ERROR(need(n, field));
        pos_ += static_cast<size_t>(n);
        return Status::success();
    }

    /// The bytes `[from, to)` of the input (positions as `pos()` counts them;
    /// `from <= to <= ` the input's size), e.g. what was read since `from`.
    [[nodiscard]] std::span<const uint8_t> slice(size_t from, size_t to) const noexcept {
        return bytes_.subspan(from, to - from);
    }

    /// A view of the next `n` bytes.
    Result<std::span<const uint8_t>> bytes(uint64_t n, std::string_view field) {
        HURRAY_RETURN_IF_ERROR(need(n, field));
        auto s = bytes_.subspan(pos_, static_cast<size_t>(n));
        pos_ += static_cast<size_t>(n);
        return s;
    }

    /// Reads `n` reserved bytes and fails with `kReservedBytesNonZero` unless all are zero.
    Status reserved(uint64_t n, std::string_view field) {
        const uint64_t at = abs_pos();
        HURRAY_ASSIGN_OR_RETURN(auto b, bytes(n, field));
        for (size_t i = 0; i < b.size(); ++i) {
            if (b[i] != 0) [[unlikely]] {
                return nonzero_reserved(b[i], at + i, i, field);
            }
        }
        return Status::success();
    }

    /// Fails with `kTruncated` unless `n` more bytes are available.
    [[nodiscard]] Status need(uint64_t n, std::string_view field) const {
        if (n <= remaining()) [[likely]] {
            return Status::success();
        }
        return truncated(n, field);
    }

private:
    /// The `kTruncated` error for a read of `n` bytes (kept out of line).
    [[nodiscard, gnu::cold, gnu::noinline]] Error truncated(uint64_t n, std::string_view field) const {
        return {ErrorCode::kTruncated,
                std::string(prefix_).append(field) + ": needs " + std::to_string(n) + " bytes, only " +
                    std::to_string(remaining()) + " remain",
                abs_pos()};
    }

    /// The `kReservedBytesNonZero` error for byte `i` (`value`, at `at`).
    [[nodiscard, gnu::cold, gnu::noinline]] Error nonzero_reserved(uint8_t value, uint64_t at, size_t i,
                                                                   std::string_view field) const {
        return {ErrorCode::kReservedBytesNonZero,
                std::string(prefix_).append(field) + ": reserved byte " + std::to_string(i) + " is " + hex(value) +
                    ", must be 0",
                at};
    }

    template <typename T>
    Result<T> read_le(std::string_view field) {
        HURRAY_RETURN_IF_ERROR(need(sizeof(T), field));
        // SAFETY: need() proved that sizeof(T) bytes exist at pos_.
        const T v = load_le<T>(bytes_.data() + pos_);
        pos_ += sizeof(T);
        return v;
    }

    std::span<const uint8_t> bytes_;
    uint64_t base_;
    std::string_view prefix_;
    size_t pos_ = 0;
};

/// Reads little-endian fields from a byte span in one pass, for a parser that
/// has checked the span's length against the fields it will read once, up
/// front. Every read is still bounds-checked: one past the end returns 0 and
/// marks the cursor as overrun (`ok()` false), so a wrong up-front check can
/// give a wrong value but never an out-of-bounds read.
class ByteCursor {
public:
    /// Reads `bytes` from their start.
    explicit ByteCursor(std::span<const uint8_t> bytes) noexcept : bytes_(bytes) {}

    /// Whether every read so far was inside the span.
    [[nodiscard]] bool ok() const noexcept { return ok_; }
    /// Bytes read (or skipped) so far.
    [[nodiscard]] size_t pos() const noexcept { return pos_; }

    /// The next byte (0 past the end).
    uint8_t u8() noexcept { return le<uint8_t>(); }
    /// The next little-endian `uint32_t` (0 past the end).
    uint32_t u32() noexcept { return le<uint32_t>(); }
    /// The next little-endian `uint64_t` (0 past the end).
    uint64_t u64() noexcept { return le<uint64_t>(); }
    /// Moves past `n` bytes.
    void skip(size_t n) noexcept {
        if (n > bytes_.size() - pos_) {
            ok_ = false;
            pos_ = bytes_.size();
            return;
        }
        pos_ += n;
    }

private:
    template <typename T>
    T le() noexcept {
        if (sizeof(T) > bytes_.size() - pos_) [[unlikely]] {
            ok_ = false;
            return 0;
        }
        // SAFETY: checked just above that sizeof(T) bytes exist at pos_.
        const T v = load_le<T>(bytes_.data() + pos_);
        pos_ += sizeof(T);
        return v;
    }

    std::span<const uint8_t> bytes_;
    size_t pos_ = 0;
    bool ok_ = true;
};

/// Writes little-endian fields into a caller-sized span. Every write is
/// bounds-checked: a write that does not fit is dropped and marks the writer
/// as overflowed, which the encoder reports as an internal error. The encoder
/// sizes the span exactly beforehand, so this never happens in practice.
class ByteWriter {
public:
    /// Writes into `out` from its start.
    explicit ByteWriter(std::span<uint8_t> out) : out_(out) {}

    /// Writes one byte.
    void u8(uint8_t v) { le(v); }
    /// Writes a little-endian `uint16_t`.
    void u16(uint16_t v) { le(v); }
    /// Writes a little-endian `uint32_t`.
    void u32(uint32_t v) { le(v); }
    /// Writes a little-endian `uint64_t`.
    void u64(uint64_t v) { le(v); }
    /// Writes a little-endian two's-complement `int32_t`.
    void i32(int32_t v) { le(static_cast<uint32_t>(v)); }
    /// Writes a little-endian two's-complement `int64_t`.
    void i64(int64_t v) { le(static_cast<uint64_t>(v)); }
    /// Writes a little-endian IEEE 754 binary32.
    void f32(float f) {
        uint32_t v = 0;
        std::memcpy(&v, &f, sizeof v);
        le(v);
    }
    /// Writes a little-endian IEEE 754 binary64.
    void f64(double d) {
        uint64_t v = 0;
        std::memcpy(&v, &d, sizeof v);
        le(v);
    }
    /// Writes `n` zero bytes.
    void zeros(size_t n) {
        if (!fits(n)) {
            return;
        }
        std::memset(out_.data() + pos_, 0, n);
        pos_ += n;
    }
    /// Writes the bytes of `b`.
    void bytes(std::span<const uint8_t> b) {
        if (!fits(b.size())) {
            return;
        }
        if (!b.empty()) {
            // SAFETY: fits() proved b.size() bytes are free at pos_; the
            // source is a valid span and cannot overlap a freshly sized output.
            std::memcpy(out_.data() + pos_, b.data(), b.size());
        }
        pos_ += b.size();
    }
    /// Bytes written so far.
    [[nodiscard]] size_t pos() const noexcept { return pos_; }
    /// Whether a write did not fit (and was dropped).
    [[nodiscard]] bool overflowed() const noexcept { return overflowed_; }

private:
    bool fits(size_t n) {
        if (n > out_.size() - pos_) {
            overflowed_ = true;
            return false;
        }
        return true;
    }
    template <typename T>
    void le(T v) {
        if (!fits(sizeof(T))) {
            return;
        }
        // SAFETY: fits() proved sizeof(T) writable bytes at pos_.
        store_le<T>(out_.data() + pos_, v);
        pos_ += sizeof(T);
    }
    std::span<uint8_t> out_;
    size_t pos_ = 0;
    bool overflowed_ = false;
};

}  // namespace hurray
