// SPDX-License-Identifier: Apache-2.0
/// @file
/// Encoding, decoding and validating tensor descriptors.
#pragma once

#include "hurray/core/export.hpp"
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"

namespace hurray {

/// What a reader accepts.
///
/// Strict mode (the default) enforces every MUST of the specification that can
/// be checked without the data bytes. Permissive mode accepts what the spec
/// lets a permissive reader accept: unknown or reserved element type tags and
/// quantization schemes (carried without interpretation), unrecognised private
/// layouts and composition rules, the open-composite member count, boolean
/// bytes other than 0/1, and the other rules listed in docs/descriptor.md.
/// Structural rules (lengths, reserved bytes, tag ranges that make the rest of
/// the descriptor unparseable) hold in both modes.
struct HURRAY_CORE_EXPORT DecodeOptions {
    /// Enforce every checkable rule (default), or relax as described above.
    bool strict = true;
    /// Deepest recursive tiling accepted (the spec recommends 8).
    uint32_t max_tiled_depth = 8;
    /// Private layout ids (0xF0-0xFE layouts) this reader understands;
    /// others are rejected in strict mode.
    std::span<const uint64_t> known_extension_layouts = {};
    /// Private quantization scheme tags (0xF0-0xFE) this reader understands;
    /// others are rejected in strict mode.
    std::span<const uint8_t> known_private_schemes = {};
    /// Understand the private schemes that libhurray itself defines (today GGML blocks,
    /// tag 0xF0 version 1: hurray/core/ggml_blocks.hpp, docs/private-schemes.md), as
    /// every reader of this library does by default: their payload and buffer size are
    /// validated and `dequantize` computes their values. `false` reads by the spec
    /// alone, as another implementation does: in strict mode such a tensor fails as a
    /// private scheme this reader does not know (unless `known_private_schemes` lists
    /// its tag, which accepts it uninterpreted).
    bool libhurray_schemes = true;
    /// Accept every private layout id and private quantization scheme, as a
    /// writer does for its own extensions (`encode` sets this). Private
    /// element types are always accepted: their section makes them sizable.
    bool accept_private_extensions = false;
};

/// Reads the total length of a descriptor from its first 10 bytes, after
/// checking the magic, the major version and the minimum length. For
/// streaming readers that must know how many bytes to gather before decoding.
///
/// @code
/// auto len = hurray::peek_length(first_ten_bytes);
/// if (len) read_more(*len - 10);
/// @endcode
HURRAY_CORE_EXPORT Result<uint32_t> peek_length(std::span<const uint8_t> prefix);

/// Decodes and validates one descriptor at the start of `bytes`.
///
/// Reads exactly `descriptor_length` bytes; `bytes` may continue past them
/// (tensor data in a stream, say). Never reads outside `bytes`. Errors name
/// the field and its byte offset from the start of `bytes`.
///
/// @code
/// auto d = hurray::decode(bytes);
/// if (!d) { std::fprintf(stderr, "%s\n", d.error().to_string().c_str()); return; }
/// std::printf("rank %u\n", d->rank());
/// @endcode
HURRAY_CORE_EXPORT Result<TensorDescriptor> decode(std::span<const uint8_t> bytes, const DecodeOptions& options = {});

/// `decode` into `out`, reusing its storage (the shape and buffer table keep
/// their capacity): for a loop that decodes many descriptors into one, as a
/// listing does. The same checks and errors as `decode`; `out` is unspecified
/// after an error.
///
/// @code
/// hurray::TensorDescriptor d;
/// for (auto bytes : descriptors) {
///     if (auto s = hurray::decode_into(bytes, {}, d); !s) { return s; }
/// }
/// @endcode
HURRAY_CORE_EXPORT Status decode_into(std::span<const uint8_t> bytes, const DecodeOptions& options,
                                      TensorDescriptor& out);

/// Checks a descriptor model against every descriptor-level rule of the spec
/// (the same checks `decode` runs after parsing). `encode` runs it too.
HURRAY_CORE_EXPORT Status check_descriptor(const TensorDescriptor& d, const DecodeOptions& options = {});

/// The exact encoded size of a descriptor. Fails if it would exceed 2^32-1.
HURRAY_CORE_EXPORT Result<uint32_t> encoded_size(const TensorDescriptor& d);

/// Encodes a valid descriptor. Fails (without output) if `check_descriptor`
/// rejects it in strict mode; private layouts and schemes are the writer's
/// own and are accepted (`DecodeOptions::accept_private_extensions`).
///
/// @code
/// auto bytes = hurray::encode(d);
/// if (bytes) sink.write(bytes->data(), bytes->size());
/// @endcode
HURRAY_CORE_EXPORT Result<std::vector<uint8_t>> encode(const TensorDescriptor& d);

/// Encodes into a caller-provided buffer; returns the number of bytes written.
/// Fails with `kInvalidArgument` if `out` is smaller than `encoded_size(d)`.
HURRAY_CORE_EXPORT Result<size_t> encode_to(const TensorDescriptor& d, std::span<uint8_t> out);

/// Encodes without validating. Only for tests and tools that must produce
/// invalid descriptors on purpose (rejection tests, fuzz seeds).
HURRAY_CORE_EXPORT Result<std::vector<uint8_t>> encode_unchecked(const TensorDescriptor& d);

/// What the descriptor alone says about the size of one buffer.
struct HURRAY_CORE_EXPORT BufferRequirement {
    /// The smallest allowed byte size; `std::nullopt` where it depends on the
    /// data (inner CSF levels, the block table) or on a dynamic dimension.
    std::optional<uint64_t> min_size{};
    /// Whether the size must equal `min_size` exactly (quantization parameter
    /// buffers) rather than be at least `min_size` (data and index buffers).
    bool exact = false;
    /// Whether the real size depends on the data (inner CSF levels, the block
    /// table), so that `min_size` is only a lower bound.
    bool data_dependent = false;
    /// Field-wise equality.
    bool operator==(const BufferRequirement&) const = default;
};

/// The size requirement of every buffer the layout and quantization scheme of
/// `d` define, in buffer-table order: data buffers from shape, type, layout and
/// `byte_offset`; index buffers of sparse and paged layouts from `nnz`, the
/// shape and the layout fields; quantization parameter buffers from the scheme.
/// The builder uses it to size buffers; `check_descriptor` to check them.
///
/// @code
/// auto req = hurray::required_buffer_sizes(d);  // CSR [3,3] nnz 2: {8}, {16}, {32}
/// @endcode
HURRAY_CORE_EXPORT Result<std::vector<BufferRequirement>> required_buffer_sizes(const TensorDescriptor& d);

}  // namespace hurray
