// SPDX-License-Identifier: Apache-2.0
/// @file
/// `SmallVector<T, N>`: a vector that keeps up to `N` elements inside itself
/// and moves to the heap beyond, for the short arrays of a descriptor (shape,
/// strides, buffer table) so that the common descriptors allocate nothing.
#pragma once

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

namespace hurray {

/// A contiguous sequence with the `std::vector` API used in this library,
/// storing up to `N` elements inline and spilling to the heap beyond `N`.
///
/// `T` must be trivially copyable (sizes, strides, buffer handles): elements
/// are copied as bytes. Heap memory comes from `std::allocator<T>`, exactly
/// as `std::vector` gets it, so an allocation failure behaves as it does for
/// the vectors elsewhere in the library. It converts implicitly to
/// `std::span<const T>` (and `std::span<T>`), is built implicitly from a
/// `std::vector<T>` and a `std::span<const T>`, and gives a `std::vector<T>`
/// with `to_vector()`. Moving a vector that holds its elements inline copies
/// them; a moved-from vector is empty.
///
/// @code
/// hurray::SmallVector<uint64_t, 8> shape = {2, 3, 4};  // no allocation
/// shape.push_back(5);
/// std::span<const uint64_t> s = shape;                 // a view of 4 elements
/// std::vector<uint64_t> v = shape.to_vector();         // a copy
/// @endcode
template <typename T, size_t N>
class SmallVector {
    static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds trivially copyable elements");
    static_assert(N > 0, "SmallVector needs inline room for at least one element");

public:
    using value_type = T;                ///< Element type.
    using size_type = size_t;            ///< Size type.
    using difference_type = ptrdiff_t;   ///< Iterator difference.
    using reference = T&;                ///< Element reference.
    using const_reference = const T&;    ///< Const element reference.
    using pointer = T*;                  ///< Element pointer.
    using const_pointer = const T*;      ///< Const element pointer.
    using iterator = T*;                 ///< Contiguous iterator.
    using const_iterator = const T*;     ///< Contiguous const iterator.
    using reverse_iterator = std::reverse_iterator<iterator>;              ///< Reverse iterator.
    using const_reverse_iterator = std::reverse_iterator<const_iterator>;  ///< Reverse const iterator.

    /// The number of elements held without a heap allocation.
    static constexpr size_t inline_capacity = N;

    /// An empty vector.
    SmallVector() noexcept = default;
    /// `n` value-initialised elements.
    explicit SmallVector(size_t n) { resize(n); }
    /// `n` copies of `value`.
    SmallVector(size_t n, const T& value) { assign(n, value); }
    /// The elements of `[first, last)`.
    template <std::input_iterator It>
    SmallVector(It first, It last) {
        assign(first, last);
    }
    /// The listed elements.
    SmallVector(std::initializer_list<T> init) { assign(init.begin(), init.end()); }
    /// A copy of a `std::vector`'s elements.
    SmallVector(const std::vector<T>& v) { assign(v.begin(), v.end()); }  // NOLINT(google-explicit-constructor)
    /// A copy of the viewed elements.
    SmallVector(std::span<const T> s) { assign(s.begin(), s.end()); }  // NOLINT(google-explicit-constructor)
    /// A copy.
    SmallVector(const SmallVector& other) { assign(other.begin(), other.end()); }
    /// Takes `other`'s heap block, or copies its inline elements; `other` is left empty.
    SmallVector(SmallVector&& other) noexcept { steal(other); }
    ~SmallVector() { release(); }

    /// Copy assignment.
    SmallVector& operator=(const SmallVector& other) {
        if (this != &other) {
            assign(other.begin(), other.end());
        }
        return *this;
    }
    /// Move assignment; `other` is left empty.
    SmallVector& operator=(SmallVector&& other) noexcept {
        if (this != &other) {
            release();
            steal(other);
        }
        return *this;
    }
    /// Replaces the elements with the listed ones.
    SmallVector& operator=(std::initializer_list<T> init) {
        assign(init.begin(), init.end());
        return *this;
    }

    /// Replaces the elements with `n` copies of `value`.
    void assign(size_t n, const T& value) {
        const T copy = value;  // `value` may be one of ours
        clear();
        reserve(n);
        std::uninitialized_fill_n(data_, n, copy);
        size_ = n;
    }
    /// Replaces the elements with those of `[first, last)`.
    template <std::input_iterator It>
    void assign(It first, It last) {
        if constexpr (std::forward_iterator<It>) {
            const auto n = static_cast<size_t>(std::distance(first, last));
            if (n > capacity_) {
                SmallVector fresh;
                fresh.reserve(n);
                std::uninitialized_copy(first, last, fresh.data_);
                fresh.size_ = n;
                *this = std::move(fresh);
                return;
            }
            // Within capacity: `[first, last)` may be our own elements, so
            // move them into place rather than copying over them.
            if constexpr (std::contiguous_iterator<It>) {
                if (n != 0) {
                    std::memmove(static_cast<void*>(data_), std::to_address(first), n * sizeof(T));
                }
            } else {
                std::copy(first, last, data_);
            }
            size_ = n;
        } else {
            clear();
            for (; first != last; ++first) {
                push_back(*first);
            }
        }
    }
    /// Replaces the elements with the listed ones.
    void assign(std::initializer_list<T> init) { assign(init.begin(), init.end()); }

    /// The number of elements.
    [[nodiscard]] size_t size() const noexcept { return size_; }
    /// Whether there is no element.
    [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
    /// The number of elements that fit before the next allocation.
    [[nodiscard]] size_t capacity() const noexcept { return capacity_; }
    /// The largest possible size.
    [[nodiscard]] static constexpr size_t max_size() noexcept { return SIZE_MAX / sizeof(T); }
    /// Whether the elements are stored inline (no heap block held).
    [[nodiscard]] bool is_inline() const noexcept { return data_ == inline_data(); }

    /// The first element.
    [[nodiscard]] T* data() noexcept { return data_; }
    /// The first element.
    [[nodiscard]] const T* data() const noexcept { return data_; }
    /// Element `i` (unchecked, as `std::vector::operator[]`).
    T& operator[](size_t i) noexcept { return data_[i]; }
    /// Element `i` (unchecked, as `std::vector::operator[]`).
    [[nodiscard]] const T& operator[](size_t i) const noexcept { return data_[i]; }
    /// The first element; the vector must not be empty.
    T& front() noexcept { return data_[0]; }
    /// The first element; the vector must not be empty.
    [[nodiscard]] const T& front() const noexcept { return data_[0]; }
    /// The last element; the vector must not be empty.
    T& back() noexcept { return data_[size_ - 1]; }
    /// The last element; the vector must not be empty.
    [[nodiscard]] const T& back() const noexcept { return data_[size_ - 1]; }

    /// Iterator to the first element.
    iterator begin() noexcept { return data_; }
    /// Iterator past the last element.
    iterator end() noexcept { return data_ + size_; }
    /// Iterator to the first element.
    [[nodiscard]] const_iterator begin() const noexcept { return data_; }
    /// Iterator past the last element.
    [[nodiscard]] const_iterator end() const noexcept { return data_ + size_; }
    /// Iterator to the first element.
    [[nodiscard]] const_iterator cbegin() const noexcept { return data_; }
    /// Iterator past the last element.
    [[nodiscard]] const_iterator cend() const noexcept { return data_ + size_; }
    /// Reverse iterator to the last element.
    reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
    /// Reverse iterator before the first element.
    reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
    /// Reverse iterator to the last element.
    [[nodiscard]] const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
    /// Reverse iterator before the first element.
    [[nodiscard]] const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }

    /// Makes room for `n` elements.
    void reserve(size_t n) {
        if (n > capacity_) {
            grow_to(n);
        }
    }
    /// Removes every element (keeps the capacity).
    void clear() noexcept { size_ = 0; }
    /// Resizes; new elements are value-initialised.
    void resize(size_t n) {
        reserve(n);
        for (size_t i = size_; i < n; ++i) {
            ::new (static_cast<void*>(data_ + i)) T{};
        }
        size_ = n;
    }
    /// Resizes; new elements are copies of `value`.
    void resize(size_t n, const T& value) {
        if (n > size_) {
            insert(end(), n - size_, value);
        } else {
            size_ = n;
        }
    }
    /// Appends a copy of `value`.
    void push_back(const T& value) {
        if (size_ == capacity_) {
            const T copy = value;  // `value` may be one of ours
            grow_to(next_capacity(size_ + 1));
            ::new (static_cast<void*>(data_ + size_)) T(copy);
        } else {
            ::new (static_cast<void*>(data_ + size_)) T(value);
        }
        ++size_;
    }
    /// Appends an element built from `args`; returns it.
    template <typename... Args>
    T& emplace_back(Args&&... args) {
        if constexpr (sizeof...(Args) == 0) {
            push_back(T{});
        } else {
            const T value(std::forward<Args>(args)...);
            push_back(value);
        }
        return back();
    }
    /// Removes the last element; the vector must not be empty.
    void pop_back() noexcept { --size_; }

    /// Inserts a copy of `value` before `pos`; returns the inserted element.
    iterator insert(const_iterator pos, const T& value) { return insert(pos, size_t{1}, value); }
    /// Inserts `n` copies of `value` before `pos`; returns the first inserted element.
    iterator insert(const_iterator pos, size_t n, const T& value) {
        const T copy = value;  // `value` may be one of ours
        const size_t at = open_gap(pos, n);
        std::uninitialized_fill_n(data_ + at, n, copy);
        return data_ + at;
    }
    /// Inserts the elements of `[first, last)` before `pos`; returns the first inserted element.
    template <std::input_iterator It>
    iterator insert(const_iterator pos, It first, It last) {
        // Copy first: `[first, last)` may be our own elements.
        const SmallVector items(first, last);
        const size_t at = open_gap(pos, items.size());
        if (!items.empty()) {
            std::memcpy(static_cast<void*>(data_ + at), items.data(), items.size() * sizeof(T));
        }
        return data_ + at;
    }
    /// Inserts the listed elements before `pos`; returns the first inserted element.
    iterator insert(const_iterator pos, std::initializer_list<T> init) {
        return insert(pos, init.begin(), init.end());
    }
    /// Removes the element at `pos`; returns the element after it.
    iterator erase(const_iterator pos) noexcept { return erase(pos, pos + 1); }
    /// Removes `[first, last)`; returns the element after them.
    iterator erase(const_iterator first, const_iterator last) noexcept {
        const auto at = static_cast<size_t>(first - data_);
        const auto n = static_cast<size_t>(last - first);
        if (n != 0) {
            std::memmove(static_cast<void*>(data_ + at), data_ + at + n, (size_ - at - n) * sizeof(T));
            size_ -= n;
        }
        return data_ + at;
    }
    /// Exchanges the elements of two vectors.
    void swap(SmallVector& other) noexcept {
        SmallVector tmp(std::move(other));
        other = std::move(*this);
        *this = std::move(tmp);
    }

    /// A `std::vector` with the same elements.
    [[nodiscard]] std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

    /// Element-wise equality.
    friend bool operator==(const SmallVector& a, const SmallVector& b) noexcept {
        return std::equal(a.begin(), a.end(), b.begin(), b.end());
    }
    /// Element-wise equality with a `std::vector`.
    friend bool operator==(const SmallVector& a, const std::vector<T>& b) noexcept {
        return std::equal(a.begin(), a.end(), b.begin(), b.end());
    }
    /// Lexicographic order, as for `std::vector`.
    friend auto operator<=>(const SmallVector& a, const SmallVector& b) noexcept
        requires std::three_way_comparable<T>
    {
        return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end());
    }

private:
    // Inline room for N elements; a union so that no element is built
    // before it is written (T is trivially copyable: elements begin their
    // life when copied or constructed into place).
    union Storage {
        Storage() noexcept {}  // NOLINT(modernize-use-equals-default): leaves `items` unbuilt
        T items[N];  // NOLINT(modernize-avoid-c-arrays)
    };

    [[nodiscard]] T* inline_data() noexcept { return storage_.items; }
    [[nodiscard]] const T* inline_data() const noexcept { return storage_.items; }

    [[nodiscard]] size_t next_capacity(size_t needed) const noexcept {
        const size_t doubled = capacity_ > max_size() / 2 ? max_size() : capacity_ * 2;
        return std::max(needed, doubled);
    }

    // Moves the elements into a heap block of `n` (> capacity_) elements.
    void grow_to(size_t n) {
        T* fresh = std::allocator<T>().allocate(n);
        if (size_ != 0) {
            std::memcpy(static_cast<void*>(fresh), data_, size_ * sizeof(T));
        }
        release();
        data_ = fresh;
        capacity_ = n;
    }

    // Shifts the elements from `pos` on by `n` places (growing as needed);
    // returns the index of the gap.
    size_t open_gap(const_iterator pos, size_t n) {
        const auto at = static_cast<size_t>(pos - data_);
        if (n == 0) {
            return at;
        }
        if (size_ + n > capacity_) {
            grow_to(next_capacity(size_ + n));
        }
        std::memmove(static_cast<void*>(data_ + at + n), data_ + at, (size_ - at) * sizeof(T));
        size_ += n;
        return at;
    }

    void release() noexcept {
        if (!is_inline()) {
            std::allocator<T>().deallocate(data_, capacity_);
            data_ = inline_data();
            capacity_ = N;
        }
    }

    // `this` holds no heap block.
    void steal(SmallVector& other) noexcept {
        if (other.is_inline()) {
            if (other.size_ != 0) {
                std::memcpy(static_cast<void*>(inline_data()), other.data_, other.size_ * sizeof(T));
            }
            data_ = inline_data();
            capacity_ = N;
        } else {
            data_ = other.data_;
            capacity_ = other.capacity_;
            other.data_ = other.inline_data();
            other.capacity_ = N;
        }
        size_ = other.size_;
        other.size_ = 0;
    }

    T* data_ = storage_.items;
    size_t size_ = 0;
    size_t capacity_ = N;
    Storage storage_;
};

}  // namespace hurray
