#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""Every generated scenario trace gets its own primary verdict, with sensible evidence.

Generates all scenarios and diff pairs with tools/make_scenario_traces.py into a temporary
directory (twice, to check the generator is byte-for-byte deterministic), runs
`inferscope analyze --format json` on each scenario and checks `diagnosis.primary` and the
evidence of the primary finding (the keys and bounds are in EXPECT below), then runs
`inferscope diff` on the pairs: the injected 30% attention regression must be found (exit 1,
attention among the regressions) and pure noise must not (exit 0).

Usage: scenario_verdicts.py --inferscope PATH [--keep DIR]
Exit status: 0 all checks pass, 1 a check failed (each failure is printed).
"""

import argparse
import filecmp
import json
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GENERATOR = os.path.join(REPO, "tools", "make_scenario_traces.py")

# scenario -> (evidence bounds of the primary finding, words its summary must contain).
# Bounds: name -> (min, max); None leaves that side open.
EXPECT = {
    "healthy": ({"busy_pct": (80, None)}, []),
    "kernel_bound": ({"busy_pct": (90, None), "kernel_pct": (60, None)},
                     ["flash_fwd_splitkv"]),
    "launch_overhead": ({"busy_pct": (None, 30), "short_kernel_pct": (50, None),
                         "host_wait_idle_pct": (50, None), "host_wait_gap_mean_us": (30, 300),
                         "graph_launches": (0, 0)}, []),
    "batching": ({"busy_pct": (None, 40), "long_gap_idle_pct": (50, None),
                  "host_wait_gap_mean_ms": (5, None)}, []),
    "communication": ({"exposed_communication_pct": (25, None),
                       "comm_compute_overlap_pct": (None, 1), "communication_kernel_pct": (30, None)},
                      ["all_reduce"]),
    "host_sync": ({"sync_wait_pct": (40, None), "device_sync_wait_ms": (100, None),
                   "idle_pct": (15, None)}, ["device"]),
    "memory_transfer": ({"host_copy_pct": (20, None), "pageable_copies": (50, None),
                         "host_copy_gb": (2, None)}, ["dtoh", "pageable"]),
    "allocation_stalls": ({"slow_alloc_calls": (10, None), "slow_alloc_pct": (10, None),
                           "alloc_max_ms": (1, None)}, []),
    "prefill_interference": ({"prefill_attention_pct": (25, None),
                              "decode_attention_pct": (2, None)}, []),
    # The newer scenarios name their intended primary and the stake the simulation puts at
    # risk in expected.json (written by the generator from its own ground truth); the evidence
    # bounds here are what the trace must show for that verdict.
    "launch_bound_tiny": ({"busy_pct": (None, 40), "short_kernel_pct": (90, None),
                           "launch_idle_pct": (30, None), "graph_launches": (0, 0),
                           "launch_delay_mean_us": (None, 10)}, []),
    "allocation_serving": ({"alloc_idle_pct": (20, None), "slow_alloc_calls": (5, None),
                            "alloc_max_ms": (1.5, None)}, []),
    "straggler_tp": ({"exposed_communication_pct": (30, None), "straggler_rank": (3, 3),
                      "comm_compute_overlap_pct": (None, 1)}, ["rank 3", "all_reduce"]),
    "healthy_graph_gemm": ({"busy_pct": (80, None)}, ["matmul"]),
    "prefill_graph": ({"prefill_steps": (3, None), "decode_step_mean_ms": (1, None)}, []),
}
# Points (of the share of time) a stake may differ from the simulation's ground truth.
STAKE_TOLERANCE = 0.03


class Checker:
    def __init__(self):
        self.failures = []

    def check(self, ok, what):
        print("  %s %s" % ("ok  " if ok else "FAIL", what))
        if not ok:
            self.failures.append(what)


def generate(out):
    subprocess.run([sys.executable, GENERATOR, "--out", out, "--quiet"], check=True)


def analyze(inferscope, path):
    res = subprocess.run([inferscope, "analyze", "--format", "json", path], capture_output=True,
                         text=True)
    if res.returncode != 0:
        raise RuntimeError("analyze %s failed (%d): %s" % (path, res.returncode, res.stderr))
    return json.loads(res.stdout)


def check_scenario(c, inferscope, root, name, expected):
    path = os.path.join(root, name)
    path = path if os.path.isdir(path) else path + ".json.gz"
    report = analyze(inferscope, path)
    diag = report.get("diagnosis")
    print("%s: primary %s; findings %s" % (
        name, diag and diag.get("primary"),
        diag and [(f["id"], round(f["score"], 3)) for f in diag["findings"]]))
    c.check(diag is not None, "%s: report has a diagnosis" % name)
    if not diag:
        return
    want = expected.get(name, {}).get("primary", name)
    c.check(diag["primary"] == want, "%s: primary verdict is %s (got %s)" %
            (name, want, diag["primary"]))
    first = diag["findings"][0]
    c.check(first["id"] == diag["primary"], "%s: the first finding is the primary" % name)
    if first["id"] != want:
        return
    truth = expected.get(name)
    if truth and want != "healthy":
        c.check(abs(first["score"] - truth["stake"]) <= STAKE_TOLERANCE,
                "%s: stake %.3f within %.2f of the simulated %.3f (%s)" %
                (name, first["score"], STAKE_TOLERANCE, truth["stake"], truth["why"]))
    if truth and "rank" in truth:
        c.check(first["rank"] == truth["rank"], "%s: the finding names rank %d (got %s)" %
                (name, truth["rank"], first["rank"]))
    if truth and "wait" in truth:
        # Compute excess bounds the waiting a balanced rank removes from above (balancing also
        # uncovers the jitter waiting the straggler hid); it must not be far off.
        ev = {e["name"]: e["value"] for e in first["evidence"]}
        got = ev.get("straggler_wait_pct", -1) / 100
        c.check(truth["wait"] - STAKE_TOLERANCE <= got <= truth["wait"] + STAKE_TOLERANCE,
                "%s: straggler waiting %.3f within %.2f of the simulated %.3f" %
                (name, got, STAKE_TOLERANCE, truth["wait"]))
    # Findings are ordered by severity, then stake: a critical one never follows a warning.
    order = {"critical": 0, "warning": 1, "info": 2}
    sev = [order[f["severity"]] for f in diag["findings"]]
    c.check(sev == sorted(sev), "%s: severities are in order %s" % (name, sev))
    evidence = {e["name"]: e["value"] for e in first["evidence"]}
    bounds, words = EXPECT[name]
    for key, (lo, hi) in bounds.items():
        v = evidence.get(key)
        ok = v is not None and (lo is None or v >= lo) and (hi is None or v <= hi)
        c.check(ok, "%s: evidence %s = %s within [%s, %s]" % (name, key, v, lo, hi))
    for w in words:
        c.check(w in first["summary"], "%s: summary %r names %r" % (name, first["summary"], w))
    c.check(first["severity"] in ("critical", "warning", "info") and 0 < first["confidence"] <= 1,
            "%s: severity %s, confidence %s" % (name, first["severity"], first["confidence"]))
    if want != "healthy":
        c.check(len(first["fixes"]) > 0, "%s: the finding lists fixes" % name)
    if name == "communication":
        c.check(len(report["ranks"]) == 2, "communication: two ranks read")
    if name == "straggler_tp":
        c.check(len(report["ranks"]) == 4, "straggler_tp: four ranks read")
    if want == "healthy":
        c.check(len(diag["findings"]) == 1, "%s: healthy stands alone" % name)


def check_pair(c, inferscope, root, kind):
    base = os.path.join(root, "pairs", kind, "baseline.json.gz")
    cand = os.path.join(root, "pairs", kind, "candidate.json.gz")
    res = subprocess.run([inferscope, "diff", "--format", "json", base, cand],
                         capture_output=True, text=True)
    want = 1 if kind == "regression" else 0
    c.check(res.returncode == want, "diff %s: exit %d (want %d)%s" %
            (kind, res.returncode, want, "" if res.returncode in (0, 1) else ": " + res.stderr))
    if res.returncode not in (0, 1):
        return
    try:
        doc = json.loads(res.stdout)
    except ValueError:
        c.check(False, "diff %s: JSON output parses" % kind)
        return
    text = json.dumps(doc)
    if kind == "regression":
        c.check("attention" in text, "diff regression: attention is named")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--inferscope", required=True)
    p.add_argument("--keep", help="generate into this directory and keep it")
    a = p.parse_args()
    c = Checker()
    with tempfile.TemporaryDirectory(prefix="inferscope-scenarios-") as tmp:
        root = a.keep or os.path.join(tmp, "a")
        generate(root)
        generate(os.path.join(tmp, "b"))
        cmp = filecmp.dircmp(root, os.path.join(tmp, "b"))

        def same(d):
            return (not d.diff_files and not d.left_only and not d.right_only and
                    all(same(s) for s in d.subdirs.values()))
        # dircmp compares by stat signature first; compare contents explicitly.
        files = []
        for dirpath, _, names in os.walk(root):
            files += [os.path.relpath(os.path.join(dirpath, n), root) for n in names]
        identical = same(cmp) and all(
            filecmp.cmp(os.path.join(root, f), os.path.join(tmp, "b", f), shallow=False)
            for f in files)
        c.check(identical and len(files) == 23,
                "generator is deterministic (%d files, identical on a second run)" % len(files))
        with open(os.path.join(root, "expected.json")) as f:
            expected = json.load(f)
        for name in EXPECT:
            check_scenario(c, a.inferscope, root, name, expected)
        for kind in ("regression", "noise"):
            check_pair(c, a.inferscope, root, kind)
    if c.failures:
        print("\n%d check(s) failed:" % len(c.failures))
        for f in c.failures:
            print("  " + f)
        return 1
    print("\nall scenario checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
