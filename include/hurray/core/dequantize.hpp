// SPDX-License-Identifier: Apache-2.0
/// @file
/// Dequantization: the real (float32) value of every element of a quantized
/// tensor, by the normative formulas of docs/spec/quantization/*.md.
///
/// | Scheme | Value of the storage element `q` |
/// | --- | --- |
/// | per-tensor affine | `scale * (q - zero_point)` |
/// | per-channel affine | `scale[c] * (q - zero_point[c])`, `c = i_axis` |
/// | per-block affine | `scale[b] * (q - zero_point[b])` |
/// | NF4 | `absmax[b] * nf4[q]` (`kNf4Levels`) |
/// | MXFP | `2^(e[b] - 127) * value(q)` |
///
/// with the block index `b = outer * ceil(S / K) + floor(i_axis / K)`, where
/// `outer` is the row-major linear index over every dimension but `axis`,
/// `S = shape[axis]` and `K = block_size` (per-block-affine.md § Block Layout).
/// `q - zero_point` is an exact integer difference, converted to float32 and
/// then multiplied in float32; float16 and bfloat16 scales are widened exactly.
///
/// Parameter values are checked as they are used (the quantization documents
/// let a reader defer these checks to dequantization): per-channel and
/// per-block scales must be finite and non-zero, zero points within the range
/// of the storage type, NF4 absmax values finite and >= 0, and MXFP scale bytes
/// other than the reserved 0x00 and 0xFF. A violation fails with
/// `kInvalidData`, naming the scheme, the buffer and the entry.
///
/// Layouts: row-major and column-major tensors are read from their buffers
/// directly (row-major through vectorised loops over contiguous runs). Other
/// dense layouts go through `TensorView::materialize`. Sparse layouts (COO,
/// CSR, CSC, CSF) dequantize their stored values; an element that is not
/// stored is the real value 0.0, whatever the zero point. Block-paged tensors
/// under per-block affine take their parameters per page slot
/// (`scales[phys_page * page_size + offset_in_page]`, layouts/block-paged.md §
/// Quantization), found through `TensorView::locate`; NF4 and MXFP are not
/// defined for block-paged tensors and fail with `kUnsupported`.
#pragma once

#include "hurray/core/export.hpp"
#include <span>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/core/tensor_view.hpp"

namespace hurray {

/// Writes the float32 value of every logical element of the quantized tensor
/// `view`, in row-major logical order, into `out`, which must hold exactly
/// `element_count(shape)` floats.
///
/// Fails with `kInvalidArgument` when the tensor is not quantized or `out` has
/// the wrong size, `kUnsupported` for a scheme this library does not
/// interpret (private or opaque) or a layout it cannot address, and
/// `kInvalidData` for a parameter value that violates its scheme's rule. On
/// failure the contents of `out` are unspecified.
///
/// @code
/// auto view = hurray::TensorView::make(desc, spans);
/// std::vector<float> w(4096 * 4096);
/// if (auto st = hurray::dequantize(*view, w); !st) {
///     std::puts(st.error().to_string().c_str());
/// }
/// @endcode
HURRAY_CORE_EXPORT Status dequantize(const TensorView& view, std::span<float> out);

/// `dequantize` into a new vector of `element_count(shape)` floats. Fails with
/// `kSizeOverflow` when that many floats cannot be allocated (a sparse tensor
/// may declare a logical shape far larger than its buffers).
///
/// @code
/// auto values = hurray::dequantize(*view);
/// if (values) std::printf("%f\n", (*values)[0]);
/// @endcode
HURRAY_CORE_EXPORT Result<std::vector<float>> dequantize(const TensorView& view);

/// Every logical element of any tensor as float32, in row-major logical
/// order: quantized tensors are dequantized (`dequantize`), others are
/// densified (`TensorView::materialize`: sparse, paged, tiled, strided and
/// column-major layouts) and converted (`convert_to_float32`; complex types
/// give their real part, bool 0/1, integers their value rounded to float32).
///
/// Fails with `kSizeOverflow` when the values cannot be allocated, with the
/// codes of `dequantize` and `materialize`, and with `kUnsupported` for
/// private element types.
///
/// @code
/// auto view = hurray::TensorView::make(desc, spans);
/// auto values = hurray::to_float32(*view);   // Result<std::vector<float>>
/// @endcode
[[nodiscard]] HURRAY_CORE_EXPORT Result<std::vector<float>> to_float32(const TensorView& view);

}  // namespace hurray
