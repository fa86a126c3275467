// SPDX-License-Identifier: Apache-2.0
// open_gguf(): a GGUF v2 / v3 file as a TensorSource (docs/convert.md § GGUF).
//
// The file is mapped; every field is read through a bounds-checked cursor before it is
// used, and every count is bounded by the bytes left before anything is reserved.
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "convert/ggml_blocks.hpp"
#include "convert/gguf_cursor.hpp"
#include "convert/gguf_format.hpp"
#include "hurray/core/checked_math.hpp"
#include "hurray/convert/gguf.hpp"
#include "hurray/io/file_format.hpp"
#include "hurray/io/range_source.hpp"
#include "hurray/io/read_only_file.hpp"


namespace hurray::convert {

namespace {

using Cursor = ByteReader;
using detail::read_string;
using detail::GgmlPresentation;
using detail::GgufKvType;
using detail::GgufType;
using detail::invalid;
using detail::min_value_bytes;
using detail::skip_nested_array;

template <typename T>
Result<std::vector<T>> read_numbers(Cursor& c, GgufType e, uint64_t count,
                                    const std::string& field) {
    std::vector<T> v;
    v.reserve(count);
    for (uint64_t i = 0; i < count; ++i) {
        switch (e) {
            case GgufType::kUint8: {
                HURRAY_ASSIGN_OR_RETURN(uint8_t x, c.le<uint8_t>(field));
                v.push_back(static_cast<T>(x));
                break;
            }
            case GgufType::kInt8: {
                HURRAY_ASSIGN_OR_RETURN(int8_t x, c.le<int8_t>(field));
                v.push_back(static_cast<T>(x));
                break;
            }
            case GgufType::kUint16: {
                HURRAY_ASSIGN_OR_RETURN(uint16_t x, c.le<uint16_t>(field));
                v.push_back(static_cast<T>(x));
                break;
            }
            case GgufType::kInt16: {
                HURRAY_ASSIGN_OR_RETURN(int16_t x, c.le<int16_t>(field));
                v.push_back(static_cast<T>(x));
                break;
            }
            case GgufType::kUint32: {
                HURRAY_ASSIGN_OR_RETURN(uint32_t x, c.le<uint32_t>(field));
                v.push_back(static_cast<T>(x));
                break;
            }
            case GgufType::kInt32: {
                HURRAY_ASSIGN_OR_RETURN(int32_t x, c.le<int32_t>(field));
                v.push_back(static_cast<T>(x));
                break;
            }
            case GgufType::kUint64: {
                HURRAY_ASSIGN_OR_RETURN(uint64_t x, c.le<uint64_t>(field));
                v.push_back(static_cast<T>(x));
                break;
            }
            case GgufType::kInt64: {
                HURRAY_ASSIGN_OR_RETURN(int64_t x, c.le<int64_t>(field));
                v.push_back(static_cast<T>(x));
                break;
            }
            case GgufType::kFloat32: {
                HURRAY_ASSIGN_OR_RETURN(uint32_t x, c.le<uint32_t>(field));
                v.push_back(static_cast<T>(detail::widen_float32_bits(x)));
                break;
            }
            case GgufType::kFloat64: {
                HURRAY_ASSIGN_OR_RETURN(uint64_t x, c.le<uint64_t>(field));
                v.push_back(static_cast<T>(std::bit_cast<double>(x)));
                break;
            }
            default:
                return invalid(field + ": not a number type", c.pos());
        }
    }
    return v;
}

Result<bool> read_bool(Cursor& c, const std::string& field) {
    const uint64_t at = c.pos();
    HURRAY_ASSIGN_OR_RETURN(uint8_t x, c.le<uint8_t>(field));
    if (x > 1) {
        return invalid(field + ": bool byte " + std::to_string(x) + " is not 0 or 1", at);
    }
    return x == 1;
}

/// One KV value of type `t` (the type field already read) in Hurray's terms.
Result<KvValue> read_value(Cursor& c, GgufKvType& type, const std::string& field) {
    switch (type.type) {
        case GgufType::kUint8:
        case GgufType::kUint16:
        case GgufType::kUint32:
        case GgufType::kUint64: {
            HURRAY_ASSIGN_OR_RETURN(auto v, read_numbers<uint64_t>(c, type.type, 1, field));
            return KvValue::uint64(v[0]);
        }
        case GgufType::kInt8:
        case GgufType::kInt16:
        case GgufType::kInt32:
        case GgufType::kInt64: {
            HURRAY_ASSIGN_OR_RETURN(auto v, read_numbers<int64_t>(c, type.type, 1, field));
            return KvValue::int64(v[0]);
        }
        case GgufType::kFloat32:
        case GgufType::kFloat64: {
            HURRAY_ASSIGN_OR_RETURN(auto v, read_numbers<double>(c, type.type, 1, field));
            return KvValue::float64(v[0]);
        }
        case GgufType::kBool: {
            HURRAY_ASSIGN_OR_RETURN(bool b, read_bool(c, field));
            return KvValue::boolean(b);
        }
        case GgufType::kString: {
            HURRAY_ASSIGN_OR_RETURN(std::string_view s, read_string(c, field));
            if (is_valid_utf8(s)) {
                return KvValue::string(std::string(s));
            }
            return KvValue::bytes(std::vector<uint8_t>(s.begin(), s.end()));  // kept exact
        }
        case GgufType::kArray:
            break;
    }
    const uint64_t body = c.pos();
    const Cursor at_body = c;
    HURRAY_ASSIGN_OR_RETURN(uint32_t et, c.le<uint32_t>(field + " element type"));
    if (et >= detail::kGgufTypeCount) {
        return invalid(field + ": unknown array element type " + std::to_string(et), body);
    }
    const auto e = static_cast<GgufType>(et);
    type.element = e;
    if (e == GgufType::kArray) {
        // Arrays of arrays: Hurray's KV has none; their GGUF bytes (element type, count,
        // elements) are kept as they are, checked by walking them.
        c = at_body;
        HURRAY_RETURN_IF_ERROR(skip_nested_array(c, field));
        const auto raw = c.slice(body, c.pos());
        return KvValue::bytes(std::vector<uint8_t>(raw.begin(), raw.end()));
    }
    const uint64_t count_at = c.pos();
    HURRAY_ASSIGN_OR_RETURN(uint64_t count, c.le<uint64_t>(field + " count"));
    if (count > c.remaining() / min_value_bytes(e)) {
        return Error(ErrorCode::kTruncated,
                     "gguf: " + field + ": " + std::to_string(count) +
                         " elements cannot fit in the " + std::to_string(c.remaining()) + " bytes left",
                     count_at);
    }
    switch (e) {
        case GgufType::kUint8:
        case GgufType::kUint16:
        case GgufType::kUint32:
        case GgufType::kUint64: {
            HURRAY_ASSIGN_OR_RETURN(auto v, read_numbers<uint64_t>(c, e, count, field));
            return KvValue::uint64_array(std::move(v));
        }
        case GgufType::kInt8:
        case GgufType::kInt16:
        case GgufType::kInt32:
        case GgufType::kInt64: {
            HURRAY_ASSIGN_OR_RETURN(auto v, read_numbers<int64_t>(c, e, count, field));
            return KvValue::int64_array(std::move(v));
        }
        case GgufType::kFloat32:
        case GgufType::kFloat64: {
            HURRAY_ASSIGN_OR_RETURN(auto v, read_numbers<double>(c, e, count, field));
            return KvValue::float64_array(std::move(v));
        }
        case GgufType::kBool: {
            std::vector<bool> v;
            v.reserve(count);
            for (uint64_t i = 0; i < count; ++i) {
                HURRAY_ASSIGN_OR_RETURN(bool b, read_bool(c, field));
                v.push_back(b);
            }
            return KvValue::bool_array(std::move(v));
        }
        case GgufType::kString: {
            std::vector<std::string> v;
            v.reserve(count);
            bool utf8 = true;
            for (uint64_t i = 0; i < count; ++i) {
                HURRAY_ASSIGN_OR_RETURN(std::string_view s,
                                        read_string(c, field + "[" + std::to_string(i) + "]"));
                utf8 = utf8 && is_valid_utf8(s);
                v.emplace_back(s);
            }
            if (utf8) {
                return KvValue::string_array(std::move(v));
            }
            std::vector<std::vector<uint8_t>> raw;  // not UTF-8: kept exact as bytes
            raw.reserve(v.size());
            for (const auto& s : v) {
                raw.emplace_back(s.begin(), s.end());
            }
            return KvValue::bytes_array(std::move(raw));
        }
        case GgufType::kArray:
            break;
    }
    return invalid(field + ": unreachable array type", body);
}

/// One tensor's place in the file and how it is presented.
struct TensorPlace {
    uint32_t type = 0;
    GgmlPresentation presentation = GgmlPresentation::kDense;
    uint64_t start = 0;    ///< Absolute file offset of its data.
    uint64_t size = 0;     ///< Bytes of data in the file.
    uint64_t info_at = 0;  ///< Absolute offset of its tensor info (for errors).
};

/// The TensorSource of a mapped GGUF file.
class GgufSource final : public TensorSource {
public:
    GgufSource(ReadOnlyFile file, SharedBuffer bytes, KvMetadata kv, std::vector<SourceTensor> tensors,
               std::vector<TensorPlace> places)
        : file_(std::move(file)),
          bytes_(std::move(bytes)),
          kv_(std::move(kv)),
          tensors_(std::move(tensors)),
          places_(std::move(places)) {}

    [[nodiscard]] Format format() const noexcept override { return Format::kGguf; }
    [[nodiscard]] size_t tensor_count() const noexcept override { return tensors_.size(); }
    [[nodiscard]] const SourceTensor& tensor(size_t i) const noexcept override {
        return tensors_[i];
    }
    [[nodiscard]] const KvMetadata& kv() const noexcept override { return kv_; }

    [[nodiscard]] Status read(size_t i, size_t buffer, uint64_t offset,
                              std::span<uint8_t> out) const override {
        if (i >= tensors_.size()) {
            return Error(ErrorCode::kInvalidArgument, "gguf read: tensor index " +
                                                          std::to_string(i) +
                                                          " >= " + std::to_string(tensors_.size()));
        }
        const SourceTensor& t = tensors_[i];
        if (buffer >= t.descriptor.buffers.size()) {
            return Error(
                ErrorCode::kInvalidArgument,
                "gguf read: tensor '" + t.name + "' has no buffer " + std::to_string(buffer));
        }
        const uint64_t size = t.descriptor.buffers[buffer].byte_size;
        if (offset > size || out.size() > size - offset) {
            return Error(ErrorCode::kInvalidArgument,
                         "gguf read: tensor '" + t.name + "' buffer " + std::to_string(buffer) +
                             ": range [" + std::to_string(offset) + ", +" +
                             std::to_string(out.size()) + ") exceeds its " + std::to_string(size) +
                             " bytes");
        }
        const TensorPlace& p = places_[i];
        if (!file_.contiguous()) {
            // A range source (remote): its tensors are dense or blocks, read as they lie.
            if (auto s = file_.read_into(p.start + offset, out, "gguf tensor data"); !s) {
                return std::move(s).error().with_context(
                    {.prefix = "gguf: tensor '" + t.name + "'", .tensor = t.name});
            }
            return Status::success();
        }
        const auto data = bytes_.span().subspan(p.start, p.size);  // inside the file (checked at open)
        if (p.presentation == GgmlPresentation::kDense ||
            p.presentation == GgmlPresentation::kBlocks) {
            if (!out.empty()) {
                std::memcpy(out.data(), data.data() + offset, out.size());
            }
        } else {
            detail::ggml_deinterleave(p.presentation, data, buffer, offset, out);
        }
        // A file truncated under the mapping reads as zeros (the SIGBUS guard): say so.
        if (auto s = file_.check_unchanged(); !s) {
            return std::move(s).error().with_context(
                {.prefix = "gguf: tensor '" + t.name + "'", .tensor = t.name, .offset = p.start + offset});
        }
        return Status::success();
    }

    [[nodiscard]] std::optional<std::span<const uint8_t>> view(size_t i,
                                                               size_t buffer) const override {
        if (i >= tensors_.size() || buffer != 0 || !file_.contiguous()) {
            return std::nullopt;
        }
        const TensorPlace& p = places_[i];
        if (p.presentation != GgmlPresentation::kDense &&
            p.presentation != GgmlPresentation::kBlocks) {
            return std::nullopt;  // de-interleaved: only read() gives those bytes
        }
        return bytes_.span().subspan(p.start, p.size);
    }

    [[nodiscard]] std::optional<size_t> find(std::string_view name) const override {
        for (size_t i = 0; i < tensors_.size(); ++i) {
            if (tensors_[i].name == name) {
                return i;
            }
        }
        return std::nullopt;
    }

private:
    ReadOnlyFile file_;
    SharedBuffer bytes_;  // the whole file, a slice of its guarded mapping (empty: a range source)
    KvMetadata kv_;
    std::vector<SourceTensor> tensors_;
    std::vector<TensorPlace> places_;
};

/// The KV section: values in Hurray's terms plus the kGgufKvTypesKey record; sets
/// `alignment` from general.alignment.
Status read_kv(Cursor& c, uint64_t kv_count, KvMetadata& kv, uint32_t& alignment) {
    std::vector<std::string> types;
    types.reserve(kv_count);
    for (uint64_t i = 0; i < kv_count; ++i) {
        const uint64_t entry_at = c.pos();
        const std::string where = "kv[" + std::to_string(i) + "]";
        HURRAY_ASSIGN_OR_RETURN(std::string_view key, read_string(c, where + " key"));
        const std::string field = where + " '" + std::string(key) + "'";
        const uint64_t type_at = c.pos();
        HURRAY_ASSIGN_OR_RETURN(uint32_t t, c.le<uint32_t>(field + " value type"));
        if (t >= detail::kGgufTypeCount) {
            return invalid(field + ": unknown value type " + std::to_string(t), type_at);
        }
        if (key == kGgufKvTypesKey) {
            return Error(ErrorCode::kUnsupported,
                         "gguf: " + field + ": the key is reserved for the types of the other keys",
                         entry_at);
        }
        GgufKvType type{static_cast<GgufType>(t), GgufType::kUint8};
        const uint64_t value_at = c.pos();
        HURRAY_ASSIGN_OR_RETURN(KvValue value, read_value(c, type, field));
        if (key == detail::kGgufAlignmentKey) {
            const uint64_t* a = value.as_uint64();
            if (type.type != GgufType::kUint32 || a == nullptr) {
                return invalid(field + ": must be a uint32", type_at);
            }
            if (*a == 0 || !is_pow2(*a)) {
                return invalid(field + ": " + std::to_string(*a) + " is not a power of two",
                               value_at);
            }
            alignment = static_cast<uint32_t>(*a);
        }
        if (kv.contains(key)) {
            return Error(ErrorCode::kDuplicateName, "gguf: " + field + ": duplicate key", entry_at);
        }
        if (auto st = kv.add(std::string(key), std::move(value)); !st) {
            return st.error().with_context({.prefix = "gguf: " + field, .offset = entry_at});
        }
        types.push_back(detail::gguf_kv_type_string(type) + ":" + std::string(key));
    }
    if (!types.empty()) {
        HURRAY_RETURN_IF_ERROR(
            kv.add(std::string(kGgufKvTypesKey), KvValue::string_array(std::move(types))));
    }
    return Status::success();
}

/// The first bytes read of a GGUF file behind a range source, and the most read for its
/// header (doubling from the first).
constexpr uint64_t kFirstRemoteHeader = uint64_t{1} << 20;
constexpr uint64_t kMaxRemoteHeader = uint64_t{256} << 20;

/// The minimal size of one tensor info (empty name, no dimension).
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;
/// The minimal size of one KV entry (empty key, a uint8 value).
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;

/// What a GGUF file's header says: its KV section, its tensors and where they lie.
struct GgufLayout {
    KvMetadata kv;
    std::vector<SourceTensor> tensors;
    std::vector<TensorPlace> places;
};

/// Parses the header of a GGUF file of `total` bytes from `head`, its first bytes (the
/// whole file, or a prefix when it is read by range: a header that runs past `head` is
/// kTruncated, read again with more). `whole` is the whole file when it is at hand: then
/// a Q8_0 / Q4_0 tensor whose every block scale is valid is presented per-block affine;
/// without it (a range source: the scales are spread over the tensor's data) it keeps
/// its blocks. `*header_read` is set once the whole header was in `head`.
Result<GgufLayout> parse_gguf(std::span<const uint8_t> head, uint64_t total,
                              std::optional<std::span<const uint8_t>> whole, bool* header_read = nullptr) {
    Cursor c = detail::gguf_cursor(head);
    // Counts are bounded by the bytes left in the file, whether or not `head` holds them.
    const auto left = [&c, total] { return total - std::min(total, c.pos()); };
    HURRAY_ASSIGN_OR_RETURN(uint32_t magic, c.le<uint32_t>("magic"));
    if (magic != detail::kGgufMagic) {
        return Error(ErrorCode::kInvalidMagic, "gguf: magic: not \"GGUF\"", 0);
    }
    HURRAY_ASSIGN_OR_RETURN(uint32_t version, c.le<uint32_t>("version"));
    if (version == 1) {
        return Error(
            ErrorCode::kUnsupportedVersion,
            "gguf: version: GGUF v1 (32-bit counts and lengths) is not supported; convert it to v3 "
            "with llama.cpp first",
            4);
    }
    if (version != 2 && version != 3) {
        const bool swapped = (version & 0xFFFFU) == 0 && (version >> 16) != 0;
        return Error(
            ErrorCode::kUnsupportedVersion,
            "gguf: version: " + std::to_string(version) +
                (swapped ? " (a big-endian GGUF file?) is not supported" : " is not 2 or 3"),
            4);
    }
    const uint64_t tc_at = c.pos();
    HURRAY_ASSIGN_OR_RETURN(uint64_t tensor_count, c.le<uint64_t>("tensor_count"));
    const uint64_t kc_at = c.pos();
    HURRAY_ASSIGN_OR_RETURN(uint64_t kv_count, c.le<uint64_t>("kv_count"));
    if (kv_count > left() / kMinKvBytes) {
        return Error(ErrorCode::kTruncated,
                     "gguf: kv_count: " + std::to_string(kv_count) + " entries cannot fit in the " +
                         std::to_string(left()) + " bytes left",
                     kc_at);
    }
    if (tensor_count > left() / kMinTensorInfoBytes) {
        return Error(ErrorCode::kTruncated,
                     "gguf: tensor_count: " + std::to_string(tensor_count) +
                         " tensors cannot fit in the " + std::to_string(left()) + " bytes left",
                     tc_at);
    }
    KvMetadata kv;
    uint32_t alignment = detail::kGgufDefaultAlignment;
    HURRAY_RETURN_IF_ERROR(read_kv(c, kv_count, kv, alignment));
    if (tensor_count > left() / kMinTensorInfoBytes) {
        return Error(ErrorCode::kTruncated,
                     "gguf: tensor_count: " + std::to_string(tensor_count) +
                         " tensors cannot fit in the " + std::to_string(left()) +
                         " bytes left after the KV section",
                     tc_at);
    }

    struct Info {
        std::string name;
        Shape shape;
        uint32_t type = 0;
        uint64_t offset = 0;
        uint64_t offset_at = 0;
        uint64_t at = 0;
        uint64_t size = 0;
    };
    std::vector<Info> infos;
    infos.reserve(tensor_count);
    for (uint64_t i = 0; i < tensor_count; ++i) {
        Info info;
        info.at = c.pos();
        const std::string where = "tensor_info[" + std::to_string(i) + "]";
        HURRAY_ASSIGN_OR_RETURN(std::string_view name, read_string(c, where + " name"));
        info.name = std::string(name);
        const std::string field = where + " '" + info.name + "'";
        const uint64_t nd_at = c.pos();
        HURRAY_ASSIGN_OR_RETURN(uint32_t n_dims, c.le<uint32_t>(field + " n_dims"));
        if (n_dims > detail::kGgufMaxDims) {
            return invalid(field + ": n_dims " + std::to_string(n_dims) + " exceeds " +
                               std::to_string(detail::kGgufMaxDims),
                           nd_at);
        }
        std::vector<uint64_t> ne(n_dims);
        uint64_t count = 1;
        for (uint32_t d = 0; d < n_dims; ++d) {
            const uint64_t ne_at = c.pos();
            HURRAY_ASSIGN_OR_RETURN(ne[d],
                                    c.le<uint64_t>(field + " ne[" + std::to_string(d) + "]"));
            if (ne[d] > static_cast<uint64_t>(INT64_MAX)) {
                return invalid(field + ": ne[" + std::to_string(d) +
                                   "] = " + std::to_string(ne[d]) + " exceeds 2^63 - 1",
                               ne_at);
            }
            auto product = mul_u64(count, ne[d]);
            if (!product || *product > static_cast<uint64_t>(INT64_MAX)) {
                return Error(ErrorCode::kSizeOverflow,
                             "gguf: " + field + ": the element count overflows at ne[" +
                                 std::to_string(d) + "]",
                             ne_at);
            }
            count = *product;
        }
        info.shape.assign(ne.rbegin(), ne.rend());
        const uint64_t type_at = c.pos();
        HURRAY_ASSIGN_OR_RETURN(info.type, c.le<uint32_t>(field + " type"));
        const auto ti = ggml_type_info(info.type);
        if (!ti) {
            return Error(
                ErrorCode::kUnsupported,
                "gguf: " + field + ": type: unknown ggml type " + std::to_string(info.type),
                type_at);
        }
        if (n_dims > 0 && ne[0] % ti->elements != 0) {
            return invalid(field + ": ne[0] = " + std::to_string(ne[0]) +
                               " is not a multiple of the " + std::string(ti->name) +
                               " block size " + std::to_string(ti->elements),
                           nd_at + 4);
        }
        if (n_dims == 0 && ti->elements != 1) {
            return invalid(field + ": a " + std::string(ti->name) + " tensor needs n_dims >= 1",
                           nd_at);
        }
        auto size = mul_u64(count / ti->elements, ti->bytes);
        if (!size) {
            return Error(ErrorCode::kSizeOverflow,
                         "gguf: " + field + ": the byte size overflows 64 bits", type_at);
        }
        info.size = *size;
        info.offset_at = c.pos();
        HURRAY_ASSIGN_OR_RETURN(info.offset, c.le<uint64_t>(field + " offset"));
        if (info.offset % alignment != 0) {
            return invalid(field + ": offset " + std::to_string(info.offset) +
                               " is not a multiple of the alignment " + std::to_string(alignment),
                           info.offset_at);
        }
        infos.push_back(std::move(info));
    }
    const uint64_t data_start = ceil_div(c.pos(), alignment) * alignment;
    if (header_read != nullptr) {
        *header_read = true;  // what fails from here is the file's, not a short `head`
    }

    // Every tensor inside the file, none overlapping another, names unique.
    std::vector<size_t> order(infos.size());
    for (size_t i = 0; i < order.size(); ++i) {
        order[i] = i;
    }
    for (const Info& info : infos) {
        auto start = add_u64(data_start, info.offset);
        auto end = start ? add_u64(*start, info.size) : std::nullopt;
        if (!end || *end > total) {
            return Error(ErrorCode::kTruncated,
                         "gguf: tensor '" + info.name + "': data [" + std::to_string(info.offset) +
                             ", +" + std::to_string(info.size) + ") after the data section at " +
                             std::to_string(data_start) + " runs past the end of the file (" +
                             std::to_string(total) + " bytes)",
                         info.offset_at);
        }
    }
    std::sort(order.begin(), order.end(), [&infos](size_t a, size_t b) {
        return infos[a].offset != infos[b].offset ? infos[a].offset < infos[b].offset
                                                  : infos[a].name < infos[b].name;
    });
    for (size_t k = 1; k < order.size(); ++k) {
        const Info& prev = infos[order[k - 1]];
        const Info& next = infos[order[k]];
        if (prev.name == next.name) {
            return Error(ErrorCode::kDuplicateName,
                         "gguf: tensor '" + next.name + "': duplicate name", next.at);
        }
        if (prev.size > 0 && next.size > 0 && prev.offset + prev.size > next.offset) {
            return Error(ErrorCode::kOverlap,
                         "gguf: tensor '" + next.name + "': data at offset " +
                             std::to_string(next.offset) + " overlaps tensor '" + prev.name +
                             "' [" + std::to_string(prev.offset) + ", +" +
                             std::to_string(prev.size) + ")",
                         next.offset_at);
        }
    }
    {
        std::vector<std::string_view> names;
        names.reserve(infos.size());
        for (const Info& info : infos) {
            names.emplace_back(info.name);
        }
        std::sort(names.begin(), names.end());
        for (size_t k = 1; k < names.size(); ++k) {
            if (names[k] == names[k - 1]) {
                return Error(ErrorCode::kDuplicateName,
                             "gguf: tensor '" + std::string(names[k]) + "': duplicate name");
            }
        }
    }

    std::vector<SourceTensor> tensors;
    std::vector<TensorPlace> places;
    tensors.reserve(infos.size());
    places.reserve(infos.size());
    for (Info& info : infos) {
        TensorPlace p;
        p.type = info.type;
        p.start = data_start + info.offset;
        p.size = info.size;
        p.info_at = info.at;
        const auto type = static_cast<GgmlType>(info.type);
        if (detail::ggml_dense_element_type(info.type)) {
            p.presentation = GgmlPresentation::kDense;
        } else if ((type == GgmlType::kQ8_0 || type == GgmlType::kQ4_0) && !info.shape.empty() && whole &&
                   detail::ggml_scales_valid(whole->subspan(p.start, p.size),
                                             type == GgmlType::kQ8_0 ? 34 : 18)) {
            p.presentation =
                type == GgmlType::kQ8_0 ? GgmlPresentation::kQ8_0 : GgmlPresentation::kQ4_0;
        } else {
            p.presentation = GgmlPresentation::kBlocks;
        }
        auto d = detail::ggml_descriptor(p.presentation, info.type, info.shape);
        if (!d) {
            return d.error().with_context({.prefix = "gguf: tensor '" + info.name + "'", .tensor = info.name, .offset = info.at});
        }
        tensors.push_back(SourceTensor{std::move(info.name), std::move(*d)});
        places.push_back(p);
    }
    return GgufLayout{std::move(kv), std::move(tensors), std::move(places)};
}

Result<std::unique_ptr<TensorSource>> open_gguf_impl(const std::filesystem::path& path) {
    HURRAY_ASSIGN_OR_RETURN(ReadOnlyFile file, ReadOnlyFile::open(path));
    // The whole file as one slice of its mapping, guarded against SIGBUS: a file
    // truncated meanwhile reads as zeros, which check_unchanged reports.
    HURRAY_ASSIGN_OR_RETURN(SharedBuffer all, file.read(0, file.size(), "gguf"));
    if (!file.contiguous() && file.size() > 0) {
        return Error(ErrorCode::kIoError, "gguf: the file could not be mapped (GGUF files are read through a mapping)")
            .with_context({.prefix = path.string(), .file = path.string()});
    }
    HURRAY_ASSIGN_OR_RETURN(GgufLayout layout, parse_gguf(all.span(), all.span().size(), all.span()));
    // Everything above was read from the mapping: it was the file's only if the
    // file did not shrink meanwhile.
    HURRAY_RETURN_IF_ERROR(file.check_unchanged());
    return std::unique_ptr<TensorSource>(std::make_unique<GgufSource>(std::move(file), std::move(all),
                                                                      std::move(layout.kv), std::move(layout.tensors),
                                                                      std::move(layout.places)));
}

Result<std::unique_ptr<TensorSource>> open_gguf_range(std::shared_ptr<RangeSource> source) {
    const uint64_t total = source->size();
    // The header in growing ranges: 1 MiB, then doubled while it runs past what was read
    // (a vocabulary of 150k tokens takes a few MiB), at most kMaxRemoteHeader.
    std::vector<uint8_t> head;
    uint64_t want = std::min<uint64_t>(total, kFirstRemoteHeader);
    for (;;) {
        const size_t had = head.size();
        head.resize(static_cast<size_t>(want));
        if (auto st = source->read(had, std::span<uint8_t>(head).subspan(had)); !st) {
            return st.error();
        }
        bool header_read = false;
        auto layout = parse_gguf(head, total, std::nullopt, &header_read);
        if (layout) {
            ReadOnlyFile file = ReadOnlyFile::range(std::move(source));
            return std::unique_ptr<TensorSource>(std::make_unique<GgufSource>(
                std::move(file), SharedBuffer(), std::move(layout->kv), std::move(layout->tensors),
                std::move(layout->places)));
        }
        if (layout.error().code() != ErrorCode::kTruncated || header_read || want == total) {
            return layout.error();
        }
        if (want >= kMaxRemoteHeader) {
            // A header this long, or a length field that claims more than the file
            // holds: the parse's own error, with what was read.
            return layout.error().with_context(
                {.prefix = "gguf: the header was read by range up to " + std::to_string(kMaxRemoteHeader >> 20U) +
                           " MiB (the most read for it; download the file for a longer one)"});
        }
        want = std::min(total, want * 2);
    }
}

}  // namespace

Result<std::unique_ptr<TensorSource>> open_gguf(std::shared_ptr<RangeSource> source,
                                                const SourceOptions& /*options*/) {
    if (!source) {
        return Error(ErrorCode::kInvalidArgument, "open_gguf: no source");
    }
    const std::string name = source->name();
    try {
        return open_gguf_range(std::move(source));
    } catch (const std::bad_alloc&) {
        return Error(ErrorCode::kOutOfMemory, "gguf: " + name + ": out of memory");
    } catch (const std::exception& e) {
        return Error(ErrorCode::kIoError, "gguf: " + name + ": " + e.what());
    }
}

Result<std::unique_ptr<TensorSource>> open_gguf(const std::filesystem::path& path,
                                                const SourceOptions& /*options*/) {
    try {
        return open_gguf_impl(path);
    } catch (const std::bad_alloc&) {
        return Error(ErrorCode::kOutOfMemory, "gguf: " + path.string() + ": out of memory");
    } catch (const std::exception& e) {
        return Error(ErrorCode::kIoError, "gguf: " + path.string() + ": " + e.what());
    }
}

}  // namespace hurray::convert
