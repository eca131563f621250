#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""The dashboard (/ui/) in a real browser: Debian's headless Chromium driven by playwright-core.

The store: 24 h of 10 s windows of two GPUs (mcp_store_fixture: the bundled vLLM example's
windows), ending two minutes ago; then a live agent with the fake NVML (2 GPUs) and a fake
SGLang /metrics endpoint (tests/live/fake_engine_metrics.py), and a replay of the bundled vLLM
example through `inferscope run` (the fake CUPTI) for a few seconds, as tests/live/
telemetry_picture.py does. ui_test.mjs then loads every view and checks it against the API
(tests/ui/ui_test.mjs says what). Screenshots and timings go to --out.

Usage: ui_test.py --inferscope BIN --replay-engine BIN --fake-nvml LIB --fixture BIN --out DIR
Exit 0 ok, 1 failure, 77 skipped (no node, no `npm ci --prefix tests/ui`, no chromium, or a binary
built without the dashboard), unless INFERSCOPE_REQUIRE_UI=1 (CI), which makes those failures.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "live"))
from fake_engine_metrics import FakeEngineMetrics  # noqa: E402
from live_common import REPO, agent_endpoints, agent_token, wait_for_socket  # noqa: E402

SCENARIO = "devices=2;arch=hopper,ampere"


class Skipped(Exception):
    """The test cannot run here (and INFERSCOPE_REQUIRE_UI may make that a failure)."""


def skip(message):
    if os.environ.get("INFERSCOPE_REQUIRE_UI") == "1":
        print("FAIL ui_test: %s; INFERSCOPE_REQUIRE_UI=1 makes this a failure" % message)
        return 1
    print("SKIP ui_test: %s" % message)
    return 77


def http_get(url, token, timeout=10.0):
    req = urllib.request.Request(url, headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, r.read()


T0 = time.time()


def phase(what):
    print("[%5.1f s] %s" % (time.time() - T0, what), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--inferscope", required=True)
    p.add_argument("--replay-engine", required=True)
    p.add_argument("--fake-nvml", required=True)
    p.add_argument("--fixture", required=True, help="mcp_store_fixture")
    p.add_argument("--out", required=True, help="screenshots and timings")
    p.add_argument("--hours", type=int, default=24, help="stored history before the live part")
    p.add_argument("--seconds", type=float, default=6.0, help="live replay duration")
    p.add_argument("--chromium", default=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
    p.add_argument("--node", default="node")
    p.add_argument("--keep", action="store_true")
    p.add_argument("--enforce-budgets", action="store_true",
                   default=os.environ.get("INFERSCOPE_UI_BUDGETS") == "1",
                   help="fail when the first paint or the 24 h render is over its budget "
                        "(default: measured and printed only; INFERSCOPE_UI_BUDGETS=1)")
    args = p.parse_args()

    if shutil.which(args.node) is None:
        return skip("needs node (scripts/install-deps.sh)")
    if not os.path.isdir(os.path.join(HERE, "node_modules", "playwright-core")):
        return skip("needs 'npm ci --prefix tests/ui' (playwright-core)")
    if not os.access(args.chromium, os.X_OK):
        return skip("needs Chromium at %s (Debian package chromium, scripts/install-deps.sh)" %
                    args.chromium)
    if not os.path.isfile(args.fake_nvml):
        return skip("fake NVML %s not built (target fake_nvml)" % args.fake_nvml)
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="inferscope_ui_")
    state = os.path.join(work, "state")
    os.makedirs(state)

    # History: the bundled vLLM example's windows on two GPUs over the last `hours`, ending 2
    # minutes ago.
    started = time.time()
    end_s = int(time.time()) - 120
    subprocess.run([args.fixture, "--dir", state, "--minutes", str(args.hours * 60),
                    "--end-unix-s", str(end_s)], check=True, stdout=subprocess.DEVNULL)
    fill_s = time.time() - started
    phase("history stored")

    fake = FakeEngineMetrics(os.path.join(REPO, "tests", "data", "engine_metrics", "sglang.txt"))
    fake.start()
    agent_log = open(os.path.join(work, "agent.log"), "w")
    agent = subprocess.Popen(
        [args.inferscope, "agent", "--state-dir", state, "--http-port", "0", "--window", "1s",
         "--gpu-sample-interval", "250ms", "--scrape-interval", "1s", "--metrics-url", fake.url,
         "--nvml-library", args.fake_nvml],
        env=dict(os.environ, FAKE_NVML_SCENARIO=SCENARIO), stdout=subprocess.DEVNULL,
        stderr=agent_log)
    result = 1
    try:
        if not wait_for_socket(os.path.join(state, "agent.sock"), timeout_s=30):
            raise RuntimeError("the agent did not start (see %s)" % agent_log.name)
        endpoints = agent_endpoints(state)
        base = endpoints["api"][: -len("/api/v1")]
        phase("agent up")
        try:
            http_get(base + "/ui/app.js", agent_token(state))
        except urllib.error.HTTPError:
            raise Skipped("this inferscope was built without the dashboard (no node/npm at "
                          "build time): /ui/app.js is 404")
        replay = subprocess.run(
            [args.inferscope, "run", "--state-dir", state, "--no-agent", "--window", "1s", "--",
             args.replay_engine, "--speed", "1", "--loop-for", str(args.seconds),
             "--loop-period", "0.25",
             os.path.join(REPO, "examples", "vllm_tp2_decode", "rank0.json.gz")],
            env=dict(os.environ, INFERSCOPE_LOG="warning"), stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True, timeout=args.seconds + 60)
        if replay.returncode != 0:
            raise RuntimeError("the replay failed (%d): %s" % (replay.returncode,
                                                               replay.stderr[-400:]))
        deadline = time.time() + 20
        while True:
            st = json.loads(http_get(endpoints["api"] + "/status", agent_token(state))[1])
            if (st.get("connected_processes") == 0 and st.get("windows_received", 0) > 0 and
                    st["windows_received"] == st["windows_stored"]):
                break
            if time.time() > deadline:
                raise RuntimeError("the agent did not store the replay's windows: %r" % st)
            time.sleep(0.2)
        phase("replay stored")
        time.sleep(2.5)  # one more telemetry window (GPU samples and a scrape) after the replay
        # The browser signs in as a user would: the one-time link `inferscope ui` prints.
        ui = subprocess.run([args.inferscope, "ui", "--state-dir", state], capture_output=True,
                            text=True, timeout=30)
        if ui.returncode != 0 or not ui.stdout.startswith(base + "/ui/login?code="):
            raise RuntimeError("inferscope ui: exit %d, %r %r" % (ui.returncode, ui.stdout,
                                                                   ui.stderr))
        node = subprocess.run(
            [args.node, os.path.join(HERE, "ui_test.mjs"), "--url", base, "--out", args.out,
             "--login", ui.stdout.strip(), "--token", agent_token(state),
             "--chromium", args.chromium, "--history-end", str(end_s),
             "--history-hours", str(args.hours),
             "--enforce-budgets", "1" if args.enforce_budgets else "0"],
            timeout=240)
        result = node.returncode
        phase("browser checks done")
        print("store: %d h of history filled in %.1f s" % (args.hours, fill_s))
    except Skipped as e:
        result = skip(str(e))
    except (RuntimeError, subprocess.SubprocessError, OSError, ValueError) as e:
        print("FAIL ui_test: %s" % e)
        result = 1
    finally:
        agent.send_signal(signal.SIGTERM)
        try:
            agent.wait(timeout=20)
        except subprocess.TimeoutExpired:
            agent.kill()
        fake.stop()
    if result not in (0, 77) or args.keep:
        print("work dir kept: " + work)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return result


if __name__ == "__main__":
    sys.exit(main())
