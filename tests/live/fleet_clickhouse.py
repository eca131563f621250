#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""Two agents ship to one real ClickHouse: every window exactly once, and the fleet report equals
the merge of the per-host stores (docs/fleet.md).

Starts Debian's clickhouse-server on loopback (free ports, data in a temp dir), then two agents
(`inferscope agent --sink clickhouse://127.0.0.1:PORT/fleet --label host=host-a|host-b`) fed by
replays through `inferscope run` (tests/fakes/replay_engine, the bundled vLLM example trace, 1 s
windows). Choreography:
  1. agent A replays in real time for ~10 s; ClickHouse is killed (SIGKILL) 3 s in and started
     again 4 s later: A spools meanwhile, then drains (a restart mid-run);
  2. while ClickHouse is down, agent B stores a replay; once its rows sit in the spool, B is killed
     (SIGKILL) and started again on the same state dir after ClickHouse is back: the new agent
     drains the dead one's spool;
  3. both agents stop cleanly.
Checked per host: the process windows in ClickHouse (distinct pid, process start, window start)
equal the windows rows of its SQLite store; no key twice (plain count = FINAL count = distinct
keys before any OPTIMIZE, and after OPTIMIZE ... FINAL too); no row dropped (status
`dropped_rows` 0, spool drained); `inferscope report --source ... --group-by host --format json`
gives each host the kernel count, busy time and forward phases (`phases`, schema 4's phases table)
of `inferscope report --state-dir` of that host, and `report --source ... --host H --views kernels`
the launch configurations of `report --views kernels` on H's store (schema 5);
`inferscope diff --source ... --host H` over two ranges equals `inferscope diff --state-dir` of
H's store (every change, note and verdict), and a host-a/host-b label diff compares; `inferscope
context --source ... --host H` has the store's category, kernel, rank, idle and forward-phase
sections and a subset of its findings, and without --host a fleet section listing both hosts
within the budget (and `mcp --source`'s get_context the same fleet and phase sections).

Usage: fleet_clickhouse.py --inferscope BIN --replay-engine BIN
Exit codes: 0 ok, 1 failure, 77 skipped (no clickhouse-server; a failure when
INFERSCOPE_REQUIRE_CLICKHOUSE=1).
"""

import argparse
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request

from live_common import REPO, api_request, wait_for_socket

TRACE = os.path.join(REPO, "examples", "vllm_tp2_decode", "rank0.json.gz")
DB = "fleet"


class Failure(Exception):
    pass


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def server_binary():
    env = os.environ.get("INFERSCOPE_CLICKHOUSE_SERVER")
    if env:
        return env
    for p in ("/usr/sbin/clickhouse-server", "/usr/bin/clickhouse-server"):
        if os.access(p, os.X_OK):
            return p
    return None


class ClickHouse:
    """A throwaway server; start() may repeat on the same data dir (a restart)."""

    def __init__(self, binary, work):
        self.binary, self.dir = binary, os.path.join(work, "clickhouse")
        os.makedirs(self.dir)
        self.http_port, tcp_port = free_port(), free_port()
        d = self.dir
        with open(os.path.join(d, "config.xml"), "w") as f:
            f.write("""<?xml version="1.0"?>
<yandex>
<logger><level>warning</level><log>%(d)s/server.log</log><errorlog>%(d)s/err.log</errorlog>
<size>10M</size><count>1</count></logger>
<http_port>%(http)d</http_port><tcp_port>%(tcp)d</tcp_port><listen_host>127.0.0.1</listen_host>
<path>%(d)s/data/</path><tmp_path>%(d)s/tmp/</tmp_path><user_files_path>%(d)s/uf/</user_files_path>
<format_schema_path>%(d)s/fs/</format_schema_path>
<mark_cache_size>268435456</mark_cache_size><uncompressed_cache_size>268435456</uncompressed_cache_size>
<timezone>UTC</timezone>
<users><default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile>
<quota>default</quota></default></users><profiles><default></default></profiles>
<quotas><default></default></quotas><default_profile>default</default_profile>
<default_database>default</default_database>
</yandex>
""" % {"d": d, "http": self.http_port, "tcp": tcp_port})
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(
            [self.binary, "--config-file=" + os.path.join(self.dir, "config.xml")],
            stdout=open(os.path.join(self.dir, "stdout.log"), "a"), stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if self.query("SELECT 1").strip() == "1":
                    return
            except OSError:
                pass
            if self.proc.poll() is not None:
                raise Failure("clickhouse-server exited at start (%s/stdout.log)" % self.dir)
            time.sleep(0.1)
        raise Failure("clickhouse-server did not answer within 60 s")

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def query(self, sql):
        req = urllib.request.Request("http://127.0.0.1:%d/" % self.http_port, data=sql.encode())
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.read().decode()

    def scalar(self, sql):
        return int(self.query(sql).strip())

    @property
    def url(self):
        return "clickhouse://127.0.0.1:%d/%s" % (self.http_port, DB)


class Agent:
    def __init__(self, args, work, host, url):
        self.args, self.host, self.url = args, host, url
        self.state = os.path.join(work, host)
        self.log = os.path.join(work, host + ".log")
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(
            [self.args.inferscope, "agent", "--state-dir", self.state, "--http-port", "0",
             "--no-nvml", "--no-scrape", "--no-otlp", "--sink", self.url, "--label",
             "host=" + self.host, "--label", "cluster=test"],
            stdout=subprocess.DEVNULL, stderr=open(self.log, "a"))
        if not wait_for_socket(os.path.join(self.state, "agent.sock")):
            raise Failure("agent %s did not start (%s)" % (self.host, self.log))
        deadline = time.time() + 10
        while time.time() < deadline:  # agent.json is written once the HTTP API is up
            try:
                with open(os.path.join(self.state, "agent.json")) as f:
                    info = json.load(f)
                if info.get("pid") == self.proc.pid:
                    self.api = info["endpoints"]["api"]
                    return
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.05)
        raise Failure("agent %s wrote no agent.json" % self.host)

    def status(self):
        with urllib.request.urlopen(api_request(self.state, self.api + "/status"), timeout=5) as r:
            return json.loads(r.read().decode())

    def sink(self):
        s = self.status()["sink"]
        if s is None:
            raise Failure("agent %s: no sink in /api/v1/status" % self.host)
        return s

    def replay(self, extra, background=False):
        cmd = [self.args.inferscope, "run", "--state-dir", self.state, "--no-agent", "--window",
               "1s", "--", self.args.replay_engine] + extra + [TRACE]
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if background:
            return p
        finish(p)

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=60)
        self.proc = None

    def store_windows(self):
        db = sqlite3.connect("file:%s?mode=ro" % os.path.join(self.state, "inferscope.db"),
                             uri=True)
        n = db.execute("SELECT count(*) FROM windows").fetchone()[0]
        db.close()
        return n

    def report(self):
        r = subprocess.run([self.args.inferscope, "report", "--state-dir", self.state, "--last",
                            "24h", "--format", "json"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60)
        if r.returncode != 0:
            raise Failure("report of %s failed: %s" % (self.host, r.stderr))
        return json.loads(r.stdout)


def finish(p):
    _, err = p.communicate(timeout=120)
    if p.returncode != 0:
        raise Failure("replay failed (%d): %s" % (p.returncode, err[-500:]))


def wait_for(what, probe, timeout_s=30.0, state=None):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.2)
    raise Failure("timed out waiting for " + what + (" (%s)" % state() if state else ""))


def settled(agent):
    """True once everything the agent stored has been acknowledged by ClickHouse."""
    s = agent.sink()
    return s["connected"] and s["spooled_rows"] == 0 and s["queued_rows"] == 0


def check(ch, agents, inferscope):
    problems = []
    for a in agents:
        h = "'%s'" % a.host
        stored = a.store_windows()
        windows = ch.scalar("SELECT uniqExact(pid, process_start_ns, window_start_ns) FROM "
                            "%s.inferscope_windows WHERE host = %s" % (DB, h))
        final = ch.scalar("SELECT count() FROM %s.inferscope_windows FINAL WHERE host = %s" % (DB, h))
        keys = ch.scalar("SELECT uniqExact(pid, process_start_ns, window_start_ns, rank, device) "
                         "FROM %s.inferscope_windows WHERE host = %s" % (DB, h))
        print("%s: %d windows stored, %d in ClickHouse (%d device rows)" % (a.host, stored,
                                                                             windows, final))
        if stored == 0:
            problems.append("%s stored no windows" % a.host)
        if windows != stored:
            problems.append("%s: %d windows stored, %d in ClickHouse" % (a.host, stored, windows))
        if final != keys:
            problems.append("%s: %d rows after FINAL, %d distinct keys" % (a.host, final, keys))
        # The sink counts a batch whose answer was lost before resending it: a plain read (no
        # FINAL, before the OPTIMIZE below) is exact too, restart and killed agent included.
        plain = ch.scalar("SELECT count() FROM %s.inferscope_windows WHERE host = %s" % (DB, h))
        if plain != keys:
            problems.append("%s: %d rows without FINAL, %d distinct keys (a retry duplicated)"
                            % (a.host, plain, keys))
    for table in ("inferscope_windows", "inferscope_window_categories",
                  "inferscope_window_kernels", "inferscope_window_syncs",
                  "inferscope_window_phases", "inferscope_window_ranges"):
        ch.query("OPTIMIZE TABLE %s.%s FINAL" % (DB, table))
        plain = ch.scalar("SELECT count() FROM %s.%s" % (DB, table))
        final = ch.scalar("SELECT count() FROM %s.%s FINAL" % (DB, table))
        if plain != final:
            problems.append("%s: %d rows, %d after FINAL (duplicates)" % (table, plain, final))
    r = subprocess.run([inferscope, "report", "--source", ch.url, "--last", "24h", "--group-by",
                        "host", "--label", "cluster=test", "--exact", "--format", "json"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    if r.returncode != 0:
        raise Failure("fleet report failed: " + r.stderr)
    fleet = {g["key"]: g for g in json.loads(r.stdout)["groups"]}
    for a in agents:
        local = a.report()
        kernels = sum(rk["kernel_count"] for rk in local["ranks"])
        busy = sum(rk["temporal_breakdown"]["busy_ns"] for rk in local["ranks"])
        g = fleet.get(a.host)
        if g is None:
            problems.append("fleet report has no %s" % a.host)
            continue
        print("%s: kernels %d local / %d fleet, busy %d / %d ns" % (a.host, kernels,
                                                                   g["kernel_count"], busy,
                                                                   g["busy_ns"]))
        if (g["kernel_count"], g["busy_ns"]) != (kernels, busy):
            problems.append("%s: fleet report %d kernels %d ns busy, the store %d and %d" %
                            (a.host, g["kernel_count"], g["busy_ns"], kernels, busy))
        # The forward phases (schema 4's phases table): the store report's, summed over its
        # ranks, field for field.
        if not local["summary"]["phases"]["list"]:
            problems.append("%s: the store report has no forward phases to compare" % a.host)
        elif g.get("phases") != local["summary"]["phases"]:
            problems.append("%s: fleet report phases %s, the store's %s" % (
                a.host, json.dumps(g.get("phases")), json.dumps(local["summary"]["phases"])))
        else:
            print("%s: forward phases equal (%s)" % (a.host, ", ".join(
                "%s %d steps" % (p["phase"], p["steps"]) for p in g["phases"]["list"])))
    problems += check_launch_configs(ch, agents, inferscope)
    problems += check_diff(ch, agents, inferscope)
    problems += check_context(ch, agents, inferscope)
    return problems


def kernel_stats(report):
    """The kernels view's rows of a report with --views kernels, by kernel name, over every
    input, process and device (a host's replay is one process on one GPU)."""
    rows, devices = {}, 0
    for i in report["views"]["inputs"]:
        for p in i["processes"]:
            for d in p["devices"]:
                devices += 1
                for k in d.get("kernel_stats", []):
                    rows[k["name"]] = k
    return rows, devices


def check_launch_configs(ch, agents, inferscope):
    """Schema 5: `report --source ... --host H --views kernels` lists each kernel's launch
    configurations as `report --views kernels` on H's store does (the same merge of the same
    windows: configurations, launches, time, order and distinct count)."""
    problems = []
    for a in agents:
        local = run_json([inferscope, "report", "--state-dir", a.state, "--last", "24h",
                          "--views", "kernels", "--format", "json"])
        fleet = run_json([inferscope, "report", "--source", ch.url, "--host", a.host, "--last",
                          "24h", "--exact", "--views", "kernels", "--format", "json"])
        lk, ldevices = kernel_stats(local)
        fk, _ = kernel_stats(fleet)
        if ldevices != 1:
            print("%s: %d GPUs in the store's kernels view; configurations not compared" %
                  (a.host, ldevices))
            continue
        shared = [n for n in lk if n in fk]
        with_configs = [n for n in shared if lk[n]["launch_configs"]]
        if not with_configs:
            problems.append("%s: no kernel with launch configurations in both views (store %d, "
                            "fleet %d kernels)" % (a.host, len(lk), len(fk)))
        for n in shared:
            keys = ("distinct_launch_configs", "launch_configs")
            if tuple(lk[n][k] for k in keys) != tuple(fk[n][k] for k in keys):
                problems.append("%s: %s: fleet configurations %s, the store's %s" % (
                    a.host, n[:60], json.dumps(fk[n]["launch_configs"]),
                    json.dumps(lk[n]["launch_configs"])))
                break
        print("%s: launch configurations of %d kernels equal to the store's" % (
            a.host, len(with_configs)))
    return problems


def run_json(cmd, codes=(0,)):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    if r.returncode not in codes:
        raise Failure("%s exited %d: %s" % (" ".join(cmd[1:3]), r.returncode, r.stderr.strip()))
    return json.loads(r.stdout)


def check_diff(ch, agents, inferscope):
    """diff --source equals diff --state-dir on the same windows (one host, two ranges), and
    compares two host selections of one range."""
    problems = []
    compared = 0
    for a in agents:
        h = "'%s'" % a.host
        starts = ch.scalar("SELECT uniqExact(window_start_ns) FROM %s.inferscope_windows WHERE "
                           "host = %s" % (DB, h))
        if starts < 4:  # host-b's one fast replay fills a single window: no two ranges to cut
            print("%s: %d window starts, too few for two ranges" % (a.host, starts))
            continue
        compared += 1
        lo, mid, hi = [int(x) for x in ch.query(
            "SELECT min(window_start_ns), quantileExact(0.5)(window_start_ns), max(window_end_ns) "
            "FROM %s.inferscope_windows WHERE host = %s FORMAT TabSeparated" % (DB, h)).split()]
        # Unix seconds (ParseTimePoint's form); the split falls inside the run's windows.
        ranges = ["--baseline-range", "%d..%d" % (lo // 10**9, mid // 10**9),
                  "--candidate-range", "%d..%d" % (mid // 10**9, hi // 10**9 + 1)]
        local = run_json([inferscope, "diff", "--state-dir", a.state, "--format", "json", "--all"] +
                         ranges, codes=(0, 1))
        fleet = run_json([inferscope, "diff", "--source", ch.url, "--host", a.host, "--exact",
                          "--format", "json", "--all"] + ranges, codes=(0, 1))
        # The phases table carries the forward phases, so the diffs compare them too.
        if not any(c["key"].startswith("phase.") for c in local["changes"]):
            problems.append("%s: the store's diff has no phase changes to compare" % a.host)
        same = ("normalization", "regression", "regressions", "improvements", "notes", "changes",
                "ranges")
        diffs = [k for k in same if local.get(k) != fleet.get(k)]
        print("%s: diff --source %d changes (%s), diff --state-dir %d; %s" % (
            a.host, len(fleet["changes"]), fleet["baseline"]["slices"], len(local["changes"]),
            "equal" if not diffs else "differ in " + ", ".join(diffs)))
        if not local["changes"]:
            problems.append("%s: the local diff compared nothing" % a.host)
        for k in diffs:
            if k == "changes":
                lc = {c["key"]: c for c in local["changes"]}
                for c in fleet["changes"]:
                    if lc.get(c["key"]) != c:
                        problems.append("%s: diff change %s: fleet %s, store %s" % (
                            a.host, c["key"], json.dumps(c), json.dumps(lc.get(c["key"]))))
                        break
            problems.append("%s: diff --source and diff --state-dir differ in %s" % (a.host, k))
    if compared == 0:
        problems.append("no host had enough windows to diff two ranges")
    # Two selections of one range: host-a against host-b by label (the agents' host labels).
    both = run_json([inferscope, "diff", "--source", ch.url, "--baseline-label", "host=host-a",
                     "--label", "host=host-b", "--candidate-range", "-24h..now", "--format",
                     "json"], codes=(0, 1))
    if "host=host-a" not in both["baseline"]["label"] or "host=host-b" not in both["candidate"]["label"]:
        problems.append("selection diff sides: %s / %s" % (both["baseline"]["label"],
                                                           both["candidate"]["label"]))
    if not both["changes"]:
        problems.append("the host-a/host-b diff compared nothing")
    return problems


def sections(text):
    """The context's sections by title (up to the first parenthesis)."""
    out, title = {}, None
    for line in text.splitlines():
        if line.startswith("## "):
            title = line[3:].split(" (")[0]
            out[title] = []
        elif title:
            out[title].append(line)
    return {k: "\n".join(v).strip() for k, v in out.items()}


def check_context(ch, agents, inferscope):
    """context --source gives the per-host store's sections for one host, and a fleet section
    that lists every host."""
    problems = []
    for a in agents:
        local = subprocess.run([inferscope, "context", "--state-dir", a.state, "--last", "24h",
                                "--budget", "20000"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, timeout=60)
        fleet = subprocess.run([inferscope, "context", "--source", ch.url, "--host", a.host,
                                "--exact", "--last", "24h", "--budget", "20000"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               timeout=60)
        if local.returncode or fleet.returncode:
            problems.append("%s: context exited %d (store) / %d (fleet): %s" % (
                a.host, local.returncode, fleet.returncode, (local.stderr + fleet.stderr)[-300:]))
            continue
        ls, fs = sections(local.stdout), sections(fleet.stdout)
        compared = ["GPU time by category", "Top kernels", "Why the GPU was idle",
                    "Forward phases"]
        if "Per rank" in ls or "Per rank" in fs:
            compared.append("Per rank")
        # The diagnosis: the fact tables carry no copies, launch costs, kernel duration
        # histograms, sync targets, subcategories or prefill steps (docs/fleet.md), so the
        # findings that need them are missing; every finding the fleet makes is the store's,
        # with the same severity and stake.
        def findings(text):
            return {l.split(":")[0] for l in text.splitlines() if l.startswith("- [")}
        lf, ff = findings(ls.get("Diagnosis", "")), findings(fs.get("Diagnosis", ""))
        if not ff or not ff <= lf:
            problems.append("%s: fleet findings %s are not among the store's %s" % (
                a.host, sorted(ff), sorted(lf)))
        for title in compared:
            if title not in ls:
                problems.append("%s: the store's context has no '%s' section" % (a.host, title))
            elif ls[title] != fs.get(title):
                problems.append("%s: context section '%s' differs:\n--- store\n%s\n--- fleet\n%s" %
                                (a.host, title, ls[title], fs.get(title)))
        print("%s: context --source %d bytes, sections %s equal to the store's" % (
            a.host, len(fleet.stdout), ", ".join(t for t in compared if ls.get(t) == fs.get(t))))
    whole = subprocess.run([inferscope, "context", "--source", ch.url, "--label", "cluster=test",
                            "--last", "24h", "--budget", "3000"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60)
    if whole.returncode != 0:
        return problems + ["context --source failed: " + whole.stderr.strip()]
    fleet_section = [t for t in sections(whole.stdout) if t.startswith("Fleet: worst hosts")]
    if not fleet_section:
        problems.append("context --source has no fleet section:\n" + whole.stdout)
    elif not all(a.host in sections(whole.stdout)[fleet_section[0]] for a in agents):
        problems.append("the fleet section misses a host:\n" + whole.stdout)
    if len(whole.stdout) > 3000 * 3:
        problems.append("context --source --budget 3000 wrote %d bytes" % len(whole.stdout))
    return problems + check_mcp(ch, agents, inferscope, whole.stdout)


def mcp_session(inferscope, source_args, tool_calls):
    """Runs `inferscope mcp SOURCE` over stdio: initialize, then each (tool, arguments); returns
    (problems, results in order)."""
    calls = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "fleet_clickhouse", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    calls += [{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
               "params": {"name": tool, "arguments": args}}
              for i, (tool, args) in enumerate(tool_calls)]
    r = subprocess.run([inferscope, "mcp"] + source_args,
                       input="".join(json.dumps(c) + "\n" for c in calls),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    if r.returncode != 0:
        return ["mcp %s exited %d: %s" % (" ".join(source_args), r.returncode, r.stderr)], []
    replies = {m.get("id"): m for m in map(json.loads, r.stdout.splitlines())}
    problems, results = [], []
    for i in range(len(tool_calls) + 1):
        if i not in replies or "error" in replies[i] or replies[i]["result"].get("isError"):
            problems.append("mcp %s: call %d failed: %s" % (" ".join(source_args), i,
                                                            replies.get(i)))
        elif i > 0:
            results.append(replies[i]["result"])
    return problems, results


def check_mcp(ch, agents, inferscope, context_text):
    """`mcp --source` serves the fleet: get_context has the fleet section of `context --source`
    for the same selection, and get_breakdown's GPU time per category is the sum of the hosts'
    own stores' answers."""
    last = {"last": "24h"}
    problems, (ctx, fleet_cats) = mcp_session(
        inferscope, ["--source", ch.url, "--label", "cluster=test"],
        [("get_context", {"range": last, "budget": 3000}),
         ("get_breakdown", {"range": last, "group_by": "category"})]) or (None, (None, None))
    if problems:
        return problems
    text = ctx["content"][0]["text"]
    mcp_fleet = [t for t in sections(text) if t.startswith("Fleet: worst hosts")]
    cli_fleet = [t for t in sections(context_text) if t.startswith("Fleet: worst hosts")]
    if not mcp_fleet or not cli_fleet:
        problems.append("mcp --source get_context has no fleet section:\n" + text)
    elif sections(text)[mcp_fleet[0]] != sections(context_text)[cli_fleet[0]]:
        problems.append("mcp --source fleet section differs from context --source's:\n%s\n---\n%s"
                        % (sections(text)[mcp_fleet[0]], sections(context_text)[cli_fleet[0]]))
    # The forward phases of the whole fleet (both hosts' phase rows summed), as context --source.
    if "Forward phases" not in sections(context_text):
        problems.append("context --source has no Forward phases section:\n" + context_text)
    elif sections(text).get("Forward phases") != sections(context_text)["Forward phases"]:
        problems.append("mcp --source Forward phases differ from context --source's:\n%s\n---\n%s"
                        % (sections(text).get("Forward phases"),
                           sections(context_text)["Forward phases"]))
    want = {}
    for a in agents:
        p, results = mcp_session(inferscope, ["--state-dir", a.state],
                                 [("get_breakdown", {"range": last, "group_by": "category"})])
        if p:
            return problems + p
        for row in results[0]["structuredContent"]["rows"]:
            want[row["key"]] = want.get(row["key"], 0) + row["time_ns"]
    got = {row["key"]: row["time_ns"] for row in fleet_cats["structuredContent"]["rows"]}
    if not got or got != want:
        problems.append("mcp --source get_breakdown by category %s, the hosts' stores sum to %s" %
                        (got, want))
    if not problems:
        print("mcp --source: get_context %d bytes with the fleet section of context --source; "
              "get_breakdown: %d categories equal to the stores' sums" % (len(text), len(got)))
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--inferscope", required=True)
    p.add_argument("--replay-engine", required=True)
    p.add_argument("--keep", action="store_true")
    args = p.parse_args()
    binary = server_binary()
    if binary is None:
        if os.environ.get("INFERSCOPE_REQUIRE_CLICKHOUSE") == "1":
            print("FAIL: clickhouse-server not installed and INFERSCOPE_REQUIRE_CLICKHOUSE=1")
            return 1
        print("SKIP: clickhouse-server not installed (apt-get install clickhouse-server)")
        return 77
    work = tempfile.mkdtemp(prefix="inferscope_fleet_")
    ch = ClickHouse(binary, work)
    a = Agent(args, work, "host-a", ch.url)
    b = Agent(args, work, "host-b", ch.url)
    ok = False
    try:
        ch.start()
        a.start()
        b.start()
        # 1. A replays for ~10 s in real time; ClickHouse dies 3 s in.
        long_replay = a.replay(["--speed", "1", "--loop-for", "10", "--loop-period", "1"],
                               background=True)
        time.sleep(3)
        ch.kill()
        # 2. B stores a replay while ClickHouse is down; its rows land in the spool.
        b.replay(["--speed", "0"])
        # Every window the process sent is stored (and so handed to the sink) ...
        wait_for("host-b to store its windows",
                 lambda: (lambda st: st["connected_processes"] == 0 and st["windows_stored"] > 0
                          and st["windows_stored"] == st["windows_received"])(b.status()),
                 state=lambda: json.dumps(b.status()))
        # ... and two more failed flushes have passed: the one that took the last rows from
        # memory has written them to the spool (a flush counts its failure before spooling).
        failures = b.sink()["failures"]
        wait_for("host-b's rows in the spool",
                 lambda: (lambda k: k["failures"] >= failures + 2 and k["queued_rows"] == 0 and
                          k["spooled_rows"] > 0)(b.sink()),
                 timeout_s=60, state=lambda: json.dumps(b.sink()))
        spooled_b = b.sink()["spooled_rows"]
        b.stop(signal.SIGKILL)
        print("host-b killed with %d rows spooled; host-a spooled %d so far" %
              (spooled_b, a.sink()["spooled_rows"]))
        time.sleep(1)
        ch.start()  # the same data dir: the tables and A's early rows are still there
        finish(long_replay)
        b.start()
        if b.sink()["spooled_rows"] == 0 and b.sink()["spool_drained"] == 0:
            raise Failure("the restarted host-b found nothing in its spool")
        wait_for("both agents to drain", lambda: settled(a) and settled(b), 60,
                 state=lambda: json.dumps([a.sink(), b.sink()]))
        time.sleep(2.5)
        wait_for("both agents to settle", lambda: settled(a) and settled(b), 30)
        stats = {x.host: x.sink() for x in (a, b)}
        a.stop()
        b.stop()
        print("sink stats:", json.dumps(stats, sort_keys=True))
        problems = check(ch, [a, b], args.inferscope)
        for host, s in stats.items():
            if s["dropped_rows"]:
                problems.append("%s dropped %d rows" % (host, s["dropped_rows"]))
        if stats["host-a"]["spooled_total"] == 0:
            problems.append("host-a spooled nothing while ClickHouse was down")
        if stats["host-b"]["spool_drained"] < spooled_b:
            problems.append("host-b drained %d of the %d rows the killed agent spooled" %
                            (stats["host-b"]["spool_drained"], spooled_b))
        for prob in problems:
            print("FAIL:", prob)
        ok = not problems
        if ok:
            print("OK: every window once in ClickHouse across a restart and a killed agent; "
                  "the fleet report equals the per-host stores")
        return 0 if ok else 1
    except Failure as e:
        print("FAIL:", e)
        return 1
    finally:
        for x in (a, b):
            try:
                x.stop(signal.SIGKILL)
            except Exception:
                pass
        ch.kill()
        if ok and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("work dir kept:", work)


if __name__ == "__main__":
    sys.exit(main())
