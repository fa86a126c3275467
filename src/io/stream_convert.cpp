// SPDX-License-Identifier: Apache-2.0
// Container <-> stream conversion over FileReader / FileWriter and the
// blocking stream reader and writer.
#include "hurray/io/stream_convert.hpp"

#include <string>
#include <vector>

#include "core/text.hpp"
#include "hurray/io/stream_reader.hpp"
#include "hurray/io/stream_writer.hpp"

namespace hurray {

Status file_to_stream(const FileReader& file, ByteSink& sink, const StreamWriteOptions& options) {
    // Every descriptor decoded and every composite checked before a byte goes out.
    HURRAY_RETURN_IF_ERROR(file.check_all());
    StreamWriter writer(sink, options);
    std::vector<std::span<const uint8_t>> spans;
    for (const size_t i : file.write_order()) {
        HURRAY_ASSIGN_OR_RETURN(const FileTensor t, file.tensor(i));
        spans.clear();
        for (const SharedBuffer& b : t.buffers()) {
            spans.push_back(b.span());
        }
        if (auto s = writer.write_tensor(t.descriptor(), spans); !s) {
            // A write from a vanished page fails (EFAULT from write(2)) or
            // reads zeros; either way the file's change is the real cause.
            HURRAY_RETURN_IF_ERROR(file.check_unchanged());
            return s;
        }
        HURRAY_RETURN_IF_ERROR(file.check_unchanged());
    }
    return writer.finish();
}

Result<uint64_t> stream_to_file(ByteSource& source, FileWriter& writer, std::span<const std::string> names,
                                const StreamReadOptions& options) {
    StreamReader reader(source, options);
    while (true) {
        HURRAY_ASSIGN_OR_RETURN(const StreamTensor* t, reader.next());
        if (t == nullptr) {
            return reader.decoder().tensor_count();
        }
        std::string generated;
        if (t->index >= names.size()) {
            generated = "tensor_" + detail::dec(t->index);
        }
        const std::string& name = t->index < names.size() ? names[t->index] : generated;
        HURRAY_RETURN_IF_ERROR(writer.begin_tensor(name, t->descriptor));
        while (true) {
            HURRAY_ASSIGN_OR_RETURN(const StreamChunk c, reader.read_chunk());
            if (c.bytes.empty()) {
                break;
            }
            HURRAY_RETURN_IF_ERROR(writer.write_data(c.bytes));
        }
        HURRAY_RETURN_IF_ERROR(writer.end_tensor());
        // Composites are validated by the reader; the list is not needed here.
        (void)reader.take_completed();
    }
}

}  // namespace hurray
