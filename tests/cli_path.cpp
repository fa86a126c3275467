// The tool of tests/test_paths.hpp's cli_path() (compiled with its absolute path).
#include "test_paths.hpp"

namespace hurray::test {

const char* cli_path() { return HURRAY_TEST_CLI_PATH_VALUE; }

}  // namespace hurray::test
