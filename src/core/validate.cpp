// SPDX-License-Identifier: Apache-2.0
// validate_data: the entry points, and the helpers the rule families share.
#include "hurray/core/validate.hpp"

#include <string>
#include <utility>
#include <variant>

#include "hurray/core/checked_math.hpp"
#include "hurray/core/text.hpp"
#include "core/validate_internal.hpp"

namespace hurray {
namespace detail {

Error data_error(std::string message) { return {ErrorCode::kInvalidData, std::move(message)}; }

std::string at_entry(const char* field, size_t buffer, uint64_t entry, uint64_t byte) {
    return std::string(field) + " (buffer " + dec(buffer) + ") entry " + dec(entry) + " at byte " + dec(byte) +
           ": ";
}

Result<std::span<const uint8_t>> data_buffer(const DataCtx& c, size_t b, const char* field) {
    if (b >= c.view.buffer_count()) {
        return data_error(std::string(field) + ": buffer " + dec(b) + " does not exist (the tensor has " +
                          dec(c.view.buffer_count()) + " buffers)");
    }
    return c.view.buffer(b);
}

Result<IndexArray> index_buffer(const DataCtx& c, size_t b, const char* field, uint32_t width,
                                uint64_t count) {
    HURRAY_ASSIGN_OR_RETURN(std::span<const uint8_t> bytes, data_buffer(c, b, field));
    if (auto a = IndexArray::make(bytes, width, count)) {
        return *a;
    }
    const std::optional<uint64_t> need = mul_u64(count, width);
    return data_error(std::string(field) + " (buffer " + dec(b) + "): holds " + dec(bytes.size()) +
                      " bytes, " + dec(count) + " entries of " + dec(width) + " bytes need " +
                      (need ? dec(*need) : std::string("more than 2^64")));
}

}  // namespace detail

Status validate_data(const TensorView& view, const ValidateOptions& options) {
    const TensorDescriptor& d = view.descriptor();
    const detail::DataCtx c{view, d, options};
    if (const auto* coo = std::get_if<CooLayout>(&d.layout)) {
        HURRAY_RETURN_IF_ERROR(detail::validate_coo(c, *coo));
    } else if (const auto* csr = std::get_if<CsrLayout>(&d.layout)) {
        HURRAY_RETURN_IF_ERROR(detail::validate_compressed(c, true, csr->nnz));
    } else if (const auto* csc = std::get_if<CscLayout>(&d.layout)) {
        HURRAY_RETURN_IF_ERROR(detail::validate_compressed(c, false, csc->nnz));
    } else if (const auto* csf = std::get_if<CsfLayout>(&d.layout)) {
        HURRAY_RETURN_IF_ERROR(detail::validate_csf(c, *csf));
    } else if (const auto* paged = std::get_if<BlockPagedLayout>(&d.layout)) {
        HURRAY_RETURN_IF_ERROR(detail::validate_block_paged(c, *paged));
    }
    HURRAY_RETURN_IF_ERROR(detail::validate_quantization_values(c));
    return detail::validate_element_bytes(c);
}

Status validate_data(const TensorDescriptor& d, std::span<const std::span<const uint8_t>> buffers,
                     const ValidateOptions& options) {
    HURRAY_ASSIGN_OR_RETURN(TensorView view, TensorView::make(d, buffers));
    return validate_data(view, options);
}

}  // namespace hurray
