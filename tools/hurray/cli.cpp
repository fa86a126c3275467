#include "hurray/cli.hpp"

#include <exception>
#include <string>
#include <ostream>

#include "hurray/commands.hpp"
#include "hurray/core/error_table.hpp"

namespace hurray::cli {

int exit_code_of(const Error& e) noexcept {
    const ErrorPresentation* row = find_error_presentation(e.code());
    return row != nullptr && row->exit_code != 0 ? static_cast<int>(row->exit_code) : static_cast<int>(kExitInvalid);
}
namespace {

// CLI11 ends a help text with its footer, without a newline.
void print_help(const Console& console, const std::string& text) {
    console.out << text;
    if (text.empty() || text.back() != '\n') {
        console.out << '\n';
    }
}

}  // namespace

int run(const std::vector<std::string>& args, const Console& console) {
    int status = kExitOk;
    try {
        CLI::App app{"hurray: inspect, list, verify, convert and print Hurray tensors "
                     "(descriptors, streams and HRRYFILE containers)",
                     "hurray"};
        app.require_subcommand(1);
        // Options of the tool itself, accepted before or after the command name.
        app.fallthrough();
        Console reading = console;
        app.add_flag("--spec-only", reading.spec_only,
                     "read by the Hurray specification alone: refuse libhurray's private schemes "
                     "(GGML blocks, 0xF0) as another implementation does, instead of understanding them");
        app.footer("Exit status: 0 ok, 1 invalid input, 2 usage error. "
                   "A path of '-' reads standard input.");
        add_inspect(app, reading, &status);
        add_ls(app, reading, &status);
        add_info(app, reading, &status);
        add_verify(app, reading, &status);
        add_convert(app, reading, &status);
        add_cat(app, reading, &status);
        add_get(app, reading, &status);
        add_demo(app, reading, &status);
#ifdef HURRAY_CLI_HAS_NET
        add_serve(app, reading, &status);
        add_fetch(app, reading, &status);
        add_push(app, reading, &status);
#endif

        if (args.size() > 1 && !args[1].empty() && args[1][0] != '-' &&
            app.get_subcommands([&](const CLI::App* sub) {
                   return sub->check_name(args[1]);
               }).empty()) {
            console.err << "hurray: unknown command '" << args[1]
                        << "'\nRun 'hurray --help' for the list of commands.\n";
            return kExitUsage;
        }
        std::vector<std::string> rest;
        rest.reserve(args.empty() ? 0 : args.size() - 1);
        // CLI11 parses a reversed vector (it pops arguments from the back).
        for (size_t i = args.size(); i > 1; --i) {
            rest.push_back(args[i - 1]);
        }
        try {
            app.parse(rest);
        } catch (const CLI::CallForHelp&) {
            print_help(console, app.help());
            return kExitOk;
        } catch (const CLI::CallForAllHelp&) {
            print_help(console, app.help("", CLI::AppFormatMode::All));
            return kExitOk;
        } catch (const CLI::ParseError& e) {
            // A subcommand's --help lands here as CallForHelp from the subcommand.
            if (e.get_exit_code() == 0) {
                console.out << e.what() << '\n';
                return kExitOk;
            }
            console.err << "hurray: " << e.what() << "\nRun 'hurray --help' for usage.\n";
            return kExitUsage;
        }
    } catch (const std::exception& e) {
        console.err << "hurray: internal error: " << e.what() << '\n';
        return kExitInvalid;
    } catch (...) {
        console.err << "hurray: internal error\n";
        return kExitInvalid;
    }
    return status;
}

}  // namespace hurray::cli
