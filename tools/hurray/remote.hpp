#pragma once
/// @file
/// Inputs given as URLs (http://, https://, s3://): the options every command that reads them
/// shares (--header, HURRAY_HTTP_HEADERS, --http-timeout, --http-retries), opening a URL
/// as a RangeSource through hurray::http (builds with HURRAY_CLI_HAS_HTTP), and reading a
/// remote file's tensor data straight from its source in bounded pieces (a FileReader over
/// a RangeSource keeps every tensor it hands out until it is closed).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "hurray/core/result.hpp"
#include "hurray/io/byte_source.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/range_source.hpp"

namespace hurray::cli {

/// Name of the environment variable holding extra request headers, one "Name: value" per
/// line (so that secrets need not appear on the command line).
inline constexpr const char* kHeadersEnv = "HURRAY_HTTP_HEADERS";

/// How a command reads a URL.
struct RemoteOptions {
    /// Extra request headers from --header, each "Name: value" (after those of kHeadersEnv).
    std::vector<std::string> headers;
    /// Seconds without a byte received (and to connect) before a request is retried.
    double timeout_s = 30.0;
    /// Retries of a request that failed in a way worth repeating (5xx, connection, timeout).
    unsigned retries = 3;
    /// Seconds one request may take, retries included (HttpOptions::deadline); 0: no limit.
    double deadline_s = 0.0;
};

/// True when `path` starts with `http://`, `https://` or `s3://` (scheme case-insensitive).
/// An `s3://bucket/key` URL is read at the endpoint and with the credentials of the
/// environment (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, ...: hurray::http::S3Location and
/// AwsCredentials).
bool is_url(std::string_view path) noexcept;

/// `path` fit for messages: a URL without `user:password@`, `?query` or `#fragment`
/// (presigned URLs carry their signature in the query); anything else unchanged.
std::string display_path(const std::string& path);

/// Adds --header, --http-timeout, --http-retries and --http-deadline to `cmd`, stored in
/// `options`.
void add_remote_options(CLI::App* cmd, RemoteOptions& options);

/// The request headers: every non-empty line of kHeadersEnv, then options.headers. Each
/// must be "Name: value" with a token for a name; an error names the offending header by
/// its name (or its position) and never shows a value.
Result<std::vector<std::string>> request_headers(const RemoteOptions& options);

/// Opens `url` for range reads. kUnsupported when this build has no hurray::http;
/// otherwise the HttpRangeSource's error (it names the URL without credentials or query).
Result<std::shared_ptr<RangeSource>> open_url(const std::string& url, const RemoteOptions& options);

/// Reads a RangeSource front to back as a ByteSource, `chunk` bytes per range read.
class RangeByteSource final : public ByteSource {
public:
    /// Reads `source` from byte `from`, `chunk` bytes (at least 1) per request.
    RangeByteSource(std::shared_ptr<RangeSource> source, uint64_t from, size_t chunk);
    /// Copies buffered bytes, reading the next chunk when none are left; 0 at the end.
    Result<size_t> read_some(std::span<uint8_t> out) override;
    /// Moves forward without reading what is skipped.
    Result<uint64_t> skip(uint64_t n) override;

private:
    std::shared_ptr<RangeSource> source_;
    uint64_t pos_;  // offset of buffer_[at_]
    size_t chunk_;
    std::vector<uint8_t> buffer_;
    size_t at_ = 0;
};

/// The absolute offset of every buffer of tensor `i` of `file` (its descriptor decoded and
/// checked by the reader): buffer 0 at its data_offset, each next one at the first multiple
/// of the file's data_buffer_alignment after the previous one ends.
Result<std::vector<uint64_t>> buffer_offsets(const FileReader& file, size_t i);

/// Reads the data of tensor `i` of `file` from `source` (the file's own source) in pieces
/// of at most `piece` bytes, buffer after buffer (padding left out), handing each to
/// `sink`; `scratch` is reused. Memory: one piece, whatever the tensor's size.
Status copy_tensor_data(RangeSource& source, const FileReader& file, size_t i, size_t piece,
                        std::vector<uint8_t>& scratch,
                        const std::function<Status(std::span<const uint8_t>)>& sink);

/// Every buffer of tensor `i` of `file`, read from `source` into memory (one range each),
/// not kept by the reader (verify and cat of a remote file: memory bounded by one tensor).
Result<std::vector<std::vector<uint8_t>>> read_tensor_buffers(RangeSource& source, const FileReader& file,
                                                              size_t i);

}  // namespace hurray::cli
