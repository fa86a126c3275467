// `hurray ls`: placeholder until the command is written.
#include "hurray/commands.hpp"

namespace hurray::cli {

void add_ls(CLI::App& app, const Console& console, int* status) {
    CLI::App* cmd = app.add_subcommand("ls", "(not implemented yet)");
    cmd->callback([&console, status] {
        console.err << "hurray ls: not implemented yet\n";
        *status = kExitUsage;
    });
}

}  // namespace hurray::cli
