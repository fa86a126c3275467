// SPDX-License-Identifier: Apache-2.0
// A small libhurray consumer, built against the installed package: it encodes
// a descriptor, decodes it back and prints it.
#include <hurray/core/builder.hpp>
#include <hurray/core/describe.hpp>
#include <hurray/core/version.hpp>

#include <cstdio>

int main() {
    std::printf("libhurray %s\n", hurray::kVersionString);
    auto made = hurray::make_dense(hurray::ElementType::kFloat32, {3, 4});
    if (!made) {
        std::printf("error: %s\n", made.error().to_string().c_str());
        return 1;
    }
    auto bytes = hurray::encode(*made);
    if (!bytes) {
        std::printf("error: %s\n", bytes.error().to_string().c_str());
        return 1;
    }
    auto back = hurray::decode(*bytes);
    if (!back) {
        std::printf("error: %s\n", back.error().to_string().c_str());
        return 1;
    }
    std::printf("%zu bytes: %s\n", bytes->size(), hurray::summarize(*back).c_str());
    return *back == *made ? 0 : 1;
}
