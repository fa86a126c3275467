// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file
/// Internal: NumPy arrays as Hurray tensors and back, shared by the .npy and .npz
/// readers and writers.
///
/// Reading: an NpySource lists arrays whose stored bytes come from a RawReader (pread of
/// a .npy file, a zip member) and presents them in Hurray's terms: bool bit-packed,
/// big-endian data swapped, Fortran order as a column-major layout over the same bytes.
/// Writing: an NpyEncoder produces the bytes of a .npy for one tensor of a source, at any
/// position (header, then data; bool unpacked to one byte per element).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "convert/npy_format.hpp"
#include "hurray/convert/tensor_source.hpp"
#include "hurray/core/result.hpp"

namespace hurray::convert::detail {

/// Reads `out.size()` stored bytes of an array's data at `offset` (from the data start).
using RawReader = std::function<Status(uint64_t offset, std::span<uint8_t> out)>;
/// The stored data bytes without a copy, when they are in memory; may be empty.
using RawView = std::function<std::optional<std::span<const uint8_t>>()>;

/// One array of an NpySource.
struct NpyArray {
    SourceTensor tensor;  ///< Name and Hurray descriptor.
    NpyHeader header;     ///< As parsed.
    std::string what;     ///< How errors name it ("x.npy", "a.npz member 'x.npy'").
    RawReader raw;        ///< Its stored bytes.
    RawView raw_view;     ///< Optional zero-copy access.
};

/// The Hurray tensor of a parsed header: a dense tensor of the dtype's element type,
/// column-major when fortran_order (rank >= 2).
Result<SourceTensor> npy_tensor(std::string name, const NpyHeader& header);

/// A TensorSource over NumPy arrays.
class NpySource final : public TensorSource {
public:
    /// `keep` keeps whatever the readers use alive (a file, an archive).
    NpySource(Format format, std::vector<NpyArray> arrays, std::shared_ptr<void> keep);
    [[nodiscard]] Format format() const noexcept override { return format_; }
    [[nodiscard]] size_t tensor_count() const noexcept override { return arrays_.size(); }
    [[nodiscard]] const SourceTensor& tensor(size_t i) const noexcept override {
        return arrays_[i].tensor;
    }
    [[nodiscard]] const KvMetadata& kv() const noexcept override { return kv_; }
    [[nodiscard]] Status read(size_t i, size_t buffer, uint64_t offset,
                              std::span<uint8_t> out) const override;
    [[nodiscard]] std::optional<std::span<const uint8_t>> view(size_t i,
                                                               size_t buffer) const override;

private:
    Format format_;
    std::vector<NpyArray> arrays_;
    std::shared_ptr<void> keep_;
    KvMetadata kv_;
};

/// The .npy bytes of tensor `i` of a source: header, then data.
class NpyEncoder {
public:
    /// Checks that the tensor is dense row- or column-major data (errors name the tensor
    /// and say what to do) and builds its header. Types NumPy lacks are widened exactly:
    /// bfloat16 and the 8/6/4-bit floats to float32, int4/int2 to int8, uint4/uint2 to uint8.
    static Result<NpyEncoder> make(const TensorSource& source, size_t i);
    /// Total bytes of the .npy.
    [[nodiscard]] uint64_t size() const noexcept { return header_.size() + data_bytes_; }
    /// Bytes of data (after the header).
    [[nodiscard]] uint64_t data_bytes() const noexcept { return data_bytes_; }
    /// The header bytes.
    [[nodiscard]] const std::vector<uint8_t>& header() const noexcept { return header_; }
    /// Fills `out` with the bytes at `pos` of the .npy (pos + out.size() <= size()).
    [[nodiscard]] Status read(uint64_t pos, std::span<uint8_t> out) const;
    /// Zero-copy data bytes, when the source has a view and no conversion is needed.
    [[nodiscard]] std::optional<std::span<const uint8_t>> data_view() const;

private:
    NpyEncoder(const TensorSource& source, size_t i) : source_(&source), index_(i) {}
    /// Fills `out` with data bytes from `dpos`, widening each element (see make()).
    [[nodiscard]] Status read_widened(uint64_t dpos, std::span<uint8_t> out) const;

    const TensorSource* source_;
    size_t index_;
    bool unpack_bool_ = false;
    ElementType stored_ = ElementType::kFloat32;  ///< The source's element type.
    ElementType written_ = ElementType::kFloat32; ///< The NumPy dtype's (differs when widened).
    uint64_t count_ = 0;
    uint64_t data_bytes_ = 0;
    std::vector<uint8_t> header_;
};

}  // namespace hurray::convert::detail
