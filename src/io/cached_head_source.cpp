// SPDX-License-Identifier: Apache-2.0
#include "hurray/io/cached_head_source.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>

namespace hurray {

CachedHeadSource::CachedHeadSource(std::shared_ptr<RangeSource> inner, std::vector<uint8_t> head)
    : inner_(std::move(inner)), head_(std::move(head)) {
    if (head_.size() > inner_->size()) {
        head_.resize(static_cast<size_t>(inner_->size()));  // never more than the file
    }
}

Status CachedHeadSource::read(uint64_t offset, std::span<uint8_t> out) {
    if (in_head(offset, out.size())) {
        // SAFETY: in_head proved [offset, offset + out.size()) inside head_.
        std::copy_n(head_.begin() + static_cast<std::ptrdiff_t>(offset), out.size(), out.begin());
        return Status::success();
    }
    return inner_->read(offset, out);
}

Status CachedHeadSource::read_ranges(std::span<const ByteRange> ranges) {
    std::vector<ByteRange> rest;  // those not in the head, read together by the inner source
    for (const ByteRange& r : ranges) {
        if (in_head(r.offset, r.out.size())) {
            // SAFETY: in_head proved the range inside head_.
            std::copy_n(head_.begin() + static_cast<std::ptrdiff_t>(r.offset), r.out.size(), r.out.begin());
        } else {
            rest.push_back(r);
        }
    }
    return rest.empty() ? Status::success() : inner_->read_ranges(rest);
}

}  // namespace hurray
