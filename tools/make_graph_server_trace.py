#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""Generate a Kineto (torch.profiler) trace of a vLLM-style server with piecewise CUDA graphs.

One GPU, a Llama-style model: a few eager prefill steps (every kernel launched with
cudaLaunchKernel) among decode steps run the way vLLM's piecewise CUDA graphs run them: per layer,
one graph piece before attention (residual add + RMSNorm, QKV GEMM, RoPE, KV-cache write), the
attention kernel launched eagerly, and one piece after it (O projection, RMSNorm, gate/up GEMM,
SiLU-and-mul, down GEMM); then the sampler. Graph kernels carry Kineto's `graph id` argument and
share their cudaGraphLaunch's correlation id. Each decode batch size has its own graphs (as vLLM
captures one per batch-size bucket), so different graph ids have different kernel durations.

Deterministic (fixed seed, gzip mtime 0). Kernel names come from tools/make_example_trace.py
(public names of vLLM, cuBLAS/nvjet, FlashAttention kernels); durations from a simple cost model.
Used by tests/live/graph_attribution.py.

Usage: make_graph_server_trace.py --out FILE.json.gz [--steps N] [--layers N] [--seed N]
"""

import argparse
import gzip
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_example_trace as ex  # noqa: E402  (kernel names only)

STREAM = 7
PID = 4321


class Trace:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.host = []
        self.gpu = []
        self.t_host = 1_000_000  # ns
        self.t_gpu = 1_000_000
        self.corr = 100
        self.t0_us = 1_700_000_000_000_000 // 1000

    def us(self, ns):
        return self.t0_us + ns / 1000.0

    def jitter(self, us):
        return max(1.0, us * self.rng.uniform(0.95, 1.05))

    def launch(self, api, dur_us):
        self.corr += 1
        self.host.append({"ph": "X", "cat": "cuda_runtime", "name": api, "pid": PID, "tid": PID,
                          "ts": self.us(self.t_host), "dur": dur_us,
                          "args": {"correlation": self.corr}})
        issued = self.t_host + int(dur_us * 1000)
        self.t_host = issued + 1500
        return self.corr, issued

    def kernel(self, name, dur_us, corr, earliest, graph_id=None, node=None):
        start = max(self.t_gpu, earliest + 2000)
        dur = int(self.jitter(dur_us) * 1000)
        args = {"device": 0, "stream": STREAM, "correlation": corr, "grid": [132, 1, 1],
                "block": [128, 1, 1]}
        if graph_id is not None:
            args["graph id"] = graph_id
            args["graph node id"] = node
        self.gpu.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": STREAM,
                         "ts": self.us(start), "dur": dur / 1000.0, "args": args})
        self.t_gpu = start + dur + 800  # the GPU's own gap between back-to-back kernels

    def eager(self, name, dur_us):
        corr, issued = self.launch("cudaLaunchKernel", 4.5)
        self.kernel(name, dur_us, corr, issued)

    def graph(self, graph_id, kernels):
        corr, issued = self.launch("cudaGraphLaunch", 9.0)
        for node, (name, dur_us) in enumerate(kernels):
            self.kernel(name, dur_us, corr, issued, graph_id, node + 1)


def decode_step(t, layers, batch, graph_base):
    scale = 1.0 + batch / 64.0
    before = [(ex.K_FUSED_ADD_RMS, 3.0 * scale), (ex.K_NVJET_QKV, 14.0 * scale),
              (ex.K_ROPE, 2.5 * scale), (ex.K_CACHE, 2.2 * scale)]
    after = [(ex.K_NVJET_O, 11.0 * scale), (ex.K_FUSED_ADD_RMS, 3.0 * scale),
             (ex.K_NVJET_MLP, 38.0 * scale), (ex.K_SILU, 4.0 * scale),
             (ex.K_NVJET_MLP, 30.0 * scale)]
    for layer in range(layers):
        # One graph id per piece and batch bucket, as vLLM captures them (the same ids recur
        # every step: the same graphs are replayed).
        t.graph(graph_base + 2 * layer, before)
        t.eager(ex.K_FA_SPLITKV, 9.0 * (1 + batch / 32.0))
        t.eager(ex.K_FA_COMBINE, 2.0)
        t.graph(graph_base + 2 * layer + 1, after)
    t.eager(ex.K_RMS_NORM, 3.0)
    t.eager(ex.K_XMMA, 60.0 * scale)  # lm_head
    t.eager(ex.K_ARGMAX, 6.0)
    t.t_host = max(t.t_host, t.t_gpu) + 150_000  # scheduler and detokenizer between steps


def prefill_step(t, layers, tokens):
    s = tokens / 256.0
    for _ in range(layers):
        for name, us in [(ex.K_FUSED_ADD_RMS, 8 * s), (ex.K_NVJET_QKV, 90 * s), (ex.K_ROPE, 9 * s),
                         (ex.K_CACHE, 7 * s), (ex.K_FA_PREFILL, 120 * s), (ex.K_NVJET_O, 60 * s),
                         (ex.K_FUSED_ADD_RMS, 8 * s), (ex.K_NVJET_MLP, 240 * s),
                         (ex.K_SILU, 20 * s), (ex.K_NVJET_MLP, 200 * s)]:
            t.eager(name, us)
    t.eager(ex.K_XMMA, 60.0)
    t.eager(ex.K_ARGMAX, 6.0)
    t.t_host = max(t.t_host, t.t_gpu) + 150_000


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--steps", type=int, default=24)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--seed", type=int, default=11)
    args = p.parse_args()
    t = Trace(args.seed)
    batches = [8, 16, 32]
    for step in range(args.steps):
        if step % 8 == 3:
            prefill_step(t, args.layers, tokens=512)
        else:
            b = batches[step % len(batches)]
            decode_step(t, args.layers, b, graph_base=1000 * (batches.index(b) + 1))
    doc = {"schemaVersion": 1,
           "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem":
                                 85520809984, "computeMajor": 9, "computeMinor": 0,
                                 "numSms": 132}],
           "traceEvents": t.host + t.gpu,
           "traceName": "vllm_piecewise_graph_server.json"}
    with open(args.out, "wb") as f:
        with gzip.GzipFile(fileobj=f, mode="wb", mtime=0) as g:
            g.write(json.dumps(doc).encode())
    print("wrote %s: %d kernels, %d launches" % (args.out, len(t.gpu), len(t.host)))


if __name__ == "__main__":
    main()
