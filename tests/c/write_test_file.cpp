// SPDX-License-Identifier: Apache-2.0
// Test helper of the C ABI tests (not a test): writes, with the C++ writer, the
// HRRYFILE that tests/c/c_api_test.c reads besides the conformance vectors. It
// holds a KV value of every scalar type, and tensors of rank 0, 1 and 3.
//   hurray_c_test_writer OUT.hrry
#include <hurray/hurray.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: hurray_c_test_writer OUT.hrry\n");
        return 2;
    }
    const std::vector<float> scalar = {1.5F};
    std::vector<int16_t> cube(24);
    for (size_t i = 0; i < cube.size(); ++i) {
        cube[i] = static_cast<int16_t>(i) - 12;
    }
    const std::vector<double> line = {0.5, -0.25, 8.0};
    const hurray::Status saved = hurray::save(
        argv[1],
        {{"scalar", hurray::TensorRef(scalar, hurray::Shape{})},
         {"cube", hurray::TensorRef(cube, {2, 3, 4})},
         {"line", hurray::TensorRef(line)}},
        {{"name", hurray::KvValue::string("c-api")},
         {"offset", hurray::KvValue::int64(-42)},
         {"big", hurray::KvValue::uint64(UINT64_C(18446744073709551615))},
         {"ratio", hurray::KvValue::float64(0.125)},
         {"flag", hurray::KvValue::boolean(true)},
         {"blob", hurray::KvValue::bytes({1, 2, 3})},
         {"dims", hurray::KvValue::int64_array({4096, 11008})}});
    if (!saved) {
        std::fprintf(stderr, "save: %s\n", saved.error().to_string().c_str());
        return 1;
    }
    return 0;
}
