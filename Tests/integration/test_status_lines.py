"""Every status Kiln emits reaches the client through nginx with its standard reason phrase.

nginx copies the text of a FastCGI `Status:` header into the status line it sends, so a
hand-written table that lacked 502 and 504 once answered `HTTP/1.1 502 Status`. The phrases now
come from swift-http-types; this test provokes each status for real (a local origin that refuses,
one that never answers, an expired URL, a forbidden operation, ...) and reads nginx's status line.
"""
from __future__ import annotations

import http.client
import socket
import threading

import pytest

from helpers import PHOTO_HD

# RFC 9110's phrases (as swift-http-types spells them); 499 is never sent to a client.
STANDARD = {
    200: "OK", 304: "Not Modified", 400: "Bad Request", 403: "Forbidden", 404: "Not Found",
    405: "Method Not Allowed", 410: "Gone", 413: "Content Too Large", 415: "Unsupported Media Type",
    422: "Unprocessable Content", 502: "Bad Gateway", 504: "Gateway Timeout",
}


def _request(port: int, method: str, path: str, headers: dict[str, str] | None = None,
             timeout: float = 30) -> tuple[int, str, dict[str, str]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, headers=headers or {})
        r = conn.getresponse()
        r.read()
        return r.status, r.reason, {k.lower(): v for k, v in r.getheaders()}
    finally:
        conn.close()


@pytest.fixture
def silent_origin():
    """A TCP server on 127.0.0.1 that accepts and never answers (a stuck origin)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                c, _ = srv.accept()
                held.append(c)
            except OSError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield srv.getsockname()[1]
    stop.set()
    t.join(2)
    for c in held:
        c.close()
    srv.close()


def _refused_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there any more: connections are refused
    return port


def test_every_status_has_its_standard_reason_phrase(make_stack, silent_origin):
    refused = _refused_port()
    s = make_stack(workers=2, extra_args=[
        "--set", f"source.origins=down=http://127.0.0.1:{refused}/x/,stuck=http://127.0.0.1:{silent_origin}/x/",
        "--set", "source.allowed_networks=127.0.0.1/32",
        "--set", "source.fetch_timeout=1s",
        "--set", "security.allowed_operations=resize",
    ])
    ok_path = f"/w:64/f:jpeg/{PHOTO_HD}"
    seen: dict[int, str] = {}

    status, reason, headers = _request(s.port, "GET", ok_path)
    seen[status] = reason
    assert status == 200
    status, reason, _ = _request(s.port, "GET", ok_path, {"If-None-Match": headers["etag"]})
    seen[status] = reason
    cases = [
        ("GET", "/w:abc/pillow_hopper.jpg", 400),                  # a bad argument
        ("GET", "/bl:2/pillow_hopper.jpg", 403),                   # not in security.allowed_operations
        ("GET", "/w:10/no_such_file.jpg", 404),
        ("POST", ok_path, 405),
        ("GET", "/exp:1/w:10/pillow_hopper.jpg", 410),             # expired in 1970
        ("GET", "/w:100/png_bomb_12000x12000_gray8.png", 413),
        ("GET", "/w:10/plain_text_named.png", 415),
        ("GET", "/w:10/pngsuite_xc1n0g08.png", 422),              # corrupt IHDR
        ("GET", "/w:10/down/a.jpg", 502),                          # the origin refuses connections
        ("GET", "/w:10/stuck/a.jpg", 504),                         # the origin never answers
    ]
    for method, path, expected in cases:
        status, reason, _ = _request(s.port, method, path)
        assert status == expected, f"{method} {path}: {status} {reason}\n{s.logs()}"
        seen[status] = reason
    for status, reason in sorted(seen.items()):
        assert reason == STANDARD[status], f"{status}: status line says {reason!r}, expected {STANDARD[status]!r}"
    assert set(seen) == set(STANDARD), sorted(seen)
