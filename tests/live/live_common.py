# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""What the live-path tests share: where the real traces are, and waiting for an agent."""

import ctypes
import ctypes.util
import glob
import json
import os
import signal
import shutil
import socket
import subprocess
import sys
import time
import zlib


def shared_traces_root():
    """$INFERSCOPE_SHARED_TRACES, else ../shared/traces beside the checkout (may not exist)."""
    return os.environ.get("INFERSCOPE_SHARED_TRACES") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "traces")


def shared_traces():
    """Every Kineto and Nsight trace under the root, sorted; None when the root is absent."""
    root = shared_traces_root()
    if not os.path.isdir(root):
        return None
    found = glob.glob(os.path.join(root, "**", "*.json.gz"), recursive=True)
    found += glob.glob(os.path.join(root, "**", "*.sqlite"), recursive=True)
    return sorted(found)


REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def bundled_traces(work):
    """The project's own traces, for a checkout without ../shared: the bundled 2-GPU vLLM example
    and the generated scenario traces (tools/make_scenario_traces.py, written into `work`)."""
    traces = sorted(glob.glob(os.path.join(REPO, "examples", "vllm_tp2_decode", "*.json.gz")))
    out = os.path.join(work, "scenarios")
    subprocess.run([sys.executable, os.path.join(REPO, "tools", "make_scenario_traces.py"),
                    "--out", out, "--quiet"], check=True)
    traces += sorted(t for t in glob.glob(os.path.join(out, "**", "*.json.gz"), recursive=True)
                     if os.sep + "pairs" + os.sep not in t)
    return traces


def shared_trace(name):
    """The first shared trace file called `name`, or None."""
    hits = glob.glob(os.path.join(shared_traces_root(), "**", name), recursive=True)
    return hits[0] if hits else None


def wait_for_socket(path, timeout_s=10.0):
    """True once a unix socket at `path` accepts a connection, False after `timeout_s`."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            s.close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


_zstd = None


def inflate_payload(blob):
    """A stored payload (src/store, docs/agent.md): byte 0 the codec (1 zlib, 2 zstd), bytes
    1-4 the inflated size (u32 LE), then the compressed bytes. zstd through the system's libzstd
    (Python's standard library has no zstd before 3.14). Raises ValueError when it is not one."""
    global _zstd
    if len(blob) < 5:
        raise ValueError("payload shorter than its header")
    codec, size, body = blob[0], int.from_bytes(blob[1:5], "little"), bytes(blob[5:])
    if codec == 1:
        try:
            return zlib.decompress(body)
        except zlib.error as e:
            raise ValueError(str(e))
    if codec != 2:
        raise ValueError("unknown codec %d" % codec)
    if _zstd is None:
        _zstd = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
        _zstd.ZSTD_decompress.restype = ctypes.c_size_t
        _zstd.ZSTD_decompress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                                          ctypes.c_size_t]
        _zstd.ZSTD_isError.restype = ctypes.c_uint
        _zstd.ZSTD_isError.argtypes = [ctypes.c_size_t]
    out = ctypes.create_string_buffer(max(size, 1))
    got = _zstd.ZSTD_decompress(out, size, body, len(body))
    if _zstd.ZSTD_isError(got) or got != size:
        raise ValueError("zstd payload does not inflate")
    return out.raw[:size]


def agent_endpoints(state, timeout_s=10.0):
    """The `endpoints` of the agent.json an agent writes into `state` once it listens (waits up to
    timeout_s for the file and its key). Raises RuntimeError when it does not appear."""
    deadline = time.time() + timeout_s
    while True:
        try:
            with open(os.path.join(state, "agent.json")) as f:
                return json.load(f)["endpoints"]
        except (OSError, ValueError, KeyError):
            if time.time() > deadline:
                raise RuntimeError("no endpoints in %s/agent.json after %.0f s" % (state, timeout_s))
            time.sleep(0.05)


def agent_token(state):
    """The agent's access token (<state>/agent.token), which every API route but /metrics needs as
    `Authorization: Bearer` (docs/agent.md, "Access")."""
    with open(os.path.join(state, "agent.token")) as f:
        return f.read().strip()


def api_request(state, url, data=None, headers=None, method=None):
    """A urllib Request for `url` carrying the state dir's token (POST when `data` is given)."""
    import urllib.request
    h = {"Authorization": "Bearer " + agent_token(state)}
    h.update(headers or {})
    return urllib.request.Request(url, data=data, headers=h, method=method)


def api_get(state, url, timeout=10.0):
    """GET `url` with the state dir's token; the body as text (raises on HTTP errors)."""
    import urllib.request
    with urllib.request.urlopen(api_request(state, url), timeout=timeout) as r:
        return r.read().decode("utf-8")


def finish(failures, work, keep=False):
    """A live test's ending: prints each failure, keeps the work dir when something failed (or on
    --keep) and says where it is, else removes it. Returns the exit code (1 on failures)."""
    for f in failures:
        print("FAIL: " + f)
    if failures or keep:
        print("work dir: " + work)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


def stop_agent(agent, timeout_s=30):
    """SIGTERM, then kill if the agent has not exited within timeout_s. True when it stopped on
    SIGTERM (its exit code is then agent.returncode)."""
    agent.send_signal(signal.SIGTERM)
    try:
        agent.wait(timeout=timeout_s)
        return True
    except subprocess.TimeoutExpired:
        agent.kill()
        agent.wait()
        return False
