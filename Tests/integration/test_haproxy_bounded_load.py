"""The bounded-load recipe haproxy/kiln-hosts.cfg for real (issue 28, section 4): three `kiln serve`
hosts on 127.0.0.1 (TCP, peer secret, status sockets) behind Debian's HAProxy 2.6 speaking FastCGI
itself (only the hosts' addresses and the listen address of the recipe are filled in).

Checked:
- every signed form of one variant (signatures, expiry) hashes to one host, as with nginx's ring;
- 300 requests from 12 clients at once, half of them one hot variant (each request held 30 ms by
  the test-only sleep processor, caches off, so what is in flight does not depend on the CPU): every host serves at most
  1.25x the average (`hash-balance-factor 125`), and the hot variant is served by more than one
  host; the same traffic through the same recipe without the factor (the plain ring, like nginx's
  `hash ... consistent`) puts the hot variant on one host, above 1.25x: the check has teeth;
- the health checks go to the hosts' status sockets (FastCGI), so no worker is held by them.
"""
from __future__ import annotations

import os
import random
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from helpers import KILN_BIN, NGINX_DIR, SLEEP_ON, HttpClient, sleep_url
from stack import free_port, tail

RECIPE = NGINX_DIR.parent / "haproxy" / "kiln-hosts.cfg"
SECRET = "4d2c9a7e1b3f5d7c9e1a3b5c7d9f1e3a"
SOURCE = "pillow_hopper.jpg"
# Every request holds its host for a known time (the test-only sleep processor, caches off), so
# the requests in flight, which the factor balances, do not depend on how fast this CPU renders.
HOLD_MS = 30
HOT = "/unsafe" + sleep_url(HOLD_MS, 320)
COLD = ["/unsafe" + sleep_url(HOLD_MS, 100 + i) for i in range(150)]
FACTOR = 1.25
SERVER_LINE = re.compile(r"^(\s*)server host(\d) 10\.0\.0\.1\d:9000 check port 9001$", re.M)


class Hosts:
    def __init__(self, root: Path, base: Path):
        self.dir = base
        self.procs: list[subprocess.Popen] = []
        self.logs: list[Path] = []
        self.ports: list[tuple[int, int]] = []
        for i in range(3):
            port, status = free_port(), free_port()
            log = base / f"host{i + 1}.log"
            with open(log, "ab") as f:
                self.procs.append(subprocess.Popen(
                    [str(KILN_BIN), "serve", "--listen", f"127.0.0.1:{port}", "--workers", "2", "--root", str(root),
                     "--set", f"server.status_listen=127.0.0.1:{status}", "--set", f"server.peer_secret={SECRET}",
                     "--set", "server.shutdown_timeout=2s", "--set", "cache.memory_cost_limit=0", "--set", "cache.disk_path=", *SLEEP_ON],
                    stdin=subprocess.DEVNULL, stdout=f, stderr=f))
            self.logs.append(log)
            self.ports.append((port, status))
        for (port, _), p, log in zip(self.ports, self.procs, self.logs):
            deadline = time.monotonic() + 20
            while True:
                assert p.poll() is None, f"kiln exited: {tail(log)}"
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    assert time.monotonic() < deadline, f"kiln not listening: {tail(log)}"
                    time.sleep(0.05)

    def served(self) -> list[list[str]]:
        """The URIs of every access line of each host."""
        out = []
        for log in self.logs:
            out.append(re.findall(r"msg=access .*?\buri=(\S+)", log.read_text(errors="replace")))
        return out

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()


class HAProxy:
    def __init__(self, base: Path, hosts: Hosts, bounded: bool):
        text = RECIPE.read_text()
        assert len(SERVER_LINE.findall(text)) == 3, "haproxy/kiln-hosts.cfg: three `server hostN 10.0.0.1N:9000 check port 9001` lines"
        text = SERVER_LINE.sub(lambda m: f"{m[1]}server host{m[2]} 127.0.0.1:{hosts.ports[int(m[2]) - 1][0]} "
                                         f"check port {hosts.ports[int(m[2]) - 1][1]}", text)
        self.port = free_port()
        assert text.count("    bind :8080\n") == 1
        text = text.replace("    bind :8080\n", f"    bind 127.0.0.1:{self.port}\n")
        assert text.count("    hash-balance-factor 125\n") == 1
        if not bounded:
            text = text.replace("    hash-balance-factor 125\n", "")
        self.conf = base / ("haproxy.cfg" if bounded else "haproxy-plain.cfg")
        self.conf.write_text(text)
        self.log = base / (self.conf.stem + ".log")
        env = {**os.environ, "KILN_PEER_SECRET": SECRET}
        haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
        check = subprocess.run([haproxy, "-c", "-f", str(self.conf)], capture_output=True, text=True, env=env, timeout=30)
        assert check.returncode == 0, f"haproxy -c: {check.stdout}{check.stderr}"
        self.proc = subprocess.Popen([haproxy, "-db", "-f", str(self.conf)], stdin=subprocess.DEVNULL,
                                     stdout=open(self.log, "ab"), stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 10
        client = HttpClient("127.0.0.1", self.port)
        while True:  # listening, and the health checks found the hosts up
            assert self.proc.poll() is None, f"haproxy exited: {tail(self.log)}"
            try:
                if client.get(f"/unsafe/rs:9:9/{SOURCE}", timeout=5).status == 200:
                    return
            except OSError:
                pass
            assert time.monotonic() < deadline, f"haproxy not answering: {tail(self.log)}"
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGUSR1)  # soft stop
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@pytest.fixture(scope="module")
def hosts(root):
    base = Path(tempfile.mkdtemp(prefix="kiln-haproxy-", dir=os.environ.get("TMPDIR", "/tmp")))
    h = Hosts(root, base)
    try:
        yield h
    finally:
        h.stop()
        shutil.rmtree(base, ignore_errors=True)


def hot_traffic(port: int, hot: str) -> dict[str, int]:
    """300 requests, half of them `hot`, from 12 clients at once; status -> count."""
    sequence = []
    for p in COLD:
        sequence += [p, hot]
    random.Random(1).shuffle(sequence)
    client = HttpClient("127.0.0.1", port)
    with ThreadPoolExecutor(12) as pool:
        statuses = list(pool.map(lambda p: client.get(p, timeout=30).status, sequence))
    return {s: statuses.count(s) for s in set(statuses)}


def shares(hosts: Hosts, before: list[int], hot: str) -> tuple[list[int], list[int]]:
    """Requests of the traffic (`COLD` and `hot`) per host since `before`, and the hot variant's."""
    traffic = set(COLD) | {hot}
    new = [[u for u in s[b:] if u in traffic] for s, b in zip(hosts.served(), before)]
    return [len(s) for s in new], [sum(1 for u in s if u == hot) for s in new]


def wait_logged(hosts: Hosts, before: list[int], hot: str, count: int) -> None:
    """Until `count` access lines of the traffic were written (they follow the answers)."""
    deadline = time.monotonic() + 10
    while sum(shares(hosts, before, hot)[0]) < count and time.monotonic() < deadline:
        time.sleep(0.05)


def test_signed_forms_of_a_variant_land_on_one_host(hosts):
    """The hash key is the variant without signature or expiry. (Checked on the plain ring: with
    the factor, a request may move on while the previous one's connection still counts.)"""
    proxy = HAProxy(hosts.dir, hosts, bounded=False)
    try:
        client = HttpClient("127.0.0.1", proxy.port)
        for w in range(30, 36):
            before = [len(s) for s in hosts.served()]
            forms = [f"/unsafe/rs:{w}:{w}/{SOURCE}"] + [f"/{'S%02dxxxxxxxx' % i}/rs:{w}:{w}/{SOURCE}" for i in range(6)] \
                + [f"/SIGNATUREsig/exp:4102444800/rs:{w}:{w}/{SOURCE}"]
            for f in forms:
                client.get(f)  # 200 or 403 (forged signature): the host is what matters
            deadline = time.monotonic() + 10  # access lines follow the answers
            while True:
                counts = [sum(1 for u in s[b:] if f"/rs:{w}:{w}/" in u) for s, b in zip(hosts.served(), before)]
                if sum(counts) >= len(forms) or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            assert sorted(counts) == [0, 0, len(forms)], f"rs:{w}:{w}'s forms spread over hosts: {counts}"
    finally:
        proxy.stop()


def measured(hosts: Hosts, bounded: bool, hot_path: str) -> tuple[list[int], list[int], float]:
    """The hot traffic through the recipe (with or without the factor): requests per host, the
    hot variant's per host, and the average."""
    proxy = HAProxy(hosts.dir, hosts, bounded=bounded)
    try:
        before = [len(s) for s in hosts.served()]
        statuses = hot_traffic(proxy.port, hot_path)
        assert statuses == {200: 300}, statuses
        wait_logged(hosts, before, hot_path, 300)
        counts, hot = shares(hosts, before, hot_path)
    finally:
        proxy.stop()
    assert sum(counts) == 300
    average = sum(counts) / 3
    print(f"\ntest_haproxy: {'bounded (hash-balance-factor 125)' if bounded else 'plain ring'}: requests per host "
          f"{counts} (max {max(counts) / average:.2f}x the average), the hot variant per host {hot}")
    return counts, hot, average


def test_hot_variant_is_spread_within_the_factor(hosts):
    counts, hot, average = measured(hosts, True, HOT)
    assert max(counts) <= FACTOR * average, f"a host served {max(counts)} of 300 (average {average:.0f}): {counts}"
    assert sum(1 for n in hot if n > 0) >= 2, f"the hot variant stayed on one host: {hot}"


def test_without_the_factor_the_hot_variant_pins_one_host(hosts):
    """The control: the same recipe and traffic without `hash-balance-factor` (a plain ring)."""
    counts, hot, average = measured(hosts, False, "/unsafe" + sleep_url(HOLD_MS, 321))
    assert sorted(hot)[:2] == [0, 0], f"without the factor the hot variant has one host: {hot}"
    assert max(counts) > FACTOR * average, f"the plain ring stayed within {FACTOR}x: {counts}"
