// SPDX-License-Identifier: Apache-2.0
// Document tree -> TensorDescriptor (docs/json.md). Structural checks only:
// presence, JSON types, integer ranges, names, hex; check_descriptor does the rest.
#include <cfloat>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "json/json_fields.hpp"
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

// Declared here for Fields::get, defined after Fields (objects are read through it):

/// The shape: unsigned integers and "dynamic".
Status read_value(const Json& j, const std::string& path, Shape& out);

/// An object: the members visit_fields lists for `T`, and no others.
template <typename T>
    requires kIsObject<T>
Status read_value(const Json& j, const std::string& path, T& out);

/// An array of objects.
template <ObjectArray C>
Status read_value(const Json& j, const std::string& path, C& out);

/// An optional member: present means a value.
template <typename T>
Status read_value(const Json& j, const std::string& path, std::optional<T>& out);

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

// --- Members, as visit_fields lists them ------------------------------------------------

/// Reads the selector `key` of a layout or scheme, spelled as `how` says, then the
/// fields of the alternative it selects (defined below).
template <typename V, typename Open>
Status read_selected(Fields& f, std::string_view key, V& out, const Selection<V, Open>& how);

/// Reads the member `key` into `m`, which visit_fields passed: a plain member is
/// required, an optional or Omittable one may be absent.
template <typename M>
Status read_member(Fields& f, std::string_view key, M& m) {
    if constexpr (kIsSpecialization<M, EnumField>) {
        return f.get_enum(key, m.value, m.names, m.what);
    } else if constexpr (kIsSpecialization<M, Omittable>) {
        return f.get_optional(key, m.value);
    } else if constexpr (kIsSpecialization<M, std::optional>) {
        return f.get_optional(key, m);
    } else if constexpr (kIsSpecialization<M, Selector>) {
        return read_selected(f, key, m.value, m.how);
    } else {
        return f.get(key, m);
    }
}

/// Reads the members of `out` from `f` in the order of visit_fields; stops at the
/// first error.
template <typename T>
Status read_fields(Fields& f, T& out) {
    Status status = Status::success();
    visit_fields(out, [&f, &status](std::string_view key, auto&& m) {
        if (status.ok()) {
            status = read_member(f, key, m);
        }
    });
    return status;
}

/// Default-constructs in `out` the named alternative of `V` (any but `Open`) whose
/// tag is `tag`; false when none has that tag.
template <typename V, typename Open, size_t... I>
bool emplace_named(V& out, uint8_t tag, const Selection<V, Open>& how, std::index_sequence<I...> /*all*/) {
    return ((!std::is_same_v<std::variant_alternative_t<I, V>, Open> && how.tag_of(V(std::in_place_index<I>)) == tag &&
             (out.template emplace<I>(), true)) ||
            ...);
}

template <typename V, typename Open>
Status read_selected(Fields& f, std::string_view key, V& out, const Selection<V, Open>& how) {
    HURRAY_ASSIGN_OR_RETURN(const Json* selector, f.require(key));
    const std::string path = f.path_of(key);
    if (selector->is_number()) {
        // A number selects the open alternative (docs/json.md), whatever its value.
        Open open;
        HURRAY_RETURN_IF_ERROR(read_value(*selector, path, open.*how.open_tag));
        HURRAY_RETURN_IF_ERROR(read_fields(f, open));
        out = std::move(open);
        return Status::success();
    }
    if (!selector->is_string()) {
        return mistyped(path, how.expected, *selector);
    }
    uint8_t tag = 0;
    HURRAY_RETURN_IF_ERROR(read_enum(*selector, path, tag, how.names, how.what));
    if (!emplace_named(out, tag, how, std::make_index_sequence<std::variant_size_v<V>>())) {
        // LCOV_EXCL_START: value_of_name(how.names) yields only the named alternatives' tags
        return Error(ErrorCode::kInvalidDocument, concat({path, ": ", how.no_such}));
        // LCOV_EXCL_STOP
    }
    return std::visit([&f](auto& alternative) { return read_fields(f, alternative); }, out);
}

// --- Objects and arrays -----------------------------------------------------------------

Status read_value(const Json& j, const std::string& path, Shape& out) {
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

template <typename T>
    requires kIsObject<T>
Status read_value(const Json& j, const std::string& path, T& out) {
    HURRAY_ASSIGN_OR_RETURN(Fields f, Fields::open(j, path));
    HURRAY_RETURN_IF_ERROR(read_fields(f, out));
    return f.finish();
}

template <ObjectArray C>
Status read_value(const Json& j, const std::string& path, C& out) {
    if (!j.is_array()) {
        return mistyped(path, "an array", j);
    }
    out.clear();
    out.reserve(j.size());
    for (size_t i = 0; i < j.size(); ++i) {
        typename C::value_type element;
        HURRAY_RETURN_IF_ERROR(read_value(j[i], index_path(path, i), element));
        out.push_back(std::move(element));
    }
    return Status::success();
}

template <typename T>
Status read_value(const Json& j, const std::string& path, std::optional<T>& out) {
    T v{};
    HURRAY_RETURN_IF_ERROR(read_value(j, path, v));
    out = std::move(v);
    return Status::success();
}

}  // namespace

Result<TensorDescriptor> descriptor_from_document(const Json& doc) {
    TensorDescriptor d;
    HURRAY_RETURN_IF_ERROR(read_value(doc, "", d));
    return d;
}

}  // namespace hurray::json_detail
