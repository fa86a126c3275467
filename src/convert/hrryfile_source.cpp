// SPDX-License-Identifier: Apache-2.0
// An HRRYFILE container (hurray::FileReader, through hrryfile_access.hpp) presented as a
// TensorSource.
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "convert/guard.hpp"
#include "convert/hrryfile_access.hpp"
#include "hurray/convert/hrryfile.hpp"

namespace hurray::convert {
namespace {

class HrryFileSource final : public TensorSource {
public:
    explicit HrryFileSource(std::unique_ptr<hrryfile_access::OpenedFile> file)
        : file_(std::move(file)) {
        for (const hrryfile_access::Tensor& t : file_->tensors()) {
            tensors_.push_back(SourceTensor{t.name, *t.descriptor});
        }
    }

    [[nodiscard]] Format format() const noexcept override { return Format::kHrryFile; }
    [[nodiscard]] size_t tensor_count() const noexcept override { return tensors_.size(); }
    [[nodiscard]] const SourceTensor& tensor(size_t i) const noexcept override {
        return tensors_[i];
    }
    [[nodiscard]] const KvMetadata& kv() const noexcept override { return file_->kv(); }

    [[nodiscard]] Status read(size_t i, size_t buffer, uint64_t offset,
                              std::span<uint8_t> out) const override {
        auto bytes = buffer_bytes(i, buffer);
        if (!bytes) {
            return bytes.error();
        }
        if (offset > bytes->size() || out.size() > bytes->size() - offset) {
            return Error(ErrorCode::kInvalidArgument,
                         "tensor '" + tensors_[i].name + "' buffer " + std::to_string(buffer) +
                             ": bytes [" + std::to_string(offset) + ", +" +
                             std::to_string(out.size()) + ") are past its " +
                             std::to_string(bytes->size()) + " bytes");
        }
        if (!out.empty()) {
            std::memcpy(out.data(), bytes->data() + offset, out.size());
        }
        // A mapped file truncated meanwhile reads as zeros: report it instead.
        if (auto s = file_->check_unchanged(); !s) {
            return s.error().with_context({.prefix = "tensor '" + tensors_[i].name + "'", .tensor = tensors_[i].name, .offset = file_->tensors()[i].data_offset + offset});
        }
        return {};
    }

    [[nodiscard]] std::optional<std::span<const uint8_t>> view(size_t i,
                                                               size_t buffer) const override {
        auto bytes = buffer_bytes(i, buffer);
        if (!bytes) {
            return std::nullopt;
        }
        return *bytes;
    }

    [[nodiscard]] std::optional<size_t> find(std::string_view name) const override {
        const auto index = file_->find(name);
        if (!index) {
            return std::nullopt;
        }
        const auto& all = file_->tensors();
        for (size_t i = 0; i < all.size(); ++i) {  // index position -> write position
            if (all[i].index == *index) {
                return i;
            }
        }
        return std::nullopt;
    }

private:
    [[nodiscard]] Result<std::span<const uint8_t>> buffer_bytes(size_t i, size_t buffer) const {
        if (i >= tensors_.size()) {
            return Error(ErrorCode::kInvalidArgument,
                         "tensor " + std::to_string(i) + ": the file has " +
                             std::to_string(tensors_.size()) + " tensors");
        }
        const auto& buffers = file_->tensors()[i].buffers;
        if (buffer >= buffers.size()) {
            return Error(ErrorCode::kInvalidArgument, "tensor '" + tensors_[i].name + "': buffer " +
                                                          std::to_string(buffer) + " of " +
                                                          std::to_string(buffers.size()));
        }
        return buffers[buffer];
    }

    std::unique_ptr<hrryfile_access::OpenedFile> file_;
    std::vector<SourceTensor> tensors_;  // in write order
};

}  // namespace

Result<std::unique_ptr<TensorSource>> open_hrryfile(const std::filesystem::path& path,
                                                    const SourceOptions& options) {
    return detail::guarded(path.string(), [&]() -> Result<std::unique_ptr<TensorSource>> {
        auto file = hrryfile_access::OpenedFile::open(path, options.validate);
        if (!file) {
            return file.error().with_context({.prefix = path.string(), .file = path.string()});
        }
        return std::unique_ptr<TensorSource>(
            std::make_unique<HrryFileSource>(std::move(file).value()));
    });
}

Result<std::unique_ptr<TensorSource>> open_hrryfile(std::shared_ptr<RangeSource> source,
                                                    const SourceOptions& options) {
    if (!source) {
        return Error(ErrorCode::kInvalidArgument, "open_hrryfile: no source");
    }
    const std::string name = source->name();
    return detail::guarded(name, [&]() -> Result<std::unique_ptr<TensorSource>> {
        auto file = hrryfile_access::OpenedFile::open(std::move(source), options.validate);
        if (!file) {
            return file.error().with_context({.file = name});
        }
        return std::unique_ptr<TensorSource>(std::make_unique<HrryFileSource>(std::move(file).value()));
    });
}

}  // namespace hurray::convert
