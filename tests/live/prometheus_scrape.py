#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""A real Prometheus scrapes the agent's /metrics and answers PromQL with the report's figures.

Starts `inferscope agent --state-dir D --http-port 0` (the bound /metrics URL is in D/agent.json),
replays one shared trace through `inferscope run --state-dir D -- replay_engine --speed 0 TRACE`,
starts the Debian `prometheus` with a generated config scraping that URL every second (its TSDB
in a temp dir, its web API on a free loopback port), waits until a scrape has seen every window,
then asks Prometheus's HTTP API, e.g. `sum by (category) (inferscope_gpu_kernel_seconds_total)`,
and compares the answers with `inferscope report --state-dir D --last 24h --format json`
(kernel time and count per category, busy time, host sync waits per type, idle time per cause,
kernel launches and their CPU time, dropped records, the processes). Bounded: everything is stopped within --timeout seconds.

Usage: prometheus_scrape.py --inferscope BIN --replay-engine BIN [--prometheus BIN] [--trace NAME]
Exit codes: 0 equal, 1 a difference or failure, 77 skipped (no prometheus, no shared traces).
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

from live_common import REPO, agent_token, shared_trace, shared_traces, wait_for_socket

# Two ranks (two processes) over several 1 s windows; any shared trace works (--trace).
DEFAULT_TRACE = "h100_2gpu_1s.sqlite"


class Failure(Exception):
    pass


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def http_get(url, timeout=2.0, token=None):
    req = urllib.request.Request(url, headers={"Authorization": "Bearer " + token} if token else {})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.read().decode("utf-8")


class Deadline:
    def __init__(self, seconds):
        self.end = time.time() + seconds

    def left(self):
        return max(0.0, self.end - time.time())

    def check(self, what):
        if time.time() > self.end:
            raise Failure("timed out " + what)


def wait_for(deadline, what, probe, period=0.1):
    """Calls probe() until it returns something truthy; raises Failure at the deadline."""
    last_error = None
    while True:
        try:
            value = probe()
            if value:
                return value
        except (OSError, ValueError, KeyError, urllib.error.URLError) as e:
            last_error = e
        if deadline.left() <= 0:
            raise Failure("timed out %s%s" % (what, " (%s)" % last_error if last_error else ""))
        time.sleep(period)


def promql(base, query):
    """Instant query -> {labels-tuple: float}; labels-tuple is sorted (name, value) pairs."""
    body = json.loads(http_get(base + "/api/v1/query?" + urllib.parse.urlencode({"query": query})))
    if body.get("status") != "success":
        raise Failure("query %s: %s" % (query, body))
    out = {}
    for r in body["data"]["result"]:
        out[tuple(sorted(r["metric"].items()))] = float(r["value"][1])
    return out


def scalar(result):
    """The single value of an aggregated query (0 when the vector is empty)."""
    if not result:
        return 0.0
    if len(result) != 1:
        raise Failure("expected one series, got %r" % result)
    return next(iter(result.values()))


def by_label(result, label):
    return {dict(k)[label]: v for k, v in result.items()}


def close(a, b):
    """Equal within float rounding: seconds are nanosecond sums divided by 1e9."""
    return abs(a - b) <= 1e-9 + 1e-12 * max(abs(a), abs(b))


def expected_from_report(report):
    """The report's figures in the units /metrics uses (seconds, counts)."""
    e = {"kernel_s": {}, "kernels": {}, "busy_s": 0.0, "sync_s": {}, "dropped": 0, "pids": set(),
         "idle_s": {}, "launches": 0.0, "launch_cpu_s": 0.0}
    for r in report["ranks"]:
        e["pids"].add(str(r["pid"]))
        e["busy_s"] += r["temporal_breakdown"]["busy_ns"] / 1e9
        for cat, stats in r["categories"].items():
            if stats["count"] == 0:
                continue
            e["kernel_s"][cat] = e["kernel_s"].get(cat, 0.0) + stats["time_ns"] / 1e9
            e["kernels"][cat] = e["kernels"].get(cat, 0) + stats["count"]
        for kind, stats in r.get("sync_waits", {}).items():
            if stats.get("count", 0):
                e["sync_s"][kind] = e["sync_s"].get(kind, 0.0) + stats["total_ns"] / 1e9
        e["dropped"] += r.get("data_quality", {}).get("records_dropped", 0)
        for cause, stats in r.get("idle_causes", {}).items():
            if isinstance(stats, dict) and stats.get("total_ns", 0):
                e["idle_s"][cause] = e["idle_s"].get(cause, 0.0) + stats["total_ns"] / 1e9
        launch = r.get("launch", {})
        e["launches"] += launch.get("cpu_launch_count", 0)
        e["launch_cpu_s"] += launch.get("cpu_launch_total_ns", 0) / 1e9
    return e


def compare(expected, got):
    problems = []

    def same_map(label, a, b):
        for key in sorted(set(a) | set(b)):
            x, y = a.get(key, 0.0), b.get(key, 0.0)
            if not close(x, y):
                problems.append("%s[%s]: report %r, Prometheus %r" % (label, key, x, y))

    same_map("kernel seconds", expected["kernel_s"], got["kernel_s"])
    same_map("kernels", {k: float(v) for k, v in expected["kernels"].items()}, got["kernels"])
    same_map("host sync wait seconds", expected["sync_s"], got["sync_s"])
    same_map("idle seconds by cause", expected["idle_s"], got["idle_s"])
    same_map("kernel launches", {"all": expected["launches"]}, {"all": got["launches"]})
    same_map("launch CPU seconds", {"all": expected["launch_cpu_s"]}, {"all": got["launch_cpu_s"]})
    if not close(sum(expected["kernel_s"].values()), got["kernel_total_s"]):
        problems.append("sum(inferscope_gpu_kernel_seconds_total): report %r, Prometheus %r" %
                        (sum(expected["kernel_s"].values()), got["kernel_total_s"]))
    if not close(expected["busy_s"], got["busy_s"]):
        problems.append("busy seconds: report %r, Prometheus %r" % (expected["busy_s"],
                                                                   got["busy_s"]))
    if expected["dropped"] != got["dropped"]:
        problems.append("records dropped: report %r, Prometheus %r" % (expected["dropped"],
                                                                      got["dropped"]))
    if expected["pids"] != got["pids"]:
        problems.append("processes: report %r, Prometheus %r" % (sorted(expected["pids"]),
                                                                 sorted(got["pids"])))
    if not expected["kernel_s"]:
        problems.append("the report has no kernels: nothing was compared")
    return problems


def stop(proc, name, problems, timeout=10):
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        problems.append("%s did not stop on SIGTERM" % name)


def run(args, trace, work):
    deadline = Deadline(args.timeout)
    state = os.path.join(work, "state")
    os.makedirs(state)
    agent = prometheus = None
    problems = []
    try:
        agent = subprocess.Popen(
            [args.inferscope, "agent", "--state-dir", state, "--http-port", "0"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "agent.log"), "w"))
        if not wait_for_socket(os.path.join(state, "agent.sock"), timeout_s=min(10, deadline.left())):
            raise Failure("the agent did not start (see %s/agent.log)" % work)
        endpoints = wait_for(deadline, "for agent.json", lambda: json.load(
            open(os.path.join(state, "agent.json")))["endpoints"])
        metrics_url = endpoints["metrics"]
        api_url = endpoints["api"]
        try:
            http_get(metrics_url)
        except urllib.error.HTTPError as e:
            raise Failure("the agent does not serve %s (HTTP %d)" % (metrics_url, e.code))

        replay = subprocess.run(
            [args.inferscope, "run", "--state-dir", state, "--no-agent", "--window", "1s", "--",
             args.replay_engine, "--speed", "0", trace],
            env=dict(os.environ, INFERSCOPE_LOG="error"), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, timeout=max(1, deadline.left() - 20))
        if replay.returncode != 0:
            raise Failure("replay failed (%d): %s" % (replay.returncode, replay.stderr[-500:]))

        # Every window is in /metrics once no process is connected (its goodbye came after its
        # windows) and the agent stored what it received.
        def settled():
            status = json.loads(http_get(api_url + "/status", token=agent_token(state)))
            agent_status = status.get("agent", status)
            received = agent_status.get("windows_received")
            done = (agent_status.get("connected_processes") == 0 and
                    received == agent_status.get("windows_stored"))
            return received if received and done else None
        windows = wait_for(deadline, "for the agent to store the windows", settled)
        promtool = os.path.join(os.path.dirname(args.prometheus), "promtool")
        if os.access(promtool, os.X_OK):  # the live output passes Prometheus's own linter
            lint = subprocess.run([promtool, "check", "metrics"], input=http_get(metrics_url),
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  timeout=max(1, deadline.left()))
            if lint.returncode != 0 or lint.stdout.strip():
                problems.append("promtool check metrics: " + lint.stdout.strip()[-500:])

        prom_port = free_port()
        target = urllib.parse.urlparse(metrics_url)
        config = os.path.join(work, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "scrape_configs:\n  - job_name: inferscope\n"
                    "    metrics_path: %s\n    static_configs:\n      - targets: ['%s']\n" %
                    (target.path, target.netloc))
        prometheus = subprocess.Popen(
            [args.prometheus, "--config.file=" + config,
             "--storage.tsdb.path=" + os.path.join(work, "tsdb"),
             "--web.listen-address=127.0.0.1:%d" % prom_port, "--log.level=warn"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "prometheus.log"), "w"))
        prom = "http://127.0.0.1:%d" % prom_port
        wait_for(deadline, "for a scrape with every window", lambda: scalar(promql(
            prom, 'sum(inferscope_agent_windows_received_total{job="inferscope"})')) == windows,
            period=0.25)
        up = scalar(promql(prom, 'up{job="inferscope"}'))
        if up != 1:
            problems.append("up{job=\"inferscope\"} is %r" % up)

        got = {
            "kernel_total_s": scalar(promql(prom, "sum(inferscope_gpu_kernel_seconds_total)")),
            "kernel_s": by_label(promql(
                prom, "sum by (category) (inferscope_gpu_kernel_seconds_total)"), "category"),
            "kernels": by_label(promql(
                prom, "sum by (category) (inferscope_gpu_kernels_total)"), "category"),
            "busy_s": scalar(promql(prom, "sum(inferscope_gpu_busy_seconds_total)")),
            "sync_s": by_label(promql(
                prom, "sum by (type) (inferscope_host_sync_wait_seconds_total)"), "type"),
            "dropped": int(scalar(promql(prom, "sum(inferscope_records_dropped_total)"))),
            "idle_s": by_label(promql(
                prom, "sum by (cause) (inferscope_gpu_idle_seconds_total)"), "cause"),
            # Absent (no launch records) reads as 0, as the report's counts do.
            "launches": scalar(promql(prom, "sum(inferscope_kernel_launches_total)")),
            "launch_cpu_s": scalar(promql(
                prom, "sum(inferscope_kernel_launch_cpu_seconds_total)")),
            "pids": set(by_label(promql(prom, "count by (pid) (inferscope_windows_total)"),
                                 "pid")),
        }
        windows_in_prom = scalar(promql(prom, "sum(inferscope_windows_total)"))
        if windows_in_prom != windows:
            problems.append("sum(inferscope_windows_total) %r, the agent received %r" %
                            (windows_in_prom, windows))
    finally:
        stop(prometheus, "prometheus", problems)
        stop(agent, "the agent", problems, timeout=max(5, deadline.left()))
    if agent.returncode not in (0, None):
        problems.append("the agent exited with status %d (see %s/agent.log)" %
                        (agent.returncode, work))

    report = subprocess.run([args.inferscope, "report", "--state-dir", state, "--last", "24h",
                             "--format", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, timeout=max(5, deadline.left()))
    if report.returncode != 0:
        raise Failure("report failed (%d): %s" % (report.returncode, report.stderr[-500:]))
    expected = expected_from_report(json.loads(report.stdout))
    problems += compare(expected, got)
    print("compared %d categories, %d sync types, %d idle causes, %d processes, %d windows: "
          "%.6f s of kernels, %.6f s busy, %.6f s idle, %d launches" %
          (len(expected["kernel_s"]), len(expected["sync_s"]), len(expected["idle_s"]),
           len(expected["pids"]), windows, got["kernel_total_s"], got["busy_s"],
           sum(got["idle_s"].values()), got["launches"]))
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--inferscope", required=True)
    p.add_argument("--replay-engine", required=True)
    p.add_argument("--prometheus", default="/usr/bin/prometheus")
    p.add_argument("--trace", default=DEFAULT_TRACE,
                   help="file name of a shared trace, or a path (default: %s)" % DEFAULT_TRACE)
    p.add_argument("--timeout", type=float, default=55.0, help="seconds for the whole test")
    args = p.parse_args()
    if not os.access(args.prometheus, os.X_OK):
        print("SKIP: %s not found (Debian package prometheus)" % args.prometheus)
        return 77
    trace = args.trace if os.path.isfile(args.trace) else None
    if trace is None:
        if not shared_traces():
            # A fresh clone: the bundled example (2-GPU vLLM decode the project generates).
            trace = os.path.join(REPO, "examples", "vllm_tp2_decode", "rank0.json.gz")
            print("note: ../shared/traces not found: scraping a replay of the bundled %s" %
                  os.path.relpath(trace, REPO))
        else:
            trace = shared_trace(args.trace)
        if trace is None:
            print("FAIL: no shared trace called %s" % args.trace)
            return 1
    work = tempfile.mkdtemp(prefix="inferscope_prom_")
    started = time.time()
    try:
        problems = run(args, trace, work)
    except (Failure, subprocess.TimeoutExpired, OSError, ValueError) as e:
        problems = [str(e)]
    print("%s %s (%.1f s)" % ("ok  " if not problems else "FAIL", os.path.basename(trace),
                              time.time() - started))
    for line in problems[:30]:
        print("  " + line)
    if problems:
        print("  logs and Prometheus data kept in " + work)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
