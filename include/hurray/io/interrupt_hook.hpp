// SPDX-License-Identifier: Apache-2.0
/// @file
/// `hurray::InterruptHook`: what a blocking read or write of a file descriptor
/// (`FdSource`, `FdSink`) asks when a signal interrupts it.
#pragma once

#include <functional>

namespace hurray {

/// Called when a signal interrupted a blocking read or write of a descriptor
/// (the system call failed with `EINTR`, or a write returned short), on the
/// thread that was blocked. `true` stops the call, which then fails with
/// `kCancelled` ("read: interrupted by a signal"); `false` retries it, as
/// having no hook does. A binding runs its own signal handlers here: Python's
/// module runs `PyErr_CheckSignals`, so that Ctrl-C stops a read from a pipe
/// that never ends.
///
/// @code
/// hurray::FdSource src(fd);
/// src.set_interrupt_hook([] { return g_stop.load(); });  // set by a SIGINT handler
/// @endcode
using InterruptHook = std::function<bool()>;

}  // namespace hurray
