// SPDX-License-Identifier: Apache-2.0
/// @file
/// `hurray::http::load_url`: an HRRYFILE on a web server, a CDN or
/// an S3-compatible store opened as a `TensorFile`, read with HTTP range
/// requests (docs/remote.md).
#pragma once

#include <string>

#include "hurray/core/result.hpp"
#include "hurray/http/export.hpp"
#include "hurray/http/http_range_source.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/tensor_file.hpp"

namespace hurray::http {

/// Opens the HRRYFILE at `url` (http or https) as a `TensorFile`, with the
/// checks of a local file: a request for the file's trailer at open, one for
/// its header, index and KV section, then (without a descriptor table) one
/// for every descriptor with the default `DescriptorCheck::kPeek` (none with
/// `kLazy`); then each tensor's data is fetched on first access and kept
/// while the file is open (one request; with `kLazy`, one for its descriptor
/// and data together). The
/// counts assume a server that answers multi-range requests (nginx does);
/// see docs/remote.md for the others.
///
/// @code
/// hurray::http::HttpOptions options;
/// options.headers.push_back("Authorization: Bearer " + token);  // a private bucket
/// auto file = hurray::http::load_url("https://example.com/model.hrry", options);
/// if (!file) return file.error();                 // names the URL and the range
/// auto w = file->tensor("w").as<float>();         // fetched now, then kept
/// @endcode
[[nodiscard]] HURRAY_HTTP_EXPORT Result<TensorFile> load_url(const std::string& url, const HttpOptions& http = {},
                                                             const FileReadOptions& options = {});

}  // namespace hurray::http

namespace hurray {

/// Former name of `hurray::http::load_url`, kept for one release.
using http::load_url;

}  // namespace hurray
