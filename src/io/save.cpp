// SPDX-License-Identifier: Apache-2.0
// hurray::save: named tensors and KV metadata to an HRRYFILE in one call.
#include "hurray/io/save.hpp"

#include <string>

namespace hurray {

namespace {

/// `e` with "tensor 'name': " before its message.
Error for_tensor(std::string_view name, const Error& e) {
    return {e.code(), "tensor '" + std::string(name) + "': " + e.message(), e.offset()};
}

Status write_all(FileWriter& writer, const TensorList& tensors, const KvList& kv) {
    // KV first: a bad key is reported before any tensor is written.
    HURRAY_RETURN_IF_ERROR(kv.add_to(writer.kv()));
    for (const NamedTensor& t : tensors.items()) {
        auto d = t.tensor.descriptor();
        if (!d) {
            return for_tensor(t.name, d.error());
        }
        if (auto st = writer.add_tensor(t.name, *d, t.tensor.buffers()); !st) {
            return for_tensor(t.name, st.error());
        }
    }
    return writer.finish();
}

}  // namespace

Status KvList::add_to(KvMetadata& out) const {
    if (metadata_ != nullptr) {
        for (const KvEntry& e : metadata_->entries()) {
            HURRAY_RETURN_IF_ERROR(out.add(e.key, e.value));
        }
    }
    for (const auto& [key, value] : pairs_) {
        HURRAY_RETURN_IF_ERROR(out.add(std::string(key), value));
    }
    return Status::success();
}

Status save(const std::filesystem::path& path, const TensorList& tensors, const KvList& kv,
            const SaveOptions& options) {
    HURRAY_ASSIGN_OR_RETURN(FileWriter writer, FileWriter::create_file(path, options.writer, options.durability));
    // On error the writer is destroyed unfinished: its temporary file is removed
    // and `path` keeps its old content.
    return write_all(writer, tensors, kv);
}

Status save(ByteSink& sink, const TensorList& tensors, const KvList& kv, const SaveOptions& options) {
    HURRAY_ASSIGN_OR_RETURN(FileWriter writer, FileWriter::create(sink, options.writer));
    return write_all(writer, tensors, kv);
}

}  // namespace hurray
