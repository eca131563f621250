#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""How much GPU time the forward-phase split leaves `outside`: for every shared
trace (../shared/traces, skipped with a message when absent) and the bundled two-rank example,
`outside_pct` of `inferscope analyze` and of the live path (the trace replayed through the fake
CUPTI into the injection library and an agent, `inferscope report`), with 100 ms and 10 s windows.

With --baseline-build, the same figures from another build (e.g. main's) are put beside them:
a before/after comparison (docs/benchmarks.md, "Forward phases and live steps", gives the
current figures).

Usage: measure_phase_outside.py --build build/ci [--baseline-build DIR] [--windows 100ms,10s]
Exit codes: 0 done, 1 a run failed, 2 bad arguments.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "live"))
from live_common import REPO, shared_traces, shared_traces_root, wait_for_socket  # noqa: E402


def binaries(build):
    return (os.path.join(build, "src", "cli", "inferscope"),
            os.path.join(build, "tests", "fakes", "replay_engine"))


def outside_of(report):
    p = report["summary"]["phases"]
    steps = sum(r["steps"] for r in p["list"])
    return p["outside_pct"], steps


def analyze(build, traces):
    inferscope, _ = binaries(build)
    r = subprocess.run([inferscope, "analyze", "--format", "json"] + traces,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if r.returncode != 0:
        raise RuntimeError("analyze %s failed (%d)" % (traces, r.returncode))
    return outside_of(json.loads(r.stdout))


def live(build, traces, window, work):
    inferscope, replay_engine = binaries(build)
    state = tempfile.mkdtemp(dir=work)
    agent = subprocess.Popen([inferscope, "agent", "--state-dir", state, "--http-port", "0"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if not wait_for_socket(os.path.join(state, "agent.sock")):
            raise RuntimeError("the agent did not start")
        # --speed 0: the records keep the trace's timing (shifted to now), so the windows cut the
        # trace where real-time replay would, without waiting for it.
        r = subprocess.run([inferscope, "run", "--state-dir", state, "--no-agent", "--window",
                            window, "--", replay_engine, "--speed", "0"] + traces,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=600)
        if r.returncode != 0:
            raise RuntimeError("replay of %s failed: %s" % (traces, r.stderr[-300:]))
    finally:
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=60)
    r = subprocess.run([inferscope, "report", "--state-dir", state, "--last", "24h", "--format",
                        "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    shutil.rmtree(state, ignore_errors=True)
    if r.returncode != 0:
        raise RuntimeError("report failed: " + r.stderr[-300:])
    return outside_of(json.loads(r.stdout))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", required=True, help="build dir with src/cli/inferscope")
    p.add_argument("--baseline-build", help="a second build dir, shown as 'before'")
    p.add_argument("--windows", default="100ms,10s")
    args = p.parse_args()
    builds = [b for b in (args.baseline_build, args.build) if b]
    for b in builds:
        for path in binaries(b):
            if not os.path.exists(path):
                print("missing %s (build inferscope and replay_engine)" % path)
                return 2
    windows = args.windows.split(",")

    inputs = [("examples/vllm_tp2_decode (2 ranks)",
               [os.path.join(REPO, "examples", "vllm_tp2_decode", f)
                for f in ("rank0.json.gz", "rank1.json.gz")])]
    shared = shared_traces()
    if shared is None:
        print("(no shared traces at %s: only the bundled example)" % shared_traces_root())
    else:
        root = os.path.abspath(shared_traces_root())
        inputs += [(os.path.relpath(t, root), [t]) for t in shared]

    work = tempfile.mkdtemp(prefix="inferscope_phase_outside_")
    header = ["trace"]
    for what in ["analyze"] + ["live %s" % w for w in windows]:
        header.append(what + (" before → after" if args.baseline_build else ""))
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    failed = False
    try:
        for name, traces in inputs:
            cells = [name]
            runs = [lambda b: analyze(b, traces)]
            runs += [lambda b, w=w: live(b, traces, w, work) for w in windows]
            for run in runs:
                parts = []
                for b in builds:
                    try:
                        pct, steps = run(b)
                        parts.append("%.1f%% (%d steps)" % (pct, steps))
                    except (RuntimeError, subprocess.TimeoutExpired, KeyError, ValueError) as e:
                        parts.append("failed")
                        print("  %s: %s" % (name, e), file=sys.stderr)
                        failed = True
                cells.append(" → ".join(parts))
            print("| " + " | ".join(cells) + " |", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
