#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""Generate Kineto (torch.profiler) traces of LLM-serving bottleneck scenarios.

Each scenario is one deterministic trace (fixed seed, no wall clock, gzip with
mtime=0: the same arguments give byte-identical files) of vLLM-style serving on
H100s, built so that one bottleneck is unmistakable and its diagnosis
(`inferscope analyze`, docs/diagnosis.md) has a known right answer:

  healthy               busy GPU, CUDA graphs, time spread over GEMMs and attention
  kernel_bound          long-context decode: one attention kernel owns the GPU
  launch_overhead       eager mode, short kernels, the GPU waits for Python launches
  batching              batch of 1-3, GPU idle for long stretches between steps
  communication         TP=2 over PCIe (two files): exposed NCCL all-reduces
  host_sync             cudaDeviceSynchronize after every layer starves the GPU
  memory_transfer       full logits copied to pageable host memory every step
  allocation_stalls     cudaFree/cudaMalloc of several ms in the serving loop
  prefill_interference  20k-token prefills (no chunking) stall the decode batch
  launch_bound_tiny     2.5 us kernels, 6.6 us launch calls: the queue is always empty
  allocation_serving    the host sits in 1.5-20 ms cudaMalloc/cudaFree while serving
  straggler_tp          TP=4 (four files), rank 3 computes 20% slower
  healthy_graph_gemm    busy graph decode, GEMMs over half the time: nothing to win
  prefill_graph         a 6k-token prefill every 8th step of a graph decode server

The newer scenarios also write expected.json: the intended primary verdict and the
stake (share of the GPU span a fix would win) computed from the simulation's own
ground truth, never from the diagnosis rules.

(hardware_saturated needs GPM counters, which no trace has: it is tested on the
agent path.) Pairs for `inferscope diff`, each a baseline and a candidate of the
healthy workload with ProfilerStep#N annotations so the step-to-step spread can
be estimated:

  regression  the candidate's attention kernels are 30% slower
  noise       both sides differ only by jitter (another seed)

Kernel names are the public names found in real traces (../shared/traces:
TraceLens H100/B200 inference traces, HolisticTraceAnalysis NCCL and AlexNet
traces) or in the repo's example trace. REAL below lists the measured medians
they were anchored to; scenario durations scale them with a simple
bandwidth/FLOP cost model of Llama-3.1-8B (FP8 weights) or -70B (TP=2).

Layout of --out:  <scenario>.json.gz, communication/rank{0,1}.json.gz,
                  straggler_tp/rank{0..3}.json.gz, expected.json,
                  pairs/<pair>/{baseline,candidate}.json.gz
Usage:
  tools/make_scenario_traces.py --out /tmp/scen               # everything
  tools/make_scenario_traces.py --out d --scenario host_sync --scenario healthy
  tools/make_scenario_traces.py --out d --scenario none --pair regression
  tools/make_scenario_traces.py --list
Options: --seed N (default 5), --steps-scale F (multiplies every scenario's step
count; default 1.0), --quiet, --step-names trtllm: the serving steps of
prefill_interference are named as TensorRT-LLM's PyTorch executor names its
iterations ("[Executor] _forward_step N: X ctx reqs, Y gen reqs", in-flight
batching: a prefill step also carries the decode batch) instead of ProfilerStep#N.
"""

import argparse
import gzip
import json
import os
import random
import sys

# ---- Figures measured in the real traces (one-off extraction; names and numbers are facts). ----
# key: (kernel or API name, source trace, count, median us, p90 us)
REAL = {
    "xmma_gemm": ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_"
                  "execute_segment_k_off_kernel__5x_cublas", "TraceLens/h100 Qwen1.5-0.5B", 241,
                  31.87, 84.25),
    "pt_flash_fwd": ("void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, "
                     "128, 128, 4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_"
                     "traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, true, false, false, "
                     "false, true, false>(pytorch_flash::Flash_fwd_params)",
                     "TraceLens/h100 Qwen1.5-0.5B", 34, 113.66, 115.71),
    "mean_reduce": ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
                    "at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >("
                    "at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, "
                    "unsigned int, float, 4>)", "TraceLens/h100 Qwen1.5-0.5B", 70, 15.04, 15.74),
    "silu": ("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::"
             "silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#6}::"
             "operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, "
             "at::native::(anonymous namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}"
             "::operator()() const::{lambda()#6}::operator()() const::{lambda(c10::BFloat16)#1}, "
             "std::array<char*, 2ul>)", "TraceLens/h100 Qwen1.5-0.5B", 35, 38.43, 39.07),
    "nvjet_qkv": ("nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT", "TraceLens/b200 vLLM", 36, 8.05,
                  8.26),
    "nvjet_o": ("nvjet_tst_64x16_64x16_2x4_2cta_h_bz_bias_TNT", "TraceLens/b200 vLLM", 36, 6.50, 6.59),
    "nvjet_mlp": ("nvjet_tst_144x128_64x6_2x1_v_bz_bias_TNN", "TraceLens/b200 vLLM", 36, 6.33, 6.46),
    "nvjet_prefill_attn": ("nvjet_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN",
                           "nsys-ai/mfu_2gpu_before (2x H100)", 235, 102.08, 523.65),
    "nvjet_prefill_mlp": ("nvjet_tst_192x208_64x4_1x1_h_bz_coopB_bias_TNT",
                          "nsys-ai/mfu_2gpu_before (2x H100)", 34, 559.39, 560.67),
    "nvjet_lm_head": ("nvjet_tst_192x8_64x8_4x1_v_bz_TNT", "TraceLens/b200 vLLM", 1, 33.5, 33.5),
    "fused_add_rms_norm": ("std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, "
                           "void>::type vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>("
                           "c10::BFloat16*, long, c10::BFloat16*, c10::BFloat16 const*, float, int, "
                           "int)", "TraceLens/b200 vLLM", 72, 6.32, 6.82),
    "rope": ("void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, "
             "c10::BFloat16*, c10::BFloat16 const*, int, long, long, long, int, int, int)",
             "TraceLens/b200 vLLM", 36, 3.66, 3.84),
    "kv_cache": ("void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, unsigned char, "
                 "(vllm::Fp8KVCacheDataType)1>(__nv_bfloat16 const*, __nv_bfloat16 const*, "
                 "unsigned char*, unsigned char*, long const*, long, long, long, long, long, int, "
                 "int, int, float const*, float const*)", "TraceLens/b200 vLLM", 36, 4.51, 4.74),
    "fp8_quant": ("void vllm::scaled_fp8_quant_kernel_strided<c10::BFloat16, c10::Float8_e4m3fn>("
                  "c10::Float8_e4m3fn*, c10::BFloat16 const*, float const*, int, long, long)",
                  "TraceLens/b200 vLLM", 36, 2.70, 2.79),
    "copy": ("void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda("
             "at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#4}::operator()"
             "() const::{lambda(long)#1}, std::array<char*, 2ul>, 4, TrivialOffsetCalculator<1, "
             "unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::"
             "LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::"
             "direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::"
             "{lambda()#4}::operator()() const::{lambda(long)#1}, std::array<char*, 2ul>, "
             "TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, "
             "at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)",
             "TraceLens/b200 vLLM", 1, 2.69, 2.69),
    "nccl_all_gather": ("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                        "TraceLens/b200 vLLM", 1, 21.95, 21.95),
    "nccl_all_reduce_a100": ("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, "
                             "ncclWork*)", "HTA nccl_parser_config (A100 DDP)", 15, 2520.61,
                             5983.02),
    # APIs and copies (durations in us; bandwidths in GB/s).
    "cudaLaunchKernel_h100": ("cudaLaunchKernel", "TraceLens/h100 Qwen1.5-0.5B", 860, 3.20, 4.49),
    "cudaLaunchKernel_vllm": ("cudaLaunchKernel", "TraceLens/b200 vLLM", 367, 6.60, 7.61),
    "cuLaunchKernelEx": ("cuLaunchKernelEx", "TraceLens/b200 vLLM", 220, 7.77, 8.40),
    "launch_interval_eager": ("launch-to-launch interval", "TraceLens/b200 vLLM eager", 988, 83.6,
                              211.0),
    "cudaGraphLaunch": ("cudaGraphLaunch", "HTA negative_queue_length rank0", 70, 27.5, 132.0),
    "cudaMemcpyAsync": ("cudaMemcpyAsync", "TraceLens/b200 vLLM", 161, 13.83, 28.83),
    "cudaMalloc": ("cudaMalloc", "HTA critical_path alexnet", 24, 5458.0, 277144.0),
    "cudaFree": ("cudaFree", "HTA critical_path alexnet", 15, 1451.0, 525034.0),
    "pageable_htod_gbps": ("Memcpy HtoD (Pageable -> Device)", "TraceLens/h100 owlv2", 10, 20.12,
                           20.57),
    "pageable_dtoh_gbps": ("Memcpy DtoH (Device -> Pageable)", "TraceLens/h100 owlv2", 15, 22.87,
                           24.33),
}

# Decode kernels that no real trace here holds (FlashAttention-2 split-KV as vLLM uses on
# H100, and the NCCL 2.19+ all-reduce name): the README example's generator has them.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_example_trace import (K_FA_COMBINE, K_FA_PREFILL, K_FA_SPLITKV,  # noqa: E402
                                K_NCCL_AR, K_SILU as K_ACT_MUL)
K_SOFTMAX = ("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
             "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)")
K_TOPK = ("void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>("
          "at::cuda::detail::TensorInfo<float const, unsigned int>, unsigned int, unsigned int, "
          "bool, unsigned int, unsigned int, at::cuda::detail::TensorInfo<float, unsigned int>, "
          "unsigned int, at::cuda::detail::TensorInfo<long, unsigned int>, unsigned int)")


def K(key):
    return REAL[key][0]


def med(key):
    return REAL[key][3]


# ---- Cost model (H100 SXM: ~3.0 TB/s effective HBM, ~1.2 PFLOP/s FP8, ~0.6 PFLOP/s BF16). ----
HBM_BYTES_PER_US = 3.0e6
PCIE_BYTES_PER_US = {"htod": med("pageable_htod_gbps") * 1e3, "dtoh": med("pageable_dtoh_gbps") * 1e3}


def weight_bound_us(params, bytes_per_param=1.0, floor_key="nvjet_o"):
    """A decode GEMM reads its weights once; never faster than the measured small nvjet GEMM."""
    return max(med(floor_key), params * bytes_per_param / HBM_BYTES_PER_US)


def flop_bound_us(flops, tflops):
    return max(med("xmma_gemm"), flops / (tflops * 1e6))


class Op:
    """One GPU operation of a plan: a kernel, a memcpy, or a collective kernel."""
    __slots__ = ("kind", "name", "dur_us", "grid", "block", "collective", "nbytes", "pageable",
                 "direction", "cat")

    def __init__(self, name, dur_us, grid=(1, 1, 1), block=(128, 1, 1), collective=False,
                 kind="kernel", nbytes=0, pageable=False, direction="htod", cat="attention"):
        self.kind, self.name, self.dur_us = kind, name, dur_us
        self.grid, self.block, self.collective = grid, block, collective
        self.nbytes, self.pageable, self.direction = nbytes, pageable, direction
        self.cat = cat  # only used to scale ops in the diff pairs


def decode_layer(batch, ctx, tp=1, hidden=4096, inter=14336, kv_heads=8, heads=32, wbytes=1.0,
                 attn_scale=1.0):
    """One decoder layer of a decode step (Llama-style, FP8 weights when wbytes=1)."""
    hd = 128
    qkv = weight_bound_us((heads + 2 * kv_heads) * hd * hidden / tp, wbytes, "nvjet_qkv")
    o = weight_bound_us(heads * hd * hidden / tp, wbytes)
    gate_up = weight_bound_us(2 * inter * hidden / tp, wbytes, "nvjet_mlp")
    down = weight_bound_us(inter * hidden / tp, wbytes, "nvjet_mlp")
    kv_bytes = batch * ctx * 2 * (kv_heads / tp) * hd * 2
    attn = (8.0 + kv_bytes / HBM_BYTES_PER_US) * attn_scale
    small = 1.0 + batch / 256.0  # norm/rope/cache grow slowly with the batch
    ops = [
        Op(K("fused_add_rms_norm"), med("fused_add_rms_norm") * small, (batch, 1, 1), (512, 1, 1),
           cat="normalization"),
        Op(K("fp8_quant"), med("fp8_quant") * small, (batch, 1, 1), (256, 1, 1), cat="quant"),
        Op(K("nvjet_qkv"), qkv, (48, 1, 1), (384, 1, 1), cat="matmul"),
        Op(K("rope"), med("rope") * small, (batch, 1, 1), (256, 1, 1), cat="positional"),
        Op(K("kv_cache"), med("kv_cache") * small, (batch, 1, 1), (512, 1, 1), cat="kv"),
        Op(K_FA_SPLITKV, attn, (1, batch, heads // tp), (128, 1, 1), cat="attention"),
        Op(K_FA_COMBINE, 3.4 * small * attn_scale, (batch * 4, 1, 1), (128, 1, 1),
           cat="attention"),
        Op(K("nvjet_o"), o, (64, 1, 4), (128, 1, 1), cat="matmul"),
    ]
    if tp > 1:
        ops.append(allreduce_op(batch, hidden))
    ops += [
        Op(K("fused_add_rms_norm"), med("fused_add_rms_norm") * small, (batch, 1, 1), (512, 1, 1),
           cat="normalization"),
        Op(K("fp8_quant"), med("fp8_quant") * small, (batch, 1, 1), (256, 1, 1), cat="quant"),
        # cuBLAS picks a different kernel family for the wide gate/up shape.
        Op(K("xmma_gemm"), gate_up, (112, 1, 1), (384, 1, 1), cat="matmul"),
        Op(K_ACT_MUL, 3.6 * small, (batch, 1, 1), (1024, 1, 1), cat="activation"),
        Op(K("nvjet_mlp"), down, (64, 1, 1), (384, 1, 1), cat="matmul"),
    ]
    if tp > 1:
        ops.append(allreduce_op(batch, hidden))
    return ops


def allreduce_op(batch, hidden):
    """NCCL ring all-reduce of the activations over PCIe (latency + bytes at ~20 GB/s bus)."""
    nbytes = batch * hidden * 2
    return Op(K_NCCL_AR, 25.0 + nbytes / 20e3, (24, 1, 1), (544, 1, 1), collective=True,
              cat="communication")


def decode_tail(batch, vocab=128256, hidden=4096, tp=1):
    """Final norm, lm_head, (vocab gather), sampling."""
    ops = [Op(K("fused_add_rms_norm"), med("fused_add_rms_norm"), (batch, 1, 1), (512, 1, 1),
              cat="normalization"),
           Op(K("nvjet_lm_head"), weight_bound_us(vocab * hidden / tp, 2.0), (132, 1, 1),
              (384, 1, 1), cat="matmul")]
    if tp > 1:
        ops.append(Op(K("nccl_all_gather"), med("nccl_all_gather") + batch * 0.15, (tp, 1, 1),
                      (512, 1, 1), collective=True, cat="communication"))
    ops += [Op(K_SOFTMAX, 11 + batch * 0.1, (batch, 1, 1), (1024, 1, 1), cat="sampling"),
            Op(K_TOPK, 13 + batch * 0.08, (batch, 1, 1), (1024, 1, 1), cat="sampling"),
            Op("Memcpy DtoH (Device -> Pinned)", 2.2, kind="memcpy", nbytes=batch * 8,
               direction="dtoh", cat="memory")]
    return ops


def decode_step(batch, ctx, layers=32, **kw):
    head = [Op("Memcpy HtoD (Pinned -> Device)", 1.6, kind="memcpy", nbytes=batch * 16,
               cat="memory")]
    tail_kw = {k: v for k, v in kw.items() if k in ("tp", "hidden")}
    body = []
    for _ in range(layers):
        body += decode_layer(batch, ctx, **kw)
    return head + body + decode_tail(batch, **tail_kw)


def prefill_layer(tokens, seq_len, hidden=4096, inter=14336, kv_heads=8, heads=32, fp8=True):
    """One layer of a prefill of `tokens` tokens in sequences of `seq_len` (GEMMs FLOP-bound)."""
    hd = 128
    tf = 1200 if fp8 else 600
    per_token = 2 * hidden * ((heads + 2 * kv_heads) * hd + heads * hd + 3 * inter)
    shares = [((heads + 2 * kv_heads) * hd), heads * hd, 2 * inter, inter]
    gemm = [flop_bound_us(per_token * tokens * s / sum(shares), tf) for s in shares]
    n_seq = max(1, tokens // seq_len)
    attn = max(med("pt_flash_fwd"), n_seq * 2 * seq_len * seq_len * hd * heads / (450 * 1e6))
    scale = tokens / 2048.0
    mm_attn, mm_mlp = K("nvjet_prefill_attn"), K("nvjet_prefill_mlp")
    return [
        Op(K("mean_reduce"), med("mean_reduce") * scale, (tokens, 1, 1), (512, 1, 1),
           cat="normalization"),
        Op(mm_attn, gemm[0], (24, 24, 1), (384, 1, 1), cat="matmul"),
        Op(K("rope"), med("rope") * 2.5 * scale, (tokens, 1, 1), (256, 1, 1), cat="positional"),
        Op(K("kv_cache"), med("kv_cache") * 2.0 * scale, (tokens, 1, 1), (512, 1, 1), cat="kv"),
        Op(K_FA_PREFILL, attn, (max(1, seq_len // 128), heads, n_seq), (128, 1, 1),
           cat="attention"),
        Op(mm_attn, gemm[1], (16, 24, 1), (384, 1, 1), cat="matmul"),
        Op(K("mean_reduce"), med("mean_reduce") * scale, (tokens, 1, 1), (512, 1, 1),
           cat="normalization"),
        Op(mm_mlp, gemm[2], (56, 24, 1), (384, 1, 1), cat="matmul"),
        Op(K("silu"), med("silu") * scale, (tokens, 1, 1), (1024, 1, 1), cat="activation"),
        Op(mm_mlp, gemm[3], (16, 24, 1), (384, 1, 1), cat="matmul"),
    ]


# ---- The simulator: host thread and one stream per rank, collectives couple the ranks. ----
BASE_NS = 5_102_770_000_000  # steady-clock origin of the fake capture
STREAM = 7
HOST_PID0 = 61440
LAUNCH = ("cuda_runtime", "cudaLaunchKernel", 211)
LAUNCH_EX = ("cuda_driver", "cuLaunchKernelEx", 652)
GRAPH_LAUNCH = ("cuda_runtime", "cudaGraphLaunch", 311)
MEMCPY = ("cuda_runtime", "cudaMemcpyAsync", 41)
STREAM_SYNC = ("cuda_runtime", "cudaStreamSynchronize", 131)
DEVICE_SYNC = ("cuda_runtime", "cudaDeviceSynchronize", 165)
MALLOC = ("cuda_runtime", "cudaMalloc", 20)
FREE = ("cuda_runtime", "cudaFree", 22)


def q32(ns):
    """GPU timestamps in real traces are multiples of 32 ns."""
    return int(ns) // 32 * 32


class Rank:
    """One process (rank): its host thread and stream, and the events recorded so far."""

    def __init__(self, rank, seed, gpu_speed=1.0):
        self.rank = rank
        self.rng = random.Random(seed * 7919 + rank)
        self.pid = HOST_PID0 + rank * 11
        self.gpu_speed = gpu_speed
        self.host, self.gpu = [], []
        self.corr = 0
        # Ground truth kept while simulating (for the expected verdicts, never written to traces):
        # GPU busy intervals, windows of host time with a known cause, collective waiting.
        self.busy = []
        self.windows = []
        self.coll_ns = 0
        self.coll_wait_ns = 0
        self.graph_id = 0
        self.t_host = self.rng.randint(30_000, 60_000)
        self.t_gpu = self.t_host

    def us(self, ns):
        return round((BASE_NS + ns) / 1000.0, 3)

    def event(self, cat, name, start_ns, dur_ns, args, gpu=False):
        ev = {"ph": "X", "cat": cat, "name": name, "pid": self.rank if gpu else self.pid,
              "tid": STREAM if gpu else self.pid, "ts": self.us(start_ns),
              "dur": round(max(1, int(dur_ns)) / 1000.0, 3), "args": args}
        (self.gpu if gpu else self.host).append(ev)

    def api(self, api, start_ns, dur_ns):
        self.corr += 1
        self.event(api[0], api[1], start_ns, dur_ns, {"cbid": api[2], "correlation": self.corr})
        return self.corr

    def jit(self, x, cv):
        return x * max(0.5, self.rng.gauss(1.0, cv))


class Job:
    """Ranks simulated in lockstep; every method does the same thing on every rank."""

    step_names = "profiler"  # or "trtllm" (--step-names): how end_step names the steps

    def __init__(self, n_ranks, seed, device, gpu_speeds=None, step_jitter=0.015):
        speeds = gpu_speeds or [1.0] * n_ranks
        self.ranks = [Rank(r, seed, speeds[r]) for r in range(n_ranks)]
        self.rng = random.Random(seed)
        self.device = device
        self.step_jitter = step_jitter
        self.step_factor = 1.0
        # Run-to-run difference (clocks, thermals, placement): about 1% between two runs.
        self.run_factor = max(0.95, self.rng.gauss(1.0, 0.01))
        self.scale = {}  # op category -> duration factor (diff pairs)

    # Host-only activity.
    def host(self, lo_us, hi_us, label=None):
        for r in self.ranks:
            d = int(r.rng.uniform(lo_us, hi_us) * 1000)
            if label:
                r.event("python_function", label, r.t_host, d, {"Python id": r.corr})
            r.t_host += d

    def begin_step(self, i, reqs=None):
        """reqs: (context, generation) requests of the step, for --step-names trtllm."""
        # Per-step GPU clock/thermal/contention factor: the window-to-window spread.
        self.step_factor = max(0.9, self.rng.gauss(1.0, self.step_jitter))
        for r in self.ranks:
            r.step = (i, r.t_host, reqs)

    def end_step(self):
        for r in self.ranks:
            i, start, reqs = r.step
            name = "ProfilerStep#%d" % i
            if self.step_names == "trtllm" and reqs is not None:
                name = "[Executor] _forward_step %d: %d ctx reqs, %d gen reqs" % (i, reqs[0],
                                                                                   reqs[1])
            r.event("user_annotation", name, start, r.t_host - start, {"External id": 0})

    def _gpu(self, r, op, earliest_ns, corr, graph_id):
        start = q32(max(r.t_gpu + r.rng.randint(900, 2200), earliest_ns))
        dur = op.dur_us * self.scale.get(op.cat, 1.0) * self.step_factor * self.run_factor * 1e3
        # A slower GPU (clocks, thermals) computes slower; a collective over PCIe is bound by the
        # link, which runs at the same speed on every rank.
        dur = r.jit(dur, 0.03) / (1.0 if op.collective else r.gpu_speed)
        return start, dur

    def _emit(self, r, op, start, end, corr, graph_id):
        a = {"queued": 0, "device": r.rank, "context": 1, "stream": STREAM, "correlation": corr}
        if graph_id:
            a["graph id"] = graph_id
        if op.kind == "memcpy":
            a["bytes"] = op.nbytes
            a["memory bandwidth (GB/s)"] = round(op.nbytes / max(1, end - start), 6)
            r.event("gpu_memcpy", op.name, start, end - start, a, gpu=True)
        else:
            a["grid"], a["block"] = list(op.grid), list(op.block)
            r.event("kernel", op.name, start, end - start, a, gpu=True)
        r.t_gpu = end
        r.busy.append((start, end))

    def run(self, ops, mode="graph", gap_us=(9, 22)):
        """Issues ops eagerly (one launch each, `gap_us` of Python between) or as one graph."""
        graph = {}
        if mode == "graph":
            for r in self.ranks:
                t0 = r.t_host + int(r.rng.uniform(40, 90) * 1000)  # prepare inputs, pick graph
                dur = int(r.jit(med("cudaGraphLaunch"), 0.15) * 1000)
                r.graph_id += 1
                graph[r.rank] = (r.api(GRAPH_LAUNCH, t0, dur), t0 + 6000, r.graph_id)
                r.t_host = t0 + dur
        for op in ops:
            placed = []
            for r in self.ranks:
                if mode == "graph":
                    corr, earliest, gid = graph[r.rank]
                else:
                    r.t_host += int(r.rng.uniform(*gap_us) * 1000)
                    api = MEMCPY if op.kind == "memcpy" else (
                        LAUNCH_EX if "nvjet" in op.name or "nccl" in op.name else LAUNCH)
                    ldur = int(r.jit(med("cudaMemcpyAsync") if op.kind == "memcpy" else
                                     med("cudaLaunchKernel_vllm"), 0.12) * 1000)
                    corr, gid = r.api(api, r.t_host, ldur), 0
                    earliest = r.t_host + int(r.rng.uniform(2.5, 5.0) * 1000)
                    r.t_host += ldur
                start, dur = self._gpu(r, op, earliest, corr, gid)
                placed.append((r, start, dur, corr, gid))
            if op.collective:  # finishes on every rank once the last one arrives
                last = max(s for _, s, _, _, _ in placed)
                ends = [q32(last + d) for _, _, d, _, _ in placed]
                for (r, s, _, _, _), e in zip(placed, ends):
                    r.coll_ns += max(e, s + 32) - s
                    r.coll_wait_ns += last - s
            else:
                ends = [q32(s + d) for _, s, d, _, _ in placed]
            for (r, start, _, corr, gid), end in zip(placed, ends):
                self._emit(r, op, start, max(end, start + 32), corr, gid)
                if mode != "graph" and op.kind == "memcpy" and (op.pageable or
                                                                  op.direction == "dtoh"):
                    # Copies to/from pageable memory (and DtoH in general) return when done.
                    r.t_host = max(r.t_host, end + int(r.rng.uniform(2, 5) * 1000))

    def copy(self, direction, nbytes, pageable):
        src = {"htod": "Memcpy HtoD (%s -> Device)", "dtoh": "Memcpy DtoH (Device -> %s)"}
        name = src[direction] % ("Pageable" if pageable else "Pinned")
        bw = PCIE_BYTES_PER_US[direction] * (1.0 if pageable else 2.2)
        self.run([Op(name, 3.0 + nbytes / bw, kind="memcpy", nbytes=nbytes, pageable=pageable,
                     direction=direction, cat="memory")], mode="eager", gap_us=(15, 30))

    def sync(self, kind="stream"):
        api = STREAM_SYNC if kind == "stream" else DEVICE_SYNC
        for r in self.ranks:
            s0 = r.t_host + r.rng.randint(800, 2000)
            wait_start = s0 + r.rng.randint(1200, 2000)
            wait_end = max(r.t_gpu + r.rng.randint(500, 1500), wait_start + 600)
            end = wait_end + r.rng.randint(1500, 3000)
            corr = r.api(api, s0, end - s0)
            kind_name = "Stream Sync" if kind == "stream" else "Context Sync"
            r.event("cuda_sync", kind_name, wait_start, wait_end - wait_start,
                    {"cuda_sync_kind": kind_name, "stream": STREAM if kind == "stream"
                     else 4294967295, "device": r.rank, "context": 1, "correlation": corr},
                    gpu=True)
            r.t_host = end

    def alloc(self, api, lo_us, hi_us):
        for r in self.ranks:
            start = r.t_host + r.rng.randint(2000, 6000)
            if api is FREE:  # cudaFree synchronizes the device first
                start = max(start, r.t_gpu)
            dur = int(r.rng.uniform(lo_us, hi_us) * 1000)
            r.api(api, start, dur)
            r.t_host = start + dur
            r.windows.append((start, start + dur))

    # ---- Output ----
    def trace(self, r, name):
        t0 = r.us(0)
        end_ns = max(r.t_host, r.t_gpu) + 20_000
        n = len(self.ranks)
        sms, mem = (132, 85520809984) if "HBM3" in self.device else (114, 85029158912)
        props = [{"id": i, "name": self.device, "totalGlobalMem": mem, "computeMajor": 9,
                  "computeMinor": 0, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
                  "regsPerBlock": 65536, "regsPerMultiprocessor": 65536, "warpSize": 32,
                  "sharedMemPerBlock": 49152, "sharedMemPerMultiprocessor": 233472,
                  "numSms": sms, "sharedMemPerBlockOptin": 232448} for i in range(n)]
        meta = [
            {"name": "process_name", "ph": "M", "ts": t0, "pid": r.pid, "tid": 0,
             "args": {"name": "VllmWorker-%d" % r.rank if n > 1 else "EngineCore_0"}},
            {"name": "thread_name", "ph": "M", "ts": t0, "pid": r.pid, "tid": r.pid,
             "args": {"name": "python3"}},
            {"name": "process_labels", "ph": "M", "ts": t0, "pid": r.rank, "tid": 0,
             "args": {"labels": "GPU %d" % r.rank}},
            {"name": "thread_name", "ph": "M", "ts": t0, "pid": r.rank, "tid": STREAM,
             "args": {"name": "stream %d " % STREAM}},
        ]
        tail = [{"ph": "X", "cat": "Trace", "ts": t0, "dur": end_ns / 1000.0, "pid": "Spans",
                 "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)",
                 "args": {"Op count": 0}}]
        doc = {"schemaVersion": 1, "deviceProperties": props, "cupti_version": 24,
               "cuda_runtime_version": 12080, "cuda_driver_version": 12080,
               "record_shapes": 0, "displayTimeUnit": "ms",
               "traceEvents": meta + r.host + r.gpu + tail, "traceName": name}
        if n > 1:
            doc["distributedInfo"] = {"backend": "nccl", "rank": r.rank, "world_size": n,
                                      "pg_count": 2, "nccl_version": "2.26.2"}
        return doc


H100 = "NVIDIA H100 80GB HBM3"
H100_PCIE = "NVIDIA H100 PCIe"


def steps(n, k):
    """A scenario's step count scaled by --steps-scale, at least 2."""
    return max(2, int(round(n * k)))


def serve_decode(job, steps, batch, ctx, host_prep_of_gpu, post_us=(150, 300), extra=None,
                 **layer_kw):
    """vLLM-style decode loop with CUDA graphs. The host prepares step N+1 while the GPU runs
    step N (host_prep_of_gpu: that preparation as a fraction of the GPU step), then waits for
    the sampled tokens. `extra(step)` may add work after each step."""
    for i in range(steps):
        job.begin_step(i)
        ops = decode_step(batch, ctx + i, **layer_kw)
        gpu_us = sum(o.dur_us for o in ops) + 1.55 * len(ops)  # kernels + the gaps between them
        job.run(ops, mode="graph")
        job.host(gpu_us * host_prep_of_gpu * 0.95, gpu_us * host_prep_of_gpu * 1.05,
                 "vllm/v1/worker/gpu_model_runner.py(1402): _prepare_inputs")
        job.sync("stream")
        job.host(*post_us, label="vllm/v1/engine/output_processor.py(391): process_outputs")
        if extra:
            extra(i)
        job.end_step()


# ---- Scenarios ----
def sc_healthy(seed, k):
    job = Job(1, seed, H100)
    serve_decode(job, steps(40, k), batch=96, ctx=250, host_prep_of_gpu=0.95)
    return job


def sc_kernel_bound(seed, k):
    job = Job(1, seed, H100)
    serve_decode(job, steps(24, k), batch=48, ctx=12000, host_prep_of_gpu=0.95)
    return job


def sc_launch_overhead(seed, k):
    # Eager mode (enforce_eager / no torch.compile): every kernel is a Python launch ~84 us apart.
    job = Job(1, seed, H100)
    r = job.ranks[0]
    lo, hi = med("launch_interval_eager") * 0.6, med("launch_interval_eager") * 1.3
    for i in range(steps(8, k)):
        job.begin_step(i)
        job.host(300, 600, "vllm/v1/worker/gpu_model_runner.py(1402): _prepare_inputs")
        t0 = r.t_host
        job.run(decode_step(8, 700 + i), mode="eager", gap_us=(lo, hi))
        r.windows.append((t0, r.t_gpu))  # the host is launching until the step's last kernel
        job.sync("stream")
        job.host(150, 300, "vllm/v1/engine/output_processor.py(391): process_outputs")
        job.end_step()
    job.expected = {"primary": "launch_overhead",
                    "stake": idle_within(r, r.windows) / span_of(r),
                    "why": "GPU idle while the host issued launch calls (queue empty) / span"}
    return job


def sc_batching(seed, k):
    # One to three requests at a time; the engine sleeps until the next request arrives.
    job = Job(1, seed, H100)
    r = job.ranks[0]
    idle_from = None
    for i in range(steps(40, k)):
        job.begin_step(i)
        if idle_from is not None:  # from the last step's sync to this step: nothing to run
            r.windows.append((idle_from, r.t_host))
        batch = job.rng.choice((1, 1, 2, 3))
        job.run(decode_step(batch, 600 + i), mode="graph")
        job.host(300, 500, "vllm/v1/worker/gpu_model_runner.py(1402): _prepare_inputs")
        job.sync("stream")
        idle_from = r.t_host
        job.host(150, 300, "vllm/v1/engine/output_processor.py(391): process_outputs")
        job.end_step()
        job.host(6_000, 22_000, "vllm/v1/engine/core.py(712): _process_input_queue")
    job.expected = {"primary": "batching", "stake": idle_within(r, r.windows) / span_of(r),
                    "why": "GPU idle between a step's sync and the next step (no request) / span"}
    return job


def sc_communication(seed, k):
    # Llama-3.1-70B FP8, TP=2 on two PCIe H100s (no NVLink): NCCL all-reduce after attention
    # and MLP of every layer, on the compute stream (no overlap); rank 1 is 4% slower.
    job = Job(2, seed, H100_PCIE, gpu_speeds=[1.0, 0.96])
    serve_decode(job, steps(10, k), batch=64, ctx=1000, host_prep_of_gpu=0.95, layers=80, tp=2,
                 hidden=8192, inter=28672, heads=64)
    spans = sum(span_of(r) for r in job.ranks)
    job.expected = {"primary": "communication",
                    "stake": sum(r.coll_ns for r in job.ranks) / spans,
                    "why": "collective time, none overlapped / summed spans"}
    return job


def sc_host_sync(seed, k):
    # Prompt scoring (prefill only, 4 x 512 tokens per step), eager, with a timing hook that
    # calls torch.cuda.synchronize() after every layer and then logs.
    job = Job(1, seed, H100)
    r = job.ranks[0]
    for i in range(steps(6, k)):
        job.begin_step(i)
        job.copy("htod", 2048 * 8, pageable=False)
        for _ in range(32):
            job.run(prefill_layer(2048, 512, fp8=False), mode="eager", gap_us=(12, 25))
            w0 = r.t_host
            job.sync("device")
            job.host(450, 700, "transformers/utils/hooks.py(88): layer_timing_hook")
            r.windows.append((w0, r.t_host))  # blocked in the sync, then logging what it timed
        job.sync("stream")
        job.end_step()
    job.expected = {"primary": "host_sync", "stake": idle_within(r, r.windows) / span_of(r),
                    "why": "GPU idle from each sync to the end of the hook's logging / span"}
    return job


def sc_memory_transfer(seed, k):
    # A logits processor pulls the full logits to pageable host memory every step and sends a
    # bias back: ~49 MB DtoH + 25 MB HtoD over PCIe per step.
    job = Job(1, seed, H100)

    def logits_roundtrip(i):
        job.copy("dtoh", 96 * 128256 * 4, pageable=True)
        job.host(250, 450, "logits_processors.py(57): __call__")
        job.copy("htod", 96 * 128256 * 2, pageable=True)

    serve_decode(job, steps(30, k), batch=96, ctx=250, host_prep_of_gpu=0.95,
                 extra=logits_roundtrip)
    return job


def sc_allocation_stalls(seed, k):
    # The caching allocator gives memory back (empty_cache) and re-grows it every few steps.
    job = Job(1, seed, H100)

    def churn(i):
        if i % 6 == 5:
            for _ in range(2):
                job.alloc(FREE, med("cudaFree") * 0.8, med("cudaFree") * 2.0)
            for _ in range(2):
                job.alloc(MALLOC, med("cudaMalloc") * 0.3, med("cudaMalloc") * 0.7)

    serve_decode(job, steps(36, k), batch=96, ctx=250, host_prep_of_gpu=0.95, extra=churn)
    r = job.ranks[0]
    job.expected = {"primary": "allocation_stalls",
                    "stake": idle_within(r, r.windows) / span_of(r),
                    "why": "GPU idle while the host was inside cudaMalloc/cudaFree / span"}
    return job


def sc_prefill_interference(seed, k):
    # No chunked prefill: a 20k-token prompt is prefilled as one step every 12 decode steps, and
    # the running decode batch (48 requests, ~3k context) waits ~0.5 s for it each time.
    job = Job(1, seed, H100)
    r = job.ranks[0]
    durations = {"prefill": [], "decode": []}
    step = 0
    for p in range(steps(3, k)):
        job.begin_step(step, reqs=(1, 48))
        first = len(r.busy)
        ops = []
        for _ in range(32):
            ops += prefill_layer(20480, 20480)
        job.run(ops, mode="eager", gap_us=(10, 20))
        job.sync("stream")
        job.host(150, 300, "vllm/v1/engine/output_processor.py(391): process_outputs")
        job.end_step()
        durations["prefill"].append(r.busy[-1][1] - r.busy[first][0])
        step += 1
        for i in range(12):
            job.begin_step(step, reqs=(0, 48))
            first = len(r.busy)
            ops = decode_step(48, 3000 + step)
            job.run(ops, mode="graph")
            gpu_us = sum(o.dur_us for o in ops) + 1.55 * len(ops)
            job.host(gpu_us * 0.9, gpu_us * 1.0,
                     "vllm/v1/worker/gpu_model_runner.py(1402): _prepare_inputs")
            job.sync("stream")
            job.host(150, 300, "vllm/v1/engine/output_processor.py(391): process_outputs")
            job.end_step()
            durations["decode"].append(r.busy[-1][1] - r.busy[first][0])
            step += 1
    decode_mean = sum(durations["decode"]) / len(durations["decode"])
    delay = sum(d - decode_mean for d in durations["prefill"])
    job.expected = {"primary": "prefill_interference", "stake": delay / span_of(r),
                    "why": "prefill steps' excess over the mean decode step / span"}
    return job


# ---- Ground truth of the newer scenarios: what a fix would win, from the simulation itself. ----
def union(intervals):
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def span_of(r):
    return max(e for _, e in r.busy) - min(s for s, _ in r.busy)


def idle_within(r, windows):
    """GPU idle time of rank r inside the (non-overlapping) host windows, clipped to its span."""
    busy = union(r.busy)
    lo, hi = busy[0][0], busy[-1][1]
    idle = 0
    for ws, we in windows:
        ws, we = max(ws, lo), min(we, hi)
        if we <= ws:
            continue
        covered = sum(max(0, min(e, we) - max(s, ws)) for s, e in busy)
        idle += (we - ws) - covered
    return idle


def tiny_decode_step(batch, layers=24):
    """A 0.5B-class model (hidden 896): every kernel is a few microseconds, GEMMs included."""
    def op(key_or_name, cat, grid=(1, 1, 1)):
        name = K(key_or_name) if key_or_name in REAL else key_or_name
        return Op(name, 0, (batch,) + grid[1:], (256, 1, 1), cat=cat)
    ops = []
    for _ in range(layers):
        ops += [op("fused_add_rms_norm", "normalization"), op("nvjet_qkv", "matmul"),
                op("rope", "positional"), op(K_FA_SPLITKV, "attention"),
                op("nvjet_o", "matmul"), op("nvjet_mlp", "matmul")]
    ops += [op("nvjet_lm_head", "matmul"), op(K_TOPK, "sampling")]
    return ops


def sc_launch_bound_tiny(seed, k):
    # Batch-16 eager decode of a 0.5B-class model: ~145 launches per step, each kernel ~2.5 us
    # (reads a few MB), each launch call ~6.6 us, issued back to back from C++-side dispatch.
    # The GPU finishes every kernel before the next launch call returns: the queue is empty and
    # the GPU waits on the launch path, though every gap is shorter than 30 us.
    job = Job(1, seed, H100)
    r = job.ranks[0]
    for i in range(steps(12, k)):
        job.begin_step(i)
        job.host(150, 300, "vllm/v1/worker/gpu_model_runner.py(1402): _prepare_inputs")
        ops = tiny_decode_step(16)
        for o in ops:
            o.dur_us = r.rng.uniform(2.0, 3.1)
        t0 = r.t_host
        job.run(ops, mode="eager", gap_us=(0.6, 1.4))
        r.windows.append((t0, r.t_gpu))  # the host is launching until the step's last kernel
        job.sync("stream")
        job.host(100, 200, "vllm/v1/engine/output_processor.py(391): process_outputs")
        job.end_step()
    span = span_of(r)
    job.expected = {"primary": "launch_overhead", "stake": idle_within(r, r.windows) / span,
                    "why": "GPU idle while the host issued launch calls (queue empty) / span"}
    return job


def sc_allocation_serving(seed, k):
    # A CUDA-graph decode server whose host frees and re-allocates device memory between steps
    # (cache resizing, empty_cache): every third step one cudaFree or cudaMalloc of 1.5-20 ms.
    # The GPU finished the step and waits while the host sits in the call.
    job = Job(1, seed, H100)

    def churn(i):
        if i % 3 == 2:
            job.alloc(FREE if job.rng.random() < 0.5 else MALLOC, 1_500, 20_000)

    serve_decode(job, steps(36, k), batch=32, ctx=500, host_prep_of_gpu=0.9, extra=churn)
    r = job.ranks[0]
    job.expected = {"primary": "allocation_stalls",
                    "stake": idle_within(r, r.windows) / span_of(r),
                    "why": "GPU idle while the host was inside cudaMalloc/cudaFree / span"}
    return job


def sc_straggler_tp(seed, k):
    # Llama-3.1-70B FP8, TP=4 on PCIe H100s, all-reduce on the compute stream (no overlap); rank 3
    # runs 20% slower (a throttled GPU): the others reach every all-reduce first and wait in it.
    def simulate(speeds):
        job = Job(4, seed, H100_PCIE, gpu_speeds=speeds)
        serve_decode(job, steps(5, k), batch=64, ctx=1000, host_prep_of_gpu=0.95, layers=80,
                     tp=4, hidden=8192, inter=28672, heads=64)
        return job

    job = simulate([1.0, 1.0, 1.0, 1.0 / 1.2])
    # The same run with rank 3 at full speed: the waiting that remains is jitter, not rank 3.
    balanced = simulate([1.0] * 4)
    spans = sum(span_of(r) for r in job.ranks)
    wait = sum(r.coll_wait_ns for r in job.ranks) - sum(r.coll_wait_ns for r in balanced.ranks)
    job.expected = {"primary": "communication", "rank": 3,
                    "stake": sum(r.coll_ns for r in job.ranks) / spans,
                    "wait": wait / spans,
                    "why": "collective time, none overlapped (stake) / summed spans; of it, the "
                           "waiting that balancing rank 3 removes (wait)"}
    return job


def sc_healthy_graph_gemm(seed, k):
    # CUDA-graph decode of Llama-3.1-8B with BF16 weights, batch 32, 1.5k-token contexts: the
    # weight GEMMs take over half of the GPU time, as they should (decode reads every weight each
    # step); the host prepares step N+1 while the GPU runs step N. Nothing to win back.
    job = Job(1, seed, H100)
    serve_decode(job, steps(30, k), batch=32, ctx=1500, host_prep_of_gpu=0.9, wbytes=2.0)
    job.expected = {"primary": "healthy", "stake": 0.0, "why": "no bottleneck was simulated"}
    return job


def sc_prefill_graph(seed, k):
    # A CUDA-graph decode server (batch 32, ~2k contexts) without chunked prefill: every 8th step
    # also prefills a new 6k-token prompt (eager: the shape is not captured), so that step takes
    # the prefill's time and every running request's next token waits for it.
    job = Job(1, seed, H100)
    r = job.ranks[0]
    durations = {"prefill": [], "decode": []}
    for i in range(steps(40, k)):
        job.begin_step(i)
        first = len(r.busy)
        prefill = i % 8 == 4
        if prefill:
            ops = []
            for _ in range(32):
                ops += prefill_layer(6144, 6144)
            job.run(ops, mode="eager", gap_us=(10, 20))
        ops = decode_step(32, 2000 + i)
        job.run(ops, mode="graph")
        gpu_us = sum(o.dur_us for o in ops) + 1.55 * len(ops)
        job.host(gpu_us * 0.9, gpu_us * 1.0,
                 "vllm/v1/worker/gpu_model_runner.py(1402): _prepare_inputs")
        job.sync("stream")
        job.host(150, 300, "vllm/v1/engine/output_processor.py(391): process_outputs")
        job.end_step()
        step = r.busy[first:]
        durations["prefill" if prefill else "decode"].append(step[-1][1] - step[0][0])
    decode_mean = sum(durations["decode"]) / len(durations["decode"])
    delay = sum(d - decode_mean for d in durations["prefill"])
    job.expected = {"primary": "prefill_interference", "stake": delay / span_of(r),
                    "why": "prefill steps' excess over the mean decode step / span"}
    return job


SCENARIOS = {
    "healthy": sc_healthy,
    "kernel_bound": sc_kernel_bound,
    "launch_overhead": sc_launch_overhead,
    "batching": sc_batching,
    "communication": sc_communication,
    "host_sync": sc_host_sync,
    "memory_transfer": sc_memory_transfer,
    "allocation_stalls": sc_allocation_stalls,
    "prefill_interference": sc_prefill_interference,
    "launch_bound_tiny": sc_launch_bound_tiny,
    "allocation_serving": sc_allocation_serving,
    "straggler_tp": sc_straggler_tp,
    "healthy_graph_gemm": sc_healthy_graph_gemm,
    "prefill_graph": sc_prefill_graph,
}


def pair(kind, seed, k):
    """Baseline and candidate of the healthy workload; regression: attention +30%."""
    out = []
    for side, s in (("baseline", seed), ("candidate", seed + 1)):
        job = Job(1, s, H100, step_jitter=0.02)
        if kind == "regression" and side == "candidate":
            job.scale["attention"] = 1.30
        serve_decode(job, steps(60, k), batch=96, ctx=250, host_prep_of_gpu=0.95)
        out.append((side, job))
    return out


def write(doc, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = json.dumps(doc, separators=(",", ":")).encode()
    with open(path, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) as gz:
            gz.write(data)


def summary(job):
    r = job.ranks[0]
    busy = sum(e["dur"] for e in r.gpu if e["cat"] in ("kernel", "gpu_memcpy"))
    lo = min(e["ts"] for e in r.gpu)
    hi = max(e["ts"] + e["dur"] for e in r.gpu)
    return "%d kernels, GPU span %.0f ms, busy %.1f%%" % (
        sum(1 for e in r.gpu if e["cat"] == "kernel"), (hi - lo) / 1e3, 100 * busy / (hi - lo))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", help="output directory")
    p.add_argument("--scenario", action="append",
                   help="scenario to write (repeatable; default all; 'none' for pairs only)")
    p.add_argument("--pair", action="append", choices=("regression", "noise"),
                   help="diff pair to write (repeatable; default both when no --scenario)")
    p.add_argument("--seed", type=int, default=5, help="RNG seed (default 5)")
    p.add_argument("--steps-scale", type=float, default=1.0,
                   help="multiply every scenario's step count (default 1.0)")
    p.add_argument("--list", action="store_true", help="list scenarios and pairs, then exit")
    p.add_argument("--quiet", action="store_true", help="no per-file summary")
    p.add_argument("--step-names", choices=("profiler", "trtllm"), default="profiler",
                   help="how steps are named: ProfilerStep#N (default) or as TensorRT-LLM's "
                        "executor names its iterations (prefill_interference)")
    a = p.parse_args()
    if a.list:
        print("\n".join(list(SCENARIOS) + ["pair:regression", "pair:noise"]))
        return 0
    if not a.out:
        p.error("--out is required")
    if not 0.1 <= a.steps_scale <= 20:
        p.error("--steps-scale must be in [0.1, 20]")
    names = a.scenario or list(SCENARIOS)
    names = [n for n in names if n != "none"]
    for n in names:
        if n not in SCENARIOS:
            p.error("unknown scenario %r (--list shows them)" % n)
    pairs = a.pair if a.pair is not None else ([] if a.scenario else ["regression", "noise"])
    expected = {}
    for n in names:
        Job.step_names = a.step_names  # read by every Job the scenario builds
        job = SCENARIOS[n](a.seed, a.steps_scale)
        if getattr(job, "expected", None):
            expected[n] = {key: round(v, 4) if isinstance(v, float) else v
                           for key, v in job.expected.items()}
        for r in job.ranks:
            if len(job.ranks) > 1:
                path = os.path.join(a.out, n, "rank%d.json.gz" % r.rank)
            else:
                path = os.path.join(a.out, n + ".json.gz")
            write(job.trace(r, "%s_rank%d.json" % (n, r.rank)), path)
        if not a.quiet:
            print("%-22s %s" % (n, summary(job)))
    if expected:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "expected.json"), "w") as f:
            json.dump(expected, f, indent=1, sort_keys=True)
            f.write("\n")
    for kind in pairs:
        for side, job in pair(kind, a.seed, a.steps_scale):
            write(job.trace(job.ranks[0], "%s_%s.json" % (kind, side)),
                  os.path.join(a.out, "pairs", kind, side + ".json.gz"))
            if not a.quiet:
                print("%-22s %s" % ("pair %s/%s" % (kind, side), summary(job)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
