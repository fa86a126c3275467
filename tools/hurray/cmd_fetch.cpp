// `hurray fetch ADDR [KEY...] -o OUT.hrry`: fetches tensors from a tensor server
// (`hurray serve`) into an HRRYFILE, each streamed from the socket into the file
// (bounded memory), the file committed atomically at the end.
#include <asio/io_context.hpp>

#include <algorithm>
#include <memory>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "hurray/commands.hpp"
#include "hurray/core/layout.hpp"
#include "hurray/interrupt.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/net/remote_listing.hpp"
#include "hurray/net/tensor_client.hpp"
#include "hurray/net_run.hpp"

namespace hurray::cli {
namespace {

struct FetchCmdOptions {
    std::string address;
    std::vector<std::string> keys;
    std::string output;
    std::vector<std::string> layouts;
    bool transcode = false;
    bool dequantize = false;
};

/// The layout tag called `name` ("row_major", "csr", ...; '-' and '_' alike), or 0.
uint8_t layout_tag_named(std::string name) {
    std::replace(name.begin(), name.end(), '-', '_');
    for (unsigned t = 1; t < 0xF0; ++t) {
        if (layout_name(static_cast<uint8_t>(t)) == name) {
            return static_cast<uint8_t>(t);
        }
    }
    return 0;
}

// GCC 12 at -O1 with ASan, inlining this coroutine's frame allocation into its caller,
// reads Asio's class-specific frame operator delete (which frees what its operator new
// took from aligned_alloc) as a mismatched new/delete: a false positive, silenced here only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
asio::awaitable<int> fetch_all(asio::io_context& io, const FetchCmdOptions& o, const Console& console) {
    auto client = co_await net::TensorClient::connect(io.get_executor(), o.address);
    if (!client) {
        console.err << "hurray fetch: " << o.address << ": " << client.error().to_string() << '\n';
        co_return kExitInvalid;
    }
    auto listed = co_await (*client)->list();
    if (!listed) {
        console.err << "hurray fetch: " << o.address << ": listing: " << listed.error().to_string() << '\n';
        co_return kExitInvalid;
    }
    const net::RemoteListing listing(std::move(*listed));
    std::vector<size_t> wanted;
    if (o.keys.empty()) {
        wanted = listing.top_level();
    } else {
        for (const std::string& key : o.keys) {
            auto i = listing.find(key);
            if (!i) {
                console.err << "hurray fetch: " << o.address << ": no tensor '" << key << "'\n";
                co_return kExitInvalid;
            }
            if (auto head = listing.head_of(*i)) {
                console.err << "hurray fetch: '" << key << "' is a member of composite '" << listing.at(*head).key
                            << "': fetch the composite\n";
                co_return kExitInvalid;
            }
            wanted.push_back(*i);
        }
    }
    net::FetchOptions fo;
    for (const std::string& name : o.layouts) {
        const uint8_t tag = layout_tag_named(name);
        if (tag == 0) {
            console.err << "hurray fetch: unknown layout '" << name << "' (row_major, column_major, csr, ...)\n";
            co_return kExitUsage;
        }
        fo.preferred_layouts.push_back(tag);
    }
    fo.allow_transcode = o.transcode;
    fo.dequantize = o.dequantize;
    auto writer = FileWriter::create_file(o.output);
    if (!writer) {
        console.err << "hurray fetch: " << o.output << ": " << writer.error().to_string() << '\n';
        co_return kExitInvalid;
    }
    uint64_t tensors = 0;
    uint64_t bytes = 0;
    for (size_t top : wanted) {
        const std::vector<size_t> names = listing.subtree(top);  // the tensors the answer holds, in order
        size_t next = 0;
        net::FetchHandler h;
        h.on_descriptor = [&](const TensorDescriptor& d, std::span<const uint8_t>, const DescriptorTransport&) -> Status {
            if (next >= names.size()) {
                return Error(ErrorCode::kInvalidData, "server: more tensors than its listing announced for '" +
                                                          listing.at(top).key + "'");
            }
            return writer->begin_tensor(listing.at(names[next++]).key, d);
        };
        h.on_data = [&](std::span<const uint8_t> piece) -> Status {
            if (interrupted_by() != 0) {
                return Error(ErrorCode::kCancelled, "interrupted");
            }
            bytes += piece.size();
            return writer->write_data(piece);
        };
        h.on_end = [&]() -> Status { return writer->end_tensor(); };
        auto n = co_await (*client)->fetch_into(listing.at(top).key, h, fo);
        if (!n) {
            if (n.error().code() == ErrorCode::kCancelled && interrupted_by() != 0) {
                console.err << "hurray fetch: interrupted; " << o.output << " was not written\n";
                co_return interrupted_exit_code();
            }
            console.err << "hurray fetch: '" << listing.at(top).key << "': " << n.error().to_string() << '\n';
            co_return kExitInvalid;
        }
        tensors += *n;
    }
    if (Status s = writer->finish(); !s) {
        console.err << "hurray fetch: " << o.output << ": " << s.error().to_string() << '\n';
        co_return kExitInvalid;
    }
    console.err << "hurray fetch: " << tensors << (tensors == 1 ? " tensor, " : " tensors, ") << bytes << " data bytes from " << o.address << " into "
                << o.output << '\n';
    co_return kExitOk;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

int run_fetch(const FetchCmdOptions& o, const Console& console) {
    InterruptGuard guard;
    const auto rc = run_on_io<int>([&](asio::io_context& io) { return fetch_all(io, o, console); });
    if (!rc) {
        console.err << "hurray fetch: unexpected failure\n";
    }
    return rc.value_or(kExitInvalid);
}

}  // namespace

void add_fetch(CLI::App& app, const Console& console, int* status) {
    auto opts = std::make_shared<FetchCmdOptions>();
    CLI::App* cmd = app.add_subcommand(
        "fetch", "Fetch tensors from a tensor server (hurray serve) into an HRRYFILE: the KEYs given (a composite "
                 "with its members), or every tensor. Data streams from the socket into the file; the file appears "
                 "only when complete.");
    cmd->add_option("address", opts->address, "the server: hurray://HOST:PORT, HOST:PORT or unix:PATH")->required();
    cmd->add_option("keys", opts->keys, "tensor names (default: all)");
    cmd->add_option("-o,--output", opts->output, "the HRRYFILE to write")->required();
    cmd->add_option("--layout", opts->layouts,
                    "preferred layout, repeatable, most preferred first (row_major, column_major, csr, ...)");
    cmd->add_flag("--transcode", opts->transcode,
                  "let the server transcode to a preferred layout (hurray serve produces row_major, column_major, "
                  "strided and tiled from any unquantized tensor)");
    cmd->add_flag("--dequantize", opts->dequantize,
                  "ask for quantized tensors as their float32 values, row-major (a hurray serve extension; "
                  "implies --transcode)");
    cmd->footer("Exit status: 0 fetched, 1 the server or a tensor failed (nothing written), 2 usage error, "
                "130/143 interrupted.");
    cmd->callback([&console, status, opts] { *status = run_fetch(*opts, console); });
}

}  // namespace hurray::cli
