#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""Independent reference figures for one GPU trace (Kineto JSON or Nsight Systems SQLite).

This is the correctness check for the C++ importers and Aggregator: it computes the same figures
from the same definitions (docs/correctness.md) with plain Python and no shared code. Kernel
categories are the one input it takes from the C++ side (`inferscope classify -`), so that a
taxonomy change does not look like an arithmetic bug; with --no-categories it computes only the
category-independent figures.

All times are exact integer nanoseconds. Kineto microsecond timestamps are parsed as decimals and
scaled exactly (fractional `ts` carry nanosecond precision); a value that is not a whole number of
nanoseconds is an error, never rounded silently.

Standard library only.
"""

import argparse
import decimal
import gzip
import json
import re
import sqlite3
import subprocess
import sys
from collections import defaultdict

KERNEL_WAIT_THRESHOLD_NS = 30_000  # gaps shorter than this are "kernel wait" (HTA's default too)
TOP_K = 20
MEMCPY_KINDS = ("unknown", "htod", "dtoh", "dtod", "htoh", "ptop")
SYNC_TYPES = ("device", "stream", "event")

# Blocking host calls -> sync type (Nsight appends _vNNNN to runtime names; stripped first).
SYNC_API = {
    "cudaDeviceSynchronize": "device",
    "cudaThreadSynchronize": "device",
    "cuCtxSynchronize": "device",
    "cudaStreamSynchronize": "stream",
    "cuStreamSynchronize": "stream",
    "cudaEventSynchronize": "event",
    "cuEventSynchronize": "event",
}
# Kineto cuda_sync kinds and Nsight SYNCHRONIZATION syncType values -> sync type.
KINETO_SYNC_KIND = {
    "Device Sync": "device",
    "Context Sync": "device",
    "Stream Sync": "stream",
    "Event Sync": "event",
    "Stream Wait Event": "stream_wait_event",
    "Wait Event": "stream_wait_event",
}
NSYS_SYNC_TYPE = {1: "event", 2: "stream_wait_event", 3: "stream", 4: "device"}
# Nsight copyKind (CUpti_ActivityMemcpyKind): array copies fold into the host/device side they touch.
NSYS_COPY_KIND = {1: "htod", 2: "dtoh", 3: "htod", 4: "dtoh", 5: "dtod", 6: "dtod", 7: "dtod",
                  8: "dtod", 9: "htoh", 10: "ptop"}

_VERSION_SUFFIX = re.compile(r"_v\d+$")


class GpuOp:
    """One GPU activity record: a kernel, memcpy or memset."""

    __slots__ = ("kind", "start", "end", "pid", "device", "stream", "name", "corr", "bytes",
                 "copy_kind")

    def __init__(self, kind, start, end, pid, device, stream, name, corr, nbytes=0, copy_kind=""):
        self.kind = kind  # "kernel" | "memcpy" | "memset"
        self.start = start
        self.end = end
        self.pid = pid
        self.device = device
        self.stream = stream
        self.name = name
        self.corr = corr
        self.bytes = nbytes
        self.copy_kind = copy_kind


class Trace:
    """What the figures need from a trace, in integer nanoseconds."""

    def __init__(self):
        self.ops = []  # GpuOp
        self.api = []  # (start, end, pid, corr, name) for runtime/driver calls
        self.sync_records = []  # (start, end, pid, device, type)
        self.rank_of_pid = {}
        self.rejected = 0  # records with negative duration


# ---------------------------------------------------------------------------------------------
# Kineto


_THOUSAND = decimal.Decimal(1000)


def _us_to_ns(value):
    """Exact us -> ns for an int or Decimal; raises on sub-nanosecond precision."""
    if isinstance(value, int):
        return value * 1000
    ns = value * _THOUSAND
    if ns != ns.to_integral_value():
        raise ValueError("timestamp %s us is not a whole number of ns" % value)
    return int(ns)


def _kineto_memcpy_kind(name):
    m = re.match(r"Memcpy (HtoD|DtoH|DtoD|HtoH|PtoP)", name)
    return m.group(1).lower() if m else "unknown"


def load_kineto(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        doc = json.loads(f.read(), parse_float=decimal.Decimal)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    trace = Trace()
    host_pids = defaultdict(int)
    for e in events:
        if e.get("ph") != "X":
            continue
        cat = e.get("cat")
        if cat in ("kernel", "Kernel"):
            kind = "kernel"
        elif cat in ("gpu_memcpy", "Memcpy"):
            kind = "memcpy"
        elif cat in ("gpu_memset", "Memset"):
            kind = "memset"
        elif cat in ("cuda_runtime", "Runtime", "cuda_driver"):
            kind = "api"
        elif cat == "cuda_sync":
            kind = "sync"
        else:
            continue
        start = _us_to_ns(e["ts"])
        dur = _us_to_ns(e.get("dur", 0))
        if dur < 0:
            trace.rejected += 1
            continue
        args = e.get("args") or {}
        corr = args.get("correlation", 0)
        if kind == "api":
            host_pids[e.get("pid")] += 1
            trace.api.append((start, start + dur, None, corr, e.get("name", "")))
            continue
        device = args.get("device", e.get("pid"))
        stream = args.get("stream", e.get("tid"))
        if kind == "sync":
            stype = KINETO_SYNC_KIND.get(args.get("cuda_sync_kind", e.get("name")), "unknown")
            trace.sync_records.append((start, start + dur, None, device, stype, corr))
            continue
        name = e.get("name", "")
        op = GpuOp(kind, start, start + dur, None, device, stream, name, corr,
                   int(args.get("bytes", 0) or 0),
                   _kineto_memcpy_kind(name) if kind == "memcpy" else "")
        trace.ops.append(op)
    # One process per Kineto file: the host pid that made the runtime calls.
    pid = max(host_pids, key=lambda p: host_pids[p]) if host_pids else 0
    for op in trace.ops:
        op.pid = pid
    trace.api = [(s, e, pid, c, n) for (s, e, _, c, n) in trace.api]
    trace.sync_records = [(s, e, pid, d, t, c) for (s, e, _, d, t, c) in trace.sync_records]
    info = doc.get("distributedInfo") if isinstance(doc, dict) else None
    trace.rank_of_pid[pid] = int(info["rank"]) if info and "rank" in info else -1
    return trace


# ---------------------------------------------------------------------------------------------
# Nsight Systems SQLite export


def _nsys_pid(global_id):
    return (global_id >> 24) & 0xFFFFFF


def load_nsys(path):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    strings = dict(db.execute("SELECT id, value FROM StringIds"))
    trace = Trace()

    def add(kind, rows):
        for row in rows:
            start, end = row[0], row[1]
            if end < start:
                trace.rejected += 1
                continue
            yield row

    if "CUPTI_ACTIVITY_KIND_KERNEL" in tables:
        q = ("SELECT start, end, globalPid, deviceId, streamId, correlationId, demangledName "
             "FROM CUPTI_ACTIVITY_KIND_KERNEL")
        for s, e, gpid, dev, stream, corr, name_id in add("kernel", db.execute(q)):
            trace.ops.append(GpuOp("kernel", s, e, _nsys_pid(gpid), dev, stream,
                                   strings.get(name_id, ""), corr or 0))
    if "CUPTI_ACTIVITY_KIND_MEMCPY" in tables:
        q = ("SELECT start, end, globalPid, deviceId, streamId, correlationId, bytes, copyKind "
             "FROM CUPTI_ACTIVITY_KIND_MEMCPY")
        for s, e, gpid, dev, stream, corr, nbytes, ck in add("memcpy", db.execute(q)):
            trace.ops.append(GpuOp("memcpy", s, e, _nsys_pid(gpid), dev, stream, "memcpy",
                                   corr or 0, nbytes, NSYS_COPY_KIND.get(ck, "unknown")))
    if "CUPTI_ACTIVITY_KIND_MEMSET" in tables:
        q = ("SELECT start, end, globalPid, deviceId, streamId, correlationId, bytes "
             "FROM CUPTI_ACTIVITY_KIND_MEMSET")
        for s, e, gpid, dev, stream, corr, nbytes in add("memset", db.execute(q)):
            trace.ops.append(GpuOp("memset", s, e, _nsys_pid(gpid), dev, stream, "memset",
                                   corr or 0, nbytes))
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
        q = "SELECT start, end, globalTid, correlationId, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME"
        for s, e, gtid, corr, name_id in add("api", db.execute(q)):
            trace.api.append((s, e, _nsys_pid(gtid or 0), corr or 0, strings.get(name_id, "")))
    if "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION" in tables:
        q = ("SELECT start, end, globalPid, deviceId, syncType, correlationId "
             "FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION")
        for s, e, gpid, dev, st, corr in add("sync", db.execute(q)):
            trace.sync_records.append((s, e, _nsys_pid(gpid or 0), dev,
                                       NSYS_SYNC_TYPE.get(st, "unknown"), corr or 0))
    db.close()
    for op in trace.ops:
        trace.rank_of_pid.setdefault(op.pid, -1)  # Nsight exports carry no rank
    return trace


# ---------------------------------------------------------------------------------------------
# Interval arithmetic (sort and merge)


def merge(intervals):
    """Sorted, disjoint, non-touching union of [start, end) intervals."""
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1][1] = e
        else:
            out.append([s, e])
    return out


def total(merged):
    return sum(e - s for s, e in merged)


def intersection_length(a, b):
    """Length of the intersection of two merged interval lists."""
    i = j = 0
    n = 0
    while i < len(a) and j < len(b):
        lo = max(a[i][0], b[j][0])
        hi = min(a[i][1], b[j][1])
        if hi > lo:
            n += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return n


# ---------------------------------------------------------------------------------------------
# Categories from the C++ classifier


def classify(binary, names):
    """name -> (category, subcategory) from `inferscope classify -`."""
    names = sorted(set(names))
    if not names:
        return {}
    for n in names:
        if "\n" in n or "\r" in n:
            raise ValueError("kernel name with a newline cannot be classified line-wise: %r" % n)
    proc = subprocess.run([binary, "classify", "-"], input="\n".join(names) + "\n",
                          capture_output=True, text=True, check=True)
    result = {}
    for line in proc.stdout.splitlines():
        if not line:
            continue
        cat, sub, name = line.split("\t", 2)
        result[name] = (cat, sub)
    missing = [n for n in names if n not in result]
    if missing:
        raise RuntimeError("classify returned no row for %d names, e.g. %r" % (len(missing),
                                                                              missing[0]))
    return result


# ---------------------------------------------------------------------------------------------
# Figures


def _stats(durations):
    return {"count": len(durations), "total_ns": sum(durations)}


def analyze(trace, categories):
    """categories: name -> (category, subcategory), or None for --no-categories."""
    # Launch start per (pid, correlation id). Some exports hold two rows for one call (e.g. an old
    # Nsight schema records `cudaMalloc` and `cudaMalloc_v3020`); the earliest start is the launch.
    launch_start = {}
    for s, _e, pid, corr, _n in trace.api:
        if corr:
            key = (pid, corr)
            if key not in launch_start or s < launch_start[key]:
                launch_start[key] = s

    by_entry = defaultdict(list)
    for op in trace.ops:
        by_entry[(op.pid, op.device)].append(op)
    devices_of_pid = defaultdict(list)
    for pid, dev in sorted(by_entry):
        devices_of_pid[pid].append(dev)

    # Host sync waits from blocking API calls, one per (pid, correlation id), attributed to the
    # process's lowest device (the API call does not say which device a wait was for).
    api_sync = defaultdict(lambda: defaultdict(list))
    seen_calls = set()
    for s, e, pid, corr, name in sorted(trace.api):
        stype = SYNC_API.get(_VERSION_SUFFIX.sub("", name))
        if stype is None or pid not in devices_of_pid:
            continue
        if corr and (pid, corr) in seen_calls:
            continue
        seen_calls.add((pid, corr))
        api_sync[(pid, devices_of_pid[pid][0])][stype].append(e - s)
    # CUPTI sync records. Their type and device fields are not trustworthy on their own: Nsight
    # 2024.5 labels cudaDeviceSynchronize waits EVENT_SYNCHRONIZE, cudaEventQuery polls produce
    # EVENT_SYNCHRONIZE records although nothing blocks, and a process whose GPU is device 1 gets
    # records on device 0. So a record takes its type from the API call it correlates with when
    # that call is a known blocking one, records of other (non-blocking) calls are not waits, and
    # a record lands on its process's device (the record's own when the process uses it, else the
    # process's lowest device).
    api_name = {}
    for _s, _e, pid, corr, name in trace.api:
        if corr:
            api_name.setdefault((pid, corr), _VERSION_SUFFIX.sub("", name))
    rec_sync = defaultdict(lambda: defaultdict(list))
    nonblocking = defaultdict(int)
    pids_with_records = set()
    for s, e, pid, dev, stype, corr in trace.sync_records:
        if pid not in devices_of_pid:
            continue
        pids_with_records.add(pid)
        if dev not in devices_of_pid[pid]:
            dev = devices_of_pid[pid][0]
        name = api_name.get((pid, corr)) if corr else None
        if name in ("cudaStreamWaitEvent", "cuStreamWaitEvent"):
            stype = "stream_wait_event"
        elif name is not None:
            if name not in SYNC_API:
                nonblocking[(pid, dev)] += 1
                continue
            stype = SYNC_API[name]
        rec_sync[(pid, dev)][stype].append(e - s)

    ranks = []
    for (pid, dev), ops in sorted(by_entry.items(), key=lambda kv: (trace.rank_of_pid.get(
            kv[0][0], -1), kv[0][0], kv[0][1])):
        kernels = [o for o in ops if o.kind == "kernel"]
        all_iv = merge((o.start, o.end) for o in ops)
        first = min(o.start for o in ops)
        last = max(o.end for o in ops)
        span = last - first
        busy = total(all_iv)
        r = {
            "pid": pid,
            "device": dev,
            "rank": trace.rank_of_pid.get(pid, -1),
            "span_ns": span,
            "busy_ns": busy,
            "idle_ns": span - busy,
            "first_start_ns": first,
            "last_end_ns": last,
            "kernel_count": len(kernels),
            "kernel_time_ns": sum(k.end - k.start for k in kernels),
        }

        # Memory transfers per direction, memsets.
        mem = {k: {"count": 0, "bytes": 0, "time_ns": 0} for k in MEMCPY_KINDS}
        mset = {"count": 0, "bytes": 0, "time_ns": 0}
        for o in ops:
            if o.kind == "memcpy":
                d = mem[o.copy_kind]
            elif o.kind == "memset":
                d = mset
            else:
                continue
            d["count"] += 1
            d["bytes"] += o.bytes
            d["time_ns"] += o.end - o.start
        r["memcpy"] = {k: v for k, v in mem.items() if v["count"]}
        r["memset"] = mset

        # Idle gaps per stream.
        gaps = {"host_wait": [], "kernel_wait": [], "other": []}
        per_stream = defaultdict(list)
        for o in ops:
            per_stream[o.stream].append(o)
        for stream_ops in per_stream.values():
            stream_ops.sort(key=lambda o: (o.start, o.end))
            for prev, nxt in zip(stream_ops, stream_ops[1:]):
                gap = nxt.start - prev.end
                if gap <= 0:
                    continue
                if gap < KERNEL_WAIT_THRESHOLD_NS:
                    gaps["kernel_wait"].append(gap)
                else:
                    launched = launch_start.get((pid, nxt.corr)) if nxt.corr else None
                    if launched is not None and launched >= prev.end:
                        gaps["host_wait"].append(gap)
                    else:
                        gaps["other"].append(gap)
        r["idle_gaps"] = {k: _stats(v) for k, v in gaps.items()}
        r["stream_count"] = len(per_stream)

        # Host sync waits: CUPTI sync records when the process has any (Kineto cuda_sync, Nsight
        # SYNCHRONIZATION), else the blocking API calls, so a wait is never counted twice.
        rec = rec_sync.get((pid, dev), {})
        api = api_sync.get((pid, dev), {})
        chosen = rec if pid in pids_with_records else api
        r["sync_source"] = "records" if pid in pids_with_records else "api_calls"
        r["sync_waits"] = {t: _stats(chosen.get(t, [])) for t in SYNC_TYPES}
        r["stream_wait_event"] = _stats(rec.get("stream_wait_event", []))
        r["sync_waits_api_calls"] = {t: _stats(api.get(t, [])) for t in SYNC_TYPES}
        r["sync_waits_records"] = {t: _stats(rec.get(t, [])) for t in SYNC_TYPES}
        r["nonblocking_sync_records"] = nonblocking.get((pid, dev), 0)

        # Top kernels by total time (name order breaks ties).
        per_name = defaultdict(lambda: [0, 0])
        for k in kernels:
            per_name[k.name][0] += 1
            per_name[k.name][1] += k.end - k.start
        ordered = sorted(per_name.items(), key=lambda kv: (-kv[1][1], kv[0]))
        r["distinct_kernel_names"] = len(per_name)
        r["top_kernels"] = [{"name": n, "count": c, "total_ns": t}
                            for n, (c, t) in ordered[:TOP_K]]

        if categories is not None:
            cats = defaultdict(lambda: {"time_ns": 0, "count": 0})
            subs = defaultdict(lambda: {"time_ns": 0, "count": 0})
            compute_iv, comm_iv = [], []
            for k in kernels:
                cat, sub = categories[k.name]
                d = k.end - k.start
                cats[cat]["time_ns"] += d
                cats[cat]["count"] += 1
                subs[sub]["time_ns"] += d
                subs[sub]["count"] += 1
                # Compute = every kernel except communication and copy-engine style memory;
                # data-movement kernels on the SMs (memory.kernel.*) are compute (docs/taxonomy.md).
                if cat == "communication":
                    comm_iv.append((k.start, k.end))
                elif cat != "memory" or sub.startswith("memory.kernel"):
                    compute_iv.append((k.start, k.end))
            # Copy-engine activity is the `memory` category (DESIGN.md), sub-category by direction.
            for o in ops:
                if o.kind == "kernel":
                    continue
                sub = ("memory.memset" if o.kind == "memset" else
                       "memory.memcpy" if o.copy_kind == "unknown" else
                       "memory.memcpy_" + o.copy_kind)
                for table, key in ((cats, "memory"), (subs, sub)):
                    table[key]["time_ns"] += o.end - o.start
                    table[key]["count"] += 1
            for t in r["top_kernels"]:
                t["category"] = categories[t["name"]][0]
            compute = merge(compute_iv)
            comm = merge(comm_iv)
            r["compute_ns"] = total(compute)
            r["non_compute_ns"] = busy - r["compute_ns"]
            r["communication_ns"] = total(comm)
            r["communication_overlap_ns"] = intersection_length(comm, compute)
            r["categories"] = dict(sorted(cats.items()))
            r["subcategories"] = dict(sorted(subs.items()))
        ranks.append(r)
    return {"ranks": ranks, "rejected_records": trace.rejected}


def load(path):
    if path.endswith(".sqlite") or path.endswith(".db"):
        return load_nsys(path)
    return load_kineto(path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace", help="Kineto .json/.json.gz or Nsight .sqlite")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--inferscope", metavar="PATH",
                   help="the inferscope binary; kernel categories come from `classify -`")
    g.add_argument("--no-categories", action="store_true",
                   help="only category-independent figures")
    ap.add_argument("--numbers-only", action="store_true",
                    help="omit kernel names (for stored expected files)")
    args = ap.parse_args(argv)
    trace = load(args.trace)
    categories = None
    if args.inferscope:
        categories = classify(args.inferscope, [o.name for o in trace.ops if o.kind == "kernel"])
    result = analyze(trace, categories)
    if args.numbers_only:
        for r in result["ranks"]:
            for t in r["top_kernels"]:
                t.pop("name")
    json.dump(result, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
