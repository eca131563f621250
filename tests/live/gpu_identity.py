#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""One GPU identity when CUDA and NVML number the GPUs differently.

A process under CUDA_VISIBLE_DEVICES=1 sees NVML's GPU 1 as its CUDA 0. Here:
  - `inferscope agent --window 1s --nvml-library <fake NVML>` with two fake GPUs;
  - the 2-GPU vLLM example's rank 0 (CUDA device 0) replayed under `inferscope run` with
    `--nvml-index-of-device 1`: the fake CUPTI's device record gives CUDA 0 the UUID the fake NVML
    gives index 1 (what the real CUPTI and NVML report for such a process);
  - GET /metrics: the kernel series of that process carry gpu="1" (the NVML index, the `gpu` of
    NVML's series for that UUID), inferscope_process_gpu_info states gpu="1", cuda_ordinal="0" and
    the UUID; no kernel series says gpu="0";
  - `report --device 0 --format json` (the CUDA ordinal) shows the GPU metrics of NVML index 1.

Exit 0 ok, 1 failure, 77 skipped (no fake NVML).
"""

import argparse
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

from live_common import REPO, agent_endpoints, finish, wait_for_socket, stop_agent

UUID1 = "GPU-fa4e0000-0000-0000-0000-000000000001"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--inferscope", required=True)
    parser.add_argument("--replay-engine", required=True)
    parser.add_argument("--fake-nvml", required=True)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    if not os.path.isfile(args.fake_nvml):
        print("SKIP: fake NVML %s not built (target fake_nvml)" % args.fake_nvml)
        return 77
    trace = os.path.join(REPO, "examples", "vllm_tp2_decode", "rank0.json.gz")
    work = tempfile.mkdtemp(prefix="inferscope-gpu-identity-")
    state = os.path.join(work, "state")
    failures = []
    env = dict(os.environ, FAKE_NVML_SCENARIO="devices=2")
    agent = subprocess.Popen(
        [args.inferscope, "agent", "--state-dir", state, "--http-port", "0", "--window", "1s",
         "--no-scrape", "--nvml-library", args.fake_nvml],
        env=env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "agent.log"), "w"))
    try:
        if not wait_for_socket(os.path.join(state, "agent.sock"), timeout_s=15):
            raise RuntimeError("the agent did not start (see %s)" % work)
        metrics_url = agent_endpoints(state)["metrics"]
        replay = subprocess.run(
            [args.inferscope, "run", "--state-dir", state, "--no-agent", "--window", "1s", "--",
             args.replay_engine, "--speed", "0", "--nvml-index-of-device", "1", trace],
            capture_output=True, text=True, timeout=300)
        if replay.returncode != 0:
            raise RuntimeError("replay failed (%d): %s" % (replay.returncode,
                                                           replay.stderr[-500:]))
        metrics = ""
        deadline = time.time() + 15
        want_info = 'cuda_ordinal="0",uuid="%s"' % UUID1
        while time.time() < deadline:
            with urllib.request.urlopen(metrics_url, timeout=10) as resp:
                metrics = resp.read().decode()
            if want_info in metrics and 'inferscope_gpu_utilization_ratio{gpu="1"' in metrics:
                break
            time.sleep(0.5)
        info = [l for l in metrics.splitlines() if l.startswith("inferscope_process_gpu_info{")]
        busy = [l for l in metrics.splitlines()
                if l.startswith("inferscope_gpu_busy_seconds_total{")]
        print("info: %s\nbusy: %s" % (info, busy))
        if not any(l.startswith('inferscope_process_gpu_info{gpu="1",' + want_info)
                   for l in info):
            failures.append("no mapping CUDA 0 -> NVML 1 in %s" % info)
        if not busy or not all(l.startswith('inferscope_gpu_busy_seconds_total{gpu="1",')
                               for l in busy):
            failures.append("kernel series not labelled with the NVML index: %s" % busy)
        if 'inferscope_gpu_utilization_ratio{gpu="1",uuid="%s"}' % UUID1 not in metrics:
            failures.append("NVML series of GPU 1 missing or with another uuid")
    except RuntimeError as e:
        failures.append(str(e))
    finally:
        stop_agent(agent, 30)
    if not failures:
        r = subprocess.run([args.inferscope, "report", "--state-dir", state, "--last", "24h",
                            "--device", "0", "--format", "json"],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            failures.append("report --device 0: exit %d: %s" % (r.returncode, r.stderr))
        else:
            gpu = (json.loads(r.stdout).get("gpu_metrics") or {}).get("devices") or []
            indices = [(d.get("index"), d.get("uuid")) for d in gpu]
            print("report --device 0: GPU metrics of %s" % indices)
            if indices != [(1, UUID1)]:
                failures.append("report --device 0 shows the GPU metrics of %s, want NVML 1"
                                % indices)
    return finish(failures, work, args.keep)


if __name__ == "__main__":
    sys.exit(main())
