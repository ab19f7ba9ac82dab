"""Remote sources (issue 13, first part): `source.origins` maps a first path segment to an HTTP
origin. A real origin server on loopback (Python's ThreadingHTTPServer, serving the corpus with
ETag and Last-Modified, and some misbehaving paths) and the real kiln behind nginx; the SSRF guard
is exercised with loopback addresses (127.0.0.1 allowed explicitly, 127.0.0.2 not)."""
from __future__ import annotations

import email.utils
import hashlib
import http.server
import io
import os
import threading
import time
from collections import Counter

import pytest

from helpers import CORPUS

HOPPER = "pillow_hopper.jpg"


class Origin:
    def __init__(self):
        self.counts: Counter = Counter()
        self.conditional: Counter = Counter()
        self.lock = threading.Lock()
        origin = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):  # noqa: N802
                path = self.path.lstrip("/")
                with origin.lock:
                    origin.counts[path] += 1
                    if self.headers.get("If-None-Match"):
                        origin.conditional[path] += 1
                if path == "slow.jpg":
                    time.sleep(5)
                    return self.reply(200, b"late")
                if path == "error.jpg":
                    return self.reply(503, b"down")
                if path == "loop.jpg":
                    return self.redirect(f"http://127.0.0.1:{origin.port}/loop.jpg")
                if path == "to-private.jpg":
                    return self.redirect(f"http://127.0.0.2:{origin.port}/{HOPPER}")
                if path == "moved.jpg":
                    return self.redirect(f"http://127.0.0.1:{origin.port}/{HOPPER}")
                if path == "truncated.jpg":
                    data = (CORPUS / HOPPER).read_bytes()
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data[:1000])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                file = CORPUS / path
                if "/" in path or not file.is_file():
                    return self.reply(404, b"no")
                data = file.read_bytes()
                etag = '"' + hashlib.sha256(data).hexdigest()[:16] + '"'
                if self.headers.get("If-None-Match") == etag:
                    self.send_response(304)
                    self.send_header("ETag", etag)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("ETag", etag)
                self.send_header("Last-Modified", email.utils.formatdate(file.stat().st_mtime, usegmt=True))
                self.end_headers()
                self.wfile.write(data)

            def redirect(self, location):
                self.send_response(302)
                self.send_header("Location", location)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def reply(self, status, body):
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        # 127.0.0.2 reaches the same server (the whole 127/8 is loopback): a redirect target the
        # SSRF guard must refuse even though 127.0.0.1 is allowed.
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def origin():
    o = Origin()
    yield o
    o.stop()


def remote_stack(make_stack, origin, *extra, allowed="127.0.0.1", workers=1):
    args = ["--set", f"source.origins=origin-a=http://127.0.0.1:{origin.port}/",
            "--set", "source.fetch_timeout=2s", "--set", "source.connect_timeout=1s"]
    if allowed is not None:
        args += ["--set", f"source.allowed_networks={allowed}"]
    return make_stack(workers=workers, extra_args=args + list(extra))


def _size(body: bytes):
    from PIL import Image
    return Image.open(io.BytesIO(body)).size


def test_a_remote_source_renders_and_its_version_is_trusted_for_revalidate_after(make_stack, origin):
    s = remote_stack(make_stack, origin, "--set", "source.revalidate_after=1s")
    client = s.client()
    r = client.get(f"/w:64/f:jpeg/origin-a/{HOPPER}")
    assert r.status == 200 and r.content_type == "image/jpeg" and _size(r.body)[0] == 64, r.describe()
    assert origin.counts[HOPPER] == 1
    etag = r.header("ETag")
    # Again, within the window: the variant comes from the cache and the origin is not asked.
    r2 = client.get(f"/w:64/f:jpeg/origin-a/{HOPPER}")
    assert r2.status == 200 and r2.body == r.body and r2.header("ETag") == etag
    assert origin.counts[HOPPER] == 1, origin.counts
    # Another variant of the same version: rendered from bytes fetched again (no original cache here).
    r3 = client.get(f"/w:32/f:jpeg/origin-a/{HOPPER}")
    assert r3.status == 200 and _size(r3.body)[0] == 32
    # After the window: one conditional request (If-None-Match), a 304, and the same answer.
    time.sleep(1.3)
    before = origin.counts[HOPPER]
    r4 = client.get(f"/w:64/f:jpeg/origin-a/{HOPPER}")
    assert r4.status == 200 and r4.body == r.body and r4.header("ETag") == etag
    assert origin.counts[HOPPER] == before + 1 and origin.conditional[HOPPER] == 1, (origin.counts, origin.conditional)
    # Local paths are still files under the root.
    assert client.get(f"/w:20/f:jpeg/{HOPPER}").status == 200


def test_originals_in_the_disk_cache_serve_every_variant_from_one_fetch(make_stack, origin, tmp_path):
    s = remote_stack(make_stack, origin, "--set", f"cache.disk_path={tmp_path / 'cache'}", "--set", "cache.store=both",
                     "--set", "cache.memory_cost_limit=0")
    client = s.client()
    for w in (20, 30, 40, 50):
        r = client.get(f"/w:{w}/f:png/origin-a/{HOPPER}")
        assert r.status == 200 and _size(r.body)[0] == w, r.describe()
    assert origin.counts[HOPPER] == 1, origin.counts


@pytest.mark.parametrize("path,status,words", [
    ("missing.jpg", 404, "no source at origin-a/missing.jpg"),
    ("error.jpg", 502, "answered 503"),
    ("loop.jpg", 502, "redirect"),
    ("truncated.jpg", 502, "origin origin-a"),
    ("to-private.jpg", 502, "127.0.0.2 is loopback"),
])
def test_origin_failures_map_to_clear_answers(make_stack, origin, path, status, words):
    s = remote_stack(make_stack, origin)
    client = s.client()
    r = client.get(f"/w:64/f:jpeg/origin-a/{path}")
    assert r.status == status and words in r.body.decode(errors="replace"), r.describe()
    assert b"\n" not in r.body.rstrip(b"\n"), "one line"
    # The worker is fine, and a redirect to the allowed address is followed.
    assert client.get(f"/w:64/f:jpeg/origin-a/{HOPPER}").status == 200
    assert client.get("/w:64/f:jpeg/origin-a/moved.jpg").status == 200


def test_a_slow_origin_is_a_504_within_the_fetch_timeout(make_stack, origin):
    s = remote_stack(make_stack, origin)
    client = s.client()
    t0 = time.monotonic()
    r = client.get("/w:64/f:jpeg/origin-a/slow.jpg", timeout=30)
    took = time.monotonic() - t0
    assert r.status == 504 and "source.fetch_timeout" in r.body.decode(), r.describe()
    assert took < 4.5, f"{took:.1f} s for a 2 s fetch timeout"


def test_the_ssrf_guard_refuses_loopback_unless_allowed(make_stack, origin):
    s = remote_stack(make_stack, origin, allowed=None)
    r = s.client().get(f"/w:64/f:jpeg/origin-a/{HOPPER}")
    assert r.status == 502 and "127.0.0.1 is loopback" in r.body.decode(), r.describe()
    assert origin.counts[HOPPER] == 0, "no connection was made"


def test_a_body_over_max_file_bytes_is_refused(make_stack, origin):
    s = remote_stack(make_stack, origin, "--set", "limits.max_file_bytes=2KiB")
    r = s.client().get(f"/w:64/f:jpeg/origin-a/{HOPPER}")
    assert r.status == 413 and "limits.max_file_bytes" in r.body.decode(), r.describe()
