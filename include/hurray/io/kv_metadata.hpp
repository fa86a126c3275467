// SPDX-License-Identifier: Apache-2.0
/// @file
/// Typed key-value metadata of an HRRYFILE container (file-format.md § KV
/// Metadata Section): the seven value types, an ordered collection with
/// lookup by key and typed getters, and the section's encoder and
/// validating decoder.
#pragma once

#include "hurray/io/export.hpp"
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "hurray/core/result.hpp"

namespace hurray {

/// The KV value type tags (file-format.md § KV Value Types).
enum class KvType : uint8_t {
    kString = 0x01,   ///< UTF-8 string (`uint32` length, bytes).
    kInt64 = 0x02,    ///< Signed 64-bit integer.
    kUint64 = 0x03,   ///< Unsigned 64-bit integer.
    kFloat64 = 0x04,  ///< IEEE 754 binary64.
    kBool = 0x05,     ///< One byte, 0 or 1.
    kBytes = 0x06,    ///< Opaque bytes (`uint32` length, bytes).
    kArray = 0x07,    ///< Homogeneous array of one of the six scalar types.
};

/// The spec's name of a KV type: "string", "int64", "uint64", "float64",
/// "bool", "bytes", "array"; "private" for 0xF0-0xFE, "unknown" otherwise.
HURRAY_IO_EXPORT std::string_view kv_type_name(uint8_t tag) noexcept;

/// A homogeneous array value, stored compactly by element type. The
/// alternative held gives the element type, so an empty array still has one.
///
/// @code
/// hurray::KvArray dims{std::vector<int64_t>{4096, 11008}};
/// auto* v = std::get_if<std::vector<int64_t>>(&dims.values);
/// @endcode
struct HURRAY_IO_EXPORT KvArray {
    /// The elements; the alternative is the element type (string, int64,
    /// uint64, float64, bool, bytes, in tag order 0x01 .. 0x06).
    using Storage = std::variant<std::vector<std::string>, std::vector<int64_t>, std::vector<uint64_t>,
                                 std::vector<double>, std::vector<bool>, std::vector<std::vector<uint8_t>>>;
    /// The elements.
    Storage values;
    /// The element type (`kString` .. `kBytes`).
    [[nodiscard]] KvType element_type() const noexcept { return static_cast<KvType>(values.index() + 1); }
    /// Number of elements.
    [[nodiscard]] size_t size() const noexcept;
    /// Element-wise equality (float64 compared bitwise).
    bool operator==(const KvArray& other) const;
};

/// A value with an implementation-private tag (0xF0-0xFE): its tag and raw
/// payload bytes. Written and read only when the caller opts in.
struct HURRAY_IO_EXPORT KvPrivateValue {
    /// The tag, 0xF0 .. 0xFE.
    uint8_t tag = 0xF0;
    /// The payload bytes, exactly as stored after the tag.
    std::vector<uint8_t> payload;
    /// Field-wise equality.
    bool operator==(const KvPrivateValue&) const = default;
};

/// One typed KV value.
///
/// @code
/// hurray::KvValue arch = hurray::KvValue::string("llama");
/// hurray::KvValue vocab = hurray::KvValue::uint64(32000);
/// hurray::KvValue dims = hurray::KvValue::int64_array({4096, 11008});
/// @endcode
class HURRAY_IO_EXPORT KvValue {
public:
    /// What a value holds.
    using Storage = std::variant<std::string, int64_t, uint64_t, double, bool, std::vector<uint8_t>,
                                 KvArray, KvPrivateValue>;

    /// An int64 zero.
    KvValue() = default;
    /// A string (must be valid UTF-8 to be written).
    static KvValue string(std::string v) { return KvValue(std::in_place_index<0>, std::move(v)); }
    /// A signed 64-bit integer.
    static KvValue int64(int64_t v) { return KvValue(std::in_place_index<1>, v); }
    /// An unsigned 64-bit integer.
    static KvValue uint64(uint64_t v) { return KvValue(std::in_place_index<2>, v); }
    /// A float64 (NaN payloads and signed zeros are kept bit for bit).
    static KvValue float64(double v) { return KvValue(std::in_place_index<3>, v); }
    /// A bool.
    static KvValue boolean(bool v) { return KvValue(std::in_place_index<4>, v); }
    /// Opaque bytes.
    static KvValue bytes(std::vector<uint8_t> v) { return KvValue(std::in_place_index<5>, std::move(v)); }
    /// An array.
    static KvValue array(KvArray v) { return KvValue(std::in_place_index<6>, std::move(v)); }
    /// A private-tag value (0xF0-0xFE) with its raw payload.
    static KvValue private_value(KvPrivateValue v) {
        return KvValue(std::in_place_index<7>, std::move(v));
    }
    /// An array of strings.
    static KvValue string_array(std::vector<std::string> v) { return array(KvArray{std::move(v)}); }
    /// An array of int64.
    static KvValue int64_array(std::vector<int64_t> v) { return array(KvArray{std::move(v)}); }
    /// An array of uint64.
    static KvValue uint64_array(std::vector<uint64_t> v) { return array(KvArray{std::move(v)}); }
    /// An array of float64.
    static KvValue float64_array(std::vector<double> v) { return array(KvArray{std::move(v)}); }
    /// An array of bools.
    static KvValue bool_array(std::vector<bool> v) { return array(KvArray{std::move(v)}); }
    /// An array of byte sequences.
    static KvValue bytes_array(std::vector<std::vector<uint8_t>> v) { return array(KvArray{std::move(v)}); }

    /// The wire tag of this value (`KvType` value, or the private tag).
    [[nodiscard]] uint8_t tag() const noexcept;
    /// The stored alternative.
    [[nodiscard]] const Storage& storage() const noexcept { return v_; }

    /// The string, or nullptr when the value is not a string.
    [[nodiscard]] const std::string* as_string() const noexcept { return std::get_if<0>(&v_); }
    /// The int64, or nullptr.
    [[nodiscard]] const int64_t* as_int64() const noexcept { return std::get_if<1>(&v_); }
    /// The uint64, or nullptr.
    [[nodiscard]] const uint64_t* as_uint64() const noexcept { return std::get_if<2>(&v_); }
    /// The float64, or nullptr.
    [[nodiscard]] const double* as_float64() const noexcept { return std::get_if<3>(&v_); }
    /// The bool, or nullptr.
    [[nodiscard]] const bool* as_bool() const noexcept { return std::get_if<4>(&v_); }
    /// The bytes, or nullptr.
    [[nodiscard]] const std::vector<uint8_t>* as_bytes() const noexcept { return std::get_if<5>(&v_); }
    /// The bytes, or nullptr (mutable: a value taken out of a KvMetadata can give its
    /// bytes away without a copy).
    [[nodiscard]] std::vector<uint8_t>* as_bytes() noexcept { return std::get_if<5>(&v_); }
    /// The array, or nullptr.
    [[nodiscard]] const KvArray* as_array() const noexcept { return std::get_if<6>(&v_); }
    /// The private value, or nullptr.
    [[nodiscard]] const KvPrivateValue* as_private() const noexcept { return std::get_if<7>(&v_); }

    /// Equality by type and value; float64 values compare bitwise (NaN == the
    /// same NaN, +0 != -0), so a round trip can be checked exactly.
    bool operator==(const KvValue& other) const;

private:
    // Built in place: moving a temporary Storage trips GCC 12's
    // -Wmaybe-uninitialized in some inlined contexts.
    template <size_t I, typename... A>
    explicit KvValue(std::in_place_index_t<I> i, A&&... args) : v_(i, std::forward<A>(args)...) {}
    Storage v_{std::in_place_index<1>, int64_t{0}};
};

/// One key and its value.
struct HURRAY_IO_EXPORT KvEntry {
    /// The key: valid UTF-8, 1 .. 65,535 bytes, unique in the section.
    std::string key;
    /// The value.
    KvValue value;
    /// Field-wise equality.
    bool operator==(const KvEntry&) const = default;
};

/// Given a private tag and the bytes that follow it up to the end of the KV
/// section, returns the payload length, or an error. Lets a reader that
/// knows its own private value types skip over them.
using KvPrivateLengthFn = std::function<Result<uint64_t>(uint8_t tag, std::span<const uint8_t> rest)>;

/// How KV sections are decoded.
struct HURRAY_IO_EXPORT KvDecodeOptions {
    /// Accept private tags 0xF0-0xFE; `private_length` must then say how long
    /// each payload is (a private payload cannot be skipped otherwise).
    /// Rejected by default (SPEC-NOTES 17).
    bool accept_private_tags = false;
    /// Payload length of a private value (required with `accept_private_tags`).
    KvPrivateLengthFn private_length;
};

/// The KV metadata of a file: entries in file order, unique keys, lookup by
/// key, typed getters.
///
/// @code
/// hurray::KvMetadata kv;
/// kv.set("general.architecture", hurray::KvValue::string("llama"));
/// kv.set("llama.vocab_size", hurray::KvValue::uint64(32000));
/// auto vocab = kv.get_uint64("llama.vocab_size");  // Result<uint64_t>
/// @endcode
class HURRAY_IO_EXPORT KvMetadata {
public:
    /// Adds `key` or replaces its value (keeping its position). Fails with
    /// `kInvalidName` for a key that is not valid UTF-8 of 1 .. 65,535 bytes.
    Status set(std::string key, KvValue value);
    /// Adds `key`; fails with `kDuplicateName` when it is already present.
    Status add(std::string key, KvValue value);
    /// Removes `key`; returns whether it was there.
    bool erase(std::string_view key);
    /// Removes `key` and returns its value (moved out, not copied); nullopt when
    /// it was not there.
    std::optional<KvValue> take(std::string_view key);

    /// The value of `key`, or nullptr.
    [[nodiscard]] const KvValue* find(std::string_view key) const noexcept;
    /// Whether `key` is present.
    [[nodiscard]] bool contains(std::string_view key) const noexcept { return find(key) != nullptr; }
    /// The entries, in insertion (file) order.
    [[nodiscard]] const std::vector<KvEntry>& entries() const noexcept { return entries_; }
    /// Number of entries.
    [[nodiscard]] size_t size() const noexcept { return entries_.size(); }
    /// Whether there is no entry.
    [[nodiscard]] bool empty() const noexcept { return entries_.empty(); }

    /// The string value of `key`. Fails with `kNotFound` when the key is
    /// absent and `kTypeMismatch` (naming both types) when it holds another type.
    [[nodiscard]] Result<std::string_view> get_string(std::string_view key) const;
    /// The int64 value of `key` (see `get_string` for the errors).
    [[nodiscard]] Result<int64_t> get_int64(std::string_view key) const;
    /// The uint64 value of `key`.
    [[nodiscard]] Result<uint64_t> get_uint64(std::string_view key) const;
    /// The float64 value of `key`.
    [[nodiscard]] Result<double> get_float64(std::string_view key) const;
    /// The bool value of `key`.
    [[nodiscard]] Result<bool> get_bool(std::string_view key) const;
    /// The bytes value of `key`.
    [[nodiscard]] Result<std::span<const uint8_t>> get_bytes(std::string_view key) const;
    /// The array value of `key`.
    [[nodiscard]] Result<const KvArray*> get_array(std::string_view key) const;

    /// Entry-wise equality, order included.
    bool operator==(const KvMetadata& other) const { return entries_ == other.entries_; }

private:
    /// Hashes std::string and std::string_view alike, so that lookups by
    /// string_view need no temporary std::string (C++20 heterogeneous lookup).
    struct KeyHash {
        using is_transparent = void;
        size_t operator()(std::string_view key) const noexcept { return std::hash<std::string_view>{}(key); }
    };
    std::vector<KvEntry> entries_;
    std::unordered_map<std::string, size_t, KeyHash, std::equal_to<>> positions_;  // key -> index in entries_
};

/// Checks a KV collection for writing: keys (`check_name`), string values and
/// string array elements valid UTF-8, lengths and counts that fit their
/// `uint32` fields, private tags (0xF0-0xFE) only with `allow_private`.
HURRAY_IO_EXPORT Status check_kv(const KvMetadata& kv, bool allow_private = false);

/// Encodes the KV section (`u32 count`, then `u16 key_len | key | u8 tag |
/// payload` per entry) after `check_kv`. Fails with `kSizeOverflow` when the
/// section would exceed 4 GiB - 1 (`kv_length` is a `uint32`).
HURRAY_IO_EXPORT Result<std::vector<uint8_t>> encode_kv_section(const KvMetadata& kv, bool allow_private = false);

/// Decodes and validates a KV section that starts at absolute file offset
/// `base` (for the offsets in errors): every entry inside the section, keys
/// valid UTF-8 and unique, strings valid UTF-8, bools 0 or 1, array element
/// tags 1-6, no reserved tag, private tags only as `options` allow, and no
/// byte left over after the last entry. Counts are bounded by the bytes left
/// before anything is reserved; memory stays within a small constant times
/// the section's size.
HURRAY_IO_EXPORT Result<KvMetadata> decode_kv_section(std::span<const uint8_t> bytes, uint64_t base,
                                     const KvDecodeOptions& options = {});

}  // namespace hurray
