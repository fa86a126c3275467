// SPDX-License-Identifier: Apache-2.0
// The non-template part of hurray::net: Asio errors and exceptions turned
// into hurray::Error values, and the data checks of read_tensor run on the
// compute executor.
#include "hurray/net/async_common.hpp"

#include <asio/co_spawn.hpp>
#include <asio/error.hpp>
#include <asio/system_error.hpp>
#include <asio/use_awaitable.hpp>

#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "hurray/core/text.hpp"

namespace hurray::net {


bool is_cancellation(const std::error_code& ec) noexcept {
    return ec == asio::error::operation_aborted;
}

Error transport_error(const std::error_code& ec, std::string_view op, uint64_t offset) {
    std::string what = "stream: ";
    what.append(op);
    if (is_cancellation(ec)) {
        what += " cancelled (" + ec.message() + ")";
    } else {
        what += " failed: " + ec.message();
    }
    return Error(ErrorCode::kIoError, what, offset);
}

Error exception_error(const std::exception_ptr& e, std::string_view op, uint64_t offset) noexcept {
    // Building a message may itself throw (std::bad_alloc): the outer catch
    // then settles for an empty one (std::string() does not allocate).
    try {
        try {
            std::rethrow_exception(e);
        } catch (const std::system_error& se) {
            return transport_error(se.code(), op, offset);
        } catch (const std::bad_alloc&) {
            return Error(ErrorCode::kIoError, "stream: " + std::string(op) + " ran out of memory", offset);
        } catch (const std::exception& ex) {
            return Error(ErrorCode::kIoError, "stream: " + std::string(op) + " failed: " + ex.what(), offset);
        } catch (...) {
            return Error(ErrorCode::kIoError, "stream: " + std::string(op) + " failed: unknown exception", offset);
        }
    } catch (...) {
        return Error(ErrorCode::kIoError, std::string(), offset);
    }
}

namespace {

// The checks themselves; co_spawned on the compute executor, so this body
// runs there. Pointers, not references: the caller awaits the result, so
// what they point to outlives this frame.
asio::awaitable<Status> checks_body(const AsyncReadOptions* options, const StreamTensor* tensor,
                                    std::span<const SharedBuffer> buffers) {
    if (options->validate_data) {
        std::vector<std::span<const uint8_t>> spans;
        spans.reserve(buffers.size());
        for (const SharedBuffer& b : buffers) {
            spans.push_back(b.span());
        }
        Status s = validate_data(tensor->descriptor, spans, options->validate);
        if (!s) {
            co_return s.error().with_context({.prefix = "stream tensor #" + dec(tensor->index)});
        }
    }
    if (options->check) {
        co_return options->check(*tensor, buffers);
    }
    co_return Status::success();
}

}  // namespace

asio::awaitable<Status> run_tensor_checks(const AsyncReadOptions& options, const StreamTensor& tensor,
                                          std::span<const SharedBuffer> buffers) {
    if (!options.validate_data && !options.check) {
        co_return Status::success();
    }
    if (!options.compute) {
        co_return Error(ErrorCode::kInvalidArgument, "stream: validate_data or check asked without a compute executor");
    }
    co_return co_await asio::co_spawn(options.compute, checks_body(&options, &tensor, buffers),
                                      asio::use_awaitable);
}

}  // namespace hurray::net
