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
}
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

    def send_plain(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        try:
            self.answer()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading (as it should for some modes)

    def answer(self):
        m = re.fullmatch(r"/([a-z0-9-]+)(?:@(\d+))?/([A-Za-z0-9_.-]+)", self.path)
        if not m or m.group(1) not in MODES:
            return self.send_plain(404, b"no such mode or name\n")
        mode, at, name = m.groups()
        at = int(at) if at is not None else -1
        path = os.path.join(ROOT, name)
        if not os.path.isfile(path):
            return self.send_plain(404, b"not found\n")
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
        if m2.group(1) == "":
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
        if mode == "stall" or (mode == "stall-part" and first == at):
            self.send_response(206)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.flush()
            time.sleep(30)
            return
        if mode == "truncate":
            return self.send_truncated(body, headers)
        self.send_plain(206, body, headers)

    def send_truncated(self, body, headers):
        """206 announcing the whole body, then half of it and a closed connection."""
        self.send_response(206)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
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
            self.send_response(206)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.flush()
            for i in range(0, len(body), 7):
                self.wfile.write(body[i:i + 7])
                self.wfile.flush()
            return
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
