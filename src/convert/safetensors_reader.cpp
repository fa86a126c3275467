// SPDX-License-Identifier: Apache-2.0
// The SafeTensors reader: the file mapped read-only (io's FileSource, which also guards
// the mapping against SIGBUS when the file shrinks), the header parsed and validated
// (safetensors_header.cpp), the tensors presented as a TensorSource.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "convert/safetensors_internal.hpp"
#include "hurray/core/byte_io.hpp"
#include "hurray/core/checked_math.hpp"
#include "hurray/convert/safetensors.hpp"

namespace hurray::convert {

namespace detail {

namespace {

/// Bytes before the header: the little-endian u64 header length.
constexpr uint64_t kLengthBytes = 8;

/// A SafeTensors file as a TensorSource.
class SafeTensorsSource final : public TensorSource {
public:
    SafeTensorsSource(ReadOnlyFile file, uint64_t data_start,
                      SafeTensorsHeader header)
        : file_(std::move(file)),
          data_start_(data_start),
          entries_(std::move(header.tensors)),
          kv_(std::move(header.kv)) {}

    /// Builds the SourceTensors and the name index (after construction: may throw
    /// bad_alloc, caught by the caller).
    Status init() {
        tensors_.reserve(entries_.size());
        index_.reserve(entries_.size());
        for (size_t i = 0; i < entries_.size(); ++i) {
            const SafeTensorsEntry& e = entries_[i];
            SourceTensor t;
            t.name = e.name;
            t.descriptor.element_type = e.type;
            t.descriptor.shape = e.shape;
            auto bytes = storage_bytes(e.type, e.element_count);
            if (!bytes) {
                return bytes.error().with_context({.prefix = "tensor '" + e.name + "'", .tensor = e.name, .offset = e.header_offset});
            }
            t.descriptor.buffers = {BufferHandle{.byte_size = *bytes}};
            tensors_.push_back(std::move(t));
            index_.emplace(e.name, i);
        }
        return Status::success();
    }

    [[nodiscard]] Format format() const noexcept override { return Format::kSafeTensors; }
    [[nodiscard]] size_t tensor_count() const noexcept override { return tensors_.size(); }
    [[nodiscard]] const SourceTensor& tensor(size_t i) const noexcept override {
        return tensors_[i];
    }
    [[nodiscard]] const KvMetadata& kv() const noexcept override { return kv_; }

    [[nodiscard]] std::optional<size_t> find(std::string_view name) const override {
        if (auto it = index_.find(std::string(name)); it != index_.end()) {
            return it->second;
        }
        return std::nullopt;
    }

    [[nodiscard]] std::optional<std::span<const uint8_t>> view(size_t i,
                                                               size_t buffer) const override {
        try {
            return view_impl(i, buffer);
        } catch (...) {
            return std::nullopt;  // read() is there for the caller
        }
    }

    [[nodiscard]] Status read(size_t i, size_t buffer, uint64_t offset,
                              std::span<uint8_t> out) const override {
        try {
            return read_impl(i, buffer, offset, out);
        } catch (const std::bad_alloc&) {
            return Error(ErrorCode::kOutOfMemory, "SafeTensors read: out of memory");
        } catch (const std::exception& e) {
            return Error(ErrorCode::kIoError, std::string("SafeTensors read: ") + e.what());
        }
    }

private:
    std::optional<std::span<const uint8_t>> view_impl(size_t i, size_t buffer) const {
        if (i >= entries_.size() || buffer != 0 || !file_.contiguous() ||
            entries_[i].type == ElementType::kBool) {
            return std::nullopt;
        }
        const SafeTensorsEntry& e = entries_[i];
        auto bytes = file_.read(data_start_ + e.begin, e.end - e.begin, "tensor data");
        // Still contiguous after the read: it was a slice of the mapping (a mapping that
        // failed on this first use gives an owned pread copy, which must not be viewed).
        if (!bytes || !file_.contiguous()) {
            return std::nullopt;
        }
        // SAFETY: the span points into the mapping owned by file_ (a member), which lives
        // as long as this source; the caller may not use it past that (TensorSource's
        // contract for view()).
        return bytes->span();
    }

    Status read_impl(size_t i, size_t buffer, uint64_t offset, std::span<uint8_t> out) const {
        if (i >= entries_.size() || buffer != 0) {
            return Error(ErrorCode::kInvalidArgument,
                         "SafeTensors read: tensor " + std::to_string(i) + " buffer " +
                             std::to_string(buffer) + " does not exist");
        }
        const SafeTensorsEntry& e = entries_[i];
        const uint64_t size = tensors_[i].descriptor.buffers[0].byte_size;
        const auto stop = hurray::add_u64(offset, out.size());
        if (!stop || *stop > size) {
            return Error(ErrorCode::kInvalidArgument,
                         "tensor '" + e.name + "': read of [" + std::to_string(offset) + ", +" +
                             std::to_string(out.size()) + ") past its " + std::to_string(size) +
                             " bytes");
        }
        if (out.empty()) {
            return Status::success();
        }
        if (e.type == ElementType::kBool) {
            return read_bool(e, offset, out);
        }
        const uint64_t at = data_start_ + e.begin + offset;
        auto bytes = file_.read(at, out.size(), "tensor data");
        if (!bytes) {
            return bytes.error().with_context({.prefix = "tensor '" + e.name + "'", .tensor = e.name, .offset = at});
        }
        std::memcpy(out.data(), bytes->data(), out.size());
        release(at, out.size());
        return checked(e, at);
    }

    /// Drops this process's mapping of the whole pages of [at, at + n) once copied, so
    /// that a conversion reading a large file chunk by chunk keeps its resident memory
    /// bounded by the chunk (the pages stay in the page cache; a later access maps them
    /// again). A hint only: a failure changes nothing.
    void release(uint64_t at, uint64_t n) const {
        constexpr uint64_t kPage = 4096;
        const uint64_t first = (at + kPage - 1) / kPage * kPage;
        const uint64_t last = (at + n) / kPage * kPage;
        if (last > first) {
            file_.advise(first, last - first, AccessPattern::kDontNeed);
        }
    }

    /// Packs bytes [8 * offset, ...) of a BOOL tensor (one byte per element, 0 or 1) into
    /// Hurray's bits, 8 per byte, LSB first; the padding bits of the last byte are zero.
    Status read_bool(const SafeTensorsEntry& e, uint64_t offset, std::span<uint8_t> out) const {
        // offset + out.size() <= ceil(count / 8), so 8 * offset <= count + 7: no overflow.
        const uint64_t first = offset * 8;
        const uint64_t last = std::min<uint64_t>(e.element_count, (offset + out.size()) * 8);
        const uint64_t at = data_start_ + e.begin + first;
        auto bytes = file_.read(at, last - first, "tensor data");
        if (!bytes) {
            return bytes.error().with_context({.prefix = "tensor '" + e.name + "'", .tensor = e.name, .offset = at});
        }
        std::fill(out.begin(), out.end(), uint8_t{0});
        const std::span<const uint8_t> src = bytes->span();
        for (size_t k = 0; k < src.size(); ++k) {
            const uint8_t v = src[k];
            if (v > 1) {
                return Error(ErrorCode::kInvalidData,
                             "tensor '" + e.name + "': BOOL element " + std::to_string(first + k) +
                                 " is byte " + std::to_string(v) + " (not 0 or 1)",
                             at + k);
            }
            out[k / 8] = static_cast<uint8_t>(out[k / 8] | (v << (k % 8)));
        }
        release(at, src.size());
        return checked(e, at);
    }

    /// Fails when the mapped file shrank or changed size since it was opened (the bytes
    /// just copied may then be the zeros the SIGBUS guard put in).
    Status checked(const SafeTensorsEntry& e, uint64_t at) const {
        if (auto s = file_.check_unchanged(); !s) {
            return s.error().with_context({.prefix = "tensor '" + e.name + "'", .tensor = e.name, .offset = at});
        }
        return Status::success();
    }

    ReadOnlyFile file_;
    uint64_t data_start_;
    std::vector<SafeTensorsEntry> entries_;
    KvMetadata kv_;
    std::vector<SourceTensor> tensors_;
    std::unordered_map<std::string, size_t> index_;
};

}  // namespace

Result<std::unique_ptr<TensorSource>> open_safetensors_file(ReadOnlyFile file) {
    const uint64_t size = file.size();
    if (size < kLengthBytes) {
        return Error(ErrorCode::kTruncated,
                     "SafeTensors header length: the file has " + std::to_string(size) +
                         " bytes, fewer than the 8 of the length",
                     0);
    }
    auto length_bytes = file.read(0, kLengthBytes, "SafeTensors header length");
    if (!length_bytes) {
        return length_bytes.error();
    }
    const uint64_t header_len = hurray::ByteCursor(length_bytes->span()).u64();
    if (header_len > size - kLengthBytes) {
        return Error(ErrorCode::kTruncated,
                     "SafeTensors header length: " + std::to_string(header_len) +
                         " bytes, past the end of the file (" + std::to_string(size) + " bytes)",
                     0);
    }
    if (header_len > kSafeTensorsMaxHeaderBytes) {
        return Error(ErrorCode::kInvalidFile,
                     "SafeTensors header length: " + std::to_string(header_len) +
                         " bytes, over the 100 MiB limit",
                     0);
    }
    auto header_bytes = file.read(kLengthBytes, header_len, "SafeTensors header");
    if (!header_bytes) {
        return header_bytes.error();
    }
    const uint64_t data_start = kLengthBytes + header_len;
    // SAFETY: a char view of the header's bytes, which header_bytes keeps alive for the
    // whole parse; char and uint8_t have the same size and any byte is a valid char.
    const std::string_view text(reinterpret_cast<const char*>(header_bytes->data()),
                                header_bytes->size());
    auto header = parse_safetensors_header(text, size - data_start);
    if (!header) {
        return header.error();
    }
    if (auto s = file.check_unchanged(); !s) {
        return s.error();
    }
    auto source =
        std::make_unique<SafeTensorsSource>(std::move(file), data_start, std::move(*header));
    if (auto s = source->init(); !s) {
        return s.error();
    }
    return std::unique_ptr<TensorSource>(std::move(source));
}

}  // namespace detail

namespace {

/// `open_safetensors_file(open())` with the errors named after `name`; no exception
/// escapes (nlohmann/json parses the header by throwing).
template <typename Open>
Result<std::unique_ptr<TensorSource>> open_named(const std::string& name, Open open) noexcept {
    try {
        Result<ReadOnlyFile> file = open();
        if (!file) {
            return file.error();
        }
        auto source = detail::open_safetensors_file(std::move(*file));
        if (!source) {
            return source.error().with_context({.prefix = name, .file = name});
        }
        return source;
    } catch (const std::bad_alloc&) {
        return Error(ErrorCode::kOutOfMemory, name + ": out of memory opening SafeTensors");
    } catch (const std::exception& e) {
        return Error(ErrorCode::kInvalidFile, name + ": " + e.what());
    }
}

}  // namespace

Result<std::unique_ptr<TensorSource>> open_safetensors(const std::filesystem::path& path,
                                                       const SourceOptions& /*options*/) {
    return open_named(path.string(), [&] { return ReadOnlyFile::open(path); });
}

Result<std::unique_ptr<TensorSource>> open_safetensors(std::shared_ptr<RangeSource> source,
                                                       const SourceOptions& /*options*/) {
    if (!source) {
        return Error(ErrorCode::kInvalidArgument, "open_safetensors: no source");
    }
    return open_named(source->name(), [&] { return Result<ReadOnlyFile>(ReadOnlyFile::range(std::move(source))); });
}

}  // namespace hurray::convert
