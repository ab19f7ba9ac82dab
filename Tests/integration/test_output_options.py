"""Output options: progressive JPEG / interlaced PNG, lossless WebP, quality, presets."""
from __future__ import annotations

import os
import struct

import pytest

from helpers import PHOTO_HD, assert_plain_error


def jpeg_sof(body: bytes) -> int:
    """The first SOFn marker's n (0 baseline, 2 progressive)."""
    i = 2
    while i + 4 <= len(body):
        assert body[i] == 0xFF, f"not a marker at {i}"
        marker = body[i + 1]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            return marker - 0xC0
        i += 2 + struct.unpack(">H", body[i + 2:i + 4])[0]
    raise AssertionError("no SOF marker")


def test_progressive_jpeg(client):
    r, _ = client.image(f"/w:300/pg:1/f:jpeg/{PHOTO_HD}")
    assert jpeg_sof(r.body) == 2
    r, _ = client.image(f"/w:300/f:jpeg/{PHOTO_HD}")
    assert jpeg_sof(r.body) == 0


def luma_sampling(body: bytes) -> int:
    """The luma component's sampling factors in the SOF marker (0x22: 4:2:0, 0x21: 4:2:2, 0x11: 4:4:4)."""
    i = 2
    while i + 4 <= len(body):
        marker = body[i + 1]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            assert body[i + 9] == 3, "three components"
            return body[i + 11]
        i += 2 + struct.unpack(">H", body[i + 2:i + 4])[0]
    raise AssertionError("no SOF marker")


def test_chroma_subsampling(client, make_stack):
    """`ss:` for JPEG (default 4:2:0), and `output.jpeg_subsampling` as the default; each its own
    cache entry and bytes; a bad value is a one-line 400."""
    sizes = {}
    for spelling, factors in (("", 0x22), ("/ss:420", 0x22), ("/ss:422", 0x21), ("/ss:4:4:4", 0x11)):
        r, img = client.image(f"/w:400{spelling}/f:jpeg/{PHOTO_HD}")
        assert luma_sampling(r.body) == factors, spelling
        assert img.size[0] == 400
        sizes[spelling] = len(r.body)
    assert sizes["/ss:4:4:4"] > sizes["/ss:420"] and sizes[""] == sizes["/ss:420"]
    # Other formats ignore it.
    r, img = client.image(f"/w:200/ss:444/f:png/{PHOTO_HD}")
    assert img.format == "PNG"
    bad = client.get(f"/w:200/ss:411/f:jpeg/{PHOTO_HD}")
    assert bad.status == 400 and "ss:411" in bad.body.decode(), bad.body
    assert_plain_error(bad, "ss:411")
    # The setting changes the default; the URL still wins.
    s = make_stack(extra_args=["--set", "output.jpeg_subsampling=4:4:4"])
    c = s.client()
    r, _ = c.image(f"/w:400/f:jpeg/{PHOTO_HD}")
    assert luma_sampling(r.body) == 0x11
    r, _ = c.image(f"/w:400/ss:420/f:jpeg/{PHOTO_HD}")
    assert luma_sampling(r.body) == 0x22


def test_interlaced_png(client):
    r, im = client.image(f"/w:120/progressive:1/f:png/{PHOTO_HD}")
    assert r.body[12:16] == b"IHDR" and r.body[28] == 1  # Adam7
    assert im.size[0] == 120
    r, _ = client.image(f"/w:120/f:png/{PHOTO_HD}")
    assert r.body[28] == 0


def test_lossless_webp(client):
    r, im = client.image(f"/w:200/ll:1/f:webp/{PHOTO_HD}")
    assert b"VP8L" in r.body[:64]
    r2, _ = client.image(f"/w:200/f:webp/{PHOTO_HD}")
    assert b"VP8 " in r2.body[:64] and b"VP8L" not in r2.body[:64]


def test_presets_expand(client):
    _, im = client.image(f"/pr:thumb/{PHOTO_HD}")
    assert im.size == (50, 50) and im.format == "PNG"
    r = client.get(f"/pr:nope/{PHOTO_HD}")
    assert r.status == 400
    assert_plain_error(r)
    assert b"nope" in r.body


def test_too_many_operations(client):
    r = client.get("/" + "/".join(["gs"] * 17) + f"/{PHOTO_HD}")
    assert r.status == 400 and b"operations" in r.body


@pytest.mark.parametrize("fmt", ["jpeg", "webp", "png"])
def test_strip_0_keeps_exif_with_orientation_reset(client, fmt):
    """exif_Portrait_6.jpg has EXIF (orientation 6). Default: stripped; strip:0: kept, and the
    orientation says 1 because the pixels are already upright."""
    _, kept = client.image(f"/w:100/strip:0/f:{fmt}/exif_Portrait_6.jpg")
    exif = kept.getexif()
    assert len(exif) > 0, "EXIF was dropped"
    assert exif.get(0x0112) == 1
    assert kept.size == (100, 150)
    _, stripped = client.image(f"/w:100/f:{fmt}/exif_Portrait_6.jpg")
    assert len(stripped.getexif()) == 0


def test_format_quality_follows_the_negotiated_format(client):
    """`fq:` (format_quality): the quality of the format `f:auto` picks. Each answer is the bytes
    of the native URL with that format's `q:`; `q:` wins over `fq:`."""
    uri = f"/w:320/fq:avif:40:webp:55:jpeg:70/f:auto/{PHOTO_HD}"
    for accept, fmt, q in [("image/avif,image/webp,*/*", "avif", 40), ("image/webp,*/*", "webp", 55), ("*/*", "jpeg", 70)]:
        r = client.get(uri, {"Accept": accept})
        twin = client.get(f"/w:320/q:{q}/f:{fmt}/{PHOTO_HD}")
        assert r.status == 200 and r.content_type == f"image/{fmt}", (accept, r.describe())
        assert r.body == twin.body, f"{accept}: fq did not give q:{q}"
    r = client.get(f"/w:320/q:90/fq:webp:10/f:webp/{PHOTO_HD}")
    assert r.body == client.get(f"/w:320/q:90/f:webp/{PHOTO_HD}").body
    bad = client.get(f"/fq:png:50/{PHOTO_HD}")
    assert bad.status == 400 and b"fq:png:50" in bad.body
    assert_plain_error(bad)


def _gps_photo(path) -> None:
    """A JPEG whose EXIF holds a copyright, an artist and a GPS position, and whose XMP names it too."""
    from PIL import Image
    im = Image.linear_gradient("L").resize((300, 200)).convert("RGB")
    exif = Image.Exif()
    exif[0x8298] = "(c) Kiln Photo Ltd"
    exif[0x013B] = "A. Photographer"
    exif[0x8825] = {1: "N", 2: (52.0, 31.0, 7.0), 3: "E", 4: (13.0, 24.0, 37.0)}
    xmp = b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">' \
          b'<rdf:Description xmlns:exif="http://ns.adobe.com/exif/1.0/" exif:GPSLatitude="52,31.1N"/></rdf:RDF></x:xmpmeta>'
    im.save(path, exif=exif.tobytes(), xmp=xmp, quality=85)


@pytest.mark.parametrize("fmt", ["jpeg", "webp", "png", "avif"])
def test_strip_0_keeps_copyright_but_not_the_gps_position(client, stack, fmt):
    """Issue 36: `strip:0` (any unsigned client may write it) keeps the EXIF but not where the photo
    was taken: the GPS IFD and an XMP packet naming GPS are gone (output.info_gps is off by
    default); copyright and artist stay."""
    from PIL import Image
    src = stack.root / "gps-photo.jpg"
    if not src.exists():
        _gps_photo(src)
        os.chmod(src, 0o644)
    with Image.open(src) as original:
        assert original.getexif().get_ifd(0x8825), "the test file carries GPS"
    r, kept = client.image(f"/w:120/strip:0/f:{fmt}/gps-photo.jpg")
    exif = kept.getexif()
    assert exif.get(0x8298) == "(c) Kiln Photo Ltd" and exif.get(0x013B) == "A. Photographer", dict(exif)
    assert 0x8825 not in exif and not exif.get_ifd(0x8825), f"{fmt}: GPS kept: {exif.get_ifd(0x8825)}"
    assert b"GPSLatitude" not in r.body and b"52,31.1N" not in r.body


@pytest.mark.parametrize("fmt", ["jpeg", "webp", "png"])
def test_strip_copyright_keeps_only_the_copyright(client, stack, fmt):
    """Issue 38: `strip:copyright` keeps Copyright and Artist (and XMP's rights), nothing else:
    no GPS IFD, no XMP position; the default keeps none of it."""
    src = stack.root / "gps-photo.jpg"
    if not src.exists():
        _gps_photo(src)
        os.chmod(src, 0o644)
    r, kept = client.image(f"/w:120/strip:copyright/f:{fmt}/gps-photo.jpg")
    exif = kept.getexif()
    assert exif.get(0x8298) == "(c) Kiln Photo Ltd" and exif.get(0x013B) == "A. Photographer", dict(exif)
    assert set(exif.keys()) == {0x8298, 0x013B}, dict(exif)
    assert b"GPSLatitude" not in r.body and b"52,31.1N" not in r.body
    _, plain = client.image(f"/w:120/f:{fmt}/gps-photo.jpg")
    assert not plain.getexif().get(0x8298)


def test_strip_defaults_by_who_wrote_the_url(make_stack):
    """`output.strip` for unsigned URLs, `output.strip_signed` for signed ones: here unsigned URLs
    keep nothing and signed ones keep the copyright (Cloudflare's default)."""
    from helpers import sign_path
    key, salt = "aa" * 16, "bb" * 16
    s = make_stack(workers=1, extra_args=["--set", "output.strip_signed=keep_copyright",
                                          "--set", f"security.keys={key}", "--set", f"security.salts={salt}",
                                          "--set", "security.allow_unsigned=true"])
    src = s.root / "gps-photo.jpg"
    if not src.exists():
        _gps_photo(src)
        os.chmod(src, 0o644)
    c = s.client()
    _, signed = c.image(sign_path("/w:100/f:jpeg/gps-photo.jpg", key, salt))
    assert signed.getexif().get(0x8298) == "(c) Kiln Photo Ltd"
    assert not signed.getexif().get_ifd(0x8825)
    _, unsigned = c.image("/unsafe/w:100/f:jpeg/gps-photo.jpg")
    assert not unsigned.getexif().get(0x8298)
