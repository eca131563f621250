#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""Runs the worked examples of docs/agent-skill/SKILL.md as documented.

Every fenced ```sh block's `$ ` lines run from the repository root (`inferscope` is the built
binary, `python3` this interpreter); the block's output must hold each `<!-- expect: S -->` that
follows it, and its last command must exit 0 or the `<!-- exit: N -->` given.
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--inferscope", required=True)
    p.add_argument("--source-dir", required=True)
    args = p.parse_args()
    skill = os.path.join(args.source_dir, "docs", "agent-skill", "SKILL.md")
    text = open(skill, encoding="utf-8").read()
    blocks = re.findall(r"```sh\n(.*?)```\n((?:<!-- (?:expect|exit): .*? -->\n)*)", text, re.S)
    if len(blocks) < 4:
        print(f"FAIL: expected at least 4 runnable blocks in {skill}, found {len(blocks)}")
        return 1
    shutil.rmtree("/tmp/inferscope-skill", ignore_errors=True)
    failures = 0
    for body, notes in blocks:
        expects = re.findall(r"<!-- expect: (.*?) -->", notes)
        exits = re.findall(r"<!-- exit: (\d+) -->", notes)
        want_exit = int(exits[0]) if exits else 0
        output = ""
        code = 0
        for line in body.splitlines():
            if not line.startswith("$ "):
                continue
            argv = shlex.split(line[2:])
            if argv[0] == "inferscope":
                argv[0] = args.inferscope
            elif argv[0] == "python3":
                argv[0] = sys.executable
            r = subprocess.run(argv, cwd=args.source_dir, capture_output=True, text=True, timeout=300)
            output += r.stdout + r.stderr
            code = r.returncode
            print(f"ran: {line[2:]} -> exit {code}")
        if code != want_exit:
            failures += 1
            print(f"FAIL: block exited {code}, the skill says {want_exit}:\n{body}\n{output[-2000:]}")
        for s in expects:
            if s not in output:
                failures += 1
                print(f"FAIL: '{s}' not in the output of:\n{body}")
    shutil.rmtree("/tmp/inferscope-skill", ignore_errors=True)
    print(f"{len(blocks)} blocks, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
