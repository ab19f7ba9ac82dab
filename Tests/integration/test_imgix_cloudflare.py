"""imgix's signed URLs and new parameters, and Cloudflare's trim, anim and onerror (the issue's
parts 3 and 4), through nginx with the real binary.

imgix: URLs written by imgix's own Python library (`imgix==4.0.0`, `UrlBuilder(sign_key=…)`),
signed and unsigned, over copies of the bench and corpus photos; each answer's size is checked
against imgix's documented semantics, computed here from the source's size. Every signed URL
with a tampered `s` (or a tampered parameter) is a 403 and renders nothing (the renders counter
and the disk cache do not move). An imgix URL and its native twin share one cache entry.
Cloudflare: `onerror=redirect` on a missing source is a 302 to the source, `anim=false` on an
animated GIF a still, `trim` cuts source pixels before the resize.
"""
from __future__ import annotations

import io
import json
import os
import shutil
import time
from pathlib import Path

import pytest
from PIL import Image, ImageOps
from prometheus_client.parser import text_string_to_metric_families

from helpers import BENCH, CORPUS, assert_plain_error
from stack import started_stack, stop_stack

imgix = pytest.importorskip("imgix")

pytestmark = pytest.mark.timeout(600)

TOKEN = "kiln-imgix-test-token"
# Photos of both folders: a wide JPEG and WebP, a PNG with alpha, a 12 MP JPEG, small and odd ones.
SOURCES = [(BENCH, "photo_1920x1080.jpg"), (BENCH, "photo_1920x1080.webp"), (BENCH, "alpha_1920x1080.png"),
           (BENCH, "photo_4000x3000.jpg"), (CORPUS, "pillow_hopper.jpg"), (CORPUS, "skimage_coffee.png"),
           (CORPUS, "skimage_rocket.jpg"), (CORPUS, "pillow_flower2.webp"), (CORPUS, "exif_Portrait_6.jpg")]
PRODUCT = "product_on_white.png"   # a 600x400 block on a 1000x700 white canvas (trim)
ANIMATED = "spinner.gif"           # 4 frames, 60x40
HINT_WIDTHS = [320, 640, 960, 1280, 1920]   # http.hint_widths' default


def world_readable(top: Path) -> None:
    for dirpath, _, filenames in os.walk(top):
        os.chmod(dirpath, 0o755)
        for f in filenames:
            os.chmod(os.path.join(dirpath, f), 0o644)


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Path:
    """A root with copies of the photos, a product shot, an animated GIF, and a watermark."""
    top = tmp_path_factory.mktemp("imgix")
    root = top / "root"
    root.mkdir()
    for folder, name in SOURCES:
        shutil.copy2(folder / name, root / name)
    canvas = Image.new("RGB", (1000, 700), (255, 255, 255))
    canvas.paste(Image.new("RGB", (600, 400), (30, 90, 160)), (250, 120))
    canvas.save(root / PRODUCT)
    frames = [Image.new("RGB", (60, 40), c) for c in ((255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0))]
    frames[0].save(root / ANIMATED, save_all=True, append_images=frames[1:], duration=100, loop=0)
    Image.new("RGBA", (200, 100), (255, 0, 0, 200)).save(top / "logo.png")
    (top / "cache").mkdir()
    world_readable(top)
    return root


@pytest.fixture(scope="module")
def kiln(served):
    s = started_stack(root=served, workers=1, extra_args=[
        "--set", "adapters.imgix=true", "--set", "adapters.cloudflare=true",
        "--set", f"adapters.imgix_token={TOKEN}", "--set", "adapters.allow_unsigned=true",
        "--set", f"watermarks.logo={served.parent / 'logo.png'}",
        "--set", f"cache.disk_path={served.parent / 'cache'}"])
    s.cache_dir = served.parent / "cache"
    yield s
    stop_stack(s)


def source_size(root: Path, name: str) -> tuple[int, int]:
    """The size as displayed (EXIF orientation applied), which is what imgix and Kiln resize."""
    with Image.open(root / name) as im:
        return ImageOps.exif_transpose(im).size


def expected_size(src: tuple[int, int], p: dict, hint_width: int | None = None) -> tuple[int, int]:
    """imgix's documented geometry: `fit=clip` (default) fits the box and may enlarge, `max` fits
    without enlarging, `crop` and `scale` give the box exactly, `min` the box or, when the source is
    smaller, the largest crop of its aspect; one side alone keeps the aspect; `dpr` multiplies the
    sizes; `rot` by 90/270 swaps them; `ch=Width` without `w` takes the device's width (snapped up
    to Kiln's `http.hint_widths`)."""
    sw, sh = src
    dpr = float(p.get("dpr", 1))
    w = int(p["w"]) * dpr if "w" in p else None
    h = int(p["h"]) * dpr if "h" in p else None
    if w is None and "Width" in str(p.get("ch", "")) and hint_width:
        w = next((b for b in HINT_WIDTHS if b >= hint_width), HINT_WIDTHS[-1])
    fit = p.get("fit", "clip")
    if w is None and h is None:
        out = (sw, sh)
    elif w is not None and h is not None and fit in ("crop", "scale"):
        out = (w, h)
    elif w is not None and h is not None and fit == "min":
        scale = min(1.0, sw / w, sh / h)
        out = (w * scale, h * scale)
    else:
        scale = min(w / sw if w else float("inf"), h / sh if h else float("inf"))
        if fit == "max":
            scale = min(scale, 1.0)
        out = (sw * scale, sh * scale)
    out = (round(out[0]), round(out[1]))
    if str(p.get("rot", "0")) in ("90", "270"):
        out = (out[1], out[0])
    return out


# Parameter sets: together they cover every mapped imgix parameter (trim on the product shot).
PARAMS = [
    {"w": 300},
    {"w": 400, "h": 300, "fit": "crop", "crop": "top,left"},
    {"w": 320, "h": 320, "fit": "crop", "crop": "focalpoint", "fp-x": 0.3, "fp-y": 0.6},
    {"h": 200, "fit": "max", "fm": "webp", "q": 60},
    {"w": 250, "h": 250, "fit": "scale", "flip": "hv"},
    {"w": 200, "dpr": 2, "auto": "format,compress"},
    {"w": 256, "rot": 90, "blur": 20, "chromasub": 444, "fm": "jpg"},
    {"w": 300, "mark": "logo", "mark-alpha": 60, "mark-align": "top,left", "mark-pad": 10, "mark-w": 0.2},
    {"w": 300, "ch": "DPR,Save-Data", "fm": "pjpg", "bg": "fff"},
    {"ch": "Width,DPR"},
    {"w": 180, "h": 120, "fit": "clip", "crop": "entropy", "auto": "compress"},
    {"w": 64, "h": 64, "fit": "min", "fm": "png"},
]
PRODUCT_PARAMS = [
    {"trim": "auto"},
    {"trim": "auto", "trim-md": 20, "w": 300},
    {"trim": "color", "trim-color": "ffffff", "trim-tol": 10},
    {"trim": "color", "trim-color": "fff", "trim-tol": 30, "h": 100, "fit": "max"},
]


def imgix_urls() -> list[tuple[str, dict, bool]]:
    """(path and query, parameters, signed) as imgix's library writes them, alternating signed
    and unsigned builders (with and without `ixlib`)."""
    signed = imgix.UrlBuilder("kiln.test", sign_key=TOKEN)
    plain = imgix.UrlBuilder("kiln.test", include_library_param=False)
    out = []
    cases = [(name, p) for _, name in SOURCES for p in PARAMS] + [(PRODUCT, p) for p in PRODUCT_PARAMS]
    for i, (name, p) in enumerate(cases):
        builder, is_signed = (signed, True) if i % 2 == 0 else (plain, False)
        url = builder.create_url(name, p)
        out.append((url.removeprefix("https://kiln.test"), p, is_signed))
    return out


URLS = imgix_urls()


def renders(client) -> float:
    r = client.get("/_kiln/metrics", timeout=10)
    assert r.status == 200, r.describe()
    total = 0.0
    for family in text_string_to_metric_families(r.body.decode()):
        for s in family.samples:
            if s.name == "kiln_renders_total":
                total += s.value
    return total


def cache_entries(folder: Path) -> int:
    return sum(len(files) for _, _, files in os.walk(folder))


def written_entries(client, folder: Path) -> int:
    """The disk cache's file count once every render so far is written. Entries are written after
    the answer; the stack has one worker, which takes requests in order, so once the entry of a
    render of this function's own appears (polled, 30 s bound), every earlier one is written too."""
    start = cache_entries(folder)
    r, _ = client.image("/pillow_hopper.jpg?w=33&fm=png")
    assert r.status == 200 and r.header("x-cache") == "MISS", r.describe()
    deadline = time.monotonic() + 30
    while cache_entries(folder) <= start:
        assert time.monotonic() < deadline, "the render's disk cache entry never appeared"
        time.sleep(0.05)
    return cache_entries(folder)


def test_imgix_library_urls_render_at_imgixs_sizes(kiln, served):
    assert len(URLS) >= 50 and sum(1 for *_, s in URLS if s) >= 25
    c = kiln.client()
    for url, p, is_signed in URLS:
        assert ("&s=" in url or "?s=" in url) == is_signed, url
        name = url.split("?")[0].lstrip("/")
        hint = 500 if "ch" in p else None
        headers = {"Accept": "image/avif,image/webp,*/*"}
        if hint:
            headers["Sec-CH-Width"] = str(hint)
        r, im = c.image(url, headers)
        if name == PRODUCT:
            trimmed = (600, 400)   # the block, whatever the tolerance (a PNG has no ringing)
            want = expected_size(trimmed, p)
        else:
            want = expected_size(source_size(served, name), p, hint)
        assert abs(im.size[0] - want[0]) <= 1 and abs(im.size[1] - want[1]) <= 1, f"{url}: {im.size}, imgix says {want}"
        fm = p.get("fm")
        if fm in ("png", "webp"):
            assert r.content_type == f"image/{fm}", (url, r.content_type)
        if fm in ("jpg", "pjpg"):
            assert r.content_type == "image/jpeg", (url, r.content_type)


def tampered(url: str) -> list[str]:
    """The URL with its signature's last digit changed, and with a parameter changed under the
    same signature."""
    base, s = url.rsplit("s=", 1)
    flipped = base + "s=" + s[:-1] + ("0" if s[-1] != "0" else "1")
    query = base.split("?", 1)[1]
    first = query.split("&", 1)[0]
    name, value = first.split("=", 1)
    changed = url.replace(first, f"{name}={value}1" if value.isdigit() else f"{name}={value}x", 1)
    return [flipped, changed]


def test_tampered_signatures_are_403s_and_render_nothing(kiln):
    c = kiln.client()
    signed = [u for u, _, s in URLS if s]
    c.image(signed[0])   # at least one render and one cache entry, whatever ran before
    entries = written_entries(c, kiln.cache_dir)
    before = renders(c)
    assert before > 0 and entries > 0, (before, entries)   # the counters do count here
    count = 0
    for url in signed:
        for bad in tampered(url):
            r = c.get(bad)
            assert r.status == 403, f"{bad}: {r.describe()}"
            assert_plain_error(r, bad)
            assert r.header("x-cache") is None and r.header("cache-control") == "no-store", r.headers
            count += 1
    assert count >= 50
    assert renders(c) == before, "a tampered URL rendered"
    assert cache_entries(kiln.cache_dir) == entries, "a tampered URL reached the disk cache"
    # Without s= at all: unsigned, admitted here (adapters.allow_unsigned).
    r, im = c.image("/pillow_hopper.jpg?w=32")
    assert im.size == (32, 32)


def test_imgix_url_and_native_twin_share_one_entry(kiln):
    c = kiln.client()
    signed = imgix.UrlBuilder("kiln.test", sign_key=TOKEN)
    twins = [
        (signed.create_url("skimage_rocket.jpg", {"w": 210, "h": 140, "fit": "crop", "crop": "focalpoint", "fp-x": 0.2, "fp-y": 0.8}),
         "/rs:210:140:fill/el:1/g:fp:0.2:0.8/skimage_rocket.jpg"),
        (signed.create_url("skimage_coffee.png", {"w": 150, "auto": "compress"}), "/w:150/el:1/q:45/skimage_coffee.png"),
        (signed.create_url("skimage_coffee.png", {"w": 170, "mark": "logo", "mark-alpha": 50}),
         "/w:170/el:1/wm:logo:0.5:se:5:5:0/skimage_coffee.png"),
        (signed.create_url(PRODUCT, {"trim": "color", "trim-color": "ffffff", "trim-tol": 12, "w": 90}),
         f"/t:12:ffffff/w:90/el:1/{PRODUCT}"),
    ]
    for url, native in twins:
        adapted = url.removeprefix("https://kiln.test")
        a = c.get(adapted)
        assert a.status == 200 and a.header("x-cache") == "MISS", f"{adapted}: {a.describe()}"
        b = c.get(native)
        assert b.status == 200, f"{native}: {b.describe()}"
        assert (b.header("x-cache") or "").startswith("HIT"), (native, b.headers)
        assert b.header("etag") == a.header("etag") and b.body == a.body, (adapted, native)


def test_imgix_refusals(kiln):
    c = kiln.client()
    for url, word, status in (
        ("/pillow_hopper.jpg?mark=https%3A%2F%2Fexample.com%2Flogo.png", "configured watermarks", 400),
        ("/pillow_hopper.jpg?w=30&auto=enhance", "auto=enhance", 400),
        ("/pillow_hopper.jpg?w=30&fp-x=0.5", "crop=focalpoint", 400),
        ("/pillow_hopper.jpg?w=30&s=0123456789abcdef0123456789abcdef", "invalid signature", 403),
        ("/pillow_hopper.jpg?mark=nologo", "nologo", 400),
    ):
        r = c.get(url)
        assert r.status == status and word in r.body.decode(), f"{url}: {r.describe()}"
        assert_plain_error(r, url)


def test_cloudflare_onerror_redirects_to_the_source(kiln):
    c = kiln.client()
    r = c.get("/cdn-cgi/image/width=300,onerror=redirect/photos/missing.jpg")
    assert r.status == 302, r.describe()
    assert r.header("location") == "/photos/missing.jpg", r.headers
    assert r.header("cache-control") == "no-store" and r.header("etag") is None
    # Again: a 302 again, never remembered as an image.
    assert c.get("/cdn-cgi/image/width=300,onerror=redirect/photos/missing.jpg").status == 302
    # Without onerror, the 404; a bad URL stays a 400 even with onerror.
    assert c.get("/cdn-cgi/image/width=300/photos/missing.jpg").status == 404
    bad = c.get("/cdn-cgi/image/width=-3,onerror=redirect/photos/missing.jpg")
    assert bad.status == 400 and bad.header("location") is None, bad.describe()
    # A source that renders is answered as usual.
    r, im = c.image("/cdn-cgi/image/width=40,onerror=redirect/pillow_hopper.jpg")
    assert im.size == (40, 40)


def test_cloudflare_anim_false_is_a_still(kiln):
    c = kiln.client()
    r = c.get(f"/cdn-cgi/image/width=30/{ANIMATED}")
    assert r.status == 200, r.describe()
    assert getattr(Image.open(io.BytesIO(r.body)), "n_frames", 1) == 4
    r = c.get(f"/cdn-cgi/image/width=30,anim=false/{ANIMATED}")
    assert r.status == 200, r.describe()
    still = Image.open(io.BytesIO(r.body))
    assert getattr(still, "n_frames", 1) == 1 and still.size == (30, 20)
    assert still.convert("RGB").getpixel((15, 10))[0] > 200   # the first (red) frame


@pytest.mark.parametrize("options,want", [
    ("trim=10;20;30;40", lambda w, h: (w - 60, h - 40)),
    ("trim=100;0;100;0,width=300", lambda w, h: (300, round((h - 200) * 300 / w))),
    ("trim.left=500,trim.top=100,trim.width=400,trim.height=300", lambda w, h: (400, 300)),
    ("trim.right=920,height=100,fit=scale-down", lambda w, h: (round((w - 920) * 100 / h), 100)),
])
def test_cloudflare_trim_cuts_source_pixels_before_the_resize(kiln, served, options, want):
    c = kiln.client()
    r, im = c.image(f"/cdn-cgi/image/{options}/photo_1920x1080.jpg")
    w, h = source_size(served, "photo_1920x1080.jpg")
    expected = want(w, h)
    assert abs(im.size[0] - expected[0]) <= 1 and abs(im.size[1] - expected[1]) <= 1, (options, im.size, expected)


def test_cloudflare_trim_that_leaves_nothing_is_a_400(kiln):
    c = kiln.client()
    r = c.get("/cdn-cgi/image/trim=0;1000;0;1000/photo_1920x1080.jpg")
    assert r.status == 400 and "leaves nothing" in r.body.decode(), r.describe()
    assert_plain_error(r)
    r = c.get("/cdn-cgi/image/trim.width=5,trim.right=5/photo_1920x1080.jpg")
    assert r.status == 400, r.describe()


def test_imgix_fm_json_describes_the_source(kiln):
    """`fm=json` on a signed URL: the source's description, as imgix's `fm=json`."""
    c = kiln.client()
    url = imgix.UrlBuilder("kiln.test", sign_key=TOKEN).create_url("photo_1920x1080.jpg", {"fm": "json"})
    r = c.get(url.removeprefix("https://kiln.test"))
    assert r.status == 200, r.describe()
    assert "1920" in json.dumps(json.loads(r.body))
