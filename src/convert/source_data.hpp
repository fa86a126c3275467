// SPDX-License-Identifier: Apache-2.0
#pragma once
/// @file
/// Internal: moving a TensorSource's bytes — chunk by chunk into a writer, or a whole
/// buffer into memory — shared by the writers of hurray::convert.

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "hurray/convert/convert.hpp"
#include "hurray/convert/tensor_source.hpp"
#include "hurray/core/result.hpp"

namespace hurray::convert::detail {

/// The bytes of every buffer of every tensor of `source` (kSizeOverflow past 2^64).
Result<uint64_t> total_data_bytes(const TensorSource& source);

/// The bytes of every buffer of tensor `i` (kSizeOverflow past 2^64).
Result<uint64_t> tensor_data_bytes(const TensorSource& source, size_t i);

/// Receives the next piece of a tensor's data.
using PieceSink = std::function<Status(std::span<const uint8_t>)>;

/// Copies tensors' buffers to a PieceSink `chunk_bytes` at a time: zero-copy pieces of
/// `view()` where the source has one, otherwise read() into one chunk buffer reused for
/// every piece; reports progress after each piece.
class ChunkCopier {
public:
    /// `total` is the progress denominator (total_data_bytes()).
    ChunkCopier(const TensorSource& source, uint64_t chunk_bytes, uint64_t total,
                ProgressCallback progress);
    /// Sends every buffer of tensor `i`, in order, one after the other.
    Status copy_tensor(size_t i, const PieceSink& sink);
    /// Sends bytes [offset, offset + size) of buffer `buffer` of tensor `i`.
    Status copy_range(size_t i, size_t buffer, uint64_t offset, uint64_t size,
                      const PieceSink& sink);
    /// Bytes sent so far.
    [[nodiscard]] uint64_t done() const noexcept { return done_; }

private:
    const TensorSource& source_;
    uint64_t chunk_bytes_;
    uint64_t total_;
    ProgressCallback progress_;
    std::vector<uint8_t> chunk_;
    uint64_t done_ = 0;
};

/// A whole buffer in memory: a view of the source's bytes, or a copy read into `storage`.
struct BufferBytes {
    std::span<const uint8_t> bytes;  ///< The buffer (points into the source or `storage`).
    std::vector<uint8_t> storage;    ///< The copy, when the source has no view.
};

/// Buffer `buffer` of tensor `i`, whole (a view when the source has one, else a copy).
Result<BufferBytes> whole_buffer(const TensorSource& source, size_t i, size_t buffer);

/// Every buffer of tensor `i`, whole; `spans` gets one span per buffer (into `out`).
Status whole_buffers(const TensorSource& source, size_t i, std::vector<BufferBytes>& out,
                     std::vector<std::span<const uint8_t>>& spans);

}  // namespace hurray::convert::detail
