// SPDX-License-Identifier: Apache-2.0
#include "hurray/net/remote_listing.hpp"

#include <variant>

namespace hurray::net {

namespace {

/// The member_count of a composite head, 0 for any other tensor.
uint32_t member_count(const TensorDescriptor& d) {
    if (const auto* c = std::get_if<CompositeLayout>(&d.layout)) {
        return c->member_count;
    }
    return 0;
}

}  // namespace

RemoteListing::RemoteListing(std::vector<RemoteTensor> tensors)
    : tensors_(std::move(tensors)), head_(tensors_.size()), end_(tensors_.size()) {
    for (size_t i = 0; i < tensors_.size(); ++i) {
        by_key_.emplace(tensors_[i].key, i);
    }
    // Pre-order walk: each head takes the next member_count subtrees.
    struct Open {
        size_t head;
        uint32_t left;
    };
    std::vector<Open> open;
    for (size_t i = 0; i < tensors_.size(); ++i) {
        if (!open.empty()) {
            head_[i] = open.back().head;
            --open.back().left;
        }
        const uint32_t n = member_count(tensors_[i].descriptor);
        if (n > 0) {
            open.push_back(Open{i, n});
        } else {
            end_[i] = i + 1;
        }
        while (!open.empty() && open.back().left == 0) {
            end_[open.back().head] = i + 1;
            open.pop_back();
        }
    }
    for (const Open& o : open) {
        end_[o.head] = tensors_.size();  // torn: what is there
    }
}

std::optional<size_t> RemoteListing::find(std::string_view key) const {
    const auto it = by_key_.find(key);
    if (it == by_key_.end()) {
        return std::nullopt;
    }
    return it->second;
}

std::optional<size_t> RemoteListing::head_of(size_t i) const { return head_.at(i); }

std::vector<size_t> RemoteListing::top_level() const {
    std::vector<size_t> out;
    for (size_t i = 0; i < tensors_.size(); ++i) {
        if (!head_[i]) {
            out.push_back(i);
        }
    }
    return out;
}

std::vector<size_t> RemoteListing::subtree(size_t i) const {
    std::vector<size_t> out;
    for (size_t j = i; j < end_.at(i); ++j) {
        out.push_back(j);
    }
    return out;
}

}  // namespace hurray::net
