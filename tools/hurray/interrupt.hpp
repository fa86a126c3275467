#pragma once
/// @file
/// SIGINT and SIGTERM while a command writes a file: caught instead of killing the
/// process, so that the work stops at its next chunk or transfer, the temporary output is
/// removed, and the tool exits 130 (SIGINT) or 143 (SIGTERM) as a killed shell job would.

namespace hurray::cli {

/// While alive, SIGINT and SIGTERM are recorded (interrupted_by()) instead of killing
/// the process; the previous handlers come back after. Not nested across threads: one
/// command runs at a time.
class InterruptGuard {
public:
    InterruptGuard();
    ~InterruptGuard();
    InterruptGuard(const InterruptGuard&) = delete;
    InterruptGuard& operator=(const InterruptGuard&) = delete;
    InterruptGuard(InterruptGuard&&) = delete;
    InterruptGuard& operator=(InterruptGuard&&) = delete;

private:
    struct Saved;
    Saved* saved_;
};

/// The signal caught while an InterruptGuard is alive (SIGINT or SIGTERM), or 0 (also
/// once the guard is gone). Safe to call from any thread (a transfer's progress callback).
int interrupted_by() noexcept;

/// The exit status for interrupted_by(): 128 + the signal (130, 143).
int interrupted_exit_code() noexcept;

}  // namespace hurray::cli
