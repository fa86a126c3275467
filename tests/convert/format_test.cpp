// SPDX-License-Identifier: Apache-2.0
// Format detection from bytes and from file names (hurray/convert/format.hpp).
#include "hurray/convert/format.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "hurray/convert/tensor_source.hpp"

namespace hurray::convert {
namespace {

std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }

std::vector<uint8_t> safetensors_head(uint64_t header_len, const std::string& json) {
    std::vector<uint8_t> b;
    for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(header_len >> (8 * i)));
    b.insert(b.end(), json.begin(), json.end());
    return b;
}

TEST(FormatDetect, Magics) {
    EXPECT_EQ(detect_format(bytes("HRRYFILE\x01\x00"), 100), Format::kHrryFile);
    EXPECT_EQ(detect_format(bytes("GGUF\x03\x00\x00\x00"), 100), Format::kGguf);
    EXPECT_EQ(detect_format(bytes("\x93NUMPY\x01\x00"), 100), Format::kNpy);
    EXPECT_EQ(detect_format(bytes(std::string("PK\x03\x04", 4)), 100), Format::kNpz);
    EXPECT_EQ(detect_format(bytes(std::string("PK\x05\x06", 4)), 22), Format::kNpz);  // empty zip
}

TEST(FormatDetect, SafeTensorsByHeaderShape) {
    const std::string json = R"({"__metadata__":{}})";
    EXPECT_EQ(detect_format(safetensors_head(json.size(), json), 8 + json.size()),
              Format::kSafeTensors);
    // Header length past the end of the file: not SafeTensors.
    EXPECT_EQ(detect_format(safetensors_head(1000, json), 8 + json.size()), Format::kUnknown);
    // Unknown size (a pipe): a plausible length suffices.
    EXPECT_EQ(detect_format(safetensors_head(json.size(), json), std::nullopt),
              Format::kSafeTensors);
    // No '{' after the length.
    EXPECT_EQ(detect_format(safetensors_head(json.size(), "[]"), 100), Format::kUnknown);
}

TEST(FormatDetect, ShortAndEmptyInputs) {
    EXPECT_EQ(detect_format({}, 0), Format::kUnknown);
    EXPECT_EQ(detect_format(bytes("HRRY"), 4), Format::kUnknown);
    EXPECT_EQ(detect_format(bytes("GGU"), 3), Format::kUnknown);
    EXPECT_EQ(detect_format(safetensors_head(2, "{"), 5), Format::kUnknown);  // 8 + 2 > 5
}

TEST(FormatNames, RoundTripAndAliases) {
    for (Format f : {Format::kHrryFile, Format::kStream, Format::kSafeTensors, Format::kGguf,
                     Format::kNpy, Format::kNpz}) {
        auto parsed = parse_format_name(format_name(f));
        ASSERT_TRUE(parsed) << parsed.error().to_string();
        EXPECT_EQ(*parsed, f);
    }
    EXPECT_EQ(*parse_format_name("hrry"), Format::kHrryFile);
    EXPECT_EQ(*parse_format_name("file"), Format::kHrryFile);
    auto bad = parse_format_name("pickle");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(bad.error().message().find("'pickle'"), std::string::npos);
    EXPECT_EQ(format_name(Format::kUnknown), "unknown");
}

TEST(FormatNames, FromExtension) {
    EXPECT_EQ(format_from_extension("a/model.safetensors"), Format::kSafeTensors);
    EXPECT_EQ(format_from_extension("m.GGUF"), Format::kGguf);
    EXPECT_EQ(format_from_extension("x.npy"), Format::kNpy);
    EXPECT_EQ(format_from_extension("x.npz"), Format::kNpz);
    EXPECT_EQ(format_from_extension("x.hrry"), Format::kHrryFile);
    EXPECT_EQ(format_from_extension("x.hrrys"), Format::kStream);
    EXPECT_EQ(format_from_extension("x.bin"), std::nullopt);
    EXPECT_EQ(format_from_extension("noext"), std::nullopt);
}

TEST(OpenSource, MissingFileIsAnIoError) {
    auto src = open_source("/nonexistent/dir/model.safetensors");
    ASSERT_FALSE(src);
    EXPECT_EQ(src.error().code(), ErrorCode::kIoError);
}

}  // namespace
}  // namespace hurray::convert
