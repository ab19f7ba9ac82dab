"""Varnish (7.1 with vmod-xkey, Debian's `varnish` and `varnish-modules`) in front of an nginx,
for the integration tests: the shipped recipe varnish/kiln.vcl with its backend (and, when
asked, its ACLs and listen address) filled in, run in the foreground in a private working
directory, and the purge requests `kiln cache purge` sends to it.

Generic on purpose: the edge test puts it in front of one stack's nginx, the fleet test in
front of the ring's nginx (another address, other purgers)."""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

import pytest

from helpers import HttpClient, Response, SetupError
from stack import tail

REPO = Path(__file__).resolve().parents[2]
VCL = REPO / "varnish" / "kiln.vcl"


def varnishd_path() -> str:
    path = shutil.which("varnishd") or "/usr/sbin/varnishd"
    if not os.access(path, os.X_OK):
        raise SetupError("varnishd not found: run `scripts/lib.sh`'s kiln_install_deps --test "
                         "(apt-get install varnish varnish-modules)")
    return path


def _acl_body(addresses: Iterable[str]) -> str:
    """ACL entries: `10.0.0.0/8` becomes `"10.0.0.0"/8`, an address `"10.0.0.1"`."""
    lines = []
    for a in addresses:
        ip, _, bits = a.partition("/")
        lines.append(f'    "{ip}"/{bits};' if bits else f'    "{ip}";')
    return "\n".join(lines)


def render_vcl(backend_host: str, backend_port: int, purgers: Iterable[str] | None = None,
               monitors: Iterable[str] | None = None, source: Path = VCL) -> str:
    """The shipped VCL with `backend nginx`'s .host/.port replaced, and the `purgers` and
    `monitors` ACLs when given. Fails when the recipe no longer has the shape edited here."""
    text = source.read_text()

    def backend(m: re.Match) -> str:
        body = re.sub(r'\.host\s*=\s*"[^"]*";', f'.host = "{backend_host}";', m[2], count=1)
        body = re.sub(r'\.port\s*=\s*"[^"]*";', f'.port = "{backend_port}";', body, count=1)
        return m[1] + body + m[3]

    text, n = re.subn(r"(backend nginx \{)(.*?)(\n\})", backend, text, count=1, flags=re.S)
    if n != 1:
        raise SetupError(f"no `backend nginx {{ ... }}` in {source}")
    for name, addresses in (("purgers", purgers), ("monitors", monitors)):
        if addresses is None:
            continue
        text, n = re.subn(rf"(acl {name} \{{\n)(.*?)(\n\}})",
                          lambda m: m[1] + _acl_body(addresses) + m[3], text, count=1, flags=re.S)
        if n != 1:
            raise SetupError(f"no `acl {name} {{ ... }}` in {source}")
    return text


class Varnish:
    """`varnishd -F` on `listen_host`:<free port> with its own working directory (`-n`), the
    recipe's VCL aimed at `backend_host:backend_port`, 64 MiB of malloc storage, no management
    port and no privilege separation (`-j none`: its files stay the test's own)."""

    def __init__(self, backend_host: str, backend_port: int, listen_host: str = "127.0.0.1",
                 purgers: Iterable[str] | None = None, monitors: Iterable[str] | None = None,
                 storage: str = "malloc,64m", extra_args: list[str] | None = None):
        self.backend = (backend_host, backend_port)
        self.listen_host = listen_host
        self.purgers = list(purgers) if purgers is not None else None
        self.monitors = list(monitors) if monitors is not None else None
        self.storage = storage
        self.extra_args = extra_args or []
        self.dir = Path(tempfile.mkdtemp(prefix="kiln-varnish-", dir=os.environ.get("TMPDIR", "/tmp")))
        self.workdir = self.dir / "varnishd"
        self.vcl = self.dir / "kiln.vcl"
        self.log = self.dir / "varnishd.log"
        self.port = 0
        self.proc: subprocess.Popen | None = None

    def start(self, ready_timeout: float = 60) -> "Varnish":
        """Starts varnishd and waits until it answers HTTP (any status Varnish itself wrote:
        the backend need not be up)."""
        self.vcl.write_text(render_vcl(*self.backend, purgers=self.purgers, monitors=self.monitors))
        binary = varnishd_path()
        deadline = time.monotonic() + ready_timeout
        for attempt in range(3):
            self.port = free_port_on(self.listen_host)
            cmd = [binary, "-F", "-n", str(self.workdir), "-a", f"{self.listen_host}:{self.port}",
                   "-f", str(self.vcl), "-s", self.storage, "-T", "none", "-j", "none",
                   *self.extra_args]
            log = open(self.log, "ab")
            self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                         start_new_session=True)
            log.close()
            while self.proc.poll() is None and time.monotonic() < deadline:
                try:
                    r = self.client().get("/_kiln/health", timeout=5)
                    if r.header("x-varnish"):
                        return self
                except OSError:
                    pass
                time.sleep(0.1)
            if self.proc.poll() is None:  # still running but silent: give up
                self.stop()
                raise SetupError(f"varnishd did not answer on {self.listen_host}:{self.port} "
                                 f"within {ready_timeout}s\n{tail(self.log)}")
            if attempt == 2 or "Could not get socket" not in self.log.read_text(errors="replace"):
                raise SetupError(f"varnishd exited with {self.proc.returncode} at start: {' '.join(cmd)}\n"
                                 f"{tail(self.log)}")
        raise SetupError("unreachable")

    def client(self, source: str | None = None) -> HttpClient:
        return HttpClient(self.listen_host, self.port, source=source)

    @property
    def url(self) -> str:
        """`http://host:port`, as `purge.varnish` lists edges."""
        return f"http://{self.listen_host}:{self.port}"

    def purge_xkey(self, *tags: str, source: str | None = None) -> Response:
        """`PURGE /` with `xkey: <tags>` (space-separated): what `kiln cache purge` sends."""
        return self.client(source).request("PURGE", "/", {"xkey": " ".join(tags)})

    def purge_url(self, path: str, headers: dict[str, str] | None = None) -> Response:
        """A plain `PURGE <path>`: that URL's objects (every Vary variant)."""
        return self.client().request("PURGE", path, headers)

    @staticmethod
    def purged_count(r: Response) -> int:
        """The count of a `purged N objects` answer."""
        m = re.match(rb"purged (\d+) objects", r.body)
        assert r.status == 200 and m, f"PURGE with xkey: {r.describe()}"
        return int(m[1])

    def stats(self) -> dict[str, int]:
        """`varnishstat -1` of this instance: counter name -> value (MAIN.cache_hit, ...)."""
        binary = shutil.which("varnishstat") or "/usr/bin/varnishstat"
        out = subprocess.run([binary, "-n", str(self.workdir), "-1"], capture_output=True, text=True, timeout=30)
        counters = {}
        for line in out.stdout.splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                counters[parts[0]] = int(parts[1])
        return counters

    def stop(self, timeout: float = 20) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def logs(self) -> str:
        return f"--- varnishd ({self.log}) ---\n{tail(self.log)}"


def free_port_on(host: str) -> int:
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    s.bind((host, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def started_varnish(backend_host: str, backend_port: int, **kw) -> Varnish:
    """A started Varnish; a start that fails fails the test with its reason (no traceback)."""
    v = Varnish(backend_host, backend_port, **kw)
    try:
        return v.start()
    except SetupError as e:
        v.cleanup()
        pytest.fail(str(e), pytrace=False)
