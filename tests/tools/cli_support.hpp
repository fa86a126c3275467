// Test support for the `hurray` tool: running it in-process (through hurray::cli::run) and as a
// process (HURRAY_CLI_PATH, for standard input and exit statuses); files and temporary
// directories come from tests/io/io_test_util.hpp.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "hurray/cli.hpp"
#include "hurray/demo_model.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/stream_convert.hpp"
#include "io_test_util.hpp"
#include "test_paths.hpp"

namespace hurray::clitest {

/// What a command printed and returned.
struct Ran {
    int rc = -1;
    std::string out;
    std::string err;
};

/// Runs `hurray args...` in-process; `stdin_fd` is read for `-`.
inline Ran run_cli(std::vector<std::string> args, int stdin_fd = 0) {
    args.insert(args.begin(), "hurray");
    std::ostringstream out;
    std::ostringstream err;
    const int rc = hurray::cli::run(args, {out, err, stdin_fd, false});
    return {rc, out.str(), err.str()};
}

// Files and the temporary directory are the io tests' helpers (tests/io/io_test_util.hpp).
using hurray::test::read_all;
using hurray::test::TempDir;
using hurray::test::write_all_file;

/// Writes the characters of `bytes` to `path`, replacing it.
inline void write_all_file(const std::string& path, const std::string& bytes) {
    write_all_file(path, std::vector<uint8_t>(bytes.begin(), bytes.end()));
}

/// Runs `command` through the shell with its standard output and error sent to files in
/// `dir`; returns its exit status and what it printed.
inline Ran run_shell(const std::string& command, const TempDir& dir) {
    const std::string out = dir.file("proc.out");
    const std::string err = dir.file("proc.err");
    const std::string cmd = command + " > '" + out + "' 2> '" + err + "'";
    const int status = std::system(cmd.c_str());
    Ran r;
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    const auto o = read_all(out);
    const auto e = read_all(err);
    r.out.assign(o.begin(), o.end());
    r.err.assign(e.begin(), e.end());
    return r;
}

/// Runs the `hurray` executable through the shell: `hurray <args>` with standard input
/// from `stdin_path` (none: /dev/null); returns its exit status and what it printed.
inline Ran run_process(const std::string& args, const std::string& stdin_path, const TempDir& dir) {
    return run_shell(std::string("'") + HURRAY_CLI_PATH + "' " + args + " < '" +
                         (stdin_path.empty() ? std::string("/dev/null") : stdin_path) + "'",
                     dir);
}

/// Runs `<producer> | hurray <args>` through the shell: standard input is a real pipe.
inline Ran run_piped(const std::string& producer, const std::string& args, const TempDir& dir) {
    return run_shell(producer + " | '" + HURRAY_CLI_PATH + "' " + args, dir);
}

/// The HRRYFILE at `path` as a stream (file_to_stream); empty, with a test failure, when it
/// cannot be opened or converted.
inline std::vector<uint8_t> stream_of(const std::string& path) {
    auto file = FileReader::open(path);
    if (!file) {
        ADD_FAILURE() << path << ": " << file.error().to_string();
        return {};
    }
    MemorySink sink;
    if (auto s = file_to_stream(*file, sink); !s) {
        ADD_FAILURE() << path << ": " << s.error().to_string();
        return {};
    }
    return std::move(sink).take();
}

/// Writes the demo model to `dir`/model.hrry and returns it as a stream (empty, with a test
/// failure, when either step fails).
inline std::vector<uint8_t> demo_stream(const TempDir& dir) {
    const std::string path = dir.file("model.hrry");
    if (auto s = cli::write_demo_model(path); !s) {
        ADD_FAILURE() << path << ": " << s.error().to_string();
        return {};
    }
    return stream_of(path);
}

/// The conformance file basic.hrry.
inline std::string basic_file() {
    // Built by append: GCC 12 at -O3 reports a false -Warray-bounds for
    // `std::string(literal) + literal` here.
    std::string path = HURRAY_CONFORMANCE_DIR;
    path.append("/files/basic.hrry");
    return path;
}

}  // namespace hurray::clitest
