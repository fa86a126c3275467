// SPDX-License-Identifier: Apache-2.0
// Dequantization (quantization.md, quantization/*.md, layouts/block-paged.md §
// Quantization Compatibility).
//
// A `Plan` is built once per call: it checks the scheme fields the reader
// relies on (axis, block size, parameter buffer indices and sizes) and turns
// the scheme into one of two element formulas over integer storage codes:
//
//   affine: value = scale[p] * float(code - zero_point[p])
//   table:  value = scale[p] * table[code]   (NF4 levels, MXFP element values)
//
// where `p` is the element's parameter index (0, the channel, the block or the
// page slot). Row-major tensors go through chunked loops: storage codes of a
// contiguous run are unpacked into an int32 scratch array, then the formula
// is applied with a per-run scalar or a per-element parameter vector. Both
// loops are plain and auto-vectorised. Every other layout goes element by
// element (column-major, sparse and block-paged) or through
// `TensorView::materialize` (strided, tiled, Morton, Hilbert, and block-paged
// without per-slot parameters).
#include "hurray/core/dequantize.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "hurray/core/checked_math.hpp"
#include "core/float16_widen.hpp"
#include "core/quant_storage.hpp"
#include "core/float_vector.hpp"
#include "core/ggml_blocks_rules.hpp"
#include "hurray/core/text.hpp"
#include "hurray/core/ggml_blocks.hpp"
#include "hurray/core/element_convert.hpp"

namespace hurray {
namespace {


// Elements per unpacked run: the int32 scratch (8 KiB) and the parameter
// vectors stay in L1.
constexpr size_t kChunk = 2048;

// How element values are formed from storage codes.
enum class Family : uint8_t {
    kAffine,  // scale * float(code - zero_point)
    kTable,   // scale * table[code]
};

// How an element's parameter index follows from its logical index.
enum class Granularity : uint8_t {
    kTensor,   // one inline scale and zero point
    kChannel,  // i_axis
    kBlock,    // outer * ceil(S / K) + floor(i_axis / K)
    kSlot,     // block-paged page slot: phys_page * page_size + offset_in_page
};

// How a storage code is read. Signed kinds are sign-extended; the 32-bit
// kinds keep the raw bit pattern in the int32 code (kU32 is reinterpreted).
enum class CodeKind : uint8_t { kU8, kS8, kU16, kS16, kU32, kS32, kU4, kS4, kU2, kS2, kU6 };

// How `code - zero_point` is formed. kNarrow: both fit in 17 bits, so int32
// arithmetic is exact. The 32-bit storage types subtract in int64, which is
// the normative int32 difference whenever that one does not overflow.
enum class DiffMode : uint8_t { kNarrow, kSigned32, kUnsigned32 };

struct Plan {
    const char* scheme = "";  // spec name, for messages
    Family family = Family::kAffine;
    Granularity granularity = Granularity::kTensor;
    ElementType storage = ElementType::kInt8;
    CodeKind code = CodeKind::kS8;
    DiffMode diff = DiffMode::kNarrow;
    uint32_t axis = 0;
    uint64_t block = 1;     // K, for kBlock
    bool pad_axis = false;  // row/column-major storage padded to whole blocks along axis

    // Parameters. Per-tensor: inline. Otherwise `entries` scale values of
    // `scale_type` in `scales` and, unless symmetric, `entries` int32 zero
    // points in `zero_points`.
    float tensor_scale = 1.0F;
    int32_t tensor_zero_point = 0;
    uint64_t entries = 0;
    ElementType scale_type = ElementType::kFloat32;  // float16/bfloat16/float32, or float8_e8m0 (MXFP)
    std::span<const uint8_t> scales{};
    std::span<const uint8_t> zero_points{};
    bool has_zero_points = false;
    uint32_t scale_buffer = 0;
    uint32_t zero_point_buffer = 0;
    int64_t code_min = 0;  // storage range, for zero points
    int64_t code_max = 0;

    std::array<float, 256> table{};  // kTable: value of every code
    uint32_t table_size = 0;         // 16, 64 or 256
    std::array<float, 512> pairs{};  // kTable, 4-bit codes: table values of both codes of each byte

    uint64_t slot_elements = 1;  // kSlot: elements per page slot (num_heads * head_dim)
};

// Row-major geometry around the parameter axis: [outer, len, inner], with the
// storage extent of the axis `ext` (len, or len padded to whole blocks).
struct Geometry {
    uint64_t outer = 1;
    uint64_t len = 1;
    uint64_t ext = 1;
    uint64_t inner = 1;
    uint64_t blocks_per_axis = 1;  // ceil(len / K)
};

// --- Messages (out of line: built only when a check fails) ----------------

[[gnu::cold]] Error bad_scale(const Plan& p, uint64_t entry, float value) {
    const bool nf4 = p.family == Family::kTable;
    return {ErrorCode::kInvalidData,
            std::string(p.scheme) + ": " + (nf4 ? "absmax" : "scale") + " buffer " + dec(p.scale_buffer) +
                " entry " + dec(entry) + " is " + std::to_string(value) +
                (nf4 ? "; absmax values must be finite and >= 0" : "; scales must be finite and non-zero")};
}

[[gnu::cold]] Error bad_e8m0(const Plan& p, uint64_t entry, uint8_t bits) {
    return {ErrorCode::kInvalidData, std::string(p.scheme) + ": scale buffer " + dec(p.scale_buffer) +
                                         " entry " + dec(entry) + " (block " + dec(entry) + ") is " +
                                         hex(bits) + ", a reserved float8_e8m0 value"};
}

[[gnu::cold]] Error bad_zero_point(const Plan& p, uint64_t entry, int32_t z) {
    return {ErrorCode::kInvalidData,
            std::string(p.scheme) + ": zero point buffer " + dec(p.zero_point_buffer) + " entry " +
                dec(entry) + " is " + std::to_string(z) + ", outside the range of " +
                std::string(type_name(p.storage)) + " [" + std::to_string(p.code_min) + ", " +
                std::to_string(p.code_max) + "]"};
}

[[gnu::cold]] Error bad_entry(const Plan& p, uint64_t entry) {
    return {ErrorCode::kInvalidData, std::string(p.scheme) + ": an element needs parameter entry " +
                                         dec(entry) + " of buffer " + dec(p.scale_buffer) + ", which holds " +
                                         dec(p.entries)};
}

// --- Little-endian loads ---------------------------------------------------

// SAFETY: callers pass a pointer to at least sizeof(T) readable bytes.
// A plain (vectorisable) load on little-endian hosts.
template <typename T>
T load_le(const uint8_t* p) noexcept {
    T v = 0;
    if constexpr (std::endian::native == std::endian::little) {
        std::memcpy(&v, p, sizeof(T));
    } else {
        for (size_t i = 0; i < sizeof(T); ++i) {
            v = static_cast<T>(v | (static_cast<T>(p[i]) << (8 * i)));
        }
    }
    return v;
}

// --- Parameters ------------------------------------------------------------

// The scale of parameter entry `b`, checked against its scheme's rule.
Result<float> scale_at(const Plan& p, uint64_t b) {
    if (p.granularity == Granularity::kTensor) {
        return p.tensor_scale;
    }
    if (b >= p.entries) {
        return bad_entry(p, b);
    }
    // SAFETY (all loads): make_plan() checked that `scales` holds `entries`
    // values of `scale_type`, and b < entries.
    float s = 0;
    switch (p.scale_type) {
        case ElementType::kFloat8E8M0: {
            const uint8_t e = p.scales[b];
            if (e == 0x00 || e == 0xFF) {
                return bad_e8m0(p, b, e);
            }
            // 2^(e - 127) for e in 1..254 is a normal float32: exponent field e, mantissa 0.
            return std::bit_cast<float>(static_cast<uint32_t>(e) << 23);
        }
        case ElementType::kFloat16: s = float16_to_float(load_le<uint16_t>(p.scales.data() + 2 * b)); break;
        case ElementType::kBFloat16: s = bfloat16_to_float(load_le<uint16_t>(p.scales.data() + 2 * b)); break;
        default: s = std::bit_cast<float>(load_le<uint32_t>(p.scales.data() + 4 * b)); break;
    }
    const bool ok = p.family == Family::kTable ? (std::isfinite(s) && s >= 0.0F)
                                               : (std::isfinite(s) && s != 0.0F);
    if (!ok) [[unlikely]] {
        return bad_scale(p, b, s);
    }
    return s;
}

// The zero point of parameter entry `b` (0 when symmetric), range-checked.
Result<int32_t> zero_point_at(const Plan& p, uint64_t b) {
    if (p.granularity == Granularity::kTensor) {
        return p.tensor_zero_point;
    }
    if (!p.has_zero_points) {
        return 0;
    }
    if (b >= p.entries) {
        return bad_entry(p, b);
    }
    // SAFETY: make_plan() checked that `zero_points` holds `entries` int32 values.
    const auto z = static_cast<int32_t>(load_le<uint32_t>(p.zero_points.data() + 4 * b));
    if (z < p.code_min || z > p.code_max) [[unlikely]] {
        return bad_zero_point(p, b, z);
    }
    return z;
}

// --- Unpacking storage codes -----------------------------------------------

// The 4-bit code of element `i` (low nibble first).
inline uint32_t nibble(const uint8_t* d, uint64_t i) { return (d[i >> 1] >> ((i & 1U) * 4)) & 0xFU; }
// The 2-bit code of element `i` (LSB first).
inline uint32_t crumb(const uint8_t* d, uint64_t i) { return (d[i >> 2] >> ((i & 3U) * 2)) & 0x3U; }

inline int32_t sext4(uint32_t c) { return static_cast<int32_t>(c ^ 0x8U) - 8; }
inline int32_t sext2(uint32_t c) { return static_cast<int32_t>(c ^ 0x2U) - 2; }

// Unpacks `n` 4-bit codes starting at element `p`, sign-extended when `kSigned`.
template <bool kSigned>
void unpack4(const uint8_t* d, uint64_t p, size_t n, int32_t* __restrict out) {
    auto conv = [](uint32_t c) { return kSigned ? sext4(c) : static_cast<int32_t>(c); };
    size_t j = 0;
    if ((p & 1U) != 0 && n > 0) {
        out[j++] = conv(nibble(d, p));
    }
    // Element p + j is now byte-aligned.
    const uint8_t* __restrict src = d + ((p + j) >> 1);
    const size_t pairs = (n - j) / 2;
    int32_t* __restrict o = out + j;
    for (size_t k = 0; k < pairs; ++k) {
        const uint32_t b = src[k];
        o[2 * k] = conv(b & 0xFU);
        o[2 * k + 1] = conv(b >> 4);
    }
    j += 2 * pairs;
    if (j < n) {
        out[j] = conv(nibble(d, p + j));
    }
}

// Unpacks `n` 2-bit codes starting at element `p`, sign-extended when `kSigned`.
template <bool kSigned>
void unpack2(const uint8_t* d, uint64_t p, size_t n, int32_t* __restrict out) {
    auto conv = [](uint32_t c) { return kSigned ? sext2(c) : static_cast<int32_t>(c); };
    size_t j = 0;
    for (; j < n && ((p + j) & 3U) != 0; ++j) {
        out[j] = conv(crumb(d, p + j));
    }
    const uint8_t* __restrict src = d + ((p + j) >> 2);
    const size_t quads = (n - j) / 4;
    int32_t* __restrict o = out + j;
    for (size_t k = 0; k < quads; ++k) {
        const uint32_t b = src[k];
        o[4 * k] = conv(b & 3U);
        o[4 * k + 1] = conv((b >> 2) & 3U);
        o[4 * k + 2] = conv((b >> 4) & 3U);
        o[4 * k + 3] = conv(b >> 6);
    }
    for (j += 4 * quads; j < n; ++j) {
        out[j] = conv(crumb(d, p + j));
    }
}

// Unpacks the storage codes of elements [p, p + n) into `out`.
// SAFETY: callers have checked that these elements lie inside `data` (once per
// tensor, against the storage size of every element the loops visit).
void unpack(CodeKind kind, std::span<const uint8_t> data, uint64_t p, size_t n, int32_t* __restrict out) {
    const uint8_t* __restrict d = data.data();
    switch (kind) {
        case CodeKind::kU8:
            for (size_t j = 0; j < n; ++j) {
                out[j] = d[p + j];
            }
            return;
        case CodeKind::kS8:
            for (size_t j = 0; j < n; ++j) {
                out[j] = static_cast<int32_t>(d[p + j] ^ 0x80U) - 128;  // sign extension
            }
            return;
        case CodeKind::kU16:
            for (size_t j = 0; j < n; ++j) {
                out[j] = load_le<uint16_t>(d + 2 * (p + j));
            }
            return;
        case CodeKind::kS16:
            for (size_t j = 0; j < n; ++j) {
                out[j] = static_cast<int16_t>(load_le<uint16_t>(d + 2 * (p + j)));
            }
            return;
        case CodeKind::kU32:
        case CodeKind::kS32:
            for (size_t j = 0; j < n; ++j) {
                out[j] = static_cast<int32_t>(load_le<uint32_t>(d + 4 * (p + j)));
            }
            return;
        case CodeKind::kU4: unpack4<false>(d, p, n, out); return;
        case CodeKind::kS4: unpack4<true>(d, p, n, out); return;
        case CodeKind::kU2: unpack2<false>(d, p, n, out); return;
        case CodeKind::kS2: unpack2<true>(d, p, n, out); return;
        case CodeKind::kU6:
            for (size_t j = 0; j < n; ++j) {
                out[j] = static_cast<int32_t>(load_packed(data, p + j, 6));
            }
            return;
    }
}

// The storage code of element `index` of a run starting at byte 0 of
// `bytes`, or kInvalidData when the element lies outside `bytes`.
Result<int32_t> code_at(const Plan& p, std::span<const uint8_t> bytes, uint64_t index) {
    auto end = storage_bytes(p.storage, index + 1);
    if (index == UINT64_MAX || !end || *end > bytes.size()) {
        return Error(ErrorCode::kInvalidData, std::string(p.scheme) + ": element " + dec(index) +
                                                  " of a " + std::string(type_name(p.storage)) +
                                                  " run lies outside its buffer of " +
                                                  dec(bytes.size()) + " bytes");
    }
    int32_t c = 0;
    // SAFETY: the check above proved that element `index` lies inside `bytes`.
    unpack(p.code, bytes, index, 1, &c);
    return c;
}

// --- Element formulas --------------------------------------------------------

template <DiffMode M>
inline float diff(int32_t code, int32_t z) {
    if constexpr (M == DiffMode::kNarrow) {
        return static_cast<float>(code - z);
    } else if constexpr (M == DiffMode::kSigned32) {
        return static_cast<float>(int64_t{code} - z);
    } else {
        return static_cast<float>(int64_t{static_cast<uint32_t>(code)} - z);
    }
}

template <DiffMode M>
void affine_scalar_impl(const int32_t* __restrict c, size_t n, float s, int32_t z, float* __restrict out) {
    for (size_t j = 0; j < n; ++j) {
        out[j] = s * diff<M>(c[j], z);
    }
}

template <DiffMode M>
void affine_vector_impl(const int32_t* __restrict c, size_t n, const float* __restrict s,
                        const int32_t* __restrict z, float* __restrict out) {
    for (size_t j = 0; j < n; ++j) {
        out[j] = s[j] * diff<M>(c[j], z[j]);
    }
}

// out[j] = s * float(c[j] - z).
void affine_scalar(DiffMode m, const int32_t* c, size_t n, float s, int32_t z, float* out) {
    switch (m) {
        case DiffMode::kNarrow: affine_scalar_impl<DiffMode::kNarrow>(c, n, s, z, out); return;
        case DiffMode::kSigned32: affine_scalar_impl<DiffMode::kSigned32>(c, n, s, z, out); return;
        case DiffMode::kUnsigned32: affine_scalar_impl<DiffMode::kUnsigned32>(c, n, s, z, out); return;
    }
}

// out[j] = s[j] * float(c[j] - z[j]).
void affine_vector(DiffMode m, const int32_t* c, size_t n, const float* s, const int32_t* z, float* out) {
    switch (m) {
        case DiffMode::kNarrow: affine_vector_impl<DiffMode::kNarrow>(c, n, s, z, out); return;
        case DiffMode::kSigned32: affine_vector_impl<DiffMode::kSigned32>(c, n, s, z, out); return;
        case DiffMode::kUnsigned32: affine_vector_impl<DiffMode::kUnsigned32>(c, n, s, z, out); return;
    }
}

// out[j] = s * table[c[j]]; codes are < table_size by construction (unpack).
void table_scalar(const Plan& p, const int32_t* __restrict c, size_t n, float s, float* __restrict out) {
    if (p.table_size == 16) {
        // The same float32 products, computed once per run.
        std::array<float, 16> lut{};
        for (size_t k = 0; k < 16; ++k) {
            lut[k] = s * p.table[k];
        }
        for (size_t j = 0; j < n; ++j) {
            out[j] = lut[static_cast<uint32_t>(c[j]) & 0xFU];
        }
        return;
    }
    const float* __restrict t = p.table.data();
    for (size_t j = 0; j < n; ++j) {
        out[j] = s * t[static_cast<uint32_t>(c[j]) & 0xFFU];
    }
}

// out[j] = s[j] * table[c[j]].
void table_vector(const Plan& p, const int32_t* __restrict c, size_t n, const float* __restrict s,
                  float* __restrict out) {
    const float* __restrict t = p.table.data();
    for (size_t j = 0; j < n; ++j) {
        out[j] = s[j] * t[static_cast<uint32_t>(c[j]) & 0xFFU];
    }
}

// The value of one element given its code and parameter index.
Result<float> element_value(const Plan& p, int32_t code, uint64_t param) {
    HURRAY_ASSIGN_OR_RETURN(float s, scale_at(p, param));
    if (p.family == Family::kTable) {
        return s * p.table[static_cast<uint32_t>(code) & 0xFFU];
    }
    HURRAY_ASSIGN_OR_RETURN(int32_t z, zero_point_at(p, param));
    float v = 0;
    affine_scalar(p.diff, &code, 1, s, z, &v);
    return v;
}

// --- Row-major runs ------------------------------------------------------------

struct Scratch {
    std::vector<int32_t> codes = std::vector<int32_t>(kChunk);
    std::vector<float> scales = std::vector<float>(kChunk);
    std::vector<int32_t> zero_points = std::vector<int32_t>(kChunk);
};

// The loops of load_params: entries first + k * stride (stride 1 when
// kContiguous, so that the loads vectorise). Returns non-zero when an entry
// breaks its scheme's rule.
// SAFETY: the caller checked that every entry read is below `entries`.
template <bool kContiguous>
uint32_t decode_params(const Plan& p, uint64_t first, uint64_t stride, size_t n, Scratch& sc) {
    float* __restrict sv = sc.scales.data();
    int32_t* __restrict zv = sc.zero_points.data();
    const uint64_t step = kContiguous ? 1 : stride;
    uint32_t bad = 0;
    switch (p.scale_type) {
        case ElementType::kFloat8E8M0: {
            const uint8_t* __restrict sb = p.scales.data() + first;
            for (size_t k = 0; k < n; ++k) {
                const uint32_t e = sb[k * step];
                bad |= static_cast<uint32_t>(e == 0x00U) | static_cast<uint32_t>(e == 0xFFU);
                sv[k] = std::bit_cast<float>(e << 23);
            }
            break;
        }
        case ElementType::kFloat16: {
            const uint8_t* __restrict sb = p.scales.data() + 2 * first;
            for (size_t k = 0; k < n; ++k) {
                sv[k] = detail::widen_float16(load_le<uint16_t>(sb + 2 * k * step));
            }
            break;
        }
        case ElementType::kBFloat16: {
            const uint8_t* __restrict sb = p.scales.data() + 2 * first;
            for (size_t k = 0; k < n; ++k) {
                sv[k] = detail::widen_bfloat16(load_le<uint16_t>(sb + 2 * k * step));
            }
            break;
        }
        default: {
            const uint8_t* __restrict sb = p.scales.data() + 4 * first;
            for (size_t k = 0; k < n; ++k) {
                sv[k] = std::bit_cast<float>(load_le<uint32_t>(sb + 4 * k * step));
            }
            break;
        }
    }
    if (p.scale_type != ElementType::kFloat8E8M0) {
        // Affine: finite and non-zero. NF4: finite and >= 0 (-0.0 included).
        const uint32_t nf4 = p.family == Family::kTable ? 1U : 0U;
        for (size_t k = 0; k < n; ++k) {
            const auto u = std::bit_cast<uint32_t>(sv[k]);
            const auto non_finite = static_cast<uint32_t>((u & 0x7F800000U) == 0x7F800000U);
            const auto negative = static_cast<uint32_t>(u > 0x80000000U);
            const auto zero = static_cast<uint32_t>((u & 0x7FFFFFFFU) == 0);
            bad |= non_finite | (nf4 & negative) | ((nf4 ^ 1U) & zero);
        }
    }
    if (p.has_zero_points) {
        const uint8_t* __restrict zb = p.zero_points.data() + 4 * first;
        const auto lo = static_cast<int32_t>(std::max<int64_t>(p.code_min, INT32_MIN));
        const auto hi = static_cast<int32_t>(std::min<int64_t>(p.code_max, INT32_MAX));
        for (size_t k = 0; k < n; ++k) {
            const auto z = static_cast<int32_t>(load_le<uint32_t>(zb + 4 * k * step));
            bad |= static_cast<uint32_t>(z < lo) | static_cast<uint32_t>(z > hi);
            zv[k] = z;
        }
    } else {
        std::fill(zv, zv + n, 0);
    }
    return bad;
}

// Decodes parameter entries first + k * stride, k < n (n <= kChunk), into
// the scratch vectors, checking each against its scheme's rule. The loops
// are branch-free and vectorised; a violation is reported by scale_at /
// zero_point_at, which name the first offending entry.
Status load_params(const Plan& p, uint64_t first, uint64_t stride, size_t n, Scratch& sc) {
    if (n == 0) {
        return Status::success();
    }
    const uint64_t last = first + (n - 1) * stride;
    if (last >= p.entries) {
        return bad_entry(p, last);
    }
    // SAFETY (all loads): every entry read is <= last < entries, and
    // make_plan() checked that `scales` and `zero_points` hold `entries` values.
    const uint32_t bad = stride == 1 ? decode_params<true>(p, first, 1, n, sc) : decode_params<false>(p, first, stride, n, sc);
    if (bad != 0) [[unlikely]] {
        for (size_t k = 0; k < n; ++k) {
            HURRAY_RETURN_IF_ERROR(scale_at(p, first + k * stride));
            HURRAY_RETURN_IF_ERROR(zero_point_at(p, first + k * stride));
        }
    }
    return Status::success();
}

// Applies the per-element formula with the scratch parameter vectors.
void apply_vector(const Plan& p, const Scratch& sc, size_t n, float* out) {
    if (p.family == Family::kTable) {
        table_vector(p, sc.codes.data(), n, sc.scales.data(), out);
    } else {
        affine_vector(p.diff, sc.codes.data(), n, sc.scales.data(), sc.zero_points.data(), out);
    }
}

// One block of `2 * half` 4-bit codes: s * float(q - z).
// Signed codes: sext4(c) - z = (c ^ 8) - (z + 8), so flipping bit 3 of both
// nibbles turns them into offsets that need no sign extension.
template <bool kSigned>
[[gnu::always_inline]] inline void affine_nibble_run(const uint8_t* __restrict in, size_t half, float s, int32_t z,
                                                     float* __restrict o) {
    const uint32_t flip = kSigned ? 0x88U : 0x00U;
    const int32_t zz = kSigned ? z + 8 : z;  // z >= -8 for int4: no overflow
    for (size_t j = 0; j < half; ++j) {
        const uint32_t byte = in[j] ^ flip;
        o[2 * j] = s * static_cast<float>(static_cast<int32_t>(byte & 0xFU) - zz);
        o[2 * j + 1] = s * static_cast<float>(static_cast<int32_t>(byte >> 4) - zz);
    }
}

// Per-block affine over 4-bit codes, fused: blocks of `k` elements starting
// at byte `src`, block b with scale sv[b] and zero point zv[b].
template <bool kSigned>
void affine_nibbles(const uint8_t* __restrict src, size_t m, uint64_t k, const float* __restrict sv,
                    const int32_t* __restrict zv, float* __restrict out) {
    for (size_t b0 = 0, b = 0; b0 < m; b0 += k, ++b) {
        const auto len = static_cast<size_t>(std::min<uint64_t>(k, m - b0));
        const float s = sv[b];
        const int32_t z = zv[b];
        const uint8_t* __restrict in = src + b0 / 2;
        float* __restrict o = out + b0;
        affine_nibble_run<kSigned>(in, len / 2, s, z, o);
        if ((len & 1U) != 0) {
            const uint32_t c = in[len / 2] & 0xFU;
            o[len - 1] = s * static_cast<float>((kSigned ? sext4(c) : static_cast<int32_t>(c)) - z);
        }
    }
}

// Table schemes over 4-bit codes (NF4, MXFP float4/int4), fused: each byte
// holds two codes, whose two table values `pairs` lists by byte value; both
// are multiplied by the block's scale (the same float32 products s * table[q]).
void table_nibbles(const Plan& p, const uint8_t* __restrict src, size_t m, uint64_t k, const float* __restrict sv,
                   float* __restrict out) {
    const float* __restrict pairs = p.pairs.data();
    for (size_t b0 = 0, b = 0; b0 < m; b0 += k, ++b) {
        const auto len = static_cast<size_t>(std::min<uint64_t>(k, m - b0));
        const float s = sv[b];
        const uint8_t* __restrict in = src + b0 / 2;
        float* __restrict o = out + b0;
        for (size_t j = 0; j < len / 2; ++j) {
            const float* __restrict pr = pairs + 2 * static_cast<size_t>(in[j]);
            o[2 * j] = s * pr[0];
            o[2 * j + 1] = s * pr[1];
        }
        if ((len & 1U) != 0) {
            o[len - 1] = s * p.table[in[len / 2] & 0xFU];
        }
    }
}

// Dequantizes `m` storage elements from `start` that form consecutive blocks
// of `k` (the first starting a block; the last possibly partial), with
// their parameters in the scratch vectors.
// SAFETY: the caller checked that the elements lie inside `data`.
void run_blocks(const Plan& p, std::span<const uint8_t> data, uint64_t start, size_t m, uint64_t k, Scratch& sc,
                float* out) {
    const bool nibbles = p.code == CodeKind::kS4 || p.code == CodeKind::kU4;
    if (nibbles && start % 2 == 0 && k % 2 == 0) {
        const uint8_t* src = data.data() + start / 2;
        if (p.family == Family::kTable) {
            table_nibbles(p, src, m, k, sc.scales.data(), out);
        } else if (p.code == CodeKind::kS4) {
            affine_nibbles<true>(src, m, k, sc.scales.data(), sc.zero_points.data(), out);
        } else {
            affine_nibbles<false>(src, m, k, sc.scales.data(), sc.zero_points.data(), out);
        }
        return;
    }
    unpack(p.code, data, start, m, sc.codes.data());
    const int32_t* codes = sc.codes.data();
    for (size_t b0 = 0, b = 0; b0 < m; b0 += k, ++b) {
        const auto len = static_cast<size_t>(std::min<uint64_t>(k, m - b0));
        if (p.family == Family::kTable) {
            table_scalar(p, codes + b0, len, sc.scales[b], out + b0);
        } else {
            affine_scalar(p.diff, codes + b0, len, sc.scales[b], sc.zero_points[b], out + b0);
        }
    }
}

// Dequantizes row-major storage `data` (element 0 at byte 0) laid out as
// [g.outer, g.ext, g.inner] into `out`, row-major [g.outer, g.len, g.inner].
// SAFETY: the caller checked that `data` holds outer * ext * inner elements;
// every index below is smaller than that product, and `out` holds
// outer * len * inner floats.
Status run_row_major(const Plan& p, std::span<const uint8_t> data, const Geometry& g, std::span<float> out) {
    Scratch sc;
    int32_t* codes = sc.codes.data();
    float* o = out.data();
    if (p.granularity == Granularity::kTensor) {
        HURRAY_ASSIGN_OR_RETURN(float s, scale_at(p, 0));
        HURRAY_ASSIGN_OR_RETURN(int32_t z, zero_point_at(p, 0));
        const uint64_t n = out.size();
        for (uint64_t c0 = 0; c0 < n; c0 += kChunk) {
            const auto m = static_cast<size_t>(std::min<uint64_t>(kChunk, n - c0));
            unpack(p.code, data, c0, m, codes);
            affine_scalar(p.diff, codes, m, s, z, o + c0);
        }
        return Status::success();
    }
    if (g.inner == 1 && p.granularity == Granularity::kBlock) {
        // Blocks are contiguous runs. Chunks cover whole blocks, or lie
        // within one block when a block is longer than a chunk.
        const uint64_t k = p.block;
        const uint64_t step = k <= kChunk ? kChunk / k * k : kChunk;
        for (uint64_t o1 = 0; o1 < g.outer; ++o1) {
            for (uint64_t c0 = 0; c0 < g.len; c0 += step) {
                const auto m = static_cast<size_t>(std::min<uint64_t>(step, g.len - c0));
                const uint64_t blk = c0 / k;
                const uint64_t run = std::min<uint64_t>(k, step);
                HURRAY_RETURN_IF_ERROR(
                    load_params(p, o1 * g.blocks_per_axis + blk, 1, static_cast<size_t>(ceil_div(m, run)), sc));
                run_blocks(p, data, o1 * g.ext + c0, m, run, sc, o + o1 * g.len + c0);
            }
        }
        return Status::success();
    }
    if (g.inner == 1) {
        // Per-channel along the last axis: one parameter per element.
        for (uint64_t o1 = 0; o1 < g.outer; ++o1) {
            for (uint64_t c0 = 0; c0 < g.len; c0 += kChunk) {
                const auto m = static_cast<size_t>(std::min<uint64_t>(kChunk, g.len - c0));
                HURRAY_RETURN_IF_ERROR(load_params(p, c0, 1, m, sc));
                unpack(p.code, data, o1 * g.ext + c0, m, codes);
                apply_vector(p, sc, m, o + o1 * g.len + c0);
            }
        }
        return Status::success();
    }
    // The parameter axis is strided: runs go along the inner dimensions.
    for (uint64_t o1 = 0; o1 < g.outer; ++o1) {
        for (uint64_t i = 0; i < g.len; ++i) {
            const bool blocked = p.granularity == Granularity::kBlock;
            const uint64_t blk = blocked ? i / p.block : i;
            // Parameters are reloaded at each block start, and for every
            // chunk when the inner run spans several chunks.
            const bool reload = !blocked || i % p.block == 0 || g.inner > kChunk;
            for (uint64_t c0 = 0; c0 < g.inner; c0 += kChunk) {
                const auto m = static_cast<size_t>(std::min<uint64_t>(kChunk, g.inner - c0));
                unpack(p.code, data, (o1 * g.ext + i) * g.inner + c0, m, codes);
                float* dst = o + (o1 * g.len + i) * g.inner + c0;
                if (!blocked) {
                    HURRAY_RETURN_IF_ERROR(load_params(p, i, 0, 1, sc));
                    affine_scalar(p.diff, codes, m, sc.scales[0], sc.zero_points[0], dst);
                    continue;
                }
                // Parameters of (o1, inner c0 + j, blk): entry ((o1 * inner + c0 + j) * nb + blk).
                if (reload) {
                    HURRAY_RETURN_IF_ERROR(
                        load_params(p, (o1 * g.inner + c0) * g.blocks_per_axis + blk, g.blocks_per_axis, m, sc));
                }
                apply_vector(p, sc, m, dst);
            }
        }
    }
    return Status::success();
}

// --- Element-by-element paths --------------------------------------------------

// Advances a row-major multi-index; false after the last one.
bool next_index(std::vector<uint64_t>& idx, std::span<const uint64_t> shape) {
    for (size_t d = idx.size(); d-- > 0;) {
        if (++idx[d] < shape[d]) {
            return true;
        }
        idx[d] = 0;
    }
    return false;
}

// The parameter index of the element at logical `idx` (not for kSlot).
uint64_t param_index(const Plan& p, const Geometry& g, std::span<const uint64_t> idx,
                     std::span<const uint64_t> shape) {
    switch (p.granularity) {
        case Granularity::kTensor:
        case Granularity::kSlot: return 0;
        case Granularity::kChannel: return idx[p.axis];
        case Granularity::kBlock: break;
    }
    uint64_t outer = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
        if (d != p.axis) {
            outer = outer * shape[d] + idx[d];
        }
    }
    return outer * g.blocks_per_axis + idx[p.axis] / p.block;
}

// Column-major storage (axis padded as for row-major): element strides.
Status run_column_major(const Plan& p, std::span<const uint8_t> data, const Geometry& g,
                        std::span<const uint64_t> shape, std::span<float> out) {
    std::vector<uint64_t> stride(shape.size());
    uint64_t acc = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
        stride[d] = acc;
        // Cannot overflow: the padded element count was checked by the caller.
        acc *= (p.pad_axis && d == p.axis) ? g.ext : shape[d];
    }
    std::vector<uint64_t> idx(shape.size(), 0);
    size_t k = 0;
    do {
        uint64_t e = 0;
        for (size_t d = 0; d < idx.size(); ++d) {
            e += idx[d] * stride[d];
        }
        HURRAY_ASSIGN_OR_RETURN(int32_t code, code_at(p, data, e));
        HURRAY_ASSIGN_OR_RETURN(float v, element_value(p, code, param_index(p, g, idx, shape)));
        out[k++] = v;
    } while (next_index(idx, shape));
    return Status::success();
}

// Every element through TensorView::locate: sparse layouts (unstored
// elements are 0.0) and block-paged per-slot parameters.
Status run_located(const Plan& p, const TensorView& view, const Geometry& g, std::span<float> out) {
    const std::span<const uint64_t> shape = view.descriptor().shape;
    std::vector<uint64_t> idx(shape.size(), 0);
    const uint32_t bits = bit_width(p.storage);
    size_t k = 0;
    do {
        HURRAY_ASSIGN_OR_RETURN(ElementLocation loc, view.locate(idx));
        if (!loc.stored) {
            out[k++] = 0.0F;
            continue;
        }
        if (loc.buffer >= view.buffer_count() || loc.byte_base > view.buffer(loc.buffer).size()) {
            return Error(ErrorCode::kInvalidData, std::string(p.scheme) + ": element location (buffer " +
                                                      dec(loc.buffer) + ", byte " + dec(loc.byte_base) +
                                                      ") is outside the tensor's buffers");
        }
        const std::span<const uint8_t> bytes = view.buffer(loc.buffer).subspan(static_cast<size_t>(loc.byte_base));
        HURRAY_ASSIGN_OR_RETURN(int32_t code, code_at(p, bytes, loc.element));
        uint64_t param = 0;
        if (p.granularity == Granularity::kSlot) {
            // Flat element index in the page pool, then its page slot.
            const uint64_t base_bits = loc.byte_base * 8;
            if (loc.byte_base > UINT64_MAX / 8 || base_bits % bits != 0) {
                return Error(ErrorCode::kInvalidData, std::string(p.scheme) + ": page pool location byte " +
                                                          dec(loc.byte_base) + " is not on an element boundary");
            }
            param = (base_bits / bits + loc.element) / p.slot_elements;
        } else {
            param = param_index(p, g, idx, shape);
        }
        HURRAY_ASSIGN_OR_RETURN(float v, element_value(p, code, param));
        out[k++] = v;
    } while (next_index(idx, shape));
    return Status::success();
}

// --- Plan ------------------------------------------------------------------------

struct StorageInfo {
    CodeKind code = CodeKind::kS8;
    detail::CodeRange range{};
};

// Code kind and value range of an affine storage type; nullopt if not one.
std::optional<StorageInfo> affine_storage(ElementType t) {
    using E = ElementType;
    const auto range = detail::affine_code_range(t);
    if (!range) {
        return std::nullopt;
    }
    CodeKind k = CodeKind::kS8;
    switch (t) {
        case E::kUInt8: k = CodeKind::kU8; break;
        case E::kInt16: k = CodeKind::kS16; break;
        case E::kUInt16: k = CodeKind::kU16; break;
        case E::kInt32: k = CodeKind::kS32; break;
        case E::kUInt32: k = CodeKind::kU32; break;
        case E::kInt4: k = CodeKind::kS4; break;
        case E::kUInt4: k = CodeKind::kU4; break;
        case E::kInt2: k = CodeKind::kS2; break;
        case E::kUInt2: k = CodeKind::kU2; break;
        default: break;  // int8
    }
    return StorageInfo{k, *range};
}

Error bad_storage(const char* scheme, ElementType t) {
    const std::string_view name = type_name(t);
    return {ErrorCode::kInvalidQuantizationStorageType,
            std::string(scheme) + ": " + (name.empty() ? hex(type_tag(t)) : std::string(name)) +
                " is not a storage type of this scheme"};
}

// MXFP: the code kind and the value of every code of the element type.
Status mxfp_table(Plan& p) {
    using E = ElementType;
    switch (p.storage) {
        case E::kFloat8E4M3:
        case E::kFloat8E5M2:
            p.code = CodeKind::kU8;
            p.table_size = 256;
            for (uint32_t c = 0; c < 256; ++c) {
                const auto b = static_cast<uint8_t>(c);
                p.table[c] = p.storage == E::kFloat8E4M3 ? float8_e4m3_to_float(b) : float8_e5m2_to_float(b);
            }
            return Status::success();
        case E::kFloat4E2M1:
            p.code = CodeKind::kU4;
            p.table_size = 16;
            for (uint32_t c = 0; c < 16; ++c) {
                p.table[c] = float4_e2m1_to_float(static_cast<uint8_t>(c));
            }
            return Status::success();
        case E::kFloat6E2M3:
        case E::kFloat6E3M2:
            p.code = CodeKind::kU6;
            p.table_size = 64;
            for (uint32_t c = 0; c < 64; ++c) {
                const auto b = static_cast<uint8_t>(c);
                p.table[c] = p.storage == E::kFloat6E2M3 ? float6_e2m3_to_float(b) : float6_e3m2_to_float(b);
            }
            return Status::success();
        case E::kInt8:
            p.code = CodeKind::kU8;
            p.table_size = 256;
            for (uint32_t c = 0; c < 256; ++c) {
                p.table[c] = static_cast<float>(static_cast<int8_t>(c));
            }
            return Status::success();
        case E::kInt4:
            p.code = CodeKind::kU4;
            p.table_size = 16;
            for (uint32_t c = 0; c < 16; ++c) {
                p.table[c] = static_cast<float>(sext4(c));
            }
            return Status::success();
        default: break;
    }
    return bad_storage("mxfp", p.storage);
}

// Fields shared by the blocked and per-channel schemes.
struct ParamFields {
    uint32_t axis = 0;
    uint32_t block = 0;  // 0: per-channel
    uint32_t scale_index = 0;
    std::optional<uint32_t> zero_point_index{};
};

// Checks the axis and block size the dequantizer relies on.
Status check_axis_block(const Plan& p, const TensorDescriptor& d, const ParamFields& f) {
    if (f.axis >= d.rank()) {
        return Error(ErrorCode::kInvalidQuantization,
                     std::string(p.scheme) + ".axis: " + dec(f.axis) + " must be < rank " + dec(d.rank()));
    }
    if (f.block != 0 && !is_pow2(f.block)) {
        return Error(ErrorCode::kInvalidQuantization,
                     std::string(p.scheme) + ".block_size: " + dec(f.block) + " must be a power of two");
    }
    return Status::success();
}

// Number of parameter entries of a blocked or per-channel scheme.
Result<uint64_t> entry_count(const Plan& p, const TensorDescriptor& d, const Geometry& g) {
    if (p.granularity == Granularity::kChannel) {
        return g.len;
    }
    if (const auto* b = std::get_if<BlockPagedLayout>(&d.layout)) {
        auto n = mul_u64(b->num_pages, b->page_size);
        if (!n) {
            return Error(ErrorCode::kSizeOverflow, std::string(p.scheme) + ": num_pages * page_size overflows");
        }
        return *n;
    }
    auto n = mul_u64(g.outer, g.inner);
    n = n ? mul_u64(*n, g.blocks_per_axis) : n;
    if (!n) {
        return Error(ErrorCode::kSizeOverflow, std::string(p.scheme) + ": block count overflows 64 bits");
    }
    return *n;
}

// Resolves the parameter buffers: indices, sizes, shared [scales | zero_points].
Status bind_buffers(Plan& p, const TensorView& view, const ParamFields& f, uint32_t scale_width) {
    const TensorDescriptor& d = view.descriptor();
    const uint32_t first_param = layout_buffer_count(d.layout, d.rank());
    auto check_index = [&](uint32_t index, const char* field) -> Status {
        if (index < first_param || index >= view.buffer_count()) {
            return Error(ErrorCode::kInvalidQuantizationBuffer,
                         std::string(p.scheme) + "." + field + ": " + dec(index) +
                             " is not a parameter buffer (indices " + dec(first_param) + " to " +
                             dec(view.buffer_count()) + " exclusive)");
        }
        return Status::success();
    };
    auto too_small = [&](uint32_t index, uint64_t need) {
        return Error(ErrorCode::kInvalidQuantizationBuffer,
                     std::string(p.scheme) + ": parameter buffer " + dec(index) + " holds " +
                         dec(view.buffer(index).size()) + " bytes, " + dec(p.entries) + " entries need " +
                         dec(need));
    };
    HURRAY_RETURN_IF_ERROR(check_index(f.scale_index, "scale_buffer_index"));
    p.scale_buffer = f.scale_index;
    const auto scale_bytes = mul_u64(p.entries, scale_width);
    const auto zp_bytes = mul_u64(p.entries, 4);
    if (!scale_bytes || !zp_bytes) {
        return Error(ErrorCode::kSizeOverflow, std::string(p.scheme) + ": parameter buffer size overflows");
    }
    const std::span<const uint8_t> sb = view.buffer(f.scale_index);
    if (sb.size() < *scale_bytes) {
        return too_small(f.scale_index, *scale_bytes);
    }
    p.scales = sb.first(static_cast<size_t>(*scale_bytes));
    if (!f.zero_point_index) {
        return Status::success();
    }
    const uint32_t zi = *f.zero_point_index;
    HURRAY_RETURN_IF_ERROR(check_index(zi, "zero_point_buffer_index"));
    p.zero_point_buffer = zi;
    p.has_zero_points = true;
    // Shared entry: the concatenation [scales | zero_points] (quantization.md § Buffer Table Placement Rules, rule 3).
    const uint64_t offset = zi == f.scale_index ? *scale_bytes : 0;
    const std::span<const uint8_t> zb = view.buffer(zi);
    const uint64_t need = offset + *zp_bytes;  // both < 2^64 / 2: no overflow
    if (*scale_bytes > UINT64_MAX / 2 || *zp_bytes > UINT64_MAX / 2 || zb.size() < need) {
        return too_small(zi, need);
    }
    p.zero_points = zb.subspan(static_cast<size_t>(offset), static_cast<size_t>(*zp_bytes));
    return Status::success();
}

Geometry geometry(const Plan& p, std::span<const uint64_t> shape, uint64_t count) {
    Geometry g;
    if (p.granularity == Granularity::kTensor) {
        g.len = g.ext = count;
        return g;
    }
    for (size_t d = 0; d < shape.size(); ++d) {
        if (d < p.axis) {
            g.outer *= shape[d];
        } else if (d > p.axis) {
            g.inner *= shape[d];
        }
    }
    g.len = shape[p.axis];
    const uint64_t k = p.granularity == Granularity::kBlock ? p.block : 1;
    g.blocks_per_axis = ceil_div(g.len, k);
    // len + k - 1 cannot overflow: count > 0 bounds len, k <= 2^31.
    g.ext = p.pad_axis ? g.blocks_per_axis * k : g.len;
    return g;
}

Result<Plan> make_plan(const TensorView& view, uint64_t count, Geometry& g) {
    const TensorDescriptor& d = view.descriptor();
    Plan p;
    p.storage = d.element_type;
    const QuantizationScheme& s = d.quantization->scheme;
    const bool dense_rc = std::holds_alternative<RowMajorLayout>(d.layout) ||
                          std::holds_alternative<ColumnMajorLayout>(d.layout);
    const bool paged = std::holds_alternative<BlockPagedLayout>(d.layout);
    ParamFields f;
    uint32_t scale_width = 4;
    if (const auto* q = std::get_if<PerTensorAffine>(&s)) {
        p.scheme = "per_tensor_affine";
        const auto info = affine_storage(p.storage);
        if (!info) {
            return bad_storage(p.scheme, p.storage);
        }
        p.code = info->code;
        p.code_min = info->range.min;
        p.code_max = info->range.max;
        if (!std::isfinite(q->scale) || q->scale == 0.0F) {
            return Error(ErrorCode::kInvalidQuantization, "per_tensor_affine.scale: must be finite and non-zero");
        }
        if (q->zero_point < p.code_min || q->zero_point > p.code_max) {
            return Error(ErrorCode::kInvalidQuantization, "per_tensor_affine.zero_point: " +
                                                              std::to_string(q->zero_point) +
                                                              " is outside the range of the storage type");
        }
        p.tensor_scale = q->scale;
        p.tensor_zero_point = q->zero_point;
    } else if (const auto* q = std::get_if<PerChannelAffine>(&s)) {
        p.scheme = "per_channel_affine";
        p.granularity = Granularity::kChannel;
        f = {q->axis, 0, q->scale_buffer_index, q->zero_point_buffer_index};
        if (q->scale_type != ElementType::kFloat32) {
            return Error(ErrorCode::kInvalidQuantization, "per_channel_affine.scale_type_tag: must be float32");
        }
    } else if (const auto* q = std::get_if<PerBlockAffine>(&s)) {
        p.scheme = "per_block_affine";
        p.granularity = paged ? Granularity::kSlot : Granularity::kBlock;
        f = {q->axis, q->block_size, q->scale_buffer_index, q->zero_point_buffer_index};
        p.scale_type = q->scale_type;
        if (q->scale_type != ElementType::kFloat16 && q->scale_type != ElementType::kBFloat16 &&
            q->scale_type != ElementType::kFloat32) {
            return Error(ErrorCode::kInvalidQuantization,
                         "per_block_affine.scale_type_tag: must be float16, bfloat16 or float32");
        }
        scale_width = bit_width(q->scale_type) / 8;
        p.pad_axis = dense_rc;
    } else if (const auto* q = std::get_if<Nf4Quantization>(&s)) {
        p.scheme = "nf4";
        p.family = Family::kTable;
        p.granularity = Granularity::kBlock;
        f = {q->axis, q->block_size, q->scale_buffer_index, std::nullopt};
        if (p.storage != ElementType::kUInt4) {
            return bad_storage(p.scheme, p.storage);
        }
        p.code = CodeKind::kU4;
        p.table_size = 16;
        std::copy(std::begin(kNf4Levels), std::end(kNf4Levels), p.table.begin());
        p.pad_axis = dense_rc;
    } else if (const auto* q = std::get_if<MxfpQuantization>(&s)) {
        p.scheme = "mxfp";
        p.family = Family::kTable;
        p.granularity = Granularity::kBlock;
        f = {q->axis, q->block_size, q->scale_buffer_index, std::nullopt};
        p.scale_type = ElementType::kFloat8E8M0;
        scale_width = 1;
        HURRAY_RETURN_IF_ERROR(mxfp_table(p));
    } else {
        return Error(ErrorCode::kUnsupported, "dequantize: quantization scheme " +
                                                  hex(scheme_tag(s)) + " is not interpreted by this library");
    }
    if (p.family == Family::kAffine && p.granularity != Granularity::kTensor) {
        const auto info = affine_storage(p.storage);
        if (!info || (p.granularity != Granularity::kChannel && !detail::per_block_storage(p.storage))) {
            return bad_storage(p.scheme, p.storage);
        }
        p.code = info->code;
        p.code_min = info->range.min;
        p.code_max = info->range.max;
    }
    if (p.code == CodeKind::kS32) {
        p.diff = DiffMode::kSigned32;
    } else if (p.code == CodeKind::kU32) {
        p.diff = DiffMode::kUnsigned32;
    }
    if (paged && p.family == Family::kTable) {
        return Error(ErrorCode::kUnsupported,
                     std::string(p.scheme) + ": the spec defines no block-paged composition for this scheme");
    }
    if (p.granularity != Granularity::kTensor) {
        HURRAY_RETURN_IF_ERROR(check_axis_block(p, d, f));
        p.axis = f.axis;
        p.block = f.block == 0 ? 1 : f.block;
    }
    if (p.table_size == 16) {
        for (size_t byte = 0; byte < 256; ++byte) {
            p.pairs[2 * byte] = p.table[byte & 0xFU];
            p.pairs[2 * byte + 1] = p.table[byte >> 4];
        }
    }
    g = geometry(p, d.shape, count);
    if (p.granularity == Granularity::kSlot) {
        // Rank 3 [tokens, heads, head_dim]; count > 0 so the product is non-zero.
        p.slot_elements = d.rank() == 3 ? d.shape[1] * d.shape[2] : 1;
    }
    if (p.granularity != Granularity::kTensor) {
        HURRAY_ASSIGN_OR_RETURN(p.entries, entry_count(p, d, g));
        HURRAY_RETURN_IF_ERROR(bind_buffers(p, view, f, scale_width));
    }
    return p;
}

// The data bytes of a row- or column-major tensor, checked to hold every
// (padded) storage element.
Result<std::span<const uint8_t>> dense_data(const Plan& p, const TensorView& view, const Geometry& g) {
    const TensorDescriptor& d = view.descriptor();
    auto padded = mul_u64(g.outer, g.ext);
    padded = padded ? mul_u64(*padded, g.inner) : padded;
    if (!padded) {
        return Error(ErrorCode::kSizeOverflow, std::string(p.scheme) + ": padded element count overflows");
    }
    HURRAY_ASSIGN_OR_RETURN(uint64_t bytes, storage_bytes(p.storage, *padded));
    const std::span<const uint8_t> buf = view.buffer(0);
    if (d.byte_offset > buf.size() || buf.size() - d.byte_offset < bytes) {
        return Error(ErrorCode::kBufferTooSmall, std::string(p.scheme) + ": buffer 0 holds " + dec(buf.size()) +
                                                     " bytes; byte_offset " + dec(d.byte_offset) + " + " +
                                                     dec(bytes) + " bytes of storage are needed");
    }
    return buf.subspan(static_cast<size_t>(d.byte_offset), static_cast<size_t>(bytes));
}

// A tensor of libhurray's GGML blocks scheme (hurray/core/ggml_blocks.hpp): row-major
// blocks in buffer 0 from byte_offset, decoded by ggml's formulas.
Status dequantize_ggml_blocks(const TensorView& view, uint32_t type, std::span<float> out) {
    const TensorDescriptor& d = view.descriptor();
    if (!std::holds_alternative<RowMajorLayout>(d.layout)) {
        return Error(ErrorCode::kUnsupported, "dequantize: GGML blocks are defined for the row-major layout only");
    }
    const auto info = ggml_type_info(type);  // ggml_blocks_type() checked the type
    if (!info || !detail::ggml_whole_blocks(*info, d.shape)) {
        return Error(ErrorCode::kInvalidData,
                     "dequantize: " + dec(out.size()) + " elements are not whole GGML blocks");
    }
    const std::span<const uint8_t> buf = view.buffer(0);
    const uint64_t need = detail::ggml_blocks_bytes(*info, out.size()).value_or(UINT64_MAX);  // fits: out holds them
    if (d.byte_offset > buf.size() || buf.size() - d.byte_offset < need) {
        return Error(ErrorCode::kBufferTooSmall, "ggml blocks: buffer 0 holds " + dec(buf.size()) +
                                                     " bytes; byte_offset " + dec(d.byte_offset) + " + " + dec(need) +
                                                     " bytes of blocks are needed");
    }
    return dequantize_ggml(type, buf.subspan(static_cast<size_t>(d.byte_offset), static_cast<size_t>(need)), out);
}

}  // namespace

Status dequantize(const TensorView& view, std::span<float> out) {
    const TensorDescriptor& d = view.descriptor();
    if (!d.quantization) {
        return Error(ErrorCode::kInvalidArgument, "dequantize: the tensor has no quantization section");
    }
    HURRAY_ASSIGN_OR_RETURN(uint64_t count, element_count(d.shape));
    if (out.size() != count) {
        return Error(ErrorCode::kInvalidArgument, "dequantize: out holds " + dec(out.size()) +
                                                      " floats, the tensor has " + dec(count) + " elements");
    }
    if (const auto ggml = ggml_blocks_type(d)) {
        return dequantize_ggml_blocks(view, *ggml, out);
    }
    Geometry g;
    HURRAY_ASSIGN_OR_RETURN(Plan p, make_plan(view, count, g));
    if (count == 0) {
        return Status::success();
    }
    if (std::holds_alternative<RowMajorLayout>(d.layout)) {
        HURRAY_ASSIGN_OR_RETURN(std::span<const uint8_t> data, dense_data(p, view, g));
        return run_row_major(p, data, g, out);
    }
    if (std::holds_alternative<ColumnMajorLayout>(d.layout)) {
        HURRAY_ASSIGN_OR_RETURN(std::span<const uint8_t> data, dense_data(p, view, g));
        return run_column_major(p, data, g, d.shape, out);
    }
    const LayoutKind kind = layout_kind(d.layout);
    if (kind == LayoutKind::kSparse || p.granularity == Granularity::kSlot) {
        return run_located(p, view, g, out);
    }
    if (kind == LayoutKind::kDense || kind == LayoutKind::kIndirect) {
        // Row-major, unpadded storage of every element.
        HURRAY_ASSIGN_OR_RETURN(std::vector<uint8_t> storage, view.materialize());
        HURRAY_ASSIGN_OR_RETURN(uint64_t need, storage_bytes(p.storage, count));
        if (storage.size() < need) {
            return Error(ErrorCode::kInvalidData, std::string(p.scheme) + ": materialized storage holds " +
                                                      dec(storage.size()) + " bytes, " + dec(need) +
                                                      " expected");
        }
        return run_row_major(p, storage, g, out);
    }
    return Error(ErrorCode::kUnsupported, "dequantize: layout " + std::string(layout_name(d.layout_tag())) +
                                              " cannot be dequantized");
}

Result<std::vector<float>> dequantize(const TensorView& view) {
    HURRAY_ASSIGN_OR_RETURN(uint64_t count, element_count(view.descriptor().shape));
    HURRAY_ASSIGN_OR_RETURN(std::vector<float> out, detail::float_vector(count, "dequantize"));
    HURRAY_RETURN_IF_ERROR(dequantize(view, out));
    return out;
}

Result<std::vector<float>> to_float32(const TensorView& view) {
    const TensorDescriptor& d = view.descriptor();
    if (d.quantization) {
        return dequantize(view);
    }
    HURRAY_ASSIGN_OR_RETURN(uint64_t count, element_count(d.shape));
    HURRAY_ASSIGN_OR_RETURN(std::vector<float> out, detail::float_vector(count, "to_float32"));
    if (d.element_type == ElementType::kFloat32) {
        // SAFETY: a float vector's storage viewed as bytes, exactly its size;
        // materialize writes float32 storage bytes (little-endian, as x86/ARM).
        const std::span<uint8_t> bytes(reinterpret_cast<uint8_t*>(out.data()), out.size() * sizeof(float));
        HURRAY_RETURN_IF_ERROR(view.materialize(bytes));
        return out;
    }
    HURRAY_ASSIGN_OR_RETURN(std::vector<uint8_t> storage, view.materialize());
    HURRAY_RETURN_IF_ERROR(convert_to_float32(d.element_type, storage, out));
    return out;
}

}  // namespace hurray
