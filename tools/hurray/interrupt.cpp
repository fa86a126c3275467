#include "hurray/interrupt.hpp"

#include <signal.h>

#include <atomic>
#include <csignal>

namespace hurray::cli {
namespace {

/// The signal caught, 0 for none. Lock-free: written by the handler, read by any thread.
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_interrupt(int signal) { g_signal.store(signal, std::memory_order_relaxed); }

}  // namespace

struct InterruptGuard::Saved {
    struct sigaction old_int {};
    struct sigaction old_term {};
};

InterruptGuard::InterruptGuard() : saved_(new Saved) {
    g_signal.store(0, std::memory_order_relaxed);
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &saved_->old_int);
    sigaction(SIGTERM, &sa, &saved_->old_term);
}

InterruptGuard::~InterruptGuard() {
    sigaction(SIGINT, &saved_->old_int, nullptr);
    sigaction(SIGTERM, &saved_->old_term, nullptr);
    g_signal.store(0, std::memory_order_relaxed);  // what a later command sees
    delete saved_;
}

int interrupted_by() noexcept { return g_signal.load(std::memory_order_relaxed); }

int interrupted_exit_code() noexcept {
    const int s = interrupted_by();
    return 128 + (s != 0 ? s : SIGINT);
}

}  // namespace hurray::cli
