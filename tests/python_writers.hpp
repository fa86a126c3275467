// The tests' independent writers (tests/convert/writers/*.py: GGUF, SafeTensors and
// NumPy files written without our C++ code) run with /usr/bin/python3 and NumPy, the
// Debian packages: where they are, and whether they can run here.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

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

}  // namespace hurray::test
