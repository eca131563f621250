#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""Launch configurations on the live path: a trace replayed through the fake
CUPTI into the real injection library and agent gives, per top kernel of `inferscope report`
(JSON `top_kernels[].launch_configs`, `report --views kernels` text and CSV), the launch
configurations `inferscope analyze --views kernels` finds in the same file.

The trace is written here (a Kineto JSON, no ../shared needed): four kernels on one stream over
~1.2 s, each after its cudaLaunchKernel,
- an attention kernel with one grid and block but two shared-memory sizes (two configurations),
  and a third grid; registers recorded;
- a GEMM whose grid follows the batch: six configurations over the run (more than the four a row
  lists), at most three in any 100 ms (so every window lists all it saw and the merge is exact);
- a norm kernel whose args record no registers or shared memory;
- an elementwise kernel with one configuration.
The replay puts the trace's registers and shared memory into the CUPTI records (Kineto records
the shared-memory sum only: it goes in as dynamic, the static part 0), so what is compared is
what the trace has: grid, block, count, total time, the shared-memory sum, registers where the
trace recorded them, and the distinct count. Replayed twice: in one window longer than the trace
(the Aggregator's bounded slots against the exact offline count) and in 100 ms windows (the
window merge of `report`).

With ../shared, an HTA Kineto trace (trace_filter/sampled_rank-0: registers and shared memory on
every kernel) and an Nsight export (mfu_2gpu_before.sqlite: static and dynamic shared memory) in
one window: every live top kernel whose configurations fit the slots (at most 16 distinct; past
that the live counts are estimates, docs/report-schema.md) equals the offline row. Absent, they are
skipped with a message.

Usage: live_launch_configs.py --inferscope BIN --replay-engine BIN
Exit codes: 0 pass, 1 a difference or failure.
"""

import argparse
import csv
import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

from live_common import agent_endpoints, shared_trace, wait_for_socket, stop_agent  # noqa: F401

ATTN = "flash_fwd_kernel"
GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32"
NORM = "rms_norm_kernel"
ELEM = "vectorized_elementwise_kernel"


def fail(msg):
    print("FAIL: " + msg)
    return 1


def write_trace(path):
    """The generated Kineto trace (see the module doc). Integer microseconds throughout."""
    pid, stream = 4242, 7
    events = [
        {"name": "process_name", "ph": "M", "ts": 0, "pid": pid, "tid": 0,
         "args": {"name": "EngineCore_0"}},
        {"name": "process_labels", "ph": "M", "ts": 0, "pid": 0, "tid": 0,
         "args": {"labels": "GPU 0"}},
    ]
    t = 1_000_000  # us
    corr = 0

    def launch(name, grid, block, dur_us, resources):
        nonlocal t, corr
        corr += 1
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid,
                       "tid": pid, "ts": t, "dur": 4, "args": {"correlation": corr}})
        args = {"device": 0, "stream": stream, "correlation": corr, "grid": list(grid),
                "block": list(block)}
        args.update(resources)
        events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream,
                       "ts": t + 10, "dur": dur_us, "args": args})
        t += 500

    # 2,400 launches, 500 us apart: 1.2 s. The GEMM's configuration changes every 120 ms, two
    # grids at a time, so a 100 ms window sees at most three.
    for i in range(2400):
        phase = i // 240  # 120 ms
        k = i % 4
        if k == 0:
            smem = 98304 if i % 16 == 0 else 49152
            grid = (264, 1, 1) if i % 40 == 4 else (132, 1, 1)
            launch(ATTN, grid, (128, 1, 1), 30 + i % 7,
                   {"registers per thread": 168, "shared memory": smem})
        elif k == 1:
            batch = (phase // 2 + (i // 4) % 2) % 6  # configurations b and b+1 of six
            launch(GEMM, (8 * (batch + 1), 2, 1), (256, 1, 1), 20 + batch,
                   {"registers per thread": 154, "shared memory": 0})
        elif k == 2:
            launch(NORM, (1, 1, 1), (1024, 1, 1), 5, {})
        else:
            launch(ELEM, (4096, 1, 1), (128, 1, 1), 3 + i % 2,
                   {"registers per thread": 16, "shared memory": 0})
    doc = {"schemaVersion": 1, "traceEvents": events,
           "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}]}
    with gzip.open(path, "wt") as f:
        json.dump(doc, f)


def offline_rows(report):
    """name -> (distinct, configs) of an `analyze --views kernels` JSON report (one device)."""
    out = {}
    for inp in report["views"]["inputs"]:
        for proc in inp["processes"]:
            for dev in proc["devices"]:
                for k in dev.get("kernel_stats", []):
                    out.setdefault((proc["pid"], dev["device"]), {})[k["name"]] = (
                        k["distinct_launch_configs"], k["launch_configs"])
    return out


def live_rows(report):
    """(rank, device) -> name -> (distinct, configs) of a live report's per-rank top kernels."""
    out = {}
    for r in report["ranks"]:
        rows = {}
        for k in r["top_kernels"]:
            if "launch_configs" in k:
                rows[k["name"]] = (k["distinct_launch_configs"], k["launch_configs"])
        out[(r.get("rank"), r.get("device"))] = rows
    return out


def same_config(live, offline):
    """Differences of one configuration in the fields the trace records, or ""."""
    diffs = []
    for key in ("grid", "block", "count", "total_ns"):
        if live[key] != offline[key]:
            diffs.append("%s %s != %s" % (key, live[key], offline[key]))
    for key in ("registers_per_thread", "shared_bytes", "static_shared_bytes",
                "dynamic_shared_bytes"):
        if offline[key] is not None and live[key] != offline[key]:
            diffs.append("%s %s != %s" % (key, live[key], offline[key]))
    return "; ".join(diffs)


def compare(live, offline, what, names=None, max_distinct=None):
    """Problems comparing live (name -> rows) with offline rows of the same device."""
    problems = []
    checked = 0
    for name, (distinct, configs) in sorted(live.items()):
        if names is not None and name not in names:
            continue
        if name not in offline:
            problems.append("%s: live row %s is not in analyze's kernel view" % (what, name[:60]))
            continue
        want_distinct, want = offline[name]
        if max_distinct is not None and want_distinct > max_distinct:
            continue  # past the live slots: counts are estimates (documented)
        checked += 1
        if distinct != want_distinct:
            problems.append("%s %s: %d distinct configurations live, %d offline" %
                            (what, name[:60], distinct, want_distinct))
        if len(configs) != len(want):
            problems.append("%s %s: %d configurations listed live, %d offline" %
                            (what, name[:60], len(configs), len(want)))
            continue
        for i, (a, b) in enumerate(zip(configs, want)):
            d = same_config(a, b)
            if d:
                problems.append("%s %s config %d: %s" % (what, name[:60], i, d))
    if names is not None and checked != len(names):
        problems.append("%s: compared %d of the kernels %s" % (what, checked, sorted(names)))
    return problems, checked


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--inferscope", required=True)
    p.add_argument("--replay-engine", required=True)
    args = p.parse_args()

    work = tempfile.mkdtemp(prefix="inferscope_configs_")
    trace = os.path.join(work, "configs.json.gz")
    write_trace(trace)

    def run(*cmd):
        r = subprocess.run(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd[:2]), r.returncode, r.stderr))
        return r.stdout

    def replay_live(window, trace, name):
        """(report JSON, `--views kernels` text, CSV launch_configs, windows) or a message."""
        state = os.path.join(work, "state_%s_%s" % (name, window))
        os.makedirs(state)
        log = os.path.join(work, "agent_%s_%s.log" % (name, window))
        agent = subprocess.Popen([args.inferscope, "agent", "--state-dir", state, "--http-port",
                                  "0"], stdout=subprocess.DEVNULL, stderr=open(log, "w"))
        try:
            if not wait_for_socket(os.path.join(state, "agent.sock")):
                return "the agent did not start (see %s)" % log
            env = dict(os.environ, INFERSCOPE_GRAPH_NODES="1")
            replay = subprocess.run(
                [args.inferscope, "run", "--state-dir", state, "--no-agent", "--window", window,
                 "--", args.replay_engine, "--speed", "0", trace],
                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
            if replay.returncode != 0:
                return "replay failed (%d): %s" % (replay.returncode, replay.stderr[-500:])
        finally:
            if not stop_agent(agent, 30):
                return "the agent did not stop on SIGTERM"
        if agent.returncode != 0:
            return "the agent exited with status %d (see %s)" % (agent.returncode, log)
        base = [args.inferscope, "report", "--state-dir", state, "--last", "24h", "--top", "20"]
        live = json.loads(run(*(base + ["--format", "json"])))
        text = run(*(base + ["--views", "kernels"]))
        table = run(*(base + ["--format", "csv", "--table", "launch_configs"]))
        return live, text, table, live["range"]["windows"]

    offline_report = json.loads(run(args.inferscope, "analyze", "--format", "json", "--views",
                                    "kernels", "--top", "20", trace))
    offline = list(offline_rows(offline_report).values())
    if len(offline) != 1:
        return fail("analyze found %d devices in the generated trace, want 1" % len(offline))
    offline = offline[0]
    problems = []
    if offline.get(GEMM, (0, []))[0] != 6 or offline.get(ATTN, (0, []))[0] != 3:
        problems.append("analyze: GEMM %s, attention %s configurations; want 6 and 3" %
                        (offline.get(GEMM, (None,))[0], offline.get(ATTN, (None,))[0]))
    offline_csv = run(args.inferscope, "analyze", "--format", "csv", "--table", "launch_configs",
                      "--top", "20", trace)

    for window in ("1000000s", "100ms"):
        got = replay_live(window, trace, "generated")
        if isinstance(got, str):
            return fail("%s windows: %s" % (window, got))
        live, text, table, windows = got
        print("generated trace, %s windows: %d stored" % (window, windows))
        if window == "100ms" and windows < 10:
            problems.append("the 100 ms replay stored %d windows; want >= 10" % windows)
        rows = list(live_rows(live).values())
        if len(rows) != 1:
            problems.append("%s: %d ranks in the live report, want 1" % (window, len(rows)))
            continue
        found, checked = compare(rows[0], offline, window, names={ATTN, GEMM, NORM, ELEM})
        problems += found
        # The live rows carry what the records had: the attention kernel's two shared-memory sizes
        # with one grid are two configurations, the norm kernel's registers are the replay's
        # default (the trace recorded none; analyze says null).
        attn = rows[0].get(ATTN, (0, []))[1]
        if sorted(c["shared_bytes"] for c in attn if c["grid"] == [132, 1, 1]) != [49152, 98304]:
            problems.append("%s: attention configurations %s" % (window, attn))
        # Text on request: the launch-configuration table; CSV: the same rows as analyze's in the
        # columns the trace records.
        if "Launch configurations" not in text or GEMM not in text:
            problems.append("%s: `report --views kernels` has no launch-configuration table" %
                            window)

        def csv_rows(s):
            keep = ("name", "grid", "block", "registers_per_thread", "shared_bytes", "count",
                    "total_ns", "distinct_configs")
            return sorted(tuple(r[k] for k in keep) for r in csv.DictReader(io.StringIO(s)))

        live_csv = csv_rows(table)
        want_csv = csv_rows(offline_csv)
        # The norm kernel: no registers or shared memory in the trace; live, the replay's 32
        # registers and no shared memory.
        strip = lambda rows: [r if r[0] != NORM else r[:3] + ("", "") + r[5:] for r in rows]
        if strip(live_csv) != strip(want_csv):
            problems.append("%s: CSV launch_configs differ:\n  live    %s\n  offline %s" %
                            (window, live_csv[:6], want_csv[:6]))

    # The shared traces, when present: every top kernel whose configurations fit the slots.
    for name in ("trace_filter/sampled_rank-0.json.gz", "mfu_2gpu_before.sqlite"):
        path = shared_trace(name.split("/")[-1])
        if path is None:
            print("skip (part): no ../shared/traces %s; the generated trace was checked" % name)
            continue
        got = replay_live("1000000s", path, name.split("/")[-1].split(".")[0])
        if isinstance(got, str):
            problems.append("%s: %s" % (name, got))
            continue
        want = json.loads(run(args.inferscope, "analyze", "--format", "json", "--views",
                              "kernels", "--top", "20", path))
        want_rows = list(offline_rows(want).values())
        live_by_device = list(live_rows(got[0]).values())
        if len(want_rows) != len(live_by_device):
            problems.append("%s: %d devices live, %d offline" % (name, len(live_by_device),
                                                                 len(want_rows)))
            continue
        total = 0
        # Devices in report order (rank, device) and analyze's (pid, device) match one to one.
        for live_dev, want_dev in zip(live_by_device, want_rows):
            found, checked = compare(live_dev, want_dev, name, max_distinct=16)
            problems += found
            total += checked
        if total == 0:
            problems.append("%s: no live row was compared" % name)
        print("%s: %d kernel rows compared" % (name, total))

    if problems:
        return fail("\n  ".join(problems))
    shutil.rmtree(work, ignore_errors=True)
    print("PASS: live launch configurations equal analyze --views kernels")
    return 0


if __name__ == "__main__":
    sys.exit(main())
