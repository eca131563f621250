#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""Top-level accuracy of `inferscope classify` on a labelled kernel-name file.

The held-out sets in tests/data/taxonomy_heldout/ are never read by the fitting script: they are
the generalization figure (docs/taxonomy.md). Columns: category, subcategory or '-', source
(`<codebase>@<commit>:<path>`), name; lines starting with '#' are comments.

Usage: measure_taxonomy_heldout.py INFERSCOPE TSV [--misses]
"""
import collections
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, tsv = sys.argv[1], sys.argv[2]
    rows = []
    with open(tsv, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip() or line.startswith("category\t"):
                continue
            rows.append(line.rstrip("\n").split("\t"))
    names = [r[3] for r in rows]
    out = subprocess.run([binary, "classify", "-"], input="\n".join(names) + "\n",
                         capture_output=True, text=True, check=True).stdout.splitlines()
    if len(out) != len(rows):
        sys.exit("classify printed %d lines for %d names" % (len(out), len(rows)))
    right = 0
    per_cat = collections.defaultdict(lambda: [0, 0])
    per_base = collections.defaultdict(lambda: [0, 0])
    misses = []
    for row, line in zip(rows, out):
        got = line.split("\t")[0]
        hit = got == row[0]
        right += hit
        for table, key in ((per_cat, row[0]), (per_base, row[2].split("@")[0])):
            table[key][0] += hit
            table[key][1] += 1
        if not hit:
            misses.append((row[0], got, row[3]))
    print("top-level %d/%d = %.1f %%" % (right, len(rows), 100.0 * right / len(rows)))
    for title, table in (("per category", per_cat), ("per code base", per_base)):
        print(title + ": " + ", ".join("%s %d/%d" % (k, v[0], v[1]) for k, v in sorted(table.items())))
    if "--misses" in sys.argv:
        for m in misses:
            print("miss\t%s\t%s\t%s" % m)


if __name__ == "__main__":
    main()
