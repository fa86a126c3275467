// SPDX-License-Identifier: Apache-2.0
// The HRRYFILE writer of hurray::convert: any TensorSource through hurray::FileWriter,
// one chunk at a time, into an atomically replaced file.
#include <algorithm>
#include <string>
#include <vector>

#include "convert/guard.hpp"
#include "convert/source_data.hpp"
#include "hurray/convert/hrryfile.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/file_writer.hpp"

namespace hurray::convert {
namespace {

/// The error of a FileWriter call for tensor `name`, named.
Error tensor_error(const Error& e, const std::string& name) {
    return {e.code(), "tensor '" + name + "': " + e.message(), e.offset()};
}

Status write_hrryfile_impl(const TensorSource& source, const std::filesystem::path& path,
                           const ConvertOptions& options) {
    if (options.chunk_bytes == 0) {
        return Error(ErrorCode::kInvalidArgument, "chunk_bytes: must be at least 1");
    }
    HURRAY_ASSIGN_OR_RETURN(const uint64_t total, detail::total_data_bytes(source));
    auto sink = AtomicFileSink::create(path, options.durable);
    if (!sink) {
        return sink.error();
    }
    FileWriterOptions writer_options;
    writer_options.allow_private_kv = true;  // kept as the source has them
    writer_options.tensor_count_hint = source.tensor_count();
    auto writer = FileWriter::create(**sink, writer_options);
    if (!writer) {
        return writer.error();
    }
    writer->kv() = source.kv();

    detail::ChunkCopier copier(source, options.chunk_bytes, total, options.progress);
    for (size_t i = 0; i < source.tensor_count(); ++i) {
        const SourceTensor& t = source.tensor(i);
        if (auto s = writer->begin_tensor(t.name, t.descriptor); !s) {
            return tensor_error(s.error(), t.name);
        }
        HURRAY_RETURN_IF_ERROR(copier.copy_tensor(i, [&](std::span<const uint8_t> piece) -> Status {
            if (auto s = writer->write_data(piece); !s) {
                return tensor_error(s.error(), t.name);
            }
            return {};
        }));
        if (auto s = writer->end_tensor(); !s) {
            return tensor_error(s.error(), t.name);
        }
    }
    if (auto s = writer->finish(); !s) {
        return s.error().with_context({.prefix = path.string(), .file = path.string()});
    }
    return (*sink)->commit();  // on any earlier return the sink's destructor removes the temp file
}

}  // namespace

Status write_hrryfile(const TensorSource& source, const std::filesystem::path& path,
                      const ConvertOptions& options) {
    return detail::guarded(path.string(),
                           [&]() -> Status { return write_hrryfile_impl(source, path, options); });
}

}  // namespace hurray::convert
