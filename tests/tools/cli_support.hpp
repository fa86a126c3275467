// Test support for the `hurray` tool: running it in-process (through hurray::cli::run) and as a
// process (HURRAY_CLI_PATH, for standard input and exit statuses), temporary directories, files.
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

inline std::vector<uint8_t> read_bytes(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
    write_bytes(path, std::vector<uint8_t>(bytes.begin(), bytes.end()));
}

/// A fresh directory under /tmp, removed with everything in it.
class TempDir {
public:
    TempDir() {
        std::string tmpl = "/tmp/hurray-cli-test-XXXXXX";
        if (::mkdtemp(tmpl.data()) == nullptr) {
            throw std::runtime_error("mkdtemp failed");
        }
        path_ = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    [[nodiscard]] std::string path(const std::string& name) const { return path_ + "/" + name; }
    [[nodiscard]] const std::string& dir() const { return path_; }

private:
    std::string path_;
};

/// Runs the `hurray` executable through the shell: `hurray <args>` with standard input
/// from `stdin_path` (none: /dev/null); returns its exit status and what it printed.
inline Ran run_process(const std::string& args, const std::string& stdin_path, const TempDir& dir) {
    const std::string out = dir.path("proc.out");
    const std::string err = dir.path("proc.err");
    const std::string cmd = std::string("'") + HURRAY_CLI_PATH + "' " + args + " < '" +
                            (stdin_path.empty() ? std::string("/dev/null") : stdin_path) + "' > '" + out + "' 2> '" +
                            err + "'";
    const int status = std::system(cmd.c_str());
    Ran r;
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    const auto o = read_bytes(out);
    const auto e = read_bytes(err);
    r.out.assign(o.begin(), o.end());
    r.err.assign(e.begin(), e.end());
    return r;
}

/// Runs `<producer> | hurray <args>` through the shell: standard input is a real pipe.
inline Ran run_piped(const std::string& producer, const std::string& args, const TempDir& dir) {
    const std::string out = dir.path("proc.out");
    const std::string err = dir.path("proc.err");
    const std::string cmd = producer + " | '" + HURRAY_CLI_PATH + "' " + args + " > '" + out + "' 2> '" + err + "'";
    const int status = std::system(cmd.c_str());
    Ran r;
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    const auto o = read_bytes(out);
    const auto e = read_bytes(err);
    r.out.assign(o.begin(), o.end());
    r.err.assign(e.begin(), e.end());
    return r;
}

/// The conformance file basic.hrry.
inline std::string basic_file() { return std::string(HURRAY_CONFORMANCE_DIR) + "/files/basic.hrry"; }

}  // namespace hurray::clitest
