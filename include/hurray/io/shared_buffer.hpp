// SPDX-License-Identifier: Apache-2.0
/// @file
/// `SharedBuffer`: read-only bytes that keep their backing storage (a file
/// mapping, a heap block) alive, like Arrow's buffers keep their parent.
#pragma once

#include "hurray/io/export.hpp"
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace hurray {

/// A read-only byte range plus shared ownership of what backs it.
///
/// Copying a `SharedBuffer` copies a pointer and a span, never the bytes. A
/// buffer handed out by `FileReader` points into the file mapping and keeps
/// it mapped after the reader is gone.
///
/// @code
/// hurray::SharedBuffer w = reader.tensor("w")->buffers[0];
/// reader = {};                       // the mapping stays alive through w
/// const float* f = reinterpret_cast<const float*>(w.data());
/// @endcode
class HURRAY_IO_EXPORT SharedBuffer {
public:
    /// An empty buffer.
    SharedBuffer() = default;
    /// `bytes`, kept valid by `owner`.
    SharedBuffer(std::span<const uint8_t> bytes, std::shared_ptr<const void> owner) noexcept
        : bytes_(bytes), owner_(std::move(owner)) {}
    /// Takes ownership of a heap vector.
    static SharedBuffer from_vector(std::vector<uint8_t> bytes);

    /// The bytes.
    [[nodiscard]] std::span<const uint8_t> span() const noexcept { return bytes_; }
    /// First byte.
    [[nodiscard]] const uint8_t* data() const noexcept { return bytes_.data(); }
    /// Number of bytes.
    [[nodiscard]] size_t size() const noexcept { return bytes_.size(); }
    /// Whether it holds no byte.
    [[nodiscard]] bool empty() const noexcept { return bytes_.empty(); }
    /// First byte's position (iteration).
    [[nodiscard]] const uint8_t* begin() const noexcept { return bytes_.data(); }
    /// Past the last byte.
    [[nodiscard]] const uint8_t* end() const noexcept { return bytes_.data() + bytes_.size(); }
    /// A sub-range sharing the same owner; `offset + length` must be <= size().
    [[nodiscard]] SharedBuffer slice(size_t offset, size_t length) const {
        return {bytes_.subspan(offset, length), owner_};
    }
    /// What keeps the bytes alive.
    [[nodiscard]] const std::shared_ptr<const void>& owner() const noexcept { return owner_; }

private:
    std::span<const uint8_t> bytes_;
    std::shared_ptr<const void> owner_;
};

}  // namespace hurray
