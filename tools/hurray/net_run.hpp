#pragma once
/// @file
/// Running one coroutine of a network command (`fetch`, `push`, `ls hurray://...`) to its
/// end on an io_context of its own.

#include <asio/co_spawn.hpp>
#include <asio/io_context.hpp>

#include <exception>
#include <optional>

namespace hurray::cli {

/// Runs the coroutine that `body(io)` returns (an `asio::awaitable<T>`) on a new
/// io_context until it ends, and returns its value; nullopt when it threw (the
/// library's coroutines return errors as values, so only a bug or an allocation
/// failure gets here).
template <typename T, typename Body>
std::optional<T> run_on_io(Body body) {
    asio::io_context io;
    std::optional<T> out;
    asio::co_spawn(
        io, [&]() -> asio::awaitable<void> { out.emplace(co_await body(io)); }, [](const std::exception_ptr&) {});
    io.run();
    return out;
}

}  // namespace hurray::cli
