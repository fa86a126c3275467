#include "hurray/demo_model.hpp"

#include <cstring>
#include <span>
#include <vector>

#include "hurray/core/builder.hpp"
#include "hurray/core/float_types.hpp"
#include "hurray/core/quantize.hpp"
#include "hurray/core/shape.hpp"
#include "hurray/core/tensor_ref.hpp"

namespace hurray::cli {
namespace {

/// Deterministic pseudo-random weights in [-scale, scale].
std::vector<float> weights(size_t n, uint32_t seed, float scale = 1.0F) {
    std::vector<float> v(n);
    uint32_t x = seed * 2654435761U + 1U;
    for (auto& f : v) {
        x ^= x << 13U;
        x ^= x >> 17U;
        x ^= x << 5U;
        f = scale * (static_cast<float>(x % 20001U) / 10000.0F - 1.0F);
    }
    return v;
}

template <typename T>
std::vector<uint8_t> le_bytes(const std::vector<T>& v) {
    std::vector<uint8_t> out(v.size() * sizeof(T));
    for (size_t i = 0; i < v.size(); ++i) {
        auto u = static_cast<uint64_t>(v[i]);
        if constexpr (std::is_same_v<T, float>) {
            uint32_t bits = 0;
            std::memcpy(&bits, &v[i], 4);
            u = bits;
        }
        for (size_t b = 0; b < sizeof(T); ++b) {
            out[i * sizeof(T) + b] = static_cast<uint8_t>(u >> (8U * b));
        }
    }
    return out;
}

/// Writes `t` as tensor `name`.
Status add_ref(FileWriter& w, const std::string& name, const TensorRef& t) {
    HURRAY_ASSIGN_OR_RETURN(TensorDescriptor d, t.descriptor());
    return w.add_tensor(name, d, t.buffers());
}

Status add_dense_half(FileWriter& w, const std::string& name, ElementType type, Shape shape, uint32_t seed) {
    HURRAY_ASSIGN_OR_RETURN(uint64_t n, element_count(shape));
    const std::vector<float> v = weights(static_cast<size_t>(n), seed, 0.5F);
    if (type == ElementType::kBFloat16) {
        const std::vector<bfloat16_t> b = to_bfloat16(v);
        return add_ref(w, name, TensorRef(b, std::move(shape)));
    }
    const std::vector<float16_t> h = to_float16(v);
    return add_ref(w, name, TensorRef(h, std::move(shape)));
}

Status add_quantized(FileWriter& w, const std::string& name, const QuantizedTensor& q) {
    const auto spans = q.spans();
    return w.add_tensor(name, q.descriptor, spans);
}

}  // namespace

Status add_demo_model(FileWriter& w) {
    constexpr uint64_t kVocab = 64;
    constexpr uint64_t kDim = 32;
    constexpr uint64_t kFfn = 64;
    HURRAY_RETURN_IF_ERROR(add_dense_half(w, "token_embd.weight", ElementType::kFloat16, {kVocab, kDim}, 1));
    HURRAY_RETURN_IF_ERROR(add_dense_half(w, "blk.0.attn_q.weight", ElementType::kBFloat16, {kDim, kDim}, 2));
    HURRAY_RETURN_IF_ERROR(add_dense_half(w, "blk.0.attn_k.weight", ElementType::kFloat16, {kDim, kDim}, 3));

    const auto up = weights(kFfn * kDim, 4);
    HURRAY_ASSIGN_OR_RETURN(QuantizedTensor q4, quantize_per_block(up, {kFfn, kDim}, ElementType::kInt4, 1, 32,
                                                                   ElementType::kFloat16, true));
    HURRAY_RETURN_IF_ERROR(add_quantized(w, "blk.0.ffn_up.weight", q4));
    const auto down = weights(kDim * kFfn, 5);
    HURRAY_ASSIGN_OR_RETURN(QuantizedTensor nf4, quantize_nf4(down, {kDim, kFfn}, 1, 64));
    HURRAY_RETURN_IF_ERROR(add_quantized(w, "blk.0.ffn_down.weight", nf4));

    // A 16 x 16 banded CSR matrix: row r holds columns r-1, r, r+1 (within bounds).
    constexpr uint64_t kN = 16;
    std::vector<float> values;
    std::vector<uint64_t> cols;
    std::vector<uint64_t> row_ptr{0};
    for (uint64_t r = 0; r < kN; ++r) {
        for (uint64_t c = (r == 0 ? 0 : r - 1); c <= r + 1 && c < kN; ++c) {
            values.push_back(c == r ? 1.0F : -0.5F);
            cols.push_back(c);
        }
        row_ptr.push_back(cols.size());
    }
    HURRAY_ASSIGN_OR_RETURN(TensorDescriptor csr, make_csr(ElementType::kFloat32, kN, kN, values.size()));
    const auto vb = le_bytes(values);
    const auto cb = le_bytes(cols);
    const auto rb = le_bytes(row_ptr);
    const std::span<const uint8_t> csr_bufs[] = {vb, cb, rb};
    HURRAY_RETURN_IF_ERROR(w.add_tensor("blk.0.attn_mask", csr, csr_bufs));

    // output.weight [64, 32] float16, stored as a partition of two [32, 32] halves.
    HURRAY_ASSIGN_OR_RETURN(TensorDescriptor head, make_composite_head(ElementType::kFloat16, {kVocab, kDim},
                                                                       CompositionRule::kPartition, 2));
    HURRAY_RETURN_IF_ERROR(w.add_tensor("output.weight", head, {}));
    for (uint64_t part = 0; part < 2; ++part) {
        const std::vector<float16_t> h = to_float16(weights((kVocab / 2) * kDim, 10 + static_cast<uint32_t>(part), 0.5F));
        const TensorRef half(h, {kVocab / 2, kDim});
        HURRAY_ASSIGN_OR_RETURN(TensorDescriptor m, half.descriptor());
        m.shard = ShardDescriptor{{kVocab, kDim}, {part * (kVocab / 2), 0}};
        HURRAY_RETURN_IF_ERROR(w.add_tensor("output.weight.part" + std::to_string(part), m, half.buffers()));
    }
    const std::vector<float> ones(kDim, 1.0F);
    HURRAY_RETURN_IF_ERROR(add_ref(w, "output_norm.weight", TensorRef(ones)));

    KvMetadata& kv = w.kv();
    HURRAY_RETURN_IF_ERROR(kv.set("general.architecture", KvValue::string("llama")));
    HURRAY_RETURN_IF_ERROR(kv.set("general.name", KvValue::string("hurray-demo")));
    HURRAY_RETURN_IF_ERROR(kv.set("general.quantized", KvValue::boolean(true)));
    HURRAY_RETURN_IF_ERROR(kv.set("llama.vocab_size", KvValue::uint64(kVocab)));
    HURRAY_RETURN_IF_ERROR(kv.set("llama.embedding_length", KvValue::uint64(kDim)));
    HURRAY_RETURN_IF_ERROR(kv.set("llama.feed_forward_length", KvValue::uint64(kFfn)));
    HURRAY_RETURN_IF_ERROR(kv.set("llama.block_count", KvValue::int64(1)));
    HURRAY_RETURN_IF_ERROR(kv.set("llama.rope.freq_base", KvValue::float64(10000.0)));
    HURRAY_RETURN_IF_ERROR(kv.set("tokenizer.tokens", KvValue::string_array({"<s>", "</s>", "hello", "world"})));
    HURRAY_RETURN_IF_ERROR(kv.set("general.checksum", KvValue::bytes({0xDE, 0xAD, 0xBE, 0xEF})));
    return Status::success();
}

Status write_demo_model(const std::string& path, FileWriterOptions options) {
    if (options.tensor_count_hint == kUnknownTensorCount) {
        options.tensor_count_hint = kDemoTensorCount;
    }
    HURRAY_ASSIGN_OR_RETURN(FileWriter w, FileWriter::create_file(path, options));
    HURRAY_RETURN_IF_ERROR(add_demo_model(w));
    return w.finish();
}

}  // namespace hurray::cli
