"""Image information and placeholders (issue 26 §5): `f:json`, `f:blurhash`, `f:thumbhash`.

Expected values come from the files themselves, read here with Pillow (sizes, EXIF, frame
counts and durations), never from guesses. The hashes are decoded with the reference Python
packages from PyPI (`blurhash` 1.1.5, `thumbhash` 0.1.2) and compared by mean colour with the
source (as displayed, Pillow's decode): within MEAN_TOLERANCE = 8 of 255 in every channel.
BlurHash's DC term is the mean in linear light, so both sides are averaged in linear light;
ThumbHash's average is its DC in its LPQ space (5-6 bits a channel), against the plain sRGB mean.
Measured (largest channel difference, BlurHash / ThumbHash): 12 MP photo 5.0 / 0.9, rotated
portrait 0.9 / 1.2, coffee PNG 0.9 / 4.1, 1080p WebP 2.7 / 1.8; the shrink-on-load decode
(JPEG DCT 1/8) and the resize to 100 px account for most of it.
"""
from __future__ import annotations

import base64
import io
import json

import blurhash
import numpy as np
import pytest
import thumbhash
from PIL import Image, ImageOps
from PIL.TiffImagePlugin import IFDRational

from helpers import BENCH, CORPUS, PHOTO_12MP, assert_plain_error

MEAN_TOLERANCE = 8.0


def info(client, path: str) -> dict:
    r = client.get(path)
    assert r.status == 200, f"GET {path}: {r.describe()}"
    assert r.content_type == "application/json", r.describe()
    return json.loads(r.body)


def mean_rgb(im: Image.Image) -> np.ndarray:
    return np.asarray(im.convert("RGB")).reshape(-1, 3).astype(np.float64).mean(axis=0)


def source_mean(path) -> np.ndarray:
    return mean_rgb(ImageOps.exif_transpose(Image.open(path)))


def to_linear(srgb: np.ndarray) -> np.ndarray:
    v = srgb / 255.0
    return np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)


def to_srgb(linear: np.ndarray) -> np.ndarray:
    v = np.clip(linear, 0, 1)
    return 255.0 * np.where(v <= 0.0031308, v * 12.92, 1.055 * v ** (1 / 2.4) - 0.055)


def linear_mean(pixels: np.ndarray) -> np.ndarray:
    """The mean colour taken in linear light, shown in sRGB (BlurHash's DC term)."""
    return to_srgb(to_linear(pixels.reshape(-1, 3).astype(np.float64)).mean(axis=0))


def source_linear_mean(path) -> np.ndarray:
    return linear_mean(np.asarray(ImageOps.exif_transpose(Image.open(path)).convert("RGB")))


def blurhash_mean(text: str) -> np.ndarray:
    """The reference decoder's 32x32 picture, averaged in linear light."""
    return linear_mean(np.asarray(blurhash.decode(text, 32, 32), dtype=np.float64))


def thumbhash_mean(text: str) -> np.ndarray:
    """The reference package's decode of the average colour (`thumbHashToAverageRGBA`). Its
    full-picture decoder (`thumb_hash_to_rgba`, 0.1.2) gives wrong colours even for hashes the
    package made itself (coffee: mean 111,60,17 for a 158,85,51 source), so it is not used."""
    r, g, b, _ = thumbhash.thumb_hash_to_average_rgba(base64.b64decode(text))
    return np.array([r, g, b]) * 255.0


@pytest.fixture(scope="module")
def camera_jpeg(root):
    """A JPEG with camera EXIF and a GPS position, written by Pillow (the values read back with
    Pillow are the expectations)."""
    name = "info_camera.jpg"
    exif = Image.Exif()
    exif[0x010F] = "Kiln Camera Co"
    exif[0x0110] = "K-1 Mark II"
    sub = exif.get_ifd(0x8769)
    sub[0x9003] = "2019:06:07 08:09:10"
    sub[0x829A] = IFDRational(1, 250)
    sub[0x829D] = IFDRational(28, 10)
    sub[0x8827] = 400
    sub[0x920A] = IFDRational(50, 1)
    sub[0xA434] = "Kiln 50mm F1.8"
    gps = exif.get_ifd(0x8825)
    gps[1], gps[2] = "S", (IFDRational(33, 1), IFDRational(51, 1), IFDRational(2448, 100))
    gps[3], gps[4] = "E", (IFDRational(151, 1), IFDRational(12, 1), IFDRational(3, 1))
    im = Image.open(CORPUS / "skimage_rocket.jpg").convert("RGB")
    im.save(root / name, quality=90, exif=exif)
    return root / name


# -- f:json: the source ---------------------------------------------------------------------------

def test_json_describes_a_plain_jpeg(client, root):
    doc = info(client, f"/f:json/{PHOTO_12MP}")
    src = doc["source"]
    w, h = Image.open(BENCH / PHOTO_12MP).size
    assert (src["width"], src["height"]) == (w, h) == (src["displayed_width"], src["displayed_height"])
    assert src["format"] == "jpeg" and src["mime_type"] == "image/jpeg"
    assert src["bytes"] == (root / PHOTO_12MP).stat().st_size
    assert src["frames"] == 1 and src["duration_ms"] == 0 and src["alpha"] is False
    assert src["color_profile"] == "sRGB"
    assert src["orientation"] == 1
    assert doc["result"] == {"width": w, "height": h}
    assert "placeholders" not in doc


def test_json_dimensions_after_orientation_and_planned_result(client):
    name = "exif_Portrait_6.jpg"
    im = Image.open(CORPUS / name)
    stored = im.size
    shown = ImageOps.exif_transpose(im).size
    assert stored != shown  # a rotated file
    doc = info(client, f"/rs:300:300:fit/f:json/{name}")
    src = doc["source"]
    assert (src["width"], src["height"]) == stored
    assert (src["displayed_width"], src["displayed_height"]) == shown
    assert src["orientation"] == im.getexif()[0x0112] == 6
    # The result of rs:300:300:fit on the displayed image, planned without rendering.
    scale = 300 / max(shown)
    assert doc["result"] == {"width": round(shown[0] * scale), "height": round(shown[1] * scale)}
    # ar:0 plans from the stored size.
    assert info(client, f"/ar:0/rs:300:300:fit/f:json/{name}")["result"] == {"width": 300, "height": 200}


def test_json_exif_fields_match_pillow(client, camera_jpeg):
    doc = info(client, f"/f:json/{camera_jpeg.name}")
    exif = Image.open(camera_jpeg).getexif()
    sub = exif.get_ifd(0x8769)
    e = doc["exif"]
    assert e["make"] == exif[0x010F] and e["model"] == exif[0x0110]
    assert e["lens_model"] == sub[0xA434]
    assert e["date_taken"] == sub[0x9003].replace(":", "-", 2).replace(" ", "T")
    assert e["exposure_time"] == pytest.approx(float(sub[0x829A]))
    assert e["f_number"] == pytest.approx(float(sub[0x829D]))
    assert e["iso"] == sub[0x8827]
    assert e["focal_length"] == pytest.approx(float(sub[0x920A]))
    assert "gps" not in e, "GPS is off by default"
    assert b"151." not in client.get(f"/f:json/{camera_jpeg.name}").body


def test_json_exif_of_a_corpus_webp(client):
    name = "pillow_flower2.webp"
    exif = Image.open(CORPUS / name).getexif()
    doc = info(client, f"/f:json/{name}")
    # No DateTimeOriginal in this file: IFD0's DateTime is reported.
    assert 0x9003 not in exif.get_ifd(0x8769)
    assert doc["exif"]["date_taken"] == exif[0x0132].replace(":", "-", 2).replace(" ", "T")
    assert "make" not in doc["exif"]
    # Its ICCP chunk is named by the profile's description.
    icc = Image.open(CORPUS / name).info["icc_profile"]
    from PIL import ImageCms
    described = ImageCms.getProfileDescription(ImageCms.ImageCmsProfile(io.BytesIO(icc))).strip()
    assert doc["source"]["color_profile"] == described


def test_json_gps_when_enabled(make_stack, root, camera_jpeg):
    stack = make_stack(workers=1, extra_args=["--set", "output.info_gps=true"])
    doc = info(stack.client(), f"/f:json/{camera_jpeg.name}")
    gps = Image.open(camera_jpeg).getexif().get_ifd(0x8825)
    lat = -(float(gps[2][0]) + float(gps[2][1]) / 60 + float(gps[2][2]) / 3600)
    lon = float(gps[4][0]) + float(gps[4][1]) / 60 + float(gps[4][2]) / 3600
    assert doc["exif"]["gps"]["latitude"] == pytest.approx(lat, abs=1e-6)
    assert doc["exif"]["gps"]["longitude"] == pytest.approx(lon, abs=1e-6)


def test_json_drops_impossible_gps_values_and_dates(make_stack, root):
    """A hostile EXIF block: a longitude of -4367743129.72, minutes of 75, an altitude of 3e9 m
    and a date of 9999-99-99. f:json drops each impossible value (with GPS reporting on) and keeps
    the possible latitude."""
    name = "info_hostile_exif.jpg"
    exif = Image.Exif()
    exif[0x0132] = "2020:01:02 03:04:05"
    exif.get_ifd(0x8769)[0x9003] = "9999:99:99 99:99:99"
    gps = exif.get_ifd(0x8825)
    gps[1], gps[2] = "N", (IFDRational(12, 1), IFDRational(30, 1), IFDRational(0, 1))
    gps[3], gps[4] = "W", (IFDRational(4367743129, 1), IFDRational(43, 1), IFDRational(12, 1))
    gps[5], gps[6] = 0, IFDRational(3_000_000_000, 1)
    Image.open(CORPUS / "skimage_rocket.jpg").convert("RGB").save(root / name, quality=80, exif=exif)
    stack = make_stack(workers=1, extra_args=["--set", "output.info_gps=true"])
    e = info(stack.client(), f"/f:json/{name}")["exif"]
    assert "date_taken" not in e, e
    assert e["gps"]["latitude"] == pytest.approx(12.5), e
    assert "longitude" not in e["gps"] and "altitude" not in e["gps"], e
    # Minutes of 60 or more are no position either.
    gps[3], gps[4] = "E", (IFDRational(10, 1), IFDRational(75, 1), IFDRational(0, 1))
    Image.open(CORPUS / "skimage_rocket.jpg").convert("RGB").save(root / "info_minutes.jpg", quality=80, exif=exif)
    assert "longitude" not in info(stack.client(), "/f:json/info_minutes.jpg")["exif"]["gps"]


def test_json_animated_gif_and_webp(client, root):
    frames = [Image.new("RGB", (40, 30), c) for c in ((255, 0, 0), (0, 255, 0), (0, 0, 255))]
    frames[0].save(root / "info_anim.gif", save_all=True, append_images=frames[1:], duration=[100, 200, 300], loop=0)
    gif = Image.open(root / "info_anim.gif")
    doc = info(client, "/f:json/info_anim.gif")
    assert doc["source"]["frames"] == gif.n_frames == 3
    assert doc["source"]["duration_ms"] == 600
    assert doc["source"]["format"] == "gif"
    name = "imagewebp_random_lossy_anim.webp"
    webp = Image.open(CORPUS / name)
    total = 0
    for i in range(webp.n_frames):
        webp.seek(i)
        webp.load()
        total += webp.info["duration"]
    doc = info(client, f"/f:json/{name}")
    assert doc["source"]["frames"] == webp.n_frames
    assert doc["source"]["duration_ms"] == total


def test_json_alpha(client):
    doc = info(client, "/f:json/alpha_1920x1080.png")
    assert doc["source"]["alpha"] is True and doc["source"]["format"] == "png"


# -- placeholders ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", [PHOTO_12MP, "exif_Portrait_6.jpg", "skimage_coffee.png", "photo_1920x1080.webp"])
def test_hashes_decode_to_the_source_mean(client, root, name):
    r = client.get(f"/f:blurhash/{name}")
    assert r.status == 200 and r.content_type == "text/plain", r.describe()
    bh = r.body.decode()
    expected = source_linear_mean(root / name)
    assert np.abs(blurhash_mean(bh) - expected).max() < MEAN_TOLERANCE, (bh, expected)
    expected = source_mean(root / name)
    r = client.get(f"/f:thumbhash/{name}")
    assert r.status == 200 and r.content_type == "text/plain", r.describe()
    th = r.body.decode()
    assert np.abs(thumbhash_mean(th) - expected).max() < MEAN_TOLERANCE, (th, expected)
    # ThumbHash keeps the displayed aspect ratio (orientation applied).
    w, h = ImageOps.exif_transpose(Image.open(root / name)).size
    assert thumbhash.thumb_hash_to_approximate_aspect_ratio(base64.b64decode(th)) == pytest.approx(w / h, rel=0.25)
    # f:json/ph:1 carries the same hashes.
    ph = info(client, f"/f:json/ph:1/{name}")["placeholders"]
    assert ph["blurhash"] == bh and ph["thumbhash"] == th


def test_blurhash_components(client):
    four_by_three = client.get("/f:blurhash/skimage_coffee.png").body.decode()
    assert len(four_by_three) == 6 + 2 * (4 * 3 - 1)
    r = client.get("/f:blurhash/bh:6:5/skimage_coffee.png")
    assert r.status == 200
    text = r.body.decode()
    assert len(text) == 6 + 2 * (6 * 5 - 1)
    assert blurhash.components(text) == (6, 5)
    assert info(client, "/f:json/ph:1/bh:6:5/skimage_coffee.png")["placeholders"]["blurhash"] == text


def test_dominant_colour_and_lqip(client, root):
    # Two thirds orange, one third blue.
    im = Image.new("RGB", (300, 150), (240, 120, 20))
    im.paste((20, 60, 200), (200, 0, 300, 150))
    im.save(root / "info_two_colours.png")
    ph = info(client, "/f:json/ph:1/info_two_colours.png")["placeholders"]
    assert ph["dominant_color"] == "#f07814"
    prefix = "data:image/webp;base64,"
    assert ph["lqip"].startswith(prefix)
    tiny = Image.open(io.BytesIO(base64.b64decode(ph["lqip"][len(prefix):])))
    assert max(tiny.size) <= 32 and tiny.size == (32, 16)
    assert len(base64.b64decode(ph["lqip"][len(prefix):])) < 1000
    photo = info(client, f"/f:json/ph:1/{PHOTO_12MP}")["placeholders"]
    assert len(base64.b64decode(photo["lqip"][len(prefix):])) < 1000


# -- caching, validation, errors --------------------------------------------------------------

def test_json_etag_and_304(client):
    path = "/f:json/ph:1/skimage_rocket.jpg"
    first = client.get(path)
    assert first.status == 200
    etag = first.header("etag")
    assert etag and etag.startswith('"')
    second = client.get(path)
    assert second.body == first.body and second.header("etag") == etag
    r304 = client.get(path, headers={"If-None-Match": etag})
    assert r304.status == 304 and r304.body == b""
    # Another document kind of the same source is another entry.
    assert client.get("/f:json/skimage_rocket.jpg").header("etag") != etag
    timing = first.header("server-timing")
    assert "header" in timing and "decode" in timing, timing


@pytest.mark.parametrize("name,fmt", [("pngsuite_xc1n0g08.png", "json"), ("pngsuite_xc1n0g08.png", "blurhash"),
                                      ("coffee_truncated_50pct.webp", "json/ph:1"), ("coffee_truncated_50pct.webp", "thumbhash")])
def test_corrupt_source_is_a_422_and_not_cached(client, name, fmt):
    path = f"/f:{fmt}/{name}"
    r = client.get(path)
    assert r.status == 422, r.describe()
    assert_plain_error(r, path)
    again = client.get(path)
    assert again.status == 422 and again.header("etag") is None


@pytest.mark.parametrize("path", ["/f:blurhash/w:100/skimage_rocket.jpg", "/ph:1/skimage_rocket.jpg",
                                  "/f:json/bh:3:3/skimage_rocket.jpg", "/f:blurhash/bh:0:3/skimage_rocket.jpg",
                                  "/f:thumbhash/bh:4:4/skimage_rocket.jpg"])
def test_misused_options_are_400(client, path):
    r = client.get(path)
    assert r.status == 400, r.describe()
    assert_plain_error(r, path)
