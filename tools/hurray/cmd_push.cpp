// `hurray push ADDR FILE [NAME...]`: uploads tensors of an HRRYFILE to a tensor server
// started with `hurray serve --accept-put DIR` (TENSOR_PUT), each acknowledged once the
// server has stored it.
#include <asio/io_context.hpp>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "hurray/commands.hpp"
#include "hurray/interrupt.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/net/tensor_client.hpp"
#include "hurray/net_run.hpp"

namespace hurray::cli {
namespace {

struct PushOptions {
    std::string address;
    std::string file;
    std::vector<std::string> names;
};

asio::awaitable<int> push_all(asio::io_context& io, const PushOptions& o, const FileReader& file,
                              const std::vector<size_t>& which, const Console& console) {
    auto client = co_await net::TensorClient::connect(io.get_executor(), o.address);
    if (!client) {
        console.err << "hurray push: " << o.address << ": " << client.error().to_string() << '\n';
        co_return kExitInvalid;
    }
    uint64_t bytes = 0;
    for (size_t i : which) {
        auto t = file.tensor(i);
        if (!t) {
            console.err << "hurray push: " << o.file << ": " << t.error().to_string() << '\n';
            co_return kExitInvalid;
        }
        std::vector<std::span<const uint8_t>> spans;
        for (const SharedBuffer& b : t->buffers()) {
            spans.push_back(b.span());
            bytes += b.size();
        }
        if (interrupted_by() != 0) {
            console.err << "hurray push: interrupted\n";
            co_return interrupted_exit_code();
        }
        Status s = co_await (*client)->put(std::string(t->name()), t->descriptor(), spans);
        if (!s) {
            console.err << "hurray push: '" << t->name() << "': " << s.error().to_string() << '\n';
            co_return kExitInvalid;
        }
    }
    console.err << "hurray push: " << which.size() << (which.size() == 1 ? " tensor, " : " tensors, ") << bytes
                << " data bytes to " << o.address << '\n';
    co_return kExitOk;
}

int run_push(const PushOptions& o, const Console& console) {
    auto file = FileReader::open(o.file);
    if (!file) {
        console.err << "hurray push: " << o.file << ": " << file.error().to_string() << '\n';
        return kExitInvalid;
    }
    std::vector<size_t> which;
    auto pushable = [&](size_t i) -> bool {
        auto d = file->descriptor(i);
        if (!d) {
            console.err << "hurray push: " << o.file << ": " << d.error().to_string() << '\n';
            return false;
        }
        if ((*d)->layout_tag() == static_cast<uint8_t>(LayoutTag::kComposite) || (*d)->composite_member) {
            console.err << "hurray push: '" << file->entry(i).name
                        << "' belongs to a composite; composites cannot be uploaded yet\n";
            return false;
        }
        return true;
    };
    if (o.names.empty()) {
        for (size_t i : file->write_order()) {
            if (!pushable(i)) {
                return kExitInvalid;
            }
            which.push_back(i);
        }
    } else {
        for (const std::string& name : o.names) {
            auto i = file->find(name);
            if (!i) {
                console.err << "hurray push: " << o.file << ": no tensor '" << name << "'\n";
                return kExitInvalid;
            }
            if (!pushable(*i)) {
                return kExitInvalid;
            }
            which.push_back(*i);
        }
    }
    InterruptGuard guard;
    const auto rc = run_on_io<int>([&](asio::io_context& io) { return push_all(io, o, *file, which, console); });
    if (!rc) {
        console.err << "hurray push: unexpected failure\n";
    }
    return rc.value_or(kExitInvalid);
}

}  // namespace

void add_push(CLI::App& app, const Console& console, int* status) {
    auto opts = std::make_shared<PushOptions>();
    CLI::App* cmd = app.add_subcommand(
        "push", "Upload tensors of an HRRYFILE (the NAMEs, or all) to a tensor server started with "
                "hurray serve --accept-put DIR; each is acknowledged once the server has stored it.");
    cmd->add_option("address", opts->address, "the server: hurray://HOST:PORT, HOST:PORT or unix:PATH")->required();
    cmd->add_option("file", opts->file, "the HRRYFILE")->required();
    cmd->add_option("names", opts->names, "tensor names (default: all)");
    cmd->footer("Exit status: 0 every tensor acknowledged, 1 a tensor was refused or the transfer failed, "
                "2 usage error, 130/143 interrupted.");
    cmd->callback([&console, status, opts] { *status = run_push(*opts, console); });
}

}  // namespace hurray::cli
