#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""What the launching-context rule gives on Kineto traces, independently of the C++ importer.

A port of the tables in src/model/launch_context.cc; the name category comes from
`inferscope classify -`. Usage: tools/measure_launch_context.py INFERSCOPE TRACE.json[.gz]...
Per trace: kernels, kernels the name left other/other, those the context placed, and the share
of kernel time in `other` before and after."""
import gzip, json, sys, subprocess, bisect, re
BIN = sys.argv[1]
OPS = [("aten::mm",0,"matmul"),("aten::addmm",0,"matmul"),("aten::bmm",0,"matmul"),("aten::baddbmm",0,"matmul"),
("aten::matmul",0,"matmul"),("aten::linear",0,"matmul"),("aten::_scaled_mm",0,"matmul"),
("aten::_scaled_dot_product_flash_attention",0,"attention"),("aten::_scaled_dot_product_efficient_attention",0,"attention"),
("aten::_scaled_dot_product_cudnn_attention",0,"attention"),("aten::scaled_dot_product_attention",0,"attention"),
("vllm::unified_attention",1,"attention"),("aten::layer_norm",0,"normalization"),("aten::native_layer_norm",0,"normalization"),
("aten::rms_norm",0,"normalization"),("aten::_fused_rms_norm",0,"normalization"),("_C::rms_norm",0,"normalization"),
("_C::fused_add_rms_norm",0,"normalization"),("aten::softmax",0,"normalization"),("aten::_softmax",0,"normalization"),
("_C::silu_and_mul",0,"activation"),("_C::gelu_and_mul",0,"activation"),("aten::silu",0,"activation"),("aten::gelu",0,"activation"),
("_C::rotary_embedding",0,"positional"),("aten::embedding",0,"embedding"),("aten::index_select",0,"embedding"),
("aten::topk",0,"sampling"),("aten::copy_",0,"memory"),("aten::cat",0,"memory"),("_C_cache_ops::",1,"kv_cache"),("_moe_C::",1,"moe"),
("c10d::allreduce_",0,"communication"),("c10d::allgather_",1,"communication"),("c10d::reduce_scatter_",1,"communication"),
("nccl:all_reduce",0,"communication"),("nccl:all_gather",0,"communication"),("nccl:reduce_scatter",0,"communication")]
RNG = [("rmsnorm","normalization"),("layernorm","normalization"),("rotary","positional"),("moe","moe"),("expert","moe"),
("attention","attention"),("embedding","embedding"),("sampler","sampling"),("mlp","matmul"),("linear","matmul"),("lm_head","matmul")]
def rng(n):
    if len(n) > 512: return None
    l = n.lower()
    for w, c in RNG:
        if w in l: return c
def op(n):
    if len(n) > 512: return None
    for p, pre, c in OPS:
        if (n.startswith(p) if pre else n == p): return c
    if n.startswith("sglang::"): return rng(n[8:])
def innermost(ranges, ts):
    # ranges sorted by start; innermost = latest start that still encloses ts
    best = None
    i = bisect.bisect_right(ranges[0], ts)
    for j in range(i - 1, max(-1, i - 400), -1):
        s, e, n = ranges[1][j]
        if s <= ts <= e: return n
    return best
for path in sys.argv[2:]:
    d = json.load(gzip.open(path) if path.endswith(".gz") else open(path))
    ev = d["traceEvents"] if isinstance(d, dict) else d
    kernels, launch, ops, mods = [], {}, {}, {}
    for e in ev:
        c = e.get("cat"); ph = e.get("ph")
        if ph != "X": continue
        if c == "kernel": kernels.append(e)
        elif c in ("cuda_runtime", "cuda_driver"):
            corr = e.get("args", {}).get("correlation")
            if corr is not None: launch[corr] = (e["pid"], e["tid"], e["ts"])
        elif c == "cpu_op": ops.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e.get("dur", 0), e["name"]))
        elif c in ("python_function", "user_annotation") and (c == "user_annotation" or e["name"].startswith("nn.Module:")):
            mods.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e.get("dur", 0), e["name"]))
    for t in (ops, mods):
        for k, v in t.items():
            v.sort(); t[k] = ([x[0] for x in v], v)
    names = sorted({k["name"] for k in kernels})
    out = subprocess.run([BIN, "classify", "-"], input="\n".join(names) + "\n", capture_output=True, text=True).stdout
    cls = {}
    for line in out.splitlines():
        c, s, n = line.split("\t", 2); cls[n] = (c, s)
    total = other_before = other_after = 0; nctx = 0; ctx_ns = 0; nother = 0
    for k in kernels:
        dur = k.get("dur", 0); total += dur
        c, s = cls.get(k["name"], ("other", "other"))
        if c != "other": continue
        other_before += dur
        if s != "other": other_after += dur; continue
        nother += 1
        got = None
        l = launch.get(k.get("args", {}).get("correlation"))
        if l:
            key = (l[0], l[1])
            if key in ops:
                n = innermost(ops[key], l[2]);
                if n: got = op(n)
            if not got and key in mods:
                n = innermost(mods[key], l[2])
                if n: got = rng(n)
        if got: nctx += 1; ctx_ns += dur
        else: other_after += dur
    pct = lambda x: 100.0 * x / total if total else 0
    print("%s\tkernels=%d\tother/other=%d\tby_context=%d (%.1f us)\tother_before=%.1f%%\tother_after=%.1f%%" % (
        path, len(kernels), nother, nctx, ctx_ns, pct(other_before), pct(other_after)))
