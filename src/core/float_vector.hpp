// SPDX-License-Identifier: Apache-2.0
// Internal: a vector of float32 values sized from untrusted input, as a Result.
#pragma once

#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "hurray/core/checked_math.hpp"
#include "hurray/core/result.hpp"

namespace hurray::detail {

/// A vector of `count` floats, or an error (naming `what`) when they cannot be
/// allocated. The memory is first asked for without the throwing allocator, so that an
/// impossible request (a sparse tensor's logical shape may be far larger than its
/// buffers) is an error rather than std::bad_alloc, which this library never throws.
inline Result<std::vector<float>> float_vector(uint64_t count, const char* what) {
    const auto bytes = mul_u64(count, sizeof(float));
    if (!bytes || *bytes > static_cast<uint64_t>(PTRDIFF_MAX)) {
        return Error(ErrorCode::kSizeOverflow,
                     std::string(what) + ": " + std::to_string(count) + " float32 values do not fit in memory");
    }
    void* probe = ::operator new(static_cast<size_t>(*bytes), std::nothrow);
    if (probe == nullptr && *bytes != 0) {
        return Error(ErrorCode::kOutOfMemory, std::string(what) + ": cannot allocate " + std::to_string(*bytes) +
                                                  " bytes for the float32 values");
    }
    ::operator delete(probe);
    return std::vector<float>(static_cast<size_t>(count));
}

}  // namespace hurray::detail
