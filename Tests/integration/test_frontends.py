"""Kiln behind FastCGI front ends other than nginx: Apache httpd 2.4 (mod_proxy_fcgi) and
lighttpd 1.4 (mod_fastcgi), each configured with the project's recipe in frontends/ used as it
is (only the socket path is filled in).

Each front end runs as a private instance on 127.0.0.1 and a free port, its whole
configuration and logs in the kiln stack's temporary folder (no system service, nothing in
/etc), in front of `kiln serve` on a unix socket. Through it go 200 distinct image requests
(every one a new render), one conditional request and one bad spec: exactly 200 x 200, one
304 and one 400 with kiln's own one-line reason, nothing else (no 502/503 from a worker that
closed too early), and the front end's error log holds no FastCGI error (Apache's AH01075
"Broken pipe ... sending empty stdin" was the symptom of a worker answering before it had read
the request's empty STDIN record).
"""
from __future__ import annotations

import grp
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from fcgiclient import fcgi_params, fcgi_request
from helpers import REPO, HttpClient, assert_plain_error
from stack import KilnStack, free_port, tail

FRONTENDS = REPO / "frontends"
# The socket path the recipes name; the tests put the stack's own socket there.
RECIPE_SOCKET = "/run/kiln/kiln.sock"
APACHE_MODULES = Path("/usr/lib/apache2/modules")

SOURCE = "photo_1920x1080.jpg"
SOURCE_SIZE = (1920, 1080)
DISTINCT = 200
CLIENTS = 4
BAD_SPEC = f"/w:abc/f:jpeg/{SOURCE}"


def recipe(name: str, sock: Path, dest: Path) -> Path:
    """The recipe frontends/`name` with the socket path filled in, written to `dest`."""
    text = (FRONTENDS / name).read_text()
    uses = [line for line in text.splitlines() if RECIPE_SOCKET in line and not line.lstrip().startswith("#")]
    assert len(uses) == 1, f"frontends/{name} should name {RECIPE_SOCKET} on exactly one active line: {uses}"
    dest.write_text(text.replace(RECIPE_SOCKET, str(sock)))
    return dest


def run_user() -> str | None:
    """The user a front end started as root drops to (Debian's www-data), None when not root."""
    if os.geteuid() != 0:
        return None
    for name in ("www-data", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            pass
    return None


class FrontEnd:
    """A private front-end process in the stack's folder; `start` waits until its port accepts."""

    name = ""
    binary = ""
    error_log: Path

    def __init__(self, stack: KilnStack):
        self.stack = stack
        self.dir = stack.dir
        self.proc: subprocess.Popen | None = None
        self.port = 0

    def command(self, conf: Path) -> list[list[str]]:
        """The configuration check and the foreground run."""
        raise NotImplementedError

    def write_conf(self) -> Path:
        raise NotImplementedError

    def start(self, timeout: float = 20) -> "FrontEnd":
        exe = shutil.which(self.binary) or f"/usr/sbin/{self.binary}"
        assert os.access(exe, os.X_OK), f"{self.binary} is not installed (scripts/test installs it)"
        for attempt in range(3):
            self.port = free_port()
            conf = self.write_conf()
            check, run = self.command(conf)
            t = subprocess.run([exe, *check], capture_output=True, text=True, timeout=30)
            assert t.returncode == 0, f"{self.name} refuses {conf}:\n{t.stdout}{t.stderr}"
            self.proc = subprocess.Popen([exe, *run], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=open(self.dir / "logs" / f"{self.binary}.stderr", "ab"))
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                    return self
                except OSError:
                    time.sleep(0.05)
            self.stop()
            if attempt == 2:  # the port was taken between the check and the bind, three times
                raise AssertionError(f"{self.name} did not listen on {self.port}:\n{tail(self.error_log)}\n"
                                     f"{tail(self.dir / 'logs' / f'{self.binary}.stderr')}")
        return self

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def client(self) -> HttpClient:
        return HttpClient("127.0.0.1", self.port)


class Apache(FrontEnd):
    name = "Apache httpd (mod_proxy_fcgi)"
    binary = "apache2"

    def write_conf(self) -> Path:
        include = recipe("apache-kiln.conf", self.stack.sock, self.dir / "apache-kiln.conf")
        self.error_log = self.dir / "logs" / "apache-error.log"
        user = run_user()
        modules = "\n".join(f"LoadModule {m}_module {APACHE_MODULES}/mod_{m}.so"
                            for m in ("mpm_event", "authz_core", "proxy", "proxy_fcgi"))
        conf = self.dir / "apache.conf"
        conf.write_text(f"""# A private Apache for the tests: everything in {self.dir}.
ServerRoot {self.dir}
DefaultRuntimeDir {self.dir}
PidFile {self.dir}/apache.pid
ErrorLog {self.error_log}
LogLevel warn
{modules}
{f'User {user}' if user else ''}
{f'Group {grp.getgrgid(pwd.getpwnam(user).pw_gid).gr_name}' if user else ''}
ServerName localhost
Listen 127.0.0.1:{self.port}
<VirtualHost 127.0.0.1:{self.port}>
    Include {include}
</VirtualHost>
""")
        return conf

    def command(self, conf: Path) -> list[list[str]]:
        return [["-t", "-f", str(conf)], ["-f", str(conf), "-DFOREGROUND"]]


class Lighttpd(FrontEnd):
    name = "lighttpd (mod_fastcgi)"
    binary = "lighttpd"

    def write_conf(self) -> Path:
        include = recipe("lighttpd-kiln.conf", self.stack.sock, self.dir / "lighttpd-kiln.conf")
        user = run_user()
        # lighttpd opens its error log after dropping to `user`: a folder of that user's.
        logs = self.dir / "lighttpd-logs"
        logs.mkdir(exist_ok=True)
        if user:
            os.chown(logs, pwd.getpwnam(user).pw_uid, pwd.getpwnam(user).pw_gid)
        self.error_log = logs / "error.log"
        docroot = self.dir / "htdocs"
        docroot.mkdir(exist_ok=True)
        conf = self.dir / "lighttpd.conf"
        conf.write_text(f"""# A private lighttpd for the tests: everything in {self.dir}.
server.document-root = "{docroot}"
server.bind = "127.0.0.1"
server.port = {self.port}
server.errorlog = "{self.error_log}"
{f'server.username = "{user}"' if user else ''}
include "{include}"
""")
        return conf

    def command(self, conf: Path) -> list[list[str]]:
        return [["-tt", "-f", str(conf)], ["-D", "-f", str(conf)]]


@pytest.fixture(params=[Apache, Lighttpd], ids=["apache", "lighttpd"])
def front(request, make_stack):
    # The front ends have no connection cap like nginx's limit_conn: with the machine shared by
    # other builds, four clients could keep both workers busy past the default queue_timeout
    # and get kiln's own back-pressure 503 (test_backpressure.py), which is not what this tests.
    stack = make_stack(workers=2, with_nginx=False, extra_args=["--set", "server.queue_timeout=30s"])
    fe = request.param(stack)
    try:
        yield fe.start()
    finally:
        fe.stop()


def expected_size(width: int) -> tuple[int, int]:
    return width, round(SOURCE_SIZE[1] * width / SOURCE_SIZE[0])


@pytest.mark.timeout(120)
def test_front_end_serves_distinct_renders_304_and_400(front: FrontEnd):
    client = front.client()
    paths = [f"/w:{10 + i}/f:jpeg/{SOURCE}" for i in range(DISTINCT)]

    def fetch(path: str):
        r = client.get(path, timeout=60)
        return path, r

    with ThreadPoolExecutor(CLIENTS) as pool:
        results = list(pool.map(fetch, paths))
    statuses = Counter(r.status for _, r in results)
    bad = [(p, r.describe()) for p, r in results if r.status != 200][:5]
    assert statuses == Counter({200: DISTINCT}), f"{front.name}: {dict(statuses)}, e.g. {bad}"
    etags = set()
    for path, r in results:
        assert r.content_type == "image/jpeg", f"{path}: {r.describe()}"
        im = r.image()
        w = int(path.split("/")[1][2:])
        assert im.format == "JPEG" and im.size[0] == w and abs(im.size[1] - expected_size(w)[1]) <= 1, \
            f"{path}: {im.format} {im.size}, expected {expected_size(w)}"
        etags.add(r.header("etag"))
    assert None not in etags and len(etags) == DISTINCT, "every variant has its own ETag"

    # The conditional request: the ETag of one of the renders above.
    path, first = results[0]
    r304 = client.get(path, headers={"If-None-Match": first.header("etag")})
    assert r304.status == 304, f"{front.name}: If-None-Match {first.header('etag')}: {r304.describe()}"
    assert r304.body == b""

    # A bad spec: kiln's own 400, its one-line reason passed through unchanged.
    r400 = client.get(BAD_SPEC)
    direct = fcgi_request(front.stack.sock, fcgi_params("GET", BAD_SPEC))
    assert r400.status == 400 == direct.status, f"{front.name}: {r400.describe()} (kiln directly: {direct})"
    assert_plain_error(r400, BAD_SPEC)
    assert r400.body == direct.body, f"{front.name} changed kiln's reason: {r400.body!r} != {direct.body!r}"

    # The front end saw no FastCGI failure, and kiln no broken request.
    front.stop()
    errors = [line for line in front.error_log.read_text(errors="replace").splitlines()
              if re.search(r"AH01075|AH01067|AH01068|Broken pipe|reset by peer|:error\]|gw_backend|mod_fastcgi"
                           r"|fastcgi|connect\(\)|\(\d+\)", line, re.I)]
    assert not errors, f"{front.name}'s error log:\n" + "\n".join(errors[:20])
    kiln_log = front.stack.kiln_log.read_text(errors="replace")
    broken = [line for line in kiln_log.splitlines()
              if re.search(r"protocol error|in the middle of a request|did not send a whole request", line)]
    assert not broken, "kiln:\n" + "\n".join(broken[:20])
