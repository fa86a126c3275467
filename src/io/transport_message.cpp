// SPDX-License-Identifier: Apache-2.0
// The messages of the network transport protocol (interchange.md § Message
// Framing .. § Error Handling), encoded and decoded without I/O. Every read of
// a payload goes through ByteReader: a field past the end is kTruncated, a bad
// value kInvalidData, bytes left over kInvalidData; each error names the
// field and its byte offset within the payload. The encoders check what the
// decoders check (kInvalidArgument, no offset), so that what they write
// decodes.
#include "hurray/io/transport_message.hpp"

#include "hurray/core/checked_math.hpp"

#include "hurray/core/byte_io.hpp"
#include "hurray/core/tensor_descriptor.hpp"
#include "hurray/core/text.hpp"
#include "hurray/io/file_format.hpp"
#include "io/byte_view.hpp"

#include <algorithm>
#include <bit>
#include <string>
#include <string_view>
#include <utility>

namespace hurray {

namespace {

using detail::byte_view;
using detail::char_view;

/// The prefixes of the decoders' and encoders' error messages (a message's
/// name and a space; ByteReader keeps a view, so these are literals).
constexpr std::string_view kHeaderPrefix = "message header ";
/// `CLIENT_HELLO` and `SERVER_HELLO` share the payload and its decoder.
constexpr std::string_view kHelloPrefix = "HELLO ";
/// `TENSOR_REQUEST` errors.
constexpr std::string_view kRequestPrefix = "TENSOR_REQUEST ";
/// `TENSOR_DESCRIPTOR` errors.
constexpr std::string_view kDescriptorPrefix = "TENSOR_DESCRIPTOR ";
/// `TENSOR_DATA` errors.
constexpr std::string_view kDataPrefix = "TENSOR_DATA ";
/// `TENSOR_PUT` errors.
constexpr std::string_view kPutPrefix = "TENSOR_PUT ";
/// `ERROR` errors.
constexpr std::string_view kErrorPrefix = "ERROR ";
/// `kListEntries` errors.
constexpr std::string_view kListEntriesPrefix = "LIST_ENTRIES ";
/// `kListEnd` errors.
constexpr std::string_view kListEndPrefix = "LIST_END ";

/// The largest payload a message header can announce.
constexpr uint64_t kMaxPayloadLength = UINT32_MAX;
/// The largest count of a `uint16`-counted list.
constexpr uint64_t kMaxU16Count = UINT16_MAX;
/// The smallest `max_message_size` a hello may announce.
constexpr uint32_t kMinMaxMessageSize = 64;
/// `protocol_version`, `max_message_size`, `capability_flags`.
constexpr uint64_t kHelloFixedSize = 16;
/// `preferred_device`, `min_alignment`, `request_flags`.
constexpr uint64_t kRequestTailSize = 9;
/// `error_code` and the message's length.
constexpr uint64_t kErrorFixedSize = 8;
/// `total_data_bytes` of `TENSOR_PUT`.
constexpr uint64_t kPutTailSize = 8;
/// The bound a `kListEntries` count is checked against before anything is
/// reserved: every entry has at least its two `uint32` lengths.
constexpr uint64_t kMinListEntryBytes = 8;
/// A layout tag or device tag that is reserved as invalid.
constexpr uint8_t kReservedTag = 0xFF;
/// The first and last layout tag of the extension range (they carry metadata).
constexpr uint8_t kFirstExtensionLayoutTag = 0xF0;
/// See `kFirstExtensionLayoutTag`.
constexpr uint8_t kLastExtensionLayoutTag = 0xFE;
/// U+FFFD REPLACEMENT CHARACTER in UTF-8.
constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

/// Whether a layout entry with `tag` carries `ext_metadata_length` and metadata.
bool is_extension_layout_tag(uint8_t tag) noexcept {
    return tag >= kFirstExtensionLayoutTag && tag <= kLastExtensionLayoutTag;
}

/// How a field is named in an error: by itself ("tensor_key"), or as a field
/// of entry `index` of the list `list` ("entries[3] tensor_key"). The name is
/// built only when an error needs it.
struct FieldName {
    /// The list the field's entry is in; empty when the field is in no list.
    std::string_view list;
    /// The entry's index in `list`.
    uint64_t index = 0;

    /// The name of `field`.
    [[nodiscard]] std::string operator()(std::string_view field) const {
        if (list.empty()) {
            return std::string(field);
        }
        return std::string(list).append("[").append(dec(index)).append("] ").append(field);
    }
};

/// Who reports a field check: a decoder (`kInvalidData` at the field's offset
/// in the payload) or an encoder (`kInvalidArgument`, no offset).
struct FieldCheck {
    /// The message's name and a space ("TENSOR_REQUEST ").
    std::string_view prefix;
    /// The error code of a failed check.
    ErrorCode code = ErrorCode::kInvalidData;
    /// Whether offsets are reported (decoders).
    bool with_offsets = true;

    /// The error `<prefix><field>: <what>` at `offset` (decoders only).
    [[nodiscard, gnu::cold]] Error fail(std::string_view field, std::string_view what, uint64_t offset) const {
        return {code, std::string(prefix).append(field).append(": ").append(what),
                with_offsets ? offset : Error::kNoOffset};
    }
};

/// The checks of a decoder whose errors start with `prefix`.
constexpr FieldCheck decoding(std::string_view prefix) noexcept { return {prefix, ErrorCode::kInvalidData, true}; }
/// The checks of an encoder whose errors start with `prefix`.
constexpr FieldCheck encoding(std::string_view prefix) noexcept { return {prefix, ErrorCode::kInvalidArgument, false}; }

// ---- field checks (shared by the decoders and the encoders) -----------------

/// `protocol_version`: 0 is not a version.
Status check_protocol_version(const FieldCheck& c, uint32_t version, uint64_t at) {
    if (version == 0) {
        return c.fail("protocol_version", "0 is not a protocol version", at);
    }
    return Status::success();
}

/// `max_message_size`: at least `kMinMaxMessageSize`.
Status check_max_message_size(const FieldCheck& c, uint32_t size, uint64_t at) {
    if (size < kMinMaxMessageSize) {
        return c.fail("max_message_size", dec(size) + " is below the minimum of " + dec(kMinMaxMessageSize), at);
    }
    return Status::success();
}

/// `capability_flags`: no reserved bit; `RDMA_GPUDIRECT` implies `RDMA_DATA_PLANE`.
Status check_capability_flags(const FieldCheck& c, uint64_t flags, uint64_t at) {
    if ((flags & ~static_cast<uint64_t>(kCapDefinedMask)) != 0) {
        return c.fail("capability_flags",
                      hex(flags, 16) + " sets reserved bits " +
                          hex(flags & ~static_cast<uint64_t>(kCapDefinedMask), 16) + " (bits 4..63 must be 0)",
                      at);
    }
    if ((flags & kCapRdmaGpuDirect) != 0 && (flags & kCapRdmaDataPlane) == 0) {
        return c.fail("capability_flags", "RDMA_GPUDIRECT (bit 3) is set without RDMA_DATA_PLANE (bit 2)", at);
    }
    return Status::success();
}

/// A layout entry's `layout_tag`: not 0x00, not 0xFF.
Status check_layout_tag(const FieldCheck& c, const FieldName& name, uint8_t tag, uint64_t at) {
    if (tag == 0x00 || tag == kReservedTag) {
        return c.fail(name("layout_tag"), hex(tag) + " is not a layout tag (0x00 and 0xFF are invalid)", at);
    }
    return Status::success();
}

/// A device tag: not 0xFF.
Status check_device_tag(const FieldCheck& c, const FieldName& name, std::string_view field, uint8_t tag, uint64_t at) {
    if (tag == kReservedTag) {
        return c.fail(name(field), "device tag 0xFF is reserved (invalid)", at);
    }
    return Status::success();
}

/// `min_alignment`: a power of two.
Status check_min_alignment(const FieldCheck& c, uint32_t alignment, uint64_t at) {
    if (!std::has_single_bit(alignment)) {
        return c.fail("min_alignment", dec(alignment) + " is not a power of two", at);
    }
    return Status::success();
}

/// `request_flags`: no reserved bit.
Status check_request_flags(const FieldCheck& c, uint32_t flags, uint64_t at) {
    if ((flags & ~static_cast<uint32_t>(kRequestDefinedMask)) != 0) {
        return c.fail("request_flags",
                      hex(flags, 8) + " sets reserved bits " +
                          hex(flags & ~static_cast<uint32_t>(kRequestDefinedMask), 8) + " (bits 2..31 must be 0)",
                      at);
    }
    return Status::success();
}

/// `tensor_key`: not empty, valid UTF-8. `at` is the offset of its length
/// field (the key's bytes follow it).
Status check_key(const FieldCheck& c, const FieldName& name, std::string_view key, uint64_t at) {
    if (key.empty()) {
        return c.fail(name("tensor_key"), "the key is empty", at);
    }
    if (key.size() > UINT32_MAX) {
        return c.fail(name("tensor_key"), dec(key.size()) + " bytes do not fit its uint32 length", at);
    }
    if (!is_valid_utf8(key)) {
        return c.fail(name("tensor_key"), "the key is not valid UTF-8", at + 4);
    }
    return Status::success();
}

/// `shard_index` and `total_shards`: at least one shard, the index below the count.
Status check_shards(const FieldCheck& c, const DescriptorTransport& t, uint64_t index_at) {
    if (t.total_shards == 0) {
        return c.fail("total_shards", "0 shards (a transfer has at least 1)", index_at + 4);
    }
    if (t.shard_index >= t.total_shards) {
        return c.fail("shard_index", dec(t.shard_index) + " is not below total_shards " + dec(t.total_shards),
                      index_at);
    }
    return Status::success();
}

/// A descriptor's own `descriptor_length` (the `uint32` at
/// `kDescriptorLengthOffset`); `kTruncated` when `descriptor` is too short.
Result<uint32_t> own_descriptor_length(std::span<const uint8_t> descriptor, uint64_t at, std::string_view prefix,
                                       const FieldName& name) {
    ByteReader r(descriptor, at, prefix);
    if (r.remaining() < kDescriptorPeekSize) {
        HURRAY_RETURN_IF_ERROR(r.need(kDescriptorPeekSize, name("descriptor")));
    }
    HURRAY_RETURN_IF_ERROR(r.skip(kDescriptorLengthOffset, "descriptor"));
    return r.u32("descriptor");
}

/// An encoder's check of a descriptor it is given: at least the fixed header,
/// its own `descriptor_length` equal to its size.
Status check_descriptor_argument(const FieldCheck& c, const FieldName& name, std::span<const uint8_t> descriptor) {
    if (descriptor.size() < kFixedHeaderSize) {
        return c.fail(
            name("descriptor"),
            dec(descriptor.size()) + " bytes, fewer than a descriptor's fixed header (" + dec(kFixedHeaderSize) + ")",
            0);
    }
    // At least kFixedHeaderSize bytes: the length field is there.
    const uint32_t own = own_descriptor_length(descriptor, 0, c.prefix, name).value_or(0);
    if (own != descriptor.size()) {
        return c.fail(name("descriptor"),
                      "its descriptor_length says " + dec(own) + " bytes, the span has " + dec(descriptor.size()), 0);
    }
    return Status::success();
}

// ---- reading ------------------------------------------------------------------

/// The error of a read of `n` bytes that `r` does not have, naming `field`.
[[gnu::cold]] Error missing(const ByteReader& r, uint64_t n, const std::string& field) {
    Status st = r.need(n, field);
    return std::move(st).error();
}

/// Reads a little-endian `T`; `name(field)` names it when the bytes are missing.
template <typename T>
Result<T> read_field(ByteReader& r, const FieldName& name, std::string_view field) {
    if (r.remaining() < sizeof(T)) {
        return missing(r, sizeof(T), name(field));
    }
    return r.le<T>(field);
}

/// A view of the next `n` bytes; `name(field)` names them when they are missing.
Result<std::span<const uint8_t>> read_bytes(ByteReader& r, const FieldName& name, std::string_view field, uint64_t n) {
    if (r.remaining() < n) {
        return missing(r, n, name(field));
    }
    return r.bytes(n, field);
}

/// Fails with `kInvalidData` when bytes are left after the last field.
Status check_consumed(const ByteReader& r, std::string_view prefix) {
    if (r.remaining() != 0) {
        return Error(
            ErrorCode::kInvalidData,
            std::string(prefix).append("payload: ") + dec(r.remaining()) + " trailing bytes after the last field",
            r.abs_pos());
    }
    return Status::success();
}

/// Reads a `uint32` length and that many bytes of UTF-8 key (`tensor_key`).
/// The length is checked against what remains before anything is allocated.
Result<std::string> read_key(ByteReader& r, std::string_view prefix, const FieldName& name) {
    const uint64_t at = r.abs_pos();
    HURRAY_ASSIGN_OR_RETURN(const uint32_t length, read_field<uint32_t>(r, name, "tensor_key length"));
    // SAFETY: read_bytes proved `length` bytes before anything is allocated;
    // char_view reinterprets that checked view (no copy until the string).
    HURRAY_ASSIGN_OR_RETURN(const auto bytes, read_bytes(r, name, "tensor_key", length));
    HURRAY_RETURN_IF_ERROR(check_key(decoding(prefix), name, char_view(bytes), at));
    return std::string(char_view(bytes));
}

/// Reads a `uint32` descriptor length and that many descriptor bytes: the
/// length at least the fixed header and equal to the descriptor's own
/// `descriptor_length`. The result views `r`'s bytes.
Result<std::span<const uint8_t>> read_sized_descriptor(ByteReader& r, std::string_view prefix, const FieldName& name) {
    const uint64_t at = r.abs_pos();
    HURRAY_ASSIGN_OR_RETURN(const uint32_t length, read_field<uint32_t>(r, name, "descriptor_length"));
    if (length < kFixedHeaderSize) {
        return decoding(prefix).fail(
            name("descriptor_length"),
            dec(length) + " is less than a descriptor's fixed header (" + dec(kFixedHeaderSize) + " bytes)", at);
    }
    HURRAY_ASSIGN_OR_RETURN(const auto descriptor, read_bytes(r, name, "descriptor", length));
    HURRAY_ASSIGN_OR_RETURN(const uint32_t own, own_descriptor_length(descriptor, at + 4, prefix, name));
    if (own != length) {
        return decoding(prefix).fail(name("descriptor_length"),
                                     dec(length) + " disagrees with the descriptor's own descriptor_length " + dec(own),
                                     at);
    }
    return descriptor;
}

/// Reads one layout entry (entry `name.index` of `name.list`).
Result<LayoutEntry> read_layout_entry(ByteReader& r, std::string_view prefix, const FieldName& name) {
    const uint64_t at = r.abs_pos();
    LayoutEntry e;
    HURRAY_ASSIGN_OR_RETURN(e.tag, read_field<uint8_t>(r, name, "layout_tag"));
    HURRAY_RETURN_IF_ERROR(check_layout_tag(decoding(prefix), name, e.tag, at));
    if (is_extension_layout_tag(e.tag)) {
        HURRAY_ASSIGN_OR_RETURN(const uint16_t length, read_field<uint16_t>(r, name, "ext_metadata_length"));
        HURRAY_ASSIGN_OR_RETURN(const auto metadata, read_bytes(r, name, "ext_metadata", length));
        e.ext_metadata.assign(metadata.begin(), metadata.end());
    }
    return e;
}

/// Reads a `uint16` count (`count_field`) and that many layout entries (`list`).
Result<std::vector<LayoutEntry>> read_layout_list(ByteReader& r, std::string_view prefix, std::string_view count_field,
                                                  std::string_view list) {
    HURRAY_ASSIGN_OR_RETURN(const uint16_t count, r.u16(count_field));
    std::vector<LayoutEntry> entries;
    // Every entry takes at least one byte: never reserve more than remain.
    entries.reserve(std::min<size_t>(count, r.remaining()));
    for (uint16_t i = 0; i < count; ++i) {
        HURRAY_ASSIGN_OR_RETURN(auto e, read_layout_entry(r, prefix, FieldName{list, i}));
        entries.push_back(std::move(e));
    }
    return entries;
}

/// Reads a `uint16` count (`count_field`) and that many bytes (`list`); device
/// tags (`devices`) must not be 0xFF.
Result<std::vector<uint8_t>> read_byte_list(ByteReader& r, std::string_view prefix, std::string_view count_field,
                                            std::string_view list, bool devices) {
    HURRAY_ASSIGN_OR_RETURN(const uint16_t count, r.u16(count_field));
    const uint64_t at = r.abs_pos();
    HURRAY_ASSIGN_OR_RETURN(const auto bytes, r.bytes(count, list));
    if (devices) {
        for (size_t i = 0; i < bytes.size(); ++i) {
            HURRAY_RETURN_IF_ERROR(
                check_device_tag(decoding(prefix), FieldName{list, i}, "device_tag", bytes[i], at + i));
        }
    }
    return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

/// The length of the well-formed UTF-8 sequence that starts `s` (not empty);
/// 0 when none does.
size_t utf8_sequence_length(std::string_view s) noexcept {
    // SAFETY: the caller passes a non-empty view (front() exists); the
    // sequence's bytes are read only through substr, after the length check.
    const auto lead = static_cast<uint8_t>(s.front());
    size_t length = 0;
    if (lead < 0x80U) {
        return 1;
    }
    if ((lead & 0xE0U) == 0xC0U) {
        length = 2;
    } else if ((lead & 0xF0U) == 0xE0U) {
        length = 3;
    } else if ((lead & 0xF8U) == 0xF0U) {
        length = 4;
    } else {
        return 0;
    }
    if (length > s.size() || !is_valid_utf8(s.substr(0, length))) {
        return 0;
    }
    return length;
}

/// `bytes` as UTF-8: every byte that does not start a well-formed sequence
/// (or continue one) becomes U+FFFD.
std::string to_valid_utf8(std::string_view bytes) {
    if (is_valid_utf8(bytes)) {
        return std::string(bytes);
    }
    std::string out;
    out.reserve(bytes.size() + kReplacementCharacter.size());
    size_t i = 0;
    while (i < bytes.size()) {
        const size_t n = utf8_sequence_length(bytes.substr(i));
        if (n == 0) {
            out.append(kReplacementCharacter);
            ++i;
        } else {
            out.append(bytes.substr(i, n));
            i += n;
        }
    }
    return out;
}

// ---- writing ------------------------------------------------------------------

/// The bytes a layout list takes: its `uint16` count and its entries.
uint64_t layout_list_size(std::span<const LayoutEntry> entries) noexcept {
    uint64_t size = 2;
    for (const LayoutEntry& e : entries) {
        size += 1 + (is_extension_layout_tag(e.tag) ? 2 + e.ext_metadata.size() : 0);
    }
    return size;
}

/// An encoder's checks of a layout list (`count_field`, `list`).
Status check_layout_list(const FieldCheck& c, std::string_view count_field, std::string_view list,
                         std::span<const LayoutEntry> entries) {
    if (entries.size() > kMaxU16Count) {
        return c.fail(count_field, dec(entries.size()) + " entries do not fit a uint16 count", 0);
    }
    for (size_t i = 0; i < entries.size(); ++i) {
        const LayoutEntry& e = entries[i];
        const FieldName name{list, i};
        HURRAY_RETURN_IF_ERROR(check_layout_tag(c, name, e.tag, 0));
        if (is_extension_layout_tag(e.tag)) {
            if (e.ext_metadata.size() > kMaxU16Count) {
                return c.fail(name("ext_metadata"),
                              dec(e.ext_metadata.size()) + " bytes do not fit ext_metadata_length (uint16)", 0);
            }
        } else if (!e.ext_metadata.empty()) {
            return c.fail(name("ext_metadata"),
                          dec(e.ext_metadata.size()) + " bytes on the non-extension tag " + hex(e.tag) +
                              " (only 0xF0..0xFE carry metadata)",
                          0);
        }
    }
    return Status::success();
}

/// Writes a layout list: `uint16` count, then each entry.
void write_layout_list(ByteWriter& w, std::span<const LayoutEntry> entries) {
    w.u16(static_cast<uint16_t>(entries.size()));
    for (const LayoutEntry& e : entries) {
        w.u8(e.tag);
        if (is_extension_layout_tag(e.tag)) {
            w.u16(static_cast<uint16_t>(e.ext_metadata.size()));
            w.bytes(e.ext_metadata);
        }
    }
}

/// Writes a `uint16`-counted list of bytes.
void write_byte_list(ByteWriter& w, std::span<const uint8_t> bytes) {
    w.u16(static_cast<uint16_t>(bytes.size()));
    w.bytes(bytes);
}

/// Fails when a payload of `size` bytes does not fit `payload_length`.
Status check_payload_size(std::string_view prefix, uint64_t size) {
    if (size > kMaxPayloadLength) {
        return Error(ErrorCode::kInvalidArgument, std::string(prefix).append("payload: ") + dec(size) +
                                                      " bytes exceed the largest payload_length (" +
                                                      dec(kMaxPayloadLength) + ")");
    }
    return Status::success();
}

/// A message buffer of `payload_size` (at most `kMaxPayloadLength`) payload
/// bytes, its header written.
std::vector<uint8_t> start_message(MessageType type, uint32_t stream_id, uint64_t payload_size) {
    // SAFETY: `out` is sized for the header and the payload; the header's 12
    // bytes are copied to its start, the payload written by a ByteWriter.
    std::vector<uint8_t> out(kMessageHeaderSize + static_cast<size_t>(payload_size));
    const auto header =
        encode_message_header({static_cast<uint32_t>(type), stream_id, static_cast<uint32_t>(payload_size)});
    std::copy(header.begin(), header.end(), out.begin());
    return out;
}

/// The writer of the payload of a buffer from `start_message`.
ByteWriter payload_writer(std::vector<uint8_t>& message) {
    return ByteWriter(std::span<uint8_t>(message).subspan(kMessageHeaderSize));
}

/// Checks that `w` wrote exactly the payload its message was sized for.
Status check_written(const ByteWriter& w, const std::vector<uint8_t>& message, std::string_view prefix) {
    if (w.overflowed() || w.pos() + kMessageHeaderSize != message.size()) {
        return Error(ErrorCode::kInvalidArgument,
                     std::string(prefix).append("payload: the fields disagree with the computed size"));
    }
    return Status::success();
}

}  // namespace

// ---- names ------------------------------------------------------------------

bool is_known_message_type(uint32_t tag) noexcept {
    return (tag >= static_cast<uint32_t>(MessageType::kClientHello) &&
            tag <= static_cast<uint32_t>(MessageType::kRdmaReady)) ||
           (tag >= static_cast<uint32_t>(MessageType::kListRequest) &&
            tag <= static_cast<uint32_t>(MessageType::kListEnd));
}

std::string_view message_type_name(uint32_t tag) noexcept {
    switch (static_cast<MessageType>(tag)) {
        case MessageType::kClientHello: return "CLIENT_HELLO";
        case MessageType::kServerHello: return "SERVER_HELLO";
        case MessageType::kTensorRequest: return "TENSOR_REQUEST";
        case MessageType::kTensorDescriptor: return "TENSOR_DESCRIPTOR";
        case MessageType::kTensorData: return "TENSOR_DATA";
        case MessageType::kTensorDataEnd: return "TENSOR_DATA_END";
        case MessageType::kTensorPut: return "TENSOR_PUT";
        case MessageType::kTensorPutAck: return "TENSOR_PUT_ACK";
        case MessageType::kError: return "ERROR";
        case MessageType::kPing: return "PING";
        case MessageType::kPong: return "PONG";
        case MessageType::kRdmaRegister: return "RDMA_REGISTER";
        case MessageType::kRdmaReady: return "RDMA_READY";
        case MessageType::kListRequest: return "LIST_REQUEST";
        case MessageType::kListEntries: return "LIST_ENTRIES";
        case MessageType::kListEnd: return "LIST_END";
    }
    return "UNKNOWN";
}

std::string_view transport_error_name(uint32_t code) noexcept {
    switch (static_cast<TransportErrorCode>(code)) {
        case TransportErrorCode::kProtocolVersionMismatch: return "PROTOCOL_VERSION_MISMATCH";
        case TransportErrorCode::kUnknownTensor: return "UNKNOWN_TENSOR";
        case TransportErrorCode::kLayoutUnavailable: return "LAYOUT_UNAVAILABLE";
        case TransportErrorCode::kTranscodeLimitExceeded: return "TRANSCODE_LIMIT_EXCEEDED";
        case TransportErrorCode::kDeviceUnavailable: return "DEVICE_UNAVAILABLE";
        case TransportErrorCode::kInvalidMessage: return "INVALID_MESSAGE";
        case TransportErrorCode::kMessageTooLarge: return "MESSAGE_TOO_LARGE";
        case TransportErrorCode::kShardMismatch: return "SHARD_MISMATCH";
        case TransportErrorCode::kServerBusy: return "SERVER_BUSY";
        case TransportErrorCode::kShuttingDown: return "SHUTTING_DOWN";
        case TransportErrorCode::kTimeout: return "TIMEOUT";
        case TransportErrorCode::kInternal: return "INTERNAL";
        case TransportErrorCode::kPutRejected: return "PUT_REJECTED";
    }
    return "UNKNOWN";
}

ErrorCode error_code_of_transport_error(uint32_t code) noexcept {
    switch (static_cast<TransportErrorCode>(code)) {
        case TransportErrorCode::kUnknownTensor: return ErrorCode::kNotFound;
        case TransportErrorCode::kProtocolVersionMismatch:
        case TransportErrorCode::kLayoutUnavailable:
        case TransportErrorCode::kTranscodeLimitExceeded:
        case TransportErrorCode::kDeviceUnavailable: return ErrorCode::kUnsupported;
        case TransportErrorCode::kInvalidMessage:
        case TransportErrorCode::kMessageTooLarge:
        case TransportErrorCode::kShardMismatch:
        case TransportErrorCode::kPutRejected: return ErrorCode::kInvalidArgument;
        case TransportErrorCode::kServerBusy:
        case TransportErrorCode::kShuttingDown:
        case TransportErrorCode::kTimeout:
        case TransportErrorCode::kInternal: return ErrorCode::kIoError;
    }
    return ErrorCode::kIoError;
}

// ---- header -----------------------------------------------------------------

std::array<uint8_t, kMessageHeaderSize> encode_message_header(const MessageHeader& h) noexcept {
    std::array<uint8_t, kMessageHeaderSize> out{};
    ByteWriter w(out);
    w.u32(h.type);
    w.u32(h.stream_id);
    w.u32(h.payload_length);
    return out;
}

Result<MessageHeader> decode_message_header(std::span<const uint8_t> bytes) {
    ByteReader r(bytes, 0, kHeaderPrefix);
    MessageHeader h;
    HURRAY_ASSIGN_OR_RETURN(h.type, r.u32("message_type"));
    HURRAY_ASSIGN_OR_RETURN(h.stream_id, r.u32("stream_id"));
    HURRAY_ASSIGN_OR_RETURN(h.payload_length, r.u32("payload_length"));
    return h;
}

// ---- encoders ---------------------------------------------------------------

Result<std::vector<uint8_t>> encode_hello(MessageType type, uint32_t stream_id, const Hello& hello) {
    const FieldCheck c = encoding(kHelloPrefix);
    if (type != MessageType::kClientHello && type != MessageType::kServerHello) {
        return Error(ErrorCode::kInvalidArgument, "HELLO message_type: " + hex(static_cast<uint32_t>(type), 8) +
                                                      " is not CLIENT_HELLO or SERVER_HELLO");
    }
    HURRAY_RETURN_IF_ERROR(check_protocol_version(c, hello.protocol_version, 0));
    HURRAY_RETURN_IF_ERROR(check_max_message_size(c, hello.max_message_size, 0));
    HURRAY_RETURN_IF_ERROR(check_capability_flags(c, hello.capability_flags, 0));
    HURRAY_RETURN_IF_ERROR(check_layout_list(c, "layout_count", "supported_layouts", hello.layouts));
    if (hello.devices.size() > kMaxU16Count) {
        return c.fail("device_count", dec(hello.devices.size()) + " entries do not fit a uint16 count", 0);
    }
    for (size_t i = 0; i < hello.devices.size(); ++i) {
        HURRAY_RETURN_IF_ERROR(
            check_device_tag(c, FieldName{"supported_devices", i}, "device_tag", hello.devices[i], 0));
    }
    if (hello.memory_classes.size() > kMaxU16Count) {
        return c.fail("class_count", dec(hello.memory_classes.size()) + " entries do not fit a uint16 count", 0);
    }
    const uint64_t size =
        kHelloFixedSize + layout_list_size(hello.layouts) + 2 + hello.devices.size() + 2 + hello.memory_classes.size();
    HURRAY_RETURN_IF_ERROR(check_payload_size(kHelloPrefix, size));
    std::vector<uint8_t> out = start_message(type, stream_id, size);
    ByteWriter w = payload_writer(out);
    w.u32(hello.protocol_version);
    w.u32(hello.max_message_size);
    w.u64(hello.capability_flags);
    write_layout_list(w, hello.layouts);
    write_byte_list(w, hello.devices);
    write_byte_list(w, hello.memory_classes);
    HURRAY_RETURN_IF_ERROR(check_written(w, out, kHelloPrefix));
    return out;
}

Result<std::vector<uint8_t>> encode_tensor_request(uint32_t stream_id, const TensorRequest& request) {
    const FieldCheck c = encoding(kRequestPrefix);
    HURRAY_RETURN_IF_ERROR(check_key(c, FieldName{}, request.key, 0));
    HURRAY_RETURN_IF_ERROR(check_layout_list(c, "layout_count", "preferred_layouts", request.preferred_layouts));
    HURRAY_RETURN_IF_ERROR(check_device_tag(c, FieldName{}, "preferred_device", request.preferred_device, 0));
    HURRAY_RETURN_IF_ERROR(check_min_alignment(c, request.min_alignment, 0));
    HURRAY_RETURN_IF_ERROR(check_request_flags(c, request.flags, 0));
    const uint64_t size =
        4 + static_cast<uint64_t>(request.key.size()) + layout_list_size(request.preferred_layouts) + kRequestTailSize;
    HURRAY_RETURN_IF_ERROR(check_payload_size(kRequestPrefix, size));
    std::vector<uint8_t> out = start_message(MessageType::kTensorRequest, stream_id, size);
    ByteWriter w = payload_writer(out);
    w.u32(static_cast<uint32_t>(request.key.size()));
    w.bytes(byte_view(request.key));
    write_layout_list(w, request.preferred_layouts);
    w.u8(request.preferred_device);
    w.u32(request.min_alignment);
    w.u32(request.flags);
    HURRAY_RETURN_IF_ERROR(check_written(w, out, kRequestPrefix));
    return out;
}

Result<std::vector<uint8_t>> encode_tensor_descriptor(uint32_t stream_id, std::span<const uint8_t> descriptor,
                                                      const DescriptorTransport& transport) {
    const FieldCheck c = encoding(kDescriptorPrefix);
    HURRAY_RETURN_IF_ERROR(check_descriptor_argument(c, FieldName{}, descriptor));
    HURRAY_RETURN_IF_ERROR(check_shards(c, transport, 0));
    const uint64_t size = static_cast<uint64_t>(descriptor.size()) + kDescriptorTransportSize;
    HURRAY_RETURN_IF_ERROR(check_payload_size(kDescriptorPrefix, size));
    std::vector<uint8_t> out = start_message(MessageType::kTensorDescriptor, stream_id, size);
    ByteWriter w = payload_writer(out);
    w.bytes(descriptor);
    w.u64(transport.total_data_bytes);
    w.u32(transport.shard_index);
    w.u32(transport.total_shards);
    HURRAY_RETURN_IF_ERROR(check_written(w, out, kDescriptorPrefix));
    return out;
}

Result<std::array<uint8_t, kMessageHeaderSize + kDataFrameHeaderSize>> encode_tensor_data_header(uint32_t stream_id,
                                                                                                 uint64_t offset,
                                                                                                 size_t data_length) {
    if (data_length > kMaxPayloadLength - kDataFrameHeaderSize) {
        return Error(ErrorCode::kInvalidArgument, "TENSOR_DATA data: " + dec(data_length) +
                                                      " bytes do not fit one frame (at most " +
                                                      dec(kMaxPayloadLength - kDataFrameHeaderSize) + ")");
    }
    std::array<uint8_t, kMessageHeaderSize + kDataFrameHeaderSize> out{};
    ByteWriter w(out);
    w.u32(static_cast<uint32_t>(MessageType::kTensorData));
    w.u32(stream_id);
    w.u32(static_cast<uint32_t>(kDataFrameHeaderSize + data_length));
    w.u64(offset);
    return out;
}

Result<std::vector<uint8_t>> encode_tensor_put(uint32_t stream_id, const TensorPut& put) {
    const FieldCheck c = encoding(kPutPrefix);
    HURRAY_RETURN_IF_ERROR(check_key(c, FieldName{}, put.key, 0));
    HURRAY_RETURN_IF_ERROR(check_descriptor_argument(c, FieldName{}, put.descriptor));
    const uint64_t size =
        4 + static_cast<uint64_t>(put.key.size()) + 4 + static_cast<uint64_t>(put.descriptor.size()) + kPutTailSize;
    HURRAY_RETURN_IF_ERROR(check_payload_size(kPutPrefix, size));
    std::vector<uint8_t> out = start_message(MessageType::kTensorPut, stream_id, size);
    ByteWriter w = payload_writer(out);
    w.u32(static_cast<uint32_t>(put.key.size()));
    w.bytes(byte_view(put.key));
    w.u32(static_cast<uint32_t>(put.descriptor.size()));
    w.bytes(put.descriptor);
    w.u64(put.total_data_bytes);
    HURRAY_RETURN_IF_ERROR(check_written(w, out, kPutPrefix));
    return out;
}

std::vector<uint8_t> encode_error(uint32_t stream_id, uint32_t code, std::string_view message, uint32_t max_payload) {
    const size_t room = max_payload > kErrorFixedSize ? max_payload - kErrorFixedSize : 0;
    // Only the first `room` bytes of the text can be sent. Every byte of
    // `message` becomes at least one byte of text, so the first room + 4 bytes
    // (the last sequence that starts inside `room` included) decide them.
    std::string text = to_valid_utf8(message.substr(0, room + 4));
    if (text.size() > room) {
        // Cut on a sequence boundary: back over continuation bytes. `text` is
        // valid UTF-8, so the byte at `cut` then starts a sequence.
        // SAFETY: cut <= room < text.size(): every text[cut] read is in bounds.
        size_t cut = room;
        while (cut > 0 && (static_cast<uint8_t>(text[cut]) & 0xC0U) == 0x80U) {
            --cut;
        }
        text.resize(cut);
    }
    std::vector<uint8_t> out = start_message(MessageType::kError, stream_id, kErrorFixedSize + text.size());
    ByteWriter w = payload_writer(out);
    w.u32(code);
    w.u32(static_cast<uint32_t>(text.size()));
    w.bytes(byte_view(text));
    return out;
}

Result<std::vector<uint8_t>> encode_message(MessageType type, uint32_t stream_id, std::span<const uint8_t> payload) {
    if (payload.size() > kMaxPayloadLength) {
        return check_payload_size(std::string(message_type_name(static_cast<uint32_t>(type))) + " ", payload.size())
            .error();
    }
    std::vector<uint8_t> out = start_message(type, stream_id, payload.size());
    ByteWriter w = payload_writer(out);
    w.bytes(payload);
    return out;
}

uint64_t list_entry_encoded_size(const ListEntry& entry) noexcept {
    return 4 + static_cast<uint64_t>(entry.key.size()) + 4 + static_cast<uint64_t>(entry.descriptor.size());
}

Result<std::vector<uint8_t>> encode_list_entries(uint32_t stream_id, std::span<const ListEntry> entries) {
    const FieldCheck c = encoding(kListEntriesPrefix);
    if (entries.size() > UINT32_MAX) {
        return c.fail("entry_count", dec(entries.size()) + " entries do not fit a uint32 count", 0);
    }
    uint64_t size = 4;
    for (size_t i = 0; i < entries.size(); ++i) {
        const FieldName name{"entries", i};
        HURRAY_RETURN_IF_ERROR(check_key(c, name, entries[i].key, 0));
        HURRAY_RETURN_IF_ERROR(check_descriptor_argument(c, name, entries[i].descriptor));
        // Each term is below 2^63 and the sum is checked after each: no wrap.
        size += list_entry_encoded_size(entries[i]);
        HURRAY_RETURN_IF_ERROR(check_payload_size(kListEntriesPrefix, size));
    }
    std::vector<uint8_t> out = start_message(MessageType::kListEntries, stream_id, size);
    ByteWriter w = payload_writer(out);
    w.u32(static_cast<uint32_t>(entries.size()));
    for (const ListEntry& e : entries) {
        w.u32(static_cast<uint32_t>(e.key.size()));
        w.bytes(byte_view(e.key));
        w.u32(static_cast<uint32_t>(e.descriptor.size()));
        w.bytes(e.descriptor);
    }
    HURRAY_RETURN_IF_ERROR(check_written(w, out, kListEntriesPrefix));
    return out;
}

std::vector<uint8_t> encode_list_end(uint32_t stream_id, uint64_t count) {
    std::vector<uint8_t> out = start_message(MessageType::kListEnd, stream_id, 8);
    ByteWriter w = payload_writer(out);
    w.u64(count);
    return out;
}

// ---- decoders ---------------------------------------------------------------

Result<Hello> decode_hello(std::span<const uint8_t> payload) {
    const FieldCheck c = decoding(kHelloPrefix);
    ByteReader r(payload, 0, kHelloPrefix);
    Hello h;
    HURRAY_ASSIGN_OR_RETURN(h.protocol_version, r.u32("protocol_version"));
    HURRAY_RETURN_IF_ERROR(check_protocol_version(c, h.protocol_version, 0));
    HURRAY_ASSIGN_OR_RETURN(h.max_message_size, r.u32("max_message_size"));
    HURRAY_RETURN_IF_ERROR(check_max_message_size(c, h.max_message_size, 4));
    HURRAY_ASSIGN_OR_RETURN(h.capability_flags, r.u64("capability_flags"));
    HURRAY_RETURN_IF_ERROR(check_capability_flags(c, h.capability_flags, 8));
    HURRAY_ASSIGN_OR_RETURN(h.layouts, read_layout_list(r, kHelloPrefix, "layout_count", "supported_layouts"));
    HURRAY_ASSIGN_OR_RETURN(h.devices, read_byte_list(r, kHelloPrefix, "device_count", "supported_devices", true));
    // "If absent or empty": a payload that ends before the class count has none.
    if (r.remaining() != 0) {
        HURRAY_ASSIGN_OR_RETURN(h.memory_classes,
                                read_byte_list(r, kHelloPrefix, "class_count", "supported_memory_classes", false));
    }
    HURRAY_RETURN_IF_ERROR(check_consumed(r, kHelloPrefix));
    return h;
}

Result<TensorRequest> decode_tensor_request(std::span<const uint8_t> payload) {
    const FieldCheck c = decoding(kRequestPrefix);
    ByteReader r(payload, 0, kRequestPrefix);
    TensorRequest q;
    HURRAY_ASSIGN_OR_RETURN(q.key, read_key(r, kRequestPrefix, FieldName{}));
    HURRAY_ASSIGN_OR_RETURN(q.preferred_layouts,
                            read_layout_list(r, kRequestPrefix, "layout_count", "preferred_layouts"));
    const uint64_t device_at = r.abs_pos();
    HURRAY_ASSIGN_OR_RETURN(q.preferred_device, r.u8("preferred_device"));
    HURRAY_RETURN_IF_ERROR(check_device_tag(c, FieldName{}, "preferred_device", q.preferred_device, device_at));
    HURRAY_ASSIGN_OR_RETURN(q.min_alignment, r.u32("min_alignment"));
    HURRAY_RETURN_IF_ERROR(check_min_alignment(c, q.min_alignment, device_at + 1));
    HURRAY_ASSIGN_OR_RETURN(q.flags, r.u32("request_flags"));
    HURRAY_RETURN_IF_ERROR(check_request_flags(c, q.flags, device_at + 5));
    HURRAY_RETURN_IF_ERROR(check_consumed(r, kRequestPrefix));
    return q;
}

Result<TensorDescriptorMessage> decode_tensor_descriptor(std::span<const uint8_t> payload) {
    const FieldCheck c = decoding(kDescriptorPrefix);
    // The descriptor's length is its own descriptor_length field.
    HURRAY_ASSIGN_OR_RETURN(const uint32_t length, own_descriptor_length(payload, 0, kDescriptorPrefix, FieldName{}));
    if (length < kFixedHeaderSize) {
        return c.fail("descriptor_length",
                      dec(length) + " is less than a descriptor's fixed header (" + dec(kFixedHeaderSize) + " bytes)",
                      kDescriptorLengthOffset);
    }
    ByteReader r(payload, 0, kDescriptorPrefix);
    TensorDescriptorMessage m;
    // SAFETY: a view of `payload` (bounds-checked by ByteReader); the caller
    // keeps the payload alive while it uses the message, as the header says.
    HURRAY_ASSIGN_OR_RETURN(m.descriptor, r.bytes(length, "descriptor"));
    HURRAY_ASSIGN_OR_RETURN(m.transport.total_data_bytes, r.u64("total_data_bytes"));
    const uint64_t index_at = r.abs_pos();
    HURRAY_ASSIGN_OR_RETURN(m.transport.shard_index, r.u32("shard_index"));
    HURRAY_ASSIGN_OR_RETURN(m.transport.total_shards, r.u32("total_shards"));
    HURRAY_RETURN_IF_ERROR(check_shards(c, m.transport, index_at));
    HURRAY_RETURN_IF_ERROR(check_consumed(r, kDescriptorPrefix));
    return m;
}

Result<TensorDataFrame> decode_tensor_data(std::span<const uint8_t> payload) {
    ByteReader r(payload, 0, kDataPrefix);
    TensorDataFrame f;
    HURRAY_ASSIGN_OR_RETURN(f.offset, r.u64("byte_offset_in_buffer"));
    HURRAY_ASSIGN_OR_RETURN(f.data, r.bytes(r.remaining(), "data"));
    return f;
}

Result<TensorPut> decode_tensor_put(std::span<const uint8_t> payload) {
    ByteReader r(payload, 0, kPutPrefix);
    TensorPut p;
    HURRAY_ASSIGN_OR_RETURN(p.key, read_key(r, kPutPrefix, FieldName{}));
    HURRAY_ASSIGN_OR_RETURN(p.descriptor, read_sized_descriptor(r, kPutPrefix, FieldName{}));
    HURRAY_ASSIGN_OR_RETURN(p.total_data_bytes, r.u64("total_data_bytes"));
    HURRAY_RETURN_IF_ERROR(check_consumed(r, kPutPrefix));
    return p;
}

Result<ErrorMessage> decode_error(std::span<const uint8_t> payload) {
    ByteReader r(payload, 0, kErrorPrefix);
    ErrorMessage m;
    HURRAY_ASSIGN_OR_RETURN(m.code, r.u32("error_code"));
    HURRAY_ASSIGN_OR_RETURN(const uint32_t length, r.u32("message length"));
    HURRAY_ASSIGN_OR_RETURN(const auto text, r.bytes(length, "message"));
    m.message = to_valid_utf8(char_view(text));
    HURRAY_RETURN_IF_ERROR(check_consumed(r, kErrorPrefix));
    return m;
}

Result<std::vector<ListEntry>> decode_list_entries(std::span<const uint8_t> payload) {
    ByteReader r(payload, 0, kListEntriesPrefix);
    HURRAY_ASSIGN_OR_RETURN(const uint32_t count, r.u32("entry_count"));
    // Bound the count by the bytes that follow before reserving anything.
    if (count > r.remaining() / kMinListEntryBytes) {
        return decoding(kListEntriesPrefix)
            .fail("entry_count",
                  dec(count) + " entries cannot fit in the " + dec(r.remaining()) + " bytes after the count", 0);
    }
    std::vector<ListEntry> entries;
    entries.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
        const FieldName name{"entries", i};
        ListEntry e;
        HURRAY_ASSIGN_OR_RETURN(e.key, read_key(r, kListEntriesPrefix, name));
        HURRAY_ASSIGN_OR_RETURN(e.descriptor, read_sized_descriptor(r, kListEntriesPrefix, name));
        entries.push_back(std::move(e));
    }
    HURRAY_RETURN_IF_ERROR(check_consumed(r, kListEntriesPrefix));
    return entries;
}

Result<uint64_t> decode_list_end(std::span<const uint8_t> payload) {
    ByteReader r(payload, 0, kListEndPrefix);
    HURRAY_ASSIGN_OR_RETURN(const uint64_t count, r.u64("entry_count"));
    HURRAY_RETURN_IF_ERROR(check_consumed(r, kListEndPrefix));
    return count;
}

Status check_empty_payload(MessageType type, std::span<const uint8_t> payload) {
    if (!payload.empty()) {
        return Error(ErrorCode::kInvalidData,
                     std::string(message_type_name(static_cast<uint32_t>(type))) + " payload must be empty, has " +
                         dec(payload.size()) + " bytes",
                     0);
    }
    return Status::success();
}

Result<uint64_t> data_run_bytes(const TensorDescriptor& d) {
    uint64_t total = 0;
    for (const BufferHandle& b : d.buffers) {
        const auto next = add_u64(total, b.byte_size);
        if (!next) {
            return Error(ErrorCode::kSizeOverflow, "the buffers' byte_size values add up past 2^64");
        }
        total = *next;
    }
    return total;
}

}  // namespace hurray
