"""Helpers for Kiln's integration tests: paths, the test root, a running kiln + nginx stack,
an HTTP client and a minimal FastCGI client (to talk to kiln without nginx).

Nothing here builds anything: scripts/test builds .build/release/kiln first (or set KILN_BIN).
"""
from __future__ import annotations

import csv
import http.client
import io
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("KILN_SHARED", REPO.parent / "shared")).resolve()
CORPUS = SHARED / "corpus"
BENCH = SHARED / "bench"
KILN_BIN = Path(os.environ.get("KILN_BIN", REPO / ".build" / "release" / "kiln"))
LIB_SH = REPO / "scripts" / "lib.sh"
NGINX_DIR = REPO / "nginx"

# The contract's defaults (README "Configuration").
DEFAULT_CACHE_CONTROL = "public, max-age=31536000"
LIMIT_CONN = 8  # `limit_conn kiln_conn 8;` in nginx/kiln-locations.conf

# The standard benchmark images (shared/bench/README.md).
PHOTO_12MP = "photo_4000x3000.jpg"
PHOTO_HD = "photo_1920x1080.jpg"
PHOTO_HD_WEBP = "photo_1920x1080.webp"
ALPHA_HD = "alpha_1920x1080.png"


class SetupError(RuntimeError):
    """The environment the tests need is not there (shared/, the binary, nginx)."""


def check_environment() -> None:
    problems = []
    if not (CORPUS / "MANIFEST.tsv").is_file():
        problems.append(f"shared corpus not found: expected {CORPUS}/MANIFEST.tsv "
                        f"(shared/ must sit beside the repository, or set KILN_SHARED)")
    if not (BENCH / PHOTO_12MP).is_file():
        problems.append(f"shared bench images not found: expected {BENCH}/{PHOTO_12MP}")
    if not (KILN_BIN.is_file() and os.access(KILN_BIN, os.X_OK)):
        problems.append(f"kiln binary not found at {KILN_BIN}: run `swift build -c release` "
                        f"(scripts/test does) or set KILN_BIN")
    if not (shutil.which("nginx") or os.access("/usr/sbin/nginx", os.X_OK)):
        problems.append("nginx is not installed (scripts/test installs it)")
    if problems:
        raise SetupError("; ".join(problems))


# ---------------------------------------------------------------------------------------
# MANIFEST.tsv

@dataclass(frozen=True)
class ManifestRow:
    file: str
    family: str
    expected: str
    detail: str

    @property
    def category(self) -> str:
        """DECODE, REJECT-TYPE, REJECT-CORRUPT, REJECT-LIMIT or CORRUPT-WARN."""
        return re.split(r"[\s:/]", self.expected, maxsplit=1)[0]

    @property
    def expected_size(self) -> tuple[int, int] | None:
        """The size the pipeline must produce: the *displayed* size for `ORIENT n -> displayed
        WxH` rows (kiln applies EXIF orientation), else the `DECODE WxH` size."""
        m = re.search(r"ORIENT \d+ -> displayed (\d+)x(\d+)", self.expected)
        if m:
            return int(m.group(1)), int(m.group(2))
        m = re.match(r"DECODE (\d+)x(\d+)", self.expected)
        if m:
            return int(m.group(1)), int(m.group(2))
        return None

    @property
    def oriented(self) -> bool:
        return "ORIENT" in self.expected


def load_manifest() -> list[ManifestRow]:
    path = CORPUS / "MANIFEST.tsv"
    if not path.is_file():
        raise SetupError(f"{path} not found: shared/ must sit beside the repository "
                         f"(or set KILN_SHARED)")
    with path.open(newline="") as f:
        rows = [ManifestRow(r["file"], r["family"], r["expected"], r["detail"])
                for r in csv.DictReader(f, delimiter="\t")]
    if len(rows) < 50:
        raise SetupError(f"{path} has only {len(rows)} rows")
    return rows


# ---------------------------------------------------------------------------------------
# The test root

def build_root(dest: Path) -> Path:
    """A source root with copies (not symlinks: kiln resolves symlinks and refuses what lands
    outside the root) of every corpus and bench file, plus:
      sub/pillow_hopper.jpg        a subfolder
      w:50/pillow_hopper.jpg       a folder named like an option (reachable after `-`)
      inside_link.jpg -> pillow_hopper.jpg      a symlink that stays inside
      escape_passwd -> /etc/passwd              a symlink leaving the root
      escape_dir -> /etc                        a folder symlink leaving the root
    """
    dest.mkdir(parents=True, exist_ok=True)
    for src_dir in (CORPUS, BENCH):
        for p in src_dir.iterdir():
            if p.is_file() and p.suffix.lower() in (".jpg", ".png", ".webp", ".gif", ".bmp", ".svg"):
                shutil.copy2(p, dest / p.name)
                os.chmod(dest / p.name, 0o644)
    (dest / "sub").mkdir(exist_ok=True)
    shutil.copy2(CORPUS / "pillow_hopper.jpg", dest / "sub" / "pillow_hopper.jpg")
    (dest / "w:50").mkdir(exist_ok=True)
    shutil.copy2(CORPUS / "pillow_hopper.jpg", dest / "w:50" / "pillow_hopper.jpg")
    for name, target in (("inside_link.jpg", "pillow_hopper.jpg"), ("escape_passwd", "/etc/passwd"),
                         ("escape_dir", "/etc")):
        if not (dest / name).is_symlink():
            os.symlink(target, dest / name)
    return dest


# ---------------------------------------------------------------------------------------
# HTTP

@dataclass(repr=False)
class Response:
    status: int
    headers: dict[str, str]  # lower-case names
    body: bytes
    elapsed: float

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    @property
    def content_type(self) -> str:
        return (self.header("content-type") or "").split(";")[0].strip()

    def image(self):
        from PIL import Image
        im = Image.open(io.BytesIO(self.body))
        im.load()
        return im

    def describe(self) -> str:
        if self.content_type.startswith("text/"):
            text = repr(self.body[:200].decode("utf-8", "replace"))
        else:
            text = f"{len(self.body)} bytes"
        return f"{self.status} {self.content_type}: {text}"

    def __repr__(self) -> str:
        return f"<Response {self.describe()}>"


class HttpClient:
    """One new connection per request (like a CDN miss), raw paths sent as given."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port

    def request(self, method: str, path: str, headers: dict[str, str] | None = None,
                body: bytes | None = None, timeout: float = 60) -> Response:
        start = time.monotonic()
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            conn.putrequest(method, path, skip_accept_encoding=True)
            hdrs = dict(headers or {})
            if body is not None:
                hdrs.setdefault("Content-Length", str(len(body)))
            for k, v in hdrs.items():
                conn.putheader(k, v)
            conn.endheaders(body)
            r = conn.getresponse()
            data = r.read()
            return Response(r.status, {k.lower(): v for k, v in r.getheaders()}, data,
                            time.monotonic() - start)
        finally:
            conn.close()

    def get(self, path: str, headers: dict[str, str] | None = None, timeout: float = 60) -> Response:
        return self.request("GET", path, headers, timeout=timeout)

    def head(self, path: str, headers: dict[str, str] | None = None) -> Response:
        return self.request("HEAD", path, headers)

    def image(self, path: str, headers: dict[str, str] | None = None, timeout: float = 60):
        """GET that must answer 200 with a decodable image; returns (response, PIL image)."""
        r = self.get(path, headers, timeout=timeout)
        assert r.status == 200, f"GET {path}: {r.describe()}"
        try:
            im = r.image()
        except Exception as e:  # noqa: BLE001
            raise AssertionError(f"GET {path}: body of {len(r.body)} bytes ({r.content_type}) "
                                 f"does not decode: {e}") from e
        return r, im


def assert_plain_error(r: Response, path: str = "") -> None:
    """Kiln's error answers: text/plain, one non-empty line."""
    assert r.content_type == "text/plain", f"{path}: error body should be text/plain: {r.describe()}"
    text = r.body.decode("utf-8", "replace").strip()
    assert text, f"{path}: empty error body"
    assert "\n" not in text, f"{path}: error body is more than one line: {text!r}"


# ---------------------------------------------------------------------------------------
# FastCGI (direct to kiln's socket, no nginx)

class IncompleteResponse(Exception):
    """The connection closed before FCGI_END_REQUEST."""

    def __init__(self, received: int):
        super().__init__(f"connection closed after {received} bytes, before END_REQUEST")
        self.received = received


@dataclass(repr=False)
class FcgiResponse:
    status: int
    headers: dict[str, str]
    body: bytes
    stderr: bytes = b""
    elapsed: float = 0.0

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip()

    def __repr__(self) -> str:
        body = self.body[:200] if self.content_type.startswith("text/") else f"{len(self.body)} bytes"
        return f"<FcgiResponse {self.status} {self.content_type}: {body!r}>"


def _fcgi_record(rtype: int, content: bytes, request_id: int = 1) -> bytes:
    out = b""
    for i in range(0, max(len(content), 1), 65535):
        chunk = content[i:i + 65535]
        pad = (8 - len(chunk) % 8) % 8
        out += struct.pack("!BBHHBB", 1, rtype, request_id, len(chunk), pad, 0) + chunk + b"\0" * pad
        if not content:
            break
    return out


def _fcgi_len(n: int) -> bytes:
    return bytes([n]) if n < 128 else struct.pack("!I", n | 0x80000000)


def fcgi_params(method: str, request_uri: str, headers: dict[str, str] | None = None,
                document_uri: str | None = None) -> dict[str, str]:
    p = {"REQUEST_METHOD": method, "REQUEST_URI": request_uri,
         "QUERY_STRING": request_uri.partition("?")[2], "SERVER_PROTOCOL": "HTTP/1.1",
         "GATEWAY_INTERFACE": "CGI/1.1", "REMOTE_ADDR": "127.0.0.1", "REMOTE_PORT": "40000",
         "SERVER_ADDR": "127.0.0.1", "SERVER_PORT": "80", "SERVER_NAME": "localhost",
         "CONTENT_LENGTH": "", "CONTENT_TYPE": ""}
    if document_uri is not None:
        p["DOCUMENT_URI"] = document_uri
    for k, v in (headers or {}).items():
        p["HTTP_" + k.upper().replace("-", "_")] = v
    return p


def fcgi_request(sock_path: str | Path, params: dict[str, str], timeout: float = 60) -> FcgiResponse:
    """One FastCGI request (responder role, no keep-conn), as nginx sends it.
    Raises OSError from connect (FileNotFoundError, ConnectionRefusedError, ...),
    IncompleteResponse when the server closes early, socket.timeout on a hang."""
    start = time.monotonic()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(str(sock_path))
        body = b"".join(_fcgi_len(len(k.encode())) + _fcgi_len(len(v.encode())) + k.encode() + v.encode()
                        for k, v in params.items())
        s.sendall(_fcgi_record(1, struct.pack("!HB5x", 1, 0)) + _fcgi_record(4, body)
                  + _fcgi_record(4, b"") + _fcgi_record(5, b""))
        buf = b""
        stdout, stderr = b"", b""
        ended = False
        while not ended:
            chunk = s.recv(65536)
            if not chunk:
                raise IncompleteResponse(len(stdout))
            buf += chunk
            while len(buf) >= 8:
                _, rtype, _, clen, plen, _ = struct.unpack("!BBHHBB", buf[:8])
                if len(buf) < 8 + clen + plen:
                    break
                content = buf[8:8 + clen]
                buf = buf[8 + clen + plen:]
                if rtype == 6:
                    stdout += content
                elif rtype == 7:
                    stderr += content
                elif rtype == 3:
                    ended = True
                    break
    finally:
        s.close()
    head, sep, payload = stdout.partition(b"\r\n\r\n")
    if not sep:
        head, sep, payload = stdout.partition(b"\n\n")
    headers: dict[str, str] = {}
    for line in head.decode("latin-1").splitlines():
        if ":" in line:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
    status = int(headers.pop("status", "200").split()[0])
    return FcgiResponse(status, headers, payload, stderr, time.monotonic() - start)


# ---------------------------------------------------------------------------------------
# Processes

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

    def client(self) -> HttpClient:
        assert self.port, "this stack has no nginx"
        return HttpClient("127.0.0.1", self.port)

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
