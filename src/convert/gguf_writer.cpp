// SPDX-License-Identifier: Apache-2.0
// write_gguf(): any TensorSource as a GGUF v3 file (docs/convert.md § GGUF).
//
// The header (KV and tensor infos) is built in memory; the tensor data goes through an
// AtomicFileSink chunk by chunk (options.chunk_bytes), each tensor at an offset aligned
// to general.alignment.
#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "convert/ggml_blocks.hpp"
#include "convert/gguf_cursor.hpp"
#include "convert/gguf_format.hpp"
#include "hurray/core/checked_math.hpp"
#include "hurray/convert/gguf.hpp"
#include "hurray/core/dequantize.hpp"
#include "hurray/core/element_convert.hpp"
#include "hurray/core/tensor_view.hpp"
#include "hurray/io/byte_sink.hpp"

namespace hurray::convert {

namespace {

using detail::GgmlPresentation;
using detail::GgufKvType;
using detail::GgufType;

/// Little-endian appends.
class Out {
public:
    template <typename T>
    void le(T v) {
        const auto u = static_cast<uint64_t>(v);
        for (size_t i = 0; i < sizeof(T); ++i) {
            bytes.push_back(static_cast<uint8_t>(u >> (8 * i)));
        }
    }
    void str(std::string_view s) {
        le<uint64_t>(s.size());
        bytes.insert(bytes.end(), s.begin(), s.end());
    }
    void raw(std::span<const uint8_t> b) { bytes.insert(bytes.end(), b.begin(), b.end()); }
    std::vector<uint8_t> bytes;
};

Error kv_error(std::string_view key, const std::string& msg) {
    return {ErrorCode::kInvalidArgument, "gguf write: kv '" + std::string(key) + "': " + msg};
}

/// The range of an integer GGUF type.
struct IntRange {
    bool is_int = false;
    bool is_signed = false;
    int64_t min = 0;
    uint64_t max = 0;
};

IntRange int_range(GgufType t) noexcept {
    switch (t) {
        case GgufType::kUint8:
            return {true, false, 0, UINT8_MAX};
        case GgufType::kInt8:
            return {true, true, INT8_MIN, INT8_MAX};
        case GgufType::kUint16:
            return {true, false, 0, UINT16_MAX};
        case GgufType::kInt16:
            return {true, true, INT16_MIN, INT16_MAX};
        case GgufType::kUint32:
            return {true, false, 0, UINT32_MAX};
        case GgufType::kInt32:
            return {true, true, INT32_MIN, INT32_MAX};
        case GgufType::kUint64:
            return {true, false, 0, UINT64_MAX};
        case GgufType::kInt64:
            return {true, true, INT64_MIN, INT64_MAX};
        default:
            break;
    }
    return {};
}

/// Appends the integer `v` (from an int64 when `negative_ok`, else a uint64) as type `t`.
Status put_int(Out& out, GgufType t, bool from_signed, int64_t s, uint64_t u,
               std::string_view key) {
    const IntRange r = int_range(t);
    const bool fits =
        from_signed ? (s >= r.min && (s < 0 || static_cast<uint64_t>(s) <= r.max)) : u <= r.max;
    if (!fits) {
        return kv_error(key, (from_signed ? std::to_string(s) : std::to_string(u)) +
                                 " does not fit a " +
                                 std::string(gguf_kv_type_name(static_cast<uint32_t>(t))));
    }
    const uint64_t bits = from_signed ? static_cast<uint64_t>(s) : u;
    switch (t) {
        case GgufType::kUint8:
        case GgufType::kInt8:
            out.le<uint8_t>(static_cast<uint8_t>(bits));
            break;
        case GgufType::kUint16:
        case GgufType::kInt16:
            out.le<uint16_t>(static_cast<uint16_t>(bits));
            break;
        case GgufType::kUint32:
        case GgufType::kInt32:
            out.le<uint32_t>(static_cast<uint32_t>(bits));
            break;
        default:
            out.le<uint64_t>(bits);
            break;
    }
    return Status::success();
}

Status put_float(Out& out, GgufType t, double v, std::string_view key) {
    if (t == GgufType::kFloat64) {
        out.le<uint64_t>(std::bit_cast<uint64_t>(v));
        return Status::success();
    }
    const auto f = detail::narrow_float64_exact(v);
    if (!f) {
        return kv_error(key, std::to_string(v) + " is not exactly a float32");
    }
    out.le<uint32_t>(*f);
    return Status::success();
}

/// One scalar of type `t` from a scalar KvValue.
Status put_scalar(Out& out, GgufType t, const KvValue& v, std::string_view key) {
    const std::string tn(gguf_kv_type_name(static_cast<uint32_t>(t)));
    if (int_range(t).is_int) {
        if (const auto* s = v.as_int64()) {
            return put_int(out, t, true, *s, 0, key);
        }
        if (const auto* u = v.as_uint64()) {
            return put_int(out, t, false, 0, *u, key);
        }
        return kv_error(key, "a " + tn + " needs an integer value");
    }
    switch (t) {
        case GgufType::kFloat32:
        case GgufType::kFloat64:
            if (const auto* d = v.as_float64()) {
                return put_float(out, t, *d, key);
            }
            return kv_error(key, "a " + tn + " needs a float64 value");
        case GgufType::kBool:
            if (const auto* b = v.as_bool()) {
                out.le<uint8_t>(*b ? 1 : 0);
                return Status::success();
            }
            return kv_error(key, "a bool needs a bool value");
        case GgufType::kString:
            if (const auto* s = v.as_string()) {
                out.str(*s);
                return Status::success();
            }
            if (const auto* b = v.as_bytes()) {
                out.le<uint64_t>(b->size());
                out.raw(*b);
                return Status::success();
            }
            return kv_error(key, "a string needs a string or bytes value");
        default:
            break;
    }
    return kv_error(key, "type " + tn + " is not a scalar");
}

Status put_array(Out& out, GgufType e, const KvValue& v, std::string_view key) {
    if (e == GgufType::kArray) {
        // The GGUF bytes of an array of arrays, kept raw by the reader: element type 9 first.
        const auto* b = v.as_bytes();
        if (b == nullptr || b->size() < 4 || (*b)[0] != 9 || (*b)[1] != 0 || (*b)[2] != 0 ||
            (*b)[3] != 0) {
            return kv_error(key, "an array of arrays needs the bytes open_gguf() kept for it");
        }
        ByteReader c = detail::gguf_cursor(*b);
        if (auto st = detail::skip_nested_array(c, "value"); !st || c.remaining() != 0) {
            return kv_error(key, "the bytes of an array of arrays are not one GGUF array (" +
                                     (st ? std::string("bytes left over") : st.error().message()) +
                                     ")");
        }
        out.raw(*b);
        return Status::success();
    }
    if (e == GgufType::kUint8 && v.as_bytes() != nullptr) {
        out.le<uint32_t>(static_cast<uint32_t>(e));
        out.le<uint64_t>(v.as_bytes()->size());
        out.raw(*v.as_bytes());
        return Status::success();
    }
    const KvArray* a = v.as_array();
    if (a == nullptr) {
        return kv_error(key, "an array type needs an array value");
    }
    out.le<uint32_t>(static_cast<uint32_t>(e));
    out.le<uint64_t>(a->size());
    const std::string en(gguf_kv_type_name(static_cast<uint32_t>(e)));
    auto mismatch = [&] { return kv_error(key, "the array's elements are not " + en + " values"); };
    if (int_range(e).is_int) {
        if (const auto* s = std::get_if<std::vector<int64_t>>(&a->values)) {
            for (int64_t x : *s) {
                HURRAY_RETURN_IF_ERROR(put_int(out, e, true, x, 0, key));
            }
            return Status::success();
        }
        if (const auto* u = std::get_if<std::vector<uint64_t>>(&a->values)) {
            for (uint64_t x : *u) {
                HURRAY_RETURN_IF_ERROR(put_int(out, e, false, 0, x, key));
            }
            return Status::success();
        }
        return mismatch();
    }
    switch (e) {
        case GgufType::kFloat32:
        case GgufType::kFloat64: {
            const auto* d = std::get_if<std::vector<double>>(&a->values);
            if (d == nullptr) {
                return mismatch();
            }
            for (double x : *d) {
                HURRAY_RETURN_IF_ERROR(put_float(out, e, x, key));
            }
            return Status::success();
        }
        case GgufType::kBool: {
            const auto* b = std::get_if<std::vector<bool>>(&a->values);
            if (b == nullptr) {
                return mismatch();
            }
            for (bool x : *b) {
                out.le<uint8_t>(x ? 1 : 0);
            }
            return Status::success();
        }
        case GgufType::kString: {
            if (const auto* s = std::get_if<std::vector<std::string>>(&a->values)) {
                for (const auto& x : *s) {
                    out.str(x);
                }
                return Status::success();
            }
            if (const auto* r = std::get_if<std::vector<std::vector<uint8_t>>>(&a->values)) {
                for (const auto& x : *r) {
                    out.le<uint64_t>(x.size());
                    out.raw(x);
                }
                return Status::success();
            }
            return mismatch();
        }
        default:
            break;
    }
    return mismatch();
}

/// The GGUF type a value gets when none is recorded.
Result<GgufKvType> default_type(const KvValue& v, std::string_view key) {
    if (v.as_string() != nullptr) {
        return GgufKvType{GgufType::kString, GgufType::kUint8};
    }
    if (v.as_int64() != nullptr) {
        return GgufKvType{GgufType::kInt64, GgufType::kUint8};
    }
    if (v.as_uint64() != nullptr) {
        return GgufKvType{GgufType::kUint64, GgufType::kUint8};
    }
    if (v.as_float64() != nullptr) {
        return GgufKvType{GgufType::kFloat64, GgufType::kUint8};
    }
    if (v.as_bool() != nullptr) {
        return GgufKvType{GgufType::kBool, GgufType::kUint8};
    }
    if (v.as_bytes() != nullptr) {
        return GgufKvType{GgufType::kArray, GgufType::kUint8};
    }
    if (const KvArray* a = v.as_array()) {
        switch (a->element_type()) {
            case KvType::kString:
                return GgufKvType{GgufType::kArray, GgufType::kString};
            case KvType::kInt64:
                return GgufKvType{GgufType::kArray, GgufType::kInt64};
            case KvType::kUint64:
                return GgufKvType{GgufType::kArray, GgufType::kUint64};
            case KvType::kFloat64:
                return GgufKvType{GgufType::kArray, GgufType::kFloat64};
            case KvType::kBool:
                return GgufKvType{GgufType::kArray, GgufType::kBool};
            default:
                break;
        }
        return kv_error(key, "an array of bytes has no GGUF type");
    }
    return kv_error(key, "a private value has no GGUF type");
}

/// The recorded types (kGgufKvTypesKey), by key.
Result<std::unordered_map<std::string, GgufKvType>> recorded_types(const KvMetadata& kv) {
    std::unordered_map<std::string, GgufKvType> types;
    const KvValue* v = kv.find(kGgufKvTypesKey);
    if (v == nullptr) {
        return types;
    }
    const KvArray* a = v->as_array();
    const auto* names = a != nullptr ? std::get_if<std::vector<std::string>>(&a->values) : nullptr;
    if (names == nullptr) {
        return kv_error(kGgufKvTypesKey, "must be an array of strings \"<gguf type>:<key>\"");
    }
    for (const std::string& entry : *names) {
        const size_t colon = entry.find(':');
        const auto t = colon == std::string::npos
                           ? std::nullopt
                           : detail::parse_gguf_kv_type(std::string_view(entry).substr(0, colon));
        if (!t) {
            return kv_error(kGgufKvTypesKey,
                            "entry \"" + entry + R"(" is not "<gguf type>:<key>")");
        }
        types[entry.substr(colon + 1)] = *t;
    }
    return types;
}

/// How one tensor is written.
struct Plan {
    enum class Kind : uint8_t { kCopy, kInterleave, kDequantize };
    Kind kind = Kind::kCopy;
    GgmlPresentation presentation = GgmlPresentation::kDense;
    uint32_t type = 0;
    std::vector<uint64_t> ne;
    uint64_t size = 0;           ///< Bytes in the GGUF file.
    uint64_t source_offset = 0;  ///< Byte offset of the data in buffer 0 (kCopy).
    uint64_t offset = 0;         ///< Offset in the data section.
};

Result<Plan> plan_tensor(const SourceTensor& t, const ConvertOptions& options) {
    const TensorDescriptor& d = t.descriptor;
    auto fail = [&t](ErrorCode code, const std::string& msg) {
        return Error(code, "gguf write: tensor '" + t.name + "': " + msg);
    };
    if (d.rank() > detail::kGgufMaxDims) {
        return fail(ErrorCode::kUnsupported,
                    "rank " + std::to_string(d.rank()) + " exceeds GGUF's 4 dimensions");
    }
    Plan p;
    p.ne.assign(d.shape.rbegin(), d.shape.rend());
    // A scalar keeps n_dims = 0 (ggml reads it as one element), so that it reads back as a scalar.
    HURRAY_ASSIGN_OR_RETURN(uint64_t count, element_count(d.shape));
    const bool row_major = std::holds_alternative<RowMajorLayout>(d.layout);
    const bool has_buffer = !d.buffers.empty();
    if (const auto type = ggml_blocks_type(d); type && row_major && has_buffer) {
        const auto info = ggml_type_info(*type);
        if (d.shape.empty() || d.shape.back() % info->elements != 0) {
            return fail(ErrorCode::kInvalidArgument,
                        "the last dimension is not a multiple of the " + std::string(info->name) +
                            " block size");
        }
        p.type = *type;
        p.presentation = GgmlPresentation::kBlocks;
        p.size = count / info->elements * info->bytes;
    } else if (!d.quantization && row_major && has_buffer &&
               detail::ggml_type_of_element(d.element_type)) {
        p.type = *detail::ggml_type_of_element(d.element_type);
        p.presentation = GgmlPresentation::kDense;
        HURRAY_ASSIGN_OR_RETURN(p.size, storage_bytes(d.element_type, count));
        p.source_offset = d.byte_offset;
    } else if (const auto* pb =
                   d.quantization ? std::get_if<PerBlockAffine>(&d.quantization->scheme) : nullptr;
               pb != nullptr && row_major && d.rank() > 0 && pb->axis == d.rank() - 1 &&
               pb->block_size == 32 && !pb->zero_point_buffer_index &&
               pb->scale_type == ElementType::kFloat16 && d.byte_offset == 0 &&
               d.shape.back() % 32 == 0 &&
               (d.element_type == ElementType::kInt8 || d.element_type == ElementType::kInt4)) {
        const bool q8 = d.element_type == ElementType::kInt8;
        p.type = static_cast<uint32_t>(q8 ? GgmlType::kQ8_0 : GgmlType::kQ4_0);
        p.presentation = q8 ? GgmlPresentation::kQ8_0 : GgmlPresentation::kQ4_0;
        p.kind = Plan::Kind::kInterleave;
        p.size = count / 32 * (q8 ? 34 : 18);
    } else if (options.dequantize && (d.quantization || !row_major)) {
        p.kind = Plan::Kind::kDequantize;
        switch (options.dequantize_type) {
            case ElementType::kFloat32:
                p.type = static_cast<uint32_t>(GgmlType::kF32);
                break;
            case ElementType::kFloat16:
                p.type = static_cast<uint32_t>(GgmlType::kF16);
                break;
            case ElementType::kBFloat16:
                p.type = static_cast<uint32_t>(GgmlType::kBF16);
                break;
            default:
                return fail(ErrorCode::kInvalidArgument,
                            "dequantize_type must be float32, float16 or bfloat16");
        }
        HURRAY_ASSIGN_OR_RETURN(p.size, storage_bytes(options.dequantize_type, count));
    } else {
        std::string what(type_name(d.element_type).empty()
                             ? std::string_view("a private element type")
                             : type_name(d.element_type));
        what.append(" ").append(layout_name(d.layout_tag()));
        if (d.quantization) {
            what.append(" with ")
                .append(scheme_name(scheme_tag(d.quantization->scheme)))
                .append(" quantization");
        }
        return fail(
            ErrorCode::kUnsupported,
            what +
                " has no GGUF type (GGUF holds dense f32/f16/bf16/f64/i8-i64, Q8_0 and Q4_0 as "
                "per-block affine int8/int4 with float16 scales, block 32 on the last axis, and "
                "GGML blocks); convert with dequantize");
    }
    if (p.kind == Plan::Kind::kCopy) {
        auto end = add_u64(p.source_offset, p.size);
        if (!end || *end > d.buffers[0].byte_size) {
            return fail(ErrorCode::kInvalidArgument,
                        "buffer 0 holds " + std::to_string(d.buffers[0].byte_size) +
                            " bytes, fewer than the " + std::to_string(p.size) +
                            " its shape needs");
        }
    }
    return p;
}

/// Writes `n` zero bytes.
Status pad(ByteSink& sink, uint64_t n) {
    static constexpr std::array<uint8_t, 64> kZeros{};
    while (n > 0) {
        const size_t k = static_cast<size_t>(std::min<uint64_t>(n, kZeros.size()));
        HURRAY_RETURN_IF_ERROR(sink.write(std::span<const uint8_t>(kZeros.data(), k)));
        n -= k;
    }
    return Status::success();
}

/// The dequantized values of tensor `i` as `type` bytes (the whole tensor in memory).
Result<std::vector<uint8_t>> dequantized_bytes(const TensorSource& src, size_t i,
                                               ElementType type) {
    const SourceTensor& t = src.tensor(i);
    std::vector<std::vector<uint8_t>> bufs;
    std::vector<std::span<const uint8_t>> spans;
    for (size_t b = 0; b < t.descriptor.buffers.size(); ++b) {
        bufs.emplace_back(t.descriptor.buffers[b].byte_size);
        HURRAY_RETURN_IF_ERROR(src.read(i, b, 0, bufs.back()));
    }
    spans.reserve(bufs.size());
    for (const auto& b : bufs) {
        spans.emplace_back(b);
    }
    HURRAY_ASSIGN_OR_RETURN(TensorView view, TensorView::make(t.descriptor, spans));
    std::vector<float> values;
    if (const auto g = ggml_blocks_type(t.descriptor)) {
        HURRAY_ASSIGN_OR_RETURN(uint64_t count, element_count(t.descriptor.shape));
        HURRAY_ASSIGN_OR_RETURN(values, dequantize_ggml(*g, bufs[0], count));
    } else {
        HURRAY_ASSIGN_OR_RETURN(values, to_float32(view));
    }
    std::vector<uint8_t> out;
    if (type == ElementType::kFloat32) {
        out.resize(values.size() * 4);
        std::memcpy(out.data(), values.data(), out.size());
    } else {
        out.resize(values.size() * 2);
        for (size_t k = 0; k < values.size(); ++k) {
            const uint16_t h = type == ElementType::kFloat16 ? float_to_float16(values[k])
                                                             : float_to_bfloat16(values[k]);
            out[2 * k] = static_cast<uint8_t>(h);
            out[2 * k + 1] = static_cast<uint8_t>(h >> 8);
        }
    }
    return out;
}

Status write_tensor(ByteSink& sink, const TensorSource& src, size_t i, const Plan& p,
                    const ConvertOptions& options, std::vector<uint8_t>& chunk, uint64_t& done,
                    uint64_t total) {
    const uint64_t chunk_bytes = std::max<uint64_t>(options.chunk_bytes, 64);
    auto report = [&](uint64_t n) {
        done += n;
        return report_progress(options.progress, done, total);
    };
    if (p.kind == Plan::Kind::kDequantize) {
        HURRAY_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes,
                                dequantized_bytes(src, i, options.dequantize_type));
        HURRAY_RETURN_IF_ERROR(sink.write(bytes));
        return report(bytes.size());
    }
    if (p.kind == Plan::Kind::kCopy) {
        const auto view = src.view(i, 0);
        for (uint64_t off = 0; off < p.size;) {
            const auto n = static_cast<size_t>(std::min(chunk_bytes, p.size - off));
            if (view) {
                HURRAY_RETURN_IF_ERROR(sink.write(view->subspan(p.source_offset + off, n)));
            } else {
                chunk.resize(n);
                HURRAY_RETURN_IF_ERROR(src.read(i, 0, p.source_offset + off, chunk));
                HURRAY_RETURN_IF_ERROR(sink.write(chunk));
            }
            off += n;
            HURRAY_RETURN_IF_ERROR(report(n));
        }
        return Status::success();
    }
    const bool q8 = p.presentation == GgmlPresentation::kQ8_0;
    const uint64_t bb = q8 ? 34 : 18;
    const uint64_t qb = q8 ? 32 : 16;
    const uint64_t nblocks = p.size / bb;
    const uint64_t per_chunk = std::max<uint64_t>(1, chunk_bytes / bb);
    std::vector<uint8_t> quants;
    std::vector<uint8_t> scales;
    for (uint64_t b0 = 0; b0 < nblocks; b0 += per_chunk) {
        const uint64_t n = std::min(per_chunk, nblocks - b0);
        quants.resize(n * qb);
        scales.resize(n * 2);
        chunk.resize(n * bb);
        HURRAY_RETURN_IF_ERROR(src.read(i, 0, b0 * qb, quants));
        HURRAY_RETURN_IF_ERROR(src.read(i, 1, b0 * 2, scales));
        detail::ggml_interleave(p.presentation, quants, scales, chunk);
        HURRAY_RETURN_IF_ERROR(sink.write(chunk));
        HURRAY_RETURN_IF_ERROR(report(chunk.size()));
    }
    return Status::success();
}

Status write_gguf_impl(const TensorSource& source, const std::filesystem::path& path,
                       const ConvertOptions& options) {
    const KvMetadata& kv = source.kv();
    HURRAY_ASSIGN_OR_RETURN(auto types, recorded_types(kv));

    uint32_t alignment = detail::kGgufDefaultAlignment;
    if (const KvValue* a = kv.find(detail::kGgufAlignmentKey)) {
        const uint64_t v = a->as_uint64() != nullptr ? *a->as_uint64()
                           : (a->as_int64() != nullptr && *a->as_int64() > 0)
                               ? static_cast<uint64_t>(*a->as_int64())
                               : 0;
        if (!is_pow2(v) || v > UINT32_MAX) {
            return kv_error(detail::kGgufAlignmentKey, "must be a power of two that fits a uint32");
        }
        alignment = static_cast<uint32_t>(v);
        types[std::string(detail::kGgufAlignmentKey)] =
            GgufKvType{GgufType::kUint32, GgufType::kUint8};
    }

    Out head;
    head.le<uint32_t>(detail::kGgufMagic);
    head.le<uint32_t>(detail::kGgufVersion);
    head.le<uint64_t>(source.tensor_count());
    const uint64_t written_kv = kv.size() - (kv.contains(kGgufKvTypesKey) ? 1 : 0);
    head.le<uint64_t>(written_kv);
    for (const KvEntry& e : kv.entries()) {
        if (e.key == kGgufKvTypesKey) {
            continue;
        }
        GgufKvType t;
        if (auto it = types.find(e.key); it != types.end()) {
            t = it->second;
        } else {
            HURRAY_ASSIGN_OR_RETURN(t, default_type(e.value, e.key));
        }
        head.str(e.key);
        head.le<uint32_t>(static_cast<uint32_t>(t.type));
        if (t.type == GgufType::kArray) {
            HURRAY_RETURN_IF_ERROR(put_array(head, t.element, e.value, e.key));
        } else {
            HURRAY_RETURN_IF_ERROR(put_scalar(head, t.type, e.value, e.key));
        }
    }

    std::vector<Plan> plans;
    plans.reserve(source.tensor_count());
    uint64_t offset = 0;
    for (size_t i = 0; i < source.tensor_count(); ++i) {
        HURRAY_ASSIGN_OR_RETURN(Plan p, plan_tensor(source.tensor(i), options));
        p.offset = offset;
        auto end = add_u64(offset, p.size);
        if (!end || *end > UINT64_MAX - alignment) {
            return Error(ErrorCode::kSizeOverflow,
                         "gguf write: the data section overflows 64 bits");
        }
        offset = ceil_div(*end, alignment) * alignment;
        const SourceTensor& t = source.tensor(i);
        head.str(t.name);
        head.le<uint32_t>(static_cast<uint32_t>(p.ne.size()));
        for (uint64_t n : p.ne) {
            head.le<uint64_t>(n);
        }
        head.le<uint32_t>(p.type);
        head.le<uint64_t>(p.offset);
        plans.push_back(std::move(p));
    }
    const uint64_t total = plans.empty() ? 0 : plans.back().offset + plans.back().size;

    HURRAY_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFileSink> sink, AtomicFileSink::create(path));
    HURRAY_RETURN_IF_ERROR(sink->write(head.bytes));
    HURRAY_RETURN_IF_ERROR(
        pad(*sink, ceil_div(head.bytes.size(), alignment) * alignment - head.bytes.size()));
    uint64_t at = 0;
    uint64_t done = 0;
    std::vector<uint8_t> chunk;
    for (size_t i = 0; i < plans.size(); ++i) {
        HURRAY_RETURN_IF_ERROR(pad(*sink, plans[i].offset - at));
        HURRAY_RETURN_IF_ERROR(
            write_tensor(*sink, source, i, plans[i], options, chunk, done, total));
        at = plans[i].offset + plans[i].size;
    }
    // The last tensor is padded too, as ggml's writer pads it: ggml's reader
    // (gguf_init_from_file) reads the data section as the sum of the padded sizes.
    HURRAY_RETURN_IF_ERROR(pad(*sink, ceil_div(at, alignment) * alignment - at));
    return sink->commit();
}

}  // namespace

Status write_gguf(const TensorSource& source, const std::filesystem::path& path,
                  const ConvertOptions& options) {
    try {
        return write_gguf_impl(source, path, options);
    } catch (const std::bad_alloc&) {
        return Error(ErrorCode::kOutOfMemory, "gguf write: " + path.string() + ": out of memory");
    } catch (const std::exception& e) {
        return Error(ErrorCode::kIoError, "gguf write: " + path.string() + ": " + e.what());
    }
}

}  // namespace hurray::convert
