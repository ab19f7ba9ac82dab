"""Helpers for Kiln's integration tests: paths, the shared corpus and its manifest, the test
root, an HTTP client and its Response, and the assertions shared by the tests.

Nothing here builds anything: scripts/test builds .build/release/kiln first (or set KILN_BIN).
The FastCGI client is in fcgiclient.py, the kiln + nginx stack in stack.py.
"""
from __future__ import annotations

import base64
import csv
import hashlib
import hmac
import http.client
import io
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("KILN_SHARED", REPO.parent / "shared")).resolve()
CORPUS = SHARED / "corpus"
BENCH = SHARED / "bench"
KILN_BIN = Path(os.environ.get("KILN_BIN", REPO / ".build" / "release" / "kiln"))
LIB_SH = REPO / "scripts" / "lib.sh"
NGINX_DIR = REPO / "nginx"

# The contract's defaults (docs/configuration.md).
DEFAULT_CACHE_CONTROL = "public, max-age=31536000"
LIMIT_CONN = 8  # `limit_conn kiln_conn 8;` in nginx/kiln-locations.conf

# The standard benchmark images (shared/bench/README.md).
PHOTO_12MP = "photo_4000x3000.jpg"
PHOTO_HD = "photo_1920x1080.jpg"
PHOTO_HD_WEBP = "photo_1920x1080.webp"
ALPHA_HD = "alpha_1920x1080.png"

# Slow requests: `debug.sleep_processor` adds the URL option `sleep:<ms>`, a processor stage that
# holds the render exactly that long (`process (sleep:<ms>)` on the status page). Tests that need
# a render of a known length put SLEEP_ON in their stack's extra_args and build the URL on a small
# source, so that the outcome does not depend on how fast the machine renders.
SLEEP_ON = ["--set", "debug.sleep_processor=true"]
SLOW_SOURCE = "skimage_rocket.jpg"  # a 640x427 JPEG from the corpus: a few ms to render


def sleep_url(ms: int, width: int, source: str = SLOW_SOURCE) -> str:
    """A JPEG `width` pixels wide (< 640) that takes `ms` milliseconds in the sleep processor; a
    different width per request gives each its own cache key."""
    return f"/w:{width}/sleep:{ms}/q:70/f:jpeg/{source}"


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

    def __init__(self, host: str, port: int, source: str | None = None):
        self.host, self.port = host, port
        self.source = (source, 0) if source else None  # local address to connect from

    def request(self, method: str, path: str, headers: dict[str, str] | None = None,
                body: bytes | None = None, timeout: float = 60) -> Response:
        start = time.monotonic()
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout,
                                          source_address=self.source)
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


def wait_for_worker(client: HttpClient, uri: str, stage: str = "process", timeout: float = 10) -> dict | None:
    """Polls the master's status page (/_kiln/status?json) until a worker is busy with `uri` in a
    stage whose name starts with `stage` (any stage for ""); returns that worker's entry, None
    when none was seen within `timeout` seconds."""
    import json
    deadline = time.monotonic() + timeout
    while True:
        r = client.get("/_kiln/status?json", timeout=5)
        if r.status == 200:
            for w in json.loads(r.body)["workers"]:
                if w["state"] == "busy" and w.get("uri") == uri and (w.get("stage") or "").startswith(stage):
                    return w
        if time.monotonic() > deadline:
            return None
        time.sleep(0.02)


def status_json(client: HttpClient) -> dict:
    """The master's status page as JSON."""
    import json
    r = client.get("/_kiln/status?json", timeout=5)
    assert r.status == 200, r.describe()
    return json.loads(r.body)


def assert_plain_error(r: Response, path: str = "") -> None:
    """Kiln's error answers: text/plain, one non-empty line."""
    assert r.content_type == "text/plain", f"{path}: error body should be text/plain: {r.describe()}"
    text = r.body.decode("utf-8", "replace").strip()
    assert text, f"{path}: empty error body"
    assert "\n" not in text, f"{path}: error body is more than one line: {text!r}"


def sign_path(path: str, key: str, salt: str, size: int = 32) -> str:
    """URL signing written independently of kiln's (imgproxy's scheme: HMAC-SHA256 of salt + path
    under key, cut to size bytes, unpadded URL-safe base64 as the first segment)."""
    mac = hmac.new(bytes.fromhex(key), bytes.fromhex(salt) + path.encode(), hashlib.sha256).digest()[:size]
    return "/" + base64.urlsafe_b64encode(mac).rstrip(b"=").decode() + path
