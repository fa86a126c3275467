// SPDX-License-Identifier: Apache-2.0
// NumPy .npy / .npz in and out: files written by NumPy itself are read (values compared
// element by element with the expectations NumPy writes beside them), our outputs are
// loaded by NumPy and compared there; hostile inputs are errors naming field and offset.
#include "hurray/convert/numpy.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "convert_test_support.hpp"
#include "hurray/convert/hrryfile.hpp"
#include "io_test_util.hpp"
#include "python_writers.hpp"
#include "test_paths.hpp"

namespace hurray::convert {
namespace {

using hurray::test::TempDir;
using test::MemorySource;
using test::MemTensor;

using hurray::test::kPython;
using hurray::test::writers_dir;

/// Why NumPy cannot be used, or empty when it can.
std::string numpy_missing() { return hurray::test::python_numpy_missing(); }

/// Runs a script of tests/convert/writers with `args`; its exit status and output.
std::pair<int, std::string> run_script(const std::string& script, const std::string& args,
                                       const TempDir& dir) {
    const std::string log = dir.file("python.log");
    const std::string cmd = std::string(kPython) + " " + writers_dir() + "/" + script + " " + args +
                            " > " + log + " 2>&1";
    const int rc = std::system(cmd.c_str());
    std::ifstream is(log);
    std::string out((std::istreambuf_iterator<char>(is)), {});
    return {rc, out};
}

#define REQUIRE_NUMPY()                          \
    do {                                         \
        const std::string why = numpy_missing(); \
        if (!why.empty()) GTEST_SKIP() << why;   \
    } while (0)

std::vector<uint8_t> file_bytes(const std::string& path) {
    std::ifstream is(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(is), {}};
}

/// The presented bytes of tensor `i`, whole.
std::vector<uint8_t> presented(const TensorSource& s, size_t i) { return test::read_all(s, i, 0); }

/// Checks tensor `i` against NumPy's expectation files `<stem>.c` / `<stem>.f`, element
/// by element.
void expect_values(const TensorSource& s, size_t i, const std::string& stem) {
    const auto& d = s.tensor(i).descriptor;
    const bool col = std::holds_alternative<ColumnMajorLayout>(d.layout);
    const std::vector<uint8_t> want = file_bytes(stem + (col ? ".f" : ".c"));
    const std::vector<uint8_t> got = presented(s, i);
    if (d.element_type == ElementType::kBool) {
        ASSERT_EQ(got.size(), (want.size() + 7) / 8) << stem;
        for (size_t k = 0; k < want.size(); ++k) {
            ASSERT_EQ((got[k / 8] >> (k % 8)) & 1U, want[k] != 0 ? 1U : 0U)
                << stem << " element " << k;
        }
        for (size_t k = want.size(); k < got.size() * 8; ++k) {
            ASSERT_EQ((got[k / 8] >> (k % 8)) & 1U, 0U) << stem << " padding bit " << k;
        }
        return;
    }
    ASSERT_EQ(got.size(), want.size()) << stem;
    const uint32_t width = d.element_bits() / 8;
    for (size_t k = 0; k < want.size(); k += width) {
        ASSERT_TRUE(std::equal(got.begin() + static_cast<std::ptrdiff_t>(k),
                               got.begin() + static_cast<std::ptrdiff_t>(k + width),
                               want.begin() + static_cast<std::ptrdiff_t>(k)))
            << stem << " element " << k / width;
    }
}

class NumpyFiles : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        if (!numpy_missing().empty()) {
            return;
        }
        dir_ = new TempDir();
        auto [rc, out] = run_script("numpy_arrays.py", dir_->path().string(), *dir_);
        ASSERT_EQ(rc, 0) << out;
    }
    static void TearDownTestSuite() {
        delete dir_;
        dir_ = nullptr;
    }
    void SetUp() override { REQUIRE_NUMPY(); }
    static std::string file(const std::string& name) { return dir_->file(name); }
    static TempDir* dir_;
};
TempDir* NumpyFiles::dir_ = nullptr;

TEST_F(NumpyFiles, ReadsEveryNumericDtype) {
    const std::vector<std::pair<std::string, ElementType>> cases = {
        {"b1", ElementType::kBool},
        {"int8", ElementType::kInt8},
        {"uint8", ElementType::kUInt8},
        {"int16", ElementType::kInt16},
        {"uint16", ElementType::kUInt16},
        {"int32", ElementType::kInt32},
        {"uint32", ElementType::kUInt32},
        {"int64", ElementType::kInt64},
        {"uint64", ElementType::kUInt64},
        {"float16", ElementType::kFloat16},
        {"float32", ElementType::kFloat32},
        {"float64", ElementType::kFloat64},
        {"complex64", ElementType::kComplex64},
        {"complex128", ElementType::kComplex128},
        {"scalar", ElementType::kFloat64},
        {"empty", ElementType::kFloat32},
        {"v2", ElementType::kInt32},
        {"v3", ElementType::kInt32},
    };
    for (const auto& [name, type] : cases) {
        SCOPED_TRACE(name);
        auto src = open_source(file(name + ".npy"));
        ASSERT_TRUE(src.ok()) << src.error().to_string();
        EXPECT_EQ((*src)->format(), Format::kNpy);
        ASSERT_EQ((*src)->tensor_count(), 1U);
        EXPECT_EQ((*src)->tensor(0).name, name);
        EXPECT_EQ((*src)->tensor(0).descriptor.element_type, type);
        EXPECT_TRUE(std::holds_alternative<RowMajorLayout>((*src)->tensor(0).descriptor.layout));
        expect_values(**src, 0, file(name));
    }
    auto s = open_npy(file("float32.npy"));
    ASSERT_TRUE(s.ok());
    EXPECT_EQ((*s)->tensor(0).descriptor.shape, (Shape{3, 4}));
    auto sc = open_npy(file("scalar.npy"));
    ASSERT_TRUE(sc.ok());
    EXPECT_EQ((*sc)->tensor(0).descriptor.shape, Shape{});
}

TEST_F(NumpyFiles, FortranOrderIsColumnMajorOverTheSameBytes) {
    for (const std::string name : {"fortran", "fortran_b1", "big_fortran_u2"}) {
        SCOPED_TRACE(name);
        auto src = open_npy(file(name + ".npy"));
        ASSERT_TRUE(src.ok()) << src.error().to_string();
        EXPECT_TRUE(std::holds_alternative<ColumnMajorLayout>((*src)->tensor(0).descriptor.layout));
        expect_values(**src, 0, file(name));
    }
    // Values in logical (row-major) order, through the dequantize wrapper's densification.
    auto src = open_npy(file("fortran.npy"));
    ASSERT_TRUE(src.ok());
    auto dense = dequantized_source(**src);
    ASSERT_TRUE(dense.ok());
    EXPECT_EQ(presented(**dense, 0), file_bytes(file("fortran.c")));
}

TEST_F(NumpyFiles, BigEndianIsSwappedWhenRead) {
    for (const std::string name : {"big_f4", "big_i8", "big_c16"}) {
        SCOPED_TRACE(name);
        auto src = open_npy(file(name + ".npy"));
        ASSERT_TRUE(src.ok()) << src.error().to_string();
        EXPECT_FALSE((*src)->view(0, 0).has_value());
        expect_values(**src, 0, file(name));
        // Reads at every offset and length agree with the whole.
        const auto whole = presented(**src, 0);
        for (size_t off = 0; off < whole.size(); off += 3) {
            std::vector<uint8_t> part(std::min<size_t>(5, whole.size() - off));
            ASSERT_TRUE((*src)->read(0, 0, off, part).ok());
            ASSERT_TRUE(std::equal(part.begin(), part.end(),
                                   whole.begin() + static_cast<std::ptrdiff_t>(off)));
        }
    }
}

TEST_F(NumpyFiles, ReadsStoredAndDeflatedNpz) {
    for (const std::string npz : {"stored.npz", "deflated.npz"}) {
        SCOPED_TRACE(npz);
        auto src = open_source(file(npz));
        ASSERT_TRUE(src.ok()) << src.error().to_string();
        EXPECT_EQ((*src)->format(), Format::kNpz);
        const std::vector<std::pair<std::string, std::string>> members = {{"w", "float32"},
                                                                          {"mask", "b1"},
                                                                          {"f", "fortran"},
                                                                          {"big", "big_i8"},
                                                                          {"c", "complex128"}};
        for (const auto& [member, stem] : members) {
            auto i = (*src)->find(member);
            ASSERT_TRUE(i.has_value()) << member;
            expect_values(**src, *i, file(stem));
        }
        if (npz == "deflated.npz") {
            auto i = (*src)->find("large");
            ASSERT_TRUE(i.has_value());
            expect_values(**src, *i, file("large"));
            // Reads behind the last one restart the member.
            std::vector<uint8_t> a(8);
            ASSERT_TRUE((*src)->read(*i, 0, 8 * 299999, a).ok());
            ASSERT_TRUE((*src)->read(*i, 0, 8, a).ok());
            double v = 0;
            std::memcpy(&v, a.data(), 8);
            EXPECT_EQ(v, 1.0);
        }
    }
}

TEST_F(NumpyFiles, RefusesDtypesWithoutHurrayTypeNamingThem) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"object", "|O"},       {"unicode", "<U2"},
        {"bytes", "|S2"},       {"structured", "structured"},
        {"datetime", "<M8[D]"}, {"longdouble", "<f16"}};
    for (const auto& [name, text] : cases) {
        SCOPED_TRACE(name);
        auto src = open_npy(file(name + ".npy"));
        ASSERT_FALSE(src.ok());
        EXPECT_EQ(src.error().code(), ErrorCode::kUnsupported) << src.error().to_string();
        EXPECT_NE(src.error().message().find(name + ".npy"), std::string::npos)
            << src.error().message();
        EXPECT_NE(src.error().message().find(text), std::string::npos) << src.error().message();
    }
    auto z = open_npz(file("with_object.npz"));
    ASSERT_FALSE(z.ok());
    EXPECT_NE(z.error().message().find("bad.npy"), std::string::npos) << z.error().message();
}

TEST_F(NumpyFiles, NpzThroughHrryFileBackToNpzMatchesNumpy) {
    TempDir dir;
    for (const std::string npz : {"stored.npz", "deflated.npz"}) {
        SCOPED_TRACE(npz);
        ConvertOptions opt;
        opt.durable = false;
        opt.verify = true;
        auto r1 = convert_file(file(npz), dir.file("mid.hrry"), opt);
        ASSERT_TRUE(r1.ok()) << r1.error().to_string();
        EXPECT_TRUE(r1->verified);
        auto r2 = convert_file(dir.file("mid.hrry"), dir.file("back.npz"), opt);
        ASSERT_TRUE(r2.ok()) << r2.error().to_string();
        auto [rc, out] = run_script("numpy_check.py",
                                    "roundtrip_npz:" + file(npz) + " " + dir.file("back.npz"), dir);
        EXPECT_EQ(rc, 0) << out;
        // And .npz -> .npz directly.
        ASSERT_TRUE(convert_file(file(npz), dir.file("direct.npz"), opt).ok());
        auto [rc2, out2] = run_script(
            "numpy_check.py", "roundtrip_npz:" + file(npz) + " " + dir.file("direct.npz"), dir);
        EXPECT_EQ(rc2, 0) << out2;
    }
    // .npy -> .npy keeps Fortran order, swaps big-endian, round-trips values.
    ConvertOptions opt;
    opt.verify = true;
    ASSERT_TRUE(convert_file(file("fortran.npy"), dir.file("fortran_out.npy"), opt).ok());
    auto [rc, out] =
        run_script("numpy_check.py", "fortran_npy " + dir.file("fortran_out.npy"), dir);
    EXPECT_EQ(rc, 0) << out;
}

/// The tensors numpy_check.py's model() expects.
std::vector<MemTensor> model_for_numpy() {
    std::vector<MemTensor> out;
    std::vector<float> f(12);
    for (size_t k = 0; k < 12; ++k) f[k] = static_cast<float>(k) * 0.5F - 2.0F;
    out.push_back({"dense.f32", *make_dense(ElementType::kFloat32, {3, 4}), {test::f32_bytes(f)}});
    out.push_back({"dense.i8",
                   *make_dense(ElementType::kInt8, {2, 3}),
                   {{0x01, 0xFF, 0x7F, 0x80, 0x00, 0x05}}});
    out.push_back({"mask", *make_dense(ElementType::kBool, {10}), {{0b10110101, 0b00000010}}});
    std::vector<double> c{1, 2, -3, -4, 0.5, 0};
    std::vector<uint8_t> cb(c.size() * 8);
    std::memcpy(cb.data(), c.data(), cb.size());
    out.push_back({"c128", *make_dense(ElementType::kComplex128, {3}), {cb}});
    std::vector<uint8_t> u(24, 0);
    u[8] = 1;
    std::fill(u.begin() + 16, u.end(), 0xFF);
    out.push_back({"u64", *make_dense(ElementType::kUInt64, {3}), {u}});
    std::vector<uint8_t> h;
    for (const float x : {1.0F, -2.5F, 0.125F, 65504.0F, 0.0F}) {
        const uint16_t b = float_to_float16(x);
        h.push_back(static_cast<uint8_t>(b & 0xFF));
        h.push_back(static_cast<uint8_t>(b >> 8));
    }
    out.push_back({"f16", *make_dense(ElementType::kFloat16, {5}), {h}});
    out.push_back({"empty", *make_dense(ElementType::kFloat32, {0, 4}), {{}}});
    return out;
}

TEST(NumpyWrite, NpzAndNpyAreReadByNumpy) {
    REQUIRE_NUMPY();
    TempDir dir;
    for (const bool views : {false, true}) {
        MemorySource mem(model_for_numpy(), views);
        ConvertOptions opt;
        opt.chunk_bytes = 3;
        ASSERT_TRUE(write_npz(mem, dir.file("m.npz"), opt).ok());
        auto [rc, out] = run_script("numpy_check.py", "model_npz " + dir.file("m.npz"), dir);
        EXPECT_EQ(rc, 0) << out;
        // Our reader agrees.
        auto back = open_npz(dir.file("m.npz"));
        ASSERT_TRUE(back.ok()) << back.error().to_string();
        test::expect_identical(mem, **back);

        MemorySource one({model_for_numpy()[0]}, views);
        ASSERT_TRUE(write_npy(one, dir.file("one.npy"), opt).ok());
        auto [rc1, out1] = run_script("numpy_check.py", "one_npy " + dir.file("one.npy"), dir);
        EXPECT_EQ(rc1, 0) << out1;
        MemorySource mask({model_for_numpy()[2]}, views);
        ASSERT_TRUE(write_npy(mask, dir.file("mask.npy"), opt).ok());
        auto [rc2, out2] = run_script("numpy_check.py", "bool_npy " + dir.file("mask.npy"), dir);
        EXPECT_EQ(rc2, 0) << out2;
    }
}

TEST(NumpyWrite, TypesNumpyLacksAreWidenedExactly) {
    REQUIRE_NUMPY();
    TempDir dir;
    // u2 codes 0,1,2,3,3,2,1,0,1 packed 4 per byte, LSB first.
    std::vector<MemTensor> t = {
        {"bf", *make_dense(ElementType::kBFloat16, {3}), {{0x80, 0x3F, 0x00, 0xC0, 0x00, 0x3F}}},
        {"i4", *make_dense(ElementType::kInt4, {5}), {{0x78, 0xF0, 0x03}}},
        {"u2", *make_dense(ElementType::kUInt2, {9}), {{0xE4, 0x1B, 0x01}}},
    };
    for (const bool views : {false, true}) {
        MemorySource mem(t, views);
        ConvertOptions opt;
        opt.chunk_bytes = 3;
        ASSERT_TRUE(write_npz(mem, dir.file("w.npz"), opt).ok());
        auto [rc, out] = run_script("numpy_check.py", "widened_npz " + dir.file("w.npz"), dir);
        EXPECT_EQ(rc, 0) << out;
        auto back = open_npz(dir.file("w.npz"));
        ASSERT_TRUE(back.ok());
        EXPECT_EQ((*back)->tensor(0).descriptor.element_type, ElementType::kFloat32);
        EXPECT_EQ((*back)->tensor(1).descriptor.element_type, ElementType::kInt8);
        EXPECT_TRUE(compare_sources(mem, **back).ok());  // same values, compared as float32
    }
}

TEST(NumpyWrite, MoreThan65535MembersUseZip64) {
    REQUIRE_NUMPY();
    TempDir dir;
    std::vector<MemTensor> many;
    many.reserve(70000);
    for (size_t k = 0; k < 70000; ++k) {
        std::string name(1, 't');
        name += std::to_string(k);
        many.push_back({name, *make_dense(ElementType::kInt8, {1}), {{static_cast<uint8_t>(k % 128)}}});
    }
    MemorySource mem(std::move(many), true);
    ConvertOptions opt;
    opt.durable = false;
    ASSERT_TRUE(write_npz(mem, dir.file("many.npz"), opt).ok());
    const auto bytes = file_bytes(dir.file("many.npz"));
    const std::string zip64_end("PK\x06\x06", 4);  // zip64 end of central directory record
    EXPECT_NE(std::search(bytes.begin(), bytes.end(), zip64_end.begin(), zip64_end.end()), bytes.end());
    auto back = open_npz(dir.file("many.npz"));
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    ASSERT_EQ((*back)->tensor_count(), 70000U);
    EXPECT_EQ((*back)->tensor(65536).name, "t65536");
    EXPECT_EQ(test::read_all(**back, 69999, 0), std::vector<uint8_t>{69999 % 128});
    auto [rc, out] = run_script("numpy_check.py", "many_npz " + dir.file("many.npz"), dir);
    EXPECT_EQ(rc, 0) << out;
}

TEST(NumpyWrite, RefusalsNameTheTensorOrCount) {
    TempDir dir;
    MemorySource two(test::model_tensors(), true);
    auto s = write_npy(two, dir.file("x.npy"));
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().message().find(std::to_string(test::model_tensors().size()) + " tensors"),
              std::string::npos)
        << s.error().message();
    // Quantized, sparse and composite tensors need dequantization.
    auto z = write_npz(two, dir.file("x.npz"));
    ASSERT_FALSE(z.ok());
    EXPECT_NE(z.error().message().find("quant.q4"), std::string::npos) << z.error().message();
    EXPECT_NE(z.error().message().find("--dequantize"), std::string::npos) << z.error().message();
    EXPECT_EQ(dir.list(), std::vector<std::string>{});
    // A strided tensor needs densifying.
    auto strided = *make_dense(ElementType::kFloat32, {2});
    strided.layout = StridedLayout{{1}};
    MemorySource st({{"s", strided, {{0, 0, 0, 0, 0, 0, 0, 0}}}});
    auto b = write_npy(st, dir.file("s.npy"));
    ASSERT_FALSE(b.ok());
    EXPECT_NE(b.error().message().find("tensor 's'"), std::string::npos) << b.error().message();
    // With dequantization through write(), the model goes to .npz.
    ConvertOptions opt;
    opt.dequantize = true;
    opt.verify = true;
    auto r = write(two, dir.file("x.npz"), opt);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_TRUE(r->verified);
    EXPECT_EQ(dir.list(), std::vector<std::string>{"x.npz"});
}

TEST(NumpyWrite, FailedReadLeavesNoNpz) {
    TempDir dir;
    MemorySource mem(model_for_numpy(), false);
    mem.fail_tensor = 3;
    auto s = write_npz(mem, dir.file("x.npz"));
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().message().find("c128"), std::string::npos) << s.error().message();
    EXPECT_EQ(dir.list(), std::vector<std::string>{});
    MemorySource one({model_for_numpy()[0]}, false);
    one.fail_tensor = 0;
    ASSERT_FALSE(write_npy(one, dir.file("x.npy")).ok());
    EXPECT_EQ(dir.list(), std::vector<std::string>{});
}

std::vector<uint8_t> npy_with_header(const std::string& dict, uint8_t major = 1) {
    std::vector<uint8_t> b = {0x93, 'N', 'U', 'M', 'P', 'Y', major, 0};
    std::string h = dict;
    const size_t prefix = major == 1 ? 10 : 12;
    while ((prefix + h.size() + 1) % 64 != 0) h += ' ';
    h += '\n';
    for (size_t k = 0; k < (major == 1 ? 2U : 4U); ++k)
        b.push_back(static_cast<uint8_t>(h.size() >> (8 * k)));
    b.insert(b.end(), h.begin(), h.end());
    return b;
}

TEST(NumpyHostile, HeaderErrorsNameFieldAndOffset) {
    TempDir dir;
    struct Case {
        std::vector<uint8_t> bytes;
        std::string field;
    };
    auto good = npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }");
    good.resize(good.size() + 8, 0);
    std::vector<Case> cases = {
        {{0x93, 'N', 'U', 'M'}, "magic"},
        {{0x93, 'N', 'U', 'M', 'P', 'Y', 9, 0, 0, 0}, "version"},
        {{0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0xFF}, "header_len"},
        {std::vector<uint8_t>(good.begin(), good.begin() + 40), "header_len"},
        {npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), "), "header"},
        {npy_with_header("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,)}"), "header"},
        {npy_with_header("{'descr': '<f4', 'shape': (2,)}"), "fortran_order"},
        {npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}"), "'x'"},
        {npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1)}"), "header"},
        {npy_with_header(
             "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}"),
         "overflows"},
        {npy_with_header(
             "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}"),
         "overflows"},
        {npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1000,)}"), "data"},
        {npy_with_header("{'descr': '<q9', 'fortran_order': False, 'shape': (1,)}"), "<q9"},
        {npy_with_header("{'descr': 7, 'fortran_order': False, 'shape': (1,)}"), "descr"},
        {npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': [1]}"), "shape"},
        {npy_with_header(std::string(70, '(')), "nested"},
    };
    for (size_t k = 0; k < cases.size(); ++k) {
        SCOPED_TRACE(k);
        const std::string p = dir.write("bad" + std::to_string(k) + ".npy", cases[k].bytes);
        auto src = open_npy(p);
        ASSERT_FALSE(src.ok());
        EXPECT_NE(src.error().message().find(cases[k].field), std::string::npos)
            << src.error().to_string();
        EXPECT_NE(src.error().message().find("bad" + std::to_string(k) + ".npy"),
                  std::string::npos);
    }
    // The offset of a bad value is its byte in the file.
    auto bad = open_npy(
        dir.write("off.npy", npy_with_header("{'descr': '<f4', 'fortran_order': 3, 'shape': ()}")));
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().offset(), 10U + std::string("{'descr': '<f4', 'fortran_order': ").size());
    // The good file reads.
    auto ok = open_npy(dir.write("good.npy", good));
    ASSERT_TRUE(ok.ok()) << ok.error().to_string();
    // Every truncation of a good file is an error, never a crash.
    for (size_t len = 0; len + 1 < good.size(); ++len) {
        const std::string p = dir.write(
            "cut.npy",
            std::vector<uint8_t>(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(len)));
        EXPECT_FALSE(open_npy(p).ok()) << len;
    }
}

TEST(NumpyHostile, BadZipIsAnError) {
    TempDir dir;
    std::vector<uint8_t> zip = {'P', 'K', 3, 4};
    zip.resize(200, 0x41);
    auto a = open_npz(dir.write("bad.npz", zip));
    ASSERT_FALSE(a.ok());
    EXPECT_NE(a.error().message().find("bad.npz"), std::string::npos) << a.error().message();
    // An archive holding something that is not a .npy.
    MemorySource mem(model_for_numpy(), true);
    ASSERT_TRUE(write_npz(mem, dir.file("m.npz")).ok());
    auto bytes = file_bytes(dir.file("m.npz"));
    for (size_t len = 0; len < bytes.size(); len += 37) {
        auto cut = open_npz(dir.write(
            "cut.npz",
            std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(len))));
        EXPECT_FALSE(cut.ok()) << len;
    }
    // Flipped bytes: an error or a source, never a crash; reads report errors.
    for (size_t at = 0; at < bytes.size(); at += 11) {
        auto flipped = bytes;
        flipped[at] ^= 0xA5;
        auto src = open_npz(dir.write("flip.npz", flipped));
        if (src.ok()) {
            for (size_t i = 0; i < (*src)->tensor_count(); ++i) {
                std::vector<uint8_t> all((*src)->tensor(i).descriptor.buffers[0].byte_size);
                static_cast<void>((*src)->read(i, 0, 0, all));
            }
        }
    }
}

}  // namespace
}  // namespace hurray::convert
