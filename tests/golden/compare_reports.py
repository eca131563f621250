#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""Golden test: `inferscope analyze --format json` against tools/reference_analysis.py.

For every trace in the shared trace directory it
  1. runs the reference script live (categories from `inferscope classify -`) and checks its
     category-independent figures against the stored tests/golden/expected/<name>.json, so that the
     C++ code and the reference cannot drift together unnoticed;
  2. runs `inferscope analyze --format json TRACE` and compares every figure both compute, exactly
     for integer nanoseconds and counts (the definitions are the same; see docs/correctness.md).
Exit 0 = all equal, 1 = mismatches (each printed on one line), 77 = skipped (no traces).

Usage: compare_reports.py --inferscope BIN [--traces DIR] [--only SUBSTR] [--update-expected]
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REFERENCE = os.path.join(ROOT, "tools", "reference_analysis.py")
EXPECTED_DIR = os.path.join(HERE, "expected")
SKIP = 77

# Percentages in the C++ report are derived floats; the reference recomputes them from exact ns.
# 0.01 percentage points absorbs rounding to 2 decimals in the report and nothing more.
PCT_TOLERANCE = 0.01

# Figures that do not depend on the taxonomy; these are stored in expected/<name>.json.
STORED_KEYS = ("pid", "device", "rank", "span_ns", "busy_ns", "idle_ns", "first_start_ns",
               "last_end_ns", "kernel_count", "kernel_time_ns", "stream_count",
               "distinct_kernel_names", "memcpy", "memset", "idle_gaps", "sync_source",
               "sync_waits", "stream_wait_event", "sync_waits_api_calls", "sync_waits_records",
               "nonblocking_sync_records", "top_kernels")


def find_traces(directory):
    out = []
    for dirpath, _dirs, files in os.walk(directory):
        for f in files:
            if f.endswith((".json", ".json.gz", ".sqlite")):
                out.append(os.path.join(dirpath, f))
    return sorted(out)


def trace_key(path):
    base = os.path.basename(path)
    for ext in (".json.gz", ".json", ".sqlite"):
        if base.endswith(ext):
            return base[: -len(ext)]
    return base


def stored_view(reference):
    ranks = []
    for r in reference["ranks"]:
        v = {k: r[k] for k in STORED_KEYS if k in r}
        v["top_kernels"] = [{"count": t["count"], "total_ns": t["total_ns"]}
                            for t in r["top_kernels"]]
        ranks.append(v)
    return {"ranks": ranks}


def run_json(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (" ".join(cmd), proc.returncode,
                                                 proc.stderr.strip()[-500:]))
    return json.loads(proc.stdout)


def get(d, *paths):
    """First present value among dotted paths, else None."""
    for p in paths:
        cur = d
        for part in p.split("."):
            if isinstance(cur, dict) and part in cur:
                cur = cur[part]
            else:
                cur = None
                break
        if cur is not None:
            return cur
    return None


class Checker:
    def __init__(self):
        self.problems = []
        self.checked = 0

    def eq(self, where, field, cpp, ref):
        self.checked += 1
        if cpp is None:
            self.problems.append("%s: %s missing in C++ report (reference %r)" % (where, field, ref))
        elif cpp != ref:
            diff = ""
            if isinstance(cpp, int) and isinstance(ref, int):
                diff = " (C++ - reference = %+d)" % (cpp - ref)
            self.problems.append("%s: %s C++ %r != reference %r%s" % (where, field, cpp, ref, diff))

    def near(self, where, field, cpp, ref, tol):
        self.checked += 1
        if cpp is None:
            self.problems.append("%s: %s missing in C++ report (reference %r)" % (where, field, ref))
        elif abs(float(cpp) - ref) > tol:
            self.problems.append("%s: %s C++ %r != reference %.4f (tolerance %g)" % (
                where, field, cpp, ref, tol))


def match_ranks(cpp_ranks, ref_ranks):
    """Pairs (cpp, ref) by pid+device when the report has pids, else rank+device, else order."""
    pairs = []
    if all("pid" in c for c in cpp_ranks):
        idx = {(c["pid"], c.get("device")): c for c in cpp_ranks}
        for r in ref_ranks:
            pairs.append((idx.get((r["pid"], r["device"])), r))
    elif all(r["rank"] >= 0 for r in ref_ranks):
        idx = {(c.get("rank"), c.get("device")): c for c in cpp_ranks}
        for r in ref_ranks:
            pairs.append((idx.get((r["rank"], r["device"])), r))
    else:
        for i, r in enumerate(ref_ranks):
            pairs.append((cpp_ranks[i] if i < len(cpp_ranks) else None, r))
    return pairs


def compare_rank(chk, where, c, r):
    tb = "temporal_breakdown."
    for f in ("span_ns", "busy_ns", "idle_ns"):
        chk.eq(where, f, get(c, tb + f, f), r[f])
    if "compute_ns" in r:
        chk.eq(where, "compute_ns", get(c, tb + "compute_ns", "compute_ns"), r["compute_ns"])
        chk.eq(where, "non_compute_ns", get(c, tb + "non_compute_ns", "non_compute_ns"),
               r["non_compute_ns"])
        chk.eq(where, "communication_ns",
               get(c, "communication_ns", "communication.time_ns", tb + "communication_ns"),
               r["communication_ns"])
        ovl = get(c, "communication_overlap_ns", "communication.overlap_ns")
        if ovl is not None:
            chk.eq(where, "communication_overlap_ns", ovl, r["communication_overlap_ns"])
        pct = get(c, "comm_compute_overlap_pct", "communication.overlap_pct")
        ref_pct = (100.0 * r["communication_overlap_ns"] / r["communication_ns"]
                   if r["communication_ns"] else 0.0)
        chk.near(where, "comm_compute_overlap_pct", pct, ref_pct, PCT_TOLERANCE)
        cats = get(c, "categories") or {}
        if isinstance(cats, list):  # [{name, time_ns, count}] form
            cats = {x.get("name", x.get("category")): x for x in cats}
        for name in sorted(set(cats) | set(r["categories"])):
            cc = cats.get(name) or {}
            rc = r["categories"].get(name, {"time_ns": 0, "count": 0})
            if not cc and not rc["count"]:
                continue
            chk.eq(where, "categories.%s.count" % name, cc.get("count", 0), rc["count"])
            chk.eq(where, "categories.%s.time_ns" % name, cc.get("time_ns", 0), rc["time_ns"])
    kc = get(c, "kernel_count", "kernels.count", tb + "kernel_count")
    if kc is not None:
        chk.eq(where, "kernel_count", kc, r["kernel_count"])

    # Host sync waits per type.
    waits = get(c, "sync_waits", "host_sync_waits") or {}
    for t, rv in r["sync_waits"].items():
        cv = waits.get(t) or {}
        if not cv and not rv["count"]:
            continue
        chk.eq(where, "sync_waits.%s.count" % t, cv.get("count"), rv["count"])
        chk.eq(where, "sync_waits.%s.total_ns" % t, cv.get("total_ns"), rv["total_ns"])

    # Memory transfers: per direction count and bytes (time too when reported).
    mt = get(c, "memory_transfers", "memcpy") or {}
    per_dir = mt.get("memcpy", mt) if isinstance(mt, dict) else mt
    if isinstance(per_dir, list):
        per_dir = {x.get("kind", x.get("direction")): x for x in per_dir}
    for kind in sorted(set(r["memcpy"]) | {k for k in per_dir if isinstance(per_dir.get(k), dict)
                                          and per_dir[k].get("count")}):
        if kind == "memset":
            continue
        cv = per_dir.get(kind) or {}
        rv = r["memcpy"].get(kind, {"count": 0, "bytes": 0, "time_ns": 0})
        chk.eq(where, "memcpy.%s.count" % kind, cv.get("count", 0), rv["count"])
        chk.eq(where, "memcpy.%s.bytes" % kind, cv.get("bytes", 0), rv["bytes"])
        if "time_ns" in cv:
            chk.eq(where, "memcpy.%s.time_ns" % kind, cv["time_ns"], rv["time_ns"])
    ms = ((mt.get("memset") if isinstance(mt, dict) else None) or per_dir.get("memset")
          or get(c, "memset") or {})
    if ms or r["memset"]["count"]:
        chk.eq(where, "memset.count", ms.get("count", 0), r["memset"]["count"])
        chk.eq(where, "memset.bytes", ms.get("bytes", 0), r["memset"]["bytes"])

    # Idle gaps, when the report has them.
    gaps = get(c, "idle_gaps")
    if isinstance(gaps, dict):
        for k, rv in r["idle_gaps"].items():
            cv = gaps.get(k) or {}
            chk.eq(where, "idle_gaps.%s.count" % k, cv.get("count"), rv["count"])
            chk.eq(where, "idle_gaps.%s.total_ns" % k, cv.get("total_ns"), rv["total_ns"])

    # Top kernels: rows whose total is strictly above the last reported one are unambiguous (ties
    # at the cut-off may be broken differently); compare them in order.
    top = get(c, "top_kernels") or []
    top = [t for t in top if not str(t.get("name", "")).startswith("other (")]
    if top:
        k = len(top)
        ref_top = r["top_kernels"][:k]
        cutoff = ref_top[-1]["total_ns"] if ref_top else 0
        for i, rt in enumerate(ref_top):
            if rt["total_ns"] <= cutoff and i > 0:
                break
            ct = top[i]
            chk.eq(where, "top_kernels[%d].total_ns" % i, ct.get("total_ns"), rt["total_ns"])
            chk.eq(where, "top_kernels[%d].count" % i, ct.get("count"), rt["count"])
            if ct.get("name") != rt["name"] and ct.get("total_ns") == rt["total_ns"]:
                # Reports may demangle; only flag when neither name contains the other.
                a, b = str(ct.get("name")), rt["name"]
                if a not in b and b not in a:
                    chk.eq(where, "top_kernels[%d].name" % i, a[:120], b[:120])
            if "category" in rt and ct.get("category") is not None:
                chk.eq(where, "top_kernels[%d].category" % i, ct.get("category"), rt["category"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--inferscope", required=True)
    ap.add_argument("--traces", default=None)
    ap.add_argument("--only", default=None, help="only traces whose path contains this")
    ap.add_argument("--update-expected", action="store_true",
                    help="rewrite expected/<name>.json from the live reference run")
    args = ap.parse_args()

    traces_dir = args.traces or os.environ.get("INFERSCOPE_SHARED_TRACES") or os.path.join(
        ROOT, "..", "shared", "traces")
    if not os.path.isdir(traces_dir):
        print("SKIP: shared traces not found at %s (set INFERSCOPE_SHARED_TRACES); the golden "
              "test needs the real GPU traces" % traces_dir)
        return SKIP
    traces = [t for t in find_traces(traces_dir) if not args.only or args.only in t]
    if not traces:
        print("SKIP: no traces in %s" % traces_dir)
        return SKIP

    failures = 0
    total_checked = 0
    for path in traces:
        name = trace_key(path)
        chk = Checker()
        try:
            ref = run_json([sys.executable, REFERENCE, "--inferscope", args.inferscope, path])
        except Exception as e:  # noqa: BLE001 - report and continue with the next trace
            print("FAIL %s: reference: %s" % (name, e))
            failures += 1
            continue
        expected_path = os.path.join(EXPECTED_DIR, name + ".json")
        view = stored_view(ref)
        if args.update_expected:
            with open(expected_path, "w") as f:
                json.dump(view, f, indent=1, sort_keys=True)
                f.write("\n")
        elif not os.path.exists(expected_path):
            chk.problems.append("%s: no stored expected file %s" % (name, expected_path))
        else:
            with open(expected_path) as f:
                stored = json.load(f)
            if stored != json.loads(json.dumps(view)):
                for i, (a, b) in enumerate(zip(stored["ranks"], view["ranks"])):
                    for k in sorted(set(a) | set(b)):
                        if a.get(k) != b.get(k):
                            chk.problems.append("%s rank-entry %d: reference %s drifted from stored "
                                                "expected: stored %s live %s" % (
                                                    name, i, k, json.dumps(a.get(k))[:200],
                                                    json.dumps(b.get(k))[:200]))
                if len(stored["ranks"]) != len(view["ranks"]):
                    chk.problems.append("%s: stored has %d rank entries, live %d" % (
                        name, len(stored["ranks"]), len(view["ranks"])))
        try:
            cpp = run_json([args.inferscope, "analyze", "--format", "json", path])
        except Exception as e:  # noqa: BLE001
            print("FAIL %s: inferscope analyze: %s" % (name, e))
            failures += 1
            continue
        cpp_ranks = get(cpp, "ranks") or []
        if len(cpp_ranks) != len(ref["ranks"]):
            chk.problems.append("%s: C++ report has %d rank entries, reference %d" % (
                name, len(cpp_ranks), len(ref["ranks"])))
        for c, r in match_ranks(cpp_ranks, ref["ranks"]):
            where = "%s rank=%s pid=%s device=%s" % (name, r["rank"], r["pid"], r["device"])
            if c is None:
                chk.problems.append("%s: no matching entry in the C++ report" % where)
                continue
            compare_rank(chk, where, c, r)
        total_checked += chk.checked
        if chk.problems:
            failures += 1
            print("FAIL %s (%d mismatches of %d figures)" % (name, len(chk.problems), chk.checked))
            for p in chk.problems:
                print("  " + p)
        else:
            print("ok   %s (%d figures equal)" % (name, chk.checked))
    print("%d of %d traces differ; %d figures compared" % (failures, len(traces), total_checked))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
