#pragma once
/// @file
/// Walker: reads little-endian fields from a bounded byte span and records each as a Row.
/// Internal to the annotator (annotate_*.cpp).

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hurray/annotate.hpp"
#include "hurray/core/result.hpp"

namespace hurray::cli::detail {

/// A formatter of a field's value for display (`float32 (0x03)`); nullptr: decimal.
using ValueText = std::function<std::string(uint64_t)>;

/// Reads fields from `bytes` (at absolute offset `base`) and appends a Row per field.
/// Every read is bounds-checked: past the end it fails with `limit_code` and a message
/// naming the field, what bounds it (`limit_what`) and the absolute offset.
class Walker {
public:
    Walker(std::span<const uint8_t> bytes, uint64_t base, std::vector<Row>& rows, ErrorCode limit_code,
           std::string limit_what)
        : bytes_(bytes), base_(base), rows_(&rows), limit_code_(limit_code), limit_what_(std::move(limit_what)) {}

    /// Absolute offset of the next byte.
    [[nodiscard]] uint64_t abs_pos() const noexcept { return base_ + pos_; }
    /// Bytes read so far.
    [[nodiscard]] uint64_t pos() const noexcept { return pos_; }
    /// Bytes left.
    [[nodiscard]] uint64_t remaining() const noexcept { return bytes_.size() - pos_; }

    /// An unsigned little-endian integer of `width` bytes (1, 2, 4 or 8).
    Result<uint64_t> uint(unsigned width, const std::string& field, const ValueText& text = nullptr) {
        HURRAY_ASSIGN_OR_RETURN(auto raw, take(width, field));
        uint64_t v = 0;
        for (unsigned i = 0; i < width; ++i) {
            v |= static_cast<uint64_t>(raw[i]) << (8 * i);
        }
        Row& row = push(raw, field);
        row.number = v;
        row.value = text ? text(v) : std::to_string(v);
        return v;
    }
    Result<uint64_t> u8(const std::string& field, const ValueText& text = nullptr) { return uint(1, field, text); }
    Result<uint64_t> u16(const std::string& field, const ValueText& text = nullptr) { return uint(2, field, text); }
    Result<uint64_t> u32(const std::string& field, const ValueText& text = nullptr) { return uint(4, field, text); }
    Result<uint64_t> u64(const std::string& field, const ValueText& text = nullptr) { return uint(8, field, text); }
    /// A signed 32- or 64-bit integer (printed signed; `number` holds the raw bits).
    Result<int64_t> sint(unsigned width, const std::string& field);
    /// An IEEE float of 4 or 8 bytes (printed shortest; `number` holds the raw bits).
    Result<double> real(unsigned width, const std::string& field);
    /// `n` raw bytes shown as hex (value: `text`, or `N bytes`).
    Result<std::span<const uint8_t>> raw(uint64_t n, const std::string& field, std::string text = {});
    /// `n` reserved bytes: value `zero` or `NOT ZERO` (the decoders judge them).
    Result<std::span<const uint8_t>> reserved(uint64_t n, const std::string& field);

    /// The error code of a read past the end.
    [[nodiscard]] ErrorCode limit_code() const noexcept { return limit_code_; }
    /// What bounds the walk, for messages.
    [[nodiscard]] const std::string& limit_what() const noexcept { return limit_what_; }
    /// The rows appended to.
    std::vector<Row>& rows() { return *rows_; }
    /// The last row appended.
    Row& last() { return rows_->back(); }

    /// The bytes of `n` next bytes without a row; fails like a field read.
    Result<std::span<const uint8_t>> take(uint64_t n, const std::string& field) {
        if (n > remaining()) {
            return Error(limit_code_,
                         field + ": needs " + std::to_string(n) + " bytes at offset " + std::to_string(abs_pos()) +
                             ", only " + std::to_string(remaining()) + " left in " + limit_what_,
                         abs_pos());
        }
        auto s = bytes_.subspan(static_cast<size_t>(pos_), static_cast<size_t>(n));
        pos_ += n;
        return s;
    }

private:
    Row& push(std::span<const uint8_t> raw, const std::string& field) {
        Row row;
        row.offset = abs_pos() - raw.size();
        row.length = raw.size();
        const size_t kept = raw.size() < kRowKeptBytes ? raw.size() : static_cast<size_t>(kRowKeptBytes);
        row.bytes.assign(raw.begin(), raw.begin() + static_cast<std::ptrdiff_t>(kept));
        row.field = field;
        rows_->push_back(std::move(row));
        return rows_->back();
    }

    std::span<const uint8_t> bytes_;
    uint64_t base_;
    uint64_t pos_ = 0;
    std::vector<Row>* rows_;
    ErrorCode limit_code_;
    std::string limit_what_;
};

/// The success or error of a Result, without its value.
template <typename T>
Status status_of(const Result<T>& r) {
    if (!r) {
        return r.error();
    }
    return Status::success();
}

/// `name (0xNN)`, or `0xNN` when the name is empty.
std::string tagged(std::string_view name, uint64_t tag, int digits = 2);
/// `0x` and `digits` hex digits.
std::string hexnum(uint64_t v, int digits);
/// Shortest round-trip text of a double (`1.5`, `nan`, `-inf`).
std::string shortest(double v);
/// Shortest round-trip text of a float.
std::string shortest(float v);
/// `name[i]`, the name of an array element's row.
std::string idx(const std::string& name, uint64_t i);
/// A flags word: `0xNNNNNNNN`, then the set bits in parentheses, `names[bit]` for the bits
/// named, `reserved bit N` for the others (nothing when no bit is set).
std::string flags_text(uint64_t flags, std::span<const char* const> names);
/// A string value quoted, with control and non-ASCII bytes escaped.
std::string quoted(std::span<const uint8_t> bytes);

}  // namespace hurray::cli::detail
