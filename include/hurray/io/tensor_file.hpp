// SPDX-License-Identifier: Apache-2.0
/// @file
/// `hurray::load` and `TensorFile`: an opened HRRYFILE seen as a dictionary
/// of named tensors, with typed zero-copy access and KV metadata.
#pragma once

#include "hurray/io/export.hpp"
#include <cstddef>
#include <filesystem>
#include <iterator>
#include <string_view>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/kv_metadata.hpp"

namespace hurray {

/// An opened, validated HRRYFILE as a dictionary of tensors.
///
/// A thin layer over `FileReader` (reachable with `reader()`): the file is
/// mapped once and checked at open (header, trailer, index, CRC-32C, KV);
/// each descriptor is decoded and checked on first use. Everything handed
/// out — `FileTensor`s, the `TypedBuffer`s of `as<T>()`, views — shares ownership of
/// the file, so none of it dangles when the `TensorFile` goes away first.
/// Copies share the same opened file. Thread-safe for concurrent reads.
///
/// @code
/// auto file = hurray::load("model.hrry");
/// if (!file) { std::fprintf(stderr, "%s\n", file.error().to_string().c_str()); return 1; }
/// auto w = file->tensor("w").as<float>();       // Result<TypedBuffer<float>>, zero-copy
/// auto q = file->tensor("q").to_float32();      // any tensor as float32 values
/// for (const auto& [name, t] : *file) { ... }  // every tensor, in index order
/// auto arch = file->kv().get_string("general.architecture");
/// @endcode
class HURRAY_IO_EXPORT TensorFile {
public:
    /// Opens and validates the file at `path` (see `FileReader::open`).
    static Result<TensorFile> open(const std::filesystem::path& path, const FileReadOptions& options = {});
    /// A dictionary view of an opened file (shares it).
    explicit TensorFile(FileReader reader) noexcept : reader_(std::move(reader)) {}

    /// The tensor named `name`; `kNotFound`, naming it, when there is none.
    /// The result's `as<T>()`, `to_float32()`, `bytes()` and `view()` can be
    /// called directly and pass the error on.
    [[nodiscard]] FileTensorResult operator[](std::string_view name) const { return reader_.tensor(name); }
    /// Same as `operator[]`, for use through a pointer or `Result`:
    /// `file->tensor("w").as<float>()`.
    [[nodiscard]] FileTensorResult tensor(std::string_view name) const { return reader_.tensor(name); }
    /// Tensor `i` in index order (`kInvalidArgument` when `i >= size()`).
    [[nodiscard]] FileTensorResult at(size_t i) const { return reader_.tensor(i); }
    /// Whether a tensor is named `name`.
    [[nodiscard]] bool contains(std::string_view name) const { return reader_.find(name).has_value(); }
    /// Number of tensors.
    [[nodiscard]] size_t size() const noexcept { return reader_.tensor_count(); }
    /// Whether the file holds no tensor.
    [[nodiscard]] bool empty() const noexcept { return reader_.tensor_count() == 0; }
    /// Every name, in index order (views into the file's index).
    [[nodiscard]] std::vector<std::string_view> names() const;
    /// The typed KV metadata (empty when the file has none).
    [[nodiscard]] const KvMetadata& kv() const noexcept { return reader_.kv(); }
    /// The underlying reader (header, trailer, composites, access hints).
    [[nodiscard]] const FileReader& reader() const noexcept { return reader_; }

    /// One tensor met while iterating: its name and the tensor (or the error
    /// that decoding its descriptor gave).
    struct Item {
        std::string_view name;    ///< The tensor's name.
        FileTensorResult tensor;  ///< The tensor, or why it cannot be read.
    };

    /// Iterates over (name, tensor) in index order; dereferencing decodes the
    /// descriptor (once; later visits are cheap).
    class iterator {
    public:
        using iterator_category = std::input_iterator_tag;  ///< Single pass per dereference.
        using value_type = Item;                            ///< What `*it` gives.
        using difference_type = std::ptrdiff_t;             ///< Distance type.

        /// A past-the-end iterator.
        iterator() = default;
        /// The tensor at this position.
        [[nodiscard]] Item operator*() const {
            return Item{file_->reader_.entry(i_).name, file_->reader_.tensor(i_)};
        }
        /// Moves to the next tensor.
        iterator& operator++() noexcept {
            ++i_;
            return *this;
        }
        /// Moves to the next tensor (post-increment).
        iterator operator++(int) noexcept {
            iterator old = *this;
            ++i_;
            return old;
        }
        /// Same position.
        friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.i_ == b.i_; }

    private:
        friend class TensorFile;
        iterator(const TensorFile* file, size_t i) noexcept : file_(file), i_(i) {}
        const TensorFile* file_ = nullptr;
        size_t i_ = 0;
    };

    /// The first tensor.
    [[nodiscard]] iterator begin() const noexcept { return {this, 0}; }
    /// Past the last tensor.
    [[nodiscard]] iterator end() const noexcept { return {this, size()}; }

private:
    FileReader reader_;
};

/// Opens the HRRYFILE at `path` as a `TensorFile` (maps it, checks its
/// structure). The shortest way to read tensors:
///
/// @code
/// auto file = hurray::load("model.hrry");
/// if (!file) return file.error();
/// hurray::TensorFile& f = *file;
/// auto w = f["w"].as<float>().value();   // TypedBuffer<float>; aborts if "w" is not float32
/// @endcode
[[nodiscard]] HURRAY_IO_EXPORT Result<TensorFile> load(const std::filesystem::path& path, const FileReadOptions& options = {});

}  // namespace hurray
