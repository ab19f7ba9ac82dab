"""Output format limits and minimum sigmas (issue 14), through nginx with the real binary.

WebP stores at most 16383 x 16383 pixels. An explicit `f:webp` (or a WebP source without `f:`)
whose result is larger is a 413 naming the limit, decided from the plan before decoding and
remembered like other failures; `f:auto` for a client that accepts WebP falls back to a format
that holds the result. Sigmas below 0.1 (`bl:`, `sh:`) are dropped: the answer is the image
without the step, never a black one.
"""
from __future__ import annotations

import io
import os
import subprocess

import pytest
from PIL import Image, ImageStat

from helpers import KILN_BIN, assert_plain_error

HITS = {"HIT-MEMORY", "HIT-DISK", "COALESCED"}
WEBP_ACCEPT = {"Accept": "image/webp,*/*"}  # a WebP-only client; AVIF: test_avif_heic.py


def _gradient(width: int, height: int, mode: str = "RGB") -> Image.Image:
    row = Image.linear_gradient("L").resize((width, 1))
    r = row.resize((width, height))
    g = r.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    b = Image.new("L", (width, height), 90)
    im = Image.merge("RGB", (r, g, b))
    if mode == "RGBA":
        im.putalpha(Image.new("L", (width, height), 200))
    return im


@pytest.fixture(scope="module")
def wide(root):
    """Wide sources written into the test root: 20000x100 PNG and JPEG, 2000x100 WebP."""
    tag = f"{os.getpid()}"
    names = {"png": f"wide-{tag}.png", "jpeg": f"wide-{tag}.jpg", "webp": f"wide-{tag}.webp"}
    _gradient(20000, 100).save(root / names["png"])
    _gradient(20000, 100).save(root / names["jpeg"], quality=85)
    _gradient(2000, 100).save(root / names["webp"], quality=85)
    for n in names.values():
        os.chmod(root / n, 0o644)
    yield names
    for n in names.values():
        (root / n).unlink(missing_ok=True)


@pytest.fixture
def disk_stack(make_stack, tmp_path):
    return make_stack(workers=2, extra_args=["--set", f"cache.disk_path={tmp_path / 'cache'}"])


def _limit_error(r, path):
    assert r.status == 413, f"GET {path}: {r.describe()}"
    assert_plain_error(r, path)
    text = r.body.decode()
    assert "WebP" in text and "16383" in text, f"{path}: the reason must name the limit: {text!r}"
    return text


def test_explicit_webp_beyond_its_limit_is_413_and_remembered(disk_stack, wide):
    c = disk_stack.client()
    path = f"/f:webp/{wide['png']}"
    first = c.get(path)
    text = _limit_error(first, path)
    assert "20000x100" in text, f"the reason names the result's size: {text!r}"
    assert first.elapsed < 2.0, f"planned from the header, refused before decoding: {first.elapsed:.2f} s"
    assert first.header("x-cache") == "MISS"
    second = c.get(path)
    assert _limit_error(second, path) == text
    assert second.header("x-cache") in HITS, f"a 413 is remembered like other failures: {second.headers}"


def test_explicit_webp_on_a_resize_that_fits_renders(client, wide):
    r, im = client.image(f"/w:16383/f:webp/{wide['png']}")
    assert r.content_type == "image/webp" and im.size[0] == 16383


def test_auto_falls_back_to_the_source_format_when_webp_cannot_hold_the_result(client, wide):
    for fmt, mime, pil in (("png", "image/png", "PNG"), ("jpeg", "image/jpeg", "JPEG")):
        path = f"/f:auto/{wide[fmt]}"
        r, im = client.image(path, headers=WEBP_ACCEPT)
        assert r.content_type == mime and im.format == pil, f"{path}: {r.describe()}"
        assert im.size == (20000, 100)
        assert "accept" in (r.header("vary") or "").lower(), f"{path}: Vary: Accept kept: {r.headers}"


def test_auto_still_picks_webp_when_the_result_fits(client, wide):
    path = f"/w:2000/f:auto/{wide['png']}"
    r, im = client.image(path, headers=WEBP_ACCEPT)
    assert r.content_type == "image/webp" and im.format == "WEBP", r.describe()
    assert im.size == (2000, 10)
    assert "accept" in (r.header("vary") or "").lower()
    # The same URL for a client without WebP gets the source's format.
    r2, im2 = client.image(path, headers={"Accept": "image/png,*/*;q=0.1"})
    assert r2.content_type == "image/png" and im2.size == (2000, 10)


def test_auto_on_a_webp_source_beyond_the_limit_falls_back_to_jpeg(client, wide):
    path = f"/w:16384/el:1/f:auto/{wide['webp']}"
    r, im = client.image(path, headers=WEBP_ACCEPT)
    assert r.content_type == "image/jpeg" and im.format == "JPEG", r.describe()
    assert im.size[0] == 16384


def test_webp_source_upscaled_past_the_limit_without_f_is_413(client, wide):
    path = f"/w:16384/el:1/{wide['webp']}"
    r = client.get(path)
    _limit_error(r, path)
    assert r.elapsed < 2.0, f"refused from the plan: {r.elapsed:.2f} s"
    ok, im = client.image(f"/w:16383/el:1/{wide['webp']}")
    assert ok.content_type == "image/webp" and im.size[0] == 16383


def test_cli_process_names_the_limit(environment_ok, root, wide, tmp_path):
    out = tmp_path / "out.webp"
    p = subprocess.run([str(KILN_BIN), "process", str(root / wide["png"]), "gs", str(out)],
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert p.returncode != 0, "a WebP file 20000 px wide cannot be written"
    assert "16383" in p.stderr and "WebP" in p.stderr, p.stderr
    assert not out.exists(), "no partial output file"


def _mean(im: Image.Image) -> list[float]:
    return ImageStat.Stat(im.convert("RGB")).mean


@pytest.mark.parametrize("step", ["bl:0.00000000000000000000000000000001", "bl:0.0001", "bl:0.09",
                                  "sh:0.00001", "sh:0.0999"])
def test_tiny_sigma_is_the_image_without_the_step(client, step):
    base_path = "/w:200/f:png/pillow_hopper.jpg"
    base, base_im = client.image(base_path)
    r, im = client.image(f"/w:200/{step}/f:png/pillow_hopper.jpg")
    assert r.body == base.body, f"{step}: a sigma below 0.1 changes nothing"
    assert r.header("etag") == base.header("etag"), f"{step}: shares the key of the URL without it"
    for a, b in zip(_mean(im), _mean(base_im)):
        assert abs(a - b) < 1 and a > 10, f"{step}: mean {a} vs {b}"


@pytest.mark.parametrize("step", ["bl:0.1", "sh:0.1", "rounded:1", "pad:0", "circle"])
def test_smallest_accepted_arguments_keep_the_picture(client, step):
    base, base_im = client.image("/w:200/f:png/pillow_hopper.jpg")
    r, im = client.image(f"/w:200/{step}/f:png/pillow_hopper.jpg")
    flat = Image.new("RGBA", im.size, (255, 255, 255, 255))
    flat.alpha_composite(im.convert("RGBA"))
    if step == "circle":
        # The disc keeps the middle of the picture; compare the centre square's middle.
        w, h = im.size
        im_c = flat.crop((w // 4, h // 4, 3 * w // 4, 3 * h // 4))
        bw, bh = base_im.size
        base_c = base_im.crop(((bw - w) // 2 + w // 4, (bh - h) // 2 + h // 4,
                               (bw - w) // 2 + 3 * w // 4, (bh - h) // 2 + 3 * h // 4))
    else:
        im_c, base_c = flat, base_im
    for a, b in zip(_mean(im_c), _mean(base_c)):
        assert abs(a - b) < 3, f"{step}: mean {a} vs {b}: the picture must survive"
