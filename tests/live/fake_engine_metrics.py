#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""A fake inference engine /metrics endpoint that appears to serve load.

Serves a Prometheus text exposition read from a file at GET /metrics on 127.0.0.1 (an ephemeral
port unless --port is given). Scrape number s (0-based) multiplies every counter-like sample by
(1 + s): samples named *_total, *_count, *_sum or *_bucket, and every sample of a family declared
`# TYPE <name> counter`. So between two consecutive scrapes every counter grows by exactly the
file's value (the file reads as "what happened in one scrape interval"), histogram buckets stay
monotonic in `le` (all scaled by the same factor), and gauges (including prometheus_client's
*_created timestamps and summary quantiles) stay as written. Comment lines, label text, spacing and
timestamps are passed through byte for byte.

GET /scrapes answers {"scrapes": N} (how many /metrics bodies were served) without counting as a
scrape, so a test can compute the exact counter deltas an agent must have seen. A scrape is counted
when its request is read: one whose answer is held (`stalls`, below) past the client's timeout is
counted and never seen, as a real engine's counters advance whether or not anyone reads them.

Usage: fake_engine_metrics.py FILE [--port P]   (prints "listening on 127.0.0.1:PORT")
Also importable: FakeEngineMetrics(path, stalls={index: seconds}).start() -> port; .served();
.hold(index, seconds) or
.hold_first_after(unix_s, seconds) while running; .stop().
"""

import argparse
import http.server
import json
import re
import sys
import threading
import time

COUNTER_SUFFIXES = ("_total", "_count", "_sum", "_bucket")
_TYPE_RE = re.compile(r"#\s*TYPE\s+(\S+)\s+(\S+)")
_NAME_RE = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")


def _split_sample(line):
    """(name, text up to the value, value, rest) of a sample line, or None when it is not one.

    The labels are skipped quote-aware, so a '}' or ' ' inside a label value does not end them.
    """
    m = _NAME_RE.match(line)
    if not m:
        return None
    i = m.end()
    if i < len(line) and line[i] == "{":
        i += 1
        in_quotes = False
        while i < len(line):
            c = line[i]
            if in_quotes:
                if c == "\\":
                    i += 1
                elif c == '"':
                    in_quotes = False
            elif c == '"':
                in_quotes = True
            elif c == "}":
                break
            i += 1
        if i >= len(line):
            return None
        i += 1
    j = i
    while j < len(line) and line[j] in " \t":
        j += 1
    k = j
    while k < len(line) and line[k] not in " \t":
        k += 1
    if k == j:
        return None
    return m.group(0), line[:j], line[j:k], line[k:]


def _format_value(value):
    if value == int(value) and abs(value) < 2**53:
        return "%.1f" % value  # prometheus_client's style for whole numbers ("42.0")
    return repr(value)


class ScaledExposition:
    """The file's exposition, parsed once; body(factor) scales its counter-like samples."""

    def __init__(self, text):
        self.lines = text.splitlines()
        self.types = {}
        for line in self.lines:
            m = _TYPE_RE.match(line)
            if m:
                self.types.setdefault(m.group(1), m.group(2))

    def counter_like(self, name):
        declared = self.types.get(name)
        if declared == "counter":
            return True
        if declared is not None:  # a gauge/untyped family of exactly this name stays unchanged
            return False
        return name.endswith(COUNTER_SUFFIXES)

    def body(self, factor):
        out = []
        for line in self.lines:
            parts = None if line.startswith("#") else _split_sample(line)
            if parts is None or not self.counter_like(parts[0]):
                out.append(line)
                continue
            name, head, value, rest = parts
            try:
                v = float(value)
            except ValueError:
                out.append(line)
                continue
            if v != v or v in (float("inf"), float("-inf")):
                out.append(line)
                continue
            out.append(head + _format_value(v * factor) + rest)
        return ("\n".join(out) + "\n").encode("utf-8")


class FakeEngineMetrics:
    """A loopback HTTP server thread serving ScaledExposition bodies; counts the scrapes."""

    def __init__(self, path, port=0, stalls=None):
        with open(path, encoding="utf-8") as f:
            self.exposition = ScaledExposition(f.read())
        # scrape index (0-based) -> seconds its answer is held after it was counted: a scraper
        # whose timeout is shorter abandons that GET, an interval it never sees.
        self.stalls = dict(stalls or {})
        self.hold_from = None  # (unix time, seconds): hold the first scrape read from then on
        self.scrapes = 0
        self.scrape_times = []  # time.time() of each /metrics answer
        self.lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path == "/metrics":
                    with outer.lock:
                        factor = 1 + outer.scrapes
                        outer.scrapes += 1
                        outer.scrape_times.append(time.time())
                        hold_s = outer.stalls.get(factor - 1, 0)
                        if outer.hold_from is not None and time.time() >= outer.hold_from[0]:
                            hold_s, outer.hold_from = outer.hold_from[1], None
                    if hold_s:  # counted already: what a scraper that gives up never sees
                        time.sleep(hold_s)
                    self.reply(outer.exposition.body(factor),
                               "text/plain; version=0.0.4; charset=utf-8")
                elif self.path == "/scrapes":
                    with outer.lock:
                        n = outer.scrapes
                    self.reply(json.dumps({"scrapes": n}).encode(), "application/json")
                else:
                    self.reply(b"not found\n", "text/plain", 404)

            def reply(self, body, content_type, status=200):
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a held answer): counted, never seen

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.thread = None

    @property
    def port(self):
        return self.server.server_address[1]

    @property
    def url(self):
        return "http://127.0.0.1:%d/metrics" % self.port

    def served(self):
        with self.lock:
            return self.scrapes

    def hold(self, index, seconds):
        """Holds the answer to scrape `index` (0-based, not served yet) for `seconds`."""
        with self.lock:
            if index < self.scrapes:
                raise ValueError("scrape %d was served already (%d so far)" % (index, self.scrapes))
            self.stalls[index] = seconds

    def hold_first_after(self, unix_s, seconds):
        """Holds the answer to the first scrape read at or after `unix_s` for `seconds`."""
        with self.lock:
            self.hold_from = (unix_s, seconds)

    def start(self):
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self.port

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("file", help="Prometheus text exposition to serve")
    p.add_argument("--port", type=int, default=0)
    args = p.parse_args()
    fake = FakeEngineMetrics(args.file, args.port)
    print("listening on 127.0.0.1:%d" % fake.port, flush=True)
    try:
        fake.server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
