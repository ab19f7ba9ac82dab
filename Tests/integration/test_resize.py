"""The URL grammar: resize modes, width/height, enlarge, quality, format, thumb rewrite."""
from __future__ import annotations

import pytest

from helpers import ALPHA_HD, PHOTO_HD, PHOTO_HD_WEBP

HD = PHOTO_HD  # 1920x1080 JPEG


def near(a: int, b: int) -> bool:
    """Sizes derived from the aspect ratio may round either way."""
    return abs(a - b) <= 1


def test_fill_to_webp(client):
    r, im = client.image(f"/rs:300:200:fill/f:webp/{HD}")
    assert r.content_type == "image/webp"
    assert im.format == "WEBP"
    assert im.size == (300, 200)


@pytest.mark.parametrize("spec", ["rs:300:200", "rs:300:200:fit", "resize:300:200:fit"])
def test_fit_keeps_aspect_inside_box(client, spec):
    _, im = client.image(f"/{spec}/f:png/{HD}")
    # 1920x1080 into 300x200: the width binds, 300 x 168.75
    assert im.width == 300 and near(im.height, 169), im.size


def test_force_ignores_aspect(client):
    _, im = client.image(f"/rs:300:200:force/f:png/{HD}")
    assert im.size == (300, 200)


@pytest.mark.parametrize("spec", ["w:800", "width:800"])
def test_width_only(client, spec):
    _, im = client.image(f"/{spec}/f:jpeg/{HD}")
    assert im.size == (800, 450)


@pytest.mark.parametrize("spec", ["h:300", "height:300"])
def test_height_only(client, spec):
    _, im = client.image(f"/{spec}/f:jpeg/{HD}")
    assert im.height == 300 and near(im.width, 533), im.size


def test_width_and_height_options_combine(client):
    _, im = client.image(f"/w:300/h:300/f:jpeg/{HD}")
    assert im.width == 300 and near(im.height, 169), im.size


def test_no_enlarge_by_default(client):
    _, im = client.image(f"/w:3000/f:jpeg/{HD}")
    assert im.size == (1920, 1080), "a source is not enlarged unless enlarge:1"


@pytest.mark.parametrize("spec", ["el:1", "enlarge:1"])
def test_enlarge_on(client, spec):
    _, im = client.image(f"/{spec}/w:3000/f:jpeg/{HD}")
    assert im.width == 3000 and near(im.height, 1688), im.size


def test_enlarge_zero_is_off(client):
    _, im = client.image(f"/el:0/w:3000/f:jpeg/{HD}")
    assert im.size == (1920, 1080)


@pytest.mark.parametrize("fmt", ["jpeg", "webp"])
def test_quality_changes_bytes(client, fmt):
    low, _ = client.image(f"/w:400/q:30/f:{fmt}/{HD}")
    high, _ = client.image(f"/w:400/quality:90/f:{fmt}/{HD}")
    assert len(low.body) < len(high.body), f"q:30 gave {len(low.body)} bytes, q:90 {len(high.body)}"
    assert low.header("etag") != high.header("etag")


@pytest.mark.parametrize("fmt,mime,pil", [("jpeg", "image/jpeg", "JPEG"), ("jpg", "image/jpeg", "JPEG"),
                                          ("png", "image/png", "PNG"), ("webp", "image/webp", "WEBP")])
def test_explicit_format(client, fmt, mime, pil):
    r, im = client.image(f"/w:200/f:{fmt}/{HD}")
    assert r.content_type == mime and im.format == pil
    assert "accept" not in (r.header("vary") or "").lower(), "Vary: Accept only for f:auto"


def test_default_format_is_the_source_format(client):
    r, im = client.image(f"/w:200/{PHOTO_HD_WEBP}")
    assert r.content_type == "image/webp" and im.width == 200 and near(im.height, 113), (r.content_type, im.size)
    r, im = client.image(f"/w:200/{HD}")
    assert r.content_type == "image/jpeg"


def test_auto_format_with_webp_accept(client):
    r, im = client.image(f"/w:200/f:auto/{HD}", headers={"Accept": "image/webp,image/*,*/*;q=0.8"})
    assert r.content_type == "image/webp" and im.format == "WEBP"
    assert "accept" in (r.header("vary") or "").lower(), f"Vary: {r.header('vary')}"


def test_auto_format_without_webp_accept(client):
    for headers in ({}, {"Accept": "image/jpeg,image/png"}):
        r, im = client.image(f"/w:200/f:auto/{HD}", headers=headers)
        assert r.content_type == "image/jpeg", f"Accept {headers}: {r.content_type}"
        assert "accept" in (r.header("vary") or "").lower(), f"Vary: {r.header('vary')}"


def test_auto_variants_have_different_etags(client):
    webp = client.get(f"/w:200/f:auto/{HD}", headers={"Accept": "image/webp"})
    jpeg = client.get(f"/w:200/f:auto/{HD}", headers={"Accept": "image/jpeg"})
    assert webp.status == jpeg.status == 200
    assert webp.header("etag") != jpeg.header("etag"), "one ETag for two different bodies"


def test_thumb_rewrite(client):
    r, im = client.image(f"/thumb/200x200/{HD}")
    assert im.size == (200, 200)
    assert r.content_type == "image/jpeg"


def test_thumb_rewrite_matches_fill(client):
    thumb, _ = client.image(f"/thumb/120x80/{HD}")
    fill, _ = client.image(f"/rs:120:80:fill/{HD}")
    assert thumb.body == fill.body, "/thumb/WxH/p should render exactly /rs:W:H:fill/p"


def test_alpha_survives_png_and_webp(client):
    for fmt in ("png", "webp"):
        _, im = client.image(f"/w:400/f:{fmt}/{ALPHA_HD}")
        assert im.size == (400, 225)
        assert im.mode in ("RGBA", "LA", "PA") or "transparency" in im.info, f"{fmt}: alpha lost ({im.mode})"
        lo, hi = im.getchannel("A").getextrema()
        assert lo < 128 < hi, f"{fmt}: alpha channel is flat ({lo}..{hi})"


def test_alpha_to_jpeg(client):
    r, im = client.image(f"/w:400/f:jpeg/{ALPHA_HD}")
    assert r.content_type == "image/jpeg" and im.mode in ("RGB", "L") and im.size == (400, 225)


def test_dash_ends_options(client):
    # a folder named like an option, reached after `-`
    _, im = client.image("/-/w:50/pillow_hopper.jpg")
    assert im.size == (128, 128)
    _, im = client.image("/w:64/-/w:50/pillow_hopper.jpg")
    assert im.size == (64, 64)


def test_subfolder_and_inside_symlink(client):
    _, im = client.image("/w:64/f:png/sub/pillow_hopper.jpg")
    assert im.size == (64, 64)
    _, im = client.image("/w:64/f:png/inside_link.jpg")
    assert im.size == (64, 64)


def test_query_string_ignored(client):
    plain, im = client.image("/w:64/f:png/pillow_hopper.jpg")
    q, im2 = client.image("/w:64/f:png/pillow_hopper.jpg?w=10&f=jpeg")
    assert im2.size == (64, 64) and q.body == plain.body


def test_percent_encoded_source_path(client):
    _, im = client.image("/w:64/f:png/%70illow_hopper.jpg")
    assert im.size == (64, 64)


def test_bench_ops_render(client):
    """The five standard benchmark operations (shared/bench/README.md)."""
    _, im = client.image("/rs:300:300/q:80/f:jpeg/photo_4000x3000.jpg")
    assert im.size == (300, 225) and im.format == "JPEG"
    _, im = client.image(f"/w:800/q:80/f:jpeg/{HD}")
    assert im.size == (800, 450) and im.format == "JPEG"
    _, im = client.image(f"/w:400/f:png/{ALPHA_HD}")
    assert im.size == (400, 225) and im.format == "PNG"
    _, im = client.image(f"/w:800/q:80/f:webp/{HD}")
    assert im.size == (800, 450) and im.format == "WEBP"
    _, im = client.image(f"/w:800/q:80/f:webp/{PHOTO_HD_WEBP}")
    assert im.size == (800, 450) and im.format == "WEBP"
