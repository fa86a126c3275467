// SPDX-License-Identifier: Apache-2.0
/// @file
/// The messages of the Hurray network transport protocol (interchange.md,
/// "Network Transport Protocol"): the 12-byte message header and every
/// payload this library sends or receives, encoded and decoded without I/O.
///
/// This is the protocol's only parser. `hurray::net`'s server and client
/// (`tensor_server.hpp`, `tensor_client.hpp`) move the bytes over Asio; they
/// decode every message they receive here, and a fuzz target drives these
/// decoders directly. Every decoder reads exactly its payload: a field past
/// the end is `kTruncated`, bytes left over are `kInvalidData`, and each
/// error names the field and its byte offset within the payload.
///
/// What the spec leaves to an implementation is settled as docs/server.md
/// says: the data of a tensor is the run of its buffers' bytes, back to back,
/// exactly what the streaming format puts after a descriptor
/// (`TENSOR_DATA::byte_offset_in_buffer` counts in that run); PING and PONG
/// carry an opaque payload that PONG echoes; listing what a server offers is
/// the private extension `kListRequest` / `kListEntries` / `kListEnd`.
#pragma once

#include "hurray/io/export.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"

namespace hurray {

/// The protocol version this library speaks (`CLIENT_HELLO` / `SERVER_HELLO`).
inline constexpr uint32_t kTransportProtocolVersion = 1;
/// Size of the message header: `message_type`, `stream_id`, `payload_length`.
inline constexpr size_t kMessageHeaderSize = 12;
/// Size of the transport fields that follow the descriptor in `TENSOR_DESCRIPTOR`.
inline constexpr size_t kDescriptorTransportSize = 16;
/// Size of the `byte_offset_in_buffer` field that starts a `TENSOR_DATA` payload.
inline constexpr size_t kDataFrameHeaderSize = 8;

/// Message type tags (interchange.md § Message Types).
enum class MessageType : uint32_t {
    kClientHello = 0x01,      ///< Client -> server: session initiation.
    kServerHello = 0x02,      ///< Server -> client: session acceptance.
    kTensorRequest = 0x03,    ///< Client -> server: a tensor by key.
    kTensorDescriptor = 0x04, ///< Server -> client: descriptor + transport fields.
    kTensorData = 0x05,       ///< Either: a data frame.
    kTensorDataEnd = 0x06,    ///< Either: the data of one tensor (or shard) is complete.
    kTensorPut = 0x07,        ///< Client -> server: push a tensor.
    kTensorPutAck = 0x08,     ///< Server -> client: a pushed tensor was accepted.
    kError = 0x09,            ///< Either: an error; closes the stream.
    kPing = 0x0A,             ///< Either: keepalive request.
    kPong = 0x0B,             ///< Either: keepalive response.
    kRdmaRegister = 0x0C,     ///< RDMA region registration (not implemented by this library).
    kRdmaReady = 0x0D,        ///< RDMA readiness (not implemented by this library).
    /// Private extension of this library: the client asks what the server
    /// offers (empty payload). Sent only to a server known to be a libhurray
    /// `hurray serve` (the spec's "agreed out of band"); another server
    /// answers `kError` (`INVALID_MESSAGE`), as the spec requires.
    kListRequest = 0xF0,
    /// Private extension: a batch of listing entries (`ListEntry`).
    kListEntries = 0xF1,
    /// Private extension: the listing is complete (payload: u64 entry count).
    kListEnd = 0xF2,
};

/// Whether `tag` is a message type this library knows (the spec's 0x01-0x0D and
/// its own private 0xF0-0xF2).
[[nodiscard]] HURRAY_IO_EXPORT bool is_known_message_type(uint32_t tag) noexcept;
/// The spec's name of a message type ("TENSOR_REQUEST"; "LIST_REQUEST" for the
/// private ones), or "UNKNOWN".
[[nodiscard]] HURRAY_IO_EXPORT std::string_view message_type_name(uint32_t tag) noexcept;

/// Capability flag bits of `CLIENT_HELLO` / `SERVER_HELLO`.
enum CapabilityFlag : uint64_t {
    kCapTranscoding = 1ULL << 0,      ///< Can transcode to a requested layout.
    kCapParallelStreams = 1ULL << 1,  ///< Multi-stream parallel shard transfer.
    kCapRdmaDataPlane = 1ULL << 2,    ///< RDMA data plane.
    kCapRdmaGpuDirect = 1ULL << 3,    ///< GPUDirect writes; implies `kCapRdmaDataPlane`.
    kCapDefinedMask = 0x0F,           ///< Every defined bit; the others MUST be 0.
};

/// Request flag bits of `TENSOR_REQUEST`.
enum RequestFlag : uint32_t {
    kRequestAllowTranscode = 1U << 0,  ///< The server may transcode to a preferred layout.
    kRequestParallelOk = 1U << 1,      ///< The client accepts parallel shards.
    kRequestDefinedMask = 0x03,        ///< Every defined bit; the others MUST be 0.
};

/// The `error_code` of an `ERROR` message (interchange.md § ERROR Payload),
/// plus this library's implementation-defined codes (0xF0-0xFE).
enum class TransportErrorCode : uint32_t {
    kProtocolVersionMismatch = 0x01,  ///< Incompatible protocol versions.
    kUnknownTensor = 0x02,            ///< Requested tensor key not found.
    kLayoutUnavailable = 0x03,        ///< No acceptable layout could be served.
    kTranscodeLimitExceeded = 0x04,   ///< Transcoding refused: buffer too large.
    kDeviceUnavailable = 0x05,        ///< Requested device not available.
    kInvalidMessage = 0x06,           ///< Malformed (or unexpected) message received.
    kMessageTooLarge = 0x07,          ///< `payload_length` exceeds the receiver's limit.
    kShardMismatch = 0x08,            ///< Parallel shard descriptors are inconsistent.
    kServerBusy = 0xF0,               ///< Implementation-defined: too many clients; try later.
    kShuttingDown = 0xF1,             ///< Implementation-defined: the server is stopping.
    kTimeout = 0xF2,                  ///< Implementation-defined: the peer was idle or too slow.
    kInternal = 0xF3,                 ///< Implementation-defined: the server failed (I/O, memory).
    kPutRejected = 0xF4,              ///< Implementation-defined: the server does not accept this PUT.
};

/// The spec's name of an error code ("UNKNOWN_TENSOR"; "SERVER_BUSY" for ours),
/// or "UNKNOWN".
[[nodiscard]] HURRAY_IO_EXPORT std::string_view transport_error_name(uint32_t code) noexcept;

/// The 12-byte header in front of every message.
struct HURRAY_IO_EXPORT MessageHeader {
    /// `message_type` (not checked by `decode_message_header`: an unknown type
    /// is the receiver's to answer, see `is_known_message_type`).
    uint32_t type = 0;
    /// `stream_id`; 0 is reserved.
    uint32_t stream_id = 0;
    /// `payload_length`: bytes of payload after the header.
    uint32_t payload_length = 0;
};

/// The header's 12 bytes.
[[nodiscard]] HURRAY_IO_EXPORT std::array<uint8_t, kMessageHeaderSize> encode_message_header(const MessageHeader& h) noexcept;
/// Reads a header from `bytes` (at least 12 bytes; `kTruncated` otherwise).
/// Any field value is accepted: the receiver checks type, stream id and length
/// against its own rules.
[[nodiscard]] HURRAY_IO_EXPORT Result<MessageHeader> decode_message_header(std::span<const uint8_t> bytes);

/// One entry of a layout list (interchange.md § Layout Entry Encoding).
struct HURRAY_IO_EXPORT LayoutEntry {
    /// `layout_tag` (memory-layout.md). 0x00 and 0xFF are rejected on decode.
    uint8_t tag = 0;
    /// `ext_metadata` of an extension tag (0xF0-0xFE); always empty otherwise.
    std::vector<uint8_t> ext_metadata;
    /// Entries are equal when tag and metadata are.
    friend bool operator==(const LayoutEntry&, const LayoutEntry&) = default;
};

/// `CLIENT_HELLO` and `SERVER_HELLO` have the same payload.
struct HURRAY_IO_EXPORT Hello {
    /// `protocol_version`; 0 is rejected on decode.
    uint32_t protocol_version = kTransportProtocolVersion;
    /// `max_message_size`: the largest payload the sender accepts (>= 64 on decode).
    uint32_t max_message_size = 16U << 20;
    /// `capability_flags` (`CapabilityFlag`); reserved bits are rejected on decode,
    /// and `kCapRdmaGpuDirect` without `kCapRdmaDataPlane`.
    uint64_t capability_flags = 0;
    /// `supported_layouts`, in preference order.
    std::vector<LayoutEntry> layouts;
    /// `supported_devices` (device tags; 0xFF rejected on decode).
    std::vector<uint8_t> devices;
    /// `supported_memory_classes`; empty means `STANDARD` (0x00) only. A payload
    /// that ends before this list's count decodes as an empty list ("absent").
    std::vector<uint8_t> memory_classes;
};

/// `TENSOR_REQUEST`.
struct HURRAY_IO_EXPORT TensorRequest {
    /// `tensor_key` (UTF-8; not empty).
    std::string key;
    /// `preferred_layouts`, most preferred first; empty: no preference.
    std::vector<LayoutEntry> preferred_layouts;
    /// `preferred_device` (device tag; 0xFF rejected on decode).
    uint8_t preferred_device = 0x00;
    /// `min_alignment`: a power of two (rejected otherwise on decode).
    uint32_t min_alignment = 64;
    /// `request_flags` (`RequestFlag`); reserved bits rejected on decode.
    uint32_t flags = 0;
};

/// The transport fields after the descriptor in `TENSOR_DESCRIPTOR`.
struct HURRAY_IO_EXPORT DescriptorTransport {
    /// `total_data_bytes`: bytes that follow in `TENSOR_DATA` frames.
    uint64_t total_data_bytes = 0;
    /// `shard_index`: `< total_shards` (checked on decode).
    uint32_t shard_index = 0;
    /// `total_shards`: >= 1 (checked on decode).
    uint32_t total_shards = 1;
};

/// A decoded `TENSOR_DESCRIPTOR` payload. `descriptor` views the payload.
struct HURRAY_IO_EXPORT TensorDescriptorMessage {
    /// The descriptor's bytes (exactly its `descriptor_length`); decode them
    /// with `hurray::decode` (not done here, so that the caller picks the options).
    std::span<const uint8_t> descriptor;
    /// The transport fields.
    DescriptorTransport transport;
};

/// A decoded `TENSOR_DATA` payload. `data` views the payload.
struct HURRAY_IO_EXPORT TensorDataFrame {
    /// `byte_offset_in_buffer`.
    uint64_t offset = 0;
    /// The frame's bytes (may be empty).
    std::span<const uint8_t> data;
};

/// `TENSOR_PUT`. `descriptor` views the payload when decoded.
struct HURRAY_IO_EXPORT TensorPut {
    /// `tensor_key` (UTF-8; not empty).
    std::string key;
    /// The serialized descriptor (u32 length-prefixed on the wire; its length
    /// must equal the descriptor's own `descriptor_length` on decode).
    std::span<const uint8_t> descriptor;
    /// `total_data_bytes`.
    uint64_t total_data_bytes = 0;
};

/// `ERROR`.
struct HURRAY_IO_EXPORT ErrorMessage {
    /// `error_code` (`TransportErrorCode`, or an unknown code from a peer).
    uint32_t code = 0;
    /// `message` (UTF-8; invalid UTF-8 is replaced by U+FFFD on decode, never an error).
    std::string message;
};

/// One entry of the private listing extension: a key and its descriptor.
struct HURRAY_IO_EXPORT ListEntry {
    /// The tensor key.
    std::string key;
    /// Its serialized descriptor (views the payload when decoded).
    std::span<const uint8_t> descriptor;
};

// -- Encoders: each returns the whole message (header + payload). -------------
// They fail only with kInvalidArgument (a field that the decoder would refuse,
// or a payload longer than 2^32 - 1 bytes).

/// A `CLIENT_HELLO` or `SERVER_HELLO` (`type`) message.
[[nodiscard]] HURRAY_IO_EXPORT Result<std::vector<uint8_t>> encode_hello(MessageType type, uint32_t stream_id, const Hello& hello);
/// A `TENSOR_REQUEST` message.
[[nodiscard]] HURRAY_IO_EXPORT Result<std::vector<uint8_t>> encode_tensor_request(uint32_t stream_id, const TensorRequest& request);
/// A `TENSOR_DESCRIPTOR` message: `descriptor` (the encoded descriptor) then the transport fields.
[[nodiscard]] HURRAY_IO_EXPORT Result<std::vector<uint8_t>> encode_tensor_descriptor(uint32_t stream_id, std::span<const uint8_t> descriptor,
                                                                       const DescriptorTransport& transport);
/// The header and `byte_offset_in_buffer` of a `TENSOR_DATA` frame of
/// `data_length` bytes (20 bytes; the data follows, sent from where it lies).
[[nodiscard]] HURRAY_IO_EXPORT Result<std::array<uint8_t, kMessageHeaderSize + kDataFrameHeaderSize>> encode_tensor_data_header(
    uint32_t stream_id, uint64_t offset, size_t data_length);
/// A `TENSOR_PUT` message.
[[nodiscard]] HURRAY_IO_EXPORT Result<std::vector<uint8_t>> encode_tensor_put(uint32_t stream_id, const TensorPut& put);
/// An `ERROR` message. A message longer than `max_payload - 8` bytes is cut
/// (on a UTF-8 boundary) so that the payload fits `max_payload`.
[[nodiscard]] HURRAY_IO_EXPORT std::vector<uint8_t> encode_error(uint32_t stream_id, uint32_t code, std::string_view message,
                                                   uint32_t max_payload = 16U << 20);
/// A message with the payload `payload` as it is (PING, PONG,
/// TENSOR_DATA_END, TENSOR_PUT_ACK, LIST_REQUEST).
[[nodiscard]] HURRAY_IO_EXPORT Result<std::vector<uint8_t>> encode_message(MessageType type, uint32_t stream_id,
                                                             std::span<const uint8_t> payload = {});
/// A `kListEntries` message holding `entries`.
[[nodiscard]] HURRAY_IO_EXPORT Result<std::vector<uint8_t>> encode_list_entries(uint32_t stream_id, std::span<const ListEntry> entries);
/// The bytes one entry adds to a `kListEntries` payload (to batch entries under a size limit).
[[nodiscard]] HURRAY_IO_EXPORT uint64_t list_entry_encoded_size(const ListEntry& entry) noexcept;
/// A `kListEnd` message: `count` entries were sent.
[[nodiscard]] HURRAY_IO_EXPORT std::vector<uint8_t> encode_list_end(uint32_t stream_id, uint64_t count);

// -- Decoders: each reads one payload (the bytes after the header), exactly. --

/// A `CLIENT_HELLO` / `SERVER_HELLO` payload.
[[nodiscard]] HURRAY_IO_EXPORT Result<Hello> decode_hello(std::span<const uint8_t> payload);
/// A `TENSOR_REQUEST` payload.
[[nodiscard]] HURRAY_IO_EXPORT Result<TensorRequest> decode_tensor_request(std::span<const uint8_t> payload);
/// A `TENSOR_DESCRIPTOR` payload: the descriptor's length is read from its
/// own `descriptor_length` field (at least the fixed header), the 16 transport
/// bytes must follow it and end the payload.
[[nodiscard]] HURRAY_IO_EXPORT Result<TensorDescriptorMessage> decode_tensor_descriptor(std::span<const uint8_t> payload);
/// A `TENSOR_DATA` payload.
[[nodiscard]] HURRAY_IO_EXPORT Result<TensorDataFrame> decode_tensor_data(std::span<const uint8_t> payload);
/// A `TENSOR_PUT` payload.
[[nodiscard]] HURRAY_IO_EXPORT Result<TensorPut> decode_tensor_put(std::span<const uint8_t> payload);
/// An `ERROR` payload.
[[nodiscard]] HURRAY_IO_EXPORT Result<ErrorMessage> decode_error(std::span<const uint8_t> payload);
/// A `kListEntries` payload.
[[nodiscard]] HURRAY_IO_EXPORT Result<std::vector<ListEntry>> decode_list_entries(std::span<const uint8_t> payload);
/// A `kListEnd` payload.
[[nodiscard]] HURRAY_IO_EXPORT Result<uint64_t> decode_list_end(std::span<const uint8_t> payload);
/// Checks that an empty-payload message (`TENSOR_DATA_END`, `TENSOR_PUT_ACK`,
/// `kListRequest`) has an empty payload (`kInvalidData` otherwise).
[[nodiscard]] HURRAY_IO_EXPORT Status check_empty_payload(MessageType type, std::span<const uint8_t> payload);

/// The bytes a tensor's data run holds on the wire (`total_data_bytes`): the
/// sum of its buffers' `byte_size`, back to back (docs/server.md). Fails with
/// `kSizeOverflow` when the sum does not fit 64 bits (a hostile descriptor).
[[nodiscard]] HURRAY_IO_EXPORT Result<uint64_t> data_run_bytes(const TensorDescriptor& d);

/// The `hurray::ErrorCode` under which a client reports an `ERROR` received
/// from a server: `kNotFound` for UNKNOWN_TENSOR, `kUnsupported` for
/// PROTOCOL_VERSION_MISMATCH, LAYOUT_UNAVAILABLE, TRANSCODE_LIMIT_EXCEEDED and
/// DEVICE_UNAVAILABLE, `kInvalidArgument` for INVALID_MESSAGE,
/// MESSAGE_TOO_LARGE, SHARD_MISMATCH and a rejected PUT, `kIoError` otherwise.
[[nodiscard]] HURRAY_IO_EXPORT ErrorCode error_code_of_transport_error(uint32_t code) noexcept;

}  // namespace hurray
