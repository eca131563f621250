#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""hardware_saturated through the agent: the one verdict a trace alone cannot give.

A busy GPU is not proof of a hardware limit (docs/diagnosis.md), so `hardware_saturated` needs the
GPM counters the agent samples over NVML. This test replays the generated `healthy` scenario trace
(tools/make_scenario_traces.py: a busy GPU whose time is spread over GEMMs and attention) through
the live path twice, with a fake NVML whose GPM counters say

  saturated  SM activity 90-100 %, occupancy 80-95 %, tensor 75-100 %, DRAM 85-100 %
  headroom   the fake's defaults: SM 40-70 %, occupancy 20-35 %, tensor 30-60 %, DRAM 50-65 %

and checks `inferscope report --format json`: primary verdict `hardware_saturated` with the GPM
evidence in the first run; never `hardware_saturated` in the second, although the GPU is as busy.

Usage: hardware_saturated.py --inferscope BIN --replay-engine BIN --fake-nvml LIB
Exit 0 ok, 1 failure.
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

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

CASES = {
    "saturated": "devices=1;arch=hopper;gpm=90,80,75,85",
    "headroom": "devices=1;arch=hopper",
}


def run_case(name, scenario, args, trace, work):
    state = os.path.join(work, name)
    env = dict(os.environ, FAKE_NVML_SCENARIO=scenario)
    with open(os.path.join(work, name + ".agent.log"), "w") as log:
        agent = subprocess.Popen(
            [args.inferscope, "agent", "--state-dir", state, "--http-port", "0", "--window", "1s",
             "--gpu-sample-interval", "100ms", "--no-scrape", "--nvml-library", args.fake_nvml],
            env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 10
        while not os.path.exists(os.path.join(state, "agent.json")):
            if time.time() > deadline or agent.poll() is not None:
                raise RuntimeError("%s: the agent did not start" % name)
            time.sleep(0.05)
        replay = subprocess.run(
            [args.inferscope, "run", "--no-agent", "--state-dir", state, "--window", "1s", "--",
             args.replay_engine, "--speed", "1", trace],
            capture_output=True, text=True, timeout=60)
        if replay.returncode != 0:
            raise RuntimeError("%s: replay failed: %s" % (name, replay.stderr[-500:]))
        time.sleep(1.5)  # the last telemetry window closes on the next boundary
    finally:
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=20)
    report = subprocess.run(
        [args.inferscope, "report", "--state-dir", state, "--last", "10m", "--format", "json"],
        capture_output=True, text=True, timeout=60)
    if report.returncode != 0:
        raise RuntimeError("%s: report failed: %s" % (name, report.stderr))
    return json.loads(report.stdout)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--inferscope", required=True)
    p.add_argument("--replay-engine", required=True)
    p.add_argument("--fake-nvml", required=True)
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="inferscope_hw_")
    failures = []
    try:
        subprocess.run([sys.executable, os.path.join(REPO, "tools", "make_scenario_traces.py"),
                        "--out", work, "--scenario", "healthy", "--quiet"], check=True)
        trace = os.path.join(work, "healthy.json.gz")
        for name, scenario in CASES.items():
            doc = run_case(name, scenario, args, trace, work)
            diagnosis = doc["diagnosis"]
            findings = {f["id"]: f for f in diagnosis["findings"]}
            gpu = doc.get("gpu_metrics") or {}
            if not gpu.get("devices"):
                failures.append("%s: no GPU metrics in the report" % name)

            if name == "saturated":
                if diagnosis["primary"] != "hardware_saturated":
                    failures.append("saturated: primary %r, want hardware_saturated (%s)" %
                                    (diagnosis["primary"], sorted(findings)))
                else:
                    evidence = {e["name"]: e["value"] for e in findings["hardware_saturated"]["evidence"]}
                    if not any(k.startswith("gpm_") and v >= 75 for k, v in evidence.items()):
                        failures.append("saturated: no GPM evidence >= 75%%: %s" % evidence)
            elif "hardware_saturated" in findings:
                failures.append("headroom: hardware_saturated from a busy GPU without GPM "
                                "saturation (%s)" % findings["hardware_saturated"]["summary"])
            print("%s %s: primary %s, findings %s" % ("ok  " if not failures else "FAIL", name,
                                                      diagnosis["primary"], sorted(findings)))
    finally:
        if failures:
            print("work dir kept: %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
