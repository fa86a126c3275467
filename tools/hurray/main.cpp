// The `hurray` executable: forwards to hurray::cli::run.
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "hurray/cli.hpp"

int main(int argc, char** argv) {
    std::vector<std::string> args;
    args.reserve(static_cast<size_t>(argc));
    for (int i = 0; i < argc; ++i) {
        args.emplace_back(argv[i]);
    }
    std::ios::sync_with_stdio(false);
    const hurray::cli::Console console{std::cout, std::cerr, STDIN_FILENO,
                                       ::isatty(STDERR_FILENO) == 1, STDOUT_FILENO};
    const int rc = hurray::cli::run(args, console);
    std::cout.flush();
    return std::cout.good() ? rc : hurray::cli::kExitInvalid;
}
