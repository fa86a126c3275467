// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the transport protocol's decoders
// (hurray/io/transport_message.hpp) on untrusted bytes.
//
// The input is a run of framed messages: a 12-byte header, then
// min(payload_length, what is left) bytes of payload, again and again. Each
// payload (copied to a buffer of its own, so that a read past it is caught)
// goes to the decoder of its header's type: hello (1, 2), request (3),
// descriptor (4; its descriptor then to hurray::decode), data (5), put (7),
// error (9), list entries (0xF1), list end (0xF2), check_empty_payload (6, 8,
// 0xF0); PING and PONG carry an opaque payload. Whatever decodes must:
//  - re-encode, with the header's stream id, to a message whose header is
//    right and whose payload decodes to the same values;
//  - re-encode to exactly the payload it came from (every message but a
//    hello without its memory-class list and an ERROR whose text was not
//    UTF-8);
// and a failed decode must be kTruncated or kInvalidData with a message and
// an offset inside the payload. Built with -fno-exceptions -fno-rtti: a
// violated property traps.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hurray/core/descriptor_codec.hpp"
#include "hurray/io/file_format.hpp"
#include "hurray/io/transport_message.hpp"

namespace {

using hurray::MessageType;

/// Traps when a property does not hold.
void require(bool ok) {
    if (!ok) {
        __builtin_trap();
    }
}

/// The value of a result that must hold one.
template <typename T>
T must(hurray::Result<T> r) {
    require(r.ok());
    return std::move(r).value_unchecked();
}

/// Whether two byte runs are equal.
bool same_bytes(std::span<const uint8_t> a, std::span<const uint8_t> b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

/// A decoder's error: one of the two codes a payload can earn, a message, an
/// offset inside the payload.
void check_error(const hurray::Error& e, size_t payload_size) {
    require(e.code() == hurray::ErrorCode::kTruncated || e.code() == hurray::ErrorCode::kInvalidData);
    require(!e.message().empty());
    require(e.has_offset() && e.offset() <= payload_size);
}

/// The payload of a re-encoded message, after checking its header.
std::span<const uint8_t> payload_of(const std::vector<uint8_t>& message, MessageType type, uint32_t stream_id) {
    auto h = hurray::decode_message_header(message);
    require(h.ok() && h->type == static_cast<uint32_t>(type) && h->stream_id == stream_id &&
            uint64_t{h->payload_length} + hurray::kMessageHeaderSize == message.size());
    return std::span<const uint8_t>(message).subspan(hurray::kMessageHeaderSize);
}

/// Whether two hellos hold the same values.
bool same(const hurray::Hello& a, const hurray::Hello& b) {
    return a.protocol_version == b.protocol_version && a.max_message_size == b.max_message_size &&
           a.capability_flags == b.capability_flags && a.layouts == b.layouts && a.devices == b.devices &&
           a.memory_classes == b.memory_classes;
}

/// Whether two requests hold the same values.
bool same(const hurray::TensorRequest& a, const hurray::TensorRequest& b) {
    return a.key == b.key && a.preferred_layouts == b.preferred_layouts && a.preferred_device == b.preferred_device &&
           a.min_alignment == b.min_alignment && a.flags == b.flags;
}

/// Whether two listings hold the same values.
bool same(const std::vector<hurray::ListEntry>& a, const std::vector<hurray::ListEntry>& b) {
    if (a.size() != b.size()) {
        return false;
    }
    for (size_t i = 0; i < a.size(); ++i) {
        if (a[i].key != b[i].key || !same_bytes(a[i].descriptor, b[i].descriptor)) {
            return false;
        }
    }
    return true;
}

/// CLIENT_HELLO / SERVER_HELLO.
void fuzz_hello(MessageType type, uint32_t stream_id, std::span<const uint8_t> payload) {
    auto h = hurray::decode_hello(payload);
    if (!h.ok()) {
        check_error(h.error(), payload.size());
        return;
    }
    const auto message = must(hurray::encode_hello(type, stream_id, *h));
    const auto again = payload_of(message, type, stream_id);
    // Canonical, but an absent memory-class list is written as an empty one.
    require(same_bytes(again, payload) || (h->memory_classes.empty() && again.size() == payload.size() + 2 &&
                                           same_bytes(again.first(payload.size()), payload)));
    auto back = hurray::decode_hello(again);
    require(back.ok() && same(*back, *h));
}

/// TENSOR_REQUEST.
void fuzz_request(uint32_t stream_id, std::span<const uint8_t> payload) {
    auto q = hurray::decode_tensor_request(payload);
    if (!q.ok()) {
        check_error(q.error(), payload.size());
        return;
    }
    require(!q->key.empty() && hurray::is_valid_utf8(q->key));
    const auto message = must(hurray::encode_tensor_request(stream_id, *q));
    const auto again = payload_of(message, MessageType::kTensorRequest, stream_id);
    require(same_bytes(again, payload));
    auto back = hurray::decode_tensor_request(again);
    require(back.ok() && same(*back, *q));
}

/// TENSOR_DESCRIPTOR, and its descriptor through hurray::decode.
void fuzz_descriptor(uint32_t stream_id, std::span<const uint8_t> payload) {
    auto m = hurray::decode_tensor_descriptor(payload);
    if (!m.ok()) {
        check_error(m.error(), payload.size());
        return;
    }
    require(m->descriptor.data() == payload.data() &&
            m->descriptor.size() + hurray::kDescriptorTransportSize == payload.size());
    require(m->transport.total_shards >= 1 && m->transport.shard_index < m->transport.total_shards);
    const auto message = must(hurray::encode_tensor_descriptor(stream_id, m->descriptor, m->transport));
    const auto again = payload_of(message, MessageType::kTensorDescriptor, stream_id);
    require(same_bytes(again, payload));
    auto back = hurray::decode_tensor_descriptor(again);
    require(back.ok() && same_bytes(back->descriptor, m->descriptor) &&
            back->transport.total_data_bytes == m->transport.total_data_bytes &&
            back->transport.shard_index == m->transport.shard_index &&
            back->transport.total_shards == m->transport.total_shards);

    // The descriptor, as a client decodes it. A strictly accepted descriptor is
    // canonical: it encodes to exactly its bytes.
    auto d = hurray::decode(m->descriptor);
    if (d.ok()) {
        auto re = hurray::encode_unchecked(*d);
        require(re.ok() && same_bytes(*re, m->descriptor));
    } else {
        require(!d.error().message().empty());
    }
}

/// TENSOR_DATA.
void fuzz_data(uint32_t stream_id, std::span<const uint8_t> payload) {
    auto f = hurray::decode_tensor_data(payload);
    if (!f.ok()) {
        check_error(f.error(), payload.size());
        return;
    }
    require(f->data.size() + hurray::kDataFrameHeaderSize == payload.size());
    const auto head = must(hurray::encode_tensor_data_header(stream_id, f->offset, f->data.size()));
    std::vector<uint8_t> message(head.begin(), head.end());
    message.insert(message.end(), f->data.begin(), f->data.end());
    const auto again = payload_of(message, MessageType::kTensorData, stream_id);
    require(same_bytes(again, payload));
    auto back = hurray::decode_tensor_data(again);
    require(back.ok() && back->offset == f->offset && same_bytes(back->data, f->data));
}

/// TENSOR_PUT.
void fuzz_put(uint32_t stream_id, std::span<const uint8_t> payload) {
    auto p = hurray::decode_tensor_put(payload);
    if (!p.ok()) {
        check_error(p.error(), payload.size());
        return;
    }
    const auto message = must(hurray::encode_tensor_put(stream_id, *p));
    const auto again = payload_of(message, MessageType::kTensorPut, stream_id);
    require(same_bytes(again, payload));
    auto back = hurray::decode_tensor_put(again);
    require(back.ok() && back->key == p->key && same_bytes(back->descriptor, p->descriptor) &&
            back->total_data_bytes == p->total_data_bytes);
}

/// ERROR: also cut again under a limit taken from the payload.
void fuzz_error(uint32_t stream_id, std::span<const uint8_t> payload) {
    auto e = hurray::decode_error(payload);
    if (!e.ok()) {
        check_error(e.error(), payload.size());
        return;
    }
    require(hurray::is_valid_utf8(e->message));
    (void)hurray::transport_error_name(e->code);
    (void)hurray::error_code_of_transport_error(e->code);
    const auto message = hurray::encode_error(stream_id, e->code, e->message);
    const auto again = payload_of(message, MessageType::kError, stream_id);
    // The same bytes, unless the text had to be made UTF-8.
    const std::string original(payload.begin() + 8, payload.end());
    if (hurray::is_valid_utf8(original)) {
        require(e->message == original && same_bytes(again, payload));
    } else {
        require(e->message != original);
    }
    auto back = hurray::decode_error(again);
    require(back.ok() && back->code == e->code && back->message == e->message);

    // Cut under a limit: a prefix of the text, on a character boundary, less
    // than one character short of the room.
    const auto max_payload = static_cast<uint32_t>(payload.size() % 64);
    const size_t room = max_payload > 8 ? max_payload - 8 : 0;
    const auto cut_message = hurray::encode_error(stream_id, e->code, e->message, max_payload);
    const auto cut_payload = payload_of(cut_message, MessageType::kError, stream_id);
    require(cut_payload.size() <= std::max<size_t>(max_payload, 8));
    auto cut = hurray::decode_error(cut_payload);
    require(cut.ok() && cut->code == e->code);
    require(e->message.compare(0, cut->message.size(), cut->message) == 0);
    if (e->message.size() <= room) {
        require(cut->message == e->message);
    } else {
        require(cut->message.size() <= room && cut->message.size() + 4 > room);
    }
}

/// kListEntries.
void fuzz_list_entries(uint32_t stream_id, std::span<const uint8_t> payload) {
    auto l = hurray::decode_list_entries(payload);
    if (!l.ok()) {
        check_error(l.error(), payload.size());
        return;
    }
    uint64_t size = 4;
    for (const auto& entry : *l) {
        size += hurray::list_entry_encoded_size(entry);
    }
    require(size == payload.size());
    const auto message = must(hurray::encode_list_entries(stream_id, *l));
    const auto again = payload_of(message, MessageType::kListEntries, stream_id);
    require(same_bytes(again, payload));
    auto back = hurray::decode_list_entries(again);
    require(back.ok() && same(*back, *l));
}

/// kListEnd.
void fuzz_list_end(uint32_t stream_id, std::span<const uint8_t> payload) {
    auto n = hurray::decode_list_end(payload);
    if (!n.ok()) {
        check_error(n.error(), payload.size());
        return;
    }
    const auto message = hurray::encode_list_end(stream_id, *n);
    require(same_bytes(payload_of(message, MessageType::kListEnd, stream_id), payload));
}

/// TENSOR_DATA_END, TENSOR_PUT_ACK, kListRequest: an empty payload.
void fuzz_empty(MessageType type, uint32_t stream_id, std::span<const uint8_t> payload) {
    auto st = hurray::check_empty_payload(type, payload);
    require(st.ok() == payload.empty());
    if (!st.ok()) {
        check_error(st.error(), payload.size());
        require(st.error().code() == hurray::ErrorCode::kInvalidData);
        return;
    }
    const auto message = must(hurray::encode_message(type, stream_id));
    require(payload_of(message, type, stream_id).empty());
}

/// PING, PONG: an opaque payload, echoed.
void fuzz_opaque(MessageType type, uint32_t stream_id, std::span<const uint8_t> payload) {
    const auto message = must(hurray::encode_message(type, stream_id, payload));
    require(same_bytes(payload_of(message, type, stream_id), payload));
}

/// One message: the decoder of its type.
void fuzz_message(const hurray::MessageHeader& h, std::span<const uint8_t> payload) {
    const bool known = hurray::is_known_message_type(h.type);
    require(known == (hurray::message_type_name(h.type) != "UNKNOWN"));
    if (!known) {
        return;
    }
    const auto type = static_cast<MessageType>(h.type);
    switch (type) {
        case MessageType::kClientHello:
        case MessageType::kServerHello: fuzz_hello(type, h.stream_id, payload); break;
        case MessageType::kTensorRequest: fuzz_request(h.stream_id, payload); break;
        case MessageType::kTensorDescriptor: fuzz_descriptor(h.stream_id, payload); break;
        case MessageType::kTensorData: fuzz_data(h.stream_id, payload); break;
        case MessageType::kTensorPut: fuzz_put(h.stream_id, payload); break;
        case MessageType::kError: fuzz_error(h.stream_id, payload); break;
        case MessageType::kListEntries: fuzz_list_entries(h.stream_id, payload); break;
        case MessageType::kListEnd: fuzz_list_end(h.stream_id, payload); break;
        case MessageType::kTensorDataEnd:
        case MessageType::kTensorPutAck:
        case MessageType::kListRequest: fuzz_empty(type, h.stream_id, payload); break;
        case MessageType::kPing:
        case MessageType::kPong: fuzz_opaque(type, h.stream_id, payload); break;
        case MessageType::kRdmaRegister:
        case MessageType::kRdmaReady: break;  // not implemented by this library
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::span<const uint8_t> rest(data, size);
    for (;;) {
        auto h = hurray::decode_message_header(rest);
        if (!h.ok()) {
            require(rest.size() < hurray::kMessageHeaderSize && h.error().code() == hurray::ErrorCode::kTruncated);
            break;
        }
        const auto header = hurray::encode_message_header(*h);
        require(same_bytes(header, rest.first(hurray::kMessageHeaderSize)));
        rest = rest.subspan(hurray::kMessageHeaderSize);
        const size_t n = std::min<size_t>(h->payload_length, rest.size());
        // A buffer of its own: a read past the payload is a heap overflow.
        const std::vector<uint8_t> payload(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(n));
        rest = rest.subspan(n);
        fuzz_message(*h, payload);
    }
    return 0;
}
