"""Processors through nginx on real images: each request is checked for its effect on the
decoded pixels (PNG output where alpha or exact pixels matter), plus 400s for bad arguments."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from helpers import assert_plain_error

COFFEE = "skimage_coffee.png"  # 600x400 RGB PNG: lossless in, lossless out
HOPPER = "pillow_hopper.jpg"   # 128x128 JPEG
PHOTO = "photo_1920x1080.jpg"


def rgb(im: Image.Image) -> np.ndarray:
    return np.asarray(im.convert("RGB"), dtype=np.int32)


def rgba(im: Image.Image) -> np.ndarray:
    assert im.mode == "RGBA", f"expected an image with alpha, got {im.mode}"
    return np.asarray(im, dtype=np.int32)


def edge_energy(a: np.ndarray) -> float:
    """Mean absolute difference between horizontal and vertical neighbours."""
    a = a[..., :3].astype(np.float64)
    return float(np.abs(np.diff(a, axis=0)).mean() + np.abs(np.diff(a, axis=1)).mean())


def chroma(a: np.ndarray) -> float:
    return float((a[..., :3].max(axis=2) - a[..., :3].min(axis=2)).mean())


@pytest.fixture(scope="module")
def coffee(stack) -> np.ndarray:
    """The source pixels as kiln decodes them (PNG to PNG, no processing)."""
    _, im = stack.client().image(f"/f:png/{COFFEE}")
    return rgb(im)


# --- Geometry -----------------------------------------------------------------------------

@pytest.mark.parametrize("spec,rows,cols", [
    ("crop:100:50:north", slice(0, 50), slice(250, 350)),
    ("crop:100:50:sw", slice(350, 400), slice(0, 100)),
    ("crop:100:50:east", slice(175, 225), slice(500, 600)),
    ("crop:100:100:fp:0.25:0.75", slice(250, 350), slice(100, 200)),
    ("crop:200:200:50:80", slice(80, 280), slice(50, 250)),
    ("crop:200:200:500:300", slice(300, 400), slice(500, 600)),  # cut at the edges
    ("crop:5000:5000", slice(0, 400), slice(0, 600)),             # clamped to the image
])
def test_crop_takes_the_window(client, coffee, spec, rows, cols):
    _, im = client.image(f"/{spec}/f:png/{COFFEE}")
    assert np.array_equal(rgb(im), coffee[rows, cols]), f"{spec}: size {im.size}"


def test_crop_takes_request_gravity(client, coffee):
    _, im = client.image(f"/g:south/crop:100:50/f:png/{COFFEE}")
    assert np.array_equal(rgb(im), coffee[350:400, 250:350])


@pytest.mark.parametrize("spec,transform", [
    ("rot:90", lambda a: np.rot90(a, k=-1)),
    ("rotate:180", lambda a: np.rot90(a, k=2)),
    ("rot:270", lambda a: np.rot90(a, k=1)),
    ("flip:h", lambda a: a[:, ::-1]),
    ("flip:v", lambda a: a[::-1, :]),
    ("flip:hv", lambda a: a[::-1, ::-1]),
])
def test_rotate_and_flip_move_pixels(client, coffee, spec, transform):
    _, im = client.image(f"/{spec}/f:png/{COFFEE}")
    assert np.array_equal(rgb(im), transform(coffee)), spec


def test_pad_transparent(client, coffee):
    _, im = client.image(f"/pad:10:20:30:40/f:png/{COFFEE}")
    a = rgba(im)
    assert im.size == (600 + 60, 400 + 40)
    assert (a[:10, :, 3] == 0).all() and (a[-30:, :, 3] == 0).all()
    assert (a[:, :40, 3] == 0).all() and (a[:, -20:, 3] == 0).all()
    assert (a[10:410, 40:640, 3] == 255).all()
    assert np.array_equal(a[10:410, 40:640, :3], coffee)


def test_pad_with_background(client, coffee):
    _, im = client.image(f"/pad:16/bg:ff0000/f:png/{COFFEE}")
    assert im.size == (632, 432) and im.mode == "RGB"
    a = rgb(im)
    assert (a[:16, :] == [255, 0, 0]).all() and (a[:, -16:] == [255, 0, 0]).all()
    assert np.array_equal(a[16:416, 16:616], coffee)


def test_pad_over_the_output_limit(client):
    r = client.get(f"/pad:8000/f:png/{HOPPER}")
    assert r.status == 413, r.describe()


# --- Smart gravity --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def half_textured(root) -> str:
    """A 600x300 PNG: flat grey on the left, noise on the right."""
    rng = np.random.default_rng(5)
    a = np.full((300, 600, 3), 128, dtype=np.uint8)
    a[:, 300:] = rng.integers(0, 256, size=(300, 300, 3), dtype=np.uint8)
    name = "test_half_textured.png"
    Image.fromarray(a).save(root / name)
    return name


def flat_columns(a: np.ndarray) -> int:
    return int((a == 128).all(axis=(0, 2)).sum())


def test_smart_crop_picks_the_detailed_half(client, half_textured):
    _, im = client.image(f"/crop:300:300:smart/f:png/{half_textured}")
    a = rgb(im)
    assert im.size == (300, 300)
    assert flat_columns(a) <= 10, f"{flat_columns(a)} flat columns"
    _, centre = client.image(f"/crop:300:300/f:png/{half_textured}")
    assert flat_columns(rgb(centre)) >= 140


def test_smart_fill_picks_the_detailed_half(client, half_textured):
    _, im = client.image(f"/rs:150:150:fill/g:smart/f:png/{half_textured}")
    _, centre = client.image(f"/rs:150:150:fill/f:png/{half_textured}")
    assert im.size == (150, 150)
    assert edge_energy(rgb(im)) > 1.5 * edge_energy(rgb(centre))


def test_smart_fill_on_a_photo(client):
    _, im = client.image(f"/rs:300:300:fill/g:sm/f:jpeg/{PHOTO}")
    assert im.size == (300, 300)


# --- Shapes ---------------------------------------------------------------------------------

def test_circle_corners_transparent_edge_antialiased(client):
    _, im = client.image(f"/rs:200:200:fill/circle/f:png/{COFFEE}")
    a = rgba(im)
    assert im.size == (200, 200)
    for y, x in [(0, 0), (0, 199), (199, 0), (199, 199), (10, 10)]:
        assert a[y, x, 3] == 0, f"corner {x},{y}"
    assert (a[80:120, 80:120, 3] == 255).all()
    partial = ((a[..., 3] > 0) & (a[..., 3] < 255)).sum()
    assert 200 < partial < 1500, f"{partial} pixels of partial alpha on the edge"


def test_circle_crops_the_centred_square(client):
    _, im = client.image(f"/circle/f:webp/{COFFEE}")
    assert im.size == (400, 400)
    assert rgba(im)[0, 0, 3] == 0


def test_circle_background(client):
    _, im = client.image(f"/rs:200:200:fill/circle:0000ff/f:png/{COFFEE}")
    a = rgb(im)
    assert im.mode == "RGB"
    assert (a[0, 0] == [0, 0, 255]).all() and (a[199, 199] == [0, 0, 255]).all()


def test_circle_on_jpeg_is_flattened_on_bg(client):
    _, im = client.image(f"/rs:200:200:fill/circle/bg:00ff00/f:jpeg/{COFFEE}")
    corner = rgb(im)[:8, :8].mean(axis=(0, 1))
    assert corner[1] > 230 and corner[0] < 25 and corner[2] < 25, corner


def test_avatar_preset(client):
    _, im = client.image(f"/pr:avatar/{COFFEE}")
    assert im.size == (96, 96) and rgba(im)[0, 0, 3] == 0


@pytest.mark.parametrize("fmt", ["png", "webp"])
def test_rounded_corners(client, fmt):
    _, im = client.image(f"/rs:300:200:fill/rc:24/f:{fmt}/{COFFEE}")
    a = rgba(im)
    assert im.size == (300, 200)
    for y, x in [(0, 0), (0, 299), (199, 0), (199, 299), (3, 3)]:
        assert a[y, x, 3] == 0, f"corner {x},{y}"
    for y, x in [(0, 150), (100, 0), (100, 299), (199, 150), (100, 150)]:
        assert a[y, x, 3] == 255, f"edge {x},{y}"
    partial = ((a[..., 3] > 0) & (a[..., 3] < 255)).sum()
    assert partial >= 40


def test_rounded_radius_scales_with_dpr(client):
    _, one = client.image(f"/rs:100:100:fill/rc:10/f:png/{COFFEE}")
    _, two = client.image(f"/rs:100:100:fill/rc:10/dpr:2/f:png/{COFFEE}")
    assert two.size == (200, 200)
    # The transparent corner of the 2x image covers 4x the pixels, not 16x.
    t1 = (rgba(one)[..., 3] == 0).sum()
    t2 = (rgba(two)[..., 3] == 0).sum()
    assert 3 * t1 < t2 < 5 * t1, (t1, t2)


# --- Filters --------------------------------------------------------------------------------

def test_blur_lowers_edge_energy_keeps_mean(client, coffee):
    _, im = client.image(f"/bl:4/f:png/{COFFEE}")
    a = rgb(im)
    assert edge_energy(a) < 0.5 * edge_energy(coffee)
    assert abs(a.mean() - coffee.mean()) < 2


def test_blur_of_alpha_keeps_edges_bright(client):
    # A white opaque disc on transparent black, blurred: no visible pixel darker than 250.
    _, im = client.image(f"/rs:200:200:fill/br:100/circle/bl:3/f:png/{COFFEE}")
    a = rgba(im)
    visible = a[..., 3] > 0
    assert ((a[..., 3] > 0) & (a[..., 3] < 255)).sum() > 500
    assert (a[visible][:, :3] >= 250).all()


def test_sharpen_raises_edge_energy(client, coffee):
    _, im = client.image(f"/sh:1.5/f:png/{COFFEE}")
    assert edge_energy(rgb(im)) > 1.3 * edge_energy(coffee)


@pytest.mark.parametrize("spec", ["grayscale", "gs", "sa:-100"])
def test_grayscale(client, coffee, spec):
    _, im = client.image(f"/{spec}/f:png/{COFFEE}")
    a = rgb(im)
    assert (a[..., 0] == a[..., 1]).all() and (a[..., 1] == a[..., 2]).all()
    luma = coffee @ np.array([0.2126, 0.7152, 0.0722])
    assert np.abs(a[..., 0] - luma).max() <= 1


def test_sepia_is_warm(client):
    _, im = client.image(f"/sepia/f:png/{COFFEE}")
    a = rgb(im)
    assert (a[..., 0] >= a[..., 1]).all() and (a[..., 1] >= a[..., 2]).all()
    assert a[..., 0].mean() > a[..., 2].mean() + 30


def test_tint(client):
    _, im = client.image(f"/tint:3366cc/f:png/{COFFEE}")
    a = rgb(im)
    assert (a[..., 2] >= a[..., 1]).all() and (a[..., 1] >= a[..., 0]).all()
    ratio = a[..., 2].sum() / a[..., 0].sum()
    assert 3.7 < ratio < 4.3, ratio  # cc / 33 = 4


@pytest.mark.parametrize("spec,sign", [("br:30", 1), ("brightness:-30", -1)])
def test_brightness(client, coffee, spec, sign):
    _, im = client.image(f"/{spec}/f:png/{COFFEE}")
    assert sign * (rgb(im).mean() - coffee.mean()) > 40


@pytest.mark.parametrize("spec,more", [("co:50", True), ("contrast:-50", False)])
def test_contrast(client, coffee, spec, more):
    _, im = client.image(f"/{spec}/f:png/{COFFEE}")
    ratio = rgb(im).std() / coffee.std()
    assert (ratio > 1.4) if more else (ratio < 0.6), ratio


def test_saturation_up(client, coffee):
    _, im = client.image(f"/sa:60/f:png/{COFFEE}")
    assert chroma(rgb(im)) > 1.4 * chroma(coffee)


def test_identity_filters_change_nothing(client, coffee):
    _, im = client.image(f"/br:0/co:0/sa:0/f:png/{COFFEE}")
    assert np.array_equal(rgb(im), coffee)


def test_chain_runs_in_url_order(client):
    # Crop then rotate: 100x50 becomes 50x100; rotate then crop stays 100x50.
    _, a = client.image(f"/crop:100:50/rot:90/f:png/{COFFEE}")
    _, b = client.image(f"/rot:90/crop:100:50/f:png/{COFFEE}")
    assert a.size == (50, 100) and b.size == (100, 50)


def test_posterize_when_registered(client, coffee):
    r = client.get(f"/posterize:4/f:png/{COFFEE}")
    if r.status == 400 and b"posterize" in r.body:
        pytest.skip("this build does not register the example processor posterize")
    assert r.status == 200, r.describe()
    values = np.unique(rgb(r.image()))
    assert set(values.tolist()) <= {0, 85, 170, 255}


def test_sleep_is_an_unknown_option_without_the_debug_setting(client):
    """`sleep:<ms>` exists only with debug.sleep_processor (the tests' slow stage); the shared
    stack runs without it, as production does: the usual 400 for an unknown option."""
    for spec in ("sleep:10", "sleep:60000", "sleep:0"):
        r = client.get(f"/{spec}/f:png/{COFFEE}")
        assert r.status == 400, f"/{spec}: {r.describe()}"
        assert_plain_error(r, spec)
        assert spec.encode() in r.body, f"/{spec}: the reason should name it: {r.body!r}"


# --- Bad arguments ------------------------------------------------------------------------

@pytest.mark.parametrize("spec,names", [
    ("rc:-1", "rc:-1"), ("rounded:0", "rounded:0"), ("bl:1000", "bl:1000"), ("blur:0", "blur:0"),
    ("sh:-2", "sh:-2"), ("g:up", "g:up"), ("crop:10:10:up", "crop:10:10:up"), ("crop:0:10", "crop:0:10"),
    ("crop:10:10:5000:5000", "crop"), ("br:101", "br:101"), ("co:-101", "co:-101"), ("sa:x", "sa:x"),
    ("rot:45", "rot:45"), ("flip:x", "flip:x"), ("tint:xyz", "tint:xyz"), ("circle:red", "circle:red"),
    ("pad:1:2:3", "pad:1:2:3"), ("pad:-1", "pad:-1"), ("sepia:1", "sepia:1"),
])
def test_bad_arguments_400_naming_the_option(client, spec, names):
    r = client.get(f"/{spec}/f:png/{COFFEE}")
    assert r.status == 400, f"/{spec}: {r.describe()}"
    assert names.encode() in r.body, f"/{spec}: the reason should name {names!r}: {r.body!r}"
