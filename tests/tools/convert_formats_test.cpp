// SPDX-License-Identifier: Apache-2.0
// `hurray convert` through hurray::convert: NumPy inputs detected from their bytes,
// outputs from --to or the extension, --dequantize / --dtype / --verify, failures naming
// the tensor or field and leaving no output, usage errors.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "hurray/io/file_reader.hpp"

namespace hurray::clitest {
namespace {

/// A .npy (version 1.0) of `dict` followed by `data`.
std::vector<uint8_t> npy(const std::string& dict, const std::vector<uint8_t>& data) {
    std::vector<uint8_t> b = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    std::string h = dict;
    while ((10 + h.size() + 1) % 64 != 0) h += ' ';
    h += '\n';
    b.push_back(static_cast<uint8_t>(h.size() & 0xFF));
    b.push_back(static_cast<uint8_t>(h.size() >> 8));
    b.insert(b.end(), h.begin(), h.end());
    b.insert(b.end(), data.begin(), data.end());
    return b;
}

std::vector<uint8_t> floats(const std::vector<float>& v) {
    std::vector<uint8_t> b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

size_t entries(const TempDir& dir) {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++n;
    return n;
}

TEST(ConvertFormats, NpyToHrryFileWithVerify) {
    TempDir dir;
    const std::vector<float> values = {1.5F, -2.0F, 0.25F, 8.0F, 0.0F, -0.5F};
    hurray::test::write_all_file(
        dir.file("w.npy"),
        npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", floats(values)));
    const Ran r = run_cli({"convert", dir.file("w.npy"), dir.file("w.hrry"), "--verify"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.err.find("verified 1 tensors"), std::string::npos) << r.err;
    auto f = FileReader::open(dir.file("w.hrry"));
    ASSERT_TRUE(f.ok()) << f.error().to_string();
    auto w = f->tensor("w").as<float>();
    ASSERT_TRUE(w.ok()) << w.error().to_string();
    ASSERT_EQ(w->size(), values.size());
    for (size_t k = 0; k < values.size(); ++k) EXPECT_EQ((*w)[k], values[k]) << k;
    EXPECT_EQ(f->tensor("w")->shape().size(), 2U);
    // The extension decides the output kind; --to overrides it.
    const Ran back = run_cli({"convert", dir.file("w.hrry"), dir.file("back.npy")});
    ASSERT_EQ(back.rc, 0) << back.err;
    EXPECT_EQ(read_all(dir.file("back.npy")), read_all(dir.file("w.npy")));
    const Ran z = run_cli({"convert", dir.file("w.hrry"), dir.file("w.data"), "--to", "npz"});
    ASSERT_EQ(z.rc, 0) << z.err;
    const auto zb = read_all(dir.file("w.data"));
    ASSERT_GE(zb.size(), 4U);
    EXPECT_EQ(zb[0], 'P');
    EXPECT_EQ(zb[1], 'K');
    // `ls` reads NumPy files directly.
    const Ran ls = run_cli({"ls", dir.file("w.npy")});
    ASSERT_EQ(ls.rc, 0) << ls.err;
    EXPECT_NE(ls.out.find("w     float32  [2, 3]  row_major  -                24"),
              std::string::npos)
        << ls.out;
    const Ran lsz = run_cli({"ls", "--json", dir.file("w.data")});
    ASSERT_EQ(lsz.rc, 0) << lsz.err;
    EXPECT_NE(lsz.out.find("\"kind\": \"npz\""), std::string::npos) << lsz.out;
    EXPECT_NE(lsz.out.find("\"name\": \"w\""), std::string::npos) << lsz.out;
    // The .npz (detected from its bytes, whatever its name) converts back.
    const Ran again = run_cli({"convert", dir.file("w.data"), dir.file("again.hrry"), "--verify"});
    ASSERT_EQ(again.rc, 0) << again.err;
}

TEST(ConvertFormats, HrryFileToNumpyNeedsDequantizeForQuantizedTensors) {
    TempDir dir;
    ASSERT_EQ(run_cli({"demo", dir.file("demo")}).rc, 0);
    const std::string model = dir.file("demo") + "/model.hrry";
    const Ran plain = run_cli({"convert", model, dir.file("m.npz")});
    EXPECT_EQ(plain.rc, 1);
    EXPECT_NE(plain.err.find("tensor 'blk.0.ffn_up.weight' is quantized"), std::string::npos)
        << plain.err;
    EXPECT_NE(plain.err.find("--dequantize"), std::string::npos) << plain.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("m.npz")));
    const Ran deq =
        run_cli({"convert", model, dir.file("m.npz"), "--dtype", "float16", "--verify"});
    ASSERT_EQ(deq.rc, 0) << deq.err;
    EXPECT_TRUE(std::filesystem::exists(dir.file("m.npz")));
    // HRRYFILE -> HRRYFILE with --dequantize: dense float32 tensors, composite folded.
    const Ran dense = run_cli({"convert", model, dir.file("dense.hrry"), "--dequantize"});
    ASSERT_EQ(dense.rc, 0) << dense.err;
    auto f = FileReader::open(dir.file("dense.hrry"));
    ASSERT_TRUE(f.ok());
    auto up = f->tensor("blk.0.ffn_up.weight");
    ASSERT_TRUE(up.ok());
    EXPECT_EQ(up->element_type(), ElementType::kFloat32);
    EXPECT_FALSE(up->descriptor().quantization.has_value());
    EXPECT_FALSE(f->find("output.weight.part0").has_value());
    // Values: the dense file holds what the library's own dequantization gives.
    auto src = FileReader::open(model);
    ASSERT_TRUE(src.ok());
    auto want = src->tensor("blk.0.ffn_up.weight").to_float32();
    auto got = up->as<float>();
    ASSERT_TRUE(want.ok() && got.ok());
    ASSERT_EQ(want->size(), got->size());
    for (size_t k = 0; k < want->size(); ++k) ASSERT_EQ((*want)[k], (*got)[k]) << k;
}

TEST(ConvertFormats, BadInputsExitOneNamingTheFieldAndWriteNothing) {
    TempDir dir;
    hurray::test::write_all_file(
        dir.file("short.npy"),
        npy("{'descr': '<f4', 'fortran_order': False, 'shape': (100,), }", floats({1})));
    const Ran shortr = run_cli({"convert", dir.file("short.npy"), dir.file("o.hrry")});
    EXPECT_EQ(shortr.rc, 1);
    EXPECT_NE(shortr.err.find("data"), std::string::npos) << shortr.err;
    EXPECT_NE(shortr.err.find("short.npy"), std::string::npos) << shortr.err;
    hurray::test::write_all_file(
        dir.file("bad.npy"),
        npy("{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }", {0, 0, 0, 0}));
    const Ran badr = run_cli({"convert", dir.file("bad.npy"), dir.file("o.hrry")});
    EXPECT_EQ(badr.rc, 1);
    EXPECT_NE(badr.err.find("'<U3'"), std::string::npos) << badr.err;
    const Ran badls = run_cli({"ls", dir.file("bad.npy")});
    EXPECT_EQ(badls.rc, 1);
    EXPECT_NE(badls.err.find("'<U3'"), std::string::npos) << badls.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("o.hrry")));
    EXPECT_EQ(entries(dir), 2U) << "no output, no temporary file";
    // Writers that are not in this build, or two tensors into one .npy.
    const Ran two = run_cli({"convert", basic_file(), dir.file("two.npy")});
    EXPECT_EQ(two.rc, 1);
    EXPECT_NE(two.err.find("2 tensors"), std::string::npos) << two.err;
    EXPECT_EQ(entries(dir), 2U);
}

TEST(ConvertFormats, UsageErrorsAreStatusTwo) {
    TempDir dir;
    const std::string out = dir.file("o.npz");
    EXPECT_EQ(run_cli({"convert", basic_file(), out, "--dtype", "int8"}).rc, 2);
    EXPECT_EQ(run_cli({"convert", basic_file(), "-", "--verify"}).rc, 2);
    EXPECT_EQ(run_cli({"convert", basic_file(), out, "--alignment", "8192"}).rc, 2);
    EXPECT_EQ(run_cli({"convert", basic_file(), out, "--to", "stream", "--verify"}).rc, 2);
    const Ran help = run_cli({"convert", "--help"});
    EXPECT_EQ(help.rc, 0);
    for (const char* word : {"--dequantize", "--dtype", "--verify", "npz", "safetensors", "gguf"}) {
        EXPECT_NE(help.out.find(word), std::string::npos) << word;
    }
    // The HRRYFILE path is unchanged: --to hrryfile is --to file.
    const Ran same = run_cli(
        {"convert", basic_file(), dir.file("b.hrry"), "--to", "hrryfile", "--sorted-index"});
    EXPECT_EQ(same.rc, 0) << same.err;
}

}  // namespace
}  // namespace hurray::clitest
