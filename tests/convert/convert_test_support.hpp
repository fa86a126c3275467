// SPDX-License-Identifier: Apache-2.0
// Helpers of the converter tests: an in-memory TensorSource (with failures on demand), a
// small HRRYFILE holding every kind of tensor, and checks that two sources are identical.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "hurray/convert/tensor_source.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/core/element_convert.hpp"
#include "hurray/io/file_writer.hpp"

namespace hurray::convert::test {

/// One tensor of a MemorySource: name, descriptor and the bytes of each buffer.
struct MemTensor {
    std::string name;
    TensorDescriptor desc;
    std::vector<std::vector<uint8_t>> buffers;
};

/// A TensorSource over tensors held in memory. `with_views`: view() gives their bytes
/// (else read() only). `fail_tensor`: read() of that tensor fails (kIoError).
class MemorySource final : public TensorSource {
public:
    explicit MemorySource(std::vector<MemTensor> tensors, bool with_views = false)
        : mem_(std::move(tensors)), with_views_(with_views) {
        for (const MemTensor& t : mem_) {
            tensors_.push_back(SourceTensor{t.name, t.desc});
        }
    }
    std::optional<size_t> fail_tensor;
    KvMetadata metadata;
    Format source_format = Format::kHrryFile;

    [[nodiscard]] Format format() const noexcept override { return source_format; }
    [[nodiscard]] size_t tensor_count() const noexcept override { return tensors_.size(); }
    [[nodiscard]] const SourceTensor& tensor(size_t i) const noexcept override {
        return tensors_[i];
    }
    [[nodiscard]] const KvMetadata& kv() const noexcept override { return metadata; }
    [[nodiscard]] Status read(size_t i, size_t buffer, uint64_t offset,
                              std::span<uint8_t> out) const override {
        if (fail_tensor && *fail_tensor == i) {
            return Error(ErrorCode::kIoError,
                         "tensor '" + mem_[i].name + "': injected read failure", 1234);
        }
        const auto& b = mem_.at(i).buffers.at(buffer);
        if (offset > b.size() || out.size() > b.size() - offset) {
            return Error(ErrorCode::kInvalidArgument, "range");
        }
        if (!out.empty()) {
            std::memcpy(out.data(), b.data() + offset, out.size());
        }
        return {};
    }
    [[nodiscard]] std::optional<std::span<const uint8_t>> view(size_t i,
                                                               size_t buffer) const override {
        if (!with_views_ || (fail_tensor && *fail_tensor == i)) {
            return std::nullopt;
        }
        return std::span<const uint8_t>(mem_.at(i).buffers.at(buffer));
    }

private:
    std::vector<MemTensor> mem_;
    bool with_views_;
    std::vector<SourceTensor> tensors_;
};

inline std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
    std::vector<uint8_t> b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

inline std::vector<uint8_t> i64_bytes(const std::vector<int64_t>& v) {
    std::vector<uint8_t> b(v.size() * 8);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

/// Two small dense tensors: "w" float32 [3, 4] and "b" int64 [2] (a file of each
/// format, for the tests that read one over a range source or a server).
inline std::vector<MemTensor> small_tensors() {
    std::vector<MemTensor> out;
    {
        MemTensor t{"w", *make_dense(ElementType::kFloat32, {3, 4}), {}};
        std::vector<float> v(12);
        for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<float>(k) * 0.25F - 1.0F;
        t.buffers.push_back(f32_bytes(v));
        out.push_back(std::move(t));
    }
    {
        MemTensor t{"b", *make_dense(ElementType::kInt64, {2}), {}};
        t.buffers.push_back(i64_bytes({7, -9}));
        out.push_back(std::move(t));
    }
    return out;
}

/// Tensors of every kind: dense float32, float16, int8, bool (bit-packed), per-block int4
/// (valid scales), CSR, a partition composite of two dense members, an empty tensor.
inline std::vector<MemTensor> model_tensors() {
    std::vector<MemTensor> out;
    {
        MemTensor t{"dense.f32", *make_dense(ElementType::kFloat32, {3, 4}), {}};
        std::vector<float> v(12);
        for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<float>(k) * 0.5F - 2.0F;
        t.buffers.push_back(f32_bytes(v));
        out.push_back(std::move(t));
    }
    {
        MemTensor t{"dense.f16", *make_dense(ElementType::kFloat16, {5}), {}};
        std::vector<uint8_t> b;
        for (const float f : {1.0F, -2.5F, 0.125F, 65504.0F, 0.0F}) {
            const uint16_t h = float_to_float16(f);
            b.push_back(static_cast<uint8_t>(h & 0xFF));
            b.push_back(static_cast<uint8_t>(h >> 8));
        }
        t.buffers.push_back(b);
        out.push_back(std::move(t));
    }
    {
        MemTensor t{"dense.i8", *make_dense(ElementType::kInt8, {2, 3}), {}};
        t.buffers.push_back({0x01, 0xFF, 0x7F, 0x80, 0x00, 0x05});
        out.push_back(std::move(t));
    }
    {
        MemTensor t{"mask", *make_dense(ElementType::kBool, {10}), {}};
        t.buffers.push_back({0b10110101, 0b00000010});
        out.push_back(std::move(t));
    }
    {
        MemTensor t{"quant.q4", *make_per_block_quantized(ElementType::kInt4, {2, 64}, 1, 32), {}};
        std::vector<uint8_t> codes(t.desc.buffers[0].byte_size);
        for (size_t k = 0; k < codes.size(); ++k) codes[k] = static_cast<uint8_t>(k * 37 + 11);
        t.buffers.push_back(codes);
        std::vector<uint8_t> scales;
        for (const float f : {0.5F, 0.25F, 2.0F, 0.0625F}) {
            const uint16_t h = float_to_float16(f);
            scales.push_back(static_cast<uint8_t>(h & 0xFF));
            scales.push_back(static_cast<uint8_t>(h >> 8));
        }
        scales.resize(t.desc.buffers[1].byte_size, 0);
        t.buffers.push_back(scales);
        out.push_back(std::move(t));
    }
    {
        MemTensor t{"sparse.csr", *make_csr(ElementType::kFloat32, 3, 3, 2), {}};
        t.buffers.push_back(f32_bytes({1.5F, 2.5F}));
        t.buffers.push_back(i64_bytes({0, 2}));
        t.buffers.push_back(i64_bytes({0, 1, 1, 2}));
        out.push_back(std::move(t));
    }
    {
        MemTensor head{
            "comp",
            *make_composite_head(ElementType::kFloat32, {4, 2}, CompositionRule::kPartition, 2),
            {}};
        out.push_back(std::move(head));
        for (int m = 0; m < 2; ++m) {
            MemTensor t{
                "comp.part" + std::to_string(m), *make_dense(ElementType::kFloat32, {2, 2}), {}};
            t.desc.shard = ShardDescriptor{{4, 2}, {static_cast<uint64_t>(2 * m), 0}};
            t.buffers.push_back(f32_bytes({1.0F + m, 2.0F + m, 3.0F + m, 4.0F + m}));
            out.push_back(std::move(t));
        }
    }
    {
        MemTensor t{"empty", *make_dense(ElementType::kFloat32, {0, 4}), {}};
        t.buffers.push_back({});
        out.push_back(std::move(t));
    }
    return out;
}

/// Writes `tensors` (and `kv`) as an HRRYFILE with hurray::FileWriter.
inline void write_hrry(const std::filesystem::path& path, const std::vector<MemTensor>& tensors,
                       const KvMetadata& kv = {}) {
    auto w = FileWriter::create_file(path);
    ASSERT_TRUE(w.ok()) << w.error().to_string();
    for (const MemTensor& t : tensors) {
        std::vector<std::span<const uint8_t>> spans(t.buffers.begin(), t.buffers.end());
        auto s = w->add_tensor(t.name, t.desc, spans);
        ASSERT_TRUE(s.ok()) << t.name << ": " << s.error().to_string();
    }
    w->kv() = kv;
    auto s = w->finish();
    ASSERT_TRUE(s.ok()) << s.error().to_string();
}

/// The KV of the model file.
inline KvMetadata model_kv() {
    KvMetadata kv;
    EXPECT_TRUE(kv.set("general.architecture", KvValue::string("test")).ok());
    EXPECT_TRUE(kv.set("n", KvValue::uint64(42)).ok());
    EXPECT_TRUE(kv.set("dims", KvValue::int64_array({4096, -1})).ok());
    return kv;
}

/// Buffer `b` of tensor `i`, read whole through read() (and checked against view()).
inline std::vector<uint8_t> read_all(const TensorSource& s, size_t i, size_t b) {
    const auto& buffers = s.tensor(i).descriptor.buffers;
    if (b >= buffers.size()) {
        ADD_FAILURE() << s.tensor(i).name << " has no buffer " << b;
        return {};
    }
    std::vector<uint8_t> out(buffers[b].byte_size);
    auto st = s.read(i, b, 0, out);
    EXPECT_TRUE(st.ok()) << st.error().to_string();
    if (auto v = s.view(i, b)) {
        EXPECT_EQ(std::vector<uint8_t>(v->begin(), v->end()), out) << s.tensor(i).name;
    }
    return out;
}

/// `a` and `b` hold the same tensors (names, descriptors, bytes) and KV.
inline void expect_identical(const TensorSource& a, const TensorSource& b) {
    ASSERT_EQ(a.tensor_count(), b.tensor_count());
    for (size_t i = 0; i < a.tensor_count(); ++i) {
        SCOPED_TRACE(a.tensor(i).name);
        EXPECT_EQ(a.tensor(i).name, b.tensor(i).name);
        EXPECT_EQ(a.tensor(i).descriptor, b.tensor(i).descriptor);
        for (size_t k = 0; k < a.tensor(i).descriptor.buffers.size(); ++k) {
            EXPECT_EQ(read_all(a, i, k), read_all(b, i, k)) << "buffer " << k;
        }
    }
    EXPECT_EQ(a.kv(), b.kv());
}

}  // namespace hurray::convert::test
