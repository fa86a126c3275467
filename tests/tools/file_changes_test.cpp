// SPDX-License-Identifier: Apache-2.0
// The `hurray` tool on a file that another process truncates while the tool
// has it mapped: it must exit 1 with "file changed while mapped", never die
// of SIGBUS (exit status 135 from a shell).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_support.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/io/file_writer.hpp"
#include "test_paths.hpp"

namespace hurray::clitest {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

/// A file of `tensors` uint8 tensors of 4 MiB each, every byte non-zero.
void write_big_model(const std::string& path, int tensors) {
    auto d = make_dense(ElementType::kUInt8, {4 * kMiB});
    ASSERT_TRUE(d);
    const std::vector<uint8_t> bytes(4 * kMiB, 0xA5);
    auto w = FileWriter::create_file(path);
    ASSERT_TRUE(w) << w.error().to_string();
    const std::span<const uint8_t> bufs[] = {bytes};
    for (int i = 0; i < tensors; ++i) {
        std::string name = "t";
        name += std::to_string(i);
        ASSERT_TRUE(w->add_tensor(name, *d, bufs));
    }
    ASSERT_TRUE(w->finish());
}

/// Whether process `pid` has `path` mapped (its /proc/<pid>/maps names it).
bool has_mapped(pid_t pid, const std::string& path) {
    std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
    std::string line;
    while (std::getline(maps, line)) {
        if (line.find(path) != std::string::npos) {
            return true;
        }
    }
    return false;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

struct Outcome {
    int status = 0;
    bool truncated_while_mapped = false;
    std::string err;
};

/// Runs `hurray <args...>` on `in`, truncates `in` to 1 MiB as soon as the
/// tool has mapped it, and waits for the tool.
Outcome run_and_truncate(const std::vector<std::string>& args, const std::string& in, const TempDir& dir) {
    Outcome o;
    const std::string err_path = dir.file("stderr.txt");
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        ADD_FAILURE() << "fork failed";
        return o;
    }
    if (pid == 0) {
        const int err = ::open(err_path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
        const int null = ::open("/dev/null", O_WRONLY);
        if (err < 0 || null < 0 || ::dup2(err, 2) < 0 || ::dup2(null, 1) < 0) {
            ::_exit(120);
        }
        std::vector<char*> argv;
        std::vector<std::string> all{"hurray"};
        all.insert(all.end(), args.begin(), args.end());
        for (std::string& a : all) {
            argv.push_back(a.data());
        }
        argv.push_back(nullptr);
        ::execv(HURRAY_CLI_PATH, argv.data());
        ::_exit(121);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
        if (has_mapped(pid, in)) {
            o.truncated_while_mapped = ::truncate(in.c_str(), static_cast<off_t>(kMiB)) == 0;
            break;
        }
        int status = 0;
        if (::waitpid(pid, &status, WNOHANG) == pid) {
            o.status = status;
            o.err = slurp(err_path);
            return o;  // finished before it was caught with the file mapped
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    EXPECT_EQ(::waitpid(pid, &o.status, 0), pid);
    o.err = slurp(err_path);
    return o;
}

TEST(CliFileChanges, TruncatedWhileConvertingExitsOneWithTheMessage) {
    TempDir dir;
    const std::string in = dir.file("model.hrry");
    for (int attempt = 0; attempt < 3; ++attempt) {
        write_big_model(in, 64 << attempt);  // 256 MiB, then 512 MiB and 1 GiB if the tool was too quick
        const Outcome o = run_and_truncate({"convert", in, dir.file("out.hrrys")}, in, dir);
        ASSERT_FALSE(WIFSIGNALED(o.status)) << "the tool died of signal " << WTERMSIG(o.status) << "; stderr: " << o.err;
        ASSERT_TRUE(WIFEXITED(o.status));
        if (!o.truncated_while_mapped || WEXITSTATUS(o.status) == 0) {
            continue;  // the tool finished its reading before the cut: try a bigger file
        }
        EXPECT_EQ(WEXITSTATUS(o.status), 1) << o.err;
        EXPECT_NE(o.err.find("file changed while"), std::string::npos) << o.err;
        return;
    }
    ADD_FAILURE() << "the tool finished its reading before the file could be cut, three times in a row";
}

}  // namespace
}  // namespace hurray::clitest
