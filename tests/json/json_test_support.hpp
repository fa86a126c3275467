// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the hurray::json tests: descriptors of every kind, and
// assertions on round trips and on rejections.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hurray/core/builder.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/tensor_descriptor.hpp"
#include "hurray/json/descriptor_json.hpp"

namespace hurray_json_test {

using Doc = nlohmann::ordered_json;

/// The value of a result that must be ok; records a failure otherwise.
inline hurray::TensorDescriptor must(hurray::Result<hurray::TensorDescriptor> r) {
    if (!r.ok()) {
        ADD_FAILURE() << "unexpected error: " << r.error().to_string();
        return {};
    }
    return std::move(r).value();
}

/// `d` with its buffer table filled by the builder (valid sizes).
inline hurray::TensorDescriptor sized(hurray::TensorDescriptor d, std::vector<uint64_t> data_dependent = {}) {
    return must(hurray::size_buffers(std::move(d), {}, data_dependent));
}

/// A descriptor of `type` and `shape` in `layout` (buffers not yet sized).
inline hurray::TensorDescriptor with(hurray::ElementType type, hurray::Shape shape, hurray::LayoutDescriptor layout) {
    hurray::TensorDescriptor d;
    d.element_type = type;
    d.shape = std::move(shape);
    d.layout = std::move(layout);
    return d;
}

/// The document `to_json` writes for `d`, parsed back into a tree to edit.
inline Doc doc_of(const hurray::TensorDescriptor& d) { return Doc::parse(hurray::to_json(d)); }

/// `from_json` of an edited tree.
inline hurray::Result<hurray::TensorDescriptor> from_doc(const Doc& doc) { return hurray::from_json(doc.dump()); }

/// Passes when `d` survives JSON (compact and indented) and CBOR unchanged, and
/// writing the result again gives the same text and bytes.
inline ::testing::AssertionResult RoundTrips(const hurray::TensorDescriptor& d) {
    const std::string text = hurray::to_json(d);
    auto back = hurray::from_json(text);
    if (!back.ok()) {
        return ::testing::AssertionFailure() << "from_json: " << back.error().to_string() << "\n" << text;
    }
    if (!(*back == d)) {
        return ::testing::AssertionFailure() << "from_json(to_json(d)) != d\n" << text;
    }
    if (hurray::to_json(*back) != text) {
        return ::testing::AssertionFailure() << "to_json is not stable\n" << text;
    }
    auto indented = hurray::from_json(hurray::to_json(d, 4));
    if (!indented.ok() || !(*indented == d)) {
        return ::testing::AssertionFailure() << "indented form does not round-trip\n" << hurray::to_json(d, 4);
    }
    const std::vector<uint8_t> cbor = hurray::to_cbor(d);
    auto from_cbor = hurray::from_cbor(cbor);
    if (!from_cbor.ok()) {
        return ::testing::AssertionFailure() << "from_cbor: " << from_cbor.error().to_string();
    }
    if (!(*from_cbor == d)) {
        return ::testing::AssertionFailure() << "from_cbor(to_cbor(d)) != d\n" << text;
    }
    if (hurray::to_cbor(*from_cbor) != cbor) {
        return ::testing::AssertionFailure() << "to_cbor is not stable";
    }
    // The CBOR is the same document as the JSON.
    if (Doc::from_cbor(cbor) != Doc::parse(text)) {
        return ::testing::AssertionFailure() << "CBOR and JSON documents differ";
    }
    return ::testing::AssertionSuccess();
}

/// Passes when `r` failed with kInvalidDocument and exactly `message`.
inline ::testing::AssertionResult FailsWith(const hurray::Result<hurray::TensorDescriptor>& r,
                                            std::string_view message) {
    if (r.ok()) {
        return ::testing::AssertionFailure() << "accepted; expected \"" << message << "\"";
    }
    if (r.error().code() != hurray::ErrorCode::kInvalidDocument || r.error().message() != message) {
        return ::testing::AssertionFailure() << "got \"" << r.error().to_string() << "\"; expected \""
                                             << message << "\"";
    }
    return ::testing::AssertionSuccess();
}

/// Passes when `r` failed with kInvalidDocument and a message containing `part`.
inline ::testing::AssertionResult FailsMentioning(const hurray::Result<hurray::TensorDescriptor>& r,
                                                  std::string_view part) {
    if (r.ok()) {
        return ::testing::AssertionFailure() << "accepted; expected an error mentioning \"" << part << "\"";
    }
    if (r.error().code() != hurray::ErrorCode::kInvalidDocument ||
        r.error().message().find(part) == std::string::npos) {
        return ::testing::AssertionFailure() << "got \"" << r.error().to_string()
                                             << "\"; expected kInvalidDocument mentioning \"" << part << "\"";
    }
    return ::testing::AssertionSuccess();
}

}  // namespace hurray_json_test
