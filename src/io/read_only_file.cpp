// SPDX-License-Identifier: Apache-2.0
// ReadOnlyFile: the public face of FileSource for readers of other formats.
#include "hurray/io/read_only_file.hpp"

#include <exception>
#include <memory>
#include <utility>

#include "io/file_source.hpp"

namespace hurray {

ReadOnlyFile::ReadOnlyFile(std::shared_ptr<const detail::FileSource> source) noexcept : source_(std::move(source)) {}

Result<ReadOnlyFile> ReadOnlyFile::open(const std::filesystem::path& path, bool use_mmap) {
    auto source = detail::FileSource::open(path.native(), use_mmap);
    if (!source) {  // the message names the path ("open '<path>': ...")
        return std::move(source).error().with_context({.file = path.native()});
    }
    return ReadOnlyFile(std::make_shared<const detail::FileSource>(std::move(source).value_unchecked()));
}

ReadOnlyFile ReadOnlyFile::memory(std::span<const uint8_t> bytes, std::shared_ptr<const void> owner) {
    return ReadOnlyFile(std::make_shared<const detail::FileSource>(detail::FileSource::memory(bytes, std::move(owner))));
}

ReadOnlyFile ReadOnlyFile::range(std::shared_ptr<RangeSource> source) {
    return ReadOnlyFile(std::make_shared<const detail::FileSource>(detail::FileSource::range(std::move(source))));
}

uint64_t ReadOnlyFile::size() const noexcept { return source_->size(); }

bool ReadOnlyFile::contiguous() const noexcept { return source_->contiguous(); }

Result<SharedBuffer> ReadOnlyFile::read(uint64_t offset, uint64_t length, const char* what) const {
    return source_->read(offset, length, what);
}

Status ReadOnlyFile::read_into(uint64_t offset, std::span<uint8_t> out, const char* what) const {
    return source_->read_into(offset, out, what);
}

void ReadOnlyFile::advise(uint64_t offset, uint64_t length, AccessPattern pattern) const noexcept {
    static_cast<void>(source_->advise(offset, length, pattern));
}

Status ReadOnlyFile::check_unchanged() const { return source_->check_unchanged(); }

}  // namespace hurray
