// SPDX-License-Identifier: Apache-2.0
// Servers for the HTTP tests, started and stopped by the tests themselves on
// 127.0.0.1: a child-process handle, free ports, and nginx with a generated
// configuration (its own pid, logs and temporary paths in a temporary
// directory) serving one directory. Shared by the hurray::http tests and
// the `hurray` tool's tests on URLs.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

extern char** environ;  // NOLINT

namespace hurray::test {

/// A child process (a server), killed and reaped when this goes away.
class Child {
public:
    Child() = default;
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    ~Child() { stop(); }

    /// Starts argv[0] (a path) with stdin and stdout on pipes.
    bool start(const std::vector<std::string>& argv) {
        int in[2];
        int out[2];
        if (::pipe(in) != 0 || ::pipe(out) != 0) {
            return false;
        }
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, in[0], 0);
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
        posix_spawn_file_actions_addclose(&fa, in[1]);
        posix_spawn_file_actions_addclose(&fa, out[0]);
        std::vector<char*> args;
        for (const std::string& a : argv) {
            args.push_back(const_cast<char*>(a.c_str()));
        }
        args.push_back(nullptr);
        const int rc = ::posix_spawn(&pid_, argv[0].c_str(), &fa, nullptr, args.data(), environ);
        posix_spawn_file_actions_destroy(&fa);
        ::close(in[0]);
        ::close(out[1]);
        stdin_ = in[1];
        stdout_ = out[0];
        if (rc != 0) {
            pid_ = -1;
            return false;
        }
        return true;
    }

    /// The first line the child prints, waiting at most `limit`.
    std::string read_line(std::chrono::milliseconds limit) {
        std::string line;
        const auto until = std::chrono::steady_clock::now() + limit;
        while (std::chrono::steady_clock::now() < until) {
            pollfd p{stdout_, POLLIN, 0};
            if (::poll(&p, 1, 100) <= 0) {
                continue;
            }
            char c = 0;
            if (::read(stdout_, &c, 1) != 1) {
                break;
            }
            if (c == '\n') {
                return line;
            }
            line.push_back(c);
        }
        return {};
    }

    [[nodiscard]] bool running() {
        if (pid_ <= 0) {
            return false;
        }
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            return false;
        }
        return true;
    }

    /// The process id (-1 when not running).
    [[nodiscard]] pid_t pid() const noexcept { return pid_; }

    /// Waits at most `limit` for the child to exit; its exit status (128 + N when
    /// killed by signal N), or -1 when it is still running (then stop() kills it).
    int wait_exit(std::chrono::milliseconds limit) {
        const auto until = std::chrono::steady_clock::now() + limit;
        while (pid_ > 0) {
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            }
            if (std::chrono::steady_clock::now() >= until) {
                return -1;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return -1;
    }

    /// SIGTERM, then SIGKILL after 5 s; always reaped.
    void stop() {
        if (stdin_ >= 0) {
            ::close(stdin_);
            stdin_ = -1;
        }
        if (pid_ > 0) {
            ::kill(pid_, SIGTERM);
            int status = 0;
            for (int i = 0; i < 100; ++i) {
                if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                    pid_ = -1;
                    break;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
            if (pid_ > 0) {
                ::kill(pid_, SIGKILL);
                ::waitpid(pid_, &status, 0);
                pid_ = -1;
            }
        }
        if (stdout_ >= 0) {
            ::close(stdout_);
            stdout_ = -1;
        }
    }

private:
    pid_t pid_ = -1;
    int stdin_ = -1;
    int stdout_ = -1;
};

/// A port of 127.0.0.1 free a moment ago.
inline int free_port() {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof(a);
    int port = 0;
    if (::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
        ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
        port = ntohs(a.sin_port);
    }
    ::close(s);
    return port;
}

inline bool accepts(int port) {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    const bool ok = ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    ::close(s);
    return ok;
}

inline void no_proxies() {
    for (const char* v : {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"}) {
        ::unsetenv(v);
    }
}

/// Starts `script` (tests/http/fault_server.py) with /usr/bin/python3 on
/// `child`, serving `root`, and returns the port it prints. 0, with `why`
/// set (for GTEST_SKIP), when /usr/bin/python3 is missing or the server
/// prints no port within 10 s; -1 when the process could not be spawned.
inline int start_fault_server(Child& child, const std::string& script, const std::string& root,
                              std::string& why) {
    if (::access("/usr/bin/python3", X_OK) != 0) {
        why = "/usr/bin/python3 is missing";
        return 0;
    }
    if (!child.start({"/usr/bin/python3", script, root})) {
        return -1;
    }
    const std::string port = child.read_line(std::chrono::seconds(10));
    if (port.empty()) {
        why = "tests/http/fault_server.py did not start";
        return 0;
    }
    return std::stoi(port);
}

/// nginx serving one directory on a free port of 127.0.0.1 (`daemon off`,
/// `master_process off`, one worker), its configuration, pid, logs and
/// temporary paths in a directory of its own; stopped by `stop` or the
/// destructor.
class NginxServer {
public:
    NginxServer() = default;
    NginxServer(const NginxServer&) = delete;
    NginxServer& operator=(const NginxServer&) = delete;
    ~NginxServer() { stop(); }

    /// Starts nginx serving `root`; `extra_http` is inserted in the http
    /// block (e.g. "large_client_header_buffers 4 1m;"). Returns an empty
    /// string when it accepts connections, else why not (for GTEST_SKIP:
    /// nginx is missing or could not start).
    std::string start(const std::filesystem::path& root, const std::string& extra_http = {}) {
        std::string nginx;
        for (const char* p : {"/usr/sbin/nginx", "/usr/bin/nginx"}) {
            if (::access(p, X_OK) == 0) {
                nginx = p;
                break;
            }
        }
        if (nginx.empty()) {
            return "nginx is not installed (Debian package nginx; scripts/bootstrap.sh installs it)";
        }
        char tmpl[] = "/tmp/hurray-nginx-XXXXXX";
        if (::mkdtemp(tmpl) == nullptr) {
            return "no temporary directory for nginx";
        }
        dir_ = tmpl;
        std::filesystem::create_directories(dir_ / "tmp");
        port_ = free_port();
        const std::string d = dir_.string();
        const std::string conf = "daemon off;\nmaster_process off;\nworker_processes 1;\npid " + d +
                                 "/nginx.pid;\nerror_log " + d +
                                 "/error.log;\nevents { worker_connections 256; }\nhttp {\n"
                                 "  access_log off;\n  default_type application/octet-stream;\n"
                                 "  client_body_temp_path " + d + "/tmp/body;\n  proxy_temp_path " + d +
                                 "/tmp/proxy;\n  fastcgi_temp_path " + d + "/tmp/fastcgi;\n  uwsgi_temp_path " + d +
                                 "/tmp/uwsgi;\n  scgi_temp_path " + d + "/tmp/scgi;\n  " + extra_http +
                                 "\n  server {\n    listen 127.0.0.1:" + std::to_string(port_) + ";\n    root " +
                                 root.string() + ";\n  }\n}\n";
        {
            std::ofstream out(dir_ / "nginx.conf");
            out << conf;
        }
        if (!server_.start({nginx, "-p", d, "-c", d + "/nginx.conf", "-e", d + "/error.log"})) {
            return "nginx could not be started";
        }
        for (int i = 0; i < 100 && !accepts(port_); ++i) {
            if (!server_.running()) {
                std::ifstream log(dir_ / "error.log");
                return "nginx exited: " + std::string(std::istreambuf_iterator<char>(log), {});
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        if (!accepts(port_)) {
            return "nginx does not accept connections on port " + std::to_string(port_);
        }
        return {};
    }

    /// Stops nginx and removes its directory.
    void stop() {
        server_.stop();
        if (!dir_.empty()) {
            std::error_code ec;
            std::filesystem::remove_all(dir_, ec);
            dir_.clear();
        }
    }

    /// The port it listens on.
    [[nodiscard]] int port() const noexcept { return port_; }
    /// "http://127.0.0.1:PORT/" + `name`.
    [[nodiscard]] std::string url(const std::string& name) const {
        return "http://127.0.0.1:" + std::to_string(port_) + "/" + name;
    }

private:
    std::filesystem::path dir_;
    Child server_;
    int port_ = 0;
};

}  // namespace hurray::test
