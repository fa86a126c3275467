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

namespace {

using hurray::clitest::TempDir;
using hurray::clitest::write_all_file;

/// Input that is not Hurray at all (text, a PNG, a few bytes; a safetensors file where the
/// build has no hurray::convert: with it, ls, info, verify and cat read that one)
/// is named as such by every command that reads a file, with its first bytes, and
/// exits 1; it is not reported as a truncated or corrupt stream.
TEST(Cli, InputThatIsNotHurrayIsNamedAsSuch) {
    TempDir dir;
    const std::string safetensors_header = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
    std::string safetensors(8, '\0');
    safetensors[0] = static_cast<char>(safetensors_header.size());
    safetensors += safetensors_header + std::string(4, '\0');
    const std::vector<std::pair<std::string, std::string>> inputs = {
        {"text.txt", "hello world, this is text\n"},
        {"image.png", std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16)},
        {"model.safetensors", safetensors},
        {"three.bin", "abc"},
    };
    for (const auto& [name, bytes] : inputs) {
        const std::string path = dir.file(name);
        write_all_file(path, bytes);
        for (const std::vector<std::string>& args :
             {std::vector<std::string>{"ls", path}, {"info", path}, {"verify", path}, {"inspect", path},
              {"cat", path, "w"}, {"convert", path, "-"}}) {
#if defined(HURRAY_CLI_HAS_CONVERT) && HURRAY_CLI_HAS_CONVERT
            constexpr bool kReadsOtherFormats = true;
#else
            constexpr bool kReadsOtherFormats = false;
#endif
            if (kReadsOtherFormats && name == "model.safetensors" && args[0] != "inspect" && args[0] != "convert") {
                // ls, info, verify and cat read SafeTensors (and GGUF, NumPy) files through
                // hurray::convert.
                const Ran read = run_cli(args);
                EXPECT_EQ(read.rc, 0) << args[0] << ": " << read.err;
                const std::string want = args[0] == "ls"       ? "w "
                                         : args[0] == "info"   ? "SafeTensors file"
                                         : args[0] == "verify" ? "OK (safetensors, 1 tensors"
                                                               : "[0.]";
                EXPECT_NE(read.out.find(want), std::string::npos) << args[0] << ": " << read.out;
                continue;
            }
            const Ran r = run_cli(args);
            EXPECT_EQ(r.rc, 1) << args[0] << " " << name;
            EXPECT_NE(r.err.find(path + ": not a Hurray file or stream (starts with "), std::string::npos)
                << args[0] << " " << name << ": " << r.err;
        }
    }
    // The message shows the first bytes in hex and as text.
    const Ran r = run_cli({"ls", dir.file("text.txt")});
    EXPECT_NE(r.err.find("(starts with 68 65 6c 6c 6f 20 77 6f (\"hello wo\"))"), std::string::npos) << r.err;
    // Hurray input still opens: an empty stream, and the conformance container.
    write_all_file(dir.file("empty"), std::string());
    EXPECT_EQ(run_cli({"ls", dir.file("empty")}).rc, 0);
}

}  // namespace
