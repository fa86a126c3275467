// SPDX-License-Identifier: Apache-2.0
// `hurray info`, `verify` and `cat` of SafeTensors, GGUF, .npy and .npz files, read through
// hurray::convert without converting: files written by the tests' independent Python writers
// (tests/convert/writers/, run with /usr/bin/python3), their values checked against the
// writers' references; truncated and corrupted files exit 1 with a message, never crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "test_paths.hpp"
#include "python_writers.hpp"

#if defined(HURRAY_CLI_HAS_CONVERT) && HURRAY_CLI_HAS_CONVERT

namespace hurray::clitest {
namespace {

using json = nlohmann::json;

using hurray::test::kPython;

/// Runs the three writers once into a directory shared by the tests of this file:
/// gguf/ (gguf_writer.py), safetensors/ (safetensors_writer.py), numpy/ (numpy_arrays.py).
class ForeignFiles : public hurray::test::WrittenFilesTest<ForeignFiles> {
public:
    static std::vector<std::string> writer_commands(const std::filesystem::path& dir) {
        for (const char* sub : {"gguf", "safetensors", "numpy"}) {
            std::filesystem::create_directories(dir / sub);
        }
        return {"gguf_writer.py " + (dir / "gguf").string(),
                "safetensors_writer.py write " + (dir / "safetensors").string(),
                "numpy_arrays.py " + (dir / "numpy").string()};
    }

protected:
    static std::string gguf() { return file("gguf/all.gguf"); }
    static std::string safetensors() { return file("safetensors/all.safetensors"); }
};

/// The numbers `cat` printed (brackets and the --limit note left out).
std::vector<double> printed_values(const std::string& out) {
    std::vector<double> values;
    const std::string body = out.substr(0, out.find('('));
    const char* p = body.c_str();
    while (*p != '\0') {
        if (*p == '[' || *p == ']' || *p == ' ' || *p == '\n') {
            ++p;
            continue;
        }
        char* end = nullptr;
        const double v = std::strtod(p, &end);
        if (end == p) {
            ADD_FAILURE() << "not a number at: " << p;
            break;
        }
        values.push_back(v);
        p = end;
    }
    return values;
}

/// The little-endian float32 values of a writer's `.ref` file.
std::vector<float> ref_values(const std::string& path) {
    const auto bytes = read_all(path);
    std::vector<float> v(bytes.size() / 4);
    std::memcpy(v.data(), bytes.data(), v.size() * 4);
    return v;
}

/// The first (up to 1000: NumPy summarizes more) values `cat --limit` prints of a tensor
/// equal its reference values to the printed precision.
void expect_cat_matches(const std::string& path, const std::string& name, const std::vector<float>& want) {
    ASSERT_FALSE(want.empty());
    const size_t n = std::min<size_t>(want.size(), 1000);
    const Ran r = run_cli({"cat", path, name, "--limit", std::to_string(n)});
    ASSERT_EQ(r.rc, 0) << r.err;
    const auto got = printed_values(r.out);
    ASSERT_EQ(got.size(), n) << r.out;
    for (size_t k = 0; k < n; ++k) {
        const double w = want[k];
        ASSERT_NEAR(got[k], w, 1e-7 + 1e-6 * std::fabs(w)) << name << " element " << k;
    }
}

TEST_F(ForeignFiles, SafeTensorsInfoVerifyCat) {
    const Ran info = run_cli({"info", safetensors()});
    ASSERT_EQ(info.rc, 0) << info.err;
    EXPECT_NE(info.out.find("SafeTensors file"), std::string::npos) << info.out;
    EXPECT_NE(info.out.find("tensors:                 25 (0 composite heads, 0 quantized)"), std::string::npos)
        << info.out;
    EXPECT_NE(info.out.find("kv metadata:             4 entries"), std::string::npos) << info.out;
    EXPECT_NE(info.out.find("format (string) = \"pt\""), std::string::npos) << info.out;

    const Ran named = run_cli({"info", safetensors(), "bf16", "scalar_f32"});
    ASSERT_EQ(named.rc, 0) << named.err;
    EXPECT_NE(named.out.find("tensor \"bf16\":\n    element type:          bfloat16\n    shape:                 [3, 3]"),
              std::string::npos)
        << named.out;
    EXPECT_NE(named.out.find("buffers:               1 (4 bytes)"), std::string::npos) << named.out;

    const Ran js = run_cli({"info", "--json", safetensors(), "bf16"});
    ASSERT_EQ(js.rc, 0) << js.err;
    const json j = json::parse(js.out);
    EXPECT_EQ(j["kind"], "safetensors");
    EXPECT_EQ(j["tensor_count"], 25);
    EXPECT_EQ(j["quantized_count"], 0);
    EXPECT_EQ(j["file_size"], std::filesystem::file_size(safetensors()));
    EXPECT_FALSE(j.contains("descriptor_bytes"));  // no descriptors are stored
    ASSERT_EQ(j["kv"].size(), 4U);
    EXPECT_EQ(j["kv"][0]["key"], "format");
    EXPECT_EQ(j["kv"][0]["value"], "pt");
    ASSERT_EQ(j["tensors"].size(), 1U);
    EXPECT_EQ(j["tensors"][0]["name"], "bf16");
    EXPECT_EQ(j["tensors"][0]["descriptor"]["element_type"], "bfloat16");

    const Ran missing = run_cli({"info", safetensors(), "nope"});
    EXPECT_EQ(missing.rc, 1);
    EXPECT_NE(missing.err.find("no tensor named \"nope\""), std::string::npos) << missing.err;

    const Ran verify = run_cli({"verify", safetensors()});
    ASSERT_EQ(verify.rc, 0) << verify.err;
    EXPECT_NE(verify.out.find(": OK (safetensors, 25 tensors, 0 composites, 418 bytes of data read, data checked "
                              "on 25 tensors)"),
              std::string::npos)
        << verify.out;

    const Ran scalar = run_cli({"cat", safetensors(), "scalar_f32"});
    ASSERT_EQ(scalar.rc, 0) << scalar.err;
    EXPECT_EQ(scalar.out, "3.25\n");
    const Ran f16 = run_cli({"cat", safetensors(), "model.layers.0.self_attn.q_proj.weight/\u00e9\u4e2d"});
    ASSERT_EQ(f16.rc, 0) << f16.err;
    EXPECT_EQ(f16.out, "[[1. 2.]\n [3. 4.]]\n");
    const Ran none = run_cli({"cat", safetensors(), "nope"});
    EXPECT_EQ(none.rc, 1);
    EXPECT_NE(none.err.find("no tensor named"), std::string::npos) << none.err;
}

TEST_F(ForeignFiles, GgufInfoShowsGgufTypesAndGgmlBlocks) {
    const Ran info = run_cli({"info", gguf(), "q8_0", "q4_k"});
    ASSERT_EQ(info.rc, 0) << info.err;
    EXPECT_NE(info.out.find("GGUF file"), std::string::npos) << info.out;
    EXPECT_NE(info.out.find("general.alignment (uint64; uint32) = 64"), std::string::npos) << info.out;
    EXPECT_NE(info.out.find("t.arr.str (array; array[string])"), std::string::npos) << info.out;
    EXPECT_NE(info.out.find("tensor \"q8_0\":\n    element type:          int8\n    shape:                 [4, 64]\n"
                            "    layout:                row_major\n    quantization:          per_block_affine"),
              std::string::npos)
        << info.out;
    EXPECT_NE(info.out.find("(GGML blocks: q4_K, 256 values in 144 bytes)"), std::string::npos) << info.out;
    EXPECT_NE(info.out.find("buffers:               1 (576 bytes)"), std::string::npos) << info.out;

    const Ran js = run_cli({"info", "--json", gguf(), "q4_k"});
    ASSERT_EQ(js.rc, 0) << js.err;
    const json j = json::parse(js.out);
    EXPECT_EQ(j["kind"], "gguf");
    EXPECT_EQ(j["tensor_count"], 23);
    bool found = false;
    for (const auto& e : j["kv"]) {
        if (e["key"] == "general.alignment") {
            found = true;
            EXPECT_EQ(e["kind"], "uint64");
            EXPECT_EQ(e["gguf_type"], "uint32");
            EXPECT_EQ(e["value"], 64);
        }
    }
    EXPECT_TRUE(found) << js.out;
    ASSERT_EQ(j["tensors"].size(), 1U);
    EXPECT_EQ(j["tensors"][0]["ggml_type"], "q4_K");
    EXPECT_EQ(j["tensors"][0]["descriptor"]["buffer_byte_sizes"], json::array({576}));
}

TEST_F(ForeignFiles, GgufVerifyAndCatDequantizes) {
    const Ran verify = run_cli({"verify", gguf()});
    ASSERT_EQ(verify.rc, 0) << verify.err;
    EXPECT_NE(verify.out.find(": OK (gguf, 23 tensors, 0 composites, "), std::string::npos) << verify.out;
    // The 11 tensors kept as GGML blocks are read in full, but validate_data cannot read them.
    EXPECT_NE(verify.out.find("data checked on 12 tensors"), std::string::npos) << verify.out;
    const Ran v2 = run_cli({"verify", file("gguf/v2.gguf")});
    EXPECT_EQ(v2.rc, 0) << v2.err;

    // Q8_0: a per-block affine int8 tensor; Q4_K: GGML blocks; both dequantized by the
    // core (hurray::dequantize), against the writer's numpy references.
    expect_cat_matches(gguf(), "q8_0", ref_values(file("gguf/q8_0.ref")));
    expect_cat_matches(gguf(), "q4_k", ref_values(file("gguf/q4_k.ref")));
    expect_cat_matches(gguf(), "q6_k", ref_values(file("gguf/q6_k.ref")));
    expect_cat_matches(file("gguf/v2.gguf"), "a", {1, 2, 3, 4});

    const Ran raw = run_cli({"cat", gguf(), "q8_0", "--raw", "--index", "0", "--limit", "3"});
    ASSERT_EQ(raw.rc, 0) << raw.err;
    EXPECT_EQ(raw.out.find('.'), std::string::npos) << "integer codes: " << raw.out;

    const Ran iq2 = run_cli({"cat", gguf(), "iq2_xxs_raw"});
    EXPECT_EQ(iq2.rc, 1);
    EXPECT_NE(iq2.err.find("iq2_xxs_raw: "), std::string::npos) << iq2.err;
    EXPECT_NE(iq2.err.find("no dequantization for ggml type iq2_xxs"), std::string::npos) << iq2.err;
    EXPECT_NE(iq2.err.find("(unsupported)"), std::string::npos) << iq2.err;
}

TEST_F(ForeignFiles, NumpyInfoVerifyCat) {
    const std::string npy = file("numpy/float32.npy");
    const Ran info = run_cli({"info", npy, "float32"});
    ASSERT_EQ(info.rc, 0) << info.err;
    EXPECT_NE(info.out.find("NumPy .npy file"), std::string::npos) << info.out;
    EXPECT_NE(info.out.find("kv metadata:             0 entries"), std::string::npos) << info.out;
    EXPECT_NE(info.out.find("shape:                 [3, 4]"), std::string::npos) << info.out;
    const Ran verify = run_cli({"verify", npy});
    ASSERT_EQ(verify.rc, 0) << verify.err;
    EXPECT_NE(verify.out.find(": OK (npy, 1 tensors, 0 composites, 48 bytes of data read, data checked on 1 "
                              "tensors)"),
              std::string::npos)
        << verify.out;
    std::vector<float> want(12);
    for (size_t k = 0; k < want.size(); ++k) want[k] = static_cast<float>(k) * 0.25F - 1.0F;
    expect_cat_matches(npy, "float32", want);
    // Fortran order (a column-major tensor) and big-endian data print in NumPy's order.
    const Ran fortran = run_cli({"cat", file("numpy/fortran.npy"), "fortran", "--index", "1,2"});
    ASSERT_EQ(fortran.rc, 0) << fortran.err;
    EXPECT_EQ(fortran.out, "[17. 18. 19. 20.]\n");
    expect_cat_matches(file("numpy/big_f4.npy"), "big_f4", {0, 1.5F, 3, 4.5F, 6, 7.5F, 9, 10.5F, 12, 13.5F});

    const Ran npz = run_cli({"info", file("numpy/stored.npz")});
    ASSERT_EQ(npz.rc, 0) << npz.err;
    EXPECT_NE(npz.out.find("NumPy .npz archive"), std::string::npos) << npz.out;
    EXPECT_NE(npz.out.find("members:                 5 (w.npy, mask.npy, f.npy, big.npy, c.npy)"),
              std::string::npos)
        << npz.out;
    const Ran npzj = run_cli({"info", "--json", file("numpy/deflated.npz")});
    ASSERT_EQ(npzj.rc, 0) << npzj.err;
    EXPECT_EQ(json::parse(npzj.out)["members"],
              json::array({"w.npy", "mask.npy", "f.npy", "big.npy", "c.npy", "large.npy"}));
    const Ran dv = run_cli({"verify", file("numpy/deflated.npz")});
    ASSERT_EQ(dv.rc, 0) << dv.err;
    EXPECT_NE(dv.out.find("OK (npz, 6 tensors"), std::string::npos) << dv.out;
    expect_cat_matches(file("numpy/deflated.npz"), "w", want);
}

/// Every command on `path` exits 1 with a message (never 0, 2 or a crash); returns the
/// messages.
std::string expect_all_fail(const std::string& path, const std::string& tensor) {
    std::string errors;
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"info", path}, {"info", "--json", path}, {"verify", path}, {"ls", path},
          {"cat", path, tensor}}) {
        const Ran r = run_cli(args);
        EXPECT_EQ(r.rc, 1) << args[0] << " " << path << ": " << r.out << r.err;
        EXPECT_FALSE(r.err.empty()) << args[0];
        errors += r.err;
    }
    return errors;
}

TEST_F(ForeignFiles, TruncatedFilesExitOneNamingAnOffset) {
    struct Case {
        std::string path;
        std::string tensor;
    };
    const std::vector<Case> cases = {{gguf(), "q4_k"},
                                     {safetensors(), "bf16"},
                                     {file("numpy/float32.npy"), "float32"},
                                     {file("numpy/v3.npy"), "v3"}};
    TempDir dir;
    for (const Case& c : cases) {
        const auto bytes = read_all(c.path);
        // Cut into the last byte of data: a GGUF file's last tensor is followed by zeros
        // to the alignment, which a reader does not need.
        size_t end = bytes.size();
        while (end > 0 && bytes[end - 1] == 0) {
            --end;
        }
        for (const size_t keep : {end - 1, bytes.size() / 2, size_t{64}, size_t{12}}) {
            const std::string cut = dir.file("cut" + std::filesystem::path(c.path).extension().string());
            write_all_file(cut, std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(keep)));
            const std::string errors = expect_all_fail(cut, c.tensor);
            EXPECT_NE(errors.find("at byte "), std::string::npos) << c.path << " cut to " << keep << ":\n" << errors;
            EXPECT_NE(errors.find(cut), std::string::npos) << errors;
        }
    }
    // A zip cut short has lost its end of central directory record: the message names it
    // and where the file ends.
    const auto npz = read_all(file("numpy/stored.npz"));
    const std::string cut = dir.file("cut.npz");
    write_all_file(cut, std::vector<uint8_t>(npz.begin(), npz.begin() + static_cast<std::ptrdiff_t>(npz.size() / 2)));
    const std::string cut_errors = expect_all_fail(cut, "w");
    EXPECT_NE(cut_errors.find("end of central directory record"), std::string::npos) << cut_errors;
    EXPECT_NE(cut_errors.find("at byte " + std::to_string(npz.size() / 2)), std::string::npos) << cut_errors;

    // As a process: exit status 1, not a signal.
    const auto g = read_all(gguf());
    write_all_file(dir.file("cut.gguf"), std::vector<uint8_t>(g.begin(), g.begin() + 3000));
    const Ran p = run_process("verify '" + dir.file("cut.gguf") + "'", "", dir);
    EXPECT_EQ(p.rc, 1) << p.err;
    EXPECT_NE(p.err.find("truncated at byte "), std::string::npos) << p.err;
}

/// Where `name` last occurs in `bytes` (a member name: the central directory's copy).
size_t last_of(const std::vector<uint8_t>& bytes, const std::string& name) {
    const auto it = std::find_end(bytes.begin(), bytes.end(), name.begin(), name.end());
    return static_cast<size_t>(it - bytes.begin());
}

void put32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
    for (size_t k = 0; k < 4; ++k) {
        b.at(at + k) = static_cast<uint8_t>(v >> (8 * k));
    }
}

TEST_F(ForeignFiles, CorruptNpzExitsOneNamingTheFieldAndOffset) {
    TempDir dir;
    // The central directory entry of 'mask.npy' points past the end of the file.
    auto npz = read_all(file("numpy/stored.npz"));
    const size_t central = last_of(npz, "mask.npy") - 46;
    put32(npz, central + 42, 123456);
    const std::string bad = dir.file("bad.npz");
    write_all_file(bad, npz);
    const std::string errors = expect_all_fail(bad, "w");
    EXPECT_NE(errors.find("central directory entry 1 ('mask.npy'): local header offset 123456 is past the end "
                          "of the file (" +
                          std::to_string(npz.size()) + " bytes) at byte " + std::to_string(central + 42)),
              std::string::npos)
        << errors;
    EXPECT_NE(errors.find(bad), std::string::npos) << errors;

    // A deflated member whose CRC-32 (central and local) is wrong: listing it works, reading
    // its data fails naming the CRC field.
    auto d = read_all(file("numpy/deflated.npz"));
    const std::string w("w.npy");
    const size_t local = static_cast<size_t>(std::search(d.begin(), d.end(), w.begin(), w.end()) - d.begin()) - 30;
    const size_t wc = last_of(d, w) - 46;
    d[wc + 16] ^= 0x10;
    d[local + 14] ^= 0x10;
    const std::string crc = dir.file("crc.npz");
    write_all_file(crc, d);
    EXPECT_EQ(run_cli({"ls", crc}).rc, 0);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"verify", crc}, std::vector<std::string>{"cat", crc, "w"}}) {
        const Ran r = run_cli(args);
        EXPECT_EQ(r.rc, 1) << args[0] << ": " << r.out << r.err;
        EXPECT_NE(r.err.find("CRC-32"), std::string::npos) << args[0] << ": " << r.err;
        EXPECT_NE(r.err.find("at byte " + std::to_string(wc + 16)), std::string::npos) << args[0] << ": " << r.err;
    }
}

TEST_F(ForeignFiles, CorruptedFilesNeverCrash) {
    // Deterministic corruptions of each format's header and data: every command exits 0
    // or 1, with a message when 1.
    TempDir dir;
    uint64_t state = 0x9E3779B97F4A7C15ULL;
    auto next = [&state] {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return state >> 33;
    };
    const std::vector<std::pair<std::string, std::string>> inputs = {{gguf(), "q4_k"},
                                                                     {file("gguf/v2.gguf"), "b"},
                                                                     {safetensors(), "bf16"},
                                                                     {file("numpy/big_i8.npy"), "big_i8"},
                                                                     {file("numpy/stored.npz"), "w"}};
    for (const auto& [path, tensor] : inputs) {
        const auto original = read_all(path);
        for (int round = 0; round < 24; ++round) {
            auto bytes = original;
            // Mostly the first 512 bytes (headers, tables), sometimes anywhere.
            const int flips = 1 + static_cast<int>(next() % 4);
            for (int f = 0; f < flips; ++f) {
                const size_t span = (next() % 4 == 0) ? bytes.size() : std::min<size_t>(bytes.size(), 512);
                bytes[next() % span] = static_cast<uint8_t>(next());
            }
            const std::string bad = dir.file("bad" + std::filesystem::path(path).extension().string());
            write_all_file(bad, bytes);
            for (const std::vector<std::string>& args :
                 {std::vector<std::string>{"info", bad}, {"verify", bad}, {"ls", "--json", bad}, {"cat", bad, tensor}}) {
                const Ran r = run_cli(args);
                EXPECT_TRUE(r.rc == 0 || r.rc == 1) << args[0] << " " << path << " round " << round << ": " << r.err;
                if (r.rc == 1) {
                    EXPECT_FALSE(r.err.empty()) << args[0] << " " << path << " round " << round;
                }
            }
        }
    }
}

TEST(ForeignInputs, APipeNamedByPathIsNotReadToDetectAFormat) {
    // Only regular files are probed for SafeTensors, GGUF and NumPy: the bytes of a pipe
    // read to tell its format would be lost to the HRRYFILE / stream reader after it.
    TempDir dir;
    const std::string file = "'" + basic_file() + "'";
    for (const char* command : {"info /dev/stdin", "verify /dev/stdin", "ls /dev/stdin", "cat /dev/stdin weights"}) {
        const Ran r = run_piped("cat " + file, command, dir);
        EXPECT_EQ(r.rc, 0) << command << ": " << r.err;
    }
}

TEST(InfoNames, HrryFileAndStreamTensorsByName) {
    const Ran r = run_cli({"info", basic_file(), "weights"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("tensor \"weights\":\n    element type:          float32\n    shape:                 [2, 2]"),
              std::string::npos)
        << r.out;
    const Ran js = run_cli({"info", "--json", basic_file(), "weights"});
    ASSERT_EQ(js.rc, 0) << js.err;
    const json j = json::parse(js.out);
    ASSERT_EQ(j["tensors"].size(), 1U);
    EXPECT_EQ(j["tensors"][0]["name"], "weights");
    EXPECT_TRUE(j["tensors"][0].contains("data_offset"));
    const Ran missing = run_cli({"info", basic_file(), "weights", "nope"});
    EXPECT_EQ(missing.rc, 1);
    EXPECT_TRUE(missing.out.empty()) << missing.out;
    EXPECT_NE(missing.err.find("no tensor named \"nope\""), std::string::npos) << missing.err;
}

TEST_F(ForeignFiles, ConvertedGgufFilesListVerifyAndPrintAndComeBack) {
    // A llama.cpp user's round trip: convert GGUF files (K-quants at alignment 32, legacy
    // quants at 64) to HRRYFILE, then every command reads the result with libhurray's GGML
    // blocks scheme understood, values equal to ggml's; converting back gives the GGUF file
    // byte for byte. --spec-only reads as another implementation does.
    TempDir dir;
    for (const char* name : {"k32", "legacy64", "all"}) {
        SCOPED_TRACE(name);
        const std::string gguf_path = file(std::string("gguf/") + name + ".gguf");
        const std::string hrry = dir.file(std::string(name) + ".hrry");
        const Ran conv = run_cli({"convert", gguf_path, hrry});
        ASSERT_EQ(conv.rc, 0) << conv.err;
        const Ran ls = run_cli({"ls", hrry});
        ASSERT_EQ(ls.rc, 0) << ls.err;
        const Ran info = run_cli({"info", hrry});
        ASSERT_EQ(info.rc, 0) << info.err;
        const Ran verify = run_cli({"verify", hrry});
        ASSERT_EQ(verify.rc, 0) << verify.err << verify.out;
        EXPECT_NE(verify.out.find(": OK ("), std::string::npos) << verify.out;
        const Ran back = run_cli({"convert", hrry, dir.file(std::string(name) + ".back.gguf")});
        ASSERT_EQ(back.rc, 0) << back.err;
        EXPECT_EQ(read_all(dir.file(std::string(name) + ".back.gguf")), read_all(gguf_path));
    }
    const std::string k32 = dir.file("k32.hrry");
    const Ran ls = run_cli({"ls", k32});
    EXPECT_NE(ls.out.find("k32.q4_k"), std::string::npos) << ls.out;
    EXPECT_NE(ls.out.find("k32.q8_k"), std::string::npos) << ls.out;
    const Ran info = run_cli({"info", k32, "k32.q5_k"});
    ASSERT_EQ(info.rc, 0) << info.err;
    EXPECT_NE(info.out.find("(GGML blocks: q5_K, 256 values in 176 bytes)"), std::string::npos) << info.out;
    for (const char* t : {"k32.q2_k", "k32.q3_k", "k32.q4_k", "k32.q5_k", "k32.q6_k", "k32.q8_k"}) {
        expect_cat_matches(k32, t, ref_values(file(std::string("gguf/") + t + ".ref")));
    }
    const std::string l64 = dir.file("legacy64.hrry");
    for (const char* t : {"l64.q8_0", "l64.q4_0", "l64.q4_1", "l64.q5_0", "l64.q5_1"}) {
        expect_cat_matches(l64, t, ref_values(file(std::string("gguf/") + t + ".ref")));
    }

    // Read by the spec alone (before or after the command name): the private scheme is
    // one it does not know, named in the message.
    for (const auto& args : std::vector<std::vector<std::string>>{{"--spec-only", "ls", k32},
                                                                  {"ls", "--spec-only", k32},
                                                                  {"info", "--spec-only", k32},
                                                                  {"verify", "--spec-only", k32},
                                                                  {"cat", "--spec-only", k32, "k32.q4_k"}}) {
        const Ran r = run_cli(args);
        EXPECT_EQ(r.rc, 1) << args[0] << " " << args[1] << ": " << r.out;
        EXPECT_NE((r.err + r.out).find("0xF0 is a private scheme this reader does not know"), std::string::npos)
            << args[0] << " " << args[1] << ": " << r.err << r.out;
    }
    // A file without private schemes reads the same either way.
    const Ran plain = run_cli({"--spec-only", "verify", file("gguf/v2.gguf")});
    EXPECT_EQ(plain.rc, 0) << plain.err;
}

}  // namespace
}  // namespace hurray::clitest

#endif
