// SPDX-License-Identifier: Apache-2.0
/// @file
/// `hurray::save`: write named tensors and KV metadata as an HRRYFILE in one
/// call, atomically to a path or to any `ByteSink`.
#pragma once

#include "hurray/io/export.hpp"
#include <concepts>
#include <filesystem>
#include <initializer_list>
#include <ranges>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/core/tensor_ref.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/kv_metadata.hpp"

namespace hurray {

/// A tensor to save and its name.
struct HURRAY_IO_EXPORT NamedTensor {
    std::string_view name;  ///< Its name in the file (UTF-8, 1 .. 65,535 bytes, unique).
    TensorRef tensor;       ///< Its descriptor and data.
};

/// The tensors given to `save`: a braced list of `{name, TensorRef}` pairs,
/// a span or vector of `NamedTensor`, or any range of pairs whose first
/// member converts to `std::string_view` and second is a `TensorRef`
/// (`std::map<std::string, TensorRef>`, a vector of pairs, ...). Tensors are
/// written in this order. It refers to the caller's names and tensors, which
/// must outlive the call (they do in `save(path, {...})`).
class HURRAY_IO_EXPORT TensorList {
public:
    /// No tensor.
    TensorList() = default;
    /// A braced list: `{{"w", hurray::TensorRef(w, {2, 3})}, {"b", hurray::TensorRef(b)}}`.
    TensorList(std::initializer_list<NamedTensor> tensors) : items_(tensors) {}  // NOLINT(google-explicit-constructor)
    /// A span of named tensors.
    TensorList(std::span<const NamedTensor> tensors) : items_(tensors.begin(), tensors.end()) {}  // NOLINT
    /// A vector of named tensors.
    TensorList(const std::vector<NamedTensor>& tensors) : items_(tensors) {}  // NOLINT
    /// A map or range of (name, TensorRef) pairs.
    template <std::ranges::input_range R>
        requires requires(const std::ranges::range_value_t<R>& p) {
            { std::string_view(p.first) };
            { p.second } -> std::convertible_to<const TensorRef&>;
        }
    TensorList(const R& pairs) {  // NOLINT(google-explicit-constructor)
        for (const auto& p : pairs) {
            items_.push_back(NamedTensor{std::string_view(p.first), p.second});
        }
    }

    /// The tensors, in order.
    [[nodiscard]] std::span<const NamedTensor> items() const noexcept { return items_; }

private:
    std::vector<NamedTensor> items_;
};

/// The KV metadata given to `save`: a `KvMetadata`, or a braced list of
/// `{key, KvValue}` pairs (keys checked and written in order).
///
/// @code
/// hurray::KvList kv = {{"general.architecture", hurray::KvValue::string("llama")},
///                      {"llama.context_length", hurray::KvValue::uint64(4096)}};
/// @endcode
class HURRAY_IO_EXPORT KvList {
public:
    /// No metadata.
    KvList() = default;
    /// Every entry of `kv` (referred to; it must outlive the call).
    KvList(const KvMetadata& kv) : metadata_(&kv) {}  // NOLINT(google-explicit-constructor)
    /// A braced list of (key, value) pairs.
    KvList(std::initializer_list<std::pair<std::string_view, KvValue>> pairs)  // NOLINT
        : pairs_(pairs) {}

    /// Adds every entry to `out` (`kDuplicateName`, `kInvalidName` as `KvMetadata::add`).
    [[nodiscard]] Status add_to(KvMetadata& out) const;

private:
    const KvMetadata* metadata_ = nullptr;
    std::vector<std::pair<std::string_view, KvValue>> pairs_;
};

/// How `save` writes.
struct HURRAY_IO_EXPORT SaveOptions {
    /// Layout of the file (alignment, sorted index, ...).
    FileWriterOptions writer{};
    /// Saves to a path: `kDurable` (default) fsyncs the file and its
    /// directory; `kAtomicOnly` replaces atomically without fsync (see
    /// `Durability`). Ignored by `save` to a sink.
    Durability durability = Durability::kDurable;
};

/// Writes `tensors` and `kv` as an HRRYFILE at `path`, atomically: a
/// temporary file in the same directory, fsync, rename, fsync of the
/// directory (no fsync with `options.durability == Durability::kAtomicOnly`). On any error nothing is left behind and an existing file at
/// `path` is untouched. Errors name the tensor (`tensor 'w': ...`) or key.
///
/// @code
/// std::vector<float> w(6, 0.5F);
/// std::vector<int8_t> q = {1, -2, 3, -4};
/// hurray::Status st = hurray::save("model.hrry",
///     {{"w", hurray::TensorRef(w, {2, 3})}, {"q", hurray::TensorRef(q, {2, 2})}},
///     {{"general.architecture", hurray::KvValue::string("demo")}});
/// if (!st) std::fprintf(stderr, "%s\n", st.error().to_string().c_str());
/// @endcode
[[nodiscard]] HURRAY_IO_EXPORT Status save(const std::filesystem::path& path, const TensorList& tensors, const KvList& kv = {},
                          const SaveOptions& options = {});

/// Writes `tensors` and `kv` as an HRRYFILE to `sink` (not flushed beyond
/// what `FileWriter::finish` does; the caller owns the sink). On error the
/// sink holds an incomplete file.
[[nodiscard]] HURRAY_IO_EXPORT Status save(ByteSink& sink, const TensorList& tensors, const KvList& kv = {},
                          const SaveOptions& options = {});

}  // namespace hurray
