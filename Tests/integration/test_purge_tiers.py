"""One purge for every tier (issue 28, part 2): `POST /_kiln/purge?source=` on the master's status
socket, the purge journal that reaches every worker's memory, and `kiln cache purge --source`
fanning out to the disk, the fleet's hosts, Varnish edges and CDN hooks. The edge and the hook
are stood in for by a small Python HTTP server that records what it gets, and one test purges a
real Varnish with the shipped VCL (varnish.py); the fleet tests (test_hosts_*.py) run it all on
three hosts with the shared store."""
from __future__ import annotations

import hashlib
import re
import http.server
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cachefiles import entry_files, entry_source_path, kiln
from fcgiclient import fcgi_params, fcgi_request
from stack import free_port

SECRET = "purge-" + "cd" * 16
X = "pillow_hopper.jpg"
Y = "skimage_coffee.png"
X_URL = f"/w:40/{X}"
Y_URL = f"/w:40/{Y}"


def tag(path: str) -> str:
    return "kiln-src-" + hashlib.sha256(("kiln-source\n" + path).encode()).hexdigest()[:32]


def serve(make_stack, disk: Path):
    """Two workers, a disk cache, the peer secret, no nginx: the tests talk FastCGI to both
    sockets (the status socket is `kiln-status.sock` beside `kiln.sock`)."""
    s = make_stack(workers=2, with_nginx=False, extra_args=[
        "--set", f"cache.disk_path={disk}", "--set", f"server.peer_secret={SECRET}", "--set", "server.queue_timeout=0"])
    s.status_sock = s.dir / "kiln-status.sock"
    deadline = time.monotonic() + 20
    while not s.status_sock.exists():
        assert time.monotonic() < deadline, "no status socket"
        time.sleep(0.05)
    return s


def get(s, uri: str):
    r = fcgi_request(s.sock, fcgi_params("GET", uri) | {"KILN_PEER_SECRET": SECRET}, timeout=60)
    assert r.status == 200, r
    return r


def status(s, method: str, uri: str, secret: str | None = SECRET):
    extra = {"KILN_PEER_SECRET": secret} if secret is not None else {}
    return fcgi_request(s.status_sock, fcgi_params(method, uri) | extra, timeout=30)


def entries_of(disk: Path, source: str) -> int:
    return sum(1 for p in entry_files(disk) if entry_source_path(p) == source)


ACCESS = re.compile(r"msg=access pid=(\d+) .*? uri=(\S+) .*?cache=(\S+)")


def access_lines(s, offset: int = 0) -> list[tuple[int, str, str]]:
    """(pid, uri, cache) of each access line of the log after byte `offset`."""
    with open(s.kiln_log, "rb") as f:
        f.seek(offset)
        text = f.read().decode(errors="replace")
    return [(int(m[1]), m[2], m[3]) for m in ACCESS.finditer(text)]


def first_answers(s, uri: str, offset: int = 0) -> dict[int, str]:
    """Requests `uri` (4 at a time: every worker gets some) until each worker answered it at
    least once after log byte `offset`; each worker's first X-Cache there, from the access log
    (written once the answer went out: polled)."""
    pids = set(s.worker_pids())
    assert len(pids) == s.workers, pids
    deadline = time.monotonic() + 60
    with ThreadPoolExecutor(max_workers=4) as pool:
        while True:
            list(pool.map(lambda _: get(s, uri), range(4)))
            seen: dict[int, str] = {}
            for _ in range(100):  # the lines of the answers just received
                for pid, u, cache in access_lines(s, offset):
                    if u == uri:
                        seen.setdefault(pid, cache)
                if set(seen) >= pids:
                    return seen
                time.sleep(0.01)
            assert time.monotonic() < deadline, f"{uri} did not reach every worker: {seen}"


def log_size(s) -> int:
    return s.kiln_log.stat().st_size


# -- the status socket's purge ------------------------------------------------------------

def test_status_socket_purge_reaches_disk_and_every_workers_memory(make_stack, disk):
    s = serve(make_stack, disk)
    for uri in (X_URL, Y_URL):
        first_answers(s, uri)
    assert get(s, X_URL).headers["x-cache"] == "HIT-MEMORY"
    x_entries, y_entries = entries_of(disk, X), entries_of(disk, Y)
    assert x_entries >= 1 and y_entries >= 1

    # Without the secret, or with a wrong one: 403, nothing purged.
    for secret in (None, "x" * len(SECRET)):
        r = status(s, "POST", f"/_kiln/purge?source={X}", secret=secret)
        assert r.status == 403 and r.body.count(b"\n") == 1, r
    assert entries_of(disk, X) == x_entries
    assert get(s, X_URL).headers["x-cache"] == "HIT-MEMORY"

    # Hostile or missing paths: a one-line 400, nothing purged; other methods: 405.
    for query in ("source=..%2Fetc%2Fpasswd", "source=a%2F%2e%2e%2Fb", "source=a%00b", "source=", "source=%2F",
                  "", "source=%ZZ", f"source={X}&source={Y}"):
        r = status(s, "POST", f"/_kiln/purge?{query}")
        assert r.status == 400 and r.body.count(b"\n") == 1 and r.content_type == "text/plain", (query, r)
    r = status(s, "GET", f"/_kiln/purge?source={X}")
    assert r.status == 405 and r.headers.get("allow") == "POST", r
    assert entries_of(disk, X) == x_entries

    offset = log_size(s)
    r = status(s, "POST", "/_kiln/purge?source=%2F" + X.replace(".", "%2E"))
    assert r.status == 200, r
    assert r.body.decode().startswith(f"purged {x_entries} entries (") and r.body.decode().endswith(f" bytes) of {X}\n"), r.body
    assert entries_of(disk, X) == 0 and entries_of(disk, Y) == y_entries
    assert (disk / "purged").read_text() == tag(X)[len("kiln-src-"):] + "\n"

    # No worker answers X from memory any more: the first answer is a render, and every other
    # worker's first answer is that render read from disk.
    firsts = first_answers(s, X_URL, offset)
    assert "MISS" in firsts.values() and "HIT-MEMORY" not in firsts.values(), firsts
    # Y stayed in every worker's memory.
    assert all(get(s, Y_URL).headers["x-cache"] == "HIT-MEMORY" for _ in range(4))


def test_status_socket_purge_without_a_disk_cache_is_a_409(make_stack):
    s = make_stack(workers=1, with_nginx=False)
    sock = s.dir / "kiln-status.sock"
    deadline = time.monotonic() + 20
    while not sock.exists():
        assert time.monotonic() < deadline, "no status socket"
        time.sleep(0.05)
    r = fcgi_request(sock, fcgi_params("POST", f"/_kiln/purge?source={X}"), timeout=30)
    assert r.status == 409 and r.body.count(b"\n") == 1 and b"cache.disk_path" in r.body, r


# -- kiln cache purge --source: every tier -------------------------------------------------

class Recorder(http.server.ThreadingHTTPServer):
    """Answers every PURGE and POST with 200 and keeps (method, path, headers, body)."""

    daemon_threads = True

    def __init__(self):
        self.seen: list[tuple[str, str, dict[str, str], bytes]] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def _record(inner):
                n = int(inner.headers.get("content-length") or 0)
                body = inner.rfile.read(n) if n else b""
                self.seen.append((inner.command, inner.path, {k.lower(): v for k, v in inner.headers.items()}, body))
                inner.send_response(200)
                inner.send_header("content-type", "text/plain")
                inner.send_header("content-length", "3")
                inner.end_headers()
                inner.wfile.write(b"ok\n")

            do_PURGE = do_POST = _record

            def log_message(inner, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture
def recorder():
    r = Recorder()
    yield r
    r.shutdown()
    r.server_close()


def purge_args(s, disk: Path, root: Path, *more: str) -> list[str]:
    return ["cache", "purge", "--root", str(root), "--set", f"cache.disk_path={disk}",
            "--set", f"server.peer_secret={SECRET}", *more]


def test_cli_purge_reaches_every_tier(make_stack, disk, root, recorder):
    s = serve(make_stack, disk)
    for uri in (X_URL, Y_URL):
        first_answers(s, uri)
    x_entries, y_entries = entries_of(disk, X), entries_of(disk, Y)
    assert x_entries >= 1 and y_entries >= 1
    offset = log_size(s)
    p = kiln(*purge_args(s, disk, root,
                         "--set", f"purge.hosts=unix:{s.status_sock}",
                         "--set", f"purge.varnish={recorder.url}",
                         "--set", f"purge.hooks={recorder.url}/hook/{{tag}}?path={{path}}",
                         "--set", "purge.hook_headers=Authorization: Bearer t0k3n",
                         "--set", 'purge.hook_body={"tags":["{tag}"]}',
                         "--source", f"/{X}"), timeout=60)
    assert p.returncode == 0, (p.stdout, p.stderr)
    lines = p.stdout.splitlines()
    assert len(lines) == 4, lines
    assert lines[0].startswith(f"purged {x_entries} entries (") and lines[0].endswith(f") of {X} from {disk}"), lines
    assert lines[1] == f"host unix:{s.status_sock}: 200 purged 0 entries (0 bytes) of {X}", lines
    assert lines[2] == f"varnish {recorder.url}: 200 ok", lines
    assert lines[3] == f"hook {recorder.url}/hook/{{tag}}: 200 ok", lines
    assert p.stderr == ""

    # The edge got PURGE / with the source's xkey; the hook a POST with the tag and the
    # percent-encoded path filled in, the configured header and body.
    purges = [r for r in recorder.seen if r[0] == "PURGE"]
    assert len(purges) == 1 and purges[0][1] == "/" and purges[0][2].get("xkey") == tag(X), recorder.seen
    hooks = [r for r in recorder.seen if r[0] == "POST"]
    assert len(hooks) == 1, recorder.seen
    assert hooks[0][1] == f"/hook/{tag(X)}?path=pillow_hopper.jpg", hooks[0]
    assert hooks[0][2].get("authorization") == "Bearer t0k3n" and hooks[0][3] == f'{{"tags":["{tag(X)}"]}}'.encode(), hooks[0]

    # Disk: X gone, Y kept; memory: no worker answers X from memory.
    assert entries_of(disk, X) == 0 and entries_of(disk, Y) == y_entries
    firsts = first_answers(s, X_URL, offset)
    assert "MISS" in firsts.values() and "HIT-MEMORY" not in firsts.values(), firsts


def test_cli_purge_reports_unreachable_targets_and_still_purges_the_rest(make_stack, disk, root, recorder):
    s = serve(make_stack, disk)
    get(s, X_URL)
    assert entries_of(disk, X) >= 1
    dead = free_port()  # nobody listens there
    p = kiln(*purge_args(s, disk, root,
                         "--set", f"purge.hosts=127.0.0.1:{dead},unix:{s.status_sock}",
                         "--set", f"purge.varnish={recorder.url}",
                         "--set", f"purge.hooks=http://127.0.0.1:{dead}/purge/{{tag}}",
                         "--set", "purge.timeout=3s",
                         "--source", X), timeout=60)
    assert p.returncode == 1, (p.stdout, p.stderr)
    lines = p.stdout.splitlines()
    assert len(lines) == 5, lines
    assert lines[0].startswith("purged ") and lines[0].endswith(f" of {X} from {disk}"), lines
    assert lines[1].startswith(f"host 127.0.0.1:{dead}: ") and "connect" in lines[1], lines
    assert lines[2] == f"host unix:{s.status_sock}: 200 purged 0 entries (0 bytes) of {X}", lines
    assert lines[3] == f"varnish {recorder.url}: 200 ok", lines
    assert lines[4].startswith(f"hook http://127.0.0.1:{dead}/purge/{{tag}}: "), lines
    errors = p.stderr.strip().splitlines()
    assert len(errors) == 2 and f"127.0.0.1:{dead}" in errors[0] and f"127.0.0.1:{dead}" in errors[1], p.stderr
    assert entries_of(disk, X) == 0
    assert [r[0] for r in recorder.seen] == ["PURGE"]

    # A wrong secret on a host: its 403 is reported, exit 1.
    p = kiln("cache", "purge", "--root", str(root), "--set", f"cache.disk_path={disk}",
             "--set", f"purge.hosts=unix:{s.status_sock}", "--source", X, timeout=60)
    assert p.returncode == 1 and p.stdout.splitlines()[1].startswith(f"host unix:{s.status_sock}: 403 "), (p.stdout, p.stderr)


# -- kiln cache stats: the shared tier ------------------------------------------------------

def test_cache_stats_reads_the_shared_tier_from_the_local_master(make_stack, disk, root):
    import json
    s = serve(make_stack, disk)
    get(s, X_URL)
    base = ["cache", "stats", "--root", str(root), "--set", f"cache.disk_path={disk}", "--listen", f"unix:{s.sock}"]
    p = kiln(*base, "--json", "--set", f"server.peer_secret={SECRET}")
    assert p.returncode == 0, p.stderr
    shared = json.loads(p.stdout)["shared"]
    assert shared["address"] == f"unix:{s.status_sock}" and shared["error"] is None, shared
    # Only the shared store's series (none while cache.shared is off: B's counters stay at 0 or absent).
    assert all(name.startswith(("reads", "writes", "written")) for name in shared["series"]), shared
    text = kiln(*base, "--set", f"server.peer_secret={SECRET}")
    assert text.returncode == 0 and f"shared store (metrics of unix:{s.status_sock})" in text.stdout, text.stdout
    # Without the secret the master refuses: reported, the disk's figures still printed, exit 0.
    bad = kiln(*base, "--json")
    assert bad.returncode == 0, bad.stderr
    refused = json.loads(bad.stdout)
    assert refused["entries"] >= 1 and refused["shared"]["error"].startswith("403 "), refused
    # No status socket: no shared section.
    off = kiln(*base, "--json", "--set", "server.status_listen=off")
    assert off.returncode == 0 and json.loads(off.stdout)["shared"] is None, off.stdout


def test_cli_purge_reaches_a_real_varnish(make_stack, disk, root):
    """The edge tier against the shipped VCL (Varnish 7.1 with vmod-xkey): the PURGE the command
    sends drops every cached variant of the source, and the next request reaches kiln again."""
    from varnish import started_varnish
    s = make_stack(workers=1, extra_args=["--set", f"cache.disk_path={disk}"])
    v = started_varnish("127.0.0.1", s.port)
    try:
        c = v.client()
        uris = [X_URL, f"/w:60/f:png/{X}"]
        for u in uris + uris:
            r = c.get(u)
            assert r.status == 200, r.describe()
        assert all(c.get(u).header("x-cache-edge") == "HIT" for u in uris)
        assert c.get(Y_URL).status == 200 and c.get(Y_URL).header("x-cache-edge") == "HIT"
        p = kiln("cache", "purge", "--root", str(root), "--set", f"cache.disk_path={disk}",
                 "--set", f"purge.varnish={v.url}", "--source", X, timeout=60)
        assert p.returncode == 0, (p.stdout, p.stderr)
        lines = p.stdout.splitlines()
        assert len(lines) == 2 and lines[1] == f"varnish {v.url}: 200 purged {len(uris)} objects", lines
        for u in uris:
            assert c.get(u).header("x-cache-edge") == "MISS", u
        assert c.get(Y_URL).header("x-cache-edge") == "HIT"
    finally:
        v.cleanup()


def test_cli_purge_of_a_mistyped_path_says_so_and_fails(disk, root):
    """Issue 41: a path with no file under the root and nothing cached is a mistake, not a purge
    (before: "purged 0 entries" and exit status 0); a deleted source's variants still purge."""
    p = kiln(*purge_args(None, disk, root, "--source", "no/such/photo.jpg"), timeout=30)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert "no source at no/such/photo.jpg under" in p.stderr and "check the path" in p.stderr, p.stderr
    # The disk line is still printed: the purge ran.
    assert p.stdout.startswith("purged 0 entries"), p.stdout
    # An existing source with nothing cached: a plain purge of nothing, exit status 0.
    ok = kiln(*purge_args(None, disk, root, "--source", X), timeout=30)
    assert ok.returncode == 0 and ok.stderr == "", (ok.stdout, ok.stderr)
