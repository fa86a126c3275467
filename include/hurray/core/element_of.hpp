// SPDX-License-Identifier: Apache-2.0
/// @file
/// Which Hurray element type a C++ type stores: `hurray::element_type_of<T>()`
/// and the `hurray::TensorElement` concept.
///
/// Every arithmetic type maps by its representation: `float` to float32,
/// `double` to float64, integers by their size and signedness (so `long` and
/// `long long` are both int64 on LP64 Linux, and `char` follows the platform's
/// signedness), `bool` to the bit-packed bool type. `std::byte` is uint8;
/// `std::complex<float>` / `<double>` are complex64 / complex128; the value
/// types of float_types.hpp are their element types. `long double` has no
/// Hurray counterpart (x87 80-bit is not binary128) and is rejected at
/// compile time.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "hurray/core/element_type.hpp"
#include "hurray/core/float_types.hpp"

namespace hurray {

namespace detail {

template <typename T>
constexpr ElementType integer_element_type() noexcept {
    if constexpr (std::is_signed_v<T>) {
        if constexpr (sizeof(T) == 1) {
            return ElementType::kInt8;
        } else if constexpr (sizeof(T) == 2) {
            return ElementType::kInt16;
        } else if constexpr (sizeof(T) == 4) {
            return ElementType::kInt32;
        } else {
            return ElementType::kInt64;
        }
    } else {
        if constexpr (sizeof(T) == 1) {
            return ElementType::kUInt8;
        } else if constexpr (sizeof(T) == 2) {
            return ElementType::kUInt16;
        } else if constexpr (sizeof(T) == 4) {
            return ElementType::kUInt32;
        } else {
            return ElementType::kUInt64;
        }
    }
}

}  // namespace detail

/// A C++ type whose values are the elements of a Hurray element type: every
/// arithmetic type but `long double`, `std::byte`, `std::complex<float>` and
/// `std::complex<double>`, and the value types of float_types.hpp.
template <typename T>
concept TensorElement =
    (std::is_arithmetic_v<T> && !std::is_same_v<std::remove_cv_t<T>, long double> &&
     (!std::is_integral_v<T> || sizeof(T) <= 8)) ||
    std::is_same_v<std::remove_cv_t<T>, std::byte> || std::is_same_v<std::remove_cv_t<T>, std::complex<float>> ||
    std::is_same_v<std::remove_cv_t<T>, std::complex<double>> || std::is_same_v<std::remove_cv_t<T>, float16_t> ||
    std::is_same_v<std::remove_cv_t<T>, bfloat16_t> || std::is_same_v<std::remove_cv_t<T>, float8_e4m3_t> ||
    std::is_same_v<std::remove_cv_t<T>, float8_e5m2_t>;

/// The element type that stores values of `T`.
///
/// @code
/// static_assert(hurray::element_type_of<float>() == hurray::ElementType::kFloat32);
/// static_assert(hurray::element_type_of<hurray::bfloat16_t>() == hurray::ElementType::kBFloat16);
/// static_assert(hurray::element_type_of<long long>() == hurray::ElementType::kInt64);
/// @endcode
template <TensorElement T>
constexpr ElementType element_type_of() noexcept {
    using U = std::remove_cv_t<T>;
    if constexpr (std::is_same_v<U, bool>) {
        return ElementType::kBool;
    } else if constexpr (std::is_same_v<U, float>) {
        return ElementType::kFloat32;
    } else if constexpr (std::is_same_v<U, double>) {
        return ElementType::kFloat64;
    } else if constexpr (std::is_integral_v<U>) {
        return detail::integer_element_type<U>();
    } else if constexpr (std::is_same_v<U, std::byte>) {
        return ElementType::kUInt8;
    } else if constexpr (std::is_same_v<U, std::complex<float>>) {
        return ElementType::kComplex64;
    } else if constexpr (std::is_same_v<U, std::complex<double>>) {
        return ElementType::kComplex128;
    } else if constexpr (std::is_same_v<U, float16_t>) {
        return ElementType::kFloat16;
    } else if constexpr (std::is_same_v<U, bfloat16_t>) {
        return ElementType::kBFloat16;
    } else if constexpr (std::is_same_v<U, float8_e4m3_t>) {
        return ElementType::kFloat8E4M3;
    } else {
        static_assert(std::is_same_v<U, float8_e5m2_t>);
        return ElementType::kFloat8E5M2;
    }
}

/// The spelling of `T` used in error messages (`"float"`, `"int8_t"`,
/// `"hurray::float16_t"`, ...): the C++ name of the canonical type for
/// `element_type_of<T>()`.
template <TensorElement T>
constexpr const char* element_cpp_name() noexcept {
    switch (element_type_of<T>()) {
        case ElementType::kBool: return "bool";
        case ElementType::kFloat32: return "float";
        case ElementType::kFloat64: return "double";
        case ElementType::kInt8: return "int8_t";
        case ElementType::kUInt8: return std::is_same_v<std::remove_cv_t<T>, std::byte> ? "std::byte" : "uint8_t";
        case ElementType::kInt16: return "int16_t";
        case ElementType::kUInt16: return "uint16_t";
        case ElementType::kInt32: return "int32_t";
        case ElementType::kUInt32: return "uint32_t";
        case ElementType::kInt64: return "int64_t";
        case ElementType::kUInt64: return "uint64_t";
        case ElementType::kComplex64: return "std::complex<float>";
        case ElementType::kComplex128: return "std::complex<double>";
        case ElementType::kFloat16: return "hurray::float16_t";
        case ElementType::kBFloat16: return "hurray::bfloat16_t";
        case ElementType::kFloat8E4M3: return "hurray::float8_e4m3_t";
        case ElementType::kFloat8E5M2: return "hurray::float8_e5m2_t";
        default: return "?";
    }
}

}  // namespace hurray
