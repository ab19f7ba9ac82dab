"""Several Kiln hosts behind one nginx with nginx/kiln-hosts.conf, for real: three `kiln serve`
hosts, each in a network namespace the test makes (`ip netns add`, veth pairs on a bridge in the
root namespace, addresses 10.77.N.2-4), listening on TCP with `server.allowed_peers` set to
nginx's address and a peer secret, each with its own disk cache; one nginx in the root namespace
running the shipped recipe (only the hosts' addresses, the listen port and the secret include's
path are filled in).

Checked:
- 1,000 distinct signed variants: each is served (200, an image of the asked size) and rendered
  on exactly one host (its request id in that host's access log, with cache=MISS); every host
  renders within 15 % of a third;
- the URL forms of one variant (signed, signed again with an expiry, the trusted /thumb
  rewrite) land on the same host, the later forms as cache hits;
- one host's master killed: its variants keep answering 200 (the next host on the ring), the
  other hosts keep theirs; started again, its variants come back to it (disk cache hits) within
  fail_timeout and a little;
- a connection from an address outside the allow-list is closed before anything is read (main
  and status port), a request without the secret or with a wrong one gets 403 and nothing
  rendered, and no log holds the secret.

With the shared result store (issue 28): a real SeaweedFS (`seaweed.py`, `weed server -s3`) on
nginx's address is every host's `cache.shared`, and a real Varnish 7.1 with vmod-xkey
(`varnish.py`, the shipped `varnish/kiln.vcl`) stands in front of nginx as the edge:
- every rendered variant reaches the store, under `fleet/<source tag>/<variant>` and nowhere else;
- a host whose disk cache is wiped (and memory lost with a restart) answers its whole share from
  the store: zero renders;
- while a host is down, the next host on the ring answers its variants from the store, not by
  rendering;
- the store hung (SIGSTOP) and then killed: every request still answers 200 by rendering, none
  slower than a render plus the store's timeout (2x margin), errors counted; started again,
  writes resume;
- `kiln cache purge --source X` (store, every host's disk and memory through their status
  sockets, Varnish by xkey) leaves no tier holding a variant of X, Y untouched; the next request
  for each variant of X renders once in the fleet;
- hostile source names give keys inside the prefix; an object tampered with in the store (cut
  short, or a wrong digest in its metadata) is discarded and rendered again, then overwritten.

Where network namespaces cannot be made, the hosts listen on 127.0.0.2-4 instead (the output
says so); everything else is the same.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from fcgiclient import fcgi_params
from helpers import KILN_BIN, NGINX_DIR, HttpClient, assert_plain_error
from seaweed import SeaweedStore
from stack import alive, child_pids, free_port, tail
from varnish import started_varnish

KEY = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"
SALT = "a1b2c3d4e5f60718"
SECRET = "9c1f0d7e2b4a6c8e0f1d3b5a7c9e1f2d"  # the peer secret nginx and the hosts share
PORT = 9000
SOURCE = "pillow_hopper.jpg"  # 128 x 128: cheap renders
STATUS_PORT = PORT + 1  # server.status_listen = auto
BUCKET, PREFIX = "kiln", "fleet/"
STORE_TIMEOUT = 0.3  # cache.shared_timeout
RETRY_AFTER = 2  # cache.shared_retry_after
# Sources of the store tests: copies of SOURCE under other names (another tag each).
PURGED, KEPT, TAMPERED = "purge-x.jpg", "keep-y.jpg", "tamper.jpg"
ODD = ["odd dir/na me;1.jpg", "odd dir/%2e%2e.jpg", "odd dir/\u00e9t\u00e9.jpg"]
KEY_PATTERN = re.compile(r"^fleet/[0-9a-f]{32}/[0-9a-f]{64}$")
HOSTS = 3
VARIANTS = [(w, h) for w in range(8, 48) for h in range(8, 33)]  # 40 x 25 = 1,000 distinct sizes
TOLERANCE = 0.15
# What the recipe says, read from it below.
RECIPE = NGINX_DIR / "kiln-hosts.conf"
RECIPE_SERVER = re.compile(r"^(\s*)server 10\.0\.0\.1[123]:9000 (weight=\d+ max_fails=\d+ fail_timeout=(\d+)s);$", re.M)
RECIPE_SECRET_INCLUDE = "include /etc/nginx/kiln-peer-secret.conf;"


def sign(path: str) -> str:
    mac = hmac.new(bytes.fromhex(KEY), bytes.fromhex(SALT) + path.encode(), hashlib.sha256).digest()
    return "/" + base64.urlsafe_b64encode(mac).rstrip(b"=").decode() + path


def run(*cmd: str, check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run(list(cmd), capture_output=True, text=True, timeout=20)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {p.stderr.strip() or p.returncode}")
    return p


class Network:
    """A bridge in the root namespace with nginx's address (.1) and a stranger's (.250), and one
    namespace per host joined to it by a veth pair; or, when that fails, loopback addresses."""

    def __init__(self, tag: str):
        self.tag = tag
        self.namespaces: list[str] = []
        self.links: list[str] = []
        self.mode = "netns"
        self.note = ""
        try:
            if os.environ.get("KILN_HOSTS_LOOPBACK"):  # to try the fallback by hand
                raise RuntimeError("KILN_HOSTS_LOOPBACK is set")
            self._make_namespaces()
        except (RuntimeError, FileNotFoundError, subprocess.TimeoutExpired) as e:
            self.remove()
            self.mode = "loopback"
            self.note = f"network namespaces unavailable ({e}); the hosts listen on 127.0.0.2-4 instead"
            print(f"\ntest_hosts: {self.note}")
            self.nginx_addr, self.stranger = "127.0.0.1", "127.0.0.5"
            self.hosts = [f"127.0.0.{i + 2}" for i in range(HOSTS)]
            self.namespaces = []

    def _subnet(self) -> int:
        """10.77.0.0/24, the addresses the distribution was measured on (the ring, hence the
        split, depends on the hosts' addresses); what a killed run of this test left there is
        removed first. Another free 10.77.N.0/24 only when something else holds it."""
        for line in run("ip", "-o", "link").stdout.splitlines():
            m = re.match(r"\d+: (kh(\d+)[bh]\d*)[@:]", line)
            if m and not alive(int(m[2])):
                run("ip", "link", "del", m[1], check=False)
        for ns in run("ip", "netns", "list").stdout.split():
            m = re.fullmatch(r"kiln-hosts-(\d+)-\d", ns)
            if m and not alive(int(m[1])):
                run("ip", "netns", "del", ns, check=False)
        used = run("ip", "-o", "addr").stdout
        for n in range(0, 250):
            if f"10.77.{n}." not in used:
                if n:
                    self.note = f"10.77.0.0/24 is in use: the hosts are on 10.77.{n}.2-4"
                    print(f"\ntest_hosts: {self.note}")
                return n
        raise RuntimeError("no free 10.77.N.0/24")

    def _make_namespaces(self) -> None:
        n = self._subnet()
        self.nginx_addr, self.stranger = f"10.77.{n}.1", f"10.77.{n}.250"
        self.hosts = [f"10.77.{n}.{i + 2}" for i in range(HOSTS)]
        bridge = f"kh{self.tag}b"
        run("ip", "link", "add", bridge, "type", "bridge")
        self.links.append(bridge)
        run("ip", "addr", "add", f"{self.nginx_addr}/24", "dev", bridge)
        run("ip", "addr", "add", f"{self.stranger}/24", "dev", bridge)
        run("ip", "link", "set", bridge, "up")
        for i, addr in enumerate(self.hosts):
            ns, outer, inner = f"kiln-hosts-{self.tag}-{i + 1}", f"kh{self.tag}h{i + 1}", f"kh{self.tag}n{i + 1}"
            run("ip", "netns", "add", ns)
            self.namespaces.append(ns)
            run("ip", "link", "add", outer, "type", "veth", "peer", "name", inner)
            self.links.append(outer)
            run("ip", "link", "set", inner, "netns", ns)
            run("ip", "link", "set", outer, "master", bridge)
            run("ip", "link", "set", outer, "up")
            run("ip", "netns", "exec", ns, "ip", "addr", "add", f"{addr}/24", "dev", inner)
            run("ip", "netns", "exec", ns, "ip", "link", "set", inner, "up")
            run("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
        # STP is off on a new bridge: its ports forward as soon as they are up (Host.start
        # retries its connection until the host listens).

    def prefix(self, i: int) -> list[str]:
        return ["ip", "netns", "exec", self.namespaces[i]] if self.namespaces else []

    def remove(self) -> None:
        for ns in self.namespaces:
            # Anything still running in it was started by this test.
            pids = run("ip", "netns", "pids", ns, check=False).stdout.split()
            for p in pids:
                try:
                    os.kill(int(p), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            run("ip", "netns", "del", ns, check=False)
        for link in reversed(self.links):
            run("ip", "link", "del", link, check=False)
        self.namespaces, self.links = [], []


@dataclass
class Host:
    index: int
    addr: str
    dir: Path
    cmd: list[str]
    env: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen | None = None
    logs: list[Path] = field(default_factory=list)

    @property
    def cache(self) -> Path:
        return self.dir / "cache"

    def start(self, timeout: float = 20) -> None:
        log = self.dir / f"kiln-{len(self.logs) + 1}.log"
        self.logs.append(log)
        with open(log, "ab") as f:
            self.proc = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL, stdout=f, stderr=f,
                                         env={**os.environ, **self.env})
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"host {self.addr}: kiln exited with {self.proc.returncode}\n{tail(log)}")
            if "listening on" in log.read_text(errors="replace") and len(self.workers()) >= 2:
                try:
                    socket.create_connection((self.addr, PORT), timeout=1).close()
                    return
                except OSError:
                    pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"host {self.addr}: kiln not listening within {timeout}s\n{tail(log)}")
            time.sleep(0.05)

    def workers(self) -> list[int]:
        return child_pids(self.proc.pid) if self.proc and self.proc.poll() is None else []

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if not self.proc or self.proc.poll() is not None:
            return
        workers = self.workers()
        self.proc.send_signal(sig)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        deadline = time.monotonic() + 15
        for p in workers:
            while alive(p) and time.monotonic() < deadline:
                time.sleep(0.02)
            if alive(p):
                os.kill(p, signal.SIGKILL)

    def log_text(self) -> str:
        return "".join(p.read_text(errors="replace") for p in self.logs if p.exists())

    def wipe_cache(self) -> None:
        """Removes everything in the disk cache folder (the host is stopped)."""
        for p in self.cache.iterdir():
            shutil.rmtree(p) if p.is_dir() else p.unlink()

    def metric(self, name: str, label: str = "") -> float:
        """The sum of the series of `name` (with `label`, e.g. `result="hit"`, in them) on this
        host's /_kiln/metrics, read on its status port."""
        raw = fcgi_tcp(self.addr, STATUS_PORT, fcgi_params("GET", "/_kiln/metrics") | {"KILN_PEER_SECRET": SECRET},
                       source=FLEET_SOURCE[0])
        total = 0.0
        for line in stdout_of(raw).decode(errors="replace").splitlines():
            if line.startswith(name) and (line[len(name):len(name) + 1] in ("{", " ")) and label in line:
                total += float(line.rsplit(" ", 1)[1])
        return total

    def access(self) -> dict[str, tuple[str, str]]:
        """request id -> (status, cache) of every access line this host wrote."""
        out = {}
        for line in self.log_text().splitlines():
            if "msg=access" in line:
                rid = re.search(r"\brequest_id=(\S+)", line)
                st = re.search(r"\bstatus=(\d+)", line)
                cache = re.search(r"\bcache=(\S+)", line)
                if rid and st:
                    out[rid[1]] = (st[1], cache[1] if cache else "-")
        return out


# The address the test's own FastCGI connections come from (nginx's, in the allow-list).
FLEET_SOURCE: list[str] = ["127.0.0.1"]


class Fleet:
    def __init__(self, root: Path):
        self.dir = Path(tempfile.mkdtemp(prefix="kiln-hosts-", dir=os.environ.get("TMPDIR", "/tmp")))
        os.chmod(self.dir, 0o755)
        self.net = Network(str(os.getpid()))
        FLEET_SOURCE[0] = self.net.nginx_addr
        self.root = self.dir / "root"
        (self.root / "odd dir").mkdir(parents=True)
        for name in [SOURCE, PURGED, KEPT, TAMPERED] + ODD:
            shutil.copyfile(root / SOURCE, self.root / name)
        os.chmod(self.root, 0o755)
        self.secret_file = self.dir / "peer-secret"
        self.secret_file.write_text(SECRET + "\n")
        os.chmod(self.secret_file, 0o600)
        # The shared store, on nginx's address: reachable from every host's namespace.
        self.store = SeaweedStore(self.dir / "store", addr=self.net.nginx_addr, bucket=BUCKET)
        self.shared = [
            "--set", f"cache.shared=s3://{BUCKET}/{PREFIX}", "--set", f"cache.shared_endpoint={self.store.endpoint}",
            "--set", f"source.allowed_networks={self.net.nginx_addr}/32",
            "--set", f"cache.shared_timeout={STORE_TIMEOUT}s", "--set", f"cache.shared_retry_after={RETRY_AFTER}s"]
        self.hosts: list[Host] = []
        for i, addr in enumerate(self.net.hosts):
            d = self.dir / f"host{i + 1}"
            (d / "cache").mkdir(parents=True)
            cmd = self.net.prefix(i) + [
                str(KILN_BIN), "serve", "--listen", f"{addr}:{PORT}", "--workers", "2", "--root", str(self.root),
                "--set", f"server.allowed_peers={self.net.nginx_addr}",
                "--set", f"server.peer_secret_file={self.secret_file}",
                "--set", f"cache.disk_path={d / 'cache'}",
                "--set", f"security.keys={KEY}", "--set", f"security.salts={SALT}",
                "--set", "server.shutdown_timeout=2s"] + self.shared
            self.hosts.append(Host(i, addr, d, cmd, env=self.store.environment))
        self.nginx: subprocess.Popen | None = None
        self.varnish = None
        self.port = 0
        self.fail_timeout = 0

    def start(self) -> None:
        self.store.start()
        for h in self.hosts:
            h.start()
        self._start_nginx()
        self.varnish = started_varnish("127.0.0.1", self.port)

    def edge(self) -> HttpClient:
        """A client of Varnish, in front of nginx."""
        return HttpClient("127.0.0.1", self.varnish.port)

    def purge(self, source: str) -> subprocess.CompletedProcess:
        """`kiln cache purge --source` as an operator runs it: the store, every host's status
        socket, Varnish."""
        hosts = ",".join(f"{h.addr}:{STATUS_PORT}" for h in self.hosts)
        return subprocess.run(
            [str(KILN_BIN), "cache", "purge", "--source", source, *self.shared,
             "--set", f"purge.hosts={hosts}", "--set", f"purge.varnish={self.varnish.url}",
             "--set", f"server.peer_secret_file={self.secret_file}"],
            capture_output=True, text=True, timeout=60, env={**os.environ, **self.store.environment})

    def _start_nginx(self) -> None:
        text = RECIPE.read_text()
        servers = RECIPE_SERVER.findall(text)
        assert len(servers) == HOSTS, f"nginx/kiln-hosts.conf: expected {HOSTS} `server 10.0.0.1N:9000 weight=.. max_fails=.. fail_timeout=Ns;` lines"
        self.fail_timeout = int(servers[0][2])
        addrs = iter(self.net.hosts)
        text = RECIPE_SERVER.sub(lambda m: f"{m[1]}server {next(addrs)}:{PORT} {m[2]};", text)
        assert text.count(RECIPE_SECRET_INCLUDE) == 1, f"nginx/kiln-hosts.conf: one `{RECIPE_SECRET_INCLUDE}`"
        (self.dir / "kiln-peer-secret.conf").write_text(f'fastcgi_param KILN_PEER_SECRET "{SECRET}";\n')
        text = text.replace(RECIPE_SECRET_INCLUDE, f"include {self.dir / 'kiln-peer-secret.conf'};")
        self.port = free_port()
        assert text.count("listen 8080;") == 1
        text = text.replace("listen 8080;", f"listen 127.0.0.1:{self.port};")
        (self.dir / "kiln-hosts.conf").write_text(text)
        (self.dir / "temp").mkdir()
        (self.dir / "nginx.conf").write_text(f"""daemon off;
worker_processes 1;
pid {self.dir}/nginx.pid;
error_log {self.dir}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    default_type application/octet-stream;
    log_format hosts '$request_id $status "$upstream_addr" "$upstream_status" $uri "$kiln_variant"';
    access_log {self.dir}/access.log hosts;
    client_body_temp_path {self.dir}/temp/client_body;
    fastcgi_temp_path {self.dir}/temp/fastcgi;
    proxy_temp_path {self.dir}/temp/proxy;
    uwsgi_temp_path {self.dir}/temp/uwsgi;
    scgi_temp_path {self.dir}/temp/scgi;
    include {self.dir}/kiln-hosts.conf;
}}
""")
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        args = [nginx, "-p", str(self.dir), "-c", str(self.dir / "nginx.conf"), "-e", str(self.dir / "error.log")]
        t = subprocess.run(args[:1] + ["-t", "-q"] + args[1:], capture_output=True, text=True, timeout=30)
        assert t.returncode == 0, f"nginx -t: {t.stderr}"
        self.nginx = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=open(self.dir / "nginx.stderr", "ab"))
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                assert self.nginx.poll() is None, f"nginx exited: {tail(self.dir / 'error.log')}"
                assert time.monotonic() < deadline, "nginx not listening"
                time.sleep(0.05)

    def client(self) -> HttpClient:
        return HttpClient("127.0.0.1", self.port)

    def where(self, request_ids: list[str], timeout: float = 5) -> dict[str, tuple[int, str, str]]:
        """request id -> (host index, status, cache) from the hosts' access logs (lines are
        written just after the answer, so wait a little for the last ones)."""
        deadline = time.monotonic() + timeout
        while True:
            found: dict[str, tuple[int, str, str]] = {}
            dup = []
            for h in self.hosts:
                for rid, (st, cache) in h.access().items():
                    if rid in found:
                        dup.append(rid)
                    found[rid] = (h.index, st, cache)
            assert not dup, f"request ids in two hosts' logs: {dup[:5]}"
            missing = [r for r in request_ids if r not in found]
            if not missing or time.monotonic() > deadline:
                assert not missing, f"{len(missing)} request ids in no host's log, e.g. {missing[:3]}"
                return {r: found[r] for r in request_ids}
            time.sleep(0.1)

    def close(self) -> None:
        try:
            if self.varnish:
                self.varnish.cleanup()
            if self.nginx and self.nginx.poll() is None:
                self.nginx.send_signal(signal.SIGQUIT)
                try:
                    self.nginx.wait(10)
                except subprocess.TimeoutExpired:
                    self.nginx.kill()
                    self.nginx.wait()
            for h in self.hosts:
                h.stop()
            self.store.stop()
        finally:
            self.net.remove()

    def diagnostics(self) -> str:
        out = [f"nginx error log:\n{tail(self.dir / 'error.log')}", f"store:\n{self.store.tail()}"]
        for h in self.hosts:
            for log in h.logs:
                out.append(f"host {h.addr} ({log.name}):\n{tail(log, 15)}")
        return "\n".join(out)


@pytest.fixture(scope="module")
def fleet(root):
    f = Fleet(root)
    try:
        f.start()
        yield f
    finally:
        f.close()
        shutil.rmtree(f.dir, ignore_errors=True)


# path -> (ETag, SHA-256 of the body) of the first answer (the render).
ETAGS: dict[str, tuple[str, str]] = {}


def variant_path(w: int, h: int) -> str:
    return f"/rs:{w}:{h}:force/{SOURCE}"


def get_all(client: HttpClient, paths: list[str], workers: int = 8):
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda p: (p, client.get(p, timeout=30)), paths))


@pytest.fixture(scope="module")
def distribution(fleet):
    """The 1,000 variants, each requested once: path -> host index."""
    client = fleet.client()
    started = time.monotonic()
    results = get_all(client, [sign(variant_path(w, h)) for w, h in VARIANTS])
    elapsed = time.monotonic() - started
    bad = [(p, r.describe()) for p, r in results if r.status != 200 or r.content_type != "image/jpeg"]
    assert not bad, f"{len(bad)} of {len(results)} variants failed, e.g. {bad[:3]}\n{fleet.diagnostics()}"
    ids = [r.header("x-request-id") for _, r in results]
    assert all(ids) and len(set(ids)) == len(ids), "every answer carries its own X-Request-Id"
    seen = fleet.where(ids)
    placed = {}
    for (path, r), rid in zip(results, ids):
        host, status, cache = seen[rid]
        assert status == "200" and cache == "MISS", f"{path}: host {host + 1} logged {status} {cache}"
        assert r.header("x-cache") == "MISS", f"{path}: a new variant is rendered, X-Cache {r.header('x-cache')}"
        placed[path] = host
        ETAGS[path] = (r.header("etag"), hashlib.sha256(r.body).hexdigest())
    counts = [sum(1 for h in placed.values() if h == i) for i in range(HOSTS)]
    entries = [sum(1 for p in h.cache.rglob("*") if p.is_file()) for h in fleet.hosts]
    print(f"\ntest_hosts ({fleet.net.mode}): 1000 variants in {elapsed:.1f}s; rendered per host {counts}; "
          f"disk cache files per host {entries}")
    return placed, counts, entries


def test_distribution(fleet, distribution):
    """Each of 1,000 distinct variants rendered once, on one host; every host within 15 % of a
    third; each host's disk cache holds its share."""
    placed, counts, entries = distribution
    assert len(placed) == len(VARIANTS) == 1000
    even = len(VARIANTS) / HOSTS
    for i, n in enumerate(counts):
        assert abs(n - even) <= TOLERANCE * even, f"host {i + 1} rendered {n} of 1000 (even: {even:.0f} ± 15%): {counts}"
    # The disk caches grew by their host's share: the hosts do not all cache everything.
    assert all(e > 0 for e in entries)
    assert max(entries) < 2 * min(entries) + 10, f"disk cache files per host {entries} do not follow {counts}"
    # Sizes are right (a sample: decoding all 1,000 adds nothing).
    client = fleet.client()
    for w, h in VARIANTS[::97]:
        _, im = client.image(sign(variant_path(w, h)))
        assert im.size == (w, h)


def test_url_forms_land_on_one_host(fleet, distribution):
    """Signed, signed with an expiry (another signature) and the trusted /thumb rewrite of one
    variant reach the same host, which answers the later forms from its cache."""
    client = fleet.client()
    hosts_used = set()
    for w, h in [(20 + i, 30 + i) for i in range(12)]:
        rest = f"/rs:{w}:{h}:fill/-/{SOURCE}"
        forms = [sign(rest), sign(f"/exp:{int(time.time()) + 3600}{rest}"), f"/thumb/{w}x{h}/{SOURCE}"]
        answers = [client.get(p) for p in forms]
        for p, r in zip(forms, answers):
            assert r.status == 200, f"{p}: {r.describe()}"
        placed = fleet.where([r.header("x-request-id") for r in answers])
        where = {v[0] for v in placed.values()}
        assert len(where) == 1, f"{rest}: the forms {forms} went to hosts {[v[0] + 1 for v in placed.values()]}"
        caches = [r.header("x-cache") for r in answers]
        assert caches[0] == "MISS" and all(c.startswith("HIT") for c in caches[1:]), f"{rest}: X-Cache {caches}"
        hosts_used |= where
    assert len(hosts_used) > 1, "12 variants all on one host: the key does not spread"


def source_tag(path: str) -> str:
    """SourceTag.hex: the first 32 hex digits of SHA-256("kiln-source\\n" + path)."""
    return hashlib.sha256(("kiln-source\n" + path).encode()).hexdigest()[:32]


def wait_for_keys(fleet, prefix: str, count: int, timeout: float = 60) -> list[str]:
    """The store's keys under `prefix` once there are at least `count` (writes follow answers)."""
    deadline = time.monotonic() + timeout
    while True:
        keys = fleet.store.keys(prefix)
        if len(keys) >= count or time.monotonic() > deadline:
            return keys
        time.sleep(0.2)


def test_store_holds_every_variant(fleet, distribution):
    """Every rendered variant reaches the shared store, under the prefix and its source's tag,
    with the metadata that lets a host answer it without decoding."""
    prefix = f"{PREFIX}{source_tag(SOURCE)}/"
    rendered = len(VARIANTS) + 12  # and the 12 of test_url_forms_land_on_one_host, each under one key whatever its form
    keys = wait_for_keys(fleet, prefix, rendered)
    assert len(keys) == rendered, f"{len(keys)} objects under {prefix} after {rendered} renders\n{fleet.diagnostics()}"
    everything = fleet.store.keys()
    assert all(KEY_PATTERN.match(k) for k in everything), [k for k in everything if not KEY_PATTERN.match(k)][:5]
    head = fleet.store.client().head_object(Bucket=BUCKET, Key=keys[0])
    meta = head["Metadata"]
    assert head["ContentType"] == "image/jpeg"
    for name in ("kiln-key", "kiln-digest", "kiln-sha256"):
        assert meta.get(name), f"object metadata {meta} lacks {name}"
    assert meta["kiln-key"] == keys[0].rsplit("/", 1)[1]
    assert f'"{meta["kiln-digest"]}"' in {etag for etag, _ in ETAGS.values()}, "the digest is a rendered variant's ETag"


def test_wiped_host_serves_from_store(fleet, distribution):
    """A host whose disk cache is wiped and whose memory is lost (a restart) answers its whole
    share from the store: the same ETags and bytes, zero renders."""
    placed, _, _ = distribution
    host = fleet.hosts[2]
    mine = sorted(p for p, h in placed.items() if h == host.index)
    wait_for_keys(fleet, f"{PREFIX}{source_tag(SOURCE)}/", len(VARIANTS) + 12)
    host.stop()
    host.wipe_cache()
    assert not any(p.is_file() for p in host.cache.rglob("*"))
    host.start()
    client = fleet.client()
    results = get_all(client, mine)
    bad = [(p, r.describe()) for p, r in results if r.status != 200]
    assert not bad, f"{len(bad)} of {len(mine)} failed: {bad[:3]}\n{fleet.diagnostics()}"
    seen = fleet.where([r.header("x-request-id") for _, r in results])
    caches = {}
    for path, r in results:
        where, status, cache = seen[r.header("x-request-id")]
        assert where == host.index, f"{path} left host {host.index + 1} after its restart"
        caches[cache] = caches.get(cache, 0) + 1
        assert r.header("x-cache") == "HIT-SHARED", f"{path}: X-Cache {r.header('x-cache')} (a render or a local hit)"
        assert (r.header("etag"), hashlib.sha256(r.body).hexdigest()) == ETAGS[path], f"{path}: not the bytes rendered before"
    assert caches == {"HIT-SHARED": len(mine)}, caches
    print(f"\ntest_hosts: host {host.index + 1}'s {len(mine)} variants after its disk was wiped: {caches}")


def test_failover_and_return(fleet, distribution):
    """Kill one host's master: its variants keep answering 200 through the next host, the others
    stay where they were; start it again: its variants come back to it (its disk cache)."""
    placed, _, _ = distribution
    client = fleet.client()
    victim = fleet.hosts[1]
    mine = [p for p, h in placed.items() if h == victim.index][:30]
    wait_for_keys(fleet, f"{PREFIX}{source_tag(SOURCE)}/", len(VARIANTS))
    theirs = [p for p, h in placed.items() if h != victim.index][:30]
    assert len(mine) == 30 and len(theirs) == 30

    victim.stop(signal.SIGKILL)  # the master dies; its workers get SIGTERM from the kernel, drain, exit
    killed = time.monotonic()
    down = []
    for p in mine:
        t = time.monotonic()
        r = client.get(p, timeout=10)
        down.append(time.monotonic() - t)
        assert r.status == 200 and r.content_type == "image/jpeg", f"{p} with host {victim.index + 1} down: {r.describe()}\n{fleet.diagnostics()}"
        # The failover host had never seen it: the store's copy, not a render.
        assert r.header("x-cache") == "HIT-SHARED", f"{p} on the failover host: X-Cache {r.header('x-cache')}"
        assert r.header("etag") == ETAGS[p][0]
    first_ok = killed + down[0]
    placed_down = fleet.where([r.header("x-request-id") for r in [client.get(p) for p in mine[:5]]])
    assert victim.index not in {v[0] for v in placed_down.values()}
    others = fleet.where([r.header("x-request-id") for r in [client.get(p) for p in theirs]])
    moved = [p for p, (rid_host) in zip(theirs, others.values()) if rid_host[0] != placed[p]]
    assert not moved, f"variants of the live hosts moved when one host stopped: {moved[:3]}"
    assert max(down) < 2.0, f"a request took {max(down):.2f}s with a host down: {down}"
    for p in mine[:5]:  # the failover host keeps them now
        assert client.get(p).header("x-cache").startswith("HIT")

    victim.start()
    restarted = time.monotonic()
    back_at = None
    probe = mine[0]
    while time.monotonic() - restarted < fleet.fail_timeout + 5:
        r = client.get(probe)
        assert r.status == 200, f"{probe} while host {victim.index + 1} comes back: {r.describe()}"
        if fleet.where([r.header("x-request-id")])[r.header("x-request-id")][0] == victim.index:
            back_at = time.monotonic()
            break
        time.sleep(0.2)
    assert back_at is not None, f"host {victim.index + 1}'s variants did not return within fail_timeout ({fleet.fail_timeout}s) + 5s"
    answers = [client.get(p) for p in mine]
    assert all(r.status == 200 for r in answers)
    back = fleet.where([r.header("x-request-id") for r in answers])
    assert {v[0] for v in back.values()} == {victim.index}, "every variant of the restarted host is back on it"
    hits = [r.header("x-cache") for r in answers[1:]]
    assert all(h and h.startswith("HIT") for h in hits), f"the restarted host answers from its disk cache: {hits}"
    print(f"\ntest_hosts: host {victim.index + 1} killed: first 200 after {first_ok - killed:.3f}s, "
          f"slowest request while down {max(down):.3f}s (median {sorted(down)[len(down) // 2]:.3f}s); "
          f"back on it {back_at - restarted:.2f}s after its restart (fail_timeout {fleet.fail_timeout}s)")


def fcgi_tcp(addr: str, port: int, params: dict[str, str], source: str, timeout: float = 5) -> bytes:
    """Sends one FastCGI request over TCP from the local address `source`; returns every byte
    the server sent before closing (b"" when it closed at once)."""
    def record(rtype: int, content: bytes) -> bytes:
        pad = (8 - len(content) % 8) % 8
        return struct.pack("!BBHHBx", 1, rtype, 1, len(content), pad) + content + b"\0" * pad

    def length(n: int) -> bytes:
        return bytes([n]) if n < 128 else struct.pack("!I", n | 0x80000000)

    body = b"".join(length(len(k.encode())) + length(len(v.encode())) + k.encode() + v.encode() for k, v in params.items())
    s = socket.create_connection((addr, port), timeout=timeout, source_address=(source, 0))
    data = b""
    try:
        try:
            s.sendall(record(1, struct.pack("!HB5x", 1, 0)) + record(4, body) + record(4, b"") + record(5, b""))
        except (BrokenPipeError, ConnectionResetError):
            return data
        while True:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    return data


def stdout_of(raw: bytes) -> bytes:
    out, i = b"", 0
    while i + 8 <= len(raw):
        _, rtype, _, n, pad = struct.unpack("!BBHHB", raw[i:i + 7])
        if rtype == 6:
            out += raw[i + 8:i + 8 + n]
        i += 8 + n + pad
    return out


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


def edge_get(fleet, path: str):
    r = fleet.edge().get(path, timeout=30)
    assert r.status == 200, f"{path} through Varnish: {r.describe()}\n{fleet.diagnostics()}"
    return r


def varnish_hit(r) -> bool:
    """Varnish answered from its cache: X-Varnish holds this request's id and the cached one's."""
    return len((r.header("x-varnish") or "").split()) == 2


def test_purge_everywhere(fleet, distribution):
    """`kiln cache purge --source X`: afterwards Varnish, every host's memory and disk, and the
    store hold no variant of X (the next request for each renders, once in the fleet), and Y's
    variants are untouched everywhere."""
    xs = [sign(f"/rs:{20 + i}:{20 + i}:force/{PURGED}") for i in range(18)]
    ys = [sign(f"/rs:{20 + i}:{20 + i}:force/{KEPT}") for i in range(6)]
    for p in xs + ys:
        assert edge_get(fleet, p).header("x-cache") == "MISS"
    for p in xs + ys:  # the edge holds them now
        assert varnish_hit(edge_get(fleet, p)), f"{p}: not cached by Varnish"
    for p in xs + ys:  # and the hosts (straight to nginx, past the edge), in memory or on disk
        assert fleet.client().get(p).header("x-cache") in ("HIT-MEMORY", "HIT-DISK")
    x_prefix, y_prefix = f"{PREFIX}{source_tag(PURGED)}/", f"{PREFIX}{source_tag(KEPT)}/"
    assert len(wait_for_keys(fleet, x_prefix, len(xs))) == len(xs)
    assert len(wait_for_keys(fleet, y_prefix, len(ys))) == len(ys)

    started = time.monotonic()
    p = fleet.purge(PURGED)
    took = time.monotonic() - started
    assert p.returncode == 0, f"kiln cache purge: {p.returncode}\n{p.stdout}\n{p.stderr}"
    out = p.stdout
    for h in fleet.hosts:
        assert f"{h.addr}:{STATUS_PORT}" in out, f"no line for host {h.addr}:\n{out}"
    assert "varnish" in out.lower() or str(fleet.varnish.port) in out, out
    assert "shared" in out.lower() or "s3://" in out, out
    print(f"\ntest_hosts: kiln cache purge --source {PURGED} in {took:.2f}s:\n{out.strip()}")

    assert fleet.store.keys(x_prefix) == [], "the store still holds variants of the purged source"
    assert len(fleet.store.keys(y_prefix)) == len(ys)
    answers = [edge_get(fleet, p) for p in xs]
    assert not any(varnish_hit(r) for r in answers), "Varnish answered a purged variant from its cache"
    caches = [r.header("x-cache") for r in answers]
    assert caches == ["MISS"] * len(xs), f"after the purge, X came from a tier that should be empty: {caches}"
    seen = fleet.where([r.header("x-request-id") for r in answers])
    assert sorted(v[2] for v in seen.values()) == ["MISS"] * len(xs), "each variant of X rendered exactly once"
    for p in ys:
        assert varnish_hit(edge_get(fleet, p)), f"{p}: Y was purged from Varnish too"
        assert fleet.client().get(p).header("x-cache") in ("HIT-MEMORY", "HIT-DISK"), f"{p}: Y was purged from a host"


def test_hostile_names_and_tampered_objects(fleet, distribution):
    """Odd and hostile source names give object keys inside the prefix (traversals are refused
    before the store); an object cut short or carrying a wrong digest in its metadata is never
    served: the host renders again and overwrites it."""
    client = fleet.client()
    for name in ODD:
        quoted = "/".join(urllib.parse.quote(seg, safe="") for seg in name.split("/"))
        r = client.get(sign(f"/rs:33:33:force/{quoted}"))
        assert r.status == 200, f"{name!r}: {r.describe()}"
    for hostile in ["/rs:33:33:force/../peer-secret", "/rs:33:33:force/%2e%2e/%2e%2e/etc/passwd",
                    "/rs:33:33:force/odd%20dir/..%2F..%2Fpeer-secret"]:
        r = client.get(sign(hostile))
        assert 400 <= r.status < 500, f"{hostile}: {r.describe()}"
    for name in ODD:
        assert len(wait_for_keys(fleet, f"{PREFIX}{source_tag(name)}/", 1)) == 1, name
    everything = fleet.store.keys()
    assert everything and all(KEY_PATTERN.match(k) for k in everything), [k for k in everything if not KEY_PATTERN.match(k)][:5]

    s3 = fleet.store.client()
    tampered: list[str] = []
    for i, damage in enumerate(["cut", "digest"]):
        path = sign(f"/rs:{40 + i}:{30 + i}:force/{TAMPERED}")
        first = client.get(path)
        assert first.status == 200 and first.header("x-cache") == "MISS"
        host = fleet.where([first.header("x-request-id")])[first.header("x-request-id")][0]
        prefix = f"{PREFIX}{source_tag(TAMPERED)}/"
        fresh = [k for k in wait_for_keys(fleet, prefix, i + 1) if k not in tampered]
        assert len(fresh) == 1, f"one new object for one new variant: {fresh}"
        key = fresh[0]
        tampered.append(key)
        obj = s3.get_object(Bucket=BUCKET, Key=key)
        body, meta = obj["Body"].read(), obj["Metadata"]
        assert body == first.body
        if damage == "cut":
            s3.put_object(Bucket=BUCKET, Key=key, Body=body[: len(body) // 2], Metadata=meta, ContentType=obj["ContentType"])
        else:
            meta = dict(meta, **{"kiln-sha256": "0" * 64})
            s3.put_object(Bucket=BUCKET, Key=key, Body=body, Metadata=meta, ContentType=obj["ContentType"])
        # Forget it on its host (disk and memory), through the host's own purge endpoint.
        raw = fcgi_tcp(fleet.hosts[host].addr, STATUS_PORT,
                       fcgi_params("POST", "/_kiln/purge?source=" + urllib.parse.quote(TAMPERED, safe=""))
                       | {"KILN_PEER_SECRET": SECRET}, source=fleet.net.nginx_addr)
        assert stdout_of(raw).startswith(b"Status: 200") or b"purged" in stdout_of(raw), stdout_of(raw)[:300]
        again = client.get(path)
        assert again.status == 200, again.describe()
        assert again.header("x-cache") == "MISS", f"{damage}: a tampered object was served ({again.header('x-cache')})"
        assert again.body == first.body and again.header("etag") == first.header("etag")
        # The render overwrote it with a good copy.
        deadline = time.monotonic() + 20
        while True:
            obj = s3.get_object(Bucket=BUCKET, Key=key)
            good = obj["Body"].read() == first.body and obj["Metadata"].get("kiln-sha256") == hashlib.sha256(first.body).hexdigest()
            if good or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert good, f"{damage}: the tampered object was not overwritten"


def test_store_down_fails_open(fleet, distribution):
    """The store hung, then dead: every request answers 200 by rendering, none slower than a
    render plus the store's timeout (2x margin), the errors counted; started again, writes
    resume."""
    client = fleet.client()

    def render_all(sizes):
        times, answers = [], []
        for w, h in sizes:
            t = time.monotonic()
            r = client.get(sign(variant_path(w, h)), timeout=30)
            times.append(time.monotonic() - t)
            assert r.status == 200 and r.content_type == "image/jpeg", f"{w}x{h}: {r.describe()}\n{fleet.diagnostics()}"
            assert r.header("x-cache") == "MISS", f"{w}x{h}: {r.header('x-cache')}"
            answers.append(r)
        return times, answers

    prefix = f"{PREFIX}{source_tag(SOURCE)}/"
    baseline, _ = render_all([(50 + i, 9) for i in range(12)])  # new variants, store up
    stored = len(wait_for_keys(fleet, prefix, len(VARIANTS) + 12 + 12))
    errors_before = sum(h.metric("kiln_shared_cache_reads_total", 'result="error"') for h in fleet.hosts)

    fleet.store.pause()
    try:
        hung, _ = render_all([(50 + i, 10) for i in range(24)])
    finally:
        fleet.store.resume()
    fleet.store.stop()
    dead, _ = render_all([(50 + i, 11) for i in range(12)])
    bound = 2 * (max(baseline) + STORE_TIMEOUT)
    print(f"\ntest_hosts: store up: slowest render {max(baseline):.3f}s; hung: slowest {max(hung):.3f}s; "
          f"dead: slowest {max(dead):.3f}s (bound {bound:.3f}s)")
    assert max(hung + dead) < bound, f"a request took {max(hung + dead):.2f}s with the store down (bound {bound:.2f}s)"
    errors = sum(h.metric("kiln_shared_cache_reads_total", 'result="error"') for h in fleet.hosts) - errors_before
    skipped = sum(h.metric("kiln_shared_cache_reads_total", 'result="skipped"') for h in fleet.hosts)
    assert errors >= 1, "the store's failures are counted"
    assert skipped >= 1, "after a failure the breaker skips the store"
    assert all(h.proc.poll() is None and len(h.workers()) == 2 for h in fleet.hosts)

    fleet.store.start()
    # New variants until one reaches the store (each worker's breaker reopens after RETRY_AFTER).
    deadline = time.monotonic() + 10 * RETRY_AFTER + 20
    i = 0
    while len(fleet.store.keys(prefix)) <= stored:
        assert time.monotonic() < deadline, "writes did not resume after the store came back"
        render_all([(50 + i % 40, 13 + i // 40)])
        i += 1
        time.sleep(0.2)


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
