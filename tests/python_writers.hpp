// The tests' independent writers (tests/convert/writers/*.py: GGUF, SafeTensors and
// NumPy files written without our C++ code) run with /usr/bin/python3 and NumPy, the
// Debian packages: where they are, and whether they can run here.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "io_test_util.hpp"
#include "test_paths.hpp"

namespace hurray::test {

/// The interpreter the writers run with (Debian's, which has python3-numpy).
inline constexpr const char* kPython = "/usr/bin/python3";

/// tests/convert/writers, where the writer scripts are.
inline std::string writers_dir() { return std::string(HURRAY_TESTS_DIR) + "/convert/writers"; }

/// Why the writers cannot run here (the reason a test skips), or empty when they can.
inline std::string python_numpy_missing() {
    if (!std::filesystem::exists(kPython)) {
        return std::string(kPython) + " is missing";
    }
    const std::string cmd = std::string(kPython) + " -c 'import numpy' >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) {
        return std::string("numpy is not installed for ") + kPython;
    }
    return {};
}

/// A test fixture whose tests share files the writers wrote once, before the
/// suite's first test, into a temporary folder removed after its last.
/// `Suite::writer_commands(folder)` returns each writer's command line after
/// the interpreter (script name relative to writers_dir(), then its
/// arguments); it may create sub-folders first. Tests skip, saying why, when
/// the interpreter or NumPy is missing, and fail when a writer failed.
///
/// @code
/// class GgufFiles : public WrittenFilesTest<GgufFiles> {
/// public:
///     static std::vector<std::string> writer_commands(const std::filesystem::path& dir) {
///         return {"gguf_writer.py " + dir.string()};
///     }
/// };
/// @endcode
template <typename Suite>
class WrittenFilesTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new TempDir();
        skip_ = python_numpy_missing();
        if (!skip_.empty()) {
            return;
        }
        ran_ = true;
        for (const std::string& args : Suite::writer_commands(dir_->path())) {
            // Appended piece by piece: GCC 12 -O3 warns falsely (-Warray-bounds)
            // on a chain of std::string + here.
            std::string cmd(kPython);
            cmd.append(" ").append(writers_dir()).append("/").append(args).append(" >/dev/null");
            ran_ = ran_ && std::system(cmd.c_str()) == 0;
        }
    }
    static void TearDownTestSuite() {
        delete dir_;
        dir_ = nullptr;
    }
    void SetUp() override {
        if (!skip_.empty()) {
            GTEST_SKIP() << skip_;
        }
        ASSERT_TRUE(ran_) << "a writer of tests/convert/writers failed";
    }
    /// `name` inside the shared folder.
    static std::string file(const std::string& name) { return dir_->file(name); }

    static inline TempDir* dir_ = nullptr;
    static inline std::string skip_;
    static inline bool ran_ = false;
};

}  // namespace hurray::test
