// SPDX-License-Identifier: Apache-2.0
// Writes the HRRYFILEs of the Rust reference check with libhurray (run.sh; not built by
// CMake):
//
//   make_files DIR [--llm]
//
//   mixed.hrry           FileWriter, default options (descriptor table): dense tensors of
//                        eight element types and ranks 0-4 (one empty), int4 per-block
//                        quantized and a CSR matrix (several buffers), KV of every type
//   mixed_notable.hrry   the same with FileWriterOptions::descriptor_table = false
//   mixed_sorted.hrry    the same with sorted_index = true (table in the sorted order)
//   mixed_align64k.hrry  the same with data_buffer_alignment = 65536
//   mixed_table_v1.hrry  the same with descriptor_table_version = 1 (every copy)
//   dense.hrry           dense float32/float16/bfloat16/int8/int32 tensors (for the
//                        SafeTensors and GGUF round trips through `hurray convert`)
//   save.hrry            hurray::save
//   llm_like.hrry        with --llm: the file of bench/bench_files.hpp's write_llm_like
//                        (291 tensors, ~1.1 GB; same names, types, shapes, order and KV,
//                        copied here to keep bench/ headers out),
//                        with noise instead of zeros; llm_like_notable.hrry without table
#include <hurray/hurray.hpp>

#include <cstdio>
#include <string>
#include <vector>


namespace {

std::vector<uint8_t> noise(uint64_t seed, size_t n) {
    std::vector<uint8_t> out(n);
    uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
    for (size_t i = 0; i < n; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out[i] = static_cast<uint8_t>(x >> 32);
    }
    return out;
}

bool add(hurray::FileWriter& w, const std::string& name, const hurray::Result<hurray::TensorDescriptor>& desc,
         uint64_t seed) {
    if (!desc) {
        std::fprintf(stderr, "%s: %s\n", name.c_str(), desc.error().to_string().c_str());
        return false;
    }
    std::vector<std::vector<uint8_t>> data;
    std::vector<std::span<const uint8_t>> spans;
    for (const hurray::BufferHandle& b : desc->buffers) {
        data.push_back(noise(seed + data.size() * 1000, static_cast<size_t>(b.byte_size)));
    }
    for (const auto& d : data) spans.emplace_back(d);
    if (auto s = w.add_tensor(name, *desc, spans); !s) {
        std::fprintf(stderr, "%s: %s\n", name.c_str(), s.error().to_string().c_str());
        return false;
    }
    return true;
}

bool write_mixed(const std::string& path, const hurray::FileWriterOptions& o) {
    using hurray::ElementType;
    auto w = hurray::FileWriter::create_file(path, o);
    if (!w) {
        std::fprintf(stderr, "%s: %s\n", path.c_str(), w.error().to_string().c_str());
        return false;
    }
    bool ok = add(*w, "model.embed.weight", hurray::make_dense(ElementType::kFloat16, {64, 32}), 1) &&
              add(*w, "model.layers.0.attn.q.weight", hurray::make_dense(ElementType::kBFloat16, {32, 32}), 2) &&
              add(*w, "model.layers.0.norm.weight", hurray::make_dense(ElementType::kFloat32, {32}), 3) &&
              add(*w, "model.layers.0.mlp.weight", hurray::make_per_block_quantized(ElementType::kInt4, {64, 128}, 1, 32), 4) &&
              add(*w, "scalar.f64", hurray::make_dense(ElementType::kFloat64, {}), 5) &&
              add(*w, "int8.rank3", hurray::make_dense(ElementType::kInt8, {3, 5, 7}), 6) &&
              add(*w, "uint8.rank4", hurray::make_dense(ElementType::kUInt8, {2, 3, 4, 5}), 7) &&
              add(*w, "int32.vec", hurray::make_dense(ElementType::kInt32, {1000}), 8) &&
              add(*w, "empty.f32", hurray::make_dense(ElementType::kFloat32, {0, 16}), 9) &&
              add(*w, "sparse.csr", hurray::make_csr(ElementType::kFloat32, 16, 16, 20), 10) &&
              add(*w, "a.last.by.name", hurray::make_dense(ElementType::kFloat32, {5, 5}), 11);
    if (!ok) return false;
    auto& kv = w->kv();
    ok = kv.set("general.architecture", hurray::KvValue::string("rust-reference-check")).ok() &&
         kv.set("general.layers", hurray::KvValue::int64(-1)).ok() &&
         kv.set("general.params", hurray::KvValue::uint64(123456789012ULL)).ok() &&
         kv.set("general.rope_theta", hurray::KvValue::float64(10000.5)).ok() &&
         kv.set("general.flag", hurray::KvValue::boolean(true)).ok() &&
         kv.set("general.blob", hurray::KvValue::bytes(noise(42, 77))).ok() &&
         kv.set("tokenizer.tokens", hurray::KvValue::string_array({"<s>", "</s>", "hello", "world"})).ok() &&
         kv.set("general.dims", hurray::KvValue::int64_array({4096, 11008, -3})).ok();
    if (!ok) return false;
    if (auto s = w->finish(); !s) {
        std::fprintf(stderr, "%s: %s\n", path.c_str(), s.error().to_string().c_str());
        return false;
    }
    return true;
}

bool write_dense(const std::string& path) {
    using hurray::ElementType;
    auto w = hurray::FileWriter::create_file(path);
    if (!w) return false;
    bool ok = add(*w, "token_embd.weight", hurray::make_dense(ElementType::kFloat16, {128, 64}), 21) &&
              add(*w, "blk.0.attn_q.weight", hurray::make_dense(ElementType::kFloat32, {64, 64}), 22) &&
              add(*w, "blk.0.attn_norm.weight", hurray::make_dense(ElementType::kFloat32, {64}), 23) &&
              add(*w, "blk.0.ffn_up.weight", hurray::make_dense(ElementType::kBFloat16, {96, 64}), 24) &&
              add(*w, "blk.0.ffn_gate.weight", hurray::make_dense(ElementType::kInt8, {96, 64}), 25) &&
              add(*w, "blk.0.ids", hurray::make_dense(ElementType::kInt32, {17}), 26);
    return ok && w->kv().set("general.architecture", hurray::KvValue::string("llama")).ok() && w->finish().ok();
}

bool write_save(const std::string& path) {
    std::vector<float> f(24);
    for (size_t i = 0; i < f.size(); ++i) f[i] = static_cast<float>(i) * 0.25F - 3.0F;
    std::vector<hurray::float16_t> h = hurray::to_float16(f);
    std::vector<int8_t> q = {1, -2, 3, -4, 5, -6};
    std::vector<double> d = {3.14159};
    hurray::Status s = hurray::save(path,
                                    {{"w", hurray::TensorRef(f, {2, 3, 4})},
                                     {"h", hurray::TensorRef(h)},
                                     {"q", hurray::TensorRef(q, {3, 2})},
                                     {"d", hurray::TensorRef(d)}},
                                    {{"general.architecture", hurray::KvValue::string("save")},
                                     {"general.version", hurray::KvValue::uint64(3)}});
    if (!s) std::fprintf(stderr, "%s: %s\n", path.c_str(), s.error().to_string().c_str());
    return s.ok();
}

std::string numbered(const char* prefix, uint64_t n, const char* suffix = "") {
    return prefix + std::to_string(n) + suffix;
}

// bench/bench_files.hpp's write_llm_like, data from noise().
bool write_llm_like(const std::string& path, const hurray::FileWriterOptions& o) {
    using hurray::ElementType;
    auto w = hurray::FileWriter::create_file(path, o);
    if (!w) return false;
    auto q = [](uint64_t rows) { return hurray::make_per_block_quantized(ElementType::kInt4, {rows, 2048}, 1, 32); };
    const auto attn = q(2048);
    const auto mlp = q(5632);
    const auto norm = hurray::make_dense(ElementType::kFloat32, {2048});
    const auto embed = hurray::make_dense(ElementType::kFloat16, {32000, 2048});
    uint64_t seed = 100;
    if (!add(*w, "token_embd.weight", embed, seed++)) return false;
    static const char* const kAttn[] = {".attn_q.weight", ".attn_k.weight", ".attn_v.weight", ".attn_output.weight"};
    static const char* const kMlp[] = {".ffn_gate.weight", ".ffn_up.weight", ".ffn_down.weight"};
    for (uint64_t l = 0; l < 32; ++l) {
        bool ok = add(*w, numbered("blk.", l, ".attn_norm.weight"), norm, seed++) &&
                  add(*w, numbered("blk.", l, ".ffn_norm.weight"), norm, seed++);
        for (const char* s : kAttn) ok = ok && add(*w, numbered("blk.", l, s), attn, seed++);
        for (const char* s : kMlp) ok = ok && add(*w, numbered("blk.", l, s), mlp, seed++);
        if (!ok) return false;
    }
    return add(*w, "output_norm.weight", norm, seed++) && add(*w, "output.weight", embed, seed++) &&
           w->kv().set("general.architecture", hurray::KvValue::string("bench")).ok() && w->finish().ok();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: make_files DIR [--llm]\n");
        return 2;
    }
    const std::string dir = argv[1];
    const bool llm = argc > 2 && std::string(argv[2]) == "--llm";
    hurray::FileWriterOptions def;
    hurray::FileWriterOptions notable;
    notable.descriptor_table = false;
    hurray::FileWriterOptions sorted;
    sorted.sorted_index = true;
    hurray::FileWriterOptions align;
    align.data_buffer_alignment = 65536;
    hurray::FileWriterOptions v1;
    v1.descriptor_table_version = hurray::kDescriptorTableVersion1;
    bool ok = write_mixed(dir + "/mixed.hrry", def) && write_mixed(dir + "/mixed_notable.hrry", notable) &&
              write_mixed(dir + "/mixed_sorted.hrry", sorted) && write_mixed(dir + "/mixed_align64k.hrry", align) &&
              write_mixed(dir + "/mixed_table_v1.hrry", v1) && write_dense(dir + "/dense.hrry") && write_save(dir + "/save.hrry");
    if (ok && llm) {
        ok = write_llm_like(dir + "/llm_like.hrry", def) &&
             write_llm_like(dir + "/llm_like_notable.hrry", notable);
    }
    if (!ok) {
        std::fprintf(stderr, "make_files failed\n");
        return 1;
    }
    return 0;
}
