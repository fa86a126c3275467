// SPDX-License-Identifier: Apache-2.0
// SafeTensors in and out (hurray/convert/safetensors.hpp): files written by the
// independent Python writer (tests/convert/writers/safetensors_writer.py) read element by
// element, our output checked by that script, the writer's refusals and text forms, and
// hostile headers, each giving its error (code, tensor, field, byte offset) and no crash.
#include "hurray/convert/safetensors.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "convert_test_support.hpp"
#include "hurray/convert/convert.hpp"
#include "hurray/convert/tensor_source.hpp"
#include "io_test_util.hpp"
#include "python_writers.hpp"
#include "test_paths.hpp"

namespace hurray::convert {
namespace {

using hurray::test::Bytes;
using hurray::test::TempDir;

using hurray::test::kPython;
const std::string kWriter =
    std::string(HURRAY_TESTS_DIR) + "/convert/writers/safetensors_writer.py";

/// Runs a command; returns its exit status and its standard output.
std::pair<int, std::string> run(const std::string& cmd) {
    std::string out;
    FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
    if (p == nullptr) {
        return {-1, "popen failed"};
    }
    std::array<char, 4096> buf{};
    size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) {
        out.append(buf.data(), n);
    }
    const int status = ::pclose(p);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

/// Why the Python writer cannot run here ("" when it can).
std::string python_missing() { return hurray::test::python_numpy_missing(); }

/// Element `k`'s bit pattern in a buffer presented in Hurray's packing: little-endian
/// bytes for whole-byte widths, LSB-first bit stream for 1, 4 and 6 bits.
uint64_t element(std::span<const uint8_t> bytes, uint32_t bits, uint64_t k) {
    if (bits % 8 == 0) {
        uint64_t v = 0;
        for (uint32_t b = 0; b < bits / 8; ++b) {
            v |= uint64_t{bytes[k * bits / 8 + b]} << (8 * b);
        }
        return v;
    }
    const uint64_t bit = k * bits;
    uint64_t window = bytes[bit / 8];
    if (bit / 8 + 1 < bytes.size()) {
        window |= uint64_t{bytes[bit / 8 + 1]} << 8;
    }
    return (window >> (bit % 8)) & ((uint64_t{1} << bits) - 1);
}

/// The Python writer's files and manifest, written once for the whole suite.
class PythonFiles : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        skip_reason_ = new std::string(python_missing());
        if (!skip_reason_->empty()) {
            return;
        }
        dir_ = new TempDir();
        const auto [rc, out] =
            run(std::string(kPython) + " " + kWriter + " write " + dir_->path().string());
        ASSERT_EQ(rc, 0) << out;
        std::ifstream is(dir_->file("manifest.json"));
        manifest_ = new nlohmann::json(nlohmann::json::parse(is));
    }
    static void TearDownTestSuite() {
        delete manifest_;
        delete dir_;
        delete skip_reason_;
        manifest_ = nullptr;
        dir_ = nullptr;
        skip_reason_ = nullptr;
    }
    void SetUp() override {
        if (!skip_reason_->empty()) {
            GTEST_SKIP() << *skip_reason_;
        }
    }

    static std::string path(const std::string& key) {
        return dir_->file((*manifest_)[key]["file"].get<std::string>());
    }

    /// Checks every tensor and the metadata of `src` against manifest entry `key`.
    static void expect_matches(const TensorSource& src, const std::string& key) {
        const auto& m = (*manifest_)[key];
        ASSERT_EQ(src.tensor_count(), m["tensors"].size());
        for (size_t i = 0; i < src.tensor_count(); ++i) {
            const auto& want = m["tensors"][i];
            const SourceTensor& t = src.tensor(i);
            SCOPED_TRACE(t.name);
            EXPECT_EQ(t.name, want["name"].get<std::string>());
            const auto type = safetensors_element_type(want["dtype"].get<std::string>());
            ASSERT_TRUE(type);
            EXPECT_EQ(t.descriptor.element_type, *type);
            EXPECT_EQ(t.descriptor.shape, want["shape"].get<std::vector<uint64_t>>());
            ASSERT_EQ(src.find(t.name), i);
            ASSERT_FALSE(t.descriptor.buffers.empty());
            const uint64_t size = t.descriptor.buffers[0].byte_size;
            Bytes got(size);
            ASSERT_TRUE(src.read(i, 0, 0, got));
            // Chunked reads of odd sizes give the same bytes.
            Bytes pieces(size);
            for (uint64_t at = 0; at < size; at += 3) {
                const uint64_t n = std::min<uint64_t>(3, size - at);
                ASSERT_TRUE(src.read(i, 0, at, std::span<uint8_t>(pieces.data() + at, n)));
            }
            EXPECT_EQ(pieces, got);
            if (auto v = src.view(i, 0)) {
                EXPECT_NE(t.descriptor.element_type, ElementType::kBool);
                EXPECT_EQ(Bytes(v->begin(), v->end()), got);
            } else {
                EXPECT_EQ(t.descriptor.element_type, ElementType::kBool);
            }
            const Bytes expect_raw = hurray::test::read_all(dir_->file(want["expect"].get<std::string>()));
            const uint64_t count = want["count"].get<uint64_t>();
            ASSERT_EQ(expect_raw.size(), count * 8);
            const uint32_t bits = bit_width(*type);
            for (uint64_t k = 0; k < count; ++k) {
                uint64_t e = 0;
                for (int b = 0; b < 8; ++b) {
                    e |= uint64_t{expect_raw[k * 8 + b]} << (8 * b);
                }
                ASSERT_EQ(element(got, bits, k), e) << "element " << k;
            }
            if (*type == ElementType::kBool && count % 8 != 0) {
                EXPECT_EQ(got.back() >> (count % 8), 0) << "padding bits must be zero";
            }
        }
        const auto& meta = m["metadata"];
        ASSERT_EQ(src.kv().size(), meta.size());
        for (const auto& [k, v] : meta.items()) {
            auto s = src.kv().get_string(k);
            ASSERT_TRUE(s) << k;
            EXPECT_EQ(*s, v.get<std::string>());
        }
    }

    /// Runs the Python checker on `file` against manifest entry `key`.
    static void expect_python_accepts(const std::string& file, const std::string& key) {
        const auto [rc, out] = run(std::string(kPython) + " " + kWriter + " verify '" + file +
                                   "' " + dir_->file("manifest.json") + " " + key);
        EXPECT_EQ(rc, 0) << out;
        EXPECT_EQ(out, "ok\n");
    }

    static inline std::string* skip_reason_ = nullptr;
    static inline TempDir* dir_ = nullptr;
    static inline nlohmann::json* manifest_ = nullptr;
};

TEST_F(PythonFiles, EveryDtypeElementByElement) {
    for (const char* key : {"all", "meta_only", "empty"}) {
        SCOPED_TRACE(key);
        auto src = open_safetensors(path(key));
        ASSERT_TRUE(src) << src.error().to_string();
        EXPECT_EQ((*src)->format(), Format::kSafeTensors);
        expect_matches(**src, key);
    }
}

TEST_F(PythonFiles, OpenSourceDetectsSafeTensors) {
    auto src = open_source(path("all"));
    ASSERT_TRUE(src) << src.error().to_string();
    EXPECT_EQ((*src)->format(), Format::kSafeTensors);
    expect_matches(**src, "all");
}

TEST_F(PythonFiles, WrittenFilesAreValidForPythonAndReadBack) {
    TempDir out;
    for (const char* key : {"all", "meta_only", "empty"}) {
        SCOPED_TRACE(key);
        auto src = open_safetensors(path(key));
        ASSERT_TRUE(src) << src.error().to_string();
        for (const uint64_t chunk : {uint64_t{1}, uint64_t{5}, uint64_t{8} << 20}) {
            ConvertOptions opt;
            opt.chunk_bytes = chunk;
            uint64_t last_done = 0;
            opt.progress = [&](uint64_t done, uint64_t total) {
                EXPECT_GE(done, last_done);
                EXPECT_LE(done, total);
                last_done = done;
            };
            const std::string written =
                out.file(std::string(key) + std::to_string(chunk) + ".safetensors");
            auto s = write_safetensors(**src, written, opt);
            ASSERT_TRUE(s) << s.error().to_string();
            expect_python_accepts(written, key);
            auto back = open_safetensors(written);
            ASSERT_TRUE(back) << back.error().to_string();
            expect_matches(**back, key);
        }
    }
}

TEST_F(PythonFiles, TensorBytesSurviveARoundTripExactly) {
    TempDir out;
    auto src = open_safetensors(path("all"));
    ASSERT_TRUE(src) << src.error().to_string();
    const std::string once = out.file("once.safetensors");
    const std::string twice = out.file("twice.safetensors");
    ASSERT_TRUE(write_safetensors(**src, once));
    auto a = open_safetensors(once);
    ASSERT_TRUE(a);
    ASSERT_TRUE(write_safetensors(**a, twice));
    // Our own output is a fixed point, byte for byte (header included).
    EXPECT_EQ(hurray::test::read_all(once), hurray::test::read_all(twice));
    // And every tensor's bytes equal the Python file's.
    for (size_t i = 0; i < (*src)->tensor_count(); ++i) {
        const uint64_t size = (*src)->tensor(i).descriptor.buffers[0].byte_size;
        Bytes x(size);
        Bytes y(size);
        ASSERT_TRUE((*src)->read(i, 0, 0, x));
        ASSERT_TRUE((*a)->read(i, 0, 0, y));
        EXPECT_EQ(x, y) << (*src)->tensor(i).name;
    }
}

TEST_F(PythonFiles, RoundTripThroughHrryFileIsByteExact) {
    TempDir out;
    auto src = open_safetensors(path("all"));
    ASSERT_TRUE(src) << src.error().to_string();
    const std::string hrry = out.file("all.hrry");
    const std::string direct = out.file("direct.safetensors");
    const std::string back = out.file("back.safetensors");
    // SafeTensors -> HRRYFILE (write() by extension) -> SafeTensors.
    auto r1 = write(**src, hrry);
    ASSERT_TRUE(r1) << r1.error().to_string();
    EXPECT_EQ(r1->from, Format::kSafeTensors);
    EXPECT_EQ(r1->to, Format::kHrryFile);
    auto h = open_source(hrry);
    ASSERT_TRUE(h) << h.error().to_string();
    EXPECT_EQ((*h)->format(), Format::kHrryFile);
    EXPECT_TRUE(compare_sources(**src, **h)) << "values kept in the HRRYFILE";
    EXPECT_EQ((*h)->kv(), (*src)->kv()) << "__metadata__ kept as string KV, in order";
    ConvertOptions opt;
    opt.verify = true;
    auto r2 = write(**h, back, opt);
    ASSERT_TRUE(r2) << r2.error().to_string();
    EXPECT_EQ(r2->to, Format::kSafeTensors);
    EXPECT_TRUE(r2->verified);
    expect_python_accepts(back, "all");
    // Byte for byte the file the SafeTensors source writes directly: same header (order,
    // dtypes, shapes, offsets, metadata) and the same tensor bytes.
    ASSERT_TRUE(write_safetensors(**src, direct));
    EXPECT_EQ(hurray::test::read_all(back), hurray::test::read_all(direct));
    // And each tensor's bytes are the Python file's.
    auto b = open_safetensors(back);
    ASSERT_TRUE(b);
    for (size_t i = 0; i < (*src)->tensor_count(); ++i) {
        EXPECT_EQ(test::read_all(**src, i, 0), test::read_all(**b, i, 0)) << (*src)->tensor(i).name;
    }
    // convert_file does the same in one call.
    auto r3 = convert_file(hrry, out.file("cf.safetensors"));
    ASSERT_TRUE(r3) << r3.error().to_string();
    EXPECT_EQ(hurray::test::read_all(out.file("cf.safetensors")), hurray::test::read_all(direct));
}

TEST_F(PythonFiles, EveryTruncationIsAnErrorNeverACrash) {
    const Bytes whole = hurray::test::read_all(path("all"));
    TempDir out;
    const std::string p = out.file("cut.safetensors");
    for (size_t n = 0; n < whole.size(); n += (n < 600 ? 1 : 37)) {
        {
            std::ofstream(p, std::ios::binary | std::ios::trunc)
                .write(reinterpret_cast<const char*>(whole.data()),
                       static_cast<std::streamsize>(n));
        }
        auto src = open_safetensors(p);
        ASSERT_FALSE(src) << "prefix of " << n << " bytes";
        EXPECT_TRUE(src.error().has_offset()) << src.error().to_string();
    }
}

// ---------------------------------------------------------------------------------
// Hand-made files: each defect gives its error.

/// A SafeTensors file: the length (or `length_override`), `header`, `data`.
Bytes make_file(const std::string& header, const Bytes& data = {},
                std::optional<uint64_t> length_override = std::nullopt) {
    Bytes b;
    const uint64_t n = length_override.value_or(header.size());
    for (int i = 0; i < 8; ++i) {
        b.push_back(static_cast<uint8_t>(n >> (8 * i)));
    }
    b.insert(b.end(), header.begin(), header.end());
    b.insert(b.end(), data.begin(), data.end());
    return b;
}

Result<std::unique_ptr<TensorSource>> open_bytes(const Bytes& bytes) {
    TempDir dir;
    return open_safetensors(dir.write("x.safetensors", bytes));
}

/// Expects `bytes` to fail opening with `code`, a message containing every `parts`
/// and, when given, the byte offset `offset`.
void expect_error(const Bytes& bytes, ErrorCode code, const std::vector<std::string>& parts,
                  std::optional<uint64_t> offset = std::nullopt) {
    auto src = open_bytes(bytes);
    ASSERT_FALSE(src);
    const Error& e = src.error();
    EXPECT_EQ(e.code(), code) << e.to_string();
    for (const auto& p : parts) {
        EXPECT_NE(e.message().find(p), std::string::npos)
            << "'" << p << "' not in " << e.to_string();
    }
    EXPECT_TRUE(e.has_offset()) << e.to_string();
    if (offset) {
        EXPECT_EQ(e.offset(), *offset) << e.to_string();
    }
}

/// 8 + the position of `needle` in `header` (the file offset of an error there).
uint64_t at(const std::string& header, const std::string& needle) {
    const size_t pos = header.find(needle);
    EXPECT_NE(pos, std::string::npos) << needle;
    return 8 + pos;
}

TEST(SafeTensorsHostile, TooShortAndLengthPastTheEnd) {
    expect_error({}, ErrorCode::kTruncated, {"8"}, 0);
    expect_error({1, 0, 0}, ErrorCode::kTruncated, {"8"}, 0);
    expect_error(make_file("{}", {}, 3), ErrorCode::kTruncated, {"past the end"}, 0);
    expect_error(make_file("{}", {}, UINT64_MAX), ErrorCode::kTruncated, {"past the end"}, 0);
}

TEST(SafeTensorsHostile, HeaderOverTheLimit) {
    // A sparse file just over 100 MiB whose length field claims 100 MiB + 1.
    TempDir dir;
    const std::string p = dir.file("big.safetensors");
    const uint64_t n = kSafeTensorsMaxHeaderBytes + 1;
    {
        const Bytes head = make_file("{", {}, n);
        std::ofstream(p, std::ios::binary)
            .write(reinterpret_cast<const char*>(head.data()),
                   static_cast<std::streamsize>(head.size()));
    }
    std::filesystem::resize_file(p, 8 + n);
    auto src = open_safetensors(p);
    ASSERT_FALSE(src);
    EXPECT_EQ(src.error().code(), ErrorCode::kInvalidFile) << src.error().to_string();
    EXPECT_NE(src.error().message().find("100 MiB"), std::string::npos);
}

TEST(SafeTensorsHostile, BadJsonAndNonObjectHeaders) {
    const std::string bad = R"({"a": {"dtype": "F32",, }})";
    expect_error(make_file(bad), ErrorCode::kInvalidDocument, {"not valid JSON"});
    auto src = open_bytes(make_file(bad));
    ASSERT_FALSE(src);
    EXPECT_GE(src.error().offset(), 8U);
    EXPECT_LE(src.error().offset(), 8 + bad.size());
    expect_error(make_file("[]"), ErrorCode::kInvalidDocument, {"not a JSON object", "array"}, 8);
    expect_error(make_file("\"x\""), ErrorCode::kInvalidDocument, {"not a JSON object"}, 8);
    expect_error(make_file(""), ErrorCode::kInvalidDocument, {"not valid JSON"});
    expect_error(make_file("{\"a\":1} x"), ErrorCode::kInvalidDocument, {"not valid JSON"});
    expect_error(make_file(std::string("{\"\xff\":1}")), ErrorCode::kInvalidDocument, {"JSON"});
    const std::string deep = R"({"a":{"b":[[1]]}})";
    expect_error(make_file(deep), ErrorCode::kInvalidDocument, {"nesting"}, at(deep, "[[") + 1);
    std::string wide = R"({"a":{"dtype":"U8","shape":[)";
    for (int i = 0; i < 65; ++i) wide += i == 0 ? "1" : ",1";
    wide += R"(],"data_offsets":[0,1]}})";
    expect_error(make_file(wide, {0}), ErrorCode::kInvalidDocument, {"64"});
}

TEST(SafeTensorsHostile, OffsetsOverlappingOutOfBoundsReversed) {
    const std::string overlap =
        R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}})";
    expect_error(make_file(overlap, Bytes(8)), ErrorCode::kOverlap, {"'b'", "'a'", "data_offsets"},
                 at(overlap, "\"b\""));
    const std::string same =
        R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})";
    expect_error(make_file(same, Bytes(8)), ErrorCode::kOverlap, {"overlaps"});
    const std::string oob = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[4,8]}})";
    expect_error(make_file(oob, Bytes(7)), ErrorCode::kTruncated,
                 {"'a'", "data_offsets", "past the data area"}, at(oob, "\"data_offsets\""));
    const std::string huge_off =
        R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[18446744073709551612,18446744073709551615]}})";
    expect_error(make_file(huge_off, Bytes(7)), ErrorCode::kTruncated, {"data_offsets"});
    const std::string reversed = R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[4,0]}})";
    expect_error(make_file(reversed, Bytes(8)), ErrorCode::kInvalidFile,
                 {"'a'", "data_offsets", "after end"}, at(reversed, "\"data_offsets\""));
    // Zero-size tensors overlap nothing; gaps between tensors are allowed.
    const std::string ok =
        R"({"z":{"dtype":"F32","shape":[0],"data_offsets":[2,2]},"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[2],"data_offsets":[6,8]}})";
    auto src = open_bytes(make_file(ok, Bytes(8)));
    ASSERT_TRUE(src) << src.error().to_string();
    EXPECT_EQ((*src)->tensor(0).name, "z");
    EXPECT_EQ((*src)->tensor(2).name, "b");
}

TEST(SafeTensorsHostile, WrongSizesAndHugeShapes) {
    const std::string wrong = R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}})";
    expect_error(make_file(wrong, Bytes(24)), ErrorCode::kSizeMismatch, {"'w'", "need 24"},
                 at(wrong, "\"data_offsets\""));
    const std::string huge =
        R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}})";
    expect_error(make_file(huge, Bytes(4)), ErrorCode::kSizeOverflow, {"'w'", "shape"},
                 at(huge, "\"shape\""));
    const std::string huge_bytes =
        R"({"w":{"dtype":"F64","shape":[4611686018427387904],"data_offsets":[0,4]}})";
    expect_error(make_file(huge_bytes, Bytes(4)), ErrorCode::kSizeOverflow, {"'w'"});
    // A zero dimension makes the product 0 even past an overflow.
    const std::string zero =
        R"({"w":{"dtype":"F32","shape":[4294967296,4294967296,0],"data_offsets":[0,0]}})";
    EXPECT_TRUE(open_bytes(make_file(zero)));
    const std::string dynamic =
        R"({"w":{"dtype":"U8","shape":[18446744073709551615],"data_offsets":[0,0]}})";
    expect_error(make_file(dynamic), ErrorCode::kInvalidShape, {"2^64-1"});
    const std::string f4 = R"({"w":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})";
    expect_error(make_file(f4, Bytes(2)), ErrorCode::kSizeMismatch, {"whole number of bytes"});
    const std::string f6 = R"({"w":{"dtype":"F6_E2M3","shape":[2],"data_offsets":[0,2]}})";
    expect_error(make_file(f6, Bytes(2)), ErrorCode::kSizeMismatch, {"whole number of bytes"});
    const std::string negative = R"({"w":{"dtype":"U8","shape":[-1],"data_offsets":[0,0]}})";
    expect_error(make_file(negative), ErrorCode::kInvalidShape, {"'w'", "dimension 0"});
    const std::string fractional = R"({"w":{"dtype":"U8","shape":[1.5],"data_offsets":[0,0]}})";
    expect_error(make_file(fractional), ErrorCode::kInvalidShape, {"dimension 0"});
    const std::string too_big =
        R"({"w":{"dtype":"U8","shape":[18446744073709551616],"data_offsets":[0,0]}})";
    expect_error(make_file(too_big), ErrorCode::kInvalidShape, {"dimension 0"});
}

TEST(SafeTensorsHostile, BadDtypesAndFieldTypes) {
    const std::string unknown = R"({"w":{"dtype":"F7","shape":[1],"data_offsets":[0,1]}})";
    expect_error(make_file(unknown, Bytes(1)), ErrorCode::kUnknownElementType,
                 {"'w'", "dtype", "'F7'"}, at(unknown, "\"dtype\""));
    const std::string fnuz = R"({"w":{"dtype":"F8_E4M3FNUZ","shape":[1],"data_offsets":[0,1]}})";
    expect_error(make_file(fnuz, Bytes(1)), ErrorCode::kUnknownElementType,
                 {"FNUZ", "no Hurray element type"});
    expect_error(make_file(R"({"w":{"dtype":3,"shape":[1],"data_offsets":[0,1]}})", Bytes(1)),
                 ErrorCode::kInvalidFile, {"'w'", "dtype", "not a string"});
    expect_error(make_file(R"({"w":{"shape":[1],"data_offsets":[0,1]}})", Bytes(1)),
                 ErrorCode::kInvalidFile, {"dtype", "missing"});
    expect_error(make_file(R"({"w":{"dtype":"U8","shape":1,"data_offsets":[0,1]}})", Bytes(1)),
                 ErrorCode::kInvalidFile, {"shape", "not an array"});
    expect_error(make_file(R"({"w":{"dtype":"U8","data_offsets":[0,1]}})", Bytes(1)),
                 ErrorCode::kInvalidFile, {"shape", "missing"});
    expect_error(make_file(R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0]}})", Bytes(1)),
                 ErrorCode::kInvalidFile, {"data_offsets", "two"});
    expect_error(make_file(R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0,"1"]}})", Bytes(1)),
                 ErrorCode::kInvalidFile, {"data_offsets"});
    expect_error(make_file(R"({"w":{"dtype":"U8","shape":[1]}})", Bytes(1)),
                 ErrorCode::kInvalidFile, {"data_offsets", "missing"});
    const std::string not_obj = R"({"w":[1,2]})";
    expect_error(make_file(not_obj), ErrorCode::kInvalidFile, {"'w'", "not an object"},
                 at(not_obj, "\"w\""));
}

TEST(SafeTensorsHostile, DuplicateKeysAndBadMetadata) {
    const std::string dup =
        R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"w":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})";
    expect_error(make_file(dup, Bytes(2)), ErrorCode::kDuplicateName, {"'w'", "twice"},
                 8 + dup.rfind("\"w\""));
    // The same key spelt with an escape is the same key.
    const std::string dup_escaped =
        R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"\u0077":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})";
    expect_error(make_file(dup_escaped, Bytes(2)), ErrorCode::kDuplicateName, {"twice"});
    const std::string dup_field =
        R"({"w":{"dtype":"U8","dtype":"I8","shape":[1],"data_offsets":[0,1]}})";
    expect_error(make_file(dup_field, Bytes(1)), ErrorCode::kDuplicateName, {"'dtype'", "twice"});
    const std::string meta_num = R"({"__metadata__":{"a":"x","n":3}})";
    expect_error(make_file(meta_num), ErrorCode::kInvalidFile,
                 {"__metadata__", "'n'", "not a string"}, at(meta_num, "\"n\""));
    expect_error(make_file(R"({"__metadata__":["a"]})"), ErrorCode::kInvalidFile,
                 {"__metadata__", "not an object"}, 8 + 1);
    expect_error(make_file(R"({"__metadata__":{"":"empty key"}})"), ErrorCode::kInvalidName,
                 {"__metadata__"});
    // Metadata order is the header's, escapes decoded.
    auto src = open_bytes(make_file(R"({"__metadata__":{"z":"1","a\n":"2","m":"\u00e9"}})"));
    ASSERT_TRUE(src) << src.error().to_string();
    const auto& entries = (*src)->kv().entries();
    ASSERT_EQ(entries.size(), 3U);
    EXPECT_EQ(entries[0].key, "z");
    EXPECT_EQ(entries[1].key, "a\n");
    EXPECT_EQ(*entries[2].value.as_string(), "\xc3\xa9");
}

TEST(SafeTensorsHostile, BoolBytesOtherThanZeroOrOne) {
    const std::string h = R"({"b":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}})";
    auto src = open_bytes(make_file(h, {1, 2, 0}));
    ASSERT_TRUE(src) << src.error().to_string();
    std::array<uint8_t, 1> out{};
    auto s = (*src)->read(0, 0, 0, out);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code(), ErrorCode::kInvalidData);
    EXPECT_EQ(s.error().offset(), 8 + h.size() + 1);
    EXPECT_NE(s.error().message().find("'b'"), std::string::npos);
}

TEST(SafeTensorsRead, ReadsOutsideATensorAreRefused) {
    const std::string h = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})";
    auto src = open_bytes(make_file(h, {1, 2, 3, 4}));
    ASSERT_TRUE(src);
    std::array<uint8_t, 4> out{};
    EXPECT_EQ((*src)->read(0, 0, 1, out).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ((*src)->read(1, 0, 0, out).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ((*src)->read(0, 1, 0, out).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ((*src)->read(0, 0, UINT64_MAX, out).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_FALSE((*src)->view(1, 0));
    EXPECT_FALSE((*src)->find("nope"));
    ASSERT_TRUE((*src)->read(0, 0, 0, out));
    EXPECT_EQ(out, (std::array<uint8_t, 4>{1, 2, 3, 4}));
}

TEST(SafeTensorsRead, MissingFileIsAnIoError) {
    auto src = open_safetensors("/nonexistent/dir/x.safetensors");
    ASSERT_FALSE(src);
    EXPECT_EQ(src.error().code(), ErrorCode::kIoError);
}

// ---------------------------------------------------------------------------------
// The writer against sources made in memory.

/// Tensors and KV held in memory.
class BytesSource final : public TensorSource {
public:
    void add(std::string name, TensorDescriptor d, Bytes bytes) {
        tensors_.push_back({std::move(name), std::move(d)});
        data_.push_back(std::move(bytes));
    }
    KvMetadata& mutable_kv() { return kv_; }

    [[nodiscard]] Format format() const noexcept override { return Format::kHrryFile; }
    [[nodiscard]] size_t tensor_count() const noexcept override { return tensors_.size(); }
    [[nodiscard]] const SourceTensor& tensor(size_t i) const noexcept override {
        return tensors_[i];
    }
    [[nodiscard]] const KvMetadata& kv() const noexcept override { return kv_; }
    [[nodiscard]] Status read(size_t i, size_t buffer, uint64_t offset,
                              std::span<uint8_t> out) const override {
        if (i >= data_.size() || buffer != 0 || offset + out.size() > data_[i].size()) {
            return Error(ErrorCode::kInvalidArgument, "bad read");
        }
        std::copy_n(data_[i].begin() + static_cast<std::ptrdiff_t>(offset), out.size(),
                    out.begin());
        return Status::success();
    }

private:
    std::vector<SourceTensor> tensors_;
    std::vector<Bytes> data_;
    KvMetadata kv_;
};

TensorDescriptor dense(ElementType t, Shape shape, uint64_t bytes) {
    TensorDescriptor d;
    d.element_type = t;
    d.shape = std::move(shape);
    d.buffers = {BufferHandle{.byte_size = bytes}};
    return d;
}

TEST(SafeTensorsWrite, BoolIsUnpackedToOneBytePerElement) {
    BytesSource src;
    src.add("b", dense(ElementType::kBool, {10}, 2), {0b10110101, 0b10});
    TempDir dir;
    const std::string p = dir.file("b.safetensors");
    ASSERT_TRUE(write_safetensors(src, p));
    const Bytes file = hurray::test::read_all(p);
    const Bytes data(file.end() - 10, file.end());
    EXPECT_EQ(data, (Bytes{1, 0, 1, 0, 1, 1, 0, 1, 0, 1}));
    EXPECT_EQ((file.size() - 10) % 8, 0U) << "data starts 8-byte aligned";
    auto back = open_safetensors(p);
    ASSERT_TRUE(back);
    Bytes packed(2);
    ASSERT_TRUE((*back)->read(0, 0, 0, packed));
    EXPECT_EQ(packed, (Bytes{0b10110101, 0b10}));
}

TEST(SafeTensorsWrite, KvValuesGetTheirDocumentedTextForms) {
    BytesSource src;
    src.add("x", dense(ElementType::kFloat32, {}, 4), Bytes(4));
    KvMetadata& kv = src.mutable_kv();
    ASSERT_TRUE(kv.add("s", KvValue::string("text \"q\"")));
    ASSERT_TRUE(kv.add("i", KvValue::int64(-42)));
    ASSERT_TRUE(kv.add("u", KvValue::uint64(UINT64_MAX)));
    ASSERT_TRUE(kv.add("f", KvValue::float64(0.1)));
    ASSERT_TRUE(kv.add("big", KvValue::float64(1e300)));
    ASSERT_TRUE(kv.add("inf", KvValue::float64(-std::numeric_limits<double>::infinity())));
    ASSERT_TRUE(kv.add("nan", KvValue::float64(std::nan(""))));
    ASSERT_TRUE(kv.add("t", KvValue::boolean(true)));
    ASSERT_TRUE(kv.add("bytes", KvValue::bytes({0x00, 0xAB, 0xFF})));
    ASSERT_TRUE(kv.add("ai", KvValue::int64_array({1, -2, 3})));
    ASSERT_TRUE(kv.add("as", KvValue::string_array({"a", "b\"c"})));
    ASSERT_TRUE(kv.add("af", KvValue::float64_array({1.5, std::nan(""), 2.0})));
    ASSERT_TRUE(kv.add("ab", KvValue::bool_array({true, false})));
    ASSERT_TRUE(kv.add("abytes", KvValue::bytes_array({{0x01}, {}})));
    ASSERT_TRUE(kv.add("empty", KvValue::uint64_array({})));
    TempDir dir;
    const std::string p = dir.file("kv.safetensors");
    auto s = write_safetensors(src, p);
    ASSERT_TRUE(s) << s.error().to_string();
    auto back = open_safetensors(p);
    ASSERT_TRUE(back) << back.error().to_string();
    const std::vector<std::pair<std::string, std::string>> want = {{"s", "text \"q\""},
                                                                   {"i", "-42"},
                                                                   {"u", "18446744073709551615"},
                                                                   {"f", "0.1"},
                                                                   {"big", "1e+300"},
                                                                   {"inf", "-inf"},
                                                                   {"nan", "nan"},
                                                                   {"t", "true"},
                                                                   {"bytes", "00abff"},
                                                                   {"ai", "[1,-2,3]"},
                                                                   {"as", R"(["a","b\"c"])"},
                                                                   {"af", R"([1.5,"nan",2])"},
                                                                   {"ab", "[true,false]"},
                                                                   {"abytes", R"(["01",""])"},
                                                                   {"empty", "[]"}};
    const auto& entries = (*back)->kv().entries();
    ASSERT_EQ(entries.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(entries[i].key, want[i].first);
        ASSERT_NE(entries[i].value.as_string(), nullptr);
        EXPECT_EQ(*entries[i].value.as_string(), want[i].second) << want[i].first;
    }
}

TEST(SafeTensorsWrite, WhatSafeTensorsCannotHoldIsRefusedByName) {
    TempDir dir;
    const std::string p = dir.file("out.safetensors");
    auto expect_refused = [&](BytesSource& src, ErrorCode code, const std::string& part) {
        auto s = write_safetensors(src, p);
        ASSERT_FALSE(s);
        EXPECT_EQ(s.error().code(), code) << s.error().to_string();
        EXPECT_NE(s.error().message().find(part), std::string::npos) << s.error().to_string();
        EXPECT_FALSE(std::filesystem::exists(p)) << "no partial output";
        EXPECT_EQ(dir.list().size(), 0U) << "no temporary file left";
    };
    {
        BytesSource src;
        src.add("ok", dense(ElementType::kFloat32, {1}, 4), Bytes(4));
        auto d = dense(ElementType::kInt4, {4}, 2);
        d.quantization = QuantizationDescriptor{};
        src.add("q", d, Bytes(2));
        expect_refused(src, ErrorCode::kUnsupported, "tensor 'q': it is quantized");
    }
    {
        BytesSource src;
        auto d = dense(ElementType::kFloat32, {2, 2}, 16);
        d.layout = ColumnMajorLayout{};
        src.add("cm", d, Bytes(16));
        expect_refused(src, ErrorCode::kUnsupported, "tensor 'cm': its layout is not row-major");
    }
    {
        BytesSource src;
        auto d = dense(ElementType::kFloat32, {2}, 0);
        d.layout = CompositeLayout{};
        d.buffers.clear();
        src.add("comp", d, {});
        expect_refused(src, ErrorCode::kUnsupported, "tensor 'comp': it is a composite");
    }
    {
        BytesSource src;
        src.add("i4", dense(ElementType::kInt4, {4}, 2), Bytes(2));
        expect_refused(src, ErrorCode::kUnsupported, "tensor 'i4': element type int4");
    }
    {
        BytesSource src;
        src.add("f4", dense(ElementType::kFloat4E2M1, {3}, 2), Bytes(2));
        expect_refused(src, ErrorCode::kUnsupported, "whole bytes");
    }
    {
        BytesSource src;
        src.add("__metadata__", dense(ElementType::kUInt8, {1}, 1), Bytes(1));
        expect_refused(src, ErrorCode::kInvalidName, "reserved");
    }
    {
        BytesSource src;
        src.add("short", dense(ElementType::kFloat32, {4}, 8), Bytes(8));
        expect_refused(src, ErrorCode::kSizeMismatch, "tensor 'short'");
    }
    {
        BytesSource src;
        src.add("x", dense(ElementType::kUInt8, {1}, 1), Bytes(1));
        ASSERT_TRUE(src.mutable_kv().add("p", KvValue::private_value(KvPrivateValue{0xF1, {1}})));
        expect_refused(src, ErrorCode::kUnsupported, "KV 'p'");
    }
}

TEST(SafeTensorsWrite, NonDenseTensorsNeedDequantize) {
    TempDir dir;
    const std::string p = dir.file("model.safetensors");
    test::MemorySource mem(test::model_tensors(), true);
    mem.metadata = test::model_kv();
    // Without dequantize: the first non-dense tensor is named, nothing is written.
    auto s = write_safetensors(mem, p);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code(), ErrorCode::kUnsupported);
    EXPECT_NE(s.error().message().find("tensor 'quant.q4': it is quantized"), std::string::npos)
        << s.error().to_string();
    EXPECT_NE(s.error().message().find("--dequantize"), std::string::npos);
    EXPECT_EQ(dir.list().size(), 0U);
    // With it (through write() and directly): dense tensors, equal to dequantized_source's.
    for (const bool direct : {false, true}) {
        for (const ElementType type :
             {ElementType::kFloat32, ElementType::kFloat16, ElementType::kBFloat16}) {
            SCOPED_TRACE(std::string(type_name(type)) + (direct ? " direct" : " write()"));
            ConvertOptions opt;
            opt.dequantize = true;
            opt.dequantize_type = type;
            if (direct) {
                auto w = write_safetensors(mem, p, opt);
                ASSERT_TRUE(w) << w.error().to_string();
            } else {
                opt.verify = true;
                auto w = write(mem, p, opt);
                ASSERT_TRUE(w) << w.error().to_string();
                EXPECT_TRUE(w->verified);
            }
            auto back = open_safetensors(p);
            ASSERT_TRUE(back) << back.error().to_string();
            auto want = dequantized_source(mem, type);
            ASSERT_TRUE(want);
            ASSERT_EQ((*back)->tensor_count(), (*want)->tensor_count());
            for (size_t i = 0; i < (*want)->tensor_count(); ++i) {
                EXPECT_EQ((*back)->tensor(i).name, (*want)->tensor(i).name);
                EXPECT_EQ((*back)->tensor(i).descriptor.element_type,
                          (*want)->tensor(i).descriptor.element_type);
                EXPECT_EQ((*back)->tensor(i).descriptor.shape, (*want)->tensor(i).descriptor.shape);
                EXPECT_EQ(test::read_all(**back, i, 0), test::read_all(**want, i, 0))
                    << (*want)->tensor(i).name;
            }
            EXPECT_TRUE(compare_sources(**want, **back));
            EXPECT_EQ(*(*back)->kv().get_string("general.architecture"), "test");
            EXPECT_EQ(*(*back)->kv().get_string("n"), "42");
            EXPECT_EQ(*(*back)->kv().get_string("dims"), "[4096,-1]");
        }
    }
}

TEST(SafeTensorsWrite, ASourceReadErrorLeavesNoFile) {
    BytesSource src;
    // Declares 8 bytes, holds 4: the second chunk's read fails.
    TensorDescriptor d = dense(ElementType::kUInt8, {8}, 8);
    src.add("x", d, Bytes(4));
    TempDir dir;
    const std::string p = dir.file("out.safetensors");
    ConvertOptions opt;
    opt.chunk_bytes = 4;
    EXPECT_FALSE(write_safetensors(src, p, opt));
    EXPECT_EQ(dir.list().size(), 0U);
}

TEST(SafeTensorsDtypes, NamesMapBothWays) {
    for (const char* n : {"F64",     "F32",     "F16", "BF16",    "I64",     "I32",  "I16",
                          "I8",      "U64",     "U32", "U16",     "U8",      "BOOL", "F8_E4M3",
                          "F8_E5M2", "F8_E8M0", "F4",  "F6_E2M3", "F6_E3M2", "C64"}) {
        const auto t = safetensors_element_type(n);
        ASSERT_TRUE(t) << n;
        EXPECT_EQ(safetensors_dtype_name(*t), n);
    }
    EXPECT_FALSE(safetensors_element_type("F8_E4M3FNUZ"));
    EXPECT_FALSE(safetensors_element_type("f32"));
    EXPECT_TRUE(safetensors_dtype_name(ElementType::kInt4).empty());
    EXPECT_TRUE(safetensors_dtype_name(ElementType::kComplex128).empty());
}

}  // namespace
}  // namespace hurray::convert
