// SPDX-License-Identifier: Apache-2.0
/// @file
/// Conversion between an HRRYFILE container and the streaming format, both
/// directions, streaming and in bounded memory.
#pragma once

#include "hurray/io/export.hpp"
#include <cstdint>
#include <functional>
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

/// How `file_to_stream` sends to a file descriptor.
struct HURRAY_IO_EXPORT StreamSendOptions {
    /// The stream's writing rules (producer sync, composite rules).
    StreamWriteOptions write{};
    /// Called after each transfer with the bytes sent so far (for a progress
    /// bar); may be empty.
    std::function<void(uint64_t)> progress;
    /// On a pipe, hand runs of tensor data of at least 64 KiB to the pipe by
    /// reference (vmsplice(2)) instead of copying them, when the file is
    /// mapped read-only. The reader of the pipe then sees the file's pages
    /// as they are when it reads them (as with sendfile(2)).
    bool zero_copy = true;
};

/// Writes every tensor of `file` as a stream to the file descriptor `fd`
/// (a pipe, socket, file or terminal; not closed), byte for byte what
/// `file_to_stream(file, FdSink(fd))` writes, at the speed of the
/// transport: descriptors and tensor data are gathered into large writev(2)
/// calls straight from the mapping (sendmsg(2) on a socket), and on a pipe
/// long data runs are vmsplice(2)'d from the page cache (see
/// `StreamSendOptions::zero_copy`). Partial writes and `EINTR` are retried,
/// a non-blocking `fd` is waited on (poll) instead of failing with
/// `EAGAIN`, and a reader that has gone is a `kIoError` ("... Broken pipe
/// (the reader closed its end)"), never a `SIGPIPE`: the signal is blocked
/// in the calling thread during the call and one it raised is consumed. A
/// file that shrinks while it is sent is `kIoError` "file changed while
/// mapped", as everywhere else. Checks every descriptor and composite
/// first (`FileReader::check_all`), so a bad file writes nothing.
///
/// @code
/// auto file = hurray::FileReader::open("model.hrry");
/// if (!file) return file.error();
/// if (auto s = hurray::file_to_stream(*file, STDOUT_FILENO); !s) return s;
/// @endcode
HURRAY_IO_EXPORT Status file_to_stream(const FileReader& file, int fd, const StreamSendOptions& options = {});

/// Reads a stream from `source` until its clean end and adds each tensor to
/// `writer` (which the caller created and later finishes, after setting KV
/// metadata if it likes). Tensor `i` is named `names[i]` when given, else
/// `tensor_<i>`. Data moves in chunks of `options.chunk_size`: memory stays
/// bounded whatever the tensor sizes. When `source` reads a descriptor
/// directly (`ByteSource::splice_fd`), each buffer's bytes are read from it
/// into the writer's 1 MiB transfer buffer and written, skipping the
/// reader's chunks (`FileWriter::write_data_from`). Returns the number of
/// tensors.
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
