#!/usr/bin/env python3
"""Generate a synthetic Kineto (torch.profiler) trace of vLLM-style TP serving.

Writes one Chrome-trace JSON per tensor-parallel rank (rank<R>.json.gz) that
mimics what torch.profiler records inside a vLLM worker process on an H100
node: decode steps (plus a few longer prefill steps) of a Llama-style model,
with cuda_runtime / cuda_driver launch events, kernels whose correlation ids
match their launches, HtoD/DtoH memcpys, a cudaStreamSynchronize with its
"cuda_sync" GPU event per step, a few cudaMalloc calls at start, and sparse
cpu_op / python_function events that an importer is expected to skip.

The trace is synthetic: timings come from a simple cost model driven by a
fixed-seed RNG (no wall clock), and gzip is written with mtime=0, so the same
arguments always give byte-identical files. Kernel names are the public names
of vLLM, PyTorch, cuBLAS, FlashAttention and NCCL kernels; everything else is
made up. The ranks are simulated together so the TP all-reduce couples them:
rank 1 is slightly slower, and rank 0's all-reduce kernels absorb the wait.

Usage:
  python3 tools/make_example_trace.py                   # defaults below
  python3 tools/make_example_trace.py --steps 120 --layers 4 --ranks 2 \\
      --out examples/vllm_tp2_decode              # = the checked-in example
Defaults are sized so each file stays under 300 KB compressed; a longer run
such as --steps 300 --layers 8 works too (~1.1 s span, ~1.3 MB per rank).
Options: --steps N (decode+prefill steps), --layers N (transformer layers),
--ranks N (TP world size), --out DIR, --seed N, --flows (add ac2g flow
events; off by default to keep files small).
"""

import argparse
import gzip
import json
import os
import random
import sys

# ---- Kernel names (public names as they appear in real Kineto traces). ----
K_RMS_NORM = ("void vllm::rms_norm_kernel<c10::BFloat16, 8, 3>(c10::BFloat16*, "
              "c10::BFloat16 const*, long, c10::BFloat16 const*, float, int, int)")
K_FUSED_ADD_RMS = ("void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, "
                   "long, c10::BFloat16*, c10::BFloat16 const*, float, int, int)")
K_NVJET_QKV = "nvjet_tst_128x64_64x8_1x1_v_bz_TNT"
K_NVJET_O = "nvjet_tst_64x8_64x16_4x1_v_bz_splitK_TNT"
K_NVJET_MLP = "nvjet_tst_192x8_64x8_4x1_v_bz_TNT"
K_XMMA = ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_"
          "execute_segment_k_off_kernel__5x_cublas")
K_ROPE = ("void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, "
          "c10::BFloat16*, c10::BFloat16 const*, int, long, long, long, int, int, int)")
K_CACHE = ("void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, "
           "(vllm::Fp8KVCacheDataType)0>(__nv_bfloat16 const*, __nv_bfloat16 const*, "
           "__nv_bfloat16*, __nv_bfloat16*, long const*, long, long, long, long, int, int, int, "
           "float const*, float const*)")
_FA_TRAITS = ("Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t, "
              "Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >")
K_FA_SPLITKV = ("void flash::flash_fwd_splitkv_kernel<" + _FA_TRAITS +
                ", false, true, false, false, true, true, false, false>(flash::Flash_fwd_params)")
K_FA_COMBINE = ("void flash::flash_fwd_splitkv_combine_kernel<" + _FA_TRAITS +
                ", 4, 1, true>(flash::Flash_fwd_params)")
K_FA_PREFILL = ("void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, "
                "false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, "
                "cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>"
                "(flash::Flash_fwd_params)")
K_SILU = ("void vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel<c10::BFloat16>, "
          "true>(c10::BFloat16*, c10::BFloat16 const*, int)")
K_CUSTOM_AR = ("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 2>(vllm::RankData*, "
               "vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)")
K_NCCL_AR = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
K_NCCL_AG = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
K_MASK = ("void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<long, long, "
          "bool, at::native::(anonymous namespace)::CompareGEFunctor<long> >, std::array<char*, "
          "3ul> >(int, at::native::BinaryFunctor<long, long, bool, at::native::(anonymous "
          "namespace)::CompareGEFunctor<long> >, std::array<char*, 3ul>)")
K_EMBED = ("void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, "
           "unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned "
           "int>, at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, "
           "at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, "
           "unsigned int, long)")
K_TO_FLOAT = ("void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda("
              "at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::"
              "operator()() const::{lambda(float)#1}, std::array<char*, 2ul>, 4, "
              "TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, "
              "at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, "
              "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::"
              "operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, "
              "std::array<char*, 2ul>, TrivialOffsetCalculator<1, unsigned int>, "
              "TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, "
              "at::native::memory::StoreWithCast<1>)")
K_SOFTMAX = ("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
             "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)")
K_TOPK = ("void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>("
          "at::cuda::detail::TensorInfo<float const, unsigned int>, unsigned int, unsigned int, "
          "bool, unsigned int, unsigned int, at::cuda::detail::TensorInfo<float, unsigned int>, "
          "unsigned int, at::cuda::detail::TensorInfo<long, unsigned int>, unsigned int)")
K_ARGMAX = ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
            "at::native::ArgMaxOps<float>, unsigned int, long, 4> >(at::native::ReduceOp<float, "
            "at::native::ArgMaxOps<float>, unsigned int, long, 4>)")

# Launch APIs: (category, name, cbid) as CUPTI reports them.
RT_LAUNCH = ("cuda_runtime", "cudaLaunchKernel", 211)
DRV_LAUNCH_EX = ("cuda_driver", "cuLaunchKernelEx", 652)
RT_MEMCPY = ("cuda_runtime", "cudaMemcpyAsync", 41)
RT_SYNC = ("cuda_runtime", "cudaStreamSynchronize", 131)
RT_MALLOC = ("cuda_runtime", "cudaMalloc", 20)

BASE_NS = 7_214_530_000_000  # steady-clock origin of the fake capture (~2 h uptime)
STREAM = 7
HOST_PID0 = 48213
GPU_SLOWDOWN = (1.0, 1.045)  # per-rank GPU speed factor (rank 1 slightly slower)
HOST_SLOWDOWN = (1.0, 1.01)


def q32(ns):
    """GPU timestamps/durations in real traces are multiples of 32 ns."""
    return max(32, int(ns) // 32 * 32)


class Op:
    """One GPU operation of a step plan: a kernel, a memcpy or a collective."""

    def __init__(self, kind, name, dur_us, grid=(1, 1, 1), block=(128, 1, 1), api=RT_LAUNCH,
                 cpu_op=None, nbytes=0, collective=False):
        self.kind, self.name, self.dur_us = kind, name, dur_us
        self.grid, self.block, self.api = grid, block, api
        self.cpu_op, self.nbytes, self.collective = cpu_op, nbytes, collective


def step_plan(rng, layers, prefill, batch, ctx, ranks):
    """Returns the ordered GPU ops of one model step (timings in us at rank-0 speed)."""
    j = lambda x, s=0.06: x * rng.uniform(1 - s, 1 + s)
    ops = []
    tokens = rng.randint(2048, 4096) if prefill else batch
    ops.append(Op("memcpy", "Memcpy HtoD (Pinned -> Device)", j(1.6), nbytes=tokens * 4,
                  cpu_op="aten::copy_"))
    ops.append(Op("memcpy", "Memcpy HtoD (Pinned -> Device)", j(1.5), nbytes=tokens * 8))
    ops.append(Op("memcpy", "Memcpy HtoD (Pinned -> Device)", j(1.5), nbytes=tokens * 8))
    ops.append(Op("memcpy", "Memcpy HtoD (Pinned -> Device)", j(2.4),
                  nbytes=batch * 512 * 4 if not prefill else 16 * 512 * 4))
    # Vocab-parallel embedding: mask, gather, all-reduce.
    ops.append(Op("kernel", K_MASK, j(2.6), grid=(max(1, tokens // 512), 1, 1)))
    ops.append(Op("kernel", K_EMBED, j(3.5 + tokens * 0.004), grid=(max(1, tokens // 4), 1, 1)))
    big = prefill
    ar_name, ar_api = (K_NCCL_AR, DRV_LAUNCH_EX) if big else (K_CUSTOM_AR, RT_LAUNCH)

    def allreduce():
        dur = j(140 + tokens * 0.02) if big else j(7.5 + batch * 0.02, 0.1)
        grid = (24, 1, 1) if big else (36, 1, 1)
        block = (544, 1, 1) if big else (512, 1, 1)
        return Op("kernel", ar_name, dur, grid=grid, block=block, api=ar_api, collective=True)

    ops.append(allreduce())
    for layer in range(layers):
        norm = K_RMS_NORM if layer == 0 else K_FUSED_ADD_RMS
        ops.append(Op("kernel", norm, j(2.9 + tokens * 0.003), grid=(tokens, 1, 1),
                      block=(512, 1, 1)))
        if prefill:
            t = tokens / 1000.0
            ops.append(Op("kernel", K_XMMA, j(38 * t), grid=(24, 24, 1), block=(384, 1, 1),
                          cpu_op="aten::mm" if layer == 0 else None))
            ops.append(Op("kernel", K_ROPE, j(6 * t), grid=(tokens, 1, 1), block=(256, 1, 1)))
            ops.append(Op("kernel", K_CACHE, j(5 * t), grid=(tokens, 1, 1), block=(512, 1, 1)))
            ops.append(Op("kernel", K_FA_PREFILL, j(55 * t * t + 20), grid=(tokens // 128, 16, 1),
                          block=(128, 1, 1), cpu_op="vllm::unified_attention_with_output"
                          if layer == 0 else None))
            ops.append(Op("kernel", K_XMMA, j(26 * t), grid=(16, 24, 1), block=(384, 1, 1)))
            ops.append(allreduce())
            ops.append(Op("kernel", K_FUSED_ADD_RMS, j(3 * t + 3), grid=(tokens, 1, 1),
                          block=(512, 1, 1)))
            ops.append(Op("kernel", K_XMMA, j(175 * t), grid=(56, 24, 1), block=(384, 1, 1)))
            ops.append(Op("kernel", K_SILU, j(14 * t), grid=(tokens, 1, 1), block=(1024, 1, 1)))
            ops.append(Op("kernel", K_XMMA, j(88 * t), grid=(16, 24, 1), block=(384, 1, 1)))
        else:
            ops.append(Op("kernel", K_NVJET_QKV, j(11.5 + batch * 0.02), grid=(48, 1, 1),
                          block=(384, 1, 1), api=DRV_LAUNCH_EX,
                          cpu_op="aten::mm" if layer == 0 else None))
            ops.append(Op("kernel", K_ROPE, j(3.2), grid=(batch, 1, 1), block=(256, 1, 1)))
            ops.append(Op("kernel", K_CACHE, j(3.0), grid=(batch, 1, 1), block=(512, 1, 1)))
            ops.append(Op("kernel", K_FA_SPLITKV, j(9 + batch * ctx * 0.00016, 0.08),
                          grid=(1, batch, 16), block=(128, 1, 1),
                          cpu_op="vllm::unified_attention_with_output" if layer == 0 else None))
            ops.append(Op("kernel", K_FA_COMBINE, j(3.4), grid=(batch * 16 // 4 or 1, 1, 1),
                          block=(128, 1, 1)))
            ops.append(Op("kernel", K_NVJET_O, j(7.5), grid=(64, 1, 4), block=(128, 1, 1),
                          api=DRV_LAUNCH_EX))
            ops.append(allreduce())
            ops.append(Op("kernel", K_FUSED_ADD_RMS, j(3.1), grid=(batch, 1, 1),
                          block=(512, 1, 1)))
            ops.append(Op("kernel", K_NVJET_MLP, j(41 + batch * 0.05), grid=(112, 1, 1),
                          block=(384, 1, 1), api=DRV_LAUNCH_EX))
            ops.append(Op("kernel", K_SILU, j(3.6), grid=(batch, 1, 1), block=(1024, 1, 1)))
            ops.append(Op("kernel", K_NVJET_MLP, j(22 + batch * 0.03), grid=(64, 1, 1),
                          block=(384, 1, 1), api=DRV_LAUNCH_EX))
        ops.append(allreduce())
    ops.append(Op("kernel", K_FUSED_ADD_RMS, j(3.0), grid=(batch, 1, 1), block=(512, 1, 1)))
    # lm_head on the last token of each sequence, then gather the vocab shards.
    ops.append(Op("kernel", K_NVJET_MLP, j(168 + batch * 0.2), grid=(132, 1, 1),
                  block=(384, 1, 1), api=DRV_LAUNCH_EX, cpu_op="aten::mm"))
    ops.append(Op("kernel", K_NCCL_AG, j(14 + batch * 0.15), grid=(ranks, 1, 1),
                  block=(512, 1, 1), api=DRV_LAUNCH_EX, collective=True))
    ops.append(Op("kernel", K_TO_FLOAT, j(9 + batch * 0.12), grid=(batch * 64, 1, 1)))
    ops.append(Op("kernel", K_SOFTMAX, j(11 + batch * 0.1), grid=(batch, 1, 1),
                  block=(1024, 1, 1), cpu_op="aten::softmax"))
    ops.append(Op("kernel", K_TOPK, j(13 + batch * 0.08), grid=(batch, 1, 1), block=(1024, 1, 1),
                  cpu_op="aten::topk"))
    ops.append(Op("kernel", K_ARGMAX, j(5.5), grid=(batch, 1, 1), block=(32, 16, 1),
                  cpu_op="aten::argmax"))
    ops.append(Op("memcpy", "Memcpy DtoH (Device -> Pageable)", j(2.1), nbytes=batch * 8,
                  cpu_op="aten::copy_"))
    return ops


class Rank:
    """Per-rank simulation state and the events recorded so far."""

    def __init__(self, rank, seed):
        self.rank = rank
        self.rng = random.Random(seed * 1000 + rank)
        self.pid = HOST_PID0 + rank * 7
        self.host = []  # host-side events
        self.gpu = []  # device-side events
        self.flows = []
        self.corr = 0
        self.ext = 0
        self.python_id = 100
        self.t_host = 0  # ns since BASE_NS
        self.t_gpu = 0  # ns: when stream 7 becomes free

    def us(self, ns):
        return (BASE_NS + ns) / 1000.0

    def next_corr(self):
        self.corr += 1
        return self.corr

    def x(self, cat, name, start_ns, dur_ns, args, gpu=False):
        ev = {"ph": "X", "cat": cat, "name": name,
              "pid": self.rank if gpu else self.pid, "tid": STREAM if gpu else self.pid,
              "ts": self.us(start_ns), "dur": max(1, int(dur_ns)) / 1000.0, "args": args}
        (self.gpu if gpu else self.host).append(ev)
        return ev

    def runtime(self, api, start_ns, dur_ns, corr, ext=None):
        args = {"cbid": api[2], "correlation": corr}
        if ext is not None:
            args = {"External id": ext, **args}
        self.x(api[0], api[1], start_ns, dur_ns, args)

    def python(self, name, start_ns, dur_ns):
        self.python_id += 1
        self.x("python_function", name, start_ns, dur_ns,
               {"Python parent id": self.python_id - 1, "Python id": self.python_id})


def simulate(args):
    ranks = [Rank(r, args.seed) for r in range(args.ranks)]
    plan_rng = random.Random(args.seed)
    # Startup: a few cudaMalloc calls, one slow (caching allocator growing its pool).
    for r in ranks:
        r.t_host = r.rng.randint(40_000, 60_000)
        for i, size_us in enumerate((85, 2350 + 120 * r.rank, 42, 160)):
            dur = int(size_us * 1000 * r.rng.uniform(0.95, 1.05))
            r.runtime(RT_MALLOC, r.t_host, dur, r.next_corr())
            r.t_host += dur + r.rng.randint(15_000, 40_000)
        r.t_gpu = r.t_host
    n_prefill = max(1, args.steps // 120)
    prefill_steps = set(plan_rng.sample(range(5, max(6, args.steps - 5)), n_prefill)) | {0}
    batch, ctx = 48, 900
    for step in range(args.steps):
        prefill = step in prefill_steps
        if not prefill:
            batch = max(8, min(128, batch + plan_rng.choice((-2, -1, 0, 0, 0, 1, 1, 2))))
            ctx += 1
        plan = step_plan(plan_rng, args.layers, prefill, batch, ctx, args.ranks)
        # Scheduler output reaches all workers at about the same time.
        start = max(r.t_host for r in ranks) + int(plan_rng.uniform(200_000, 1_000_000))
        for r in ranks:
            gap_start = r.t_host
            r.t_host = start + r.rng.randint(0, 15_000)
            r.python("vllm/distributed/device_communicators/shm_broadcast.py(486): dequeue",
                     gap_start + 3_000, r.t_host - gap_start - 6_000)
            r.step_start = r.t_host
            r.t_host += int(r.rng.uniform(120_000, 260_000) * HOST_SLOWDOWN[r.rank % 2])
        pending = []  # ranks' (launch start, corr) for a collective
        for op in plan:
            starts = []
            for r in ranks:
                hs = HOST_SLOWDOWN[r.rank % 2]
                if op.kind == "memcpy":
                    r.t_host += int(r.rng.uniform(6_000, 14_000) * hs)
                else:  # Python + dispatcher work between launches (eager mode).
                    r.t_host += int(r.rng.uniform(9_000, 22_000) * hs)
                ext = None
                if op.cpu_op:
                    r.ext += 1
                    ext = r.ext
                    cpu_start = r.t_host - int(r.rng.uniform(3_000, 6_000))
                corr = r.next_corr()
                api = RT_MEMCPY if op.kind == "memcpy" else op.api
                if op.kind == "memcpy":
                    ldur = int(r.rng.uniform(5_000, 9_000) * hs)
                else:
                    ldur = int(r.rng.uniform(3_900, 6_100) * hs)
                if r.rng.random() < 0.004:  # occasional preemption of the launching thread
                    ldur += r.rng.randint(40_000, 180_000)
                r.runtime(api, r.t_host, ldur, corr, ext)
                launch_end = r.t_host + ldur
                gstart = max(r.t_gpu, r.t_host + int(r.rng.uniform(2_500, 5_000)))
                gstart = q32(gstart) + 32
                r.t_host = launch_end
                if op.cpu_op:
                    r.t_host += int(r.rng.uniform(1_500, 4_000))
                    r.x("cpu_op", op.cpu_op, cpu_start, r.t_host - cpu_start,
                        {"External id": ext, "Record function id": 0, "Ev Idx": ext})
                starts.append((r, gstart, corr, ext))
            sync_end = None
            if op.collective:
                # Collective finishes together on all ranks once the last one arrives.
                sync_end = max(g for _, g, _, _ in starts)
            for r, gstart, corr, ext in starts:
                dur = op.dur_us * 1000 * GPU_SLOWDOWN[r.rank % 2]
                end = q32((sync_end if sync_end is not None else gstart) + dur)
                a = {"External id": ext} if ext is not None else {}
                a.update({"queued": 0, "device": r.rank, "context": 1, "stream": STREAM,
                          "correlation": corr})
                if op.kind == "memcpy":
                    a["bytes"] = op.nbytes
                    a["memory bandwidth (GB/s)"] = round(op.nbytes / (end - gstart), 6)
                    r.x("gpu_memcpy", op.name, gstart, end - gstart, a, gpu=True)
                else:
                    a["grid"] = list(op.grid)
                    a["block"] = list(op.block)
                    r.x("kernel", op.name, gstart, end - gstart, a, gpu=True)
                if args.flows:
                    r.flows.append({"ph": "f", "id": corr, "pid": r.rank, "tid": STREAM,
                                    "ts": r.us(gstart), "cat": "ac2g", "name": "ac2g", "bp": "e"})
                r.t_gpu = end
        for r in ranks:
            # .tolist() on the sampled ids: the host blocks until the stream drains.
            corr = r.next_corr()
            s0 = r.t_host + r.rng.randint(1_000, 3_000)
            wait_start = s0 + r.rng.randint(1_200, 2_000)
            wait_end = max(r.t_gpu + r.rng.randint(500, 1_500), wait_start + 600)
            r.runtime(RT_SYNC, s0, wait_end + r.rng.randint(1_500, 3_000) - s0, corr)
            r.x("cuda_sync", "Stream Sync", wait_start, wait_end - wait_start,
                {"cuda_sync_kind": "Stream Sync", "stream": STREAM, "device": r.rank,
                 "context": 1, "correlation": corr}, gpu=True)
            r.t_host = wait_end + r.rng.randint(1_500, 3_000)
            r.t_host += int(r.rng.uniform(60_000, 160_000))  # detokenize / output bookkeeping
            r.python("vllm/v1/worker/gpu_model_runner.py(1523): execute_model", r.step_start,
                     r.t_host - r.step_start)
    return ranks


def device_properties(n):
    return [{"id": i, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85029158912,
             "computeMajor": 9, "computeMinor": 0, "maxThreadsPerBlock": 1024,
             "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536,
             "regsPerMultiprocessor": 65536, "warpSize": 32, "sharedMemPerBlock": 49152,
             "sharedMemPerMultiprocessor": 233472, "numSms": 132,
             "sharedMemPerBlockOptin": 232448} for i in range(n)]


def build_trace(r, args):
    t0 = r.us(0)
    end_ns = max(r.t_host, r.t_gpu) + 50_000
    meta = [
        {"name": "process_name", "ph": "M", "ts": t0, "pid": r.pid, "tid": 0,
         "args": {"name": "VllmWorker-%d" % r.rank}},
        {"name": "process_labels", "ph": "M", "ts": t0, "pid": r.pid, "tid": 0,
         "args": {"labels": "CPU"}},
        {"name": "thread_name", "ph": "M", "ts": t0, "pid": r.pid, "tid": r.pid,
         "args": {"name": "python3"}},
        {"name": "process_name", "ph": "M", "ts": t0, "pid": r.rank, "tid": 0,
         "args": {"name": "python3"}},
        {"name": "process_labels", "ph": "M", "ts": t0, "pid": r.rank, "tid": 0,
         "args": {"labels": "GPU %d" % r.rank}},
        {"name": "thread_name", "ph": "M", "ts": t0, "pid": r.rank, "tid": STREAM,
         "args": {"name": "stream %d " % STREAM}},
    ]
    flows = []
    if args.flows:
        for e in r.host:
            if e["cat"] in ("cuda_runtime", "cuda_driver") and e["name"] != "cudaMalloc":
                flows.append({"ph": "s", "id": e["args"]["correlation"], "pid": r.pid,
                              "tid": r.pid, "ts": e["ts"], "cat": "ac2g", "name": "ac2g"})
        flows += r.flows
    tail = [
        {"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "pid": "Traces",
         "tid": "Trace PyTorch Profiler", "ts": t0},
        {"ph": "X", "cat": "Trace", "ts": t0, "dur": (end_ns) / 1000.0, "pid": "Spans",
         "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)", "args": {"Op count": 0}},
        {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "",
         "ts": r.us(end_ns)},
    ]
    return {
        "schemaVersion": 1,
        "deviceProperties": device_properties(args.ranks),
        "cupti_version": 24, "cuda_runtime_version": 12080, "cuda_driver_version": 12080,
        "distributedInfo": {"backend": "nccl", "rank": r.rank, "world_size": args.ranks,
                            "pg_count": 2, "nccl_version": "2.26.2"},
        "record_shapes": 0,
        "displayTimeUnit": "ms",
        "traceEvents": meta + r.host + r.gpu + flows + tail,
        "traceName": "vllm_tp%d_decode_rank%d.json" % (args.ranks, r.rank),
    }


def validate(path):
    """Reloads a written file and checks kernel/runtime correlation; returns stats."""
    with gzip.open(path, "rt") as f:
        trace = json.load(f)
    launches = {}
    for e in trace["traceEvents"]:
        if e.get("cat") in ("cuda_runtime", "cuda_driver"):
            launches[e["args"]["correlation"]] = e
    kernels, lo, hi, busy_us, ar_us, ar_n = 0, float("inf"), 0.0, 0.0, 0.0, 0
    for e in trace["traceEvents"]:
        if e.get("ph") != "X" or e.get("cat") == "Trace":
            continue
        lo, hi = min(lo, e["ts"]), max(hi, e["ts"] + e["dur"])
        if e["cat"] in ("kernel", "gpu_memcpy", "cuda_sync"):
            rt = launches.get(e["args"]["correlation"])
            if rt is None:
                sys.exit("%s: %s has no runtime event (correlation %d)" %
                         (path, e["name"][:40], e["args"]["correlation"]))
            if e["cat"] != "cuda_sync" and e["ts"] < rt["ts"]:
                sys.exit("%s: correlation %d starts before its launch" %
                         (path, e["args"]["correlation"]))
            if e["cat"] == "kernel":
                kernels += 1
                busy_us += e["dur"]
                if e["name"] == K_CUSTOM_AR:
                    ar_us, ar_n = ar_us + e["dur"], ar_n + 1
    span_us = hi - lo
    return {"events": len(trace["traceEvents"]), "kernels": kernels, "span_s": span_us / 1e6,
            "busy_pct": 100.0 * busy_us / span_us, "ar_mean_us": ar_us / max(1, ar_n)}


def main():
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=120, help="model steps to simulate (default 120)")
    p.add_argument("--layers", type=int, default=4, help="transformer layers (default 4)")
    p.add_argument("--ranks", type=int, default=2, help="tensor-parallel ranks (default 2)")
    p.add_argument("--out", default="examples/vllm_tp2_decode", help="output directory")
    p.add_argument("--seed", type=int, default=1234, help="RNG seed (default 1234)")
    p.add_argument("--flows", action="store_true", help="also emit ac2g flow events")
    args = p.parse_args()
    if args.steps < 1 or args.layers < 1 or args.ranks < 1:
        p.error("--steps, --layers and --ranks must be positive")
    os.makedirs(args.out, exist_ok=True)
    for r in simulate(args):
        path = os.path.join(args.out, "rank%d.json.gz" % r.rank)
        data = json.dumps(build_trace(r, args), separators=(",", ":")).encode()
        with open(path, "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0,
                               compresslevel=9) as gz:
                gz.write(data)
        st = validate(path)
        print("%s: %d bytes, %d events, %d kernels, span %.3f s, kernel busy %.1f%%, "
              "mean custom all-reduce %.1f us" %
              (path, os.path.getsize(path), st["events"], st["kernels"], st["span_s"],
               st["busy_pct"], st["ar_mean_us"]))


if __name__ == "__main__":
    main()
