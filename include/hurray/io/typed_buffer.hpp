// SPDX-License-Identifier: Apache-2.0
/// @file
/// `TypedBuffer<T>`: elements of type `T`, zero-copy, together with a share of
/// what keeps them valid (a file's mapping, or owned bytes).
#pragma once

#include <compare>
#include <cstddef>
#include <iterator>
#include <memory>
#include <span>
#include <utility>

#include "hurray/core/lifetime.hpp"

namespace hurray {

/// Read-only elements of type `T` and shared ownership of their storage, as
/// `FileTensor::as<T>()` returns them: valid while this object or a copy of
/// it lives, whatever happens to the file or reader they came from. Copying
/// one copies a pointer and a span, never the elements.
///
/// It converts to `std::span<const T>` for callers that keep it alive
/// themselves; the conversion from a temporary does not compile, since the
/// span would outlive the storage. It iterates (a random-access range) but is
/// deliberately not a contiguous range: `std::span`'s constructor from a
/// contiguous range would take a temporary too. `span()` gives the contiguous
/// view.
///
/// @code
/// auto w = file->tensor("w").as<float>();     // Result<TypedBuffer<float>>
/// if (!w) return w.error();
/// float first = (*w)[0];
/// std::span<const float> s = *w;              // fine: w keeps the storage
/// for (float x : *w) { ... }
/// // std::span<const float> bad = *file->tensor("w").as<float>();   // does not compile
/// @endcode
template <typename T>
class TypedBuffer {
public:
    /// The element type.
    using value_type = T;

    /// A random-access iterator over the elements (a pointer that does not
    /// claim contiguity; see the class comment).
    class iterator {
    public:
        /// Random access, not contiguous.
        using iterator_concept = std::random_access_iterator_tag;
        /// Random access.
        using iterator_category = std::random_access_iterator_tag;
        /// The element type.
        using value_type = T;
        /// Distances between positions.
        using difference_type = std::ptrdiff_t;
        /// What `->` gives.
        using pointer = const T*;
        /// What `*` gives.
        using reference = const T&;

        /// A singular iterator.
        iterator() = default;
        /// At `p`.
        explicit iterator(const T* p) noexcept : p_(p) {}
        /// The element.
        reference operator*() const noexcept { return *p_; }
        /// The element's address.
        pointer operator->() const noexcept { return p_; }
        /// The element `n` places on.
        reference operator[](difference_type n) const noexcept { return p_[n]; }
        /// Next.
        iterator& operator++() noexcept { ++p_; return *this; }
        /// Next, returning the old position.
        iterator operator++(int) noexcept { iterator old = *this; ++p_; return old; }
        /// Previous.
        iterator& operator--() noexcept { --p_; return *this; }
        /// Previous, returning the old position.
        iterator operator--(int) noexcept { iterator old = *this; --p_; return old; }
        /// `n` places on.
        iterator& operator+=(difference_type n) noexcept { p_ += n; return *this; }
        /// `n` places back.
        iterator& operator-=(difference_type n) noexcept { p_ -= n; return *this; }
        /// `n` places on.
        friend iterator operator+(iterator it, difference_type n) noexcept { return it += n; }
        /// `n` places on.
        friend iterator operator+(difference_type n, iterator it) noexcept { return it += n; }
        /// `n` places back.
        friend iterator operator-(iterator it, difference_type n) noexcept { return it -= n; }
        /// The distance from `b` to `a`.
        friend difference_type operator-(iterator a, iterator b) noexcept { return a.p_ - b.p_; }
        /// Same position.
        friend bool operator==(iterator a, iterator b) noexcept { return a.p_ == b.p_; }
        /// Order of positions.
        friend auto operator<=>(iterator a, iterator b) noexcept { return a.p_ <=> b.p_; }

    private:
        const T* p_ = nullptr;
    };
    /// Iteration is read-only.
    using const_iterator = iterator;

    /// No element.
    TypedBuffer() = default;
    /// `elements`, kept valid by `owner`.
    TypedBuffer(std::span<const T> elements, std::shared_ptr<const void> owner) noexcept
        : elements_(elements), owner_(std::move(owner)) {}

    /// The elements; valid while this buffer lives.
    [[nodiscard]] std::span<const T> span() const& noexcept HURRAY_LIFETIMEBOUND { return elements_; }
    /// Not from a temporary: the span would outlive the storage.
    std::span<const T> span() const&& = delete;
    /// The elements; valid while this buffer lives.
    // NOLINTNEXTLINE(google-explicit-constructor,hicpp-explicit-conversions): a span of what it holds
    operator std::span<const T>() const& noexcept HURRAY_LIFETIMEBOUND { return elements_; }
    /// Not from a temporary: the span would outlive the storage.
    operator std::span<const T>() const&& = delete;

    /// First element.
    [[nodiscard]] const T* data() const noexcept HURRAY_LIFETIMEBOUND { return elements_.data(); }
    /// Number of elements.
    [[nodiscard]] size_t size() const noexcept { return elements_.size(); }
    /// Whether it holds no element.
    [[nodiscard]] bool empty() const noexcept { return elements_.empty(); }
    /// Element `i`; `i < size()`.
    [[nodiscard]] const T& operator[](size_t i) const noexcept HURRAY_LIFETIMEBOUND { return elements_[i]; }
    /// First element's position.
    [[nodiscard]] iterator begin() const noexcept HURRAY_LIFETIMEBOUND { return iterator(elements_.data()); }
    /// Past the last element.
    [[nodiscard]] iterator end() const noexcept HURRAY_LIFETIMEBOUND {
        return iterator(elements_.data() + elements_.size());
    }
    /// What keeps the elements alive.
    [[nodiscard]] const std::shared_ptr<const void>& owner() const noexcept { return owner_; }

private:
    std::span<const T> elements_;
    std::shared_ptr<const void> owner_;
};

}  // namespace hurray
