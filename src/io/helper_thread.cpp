// SPDX-License-Identifier: Apache-2.0
#include "io/helper_thread.hpp"

#include <sched.h>

namespace hurray::detail {

bool HelperThread::useful() noexcept {
    static const bool more_than_one = [] {
        cpu_set_t set;
        CPU_ZERO(&set);
        return ::sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 1;
    }();
    return more_than_one;
}

void* HelperThread::trampoline(void* self) noexcept {
    auto* t = static_cast<HelperThread*>(self);
    t->run_(t->arg_);
    return nullptr;
}

bool HelperThread::start(void (*run)(void*), void* arg) noexcept {
    if (running_) {
        return false;
    }
    run_ = run;
    arg_ = arg;
    // pthread_create, not std::thread: it reports a failure (no memory, a process
    // at its thread limit) as a value, where std::thread would throw into this
    // library, which is built without exceptions.
    running_ = ::pthread_create(&thread_, nullptr, &HelperThread::trampoline, this) == 0;
    return running_;
}

void HelperThread::join() noexcept {
    if (running_) {
        static_cast<void>(::pthread_join(thread_, nullptr));  // joinable, joined once
        running_ = false;
    }
}

}  // namespace hurray::detail
