#!/usr/bin/env python3
# Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
"""Another local user, and a web page, against the agent's HTTP listener (docs/agent.md, "Access").

Starts `inferscope agent --state-dir D --http-port 0` as this user, then, as another uid (65534,
through `setpriv --reuid --regid --clear-groups`, with Debian's /usr/bin/python3):
  - D/agent.token cannot be read (D is 0700);
  - every route of the API index (`GET /api/v1`, read with the token), each with the method and
    parameters a real client sends, the dashboard (/ui/, /ui/app.js), /mcp and /v1/traces answer
    401; `POST /api/v1/capture?duration=2s` starts nothing; /metrics answers 200 (open on purpose,
    for scrapers);
  - a forged dashboard cookie and a sign-in link without a valid code open nothing;
  - with D and its socket opened to others for the check, a connection to the ingest socket is
    closed at once (the agent checks the peer's uid) and counted in refused_connections.
As the owner: with the token every route answers (not 401/403); a foreign Origin is 403 and a
rebinding Host 400 even with the token; a text/plain POST carrying a signed-in browser's cookie
(what any page could send) is 403 and starts no capture.
Before the access model every one of the other user's requests was served (200/202).

Usage: access_other_user.py --inferscope BIN [--replay-engine BIN]
Exit codes: 0 pass, 1 failure, 77 skipped (not root, or no setpriv: no second uid to be).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

from live_common import agent_endpoints, agent_token, finish, stop_agent, wait_for_socket

OTHER_UID = 65534
SETPRIV = shutil.which("setpriv")
PYTHON = "/usr/bin/python3"  # readable by every uid (a pyenv under /root is not)

# Runs as the other uid: reads [[method, url, headers, body], ...] on stdin, prints the statuses,
# and whether it could read the token file.
OTHER_SCRIPT = r"""
import json, sys, urllib.error, urllib.request
job = json.load(sys.stdin)
out = {"statuses": [], "token_read": None}
try:
    open(job["token_path"]).read()
    out["token_read"] = "read"
except OSError as e:
    out["token_read"] = type(e).__name__
for method, url, headers, body in job["requests"]:
    req = urllib.request.Request(url, data=body.encode() if body is not None else None,
                                 headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            out["statuses"].append(r.status)
    except urllib.error.HTTPError as e:
        out["statuses"].append(e.code)
    except Exception as e:
        out["statuses"].append(str(e))
print(json.dumps(out))
"""

# Runs as the other uid: connects to the ingest socket and says whether the agent closed it.
SOCKET_SCRIPT = r"""
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(5)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("cannot connect: %s" % e)
    sys.exit(0)
try:
    print("closed" if s.recv(1) == b"" else "the agent sent bytes")
except socket.timeout:
    print("still open after 5 s")
"""

# The parameters a client sends to each route, so a 401 is the gate's and not a 400.
PARAMS = {
    "/api/v1/watch": "pid=%d" % os.getpid(),
    "/api/v1/capture": "duration=2s",
    "/api/v1/compare": "b_from=-10m&b_to=-5m",
    "/api/v1/capture/download": "id=1",
}


def request(url, method="GET", headers=None, body=None):
    req = urllib.request.Request(url, data=body, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode("utf-8", "replace"), r.headers
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace"), e.headers


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--inferscope", required=True)
    parser.add_argument("--replay-engine")  # live_test() passes it; unused
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    if os.geteuid() != 0 or SETPRIV is None or not os.access(PYTHON, os.X_OK):
        print("SKIP: needs root and setpriv to act as another uid (%d)" % OTHER_UID)
        return 77

    work = tempfile.mkdtemp(prefix="inferscope-access-")
    os.chmod(work, 0o755)  # the other uid may reach D's parent, not D
    state = os.path.join(work, "state")
    log = open(os.path.join(work, "agent.log"), "w")
    agent = subprocess.Popen([args.inferscope, "agent", "--state-dir", state, "--http-port", "0",
                              "--no-nvml", "--no-scrape"], stdout=subprocess.DEVNULL, stderr=log)
    failures = []
    jobs = []
    try:
        if not wait_for_socket(os.path.join(state, "agent.sock"), timeout_s=15):
            raise RuntimeError("the agent did not start (see %s)" % log.name)
        endpoints = agent_endpoints(state)
        api = endpoints["api"]
        base = api[: -len("/api/v1")]
        token = agent_token(state)
        owner = {"Authorization": "Bearer " + token}
        status, body, _ = request(api, headers=owner)
        if status != 200:
            raise RuntimeError("GET /api/v1 with the token: HTTP %d %s" % (status, body))
        routes = [r.split(" ", 1) for r in json.loads(body)["endpoints"]]
        if len(routes) < 15:
            failures.append("the index lists only %d routes: %r" % (len(routes), routes))

        def url_of(path):
            return base + path + ("?" + PARAMS[path] if path in PARAMS else "")

        # The other user: everything it could reach before.
        for method, path in routes:
            body = "{}" if method == "POST" else None
            jobs.append([method, url_of(path), {"Content-Type": "application/json"}, body])
        extra = [["GET", base + "/ui/", {}, None], ["GET", base + "/ui/app.js", {}, None],
                 ["GET", base + "/ui/login", {}, None],
                 ["GET", base + "/ui/login?code=0123456789abcdef0123456789abcdef", {}, None],
                 ["GET", api + "/status",
                  {"Cookie": "inferscope_session_%s=%s" % (base.rsplit(":", 1)[1], "0" * 64)},
                  None],
                 ["POST", api + "/capture?duration=2s", {"Content-Type": "text/plain"}, "x"]]
        jobs += extra
        other = subprocess.run(
            [SETPRIV, "--reuid=%d" % OTHER_UID, "--regid=%d" % OTHER_UID, "--clear-groups",
             PYTHON, "-c", OTHER_SCRIPT],
            input=json.dumps({"requests": jobs, "token_path": os.path.join(state, "agent.token")}),
            capture_output=True, text=True, timeout=120)
        if other.returncode != 0:
            raise RuntimeError("the other uid's client failed: %s" % other.stderr[-400:])
        seen = json.loads(other.stdout)
        if seen["token_read"] == "read":
            failures.append("uid %d read the agent's token" % OTHER_UID)
        for (method, url, _, _), got in zip(jobs, seen["statuses"]):
            path = url[len(base):].split("?")[0]
            want = 200 if path == "/metrics" else 401
            if got != want:
                failures.append("uid %d: %s %s answered %r, want %d" % (OTHER_UID, method, url,
                                                                        got, want))
        status, body, _ = request(api + "/capture", headers=owner)
        if status != 404 or "no capture yet" not in body:
            failures.append("a capture was started by another user: HTTP %d %s" % (status, body))

        # The owner, with the token: every GET route is served.
        for method, path in routes:
            if method != "GET" or path in ("/api/v1/capture/download", "/ui/login"):
                continue
            status, body, _ = request(url_of(path), headers=owner)
            if status in (401, 403):
                failures.append("the owner's GET %s: HTTP %d %s" % (path, status, body[:200]))
        # A web page: a foreign Origin, DNS rebinding, and a signed-in browser's simple POST.
        status, _, _ = request(api + "/status", headers=dict(owner, Origin="http://evil.example"))
        if status != 403:
            failures.append("a foreign Origin with the token: HTTP %d, want 403" % status)
        status, _, _ = request(api + "/status", headers=dict(owner, Host="evil.example:%s" %
                                                               base.rsplit(":", 1)[1]))
        if status != 400:
            failures.append("a rebinding Host with the token: HTTP %d, want 400" % status)
        link = subprocess.run([args.inferscope, "ui", "--state-dir", state], capture_output=True,
                              text=True, timeout=30)
        if link.returncode != 0 or "/ui/login?code=" not in link.stdout:
            raise RuntimeError("inferscope ui: %d %r %r" % (link.returncode, link.stdout,
                                                            link.stderr))

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *a, **k):
                return None

        try:
            r = urllib.request.build_opener(NoRedirect).open(link.stdout.strip(), timeout=10)
            status, headers = r.status, r.headers
        except urllib.error.HTTPError as e:
            status, headers = e.code, e.headers
        cookie = (headers.get("Set-Cookie") or "").split(";")[0]
        if status != 303 or not cookie.startswith("inferscope_session_"):
            failures.append("the sign-in link: HTTP %d, cookie %r" % (status, cookie))
        browser = {"Cookie": cookie, "Origin": base}
        status, _, _ = request(api + "/status", headers=browser)
        if status != 200:
            failures.append("the dashboard's cookie could not read /status: HTTP %d" % status)
        status, body, _ = request(api + "/capture?duration=2s", method="POST",
                                  headers=dict(browser, **{"Content-Type": "text/plain"}),
                                  body=b"start")
        if status != 403:
            failures.append("a text/plain POST with the cookie: HTTP %d %s, want 403" % (status,
                                                                                       body))
        status, body, _ = request(api + "/capture", headers=owner)
        if status != 404:
            failures.append("a page started a capture: HTTP %d %s" % (status, body))

        # The ingest socket, had the user opened D and the socket to others: the agent checks the
        # peer's uid and closes at once (without the check it would wait for a hello).
        sock = os.path.join(state, "agent.sock")
        os.chmod(state, 0o755)
        os.chmod(sock, 0o666)
        try:
            peer = subprocess.run(
                [SETPRIV, "--reuid=%d" % OTHER_UID, "--regid=%d" % OTHER_UID, "--clear-groups",
                 PYTHON, "-c", SOCKET_SCRIPT, sock], capture_output=True, text=True, timeout=30)
        finally:
            os.chmod(sock, 0o600)
            os.chmod(state, 0o700)
        if peer.stdout.strip() != "closed":
            failures.append("uid %d on the ingest socket: %s %s" % (OTHER_UID, peer.stdout.strip(),
                                                                     peer.stderr[-300:]))
        status, body, _ = request(api + "/status", headers=owner)
        refused = json.loads(body).get("refused_connections") if status == 200 else None
        if refused != 1:
            failures.append("refused_connections after the other uid's connection: %r" % refused)
    except (RuntimeError, OSError, ValueError, KeyError, subprocess.SubprocessError) as e:
        failures.append(str(e))
    finally:
        if not stop_agent(agent, 30):
            failures.append("the agent did not stop on SIGTERM")
    print("%d requests checked as uid %d, and the routes as the owner" % (len(jobs), OTHER_UID))
    return finish(failures, work, args.keep)


if __name__ == "__main__":
    sys.exit(main())
