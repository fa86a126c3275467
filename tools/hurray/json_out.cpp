#include "hurray/json_out.hpp"

#include <cmath>
#include <cstdio>
#include <string_view>
#include <type_traits>
#include <variant>

#include "hurray/core/element_type.hpp"
#include "hurray/core/layout.hpp"
#include "hurray/core/quantization.hpp"
#include "hurray/core/describe.hpp"
#include "hurray/core/shape.hpp"

namespace hurray::cli {
namespace {

using ojson = nlohmann::ordered_json;

std::string tag_text(uint8_t tag) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "tag 0x%02x", static_cast<unsigned>(tag));
    return buf;
}

ojson float_json(double v) {
    if (std::isnan(v)) {
        return "nan";
    }
    if (std::isinf(v)) {
        return v > 0 ? "inf" : "-inf";
    }
    return v;
}

std::string float_text(double v) {
    if (std::isnan(v)) {
        return "nan";
    }
    if (std::isinf(v)) {
        return v > 0 ? "inf" : "-inf";
    }
    return ojson(v).dump();
}

const char* scalar_kind(size_t index) {
    static constexpr const char* kNames[] = {"string", "int64", "uint64", "float64", "bool", "bytes"};
    return index < 6 ? kNames[index] : "unknown";
}

// The fields that close both descriptor_json and tensor_json's descriptor part:
// `buffer_byte_sizes`, `has_quantization`, `has_shard`.
void add_buffer_fields(ojson& j, const TensorDescriptor& d) {
    ojson sizes = ojson::array();
    for (const auto& b : d.buffers) {
        sizes.push_back(b.byte_size);
    }
    j["buffer_byte_sizes"] = std::move(sizes);
    j["has_quantization"] = d.quantization.has_value();
    j["has_shard"] = d.shard.has_value();
}

}  // namespace

std::string printable(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7F) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(u));
            out += buf;
        } else {
            out.push_back(c);
        }
    }
    return out;
}

uint64_t data_bytes(const TensorDescriptor& d) noexcept {
    uint64_t total = 0;
    for (const auto& b : d.buffers) {
        if (__builtin_add_overflow(total, b.byte_size, &total)) {
            return UINT64_MAX;
        }
    }
    return total;
}

ojson descriptor_json(const TensorDescriptor& d) {
    ojson j;
    j["version_major"] = d.version_major;
    j["version_minor"] = d.version_minor;
    j["element_type_tag"] = type_tag(d.element_type);
    j["element_type"] = element_type_text(d);
    j["shape"] = d.shape;
    j["byte_offset"] = d.byte_offset;
    j["layout_tag"] = d.layout_tag();
    add_buffer_fields(j, d);
    return j;
}

ojson tensor_json(const std::string& name, const TensorDescriptor& d, const TensorPlacement& where) {
    ojson j;
    j["name"] = name;
    j["element_type"] = element_type_text(d);
    j["element_type_tag"] = type_tag(d.element_type);
    j["shape"] = d.shape;
    j["layout"] = layout_text(d);
    j["layout_tag"] = d.layout_tag();
    j["quantization"] = d.quantization ? ojson(quantization_text(d)) : ojson(nullptr);
    j["byte_offset"] = d.byte_offset;
    add_buffer_fields(j, d);
    j["descriptor_offset"] = where.descriptor_offset;
    j["descriptor_length"] = where.descriptor_length;
    j["data_offset"] = where.data_offset;
    j["data_bytes"] = data_bytes(d);
    return j;
}

ojson kv_entry_json(const KvEntry& entry) {
    ojson j;
    j["key"] = entry.key;
    j["kind"] = std::string(kv_type_name(entry.value.tag()));
    ojson value = std::visit(
        [](const auto& v) -> ojson {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, double>) {
                return float_json(v);
            } else if constexpr (std::is_same_v<T, std::vector<uint8_t>>) {
                return hex_bytes(v);
            } else if constexpr (std::is_same_v<T, KvArray>) {
                ojson a;
                a["element_kind"] = scalar_kind(v.values.index());
                ojson values = ojson::array();
                std::visit(
                    [&values](const auto& vec) {
                        using E = typename std::decay_t<decltype(vec)>::value_type;
                        for (const auto& e : vec) {
                            if constexpr (std::is_same_v<E, double>) {
                                values.push_back(float_json(e));
                            } else if constexpr (std::is_same_v<E, std::vector<uint8_t>>) {
                                values.push_back(hex_bytes(e));
                            } else if constexpr (std::is_same_v<E, bool>) {
                                values.push_back(static_cast<bool>(e));
                            } else {
                                values.push_back(e);
                            }
                        }
                    },
                    v.values);
                a["values"] = std::move(values);
                return a;
            } else if constexpr (std::is_same_v<T, KvPrivateValue>) {
                ojson p;
                p["tag"] = v.tag;
                p["payload"] = hex_bytes(v.payload);
                return p;
            } else {
                return v;  // string, int64, uint64, bool
            }
        },
        entry.value.storage());
    j["value"] = std::move(value);
    return j;
}

ojson kv_json(const KvMetadata& kv) {
    ojson a = ojson::array();
    for (const auto& e : kv.entries()) {
        a.push_back(kv_entry_json(e));
    }
    return a;
}

std::string shape_text(std::span<const uint64_t> shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i > 0) {
            s += ", ";
        }
        s += shape[i] == kDynamicDim ? std::string("?") : std::to_string(shape[i]);
    }
    s += "]";
    return s;
}

std::string element_type_text(const TensorDescriptor& d) {
    const std::string_view name = type_name(d.element_type);
    return name.empty() ? tag_text(type_tag(d.element_type)) : std::string(name);
}

std::string layout_text(const TensorDescriptor& d) {
    const std::string_view name = layout_name(d.layout_tag());
    return name.empty() ? tag_text(d.layout_tag()) : std::string(name);
}

std::string quantization_text(const TensorDescriptor& d) {
    if (!d.quantization) {
        return "-";
    }
    const uint8_t tag = scheme_tag(d.quantization->scheme);
    const std::string_view name = scheme_name(tag);
    return name.empty() ? tag_text(tag) : std::string(name);
}

std::string bytes_text(uint64_t n) {
    if (n < 1024) {
        return std::to_string(n) + " B";
    }
    static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = static_cast<double>(n) / 1024.0;
    size_t unit = 0;
    while (v >= 1024.0 && unit + 1 < 6) {
        v /= 1024.0;
        ++unit;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[unit]);
    return buf;
}

std::string kv_value_text(const KvValue& value, size_t max_items) {
    return std::visit(
        [max_items](const auto& v) -> std::string {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::string>) {
                return ojson(v).dump(-1, ' ', false, ojson::error_handler_t::replace);
            } else if constexpr (std::is_same_v<T, double>) {
                return float_text(v);
            } else if constexpr (std::is_same_v<T, bool>) {
                return v ? "true" : "false";
            } else if constexpr (std::is_same_v<T, std::vector<uint8_t>>) {
                return "0x" + hex_bytes(v);
            } else if constexpr (std::is_same_v<T, KvArray>) {
                std::string s = std::string(scalar_kind(v.values.index())) + "[" + std::to_string(v.size()) + "] [";
                std::visit(
                    [&s, max_items](const auto& vec) {
                        using E = typename std::decay_t<decltype(vec)>::value_type;
                        size_t i = 0;
                        for (const auto& e : vec) {
                            if (i > 0) {
                                s += ", ";
                            }
                            if (i == max_items) {
                                s += "...";
                                break;
                            }
                            if constexpr (std::is_same_v<E, std::string>) {
                                s += ojson(e).dump(-1, ' ', false, ojson::error_handler_t::replace);
                            } else if constexpr (std::is_same_v<E, double>) {
                                s += float_text(e);
                            } else if constexpr (std::is_same_v<E, bool>) {
                                s += static_cast<bool>(e) ? "true" : "false";
                            } else if constexpr (std::is_same_v<E, std::vector<uint8_t>>) {
                                s += "0x" + hex_bytes(e);
                            } else {
                                s += std::to_string(e);
                            }
                            ++i;
                        }
                    },
                    v.values);
                return s + "]";
            } else if constexpr (std::is_same_v<T, KvPrivateValue>) {
                char buf[16];
                std::snprintf(buf, sizeof buf, "0x%02x", static_cast<unsigned>(v.tag));
                return std::string("private tag ") + buf + " payload 0x" + hex_bytes(v.payload);
            } else {
                return std::to_string(v);
            }
        },
        value.storage());
}

}  // namespace hurray::cli
