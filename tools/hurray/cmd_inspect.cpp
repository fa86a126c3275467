// `hurray inspect`: placeholder until the command is written.
#include "hurray/commands.hpp"

namespace hurray::cli {

void add_inspect(CLI::App& app, const Console& console, int* status) {
    CLI::App* cmd = app.add_subcommand("inspect", "(not implemented yet)");
    cmd->callback([&console, status] {
        console.err << "hurray inspect: not implemented yet\n";
        *status = kExitUsage;
    });
}

}  // namespace hurray::cli
