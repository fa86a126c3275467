// SPDX-License-Identifier: Apache-2.0
// Transparent huge pages for large, freshly allocated metadata arrays.
#pragma once

#include <cstddef>

namespace hurray::detail {

/// Asks the kernel to back the whole 2 MiB pages inside [p, p + bytes) with
/// transparent huge pages, for an allocation of at least 4 MiB not yet written (a
/// no-op below that, where THP are disabled, and on error: it is a hint). An
/// array of n bytes written for the first time otherwise costs n / 4 KiB page
/// faults (the 1M-entry index's 56 MB of entries: 14,000 faults, ~17 ms here);
/// with huge pages, n / 2 MiB.
void advise_huge_pages(void* p, size_t bytes) noexcept;

}  // namespace hurray::detail
