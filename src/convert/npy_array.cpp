// SPDX-License-Identifier: Apache-2.0
// NumPy arrays as Hurray tensors (NpySource) and Hurray tensors as .npy bytes (NpyEncoder).
#include "convert/npy_array.hpp"

#include <algorithm>
#include <cstring>
#include <utility>
#include <variant>

#include "hurray/core/checked_math.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/core/element_convert.hpp"

namespace hurray::convert::detail {
namespace {


Error range_error(const std::string& name, uint64_t offset, size_t n, uint64_t size) {
    return {ErrorCode::kInvalidArgument, "tensor '" + name + "': bytes [" + std::to_string(offset) +
                                             ", +" + std::to_string(n) + ") are outside its " +
                                             std::to_string(size) + " bytes"};
}

/// An error of the raw reader, named after the array.
Error named(const NpyArray& a, const Error& e) {
    return {e.code(), a.what + ": " + e.message(), e.offset()};
}

}  // namespace

Result<SourceTensor> npy_tensor(std::string name, const NpyHeader& header) {
    auto d = make_dense(header.dtype.type, header.shape);
    if (!d) {
        return d.error().with_context({.prefix = "array '" + name + "'"});
    }
    if (header.fortran_order && header.shape.size() >= 2) {
        d->layout = ColumnMajorLayout{};  // the same bytes, first index fastest
    }
    return SourceTensor{std::move(name), std::move(d).value()};
}

NpySource::NpySource(Format format, std::vector<NpyArray> arrays, std::shared_ptr<void> keep)
    : format_(format), arrays_(std::move(arrays)), keep_(std::move(keep)) {}

Status NpySource::read(size_t i, size_t buffer, uint64_t offset, std::span<uint8_t> out) const {
    if (i >= arrays_.size()) {
        return Error(ErrorCode::kInvalidArgument, "tensor " + std::to_string(i) + ": out of range");
    }
    const NpyArray& a = arrays_[i];
    if (a.tensor.descriptor.buffers.empty()) {
        return Error(ErrorCode::kInvalidArgument, "tensor " + std::to_string(i) + ": has no buffer");
    }
    const uint64_t size = a.tensor.descriptor.buffers[0].byte_size;
    if (buffer != 0 || offset > size || out.size() > size - offset) {
        return range_error(a.tensor.name, offset, out.size(), size);
    }
    if (out.empty()) {
        return {};
    }
    const NpyDtype& dt = a.header.dtype;
    if (dt.type == ElementType::kBool) {
        // Presented byte b holds elements 8b .. 8b+7 (LSB first); NumPy stores one byte
        // per element, any non-zero byte is true.
        const uint64_t count = a.header.data_bytes;
        const uint64_t first = offset * 8;
        const uint64_t last = std::min<uint64_t>(count, (offset + out.size()) * 8);
        std::vector<uint8_t> raw(static_cast<size_t>(last - first));
        if (auto s = a.raw(first, raw); !s) {
            return named(a, s.error());
        }
        std::fill(out.begin(), out.end(), uint8_t{0});
        for (size_t k = 0; k < raw.size(); ++k) {
            if (raw[k] != 0) {
                out[k / 8] = static_cast<uint8_t>(out[k / 8] | (1U << (k % 8)));
            }
        }
        return {};
    }
    if (dt.big_endian) {
        const uint64_t unit = dt.item_size;
        const uint64_t begin = offset / unit * unit;
        const uint64_t end =
            std::min<uint64_t>(size, (offset + out.size() + unit - 1) / unit * unit);
        std::vector<uint8_t> raw(static_cast<size_t>(end - begin));
        if (auto s = a.raw(begin, raw); !s) {
            return named(a, s.error());
        }
        for (size_t k = 0; k + dt.swap_unit <= raw.size(); k += dt.swap_unit) {
            std::reverse(raw.begin() + static_cast<std::ptrdiff_t>(k),
                         raw.begin() + static_cast<std::ptrdiff_t>(k + dt.swap_unit));
        }
        std::memcpy(out.data(), raw.data() + (offset - begin), out.size());
        return {};
    }
    if (auto s = a.raw(offset, out); !s) {
        return named(a, s.error());
    }
    return {};
}

std::optional<std::span<const uint8_t>> NpySource::view(size_t i, size_t buffer) const {
    if (i >= arrays_.size() || buffer != 0) {
        return std::nullopt;
    }
    const NpyArray& a = arrays_[i];
    if (a.header.dtype.type == ElementType::kBool || a.header.dtype.big_endian || !a.raw_view) {
        return std::nullopt;
    }
    return a.raw_view();
}

Result<NpyEncoder> NpyEncoder::make(const TensorSource& source, size_t i) {
    const SourceTensor& t = source.tensor(i);
    const TensorDescriptor& d = t.descriptor;
    const std::string what = "tensor '" + t.name + "'";
    const std::string hint =
        ": NumPy holds plain arrays (convert with --dequantize / ConvertOptions::dequantize)";
    if (d.quantization) {
        return Error(ErrorCode::kUnsupported, what + " is quantized" + hint);
    }
    const bool row = std::holds_alternative<RowMajorLayout>(d.layout);
    const bool col = std::holds_alternative<ColumnMajorLayout>(d.layout);
    if (!row && !col) {
        return Error(ErrorCode::kUnsupported,
                     what + " has layout " + std::string(layout_name(d.layout_tag())) + hint);
    }
    ElementType written = d.element_type;
    switch (d.element_type) {  // no NumPy dtype: widened exactly
        case ElementType::kBFloat16:
        case ElementType::kFloat8E4M3:
        case ElementType::kFloat8E5M2:
        case ElementType::kFloat8E8M0:
        case ElementType::kFloat4E2M1:
        case ElementType::kFloat6E2M3:
        case ElementType::kFloat6E3M2:
            written = ElementType::kFloat32;
            break;
        case ElementType::kInt4:
        case ElementType::kInt2:
            written = ElementType::kInt8;
            break;
        case ElementType::kUInt4:
        case ElementType::kUInt2:
            written = ElementType::kUInt8;
            break;
        default:
            break;
    }
    HURRAY_ASSIGN_OR_RETURN(const std::string descr, npy_descr_of(written, what));
    auto count = element_count(d.shape);
    if (!count) {
        return count.error().with_context({.prefix = what});
    }
    auto stored = d.element_storage_bytes(*count);
    if (!stored) {
        return stored.error().with_context({.prefix = what});
    }
    if (d.byte_offset != 0 || d.buffers.size() != 1 || d.buffers[0].byte_size != *stored) {
        return Error(
            ErrorCode::kUnsupported,
            what + ": its data is not exactly its elements (a byte_offset or padding)" + hint);
    }
    NpyEncoder e(source, i);
    e.count_ = *count;
    e.unpack_bool_ = d.element_type == ElementType::kBool;
    e.stored_ = d.element_type;
    e.written_ = written;
    if (written != d.element_type) {
        auto widened = mul_u64(*count, written == ElementType::kFloat32 ? 4 : 1);
        if (!widened) {
            return Error(ErrorCode::kSizeOverflow, what + ": widened data overflows 64 bits");
        }
        e.data_bytes_ = *widened;
    } else {
        e.data_bytes_ = e.unpack_bool_ ? *count : *stored;
    }
    e.header_ = format_npy_header(descr, col && d.shape.size() >= 2, d.shape);
    return e;
}

Status NpyEncoder::read(uint64_t pos, std::span<uint8_t> out) const {
    size_t done = 0;
    if (pos < header_.size()) {
        const auto n = static_cast<size_t>(std::min<uint64_t>(header_.size() - pos, out.size()));
        std::memcpy(out.data(), header_.data() + pos, n);
        done = n;
    }
    if (done == out.size()) {
        return {};
    }
    const uint64_t dpos = pos + done - header_.size();
    const std::span<uint8_t> rest = out.subspan(done);
    if (dpos > data_bytes_ || rest.size() > data_bytes_ - dpos) {
        return Error(ErrorCode::kInvalidArgument, "npy bytes past the end");
    }
    if (written_ != stored_) {
        return read_widened(dpos, rest);
    }
    if (!unpack_bool_) {
        return source_->read(index_, 0, dpos, rest);
    }
    // One NumPy byte per element from the bit-packed bools.
    const uint64_t first = dpos / 8;
    const uint64_t last = (dpos + rest.size() - 1) / 8;
    std::vector<uint8_t> packed(static_cast<size_t>(last - first + 1));
    HURRAY_RETURN_IF_ERROR(source_->read(index_, 0, first, packed));
    for (size_t k = 0; k < rest.size(); ++k) {
        const uint64_t e = dpos + k;
        rest[k] =
            static_cast<uint8_t>((packed[static_cast<size_t>(e / 8 - first)] >> (e % 8)) & 1U);
    }
    return {};
}

Status NpyEncoder::read_widened(uint64_t dpos, std::span<uint8_t> out) const {
    const uint64_t width = written_ == ElementType::kFloat32 ? 4 : 1;
    const uint32_t bits = bit_width(stored_);
    // Whole groups of 8 source elements start and end on byte boundaries for any width.
    const uint64_t first = dpos / width / 8 * 8;
    const uint64_t last = std::min(count_, ((dpos + out.size() + width - 1) / width + 7) / 8 * 8);
    const uint64_t byte0 = first * bits / 8;
    const uint64_t byte1 =
        std::min(source_->tensor(index_).descriptor.buffers[0].byte_size, (last * bits + 7) / 8);
    std::vector<uint8_t> packed(static_cast<size_t>(byte1 - byte0));
    HURRAY_RETURN_IF_ERROR(source_->read(index_, 0, byte0, packed));
    std::vector<uint8_t> wide(static_cast<size_t>((last - first) * width));
    for (uint64_t e = first; e < last; ++e) {
        HURRAY_ASSIGN_OR_RETURN(const double v, element_as_double(stored_, packed, e - first));
        uint8_t* at = wide.data() + (e - first) * width;
        if (width == 4) {
            const auto f = static_cast<float>(v);  // exact: every value of these types is a float32
            std::memcpy(at, &f, 4);
        } else {
            *at = written_ == ElementType::kUInt8 ? static_cast<uint8_t>(v)
                                                  : static_cast<uint8_t>(static_cast<int8_t>(v));
        }
    }
    std::memcpy(out.data(), wide.data() + (dpos - first * width), out.size());
    return {};
}

std::optional<std::span<const uint8_t>> NpyEncoder::data_view() const {
    if (unpack_bool_ || written_ != stored_) {
        return std::nullopt;
    }
    return source_->view(index_, 0);
}

}  // namespace hurray::convert::detail
