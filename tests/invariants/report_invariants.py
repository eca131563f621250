#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""Report invariants over every trace the project can reach (docs/correctness.md, "Invariants").

Traces: the checked-in example (examples/vllm_tp2_decode, both ranks as one job), a two-stream
trace written here (streams idle at the same moments), the generated traces the other tests use (tools/make_scenario_traces.py: every scenario; tools/make_graph_server_
trace.py; tools/tile_kineto_trace.py over the example's rank 0) and, when present, every real trace
in ../shared/traces (or $INFERSCOPE_SHARED_TRACES; skipped with a message otherwise).

For each, `inferscope analyze --format json`, the text report and `--format csv --table idle_gaps`
must satisfy:
  - every share of a whole lies in [0, 100] (every `pct`/`*_pct` key of the JSON and every
    `%` evidence of a finding, but for spreads between ranks, which are not shares);
  - shares of one whole that partition it sum to 100 +- 0.5: busy + idle, compute + non-compute
    = busy, the idle-gap kinds (of the stream idle), the categories (of the kernel time);
  - busy + idle = span, compute + non-compute = busy, the idle causes sum to the idle time (one
    window; never above it);
  - per-rank figures sum to the job's (span, busy, idle, compute, kernels, kernel time, gaps,
    causes, categories);
  - text, JSON and CSV print the same headline numbers (primary verdict, the findings and their
    stakes, per-rank busy % and idle, the idle-gap shares);
  - a finding's score (its share of time at stake) lies in [0, 1];
  - no verdict without evidence: below the floor (20 kernels, 1 ms of GPU work) the primary is
    insufficient_evidence and nothing is critical; warmup never leads; no FlashAttention 3 fix on
    a kernel_bound finding about another category.

Usage: report_invariants.py --inferscope BIN [--traces DIR] [--no-shared]
Exit: 0 all hold, 1 a violation (each printed), 77 never (the generated traces always run).
"""

import argparse
import concurrent.futures
import csv
import gzip
import io
import json
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.join(REPO, "tools")
EXAMPLE = os.path.join(REPO, "examples", "vllm_tp2_decode")
SUM_TOLERANCE = 0.5  # percentage points: shares are rounded to 4 decimals, sums of 14 at most
# Evidence in % that is not a share of a whole: spreads between ranks ((max - min) / mean) and
# GPU counters the host reports.
NOT_SHARES = ("imbalance",)
CATEGORIES = ("attention", "matmul", "moe", "communication", "kv_cache", "quantization",
              "normalization", "activation", "positional", "sampling", "memory", "elementwise",
              "embedding", "other")


class Checker:
    def __init__(self, name):
        self.name = name
        self.problems = []
        self.checked = 0

    def ok(self, cond, what):
        self.checked += 1
        if not cond:
            self.problems.append("%s: %s" % (self.name, what))

    def near(self, a, b, tol, what):
        self.ok(a is not None and b is not None and abs(a - b) <= tol,
                "%s: %r vs %r (tolerance %g)" % (what, a, b, tol))


def run(cmd, timeout=300):
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if res.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), res.returncode,
                                                   res.stderr.strip()[:300]))
    return res.stdout


# --- the shares --------------------------------------------------------------------------------

def walk_pcts(node, path, out):
    """Every (path, value) whose key is `pct` or ends in `_pct`, in the JSON tree."""
    if isinstance(node, dict):
        for k, v in node.items():
            p = path + "." + k if path else k
            if isinstance(v, (int, float)) and not isinstance(v, bool) and (
                    k == "pct" or k.endswith("_pct")):
                out.append((p, float(v)))
            else:
                walk_pcts(v, p, out)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            walk_pcts(v, "%s[%d]" % (path, i), out)


def check_bounds(c, report):
    pcts = []
    walk_pcts({k: v for k, v in report.items() if k != "diagnosis"}, "", pcts)
    for path, v in pcts:
        if any(n in path for n in NOT_SHARES):
            continue
        c.ok(-1e-9 <= v <= 100 + 1e-9, "%s = %.4f is a share outside [0, 100]" % (path, v))
    for f in (report.get("diagnosis") or {}).get("findings", []):
        c.ok(0 <= f["score"] <= 1, "finding %s score %r outside [0, 1]" % (f["id"], f["score"]))
        for e in f.get("evidence", []):
            if e["unit"] != "%" or any(n in e["name"] for n in NOT_SHARES):
                continue
            c.ok(-1e-9 <= e["value"] <= 100 + 1e-9, "finding %s evidence %s = %.4f%% outside "
                 "[0, 100]" % (f["id"], e["name"], e["value"]))


def check_verdicts(c, report):
    """No verdict without evidence: below the floor (docs/diagnosis.md, 20 kernels and 1 ms of GPU
    work) the primary is insufficient_evidence and nothing is critical; warmup never leads."""
    diag = report.get("diagnosis") or {}
    s = report["summary"]
    below = s["kernel_count"] < 20 or s["temporal_breakdown"]["busy_ns"] < 1_000_000
    findings = diag.get("findings", [])
    if below:
        c.ok(diag.get("primary") == "insufficient_evidence",
             "below the evidence floor (%d kernels, %d ns busy) the primary is %r" % (
                 s["kernel_count"], s["temporal_breakdown"]["busy_ns"], diag.get("primary")))
        c.ok(all(f["severity"] != "critical" for f in findings),
             "a critical finding below the evidence floor")
    else:
        c.ok(diag.get("primary") != "insufficient_evidence",
             "insufficient_evidence above the floor")
    c.ok(diag.get("primary") != "warmup", "warmup is the primary verdict")
    for f in findings:
        if f["id"] != "kernel_bound":
            continue
        if "FlashAttention 2" not in f["summary"] and f["summary"].split(" ")[0] != "attention":
            c.ok(not any("FlashAttention 3" in x for x in f["fixes"]),
                 "kernel_bound on %r offers FlashAttention 3" % f["summary"][:60])


def check_entry(c, where, e):
    """One rank object or the summary: its partitions and sums."""
    t = e["temporal_breakdown"]
    c.ok(t["busy_ns"] + t["idle_ns"] == t["span_ns"], "%s: busy %d + idle %d != span %d" % (
        where, t["busy_ns"], t["idle_ns"], t["span_ns"]))
    c.ok(t["compute_ns"] + t["non_compute_ns"] == t["busy_ns"],
         "%s: compute + non-compute != busy" % where)
    if t["span_ns"] > 0:
        c.near(t["busy_pct"] + t["idle_pct"], 100, SUM_TOLERANCE, "%s: busy %% + idle %%" % where)
        c.near(t["compute_pct"] + t["non_compute_pct"], t["busy_pct"], SUM_TOLERANCE,
               "%s: compute %% + non-compute %% = busy %%" % where)
    gaps = e["idle_gaps"]
    kinds = [gaps[k] for k in ("host_wait", "kernel_wait", "other")]
    stream_idle = gaps.get("stream_idle_ns")
    c.ok(stream_idle == sum(g["total_ns"] for g in kinds),
         "%s: idle_gaps.stream_idle_ns %r is not the kinds' total" % (where, stream_idle))
    if sum(g["total_ns"] for g in kinds) > 0:
        c.near(sum(g["pct"] for g in kinds), 100, SUM_TOLERANCE, "%s: idle-gap shares" % where)
    causes = e["idle_causes"]
    cause_ns = sum(v["total_ns"] for k, v in causes.items() if isinstance(v, dict))
    c.ok(cause_ns <= t["idle_ns"], "%s: idle causes %d exceed the idle time %d" % (
        where, cause_ns, t["idle_ns"]))
    if causes.get("intervals", 0) > 0:
        # One window: every idle interval goes to one cause.
        c.ok(cause_ns == t["idle_ns"], "%s: idle causes sum to %d, idle is %d" % (
            where, cause_ns, t["idle_ns"]))
        c.near(sum(v["pct"] for v in causes.values() if isinstance(v, dict)), 100,
               SUM_TOLERANCE, "%s: idle-cause shares" % where)
    cats = e["categories"]
    c.ok(sum(cats[k]["time_ns"] for k in CATEGORIES) == e["kernel_time_ns"],
         "%s: categories do not sum to kernel_time_ns" % where)
    if e["kernel_time_ns"] > 0:
        c.near(sum(cats[k]["pct"] for k in CATEGORIES), 100, SUM_TOLERANCE,
               "%s: category shares" % where)


def check_job_sums(c, report):
    ranks, s = report["ranks"], report["summary"]
    if not ranks:
        return
    st = s["temporal_breakdown"]
    for key in ("span_ns", "busy_ns", "idle_ns", "compute_ns"):
        c.ok(sum(r["temporal_breakdown"][key] for r in ranks) == st[key],
             "summary %s != the ranks' sum" % key)
    for key in ("kernel_count", "kernel_time_ns"):
        c.ok(sum(r[key] for r in ranks) == s[key], "summary %s != the ranks' sum" % key)
    for kind in ("host_wait", "kernel_wait", "other"):
        for f in ("count", "total_ns"):
            c.ok(sum(r["idle_gaps"][kind][f] for r in ranks) == s["idle_gaps"][kind][f],
                 "summary idle_gaps.%s.%s != the ranks' sum" % (kind, f))
    for cause, v in s["idle_causes"].items():
        if isinstance(v, dict):
            c.ok(sum(r["idle_causes"][cause]["total_ns"] for r in ranks) == v["total_ns"],
                 "summary idle_causes.%s != the ranks' sum" % cause)
    for cat in CATEGORIES:
        c.ok(sum(r["categories"][cat]["time_ns"] for r in ranks) ==
             s["categories"][cat]["time_ns"], "summary categories.%s != the ranks' sum" % cat)


# --- text and CSV against JSON -----------------------------------------------------------------

def text_table(text, title):
    """Rows of the first table under the section `title`, cut into cells by the columns of the
    table's rule line (cells may be empty: the "all" row has no gpu)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip() != title:
            continue
        rules = [j for j in range(i + 2, min(i + 6, len(lines)))
                 if re.fullmatch(r"-+(\s+-+)*", lines[j].strip())]
        if not rules:
            return None
        rule = lines[rules[0]]
        spans = [(m.start(), m.end()) for m in re.finditer(r"-+", rule)]
        rows = []
        for row in lines[rules[0] + 1:]:
            if not row.strip():
                break
            cells = []
            for k, (a, b) in enumerate(spans):
                # Right-aligned cells may start left of their rule; take up to the next column.
                left = spans[k - 1][1] if k else 0
                cells.append(row[left:b].strip())
            rows.append(cells)
        return rows
    return None


def pct_text(v):
    return "%.1f%%" % v


def check_text(c, report, text):
    diag = report.get("diagnosis") or {}
    m = re.search(r"^primary verdict: (\S+)$", text, re.M)
    c.ok(m is not None and m.group(1) == diag.get("primary"),
         "text primary verdict %r, JSON %r" % (m and m.group(1), diag.get("primary")))
    for i, f in enumerate(diag.get("findings", [])):
        no_stake = f["id"] in ("healthy", "insufficient_evidence")
        stake = "" if no_stake else ", %.0f%% of time at stake" % (f["score"] * 100)
        head = "%d. %s (%s, " % (i + 1, f["id"], f["severity"])
        line = next((ln for ln in text.splitlines() if ln.startswith(head)), None)
        c.ok(line is not None, "text has no finding line %r" % head)
        if line is not None:
            c.ok(stake in line, "text finding %s says %r, JSON stake %s" % (
                f["id"], line[:120], stake))
    temporal = text_table(text, "Temporal breakdown")
    gaps = text_table(text, "Idle gaps")
    c.ok(temporal is not None and gaps is not None, "text lacks the temporal or idle-gap table")
    if temporal is None or gaps is None:
        return
    for i, r in enumerate(report["ranks"]):
        t = r["temporal_breakdown"]
        c.ok(i < len(temporal) and temporal[i][3] == pct_text(t["busy_pct"]),
             "rank %d busy: text %r, JSON %s" % (
                 r["rank"], temporal[i][3] if i < len(temporal) else None,
                 pct_text(t["busy_pct"])))
        g = r["idle_gaps"]
        want = [pct_text(g[k]["pct"]) for k in ("host_wait", "kernel_wait", "other")]
        got = [gaps[i][4], gaps[i][6], gaps[i][8]] if i < len(gaps) and len(gaps[i]) >= 9 else None
        c.ok(got == want, "rank %d idle-gap shares: text %r, JSON %r" % (r["rank"], got, want))
        for cell in (got or []):
            c.ok(0 <= float(cell.rstrip("%")) <= 100, "rank %d text idle-gap share %s" % (
                r["rank"], cell))


def check_csv(c, report, text):
    rows = list(csv.DictReader(io.StringIO(text)))
    by = {(int(r["rank"]), int(r["device"]), r["kind"]): r for r in rows}
    for r in report["ranks"]:
        for kind in ("host_wait", "kernel_wait", "other"):
            row = by.get((r["rank"], r["device"], kind))
            g = r["idle_gaps"]
            c.ok(row is not None, "csv idle_gaps lacks rank %d %s" % (r["rank"], kind))
            if row is None:
                continue
            c.ok(int(row["total_ns"]) == g[kind]["total_ns"] and
                 int(row["stream_idle_ns"]) == g["stream_idle_ns"],
                 "csv idle_gaps rank %d %s differs from JSON" % (r["rank"], kind))
            c.near(float(row["pct"]), g[kind]["pct"], 0.006,
                   "csv idle_gaps rank %d %s pct" % (r["rank"], kind))


def check_trace(inferscope, name, paths):
    c = Checker(name)
    try:
        report = json.loads(run([inferscope, "analyze", "--format", "json"] + paths))
        text = run([inferscope, "analyze"] + paths)
        table = run([inferscope, "analyze", "--format", "csv", "--table", "idle_gaps"] + paths)
    except Exception as e:  # noqa: BLE001 - a failed run is a violation of its own
        c.problems.append("%s: %s" % (name, e))
        return c
    check_bounds(c, report)
    check_verdicts(c, report)
    for r in report["ranks"]:
        check_entry(c, "rank %d gpu %d" % (r["rank"], r["device"]), r)
    check_entry(c, "summary", report["summary"])
    check_job_sums(c, report)
    check_text(c, report, text)
    check_csv(c, report, table)
    return c


# --- the traces --------------------------------------------------------------------------------

def write_two_stream_trace(path):
    """Two streams run side by side and go idle together between steps, each waiting for the
    host's next launch: every gap counts once per stream, so the stream idle is twice the GPU's
    idle time (what a share of the GPU idle got wrong, with host wait at 200%)."""
    events, corr, t = [], 0, 1000.0
    for _step in range(30):
        for stream in (7, 8):
            corr += 1
            # The launch call starts after the previous kernels ended: host wait on both streams.
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                           "pid": 100, "tid": 100, "ts": t - 8 + stream - 7, "dur": 4.0,
                           "args": {"correlation": corr}})
            events.append({"ph": "X", "cat": "kernel", "name": "ampere_bf16_s16816gemm_bf16",
                           "pid": 0, "tid": stream, "ts": t, "dur": 100.0,
                           "args": {"device": 0, "stream": stream, "correlation": corr}})
        t += 100 + 200  # 200 us idle on both streams
    with gzip.open(path, "wt") as f:
        json.dump({"schemaVersion": 1, "traceEvents": events}, f)


def generated_traces(tmp):
    out = [("example vllm_tp2_decode", [EXAMPLE])]
    two = os.path.join(tmp, "two_streams.json.gz")
    write_two_stream_trace(two)
    out.append(("two streams idle together", [two]))
    scen = os.path.join(tmp, "scenarios")
    subprocess.run([sys.executable, os.path.join(TOOLS, "make_scenario_traces.py"), "--out", scen,
                    "--quiet", "--steps-scale", "0.3"], check=True)
    for entry in sorted(os.listdir(scen)):
        path = os.path.join(scen, entry)
        if entry.endswith(".json.gz") or (os.path.isdir(path) and not entry.startswith("pair")):
            out.append(("scenario " + entry, [path]))
    graph = os.path.join(tmp, "graph_server.json.gz")
    subprocess.run([sys.executable, os.path.join(TOOLS, "make_graph_server_trace.py"), "--out",
                    graph], check=True)
    out.append(("graph server", [graph]))
    tiled = os.path.join(tmp, "tiled.json.gz")
    subprocess.run([sys.executable, os.path.join(TOOLS, "tile_kineto_trace.py"),
                    os.path.join(EXAMPLE, "rank0.json.gz"), tiled, "--copies", "3"], check=True,
                   stdout=subprocess.DEVNULL)
    out.append(("tiled example x3", [tiled]))
    return out


def shared_traces(directory):
    out = []
    for dirpath, _dirs, files in os.walk(directory):
        for f in sorted(files):
            if f.endswith((".json.gz", ".json", ".sqlite")):
                p = os.path.join(dirpath, f)
                out.append(("shared " + os.path.relpath(p, directory), [p]))
    return sorted(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--inferscope", required=True)
    ap.add_argument("--traces", default=None, help="the real traces (default ../shared/traces)")
    ap.add_argument("--no-shared", action="store_true", help="generated traces only")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        traces = generated_traces(tmp)
        shared = args.traces or os.environ.get("INFERSCOPE_SHARED_TRACES") or os.path.join(
            REPO, "..", "shared", "traces")
        if args.no_shared:
            print("real traces: not asked for (--no-shared)")
        elif os.path.isdir(shared):
            real = shared_traces(shared)
            print("real traces: %d in %s" % (len(real), shared))
            traces += real
        else:
            print("SKIP real traces: %s not found (set INFERSCOPE_SHARED_TRACES); checking the "
                  "example and the generated traces only" % shared)
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            results = list(pool.map(lambda t: check_trace(args.inferscope, t[0], t[1]), traces))
    failures = 0
    for c in results:
        print("%-4s %s (%d checks)" % ("ok" if not c.problems else "FAIL", c.name, c.checked))
        for p in c.problems:
            print("  " + p)
        failures += bool(c.problems)
    print("%d traces, %d with violations" % (len(results), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
