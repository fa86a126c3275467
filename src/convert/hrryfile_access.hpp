// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file
/// Internal: an opened HRRYFILE (hurray::FileReader) behind the narrow interface the
/// converter's HRRYFILE source and writer need (tensors in write order, descriptors,
/// buffer spans, KV), so that only hrryfile_access.cpp depends on FileReader's API.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/io/range_source.hpp"
#include "hurray/core/tensor_descriptor.hpp"
#include "hurray/io/kv_metadata.hpp"

namespace hurray::hrryfile_access {

/// One tensor of the file: name, descriptor, the bytes of each buffer and the file offset
/// of its data region.
struct Tensor {
    std::string name;
    const TensorDescriptor* descriptor = nullptr;
    std::vector<std::span<const uint8_t>> buffers;
    uint64_t data_offset = 0;
    size_t index = 0;  ///< Position in the file's index.
};

/// An opened, validated HRRYFILE: its tensors in write order. The spans stay valid while
/// this object lives.
class OpenedFile {
public:
    /// Opens `path` (FileReader::open), decodes every descriptor, runs check_all() when
    /// `validate`.
    static Result<std::unique_ptr<OpenedFile>> open(const std::filesystem::path& path,
                                                    bool validate);
    /// The same for the file behind `source` (FileReader::open(source)).
    static Result<std::unique_ptr<OpenedFile>> open(std::shared_ptr<RangeSource> source, bool validate);
    virtual ~OpenedFile();
    OpenedFile() = default;
    OpenedFile(const OpenedFile&) = delete;
    OpenedFile& operator=(const OpenedFile&) = delete;
    OpenedFile(OpenedFile&&) = delete;
    OpenedFile& operator=(OpenedFile&&) = delete;
    /// The tensors, in write order.
    [[nodiscard]] virtual const std::vector<Tensor>& tensors() const noexcept = 0;
    /// The KV metadata.
    [[nodiscard]] virtual const KvMetadata& kv() const noexcept = 0;
    /// FileReader::check_unchanged().
    [[nodiscard]] virtual Status check_unchanged() const = 0;
    /// The index position of the tensor named `name` (FileReader::find).
    [[nodiscard]] virtual std::optional<size_t> find(std::string_view name) const = 0;
};

}  // namespace hurray::hrryfile_access
