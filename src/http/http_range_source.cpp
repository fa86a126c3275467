// SPDX-License-Identifier: Apache-2.0
// HttpRangeSource: range requests over libcurl's easy interface (blocking,
// one request per read, handles pooled for connection reuse). Every
// response header is untrusted: lines are bounded, numbers parsed with
// overflow checks, and the body is written to the caller only after the
// status, Content-Range, encoding and identity have been checked.
#include "hurray/http/http_range_source.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>

namespace hurray {

namespace {

constexpr size_t kMaxHeaderValue = 1024;  // ETag, Last-Modified, Content-Range, Content-Encoding
constexpr unsigned kMaxRetries = 10;
constexpr long kMaxRedirects = 20;

std::string dec(uint64_t v) { return std::to_string(v); }

/// `'s'`. Built by appending: GCC 12's -Wrestrict misfires on
/// "literal" + std::string.
std::string quoted(const std::string& s) {
    std::string r;
    r.reserve(s.size() + 2);
    r.push_back('\'');
    r.append(s).push_back('\'');
    return r;
}

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
        s.remove_suffix(1);
    }
    return s;
}

/// A decimal number of at most 19 digits (fits in 63 bits); nothing else.
std::optional<uint64_t> parse_u64(std::string_view s) {
    if (s.empty() || s.size() > 19) {
        return std::nullopt;
    }
    uint64_t v = 0;
    for (const char c : s) {
        if (c < '0' || c > '9') {
            return std::nullopt;
        }
        v = v * 10 + static_cast<uint64_t>(c - '0');  // < 10^19 < 2^64: no overflow
    }
    return v;
}

/// "bytes FIRST-LAST/TOTAL" (TOTAL may be "*", given as nothing).
struct ContentRange {
    uint64_t first = 0;
    uint64_t last = 0;
    std::optional<uint64_t> total;
};

std::optional<ContentRange> parse_content_range(std::string_view v) {
    if (v.substr(0, 6) != "bytes ") {
        return std::nullopt;
    }
    v.remove_prefix(6);
    const size_t dash = v.find('-');
    const size_t slash = v.find('/');
    if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash) {
        return std::nullopt;
    }
    const auto first = parse_u64(v.substr(0, dash));
    const auto last = parse_u64(v.substr(dash + 1, slash - dash - 1));
    if (!first || !last || *last < *first) {
        return std::nullopt;
    }
    ContentRange cr{*first, *last, std::nullopt};
    const std::string_view total = v.substr(slash + 1);
    if (total != "*") {
        cr.total = parse_u64(total);
        if (!cr.total || *cr.total <= *last) {
            return std::nullopt;
        }
    }
    return cr;
}

void global_init() {
    static std::once_flag once;
    std::call_once(once, [] { static_cast<void>(curl_global_init(CURL_GLOBAL_DEFAULT)); });
}

}  // namespace

/// What one response said (headers of the last response after redirects).
struct HttpRangeSource::Response {
    long status = 0;
    std::string etag;
    std::string last_modified;
    std::string content_range;
    std::string content_encoding;
    bool header_too_long = false;
    // Body handling.
    bool checked = false;      // headers checked at the first body byte
    std::optional<Error> refused;  // why the body was refused
    uint64_t received = 0;     // body bytes written to out
    bool too_long = false;     // the body went past out
    // What was asked and where it goes.
    HttpRangeSource* self = nullptr;
    uint64_t offset = 0;
    std::span<uint8_t> out;
    bool suffix = false;
    std::optional<ContentRange> range;  // parsed at the first body byte
};

std::string HttpRangeSource::display_url(const std::string& url) {
    std::string u = url;
    const size_t q = u.find_first_of("?#");
    if (q != std::string::npos) {
        u.erase(q);
    }
    const size_t scheme = u.find("://");
    const size_t host_start = scheme == std::string::npos ? 0 : scheme + 3;
    const size_t path = u.find('/', host_start);
    const size_t at = u.rfind('@', path == std::string::npos ? u.size() : path);
    if (at != std::string::npos && at >= host_start) {
        u.erase(host_start, at + 1 - host_start);
    }
    return u;
}

HttpRangeSource::HttpRangeSource(std::string url, HttpOptions options)
    : url_(std::move(url)), display_url_(display_url(url_)), options_(std::move(options)) {
    options_.max_retries = std::min(options_.max_retries, kMaxRetries);
    options_.max_redirects = std::clamp(options_.max_redirects, 0L, kMaxRedirects);  // -1 would be unlimited
}

HttpRangeSource::~HttpRangeSource() {
    for (void* h : pool_) {
        curl_easy_cleanup(static_cast<CURL*>(h));
    }
}

void* HttpRangeSource::take_handle() {
    {
        const std::lock_guard<std::mutex> lock(pool_mutex_);
        if (!pool_.empty()) {
            void* h = pool_.back();
            pool_.pop_back();
            return h;
        }
    }
    return curl_easy_init();
}

void HttpRangeSource::give_back(void* easy) {
    const std::lock_guard<std::mutex> lock(pool_mutex_);
    if (pool_.size() < 8) {
        pool_.push_back(easy);
        return;
    }
    curl_easy_cleanup(static_cast<CURL*>(easy));
}

Result<std::shared_ptr<HttpRangeSource>> HttpRangeSource::open(const std::string& url, HttpOptions options) {
    global_init();
    const std::string scheme = lower(url.substr(0, url.find("://")));
    if (url.find("://") == std::string::npos || (scheme != "http" && scheme != "https")) {
        return Error(ErrorCode::kInvalidArgument, quoted(display_url(url)) + ": not an http:// or https:// URL");
    }
    for (const std::string& h : options.headers) {
        if (h.find_first_of("\r\n") != std::string::npos || h.find(':') == std::string::npos) {
            return Error(ErrorCode::kInvalidArgument,
                         quoted(display_url(url)) + ": an extra header must be one 'Name: value' line");
        }
    }
    auto src = std::make_shared<HttpRangeSource>(url, std::move(options));
    const uint64_t want = std::max<uint64_t>(1, std::min<uint64_t>(src->options_.tail_bytes, uint64_t{1} << 30U));
    std::vector<uint8_t> tail(static_cast<size_t>(want));
    Response at_open;
    HURRAY_RETURN_IF_ERROR(src->fetch(0, tail, true, &at_open));
    // fetch checked: a Content-Range with a total, ending at total - 1.
    const ContentRange& cr = *at_open.range;
    src->size_ = *cr.total;
    src->tail_offset_ = cr.first;
    tail.resize(static_cast<size_t>(cr.last - cr.first + 1));  // <= want
    src->tail_ = std::move(tail);
    src->etag_ = at_open.etag;
    src->last_modified_ = at_open.last_modified;
    src->identity_ = !src->etag_.empty() ? src->etag_ : src->last_modified_;
    return src;
}

Status HttpRangeSource::read(uint64_t offset, std::span<uint8_t> out) {
    HURRAY_RETURN_IF_ERROR(check_range(offset, out.size()));
    if (out.empty()) {
        return Status::success();
    }
    if (offset >= tail_offset_ && offset - tail_offset_ + out.size() <= tail_.size()) {
        // SAFETY: the range [offset - tail_offset_, + out.size()) lies inside
        // tail_ (checked just above, no overflow: both terms <= size_).
        std::memcpy(out.data(), tail_.data() + (offset - tail_offset_), out.size());
        return Status::success();
    }
    return fetch(offset, out, false, nullptr);
}

/// libcurl's header callback: one header line per call (status lines too).
size_t HttpRangeSource::on_header(char* data, size_t size, size_t count, void* user) {
    auto* resp = static_cast<HttpRangeSource::Response*>(user);  // NOLINT
    const size_t n = size * count;  // libcurl guarantees size == 1
    // SAFETY: libcurl passes n readable bytes at data; not NUL-terminated.
    const std::string_view line = trim(std::string_view(data, n));
    if (line.substr(0, 5) == "HTTP/") {
        // A new response (after a redirect or a 100 Continue): start over.
        resp->status = 0;
        resp->etag.clear();
        resp->last_modified.clear();
        resp->content_range.clear();
        resp->content_encoding.clear();
        resp->header_too_long = false;
        const size_t sp = line.find(' ');
        if (sp != std::string_view::npos && line.size() >= sp + 4) {
            const auto code = parse_u64(line.substr(sp + 1, 3));
            if (code) {
                resp->status = static_cast<long>(*code);
            }
        }
        return n;
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
        return n;
    }
    const std::string name = lower(trim(line.substr(0, colon)));
    const std::string_view value = trim(line.substr(colon + 1));
    std::string* field = nullptr;
    if (name == "etag") {
        field = &resp->etag;
    } else if (name == "last-modified") {
        field = &resp->last_modified;
    } else if (name == "content-range") {
        field = &resp->content_range;
    } else if (name == "content-encoding") {
        field = &resp->content_encoding;
    }
    if (field != nullptr) {
        if (value.size() > kMaxHeaderValue) {
            resp->header_too_long = true;
            return n;
        }
        field->assign(value);
    }
    return n;
}

Status HttpRangeSource::attempt(void* easy_v, uint64_t offset, std::span<uint8_t> out, bool suffix,
                                Response& resp) {
    auto* easy = static_cast<CURL*>(easy_v);
    curl_easy_reset(easy);
    resp = Response{};
    resp.self = this;
    resp.offset = offset;
    resp.out = out;
    resp.suffix = suffix;

    const std::string range = suffix ? "bytes=-" + dec(out.size())
                                     : "bytes=" + dec(offset) + "-" + dec(offset + out.size() - 1);
    curl_slist* headers = nullptr;
    const auto add = [&headers](const std::string& h) {
        curl_slist* next = curl_slist_append(headers, h.c_str());
        if (next != nullptr) {
            headers = next;
        }
        return next != nullptr;
    };
    bool added = add("Range: " + range) && add("Accept-Encoding: identity");
    if (!suffix && !etag_.empty() && etag_.substr(0, 2) != "W/") {
        added = added && add("If-Match: " + etag_);
    }
    for (const std::string& h : options_.headers) {
        added = added && add(h);
    }
    const auto secs = [](std::chrono::milliseconds ms) {
        return static_cast<long>(std::max<int64_t>(1, (ms.count() + 999) / 1000));
    };
    // NOLINTBEGIN(cppcoreguidelines-pro-type-vararg): libcurl's option setter is variadic
    curl_easy_setopt(easy, CURLOPT_URL, url_.c_str());
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(easy, CURLOPT_MAXREDIRS, options_.max_redirects);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout.count()));
    curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, secs(options_.idle_timeout));
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &HttpRangeSource::on_header);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, &resp);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &HttpRangeSource::on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &resp);
    // NOLINTEND(cppcoreguidelines-pro-type-vararg)
    std::string where = "GET ";
    where.append(display_url_).append(" bytes ");
    if (suffix) {
        where.append("(last ").append(dec(out.size())).append(")");
    } else {
        where.append("[").append(dec(offset)).append(", ").append(dec(offset + out.size())).append(")");
    }
    if (!added) {
        curl_slist_free_all(headers);
        return Error(ErrorCode::kOutOfMemory, where + ": out of memory building the request");
    }
    const CURLcode rc = curl_easy_perform(easy);
    curl_slist_free_all(headers);
    count_request(resp.received);
    if (resp.refused) {
        return Error(resp.refused->code(), where + ": " + resp.refused->message(), offset);
    }
    if (rc != CURLE_OK) {
        return Error(ErrorCode::kIoError, where + ": " + curl_easy_strerror(rc), offset);
    }
    if (!resp.checked) {
        // No body at all: check the headers now (a 206 with an empty body is
        // short; anything else is refused for its status).
        if (auto s = on_body(nullptr, 1, 0, &resp); s != 0 || resp.refused) {
            return Error(resp.refused ? resp.refused->code() : ErrorCode::kIoError,
                         where + ": " + (resp.refused ? resp.refused->message() : std::string("no body")),
                         offset);
        }
    }
    const uint64_t expected = resp.range ? resp.range->last - resp.range->first + 1 : out.size();
    if (resp.received != expected) {
        return Error(ErrorCode::kIoError,
                     where + ": the body ended after " + dec(resp.received) + " of " + dec(expected) + " bytes",
                     offset + resp.received);
    }
    return Status::success();
}

Status HttpRangeSource::fetch(uint64_t offset, std::span<uint8_t> out, bool suffix, Response* at_open) {
    void* easy = take_handle();
    if (easy == nullptr) {
        return Error(ErrorCode::kOutOfMemory, "GET " + display_url_ + ": curl_easy_init failed");
    }
    Response resp;
    Status last = Status::success();
    std::chrono::milliseconds wait = options_.retry_backoff;
    for (unsigned attempt_no = 0; attempt_no <= options_.max_retries; ++attempt_no) {
        if (attempt_no > 0) {
            std::this_thread::sleep_for(wait);
            wait *= 2;
        }
        last = attempt(easy, offset, out, suffix, resp);
        if (last.ok()) {
            break;
        }
        // Worth repeating: a 5xx, or a transfer that failed or ended early
        // (connection refused or reset, timeout); not a response refused
        // for what it said.
        const bool retry = resp.refused ? (resp.status >= 500 && resp.status <= 599) : true;
        if (!retry) {
            break;
        }
        if (attempt_no == options_.max_retries) {
            last = Error(last.error().code(), last.error().message() + " (after " + dec(attempt_no + 1) + " attempts)",
                         last.error().offset());
        }
    }
    give_back(easy);
    if (last.ok() && at_open != nullptr) {
        *at_open = std::move(resp);
    }
    return last;
}

/// libcurl's write callback: checks the headers at the first body byte,
/// then copies into the caller's buffer, refusing any byte past the range.
/// Returning less than given aborts the transfer.
size_t HttpRangeSource::on_body(char* data, size_t size, size_t count, void* user) {
    auto* resp = static_cast<HttpRangeSource::Response*>(user);  // NOLINT
    const size_t n = size * count;
    if (!resp->checked) {
        resp->checked = true;
        const auto refuse = [resp](ErrorCode code, std::string msg) {
            resp->refused = Error(code, std::move(msg));
            return size_t{0};
        };
        if (resp->status == 200) {
            return refuse(ErrorCode::kIoError,
                          "the server ignored the Range request (200 OK with the whole body): "
                          "it does not support range requests; nothing was read");
        }
        if (resp->status == 412) {
            return refuse(ErrorCode::kIoError,
                          "the file changed on the server since it was opened (412 Precondition Failed for "
                          "If-Match " + resp->self->etag_ + ")");
        }
        if (resp->status != 206) {
            return refuse(ErrorCode::kIoError, "HTTP status " + dec(static_cast<uint64_t>(std::max(0L, resp->status))) +
                                                   ", expected 206 Partial Content");
        }
        if (resp->header_too_long) {
            return refuse(ErrorCode::kIoError, "a response header is longer than " + dec(kMaxHeaderValue) + " bytes");
        }
        if (!resp->content_encoding.empty() && lower(resp->content_encoding) != "identity") {
            return refuse(ErrorCode::kIoError,
                          "the body is encoded (Content-Encoding: " + resp->content_encoding + "), not the file's bytes");
        }
        const auto cr = parse_content_range(resp->content_range);
        if (!cr) {
            return refuse(ErrorCode::kIoError, "206 without a valid Content-Range (got '" + resp->content_range + "')");
        }
        const uint64_t len = resp->out.size();
        if (resp->suffix) {
            if (!cr->total || cr->last + 1 != *cr->total || cr->last - cr->first + 1 != std::min(len, *cr->total)) {
                return refuse(ErrorCode::kIoError,
                              "Content-Range '" + resp->content_range + "' is not the last " + dec(len) + " bytes");
            }
        } else {
            const uint64_t last = resp->offset + len - 1;
            if (cr->first != resp->offset || cr->last != last ||
                (cr->total && *cr->total != resp->self->size_)) {
                return refuse(ErrorCode::kIoError, "Content-Range '" + resp->content_range + "' does not match bytes " +
                                                       dec(resp->offset) + "-" + dec(last) + "/" +
                                                       dec(resp->self->size_));
            }
            const HttpRangeSource& s = *resp->self;
            if ((!s.etag_.empty() && resp->etag != s.etag_) ||
                (s.etag_.empty() && !s.last_modified_.empty() && resp->last_modified != s.last_modified_)) {
                return refuse(ErrorCode::kIoError,
                              "the file changed on the server since it was opened (identity " + s.identity_ +
                                  " at open, now " + (resp->etag.empty() ? resp->last_modified : resp->etag) + ")");
            }
        }
        resp->range = cr;
    }
    if (n == 0) {
        return 0;
    }
    // Suffix at open: the body is the last min(len, total) bytes.
    const uint64_t room = resp->range ? resp->range->last - resp->range->first + 1 : resp->out.size();
    if (resp->received > room || n > room - resp->received) {
        resp->too_long = true;
        resp->refused = Error(ErrorCode::kIoError, "the body is longer than the Content-Range");
        return 0;
    }
    // SAFETY: received + n <= room <= out.size() (checked above), so the
    // destination lies inside out; libcurl passes n readable bytes at data.
    std::memcpy(resp->out.data() + resp->received, data, n);
    resp->received += n;
    return n;
}

}  // namespace hurray
