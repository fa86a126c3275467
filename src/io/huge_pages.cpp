// SPDX-License-Identifier: Apache-2.0
#include "io/huge_pages.hpp"

#include <sys/mman.h>

#include <cstdint>

namespace hurray::detail {

void advise_huge_pages(void* p, size_t bytes) noexcept {
    constexpr uintptr_t kHuge = uintptr_t{2} * 1024 * 1024;
    if (p == nullptr || bytes < 2 * kHuge) {
        return;
    }
    const auto begin = reinterpret_cast<uintptr_t>(p);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    const uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1);
    const uintptr_t last = (begin + bytes) & ~(kHuge - 1);
    if (last <= first) {
        return;
    }
    // SAFETY: [first, last) lies inside the caller's allocation [p, p + bytes)
    // (rounded inwards to 2 MiB boundaries); MADV_HUGEPAGE changes how its pages
    // are backed, never their contents. Its result is ignored: a hint.
    static_cast<void>(::madvise(reinterpret_cast<void*>(first),  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast,performance-no-int-to-ptr)
                                static_cast<size_t>(last - first), MADV_HUGEPAGE));
}

}  // namespace hurray::detail
