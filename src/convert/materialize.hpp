// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file
/// Internal: a TensorSource's tensor as a whole, in memory — densified in its own element
/// type, or as float32 values — for --dequantize and for compare_sources. Composite heads
/// are assembled from the members that follow them in the source.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hurray/convert/tensor_source.hpp"
#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"

namespace hurray::convert::detail {

/// Whether `d` is a composite head.
bool is_composite_head(const TensorDescriptor& d) noexcept;

/// Whether `d` is plain dense data: unquantized, row-major, byte_offset 0, one buffer of
/// exactly the storage bytes of its elements (what every format holds as it is).
bool is_plain_dense(const TensorDescriptor& d) noexcept;

/// How many tensors the composite whose head is tensor `head` spans in `source`: the head,
/// its members and theirs (pre-order), 1 for a tensor that is not a head. Fails naming the
/// head when the source ends before its last member.
Result<size_t> composite_extent(const TensorSource& source, size_t head);

/// Every logical element of tensor `i`, row-major, as storage bytes of its element type
/// (packed types packed): densified (TensorView::materialize), a composite assembled from
/// its members (materialize_composite). Not for quantized tensors (their codes are not
/// values: use to_float32()).
Result<std::vector<uint8_t>> materialize_dense(const TensorSource& source, size_t i);

/// Every logical element of tensor `i` as float32, row-major: dequantized, densified,
/// converted from its element type, composites assembled.
Result<std::vector<float>> to_float32(const TensorSource& source, size_t i);

}  // namespace hurray::convert::detail
