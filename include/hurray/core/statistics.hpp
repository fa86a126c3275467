// SPDX-License-Identifier: Apache-2.0
/// @file
/// Statistics section (docs/spec/metadata.md § Statistics Section): 72 advisory bytes.
#pragma once

#include "hurray/core/export.hpp"
#include <cstdint>

namespace hurray {

/// Bits of `Statistics::computed_mask`.
enum StatisticsMask : uint32_t {
    kStatNnzValid = 1U << 0,          ///< `nnz` is valid.
    kStatSparsityValid = 1U << 1,     ///< `sparsity_ratio` is valid.
    kStatValueRangeValid = 1U << 2,   ///< `value_min`, `value_max`, `value_abs_max` are valid.
    kStatValueStatsValid = 1U << 3,   ///< `value_mean`, `value_stddev` are valid.
    kStatNmSparsityValid = 1U << 4,   ///< `nm_n`, `nm_m` are valid.
    kStatNanInfValid = 1U << 5,       ///< `has_nan`, `has_inf` are valid.
    kStatAllValid = 0x3F,             ///< Every defined bit.
};

/// Size of the statistics section.
inline constexpr uint32_t kStatisticsSize = 72;

/// Advisory statistics of the tensor's values. A field is meaningful only
/// when its bit of `computed_mask` is set. Floating-point fields keep their
/// exact bit patterns through encode and decode.
struct HURRAY_CORE_EXPORT Statistics {
    uint32_t computed_mask = 0;   ///< Which fields are valid (`StatisticsMask`).
    uint64_t nnz = 0;             ///< Non-zero elements.
    double sparsity_ratio = 0;    ///< Fraction of zeros, in [0, 1].
    double value_min = 0;         ///< Minimum (dequantized) value.
    double value_max = 0;         ///< Maximum (dequantized) value.
    double value_abs_max = 0;     ///< Maximum absolute value.
    double value_mean = 0;        ///< Mean.
    double value_stddev = 0;      ///< Population standard deviation, >= 0.
    uint8_t nm_n = 0;             ///< N of N:M structured sparsity.
    uint8_t nm_m = 0;             ///< M of N:M structured sparsity, >= N.
    bool has_nan = false;         ///< A NaN is present.
    bool has_inf = false;         ///< An infinity is present.

    /// Bitwise equality (NaN fields compare equal when their bits are equal).
    bool operator==(const Statistics& o) const;
};

}  // namespace hurray
