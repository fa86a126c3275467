// SPDX-License-Identifier: Apache-2.0
// Document tree -> TensorDescriptor (docs/json.md). Structural checks only:
// presence, JSON types, integer ranges, names, hex; check_descriptor does the rest.
#include <cfloat>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "json/json_internal.hpp"

namespace hurray::json_detail {
namespace {

Error invalid(const std::string& path, const std::string& what) {
    return {ErrorCode::kInvalidDocument, concat({path, ": ", what})};
}

// The path of element `i` of the array at `path`.
std::string index_path(const std::string& path, size_t i) { return concat({path, "[", std::to_string(i), "]"}); }

std::string quote_text(std::string_view s) { return concat({"\"", shortened(s), "\""}); }

// What a value is, for "expected X, got Y".
std::string kind_of(const Json& j) {
    switch (j.type()) {
        case Json::value_t::null: return "null";
        case Json::value_t::object: return "an object";
        case Json::value_t::array: return "an array";
        case Json::value_t::string: return concat({"the string ", quote_text(j.get_ref<const std::string&>())});
        case Json::value_t::boolean: return j.get<bool>() ? "true" : "false";
        case Json::value_t::number_integer: return std::to_string(j.get<int64_t>());
        case Json::value_t::number_unsigned: return std::to_string(j.get<uint64_t>());
        case Json::value_t::number_float: {
            const auto v = j.get<double>();
            if (std::isnan(v)) {
                return "the number NaN";  // only CBOR can hold one
            }
            return concat({"the number ", std::isinf(v) ? std::string(v > 0 ? "inf" : "-inf") : j.dump()});
        }
        case Json::value_t::binary: return "a byte string";
        case Json::value_t::discarded: break;
    }
    return "an invalid value";  // LCOV_EXCL_LINE: the parser never keeps a discarded value
}

Error mistyped(const std::string& path, std::string_view expected, const Json& j) {
    return invalid(path, concat({"expected ", expected, ", got ", kind_of(j)}));
}

template <typename T>
constexpr std::string_view int_type_name() {
    if constexpr (std::is_same_v<T, uint8_t>) {
        return "uint8";
    } else if constexpr (std::is_same_v<T, uint16_t>) {
        return "uint16";
    } else if constexpr (std::is_same_v<T, uint32_t>) {
        return "uint32";
    } else if constexpr (std::is_same_v<T, uint64_t>) {
        return "uint64";
    } else if constexpr (std::is_same_v<T, int32_t>) {
        return "int32";
    } else {
        static_assert(std::is_same_v<T, int64_t>);
        return "int64";
    }
}

// Whether `j` is a float with an integral value (an integer too large for the
// parser's integer types is kept as a float).
bool is_whole(const Json& j) {
    if (!j.is_number_float()) {
        return false;
    }
    const double v = j.get<double>();
    return std::isfinite(v) && std::trunc(v) == v;
}

template <typename T>
Error out_of_range(const std::string& path, const std::string& value) {
    return invalid(path, concat({value, " is out of range for ", int_type_name<T>()}));
}

// --- Scalars ------------------------------------------------------------------------

template <typename T>
    requires std::is_integral_v<T> && std::is_unsigned_v<T>
Status read_value(const Json& j, const std::string& path, T& out) {
    if (j.is_number_unsigned()) {
        const auto v = j.get<uint64_t>();
        if (v > std::numeric_limits<T>::max()) {
            return out_of_range<T>(path, std::to_string(v));
        }
        out = static_cast<T>(v);
        return Status::success();
    }
    if (is_whole(j) && j.get<double>() >= std::ldexp(1.0, std::numeric_limits<T>::digits)) {
        return out_of_range<T>(path, j.dump());  // beyond uint64: the parser kept a float
    }
    return mistyped(path, "an unsigned integer", j);
}

template <typename T>
    requires std::is_integral_v<T> && std::is_signed_v<T>
Status read_value(const Json& j, const std::string& path, T& out) {
    if (j.is_number_integer() && !j.is_number_unsigned()) {
        const auto v = j.get<int64_t>();
        if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) {
            return out_of_range<T>(path, std::to_string(v));
        }
        out = static_cast<T>(v);
        return Status::success();
    }
    if (j.is_number_unsigned()) {
        const auto v = j.get<uint64_t>();
        if (v > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
            return out_of_range<T>(path, std::to_string(v));
        }
        out = static_cast<T>(v);
        return Status::success();
    }
    if (is_whole(j) && std::fabs(j.get<double>()) >= std::ldexp(1.0, std::numeric_limits<T>::digits)) {
        return out_of_range<T>(path, j.dump());  // beyond int64: the parser kept a float
    }
    return mistyped(path, "an integer", j);
}

Status read_value(const Json& j, const std::string& path, bool& out) {
    if (!j.is_boolean()) {
        return mistyped(path, "true or false", j);
    }
    out = j.get<bool>();
    return Status::success();
}

constexpr std::string_view kExpectedFloat =
    R"(a number or one of "inf", "-inf", "nan", "nan:0x<bits>")";

// A float64 field: any JSON number, or a string form of a non-finite value.
Status read_value(const Json& j, const std::string& path, double& out) {
    if (j.is_number()) {
        out = j.get<double>();  // integers convert with IEEE rounding, like any decimal
        return Status::success();
    }
    if (j.is_string() && parse_float64_string(j.get_ref<const std::string&>(), out)) {
        return Status::success();
    }
    return mistyped(path, kExpectedFloat, j);
}

// A float32 field: a number in float32 range (rounded to nearest), or a string form.
Status read_value(const Json& j, const std::string& path, float& out) {
    if (j.is_string() && parse_float32_string(j.get_ref<const std::string&>(), out)) {
        return Status::success();
    }
    if (!j.is_number()) {
        return mistyped(path, kExpectedFloat, j);
    }
    const auto v = j.get<double>();
    if (!std::isfinite(v) || std::fabs(v) <= static_cast<double>(FLT_MAX)) {
        out = static_cast<float>(v);  // NaN and infinities (only from CBOR) convert as they are
        return Status::success();
    }
    // Beyond FLT_MAX: round to nearest by hand (a cast would be undefined), so that
    // "3.4028235e+38", the shortest form of FLT_MAX, reads back as FLT_MAX.
    constexpr double kFloatOverflow = 0x1.ffffffp127;  // halfway between FLT_MAX and 2^128
    if (std::fabs(v) >= kFloatOverflow) {
        return invalid(path, j.dump() + " is out of range for float32");
    }
    out = v < 0 ? -FLT_MAX : FLT_MAX;
    return Status::success();
}

// Bytes: a hex string.
Status read_value(const Json& j, const std::string& path, std::vector<uint8_t>& out) {
    if (!j.is_string()) {
        return mistyped(path, "a hex string", j);
    }
    const auto& s = j.get_ref<const std::string&>();
    size_t bad_at = 0;
    if (!parse_hex(s, out, bad_at)) {
        if (bad_at == s.size()) {
            return invalid(path, concat({"odd number of hex digits (", std::to_string(s.size()), ")"}));
        }
        return invalid(path, concat({"character ", std::to_string(bad_at), " of ", quote_text(s), " is not a hex digit"}));
    }
    return Status::success();
}

// An optional index: present means a value.
Status read_value(const Json& j, const std::string& path, std::optional<uint32_t>& out) {
    uint32_t v = 0;
    HURRAY_RETURN_IF_ERROR(read_value(j, path, v));
    out = v;
    return Status::success();
}

// Arrays of integers.
template <typename T>
    requires std::is_integral_v<T>
Status read_value(const Json& j, const std::string& path, std::vector<T>& out) {
    if (!j.is_array()) {
        return mistyped(path, "an array", j);
    }
    out.assign(j.size(), T{});
    for (size_t i = 0; i < j.size(); ++i) {
        HURRAY_RETURN_IF_ERROR(read_value(j[i], index_path(path, i), out[i]));
    }
    return Status::success();
}

// An enum: the name of a value or a number 0..255.
template <typename E>
Status read_enum(const Json& j, const std::string& path, E& out, NameFn names, std::string_view what) {
    if (j.is_string()) {
        const auto& name = j.get_ref<const std::string&>();
        const int v = value_of_name(names, name);
        if (v < 0) {
            return invalid(path, concat({"unknown ", what, " ", quote_text(name)}));
        }
        out = static_cast<E>(v);
        return Status::success();
    }
    if (!j.is_number()) {
        return mistyped(path, "a name or a number", j);
    }
    uint8_t raw = 0;
    HURRAY_RETURN_IF_ERROR(read_value(j, path, raw));
    out = static_cast<E>(raw);
    return Status::success();
}

// --- Objects ------------------------------------------------------------------------

// The members of one JSON object: looks fields up by name, remembers which were
// read, and reports any other member as unknown.
class Fields {
public:
    static Result<Fields> open(const Json& j, std::string path) {
        if (!j.is_object()) {
            return mistyped(path.empty() ? "document" : path, "an object", j);
        }
        return Fields(j, std::move(path));
    }

    // The path of member `key`.
    [[nodiscard]] std::string path_of(std::string_view key) const {
        return path_.empty() ? std::string(key) : concat({path_, ".", key});
    }

    // The member `key`, or nullptr when absent.
    const Json* find(std::string_view key) {
        const auto it = object_->find(key);
        if (it == object_->end()) {
            return nullptr;
        }
        used_.push_back(key);
        return &*it;
    }

    // The member `key`, which must be present.
    Result<const Json*> require(std::string_view key) {
        const Json* j = find(key);
        if (j == nullptr) {
            return invalid(path_of(key), "missing");
        }
        return j;
    }

    // Reads the required member `key` into `out`.
    template <typename T>
    Status get(std::string_view key, T& out) {
        HURRAY_ASSIGN_OR_RETURN(const Json* j, require(key));
        return read_value(*j, path_of(key), out);
    }

    // Reads the member `key` into `out` when it is present; leaves `out` alone otherwise.
    template <typename T>
    Status get_optional(std::string_view key, T& out) {
        const Json* j = find(key);
        return j == nullptr ? Status::success() : read_value(*j, path_of(key), out);
    }

    // Reads the required enum member `key`.
    template <typename E>
    Status get_enum(std::string_view key, E& out, NameFn names, std::string_view what) {
        HURRAY_ASSIGN_OR_RETURN(const Json* j, require(key));
        return read_enum(*j, path_of(key), out, names, what);
    }

    // Fails on the first member that was not read.
    [[nodiscard]] Status finish() const {
        for (const auto& [key, value] : object_->items()) {
            bool known = false;
            for (const std::string_view u : used_) {
                known = known || u == key;
            }
            if (!known) {
                return invalid(path_of(shortened(key)), "unknown field");
            }
        }
        return Status::success();
    }

private:
    Fields(const Json& j, std::string path) : object_(&j), path_(std::move(path)) {}

    const Json* object_;
    std::string path_;
    std::vector<std::string_view> used_;
};


// --- Sections -----------------------------------------------------------------------

Status read_shape(const Json& j, const std::string& path, Shape& out) {
    if (!j.is_array()) {
        return mistyped(path, "an array", j);
    }
    out.assign(j.size(), 0);
    for (size_t i = 0; i < j.size(); ++i) {
        if (j[i].is_string() && j[i].get_ref<const std::string&>() == kDynamicName) {
            out[i] = kDynamicDim;
            continue;
        }
        if (j[i].is_string()) {
            return mistyped(index_path(path, i), R"(an unsigned integer or "dynamic")", j[i]);
        }
        HURRAY_RETURN_IF_ERROR(read_value(j[i], index_path(path, i), out[i]));
    }
    return Status::success();
}

Result<TiledLevel> read_tiled_level(const Json& j, const std::string& path) {
    HURRAY_ASSIGN_OR_RETURN(Fields f, Fields::open(j, path));
    TiledLevel lv;
    HURRAY_RETURN_IF_ERROR(f.get("tile_shape", lv.tile_shape));
    HURRAY_RETURN_IF_ERROR(f.get_enum("outer_layout", lv.outer_layout, layout_tag_name, "layout"));
    HURRAY_RETURN_IF_ERROR(f.get_enum("inner_layout", lv.inner_layout, layout_tag_name, "layout"));
    HURRAY_RETURN_IF_ERROR(f.get_optional("outer_strides", lv.outer_strides));
    HURRAY_RETURN_IF_ERROR(f.get_optional("inner_strides", lv.inner_strides));
    HURRAY_RETURN_IF_ERROR(f.finish());
    return lv;
}

Result<TiledLayout> read_tiled(Fields& f) {
    HURRAY_ASSIGN_OR_RETURN(const Json* levels, f.require("levels"));
    const std::string path = f.path_of("levels");
    if (!levels->is_array()) {
        return mistyped(path, "an array", *levels);
    }
    TiledLayout t;
    t.levels.reserve(levels->size());
    for (size_t i = 0; i < levels->size(); ++i) {
        HURRAY_ASSIGN_OR_RETURN(TiledLevel lv, read_tiled_level((*levels)[i], index_path(path, i)));
        t.levels.push_back(std::move(lv));
    }
    return t;
}

// The fields of a named layout, after its "tag".
Result<LayoutDescriptor> read_named_layout(Fields& f, LayoutTag tag) {
    switch (tag) {
        case LayoutTag::kRowMajor: return LayoutDescriptor(RowMajorLayout{});
        case LayoutTag::kColumnMajor: return LayoutDescriptor(ColumnMajorLayout{});
        case LayoutTag::kStrided: {
            StridedLayout l;
            HURRAY_RETURN_IF_ERROR(f.get("strides", l.strides));
            return LayoutDescriptor(std::move(l));
        }
        case LayoutTag::kTiled: {
            HURRAY_ASSIGN_OR_RETURN(TiledLayout l, read_tiled(f));
            return LayoutDescriptor(std::move(l));
        }
        case LayoutTag::kMorton: {
            MortonLayout l;
            HURRAY_RETURN_IF_ERROR(f.get("morton_bits", l.morton_bits));
            return LayoutDescriptor(std::move(l));
        }
        case LayoutTag::kCoo: {
            CooLayout l;
            HURRAY_RETURN_IF_ERROR(f.get("nnz", l.nnz));
            HURRAY_RETURN_IF_ERROR(f.get("is_sorted", l.is_sorted));
            return LayoutDescriptor(l);
        }
        case LayoutTag::kCsr: {
            CsrLayout l;
            HURRAY_RETURN_IF_ERROR(f.get("nnz", l.nnz));
            return LayoutDescriptor(l);
        }
        case LayoutTag::kCsc: {
            CscLayout l;
            HURRAY_RETURN_IF_ERROR(f.get("nnz", l.nnz));
            return LayoutDescriptor(l);
        }
        case LayoutTag::kCsf: {
            CsfLayout l;
            HURRAY_RETURN_IF_ERROR(f.get("nnz", l.nnz));
            HURRAY_RETURN_IF_ERROR(f.get("mode_order", l.mode_order));
            return LayoutDescriptor(std::move(l));
        }
        case LayoutTag::kBlockPaged: {
            BlockPagedLayout l;
            HURRAY_RETURN_IF_ERROR(f.get("page_size", l.page_size));
            HURRAY_RETURN_IF_ERROR(f.get("num_pages", l.num_pages));
            HURRAY_RETURN_IF_ERROR(f.get("paged_axis", l.paged_axis));
            HURRAY_RETURN_IF_ERROR(f.get("num_seqs", l.num_seqs));
            HURRAY_RETURN_IF_ERROR(f.get_enum("kv_role", l.kv_role, kv_role_name, "kv_role"));
            HURRAY_RETURN_IF_ERROR(f.get("layer_index", l.layer_index));
            HURRAY_RETURN_IF_ERROR(f.get_enum("block_table_index_type", l.index_type, index_type_name,
                                              "block table index type"));
            return LayoutDescriptor(l);
        }
        case LayoutTag::kComposite: {
            CompositeLayout l;
            HURRAY_RETURN_IF_ERROR(f.get_enum("composition_rule", l.rule, composition_rule_name,
                                              "composition rule"));
            HURRAY_RETURN_IF_ERROR(f.get_enum("combine_op", l.combine_op, combine_op_name, "combine op"));
            HURRAY_RETURN_IF_ERROR(f.get("member_count", l.member_count));
            return LayoutDescriptor(l);
        }
        case LayoutTag::kHilbert: {
            HilbertLayout l;
            HURRAY_RETURN_IF_ERROR(f.get("hilbert_order", l.hilbert_order));
            HURRAY_RETURN_IF_ERROR(f.get("hilbert_rank", l.hilbert_rank));
            return LayoutDescriptor(l);
        }
    }
    // LCOV_EXCL_START: value_of_name(layout_tag_name) yields only the tags above
    return Error(ErrorCode::kInvalidDocument, f.path_of("tag") + ": no such layout");
    // LCOV_EXCL_STOP
}

Result<LayoutDescriptor> read_layout(const Json& j, const std::string& path) {
    HURRAY_ASSIGN_OR_RETURN(Fields f, Fields::open(j, path));
    HURRAY_ASSIGN_OR_RETURN(const Json* tag, f.require("tag"));
    LayoutDescriptor layout;
    if (tag->is_number()) {
        // A number selects the extension layout (docs/json.md), whatever its value.
        ExtensionLayout e;
        HURRAY_RETURN_IF_ERROR(read_value(*tag, f.path_of("tag"), e.tag));
        HURRAY_RETURN_IF_ERROR(f.get("extension_layout_id", e.layout_id));
        HURRAY_RETURN_IF_ERROR(f.get("extension_data", e.data));
        layout = std::move(e);
    } else if (tag->is_string()) {
        LayoutTag named = LayoutTag::kRowMajor;
        HURRAY_RETURN_IF_ERROR(read_enum(*tag, f.path_of("tag"), named, layout_tag_name, "layout"));
        HURRAY_ASSIGN_OR_RETURN(layout, read_named_layout(f, named));
    } else {
        return mistyped(f.path_of("tag"), "a layout name or a number", *tag);
    }
    HURRAY_RETURN_IF_ERROR(f.finish());
    return layout;
}

Result<BufferHandle> read_buffer(const Json& j, const std::string& path) {
    HURRAY_ASSIGN_OR_RETURN(Fields f, Fields::open(j, path));
    BufferHandle b;
    HURRAY_RETURN_IF_ERROR(f.get("byte_size", b.byte_size));
    HURRAY_RETURN_IF_ERROR(f.get("alignment", b.alignment));
    HURRAY_RETURN_IF_ERROR(f.get_enum("device_tag", b.device_tag, device_tag_name, "device tag"));
    HURRAY_RETURN_IF_ERROR(f.get_enum("sync_mode", b.sync_mode, sync_mode_name, "sync mode"));
    HURRAY_RETURN_IF_ERROR(f.get_enum("memory_class", b.memory_class, memory_class_name, "memory class"));
    HURRAY_RETURN_IF_ERROR(f.finish());
    return b;
}

Status read_buffers(const Json& j, const std::string& path, BufferTable& out) {
    if (!j.is_array()) {
        return mistyped(path, "an array", j);
    }
    out.clear();
    out.reserve(j.size());
    for (size_t i = 0; i < j.size(); ++i) {
        HURRAY_ASSIGN_OR_RETURN(BufferHandle b, read_buffer(j[i], index_path(path, i)));
        out.push_back(b);
    }
    return Status::success();
}

// The fields of a named scheme, after its "scheme".
Result<QuantizationScheme> read_named_scheme(Fields& f, QuantScheme tag) {
    switch (tag) {
        case QuantScheme::kPerTensorAffine: {
            PerTensorAffine s;
            HURRAY_RETURN_IF_ERROR(f.get("scale", s.scale));
            HURRAY_RETURN_IF_ERROR(f.get("zero_point", s.zero_point));
            return QuantizationScheme(s);
        }
        case QuantScheme::kPerChannelAffine: {
            PerChannelAffine s;
            HURRAY_RETURN_IF_ERROR(f.get("axis", s.axis));
            HURRAY_RETURN_IF_ERROR(f.get("scale_buffer_index", s.scale_buffer_index));
            HURRAY_RETURN_IF_ERROR(f.get_optional("zero_point_buffer_index", s.zero_point_buffer_index));
            HURRAY_RETURN_IF_ERROR(f.get_enum("scale_type", s.scale_type, element_type_name, "element type"));
            return QuantizationScheme(s);
        }
        case QuantScheme::kPerBlockAffine: {
            PerBlockAffine s;
            HURRAY_RETURN_IF_ERROR(f.get("axis", s.axis));
            HURRAY_RETURN_IF_ERROR(f.get("block_size", s.block_size));
            HURRAY_RETURN_IF_ERROR(f.get("scale_buffer_index", s.scale_buffer_index));
            HURRAY_RETURN_IF_ERROR(f.get_optional("zero_point_buffer_index", s.zero_point_buffer_index));
            HURRAY_RETURN_IF_ERROR(f.get_enum("scale_type", s.scale_type, element_type_name, "element type"));
            return QuantizationScheme(s);
        }
        case QuantScheme::kNf4: {
            Nf4Quantization s;
            HURRAY_RETURN_IF_ERROR(f.get("axis", s.axis));
            HURRAY_RETURN_IF_ERROR(f.get("block_size", s.block_size));
            HURRAY_RETURN_IF_ERROR(f.get("scale_buffer_index", s.scale_buffer_index));
            return QuantizationScheme(s);
        }
        case QuantScheme::kMxfp: {
            MxfpQuantization s;
            HURRAY_RETURN_IF_ERROR(f.get("axis", s.axis));
            HURRAY_RETURN_IF_ERROR(f.get("block_size", s.block_size));
            HURRAY_RETURN_IF_ERROR(f.get("scale_buffer_index", s.scale_buffer_index));
            return QuantizationScheme(s);
        }
    }
    // LCOV_EXCL_START: value_of_name(scheme_tag_name) yields only the schemes above
    return Error(ErrorCode::kInvalidDocument, f.path_of("scheme") + ": no such scheme");
    // LCOV_EXCL_STOP
}

Result<QuantizationDescriptor> read_quantization(const Json& j, const std::string& path) {
    HURRAY_ASSIGN_OR_RETURN(Fields f, Fields::open(j, path));
    HURRAY_ASSIGN_OR_RETURN(const Json* scheme, f.require("scheme"));
    QuantizationDescriptor q;
    if (scheme->is_number()) {
        // A number selects the opaque form (docs/json.md), whatever its value.
        OpaqueQuantization o;
        HURRAY_RETURN_IF_ERROR(read_value(*scheme, f.path_of("scheme"), o.scheme_tag));
        HURRAY_RETURN_IF_ERROR(f.get("scheme_version", o.scheme_version));
        HURRAY_RETURN_IF_ERROR(f.get("flags", o.flags));
        HURRAY_RETURN_IF_ERROR(f.get("payload", o.payload));
        q.scheme = std::move(o);
    } else if (scheme->is_string()) {
        QuantScheme named = QuantScheme::kPerTensorAffine;
        HURRAY_RETURN_IF_ERROR(
            read_enum(*scheme, f.path_of("scheme"), named, scheme_tag_name, "quantization scheme"));
        HURRAY_ASSIGN_OR_RETURN(q.scheme, read_named_scheme(f, named));
    } else {
        return mistyped(f.path_of("scheme"), "a scheme name or a number", *scheme);
    }
    HURRAY_RETURN_IF_ERROR(f.get_optional("trailing_padding", q.trailing_padding));
    HURRAY_RETURN_IF_ERROR(f.finish());
    return q;
}

Result<ShardDescriptor> read_shard(const Json& j, const std::string& path) {
    HURRAY_ASSIGN_OR_RETURN(Fields f, Fields::open(j, path));
    ShardDescriptor s;
    HURRAY_RETURN_IF_ERROR(f.get("parent_shape", s.parent_shape));
    HURRAY_RETURN_IF_ERROR(f.get("shard_offset", s.shard_offset));
    HURRAY_RETURN_IF_ERROR(f.finish());
    return s;
}

Result<Statistics> read_statistics(const Json& j, const std::string& path) {
    HURRAY_ASSIGN_OR_RETURN(Fields f, Fields::open(j, path));
    Statistics s;
    HURRAY_RETURN_IF_ERROR(f.get("computed_mask", s.computed_mask));
    HURRAY_RETURN_IF_ERROR(f.get("nnz", s.nnz));
    HURRAY_RETURN_IF_ERROR(f.get("sparsity_ratio", s.sparsity_ratio));
    HURRAY_RETURN_IF_ERROR(f.get("value_min", s.value_min));
    HURRAY_RETURN_IF_ERROR(f.get("value_max", s.value_max));
    HURRAY_RETURN_IF_ERROR(f.get("value_abs_max", s.value_abs_max));
    HURRAY_RETURN_IF_ERROR(f.get("value_mean", s.value_mean));
    HURRAY_RETURN_IF_ERROR(f.get("value_stddev", s.value_stddev));
    HURRAY_RETURN_IF_ERROR(f.get("nm_n", s.nm_n));
    HURRAY_RETURN_IF_ERROR(f.get("nm_m", s.nm_m));
    HURRAY_RETURN_IF_ERROR(f.get("has_nan", s.has_nan));
    HURRAY_RETURN_IF_ERROR(f.get("has_inf", s.has_inf));
    HURRAY_RETURN_IF_ERROR(f.finish());
    return s;
}

Result<ExtensionTypeDescriptor> read_extension_type(const Json& j, const std::string& path) {
    HURRAY_ASSIGN_OR_RETURN(Fields f, Fields::open(j, path));
    ExtensionTypeDescriptor e;
    HURRAY_RETURN_IF_ERROR(f.get("bit_width", e.bit_width));
    HURRAY_RETURN_IF_ERROR(f.get("packing_factor", e.packing_factor));
    HURRAY_RETURN_IF_ERROR(f.get("is_float", e.is_float));
    HURRAY_RETURN_IF_ERROR(f.get("is_signed", e.is_signed));
    HURRAY_RETURN_IF_ERROR(f.get("sign_bits", e.sign_bits));
    HURRAY_RETURN_IF_ERROR(f.get("exponent_bits", e.exponent_bits));
    HURRAY_RETURN_IF_ERROR(f.get("mantissa_bits", e.mantissa_bits));
    HURRAY_RETURN_IF_ERROR(f.get("exponent_bias", e.exponent_bias));
    HURRAY_RETURN_IF_ERROR(f.get("has_nan", e.has_nan));
    HURRAY_RETURN_IF_ERROR(f.get("has_inf", e.has_inf));
    HURRAY_RETURN_IF_ERROR(f.finish());
    return e;
}

Result<CompositeMember> read_composite_member(const Json& j, const std::string& path) {
    HURRAY_ASSIGN_OR_RETURN(Fields f, Fields::open(j, path));
    CompositeMember m;
    HURRAY_RETURN_IF_ERROR(f.get_enum("member_role", m.role, member_role_name, "member role"));
    HURRAY_RETURN_IF_ERROR(f.finish());
    return m;
}

// Reads the optional section `key` with `read` when it is present.
template <typename T, typename ReadFn>
Status read_section(Fields& f, std::string_view key, std::optional<T>& out, ReadFn read) {
    const Json* j = f.find(key);
    if (j == nullptr) {
        return Status::success();
    }
    HURRAY_ASSIGN_OR_RETURN(T section, read(*j, f.path_of(key)));
    out = std::move(section);
    return Status::success();
}

}  // namespace

Result<TensorDescriptor> descriptor_from_document(const Json& doc) {
    HURRAY_ASSIGN_OR_RETURN(Fields f, Fields::open(doc, ""));
    TensorDescriptor d;
    HURRAY_RETURN_IF_ERROR(f.get("version_major", d.version_major));
    HURRAY_RETURN_IF_ERROR(f.get("version_minor", d.version_minor));
    HURRAY_RETURN_IF_ERROR(f.get_enum("element_type", d.element_type, element_type_name, "element type"));
    HURRAY_ASSIGN_OR_RETURN(const Json* shape, f.require("shape"));
    HURRAY_RETURN_IF_ERROR(read_shape(*shape, "shape", d.shape));
    HURRAY_RETURN_IF_ERROR(f.get("byte_offset", d.byte_offset));
    HURRAY_ASSIGN_OR_RETURN(const Json* layout, f.require("layout"));
    HURRAY_ASSIGN_OR_RETURN(d.layout, read_layout(*layout, "layout"));
    HURRAY_ASSIGN_OR_RETURN(const Json* buffers, f.require("buffers"));
    HURRAY_RETURN_IF_ERROR(read_buffers(*buffers, "buffers", d.buffers));
    HURRAY_RETURN_IF_ERROR(read_section(f, "quantization", d.quantization, read_quantization));
    HURRAY_RETURN_IF_ERROR(read_section(f, "shard", d.shard, read_shard));
    HURRAY_RETURN_IF_ERROR(read_section(f, "statistics", d.statistics, read_statistics));
    HURRAY_RETURN_IF_ERROR(read_section(f, "extension_type", d.extension_type, read_extension_type));
    HURRAY_RETURN_IF_ERROR(read_section(f, "composite_member", d.composite_member, read_composite_member));
    HURRAY_RETURN_IF_ERROR(f.get_optional("unknown_trailing_bytes", d.unknown_trailing_bytes));
    HURRAY_RETURN_IF_ERROR(f.finish());
    return d;
}

}  // namespace hurray::json_detail
