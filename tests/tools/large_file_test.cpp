// SPDX-License-Identifier: Apache-2.0
// The `hurray` tool on a file over 4 GiB (sparse: the 4.5 GiB tensor is a
// hole, see tests/io/large_file_support.hpp): ls, info and cat of tensors
// that lie past 4 GiB, through the process (the real binary, real mmap).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "cli_support.hpp"
#include "large_file_support.hpp"

namespace hurray::clitest {
namespace {

using hurray::test::LargeFile;
using json = nlohmann::json;

using CliLargeFile = hurray::test::LargeFileSuite;

TEST_F(CliLargeFile, LsJsonGivesOffsetsPast4GiB) {
    const Ran r = run_process("ls --json '" + file_->path + "'", "", *dir_);
    ASSERT_EQ(r.rc, 0) << r.err;
    const json j = json::parse(r.out);
    ASSERT_EQ(j["tensors"].size(), 4U) << r.out;
    const json& big = j["tensors"][1];
    EXPECT_EQ(big["name"], "big");
    EXPECT_EQ(big["shape"][0].get<uint64_t>(), LargeFile::kBigBytes);
    const std::string dump = j["tensors"][2].dump();
    EXPECT_EQ(j["tensors"][2]["name"], "tail") << dump;
    bool past = false;
    for (const auto& [key, value] : j["tensors"][2].items()) {
        if (value.is_number_unsigned() && key.find("offset") != std::string::npos) {
            past = past || value.get<uint64_t>() > (uint64_t{1} << 32);
        }
    }
    EXPECT_TRUE(past) << "no offset past 4 GiB in " << dump;
}

TEST_F(CliLargeFile, InfoAndCatReadPast4GiB) {
    const Ran info = run_process("info '" + file_->path + "'", "", *dir_);
    ASSERT_EQ(info.rc, 0) << info.err;
    EXPECT_NE(info.out.find("sparse 5 GiB test file"), std::string::npos) << info.out;

    const Ran cat = run_process("cat '" + file_->path + "' tail --limit 3", "", *dir_);
    ASSERT_EQ(cat.rc, 0) << cat.err;
    for (int i = 0; i < 3; ++i) {
        EXPECT_NE(cat.out.find(std::to_string(file_->tail[static_cast<size_t>(i)])), std::string::npos)
            << cat.out;
    }
    const Ran last = run_process("cat '" + file_->path + "' last --limit 2", "", *dir_);
    ASSERT_EQ(last.rc, 0) << last.err;
    EXPECT_NE(last.out.find("-17"), std::string::npos) << last.out;
}

}  // namespace
}  // namespace hurray::clitest
