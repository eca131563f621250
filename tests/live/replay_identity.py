#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""The live path's key test: a trace replayed through the injection library gives the report the
offline analyzer gives for the file.

For each trace: start `inferscope agent` on a fresh state directory, run
`inferscope run --state-dir D -- replay_engine --speed 0 TRACE` (the replay engine acts as the CUDA
driver and the engine, emitting the trace's records through a fake CUPTI into the real injection
library, one process per rank), stop the agent (SIGTERM: it stores everything it acknowledged),
then compare `inferscope report --state-dir D --last 24h --format json` with
`inferscope analyze --format json TRACE`: per rank, exact equality of kernel count, busy time,
GPU time and count per category, host sync waits per type, and the top kernels.

Every trace is replayed once per CUPTI version of --cupti-versions (default: 13.0, 12.4 and
12.8): the fake CUPTI then reports that version and delivers its record layouts (Kernel10 /
Kernel9, Memcpy6 / Memcpy5, Synchronization2 / Synchronization), and the injection library must
bind, gate and decode each the same. Without ../shared the project's own traces are replayed (the
bundled example and the generated scenario traces), and the output says so.

A window longer than any trace (INFERSCOPE window 1000000s) makes the live side produce one
window per process, so even union-based figures (busy) must match to the nanosecond.

Usage: replay_identity.py --inferscope BIN --replay-engine BIN [--traces NAME,NAME]
                          [--cupti-versions V,V] [--rotate-versions] [TRACE...]
(--traces: only these shared traces, by file name; for slow builds such as TSan;
 --rotate-versions: each trace under one version, the versions in turn; for ASan)
Exit codes: 0 all equal, 1 a difference, 77 skipped (--traces named but no ../shared/traces).
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

from live_common import bundled_traces, shared_traces, wait_for_socket, stop_agent


def rank_key(r):
    return (r.get("rank", 0), r.get("device", 0))


def compare(trace, offline, live):
    problems = []
    a = sorted(offline["ranks"], key=rank_key)
    b = sorted(live["ranks"], key=rank_key)
    if len(a) != len(b):
        return ["%s: %d ranks offline, %d live" % (trace, len(a), len(b))]
    for ra, rb in zip(a, b):
        where = "%s rank %s device %s" % (trace, ra.get("rank"), ra.get("device"))

        def same(label, x, y):
            if x != y:
                problems.append("%s: %s offline %r != live %r" % (where, label, x, y))

        same("kernel_count", ra.get("kernel_count"), rb.get("kernel_count"))
        for key in ("span_ns", "busy_ns", "idle_ns", "compute_ns", "non_compute_ns"):
            same("temporal_breakdown." + key, ra["temporal_breakdown"][key],
                 rb["temporal_breakdown"][key])
        for cat, stats in ra["categories"].items():
            other = rb["categories"].get(cat, {})
            same("categories.%s.time_ns" % cat, stats["time_ns"], other.get("time_ns"))
            same("categories.%s.count" % cat, stats["count"], other.get("count"))
        for kind, stats in ra.get("sync_waits", {}).items():
            other = rb.get("sync_waits", {}).get(kind, {})
            same("sync_waits.%s.count" % kind, stats.get("count"), other.get("count"))
            same("sync_waits.%s.total_ns" % kind, stats.get("total_ns"), other.get("total_ns"))
        ka = [(k["name"], k["count"], k["total_ns"]) for k in ra["top_kernels"]]
        kb = [(k["name"], k["count"], k["total_ns"]) for k in rb["top_kernels"]]
        same("top_kernels", ka, kb)
        dropped = rb.get("data_quality", {}).get("records_dropped", 0)
        same("data_quality.records_dropped (live)", 0, dropped)
    return problems


def run_one(args, trace, work, cupti_version, graph_nodes=False):
    state = os.path.join(work, "state")
    os.makedirs(state)
    rerun_with_nodes = False
    agent = subprocess.Popen([args.inferscope, "agent", "--state-dir", state],
                             stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "agent.log"), "w"))
    try:
        if not wait_for_socket(os.path.join(state, "agent.sock")):
            return ["%s: the agent did not start (see %s)" % (trace, work)]
        env = dict(os.environ, INFERSCOPE_LOG="info", FAKE_CUPTI_VERSION=str(cupti_version))
        if graph_nodes:
            env["INFERSCOPE_GRAPH_NODES"] = "1"
        replay = subprocess.run(
            [args.inferscope, "run", "--state-dir", state, "--no-agent", "--window", "1000000s", "--",
             args.replay_engine, "--speed", "0", trace],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
        if replay.returncode != 0:
            return ["%s: replay failed (%d): %s" % (trace, replay.returncode, replay.stderr[-500:])]
        # The library bound the fake as the CUPTI release it pretends to be, and said so.
        release = "13.0" if cupti_version >= 130000 else {22: "12.4", 26: "12.8"}.get(
            cupti_version, "?")
        if "profiling on (CUPTI %s," % release not in replay.stderr:
            return ["%s: no 'profiling on (CUPTI %s, ...)' line: %s" %
                    (trace, release, replay.stderr[-500:])]
        # CUDA graphs: by default each graph launch is one record (a "[cuda graph N]" pseudo-kernel
        # until the graph attribution of docs/design/inject.md lands), which cannot equal the
        # trace's kernels; node-level tracing must. Replays with graph launches run again so.
        graph_launches = sum(int(m) for m in re.findall(r"(\d+) graph launches", replay.stderr))
        rerun_with_nodes = graph_launches > 0 and not graph_nodes
    finally:
        if not stop_agent(agent, 30):
            return ["%s: the agent did not stop on SIGTERM" % trace]
    if agent.returncode != 0:  # e.g. 66: a sanitizer report (halt_on_error)
        return ["%s: the agent exited with status %d (see %s/agent.log)" %
                (trace, agent.returncode, work)]
    if rerun_with_nodes:
        shutil.rmtree(state, ignore_errors=True)
        return run_one(args, trace, work, cupti_version, graph_nodes=True)
    live = subprocess.run([args.inferscope, "report", "--state-dir", state, "--last", "24h",
                           "--format", "json", "--top", "15"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if live.returncode != 0:
        return ["%s: report failed (%d): %s" % (trace, live.returncode, live.stderr)]
    offline = subprocess.run([args.inferscope, "analyze", "--format", "json", "--top", "15", trace],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if offline.returncode != 0:
        return ["%s: analyze failed: %s" % (trace, offline.stderr)]
    return compare(os.path.basename(trace), json.loads(offline.stdout), json.loads(live.stdout))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--inferscope", required=True)
    p.add_argument("--replay-engine", required=True)
    p.add_argument("--traces", dest="names", default="",
                   help="comma-separated file names of shared traces to replay (default: all)")
    p.add_argument("--cupti-versions", default="130001,22,26",
                   help="CUPTI API versions the fake plays (default 13.0, 12.4 and 12.8)")
    p.add_argument("--rotate-versions", action="store_true",
                   help="replay each trace under one CUPTI version, taking the versions in turn "
                        "(every trace and every version still covered, a third of the replays: "
                        "for slow builds such as ASan)")
    p.add_argument("traces", nargs="*")
    args = p.parse_args()
    versions = [int(v) for v in args.cupti_versions.split(",") if v]
    traces = args.traces
    if not traces:
        # The project's own traces always; the real ones of ../shared add coverage when present.
        traces = bundled_traces(tempfile.mkdtemp(prefix="inferscope_bundled_"))
        if args.names:
            traces = []
        shared = shared_traces()
        if shared:
            traces += shared
        else:
            print("note: ../shared/traces not found: replaying only the project's own traces (the "
                  "bundled example and the generated scenario traces); the real-trace part is "
                  "skipped")
    if traces and args.names:
        wanted = args.names.split(",")
        traces = [t for t in traces if os.path.basename(t) in wanted]
        missing = set(wanted) - {os.path.basename(t) for t in traces}
        if missing:
            print("FAIL: no shared trace called %s" % ", ".join(sorted(missing)))
            return 1
    if not traces:
        print("SKIP: ../shared/traces not found (set INFERSCOPE_SHARED_TRACES)")
        return 77
    failures = 0
    replays = 0
    for index, trace in enumerate(traces):
        mine = [versions[index % len(versions)]] if args.rotate_versions else versions
        for version in mine:
            replays += 1
            work = tempfile.mkdtemp(prefix="inferscope_replay_")
            started = time.time()
            problems = run_one(args, trace, work, version)
            status = "ok  " if not problems else "FAIL"
            print("%s %s, CUPTI API %d (%.1f s)" % (status, os.path.basename(trace), version,
                                                   time.time() - started))
            for line in problems[:20]:
                print("  " + line)
            if problems:
                failures += 1
            else:
                shutil.rmtree(work, ignore_errors=True)
    print("%d of %d replays differ (%d traces, %d CUPTI versions%s)" %
          (failures, replays, len(traces), len(versions),
           ", one per trace in turn" if args.rotate_versions else " each"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
