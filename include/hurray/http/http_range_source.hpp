// SPDX-License-Identifier: Apache-2.0
/// @file
/// `HttpRangeSource` (hurray::http): a `RangeSource` over an HTTP(S) URL,
/// read with range requests through libcurl, so that `FileReader` opens a
/// file on a web server, a CDN or an S3-compatible store without
/// downloading it (docs/remote.md).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hurray/core/result.hpp"
#include "hurray/http/export.hpp"
#include "hurray/http/s3.hpp"
#include "hurray/io/range_source.hpp"

namespace hurray::http {

/// How an `HttpRangeSource` talks to the server.
struct HURRAY_HTTP_EXPORT HttpOptions {
    /// Longest wait for the connection (TCP and TLS) to be set up.
    std::chrono::milliseconds connect_timeout{10000};
    /// Longest time without a body byte received while a response is
    /// expected (checked about once a second; at least 1 s): the request is
    /// then aborted ("no byte received for N s") and retried.
    std::chrono::milliseconds idle_timeout{30000};
    /// Longest time one call (`open`, `read`, `read_ranges`) may take, its
    /// retries and their waits included; 0 (default): no limit. A server
    /// trickling bytes never trips `idle_timeout`; this ends it ("the
    /// deadline of N s passed"), and no retry starts that would pass it.
    std::chrono::milliseconds deadline{0};
    /// Called during transfers (libcurl's progress callback: as bytes
    /// arrive, and about once a second when none do) with the body bytes
    /// this source has received so far, transfers in progress included;
    /// returning false cancels the transfer: the call fails with
    /// `kCancelled` ("cancelled by the progress callback") and is not
    /// retried. Called on the thread of the call it serves (calls from
    /// several threads call it at once); empty (default): none.
    std::function<bool(uint64_t bytes_received)> progress;
    /// Attempts after the first for a request that failed in a way worth
    /// repeating: a 5xx status, a connection that failed, was reset or
    /// ended early, a timeout. At most 10.
    unsigned max_retries = 3;
    /// Wait before the first retry; doubled before each next one.
    std::chrono::milliseconds retry_backoff{200};
    /// Redirects followed per request (3xx with a Location), http and https
    /// only; clamped to [0, 20]. More is an error at once ("a redirect
    /// loop?"), not retried.
    long max_redirects = 5;
    /// Extra request headers, each "Name: value" (e.g. "Authorization:
    /// Bearer ..."). Sent with every request; never put in error messages.
    /// libcurl does not send them on to another host after a redirect.
    std::vector<std::string> headers;
    /// Bytes read from the end of the file by the request at open (which
    /// also learns the size and the identity); reads inside them cost no
    /// further request. The default, 40, is an HRRYFILE's trailer, which is
    /// what `FileReader` reads first by default (`FileReadOptions::
    /// range_tail_bytes`): listing then receives the header, trailer, index
    /// and KV section and nothing more. Set both to e.g. 64 KiB to trade
    /// bytes for a round trip on small files (docs/remote.md).
    /// Ranges that end inside these bytes ask only for the part before them.
    uint64_t tail_bytes = 40;
    /// `read_ranges`: ranges whose gap is at most this many bytes are asked
    /// for as one range (the bytes between are received and dropped).
    /// Default 128: about what a separate range costs in the request (its
    /// `a-b,` in the `Range` header) plus its part header in the multipart
    /// response (boundary, `Content-Type`, `Content-Range`: ~100 bytes), so
    /// merging never costs more bytes than it saves. Adjacent ranges are
    /// always merged.
    uint64_t merge_gap = 128;
    /// `read_ranges`: most bytes of the `Range:` header line of one
    /// multi-range request (`Range: bytes=a-b,c-d,...`); one request carries
    /// as many ranges as fit (always at least one). When a server refuses a
    /// request as too large (400, 413, 414, 431) the budget is halved,
    /// remembered by the source, and the request sent again in smaller
    /// ones. nginx accepts 8 KiB header lines by default, S3 about 8 KiB.
    /// Capped at what libcurl can send: it builds a request (request line
    /// and headers) of at most 1 MiB (128 KiB before 7.76.0) and fails a
    /// larger one before sending it, so a budget above about 1 MiB less the
    /// URL and the extra headers acts as that much; a request libcurl still
    /// refuses as too large is split like a refused one, and a single range
    /// it refuses is an error saying so.
    size_t max_range_header_bytes = size_t{64} * 1024;
    /// Connections used at once by one large `read` (split in contiguous
    /// parts) and by the requests of one `read_ranges` call (multi-range
    /// requests once one has passed within the budget; single-range ones
    /// when the server does not answer multi-range requests). Clamped to
    /// [1, 16].
    unsigned parallel = 4;
    /// A `read` of at least this many bytes (outside the bytes kept from
    /// open) is split into `parallel` contiguous parts fetched at once, each
    /// checked and retried on its own. At 8 MiB and 4 parts each part is
    /// 2 MiB, 20-40 ms on a 50-100 MiB/s object-store connection: long
    /// beside a request's round trip. Parts gain nothing on loopback, where
    /// copying is the limit (docs/remote.md has the measurements).
    uint64_t parallel_min_bytes = uint64_t{8} * 1024 * 1024;
    /// Sign every request with AWS Signature Version 4 (S3, S3-compatible
    /// stores). Unset: requests go unsigned, except for `s3://` URLs, which
    /// take the environment's credentials (`AwsCredentials::
    /// from_environment`) when it has some. The secret is never sent or
    /// put in a message; libcurl does not sign a redirect to another host.
    std::optional<AwsCredentials> aws;
    /// Where `s3://bucket/key` URLs go (endpoint, region, addressing).
    /// Unset: the environment's (`S3Location::from_environment`).
    std::optional<S3Location> s3;
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
/// hurray::http::HttpOptions options;
/// options.headers.push_back("Authorization: Bearer " + token);
/// auto src = hurray::http::HttpRangeSource::open("https://example.com/model.hrry", options);
/// if (!src) return src.error();
/// auto file = hurray::FileReader::open(*src);        // 1-3 requests
/// auto w = file->tensor("w");                          // 1-2 more
/// @endcode
class HURRAY_HTTP_EXPORT HttpRangeSource final : public RangeSource {
public:
    /// Opens `url` (http, https, or `s3://bucket/key`, read at the endpoint
    /// of `options.s3`): one request for the last `options.tail_bytes`
    /// bytes, which gives the size and the identity (two when the server
    /// answers that suffix range with another range, as s3rver does).
    /// `kInvalidArgument` for a bad URL, header or credentials; `kIoError`
    /// when the server cannot be reached, refuses the range (an S3 error's
    /// code and message are quoted: "HTTP status 403 (SignatureDoesNotMatch:
    /// ...)"), answers badly, or the file is empty.
    static Result<std::shared_ptr<HttpRangeSource>> open(const std::string& url, HttpOptions options = {});

    /// Closes the pooled connections.
    ~HttpRangeSource() override;

    /// Size of the remote file, from the `Content-Range` at open.
    [[nodiscard]] uint64_t size() const noexcept override;
    /// One range request (retried as `HttpOptions` says), or none when the
    /// range lies in the bytes read at open; a range of at least
    /// `HttpOptions::parallel_min_bytes` is split into `parallel` parts
    /// fetched at once on separate connections.
    ///
    /// @code
    /// std::vector<uint8_t> data(size_t{1} << 30);
    /// HURRAY_RETURN_IF_ERROR(src->read(0, data));   // 4 parts, 4 connections
    /// @endcode
    [[nodiscard]] Status read(uint64_t offset, std::span<uint8_t> out) override;
    /// Many ranges in few requests: ranges inside the bytes read at open
    /// cost nothing; the others are sorted, merged when at most
    /// `HttpOptions::merge_gap` bytes apart, and sent as multi-range
    /// requests (`Range: bytes=a-b,c-d,...`, as many ranges as fit in
    /// `max_range_header_bytes`; `parallel` at once once one has passed)
    /// whose `multipart/byteranges` answers are checked part by part (each
    /// part's `Content-Range` must be ranges asked for) before any byte
    /// reaches `out`. A server that answers `200` or only one range is
    /// remembered as without multi-range support: the ranges are then
    /// fetched with single-range requests, `parallel` at once.
    /// `kInvalidArgument` when ranges overlap.
    ///
    /// @code
    /// std::vector<std::vector<uint8_t>> bufs(offsets.size(), std::vector<uint8_t>(100));
    /// std::vector<hurray::ByteRange> ranges;
    /// for (size_t i = 0; i < offsets.size(); ++i) ranges.push_back({offsets[i], bufs[i]});
    /// HURRAY_RETURN_IF_ERROR(src->read_ranges(ranges));   // ~1 request per 3500 ranges (420 with nginx)
    /// @endcode
    [[nodiscard]] Status read_ranges(std::span<const ByteRange> ranges) override;
    /// The pinned `ETag` (as sent, quotes included), else `Last-Modified`,
    /// else empty (the server sent neither: a replacement cannot be detected).
    [[nodiscard]] std::string identity() const override;
    /// The URL without user, password or query string (an `s3://` URL as
    /// given).
    [[nodiscard]] std::string name() const override;

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
    /// libcurl's handles and the state of the open file (src/http/http_range_source.cpp).
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace hurray::http

namespace hurray {

/// Former name of `hurray::http::HttpOptions`, kept for one release.
using HttpOptions = http::HttpOptions;
/// Former name of `hurray::http::HttpRangeSource`, kept for one release.
using HttpRangeSource = http::HttpRangeSource;

}  // namespace hurray
