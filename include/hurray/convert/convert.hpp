// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file
/// Converting between formats: any TensorSource to any format with a writer, chunk by
/// chunk (memory bounded by the chunk size), atomically (a temporary file renamed when
/// complete: an error never leaves a partial output), with an optional re-read check.

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <type_traits>
#include <memory>
#include <optional>
#include <string>

#include "hurray/convert/export.hpp"
#include "hurray/convert/format.hpp"
#include "hurray/convert/tensor_source.hpp"
#include "hurray/core/element_type.hpp"
#include "hurray/core/result.hpp"

namespace hurray::convert {

/// Called as a conversion proceeds with the bytes of tensor data written so far and in
/// all, after each chunk. A callable that returns `bool` cancels the conversion by
/// returning false: it then fails with `kCancelled` and leaves no output (an existing
/// file keeps its content). A callable that returns nothing only reports.
///
/// @code
/// std::atomic<bool> stop{false};                       // set from another thread
/// options.progress = [&](uint64_t done, uint64_t total) { return !stop.load(); };
/// @endcode
class ProgressCallback {
public:
    /// No callback.
    ProgressCallback() = default;
    /// No callback.
    ProgressCallback(std::nullptr_t) {}  // NOLINT(google-explicit-constructor,hicpp-explicit-conversions): as std::function
    /// `f(done_bytes, total_bytes)`; returning false (when it returns bool) cancels.
    template <typename F>
        requires std::invocable<F&, uint64_t, uint64_t> && (!std::same_as<std::decay_t<F>, ProgressCallback>)
    ProgressCallback(F f) {  // NOLINT(google-explicit-constructor,hicpp-explicit-conversions): as std::function
        if constexpr (std::is_void_v<std::invoke_result_t<F&, uint64_t, uint64_t>>) {
            fn_ = [f = std::move(f)](uint64_t done, uint64_t total) mutable {
                f(done, total);
                return true;
            };
        } else {
            fn_ = [f = std::move(f)](uint64_t done, uint64_t total) mutable {
                return static_cast<bool>(f(done, total));
            };
        }
    }
    /// Whether there is a callback.
    explicit operator bool() const noexcept { return static_cast<bool>(fn_); }
    /// Reports; false when the callback cancels. Precondition: there is a callback.
    [[nodiscard]] bool operator()(uint64_t done_bytes, uint64_t total_bytes) const {
        return fn_(done_bytes, total_bytes);
    }

private:
    std::function<bool(uint64_t, uint64_t)> fn_;
};

/// Calls `progress` (when set) with `done_bytes` of `total_bytes`: the error kCancelled,
/// naming how far the conversion got, when it cancels.
HURRAY_CONVERT_EXPORT Status report_progress(const ProgressCallback& progress, uint64_t done_bytes,
                                             uint64_t total_bytes);

/// How a conversion is made.
struct HURRAY_CONVERT_EXPORT ConvertOptions {
    /// The output format; kUnknown: from the output's extension (format_from_extension()),
    /// an error when it has none.
    Format to = Format::kUnknown;
    /// Turn quantized, sparse and other non-dense tensors into dense ones of
    /// `dequantize_type` (needed by formats that hold dense tensors only; without it
    /// such a tensor is an error naming it).
    bool dequantize = false;
    /// The element type of dequantized tensors: kFloat32, kFloat16 or kBFloat16.
    ElementType dequantize_type = ElementType::kFloat32;
    /// After writing, re-open the output and compare every tensor's values with the
    /// source (dequantized where the source was); the first mismatch is the error.
    bool verify = false;
    /// Bytes of data copied at a time (the memory a conversion holds, beyond metadata).
    uint64_t chunk_bytes = uint64_t{8} << 20;
    /// Durable output (fsync before the rename); off for scratch files.
    bool durable = true;
    /// Progress reports (none when empty).
    ProgressCallback progress;
};

/// What a conversion did.
struct HURRAY_CONVERT_EXPORT ConvertReport {
    Format from = Format::kUnknown;  ///< The input's format.
    Format to = Format::kUnknown;    ///< The output's format.
    uint64_t tensors = 0;            ///< Tensors written.
    uint64_t data_bytes = 0;         ///< Bytes of tensor data written.
    bool verified = false;           ///< True when `verify` ran and found no difference.
};

/// Writes every tensor and the metadata of `source` to `path` in `options.to`'s format.
/// Fails naming the tensor (and the byte offset in the source) for what the output
/// format cannot hold, for unreadable input, or for a verification mismatch; the output
/// is then not created (nor replaced).
/// @code
/// auto src = hurray::convert::open_source("model.safetensors");
/// if (!src) return src.error();
/// auto report = hurray::convert::write(**src, "model.hrry", {});
/// @endcode
HURRAY_CONVERT_EXPORT Result<ConvertReport> write(const TensorSource& source,
                                                  const std::filesystem::path& path,
                                                  const ConvertOptions& options = {});

/// open_source(in) then write(): `hurray convert IN OUT`.
/// @code
/// hurray::convert::ConvertOptions opt;
/// opt.verify = true;
/// auto report = hurray::convert::convert_file("model.gguf", "model.hrry", opt);
/// @endcode
HURRAY_CONVERT_EXPORT Result<ConvertReport> convert_file(const std::filesystem::path& in,
                                                         const std::filesystem::path& out,
                                                         const ConvertOptions& options = {});

/// `base` with every tensor that is not plain dense data presented as a dense row-major
/// tensor (what ConvertOptions::dequantize does; write() applies it, a per-format writer
/// called directly expects it applied):
/// - quantized tensors: dequantized (hurray::to_float32), stored as `type` (kFloat32,
///   kFloat16 or kBFloat16, rounded to nearest even);
/// - composite heads: assembled from their members (materialize_composite) in the head's
///   element type (a quantized member is dequantized by the core); the members that
///   follow the head are no longer listed;
/// - other layouts (sparse, strided, tiled, curves, paged, column-major) and dense data
///   with a byte_offset or padding: densified in their own element type (lossless);
/// - plain dense tensors: passed through unchanged (zero-copy views included).
///
/// A transformed tensor is materialized whole in memory when it is read (one at a time:
/// the last one is cached while it is read chunk by chunk), so a conversion with
/// dequantization holds the largest such tensor (its dense float values and bytes).
/// Descriptor sections that describe stored codes (statistics) are dropped; shard
/// sections are kept. `base` must outlive the result. Fails with kInvalidArgument for
/// another `type`, kInvalidComposite for a composite whose members are missing.
/// @code
/// auto src = hurray::convert::open_source("model.hrry");
/// if (!src) return src.error();
/// auto dense = hurray::convert::dequantized_source(**src, hurray::ElementType::kFloat16);
/// if (!dense) return dense.error();
/// if (auto s = hurray::convert::write_hrryfile(**dense, "dense.hrry"); !s) return s;
/// @endcode
HURRAY_CONVERT_EXPORT Result<std::unique_ptr<TensorSource>> dequantized_source(
    const TensorSource& base, ElementType type = ElementType::kFloat32);

/// Compares the values of every tensor of `a` and `b`: the same names in the same order,
/// the same shapes; tensors with equal descriptors, or plain dense tensors (row-major,
/// unquantized) of the same element type, byte for byte (chunked); any other pair after
/// both are converted to float32 (dequantized, densified, composites assembled: such a
/// tensor is materialized whole), element by element by bit pattern (every NaN equals
/// every NaN). Fails with kInvalidData naming the tensor and the first differing element
/// (its flat row-major index and both values).
/// @code
/// auto a = hurray::convert::open_source("model.safetensors");
/// auto b = hurray::convert::open_source("model.hrry");
/// if (a && b) {
///     if (auto s = hurray::convert::compare_sources(**a, **b); !s)
///     std::puts(s.error().message().c_str());
/// }
/// @endcode
HURRAY_CONVERT_EXPORT Status compare_sources(const TensorSource& a, const TensorSource& b);

}  // namespace hurray::convert
