// SPDX-License-Identifier: Apache-2.0
#include "hurray/http/s3.hpp"

#include "hurray/core/text.hpp"

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace hurray::http {
namespace {

/// The value of environment variable `name`, empty when unset.
std::string env(const char* name) {
    const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read once, at open
    return v == nullptr ? std::string() : std::string(v);
}

std::string region_of_environment() {
    std::string r = env("AWS_REGION");
    if (r.empty()) {
        r = env("AWS_DEFAULT_REGION");
    }
    return r.empty() ? std::string("us-east-1") : r;
}

bool ascii_lower_or_digit(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

/// S3's rules for a bucket name: 3-63 of a-z 0-9 . -, starting and ending
/// with a letter or digit.
bool valid_bucket(std::string_view b) {
    if (b.size() < 3 || b.size() > 63 || !ascii_lower_or_digit(b.front()) || !ascii_lower_or_digit(b.back())) {
        return false;
    }
    return std::all_of(b.begin(), b.end(), [](char c) { return ascii_lower_or_digit(c) || c == '.' || c == '-'; });
}

/// The key as S3 signs a path: every byte but A-Z a-z 0-9 - _ . ~ / as %XX.
std::string encode_key(std::string_view key) {
    std::string out;
    out.reserve(key.size());
    for (const char ch : key) {
        const auto c = static_cast<unsigned char>(ch);
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
            c == '.' || c == '~' || c == '/') {
            out.push_back(ch);
        } else {
            out.push_back('%');
            out += hex_digits(c, 2, /*upper=*/true);
        }
    }
    return out;
}

Error invalid(const std::string& url, const std::string& why) {
    std::string m = "'";
    m.append(url).append("': ").append(why);
    return {ErrorCode::kInvalidArgument, m};
}

}  // namespace

std::optional<AwsCredentials> AwsCredentials::from_environment() {
    AwsCredentials c;
    c.access_key_id = env("AWS_ACCESS_KEY_ID");
    c.secret_access_key = env("AWS_SECRET_ACCESS_KEY");
    if (c.access_key_id.empty() || c.secret_access_key.empty()) {
        return std::nullopt;
    }
    c.session_token = env("AWS_SESSION_TOKEN");
    c.region = region_of_environment();
    return c;
}

Result<S3Location> S3Location::from_environment() {
    S3Location at;
    at.endpoint = env("AWS_ENDPOINT_URL_S3");
    if (at.endpoint.empty()) {
        at.endpoint = env("AWS_ENDPOINT_URL");
    }
    at.region = region_of_environment();
    const std::string style = env("HURRAY_S3_ADDRESSING");
    if (style == "path") {
        at.addressing = S3Addressing::kPath;
    } else if (style == "virtual") {
        at.addressing = S3Addressing::kVirtualHost;
    } else if (!style.empty() && style != "auto") {
        return Error(ErrorCode::kInvalidArgument,
                     "HURRAY_S3_ADDRESSING='" + style + "': expected 'path', 'virtual' or 'auto'");
    }
    return at;
}

bool is_s3_url(const std::string& url) noexcept {
    return url.size() >= 5 && (url[0] == 's' || url[0] == 'S') && (url[1] == '3') && url.compare(2, 3, "://") == 0;
}

Result<std::string> s3_http_url(const std::string& url, const S3Location& where) {
    if (!is_s3_url(url)) {
        return invalid(url, "not an s3:// URL");
    }
    const std::string_view rest = std::string_view(url).substr(5);
    if (rest.find_first_of("?#") != std::string_view::npos) {
        return invalid(url, "an s3:// URL takes no query string or fragment (presigned URLs are https://)");
    }
    const size_t slash = rest.find('/');
    const std::string_view bucket = rest.substr(0, slash);
    if (!valid_bucket(bucket)) {
        return invalid(url, "the bucket name must be 3-63 of a-z, 0-9, '.', '-', starting and ending with a "
                            "letter or digit");
    }
    const std::string_view key = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
    if (key.empty()) {
        return invalid(url, "no object key after the bucket (s3://BUCKET/KEY)");
    }
    for (const char c : where.region) {
        if (!ascii_lower_or_digit(c) && c != '-') {
            return invalid(url, "the region '" + where.region + "' is not letters, digits and '-'");
        }
    }
    std::string scheme = "https";
    std::string host = "s3." + where.region + ".amazonaws.com";
    std::string base_path;
    const bool aws = where.endpoint.empty();
    if (!aws) {
        const size_t sep = where.endpoint.find("://");
        if (sep == std::string::npos) {
            return invalid(url, "the endpoint '" + where.endpoint + "' is not an http:// or https:// URL");
        }
        scheme = where.endpoint.substr(0, sep);
        for (char& c : scheme) {
            c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        }
        if (scheme != "http" && scheme != "https") {
            return invalid(url, "the endpoint '" + where.endpoint + "' is not an http:// or https:// URL");
        }
        std::string_view h = std::string_view(where.endpoint).substr(sep + 3);
        const size_t p = h.find('/');
        if (p != std::string_view::npos) {
            base_path = std::string(h.substr(p));
            h = h.substr(0, p);
            while (!base_path.empty() && base_path.back() == '/') {
                base_path.pop_back();
            }
        }
        if (h.empty() || h.find_first_of("?#@ ") != std::string_view::npos) {
            return invalid(url, "the endpoint '" + where.endpoint + "' has no valid host");
        }
        host = std::string(h);
    }
    const bool path_style = where.addressing == S3Addressing::kPath ||
                            (where.addressing == S3Addressing::kAuto && !aws) ||
                            // A dotted bucket on AWS over https: the wildcard
                            // certificate does not cover it; path-style does.
                            (where.addressing == S3Addressing::kAuto && bucket.find('.') != std::string_view::npos);
    if (!path_style && scheme == "https" && bucket.find('.') != std::string_view::npos) {
        return invalid(url, "a bucket name with dots cannot be addressed as a virtual host over https "
                            "(its certificate does not match): use path-style addressing");
    }
    std::string out = scheme;
    out.append("://");
    if (path_style) {
        out.append(host).append(base_path).append("/").append(bucket);
    } else {
        out.append(bucket).append(".").append(host).append(base_path);
    }
    out.append("/").append(encode_key(key));
    return out;
}

}  // namespace hurray::http
