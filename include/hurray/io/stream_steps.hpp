// SPDX-License-Identifier: Apache-2.0
/// @file
/// The building blocks of a stream transport: the steps that the blocking
/// `StreamReader` / `StreamWriter` and the asynchronous `hurray::net` reader
/// and writer share on top of `StreamDecoder` / `StreamEncoder`; they differ
/// only in how bytes arrive. A transport of another kind (another event loop,
/// RDMA completions) drives the decoder and encoder with the same steps.
#pragma once

#include "hurray/io/export.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"
#include "hurray/io/stream_decoder.hpp"
#include "hurray/io/stream_reader.hpp"

namespace hurray::stream_steps {

/// Before a reader's `next` reads descriptor bytes: true while `d` waits for
/// a prefix or descriptor; false at the clean end; the sticky error when
/// failed; `kInvalidArgument` inside a tensor's data.
[[nodiscard]] HURRAY_IO_EXPORT Result<bool> wants_descriptor(const StreamDecoder& d);

/// Reports to `d` that the input ended where a reader needed more data
/// bytes: the error of `end_of_input` (sticky), never success.
HURRAY_IO_EXPORT Status input_ended_early(StreamDecoder& d);

/// How many data bytes a reader's next chunk takes: what is left of the
/// current buffer, at most `chunk_size` (taken as 1 when 0); 0 outside data.
[[nodiscard]] HURRAY_IO_EXPORT size_t chunk_want(const StreamDecoder& d) noexcept;

/// Sizes a reader's chunk buffer for `chunk_want(d)` bytes, growing it by
/// doubling up to `chunk_size`, and returns that many bytes of it.
[[nodiscard]] HURRAY_IO_EXPORT std::span<uint8_t> chunk_space(const StreamDecoder& d, std::vector<uint8_t>& chunk);

/// Starts a reader's `read_chunk` on `d`: the sticky error, or the space to
/// read the chunk into (`chunk_space`: empty outside data, when the current
/// tensor's data is all read), with `out.buffer` and `out.offset` set to
/// where those bytes belong.
[[nodiscard]] HURRAY_IO_EXPORT Result<std::span<uint8_t>> start_chunk(const StreamDecoder& d, std::vector<uint8_t>& chunk,
                                                     StreamChunk& out);

/// How many bytes a `read_data` into `out_size` bytes reads: the sticky
/// error; `kInvalidArgument` when `out_size` is 0; 0 outside data; else at
/// most what is left of the current buffer.
[[nodiscard]] HURRAY_IO_EXPORT Result<size_t> data_want(const StreamDecoder& d, size_t out_size);

/// Checks a `read_into` of `size` bytes: the sticky error, or
/// `kSizeMismatch` unless `size` is exactly what is left of the current
/// buffer (0 outside data).
[[nodiscard]] HURRAY_IO_EXPORT Status check_read_into(const StreamDecoder& d, size_t size);

/// Checks a `read_tensor` of `current`, whose data totals `total` bytes
/// (`data_remaining()` when its descriptor was decoded; `current` null when
/// the reader has none): the sticky error, or `kInvalidArgument` without a
/// tensor, once part of its data was read, or above `max_tensor_bytes`.
/// Returns `total` as a size.
[[nodiscard]] HURRAY_IO_EXPORT Result<size_t> whole_tensor_size(const StreamDecoder& d, const StreamTensor* current,
                                               uint64_t total);

/// Checks the buffers given to a writer's `write_tensor` for `desc` as the
/// next tensor of `e`, before any of it is sent: the sticky error, or
/// `kSizeMismatch` unless there is one span per declared buffer, each exactly
/// its declared size.
[[nodiscard]] HURRAY_IO_EXPORT Status check_given_buffers(const StreamEncoder& e, const TensorDescriptor& desc,
                                         std::span<const std::span<const uint8_t>> buffers);

}  // namespace hurray::stream_steps
