#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""Tiles a real Kineto / torch.profiler trace N times into one large trace (for large-file
benchmarks of the streaming importer).

Copy k of the events is shifted by k * (span + gap) in time, and its correlation ids, "External id"s
and flow ids are offset by k * (max id + 1), so every copy stays self-consistent and ids stay
unique. Top-level keys other than traceEvents are kept as they are.

  tools/tile_kineto_trace.py IN.json[.gz] OUT.json[.gz] --size 1GB
  tools/tile_kineto_trace.py IN.json.gz OUT.json --copies 20

Note: fractional timestamps go through Python floats (exact at ns for ts below ~9e12 us, which
holds for TraceLens-style relative clocks; integer timestamps stay exact).
"""

import argparse
import gzip
import json
import math
import sys


def open_any(path, mode):
    if "w" in mode:
        is_gzip = path.endswith(".gz")
    else:
        with open(path, "rb") as f:
            is_gzip = f.read(2) == b"\x1f\x8b"
    if is_gzip:
        return gzip.open(path, mode + "t", encoding="utf-8", compresslevel=1) if "w" in mode else \
            gzip.open(path, mode + "t", encoding="utf-8")
    return open(path, mode, encoding="utf-8")


def parse_size(text):
    units = {"": 1, "B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}
    text = text.strip().upper()
    number = text.rstrip("KMGTB")
    return int(float(number) * units[text[len(number):]])


def shifted(event, dt, id_offset):
    e = dict(event)
    if isinstance(e.get("ts"), (int, float)) and e.get("ph") != "M":
        e["ts"] = e["ts"] + dt
    if "id" in e and isinstance(e["id"], int):
        e["id"] = e["id"] + id_offset
    args = e.get("args")
    if isinstance(args, dict):
        a = dict(args)
        for key in ("correlation", "External id"):
            if isinstance(a.get(key), int) and a[key] > 0:
                a[key] = a[key] + id_offset
        e["args"] = a
    return e


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input")
    parser.add_argument("output", help="ends in .gz for gzip output")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--size", help="target size of the output JSON, e.g. 1GB, 500MB")
    group.add_argument("--copies", type=int)
    args = parser.parse_args()

    with open_any(args.input, "r") as f:
        trace = json.load(f)
    events = trace.get("traceEvents")
    if not isinstance(events, list):
        sys.exit(f"{args.input}: no traceEvents array")

    starts, ends, max_id = [], [], 0
    for e in events:
        ts = e.get("ts")
        if isinstance(ts, (int, float)) and e.get("ph") != "M":
            starts.append(ts)
            ends.append(ts + (e.get("dur") or 0))
        if isinstance(e.get("id"), int):
            max_id = max(max_id, e["id"])
        a = e.get("args")
        if isinstance(a, dict):
            for key in ("correlation", "External id"):
                if isinstance(a.get(key), int):
                    max_id = max(max_id, a[key])
    span = math.ceil(max(ends) - min(starts)) + 1000  # + 1 ms gap between copies
    id_stride = max_id + 1

    copy_bytes = sum(len(json.dumps(e)) + 2 for e in events)
    copies = args.copies or max(1, math.ceil(parse_size(args.size) / copy_bytes))

    header = {k: v for k, v in trace.items() if k != "traceEvents"}
    with open_any(args.output, "w") as out:
        out.write("{\n")
        for key, value in header.items():
            out.write(f"  {json.dumps(key)}: {json.dumps(value)},\n")
        out.write('  "traceEvents": [\n')
        first = True
        for k in range(copies):
            chunk = []
            for e in events:
                chunk.append(json.dumps(shifted(e, k * span, k * id_stride)))
            text = ",\n".join(chunk)
            out.write(("" if first else ",\n") + text)
            first = False
            print(f"copy {k + 1}/{copies}", file=sys.stderr, end="\r")
        out.write("\n  ]\n}\n")
    print(f"\nwrote {args.output}: {copies} copies of {len(events)} events, span {span} us each",
          file=sys.stderr)


if __name__ == "__main__":
    main()
