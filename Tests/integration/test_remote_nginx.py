"""Remote sources against nginx as the origin (issue 13): a real static server with its own
ETag (`"mtime-size"`), conditional GETs and byte ranges, on loopback, separate from the nginx in
front of kiln. Its access log records every request kiln made, with the conditions it sent
(nginx writes a quote in a logged header as `\\x22`)."""
from __future__ import annotations

import io
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from PIL import Image

from helpers import BENCH, CORPUS, PHOTO_HD, status_json
from stack import free_port, tail

PHOTO = "pillow_hopper.jpg"
OTHER = "pillow_flower2.webp"


class NginxOrigin:
    def __init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="kiln-origin-", dir=os.environ.get("TMPDIR", "/tmp")))
        os.chmod(self.dir, 0o755)
        self.files = self.dir / "files"
        self.files.mkdir(mode=0o755)
        (self.dir / "logs").mkdir()
        self.log = self.dir / "logs" / "access.log"
        self.port = free_port()
        conf = self.dir / "nginx.conf"
        conf.write_text(f"""
daemon off;
worker_processes 1;
pid {self.dir}/nginx.pid;
events {{ worker_connections 64; }}
http {{
    access_log off;
    log_format origin '$status $request_method $uri inm=[$http_if_none_match] ims=[$http_if_modified_since] range=[$http_range] ifrange=[$http_if_range]';
    # /slow/: a first GET trickles after 100 KB (50 KB/s); a Range request gets full speed.
    map $http_range $origin_rate {{ "" 50k; default 0; }}
    server {{
        listen 127.0.0.1:{self.port};
        root {self.files};
        access_log {self.log} origin;
        etag on;
        location / {{ }}
        location /slow/ {{
            alias {self.files}/;
            limit_rate_after 100k;
            limit_rate $origin_rate;
        }}
        # /paced/: every answer at 256 KB/s (a 738 KB photo takes about 3 s).
        location /paced/ {{
            alias {self.files}/;
            limit_rate 256k;
        }}
        # /trickle/: 1 KB a second (headers at once), far below any sensible source.min_speed.
        location /trickle/ {{
            alias {self.files}/;
            limit_rate 1k;
        }}
    }}
    client_body_temp_path {self.dir}/tmp; proxy_temp_path {self.dir}/tmp; fastcgi_temp_path {self.dir}/tmp;
    uwsgi_temp_path {self.dir}/tmp; scgi_temp_path {self.dir}/tmp;
}}
""")
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.process = subprocess.Popen([nginx, "-p", str(self.dir), "-c", str(conf), "-e", str(self.dir / "logs" / "error.log")],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"nginx origin did not start:\n{tail(self.dir / 'logs' / 'error.log')}")
                time.sleep(0.05)

    def put(self, name: str, source: str | Path, mtime: float | None = None) -> bytes:
        data = (CORPUS / source).read_bytes()
        path = self.files / name
        path.write_bytes(data)
        os.chmod(path, 0o644)
        if mtime is not None:
            os.utime(path, (mtime, mtime))
        return data

    def requests(self, name: str) -> list[str]:
        if not self.log.exists():
            return []
        return [line for line in self.log.read_text().splitlines()
                if any(f" {prefix}{name} " in line for prefix in ("/", "/slow/", "/paced/", "/trickle/"))]

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def nginx_origin():
    o = NginxOrigin()
    yield o
    o.stop()


def origin_stack(make_stack, origin, *settings, workers=1, base="", **kw):
    args = ["--set", f"source.origins=web=http://127.0.0.1:{origin.port}/{base}", "--set", "source.allowed_networks=127.0.0.1"]
    for s in settings:
        args += ["--set", s]
    return make_stack(workers=workers, extra_args=args, **kw)


def wait_for_log(origin, name, count, timeout=5.0):
    """nginx writes its access log line after the answer: wait for it."""
    deadline = time.monotonic() + timeout
    while len(origin.requests(name)) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    return origin.requests(name)


def test_nginx_origin_etag_revalidation_and_a_changed_object(make_stack, nginx_origin):
    nginx_origin.put("cat.jpg", PHOTO, mtime=time.time() - 3600)
    s = origin_stack(make_stack, nginx_origin, "source.revalidate_after=1s")
    c = s.client()
    first = c.get("/w:50/f:png/web/cat.jpg")
    assert first.status == 200 and Image.open(io.BytesIO(first.body)).size[0] == 50, first.describe()
    log = wait_for_log(nginx_origin, "cat.jpg", 1)
    assert log == ["200 GET /cat.jpg inm=[-] ims=[-] range=[-] ifrange=[-]"], log
    # Within the window: no request to the origin at all.
    assert c.get("/w:50/f:png/web/cat.jpg").body == first.body
    time.sleep(1.2)
    # After it: one conditional GET carrying nginx's own ETag, answered 304, same variant.
    again = c.get("/w:50/f:png/web/cat.jpg")
    assert again.status == 200 and again.body == first.body and again.header("etag") == first.header("etag")
    log = wait_for_log(nginx_origin, "cat.jpg", 2)
    assert len(log) == 2 and log[1].startswith("304 GET /cat.jpg inm=[\\x22"), log
    # The object changes at the origin (another image, a new mtime and so a new ETag): after the
    # window the revalidation gets a 200 and the answer is the new image.
    nginx_origin.put("cat.jpg", OTHER)
    time.sleep(1.2)
    changed = c.get("/w:50/f:png/web/cat.jpg")
    assert changed.status == 200 and changed.body != first.body and changed.header("etag") != first.header("etag")
    expected = Image.open(CORPUS / OTHER)
    got = Image.open(io.BytesIO(changed.body))
    assert got.size == (50, round(expected.height * 50 / expected.width)), (got.size, expected.size)
    log = wait_for_log(nginx_origin, "cat.jpg", 3)
    assert log[2].startswith("200 GET /cat.jpg inm=[\\x22"), log


def test_nginx_origin_404_and_a_name_that_needs_encoding(make_stack, nginx_origin):
    nginx_origin.put("a photo #1.jpg", PHOTO)
    s = origin_stack(make_stack, nginx_origin)
    c = s.client()
    r = c.get("/w:40/f:jpeg/web/a%20photo%20%231.jpg")
    assert r.status == 200 and Image.open(io.BytesIO(r.body)).size[0] == 40, r.describe()
    log = wait_for_log(nginx_origin, "a photo #1.jpg", 1)
    assert log and log[0].startswith("200 "), (log, nginx_origin.log.read_text() if nginx_origin.log.exists() else "")
    missing = c.get("/w:40/f:jpeg/web/nothing.jpg")
    assert missing.status == 404 and "no source at web/nothing.jpg" in missing.body.decode(), missing.describe()


def test_a_download_cut_by_the_fetch_timeout_resumes_with_a_range_from_nginx(make_stack, nginx_origin, tmp_path):
    """nginx trickles the first GET (50 KB/s after 100 KB); source.fetch_timeout (1 s) cuts it:
    a 504, the bytes kept beside the cache. The next request asks nginx for the rest (`Range` +
    `If-Range` with nginx's ETag), which nginx sends at full speed as a 206, and the variant is
    byte-identical to the same variant of the local file."""
    data = nginx_origin.put("big.jpg", BENCH / PHOTO_HD)
    s = origin_stack(make_stack, nginx_origin, f"cache.disk_path={tmp_path / 'cache'}", "source.fetch_timeout=1s",
                     base="slow/")
    c = s.client()
    cut = c.get("/w:120/f:png/web/big.jpg", timeout=30)
    assert cut.status == 504 and "then:" in cut.body.decode(), cut.describe()
    parts = list((tmp_path / "cache").rglob("*.part"))
    assert len(parts) == 1 and 100_000 <= parts[0].stat().st_size < len(data), parts
    kept = parts[0].stat().st_size
    assert parts[0].read_bytes() == data[:kept]

    r = c.get("/w:120/f:png/web/big.jpg", timeout=30)
    assert r.status == 200, r.describe()
    log = wait_for_log(nginx_origin, "big.jpg", 2)
    assert log[0].startswith("200 GET /slow/big.jpg") and "range=[-]" in log[0], log
    assert log[1].startswith("206 GET /slow/big.jpg") and f"range=[bytes={kept}-]" in log[1], log
    assert "ifrange=[\\x22" in log[1], log     # nginx's ETag, quoted
    assert list((tmp_path / "cache").rglob("*.part")) == []
    assert r.body == c.get(f"/w:120/f:png/{PHOTO_HD}").body, "renders like the local file"
    text = c.get("/_kiln/metrics", timeout=10).body.decode().splitlines()
    assert "kiln_origin_resumed_total 1" in text and f"kiln_origin_bytes_total {len(data)}" in text, \
        [x for x in text if "origin" in x]


def test_64_concurrent_cold_requests_for_8_sizes_of_a_paced_738k_photo_cost_one_get(make_stack, nginx_origin, tmp_path):
    """Issue 25: a realistic source (738 KB) from an origin that takes about 3 s to send it, 64
    concurrent requests for 8 sizes through 2 workers: nginx's access log has exactly one GET."""
    data = nginx_origin.put("hd.jpg", BENCH / PHOTO_HD)
    assert len(data) >= 500_000
    s = origin_stack(make_stack, nginx_origin, f"cache.disk_path={tmp_path / 'cache'}", "source.fetch_timeout=30s",
                     "limits.render_timeout=60s", "server.queue_timeout=120s", workers=2, base="paced/",
                     nginx_env={"KILN_NGINX_CONN_LIMIT": "80"})
    assert len(s.wait_workers(2)) == 2
    c = s.client()
    widths = [40 + 10 * (i % 8) for i in range(64)]
    barrier = threading.Barrier(64)

    def one(w):
        barrier.wait(timeout=30)
        return w, c.get(f"/w:{w}/f:png/web/hd.jpg", timeout=120)

    with ThreadPoolExecutor(max_workers=64) as pool:
        results = list(pool.map(one, widths))
    bad = [(w, r.describe()) for w, r in results if r.status != 200]
    assert not bad, bad[:3]
    assert all(r.image().size[0] == w for w, r in results)
    log = wait_for_log(nginx_origin, "hd.jpg", 1)
    time.sleep(0.5)  # a second GET would be logged by now too
    log = nginx_origin.requests("hd.jpg")
    assert log == ["200 GET /paced/hd.jpg inm=[-] ims=[-] range=[-] ifrange=[-]"], log


def test_a_trickling_origin_is_a_504_after_source_min_speed_time(make_stack, nginx_origin):
    """1 KB a second against source.min_speed = 32 KiB/s over 1 s: abandoned after the first
    window (1-2 s: libcurl reports progress about once a second), long before
    source.fetch_timeout (30 s); the bytes so far are kept for a resume."""
    nginx_origin.put("t.jpg", BENCH / PHOTO_HD)
    s = origin_stack(make_stack, nginx_origin, "source.min_speed=32KiB", "source.min_speed_time=1s",
                     "source.fetch_timeout=30s", "limits.render_timeout=60s", base="trickle/")
    c = s.client()
    t0 = time.monotonic()
    r = c.get("/w:40/f:png/web/t.jpg", timeout=60)
    took = time.monotonic() - t0
    assert r.status == 504 and "source.min_speed" in r.body.decode(), r.describe()
    assert took < 4.0, f"{took:.1f} s (expected about 1-2 s)"


def test_two_trickling_fetches_leave_a_worker_for_local_sources(make_stack, nginx_origin, root):
    """2 workers, source.fetch_workers_max at its default (1): while two requests for trickling
    remote sources are in flight, a request for a local file is answered 200."""
    nginx_origin.put("t1.jpg", BENCH / PHOTO_HD)
    nginx_origin.put("t2.jpg", BENCH / PHOTO_HD)
    s = origin_stack(make_stack, nginx_origin, "source.min_speed=0", "source.fetch_timeout=8s",
                     "limits.render_timeout=20s", workers=2, base="trickle/")
    assert len(s.wait_workers(2)) == 2
    c = s.client()
    with ThreadPoolExecutor(max_workers=2) as pool:
        remote = [pool.submit(c.get, f"/w:40/f:png/web/t{i}.jpg", None, 30) for i in (1, 2)]
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            busy = [w for w in status_json(c)["workers"] if w["state"] == "busy" and "/web/t" in (w.get("uri") or "")]
            if busy:
                break
            time.sleep(0.05)
        assert busy, "no remote request in flight"
        t0 = time.monotonic()
        local = c.get(f"/w:40/f:png/{PHOTO_HD}", timeout=30)
        took = time.monotonic() - t0
        assert local.status == 200, local.describe()
        assert any(not f.done() for f in remote) and took < 4.0, took
        answers = [f.result() for f in remote]
    # One trickling fetch ends at source.fetch_timeout (504); the other found the one fetch
    # worker taken: Kiln's own capacity, a 503 that says when to retry.
    assert sorted(a.status for a in answers) == [503, 504], [a.describe() for a in answers]
    limited = [a for a in answers if "source.fetch_workers_max 1" in a.body.decode()]
    assert limited, [a.body for a in answers]
    assert all(a.status == 503 and a.header("Retry-After") == "1" for a in limited), [a.describe() for a in limited]
