// SPDX-License-Identifier: Apache-2.0
// The SafeTensors JSON header: parsed with nlohmann/json, validated entry by entry.
//
// nlohmann/json keeps no positions and sorts object keys, so a first linear scan of the
// text records where each key of the top object (tensor names, `__metadata__`) and of
// the objects inside it (dtype, shape, data_offsets, metadata keys) starts: that gives
// the header's order and the byte offsets of errors, and finds duplicate keys (which the
// JSON parser would silently merge). The scan also bounds the nesting (3 levels) and the
// length of arrays (64 values), so that a hostile header cannot make the parsed document
// much larger than the text.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "convert/safetensors_internal.hpp"
#include "hurray/core/checked_math.hpp"
#include "hurray/convert/safetensors.hpp"

namespace hurray::convert::detail {

namespace {

using nlohmann::json;

/// Bytes before the header in the file (the u64 length).
constexpr uint64_t kHeaderBase = 8;
/// Deepest nesting a SafeTensors header needs: top object, entry, shape array.
constexpr size_t kMaxDepth = 3;
/// Longest array a SafeTensors header needs (a shape of kMaxRank dimensions).
constexpr size_t kMaxArrayValues = kMaxRank;

/// A key found by the scan: where its opening quote is in the text, its raw (still
/// escaped) characters, and for a key of an inner object the index of the top-level key
/// whose value holds it.
struct ScannedKey {
    size_t offset = 0;
    std::string_view raw;
    size_t parent = 0;
};

struct ScanResult {
    std::vector<ScannedKey> top;    // keys of the top object, in text order
    std::vector<ScannedKey> inner;  // keys of the objects one level down, in text order
};

Error scan_error(ErrorCode code, const std::string& what, size_t pos) {
    return {code, "SafeTensors header: " + what, kHeaderBase + pos};
}

/// The linear pre-scan (see the file comment). It does not validate the JSON: the parser
/// does that after it; it only must not misread valid JSON, and stays in bounds on any.
Result<ScanResult> scan_keys(std::string_view text) {
    struct Level {
        char kind;          // '{' or '['
        size_t values = 0;  // array values so far (commas + 1)
    };
    ScanResult out;
    std::vector<Level> stack;
    bool expect_key = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '"') {
            const size_t start = i;
            ++i;
            while (i < text.size() && text[i] != '"') {
                i += text[i] == '\\' ? 2 : 1;
            }
            if (i >= text.size()) {
                break;  // unterminated string: the parser reports it
            }
            if (expect_key && !stack.empty() && stack.back().kind == '{') {
                const std::string_view raw = text.substr(start + 1, i - start - 1);
                if (stack.size() == 1) {
                    out.top.push_back({start, raw, 0});
                } else if (stack.size() == 2 && !out.top.empty()) {
                    out.inner.push_back({start, raw, out.top.size() - 1});
                }
            }
            expect_key = false;
            continue;
        }
        switch (c) {
            case '{':
            case '[':
                if (stack.size() == kMaxDepth) {
                    return scan_error(ErrorCode::kInvalidDocument,
                                      "nesting deeper than 3 levels (a SafeTensors header has an "
                                      "object of objects holding arrays)",
                                      i);
                }
                stack.push_back({c, 0});
                expect_key = c == '{';
                break;
            case '}':
            case ']':
                if (!stack.empty()) {
                    stack.pop_back();
                }
                expect_key = false;
                break;
            case ',':
                if (!stack.empty()) {
                    if (stack.back().kind == '{') {
                        expect_key = true;
                    } else if (++stack.back().values >= kMaxArrayValues) {
                        return scan_error(ErrorCode::kInvalidDocument,
                                          "array of more than 64 values (a shape has at most 64 "
                                          "dimensions)",
                                          i);
                    }
                }
                break;
            default:
                break;
        }
    }
    return out;
}

/// The decoded (unescaped) text of a key the parser accepted.
std::string decode_key(std::string_view raw) {
    if (raw.find('\\') == std::string_view::npos) {
        return std::string(raw);
    }
    std::string quoted;
    quoted.reserve(raw.size() + 2);
    quoted += '"';
    quoted += raw;
    quoted += '"';
    return json::parse(quoted).get<std::string>();
}

/// The quoted name of a tensor or key for messages.
std::string quote(std::string_view s) {
    std::string q = "'";
    q += s;
    q += '\'';
    return q;
}

/// Where the fields of one top-level entry's object are in the file.
using FieldOffsets = std::unordered_map<std::string, uint64_t>;

struct EntryContext {
    std::string_view name;
    uint64_t key_offset = 0;  // file offset of the entry's key
    const FieldOffsets* fields = nullptr;

    [[nodiscard]] uint64_t field_offset(const std::string& field) const {
        if (fields != nullptr) {
            if (auto it = fields->find(field); it != fields->end()) {
                return it->second;
            }
        }
        return key_offset;
    }
    [[nodiscard]] Error error(ErrorCode code, const std::string& field,
                              const std::string& what) const {
        return {code, "tensor " + quote(name) + ": " + field + ": " + what, field_offset(field)};
    }
};

std::string known_dtypes() {
    return "F64, F32, F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8, BOOL, F8_E4M3, F8_E5M2, "
           "F8_E8M0, F4, F6_E2M3, F6_E3M2, C64";
}

Result<SafeTensorsEntry> parse_entry(const EntryContext& ctx, const json& value,
                                     uint64_t data_size) {
    if (!value.is_object()) {
        return ctx.error(ErrorCode::kInvalidFile, "entry",
                         std::string("not an object (a ") + value.type_name() + ")");
    }
    SafeTensorsEntry e;
    e.name = std::string(ctx.name);
    e.header_offset = ctx.key_offset;

    // dtype
    const auto dtype = value.find("dtype");
    if (dtype == value.end()) {
        return ctx.error(ErrorCode::kInvalidFile, "dtype", "missing");
    }
    if (!dtype->is_string()) {
        return ctx.error(ErrorCode::kInvalidFile, "dtype",
                         std::string("not a string (a ") + dtype->type_name() + ")");
    }
    const auto& dtype_name = dtype->get_ref<const std::string&>();
    const auto type = safetensors_element_type(dtype_name);
    if (!type) {
        const bool fnuz = dtype_name == "F8_E4M3FNUZ" || dtype_name == "F8_E5M2FNUZ";
        return ctx.error(
            ErrorCode::kUnknownElementType, "dtype",
            quote(dtype_name) +
                (fnuz ? " has no Hurray element type (FNUZ float8 variants are not "
                        "in the spec)"
                      : " is not a SafeTensors dtype this reader knows (" + known_dtypes() + ")"));
    }
    e.type = *type;

    // shape
    const auto shape = value.find("shape");
    if (shape == value.end()) {
        return ctx.error(ErrorCode::kInvalidFile, "shape", "missing");
    }
    if (!shape->is_array()) {
        return ctx.error(ErrorCode::kInvalidFile, "shape",
                         std::string("not an array (a ") + shape->type_name() + ")");
    }
    if (shape->size() > kMaxRank) {
        return ctx.error(ErrorCode::kRankTooLarge, "shape",
                         std::to_string(shape->size()) + " dimensions (at most 64)");
    }
    uint64_t count = 1;
    bool overflow = false;
    for (size_t d = 0; d < shape->size(); ++d) {
        const json& dim = (*shape)[d];
        if (!dim.is_number_unsigned()) {
            return ctx.error(ErrorCode::kInvalidShape, "shape",
                             "dimension " + std::to_string(d) +
                                 " is not a non-negative integer below 2^64 (a " + dim.type_name() +
                                 ")");
        }
        const auto n = dim.get<uint64_t>();
        if (n == kDynamicDim) {
            return ctx.error(ErrorCode::kInvalidShape, "shape",
                             "dimension " + std::to_string(d) + " is 2^64-1 (not a size)");
        }
        e.shape.push_back(n);
        if (const auto p = hurray::mul_u64(count, n)) {
            count = *p;
        } else {
            overflow = true;  // still 0 if a later dimension is 0
        }
    }
    if (std::find(e.shape.begin(), e.shape.end(), uint64_t{0}) != e.shape.end()) {
        count = 0;
        overflow = false;
    }
    if (overflow) {
        return ctx.error(ErrorCode::kSizeOverflow, "shape", "the element count overflows 64 bits");
    }
    e.element_count = count;

    // data_offsets
    const auto offsets = value.find("data_offsets");
    if (offsets == value.end()) {
        return ctx.error(ErrorCode::kInvalidFile, "data_offsets", "missing");
    }
    if (!offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
        !(*offsets)[1].is_number_unsigned()) {
        return ctx.error(ErrorCode::kInvalidFile, "data_offsets",
                         "not an array of two non-negative integers [begin, end]");
    }
    e.begin = (*offsets)[0].get<uint64_t>();
    e.end = (*offsets)[1].get<uint64_t>();
    if (e.begin > e.end) {
        return ctx.error(
            ErrorCode::kInvalidFile, "data_offsets",
            "begin " + std::to_string(e.begin) + " is after end " + std::to_string(e.end));
    }
    if (e.end > data_size) {
        return ctx.error(ErrorCode::kTruncated, "data_offsets",
                         "end " + std::to_string(e.end) + " is past the data area (" +
                             std::to_string(data_size) + " bytes)");
    }

    // Size: SafeTensors stores BOOL as one byte per element, the others at their width;
    // a sub-byte tensor must fill whole bytes (as the format's reference reader demands).
    const uint32_t bits = e.type == ElementType::kBool ? 8 : bit_width(e.type);
    const auto total_bits = hurray::mul_u64(count, bits);
    if (!total_bits) {
        return ctx.error(ErrorCode::kSizeOverflow, "shape",
                         "the byte size of " + std::to_string(count) + " elements overflows");
    }
    if (*total_bits % 8 != 0) {
        return ctx.error(ErrorCode::kSizeMismatch, "shape",
                         std::to_string(count) + " elements of " + std::to_string(bits) +
                             " bits are not a whole number of bytes");
    }
    if (*total_bits / 8 != e.end - e.begin) {
        return ctx.error(ErrorCode::kSizeMismatch, "data_offsets",
                         "span of " + std::to_string(e.end - e.begin) + " bytes, but shape and " +
                             dtype_name + " need " + std::to_string(*total_bits / 8));
    }
    return e;
}

Status parse_metadata(const json& value, uint64_t key_offset, const std::vector<ScannedKey>& keys,
                      size_t parent, KvMetadata& kv) {
    if (!value.is_object()) {
        return Error(
            ErrorCode::kInvalidFile,
            std::string("__metadata__: not an object of strings (a ") + value.type_name() + ")",
            key_offset);
    }
    for (const ScannedKey& k : keys) {
        if (k.parent != parent) {
            continue;
        }
        std::string key = decode_key(k.raw);
        const uint64_t offset = kHeaderBase + k.offset;
        const auto it = value.find(key);
        if (it == value.end()) {
            continue;  // cannot happen for a key the scan found; nothing to add
        }
        if (!it->is_string()) {
            return Error(
                ErrorCode::kInvalidFile,
                "__metadata__: " + quote(key) + ": not a string (a " + it->type_name() + ")",
                offset);
        }
        if (auto s = kv.add(key, KvValue::string(it->get<std::string>())); !s) {
            return s.error().with_context({.prefix = "__metadata__", .field = "__metadata__", .offset = offset});
        }
    }
    return Status::success();
}

Result<SafeTensorsHeader> parse_header(std::string_view text, uint64_t data_size) {
    auto scanned = scan_keys(text);
    if (!scanned) {
        return scanned.error();
    }
    json root;
    try {
        root = json::parse(text.begin(), text.end());
    } catch (const json::parse_error& e) {
        // e.byte: 1-based position of the character after the error.
        const uint64_t pos = e.byte > 0 ? e.byte - 1 : 0;
        return Error(ErrorCode::kInvalidDocument,
                     std::string("SafeTensors header: not valid JSON: ") + e.what(),
                     kHeaderBase + std::min<uint64_t>(pos, text.size()));
    }
    if (!root.is_object()) {
        return Error(
            ErrorCode::kInvalidDocument,
            std::string("SafeTensors header: not a JSON object (a ") + root.type_name() + ")",
            kHeaderBase);
    }

    // Names in text order, duplicates refused (the parser keeps one of them silently).
    std::vector<std::string> names;
    names.reserve(scanned->top.size());
    std::unordered_set<std::string> seen;
    seen.reserve(scanned->top.size());
    for (const ScannedKey& k : scanned->top) {
        names.push_back(decode_key(k.raw));
        if (!seen.insert(names.back()).second) {
            return Error(ErrorCode::kDuplicateName,
                         "SafeTensors header: key " + quote(names.back()) + " appears twice",
                         kHeaderBase + k.offset);
        }
    }
    if (names.size() != root.size()) {
        return Error(ErrorCode::kInvalidDocument,
                     "SafeTensors header: could not locate every key of the top object",
                     kHeaderBase);
    }
    // Field offsets of each entry, duplicates refused likewise.
    std::vector<FieldOffsets> fields(names.size());
    for (const ScannedKey& k : scanned->inner) {
        if (k.parent >= fields.size()) {
            continue;
        }
        if (!fields[k.parent].emplace(decode_key(k.raw), kHeaderBase + k.offset).second) {
            return Error(ErrorCode::kDuplicateName,
                         "SafeTensors header: " + quote(names[k.parent]) + ": key " +
                             quote(decode_key(k.raw)) + " appears twice",
                         kHeaderBase + k.offset);
        }
    }

    SafeTensorsHeader header;
    header.tensors.reserve(names.size());
    for (size_t i = 0; i < names.size(); ++i) {
        const json& value = root.at(names[i]);
        const uint64_t key_offset = kHeaderBase + scanned->top[i].offset;
        if (names[i] == kSafeTensorsMetadataKey) {
            if (auto s = parse_metadata(value, key_offset, scanned->inner, i, header.kv); !s) {
                return s.error();
            }
            continue;
        }
        const EntryContext ctx{names[i], key_offset, &fields[i]};
        auto entry = parse_entry(ctx, value, data_size);
        if (!entry) {
            return entry.error();
        }
        header.tensors.push_back(std::move(*entry));
    }

    // No two spans that hold bytes may share one: sort by begin, compare neighbours.
    std::vector<const SafeTensorsEntry*> spans;
    spans.reserve(header.tensors.size());
    for (const auto& t : header.tensors) {
        if (t.end > t.begin) {
            spans.push_back(&t);
        }
    }
    std::sort(spans.begin(), spans.end(), [](const SafeTensorsEntry* a, const SafeTensorsEntry* b) {
        return a->begin < b->begin;
    });
    for (size_t i = 1; i < spans.size(); ++i) {
        if (spans[i - 1]->end > spans[i]->begin) {
            return Error(ErrorCode::kOverlap,
                         "tensor " + quote(spans[i]->name) + ": data_offsets: [" +
                             std::to_string(spans[i]->begin) + ", " +
                             std::to_string(spans[i]->end) + ") overlaps tensor " +
                             quote(spans[i - 1]->name) + "'s [" +
                             std::to_string(spans[i - 1]->begin) + ", " +
                             std::to_string(spans[i - 1]->end) + ")",
                         spans[i]->header_offset);
        }
    }
    return header;
}

}  // namespace

Result<SafeTensorsHeader> parse_safetensors_header(std::string_view text, uint64_t data_size) {
    try {
        return parse_header(text, data_size);
    } catch (const std::bad_alloc&) {
        return Error(ErrorCode::kOutOfMemory, "SafeTensors header: out of memory while parsing",
                     kHeaderBase);
    } catch (const std::exception& e) {
        return Error(ErrorCode::kInvalidDocument, std::string("SafeTensors header: ") + e.what(),
                     kHeaderBase);
    }
}

}  // namespace hurray::convert::detail
