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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from fcgiclient import fcgi_params
from helpers import KILN_BIN, NGINX_DIR, HttpClient, assert_plain_error
from stack import alive, child_pids, free_port, tail

KEY = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"
SALT = "a1b2c3d4e5f60718"
SECRET = "9c1f0d7e2b4a6c8e0f1d3b5a7c9e1f2d"  # the peer secret nginx and the hosts share
PORT = 9000
SOURCE = "pillow_hopper.jpg"  # 128 x 128: cheap renders
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
    proc: subprocess.Popen | None = None
    logs: list[Path] = field(default_factory=list)

    @property
    def cache(self) -> Path:
        return self.dir / "cache"

    def start(self, timeout: float = 20) -> None:
        log = self.dir / f"kiln-{len(self.logs) + 1}.log"
        self.logs.append(log)
        with open(log, "ab") as f:
            self.proc = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL, stdout=f, stderr=f)
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


class Fleet:
    def __init__(self, root: Path):
        self.dir = Path(tempfile.mkdtemp(prefix="kiln-hosts-", dir=os.environ.get("TMPDIR", "/tmp")))
        os.chmod(self.dir, 0o755)
        self.net = Network(str(os.getpid()))
        secret_file = self.dir / "peer-secret"
        secret_file.write_text(SECRET + "\n")
        os.chmod(secret_file, 0o600)
        self.hosts: list[Host] = []
        for i, addr in enumerate(self.net.hosts):
            d = self.dir / f"host{i + 1}"
            (d / "cache").mkdir(parents=True)
            cmd = self.net.prefix(i) + [
                str(KILN_BIN), "serve", "--listen", f"{addr}:{PORT}", "--workers", "2", "--root", str(root),
                "--set", f"server.allowed_peers={self.net.nginx_addr}",
                "--set", f"server.peer_secret_file={secret_file}",
                "--set", f"cache.disk_path={d / 'cache'}",
                "--set", f"security.keys={KEY}", "--set", f"security.salts={SALT}",
                "--set", "server.shutdown_timeout=2s"]
            self.hosts.append(Host(i, addr, d, cmd))
        self.nginx: subprocess.Popen | None = None
        self.port = 0
        self.fail_timeout = 0

    def start(self) -> None:
        for h in self.hosts:
            h.start()
        self._start_nginx()

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
            if self.nginx and self.nginx.poll() is None:
                self.nginx.send_signal(signal.SIGQUIT)
                try:
                    self.nginx.wait(10)
                except subprocess.TimeoutExpired:
                    self.nginx.kill()
                    self.nginx.wait()
            for h in self.hosts:
                h.stop()
        finally:
            self.net.remove()

    def diagnostics(self) -> str:
        out = [f"nginx error log:\n{tail(self.dir / 'error.log')}"]
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


def test_failover_and_return(fleet, distribution):
    """Kill one host's master: its variants keep answering 200 through the next host, the others
    stay where they were; start it again: its variants come back to it (its disk cache)."""
    placed, _, _ = distribution
    client = fleet.client()
    victim = fleet.hosts[1]
    mine = [p for p, h in placed.items() if h == victim.index][:30]
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
    first_ok = killed + down[0]
    placed_down = fleet.where([r.header("x-request-id") for r in [client.get(p) for p in mine[:5]]])
    assert victim.index not in {v[0] for v in placed_down.values()}
    others = fleet.where([r.header("x-request-id") for r in [client.get(p) for p in theirs]])
    moved = [p for p, (rid_host) in zip(theirs, others.values()) if rid_host[0] != placed[p]]
    assert not moved, f"variants of the live hosts moved when one host stopped: {moved[:3]}"
    assert max(down) < 2.0, f"a request took {max(down):.2f}s with a host down: {down}"

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
