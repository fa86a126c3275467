// SPDX-License-Identifier: Apache-2.0
// GGUF in and out (hurray/convert/gguf.hpp): files written by the independent Python
// writer tests/convert/writers/gguf_writer.py, read back element by element; the round
// trip GGUF -> TensorSource -> GGUF; hostile inputs.
#include "hurray/convert/gguf.hpp"

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cstdio>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <sys/wait.h>
#include <utility>
#include <vector>

#include "convert/gguf_format.hpp"
#include "convert_test_support.hpp"
#include "hurray/convert/convert.hpp"
#include "hurray/io/range_source.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/core/dequantize.hpp"
#include "hurray/core/shape.hpp"
#include "hurray/core/tensor_view.hpp"
#include "hurray/io/file_reader.hpp"
#include "io_test_util.hpp"
#include "python_writers.hpp"
#include "test_paths.hpp"

namespace hurray::convert {
namespace {

using hurray::test::Bytes;
using hurray::test::read_all;
using hurray::test::TempDir;

using hurray::test::kPython;

/// Runs the Python writer once into a directory shared by the tests of this file.
class GgufFiles : public hurray::test::WrittenFilesTest<GgufFiles> {
public:
    static std::vector<std::string> writer_commands(const std::filesystem::path& dir) {
        return {"gguf_writer.py " + dir.string()};
    }
};

/// Every byte of buffer `b` of tensor `i`, through read() in small pieces.
Bytes read_buffer(const TensorSource& src, size_t i, size_t b, size_t piece = 37) {
    const uint64_t size = src.tensor(i).descriptor.buffers[b].byte_size;
    Bytes out(size);
    for (uint64_t off = 0; off < size; off += piece) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(piece, size - off));
        auto st = src.read(i, b, off, std::span<uint8_t>(out.data() + off, n));
        EXPECT_TRUE(st) << st.error().to_string();
    }
    return out;
}

std::vector<float> floats(const Bytes& b) {
    std::vector<float> f(b.size() / 4);
    std::memcpy(f.data(), b.data(), f.size() * 4);
    return f;
}

/// Bit-identical float32 (NaNs: both NaN).
void expect_same_floats(const std::vector<float>& got, const std::vector<float>& want,
                        const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    size_t bad = 0;
    for (size_t k = 0; k < got.size() && bad < 5; ++k) {
        const bool same = std::isnan(want[k])
                              ? std::isnan(got[k])
                              : std::bit_cast<uint32_t>(got[k]) == std::bit_cast<uint32_t>(want[k]);
        if (!same) {
            ++bad;
            ADD_FAILURE() << what << " element " << k << ": got " << got[k] << " (0x" << std::hex
                          << std::bit_cast<uint32_t>(got[k]) << "), want " << want[k] << " (0x"
                          << std::bit_cast<uint32_t>(want[k]) << std::dec << ")";
        }
    }
}

/// The float32 values of a per-block affine tensor by hurray's core dequantization.
std::vector<float> core_dequantize(const TensorSource& src, size_t i) {
    const auto& d = src.tensor(i).descriptor;
    std::vector<Bytes> bufs;
    std::vector<std::span<const uint8_t>> spans;
    for (size_t b = 0; b < d.buffers.size(); ++b) {
        bufs.push_back(read_buffer(src, i, b, 4096));
    }
    for (const auto& b : bufs) {
        spans.emplace_back(b);
    }
    auto view = TensorView::make(d, spans);
    EXPECT_TRUE(view) << view.error().to_string();
    if (!view) {
        return {};
    }
    auto v = dequantize(*view);
    EXPECT_TRUE(v) << v.error().to_string();
    return v ? *v : std::vector<float>{};
}

size_t index_of(const TensorSource& src, const std::string& name) {
    auto i = src.find(name);
    EXPECT_TRUE(i.has_value()) << name;
    return i.value_or(0);
}

TEST_F(GgufFiles, KvEveryTypeWithItsGgufType) {
    auto src = open_gguf(file("all.gguf"));
    ASSERT_TRUE(src) << src.error().to_string();
    const KvMetadata& kv = (*src)->kv();
    EXPECT_EQ((*src)->format(), Format::kGguf);
    EXPECT_EQ(*kv.get_string("general.architecture"), "llama");
    EXPECT_EQ(*kv.get_uint64("general.alignment"), 64U);
    EXPECT_EQ(*kv.get_uint64("t.u8"), 200U);
    EXPECT_EQ(*kv.get_int64("t.i8"), -100);
    EXPECT_EQ(*kv.get_uint64("t.u16"), 65535U);
    EXPECT_EQ(*kv.get_int64("t.i16"), -32768);
    EXPECT_EQ(*kv.get_uint64("t.u32"), 4000000000U);
    EXPECT_EQ(*kv.get_int64("t.i32"), -2000000000);
    EXPECT_EQ(*kv.get_float64("t.f32"), static_cast<double>(0.1F));
    EXPECT_EQ(std::bit_cast<uint64_t>(*kv.get_float64("t.f32.snan")), 0x7FF0000020000000ULL);
    EXPECT_EQ(*kv.get_bool("t.bool"), true);
    EXPECT_EQ(*kv.get_string("t.str"), "h\xC3\xA9llo \xE2\x9C\x93");
    auto bad = kv.get_bytes("t.str.bad");
    ASSERT_TRUE(bad);
    EXPECT_EQ(Bytes(bad->begin(), bad->end()), (Bytes{0xFF, 0xFE, 'o', 'k'}));
    EXPECT_EQ(*kv.get_uint64("t.u64"), UINT64_MAX);
    EXPECT_EQ(*kv.get_int64("t.i64"), INT64_MIN);
    EXPECT_EQ(std::bit_cast<uint64_t>(*kv.get_float64("t.f64")), 0x8000000000000000ULL);
    const auto* strs = std::get_if<std::vector<std::string>>(&(*kv.get_array("t.arr.str"))->values);
    ASSERT_NE(strs, nullptr);
    EXPECT_EQ(*strs, (std::vector<std::string>{"<s>", "", "\xE2\x96\x81the", "tok\xC3\xA9n"}));
    EXPECT_EQ(std::get<std::vector<int64_t>>((*kv.get_array("t.arr.i32"))->values),
              (std::vector<int64_t>{1, -2, 2147483647, -2147483648LL}));
    EXPECT_EQ(std::get<std::vector<uint64_t>>((*kv.get_array("t.arr.u8"))->values),
              (std::vector<uint64_t>{0, 1, 255}));
    EXPECT_EQ(std::get<std::vector<double>>((*kv.get_array("t.arr.f32"))->values).size(), 3U);
    EXPECT_EQ(std::get<std::vector<bool>>((*kv.get_array("t.arr.bool"))->values),
              (std::vector<bool>{true, false, true}));
    EXPECT_EQ(std::get<std::vector<int64_t>>((*kv.get_array("t.arr.empty"))->values).size(), 0U);
    // An array of arrays: its GGUF bytes (element type 9, count 3, then each array).
    auto nested = kv.get_bytes("t.arr.nested");
    ASSERT_TRUE(nested);
    EXPECT_EQ(nested->size(), 4U + 8 + (12 + 4) + 12 + (12 + 2));

    auto types = kv.get_array(kGgufKvTypesKey);
    ASSERT_TRUE(types);
    const auto& t = std::get<std::vector<std::string>>((*types)->values);
    ASSERT_EQ(t.size(), kv.size() - 1);
    EXPECT_EQ(t[1], "uint32:general.alignment");
    EXPECT_EQ(t[2], "uint8:t.u8");
    EXPECT_EQ(t[8], "float32:t.f32");
    EXPECT_EQ(t[11], "string:t.str");
    EXPECT_EQ(t[12], "string:t.str.bad");
    EXPECT_EQ(t[16], "array[string]:t.arr.str");
    EXPECT_EQ(t[24], "array[array]:t.arr.nested");
}

TEST_F(GgufFiles, DenseTensorsZeroCopyRowMajor) {
    auto src = open_gguf(file("all.gguf"));
    ASSERT_TRUE(src) << src.error().to_string();
    struct Want {
        const char* name;
        ElementType type;
        Shape shape;
    };
    const Want wants[] = {
        {"dense_f32", ElementType::kFloat32, {3, 4}},
        {"dense_f16", ElementType::kFloat16, {2, 3, 4}},
        {"dense_bf16", ElementType::kBFloat16, {5}},
        {"dense_f64", ElementType::kFloat64, {2, 2}},
        {"dense_i8", ElementType::kInt8, {7}},
        {"dense_i16", ElementType::kInt16, {2, 3}},
        {"dense_i32", ElementType::kInt32, {2, 2, 2, 2}},
        {"dense_i64", ElementType::kInt64, {3}},
    };
    for (const Want& w : wants) {
        const size_t i = index_of(**src, w.name);
        const auto& d = (*src)->tensor(i).descriptor;
        EXPECT_EQ(d.element_type, w.type) << w.name;
        EXPECT_EQ(d.shape, w.shape) << w.name;
        EXPECT_FALSE(d.quantization.has_value()) << w.name;
        const Bytes raw = read_all(file(std::string(w.name) + ".raw"));
        EXPECT_EQ(read_buffer(**src, i, 0), raw) << w.name;
        auto v = (*src)->view(i, 0);
        ASSERT_TRUE(v.has_value()) << w.name;
        EXPECT_EQ(Bytes(v->begin(), v->end()), raw) << w.name;
        EXPECT_EQ(reinterpret_cast<uintptr_t>(v->data()) % 64, 0U)
            << w.name << ": aligned in the mapping";
    }
}

TEST_F(GgufFiles, AFileTruncatedWhileOpenIsAnErrorNotASigbus) {
    // The reader maps the file through ReadOnlyFile (guarded against SIGBUS):
    // pages that vanish read as zeros, and the read reports the change.
    TempDir dir;
    const std::filesystem::path p = dir.path() / "shrinks.gguf";
    std::filesystem::copy_file(file("all.gguf"), p);
    auto src = open_gguf(p);
    ASSERT_TRUE(src) << src.error().to_string();
    const size_t i = index_of(**src, "dense_f32");
    ASSERT_FALSE(read_buffer(**src, i, 0).empty());
    std::filesystem::resize_file(p, 0);
    Bytes out((*src)->tensor(i).descriptor.buffers[0].byte_size);
    const auto st = (*src)->read(i, 0, 0, out);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code(), ErrorCode::kIoError) << st.error().to_string();
    EXPECT_EQ(st.error().tensor(), "dense_f32");
    // A missing file names itself as data.
    auto missing = open_gguf(dir.path() / "missing.gguf");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().file(), (dir.path() / "missing.gguf").native());
}

TEST_F(GgufFiles, Q8_0AndQ4_0ArePerBlockAffineAndValueExact) {
    auto src = open_gguf(file("all.gguf"));
    ASSERT_TRUE(src) << src.error().to_string();
    for (const char* name : {"q8_0", "q4_0", "q8_0_rand", "q4_0_rand"}) {
        const size_t i = index_of(**src, name);
        const auto& d = (*src)->tensor(i).descriptor;
        ASSERT_TRUE(d.quantization.has_value()) << name;
        const auto* pb = std::get_if<PerBlockAffine>(&d.quantization->scheme);
        ASSERT_NE(pb, nullptr) << name;
        EXPECT_EQ(pb->axis, d.rank() - 1);
        EXPECT_EQ(pb->block_size, 32U);
        EXPECT_EQ(pb->scale_type, ElementType::kFloat16);
        EXPECT_FALSE(pb->zero_point_buffer_index.has_value());
        EXPECT_EQ(d.element_type, name[1] == '8' ? ElementType::kInt8 : ElementType::kInt4);
        EXPECT_FALSE((*src)->view(i, 0).has_value()) << "de-interleaved bytes have no view";
        expect_same_floats(core_dequantize(**src, i),
                           floats(read_all(file(std::string(name) + ".ref"))), name);
    }
}

TEST_F(GgufFiles, ZeroAndNonFiniteScalesKeepTheBlocks) {
    auto src = open_gguf(file("all.gguf"));
    ASSERT_TRUE(src) << src.error().to_string();
    for (const char* name : {"q8_0_zero", "q4_0_inf", "q4_k", "q6_k", "q5_1_rand", "iq2_xxs_raw"}) {
        const size_t i = index_of(**src, name);
        const auto& d = (*src)->tensor(i).descriptor;
        ASSERT_TRUE(ggml_blocks_type(d).has_value()) << name;
        const Bytes raw = read_all(file(std::string(name) + ".raw"));
        EXPECT_EQ(d.buffers.size(), 1U);
        EXPECT_EQ(read_buffer(**src, i, 0), raw) << name;
        auto v = (*src)->view(i, 0);
        ASSERT_TRUE(v.has_value());
        EXPECT_EQ(Bytes(v->begin(), v->end()), raw) << name;
    }
    EXPECT_EQ(ggml_blocks_type((*src)->tensor(index_of(**src, "q4_k")).descriptor), 12U);
}

TEST_F(GgufFiles, OverARangeSourceTheSameFileAndValues) {
    // open_gguf(RangeSource): every file of the independent writer lists and reads as
    // from its path (open_source tells GGUF and routes it there): the same names, KV,
    // descriptors and bytes, except Q8_0 / Q4_0 tensors presented per-block affine
    // locally, which keep their blocks over a range source (their values compare equal).
    for (const char* name : {"all.gguf", "v2.gguf", "k32.gguf", "legacy64.gguf", "many.gguf"}) {
        SCOPED_TRACE(name);
        auto local = open_gguf(file(name));
        ASSERT_TRUE(local.ok()) << local.error().to_string();
        auto range = FileRangeSource::open(file(name));
        ASSERT_TRUE(range.ok());
        const std::shared_ptr<FileRangeSource> counted = std::move(*range);
        auto remote = open_source(std::shared_ptr<RangeSource>(counted));
        ASSERT_TRUE(remote.ok()) << remote.error().to_string();
        EXPECT_EQ((*remote)->format(), Format::kGguf);
        EXPECT_LE(counted->request_count(), 2U);  // the 64 KiB head, then the rest of the first MiB
        ASSERT_EQ((*remote)->tensor_count(), (*local)->tensor_count());
        EXPECT_TRUE((*remote)->kv() == (*local)->kv());
        for (size_t i = 0; i < (*local)->tensor_count(); ++i) {
            const SourceTensor& l = (*local)->tensor(i);
            const SourceTensor& r = (*remote)->tensor(i);
            EXPECT_EQ(r.name, l.name);
            if (r.descriptor != l.descriptor) {
                EXPECT_TRUE(ggml_blocks_type(r.descriptor).has_value()) << l.name;
            } else {
                EXPECT_EQ(read_buffer(**remote, i, 0, 4099), read_buffer(**local, i, 0, 4099)) << l.name;
            }
            EXPECT_FALSE((*remote)->view(i, 0).has_value());
        }
        const Status same = compare_sources(**local, **remote);
        EXPECT_TRUE(same.ok()) << same.error().to_string();
    }
}

TEST(GgufRange, AHeaderPastTheFirstMebibyteIsReadInGrowingRanges) {
    const TempDir dir;
    using convert::test::MemTensor;
    std::vector<MemTensor> tensors;
    MemTensor w{"w", *make_dense(ElementType::kFloat32, {4}), {}};
    w.buffers.push_back(convert::test::f32_bytes({1.0F, -2.0F, 3.5F, 0.25F}));
    tensors.push_back(std::move(w));
    convert::test::MemorySource src(std::move(tensors));
    std::vector<std::string> vocab;
    for (size_t k = 0; k < 120000; ++k) {  // 22 bytes each: a header of ~2.6 MB
        std::string t("<token-");
        t.append(std::to_string(k)).append(">");
        vocab.push_back(std::move(t));
    }
    ASSERT_TRUE(src.metadata.set("tokenizer.ggml.tokens", KvValue::string_array(vocab)).ok());
    const std::string path = dir.file("big-header.gguf");
    ConvertOptions o;
    o.to = Format::kGguf;
    ASSERT_TRUE(write(src, path, o).ok());
    ASSERT_GT(std::filesystem::file_size(path), uint64_t{2} << 20U);
    ASSERT_LT(std::filesystem::file_size(path), uint64_t{4} << 20U);
    auto range = FileRangeSource::open(path);
    ASSERT_TRUE(range.ok());
    const std::shared_ptr<FileRangeSource> counted = std::move(*range);
    auto remote = open_source(std::shared_ptr<RangeSource>(counted));
    ASSERT_TRUE(remote.ok()) << remote.error().to_string();
    // The 64 KiB head, then [64 KiB, 1 MiB), [1, 2) and [2, 4) MiB.
    EXPECT_EQ(counted->request_count(), 4U);
    auto local = open_source(path);
    ASSERT_TRUE(local.ok());
    EXPECT_TRUE(compare_sources(**local, **remote).ok());
    EXPECT_TRUE((*remote)->kv() == (*local)->kv());
    // A file cut inside its header fails as from its path (kTruncated), after growing
    // to the whole file.
    std::vector<uint8_t> bytes = hurray::test::read_all(path);
    bytes.resize(bytes.size() / 2);
    const std::string cut = dir.write("cut.gguf", bytes);
    auto cut_range = open_gguf(std::make_shared<MemoryRangeSource>(bytes));
    auto cut_path = open_gguf(cut);
    ASSERT_FALSE(cut_range.ok());
    ASSERT_FALSE(cut_path.ok());
    EXPECT_EQ(cut_range.error().code(), cut_path.error().code());
    EXPECT_EQ(cut_range.error().offset(), cut_path.error().offset());
}

TEST_F(GgufFiles, VersionTwoDefaultAlignment) {
    auto src = open_source(file("v2.gguf"));
    ASSERT_TRUE(src) << src.error().to_string();
    ASSERT_EQ((*src)->tensor_count(), 2U);
    EXPECT_EQ((*src)->tensor(0).name, "a");
    auto v = (*src)->view(0, 0);
    ASSERT_TRUE(v.has_value());
    const float want[] = {1, 2, 3, 4};
    EXPECT_EQ(std::memcmp(v->data(), want, 16), 0);
    EXPECT_EQ(*(*src)->kv().get_string("general.name"), "small");
}

TEST_F(GgufFiles, ReadRangeChecks) {
    auto src = open_gguf(file("v2.gguf"));
    ASSERT_TRUE(src) << src.error().to_string();
    uint8_t b[8];
    EXPECT_EQ((*src)->read(5, 0, 0, b).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ((*src)->read(0, 1, 0, b).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ((*src)->read(0, 0, 12, b).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ((*src)->read(1, 1, 0, std::span<uint8_t>(b, 4)).error().code(),
              ErrorCode::kInvalidArgument);
    EXPECT_TRUE((*src)->read(1, 1, 0, std::span<uint8_t>(b, 2)));
}

/// Every tensor's descriptor and buffers, and the KV, of two sources agree.
void expect_same_sources(const TensorSource& a, const TensorSource& b) {
    EXPECT_TRUE(a.kv() == b.kv());
    ASSERT_EQ(a.tensor_count(), b.tensor_count());
    for (size_t i = 0; i < a.tensor_count(); ++i) {
        EXPECT_EQ(a.tensor(i).name, b.tensor(i).name);
        EXPECT_TRUE(a.tensor(i).descriptor == b.tensor(i).descriptor) << a.tensor(i).name;
        for (size_t k = 0; k < a.tensor(i).descriptor.buffers.size(); ++k) {
            EXPECT_EQ(read_buffer(a, i, k, 4096), read_buffer(b, i, k, 4096)) << a.tensor(i).name;
        }
    }
}

TEST_F(GgufFiles, RoundTripIsByteIdentical) {
    auto src = open_gguf(file("all.gguf"));
    ASSERT_TRUE(src) << src.error().to_string();
    TempDir out;
    for (uint64_t chunk : {uint64_t{8} << 20, uint64_t{100}, uint64_t{1}}) {
        ConvertOptions opt;
        opt.chunk_bytes = chunk;
        uint64_t last = 0;
        opt.progress = [&last](uint64_t done, uint64_t total) {
            EXPECT_LE(done, total);
            EXPECT_GE(done, last);
            last = done;
        };
        const std::string path = out.file("rt.gguf");
        auto st = write_gguf(**src, path, opt);
        ASSERT_TRUE(st) << st.error().to_string();
        // Same KV (types included), same tensor infos and offsets, same data: the same file.
        EXPECT_EQ(read_all(path), read_all(file("all.gguf"))) << "chunk " << chunk;
        auto back = open_gguf(path);
        ASSERT_TRUE(back) << back.error().to_string();
        expect_same_sources(**src, **back);
    }
    EXPECT_EQ(out.list(), std::vector<std::string>{"rt.gguf"}) << "no temporary file left";
}

TEST_F(GgufFiles, VersionTwoIsWrittenAsThree) {
    auto src = open_gguf(file("v2.gguf"));
    ASSERT_TRUE(src) << src.error().to_string();
    TempDir out;
    ASSERT_TRUE(write_gguf(**src, out.file("v3.gguf")));
    Bytes want = read_all(file("v2.gguf"));
    want[4] = 3;
    EXPECT_EQ(read_all(out.file("v3.gguf")), want);
}

TEST_F(GgufFiles, DequantizeGgmlMatchesTheReference) {
    auto src = open_gguf(file("all.gguf"));
    ASSERT_TRUE(src) << src.error().to_string();
    const std::pair<const char*, uint32_t> cases[] = {
        {"q8_0", 8},      {"q4_0", 2},       {"q8_0_rand", 8},  {"q4_0_rand", 2},  {"q8_0_zero", 8},
        {"q4_0_inf", 2},  {"q4_k", 12},      {"q6_k", 14},      {"q4_1_rand", 3},  {"q5_0_rand", 6},
        {"q5_1_rand", 7}, {"q2_k_rand", 10}, {"q3_k_rand", 11}, {"q5_k_rand", 13},
    };
    for (const auto& [name, type] : cases) {
        const size_t i = index_of(**src, name);
        const auto& d = (*src)->tensor(i).descriptor;
        const Bytes raw = read_all(file(std::string(name) + ".raw"));
        auto values = dequantize_ggml(type, raw, *element_count(d.shape));
        ASSERT_TRUE(values) << values.error().to_string();
        expect_same_floats(*values, floats(read_all(file(std::string(name) + ".ref"))), name);
    }
    // Q8_K (float32 scale), from k32.gguf.
    {
        const Bytes raw = read_all(file("k32.q8_k.raw"));
        auto values = dequantize_ggml(15, raw, 1024);
        ASSERT_TRUE(values) << values.error().to_string();
        expect_same_floats(*values, floats(read_all(file("k32.q8_k.ref"))), "k32.q8_k");
        std::vector<float> into(1024);
        ASSERT_TRUE(dequantize_ggml(15, raw, into));
        expect_same_floats(into, *values, "k32.q8_k into a span");
        EXPECT_EQ(dequantize_ggml(15, raw, std::span<float>(into.data(), 1000)).error().code(),
                  ErrorCode::kInvalidArgument);
    }
    for (const auto& [name, type] : std::initializer_list<std::pair<const char*, uint32_t>>{
             {"k32.q2_k", 10}, {"k32.q3_k", 11}, {"k32.q4_k", 12}, {"k32.q5_k", 13}, {"k32.q6_k", 14}}) {
        const Bytes raw = read_all(file(std::string(name) + ".raw"));
        const auto info = ggml_type_info(type);
        ASSERT_TRUE(info);
        auto values = dequantize_ggml(type, raw, raw.size() / info->bytes * info->elements);
        ASSERT_TRUE(values) << values.error().to_string();
        expect_same_floats(*values, floats(read_all(file(std::string(name) + ".ref"))), name);
    }
    EXPECT_EQ(dequantize_ggml(16, Bytes(66), 256).error().code(), ErrorCode::kUnsupported);
    EXPECT_EQ(dequantize_ggml(12, Bytes(143), 256).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(dequantize_ggml(12, Bytes(144), 255).error().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(dequantize_ggml(4, Bytes(18), 32).error().code(), ErrorCode::kUnsupported);
}

/// The files of gguf_writer.py laid out as ggml's writer lays them out, at alignments 32
/// and 64, with and without K-quants, with many small tensors.
const char* const kGgmlLikeFiles[] = {"all.gguf", "k32.gguf", "legacy64.gguf", "many.gguf"};

/// What tests/convert/writers/gguf_ggml_check.py (ggml's loading rules, re-stated) says
/// of `path`: its exit status and output line.
std::pair<int, std::string> ggml_check(const std::string& path) {
    const std::string cmd = std::string(kPython) + " " + hurray::test::writers_dir() + "/gguf_ggml_check.py " +
                            path + " 2>&1";
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) {
        return {-1, "popen failed"};
    }
    std::array<char, 512> buf{};
    while (std::fgets(buf.data(), static_cast<int>(buf.size()), p) != nullptr) {
        out += buf.data();
    }
    const int rc = ::pclose(p);
    return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, out};
}

TEST_F(GgufFiles, GgmlLoadingRulesCheckerHasTeeth) {
    // The writer's files load in ggml (both no_alloc modes) but for all.gguf, whose
    // array of arrays ggml refuses; the same file without its last tensor's padding
    // (what write_gguf wrote before) fails ggml's no_alloc=false read.
    for (const char* name : {"k32.gguf", "legacy64.gguf", "many.gguf", "v2.gguf"}) {
        const auto [rc, out] = ggml_check(file(name));
        EXPECT_EQ(rc, 0) << out;
    }
    const auto [rc_all, out_all] = ggml_check(file("all.gguf"));
    EXPECT_EQ(rc_all, 1) << out_all;
    EXPECT_NE(out_all.find("arrays of arrays are not read by ggml"), std::string::npos) << out_all;
    Bytes k32 = read_all(file("k32.gguf"));
    TempDir out;
    size_t end = k32.size();
    while (end > 0 && k32[end - 1] == 0) {
        --end;
    }
    ASSERT_LT(end, k32.size()) << "k32.gguf ends with padding";
    k32.resize(end);
    hurray::test::write_all_file(out.file("short.gguf"), k32);
    const auto [rc, text] = ggml_check(out.file("short.gguf"));
    EXPECT_EQ(rc, 1) << text;
    EXPECT_NE(text.find("no_alloc=true: ok; no_alloc=false:"), std::string::npos) << text;
}

TEST_F(GgufFiles, GgmlWrittenFilesComeBackByteForByteThroughAnHrryFile) {
    // GGUF -> HRRYFILE -> GGUF, as a user runs it: every HRRYFILE opens with the default
    // reader (GGML blocks understood), every quantized tensor's values are ggml's, and
    // the GGUF written back is the original file, which ggml's reader loads.
    TempDir out;
    for (const char* name : kGgmlLikeFiles) {
        SCOPED_TRACE(name);
        const std::string hrry = out.file(std::string(name) + ".hrry");
        const std::string back = out.file(std::string(name) + ".back.gguf");
        auto to = convert_file(file(name), hrry);
        ASSERT_TRUE(to) << to.error().to_string();
        auto reader = FileReader::open(hrry);
        ASSERT_TRUE(reader) << reader.error().to_string();
        ASSERT_TRUE(reader->check_all());
        bool has_blocks = false;
        for (size_t i = 0; i < reader->tensor_count(); ++i) {
            auto t = reader->tensor(i);
            ASSERT_TRUE(t) << t.error().to_string();
            const std::string tname(t->name());
            const auto type = ggml_blocks_type(t->descriptor());
            has_blocks = has_blocks || type.has_value();
            if (type) {  // the blocks exactly as GGUF stored them
                const Bytes raw = read_all(file(tname + ".raw"));
                const auto span = t->buffers()[0].span();
                EXPECT_TRUE(std::equal(span.begin(), span.end(), raw.begin(), raw.end())) << tname;
            }
            if (!std::filesystem::exists(file(tname + ".ref"))) {
                continue;
            }
            auto view = t->view();
            ASSERT_TRUE(view) << view.error().to_string();
            auto values = to_float32(*view);
            if (type && !values && values.error().code() == ErrorCode::kUnsupported) {
                continue;  // a type without dequantization (none has a .ref)
            }
            ASSERT_TRUE(values) << tname << ": " << values.error().to_string();
            expect_same_floats(*values, floats(read_all(file(tname + ".ref"))), tname);
        }
        // Read by the spec alone, a GGML blocks tensor is a private scheme it does not know.
        FileReadOptions spec_only;
        spec_only.descriptor.libhurray_schemes = false;
        spec_only.descriptors = DescriptorCheck::kFull;  // every descriptor decoded at open
        auto strict = FileReader::open(hrry, spec_only);
        if (has_blocks) {
            ASSERT_FALSE(strict);
            EXPECT_EQ(strict.error().code(), ErrorCode::kUnknownQuantizationScheme);
            EXPECT_NE(strict.error().message().find("0xF0 is a private scheme this reader does not know"),
                      std::string::npos)
                << strict.error().to_string();
        } else {
            EXPECT_TRUE(strict) << strict.error().to_string();
        }
        auto again = convert_file(hrry, back);
        ASSERT_TRUE(again) << again.error().to_string();
        EXPECT_EQ(read_all(back), read_all(file(name)));
        if (std::string(name) != "all.gguf") {  // ggml refuses all.gguf's array of arrays
            const auto [rc, text] = ggml_check(back);
            EXPECT_EQ(rc, 0) << text;
        }
    }
}

/// A TensorSource over descriptors and buffers held in memory.
class BuffersSource final : public TensorSource {
public:
    void add(std::string name, TensorDescriptor d, std::vector<Bytes> buffers) {
        tensors_.push_back(SourceTensor{std::move(name), std::move(d)});
        buffers_.push_back(std::move(buffers));
    }
    KvMetadata kv_;
    [[nodiscard]] Format format() const noexcept override { return Format::kHrryFile; }
    [[nodiscard]] size_t tensor_count() const noexcept override { return tensors_.size(); }
    [[nodiscard]] const SourceTensor& tensor(size_t i) const noexcept override {
        return tensors_[i];
    }
    [[nodiscard]] const KvMetadata& kv() const noexcept override { return kv_; }
    [[nodiscard]] Status read(size_t i, size_t b, uint64_t offset,
                              std::span<uint8_t> out) const override {
        const Bytes& buf = buffers_.at(i).at(b);
        if (offset + out.size() > buf.size()) {
            return Error(ErrorCode::kInvalidArgument, "range");
        }
        std::copy_n(buf.begin() + static_cast<std::ptrdiff_t>(offset), out.size(), out.begin());
        return Status::success();
    }

private:
    std::vector<SourceTensor> tensors_;
    std::vector<std::vector<Bytes>> buffers_;
};

TEST(GgufWrite, DefaultKvTypesScalarsAndDequantization) {
    BuffersSource src;
    ASSERT_TRUE(src.kv_.add("i", KvValue::int64(-5)));
    ASSERT_TRUE(src.kv_.add("u", KvValue::uint64(7)));
    ASSERT_TRUE(src.kv_.add("f", KvValue::float64(0.1)));
    ASSERT_TRUE(src.kv_.add("b", KvValue::boolean(true)));
    ASSERT_TRUE(src.kv_.add("s", KvValue::string("x")));
    ASSERT_TRUE(src.kv_.add("raw", KvValue::bytes({1, 2, 3})));
    ASSERT_TRUE(src.kv_.add("arr", KvValue::string_array({"a", "b"})));
    ASSERT_TRUE(src.kv_.add("general.alignment", KvValue::uint64(128)));
    auto scalar = make_dense(ElementType::kFloat32, {});
    ASSERT_TRUE(scalar);
    src.add("scalar", *scalar, {Bytes{0, 0, 0x80, 0x3F}});
    // Per-block affine with block 64: no GGUF type; dequantized on request.
    auto q = make_per_block_quantized(ElementType::kInt8, {2, 64}, 1, 64, ElementType::kFloat32);
    ASSERT_TRUE(q);
    Bytes quants(128);
    for (size_t k = 0; k < quants.size(); ++k) quants[k] = static_cast<uint8_t>(k * 7);
    const float scales[2] = {0.5F, -0.25F};
    Bytes sb(8);
    std::memcpy(sb.data(), scales, 8);
    src.add("q64", *q, {quants, sb});

    TempDir out;
    auto st = write_gguf(src, out.file("x.gguf"));
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().code(), ErrorCode::kUnsupported);
    EXPECT_NE(st.error().message().find("q64"), std::string::npos) << st.error().message();
    EXPECT_TRUE(out.list().empty()) << "no output, no temporary file";

    ConvertOptions opt;
    opt.dequantize = true;
    ASSERT_TRUE(write_gguf(src, out.file("x.gguf"), opt));
    auto back = open_gguf(out.file("x.gguf"));
    ASSERT_TRUE(back) << back.error().to_string();
    const KvMetadata& kv = (*back)->kv();
    const auto& types =
        std::get<std::vector<std::string>>((*kv.get_array(kGgufKvTypesKey))->values);
    EXPECT_EQ(types, (std::vector<std::string>{"int64:i", "uint64:u", "float64:f", "bool:b",
                                               "string:s", "array[uint8]:raw", "array[string]:arr",
                                               "uint32:general.alignment"}));
    EXPECT_EQ(*kv.get_float64("f"), 0.1);
    EXPECT_EQ((*back)->tensor(0).descriptor.shape, (Shape{}));
    const auto& d = (*back)->tensor(1).descriptor;
    EXPECT_EQ(d.element_type, ElementType::kFloat32);
    EXPECT_EQ(d.shape, (Shape{2, 64}));
    const auto values = floats(read_buffer(**back, 1, 0));
    for (size_t k = 0; k < 128; ++k) {
        EXPECT_EQ(values[k], scales[k / 64] * static_cast<float>(static_cast<int8_t>(quants[k])))
            << k;
    }
    EXPECT_EQ(reinterpret_cast<uintptr_t>((*back)->view(1, 0)->data()) % 128, 0U);
}

TEST(GgufWrite, RecordedTypesAreChecked) {
    BuffersSource src;
    ASSERT_TRUE(src.kv_.add("small", KvValue::uint64(300)));
    ASSERT_TRUE(src.kv_.add(std::string(kGgufKvTypesKey), KvValue::string_array({"uint8:small"})));
    TempDir out;
    auto st = write_gguf(src, out.file("x.gguf"));
    ASSERT_FALSE(st);
    EXPECT_NE(st.error().message().find("'small'"), std::string::npos) << st.error().message();
    ASSERT_TRUE(src.kv_.set(std::string(kGgufKvTypesKey), KvValue::string_array({"uint16:small"})));
    ASSERT_TRUE(write_gguf(src, out.file("x.gguf")));
    ASSERT_TRUE(src.kv_.set(std::string(kGgufKvTypesKey), KvValue::string_array({"nonsense"})));
    EXPECT_FALSE(write_gguf(src, out.file("y.gguf")));
    ASSERT_TRUE(
        src.kv_.set(std::string(kGgufKvTypesKey), KvValue::string_array({"float32:small"})));
    EXPECT_FALSE(write_gguf(src, out.file("y.gguf")));
    // The raw bytes of an array of arrays are checked.
    ASSERT_TRUE(src.kv_.set(std::string(kGgufKvTypesKey),
                            KvValue::string_array({"uint16:small", "array[array]:n"})));
    ASSERT_TRUE(src.kv_.add(
        "n", KvValue::bytes({9, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0})));  // 1 array, missing
    auto bad = write_gguf(src, out.file("y.gguf"));
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message().find("'n'"), std::string::npos) << bad.error().to_string();
    // One array holding one int16 array [-2].
    ASSERT_TRUE(src.kv_.set("n", KvValue::bytes({9, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,    3,
                                                 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0xFE, 0xFF})));
    ASSERT_TRUE(write_gguf(src, out.file("z.gguf")));
    auto z = open_gguf(out.file("z.gguf"));
    ASSERT_TRUE(z) << z.error().to_string();
    ASSERT_NE((*z)->kv().find("n"), nullptr);
    EXPECT_TRUE(*(*z)->kv().find("n") == *src.kv_.find("n"));
    EXPECT_EQ(out.list(), (std::vector<std::string>{"x.gguf", "z.gguf"}));
}

TEST_F(GgufFiles, ThroughHrryFileWithOpenSource) {
    // Dense and per-block affine tensors: GGUF -> HRRYFILE -> GGUF through write() and
    // open_source(), verified, and byte-identical at the end.
    auto src = open_gguf(file("v2.gguf"));
    ASSERT_TRUE(src) << src.error().to_string();
    TempDir out;
    ConvertOptions opt;
    opt.verify = true;
    auto to_hrry = write(**src, out.file("m.hrry"), opt);
    ASSERT_TRUE(to_hrry) << to_hrry.error().to_string();
    auto hrry = open_source(out.file("m.hrry"));
    ASSERT_TRUE(hrry) << hrry.error().to_string();
    EXPECT_EQ((*hrry)->format(), Format::kHrryFile);
    expect_same_sources(**src, **hrry);
    auto back = write(**hrry, out.file("back.gguf"), opt);
    ASSERT_TRUE(back) << back.error().to_string();
    EXPECT_TRUE(back->verified);
    Bytes want = read_all(file("v2.gguf"));
    want[4] = 3;
    EXPECT_EQ(read_all(out.file("back.gguf")), want);
}

TEST_F(GgufFiles, ThroughHrryFileEveryTensorKind) {
    // Every kind, the private GGML blocks included: GGUF -> HRRYFILE -> GGUF gives the
    // original file byte for byte.
    auto src = open_gguf(file("all.gguf"));
    ASSERT_TRUE(src) << src.error().to_string();
    TempDir out;
    auto to_hrry = write(**src, out.file("m.hrry"));
    ASSERT_TRUE(to_hrry) << to_hrry.error().to_string();
    auto hrry = open_source(out.file("m.hrry"));
    ASSERT_TRUE(hrry) << hrry.error().to_string();
    expect_same_sources(**src, **hrry);
    ConvertOptions opt;
    opt.verify = true;
    auto back = write(**hrry, out.file("back.gguf"), opt);
    ASSERT_TRUE(back) << back.error().to_string();
    EXPECT_EQ(read_all(out.file("back.gguf")), read_all(file("all.gguf")));
}

TEST_F(GgufFiles, DequantizeGgmlBlocksThroughAnHrryFile) {
    // --dequantize reaches the GGML blocks kept under the private scheme (K-quants...)
    // through dequantize_ggml, after a trip through an HRRYFILE too: the values are
    // those of dequantize_ggml over the original blocks, bit for bit.
    auto src = open_gguf(file("all.gguf"));
    ASSERT_TRUE(src) << src.error().to_string();
    TempDir out;
    auto to_hrry = write(**src, out.file("m.hrry"));
    ASSERT_TRUE(to_hrry) << to_hrry.error().to_string();
    auto hrry = open_source(out.file("m.hrry"));
    ASSERT_TRUE(hrry) << hrry.error().to_string();
    auto dense = dequantized_source(**hrry, ElementType::kFloat32);
    ASSERT_TRUE(dense) << dense.error().to_string();
    size_t checked = 0;
    for (size_t i = 0; i < (*src)->tensor_count(); ++i) {
        const auto& t = (*src)->tensor(i);
        const auto type = ggml_blocks_type(t.descriptor);
        if (!type) {
            continue;
        }
        ASSERT_FALSE(t.descriptor.buffers.empty());
        Bytes blocks(t.descriptor.buffers[0].byte_size);
        ASSERT_TRUE((*src)->read(i, 0, 0, blocks));
        const auto count = element_count(t.descriptor.shape);
        ASSERT_TRUE(count);
        auto want = dequantize_ggml(*type, blocks, *count);
        const auto j = (*dense)->find(t.name);
        ASSERT_TRUE(j) << t.name;
        ASSERT_FALSE((*dense)->tensor(*j).descriptor.buffers.empty());
        Bytes got((*dense)->tensor(*j).descriptor.buffers[0].byte_size);
        const Status read = (*dense)->read(*j, 0, 0, got);
        if (!want) {
            // Types without dequantization (IQ...): the same clear error through the source.
            EXPECT_EQ(want.error().code(), ErrorCode::kUnsupported) << t.name;
            EXPECT_FALSE(read) << t.name;
            continue;
        }
        ASSERT_TRUE(read) << t.name << ": " << read.error().to_string();
        ASSERT_EQ(got.size(), want->size() * sizeof(float)) << t.name;
        EXPECT_EQ(std::memcmp(got.data(), want->data(), got.size()), 0) << t.name;
        ++checked;
    }
    EXPECT_GT(checked, 0U) << "all.gguf has K-quant tensors";
    // A file with a type that has no dequantization: the conversion fails naming the
    // tensor, and leaves no output.
    ConvertOptions opt;
    opt.dequantize = true;
    auto st = write(**hrry, out.file("m.safetensors"), opt);
    ASSERT_FALSE(st);
    EXPECT_NE(st.error().message().find("iq2_xxs"), std::string::npos) << st.error().to_string();
    EXPECT_FALSE(std::filesystem::exists(out.file("m.safetensors")));
}

// ---------------------------------------------------------------------------
// Hostile inputs, built here field by field.

/// A little-endian GGUF builder for hostile inputs.
struct G {
    Bytes b;
    G& u8(uint8_t v) {
        b.push_back(v);
        return *this;
    }
    G& u32(uint32_t v) {
        for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
        return *this;
    }
    G& u64(uint64_t v) {
        for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
        return *this;
    }
    G& str(const std::string& s) {
        u64(s.size());
        b.insert(b.end(), s.begin(), s.end());
        return *this;
    }
    G& head(uint64_t tensors, uint64_t kvs, uint32_t version = 3) {
        b = {'G', 'G', 'U', 'F'};
        return u32(version).u64(tensors).u64(kvs);
    }
    /// A tensor info.
    G& info(const std::string& name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset) {
        str(name).u32(static_cast<uint32_t>(ne.size()));
        for (uint64_t n : ne) u64(n);
        return u32(type).u64(offset);
    }
    G& pad(size_t alignment = 32) {
        while (b.size() % alignment != 0) b.push_back(0);
        return *this;
    }
    G& data(size_t n, uint8_t fill = 0x11) {
        b.insert(b.end(), n, fill);
        return *this;
    }
};

/// A valid file: general.alignment 32, an F32 [4] tensor and a Q8_0 [2 x 32] one.
Bytes valid_file() {
    G g;
    g.head(2, 2).str("general.alignment").u32(4).u32(32);
    g.str("names").u32(9).u32(8).u64(2).str("x").str("y");
    g.info("a", {4}, 0, 0).info("q", {32, 2}, 8, 32).pad();
    g.data(16, 0).data(16, 0);
    for (int blk = 0; blk < 2; ++blk)
        g.u8(0x00).u8(0x3C).data(32, static_cast<uint8_t>(blk + 1));  // d = 1.0
    return g.b;
}

Result<std::unique_ptr<TensorSource>> open_bytes(const TempDir& dir, const Bytes& bytes) {
    return open_gguf(dir.write("h.gguf", bytes));
}

void expect_error(const TempDir& dir, const Bytes& bytes, ErrorCode code, uint64_t offset,
                  const std::string& field) {
    auto r = open_bytes(dir, bytes);
    ASSERT_FALSE(r) << field;
    EXPECT_EQ(r.error().code(), code) << r.error().to_string();
    EXPECT_EQ(r.error().offset(), offset) << r.error().to_string();
    EXPECT_NE(r.error().message().find(field), std::string::npos) << r.error().to_string();
}

TEST(GgufHostile, ValidFileOpensAndReads) {
    TempDir dir;
    auto r = open_bytes(dir, valid_file());
    ASSERT_TRUE(r) << r.error().to_string();
    ASSERT_EQ((*r)->tensor_count(), 2U);
    const auto q = core_dequantize(**r, 1);
    ASSERT_EQ(q.size(), 64U);
    EXPECT_EQ(q[0], 1.0F);
    EXPECT_EQ(q[63], 2.0F);
}

TEST(GgufHostile, TruncatedAnywhere) {
    TempDir dir;
    const Bytes full = valid_file();
    for (size_t n = 0; n < full.size(); ++n) {
        auto r =
            open_bytes(dir, Bytes(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n)));
        ASSERT_FALSE(r) << "prefix " << n;
        EXPECT_NE(r.error().message().find("gguf"), std::string::npos) << r.error().to_string();
        EXPECT_NE(r.error().offset(), Error::kNoOffset) << r.error().to_string();
    }
}

TEST(GgufHostile, HeaderFields) {
    TempDir dir;
    Bytes b = valid_file();
    b[0] = 'X';
    expect_error(dir, b, ErrorCode::kInvalidMagic, 0, "magic");
    expect_error(dir, G().head(0, 0, 1).b, ErrorCode::kUnsupportedVersion, 4, "v1");
    expect_error(dir, G().head(0, 0, 0x03000000).b, ErrorCode::kUnsupportedVersion, 4,
                 "big-endian");
    expect_error(dir, G().head(0, 0, 4).b, ErrorCode::kUnsupportedVersion, 4, "version");
    expect_error(dir, G().head(uint64_t{1} << 62, 0).b, ErrorCode::kTruncated, 8, "tensor_count");
    expect_error(dir, G().head(0, UINT64_MAX).b, ErrorCode::kTruncated, 16, "kv_count");
    EXPECT_TRUE(open_bytes(dir, G().head(0, 0).b)) << "an empty GGUF file is valid";
}

TEST(GgufHostile, KvFields) {
    TempDir dir;
    // key length past the end
    expect_error(dir, G().head(0, 1).u64(1000).data(20).b, ErrorCode::kTruncated, 24, "kv[0] key");
    // unknown value type
    expect_error(dir, G().head(0, 1).str("k").u32(13).u8(0).b, ErrorCode::kInvalidFile, 33,
                 "unknown value type 13");
    // string value length past the end
    expect_error(dir, G().head(0, 1).str("k").u32(8).u64(UINT64_MAX).b, ErrorCode::kTruncated, 37,
                 "'k'");
    // array element type unknown, array count huge
    expect_error(dir, G().head(0, 1).str("k").u32(9).u32(42).u64(0).b, ErrorCode::kInvalidFile, 37,
                 "element type 42");
    expect_error(dir, G().head(0, 1).str("k").u32(9).u32(4).u64(uint64_t{1} << 61).b,
                 ErrorCode::kTruncated, 41, "elements cannot fit");
    expect_error(dir, G().head(0, 1).str("k").u32(9).u32(8).u64(2).str("a").u64(99).b,
                 ErrorCode::kTruncated, 58, "'k'[1]");
    // bool byte other than 0/1
    expect_error(dir, G().head(0, 1).str("k").u32(7).u8(2).b, ErrorCode::kInvalidFile, 37, "bool");
    // duplicate key; the reserved key
    expect_error(dir, G().head(0, 2).str("k").u32(0).u8(1).str("k").u32(0).u8(1).b,
                 ErrorCode::kDuplicateName, 38, "duplicate key");
    expect_error(dir, G().head(0, 1).str(std::string(kGgufKvTypesKey)).u32(0).u8(1).b,
                 ErrorCode::kUnsupported, 24, "reserved");
    // general.alignment: not a uint32, not a power of two
    expect_error(dir, G().head(0, 1).str("general.alignment").u32(10).u64(32).b,
                 ErrorCode::kInvalidFile, 49, "must be a uint32");
    expect_error(dir, G().head(0, 1).str("general.alignment").u32(4).u32(24).b,
                 ErrorCode::kInvalidFile, 53, "not a power of two");
    expect_error(dir, G().head(0, 1).str("general.alignment").u32(4).u32(0).b,
                 ErrorCode::kInvalidFile, 53, "not a power of two");
    // arrays of arrays nested too deep
    G deep;
    deep.head(0, 1).str("k").u32(9);
    for (int i = 0; i < 12; ++i) deep.u32(9).u64(1);
    deep.u32(0).u64(0);
    auto r = open_bytes(dir, deep.b);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::kNestingTooDeep) << r.error().to_string();
}

TEST(GgufHostile, TensorInfoFields) {
    TempDir dir;
    auto one = [](const std::string& name, std::vector<uint64_t> ne, uint32_t type,
                  uint64_t offset) {
        G g;
        g.head(1, 0).info(name, std::move(ne), type, offset).pad().data(64);
        return g.b;
    };
    expect_error(dir, one("t", {1, 1, 1, 1, 1}, 0, 0), ErrorCode::kInvalidFile, 33,
                 "n_dims 5 exceeds 4");
    expect_error(dir, one("t", {uint64_t{1} << 63}, 0, 0), ErrorCode::kInvalidFile, 37,
                 "exceeds 2^63");
    expect_error(dir, one("t", {uint64_t{1} << 32, uint64_t{1} << 32}, 0, 0),
                 ErrorCode::kSizeOverflow, 45, "overflows at ne[1]");
    expect_error(dir, one("t", {4}, 4, 0), ErrorCode::kUnsupported, 45, "unknown ggml type 4");
    expect_error(dir, one("t", {4}, 1000, 0), ErrorCode::kUnsupported, 45,
                 "unknown ggml type 1000");
    expect_error(dir, one("t", {48}, 8, 0), ErrorCode::kInvalidFile, 37,
                 "not a multiple of the q8_0 block size");
    expect_error(dir, one("t", {4}, 0, 8), ErrorCode::kInvalidFile, 49,
                 "not a multiple of the alignment");
    expect_error(dir, one("t", {4}, 0, 64), ErrorCode::kTruncated, 49, "runs past the end");
    expect_error(dir, one("t", {4}, 0, UINT64_MAX - 31), ErrorCode::kTruncated, 49,
                 "runs past the end");
    expect_error(dir, one("t", {}, 8, 0), ErrorCode::kInvalidFile, 33, "needs n_dims >= 1");
    G two;
    two.head(2, 0).info("a", {16}, 0, 0).info("b", {4}, 0, 32).pad().data(128);
    expect_error(dir, two.b, ErrorCode::kOverlap, 82, "overlaps tensor 'a'");
    G dup;
    dup.head(2, 0).info("a", {4}, 0, 0).info("a", {4}, 0, 32).pad().data(128);
    auto r = open_bytes(dir, dup.b);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), ErrorCode::kDuplicateName) << r.error().to_string();
}

TEST(GgufHostile, RandomMutationsNeverCrash) {
    TempDir dir;
    const Bytes full = valid_file();
    std::mt19937_64 rng(14);
    int opened = 0;
    for (int round = 0; round < 1500; ++round) {
        Bytes b = full;
        const int flips = 1 + static_cast<int>(rng() % 4);
        for (int k = 0; k < flips; ++k) {
            b[rng() % b.size()] = static_cast<uint8_t>(rng());
        }
        auto r = open_bytes(dir, b);
        if (!r) {
            continue;
        }
        ++opened;
        for (size_t i = 0; i < (*r)->tensor_count(); ++i) {
            for (size_t k = 0; k < (*r)->tensor(i).descriptor.buffers.size(); ++k) {
                (void)read_buffer(**r, i, k);
            }
        }
    }
    EXPECT_GT(opened, 0);
}

}  // namespace
}  // namespace hurray::convert
