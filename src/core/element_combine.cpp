// SPDX-License-Identifier: Apache-2.0
// Copying and adding single stored elements (element_combine.hpp).
#include "core/element_combine.hpp"

#include <bit>
#include <cstring>

#include "hurray/core/text.hpp"
#include "hurray/core/element_convert.hpp"

namespace hurray::detail {
namespace {

__extension__ typedef __int128 i128;  // NOLINT(modernize-use-using): __extension__ needs typedef

/// Whether element `i` of `bits`-bit elements lies inside `size` bytes.
bool inside(uint32_t bits, uint64_t i, size_t size) {
    if (bits == 0) {
        return false;
    }
    const uint64_t total_bits = static_cast<uint64_t>(size) * 8;  // size < 2^61 on every host
    return i < total_bits / bits;
}

Error outside(uint64_t i) {
    return {ErrorCode::kInvalidArgument, "element " + dec(i) + " lies outside its buffer"};
}

/// Little-endian unsigned load of `w` bytes at `p`.
uint64_t load(const uint8_t* p, uint32_t w) {
    uint64_t v = 0;
    for (uint32_t k = 0; k < w; ++k) {
        v |= static_cast<uint64_t>(p[k]) << (8 * k);
    }
    return v;
}

void store(uint8_t* p, uint32_t w, uint64_t v) {
    for (uint32_t k = 0; k < w; ++k) {
        p[k] = static_cast<uint8_t>(v >> (8 * k));
    }
}

/// The value of a raw integer of `bits` bits, sign-extended when `is_signed`.
i128 int_value(uint64_t raw, uint32_t bits, bool is_signed) {
    if (bits < 64) {
        raw &= (uint64_t{1} << bits) - 1;
    }
    if (is_signed && bits < 64 && (raw >> (bits - 1)) != 0) {
        return static_cast<i128>(raw) - (static_cast<i128>(1) << bits);
    }
    if (is_signed && bits == 64) {
        return static_cast<int64_t>(raw);
    }
    return raw;
}

}  // namespace

Status copy_element(uint32_t bits, std::span<const uint8_t> src, uint64_t si, std::span<uint8_t> dst, uint64_t di) {
    if (!inside(bits, si, src.size())) {
        return outside(si);
    }
    if (!inside(bits, di, dst.size())) {
        return outside(di);
    }
    if (bits % 8 == 0) {
        const uint32_t w = bits / 8;
        // SAFETY: inside() proved that the w bytes of each element lie inside
        // its span; src and dst are distinct buffers (a member and the output).
        std::memcpy(dst.data() + di * w, src.data() + si * w, w);
        return Status::success();
    }
    store_packed(dst, di, bits, load_packed(src, si, bits));
    return Status::success();
}

bool can_add(ElementType t) noexcept { return is_builtin(t) && t != ElementType::kFloat128; }

Status add_element(ElementType t, std::span<const uint8_t> src, uint64_t si, std::span<uint8_t> dst, uint64_t di) {
    if (!can_add(t)) {
        return Error(ErrorCode::kUnsupported, "add: no arithmetic for type_tag " + hex(type_tag(t)));
    }
    const uint32_t bits = bit_width(t);
    if (!inside(bits, si, src.size())) {
        return outside(si);
    }
    if (!inside(bits, di, dst.size())) {
        return outside(di);
    }
    if (t == ElementType::kBool) {
        store_packed(dst, di, 1, load_packed(dst, di, 1) | load_packed(src, si, 1));
        return Status::success();
    }
    if (is_signed_integer(t) || is_unsigned_integer(t)) {
        const bool is_signed = is_signed_integer(t);
        const i128 lo = is_signed ? -(static_cast<i128>(1) << (bits - 1)) : 0;
        const i128 hi = is_signed ? (static_cast<i128>(1) << (bits - 1)) - 1 : (static_cast<i128>(1) << bits) - 1;
        uint64_t a = 0;
        uint64_t b = 0;
        const uint32_t w = bits / 8;
        if (bits >= 8) {
            // SAFETY: inside() proved both elements' w bytes are in their spans.
            a = load(dst.data() + di * w, w);
            b = load(src.data() + si * w, w);
        } else {
            a = load_packed(dst, di, bits);
            b = load_packed(src, si, bits);
        }
        i128 sum = int_value(a, bits, is_signed) + int_value(b, bits, is_signed);
        sum = sum < lo ? lo : (sum > hi ? hi : sum);
        const auto raw = static_cast<uint64_t>(sum);  // two's complement, truncated below
        if (bits >= 8) {
            // SAFETY: as above.
            store(dst.data() + di * w, w, raw);
        } else {
            store_packed(dst, di, bits, static_cast<uint32_t>(raw & ((1U << bits) - 1)));
        }
        return Status::success();
    }
    if (t == ElementType::kComplex64 || t == ElementType::kComplex128) {
        const bool wide = t == ElementType::kComplex128;
        const uint64_t half = wide ? 8 : 4;
        for (uint64_t part = 0; part < 2; ++part) {
            // SAFETY: inside() proved that each element's 2 * half bytes are in its span.
            uint8_t* pd = dst.data() + di * 2 * half + part * half;
            const uint8_t* ps = src.data() + si * 2 * half + part * half;
            if (wide) {
                const double s = std::bit_cast<double>(load(pd, 8)) + std::bit_cast<double>(load(ps, 8));
                store(pd, 8, std::bit_cast<uint64_t>(s));
            } else {
                const double s = static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(load(pd, 4)))) +
                                 static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(load(ps, 4))));
                // Rounding to double then to float is innocuous (53 >= 2 * 24 + 2 bits).
                store(pd, 4, std::bit_cast<uint32_t>(static_cast<float>(s)));
            }
        }
        return Status::success();
    }
    HURRAY_ASSIGN_OR_RETURN(double a, element_as_double(t, dst, di));
    HURRAY_ASSIGN_OR_RETURN(double b, element_as_double(t, src, si));
    return element_from_double(t, dst, di, a + b);
}

}  // namespace hurray::detail
