"""Origins that break their bodies (issue 25, items 2 and 4a), 2 workers sharing a disk cache.

- A body without `Content-Length` and not chunked ends when the connection closes, as a cut one
  does: it is an original only when the image's own structure shows it whole (GIF trailer, JPEG
  EOI, ...); otherwise a 502 and nothing is stored (the next request asks again, without a
  condition), even when the origin answers 304 to the validator it sent.
- A body shorter than its `Content-Length` is a broken transfer that every worker remembers for
  `source.negative_ttl`, with at most one resume attempt in that time.

The origin is a raw HTTP/1.1 server on loopback that counts every request it gets."""
from __future__ import annotations

import io
import socketserver
import threading
import time

import pytest
from PIL import Image

from cachefiles import entry_files


class BreakingOrigin:
    """`objects[name] = (body, etag, mode, keep)`: `mode` "close" answers without Content-Length
    (close-delimited) and sends `keep` bytes; "short" announces the whole length and sends `keep`
    bytes; "bad206" is "short", and answers a Range request with a 206 that starts 100 bytes
    later. A request whose If-None-Match is the ETag gets a 304."""

    def __init__(self):
        self.objects: dict[str, tuple[bytes, str | None, str, int]] = {}
        self.requests: list[tuple[str, dict[str, str], int]] = []
        self.lock = threading.Lock()
        origin = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self):
                line = self.rfile.readline().decode("latin-1")
                headers = {}
                while True:
                    h = self.rfile.readline().decode("latin-1").strip()
                    if not h:
                        break
                    k, _, v = h.partition(":")
                    headers[k.strip().lower()] = v.strip()
                name = line.split(" ")[1].lstrip("/") if " " in line else ""
                with origin.lock:
                    found = origin.objects.get(name)
                if found is None:
                    return self.answer(name, headers, 404, [], b"no", len(b"no"), True)
                body, etag, mode, keep = found
                validators = [("ETag", etag)] if etag else []
                if etag and headers.get("if-none-match") == etag:
                    return self.answer(name, headers, 304, validators, b"", 0, True)
                wanted = headers.get("range", "")
                if mode == "bad206" and wanted.startswith("bytes=") and wanted.endswith("-"):
                    start = int(wanted[6:-1]) + 100
                    rest = body[start:]
                    return self.answer(name, headers, 206, validators + [
                        ("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")], rest, len(rest), True)
                return self.answer(name, headers, 200, validators, body[:keep], None if mode == "close" else len(body),
                                   mode != "close")

            def answer(self, name, headers, status, extra, body, length, with_length):
                with origin.lock:
                    origin.requests.append((name, headers, status))
                lines = [f"HTTP/1.1 {status} X", "Connection: close"] + [f"{k}: {v}" for k, v in extra]
                if with_length and length is not None:
                    lines.append(f"Content-Length: {length}")
                self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
                self.wfile.flush()

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def serve(self, name, body, etag='"v1"', mode="close", keep=None):
        with self.lock:
            self.objects[name] = (body, etag, mode, len(body) if keep is None else keep)

    def requests_for(self, name):
        with self.lock:
            return [(h, s) for p, h, s in self.requests if p == name]

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def origin():
    o = BreakingOrigin()
    yield o
    o.stop()


def stack_for(make_stack, origin, disk, *settings):
    args = ["--set", f"source.origins=o=http://127.0.0.1:{origin.port}/", "--set", "source.allowed_networks=127.0.0.1",
            "--set", "source.fetch_timeout=5s", "--set", f"cache.disk_path={disk}"]
    for s in settings:
        args += ["--set", s]
    return make_stack(workers=2, extra_args=args)


def animated_gif(frames=20) -> bytes:
    images = [Image.new("RGB", (48, 48), ((i * 12) % 256, (i * 40) % 256, 255 - i * 10)) for i in range(frames)]
    out = io.BytesIO()
    images[0].save(out, format="GIF", save_all=True, append_images=images[1:], duration=60, loop=0)
    return out.getvalue()


def end_of_frame(gif: bytes, n: int) -> int:
    """The offset just after the n-th frame's image data (a clean frame boundary)."""
    i = 13 + (3 << ((gif[10] & 7) + 1) if gif[10] & 0x80 else 0)
    seen = 0

    def sub_blocks(i):
        while gif[i]:
            i += gif[i] + 1
        return i + 1

    while gif[i] != 0x3B:
        if gif[i] == 0x21:
            i = sub_blocks(i + 2)
        else:
            assert gif[i] == 0x2C
            packed = gif[i + 9]
            i += 10 + ((3 << ((packed & 7) + 1)) if packed & 0x80 else 0) + 1
            i = sub_blocks(i)
            seen += 1
            if seen == n:
                return i
    raise AssertionError("fewer frames")


def jpeg_bytes() -> bytes:
    image = Image.radial_gradient("L").convert("RGB").resize((640, 480))
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=90)
    return out.getvalue()


@pytest.mark.parametrize("kind", ["gif", "jpeg"])
def test_a_close_delimited_body_cut_short_is_a_502_and_never_stored(make_stack, origin, disk, kind):
    data = animated_gif() if kind == "gif" else jpeg_bytes()
    # GIF: cut right after frame 10 of 20 (10 frames decode fine); JPEG: cut in the middle of its scan.
    cut = end_of_frame(data, 10) if kind == "gif" else len(data) * 6 // 10
    name = f"cut.{kind}"
    origin.serve(name, data, keep=cut)
    s = stack_for(make_stack, origin, disk, "source.negative_ttl=0s")
    c = s.client()
    url = f"/w:40/f:png/o/{name}"
    for attempt in (1, 2):
        r = c.get(url)
        assert r.status == 502 and "not a whole image" in r.body.decode(), r.describe()
        assert r.header("x-cache") != "HIT-DISK"
        seen = origin.requests_for(name)
        # Nothing was stored: each request asks again, and never conditionally.
        assert len(seen) == attempt and all("if-none-match" not in h for h, _ in seen), seen
    stored = [p for p in entry_files(disk) if f"o/{name}".encode() in p.read_bytes()[:4096]]
    assert stored == [], stored
    # The origin heals but answers 304 to its ETag: kiln, which kept nothing, gets the whole body.
    origin.serve(name, data)
    whole = c.get(url)
    assert whole.status == 200 and whole.image().size[0] == 40, whole.describe()
    seen = origin.requests_for(name)
    assert [st for _, st in seen] == [200, 200, 200] and "if-none-match" not in seen[2][0], seen
    if kind == "gif":
        assert Image.open(io.BytesIO(data)).n_frames == 20


def test_a_whole_close_delimited_body_is_stored_and_served_from_the_cache(make_stack, origin, disk):
    data = animated_gif()
    origin.serve("whole.gif", data)
    s = stack_for(make_stack, origin, disk)
    c = s.client()
    first = c.get("/w:40/f:png/o/whole.gif")
    assert first.status == 200 and first.image().size[0] == 40, first.describe()
    again = c.get("/w:40/f:png/o/whole.gif")
    other = c.get("/w:30/f:png/o/whole.gif")
    assert again.status == 200 and again.header("x-cache") in ("HIT-MEMORY", "HIT-DISK"), again.describe()
    assert other.status == 200 and other.image().size[0] == 30
    assert len(origin.requests_for("whole.gif")) == 1, origin.requests_for("whole.gif")


@pytest.mark.parametrize("mode,etag,expected", [
    ("short", '"v1"', 2),    # the cut GET, then one resume (the origin ignores Range: 200, cut again)
    ("short", None, 1),      # no validator: nothing to resume
    ("bad206", '"v1"', 3),   # the cut GET, then a resume whose 206 does not fit, and a whole GET cut again
])
def test_a_body_shorter_than_its_content_length_is_remembered_by_every_worker(make_stack, origin, disk, mode, etag,
                                                                               expected):
    """20 requests (both workers) within source.negative_ttl: the origin sees the first GET and at
    most one resume; after the window, one more attempt."""
    data = jpeg_bytes()
    origin.serve("short.jpg", data, etag=etag, mode=mode, keep=len(data) // 3)
    s = stack_for(make_stack, origin, disk, "source.negative_ttl=4s")
    assert len(s.wait_workers(2)) == 2
    c = s.client()
    answers = [c.get(f"/w:{40 + i}/f:png/o/short.jpg") for i in range(20)]
    assert all(a.status == 502 for a in answers), [a.describe() for a in answers if a.status != 502][:2]
    assert len(origin.requests_for("short.jpg")) == expected, origin.requests_for("short.jpg")
    time.sleep(4.3)
    assert c.get("/w:40/f:png/o/short.jpg").status == 502
    assert len(origin.requests_for("short.jpg")) in (expected + 1, expected + 2), origin.requests_for("short.jpg")


def test_without_a_disk_cache_a_short_body_is_remembered_by_each_worker(make_stack, origin):
    """No disk cache: nothing is shared, no partial download is kept, each worker remembers the
    broken transfer for source.negative_ttl, so 20 requests cost at most one GET per worker."""
    data = jpeg_bytes()
    origin.serve("short.jpg", data, mode="short", keep=len(data) // 3)
    args = ["--set", f"source.origins=o=http://127.0.0.1:{origin.port}/", "--set", "source.allowed_networks=127.0.0.1",
            "--set", "source.negative_ttl=30s"]
    s = make_stack(workers=2, extra_args=args)
    assert len(s.wait_workers(2)) == 2
    c = s.client()
    answers = [c.get(f"/w:{40 + i}/f:png/o/short.jpg") for i in range(20)]
    assert all(a.status == 502 for a in answers), [a.describe() for a in answers if a.status != 502][:2]
    assert 1 <= len(origin.requests_for("short.jpg")) <= 2, origin.requests_for("short.jpg")
