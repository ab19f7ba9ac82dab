"""The fleet of the test_hosts_*.py files: several Kiln hosts behind one nginx with
nginx/kiln-hosts.conf, for real. Three `kiln serve` hosts, each in a network namespace the test
makes (`ip netns add`, veth pairs on a bridge in the root namespace, addresses 10.77.N.2-4),
listening on TCP with `server.allowed_peers` set to nginx's address and a peer secret, each with
its own disk cache; one nginx in the root namespace running the shipped recipe (only the hosts'
addresses, the listen port and the secret include's path are filled in).

With the shared result store (issue 28): a real SeaweedFS (`seaweed.py`, `weed server -s3`) on
nginx's address is every host's `cache.shared`, and a real Varnish 7.1 with vmod-xkey
(`varnish.py`, the shipped `varnish/kiln.vcl`) stands in front of nginx as the edge.

Where network namespaces cannot be made, the hosts listen on 127.0.0.2-4 instead (the output
says so); everything else is the same.

One fleet serves every test_hosts_*.py file: `fleet` and `distribution` (the 1,000 variants,
requested once) are session fixtures, registered by conftest.py, and `close_after_last_use`
(conftest.py's `pytest_runtest_teardown`) stops the fleet after the last test that uses it, so
that it does not run beside the later files. The files run in name order, which is the order the
tests need: test_hosts_ring.py first (its renders are the store's count), then
test_hosts_store*.py, then test_hosts_trusted_peers.py (its one render of a new variant would
change that count).
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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from fcgiclient import fcgi_params
from helpers import KILN_BIN, NGINX_DIR, HttpClient
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
# The adapters' forms of test_hosts_ring.py read their own copy: the store's count of SOURCE's
# variants (test_hosts_store.py) stays the signed variants'.
ADAPTED = "adapted.jpg"


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
        for name in [SOURCE, PURGED, KEPT, TAMPERED, ADAPTED] + ODD:
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
                "--set", "server.shutdown_timeout=2s",
                # The URL adapters, for the ring's query keys (test_hosts_ring.py).
                "--set", "adapters.nextjs=true", "--set", "adapters.cloudflare=true", "--set", "adapters.imgix=true",
                "--set", "adapters.allow_unsigned=true"] + self.shared
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


# The running fleet, for close_after_last_use (None before the first use and once stopped).
RUNNING: list[Fleet] = []


def stop_fleet() -> None:
    """Stops the fleet and deletes its folder, once (the fixture's teardown and the hook both call it)."""
    while RUNNING:
        f = RUNNING.pop()
        try:
            f.close()
        finally:
            shutil.rmtree(f.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def fleet(root):
    f = Fleet(root)
    RUNNING.append(f)
    try:
        f.start()
        yield f
    finally:
        stop_fleet()


def close_after_last_use(item, nextitem) -> None:
    """After the last test of a run that uses the fleet (the next one does not, or there is
    none): stops it, rather than at the end of the session (conftest.py's pytest_runtest_teardown)."""
    if "fleet" in getattr(item, "fixturenames", ()) and (nextitem is None or "fleet" not in getattr(nextitem, "fixturenames", ())):
        stop_fleet()


# path -> (ETag, SHA-256 of the body) of the first answer (the render).
ETAGS: dict[str, tuple[str, str]] = {}


def variant_path(w: int, h: int) -> str:
    return f"/rs:{w}:{h}:force/{SOURCE}"


def get_all(client: HttpClient, paths: list[str], workers: int = 8):
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda p: (p, client.get(p, timeout=30)), paths))


@pytest.fixture(scope="session")
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


def edge_get(fleet, path: str):
    r = fleet.edge().get(path, timeout=30)
    assert r.status == 200, f"{path} through Varnish: {r.describe()}\n{fleet.diagnostics()}"
    return r


def varnish_hit(r) -> bool:
    """Varnish answered from its cache: X-Varnish holds this request's id and the cached one's."""
    return len((r.header("x-varnish") or "").split()) == 2
