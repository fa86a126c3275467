// SPDX-License-Identifier: Apache-2.0
// TensorFile and hurray::load: a dictionary view of a FileReader.
#include "hurray/io/tensor_file.hpp"

namespace hurray {

Result<TensorFile> TensorFile::open(const std::filesystem::path& path, const FileReadOptions& options) {
    HURRAY_ASSIGN_OR_RETURN(FileReader reader, FileReader::open(path, options));
    return TensorFile(std::move(reader));
}

std::vector<std::string_view> TensorFile::names() const {
    std::vector<std::string_view> out;
    out.reserve(reader_.tensor_count());
    for (size_t i = 0; i < reader_.tensor_count(); ++i) {
        out.emplace_back(reader_.entry(i).name);
    }
    return out;
}

Result<TensorFile> load(const std::filesystem::path& path, const FileReadOptions& options) {
    return TensorFile::open(path, options);
}

}  // namespace hurray
