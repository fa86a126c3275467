// SPDX-License-Identifier: Apache-2.0
#include "hurray/io/kv_metadata.hpp"

#include "hurray/core/byte_io.hpp"
#include "hurray/core/checked_math.hpp"
#include "hurray/core/text.hpp"
#include "hurray/io/file_format.hpp"
#include "io/byte_view.hpp"
#include "io/kv_section.hpp"

#include <cstring>
#include <string>
#include <type_traits>

namespace hurray {

namespace {

using detail::byte_view;
using detail::char_view;

constexpr uint8_t kFirstPrivateTag = 0xF0;
constexpr uint8_t kLastPrivateTag = 0xFE;

bool is_private_tag(uint8_t tag) noexcept { return tag >= kFirstPrivateTag && tag <= kLastPrivateTag; }

uint64_t bits_of(double d) noexcept {
    uint64_t v = 0;
    std::memcpy(&v, &d, sizeof v);
    return v;
}

std::string key_text(std::string_view key) {
    constexpr size_t kShown = 64;
    std::string s = "KV '";
    s.append(key.substr(0, kShown));
    s += key.size() > kShown ? "...'" : "'";
    return s;
}

// ---- encoding ------------------------------------------------------------

class Encoder {
public:
    void u8(uint8_t v) { out_.push_back(v); }
    void u16(uint16_t v) { le(v); }
    void u32(uint32_t v) { le(v); }
    void u64(uint64_t v) { le(v); }
    void bytes(std::span<const uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }
    void sized(std::span<const uint8_t> b) {
        u32(static_cast<uint32_t>(b.size()));
        bytes(b);
    }
    std::vector<uint8_t>& out() { return out_; }

private:
    template <typename T>
    void le(T v) {
        for (size_t i = 0; i < sizeof(T); ++i) {
            out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
        }
    }
    std::vector<uint8_t> out_;
};

void encode_array(Encoder& e, const KvArray& a) {
    e.u8(static_cast<uint8_t>(a.element_type()));
    e.u32(static_cast<uint32_t>(a.size()));
    std::visit(
        [&](const auto& values) {
            using V = typename std::decay_t<decltype(values)>::value_type;
            for (const auto& v : values) {
                if constexpr (std::is_same_v<V, std::string>) {
                    e.sized(byte_view(v));
                } else if constexpr (std::is_same_v<V, int64_t>) {
                    e.u64(static_cast<uint64_t>(v));
                } else if constexpr (std::is_same_v<V, uint64_t>) {
                    e.u64(v);
                } else if constexpr (std::is_same_v<V, double>) {
                    e.u64(bits_of(v));
                } else if constexpr (std::is_same_v<V, bool>) {
                    e.u8(v ? 1 : 0);
                } else {
                    e.sized(v);
                }
            }
        },
        a.values);
}

void encode_value(Encoder& e, const KvValue& value) {
    e.u8(value.tag());
    const auto& s = value.storage();
    switch (s.index()) {
        case 0: e.sized(byte_view(std::get<0>(s))); break;
        case 1: e.u64(static_cast<uint64_t>(std::get<1>(s))); break;
        case 2: e.u64(std::get<2>(s)); break;
        case 3: e.u64(bits_of(std::get<3>(s))); break;
        case 4: e.u8(std::get<4>(s) ? 1 : 0); break;
        case 5: e.sized(std::get<5>(s)); break;
        case 6: encode_array(e, std::get<6>(s)); break;
        default: e.bytes(std::get<7>(s).payload); break;
    }
}

Status check_length(std::string_view key, uint64_t n, const char* what) {
    if (n > UINT32_MAX) {
        return Error(ErrorCode::kSizeOverflow,
                     key_text(key) + ": " + what + " of " + dec(n) + " does not fit its uint32 field");
    }
    return Status::success();
}

Status check_value(std::string_view key, const KvValue& value, bool allow_private) {
    const auto& s = value.storage();
    if (const auto* str = std::get_if<0>(&s)) {
        HURRAY_RETURN_IF_ERROR(check_length(key, str->size(), "string length"));
        if (!is_valid_utf8(*str)) {
            return Error(ErrorCode::kInvalidArgument, key_text(key) + ": string value is not valid UTF-8");
        }
    } else if (const auto* b = std::get_if<5>(&s)) {
        HURRAY_RETURN_IF_ERROR(check_length(key, b->size(), "bytes length"));
    } else if (const auto* a = std::get_if<6>(&s)) {
        HURRAY_RETURN_IF_ERROR(check_length(key, a->size(), "array count"));
        if (const auto* strs = std::get_if<0>(&a->values)) {
            for (size_t i = 0; i < strs->size(); ++i) {
                HURRAY_RETURN_IF_ERROR(check_length(key, (*strs)[i].size(), "array string length"));
                if (!is_valid_utf8((*strs)[i])) {
                    return Error(ErrorCode::kInvalidArgument,
                                 key_text(key) + ": array element " + dec(i) + " is not valid UTF-8");
                }
            }
        } else if (const auto* bs = std::get_if<5>(&a->values)) {
            for (const auto& e : *bs) {
                HURRAY_RETURN_IF_ERROR(check_length(key, e.size(), "array bytes length"));
            }
        }
    } else if (const auto* p = std::get_if<7>(&s)) {
        if (!allow_private) {
            return Error(ErrorCode::kInvalidArgument,
                         key_text(key) + ": private value tag " + hex(p->tag) +
                             " needs allow_private (SPEC-NOTES 17)");
        }
        if (!is_private_tag(p->tag)) {
            return Error(ErrorCode::kInvalidArgument,
                         key_text(key) + ": private value tag " + hex(p->tag) + " is not in 0xF0-0xFE");
        }
    }
    return Status::success();
}

// ---- decoding ------------------------------------------------------------

Error kv_error(ErrorCode code, std::string_view key, const std::string& what, uint64_t at) {
    return {code, key_text(key) + ": " + what, at};
}

Result<std::string> read_string(ByteReader& r, std::string_view key, const char* field) {
    HURRAY_ASSIGN_OR_RETURN(const uint32_t n, r.u32(field));
    const uint64_t at = r.abs_pos();
    HURRAY_ASSIGN_OR_RETURN(auto b, r.bytes(n, field));
    std::string s(char_view(b));
    if (!is_valid_utf8(s)) {
        return kv_error(ErrorCode::kInvalidFile, key, std::string(field) + " is not valid UTF-8", at);
    }
    return s;
}

Result<std::vector<uint8_t>> read_bytes(ByteReader& r, const char* field) {
    HURRAY_ASSIGN_OR_RETURN(const uint32_t n, r.u32(field));
    HURRAY_ASSIGN_OR_RETURN(auto b, r.bytes(n, field));
    return std::vector<uint8_t>(b.begin(), b.end());
}

Result<bool> read_bool(ByteReader& r, std::string_view key, const char* field) {
    const uint64_t at = r.abs_pos();
    HURRAY_ASSIGN_OR_RETURN(const uint8_t v, r.u8(field));
    if (v > 1) {
        return kv_error(ErrorCode::kInvalidFile, key, std::string(field) + " is " + hex(v) + ", must be 0 or 1",
                        at);
    }
    return v == 1;
}

Status check_count(ByteReader& r, std::string_view key, uint64_t count, uint64_t min_size, uint64_t at) {
    if (count > r.remaining() / min_size) {
        return kv_error(ErrorCode::kInvalidFile, key,
                        "array count " + dec(count) + " cannot fit in the " + dec(r.remaining()) +
                            " bytes left in the KV section",
                        at);
    }
    return Status::success();
}

template <typename T, typename ReadOne>
Result<KvArray> read_array_of(ByteReader& r, std::string_view key, uint64_t count, uint64_t min_size,
                              uint64_t at, ReadOne read_one) {
    HURRAY_RETURN_IF_ERROR(check_count(r, key, count, min_size, at));
    std::vector<T> values;
    values.reserve(static_cast<size_t>(count));
    for (uint64_t i = 0; i < count; ++i) {
        HURRAY_ASSIGN_OR_RETURN(T v, read_one());
        values.push_back(std::move(v));
    }
    return KvArray{std::move(values)};
}

Result<KvArray> read_array(ByteReader& r, std::string_view key) {
    const uint64_t tag_at = r.abs_pos();
    HURRAY_ASSIGN_OR_RETURN(const uint8_t element_tag, r.u8("KV array element tag"));
    const uint64_t count_at = r.abs_pos();
    HURRAY_ASSIGN_OR_RETURN(const uint32_t count, r.u32("KV array count"));
    switch (element_tag) {
        case 0x01:
            return read_array_of<std::string>(r, key, count, 4, count_at,
                                              [&] { return read_string(r, key, "array string element"); });
        case 0x02:
            return read_array_of<int64_t>(r, key, count, 8, count_at, [&] { return r.i64("array int64 element"); });
        case 0x03:
            return read_array_of<uint64_t>(r, key, count, 8, count_at, [&] { return r.u64("array uint64 element"); });
        case 0x04:
            return read_array_of<double>(r, key, count, 8, count_at, [&] { return r.f64("array float64 element"); });
        case 0x05: {
            HURRAY_RETURN_IF_ERROR(check_count(r, key, count, 1, count_at));
            std::vector<bool> values(count);
            for (uint32_t i = 0; i < count; ++i) {
                HURRAY_ASSIGN_OR_RETURN(const bool v, read_bool(r, key, "array bool element"));
                values[i] = v;
            }
            return KvArray{std::move(values)};
        }
        case 0x06:
            return read_array_of<std::vector<uint8_t>>(r, key, count, 4, count_at,
                                                       [&] { return read_bytes(r, "array bytes element"); });
        default:
            return kv_error(ErrorCode::kInvalidFile, key,
                            "array element tag " + hex(element_tag) + " must be 0x01-0x06", tag_at);
    }
}

}  // namespace

std::string_view kv_type_name(uint8_t tag) noexcept {
    switch (tag) {
        case 0x01: return "string";
        case 0x02: return "int64";
        case 0x03: return "uint64";
        case 0x04: return "float64";
        case 0x05: return "bool";
        case 0x06: return "bytes";
        case 0x07: return "array";
        default: return is_private_tag(tag) ? "private" : "unknown";
    }
}

size_t KvArray::size() const noexcept {
    return std::visit([](const auto& v) { return v.size(); }, values);
}

bool KvArray::operator==(const KvArray& other) const {
    if (values.index() != other.values.index()) {
        return false;
    }
    if (const auto* a = std::get_if<std::vector<double>>(&values)) {
        const auto& b = std::get<std::vector<double>>(other.values);
        if (a->size() != b.size()) {
            return false;
        }
        for (size_t i = 0; i < a->size(); ++i) {
            if (bits_of((*a)[i]) != bits_of(b[i])) {
                return false;
            }
        }
        return true;
    }
    return values == other.values;
}

uint8_t KvValue::tag() const noexcept {
    if (const auto* p = as_private()) {
        return p->tag;
    }
    return static_cast<uint8_t>(v_.index() + 1);
}

bool KvValue::operator==(const KvValue& other) const {
    if (v_.index() != other.v_.index()) {
        return false;
    }
    if (const auto* d = as_float64()) {
        return bits_of(*d) == bits_of(*other.as_float64());
    }
    return v_ == other.v_;
}

Status KvMetadata::set(std::string key, KvValue value) {
    HURRAY_RETURN_IF_ERROR(check_name(key, "KV key"));
    if (auto it = positions_.find(key); it != positions_.end()) {
        entries_[it->second].value = std::move(value);
        return Status::success();
    }
    positions_.emplace(key, entries_.size());
    entries_.push_back(KvEntry{std::move(key), std::move(value)});
    return Status::success();
}

Status KvMetadata::add(std::string key, KvValue value) {
    HURRAY_RETURN_IF_ERROR(check_name(key, "KV key"));
    if (positions_.contains(key)) {
        return Error(ErrorCode::kDuplicateName, key_text(key) + ": key already present");
    }
    positions_.emplace(key, entries_.size());
    entries_.push_back(KvEntry{std::move(key), std::move(value)});
    return Status::success();
}

bool KvMetadata::erase(std::string_view key) {
    auto it = positions_.find(key);
    if (it == positions_.end()) {
        return false;
    }
    const size_t pos = it->second;
    positions_.erase(it);
    entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(pos));
    for (auto& [k, p] : positions_) {
        if (p > pos) {
            --p;
        }
    }
    return true;
}

std::optional<KvValue> KvMetadata::take(std::string_view key) {
    auto it = positions_.find(key);
    if (it == positions_.end()) {
        return std::nullopt;
    }
    std::optional<KvValue> value(std::move(entries_[it->second].value));
    erase(key);
    return value;
}

const KvValue* KvMetadata::find(std::string_view key) const noexcept {
    auto it = positions_.find(key);
    return it == positions_.end() ? nullptr : &entries_[it->second].value;
}

namespace {

template <typename T>
Result<const T*> typed(const KvMetadata& kv, std::string_view key, KvType want) {
    const KvValue* v = kv.find(key);
    if (v == nullptr) {
        return Error(ErrorCode::kNotFound, key_text(key) + ": no such key");
    }
    const T* p = std::get_if<T>(&v->storage());
    if (p == nullptr) {
        return Error(ErrorCode::kTypeMismatch, key_text(key) + ": holds " + std::string(kv_type_name(v->tag())) +
                                                   ", not " + std::string(kv_type_name(static_cast<uint8_t>(want))));
    }
    return p;
}

}  // namespace

Result<std::string_view> KvMetadata::get_string(std::string_view key) const {
    HURRAY_ASSIGN_OR_RETURN(const auto* p, typed<std::string>(*this, key, KvType::kString));
    return std::string_view(*p);
}
Result<int64_t> KvMetadata::get_int64(std::string_view key) const {
    HURRAY_ASSIGN_OR_RETURN(const auto* p, typed<int64_t>(*this, key, KvType::kInt64));
    return *p;
}
Result<uint64_t> KvMetadata::get_uint64(std::string_view key) const {
    HURRAY_ASSIGN_OR_RETURN(const auto* p, typed<uint64_t>(*this, key, KvType::kUint64));
    return *p;
}
Result<double> KvMetadata::get_float64(std::string_view key) const {
    HURRAY_ASSIGN_OR_RETURN(const auto* p, typed<double>(*this, key, KvType::kFloat64));
    return *p;
}
Result<bool> KvMetadata::get_bool(std::string_view key) const {
    HURRAY_ASSIGN_OR_RETURN(const auto* p, typed<bool>(*this, key, KvType::kBool));
    return *p;
}
Result<std::span<const uint8_t>> KvMetadata::get_bytes(std::string_view key) const {
    HURRAY_ASSIGN_OR_RETURN(const auto* p, typed<std::vector<uint8_t>>(*this, key, KvType::kBytes));
    return std::span<const uint8_t>(*p);
}
Result<const KvArray*> KvMetadata::get_array(std::string_view key) const {
    return typed<KvArray>(*this, key, KvType::kArray);
}

Status check_kv(const KvMetadata& kv, bool allow_private) {
    if (kv.size() > UINT32_MAX) {
        return Error(ErrorCode::kSizeOverflow, "KV: " + dec(kv.size()) + " entries do not fit kv_count (uint32)");
    }
    for (const KvEntry& e : kv.entries()) {
        HURRAY_RETURN_IF_ERROR(check_name(e.key, "KV key"));
        HURRAY_RETURN_IF_ERROR(check_value(e.key, e.value, allow_private));
    }
    return Status::success();
}

Result<std::vector<uint8_t>> encode_kv_section(const KvMetadata& kv, bool allow_private) {
    HURRAY_RETURN_IF_ERROR(check_kv(kv, allow_private));
    Encoder e;
    e.u32(static_cast<uint32_t>(kv.size()));
    for (const KvEntry& entry : kv.entries()) {
        e.u16(static_cast<uint16_t>(entry.key.size()));
        e.bytes(byte_view(entry.key));
        encode_value(e, entry.value);
        if (e.out().size() > UINT32_MAX) {
            return Error(ErrorCode::kSizeOverflow, "KV section: larger than 4 GiB - 1 (kv_length is a uint32)");
        }
    }
    return std::move(e.out());
}

Result<KvMetadata> decode_kv_section(std::span<const uint8_t> bytes, uint64_t base, const KvDecodeOptions& options) {
    return detail::decode_kv_section_except(bytes, base, options, {}, nullptr);
}

Result<KvMetadata> detail::decode_kv_section_except(std::span<const uint8_t> bytes, uint64_t base,
                                                    const KvDecodeOptions& options, std::string_view set_aside,
                                                    std::span<const uint8_t>* set_aside_value) {
    if (set_aside_value != nullptr) {
        *set_aside_value = {};
    }
    bool set_aside_seen = false;
    ByteReader r(bytes, base);
    HURRAY_ASSIGN_OR_RETURN(const uint32_t count, r.u32("kv_count"));
    // An entry takes at least 5 bytes (u16 length, 1-byte key, tag, 1-byte payload).
    constexpr uint64_t kMinEntry = 5;
    if (count > r.remaining() / kMinEntry) {
        return Error(ErrorCode::kInvalidFile,
                     "kv_count: " + dec(count) + " entries cannot fit in the " + dec(r.remaining()) +
                         " bytes of the KV section after the count",
                     base);
    }
    KvMetadata kv;
    for (uint32_t i = 0; i < count; ++i) {
        const uint64_t entry_at = r.abs_pos();
        HURRAY_ASSIGN_OR_RETURN(const uint16_t key_length, r.u16("KV key_length"));
        if (key_length == 0) {
            return Error(ErrorCode::kInvalidName, "KV entry " + dec(i) + ": key_length is 0", entry_at);
        }
        HURRAY_ASSIGN_OR_RETURN(auto key_bytes, r.bytes(key_length, "KV key"));
        std::string key(char_view(key_bytes));
        if (!is_valid_utf8(key)) {
            return Error(ErrorCode::kInvalidName, "KV entry " + dec(i) + ": key is not valid UTF-8", entry_at + 2);
        }
        const uint64_t tag_at = r.abs_pos();
        HURRAY_ASSIGN_OR_RETURN(const uint8_t tag, r.u8("KV value_tag"));
        if (!set_aside.empty() && key == set_aside) {
            // Every earlier entry under this key went through this branch.
            if (set_aside_seen) {
                return Error(ErrorCode::kDuplicateName, key_text(key) + ": duplicate key", entry_at);
            }
            set_aside_seen = true;
            if (tag == 0x06) {
                // The payload stays where it is: a view of `bytes`, checked to lie inside it.
                HURRAY_ASSIGN_OR_RETURN(const uint32_t n, r.u32("bytes value"));
                HURRAY_ASSIGN_OR_RETURN(auto payload, r.bytes(n, "bytes value"));
                if (set_aside_value != nullptr) {
                    *set_aside_value = payload;
                }
                continue;
            }
        }
        KvValue value;
        switch (tag) {
            case 0x01: {
                HURRAY_ASSIGN_OR_RETURN(auto s, read_string(r, key, "string value"));
                value = KvValue::string(std::move(s));
                break;
            }
            case 0x02: {
                HURRAY_ASSIGN_OR_RETURN(const int64_t v, r.i64("int64 value"));
                value = KvValue::int64(v);
                break;
            }
            case 0x03: {
                HURRAY_ASSIGN_OR_RETURN(const uint64_t v, r.u64("uint64 value"));
                value = KvValue::uint64(v);
                break;
            }
            case 0x04: {
                HURRAY_ASSIGN_OR_RETURN(const double v, r.f64("float64 value"));
                value = KvValue::float64(v);
                break;
            }
            case 0x05: {
                HURRAY_ASSIGN_OR_RETURN(const bool v, read_bool(r, key, "bool value"));
                value = KvValue::boolean(v);
                break;
            }
            case 0x06: {
                HURRAY_ASSIGN_OR_RETURN(auto v, read_bytes(r, "bytes value"));
                value = KvValue::bytes(std::move(v));
                break;
            }
            case 0x07: {
                HURRAY_ASSIGN_OR_RETURN(auto a, read_array(r, key));
                value = KvValue::array(std::move(a));
                break;
            }
            default: {
                if (!is_private_tag(tag)) {
                    return kv_error(ErrorCode::kInvalidFile, key,
                                    "value_tag " + hex(tag) + " is reserved (0x00, 0x08-0xEF, 0xFF)", tag_at);
                }
                if (!options.accept_private_tags || !options.private_length) {
                    return kv_error(ErrorCode::kUnsupported, key,
                                    "value_tag " + hex(tag) +
                                        " is implementation-private; rejected unless the caller opts in",
                                    tag_at);
                }
                const auto rest = bytes.subspan(static_cast<size_t>(r.abs_pos() - base));
                HURRAY_ASSIGN_OR_RETURN(const uint64_t n, options.private_length(tag, rest));
                HURRAY_ASSIGN_OR_RETURN(auto payload, r.bytes(n, "private value payload"));
                value = KvValue::private_value(KvPrivateValue{tag, {payload.begin(), payload.end()}});
                break;
            }
        }
        if (kv.contains(key)) {
            return Error(ErrorCode::kDuplicateName, key_text(key) + ": duplicate key", entry_at);
        }
        if (set_aside_seen && key == set_aside) {
            continue;  // set aside, of another type than bytes: decoded (so checked), not kept
        }
        HURRAY_RETURN_IF_ERROR(kv.add(std::move(key), std::move(value)));
    }
    if (r.remaining() != 0) {
        return Error(ErrorCode::kInvalidFile,
                     "KV section: " + dec(r.remaining()) + " bytes left over after the last of " + dec(count) +
                         " entries",
                     r.abs_pos());
    }
    return kv;
}

}  // namespace hurray
