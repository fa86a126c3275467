// SPDX-License-Identifier: Apache-2.0
// C tests of the C ABI: DLPack export.
#include "c_test_util.h"

void dlpack_tests(void) {}
