// SPDX-License-Identifier: Apache-2.0
// Internal: an error from a nested parser, restated in the reader's terms.
#pragma once

#include <cstdint>
#include <string>

#include "hurray/core/result.hpp"

namespace hurray::detail {

/// `e` with `prefix: ` put before its message and its offset (if any) moved
/// by `base`, so that a nested parser's error names where it happened and
/// points into the whole input.
inline Error with_context(const Error& e, const std::string& prefix, uint64_t base) {
    const Error r = e.rebased(base);
    return {r.code(), prefix + ": " + r.message(), r.offset()};
}

}  // namespace hurray::detail
