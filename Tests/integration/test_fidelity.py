"""Issue 3's measured fidelity: resize quality against Pillow LANCZOS (SSIM), premultiplied
alpha (no dark fringes), gravity and autorotate against Pillow-made references."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageOps

from imagemetrics import mean_abs_diff, ssim
from helpers import BENCH, CORPUS, PHOTO_12MP, PHOTO_HD

SSIM_FLOOR = 0.98


def reference(path, size):
    """Pillow's LANCZOS on the full decode (no shrink-on-load), EXIF orientation applied."""
    im = ImageOps.exif_transpose(Image.open(path)).convert("RGB")
    return im.resize(size, Image.LANCZOS)


@pytest.mark.parametrize("name", [PHOTO_12MP, PHOTO_HD])
@pytest.mark.parametrize("spec", ["w:800", "rs:300:300:fit"])
def test_resize_matches_pillow_lanczos(client, name, spec, record_property):
    """Kiln decodes with DCT shrink-on-load (1/2..1/8), then Lanczos-3 for the rest; the result
    must stay structurally identical to a full-size decode + Pillow LANCZOS."""
    r, im = client.image(f"/{spec}/f:png/{name}")
    assert im.width <= 800 and im.height <= 800
    score = ssim(im, reference(BENCH / name, im.size))
    record_property("ssim", score)
    print(f"SSIM {spec} {name}: {score:.4f}")
    assert score >= SSIM_FLOOR, f"SSIM {score:.4f} < {SSIM_FLOOR} for /{spec}/{name}"


def test_ssim_oracle_detects_a_wrong_filter(client):
    """The metric can fail: a nearest-neighbour downscale of the same photo scores lower than kiln's."""
    _, im = client.image(f"/w:800/f:png/{PHOTO_HD}")
    ref = reference(BENCH / PHOTO_HD, im.size)
    crude = Image.open(BENCH / PHOTO_HD).convert("RGB").resize(im.size, Image.NEAREST)
    assert ssim(im, ref) > ssim(crude, ref)
    shifted = ref.transform(ref.size, Image.AFFINE, (1, 0, 3, 0, 1, 0))
    assert ssim(shifted, ref) < SSIM_FLOOR


@pytest.fixture(scope="module")
def white_disc(root):
    """A white opaque disc on fully transparent black (RGBA 0,0,0,0), 400x400."""
    im = Image.new("RGBA", (400, 400), (0, 0, 0, 0))
    ImageDraw.Draw(im).ellipse((60, 60, 340, 340), fill=(255, 255, 255, 255))
    im.save(root / "white_disc.png")
    return "white_disc.png"


@pytest.mark.parametrize("spec", ["rs:97:97", "rs:33:33", "rs:150:120:force"])
def test_no_dark_fringe_when_downscaling_alpha(client, white_disc, spec):
    _, im = client.image(f"/{spec}/f:png/{white_disc}")
    a = np.asarray(im.convert("RGBA"))
    visible = a[..., 3] > 0
    edge = visible & (a[..., 3] < 255)
    assert edge.any(), "expected antialiased edge pixels"
    darkest = a[visible][:, :3].min()
    assert darkest > 250, f"a visible pixel has RGB {darkest} (dark fringe)"


def test_transparent_source_flattens_on_background_for_jpeg(client, white_disc):
    _, im = client.image(f"/rs:100:100/bg:ff0000/f:jpeg/{white_disc}")
    corner, centre = im.getpixel((2, 2)), im.getpixel((50, 50))
    assert corner[0] > 240 and corner[1] < 20 and corner[2] < 20, corner
    assert min(centre) > 240, centre
    _, default = client.image(f"/rs:100:100/f:jpeg/{white_disc}")
    assert min(default.getpixel((2, 2))) > 240  # output.background: white


PORTRAIT = "exif_Portrait_6.jpg"  # stored 1800x1200, EXIF 6: displayed 1200x1800


def test_autorotate_off_keeps_the_stored_orientation(client):
    _, on = client.image(f"/w:300/f:png/{PORTRAIT}")
    _, off = client.image(f"/w:300/ar:0/f:png/{PORTRAIT}")
    assert on.size == (300, 450)
    assert off.size == (300, 200)
    stored = Image.open(CORPUS / PORTRAIT).convert("RGB").resize((300, 200), Image.LANCZOS)
    assert mean_abs_diff(off, stored) < 6


@pytest.mark.parametrize("gravity,box", [("north", (0, 0, 1200, 1200)), ("south", (0, 600, 1200, 1800)),
                                         ("center", (0, 300, 1200, 1500))])
def test_fill_gravity_picks_the_region(client, gravity, box):
    """A 100x100 fill of the 1200x1800 portrait keeps the top, bottom or middle square."""
    _, im = client.image(f"/rs:100:100:fill/g:{gravity}/f:png/{PORTRAIT}")
    assert im.size == (100, 100)
    upright = ImageOps.exif_transpose(Image.open(CORPUS / PORTRAIT)).convert("RGB")
    diffs = {}
    for name, b in (("north", (0, 0, 1200, 1200)), ("south", (0, 600, 1200, 1800)), ("center", (0, 300, 1200, 1500))):
        diffs[name] = mean_abs_diff(im, upright.crop(b).resize((100, 100), Image.LANCZOS))
    assert diffs[gravity] < 5, diffs
    assert diffs[gravity] == min(diffs.values()), diffs


def test_focal_point_moves_the_crop(client):
    _, top = client.image(f"/rs:100:100:fill/g:fp:0.5:0.1/f:png/{PORTRAIT}")
    _, north = client.image(f"/rs:100:100:fill/g:north/f:png/{PORTRAIT}")
    _, bottom = client.image(f"/rs:100:100:fill/g:fp:0.5:0.95/f:png/{PORTRAIT}")
    _, south = client.image(f"/rs:100:100:fill/g:south/f:png/{PORTRAIT}")
    # A focal point near an edge is clamped: the window cannot leave the image.
    assert mean_abs_diff(top, north) < 1 and mean_abs_diff(bottom, south) < 1
    assert mean_abs_diff(top, bottom) > 10


def test_dpr_multiplies_the_size(client):
    _, im = client.image(f"/rs:100:0/dpr:2/f:png/{PHOTO_HD}")
    assert im.size == (200, 113) or im.size == (200, 112)
    r = client.get(f"/rs:100:0/dpr:9/f:png/{PHOTO_HD}")
    assert r.status == 400 and b"dpr" in r.body
