// SPDX-License-Identifier: Apache-2.0
// C tests of the C ABI: streams.
#include "c_test_util.h"

void stream_tests(void) {}
