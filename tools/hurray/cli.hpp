#pragma once
/// @file
/// Entry point of the `hurray` command-line tool, callable in-process (tests use it).

#include <iosfwd>
#include <string>
#include <vector>

#include "hurray/core/result.hpp"

namespace hurray::cli {

/// Exit statuses of every `hurray` command.
enum ExitCode : int {
    kExitOk = 0,       ///< success; for `verify`, the input is valid
    kExitInvalid = 1,  ///< the input is invalid, unreadable, or an output could not be written
    kExitUsage = 2,    ///< bad command line (unknown command or option, missing argument)
};

/// The exit status for a command that failed with `e`: its row of
/// hurray/core/error_table.hpp (1, or 130 when cancelled as by Ctrl-C).
int exit_code_of(const Error& e) noexcept;

/// Where a command reads standard input and writes its output.
struct Console {
    std::ostream& out;  ///< results (tables, JSON, values)
    std::ostream& err;  ///< errors, warnings, progress
    int stdin_fd = 0;   ///< file descriptor read when a path is `-`
    /// True when `err` is a terminal (enables the progress bar of `convert`).
    bool err_is_tty = false;
    /// The descriptor behind `out` when it is standard output (-1: none, write
    /// through `out` only); `convert FILE -` then sends straight to it.
    int stdout_fd = -1;
    /// `--spec-only`: read Hurray descriptors by the specification alone, as another
    /// implementation does: libhurray's own private schemes (GGML blocks) are refused
    /// as unknown, not understood (hurray::DecodeOptions::libhurray_schemes).
    bool spec_only = false;
};

/// Runs `hurray` with `args` (args[0] is the program name) and returns its exit status.
/// Never throws.
/// @code
/// std::ostringstream out, err;
/// int rc = hurray::cli::run({"hurray", "ls", "--json", "model.hrry"}, {out, err});
/// @endcode
int run(const std::vector<std::string>& args, const Console& console);

}  // namespace hurray::cli
