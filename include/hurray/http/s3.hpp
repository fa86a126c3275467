// SPDX-License-Identifier: Apache-2.0
/// @file
/// S3 and S3-compatible object stores (hurray::http): AWS Signature
/// Version 4 credentials for `HttpOptions::aws`, read from the standard
/// environment variables, and `s3://bucket/key` URLs turned into the HTTPS
/// URL of an endpoint, path-style or virtual-host (docs/remote.md, "S3").
#pragma once

#include <optional>
#include <string>

#include "hurray/core/result.hpp"
#include "hurray/http/export.hpp"

namespace hurray::http {

/// Credentials that sign every request with AWS Signature Version 4
/// (through libcurl's `CURLOPT_AWS_SIGV4`): what a private S3 bucket, or an
/// S3-compatible store (MinIO, Ceph RGW, R2, s3rver...), asks for. The
/// secret signs requests and is never sent, printed or put in a message.
struct HURRAY_HTTP_EXPORT AwsCredentials {
    /// The access key ID (`AKIA...`); sent in the `Authorization` header.
    std::string access_key_id;
    /// The secret access key; signs, is never sent.
    std::string secret_access_key;
    /// The session token of temporary credentials (STS, SSO, an instance
    /// role), sent as `x-amz-security-token`; empty for long-term keys.
    std::string session_token;
    /// The region the request is signed for (`us-east-1`, `eu-west-3`...);
    /// letters, digits and '-'.
    std::string region = "us-east-1";
    /// The service the request is signed for: `s3` for object stores.
    std::string service = "s3";

    /// The credentials of the environment, as the AWS SDKs and CLI read them:
    /// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`
    /// (optional), region from `AWS_REGION`, else `AWS_DEFAULT_REGION`, else
    /// `us-east-1`. `std::nullopt` when `AWS_ACCESS_KEY_ID` or
    /// `AWS_SECRET_ACCESS_KEY` is unset or empty (requests then go unsigned,
    /// as for a public bucket).
    static std::optional<AwsCredentials> from_environment();
};

/// How an `s3://bucket/key` URL names its bucket on the endpoint.
enum class S3Addressing {
    /// Virtual-host (`https://bucket.s3.REGION.amazonaws.com/key`) on AWS,
    /// path-style on a custom endpoint (what S3-compatible stores expect).
    kAuto,
    /// `ENDPOINT/bucket/key`.
    kPath,
    /// `SCHEME://bucket.ENDPOINT-HOST/key`.
    kVirtualHost,
};

/// Where `s3://` URLs are read from.
struct HURRAY_HTTP_EXPORT S3Location {
    /// The endpoint (`https://s3.example.com`, `http://127.0.0.1:9000`);
    /// empty: AWS, `https://s3.REGION.amazonaws.com`.
    std::string endpoint;
    /// The region (AWS's host name, and the signing region when the
    /// credentials name none).
    std::string region = "us-east-1";
    /// Path-style or virtual-host.
    S3Addressing addressing = S3Addressing::kAuto;

    /// The environment's: endpoint from `AWS_ENDPOINT_URL_S3`, else
    /// `AWS_ENDPOINT_URL`; region from `AWS_REGION`, else
    /// `AWS_DEFAULT_REGION`; addressing from `HURRAY_S3_ADDRESSING`
    /// (`path`, `virtual` or `auto`; `kInvalidArgument` for another value).
    static Result<S3Location> from_environment();
};

/// Whether `url` starts with `s3://` (any case).
[[nodiscard]] HURRAY_HTTP_EXPORT bool is_s3_url(const std::string& url) noexcept;

/// The HTTP(S) URL of the object `s3://bucket/key` at `where`: the key's
/// bytes are percent-encoded as S3 signs them (all but `A-Z a-z 0-9 - _ .
/// ~ /`). `kInvalidArgument` for a URL that is not `s3://`, an empty or
/// invalid bucket name (3-63 of `a-z 0-9 . -`; virtual-host addressing
/// also refuses dots on https, which break the certificate), an empty key,
/// a query string or fragment, or an endpoint that is not http(s).
///
/// @code
/// hurray::http::S3Location at;   // AWS, us-east-1
/// auto url = hurray::http::s3_http_url("s3://models/llama/q4.hrry", at);
/// // "https://models.s3.us-east-1.amazonaws.com/llama/q4.hrry"
/// at.endpoint = "http://127.0.0.1:9000";
/// url = hurray::http::s3_http_url("s3://models/llama/q4.hrry", at);
/// // "http://127.0.0.1:9000/models/llama/q4.hrry"
/// @endcode
[[nodiscard]] HURRAY_HTTP_EXPORT Result<std::string> s3_http_url(const std::string& url, const S3Location& where);

}  // namespace hurray::http
