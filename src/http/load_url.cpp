// SPDX-License-Identifier: Apache-2.0
#include "hurray/http/load_url.hpp"

#include <memory>
#include <utility>

namespace hurray::http {

Result<TensorFile> load_url(const std::string& url, const HttpOptions& http, const FileReadOptions& options) {
    HURRAY_ASSIGN_OR_RETURN(std::shared_ptr<HttpRangeSource> source, HttpRangeSource::open(url, http));
    HURRAY_ASSIGN_OR_RETURN(FileReader reader, FileReader::open(std::move(source), options));
    return TensorFile(std::move(reader));
}

}  // namespace hurray::http
