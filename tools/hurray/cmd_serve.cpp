// `hurray serve FILE... [--listen ADDR]...`: serves the tensors of HRRYFILEs over the
// Hurray network transport protocol (hurray::net::TensorServer) until SIGINT or SIGTERM,
// then stops gracefully (transfers in flight finish, new requests are refused).
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <asio/thread_pool.hpp>

#include <algorithm>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "hurray/commands.hpp"
#include "hurray/interrupt.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/net/tensor_server.hpp"
#include "hurray/net/transport_address.hpp"

namespace hurray::cli {
namespace {

struct ServeOptions {
    std::vector<std::string> files;
    std::vector<std::string> listen;
    size_t max_clients = 64;
    uint32_t max_message_size = 1U << 20;
    unsigned threads = 0;
    double idle_timeout = 120;
    uint64_t transcode_limit_mib = 1024;
    std::string accept_put;
};

/// Polls for SIGINT/SIGTERM (recorded by InterruptGuard) and stops the server.
void watch_signals(asio::steady_timer& timer, net::TensorServer& server) {
    timer.expires_after(std::chrono::milliseconds(100));
    timer.async_wait([&timer, &server](const std::error_code& ec) {
        if (ec) {
            return;
        }
        if (interrupted_by() != 0) {
            server.stop();
            return;
        }
        watch_signals(timer, server);
    });
}

int run_serve(const ServeOptions& o, const Console& console) {
    std::vector<std::shared_ptr<const FileReader>> files;
    for (const std::string& path : o.files) {
        auto f = FileReader::open(path);
        if (!f) {
            console.err << "hurray serve: " << path << ": " << f.error().to_string() << '\n';
            return kExitInvalid;
        }
        files.push_back(std::make_shared<const FileReader>(std::move(*f)));
    }
    const unsigned threads = o.threads != 0 ? o.threads : std::clamp(std::thread::hardware_concurrency(), 1U, 4U);
    // The acceptors and the signal watch on `io`; the connections spread over
    // one io_context per thread (no scheduler shared between the threads).
    asio::io_context io(1);
    std::vector<std::unique_ptr<asio::io_context>> connection_ios;
    asio::thread_pool transcode_pool(2);
    net::ServerOptions so;
    for (unsigned i = 0; i < threads; ++i) {
        connection_ios.push_back(std::make_unique<asio::io_context>(1));
        so.connection_executors.push_back(connection_ios.back()->get_executor());
    }
    so.max_clients = o.max_clients;
    so.max_message_size = o.max_message_size;
    so.idle_timeout = std::chrono::milliseconds(static_cast<int64_t>(o.idle_timeout * 1000));
    so.transcode_memory_limit = o.transcode_limit_mib << 20;
    so.transcode = transcode_pool.get_executor();
    so.put_directory = o.accept_put;
    auto server = net::TensorServer::create(io.get_executor(), files, so);
    if (!server) {
        console.err << "hurray serve: " << server.error().to_string() << '\n';
        return kExitInvalid;
    }
    InterruptGuard guard;
    std::vector<std::string> addresses = o.listen;
    if (addresses.empty()) {
        addresses.push_back("127.0.0.1:" + std::to_string(net::kDefaultServerPort));
    }
    for (const std::string& a : addresses) {
        auto bound = (*server)->listen(a);
        if (!bound) {
            console.err << "hurray serve: " << bound.error().to_string() << '\n';
            (*server)->stop();
            io.run();
            return kExitInvalid;
        }
        console.out << *bound << std::endl;  // one bound address per line, for scripts
    }
    console.err << "hurray serve: serving " << (*server)->keys().size() << " tensors from " << files.size()
                << (files.size() == 1 ? " file" : " files") << "; SIGINT or SIGTERM stops\n";
    asio::steady_timer signals(io);
    watch_signals(signals, **server);
    std::vector<asio::executor_work_guard<asio::io_context::executor_type>> busy;
    std::vector<std::thread> workers;
    for (auto& cio : connection_ios) {
        busy.push_back(asio::make_work_guard(*cio));
        workers.emplace_back([&cio] { cio->run(); });
    }
    io.run();      // returns once stopped: the acceptors are closed
    busy.clear();  // the connections finish the transfers in flight, then their threads end
    for (auto& t : workers) {
        t.join();
    }
    transcode_pool.join();
    const net::ServerStats s = (*server)->stats();
    console.err << "hurray serve: stopped after " << s.connections_accepted << " connections, " << s.requests
                << " requests, " << s.data_bytes_sent << " data bytes sent\n";
    return kExitOk;
}

}  // namespace

void add_serve(CLI::App& app, const Console& console, int* status) {
    auto opts = std::make_shared<ServeOptions>();
    CLI::App* cmd = app.add_subcommand(
        "serve", "Serve the tensors of HRRYFILEs, read-only, over the Hurray network transport protocol "
                 "(docs/server.md) until SIGINT or SIGTERM; clients: hurray fetch, hurray ls hurray://ADDR. "
                 "Plain TCP: it listens on loopback unless told otherwise.");
    cmd->add_option("files", opts->files, "HRRYFILEs whose tensors are served under their names")->required();
    cmd->add_option("--listen", opts->listen,
                    "address to listen on, repeatable: HOST:PORT, :PORT, [IPV6]:PORT or unix:PATH "
                    "(default 127.0.0.1:" + std::to_string(net::kDefaultServerPort) +
                        "; port 0 picks a free one). Each bound address is printed on standard output.");
    cmd->add_option("--max-clients", opts->max_clients, "connections served at once (more are answered SERVER_BUSY)")
        ->check(CLI::Range(size_t{1}, size_t{1} << 20));
    cmd->add_option("--max-message-size", opts->max_message_size,
                    "largest message payload accepted from a client, in bytes (requests are small)")
        ->check(CLI::Range(uint32_t{64}, UINT32_MAX));
    cmd->add_option("--threads", opts->threads, "I/O threads (default: up to 4)")->check(CLI::Range(1U, 256U));
    cmd->add_option("--idle-timeout", opts->idle_timeout, "seconds a silent connection is kept")
        ->check(CLI::Range(0.001, 1e6));
    cmd->add_option("--transcode-limit", opts->transcode_limit_mib,
                    "MiB of transcoded tensors held at once over all clients (default 1024)")
        ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 30));
    cmd->add_option("--accept-put", opts->accept_put,
                    "accept uploads (hurray push, TENSOR_PUT) into this directory: one HRRYFILE per tensor, "
                    "KEY.hrry, written atomically and durably before the upload is acknowledged")
        ->check(CLI::ExistingDirectory);
    cmd->footer("Exit status: 0 stopped by a signal, 1 a file could not be opened or an address not bound, "
                "2 usage error.");
    cmd->callback([&console, status, opts] { *status = run_serve(*opts, console); });
}

}  // namespace hurray::cli
