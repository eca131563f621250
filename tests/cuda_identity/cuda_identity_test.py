#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""A CUDA program behaves exactly the same with and without `inferscope run`.

Runs tests/cuda_identity/cuda_identity.cu (built with nvcc) plainly and as
`inferscope run --state-dir D -- PROGRAM ...`, and requires byte-identical stdout, stderr and exit
status in each case: no arguments; arguments with spaces, empty ones, non-ASCII ones and ones that
look like options; input on stdin; a variable in the environment; the program killed by a signal
(SIGABRT, SIGKILL); and `inferscope run` starting the agent itself (none running). Nothing is
filtered out: `inferscope run` must add no line of its own.

Without a GPU or driver the program takes its CUDA error path (cudaMalloc fails, the error string
on stderr, exit 11); that must be identical too. On a GPU machine it computes and prints results.

Usage: cuda_identity_test.py --inferscope BIN --program BIN   (no --program: skipped, exit 77)
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "live"))
from live_common import wait_for_socket  # noqa: E402


def run(cmd, env, stdin):
    r = subprocess.run(cmd, input=stdin, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120)
    return r.stdout, r.stderr, r.returncode


def compare(name, inferscope, state, program, args, env=None, stdin=b"", expect=None):
    """Runs the program both ways; returns a list of differences (empty = identical)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CUDA_INJECTION64_PATH",
                                                                    "INFERSCOPE_"))}
    base.update(env or {})
    plain = run([program] + args, base, stdin)
    profiled = run([inferscope, "run", "--state-dir", state, "--", program] + args, base, stdin)
    problems = []
    for label, a, b in zip(("stdout", "stderr", "exit status"), plain, profiled):
        if a != b:
            problems.append("%s: %s differs:\n    plain:    %r\n    profiled: %r" %
                            (name, label, a, b))
    if expect and not expect(*plain):
        problems.append("%s: the program did not see its input: %r" % (name, plain))
    status = plain[2] if plain[2] >= 0 else "signal %d" % -plain[2]
    print("%s %s (exit %s, %d + %d bytes of output)" %
          ("ok  " if not problems else "FAIL", name, status, len(plain[0]), len(plain[1])))
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--inferscope", required=True)
    p.add_argument("--program", default="", help="the nvcc-built cuda_identity binary")
    args = p.parse_args()
    if not args.program or not os.path.exists(args.program):
        print("SKIP: nvcc was not found at configure time, so cuda_identity was not built "
              "(install the CUDA toolkit or set CUDAToolkit_ROOT)")
        return 77

    work = tempfile.mkdtemp(prefix="inferscope_cuda_identity_")
    state = os.path.join(work, "state")
    os.makedirs(state)
    agent = subprocess.Popen([args.inferscope, "agent", "--state-dir", state],
                             stdout=subprocess.DEVNULL,
                             stderr=open(os.path.join(work, "agent.log"), "w"))
    problems = []
    auto_state = os.path.join(work, "auto")
    try:
        if not wait_for_socket(os.path.join(state, "agent.sock")):
            print("FAIL: the agent did not start (see %s)" % work)
            return 1
        prog = args.program
        problems += compare("no arguments", args.inferscope, state, prog, [])
        odd = ["--n", "5", "hello world", "", "--help", "-x", "--", "über ñ", "a\tb", "$HOME"]
        problems += compare("arguments", args.inferscope, state, prog, odd,
                            expect=lambda out, err, rc: b"arg 4: \n" in out and
                            "arg 8: über ñ".encode() in out and b"n 5," in out)
        problems += compare("stdin", args.inferscope, state, prog, ["--stdin"],
                            stdin=b"1.5\nline two\n\n3",
                            expect=lambda out, err, rc: b"stdin: line two\nstdin: \nstdin: 3\n"
                            in out)
        problems += compare("environment", args.inferscope, state, prog, [],
                            env={"CUDA_IDENTITY_SCALE": "3"},
                            expect=lambda out, err, rc: b"factor 3\n" in out)
        for sig in (signal.SIGABRT, signal.SIGKILL):
            problems += compare("killed by %s" % sig.name, args.inferscope, state, prog,
                                ["--die-by-signal", str(int(sig))],
                                expect=lambda out, err, rc, s=sig: rc == -int(s))
        # No agent running: `inferscope run` starts one itself (detached); still nothing extra.
        problems += compare("agent started by run", args.inferscope, auto_state, prog, ["x"])
        if not os.path.exists(os.path.join(auto_state, "agent.log")):
            problems.append("agent started by run: no agent was started (no %s/agent.log)" %
                            auto_state)
    finally:
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=30)
        # Stop the agent `inferscope run` started (it logs its pid) rather than leave it idling.
        try:
            m = re.search(r"\(pid (\d+)\)", open(os.path.join(auto_state, "agent.log")).read())
            if m:
                os.kill(int(m.group(1)), signal.SIGTERM)
        except OSError:
            pass
    for line in problems:
        print("  " + line)
    if problems:
        print("%d cases differ (work dir %s)" % (len(problems), work))
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("identical with and without inferscope run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
