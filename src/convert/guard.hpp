// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file
/// Internal: the exception boundary of every public hurray::convert function. The
/// library is compiled with exceptions (for its dependencies); none may escape.

#include <exception>
#include <new>
#include <string>
#include <utility>

#include "hurray/core/result.hpp"

namespace hurray::convert::detail {

/// Calls `f()` (which returns a Result or a Status) and turns any exception it throws into
/// an Error naming `what`: std::bad_alloc becomes kOutOfMemory, anything else kIoError.
template <typename F>
auto guarded(const std::string& what, F&& f) noexcept -> decltype(f()) {
    try {
        return std::forward<F>(f)();
    } catch (const std::bad_alloc&) {
        try {
            return Error(ErrorCode::kOutOfMemory, what + ": out of memory");
        } catch (...) {
            return Error(ErrorCode::kOutOfMemory, "out of memory");  // short: no allocation
        }
    } catch (const std::exception& e) {
        return Error(ErrorCode::kIoError, what + ": " + e.what());
    } catch (...) {
        return Error(ErrorCode::kIoError, what + ": unexpected exception");
    }
}

}  // namespace hurray::convert::detail
