#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""`inferscope top` against a live agent fed by the replay harness.

  - `inferscope agent --window 1s` on a fresh state dir (no NVML, no scrape);
  - `top --once` before any window: the "waiting for the first window" frame, exit 0;
  - the project's 2-GPU vLLM example replayed rank by rank under `inferscope run` (fake CUPTI,
    the real injection library);
  - `top --once` (stdout a pipe: the plain frame) and, for the same `range: --from S --to S`,
    the HTTP API's /api/v1/profile JSON: every GPU's busy share, the top kernels' time, share and
    calls, and the sync waits shown must equal the API's numbers, formatted as top formats them;
    the same with `--rank 1`; every line within 100 columns;
  - the plain loop stops cleanly on SIGINT (exit 0, one frame per refresh);
  - a plain loop left running while a looping replay (6 s at speed 1) sends windows shows a later
    range as they arrive: at least four distinct range ends, never going back;
  - on a pseudo-terminal: ANSI redraw (alternate screen, cursor home) and 'q' quits (exit 0);
  - no agent: exit 3 with one clear line.

Exit 0 ok, 1 failure.
"""

import argparse
import glob
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

from live_common import REPO, agent_endpoints, api_request, finish, wait_for_socket, stop_agent


class Failure(Exception):
    pass


def fmt_duration(ns):
    """base::FormatDuration."""
    def three(v, unit):
        if v >= 100:
            return "%.0f %s" % (v, unit)
        if v >= 10:
            return "%.1f %s" % (v, unit)
        return "%.2f %s" % (v, unit)
    if 0 <= ns < 1000:
        return "%d ns" % ns
    if ns < 0:
        return "-" + fmt_duration(-ns)
    if ns < 999.5e3:
        return three(ns / 1e3, "us")
    if ns < 999.5e6:
        return three(ns / 1e6, "ms")
    return three(ns / 1e9, "s")


def pct(v):
    return "%.1f%%" % v


def line_with(text, parts):
    """The first line holding every part, in order; None when there is none."""
    for line in text.splitlines():
        at = 0
        for p in parts:
            at = line.find(p, at)
            if at < 0:
                break
            at += len(p)
        else:
            return line
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--inferscope", required=True)
    parser.add_argument("--replay-engine", required=True)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    traces = sorted(glob.glob(os.path.join(REPO, "examples", "vllm_tp2_decode", "*.json.gz")))
    if not traces:
        print("FAIL: the bundled example traces are missing")
        return 1

    work = tempfile.mkdtemp(prefix="inferscope-top-")
    state = os.path.join(work, "state")
    failures = []

    def top(*extra, timeout=60):
        return subprocess.run([args.inferscope, "top", "--state-dir", state, *extra],
                              capture_output=True, text=True, timeout=timeout)

    # No agent: one clear line, exit 3.
    r = top("--once")
    if r.returncode != 3 or "no agent runs for " + state not in r.stderr or r.stdout:
        failures.append("without an agent: exit %d, stderr %r" % (r.returncode, r.stderr))

    agent = subprocess.Popen(
        [args.inferscope, "agent", "--state-dir", state, "--http-port", "0", "--window", "1s",
         "--no-nvml", "--no-scrape"],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "agent.log"), "w"))
    try:
        if not wait_for_socket(os.path.join(state, "agent.sock"), timeout_s=15):
            raise Failure("the agent did not start (see %s)" % work)
        api = agent_endpoints(state)["api"]

        r = top("--once")
        if r.returncode != 0 or "waiting for the first window (window 1.00 s)" not in r.stdout:
            failures.append("before any window: exit %d, %r %r" % (r.returncode, r.stdout,
                                                                     r.stderr))

        for trace in traces:
            replay = subprocess.run(
                [args.inferscope, "run", "--state-dir", state, "--no-agent", "--window", "1s",
                 "--", args.replay_engine, "--speed", "0", trace],
                capture_output=True, text=True, timeout=300)
            if replay.returncode != 0:
                raise Failure("replay of %s failed (%d): %s" % (trace, replay.returncode,
                                                               replay.stderr[-500:]))
        time.sleep(1.5)  # the agent stores the last windows

        def check(label, extra, query, gpus=None):
            r = top("--once", *extra)
            if r.returncode != 0:
                failures.append("%s: exit %d: %s" % (label, r.returncode, r.stderr))
                return
            text = r.stdout
            for line in text.splitlines():
                if len(line) > 100:
                    failures.append("%s: a line of %d columns: %r" % (label, len(line), line))
            m = re.search(r"^range: --from (\d+) --to (\d+)$", text, re.M)
            if not m:
                failures.append("%s: no range line in %r" % (label, text[:300]))
                return
            url = "%s/profile?from=%s&to=%s&top=15%s" % (api, m.group(1), m.group(2), query)
            with urllib.request.urlopen(api_request(state, url), timeout=30) as resp:
                profile = json.load(resp)
            ranks = profile["ranks"]
            if not ranks:
                failures.append("%s: the API has no GPU activity in %s..%s" % (label, m.group(1),
                                                                               m.group(2)))
                return
            if gpus is not None and len(ranks) != gpus:
                failures.append("%s: the API has %d GPUs in the range, want %d" % (label,
                                                                                   len(ranks),
                                                                                   gpus))
            checked = 0
            for rank in ranks:
                busy = pct(rank["temporal_breakdown"]["busy_pct"])
                want = [" %d " % rank["device"], " %d " % rank["rank"], " %d " % rank["pid"],
                        " " + busy + " "]
                if not line_with(text, want):
                    failures.append("%s: no GPU line with %r in\n%s" % (label, want, text))
                checked += 1
            kernels = profile["summary"]["top_kernels"][:5]
            for k in kernels:
                want = [fmt_duration(k["total_ns"]), pct(k["pct"]), "{:,}".format(k["count"])]
                if not line_with(text, want):
                    failures.append("%s: no kernel line with %r (%s) in\n%s" %
                                    (label, want, k["display_name"], text))
                checked += 1
            syncs = {}
            for rank in ranks:
                for kind, s in rank["sync_waits"].items():
                    if s["count"] == 0:
                        continue
                    t = syncs.setdefault(kind, {"count": 0, "total_ns": 0, "max_ns": 0})
                    t["count"] += s["count"]
                    t["total_ns"] += s["total_ns"]
                    t["max_ns"] = max(t["max_ns"], s["max_ns"])
            for kind, s in syncs.items():
                want = [kind, "{:,}".format(s["count"]), fmt_duration(s["total_ns"]),
                        fmt_duration(s["max_ns"])]
                if not line_with(text, want):
                    failures.append("%s: no sync line with %r in\n%s" % (label, want, text))
                checked += 1
            if not syncs and "SYNC WAITS  none" not in text:
                failures.append("%s: the API has no sync waits, top shows some:\n%s" % (label,
                                                                                       text))
            print("%s: %d GPUs, %d kernels, %d sync types equal the API's (range %s..%s)" %
                  (label, len(ranks), len(kernels), len(syncs), m.group(1), m.group(2)))
            if checked == 0:
                failures.append("%s: nothing compared" % label)

        # 10 s: both ranks' last windows (each process's own last second differs).
        check("all", ["--interval", "10s"], "", gpus=2)
        check("rank 1", ["--rank", "1"], "&rank=1")

        # The plain loop: a frame per refresh until SIGINT, then exit 0.
        loop = subprocess.Popen([args.inferscope, "top", "--state-dir", state, "--interval",
                                 "200ms"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        time.sleep(1.5)
        loop.send_signal(signal.SIGINT)
        out, err = loop.communicate(timeout=20)
        frames = out.count("range: --from ")
        if loop.returncode != 0 or frames < 2:
            failures.append("plain loop: exit %s, %d frames, stderr %r" % (loop.returncode, frames,
                                                                            err))

        # The loop follows the store: while a replay keeps sending windows, each refresh shows a
        # later range (one reader stays open for the whole run; it must see what arrives after).
        follow = subprocess.Popen([args.inferscope, "top", "--state-dir", state, "--interval",
                                   "1s"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)
        time.sleep(1.5)  # the first frames show the ranges stored so far
        replay = subprocess.run(
            [args.inferscope, "run", "--state-dir", state, "--no-agent", "--window", "1s",
             "--", args.replay_engine, "--speed", "1", "--loop-for", "6", "--loop-period", "1",
             traces[0]], capture_output=True, text=True, timeout=120)
        time.sleep(2.5)  # the replay's last windows reach the store, and a frame shows them
        follow.send_signal(signal.SIGINT)
        out, err = follow.communicate(timeout=20)
        if replay.returncode != 0:
            raise Failure("the looping replay failed (%d): %s" % (replay.returncode,
                                                                  replay.stderr[-500:]))
        ends = [int(t) for t in re.findall(r"^range: --from \d+ --to (\d+)$", out, re.M)]
        distinct = sorted(set(ends))
        if follow.returncode != 0 or len(distinct) < 4 or ends != sorted(ends):
            failures.append("the loop did not follow the replay: exit %s, range ends %r, stderr %r"
                            % (follow.returncode, ends, err[-300:]))
        else:
            print("loop: %d frames, the range end advanced %d times (%d..%d) during the replay" %
                  (len(ends), len(distinct) - 1, distinct[0], distinct[-1]))

        # A terminal: ANSI redraw, 'q' quits.
        master, slave = pty.openpty()
        tty = subprocess.Popen([args.inferscope, "top", "--state-dir", state, "--interval", "1s"],
                               stdin=slave, stdout=slave, stderr=slave, close_fds=True)
        os.close(slave)
        seen = b""
        deadline = time.time() + 15
        while time.time() < deadline and b"TOP KERNELS" not in seen:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    seen += os.read(master, 65536)
                except OSError:
                    break
        os.write(master, b"q")
        try:
            tty.wait(timeout=10)
        except subprocess.TimeoutExpired:
            tty.kill()
            tty.wait()
            failures.append("on a terminal: 'q' did not quit")
        os.close(master)
        if tty.returncode != 0:
            failures.append("on a terminal: exit %s" % tty.returncode)
        if b"\x1b[?1049h" not in seen or b"\x1b[H" not in seen or b"TOP KERNELS" not in seen:
            failures.append("on a terminal: no ANSI redraw in %r" % seen[:300])
    except Failure as e:
        failures.append(str(e))
    finally:
        stop_agent(agent, 30)
    return finish(failures, work, args.keep)


if __name__ == "__main__":
    sys.exit(main())
