"""thumbor URLs (adapters.thumbor) against a real thumbor 7.8, through nginx with the real binary.

A thumbor 7.8 server (.venv-thumbor, installed by scripts/test from requirements-thumbor.txt; its
PIL engine and file loader on the same image folder as Kiln's root, no result storage, AUTO_WEBP
off) and Kiln behind nginx with `adapters.thumbor`, thumbor's security key and
`adapters.allow_unsigned`. URLs are written by libthumbor's `CryptoURL` (signed, and its unsafe
form), over the bench photos and a few corpus images, covering every part and filter Kiln maps:

- each URL gives the same output dimensions and format (thumbor's format follows the source or
  format(), as Kiln's without f:) from both servers; geometric URLs (sizes, fit-in, crops,
  alignment, flips, no_upscale, rotations) have SSIM >= 0.95 on grey; `-s` prints a table;
- every signed URL with one character of its signature changed is a 403 from Kiln, and nothing
  is rendered (`kiln_renders_total` does not move, no X-Cache);
- a thumbor URL and its native twin are one cache entry: the same ETag, the second a cache hit.

Independent of CPU speed: no timing is asserted.
"""
from __future__ import annotations

import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from prometheus_client.parser import text_string_to_metric_families

from helpers import BENCH, CORPUS, REPO, HttpClient, assert_plain_error
from imagemetrics import ssim_channel
from stack import free_port, started_stack, stop_stack

try:
    from libthumbor import CryptoURL
except ImportError:  # reported by the fixture, as a failure
    CryptoURL = None

pytestmark = pytest.mark.timeout(240)

THUMBOR = REPO / ".venv-thumbor" / "bin" / "thumbor"
KEY = "kiln-thumbor-test-key"
PHOTO, BIG, ALPHA, WEBP = "photo_1920x1080.jpg", "photo_4000x3000.jpg", "alpha_1920x1080.png", "photo_1920x1080.webp"
HOPPER, ORIG, TINY, BORDERED = "pillow_hopper.jpg", "ljt_testorig.jpg", "small.png", "bordered.png"
ACCEPT = {"Accept": "*/*"}

# (kind, geometric: SSIM asserted, libthumbor options). Every part and filter Kiln maps appears.
CASES: list[tuple[str, bool, dict]] = [
    ("fill", True, dict(width=300, height=200, image_url=PHOTO)),
    ("fill", True, dict(width=300, height=0, image_url=PHOTO)),
    ("fill", True, dict(width=0, height=200, image_url=PHOTO)),
    ("fill", True, dict(width=640, height=640, image_url=PHOTO)),
    ("fill", True, dict(width=400, height=300, image_url=BIG)),
    ("fill", True, dict(width=100, height=100, image_url=ORIG)),
    ("fill-upscale", True, dict(width=300, height=200, image_url=HOPPER)),
    ("fill-upscale", True, dict(width=300, height=0, image_url=HOPPER)),
    ("fill-upscale", True, dict(width=80, height=60, image_url=TINY)),
    ("fit-in", True, dict(width=300, height=300, fit_in=True, image_url=PHOTO)),
    ("fit-in", True, dict(width=300, height=0, fit_in=True, image_url=PHOTO)),
    ("fit-in", True, dict(width=0, height=100, fit_in=True, image_url=PHOTO)),
    ("fit-in", True, dict(width=300, height=300, fit_in=True, image_url=HOPPER)),
    ("fit-in", True, dict(width=500, height=500, fit_in=True, image_url=BIG)),
    ("fit-in", True, dict(width=200, height=200, fit_in=True, image_url=WEBP)),
    ("adaptive-fit-in", True, dict(width=400, height=400, adaptive_fit_in=True, image_url=PHOTO)),
    ("full-fit-in", True, dict(width=300, height=0, full_fit_in=True, image_url=PHOTO)),
    ("flip", True, dict(width=300, height=200, flip=True, image_url=PHOTO)),
    ("flip", True, dict(width=300, height=200, flop=True, image_url=PHOTO)),
    ("flip", True, dict(width=300, height=200, flip=True, flop=True, image_url=PHOTO)),
    ("flip", True, dict(width=300, height=300, fit_in=True, flip=True, flop=True, image_url=PHOTO)),
    ("crop", True, dict(crop=((100, 100), (900, 700)), width=200, height=150, image_url=PHOTO)),
    ("crop", True, dict(crop=((0, 0), (960, 1080)), image_url=PHOTO)),
    ("crop", True, dict(crop=((300, 200), (1500, 1000)), width=300, height=0, fit_in=True, image_url=PHOTO)),
    ("align", True, dict(width=300, height=200, halign="left", image_url=PHOTO)),
    ("align", True, dict(width=300, height=200, halign="right", valign="bottom", image_url=PHOTO)),
    ("align", True, dict(width=200, height=400, halign="left", image_url=PHOTO)),
    ("align", True, dict(width=200, height=400, halign="right", image_url=PHOTO)),
    ("align", True, dict(width=400, height=100, valign="top", image_url=PHOTO)),
    ("align", True, dict(width=400, height=100, valign="bottom", halign="left", image_url=PHOTO)),
    ("no_upscale", True, dict(width=300, height=200, filters=["no_upscale()"], image_url=HOPPER)),
    ("no_upscale", True, dict(width=3000, height=200, filters=["no_upscale()"], image_url=PHOTO)),
    ("upscale", True, dict(width=300, height=300, fit_in=True, filters=["upscale()"], image_url=HOPPER)),
    ("stretch", True, dict(width=300, height=200, filters=["stretch()"], image_url=PHOTO)),
    ("trim", True, dict(trim=True, image_url=BORDERED)),
    ("trim", True, dict(trim=("top-left", 10), width=300, height=0, image_url=BORDERED)),
    ("rotate", True, dict(width=300, height=200, filters=["rotate(90)"], image_url=PHOTO)),
    ("rotate", True, dict(width=300, height=200, filters=["rotate(270)"], image_url=PHOTO)),
    ("rotate", True, dict(width=300, height=200, filters=["rotate(180)"], image_url=PHOTO)),
    ("alpha", True, dict(width=300, height=300, image_url=ALPHA)),
    ("smart", False, dict(width=300, height=300, smart=True, image_url=PHOTO)),
    ("quality", False, dict(width=300, height=200, filters=["quality(40)"], image_url=PHOTO)),
    ("format", False, dict(width=300, height=200, filters=["format(webp)"], image_url=PHOTO)),
    ("format", False, dict(width=200, height=200, fit_in=True, filters=["format(png)"], image_url=PHOTO)),
    ("format", False, dict(width=300, height=0, filters=["format(jpeg)"], image_url=ALPHA)),
    ("format", False, dict(width=100, height=100, filters=["format(gif)"], image_url=HOPPER)),
    ("format", False, dict(width=300, height=0, filters=["format(avif)"], image_url=PHOTO)),
    ("blur", False, dict(width=300, height=200, filters=["blur(4)"], image_url=PHOTO)),
    ("blur", False, dict(width=300, height=200, filters=["blur(8,4)"], image_url=PHOTO)),
    ("grayscale", False, dict(width=300, height=200, filters=["grayscale()"], image_url=PHOTO)),
    ("brightness", False, dict(width=300, height=200, filters=["brightness(20)"], image_url=PHOTO)),
    ("contrast", False, dict(width=300, height=200, filters=["contrast(30)"], image_url=PHOTO)),
    ("contrast", False, dict(width=300, height=200, filters=["contrast(-30)"], image_url=PHOTO)),
    ("round_corner", False, dict(width=300, height=200, filters=["round_corner(30,255,255,255)"], image_url=PHOTO)),
    ("round_corner", False, dict(width=300, height=300, filters=["round_corner(20,0,0,0,1)"], image_url=ALPHA)),
    ("fill", False, dict(width=300, height=200, filters=["fill(ff0000)"], image_url=PHOTO)),
    ("strip", False, dict(width=300, height=200, filters=["strip_exif()", "strip_icc()"], image_url=PHOTO)),
    ("max_bytes", False, dict(width=600, height=400, filters=["max_bytes(15000)"], image_url=PHOTO)),
    ("watermark", False, dict(width=600, height=400, filters=["watermark(mark,10,10,50)"], image_url=PHOTO)),
    ("watermark", False, dict(width=600, height=400, filters=["watermark(mark,-10,-20,0,20)"], image_url=PHOTO)),
    ("watermark", False, dict(width=600, height=400, filters=["watermark(mark,center,center,30)"], image_url=PHOTO)),
]

# (libthumbor options, native twin): one cache entry for both (sizes not used in CASES).
TWINS = [
    (dict(width=310, height=210, image_url=PHOTO), f"/rs:310:210:fill/el:1/{PHOTO}"),
    (dict(width=310, height=310, fit_in=True, image_url=PHOTO), f"/rs:310:310:fit/{PHOTO}"),
    (dict(width=310, height=210, flip=True, halign="left", valign="top", image_url=PHOTO), f"/rs:310:210:fill/el:1/g:nw/flip:h/{PHOTO}"),
    (dict(crop=((10, 20), (810, 620)), width=210, height=0, image_url=PHOTO), f"/crop:800:600:10:20/w:210/el:1/{PHOTO}"),
    (dict(width=310, height=210, smart=True, filters=["no_upscale()", "quality(70)", "format(webp)"], image_url=PHOTO),
     f"/rs:310:210:fill/g:smart/q:70/f:webp/{PHOTO}"),
    (dict(width=210, height=0, filters=["blur(4)", "grayscale()", "rotate(90)"], image_url=PHOTO), f"/w:210/el:1/bl:2.38/gs/rot:270/{PHOTO}"),
    (dict(width=310, height=210, filters=["round_corner(20,255,255,255)", "strip_icc()"], image_url=PHOTO),
     f"/rs:310:210:fill/el:1/rc:20/icc:srgb/bg:ffffff/{PHOTO}"),
    (dict(trim=True, width=0, height=110, image_url=BORDERED), f"/t:0/h:110/el:1/{BORDERED}"),
]


def thumbor_url(opts: dict, signed: bool) -> str:
    c = CryptoURL(key=KEY)
    if opts.pop("hq", False):
        # quality(95): at thumbor's and Kiln's default of 80, two encoders' JPEG noise alone
        # keeps the SSIM of identical pixels near 0.91 on the photo; geometry is what is compared.
        opts = dict(opts, filters=[*opts.get("filters", []), "quality(95)"])
    return c.generate(**opts) if signed else "/" + c.generate(unsafe=True, **opts)


@pytest.fixture(scope="module")
def served():
    """The image folder both servers read: copies, world-readable; a bordered PNG for trim and a
    watermark (`mark`: thumbor loads it by that name, Kiln has it as `[watermarks] mark`)."""
    if CryptoURL is None:
        pytest.fail("libthumbor is not installed in this Python (Tests/integration/requirements.txt)", pytrace=False)
    base = Path(tempfile.mkdtemp(prefix="kiln-thumbor-", dir=os.environ.get("TMPDIR", "/tmp")))
    os.chmod(base, 0o755)
    for src in (BENCH / PHOTO, BENCH / BIG, BENCH / ALPHA, BENCH / WEBP, CORPUS / HOPPER, CORPUS / ORIG):
        shutil.copy2(src, base / src.name)
    # A small PNG without gAMA (the corpus's PngSuite files carry gamma 1.0, which Kiln applies and thumbor ignores).
    Image.open(base / HOPPER).convert("RGB").resize((40, 30)).save(base / TINY)
    photo = Image.open(base / PHOTO).convert("RGB").resize((600, 338))
    canvas = Image.new("RGB", (800, 500), (255, 255, 255))
    canvas.paste(photo, (90, 70))
    canvas.save(base / BORDERED)
    mark = Image.new("RGBA", (120, 60), (255, 0, 0, 200))
    mark.paste((0, 0, 255, 255), (20, 15, 100, 45))
    mark.save(base / "mark.png")
    shutil.copy2(base / "mark.png", base / "mark")
    for p in base.iterdir():
        os.chmod(p, 0o644)
    yield base
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def thumbor(served):
    """thumbor 7.8 on 127.0.0.1 (PIL engine, file loader on `served`), as shared/peers configures it."""
    if not THUMBOR.exists():
        pytest.fail(f"{THUMBOR} is missing: scripts/test installs it from Tests/integration/requirements-thumbor.txt", pytrace=False)
    conf = served.parent / (served.name + "-thumbor.conf")
    conf.write_text(f"""LOADER = 'thumbor.loaders.file_loader'
FILE_LOADER_ROOT_PATH = {str(served)!r}
STORAGE = 'thumbor.storages.no_storage'
RESULT_STORAGE = None
SECURITY_KEY = {KEY!r}
ALLOW_UNSAFE_URL = True
ENGINE = 'thumbor.engines.pil'
QUALITY = 80
WEBP_QUALITY = 80
AUTO_WEBP = False
ENABLE_ETAGS = False
MAX_AGE = 0
""")
    port = free_port()
    log = open(served.parent / (served.name + "-thumbor.log"), "wb")
    proc = subprocess.Popen([str(THUMBOR), "-p", str(port), "-i", "127.0.0.1", "-c", str(conf), "-l", "warning"],
                            stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    client = HttpClient("127.0.0.1", port)
    deadline = time.monotonic() + 30
    while True:
        try:
            if client.get("/healthcheck", timeout=5).status == 200:
                break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"thumbor did not start: {Path(log.name).read_text(errors='replace')[-2000:]}", pytrace=False)
        time.sleep(0.1)
    yield client
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    log.close()
    conf.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def kiln(served):
    # One worker: one memory cache, so a twin's second request is a hit without a disk cache.
    s = started_stack(root=served, workers=1, extra_args=[
        "--set", "adapters.thumbor=true", "--set", f"adapters.thumbor_key={KEY}", "--set", "adapters.allow_unsigned=true",
        "--set", f"watermarks.mark={served / 'mark.png'}"])
    yield s
    stop_stack(s)


def grey(im: Image.Image) -> np.ndarray:
    """Luma on white: transparent pixels count as white in both images."""
    if im.mode in ("RGBA", "LA", "P", "PA"):
        rgba = im.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        im = Image.alpha_composite(white, rgba)
    return np.asarray(im.convert("L"))


def renders(client: HttpClient) -> float:
    r = client.get("/_kiln/metrics", timeout=10)
    assert r.status == 200, r.describe()
    for family in text_string_to_metric_families(r.body.decode()):
        for sample in family.samples:
            if sample.name == "kiln_renders_total":
                return sample.value
    raise AssertionError("kiln_renders_total is not exported")


def test_kiln_answers_thumbor_urls_as_thumbor_does(thumbor, kiln):
    c = kiln.client()
    rows = []
    failures = []
    for i, (kind, geometric, opts) in enumerate(CASES):
        jpeg_out = opts["image_url"].endswith(".jpg") and not any("format(" in f for f in opts.get("filters", []))
        url = thumbor_url(dict(opts, hq=geometric and jpeg_out), signed=i % 2 == 0)
        t = thumbor.get(url, ACCEPT)
        k = c.get(url, ACCEPT)
        assert t.status == 200, f"thumbor {url}: {t.status} {t.body[:200]!r}"
        assert k.status == 200, f"kiln {url}: {k.describe()}"
        ti, ki = t.image(), k.image()
        same_size = ti.size == ki.size
        if not same_size:
            failures.append(f"{url}: thumbor {ti.size}, kiln {ki.size}")
            rows.append((kind, geometric, False, None, None))
            continue
        if t.content_type != k.content_type:
            failures.append(f"{url}: thumbor {t.content_type}, kiln {k.content_type}")
        score = ssim_channel(grey(ti), grey(ki))
        aligned = score if score >= 0.95 else aligned_ssim(grey(ti), grey(ki))
        if geometric and aligned < 0.95:
            failures.append(f"{url}: SSIM {score:.3f}, {aligned:.3f} within one pixel, < 0.95")
        rows.append((kind, geometric, True, score, aligned))
    print_table(rows)
    assert len(CASES) >= 50
    assert not failures, "\n".join(failures)


def aligned_ssim(a: np.ndarray, b: np.ndarray) -> float:
    """The best SSIM of `b` moved by at most one pixel each way against `a`: thumbor cuts its fill
    crop on whole source pixels (the centre floored, the corner rounded to even), Kiln at the
    exact fraction, so after the resize the windows may differ by up to a pixel (more visibly
    when enlarging). Sizes still have to be equal."""
    h, w = a.shape
    best = 0.0
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            x = a[max(dy, 0):h + min(dy, 0), max(dx, 0):w + min(dx, 0)]
            y = b[max(-dy, 0):h + min(-dy, 0), max(-dx, 0):w + min(-dx, 0)]
            best = max(best, ssim_channel(x, y))
    return best


def print_table(rows) -> None:
    kinds: dict[str, list] = {}
    for kind, geometric, same, score, aligned in rows:
        kinds.setdefault(kind, []).append((geometric, same, score, aligned))

    def cells(items) -> str:
        scores = [s for _, _, s, _ in items if s is not None]
        aligned = [a for _, _, _, a in items if a is not None]
        return (f"{sum(1 for _, s, _, _ in items if s):>7}/{len(items):<3} {min(scores):>9.3f} {statistics.median(scores):>11.3f}"
                f" {min(aligned):>12.3f}")
    print(f"\nthumbor 7.8 vs Kiln, {len(rows)} URLs (SSIM on grey; * = geometric: asserted >= 0.95, within one pixel)")
    print(f"{'URL kind':<16} {'URLs':>4} {'sizes equal':>11} {'SSIM min':>9} {'SSIM median':>11} {'min (±1 px)':>12}")
    for kind, items in kinds.items():
        print(f"{kind + ('*' if items[0][0] else ' '):<16} {len(items):>4} {cells(items)}")
    print(f"{'all':<16} {len(rows):>4} {cells([r[1:] for r in rows])}")
    print(f"{'geometric':<16} {sum(1 for r in rows if r[1]):>4} {cells([r[1:] for r in rows if r[1]])}")


def test_a_changed_signature_is_a_403_and_nothing_is_rendered(kiln):
    c = kiln.client()
    signed = [thumbor_url(opts, signed=True) for _, _, opts in CASES] + [thumbor_url(opts, signed=True) for opts, _ in TWINS]
    before = renders(c)
    for i, url in enumerate(signed):
        signature = url[1:28]
        j = i % 27
        changed = signature[:j] + ("A" if signature[j] != "A" else "B") + signature[j + 1:]
        r = c.get("/" + changed + url[28:], ACCEPT)
        assert r.status == 403, f"{url} with {changed}: {r.describe()}"
        assert_plain_error(r, url)
        assert r.header("x-cache") is None, r.headers
    # A valid signature over another URL, and a signed URL that another key signed.
    other = CryptoURL(key="another-key").generate(width=300, height=200, image_url=PHOTO)
    assert c.get(other, ACCEPT).status == 403
    moved = signed[0].rsplit("/", 1)[0] + "/" + HOPPER
    assert c.get(moved, ACCEPT).status == 403
    assert renders(c) == before, "a refused signature rendered something"


def test_a_thumbor_url_and_its_native_twin_are_one_entry(kiln):
    c = kiln.client()
    for i, (opts, native) in enumerate(TWINS):
        url = thumbor_url(opts, signed=i % 2 == 1)
        a = c.get(url, ACCEPT)
        assert a.status == 200, f"{url}: {a.describe()}"
        assert a.header("x-cache") == "MISS", f"{url}: {a.headers}"
        b = c.get(native, ACCEPT)
        assert b.status == 200, f"{native}: {b.describe()}"
        assert (b.header("x-cache") or "").startswith("HIT"), f"{native} after {url}: {b.headers}"
        assert b.header("etag") == a.header("etag") and b.body == a.body, (url, native)
    # Native URLs that start with /unsafe/ stay native; thumbor's meta/ is a 400 naming it.
    r, im = c.image(f"/unsafe/w:50/{HOPPER}")
    assert im.size == (50, 50)
    r = c.get(f"/unsafe/meta/300x200/{PHOTO}")
    assert r.status == 400 and "meta" in r.body.decode(), r.describe()
    assert_plain_error(r)
