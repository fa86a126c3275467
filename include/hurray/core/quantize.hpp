// SPDX-License-Identifier: Apache-2.0
/// @file
/// Quantizers for authoring (tests, converters): float32 values in row-major
/// logical order to a row-major quantized tensor, descriptor and buffers, that
/// `dequantize` (dequantize.hpp) maps back within each scheme's error bound.
///
/// Calibration:
/// - affine, symmetric (absmax): `scale = max|x| / q_max`, zero point 0.
///   An unsigned storage type holds no negative value; symmetric quantization
///   of negative values to it is rejected.
/// - affine, asymmetric (min/max): the range `[min(x, 0), max(x, 0)]` maps
///   onto the whole storage range: `scale = (hi - lo) / (q_max - q_min)`,
///   `zero_point = round(q_min - lo / scale)`. The zero point is an int32
///   field, so for uint32 storage it is capped at 2^31 - 1 (the scale grows
///   to keep every value in range).
/// - A scale is rounded up to its scale type (float32, float16 or bfloat16),
///   so that the range stays covered; a parameter range of zero gets scale 1.
/// - Codes: `q = clamp(round(x / scale) + zero_point, q_min, q_max)`, rounding
///   to nearest, ties to even.
/// - NF4: `absmax = max|x|` per block, the code of the nearest level
///   `absmax * nf4[q]`.
/// - MXFP (OCP MX): per block the shared exponent
///   `e = floor(log2(max|x|)) - emax(element type)` clamped to [-126, 127]
///   (an all-zero block gets 2^-126), then each `x / 2^e` rounded to nearest
///   even in the element type, saturating at its largest finite value (int8
///   and int4 storage: rounded and clamped integers, emax 6 and 2). As in OCP
///   MX, values between the element type's largest finite value and
///   `2^(emax + 1)` (times the scale) saturate.
///
/// Padding elements of a partial trailing block are zero bytes. Every input
/// value must be finite. The descriptor is row-major, with the parameter
/// buffers after the data buffer (scales in buffer 1, zero points in buffer 2)
/// and passes `check_descriptor`.
#pragma once

#include "hurray/core/export.hpp"
#include <cstdint>
#include <span>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"

namespace hurray {

/// A quantized tensor built in memory: its descriptor and one byte vector per
/// buffer of the descriptor's buffer table.
///
/// @code
/// auto q = hurray::quantize_per_tensor(values, {2, 3}, hurray::ElementType::kInt8, true);
/// auto spans = q->spans();
/// auto view = hurray::TensorView::make(q->descriptor, spans);
/// @endcode
struct HURRAY_CORE_EXPORT QuantizedTensor {
    TensorDescriptor descriptor;                ///< Row-major, quantized, buffers sized.
    std::vector<std::vector<uint8_t>> buffers;  ///< Data buffer first, then the parameters.

    /// Read-only spans over `buffers`, in order (for `TensorView::make`).
    [[nodiscard]] std::vector<std::span<const uint8_t>> spans() const;
};

/// Per-tensor affine (0x01): one scale and zero point, inline.
/// `storage`: int8, uint8, int16, uint16, int32, uint32, int4, uint4, int2 or uint2.
///
/// @code
/// std::vector<float> x = {-1.0F, 0.5F, 2.0F, 0.0F};
/// auto q = hurray::quantize_per_tensor(x, {4}, hurray::ElementType::kUInt8, false);
/// @endcode
HURRAY_CORE_EXPORT Result<QuantizedTensor> quantize_per_tensor(std::span<const float> values, const Shape& shape,
                                            ElementType storage, bool symmetric);

/// Per-channel affine (0x02): float32 scales per index along `axis` in buffer
/// 1, int32 zero points in buffer 2 unless `symmetric`. Same storage types as
/// per-tensor.
///
/// @code
/// auto q = hurray::quantize_per_channel(w, {768, 1024}, hurray::ElementType::kInt8, 0, true);
/// @endcode
HURRAY_CORE_EXPORT Result<QuantizedTensor> quantize_per_channel(std::span<const float> values, const Shape& shape,
                                             ElementType storage, uint32_t axis, bool symmetric);

/// Per-block affine (0x03): blocks of `block_size` (a power of two >= 2, at
/// most `shape[axis]`) along `axis`, scales of `scale_type` (float16, bfloat16
/// or float32) in buffer 1, int32 zero points in buffer 2 unless `symmetric`.
/// `storage`: int8, uint8, int4, uint4, int2 or uint2.
///
/// @code
/// auto q = hurray::quantize_per_block(w, {4096, 4096}, hurray::ElementType::kInt4, 1, 32,
///                                     hurray::ElementType::kFloat16, true);
/// @endcode
HURRAY_CORE_EXPORT Result<QuantizedTensor> quantize_per_block(std::span<const float> values, const Shape& shape,
                                           ElementType storage, uint32_t axis, uint32_t block_size,
                                           ElementType scale_type, bool symmetric);

/// NF4 (0x04): uint4 codes, float32 absmax per block of `block_size` (a power
/// of two >= 8) along `axis` in buffer 1.
///
/// @code
/// auto q = hurray::quantize_nf4(w, {4096, 4096}, 1, 64);
/// @endcode
HURRAY_CORE_EXPORT Result<QuantizedTensor> quantize_nf4(std::span<const float> values, const Shape& shape, uint32_t axis,
                                     uint32_t block_size);

/// MXFP (0x05): e8m0 scales per block of `block_size` (a power of two in
/// [16, 2048] dividing `shape[axis]`) along `axis` in buffer 1. `storage`:
/// float8_e4m3, float8_e5m2, float4_e2m1, float6_e2m3, float6_e3m2, int8 or int4.
///
/// @code
/// auto q = hurray::quantize_mxfp(w, {128, 256}, hurray::ElementType::kFloat4E2M1, 1, 32);
/// @endcode
HURRAY_CORE_EXPORT Result<QuantizedTensor> quantize_mxfp(std::span<const float> values, const Shape& shape, ElementType storage,
                                      uint32_t axis, uint32_t block_size);

}  // namespace hurray
