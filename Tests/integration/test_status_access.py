"""The master's status socket (issue 25, item 6): `/_kiln/status`, `/_kiln/metrics` and
`/_kiln/health` ask for `server.peer_secret` like the main socket (they answered any allowed peer
without it), and the status page and the slow log never show a URL's signature (a bearer
credential for that URL)."""
from __future__ import annotations

import json
import socket
import subprocess
import threading
import time

from fcgiclient import fcgi_params, fcgi_request
from helpers import KILN_BIN, SLEEP_ON, sign_path, sleep_url, status_json
from stack import free_port, tail

SECRET = "s3cr3t-" + "ab" * 16
K1 = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"
S1 = "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"
PAGES = ("/_kiln/status", "/_kiln/status?json", "/_kiln/metrics", "/_kiln/health")


def test_status_socket_over_tcp_asks_for_the_peer_secret(root, tmp_path):
    """kiln on 127.0.0.1:P (allowed_peers: loopback by default), status on P + 1: without the
    secret, or with a wrong one, 403 and the one-line reason; with it, the pages."""
    log = open(tmp_path / "kiln.log", "wb")
    for attempt in range(3):  # port + 1 may be taken by someone else: another pair
        port = free_port()
        while port >= 65_534:
            port = free_port()
        kiln = subprocess.Popen([str(KILN_BIN), "serve", "--listen", f"127.0.0.1:{port}", "--workers", "1", "--root", str(root),
                                 "--set", f"server.peer_secret={SECRET}", "--set", "cache.disk_path="], stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        deadline = time.monotonic() + 20
        while kiln.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port + 1), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, tail(tmp_path / "kiln.log")
                time.sleep(0.05)
        if kiln.poll() is None:
            break
        assert attempt < 2, tail(tmp_path / "kiln.log")
    try:
        status = ("127.0.0.1", port + 1)
        for page in PAGES:
            for label, extra in (("no secret", {}), ("wrong secret", {"KILN_PEER_SECRET": "x" * len(SECRET)})):
                r = fcgi_request(status, fcgi_params("GET", page) | extra, timeout=10)
                assert r.status == 403, f"{page}, {label}: {r}"
                text = r.body.decode()
                assert "KILN_PEER_SECRET" in text and text.count("\n") == 1, f"{page}, {label}: {text!r}"
                assert b"uptime" not in r.body and b"kiln_" not in r.body and b"ok:" not in r.body
            ok = fcgi_request(status, fcgi_params("GET", page) | {"KILN_PEER_SECRET": SECRET}, timeout=10)
            assert ok.status == 200, f"{page} with the secret: {ok}"
        # The main socket, for comparison: the same refusal.
        main = fcgi_request(("127.0.0.1", port), fcgi_params("GET", "/w:10/pillow_hopper.jpg"), timeout=10)
        assert main.status == 403, main
        # `kiln health` sends the secret of its configuration.
        base = [str(KILN_BIN), "health", "--listen", f"127.0.0.1:{port}"]
        good = subprocess.run(base + ["--set", f"server.peer_secret={SECRET}"], capture_output=True, text=True, timeout=30)
        assert good.returncode == 0 and good.stdout.startswith("200 ok:"), (good.stdout, good.stderr)
        bad = subprocess.run(base, capture_output=True, text=True, timeout=30)
        assert bad.returncode == 1 and bad.stdout.startswith("403 "), (bad.stdout, bad.stderr)
        assert SECRET not in (tmp_path / "kiln.log").read_text(errors="replace")
    finally:
        kiln.terminate()
        kiln.wait(20)
        log.close()


def test_status_page_and_slow_log_hide_signatures(make_stack):
    s = make_stack(workers=1, extra_args=["--set", f"security.keys={K1}", "--set", f"security.salts={S1}",
                                          "--set", "limits.slow_log_after=0.3s", *SLEEP_ON])
    client = s.client()
    uri = sleep_url(2000, 123)
    signed = sign_path(uri, K1, S1)
    signature = signed.split("/")[1]
    assert len(signature) == 43
    done: list = []
    t = threading.Thread(target=lambda: done.append(client.get(signed, timeout=30)), daemon=True)
    t.start()
    seen = None
    deadline = time.monotonic() + 10
    while seen is None and time.monotonic() < deadline:
        for w in status_json(client)["workers"]:
            if w["state"] == "busy" and (w.get("stage") or "").startswith("process"):
                seen = w
        time.sleep(0.02)
    assert seen is not None, "no busy worker seen on the status page"
    assert seen["uri"] == "/<signature>" + uri, seen
    text = client.get("/_kiln/status", timeout=5)
    assert signature.encode() not in text.body and b"/<signature>" + uri.encode() in text.body, text.body
    raw = client.get("/_kiln/status?json", timeout=5).body
    assert signature.encode() not in raw, json.loads(raw)
    t.join(30)
    assert done and done[0].status == 200, done
    # The slow log names the request the same way.
    deadline = time.monotonic() + 5
    while "slow request" not in s.kiln_log.read_text(errors="replace") and time.monotonic() < deadline:
        time.sleep(0.05)
    slow = [line for line in s.kiln_log.read_text(errors="replace").splitlines() if "slow request" in line]
    assert slow and all("/<signature>" + uri in line and signature not in line for line in slow), slow
