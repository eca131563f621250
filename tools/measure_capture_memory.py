#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""The agent's peak memory while it receives and writes a large live capture (docs/benchmarks.md,
"`inferscope capture` of a live server").

Starts an agent and the replay engine with --ranks processes (the bundled two-rank decode, repeated)
replayed --speed times faster than real time, takes one `inferscope capture` of --seconds with
--max-size, and reports per process the events recorded and dropped, and the agent's resident
memory: before the capture (VmRSS) and its peak (VmHWM, which the kernel keeps) after the trace is
written. The agent's bound (docs/agent.md, "Capture"): the cap's chunks plus one chunk per process,
plus what decoding and writing one process's part at a time needs.

  python3 tools/measure_capture_memory.py --inferscope build/release/src/cli/inferscope \\
      --replay-engine build/release/tests/fakes/replay_engine --ranks 4 --speed 20 --seconds 5
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACES = [os.path.join(REPO, "examples", "vllm_tp2_decode", "rank%d.json.gz" % r) for r in (0, 1)]


def proc_kib(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--inferscope", required=True)
    p.add_argument("--replay-engine", required=True)
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--speed", type=float, default=20)
    p.add_argument("--seconds", type=float, default=5)
    p.add_argument("--max-size", default="256MB")
    p.add_argument("--format", default="pftrace", choices=["pftrace", "json"])
    args = p.parse_args()

    work = tempfile.mkdtemp(prefix="inferscope_capture_memory_")
    state = os.path.join(work, "state")
    agent = app = None
    try:
        agent = subprocess.Popen([args.inferscope, "agent", "--state-dir", state, "--http-port", "0"],
                                 stdout=subprocess.DEVNULL,
                                 stderr=open(os.path.join(work, "agent.log"), "w"))
        deadline = time.time() + 15
        while not os.path.exists(os.path.join(state, "agent.json")):
            if time.time() > deadline:
                sys.exit("the agent did not start (%s)" % work)
            time.sleep(0.05)
        api = json.load(open(os.path.join(state, "agent.json")))["endpoints"]["api"]
        traces = [TRACES[i % 2] for i in range(args.ranks)]
        app = subprocess.Popen(
            [args.inferscope, "run", "--state-dir", state, "--no-agent", "--",
             args.replay_engine, "--speed", str(args.speed),
             "--loop-for", str(args.seconds + 60)] + traces,
            env=dict(os.environ, INFERSCOPE_WINDOW="1s"),
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "app.log"), "w"))
        deadline = time.time() + 30
        while True:
            r = subprocess.run([args.inferscope, "status", "--state-dir", state, "--format",
                                "json"], capture_output=True, text=True)
            agent_status = json.loads(r.stdout).get("agent") or {} if r.returncode == 0 else {}
            if agent_status.get("connected_processes", 0) >= args.ranks:
                break
            if time.time() > deadline:
                sys.exit("%d processes did not connect (%s)" % (args.ranks, work))
            time.sleep(0.2)
        time.sleep(2)  # past start-up: the agent's steady state
        before_kib = proc_kib(agent.pid, "VmRSS")
        hwm_before_kib = proc_kib(agent.pid, "VmHWM")
        out = os.path.join(work, "capture." + args.format)
        started = time.time()
        r = subprocess.run([args.inferscope, "capture", "--state-dir", state, "--duration",
                            "%gs" % args.seconds, "--max-size", args.max_size, "-o", out],
                           capture_output=True, text=True, timeout=600)
        elapsed = time.time() - started
        peak_kib = proc_kib(agent.pid, "VmHWM")
        if r.returncode != 0:
            sys.exit("capture failed: %s" % r.stderr)
        with open(os.path.join(state, "agent.token")) as f:
            token = f.read().strip()
        req = urllib.request.Request(api + "/capture", headers={"Authorization": "Bearer " + token})
        with urllib.request.urlopen(req, timeout=10) as resp:
            status = json.loads(resp.read())
        print("capture: %d processes, %g s at %gx real time, max size %s, %.1f s end to end"
              % (args.ranks, args.seconds, args.speed, args.max_size, elapsed))
        received = 0
        for proc in status["processes"]:
            received += proc["bytes"]
            print("  pid %d rank %d: %s, %d events (%.0f/s), %d events dropped, %.1f MB received%s"
                  % (proc["pid"], proc["rank"], proc["state"], proc["events"],
                     proc["events"] / args.seconds, proc.get("events_dropped", 0),
                     proc["bytes"] / 1e6,
                     "; " + "; ".join(proc.get("dropped", [])) if proc.get("dropped") else ""))
        print("  kernels %d, API calls %d, output %.1f MB"
              % (status.get("kernels", 0), status.get("api_calls", 0),
                 os.path.getsize(out) / 1e6))
        print("agent RSS before: %.1f MB (peak so far %.1f MB); peak during the capture: %.1f MB;"
              " growth %.1f MB = %.2f x the %.1f MB of chunks received"
              % (before_kib / 1024, hwm_before_kib / 1024, peak_kib / 1024,
                 (peak_kib - before_kib) / 1024,
                 (peak_kib - before_kib) * 1024 / max(1, received), received / 2**20))
    finally:
        for proc in (app, agent):
            if proc and proc.poll() is None:
                proc.kill()
                proc.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
