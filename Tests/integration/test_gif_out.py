"""GIF out (issue 38): `f:gif` through nginx, still and animated, read back by Pillow; never
chosen by `f:auto` or for a GIF source without `f:`."""
from __future__ import annotations

import io

import numpy as np
from PIL import Image

from helpers import ALPHA_HD, PHOTO_HD
from imagemetrics import ssim


def test_photo_to_gif_keeps_the_picture(client):
    r, gif = client.image(f"/w:400/f:gif/{PHOTO_HD}")
    assert r.content_type == "image/gif" and gif.format == "GIF" and gif.size == (400, 225)
    assert gif.mode == "P" and len(gif.getcolors(256) or []) > 100
    _, ref = client.image(f"/w:400/f:png/{PHOTO_HD}")
    score = ssim(np.asarray(ref.convert("RGB")), np.asarray(gif.convert("RGB")))
    assert score > 0.8, f"SSIM of the dithered GIF against the PNG: {score:.3f}"


def test_alpha_becomes_the_transparent_index(client):
    r, gif = client.image(f"/w:300/f:gif/{ALPHA_HD}")
    rgba = np.asarray(gif.convert("RGBA"))
    _, ref = client.image(f"/w:300/f:png/{ALPHA_HD}")
    alpha = np.asarray(ref.convert("RGBA"))[..., 3]
    assert "transparency" in gif.info
    # Transparent where the source's alpha is below half, opaque elsewhere.
    assert ((rgba[..., 3] == 0) == (alpha < 128)).mean() > 0.99


def test_auto_never_picks_gif(client):
    r = client.get(f"/w:100/f:auto/{PHOTO_HD}", headers={"Accept": "image/gif"})
    assert r.status == 200 and r.content_type != "image/gif", r.describe()
    r = client.get(f"/w:100/f:auto/{PHOTO_HD}", headers={"Accept": "image/gif,image/webp"})
    assert r.content_type == "image/webp", r.describe()


def test_animated_webp_to_gif(client):
    r = client.get("/w:120/f:gif/imagewebp_random_lossy_anim.webp")   # a 99 px wide source
    assert r.status == 200 and r.content_type == "image/gif", r.describe()
    im = Image.open(io.BytesIO(r.body))
    source = Image.open(io.BytesIO(client.get("/imagewebp_random_lossy_anim.webp").body))
    assert im.n_frames == source.n_frames > 1
    assert im.size == source.size   # w:120 does not enlarge the 99 px source


def test_ico_out(client):
    """Issue 38: `f:ico` writes one PNG entry Pillow reads back; over 256 px is a 413."""
    r, ico = client.image(f"/rs:64:64:fill/f:ico/{ALPHA_HD}")
    assert r.content_type == "image/vnd.microsoft.icon" and ico.format == "ICO" and ico.size == (64, 64)
    assert ico.convert("RGBA").getextrema()[3][0] == 0   # the source's transparency is kept
    big = client.get(f"/w:300/f:ico/{PHOTO_HD}")
    assert big.status == 413, big.describe()
