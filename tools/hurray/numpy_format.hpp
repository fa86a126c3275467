#pragma once
/// @file
/// Printing a tensor the way NumPy's `print(array)` does (numpy.array2string defaults):
/// nested brackets per dimension, elements separated by one space, lines wrapped at 75
/// characters, arrays of more than 1000 elements summarised with `...` keeping 3 items at
/// each edge of every dimension, columns aligned. Floats: up to 8 fractional digits of
/// the shortest round-trip text of the element type (float16, float32, float64),
/// trailing zeros dropped (`1.`, `2.5`), scientific notation when a non-zero magnitude is
/// >= 1e8 or < 1e-4 or the largest / smallest ratio exceeds 1000. Integers right-aligned;
/// booleans ` True` / `False`.

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "hurray/core/result.hpp"

namespace hurray::cli {

/// How elements are printed.
enum class ValueKind : uint8_t {
    kFloat,     ///< floating point (its shortest text depends on `float_bits`)
    kSigned,    ///< signed integer
    kUnsigned,  ///< unsigned integer
    kBool,      ///< True / False
};

/// One element: `f` for kFloat, `i` for kSigned, `u` for kUnsigned and kBool.
struct Scalar {
    double f = 0;    ///< float value (exact widening of the stored one)
    int64_t i = 0;   ///< signed integer value
    uint64_t u = 0;  ///< unsigned integer or bool (0 / 1)
};

/// Reads the element at a full index.
using FetchElement = std::function<Result<Scalar>(std::span<const uint64_t> index)>;

/// Printing options (NumPy's defaults).
struct NumpyOptions {
    uint64_t threshold = 1000;  ///< more elements than this: summarise
    uint64_t edge_items = 3;    ///< items kept at each edge when summarising
    size_t line_width = 75;     ///< wrap lines at this width
    int precision = 8;          ///< most fractional digits of a float
};

/// Formats the tensor of `shape` whose elements `fetch` reads (only the shown ones are
/// read). `float_bits` (16, 32 or 64) picks the shortest round-trip text of floats.
/// Fails with what `fetch` fails with, or kInvalidArgument when the shown part alone
/// would exceed 10^7 elements.
/// @code
/// auto text = hurray::cli::format_numpy(shape, ValueKind::kFloat, 32, fetch);
/// @endcode
Result<std::string> format_numpy(std::span<const uint64_t> shape, ValueKind kind, int float_bits,
                                 const FetchElement& fetch, const NumpyOptions& options = {});

}  // namespace hurray::cli
