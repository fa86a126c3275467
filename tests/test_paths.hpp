// Where the tests find their inputs. The absolute paths are compiled into one small
// translation unit per kind (tests/test_paths.cpp, tests/cli_path.cpp) instead of
// every test object's command line, so that the other objects are the same in every
// clone and ccache serves them to a clone in any folder.
#pragma once

namespace hurray::test {

/// The conformance vectors, read in place (../shared/conformance by default; CMake
/// cache variable HURRAY_CONFORMANCE_DIR).
const char* conformance_dir();

/// This tests/ folder of the source tree (the tests' independent writers, goldens).
const char* tests_dir();

/// The `hurray` tool under test (defined in hurray_cli_tests only).
const char* cli_path();

}  // namespace hurray::test

// The names the tests have always used.
#define HURRAY_CONFORMANCE_DIR (::hurray::test::conformance_dir())
#define HURRAY_TESTS_DIR (::hurray::test::tests_dir())
#define HURRAY_CLI_PATH (::hurray::test::cli_path())
