// SPDX-License-Identifier: Apache-2.0
// The converters' headers (namespace hurray::formats) compile in one translation unit
// with every other libhurray header: the core's float conversions are functions named
// hurray::convert, so the converters' namespace must not be.
#include <gtest/gtest.h>

#include <hurray/convert/convert.hpp>
#include <hurray/convert/format.hpp>
#include <hurray/convert/gguf.hpp>
#include <hurray/convert/hrryfile.hpp>
#include <hurray/convert/numpy.hpp>
#include <hurray/convert/safetensors.hpp>
#include <hurray/convert/tensor_source.hpp>
#include <hurray/hurray.hpp>
#include <span>
#include <vector>

namespace {

TEST(ConvertHeaders, CompileBesideTheUmbrellaHeader) {
    // Both names resolve: the float conversion function and the converters' namespace.
    std::vector<float> in = {1.0F, -2.5F};
    std::vector<hurray::float16_t> out(2);
    ASSERT_TRUE(hurray::convert(std::span<const float>(in), std::span<hurray::float16_t>(out)));
    EXPECT_EQ(hurray::formats::format_name(hurray::formats::Format::kGguf), "gguf");
}

}  // namespace
