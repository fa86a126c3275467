// SPDX-License-Identifier: Apache-2.0
// docs/guide.md's hurray::convert snippet, built and run by ctest (see readme_layers.cpp):
// writes model.hrry in the working directory, converts it to model.safetensors.
#include <hurray/convert/convert.hpp>
#include <hurray/hurray.hpp>

#include <cstdio>
#include <span>
#include <vector>

namespace {

hurray::Status run() {
    // An HRRYFILE of one float32 matrix, to convert.
    const std::vector<float> values = {1, 2, 3, 4, 5, 6};
    auto w = hurray::make_dense(hurray::ElementType::kFloat32, {2, 3});
    if (!w) return w.error();
    auto file = hurray::FileWriter::create_file("model.hrry");
    if (!file) return file.error();
    const std::span<const uint8_t> bufs[] = {hurray::byte_span(values)};
    HURRAY_RETURN_IF_ERROR(file->add_tensor("w", *w, bufs));
    HURRAY_RETURN_IF_ERROR(file->finish());

    // readme:begin convert
    hurray::convert::ConvertOptions opt;
    opt.verify = true;                     // re-read the output, compare every value, then commit
    auto report = hurray::convert::convert_file("model.hrry", "model.safetensors", opt);
    if (!report) return report.error();    // names the tensor or field and the byte offset
    std::printf("%llu tensors, %llu bytes, verified\n", static_cast<unsigned long long>(report->tensors),
                static_cast<unsigned long long>(report->data_bytes));
    // readme:end convert
    return hurray::Status::success();
}

}  // namespace

int main() {
    const hurray::Status st = run();
    if (!st) {
        std::fprintf(stderr, "readme_convert: %s\n", st.error().to_string().c_str());
        return 1;
    }
    return 0;
}
