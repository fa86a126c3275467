// The folders of tests/test_paths.hpp (compiled with their absolute paths).
#include "test_paths.hpp"

namespace hurray::test {

const char* conformance_dir() { return HURRAY_TEST_CONFORMANCE_DIR_VALUE; }

const char* tests_dir() { return HURRAY_TEST_TESTS_DIR_VALUE; }

}  // namespace hurray::test
