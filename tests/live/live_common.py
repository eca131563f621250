# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""What the live-path tests share: where the real traces are, and waiting for an agent."""

import glob
import os
import socket
import time


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
