#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""Prefill vs decode on the live path (issue 20, item 2): a serving trace whose steps run prefill
and decode attention, replayed through the fake CUPTI into the real injection library and agent,
shows the forward-phase split in `inferscope report` (text and JSON) and on /metrics, equal to what
`inferscope analyze` says of the file, and in agreement with the offline steps view
(`analyze --views steps`, the trace's ProfilerStep ranges).

The trace is the generated `prefill_interference` scenario (tools/make_scenario_traces.py: 20k-token
prefills every 12 decode steps of a CUDA-graph decode batch, a stream sync and the host's output
processing after every step), so it needs no ../shared. The replay traces graph nodes
(INFERSCOPE_GRAPH_NODES=1: the decode kernels are the trace's) and uses one window longer than the
trace, so the live windows cut no step the file does not cut: the split must match to the
nanosecond. The agent's /metrics is read before the agent stops.

Usage: live_phases.py --inferscope BIN --replay-engine BIN
Exit codes: 0 pass, 1 a difference or failure.
"""

import argparse
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

from live_common import REPO, wait_for_socket


def fail(msg):
    print("FAIL: " + msg)
    return 1


def wait_for_windows(metrics_url, timeout_s=30.0):
    """/metrics once it has a phase sample (the agent has taken the window in)."""
    deadline = time.time() + timeout_s
    text = ""
    while time.time() < deadline:
        text = urllib.request.urlopen(metrics_url, timeout=5).read().decode()
        if "inferscope_phase_gpu_seconds_total{" in text:
            return text
        time.sleep(0.2)
    return text


def metric(text, family, phase, category=None):
    total = 0.0
    found = False
    for line in text.splitlines():
        if not line.startswith(family + "{"):
            continue
        if 'phase="%s"' % phase not in line:
            continue
        if category is not None and 'category="%s"' % category not in line:
            continue
        total += float(line.rsplit(" ", 1)[1])
        found = True
    return total if found else None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--inferscope", required=True)
    p.add_argument("--replay-engine", required=True)
    args = p.parse_args()

    work = tempfile.mkdtemp(prefix="inferscope_phases_")
    subprocess.run([sys.executable, os.path.join(REPO, "tools", "make_scenario_traces.py"),
                    "--out", work, "--scenario", "prefill_interference", "--quiet"], check=True)
    trace = os.path.join(work, "prefill_interference.json.gz")
    state = os.path.join(work, "state")
    os.makedirs(state)
    agent = subprocess.Popen([args.inferscope, "agent", "--state-dir", state, "--http-port", "0"],
                             stdout=subprocess.DEVNULL,
                             stderr=open(os.path.join(work, "agent.log"), "w"))
    metrics_text = ""
    try:
        if not wait_for_socket(os.path.join(state, "agent.sock")):
            return fail("the agent did not start (see %s)" % work)
        metrics_url = json.load(open(os.path.join(state, "agent.json")))["endpoints"]["metrics"]
        env = dict(os.environ, INFERSCOPE_GRAPH_NODES="1")
        replay = subprocess.run(
            [args.inferscope, "run", "--state-dir", state, "--no-agent", "--window", "1000000s",
             "--", args.replay_engine, "--speed", "0", trace],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
        if replay.returncode != 0:
            return fail("replay failed (%d): %s" % (replay.returncode, replay.stderr[-500:]))
        metrics_text = wait_for_windows(metrics_url)
    finally:
        agent.send_signal(signal.SIGTERM)
        try:
            agent.wait(timeout=30)
        except subprocess.TimeoutExpired:
            agent.kill()
            return fail("the agent did not stop on SIGTERM")
    if agent.returncode != 0:
        return fail("the agent exited with status %d (see %s/agent.log)" % (agent.returncode, work))

    def run(*cmd):
        r = subprocess.run(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd[:2]), r.returncode, r.stderr))
        return r.stdout

    live = json.loads(run(args.inferscope, "report", "--state-dir", state, "--last", "24h",
                          "--format", "json"))
    offline = json.loads(run(args.inferscope, "analyze", "--format", "json", "--views", "steps",
                             trace))
    text = run(args.inferscope, "report", "--state-dir", state, "--last", "24h")

    problems = []
    phases = live["summary"]["phases"]
    by_phase = {p["phase"]: p for p in phases["list"]}
    # The scenario: 3 prefills (one step each) and 36 decode steps; the last decode step has no
    # host turn after it inside the window, so it is outside.
    if sorted(by_phase) != ["decode", "prefill"]:
        problems.append("live phases %s, want decode and prefill" % sorted(by_phase))
    else:
        if by_phase["prefill"]["steps"] != 3:
            problems.append("prefill steps %d, want 3" % by_phase["prefill"]["steps"])
        if by_phase["decode"]["steps"] != 35:
            problems.append("decode steps %d, want 35" % by_phase["decode"]["steps"])
        for name, p in by_phase.items():
            if p["categories"].get("attention", {}).get("time_ns", 0) <= 0:
                problems.append("%s steps have no attention time" % name)
        # Prefill steps are long (a 20k-token prompt), decode steps short.
        if by_phase["prefill"]["step_mean_ns"] < 10 * by_phase["decode"]["step_mean_ns"]:
            problems.append("prefill step mean %d ns is not >> decode's %d ns" %
                            (by_phase["prefill"]["step_mean_ns"], by_phase["decode"]["step_mean_ns"]))
    if phases != offline["summary"]["phases"]:
        problems.append("live phases differ from analyze:\n  live    %s\n  offline %s" %
                        (json.dumps(phases, sort_keys=True)[:1500],
                         json.dumps(offline["summary"]["phases"], sort_keys=True)[:1500]))
    # Parity with the offline steps view (ProfilerStep ranges): the same prefill steps and GPU
    # time; its decode steps are the live ones plus the last (outside live: no host turn after it).
    view_phases = {}
    for proc in offline["views"]["inputs"][0]["processes"]:
        for row in proc["steps"]["phases"]:
            view_phases[row["phase"]] = row
    if sorted(view_phases) != ["decode", "prefill"]:
        problems.append("steps view phases %s, want decode and prefill" % sorted(view_phases))
    elif by_phase.get("prefill") and by_phase.get("decode"):
        if (view_phases["prefill"]["duration"]["count"], view_phases["prefill"]["gpu_time_ns"]) != \
                (by_phase["prefill"]["steps"], by_phase["prefill"]["gpu_time_ns"]):
            problems.append("prefill: steps view %r, live %r" % (view_phases["prefill"],
                                                                 by_phase["prefill"]))
        if view_phases["decode"]["duration"]["count"] != by_phase["decode"]["steps"] + 1 or \
                view_phases["decode"]["gpu_time_ns"] != \
                by_phase["decode"]["gpu_time_ns"] + phases["outside_ns"]:
            problems.append("decode: steps view %r, live %r + outside %d" %
                            (view_phases["decode"], by_phase["decode"], phases["outside_ns"]))
    # The text report has the section with both phases.
    section = text[text.find("Forward phases (prefill vs decode)"):]
    if not text.count("Forward phases (prefill vs decode)"):
        problems.append("no 'Forward phases' section in the text report")
    elif not (re.search(r"\bprefill\s+3\b", section) and re.search(r"\bdecode\s+35\b", section)):
        problems.append("the text section lacks the prefill/decode rows:\n" + section[:800])
    # /metrics: the same steps and GPU seconds per phase.
    if by_phase.get("prefill"):
        steps = metric(metrics_text, "inferscope_phase_steps_total", "prefill")
        if steps != 3:
            problems.append("/metrics prefill steps %r, want 3" % steps)
        for name, p in by_phase.items():
            gpu_s = metric(metrics_text, "inferscope_phase_gpu_seconds_total", name)
            if gpu_s is None or abs(gpu_s - p["gpu_time_ns"] / 1e9) > 1e-6 * max(1.0, gpu_s):
                problems.append("/metrics %s GPU seconds %r, report %d ns" %
                                (name, gpu_s, p["gpu_time_ns"]))
    for line in problems:
        print("FAIL: " + line)
    if problems:
        print("(kept %s)" % work)
        return 1
    print("ok: prefill %d steps %.1f ms GPU, decode %d steps %.1f ms GPU, outside %.1f ms" %
          (by_phase["prefill"]["steps"], by_phase["prefill"]["gpu_time_ns"] / 1e6,
           by_phase["decode"]["steps"], by_phase["decode"]["gpu_time_ns"] / 1e6,
           phases["outside_ns"] / 1e6))
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
