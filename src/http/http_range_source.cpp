// SPDX-License-Identifier: Apache-2.0
// HttpRangeSource: range requests over libcurl: the easy interface for one
// request (blocking, handles pooled for connection reuse), the multi
// interface for the parallel parts of a large read and for the
// single-range fallback of read_ranges; multi-range requests for
// read_ranges, their multipart/byteranges answers parsed as they arrive.
// Every response header is untrusted: lines are bounded, numbers parsed
// with overflow checks, and the body is written to the caller only after
// the status, Content-Range (each part's, for multipart), encoding and
// identity have been checked.
#include "hurray/http/http_range_source.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>

namespace hurray::http {

namespace {

/// Bytes of an error status's body kept for the message (an S3 error's XML).
constexpr size_t kMaxErrorBody = 4096;
constexpr size_t kMaxHeaderValue = 1024;  // ETag, Last-Modified, Content-Range, Content-Encoding
constexpr unsigned kMaxRetries = 10;
constexpr long kMaxRedirects = 20;
constexpr unsigned kMaxParallel = 16;
/// A 200 to a multi-range request: the most bytes of its body read for a
/// first range starting at byte 0 (a file header) before it is stopped.
constexpr uint64_t kMaxPrefix = uint64_t{64} * 1024;
/// libcurl's buffer (CURLOPT_BUFFERSIZE, its smallest) for a multi-range
/// request whose first range starts at byte 0.
constexpr long kFirstRangeBuffer = 1024;
/// libcurl's receive buffer for a range of at least kLargeReadBytes (its
/// default is 16 KiB; the largest it takes, 10 MiB (CURL_MAX_READ_SIZE)).
constexpr long kLargeReadBuffer = 512L * 1024;
constexpr uint64_t kLargeReadBytes = uint64_t{1} << 20;
/// A single-part answer to a multi-range request that coalesces several
/// ranges is read whole unless the bytes between them pass both this and
/// the bytes asked; then only its first range is read and the transfer
/// stopped (a header at byte 0 coalesced with sections at the end of a
/// large file would be the whole file).
constexpr uint64_t kMaxCoalescedWaste = uint64_t{1} << 20U;
/// CURLE_TOO_LARGE (libcurl 8.5.0: a buffer grew past its limit; before,
/// libcurl said CURLE_OUT_OF_MEMORY), spelled as a number: older headers
/// lack it, and the library at run time may be newer than the headers.
constexpr int kCurleTooLarge = 100;
/// Bytes counted for what libcurl adds to a request besides the URL and our
/// headers: "GET ", " HTTP/1.1", "Host: ", "Accept: */*", line ends.
constexpr size_t kRequestSlack = 1024;

std::string dec(uint64_t v) { return std::to_string(v); }

/// SHA-256 of no bytes: the payload hash of a GET, as SigV4 signs it.
constexpr const char* kEmptySha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

using Clock = std::chrono::steady_clock;

/// The deadline of the public call (open, read, read_ranges) running on this
/// thread: libcurl's callbacks and the retry loops run on the caller's
/// thread, so each request started during the call inherits it.
thread_local Clock::time_point t_call_deadline = Clock::time_point::max();

/// Sets this thread's call deadline to now + `limit` (none when 0) for its
/// scope; a nested call keeps the earlier deadline.
class CallDeadline {
public:
    explicit CallDeadline(std::chrono::milliseconds limit) : previous_(t_call_deadline) {
        if (limit.count() > 0) {
            t_call_deadline = std::min(t_call_deadline, Clock::now() + limit);
        }
    }
    CallDeadline(const CallDeadline&) = delete;
    CallDeadline& operator=(const CallDeadline&) = delete;
    CallDeadline(CallDeadline&&) = delete;
    CallDeadline& operator=(CallDeadline&&) = delete;
    ~CallDeadline() { t_call_deadline = previous_; }

private:
    Clock::time_point previous_;
};

/// Whole seconds of `ms`, rounded up (for messages).
std::string seconds(std::chrono::milliseconds ms) {
    return std::to_string((ms.count() + 999) / 1000) + " s";
}

/// Credentials libcurl can sign with: a key and a secret, and a region and
/// service of letters, digits and '-' (they go in "aws:amz:REGION:SERVICE").
/// The messages name the field, never its value (but the region's).
Status check_credentials(const AwsCredentials& aws, const std::string& url) {
    const auto fail = [&url](const std::string& why) {
        std::string m = "'";
        m.append(url).append("': AWS credentials: ").append(why);
        return Status(Error(ErrorCode::kInvalidArgument, m));
    };
    if (aws.access_key_id.empty() || aws.secret_access_key.empty()) {
        return fail("the access key ID and the secret access key must both be set");
    }
    const auto one_line = [](const std::string& v) { return v.find_first_of("\r\n") == std::string::npos; };
    if (!one_line(aws.access_key_id) || !one_line(aws.secret_access_key) || !one_line(aws.session_token)) {
        return fail("a key, secret or session token holds a line break");
    }
    const auto word = [](const std::string& v) {
        return !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
        });
    };
    if (!word(aws.region)) {
        return fail("the region '" + aws.region + "' is not letters, digits and '-'");
    }
    if (!word(aws.service)) {
        return fail("the service is not letters, digits and '-'");
    }
    return Status::success();
}

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

/// The most bytes libcurl builds into one HTTP request, request line and
/// headers (its internal request buffer): 1 MiB from 7.76.0, 128 KiB in
/// 7.71-7.75. A larger request fails before a byte is sent, with
/// CURLE_OUT_OF_MEMORY ("Out of memory"), or CURLE_TOO_LARGE from 8.5.0.
size_t curl_request_limit() {
    const curl_version_info_data* v = curl_version_info(CURLVERSION_NOW);
    if (v != nullptr && v->version_num < 0x074c00) {
        return size_t{128} * 1024;
    }
    return size_t{1024} * 1024;
}

/// An upper estimate of a request's bytes other than its `Range:` line: the
/// request line and Host (the URL, which libcurl may percent-encode),
/// Accept-Encoding, If-Match, the extra headers, and what libcurl adds.
size_t request_overhead(const std::string& url, const std::vector<std::string>& headers, const std::string& etag) {
    size_t n = kRequestSlack + 3 * url.size() + etag.size() + 64;  // 64: "Accept-Encoding: identity", "If-Match: "
    for (const std::string& h : headers) {
        n += h.size() + 2;
    }
    return n;
}

/// Whether a transfer that ended with `rc` failed as libcurl fails a request
/// past its limit: out of memory or too large, before any response (no
/// status line, no body byte).
bool past_curl_limit(int rc, long status, bool checked) {
    return (rc == CURLE_OUT_OF_MEMORY || rc == kCurleTooLarge) && status == 0 && !checked;
}

/// What past_curl_limit means, for a request of at most about
/// `request_bytes` bytes of request line and headers.
std::string past_limit_message(int rc, size_t request_bytes) {
    std::string m = "libcurl gave up before any response (";
    m.append(curl_easy_strerror(static_cast<CURLcode>(rc))).append("): ");
    const size_t limit = curl_request_limit();
    if (request_bytes >= limit) {
        m.append("the request line and headers, about ")
            .append(dec(request_bytes))
            .append(" bytes, are past libcurl's limit of ")
            .append(dec(limit))
            .append(" bytes on a request (the extra headers or the URL are too large)");
    } else {
        m.append("the request, at most about ")
            .append(dec(request_bytes))
            .append(" bytes of request line and headers, is within libcurl's limit of ")
            .append(dec(limit))
            .append(" bytes on a request (a proxy's additions, or memory exhausted?)");
    }
    return m;
}

void global_init() {
    static std::once_flag once;
    std::call_once(once, [] { static_cast<void>(curl_global_init(CURL_GLOBAL_DEFAULT)); });
}

}  // namespace

/// Everything HttpRangeSource holds: the options, what the open learned,
/// and libcurl's handles, which the public header does not name.
// Hidden although HttpRangeSource is exported (a nested class takes the enclosing
// one's visibility).
struct HURRAY_HTTP_NO_EXPORT HttpRangeSource::Impl {
    /// State for `source` (which `check_range` and `count_request` reach).
    Impl(HttpRangeSource* source, std::string url, HttpOptions options);
    /// Frees the pooled handles.
    ~Impl();
    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;
    Impl(Impl&&) = delete;
    Impl& operator=(Impl&&) = delete;

    /// HttpRangeSource::read and read_ranges.
    Status read(uint64_t offset, std::span<uint8_t> out);
    Status read_ranges(std::span<const ByteRange> ranges);

    struct Response;
    struct Multipart;
    /// One range of a request made by `read_ranges`: bytes [first, last]
    /// holding the sorted pieces [piece_begin, piece_end).
    struct Wire {
        uint64_t first = 0;
        uint64_t last = 0;
        size_t piece_begin = 0;
        size_t piece_end = 0;
    };
    /// What one multi-range request came to.
    enum class MultiOutcome { kDone, kTooLarge, kNoMulti, kPartial, kError };
    /// One request of `fetch_parallel`: the single range `range` when
    /// `wires` is empty, else a multi-range request for `wires`, which gets
    /// its outcome and one covered flag per wire.
    struct Job {
        ByteRange range;
        std::span<const Wire> wires;
        MultiOutcome outcome = MultiOutcome::kError;
        std::vector<uint8_t> covered;
    };
    /// Runs `jobs` at once (`parallel` connections, libcurl multi
    /// interface), each retried on its own; `pieces` are the buffers of the
    /// multi-range jobs' wires.
    Status fetch_parallel(std::span<Job> jobs, std::span<const ByteRange> pieces);
    /// One multi-range request for `wires` (retried whole); `covered` gets
    /// one flag per wire.
    MultiOutcome fetch_multi(std::span<const Wire> wires, std::span<const ByteRange> pieces,
                             std::vector<uint8_t>& covered, Status& error);
    /// The checks after a multi-range transfer ended with `rc`: the outcome,
    /// and for kError the error and whether it is worth repeating.
    MultiOutcome judge_multi(int rc, Response& resp, Multipart& mp, const std::string& where,
                             std::vector<uint8_t>& covered, Status& error, bool& retry) const;
    /// "GET <url> N ranges in bytes [a, b)".
    [[nodiscard]] std::string multi_where(std::span<const Wire> wires) const;
    /// Sets up `easy` for one request; `headers` gets the list to free.
    Status setup(void* easy, Response& resp, const std::string& range, void** headers, const std::string& where);
    /// The checks after a single-range transfer ended with `rc`.
    Status conclude(int rc, Response& resp, const std::string& where, uint64_t offset) const;
    /// Copies the part of [offset, offset + out.size()) that the bytes read at
    /// open hold, when the range ends inside them, into the end of `out`;
    /// returns how many of its first bytes are left to fetch (out.size()
    /// when none were held).
    [[nodiscard]] size_t held_from_tail(uint64_t offset, std::span<uint8_t> out) const noexcept;
    /// "GET <url> bytes [a, b)".
    [[nodiscard]] std::string where(uint64_t offset, uint64_t length) const;
    void* take_multi();
    void give_back_multi(void* multi);
    /// One range request with retries; `suffix` asks for the last
    /// out.size() bytes (at open, size unknown).
    Status fetch(uint64_t offset, std::span<uint8_t> out, bool suffix, Response* at_open);
    /// One attempt.
    Status attempt(void* easy, uint64_t offset, std::span<uint8_t> out, bool suffix, Response& resp);
    /// libcurl callbacks: one header line; body bytes (checked at the first).
    static size_t on_header(char* data, size_t size, size_t count, void* user);
    static size_t on_body(char* data, size_t size, size_t count, void* user);
    /// libcurl's progress callback: the idle timeout, the deadline and the
    /// caller's progress callback; nonzero aborts the transfer.
    static int on_progress(void* user, int64_t dltotal, int64_t dlnow, int64_t ultotal, int64_t ulnow);
    /// The error of a transfer that libcurl ended with `rc` (not CURLE_OK),
    /// marking `resp.final` when a repeat cannot change it.
    [[nodiscard]] Error transfer_failure(int rc, Response& resp, const std::string& where, uint64_t offset) const;
    /// Keeps the first bytes of an error status's body; 0 (stop) once enough.
    static size_t keep_error_body(Response& resp, const char* data, size_t n);
    /// Why `resp` was refused, with an S3 error's code and message when its
    /// body had them.
    static std::string refusal(const Response& resp);
    void* take_handle();
    void give_back(void* easy);

    HttpRangeSource* owner;
    std::string url_;
    std::string display_url_;
    HttpOptions options_;
    uint64_t size_ = 0;
    std::string etag_;           // pinned at open (empty: none)
    std::string last_modified_;  // pinned at open (empty: none)
    std::string identity_;
    std::string sigv4_;  // CURLOPT_AWS_SIGV4's "aws:amz:REGION:SERVICE" (options_.aws set)
    std::vector<uint8_t> tail_;  // the last bytes of the file, read at open
    uint64_t tail_offset_ = 0;
    std::mutex pool_mutex_;
    std::vector<void*> pool_;  // idle CURL easy handles
    std::vector<void*> multi_pool_;  // idle CURLM handles (each keeps its connections)
    std::atomic<size_t> range_budget_{0};  // max_range_header_bytes, halved on refusals
    std::atomic<bool> no_multi_{false};    // the server does not answer multi-range requests
    std::atomic<bool> budget_confirmed_{false};  // a request within range_budget_ passed: send them at once
    std::atomic<uint64_t> progress_bytes_{0};    // body bytes received, transfers in progress included
};

/// What one response said (headers of the last response after redirects).
struct HttpRangeSource::Impl::Response {
    long status = 0;
    std::string etag;
    std::string last_modified;
    std::string content_range;
    std::string content_encoding;
    std::string content_type;
    std::string content_length;
    bool header_too_long = false;
    // Progress (libcurl's progress callback): when the last body byte came,
    // the call's deadline, and why the transfer was aborted from there.
    Clock::time_point last_byte{};
    Clock::time_point deadline = Clock::time_point::max();
    int64_t last_dlnow = 0;
    std::optional<Error> aborted;
    // An outcome a repeat cannot change: a redirect loop, a response header
    // past libcurl's limit, the deadline passed, a cancellation.
    bool final = false;
    // An error status's body, kept (its first kMaxErrorBody bytes) for the message.
    bool error_body_wanted = false;
    std::string error_body;
    // Body handling.
    bool checked = false;      // headers checked at the first body byte
    std::optional<Error> refused;  // why the body was refused
    uint64_t received = 0;     // body bytes written to out
    bool too_long = false;     // the body went past out
    // What was asked and where it goes.
    HttpRangeSource::Impl* self = nullptr;
    uint64_t offset = 0;
    std::span<uint8_t> out;
    bool suffix = false;
    // A suffix range answered with another valid range of the file (s3rver
    // answers "bytes=-N" with bytes 0-N): the size it gave, for `open` to
    // ask for the tail again as an explicit range.
    std::optional<uint64_t> misanswered_suffix_total;
    std::optional<ContentRange> range;  // parsed at the first body byte
    bool prefix = false;  // a 200 to a multi-range request: its first range read from the body's start
    bool stopped = false;  // a coalesced single part stopped after its first range (Multipart::cut)
    // A multi-range request (read_ranges): the parser, and what the status said.
    Multipart* mp = nullptr;
    bool no_multi = false;         // 200: the server ignores multi-range requests
    bool header_rejected = false;  // 400/413/414/431: the Range header may be too large
    // libcurl's limit on a request.
    size_t request_bytes = 0;  // an upper estimate of the request line and headers
    bool past_limit = false;   // libcurl gave up before any response: see past_curl_limit
};

/// The body of a multi-range request, parsed as it arrives: a
/// `multipart/byteranges` body (RFC 9110 14.6, RFC 2046 5.1) or a single
/// part (a 206 with one Content-Range). Every part must start at the first
/// byte of a range asked for and end at the last byte of one (a server may
/// coalesce ranges), lie in the file and not overlap another part; its
/// bytes go to the pieces it covers (the bytes between pieces are
/// dropped) only once its Content-Range has been checked. Framing lines are
/// bounded; a part's length comes from its Content-Range, never from a
/// search for the boundary.
struct HttpRangeSource::Impl::Multipart {
    enum class State { kPreamble, kHeaders, kBody, kAfterBody, kDelimiter, kEnd };
    static constexpr size_t kMaxLine = 4096;      // one framing line
    static constexpr size_t kMaxFraming = 16384;  // framing bytes between two part bodies

    std::span<const ByteRange> pieces;  // sorted, disjoint
    std::span<const Wire> wires;        // this request's ranges, sorted, disjoint
    uint64_t file_size = 0;
    std::vector<uint8_t> covered;  // per wire: a complete part brought it
    std::string error;             // why the body was refused

    State state = State::kPreamble;
    bool single = false;    // a single-part 206, not multipart
    bool cut = false;       // single: only its first range is read, then the transfer is stopped
    bool foreign_single = false;  // single: a valid range of the file, but not ranges asked for
    std::string delimiter;  // "--" + boundary
    std::string line;
    size_t framing = 0;
    std::string part_range;
    uint64_t pos = 0;        // file offset of the next part-body byte
    uint64_t part_last = 0;  // last byte of the part
    size_t first_wire = 0;
    size_t last_wire = 0;
    size_t cursor = 0;  // first piece that may still get bytes

    Multipart(std::span<const ByteRange> p, std::span<const Wire> w, uint64_t size)
        : pieces(p), wires(w), file_size(size), covered(w.size(), 0) {}

    bool fail(std::string why) {
        error = std::move(why);
        return false;
    }

    /// At the first body byte: multipart with a boundary, or one part.
    bool begin(const std::string& content_type, const std::string& content_range) {
        const std::string ct = lower(content_type);
        if (ct.rfind("multipart/byteranges", 0) != 0) {
            single = true;
            return start_part(content_range);
        }
        const size_t at = ct.find("boundary=");
        if (at == std::string::npos) {
            return fail("multipart/byteranges without a boundary (Content-Type '" + content_type + "')");
        }
        std::string_view b = std::string_view(content_type).substr(at + 9);
        if (!b.empty() && b.front() == '"') {
            b.remove_prefix(1);
            const size_t q = b.find('"');
            if (q == std::string_view::npos) {
                return fail("an unterminated quoted boundary (Content-Type '" + content_type + "')");
            }
            b = b.substr(0, q);
        } else {
            b = trim(b.substr(0, b.find(';')));
        }
        if (b.empty() || b.size() > 70) {
            return fail("an empty or too long boundary (Content-Type '" + content_type + "')");
        }
        delimiter = "--";
        delimiter.append(b);
        state = State::kPreamble;
        return true;
    }

    /// A part's Content-Range, checked against the ranges asked for.
    bool start_part(const std::string& value) {
        auto cr = parse_content_range(value);
        if (!cr) {
            return fail("a part without a valid Content-Range (got '" + value + "')");
        }
        if (cr->total && *cr->total != file_size) {
            return fail("a part's Content-Range '" + value + "' gives another size than " + dec(file_size));
        }
        const auto first = std::lower_bound(wires.begin(), wires.end(), cr->first,
                                            [](const Wire& w, uint64_t v) { return w.first < v; });
        const auto last = std::lower_bound(wires.begin(), wires.end(), cr->last,
                                           [](const Wire& w, uint64_t v) { return w.last < v; });
        if (first == wires.end() || first->first != cr->first || last == wires.end() || last->last != cr->last ||
            last < first) {
            // A single part of the file that is not ranges asked for (s3rver
            // answers a multi-range request with the whole file as one
            // range): the server does not do multi-range requests.
            foreign_single = single && cr->first <= cr->last && cr->last < file_size;
            return fail("a part's Content-Range '" + value + "' is not ranges asked for");
        }
        first_wire = static_cast<size_t>(first - wires.begin());
        last_wire = static_cast<size_t>(last - wires.begin());
        for (size_t k = first_wire; k <= last_wire; ++k) {
            if (covered[k] != 0) {
                return fail("a part's Content-Range '" + value + "' overlaps an earlier part");
            }
        }
        if (single && last_wire > first_wire) {
            // Coalesced: the bytes between the ranges asked are dropped;
            // when they are many, only the first range is read (the others
            // then go in single-range requests).
            uint64_t asked = 0;
            for (size_t k = first_wire; k <= last_wire; ++k) {
                asked += wires[k].last - wires[k].first + 1;  // each inside the file: no overflow
            }
            const uint64_t waste = cr->last - cr->first + 1 - asked;
            if (waste > kMaxCoalescedWaste && waste > asked) {
                cut = true;
                last_wire = first_wire;
                cr->last = wires[first_wire].last;
            }
        }
        pos = cr->first;
        part_last = cr->last;
        cursor = wires[first_wire].piece_begin;
        state = State::kBody;
        return true;
    }

    /// Part-body bytes [pos, pos + n) (inside the part): copied to the
    /// pieces they overlap.
    void write(const char* data, uint64_t n) {
        const uint64_t end = pos + n;  // <= part_last + 1 <= file_size: no overflow
        const size_t stop = wires[last_wire].piece_end;
        while (cursor < stop) {
            const ByteRange& p = pieces[cursor];
            const uint64_t p_end = p.offset + p.out.size();  // checked against the file size
            if (p_end <= pos) {
                ++cursor;
                continue;
            }
            if (p.offset >= end) {
                break;
            }
            const uint64_t from = std::max(pos, p.offset);
            const uint64_t to = std::min(end, p_end);
            // SAFETY: [from, to) lies in the piece [p.offset, p_end) and in the
            // chunk [pos, end): the destination is inside p.out, the source
            // inside the n bytes at data.
            std::memcpy(p.out.data() + (from - p.offset), data + (from - pos), static_cast<size_t>(to - from));
            if (to < p_end) {
                break;  // the piece goes on in the next chunk
            }
            ++cursor;
        }
    }

    bool line_done(std::string_view l) {
        if (!l.empty() && l.back() == '\r') {
            l.remove_suffix(1);
        }
        switch (state) {
            case State::kPreamble:
            case State::kDelimiter: {
                const std::string_view d = trim(l);  // transport padding
                if (d == delimiter) {
                    state = State::kHeaders;
                    part_range.clear();
                    return true;
                }
                if (d.size() == delimiter.size() + 2 && d.substr(0, delimiter.size()) == delimiter &&
                    d.substr(delimiter.size()) == "--") {
                    state = State::kEnd;
                    return true;
                }
                if (state == State::kDelimiter) {
                    return fail("no boundary after a part (got '" + std::string(l.substr(0, 64)) + "')");
                }
                return true;  // preamble
            }
            case State::kHeaders: {
                if (l.empty()) {
                    if (part_range.empty()) {
                        return fail("a part without a Content-Range");
                    }
                    return start_part(part_range);
                }
                const size_t colon = l.find(':');
                if (colon != std::string_view::npos && lower(trim(l.substr(0, colon))) == "content-range") {
                    part_range.assign(trim(l.substr(colon + 1)));
                }
                return true;
            }
            case State::kAfterBody:
                if (!l.empty()) {
                    return fail("a part is longer than its Content-Range");
                }
                state = State::kDelimiter;
                return true;
            case State::kBody:
            case State::kEnd:
                break;
        }
        return true;
    }

    /// Body bytes as they arrive; false (and `error`) when refused.
    bool feed(const char* data, size_t n) {
        size_t i = 0;
        while (i < n) {
            if (state == State::kBody) {
                const uint64_t left = part_last - pos + 1;
                const uint64_t take = std::min<uint64_t>(n - i, left);
                // SAFETY: i + take <= n: the chunk lies in libcurl's n bytes.
                write(data + i, take);
                pos += take;
                i += static_cast<size_t>(take);
                if (pos > part_last) {
                    for (size_t k = first_wire; k <= last_wire; ++k) {
                        covered[k] = 1;
                    }
                    framing = 0;
                    state = single ? State::kEnd : State::kAfterBody;
                }
                continue;
            }
            if (state == State::kEnd) {
                if (cut) {
                    return true;  // the first range is in: the caller stops the transfer
                }
                if (single) {
                    return fail("the body is longer than the Content-Range");
                }
                framing += n - i;  // epilogue: ignored, bounded
                if (framing > kMaxFraming) {
                    return fail("too many bytes after the closing boundary");
                }
                return true;
            }
            // SAFETY: i < n.
            const char c = data[i++];
            if (++framing > kMaxFraming) {
                return fail("more than " + dec(kMaxFraming) + " bytes of multipart framing between parts");
            }
            if (c != '\n') {
                if (line.size() >= kMaxLine) {
                    return fail("a multipart line is longer than " + dec(kMaxLine) + " bytes");
                }
                line.push_back(c);
                continue;
            }
            const std::string l = std::move(line);
            line.clear();
            if (!line_done(l)) {
                return false;
            }
        }
        return true;
    }

    /// A 200 answer (the whole file: its body starts with byte 0) to a
    /// request whose first range starts at byte 0 and ends before
    /// `max_bytes`: that range is read from the body's first bytes as the
    /// one part of a single-part answer (`feed` then takes at most
    /// `part_last + 1 - pos` bytes). False (nothing changed) otherwise.
    bool begin_prefix(uint64_t max_bytes) {
        if (wires.empty() || wires.front().first != 0 || wires.front().last >= max_bytes) {
            return false;
        }
        single = true;
        first_wire = 0;
        last_wire = 0;
        pos = 0;
        part_last = wires.front().last;
        cursor = wires.front().piece_begin;
        state = State::kBody;
        return true;
    }

    /// The first wire no part brought, or wires.size().
    [[nodiscard]] size_t first_missing() const {
        return static_cast<size_t>(std::find(covered.begin(), covered.end(), 0) - covered.begin());
    }
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

HttpRangeSource::Impl::Impl(HttpRangeSource* source, std::string url, HttpOptions options)
    : owner(source), url_(std::move(url)), display_url_(display_url(url_)), options_(std::move(options)) {
    options_.max_retries = std::min(options_.max_retries, kMaxRetries);
    options_.max_redirects = std::clamp(options_.max_redirects, 0L, kMaxRedirects);  // -1 would be unlimited
    options_.parallel = std::clamp(options_.parallel, 1U, kMaxParallel);
    options_.idle_timeout = std::max(options_.idle_timeout, std::chrono::milliseconds(1000));
    range_budget_.store(std::max<size_t>(options_.max_range_header_bytes, 1), std::memory_order_relaxed);
    if (options_.aws) {
        sigv4_ = "aws:amz:" + options_.aws->region + ":" + options_.aws->service;
    }
}

HttpRangeSource::Impl::~Impl() {
    for (void* m : multi_pool_) {
        curl_multi_cleanup(static_cast<CURLM*>(m));
    }
    for (void* h : pool_) {
        curl_easy_cleanup(static_cast<CURL*>(h));
    }
}

void* HttpRangeSource::Impl::take_multi() {
    {
        const std::lock_guard<std::mutex> lock(pool_mutex_);
        if (!multi_pool_.empty()) {
            void* m = multi_pool_.back();
            multi_pool_.pop_back();
            return m;
        }
    }
    CURLM* m = curl_multi_init();
    if (m != nullptr) {
        // Parallel parts on separate connections, never multiplexed on one.
        // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg): libcurl's option setter is variadic
        curl_multi_setopt(m, CURLMOPT_PIPELINING, static_cast<long>(CURLPIPE_NOTHING));
    }
    return m;
}

void HttpRangeSource::Impl::give_back_multi(void* multi) {
    const std::lock_guard<std::mutex> lock(pool_mutex_);
    if (multi_pool_.size() < 4) {
        multi_pool_.push_back(multi);
        return;
    }
    curl_multi_cleanup(static_cast<CURLM*>(multi));
}

void* HttpRangeSource::Impl::take_handle() {
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

void HttpRangeSource::Impl::give_back(void* easy) {
    const std::lock_guard<std::mutex> lock(pool_mutex_);
    if (pool_.size() < 8) {
        pool_.push_back(easy);
        return;
    }
    curl_easy_cleanup(static_cast<CURL*>(easy));
}

HttpRangeSource::HttpRangeSource(std::string url, HttpOptions options)
    : impl_(std::make_unique<Impl>(this, std::move(url), std::move(options))) {}

HttpRangeSource::~HttpRangeSource() = default;

uint64_t HttpRangeSource::size() const noexcept { return impl_->size_; }

std::string HttpRangeSource::identity() const { return impl_->identity_; }

std::string HttpRangeSource::name() const { return impl_->display_url_; }

Status HttpRangeSource::read(uint64_t offset, std::span<uint8_t> out) { return impl_->read(offset, out); }

Status HttpRangeSource::read_ranges(std::span<const ByteRange> ranges) { return impl_->read_ranges(ranges); }

Result<std::shared_ptr<HttpRangeSource>> HttpRangeSource::open(const std::string& url, HttpOptions options) {
    global_init();
    const std::string scheme = lower(url.substr(0, url.find("://")));
    if (url.find("://") == std::string::npos || (scheme != "http" && scheme != "https" && scheme != "s3")) {
        return Error(ErrorCode::kInvalidArgument,
                     quoted(display_url(url)) + ": not an http://, https:// or s3:// URL");
    }
    for (const std::string& h : options.headers) {
        if (h.find_first_of("\r\n") != std::string::npos || h.find(':') == std::string::npos) {
            return Error(ErrorCode::kInvalidArgument,
                         quoted(display_url(url)) + ": an extra header must be one 'Name: value' line");
        }
    }
    std::string target = url;
    if (is_s3_url(url)) {
        S3Location at;
        if (options.s3) {
            at = *options.s3;
        } else {
            HURRAY_ASSIGN_OR_RETURN(at, S3Location::from_environment());
        }
        HURRAY_ASSIGN_OR_RETURN(target, s3_http_url(url, at));
        if (!options.aws) {
            options.aws = AwsCredentials::from_environment();
        }
    }
    if (options.aws) {
        HURRAY_RETURN_IF_ERROR(check_credentials(*options.aws, display_url(url)));
    }
    auto src = std::make_shared<HttpRangeSource>(target, std::move(options));
    Impl& impl = *src->impl_;
    impl.display_url_ = display_url(url);
    const uint64_t want = std::max<uint64_t>(1, std::min<uint64_t>(impl.options_.tail_bytes, uint64_t{1} << 30U));
    std::vector<uint8_t> tail(static_cast<size_t>(want));
    Impl::Response at_open;
    const CallDeadline deadline(impl.options_.deadline);
    Status opened = impl.fetch(0, tail, true, &at_open);
    if (!opened.ok() && at_open.misanswered_suffix_total) {
        // The server answered the suffix range with another range of the
        // file, whose Content-Range gave the size (s3rver answers
        // "bytes=-N" with bytes 0-N): the tail is asked for again as an
        // explicit range, checked like every other. One request more.
        const uint64_t total = *at_open.misanswered_suffix_total;
        const uint64_t len = std::min<uint64_t>(want, total);
        tail.resize(static_cast<size_t>(len));
        impl.size_ = total;  // what the explicit range's Content-Range must name
        Status again = impl.fetch(total - len, tail, false, &at_open);
        opened = again.ok() ? std::move(again)
                            : Status(Error(again.error().code(),
                                           opened.error().message() + "; asked again as an explicit range: " +
                                               again.error().message(),
                                           again.error().offset()));
    }
    HURRAY_RETURN_IF_ERROR(opened);
    // fetch checked: a Content-Range with a total, ending at total - 1.
    const ContentRange& cr = *at_open.range;
    impl.size_ = *cr.total;
    impl.tail_offset_ = cr.first;
    tail.resize(static_cast<size_t>(cr.last - cr.first + 1));  // <= want
    impl.tail_ = std::move(tail);
    impl.etag_ = at_open.etag;
    impl.last_modified_ = at_open.last_modified;
    impl.identity_ = !impl.etag_.empty() ? impl.etag_ : impl.last_modified_;
    return src;
}

size_t HttpRangeSource::Impl::held_from_tail(uint64_t offset, std::span<uint8_t> out) const noexcept {
    // tail_ holds [tail_offset_, size_): a range that ends inside it reaches
    // it with its last bytes. The caller checked offset + out.size() <= size_.
    if (tail_.empty() || offset >= tail_offset_ || offset + out.size() <= tail_offset_) {
        return out.size();
    }
    const auto before = static_cast<size_t>(tail_offset_ - offset);  // < out.size()
    // SAFETY: [tail_offset_, offset + out.size()) lies inside tail_, which
    // ends where the file does, and out[before, out.size()) is that range.
    std::memcpy(out.data() + before, tail_.data(), out.size() - before);
    return before;
}

Status HttpRangeSource::Impl::read(uint64_t offset, std::span<uint8_t> out) {
    HURRAY_RETURN_IF_ERROR(owner->check_range(offset, out.size()));
    const CallDeadline deadline(options_.deadline);
    if (out.empty()) {
        return Status::success();
    }
    if (offset >= tail_offset_ && offset - tail_offset_ + out.size() <= tail_.size()) {
        // SAFETY: the range [offset - tail_offset_, + out.size()) lies inside
        // tail_ (checked just above, no overflow: both terms <= size_).
        std::memcpy(out.data(), tail_.data() + (offset - tail_offset_), out.size());
        return Status::success();
    }
    out = out.first(held_from_tail(offset, out));
    if (options_.parallel > 1 && out.size() >= options_.parallel_min_bytes && out.size() >= options_.parallel) {
        // Contiguous parts on separate connections; a span's size is at most
        // PTRDIFF_MAX, so at + step cannot overflow.
        const size_t step = (out.size() + options_.parallel - 1) / options_.parallel;
        std::vector<Job> parts;
        for (size_t at = 0; at < out.size(); at += step) {
            parts.push_back(Job{{offset + at, out.subspan(at, std::min(step, out.size() - at))}, {}, {}, {}});
        }
        return fetch_parallel(parts, {});
    }
    return fetch(offset, out, false, nullptr);
}

/// libcurl's header callback: one header line per call (status lines too).
size_t HttpRangeSource::Impl::on_header(char* data, size_t size, size_t count, void* user) {
    auto* resp = static_cast<HttpRangeSource::Impl::Response*>(user);  // NOLINT
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
        resp->content_type.clear();
        resp->content_length.clear();
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
    } else if (name == "content-type") {
        field = &resp->content_type;
    } else if (name == "content-length") {
        field = &resp->content_length;
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

std::string HttpRangeSource::Impl::where(uint64_t offset, uint64_t length) const {
    std::string w = "GET ";
    w.append(display_url_).append(" bytes [").append(dec(offset)).append(", ").append(dec(offset + length)).append(")");
    return w;
}

Status HttpRangeSource::Impl::setup(void* easy_v, Response& resp, const std::string& range, void** headers_out,
                              const std::string& where) {
    auto* easy = static_cast<CURL*>(easy_v);
    curl_easy_reset(easy);
    *headers_out = nullptr;
    if (resp.mp != nullptr && resp.offset == 0) {
        // A multi-range request from byte 0 (a file header with the sections
        // at the end): a 200 or a far-coalesced answer is read only to the end
        // of its first range, then stopped. libcurl hands over the body in
        // buffers of this size (16 KiB by default), so the smallest it allows
        // keeps what such an answer costs beyond that range under 1 KiB.
        static_cast<void>(curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, kFirstRangeBuffer));
    } else if (resp.mp == nullptr && resp.out.size() >= kLargeReadBytes) {
        // A large range: libcurl receives it in buffers of kLargeReadBuffer
        // (16 KiB by default), so each recv and write callback moves more.
        static_cast<void>(curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, kLargeReadBuffer));
    }
    curl_slist* headers = nullptr;
    const auto add = [&headers](const std::string& h) {
        curl_slist* next = curl_slist_append(headers, h.c_str());
        if (next != nullptr) {
            headers = next;
        }
        return next != nullptr;
    };
    bool added = add("Range: " + range) && add("Accept-Encoding: identity");
    if (!resp.suffix && !etag_.empty() && etag_.substr(0, 2) != "W/") {
        added = added && add("If-Match: " + etag_);
    }
    for (const std::string& h : options_.headers) {
        added = added && add(h);
    }
    if (options_.aws) {
        // S3 wants the payload's hash in a header (sha-256 of the empty
        // body of a GET, as libcurl signs it), the token of temporary
        // credentials in another; libcurl signs both with the rest.
        added = added && add(std::string("x-amz-content-sha256: ") + kEmptySha256);
        if (!options_.aws->session_token.empty()) {
            added = added && add("x-amz-security-token: " + options_.aws->session_token);
        }
    }
    if (!added) {
        curl_slist_free_all(headers);
        return Error(ErrorCode::kOutOfMemory, where + ": out of memory building the request");
    }
    resp.request_bytes = request_overhead(url_, options_.headers, etag_) + 9 + range.size();  // "Range: " CRLF
    // NOLINTBEGIN(cppcoreguidelines-pro-type-vararg): libcurl's option setter is variadic
    curl_easy_setopt(easy, CURLOPT_URL, url_.c_str());
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(easy, CURLOPT_MAXREDIRS, options_.max_redirects);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout.count()));
    // The idle timeout, the deadline and the caller's progress callback are
    // checked by on_progress, which libcurl calls as bytes arrive and about
    // once a second when none do.
    resp.last_byte = Clock::now();
    resp.deadline = t_call_deadline;
    curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, &HttpRangeSource::Impl::on_progress);
    curl_easy_setopt(easy, CURLOPT_XFERINFODATA, &resp);
    if (options_.aws) {
        curl_easy_setopt(easy, CURLOPT_AWS_SIGV4, sigv4_.c_str());
        curl_easy_setopt(easy, CURLOPT_USERNAME, options_.aws->access_key_id.c_str());
        curl_easy_setopt(easy, CURLOPT_PASSWORD, options_.aws->secret_access_key.c_str());
    }
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &HttpRangeSource::Impl::on_header);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, &resp);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &HttpRangeSource::Impl::on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &resp);
    // NOLINTEND(cppcoreguidelines-pro-type-vararg)
    *headers_out = headers;
    return Status::success();
}

Status HttpRangeSource::Impl::attempt(void* easy, uint64_t offset, std::span<uint8_t> out, bool suffix, Response& resp) {
    resp = Response{};
    resp.self = this;
    resp.offset = offset;
    resp.out = out;
    resp.suffix = suffix;
    const std::string range = suffix ? "bytes=-" + dec(out.size())
                                     : "bytes=" + dec(offset) + "-" + dec(offset + out.size() - 1);
    std::string w;
    if (suffix) {
        w.append("GET ").append(display_url_).append(" bytes (last ").append(dec(out.size())).append(")");
    } else {
        w = where(offset, out.size());
    }
    void* headers = nullptr;
    HURRAY_RETURN_IF_ERROR(setup(easy, resp, range, &headers, w));
    const CURLcode rc = curl_easy_perform(static_cast<CURL*>(easy));
    curl_slist_free_all(static_cast<curl_slist*>(headers));
    return conclude(rc, resp, w, offset);
}

Status HttpRangeSource::Impl::conclude(int rc, Response& resp, const std::string& where, uint64_t offset) const {
    if (past_curl_limit(rc, resp.status, resp.checked)) {
        // Not sent, not counted; the same request would fail the same way.
        resp.past_limit = true;
        return Error(ErrorCode::kIoError, where + ": " + past_limit_message(rc, resp.request_bytes), offset);
    }
    owner->count_request(resp.received);
    if (resp.refused) {
        return Error(resp.refused->code(), where + ": " + refusal(resp), offset);
    }
    if (rc != CURLE_OK) {
        return transfer_failure(rc, resp, where, offset);
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
    const uint64_t expected = resp.range ? resp.range->last - resp.range->first + 1 : resp.out.size();
    if (resp.received != expected) {
        return Error(ErrorCode::kIoError,
                     where + ": the body ended after " + dec(resp.received) + " of " + dec(expected) + " bytes",
                     offset + resp.received);
    }
    return Status::success();
}

Status HttpRangeSource::Impl::fetch(uint64_t offset, std::span<uint8_t> out, bool suffix, Response* at_open) {
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
        const bool retry =
            !resp.past_limit && !resp.final && (resp.refused ? (resp.status >= 500 && resp.status <= 599) : true);
        if (!retry) {
            break;
        }
        if (attempt_no < options_.max_retries && Clock::now() + wait >= resp.deadline) {
            last = Error(last.error().code(), last.error().message() + " (no retry: the deadline of " +
                                                  seconds(options_.deadline) + " would pass)",
                         last.error().offset());
            break;
        }
        if (attempt_no == options_.max_retries) {
            last = Error(last.error().code(), last.error().message() + " (after " + dec(attempt_no + 1) + " attempts)",
                         last.error().offset());
        }
    }
    give_back(easy);
    if (at_open != nullptr) {
        *at_open = std::move(resp);
    }
    return last;
}

/// libcurl's write callback: checks the headers at the first body byte,
/// then copies into the caller's buffer, refusing any byte past the range.
/// Returning less than given aborts the transfer.
size_t HttpRangeSource::Impl::on_body(char* data, size_t size, size_t count, void* user) {
    auto* resp = static_cast<HttpRangeSource::Impl::Response*>(user);  // NOLINT
    const size_t n = size * count;
    if (resp->error_body_wanted) {
        return keep_error_body(*resp, data, n);
    }
    if (resp->mp != nullptr) {
        resp->received += n;  // every body byte, multipart framing included
    }
    const auto feed = [resp, data, n]() -> size_t {
        if (!resp->mp->feed(data, n)) {
            resp->refused = Error(ErrorCode::kIoError, resp->mp->error);
            return 0;
        }
        if (resp->mp->cut && resp->mp->state == Multipart::State::kEnd) {
            resp->stopped = true;  // a coalesced answer: its first range is in, the rest is not wanted
            return 0;
        }
        return n;
    };
    // A 200 to a multi-range request (Response::prefix): its body up to the
    // end of the first range, then the transfer is stopped.
    const auto prefix = [resp, data, n]() -> size_t {
        const uint64_t left = resp->mp->part_last + 1 - resp->mp->pos;
        const auto take = static_cast<size_t>(std::min<uint64_t>(n, left));
        static_cast<void>(resp->mp->feed(data, take));  // inside the part: never refused
        if (resp->mp->state == Multipart::State::kEnd) {
            resp->refused = Error(ErrorCode::kIoError, "the server ignored the multi-range request (200 OK)");
            return 0;
        }
        return n;
    };
    if (!resp->checked) {
        resp->checked = true;
        const auto refuse = [resp](ErrorCode code, std::string msg) {
            resp->refused = Error(code, std::move(msg));
            return size_t{0};
        };
        if (resp->mp != nullptr) {
            // Stopped here, at the headers: a 200 is the whole file. When the
            // first range asked starts at byte 0 (a file header, asked with
            // the sections at the end) and ends within kMaxPrefix bytes, and
            // the answer is the same file, unencoded, of the size seen at
            // open, the body is read up to that range's end first, so that
            // it costs no further request.
            if (resp->status == 200) {
                resp->no_multi = true;
                const HttpRangeSource::Impl& src = *resp->self;
                const bool same = (src.etag_.empty() || resp->etag == src.etag_) &&
                                  (!src.etag_.empty() || src.last_modified_.empty() ||
                                   resp->last_modified == src.last_modified_);
                const bool plain = resp->content_encoding.empty() || lower(resp->content_encoding) == "identity";
                if (same && plain && !resp->header_too_long &&
                    parse_u64(resp->content_length) == std::optional<uint64_t>(src.size_) &&
                    resp->mp->begin_prefix(kMaxPrefix)) {
                    resp->prefix = true;
                    return prefix();
                }
                return refuse(ErrorCode::kIoError, "the server ignored the multi-range request (200 OK)");
            }
            if (resp->status == 400 || resp->status == 413 || resp->status == 414 || resp->status == 431) {
                resp->header_rejected = true;
                return refuse(ErrorCode::kIoError, "HTTP status " + dec(static_cast<uint64_t>(resp->status)) +
                                                       " to a multi-range request (Range header too large?)");
            }
        }
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
            static_cast<void>(refuse(ErrorCode::kIoError, "HTTP status " +
                                                              dec(static_cast<uint64_t>(std::max(0L, resp->status))) +
                                                              ", expected 206 Partial Content"));
            // An error's body may say why (S3: <Code> and <Message>): its
            // first bytes are kept for the message, the rest is not read.
            resp->error_body_wanted = resp->status >= 400;
            return keep_error_body(*resp, data, n);
        }
        if (resp->header_too_long) {
            return refuse(ErrorCode::kIoError, "a response header is longer than " + dec(kMaxHeaderValue) + " bytes");
        }
        if (!resp->content_encoding.empty() && lower(resp->content_encoding) != "identity") {
            return refuse(ErrorCode::kIoError,
                          "the body is encoded (Content-Encoding: " + resp->content_encoding + "), not the file's bytes");
        }
        const HttpRangeSource::Impl& src = *resp->self;
        const bool changed = (!src.etag_.empty() && resp->etag != src.etag_) ||
                             (src.etag_.empty() && !src.last_modified_.empty() &&
                              resp->last_modified != src.last_modified_);
        if (resp->mp != nullptr) {
            if (changed) {
                return refuse(ErrorCode::kIoError,
                              "the file changed on the server since it was opened (identity " + src.identity_ +
                                  " at open, now " + (resp->etag.empty() ? resp->last_modified : resp->etag) + ")");
            }
            if (!resp->mp->begin(resp->content_type, resp->content_range)) {
                resp->no_multi = resp->mp->foreign_single;  // fall back to single-range requests
                return refuse(ErrorCode::kIoError, resp->mp->error);
            }
            return n == 0 ? 0 : feed();
        }
        const auto cr = parse_content_range(resp->content_range);
        if (!cr) {
            return refuse(ErrorCode::kIoError, "206 without a valid Content-Range (got '" + resp->content_range + "')");
        }
        const uint64_t len = resp->out.size();
        if (resp->suffix) {
            if (!cr->total || cr->last + 1 != *cr->total || cr->last - cr->first + 1 != std::min(len, *cr->total)) {
                if (cr->total && cr->first <= cr->last && cr->last < *cr->total) {
                    resp->misanswered_suffix_total = *cr->total;  // a valid range of the file, not the one asked
                }
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
            if (changed) {
                return refuse(ErrorCode::kIoError,
                              "the file changed on the server since it was opened (identity " + src.identity_ +
                                  " at open, now " + (resp->etag.empty() ? resp->last_modified : resp->etag) + ")");
            }
        }
        resp->range = cr;
    }
    if (n == 0) {
        return 0;
    }
    if (resp->prefix) {
        return prefix();
    }
    if (resp->mp != nullptr) {
        return feed();
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

int HttpRangeSource::Impl::on_progress(void* user, int64_t /*dltotal*/, int64_t dlnow, int64_t /*ultotal*/,
                                       int64_t /*ulnow*/) {
    auto* resp = static_cast<HttpRangeSource::Impl::Response*>(user);  // NOLINT
    const HttpRangeSource::Impl& src = *resp->self;
    const Clock::time_point now = Clock::now();
    uint64_t total = src.progress_bytes_.load(std::memory_order_relaxed);
    if (dlnow > resp->last_dlnow) {
        total = resp->self->progress_bytes_.fetch_add(static_cast<uint64_t>(dlnow - resp->last_dlnow),
                                                      std::memory_order_relaxed) +
                static_cast<uint64_t>(dlnow - resp->last_dlnow);
        resp->last_dlnow = dlnow;
        resp->last_byte = now;
    }
    if (now >= resp->deadline) {
        resp->final = true;
        resp->aborted = Error(ErrorCode::kIoError, "the deadline of " + seconds(src.options_.deadline) +
                                                       " passed (HttpOptions::deadline)");
        return 1;
    }
    if (now - resp->last_byte >= src.options_.idle_timeout) {
        resp->aborted = Error(ErrorCode::kIoError, "no byte received for " + seconds(src.options_.idle_timeout) +
                                                       " (HttpOptions::idle_timeout)");
        return 1;
    }
    if (src.options_.progress && !src.options_.progress(total)) {
        resp->final = true;
        resp->aborted = Error(ErrorCode::kCancelled, "cancelled by the progress callback");
        return 1;
    }
    return 0;
}

Error HttpRangeSource::Impl::transfer_failure(int rc, Response& resp, const std::string& where,
                                               uint64_t offset) const {
    if (rc == CURLE_ABORTED_BY_CALLBACK && resp.aborted) {
        return {resp.aborted->code(), where + ": " + resp.aborted->message(), offset};
    }
    if (rc == CURLE_TOO_MANY_REDIRECTS) {
        resp.final = true;  // the same redirects again
        return {ErrorCode::kIoError,
                where + ": more than " + dec(static_cast<uint64_t>(options_.max_redirects)) +
                    " redirects (HttpOptions::max_redirects): a redirect loop?",
                offset};
    }
    if ((rc == CURLE_OUT_OF_MEMORY || rc == kCurleTooLarge) && resp.status != 0) {
        // A response has begun: libcurl refused one of its header lines (it
        // keeps at most 100 KiB of them).
        resp.final = true;
        return {ErrorCode::kIoError,
                where + ": the response's headers are larger than libcurl accepts (" +
                    curl_easy_strerror(static_cast<CURLcode>(rc)) + ")",
                offset};
    }
    return {ErrorCode::kIoError, where + ": " + curl_easy_strerror(static_cast<CURLcode>(rc)), offset};
}

size_t HttpRangeSource::Impl::keep_error_body(Response& resp, const char* data, size_t n) {
    const size_t room = kMaxErrorBody - std::min(kMaxErrorBody, resp.error_body.size());
    // SAFETY: libcurl passes n readable bytes at data; at most room of them are copied.
    resp.error_body.append(data, std::min(n, room));
    return n <= room ? n : 0;  // 0: enough kept, the transfer stops
}

std::string HttpRangeSource::Impl::refusal(const Response& resp) {
    std::string m = resp.refused ? resp.refused->message() : std::string();
    const auto element = [&resp](std::string_view tag) {
        const std::string open = "<" + std::string(tag) + ">";
        const std::string close = "</" + std::string(tag) + ">";
        const size_t a = resp.error_body.find(open);
        const size_t b = a == std::string::npos ? a : resp.error_body.find(close, a + open.size());
        if (b == std::string::npos) {
            return std::string();
        }
        std::string v;
        for (const char c : std::string_view(resp.error_body).substr(a + open.size(), b - a - open.size())) {
            if (v.size() == 200) {
                v.append("...");
                break;
            }
            v.push_back(c >= 0x20 && c < 0x7f ? c : '?');  // printable ASCII only
        }
        return v;
    };
    const std::string code = element("Code");
    if (!code.empty()) {
        const std::string text = element("Message");
        m.append(" (").append(code);
        if (!text.empty()) {
            m.append(": ").append(text);
        }
        m.append(")");
    }
    return m;
}

namespace {

/// The wait before retry number `retry` (0: the first): the backoff doubled
/// `retry` times (retries are at most 10).
std::chrono::milliseconds backoff(std::chrono::milliseconds first, unsigned retry) {
    return first * (int64_t{1} << std::min(retry, kMaxRetries));
}

/// "bytes=a-b,c-d,...".
template <typename Wires>
std::string range_list(const Wires& wires) {
    std::string range = "bytes=";
    for (size_t k = 0; k < wires.size(); ++k) {
        if (k > 0) {
            range.push_back(',');
        }
        range.append(dec(wires[k].first)).append("-").append(dec(wires[k].last));
    }
    return range;
}

/// `status` with " (after N attempts)" added to its message.
Status after_attempts(const Status& status, unsigned attempts) {
    return Error(status.error().code(), status.error().message() + " (after " + dec(attempts) + " attempts)",
                 status.error().offset());
}

}  // namespace

Status HttpRangeSource::Impl::fetch_parallel(std::span<Job> jobs, std::span<const ByteRange> pieces) {
    if (jobs.empty()) {
        return Status::success();
    }
    struct Slot {
        void* easy = nullptr;
        void* headers = nullptr;
        Response resp;
        std::unique_ptr<Multipart> mp;  // multi-range jobs
        std::string where;
        size_t index = 0;
        unsigned attempt = 0;
        bool busy = false;
    };
    struct Retry {
        size_t index = 0;
        unsigned attempt = 0;
        std::chrono::steady_clock::time_point ready;
    };
    auto* multi = static_cast<CURLM*>(take_multi());
    if (multi == nullptr) {
        return Error(ErrorCode::kOutOfMemory, "GET " + display_url_ + ": curl_multi_init failed");
    }
    // Sized once: libcurl keeps pointers to each slot's Response.
    std::vector<Slot> slots(std::min<size_t>(options_.parallel, jobs.size()));
    std::vector<Retry> retries;
    size_t next = 0;
    size_t active = 0;
    Status failure = Status::success();
    const auto start = [&](Slot& slot, size_t index, unsigned attempt_no) -> Status {
        const Job& job = jobs[index];
        slot.index = index;
        slot.attempt = attempt_no;
        slot.resp = Response{};
        slot.resp.self = this;
        std::string range;
        if (job.wires.empty()) {
            slot.where = where(job.range.offset, job.range.out.size());
            slot.resp.offset = job.range.offset;
            slot.resp.out = job.range.out;
            slot.mp.reset();
            range = "bytes=" + dec(job.range.offset) + "-" + dec(job.range.offset + job.range.out.size() - 1);
        } else {
            slot.where = multi_where(job.wires);
            slot.resp.offset = job.wires.front().first;
            slot.mp = std::make_unique<Multipart>(pieces, job.wires, size_);
            slot.resp.mp = slot.mp.get();
            range = range_list(job.wires);
        }
        if (slot.easy == nullptr) {
            slot.easy = take_handle();
            if (slot.easy == nullptr) {
                return Error(ErrorCode::kOutOfMemory, slot.where + ": curl_easy_init failed");
            }
        }
        HURRAY_RETURN_IF_ERROR(setup(slot.easy, slot.resp, range, &slot.headers, slot.where));
        if (curl_multi_add_handle(multi, static_cast<CURL*>(slot.easy)) != CURLM_OK) {
            curl_slist_free_all(static_cast<curl_slist*>(slot.headers));
            slot.headers = nullptr;
            return Error(ErrorCode::kIoError, slot.where + ": curl_multi_add_handle failed");
        }
        slot.busy = true;
        ++active;
        return Status::success();
    };
    while (failure.ok()) {
        const auto now = std::chrono::steady_clock::now();
        for (Slot& slot : slots) {
            if (slot.busy) {
                continue;
            }
            const auto ready = std::find_if(retries.begin(), retries.end(),
                                            [now](const Retry& r) { return r.ready <= now; });
            Status started = Status::success();
            if (ready != retries.end()) {
                const Retry r = *ready;
                retries.erase(ready);
                started = start(slot, r.index, r.attempt);
            } else if (next < jobs.size()) {
                started = start(slot, next++, 0);
            } else {
                continue;
            }
            if (!started.ok()) {
                failure = started;
                break;
            }
        }
        if (!failure.ok() || (active == 0 && retries.empty() && next == jobs.size())) {
            break;
        }
        int running = 0;
        if (const CURLMcode mc = curl_multi_perform(multi, &running); mc != CURLM_OK) {
            failure = Error(ErrorCode::kIoError, "GET " + display_url_ + ": " + curl_multi_strerror(mc));
            break;
        }
        int queued = 0;
        while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
            if (msg->msg != CURLMSG_DONE) {
                continue;
            }
            CURL* easy = msg->easy_handle;  // msg is gone after remove_handle: copy first
            const CURLcode rc = msg->data.result;
            const auto it = std::find_if(slots.begin(), slots.end(),
                                         [easy](const Slot& s) { return s.busy && s.easy == easy; });
            if (it == slots.end()) {
                continue;
            }
            Slot& slot = *it;
            curl_multi_remove_handle(multi, easy);
            curl_slist_free_all(static_cast<curl_slist*>(slot.headers));
            slot.headers = nullptr;
            slot.busy = false;
            --active;
            Job& job = jobs[slot.index];
            Status done = Status::success();
            bool retry = true;
            if (slot.mp) {
                job.outcome = judge_multi(rc, slot.resp, *slot.mp, slot.where, job.covered, done, retry);
                if (job.outcome != MultiOutcome::kError) {
                    continue;
                }
            } else {
                done = conclude(rc, slot.resp, slot.where, job.range.offset);
                if (done.ok()) {
                    continue;
                }
                // As in fetch: a 5xx, or a transfer that failed or ended early.
                retry = !slot.resp.past_limit && !slot.resp.final &&
                        (slot.resp.refused ? (slot.resp.status >= 500 && slot.resp.status <= 599) : true);
            }
            if (retry && slot.attempt < options_.max_retries &&
                Clock::now() + backoff(options_.retry_backoff, slot.attempt) < t_call_deadline) {
                retries.push_back({slot.index, slot.attempt + 1,
                                   std::chrono::steady_clock::now() + backoff(options_.retry_backoff, slot.attempt)});
                continue;
            }
            failure = retry ? after_attempts(done, slot.attempt + 1) : done;
            break;
        }
        if (!failure.ok()) {
            break;
        }
        // Wait for the sockets, or until the next retry is due (at most 1 s).
        auto wait = std::chrono::milliseconds(1000);
        const auto later = std::chrono::steady_clock::now();
        for (const Retry& r : retries) {
            const auto due = std::chrono::duration_cast<std::chrono::milliseconds>(r.ready - later);
            wait = std::clamp(due, std::chrono::milliseconds(0), wait);
        }
        if (active > 0) {
            if (const CURLMcode mc = curl_multi_poll(multi, nullptr, 0, static_cast<int>(wait.count()), nullptr);
                mc != CURLM_OK) {
                failure = Error(ErrorCode::kIoError, "GET " + display_url_ + ": " + curl_multi_strerror(mc));
                break;
            }
        } else if (!retries.empty()) {
            std::this_thread::sleep_for(wait);  // nothing under way: until the next retry is due
        }
    }
    // On failure the other requests are abandoned (their transfers stopped).
    for (Slot& slot : slots) {
        if (slot.busy) {
            curl_multi_remove_handle(multi, static_cast<CURL*>(slot.easy));
            curl_slist_free_all(static_cast<curl_slist*>(slot.headers));
            owner->count_request(slot.resp.received);
        }
        if (slot.easy != nullptr) {
            give_back(slot.easy);
        }
    }
    give_back_multi(multi);
    return failure;
}

std::string HttpRangeSource::Impl::multi_where(std::span<const Wire> wires) const {
    std::string w = "GET ";
    w.append(display_url_)
        .append(" ")
        .append(dec(wires.size()))
        .append(" ranges in bytes [")
        .append(dec(wires.front().first))
        .append(", ")
        .append(dec(wires.back().last + 1))
        .append(")");
    return w;
}

HttpRangeSource::Impl::MultiOutcome HttpRangeSource::Impl::judge_multi(int rc, Response& resp, Multipart& mp,
                                                           const std::string& where, std::vector<uint8_t>& covered,
                                                           Status& error, bool& retry) const {
    if (rc == CURLE_OK && !resp.checked) {
        static_cast<void>(on_body(nullptr, 1, 0, &resp));  // no body: check the headers now
    }
    retry = true;
    if (past_curl_limit(rc, resp.status, resp.checked)) {
        // libcurl did not send it (not counted): smaller requests, as for a
        // 431; a single range past the limit gets past_limit_message.
        resp.past_limit = true;
        return MultiOutcome::kTooLarge;
    }
    owner->count_request(resp.received);
    if (resp.no_multi) {
        covered = std::move(mp.covered);  // the first range, when the 200's first bytes brought it
        return MultiOutcome::kNoMulti;
    }
    if (resp.header_rejected) {
        return MultiOutcome::kTooLarge;
    }
    if (resp.stopped) {
        covered = std::move(mp.covered);  // the first range; the others in single-range requests
        return MultiOutcome::kPartial;
    }
    const uint64_t offset = mp.wires.front().first;
    if (resp.refused) {
        error = Error(resp.refused->code(), where + ": " + refusal(resp), offset);
        retry = resp.status >= 500 && resp.status <= 599;
        return MultiOutcome::kError;
    }
    if (rc != CURLE_OK) {
        error = transfer_failure(rc, resp, where, offset);
        retry = !resp.final;
        return MultiOutcome::kError;
    }
    if (mp.state != Multipart::State::kEnd) {
        error = Error(ErrorCode::kIoError,
                      where + (mp.single ? ": the body ended early" : ": the body ended before the closing boundary"),
                      offset);
        return MultiOutcome::kError;
    }
    if (const size_t miss = mp.first_missing(); miss < mp.wires.size()) {
        if (mp.single) {
            covered = std::move(mp.covered);
            return MultiOutcome::kPartial;
        }
        error = Error(ErrorCode::kIoError,
                      where + ": the multipart response lacks bytes [" + dec(mp.wires[miss].first) + ", " +
                          dec(mp.wires[miss].last + 1) + ")",
                      mp.wires[miss].first);
        retry = false;
        return MultiOutcome::kError;
    }
    covered = std::move(mp.covered);
    return MultiOutcome::kDone;
}

HttpRangeSource::Impl::MultiOutcome HttpRangeSource::Impl::fetch_multi(std::span<const Wire> wires,
                                                           std::span<const ByteRange> pieces,
                                                           std::vector<uint8_t>& covered, Status& error) {
    const std::string range = range_list(wires);
    const std::string w = multi_where(wires);
    void* easy = take_handle();
    if (easy == nullptr) {
        error = Error(ErrorCode::kOutOfMemory, w + ": curl_easy_init failed");
        return MultiOutcome::kError;
    }
    MultiOutcome outcome = MultiOutcome::kError;
    for (unsigned attempt_no = 0; attempt_no <= options_.max_retries; ++attempt_no) {
        if (attempt_no > 0) {
            std::this_thread::sleep_for(backoff(options_.retry_backoff, attempt_no - 1));
        }
        Multipart mp(pieces, wires, size_);
        Response resp;
        resp.self = this;
        resp.offset = wires.front().first;
        resp.mp = &mp;
        void* headers = nullptr;
        if (Status s = setup(easy, resp, range, &headers, w); !s.ok()) {
            error = s;
            break;
        }
        const CURLcode rc = curl_easy_perform(static_cast<CURL*>(easy));
        curl_slist_free_all(static_cast<curl_slist*>(headers));
        bool retry = true;
        outcome = judge_multi(rc, resp, mp, w, covered, error, retry);
        if (outcome != MultiOutcome::kError || !retry) {
            break;
        }
        if (attempt_no < options_.max_retries &&
            Clock::now() + backoff(options_.retry_backoff, attempt_no) >= t_call_deadline) {
            break;  // the next attempt would start past the deadline
        }
        if (attempt_no == options_.max_retries) {
            error = after_attempts(error, attempt_no + 1);
        }
    }
    give_back(easy);
    return outcome;
}

Status HttpRangeSource::Impl::read_ranges(std::span<const ByteRange> ranges) {
    const CallDeadline deadline(options_.deadline);
    std::vector<ByteRange> pieces;
    pieces.reserve(ranges.size());
    for (const ByteRange& r : ranges) {
        HURRAY_RETURN_IF_ERROR(owner->check_range(r.offset, r.out.size()));
        if (r.out.empty()) {
            continue;
        }
        if (r.offset >= tail_offset_ && r.offset - tail_offset_ + r.out.size() <= tail_.size()) {
            // SAFETY: [r.offset - tail_offset_, + size) lies inside tail_
            // (checked just above; no overflow, both terms <= size_).
            std::memcpy(r.out.data(), tail_.data() + (r.offset - tail_offset_), r.out.size());
            continue;
        }
        pieces.push_back(ByteRange{r.offset, r.out.first(held_from_tail(r.offset, r.out))});
    }
    if (pieces.empty()) {
        return Status::success();
    }
    std::sort(pieces.begin(), pieces.end(),
              [](const ByteRange& a, const ByteRange& b) { return a.offset < b.offset; });
    // Wires: the pieces merged when adjacent or at most merge_gap apart.
    // check_range: offset + size <= size_, so no sum below overflows.
    std::vector<Wire> wires;
    for (size_t i = 0; i < pieces.size(); ++i) {
        const uint64_t first = pieces[i].offset;
        const uint64_t last = first + pieces[i].out.size() - 1;
        if (!wires.empty() && first <= wires.back().last) {
            return Error(ErrorCode::kInvalidArgument,
                         display_url_ + ": read_ranges: bytes [" + dec(first) + ", " + dec(last + 1) +
                             ") overlap another range");
        }
        if (!wires.empty() && first - wires.back().last - 1 <= options_.merge_gap) {
            wires.back().last = last;
            wires.back().piece_end = i + 1;
        } else {
            wires.push_back({first, last, i, i + 1});
        }
    }
    // Multi-range requests, as many ranges each as the header budget allows:
    // one at a time until one within the budget has passed (a refused
    // budget is halved: no burst of refusals), then `parallel` at once.
    std::vector<size_t> single;  // wires left for single-range requests
    std::vector<std::pair<size_t, size_t>> todo{{0, wires.size()}};  // runs of wires [i, j)
    constexpr size_t kRangePrefix = 13;  // "Range: bytes="
    while (!todo.empty()) {
        if (no_multi_.load(std::memory_order_relaxed)) {
            for (const auto& [i, j] : todo) {
                for (size_t k = i; k < j; ++k) {
                    single.push_back(k);
                }
            }
            break;
        }
        // Adjacent runs joined, then every run packed into batches within
        // the budget.
        std::sort(todo.begin(), todo.end());
        std::vector<std::pair<size_t, size_t>> runs;
        for (const auto& r : todo) {
            if (!runs.empty() && runs.back().second == r.first) {
                runs.back().second = r.second;
            } else {
                runs.push_back(r);
            }
        }
        // The budget, and what libcurl can send: a longer request would fail
        // before a byte is sent (past_curl_limit).
        const size_t overhead = request_overhead(url_, options_.headers, etag_) + 3;  // Range CRLF, NUL
        const size_t limit = curl_request_limit();
        const size_t budget = std::min(range_budget_.load(std::memory_order_relaxed),
                                       overhead < limit ? limit - overhead : size_t{1});
        std::vector<std::pair<size_t, size_t>> batches;
        std::vector<size_t> lengths;  // of each batch's Range header line
        for (const auto& [from, to] : runs) {
            size_t i = from;
            while (i < to) {
                size_t len = kRangePrefix;
                size_t j = i;
                while (j < to) {
                    const size_t add = dec(wires[j].first).size() + 1 + dec(wires[j].last).size() + (j > i ? 1 : 0);
                    if (j > i && len + add > budget) {
                        break;
                    }
                    len += add;
                    ++j;
                }
                if (j - i == 1) {
                    single.push_back(i);
                } else {
                    batches.emplace_back(i, j);
                    lengths.push_back(len);
                }
                i = j;
            }
        }
        todo.clear();
        if (batches.empty()) {
            break;
        }
        // Unconfirmed budget: the first batch alone; the others wait.
        const bool at_once = budget_confirmed_.load(std::memory_order_relaxed);
        const size_t run = at_once ? batches.size() : 1;
        for (size_t b = run; b < batches.size(); ++b) {
            todo.push_back(batches[b]);
        }
        std::vector<Job> jobs(run);
        for (size_t b = 0; b < run; ++b) {
            jobs[b].wires = std::span<const Wire>(wires).subspan(batches[b].first, batches[b].second - batches[b].first);
        }
        if (run == 1) {
            Status error = Status::success();
            jobs[0].outcome = fetch_multi(jobs[0].wires, pieces, jobs[0].covered, error);
            if (jobs[0].outcome == MultiOutcome::kError) {
                return error;
            }
        } else {
            HURRAY_RETURN_IF_ERROR(fetch_parallel(jobs, pieces));
        }
        for (size_t b = 0; b < run; ++b) {
            const auto [i, j] = batches[b];
            switch (jobs[b].outcome) {
                case MultiOutcome::kDone:
                    budget_confirmed_.store(true, std::memory_order_relaxed);
                    break;
                case MultiOutcome::kTooLarge: {
                    // Halve (and remember) the budget; the same wires go again
                    // in smaller requests, down to one range per request.
                    const size_t want = lengths[b] / 2;
                    size_t cur = range_budget_.load(std::memory_order_relaxed);
                    while (cur > want &&
                           !range_budget_.compare_exchange_weak(cur, want, std::memory_order_relaxed)) {
                    }
                    budget_confirmed_.store(false, std::memory_order_relaxed);
                    todo.emplace_back(i, j);
                    break;
                }
                case MultiOutcome::kNoMulti:
                    // 200: the first range is kept when its first bytes
                    // brought it; the others go in single-range requests.
                    no_multi_.store(true, std::memory_order_relaxed);
                    for (size_t k = i; k < j; ++k) {
                        if (k - i >= jobs[b].covered.size() || jobs[b].covered[k - i] == 0) {
                            single.push_back(k);
                        }
                    }
                    break;
                case MultiOutcome::kPartial:
                    // One part for several ranges: what it brought is checked
                    // and kept; the server is taken as without multi-range
                    // support.
                    no_multi_.store(true, std::memory_order_relaxed);
                    for (size_t k = i; k < j; ++k) {
                        if (jobs[b].covered[k - i] == 0) {
                            single.push_back(k);
                        }
                    }
                    break;
                case MultiOutcome::kError:
                    break;  // fetch_parallel returned the error
            }
        }
    }
    if (single.empty()) {
        return Status::success();
    }
    // Single-range requests, `parallel` at once: straight into the caller's
    // buffer when a wire is one piece, else into a buffer then scattered.
    std::vector<Job> parts;
    std::vector<std::vector<uint8_t>> buffers;
    std::vector<size_t> buffered;  // the wire of each buffer
    for (const size_t k : single) {
        const Wire& w = wires[k];
        if (w.piece_end - w.piece_begin == 1) {
            parts.push_back(Job{pieces[w.piece_begin], {}, {}, {}});  // the wire is exactly the piece
            continue;
        }
        buffers.emplace_back(static_cast<size_t>(w.last - w.first + 1));
        buffered.push_back(k);
    }
    for (size_t b = 0; b < buffers.size(); ++b) {
        parts.push_back(Job{{wires[buffered[b]].first, buffers[b]}, {}, {}, {}});
    }
    HURRAY_RETURN_IF_ERROR(fetch_parallel(parts, pieces));
    for (size_t b = 0; b < buffers.size(); ++b) {
        const Wire& w = wires[buffered[b]];
        for (size_t p = w.piece_begin; p < w.piece_end; ++p) {
            // SAFETY: the piece [offset, offset + size) lies inside the wire
            // [first, last], which is the buffer.
            std::memcpy(pieces[p].out.data(), buffers[b].data() + (pieces[p].offset - w.first), pieces[p].out.size());
        }
    }
    return Status::success();
}

}  // namespace hurray::http
