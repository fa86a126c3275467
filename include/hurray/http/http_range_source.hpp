// SPDX-License-Identifier: Apache-2.0
/// @file
/// `HttpRangeSource` (hurray::http): a `RangeSource` over an HTTP(S) URL,
/// read with range requests through libcurl, so that `FileReader` opens a
/// file on a web server, a CDN or an S3-compatible store without
/// downloading it (docs/remote.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/http/export.hpp"
#include "hurray/io/range_source.hpp"

namespace hurray {

/// How an `HttpRangeSource` talks to the server.
struct HURRAY_HTTP_EXPORT HttpOptions {
    /// Longest wait for the connection (TCP and TLS) to be set up.
    std::chrono::milliseconds connect_timeout{10000};
    /// Longest time without a byte received while a response is expected
    /// (rounded up to whole seconds; at least one).
    std::chrono::milliseconds idle_timeout{30000};
    /// Attempts after the first for a request that failed in a way worth
    /// repeating: a 5xx status, a connection that failed, was reset or
    /// ended early, a timeout. At most 10.
    unsigned max_retries = 3;
    /// Wait before the first retry; doubled before each next one.
    std::chrono::milliseconds retry_backoff{200};
    /// Redirects followed per request (3xx with a Location), http and https
    /// only; clamped to [0, 20].
    long max_redirects = 5;
    /// Extra request headers, each "Name: value" (e.g. "Authorization:
    /// Bearer ..."). Sent with every request; never put in error messages.
    /// libcurl does not send them on to another host after a redirect.
    std::vector<std::string> headers;
    /// Bytes read from the end of the file by the request at open (which
    /// also learns the size and the identity); reads inside them cost no
    /// further request. `FileReader` reads the last 64 KiB first, so the
    /// default makes that read free.
    uint64_t tail_bytes = uint64_t{64} * 1024;
};

/// A remote file read with HTTP range requests (`Range: bytes=a-b`).
///
/// Correctness rules: every range must come back `206 Partial Content` with
/// a `Content-Range` naming exactly the range asked for and the size seen at
/// open, and exactly that many bytes: a `200` that ignores the range, a
/// wrong or missing `Content-Range`, a compressed body and a short or long
/// body are errors, and no byte of such a response reaches the caller's
/// buffer. The file's identity (its `ETag`, else its `Last-Modified`) is
/// pinned at open; later requests send `If-Match` (strong ETags) and every
/// response must carry the same identity, so a file replaced on the server
/// while it is read is an error ("changed on the server"), never a mix of
/// two versions. Failures worth repeating are retried with exponential
/// backoff (`HttpOptions`); errors are `kIoError` values naming the URL
/// (without credentials or query string) and the byte range.
///
/// Thread-safe: `read` may be called from several threads; connections are
/// kept in a small pool and reused.
///
/// @code
/// hurray::HttpOptions http;
/// http.headers.push_back("Authorization: Bearer " + token);
/// auto src = hurray::HttpRangeSource::open("https://example.com/model.hrry", http);
/// if (!src) return src.error();
/// auto file = hurray::FileReader::open(*src);        // 1-3 requests
/// auto w = file->tensor("w");                          // 1-2 more
/// @endcode
class HURRAY_HTTP_EXPORT HttpRangeSource final : public RangeSource {
public:
    /// Opens `url` (http or https): one request for the last
    /// `options.tail_bytes` bytes, which gives the size and the identity.
    /// `kIoError` when the server cannot be reached, refuses the range,
    /// answers badly, or the file is empty.
    static Result<std::shared_ptr<HttpRangeSource>> open(const std::string& url, HttpOptions options = {});

    /// Closes the pooled connections.
    ~HttpRangeSource() override;

    /// Size of the remote file, from the `Content-Range` at open.
    [[nodiscard]] uint64_t size() const noexcept override { return size_; }
    /// One range request (retried as `HttpOptions` says), or none when the
    /// range lies in the bytes read at open.
    [[nodiscard]] Status read(uint64_t offset, std::span<uint8_t> out) override;
    /// The pinned `ETag` (as sent, quotes included), else `Last-Modified`,
    /// else empty (the server sent neither: a replacement cannot be detected).
    [[nodiscard]] std::string identity() const override { return identity_; }
    /// The URL without user, password or query string.
    [[nodiscard]] std::string name() const override { return display_url_; }

    /// `url` with any `user:password@` and `?query` removed (for messages).
    static std::string display_url(const std::string& url);

    /// Not copyable or movable (readers share it through a `shared_ptr`).
    HttpRangeSource(const HttpRangeSource&) = delete;
    /// Not copyable.
    HttpRangeSource& operator=(const HttpRangeSource&) = delete;
    /// Not movable.
    HttpRangeSource(HttpRangeSource&&) = delete;
    /// Not movable.
    HttpRangeSource& operator=(HttpRangeSource&&) = delete;

    /// Use `open` (this makes no request and knows no size).
    HttpRangeSource(std::string url, HttpOptions options);

private:
    struct Response;
    /// One range request with retries; `suffix` asks for the last
    /// out.size() bytes (at open, size unknown).
    Status fetch(uint64_t offset, std::span<uint8_t> out, bool suffix, Response* at_open);
    /// One attempt.
    Status attempt(void* easy, uint64_t offset, std::span<uint8_t> out, bool suffix, Response& resp);
    /// libcurl callbacks: one header line; body bytes (checked at the first).
    static size_t on_header(char* data, size_t size, size_t count, void* user);
    static size_t on_body(char* data, size_t size, size_t count, void* user);
    void* take_handle();
    void give_back(void* easy);

    std::string url_;
    std::string display_url_;
    HttpOptions options_;
    uint64_t size_ = 0;
    std::string etag_;           // pinned at open (empty: none)
    std::string last_modified_;  // pinned at open (empty: none)
    std::string identity_;
    std::vector<uint8_t> tail_;  // the last bytes of the file, read at open
    uint64_t tail_offset_ = 0;
    std::mutex pool_mutex_;
    std::vector<void*> pool_;  // idle CURL easy handles
};

}  // namespace hurray
