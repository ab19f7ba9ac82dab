"""Remote sources with a disk cache (issue 13): one origin fetch per source for all the workers
(a shared version record, a fetch lock and the original in the disk cache), one conditional
request per revalidation, and downloads that broke off resumed with `Range` + `If-Range`.

A real origin on loopback (Python's ThreadingHTTPServer) that counts and records every request,
honours `Range`/`If-Range`, and can cut a body after N bytes, change an object, or answer a
range request with a wrong `Content-Range`; the real kiln (2 workers) behind nginx."""
from __future__ import annotations

import email.utils
import hashlib
import http.server
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from cachefiles import entry_files
from helpers import CORPUS, KILN_BIN

HOPPER = "pillow_hopper.jpg"
PORTRAIT = "exif_Portrait_6.jpg"   # 251 800 bytes: room to cut a body in the middle
FLOWER = "pillow_flower2.webp"


class Origin:
    """Serves `objects` (name -> bytes). `cut[name] = N`: the next 200 or 206 body for it stops
    after N bytes (the connection is closed). `bad_range`: range requests get a 206 that starts elsewhere."""

    def __init__(self):
        self.objects: dict[str, bytes] = {}
        self.modified: dict[str, float] = {}
        self.cut: dict[str, int] = {}
        self.bad_range = False
        self.requests: list[tuple[str, dict[str, str], int]] = []
        self.lock = threading.Lock()
        origin = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):  # noqa: N802
                path = self.path.lstrip("/")
                headers = {k.lower(): v for k, v in self.headers.items()}
                with origin.lock:
                    data = origin.objects.get(path)
                    modified = origin.modified.get(path, 1_700_000_000)
                    cut = origin.cut.pop(path, None) if data is not None else None
                    bad_range = origin.bad_range
                if data is None:
                    return self.finish_with(path, headers, 404, {}, b"no")
                etag = '"' + hashlib.sha256(data).hexdigest()[:16] + '"'
                last_modified = email.utils.formatdate(modified, usegmt=True)
                validators = {"ETag": etag, "Last-Modified": last_modified}
                if headers.get("if-none-match") == etag:
                    return self.finish_with(path, headers, 304, {"ETag": etag}, b"")
                wanted = headers.get("range", "")
                if_range = headers.get("if-range")
                if wanted.startswith("bytes=") and wanted.endswith("-") and if_range in (None, etag, last_modified):
                    start = int(wanted[6:-1])
                    if start >= len(data):
                        return self.finish_with(path, headers, 416, {"Content-Range": f"bytes */{len(data)}"}, b"")
                    if bad_range:
                        start += 100  # a range that does not continue the client's bytes
                    return self.finish_with(path, headers, 206, {
                        **validators, "Content-Range": f"bytes {start}-{len(data) - 1}/{len(data)}"}, data[start:],
                        cut=cut)
                return self.finish_with(path, headers, 200, validators, data, cut=cut)

            def finish_with(self, path, headers, status, extra, body, cut=None):
                with origin.lock:
                    origin.requests.append((path, headers, status))
                self.send_response(status)
                for k, v in extra.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if cut is not None:
                    self.wfile.write(body[:cut])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def serve(self, name: str, data: bytes, modified: float = 1_700_000_000):
        with self.lock:
            self.objects[name] = data
            self.modified[name] = modified

    def requests_for(self, name: str) -> list[tuple[dict[str, str], int]]:
        with self.lock:
            return [(h, s) for p, h, s in self.requests if p == name]

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def origin():
    o = Origin()
    yield o
    o.stop()


def shared_stack(make_stack, origin, disk, *extra, workers=2):
    args = ["--set", f"source.origins=origin-a=http://127.0.0.1:{origin.port}/",
            "--set", "source.allowed_networks=127.0.0.1",
            "--set", "source.fetch_timeout=5s", "--set", "source.connect_timeout=1s",
            "--set", f"cache.disk_path={disk}", "--set", "cache.memory_cost_limit=0"]
    return make_stack(workers=workers, extra_args=args + list(extra),
                      nginx_env={"KILN_NGINX_CONN_LIMIT": "80"})


def remote_files(disk, suffix):
    return sorted(p for p in (disk / "remote").glob(f"*/*{suffix}"))


def test_64_concurrent_cold_requests_for_8_sizes_cost_one_origin_get(make_stack, origin, disk):
    # cache.store=final (the default): remote originals are kept anyway, that is what the workers share.
    origin.serve(HOPPER, (CORPUS / HOPPER).read_bytes())
    s = shared_stack(make_stack, origin, disk, "--set", "cache.store=final")
    assert len(s.wait_workers(2)) == 2
    c = s.client()
    widths = [40 + 10 * (i % 8) for i in range(64)]  # w:40 … w:110
    barrier = threading.Barrier(64)

    def one(w):
        barrier.wait(timeout=30)
        return w, c.get(f"/w:{w}/f:png/origin-a/{HOPPER}", timeout=60)

    with ThreadPoolExecutor(max_workers=64) as pool:
        results = list(pool.map(one, widths))
    bad = [(w, r.describe()) for w, r in results if r.status != 200]
    assert not bad, bad[:3]
    assert all(r.image().size[0] == w for w, r in results)
    assert len({w for w, _ in results}) == 8
    assert [st for _, st in origin.requests_for(HOPPER)] == [200], origin.requests_for(HOPPER)
    assert len(remote_files(disk, ".version")) == 1


def test_revalidation_after_the_window_is_one_conditional_request_for_all_workers(make_stack, origin, disk):
    origin.serve(HOPPER, (CORPUS / HOPPER).read_bytes())
    s = shared_stack(make_stack, origin, disk, "--set", "source.revalidate_after=4s")
    c = s.client()
    first = c.get(f"/w:40/f:png/origin-a/{HOPPER}")
    assert first.status == 200, first.describe()
    assert len(origin.requests_for(HOPPER)) == 1
    time.sleep(4.3)
    barrier = threading.Barrier(16)

    def one(i):
        barrier.wait(timeout=30)
        return c.get(f"/w:{40 + 10 * (i % 8)}/f:png/origin-a/{HOPPER}", timeout=60)

    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(one, range(16)))
    assert [r.status for r in results] == [200] * 16, [r.describe() for r in results if r.status != 200][:3]
    seen = origin.requests_for(HOPPER)
    assert [st for _, st in seen] == [200, 304], seen
    assert "if-none-match" in seen[1][0] and "if-none-match" not in seen[0][0]
    # The version is unchanged: the same answer (and ETag) as before the revalidation.
    again = [r for r in results if r.image().size[0] == 40]
    assert again and all(r.body == first.body and r.header("ETag") == first.header("ETag") for r in again)


def test_a_body_cut_mid_way_is_resumed_by_the_next_request(make_stack, origin, disk):
    data = (CORPUS / PORTRAIT).read_bytes()
    origin.serve(PORTRAIT, data)
    origin.cut[PORTRAIT] = 100_000
    s = shared_stack(make_stack, origin, disk)
    c = s.client()
    entries = set(entry_files(disk))
    failed = c.get(f"/w:64/f:png/origin-a/{PORTRAIT}")
    assert failed.status == 502 and "origin origin-a sent 100000 bytes" in failed.body.decode(), failed.describe()
    # The bytes received are kept beside the cache, never as an entry.
    parts = remote_files(disk, ".part")
    assert len(parts) == 1 and parts[0].read_bytes() == data[:100_000]
    assert set(entry_files(disk)) == entries, "no entry for a partial body"

    r = c.get(f"/w:64/f:png/origin-a/{PORTRAIT}")
    assert r.status == 200, r.describe()
    seen = origin.requests_for(PORTRAIT)
    assert [st for _, st in seen] == [200, 206], seen
    assert "range" not in seen[0][0]
    etag = '"' + hashlib.sha256(data).hexdigest()[:16] + '"'
    assert seen[1][0].get("range") == "bytes=100000-" and seen[1][0].get("if-range") == etag, seen[1][0]
    local = c.get(f"/w:64/f:png/{PORTRAIT}")
    assert local.status == 200 and r.body == local.body, "the resumed source renders like the local file"
    assert remote_files(disk, ".part") == [] and remote_files(disk, ".part.meta") == []
    # Another variant comes from the stored original: no further origin request.
    assert c.get(f"/w:48/f:png/origin-a/{PORTRAIT}").image().size[0] == 48
    assert len(origin.requests_for(PORTRAIT)) == 2
    # The metrics saw it: one resumed download, both bodies' bytes, one broken transfer.
    text = c.get("/_kiln/metrics", timeout=10).body.decode()
    assert "kiln_origin_resumed_total 1" in text.splitlines(), [x for x in text.splitlines() if "origin" in x]
    assert f"kiln_origin_bytes_total {len(data)}" in text.splitlines()
    assert 'kiln_origin_requests_total{outcome="error"} 1' in text.splitlines()


def test_a_resume_cut_again_keeps_both_parts_and_the_third_attempt_completes(make_stack, origin, disk):
    """One resume per source.negative_ttl window: the cut GET, its resume (cut again), then the
    remembered 502 until the window ends, then the resume that completes."""
    data = (CORPUS / PORTRAIT).read_bytes()
    origin.serve(PORTRAIT, data)
    origin.cut[PORTRAIT] = 60_000
    s = shared_stack(make_stack, origin, disk, "--set", "source.negative_ttl=2s")
    c = s.client()
    assert c.get(f"/w:64/f:png/origin-a/{PORTRAIT}").status == 502
    origin.cut[PORTRAIT] = 50_000   # of the 206
    assert c.get(f"/w:64/f:png/origin-a/{PORTRAIT}").status == 502
    parts = remote_files(disk, ".part")
    assert len(parts) == 1 and parts[0].read_bytes() == data[:110_000]
    remembered = c.get(f"/w:64/f:png/origin-a/{PORTRAIT}")
    assert remembered.status == 502 and len(origin.requests_for(PORTRAIT)) == 2, remembered.describe()
    time.sleep(2.2)
    r = c.get(f"/w:64/f:png/origin-a/{PORTRAIT}")
    assert r.status == 200, r.describe()
    seen = origin.requests_for(PORTRAIT)
    assert [(h.get("range"), st) for h, st in seen] == [(None, 200), ("bytes=60000-", 206), ("bytes=110000-", 206)], seen
    assert r.body == c.get(f"/w:64/f:png/{PORTRAIT}").body


def test_an_object_changed_since_the_cut_is_fetched_whole(make_stack, origin, disk):
    name = "changing.img"
    origin.serve(name, (CORPUS / PORTRAIT).read_bytes())
    origin.cut[name] = 50_000
    s = shared_stack(make_stack, origin, disk)
    c = s.client()
    assert c.get(f"/w:64/f:png/origin-a/{name}").status == 502
    origin.serve(name, (CORPUS / FLOWER).read_bytes(), modified=1_700_000_500)
    r = c.get(f"/w:64/f:png/origin-a/{name}")
    assert r.status == 200, r.describe()
    seen = origin.requests_for(name)
    # If-Range carried the old ETag; the origin answered 200 with the new object, not a 206.
    assert [st for _, st in seen] == [200, 200] and seen[1][0].get("range") == "bytes=50000-", seen
    local = c.get(f"/w:64/f:png/{FLOWER}")
    assert local.status == 200 and r.body == local.body, "the new object, whole"
    assert remote_files(disk, ".part") == []


def test_a_206_with_a_wrong_content_range_starts_over_and_never_corrupts(make_stack, origin, disk):
    data = (CORPUS / PORTRAIT).read_bytes()
    origin.serve(PORTRAIT, data)
    origin.cut[PORTRAIT] = 80_000
    origin.bad_range = True
    s = shared_stack(make_stack, origin, disk)
    c = s.client()
    assert c.get(f"/w:64/f:png/origin-a/{PORTRAIT}").status == 502
    r = c.get(f"/w:64/f:png/origin-a/{PORTRAIT}")
    seen = origin.requests_for(PORTRAIT)
    # The 206 starting at 80100 was refused; the object was fetched again from the start.
    assert [st for _, st in seen] == [200, 206, 200], seen
    assert seen[1][0].get("range") == "bytes=80000-" and "range" not in seen[2][0]
    assert r.status == 200, r.describe()
    local = c.get(f"/w:64/f:png/{PORTRAIT}")
    assert r.body == local.body
    assert remote_files(disk, ".part") == []


def test_purge_forgets_a_remote_source_and_the_next_request_fetches_it(make_stack, origin, disk, root):
    origin.serve(HOPPER, (CORPUS / HOPPER).read_bytes())
    s = shared_stack(make_stack, origin, disk)
    c = s.client()
    assert c.get(f"/w:40/f:png/origin-a/{HOPPER}").status == 200
    assert len(remote_files(disk, ".version")) == 1
    out = subprocess.run([str(KILN_BIN), "cache", "purge", "--source", f"origin-a/{HOPPER}", "--root", str(root),
                          "--set", f"cache.disk_path={disk}"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.startswith("purged 2 entries"), (out.stdout, out.stderr)
    assert remote_files(disk, ".version") == []
    assert c.get(f"/w:41/f:png/origin-a/{HOPPER}").status == 200
    assert len(origin.requests_for(HOPPER)) == 2
