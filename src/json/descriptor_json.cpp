// SPDX-License-Identifier: Apache-2.0
// The public entry points of hurray::json: text and CBOR in and out. Parsing goes
// through a SAX handler that builds the tree itself, so that nesting depth and
// duplicate keys are checked while parsing and nlohmann/json never throws here;
// every exception that could still escape (allocation failure) is caught.
#include "hurray/json/descriptor_json.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "json/json_internal.hpp"

namespace hurray {
namespace {

using json_detail::Json;

// Builds a document tree from SAX events; refuses nesting deeper than
// kMaxDocumentDepth and duplicate keys, and records the first error.
class TreeBuilder final : public nlohmann::json_sax<Json> {
public:
    explicit TreeBuilder(std::string_view format) : format_(format) {}

    bool null() override { return add(Json(nullptr)); }
    bool boolean(bool v) override { return add(Json(v)); }
    bool number_integer(number_integer_t v) override { return add(Json(v)); }
    bool number_unsigned(number_unsigned_t v) override { return add(Json(v)); }
    bool number_float(number_float_t v, const string_t& /*text*/) override { return add(Json(v)); }
    bool string(string_t& v) override { return add(Json(std::move(v))); }
    bool binary(binary_t& v) override { return add(Json(std::move(v))); }

    bool start_object(std::size_t /*size: untrusted, never used to reserve*/) override {
        return open(Json::object());
    }
    bool key(string_t& k) override {
        if (open_.back().node->contains(k)) {
            return fail(path_of_key(json_detail::shortened(k)) + ": duplicate key", Error::kNoOffset);
        }
        key_ = std::move(k);
        return true;
    }
    bool end_object() override { return close(); }
    bool start_array(std::size_t /*size: untrusted*/) override { return open(Json::array()); }
    bool end_array() override { return close(); }

    bool parse_error(std::size_t position, const std::string& /*last_token*/,
                     const nlohmann::json::exception& ex) override {
        // what() is "[json.exception.parse_error.101] parse error at line 1, column 2: ...".
        std::string what = ex.what();
        if (const size_t close_bracket = what.find("] "); what.starts_with("[json.") && close_bracket != std::string::npos) {
            what.erase(0, close_bracket + 2);
        }
        constexpr size_t kMaxMessage = 300;
        if (what.size() > kMaxMessage) {
            what.resize(kMaxMessage);
            what += "...";
        }
        // `position` counts the bytes read, the offending one included.
        return fail(json_detail::concat({"document: malformed ", format_, ": ", what}),
                    position > 0 ? position - 1 : 0);
    }

    // The tree, once parsing succeeded.
    [[nodiscard]] const Json& root() const { return root_; }
    // The first error, once parsing failed.
    [[nodiscard]] Error error() const {
        return error_ ? *error_ : Error(ErrorCode::kInvalidDocument, json_detail::concat({"document: malformed ", format_}));
    }

private:
    struct Open {
        Json* node;
        std::string name;  // path component: ".key" or "[i]"
    };

    // Places a value under the open container (or as the root); returns where it
    // went and, when `name` is given, sets it to the path component.
    Json* place(Json&& v, std::string* name) {
        if (open_.empty()) {
            root_ = std::move(v);
            return &root_;
        }
        Json& parent = *open_.back().node;
        if (parent.is_array()) {
            if (name != nullptr) {
                *name = json_detail::concat({"[", std::to_string(parent.size()), "]"});
            }
            parent.push_back(std::move(v));
            return &parent.back();
        }
        if (name != nullptr) {
            *name = json_detail::concat({".", key_});
        }
        Json& slot = parent[key_];
        slot = std::move(v);
        return &slot;
    }
    bool add(Json&& v) {
        place(std::move(v), nullptr);
        return true;
    }
    bool open(Json&& container) {
        if (open_.size() >= kMaxDocumentDepth) {
            return fail(json_detail::concat({"document: nested deeper than ", std::to_string(kMaxDocumentDepth), " levels"}),
                        Error::kNoOffset);
        }
        std::string name;
        Json* node = place(std::move(container), &name);
        open_.push_back({node, std::move(name)});
        return true;
    }
    bool close() {
        open_.pop_back();
        return true;
    }
    // The JSON path of member `k` of the innermost open object.
    [[nodiscard]] std::string path_of_key(std::string_view k) const {
        std::string p;
        for (size_t i = 1; i < open_.size(); ++i) {  // open_[0] is the root
            p += open_[i].name;
        }
        p += ".";
        p += k;
        return p[0] == '.' ? p.substr(1) : p;
    }
    bool fail(std::string message, uint64_t offset) {
        if (!error_) {
            error_.emplace(ErrorCode::kInvalidDocument, std::move(message), offset);
        }
        return false;
    }

    std::string_view format_;
    Json root_;
    std::vector<Open> open_;
    std::string key_;
    std::optional<Error> error_;
};

// Parses `input` (JSON text or CBOR) into a descriptor. Catches everything.
template <typename Byte>
Result<TensorDescriptor> parse(const Byte* first, const Byte* last, nlohmann::json::input_format_t format,
                               std::string_view format_name) {
    try {
        TreeBuilder builder(format_name);
        if (!Json::sax_parse(first, last, &builder, format, /*strict=*/true)) {
            return builder.error();
        }
        return json_detail::descriptor_from_document(builder.root());
    } catch (const std::bad_alloc&) {
        return Error(ErrorCode::kInvalidDocument, "document: out of memory while reading it");
    } catch (const std::exception& e) {
        return Error(ErrorCode::kInvalidDocument, std::string("document: ") + e.what());
    }
}

}  // namespace

// Only std::bad_alloc can be thrown below; noexcept turns it into termination.
std::string to_json(const TensorDescriptor& d, int indent) noexcept {  // NOLINT(bugprone-exception-escape)
    // Every string in the document is ASCII, so the UTF-8 handler never acts;
    // `replace` rather than `strict` keeps dump() free of throws regardless.
    return json_detail::descriptor_to_document(d).dump(indent < 0 ? -1 : std::min(indent, kMaxJsonIndent), ' ',
                                                       false, Json::error_handler_t::replace);
}

Result<TensorDescriptor> from_json(std::string_view text) {
    // nlohmann/json takes a NUL byte for the end of its input; JSON text never holds
    // one (not even in a string), so refuse it rather than ignore what follows.
    if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
        return Error(ErrorCode::kInvalidDocument, "document: malformed JSON: a NUL byte", nul);
    }
    return parse(text.data(), text.data() + text.size(), nlohmann::json::input_format_t::json, "JSON");
}

std::vector<uint8_t> to_cbor(const TensorDescriptor& d) noexcept {  // NOLINT(bugprone-exception-escape)
    return Json::to_cbor(json_detail::descriptor_to_document(d));
}

Result<TensorDescriptor> from_cbor(std::span<const uint8_t> bytes) {
    return parse(bytes.data(), bytes.data() + bytes.size(), nlohmann::json::input_format_t::cbor, "CBOR");
}

}  // namespace hurray
