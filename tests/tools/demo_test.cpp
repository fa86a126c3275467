// `hurray demo`: runs end to end in a temporary directory.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli_support.hpp"
#include "hurray/demo_model.hpp"
#include "hurray/io/file_reader.hpp"

namespace hurray::clitest {
namespace {

TEST(Demo, RunsInAGivenDirectory) {
    TempDir dir;
    const std::string where = dir.file("sub/dir");
    const Ran r = run_cli({"demo", where});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("files go to " + where), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("identical"), std::string::npos);
    EXPECT_NE(r.out.find("OK (file"), std::string::npos);
    EXPECT_NE(r.out.find("general.architecture"), std::string::npos);
    EXPECT_TRUE(r.err.empty()) << r.err;
    auto a = FileReader::open(where + "/model.hrry");
    auto b = FileReader::open(where + "/model-from-stream.hrry");
    ASSERT_TRUE(a.ok());
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(a->tensor_count(), cli::kDemoTensorCount);
    EXPECT_EQ(b->tensor_count(), cli::kDemoTensorCount);
    EXPECT_TRUE(a->check_all().ok());
}

TEST(Demo, DefaultsToAFreshTemporaryDirectory) {
    TempDir dir;
    const Ran r = run_process("demo", "", dir);
    ASSERT_EQ(r.rc, 0) << r.err;
    const std::string marker = "files go to ";
    const size_t at = r.out.find(marker);
    ASSERT_NE(at, std::string::npos) << r.out;
    const std::string made = r.out.substr(at + marker.size(), r.out.find('\n', at) - at - marker.size());
    EXPECT_TRUE(std::filesystem::exists(made + "/model.hrry")) << made;
    EXPECT_NE(made.find("hurray-demo-"), std::string::npos);
    std::error_code ec;
    std::filesystem::remove_all(made, ec);
}

TEST(Demo, UnwritableDirectoryIsStatusOne) {
    const Ran r = run_cli({"demo", "/proc/hurray-demo-cannot-exist"});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("/proc/hurray-demo-cannot-exist"), std::string::npos) << r.err;
    EXPECT_EQ(run_cli({"demo", "--help"}).rc, 0);
    EXPECT_EQ(run_cli({"demo", "a", "b"}).rc, 2);
}

}  // namespace
}  // namespace hurray::clitest
