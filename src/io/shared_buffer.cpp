// SPDX-License-Identifier: Apache-2.0
#include "hurray/io/shared_buffer.hpp"

namespace hurray {

SharedBuffer SharedBuffer::from_vector(std::vector<uint8_t> bytes) {
    auto owner = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
    const std::span<const uint8_t> view(owner->data(), owner->size());
    return {view, std::shared_ptr<const void>(owner)};
}

}  // namespace hurray
