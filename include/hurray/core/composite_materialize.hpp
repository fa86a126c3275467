// SPDX-License-Identifier: Apache-2.0
/// @file
/// The merged logical view of a partition or overlay composite
/// (docs/spec/layouts/composite.md § Composition Semantics): the head's
/// logical tensor assembled from its members' data.
#pragma once

#include "hurray/core/export.hpp"
#include <cstdint>
#include <span>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"
#include "hurray/core/tensor_view.hpp"

namespace hurray {

/// Writes the logical tensor of a partition or overlay composite into `out`,
/// in row-major order, as storage bytes of the head's element type (packed
/// types packed LSB first, padding bits zero). `out` must hold exactly
/// `storage_bytes(head type, element_count(head shape))` bytes.
///
/// `members` are views of the head's `member_count` members, in stream order.
/// The composite is validated first: a `CompositeAssembler` (strict) over the
/// head and the members' descriptors, and `validate_data` (strict) on every
/// member. An unquantized member stores the head's element type; a quantized
/// dense member is dequantized (float32) and converted to the head's type,
/// rounding to nearest even. A quantized sparse member and a nested composite
/// (it has no view) fail with `kUnsupported`.
///
/// - Partition: each member's values are placed in its box; unstored
///   elements of a sparse member are zero.
/// - Overlay: the base first (a sparse base: zero where nothing is stored),
///   then each correction in stream order. `combine_op` replace: a dense
///   correction replaces its whole box, a sparse correction only the elements
///   it stores (composite.md's SpQR example: "the correction's outlier value
///   if present, otherwise the base value"). `combine_op` add: each covering
///   correction's value is added, evaluated in the head's type: one addition
///   per correction, each rounded once to the head's type. For floating-point
///   heads the sum is formed in double and rounded to nearest even; for
///   float64 that is IEEE addition, and for float32, float16, bfloat16 and the
///   8/6/4-bit floats the intermediate double and float32 roundings are
///   innocuous (at least 2p + 2 bits for a p-bit target), so the result is
///   the correctly rounded sum. Types without infinities saturate. Integer
///   heads add exactly and saturate to the type's range; bool adds as "or";
///   complex heads add both parts; float128 addition fails with
///   `kUnsupported` (no quad arithmetic).
///
/// Dense, strided, tiled, curve and block-paged members are read through
/// `TensorView::materialize`; sparse members through their index buffers.
///
/// @code
/// std::vector<hurray::TensorView> views = {*base_view, *outliers_view};
/// std::vector<uint8_t> merged(4096 * 4096 * 2);  // float16 head
/// if (auto s = hurray::materialize_composite(head, views, merged); !s) return s;
/// @endcode
[[nodiscard]] HURRAY_CORE_EXPORT Status materialize_composite(const TensorDescriptor& head, std::span<const TensorView> members,
                                           std::span<uint8_t> out);

/// `materialize_composite` into a new vector of the right size.
///
/// @code
/// auto merged = hurray::materialize_composite(head, views);
/// @endcode
[[nodiscard]] HURRAY_CORE_EXPORT Result<std::vector<uint8_t>> materialize_composite(const TensorDescriptor& head,
                                                                 std::span<const TensorView> members);

}  // namespace hurray
