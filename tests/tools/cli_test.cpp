// The `hurray` tool's dispatcher: help, usage errors, exit statuses.
#include <gtest/gtest.h>

#include <sstream>

#include "hurray/cli.hpp"

namespace {

struct Ran {
    int rc;
    std::string out;
    std::string err;
};

Ran run_cli(std::vector<std::string> args) {
    args.insert(args.begin(), "hurray");
    std::ostringstream out;
    std::ostringstream err;
    const int rc = hurray::cli::run(args, {out, err});
    return {rc, out.str(), err.str()};
}

TEST(Cli, HelpListsEveryCommand) {
    const Ran r = run_cli({"--help"});
    EXPECT_EQ(r.rc, 0);
    for (const char* cmd : {"inspect", "ls", "info", "verify", "convert", "cat", "demo"}) {
        EXPECT_NE(r.out.find(cmd), std::string::npos) << cmd;
    }
}

TEST(Cli, NoCommandIsAUsageError) {
    const Ran r = run_cli({});
    EXPECT_EQ(r.rc, 2);
    EXPECT_FALSE(r.err.empty());
}

TEST(Cli, UnknownCommandIsAUsageError) {
    const Ran r = run_cli({"frobnicate"});
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("frobnicate"), std::string::npos);
}

}  // namespace
