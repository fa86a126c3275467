// `hurray cat`: placeholder until the command is written.
#include "hurray/commands.hpp"

namespace hurray::cli {

void add_cat(CLI::App& app, const Console& console, int* status) {
    CLI::App* cmd = app.add_subcommand("cat", "(not implemented yet)");
    cmd->callback([&console, status] {
        console.err << "hurray cat: not implemented yet\n";
        *status = kExitUsage;
    });
}

}  // namespace hurray::cli
