#pragma once
/// @file
/// Reading what `ls`, `info`, `verify` and `convert` are given: an HRRYFILE opened from a
/// path or read from a pipe, and the tensors of a file or a stream with their placement.

#include <cstdint>
#include <string>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"
#include "hurray/input.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/stream_decoder.hpp"
#include "hurray/json_out.hpp"

namespace hurray::cli {

/// Largest container read into memory when it does not come from a regular file by path
/// (standard input, a pipe): 4 GiB.
inline constexpr uint64_t kMaxInMemoryFile = uint64_t{4} << 30;

/// Opens an input holding an HRRYFILE: a regular file named by its path is mapped; a URL is
/// read through its RangeSource (descriptors checked on first use, DescriptorCheck::kLazy);
/// standard input and pipes are read into memory (at most kMaxInMemoryFile bytes). The error's
/// message is complete (code, byte offset, the input's name) and ready to print.
Result<FileReader> open_file_input(Input& in, FileReadOptions options = {});

/// One tensor as listed by `ls`.
struct ListedTensor {
    std::string name;           ///< its name (streams: tensor_<i>)
    TensorDescriptor descriptor;
    TensorPlacement where;      ///< absolute offsets in the file or stream
};

/// Every tensor of `file`, in index order. Fails on the first descriptor that does not
/// decode (the message names the tensor).
Result<std::vector<ListedTensor>> list_file(const FileReader& file);

/// An HRRYFILE input, opened and listed.
struct ListedFile {
    FileReader file;                   ///< the opened file
    std::vector<ListedTensor> tensors;  ///< list_file(file)
};

/// open_file_input, then list_file. Either error's message is ready to print (a listing
/// error's is prefixed with the input's name), as `ls` and `info` report it.
Result<ListedFile> open_and_list_file(Input& in);

/// What a stream held, read to its end.
struct StreamListing {
    std::vector<ListedTensor> tensors;  ///< in stream order
    uint64_t total_bytes = 0;           ///< stream length
    uint64_t composites = 0;            ///< composites completed
};

/// Reads a stream to its end (skipping data) and lists its tensors. Fails with the
/// reader's error (absolute stream offset, tensor named) when the stream is invalid.
Result<StreamListing> list_stream(ByteSource& source, const StreamReadOptions& options = {});

/// `prefix: error` for messages, e.g. `model.hrry: truncated at byte 96: ...`.
std::string error_text(const std::string& prefix, const Error& e);

}  // namespace hurray::cli
