// SPDX-License-Identifier: Apache-2.0
// The SIGBUS handler and the registry of watched mappings (see
// sigbus_guard.hpp). Everything the handler touches is a lock-free atomic in
// static storage, and it makes only async-signal-safe calls (mmap with
// MAP_FIXED, which Linux performs as a plain system call; sigaction; the
// previous handler).
#include "io/sigbus_guard.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstring>
#include <mutex>

namespace hurray::detail {

namespace {

/// How many mappings can be watched at once; more are simply unprotected.
constexpr size_t kSlots = 4096;

enum SlotState : uint32_t { kFree = 0, kClaimed = 1, kActive = 2 };

struct Slot {
    std::atomic<uint32_t> state{kFree};
    std::atomic<uint64_t> generation{0};
    std::atomic<uintptr_t> base{0};
    std::atomic<size_t> length{0};
    std::atomic<bool> writable{false};
    /// Offset of the first fault, UINT64_MAX while none.
    std::atomic<uint64_t> fault{UINT64_MAX};
};

static_assert(std::atomic<uint64_t>::is_always_lock_free, "the SIGBUS handler may only touch lock-free atomics");
static_assert(std::atomic<uint32_t>::is_always_lock_free, "the SIGBUS handler may only touch lock-free atomics");
static_assert(std::atomic<size_t>::is_always_lock_free, "the SIGBUS handler may only touch lock-free atomics");
static_assert(std::atomic<bool>::is_always_lock_free, "the SIGBUS handler may only touch lock-free atomics");

std::array<Slot, kSlots> g_slots;
std::atomic<uint64_t> g_generation{0};
struct sigaction g_previous {};
bool g_installed = false;
std::once_flag g_install_once;
/// The page size, read once by install(): sysconf is not async-signal-safe, so the
/// handler never calls it.
uintptr_t g_page_size = 4096;

/// Hands the signal to whoever had it before us.
void chain(int sig, siginfo_t* info, void* context) noexcept {
    if ((g_previous.sa_flags & SA_SIGINFO) != 0 && g_previous.sa_sigaction != nullptr) {
        g_previous.sa_sigaction(sig, info, context);
        return;
    }
    if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN && g_previous.sa_handler != nullptr) {
        g_previous.sa_handler(sig);
        return;
    }
    // The default action: restore it and return; the faulting instruction
    // runs again and the process dies of SIGBUS as it would have without us.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    // SAFETY: sigaction is async-signal-safe; dfl is a valid local.
    static_cast<void>(::sigaction(SIGBUS, &dfl, nullptr));
    if (info == nullptr || info->si_code <= 0) {
        // Sent by kill/raise, not a fault: there is nothing to retry, so
        // deliver it again now that the default action is back.
        static_cast<void>(::raise(sig));
    }
}

void on_sigbus(int sig, siginfo_t* info, void* context) noexcept {
    if (info != nullptr && info->si_code > 0) {
        const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        for (Slot& s : g_slots) {
            if (s.state.load(std::memory_order_acquire) != kActive) {
                continue;
            }
            const uintptr_t base = s.base.load(std::memory_order_relaxed);
            const size_t length = s.length.load(std::memory_order_relaxed);
            if (addr < base || addr - base >= length) {
                continue;
            }
            const uintptr_t page = g_page_size;
            const uintptr_t from = addr - (addr - base) % page;  // base is page-aligned
            const size_t rest = length - static_cast<size_t>(from - base);
            const int prot = s.writable.load(std::memory_order_relaxed) ? (PROT_READ | PROT_WRITE) : PROT_READ;  // NOLINT(hicpp-signed-bitwise)
            // SAFETY: [from, from + rest) lies inside a mapping this library
            // made and still holds (the slot is active until just before it
            // is unmapped); MAP_FIXED replaces those pages with private zero
            // pages, so the faulting read, retried, reads zeros. munmap of
            // the original range later removes these pages too.
            void* got = ::mmap(reinterpret_cast<void*>(from), rest, prot,  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast,performance-no-int-to-ptr)
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);  // NOLINT(hicpp-signed-bitwise)
            if (got == MAP_FAILED) {
                break;  // cannot recover: the default action it is
            }
            uint64_t expected = UINT64_MAX;
            const uint64_t offset = addr - base;
            while (offset < expected &&
                   !s.fault.compare_exchange_weak(expected, offset, std::memory_order_acq_rel)) {
            }
            return;
        }
    }
    chain(sig, info, context);
}

void install() noexcept {
    // Before the handler exists: it reads g_page_size, and sigaction orders this write
    // before any delivery of the signal to it.
    if (const long page = ::sysconf(_SC_PAGESIZE); page > 0) {
        g_page_size = static_cast<uintptr_t>(page);
    }
    struct sigaction sa {};
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;  // NOLINT(hicpp-signed-bitwise)
    sigemptyset(&sa.sa_mask);
    // SAFETY: sa and g_previous are valid; installing happens once, before
    // any mapping is registered (call_once).
    g_installed = ::sigaction(SIGBUS, &sa, &g_previous) == 0;
}

}  // namespace

std::optional<MappingWatch> watch_mapping(const void* base, size_t length, bool writable) noexcept {
    std::call_once(g_install_once, install);
    if (!g_installed || base == nullptr || length == 0) {
        return std::nullopt;
    }
    for (uint32_t i = 0; i < kSlots; ++i) {
        Slot& s = g_slots[i];
        uint32_t free = kFree;
        if (!s.state.compare_exchange_strong(free, kClaimed, std::memory_order_acq_rel)) {
            continue;
        }
        const uint64_t gen = g_generation.fetch_add(1, std::memory_order_relaxed) + 1;
        s.base.store(reinterpret_cast<uintptr_t>(base), std::memory_order_relaxed);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        s.length.store(length, std::memory_order_relaxed);
        s.writable.store(writable, std::memory_order_relaxed);
        s.fault.store(UINT64_MAX, std::memory_order_relaxed);
        s.generation.store(gen, std::memory_order_relaxed);
        s.state.store(kActive, std::memory_order_release);
        return MappingWatch{i, gen};
    }
    return std::nullopt;
}

void unwatch_mapping(MappingWatch watch) noexcept {
    if (watch.slot >= kSlots) {
        return;
    }
    Slot& s = g_slots[watch.slot];
    if (s.generation.load(std::memory_order_relaxed) == watch.generation) {
        s.state.store(kFree, std::memory_order_release);
    }
}

std::optional<uint64_t> mapping_fault(MappingWatch watch) noexcept {
    if (watch.slot >= kSlots) {
        return std::nullopt;
    }
    const Slot& s = g_slots[watch.slot];
    if (s.generation.load(std::memory_order_acquire) != watch.generation) {
        return std::nullopt;
    }
    const uint64_t f = s.fault.load(std::memory_order_acquire);
    if (f == UINT64_MAX) {
        return std::nullopt;
    }
    return f;
}

}  // namespace hurray::detail
