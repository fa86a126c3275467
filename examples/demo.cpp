// SPDX-License-Identifier: Apache-2.0
// libhurray demo: builds a few tensor descriptors of different kinds, encodes
// each to its wire bytes, decodes the bytes back and prints what it found.
#include <cstdio>
#include <string>
#include <vector>

#include "hurray/core/builder.hpp"
#include "hurray/core/describe.hpp"
#include "hurray/core/descriptor_codec.hpp"

namespace {

void hexdump(const std::vector<uint8_t>& bytes) {
    for (size_t i = 0; i < bytes.size(); i += 16) {
        std::printf("    %04zx ", i);
        for (size_t j = i; j < i + 16 && j < bytes.size(); ++j) {
            std::printf(" %02x", bytes[j]);
        }
        std::printf("\n");
    }
}

bool show(const char* title, const hurray::Result<hurray::TensorDescriptor>& made) {
    std::printf("== %s\n", title);
    if (!made) {
        std::printf("   error: %s\n", made.error().to_string().c_str());
        return false;
    }
    auto bytes = hurray::encode(*made);
    if (!bytes) {
        std::printf("   encode error: %s\n", bytes.error().to_string().c_str());
        return false;
    }
    auto back = hurray::decode(*bytes);
    if (!back) {
        std::printf("   decode error: %s\n", back.error().to_string().c_str());
        return false;
    }
    std::printf("   %s\n", hurray::summarize(*back).c_str());
    std::fputs(hurray::describe(*back, "   | ").c_str(), stdout);
    std::printf("   %zu descriptor bytes, round trip %s\n", bytes->size(),
                *back == *made ? "identical" : "DIFFERS");
    hexdump(*bytes);
    return *back == *made;
}

}  // namespace

int main() {
    using hurray::ElementType;
    bool ok = true;

    ok &= show("dense float16 activation [1, 32, 128, 128]",
               hurray::make_dense(ElementType::kFloat16, {1, 32, 128, 128}));

    ok &= show("int4 weight, per-block affine along axis 1 (block 32, float16 scales)",
               hurray::make_per_block_quantized(ElementType::kInt4, {4096, 4096}, 1, 32));

    ok &= show("CSR float32 [4, 5] with 5 non-zeros", hurray::make_csr(ElementType::kFloat32, 4, 5, 5));

    hurray::TensorDescriptor flipped;
    flipped.element_type = ElementType::kFloat32;
    flipped.shape = {3, 4};
    flipped.layout = hurray::StridedLayout{{-4, 1}};  // rows in reverse order
    flipped.byte_offset = 32;                          // element [0, 0] is row 2 of the storage
    ok &= show("strided float32 [3, 4], rows reversed", hurray::size_buffers(flipped));

    hurray::TensorDescriptor tiled;
    tiled.element_type = ElementType::kBFloat16;
    tiled.shape = {6, 8};
    tiled.layout = hurray::TiledLayout{{{.tile_shape = {4, 4}}}};  // partial tiles at the edge
    ok &= show("tiled bfloat16 [6, 8] in 4x4 tiles", hurray::size_buffers(tiled));

    hurray::TensorDescriptor kv;
    kv.element_type = ElementType::kFloat16;
    kv.shape = {9, 2, 8};
    kv.layout = hurray::BlockPagedLayout{.page_size = 4, .num_pages = 5, .num_seqs = 2, .layer_index = 3};
    const uint64_t block_table_bytes = 3 * 4;  // 3 logical pages, uint32 ids
    ok &= show("paged KV cache, layer 3 keys", hurray::size_buffers(kv, {}, {{block_table_bytes}}));

    ok &= show("composite partition head [8, 8] of 2 members",
               hurray::make_composite_head(ElementType::kFloat32, {8, 8}, hurray::CompositionRule::kPartition, 2));

    std::vector<uint8_t> bad = *hurray::encode(*hurray::make_dense(ElementType::kFloat32, {3, 4}));
    bad[16] = 65;  // rank 65
    auto rejected = hurray::decode(bad);
    std::printf("== a hostile descriptor (rank 65) is refused:\n   %s\n",
                rejected ? "ACCEPTED (bug)" : rejected.error().to_string().c_str());
    ok &= !rejected.ok();

    std::printf("\n%s\n", ok ? "demo: all descriptors round-tripped" : "demo: FAILED");
    return ok ? 0 : 1;
}
