// SPDX-License-Identifier: Apache-2.0
// See descriptor_generator.hpp. Every rule followed here is a rule of the spec
// (docs/spec/metadata.md, layouts/*.md, quantization/*.md, buffer-protocol.md)
// as enforced by src/core/descriptor_check.cpp; the comments name the rule.
#include "descriptor_generator.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "hurray/core/builder.hpp"

namespace hurray_test {
namespace {

using hurray::BufferHandle;
using hurray::DeviceTag;
using hurray::ElementType;
using hurray::MemoryClass;
using hurray::Shape;
using hurray::SyncMode;
using hurray::TensorDescriptor;

__extension__ typedef __int128 i128;  // NOLINT(modernize-use-using)

constexpr uint64_t kDyn = hurray::kDynamicDim;

const std::vector<ElementType> kBuiltinTypes = {
    ElementType::kFloat16,    ElementType::kBFloat16,   ElementType::kFloat32,
    ElementType::kFloat64,    ElementType::kInt8,       ElementType::kUInt8,
    ElementType::kInt16,      ElementType::kUInt16,     ElementType::kInt32,
    ElementType::kUInt32,     ElementType::kInt64,      ElementType::kUInt64,
    ElementType::kBool,       ElementType::kFloat8E4M3, ElementType::kFloat8E5M2,
    ElementType::kFloat8E8M0, ElementType::kFloat4E2M1, ElementType::kFloat6E2M3,
    ElementType::kFloat6E3M2, ElementType::kFloat128,   ElementType::kInt4,
    ElementType::kUInt4,      ElementType::kInt2,       ElementType::kUInt2,
    ElementType::kComplex64,  ElementType::kComplex128,
};
// per-tensor-affine.md / per-channel-affine.md § Valid Storage Types.
const std::vector<ElementType> kAffineTypes = {
    ElementType::kInt8,  ElementType::kUInt8,  ElementType::kInt16, ElementType::kUInt16,
    ElementType::kInt32, ElementType::kUInt32, ElementType::kInt4,  ElementType::kUInt4,
    ElementType::kInt2,  ElementType::kUInt2,
};
// per-block-affine.md § Valid Storage Types.
const std::vector<ElementType> kPerBlockTypes = {
    ElementType::kInt8, ElementType::kUInt8, ElementType::kInt4,
    ElementType::kUInt4, ElementType::kInt2, ElementType::kUInt2,
};
// mxfp.md § Valid Storage Types.
const std::vector<ElementType> kMxfpTypes = {
    ElementType::kFloat8E4M3, ElementType::kFloat8E5M2, ElementType::kFloat4E2M1,
    ElementType::kFloat6E2M3, ElementType::kFloat6E3M2, ElementType::kInt8,
    ElementType::kInt4,
};

enum class GenQuant : uint8_t { kNone, kPerTensor, kPerChannel, kPerBlock, kNf4, kMxfp, kOpaque };

/// Thrown to try again with the next draw: a size computation overflowed.
struct Retry {};

// ---------------------------------------------------------------------------
// Small helpers

uint32_t floor_log2(uint64_t v) { return v == 0 ? 0 : 63U - static_cast<uint32_t>(std::countl_zero(v)); }

/// Bits needed to index `n` positions: smallest b >= 1 with n <= 2^b.
uint32_t bits_for(uint64_t n) {
    uint32_t b = 1;
    while (b < 63 && (uint64_t{1} << b) < n) {
        ++b;
    }
    return b;
}

template <typename W>
W pick_weighted(Rng& r, const std::vector<std::pair<W, uint32_t>>& items) {
    uint64_t total = 0;
    for (const auto& [w, n] : items) {
        total += n;
    }
    uint64_t x = r.below(total);
    for (const auto& [w, n] : items) {
        if (x < n) {
            return w;
        }
        x -= n;
    }
    return items.back().first;
}

/// A double with an interesting bit pattern: NaN payloads (quiet and
/// signalling, both signs), infinities, signed zeros, subnormals or a normal value.
double interesting_double(Rng& r) {
    switch (r.below(8)) {
        case 0: {  // NaN with a random payload
            uint64_t bits = 0x7FF0000000000000ULL | (r.u64() & 0x000FFFFFFFFFFFFFULL);
            bits |= r.chance(1, 2) ? 0x8000000000000000ULL : 0;
            if ((bits & 0x000FFFFFFFFFFFFFULL) == 0) {
                bits |= 1;
            }
            return std::bit_cast<double>(bits);
        }
        case 1: return r.chance(1, 2) ? std::numeric_limits<double>::infinity()
                                      : -std::numeric_limits<double>::infinity();
        case 2: return r.chance(1, 2) ? 0.0 : -0.0;
        case 3: return std::bit_cast<double>(r.u64() & 0x800FFFFFFFFFFFFFULL);  // subnormal
        case 4: return std::bit_cast<double>(r.u64());                           // anything
        default: return (static_cast<double>(r.u32()) - 2147483648.0) / 1024.0;
    }
}

/// A double that is >= 0 (value_stddev): +0, -0 (which compares >= 0), +inf, normal.
double nonnegative_double(Rng& r) {
    switch (r.below(5)) {
        case 0: return 0.0;
        case 1: return -0.0;
        case 2: return std::numeric_limits<double>::infinity();
        case 3: return std::bit_cast<double>(r.u64() & 0x000FFFFFFFFFFFFFULL);  // +subnormal
        default: return static_cast<double>(r.u32()) / 65536.0;
    }
}

/// A finite, non-zero float (per-tensor scale).
float finite_nonzero_float(Rng& r) {
    switch (r.below(6)) {
        case 0: return 1.0F;
        case 1: return r.chance(1, 2) ? std::numeric_limits<float>::max() : -std::numeric_limits<float>::max();
        case 2: return std::bit_cast<float>(static_cast<uint32_t>(r.range(1, 0x007FFFFF)));  // +subnormal
        case 3: return -std::numeric_limits<float>::denorm_min();
        default: {
            for (;;) {
                const float f = std::bit_cast<float>(r.u32());
                if (std::isfinite(f) && f != 0.0F) {
                    return f;
                }
            }
        }
    }
}

std::pair<int64_t, int64_t> storage_range(ElementType t) {
    switch (t) {
        case ElementType::kInt8: return {-128, 127};
        case ElementType::kUInt8: return {0, 255};
        case ElementType::kInt16: return {-32768, 32767};
        case ElementType::kUInt16: return {0, 65535};
        case ElementType::kInt32: return {INT32_MIN, INT32_MAX};
        case ElementType::kUInt32: return {0, INT32_MAX};  // zero_point is an int32
        case ElementType::kInt4: return {-8, 7};
        case ElementType::kUInt4: return {0, 15};
        case ElementType::kInt2: return {-2, 1};
        case ElementType::kUInt2: return {0, 3};
        default: return {0, 0};
    }
}

// ---------------------------------------------------------------------------
// The builder state for one descriptor

struct Gen {
    explicit Gen(Rng& rng) : r(rng) {}
    Rng& r;
    GenLayout layout = GenLayout::kRowMajor;
    GenQuant quant = GenQuant::kNone;
    uint32_t rank = 0;
    bool high_rank = false;
    GeneratedDescriptor out;
    /// Buffers beyond the layout's and the known scheme's (extension layouts
    /// and private schemes only allow them).
    uint32_t extra_buffers = 0;

    TensorDescriptor& d() { return out.descriptor; }

    bool shape_mutable() const {
        return layout != GenLayout::kHilbert && layout != GenLayout::kMorton &&
               layout != GenLayout::kBlockPaged;
    }

    // -- choices -------------------------------------------------------------
    void pick_layout() {
        layout = pick_weighted<GenLayout>(r, {{GenLayout::kRowMajor, 14},
                                              {GenLayout::kColumnMajor, 6},
                                              {GenLayout::kStrided, 10},
                                              {GenLayout::kTiled, 10},
                                              {GenLayout::kMorton, 6},
                                              {GenLayout::kCoo, 7},
                                              {GenLayout::kCsr, 5},
                                              {GenLayout::kCsc, 5},
                                              {GenLayout::kCsf, 7},
                                              {GenLayout::kBlockPaged, 7},
                                              {GenLayout::kComposite, 6},
                                              {GenLayout::kHilbert, 5},
                                              {GenLayout::kExtension, 6}});
    }

    void pick_rank() {
        high_rank = r.chance(1, 40);
        switch (layout) {
            // data-model.md § Scalar Tensors: rank 0 only row-major (and the virtual head).
            case GenLayout::kRowMajor:
            case GenLayout::kComposite: rank = high_rank ? r.range(7, 64) : r.range(0, 6); break;
            case GenLayout::kMorton: rank = high_rank ? r.range(7, 40) : r.range(1, 6); break;
            case GenLayout::kCsr:
            case GenLayout::kCsc: rank = 2; high_rank = false; break;  // csr.md, csc.md: rank 2
            case GenLayout::kCsf: rank = high_rank ? r.range(7, 64) : r.range(3, 6); break;  // csf.md: >= 3
            case GenLayout::kBlockPaged: rank = 3; high_rank = false; break;  // block-paged.md: rank 3
            case GenLayout::kHilbert: rank = r.range(2, 6); high_rank = false; break;  // hilbert.md: >= 2
            default: rank = high_rank ? r.range(7, 64) : r.range(1, 6); break;
        }
    }

    void pick_quant() {
        if (layout == GenLayout::kComposite) {  // composite.md: a head carries no quantization
            quant = GenQuant::kNone;
            return;
        }
        if (r.chance(45, 100)) {
            quant = GenQuant::kNone;
            return;
        }
        quant = pick_weighted<GenQuant>(r, {{GenQuant::kPerTensor, 10},
                                            {GenQuant::kPerChannel, 12},
                                            {GenQuant::kPerBlock, 14},
                                            {GenQuant::kNf4, 6},
                                            {GenQuant::kMxfp, 6},
                                            {GenQuant::kOpaque, 7}});
        if (rank == 0 && quant != GenQuant::kPerTensor && quant != GenQuant::kOpaque) {
            quant = GenQuant::kPerTensor;  // every other scheme needs an axis
        }
        if (layout == GenLayout::kBlockPaged && (quant == GenQuant::kNf4 || quant == GenQuant::kMxfp)) {
            quant = GenQuant::kPerBlock;  // block-paged.md § Quantization Compatibility
        }
    }

    void pick_element_type() {
        switch (quant) {
            case GenQuant::kPerTensor:
            case GenQuant::kPerChannel: d().element_type = r.pick(kAffineTypes); return;
            case GenQuant::kPerBlock: d().element_type = r.pick(kPerBlockTypes); return;
            case GenQuant::kNf4: d().element_type = ElementType::kUInt4; return;  // nf4.md
            case GenQuant::kMxfp: d().element_type = r.pick(kMxfpTypes); return;
            default: break;
        }
        if (!r.chance(12, 100)) {
            d().element_type = r.pick(kBuiltinTypes);
            return;
        }
        // metadata.md § Extension Type Section: a private tag needs the section.
        d().element_type = static_cast<ElementType>(r.range(0xF0, 0xFE));
        hurray::ExtensionTypeDescriptor e;
        switch (r.below(4)) {
            case 0: e.bit_width = std::vector<uint32_t>{1, 2, 4}[r.below(3)]; break;
            case 1: e.bit_width = 8 * static_cast<uint32_t>(r.range(1, 4)); break;
            case 2: e.bit_width = 8 * static_cast<uint32_t>(r.range(1, 128)); break;
            default: e.bit_width = std::vector<uint32_t>{8, 16, 32, 64}[r.below(4)]; break;
        }
        e.packing_factor = static_cast<uint8_t>(e.bit_width < 8 ? 8 / e.bit_width : 1);
        e.is_float = r.chance(1, 2);
        if (e.is_float) {
            e.is_signed = false;
            e.sign_bits = static_cast<uint8_t>(r.below(2));
            e.exponent_bits = r.u8();
            e.mantissa_bits = r.u8();
            e.exponent_bias = r.chance(1, 2) ? r.u32() : static_cast<uint32_t>(r.range(0, 1023));
            e.has_nan = r.chance(1, 2);
            e.has_inf = r.chance(1, 2);
        } else {
            e.is_signed = r.chance(1, 2);
        }
        d().extension_type = e;
    }

    // -- shape ---------------------------------------------------------------
    uint64_t draw_dim() {
        if (high_rank) {
            return pick_weighted<uint64_t>(r, {{1, 70}, {2, 20}, {3, 7}, {0, 3}});
        }
        switch (pick_weighted<int>(r, {{0, 4}, {1, 50}, {2, 30}, {3, 12}, {4, 4}})) {
            case 0: return 0;
            case 1: return r.range(1, 8);
            case 2: return r.range(1, 64);
            case 3: return r.range(1, 1024);
            default: return r.range(1, 65536);
        }
    }

    /// Dimensions whose product (zeros ignored) stays below 2^32.
    Shape draw_shape(uint32_t n) {
        Shape s(n);
        uint64_t prod = 1;
        for (auto& dim : s) {
            dim = draw_dim();
            if (dim != 0) {
                if (prod * dim > (uint64_t{1} << 32)) {
                    dim = 1;
                }
                prod *= dim;
            }
        }
        return s;
    }

    uint32_t hilbert_order = 1;
    std::vector<uint32_t> morton_bits;

    void pick_shape() {
        Shape& s = d().shape;
        switch (layout) {
            case GenLayout::kHilbert: {
                // hilbert.md: every dimension is 2^order; keep 2^(rank*order) elements small.
                const uint32_t max_order = std::max<uint32_t>(1, std::min<uint32_t>(12, 36 / rank));
                hilbert_order = static_cast<uint32_t>(r.range(1, max_order));
                s.assign(rank, uint64_t{1} << hilbert_order);
                return;
            }
            case GenLayout::kMorton: {
                // morton.md: shape[k] <= 2^morton_bits[k]; keep the sum of bits <= 40.
                s.resize(rank);
                morton_bits.resize(rank);
                uint32_t budget = 40;
                for (uint32_t k = 0; k < rank; ++k) {
                    const uint32_t left = rank - k - 1;  // every later dimension needs >= 1 bit
                    const uint32_t max_bits = std::min<uint32_t>(high_rank ? 1 : 10, budget - left);
                    const uint32_t bits = static_cast<uint32_t>(r.range(1, max_bits));
                    budget -= bits;
                    morton_bits[k] = bits;
                    const uint64_t side = uint64_t{1} << bits;
                    switch (r.below(10)) {
                        case 0: s[k] = 0; break;
                        case 1:
                        case 2: s[k] = side; break;
                        default: s[k] = r.range(1, side); break;
                    }
                }
                return;
            }
            case GenLayout::kBlockPaged: {
                // block-paged.md: [total_tokens, num_heads, head_dim].
                s = {r.range(0, 4096), r.chance(1, 20) ? 0 : r.range(1, 64),
                     r.chance(1, 2) ? std::vector<uint64_t>{64, 80, 96, 128, 256}[r.below(5)]
                                    : r.range(0, 300)};
                return;
            }
            case GenLayout::kCsr:
            case GenLayout::kCsc: s = {r.chance(1, 20) ? 0 : r.range(1, 3000), r.chance(1, 20) ? 0 : r.range(1, 3000)}; return;
            default: s = draw_shape(rank); return;
        }
    }

    bool dynamic_allowed() const {
        // morton.md / hilbert.md bound every dimension: no dynamic sentinel there.
        return rank > 0 && layout != GenLayout::kMorton && layout != GenLayout::kHilbert;
    }

    void maybe_dynamic_dims() {
        if (!dynamic_allowed() || !r.chance(6, 100)) {
            return;
        }
        const uint64_t n = r.range(1, std::min<uint32_t>(2, rank));
        for (uint64_t i = 0; i < n; ++i) {
            d().shape[r.below(rank)] = kDyn;
        }
    }

    // -- quantization ----------------------------------------------------------
    std::optional<uint32_t> static_axis(const std::vector<uint32_t>& candidates) {
        std::vector<uint32_t> ok;
        for (uint32_t a : candidates) {
            if (d().shape[a] != kDyn) {  // quantization.md: shape[axis] must be static
                ok.push_back(a);
            }
        }
        if (ok.empty()) {
            return std::nullopt;
        }
        return r.pick(ok);
    }

    std::vector<uint32_t> all_axes() const {
        std::vector<uint32_t> a(rank);
        for (uint32_t k = 0; k < rank; ++k) {
            a[k] = k;
        }
        return a;
    }

    /// A block size for a power-of-two block scheme with lower bound `min_block`
    /// (per-block 2, NF4 8) along `axis`; may grow shape[axis]. nullopt: impossible.
    std::optional<uint32_t> block_for(uint32_t axis, uint32_t min_block) {
        uint64_t& len = d().shape[axis];
        const uint32_t min_log = floor_log2(min_block);
        if (len == 0) {
            // per-block-affine.md / nf4.md: the upper bound is waived for an empty axis.
            return uint32_t{1} << r.range(min_log, r.chance(1, 8) ? 31 : 12);
        }
        if (len < min_block) {
            if (!shape_mutable()) {
                return std::nullopt;
            }
            len = r.range(min_block, 300);
        }
        const uint32_t max_log = std::min<uint32_t>(31, floor_log2(len));
        return uint32_t{1} << r.range(min_log, max_log);
    }

    /// The number of buffers the layout itself defines (layout.hpp, layout_buffer_count).
    uint32_t base_count() const {
        switch (layout) {
            case GenLayout::kCoo: return 2;
            case GenLayout::kCsr:
            case GenLayout::kCsc:
            case GenLayout::kBlockPaged: return 3;
            case GenLayout::kCsf: return 2 * rank + 1;
            case GenLayout::kComposite: return 0;
            default: return 1;
        }
    }

    /// Distinct parameter buffers of a known scheme.
    uint32_t param_slots = 0;

    /// Parameter buffer indices: (scale, zero point), after the layout's
    /// buffers (quantization.md § Buffer Table Placement Rules 1-2), in any
    /// order, sometimes sharing one entry (rule 3); an extension layout may
    /// interleave its spare buffers.
    std::pair<uint32_t, std::optional<uint32_t>> param_indices(bool asymmetric) {
        const uint32_t base = base_count();
        const bool shared = asymmetric && r.chance(1, 4);
        param_slots = asymmetric && !shared ? 2 : 1;
        const uint32_t slots = param_slots + extra_buffers;
        std::vector<uint32_t> pos(slots);
        for (uint32_t i = 0; i < slots; ++i) {
            pos[i] = base + i;
        }
        for (uint32_t i = slots; i > 1; --i) {
            std::swap(pos[i - 1], pos[r.below(i)]);
        }
        std::optional<uint32_t> zp;
        if (asymmetric) {
            zp = shared ? pos[0] : pos[1];
        }
        return {pos[0], zp};
    }

    bool make_quantization() {
        if (quant == GenQuant::kNone) {
            return true;
        }
        hurray::QuantizationDescriptor q;
        const ElementType t = d().element_type;
        switch (quant) {
            case GenQuant::kPerTensor: {
                hurray::PerTensorAffine p;
                p.scale = finite_nonzero_float(r);
                const auto [lo, hi] = storage_range(t);
                p.zero_point = r.chance(1, 2) ? 0 : static_cast<int32_t>(r.srange(lo, hi));
                q.scheme = p;
                break;
            }
            case GenQuant::kPerChannel: {
                // block-paged.md: per-channel only along axis 1 or 2.
                auto axis = static_axis(layout == GenLayout::kBlockPaged ? std::vector<uint32_t>{1, 2} : all_axes());
                if (!axis) {
                    return false;
                }
                hurray::PerChannelAffine p;
                p.axis = *axis;
                const bool asym = r.chance(1, 2);
                auto [s, z] = param_indices(asym);
                p.scale_buffer_index = s;
                p.zero_point_buffer_index = z;
                q.scheme = p;
                break;
            }
            case GenQuant::kPerBlock: {
                hurray::PerBlockAffine p;
                if (layout == GenLayout::kBlockPaged) {
                    // block-paged.md: axis 0 and block_size == page_size.
                    if (d().shape[0] == kDyn) {
                        return false;
                    }
                    auto& b = std::get<hurray::BlockPagedLayout>(d().layout);
                    p.axis = 0;
                    p.block_size = b.page_size;
                    if (!std::has_single_bit(b.page_size) || b.page_size < 2) {
                        return false;
                    }
                    if (d().shape[0] != 0 && d().shape[0] < b.page_size) {
                        d().shape[0] = r.range(b.page_size, uint64_t{b.page_size} * 64);
                    }
                } else {
                    auto axis = static_axis(all_axes());
                    if (!axis) {
                        return false;
                    }
                    auto block = block_for(*axis, 2);
                    if (!block) {
                        return false;
                    }
                    p.axis = *axis;
                    p.block_size = *block;
                }
                p.scale_type = std::vector<ElementType>{ElementType::kFloat16, ElementType::kBFloat16,
                                                        ElementType::kFloat32}[r.below(3)];
                const bool asym = r.chance(1, 2);
                auto [s, z] = param_indices(asym);
                p.scale_buffer_index = s;
                p.zero_point_buffer_index = z;
                q.scheme = p;
                break;
            }
            case GenQuant::kNf4: {
                auto axis = static_axis(all_axes());
                if (!axis) {
                    return false;
                }
                auto block = block_for(*axis, 8);
                if (!block) {
                    return false;
                }
                hurray::Nf4Quantization p;
                p.axis = *axis;
                p.block_size = *block;
                p.scale_buffer_index = param_indices(false).first;
                q.scheme = p;
                break;
            }
            case GenQuant::kMxfp: {
                auto axis = static_axis(all_axes());
                if (!axis) {
                    return false;
                }
                uint64_t& len = d().shape[*axis];
                // mxfp.md: block a power of two in [16, 2048]; shape[axis] a positive multiple.
                uint32_t block = 0;
                if (shape_mutable()) {
                    block = uint32_t{1} << r.range(4, 11);
                    if (len == 0 || len % block != 0) {
                        len = uint64_t{block} * r.range(1, 4);
                    }
                } else {
                    if (len == 0 || !std::has_single_bit(len) || len < 16) {
                        return false;  // Hilbert and Morton keep their shape
                    }
                    block = uint32_t{1} << r.range(4, std::min<uint32_t>(11, floor_log2(len)));
                }
                hurray::MxfpQuantization p;
                p.axis = *axis;
                p.block_size = block;
                p.scale_buffer_index = param_indices(false).first;
                q.scheme = p;
                break;
            }
            case GenQuant::kOpaque: {
                hurray::OpaqueQuantization o;
                o.scheme_tag = static_cast<uint8_t>(r.range(0xF0, 0xFE));
                o.scheme_version = r.u8();
                o.flags = static_cast<uint16_t>(r.u32());
                o.payload = r.bytes(static_cast<size_t>(r.chance(1, 10) ? r.range(0, 300) : r.range(0, 40)));
                out.known_private_schemes.push_back(o.scheme_tag);
                if (r.chance(1, 2)) {
                    out.known_private_schemes.push_back(static_cast<uint8_t>(r.range(0xF0, 0xFE)));
                }
                if (r.chance(1, 3)) {
                    extra_buffers += static_cast<uint32_t>(r.range(1, 3));  // unknown parameter buffers
                }
                q.scheme = std::move(o);
                break;
            }
            case GenQuant::kNone: break;
        }
        // quantization.md § Descriptor Header: writer padding after the fields.
        // An opaque payload already takes every byte, so padding is for typed schemes.
        if (quant != GenQuant::kOpaque && r.chance(1, 6)) {
            q.trailing_padding = r.bytes(static_cast<size_t>(r.range(1, 24)));
        }
        d().quantization = std::move(q);
        return true;
    }

    // -- layouts ---------------------------------------------------------------
    /// Lowest element offset (<= 0) a strided walk over `shape` reaches.
    static i128 strided_low(std::span<const uint64_t> shape, std::span<const int64_t> strides) {
        i128 lo = 0;
        for (size_t k = 0; k < shape.size(); ++k) {
            if (shape[k] == 0) {
                return 0;
            }
            const i128 term = static_cast<i128>(strides[k]) * static_cast<i128>(shape[k] - 1);
            lo += term < 0 ? term : 0;
        }
        return lo;
    }

    /// Lowest element offset of tiled levels[i..] over a region of `shape`
    /// (tiled.md: tile index times elements per tile, plus the in-tile offset).
    static i128 tiled_low(const hurray::TiledLayout& t, size_t i, std::span<const uint64_t> shape) {
        for (uint64_t n : shape) {
            if (n == 0) {
                return 0;
            }
        }
        const hurray::TiledLevel& lv = t.levels[i];
        std::vector<uint64_t> grid(shape.size());
        i128 tile_elems = 1;
        for (size_t k = 0; k < shape.size(); ++k) {
            grid[k] = (shape[k] + lv.tile_shape[k] - 1) / lv.tile_shape[k];
            tile_elems *= lv.tile_shape[k];
        }
        const i128 outer =
            lv.outer_layout == hurray::LayoutTag::kStrided ? strided_low(grid, lv.outer_strides) : 0;
        i128 inner = 0;
        if (lv.inner_layout == hurray::LayoutTag::kStrided) {
            inner = strided_low(lv.tile_shape, lv.inner_strides);
        } else if (lv.inner_layout == hurray::LayoutTag::kTiled) {
            inner = tiled_low(t, i + 1, lv.tile_shape);
        }
        return outer * tile_elems + inner;
    }

    int64_t draw_stride(uint64_t natural) {
        switch (pick_weighted<int>(r, {{0, 10}, {1, 30}, {2, 45}, {3, 10}, {4, 5}})) {
            case 0: return 0;
            case 1: return static_cast<int64_t>(natural);
            case 2: return r.srange(-64, 64);
            case 3: return -static_cast<int64_t>(natural);
            default: return r.chance(1, 2) ? r.srange(1, 1 << 24) : -r.srange(1, 1 << 24);
        }
    }

    std::vector<int64_t> draw_strides(std::span<const uint64_t> shape) {
        std::vector<int64_t> st(shape.size());
        uint64_t natural = 1;
        for (size_t k = shape.size(); k-- > 0;) {
            st[k] = draw_stride(natural);
            const uint64_t n = shape[k] == kDyn || shape[k] == 0 ? 1 : shape[k];
            natural = std::min<uint64_t>(natural * n, uint64_t{1} << 40);
        }
        return st;
    }

    hurray::TiledLayout draw_tiled() {
        hurray::TiledLayout t;
        const size_t depth = pick_weighted<size_t>(r, {{1, 50}, {2, 25}, {3, 8}, {4, 7}, {5, 3}, {6, 3}, {7, 2}, {8, 2}});
        std::vector<uint64_t> region = d().shape.to_vector();
        for (size_t i = 0; i < depth; ++i) {
            hurray::TiledLevel lv;
            lv.tile_shape.resize(rank);
            uint64_t prod = 1;
            for (uint32_t k = 0; k < rank; ++k) {
                const uint64_t reg = region[k] == kDyn ? 64 : std::max<uint64_t>(1, region[k]);
                uint64_t tile = 1;
                if (high_rank) {
                    tile = r.chance(1, 5) ? 2 : 1;
                } else {
                    switch (r.below(6)) {
                        case 0: tile = r.range(1, 8); break;
                        case 1: tile = r.range(1, std::min<uint64_t>(2 * reg + 1, 4096)); break;  // partial / oversized tiles
                        default: tile = r.range(1, std::min<uint64_t>(reg, 16)); break;
                    }
                }
                if (prod * tile > (uint64_t{1} << 16)) {
                    tile = 1;
                }
                prod *= tile;
                lv.tile_shape[k] = tile;
            }
            lv.outer_layout = pick_weighted<hurray::LayoutTag>(
                r, {{hurray::LayoutTag::kRowMajor, 40}, {hurray::LayoutTag::kColumnMajor, 25}, {hurray::LayoutTag::kStrided, 35}});
            const bool last = i + 1 == depth;
            lv.inner_layout = last ? pick_weighted<hurray::LayoutTag>(r, {{hurray::LayoutTag::kRowMajor, 40},
                                                                          {hurray::LayoutTag::kColumnMajor, 25},
                                                                          {hurray::LayoutTag::kStrided, 35}})
                                   : hurray::LayoutTag::kTiled;
            if (lv.outer_layout == hurray::LayoutTag::kStrided) {
                std::vector<uint64_t> grid(rank);
                for (uint32_t k = 0; k < rank; ++k) {
                    grid[k] = region[k] == kDyn ? 4 : (region[k] + lv.tile_shape[k] - 1) / lv.tile_shape[k];
                }
                lv.outer_strides = draw_strides(grid);
                for (auto& s : lv.outer_strides) {  // in tiles: keep the span modest
                    s = std::clamp<int64_t>(s, -(int64_t{1} << 20), int64_t{1} << 20);
                }
            }
            if (lv.inner_layout == hurray::LayoutTag::kStrided) {
                lv.inner_strides = draw_strides(lv.tile_shape);
            }
            region = lv.tile_shape;
            t.levels.push_back(std::move(lv));
        }
        return t;
    }

    /// Bytes below element [0,...,0] that negative strides reach.
    uint64_t bytes_below() {
        const Shape& s = d().shape;
        if (hurray::has_dynamic_dim(s)) {
            return 0;  // the span is unknown until the dimension is resolved
        }
        i128 lo = 0;
        if (const auto* st = std::get_if<hurray::StridedLayout>(&d().layout)) {
            lo = strided_low(s, st->strides);
        } else if (const auto* t = std::get_if<hurray::TiledLayout>(&d().layout)) {
            lo = tiled_low(*t, 0, s);
        }
        if (lo >= 0) {
            return 0;
        }
        if (-lo > static_cast<i128>(uint64_t{1} << 56)) {
            throw Retry{};
        }
        auto b = hurray::storage_bytes_for_bits(d().element_bits(), static_cast<uint64_t>(-lo));
        if (!b) {
            throw Retry{};
        }
        return *b;
    }

    uint64_t element_count_or(uint64_t fallback) const {
        auto n = hurray::element_count(out.descriptor.shape);
        return n ? *n : fallback;
    }

    void make_layout() {
        TensorDescriptor& t = d();
        switch (layout) {
            case GenLayout::kRowMajor: t.layout = hurray::RowMajorLayout{}; break;
            case GenLayout::kColumnMajor: t.layout = hurray::ColumnMajorLayout{}; break;
            case GenLayout::kStrided: t.layout = hurray::StridedLayout{draw_strides(t.shape)}; break;
            case GenLayout::kTiled: t.layout = draw_tiled(); break;
            case GenLayout::kMorton: {
                // Extra bits beyond what the shape needs are allowed (sum <= 40 here).
                std::vector<uint32_t> bits(rank);
                uint32_t sum = 0;
                for (uint32_t k = 0; k < rank; ++k) {
                    bits[k] = std::max(morton_bits.empty() ? 1U : morton_bits[k], bits_for(t.shape[k]));
                    sum += bits[k];
                }
                if (sum < 40 && r.chance(1, 4)) {
                    bits[r.below(rank)] += static_cast<uint32_t>(r.range(1, 40 - sum));
                }
                t.layout = hurray::MortonLayout{bits};
                break;
            }
            case GenLayout::kCoo: {
                const uint64_t count = element_count_or(5000);
                t.layout = hurray::CooLayout{r.range(0, std::min<uint64_t>(count, 5000)), r.chance(1, 2)};
                break;
            }
            case GenLayout::kCsr:
            case GenLayout::kCsc: {
                const uint64_t nnz = r.range(0, std::min<uint64_t>(element_count_or(5000), 5000));
                if (layout == GenLayout::kCsr) {
                    t.layout = hurray::CsrLayout{nnz};
                } else {
                    t.layout = hurray::CscLayout{nnz};
                }
                break;
            }
            case GenLayout::kCsf: {
                hurray::CsfLayout f;
                f.nnz = r.range(0, std::min<uint64_t>(element_count_or(5000), 5000));
                f.mode_order.resize(rank);
                for (uint32_t k = 0; k < rank; ++k) {
                    f.mode_order[k] = k;
                }
                for (uint32_t i = rank; i > 1; --i) {  // csf.md: a permutation of 0..rank-1
                    std::swap(f.mode_order[i - 1], f.mode_order[r.below(i)]);
                }
                t.layout = std::move(f);
                break;
            }
            case GenLayout::kBlockPaged: {
                hurray::BlockPagedLayout b;
                b.page_size = r.chance(1, 2) ? uint32_t{1} << r.range(0, 6) : static_cast<uint32_t>(r.range(1, 100));
                b.num_pages = r.chance(1, 10) ? r.range(0, uint64_t{1} << 33) : r.range(0, 2000);
                b.paged_axis = 0;
                b.num_seqs = r.chance(1, 10) ? r.u32() : static_cast<uint32_t>(r.range(0, 64));
                b.kv_role = static_cast<hurray::KvRole>(r.below(3));
                b.layer_index = r.chance(1, 3) ? hurray::kNoLayerIndex : static_cast<uint32_t>(r.range(0, 200));
                b.index_type = b.num_pages > UINT32_MAX || r.chance(1, 3) ? hurray::BlockTableIndexType::kUInt64
                                                                           : hurray::BlockTableIndexType::kUInt32;
                if (quant == GenQuant::kPerBlock && (b.page_size < 2 || !std::has_single_bit(b.page_size))) {
                    b.page_size = uint32_t{1} << r.range(1, 6);
                }
                if (b.num_pages > (uint64_t{1} << 24) && !hurray::has_dynamic_dim(t.shape)) {
                    // Keep the page pool size within 64 bits.
                    const uint64_t per_page = uint64_t{b.page_size} * std::max<uint64_t>(1, t.shape[1]) *
                                              std::max<uint64_t>(1, t.shape[2]) * 16;
                    b.num_pages = std::min<uint64_t>(b.num_pages, (uint64_t{1} << 60) / per_page);
                }
                t.layout = b;
                break;
            }
            case GenLayout::kComposite: {
                hurray::CompositeLayout c;
                c.rule = static_cast<hurray::CompositionRule>(r.range(1, 3));
                // composite.md: overlay needs replace or add; partition and group none.
                c.combine_op = c.rule == hurray::CompositionRule::kOverlay
                                   ? static_cast<hurray::CombineOp>(r.range(1, 2))
                                   : hurray::CombineOp::kNone;
                c.member_count = r.chance(1, 10) ? hurray::kOpenCompositeMemberCount - 1
                                                 : static_cast<uint32_t>(r.range(0, 16));
                t.layout = c;
                break;
            }
            case GenLayout::kHilbert: t.layout = hurray::HilbertLayout{hilbert_order, rank}; break;
            case GenLayout::kExtension: {
                hurray::ExtensionLayout e;
                e.tag = static_cast<uint8_t>(r.range(0xF0, 0xFE));
                e.layout_id = r.chance(1, 4) ? r.range(0, 16) : r.u64();
                e.data = r.bytes(static_cast<size_t>(r.chance(1, 10) ? r.range(0, 600) : r.range(0, 48)));
                out.known_extension_layouts.push_back(e.layout_id);
                if (r.chance(1, 2)) {
                    out.known_extension_layouts.insert(out.known_extension_layouts.begin(), r.u64());
                }
                t.layout = std::move(e);
                break;
            }
            case GenLayout::kCount: break;
        }
    }

    void make_byte_offset() {
        TensorDescriptor& t = d();
        const auto kind = hurray::layout_kind(t.layout);
        if (kind == hurray::LayoutKind::kExtension) {
            t.byte_offset = r.chance(7, 10) ? 0 : r.range(0, 4096);
            return;
        }
        if (kind != hurray::LayoutKind::kDense) {
            t.byte_offset = 0;  // memory-layout.md: sparse, indirect and virtual layouts use 0
            return;
        }
        uint64_t extra = 0;
        switch (r.below(10)) {
            case 0:
            case 1: extra = r.range(1, 256); break;
            case 2: extra = r.range(1, uint64_t{1} << 20); break;
            default: break;
        }
        t.byte_offset = bytes_below() + extra;  // strided.md: negative strides stay in the buffer
    }

    // -- buffers -----------------------------------------------------------------
    DeviceTag device = DeviceTag::kCpu;
    MemoryClass memory_class = MemoryClass::kStandard;

    void pick_placement() {
        // buffer-protocol.md § Per-Device Validity.
        switch (pick_weighted<int>(r, {{0, 50}, {1, 20}, {2, 15}, {3, 15}})) {
            case 0:
                device = DeviceTag::kCpu;
                memory_class = static_cast<MemoryClass>(r.range(0, 2));
                return;
            case 1:
                device = DeviceTag::kCuda;
                memory_class = static_cast<MemoryClass>(r.range(0, 3));
                return;
            case 2: {
                device = static_cast<DeviceTag>(r.range(2, 8));
                const auto dev = static_cast<uint8_t>(device);
                if (dev == 0x05) {
                    memory_class = MemoryClass::kStandard;  // WebGPU
                } else if (dev == 0x03 || dev == 0x06 || dev == 0x08) {
                    memory_class = static_cast<MemoryClass>(r.range(0, 2));  // no PEER
                } else {
                    memory_class = static_cast<MemoryClass>(r.range(0, 3));
                }
                return;
            }
            default:
                device = static_cast<DeviceTag>(r.range(0xF0, 0xFE));
                memory_class = r.chance(1, 2) ? MemoryClass::kStandard
                                              : static_cast<MemoryClass>(r.range(0xF0, 0xFE));
                return;
        }
    }

    BufferHandle place(uint64_t size) {
        BufferHandle h;
        h.byte_size = size;
        // buffer-protocol.md: a power of two >= 64; an empty buffer may use any power of two.
        h.alignment = size == 0 && r.chance(1, 2) ? uint32_t{1} << r.range(0, 31)
                                                  : uint32_t{1} << (r.chance(1, 10) ? r.range(6, 16) : r.range(6, 12));
        h.device_tag = device;
        h.memory_class = memory_class;
        // buffer-protocol.md: CPU buffers are producer-synced; devices may use events or streams.
        h.sync_mode = device == DeviceTag::kCpu ? SyncMode::kProducerSynced
                                                : static_cast<SyncMode>(r.range(0, 2));
        return h;
    }

    uint64_t grow(uint64_t size) {
        if (size > (uint64_t{1} << 60) || !r.chance(15, 100)) {
            return size;
        }
        return size + (r.chance(1, 2) ? r.range(1, 64) : r.range(1, uint64_t{1} << 20));
    }

    void make_buffers() {
        TensorDescriptor& t = d();
        auto req = hurray::required_buffer_sizes(t);
        if (!req) {
            if (req.error().code() == hurray::ErrorCode::kSizeOverflow) {
                throw Retry{};
            }
            out.generator_error = "required_buffer_sizes: " + req.error().to_string();
            return;
        }
        const bool is_extension = layout == GenLayout::kExtension;
        const uint64_t index_width =
            std::holds_alternative<hurray::BlockPagedLayout>(t.layout) &&
                    std::get<hurray::BlockPagedLayout>(t.layout).index_type == hurray::BlockTableIndexType::kUInt32
                ? 4
                : 8;
        // Sizes of the buffers the descriptor cannot size itself.
        std::vector<uint64_t> dd;
        std::vector<uint64_t> sizes(req->size());
        for (size_t i = 0; i < req->size(); ++i) {
            const hurray::BufferRequirement& q = (*req)[i];
            uint64_t size = 0;
            if (q.data_dependent || !q.min_size) {
                if (q.min_size) {
                    size = *q.min_size + index_width * r.range(0, 512);  // inner CSF levels, block table
                } else if (i == 0 && (is_extension || hurray::layout_kind(t.layout) == hurray::LayoutKind::kDense)) {
                    size = t.byte_offset + r.range(0, uint64_t{1} << 20);  // byte_offset <= size of buffer 0
                } else {
                    size = 4 * r.range(0, 4096);
                }
                dd.push_back(size);
            } else {
                size = *q.min_size;
            }
            sizes[i] = size;
        }
        // Buffers neither the layout nor a known scheme defines (extension
        // layouts, private schemes may have more): any size.
        if (is_extension || quant == GenQuant::kOpaque) {
            const size_t total = base_count() + (quant == GenQuant::kOpaque ? 0 : param_slots) + extra_buffers;
            if (req->size() > total) {
                out.generator_error = "required_buffer_sizes returned " + std::to_string(req->size()) +
                                      " buffers, expected at most " + std::to_string(total);
            }
            while (sizes.size() < total) {
                sizes.push_back(r.chance(1, 5) ? 0 : r.range(0, uint64_t{1} << 16));
            }
        }

        out.default_strict_ok = !is_extension && quant != GenQuant::kOpaque;
        if (out.default_strict_ok) {
            // builder.hpp: size_buffers fills the table with the smallest valid sizes.
            hurray::BufferPlacement pl;
            pl.device_tag = device;
            pl.memory_class = memory_class;
            pl.sync_mode = device == DeviceTag::kCpu ? SyncMode::kProducerSynced : SyncMode::kEvent;
            auto sized = hurray::size_buffers(t, pl, dd);
            if (!sized) {
                out.generator_error = "size_buffers: " + sized.error().to_string();
                return;
            }
            out.sized_by_builder = true;
            t.buffers = sized->buffers;
            for (size_t i = 0; i < t.buffers.size() && i < sizes.size(); ++i) {
                if (t.buffers[i].byte_size != sizes[i]) {
                    out.generator_error = "size_buffers: buffer " + std::to_string(i) + " sized " +
                                          std::to_string(t.buffers[i].byte_size) + ", required_buffer_sizes says " +
                                          std::to_string(sizes[i]);
                }
            }
            if (t.buffers.size() != sizes.size()) {
                out.generator_error = "size_buffers: buffer count differs from required_buffer_sizes";
            }
        } else {
            t.buffers.assign(sizes.size(), BufferHandle{});
        }
        for (size_t i = 0; i < t.buffers.size(); ++i) {
            uint64_t size = sizes[i];
            const bool exact = i < req->size() && (*req)[i].exact;
            if (!exact && i < req->size()) {
                size = grow(size);  // data and index buffers may be larger than required
            }
            t.buffers[i] = place(size);
        }
    }

    // -- optional sections ---------------------------------------------------------
    void make_sections() {
        TensorDescriptor& t = d();
        // metadata.md § Shard Section; layouts/csf.md and block-paged.md forbid shards.
        if (layout != GenLayout::kCsf && layout != GenLayout::kBlockPaged && !hurray::has_dynamic_dim(t.shape) &&
            r.chance(1, 5)) {
            hurray::ShardDescriptor s;
            s.parent_shape.resize(rank);
            s.shard_offset.resize(rank);
            for (uint32_t k = 0; k < rank; ++k) {
                const uint64_t n = t.shape[k];
                switch (r.below(6)) {
                    case 0:  // the shard reaches the largest static parent size
                        s.parent_shape[k] = kDyn - 1;
                        s.shard_offset[k] = kDyn - 1 - n;
                        break;
                    case 1:
                        s.shard_offset[k] = 0;
                        s.parent_shape[k] = n;
                        break;
                    default:
                        s.shard_offset[k] = r.range(0, 1 << 20);
                        s.parent_shape[k] = s.shard_offset[k] + n + (r.chance(1, 2) ? 0 : r.range(0, 1 << 20));
                        break;
                }
            }
            t.shard = std::move(s);
        }
        if (r.chance(1, 4)) {
            hurray::Statistics st;
            st.computed_mask = static_cast<uint32_t>(r.below(64));
            std::optional<uint64_t> layout_nnz;
            if (const auto* l = std::get_if<hurray::CooLayout>(&t.layout)) {
                layout_nnz = l->nnz;
            } else if (const auto* l = std::get_if<hurray::CsrLayout>(&t.layout)) {
                layout_nnz = l->nnz;
            } else if (const auto* l = std::get_if<hurray::CscLayout>(&t.layout)) {
                layout_nnz = l->nnz;
            } else if (const auto* l = std::get_if<hurray::CsfLayout>(&t.layout)) {
                layout_nnz = l->nnz;
            }
            const bool nnz_valid = (st.computed_mask & hurray::kStatNnzValid) != 0;
            st.nnz = nnz_valid && layout_nnz ? *layout_nnz : r.u64();
            st.sparsity_ratio = (st.computed_mask & hurray::kStatSparsityValid) != 0
                                    ? (r.chance(1, 4) ? static_cast<double>(r.below(2))
                                                      : static_cast<double>(r.u32()) / 4294967295.0)
                                    : interesting_double(r);
            st.value_min = interesting_double(r);
            st.value_max = interesting_double(r);
            st.value_abs_max = interesting_double(r);
            st.value_mean = interesting_double(r);
            st.value_stddev = (st.computed_mask & hurray::kStatValueStatsValid) != 0 ? nonnegative_double(r)
                                                                                      : interesting_double(r);
            st.nm_m = r.u8();
            st.nm_n = (st.computed_mask & hurray::kStatNmSparsityValid) != 0
                          ? static_cast<uint8_t>(r.range(0, st.nm_m))
                          : r.u8();
            st.has_nan = r.chance(1, 2);
            st.has_inf = r.chance(1, 2);
            t.statistics = st;
        }
        // metadata.md § Composite Member Section: not on a head.
        if (layout != GenLayout::kComposite && r.chance(15, 100)) {
            t.composite_member = hurray::CompositeMember{static_cast<hurray::MemberRole>(r.below(2))};
        }
        // metadata.md § Version Compatibility: a newer minor version may append fields.
        if (r.chance(3, 100)) {
            t.version_minor = static_cast<uint8_t>(r.range(1, 255));
            t.unknown_trailing_bytes = r.bytes(static_cast<size_t>(r.range(0, 40)));
        }
    }

    void build() {
        pick_layout();
        if (layout == GenLayout::kExtension && r.chance(1, 3)) {
            extra_buffers = static_cast<uint32_t>(r.range(1, 3));  // private buffers
        }
        pick_rank();
        pick_quant();
        pick_element_type();
        pick_shape();
        maybe_dynamic_dims();
        if (layout == GenLayout::kBlockPaged) {
            make_layout();  // per-block needs page_size first
            if (!make_quantization()) {
                quant = GenQuant::kNone;
                d().quantization.reset();
            }
        } else {
            if (!make_quantization()) {
                quant = GenQuant::kNone;
                d().quantization.reset();
            }
            make_layout();  // Morton bits, tiles and nnz follow the final shape
        }
        make_byte_offset();
        pick_placement();
        make_buffers();
        make_sections();
    }
};

}  // namespace

GeneratedDescriptor generate_descriptor(uint64_t seed) {
    Rng r(seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL);
    for (int attempt = 0; attempt < 16; ++attempt) {
        Gen g(r);
        try {
            g.build();
        } catch (const Retry&) {
            continue;
        }
        return std::move(g.out);
    }
    // Practically unreachable: every draw overflowed. A plain valid descriptor.
    GeneratedDescriptor g;
    g.descriptor.shape = {1};
    g.descriptor.buffers = {BufferHandle{.byte_size = 4}};
    return g;
}

uint64_t property_scale(uint64_t base) {
    const char* env = std::getenv("HURRAY_PROPERTY_SCALE");
    if (env == nullptr || *env == '\0') {
        return base;
    }
    const double f = std::strtod(env, nullptr);
    if (!(f > 0)) {
        return base;
    }
    return std::max<uint64_t>(1, static_cast<uint64_t>(static_cast<double>(base) * f));
}

}  // namespace hurray_test
