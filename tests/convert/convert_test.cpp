// SPDX-License-Identifier: Apache-2.0
// write(), convert_file(), compare_sources() and dequantized_source(): dispatch,
// verification, atomicity, progress, dequantization.
#include "hurray/convert/convert.hpp"

#include <gtest/gtest.h>


#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "convert_test_support.hpp"
#include "hurray/convert/hrryfile.hpp"
#include "hurray/core/dequantize.hpp"
#include "hurray/core/tensor_view.hpp"
#include "hurray/io/byte_sink.hpp"
#include "io_test_util.hpp"

namespace hurray::convert {
namespace {

using hurray::test::TempDir;
using test::MemorySource;
using test::MemTensor;
using test::model_kv;
using test::model_tensors;
using test::write_hrry;

ConvertOptions scratch() {
    ConvertOptions o;
    o.durable = false;
    return o;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(ConvertWrite, DispatchesOnExtensionAndOption) {
    TempDir dir;
    MemorySource mem(model_tensors(), true);
    auto r = write(mem, dir.file("a.hrry"), scratch());
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_EQ(r->to, Format::kHrryFile);
    EXPECT_EQ(r->from, Format::kHrryFile);
    EXPECT_EQ(r->tensors, model_tensors().size());
    EXPECT_FALSE(r->verified);
    uint64_t bytes = 0;
    for (const auto& t : model_tensors()) {
        for (const auto& b : t.buffers) bytes += b.size();
    }
    EXPECT_EQ(r->data_bytes, bytes);

    auto opt = scratch();
    opt.to = Format::kHrryFile;
    ASSERT_TRUE(write(mem, dir.file("b.weird"), opt).ok());
    auto b = open_source(dir.file("b.weird"));
    ASSERT_TRUE(b.ok());
    test::expect_identical(mem, **b);
}

TEST(ConvertWrite, RejectsUnknownTargets) {
    TempDir dir;
    MemorySource mem(model_tensors(), true);
    auto no_ext = write(mem, dir.file("out.bin"), scratch());
    ASSERT_FALSE(no_ext.ok());
    EXPECT_EQ(no_ext.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(contains(no_ext.error().message(), "out.bin")) << no_ext.error().message();
    auto stream = write(mem, dir.file("out.hrrys"), scratch());
    ASSERT_FALSE(stream.ok());
    EXPECT_EQ(stream.error().code(), ErrorCode::kUnsupported);
    auto opt = scratch();
    opt.chunk_bytes = 0;
    auto zero = write(mem, dir.file("out.hrry"), opt);
    ASSERT_FALSE(zero.ok());
    EXPECT_TRUE(contains(zero.error().message(), "chunk_bytes"));
    opt = scratch();
    opt.dequantize = true;
    opt.dequantize_type = ElementType::kInt8;
    auto bad_type = write(mem, dir.file("out.hrry"), opt);
    ASSERT_FALSE(bad_type.ok());
    EXPECT_TRUE(contains(bad_type.error().message(), "dequantize_type"));
    EXPECT_EQ(dir.list(), std::vector<std::string>{});
}

TEST(ConvertWrite, FailureLeavesNoOutputAndNoTempFile) {
    TempDir dir;
    for (const bool views : {false, true}) {
        MemorySource mem(model_tensors(), views);
        mem.fail_tensor = 4;
        auto r = write(mem, dir.file("out.hrry"), scratch());
        ASSERT_FALSE(r.ok());
        EXPECT_TRUE(contains(r.error().message(), "quant.q4")) << r.error().message();
        EXPECT_EQ(dir.list(), std::vector<std::string>{});
        auto opt = scratch();
        opt.verify = true;
        ASSERT_FALSE(write(mem, dir.file("out.hrry"), opt).ok());
        EXPECT_EQ(dir.list(), std::vector<std::string>{});
    }
    // An existing output keeps its content.
    const std::string keep = dir.write("keep.hrry", {1, 2, 3});
    MemorySource mem(model_tensors(), true);
    mem.fail_tensor = 7;
    ASSERT_FALSE(write(mem, keep, scratch()).ok());
    EXPECT_EQ(dir.list(), std::vector<std::string>{"keep.hrry"});
    EXPECT_EQ(std::filesystem::file_size(keep), 3U);
}

TEST(ConvertWrite, ProgressReportsEveryChunkUpToTheTotal) {
    TempDir dir;
    MemorySource mem(model_tensors(), false);
    std::vector<std::pair<uint64_t, uint64_t>> calls;
    auto opt = scratch();
    opt.chunk_bytes = 16;
    opt.progress = [&](uint64_t done, uint64_t total) { calls.emplace_back(done, total); };
    auto r = write(mem, dir.file("out.hrry"), opt);
    ASSERT_TRUE(r.ok());
    ASSERT_FALSE(calls.empty());
    uint64_t last = 0;
    for (const auto& [done, total] : calls) {
        EXPECT_GT(done, last);
        EXPECT_LE(done - last, 16U);
        EXPECT_EQ(total, r->data_bytes);
        last = done;
    }
    EXPECT_EQ(last, r->data_bytes);
}

TEST(ConvertWrite, AProgressCallbackThatReturnsFalseCancelsAndLeavesNoOutput) {
    // Every output format: cancelled at the first, then at a later chunk; nothing at
    // the path, an existing file kept as it was.
    TempDir dir;
    const std::string keep = dir.write("keep.bin", {1, 2, 3});
    std::vector<MemTensor> dense;  // what every format holds: float32, float16, int8
    for (MemTensor& t : model_tensors()) {
        if (t.name.starts_with("dense.")) {
            dense.push_back(std::move(t));
        }
    }
    ASSERT_EQ(dense.size(), 3U);
    for (const Format to : {Format::kHrryFile, Format::kSafeTensors, Format::kGguf, Format::kNpz}) {
        for (const uint64_t stop_after : {uint64_t{1}, uint64_t{3}}) {
            MemorySource mem(dense, false);
            auto opt = scratch();
            opt.to = to;
            opt.dequantize = true;
            opt.chunk_bytes = 16;
            uint64_t calls = 0;
            opt.progress = [&](uint64_t, uint64_t) { return ++calls < stop_after; };
            auto r = write(mem, dir.file("out.bin"), opt);
            ASSERT_FALSE(r.ok()) << format_name(to);
            EXPECT_EQ(r.error().code(), ErrorCode::kCancelled) << r.error().to_string();
            EXPECT_NE(r.error().message().find("cancelled by the progress callback"), std::string::npos)
                << r.error().to_string();
            EXPECT_EQ(calls, stop_after) << format_name(to);
            EXPECT_EQ(dir.list(), std::vector<std::string>{"keep.bin"}) << format_name(to);
            opt.progress = [&](uint64_t, uint64_t) { return false; };
            ASSERT_FALSE(write(mem, keep, opt).ok());
            EXPECT_EQ(std::filesystem::file_size(keep), 3U);
        }
    }
    // A callback that returns nothing only reports.
    MemorySource mem(model_tensors(), false);
    auto opt = scratch();
    uint64_t calls = 0;
    opt.progress = [&](uint64_t, uint64_t) { ++calls; };
    EXPECT_TRUE(write(mem, dir.file("out.hrry"), opt).ok());
    EXPECT_GT(calls, 0U);
}

TEST(AtomicFileSinkNonDurable, CommitsAndAbandonsLikeTheDurableOne) {
    TempDir dir;
    {
        auto sink = AtomicFileSink::create(dir.file("x.bin"), /*durable=*/false);
        ASSERT_TRUE(sink.ok());
        const std::vector<uint8_t> bytes{1, 2, 3, 4};
        ASSERT_TRUE((*sink)->write(bytes).ok());
        EXPECT_EQ(dir.list().size(), 1U);  // the temporary file only
        ASSERT_TRUE((*sink)->commit().ok());
        EXPECT_FALSE((*sink)->write(bytes).ok());
    }
    EXPECT_EQ(dir.list(), std::vector<std::string>{"x.bin"});
    EXPECT_EQ(std::filesystem::file_size(dir.file("x.bin")), 4U);
    {
        auto sink = AtomicFileSink::create(dir.file("y.bin"), false);
        ASSERT_TRUE(sink.ok());
        ASSERT_TRUE((*sink)->write(std::vector<uint8_t>{9}).ok());
    }  // destroyed uncommitted
    EXPECT_EQ(dir.list(), std::vector<std::string>{"x.bin"});
}

TEST(ConvertFile, VerifyPassesAndReports) {
    TempDir dir;
    write_hrry(dir.file("in.hrry"), model_tensors(), model_kv());
    auto opt = scratch();
    opt.verify = true;
    auto r = convert_file(dir.file("in.hrry"), dir.file("out.hrry"), opt);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_TRUE(r->verified);
    EXPECT_EQ(dir.list(), (std::vector<std::string>{"in.hrry", "out.hrry"}));
    // Durable too (fsync paths).
    opt.durable = true;
    ASSERT_TRUE(convert_file(dir.file("in.hrry"), dir.file("out2.hrry"), opt).ok());
    auto missing = convert_file(dir.file("none.hrry"), dir.file("x.hrry"), opt);
    ASSERT_FALSE(missing.ok());
    EXPECT_TRUE(contains(missing.error().message(), "none.hrry"));
}

TEST(ConvertFile, ReplacingAnOutputLeavesTheNewFileAndNothingElse) {
    // Over an existing file, durable or not (non-durable swaps the names and
    // unlinks the old file rather than renaming over it); npz too.
    TempDir dir;
    write_hrry(dir.file("in.hrry"), model_tensors(), model_kv());
    for (const bool durable : {false, true}) {
        for (const char* out : {"out.hrry", "out.npz"}) {
            const std::string old_bytes = "an older file, not a tensor file";
            {
                std::FILE* f = std::fopen(dir.file(out).c_str(), "wb");
                ASSERT_NE(f, nullptr);
                ASSERT_EQ(std::fwrite(old_bytes.data(), 1, old_bytes.size(), f), old_bytes.size());
                std::fclose(f);
            }
            auto opt = scratch();
            opt.durable = durable;
            opt.dequantize = true;  // for .npz
            auto r = convert_file(dir.file("in.hrry"), dir.file(out), opt);
            ASSERT_TRUE(r.ok()) << r.error().to_string();
            auto back = open_source(dir.file(out));
            ASSERT_TRUE(back.ok()) << out << ": " << back.error().to_string();
            EXPECT_EQ((*back)->tensor_count(), r->tensors) << out;
            const auto listed = dir.list();
            EXPECT_EQ(std::count(listed.begin(), listed.end(), std::string(out)), 1) << out;
            for (const std::string& name : listed) {
                EXPECT_TRUE(name == "in.hrry" || name == "out.hrry" || name == "out.npz") << "left behind: " << name;
            }
        }
    }
}

TEST(CompareSources, FindsTheFirstDifferenceAndNamesIt) {
    auto tensors = model_tensors();
    MemorySource a(tensors, true);
    EXPECT_TRUE(compare_sources(a, a).ok());

    auto changed = tensors;
    changed[0].buffers[0][5 * 4 + 1] ^= 0x01;  // element 5 of dense.f32
    MemorySource b(changed, false);
    auto s = compare_sources(a, b);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code(), ErrorCode::kInvalidData);
    EXPECT_TRUE(contains(s.error().message(), "dense.f32")) << s.error().message();
    EXPECT_TRUE(contains(s.error().message(), "element 5")) << s.error().message();
    EXPECT_TRUE(contains(s.error().message(), "0.5")) << s.error().message();

    auto renamed = tensors;
    renamed[2].name = "other";
    auto n = compare_sources(a, MemorySource(renamed));
    ASSERT_FALSE(n.ok());
    EXPECT_TRUE(contains(n.error().message(), "other"));

    auto fewer = tensors;
    fewer.pop_back();
    auto f = compare_sources(a, MemorySource(fewer));
    ASSERT_FALSE(f.ok());
    EXPECT_TRUE(contains(f.error().message(), "empty")) << f.error().message();

    auto reshaped = tensors;
    reshaped[0].desc = *make_dense(ElementType::kFloat32, {4, 3});
    auto r = compare_sources(a, MemorySource(reshaped));
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(contains(r.error().message(), "shape")) << r.error().message();

    // A quantized code change shows as a value difference (dequantized comparison).
    auto q = tensors;
    q[4].buffers[0][0] ^= 0x0F;
    auto qs = compare_sources(a, MemorySource(q));
    ASSERT_FALSE(qs.ok());
    EXPECT_TRUE(contains(qs.error().message(), "quant.q4")) << qs.error().message();
}

TEST(CompareSources, NanEqualsNanAcrossRepresentations) {
    const float nan1 = std::nanf("1");
    const float nan2 = std::nanf("2");
    std::vector<MemTensor> a{
        {"x", *make_dense(ElementType::kFloat32, {2}), {test::f32_bytes({nan1, 1.0F})}}};
    // The same values, stored column-major: compared as values, where every NaN is equal.
    auto cm = *make_dense(ElementType::kFloat32, {2});
    cm.layout = ColumnMajorLayout{};
    std::vector<MemTensor> b{{"x", cm, {test::f32_bytes({nan2, 1.0F})}}};
    EXPECT_TRUE(compare_sources(MemorySource(a), MemorySource(b)).ok());
    std::vector<MemTensor> c{{"x", cm, {test::f32_bytes({nan2, -1.0F})}}};
    auto s = compare_sources(MemorySource(a), MemorySource(c));
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(contains(s.error().message(), "element 1")) << s.error().message();
}

TEST(Dequantize, PresentsEveryTensorAsPlainDense) {
    MemorySource mem(model_tensors(), true);
    auto d = dequantized_source(mem, ElementType::kFloat32);
    ASSERT_TRUE(d.ok()) << d.error().to_string();
    // The composite's two members are folded into its head.
    ASSERT_EQ((*d)->tensor_count(), model_tensors().size() - 2);
    std::vector<std::string> names;
    for (size_t i = 0; i < (*d)->tensor_count(); ++i) {
        const auto& t = (*d)->tensor(i);
        names.push_back(t.name);
        EXPECT_FALSE(t.descriptor.quantization.has_value()) << t.name;
        EXPECT_TRUE(std::holds_alternative<RowMajorLayout>(t.descriptor.layout)) << t.name;
        EXPECT_EQ(t.descriptor.buffers.size(), 1U) << t.name;
    }
    EXPECT_EQ(names, (std::vector<std::string>{"dense.f32", "dense.f16", "dense.i8", "mask",
                                               "quant.q4", "sparse.csr", "comp", "empty"}));
    // Values: the quantized tensor as the core dequantizes it, the CSR and the composite
    // densified.
    const auto all = model_tensors();
    const auto& q = all[4];
    std::vector<std::span<const uint8_t>> qs(q.buffers.begin(), q.buffers.end());
    auto view = TensorView::make(q.desc, qs);
    ASSERT_TRUE(view.ok());
    auto want = dequantize(*view);
    ASSERT_TRUE(want.ok());
    EXPECT_EQ(test::read_all(**d, 4, 0), test::f32_bytes(*want));
    EXPECT_EQ((*d)->tensor(4).descriptor.element_type, ElementType::kFloat32);
    EXPECT_EQ(test::read_all(**d, 5, 0),
              test::f32_bytes({1.5F, 0.0F, 0.0F, 0.0F, 0.0F, 0.0F, 0.0F, 0.0F, 2.5F}));
    EXPECT_EQ(test::read_all(**d, 6, 0), test::f32_bytes({1, 2, 3, 4, 2, 3, 4, 5}));
    // Plain dense tensors pass through zero-copy.
    EXPECT_TRUE((*d)->view(0, 0).has_value());
    EXPECT_FALSE((*d)->view(4, 0).has_value());
    // The dequantized values equal the source's (compared as float32).
    EXPECT_TRUE(compare_sources(MemorySource(model_tensors()), MemorySource(model_tensors())).ok());
}

TEST(Dequantize, Float16AndBFloat16Storage) {
    MemorySource mem(model_tensors(), false);
    for (const ElementType type : {ElementType::kFloat16, ElementType::kBFloat16}) {
        auto d = dequantized_source(mem, type);
        ASSERT_TRUE(d.ok());
        const auto& t = (*d)->tensor(4);
        EXPECT_EQ(t.descriptor.element_type, type);
        EXPECT_EQ(t.descriptor.buffers[0].byte_size, 2U * 2 * 64);
        const auto bytes = test::read_all(**d, 4, 0);
        const auto all = model_tensors();
        const auto& q = all[4];
        std::vector<std::span<const uint8_t>> qs(q.buffers.begin(), q.buffers.end());
        auto want = dequantize(*TensorView::make(q.desc, qs));
        ASSERT_TRUE(want.ok());
        for (size_t k = 0; k < want->size(); ++k) {
            const uint16_t h = static_cast<uint16_t>(bytes[2 * k] | (bytes[2 * k + 1] << 8));
            const uint16_t expect = type == ElementType::kFloat16 ? float_to_float16((*want)[k])
                                                                  : float_to_bfloat16((*want)[k]);
            ASSERT_EQ(h, expect) << "element " << k;
        }
        // Unquantized tensors keep their type (the CSR stays float32, the int8 int8).
        EXPECT_EQ((*d)->tensor(5).descriptor.element_type, ElementType::kFloat32);
        EXPECT_EQ((*d)->tensor(2).descriptor.element_type, ElementType::kInt8);
    }
}

TEST(Dequantize, ConvertWithVerifyWritesDenseFile) {
    TempDir dir;
    write_hrry(dir.file("in.hrry"), model_tensors(), model_kv());
    auto opt = scratch();
    opt.dequantize = true;
    opt.verify = true;
    auto r = convert_file(dir.file("in.hrry"), dir.file("dense.hrry"), opt);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_TRUE(r->verified);
    EXPECT_EQ(r->tensors, model_tensors().size() - 2);
    auto in = open_source(dir.file("in.hrry"));
    auto out = open_source(dir.file("dense.hrry"));
    ASSERT_TRUE(in.ok() && out.ok());
    EXPECT_EQ((*out)->kv(), model_kv());
    // Tensor by tensor, the dense output has the source's values.
    auto presented = dequantized_source(**in);
    ASSERT_TRUE(presented.ok());
    EXPECT_TRUE(compare_sources(**presented, **out).ok());
}

TEST(Dequantize, TornCompositeIsAnError) {
    auto tensors = model_tensors();
    tensors.pop_back();  // "empty"
    tensors.pop_back();  // the composite's second member
    auto d = dequantized_source(MemorySource(tensors), ElementType::kFloat32);
    ASSERT_FALSE(d.ok());
    EXPECT_TRUE(contains(d.error().message(), "comp")) << d.error().message();
}

}  // namespace
}  // namespace hurray::convert
