"""trim:<threshold>[:<colour>[:<equal_h>:<equal_v>]] (issue 26 §2): uniform borders cut on the
full-size decode, before every other step, through nginx on images made here with Pillow."""
from __future__ import annotations

import os
import re

import numpy as np
import pytest
from PIL import Image

from helpers import PHOTO_HD, assert_plain_error

# A product shot: the bench photo at 600x400 pasted on a white 1000x700 canvas at (123, 77).
# Margins left 123, right 277, top 77, bottom 223 (not multiples of 8: no JPEG block edge).
CANVAS = (1000, 700)
BOX = (123, 77, 600, 400)  # x, y, w, h
# JPEG q90 4:2:0 softens the photo's edge into the white by ringing and chroma subsampling; at
# threshold 20 the trimmed box is within this many pixels of the pasted one on each side.
JPEG_PRECISION = 2


@pytest.fixture(scope="module")
def made(root):
    folder = root / "trimming"
    folder.mkdir(exist_ok=True)
    os.chmod(folder, 0o755)
    photo = Image.open(root / PHOTO_HD).convert("RGB").resize(BOX[2:], Image.LANCZOS)
    edges = np.asarray(photo).astype(int)
    # The test's premise: every edge row and column of the photo has a pixel far from white.
    for edge in (edges[0], edges[-1], edges[:, 0], edges[:, -1]):
        assert (255 - edge).max() > 60
    canvas = Image.new("RGB", CANVAS, (255, 255, 255))
    canvas.paste(photo, BOX[:2])
    canvas.save(folder / "product.png")
    canvas.save(folder / "product.jpg", quality=90)
    Image.new("RGB", (200, 100), (255, 255, 255)).save(folder / "blank.jpg", quality=90)
    Image.new("RGB", (64, 48), (10, 200, 30)).save(folder / "green.png")
    # Transparent margins whose colour values are noise (a transparent pixel is border whatever
    # its colour) around a half-opaque logo at (40, 30) of 150x90.
    rng = np.random.default_rng(26)
    rgba = np.zeros((200, 300, 4), np.uint8)
    rgba[..., :3] = rng.integers(0, 256, (200, 300, 3))
    rgba[30:120, 40:190] = (200, 40, 40, 160)
    Image.fromarray(rgba, "RGBA").save(folder / "logo.png")
    # Two frames on white: the first's content at (10, 5) 20x15, the second's further right.
    frames = []
    for x in (10, 30):
        f = Image.new("RGB", (80, 60), (255, 255, 255))
        f.paste((0, 0, 200), (x, 5, x + 20, 20))
        frames.append(f)
    frames[0].save(folder / "anim.gif", save_all=True, append_images=frames[1:], duration=100, loop=0)
    for p in folder.iterdir():
        os.chmod(p, 0o644)
    return "trimming"


def test_product_png_trims_to_the_pasted_box_exactly(client, made, root):
    _, im = client.image(f"/t:20/f:png/{made}/product.png")
    assert im.size == BOX[2:]
    # The pixels are the photo's: the same as Pillow's crop of the canvas.
    source = np.asarray(Image.open(root / made / "product.png").convert("RGB")).astype(int)
    x, y, w, h = BOX
    assert np.abs(np.asarray(im.convert("RGB")).astype(int) - source[y:y + h, x:x + w]).max() == 0


def test_product_jpeg_trims_within_the_stated_precision(client, made):
    _, im = client.image(f"/t:20/f:png/{made}/product.jpg")
    w, h = im.size
    assert abs(w - BOX[2]) <= 2 * JPEG_PRECISION and abs(h - BOX[3]) <= 2 * JPEG_PRECISION, im.size
    assert w >= BOX[2] - JPEG_PRECISION and h >= BOX[3] - JPEG_PRECISION
    # No white column or row is left at the edges.
    a = np.asarray(im.convert("RGB")).astype(int)
    for edge in (a[0], a[-1], a[:, 0], a[:, -1]):
        assert (255 - edge).max() > 20


def test_trim_then_resize_wherever_written(client, made, root):
    first, im = client.image(f"/t:20/w:300/f:png/{made}/product.png")
    assert im.size == (300, 200)
    second, im2 = client.image(f"/w:300/t:20/f:png/{made}/product.png")
    assert second.body == first.body and second.header("etag") == first.header("etag")  # trim first
    # The trimmed photo, resized: close to Pillow's crop + Lanczos resize.
    x, y, w, h = BOX
    canvas = Image.open(root / made / "product.png").convert("RGB")
    ref = np.asarray(canvas.crop((x, y, x + w, y + h)).resize((300, 200), Image.LANCZOS)).astype(int)
    diff = np.abs(np.asarray(im.convert("RGB")).astype(int) - ref)
    assert diff.mean() < 2.0, diff.mean()
    # The JPEG source through a resize: decoded at full size (no shrink-on-load), same box.
    _, jim = client.image(f"/t:20/w:150/f:png/{made}/product.jpg")
    assert jim.size[0] == 150 and abs(jim.size[1] - 100) <= 1


def test_image_without_border_is_unchanged(client, made):
    plain, im = client.image(f"/f:png/{PHOTO_HD}")
    trimmed, tim = client.image(f"/t:10/f:png/{PHOTO_HD}")
    assert tim.size == im.size == (1920, 1080)
    assert trimmed.body == plain.body


@pytest.mark.parametrize("name,size", [("blank.jpg", (200, 100)), ("green.png", (64, 48))])
def test_uniform_image_is_answered_unchanged(client, made, name, size):
    _, im = client.image(f"/t:10/f:png/{made}/{name}")
    assert im.size == size
    _, im = client.image(f"/t:0/w:20/f:png/{made}/{name}")
    assert im.size[0] == 20


def test_transparent_borders_are_cut(client, made):
    _, im = client.image(f"/t:0/f:png/{made}/logo.png")
    assert im.size == (150, 90) and im.mode == "RGBA"
    a = np.asarray(im)
    assert (a[..., 3] == 160).all() and (a[..., 0] == 200).all()
    # An explicit colour: transparent pixels are still border.
    _, im = client.image(f"/t:0:ffffff/f:png/{made}/logo.png")
    assert im.size == (150, 90)


@pytest.mark.parametrize("flags,size", [
    ("1:0", (1000 - 2 * 123, 400)),
    ("0:1", (600, 700 - 2 * 77)),
    ("1:1", (1000 - 2 * 123, 700 - 2 * 77)),
])
def test_equal_cuts_keep_the_smaller_margin(client, made, flags, size):
    _, im = client.image(f"/t:20::{flags}/f:png/{made}/product.png")
    assert im.size == size
    a = np.asarray(im.convert("RGB")).astype(int)

    def white(region) -> bool:
        return bool((255 - region).max() == 0)

    eh, ev = (int(v) for v in flags.split(":"))
    # Left cut 123 on both sides: the photo fills x 0..599, white after it; top cut 77 likewise.
    if eh:
        assert white(a[:, 600:]) and not white(a[:, 599])
    if ev:
        assert white(a[400:, :]) and not white(a[399, :])
    assert not white(a[:, 0]) and not white(a[0, :])


def test_explicit_colour(client, made):
    _, im = client.image(f"/t:20:ffffff/f:png/{made}/product.png")
    assert im.size == BOX[2:]
    _, im = client.image(f"/t:20:000000/f:png/{made}/product.png")
    assert im.size == CANVAS  # nothing black at the edges


def test_animation_frames_are_cut_to_the_first_frames_box(client, made):
    r, im = client.image(f"/t:0/f:webp/{made}/anim.gif")
    assert im.size == (20, 15)
    assert getattr(im, "n_frames", 1) >= 1


@pytest.mark.parametrize("spec", ["t:256", "t:-1", "t:x", "t:10:fff", "t:10::2", "t:1/t:2", "trim"])
def test_bad_trim_is_a_400(client, made, spec):
    r = client.get(f"/{spec}/{made}/product.png")
    assert r.status == 400, r.describe()
    assert_plain_error(r)


def test_trim_shows_in_server_timing(client, made):
    r, _ = client.image(f"/t:5/w:64/q:71/f:jpeg/{made}/product.png")
    timing = r.header("server-timing") or ""
    assert re.search(r"\bprocess;dur=", timing), timing
