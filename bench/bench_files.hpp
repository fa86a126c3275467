// SPDX-License-Identifier: Apache-2.0
// The HRRYFILE containers the metadata and listing benchmarks open: an
// LLM-like file of 291 tensors and files of many small tensors.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "hurray/core/builder.hpp"
#include "hurray/io/file_writer.hpp"

namespace hurray_bench {

/// Tensors in the LLM-like file.
constexpr int64_t kLlmLike = 291;

/// `prefix`, `n` in decimal, `suffix`.
inline std::string numbered(const char* prefix, uint64_t n, const char* suffix = "") {
    std::string s(prefix);
    s.append(std::to_string(n));
    s.append(suffix);
    return s;
}

/// Writes `count` uint8 tensors of `bytes_each` bytes, model.layers.<i>.weight, with
/// one KV entry (general.architecture = "bench") when `with_kv`.
inline bool write_layers_file(const std::string& path, uint64_t count, uint64_t bytes_each, bool with_kv,
                              const hurray::FileWriterOptions& options = {}) {
    const auto tensor = byte_tensor(bytes_each, 131, 7);
    if (!tensor) {
        return false;
    }
    auto w = hurray::FileWriter::create_file(path, options);
    if (!w.ok()) {
        return false;
    }
    const auto buffers = tensor->buffers();
    for (uint64_t i = 0; i < count; ++i) {
        if (!w->add_tensor(numbered("model.layers.", i, ".weight"), tensor->desc, buffers).ok()) {
            return false;
        }
    }
    if (with_kv && !w->kv().set("general.architecture", hurray::KvValue::string("bench")).ok()) {
        return false;
    }
    return w->finish().ok();
}

/// The most tensors a benchmark's file may hold (HURRAY_BENCH_META_MAX; no limit
/// when unset): the 1,000,000-tensor files take minutes and gigabytes to write.
inline uint64_t max_tensors() {
    const char* v = std::getenv("HURRAY_BENCH_META_MAX");
    const long n = v != nullptr ? std::strtol(v, nullptr, 10) : 0;
    return n > 0 ? static_cast<uint64_t>(n) : UINT64_MAX;
}

/// Adds `desc` under `name` with every buffer cut from `zeros`.
inline bool add(hurray::FileWriter& w, const std::string& name, const hurray::TensorDescriptor& desc,
         const std::vector<uint8_t>& zeros) {
    std::vector<std::span<const uint8_t>> spans;
    for (const hurray::BufferHandle& b : desc.buffers) {
        if (b.byte_size > zeros.size()) {
            return false;
        }
        spans.emplace_back(zeros.data(), static_cast<size_t>(b.byte_size));
    }
    return w.add_tensor(name, desc, spans).ok();
}

/// An LLM-like file of 291 tensors (~1 GiB): 32 layers of 4 int4 attention
/// matrices [2048, 2048], 3 int4 MLP matrices [5632, 2048] (per-block along
/// axis 1, block 32, float16 scales) and 2 float32 norms [2048], then float16
/// token embeddings and output [32000, 2048] and a float32 final norm.
inline bool write_llm_like(const std::string& path, const hurray::FileWriterOptions& options = {}) {
    const std::vector<uint8_t> zeros(size_t{32000} * 2048 * 2);
    auto w = hurray::FileWriter::create_file(path, options);
    if (!w.ok()) {
        return false;
    }
    auto q = [](uint64_t rows) {
        return hurray::make_per_block_quantized(hurray::ElementType::kInt4, {rows, 2048}, 1, 32);
    };
    auto attn = q(2048);
    auto mlp = q(5632);
    auto norm = hurray::make_dense(hurray::ElementType::kFloat32, {2048});
    auto embed = hurray::make_dense(hurray::ElementType::kFloat16, {32000, 2048});
    if (!attn.ok() || !mlp.ok() || !norm.ok() || !embed.ok()) {
        return false;
    }
    if (!add(*w, "token_embd.weight", *embed, zeros)) {
        return false;
    }
    static const char* const kAttn[] = {".attn_q.weight", ".attn_k.weight", ".attn_v.weight",
                                        ".attn_output.weight"};
    static const char* const kMlp[] = {".ffn_gate.weight", ".ffn_up.weight", ".ffn_down.weight"};
    for (uint64_t l = 0; l < 32; ++l) {
        bool ok = add(*w, numbered("blk.", l, ".attn_norm.weight"), *norm, zeros) &&
                  add(*w, numbered("blk.", l, ".ffn_norm.weight"), *norm, zeros);
        for (const char* s : kAttn) {
            ok = ok && add(*w, numbered("blk.", l, s), *attn, zeros);
        }
        for (const char* s : kMlp) {
            ok = ok && add(*w, numbered("blk.", l, s), *mlp, zeros);
        }
        if (!ok) {
            return false;
        }
    }
    return add(*w, "output_norm.weight", *norm, zeros) && add(*w, "output.weight", *embed, zeros) &&
           w->kv().set("general.architecture", hurray::KvValue::string("bench")).ok() &&
           w->finish().ok();
}

/// `count` uint8[16] tensors named model.layers.<i>.weight.
inline bool write_small(const std::string& path, uint64_t count,
                        const hurray::FileWriterOptions& options = {}) {
    return write_layers_file(path, count, 16, true, options);
}

}  // namespace hurray_bench
