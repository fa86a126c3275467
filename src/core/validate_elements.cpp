// SPDX-License-Identifier: Apache-2.0
// Data validation of element bytes (element-types.md): float8_e8m0 data must
// not hold the reserved 0x00 / 0xFF patterns, and the unused bits after the
// last element of packed sub-byte data must be zero.
#include <algorithm>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/block_padding.hpp"
#include "hurray/core/checked_math.hpp"
#include "hurray/core/text.hpp"
#include "core/validate_internal.hpp"

namespace hurray::detail {
namespace {

__extension__ typedef __int128 i128;  // NOLINT(modernize-use-using): __extension__ needs typedef

/// A run of `count` contiguous elements starting at byte `start` of buffer 0.
struct Run {
    uint64_t start = 0;
    uint64_t count = 0;
    const char* field = "data";
};

/// The contiguous run of elements in buffer 0, for the layouts that have one.
std::optional<Run> contiguous_run(const TensorDescriptor& d) {
    if (std::holds_alternative<RowMajorLayout>(d.layout) || std::holds_alternative<ColumnMajorLayout>(d.layout)) {
        if (auto n = stored_element_count(d)) {
            return Run{d.byte_offset, *n, "data"};
        }
        return std::nullopt;
    }
    if (const auto* l = std::get_if<CooLayout>(&d.layout)) {
        return Run{0, l->nnz, "coo.values"};
    }
    if (const auto* l = std::get_if<CsrLayout>(&d.layout)) {
        return Run{0, l->nnz, "csr.values"};
    }
    if (const auto* l = std::get_if<CscLayout>(&d.layout)) {
        return Run{0, l->nnz, "csc.values"};
    }
    if (const auto* l = std::get_if<CsfLayout>(&d.layout)) {
        return Run{0, l->nnz, "csf.values"};
    }
    if (const auto* l = std::get_if<BlockPagedLayout>(&d.layout)) {
        if (d.rank() != 3 || d.shape[1] == kDynamicDim || d.shape[2] == kDynamicDim) {
            return std::nullopt;
        }
        std::optional<uint64_t> n = mul_u64(l->num_pages, l->page_size);
        n = n ? mul_u64(*n, d.shape[1]) : std::nullopt;
        n = n ? mul_u64(*n, d.shape[2]) : std::nullopt;
        if (n) {
            return Run{0, *n, "block_paged.page_pool"};
        }
    }
    return std::nullopt;
}

/// "[i, j, ...]".
std::string coords_text(std::span<const uint64_t> idx) {
    std::string s = "[";
    for (size_t k = 0; k < idx.size(); ++k) {
        s += (k == 0 ? "" : ", ") + dec(idx[k]);
    }
    return s + "]";
}

/// The multi-index of `linear` in row-major (or column-major) order, as text.
std::string index_text(uint64_t linear, std::span<const uint64_t> shape, bool column_major) {
    std::vector<uint64_t> idx(shape.size());
    for (size_t i = 0; i < shape.size(); ++i) {
        const size_t k = column_major ? i : shape.size() - 1 - i;
        const uint64_t n = shape[k] == 0 ? 1 : shape[k];
        idx[k] = linear % n;
        linear /= n;
    }
    return coords_text(idx);
}

/// Advances a row-major odometer over `shape`; false once it wraps around.
bool next_index(std::vector<uint64_t>& idx, std::span<const uint64_t> shape) {
    for (size_t k = idx.size(); k > 0; --k) {
        if (idx[k - 1] + 1 < shape[k - 1]) {
            ++idx[k - 1];
            return true;
        }
        idx[k - 1] = 0;
    }
    return false;
}

Error reserved_e8m0(const std::string& where, uint8_t byte) {
    return data_error(where + "float8_e8m0 " + hex(byte) + " is reserved (NaN) and must not be used as a data value");
}

// Padding bits after the last element of a packed sub-byte run (strict only).
Status check_padding(const DataCtx& c, std::span<const uint8_t> data, const Run& run) {
    const TensorDescriptor& d = c.d;
    if (!c.opt.strict || d.extension_type || !is_sub_byte(d.element_type) || run.count == 0) {
        return Status::success();
    }
    const uint32_t bits = bit_width(d.element_type);
    auto total = storage_bytes(d.element_type, run.count);
    const std::optional<uint64_t> used = mul_u64(run.count, bits);
    const std::optional<uint64_t> end = total ? add_u64(run.start, *total) : std::nullopt;
    if (!used || !end || *end > data.size()) {
        return Status::success();  // not addressable: check_descriptor reports the size
    }
    for (uint64_t byte = *used / 8; byte < *total; ++byte) {
        // Bits of this byte at or after bit `used` (relative to the run).
        const uint64_t first = std::max(*used, byte * 8) - byte * 8;
        const auto mask = static_cast<uint8_t>(0xFFU << first);
        const uint8_t v = data[static_cast<size_t>(run.start + byte)];
        if ((v & mask) != 0) {
            return data_error(std::string(run.field) + " (buffer 0) at byte " + dec(run.start + byte) +
                              ": the padding bits after the last of " + dec(run.count) + " packed " +
                              std::string(type_name(d.element_type)) + " elements must be zero, got " + hex(v) +
                              " (padding mask " + hex(mask) + ")");
        }
    }
    return Status::success();
}

// float8_e8m0 elements of a strided tensor, visited by an odometer.
Status check_e8m0_strided(const TensorDescriptor& d, std::span<const uint8_t> data, const StridedLayout& s) {
    const size_t rank = d.shape.size();
    if (has_dynamic_dim(d.shape) || s.strides.size() != rank ||
        std::find(d.shape.begin(), d.shape.end(), 0) != d.shape.end()) {
        return Status::success();
    }
    std::vector<uint64_t> idx(rank, 0);
    do {
        // The element offset is recomputed in 128 bits: check_descriptor
        // bounded the addressed span, but this must hold even without it.
        i128 pos = static_cast<i128>(d.byte_offset);
        for (size_t k = 0; k < rank; ++k) {
            pos += static_cast<i128>(s.strides[k]) * static_cast<i128>(idx[k]);
        }
        if (pos < 0 || pos >= static_cast<i128>(data.size())) {
            return data_error("strided data (buffer 0): element " + coords_text(idx) + " lies outside the buffer");
        }
        const uint8_t v = data[static_cast<size_t>(pos)];
        if (v == 0x00 || v == 0xFF) {
            return reserved_e8m0(
                "data (buffer 0) element " + coords_text(idx) + " at byte " + dec(static_cast<uint64_t>(pos)) + ": ", v);
        }
    } while (next_index(idx, d.shape));
    return Status::success();
}

// float8_e8m0 elements of a tiled or curve layout, through TensorView::locate.
// Until locate supports the layout (kUnsupported), the check is skipped.
Status check_e8m0_located(const DataCtx& c) {
    const TensorDescriptor& d = c.d;
    if (has_dynamic_dim(d.shape) || std::find(d.shape.begin(), d.shape.end(), 0) != d.shape.end()) {
        return Status::success();
    }
    std::vector<uint64_t> idx(d.shape.size(), 0);
    do {
        auto loc = c.view.locate(idx);
        if (!loc) {
            if (loc.error().code() == ErrorCode::kUnsupported) {
                return Status::success();
            }
            return std::move(loc).error();
        }
        if (!loc->stored) {
            continue;
        }
        const std::span<const uint8_t> data =
            loc->buffer < c.view.buffer_count() ? c.view.buffer(loc->buffer) : std::span<const uint8_t>();
        const std::optional<uint64_t> pos = add_u64(loc->byte_base, loc->element);
        if (!pos || *pos >= data.size()) {
            return data_error("data (buffer " + dec(loc->buffer) + "): element " + coords_text(idx) +
                              " lies outside the buffer");
        }
        const uint8_t v = data[static_cast<size_t>(*pos)];
        if (v == 0x00 || v == 0xFF) {
            return reserved_e8m0(
                "data (buffer " + dec(loc->buffer) + ") element " + coords_text(idx) + " at byte " + dec(*pos) + ": ",
                v);
        }
    } while (next_index(idx, d.shape));
    return Status::success();
}

// float8_e8m0 data: no reserved 0x00 / 0xFF element.
Status check_e8m0(const DataCtx& c, std::span<const uint8_t> data, const std::optional<Run>& run) {
    const TensorDescriptor& d = c.d;
    if (d.element_type != ElementType::kFloat8E8M0 || d.extension_type) {
        return Status::success();
    }
    if (std::holds_alternative<BlockPagedLayout>(d.layout)) {
        // Slots past a sequence's last token are undefined (block-paged.md
        // § Partial trailing page) and the token counts are not in the
        // descriptor, so the pool cannot be told apart from padding.
        return Status::success();
    }
    if (run) {
        const std::optional<uint64_t> end = add_u64(run->start, run->count);
        if (!end || *end > data.size()) {
            return Status::success();  // check_descriptor reports the size
        }
        const bool column_major = std::holds_alternative<ColumnMajorLayout>(d.layout);
        const bool dense = std::holds_alternative<RowMajorLayout>(d.layout) || column_major;
        for (uint64_t i = 0; i < run->count; ++i) {
            const uint8_t v = data[static_cast<size_t>(run->start + i)];
            if (v == 0x00 || v == 0xFF) {
                const uint64_t byte = run->start + i;
                if (dense) {
                    return reserved_e8m0("data (buffer 0) element " + index_text(i, d.shape, column_major) +
                                             " at byte " + dec(byte) + ": ",
                                         v);
                }
                return reserved_e8m0(at_entry(run->field, 0, i, byte), v);
            }
        }
        return Status::success();
    }
    if (const auto* s = std::get_if<StridedLayout>(&d.layout)) {
        return check_e8m0_strided(d, data, *s);
    }
    if (std::holds_alternative<TiledLayout>(d.layout) || std::holds_alternative<MortonLayout>(d.layout) ||
        std::holds_alternative<HilbertLayout>(d.layout)) {
        return check_e8m0_located(c);
    }
    return Status::success();
}

}  // namespace

Status validate_element_bytes(const DataCtx& c) {
    if (c.view.buffer_count() == 0) {
        return Status::success();
    }
    const std::span<const uint8_t> data = c.view.buffer(0);
    const std::optional<Run> run = contiguous_run(c.d);
    HURRAY_RETURN_IF_ERROR(check_e8m0(c, data, run));
    if (run) {
        HURRAY_RETURN_IF_ERROR(check_padding(c, data, *run));
    }
    return Status::success();
}

}  // namespace hurray::detail
