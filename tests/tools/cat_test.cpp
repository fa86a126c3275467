// `hurray cat`: values of files written here, printed like NumPy, compared exactly.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_support.hpp"
#include "hurray/cli.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/stream_writer.hpp"
#include "hurray/numpy_format.hpp"

namespace {

using hurray::clitest::Ran;
using hurray::clitest::run_cli;

template <typename T>
std::vector<uint8_t> le_bytes(const std::vector<T>& values) {
    std::vector<uint8_t> out(values.size() * sizeof(T));
    for (size_t i = 0; i < values.size(); ++i) {
        uint64_t bits = 0;
        if constexpr (sizeof(T) == 8) {
            bits = std::bit_cast<uint64_t>(values[i]);
        } else if constexpr (sizeof(T) == 4) {
            bits = std::bit_cast<uint32_t>(values[i]);
        } else if constexpr (sizeof(T) == 2) {
            bits = std::bit_cast<uint16_t>(values[i]);
        } else {
            bits = std::bit_cast<uint8_t>(values[i]);
        }
        for (size_t b = 0; b < sizeof(T); ++b) {
            out[i * sizeof(T) + b] = static_cast<uint8_t>(bits >> (8 * b));
        }
    }
    return out;
}

// Packs signed 4-bit values, low nibble first.
std::vector<uint8_t> int4_bytes(const std::vector<int>& values) {
    std::vector<uint8_t> out((values.size() + 1) / 2, 0);
    for (size_t i = 0; i < values.size(); ++i) {
        const auto nib = static_cast<uint8_t>(values[i] & 0xF);
        out[i / 2] |= static_cast<uint8_t>((i % 2 == 0) ? nib : nib << 4);
    }
    return out;
}

class CatTest : public ::testing::Test {
protected:
    void SetUp() override {
        path_ = dir_.file("t.hrry");
        auto w = hurray::FileWriter::create_file(path_);
        ASSERT_TRUE(w) << w.error().to_string();
        auto add = [&](const std::string& name, const hurray::Result<hurray::TensorDescriptor>& d,
                       const std::vector<std::vector<uint8_t>>& bufs) {
            ASSERT_TRUE(d) << d.error().to_string();
            std::vector<std::span<const uint8_t>> spans(bufs.begin(), bufs.end());
            auto st = w->add_tensor(name, *d, spans);
            ASSERT_TRUE(st) << name << ": " << st.error().to_string();
        };
        using hurray::ElementType;
        add("f32", hurray::make_dense(ElementType::kFloat32, {2, 3}),
            {le_bytes<float>({1.0F, 2.5F, -3.0F, 0.125F, 100.0F, 7.0F})});
        add("f16", hurray::make_dense(ElementType::kFloat16, {4}),
            {le_bytes<uint16_t>({0x3800, 0x3E00, 0xC000, 0x2E66})});
        add("i8", hurray::make_dense(ElementType::kInt8, {5}), {le_bytes<int8_t>({-128, 0, 5, 127, -1})});
        add("i4", hurray::make_dense(ElementType::kInt4, {2, 3}), {int4_bytes({-8, 7, 0, -1, 3, -4})});
        // Per-block int4, blocks of 2 along axis 1, float16 scales 0.5, 1, 2, 0.25.
        add("q4", hurray::make_per_block_quantized(ElementType::kInt4, {2, 4}, 1, 2),
            {int4_bytes({1, 2, 3, 4, -1, -2, -3, -4}), le_bytes<uint16_t>({0x3800, 0x3C00, 0x4000, 0x3400})});
        // CSR [[1, 0, 2], [0, 0, 0], [0, 3, 0]].
        add("csr", hurray::make_csr(ElementType::kFloat32, 3, 3, 3),
            {le_bytes<float>({1.0F, 2.0F, 3.0F}), le_bytes<uint64_t>({0, 2, 1}), le_bytes<uint64_t>({0, 2, 2, 3})});
        std::vector<float> big(2000);
        for (size_t i = 0; i < big.size(); ++i) {
            big[i] = static_cast<float>(i);
        }
        add("big", hurray::make_dense(ElementType::kFloat32, {40, 50}), {le_bytes(big)});
        add("flags", hurray::make_dense(ElementType::kBool, {3}), {{0x05}});
        // A partition composite [2, 3] of a top row [1, 3] and a bottom row [1, 3].
        {
            auto head = hurray::make_composite_head(ElementType::kInt32, {2, 3}, hurray::CompositionRule::kPartition, 2);
            ASSERT_TRUE(head) << head.error().to_string();
            auto top = *hurray::make_dense(ElementType::kInt32, {1, 3});
            top.shard = hurray::ShardDescriptor{{2, 3}, {0, 0}};
            auto bottom = top;
            bottom.shard = hurray::ShardDescriptor{{2, 3}, {1, 0}};
            const auto tb = le_bytes<int32_t>({1, 2, 3});
            const auto bb = le_bytes<int32_t>({-4, 50, 6});
            const std::vector<std::span<const uint8_t>> ts = {tb};
            const std::vector<std::span<const uint8_t>> bs = {bb};
            const hurray::FileTensorInput members[] = {{"part.top", &top, ts}, {"part.bottom", &bottom, bs}};
            auto st = w->add_composite("part", *head, members);
            ASSERT_TRUE(st) << st.error().to_string();
        }
        auto st = w->finish();
        ASSERT_TRUE(st) << st.error().to_string();
    }

    hurray::clitest::TempDir dir_;
    std::string path_;
};

// `hurray cat FILE <args>` succeeds and prints exactly `out`.
struct CatCase {
    const char* name;               ///< the test's name
    std::vector<std::string> args;  ///< after `cat FILE`
    const char* out;                ///< the whole standard output
};

class CatPrints : public CatTest, public ::testing::WithParamInterface<CatCase> {};

TEST_P(CatPrints, ExactText) {
    std::vector<std::string> args = {"cat", path_};
    args.insert(args.end(), GetParam().args.begin(), GetParam().args.end());
    const Ran r = run_cli(args);
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, GetParam().out);
}

INSTANTIATE_TEST_SUITE_P(
    CatTest, CatPrints,
    ::testing::Values(
        CatCase{"Float32", {"f32"}, "[[  1.      2.5    -3.   ]\n [  0.125 100.      7.   ]]\n"},
        CatCase{"Float16UsesHalfShortestDigits", {"f16"}, "[ 0.5  1.5 -2.   0.1]\n"},
        CatCase{"Int8", {"i8"}, "[-128    0    5  127   -1]\n"},
        CatCase{"Int4", {"i4"}, "[[-8  7  0]\n [-1  3 -4]]\n"},
        CatCase{"Bool", {"flags"}, "[ True False  True]\n"},
        CatCase{"PerBlockInt4IsDequantized", {"q4"}, "[[ 0.5   1.    3.    4.  ]\n [-2.   -4.   -0.75 -1.  ]]\n"},
        CatCase{"RawPrintsStoredCodes", {"q4", "--raw"}, "[[ 1  2  3  4]\n [-1 -2 -3 -4]]\n"},
        CatCase{"CsrIsDensified", {"csr"}, "[[1. 0. 2.]\n [0. 0. 0.]\n [0. 3. 0.]]\n"},
        CatCase{"CompositeIsMaterialized", {"part"}, "[[ 1  2  3]\n [-4 50  6]]\n"},
        // The shown values span 1 .. 1999 (a ratio above 1000): NumPy switches to
        // scientific notation.
        CatCase{"LargeTensorIsSummarised", {"big"},
                "[[0.000e+00 1.000e+00 2.000e+00 ... 4.700e+01 4.800e+01 4.900e+01]\n"
                " [5.000e+01 5.100e+01 5.200e+01 ... 9.700e+01 9.800e+01 9.900e+01]\n"
                " [1.000e+02 1.010e+02 1.020e+02 ... 1.470e+02 1.480e+02 1.490e+02]\n"
                " ...\n"
                " [1.850e+03 1.851e+03 1.852e+03 ... 1.897e+03 1.898e+03 1.899e+03]\n"
                " [1.900e+03 1.901e+03 1.902e+03 ... 1.947e+03 1.948e+03 1.949e+03]\n"
                " [1.950e+03 1.951e+03 1.952e+03 ... 1.997e+03 1.998e+03 1.999e+03]]\n"},
        CatCase{"IndexSelectsASubTensor", {"f32", "--index", "1"}, "[  0.125 100.      7.   ]\n"},
        CatCase{"IndexSelectsAnElement", {"f32", "--index", "1,1"}, "100.0\n"},
        CatCase{"IndexSelectsARowOfALargeTensor", {"big", "--index", "39"},
                "[1950. 1951. 1952. 1953. 1954. 1955. 1956. 1957. 1958. 1959. 1960. 1961.\n"
                " 1962. 1963. 1964. 1965. 1966. 1967. 1968. 1969. 1970. 1971. 1972. 1973.\n"
                " 1974. 1975. 1976. 1977. 1978. 1979. 1980. 1981. 1982. 1983. 1984. 1985.\n"
                " 1986. 1987. 1988. 1989. 1990. 1991. 1992. 1993. 1994. 1995. 1996. 1997.\n"
                " 1998. 1999.]\n"},
        CatCase{"LimitCapsTheElements", {"f32", "--limit", "4"},
                "[ 1.     2.5   -3.     0.125]\n(the first 4 of 6 elements, flattened)\n"},
        CatCase{"LimitOfEveryElementPrintsThemAll", {"f32", "--limit", "6"},
                "[[  1.      2.5    -3.   ]\n [  0.125 100.      7.   ]]\n"}),
    [](const ::testing::TestParamInfo<CatCase>& info) { return std::string(info.param.name); });

TEST_F(CatTest, IndexOutOfRangeIsAUsageError) {
    Ran r = run_cli({"cat", path_, "f32", "--index", "2"});
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("out of range"), std::string::npos) << r.err;
    r = run_cli({"cat", path_, "f32", "--index", "0,0,0"});
    EXPECT_EQ(r.rc, 2);
    r = run_cli({"cat", path_, "f32", "--index", "x"});
    EXPECT_EQ(r.rc, 2);
}

TEST_F(CatTest, MissingTensorAndBadInput) {
    Ran r = run_cli({"cat", path_, "nope"});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("nope"), std::string::npos);
    r = run_cli({"cat", dir_.file("missing.hrry"), "f32"});
    EXPECT_EQ(r.rc, 1);
    r = run_cli({"cat", path_});
    EXPECT_EQ(r.rc, 2);
    r = run_cli({"cat", "--help"});
    EXPECT_EQ(r.rc, 0);
    EXPECT_NE(r.out.find("--limit"), std::string::npos);
}

TEST_F(CatTest, StreamTensorsByPosition) {
    const std::string stream = dir_.file("s.hrrs");
    {
        hurray::MemorySink sink;
        hurray::StreamWriter writer(sink);
        auto d = hurray::make_dense(hurray::ElementType::kInt8, {3});
        std::vector<uint8_t> a = {1, 2, 3};
        std::vector<uint8_t> b = {0xFF, 0, 9};
        std::vector<std::span<const uint8_t>> sa = {a};
        std::vector<std::span<const uint8_t>> sb = {b};
        ASSERT_TRUE(writer.write_tensor(*d, sa));
        ASSERT_TRUE(writer.write_tensor(*d, sb));
        ASSERT_TRUE(writer.finish());
        hurray::clitest::write_all_file(stream, sink.bytes());
    }
    Ran r = run_cli({"cat", stream, "tensor_1"});
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, "[-1  0  9]\n");
    r = run_cli({"cat", stream, "tensor_2"});
    EXPECT_EQ(r.rc, 1);
    r = run_cli({"cat", stream, "w"});
    EXPECT_EQ(r.rc, 2);
}

// The formatter alone: NumPy's choices on a few classic arrays.
hurray::Result<std::string> fmt_doubles(std::vector<uint64_t> shape, const std::vector<double>& v) {
    return hurray::cli::format_numpy(shape, hurray::cli::ValueKind::kFloat, 64,
                                     [&](std::span<const uint64_t> idx) -> hurray::Result<hurray::cli::Scalar> {
                                         uint64_t k = 0;
                                         for (size_t a = 0; a < idx.size(); ++a) {
                                             k = k * shape[a] + idx[a];
                                         }
                                         return hurray::cli::Scalar{v[k], 0, 0};
                                     });
}

TEST(NumpyFormat, FloatChoices) {
    EXPECT_EQ(*fmt_doubles({3}, {1e-5, 1.0, 2.0}), "[1.e-05 1.e+00 2.e+00]");
    EXPECT_EQ(*fmt_doubles({2}, {1.5e-5, 1.0}), "[1.5e-05 1.0e+00]");
    EXPECT_EQ(*fmt_doubles({3}, {0.1, 0.2, 0.30000000000000004}), "[0.1 0.2 0.3]");
    EXPECT_EQ(*fmt_doubles({2}, {1.0 / 3.0, 2.0}), "[0.33333333 2.        ]");
    EXPECT_EQ(*fmt_doubles({3}, {1.0, std::nan(""), -INFINITY}), "[  1.  nan -inf]");
    EXPECT_EQ(*fmt_doubles({0, 3}, {}), "[]");
    std::vector<double> r(30);
    for (size_t i = 0; i < r.size(); ++i) {
        r[i] = static_cast<double>(i);
    }
    EXPECT_EQ(*fmt_doubles({30}, r),
              "[ 0.  1.  2.  3.  4.  5.  6.  7.  8.  9. 10. 11. 12. 13. 14. 15. 16. 17.\n"
              " 18. 19. 20. 21. 22. 23. 24. 25. 26. 27. 28. 29.]");
    EXPECT_EQ(*fmt_doubles({2, 1, 2}, {1, 2, 3, 4}), "[[[1. 2.]]\n\n [[3. 4.]]]");
}

}  // namespace
