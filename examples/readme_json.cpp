// SPDX-License-Identifier: Apache-2.0
// docs/guide.md's hurray::json snippet, built and run by ctest (see readme_layers.cpp).
#include <hurray/hurray.hpp>
#include <hurray/json/descriptor_json.hpp>

#include <cstdio>
#include <string>

namespace {

hurray::Status run() {
    auto d = hurray::make_per_block_quantized(hurray::ElementType::kInt4, {64, 64}, 1, 32);
    if (!d) return d.error();
    // readme:begin json
    std::string text = hurray::to_json(*d);    // {"version_major":1,...,"element_type":"int4",...}
    auto same = hurray::from_json(text);       // Result<TensorDescriptor>; *same == *d, bit for bit
    auto cbor = hurray::to_cbor(*d);           // the same document in CBOR; hurray::from_cbor reads it
    // readme:end json
    if (!same) return same.error();
    if (!(*same == *d)) return hurray::Error(hurray::ErrorCode::kInvalidData, "JSON round trip differs");
    auto back = hurray::from_cbor(cbor);
    if (!back) return back.error();
    if (!(*back == *d)) return hurray::Error(hurray::ErrorCode::kInvalidData, "CBOR round trip differs");
    return hurray::Status::success();
}

}  // namespace

int main() {
    const hurray::Status st = run();
    if (!st) {
        std::fprintf(stderr, "readme_json: %s\n", st.error().to_string().c_str());
        return 1;
    }
    std::puts("readme_json: ok");
    return 0;
}
