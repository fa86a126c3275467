// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file
/// TensorSource: the named tensors and metadata of any file `hurray::convert` reads
/// (HRRYFILE, SafeTensors, GGUF, .npy, .npz), described in Hurray's terms. Every reader
/// produces one, every writer consumes one, so each format converts to each other one.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "hurray/convert/export.hpp"
#include "hurray/convert/format.hpp"
#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"
#include "hurray/io/kv_metadata.hpp"
#include "hurray/io/range_source.hpp"

namespace hurray::convert {

/// One tensor of a source: its name and the descriptor it has (or would have) in an
/// HRRYFILE. The sizes of its buffers are `descriptor.buffers[b].byte_size`.
struct HURRAY_CONVERT_EXPORT SourceTensor {
    std::string name;             ///< Its name in the source (UTF-8).
    TensorDescriptor descriptor;  ///< Type, shape, layout, quantization and buffer sizes.
};

/// Options for opening a source.
struct HURRAY_CONVERT_EXPORT SourceOptions {
    /// Check every tensor's data where the format allows (e.g. that data spans lie in the
    /// file and do not overlap) at open; the checks of the bytes a reader hands out are
    /// made either way.
    bool validate = true;
};

/// The tensors and metadata of an opened file, read in Hurray's terms. Immutable after
/// open; `read` and `view` may be called from several threads at once.
///
/// Data is read piece by piece (`read`), so that a conversion holds one chunk at a time
/// whatever the tensor's size; sources whose bytes sit unchanged in a mapping also give a
/// zero-copy `view`. A source may present bytes that differ from the ones stored (a
/// transformation the format needs, documented by its reader); `read` and `view` give the
/// same bytes.
/// @code
/// auto src = hurray::convert::open_source("model.safetensors");
/// if (!src) return src.error();
/// for (size_t i = 0; i < (*src)->tensor_count(); ++i) {
///     const auto& t = (*src)->tensor(i);
///     std::vector<uint8_t> bytes(t.descriptor.buffers[0].byte_size);
///     if (auto s = (*src)->read(i, 0, 0, bytes); !s) return s.error();
/// }
/// @endcode
class HURRAY_CONVERT_EXPORT TensorSource {
public:
    virtual ~TensorSource();
    TensorSource() = default;
    TensorSource(const TensorSource&) = delete;
    TensorSource& operator=(const TensorSource&) = delete;
    TensorSource(TensorSource&&) = delete;
    TensorSource& operator=(TensorSource&&) = delete;

    /// The format it was read from.
    [[nodiscard]] virtual Format format() const noexcept = 0;
    /// How many tensors it has.
    [[nodiscard]] virtual size_t tensor_count() const noexcept = 0;
    /// Tensor `i` (< tensor_count()), in the source's order.
    [[nodiscard]] virtual const SourceTensor& tensor(size_t i) const noexcept = 0;
    /// Its key-value metadata (mapped to Hurray's typed KV by the reader; empty when the
    /// format has none).
    [[nodiscard]] virtual const KvMetadata& kv() const noexcept = 0;
    /// Copies bytes [offset, offset + out.size()) of buffer `buffer` of tensor `i` into
    /// `out`. Fails with kInvalidArgument for an index or range outside the tensor, and
    /// with the error of the source (kIoError, kTruncated, ...) naming the tensor and the
    /// byte offset in the source file.
    [[nodiscard]] virtual Status read(size_t i, size_t buffer, uint64_t offset,
                                      std::span<uint8_t> out) const = 0;
    /// The bytes of buffer `buffer` of tensor `i` without a copy, when they are in memory
    /// (a mapping) as they are presented; nullopt otherwise (then use read()).
    [[nodiscard]] virtual std::optional<std::span<const uint8_t>> view(size_t i,
                                                                       size_t buffer) const;
    /// The index of the tensor named `name`, nullopt when there is none (linear by
    /// default; readers with an index override it).
    [[nodiscard]] virtual std::optional<size_t> find(std::string_view name) const;
};

/// Opens `path` as a TensorSource, its format detected from its bytes (detect_format()).
/// Fails with kUnsupported for a format that has no reader in this build (and for the
/// streaming format: convert a stream with hurray::stream_to_file), kInvalidFile (and
/// friends) naming the field and byte offset for a malformed file, kIoError when it
/// cannot be read.
/// @code
/// auto src = hurray::convert::open_source("weights.npz");
/// @endcode
HURRAY_CONVERT_EXPORT Result<std::unique_ptr<TensorSource>> open_source(
    const std::filesystem::path& path, const SourceOptions& options = {});

/// Bytes that `open_source(std::shared_ptr<RangeSource>)` reads from the start of the
/// file (64 KiB): to tell its format, and kept for the reader.
inline constexpr uint64_t kRangeSourceHeadBytes = uint64_t{64} << 10U;

/// `open_source` for the file behind `source` (an HTTP file, a local file, memory: see
/// `RangeSource`), its format detected from its first bytes (one range read of up to
/// `kRangeSourceHeadBytes`, kept: a SafeTensors header within them costs no more): an
/// HRRYFILE, SafeTensors or .npy file is read through range reads (`open_hrryfile`,
/// `open_safetensors`, `open_npy` over a RangeSource). A GGUF file (its reader maps the
/// whole file) and a .npz archive (libzip reads a path) are kUnsupported over a
/// RangeSource; open them from a local path.
/// @code
/// auto url = hurray::http::HttpRangeSource::open("https://example.com/model.safetensors");
/// if (!url) return url.error();
/// auto src = hurray::convert::open_source(*url);   // 1 request (+1 for a header past 64 KiB)
/// @endcode
HURRAY_CONVERT_EXPORT Result<std::unique_ptr<TensorSource>> open_source(
    std::shared_ptr<RangeSource> source, const SourceOptions& options = {});

}  // namespace hurray::convert
