"""Colour: sources with an ICC profile come out converted to sRGB, without a profile.

References are made here with Pillow's ImageCms (lcms2) from the same source bytes:
profileToProfile(source, embedded profile, sRGB, perceptual). Outputs are PNG so that no lossy
re-encode blurs the comparison.
"""
from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image, ImageCms

from helpers import CORPUS

SRGB = ImageCms.createProfile("sRGB")


def rgb(im: Image.Image) -> np.ndarray:
    return np.asarray(im.convert("RGB")).astype(np.int32)


def mad(a: np.ndarray, b: np.ndarray) -> float:
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.abs(a - b).mean())


def managed(path) -> np.ndarray:
    """The source converted to sRGB through its embedded profile by Pillow/lcms2."""
    im = Image.open(path)
    profile = ImageCms.ImageCmsProfile(io.BytesIO(im.info["icc_profile"]))
    return rgb(ImageCms.profileToProfile(im, profile, SRGB, outputMode="RGB", renderingIntent=0))


@pytest.mark.parametrize("name", ["skimage_rocket.jpg", "coffee_cmyk_swop_icc.jpg"])
def test_profiled_source_matches_imagecms(client, name):
    _, im = client.image(f"/f:png/{name}")
    reference = managed(CORPUS / name)
    unmanaged = rgb(Image.open(CORPUS / name))
    # Measured: 0.0 for both (the same lcms2 transform on the same decoded pixels); ignoring the
    # profile costs 5.7 (Adobe RGB rocket) and 23.7 (CMYK coffee).
    assert mad(rgb(im), reference) < 1.0
    assert mad(unmanaged, reference) > 3.0


def test_managed_cmyk_round_trip_is_close_to_the_original(client, root):
    """coffee.png converted to CMYK through the CMYK profile by Pillow/lcms2, saved as an Adobe
    (inverted) CMYK JPEG with the profile: Kiln brings it back close to coffee.png (measured 4.3;
    the naive formula gives 15.6)."""
    icc = Image.open(CORPUS / "coffee_cmyk_swop_icc.jpg").info["icc_profile"]
    cmyk_profile = ImageCms.ImageCmsProfile(io.BytesIO(icc))
    original = Image.open(CORPUS / "skimage_coffee.png").convert("RGB")
    cmyk = ImageCms.profileToProfile(original, SRGB, cmyk_profile, outputMode="CMYK", renderingIntent=0)
    cmyk.save(root / "colour_coffee_managed_cmyk.jpg", quality=95, icc_profile=icc)
    _, im = client.image("/f:png/colour_coffee_managed_cmyk.jpg")
    assert mad(rgb(im), rgb(original)) < 6.0
    assert mad(rgb(Image.open(root / "colour_coffee_managed_cmyk.jpg")), rgb(original)) > 10.0


def test_srgb_profile_is_left_alone(client):
    name = "ljt_vgl_5674_0098.png"  # sRGB2014 profile: skipped, pixels unchanged
    _, im = client.image(f"/f:png/{name}")
    assert mad(rgb(im), rgb(Image.open(CORPUS / name))) == 0.0


@pytest.mark.parametrize("fmt", ["jpeg", "png", "webp"])
def test_outputs_carry_no_profile(client, fmt):
    _, im = client.image(f"/w:200/f:{fmt}/skimage_rocket.jpg")
    assert im.info.get("icc_profile") in (None, b""), "output should be untagged sRGB"


@pytest.fixture(scope="module")
def p3_photo(root, tmp_path_factory):
    """A JPEG tagged Display P3 (the profile made by p3_profile.c with lcms2): four flat quadrants,
    saturated red, green and blue that sRGB cannot hold, and a grey."""
    import subprocess
    from pathlib import Path
    work = tmp_path_factory.mktemp("p3")
    helper, profile = work / "p3_profile", work / "p3.icc"
    subprocess.run(["cc", "-O1", "-o", str(helper), str(Path(__file__).parent / "p3_profile.c"), "-llcms2"],
                   check=True, capture_output=True, timeout=120)
    subprocess.run([str(helper), str(profile)], check=True, capture_output=True, timeout=30)
    icc = profile.read_bytes()
    im = Image.new("RGB", (64, 64))
    for (x, y), colour in {(0, 0): (235, 20, 25), (32, 0): (20, 235, 40), (0, 32): (25, 30, 230), (32, 32): (128, 128, 128)}.items():
        im.paste(colour, (x, y, x + 32, y + 32))
    im.save(root / "colour_p3.jpg", quality=98, subsampling=0, icc_profile=icc)
    return icc, rgb(Image.open(root / "colour_p3.jpg"))


QUADRANTS = [(16, 16), (48, 16), (16, 48), (48, 48)]


@pytest.mark.parametrize("fmt", ["jpeg", "png", "webp", "avif"])
def test_icc_keep_writes_the_p3_profile_and_its_values(client, p3_photo, fmt):
    """Issue 38: `icc:keep` keeps a Display P3 photo's values and profile (wide-gamut screens show
    its colours); without it the output is converted to sRGB and untagged."""
    icc, source = p3_photo
    r, kept = client.image(f"/icc:keep/q:95/f:{fmt}/colour_p3.jpg")
    if fmt == "avif":
        from test_avif_heic import decode_avif
        import tempfile
        from pathlib import Path
        kept_pixels = rgb(decode_avif(r.body, Path(tempfile.mkdtemp()), "p3"))
    else:
        assert kept.info.get("icc_profile") == icc, f"{fmt}: the P3 profile was not written"
        kept_pixels = rgb(kept)
    assert icc[48:] in r.body or fmt != "avif", "the AVIF does not carry the profile"
    for x, y in QUADRANTS:
        assert np.abs(kept_pixels[y, x] - source[y, x]).max() <= 8, f"{fmt} at {x},{y}: {kept_pixels[y, x]} vs {source[y, x]}"
    r, converted = client.image(f"/q:95/f:{fmt}/colour_p3.jpg")
    assert not (fmt != "avif" and converted.info.get("icc_profile")), "the default output is untagged sRGB"
    if fmt != "avif":
        # P3's red is beyond sRGB's: converted, its green and blue fall to 0 and the grey stays.
        assert np.abs(rgb(converted)[16, 16] - source[16, 16]).max() > 8
        assert np.abs(rgb(converted)[48, 48] - source[48, 48]).max() <= 8


def test_icc_keep_converts_for_gif(client, p3_photo):
    """GIF cannot carry a profile: with icc:keep it is converted to sRGB like the default."""
    _, source = p3_photo
    _, kept = client.image("/icc:keep/f:gif/colour_p3.jpg")
    _, default = client.image("/f:gif/colour_p3.jpg")
    assert np.abs(rgb(kept)[16, 16] - rgb(default)[16, 16]).max() <= 2
    assert np.abs(rgb(kept)[16, 16] - source[16, 16]).max() > 8
