// SPDX-License-Identifier: Apache-2.0
// The .npy header: parsing its Python dict literal, the dtypes, and writing headers.
#include "convert/npy_format.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

#include "hurray/core/checked_math.hpp"
#include "hurray/core/element_type.hpp"

namespace hurray::convert::detail {
namespace {


/// A value of the header's Python literal.
struct PyValue {
    enum class Kind : uint8_t { kString, kBool, kNone, kInt, kTuple, kList, kDict };
    Kind kind = Kind::kNone;
    std::string text;            // kString
    bool flag = false;           // kBool
    uint64_t number = 0;         // kInt
    std::vector<PyValue> items;  // kTuple, kList; kDict: key, value, ...
    uint64_t offset = 0;         // where it starts, in the file
};

/// A recursive-descent parser of the literals NumPy writes in headers.
class PyParser {
public:
    PyParser(std::string_view text, uint64_t base, std::string what)
        : text_(text), base_(base), what_(std::move(what)) {}

    Result<PyValue> parse_document() {
        HURRAY_ASSIGN_OR_RETURN(PyValue v, value(0));
        skip_space();
        if (pos_ != text_.size()) {
            return fail("unexpected text after the header dict");
        }
        return v;
    }

private:
    static constexpr int kMaxDepth = 16;

    [[nodiscard]] Error fail(const std::string& why) const {
        return {ErrorCode::kInvalidDocument,
                what_ + ": header: " + why + " at byte " + std::to_string(base_ + pos_),
                base_ + pos_};
    }

    void skip_space() {
        while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                       text_[pos_] == '\n' || text_[pos_] == '\r')) {
            ++pos_;
        }
    }

    bool take(char c) {
        skip_space();
        if (pos_ < text_.size() && text_[pos_] == c) {
            ++pos_;
            return true;
        }
        return false;
    }

    bool take_word(std::string_view w) {
        if (text_.substr(pos_, w.size()) == w) {
            pos_ += w.size();
            return true;
        }
        return false;
    }

    // NOLINTNEXTLINE(misc-no-recursion): bounded by kMaxDepth
    Result<PyValue> value(int depth) {
        if (depth > kMaxDepth) {
            return fail("literal nested too deep");
        }
        skip_space();
        if (pos_ >= text_.size()) {
            return fail("the header ends where a value is expected");
        }
        PyValue v;
        v.offset = base_ + pos_;
        const char c = text_[pos_];
        if (c == '\'' || c == '"') {
            ++pos_;
            const size_t end = text_.find(c, pos_);
            if (end == std::string_view::npos) {
                return fail("unterminated string");
            }
            v.kind = PyValue::Kind::kString;
            v.text = std::string(text_.substr(pos_, end - pos_));
            if (v.text.find('\\') != std::string::npos) {
                return fail("escape sequences in strings are not supported");
            }
            pos_ = end + 1;
            return v;
        }
        if (c >= '0' && c <= '9') {
            v.kind = PyValue::Kind::kInt;
            while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
                const auto digit = static_cast<uint64_t>(text_[pos_] - '0');
                auto m = mul_u64(v.number, 10);
                auto a = m ? add_u64(*m, digit) : std::nullopt;
                if (!a) {
                    return fail("integer overflows 64 bits");
                }
                v.number = *a;
                ++pos_;
            }
            if (pos_ < text_.size() && text_[pos_] == 'L') {  // Python 2 long
                ++pos_;
            }
            return v;
        }
        if (take_word("True")) {
            v.kind = PyValue::Kind::kBool;
            v.flag = true;
            return v;
        }
        if (take_word("False")) {
            v.kind = PyValue::Kind::kBool;
            return v;
        }
        if (take_word("None")) {
            return v;
        }
        if (c == '(' || c == '[' || c == '{') {
            const char close = c == '(' ? ')' : c == '[' ? ']' : '}';
            v.kind = c == '('   ? PyValue::Kind::kTuple
                     : c == '[' ? PyValue::Kind::kList
                                : PyValue::Kind::kDict;
            ++pos_;
            while (true) {
                if (take(close)) {
                    return v;
                }
                HURRAY_ASSIGN_OR_RETURN(PyValue item, value(depth + 1));
                if (v.kind == PyValue::Kind::kDict) {
                    if (item.kind != PyValue::Kind::kString) {
                        return fail("a dict key is not a string");
                    }
                    if (!take(':')) {
                        return fail("':' expected after dict key '" + item.text + "'");
                    }
                    v.items.push_back(std::move(item));
                    HURRAY_ASSIGN_OR_RETURN(PyValue val, value(depth + 1));
                    v.items.push_back(std::move(val));
                } else {
                    v.items.push_back(std::move(item));
                }
                if (take(close)) {
                    return v;
                }
                if (!take(',')) {
                    return fail(std::string("',' or '") + close + "' expected");
                }
            }
        }
        return fail(std::string("unexpected character '") + c + "'");
    }

    std::string_view text_;
    uint64_t base_;
    std::string what_;
    size_t pos_ = 0;
};

uint32_t read_le(std::span<const uint8_t> b, size_t at, size_t n) {
    uint32_t v = 0;
    for (size_t k = 0; k < n; ++k) {
        v |= static_cast<uint32_t>(b[at + k]) << (8 * k);
    }
    return v;
}

std::string quoted(std::string_view s) {
    std::string r;
    r.reserve(s.size() + 2);
    r += '\'';
    r += s;
    r += '\'';
    return r;
}

}  // namespace

Result<uint64_t> npy_data_offset(std::span<const uint8_t> prefix, const std::string& what) {
    if (prefix.size() < 8) {
        return Error(ErrorCode::kTruncated,
                     what + ": magic: " + std::to_string(prefix.size()) +
                         " bytes, a .npy starts with at least 10",
                     0);
    }
    if (std::memcmp(prefix.data(), kNpyMagic, sizeof kNpyMagic) != 0) {
        return Error(ErrorCode::kInvalidMagic, what + ": magic: not \\x93NUMPY", 0);
    }
    const uint8_t major = prefix[6];
    if (major < 1 || major > 3) {
        return Error(ErrorCode::kUnsupportedVersion,
                     what + ": version: " + std::to_string(major) + "." +
                         std::to_string(prefix[7]) + " (1.0, 2.0 and 3.0 are read)",
                     6);
    }
    const size_t len_bytes = major == 1 ? 2 : 4;
    if (prefix.size() < 8 + len_bytes) {
        return Error(ErrorCode::kTruncated,
                     what + ": header_len: the input ends at byte " + std::to_string(prefix.size()),
                     8);
    }
    const uint64_t header_len = read_le(prefix, 8, len_bytes);
    if (header_len > kNpyMaxHeader) {
        return Error(ErrorCode::kInvalidFile,
                     what + ": header_len: " + std::to_string(header_len) + " bytes (at most " +
                         std::to_string(kNpyMaxHeader) + " accepted)",
                     8);
    }
    return 8 + len_bytes + header_len;
}

Result<NpyDtype> parse_npy_descr(std::string_view descr, const std::string& what) {
    auto refuse = [&](const std::string& kind) -> Error {
        return {ErrorCode::kUnsupported,
                what + ": dtype " + quoted(descr) + " (" + kind + ") has no Hurray element type"};
    };
    if (descr.size() < 2) {
        return Error(ErrorCode::kInvalidDocument,
                     what + ": descr " + quoted(descr) + ": not a dtype");
    }
    const char order = descr[0];
    if (order != '<' && order != '>' && order != '|' && order != '=') {
        return Error(
            ErrorCode::kInvalidDocument,
            what + ": descr " + quoted(descr) + ": byte order '" + order + "' is not <, >, | or =");
    }
    const char kind = descr[1];
    const std::string_view size_text = descr.substr(2);
    switch (kind) {
        case 'O':
            return refuse("Python objects");
        case 'U':
            return refuse("unicode strings");
        case 'S':
        case 'a':
            return refuse("byte strings");
        case 'V':
            return refuse("raw or structured records");
        case 'M':
            return refuse("datetime64");
        case 'm':
            return refuse("timedelta64");
        default:
            break;
    }
    uint64_t size = 0;
    for (const char ch : size_text) {
        if (ch < '0' || ch > '9' || size > 1000) {
            return Error(ErrorCode::kInvalidDocument,
                         what + ": descr " + quoted(descr) + ": bad item size");
        }
        size = size * 10 + static_cast<uint64_t>(ch - '0');
    }
    NpyDtype d;
    d.item_size = static_cast<uint32_t>(size);
    d.swap_unit = d.item_size;
    d.big_endian = order == '>' && size > 1;
    bool known = true;
    switch (kind) {
        case 'b':
            known = size == 1;
            d.type = ElementType::kBool;
            break;
        case 'i':
            known = size == 1 || size == 2 || size == 4 || size == 8;
            d.type = size == 1   ? ElementType::kInt8
                     : size == 2 ? ElementType::kInt16
                     : size == 4 ? ElementType::kInt32
                                 : ElementType::kInt64;
            break;
        case 'u':
            known = size == 1 || size == 2 || size == 4 || size == 8;
            d.type = size == 1   ? ElementType::kUInt8
                     : size == 2 ? ElementType::kUInt16
                     : size == 4 ? ElementType::kUInt32
                                 : ElementType::kUInt64;
            break;
        case 'f':
            if (size > 8) {
                return refuse("long double: x87 extended precision, not IEEE binary128");
            }
            known = size == 2 || size == 4 || size == 8;
            d.type = size == 2   ? ElementType::kFloat16
                     : size == 4 ? ElementType::kFloat32
                                 : ElementType::kFloat64;
            break;
        case 'c':
            if (size > 16) {
                return refuse("complex long double");
            }
            known = size == 8 || size == 16;
            d.type = size == 8 ? ElementType::kComplex64 : ElementType::kComplex128;
            d.swap_unit = d.item_size / 2;
            break;
        default:
            return refuse("unknown kind '" + std::string(1, kind) + "'");
    }
    if (!known) {
        return refuse("unknown size");
    }
    return d;
}

Result<std::string> npy_descr_of(ElementType type, const std::string& what) {
    switch (type) {
        case ElementType::kBool:
            return std::string("|b1");
        case ElementType::kInt8:
            return std::string("|i1");
        case ElementType::kUInt8:
            return std::string("|u1");
        case ElementType::kInt16:
            return std::string("<i2");
        case ElementType::kUInt16:
            return std::string("<u2");
        case ElementType::kInt32:
            return std::string("<i4");
        case ElementType::kUInt32:
            return std::string("<u4");
        case ElementType::kInt64:
            return std::string("<i8");
        case ElementType::kUInt64:
            return std::string("<u8");
        case ElementType::kFloat16:
            return std::string("<f2");
        case ElementType::kFloat32:
            return std::string("<f4");
        case ElementType::kFloat64:
            return std::string("<f8");
        case ElementType::kComplex64:
            return std::string("<c8");
        case ElementType::kComplex128:
            return std::string("<c16");
        default:
            break;
    }
    return Error(ErrorCode::kUnsupported,
                 what + ": element type " + std::string(type_name(type)) +
                     " has no NumPy dtype (NumPy has no bfloat16, 8/6/4-bit floats, 4/2-bit "
                     "integers or binary128)");
}

Result<NpyHeader> parse_npy_header(std::span<const uint8_t> bytes, const std::string& what) {
    HURRAY_ASSIGN_OR_RETURN(const uint64_t data_offset, npy_data_offset(bytes, what));
    if (bytes.size() < data_offset) {
        return Error(ErrorCode::kTruncated,
                     what + ": header: " + std::to_string(data_offset) +
                         " bytes declared, the input ends at byte " + std::to_string(bytes.size()),
                     8);
    }
    NpyHeader h;
    h.major = bytes[6];
    h.minor = bytes[7];
    h.data_offset = data_offset;
    const uint64_t start = h.major == 1 ? kNpyPrefixV1 : kNpyPrefixV1 + 2;
    // SAFETY: [start, data_offset) lies within `bytes` (checked above); chars and bytes
    // have the same size and representation.
    const std::string_view text(reinterpret_cast<const char*>(bytes.data() + start),
                                static_cast<size_t>(data_offset - start));
    if (h.major < 3) {
        for (size_t k = 0; k < text.size(); ++k) {
            if (static_cast<unsigned char>(text[k]) > 0x7F) {
                return Error(ErrorCode::kInvalidDocument,
                             what + ": header: a byte that is not ASCII at byte " +
                                 std::to_string(start + k) + " (version " +
                                 std::to_string(h.major) + ".0 headers are ASCII)",
                             start + k);
            }
        }
    }
    PyParser parser(text, start, what);
    HURRAY_ASSIGN_OR_RETURN(const PyValue dict, parser.parse_document());
    if (dict.kind != PyValue::Kind::kDict) {
        return Error(ErrorCode::kInvalidDocument,
                     what + ": header: not a dict at byte " + std::to_string(start), start);
    }
    const PyValue* descr = nullptr;
    const PyValue* fortran = nullptr;
    const PyValue* shape = nullptr;
    for (size_t k = 0; k + 1 < dict.items.size(); k += 2) {
        const std::string& key = dict.items[k].text;
        const PyValue* v = &dict.items[k + 1];
        const PyValue** slot = key == "descr"           ? &descr
                               : key == "fortran_order" ? &fortran
                               : key == "shape"         ? &shape
                                                        : nullptr;
        if (slot == nullptr || *slot != nullptr) {
            std::string msg = what;
            msg += slot == nullptr ? ": header: unexpected key '" : ": header: key '";
            msg += key;
            msg += slot == nullptr ? "' at byte " : "' twice, at byte ";
            msg += std::to_string(dict.items[k].offset);
            return Error(ErrorCode::kInvalidDocument, std::move(msg), dict.items[k].offset);
        }
        *slot = v;
    }
    for (const auto& [name, v] :
         {std::pair{"descr", descr}, {"fortran_order", fortran}, {"shape", shape}}) {
        if (v == nullptr) {
            return Error(ErrorCode::kInvalidDocument,
                         what + ": header: key '" + name + "' is missing", start);
        }
    }
    if (descr->kind == PyValue::Kind::kList) {
        return Error(ErrorCode::kUnsupported,
                     what + ": structured dtype (a list of fields at byte " +
                         std::to_string(descr->offset) +
                         "): refused, it has no Hurray element type",
                     descr->offset);
    }
    if (descr->kind != PyValue::Kind::kString) {
        return Error(ErrorCode::kInvalidDocument,
                     what + ": header: 'descr' at byte " + std::to_string(descr->offset) +
                         " is not a string",
                     descr->offset);
    }
    h.descr = descr->text;
    auto dtype = parse_npy_descr(h.descr, what);
    if (!dtype) {
        return Error(dtype.error().code(), dtype.error().message(), descr->offset);
    }
    h.dtype = *dtype;
    if (fortran->kind != PyValue::Kind::kBool) {
        return Error(ErrorCode::kInvalidDocument,
                     what + ": header: 'fortran_order' at byte " + std::to_string(fortran->offset) +
                         " is not True or False",
                     fortran->offset);
    }
    h.fortran_order = fortran->flag;
    if (shape->kind != PyValue::Kind::kTuple) {
        return Error(
            ErrorCode::kInvalidDocument,
            what + ": header: 'shape' at byte " + std::to_string(shape->offset) + " is not a tuple",
            shape->offset);
    }
    if (shape->items.size() > 64) {
        return Error(ErrorCode::kRankTooLarge,
                     what + ": header: 'shape' has " + std::to_string(shape->items.size()) +
                         " dimensions (Hurray allows 64)",
                     shape->offset);
    }
    uint64_t count = 1;
    for (const PyValue& dim : shape->items) {
        if (dim.kind != PyValue::Kind::kInt) {
            return Error(ErrorCode::kInvalidDocument,
                         what + ": header: 'shape' entry at byte " + std::to_string(dim.offset) +
                             " is not a non-negative integer",
                         dim.offset);
        }
        auto c = mul_u64(count, dim.number);
        if (!c) {
            return Error(ErrorCode::kSizeOverflow,
                         what + ": header: 'shape' element count overflows 64 bits at byte " +
                             std::to_string(dim.offset),
                         dim.offset);
        }
        count = *c;
        h.shape.push_back(dim.number);
    }
    auto bytes_total = mul_u64(count, h.dtype.item_size);
    if (!bytes_total) {
        return Error(ErrorCode::kSizeOverflow,
                     what + ": header: 'shape' " + std::to_string(count) + " elements of " +
                         std::to_string(h.dtype.item_size) + " bytes overflow 64 bits",
                     shape->offset);
    }
    h.data_bytes = *bytes_total;
    return h;
}

std::vector<uint8_t> format_npy_header(const std::string& descr, bool fortran_order,
                                       const Shape& shape) {
    std::string dict = "{'descr': '" + descr +
                       "', 'fortran_order': " + (fortran_order ? "True" : "False") + ", 'shape': (";
    for (size_t k = 0; k < shape.size(); ++k) {
        dict += std::to_string(shape[k]);
        if (shape.size() == 1 || k + 1 < shape.size()) {
            dict += ",";
        }
        if (k + 1 < shape.size()) {
            dict += " ";
        }
    }
    dict += "), }";
    const bool v1 = dict.size() + 1 + kNpyPrefixV1 + 64 <= 65535;
    const uint64_t prefix = v1 ? kNpyPrefixV1 : kNpyPrefixV1 + 2;
    const uint64_t unpadded = prefix + dict.size() + 1;  // + '\n'
    const uint64_t total = (unpadded + 63) / 64 * 64;
    dict.append(static_cast<size_t>(total - unpadded), ' ');
    dict += '\n';
    std::vector<uint8_t> out(kNpyMagic, kNpyMagic + sizeof kNpyMagic);
    out.push_back(v1 ? 1 : 2);
    out.push_back(0);
    const uint64_t len = dict.size();
    for (size_t k = 0; k < (v1 ? 2U : 4U); ++k) {
        out.push_back(static_cast<uint8_t>(len >> (8 * k)));
    }
    out.insert(out.end(), dict.begin(), dict.end());
    return out;
}

}  // namespace hurray::convert::detail
