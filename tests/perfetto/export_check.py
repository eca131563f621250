#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""Checks `inferscope export` against Perfetto's schema and a golden file.

- the bundled example (examples/vllm_tp2_decode) and a generated scenario trace export, and
  `protoc --decode` with tests/perfetto/perfetto_trace.proto (Perfetto's documented field
  numbers) reads every byte: no field the schema does not know, every kernel a slice with its
  category, launch argument (full name, grid, block) and correlation id, flows that start and
  end;
- a tiny generated Kineto trace exports to exactly tests/perfetto/expected/tiny.pftrace.txt
  (decoded text; `--update` rewrites it after an intended change);
- the bytes of a kernel slice stay within kMaxBytesPerKernelSlice;
- bad inputs give one error line and the documented exit code.

Exit 77 (skip) when protoc is absent, unless INFERSCOPE_REQUIRE_PROTOC=1 (CI), which fails.
"""

import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCHEMA = "perfetto_trace.proto"
EXPECTED = os.path.join(HERE, "expected", "tiny.pftrace.txt")
# Measured on the bundled example with everything a kernel carries (category, the launch
# argument, the launch flow or the correlation id): 45.0, of which 7.3 are the interned launch
# strings (209 launch configurations of ~270 characters per rank in 7,432 kernels); the 40-byte
# target is met by the steady-state benchmark (docs/benchmarks.md). A guard against regressions.
MAX_BYTES_PER_KERNEL_SLICE = 46.0


def tiny_trace():
    """A deterministic Kineto trace: two launches, a copy, a stream sync, one rank."""
    base = 1_000_000.0  # us
    ev = [
        {"ph": "M", "name": "process_name", "pid": 7, "tid": 0, "args": {"name": "worker"}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7,
         "ts": base + 1.0, "dur": 4.0, "args": {"correlation": 1}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7,
         "ts": base + 6.0, "dur": 4.0, "args": {"correlation": 2}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 7, "tid": 7,
         "ts": base + 11.0, "dur": 3.0, "args": {"correlation": 3}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 7, "tid": 7,
         "ts": base + 15.0, "dur": 40.0, "args": {"correlation": 4}},
        {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7,
         "ts": base + 15.5, "dur": 39.0,
         "args": {"cuda_sync_kind": "Stream Sync", "stream": 7, "device": 0, "correlation": 4}},
        {"ph": "X", "cat": "kernel",
         "name": "void flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4>, true>(Flash_fwd_params)",
         "pid": 0, "tid": 7, "ts": base + 8.0, "dur": 20.0,
         "args": {"device": 0, "stream": 7, "correlation": 1, "grid": [4, 32, 1],
                  "block": [128, 1, 1]}},
        {"ph": "X", "cat": "kernel", "name": "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN",
         "pid": 0, "tid": 7, "ts": base + 29.0, "dur": 15.0,
         "args": {"device": 0, "stream": 7, "correlation": 2, "grid": [132, 1, 1],
                  "block": [384, 1, 1]}},
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "pid": 0,
         "tid": 7, "ts": base + 45.0, "dur": 2.0,
         "args": {"device": 0, "stream": 7, "correlation": 3, "bytes": 4096}},
    ]
    return {"schemaVersion": 1, "distributedInfo": {"rank": 0, "world_size": 1},
            "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
            "traceEvents": ev}


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def decode(protoc, path):
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".gz"):
        data = gzip.decompress(data)
    r = subprocess.run([protoc, "--decode=perfetto.protos.Trace", "-I", HERE, SCHEMA],
                       input=data, capture_output=True)
    if r.returncode != 0:
        raise AssertionError(f"protoc --decode failed on {path}: {r.stderr.decode()}")
    return r.stdout.decode()


def export(binary, inputs, out, extra=()):
    r = run([binary, "export", *inputs, "-o", out, "-v", *extra])
    if r.returncode != 0:
        raise AssertionError(f"export {inputs} failed ({r.returncode}): {r.stderr}")
    return r.stderr


def check_structure(text, what):
    unknown = re.findall(r"^\s*(\d+):", text, re.M)
    assert not unknown, f"{what}: fields the schema does not know: {sorted(set(unknown))}"
    begins = text.count("type: TYPE_SLICE_BEGIN")
    ends = text.count("type: TYPE_SLICE_END")
    assert begins == ends and begins > 0, f"{what}: {begins} slice begins, {ends} ends"
    # A kernel's category is its slice's; its full name, grid and block are one interned `launch`
    # argument in CUDA's launch syntax; its correlation id is TrackEvent's field.
    assert 'name: "launch"' in text, f"{what}: no launch argument"
    launches = re.findall(r'^\s*str: "(.*<<<\(\d+,\d+,\d+\), \(\d+,\d+,\d+\)>>>.*)"$', text,
                          re.M)
    assert launches, f"{what}: no launch string with grid and block"
    assert re.search(r"^\s*correlation_id: \d+", text, re.M), f"{what}: no correlation ids"
    for old in ('name: "category"', 'name: "full_name"', 'name: "grid"', 'name: "block"'):
        assert old not in text, f"{what}: {old} is in the launch argument or the slice now"
    starts = set(re.findall(r"^\s*flow_ids_old: (\d+)", text, re.M))
    lands = set(re.findall(r"^\s*terminating_flow_ids_old: (\d+)", text, re.M))
    assert starts and starts == lands, f"{what}: {len(starts)} flows start, {len(lands)} end"
    assert "busy share: " in text and "double_counter_value" in text, f"{what}: no counters"
    assert "process_name:" in text and "thread_name:" in text, f"{what}: no host tracks"


def check_chrome_json(path, kernels):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        events = json.load(f)["traceEvents"]
    named = {(e["pid"], e["tid"]) for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    processes = {e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    slices = [e for e in events if e["ph"] == "X"]
    for e in slices:
        assert e["dur"] >= 0 and isinstance(e["ts"], (int, float)), f"{path}: bad slice {e}"
        assert e["pid"] in processes and (e["pid"], e["tid"]) in named, (
            f"{path}: slice on an unnamed track: {e}")
    # The protobuf's `launch` argument (full name <<<grid, block>>>) and correlation id, and what
    # Kineto's importer reads (so that `analyze` and `diff` read the file back): cat "kernel", the
    # full name, device, stream, correlation, grid and block; inferscope's category an argument.
    gpu = [e for e in slices if "launch" in e["args"]]
    assert len(gpu) == kernels, f"{path}: {len(gpu)} kernel slices, expected {kernels}"
    for e in gpu:
        assert re.search(r"<<<\(\d+,\d+,\d+\), \(\d+,\d+,\d+\)>>>", e["args"]["launch"]), (
            f"{path}: launch without grid and block: {e}")
        assert e["cat"] == "kernel", f"{path}: a kernel's cat is not Kineto's: {e}"
        assert e["args"]["launch"].startswith(e["name"]), f"{path}: not the full name: {e}"
        assert e["args"].get("category") not in (None, "", "cuda_api"), (
            f"{path}: kernel without category: {e}")
        for key in ("device", "stream", "correlation"):
            assert isinstance(e["args"].get(key), int), f"{path}: kernel without {key}: {e}"
        for key in ("grid", "block"):
            assert len(e["args"].get(key, [])) == 3, f"{path}: kernel without {key}: {e}"
    # A kernel at the end of a launch flow leaves the viewer's correlation_id to the launching
    # call; both carry Kineto's "correlation".
    calls = [e for e in slices if e["cat"] == "cuda_runtime"]
    assert calls and all("correlation" in e["args"] for e in calls), (
        f"{path}: CUDA calls without Kineto's correlation")
    assert any("correlation_id" in e["args"] for e in calls), (
        f"{path}: no correlation ids on the launches")
    starts = {e["id"] for e in events if e["ph"] == "s"}
    ends = {e["id"] for e in events if e["ph"] == "f"}
    assert starts and starts == ends, f"{path}: {len(starts)} flows start, {len(ends)} end"
    counters = [e for e in events if e["ph"] == "C"]
    assert counters and all(0 <= e["args"]["value"] <= 1 for e in counters), f"{path}: counters"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--inferscope", required=True)
    p.add_argument("--update", action="store_true", help="rewrite the expected golden text")
    args = p.parse_args()

    protoc = shutil.which("protoc")
    if not protoc:
        if os.environ.get("INFERSCOPE_REQUIRE_PROTOC") == "1":
            print("FAIL: protoc not found (apt-get install protobuf-compiler)")
            return 1
        print("SKIP: protoc not found (apt-get install protobuf-compiler); export not checked")
        return 77

    with tempfile.TemporaryDirectory() as tmp:
        # 1. The bundled example: decodes, every part present, bytes per kernel slice.
        out = os.path.join(tmp, "example.pftrace")
        summary = export(args.inferscope, [os.path.join(ROOT, "examples", "vllm_tp2_decode")], out)
        text = decode(protoc, out)
        check_structure(text, "vllm_tp2_decode")
        m = re.search(r"exported (\d+) kernels.*?([\d.]+) bytes per kernel slice", summary)
        assert m, f"no summary line: {summary}"
        kernels, per_slice = int(m.group(1)), float(m.group(2))
        assert kernels == 14864, f"vllm_tp2_decode: {kernels} kernels, expected 14864"
        assert per_slice <= MAX_BYTES_PER_KERNEL_SLICE, (
            f"{per_slice} bytes per kernel slice > {MAX_BYTES_PER_KERNEL_SLICE}")
        print(f"ok: vllm_tp2_decode: {kernels} kernels, {per_slice} bytes per kernel slice")

        # Gzip output decodes to the same trace.
        gz = os.path.join(tmp, "example.pftrace.gz")
        export(args.inferscope, [os.path.join(ROOT, "examples", "vllm_tp2_decode")], gz)
        assert decode(protoc, gz) == text, "the .gz export differs from the plain one"
        print("ok: .pftrace.gz decodes to the same trace")

        # Chrome JSON (.json, .json.gz): the same content, structurally sound.
        for name in ("example.json", "example.json.gz"):
            out = os.path.join(tmp, name)
            export(args.inferscope, [os.path.join(ROOT, "examples", "vllm_tp2_decode")], out)
            check_chrome_json(out, kernels)
        print("ok: Chrome JSON (.json, .json.gz)")

        # 2. A generated scenario trace (host syncs): sync-wait tracks too.
        scen = os.path.join(tmp, "scenarios")
        r = run([sys.executable, os.path.join(ROOT, "tools", "make_scenario_traces.py"), "--out",
                 scen, "--scenario", "host_sync", "--steps-scale", "0.1", "--quiet"])
        assert r.returncode == 0, r.stderr
        out = os.path.join(tmp, "host_sync.pftrace")
        traces = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(scen) for f in fs
                        if f.endswith((".json.gz", ".json")) and f != "expected.json")
        assert traces, f"make_scenario_traces.py wrote no trace: {os.listdir(scen)}"
        export(args.inferscope, traces, out)
        text = decode(protoc, out)
        check_structure(text, "host_sync")
        assert "sync wait: " in text, "host_sync: no sync waits"
        print("ok: generated host_sync scenario")

        # 3. Golden: a tiny trace's decoded text, byte for byte.
        tiny = os.path.join(tmp, "tiny.json")
        with open(tiny, "w") as f:
            json.dump(tiny_trace(), f)
        out = os.path.join(tmp, "tiny.pftrace")
        export(args.inferscope, [tiny], out)
        text = decode(protoc, out)
        if args.update:
            os.makedirs(os.path.dirname(EXPECTED), exist_ok=True)
            with open(EXPECTED, "w") as f:
                f.write(text)
            print(f"updated {EXPECTED}")
        else:
            with open(EXPECTED) as f:
                expected = f.read()
            if text != expected:
                got = os.path.join(tmp, "tiny.got.txt")
                with open(got, "w") as f:
                    f.write(text)
                print(run(["diff", "-u", EXPECTED, got]).stdout[:4000])
                raise AssertionError("tiny trace: decoded export differs from the golden file "
                                     "(run with --update after an intended change)")
            print("ok: golden tiny trace")

        # 4. Bad inputs: one error line, the documented exit code, no output file.
        not_trace = os.path.join(tmp, "notes.txt")
        with open(not_trace, "w") as f:
            f.write("not a trace\n")
        truncated = os.path.join(tmp, "truncated.json")
        with open(truncated, "w") as f:
            f.write(json.dumps(tiny_trace())[:300])
        cases = [
            ([os.path.join(tmp, "missing.json")], "x.pftrace", 3),
            ([not_trace], "x.pftrace", 4),
            ([truncated], "x.pftrace", 5),
            ([tiny], "x.txt", 2),
            ([tiny], "x.pftrace.json.txt", 2),
            ([tiny], os.path.join(tmp, "no", "such", "dir", "x.pftrace"), 1),
        ]
        for inputs, output, code in cases:
            if not os.path.isabs(output):
                output = os.path.join(tmp, output)
            r = run([args.inferscope, "export", *inputs, "-o", output])
            lines = r.stderr.strip().splitlines()
            assert r.returncode == code, f"{inputs} -> {output}: exit {r.returncode}, expected " \
                f"{code}: {r.stderr}"
            assert len(lines) == 1 and lines[0].startswith("inferscope: error: "), (
                f"{inputs}: expected one error line, got {r.stderr!r}")
        print("ok: bad inputs")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except AssertionError as e:
        print(f"FAIL: {e}")
        sys.exit(1)
