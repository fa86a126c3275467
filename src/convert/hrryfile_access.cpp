// SPDX-License-Identifier: Apache-2.0
// An opened HRRYFILE behind hrryfile_access.hpp (see there why).
#include "convert/hrryfile_access.hpp"

#include <array>
#include <cstdint>
#include <utility>

#include "hurray/convert/gguf.hpp"
#include "hurray/io/file_reader.hpp"

namespace hurray::hrryfile_access {
namespace {

class FileReaderFile final : public OpenedFile {
public:
    explicit FileReaderFile(FileReader file) : file_(std::move(file)) {}

    Status load(bool validate) {
        if (validate) {
            HURRAY_RETURN_IF_ERROR(file_.check_all());
        }
        const std::span<const size_t> order = file_.write_order();
        keep_.reserve(order.size());
        tensors_.reserve(order.size());
        for (const size_t index : order) {
            auto t = file_.tensor(index);
            if (!t) {
                return t.error();
            }
            keep_.push_back(std::move(t).value());
            const FileTensor& ft = keep_.back();
            Tensor out;
            out.name = std::string(ft.name());
            out.descriptor = &ft.descriptor();
            out.data_offset = ft.entry().data_offset;
            out.index = index;
            for (const SharedBuffer& b : ft.buffers()) {
                out.buffers.push_back(b.span());
            }
            tensors_.push_back(std::move(out));
        }
        return {};
    }

    [[nodiscard]] const std::vector<Tensor>& tensors() const noexcept override { return tensors_; }
    [[nodiscard]] const KvMetadata& kv() const noexcept override { return file_.kv(); }
    [[nodiscard]] Status check_unchanged() const override { return file_.check_unchanged(); }
    [[nodiscard]] std::optional<size_t> find(std::string_view name) const override {
        return file_.find(name);
    }

private:
    FileReader file_;
    std::vector<FileTensor> keep_;  // owns what the spans of tensors_ point into
    std::vector<Tensor> tensors_;
};

/// `file` decoded (and checked when `validate`) as an OpenedFile.
Result<std::unique_ptr<OpenedFile>> load(FileReader file, bool validate) {
    auto opened = std::make_unique<FileReaderFile>(std::move(file));
    HURRAY_RETURN_IF_ERROR(opened->load(validate));
    return std::unique_ptr<OpenedFile>(std::move(opened));
}

}  // namespace

OpenedFile::~OpenedFile() = default;

Result<std::unique_ptr<OpenedFile>> OpenedFile::open(const std::filesystem::path& path,
                                                     bool validate) {
    // The default options understand libhurray's private GGML blocks scheme, which
    // HRRYFILE files converted from GGUF hold.
    auto file = FileReader::open(path);
    if (!file) {
        return file.error();
    }
    return load(std::move(file).value(), validate);
}

Result<std::unique_ptr<OpenedFile>> OpenedFile::open(std::shared_ptr<RangeSource> source, bool validate) {
    auto file = FileReader::open(std::move(source));
    if (!file) {
        return file.error();
    }
    return load(std::move(file).value(), validate);
}

}  // namespace hurray::hrryfile_access
