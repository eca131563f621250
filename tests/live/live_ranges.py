#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""NVTX ranges on the live path: a trace's NVTX / user_annotation
ranges replayed as CUPTI marker records (the fake CUPTI, tests/fakes/replay_engine) through the
real injection library under `inferscope run --nvtx` give a range table in `inferscope report`
(text section, JSON views.ranges) equal to `inferscope analyze --views ranges` of the same file.

Checked, per trace, summed over the processes (the replay's pids are not the trace's):
- names and instance counts: exactly;
- host time per name and the GPU work projected onto it (ops and time): exactly. The replay moves
  every timestamp of a trace by one constant (integer nanoseconds), so durations survive as they
  are, and the live Aggregator projects with the offline views' rule (kernels, copies and memsets
  whose launching call started on the range's thread inside it, a name nested in itself counting
  an op once). Graph nodes are traced (INFERSCOPE_GRAPH_NODES=1) so the GPU ops are the trace's,
  not the sampled estimate of a graph launch. The one allowed difference is the ranges a window
  counted late (`late`, a range longer than the lateness horizon): none in these traces, and the
  test says so if one appears.
- `report --format csv --table ranges`: the same rows as the report's JSON.
- the top-K + tail rule: with one window and the default top 20, the live rows are the offline
  rows and the tail holds the same instances.
- /metrics: the agent's NVTX range families (inferscope_nvtx_ranges_total, _range_seconds_total,
  _range_gpu_seconds_total) sum, over their range labels, to the report's totals, with at most
  10 named labels plus "(other)" per process (docs/metrics.md, "Cardinality").

Traces: the generated `prefill_interference` scenario (ProfilerStep#N user_annotation ranges;
no ../shared needed), replayed twice: in 200 ms windows with --top 1000 (every name a row: the
window edges must lose nothing), and in one window with the default top 20. With ../shared
present: the Nsight export mfu_2gpu_before.sqlite (19k NVTX rows, 2 processes) and the HTA Kineto
trace trace_filter/sampled_rank-0.json.gz (user_annotation), each in 200 ms windows with --top
1000; absent, they are skipped with a message (the generated trace still runs).

Usage: live_ranges.py --inferscope BIN --replay-engine BIN
Exit codes: 0 pass, 1 a difference or failure.
"""

import argparse
import csv
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import urllib.request

from live_common import REPO, agent_endpoints, shared_trace, wait_for_socket, stop_agent


def run(*cmd):
    r = subprocess.run(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd[:2]), r.returncode, r.stderr))
    return r.stdout


def table(report):
    """name -> [count, total_ns, gpu ops, gpu time] over the processes of a JSON report's ranges
    view, the tail as "(other)"; and the late count."""
    out = {}
    late = 0
    views = report.get("views") or {}
    for inp in views.get("inputs", []):
        for proc in inp["processes"]:
            r = proc.get("ranges")
            if not r:
                continue
            late += r.get("late", 0)
            rows = [(row["name"], row) for row in r["list"]]
            other = r["other"]
            if other["count"] or other["gpu"]["ops"]:
                rows.append(("(other)", {"duration": other, "gpu": other["gpu"]}))
            for name, row in rows:
                acc = out.setdefault(name, [0, 0, 0, 0])
                acc[0] += row["duration"]["count"]
                acc[1] += row["duration"]["total_ns"]
                acc[2] += row["gpu"]["ops"]
                acc[3] += row["gpu"]["time_ns"]
    return out, late


def metrics_ranges(text):
    """family -> {(pid, range): value} of the NVTX range families of a /metrics exposition."""
    out = {}
    for line in text.splitlines():
        m = re.match(r'(inferscope_nvtx_range\w*_total)\{range="((?:[^"\\]|\\.)*)",pid="(\w+)",'
                     r'[^}]*\} (\S+)$', line)
        if m:
            out.setdefault(m.group(1), {})[(m.group(3), m.group(2))] = float(m.group(4))
    return out


def replay(args, work, tag, trace, window, top):
    """Replays `trace` under `run --nvtx` into a fresh agent; returns (report JSON, report text,
    ranges the replay emitted) or raises."""
    state = os.path.join(work, tag)
    os.makedirs(state)
    agent = subprocess.Popen([args.inferscope, "agent", "--state-dir", state, "--http-port", "0"],
                             stdout=subprocess.DEVNULL,
                             stderr=open(os.path.join(state, "agent.log"), "w"))
    try:
        if not wait_for_socket(os.path.join(state, "agent.sock")):
            raise RuntimeError("the agent did not start (see %s)" % state)
        env = dict(os.environ, INFERSCOPE_GRAPH_NODES="1", INFERSCOPE_TOP=str(top))
        r = subprocess.run(
            [args.inferscope, "run", "--state-dir", state, "--no-agent", "--nvtx", "--window",
             window, "--", args.replay_engine, "--speed", "0", trace],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
        if r.returncode != 0:
            raise RuntimeError("replay failed (%d): %s" % (r.returncode, r.stderr[-500:]))
        emitted = sum(json.loads(m)["ranges"]
                      for m in re.findall(r"replay_engine_summary (\{.*\})", r.stderr))
        # The windows reach the store shortly after the process exits: wait for all the ranges.
        deadline = time.time() + 30
        while True:
            try:
                live = json.loads(run(args.inferscope, "report", "--state-dir", state, "--last",
                                      "24h", "--top", str(top), "--format", "json"))
                got = sum(v[0] for v in table(live)[0].values())
            except RuntimeError:  # exit 3: no window stored yet
                if time.time() > deadline:
                    raise
                live, got = None, -1
            if got >= emitted or time.time() > deadline:
                break
            time.sleep(0.3)
        text = run(args.inferscope, "report", "--state-dir", state, "--last", "24h", "--top",
                   str(top))
        csv_text = run(args.inferscope, "report", "--state-dir", state, "--last", "24h", "--top",
                       str(top), "--format", "csv", "--table", "ranges")
        with urllib.request.urlopen(agent_endpoints(state)["metrics"], timeout=10) as m:
            metrics = metrics_ranges(m.read().decode())
    finally:
        stop_agent(agent, 30)
    return live, text, csv_text, emitted, metrics


def compare(args, work, tag, trace, window, top, problems):
    live, text, csv_text, emitted, metrics = replay(args, work, tag, trace, window, top)
    offline = json.loads(run(args.inferscope, "analyze", "--format", "json", "--views", "ranges",
                             "--top", str(top), trace))
    got, late = table(live)
    want, _ = table(offline)
    instances = sum(v[0] for v in want.values())
    if emitted != instances:
        problems.append("%s: the replay emitted %d ranges, analyze counts %d" %
                        (tag, emitted, instances))
    if late:
        problems.append("%s: %d ranges counted late (longer than the lateness horizon)" %
                        (tag, late))
    if sorted(got) != sorted(want):
        problems.append("%s: live names %s\n  offline names %s" %
                        (tag, sorted(got)[:30], sorted(want)[:30]))
    for name in sorted(set(got) & set(want)):
        if got[name] != want[name]:
            problems.append("%s: %r live [count, host ns, gpu ops, gpu ns] %s, analyze %s" %
                            (tag, name, got[name], want[name]))
    if "NVTX / annotation ranges" not in text:
        problems.append("%s: no ranges section in the text report" % tag)
    # `report --format csv --table ranges`: the same rows (the tail as "other (N names)").
    from_csv = {}
    for row in csv.DictReader(io.StringIO(csv_text)):
        name = "(other)" if row["name"].startswith("other (") else row["name"]
        acc = from_csv.setdefault(name, [0, 0, 0, 0])
        for i, key in enumerate(("count", "total_ns", "gpu_ops", "gpu_time_ns")):
            acc[i] += int(row[key])
    differ = sorted(n for n in set(from_csv) | set(got) if from_csv.get(n) != got.get(n))
    if differ:
        problems.append("%s: report CSV rows differ from its JSON for %s" % (tag, differ[:5]))
    # /metrics: every instance, host and GPU second in some range label, at most 10 named labels
    # plus (other) per process.
    for family, index, scale in (("inferscope_nvtx_ranges_total", 0, 1),
                                 ("inferscope_nvtx_range_seconds_total", 1, 1e-9),
                                 ("inferscope_nvtx_range_gpu_seconds_total", 3, 1e-9)):
        series = metrics.get(family, {})
        total = sum(v[index] for v in got.values()) * scale
        if abs(sum(series.values()) - total) > 1e-6 * max(total, 1):
            problems.append("%s: /metrics %s sums to %r, the report to %r" %
                            (tag, family, sum(series.values()), total))
        for pid in {p for p, _ in series}:
            named = [r for p, r in series if p == pid and r != "(other)"]
            if len(named) > 10:
                problems.append("%s: /metrics %s has %d range labels for pid %s" %
                                (tag, family, len(named), pid))
    gpu_ops = sum(v[2] for v in want.values())
    print("%s: %d ranges, %d names, %d GPU ops projected; /metrics %d range series" %
          (tag, instances, len(want), gpu_ops, len(metrics.get("inferscope_nvtx_ranges_total", {}))))
    return want


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--inferscope", required=True)
    p.add_argument("--replay-engine", required=True)
    args = p.parse_args()

    work = tempfile.mkdtemp(prefix="inferscope_ranges_")
    problems = []
    try:
        subprocess.run([sys.executable, os.path.join(REPO, "tools", "make_scenario_traces.py"),
                        "--out", work, "--scenario", "prefill_interference", "--quiet"],
                       check=True)
        generated = os.path.join(work, "prefill_interference.json.gz")
        want = compare(args, work, "generated_windows", generated, "200ms", 1000, problems)
        if len(want) <= 20:
            problems.append("the generated trace has %d range names; the top-K check needs > 20" %
                            len(want))
        # One window, default top 20: the same rows and tail as analyze's top-K + tail.
        compare(args, work, "generated_top20", generated, "1000000s", 20, problems)
        for name, label in (("mfu_2gpu_before.sqlite", "nsys"),
                            ("sampled_rank-0.json.gz", "kineto")):
            trace = shared_trace(name)
            if trace is None:
                print("skip %s: ../shared/traces not present (%s)" % (label, name))
                continue
            compare(args, work, label, trace, "200ms", 1000, problems)
    except (RuntimeError, subprocess.SubprocessError) as e:
        problems.append(str(e))
    for line in problems:
        print("FAIL: " + line)
    if problems:
        print("(kept %s)" % work)
        return 1
    print("ok")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
