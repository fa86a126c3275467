// SPDX-License-Identifier: Apache-2.0
// The SafeTensors reader's bytes: io's FileSource behind the firewall of
// safetensors_mapping.hpp (no hurray::convert header here).
#include "convert/safetensors_mapping.hpp"

#include <exception>
#include <memory>
#include <utility>

#include "io/file_source.hpp"

namespace hurray::safetensors_mapping {

Result<Mapping> Mapping::open(const std::string& path) {
    auto file = detail::FileSource::open(path, /*use_mmap=*/true);
    if (!file) {
        return file.error();
    }
    return Mapping(std::make_shared<const detail::FileSource>(std::move(*file)));
}

Mapping Mapping::memory(std::span<const uint8_t> bytes) {
    return Mapping(
        std::make_shared<const detail::FileSource>(detail::FileSource::memory(bytes, nullptr)));
}

uint64_t Mapping::size() const noexcept { return file_->size(); }

bool Mapping::contiguous() const noexcept { return file_->contiguous(); }

Result<SharedBuffer> Mapping::read(uint64_t offset, uint64_t length, const char* what) const {
    return file_->read(offset, length, what);
}

void Mapping::release(uint64_t offset, uint64_t length) const noexcept {
    try {
        static_cast<void>(file_->advise(offset, length, AccessPattern::kDontNeed));
    } catch (...) {
        // A hint: nothing to undo (the error message's allocation may throw).
    }
}

Status Mapping::check_unchanged() const { return file_->check_unchanged(); }

}  // namespace hurray::safetensors_mapping
