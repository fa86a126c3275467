// SPDX-License-Identifier: Apache-2.0
// A small libhurray consumer, built against the installed package: it encodes
// a descriptor, decodes it back, prints it, and sends it through its JSON form.
#include <hurray/core/builder.hpp>
#include <hurray/core/describe.hpp>
#include <hurray/core/version.hpp>
#include <hurray/json/descriptor_json.hpp>

#include <cstdio>
#include <string>

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
    const std::string json = hurray::to_json(*back);
    std::printf("JSON: %s\n", json.c_str());
    auto from_json = hurray::from_json(json);
    if (!from_json) {
        std::printf("error: %s\n", from_json.error().to_string().c_str());
        return 1;
    }
    return *back == *made && *from_json == *made ? 0 : 1;
}
