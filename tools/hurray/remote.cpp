#include "hurray/remote.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "hurray/interrupt.hpp"
#include "hurray/io/file_format.hpp"

#ifdef HURRAY_CLI_HAS_HTTP
#include "hurray/http/http_range_source.hpp"
#endif

namespace hurray::cli {
namespace {

bool starts_with_nocase(std::string_view s, std::string_view prefix) noexcept {
    if (s.size() < prefix.size()) {
        return false;
    }
    for (size_t k = 0; k < prefix.size(); ++k) {
        const char a = s[k] >= 'A' && s[k] <= 'Z' ? static_cast<char>(s[k] - 'A' + 'a') : s[k];
        if (a != prefix[k]) {
            return false;
        }
    }
    return true;
}

// RFC 9110 token characters (a header name).
bool is_token_char(char c) noexcept {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
        return true;
    }
    return std::strchr("!#$%&'*+-.^_`|~", c) != nullptr && c != '\0';
}

/// Checks one "Name: value" line; the error names the header (never its value).
Status check_header(const std::string& line, const std::string& where) {
    const auto colon = line.find(':');
    const std::string name = colon == std::string::npos ? std::string() : line.substr(0, colon);
    bool ok = !name.empty() && std::all_of(name.begin(), name.end(), is_token_char);
    const bool control = std::any_of(line.begin(), line.end(), [](char c) {
        return (static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f;
    });
    if (!ok || control) {
        return Error(ErrorCode::kInvalidArgument,
                     where + (ok ? " '" + name + "' holds a control character"
                                 : " is not 'Name: value' (a header name is letters, digits and !#$%&'*+-.^_`|~)"));
    }
    return Status::success();
}

}  // namespace

bool is_url(std::string_view path) noexcept {
    return starts_with_nocase(path, "http://") || starts_with_nocase(path, "https://") ||
           starts_with_nocase(path, "s3://");
}

std::string display_path(const std::string& path) {
    if (!is_url(path)) {
        return path;
    }
    const size_t scheme_end = path.find("://") + 3;
    std::string s = path.substr(0, path.find_first_of("?#", scheme_end));
    const size_t host_end = s.find('/', scheme_end);
    const size_t at = s.rfind('@', host_end == std::string::npos ? std::string::npos : host_end);
    if (at != std::string::npos && at >= scheme_end) {
        s.erase(scheme_end, at + 1 - scheme_end);
    }
    return s;
}

void add_remote_options(CLI::App* cmd, RemoteOptions& options) {
    cmd->add_option("--header", options.headers,
                    "extra HTTP request header 'Name: value' for a URL input (repeatable; e.g. "
                    "'Authorization: Bearer ...'); also read, one per line, from $HURRAY_HTTP_HEADERS. "
                    "Values are never printed. An s3://BUCKET/KEY URL is read at $AWS_ENDPOINT_URL_S3 or "
                    "$AWS_ENDPOINT_URL (path-style; $HURRAY_S3_ADDRESSING=path|virtual), else at AWS in "
                    "$AWS_REGION, and signed (AWS SigV4) with $AWS_ACCESS_KEY_ID, $AWS_SECRET_ACCESS_KEY and "
                    "$AWS_SESSION_TOKEN when they are set")
        ->allow_extra_args(false);
    cmd->add_option("--http-timeout", options.timeout_s,
                    "seconds without a byte received (or to connect) before a request to a URL is retried")
        ->check(CLI::Range(1.0, 3600.0))
        ->capture_default_str();
    cmd->add_option("--http-retries", options.retries, "retries of a failed request to a URL (0 .. 10)")
        ->check(CLI::Range(0U, 10U))
        ->capture_default_str();
    cmd->add_option("--http-deadline", options.deadline_s,
                    "seconds one request to a URL may take, its retries included (0: no limit); ends a server "
                    "that trickles bytes")
        ->check(CLI::Range(0.0, 86400.0))
        ->capture_default_str();

}

Result<std::vector<std::string>> request_headers(const RemoteOptions& options) {
    std::vector<std::string> out;
    if (const char* env = std::getenv(kHeadersEnv); env != nullptr) {
        std::string all(env);
        size_t line_no = 0;
        for (size_t at = 0; at <= all.size();) {
            size_t end = all.find('\n', at);
            if (end == std::string::npos) {
                end = all.size();
            }
            std::string line = all.substr(at, end - at);
            at = end + 1;
            ++line_no;
            if (!line.empty() && line.back() == '\r') {
                line.pop_back();
            }
            if (line.find_first_not_of(" \t") == std::string::npos) {
                continue;
            }
            HURRAY_RETURN_IF_ERROR(
                check_header(line, std::string(kHeadersEnv) + ": line " + std::to_string(line_no)));
            out.push_back(std::move(line));
        }
    }
    for (size_t k = 0; k < options.headers.size(); ++k) {
        HURRAY_RETURN_IF_ERROR(check_header(options.headers[k], "--header #" + std::to_string(k + 1)));
        out.push_back(options.headers[k]);
    }
    return out;
}

Result<std::shared_ptr<RangeSource>> open_url(const std::string& url, const RemoteOptions& options) {
#ifdef HURRAY_CLI_HAS_HTTP
    HURRAY_ASSIGN_OR_RETURN(std::vector<std::string> headers, request_headers(options));
    HttpOptions http;
    http.headers = std::move(headers);
    const auto ms = std::chrono::milliseconds(static_cast<int64_t>(std::ceil(options.timeout_s * 1000.0)));
    http.idle_timeout = ms;
    http.connect_timeout = std::min(ms, std::chrono::milliseconds(10000));
    http.max_retries = std::min(options.retries, 10U);
    if (options.deadline_s > 0) {
        http.deadline = std::chrono::milliseconds(static_cast<int64_t>(std::ceil(options.deadline_s * 1000.0)));
    }
    // Ctrl-C / SIGTERM under an InterruptGuard (get, convert) stop a transfer at once.
    http.progress = [](uint64_t) { return interrupted_by() == 0; };
    auto src = HttpRangeSource::open(url, http);
    if (!src) {
        return src.error();
    }
    return std::shared_ptr<RangeSource>(std::move(*src));
#else
    (void)options;
    return Error(ErrorCode::kUnsupported, display_path(url) +
                                              ": this build of hurray has no HTTP support (hurray::http, "
                                              "libcurl): URLs cannot be read; download the file first");
#endif
}

RangeByteSource::RangeByteSource(std::shared_ptr<RangeSource> source, uint64_t from, size_t chunk)
    : source_(std::move(source)), pos_(from), chunk_(std::max<size_t>(chunk, 1)) {}

Result<size_t> RangeByteSource::read_some(std::span<uint8_t> out) {
    if (out.empty()) {
        return size_t{0};
    }
    if (at_ == buffer_.size()) {  // buffer used up: the next chunk starts after it
        pos_ += buffer_.size();
        buffer_.clear();
        at_ = 0;
        const uint64_t size = source_->size();
        if (pos_ >= size) {
            return size_t{0};
        }
        buffer_.resize(static_cast<size_t>(std::min<uint64_t>(chunk_, size - pos_)));
        if (auto s = source_->read(pos_, buffer_); !s) {
            buffer_.clear();
            return s.error();
        }
    }
    const size_t n = std::min(out.size(), buffer_.size() - at_);
    std::copy_n(buffer_.begin() + static_cast<std::ptrdiff_t>(at_), n, out.begin());
    at_ += n;
    return n;
}

Result<uint64_t> RangeByteSource::skip(uint64_t n) {
    const uint64_t buffered = buffer_.size() - at_;
    if (n <= buffered) {
        at_ += static_cast<size_t>(n);
        return n;
    }
    pos_ += buffer_.size();
    buffer_.clear();
    at_ = 0;
    const uint64_t size = source_->size();
    const uint64_t rest = pos_ >= size ? 0 : std::min(n - buffered, size - pos_);
    pos_ += rest;
    return buffered + rest;
}

Result<std::vector<uint64_t>> buffer_offsets(const FileReader& file, size_t i) {
    HURRAY_ASSIGN_OR_RETURN(const TensorDescriptor* d, file.descriptor(i));
    const IndexEntry& e = file.entry(i);
    std::vector<uint64_t> out;
    out.reserve(d->buffers.size());
    uint64_t pos = e.data_offset;
    for (size_t k = 0; k < d->buffers.size(); ++k) {
        if (k > 0) {
            HURRAY_ASSIGN_OR_RETURN(pos, align_up(pos, file.header().data_buffer_alignment));
        }
        out.push_back(pos);
        pos += d->buffers[k].byte_size;  // the reader checked that they end at data_offset + data_length
    }
    return out;
}

Status copy_tensor_data(RangeSource& source, const FileReader& file, size_t i, size_t piece,
                        std::vector<uint8_t>& scratch,
                        const std::function<Status(std::span<const uint8_t>)>& sink) {
    HURRAY_ASSIGN_OR_RETURN(const TensorDescriptor* d, file.descriptor(i));
    HURRAY_ASSIGN_OR_RETURN(std::vector<uint64_t> starts, buffer_offsets(file, i));
    for (size_t k = 0; k < starts.size(); ++k) {
        const uint64_t size = d->buffers[k].byte_size;
        for (uint64_t at = 0; at < size;) {
            const auto n = static_cast<size_t>(std::min<uint64_t>(piece, size - at));
            scratch.resize(n);
            HURRAY_RETURN_IF_ERROR(source.read(starts[k] + at, scratch));
            HURRAY_RETURN_IF_ERROR(sink(scratch));
            at += n;
        }
    }
    return Status::success();
}

Result<std::vector<std::vector<uint8_t>>> read_tensor_buffers(RangeSource& source, const FileReader& file,
                                                              size_t i) {
    HURRAY_ASSIGN_OR_RETURN(const TensorDescriptor* d, file.descriptor(i));
    HURRAY_ASSIGN_OR_RETURN(std::vector<uint64_t> starts, buffer_offsets(file, i));
    std::vector<std::vector<uint8_t>> out(starts.size());
    for (size_t k = 0; k < starts.size(); ++k) {
        out[k].resize(static_cast<size_t>(d->buffers[k].byte_size));
        HURRAY_RETURN_IF_ERROR(source.read(starts[k], out[k]));
    }
    return out;
}

}  // namespace hurray::cli
