// SPDX-License-Identifier: Apache-2.0
// Internal: one job on a second thread for the length of a call (an open's name
// table beside its index pass), joined before the call returns.
#pragma once

#include <pthread.h>

namespace hurray::detail {

/// A job run on a thread of its own, started by `start` and waited for by `join` or
/// the destructor. No exception and no abort: when no thread can be started,
/// `start` says so and the caller runs the job itself. Not copyable or movable (the
/// thread holds its address).
class HelperThread {
public:
    HelperThread() = default;
    HelperThread(const HelperThread&) = delete;
    HelperThread& operator=(const HelperThread&) = delete;
    HelperThread(HelperThread&&) = delete;
    HelperThread& operator=(HelperThread&&) = delete;
    /// Joins the job, if one runs.
    ~HelperThread() { join(); }

    /// Whether this process may run a job beside the caller: more than one CPU is
    /// available to it (its affinity mask). Worked out once.
    [[nodiscard]] static bool useful() noexcept;

    /// Starts `run(arg)` on a new thread (none may run already). False when no
    /// thread could be started: then nothing runs.
    bool start(void (*run)(void*), void* arg) noexcept;

    /// Waits until the job has returned (at once when none runs). Everything the
    /// job wrote is visible to the caller afterwards.
    void join() noexcept;

private:
    static void* trampoline(void* self) noexcept;

    pthread_t thread_{};
    void (*run_)(void*) = nullptr;
    void* arg_ = nullptr;
    bool running_ = false;
};

}  // namespace hurray::detail
