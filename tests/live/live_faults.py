#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""Fault tests of the live path, run with the real injection library, agent and CLI over the fake
CUPTI (tests/fakes): each case is a thing that goes wrong in production.

  pool_exhaustion   CUPTI finds no free buffer: records are dropped, counted, and the report's
                    records_dropped equals what the driver (replay engine) says it dropped.
  no_agent          nobody listens on the socket: the application runs and exits on time, exit 0.
  agent_restart     the agent is killed with SIGKILL and restarted between two runs of the
                    application: the second run's windows arrive, nothing hangs.
  other_subscriber  another CUPTI tool holds the subscription: profiling is disabled with one
                    log line and the application runs unchanged.
  fork_child        the application forks after CUDA init (multiprocessing) and the child exits:
                    no hang, the parent's profile is complete.
  killed            the application dies by SIGKILL and by SIGSEGV: `inferscope run` passes the
                    signal through (same PID), the agent survives and serves the next process.
  bad_timestamps    CUPTI hands over kernel records with zero and reversed timestamps (as it does
                    when short of device memory): each is counted by kind and left out, the rest
                    of the profile is intact.
  cupti_errors      CUPTI fails at initialization (activity enable) or mid-run (buffer walks,
                    flushes, every call): profiling stops or degrades, the application never does.
  version_gate      the process's libcupti is a version whose record layouts are unknown (13.2):
                    profiling is off with one line naming the version and the supported range,
                    nothing is enabled (no record produced), and `inferscope status` shows why.
  stub_driver       libcuda.so.1 is the toolkit's stub (no NVIDIA driver): one clear line, the
                    application runs, `status` says so.
  cuda12_status     a CUDA 12.4 CUPTI: `status` shows "on, CUPTI 12.4" and the library's path.
  dead_agent        the agent accepts the connection and never reads: the process's exit is held
                    at most 100 ms by the final delivery (the library logs what it took).

Usage: live_faults.py --inferscope BIN --replay-engine BIN [--trace NAME] [--cases a,b].
Exit 0 ok, 1 failure, 77 skipped. --trace: another shared trace than df_index_resolver.json.gz (a
lighter one, such as Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz, for slow builds like TSan).
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

from live_common import REPO, shared_trace, wait_for_socket


class Case:
    def __init__(self, args, name):
        self.args, self.name = args, name
        self.work = tempfile.mkdtemp(prefix="inferscope_fault_%s_" % name)
        self.state = os.path.join(self.work, "state")
        os.makedirs(self.state)
        self.agent = None

    def start_agent(self):
        self.agent = subprocess.Popen(
            [self.args.inferscope, "agent", "--state-dir", self.state],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.work, "agent.log"), "a"))
        assert wait_for_socket(os.path.join(self.state, "agent.sock")), "agent did not start"

    def stop_agent(self, sig=signal.SIGTERM):
        if self.agent:
            self.agent.send_signal(sig)
            self.agent.wait(timeout=30)
            self.agent = None

    def replay(self, trace_path, env=None, no_agent=True, extra=()):
        cmd = [self.args.inferscope, "run", "--state-dir", self.state]
        if no_agent:
            cmd.append("--no-agent")
        cmd += ["--", self.args.replay_engine, "--speed", "0"] + list(extra) + [trace_path]
        return subprocess.run(cmd, env=dict(os.environ, **(env or {})), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=120)

    def report(self):
        r = subprocess.run([self.args.inferscope, "report", "--state-dir", self.state, "--last",
                            "24h", "--format", "json"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        assert r.returncode == 0, "report failed: %s" % r.stderr
        return json.loads(r.stdout)

    def close(self, ok):
        try:
            self.stop_agent(signal.SIGKILL)
        except Exception:
            pass
        if ok:
            shutil.rmtree(self.work, ignore_errors=True)


def pool_exhaustion(c, t):
    c.start_agent()
    r = c.replay(t, env={"INFERSCOPE_BUFFER_COUNT": "2", "INFERSCOPE_BUFFER_SIZE": "65536"})
    assert r.returncode == 0, r.stderr
    dropped = sum(int(n) for n in re.findall(r"dropped (\d+)", r.stderr))
    assert dropped > 0, "the tiny pool should have run out: " + r.stderr
    c.stop_agent()
    ranks = c.report()["ranks"]
    reported = sum(rank["data_quality"]["records_dropped"] for rank in ranks)
    assert reported == dropped, "report says %d dropped, the driver %d" % (reported, dropped)
    # The pool's refusals are counted too (the fake asks for a buffer once per dropped record).
    refused = sum(rank["data_quality"].get("buffer_requests_refused", 0) for rank in ranks)
    assert refused > 0, "no buffer_requests_refused in the report: %r" % ranks[0]["data_quality"]


def no_agent(c, t):
    started = time.time()
    r = c.replay(t)  # --no-agent and nobody listening
    elapsed = time.time() - started
    assert r.returncode == 0, r.stderr
    assert elapsed < 10, "the application took %.1f s to exit without an agent" % elapsed


def agent_restart(c, t):
    c.start_agent()
    assert c.replay(t).returncode == 0
    c.stop_agent(signal.SIGKILL)  # no clean shutdown
    c.start_agent()  # a new agent takes over the same state directory
    r = c.replay(t)
    assert r.returncode == 0, r.stderr
    c.stop_agent()
    kernels = sum(rank["kernel_count"] for rank in c.report()["ranks"])
    per_run = sum(int(n) for n in re.findall(r"(\d+) kernels", r.stderr))
    # Each run's windows were stored: at least the second run's, and nothing more than both.
    assert per_run <= kernels <= 2 * per_run, (kernels, per_run)


def other_subscriber(c, t):
    r = c.replay(t, env={"INFERSCOPE_LOG": "error"}, extra=["--other-subscriber"])
    assert r.returncode == 0, r.stderr
    assert "another CUPTI tool is attached" in r.stderr, r.stderr


def fork_child(c, t):
    c.start_agent()
    # LeakSanitizer cannot check a forked child whose parent had threads (it cannot suspend
    # threads that only exist in the parent and reports their objects as leaked): leak checking
    # is off for this case only; the other ASan checks stay on.
    asan = os.environ.get("ASAN_OPTIONS", "")
    env = {"ASAN_OPTIONS": (asan + ":" if asan else "") + "detect_leaks=0"}
    r = c.replay(t, env=env, extra=["--fork-child"])
    assert r.returncode == 0, r.stderr
    c.stop_agent()
    kernels = sum(rank["kernel_count"] for rank in c.report()["ranks"])
    expected = sum(int(n) for n in re.findall(r"(\d+) kernels", r.stderr))
    assert kernels == expected, (kernels, expected)


def killed(c, t):
    c.start_agent()
    for sig in (signal.SIGKILL, signal.SIGSEGV):
        r = c.replay(t, extra=["--die-by-signal", str(int(sig))])
        assert r.returncode == -int(sig), "exit status %r, want signal %d" % (r.returncode, sig)
    assert c.agent.poll() is None, "the agent died with the application"
    r = c.replay(t)  # the next process is served as usual
    assert r.returncode == 0, r.stderr
    c.stop_agent()
    kernels = sum(rank["kernel_count"] for rank in c.report()["ranks"])
    per_run = sum(int(n) for n in re.findall(r"(\d+) kernels", r.stderr))
    assert kernels >= per_run, (kernels, per_run)


def cupti_errors(c, t):
    r = c.replay(t, env={"INFERSCOPE_LOG": "error"}, extra=["--cupti-fail", "cuptiActivityEnable:2"])
    assert r.returncode == 0, r.stderr
    assert "profiling disabled: cuptiActivityEnable failed" in r.stderr, r.stderr
    for spec in ("cuptiActivityGetNextRecord:500", "cuptiActivityFlushAll:1", "*:200"):
        started = time.time()
        r = c.replay(t, extra=["--cupti-fail", spec])
        assert r.returncode == 0, "%s: %s" % (spec, r.stderr)
        assert time.time() - started < 30, "%s: the application hung" % spec


def bad_timestamps(c, t):
    c.start_agent()
    r = c.replay(t, extra=["--corrupt-every", "100"])
    assert r.returncode == 0, r.stderr
    m = re.search(r"(\d+) kernels.*corrupted (\d+) zero \+ (\d+) reversed", r.stderr)
    assert m, r.stderr
    kernels, zeroed, reversed_ = (int(x) for x in m.groups())
    assert zeroed > 0 and reversed_ > 0
    c.stop_agent()
    ranks = c.report()["ranks"]
    dq = ranks[0]["data_quality"]
    assert dq["zero_timestamp"] == zeroed, (dq, zeroed)
    assert dq["reversed_timestamp"] == reversed_, (dq, reversed_)
    assert sum(x["kernel_count"] for x in ranks) == kernels - zeroed - reversed_


def status_processes(c):
    r = subprocess.run([c.args.inferscope, "status", "--state-dir", c.state, "--format", "json"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
    assert r.returncode == 0, "status failed: %s" % r.stderr
    return json.loads(r.stdout)["processes"]


def status_text(c):
    """`inferscope status` as text, its wrapped lines joined (status wraps long values under their
    column to fit 100 columns)."""
    out = subprocess.run([c.args.inferscope, "status", "--state-dir", c.state],
                         stdout=subprocess.PIPE, text=True).stdout
    return " ".join(out.split())


def wait_for_process_status(c, pid, timeout_s=10.0):
    """The status row of `pid` once the agent has it (an off process reports from a thread)."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        for p in status_processes(c):
            if p["pid"] == pid:
                return p
        time.sleep(0.1)
    raise AssertionError("pid %d never appeared in status: %r" % (pid, status_processes(c)))


def replay_pid(stderr):
    m = re.search(r"pid (\d+):", stderr)
    assert m, stderr
    return int(m.group(1))


def version_gate(c, t):
    c.start_agent()
    r = c.replay(t, env={"INFERSCOPE_LOG": "error", "FAKE_CUPTI_VERSION": "130200"})
    assert r.returncode == 0, r.stderr
    lines = [l for l in r.stderr.splitlines() if l.startswith("inferscope[")]
    assert len(lines) == 1, lines
    assert "profiling disabled" in lines[0] and "CUPTI 13.2 is not supported" in lines[0], lines
    assert "13.0-13.1" in lines[0], lines
    # Nothing was enabled: every record the driver offered was filtered, none written.
    assert re.search(r"records written 0,", r.stderr), r.stderr
    p = wait_for_process_status(c, replay_pid(r.stderr))
    assert p["profiling"]["on"] is False and "13.2" in p["profiling"]["off_reason"], p
    text = status_text(c)
    assert "profiling: off: " in text and "CUPTI 13.2 is not supported" in text, text


def stub_driver(c, t):
    c.start_agent()
    r = c.replay(t, env={"INFERSCOPE_LOG": "error", "FAKE_CUDA_DRIVER_VERSION": "stub"})
    assert r.returncode == 0, r.stderr
    assert "profiling disabled: libcuda.so.1 is the CUDA toolkit's stub library" in r.stderr, r.stderr
    p = wait_for_process_status(c, replay_pid(r.stderr))
    assert p["profiling"]["on"] is False and "stub" in p["profiling"]["off_reason"], p
    assert p["profiling"]["cupti_release"] == "13.0", p  # bound, then gated on the driver


def cuda12_status(c, t):
    c.start_agent()
    r = c.replay(t, env={"FAKE_CUPTI_VERSION": "22", "FAKE_CUDA_DRIVER_VERSION": "12040"})
    assert r.returncode == 0, r.stderr
    p = wait_for_process_status(c, replay_pid(r.stderr))
    assert p["profiling"]["on"] is True, p
    assert p["profiling"]["cupti_release"] == "12.4", p
    assert p["profiling"]["cupti_path"].endswith("libcupti.so.13"), p  # the fake's file name
    text = status_text(c)
    assert "on, CUPTI 12.4" in text and "profiling: on (CUPTI 12.4, " in text, text


def dead_agent(c, t):
    import socket as socketlib
    sock_path = os.path.join(c.state, "agent.sock")
    server = socketlib.socket(socketlib.AF_UNIX, socketlib.SOCK_STREAM)
    server.setsockopt(socketlib.SOL_SOCKET, socketlib.SO_RCVBUF, 1024)
    server.bind(sock_path)
    server.listen(8)
    try:
        # Many large windows (fine timeline bins, long top lists, 3 s of replay), so that more is
        # queued than the socket's buffer holds.
        r = c.replay(t, env={"INFERSCOPE_LOG": "info", "INFERSCOPE_WINDOW": "100ms",
                             "INFERSCOPE_BIN": "1ms", "INFERSCOPE_TOP": "1000",
                             "INFERSCOPE_SOCKET": sock_path},
                     extra=["--loop-for", "3"])
    finally:
        server.close()
    assert r.returncode == 0, r.stderr
    m = re.search(r"at exit: (\d+) frames delivered, (\d+) left undelivered, in (\d+) ms",
                  r.stderr)
    assert m, r.stderr
    delivered, left, took_ms = (int(x) for x in m.groups())
    assert left > 0, "the dead agent took everything (%d frames): no deadline was tested" % delivered
    assert took_ms <= 110, "exit held %d ms by a dead agent (limit 100 ms)" % took_ms


CASES = [pool_exhaustion, no_agent, agent_restart, other_subscriber, fork_child, killed,
         bad_timestamps, cupti_errors, version_gate, stub_driver, cuda12_status, dead_agent]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--inferscope", required=True)
    p.add_argument("--replay-engine", required=True)
    p.add_argument("--trace", default="df_index_resolver.json.gz")
    p.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    args = p.parse_args()
    t = shared_trace(args.trace)
    if t is None:
        # A fresh clone: the bundled example (a 2-GPU vLLM decode the project generates) instead.
        t = os.path.join(REPO, "examples", "vllm_tp2_decode", "rank0.json.gz")
        print("note: ../shared/traces/**/%s not found: using the bundled %s" %
              (args.trace, os.path.relpath(t, REPO)))
    cases = [c for c in CASES if not args.cases or c.__name__ in args.cases.split(",")]
    failures = 0
    for case in cases:
        c = Case(args, case.__name__)
        ok = True
        try:
            case(c, t)
        except AssertionError as e:
            ok = False
            print("FAIL %s: %s (work dir %s)" % (case.__name__, e, c.work))
        finally:
            c.close(ok)
        if ok:
            print("ok   %s" % case.__name__)
        failures += 0 if ok else 1
    print("%d passed, %d failed" % (len(cases) - failures, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
