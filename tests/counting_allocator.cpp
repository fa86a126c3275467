// SPDX-License-Identifier: Apache-2.0
// The counting replacements of the global allocation functions (counting_allocator.hpp).
#include "counting_allocator.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {

std::atomic<bool> g_counting{false};
std::atomic<uint64_t> g_allocations{0};

void* counted_alloc(std::size_t n) {
    if (g_counting.load(std::memory_order_relaxed)) {
        g_allocations.fetch_add(1, std::memory_order_relaxed);
    }
    // SAFETY: malloc of at least one byte; a null result is reported as bad_alloc.
    void* p = std::malloc(n == 0 ? 1 : n);
    if (p == nullptr) {
        throw std::bad_alloc();
    }
    return p;
}

}  // namespace

namespace hurray_test {

void begin_counting_allocations() noexcept {
    g_allocations.store(0);
    g_counting.store(true);
}

uint64_t end_counting_allocations() noexcept {
    g_counting.store(false);
    return g_allocations.load();
}

}  // namespace hurray_test

// Replacements of the global allocation functions (counted, malloc-backed).
void* operator new(std::size_t n) { return counted_alloc(n); }
void* operator new[](std::size_t n) { return counted_alloc(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
// The nothrow forms too (std::get_temporary_buffer uses them), so that every
// allocation and deallocation of the program goes through one pair.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    return std::malloc(n == 0 ? 1 : n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    return std::malloc(n == 0 ? 1 : n);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
