"""A running `kiln serve` (and optionally a private nginx in front of it) for the integration
tests, and the process helpers it uses."""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from helpers import KILN_BIN, LIB_SH, NGINX_DIR, HttpClient, SetupError


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def alive(pid: int) -> bool:
    """True while the process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def child_pids(pid: int) -> list[int]:
    """The direct children of `pid` (kiln's workers): `pgrep -P`, with a /proc fallback."""
    try:
        out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True, timeout=5)
        if out.returncode in (0, 1):
            return sorted(int(x) for x in out.stdout.split())
    except (FileNotFoundError, subprocess.TimeoutExpired):
        pass
    kids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid and fields[0] != "Z":
                    kids.append(int(d))
            except (FileNotFoundError, IndexError, ValueError):
                pass
    return sorted(kids)


def socket_accepts(path: Path) -> bool:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(1)
    try:
        s.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        s.close()


def tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except FileNotFoundError:
        return f"({path} does not exist)"


def add_rate_limit(conf: Path) -> None:
    """Adds the opt-in per-client rate limit of the shipped files to a config written by
    kiln_write_nginx_conf."""
    zone = re.search(r"^limit_req_zone .*;$", (NGINX_DIR / "kiln.conf").read_text(), re.M)
    if not zone:
        raise SetupError("no `limit_req_zone` line in nginx/kiln.conf")
    text = conf.read_text()
    text, n_zone = re.subn(r"^([ \t]*)(limit_conn_zone .*;)$", lambda m: f"{m[0]}\n{m[1]}{zone[0]}", text,
                           count=1, flags=re.M)
    text, n_inc = re.subn(r"^([ \t]*)(include \S*kiln-locations\.conf;)$",
                          lambda m: f"{m[1]}include {NGINX_DIR / 'kiln-rate-limit.conf'};\n{m[0]}", text,
                          count=1, flags=re.M)
    if n_zone != 1 or n_inc != 1:
        raise SetupError(f"could not add the rate limit to {conf}")
    conf.write_text(text)


@dataclass
class KilnStack:
    """`kiln serve` on a unix socket in a private 0755 folder, and (optionally) a private
    nginx in front of it, configured by scripts/lib.sh's kiln_write_nginx_conf with the
    project's nginx/kiln-locations.conf."""

    root: Path
    workers: int = 2
    socket_mode: str | None = "0666"
    extra_args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    with_nginx: bool = True
    # Environment for kiln_write_nginx_conf, e.g. {"KILN_NGINX_CONN_LIMIT": "80"}.
    nginx_env: dict[str, str] = field(default_factory=dict)
    # Turn on the per-client rate limit: the `limit_req_zone` line of nginx/kiln.conf at http
    # level and `include nginx/kiln-rate-limit.conf;` in the server, both used as they are.
    rate_limit: bool = False

    def __post_init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="kiln-it-", dir=os.environ.get("TMPDIR", "/tmp")))
        os.chmod(self.dir, 0o755)  # nginx's workers run as nobody: they must reach the socket
        (self.dir / "logs").mkdir()
        self.sock = self.dir / "kiln.sock"
        self.kiln_log = self.dir / "logs" / "kiln.log"
        self.nginx_log = self.dir / "logs" / "error.log"
        self.kiln: subprocess.Popen | None = None
        self.nginx: subprocess.Popen | None = None
        self.port = 0
        self.exit_code: int | None = None

    # -- kiln --
    def start(self, ready_timeout: float = 20) -> "KilnStack":
        cmd = [str(KILN_BIN), "serve", "--listen", f"unix:{self.sock}", "--workers", str(self.workers),
               "--root", str(self.root)]
        if self.socket_mode:
            cmd += ["--socket-mode", self.socket_mode]
        # The tests were written for a server without a disk cache unless they name one; the
        # default disk cache (kiln-cache in the working folder) is what test_readme_run checks.
        if not any("cache.disk_path" in a for a in self.extra_args) and not {"KILN_CACHE_DISK_PATH", "CACHE_DIRECTORY"} & set(self.env):
            cmd += ["--set", "cache.disk_path="]
        cmd += self.extra_args
        env = dict(os.environ)
        env.update(self.env)
        self._log = open(self.kiln_log, "ab")
        self.kiln = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log, env=env)
        deadline = time.monotonic() + ready_timeout
        while not (self.sock.exists() and socket_accepts(self.sock)):
            if self.kiln.poll() is not None:
                raise SetupError(f"kiln serve exited with {self.kiln.returncode} at start: {' '.join(cmd)}\n"
                                 f"{tail(self.kiln_log)}")
            if time.monotonic() > deadline:
                self.stop(check=False)
                raise SetupError(f"kiln serve did not listen on {self.sock} within {ready_timeout}s\n"
                                 f"{tail(self.kiln_log)}")
            time.sleep(0.05)
        # Workers up (the master may spawn them right after binding).
        while len(self.worker_pids()) < self.workers and time.monotonic() < deadline:
            time.sleep(0.05)
        if self.with_nginx:
            self._start_nginx(deadline)
        return self

    @property
    def master_pid(self) -> int:
        assert self.kiln is not None
        return self.kiln.pid

    def worker_pids(self) -> list[int]:
        return child_pids(self.master_pid) if self.kiln and self.kiln.poll() is None else []

    def wait_workers(self, n: int | None = None, timeout: float = 2.0, exclude: set[int] = frozenset()) -> list[int]:
        """Waits until `n` workers (default: configured count) run, none of them in `exclude`."""
        n = n or self.workers
        deadline = time.monotonic() + timeout
        while True:
            pids = [p for p in self.worker_pids() if alive(p)]
            if len(pids) >= n and not (set(pids) & set(exclude)):
                return pids
            if time.monotonic() > deadline:
                return pids
            time.sleep(0.02)

    # -- nginx --
    def _start_nginx(self, deadline: float) -> None:
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        for attempt in range(3):
            self.port = free_port()
            subprocess.run(["bash", "-c", 'source "$1" && kiln_write_nginx_conf "$2" "$3" "$4" "$5"', "_",
                            str(LIB_SH), str(self.dir), str(self.port), str(self.sock), str(self.root)],
                           check=True, timeout=30, env={**os.environ, **self.nginx_env})
            conf = self.dir / "nginx.conf"
            if self.rate_limit:
                add_rate_limit(conf)
            t = subprocess.run([nginx, "-t", "-q", "-p", str(self.dir), "-c", str(conf), "-e", str(self.nginx_log)],
                               capture_output=True, text=True, timeout=30)
            if t.returncode != 0:
                raise SetupError(f"nginx -t failed for {conf}:\n{t.stderr}")
            self.nginx = subprocess.Popen([nginx, "-p", str(self.dir), "-c", str(conf), "-e", str(self.nginx_log)],
                                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                          stderr=open(self.dir / "logs" / "nginx.stderr", "ab"))
            while time.monotonic() < deadline:
                if self.nginx.poll() is not None:
                    break
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.05)
            if self.nginx.poll() is None:
                break
            if attempt == 2:  # the port was taken between the check and the bind, three times
                raise SetupError(f"nginx did not start:\n{tail(self.nginx_log)}")
        # Ready when kiln answers through nginx (anything but nginx's own 502/504).
        client = self.client()
        while True:
            try:
                r = client.get("/w:8/f:jpeg/pillow_hopper.jpg", timeout=10)
                if r.status not in (502, 504):
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise SetupError(f"no answer from kiln through nginx on port {self.port}\n"
                                 f"nginx: {tail(self.nginx_log)}\nkiln: {tail(self.kiln_log)}")
            time.sleep(0.1)

    def client(self, source: str | None = None) -> HttpClient:
        """A client of nginx; `source` binds its connections to another local address
        (127.0.0.2, ...: the whole of 127/8 is loopback), a different client to nginx."""
        assert self.port, "this stack has no nginx"
        return HttpClient("127.0.0.1", self.port, source=source)

    # -- stop --
    def stop(self, timeout: float = 20, check: bool = True) -> int | None:
        """SIGTERM to the kiln master and SIGQUIT to nginx; waits. Returns kiln's exit code."""
        if self.nginx and self.nginx.poll() is None:
            self.nginx.send_signal(signal.SIGQUIT)
            try:
                self.nginx.wait(10)
            except subprocess.TimeoutExpired:
                self.nginx.kill()
                self.nginx.wait()
        if self.kiln and self.exit_code is None:
            workers = self.worker_pids()
            if self.kiln.poll() is None:
                self.kiln.send_signal(signal.SIGTERM)
            try:
                self.exit_code = self.kiln.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kiln.kill()
                self.kiln.wait()
                for p in workers:
                    try:
                        os.kill(p, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                if check:
                    raise AssertionError(f"kiln master did not exit within {timeout}s of SIGTERM\n{tail(self.kiln_log)}")
                self.exit_code = -9
            self._log.close()
        return self.exit_code

    def cleanup(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def logs(self) -> str:
        out = f"--- kiln log ({self.kiln_log}) ---\n{tail(self.kiln_log)}"
        if self.with_nginx:
            out += f"\n--- nginx error log ({self.nginx_log}) ---\n{tail(self.nginx_log)}"
        return out


def started_stack(**kw) -> KilnStack:
    """A started KilnStack; a start that fails fails the test with its reason (no traceback)."""
    s = KilnStack(**kw)
    try:
        return s.start()
    except SetupError as e:
        s.stop(check=False)
        s.cleanup()
        pytest.fail(str(e), pytrace=False)


def stop_stack(s: KilnStack) -> None:
    """SIGTERM; the master must exit 0. The stack's folders are removed either way."""
    try:
        code = s.stop()
        assert code == 0, f"kiln master exited with {code} after SIGTERM\n{s.logs()}"
    finally:
        s.cleanup()


def running_stack(**kw) -> Iterator[KilnStack]:
    """A started KilnStack for a module fixture (`yield from running_stack(root=root, ...)`): a
    start that fails fails the test with its reason; afterwards SIGTERM, and the master must exit 0."""
    s = started_stack(**kw)
    yield s
    stop_stack(s)
