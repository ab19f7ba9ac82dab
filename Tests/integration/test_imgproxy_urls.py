"""imgproxy's URLs (issue 39 §1), written by imgproxy's own PyPI client library (`imgproxy`),
answered by the real kiln behind nginx.

- Over 50 URLs over the bench photos and the corpus, signed with imgproxy's key and salt and
  `insecure`, covering every mapped option: each answer has the size imgproxy's documentation
  gives (computed here from the source's size: `expected_size`), and the format of its extension.
- Every signed URL with one character of its signature changed is a 403, and nothing renders
  (`kiln_renders_total` does not move).
- An imgproxy URL and its native twin share one cache entry (the same ETag; the second is a hit).
"""
from __future__ import annotations

import secrets

import pytest
from PIL import Image, ImageOps
import imgproxy
from imgproxy import ImgProxy
from prometheus_client.parser import text_string_to_metric_families

from helpers import assert_plain_error
from stack import started_stack, stop_stack

pytestmark = pytest.mark.timeout(240)

KEY = secrets.token_hex(32)
SALT = secrets.token_hex(16)
SOURCES = ["photo_1920x1080.jpg", "pillow_hopper.jpg", "alpha_1920x1080.png", "pillow_flower2.webp", "exif_Portrait_6.jpg"]
MIME = {"jpg": "image/jpeg", "png": "image/png", "webp": "image/webp", "avif": "image/avif"}

# (name, ImgProxy keyword arguments, advanced options, imgproxy's parameters for expected_size).
CASES = [
    ("fit", dict(resizing_type="fit", width=300, height=200), [], {}),
    ("fill-smart", dict(resizing_type="fill", width=300, height=200, gravity="sm"), [], {}),
    ("force", dict(resizing_type="force", width=250, height=250), [], {}),
    ("auto-landscape-box", dict(resizing_type="auto", width=300, height=200), [], {}),
    ("auto-portrait-box", dict(resizing_type="auto", width=200, height=300), [], {}),
    ("fit-enlarge", dict(resizing_type="fit", width=2400, height=2400, enlarge=True), [], {}),
    ("fill-dpr", dict(resizing_type="fill", width=100, height=100), ["dpr:2"], {"dpr": 2}),
    ("fit-width-padding", dict(resizing_type="fit", width=300, height=0, extension="png"), ["pd:10:20"], {"pad": (10, 20, 10, 20)}),
    ("fill-extend", dict(resizing_type="fill", width=400, height=300, extension="jpg"), ["ex:1", "bg:255:255:255"], {"extend": True}),
    ("crop-then-fit", dict(resizing_type="fit", width=200, height=200), ["c:100:80:nowe"], {"crop": (100, 80)}),
    ("rotate", dict(resizing_type="fit", width=300, height=300), ["rot:90"], {"rot": 90}),
    ("fill-gravity-quality", dict(resizing_type="fill", width=200, height=150, gravity="noea", extension="webp"), ["q:60", "sm:1"], {}),
    ("blur-sharpen", dict(resizing_type="fit", width=256, height=256, extension="png"), ["bl:2", "sh:0.5"], {}),
    ("watermark", dict(resizing_type="fit", width=300, height=300), ["wm:0.5:soea:10:10:0.2"], {}),
    ("format-option", dict(resizing_type="fit", width=200, height=200), ["f:webp"], {"format": "webp"}),
    ("max-bytes", dict(resizing_type="fit", width=640, height=640, extension="jpg"), ["mb:20000"], {"max_bytes": 20000}),
    ("download", dict(resizing_type="fit", width=120, height=120), ["fn:holiday", "att:1"], {"attachment": "holiday"}),
    ("avif", dict(resizing_type="fit", width=160, height=90, extension="avif"), [], {}),
    # The library writes `rs:` after the advanced options, so `rs:fit:0:0` (no resize) wins over
    # them, as imgproxy reads a later option over an earlier one: the source's size.
    ("later-option-wins", dict(resizing_type="fit", width=0, height=0), ["w:180", "h:180", "rt:fill"], {}),
    ("strip-colour-profile", dict(resizing_type="fit", width=150, height=150), ["scp:1", "ar:1", "cb:v2"], {}),
]


def source_size(root, name: str) -> tuple[int, int]:
    with Image.open(root / name) as im:
        return ImageOps.exif_transpose(im).size  # imgproxy auto-rotates by default, as Kiln does


def go_round(x: float) -> int:
    """Go's math.Round (imgproxy's imath.Scale): halves away from zero, not to even."""
    return int(x + 0.5) if x >= 0 else -int(-x + 0.5)


def expected_size(src: tuple[int, int], rt: str, w: int, h: int, enlarge: bool, p: dict) -> tuple[int, int]:
    """imgproxy's documented geometry: rotate, crop, then the resizing type into the box (dpr
    multiplies it), never larger unless enlarge; extend to the box; padding (also × dpr)."""
    sw, sh = src
    if p.get("rot") in (90, 270):
        sw, sh = sh, sw
    if "crop" in p:
        sw, sh = min(p["crop"][0], sw), min(p["crop"][1], sh)
    rt, w, h = p.get("rt", rt), p.get("w", w), p.get("h", h)
    dpr = p.get("dpr", 1)
    bw, bh = go_round(w * dpr), go_round(h * dpr)
    if rt == "auto":
        rt = "fill" if bw and bh and ((sw - sh >= 0) == (bw - bh >= 0)) else "fit"
    fx = bw / sw if bw else None
    fy = bh / sh if bh else None
    if rt == "force":
        sx, sy = fx or fy or 1, fy or fx or 1
        if not enlarge:
            sx, sy = min(sx, 1), min(sy, 1)
    else:
        pick = min if rt == "fit" else max
        s = pick(fx, fy) if fx and fy else (fx or fy or 1)
        sx = sy = min(s, 1) if not enlarge else s
    ow, oh = max(1, go_round(sw * sx)), max(1, go_round(sh * sy))
    if rt == "fill":
        ow, oh = min(ow, bw) if bw else ow, min(oh, bh) if bh else oh
    if p.get("extend"):
        ow, oh = max(ow, bw), max(oh, bh)
    if "pad" in p:
        t, r, b, l = (go_round(v * dpr) for v in p["pad"])
        ow, oh = ow + l + r, oh + t + b
    return ow, oh


def urls(signed: bool) -> list[tuple[str, str, dict, str]]:
    """(URL, case name, case, source) for every case and source."""
    out = []
    for name, kw, advanced, p in CASES:
        for src in SOURCES:
            key = dict(key=KEY, salt=SALT) if signed else {}
            u = ImgProxy(f"local:///{src}", **key, advanced=advanced, **kw)
            out.append((u(), name, (kw, p), src))
    return out


@pytest.fixture(scope="module")
def imgproxy_stack(root, tmp_path_factory):
    mark = tmp_path_factory.mktemp("marks") / "logo.png"
    Image.new("RGBA", (64, 32), (255, 0, 0, 200)).save(mark)
    mark.chmod(0o644)
    mark.parent.chmod(0o755)
    s = started_stack(root=root, workers=2, extra_args=[
        "--set", "adapters.imgproxy=true", "--set", f"adapters.imgproxy_keys={KEY}", "--set", f"adapters.imgproxy_salts={SALT}",
        "--set", "adapters.imgproxy_watermark=logo", "--set", f"watermarks.logo={mark}", "--set", "adapters.allow_unsigned=true",
        "--set", f"cache.disk_path={tmp_path_factory.mktemp('cache')}"])
    yield s
    stop_stack(s)


def renders(client) -> float:
    r = client.get("/_kiln/metrics", timeout=10)
    assert r.status == 200, r.describe()
    return sum(s.value for f in text_string_to_metric_families(r.body.decode()) for s in f.samples if s.name == "kiln_renders_total")


def test_library_urls_answer_imgproxys_sizes(imgproxy_stack, root, capsys):
    c = imgproxy_stack.client()
    signed, unsigned = urls(True), urls(False)
    assert all(u.split("/")[1] == "insecure" for u, *_ in unsigned)
    assert all(u.split("/")[1] != "insecure" for u, *_ in signed)
    checked = 0
    # Alternate signed and insecure URLs over the cases, so both kinds cover every option.
    for i, (url, name, (kw, p), src) in enumerate(signed):
        if i % 2:
            url = unsigned[i][0]
        r, im = c.image(url)
        assert r.status == 200, f"{name} {src} {url}: {r.describe()}"
        want = expected_size(source_size(root, src), kw["resizing_type"], kw["width"], kw["height"], kw.get("enlarge", False), p)
        assert im.size == want, f"{name} {src} {url}: {im.size} != {want}"
        ext = p.get("format") or kw.get("extension")
        if ext:
            assert r.header("content-type") == MIME[ext], f"{name} {src}: {r.header('content-type')}"
        if "max_bytes" in p:
            assert len(r.body) <= p["max_bytes"], f"{name} {src}: {len(r.body)} bytes"
        if "attachment" in p:
            assert r.header("content-disposition").startswith("attachment") and p["attachment"] in r.header("content-disposition")
        checked += 1
    assert checked >= 50
    with capsys.disabled():
        print(f"\nimgproxy: {checked} URLs from the PyPI imgproxy {imgproxy.__version__} client "
              f"({len(signed[::2])} signed, {len(signed[1::2])} insecure) over {len(SOURCES)} sources, sizes as documented")


def tampered(url: str) -> str:
    sig = url.split("/")[1]
    i = len(sig) // 2
    swapped = sig[:i] + ("A" if sig[i] != "A" else "B") + sig[i + 1:]
    return "/" + swapped + url[len(sig) + 1:]


def test_tampered_signatures_are_403_and_render_nothing(imgproxy_stack):
    c = imgproxy_stack.client()
    before = renders(c)
    signed = urls(True)
    for url, name, _, src in signed:
        r = c.get(tampered(url))
        assert r.status == 403, f"{name} {src}: {r.describe()}"
        assert_plain_error(r, url)
        assert "signature" in r.body.decode()
    # The path changed under a valid signature: 403 too.
    url = signed[0][0]
    r = c.get(url.replace("rs:fit:300:200", "rs:fit:301:200"))
    assert r.status == 403, r.describe()
    assert renders(c) == before, "a tampered URL rendered"


def test_imgproxy_url_and_native_twin_share_one_entry(imgproxy_stack):
    c = imgproxy_stack.client()
    pairs = [
        (ImgProxy("local:///photo_1920x1080.jpg", key=KEY, salt=SALT, resizing_type="fill", width=333, height=222, gravity="noea",
                  extension="webp")(), "/rs:333:222:fill/g:ne/f:webp/photo_1920x1080.jpg"),
        ("/insecure/rs:fit:210:0/q:55/plain/local:///pillow_hopper.jpg@png", "/rs:210:0:fit/q:55/f:png/pillow_hopper.jpg"),
        ("/insecure/ex:1/rs:fit:300:300/bg:ff8800/plain/pillow_hopper.jpg@jpg", "/rs:300:300:fit/extend:300:300/bg:ff8800/f:jpeg/pillow_hopper.jpg"),
    ]
    for i, (adapted, native) in enumerate(pairs):
        first, second = (adapted, native) if i % 2 == 0 else (native, adapted)
        a = c.get(first)
        assert a.status == 200 and a.header("x-cache") == "MISS", f"{first}: {a.describe()}"
        b = c.get(second)
        assert b.status == 200 and (b.header("x-cache") or "").startswith("HIT"), f"{second}: {b.describe()}"
        assert a.header("etag") == b.header("etag") and a.body == b.body


def test_what_kiln_refuses_is_a_400_naming_it(imgproxy_stack):
    c = imgproxy_stack.client()
    for url, word in [("/insecure/pix:5/plain/pillow_hopper.jpg", "pixelate"),
                      ("/insecure/rs:fill-down:300:300/plain/pillow_hopper.jpg", "fill-down"),
                      ("/insecure/w:100/plain/https://evil.example/x.jpg", "not under a configured origin"),
                      ("/insecure/w:100/plain/pillow_hopper.jpg@tiff", "tiff")]:
        r = c.get(url)
        assert r.status == 400, f"{url}: {r.describe()}"
        assert_plain_error(r, url)
        assert word in r.body.decode(), r.body
