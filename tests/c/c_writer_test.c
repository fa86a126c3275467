// SPDX-License-Identifier: Apache-2.0
// C tests of the C ABI: writing files.
#include "c_test_util.h"

void writer_tests(void) {}
