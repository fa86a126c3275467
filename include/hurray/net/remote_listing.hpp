// SPDX-License-Identifier: Apache-2.0
/// @file
/// `RemoteListing`: a server's listing (`TensorClient::list`) with the
/// composite structure recovered: which tensors are members of which head, and
/// the names of the tensors one request for a key brings (the head, then its
/// members in pre-order, as the server sends them).
#pragma once

#include "hurray/net/export.hpp"

#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hurray/net/tensor_client.hpp"

namespace hurray::net {

/// A listing in the server's order (write order: a head is followed by its
/// members), indexed by key.
class HURRAY_NET_EXPORT RemoteListing {
public:
    /// Indexes `tensors`. A head whose members the listing does not hold (a
    /// torn listing) gets the members that are there.
    explicit RemoteListing(std::vector<RemoteTensor> tensors);

    /// The number of tensors.
    [[nodiscard]] size_t size() const noexcept { return tensors_.size(); }
    /// Tensor `i` (`i < size()`).
    [[nodiscard]] const RemoteTensor& at(size_t i) const { return tensors_.at(i); }
    /// The position of `key`, if listed.
    [[nodiscard]] std::optional<size_t> find(std::string_view key) const;
    /// The position of the composite head whose direct member `i` is, if any.
    [[nodiscard]] std::optional<size_t> head_of(size_t i) const;
    /// The tensors that are no composite's member, in order.
    [[nodiscard]] std::vector<size_t> top_level() const;
    /// What a request for tensor `i` brings: `i`, then (for a head) its
    /// members in pre-order.
    [[nodiscard]] std::vector<size_t> subtree(size_t i) const;

private:
    std::vector<RemoteTensor> tensors_;
    std::unordered_map<std::string_view, size_t> by_key_;
    std::vector<std::optional<size_t>> head_;  // direct head of each tensor
    std::vector<size_t> end_;                  // one past the last tensor of each subtree
};

}  // namespace hurray::net
