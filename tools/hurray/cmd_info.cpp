// `hurray info`: placeholder until the command is written.
#include "hurray/commands.hpp"

namespace hurray::cli {

void add_info(CLI::App& app, const Console& console, int* status) {
    CLI::App* cmd = app.add_subcommand("info", "(not implemented yet)");
    cmd->callback([&console, status] {
        console.err << "hurray info: not implemented yet\n";
        *status = kExitUsage;
    });
}

}  // namespace hurray::cli
