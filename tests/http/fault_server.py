#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A fault-injecting HTTP server for the hurray::http tests (127.0.0.1 only).

Usage: fault_server.py DIR
Serves the files of DIR at /MODE/NAME, where MODE says how to answer range
requests (see MODES); the modes ending in "-part" take a byte offset X as
/MODE@X/NAME and misbehave only for ranges starting at X (one part of a
parallel read). Multi-range requests (Range: bytes=a-b,c-d) get a
multipart/byteranges answer unless the mode says otherwise. Listens on a free port of 127.0.0.1 and prints it on
the first line of stdout. Stops on SIGTERM or when stdin reaches its end
(the test that started it went away).
"""
import hashlib
import hmac
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODES = {
    "ok": "correct 206 answers",
    "ignore-range": "200 with the whole body",
    "truncate": "206 whose body stops halfway (the connection is closed)",
    "wrong-range": "206 with a Content-Range one byte early",
    "wrong-range-later": "correct at the first request, then a Content-Range one byte early",
    "no-range": "206 without a Content-Range",
    "flaky": "503 for the first two requests of each file, then correct answers",
    "etag-change": "the ETag changes after the first request; If-Match honoured (412)",
    "etag-change-no-if-match": "the ETag changes after the first request; If-Match ignored",
    "stall": "headers, then silence for 30 s",
    "redirect": "302 to /ok/NAME",
    "long-body": "206 with a correct Content-Range but one byte too many",
    "gzip": "206 with Content-Encoding: gzip",
    "multi-ignore": "multi-range requests: 200 with a body of 16 MiB (the file repeated)",
    "multi-200": "multi-range requests: 200 with the whole file (a server without multi-range support)",
    "multi-first": "multi-range requests: a single-part 206 with the first range only",
    "multi-coalesce": "multi-range requests: one single-part 206 from the first to the last byte asked",
    "multi-no-boundary": "multi-range requests: multipart/byteranges without a boundary",
    "multi-wrong-part": "multi-range requests: the second part's Content-Range one byte early",
    "multi-outside": "multi-range requests: the last part replaced by 10 bytes after the ranges asked",
    "multi-truncate": "multi-range requests: the body stops halfway (the connection is closed)",
    "multi-no-close": "multi-range requests: no closing boundary",
    "multi-odd": "multi-range requests: a valid multipart body in an unusual form (a preamble, "
                 "a quoted boundary, padding after the delimiters, lower-case part headers, "
                 "the parts in reverse order)",
    "multi-dribble": "multi-range requests: a correct multipart body sent 7 bytes per write",
    "multi-431": "multi-range requests: 431 when the Range header is longer than 600 bytes",
    "delay": "correct answers, each 100 ms late",
    "flaky-part": "503 the first time a range starting at X is asked",
    "etag-part": "ETag \"v2\" for ranges starting at X (If-Match ignored)",
    "stall-part": "headers, then silence for 30 s, for ranges starting at X",
    "stall-from": "correct answers to the first X - 1 requests for a file, then headers and silence for 30 s",
    "redirect-loop": "302 to the same URL, forever",
    "huge-header": "206 with a 10 MB header line before the body",
    "trickle": "correct 206 headers, then the body at 16 bytes a second",
    "s3-quirks": "as s3rver 3.7.1: a suffix range bytes=-N answered with bytes 0-N, a multi-range "
                 "request with the whole file as one 206 range",
    "sigv4": "correct answers to requests signed with AWS Signature Version 4 by SIGV4_KEYS for "
             "region eu-west-3, service s3 (x-amz-content-sha256 signed too); else 403 with an S3 "
             "error body (SignatureDoesNotMatch, AccessDenied, ...)",
}
# Access key -> (secret, session token or None) of the "sigv4" mode.
SIGV4_KEYS = {
    "AKIDHURRAYTEST": ("hurray+test/secret/K7MDENG", None),
    "ASIAHURRAYTEST": ("hurray+temporary/secret", "hurray-session-token-1"),
}
SIGV4_REGION = "eu-west-3"
EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def sigv4_signature(secret, method, path, query, headers, signed, amz_date, scope, payload_hash):
    """AWS Signature Version 4 (docs.aws.amazon.com, "Create a signed AWS API request"):
    `headers` maps lower-case names to values; `signed` is the SignedHeaders list."""
    canon_q = "&".join(sorted(q for q in query.split("&") if q)) if query else ""
    canon_h = "".join("%s:%s\n" % (n, " ".join(headers.get(n, "").split())) for n in signed)
    creq = "\n".join([method, path, canon_q, canon_h, ";".join(signed), payload_hash])
    sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(creq.encode()).hexdigest()])
    date, region, service, _ = scope.split("/")
    key = ("AWS4" + secret).encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.new(key, sts.encode(), hashlib.sha256).hexdigest()


def sigv4_self_check():
    """The verifier against AWS's published example (GET /test.txt, Range bytes=0-9)."""
    got = sigv4_signature("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "GET", "/test.txt", "",
                          {"host": "examplebucket.s3.amazonaws.com", "range": "bytes=0-9",
                           "x-amz-content-sha256": EMPTY_SHA256, "x-amz-date": "20130524T000000Z"},
                          ["host", "range", "x-amz-content-sha256", "x-amz-date"], "20130524T000000Z",
                          "20130524/us-east-1/s3/aws4_request", EMPTY_SHA256)
    want = "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
    if got != want:
        sys.exit("fault_server.py: the SigV4 verifier gives %s for AWS's example, not %s" % (got, want))


def s3_error(code, message):
    return ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>%s</Code><Message>%s</Message>"
            "<RequestId>0</RequestId></Error>" % (code, message)).encode()
BOUNDARY = b"hurray-test-boundary-3f2a"


def multipart(data, ranges, close=True):
    size = len(data)
    out = []
    for first, last in ranges:
        out.append(b"\r\n--" + BOUNDARY + b"\r\nContent-Type: application/octet-stream\r\n")
        out.append(b"Content-Range: bytes %d-%d/%d\r\n\r\n" % (first, last, size))
        out.append(data[first:last + 1])
    if close:
        out.append(b"\r\n--" + BOUNDARY + b"--\r\n")
    return b"".join(out)

ROOT = sys.argv[1]
counts = {}
counts_lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY: headers and body go out as written, not ~40 ms apart
    # (Nagle's algorithm against the client's delayed ACK).
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):  # quiet
        pass

    def count(self, key):
        with counts_lock:
            counts[key] = counts.get(key, 0) + 1
            return counts[key]

    def send_head(self, status, headers, length):
        """The status line and headers of an answer of `length` body bytes, flushed."""
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(length))
        self.end_headers()
        self.wfile.flush()

    def send_plain(self, status, body=b"", headers=()):
        self.send_head(status, headers, len(body))
        self.wfile.write(body)

    def send_paced(self, body, headers, piece, pause):
        """206 with `body` sent `piece` bytes at a time, `pause` seconds apart."""
        self.send_head(206, headers, len(body))
        for i in range(0, len(body), piece):
            self.wfile.write(body[i:i + piece])
            self.wfile.flush()
            time.sleep(pause)

    def do_GET(self):
        try:
            self.answer()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading (as it should for some modes)

    def sigv4_refusal(self):
        """None when the request is signed as SIGV4_KEYS says, else (S3 code, message)."""
        auth = self.headers.get("Authorization")
        if auth is None:
            return ("AccessDenied", "Access Denied")
        m = re.fullmatch(r"AWS4-HMAC-SHA256 Credential=([^/,]+)/(\d{8}/[^/,]+/[^/,]+/aws4_request), *"
                         r"SignedHeaders=([a-z0-9;-]+), *Signature=([0-9a-f]{64})", auth)
        if not m:
            return ("AuthorizationHeaderMalformed", "The authorization header is malformed")
        key, scope, signed, signature = m.groups()
        if key not in SIGV4_KEYS:
            return ("InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.")
        secret, token = SIGV4_KEYS[key]
        _, region, service, _ = scope.split("/")
        if region != SIGV4_REGION or service != "s3":
            return ("AuthorizationHeaderMalformed", "the region '%s' is wrong; expecting '%s'" % (region, SIGV4_REGION))
        headers = {k.lower(): v for k, v in self.headers.items()}
        names = signed.split(";")
        for need in ("host", "x-amz-date", "x-amz-content-sha256"):
            if need not in names:
                return ("AccessDenied", "%s is not signed" % need)
        if headers.get("x-amz-content-sha256") != EMPTY_SHA256:
            return ("XAmzContentSHA256Mismatch", "x-amz-content-sha256 is not the hash of an empty body")
        if token is not None and (headers.get("x-amz-security-token") != token or
                                  "x-amz-security-token" not in names):
            return ("InvalidToken", "The provided token is malformed or otherwise invalid.")
        amz_date = headers.get("x-amz-date", "")
        try:
            when = time.mktime(time.strptime(amz_date, "%Y%m%dT%H%M%SZ")) - time.timezone
        except ValueError:
            return ("AccessDenied", "x-amz-date is not a date")
        if abs(when - time.time()) > 900 or not scope.startswith(amz_date[:8]):
            return ("RequestTimeTooSkewed", "The difference between the request time and the current time "
                    "is too large.")
        path, _, query = self.path.partition("?")
        want = sigv4_signature(secret, self.command, path, query, headers, names, amz_date, scope, EMPTY_SHA256)
        if not hmac.compare_digest(want, signature):
            return ("SignatureDoesNotMatch", "The request signature we calculated does not match the "
                    "signature you provided. Check your key and signing method.")
        return None

    def answer(self):
        m = re.fullmatch(r"/([a-z0-9-]+)(?:@(\d+))?/([A-Za-z0-9_.-]+)", self.path)
        if not m or m.group(1) not in MODES:
            return self.send_plain(404, b"no such mode or name\n")
        mode, at, name = m.groups()
        at = int(at) if at is not None else -1
        path = os.path.join(ROOT, name)
        if not os.path.isfile(path):
            return self.send_plain(404, b"not found\n")
        if mode == "sigv4":
            why = self.sigv4_refusal()
            if why is not None:
                return self.send_plain(403, s3_error(*why), [("Content-Type", "application/xml")])
        n = self.count(mode + "/" + name)
        if mode == "delay":
            time.sleep(0.1)
        with open(path, "rb") as f:
            data = f.read()
        etag = '"v1"'
        if mode.startswith("etag-change") and n > 1:
            etag = '"v2"'
        if mode == "redirect":
            return self.send_plain(302, b"", [("Location", "/ok/" + name)])
        if mode == "redirect-loop":
            return self.send_plain(302, b"", [("Location", self.path)])
        if mode == "huge-header":
            return self.send_plain(206, b"", [("X-Big", "x" * (10 * 1000 * 1000))])
        if mode == "flaky" and n <= 2:
            return self.send_plain(503, b"try again\n", [("Retry-After", "0")])
        if mode == "ignore-range":
            return self.send_plain(200, data, [("ETag", etag)])
        if mode == "etag-change":
            im = self.headers.get("If-Match")
            if im is not None and im != etag:
                return self.send_plain(412, b"precondition failed\n", [("ETag", etag)])
        rng = self.headers.get("Range", "")
        size = len(data)
        if "," in rng:
            return self.multi_range(mode, data, etag, rng)
        m2 = re.fullmatch(r"bytes=(\d*)-(\d*)", rng)
        if not m2 or (m2.group(1) == "" and m2.group(2) == ""):
            return self.send_plain(200, data, [("ETag", etag)])
        if m2.group(1) == "" and mode == "s3-quirks":
            first, last = 0, min(int(m2.group(2)), size - 1)  # s3rver's answer to bytes=-N
        elif m2.group(1) == "":
            count = min(int(m2.group(2)), size)
            first, last = size - count, size - 1
        else:
            first = int(m2.group(1))
            last = min(int(m2.group(2)) if m2.group(2) else size - 1, size - 1)
        if first > last or first >= size:
            return self.send_plain(416, b"", [("Content-Range", "bytes */%d" % size)])
        body = data[first:last + 1]
        cr = "bytes %d-%d/%d" % (first, last, size)
        if mode == "flaky-part" and first == at and self.count("flaky-part-at") == 1:
            return self.send_plain(503, b"try again\n", [("Retry-After", "0")])
        if mode == "etag-part" and first == at:
            etag = '"v2"'
        headers = [("ETag", etag), ("Accept-Ranges", "bytes")]
        if (mode == "wrong-range" or (mode == "wrong-range-later" and n > 1)) and first > 0:
            cr = "bytes %d-%d/%d" % (first - 1, last - 1, size)
        if mode == "gzip":
            headers.append(("Content-Encoding", "gzip"))
        if mode != "no-range":
            headers.append(("Content-Range", cr))
        if mode == "long-body":
            body = body + b"X"
        if mode == "stall" or (mode == "stall-part" and first == at) or (mode == "stall-from" and n >= at):
            self.send_head(206, headers, len(body))
            time.sleep(30)
            return
        if mode == "truncate":
            return self.send_truncated(body, headers)
        if mode == "trickle":
            return self.send_paced(body, headers, 16, 1.0)
        self.send_plain(206, body, headers)

    def send_truncated(self, body, headers):
        """206 announcing the whole body, then half of it and a closed connection."""
        self.send_head(206, headers, len(body))
        self.wfile.write(body[: len(body) // 2])
        self.wfile.flush()
        self.close_connection = True

    def multi_range(self, mode, data, etag, rng):
        size = len(data)
        if not rng.startswith("bytes="):
            return self.send_plain(400, b"bad range\n")
        ranges = []
        for spec in rng[6:].split(","):
            a, _, b = spec.strip().partition("-")
            ranges.append((int(a), min(int(b), size - 1)))
        if mode == "multi-431" and len(rng) > 600:
            return self.send_plain(431, b"request header fields too large\n")
        if mode == "multi-ignore":
            body = data * (16 * 1024 * 1024 // max(1, size) + 1)
            return self.send_plain(200, body, [("ETag", etag)])
        if mode == "s3-quirks":
            return self.send_plain(206, data, [("ETag", etag), ("Content-Range", "bytes 0-%d/%d" % (size - 1, size))])
        if mode == "multi-200":
            return self.send_plain(200, data, [("ETag", etag), ("Accept-Ranges", "bytes")])
        if mode in ("multi-first", "multi-coalesce"):
            first, last = ranges[0]
            if mode == "multi-coalesce":
                last = ranges[-1][1]
            return self.send_plain(206, data[first:last + 1],
                                   [("ETag", etag), ("Content-Range", "bytes %d-%d/%d" % (first, last, size))])
        ctype = "multipart/byteranges; boundary=" + BOUNDARY.decode()
        if mode == "multi-no-boundary":
            ctype = "multipart/byteranges"
        if mode == "multi-wrong-part" and len(ranges) > 1:
            first, last = ranges[1]
            ranges[1] = (first - 1, last - 1)
        if mode == "multi-outside":
            last = ranges[-1][1]
            ranges[-1] = (last + 1, min(last + 10, size - 1))
        body = multipart(data, ranges, close=(mode != "multi-no-close"))
        if mode == "multi-odd":
            ctype = 'multipart/byteranges; charset=x; boundary="' + BOUNDARY.decode() + '"'
            out = [b"This is the preamble.\r\n"]
            for first, last in reversed(ranges):
                out.append(b"--" + BOUNDARY + b" \t\r\ncontent-range: bytes %d-%d/%d\r\n" % (first, last, size))
                out.append(b"x-other: y\r\n\r\n" + data[first:last + 1] + b"\r\n")
            out.append(b"--" + BOUNDARY + b"--  \r\nepilogue\r\n")
            body = b"".join(out)
        headers = [("ETag", etag), ("Content-Type", ctype)]
        if mode == "multi-dribble":
            return self.send_paced(body, headers, 7, 0.0)
        if mode == "multi-truncate":
            return self.send_truncated(body, headers)
        self.send_plain(206, body, headers)


class Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # A client that closes or resets a connection it refused is expected.
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


def main():
    sigv4_self_check()
    server = Server(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)

    def watch_stdin():
        sys.stdin.read()
        server.shutdown()

    threading.Thread(target=watch_stdin, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
