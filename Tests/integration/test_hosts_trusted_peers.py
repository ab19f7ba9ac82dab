"""The fleet's (hostfleet.py) peer access:
- a connection from an address outside the allow-list is closed before anything is read (main
  and status port), a request without the secret or with a wrong one gets 403 and nothing
  rendered, and no log holds the secret;
- `kiln config dump` hides the secret.
"""

from __future__ import annotations

import os
import re
import subprocess
import time

from fcgiclient import fcgi_params
from helpers import KILN_BIN, assert_plain_error
from hostfleet import PORT, SECRET, SOURCE, fcgi_tcp, sign, stdout_of
from stack import tail


def test_peer_access(fleet, distribution):
    """Outside the allow-list: closed before anything is read, on the main and the status port.
    From nginx's address without the secret, or with a wrong one: 403, nothing rendered, and no
    log line holds a secret."""
    host = fleet.hosts[0]
    files_before = sum(1 for p in host.cache.rglob("*") if p.is_file())
    uri = f"/rs:61:29:force/{SOURCE}"
    params = fcgi_params("GET", sign(uri))
    params["KILN_REQUEST_ID"] = "0" * 31 + "1"
    for port in (PORT, PORT + 1):
        got = fcgi_tcp(host.addr, port, params | {"KILN_PEER_SECRET": SECRET}, source=fleet.net.stranger)
        assert got == b"", f"{fleet.net.stranger} -> {host.addr}:{port}: {len(got)} bytes answered"
    deadline = time.monotonic() + 5
    while "outside server.allowed_peers" not in host.log_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    log = host.log_text()
    assert re.search(rf"closed 1 connection on the (main|status) socket from addresses outside server.allowed_peers \(latest from {re.escape(fleet.net.stranger)}", log), tail(host.logs[-1])

    wrong = "0" * len(SECRET)
    for label, extra in (("no secret", {}), ("wrong secret", {"KILN_PEER_SECRET": wrong})):
        raw = fcgi_tcp(host.addr, PORT, params | extra, source=fleet.net.nginx_addr)
        head, _, body = stdout_of(raw).partition(b"\r\n\r\n")
        assert head.startswith(b"Status: 403"), f"{label}: {stdout_of(raw)[:300]!r}"
        text = body.decode().strip()
        assert "KILN_PEER_SECRET" in text and "\n" not in text, f"{label}: {text!r}"
        assert b"image/" not in head
    ok = stdout_of(fcgi_tcp(host.addr, PORT, params | {"KILN_PEER_SECRET": SECRET}, source=fleet.net.nginx_addr))
    assert ok.startswith(b"Status: 200") or b"Content-Type: image/jpeg" in ok.split(b"\r\n\r\n")[0], ok[:300]
    files_after = sum(1 for p in host.cache.rglob("*") if p.is_file())
    assert files_after > files_before, "the request with the secret rendered (and cached) the variant"
    deadline = time.monotonic() + 5  # the access lines of the refused requests
    while "status=403" not in host.log_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    for h in fleet.hosts:
        text = h.log_text()
        assert SECRET not in text and wrong not in text, f"host {h.addr}'s log holds a secret"
        assert "status=403" in text or h is not host
    assert SECRET not in (fleet.dir / "access.log").read_text()
    # Through nginx, nothing of this shows: a client's own Kiln-Peer-Secret header is no secret.
    r = fleet.client().get(sign(uri), headers={"Kiln-Peer-Secret": "x" * 32})
    assert r.status == 200
    r = fleet.client().get("/" + "A" * 43 + uri)
    assert r.status == 403
    assert_plain_error(r, "forged signature")


def test_secret_hidden_from_config_dump(environment_ok):
    """`kiln config dump` shows the secret (from a flag or KILN_SERVER_PEER_SECRET) as hidden."""
    for args, env in (([f"--set", f"server.peer_secret={SECRET}"], {}), ([], {"KILN_SERVER_PEER_SECRET": SECRET})):
        p = subprocess.run([str(KILN_BIN), "config", "dump", *args], capture_output=True, text=True, timeout=30,
                           env={**os.environ, **env})
        assert p.returncode == 0, p.stderr
        line = next(l for l in p.stdout.splitlines() if l.startswith("server.peer_secret "))
        assert SECRET not in p.stdout + p.stderr and "(hidden)" in line, line
    p = subprocess.run([str(KILN_BIN), "config", "dump", "--set", "server.peer_secret=short secret"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and "server.peer_secret" in p.stderr and "short secret" not in p.stderr, p.stderr
