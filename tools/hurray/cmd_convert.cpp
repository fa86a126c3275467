// `hurray convert`: placeholder until the command is written.
#include "hurray/commands.hpp"

namespace hurray::cli {

void add_convert(CLI::App& app, const Console& console, int* status) {
    CLI::App* cmd = app.add_subcommand("convert", "(not implemented yet)");
    cmd->callback([&console, status] {
        console.err << "hurray convert: not implemented yet\n";
        *status = kExitUsage;
    });
}

}  // namespace hurray::cli
