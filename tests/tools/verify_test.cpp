// `hurray verify`: valid files and streams, corrupted files (each case its own assertion),
// data-level problems (each listed), truncated streams; and no crash on garbage input for
// any command.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "cli_support.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/core/element_convert.hpp"
#include "hurray/core/quantize.hpp"
#include "hurray/demo_model.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/stream_convert.hpp"
#include "hurray/io/stream_writer.hpp"

namespace hurray::clitest {
namespace {

size_t count_lines(const std::string& s, const std::string& needle) {
    size_t n = 0;
    for (size_t at = s.find(needle); at != std::string::npos; at = s.find(needle, at + 1)) {
        ++n;
    }
    return n;
}

TEST(Verify, ValidFilesAndStreamsPass) {
    const Ran basic = run_cli({"verify", basic_file()});
    EXPECT_EQ(basic.rc, 0) << basic.err;
    EXPECT_NE(basic.out.find("OK"), std::string::npos);
    EXPECT_TRUE(basic.err.empty());
    TempDir dir;
    const std::string model = dir.file("model.hrry");
    ASSERT_TRUE(cli::write_demo_model(model).ok());
    const Ran demo = run_cli({"verify", model});
    EXPECT_EQ(demo.rc, 0) << demo.err;
    EXPECT_NE(demo.out.find("10 tensors, 1 composites"), std::string::npos) << demo.out;
    const auto stream_bytes = stream_of(model);
    ASSERT_FALSE(stream_bytes.empty());
    write_all_file(dir.file("m.stream"), stream_bytes);
    const Ran stream = run_cli({"verify", dir.file("m.stream")});
    EXPECT_EQ(stream.rc, 0) << stream.err;
    const Ran piped = run_piped("cat '" + dir.file("m.stream") + "'", "verify -", dir);
    EXPECT_EQ(piped.rc, 0) << piped.err;
    const Ran quiet = run_cli({"verify", "-q", model});
    EXPECT_EQ(quiet.rc, 0);
    EXPECT_TRUE(quiet.out.empty());
}

class Corrupted : public ::testing::Test {
protected:
    /// Verifies basic.hrry after `edit`; returns what verify printed on stderr.
    template <typename Edit>
    std::string verify_invalid(Edit edit) {
        auto bytes = read_all(basic_file());
        edit(bytes);
        const std::string path = dir_.file("corrupt.hrry");
        write_all_file(path, bytes);
        const Ran r = run_cli({"verify", path});
        EXPECT_EQ(r.rc, 1) << r.out;
        EXPECT_NE(r.out.find("INVALID"), std::string::npos) << r.out;
        EXPECT_NE(r.err.find(path), std::string::npos) << r.err;  // where
        return r.err;
    }
    TempDir dir_;
};

TEST_F(Corrupted, TruncatedBelowHeaderPlusTrailer) {
    const std::string err = verify_invalid([](auto& b) { b.resize(100); });
    EXPECT_NE(err.find("truncated"), std::string::npos) << err;
}

TEST_F(Corrupted, TruncatedByOneByte) {
    const std::string err = verify_invalid([](auto& b) { b.pop_back(); });
    EXPECT_NE(err.find("trailer"), std::string::npos) << err;
}

TEST_F(Corrupted, TruncatedInsideTheIndex) {
    const std::string err = verify_invalid([](auto& b) { b.resize(8300); });
    EXPECT_NE(err.find("at byte"), std::string::npos) << err;
}

TEST_F(Corrupted, EmptyFile) {
    const std::string path = dir_.file("empty.hrry");
    write_all_file(path, std::vector<uint8_t>{});
    const Ran r = run_cli({"verify", path});
    EXPECT_EQ(r.rc, 0) << "an empty input is an empty stream";  // documented: no tensor
    EXPECT_NE(r.out.find("stream, 0 tensors"), std::string::npos) << r.out;
}

TEST_F(Corrupted, DescriptorMagicFlipped) {
    const std::string err = verify_invalid([](auto& b) { b[64] ^= 0xFF; });
    EXPECT_NE(err.find("invalid_magic at byte 64"), std::string::npos) << err;
    EXPECT_NE(err.find("weights"), std::string::npos) << err;
}

TEST_F(Corrupted, IndexByteFlippedFailsTheCrc) {
    const std::string err = verify_invalid([](auto& b) { b[8270] ^= 0x01; });
    EXPECT_NE(err.find("checksum_mismatch"), std::string::npos) << err;
}

TEST_F(Corrupted, TrailerMagicFlipped) {
    const std::string err = verify_invalid([](auto& b) { b.back() ^= 0xFF; });
    EXPECT_NE(err.find("trailer_magic"), std::string::npos) << err;
}

TEST_F(Corrupted, KvKeyByteFlipped) {
    const std::string err = verify_invalid([](auto& b) { b[8210] ^= 0xFF; });
    EXPECT_NE(err.find("KV"), std::string::npos) << err;
}

TEST_F(Corrupted, ReservedHeaderFlagSet) {
    const std::string err = verify_invalid([](auto& b) { b[12] |= 0x80; });
    EXPECT_NE(err.find("at byte 12"), std::string::npos) << err;
}

TEST_F(Corrupted, AlignmentFieldBroken) {
    const std::string err = verify_invalid([](auto& b) { b[16] = 0x01; });
    EXPECT_NE(err.find("at byte 16"), std::string::npos) << err;
}

/// A file with two CSR tensors whose row pointers are broken and one valid tensor.
std::string bad_csr_file(const TempDir& dir) {
    const std::string path = dir.file("csr.hrry");
    auto w = FileWriter::create_file(path);
    EXPECT_TRUE(w.ok());
    auto d = make_csr(ElementType::kFloat32, 3, 3, 2);
    const std::vector<uint8_t> values(8, 0);
    std::vector<uint8_t> cols(16, 0);
    cols[8] = 1;
    std::vector<uint8_t> row_ptr(32, 0);
    row_ptr[8] = 5;  // [0, 5, 0, 0]: not non-decreasing, last != nnz
    const std::span<const uint8_t> bufs[] = {values, cols, row_ptr};
    EXPECT_TRUE(w->add_tensor("sparse_a", *d, bufs).ok());
    auto ok = make_dense(ElementType::kInt8, {2});
    const std::vector<uint8_t> two(2, 1);
    const std::span<const uint8_t> ok_bufs[] = {two};
    EXPECT_TRUE(w->add_tensor("fine", *ok, ok_bufs).ok());
    EXPECT_TRUE(w->add_tensor("sparse_b", *d, bufs).ok());
    EXPECT_TRUE(w->finish().ok());
    return path;
}

TEST(VerifyData, EverySparseProblemIsListedWithItsTensor) {
    TempDir dir;
    const std::string path = bad_csr_file(dir);
    const Ran r = run_cli({"verify", path});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.out.find("INVALID (2 problems)"), std::string::npos) << r.out;
    EXPECT_EQ(count_lines(r.err, "hurray verify: "), 2U) << r.err;
    EXPECT_NE(r.err.find("tensor 'sparse_a'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("tensor 'sparse_b'"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("'fine'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("row_ptr"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("invalid_data"), std::string::npos) << r.err;
    // ls does not check data: it lists the file.
    EXPECT_EQ(run_cli({"ls", path}).rc, 0);
}

TEST(VerifyData, NonFiniteQuantizationScaleIsAProblem) {
    TempDir dir;
    const std::string path = dir.file("q.hrry");
    std::vector<float> x(64);
    for (size_t i = 0; i < x.size(); ++i) {
        x[i] = static_cast<float>(i) / 10.0F - 3.0F;
    }
    auto q = quantize_per_block(x, {2, 32}, ElementType::kInt4, 1, 16, ElementType::kFloat16, true);
    ASSERT_TRUE(q.ok());
    const uint16_t nan = float_to_float16(std::numeric_limits<float>::quiet_NaN());
    q->buffers[1][0] = static_cast<uint8_t>(nan & 0xFFU);
    q->buffers[1][1] = static_cast<uint8_t>(nan >> 8U);
    {
        auto w = FileWriter::create_file(path);
        ASSERT_TRUE(w.ok());
        const auto spans = q->spans();
        ASSERT_TRUE(w->add_tensor("w", q->descriptor, spans).ok());
        ASSERT_TRUE(w->finish().ok());
    }
    const Ran r = run_cli({"verify", path});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("tensor 'w'"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("scale"), std::string::npos) << r.err;
}

TEST(VerifyStream, TruncatedMidTensorNamesTheTensorAndOffset) {
    TempDir dir;
    auto bytes = demo_stream(dir);
    ASSERT_FALSE(bytes.empty());
    bytes.resize(3000);  // inside tensor 0's data (61-byte descriptor, 4096 data bytes)
    write_all_file(dir.file("cut.stream"), bytes);
    const Ran r = run_cli({"verify", dir.file("cut.stream")});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("truncated at byte 3000"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("#0"), std::string::npos) << r.err;
    // From standard input (a process), same verdict.
    const Ran proc = run_process("verify -", dir.file("cut.stream"), dir);
    EXPECT_EQ(proc.rc, 1);
    EXPECT_NE(proc.err.find("truncated"), std::string::npos) << proc.err;
}

TEST(VerifyStream, BadSparseDataInAStreamIsAProblem) {
    TempDir dir;
    const auto stream = stream_of(bad_csr_file(dir));
    ASSERT_FALSE(stream.empty());
    write_all_file(dir.file("csr.stream"), stream);
    const Ran r = run_cli({"verify", dir.file("csr.stream")});
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(count_lines(r.err, "hurray verify: "), 2U) << r.err;
    EXPECT_NE(r.err.find("tensor_0"), std::string::npos) << r.err;
}

TEST(VerifyUsage, HelpAndUsageErrors) {
    EXPECT_EQ(run_cli({"verify", "--help"}).rc, 0);
    EXPECT_EQ(run_cli({"verify"}).rc, 2);
    EXPECT_EQ(run_cli({"verify", "a", "b"}).rc, 2);
    const Ran missing = run_cli({"verify", "/nonexistent/y"});
    EXPECT_EQ(missing.rc, 1);
    EXPECT_NE(missing.err.find("/nonexistent/y"), std::string::npos);
}

/// Every command over a few hundred mutated and random inputs: exit status 0 or 1, an
/// error message whenever it is 1, never a crash.
TEST(Garbage, NoCommandCrashesOnMutatedOrRandomInput) {
    TempDir dir;
    const auto stream = demo_stream(dir);
    ASSERT_FALSE(stream.empty());
    const std::vector<std::vector<uint8_t>> seeds = {read_all(basic_file()), stream, read_all(dir.file("model.hrry"))};
    std::mt19937_64 rng(20261201);
    const std::string path = dir.file("garbage");
    int inputs = 0;
    for (int round = 0; round < 300; ++round) {
        std::vector<uint8_t> bytes;
        const int kind = round % 6;
        if (kind == 5) {
            bytes.resize(rng() % 512);
            for (auto& b : bytes) {
                b = static_cast<uint8_t>(rng());
            }
            if (!bytes.empty() && (rng() & 1U) != 0) {
                const uint8_t hrry[] = {'H', 'R', 'R', 'Y', 1, 0};
                std::copy_n(hrry, std::min<size_t>(6, bytes.size()), bytes.begin());
            }
        } else {
            bytes = seeds[static_cast<size_t>(round) % seeds.size()];
            const int edits = 1 + static_cast<int>(rng() % 8);
            for (int e = 0; e < edits && !bytes.empty(); ++e) {
                const size_t at = rng() % bytes.size();
                switch (rng() % 4) {
                    case 0: bytes[at] ^= static_cast<uint8_t>(1U << (rng() % 8)); break;
                    case 1: bytes[at] = static_cast<uint8_t>(rng()); break;
                    case 2: bytes.resize(at); break;
                    default: bytes[at] = 0xFF; break;
                }
            }
        }
        write_all_file(path, bytes);
        ++inputs;
        for (const std::vector<std::string>& args :
             {std::vector<std::string>{"ls", path}, {"ls", "--json", path}, {"info", path}, {"info", "--json", path},
              {"verify", path}, {"convert", path, "-"}}) {
            const Ran r = run_cli(args);
            ASSERT_TRUE(r.rc == 0 || r.rc == 1) << args[0] << " rc " << r.rc << " round " << round << r.err;
            if (r.rc == 1) {
                ASSERT_FALSE(r.err.empty()) << args[0] << " round " << round;
            }
        }
    }
    EXPECT_EQ(inputs, 300);
}

}  // namespace
}  // namespace hurray::clitest
