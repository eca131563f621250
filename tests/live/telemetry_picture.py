#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""The whole picture: kernels, GPU metrics, engine metrics and request spans of the same
windows in one `inferscope report`, and no request content anywhere in the store or the API.

Per engine (vllm: the real exposition ../shared/reference/vllm-metrics-sample.txt; sglang:
tests/data/engine_metrics/sglang.txt):
  - fake_engine_metrics.py serves the engine's body, counters growing by the file's values per
    scrape;
  - `inferscope agent --window 1s --scrape-interval 1s --gpu-sample-interval 250ms --metrics-url
    <fake> --nvml-library <fake NVML>` with FAKE_NVML_SCENARIO="devices=2;arch=hopper,ampere";
  - `inferscope run --window 1s -- replay_engine --loop-for 5` of the shared Qwen decode trace;
  - tests/otel/send_spans.mjs (the real OpenTelemetry JS SDK, OTLP/protobuf) sends N vLLM request
    spans carrying prompts, completions and raw request ids marked with a secret, all ending in
    one chosen 1 s window W in the middle of the replay;
  - SIGTERM to the agent (it stores everything), then `inferscope report --format json`.
Checked over the whole range: kernel categories; 2 GPUs whose min/max equal the fake NVML's
deterministic values exactly (docs/gpu-metrics.md); the engine, its counters equal to the file's
values times the fake's scrapes the agent's deltas span, and the rates per covered second of
scrape interval. The fake counts a GET when it reads it, so one the agent abandoned (its answer
came after the agent's 2 s timeout) advanced the fake's counters unseen: the agent counts those
(`scrapes_abandoned`, and `abandoned_spanned` in the window whose deltas span them), and the fake's
count must equal the agent's stored scrapes plus its abandoned GETs exactly. The sglang case holds
one answer past the agent's timeout on purpose (the GET 3 s before W's scrape), so that path runs
every time: W's deltas then span two of the fake's intervals, and its rates say so exactly; N requests with the SDK's token counts and stage sums. Over W alone (--from/--to):
all of kernels, GPUs, engine and requests present, on the same window bounds. The text report has
the three telemetry sections. The secret (and the other content markers) must appear nowhere: not
in any column of any table of the store (payloads inflated), the raw bytes of every file in
the state dir (db, WAL), the agent's log, the reports, or any API answer and /metrics.

Without node or tests/otel/node_modules the spans part is skipped with a message (the rest still
runs) unless INFERSCOPE_REQUIRE_OTEL=1, which makes that a failure (CI).

Usage: telemetry_picture.py --inferscope BIN --replay-engine BIN --fake-nvml LIB
                            [--engines vllm,sglang] [--spans N] [--keep]
Exit 0 ok, 1 failure, 77 skipped (no shared traces or no fake NVML).
"""

import argparse
import json
import math
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from fake_engine_metrics import FakeEngineMetrics
from live_common import (REPO, agent_token, inflate_payload, shared_trace, shared_traces_root,
                         stop_agent, wait_for_socket)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TRACE = "Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"  # LLM decode steps, 1,465 kernels in 50 ms
SCENARIO = "devices=2;arch=hopper,ampere"
WINDOW_NS = 1_000_000_000
GPM_METRICS = ["gpm_dram_bw_util_pct", "gpm_sm_active_pct", "gpm_sm_occupancy_pct",
               "gpm_tensor_active_pct"]
# What send_spans.mjs puts in prompts, completions, request ids, events and resource attributes.
SECRET = "PROMPT-SECRET-7f3a"
CONTENT_MARKERS = [SECRET, "RAWID", "roses are red", "write a poem", "http.request.body"]
# Engine signal -> the family the agent maps it from (docs/engine-metrics.md).
ENGINE_COUNTERS = {
    "vllm": {"requests_finished": "vllm:request_success_total",
             "prompt_tokens": "vllm:prompt_tokens_total",
             "generation_tokens": "vllm:generation_tokens_total"},
    "sglang": {"requests_finished": "sglang:num_requests_total",
               "prompt_tokens": "sglang:prompt_tokens_total",
               "generation_tokens": "sglang:generation_tokens_total",
               "preemptions": "sglang:num_retracted_requests_total"},
}
# A scrape happens at the first 250 ms poll of the agent's scrape thread at least one interval
# after the previous one (src/telemetry/registry/telemetry.cc, engine_metrics_collector.cc), so each interval is
# in [1 s, 1.25 s + fetch time]. 1.5 s bounds that with room for a loaded 2-core machine.
MAX_SCRAPE_INTERVAL_S = 1.5
# The sglang case holds one /metrics answer this long: past the agent's 2 s read timeout
# (net::FetchOptions), so the agent abandons that GET (the fake counted it).
HOLD_S = 3.0


class Failure(Exception):
    pass


def shared_reference(name):
    root = os.environ.get("INFERSCOPE_SHARED_REFERENCE") or os.path.join(
        os.path.dirname(os.path.abspath(shared_traces_root())), "reference")
    path = os.path.join(root, name)
    return path if os.path.isfile(path) else None


def file_counters(path, families):
    """signal -> its value in the file, for the signals whose family is present: the sum over
    label sets, where series differing only in a rank label count once (the largest), as the
    agent does (docs/engine-metrics.md, "Label sets")."""
    groups = {}  # (signal, labels without rank labels) -> largest value
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                continue
            m = re.match(r"([A-Za-z_:][A-Za-z0-9_:]*)(\{.*\})?\s+(\S+)", line)
            if not m:
                continue
            labels = re.sub(r'(tp_rank|pp_rank|moe_ep_rank)="[^"]*",?', "", m.group(2) or "")
            for signal_name, family in families.items():
                if m.group(1) == family:
                    key = (signal_name, labels)
                    groups[key] = max(groups.get(key, float("-inf")), float(m.group(3)))
    out = {}
    for (signal_name, _), value in groups.items():
        out[signal_name] = out.get(signal_name, 0.0) + value
    return out


def fake_gpu_expectations(device, arch):
    """metric -> (min, max) over any 4 consecutive samples (k = n % 4 takes every value)."""
    gib = 1 << 30
    gpm = {} if arch == "ampere" else {  # GPM pairs: m = (t - 1) % 4 also takes every value
        "gpm_sm_active_pct": (40, 70), "gpm_sm_occupancy_pct": (20, 35),
        "gpm_tensor_active_pct": (30, 60), "gpm_dram_bw_util_pct": (50, 65)}
    return gpm | {
        "gpu_util_pct": (20 + device, 50 + device),
        "mem_util_pct": (5 + device, 20 + device),
        "mem_used_bytes": ((10 + device) * gib, (13 + device) * gib),
        "mem_total_bytes": ((40 if arch == "ampere" else 80) * gib,) * 2,
        "power_w": (300 + 1.5 * device, 330 + 1.5 * device),
        "temperature_c": (60 + device, 63 + device),
        "sm_clock_mhz": (1500, 1800),
        "mem_clock_mhz": ((1215 if arch == "ampere" else 2619),) * 2,
    }


def http_get(url, timeout=5.0, token=None):
    req = urllib.request.Request(url, headers={"Authorization": "Bearer " + token} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.read().decode("utf-8", "replace")
    except urllib.error.URLError as e:
        raise Failure("GET %s: %s" % (url, e))


def close(a, b, rel=1e-9, abs_tol=1e-6):
    return abs(a - b) <= abs_tol + rel * max(abs(a), abs(b))


def wait_until(probe, timeout_s, what):
    deadline = time.time() + timeout_s
    while not probe():
        if time.time() > deadline:
            raise Failure("timed out waiting for " + what)
        time.sleep(0.05)


class Case:
    """One engine's run: processes, work dir and the problems found."""

    def __init__(self, args, engine, body_path, work, spans, hold=False):
        self.args = args
        self.hold = hold  # hold one answer past the agent's timeout (choose_window)
        self.engine = engine
        self.body_path = body_path
        self.work = work
        self.state = os.path.join(work, "state")
        self.spans = spans  # run the OpenTelemetry part
        self.problems = []
        self.outputs = {}  # name -> text searched for the secret

    def fail(self, message):
        self.problems.append("%s: %s" % (self.engine, message))

    def inferscope(self, *argv, timeout=30):
        r = subprocess.run([self.args.inferscope] + list(argv), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=timeout)
        if r.returncode != 0:
            raise Failure("inferscope %s failed (%d): %s" % (" ".join(argv), r.returncode,
                                                             r.stderr[-400:]))
        return r.stdout

    def report(self, *range_args, fmt="json"):
        out = self.inferscope("report", "--state-dir", self.state, "--format", fmt, *range_args)
        self.outputs["report %s %s" % (fmt, " ".join(range_args))] = out
        return json.loads(out) if fmt == "json" else out

    def run(self):
        os.makedirs(self.state)
        fake = FakeEngineMetrics(self.body_path)
        fake.start()
        try:
            self.run_with(fake)
        finally:
            fake.stop()

    def run_with(self, fake):
        self.fake_url = fake.url
        agent_log = os.path.join(self.work, "agent.log")
        env = dict(os.environ, FAKE_NVML_SCENARIO=SCENARIO)
        agent = subprocess.Popen(
            [self.args.inferscope, "agent", "--state-dir", self.state, "--http-port", "0",
             "--window", "1s", "--gpu-sample-interval", "250ms", "--scrape-interval", "1s",
             "--metrics-url", fake.url, "--nvml-library", self.args.fake_nvml],
            env=env, stdout=subprocess.DEVNULL, stderr=open(agent_log, "w"))
        replay = node = None
        try:
            if not wait_for_socket(os.path.join(self.state, "agent.sock"), timeout_s=15):
                raise Failure("the agent did not start (see %s)" % agent_log)
            endpoints = self.wait_for_endpoints()

            wait_until(lambda: fake.served() > 0, 10, "the agent's first scrape")
            if self.spans:
                # Node loads the OpenTelemetry SDK before the replay starts and W is chosen:
                # its startup (seconds on a loaded machine) is then outside the span's deadline.
                node = subprocess.Popen(
                    [self.args.node, os.path.join(REPO, "tests", "otel", "send_spans.mjs"),
                     "--endpoint", endpoints["otlp_http"], "--protocol", "proto", "--count",
                     str(self.args.spans), "--base-ns", "-"],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    text=True, env=dict(os.environ, OTEL_EXPORTER_OTLP_TRACES_HEADERS=(
                        "authorization=Bearer%20" + agent_token(self.state))))
                if node.stdout.readline().strip() != "ready":
                    node.kill()
                    raise Failure("send_spans.mjs did not start: %s" % node.stderr.read()[-400:])
            replay_log = open(os.path.join(self.work, "replay.log"), "w")
            replay = subprocess.Popen(
                [self.args.inferscope, "run", "--state-dir", self.state, "--no-agent", "--window",
                 "1s", "--", self.args.replay_engine, "--speed", "1", "--loop-for",
                 str(self.args.seconds), "--loop-period", "0.25", self.args.trace],
                env=dict(os.environ, INFERSCOPE_LOG="warning"), stdout=subprocess.DEVNULL,
                stderr=replay_log)
            # W: a window 3 or 4 s ahead, so the replay covers it whole and the agent has its
            # baseline scrape and more behind it; the spans end inside it. They are sent before W
            # closes (a span whose window was taken is dropped as late).
            now_ns = time.time_ns()
            self.window_ns = self.choose_window(now_ns, fake)
            if self.window_ns + WINDOW_NS > now_ns + self.args.seconds * 1e9:
                raise Failure("--seconds too short to cover a middle window")
            if self.spans:
                out, err = node.communicate(input="%d\n" % (self.window_ns + 200_000_000),
                                            timeout=30)
                if node.returncode != 0:
                    raise Failure("send_spans.mjs failed (%d): %s" % (node.returncode, err[-400:]))
                self.sent = json.loads(out.strip().splitlines()[-1])
                if time.time_ns() > self.window_ns + WINDOW_NS:
                    self.fail("the spans were sent after their window closed (node too slow?)")
            if replay.wait(timeout=self.args.seconds + 30) != 0:
                raise Failure("the replay failed (%d), see %s" % (replay.returncode,
                                                                   replay_log.name))
            # The windows of the replay are stored once it said goodbye and the writer caught up.
            api = endpoints["api"]
            deadline = time.time() + 15
            while True:
                st = json.loads(http_get(api + "/status", token=agent_token(self.state)))
                st = st.get("agent", st)
                if (st.get("connected_processes") == 0 and st.get("windows_received", 0) > 0 and
                        st.get("windows_received") == st.get("windows_stored")):
                    break
                if time.time() > deadline:
                    raise Failure("the agent did not store the replay's windows: %r" % st)
                time.sleep(0.1)
            # Every API answer, for the secret search.
            for path in ["", "/status", "/hosts?last=1h", "/processes?last=1h",
                         "/devices?last=1h", "/windows?last=1h", "/profile?last=1h"]:
                self.outputs["GET /api/v1" + path] = http_get(api + path,
                                                              token=agent_token(self.state))
            self.outputs["GET /metrics"] = http_get(endpoints["metrics"])
            m = re.search(r"^inferscope_engine_scrapes_abandoned_total (\S+)$",
                          self.outputs["GET /metrics"], re.M)
            if m is None or (self.hold and float(m.group(1)) < 1):
                self.fail("/metrics inferscope_engine_scrapes_abandoned_total %s%s" %
                          (m.group(1) if m else "absent",
                           ", the held GET is not counted" if m else ""))
            status = json.loads(self.outputs["GET /api/v1/status"])
            self.check_status(status)
        finally:
            for proc in (replay, node):
                if proc is not None and proc.poll() is None:
                    proc.kill()
            if not stop_agent(agent, 20):
                self.fail("the agent did not stop on SIGTERM")
            self.scrapes_served = fake.served()  # the agent no longer scrapes
        if agent.returncode != 0:
            self.fail("agent exit status %s (see %s)" % (agent.returncode, agent_log))
        self.outputs["agent log"] = open(agent_log, errors="replace").read()

        whole = self.report("--last", "5m")
        # A GET the agent abandoned reaches the fake's handler on its own time (a loaded machine):
        # wait for it, never past the agent's count (the equality is checked in check_engine).
        engine = whole.get("engine") or {}
        agent_gets = engine.get("scrapes", 0) + engine.get("scrapes_abandoned", 0)
        deadline = time.time() + 3
        while fake.served() < agent_gets and time.time() < deadline:
            time.sleep(0.05)
        self.scrapes_served = fake.served()
        self.check_kernels(whole, "whole range")
        self.check_gpu(whole.get("gpu_metrics"), "whole range", whole_range=True)
        self.check_engine(whole.get("engine"), "whole range")
        if self.spans:
            self.check_requests(whole.get("requests"), "whole range")
        self.check_window()
        text = self.report("--last", "5m", fmt="text")
        for title in ["GPU metrics (NVML", "Engine load and stage latency",
                      "Requests (OpenTelemetry spans)"]:
            if self.spans or not title.startswith("Requests"):
                if title not in text:
                    self.fail("the text report has no section '%s...'" % title)
        self.check_no_content()

    def wait_for_endpoints(self):
        """agent.json's endpoints; the agent writes the file just after its socket listens."""
        path = os.path.join(self.state, "agent.json")
        deadline = time.time() + 10
        while True:
            try:
                with open(path) as f:
                    return json.load(f)["endpoints"]
            except (OSError, ValueError, KeyError):
                if time.time() > deadline:
                    raise Failure("no endpoints in %s" % path)
                time.sleep(0.05)

    def choose_window(self, now_ns, fake):
        """The first of the windows 3 and 4 s ahead whose predicted scrape is not near an edge.

        The agent scrapes on a fixed grid (k + 0.5 s with 1 s scrapes), so every window gets
        exactly one scrape, away from its edges; W is still picked where scrape k is predicted
        well inside it, a margin for a loaded machine."""
        if self.hold:
            return self.hold_before_window(now_ns, fake)
        first = fake.scrape_times[0]
        for ahead in (3, 4):
            w = (now_ns // WINDOW_NS + ahead) * WINDOW_NS / 1e9
            k = math.ceil(w - first)
            if w + 0.1 <= first + k and first + 1.04 * k <= w + 0.9:
                return int(w) * WINDOW_NS
        return (now_ns // WINDOW_NS + 3) * WINDOW_NS

    def hold_before_window(self, now_ns, fake):
        """W = the window 4 s ahead; the fake holds the first GET read in window W - 3.

        The agent scrapes on the grid k + 0.5 s: that GET (at W - 2.5 s) is abandoned 2 s later
        (W - 0.5 s), the next GET is the next grid point, W + 0.5 s: W's scrape, whose deltas
        span the held GET. W - 3 is ahead of now, so the hold is set before that GET."""
        w = (now_ns // WINDOW_NS + 4) * WINDOW_NS
        fake.hold_first_after((w - 3 * WINDOW_NS) / 1e9, HOLD_S)
        return w

    def check_status(self, status):
        collectors = status.get("collectors")
        if not isinstance(collectors, dict):
            self.fail("status: no collectors: %r" % status)
            return
        for name in ("nvml", "scrape"):
            state = (collectors.get(name) or {}).get("state")
            if state != "on":
                self.fail("status: collector %s is %r: %r" % (name, state, collectors.get(name)))
        # The agent's own account of the target: what it used, what failed, what it abandoned.
        targets = (collectors.get("scrape") or {}).get("targets")
        if not targets or targets[0].get("url") != self.fake_url:
            self.fail("status: scrape targets %r, want %s first" % (targets, self.fake_url))
            return
        t = targets[0]
        if t.get("scrapes", 0) < 3 or t.get("failures") != t.get("abandoned"):
            self.fail("status: target %r: want >= 3 scrapes and every failure an abandoned GET "
                      "(the fake is always there)" % t)
        if self.hold and t.get("abandoned", 0) < 1:
            self.fail("status: target %r: the held GET is not counted as abandoned" % t)
        self.status_target = t

    def check_kernels(self, report, where):
        ranks = report.get("ranks", [])
        categories = {c for r in ranks for c, s in r.get("categories", {}).items()
                      if s.get("count", 0) > 0}
        if not ranks or not categories:
            self.fail("%s: no kernel categories in the report" % where)
        return categories

    def check_gpu(self, gpu, where, whole_range):
        if not gpu:
            self.fail("%s: no gpu_metrics" % where)
            return
        devices = gpu.get("devices", [])
        if [d.get("index") for d in devices] != [0, 1]:
            self.fail("%s: gpu_metrics devices %r, want [0, 1]" %
                      (where, [d.get("index") for d in devices]))
            return
        for d, arch in zip(devices, ["hopper", "ampere"]):
            if d.get("architecture") != arch or d.get("lost"):
                self.fail("%s: GPU %d is %r lost=%r, want %s" % (where, d["index"],
                                                                 d.get("architecture"),
                                                                 d.get("lost"), arch))
            # Four consecutive samples take every value of k; fewer cannot show the extremes.
            if d.get("samples", 0) < 4:
                self.fail("%s: GPU %d has %r samples" % (where, d["index"], d.get("samples")))
                continue
            for metric, (lo, hi) in fake_gpu_expectations(d["index"], arch).items():
                m = d.get("metrics", {}).get(metric)
                if m is None:
                    self.fail("%s: GPU %d has no %s" % (where, d["index"], metric))
                elif m["min"] != lo or m["max"] != hi:
                    self.fail("%s: GPU %d %s min/max %r/%r, the fake NVML gives %r/%r" %
                              (where, d["index"], metric, m["min"], m["max"], lo, hi))
            # Only GPM is missing, and only on the Ampere (GPM needs Hopper or newer).
            want_missing = set(GPM_METRICS) if arch == "ampere" else set()
            if set(d.get("missing", {})) != want_missing:
                self.fail("%s: GPU %d missing metrics %r, want %r" %
                          (where, d["index"], d.get("missing"), sorted(want_missing)))

    def check_engine(self, engine, where):
        if not engine:
            self.fail("%s: no engine section" % where)
            return
        if engine.get("engine") != self.engine:
            self.fail("%s: engine %r, want %r" % (where, engine.get("engine"), self.engine))
        per_scrape = file_counters(self.body_path, ENGINE_COUNTERS[self.engine])
        if not per_scrape:
            raise Failure("the %s body has none of the mapped counters" % self.engine)
        counters = engine.get("counters", {})
        if set(counters) != set(per_scrape):
            self.fail("%s: engine counters %s, the file exposes %s" %
                      (where, sorted(counters), sorted(per_scrape)))
        scrapes = engine.get("scrapes", 0)
        abandoned = engine.get("scrapes_abandoned")
        spanned = engine.get("abandoned_spanned")
        if abandoned is None or spanned is None:
            self.fail("%s: no scrapes_abandoned / abandoned_spanned: %r" % (where, engine))
            return
        # Every GET the fake served was stored or abandoned by the agent (CI once saw 8 served
        # and 7 stored, with nothing to say what became of the eighth).
        if scrapes + abandoned != self.scrapes_served:
            self.fail("%s: %r scrapes stored + %r abandoned GETs, the fake served %r" %
                      (where, scrapes, abandoned, self.scrapes_served))
        if engine.get("scrape_failures") != abandoned:
            self.fail("%s: %r failed scrapes, %r abandoned: the fake is always there, every "
                      "failure is a GET it never answered in time" %
                      (where, engine.get("scrape_failures"), abandoned))
        if self.hold and (abandoned < 1 or spanned < 1):
            self.fail("%s: the GET held past the agent's timeout: %r abandoned, %r spanned" %
                      (where, abandoned, spanned))
        # The fake's intervals the stored deltas hold: one per scrape after the baseline, and one
        # per abandoned GET between two stored scrapes.
        deltas = scrapes - 1 + spanned
        covered_s = engine.get("covered_ns", 0) / 1e9
        # Scrapes run on a fixed grid (k + 0.5 s): every interval is one second long but the
        # first, from the discovery scrape to the first grid point, which is up to a second; an
        # abandoned GET's 2 s timeout skips two grid points the fake never saw (no GET, no tick):
        # the delta spanning it holds 2 of the fake's intervals over 4 s.
        skipped = 2 * spanned
        if deltas < 3 or not ((deltas - 1) * 1.0 - 0.05 <= covered_s <=
                              (deltas + skipped) * MAX_SCRAPE_INTERVAL_S):
            self.fail("%s: %d scrape intervals cover %.3f s" % (where, deltas, covered_s))
            return
        span_s = (engine["end_unix_ns"] - engine["start_unix_ns"]) / 1e9
        derived = engine.get("derived", {})
        for name, value in per_scrape.items():
            got = float(counters.get(name, "nan"))
            # Exact: every scrape after the baseline adds the file's value.
            if not close(got, value * deltas):
                self.fail("%s: counter %s = %r, want %r x %d deltas = %r" %
                          (where, name, got, value, deltas, value * deltas))
            # The report's rate is the delta over the range's wall span.
            rate = derived.get(name + "_per_s")
            if rate is None or not close(rate, got / span_s, rel=1e-4):
                self.fail("%s: %s_per_s %r, want %r / %.0f s" % (where, name, rate, got, span_s))
            # Per second of scrape interval, the file's value (intervals run 1-1.5 s, above),
            # but the first interval (discovery to the grid) may be shorter: allow for it; the
            # grid points skipped by abandoned GETs are covered time without a fake tick.
            per_s = got / covered_s
            if not (value * deltas / ((deltas + skipped) * MAX_SCRAPE_INTERVAL_S) <= per_s <=
                    value * deltas / (deltas - 1) * (1 + 1e-9)):
                self.fail("%s: %s per covered second %r, want the file's %r/s (intervals 1-%.1f s)"
                          % (where, name, per_s, value, MAX_SCRAPE_INTERVAL_S))

    def check_requests(self, requests, where):
        if not requests:
            self.fail("%s: no requests section" % where)
            return
        n = self.sent["count"]
        if requests.get("requests") != n:
            self.fail("%s: requests %r, sent %d" % (where, requests.get("requests"), n))
        for key, sent_key in (("prompt_tokens", "prompt_tokens"),
                              ("completion_tokens", "completion_tokens")):
            if requests.get(key) != self.sent[sent_key]:
                self.fail("%s: %s %r, sent %r" % (where, key, requests.get(key),
                                                  self.sent[sent_key]))
        stages = requests.get("stages", {})
        for stage, total_ns in self.sent["stage_sum_ns"].items():
            h = stages.get(stage, {})
            # The SDK and the receiver each round seconds to ns once per span: 1 ns per span.
            if h.get("count") != n or abs(h.get("sum_ns", 0) - total_ns) > n:
                self.fail("%s: stage %s count %r sum %r ns, sent %d spans summing %d ns" %
                          (where, stage, h.get("count"), h.get("sum_ns"), n, total_ns))
            elif not (0 < h.get("p50_ns", 0) <= h.get("p99_ns", 0) <= h.get("max_ns", 0)):
                self.fail("%s: stage %s percentiles out of order: %r" % (where, stage, h))
        if abs(stages.get("e2e", {}).get("max_ns", 0) - self.sent["e2e_max_ns"]) > 1:
            self.fail("%s: e2e max %r, sent %r" % (where, stages.get("e2e", {}).get("max_ns"),
                                                   self.sent["e2e_max_ns"]))
        c = requests.get("counters", {})
        dropped = {k: v for k, v in c.items() if k.startswith("dropped") and v}
        if dropped:
            self.fail("%s: spans dropped: %r" % (where, dropped))

    def check_window(self):
        start, end = self.window_ns, self.window_ns + WINDOW_NS
        where = "window [%d, %d)" % (start // WINDOW_NS, end // WINDOW_NS)
        r = self.report("--from", str(start // WINDOW_NS), "--to", str(end // WINDOW_NS))
        self.check_kernels(r, where)
        sections = {"gpu_metrics": r.get("gpu_metrics"), "engine": r.get("engine")}
        if self.spans:
            sections["requests"] = r.get("requests")
        for name, section in sections.items():
            if not section:
                self.fail("%s: no %s" % (where, name))
            elif (section.get("start_unix_ns"), section.get("end_unix_ns")) != (start, end):
                self.fail("%s: %s covers [%r, %r)" % (where, name, section.get("start_unix_ns"),
                                                      section.get("end_unix_ns")))
        gpu = sections["gpu_metrics"]
        if gpu and len(gpu.get("devices", [])) != 2:
            self.fail("%s: %d GPUs" % (where, len(gpu.get("devices", []))))
        engine = sections["engine"]
        if engine:
            if engine.get("engine") != self.engine:
                self.fail("%s: engine %r" % (where, engine.get("engine")))
            # Every scrape of this window is a delta of exactly the file's values times the
            # fake's intervals it spans (one, and one more per abandoned GET before it), over 1 s.
            per_scrape = file_counters(self.body_path, ENGINE_COUNTERS[self.engine])
            scrapes = engine.get("scrapes", 0)
            spanned = engine.get("abandoned_spanned", 0)
            if self.hold and (scrapes, spanned) != (1, 1):
                self.fail("%s: %d scrapes spanning %d abandoned GETs, want 1 spanning the GET "
                          "held at %.1f s (1, 1)" % (where, scrapes, spanned,
                                                     self.window_ns / 1e9 - 2.5))
            for name, value in per_scrape.items():
                rate = engine.get("derived", {}).get(name + "_per_s")
                want = value * (scrapes + spanned)
                if rate is None or not close(rate, want, rel=1e-6):
                    self.fail("%s: %s_per_s %r with %d scrapes spanning %d abandoned GETs, want %r"
                              % (where, name, rate, scrapes, spanned, want))
        if self.spans and sections["requests"]:
            if sections["requests"].get("requests") != self.sent["count"]:
                self.fail("%s: %r requests, all %d end in it" %
                          (where, sections["requests"].get("requests"), self.sent["count"]))
        self.window_summary = {
            "kernels": sum(x.get("kernel_count", 0) for x in r.get("ranks", [])),
            "gpu_samples": [d.get("samples") for d in (gpu or {}).get("devices", [])],
            "scrapes": (engine or {}).get("scrapes"),
            "spanned": (engine or {}).get("abandoned_spanned"),
            "requests": (sections.get("requests") or {}).get("requests"),
        }

    def check_no_content(self):
        """The content markers appear nowhere we can look; the model name (positive control:
        stored inside compressed payloads) must be found, or the search itself is broken."""
        haystacks = dict(self.outputs)
        # Every column of every table, payloads inflated (5-byte header, docs/store).
        db = sqlite3.connect("file:%s?mode=ro" % os.path.join(self.state, "inferscope.db"),
                             uri=True)
        dump = []
        tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            for row in db.execute("SELECT * FROM \"%s\"" % table):
                for v in row:
                    if isinstance(v, bytes):
                        dump.append(v.decode("latin-1"))
                        try:
                            dump.append(inflate_payload(v).decode("latin-1"))
                        except ValueError:
                            pass
                    else:
                        dump.append(str(v))
        db.close()
        haystacks["store (every table, payloads inflated)"] = "\n".join(dump)
        for name in sorted(os.listdir(self.state)):
            path = os.path.join(self.state, name)
            if os.path.isfile(path):
                with open(path, "rb") as f:
                    haystacks["raw bytes of " + name] = f.read().decode("latin-1")
        for marker in CONTENT_MARKERS:
            for where, text in haystacks.items():
                if marker in text:
                    self.fail("request content %r found in %s" % (marker, where))
        control = "Llama-3.1-8B-Instruct"  # span model name and engine model label
        if control not in haystacks["store (every table, payloads inflated)"]:
            self.fail("positive control: %r not found in the inflated store: the content search "
                      "cannot see payloads" % control)
        self.searched = len(haystacks)


def otel_available(node):
    return shutil.which(node) is not None and os.path.isdir(
        os.path.join(REPO, "tests", "otel", "node_modules"))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--inferscope", required=True)
    p.add_argument("--replay-engine", required=True)
    p.add_argument("--fake-nvml", required=True, help="the fake libnvidia-ml.so.1 (full build)")
    p.add_argument("--engines", default="vllm,sglang")
    p.add_argument("--spans", type=int, default=20, help="request spans sent per engine")
    p.add_argument("--seconds", type=float, default=6.0, help="replay duration per engine")
    p.add_argument("--node", default="node")
    p.add_argument("--keep", action="store_true", help="keep the work directory")
    args = p.parse_args()
    args.trace = shared_trace(TRACE)
    if args.trace is None:
        # A fresh clone: the bundled example (2-GPU vLLM decode the project generates).
        args.trace = os.path.join(REPO, "examples", "vllm_tp2_decode", "rank0.json.gz")
        print("note: ../shared/traces/**/%s not found: replaying the bundled %s" %
              (TRACE, os.path.relpath(args.trace, REPO)))
    if not os.path.isfile(args.fake_nvml):
        print("SKIP: fake NVML %s not built (target fake_nvml)" % args.fake_nvml)
        return 77
    spans = otel_available(args.node)
    problems = []
    if not spans:
        if os.environ.get("INFERSCOPE_REQUIRE_OTEL") == "1":
            problems.append("INFERSCOPE_REQUIRE_OTEL=1 but node or tests/otel/node_modules is "
                            "missing: run npm ci --prefix tests/otel")
        else:
            print("spans part skipped: run npm ci --prefix tests/otel")

    bodies = {"vllm": shared_reference("vllm-metrics-sample.txt"),
              "sglang": os.path.join(REPO, "tests", "data", "engine_metrics", "sglang.txt")}
    work = tempfile.mkdtemp(prefix="inferscope_picture_")
    ran = 0
    for engine in [e for e in args.engines.split(",") if e]:
        if engine not in bodies:
            problems.append("unknown engine %r" % engine)
            continue
        if bodies[engine] is None:
            print("%s case skipped: ../shared/reference/vllm-metrics-sample.txt not found "
                  "(set INFERSCOPE_SHARED_REFERENCE)" % engine)
            continue
        started = time.time()
        case = Case(args, engine, bodies[engine], os.path.join(work, engine), spans,
                    hold=(engine == "sglang"))
        try:
            case.run()
        except (Failure, subprocess.TimeoutExpired, OSError, ValueError, KeyError) as e:
            case.fail(str(e))
        ran += 1
        problems += case.problems
        w = getattr(case, "window_summary", {})
        print("%s %s (%.1f s): %d scrapes served; window %s: %s kernels, GPU samples %s, %s "
              "scrapes spanning %s abandoned GETs, %s requests; %d outputs searched for content" %
              ("ok  " if not case.problems else "FAIL", engine, time.time() - started,
               getattr(case, "scrapes_served", 0), getattr(case, "window_ns", 0) // WINDOW_NS,
               w.get("kernels"), w.get("gpu_samples"), w.get("scrapes"), w.get("spanned"),
               w.get("requests"),
               getattr(case, "searched", 0)))
    if ran == 0 and not problems:
        problems.append("no engine case ran")
    for line in problems[:40]:
        print("FAIL " + line)
    if problems or args.keep:
        print("work dir kept: " + work)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
