#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""Request spans sent the way the OpenTelemetry SDK sends them are all kept.

The SDK's BatchSpanProcessor exports every 5 s (its default scheduledDelayMillis), so a span
reaches the agent up to ~5 s after it ended: after the window it ended in has closed. Before the
agent kept span windows open for a grace period, 43% of such spans were dropped as late.

  - `inferscope agent --window 2s --no-nvml --no-scrape` (a window shorter than the exporter's
    delay: every export carries spans of windows already past their end);
  - tests/otel/send_spans.mjs --live-seconds 20: the real JS SDK, default BatchSpanProcessor,
    80 vLLM request spans ending in real time, the last batch also on the 5 s timer (every
    export reuses the connection after 5 s idle: the agent answers "Connection: close" so that
    cannot cross the server's keep-alive close);
  - SIGTERM to the agent, then `inferscope report --format json` and the store's rows.
Checked: every span counted (requests and tokens equal what was sent), no span dropped for any
reason, and each stored span window holds exactly the spans that ended inside it (late spans
went to the window they belong to, one row per window); the text report has no drop line.

Exit 0 ok, 1 failure, 77 skipped (no node or no tests/otel/node_modules).
"""

import argparse
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

from live_common import agent_endpoints, agent_token, inflate_payload, wait_for_socket, stop_agent

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DROP_COUNTERS = ["dropped_over_limit", "dropped_bad_timestamps", "dropped_late",
                 "dropped_future", "dropped_buffer_full"]


class Failure(Exception):
    pass


def payload_json(blob):
    """A stored payload: a 5-byte header, then compressed (live_common.inflate_payload) or plain
    JSON (src/store)."""
    try:
        return json.loads(inflate_payload(blob))
    except ValueError:
        return json.loads(blob[5:])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--inferscope", required=True)
    parser.add_argument("--replay-engine")  # passed to every live test; not needed here
    parser.add_argument("--node", default=shutil.which("node"))
    parser.add_argument("--window", default="2s")
    # 20 s: four exports reuse a connection idle for the SDK's 5 s, the server's keep-alive
    # timeout too (an export crossing the server's close was lost: "socket hang up").
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--spans", type=int, default=80)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    client = os.path.join(REPO, "tests", "otel", "send_spans.mjs")
    if not args.node or not os.path.isdir(os.path.join(REPO, "tests", "otel", "node_modules")):
        print("SKIP: needs node and `npm ci --prefix tests/otel` (the OpenTelemetry JS SDK)")
        return 77

    work = tempfile.mkdtemp(prefix="inferscope-span-cadence-")
    state = os.path.join(work, "state")
    agent_log = os.path.join(work, "agent.log")
    agent = subprocess.Popen(
        [args.inferscope, "agent", "--state-dir", state, "--http-port", "0", "--window",
         args.window, "--no-nvml", "--no-scrape"],
        stdout=subprocess.DEVNULL, stderr=open(agent_log, "w"))
    failures = []
    try:
        if not wait_for_socket(os.path.join(state, "agent.sock"), timeout_s=15):
            raise Failure("the agent did not start (see %s)" % agent_log)
        endpoint = agent_endpoints(state)["otlp_http"]
        # The agent's token as `inferscope run --enable-otel` hands it to an engine's exporter.
        env = dict(os.environ, OTEL_EXPORTER_OTLP_TRACES_HEADERS="authorization=Bearer%20" +
                   agent_token(state))
        node = subprocess.run(
            [args.node, client, "--endpoint", endpoint, "--protocol", "proto", "--count",
             str(args.spans), "--live-seconds", str(args.seconds)],
            capture_output=True, text=True, timeout=args.seconds + 60, env=env)
        if node.returncode != 0:
            raise Failure("send_spans.mjs failed (%d): %s" % (node.returncode, node.stderr[-400:]))
        sent = json.loads(node.stdout.strip().splitlines()[-1])
    finally:
        if not stop_agent(agent, 30):
            failures.append("the agent did not stop on SIGTERM")
    if agent.returncode != 0:
        failures.append("agent exit status %s" % agent.returncode)

    def inferscope(*argv):
        r = subprocess.run([args.inferscope, *argv], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise Failure("inferscope %s failed (%d): %s" % (" ".join(argv), r.returncode,
                                                             r.stderr[-400:]))
        return r.stdout

    report = json.loads(inferscope("report", "--state-dir", state, "--last", "10m", "--format",
                                   "json"))
    requests = report.get("requests") or {}
    counters = requests.get("counters", {})
    print("sent %d request spans (+%d other) in %d exports; received %r, requests %r, dropped %s"
          % (sent["count"], sent["other_spans"], sent["exports"], counters.get("spans_received"),
             requests.get("requests"), {k: counters.get(k) for k in DROP_COUNTERS}))
    if requests.get("requests") != sent["count"]:
        failures.append("requests %r, sent %d" % (requests.get("requests"), sent["count"]))
    for key in ("prompt_tokens", "completion_tokens"):
        if requests.get(key) != sent[key]:
            failures.append("%s %r, sent %r" % (key, requests.get(key), sent[key]))
    if counters.get("spans_received") != sent["count"] + sent["other_spans"]:
        failures.append("spans_received %r, sent %d" % (counters.get("spans_received"),
                                                        sent["count"] + sent["other_spans"]))
    for key in DROP_COUNTERS:
        if counters.get(key) != 0:
            failures.append("%s = %r, want 0" % (key, counters.get(key)))

    # Each stored span window holds the spans that ended inside it, and there is one per window.
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(state, "inferscope.db"), uri=True)
    rows = db.execute("SELECT start_ns, end_ns, payload FROM telemetry WHERE kind = 'spans' "
                      "ORDER BY start_ns").fetchall()
    db.close()
    bounds = [(s, e) for s, e, _ in rows]
    if len(set(bounds)) != len(bounds):
        failures.append("a span window was stored twice: %r" % bounds)
    ends = [int(e) for e in sent["end_ns"]]
    stored = 0
    for start, end, blob in rows:
        w = payload_json(blob)
        want = sum(1 for e in ends if start <= e < end)
        stored += w.get("requests", 0)
        if w.get("requests") != want:
            failures.append("window [%d, %d): %r requests stored, %d spans ended in it" %
                            (start, end, w.get("requests"), want))
    if stored != sent["count"]:
        failures.append("%d requests in %d stored windows, sent %d" % (stored, len(rows),
                                                                      sent["count"]))

    text = inferscope("report", "--state-dir", state, "--last", "10m")
    if "Requests (OpenTelemetry spans)" not in text:
        failures.append("the text report has no requests section")
    if "dropped" in text.split("Requests (OpenTelemetry spans)")[-1]:
        failures.append("the text report shows dropped spans:\n" + text)

    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    if failures:
        print("agent log:\n" + open(agent_log, errors="replace").read(), file=sys.stderr)
        print("kept " + work, file=sys.stderr)
        return 1
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    print("OK: %d spans at the SDK's default cadence, 0 dropped, each in its own window"
          % sent["count"])
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failure as e:
        print("FAIL: %s" % e, file=sys.stderr)
        sys.exit(1)
