// SPDX-License-Identifier: Apache-2.0
// Internal: element lookup and materialization of the sparse layouts — COO,
// CSR, CSC and CSF (layouts/coo.md, csr.md, csc.md, csf.md). Index arrays are
// read as untrusted data: every pointer and coordinate is bounds-checked as it
// is used, and a bad one is kInvalidData naming the array and the entry.
#pragma once

#include <cstdint>
#include <span>

#include "hurray/core/result.hpp"
#include "hurray/core/tensor_view.hpp"

namespace hurray::detail {

/// Location of the element at `index` (already checked against the shape) of
/// a sparse view; `stored == false` when the layout stores no value there.
Result<ElementLocation> sparse_locate(const TensorView& v, std::span<const uint64_t> index);

/// Zero-fills `out` (exactly the storage bytes of every element) and writes
/// each stored value at its row-major position.
Status sparse_materialize(const TensorView& v, std::span<uint8_t> out);

}  // namespace hurray::detail
