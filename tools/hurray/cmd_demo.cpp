// `hurray demo`: placeholder until the command is written.
#include "hurray/commands.hpp"

namespace hurray::cli {

void add_demo(CLI::App& app, const Console& console, int* status) {
    CLI::App* cmd = app.add_subcommand("demo", "(not implemented yet)");
    cmd->callback([&console, status] {
        console.err << "hurray demo: not implemented yet\n";
        *status = kExitUsage;
    });
}

}  // namespace hurray::cli
