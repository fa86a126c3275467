// SPDX-License-Identifier: Apache-2.0
// Quick start: save a dictionary of float32, float16 and int8 arrays with KV
// metadata, then load them back zero-copy. Built and run by the test command, which
// checks what it prints.
#include <hurray/hurray.hpp>

#include <cstdio>
#include <string>
#include <vector>

int main() {
    std::vector<float> w = {0.5F, -1.0F, 2.0F, 4.5F, -3.25F, 8.0F};
    std::vector<hurray::float16_t> h = hurray::to_float16(w);  // vectorised, round to nearest even
    std::vector<int8_t> q = {1, -2, 3, -4};
    hurray::Status saved = hurray::save("quickstart.hrry",  // atomic: a temporary file, fsync, rename
        {{"w", hurray::TensorRef(w, {2, 3})}, {"h", hurray::TensorRef(h)}, {"q", hurray::TensorRef(q, {2, 2})}},
        {{"general.architecture", hurray::KvValue::string("quickstart")}});
    if (!saved) return std::fprintf(stderr, "%s\n", saved.error().to_string().c_str()), 1;
    auto file = hurray::load("quickstart.hrry");  // maps the file and checks its structure
    if (!file) return std::fprintf(stderr, "%s\n", file.error().to_string().c_str()), 1;
    auto w2 = file->tensor("w").as<float>();  // TypedBuffer<float>: zero-copy, holds the mapping
    auto h2 = file->tensor("h").as<hurray::float16_t>();
    auto q2 = file->tensor("q").as<int8_t>();
    if (!w2 || !h2 || !q2) return std::fprintf(stderr, "not the type or layout saved\n"), 1;
    std::printf("w[1][2] = %g, h[3] = %g, q[1][1] = %d, architecture = %s\n", (*w2)[5], static_cast<float>((*h2)[3]),
                (*q2)[3], std::string(file->kv().get_string("general.architecture").value_or("?")).c_str());
}
