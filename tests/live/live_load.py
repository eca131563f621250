#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""Load test of the live path: many processes send windows to one agent at once for a minute;
nothing may be lost and the agent's memory must stay bounded.

One `inferscope agent --state-dir D`, then N (default 64) concurrent
`inferscope run --state-dir D --window 1s -- replay_engine --speed 1 --loop-for S --loop-period 1
TRACE`: each process replays a real LLM inference trace (Qwen1.5-0.5B chat, 1,465 kernels in
50 ms) once a second for S seconds through the fake CUPTI and the real injection library, so the
agent receives N windows a second from N connections. Checked:

  nothing lost   every process exits 0 and its stored windows are contiguous (no gap between its
                 first and last window, each exactly one window long); the kernels of its stored
                 windows add up to the kernel records it delivered (replay_engine_summary line);
                 no records dropped (report data_quality); the agent logs a goodbye for every
                 process with the window count the store holds, and no dropped connection, partial
                 frame or store error; the processes log nothing but their start and exit lines.
  memory         the agent's VmRSS (sampled every second) peaks under --rss-bound-mib and does not
                 grow over the last 20 s of the load beyond --rss-noise-mib.

Prints one line of figures (windows/s stored, agent peak RSS, agent CPU %) for docs/benchmarks.md.

Usage: live_load.py --inferscope BIN --replay-engine BIN [--processes N] [--seconds S]
Exit 0 ok, 1 failure (without ../shared/traces the bundled example trace is replayed).
"""

import argparse
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

from live_common import REPO, shared_trace, wait_for_socket, stop_agent

TRACE = "Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class AgentSampler(threading.Thread):
    """Samples a process's VmRSS (KiB) and CPU time (s) once a second until stopped."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.samples = []  # (monotonic s, rss KiB, cpu s)
        self.stopping = threading.Event()

    def sample(self):
        try:
            with open("/proc/%d/status" % self.pid) as f:
                rss = int(re.search(r"^VmRSS:\s+(\d+) kB", f.read(), re.M).group(1))
            with open("/proc/%d/stat" % self.pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime + stime
        except (OSError, AttributeError):
            return
        self.samples.append((time.monotonic(), rss, cpu))

    def run(self):
        while not self.stopping.is_set():
            self.sample()
            self.stopping.wait(1.0)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--inferscope", required=True)
    p.add_argument("--replay-engine", required=True)
    p.add_argument("--processes", type=int, default=64)
    p.add_argument("--seconds", type=float, default=60.0, help="how long each process runs")
    p.add_argument("--window", default="1s")
    # The bound: the binary, libraries and heap at rest (~7 MiB measured) + SQLite's page cache
    # (2 MiB) + the writer queue, which holds at most max_queued_windows = 4096 frames of ~11 KB
    # (these windows: 10.8 KB on the wire, 2.3 KB stored): 44 MiB if SQLite stalled completely +
    # the connections' partial frames (one each, 64 x 11 KB). So 64 MiB. Growth: keeping one frame
    # per window would add 64 x 11 KB a second, 14 MiB over 20 s, and even keeping the 2.3 KB
    # stored form would add 2.9 MiB: both above the 2 MiB allowed for allocator noise.
    p.add_argument("--rss-bound-mib", type=float, default=64.0)
    p.add_argument("--rss-noise-mib", type=float, default=2.0)
    p.add_argument("--keep", action="store_true", help="keep the work directory")
    args = p.parse_args()
    trace = shared_trace(TRACE)
    if trace is None:
        # A fresh clone: the bundled example (2-GPU vLLM decode the project generates).
        trace = os.path.join(REPO, "examples", "vllm_tp2_decode", "rank0.json.gz")
        print("note: ../shared/traces/**/%s not found: replaying the bundled %s" %
              (TRACE, os.path.relpath(trace, REPO)))

    work = tempfile.mkdtemp(prefix="inferscope_load_")
    state = os.path.join(work, "state")
    os.makedirs(state)
    problems = []
    agent_log_path = os.path.join(work, "agent.log")
    agent = subprocess.Popen([args.inferscope, "agent", "--state-dir", state],
                             stdout=subprocess.DEVNULL, stderr=open(agent_log_path, "w"))
    procs = []
    try:
        if not wait_for_socket(os.path.join(state, "agent.sock"), timeout_s=30):
            print("FAIL: the agent did not start (see %s)" % work)
            return 1
        sampler = AgentSampler(agent.pid)
        sampler.start()
        env = dict(os.environ, INFERSCOPE_LOG="info")
        started = time.monotonic()
        for i in range(args.processes):
            err = open(os.path.join(work, "proc%02d.log" % i), "w")
            cmd = [args.inferscope, "run", "--state-dir", state, "--window", args.window, "--",
                   args.replay_engine, "--speed", "1", "--loop-for", str(args.seconds),
                   "--loop-period", "1", trace]
            procs.append((subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err),
                          err.name))
        for proc, log in procs:
            try:
                rc = proc.wait(timeout=max(0.0, started + args.seconds + 60 - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                rc = "timeout"
            if rc != 0:
                problems.append("%s: exit status %s" % (log, rc))
        load_s = time.monotonic() - started
        sampler.stopping.set()
        sampler.join()
    finally:
        for proc, _ in procs:
            if proc.poll() is None:
                proc.kill()
        if not stop_agent(agent, 60):
            problems.append("the agent did not stop on SIGTERM")
    if agent.returncode != 0:
        problems.append("agent exit status %s" % agent.returncode)

    # What each process says it delivered.
    delivered = {}  # pid -> summary
    for _, log in procs:
        text = open(log).read()
        summaries = [json.loads(m) for m in re.findall(r"^replay_engine_summary (\{.*\})$", text,
                                                       re.M)]
        if len(summaries) != 1:
            problems.append("%s: %d summary lines" % (log, len(summaries)))
            continue
        s = summaries[0]
        delivered[s["pid"]] = s
        if s["records_dropped"] != 0 or s["kernels_written"] != s["kernels"]:
            problems.append("%s: the fake CUPTI dropped records: %s" % (log, s))
        if s["loops"] < args.seconds * 0.9:
            problems.append("%s: only %d loops in %.0f s" % (log, s["loops"], args.seconds))
        # Only the start line and the exit line with nothing left undelivered.
        for line in text.splitlines():
            if line.startswith("inferscope") and not re.match(
                    r"inferscope\[\d+\]: (profiling on \(CUPTI |at exit: \d+ frames delivered, 0 left)",
                    line):
                problems.append("%s: %s" % (log, line))

    # The agent's account: one session per process, each ended by a goodbye; nothing dropped.
    agent_log = open(agent_log_path).read()
    ended = {}  # pid -> windows the agent received in that session
    for line in agent_log.splitlines():
        m = re.search(r"session end: pid (\d+) .*: (\d+) windows \((.*)\)$", line)
        if m:
            ended[int(m.group(1))] = int(m.group(2))
            if m.group(3) != "goodbye":
                problems.append("agent: " + line)
        elif re.search(r"dropping|mid-frame|store error|poll failed", line):
            problems.append("agent: " + line)
    if set(ended) != set(delivered):
        problems.append("agent saw sessions of %d processes, %d reported" %
                        (len(ended), len(delivered)))

    # The store: contiguous windows of exactly one window length per process.
    window_ns = None
    m = re.fullmatch(r"(\d+)(ms|s)", args.window)
    if m:
        window_ns = int(m.group(1)) * (1_000_000 if m.group(2) == "ms" else 1_000_000_000)
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(state, "inferscope.db"), uri=True)
    stored = {}
    for pid, start, end in db.execute(
            "SELECT p.pid, w.start_ns, w.end_ns FROM windows w JOIN processes p"
            " ON p.id = w.process_id ORDER BY p.pid, w.start_ns"):
        stored.setdefault(pid, []).append((start, end))
    db.close()
    total_windows = sum(len(w) for w in stored.values())
    for pid, windows in stored.items():
        gaps = [(a, b) for a, b in zip(windows, windows[1:]) if a[1] != b[0]]
        if gaps:
            problems.append("pid %d: %d gaps between stored windows, first %r" %
                            (pid, len(gaps), gaps[0]))
        if window_ns and any(e - s != window_ns for s, e in windows):
            problems.append("pid %d: a stored window is not %s long" % (pid, args.window))
        if ended.get(pid) != len(windows):
            problems.append("pid %d: agent received %s windows, store holds %d" %
                            (pid, ended.get(pid), len(windows)))
    if set(stored) != set(delivered):
        problems.append("store holds windows of %d processes, %d ran" % (len(stored), len(delivered)))

    # The report: per process, the kernels of its windows equal what it delivered.
    r = subprocess.run([args.inferscope, "report", "--state-dir", state, "--last", "24h",
                        "--format", "json", "--top", "1"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    if r.returncode != 0:
        problems.append("report failed (%d): %s" % (r.returncode, r.stderr[-300:]))
    else:
        ranks = json.loads(r.stdout)["ranks"]
        late = 0
        by_pid = {}
        for rank in ranks:
            by_pid.setdefault(rank["pid"], []).append(rank)
        for pid, s in delivered.items():
            kernels = sum(x["kernel_count"] for x in by_pid.get(pid, []))
            dropped = sum(x["data_quality"]["records_dropped"] for x in by_pid.get(pid, []))
            late += sum(x["data_quality"]["late_record"] for x in by_pid.get(pid, []))
            if kernels != s["kernels_written"]:
                problems.append("pid %d: stored windows hold %d kernels, it delivered %d" %
                                (pid, kernels, s["kernels_written"]))
            if dropped:
                problems.append("pid %d: report says %d records dropped" % (pid, dropped))
        if late:
            print("note: %d records arrived after their window closed (folded in, not lost)" % late)

    # Memory: the peak under the bound, and flat over the last 20 s of the load.
    samples = sampler.samples
    peak_mib = max(s[1] for s in samples) / 1024.0 if samples else 0.0
    end_t = samples[-1][0] if samples else 0.0
    last = [s[1] for s in samples if s[0] >= end_t - 20]
    before = [s[1] for s in samples if end_t - 30 <= s[0] < end_t - 20]
    growth_mib = (max(last) - max(before)) / 1024.0 if last and before else 0.0
    if not samples or samples[-1][0] - samples[0][0] < min(args.seconds, 30) * 0.8:
        problems.append("too few RSS samples (%d)" % len(samples))
    if peak_mib > args.rss_bound_mib:
        problems.append("agent peak RSS %.1f MiB > bound %.0f MiB" % (peak_mib, args.rss_bound_mib))
    if growth_mib > args.rss_noise_mib:
        problems.append("agent RSS grew %.1f MiB over the last 20 s (noise bound %.0f MiB)" %
                        (growth_mib, args.rss_noise_mib))
    cpu_pct = 0.0
    if len(samples) >= 2:
        cpu_pct = 100.0 * (samples[-1][2] - samples[0][2]) / (samples[-1][0] - samples[0][0])
    kernels_total = sum(s["kernels_written"] for s in delivered.values())
    print("load: %d processes x %.0f s, window %s: %d windows stored (%.1f windows/s over %.1f s), "
          "%d kernels; agent peak RSS %.1f MiB (growth over last 20 s %+.1f MiB), agent CPU %.1f%%"
          % (args.processes, args.seconds, args.window, total_windows, total_windows / load_s,
             load_s, kernels_total, peak_mib, growth_mib, cpu_pct))

    for line in problems[:30]:
        print("FAIL " + line)
    if problems:
        print("%d problems (work dir %s)" % (len(problems), work))
        return 1
    print("ok: nothing lost, agent memory bounded")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
