// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file
/// NumPy .npy (one array) and .npz (a zip of .npy members) files in and out of
/// `hurray::convert` (docs/convert.md § NumPy).
///
/// | NumPy dtype | Hurray element type |
/// | --- | --- |
/// | `|b1` (bool, one byte per element) | kBool (bit-packed, 8 per byte: packed when read, unpacked
/// when written) | | `|i1` `<i2` `<i4` `<i8` | kInt8, kInt16, kInt32, kInt64 | | `|u1` `<u2` `<u4`
/// `<u8` | kUInt8, kUInt16, kUInt32, kUInt64 | | `<f2` `<f4` `<f8` | kFloat16, kFloat32, kFloat64 |
/// | `<c8` `<c16` | kComplex64, kComplex128 |
///
/// Big-endian arrays (`>f4`, ...) are presented little-endian (bytes swapped as they are
/// read; such arrays have no zero-copy view). Fortran-order arrays become column-major
/// tensors over the same bytes (no copy). Object, string, structured, datetime and
/// long-double arrays are refused naming the array and its dtype.

#include <filesystem>
#include <memory>

#include "hurray/convert/convert.hpp"
#include "hurray/convert/export.hpp"
#include "hurray/convert/tensor_source.hpp"
#include "hurray/core/result.hpp"

namespace hurray::convert {

/// Opens a .npy file as a TensorSource of one tensor, named after the file's stem
/// (`weights.npy` -> `weights`), read with pread piece by piece (memory bounded by the
/// caller's chunks). The header (versions 1.0, 2.0, 3.0) is checked at open: a malformed
/// one is an error naming the field and its byte offset; data shorter than the shape
/// declares is kTruncated.
/// @code
/// auto src = hurray::convert::open_npy("weights.npy");
/// if (!src) return src.error();
/// const auto& t = (*src)->tensor(0);   // t.descriptor.shape, t.descriptor.element_type
/// @endcode
HURRAY_CONVERT_EXPORT Result<std::unique_ptr<TensorSource>> open_npy(
    const std::filesystem::path& path, const SourceOptions& options = {});

/// `open_npy` for the file behind `source` (an HTTP file: see
/// `hurray::http::HttpRangeSource`), the tensor named after the stem of
/// `source->name()`: two range reads at open, then one per `read()`.
HURRAY_CONVERT_EXPORT Result<std::unique_ptr<TensorSource>> open_npy(
    std::shared_ptr<RangeSource> source, const SourceOptions& options = {});

/// Opens a .npz file (numpy.savez: stored members; numpy.savez_compressed: deflated;
/// zip64 included) as a TensorSource: member `x.npy` is tensor `x`, in the archive's
/// order. Stored members are read piece by piece; a deflated member is inflated in
/// sequence (a read behind the last one restarts it). Every member must be a .npy.
/// @code
/// auto src = hurray::convert::open_npz("arrays.npz");
/// if (!src) return src.error();
/// auto w = (*src)->find("w");
/// @endcode
HURRAY_CONVERT_EXPORT Result<std::unique_ptr<TensorSource>> open_npz(
    const std::filesystem::path& path, const SourceOptions& options = {});

/// Opens the .npz behind `source` (an `HttpRangeSource`, any RangeSource) with the same
/// checks: the zip structure read with range reads (the end of central directory, the
/// central directory, each local header), the members through libzip reading the source
/// 1 MiB ahead at a time.
/// @code
/// auto url = hurray::http::HttpRangeSource::open("https://example.com/arrays.npz");
/// if (!url) return url.error();
/// auto src = hurray::convert::open_npz(*url);
/// @endcode
HURRAY_CONVERT_EXPORT Result<std::unique_ptr<TensorSource>> open_npz(
    std::shared_ptr<RangeSource> source, const SourceOptions& options = {});

/// Writes the one tensor of `source` as a .npy file (version 1.0, 2.0 for very long
/// headers), atomically. Fails naming the count when the source has another number of
/// tensors, and naming the tensor when it is not dense row-major or column-major data of a
/// type NumPy has (quantized, sparse and composite tensors need options.dequantize).
/// Column-major tensors are written with `fortran_order: True`.
/// @code
/// auto src = hurray::convert::open_source("w.hrry");
/// if (!src) return src.error();
/// if (auto s = hurray::convert::write_npy(**src, "w.npy"); !s) return s;
/// @endcode
HURRAY_CONVERT_EXPORT Status write_npy(const TensorSource& source,
                                       const std::filesystem::path& path,
                                       const ConvertOptions& options = {});

/// Writes every tensor of `source` as member `<name>.npy` of a .npz file (stored, as
/// numpy.savez does; zip64 where sizes need it), atomically, streaming each tensor's data
/// in chunks. The KV metadata is not written (.npz has none). Same refusals as write_npy.
/// @code
/// auto src = hurray::convert::open_source("model.hrry");
/// if (!src) return src.error();
/// if (auto s = hurray::convert::write_npz(**src, "model.npz"); !s) return s;
/// @endcode
HURRAY_CONVERT_EXPORT Status write_npz(const TensorSource& source,
                                       const std::filesystem::path& path,
                                       const ConvertOptions& options = {});

}  // namespace hurray::convert
