#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""Checks that dependencies only run down the layers (AGENTS.md, "Layers").

Reads the CMake declarations under src/ (inferscope_add_library/test/benchmark/fuzzer,
add_library, add_executable, target_link_libraries) and the `#include "src/..."` lines, and fails
when:
  - a library links one of a higher layer, or a peer layer of the same rank;
  - a library source or header includes a header of such a layer (tests, benchmarks, fuzzers and
    test helpers may include anything: nothing links them);
  - the offline path (the trace pipeline, `analyze`, the analyze benchmark) reaches agent code,
    through its link graph or its include graph;
  - a command's CLI library links another command's (they share through the pipelines);
  - a folder holds more than one library without being listed in SPLIT_FOLDERS;
  - a file's namespace does not follow its folder.
No build needed (it runs before the build in scripts/test.sh, and as the ctest layering_check).

  scripts/check_layering.py [--root DIR]   check the tree at DIR (default: the repository)
  scripts/check_layering.py --self-test    check that a planted upward dependency is caught
"""

import argparse
import os
import re
import shutil
import sys
import tempfile

# The layers, lowest first, in one line: a folder under src/ (or bench/) is a layer; `<` separates
# ranks, `,` separates peers of one rank. A file belongs to the layer of its longest matching
# folder. A dependency may go to a lower rank or stay within its own layer; peers must not depend
# on each other. docs/architecture.md draws the same order.
LAYER_ORDER = (
    "base < model < wire < aggregate, import < analyze, inject < report"
    " < pipeline, perfetto, net, telemetry"
    " < store, telemetry/nvml, telemetry/scrape, telemetry/otlp < telemetry/registry"
    " < query, fleet/sink < fleet/query, server < server/ui, context < mcp < agentd < cli < bench")


def parse_layers(order):
    layers = []
    for rank, peers in enumerate(order.split("<")):
        for folder in peers.split(","):
            folder = folder.strip()
            prefix = ("bench/" if folder == "bench" else "src/" + folder + "/")
            layers.append((folder, rank, [prefix]))
    return layers


LAYERS = parse_layers(LAYER_ORDER)

# Folders that hold more than one library, and why (AGENTS.md says the same).
SPLIT_FOLDERS = {
    "src/telemetry/otlp": "a loopback test server beside the receiver",
    "src/import": "the pipelined sink both importers share, below the format dispatch",
    "src/inject": "the CUPTI-independent core (testable without CUDA) and the CUPTI parts",
    "src/cli": "one library per command family, so `analyze` links no agent code",
    "src/mcp": "the server core, trace files as a source (the importers) and the agent's /mcp route:"
    " the agent links the core and the route, not the importers",
}

# The CLI libraries every command may link (the others are one command family each).
CLI_SHARED = ["inferscope_cli_voice"]
CLI_LIBRARY = re.compile(r"^inferscope_cli(_|$)")

# The offline path: none of these may link or include agent code.
OFFLINE_TARGETS = [
    "inferscope_pipeline",
    "inferscope_cli_analyze",
    "inferscope_perfetto",
    "inferscope_cli_export",
    "analyze_benchmark",
]
# cli_voice (CLI_SHARED: wording and output checks, CLI11 and fmt only) is no agent code.
# The live side's folders (the agent, its parts and its clients' HTTP code).
LIVE_FOLDERS = ("net", "telemetry", "store", "query", "fleet", "server", "agentd")
LIVE_INCLUDE_PREFIXES = tuple("src/%s/" % f for f in LIVE_FOLDERS)
AGENT_LINK_FORBIDDEN = re.compile(
    r"^inferscope_(%s)(_|$)|^inferscope_httplib$|^inferscope_cli_(?!analyze$|voice$)"
    % "|".join(LIVE_FOLDERS))

TEST_FILE = re.compile(
    r"(_test\.cc|_benchmark\.cc|_fuzzer\.cc|/test_[a-z_]+\.h|_test_server\.(h|cc))$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"(src/[^"]+)"', re.M)
NAMESPACE = re.compile(r"^namespace (inferscope(?:::[a-z_0-9]+)*) \{", re.M)
CALL = re.compile(r"\b(inferscope_add_library|inferscope_add_test|inferscope_add_benchmark|"
                  r"inferscope_add_fuzzer|add_library|add_executable|target_link_libraries)"
                  r"\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)", re.S)
KEYWORDS = {"SRCS", "DEPS", "LABELS", "PUBLIC", "PRIVATE", "INTERFACE", "STATIC", "SHARED",
            "OBJECT", "MODULE"}


def layer_of(path):
    best = None
    for name, rank, prefixes in LAYERS:
        for p in prefixes:
            if path.startswith(p) and (best is None or len(p) > len(best[2])):
                best = (name, rank, p)
    return best and best[:2]


def allowed(frm, to):
    return to[1] < frm[1] or to[0] == frm[0]


class Target:
    def __init__(self, name, kind, folder):
        self.name, self.kind, self.folder = name, kind, folder
        self.srcs, self.deps = [], []


def read_targets(root):
    targets = {}
    for dirpath, _, filenames in walk(root):
        if "CMakeLists.txt" not in filenames:
            continue
        folder = os.path.relpath(dirpath, root)
        text = open(os.path.join(dirpath, "CMakeLists.txt")).read()
        text = re.sub(r"#[^\n]*", "", text)
        for call, args in CALL.findall(text):
            words = args.split()
            if not words or words[0].startswith("$"):
                continue
            name = words[0]
            if call == "target_link_libraries":
                if name in targets:
                    targets[name].deps += [w for w in words[1:] if w not in KEYWORDS]
                continue
            kind = "library" if call in ("inferscope_add_library", "add_library") else "executable"
            t = targets.setdefault(name, Target(name, kind, folder))
            section = "SRCS" if call in ("add_library", "add_executable") else None
            for w in words[1:]:
                if w in ("SRCS", "DEPS", "LABELS"):
                    section = w
                elif w in KEYWORDS:
                    continue
                elif section == "SRCS" and not w.startswith("$"):
                    t.srcs.append(os.path.normpath(os.path.join(folder, w)))
                elif section == "DEPS":
                    t.deps.append(w)
    return targets


def walk(root):
    for top in ("src", "bench"):
        yield from os.walk(os.path.join(root, top))


def source_files(root):
    for dirpath, _, filenames in walk(root):
        for f in filenames:
            if f.endswith((".h", ".cc")):
                yield os.path.relpath(os.path.join(dirpath, f), root)


def includes_of(root, path, cache={}):
    key = (root, path)
    if key not in cache:
        full = os.path.join(root, path)
        cache[key] = INCLUDE.findall(open(full).read()) if os.path.exists(full) else []
    return cache[key]


def check(root):
    errors = []
    targets = read_targets(root)
    target_layer = {}
    for t in targets.values():
        layers = {layer_of(s) for s in t.srcs}
        if None in layers:
            errors.append(f"{t.folder}/CMakeLists.txt: {t.name}: a source has no layer "
                          f"(add its folder to LAYERS in scripts/check_layering.py)")
            continue
        if t.kind == "library" and len(layers) > 1:
            errors.append(f"{t.folder}/CMakeLists.txt: {t.name}: sources of several layers "
                          f"({', '.join(sorted(l[0] for l in layers))})")
        if layers:
            target_layer[t.name] = max(layers, key=lambda l: l[1])

    # Libraries link only down.
    for t in targets.values():
        if t.kind != "library" or t.name not in target_layer:
            continue
        for d in t.deps:
            if d in target_layer and not allowed(target_layer[t.name], target_layer[d]):
                errors.append(f"{t.folder}/CMakeLists.txt: {t.name} ({target_layer[t.name][0]}) "
                              f"links {d} ({target_layer[d][0]}): an upward dependency")

    # Command families share code through the pipelines and cli_voice, never through each other
    # (`diff` once reached the trace pipeline through `analyze`'s library).
    for t in targets.values():
        if t.kind == "library" and CLI_LIBRARY.match(t.name) and t.name not in CLI_SHARED:
            for d in t.deps:
                if CLI_LIBRARY.match(d) and d not in CLI_SHARED:
                    errors.append(f"{t.folder}/CMakeLists.txt: {t.name} links {d}: commands "
                                  f"share code through src/pipeline, the agent libraries or "
                                  f"{CLI_SHARED[0]}")

    # One library per folder, or a declared split.
    per_folder = {}
    for t in targets.values():
        if t.kind == "library" and t.name in target_layer:
            per_folder.setdefault(t.folder, []).append(t.name)
    for folder, libs in sorted(per_folder.items()):
        if len(libs) > 1 and folder not in SPLIT_FOLDERS:
            errors.append(f"{folder}: {len(libs)} libraries ({', '.join(sorted(libs))}): one per "
                          f"folder, or list the folder in SPLIT_FOLDERS and AGENTS.md with why")

    # Includes go only down; namespaces follow folders.
    for path in sorted(source_files(root)):
        layer = layer_of(path)
        if layer is None:
            errors.append(f"{path}: no layer (add its folder to LAYERS in "
                          f"scripts/check_layering.py)")
            continue
        if not TEST_FILE.search(path):
            for inc in includes_of(root, path):
                to = layer_of(inc)
                if to is not None and not allowed(layer, to):
                    errors.append(f"{path} ({layer[0]}) includes {inc} ({to[0]}): an upward "
                                  f"dependency")
        parts = path.split("/")  # src/<top>/[<sub>/]file, or bench/file
        if parts[0] == "bench":
            top, sub = "bench", None
        else:
            top, sub = parts[1], (parts[2] if len(parts) > 3 else None)
        for ns in NAMESPACE.findall(open(os.path.join(root, path)).read()):
            names = ns.split("::")[1:]
            if not names or names[0] != top:
                errors.append(f"{path}: namespace {ns}: expected inferscope::{top}")
            elif len(names) > 1 and names[1] not in (sub, "testing") and not \
                    names[1].endswith(("_internal", "_abi")):
                errors.append(f"{path}: namespace {ns}: a nested namespace is the subfolder's "
                              f"name, `testing` or `*_internal`")

    # The offline path links and includes no agent code.
    for name in OFFLINE_TARGETS:
        if name not in targets:
            errors.append(f"offline target {name} not found in src/**/CMakeLists.txt")
            continue
        seen, stack = set(), [name]
        while stack:
            n = stack.pop()
            if n in seen or n not in targets:
                continue
            seen.add(n)
            for d in targets[n].deps:
                if AGENT_LINK_FORBIDDEN.search(d):
                    errors.append(f"{name} (offline) links {d} (via {n})")
                else:
                    stack.append(d)
        files, queue = set(), [s for n in seen for s in targets[n].srcs]
        while queue:
            f = queue.pop()
            if f in files:
                continue
            files.add(f)
            for inc in includes_of(root, f):
                if inc.startswith(LIVE_INCLUDE_PREFIXES):
                    errors.append(f"{name} (offline): {f} includes {inc}")
                else:
                    queue.append(inc)
    return errors


def self_test():
    """A planted upward include and link must both be reported; the real tree must pass."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tmp = tempfile.mkdtemp()
    try:
        for top in ("src", "bench"):
            shutil.copytree(os.path.join(root, top), os.path.join(tmp, top))
        with open(os.path.join(tmp, "src/analyze/analysis.cc"), "a") as f:
            f.write('\n#include "src/query/range_query.h"\n')
        with open(os.path.join(tmp, "src/pipeline/CMakeLists.txt"), "a") as f:
            f.write("\ntarget_link_libraries(inferscope_pipeline PUBLIC inferscope_store)\n")
        with open(os.path.join(tmp, "src/cli/CMakeLists.txt"), "a") as f:
            f.write("\ntarget_link_libraries(inferscope_cli_diff PUBLIC inferscope_cli_analyze)\n")
        errors = check(tmp)
        want = ["src/analyze/analysis.cc (analyze) includes src/query/range_query.h",
                "inferscope_pipeline (pipeline) links inferscope_store",
                "inferscope_cli_analyze (offline) links inferscope_store",
                "inferscope_cli_diff links inferscope_cli_analyze"]
        missing = [w for w in want if not any(w in e for e in errors)]
        if missing:
            print("self-test: not caught:\n  " + "\n  ".join(missing))
            return 1
    finally:
        shutil.rmtree(tmp)
    print("self-test: planted upward dependencies caught")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--root", default=repo)
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    errors = check(args.root)
    for e in errors:
        print("layering: " + e)
    if errors:
        print(f"layering: {len(errors)} problem(s); the layers are in scripts/check_layering.py "
              f"and AGENTS.md")
        return 1
    print("layering: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
