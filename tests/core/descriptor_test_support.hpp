// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the descriptor tests: byte patching of encoded
// descriptors and assertions on the exact error code and byte offset.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hurray/core/builder.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/tensor_descriptor.hpp"

namespace hurray_desc_test {

using Bytes = std::vector<uint8_t>;

/// Encodes a descriptor that must be valid; records a test failure otherwise.
inline Bytes must_encode(const hurray::TensorDescriptor& d) {
    auto r = hurray::encode(d);
    if (!r.ok()) {
        ADD_FAILURE() << "encode failed: " << r.error().to_string();
        return {};
    }
    return *r;
}

/// Encodes a descriptor without validation (for deliberately invalid models).
inline Bytes must_encode_unchecked(const hurray::TensorDescriptor& d) {
    auto r = hurray::encode_unchecked(d);
    if (!r.ok()) {
        ADD_FAILURE() << "encode_unchecked failed: " << r.error().to_string();
        return {};
    }
    return *r;
}

/// Writes `v` as a `width`-byte little-endian integer at `at`.
inline void put_le(Bytes& b, size_t at, uint64_t v, size_t width) {
    if (at + width > b.size()) {
        ADD_FAILURE() << "put_le: offset " << at << " + " << width << " exceeds " << b.size();
        return;
    }
    for (size_t i = 0; i < width; ++i) {
        b[at + i] = static_cast<uint8_t>(v >> (8 * i));
    }
}
inline void put_u8(Bytes& b, size_t at, uint8_t v) { put_le(b, at, v, 1); }
inline void put_u16(Bytes& b, size_t at, uint16_t v) { put_le(b, at, v, 2); }
inline void put_u32(Bytes& b, size_t at, uint32_t v) { put_le(b, at, v, 4); }
inline void put_u64(Bytes& b, size_t at, uint64_t v) { put_le(b, at, v, 8); }

/// Reads a `width`-byte little-endian integer at `at`.
inline uint64_t get_le(const Bytes& b, size_t at, size_t width) {
    uint64_t v = 0;
    for (size_t i = 0; i < width && at + i < b.size(); ++i) {
        v |= static_cast<uint64_t>(b[at + i]) << (8 * i);
    }
    return v;
}

/// Rewrites `descriptor_length` (bytes 6..9) to the buffer's size.
inline void fix_length(Bytes& b) { put_u32(b, 6, static_cast<uint32_t>(b.size())); }

/// Inserts `extra` at `at` and fixes `descriptor_length`.
inline void insert_bytes(Bytes& b, size_t at, const Bytes& extra) {
    b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), extra.begin(), extra.end());
    fix_length(b);
}

/// Removes `n` bytes at `at` and fixes `descriptor_length`.
inline void erase_bytes(Bytes& b, size_t at, size_t n) {
    b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + n));
    fix_length(b);
}

inline std::string describe(const hurray::Error& e) { return e.to_string(); }

/// Passes when `r` failed with exactly `code` at exactly byte `offset`.
template <typename R>
::testing::AssertionResult Rejected(const R& r, hurray::ErrorCode code, uint64_t offset) {
    if (r.ok()) {
        return ::testing::AssertionFailure()
               << "accepted; expected " << hurray::error_code_name(code) << " at byte " << offset;
    }
    const hurray::Error& e = r.error();
    if (e.code() != code || e.offset() != offset) {
        return ::testing::AssertionFailure()
               << "got \"" << describe(e) << "\"; expected " << hurray::error_code_name(code)
               << " at byte " << offset;
    }
    return ::testing::AssertionSuccess() << describe(e);
}

/// Passes when `r` failed with exactly `code`, whatever the offset.
template <typename R>
::testing::AssertionResult RejectedWith(const R& r, hurray::ErrorCode code) {
    if (r.ok()) {
        return ::testing::AssertionFailure() << "accepted; expected " << hurray::error_code_name(code);
    }
    if (r.error().code() != code) {
        return ::testing::AssertionFailure()
               << "got \"" << describe(r.error()) << "\"; expected " << hurray::error_code_name(code);
    }
    return ::testing::AssertionSuccess() << describe(r.error());
}

/// Passes when `r` succeeded.
template <typename R>
::testing::AssertionResult Accepted(const R& r) {
    if (!r.ok()) {
        return ::testing::AssertionFailure() << "rejected: " << describe(r.error());
    }
    return ::testing::AssertionSuccess();
}

/// Passes when the model is rejected by check_descriptor AND refused by
/// encode, both with `code` at `offset`.
inline ::testing::AssertionResult ModelRejected(const hurray::TensorDescriptor& d, hurray::ErrorCode code,
                                                uint64_t offset,
                                                const hurray::DecodeOptions& options = {}) {
    auto checked = Rejected(hurray::check_descriptor(d, options), code, offset);
    if (!checked) {
        return ::testing::AssertionFailure() << "check_descriptor: " << checked.message();
    }
    auto encoded = Rejected(hurray::encode(d), code, offset);
    if (!encoded) {
        return ::testing::AssertionFailure() << "encode: " << encoded.message();
    }
    return ::testing::AssertionSuccess();
}

/// Decodes `bytes` and checks that the result re-encodes to the same bytes.
inline ::testing::AssertionResult RoundTrips(const Bytes& bytes, const hurray::DecodeOptions& options = {}) {
    auto d = hurray::decode(bytes, options);
    if (!d.ok()) {
        return ::testing::AssertionFailure() << "decode: " << describe(d.error());
    }
    auto again = hurray::encode_unchecked(*d);
    if (!again.ok()) {
        return ::testing::AssertionFailure() << "encode_unchecked: " << describe(again.error());
    }
    if (*again != bytes) {
        return ::testing::AssertionFailure() << "re-encoding differs from the input";
    }
    return ::testing::AssertionSuccess();
}

/// A CPU buffer handle of `size` bytes, 64-byte aligned.
inline hurray::BufferHandle buf(uint64_t size, uint32_t alignment = hurray::kMinBufferAlignment) {
    hurray::BufferHandle h;
    h.byte_size = size;
    h.alignment = alignment;
    return h;
}

/// Unwraps a builder result that must succeed.
inline hurray::TensorDescriptor must(hurray::Result<hurray::TensorDescriptor> r) {
    if (!r.ok()) {
        ADD_FAILURE() << "builder failed: " << r.error().to_string();
        return {};
    }
    return std::move(r).value();
}

}  // namespace hurray_desc_test
