// SPDX-License-Identifier: Apache-2.0
// The GGML tensor types (names, block geometry) and the payload of libhurray's private
// GGML blocks scheme (hurray/core/ggml_blocks.hpp).
#include <algorithm>
#include <array>

#include <string>

#include "hurray/core/byte_io.hpp"
#include "hurray/core/checked_math.hpp"
#include "core/ggml_blocks_rules.hpp"
#include "hurray/core/text.hpp"
#include "hurray/core/shape.hpp"
#include "hurray/core/ggml_blocks.hpp"

namespace hurray {

namespace {

struct TypeRow {
    uint32_t id = 0;
    GgmlTypeInfo info;
};

// ggml_type numbers with their names, values per block and bytes per block (the block
// layouts of ggml's quantized types; 1 value per "block" for the plain types).
constexpr std::array<TypeRow, 32> kTypes{{
    {0, {"f32", 1, 4}},         {1, {"f16", 1, 2}},         {2, {"q4_0", 32, 18}},
    {3, {"q4_1", 32, 20}},      {6, {"q5_0", 32, 22}},      {7, {"q5_1", 32, 24}},
    {8, {"q8_0", 32, 34}},      {9, {"q8_1", 32, 36}},      {10, {"q2_K", 256, 84}},
    {11, {"q3_K", 256, 110}},   {12, {"q4_K", 256, 144}},   {13, {"q5_K", 256, 176}},
    {14, {"q6_K", 256, 210}},   {15, {"q8_K", 256, 292}},   {16, {"iq2_xxs", 256, 66}},
    {17, {"iq2_xs", 256, 74}},  {18, {"iq3_xxs", 256, 98}}, {19, {"iq1_s", 256, 50}},
    {20, {"iq4_nl", 32, 18}},   {21, {"iq3_s", 256, 110}},  {22, {"iq2_s", 256, 82}},
    {23, {"iq4_xs", 256, 136}}, {24, {"i8", 1, 1}},         {25, {"i16", 1, 2}},
    {26, {"i32", 1, 4}},        {27, {"i64", 1, 8}},        {28, {"f64", 1, 8}},
    {29, {"iq1_m", 256, 56}},   {30, {"bf16", 1, 2}},       {34, {"tq1_0", 256, 54}},
    {35, {"tq2_0", 256, 66}},   {39, {"mxfp4", 32, 17}},
}};

constexpr size_t kPayloadBytes = 16;
/// The payload's first four bytes.
constexpr std::array<uint8_t, 4> kGgmlMagic = {'G', 'G', 'M', 'L'};

}  // namespace

std::optional<GgmlTypeInfo> ggml_type_info(uint32_t type) noexcept {
    for (const TypeRow& row : kTypes) {
        if (row.id == type) {
            return row.info;
        }
    }
    return std::nullopt;
}

std::vector<uint8_t> ggml_blocks_payload(uint32_t type) {
    const auto info = ggml_type_info(type);
    if (!info) {
        return {};
    }
    std::vector<uint8_t> p(kPayloadBytes);
    std::copy(kGgmlMagic.begin(), kGgmlMagic.end(), p.begin());
    store_le<uint32_t>(p.data() + 4, type);
    store_le<uint32_t>(p.data() + 8, info->elements);
    store_le<uint32_t>(p.data() + 12, info->bytes);
    return p;
}

namespace detail {

bool has_ggml_magic(const OpaqueQuantization& o) noexcept {
    return o.payload.size() >= kGgmlMagic.size() && std::equal(kGgmlMagic.begin(), kGgmlMagic.end(), o.payload.begin());
}

Result<GgmlBlocks> parse_ggml_blocks(const OpaqueQuantization& o, uint64_t q) {
    if (o.scheme_version != kGgmlBlocksVersion) {
        return Error(ErrorCode::kUnsupportedQuantizationVersion,
                     "quantization.scheme_version: GGML blocks version " + dec(o.scheme_version) +
                         " is not known to this reader (it knows version " + dec(kGgmlBlocksVersion) + ")",
                     q + 1);
    }
    if (o.flags != 0) {
        return Error(ErrorCode::kReservedFlagBits,
                     "quantization.flags: GGML blocks define no flags, got " + hex(o.flags, 4), q + 2);
    }
    const auto& p = o.payload;
    if (p.size() != kPayloadBytes) {
        return Error(ErrorCode::kInvalidQuantization,
                     "quantization.payload: GGML blocks take 16 bytes, got " + dec(p.size()), q + 4);
    }
    if (!has_ggml_magic(o)) {
        return Error(ErrorCode::kInvalidQuantization, "ggml_blocks.magic: not \"GGML\"", q + 4);
    }
    const auto type = load_le<uint32_t>(p.data() + 4);
    const auto info = ggml_type_info(type);
    if (!info) {
        return Error(ErrorCode::kInvalidQuantization,
                     "ggml_blocks.type: " + dec(type) + " is not a GGML type this library knows", q + 8);
    }
    const auto elements = load_le<uint32_t>(p.data() + 8);
    const auto bytes = load_le<uint32_t>(p.data() + 12);
    if (elements != info->elements || bytes != info->bytes) {
        return Error(ErrorCode::kInvalidQuantization,
                     "ggml_blocks: " + std::string(info->name) + " blocks are " + dec(info->elements) +
                         " values in " + dec(info->bytes) + " bytes, the payload says " + dec(elements) + " in " +
                         dec(bytes),
                     q + (elements != info->elements ? 12 : 16));
    }
    return GgmlBlocks{type, *info};
}

bool ggml_whole_blocks(const GgmlTypeInfo& info, const Shape& shape) noexcept {
    return !shape.empty() && shape.back() != kDynamicDim && info.elements != 0 && shape.back() % info.elements == 0;
}

std::string ggml_whole_blocks_rule(const GgmlTypeInfo& info) {
    return "the last axis must be a whole number of " + std::string(info.name) + " blocks (" + dec(info.elements) +
           " values)";
}

std::optional<uint64_t> ggml_blocks_bytes(const GgmlTypeInfo& info, uint64_t values) noexcept {
    return info.elements == 0 ? std::nullopt : mul_u64(values / info.elements, info.bytes);
}

}  // namespace detail

Result<TensorDescriptor> make_ggml_blocks(uint32_t type, const Shape& shape) {
    const auto info = ggml_type_info(type);
    if (!info) {
        return Error(ErrorCode::kInvalidArgument, "ggml type " + std::to_string(type) + " is unknown");
    }
    if (!detail::ggml_whole_blocks(*info, shape)) {
        return Error(ErrorCode::kInvalidArgument, "ggml blocks: " + detail::ggml_whole_blocks_rule(*info));
    }
    HURRAY_ASSIGN_OR_RETURN(uint64_t count, element_count(shape));
    const auto bytes = detail::ggml_blocks_bytes(*info, count);
    if (!bytes) {
        return Error(ErrorCode::kSizeOverflow, "ggml blocks: byte size overflows 64 bits");
    }
    TensorDescriptor d;
    d.element_type = static_cast<ElementType>(kGgmlBlocksScheme);
    // The extension type only sizes buffer 0 from below (the dense rule is ">="): one bit
    // per value, fewer than any GGML block type holds. The exact size comes from the scheme.
    d.extension_type = ExtensionTypeDescriptor{.bit_width = 1, .packing_factor = 8};
    d.shape = shape;
    OpaqueQuantization q;
    q.scheme_tag = kGgmlBlocksScheme;
    q.scheme_version = kGgmlBlocksVersion;
    q.payload = ggml_blocks_payload(type);
    d.quantization = QuantizationDescriptor{q, {}};
    BufferHandle h;
    h.byte_size = *bytes;
    d.buffers.push_back(h);
    return d;
}

std::optional<uint32_t> ggml_blocks_type(const TensorDescriptor& d) noexcept {
    if (!d.quantization) {
        return std::nullopt;
    }
    const auto* o = std::get_if<OpaqueQuantization>(&d.quantization->scheme);
    if (o == nullptr || o->scheme_tag != kGgmlBlocksScheme) {
        return std::nullopt;
    }
    auto blocks = detail::parse_ggml_blocks(*o, 0);
    if (!blocks) {
        return std::nullopt;
    }
    return blocks->type;
}

}  // namespace hurray
