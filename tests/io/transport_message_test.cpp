// SPDX-License-Identifier: Apache-2.0
// The transport protocol's messages (interchange.md § Message Framing ..
// § Error Handling; hurray/io/transport_message.hpp): byte layouts written by
// hand from the spec's tables, round trips of every message type, every
// rejection rule (code, field, offset), every truncation, and random hellos
// and requests.
#include "hurray/io/transport_message.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "hurray/core/builder.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/tensor_descriptor.hpp"

namespace hurray::transport_test {
namespace {

/// Bytes of a message or payload.
using Bytes = std::vector<uint8_t>;

/// Builds little-endian bytes field by field.
struct Le {
    /// The bytes so far.
    Bytes b;
    /// Appends a byte.
    Le& u8(uint8_t v) {
        b.push_back(v);
        return *this;
    }
    /// Appends a little-endian uint16.
    Le& u16(uint16_t v) { return le(v, 2); }
    /// Appends a little-endian uint32.
    Le& u32(uint32_t v) { return le(v, 4); }
    /// Appends a little-endian uint64.
    Le& u64(uint64_t v) { return le(v, 8); }
    /// Appends raw bytes.
    Le& raw(std::span<const uint8_t> v) {
        b.insert(b.end(), v.begin(), v.end());
        return *this;
    }
    /// Appends the bytes of a string.
    Le& str(std::string_view s) {
        b.insert(b.end(), s.begin(), s.end());
        return *this;
    }
    /// Appends a uint32 length and the string.
    Le& key(std::string_view s) { return u32(static_cast<uint32_t>(s.size())).str(s); }

private:
    Le& le(uint64_t v, int n) {
        for (int i = 0; i < n; ++i) {
            b.push_back(static_cast<uint8_t>(v >> (8 * i)));
        }
        return *this;
    }
};

/// The value of a result the test needs; fails the test otherwise.
template <typename T>
T value_of(Result<T> r) {
    EXPECT_TRUE(r.ok()) << r.error().to_string();
    if (!r.ok()) {
        throw std::runtime_error(r.error().to_string());
    }
    return std::move(r).value();
}

/// A real encoded descriptor: dense float32 [2, 3].
Bytes sample_descriptor() { return value_of(encode(value_of(make_dense(ElementType::kFloat32, {2, 3})))); }

/// Another one, of another length: dense int8 [4, 5, 6].
Bytes other_descriptor() { return value_of(encode(value_of(make_dense(ElementType::kInt8, {4, 5, 6})))); }

/// The payload of a whole message, after checking its header names `type`,
/// `stream_id` and the payload's length.
Bytes payload_of(const Bytes& message, MessageType type, uint32_t stream_id) {
    auto h = decode_message_header(message);
    EXPECT_TRUE(h.ok());
    if (!h.ok()) {
        return {};
    }
    EXPECT_EQ(h->type, static_cast<uint32_t>(type));
    EXPECT_EQ(h->stream_id, stream_id);
    EXPECT_EQ(uint64_t{h->payload_length} + kMessageHeaderSize, message.size());
    return {message.begin() + kMessageHeaderSize, message.end()};
}

/// Expects `r` to be an error with `code`, a message that contains `field`,
/// at `offset` (`Error::kNoOffset`: none).
template <typename R>
void expect_error(const R& r, ErrorCode code, std::string_view field, uint64_t offset) {
    ASSERT_FALSE(r.ok()) << "expected an error naming " << field;
    const Error& e = r.error();
    EXPECT_EQ(e.code(), code) << e.to_string();
    EXPECT_NE(e.message().find(field), std::string::npos) << "'" << field << "' not in: " << e.to_string();
    EXPECT_EQ(e.offset(), offset) << e.to_string();
}

/// Whether two hellos hold the same values.
void expect_same(const Hello& a, const Hello& b) {
    EXPECT_EQ(a.protocol_version, b.protocol_version);
    EXPECT_EQ(a.max_message_size, b.max_message_size);
    EXPECT_EQ(a.capability_flags, b.capability_flags);
    EXPECT_EQ(a.layouts, b.layouts);
    EXPECT_EQ(a.devices, b.devices);
    EXPECT_EQ(a.memory_classes, b.memory_classes);
}

/// Whether two requests hold the same values.
void expect_same(const TensorRequest& a, const TensorRequest& b) {
    EXPECT_EQ(a.key, b.key);
    EXPECT_EQ(a.preferred_layouts, b.preferred_layouts);
    EXPECT_EQ(a.preferred_device, b.preferred_device);
    EXPECT_EQ(a.min_alignment, b.min_alignment);
    EXPECT_EQ(a.flags, b.flags);
}

/// A hello with every list filled (an extension layout entry included).
Hello sample_hello() {
    Hello h;
    h.protocol_version = kTransportProtocolVersion;
    h.max_message_size = 1U << 20;
    h.capability_flags = kCapTranscoding | kCapRdmaDataPlane | kCapRdmaGpuDirect;
    h.layouts = {LayoutEntry{0x01, {}}, LayoutEntry{0xF2, {0xAA, 0xBB, 0xCC}}, LayoutEntry{0x03, {}}};
    h.devices = {0x00, 0x01, 0xF0};
    h.memory_classes = {0x00, 0x02};
    return h;
}

/// A request with an extension layout entry.
TensorRequest sample_request() {
    TensorRequest q;
    q.key = "model/layer.0/w";
    q.preferred_layouts = {LayoutEntry{0xFE, {}}, LayoutEntry{0x01, {}}};
    q.preferred_device = 0x01;
    q.min_alignment = 256;
    q.flags = kRequestAllowTranscode | kRequestParallelOk;
    return q;
}

// ---- names --------------------------------------------------------------------

TEST(TransportMessage, KnownTypesAndNames) {
    const std::vector<std::pair<uint32_t, std::string_view>> names = {
        {0x01, "CLIENT_HELLO"},   {0x02, "SERVER_HELLO"},
        {0x03, "TENSOR_REQUEST"}, {0x04, "TENSOR_DESCRIPTOR"},
        {0x05, "TENSOR_DATA"},    {0x06, "TENSOR_DATA_END"},
        {0x07, "TENSOR_PUT"},     {0x08, "TENSOR_PUT_ACK"},
        {0x09, "ERROR"},          {0x0A, "PING"},
        {0x0B, "PONG"},           {0x0C, "RDMA_REGISTER"},
        {0x0D, "RDMA_READY"},     {0xF0, "LIST_REQUEST"},
        {0xF1, "LIST_ENTRIES"},   {0xF2, "LIST_END"},
    };
    for (const auto& [tag, name] : names) {
        EXPECT_TRUE(is_known_message_type(tag)) << tag;
        EXPECT_EQ(message_type_name(tag), name);
    }
    for (const uint32_t tag : {0x00U, 0x0EU, 0xEFU, 0xF3U, 0xFEU, 0xFFU, 0x100U, 0x101U, 0xFFFFFFFFU}) {
        EXPECT_FALSE(is_known_message_type(tag)) << tag;
        EXPECT_EQ(message_type_name(tag), "UNKNOWN");
    }
}

TEST(TransportMessage, ErrorCodeNamesAndMapping) {
    const std::vector<std::tuple<uint32_t, std::string_view, ErrorCode>> codes = {
        {0x01, "PROTOCOL_VERSION_MISMATCH", ErrorCode::kUnsupported},
        {0x02, "UNKNOWN_TENSOR", ErrorCode::kNotFound},
        {0x03, "LAYOUT_UNAVAILABLE", ErrorCode::kUnsupported},
        {0x04, "TRANSCODE_LIMIT_EXCEEDED", ErrorCode::kUnsupported},
        {0x05, "DEVICE_UNAVAILABLE", ErrorCode::kUnsupported},
        {0x06, "INVALID_MESSAGE", ErrorCode::kInvalidArgument},
        {0x07, "MESSAGE_TOO_LARGE", ErrorCode::kInvalidArgument},
        {0x08, "SHARD_MISMATCH", ErrorCode::kInvalidArgument},
        {0xF0, "SERVER_BUSY", ErrorCode::kIoError},
        {0xF1, "SHUTTING_DOWN", ErrorCode::kIoError},
        {0xF2, "TIMEOUT", ErrorCode::kIoError},
        {0xF3, "INTERNAL", ErrorCode::kIoError},
        {0xF4, "PUT_REJECTED", ErrorCode::kInvalidArgument},
    };
    for (const auto& [code, name, mapped] : codes) {
        EXPECT_EQ(transport_error_name(code), name);
        EXPECT_EQ(error_code_of_transport_error(code), mapped) << name;
    }
    for (const uint32_t code : {0x00U, 0x09U, 0xEFU, 0xF5U, 0xFEU, 0xFFU, 0x10000U}) {
        EXPECT_EQ(transport_error_name(code), "UNKNOWN");
        EXPECT_EQ(error_code_of_transport_error(code), ErrorCode::kIoError);
    }
}

// ---- exact bytes (interchange.md's tables, written by hand) ---------------------

TEST(TransportMessage, HeaderBytes) {
    const auto bytes = encode_message_header({0x03, 0x01020304, 0x0A0B0C0D});
    // message_type, stream_id, payload_length: uint32 little-endian each.
    const std::array<uint8_t, 12> expected = {0x03, 0x00, 0x00, 0x00, 0x04, 0x03, 0x02, 0x01, 0x0D, 0x0C, 0x0B, 0x0A};
    EXPECT_EQ(bytes, expected);
    auto h = decode_message_header(bytes);
    ASSERT_TRUE(h.ok());
    EXPECT_EQ(h->type, 0x03U);
    EXPECT_EQ(h->stream_id, 0x01020304U);
    EXPECT_EQ(h->payload_length, 0x0A0B0C0DU);

    // Any value is accepted (the receiver's to check); bytes after the 12 are not read.
    const Bytes odd = {0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x77};
    auto o = decode_message_header(odd);
    ASSERT_TRUE(o.ok());
    EXPECT_EQ(o->type, 0xFFFFFFFFU);
    EXPECT_EQ(o->stream_id, 0U);
    EXPECT_EQ(o->payload_length, 0xFFFFFFFFU);

    for (size_t n = 0; n < kMessageHeaderSize; ++n) {
        auto t = decode_message_header(std::span(bytes).first(n));
        const std::string_view field = n < 4 ? "message_type" : n < 8 ? "stream_id" : "payload_length";
        expect_error(t, ErrorCode::kTruncated, field, n / 4 * 4);
    }
}

TEST(TransportMessage, TensorRequestBytes) {
    TensorRequest q;
    q.key = "ab";
    q.preferred_layouts = {LayoutEntry{0x01, {}}, LayoutEntry{0xF3, {0xAA, 0xBB}}};
    q.preferred_device = 0x01;
    q.min_alignment = 64;
    q.flags = kRequestAllowTranscode | kRequestParallelOk;
    const Bytes expected = {
        0x03, 0x00, 0x00, 0x00,  // message_type TENSOR_REQUEST
        0x2A, 0x00, 0x00, 0x00,  // stream_id 42
        0x17, 0x00, 0x00, 0x00,  // payload_length 23
        0x02, 0x00, 0x00, 0x00,  // tensor_key length
        'a',  'b',               // tensor_key
        0x02, 0x00,              // layout_count
        0x01,                    // layout_tag (row-major: the tag alone)
        0xF3,                    // layout_tag (extension range)
        0x02, 0x00,              // ext_metadata_length
        0xAA, 0xBB,              // ext_metadata
        0x01,                    // preferred_device (CUDA)
        0x40, 0x00, 0x00, 0x00,  // min_alignment 64
        0x03, 0x00, 0x00, 0x00,  // request_flags ALLOW_TRANSCODE | PARALLEL_OK
    };
    const Bytes encoded = value_of(encode_tensor_request(42, q));
    EXPECT_EQ(encoded, expected);
    auto back = decode_tensor_request(payload_of(encoded, MessageType::kTensorRequest, 42));
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    expect_same(*back, q);
}

TEST(TransportMessage, ErrorBytes) {
    const Bytes expected = {
        0x09, 0x00, 0x00, 0x00,  // message_type ERROR
        0x07, 0x00, 0x00, 0x00,  // stream_id 7
        0x0D, 0x00, 0x00, 0x00,  // payload_length 13
        0x02, 0x00, 0x00, 0x00,  // error_code UNKNOWN_TENSOR
        0x05, 0x00, 0x00, 0x00,  // message length
        'n',  'o',  ' ',  'x',  '!',
    };
    const Bytes encoded = encode_error(7, static_cast<uint32_t>(TransportErrorCode::kUnknownTensor), "no x!");
    EXPECT_EQ(encoded, expected);
    auto back = decode_error(payload_of(encoded, MessageType::kError, 7));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->code, 2U);
    EXPECT_EQ(back->message, "no x!");
}

TEST(TransportMessage, HelloBytes) {
    Hello h;
    h.protocol_version = 1;
    h.max_message_size = 0x01000000;
    h.capability_flags = kCapTranscoding | kCapParallelStreams;
    h.layouts = {LayoutEntry{0x01, {}}};
    h.devices = {0x00, 0x01};
    h.memory_classes = {0x00};
    const Bytes expected = {
        0x01, 0x00, 0x00, 0x00,                          // message_type CLIENT_HELLO
        0x01, 0x00, 0x00, 0x00,                          // stream_id 1
        0x1A, 0x00, 0x00, 0x00,                          // payload_length 26
        0x01, 0x00, 0x00, 0x00,                          // protocol_version
        0x00, 0x00, 0x00, 0x01,                          // max_message_size 16 MiB
        0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // capability_flags
        0x01, 0x00, 0x01,                                // layout_count, row-major
        0x02, 0x00, 0x00, 0x01,                          // device_count, CPU, CUDA
        0x01, 0x00, 0x00,                                // class_count, STANDARD
    };
    const Bytes encoded = value_of(encode_hello(MessageType::kClientHello, 1, h));
    EXPECT_EQ(encoded, expected);
}

// ---- round trips ----------------------------------------------------------------

TEST(TransportMessage, HelloRoundTrip) {
    for (const MessageType type : {MessageType::kClientHello, MessageType::kServerHello}) {
        const Hello h = sample_hello();
        const Bytes msg = value_of(encode_hello(type, 9, h));
        auto back = decode_hello(payload_of(msg, type, 9));
        ASSERT_TRUE(back.ok()) << back.error().to_string();
        expect_same(*back, h);
    }
    // Empty lists.
    const Hello empty;
    const Bytes msg = value_of(encode_hello(MessageType::kClientHello, 1, empty));
    EXPECT_EQ(msg.size(), kMessageHeaderSize + 16 + 6);
    auto back = decode_hello(payload_of(msg, MessageType::kClientHello, 1));
    ASSERT_TRUE(back.ok());
    expect_same(*back, empty);
}

TEST(TransportMessage, HelloWithoutMemoryClasses) {
    // "If absent or empty": a payload that ends before class_count.
    Hello h = sample_hello();
    h.memory_classes.clear();
    Bytes payload = payload_of(value_of(encode_hello(MessageType::kServerHello, 3, h)), MessageType::kServerHello, 3);
    ASSERT_EQ(payload.back(), 0);
    payload.resize(payload.size() - 2);
    auto back = decode_hello(payload);
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    expect_same(*back, h);
    // One byte of a class count is not a count.
    payload.push_back(0);
    expect_error(decode_hello(payload), ErrorCode::kTruncated, "HELLO class_count", payload.size() - 1);
}

TEST(TransportMessage, TensorRequestRoundTrip) {
    const TensorRequest q = sample_request();
    const Bytes msg = value_of(encode_tensor_request(5, q));
    auto back = decode_tensor_request(payload_of(msg, MessageType::kTensorRequest, 5));
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    expect_same(*back, q);
}

TEST(TransportMessage, TensorDescriptorRoundTrip) {
    const Bytes d = sample_descriptor();
    const DescriptorTransport t{24, 1, 3};
    const Bytes msg = value_of(encode_tensor_descriptor(11, d, t));
    const Bytes payload = payload_of(msg, MessageType::kTensorDescriptor, 11);
    EXPECT_EQ(payload.size(), d.size() + kDescriptorTransportSize);
    auto back = decode_tensor_descriptor(payload);
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    EXPECT_EQ(Bytes(back->descriptor.begin(), back->descriptor.end()), d);
    EXPECT_EQ(back->descriptor.data(), payload.data()) << "a view of the payload";
    EXPECT_EQ(back->transport.total_data_bytes, 24U);
    EXPECT_EQ(back->transport.shard_index, 1U);
    EXPECT_EQ(back->transport.total_shards, 3U);
    auto model = decode(back->descriptor);
    ASSERT_TRUE(model.ok());
    EXPECT_EQ(*model, value_of(make_dense(ElementType::kFloat32, {2, 3})));
    // The transport fields, little-endian, after the descriptor.
    const Bytes tail = Le().u64(24).u32(1).u32(3).b;
    EXPECT_TRUE(std::equal(tail.begin(), tail.end(), payload.begin() + static_cast<std::ptrdiff_t>(d.size())));
}

TEST(TransportMessage, TensorDataRoundTrip) {
    const Bytes data = {1, 2, 3, 4, 5};
    const auto head = value_of(encode_tensor_data_header(13, 0x1122334455667788ULL, data.size()));
    const Bytes expected_head = Le().u32(0x05).u32(13).u32(8 + 5).u64(0x1122334455667788ULL).b;
    EXPECT_EQ(Bytes(head.begin(), head.end()), expected_head);
    Bytes msg(head.begin(), head.end());
    msg.insert(msg.end(), data.begin(), data.end());
    const Bytes payload = payload_of(msg, MessageType::kTensorData, 13);
    auto back = decode_tensor_data(payload);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->offset, 0x1122334455667788ULL);
    EXPECT_EQ(Bytes(back->data.begin(), back->data.end()), data);
    // An empty frame.
    const auto empty_head = value_of(encode_tensor_data_header(13, 0, 0));
    auto empty =
        decode_tensor_data(payload_of(Bytes(empty_head.begin(), empty_head.end()), MessageType::kTensorData, 13));
    ASSERT_TRUE(empty.ok());
    EXPECT_TRUE(empty->data.empty());
}

TEST(TransportMessage, TensorPutRoundTrip) {
    const Bytes d = sample_descriptor();
    TensorPut p;
    p.key = "é/weights";
    p.descriptor = d;
    p.total_data_bytes = 24;
    const Bytes msg = value_of(encode_tensor_put(2, p));
    const Bytes payload = payload_of(msg, MessageType::kTensorPut, 2);
    EXPECT_EQ(payload, Le().key(p.key).u32(static_cast<uint32_t>(d.size())).raw(d).u64(24).b);
    auto back = decode_tensor_put(payload);
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    EXPECT_EQ(back->key, p.key);
    EXPECT_EQ(Bytes(back->descriptor.begin(), back->descriptor.end()), d);
    EXPECT_EQ(back->total_data_bytes, 24U);
}

TEST(TransportMessage, ErrorRoundTrip) {
    for (const std::string_view text : {std::string_view(), std::string_view("plain"),
                                        std::string_view("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80")}) {
        const Bytes msg = encode_error(4, 0xF3, text);
        auto back = decode_error(payload_of(msg, MessageType::kError, 4));
        ASSERT_TRUE(back.ok());
        EXPECT_EQ(back->code, 0xF3U);
        EXPECT_EQ(back->message, text);
    }
    // Any code, known or not, decodes.
    auto odd = decode_error(Le().u32(0xDEADBEEF).key("x").b);
    ASSERT_TRUE(odd.ok());
    EXPECT_EQ(odd->code, 0xDEADBEEFU);
}

TEST(TransportMessage, ErrorInvalidUtf8IsReplaced) {
    // Each byte that starts no well-formed sequence becomes U+FFFD; never an error.
    const std::string bad = std::string("a\xFF") + "b\xC3" + "\xE2\x82" + "\xED\xA0\x80" + "\xC0\xAF" + "\xC3\xA9";
    auto m = decode_error(Le().u32(6).key(bad).b);
    ASSERT_TRUE(m.ok());
    const std::string r = "\xEF\xBF\xBD";
    EXPECT_EQ(m->message, "a" + r + "b" + r + r + r + r + r + r + r + r + "\xC3\xA9");
    // The encoder writes valid UTF-8 too.
    auto e = decode_error(payload_of(encode_error(1, 6, "x\x80y"), MessageType::kError, 1));
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(e->message, "x" + r + "y");
}

TEST(TransportMessage, ErrorIsCutOnACharacterBoundary) {
    const std::string text =
        "ab\xE2\x82\xAC"
        "cd\xF0\x9F\x98\x80";  // a b € c d 😀: 11 bytes
    const std::vector<std::pair<uint32_t, std::string>> cuts = {
        {8 + 11, text},
        {8 + 100, text},
        {8 + 10,
         "ab\xE2\x82\xAC"
         "cd"},
        {8 + 7,
         "ab\xE2\x82\xAC"
         "cd"},
        {8 + 6,
         "ab\xE2\x82\xAC"
         "c"},
        {8 + 5, "ab\xE2\x82\xAC"},
        {8 + 4, "ab"},
        {8 + 3, "ab"},
        {8 + 2, "ab"},
        {8 + 1, "a"},
        {8, ""},
        {3, ""},
        {0, ""},
    };
    for (const auto& [max_payload, kept] : cuts) {
        const Bytes msg = encode_error(1, 7, text, max_payload);
        const Bytes payload = payload_of(msg, MessageType::kError, 1);
        EXPECT_LE(payload.size(), std::max<size_t>(max_payload, 8));
        auto back = decode_error(payload);
        ASSERT_TRUE(back.ok());
        EXPECT_EQ(back->message, kept) << "max_payload " << max_payload;
        EXPECT_EQ(back->code, 7U);
    }
    // A long message under the default limit is kept whole.
    const std::string big(100000, 'z');
    auto whole = decode_error(payload_of(encode_error(1, 7, big), MessageType::kError, 1));
    ASSERT_TRUE(whole.ok());
    EXPECT_EQ(whole->message, big);
    // Replacement characters are cut like any other character.
    const std::string bad = "ab\xFF";  // "ab" U+FFFD: 5 bytes
    auto cut = decode_error(payload_of(encode_error(1, 7, bad, 8 + 4), MessageType::kError, 1));
    ASSERT_TRUE(cut.ok());
    EXPECT_EQ(cut->message, "ab");
}

TEST(TransportMessage, ListRoundTrip) {
    const Bytes d1 = sample_descriptor();
    const Bytes d2 = other_descriptor();
    const std::vector<ListEntry> entries = {ListEntry{"a", d1}, ListEntry{"layers/\xC3\xA9", d2}};
    const Bytes msg = value_of(encode_list_entries(8, entries));
    const Bytes payload = payload_of(msg, MessageType::kListEntries, 8);
    uint64_t size = 4;
    for (const ListEntry& e : entries) {
        size += list_entry_encoded_size(e);
    }
    EXPECT_EQ(payload.size(), size);
    EXPECT_EQ(list_entry_encoded_size(entries[0]), 4 + 1 + 4 + d1.size());
    EXPECT_EQ(payload, Le().u32(2)
                           .key("a")
                           .u32(static_cast<uint32_t>(d1.size()))
                           .raw(d1)
                           .key(entries[1].key)
                           .u32(static_cast<uint32_t>(d2.size()))
                           .raw(d2)
                           .b);
    auto back = decode_list_entries(payload);
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    ASSERT_EQ(back->size(), 2U);
    for (size_t i = 0; i < 2; ++i) {
        EXPECT_EQ((*back)[i].key, entries[i].key);
        EXPECT_EQ(Bytes((*back)[i].descriptor.begin(), (*back)[i].descriptor.end()),
                  Bytes(entries[i].descriptor.begin(), entries[i].descriptor.end()));
    }
    auto none = decode_list_entries(payload_of(value_of(encode_list_entries(8, {})), MessageType::kListEntries, 8));
    ASSERT_TRUE(none.ok());
    EXPECT_TRUE(none->empty());

    const Bytes end = encode_list_end(8, 0x0102030405060708ULL);
    const Bytes end_payload = payload_of(end, MessageType::kListEnd, 8);
    EXPECT_EQ(end_payload, Le().u64(0x0102030405060708ULL).b);
    auto count = decode_list_end(end_payload);
    ASSERT_TRUE(count.ok());
    EXPECT_EQ(*count, 0x0102030405060708ULL);
}

TEST(TransportMessage, EmptyAndOpaquePayloads) {
    for (const MessageType type :
         {MessageType::kTensorDataEnd, MessageType::kTensorPutAck, MessageType::kListRequest}) {
        const Bytes msg = value_of(encode_message(type, 6));
        EXPECT_EQ(msg.size(), kMessageHeaderSize);
        const Bytes payload = payload_of(msg, type, 6);
        EXPECT_TRUE(check_empty_payload(type, payload).ok());
        const Bytes one = {0};
        expect_error(
            check_empty_payload(type, one), ErrorCode::kInvalidData,
            std::string(message_type_name(static_cast<uint32_t>(type))) + " payload must be empty, has 1 bytes", 0);
    }
    // PING's payload is opaque; PONG echoes it.
    const Bytes token = {9, 8, 7};
    const Bytes ping = value_of(encode_message(MessageType::kPing, 1, token));
    EXPECT_EQ(payload_of(ping, MessageType::kPing, 1), token);
    const Bytes pong = value_of(encode_message(MessageType::kPong, 1, payload_of(ping, MessageType::kPing, 1)));
    EXPECT_EQ(payload_of(pong, MessageType::kPong, 1), token);
}

// ---- decoder rejections ---------------------------------------------------------

/// A hello payload with the given fixed fields and lists.
Bytes hello_payload(uint32_t version, uint32_t max_size, uint64_t flags, const Bytes& lists) {
    return Le().u32(version).u32(max_size).u64(flags).raw(lists).b;
}

TEST(TransportMessage, HelloRejections) {
    const Bytes empty_lists = Le().u16(0).u16(0).u16(0).b;
    EXPECT_TRUE(decode_hello(hello_payload(1, 64, 0x0F, empty_lists)).ok());
    expect_error(decode_hello(hello_payload(0, 64, 0, empty_lists)), ErrorCode::kInvalidData, "HELLO protocol_version",
                 0);
    expect_error(decode_hello(hello_payload(1, 63, 0, empty_lists)), ErrorCode::kInvalidData,
                 "HELLO max_message_size: 63", 4);
    expect_error(decode_hello(hello_payload(1, 64, 0x10, empty_lists)), ErrorCode::kInvalidData,
                 "HELLO capability_flags", 8);
    expect_error(decode_hello(hello_payload(1, 64, 1ULL << 63, empty_lists)), ErrorCode::kInvalidData,
                 "HELLO capability_flags", 8);
    expect_error(decode_hello(hello_payload(1, 64, kCapRdmaGpuDirect, empty_lists)), ErrorCode::kInvalidData,
                 "RDMA_GPUDIRECT", 8);
    // Layout tags 0x00 and 0xFF; the second entry (offset 16 + 2 + 1).
    for (const uint8_t tag : {0x00, 0xFF}) {
        expect_error(decode_hello(hello_payload(1, 64, 0, Le().u16(2).u8(0x01).u8(tag).u16(0).u16(0).b)),
                     ErrorCode::kInvalidData, "HELLO supported_layouts[1] layout_tag", 19);
    }
    // An extension entry's metadata past the end.
    expect_error(decode_hello(hello_payload(1, 64, 0, Le().u16(1).u8(0xF0).u16(5).u8(1).b)), ErrorCode::kTruncated,
                 "HELLO supported_layouts[0] ext_metadata", 21);
    expect_error(decode_hello(hello_payload(1, 64, 0, Le().u16(1).u8(0xF0).u8(1).b)), ErrorCode::kTruncated,
                 "HELLO supported_layouts[0] ext_metadata_length", 19);
    // Device tag 0xFF (the third device, at 16 + 2 + 2 + 2).
    expect_error(decode_hello(hello_payload(1, 64, 0, Le().u16(0).u16(3).u8(0).u8(1).u8(0xFF).u16(0).b)),
                 ErrorCode::kInvalidData, "HELLO supported_devices[2] device_tag", 22);
    // More devices than bytes.
    expect_error(decode_hello(hello_payload(1, 64, 0, Le().u16(0).u16(3).u8(0).b)), ErrorCode::kTruncated,
                 "HELLO supported_devices", 20);
    // Memory classes are not checked; bytes after them are refused.
    EXPECT_TRUE(decode_hello(hello_payload(1, 64, 0, Le().u16(0).u16(0).u16(2).u8(0xFF).u8(0x07).b)).ok());
    expect_error(decode_hello(hello_payload(1, 64, 0, Le().u16(0).u16(0).u16(1).u8(0).u8(0).u8(0).b)),
                 ErrorCode::kInvalidData, "HELLO payload: 2 trailing bytes", 23);
    expect_error(decode_hello(hello_payload(1, 64, 0, Le().u16(0).u16(0).u16(3).u8(0).b)), ErrorCode::kTruncated,
                 "HELLO supported_memory_classes", 22);
}

/// A request payload: key, layout list bytes, device, alignment, flags.
Bytes request_payload(std::string_view key, const Bytes& layouts, uint8_t device, uint32_t alignment, uint32_t flags) {
    return Le().key(key).raw(layouts).u8(device).u32(alignment).u32(flags).b;
}

TEST(TransportMessage, TensorRequestRejections) {
    const Bytes no_layouts = Le().u16(0).b;
    ASSERT_TRUE(decode_tensor_request(request_payload("k", no_layouts, 0, 1, 3)).ok());
    expect_error(decode_tensor_request(request_payload("", no_layouts, 0, 1, 0)), ErrorCode::kInvalidData,
                 "TENSOR_REQUEST tensor_key: the key is empty", 0);
    expect_error(decode_tensor_request(request_payload("a\xC3", no_layouts, 0, 1, 0)), ErrorCode::kInvalidData,
                 "TENSOR_REQUEST tensor_key: the key is not valid UTF-8", 4);
    expect_error(decode_tensor_request(request_payload("\xED\xA0\x80", no_layouts, 0, 1, 0)), ErrorCode::kInvalidData,
                 "UTF-8", 4);
    // A key length larger than what remains: kTruncated, before any allocation.
    Bytes huge = request_payload("k", no_layouts, 0, 1, 0);
    huge[0] = 0xFF;
    huge[1] = 0xFF;
    huge[2] = 0xFF;
    huge[3] = 0xFF;
    expect_error(decode_tensor_request(huge), ErrorCode::kTruncated, "TENSOR_REQUEST tensor_key", 4);
    // Layout tags (entry 1 at 4 + 1 + 2 + 1).
    expect_error(decode_tensor_request(request_payload("k", Le().u16(2).u8(1).u8(0).b, 0, 1, 0)),
                 ErrorCode::kInvalidData, "TENSOR_REQUEST preferred_layouts[1] layout_tag: 0x00", 8);
    expect_error(decode_tensor_request(request_payload("k", Le().u16(1).u8(0xFF).b, 0, 1, 0)), ErrorCode::kInvalidData,
                 "TENSOR_REQUEST preferred_layouts[0] layout_tag: 0xFF", 7);
    // preferred_device at 4 + 1 + 2 = 7, min_alignment at 8, request_flags at 12.
    expect_error(decode_tensor_request(request_payload("k", no_layouts, 0xFF, 1, 0)), ErrorCode::kInvalidData,
                 "TENSOR_REQUEST preferred_device", 7);
    expect_error(decode_tensor_request(request_payload("k", no_layouts, 0, 3, 0)), ErrorCode::kInvalidData,
                 "TENSOR_REQUEST min_alignment: 3 is not a power of two", 8);
    expect_error(decode_tensor_request(request_payload("k", no_layouts, 0, 0, 0)), ErrorCode::kInvalidData,
                 "TENSOR_REQUEST min_alignment: 0 is not a power of two", 8);
    expect_error(decode_tensor_request(request_payload("k", no_layouts, 0, 1, 4)), ErrorCode::kInvalidData,
                 "TENSOR_REQUEST request_flags", 12);
    expect_error(decode_tensor_request(request_payload("k", no_layouts, 0, 1, 0x80000000U)), ErrorCode::kInvalidData,
                 "TENSOR_REQUEST request_flags", 12);
    Bytes trailing = request_payload("k", no_layouts, 0, 1, 0);
    trailing.push_back(0);
    expect_error(decode_tensor_request(trailing), ErrorCode::kInvalidData, "TENSOR_REQUEST payload: 1 trailing bytes",
                 16);
}

TEST(TransportMessage, TensorDescriptorRejections) {
    const Bytes d = sample_descriptor();
    const Bytes good = Le().raw(d).u64(24).u32(0).u32(1).b;
    ASSERT_TRUE(decode_tensor_descriptor(good).ok());
    // Fewer than the 10 bytes that say the descriptor's length.
    expect_error(decode_tensor_descriptor(std::span(good).first(9)), ErrorCode::kTruncated,
                 "TENSOR_DESCRIPTOR descriptor", 0);
    // A descriptor_length below the fixed header.
    Bytes short_length = good;
    short_length[kDescriptorLengthOffset] = 19;
    short_length[kDescriptorLengthOffset + 1] = 0;
    expect_error(decode_tensor_descriptor(short_length), ErrorCode::kInvalidData,
                 "TENSOR_DESCRIPTOR descriptor_length: 19", kDescriptorLengthOffset);
    // The transport fields must follow and end the payload.
    expect_error(decode_tensor_descriptor(std::span(good).first(good.size() - 1)), ErrorCode::kTruncated,
                 "TENSOR_DESCRIPTOR total_shards", d.size() + 12);
    expect_error(decode_tensor_descriptor(std::span(good).first(d.size() + 3)), ErrorCode::kTruncated,
                 "TENSOR_DESCRIPTOR total_data_bytes", d.size());
    Bytes longer = good;
    longer[kDescriptorLengthOffset] = static_cast<uint8_t>(longer[kDescriptorLengthOffset] + 1);
    expect_error(decode_tensor_descriptor(longer), ErrorCode::kTruncated, "TENSOR_DESCRIPTOR total_shards",
                 d.size() + 13);
    Bytes huge = good;
    huge[kDescriptorLengthOffset + 3] = 0x80;
    expect_error(decode_tensor_descriptor(huge), ErrorCode::kTruncated, "TENSOR_DESCRIPTOR descriptor", 0);
    Bytes trailing = good;
    trailing.push_back(0);
    trailing.push_back(0);
    expect_error(decode_tensor_descriptor(trailing), ErrorCode::kInvalidData,
                 "TENSOR_DESCRIPTOR payload: 2 trailing bytes", good.size());
    // Shards.
    expect_error(decode_tensor_descriptor(Le().raw(d).u64(0).u32(0).u32(0).b), ErrorCode::kInvalidData,
                 "TENSOR_DESCRIPTOR total_shards", d.size() + 12);
    expect_error(decode_tensor_descriptor(Le().raw(d).u64(0).u32(2).u32(2).b), ErrorCode::kInvalidData,
                 "TENSOR_DESCRIPTOR shard_index: 2", d.size() + 8);
    EXPECT_TRUE(decode_tensor_descriptor(Le().raw(d).u64(0).u32(1).u32(2).b).ok());
}

TEST(TransportMessage, TensorDataRejections) {
    const Bytes seven(7, 0);
    expect_error(decode_tensor_data(seven), ErrorCode::kTruncated, "TENSOR_DATA byte_offset_in_buffer", 0);
    EXPECT_TRUE(decode_tensor_data(Bytes(8, 0)).ok());
}

TEST(TransportMessage, TensorPutRejections) {
    const Bytes d = sample_descriptor();
    const auto n = static_cast<uint32_t>(d.size());
    ASSERT_TRUE(decode_tensor_put(Le().key("k").u32(n).raw(d).u64(0).b).ok());
    expect_error(decode_tensor_put(Le().key("").u32(n).raw(d).u64(0).b), ErrorCode::kInvalidData,
                 "TENSOR_PUT tensor_key: the key is empty", 0);
    expect_error(decode_tensor_put(Le().key("\xFF").u32(n).raw(d).u64(0).b), ErrorCode::kInvalidData,
                 "TENSOR_PUT tensor_key: the key is not valid UTF-8", 4);
    expect_error(decode_tensor_put(Le().u32(1000).str("k").b), ErrorCode::kTruncated, "TENSOR_PUT tensor_key", 4);
    // descriptor_length (at 5): at least the fixed header, equal to the descriptor's own.
    expect_error(decode_tensor_put(Le().key("k").u32(19).raw(d).u64(0).b), ErrorCode::kInvalidData,
                 "TENSOR_PUT descriptor_length: 19", 5);
    Bytes longer = d;
    longer.push_back(0);
    expect_error(decode_tensor_put(Le().key("k").u32(n + 1).raw(longer).u64(0).b), ErrorCode::kInvalidData,
                 "TENSOR_PUT descriptor_length: " + std::to_string(n + 1) + " disagrees", 5);
    expect_error(decode_tensor_put(Le().key("k").u32(n + 100).raw(d).u64(0).b), ErrorCode::kTruncated,
                 "TENSOR_PUT descriptor", 9);
    expect_error(decode_tensor_put(Le().key("k").u32(n).raw(d).u32(0).b), ErrorCode::kTruncated,
                 "TENSOR_PUT total_data_bytes", 9 + d.size());
    expect_error(decode_tensor_put(Le().key("k").u32(n).raw(d).u64(0).u8(1).b), ErrorCode::kInvalidData,
                 "TENSOR_PUT payload: 1 trailing bytes", 17 + d.size());
}

TEST(TransportMessage, ErrorRejections) {
    expect_error(decode_error(Le().u32(1).u32(10).str("short").b), ErrorCode::kTruncated, "ERROR message", 8);
    expect_error(decode_error(Le().u32(1).b), ErrorCode::kTruncated, "ERROR message length", 4);
    expect_error(decode_error(Le().u32(1).key("ok").u8(0).b), ErrorCode::kInvalidData,
                 "ERROR payload: 1 trailing bytes", 10);
}

TEST(TransportMessage, ListRejections) {
    const Bytes d = sample_descriptor();
    const auto n = static_cast<uint32_t>(d.size());
    ASSERT_TRUE(decode_list_entries(Le().u32(1).key("a").u32(n).raw(d).b).ok());
    // A count that the bytes after it cannot hold is refused before reserving.
    expect_error(decode_list_entries(Le().u32(0xFFFFFFFFU).u64(0).b), ErrorCode::kInvalidData,
                 "LIST_ENTRIES entry_count: 4294967295", 0);
    expect_error(decode_list_entries(Le().u32(2).u64(0).u32(0).b), ErrorCode::kInvalidData, "LIST_ENTRIES entry_count",
                 0);
    expect_error(decode_list_entries(Le().u32(2).key("a").u32(n).raw(d).b), ErrorCode::kTruncated,
                 "LIST_ENTRIES entries[1] tensor_key length", 13 + d.size());
    const Bytes two = Le().u32(2).key("a").u32(n).raw(d).b;
    expect_error(decode_list_entries(Le().raw(two).key("").u32(n).raw(d).b), ErrorCode::kInvalidData,
                 "LIST_ENTRIES entries[1] tensor_key: the key is empty", two.size());
    expect_error(decode_list_entries(Le().raw(two).key("\xC0\x80").u32(n).raw(d).b), ErrorCode::kInvalidData,
                 "LIST_ENTRIES entries[1] tensor_key: the key is not valid UTF-8", two.size() + 4);
    expect_error(decode_list_entries(Le().raw(two).key("b").u32(8).raw(d).b), ErrorCode::kInvalidData,
                 "LIST_ENTRIES entries[1] descriptor_length: 8", two.size() + 5);
    Bytes longer = d;
    longer.push_back(0);
    expect_error(decode_list_entries(Le().raw(two).key("b").u32(n + 1).raw(longer).b), ErrorCode::kInvalidData,
                 "LIST_ENTRIES entries[1] descriptor_length", two.size() + 5);
    expect_error(decode_list_entries(Le().raw(two).key("b").u32(n).raw(std::span(d).first(n - 1)).b),
                 ErrorCode::kTruncated, "LIST_ENTRIES entries[1] descriptor", two.size() + 9);
    expect_error(decode_list_entries(Le().u32(1).key("a").u32(n).raw(d).u8(0).b), ErrorCode::kInvalidData,
                 "LIST_ENTRIES payload: 1 trailing bytes", 13 + d.size());

    expect_error(decode_list_end(Bytes(7, 0)), ErrorCode::kTruncated, "LIST_END entry_count", 0);
    expect_error(decode_list_end(Bytes(9, 0)), ErrorCode::kInvalidData, "LIST_END payload: 1 trailing bytes", 8);
}

// ---- encoder rejections ---------------------------------------------------------

TEST(TransportMessage, EncoderRejections) {
    const auto invalid = [](const auto& r, std::string_view field) {
        expect_error(r, ErrorCode::kInvalidArgument, field, Error::kNoOffset);
    };
    const Hello good_hello = sample_hello();
    invalid(encode_hello(MessageType::kTensorRequest, 1, good_hello), "HELLO message_type");
    Hello h = good_hello;
    h.protocol_version = 0;
    invalid(encode_hello(MessageType::kClientHello, 1, h), "HELLO protocol_version");
    h = good_hello;
    h.max_message_size = 63;
    invalid(encode_hello(MessageType::kClientHello, 1, h), "HELLO max_message_size: 63");
    h = good_hello;
    h.capability_flags = 0x10;
    invalid(encode_hello(MessageType::kClientHello, 1, h), "HELLO capability_flags");
    h.capability_flags = kCapRdmaGpuDirect;
    invalid(encode_hello(MessageType::kClientHello, 1, h), "HELLO capability_flags");
    h = good_hello;
    h.layouts[1].tag = 0x00;
    invalid(encode_hello(MessageType::kClientHello, 1, h), "HELLO supported_layouts[1] layout_tag");
    h.layouts[1].tag = 0xFF;
    invalid(encode_hello(MessageType::kClientHello, 1, h), "HELLO supported_layouts[1] layout_tag");
    h = good_hello;
    h.layouts[0].ext_metadata = {1};  // tag 0x01 carries no metadata
    invalid(encode_hello(MessageType::kClientHello, 1, h), "HELLO supported_layouts[0] ext_metadata");
    h = good_hello;
    h.layouts[1].ext_metadata.assign(65536, 0);
    invalid(encode_hello(MessageType::kClientHello, 1, h), "HELLO supported_layouts[1] ext_metadata");
    h.layouts[1].ext_metadata.assign(65535, 0);
    EXPECT_TRUE(encode_hello(MessageType::kClientHello, 1, h).ok());
    h = good_hello;
    h.layouts.assign(65536, LayoutEntry{0x01, {}});
    invalid(encode_hello(MessageType::kClientHello, 1, h), "HELLO layout_count");
    h = good_hello;
    h.devices = {0x00, 0xFF};
    invalid(encode_hello(MessageType::kClientHello, 1, h), "HELLO supported_devices[1] device_tag");
    h.devices.assign(65536, 0);
    invalid(encode_hello(MessageType::kClientHello, 1, h), "HELLO device_count");
    h = good_hello;
    h.memory_classes.assign(65536, 0);
    invalid(encode_hello(MessageType::kClientHello, 1, h), "HELLO class_count");

    const TensorRequest good_request = sample_request();
    TensorRequest q = good_request;
    q.key.clear();
    invalid(encode_tensor_request(1, q), "TENSOR_REQUEST tensor_key: the key is empty");
    q.key = "\xC3";
    invalid(encode_tensor_request(1, q), "TENSOR_REQUEST tensor_key: the key is not valid UTF-8");
    q = good_request;
    q.preferred_layouts = {LayoutEntry{0x00, {}}};
    invalid(encode_tensor_request(1, q), "TENSOR_REQUEST preferred_layouts[0] layout_tag");
    q = good_request;
    q.preferred_device = 0xFF;
    invalid(encode_tensor_request(1, q), "TENSOR_REQUEST preferred_device");
    q = good_request;
    q.min_alignment = 3;
    invalid(encode_tensor_request(1, q), "TENSOR_REQUEST min_alignment: 3 is not a power of two");
    q.min_alignment = 0;
    invalid(encode_tensor_request(1, q), "TENSOR_REQUEST min_alignment: 0");
    q = good_request;
    q.flags = 4;
    invalid(encode_tensor_request(1, q), "TENSOR_REQUEST request_flags");

    const Bytes d = sample_descriptor();
    invalid(encode_tensor_descriptor(1, std::span(d).first(9), {}), "TENSOR_DESCRIPTOR descriptor");
    invalid(encode_tensor_descriptor(1, std::span(d).first(19), {}), "TENSOR_DESCRIPTOR descriptor");
    invalid(encode_tensor_descriptor(1, std::span(d).first(d.size() - 1), {}), "TENSOR_DESCRIPTOR descriptor");
    Bytes longer = d;
    longer.push_back(0);
    invalid(encode_tensor_descriptor(1, longer, {}), "TENSOR_DESCRIPTOR descriptor");
    invalid(encode_tensor_descriptor(1, d, DescriptorTransport{0, 0, 0}), "TENSOR_DESCRIPTOR total_shards");
    invalid(encode_tensor_descriptor(1, d, DescriptorTransport{0, 3, 3}), "TENSOR_DESCRIPTOR shard_index: 3");

    EXPECT_TRUE(encode_tensor_data_header(1, 0, UINT32_MAX - kDataFrameHeaderSize).ok());
    invalid(encode_tensor_data_header(1, 0, UINT32_MAX - kDataFrameHeaderSize + 1), "TENSOR_DATA data");
    invalid(encode_tensor_data_header(1, 0, SIZE_MAX), "TENSOR_DATA data");

    TensorPut p{"k", d, 0};
    ASSERT_TRUE(encode_tensor_put(1, p).ok());
    p.key.clear();
    invalid(encode_tensor_put(1, p), "TENSOR_PUT tensor_key");
    p.key = "\xF8";
    invalid(encode_tensor_put(1, p), "TENSOR_PUT tensor_key");
    p.key = "k";
    p.descriptor = longer;
    invalid(encode_tensor_put(1, p), "TENSOR_PUT descriptor");
    p.descriptor = std::span(d).first(5);
    invalid(encode_tensor_put(1, p), "TENSOR_PUT descriptor");

    const std::vector<ListEntry> bad_key = {ListEntry{"a", d}, ListEntry{"", d}};
    invalid(encode_list_entries(1, bad_key), "LIST_ENTRIES entries[1] tensor_key");
    const std::vector<ListEntry> bad_utf8 = {ListEntry{"\xE2\x82", d}};
    invalid(encode_list_entries(1, bad_utf8), "LIST_ENTRIES entries[0] tensor_key");
    const std::vector<ListEntry> bad_descriptor = {ListEntry{"a", d}, ListEntry{"b", longer}};
    invalid(encode_list_entries(1, bad_descriptor), "LIST_ENTRIES entries[1] descriptor");
}

// ---- truncation at every byte -----------------------------------------------------

/// Decodes every proper prefix of `payload` with `decode`: each must fail with
/// `kTruncated` (or `kInvalidData`, where `invalid_ok` says a count is checked
/// against the bytes that follow), with a message and an offset inside the
/// prefix, except the prefixes `allowed` accepts.
template <typename Decode>
void expect_prefixes_fail(std::string_view what, const Bytes& payload, Decode decode,
                          const std::function<bool(size_t)>& allowed = {}, bool invalid_ok = false) {
    SCOPED_TRACE(std::string(what));
    ASSERT_TRUE(decode(std::span<const uint8_t>(payload)).ok());
    for (size_t n = 0; n < payload.size(); ++n) {
        // A copy of just the prefix, so that a read past it is caught by ASan.
        const Bytes prefix(payload.begin(), payload.begin() + static_cast<std::ptrdiff_t>(n));
        auto r = decode(std::span<const uint8_t>(prefix));
        if (allowed && allowed(n)) {
            EXPECT_TRUE(r.ok()) << "prefix " << n << ": " << r.error().to_string();
            continue;
        }
        ASSERT_FALSE(r.ok()) << "prefix of " << n << " bytes decoded";
        const Error& e = r.error();
        if (invalid_ok) {
            EXPECT_TRUE(e.code() == ErrorCode::kTruncated || e.code() == ErrorCode::kInvalidData) << e.to_string();
        } else {
            EXPECT_EQ(e.code(), ErrorCode::kTruncated) << "prefix " << n << ": " << e.to_string();
        }
        EXPECT_FALSE(e.message().empty());
        EXPECT_TRUE(e.has_offset());
        EXPECT_LE(e.offset(), n) << e.to_string();
    }
}

TEST(TransportMessage, EveryPrefixFailsCleanly) {
    const Bytes d = sample_descriptor();
    const Hello hello = sample_hello();
    const Bytes hello_bytes =
        payload_of(value_of(encode_hello(MessageType::kClientHello, 1, hello)), MessageType::kClientHello, 1);
    // The one prefix the spec allows: the memory-class list absent.
    expect_prefixes_fail("hello", hello_bytes, decode_hello,
                         [&](size_t n) { return n == hello_bytes.size() - 2 - hello.memory_classes.size(); });
    expect_prefixes_fail(
        "request", payload_of(value_of(encode_tensor_request(1, sample_request())), MessageType::kTensorRequest, 1),
        decode_tensor_request);
    expect_prefixes_fail(
        "descriptor",
        payload_of(value_of(encode_tensor_descriptor(1, d, {6, 0, 1})), MessageType::kTensorDescriptor, 1),
        decode_tensor_descriptor);
    // TENSOR_DATA: all its bytes after the offset are data, so only the offset can be cut.
    expect_prefixes_fail("data", Le().u64(3).u8(1).u8(2).u8(3).b, decode_tensor_data,
                         [](size_t n) { return n >= kDataFrameHeaderSize; });
    expect_prefixes_fail(
        "put", payload_of(value_of(encode_tensor_put(1, TensorPut{"key", d, 24})), MessageType::kTensorPut, 1),
        decode_tensor_put);
    expect_prefixes_fail("error", payload_of(encode_error(1, 2, "not here"), MessageType::kError, 1), decode_error);
    const std::vector<ListEntry> entries = {ListEntry{"a", d}, ListEntry{"bb", d}};
    // A cut list fails on its count (kInvalidData) or on a field (kTruncated).
    expect_prefixes_fail("list entries",
                         payload_of(value_of(encode_list_entries(1, entries)), MessageType::kListEntries, 1),
                         decode_list_entries, {}, true);
    expect_prefixes_fail("list end", payload_of(encode_list_end(1, 77), MessageType::kListEnd, 1), decode_list_end);
}

// ---- random hellos and requests -------------------------------------------------

/// A random layout entry: any tag but 0x00 and 0xFF, metadata on extension tags.
LayoutEntry random_layout(std::mt19937& rng) {
    LayoutEntry e;
    e.tag = static_cast<uint8_t>(std::uniform_int_distribution<int>(1, 0xFE)(rng));
    if (e.tag >= 0xF0) {
        e.ext_metadata.resize(std::uniform_int_distribution<size_t>(0, 40)(rng));
        for (uint8_t& b : e.ext_metadata) {
            b = static_cast<uint8_t>(rng());
        }
    }
    return e;
}

/// A random list of random layout entries.
std::vector<LayoutEntry> random_layouts(std::mt19937& rng) {
    std::vector<LayoutEntry> v(std::uniform_int_distribution<size_t>(0, 12)(rng));
    for (LayoutEntry& e : v) {
        e = random_layout(rng);
    }
    return v;
}

/// A random list of bytes other than 0xFF (when `devices`).
std::vector<uint8_t> random_tags(std::mt19937& rng, bool devices) {
    std::vector<uint8_t> v(std::uniform_int_distribution<size_t>(0, 10)(rng));
    for (uint8_t& b : v) {
        b = static_cast<uint8_t>(std::uniform_int_distribution<int>(0, devices ? 0xFE : 0xFF)(rng));
    }
    return v;
}

/// A random valid UTF-8 key of 1 to 30 characters (ASCII, 2-, 3- and 4-byte ones).
std::string random_key(std::mt19937& rng) {
    static const std::vector<std::string> pieces = {
        "a", "Z", "/", ".", "0", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80"};
    std::string s;
    const size_t n = std::uniform_int_distribution<size_t>(1, 30)(rng);
    for (size_t i = 0; i < n; ++i) {
        s += pieces[std::uniform_int_distribution<size_t>(0, pieces.size() - 1)(rng)];
    }
    return s;
}

TEST(TransportMessage, RandomHellosAndRequestsRoundTrip) {
    std::mt19937 rng(20240607);
    for (int i = 0; i < 500; ++i) {
        Hello h;
        h.protocol_version = std::uniform_int_distribution<uint32_t>(1, UINT32_MAX)(rng);
        h.max_message_size = std::uniform_int_distribution<uint32_t>(64, UINT32_MAX)(rng);
        h.capability_flags = rng() & 0x7U;
        if ((h.capability_flags & kCapRdmaDataPlane) != 0 && (rng() & 1U) != 0) {
            h.capability_flags |= kCapRdmaGpuDirect;
        }
        h.layouts = random_layouts(rng);
        h.devices = random_tags(rng, true);
        h.memory_classes = random_tags(rng, false);
        const auto type = (i % 2 == 0) ? MessageType::kClientHello : MessageType::kServerHello;
        const auto stream = static_cast<uint32_t>(rng());
        const Bytes msg = value_of(encode_hello(type, stream, h));
        auto back = decode_hello(payload_of(msg, type, stream));
        ASSERT_TRUE(back.ok()) << back.error().to_string();
        expect_same(*back, h);

        TensorRequest q;
        q.key = random_key(rng);
        q.preferred_layouts = random_layouts(rng);
        q.preferred_device = static_cast<uint8_t>(std::uniform_int_distribution<int>(0, 0xFE)(rng));
        q.min_alignment = 1U << std::uniform_int_distribution<int>(0, 31)(rng);
        q.flags = rng() & kRequestDefinedMask;
        const Bytes qmsg = value_of(encode_tensor_request(stream, q));
        const Bytes qpayload = payload_of(qmsg, MessageType::kTensorRequest, stream);
        auto qback = decode_tensor_request(qpayload);
        ASSERT_TRUE(qback.ok()) << qback.error().to_string();
        expect_same(*qback, q);
        // Canonical: the decoded request encodes to the same bytes.
        EXPECT_EQ(value_of(encode_tensor_request(stream, *qback)), qmsg);

        // A random byte flipped: the decoders fail cleanly or decode something
        // that encodes again.
        Bytes flipped = qpayload;
        flipped[std::uniform_int_distribution<size_t>(0, flipped.size() - 1)(rng)] ^=
            static_cast<uint8_t>(1U << std::uniform_int_distribution<int>(0, 7)(rng));
        auto f = decode_tensor_request(flipped);
        if (f.ok()) {
            EXPECT_TRUE(encode_tensor_request(1, *f).ok());
        } else {
            EXPECT_TRUE(f.error().code() == ErrorCode::kTruncated || f.error().code() == ErrorCode::kInvalidData)
                << f.error().to_string();
        }
    }
}

TEST(TransportMessage, DataRunBytesIsTheSumOfTheBuffersAndRefusesOverflow) {
    hurray::TensorDescriptor d;
    d.buffers = {hurray::BufferHandle{.byte_size = 8}, hurray::BufferHandle{.byte_size = 16}};
    ASSERT_TRUE(hurray::data_run_bytes(d).ok());
    EXPECT_EQ(*hurray::data_run_bytes(d), 24U);
    d.buffers = {hurray::BufferHandle{.byte_size = 1ULL << 63}, hurray::BufferHandle{.byte_size = 1ULL << 63}};
    auto r = hurray::data_run_bytes(d);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), hurray::ErrorCode::kSizeOverflow);
}

}  // namespace
}  // namespace hurray::transport_test
