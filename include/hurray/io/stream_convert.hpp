// SPDX-License-Identifier: Apache-2.0
/// @file
/// Conversion between an HRRYFILE container and the streaming format, both
/// directions, streaming and in bounded memory.
#pragma once

#include "hurray/io/export.hpp"
#include <cstdint>
#include <span>
#include <string>

#include "hurray/core/result.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/byte_source.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/stream_decoder.hpp"

namespace hurray {

/// Writes every tensor of `file` to `sink` as a stream, in write order (so a
/// composite head is followed by its members), straight from the file's
/// mapping (no copy of the data). Every descriptor and composite of the file
/// is checked first (`FileReader::check_all`), so a bad file writes nothing.
/// Names and KV metadata have no place in a stream and are dropped. Flushes
/// the sink at the end.
///
/// @code
/// auto file = hurray::FileReader::open("model.hrry");
/// hurray::FdSink out(STDOUT_FILENO);
/// if (auto s = hurray::file_to_stream(*file, out); !s) return s;
/// @endcode
HURRAY_IO_EXPORT Status file_to_stream(const FileReader& file, ByteSink& sink, const StreamWriteOptions& options = {});

/// Reads a stream from `source` until its clean end and adds each tensor to
/// `writer` (which the caller created and later finishes, after setting KV
/// metadata if it likes). Tensor `i` is named `names[i]` when given, else
/// `tensor_<i>`. Data moves in chunks of `options.chunk_size`: memory stays
/// bounded whatever the tensor sizes. Returns the number of tensors.
///
/// @code
/// hurray::FdSource in(STDIN_FILENO);
/// auto writer = hurray::FileWriter::create_file("out.hrry");
/// auto n = hurray::stream_to_file(in, *writer);
/// if (!n) return n.error();
/// if (auto s = writer->finish(); !s) return s;
/// @endcode
HURRAY_IO_EXPORT Result<uint64_t> stream_to_file(ByteSource& source, FileWriter& writer, std::span<const std::string> names = {},
                                const StreamReadOptions& options = {});

}  // namespace hurray
