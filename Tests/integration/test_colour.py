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
