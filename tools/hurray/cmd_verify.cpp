// `hurray verify`: placeholder until the command is written.
#include "hurray/commands.hpp"

namespace hurray::cli {

void add_verify(CLI::App& app, const Console& console, int* status) {
    CLI::App* cmd = app.add_subcommand("verify", "(not implemented yet)");
    cmd->callback([&console, status] {
        console.err << "hurray verify: not implemented yet\n";
        *status = kExitUsage;
    });
}

}  // namespace hurray::cli
