// SPDX-License-Identifier: Apache-2.0
/// @file
/// `hurray::CachedHeadSource`: a `RangeSource` whose first bytes were read
/// already, served from memory.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/io/export.hpp"
#include "hurray/io/range_source.hpp"

namespace hurray {

/// The bytes of `inner`, its first `head.size()` bytes (read already, e.g. to
/// tell the file's format) served from memory and every other range by
/// `inner`: a reader that looked at the head pays no second request for it.
/// A SafeTensors file whose header lies in the head opens without another
/// request; so does an HRRYFILE's header. Its counters are `inner`'s (a read
/// from the head is no request).
///
/// @code
/// std::vector<uint8_t> head(std::min<uint64_t>(src->size(), 65536));
/// HURRAY_RETURN_IF_ERROR(src->read(0, head));
/// auto cached = std::make_shared<hurray::CachedHeadSource>(src, std::move(head));
/// @endcode
class HURRAY_IO_EXPORT CachedHeadSource final : public RangeSource {
public:
    /// `head` must be the first `head.size()` bytes of `inner` (at most its size).
    CachedHeadSource(std::shared_ptr<RangeSource> inner, std::vector<uint8_t> head);

    /// `inner`'s size.
    [[nodiscard]] uint64_t size() const noexcept override { return inner_->size(); }
    /// From the head when the range lies in it, else from `inner`.
    [[nodiscard]] Status read(uint64_t offset, std::span<uint8_t> out) override;
    /// The ranges in the head from memory, the others in one `inner->read_ranges`.
    [[nodiscard]] Status read_ranges(std::span<const ByteRange> ranges) override;
    /// `inner`'s identity.
    [[nodiscard]] std::string identity() const override { return inner_->identity(); }
    /// `inner`'s name.
    [[nodiscard]] std::string name() const override { return inner_->name(); }
    /// `inner`'s check.
    [[nodiscard]] Status check_unchanged() const override { return inner_->check_unchanged(); }
    /// The source behind the head (whose counters count the requests).
    [[nodiscard]] const std::shared_ptr<RangeSource>& inner() const noexcept { return inner_; }

private:
    /// Whether [offset, offset + n) lies in the head.
    [[nodiscard]] bool in_head(uint64_t offset, uint64_t n) const noexcept {
        return offset <= head_.size() && n <= head_.size() - offset;
    }

    std::shared_ptr<RangeSource> inner_;
    std::vector<uint8_t> head_;
};

}  // namespace hurray
