#pragma once
/// @file
/// Registration of each `hurray` subcommand (one source file per command).
///
/// Each add_* function adds one subcommand to `app`. Its callback runs the command and
/// stores the exit status in `*status` (kExitOk / kExitInvalid); it writes results to
/// console.out and every error to console.err. Commands never throw out of the callback
/// except CLI11's own parse errors (turned into kExitUsage by run()).

#include <CLI/CLI.hpp>

#include "hurray/cli.hpp"

namespace hurray::cli {

/// `hurray inspect PATH|-`: annotated dump of a descriptor, stream or HRRYFILE.
void add_inspect(CLI::App& app, const Console& console, int* status);
/// `hurray ls FILE|STREAM [--json]`: one line (or JSON object) per tensor.
void add_ls(CLI::App& app, const Console& console, int* status);
/// `hurray info FILE [--json]`: header, flags, alignment, KV metadata, counts, sizes.
void add_info(CLI::App& app, const Console& console, int* status);
/// `hurray verify FILE|STREAM`: structural and data-level checks.
void add_verify(CLI::App& app, const Console& console, int* status);
/// `hurray convert IN OUT`: file <-> stream, re-alignment, index order.
void add_convert(CLI::App& app, const Console& console, int* status);
/// `hurray cat FILE NAME`: values printed like NumPy.
void add_cat(CLI::App& app, const Console& console, int* status);
/// `hurray get URL [NAME...] -o OUT`: downloads an HRRYFILE, or some of its tensors.
void add_get(CLI::App& app, const Console& console, int* status);
/// `hurray demo [DIR]`: writes, lists, verifies and streams a model-like file.
void add_demo(CLI::App& app, const Console& console, int* status);
#ifdef HURRAY_CLI_HAS_NET
void add_serve(CLI::App& app, const Console& console, int* status);
void add_fetch(CLI::App& app, const Console& console, int* status);
void add_push(CLI::App& app, const Console& console, int* status);
#endif

}  // namespace hurray::cli
