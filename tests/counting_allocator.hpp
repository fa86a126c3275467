// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file
/// Counting the heap allocations of a piece of code, for the tests that prove "allocates
/// nothing". tests/counting_allocator.cpp replaces the global allocation functions of the
/// whole test program it is linked into (malloc-backed) and counts the calls made while
/// counting is on; only programs that link it count (tests/CMakeLists.txt).

#include <cstdint>

namespace hurray_test {

/// Resets the count to 0 and starts counting.
void begin_counting_allocations() noexcept;

/// Stops counting and returns the number of allocations since begin_counting_allocations().
uint64_t end_counting_allocations() noexcept;

/// The allocations made while `f` runs. The count is global: no other thread may
/// allocate meanwhile.
/// @code
/// EXPECT_EQ(hurray_test::allocations_in([&] { reader.find("w"); }), 0U);
/// @endcode
template <typename F>
uint64_t allocations_in(F&& f) {
    begin_counting_allocations();
    f();
    return end_counting_allocations();
}

}  // namespace hurray_test
