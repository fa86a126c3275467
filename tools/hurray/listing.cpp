#include "hurray/listing.hpp"

#include <memory>
#include <utility>

#include "hurray/core/descriptor_codec.hpp"
#include "hurray/io/stream_reader.hpp"

namespace hurray::cli {

std::string error_text(const std::string& prefix, const Error& e) { return prefix + ": " + e.to_string(); }

Result<FileReader> open_file_input(Input& in, FileReadOptions options) {
    options.descriptor.libhurray_schemes = options.descriptor.libhurray_schemes && in.decode_options().libhurray_schemes;
    if (in.is_remote()) {
        // The same options as a local file: with kPeek and kFull the reader
        // fetches every descriptor at open in a few multi-range requests.
        auto file = FileReader::open(in.range_source(), options);
        if (!file) {  // the reader's messages name the URL
            return Error(file.error().code(), file.error().to_string());
        }
        return file;
    }
    if (in.is_regular_file() && in.path() != "-") {
        auto file = FileReader::open(in.path(), options);
        if (!file) {  // the reader's messages name the path
            return Error(file.error().code(), file.error().to_string());
        }
        return file;
    }
    auto bytes = in.read_all(kMaxInMemoryFile);
    if (!bytes) {
        return bytes.error();
    }
    auto owner = std::make_shared<std::vector<uint8_t>>(std::move(*bytes));
    std::span<const uint8_t> view(*owner);
    auto file = FileReader::open_memory(view, owner, options);
    if (!file) {
        return Error(file.error().code(), error_text(in.display_name(), file.error()));
    }
    return file;
}

Result<std::vector<ListedTensor>> list_file(const FileReader& file) {
    std::vector<ListedTensor> out;
    out.reserve(file.tensor_count());
    // decode_descriptor: each descriptor decoded straight into its row, none kept by
    // the reader (descriptor(i) would keep a second copy of every one).
    for (size_t i = 0; i < file.tensor_count(); ++i) {
        const IndexEntry& e = file.entry(i);
        ListedTensor row{std::string(e.name), {}, TensorPlacement{e.descriptor_offset, e.descriptor_length, e.data_offset}};
        if (auto d = file.decode_descriptor(i, row.descriptor); !d) {
            return Error(d.error().code(), "tensor '" + std::string(e.name) + "' (index " + std::to_string(i) + ") at byte " +
                                               std::to_string(e.descriptor_offset) + ": " + d.error().to_string());
        }
        out.push_back(std::move(row));
    }
    return out;
}

Result<ListedFile> open_and_list_file(Input& in) {
    HURRAY_ASSIGN_OR_RETURN(FileReader file, open_file_input(in));
    auto listed = list_file(file);
    if (!listed) {
        return listed.error().with_context({.prefix = in.display_name(), .file = in.display_name()});
    }
    return ListedFile{std::move(file), std::move(*listed)};
}

Result<StreamListing> list_stream(ByteSource& source, const StreamReadOptions& options) {
    StreamReader reader(source, options);
    StreamListing listing;
    for (;;) {
        auto t = reader.next();
        if (!t) {
            return t.error();
        }
        if (*t == nullptr) {
            break;
        }
        const StreamTensor& st = **t;
        // The reader stops right after the descriptor: its offset is where the data starts.
        const uint64_t data_offset = reader.decoder().offset();
        const uint64_t length = data_offset - st.descriptor_offset;
        listing.tensors.push_back(ListedTensor{"tensor_" + std::to_string(st.index), st.descriptor,
                                               TensorPlacement{st.descriptor_offset,
                                                               static_cast<uint32_t>(length), data_offset}});
        listing.composites += reader.take_completed().size();
    }
    listing.composites += reader.take_completed().size();
    listing.total_bytes = reader.decoder().offset();
    return listing;
}

}  // namespace hurray::cli
