// The `hurray` tool's dispatcher: help, usage errors, exit statuses.
#include <gtest/gtest.h>

#include <sstream>

#include "cli_support.hpp"
#include "hurray/cli.hpp"

namespace {

using hurray::clitest::Ran;
using hurray::clitest::run_cli;

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
