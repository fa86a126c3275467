// SPDX-License-Identifier: Apache-2.0
// The converters' headers (namespace hurray::convert, the target's name) compile in one
// translation unit with every other libhurray header; the core's float conversions are
// hurray::convert_floats, and hurray::formats stays an alias of the namespace for a release.
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
    // Both names resolve: the float conversion function and the converters' namespace,
    // under its name and its former one.
    std::vector<float> in = {1.0F, -2.5F};
    std::vector<hurray::float16_t> out(2);
    ASSERT_TRUE(hurray::convert_floats(std::span<const float>(in), std::span<hurray::float16_t>(out)));
    EXPECT_EQ(hurray::convert::format_name(hurray::convert::Format::kGguf), "gguf");
    EXPECT_EQ(hurray::formats::format_name(hurray::formats::Format::kNpz), "npz");
}

}  // namespace
