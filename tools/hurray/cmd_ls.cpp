// `hurray ls FILE|STREAM [--json]`: one line per tensor, in index (file) or stream order.
#include <algorithm>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "hurray/commands.hpp"
#include "hurray/input.hpp"
#include "hurray/json_out.hpp"
#include "hurray/listing.hpp"

#ifdef HURRAY_CLI_HAS_NET
#include <asio/io_context.hpp>

#include "hurray/net/tensor_client.hpp"
#include "hurray/net_run.hpp"
#include "hurray/net/transport_address.hpp"
#endif

namespace hurray::cli {
namespace {

struct LsOptions {
    std::string path;
    bool json = false;
    RemoteOptions remote;
};

void print_table(const std::vector<ListedTensor>& tensors, std::ostream& out) {
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"NAME", "TYPE", "SHAPE", "LAYOUT", "QUANTIZATION", "BYTES"});
    for (const auto& t : tensors) {
        rows.push_back({printable(t.name), element_type_text(t.descriptor), shape_text(t.descriptor.shape),
                        layout_text(t.descriptor), quantization_text(t.descriptor),
                        std::to_string(data_bytes(t.descriptor))});
    }
    std::vector<size_t> widths(rows[0].size(), 0);
    for (const auto& r : rows) {
        for (size_t c = 0; c < r.size(); ++c) {
            widths[c] = std::max(widths[c], r[c].size());
        }
    }
    for (const auto& r : rows) {
        std::string line;
        for (size_t c = 0; c < r.size(); ++c) {
            if (c + 1 == r.size()) {
                line += std::string(widths[c] - r[c].size(), ' ') + r[c];  // bytes right-aligned
            } else {
                line += r[c] + std::string(widths[c] - r[c].size() + 2, ' ');
            }
        }
        out << line << '\n';
    }
}

/// Prints `j` (its kind and metadata set) with `tensors` as {name, descriptor}
/// objects: the JSON of a listing without file offsets (foreign files, servers).
void print_named_json(nlohmann::ordered_json j, const std::vector<ListedTensor>& tensors, std::ostream& out) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& t : tensors) {
        nlohmann::ordered_json one;
        one["name"] = t.name;
        one["descriptor"] = descriptor_json(t.descriptor);
        list.push_back(std::move(one));
    }
    j["tensors"] = std::move(list);
    out << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
}

#ifdef HURRAY_CLI_HAS_CONVERT
/// `ls` of a SafeTensors, GGUF, .npy or .npz file, read through hurray::convert.
int run_ls_foreign(const LsOptions& o, const Result<ForeignInput>& in, const Console& console) {
    if (!in) {
        const std::string shown = display_path(o.path);  // a URL without credentials or query
        console.err << "hurray ls: " << shown << ": " << unprefixed(shown, in.error()).to_string() << '\n';
        return kExitInvalid;
    }
    const convert::TensorSource& src = *in->source;
    std::vector<ListedTensor> tensors;
    for (size_t i = 0; i < src.tensor_count(); ++i) {
        tensors.push_back(ListedTensor{src.tensor(i).name, src.tensor(i).descriptor, {}});
    }
    if (!o.json) {
        print_table(tensors, console.out);
        return kExitOk;
    }
    nlohmann::ordered_json j;
    j["kind"] = std::string(convert::format_name(in->format));
    j["kv"] = kv_json(src.kv());
    print_named_json(std::move(j), tensors, console.out);
    return kExitOk;
}
#endif

#ifdef HURRAY_CLI_HAS_NET
/// `ls` of a tensor server (hurray serve): its listing, in its order.
int run_ls_server(const LsOptions& o, const Console& console) {
    using Listing = Result<std::vector<net::RemoteTensor>>;
    auto listed = run_on_io<Listing>([&](asio::io_context& io) -> asio::awaitable<Listing> {
        auto client = co_await net::TensorClient::connect(io.get_executor(), o.path);
        if (!client) {
            co_return std::move(client).error();
        }
        co_return co_await (*client)->list();
    });
    if (!listed || !*listed) {
        console.err << "hurray ls: " << o.path << ": "
                    << (listed ? listed->error().to_string() : std::string("no answer")) << '\n';
        return kExitInvalid;
    }
    std::vector<ListedTensor> tensors;
    for (auto& t : **listed) {
        tensors.push_back(ListedTensor{std::move(t.key), std::move(t.descriptor), {}});
    }
    if (!o.json) {
        print_table(tensors, console.out);
        return kExitOk;
    }
    nlohmann::ordered_json j;
    j["kind"] = "server";
    print_named_json(std::move(j), tensors, console.out);
    return kExitOk;
}
#endif

int run_ls(const LsOptions& o, const Console& console) {
#ifdef HURRAY_CLI_HAS_NET
    if (net::is_server_url(o.path)) {
        return run_ls_server(o, console);
    }
#endif
#ifdef HURRAY_CLI_HAS_CONVERT
    if (auto foreign = open_foreign(o.path, o.remote)) {
        return run_ls_foreign(o, *foreign, console);
    }
#endif
    auto in = open_input_or_report(o.path, console, "ls", o.remote);
    if (!in) {
        return kExitInvalid;
    }
    Input& input = *in;
    nlohmann::ordered_json j;
    std::vector<ListedTensor> tensors;
    if (input.kind() == InputKind::kFile) {
        auto listed = open_and_list_file(input);
        if (!listed) {
            console.err << "hurray ls: " << listed.error().message() << '\n';
            return kExitInvalid;
        }
        tensors = std::move(listed->tensors);
        if (o.json) {
            const FileHeader& h = listed->file.header();
            j["kind"] = "file";
            j["container_version"] = {h.version_major, h.version_minor};
            j["flags"] = h.flags;
            j["data_buffer_alignment"] = h.data_buffer_alignment;
            j["kv"] = kv_json(listed->file.kv());
        }
    } else {
        auto listing = list_stream(input.source(), input.stream_options());
        if (!listing) {
            console.err << "hurray ls: " << error_text(input.display_name() + " (stream)", listing.error()) << '\n';
            return kExitInvalid;
        }
        tensors = std::move(listing->tensors);
        if (o.json) {
            j["kind"] = "stream";
        }
    }
    if (o.json) {
        nlohmann::ordered_json list = nlohmann::ordered_json::array();
        for (const auto& t : tensors) {
            list.push_back(tensor_json(t.name, t.descriptor, t.where));
        }
        j["tensors"] = std::move(list);
        console.out << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
    } else {
        print_table(tensors, console.out);
    }
    return kExitOk;
}

}  // namespace

void add_ls(CLI::App& app, const Console& console, int* status) {
    auto opts = std::make_shared<LsOptions>();
    CLI::App* cmd = app.add_subcommand(
        "ls", "List the tensors of an HRRYFILE (index order), a stream (stream order), or a SafeTensors, GGUF, "
              ".npy or .npz file (read through hurray::convert, as it would be converted): name, element type, "
              "shape, layout, quantization scheme, data bytes. Dynamic dimensions print as '?'.");
    cmd->add_option("input", opts->path,
                    "HRRYFILE, stream ('-': standard input), http(s):// or s3:// URL of either, SafeTensors, GGUF, .npy or "
                    ".npz file, or a tensor server (hurray://HOST:PORT, hurray+unix://PATH)")
        ->required();
    cmd->add_flag("--json", opts->json,
                  "print one JSON object: kind, container_version, flags, data_buffer_alignment, kv, tensors "
                  "(streams: kind and tensors only, named tensor_0, tensor_1, ...)");
    add_remote_options(cmd, opts->remote);
    cmd->footer("Exit status: 0 listed, 1 invalid or unreadable input, 2 usage error.");
    cmd->callback([&console, status, opts] { *status = run_ls(*opts, console); });
}

}  // namespace hurray::cli
