// SPDX-License-Identifier: Apache-2.0
// Internal: the pieces of validate_data (validate.hpp), one file per family
// of rules: sparse index structures (validate_sparse.cpp), the block-paged
// block table (validate_paged.cpp), quantization parameter values
// (validate_quantization.cpp) and element bytes (validate_elements.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "core/index_array.hpp"
#include "hurray/core/result.hpp"
#include "hurray/core/tensor_view.hpp"
#include "hurray/core/validate.hpp"

namespace hurray::detail {

/// What every data check needs.
struct DataCtx {
    const TensorView& view;
    const TensorDescriptor& d;
    const ValidateOptions& opt;
};

/// A `kInvalidData` error with the given message (no descriptor offset).
Error data_error(std::string message);

/// `"<field> (buffer <b>) entry <i> at byte <off>: "`, the prefix of a
/// message about one entry of a data buffer.
std::string at_entry(const char* field, size_t buffer, uint64_t entry, uint64_t byte);

/// The bytes of buffer `b`, or a `kInvalidData` error naming `field` when the
/// descriptor has no such buffer (a descriptor that skipped check_descriptor).
Result<std::span<const uint8_t>> data_buffer(const DataCtx& c, size_t b, const char* field);

/// `count` little-endian entries of `width` bytes at the start of buffer `b`,
/// or a `kInvalidData` error when the buffer is too small for them.
Result<IndexArray> index_buffer(const DataCtx& c, size_t b, const char* field, uint32_t width,
                                uint64_t count);

/// Validation of each layout family and of the quantization parameters.
Status validate_coo(const DataCtx& c, const CooLayout& layout);
Status validate_compressed(const DataCtx& c, bool csr, uint64_t nnz);
Status validate_csf(const DataCtx& c, const CsfLayout& layout);
Status validate_block_paged(const DataCtx& c, const BlockPagedLayout& layout);
Status validate_quantization_values(const DataCtx& c);
Status validate_element_bytes(const DataCtx& c);

}  // namespace hurray::detail
